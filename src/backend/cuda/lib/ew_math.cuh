/* ew_math.cuh — internal to the CUDA kernel library: the device versions of
 * the scalar math that the op table's loop expressions call
 * (src/ops/elementwise_ops.py), under the CPU's names so that the generated
 * kernels (elementwise.gen.cu) and the hand rows' kernels
 * (elementwise_hand.cu) use the table's expressions verbatim:
 *  - the half storage types and their conversions, bit for bit those of
 *    src/core/half.h (round to nearest even, NaN made quiet keeping the sign
 *    and top payload bits; __host__ __device__ so a host program can compare
 *    them with the CPU's over every bit pattern);
 *  - the loads and stores of src/backend/cpu/loops.h (CG_ID, CG_LD_*, CG_ST_*);
 *  - src/backend/cpu/vmath.h's cg_vm_* on CUDA's math (expf, logf, ...),
 *    float staying float and double double; gelu and its gradient (no CUDA
 *    equivalent) ported from vmath.h with fmaf, float and float64 forms;
 *  - src/backend/cpu/elementwise_kernels.h and special_kernels.h ported as
 *    __device__ functions (integer division with the zero-divisor flag, floor
 *    division, shifts, logaddexp, erfinv, igamma, mish, activation shapes).
 * The integer kernels that flag take an int * (a device flag) where the CPU's
 * take the loop's params. */
#ifndef CGCU_EW_MATH_CUH
#define CGCU_EW_MATH_CUH

#include <math.h>
#include <stdint.h>
#include <string.h>

#define CGCU_HD static __host__ __device__ __forceinline__
#define CGCU_DEV static __device__ __forceinline__

/* ---------------------------------------------------------------- half storage and conversions (src/core/half.h) */
struct cgcu_f16 {
    uint16_t bits;
};
struct cgcu_bf16 {
    uint16_t bits;
};

CGCU_HD uint32_t cgcu_f32_bits(float f) {
#ifdef __CUDA_ARCH__
    return __float_as_uint(f);
#else
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
#endif
}
CGCU_HD float cgcu_bits_f32(uint32_t u) {
#ifdef __CUDA_ARCH__
    return __uint_as_float(u);
#else
    float f;
    memcpy(&f, &u, 4);
    return f;
#endif
}

/* exact; a NaN made quiet with its sign and payload kept */
CGCU_HD float cgcu_f16_to_f32(cgcu_f16 h) {
    const uint32_t b = h.bits;
    const uint32_t sign = (b & 0x8000u) << 16, ab = b & 0x7fffu, em = ab << 13;
    /* subnormal or zero: man * 2^-24, exact in float */
    const uint32_t sub = cgcu_f32_bits((float)(int32_t)(b & 0x3ffu) * 5.9604644775390625e-8f);
    const uint32_t normal = em + (112u << 23); /* rebias the exponent 15 -> 127 */
    const uint32_t special = em | 0x7f800000u | (ab > 0x7c00u ? 0x400000u : 0u);
    uint32_t r = ab < 0x400u ? sub : normal;
    r = ab >= 0x7c00u ? special : r;
    return cgcu_bits_f32(sign | r);
}

/* round to nearest even, overflow to inf, a NaN made quiet keeping its sign and top 10 payload bits */
CGCU_HD cgcu_f16 cgcu_f32_to_f16(float f) {
    const uint32_t x = cgcu_f32_bits(f);
    const uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
    const uint32_t t = ax - (112u << 23);
    uint32_t normal = (t + 0xfffu + ((t >> 13) & 1u)) >> 13;
    normal = (int32_t)normal > 0x7c00 ? 0x7c00u : normal;
    /* below 2^-14: adding 0.5f rounds |f| to a multiple of 2^-24 (nearest even) */
    const uint32_t sub = cgcu_f32_bits(cgcu_bits_f32(ax) + 0.5f) - 0x3f000000u;
    const uint32_t nan = 0x7e00u | ((ax >> 13) & 0x3ffu);
    uint32_t r = (int32_t)ax < 0x38800000 ? sub : normal;
    r = (int32_t)ax > 0x7f800000 ? nan : r;
    cgcu_f16 o;
    o.bits = (uint16_t)(sign | r);
    return o;
}

