"""Targeted checks of cgrad's elementwise and small linear-algebra ops (python/cgrad/_ops_math.py) against
PyTorch, beyond op_db: poles and large arguments of the special functions, 0-d / empty / non-contiguous /
broadcast inputs, errors, and float64 gradcheck / gradgradcheck."""
import math

import numpy as np
import pytest
import torch

import cgrad
from cgrad.autograd import gradcheck, gradgradcheck


def c(a, dtype=cgrad.float64, requires_grad=False):
    return cgrad.tensor(np.asarray(a).tolist(), dtype=dtype, requires_grad=requires_grad)


def t(a, dtype=torch.float64):
    return torch.tensor(np.asarray(a).tolist(), dtype=dtype)


def close(got, exp, rtol=1e-12, atol=1e-300):
    g = torch.tensor(np.array(got.tolist()), dtype=exp.dtype)
    torch.testing.assert_close(g, exp, rtol=rtol, atol=atol, equal_nan=True)


SPECIAL_X = [0.0, -0.0, -1.0, -2.0, -7.0, 1.0, 2.0, 0.5, 1e-8, -1e-8, -2.5, -3.999999, 1.4616321449683622,
             3.7, 12.5, 50.0, 171.5, 1e6, 1e15, float("inf"), float("-inf"), float("nan")]


@pytest.mark.parametrize("name", ["lgamma", "digamma"])
def test_gamma_family_poles_and_large(name):
    x = np.array(SPECIAL_X)
    exp = getattr(torch, name)(t(x))
    got = getattr(cgrad, name)(c(x))
    # digamma near its positive root and near poles: PyTorch's own value carries ~1e-11 error
    close(got, exp, rtol=1e-12 if name == "lgamma" else 1e-10, atol=1e-14)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_polygamma_values(n):
    x = np.array([v for v in SPECIAL_X if v != 1e15 and v != 1e6 and not math.isinf(v) or v == float("inf")])
    x = x[~np.isin(x, [-1.0, -2.0, -7.0])] if n == 1 else x  # trigamma at negative integers: see the pole test
    exp = torch.polygamma(n, t(x))
    close(cgrad.polygamma(n, c(x)), exp, rtol=1e-9, atol=1e-12)


def test_trigamma_pole_values_match_pytorch():
    for dt, tdt in ((cgrad.float32, torch.float32), (cgrad.float64, torch.float64)):
        x = [0.0, -1.0, -3.0]
        close(cgrad.polygamma(1, c(x, dt)), torch.polygamma(1, t(x, tdt)), rtol=1e-5)


def test_special_float32_and_int_inputs():
    x = np.linspace(-6.3, 9.1, 41)
    for name in ("lgamma", "digamma", "i0"):
        got = getattr(cgrad, name)(c(x, cgrad.float32))
        assert got.dtype == cgrad.float32
        close(got, getattr(torch, name)(t(x, torch.float32)), rtol=1e-5, atol=1e-5)
    gi = cgrad.lgamma(cgrad.tensor([1, 2, 5, -3]))
    assert gi.dtype == cgrad.float32
    close(gi, torch.lgamma(torch.tensor([1, 2, 5, -3])), rtol=1e-6)


def test_lgamma_exact_zeros():
    assert cgrad.lgamma(c([1.0, 2.0])).tolist() == [0.0, 0.0]
    assert cgrad.lgamma(cgrad.ones(3)).tolist() == [0.0, 0.0, 0.0]


def test_i0_range():
    x = np.concatenate([np.linspace(-40, 40, 161), [700.0, -705.0, 0.0]])
    close(cgrad.i0(c(x)), torch.i0(t(x)), rtol=1e-12)


