"""The in-place view ops (Tensor.t_, transpose_, swapdims_, swapaxes_,
squeeze_, unsqueeze_, as_strided_) against PyTorch 2.13: the geometry
(shape, strides, offset), storage sharing, the returned object, version
counters, autograd (leaf / non-leaf / view of a non-leaf / no_grad, float64
gradients) and the exception types; and autograd through as_strided of an
input whose region does not hold the view."""
from __future__ import annotations

from typing import Any, Callable, List, Tuple

import numpy as np
import pytest
import torch

import cgrad


def np_of(t: Any) -> np.ndarray:
    t = t.detach()
    return np.array(t.tolist(), dtype=np.float64).reshape(tuple(t.shape))


def geometry(t: Any) -> Tuple[Tuple[int, ...], Tuple[int, ...], int]:
    return tuple(t.shape), tuple(t.stride()), t.storage_offset()


def make(shape: Tuple[int, ...], layout: str, lib: Any, requires_grad: bool = False) -> Any:
    """The same float64 values in both libraries: contiguous, or a transposed (non-contiguous) view."""
    n = int(np.prod(shape)) if shape else 1
    flat = lib.tensor((np.arange(n, dtype=np.float64) * 0.5 - 1.0).tolist(), dtype=lib.float64)
    if layout == "transposed" and len(shape) >= 2:
        t = flat.reshape(shape[:-2] + (shape[-1], shape[-2])).transpose(-1, -2)
    else:
        t = flat.reshape(shape)
    return t.requires_grad_() if requires_grad else t


# (name, input shape, the op) — each op applied to both libraries' tensors
CASES: List[Tuple[str, Tuple[int, ...], Callable[[Any], Any]]] = [
    ("t_2d", (2, 3), lambda x: x.t_()),
    ("t_1d", (4,), lambda x: x.t_()),
    ("t_0d", (), lambda x: x.t_()),
    ("transpose_", (2, 3, 4), lambda x: x.transpose_(0, 2)),
    ("transpose_neg", (2, 3, 4), lambda x: x.transpose_(-1, -3)),
    ("transpose_same", (2, 3), lambda x: x.transpose_(1, 1)),
    ("transpose_0d", (), lambda x: x.transpose_(0, -1)),
    ("swapdims_", (2, 3, 4), lambda x: x.swapdims_(1, 2)),
    ("swapaxes_", (2, 3, 4), lambda x: x.swapaxes_(0, -1)),
    ("squeeze_all", (1, 3, 1, 2), lambda x: x.squeeze_()),
    ("squeeze_dim", (1, 3, 1, 2), lambda x: x.squeeze_(2)),
    ("squeeze_dim_neg", (1, 3, 1, 2), lambda x: x.squeeze_(-4)),
    ("squeeze_dim_not1", (1, 3, 1, 2), lambda x: x.squeeze_(1)),
    ("squeeze_dims", (1, 3, 1, 2), lambda x: x.squeeze_((0, 2, 3))),
    ("squeeze_0d", (), lambda x: x.squeeze_()),
    ("squeeze_0d_dim", (), lambda x: x.squeeze_(-1)),
    ("unsqueeze_", (2, 3), lambda x: x.unsqueeze_(1)),
    ("unsqueeze_end", (2, 3), lambda x: x.unsqueeze_(-1)),
    ("unsqueeze_0d", (), lambda x: x.unsqueeze_(0)),
    ("as_strided_", (3, 4), lambda x: x.as_strided_((2, 2), (1, 2))),
    ("as_strided_offset", (3, 4), lambda x: x.as_strided_((2, 3), (4, 1), 5)),
    ("as_strided_overlap", (3, 4), lambda x: x.as_strided_((3, 3), (1, 1), 1)),
    ("as_strided_expand", (3, 4), lambda x: x.as_strided_((2, 3), (0, 1), 2)),
    ("empty_t_", (0, 3), lambda x: x.t_()),
    ("empty_squeeze_", (0, 1), lambda x: x.squeeze_()),
    ("empty_unsqueeze_", (0, 3), lambda x: x.unsqueeze_(2)),
    ("empty_as_strided_", (2, 3), lambda x: x.as_strided_((0, 2), (1, 1))),
]


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("name,shape,op", CASES, ids=[c[0] for c in CASES])
def test_geometry_and_identity(name: str, shape: Tuple[int, ...], op: Callable[[Any], Any], layout: str) -> None:
    c, t = make(shape, layout, cgrad), make(shape, layout, torch)
    cptr, cver = c.data_ptr() - c.storage_offset() * 8, c._version
    tver = t._version
    rc, rt = op(c), op(t)
    assert rc is c and rt is t
    assert geometry(c) == geometry(t)
    assert c.data_ptr() - c.storage_offset() * 8 == cptr  # same storage
    assert c.is_contiguous() == t.is_contiguous()
    np.testing.assert_array_equal(np_of(c), np_of(t))
    assert c._version - cver == t._version - tver == 1