CGCU_HD float cgcu_bf16_to_f32(cgcu_bf16 h) { return cgcu_bits_f32((uint32_t)h.bits << 16); }

/* round to nearest even; a NaN made quiet (sign and top payload bits kept) */
CGCU_HD cgcu_bf16 cgcu_f32_to_bf16(float f) {
    const uint32_t x = cgcu_f32_bits(f);
    const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16, nan = (x >> 16) | 0x40u;
    cgcu_bf16 r;
    r.bits = (uint16_t)((int32_t)(x & 0x7fffffffu) > 0x7f800000 ? nan : rounded);
    return r;
}

/* ---------------------------------------------------------------- loads and stores (loops.h) */
#define CG_ID(x) (x)
#define CG_LD_F16(x) cgcu_f16_to_f32(x)
#define CG_ST_F16(x) cgcu_f32_to_f16(x)
#define CG_LD_BF16(x) cgcu_bf16_to_f32(x)
#define CG_ST_BF16(x) cgcu_f32_to_bf16(x)
#define CG_LD_BOOL(x) ((x) != 0)
#define CG_ST_BOOL(x) ((uint8_t)((x) != 0))

/* ---------------------------------------------------------------- op constants (src/core/core_internal.h) */
#ifndef CG_SELU_ALPHA
#define CG_SELU_ALPHA 1.6732632423543772848170429916717
#define CG_SELU_SCALE 1.0507009873554804934193349852946
#define CG_SQRT_2_PI 0.79788456080286535588 /* sqrt(2/pi): gelu's tanh approximation */
#define CG_GELU_C 0.044715
#endif

/* ---------------------------------------------------------------- vmath.h on CUDA's math */
CGCU_DEV float cg_vm_expf(float x) { return expf(x); }
CGCU_DEV float cg_vm_expm1f(float x) { return expm1f(x); }
CGCU_DEV float cg_vm_logf(float x) { return logf(x); }
CGCU_DEV float cg_vm_log1pf(float x) { return log1pf(x); }
CGCU_DEV float cg_vm_tanhf(float x) { return tanhf(x); }
CGCU_DEV float cg_vm_erff(float x) { return erff(x); }
CGCU_DEV float cg_vm_erfcf(float x) { return erfcf(x); }
/* 1 / (1 + e^-x) from e = e^-|x| (nothing overflows), as cg_vm_sigmoid_d */
CGCU_DEV float cg_vm_sigmoidf(float x) {
    const float e = expf(-fabsf(x));
    return x < 0.0f ? e / (1.0f + e) : 1.0f / (1.0f + e);
}
/* log(1 + e^z) = max(z, 0) + log1p(e^-|z|) */
CGCU_DEV float cg_vm_log1pexpf(float z) {
    const float l = log1pf(expf(-fabsf(z)));
    return z > 0.0f ? z + l : l;
}

