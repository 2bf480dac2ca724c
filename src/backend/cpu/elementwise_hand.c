/* elementwise_hand.c — the CPU loops of the op table's hand rows
 * (src/ops/elementwise_ops.py, "descriptor": "hand"): the elementwise ops with
 * scalar parameters (activations, nan_to_num, clamp, pow with a scalar,
 * isclose), the n-ary ones (where, lerp, addcmul, addcdiv, clamp with tensor
 * bounds, normal's reparameterisation), and the internal gradient ops (the
 * gradient gates and the fused activation gradients). One cg_cpu_<row>_<dtype>
 * per dtype of the row, found by op id in the generated table
 * (elementwise_loops.gen.c); the descriptors and backward formulas are in
 * src/ops. */
#define CG_LOOP_LINKAGE
#include "loops.h"
#include "vmath.h"
#include "elementwise_kernels.h"
#include "elementwise_loops.gen.h"

#include <string.h>

/* ================================================================ activations (src/ops/activations.c) */

/* hardtanh: p = {lo, hi} */
CG_UNARY_FLOAT_LOOPS(cg_cpu_hardtanh, CG_HARDTANH(x, (float)p[0], (float)p[1]), CG_HARDTANH(x, p[0], p[1]))

/* leaky_relu: p = {slope} */
CG_UNARY_FLOAT_LOOPS(cg_cpu_leaky_relu, x > 0 ? x : x * (float)p[0], x > 0 ? x : x * p[0])

/* elu family (elu, celu; selu is a generated row): p = {alpha, scale, input_scale} */
CG_UNARY_LOOP(cg_cpu_elu_f64, double, double, double, CG_ID, CG_ID, CG_ELU(x, double, p[0], p[1], p[2], expm1))
CG_UNARY_LOOP_F16(cg_cpu_elu_f16, cg_f16, CG_HALF_TO_F16, CG_ELU(x, float, p[0], p[1], p[2], cg_vm_expm1f))
CG_UNARY_LOOP(cg_cpu_elu_bf16, cg_bf16, float, cg_bf16, CG_LD_BF16, CG_ST_BF16, CG_ELU(x, float, p[0], p[1], p[2], cg_vm_expm1f))
/* float32 reads its parameters once, before the loop: read inside the branch
 * they are conditional loads, and the loop does not vectorise */
void cg_cpu_elu_f32(char **args, const int64_t *steps, int64_t n, const void *params) {
    const double *p = params;
    const float s = (float)p[1], sa = (float)(p[1] * p[0]), is = (float)p[2];
    if (steps[0] == (int64_t)sizeof(float) && steps[1] == (int64_t)sizeof(float)) {
        float *o = (float *)args[0];
        const float *in = (const float *)args[1];
        for (int64_t k = 0; k < n; k++) {
            const float x = in[k];
            o[k] = x > 0 ? s * x : sa * cg_vm_expm1f(x * is);
        }
        return;
    }
    for (int64_t k = 0; k < n; k++) {
        const float x = *(const float *)(args[1] + k * steps[1]);
        *(float *)(args[0] + k * steps[0]) = x > 0 ? s * x : sa * cg_vm_expm1f(x * is);
    }
}

/* gelu, tanh approximation: 0.5 x (1 + tanh(u)), u = k (x + c x^3), k = sqrt(2/pi), computed as x s
 * with s = sigmoid(2u) (the reasoning is at the formula in src/ops/activations.c) */
#define GELU_T_Z(x, CT) ((CT)(2 * CG_SQRT_2_PI) * ((x) + (CT)CG_GELU_C * (x) * (x) * (x))) /* 2u */
#define GELU_T_F(x) ((x) < -40.0f ? -0.0f : (x) * cg_vm_sigmoidf(GELU_T_Z(x, float)))
/* (double: 1 / (1 + e^-2u) would be 0 from 2u = -709.8, where f is still normal) */
#define GELU_T_D(x) ((x) < -40.0 ? -0.0 : (x) * cg_vm_sigmoid_d(GELU_T_Z(x, double)))
CG_UNARY_FLOAT_LOOPS(cg_cpu_gelu_tanh, GELU_T_F(x), GELU_T_D(x))

