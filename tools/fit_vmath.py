"""fit_vmath.py — derives the polynomial coefficients of src/backend/cpu/vmath.h.

Each approximation is a near-minimax fit of the relative error on a dense grid
(Lawson's iteratively reweighted least squares, references from mpmath at 40
digits), then rounded to float32. For every fit it prints the maximum relative
error of the fit and of the rounded coefficients evaluated in float32 (FMA
Horner, emulated in float64), in units of 2^-24, and the C initialiser.

    .venv/bin/python tools/fit_vmath.py

The C tests (tests/c/test_vmath.c) check the shipped functions against
float64 libm over dense sweeps; this script only documents where the numbers
come from."""
import mpmath as mp
import numpy as np

mp.mp.dps = 40
F32 = np.float32


def lawson(target, base, mult, basis, iters=1500):
    """Coefficients c minimising max |(base + mult * sum c_k basis_k) / target - 1|."""
    a = (mult[:, None] * np.stack(basis, 1)) / target[:, None]
    rhs = (target - base) / target
    w = np.full(len(target), 1.0 / len(target))
    for _ in range(iters):
        sw = np.sqrt(w)
        c, *_ = np.linalg.lstsq(a * sw[:, None], rhs * sw, rcond=None)
        err = np.abs(a @ c - rhs)
        w = w * err
        w /= w.sum()
    return c, float(np.max(np.abs(a @ c - rhs)))


def fma32(a, b, c):
    return F32(np.float64(a) * np.float64(b) + np.float64(c))


def horner32(cs, v):
    r = np.full_like(v, F32(cs[-1]))
    for c in reversed(cs[:-1]):
        r = fma32(r, v, F32(c))
    return r


def ref(fn, xs):
    return np.array([float(fn(mp.mpf(float(x)))) for x in xs])


def report(name, fit_err, cs, approx32, exact):
    ev = float(np.max(np.abs(approx32 / exact - 1)))
    body = ", ".join(f"{float(F32(c)):.9g}f" for c in cs)
    print(f"/* {name}: fit {fit_err / 2**-24:.3f}, float32 evaluation {ev / 2**-24:.3f} (x 2^-24 relative) */")
    print(f"{{{body}}}")


def fit_exp():
    """e^r = 1 + r + r^2 P(r), |r| <= ln2/2, P of degree 4."""
    h = float(mp.log(2) / 2)
    r = np.linspace(-h, h, 6001)
    t = ref(mp.exp, r)
    c, e = lawson(t, 1 + r, r * r, [r ** k for k in range(5)])
    r32 = r.astype(F32)
    p = horner32(list(c), r32)
    approx = fma32(r32 * r32, p, r32 + F32(1))
    report("exp: e^r = 1 + r + r^2 P(r)", e, c, approx, ref(mp.exp, r32))


def fit_expm1():
    """e^r - 1 = r + r^2/2 + r^3 P(r), |r| <= ln2/2, P of degree 4."""
    h = float(mp.log(2) / 2)
    r = np.linspace(-h, h, 6001)
    r = r[np.abs(r) > 1e-6]
    t = ref(mp.expm1, r)
    c, e = lawson(t, r + r * r / 2, r ** 3, [r ** k for k in range(5)])
    r32 = r.astype(F32)
    p = horner32(list(c), r32)
    approx = fma32(r32 * r32, fma32(r32, p, F32(0.5)), r32)
    report("expm1: r + r^2 (1/2 + r P(r))", e, c, approx, ref(mp.expm1, r32))


def fit_log1p():
    """log(1 + f) = f - f^2/2 + f^3 Q(f), f in [sqrt(1/2) - 1, sqrt(2) - 1], Q of degree 7."""
    f = np.linspace(float(mp.sqrt(0.5)) - 1, float(mp.sqrt(2)) - 1, 8001)
    f = f[np.abs(f) > 1e-6]
    t = ref(mp.log1p, f)
    c, e = lawson(t, f - f * f / 2, f ** 3, [f ** k for k in range(8)])
    f32 = f.astype(F32)
    q = horner32(list(c), f32)
    approx = fma32(f32 * f32, fma32(f32, q, F32(-0.5)), f32)
    report("log: log1p(f) = f + f^2 (f Q(f) - 1/2)", e, c, approx, ref(mp.log1p, f32))


def fit_tanh():
    """tanh(x) = x + x^3 P(x^2), |x| < 0.625, P of degree 4."""
    x = np.linspace(1e-4, 0.625, 6001)
    t = ref(mp.tanh, x)
    c, e = lawson(t, x, x ** 3, [x ** (2 * k) for k in range(5)])
    x32 = x.astype(F32)
    z = x32 * x32
    approx = fma32(x32 * z, horner32(list(c), z), x32)
    report("tanh: x + x^3 P(x^2), |x| < 0.625", e, c, approx, ref(mp.tanh, x32))


ERF_SPLIT = 0.4769  # erf(x) = erfc(x) = 1/2 near here: each is computed directly on its small side


def fit_erf():
    """erf(x) = (2/sqrt(pi)) x + x^3 P(x^2), |x| < ERF_SPLIT, P of degree 4; in float32 the
    leading constant is a float pair (hi + lo) so its rounding does not cost an ulp."""
    c0 = 2 / mp.sqrt(mp.pi)
    hi = F32(float(c0))
    lo = F32(float(c0 - mp.mpf(float(hi))))
    x = np.linspace(1e-5, ERF_SPLIT, 4001)
    t = ref(mp.erf, x)
    c, e = lawson(t, x * float(c0), x ** 3, [x ** (2 * k) for k in range(5)])
    x32 = x.astype(F32)
    z = x32 * x32
    approx = fma32(x32, hi, fma32(x32 * z, horner32(list(c), z), x32 * lo))
    print(f"/* 2/sqrt(pi) = {float(hi):.9g}f + {float(lo):.9g}f */")
    report("erf: (2/sqrt(pi)) x + x^3 P(x^2)", e, c, approx, ref(mp.erf, x32))


def fit_erfc_pieces():
    """erfc(a) e^(a^2) = H(a - mid) on five pieces covering [ERF_SPLIT, 10.06], H of degree 9."""
    def scaled(v):
        return mp.erfc(v) * mp.exp(v * v)
    for lo, hi in [(ERF_SPLIT, 1.1), (1.1, 2.0), (2.0, 4.0), (4.0, 6.0), (6.0, 10.06)]:
        mid = (lo + hi) / 2
        a = np.linspace(lo, hi, 4001)
        t = ref(scaled, a)
        v = a - mid
        c, e = lawson(t, 0 * v, np.ones_like(v), [v ** k for k in range(10)])
        c0_hi = F32(c[0])
        c0_lo = F32(c[0] - np.float64(c0_hi))  # the constant term as a float pair
        a32 = a.astype(F32)
        v32 = a32 - F32(mid)
        approx = F32(c0_hi + fma32(horner32(list(c[1:]), v32), v32, c0_lo))
        print(f"/* constant term {float(c0_hi):.9g}f + {float(c0_lo):.9g}f */")
        report(f"erfc(a) e^(a^2) on [{lo}, {hi}], variable a - {float(F32(mid)):.9g}f", e, c, approx, ref(scaled, a32))


if __name__ == "__main__":
    fit_exp()
    fit_expm1()
    fit_log1p()
    fit_tanh()
    fit_erf()
    fit_erfc_pieces()