/* float64 gelu and its gradient: vmath.h's, libm's erfc / exp with the rounding of their arguments corrected */
#define CG_VM_SQRT1_2_HI 0.70710678118654757       /* sqrt(1/2) rounded to double */
#define CG_VM_SQRT1_2_LO (-4.8336466567264567e-17) /* sqrt(1/2) - CG_VM_SQRT1_2_HI */
#define CG_VM_INV_SQRT_2PI_D 0.39894228040143267794
CGCU_DEV double cg_vm_mul_lo(double a, double b, double hi) { return fma(a, b, -hi); }
CGCU_DEV double cg_vm_erfc_neg_scaled(double x) {
    const double a = -x * CG_VM_SQRT1_2_HI;
    const double d = cg_vm_mul_lo(-x, CG_VM_SQRT1_2_HI, a) - x * CG_VM_SQRT1_2_LO;
    const double e = erfc(a);
    return a > 1.0 ? e * (1.0 - d * (2.0 * a + 1.0 / a)) : e;
}
CGCU_DEV double cg_vm_sigmoid_d(double x) {
    const double e = exp(-fabs(x));
    return x < 0 ? e / (1.0 + e) : 1.0 / (1.0 + e);
}
CGCU_DEV double cg_vm_clamp40(double x) { return x > 40.0 ? 40.0 : (x < -40.0 ? -40.0 : x); }
CGCU_DEV double cg_vm_gelu_d(double x) {
    const double y = 0.5 * x * cg_vm_erfc_neg_scaled(cg_vm_clamp40(x));
    return x < -40.0 ? -0.0 : y;
}
CGCU_DEV double cg_vm_gelu_grad_d(double x) {
    const double xc = cg_vm_clamp40(x);
    const double hi = xc * xc, lo = cg_vm_mul_lo(xc, xc, hi);
    const double xphi = (xc * (exp(-0.5 * hi) * (1.0 - 0.5 * lo))) * CG_VM_INV_SQRT_2PI_D;
    return 0.5 * cg_vm_erfc_neg_scaled(xc) + xphi;
}
/* float gelu and gelu': vmath.h's float forms (exact erfc-based, a few ulps), ported with fused
 * multiply-adds: e^x rebuilt from a reduced argument and a polynomial, erfc(a) = e^(-a^2) H(a) with the
 * square split exactly. The same coefficients as the CPU's (tools/fit_vmath.py). */
