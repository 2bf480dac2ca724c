"""Regression tests for differences from PyTorch found by running PyTorch's
op_db against cgrad: index_fill's gradient for a tensor value with repeated
indices, NaN through hardshrink / softshrink / threshold (values and
gradients), arange's length and values for integer dtypes with fractional
bounds, and every signature of Tensor.to. torch==2.13.0 is the oracle."""
from __future__ import annotations

import math
from typing import Any, Callable, List, Tuple

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import cgrad
import cgrad.nn.functional as CF

NAN, INF = float("nan"), float("inf")


def np_of(t: Any) -> np.ndarray:
    t = t.detach()
    if str(t.dtype).split(".")[-1] in ("float16", "bfloat16"):
        t = t.float()
    return np.array(t.tolist(), dtype=np.float64).reshape(tuple(t.shape))


def assert_same(c: Any, t: Any, atol: float = 1e-6, signed_zeros: bool = False) -> None:
    """Same dtype, shape and values (NaN where torch has NaN); optionally the sign of zeros too."""
    assert str(c.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (c.dtype, t.dtype)
    assert tuple(c.shape) == tuple(t.shape), (tuple(c.shape), tuple(t.shape))
    a, b = np_of(c), np_of(t)
    np.testing.assert_allclose(a, b, atol=atol, rtol=1e-6, equal_nan=True)
    if signed_zeros:
        np.testing.assert_array_equal(np.signbit(a[a == 0]), np.signbit(b[b == 0]))


def both(data: Any, dtype: str = "float64", requires_grad: bool = False) -> Tuple[Any, Any]:
    c = cgrad.tensor(data, dtype=getattr(cgrad, dtype), requires_grad=requires_grad)
    t = torch.tensor(data, dtype=getattr(torch, dtype), requires_grad=requires_grad)
    return c, t


# ---------------------------------------------------------------- 1. index_fill with a tensor value

def _weights(lib: Any, shape: Tuple[int, ...]) -> Any:
    n = int(np.prod(shape)) if shape else 1
    return lib.arange(1.0, n + 1.0, dtype=lib.float64).sin().reshape(shape)


INDEX_FILL_CASES = [
    # (x shape, dim, index, noncontiguous x)
    ((3, 4), 1, [0, 2, 0, 2, 3], False),    # repeated indices: each filled column counts once
    ((3, 4), 1, [1, 1, 1], False),
    ((3, 4), 0, [2, 0, 2], True),           # non-contiguous (transposed) input
    ((2, 3, 4), 2, [3, 0, 3, 1], False),
    ((2, 3, 4), -2, [1, 1], True),
    ((5,), 0, [4, 4, 0], False),
    ((), 0, [0, 0], False),                 # 0-d input, index 0 twice
    ((3, 4), 1, [], False),                 # empty index: nothing is filled, value's gradient is 0
    ((0, 4), 1, [1, 1, 2], False),          # empty input
    ((3, 4), 1, [2], False),
]


@pytest.mark.parametrize("shape,dim,index,noncontig", INDEX_FILL_CASES)
def test_index_fill_tensor_value_gradient_counts_each_filled_slice_once(shape: Tuple[int, ...], dim: int,
                                                                          index: List[int], noncontig: bool) -> None:
    res = {}
    for lib in (cgrad, torch):
        n = int(np.prod(shape)) if shape else 1
        if noncontig:  # the same values through a reversed-dims view of a contiguous tensor
            rev = tuple(range(len(shape) - 1, -1, -1))
            x = lib.arange(float(n), dtype=lib.float64).reshape(shape).permute(rev).contiguous().permute(rev)
            assert not x.is_contiguous()
        else:
            x = lib.arange(float(n), dtype=lib.float64).reshape(shape)
        x.requires_grad_()
        v = lib.tensor(-1.5, dtype=lib.float64, requires_grad=True)
        y = x.index_fill(dim, lib.tensor(index, dtype=lib.int64), v)
        (y * _weights(lib, shape)).sum().backward()
        res[lib.__name__] = (y, x.grad, v.grad)
    for c, t in zip(res["cgrad"], res["torch"]):
        assert_same(c, t, atol=1e-12)


def test_index_fill_in_place_and_negative_aliases() -> None:
    # in place, repeated indices
    res = {}
    for lib in (cgrad, torch):
        v = lib.tensor(0.25, dtype=lib.float64, requires_grad=True)
        x = lib.zeros(3, 4, dtype=lib.float64, requires_grad=True)
        y = x * 1.0
        y.index_fill_(1, lib.tensor([3, 1, 3]), v)
        (y * _weights(lib, (3, 4))).sum().backward()
        res[lib.__name__] = (y, x.grad, v.grad)
    for c, t in zip(res["cgrad"], res["torch"]):
        assert_same(c, t, atol=1e-12)
    # -1 and 3 fill the same column of a size-4 dim: it counts once. (PyTorch's
    # backward rejects negative indices, so the oracle is the same fill written
    # with the non-negative index.)
    def grads(lib: Any, idx: List[int]) -> Tuple[Any, Any]:
        x = lib.zeros(3, 4, dtype=lib.float64, requires_grad=True)
        v = lib.tensor(2.0, dtype=lib.float64, requires_grad=True)
        y = x.index_fill(1, lib.tensor(idx), v)
        (y * _weights(lib, (3, 4))).sum().backward()
        return y, v.grad
    yc, gc = grads(cgrad, [-1, 3, 0, -4])
    yt, gt = grads(torch, [3, 0])
    assert_same(yc, yt, atol=1e-12)
    assert_same(gc, gt, atol=1e-12)


def test_index_fill_value_of_another_dtype_and_errors() -> None:
    res = {}
    for lib in (cgrad, torch):
        v = lib.tensor(1.5, dtype=lib.float32, requires_grad=True)
        y = lib.zeros(3, 4, dtype=lib.float64).index_fill(0, lib.tensor([0, 0, 2]), v)
        y.sum().backward()
        res[lib.__name__] = (y, v.grad)
    for c, t in zip(res["cgrad"], res["torch"]):
        assert_same(c, t)
    with pytest.raises(IndexError):
        cgrad.zeros(3, 4).index_fill(1, cgrad.tensor([1, 1, 4]), cgrad.tensor(1.0))
    with pytest.raises(IndexError):
        torch.zeros(3, 4).index_fill(1, torch.tensor([1, 1, 4]), torch.tensor(1.0))


def test_index_fill_gradcheck() -> None:
    x = cgrad.tensor(np.linspace(-1, 1, 12).reshape(3, 4).tolist(), dtype=cgrad.float64, requires_grad=True)
    v = cgrad.tensor(0.7, dtype=cgrad.float64, requires_grad=True)
    idx = cgrad.tensor([2, 0, 2, 2])
    f = lambda a, b: a.index_fill(1, idx, b) * cgrad.arange(1.0, 13.0, dtype=cgrad.float64).reshape(3, 4)  # noqa: E731
    assert cgrad.autograd.gradcheck(f, (x, v))
    assert cgrad.autograd.gradgradcheck(f, (x, v))
    x0 = cgrad.tensor(0.3, dtype=cgrad.float64, requires_grad=True)
    assert cgrad.autograd.gradcheck(lambda a, b: a.index_fill(0, cgrad.tensor([0, 0]), b), (x0, v))
