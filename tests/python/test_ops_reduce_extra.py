"""Targeted checks of cgrad's order statistics, counting and searching ops against PyTorch (beyond op_db):
0-d, empty and non-contiguous inputs, ties, NaN, error types and float64 gradients."""
import numpy as np
import pytest
import torch

import cgrad


def c(t):
    return cgrad.tensor(t.numpy(), dtype=getattr(cgrad, str(t.dtype).split(".")[-1]))


def tt(x):
    return torch.from_numpy(np.array(x.detach().numpy()))


def same(got, exp):
    torch.testing.assert_close(tt(got), exp, equal_nan=True, check_stride=False)


def test_median_nan_ties_noncontiguous():
    x = torch.tensor([[3., float("nan"), 1., 2.], [2., 2., 5., 1.], [4., 4., 4., 4.]])
    for fn in ("median", "nanmedian"):
        same(getattr(cgrad, fn)(c(x)), getattr(torch, fn)(x))
        got, exp = getattr(cgrad, fn)(c(x).T, 0), getattr(torch, fn)(x.T, 0)
        same(got.values, exp.values)
        picked = torch.gather(x.T, 0, tt(got.indices).unsqueeze(0)).squeeze(0)
        same(got.values, picked)
    assert type(cgrad.median(c(x), 1)).__name__ == "median"
    same(cgrad.nanmedian(cgrad.full((3,), float("nan"))), torch.tensor(float("nan")))
    same(cgrad.median(cgrad.tensor(5.), 0, keepdim=True).values, torch.tensor(5.))


def test_median_all_gradient_spreads_over_ties():
    x = cgrad.tensor([1., 2., 2., 3.], dtype=cgrad.float64, requires_grad=True)
    cgrad.median(x).backward()
    same(x.grad, torch.tensor([0., 0.5, 0.5, 0.], dtype=torch.float64))


def test_order_stats_errors():
    with pytest.raises(IndexError):
        cgrad.median(cgrad.zeros(0, 3), 0)
    with pytest.raises(RuntimeError):
        cgrad.kthvalue(cgrad.zeros(2, 2), 3)
    with pytest.raises(IndexError):
        cgrad.mode(cgrad.zeros(2), 2)
    with pytest.raises(RuntimeError):
        cgrad.quantile(cgrad.tensor([1, 2]), 0.5)
    with pytest.raises(RuntimeError):
        cgrad.quantile(cgrad.tensor([1., 2.]), 1.5)
    with pytest.raises(RuntimeError):
        cgrad.quantile(cgrad.tensor([1., 2.]), 0.5, interpolation="cubic")


def test_mode_and_kthvalue_ties():
    x = torch.tensor([[1, 3, 3, 1, 2], [7, 7, 7, 0, 0]])
    got, exp = cgrad.mode(c(x), 1), torch.mode(x, 1)
    same(got.values, exp.values)
    assert (torch.gather(x, 1, tt(got.indices).unsqueeze(1)).squeeze(1) == exp.values).all()
    got = cgrad.kthvalue(c(x), 2, 1, True)
    same(got.values, torch.kthvalue(x, 2, 1, True).values)