def test_igamma_values():
    a = np.array([0.5, 1.0, 2.5, 10.0, 30.0, 0.0, 3.0, -1.0, 2.0])
    x = np.array([0.2, 3.0, 2.5, 12.0, 25.0, 1.0, 0.0, 1.0, float("inf")])
    # PyTorch's large-a expansion is ~1e-9 off at (30, 25); the reference values are mpmath's
    close(cgrad.igamma(c(a), c(x)), torch.igamma(t(a), t(x)), rtol=1e-8, atol=1e-14)
    close(cgrad.igammac(c(a), c(x)), torch.igammac(t(a), t(x)), rtol=1e-8, atol=1e-14)
    mpmath = pytest.importorskip("mpmath")
    a2, x2 = [0.5, 2.5, 30.0, 100.0, 7.0], [0.2, 2.5, 25.0, 90.0, 40.0]
    ref = [float(mpmath.gammainc(u, 0, v, regularized=True)) for u, v in zip(a2, x2)]
    refc = [float(mpmath.gammainc(u, v, mpmath.inf, regularized=True)) for u, v in zip(a2, x2)]
    close(cgrad.igamma(c(a2), c(x2)), t(ref), rtol=1e-12)
    close(cgrad.igammac(c(a2), c(x2)), t(refc), rtol=1e-11)


def test_igamma_large_a_and_special_values():
    """Note [Incomplete gamma]: every regime (series, continued fraction, Temme's expansion above a = 1e5)
    against mpmath where it converges and the normal limit P(a, a + k sqrt(a)) -> Phi(k) at a = 1e20 (PyTorch's
    own tail values there are off by orders of magnitude, so they are not the reference); PyTorch's special
    cases in its order (P(inf, nan) = 0, P(nan, inf) = 1)."""
    mpmath = pytest.importorskip("mpmath")
    a, x = [], []
    for av in (3.0, 300.0, 2e3, 5e4, 1e5, 1.5e5):
        for k in (-8, -1, -0.01, 0, 0.01, 1, 8):
            if av + k * math.sqrt(av) <= 0:
                continue
            a.append(av)
            x.append(av + k * math.sqrt(av))
    ref = [float(mpmath.gammainc(u, 0, v, regularized=True)) for u, v in zip(a, x)]
    refc = [float(mpmath.gammainc(u, v, mpmath.inf, regularized=True)) for u, v in zip(a, x)]
    close(cgrad.igamma(c(a), c(x)), t(ref), rtol=1e-9, atol=1e-15)
    close(cgrad.igammac(c(a), c(x)), t(refc), rtol=1e-9, atol=1e-15)
    xs = [1e20 + k * 1e10 for k in (-8.0, -2.0, 0.5, 3.0)]
    phi = [0.5 * math.erfc(-(v - 1e20) / 1e10 / math.sqrt(2)) for v in xs]  # x - a of the rounded x (exact)
    close(cgrad.igamma(c([1e20] * 4), c(xs)), t(phi), rtol=1e-7)  # the limit's error: ~k^3 / (3 sqrt(a))
    # a subnormal a: P is 1 - a E1(x) ~ 1 (torch's float32 igamma says 0, its igammac 9e-39)
    close(cgrad.igamma(c([1e-40], cgrad.float32), c([1e-40], cgrad.float32)), t([1.0], torch.float32))
    inf, nan = float("inf"), float("nan")
    sa = [inf, inf, inf, -inf, nan, nan, 0.0, 0.0, 2.0]
    sx = [inf, -inf, nan, inf, inf, -inf, 0.0, 1.0, 0.0]
    for f, tf in ((cgrad.igamma, torch.igamma), (cgrad.igammac, torch.igammac)):
        close(f(c(sa), c(sx)), tf(t(sa), t(sx)))
        close(f(c(sa, cgrad.float32), c(sx, cgrad.float32)), tf(t(sa, torch.float32), t(sx, torch.float32)))


