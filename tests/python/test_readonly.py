"""Read-only memory (Note [Read-only memory] in src/core/tensor.c): a tensor
over memory exported read-only (bytes, a read-only memoryview or mmap, a
non-writable NumPy array, a DLPack tensor flagged read-only) refuses every
in-place write, through itself and every view; reads and new tensors work.
PyTorch only warns there and lets the write through. Also frombuffer and
asarray(buffer), which follow PyTorch (the bytes read as a dtype)."""
import array
import mmap
import os

import numpy as np
import pytest
import torch

import cgrad
from opinfo import ALL_OPS
from opinfo.core import to_lib

READ_ONLY = "read-only"


def _frozen(values=(1.0, 2.0, 3.0, 4.0), dtype=np.float64):
    a = np.array(values, dtype=dtype)
    a.flags.writeable = False
    return a


def test_non_writable_ndarray_gives_a_read_only_tensor_without_warning(recwarn):
    a = _frozen()
    t = cgrad.from_numpy(a)
    assert not recwarn.list
    assert t.data_ptr() == a.ctypes.data  # still shared, not copied
    assert (t * 2).tolist() == [2.0, 4.0, 6.0, 8.0]
    assert t.clone().add_(1).tolist() == [2.0, 3.0, 4.0, 5.0]
    for f in (cgrad.as_tensor, cgrad.asarray):
        with pytest.raises(RuntimeError, match=READ_ONLY):
            f(a).add_(1)
    assert a.tolist() == [1.0, 2.0, 3.0, 4.0]
    w = np.arange(3.0)
    cgrad.from_numpy(w).add_(1)  # writable arrays stay writable
    assert w.tolist() == [1.0, 2.0, 3.0]


WRITES = {
    "add_": lambda t: t.add_(1),
    "setitem": lambda t: t.__setitem__(0, 5.0),
    "setitem_mask": lambda t: t.__setitem__(t > 2, 0.0),
    "copy_": lambda t: t.copy_(cgrad.zeros(4, dtype=cgrad.float64)),
    "fill_": lambda t: t.fill_(0),
    "zero_": lambda t: t.zero_(),
    "uniform_": lambda t: t.uniform_(),
    "index_put_": lambda t: t.index_put_((cgrad.tensor([0]),), cgrad.tensor([9.0], dtype=cgrad.float64)),
    "view_slice": lambda t: t[1:].mul_(2),
    "view_dtype": lambda t: t.view(cgrad.int64).fill_(0),
    "detach": lambda t: t.detach().sub_(1),
    "data": lambda t: t.data.div_(2),
    "reshape": lambda t: t.reshape(2, 2).clamp_(0, 1),
    "out": lambda t: cgrad.add(t, t, out=t),
    "sgd_step": lambda t: _step(cgrad.optim.SGD, t),
    "adam_step": lambda t: _step(cgrad.optim.Adam, t),
    **{f"{name.lower()}_step": (lambda t, name=name: _step(getattr(cgrad.optim, name), t))
       for name in ("Adadelta", "Adamax", "NAdam", "RAdam", "Rprop", "ASGD")},
}


def _step(opt_cls, t):
    p = cgrad.nn.Parameter(t)
    p.grad = cgrad.ones(4, dtype=cgrad.float64)
    opt_cls([p], lr=0.1).step()


@pytest.mark.parametrize("name", sorted(WRITES))
def test_every_write_path_refuses(name):
    a = _frozen()
    t = cgrad.from_numpy(a)
    with pytest.raises(RuntimeError, match=READ_ONLY):
        WRITES[name](t)
    assert a.tolist() == [1.0, 2.0, 3.0, 4.0]


def test_batch_norm_running_stats_and_embedding_renorm_refuse():
    rm, rv = cgrad.from_numpy(_frozen((0.0, 0.0))), cgrad.from_numpy(_frozen((1.0, 1.0)))
    x = cgrad.randn(4, 2, dtype=cgrad.float64)
    with pytest.raises(RuntimeError, match=READ_ONLY):
        cgrad.nn.functional.batch_norm(x, rm, rv, training=True)
    y = cgrad.nn.functional.batch_norm(x, rm, rv, training=False)  # eval only reads them
    assert tuple(y.shape) == (4, 2) and rm.tolist() == [0.0, 0.0]
    w = cgrad.from_numpy(_frozen(np.full((3, 2), 5.0)))
    with pytest.raises(RuntimeError, match=READ_ONLY):
        cgrad.nn.functional.embedding(cgrad.tensor([0, 1]), w, max_norm=1.0)
    assert cgrad.nn.functional.embedding(cgrad.tensor([0, 1]), w).tolist() == [[5.0, 5.0]] * 2


def _inplace_cases():
    out = []
    for op in ALL_OPS:
        if not op.inplace or op.nondeterministic_values:
            continue
        dt = next((d for d in op.dtypes if d.startswith("float")), op.dtypes[0])
        out.append((op, dt))
    return out