/* softplus: p = {beta, threshold}; beta x > threshold ? x : log1p(exp(beta x)) / beta */
#define SOFTPLUS(x, CT, LOG1P, EXP) \
    ((x) * (CT)p[0] > (CT)p[1] ? (x) : LOG1P(EXP((x) * (CT)p[0])) / (CT)p[0])
#define SOFTPLUS_F(x) ((x) * (float)p[0] > (float)p[1] ? (x) : cg_vm_log1pexpf((x) * (float)p[0]) / (float)p[0])
CG_UNARY_FLOAT_LOOPS(cg_cpu_softplus, SOFTPLUS_F(x), SOFTPLUS(x, double, log1p, exp))

/* ================================================================ unary math with parameters (src/ops/unary_math.c) */

/* nan_to_num: p = {nan, posinf, neginf}; integers, bool and the unsigned dtypes are copied */
#define NTN(x, CT) (isnan(x) ? (CT)p[0] : isinf(x) ? ((x) > 0 ? (CT)p[1] : (CT)p[2]) : (x))
CG_UNARY_FLOAT_LOOPS(cg_cpu_nan_to_num, NTN(x, float), NTN(x, double))
CG_UNARY_INT_LOOPS(cg_cpu_nan_to_num, x)
CG_UNARY_LOOP(cg_cpu_nan_to_num_b, uint8_t, uint8_t, uint8_t, CG_ID, CG_ID, x)
CG_UNARY_LOOP(cg_cpu_nan_to_num_u16, uint16_t, uint16_t, uint16_t, CG_ID, CG_ID, x)
CG_UNARY_LOOP(cg_cpu_nan_to_num_u32, uint32_t, uint32_t, uint32_t, CG_ID, CG_ID, x)
CG_UNARY_LOOP(cg_cpu_nan_to_num_u64, uint64_t, uint64_t, uint64_t, CG_ID, CG_ID, x)

/* clamp with scalar bounds: p = {lo, hi} (±inf when absent); NaN propagates; lo > hi gives hi.
 * Integer bounds saturate to the dtype's range. */
static inline float clamp_f(float x, const double *p) {
    float lo = (float)p[0], hi = (float)p[1], r = x < lo ? lo : x;
    return r > hi ? hi : r;
}
static inline double clamp_d(double x, const double *p) {
    double r = x < p[0] ? p[0] : x;
    return r > p[1] ? p[1] : r;
}
static inline int64_t sat_i64(double v, double mn, double mx) {
    return v <= mn ? (int64_t)mn : v >= mx ? (int64_t)mx : (int64_t)v;
}
/* For int64, doubles at or above 2^63 saturate to INT64_MAX. */
#define CLAMP_INT(T, MN, MX)                                                    \
    static inline T clamp_##T(T x, const double *p) {                           \
        T r = x;                                                                \
        if ((double)r < p[0]) r = (T)sat_i64(ceil(p[0]), (double)MN, (double)MX); \
        if ((double)r > p[1]) r = (T)sat_i64(floor(p[1]), (double)MN, (double)MX); \
        return r;                                                               \
    }
CLAMP_INT(uint8_t, 0, UINT8_MAX)
CLAMP_INT(int8_t, INT8_MIN, INT8_MAX)
CLAMP_INT(int16_t, INT16_MIN, INT16_MAX)
CLAMP_INT(int32_t, INT32_MIN, INT32_MAX)
static inline int64_t clamp_int64_t(int64_t x, const double *p) {
    int64_t r = x;
    if ((double)r < p[0]) r = p[0] >= 9223372036854775807.0 ? INT64_MAX : (int64_t)ceil(p[0]);
    if ((double)r > p[1]) r = p[1] < -9223372036854775807.0 ? INT64_MIN : (int64_t)floor(p[1]);
    return r;
}
CG_UNARY_FLOAT_LOOPS(cg_cpu_clamp_scalar, clamp_f(x, p), clamp_d(x, p))
CG_UNARY_LOOP(cg_cpu_clamp_scalar_u8, uint8_t, uint8_t, uint8_t, CG_ID, CG_ID, clamp_uint8_t(x, p))
CG_UNARY_LOOP(cg_cpu_clamp_scalar_i8, int8_t, int8_t, int8_t, CG_ID, CG_ID, clamp_int8_t(x, p))
CG_UNARY_LOOP(cg_cpu_clamp_scalar_i16, int16_t, int16_t, int16_t, CG_ID, CG_ID, clamp_int16_t(x, p))
CG_UNARY_LOOP(cg_cpu_clamp_scalar_i32, int32_t, int32_t, int32_t, CG_ID, CG_ID, clamp_int32_t(x, p))
CG_UNARY_LOOP(cg_cpu_clamp_scalar_i64, int64_t, int64_t, int64_t, CG_ID, CG_ID, clamp_int64_t(x, p))

