"""cgrad.utils.safetensors: safetensors checkpoints (round trips of every
dtype and of nested state dicts, interop with the safetensors library both
ways, validation of malformed files, loading into memory and zero-copy
mmap loading). Overwrites, truncation and crashes: test_checkpoint_safety.py."""
import gc
import io
import json
import os
import struct
import subprocess
import sys

import numpy as np
import pytest
import torch

import cgrad
from cgrad.utils import safetensors as st

safetensors = pytest.importorskip("safetensors")
from safetensors.numpy import load_file as np_load_file, save_file as np_save_file  # noqa: E402
from safetensors.torch import load_file as pt_load_file, save_file as pt_save_file  # noqa: E402

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool"]
SHAPES = [(), (0,), (1, 0, 3), (5,), (3, 4), (2, 3, 4)]


def sample(dtype, shape):
    n = int(np.prod(shape))
    vals = [(i * 7) % 11 - 3 for i in range(n)]
    t = cgrad.tensor(vals, dtype=cgrad.float64).reshape(shape)
    if dtype == "bool":
        return t > 0
    if dtype.startswith("uint"):
        t = t.abs()
    return (t / 4 if dtype.startswith(("float", "bfloat")) else t).to(getattr(cgrad, dtype))


def same(a, b):
    assert isinstance(b, cgrad.Tensor)
    assert a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)
    assert a.float().tolist() == b.float().tolist()


def roundtrip(obj, tmp_path):
    path = tmp_path / "ckpt.safetensors"
    st.save(obj, path)
    return st.load(path)


# ---------------------------------------------------------------- round trips

@pytest.mark.parametrize("dtype", DTYPES)
def test_roundtrip_every_dtype_and_shape(dtype, tmp_path):
    obj = {f"t{i}": sample(dtype, s) for i, s in enumerate(SHAPES)}
    back = roundtrip(obj, tmp_path)
    assert list(back) == list(obj)
    for k in obj:
        same(obj[k], back[k])


def test_roundtrip_single_tensor_and_file_objects(tmp_path):
    t = cgrad.arange(12.0).reshape(3, 4)
    same(t, roundtrip(t, tmp_path))
    buf = io.BytesIO()
    st.save(t, buf)
    buf.seek(0)
    same(t, st.load(buf))
    with open(tmp_path / "f.st", "wb") as fh:
        st.save([t, 1], fh)
    with open(tmp_path / "f.st", "rb") as fh:
        back = st.load(fh)
    same(t, back[0])
    assert back[1] == 1
    same(t, st.load(str(tmp_path / "f.st"), mmap=False)[0])


def test_noncontiguous_views_and_requires_grad_are_saved_as_data(tmp_path):
    base = cgrad.arange(24.0).reshape(2, 3, 4)
    views = {"T": base.transpose(0, 2), "step": base[:, ::2, 1::2], "w": cgrad.ones(3, requires_grad=True) * 2,
             "leaf": cgrad.ones(2, requires_grad=True)}
    back = roundtrip(views, tmp_path)
    for k, v in views.items():
        same(v.detach(), back[k])
        assert back[k].is_contiguous() and not back[k].requires_grad


def test_nested_structures(tmp_path):
    a, b = cgrad.ones(2), cgrad.zeros(3, dtype=cgrad.int64)
    obj = {"list": [a, 1, 2.5, "s", None, True], "tuple": (b, (a,)), "nested": {"x": {"y": [b]}},
           3: "int key", (1, "k"): -1.5, "inf": float("inf"), "nan": float("nan"), "dtype": cgrad.bfloat16,
           "device": cgrad.device("cpu"), "empty": {}, "el": []}
    back = roundtrip(obj, tmp_path)
    assert set(back) == set(obj)
    same(a, back["list"][0])
    assert back["list"][1:] == [1, 2.5, "s", None, True] and type(back["list"][1]) is int
    assert isinstance(back["tuple"], tuple) and isinstance(back["tuple"][1], tuple)
    same(b, back["tuple"][0])
    same(b, back["nested"]["x"]["y"][0])
    assert back[3] == "int key" and back[(1, "k")] == -1.5
    assert back["inf"] == float("inf") and back["nan"] != back["nan"]
    assert back["dtype"] is cgrad.bfloat16 and back["device"] == cgrad.device("cpu")
    assert back["empty"] == {} and back["el"] == []


