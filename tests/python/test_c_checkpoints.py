"""Checkpoints from C (cg_save_safetensors / cg_load_safetensors, src/io/safetensors.c):
files saved from C load in Python (cgrad.load, cgrad.utils.safetensors, the safetensors
library) and the reverse, for every dtype and 0-d / empty shapes; and the C loader
rejects every hostile file the Python loader rejects, naming the same problem."""
import re

import pytest

import cgrad
from cgrad.utils import safetensors as st

import c_checkpoints as C
from hostile_cases import CHECKPOINTS
from test_safetensors_format import sample

SHAPES = [(), (0,), (1, 0, 3), (5,), (3, 4)]


def raw(t):
    return t.contiguous()._to_bytes() if t.numel() else b""


@pytest.mark.parametrize("dtype", sorted(C.DTYPE_CODES))
def test_c_and_python_read_each_others_files(dtype, tmp_path):
    ts = {f"t{i}": sample(dtype, s) for i, s in enumerate(SHAPES)}
    p = tmp_path / "from_python.safetensors"
    st.save_file(ts, p, metadata={"k": "v"})
    got, err, meta = C.load(str(p))
    assert err is None and meta == {"k": "v"}
    assert got == {k: (dtype, tuple(t.shape), raw(t)) for k, t in ts.items()}
    q = tmp_path / "from_c.safetensors"
    assert C.save(str(q), {k: (dtype, tuple(t.shape), raw(t)) for k, t in ts.items()}) is None
    for back in (cgrad.load(q), st.load_file(q)):
        assert sorted(back) == sorted(ts)
        for k, t in ts.items():
            assert back[k].dtype == t.dtype and tuple(back[k].shape) == tuple(t.shape)
            assert raw(back[k]) == raw(t)
    if dtype != "bfloat16":  # (NumPy has no bfloat16) the safetensors library reads what C wrote
        from safetensors.numpy import load_file
        arrays = load_file(str(q))
        assert sorted(arrays) == sorted(ts)


def test_a_c_checkpoint_of_a_model_loads_into_the_model(tmp_path):
    cgrad.manual_seed(0)
    m = cgrad.nn.Sequential(cgrad.nn.Linear(4, 3), cgrad.nn.ReLU(), cgrad.nn.Linear(3, 2))
    sd = m.state_dict()
    p = tmp_path / "model.safetensors"
    assert C.save(str(p), {k: ("float32", tuple(v.shape), raw(v)) for k, v in sd.items()}) is None
    m2 = cgrad.nn.Sequential(cgrad.nn.Linear(4, 3), cgrad.nn.ReLU(), cgrad.nn.Linear(3, 2))
    m2.load_state_dict(cgrad.load(p))
    x = cgrad.randn(5, 4)
    assert m2(x).tolist() == m(x).tolist()


@pytest.mark.parametrize("name,data,match", [c for c in CHECKPOINTS if not c[0].startswith("structure_")],
                         ids=lambda v: v if isinstance(v, str) and len(v) < 40 else "")
def test_the_c_loader_rejects_what_the_python_loader_rejects(name, data, match):
    got, err, _ = C.load_bytes(data)
    assert got is None, f"{name}: the C loader accepted it"
    assert re.search("invalid checkpoint: .*(" + match + ")", err), f"{name}: {err!r}"
    assert C.lib().cg_last_error() == 5  # CG_ERR_VALUE


def test_cgrad_structure_metadata_is_only_metadata_to_c(tmp_path):
    """A nested checkpoint's structure is cgrad.utils.safetensors's business: C sees the flat tensors."""
    p = tmp_path / "nested.safetensors"
    st.save({"model": {"w": cgrad.ones(2)}, "step": 3}, p)
    got, err, meta = C.load(str(p))
    assert err is None and list(got) == ["model.w"] and "cgrad.structure" in meta


def test_bad_saves(tmp_path):
    assert "reserved" in C.save(str(tmp_path / "x"), {"__metadata__": ("float32", (1,), b"\0" * 4)})
    assert "cannot create" in C.save(str(tmp_path / "missing" / "x"), {"a": ("float32", (1,), b"\0" * 4)})
    _, err, _ = C.load(str(tmp_path / "nope.safetensors"))
    assert "cannot open" in err
    _, err, _ = C.load(str(tmp_path))
    assert "not a regular file" in err
