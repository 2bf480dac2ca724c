"""Exchange with NumPy and DLPack (zero-copy where PyTorch shares memory, the
same errors where it refuses), pickling and copy / deepcopy."""
import copy
import gc
import os
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

import cgrad

NP_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
ALL_DTYPES = NP_DTYPES + ["bfloat16"]


def values(dtype, shape=(2, 3)):
    a = np.arange(int(np.prod(shape))).reshape(shape) - 2
    return (a % 2 == 0) if dtype == "bool" else np.abs(a).astype(dtype) if dtype == "uint8" else a.astype(dtype)


def test_import_does_not_import_numpy():
    code = "import sys, cgrad; cgrad.ones(2) + 1; assert 'numpy' not in sys.modules, 'numpy imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


# ---------------------------------------------------------------- Tensor.numpy / __array__

@pytest.mark.parametrize("dtype", NP_DTYPES)
def test_numpy_shares_memory(dtype):
    a = values(dtype)
    t = cgrad.tensor(a.tolist(), dtype=getattr(cgrad, dtype))
    n = t.numpy()
    assert n.dtype == np.dtype(dtype) and n.shape == (2, 3)
    np.testing.assert_array_equal(n, a)
    assert n.ctypes.data == t.data_ptr()
    t.fill_(1)
    assert (n == np.ones((2, 3), dtype=dtype)).all()
    n[0, 0] = 0
    assert t.tolist()[0][0] == 0


def test_numpy_views_keep_the_tensor_alive_and_follow_strides():
    t = cgrad.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    n = t.T.numpy()
    assert n.shape == (3, 2) and n.strides == (4, 12)
    np.testing.assert_array_equal(n, [[1, 4], [2, 5], [3, 6]])
    del t
    gc.collect()
    np.testing.assert_array_equal(n, [[1, 4], [2, 5], [3, 6]])
    assert cgrad.tensor(3.5).numpy().shape == () and cgrad.zeros(0, 3).numpy().shape == (0, 3)


def test_numpy_errors_match_torch():
    for lib in (cgrad, torch):
        with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
            lib.ones(2, requires_grad=True).numpy()
        with pytest.raises(RuntimeError, match="requires grad"):
            np.asarray(lib.ones(2, requires_grad=True))
        with pytest.raises(TypeError, match="unsupported ScalarType"):
            lib.ones(2, dtype=lib.bfloat16).numpy()
        with pytest.raises(TypeError, match="can't convert meta device type tensor to numpy"):
            lib.ones(2, device="meta").numpy()
    w = cgrad.ones(2, requires_grad=True)
    np.testing.assert_array_equal(w.numpy(force=True), [1, 1])
    np.testing.assert_array_equal(w.detach().numpy(), [1, 1])


def test_array_protocol():
    t = cgrad.tensor([1.0, 2.0])
    a = np.asarray(t)
    assert a.dtype == np.float32 and a.ctypes.data == t.data_ptr()
    b = np.array(t, dtype=np.float64)
    assert b.dtype == np.float64 and b.tolist() == [1.0, 2.0]
    c = np.array(t)
    c[0] = 9  # np.array copies
    assert t.tolist() == [1.0, 2.0]
    r = np.sin(t)  # ufuncs come back as tensors through __array_wrap__
    assert isinstance(r, cgrad.Tensor) and np.allclose(r.tolist(), np.sin([1.0, 2.0]))


# ---------------------------------------------------------------- from_numpy / as_tensor / asarray / tensor

@pytest.mark.parametrize("dtype", NP_DTYPES)
def test_from_numpy_zero_copy(dtype):
    a = values(dtype)
    t = cgrad.from_numpy(a)
    assert t.dtype == getattr(cgrad, dtype) and tuple(t.shape) == (2, 3)
    assert t.tolist() == a.tolist() and t.data_ptr() == a.ctypes.data
    a[1, 2] = 1
    assert t.tolist()[1][2] == a[1, 2]