def test_state_dict_like(tmp_path):
    w = cgrad.randn(4, 3)
    model = {"layer.weight": w, "layer.bias": cgrad.zeros(4), "bn.num_batches_tracked": cgrad.tensor(7)}
    optim = {"state": {0: {"step": cgrad.tensor(3.0), "exp_avg": cgrad.randn(4, 3), "exp_avg_sq": cgrad.rand(4, 3)},
                       1: {"step": cgrad.tensor(3.0), "exp_avg": cgrad.randn(4), "exp_avg_sq": cgrad.rand(4)}},
             "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0,
                               "amsgrad": False, "foreach": None, "params": [0, 1]}]}
    ckpt = {"model": model, "optim": optim, "epoch": 5, "tied": [w, w]}
    back = roundtrip(ckpt, tmp_path)
    for k, v in model.items():
        same(v, back["model"][k])
    assert back["optim"]["param_groups"] == optim["param_groups"]
    for i in (0, 1):
        for k, v in optim["state"][i].items():
            same(v, back["optim"]["state"][i][k])
    assert back["epoch"] == 5
    same(w, back["tied"][0])
    assert back["tied"][0] is back["tied"][1]  # one entry for a tensor saved twice


def test_map_location_and_weights_only(tmp_path):
    path = tmp_path / "m.st"
    st.save({"a": cgrad.ones(2)}, path)
    assert st.load(path, map_location="cpu")["a"].device == cgrad.device("cpu")
    assert st.load(path, map_location=cgrad.device("meta"))["a"].device.type == "meta"
    assert st.load(path, map_location={"cpu": "meta"})["a"].device.type == "meta"
    assert st.load(path, map_location=lambda t, loc: t.to("meta"))["a"].device.type == "meta"
    assert st.load(path, weights_only=False)["a"].tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="map_location"):
        st.load(path, map_location=3)


def test_unsupported_objects():
    with pytest.raises(TypeError, match="cannot save an object of type object"):
        st.save({"x": object()}, io.BytesIO())
    with pytest.raises(TypeError, match="dict keys"):
        st.save({frozenset(): 1}, io.BytesIO())
    with pytest.raises(ValueError, match="meta device"):
        st.save(cgrad.ones(2, device="meta"), io.BytesIO())
    with pytest.raises(TypeError, match="path or a binary file"):
        st.save(cgrad.ones(2), 3)


# ---------------------------------------------------------------- interop with safetensors

def test_files_from_safetensors_load(tmp_path):
    arrays = {"f32": np.arange(6, dtype=np.float32).reshape(2, 3), "f64": np.array(2.5),
              "f16": np.array([1.5, -2], dtype=np.float16), "i64": np.arange(4, dtype=np.int64),
              "i32": np.array([[1], [2]], dtype=np.int32), "i16": np.array([-3], dtype=np.int16),
              "i8": np.array([-1, 2], dtype=np.int8), "u8": np.array([255], dtype=np.uint8),
              "b": np.array([True, False]), "empty": np.zeros((0, 2), dtype=np.float32)}
    np_save_file(arrays, str(tmp_path / "np.st"), metadata={"note": "hi"})
    back = st.load(tmp_path / "np.st")
    assert set(back) == set(arrays)
    for k, a in arrays.items():
        assert back[k].numpy().dtype == a.dtype
        np.testing.assert_array_equal(back[k].numpy(), a)
    tensors = {"w": torch.randn(3, 4), "bf": torch.randn(5).to(torch.bfloat16), "T": torch.randn(3, 2).T.contiguous()}
    pt_save_file(tensors, str(tmp_path / "pt.st"))
    back = st.load(tmp_path / "pt.st")
    for k, t in tensors.items():
        assert str(back[k].dtype).replace("cgrad", "torch") == str(t.dtype)
        assert back[k].float().tolist() == t.float().tolist()


def test_unaligned_tensors_are_copied(tmp_path):
    data = b"\x07" + struct.pack("<f", 1.5) + struct.pack("<2d", 2.0, -3.0) + struct.pack("<e", 0.5)
    header = {"u": entry("U8", (1,), (0, 1)), "f": entry("F32", (), (1, 5)), "d": entry("F64", (2,), (5, 21)),
              "h": entry("F16", (1,), (21, 23))}
    path = tmp_path / "u.st"
    path.write_bytes(build(header, data))
    for src in (path, io.BytesIO(path.read_bytes())):
        back = st.load(src)
        assert back["u"].tolist() == [7] and back["f"].item() == 1.5 and back["d"].tolist() == [2.0, -3.0]
        assert back["h"].dtype == cgrad.float16 and back["h"].tolist() == [0.5]
    pt = pt_load_file(str(path))
    assert pt["d"].tolist() == [2.0, -3.0]


