"""copysign, the op added as one row of the op table plus its formula
(src/ops/elementwise_ops.py, cg_bw_copysign in src/ops/arith.c): values,
promotion, in-place forms and gradients against PyTorch, signed zeros and
NaN signs, and float64 gradcheck / gradgradcheck."""
import math

import numpy as np
import pytest
import torch

import cgrad
from cgrad.autograd import gradcheck, gradgradcheck

A = [-2.5, -1.0, -0.0, 0.0, 0.5, 3.0, math.inf, -math.inf]
B = [1.0, -1.0, -0.0, 0.0, -2.0, math.inf, -math.nan, math.nan]


def _np(t):
    return np.array(t.tolist(), dtype=np.float64)


def _same(c, t):
    assert str(c.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert tuple(c.shape) == tuple(t.shape)
    cv, tv = _np(c), t.detach().double().numpy()
    np.testing.assert_array_equal(cv, tv)
    np.testing.assert_array_equal(np.signbit(cv), np.signbit(tv))  # signed zeros and infinities


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_values_and_signs(dtype):
    a = [[x for x in A], [x * 0.5 for x in A]]
    b = [B, list(reversed(B))]
    if dtype == "bfloat16":  # torch.tensor(-nan, dtype=bfloat16) drops the NaN's sign; cgrad keeps it
        b = [[abs(x) if math.isnan(x) else x for x in row] for row in b]
    c = cgrad.copysign(cgrad.tensor(a, dtype=getattr(cgrad, dtype)), cgrad.tensor(b, dtype=getattr(cgrad, dtype)))
    t = torch.copysign(torch.tensor(a, dtype=getattr(torch, dtype)), torch.tensor(b, dtype=getattr(torch, dtype)))
    _same(c, t)


def test_broadcast_scalar_and_method_forms():
    a = [[1.0, -2.0, 3.0], [0.0, -0.0, 4.0]]
    ca, ta = cgrad.tensor(a), torch.tensor(a)
    _same(cgrad.copysign(ca, cgrad.tensor([-1.0, 1.0, -0.0])), torch.copysign(ta, torch.tensor([-1.0, 1.0, -0.0])))
    _same(ca.copysign(-1.0), ta.copysign(-1.0))
    _same(cgrad.copysign(ca, -2), torch.copysign(ta, -2))
    _same(ca.copysign(ca[:, :1].neg()), ta.copysign(ta[:, :1].neg()))  # (2, 1) broadcast
    with pytest.raises(TypeError):
        cgrad.copysign(2.0, ca)  # input must be a Tensor, as in PyTorch


def test_integer_inputs_promote_to_float():
    ci, ti = cgrad.tensor([3, -4, 0]), torch.tensor([3, -4, 0])
    _same(cgrad.copysign(ci, cgrad.tensor([-1, 1, -1])), torch.copysign(ti, torch.tensor([-1, 1, -1])))
    _same(cgrad.copysign(ci, -1.5), torch.copysign(ti, -1.5))
    _same(cgrad.copysign(cgrad.tensor([1.0, 2.0], dtype=cgrad.float64), cgrad.tensor([-1, 1])),
          torch.copysign(torch.tensor([1.0, 2.0], dtype=torch.float64), torch.tensor([-1, 1])))


def test_inplace():
    c, t = cgrad.tensor([1.0, -2.0, 3.0]), torch.tensor([1.0, -2.0, 3.0])
    rc, rt = c.copysign_(cgrad.tensor([-1.0, -1.0, 1.0])), t.copysign_(torch.tensor([-1.0, -1.0, 1.0]))
    assert rc is c and rt is t
    _same(c, t)
    with pytest.raises(RuntimeError):
        cgrad.tensor([1, 2]).copysign_(cgrad.tensor([-1, 1]))  # a float result cannot be written into int64
    with pytest.raises(RuntimeError):
        torch.tensor([1, 2]).copysign_(torch.tensor([-1, 1]))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gradients_match_pytorch(dtype):
    a = [[-2.5, -1.0, 0.0, 0.5], [3.0, -0.0, 1.5, -4.0]]
    b = [[1.0, -1.0, -2.0, 0.0], [-0.0, 2.0, -3.0, 5.0]]
    ca = cgrad.tensor(a, dtype=getattr(cgrad, dtype), requires_grad=True)
    cb = cgrad.tensor(b, dtype=getattr(cgrad, dtype), requires_grad=True)
    ta = torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=True)
    tb = torch.tensor(b, dtype=getattr(torch, dtype), requires_grad=True)
    g = [[1.0, 2.0, 3.0, 4.0], [-1.0, -2.0, 0.5, 0.25]]
    yc, yt = cgrad.copysign(ca, cb), torch.copysign(ta, tb)
    assert yc.grad_fn.name() == type(yt.grad_fn).__name__ == "CopysignBackward0"
    yc.backward(cgrad.tensor(g, dtype=getattr(cgrad, dtype)))
    yt.backward(torch.tensor(g, dtype=getattr(torch, dtype)))
    _same(ca.grad, ta.grad)  # 0 where a == 0, as PyTorch masks it
    np.testing.assert_array_equal(_np(cb.grad), tb.grad.double().numpy())


def test_broadcast_gradient_reduces_to_shape():
    ca = cgrad.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True)
    cb = cgrad.tensor([-1.0], requires_grad=True)
    ta = torch.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True)
    tb = torch.tensor([-1.0], requires_grad=True)
    cgrad.copysign(ca, cb).sum().backward()
    torch.copysign(ta, tb).sum().backward()
    _same(ca.grad, ta.grad)
    assert tuple(cb.grad.shape) == (1,) and cb.grad.tolist() == tb.grad.tolist()


def test_gradcheck_and_gradgradcheck():
    a = cgrad.tensor([[-2.5, -1.0, 0.7], [3.0, 1.5, -4.0]], dtype=cgrad.float64, requires_grad=True)
    b = cgrad.tensor([[1.0, -1.0, -2.0], [-0.5, 2.0, 3.0]], dtype=cgrad.float64, requires_grad=True)
    assert gradcheck(cgrad.copysign, (a, b))
    assert gradgradcheck(cgrad.copysign, (a, b))