def test_from_numpy_strides_and_lifetime():
    a = np.arange(24, dtype=np.float64).reshape(4, 6)
    v = a[::2, 1::2]
    t = cgrad.from_numpy(v)
    assert t.stride() == (12, 2) and t.tolist() == v.tolist()
    t2 = cgrad.from_numpy(a.T)
    assert t2.stride() == (1, 6) and not t2.is_contiguous()
    del a, v
    gc.collect()
    assert t.tolist() == [[1.0, 3.0, 5.0], [13.0, 15.0, 17.0]]
    assert cgrad.from_numpy(np.zeros((0, 4))).shape == (0, 4)
    assert cgrad.from_numpy(np.array(2.5)).shape == ()


def test_from_numpy_errors_match_torch():
    for lib in (cgrad, torch):
        with pytest.raises(TypeError, match="expected np.ndarray \\(got list\\)"):
            lib.from_numpy([1, 2])
        with pytest.raises(ValueError, match="negative"):
            lib.from_numpy(np.arange(3.0)[::-1])
        with pytest.raises(ValueError, match="byte order"):
            lib.from_numpy(np.ones(2, dtype=">f4"))
        with pytest.raises(TypeError, match="can't convert np.ndarray of type numpy.object_"):
            lib.from_numpy(np.array([1, None], dtype=object))
    for npdt in (np.uint16, np.uint32, np.uint64):  # supported since the barebones unsigned dtypes
        got, want = cgrad.from_numpy(np.ones(2, dtype=npdt)), torch.from_numpy(np.ones(2, dtype=npdt))
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1] and got.tolist() == want.tolist()
    with pytest.raises(TypeError, match="complex"):
        cgrad.from_numpy(np.ones(2, dtype=np.complex64))
    ro = np.ones(3)
    ro.flags.writeable = False
    t = cgrad.from_numpy(ro)  # read-only, not a warning (PyTorch warns): test_readonly.py
    assert t.tolist() == [1.0, 1.0, 1.0]


def test_tensor_from_numpy_copies_and_keeps_dtype():
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    t = cgrad.tensor(a)
    assert t.dtype == cgrad.float64 and t.tolist() == a.tolist() and t.data_ptr() != a.ctypes.data
    a[0, 0] = 100
    assert t.tolist()[0][0] == 0
    assert cgrad.tensor(a[:, ::2], dtype=cgrad.int32).tolist() == [[100, 2], [3, 5]]
    assert cgrad.tensor(np.float32(2.5)).dtype == cgrad.float32 and cgrad.tensor(np.int16(3)).dtype == cgrad.int16
    assert cgrad.tensor(np.arange(3)[::-1]).tolist() == [2, 1, 0]  # a copy may read negative strides
    for zero_d in (np.array(1.5), np.float64(1.5)):  # 0-d stays 0-d, as in torch
        assert cgrad.tensor(zero_d).shape == torch.tensor(zero_d).shape == ()
    assert cgrad.tensor(np.ones(2, dtype=bool), device="meta").device.type == "meta"
    t = cgrad.tensor(np.ones(2, dtype=np.float32), requires_grad=True)
    assert t.requires_grad and t.is_leaf
    for lib in (cgrad, torch):
        assert lib.tensor(np.array([True, False])).dtype == lib.bool
        assert lib.tensor([np.float32(2), np.float64(3)]).dtype == lib.float64
        assert lib.tensor([np.float16(2)]).dtype == lib.float16 and lib.tensor([np.int8(1)]).dtype == lib.int8
        assert lib.tensor([np.int8(1), 2]).dtype == lib.int64 and lib.tensor([np.int8(1), 2.5]).dtype == lib.float32
        assert lib.tensor([[np.int64(2)], [np.int8(-1)]]).tolist() == [[2], [-1]]
        assert lib.tensor([np.int64(2)]).dtype == lib.int64 and lib.tensor([np.bool_(True)]).dtype == lib.bool
        assert lib.tensor([np.int32(1), np.int64(2)]).dtype == lib.int64
        assert lib.tensor([lib.tensor(2 ** 60 + 1), 3]).tolist() == [2 ** 60 + 1, 3]