@pytest.mark.parametrize("name,shape,op", CASES, ids=[c[0] for c in CASES])
def test_gradient_of_a_non_leaf(name: str, shape: Tuple[int, ...], op: Callable[[Any], Any]) -> None:
    grads = []
    for lib in (cgrad, torch):
        x = make(shape, "contiguous", lib, requires_grad=True)
        y = x * 2 + 1
        old = y.grad_fn
        op(y)
        assert y.grad_fn is not None and y.requires_grad and not y.is_leaf
        assert y.grad_fn.name() == torch_name(name)
        w = lib.arange(y.numel(), dtype=lib.float64).reshape(tuple(y.shape)) + 1
        (y * w).sum().backward()
        grads.append(np_of(x.grad))
    np.testing.assert_allclose(grads[0], grads[1])


def torch_name(name: str) -> str:
    """The node PyTorch gives the in-place form (checked against torch in test_node_names)."""
    for prefix, node in (("t_", "TBackward1"), ("empty_t_", "TBackward1"), ("transpose", "TransposeBackward1"),
                         ("swap", "TransposeBackward1"), ("squeeze_all", "SqueezeBackward3"),
                         ("squeeze_0d_dim", "SqueezeBackward4"), ("squeeze_0d", "SqueezeBackward3"),
                         ("empty_squeeze", "SqueezeBackward3"), ("squeeze_dims", "SqueezeBackward5"),
                         ("squeeze_dim", "SqueezeBackward4"), ("unsqueeze", "UnsqueezeBackward1"),
                         ("empty_unsqueeze", "UnsqueezeBackward1"), ("as_strided", "AsStridedBackward1"),
                         ("empty_as_strided", "AsStridedBackward1")):
        if name.startswith(prefix):
            return node
    raise KeyError(name)


@pytest.mark.parametrize("name,shape,op", CASES, ids=[c[0] for c in CASES])
def test_node_names(name: str, shape: Tuple[int, ...], op: Callable[[Any], Any]) -> None:
    y = make(shape, "contiguous", torch, requires_grad=True) * 1
    op(y)
    assert y.grad_fn.name() == torch_name(name)


def test_gradient_of_a_view_of_a_non_leaf() -> None:
    grads = []
    for lib in (cgrad, torch):
        x = make((2, 3), "contiguous", lib, requires_grad=True)
        y = x * 2
        v = y[0]
        v.unsqueeze_(0)
        assert tuple(v.shape) == (1, 3) and v.grad_fn.name() == "UnsqueezeBackward1"
        assert y.grad_fn.name() == "MulBackward0"
        (v * lib.tensor([[1.0, 2.0, 3.0]], dtype=lib.float64)).sum().backward()
        grads.append(np_of(x.grad))
    np.testing.assert_allclose(grads[0], grads[1])


def test_as_strided_inplace_of_a_view_reaches_outside_it() -> None:
    """The view's elements outside the input's own region get no gradient (PyTorch's as_strided_backward)."""
    grads = []
    for lib in (cgrad, torch):
        x = lib.tensor([1.0, 2.0, 3.0, 4.0], dtype=lib.float64, requires_grad=True)
        v = (x * 1)[1:]
        v.as_strided_((2,), (2,), 0)
        assert v.storage_offset() == 0
        (v * lib.tensor([1.0, 10.0], dtype=lib.float64)).sum().backward()
        grads.append(np_of(x.grad))
    np.testing.assert_allclose(grads[0], grads[1])
    np.testing.assert_allclose(grads[0], [0.0, 0.0, 10.0, 0.0])


