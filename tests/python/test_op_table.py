"""The elementwise op table (src/ops/elementwise_ops.py) and what tools/gen_ops.py
generates from it: the checked-in outputs are what the generator writes now, and
the table's facts hold in the engine (every row's functions exist, ids are dense
and names unique, node names, bool outputs, in-place forms)."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

import cgrad
from cgrad import _engine

ROOT = Path(__file__).resolve().parents[2]


def _gen():
    spec = importlib.util.spec_from_file_location("gen_ops", ROOT / "tools" / "gen_ops.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


GEN = _gen()
ROWS = GEN.load_table(ROOT)
GENERATED = [r for r in ROWS if not GEN.is_hand(r)]
HAND = [r for r in ROWS if GEN.is_hand(r)]


def test_outputs_are_fresh(tmp_path):
    written = GEN.generate(tmp_path, ROOT)
    assert sorted(written) == sorted(GEN.OUTPUTS)
    for rel in written:
        assert (ROOT / rel).read_text() == (tmp_path / rel).read_text(), f"{rel} is stale: run tools/gen_ops.py"


def test_staleness_check_can_fail(tmp_path):
    GEN.generate(tmp_path, ROOT)
    p = tmp_path / "include/cgrad_op_ids.h"
    p.write_text(p.read_text().replace("CG_OP_ADD,", "CG_OP_ADD_TYPO,"))
    assert (ROOT / "include/cgrad_op_ids.h").read_text() != p.read_text()


def test_ids_dense_and_names_unique():
    text = (ROOT / "include/cgrad_op_ids.h").read_text()
    ids = re.findall(r"^\s+(CG_OP_\w+)", text, re.M)
    assert ids[0] == "CG_OP_NONE" and ids[-1] == "CG_OP_COUNT"
    assert "CG_OP_NONE = 0," in text and not re.search(r"CG_OP_(?!NONE)\w+ =", text)  # implicit: dense
    assert ids[1:-1] == ["CG_OP_" + r["name"].upper() for r in ROWS]
    names = [r["name"] for r in ROWS]
    assert len(names) == len(set(names))
    # no hand-kept op list is left beside the table
    assert not (ROOT / "src/ops/unary_ops.def").exists() and not (ROOT / "src/ops/binary_ops.def").exists()


def _lib():
    return _engine._handles[-1]  # the engine build cgrad loaded (after the BLAS)


def test_every_row_exists_in_the_engine():
    lib = _lib()
    for r in ROWS:
        if r["public"]:
            assert hasattr(lib, "cg_" + r["name"]), r["name"]
        if r["c_inplace"]:
            assert hasattr(lib, "cg_" + r["name"] + "_"), r["name"]


def _call(r, x):
    fn = getattr(cgrad, r["name"], None)
    if fn is None:
        fn = getattr(cgrad.nn.functional, r["name"])
    return fn(x) if r["arity"] == 1 else fn(x, x)


@pytest.mark.parametrize("r", GENERATED, ids=[r["name"] for r in GENERATED])
def test_row_facts(r):
    floating = "float" in r["loops"] or "float_pred" in r["loops"] or "all_pred" in r["loops"]
    dt = cgrad.float64 if floating else cgrad.int64
    x = cgrad.tensor([1.25, 1.5], dtype=dt) if floating else cgrad.tensor([1, 2], dtype=dt)
    if r["backward"] and floating:
        x.requires_grad_(True)
    y = _call(r, x)
    assert y.dtype == (cgrad.bool if r["out"] == "bool" else dt)
    if r["backward"] and floating:
        assert y.grad_fn is not None and y.grad_fn.name() == r["node"]
    else:
        assert y.grad_fn is None
    if r["py"] == "method" and r["py_inplace"] == "engine":
        z = x.detach().clone()
        getattr(z, r["name"] + "_")(*([] if r["arity"] == 1 else [z.clone()]))
        assert cgrad.allclose(z, y.detach().to(z.dtype), equal_nan=True)


@pytest.mark.parametrize("r", HAND, ids=[r["name"] for r in HAND])
def test_hand_row_has_its_descriptor(r):
    """A hand row's descriptor, in its family file, names the row's id and dtypes (written out,
    or pasted from the row's name by a descriptor macro). Its CPU loops are checked at link
    time: the generated table refers to every cg_cpu_<row>_<dtype>, and the library is linked
    with no undefined symbols."""
    up = r["name"].upper()
    family = (ROOT / "src/ops" / (r["family"] + ".c")).read_text()
    spelled = f".id = CG_OP_{up}," in family and f".dtypes = CG_OP_DTYPES_{up}," in family
    pasted = "CG_OP_##" in family and "CG_OP_DTYPES_##" in family and re.search(rf"\b{up}\b", family)
    assert spelled or pasted, f"{r['family']}.c has no descriptor for the hand row {r['name']}"


def test_every_row_has_a_cuda_kernel():
    """The CUDA kernel library's elementwise sources (Note [CUDA kernel library]) have a case for every
    row: the generated rows in the two generated files, the hand rows in elementwise_hand.cu."""
    lib = ROOT / "src/backend/cuda/lib"
    gen = (lib / "elementwise.gen.cu").read_text() + (lib / "elementwise_1.gen.cu").read_text()
    hand = (lib / "elementwise_hand.cu").read_text()
    for r in GENERATED:
        assert re.search(rf"\bcase CG_OP_{r['name'].upper()}:", gen), f"{r['name']}: no CUDA kernel generated"
    for r in HAND:
        assert re.search(rf"\bROW\(CG_OP_{r['name'].upper()},", hand), f"{r['name']}: no hand CUDA kernel"
