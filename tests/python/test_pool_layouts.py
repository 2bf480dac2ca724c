"""Pooling across memory layouts, checked against PyTorch: values, argmax indices, input gradients and the
strides of all three for contiguous, channels_last (channels_last_3d), sliced, transposed and permuted
inputs, in 1-D, 2-D and 3-D, over the window options (stride, padding, dilation, ceil_mode,
count_include_pad, divisor_override), unbatched and empty-batch inputs, float32 / float64 / bfloat16 and
integer max pooling; float64 gradgradcheck of the channels-last ops; thread-count independence; bad input
raising an exception that names the op (src/ops/nn_pool.c, Note [Channels-last pool])."""
from __future__ import annotations

from typing import Any, Callable, List, Tuple

import numpy as np
import pytest
import torch

import cgrad

RNG = np.random.default_rng(1616)

# ---------------------------------------------------------------- layouts, built the same way in both libraries


def _lib_cl(lib: Any, nd: int) -> Any:
    return lib.channels_last if nd == 4 else lib.channels_last_3d


def _layout(name: str, lib: Any, base: Any) -> Any:
    """The input of layout `name` made from base (a contiguous tensor of the base shape _base_shape gives)."""
    nd = base.dim()
    if name == "contiguous":
        return base
    if name == "channels_last":
        if nd == 3:  # 1-D pools: the (N, L, C) memory (PyTorch's 2-D pool of x.unsqueeze(-2) sees channels_last)
            return base.transpose(1, 2).contiguous().transpose(1, 2)
        return base.contiguous(memory_format=_lib_cl(lib, nd))
    if name == "cl_sliced":  # channels-last memory, spatial dims sliced: not dense
        if nd == 3:
            x = base.transpose(1, 2).contiguous().transpose(1, 2)
        else:
            x = base.contiguous(memory_format=_lib_cl(lib, nd))
        sl = (slice(None), slice(1, -1)) + tuple(slice(1, None) for _ in range(nd - 2))
        return x[sl]
    if name == "transposed":  # the last two dims swapped in memory
        return base.transpose(-1, -2).contiguous().transpose(-1, -2)
    if name == "permuted":  # C innermost through a permute (channels-last strides without a format copy)
        perm = [0] + list(range(2, nd)) + [1]
        inv = [0, nd - 1] + list(range(1, nd - 1))
        return base.permute(*perm).contiguous().permute(*inv)
    raise AssertionError(name)


def _base_shape(name: str, shape: Tuple[int, ...]) -> Tuple[int, ...]:
    """cl_sliced takes a base larger by 2 channels and 1 in each spatial dim."""
    if name != "cl_sliced":
        return shape
    return (shape[0], shape[1] + 2) + tuple(s + 1 for s in shape[2:])


LAYOUTS = ["contiguous", "channels_last", "cl_sliced", "transposed", "permuted"]


def _pair(layout: str, shape: Tuple[int, ...], dtype: str, grad: bool = True) -> Tuple[torch.Tensor, Any]:
    """The same input in both libraries, of the layout, as leaves requiring grad (when floating)."""
    bs = _base_shape(layout, shape)
    if dtype.startswith("float") or dtype == "bfloat16":
        a = RNG.standard_normal(bs)
    else:
        a = RNG.integers(0, 100, bs)
    if a.size:
        t = _layout(layout, torch, torch.tensor(a).to(getattr(torch, dtype)))
        c = _layout(layout, cgrad, cgrad.tensor(a).to(getattr(cgrad, dtype)))
    else:  # torch.tensor of an empty array has all-0 strides
        t = _layout(layout, torch, torch.zeros(bs, dtype=getattr(torch, dtype)))
        c = _layout(layout, cgrad, cgrad.zeros(bs, dtype=getattr(cgrad, dtype)))
    assert tuple(t.shape) == tuple(c.shape) and tuple(t.stride()) == tuple(c.stride()), (layout, t.stride(),
                                                                                          c.stride())
    if grad and t.is_floating_point():
        t = t.detach().requires_grad_()
        c = c.detach().requires_grad_()
    return t, c


def _np(t: Any) -> np.ndarray:
    if isinstance(t, torch.Tensor):
        t = t.detach()
        return (t.float() if t.dtype in (torch.bfloat16, torch.float16) else t).numpy()
    t = t.detach()
    return (t.float() if t.dtype in (cgrad.bfloat16, cgrad.float16) else t).numpy()