/* pow(x, e), e a scalar: p = {e}. The loop picks a specialised body once per call (x*x, x*x*x,
 * sqrt, 1/x). Integer tensors take non-negative integral exponents (wrapping products). */
#undef CG_LOOP_LINKAGE
#define CG_LOOP_LINKAGE static
#define POW_FLOAT(sfx, T, CT, LD, ST, SQRT, POW)                                                 \
    CG_UNARY_LOOP(pow2_##sfx, T, CT, T, LD, ST, x * x)                                           \
    CG_UNARY_LOOP(pow3_##sfx, T, CT, T, LD, ST, x * x * x)                                       \
    CG_UNARY_LOOP(powh_##sfx, T, CT, T, LD, ST, SQRT(x))                                         \
    CG_UNARY_LOOP(powm1_##sfx, T, CT, T, LD, ST, (CT)1 / x)                                      \
    CG_UNARY_LOOP(powg_##sfx, T, CT, T, LD, ST, POW(x, (CT)p[0]))                                \
    void cg_cpu_pow_scalar_##sfx(char **a, const int64_t *s, int64_t n, const void *params) {    \
        double e = ((const double *)params)[0];                                                  \
        cg_loop_fn f = e == 2 ? pow2_##sfx : e == 3 ? pow3_##sfx : e == 0.5 ? powh_##sfx        \
                     : e == -1 ? powm1_##sfx : powg_##sfx;                                       \
        f(a, s, n, params);                                                                      \
    }
POW_FLOAT(f32, float, float, CG_ID, CG_ID, sqrtf, powf)
POW_FLOAT(f64, double, double, CG_ID, CG_ID, sqrt, pow)
POW_FLOAT(f16, cg_f16, float, CG_LD_F16, CG_ST_F16, sqrtf, powf)
POW_FLOAT(bf16, cg_bf16, float, CG_LD_BF16, CG_ST_BF16, sqrtf, powf)
#undef CG_LOOP_LINKAGE
#define CG_LOOP_LINKAGE

static inline uint64_t ipow_u64(uint64_t b, double e) {
    uint64_t k = e >= 1.8e19 ? UINT64_MAX : (uint64_t)e, r = 1;
    for (; k; k >>= 1, b *= b)
        if (k & 1) r *= b;
    return r;
}
CG_UNARY_INT_LOOPS(cg_cpu_pow_scalar, ipow_u64((uint64_t)x, p[0]))

/* pow(base, x), base a scalar: p = {base} */
CG_UNARY_FLOAT_LOOPS(cg_cpu_rpow_scalar, powf((float)p[0], x), pow(p[0], x))

/* |x|^q, p = {q} (private to the norms' backward, src/ops/reduce_stats.c) */
CG_UNARY_FLOAT_LOOPS(cg_cpu_abspow, powf(fabsf(x), (float)p[0]), pow(fabs(x), p[0]))

/* pow's private log (Note [pow log], src/ops/arith.c) */
CG_UNARY_FLOAT_LOOPS(cg_cpu_pow_log, logf(x), log(x))

/* ================================================================ isclose (src/ops/compare.c)
 * |a - b| <= atol + |rtol * b| (finite error only), or a == b (equal
 * infinities), or both NaN when equal_nan. params: {rtol, atol, equal_nan}.
 * Floating dtypes compute in their own precision (half in float); integers
 * and bool in double. */
#define ISCLOSE_FN(NAME, T, FABS)                                                 \
    static inline int NAME(T a, T b, const double *p) {                           \
        if (a == b) return 1;                                                     \
        if (p[2] != 0 && isnan(a) && isnan(b)) return 1;                          \
        T err = FABS(a - b);                                                      \
        return isfinite(err) && err <= (T)p[1] + FABS((T)p[0] * b);               \
    }
ISCLOSE_FN(isclose_f, float, fabsf)
ISCLOSE_FN(isclose_d, double, fabs)

CG_BINARY_LOOP(cg_cpu_isclose_b, uint8_t, double, uint8_t, CG_LD_BOOL, CG_ST_BOOL, isclose_d(a, b, p))
CG_BINARY_LOOP(cg_cpu_isclose_u8, uint8_t, double, uint8_t, CG_ID, CG_ST_BOOL, isclose_d(a, b, p))
CG_BINARY_LOOP(cg_cpu_isclose_i8, int8_t, double, uint8_t, CG_ID, CG_ST_BOOL, isclose_d(a, b, p))
CG_BINARY_LOOP(cg_cpu_isclose_i16, int16_t, double, uint8_t, CG_ID, CG_ST_BOOL, isclose_d(a, b, p))
CG_BINARY_LOOP(cg_cpu_isclose_i32, int32_t, double, uint8_t, CG_ID, CG_ST_BOOL, isclose_d(a, b, p))
CG_BINARY_LOOP(cg_cpu_isclose_i64, int64_t, double, uint8_t, CG_ID, CG_ST_BOOL, isclose_d(a, b, p))
CG_BINARY_LOOP(cg_cpu_isclose_f32, float, float, uint8_t, CG_ID, CG_ST_BOOL, isclose_f(a, b, p))
CG_BINARY_LOOP(cg_cpu_isclose_f64, double, double, uint8_t, CG_ID, CG_ST_BOOL, isclose_d(a, b, p))
CG_BINARY_LOOP(cg_cpu_isclose_f16, cg_f16, float, uint8_t, CG_LD_F16, CG_ST_BOOL, isclose_f(a, b, p))
CG_BINARY_LOOP(cg_cpu_isclose_bf16, cg_bf16, float, uint8_t, CG_LD_BF16, CG_ST_BOOL, isclose_f(a, b, p))
CG_BINARY_LOOP(cg_cpu_isclose_u16, uint16_t, double, uint8_t, CG_ID, CG_ST_BOOL, isclose_d(a, b, p))
CG_BINARY_LOOP(cg_cpu_isclose_u32, uint32_t, double, uint8_t, CG_ID, CG_ST_BOOL, isclose_d(a, b, p))
CG_BINARY_LOOP(cg_cpu_isclose_u64, uint64_t, double, uint8_t, CG_ID, CG_ST_BOOL, isclose_d(a, b, p))

/* ================================================================ n-ary ops (src/ops/nary.c, random.c) */

/* where(cond, a, b): args out, cond (bool), a, b; one loop per item size */
#define WHERE_LOOP(name, T)                                                                    \
    void name(char **args, const int64_t *s, int64_t n, const void *p) {                       \
        (void)p;                                                                               \
        if (s[0] == (int64_t)sizeof(T) && s[1] == 1 && s[2] == (int64_t)sizeof(T) && s[3] == (int64_t)sizeof(T)) { \
            T *o = (T *)args[0];                                                               \
            const uint8_t *c = (const uint8_t *)args[1];                                       \
            const T *a = (const T *)args[2], *b = (const T *)args[3];                          \
            for (int64_t k = 0; k < n; k++) o[k] = c[k] ? a[k] : b[k];                         \
            return;                                                                            \
        }                                                                                      \
        for (int64_t k = 0; k < n; k++)                                                        \
            *(T *)(args[0] + k * s[0]) = *(const uint8_t *)(args[1] + k * s[1])                \
                                             ? *(const T *)(args[2] + k * s[2])                \
                                             : *(const T *)(args[3] + k * s[3]);               \
    }
WHERE_LOOP(cg_cpu_where_b, uint8_t)
WHERE_LOOP(cg_cpu_where_u8, uint8_t)
WHERE_LOOP(cg_cpu_where_i8, uint8_t)
WHERE_LOOP(cg_cpu_where_i16, uint16_t)
WHERE_LOOP(cg_cpu_where_f16, uint16_t)
WHERE_LOOP(cg_cpu_where_bf16, uint16_t)
WHERE_LOOP(cg_cpu_where_u16, uint16_t)
WHERE_LOOP(cg_cpu_where_i32, uint32_t)
WHERE_LOOP(cg_cpu_where_f32, uint32_t)
WHERE_LOOP(cg_cpu_where_u32, uint32_t)
WHERE_LOOP(cg_cpu_where_i64, uint64_t)
WHERE_LOOP(cg_cpu_where_f64, uint64_t)
WHERE_LOOP(cg_cpu_where_u64, uint64_t)

/* ternary loops: args out, x, y, z (all broadcast to the output); EXPR computes from x, y, z
 * of compute type CT; p = params. Contiguous fast path, else strided. */
#define TERNARY_LOOP(fname, T, CT, LOAD, STORE, EXPR)                                                   \
    void fname(char **args, const int64_t *s, int64_t n, const void *params) {                          \
        const double *p = params;                                                                       \
        (void)p;                                                                                        \
        const int64_t sz_ = (int64_t)sizeof(T);                                                         \
        if (s[0] == sz_ && s[1] == sz_ && s[2] == sz_ && s[3] == sz_) {                                 \
            T *O_ = (T *)args[0];                                                                       \
            const T *X_ = (const T *)args[1], *Y_ = (const T *)args[2], *Z_ = (const T *)args[3];       \
            for (int64_t k_ = 0; k_ < n; k_++) {                                                        \
                CT x = LOAD(X_[k_]), y = LOAD(Y_[k_]), z = LOAD(Z_[k_]);                                \
                O_[k_] = STORE(EXPR);                                                                   \
            }                                                                                           \
            return;                                                                                     \
        }                                                                                               \
        for (int64_t k_ = 0; k_ < n; k_++) {                                                            \
            CT x = LOAD(*(const T *)(args[1] + k_ * s[1])), y = LOAD(*(const T *)(args[2] + k_ * s[2])); \
            CT z = LOAD(*(const T *)(args[3] + k_ * s[3]));                                             \
            *(T *)(args[0] + k_ * s[0]) = STORE(EXPR);                                                  \
        }                                                                                               \
    }
#define TERNARY_FLOAT_LOOPS(name, EXPR_F, EXPR_D)                             \
    TERNARY_LOOP(name##_f32, float, float, CG_ID, CG_ID, EXPR_F)              \
    TERNARY_LOOP(name##_f64, double, double, CG_ID, CG_ID, EXPR_D)            \
    TERNARY_LOOP(name##_f16, cg_f16, float, CG_LD_F16, CG_ST_F16, EXPR_F)     \
    TERNARY_LOOP(name##_bf16, cg_bf16, float, CG_LD_BF16, CG_ST_BF16, EXPR_F)
/* integers computed in int64 (wrap-around arithmetic goes through uint64) */
#define TERNARY_INT_LOOPS(name, EXPR)                                 \
    TERNARY_LOOP(name##_u8, uint8_t, int64_t, CG_ID, CG_ID, EXPR)     \
    TERNARY_LOOP(name##_i8, int8_t, int64_t, CG_ID, CG_ID, EXPR)      \
    TERNARY_LOOP(name##_i16, int16_t, int64_t, CG_ID, CG_ID, EXPR)    \
    TERNARY_LOOP(name##_i32, int32_t, int64_t, CG_ID, CG_ID, EXPR)    \
    TERNARY_LOOP(name##_i64, int64_t, int64_t, CG_ID, CG_ID, EXPR)

/* lerp(start, end, weight), PyTorch's two-sided form, exact at both ends:
 * |w| < 0.5 ? s + w (e - s) : e - (e - s)(1 - w) */
TERNARY_FLOAT_LOOPS(cg_cpu_lerp, fabsf(z) < 0.5f ? x + z * (y - x) : y - (y - x) * (1.0f - z),
                    fabs(z) < 0.5 ? x + z * (y - x) : y - (y - x) * (1.0 - z))

/* addcmul, addcdiv: self + value * t1 * t2 and self + value * t1 / t2; params: {value} */
TERNARY_FLOAT_LOOPS(cg_cpu_addcmul, x + (float)p[0] * y * z, x + p[0] * y * z)
TERNARY_INT_LOOPS(cg_cpu_addcmul, (int64_t)((uint64_t)x + (uint64_t)(int64_t)p[0] * (uint64_t)y * (uint64_t)z))
TERNARY_FLOAT_LOOPS(cg_cpu_addcdiv, x + (float)p[0] * (y / z), x + p[0] * (y / z))

/* clamp(x, min, max) with tensor bounds (PyTorch's clamp kernel): a NaN bound gives NaN,
 * otherwise min(max(x, lo), hi) with std::max / std::min semantics, so a NaN x stays NaN and
 * lo > hi gives hi. One bound: clamp_min = maximum, clamp_max = minimum (NaN from either side
 * propagates). */
#define CLAMP3_FN(NAME, T, NANV)                                       \
    static inline T NAME(T x, T lo, T hi) {                            \
        if (isnan(lo) || isnan(hi)) return NANV;                       \
        T m = x < lo ? lo : x;                                         \
        return hi < m ? hi : m;                                        \
    }
CLAMP3_FN(clamp3_f, float, NAN)
CLAMP3_FN(clamp3_d, double, (double)NAN)
TERNARY_FLOAT_LOOPS(cg_cpu_clamp, clamp3_f(x, y, z), clamp3_d(x, y, z))
TERNARY_INT_LOOPS(cg_cpu_clamp, z < (x < y ? y : x) ? z : (x < y ? y : x))

CG_BINARY_FLOAT_LOOPS(cg_cpu_clamp_min, (isnan(a) || a > b) ? a : b, (isnan(a) || a > b) ? a : b)
CG_BINARY_INT_LOOPS(cg_cpu_clamp_min, a > b ? a : b)
CG_BINARY_FLOAT_LOOPS(cg_cpu_clamp_max, (isnan(a) || a < b) ? a : b, (isnan(a) || a < b) ? a : b)
CG_BINARY_INT_LOOPS(cg_cpu_clamp_max, a < b ? a : b)

/* normal(mean, std): args out, mean, std, eps (broadcast to the loop); out = mean + std * eps */
#define NORMAL_LOOP(name, T, CT, LOAD, STORE)                                                      \
    void name(char **args, const int64_t *s, int64_t n, const void *p) {                           \
        (void)p;                                                                                   \
        if (s[0] == (int64_t)sizeof(T) && s[1] == (int64_t)sizeof(T) && s[2] == (int64_t)sizeof(T) && \
            s[3] == (int64_t)sizeof(T)) {                                                          \
            T *o = (T *)args[0];                                                                   \
            const T *m = (const T *)args[1], *sd = (const T *)args[2], *e = (const T *)args[3];    \
            for (int64_t k = 0; k < n; k++) o[k] = STORE((CT)LOAD(m[k]) + (CT)LOAD(sd[k]) * (CT)LOAD(e[k])); \
            return;                                                                                \
        }                                                                                          \
        for (int64_t k = 0; k < n; k++) {                                                          \
            CT m = LOAD(*(const T *)(args[1] + k * s[1])), sd = LOAD(*(const T *)(args[2] + k * s[2])); \
            CT e = LOAD(*(const T *)(args[3] + k * s[3]));                                         \
            *(T *)(args[0] + k * s[0]) = STORE(m + sd * e);                                        \
        }                                                                                          \
    }
NORMAL_LOOP(cg_cpu_normal_f32, float, float, CG_ID, CG_ID)
NORMAL_LOOP(cg_cpu_normal_f64, double, double, CG_ID, CG_ID)
NORMAL_LOOP(cg_cpu_normal_f16, cg_f16, float, CG_LD_F16, CG_ST_F16)
NORMAL_LOOP(cg_cpu_normal_bf16, cg_bf16, float, CG_LD_BF16, CG_ST_BF16)

/* ================================================================ gradient gates (src/ops/unary_common.c)
 * args: out (g's broadcast shape), g, x; p = {lo, hi, a, b}: out = PRED(x) ? g*a : g*b.
 * b == 0 (relu, hardtanh, clamp: the common case) gives an exact 0 even for a
 * non-finite g; on contiguous operands that case masks the bits of g*a with
 * the predicate, branch-free so it vectorises (a data-dependent branch
 * mispredicts on half the elements of a random-sign input). */
/* both sides computed, then a select: reading p[3] only on one side kept the
 * half loops scalar, with a mispredicted branch per random-sign element */
static inline float gate_select(int pred, float a, double ca, double cb) {
    float t = a * (float)ca, f = cb == 0 ? 0.0f : a * (float)cb;
    return pred ? t : f;
}
#define GATE_EXPR(PRED, CT) gate_select((PRED), a, p[2], p[3])
#define GATE_LOOPS_HALF(kind, PRED_F)                                                            \
    CG_BINARY_LOOP_F16(kind##_f16, cg_f16, CG_HALF_TO_F16, GATE_EXPR(PRED_F, float))                \
    CG_BINARY_LOOP(kind##_bf16, cg_bf16, float, cg_bf16, CG_LD_BF16, CG_ST_BF16, GATE_EXPR(PRED_F, float))
#define GATE_KERNEL(name, T, U, PRED)                                                            \
    void name(char **args, const int64_t *steps, int64_t n, const void *params) {                \
        const double *p = params;                                                                \
        const T lo = (T)p[0], hi = (T)p[1], ca = (T)p[2], cb = (T)p[3];                          \
        (void)lo;                                                                                \
        (void)hi;                                                                                \
        const int64_t so = steps[0], sa = steps[1], sb = steps[2];                               \
        if (so == (int64_t)sizeof(T) && sa == (int64_t)sizeof(T) && sb == (int64_t)sizeof(T) && cb == 0) { \
            T *restrict o = (T *)args[0];                                                        \
            const T *restrict ga = (const T *)args[1], *restrict xb = (const T *)args[2];        \
            for (int64_t k = 0; k < n; k++) { /* bits of g*a masked by the predicate */          \
                T b = xb[k], t = ga[k] * ca;                                                     \
                U bits, mask = (U)0 - (U)(PRED);                                                 \
                memcpy(&bits, &t, sizeof bits);                                                  \
                bits &= mask;                                                                    \
                memcpy(&o[k], &bits, sizeof bits);                                               \
            }                                                                                    \
            return;                                                                              \
        }                                                                                        \
        for (int64_t k = 0; k < n; k++) {                                                        \
            T a = *(const T *)(args[1] + k * sa), b = *(const T *)(args[2] + k * sb);            \
            *(T *)(args[0] + k * so) = (PRED) ? a * ca : (cb == 0 ? (T)0 : a * cb);              \
        }                                                                                        \
    }
#define GATE_LOOPS(kind, PRED_F, PRED_T)                                                         \
    GATE_KERNEL(kind##_f32, float, uint32_t, PRED_T)                                             \
    GATE_KERNEL(kind##_f64, double, uint64_t, PRED_T)                                            \
    GATE_LOOPS_HALF(kind, PRED_F)

GATE_LOOPS(cg_cpu_gate_incl, b >= (float)p[0] && b <= (float)p[1], (b >= lo) & (b <= hi))
GATE_LOOPS(cg_cpu_gate_excl, b > (float)p[0] && b < (float)p[1], (b > lo) & (b < hi))
GATE_LOOPS(cg_cpu_gate_gt, b > (float)p[0], b > lo)
GATE_LOOPS(cg_cpu_gate_finite, isfinite(b), isfinite(b))
GATE_LOOPS(cg_cpu_gate_nle, !(b <= (float)p[0]), !(b <= lo))

/* ================================================================ fused activation gradients (src/ops/unary_grads.c)
 * args: out, g, s: g * f'(s) in one pass (Note [Fused activation gradients]) */

/* tanh: s = y, f' = 1 - y^2 */
#define TANH_D(a, b, CT) ((a) * ((CT)1 - (b) * (b)))
CG_BINARY_FLOAT_LOOPS(cg_cpu_tanh_grad, TANH_D(a, b, float), TANH_D(a, b, double))

/* sigmoid: s = y, f' = y (1 - y) */
#define SIGMOID_D(a, b, CT) ((a) * ((b) * ((CT)1 - (b))))
CG_BINARY_FLOAT_LOOPS(cg_cpu_sigmoid_grad, SIGMOID_D(a, b, float), SIGMOID_D(a, b, double))

/* silu: s = x, f' = sg (1 + x (1 - sg)), sg = sigmoid(x) */
#define SILU_D(a, b, CT, SG) ((a) * ((SG) * ((b) * ((CT)1 - (SG)) + (CT)1)))
CG_BINARY_FLOAT_LOOPS(cg_cpu_silu_grad, SILU_D(a, b, float, cg_vm_sigmoidf(b)), SILU_D(a, b, double, 1.0 / (1.0 + exp(-b))))

/* gelu (exact): s = x, f' = erfc(-x/sqrt2)/2 + x phi(x) (vmath.h: accurate in the tails,
 * 1 at +inf and 0 at -inf, the limits) */
CG_BINARY_FLOAT_LOOPS(cg_cpu_gelu_grad, (a) * cg_vm_gelu_gradf(b), (a) * cg_vm_gelu_grad_d(b))