def test_as_tensor_and_asarray_share_memory():
    a = np.arange(4, dtype=np.float32)
    for f in (cgrad.as_tensor, cgrad.asarray):
        t = f(a)
        assert t.data_ptr() == a.ctypes.data
    assert cgrad.as_tensor(a, dtype=cgrad.float64).dtype == cgrad.float64
    assert cgrad.asarray(a, dtype=cgrad.float64).dtype == cgrad.float64
    with pytest.raises(ValueError, match="copy=False"):
        cgrad.asarray(a, dtype=cgrad.float64, copy=False)
    assert cgrad.asarray(a, copy=False).data_ptr() == a.ctypes.data
    assert cgrad.asarray(a, copy=True).data_ptr() != a.ctypes.data
    x = cgrad.ones(3)
    assert cgrad.as_tensor(x) is x and cgrad.asarray(x) is x and cgrad.as_tensor(x, dtype=cgrad.float32) is x
    assert cgrad.as_tensor(x, dtype=cgrad.int64).dtype == cgrad.int64
    c = cgrad.asarray(x, copy=True)
    assert c is not x and c.data_ptr() != x.data_ptr()
    with pytest.raises(ValueError):
        cgrad.asarray(x, dtype=cgrad.float64, copy=False)
    assert cgrad.as_tensor([1, 2]).dtype == cgrad.int64
    assert cgrad.asarray([1.0, 2.0], dtype=cgrad.float64).dtype == cgrad.float64
    r = cgrad.asarray([1.0, 2.0], requires_grad=True)
    assert r.requires_grad
    import array
    buf = array.array("i", [1, 2, 3])
    t = cgrad.asarray(buf, dtype=cgrad.int32)  # a buffer's bytes are read as dtype (default float32), as in PyTorch
    assert t.dtype == cgrad.int32 and t.tolist() == [1, 2, 3]
    buf[0] = 7
    assert t.tolist()[0] == 7
    assert cgrad.asarray(buf).dtype == cgrad.float32
    tt = torch.arange(3)
    s = cgrad.asarray(tt)  # objects with __dlpack__ are shared too
    tt[0] = 5
    assert s.tolist() == [5, 1, 2]


# ---------------------------------------------------------------- DLPack

@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_dlpack_round_trips_with_torch(dtype):
    src = torch.tensor([[0, 1, 2], [3, 4, 5]]).to(getattr(torch, dtype))
    c = cgrad.from_dlpack(src)
    assert c.dtype == getattr(cgrad, dtype) and c.tolist() == src.tolist()
    assert c.data_ptr() == src.data_ptr()
    t = torch.from_dlpack(c)
    assert t.dtype == src.dtype and t.tolist() == src.tolist() and t.data_ptr() == c.data_ptr()
    c2 = cgrad.from_dlpack(torch.utils.dlpack.to_dlpack(src))  # a legacy capsule
    assert c2.tolist() == src.tolist()
    t2 = torch.utils.dlpack.from_dlpack(c.__dlpack__())
    assert t2.tolist() == src.tolist()


def test_dlpack_shares_memory_and_strides():
    c = cgrad.zeros(3, 4)
    t = torch.from_dlpack(c.T)
    assert t.shape == (4, 3) and t.stride() == (1, 4)
    t[1, 2] = 7.0
    assert c.tolist()[2][1] == 7.0
    src = torch.arange(12.0).reshape(3, 4)[:, 1::2]
    v = cgrad.from_dlpack(src)
    assert v.stride() == (4, 2) and v.tolist() == src.tolist()
    del src
    gc.collect()
    assert v.tolist() == [[1.0, 3.0], [5.0, 7.0], [9.0, 11.0]]
    e = cgrad.from_dlpack(torch.zeros(0, 2))
    assert e.shape == (0, 2)
    assert cgrad.from_dlpack(torch.tensor(1.5)).tolist() == 1.5