def _tol(dtype: str) -> dict:
    return {"float64": dict(rtol=1e-12, atol=1e-12), "float32": dict(rtol=1e-5, atol=1e-6),
            "bfloat16": dict(rtol=2e-2, atol=2e-2)}.get(dtype, dict(rtol=0, atol=0))


# ---------------------------------------------------------------- the ops: (name, spatial dims, call(F, x))

def _ops() -> List[Tuple[str, int, Callable[[Any, Any], Any]]]:
    return [
        ("max_pool1d", 1, lambda F, x: F.max_pool1d(x, 3, 2, 1)),
        ("max_pool1d_idx", 1, lambda F, x: F.max_pool1d(x, 2, return_indices=True)),
        ("avg_pool1d", 1, lambda F, x: F.avg_pool1d(x, 3, 2, 1, count_include_pad=False)),
        ("adaptive_avg_pool1d", 1, lambda F, x: F.adaptive_avg_pool1d(x, 3)),
        ("adaptive_avg_pool1d_1", 1, lambda F, x: F.adaptive_avg_pool1d(x, 1)),
        ("adaptive_max_pool1d", 1, lambda F, x: F.adaptive_max_pool1d(x, 4, True)),
        ("max_pool2d_3x3s2", 2, lambda F, x: F.max_pool2d(x, 3, 2, 1, return_indices=True)),
        ("max_pool2d_2x2", 2, lambda F, x: F.max_pool2d(x, 2)),
        ("max_pool2d_2x2_idx", 2, lambda F, x: F.max_pool2d(x, 2, return_indices=True)),
        ("max_pool2d_dil_ceil", 2, lambda F, x: F.max_pool2d(x, (3, 2), (2, 1), (1, 0), (2, 1), True, True)),
        ("avg_pool2d", 2, lambda F, x: F.avg_pool2d(x, 3, 2, 1)),
        ("avg_pool2d_nopad_ceil", 2, lambda F, x: F.avg_pool2d(x, 3, 2, 1, True, False)),
        ("avg_pool2d_div", 2, lambda F, x: F.avg_pool2d(x, (2, 3), (1, 2), (1, 1), divisor_override=5)),
        ("adaptive_avg_pool2d", 2, lambda F, x: F.adaptive_avg_pool2d(x, (3, 4))),
        ("adaptive_avg_pool2d_1", 2, lambda F, x: F.adaptive_avg_pool2d(x, 1)),
        ("adaptive_avg_pool2d_none", 2, lambda F, x: F.adaptive_avg_pool2d(x, (None, 2))),
        ("adaptive_max_pool2d", 2, lambda F, x: F.adaptive_max_pool2d(x, (3, 4), True)),
        ("max_pool3d", 3, lambda F, x: F.max_pool3d(x, 3, 2, 1, return_indices=True)),
        ("max_pool3d_dil_ceil", 3, lambda F, x: F.max_pool3d(x, 2, (2, 1, 2), 0, (1, 2, 1), True)),
        ("avg_pool3d", 3, lambda F, x: F.avg_pool3d(x, 3, 2, 1, True, False)),
        ("avg_pool3d_div", 3, lambda F, x: F.avg_pool3d(x, 2, 1, 1, divisor_override=3)),
        ("adaptive_avg_pool3d", 3, lambda F, x: F.adaptive_avg_pool3d(x, (2, 3, 2))),
        ("adaptive_avg_pool3d_1", 3, lambda F, x: F.adaptive_avg_pool3d(x, 1)),
        ("adaptive_max_pool3d", 3, lambda F, x: F.adaptive_max_pool3d(x, (2, 3, 2), True)),
    ]


OPS = {name: (nsp, fn) for name, nsp, fn in _ops()}
SHAPES = {1: (2, 5, 9), 2: (2, 5, 7, 8), 3: (2, 4, 5, 6, 7)}


def _split(r: Any) -> Tuple[Any, Any]:
    return (r[0], r[1]) if isinstance(r, tuple) else (r, None)