#define CGCU_VM_LN2_HI 0.693359375f
#define CGCU_VM_LN2_LO (-2.12194440e-4f)
#define CGCU_VM_LOG2E 1.44269502f
#define CGCU_VM_SHIFT 12582912.0f
#define CGCU_VM_ERF_SPLIT 0.4769f
#define CGCU_VM_ERFC_MAX 10.1f
#define CGCU_VM_GELU_UNDERFLOW (-0x1.cb64eap+3f)
#define CGCU_VM_GELU_GRAD_MAX 10.3f
#define CGCU_VM_INV_SQRT_2PI 0.398942292f
CGCU_DEV float cgcu_vm_sq_lo(float a, float hi) { return fmaf(a, a, -hi); }
CGCU_DEV float cgcu_vm_pow2i(int32_t n) { return __uint_as_float((uint32_t)(n + 127) << 23); }
struct cgcu_vm_exp_parts {
    float t, s1, s2;
};
CGCU_DEV cgcu_vm_exp_parts cgcu_vm_exp_split(float x, float xl) {
    x = x > 88.8f ? 88.8f : x;
    x = x < -110.0f ? -110.0f : x;
    float kf = fmaf(x, CGCU_VM_LOG2E, CGCU_VM_SHIFT);
    const int32_t k = (int32_t)(__float_as_uint(kf) - 0x4b400000u);
    kf -= CGCU_VM_SHIFT;
    float r = fmaf(kf, -CGCU_VM_LN2_HI, x);
    r = fmaf(kf, -CGCU_VM_LN2_LO, r);
    r += xl;
    float p = 0.00138146151f;
    p = fmaf(p, r, 0.00836871006f);
    p = fmaf(p, r, 0.041668389f);
    p = fmaf(p, r, 0.166665211f);
    p = fmaf(p, r, 0.49999994f);
    const int32_t k1 = k / 2;
    cgcu_vm_exp_parts e;
    e.t = fmaf(r * r, p, r);
    e.s1 = cgcu_vm_pow2i(k1);
    e.s2 = cgcu_vm_pow2i(k - k1);
    return e;
}
CGCU_DEV float cgcu_vm_expmf(float x, float xl, float m) {
    const cgcu_vm_exp_parts e = cgcu_vm_exp_split(x, xl);
    return (fmaf(e.t, m, m) * e.s1) * e.s2;
}
CGCU_DEV float cgcu_vm_erf_small(float x) {
    const float z = x * x;
    float p = -0.000777928217f;
    p = fmaf(p, z, 0.00520507572f);
    p = fmaf(p, z, -0.0268640406f);
    p = fmaf(p, z, 0.112837814f);
    p = fmaf(p, z, -0.376126379f);
    return fmaf(x, 1.12837923f, fmaf(x * z, p, x * -5.86353828e-08f));
}
CGCU_DEV float cgcu_vm_piece(int i1, int i2, int i3, int i4, float c0, float c1, float c2, float c3, float c4) {
    float c = c0;
    c = i1 ? c1 : c;
    c = i2 ? c2 : c;
    c = i3 ? c3 : c;
    return i4 ? c4 : c;
}
/* H(a) = e^(a^2) erfc(a) for CGCU_VM_ERF_SPLIT <= a <= CGCU_VM_ERFC_MAX */
CGCU_DEV float cgcu_vm_erfc_scaled(float a) {
    const int i1 = a >= 1.1f, i2 = a >= 2.0f, i3 = a >= 4.0f, i4 = a >= 6.0f;
#define CGCU_VM_PIECE(c0, c1, c2, c3, c4) cgcu_vm_piece(i1, i2, i3, i4, (c0), (c1), (c2), (c3), (c4))
    const float v = a - CGCU_VM_PIECE(0.78845f, 1.55f, 3.0f, 5.0f, 8.03f);
    float h = CGCU_VM_PIECE(-0.000835315324f, -6.47619381e-05f, -1.40072143e-06f, -2.47974512e-08f, -3.91686211e-10f);
    h = fmaf(h, v, CGCU_VM_PIECE(0.00220850646f, 0.000203118529f, 5.93282994e-06f, 1.45520403e-07f, 3.38406325e-09f));
    h = fmaf(h, v, CGCU_VM_PIECE(-0.00534834294f, -0.000578459527f, -2.08568254e-05f, -7.79244488e-07f, -2.49613379e-08f));
    h = fmaf(h, v, CGCU_VM_PIECE(0.0127507281f, 0.00166755996f, 8.2849343e-05f, 4.43526278e-06f, 2.12008473e-07f));
    h = fmaf(h, v, CGCU_VM_PIECE(-0.0287811048f, -0.00461337203f, -0.000324162189f, -2.49543336e-05f, -1.80391055e-06f));
    h = fmaf(h, v, CGCU_VM_PIECE(0.0609637126f, 0.0121589107f, 0.0012232929f, 0.000138105679f, 1.51267441e-05f));
    h = fmaf(h, v, CGCU_VM_PIECE(-0.120019451f, -0.0303795114f, -0.00447942968f, -0.000752896769f, -0.000125957071f));
    h = fmaf(h, v, CGCU_VM_PIECE(0.216556326f, 0.0714057982f, 0.0158843398f, 0.00404068828f, 0.0010416836f));
    h = fmaf(h, v, CGCU_VM_PIECE(-0.350773007f, -0.156248271f, -0.0543722585f, -0.0213327892f, -0.00855366513f));
    h = fmaf(h, v, CGCU_VM_PIECE(0.493123323f, 0.313590616f, 0.179001153f, 0.110704638f, 0.0697276145f));
#undef CGCU_VM_PIECE
    return h;
}
CGCU_DEV float cgcu_vm_erfc_big(float a, float sq_hi, float sq_lo, float m) {
    return cgcu_vm_expmf(-sq_hi, -sq_lo, cgcu_vm_erfc_scaled(a) * m);
}
CGCU_DEV float cg_vm_geluf(float x) {
    const float a = fabsf(x) * 0.707106769f;
    const float xc = a > CGCU_VM_ERFC_MAX ? copysignf(CGCU_VM_ERFC_MAX * 1.41421354f, x) : x;
    const float ac = a > CGCU_VM_ERFC_MAX ? CGCU_VM_ERFC_MAX : a;
    const float sq = xc * xc, hx = 0.5f * x;
    const float ec = cgcu_vm_erfc_big(ac, 0.5f * sq, 0.5f * cgcu_vm_sq_lo(xc, sq), x < 0.0f ? 0.5f * xc : 1.0f);
    const float big = x < 0.0f ? ec : hx * (2.0f - ec);
    const float small = hx * (1.0f + cgcu_vm_erf_small(x * 0.707106769f));
    const float y = a < CGCU_VM_ERF_SPLIT ? small : big;
    return x <= CGCU_VM_GELU_UNDERFLOW ? -0.0f : y;
}
CGCU_DEV float cg_vm_gelu_gradf(float x) {
    const float a = fabsf(x) * 0.707106769f;
    const float xc = a > CGCU_VM_GELU_GRAD_MAX ? copysignf(CGCU_VM_GELU_GRAD_MAX * 1.41421354f, x) : x;
    const float ac = a > CGCU_VM_GELU_GRAD_MAX ? CGCU_VM_GELU_GRAD_MAX : a;
    const float sq = xc * xc, h = 0.5f * cgcu_vm_erfc_scaled(ac);
    const float m = fmaf(xc, CGCU_VM_INV_SQRT_2PI, x < 0.0f ? h : -h);
    const float e = cgcu_vm_expmf(-0.5f * sq, -0.5f * cgcu_vm_sq_lo(xc, sq), m);
    const float big = x < 0.0f ? e : 1.0f + e;
    const float phi = CGCU_VM_INV_SQRT_2PI * cgcu_vm_expmf(-0.5f * (x * x), 0.0f, 1.0f);
    const float small = fmaf(0.5f, cgcu_vm_erf_small(x * 0.707106769f), 0.5f) + x * phi;
    return a < CGCU_VM_ERF_SPLIT ? small : big;
}