def test_igamma_gradients_forms_and_errors():
    a = c([0.5, 3.0, 40.0])
    x = c([0.7, 2.0, 38.0], requires_grad=True)
    for f in (cgrad.igamma, cgrad.igammac):
        assert gradcheck(lambda v: f(a, v), (x,))
        assert gradgradcheck(lambda v: f(a, v), (x,))
    with pytest.raises(NotImplementedError, match="the derivative for 'igamma: input' is not implemented"):
        cgrad.igamma(c([2.0], requires_grad=True), c([1.0])).backward()
    # broadcast, non-contiguous, 0-d, empty, in-place and out=
    ab = c(np.linspace(0.5, 6, 12).reshape(3, 4)).t()
    xb = c([1.0, 2.0, 3.0])
    close(cgrad.igamma(ab, xb), torch.igamma(t(np.linspace(0.5, 6, 12).reshape(3, 4)).t(), t([1.0, 2.0, 3.0])))
    assert cgrad.igammac(c(2.0), c(1.0)).shape == () and cgrad.igamma(c([]), c([])).shape == (0,)
    y = c([1.0, 2.0])
    y.igamma_(c([1.0, 1.0]))
    close(y, torch.igamma(t([1.0, 2.0]), t([1.0, 1.0])))
    out = cgrad.empty(2, dtype=cgrad.float64)
    cgrad.igammac(c([1.0, 2.0]), c([1.0, 1.0]), out=out)
    close(out, torch.igammac(t([1.0, 2.0]), t([1.0, 1.0])))
    with pytest.raises(TypeError, match="must be Tensor"):
        cgrad.igamma(c([1.0]), 2.0)
    with pytest.raises(RuntimeError):
        cgrad.igamma(c([1.0], cgrad.int64), c([1.0], cgrad.int64))


def test_special_gradients():
    x = c([0.7, 2.3, -1.4, 5.5], requires_grad=True)
    for fn in (cgrad.lgamma, cgrad.digamma, lambda v: cgrad.polygamma(2, v), cgrad.i0, cgrad.sinc,
               lambda v: cgrad.mvlgamma(v + 3, 3)):
        assert gradcheck(fn, (x,))
        assert gradgradcheck(fn, (x,))


def test_composed_gradients():
    a = c(np.random.default_rng(0).standard_normal((4, 3)), requires_grad=True)
    b = c(np.random.default_rng(1).standard_normal((4, 3)), requires_grad=True)
    assert gradgradcheck(lambda u, v: cgrad.cross(u, v, dim=1), (a, b))
    assert gradgradcheck(lambda u: cgrad.cov(u.t()), (a,))
    assert gradgradcheck(lambda u: cgrad.gradient(u, spacing=[c([0.0, 1.0, 2.5, 4.0]), 0.5], edge_order=2), (a,))
    assert gradgradcheck(lambda u, v: cgrad.xlogy(u, v.abs() + 0.1), (a, b))
    assert gradgradcheck(lambda u: cgrad.logit(u.sigmoid(), eps=0.3), (a,))


def test_zero_dim_empty_noncontiguous():
    x = np.random.default_rng(2).standard_normal((3, 4))
    xt = c(x).t()  # non-contiguous
    close(cgrad.diff(xt, dim=0, append=c(x).t()[:1]), torch.diff(t(x).t(), dim=0, append=t(x).t()[:1]))
    close(cgrad.sinc(c(0.0)), torch.sinc(t(0.0)))
    assert tuple(cgrad.lgamma(cgrad.empty(0, 3)).shape) == (0, 3)
    close(cgrad.trapezoid(xt, dx=0.5, dim=0), torch.trapezoid(t(x).t(), dx=0.5, dim=0))
    close(cgrad.cumulative_trapezoid(xt, c([0.0, 1.0, 3.0, 3.5]), dim=0),
          torch.cumulative_trapezoid(t(x).t(), t([0.0, 1.0, 3.0, 3.5]), dim=0))
    a = np.random.default_rng(3).standard_normal((2, 1, 3))
    b = np.random.default_rng(4).standard_normal((1, 5, 3))
    close(cgrad.cross(c(a), c(b)), torch.cross(t(a), t(b), dim=-1))