def _compare(name: str, layout: str, dtype: str, shape: Tuple[int, ...] = None) -> None:
    nsp, fn = OPS[name]
    t, c = _pair(layout, shape or SHAPES[nsp], dtype)
    rt, it = _split(fn(torch.nn.functional, t))
    rc, ic = _split(fn(cgrad.nn.functional, c))
    where = f"{name} {layout} {dtype}"
    assert tuple(rc.shape) == tuple(rt.shape), where
    np.testing.assert_allclose(_np(rc), _np(rt), **_tol(dtype), err_msg=where)
    assert rc.stride() == rt.stride(), f"{where}: output strides {rc.stride()} vs torch {rt.stride()}"
    assert str(rc.dtype).split(".")[-1] == str(rt.dtype).split(".")[-1], where
    if it is not None:
        np.testing.assert_array_equal(ic.numpy(), it.numpy(), err_msg=where)
        assert ic.stride() == it.stride(), f"{where}: index strides {ic.stride()} vs torch {it.stride()}"
    if not t.is_floating_point() or rt.numel() == 0:
        return
    g = RNG.standard_normal(tuple(rt.shape))
    gt = torch.tensor(g).to(rt.dtype)
    gc = cgrad.tensor(g).to(rc.dtype)
    dt, = torch.autograd.grad(rt, t, gt)
    dc, = cgrad.autograd.grad(rc, c, gc)
    np.testing.assert_allclose(_np(dc), _np(dt), **_tol(dtype), err_msg=where + " grad")
    assert dc.stride() == dt.stride(), f"{where}: grad strides {dc.stride()} vs torch {dt.stride()}"


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", list(OPS))
def test_layouts_float64(name: str, layout: str) -> None:
    _compare(name, layout, "float64")


@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "cl_sliced"])
@pytest.mark.parametrize("name", list(OPS))
def test_layouts_float32(name: str, layout: str) -> None:
    _compare(name, layout, "float32")


@pytest.mark.parametrize("layout", ["contiguous", "channels_last"])
@pytest.mark.parametrize("name", [n for n in OPS if not n.startswith("avg_pool3d")])  # torch: no bf16 avg_pool3d
def test_layouts_bfloat16(name: str, layout: str) -> None:
    _compare(name, layout, "bfloat16")