@pytest.mark.parametrize("interp", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_nan(interp):
    x = torch.tensor([[1., float("nan"), 3., 0.5], [4., 2., 2.5, 9.]], dtype=torch.float64)
    q = torch.tensor([0., 0.25, 0.5, 1.], dtype=torch.float64)
    for fn in ("quantile", "nanquantile"):
        same(getattr(cgrad, fn)(c(x), c(q), 1, True, interpolation=interp),
             getattr(torch, fn)(x, q, 1, True, interpolation=interp))
        same(getattr(cgrad, fn)(c(x), 0.3, interpolation=interp), getattr(torch, fn)(x, 0.3, interpolation=interp))


def test_gradcheck():
    x = cgrad.tensor(np.random.default_rng(0).standard_normal((3, 4)), dtype=cgrad.float64, requires_grad=True)
    assert cgrad.autograd.gradcheck(lambda t: cgrad.quantile(t, 0.3, dim=1), (x,))
    assert cgrad.autograd.gradcheck(lambda t: cgrad.logcumsumexp(t, 1), (x,))
    assert cgrad.autograd.gradcheck(lambda t: cgrad.cummin(t, 0).values, (x,))
    assert cgrad.autograd.gradcheck(lambda t: cgrad.kthvalue(t, 2, 0).values, (x,))
    assert cgrad.autograd.gradgradcheck(lambda t: cgrad.logcumsumexp(t, 0), (x,))


def test_logcumsumexp_large_spread():
    x = torch.tensor([-1000., 0., 1000., -5.], dtype=torch.float64)
    same(cgrad.logcumsumexp(c(x), 0), torch.logcumsumexp(x, 0))
    same(cgrad.logcumsumexp(cgrad.tensor(2.), 0), torch.tensor(2.))


def test_cummin_dtypes():
    for x in (torch.tensor([3, 1, 1, 2, 0], dtype=torch.uint8), torch.tensor([True, False, True]),
              torch.tensor([2., float("nan"), 1.]), torch.tensor([5, -3, -3, 9])):
        got, exp = cgrad.cummin(c(x), 0), torch.cummin(x, 0)
        same(got.values, exp.values)
        same(got.indices, exp.indices)


def test_unique_variants():
    x = torch.tensor([[2, 1, 2], [0, 1, 2], [2, 1, 2], [0, 0, 0]])
    for dim in (None, 0, 1):
        got = cgrad.unique(c(x), return_inverse=True, return_counts=True, dim=dim)
        exp = torch.unique(x, return_inverse=True, return_counts=True, dim=dim)
        for g, e in zip(got, exp):
            same(g, e)
        got = cgrad.unique_consecutive(c(x), return_inverse=True, return_counts=True, dim=dim)
        exp = torch.unique_consecutive(x, return_inverse=True, return_counts=True, dim=dim)
        for g, e in zip(got, exp):
            same(g, e)
    same(cgrad.unique(cgrad.tensor([], dtype=cgrad.int64)), torch.tensor([], dtype=torch.int64))


def test_counting():
    x = torch.tensor([1, 4, 4, 0])
    same(cgrad.bincount(c(x), minlength=7), torch.bincount(x, minlength=7))
    w = torch.tensor([0.5, 1., 2., 3.])
    same(cgrad.bincount(c(x), c(w)), torch.bincount(x, w))
    with pytest.raises(RuntimeError):
        cgrad.bincount(cgrad.tensor([-1, 2]))
    y = torch.tensor([0., 1., 2.5, 10., 11., float("nan")])
    same(cgrad.histc(c(y), bins=4, min=0, max=10), torch.histc(y, bins=4, min=0, max=10))
    z = torch.tensor([0., 1., 2.5, 10.])
    h, e = cgrad.histogram(c(z), 3, density=True)
    th, te = torch.histogram(z, 3, density=True)
    same(h, th)
    same(e, te)
    pts = torch.rand(20, 2, dtype=torch.float64)
    gh, ge = cgrad.histogramdd(c(pts), bins=[3, 2], range=[0., 1., 0., 1.])
    th, te = torch.histogramdd(pts, bins=[3, 2], range=[0., 1., 0., 1.])
    same(gh, th)
    for a, b in zip(ge, te):
        same(a, b)


def test_searching():
    seq = torch.tensor([[1., 2., 2., 5.], [0., 3., 3., 3.]])
    v = torch.tensor([[2., 6., 0.], [3., -1., float("nan")]])
    for right in (False, True):
        same(cgrad.searchsorted(c(seq), c(v), right=right), torch.searchsorted(seq, v, right=right))
    same(cgrad.searchsorted(c(seq[0]), 2.0, side="right"), torch.searchsorted(seq[0], 2.0, side="right"))
    perm = torch.tensor([3, 0, 2, 1])
    same(cgrad.searchsorted(c(seq[0][perm]), c(v), sorter=c(torch.argsort(seq[0][perm]))),
         torch.searchsorted(seq[0][perm], v, sorter=torch.argsort(seq[0][perm])))
    assert cgrad.bucketize(c(v), c(seq[0]), out_int32=True).dtype == cgrad.int32
    with pytest.raises(RuntimeError):
        cgrad.searchsorted(c(seq), c(v), side="left", right=True)
    with pytest.raises(RuntimeError):
        cgrad.bucketize(c(v), c(seq))
    e, t = torch.tensor([[1, 2], [3, 4]]), torch.tensor([4., 1.5, 1.])
    for inv in (False, True):
        same(cgrad.isin(c(e), c(t), invert=inv), torch.isin(e, t, invert=inv))
    same(cgrad.isin(c(e), 3), torch.isin(e, 3))


@pytest.mark.parametrize("name,dim", [("cumsum_", 1), ("cumprod_", 0)])
def test_inplace_scans_match_torch(name, dim):
    x = np.arange(1.0, 13.0).reshape(3, 4)
    want, got = torch.tensor(x), cgrad.tensor(x)
    assert getattr(got, name)(dim) is got
    getattr(want, name)(dim)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