def test_integer_ops():
    a = cgrad.tensor([0, 12, -18, 7, 0, 2 ** 40])
    b = cgrad.tensor([0, 8, 24, -13, 5, 2 ** 20 * 3])
    ta, tb = torch.tensor(a.tolist()), torch.tensor(b.tolist())
    assert cgrad.gcd(a, b).tolist() == torch.gcd(ta, tb).tolist()
    assert cgrad.lcm(a, b).tolist() == torch.lcm(ta, tb).tolist()
    with pytest.raises(RuntimeError):
        cgrad.gcd(cgrad.ones(2), cgrad.ones(2))


def test_bit_ops():
    x = [1.5, -0.0, 0.0, 3e-310, -7.25, float("inf"), float("nan"), 1e300]
    m, e = cgrad.frexp(c(x))
    tm, te = torch.frexp(t(x))
    close(m, tm)
    assert e.dtype == cgrad.int32 and e.tolist() == te.tolist()
    y = [2.0, 1.0, -1.0, 0.0, 0.0, 0.0, 1.0, float("inf")]
    close(cgrad.nextafter(c(x), c(y)), torch.nextafter(t(x), t(y)), rtol=0, atol=0)
    assert cgrad.signbit(c([-0.0, 0.0, -1.0])).tolist() == [True, False, True]
    h = np.random.default_rng(5).standard_normal((3, 4))
    assert cgrad.hash_tensor(c(h), 1, keepdim=True).tolist() == torch.hash_tensor(t(h), 1, keepdim=True).tolist()


def test_errors():
    with pytest.raises(RuntimeError):
        cgrad.heaviside(cgrad.ones(2), cgrad.ones(2, dtype=cgrad.float64))
    with pytest.raises(RuntimeError):
        cgrad.cov(cgrad.ones(2, 2, 2))
    with pytest.raises(RuntimeError):
        cgrad.mvlgamma(c([0.5, 2.0]), 3)
    with pytest.raises(RuntimeError):
        cgrad.polygamma(-1, c([1.0]))
    with pytest.raises(RuntimeError):
        cgrad.diff(c(1.0))
    with pytest.raises(RuntimeError):
        cgrad.cross(cgrad.ones(2, 4), cgrad.ones(2, 4))
    with pytest.raises(RuntimeError):
        cgrad.tensor([1, 2]).deg2rad_()


def test_inplace_methods_keep_gradients():
    x = c([1.5, 2.5], requires_grad=True)
    y = x * 1
    y.lgamma_()
    y.sum().backward()
    close(x.grad, torch.digamma(t([1.5, 2.5])))
    a = cgrad.tensor([4, 6, -9])
    a.gcd_(cgrad.tensor([6, 9, 6]))
    assert a.tolist() == [2, 3, 3]
    assert x.real is x and x.conj() is x


def test_random_fills():
    cgrad.manual_seed(0)
    x = cgrad.empty(20000, dtype=cgrad.float64).exponential_(2.0)
    assert abs(x.mean().item() - 0.5) < 0.03 and x.min().item() >= 0
    g = cgrad.empty(20000).geometric_(0.25)
    assert g.dtype == cgrad.float32 and g.min().item() >= 1 and abs(g.mean().item() - 4.0) < 0.2
    ln = cgrad.empty(20000, dtype=cgrad.float64).log_normal_(0.5, 0.25)
    assert abs(ln.log().mean().item() - 0.5) < 0.02
    ca = cgrad.empty(20001, dtype=cgrad.float64).cauchy_(1.0, 2.0)
    assert abs(ca.median().item() - 1.0) < 0.15 if hasattr(ca, "median") else True
    with pytest.raises(RuntimeError):
        cgrad.empty(3).exponential_(-1.0)


def test_predicates_match_torch():
    for lib in (torch, cgrad):
        assert lib.is_nonzero(lib.tensor([3])) is True and lib.tensor(0.0).is_nonzero() is False
        assert lib.is_complex(lib.ones(2)) is False and lib.ones(2).is_complex() is False
        assert lib.is_floating_point(lib.ones(2)) is True and lib.is_floating_point(lib.ones(2).long()) is False
        for bad, msg in ((lib.ones(0), "no values"), (lib.ones(2), "more than one value")):
            with pytest.raises(RuntimeError, match=msg):
                lib.is_nonzero(bad)