def test_bfloat16_avg_pool3d_beyond_torch() -> None:
    """avg_pool3d takes bfloat16 (computed in float32), which PyTorch's CPU build refuses: compare with its
    float32 result rounded."""
    a = RNG.standard_normal((2, 3, 4, 5, 6))
    for fmt in (cgrad.contiguous_format, cgrad.channels_last_3d):
        x = cgrad.tensor(a).to(cgrad.bfloat16).contiguous(memory_format=fmt)
        ref = torch.nn.functional.avg_pool3d(torch.tensor(a).bfloat16().float(), 2).bfloat16().float()
        np.testing.assert_allclose(_np(cgrad.nn.functional.avg_pool3d(x, 2)), ref.numpy(), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("name", ["max_pool2d_3x3s2", "avg_pool2d", "adaptive_avg_pool2d", "adaptive_max_pool2d",
                                  "max_pool3d", "avg_pool3d", "adaptive_max_pool3d", "max_pool1d_idx"])
def test_ambiguous_shapes(name: str) -> None:
    """C == 1, size-1 spatial dims and a batch of 1 under channels_last: PyTorch's suggest_memory_format
    decides (and the shapes whose strides tie stay contiguous)."""
    nsp, _ = OPS[name]
    shapes = {1: [(2, 1, 9), (1, 4, 9), (3, 4, 3)],
              2: [(2, 1, 7, 8), (2, 3, 1, 8), (1, 3, 7, 8), (2, 3, 5, 3), (2, 3, 3, 3)],
              3: [(2, 1, 5, 6, 7), (2, 3, 3, 1, 7), (1, 3, 5, 6, 7), (2, 3, 3, 3, 3)]}[nsp]
    for shape in shapes:
        if name == "avg_pool3d" and min(shape[2:]) < 3:
            continue  # PyTorch's avg_pool3d refuses an input smaller than the kernel, padding or not
        _compare(name, "channels_last", "float64", shape)


@pytest.mark.parametrize("name", list(OPS))
def test_unbatched(name: str) -> None:
    nsp, fn = OPS[name]
    a = RNG.standard_normal(SHAPES[nsp][1:])
    t = torch.tensor(a).requires_grad_()
    c = cgrad.tensor(a).requires_grad_()
    rt, it = _split(fn(torch.nn.functional, t))
    rc, ic = _split(fn(cgrad.nn.functional, c))
    np.testing.assert_allclose(_np(rc), _np(rt), rtol=1e-12, atol=1e-12)
    assert rc.stride() == rt.stride()
    if it is not None:
        np.testing.assert_array_equal(ic.numpy(), it.numpy())
    dt, = torch.autograd.grad(rt.sum(), t)
    dc, = cgrad.autograd.grad(rc.sum(), c)
    np.testing.assert_allclose(_np(dc), _np(dt), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("layout", ["contiguous", "channels_last"])
@pytest.mark.parametrize("name", ["max_pool1d_idx", "avg_pool1d", "max_pool2d_3x3s2", "max_pool2d_2x2",
                                  "avg_pool2d", "adaptive_avg_pool2d", "adaptive_max_pool2d", "max_pool3d",
                                  "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d"])
def test_empty_batch(name: str, layout: str) -> None:
    nsp, _ = OPS[name]
    _compare(name, layout, "float32", (0,) + SHAPES[nsp][1:])


# ---------------------------------------------------------------- integer pooling

@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "int8", "int16"])
@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "cl_sliced"])
def test_integer_max_pool(dtype: str, layout: str) -> None:
    """Integer max pooling (every integer dtype PyTorch's CPU build takes), ties to the row-major first."""
    for name in ("max_pool1d_idx", "max_pool2d_3x3s2", "max_pool2d_2x2", "max_pool2d_dil_ceil", "max_pool3d"):
        nsp, fn = OPS[name]
        t, c = _pair(layout, SHAPES[nsp], dtype)
        a = RNG.integers(0, 4, tuple(t.shape))  # many ties
        t = _layout(layout, torch, torch.tensor(a).to(getattr(torch, dtype))) if layout != "cl_sliced" else t
        c = _layout(layout, cgrad, cgrad.tensor(a).to(getattr(cgrad, dtype))) if layout != "cl_sliced" else c
        try:
            rt, it = _split(fn(torch.nn.functional, t))
            stride = rt.stride()
        except RuntimeError:  # torch 2.x: channels-last max_pool3d of (u)int8 overflows its int8 index type
            assert name == "max_pool3d" and dtype in ("int8", "uint8") and layout != "contiguous"
            rt, it = _split(fn(torch.nn.functional, t.contiguous()))
            stride = _split(fn(torch.nn.functional, t.double()))[0].stride()
        rc, ic = _split(fn(cgrad.nn.functional, c))
        np.testing.assert_array_equal(rc.numpy(), rt.numpy(), err_msg=f"{name} {dtype} {layout}")
        assert rc.stride() == stride and rc.dtype == getattr(cgrad, dtype)
        if it is not None:
            np.testing.assert_array_equal(ic.numpy(), it.numpy())
            assert ic.stride() == stride


@pytest.mark.parametrize("layout", ["contiguous", "channels_last"])
def test_int64_avg_pool(layout: str) -> None:
    """int64 avg pooling truncates toward zero, as PyTorch's CPU kernels."""
    for name in ("avg_pool1d", "avg_pool2d", "avg_pool2d_div", "avg_pool3d", "avg_pool3d_div"):
        nsp, fn = OPS[name]
        a = RNG.integers(-50, 50, SHAPES[nsp])
        t = _layout(layout, torch, torch.tensor(a))
        c = _layout(layout, cgrad, cgrad.tensor(a))
        rt, rc = fn(torch.nn.functional, t), fn(cgrad.nn.functional, c)
        np.testing.assert_array_equal(rc.numpy(), rt.numpy(), err_msg=f"{name} {layout}")
        assert rc.stride() == rt.stride()


# ---------------------------------------------------------------- NaN, values-only max pool, double backward