@pytest.mark.parametrize("case", _inplace_cases(), ids=lambda c: f"{c[0].name}_-{c[1]}")
def test_every_inplace_op_of_the_table_refuses(case):
    op, dt = case
    sample = next(s for s in op.sample_fn(dt) if s.args and isinstance(s.args[0], np.ndarray))
    base = np.array(sample.args[0], copy=True)
    base.flags.writeable = False
    target = cgrad.from_numpy(base)
    rest = [to_lib(cgrad, a, False, False) for a in sample.args[1:]]
    try:
        getattr(target, op.name + "_")(*rest, **sample.kwargs)
    except RuntimeError as e:
        if READ_ONLY not in str(e):  # the sample is invalid in place (e.g. broadcasting the target): not this test
            pytest.skip(f"{op.name}_ rejects this sample for another reason: {e}")
    else:
        pytest.fail(f"{op.name}_ wrote to a read-only tensor")
    assert np.array_equal(base, sample.args[0], equal_nan=True)


def test_exports_keep_the_mark():
    t = cgrad.from_numpy(_frozen())
    assert not t.numpy().flags.writeable
    assert cgrad.zeros(2).numpy().flags.writeable
    with pytest.raises(RuntimeError, match=READ_ONLY):
        cgrad.from_dlpack(t).add_(1)  # the versioned capsule carries DLPack's read-only flag
    tt = torch.from_dlpack(t)
    assert tt.tolist() == [1.0, 2.0, 3.0, 4.0]


def test_read_only_buffers_and_mmap(tmp_path):
    b = cgrad.asarray(b"\x00\x00\x80?\x00\x00\x00@")
    assert b.tolist() == [1.0, 2.0]
    with pytest.raises(RuntimeError, match=READ_ONLY):
        b.add_(1)
    path = tmp_path / "w.bin"
    path.write_bytes(np.arange(4, dtype=np.float32).tobytes())
    fd = os.open(path, os.O_RDONLY)
    try:
        with mmap.mmap(fd, 16, access=mmap.ACCESS_READ) as mm:
            m = cgrad.asarray(memoryview(mm))
            assert m.tolist() == [0.0, 1.0, 2.0, 3.0]
            with pytest.raises(RuntimeError, match=READ_ONLY):
                m.fill_(7)
            del m
    finally:
        os.close(fd)
    ba = bytearray(8)
    w = cgrad.frombuffer(ba, dtype=cgrad.int32)
    w.fill_(1)  # writable buffers stay writable and shared
    assert ba == bytearray(b"\x01\x00\x00\x00\x01\x00\x00\x00")


# ---------------------------------------------------------------- frombuffer / asarray(buffer) as PyTorch

BUFFERS = {
    "bytearray": lambda: bytearray(b"abcdefghijkl"),
    "bytes": lambda: b"abcdefghijkl",
    "array_i": lambda: array.array("i", [1, 2, 3]),
    "memoryview": lambda: memoryview(bytearray(range(12))),
}


@pytest.mark.filterwarnings("ignore:The given buffer is not writable")
@pytest.mark.parametrize("kind", sorted(BUFFERS))
@pytest.mark.parametrize("args", [dict(dtype="float32"), dict(dtype="int16", count=2, offset=2),
                                  dict(dtype="uint8", offset=11), dict(dtype="int32", count=3)], ids=str)
def test_frombuffer_matches_torch(kind, args):
    def call(L):
        kw = dict(args, dtype=getattr(L, args["dtype"]))
        return L.frombuffer(BUFFERS[kind](), **kw)
    assert call(cgrad).tolist() == call(torch).tolist()


@pytest.mark.filterwarnings("ignore:The given buffer is not writable")
@pytest.mark.parametrize("kind", sorted(BUFFERS))
def test_asarray_of_a_buffer_matches_torch(kind):
    for kw in ({}, {"dtype": "int32"}, {"dtype": "uint8"}):
        got = cgrad.asarray(BUFFERS[kind](), **{k: getattr(cgrad, v) for k, v in kw.items()})
        want = torch.asarray(BUFFERS[kind](), **{k: getattr(torch, v) for k, v in kw.items()})
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("call,exc", [
    (lambda L: L.frombuffer(bytearray(), dtype=L.float32), ValueError),
    (lambda L: L.frombuffer(bytearray(3), dtype=L.float32), ValueError),
    (lambda L: L.frombuffer(bytearray(8), dtype=L.float32, count=3), ValueError),
    (lambda L: L.frombuffer(bytearray(8), dtype=L.float32, offset=8), ValueError),
    (lambda L: L.frombuffer(bytearray(8), dtype=L.float32, offset=-1), ValueError),
    (lambda L: L.frombuffer(bytearray(8)), TypeError),
    (lambda L: L.frombuffer([1, 2], dtype=L.float32), (TypeError, ValueError)),
])
def test_frombuffer_errors_match_torch(call, exc):
    for L in (torch, cgrad):
        with pytest.raises(exc):
            call(L)
