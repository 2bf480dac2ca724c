/* elementwise_kernels.h — internal: the hand-written scalar kernels that the
 * op table's loop expressions call (src/ops/elementwise_ops.py ->
 * elementwise_loops.gen.c): PyTorch's integer and floating division rules
 * (with the integer division-by-zero flag), integer powers and shifts without
 * C undefined behaviour, logaddexp, erfinv, mish and the activation shapes.
 * Each function takes and returns scalars; the loops around them come from
 * loops.h. */
#ifndef CG_CPU_ELEMENTWISE_KERNELS_H
#define CG_CPU_ELEMENTWISE_KERNELS_H

#include "loops.h"
#include "special_kernels.h"
#include "vmath.h"

/* ---------------------------------------------------------------- integer division
 * Note [Integer division by zero]: integer floor_divide / remainder / fmod by
 * zero is an error in PyTorch. The loops never divide by zero (UB in C): they
 * store 0 and flag the error to the driver (Note [Loop errors]), which fails
 * the call, in-place forms included. INT64_MIN / -1 wraps (no trap). Computed
 * in int64 (inputs of every integer dtype fit; the store narrows with
 * wrap-around, as the fixed-width op would). */
static inline int64_t cg_zero_divisor(const void *params) {
    cg_loop_flag_error(params);
    return 0;
}
static inline int64_t cg_ifloordiv(int64_t a, int64_t b, const void *flag) {
    if (b == 0) return cg_zero_divisor(flag);
    if (b == -1) return (int64_t)(0 - (uint64_t)a);
    int64_t q = a / b, r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
}
static inline int64_t cg_iremainder(int64_t a, int64_t b, const void *flag) {
    if (b == 0) return cg_zero_divisor(flag);
    if (b == -1) return 0;
    int64_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
static inline int64_t cg_ifmod(int64_t a, int64_t b, const void *flag) {
    if (b == 0) return cg_zero_divisor(flag);
    if (b == -1) return 0;
    return a % b;
}
/* PyTorch's powi: negative exponents give 0 except for bases 1 and -1. */
static inline int64_t cg_ipow(int64_t a, int64_t b) {
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

/* ---------------------------------------------------------------- floating division
 * Floor division as PyTorch computes it (exact quotient from fmod, then floor,
 * with the sign of zero kept); b == 0 gives the IEEE a / b. */
#define CG_FLOORDIV_FN(NAME, T, FMOD, FLOOR, COPYSIGN)                  \
    static inline T NAME(T a, T b) {                                    \
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

/* Python %: the result takes the divisor's sign. */
#define CG_REMAINDER_FN(NAME, T, FMOD)                                  \
    static inline T NAME(T a, T b) {                                    \
        T mod = FMOD(a, b);                                             \
        return (mod != 0 && ((b < 0) != (mod < 0))) ? mod + b : mod;    \
    }
CG_REMAINDER_FN(cg_remainder_f, float, fmodf)
CG_REMAINDER_FN(cg_remainder_d, double, fmod)

/* log(exp(a) + exp(b)) = max + log1p(exp(-|a - b|)); equal infinities give themselves. */
#define CG_LOGADDEXP_FN(NAME, T, FABS, LOG1P, EXP)                      \
    static inline T NAME(T a, T b) {                                    \
        if (isinf(a) && a == b) return a;                               \
        T m = a < b ? b : a;                                            \
        return m + LOG1P(EXP(-FABS(a - b)));                            \
    }
CG_LOGADDEXP_FN(cg_logaddexp_f, float, fabsf, log1pf, expf)
CG_LOGADDEXP_FN(cg_logaddexp_d, double, fabs, log1p, exp)
/* log2(2^a + 2^b) = max + log1p(2^-|a - b|) / ln 2 (as PyTorch: times 1 / ln 2) */
#define CG_LOGADDEXP2_FN(NAME, T, FABS, LOG1P, EXP2)                    \
    static inline T NAME(T a, T b) {                                    \
        if (isinf(a) && a == b) return a;                               \
        T m = a < b ? b : a;                                            \
        return m + LOG1P(EXP2(-FABS(a - b))) * (T)1.4426950408889634;   \
    }
CG_LOGADDEXP2_FN(cg_logaddexp2_f, float, fabsf, log1pf, exp2f)
CG_LOGADDEXP2_FN(cg_logaddexp2_d, double, fabs, log1p, exp2)

/* ---------------------------------------------------------------- shifts
 * PyTorch's results without C UB: a shift amount that is negative or >= the
 * width gives 0 for <<, and for >> the value shifted by (width - 1) for
 * signed types (the sign fill) or 0 for unsigned ones. Computed in int64 on
 * the value of the fixed-width input (the store narrows with wrap-around). */
static inline int64_t cg_shl(int64_t a, int64_t b, int bits) {
    if (b < 0 || b >= bits) return 0;
    return (int64_t)((uint64_t)a << b);
}
static inline int64_t cg_shr(int64_t a, int64_t b, int bits, int is_signed) {
    int max_shift = bits - is_signed;
    if (b < 0 || b >= max_shift) return a >> max_shift;
    return a >> b;
}
/* the table's "shift" loops call these with (bits, signed) of the dtype */
#define CG_SHL_EXPR(bits, sgn) cg_shl(a, b, bits)
#define CG_SHR_EXPR(bits, sgn) cg_shr(a, b, bits, sgn)

/* ---------------------------------------------------------------- erfinv
 * Giles' single-precision approximation ("Approximating the erfinv
 * function", GPU Computing Gems, 2011) refined by two Newton steps on erf,
 * all in double; |y| == 1 gives ±inf, |y| > 1 NaN. */
static inline double cg_erfinv_d(double y) {
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

/* ---------------------------------------------------------------- activation shapes */
/* hardtanh: clamp to [lo, hi] (NaN passes) */
#define CG_HARDTANH(x, lo, hi) ((x) < (lo) ? (lo) : (x) > (hi) ? (hi) : (x))
/* elu family: x > 0 ? scale*x : scale*alpha*expm1(input_scale*x) */
#define CG_ELU(x, CT, A, S, IS, EXPM1) ((x) > 0 ? (CT)(S) * (x) : (CT)((S) * (A)) * EXPM1((x) * (CT)(IS)))
/* hardsigmoid = clamp(x + 3, 0, 6) / 6, rounded as PyTorch's (x + 3) / 6 (not x/6 + 1/2: near -3 they differ) */
#define CG_HARDSIGMOID(x, CT) ((x) <= (CT)-3 ? (CT)0 : (x) >= (CT)3 ? (CT)1 : ((x) + (CT)3) / (CT)6)
/* hardswish = x relu6(x + 3) / 6: -0 for x <= -3, -inf included (x * 0 there is NaN) */
#define CG_HARDSWISH(x, CT) ((x) <= (CT)-3 ? -(CT)0 : (x) >= (CT)3 ? (x) : (x) * ((x) + (CT)3) / (CT)6)
/* mish = x tanh(softplus(x)). In float, with w = e^x, tanh(log(1 + w)) =
 * w (w + 2) / (w (w + 2) + 2) (1 above x = 20, where w^2 would overflow). */
static inline float cg_mish_f(float x) {
    const float w = cg_vm_expf(x), n = w * (w + 2.0f);
    return x > 20.0f ? x : x * (n / (n + 2.0f));
}

#endif