@pytest.mark.parametrize("layout", ["contiguous", "channels_last"])
def test_nan_wins(layout: str) -> None:
    for name in ("max_pool1d_idx", "max_pool2d_3x3s2", "max_pool2d_2x2_idx", "adaptive_max_pool2d", "max_pool3d",
                 "adaptive_max_pool3d"):
        nsp, fn = OPS[name]
        a = RNG.standard_normal(SHAPES[nsp])
        a.flat[RNG.choice(a.size, a.size // 7, replace=False)] = np.nan
        a.flat[RNG.choice(a.size, a.size // 9, replace=False)] = np.inf
        t = _layout(layout, torch, torch.tensor(a))
        c = _layout(layout, cgrad, cgrad.tensor(a))
        rt, it = _split(fn(torch.nn.functional, t))
        rc, ic = _split(fn(cgrad.nn.functional, c))
        np.testing.assert_array_equal(rc.numpy(), rt.numpy(), err_msg=name)
        np.testing.assert_array_equal(ic.numpy(), it.numpy(), err_msg=name)


@pytest.mark.parametrize("layout", ["contiguous", "channels_last"])
def test_values_only_max_pool_matches(layout: str) -> None:
    """Without indices or a graph the max pool keeps no indices (a values-only kernel): same values."""
    for nsp, k in ((1, 3), (2, 3), (2, 2), (3, 2)):
        a = RNG.standard_normal(SHAPES[nsp])
        c = _layout(layout, cgrad, cgrad.tensor(a).float())
        F = cgrad.nn.functional
        pool = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[nsp]
        with cgrad.no_grad():
            v = pool(c, k, 2)
        w, _ = pool(c, k, 2, return_indices=True)
        assert v.stride() == w.stride() or nsp == 1
        np.testing.assert_array_equal(v.numpy(), w.numpy())


@pytest.mark.parametrize("layout", ["contiguous", "channels_last"])
def test_double_backward_matches_torch(layout: str) -> None:
    """create_graph: max pool's backward is a scatter by the indices (its own backward a gather), avg pool's is
    linear: the second-order gradients match PyTorch's."""
    for name in ("max_pool2d_3x3s2", "avg_pool2d", "adaptive_avg_pool2d", "adaptive_max_pool2d", "max_pool3d",
                 "avg_pool3d", "max_pool1d_idx", "avg_pool1d"):
        nsp, fn = OPS[name]
        t, c = _pair(layout, SHAPES[nsp], "float64")
        rt, _ = _split(fn(torch.nn.functional, t))
        rc, _ = _split(fn(cgrad.nn.functional, c))
        g = RNG.standard_normal(tuple(rt.shape))
        gt = torch.tensor(g).requires_grad_()
        gc = cgrad.tensor(g).requires_grad_()
        dt, = torch.autograd.grad(rt, t, gt, create_graph=True)
        dc, = cgrad.autograd.grad(rc, c, gc, create_graph=True)
        np.testing.assert_allclose(_np(dc), _np(dt), rtol=1e-12, atol=1e-12)
        w = RNG.standard_normal(tuple(t.shape))
        ggt, = torch.autograd.grad((dt * torch.tensor(w)).sum(), gt)
        ggc, = cgrad.autograd.grad((dc * cgrad.tensor(w)).sum(), gc)
        np.testing.assert_allclose(_np(ggc), _np(ggt), rtol=1e-12, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "permuted"])
@pytest.mark.parametrize("name", ["max_pool1d_idx", "avg_pool1d", "adaptive_avg_pool1d", "max_pool2d_3x3s2",
                                  "max_pool2d_2x2", "avg_pool2d_nopad_ceil", "avg_pool2d_div",
                                  "adaptive_avg_pool2d", "adaptive_avg_pool2d_1", "adaptive_max_pool2d",
                                  "max_pool3d", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d"])
def test_gradgradcheck(name: str, layout: str) -> None:
    nsp, fn = OPS[name]
    small = {1: (1, 3, 6), 2: (1, 3, 5, 4), 3: (1, 2, 4, 3, 4)}[nsp]
    _, c = _pair(layout, small, "float64")

    def f(x: Any) -> Any:
        return _split(fn(cgrad.nn.functional, x))[0]

    assert cgrad.autograd.gradcheck(f, (c,))
    assert cgrad.autograd.gradgradcheck(f, (c,))


# ---------------------------------------------------------------- threads, errors

@pytest.mark.parametrize("layout", ["contiguous", "channels_last"])
def test_thread_count_independent(layout: str) -> None:
    """1 and 2 threads give bit-identical values, indices and gradients."""
    shapes = {1: (4, 64, 200), 2: (4, 64, 30, 30), 3: (2, 32, 10, 12, 12)}
    old = cgrad.get_num_threads()
    try:
        for name in ("max_pool1d_idx", "avg_pool1d", "max_pool2d_3x3s2", "max_pool2d_2x2", "avg_pool2d",
                     "adaptive_avg_pool2d", "adaptive_max_pool2d", "max_pool3d", "avg_pool3d",
                     "adaptive_max_pool3d"):
            nsp, fn = OPS[name]
            a = RNG.standard_normal(shapes[nsp]).astype(np.float32)
            outs = []
            for n in (1, 2):
                cgrad.set_num_threads(n)
                c = _layout(layout, cgrad, cgrad.tensor(a)).detach().requires_grad_()
                r, i = _split(fn(cgrad.nn.functional, c))
                d, = cgrad.autograd.grad(r, c, cgrad.ones_like(r) * 0.37)
                outs.append([r.detach().numpy(), d.numpy()] + ([i.numpy()] if i is not None else []))
            for u, v in zip(*outs):
                assert np.array_equal(u, v), name
    finally:
        cgrad.set_num_threads(old)


BAD: List[Tuple[str, Callable[[Any], Any]]] = [
    ("max_pool3d", lambda F: F.max_pool3d(cgrad.zeros(1, 1, 4, 4, 4), 2, padding=2)),
    ("max_pool3d", lambda F: F.max_pool3d(cgrad.zeros(1, 1, 4, 4, 4), 0)),
    ("max_pool3d", lambda F: F.max_pool3d(cgrad.zeros(1, 1, 4, 4, 4), 2, stride=0)),
    ("max_pool3d", lambda F: F.max_pool3d(cgrad.zeros(1, 1, 4, 4, 4), 2, dilation=0)),
    ("max_pool3d", lambda F: F.max_pool3d(cgrad.zeros(1, 1, 4, 4, 4), 5)),
    ("max_pool3d", lambda F: F.max_pool3d(cgrad.zeros(4, 4, 4), 2)),
    ("max_pool3d", lambda F: F.max_pool3d(cgrad.zeros(1, 0, 4, 4, 4), 2)),
    ("max_pool3d", lambda F: F.max_pool3d(cgrad.zeros(1, 1, 4, 4, 4, dtype=cgrad.bool), 2)),
    ("max_pool3d", lambda F: F.max_pool3d(cgrad.zeros(1, 1, 4, 4, 4), (2, 2))),
    ("avg_pool3d", lambda F: F.avg_pool3d(cgrad.zeros(1, 1, 4, 4, 4), 2, padding=(0, 0, 2))),
    ("avg_pool3d", lambda F: F.avg_pool3d(cgrad.zeros(1, 1, 4, 4, 4), 2, divisor_override=0)),
    ("avg_pool3d", lambda F: F.avg_pool3d(cgrad.zeros(1, 1, 4, 4, 4, dtype=cgrad.int32), 2)),
    ("adaptive_avg_pool3d", lambda F: F.adaptive_avg_pool3d(cgrad.zeros(1, 1, 4, 4, 4), -1)),
    ("adaptive_max_pool3d", lambda F: F.adaptive_max_pool3d(cgrad.zeros(1, 1, 4, 4, 4), (2, 2))),
    ("adaptive_max_pool3d", lambda F: F.adaptive_max_pool3d(cgrad.zeros(1, 4, 4), 2)),
    ("max_pool2d", lambda F: F.max_pool2d(cgrad.zeros(2, 3, 4, 4).contiguous(memory_format=cgrad.channels_last),
                                          5)),
    ("avg_pool2d", lambda F: F.avg_pool2d(cgrad.zeros(2, 3, 4, 4).contiguous(memory_format=cgrad.channels_last),
                                          3, padding=2)),
    ("adaptive_max_pool2d", lambda F: F.adaptive_max_pool2d(
        cgrad.zeros(2, 3, 4, 4).contiguous(memory_format=cgrad.channels_last), -2)),
]


@pytest.mark.parametrize("op,call", BAD, ids=[f"{o}-{i}" for i, (o, _) in enumerate(BAD)])
def test_bad_input_raises_naming_the_op(op: str, call: Callable[[Any], Any]) -> None:
    with pytest.raises((RuntimeError, ValueError, TypeError, NotImplementedError)) as e:
        call(cgrad.nn.functional)
    assert op in str(e.value), str(e.value)


def test_inplace_write_to_saved_indices_is_caught() -> None:
    """The indices a channels-last max pool returns are what its backward reads: writing them fails the
    backward (version check) instead of scattering to the wrong place."""
    c = cgrad.randn(2, 3, 6, 6, dtype=cgrad.float64).contiguous(memory_format=cgrad.channels_last)
    c.requires_grad_()
    y, i = cgrad.nn.functional.max_pool2d(c, 2, return_indices=True)
    i.zero_()
    with pytest.raises(RuntimeError):
        y.sum().backward()