def test_dlpack_with_numpy():
    c = cgrad.tensor([[1, 2], [3, 4]], dtype=cgrad.int16)
    n = np.from_dlpack(c)
    assert n.dtype == np.int16 and n.tolist() == [[1, 2], [3, 4]]
    n[0, 0] = 9
    assert c.tolist()[0][0] == 9
    b = np.from_dlpack(cgrad.tensor([True, False]))
    assert b.dtype == np.bool_ and b.tolist() == [True, False]
    a = np.arange(6.0).reshape(2, 3)
    t = cgrad.from_dlpack(a)
    assert t.tolist() == a.tolist() and t.data_ptr() == a.ctypes.data


def test_dlpack_protocol_details():
    c = cgrad.ones(2)
    assert c.__dlpack_device__() == (1, 0) == tuple(torch.ones(2).__dlpack_device__())
    legacy = c.__dlpack__()
    assert "dltensor" in repr(legacy) and "versioned" not in repr(legacy)
    assert "dltensor_versioned" in repr(c.__dlpack__(max_version=(1, 0)))
    cap = c.__dlpack__()
    cgrad.from_dlpack(cap)
    with pytest.raises(ValueError, match="consumed"):
        cgrad.from_dlpack(cap)
    for lib in (cgrad, torch):
        with pytest.raises(BufferError, match="Can't export tensors that require gradient"):
            lib.ones(2, requires_grad=True).__dlpack__()
    copied = torch.from_dlpack(c, copy=True)
    copied[0] = 5
    assert c.tolist() == [1.0, 1.0]
    with pytest.raises(TypeError):
        cgrad.from_dlpack([1, 2])
    with pytest.raises(ValueError):
        c.__dlpack__(stream=3)
    # an unconsumed capsule frees its tensor
    before = cgrad._C._memory_stats()["live_bytes"]
    for _ in range(3):
        cgrad.ones(1000).__dlpack__()
    gc.collect()
    assert cgrad._C._memory_stats()["live_bytes"] <= before


# ---------------------------------------------------------------- pickling, copy, deepcopy

@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (1, 0, 3), (2, 3)])
def test_pickle_round_trip(dtype, shape):
    src = torch.arange(int(np.prod(shape)), dtype=torch.float64).reshape(shape).to(getattr(torch, dtype))
    t = cgrad.tensor(src.tolist(), dtype=getattr(cgrad, dtype))
    if t.shape != shape:
        t = cgrad.zeros(shape, dtype=getattr(cgrad, dtype))
    for proto in (2, pickle.HIGHEST_PROTOCOL):
        r = pickle.loads(pickle.dumps(t, protocol=proto))
        assert type(r) is cgrad.Tensor and r.dtype == t.dtype and r.shape == t.shape and r.tolist() == t.tolist()
        assert r.data_ptr() != t.data_ptr() or t.numel() == 0


def test_pickle_keeps_requires_grad_views_meta_and_attributes():
    w = cgrad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    r = pickle.loads(pickle.dumps(w))
    assert r.requires_grad and r.is_leaf and r.tolist() == w.tolist()
    v = pickle.loads(pickle.dumps(w.detach().T))
    assert v.tolist() == [[1.0, 3.0], [2.0, 4.0]] and v.is_contiguous()
    m = pickle.loads(pickle.dumps(cgrad.ones(2, 3, device="meta", dtype=cgrad.float16)))
    assert m.device.type == "meta" and m.shape == (2, 3) and m.dtype == cgrad.float16
    x = cgrad.ones(2)
    x.tag = "weights"
    assert pickle.loads(pickle.dumps(x)).tag == "weights"


class MyTensor(cgrad.Tensor):
    pass