def test_files_from_cgrad_load_in_safetensors(tmp_path):
    obj = {dt: sample(dt, (2, 3)) for dt in DTYPES}
    obj["t"] = cgrad.arange(6.0).reshape(2, 3).T
    obj["scalar"] = cgrad.tensor(1.5)
    obj["empty"] = cgrad.zeros(0, 4)
    path = str(tmp_path / "c.st")
    st.save(obj, path)
    pt = pt_load_file(path)
    for k, v in obj.items():
        assert str(pt[k].dtype).replace("torch", "cgrad") == str(v.dtype)
        assert pt[k].float().tolist() == v.float().tolist()
    del obj["bfloat16"]  # NumPy has no bfloat16: safetensors.numpy refuses the whole file
    st.save(obj, path)
    npd = np_load_file(path)
    assert set(npd) == set(obj)
    for k, v in obj.items():
        np.testing.assert_array_equal(npd[k], v.numpy())


# ---------------------------------------------------------------- malformed files

def build(header, data=b"", n=None):
    text = json.dumps(header).encode() if isinstance(header, (dict, list)) else header
    return struct.pack("<Q", len(text) if n is None else n) + text + data


def entry(dtype="F32", shape=(2,), offs=(0, 8)):
    return {"dtype": dtype, "shape": list(shape), "data_offsets": list(offs)}


