"""cgrad.masked and cgrad.signal.windows against PyTorch on the corners op_db
does not reach: 0-d and empty inputs, masks that keep nothing, broadcast and
non-bool masks, dtype= and keepdim=, the errors, gradients by gradcheck, and
windows of length 0 and 1, periodic windows and large kaiser betas."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import cgrad

F64 = cgrad.float64


def _c(t: torch.Tensor) -> cgrad.Tensor:
    return cgrad.tensor(t.numpy(), dtype=getattr(cgrad, str(t.dtype).split(".")[-1]))


def _same(got: cgrad.Tensor, exp: torch.Tensor, rtol: float = 1e-6, atol: float = 1e-7) -> None:
    assert str(got.dtype).split(".")[-1] == str(exp.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(exp.shape)
    np.testing.assert_allclose(np.asarray(got.numpy(), dtype=np.float64), exp.double().numpy(),
                               rtol=rtol, atol=atol, equal_nan=True)


REDUCTIONS = ["sum", "prod", "amax", "amin", "mean", "logsumexp", "var", "std"]


@pytest.mark.parametrize("name", REDUCTIONS)
def test_reductions_corners(name: str) -> None:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, 4, generator=g, dtype=torch.float64)
    masks = [torch.zeros(3, 4, dtype=torch.bool),             # keeps nothing
             torch.tensor([True, False, True, False]),        # broadcast, lower ndim
             torch.tensor([[1], [0], [1]], dtype=torch.int64),  # broadcast, non-bool
             torch.rand(3, 4, generator=g) > 0.3]
    for m in masks:
        for dim, keepdim in [(None, False), (1, True), ((0, 1), False), (0, False), ((), True)]:
            exp = getattr(torch.masked, name)(x, dim, keepdim=keepdim, mask=m)
            got = getattr(cgrad.masked, name)(_c(x), dim, keepdim=keepdim, mask=_c(m))
            _same(got, exp)
    # 0-d input and mask
    for mv in (True, False):
        exp = getattr(torch.masked, name)(torch.tensor(2.5, dtype=torch.float64), mask=torch.tensor(mv))
        got = getattr(cgrad.masked, name)(cgrad.tensor(2.5, dtype=F64), mask=cgrad.tensor(mv))
        _same(got, exp)


def test_integer_dtypes_and_dtype_arg() -> None:
    x = torch.arange(12, dtype=torch.int32).reshape(3, 4) - 5
    m = torch.tensor([True, False, True, True])
    for name in ("sum", "prod", "amax", "amin", "argmax", "argmin"):
        exp = getattr(torch.masked, name)(x, 1, mask=m)
        got = getattr(cgrad.masked, name)(_c(x), 1, mask=_c(m))
        _same(got, exp)
    _same(cgrad.masked.sum(_c(x), 0, dtype=cgrad.float64, mask=_c(m)),
          torch.masked.sum(x, 0, dtype=torch.float64, mask=m))
    _same(cgrad.masked.var(_c(x), 1, mask=_c(m)), torch.masked.var(x, 1, mask=m), rtol=1e-5)
    _same(cgrad.masked.median(_c(x), 1, mask=_c(m)), torch.masked.median(x, 1, mask=m))
    with pytest.raises(ValueError):
        cgrad.masked.median(_c(x), 1, mask=cgrad.zeros((4,), dtype=cgrad.bool))
    with pytest.raises(ValueError):
        cgrad.masked.mean(_c(x), 1, mask=_c(m))


def test_median_and_normalizations() -> None:
    g = torch.Generator().manual_seed(1)
    x = torch.randn(4, 6, generator=g, dtype=torch.float64)
    x[0, 2] = float("nan")
    m = torch.rand(4, 6, generator=g) > 0.4
    m[1] = False
    for dim in (0, 1, -1):
        for keepdim in (False, True):
            _same(cgrad.masked.median(_c(x), dim, keepdim=keepdim, mask=_c(m)),
                  torch.masked.median(x, dim, keepdim=keepdim, mask=m))
        for name in ("softmax", "log_softmax", "softmin", "cumsum", "cumprod"):
            _same(getattr(cgrad.masked, name)(_c(x), dim, mask=_c(m)), getattr(torch.masked, name)(x, dim, mask=m))
        for ord in (2.0, 1, 0, math.inf, -math.inf):
            _same(cgrad.masked.norm(_c(x), ord, dim, mask=_c(m)), torch.masked.norm(x, ord, dim, mask=m))
            _same(cgrad.masked.normalize(_c(x), ord, dim, mask=_c(m)), torch.masked.normalize(x, ord, dim, mask=m))
    _same(cgrad.masked.softmax(_c(x.float()), 1, dtype=cgrad.float64, mask=_c(m)),
          torch.masked.softmax(x.float(), 1, dtype=torch.float64, mask=m))
    e = torch.empty(2, 0, dtype=torch.float64)
    _same(cgrad.masked.sum(_c(e), 1, mask=_c(torch.ones(2, 0, dtype=torch.bool))),
          torch.masked.sum(e, 1, mask=torch.ones(2, 0, dtype=torch.bool)))
    _same(cgrad.masked.softmax(_c(e), 1, mask=_c(torch.ones(2, 0, dtype=torch.bool))),
          torch.masked.softmax(e, 1, mask=torch.ones(2, 0, dtype=torch.bool)))
    a, b = x[:, :3], x[:, 3:]
    ma, mb = m[:, :3], m[:, 3:]
    _same(cgrad.masked.logaddexp(_c(a), _c(b), input_mask=_c(ma), other_mask=_c(mb)),
          torch.masked.logaddexp(a, b, input_mask=ma, other_mask=mb))


def test_masked_errors() -> None:
    x = cgrad.ones((2, 3))
    with pytest.raises(IndexError):
        cgrad.masked.sum(x, 2, mask=cgrad.ones((2, 3), dtype=cgrad.bool))
    with pytest.raises(RuntimeError):
        cgrad.masked.sum(x, (1, -1), mask=cgrad.ones((2, 3), dtype=cgrad.bool))
    with pytest.raises(IndexError):  # mask of higher dimensionality
        cgrad.masked.sum(x, mask=cgrad.ones((1, 2, 3), dtype=cgrad.bool))
    with pytest.raises(RuntimeError):  # not broadcastable
        cgrad.masked.amax(x, mask=cgrad.ones((2,), dtype=cgrad.bool))
    with pytest.raises(TypeError):
        cgrad.masked.sum([1.0, 2.0])

    class FakeMaskedTensor:
        def get_mask(self) -> None: ...
        def get_data(self) -> None: ...

    with pytest.raises(NotImplementedError, match="MaskedTensor"):
        cgrad.masked.sum(FakeMaskedTensor())


@pytest.mark.parametrize("name,args,kw", [
    ("sum", (1,), {}), ("prod", (0,), {}), ("amax", (1,), {}), ("mean", (None,), {}),
    ("logsumexp", (1,), {}), ("var", (1,), {}), ("std", (0,), {"correction": 0}),
    ("softmax", (1,), {}), ("log_softmax", (0,), {}), ("softmin", (1,), {}),
    ("cumsum", (1,), {}), ("cumprod", (0,), {}), ("median", (1,), {}),
    ("norm", (2.0, 1), {}), ("norm", (1, 0), {}), ("normalize", (2.0, 1), {})])
def test_gradcheck(name: str, args: tuple, kw: dict) -> None:
    g = torch.Generator().manual_seed(2)
    x = cgrad.tensor((torch.rand(3, 4, generator=g, dtype=torch.float64) + 0.5).numpy(), dtype=F64,
                     requires_grad=True)
    m = cgrad.tensor([[True, True, False, True], [True, True, True, True], [True, False, True, True]])
    fn = getattr(cgrad.masked, name)
    if name == "log_softmax":  # masked-out outputs are -inf: compare the kept ones, as PyTorch's wrapper does
        assert cgrad.autograd.gradcheck(lambda t: cgrad.where(m, fn(t, *args, mask=m, **kw), 0.0), (x,))
    else:
        assert cgrad.autograd.gradcheck(lambda t: fn(t, *args, mask=m, **kw), (x,))


WINDOWS = {"bartlett": {}, "blackman": {}, "cosine": {}, "hamming": {}, "hann": {}, "nuttall": {},
           "exponential": {"tau": 2.5}, "gaussian": {"std": 1.3}, "kaiser": {"beta": 7.5},
           "general_cosine": {"a": [0.3, 0.5, 0.2]}, "general_hamming": {"alpha": 0.6}}


@pytest.mark.parametrize("name", sorted(WINDOWS))
def test_windows(name: str) -> None:
    kw = WINDOWS[name]
    for M in (0, 1, 2, 7, 16):
        for sym in (True, False):
            for dt in ("float32", "float64"):
                exp = getattr(torch.signal.windows, name)(M, sym=sym, dtype=getattr(torch, dt), **kw)
                got = getattr(cgrad.signal.windows, name)(M, sym=sym, dtype=getattr(cgrad, dt), **kw)
                _same(got, exp, rtol=1e-5 if dt == "float32" else 1e-10, atol=1e-6 if dt == "float32" else 1e-12)
    w = getattr(cgrad.signal.windows, name)(4, requires_grad=True, **kw)
    assert w.requires_grad and w.dtype == cgrad.get_default_dtype()
    with pytest.raises(ValueError, match="non-negative window length"):
        getattr(cgrad.signal.windows, name)(-1, **kw)
    with pytest.raises(ValueError, match="float32 or float64"):
        getattr(cgrad.signal.windows, name)(3, dtype=cgrad.int64, **kw)
    with pytest.raises(ValueError, match="strided"):
        getattr(cgrad.signal.windows, name)(3, layout="torch.sparse_coo", **kw)
    with pytest.raises(TypeError):
        getattr(cgrad.signal.windows, name)(3.0, **kw)


def test_window_parameter_errors() -> None:
    w = cgrad.signal.windows
    with pytest.raises(ValueError, match="Tau must be positive"):
        w.exponential(3, tau=0)
    with pytest.raises(ValueError, match="Center must be None"):
        w.exponential(3, center=1.0)
    _same(w.exponential(6, center=1.5, sym=False, dtype=F64),
          torch.signal.windows.exponential(6, center=1.5, sym=False, dtype=torch.float64))
    with pytest.raises(ValueError, match="Standard deviation"):
        w.gaussian(3, std=-1)
    with pytest.raises(ValueError, match="beta must be non-negative"):
        w.kaiser(3, beta=-1)
    with pytest.raises(TypeError, match="list/tuple"):
        w.general_cosine(3, a=None)
    with pytest.raises(ValueError, match="cannot be empty"):
        w.general_cosine(3, a=[])


def test_kaiser_large_beta() -> None:
    for beta in (0.0, 30.0, 100.0, 300.0):
        for M in (5, 64, 255):
            exp = torch.signal.windows.kaiser(M, beta=beta, dtype=torch.float64)
            _same(cgrad.signal.windows.kaiser(M, beta=beta, dtype=F64), exp, rtol=1e-11, atol=1e-300)
    # beyond float64's range of I0 PyTorch gives nan; the scaled form stays finite
    big = cgrad.signal.windows.kaiser(9, beta=1000.0, dtype=F64)
    assert bool(cgrad.isfinite(big).all()) and abs(big[4].item() - 1.0) < 1e-12