def test_copy_and_deepcopy():
    w = cgrad.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    c = copy.copy(w)
    assert c is not w and c.tolist() == w.tolist() and c.requires_grad
    d = copy.deepcopy(w)
    assert d is not w and d.requires_grad and d.is_leaf and d.grad.tolist() == [2.0, 4.0]
    assert d.data_ptr() != w.data_ptr()
    pair = copy.deepcopy([w, w])
    assert pair[0] is pair[1]
    y = w * 2
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(y)
    with pytest.raises(RuntimeError):
        copy.deepcopy(torch.ones(1, requires_grad=True) * 2)
    s = cgrad._C._make_subclass(MyTensor, cgrad.ones(2), True)
    s.note = [1]
    ds = copy.deepcopy(s)
    assert type(ds) is MyTensor and ds.requires_grad and ds.note == [1] and ds.note is not s.note
    ps = pickle.loads(pickle.dumps(s))
    assert type(ps) is MyTensor and ps.requires_grad and ps.note == [1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        copy.deepcopy(cgrad.ones(2, dtype=cgrad.bfloat16))


# ---------------------------------------------------------------- DLPack capsules made by hand (hostile producers)

def _capsule(data_ptr, shape, flags=0, versioned=True, strides=None):
    """A DLPack capsule over data_ptr (an int, 0 for NULL) of float32 `shape`, built with ctypes."""
    import ctypes

    class DLTensor(ctypes.Structure):
        _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                    ("ndim", ctypes.c_int32), ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                    ("lanes", ctypes.c_uint16), ("shape", ctypes.POINTER(ctypes.c_int64)),
                    ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]

    deleter_t = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    if versioned:
        class Managed(ctypes.Structure):
            _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("ctx", ctypes.c_void_p),
                        ("deleter", deleter_t), ("flags", ctypes.c_uint64), ("dl", DLTensor)]
    else:
        class Managed(ctypes.Structure):
            _fields_ = [("dl", DLTensor), ("ctx", ctypes.c_void_p), ("deleter", deleter_t)]
    shp = (ctypes.c_int64 * max(len(shape), 1))(*shape)
    std = (ctypes.c_int64 * max(len(shape), 1))(*strides) if strides is not None else None
    m = Managed()
    if versioned:
        m.major, m.minor, m.flags = 1, 0, flags
    m.dl = DLTensor(data_ptr or None, 1, 0, len(shape), 2, 32, 1, shp, std, 0)
    m.deleter = deleter_t(0)  # NULL: nothing to free (the test keeps m alive)
    new = ctypes.pythonapi.PyCapsule_New
    new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    cap = new(ctypes.addressof(m), b"dltensor_versioned" if versioned else b"dltensor", None)
    return cap, (m, shp, std)


@pytest.mark.parametrize("versioned", [True, False])
def test_dlpack_null_data_with_elements_is_refused(versioned):
    # in a child process: the bug this guards against wrote past a static buffer
    code = f"""
import sys; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})
import cgrad
from test_interop import _capsule
cap, keep = _capsule(0, (4, 4), versioned={versioned})
try:
    cgrad.from_dlpack(cap)
    print("accepted")
except BufferError as e:
    print("refused" if "NULL data pointer" in str(e) else repr(e))
cap, keep = _capsule(0, (0, 4), versioned={versioned})  # zero elements: no memory needed
print(tuple(cgrad.from_dlpack(cap).shape))
"""
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.split() == ["refused", "(0,", "4)"]


def test_dlpack_read_only_flag_gives_a_read_only_tensor():
    buf = np.arange(4, dtype=np.float32)
    cap, keep = _capsule(buf.ctypes.data, (4,), flags=1)
    t = cgrad.from_dlpack(cap)
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(RuntimeError, match="read-only"):
        t.add_(1)
    del t


@pytest.mark.parametrize("strides", [(2**62, 1), (2**61, 2**61), (-(2**63) + 1, 1)])
def test_dlpack_strides_spanning_more_than_int64_are_refused(strides):
    buf = np.zeros(4, dtype=np.float32)
    cap, keep = _capsule(buf.ctypes.data, (3, 2), strides=strides)
    with pytest.raises((BufferError, ValueError, RuntimeError), match="overflow|negative"):
        cgrad.from_dlpack(cap)