MALFORMED = {
    "empty file": (b"", "fewer than the 8-byte"),
    "truncated length": (b"\x05\x00\x00", "fewer than the 8-byte"),
    "header length beyond file": (build({"a": entry()}, b"\0" * 8, n=1000), "runs past the end"),
    "huge header length": (struct.pack("<Q", 1 << 62) + b"{}", "exceeds the limit"),
    "invalid json": (build(b"{not json", b""), "not valid UTF-8 JSON"),
    "invalid utf8": (build(b'{"\xff": 1}', b""), "not valid UTF-8 JSON"),
    "json not an object": (build([1, 2]), "not an object"),
    "entry not an object": (build({"a": 3}), "exactly dtype, shape and data_offsets"),
    "missing field": (build({"a": {"dtype": "F32", "shape": [2]}}, b"\0" * 8), "exactly dtype"),
    "unknown dtype": (build({"a": entry(dtype="F128")}, b"\0" * 8), "unknown dtype 'F128'"),
    "dtype not a string": (build({"a": entry(dtype=4)}, b"\0" * 8), "dtype must be a string"),
    "unsupported dtype": (build({"a": entry(dtype="C64")}, b"\0" * 8), "C64 is not supported"),
    "negative shape": (build({"a": entry(shape=(-2,))}, b"\0" * 8), "non-negative integers"),
    "float shape": (build({"a": entry(shape=(2.0,))}, b"\0" * 8), "non-negative integers"),
    "bool shape": (build({"a": entry(shape=(True,))}, b"\0" * 8), "non-negative integers"),
    "overflowing shape": (build({"a": entry(shape=(1 << 40, 1 << 40), offs=(0, 8))}, b"\0" * 8), "overflows"),
    "overflowing bytes": (build({"a": entry(dtype="F64", shape=(1 << 61,), offs=(0, 8))}, b"\0" * 8), "overflows"),
    "offsets out of range": (build({"a": entry(offs=(0, 16))}, b"\0" * 8), "beyond the data section"),
    "offsets reversed": (build({"a": entry(offs=(8, 0))}, b"\0" * 8), "increasing pair"),
    "offsets negative": (build({"a": entry(offs=(-8, 0))}, b"\0" * 8), "increasing pair"),
    "offsets not ints": (build({"a": entry(offs=("0", 8))}, b"\0" * 8), "two integers"),
    "size mismatch": (build({"a": entry(shape=(3,), offs=(0, 8))}, b"\0" * 8), "needs 12"),
    "overlap": (build({"a": entry(), "b": entry(offs=(4, 12))}, b"\0" * 12), "overlap"),
    "gap": (build({"a": entry(offs=(4, 12))}, b"\0" * 12), "gap"),
    "trailing data": (build({"a": entry()}, b"\0" * 12), "cover 8 bytes but the data section has 12"),
    "data truncated": (build({"a": entry(shape=(4,), offs=(0, 16))}, b"\0" * 8), "beyond the data section"),
    "bad metadata": (build({"__metadata__": {"a": 1}}), "__metadata__ must map strings"),
    "bad structure json": (build({"__metadata__": {"cgrad.structure": "{"}}), "cgrad.structure is not valid JSON"),
    "structure refers to missing": (build({"__metadata__": {"cgrad.structure": '{"T": "zz"}'}}), "missing tensor"),
    "structure unknown node": (build({"__metadata__": {"cgrad.structure": '{"pickle": "os.system"}'}}),
                               "unknown node kind"),
    "duplicate names": (build(b'{"a": {"dtype": "U8", "shape": [], "data_offsets": [0, 1]}, '
                              b'"a": {"dtype": "U8", "shape": [], "data_offsets": [0, 1]}}', b"\0"), "duplicate key"),
    "deep json": (build(b"[" * 100000 + b"]" * 100000), "not valid UTF-8 JSON"),
    "deep structure": (build({"__metadata__": {"cgrad.structure": '{"l": [' * 100000 + "]}" * 100000}}),
                       "nested too deeply|not valid JSON"),
    "bool bytes": (build({"a": entry(dtype="BOOL", offs=(0, 2))}, b"\x01\x07"), "other than 0 and 1"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_files_raise_clear_errors(case, tmp_path):
    data, msg = MALFORMED[case]
    path = tmp_path / "bad.st"
    path.write_bytes(data)
    for src in (path, io.BytesIO(data)):
        with pytest.raises(ValueError, match=msg) as e:
            st.load(src)
        assert "cgrad.utils.safetensors.load: invalid checkpoint" in str(e.value)
    assert cgrad.ones(1).tolist() == [1.0]  # the process is alive


def test_truncated_cgrad_file(tmp_path):
    path = tmp_path / "t.st"
    st.save({"a": cgrad.ones(100)}, path)
    data = path.read_bytes()
    for cut in (4, 12, len(data) // 2, len(data) - 1):
        path.write_bytes(data[:cut])
        with pytest.raises(ValueError, match="invalid checkpoint"):
            st.load(path)


def test_load_bad_arguments(tmp_path):
    with pytest.raises(TypeError, match="path or a binary file"):
        st.load(3.5)
    with pytest.raises(FileNotFoundError):
        st.load(tmp_path / "missing.st")
    with open(tmp_path / "x.st", "w") as fh:
        fh.write("text")
    with open(tmp_path / "x.st") as fh, pytest.raises(TypeError, match="binary mode"):
        st.load(fh)


# ---------------------------------------------------------------- mmap

def test_mmap_loading_of_a_large_file_is_zero_copy(tmp_path):
    path = tmp_path / "big.st"
    big = cgrad.arange(20_000_000, dtype=cgrad.float32)  # 80 MB
    st.save({"big": big, "small": cgrad.ones(3, dtype=cgrad.int64)}, path)
    assert os.path.getsize(path) > 64 * 2**20
    del big
    back = st.load(path, mmap=True)
    t = back["big"]
    assert t.shape == (20_000_000,) and t[12_345_678].item() == 12_345_678.0
    assert back["small"].data_ptr() % 8 == 0 and t.data_ptr() % 4 == 0
    assert abs(t.data_ptr() - back["small"].data_ptr()) <= os.path.getsize(path)  # one mapping
    t[0] = -1.0  # copy-on-write: the tensor is writable, the file unchanged
    assert t[0].item() == -1.0
    assert st.load(path)["big"][0].item() == 0.0
    view = t[10:20]
    del back, t
    gc.collect()
    os.remove(path)  # the mapping outlives the file's name and the other tensors
    assert view.tolist() == [float(i) for i in range(10, 20)]


def test_default_load_reads_each_tensor_into_its_own_memory(tmp_path):
    path = tmp_path / "m.st"
    st.save({"a": cgrad.arange(1000.0), "b": cgrad.ones(10, dtype=cgrad.int64)}, path)
    before = cgrad.memory.memory_allocated()
    back = st.load(path)
    assert abs(back["a"].data_ptr() - back["b"].data_ptr()) > 0
    assert back["a"].sum().item() == sum(range(1000)) and back["b"].tolist() == [1] * 10
    assert cgrad.memory.memory_allocated() >= before + 4080  # from cgrad's allocator, like any other tensor
    back["a"][0] = 5.0  # writable, and the file unchanged
    assert st.load(path)["a"][0].item() == 0.0


def test_loading_never_imports_pickle_machinery():
    code = ("import io, sys, cgrad; from cgrad.utils import safetensors as st; b = io.BytesIO(); st.save({'a': [cgrad.ones(2), 1]}, b); b.seek(0); "
            "st.load(b); assert 'numpy' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