def test_as_strided_default_offset_keeps_the_tensors() -> None:
    for lib in (cgrad, torch):
        y = lib.arange(6.0)[2:]
        y.as_strided_((2,), (1,))
        assert y.storage_offset() == 2 and y.tolist() == [2.0, 3.0]


def test_further_inplace_op_after_an_inplace_view() -> None:
    """An in-place write after the geometry changed goes through CopySlices of the view's base."""
    grads = []
    for lib in (cgrad, torch):
        x = make((2, 3), "contiguous", lib, requires_grad=True)
        y = x * 1
        v = y[:, 1:]
        v.t_()
        v.mul_(lib.tensor([[2.0, 3.0]], dtype=lib.float64).t())
        (y * y).sum().backward()
        grads.append((np_of(y), np_of(x.grad)))
    np.testing.assert_allclose(grads[0][0], grads[1][0])
    np.testing.assert_allclose(grads[0][1], grads[1][1])


def test_saved_tensor_version_check() -> None:
    for lib in (cgrad, torch):
        x = make((2, 3), "contiguous", lib, requires_grad=True)
        y = x * 2
        z = y * y
        y.t_()
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()


def test_views_share_the_version_counter() -> None:
    for lib in (cgrad, torch):
        a = lib.zeros(2, 3)
        b = a[0]
        before = a._version
        b.unsqueeze_(0)
        assert a._version == b._version == before + 1


OPS: List[Callable[[Any], Any]] = [lambda x: x.t_(), lambda x: x.transpose_(0, 1), lambda x: x.squeeze_(),
                                   lambda x: x.unsqueeze_(0), lambda x: x.as_strided_((2,), (1,))]


@pytest.mark.parametrize("op", OPS)
def test_leaf_requiring_grad_is_refused(op: Callable[[Any], Any]) -> None:
    for lib in (cgrad, torch):
        x = lib.zeros(2, 3, requires_grad=True)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            op(x)
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
            op(x[0:2])
        assert tuple(x.shape) == (2, 3)


@pytest.mark.parametrize("op", OPS)
def test_no_grad_changes_geometry_only(op: Callable[[Any], Any]) -> None:
    out = []
    for lib in (cgrad, torch):
        x = lib.zeros(2, 3, requires_grad=True)
        with lib.no_grad():
            op(x)
        assert x.requires_grad and x.is_leaf and x.grad_fn is None
        y = lib.zeros(2, 3, requires_grad=True) * 1
        old = y.grad_fn
        with lib.no_grad():
            op(y)
        assert y.grad_fn.name() == old.name() == "MulBackward0"
        out.append((geometry(x), geometry(y)))
    assert out[0] == out[1]


def test_integer_bool_and_expanded_tensors() -> None:
    for make_t in (lambda lib: lib.arange(6).view(2, 3), lambda lib: lib.tensor([[True, False]]),
                   lambda lib: lib.zeros(3).expand(2, 3)):
        c, t = make_t(cgrad), make_t(torch)
        c.t_(), t.t_()
        assert geometry(c) == geometry(t)
        assert c.tolist() == t.tolist()