/* ---------------------------------------------------------------- special_kernels.h */
CGCU_DEV double cg_lgamma_d(double x) { return lgamma(x); } /* CUDA's lgamma keeps no global sign */

CGCU_DEV double cg_log1pmx_d(double t) {
    if (!(fabs(t) < 0.5)) return log1p(t) - t;
    double term = t, s = 0;
    for (int n = 2; n < 200; n++) {
        term *= -t;
        double d = term / n;
        s += d;
        if (fabs(d) <= 1e-17 * fabs(s)) break;
    }
    return s;
}

#define CG_IGAMMA_TEMME 1e5
#define CG_IGAMMA_MAXITER 100000

CGCU_DEV double cg_igamma_temme_d(double a, double x, bool upper) {
    double t = (x - a) / a; /* lambda - 1 */
    double eta2 = -2 * cg_log1pmx_d(t), eta = copysign(sqrt(eta2), t);
    double c0, c1;
    if (fabs(eta) < 0.01) {
        c0 = -1.0 / 3 + eta * (1.0 / 12 + eta * (-2.0 / 135 + eta * (1.0 / 864 + eta * (1.0 / 2835))));
        c1 = -1.0 / 540 + eta * (-1.0 / 288 + eta * (1.0 / 378 + eta * (-77.0 / 77760)));
    } else {
        c0 = 1 / t - 1 / eta;
        c1 = 1 / (eta * eta * eta) - 1 / (t * t * t) - 1 / (t * t) - 1 / (12 * t);
    }
    double y = eta * sqrt(a / 2);
    double r = exp(a * cg_log1pmx_d(t)) / sqrt(2 * 3.14159265358979323846 * a) * (c0 + c1 / a);
    return upper ? 0.5 * erfc(y) + r : 0.5 * erfc(-y) - r;
}

/* Note [Incomplete gamma] (special_kernels.h): PyTorch's special values, then Temme / series / fraction */
static __device__ __noinline__ double cg_igamma_d(double a, double x, bool upper) {
    double lo = upper ? 1 : 0, hi = 1 - lo;
    if (a < 0 || x < 0) return NAN;
    if (a == 0) return x > 0 ? hi : NAN;
    if (x == 0) return lo;
    if (isinf(a)) return isinf(x) ? NAN : lo;
    if (isinf(x)) return hi;
    if (isnan(a) || isnan(x)) return NAN;
    if (a > CG_IGAMMA_TEMME) return cg_igamma_temme_d(a, x, upper);
    double lgam = cg_lgamma_d(a);
    if (x < a + 1) {
        double ap = a, d = 1 / a, sum = d;
        for (int i = 0; i < CG_IGAMMA_MAXITER; i++) {
            ap += 1;
            d *= x / ap;
            sum += d;
            if (fabs(d) <= fabs(sum) * 1e-17) break;
        }
        double p = exp(a * log(x) - x - lgam) * sum;
        return upper ? 1 - p : p;
    }
    const double tiny = 1e-300;
    double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
    for (int i = 1; i < CG_IGAMMA_MAXITER; i++) {
        double an = -i * (i - a);
        b += 2;
        d = an * d + b;
        if (fabs(d) < tiny) d = tiny;
        c = b + an / c;
        if (fabs(c) < tiny) c = tiny;
        d = 1 / d;
        double delta = d * c;
        h *= delta;
        if (fabs(delta - 1) <= 4e-17) break;
    }
    double q = exp(a * log(x) - x - lgam) * h;
    return upper ? q : 1 - q;
}

