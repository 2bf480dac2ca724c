/* vmath.h — internal: float32 exp, expm1, log, log1p, tanh, sigmoid, erf,
 * erfc and the compositions the activations need (softplus, gelu and its
 * gradient), as branch-free inline functions that the compiler vectorises
 * inside the elementwise loops (Note [Vector math]); float64 gelu, its
 * gradient and sigmoid on libm. */
#ifndef CG_CPU_VMATH_H
#define CG_CPU_VMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Note [Vector math]: libm's float functions are scalar calls, so a loop that
 * calls them cannot vectorise (tanhf on 8K floats took 5.6x PyTorch's time).
 * These versions reduce the argument, evaluate a polynomial (coefficients from
 * tools/fit_vmath.py: near-minimax on the relative error, rounded to float)
 * and rebuild the result with integer bit operations. Every special case —
 * NaN, ±inf, ±0, overflow, underflow, subnormal inputs and results — is a
 * select, never a branch or a call, so a loop over them compiles to AVX2 /
 * FMA code. tests/c/test_vmath.c compares each one with float64 libm over a
 * sweep of float32 inputs plus the edge cases. Maxima over all 2^32 inputs
 * (CG_VMATH_STEP=1): exp 1.01 ulp, expm1 1.45, log 0.93, log1p 1.44, tanh
 * 1.33, sigmoid 2.10, log(1 + e^x) 2.06, erf 2.20, erfc 2.71, gelu 3.39;
 * gelu' 2.18 (every 31st input; 2.75 without FMA), in ulps of the larger of
 * its two terms (they cancel at its root).
 * The float64 loops keep libm (gelu with its arguments' rounding corrected,
 * at the end of this file). */

/* always inlined: a call left in a loop body stops its vectorisation */
#if defined(__GNUC__)
#define CG_VM_INLINE static inline __attribute__((always_inline))
#else
#define CG_VM_INLINE static inline
#endif

#if defined(__FMA__)
#define CG_VM_FMA(a, b, c) fmaf((a), (b), (c))
#else
#define CG_VM_FMA(a, b, c) ((a) * (b) + (c))
#endif

/* lo with hi + lo = a * a exactly, for hi = a * a rounded (Dekker's split
 * when there is no fused multiply-add) */
CG_VM_INLINE float cg_vm_sq_lo(float a, float hi) {
#if defined(__FMA__)
    return fmaf(a, a, -hi);
#else
    const float c = 4097.0f * a, ah = c - (c - a), al = a - ah;
    return ((ah * ah - hi) + 2.0f * ah * al) + al * al;
#endif
}

CG_VM_INLINE uint32_t cg_vm_bits(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}
CG_VM_INLINE float cg_vm_float(uint32_t u) {
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* ln 2 = CG_VM_LN2_HI + CG_VM_LN2_LO; the high part has 9 significant bits,
 * so its product with an exponent below 2^14 is exact */
#define CG_VM_LN2_HI 0.693359375f
#define CG_VM_LN2_LO (-2.12194440e-4f)
#define CG_VM_LOG2E 1.44269502f
/* 1.5 * 2^23: x + shift rounds x to an integer held in the low mantissa bits */
#define CG_VM_SHIFT 12582912.0f

/* k = round(x / ln2) as a float and as an int, and r = x - k ln2 in [-ln2/2, ln2/2];
 * x must be finite with |x| < 2^21 or NaN (then k is garbage and r NaN). */
#define CG_VM_REDUCE_LN2(x, kf, k, r)                                 \
    float kf = CG_VM_FMA((x), CG_VM_LOG2E, CG_VM_SHIFT);              \
    const int32_t k = (int32_t)(cg_vm_bits(kf) - 0x4b400000u);        \
    kf -= CG_VM_SHIFT;                                                \
    float r = CG_VM_FMA(kf, -CG_VM_LN2_HI, (x));                      \
    r = CG_VM_FMA(kf, -CG_VM_LN2_LO, r)

/* 2^n for -126 <= n <= 127 */
CG_VM_INLINE float cg_vm_pow2i(int32_t n) { return cg_vm_float((uint32_t)(n + 127) << 23); }

/* e^r - 1 for |r| <= ln2/2 (a few tenths of an ulp) */
CG_VM_INLINE float cg_vm_expm1_core(float r) {
    float p = 0.000198241309f;
    p = CG_VM_FMA(p, r, 0.00139332446f);
    p = CG_VM_FMA(p, r, 0.00833341945f);
    p = CG_VM_FMA(p, r, 0.0416664816f);
    p = CG_VM_FMA(p, r, 0.166666657f);
    return CG_VM_FMA(r * r, CG_VM_FMA(p, r, 0.5f), r);
}

/* e^(x + xl) = (1 + t) s1 s2 with s1, s2 powers of two, for |xl| <= 2^-16 a
 * correction to x. Scaling by two factors lets results down to the subnormal
 * range round only once. x is clamped to [-110, 88.8]: m e^-110 still
 * underflows for |m| up to 2^8 (gelu's gradient multiplies by up to 6). */
typedef struct cg_vm_exp_parts {
    float t, s1, s2;
} cg_vm_exp_parts;
CG_VM_INLINE cg_vm_exp_parts cg_vm_exp_split(float x, float xl) {
    x = x > 88.8f ? 88.8f : x; /* NaN passes both clamps */
    x = x < -110.0f ? -110.0f : x;
    CG_VM_REDUCE_LN2(x, kf, k, r);
    r += xl;
    float p = 0.00138146151f;
    p = CG_VM_FMA(p, r, 0.00836871006f);
    p = CG_VM_FMA(p, r, 0.041668389f);
    p = CG_VM_FMA(p, r, 0.166665211f);
    p = CG_VM_FMA(p, r, 0.49999994f);
    const int32_t k1 = k / 2;
    return (cg_vm_exp_parts){CG_VM_FMA(r * r, p, r), cg_vm_pow2i(k1), cg_vm_pow2i(k - k1)};
}

/* m e^(x + xl), m of magnitude in [2^-60, 2^60] (at most 2^8 where the
 * product underflows), with the product formed in one fma; m = 1, xl = 0
 * gives e^x */
CG_VM_INLINE float cg_vm_expmf(float x, float xl, float m) {
    const cg_vm_exp_parts e = cg_vm_exp_split(x, xl);
    return (CG_VM_FMA(e.t, m, m) * e.s1) * e.s2;
}

CG_VM_INLINE float cg_vm_expf(float x) { return cg_vm_expmf(x, 0.0f, 1.0f); }

/* e^x - 1: 2^k (e^r - 1) + (2^k - 1), exact scaling for small k */
CG_VM_INLINE float cg_vm_expm1f(float x) {
    float xc = x > 88.8f ? 88.8f : x;
    xc = xc < -104.0f ? -104.0f : xc;
    CG_VM_REDUCE_LN2(xc, kf, k, r);
    (void)kf;
    const float q = cg_vm_expm1_core(r);
    const int32_t k1 = k / 2;
    const float s1 = cg_vm_pow2i(k1), s2 = cg_vm_pow2i(k - k1), s = s1 * s2;
    float y = CG_VM_FMA(s, q, s - 1.0f);
    y = k > 100 ? ((q + 1.0f) * s1) * s2 : y;
    return x == 0.0f ? x : y; /* keeps -0 */
}

/* log(x): x = 2^e m with m in [sqrt(1/2), sqrt(2)), log = e ln2 + log1p(m - 1) */
CG_VM_INLINE float cg_vm_logf(float x) {
    const uint32_t ux = cg_vm_bits(x);
    const int sub = ux < 0x00800000u; /* +0 and positive subnormals: scale by 2^23 first */
    const uint32_t u = cg_vm_bits(sub ? x * 8388608.0f : x);
    const uint32_t t = u + (0x3f800000u - 0x3f3504f3u); /* exponent of x / sqrt(1/2) in the top bits */
    const int32_t e = (int32_t)(t >> 23) - 127 - (sub ? 23 : 0);
    const float f = cg_vm_float((t & 0x007fffffu) + 0x3f3504f3u) - 1.0f;
    float q = -0.0763451234f;
    q = CG_VM_FMA(q, f, 0.127615988f);
    q = CG_VM_FMA(q, f, -0.13160187f);
    q = CG_VM_FMA(q, f, 0.142017558f);
    q = CG_VM_FMA(q, f, -0.166233569f);
    q = CG_VM_FMA(q, f, 0.200012267f);
    q = CG_VM_FMA(q, f, -0.250008225f);
    q = CG_VM_FMA(q, f, 0.333333313f);
    const float l = CG_VM_FMA(f * f, CG_VM_FMA(f, q, -0.5f), f);
    const float ef = (float)e;
    const float y = CG_VM_FMA(ef, CG_VM_LN2_HI, CG_VM_FMA(ef, CG_VM_LN2_LO, l));
    const float special = x == 0.0f ? -INFINITY : (x < 0.0f ? NAN : x); /* +inf and NaN pass */
    return ux - 1u < 0x7f7fffffu ? y : special;                         /* 0 < x < inf */
}

/* log(1 + x): log(w) for w = 1 + x rounded, plus the rounding error of w over w */
CG_VM_INLINE float cg_vm_log1pf(float x) {
    const float w = 1.0f + x;
    const float c = (x - (w - 1.0f)) / w;
    float y = cg_vm_logf(w) + c;
    y = x == -1.0f ? -INFINITY : y;
    y = x == INFINITY ? x : y;
    return x == 0.0f ? x : y; /* keeps -0 */
}

/* tanh: odd polynomial below 0.625, 1 - 2 / (e^(2|x|) + 1) above (1 for large |x|) */
CG_VM_INLINE float cg_vm_tanhf(float x) {
    const float a = fabsf(x), z = x * x;
    float p = -0.00570497615f;
    p = CG_VM_FMA(p, z, 0.0206390787f);
    p = CG_VM_FMA(p, z, -0.0537397116f);
    p = CG_VM_FMA(p, z, 0.133314416f);
    p = CG_VM_FMA(p, z, -0.333332807f);
    const float small = CG_VM_FMA(x * z, p, x);
    const float big = copysignf(1.0f - 2.0f / (cg_vm_expf(2.0f * a) + 1.0f), x);
    return a < 0.625f ? (x == 0.0f ? x : small) : big; /* keeps -0 */
}

/* 1 / (1 + e^-x), from e = e^-|x| so that nothing overflows; 1 + e is kept
 * as an exact pair d + dl, the reciprocal r corrected for dl, and for x < 0
 * the product e r formed from e's parts with one rounding */
CG_VM_INLINE float cg_vm_sigmoidf(float x) {
    const cg_vm_exp_parts p = cg_vm_exp_split(-fabsf(x), 0.0f);
    const float e = ((1.0f + p.t) * p.s1) * p.s2;
    const float d = 1.0f + e, dl = e - (d - 1.0f);
    float r = 1.0f / d;
    r = CG_VM_FMA(-r * r, dl, r);
    return x < 0.0f ? (CG_VM_FMA(p.t, r, r) * p.s1) * p.s2 : r; /* e r, rounded once */
}

/* log(1 + e^z) = max(z, 0) + log1p(e^-|z|) */
CG_VM_INLINE float cg_vm_log1pexpf(float z) {
    const float l = cg_vm_log1pf(cg_vm_expf(-fabsf(z)));
    return z > 0.0f ? z + l : l;
}

/* ---------------------------------------------------------------- erf family
 * erf(x) = x (2/sqrt(pi)) + x^3 P(x^2) for |x| < CG_VM_ERF_SPLIT, where
 * erf = erfc = 1/2; above it erfc(a) = e^(-a^2) H(a) with H a degree-9
 * polynomial in a - mid on five pieces of [split, 10.06] (erfc underflows to 0
 * beyond), and erf = 1 - erfc. e^(-a^2) is formed from the exact split
 * a^2 = hi + lo as e^-hi (1 - lo), so the rounding of a^2 (relative error
 * times a^2 in the exponent) costs nothing. */
#define CG_VM_ERF_SPLIT 0.4769f
#define CG_VM_ERFC_MAX 10.1f

CG_VM_INLINE float cg_vm_erf_small(float x) {
    const float z = x * x;
    float p = -0.000777928217f;
    p = CG_VM_FMA(p, z, 0.00520507572f);
    p = CG_VM_FMA(p, z, -0.0268640406f);
    p = CG_VM_FMA(p, z, 0.112837814f);
    p = CG_VM_FMA(p, z, -0.376126379f);
    /* 2/sqrt(pi) = 1.12837923f + -5.86353828e-08f */
    return CG_VM_FMA(x, 1.12837923f, CG_VM_FMA(x * z, p, x * -5.86353828e-08f));
}

/* H(a) = e^(a^2) erfc(a) for CG_VM_ERF_SPLIT <= a <= CG_VM_ERFC_MAX */
CG_VM_INLINE float cg_vm_piece(int i1, int i2, int i3, int i4, float c0, float c1, float c2, float c3, float c4) {
    float c = c0; /* a chain of two-way selects (a nested one is not if-converted) */
    c = i1 ? c1 : c;
    c = i2 ? c2 : c;
    c = i3 ? c3 : c;
    return i4 ? c4 : c;
}
CG_VM_INLINE float cg_vm_erfc_scaled(float a) {
    const int i1 = a >= 1.1f, i2 = a >= 2.0f, i3 = a >= 4.0f, i4 = a >= 6.0f;
#define CG_VM_PIECE(c0, c1, c2, c3, c4) cg_vm_piece(i1, i2, i3, i4, (c0), (c1), (c2), (c3), (c4))
    const float v = a - CG_VM_PIECE(0.78845f, 1.55f, 3.0f, 5.0f, 8.03f);
    float h = CG_VM_PIECE(-0.000835315324f, -6.47619381e-05f, -1.40072143e-06f, -2.47974512e-08f, -3.91686211e-10f);
    h = CG_VM_FMA(h, v, CG_VM_PIECE(0.00220850646f, 0.000203118529f, 5.93282994e-06f, 1.45520403e-07f, 3.38406325e-09f));
    h = CG_VM_FMA(h, v, CG_VM_PIECE(-0.00534834294f, -0.000578459527f, -2.08568254e-05f, -7.79244488e-07f, -2.49613379e-08f));
    h = CG_VM_FMA(h, v, CG_VM_PIECE(0.0127507281f, 0.00166755996f, 8.2849343e-05f, 4.43526278e-06f, 2.12008473e-07f));
    h = CG_VM_FMA(h, v, CG_VM_PIECE(-0.0287811048f, -0.00461337203f, -0.000324162189f, -2.49543336e-05f, -1.80391055e-06f));
    h = CG_VM_FMA(h, v, CG_VM_PIECE(0.0609637126f, 0.0121589107f, 0.0012232929f, 0.000138105679f, 1.51267441e-05f));
    h = CG_VM_FMA(h, v, CG_VM_PIECE(-0.120019451f, -0.0303795114f, -0.00447942968f, -0.000752896769f, -0.000125957071f));
    h = CG_VM_FMA(h, v, CG_VM_PIECE(0.216556326f, 0.0714057982f, 0.0158843398f, 0.00404068828f, 0.0010416836f));
    h = CG_VM_FMA(h, v, CG_VM_PIECE(-0.350773007f, -0.156248271f, -0.0543722585f, -0.0213327892f, -0.00855366513f));
    h = CG_VM_FMA(h, v, CG_VM_PIECE(0.493123323f, 0.313590616f, 0.179001153f, 0.110704638f, 0.0697276145f));
#undef CG_VM_PIECE
    return h;
}

/* m erfc(a) for CG_VM_ERF_SPLIT <= a <= CG_VM_ERFC_MAX, given a^2 = sq_hi + sq_lo
 * exactly (|m| in [2^-40, 2^40]) */
CG_VM_INLINE float cg_vm_erfc_big(float a, float sq_hi, float sq_lo, float m) {
    return cg_vm_expmf(-sq_hi, -sq_lo, cg_vm_erfc_scaled(a) * m);
}

CG_VM_INLINE float cg_vm_erfc_of_abs(float a) {
    const float ac = a > CG_VM_ERFC_MAX ? CG_VM_ERFC_MAX : a;
    const float hi = ac * ac;
    return cg_vm_erfc_big(ac, hi, cg_vm_sq_lo(ac, hi), 1.0f);
}

CG_VM_INLINE float cg_vm_erff(float x) {
    const float a = fabsf(x);
    const float y = a < CG_VM_ERF_SPLIT ? cg_vm_erf_small(x) : copysignf(1.0f - cg_vm_erfc_of_abs(a), x);
    return x == 0.0f ? x : y; /* keeps -0 */
}

CG_VM_INLINE float cg_vm_erfcf(float x) {
    const float a = fabsf(x), ec = cg_vm_erfc_of_abs(a);
    return a < CG_VM_ERF_SPLIT ? 1.0f - cg_vm_erf_small(x) : (x < 0.0f ? 2.0f - ec : ec);
}

/* gelu(x) = x/2 erfc(-x/sqrt2) (exact form). The square (x/sqrt2)^2 = x^2/2 is
 * split from x itself, so the rounding of x/sqrt2 only reaches H; for x < 0
 * the factor x/2 enters before the last rounding (erfc may be subnormal
 * where the product is not). Between the erfc clamp (x = -14.28) and
 * CG_VM_GELU_UNDERFLOW the clamped value is the smallest subnormal, the
 * correctly rounded result there; from CG_VM_GELU_UNDERFLOW down, -inf
 * included (the limit), gelu is -0. */
#define CG_VM_GELU_UNDERFLOW (-0x1.cb64eap+3f) /* -14.3560686: the first x with |gelu(x)| <= 2^-150 */
CG_VM_INLINE float cg_vm_geluf(float x) {
    const float a = fabsf(x) * 0.707106769f;
    const float xc = a > CG_VM_ERFC_MAX ? copysignf(CG_VM_ERFC_MAX * 1.41421354f, x) : x;
    const float ac = a > CG_VM_ERFC_MAX ? CG_VM_ERFC_MAX : a;
    const float sq = xc * xc, hx = 0.5f * x;
    /* x/2 erfc(|x|/sqrt2) for x < 0, erfc(|x|/sqrt2) otherwise */
    const float ec = cg_vm_erfc_big(ac, 0.5f * sq, 0.5f * cg_vm_sq_lo(xc, sq), x < 0.0f ? 0.5f * xc : 1.0f);
    const float big = x < 0.0f ? ec : hx * (2.0f - ec);
    const float small = hx * (1.0f + cg_vm_erf_small(x * 0.707106769f));
    const float y = a < CG_VM_ERF_SPLIT ? small : big;
    return x <= CG_VM_GELU_UNDERFLOW ? -0.0f : y;
}

/* gelu'(x) = Phi(x) + x phi(x), phi(x) = e^(-x^2/2) / sqrt(2 pi). For |x| at
 * or above sqrt2 CG_VM_ERF_SPLIT both terms carry e^(-x^2/2) = e^(-a^2),
 * a = |x|/sqrt2 (erfc(a) = e^(-a^2) H(a)):
 *   gelu'(x) = e^(-a^2) (x/sqrt(2 pi) + H(a)/2)        for x < 0,
 *            = 1 + e^(-a^2) (x/sqrt(2 pi) - H(a)/2)    for x > 0,
 * one exponential of the exactly split square (as in cg_vm_geluf), so
 * neither the rounding of x^2 (a relative error of x^2/2 ulps) nor a
 * subnormal e^(-x^2/2) reaches the result. At a = CG_VM_GELU_GRAD_MAX (H is
 * accurate to 1e-7 there, a little past its fitted range) the product has
 * underflowed: beyond it gelu' is -0 for x < 0, -inf included (the limit),
 * and 1 for x > 0, +inf included. Below the split: (1 + erf(x/sqrt2))/2 +
 * x phi(x). */
#define CG_VM_GELU_GRAD_MAX 10.3f
#define CG_VM_INV_SQRT_2PI 0.398942292f
CG_VM_INLINE float cg_vm_gelu_gradf(float x) {
    const float a = fabsf(x) * 0.707106769f;
    const float xc = a > CG_VM_GELU_GRAD_MAX ? copysignf(CG_VM_GELU_GRAD_MAX * 1.41421354f, x) : x;
    const float ac = a > CG_VM_GELU_GRAD_MAX ? CG_VM_GELU_GRAD_MAX : a;
    const float sq = xc * xc, h = 0.5f * cg_vm_erfc_scaled(ac);
    const float m = CG_VM_FMA(xc, CG_VM_INV_SQRT_2PI, x < 0.0f ? h : -h);
    const float e = cg_vm_expmf(-0.5f * sq, -0.5f * cg_vm_sq_lo(xc, sq), m);
    const float big = x < 0.0f ? e : 1.0f + e;
    const float phi = CG_VM_INV_SQRT_2PI * cg_vm_expf(-0.5f * (x * x));
    const float small = CG_VM_FMA(0.5f, cg_vm_erf_small(x * 0.707106769f), 0.5f) + x * phi;
    return a < CG_VM_ERF_SPLIT ? small : big;
}

/* ---------------------------------------------------------------- float64 gelu
 * libm's erfc and exp with the rounding of their arguments corrected: for
 * x << 0 the relative error of erfc(a) is 2a^2 times that of a (a thousand
 * ulps of gelu at x = -35 from a = -x/sqrt2 rounded), and that of
 * e^(-x^2/2) x^2/2 times that of x^2. a + d = -x/sqrt2 exactly (d from the
 * product's rounding and the constant's), erfc(a + d) = erfc(a) (1 - d r(a))
 * with r(a) = 2 e^(-a^2) / (sqrt(pi) erfc(a)) = 2a + 1/a + O(a^-3), applied
 * from a = 1 (below it the whole correction is under an ulp); x^2 = hi + lo
 * exactly, e^(-x^2/2) = e^(-hi/2) (1 - lo/2). Beyond |x| = 40 gelu is x or -0
 * (-inf included: the limit; it underflows from x = -38.58) and gelu' is 1
 * or 0. Subnormal results (x below -37.6) keep the error of erfc's and exp's
 * own underflow: a few ulps of 2^-1074, and gelu is -0 from x = -38.53. */
#define CG_VM_SQRT1_2_HI 0.70710678118654757       /* sqrt(1/2) rounded to double */
#define CG_VM_SQRT1_2_LO (-4.8336466567264567e-17) /* sqrt(1/2) - CG_VM_SQRT1_2_HI */
#define CG_VM_INV_SQRT_2PI_D 0.39894228040143267794

/* lo with hi + lo = a b exactly, for hi = a b rounded (Dekker's product without fma) */
CG_VM_INLINE double cg_vm_mul_lo(double a, double b, double hi) {
#if defined(__FMA__)
    return fma(a, b, -hi);
#else
    const double ca = 134217729.0 * a, ah = ca - (ca - a), al = a - ah;
    const double cb = 134217729.0 * b, bh = cb - (cb - b), bl = b - bh;
    return ((ah * bh - hi) + ah * bl + al * bh) + al * bl;
#endif
}

/* erfc(-x/sqrt2) for |x| <= 40 */
CG_VM_INLINE double cg_vm_erfc_neg_scaled(double x) {
    const double a = -x * CG_VM_SQRT1_2_HI;
    const double d = cg_vm_mul_lo(-x, CG_VM_SQRT1_2_HI, a) - x * CG_VM_SQRT1_2_LO;
    const double e = erfc(a);
    return a > 1.0 ? e * (1.0 - d * (2.0 * a + 1.0 / a)) : e;
}

/* float64 sigmoid from e = e^-|x| (1 / (1 + e^-x) is 0 from x = -709.8, where e^-x
 * overflows and sigmoid is still a subnormal) */
CG_VM_INLINE double cg_vm_sigmoid_d(double x) {
    const double e = exp(-fabs(x));
    return x < 0 ? e / (1.0 + e) : 1.0 / (1.0 + e);
}

CG_VM_INLINE double cg_vm_clamp40(double x) { return x > 40.0 ? 40.0 : (x < -40.0 ? -40.0 : x); }

CG_VM_INLINE double cg_vm_gelu_d(double x) {
    const double y = 0.5 * x * cg_vm_erfc_neg_scaled(cg_vm_clamp40(x));
    return x < -40.0 ? -0.0 : y;
}

CG_VM_INLINE double cg_vm_gelu_grad_d(double x) {
    const double xc = cg_vm_clamp40(x);
    const double hi = xc * xc, lo = cg_vm_mul_lo(xc, xc, hi);
    const double xphi = (xc * (exp(-0.5 * hi) * (1.0 - 0.5 * lo))) * CG_VM_INV_SQRT_2PI_D; /* x first: */
    return 0.5 * cg_vm_erfc_neg_scaled(xc) + xphi; /* e^(-x^2/2) / sqrt(2 pi) underflows before x phi(x) */
}

#endif