ERRORS: List[Tuple[Callable[[Any], Any], type]] = [
    (lambda x: x.transpose_(0, 5), IndexError),
    (lambda x: x.swapdims_(-3, 0), IndexError),
    (lambda x: x.squeeze_(3), IndexError),
    (lambda x: x.squeeze_((0, 2)), IndexError),
    (lambda x: x.unsqueeze_(4), IndexError),
    (lambda x: x.unsqueeze_(-4), IndexError),
    (lambda x: x.unsqueeze(0).t_(), RuntimeError),
    (lambda x: x.as_strided_((10,), (1,)), RuntimeError),
    (lambda x: x.as_strided_((2,), (1,), 7), RuntimeError),
    (lambda x: x.as_strided_((2,), (-1,), 3), RuntimeError),
    (lambda x: x.as_strided_((2, 2), (1,)), RuntimeError),
    (lambda x: x.as_strided_((2,), (1,), -1), RuntimeError),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(i: int) -> None:
    op, exc = ERRORS[i]
    for lib in (cgrad, torch):
        x = lib.zeros(2, 3, dtype=lib.float64)
        before = geometry(x)
        with pytest.raises(exc):
            op(x)
        assert geometry(x) == before


def test_squeeze_repeated_dim() -> None:
    for lib in (cgrad, torch):
        with pytest.raises(RuntimeError, match="multiple times"):
            lib.zeros(1, 3).squeeze_((0, -2))


def test_0d_bad_dims() -> None:
    for lib in (cgrad, torch):
        with pytest.raises(IndexError):
            lib.tensor(3.0).squeeze_(1)
        with pytest.raises(IndexError):
            lib.tensor(3.0).transpose_(0, 1)


def test_meta_tensors() -> None:
    for lib in (cgrad, torch):
        m = lib.empty(2, 3, device="meta")
        m.t_()
        assert tuple(m.shape) == (3, 2) and m.stride() == (1, 3)


# ---------------------------------------------------------------- as_strided autograd, general inputs

AS_STRIDED: List[Tuple[str, Callable[[Any], Any], Callable[[Any], Any]]] = [
    ("partial_offset0", lambda lib: lib.arange(20.0, dtype=lib.float64)[5:15], lambda x: x.as_strided((2, 2), (1, 2), 0)),
    ("partial_offset10", lambda lib: lib.arange(20.0, dtype=lib.float64)[5:15], lambda x: x.as_strided((2, 2), (1, 2), 10)),
    ("partial_straddle", lambda lib: lib.arange(20.0, dtype=lib.float64)[5:15], lambda x: x.as_strided((3, 3), (3, 1), 3)),
    ("transposed", lambda lib: lib.arange(12.0, dtype=lib.float64).view(3, 4).t(), lambda x: x.as_strided((2, 3), (1, 2), 1)),
    ("strided_slice", lambda lib: lib.arange(12.0, dtype=lib.float64)[::2], lambda x: x.as_strided((4,), (3,), 0)),
    ("expanded", lambda lib: lib.arange(3.0, dtype=lib.float64).expand(2, 3), lambda x: x.as_strided((2,), (1,), 0)),
    ("overlapping_out", lambda lib: lib.arange(12.0, dtype=lib.float64).view(3, 4).t(), lambda x: x.as_strided((3, 3), (1, 1), 0)),
    ("empty_out", lambda lib: lib.arange(12.0, dtype=lib.float64).view(3, 4).t(), lambda x: x.as_strided((0, 3), (1, 1), 0)),
]


@pytest.mark.parametrize("name,make_t,op", AS_STRIDED, ids=[c[0] for c in AS_STRIDED])
def test_as_strided_gradient_general_input(name: str, make_t: Callable[[Any], Any], op: Callable[[Any], Any]) -> None:
    res = []
    for lib in (cgrad, torch):
        x = make_t(lib).detach().requires_grad_()
        out = op(x)
        w = lib.arange(out.numel(), dtype=lib.float64).reshape(tuple(out.shape)) + 1
        (g,) = lib.autograd.grad((out * w).sum(), x)
        res.append((np_of(out), np_of(g)))
    np.testing.assert_allclose(res[0][0], res[1][0])
    np.testing.assert_allclose(res[0][1], res[1][1])


def test_as_strided_gradcheck_general_input() -> None:
    base = cgrad.randn(20, dtype=cgrad.float64)
    x = base[5:15].detach().requires_grad_()
    assert cgrad.autograd.gradcheck(lambda t: t.as_strided((3, 3), (1, 2), 3), (x,))
    assert cgrad.autograd.gradgradcheck(lambda t: t.as_strided((3, 3), (1, 2), 3) ** 2, (x,))
    y = cgrad.randn(3, 4, dtype=cgrad.float64).t().detach().requires_grad_()
    assert cgrad.autograd.gradcheck(lambda t: t.as_strided((2, 3), (2, 1), 1), (y,))
    z = cgrad.randn(3, dtype=cgrad.float64).detach().requires_grad_()
    assert cgrad.autograd.gradcheck(lambda t: t.expand(2, 3).as_strided((2,), (1,), 0), (z,))