/* ---------------------------------------------------------------- elementwise_kernels.h
 * Note [Integer division by zero]: store 0 and raise the flag (a device int; every writer writes 1). */
CGCU_DEV int64_t cg_zero_divisor(int *flag) {
    *(volatile int *)flag = 1;
    return 0;
}
CGCU_DEV int64_t cg_ifloordiv(int64_t a, int64_t b, int *flag) {
    if (b == 0) return cg_zero_divisor(flag);
    if (b == -1) return (int64_t)(0 - (uint64_t)a);
    int64_t q = a / b, r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
}
CGCU_DEV int64_t cg_iremainder(int64_t a, int64_t b, int *flag) {
    if (b == 0) return cg_zero_divisor(flag);
    if (b == -1) return 0;
    int64_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
CGCU_DEV int64_t cg_ifmod(int64_t a, int64_t b, int *flag) {
    if (b == 0) return cg_zero_divisor(flag);
    if (b == -1) return 0;
    return a % b;
}
/* PyTorch's powi: negative exponents give 0 except for bases 1 and -1 */
CGCU_DEV int64_t cg_ipow(int64_t a, int64_t b) {
    if (b < 0) {
        if (a == 1) return 1;
        if (a == -1) return (b & 1) ? -1 : 1;
        return 0;
    }
    uint64_t r = 1, base = (uint64_t)a;
    for (uint64_t e = (uint64_t)b; e; e >>= 1) {
        if (e & 1) r *= base;
        base *= base;
    }
    return (int64_t)r;
}

/* floor division as PyTorch computes it; b == 0 gives the IEEE a / b */
#define CG_FLOORDIV_FN(NAME, T, FMOD, FLOOR, COPYSIGN)                  \
    CGCU_DEV T NAME(T a, T b) {                                         \
        if (b == 0) return a / b;                                       \
        T mod = FMOD(a, b);                                             \
        T div = (a - mod) / b;                                          \
        if (mod != 0 && ((b < 0) != (mod < 0))) div -= (T)1;            \
        if (div == 0) return COPYSIGN((T)0, a / b);                     \
        T fl = FLOOR(div);                                              \
        return div - fl > (T)0.5 ? fl + (T)1 : fl;                      \
    }
CG_FLOORDIV_FN(cg_floordiv_f, float, fmodf, floorf, copysignf)
CG_FLOORDIV_FN(cg_floordiv_d, double, fmod, floor, copysign)

/* Python %: the result takes the divisor's sign */
#define CG_REMAINDER_FN(NAME, T, FMOD)                                  \
    CGCU_DEV T NAME(T a, T b) {                                         \
        T mod = FMOD(a, b);                                             \
        return (mod != 0 && ((b < 0) != (mod < 0))) ? mod + b : mod;    \
    }
CG_REMAINDER_FN(cg_remainder_f, float, fmodf)
CG_REMAINDER_FN(cg_remainder_d, double, fmod)

#define CG_LOGADDEXP_FN(NAME, T, FABS, LOG1P, EXP)                      \
    CGCU_DEV T NAME(T a, T b) {                                         \
        if (isinf(a) && a == b) return a;                               \
        T m = a < b ? b : a;                                            \
        return m + LOG1P(EXP(-FABS(a - b)));                            \
    }
CG_LOGADDEXP_FN(cg_logaddexp_f, float, fabsf, log1pf, expf)
CG_LOGADDEXP_FN(cg_logaddexp_d, double, fabs, log1p, exp)
#define CG_LOGADDEXP2_FN(NAME, T, FABS, LOG1P, EXP2)                    \
    CGCU_DEV T NAME(T a, T b) {                                         \
        if (isinf(a) && a == b) return a;                               \
        T m = a < b ? b : a;                                            \
        return m + LOG1P(EXP2(-FABS(a - b))) * (T)1.4426950408889634;   \
    }
CG_LOGADDEXP2_FN(cg_logaddexp2_f, float, fabsf, log1pf, exp2f)
CG_LOGADDEXP2_FN(cg_logaddexp2_d, double, fabs, log1p, exp2)

/* shifts without UB: an amount < 0 or >= the width gives 0 for <<, the sign fill (or 0) for >> */
CGCU_DEV int64_t cg_shl(int64_t a, int64_t b, int bits) {
    if (b < 0 || b >= bits) return 0;
    return (int64_t)((uint64_t)a << b);
}
CGCU_DEV int64_t cg_shr(int64_t a, int64_t b, int bits, int is_signed) {
    int max_shift = bits - is_signed;
    if (b < 0 || b >= max_shift) return a >> max_shift;
    return a >> b;
}
#define CG_SHL_EXPR(bits, sgn) cg_shl(a, b, bits)
#define CG_SHR_EXPR(bits, sgn) cg_shr(a, b, bits, sgn)

/* Giles' approximation refined by two Newton steps on erf, in double; |y| == 1 gives ±inf, |y| > 1 NaN */
CGCU_DEV double cg_erfinv_d(double y) {
    const double k_2_sqrtpi = 1.12837916709551257390; /* 2/sqrt(pi) */
    if (!(y > -1.0 && y < 1.0)) return y == 1.0 ? INFINITY : y == -1.0 ? -INFINITY : NAN;
    double w = -log((1.0 - y) * (1.0 + y)), p;
    if (w < 5.0) {
        w -= 2.5;
        p = 2.81022636e-08;
        p = 3.43273939e-07 + p * w;
        p = -3.5233877e-06 + p * w;
        p = -4.39150654e-06 + p * w;
        p = 0.00021858087 + p * w;
        p = -0.00125372503 + p * w;
        p = -0.00417768164 + p * w;
        p = 0.246640727 + p * w;
        p = 1.50140941 + p * w;
    } else {
        w = sqrt(w) - 3.0;
        p = -0.000200214257;
        p = 0.000100950558 + p * w;
        p = 0.00134934322 + p * w;
        p = -0.00367342844 + p * w;
        p = 0.00573950773 + p * w;
        p = -0.0076224613 + p * w;
        p = 0.00943887047 + p * w;
        p = 1.00167406 + p * w;
        p = 2.83297682 + p * w;
    }
    double x = p * y;
    for (int i = 0; i < 2; i++) {
        double d = k_2_sqrtpi * exp(-x * x);
        if (d > 0) x -= (erf(x) - y) / d;
    }
    return x;
}

/* activation shapes (elementwise_kernels.h) */
#define CG_HARDTANH(x, lo, hi) ((x) < (lo) ? (lo) : (x) > (hi) ? (hi) : (x))
#define CG_ELU(x, CT, A, S, IS, EXPM1) ((x) > 0 ? (CT)(S) * (x) : (CT)((S) * (A)) * EXPM1((x) * (CT)(IS)))
#define CG_HARDSIGMOID(x, CT) ((x) <= (CT)-3 ? (CT)0 : (x) >= (CT)3 ? (CT)1 : ((x) + (CT)3) / (CT)6)
#define CG_HARDSWISH(x, CT) ((x) <= (CT)-3 ? -(CT)0 : (x) >= (CT)3 ? (x) : (x) * ((x) + (CT)3) / (CT)6)
/* mish = x tanh(softplus(x)); in float, with w = e^x, tanh(log(1 + w)) = w (w + 2) / (w (w + 2) + 2) */
CGCU_DEV float cg_mish_f(float x) {
    const float w = expf(x), n = w * (w + 2.0f);
    return x > 20.0f ? x : x * (n / (n + 2.0f));
}

#endif
