/* elementwise_hand.cu — the CUDA kernels of the op table's hand rows
 * (src/ops/elementwise_ops.py, "descriptor": "hand"), with the semantics of
 * their CPU loops in src/backend/cpu/elementwise_hand.c expression for
 * expression (compute types, loads, stores, parameter roundings): the ops
 * with scalar parameters (activations, nan_to_num, clamp and pow with
 * scalars, isclose), the n-ary ones (where, lerp, addcmul, addcdiv, clamp
 * with tensor bounds, normal's reparameterisation) and the internal gradient
 * ops (gates, fused activation gradients). Parameters are the loop's p[0..3],
 * copied into each functor. cgcu_elementwise_hand is reached from the
 * generated dispatcher (elementwise.gen.cu) for the ids it does not hold.
 * None of these loops flag errors (no wait). */
#include "ew_launch.cuh"
#include "ew_math.cuh"

namespace {

/* ---------------------------------------------------------------- functor shapes (p: the loop parameters) */
#define H_UNARY(NAME, OT, T, CT, LD, ST, EXPR)                                 \
    struct NAME : cgcu_ew_typed<NAME, OT, T, 1> {                              \
        double p[4];                                                           \
        __device__ __forceinline__ OT f(T x_) const {                          \
            CT x = LD(x_);                                                     \
            return ST(EXPR);                                                   \
        }                                                                      \
    };
#define H_BINARY(NAME, OT, T, CT, LD, ST, EXPR)                                \
    struct NAME : cgcu_ew_typed<NAME, OT, T, 2> {                              \
        double p[4];                                                           \
        __device__ __forceinline__ OT f(T a_, T b_) const {                    \
            CT a = LD(a_), b = LD(b_);                                         \
            return ST(EXPR);                                                   \
        }                                                                      \
    };
#define H_TERNARY(NAME, T, CT, LD, ST, EXPR)                                   \
    struct NAME : cgcu_ew_typed<NAME, T, T, 3> {                               \
        double p[4];                                                           \
        __device__ __forceinline__ T f(T x_, T y_, T z_) const {               \
            CT x = LD(x_), y = LD(y_), z = LD(z_);                             \
            return ST(EXPR);                                                   \
        }                                                                      \
    };

/* float families (loops.h's CG_UNARY_FLOAT_LOOPS / CG_BINARY_FLOAT_LOOPS; half computed in float) */
#define H_UNARY_FLOAT(name, EF, ED)                                                   \
    H_UNARY(name##_f32, float, float, float, CG_ID, CG_ID, EF)                        \
    H_UNARY(name##_f64, double, double, double, CG_ID, CG_ID, ED)                     \
    H_UNARY(name##_f16, cgcu_f16, cgcu_f16, float, CG_LD_F16, CG_ST_F16, EF)          \
    H_UNARY(name##_bf16, cgcu_bf16, cgcu_bf16, float, CG_LD_BF16, CG_ST_BF16, EF)
#define H_BINARY_FLOAT(name, EF, ED)                                                  \
    H_BINARY(name##_f32, float, float, float, CG_ID, CG_ID, EF)                       \
    H_BINARY(name##_f64, double, double, double, CG_ID, CG_ID, ED)                    \
    H_BINARY(name##_f16, cgcu_f16, cgcu_f16, float, CG_LD_F16, CG_ST_F16, EF)         \
    H_BINARY(name##_bf16, cgcu_bf16, cgcu_bf16, float, CG_LD_BF16, CG_ST_BF16, EF)
#define H_TERNARY_FLOAT(name, EF, ED)                                                 \
    H_TERNARY(name##_f32, float, float, CG_ID, CG_ID, EF)                             \
    H_TERNARY(name##_f64, double, double, CG_ID, CG_ID, ED)                           \
    H_TERNARY(name##_f16, cgcu_f16, float, CG_LD_F16, CG_ST_F16, EF)                  \
    H_TERNARY(name##_bf16, cgcu_bf16, float, CG_LD_BF16, CG_ST_BF16, EF)
/* integer families: in their own type (CG_*_INT_LOOPS), ternary in int64 (elementwise_hand.c's TERNARY_INT_LOOPS) */
#define H_UNARY_INT(name, EXPR)                                              \
    H_UNARY(name##_u8, uint8_t, uint8_t, uint8_t, CG_ID, CG_ID, EXPR)        \
    H_UNARY(name##_i8, int8_t, int8_t, int8_t, CG_ID, CG_ID, EXPR)           \
    H_UNARY(name##_i16, int16_t, int16_t, int16_t, CG_ID, CG_ID, EXPR)       \
    H_UNARY(name##_i32, int32_t, int32_t, int32_t, CG_ID, CG_ID, EXPR)       \
    H_UNARY(name##_i64, int64_t, int64_t, int64_t, CG_ID, CG_ID, EXPR)
#define H_BINARY_INT(name, EXPR)                                             \
    H_BINARY(name##_u8, uint8_t, uint8_t, uint8_t, CG_ID, CG_ID, EXPR)       \
    H_BINARY(name##_i8, int8_t, int8_t, int8_t, CG_ID, CG_ID, EXPR)          \
    H_BINARY(name##_i16, int16_t, int16_t, int16_t, CG_ID, CG_ID, EXPR)      \
    H_BINARY(name##_i32, int32_t, int32_t, int32_t, CG_ID, CG_ID, EXPR)      \
    H_BINARY(name##_i64, int64_t, int64_t, int64_t, CG_ID, CG_ID, EXPR)
#define H_TERNARY_INT(name, EXPR)                                            \
    H_TERNARY(name##_u8, uint8_t, int64_t, CG_ID, CG_ID, EXPR)               \
    H_TERNARY(name##_i8, int8_t, int64_t, CG_ID, CG_ID, EXPR)                \
    H_TERNARY(name##_i16, int16_t, int64_t, CG_ID, CG_ID, EXPR)              \
    H_TERNARY(name##_i32, int32_t, int64_t, CG_ID, CG_ID, EXPR)              \
    H_TERNARY(name##_i64, int64_t, int64_t, CG_ID, CG_ID, EXPR)

/* ================================================================ activations */

H_UNARY_FLOAT(h_hardtanh, CG_HARDTANH(x, (float)p[0], (float)p[1]), CG_HARDTANH(x, p[0], p[1]))
H_UNARY_FLOAT(h_leaky_relu, x > 0 ? x : x * (float)p[0], x > 0 ? x : x * p[0])

/* elu family (elu, celu): p = {alpha, scale, input_scale}; the CPU's float32 loop rounds the same constants */
H_UNARY(h_elu_f64, double, double, double, CG_ID, CG_ID, CG_ELU(x, double, p[0], p[1], p[2], expm1))
H_UNARY(h_elu_f32, float, float, float, CG_ID, CG_ID, CG_ELU(x, float, p[0], p[1], p[2], cg_vm_expm1f))
H_UNARY(h_elu_f16, cgcu_f16, cgcu_f16, float, CG_LD_F16, CG_ST_F16, CG_ELU(x, float, p[0], p[1], p[2], cg_vm_expm1f))
H_UNARY(h_elu_bf16, cgcu_bf16, cgcu_bf16, float, CG_LD_BF16, CG_ST_BF16, CG_ELU(x, float, p[0], p[1], p[2], cg_vm_expm1f))

/* gelu, tanh approximation, as x sigmoid(2u), u = k (x + c x^3) */
#define GELU_T_Z(x, CT) ((CT)(2 * CG_SQRT_2_PI) * ((x) + (CT)CG_GELU_C * (x) * (x) * (x)))
#define GELU_T_F(x) ((x) < -40.0f ? -0.0f : (x) * cg_vm_sigmoidf(GELU_T_Z(x, float)))
#define GELU_T_D(x) ((x) < -40.0 ? -0.0 : (x) * cg_vm_sigmoid_d(GELU_T_Z(x, double)))
H_UNARY_FLOAT(h_gelu_tanh, GELU_T_F(x), GELU_T_D(x))

/* softplus: p = {beta, threshold} */
#define SOFTPLUS(x, CT, LOG1P, EXP) ((x) * (CT)p[0] > (CT)p[1] ? (x) : LOG1P(EXP((x) * (CT)p[0])) / (CT)p[0])
#define SOFTPLUS_F(x) ((x) * (float)p[0] > (float)p[1] ? (x) : cg_vm_log1pexpf((x) * (float)p[0]) / (float)p[0])
H_UNARY_FLOAT(h_softplus, SOFTPLUS_F(x), SOFTPLUS(x, double, log1p, exp))

/* ================================================================ unary math with parameters */

/* nan_to_num: p = {nan, posinf, neginf}; integers, bool and the unsigned dtypes are copied */
#define NTN(x, CT) (isnan(x) ? (CT)p[0] : isinf(x) ? ((x) > 0 ? (CT)p[1] : (CT)p[2]) : (x))
H_UNARY_FLOAT(h_nan_to_num, NTN(x, float), NTN(x, double))
H_UNARY(h_copy1, uint8_t, uint8_t, uint8_t, CG_ID, CG_ID, x)
H_UNARY(h_copy2, uint16_t, uint16_t, uint16_t, CG_ID, CG_ID, x)
H_UNARY(h_copy4, uint32_t, uint32_t, uint32_t, CG_ID, CG_ID, x)
H_UNARY(h_copy8, uint64_t, uint64_t, uint64_t, CG_ID, CG_ID, x)

/* clamp with scalar bounds: p = {lo, hi}; NaN propagates; lo > hi gives hi; integer bounds saturate */
__device__ __forceinline__ float clamp_f(float x, const double *p) {
    float lo = (float)p[0], hi = (float)p[1], r = x < lo ? lo : x;
    return r > hi ? hi : r;
}
__device__ __forceinline__ double clamp_d(double x, const double *p) {
    double r = x < p[0] ? p[0] : x;
    return r > p[1] ? p[1] : r;
}
__device__ __forceinline__ int64_t sat_i64(double v, double mn, double mx) {
    return v <= mn ? (int64_t)mn : v >= mx ? (int64_t)mx : (int64_t)v;
}
#define CLAMP_INT(T, MN, MX)                                                      \
    __device__ __forceinline__ T clamp_##T(T x, const double *p) {                \
        T r = x;                                                                  \
        if ((double)r < p[0]) r = (T)sat_i64(ceil(p[0]), (double)MN, (double)MX); \
        if ((double)r > p[1]) r = (T)sat_i64(floor(p[1]), (double)MN, (double)MX); \
        return r;                                                                 \
    }
CLAMP_INT(uint8_t, 0, UINT8_MAX)
CLAMP_INT(int8_t, INT8_MIN, INT8_MAX)
CLAMP_INT(int16_t, INT16_MIN, INT16_MAX)
CLAMP_INT(int32_t, INT32_MIN, INT32_MAX)
__device__ __forceinline__ int64_t clamp_int64_t(int64_t x, const double *p) {
    int64_t r = x;
    if ((double)r < p[0]) r = p[0] >= 9223372036854775807.0 ? INT64_MAX : (int64_t)ceil(p[0]);
    if ((double)r > p[1]) r = p[1] < -9223372036854775807.0 ? INT64_MIN : (int64_t)floor(p[1]);
    return r;
}
H_UNARY_FLOAT(h_clamp_scalar, clamp_f(x, p), clamp_d(x, p))
H_UNARY(h_clamp_scalar_u8, uint8_t, uint8_t, uint8_t, CG_ID, CG_ID, clamp_uint8_t(x, p))
H_UNARY(h_clamp_scalar_i8, int8_t, int8_t, int8_t, CG_ID, CG_ID, clamp_int8_t(x, p))
H_UNARY(h_clamp_scalar_i16, int16_t, int16_t, int16_t, CG_ID, CG_ID, clamp_int16_t(x, p))
H_UNARY(h_clamp_scalar_i32, int32_t, int32_t, int32_t, CG_ID, CG_ID, clamp_int32_t(x, p))
H_UNARY(h_clamp_scalar_i64, int64_t, int64_t, int64_t, CG_ID, CG_ID, clamp_int64_t(x, p))

/* pow(x, e), e = p[0] a scalar: the CPU picks x*x, x*x*x, sqrt, 1/x or pow once per call; here per
 * element on the uniform e (the same results) */
#define POW_BODY(CT, SQRT, POW) \
    (p[0] == 2 ? x * x : p[0] == 3 ? x * x * x : p[0] == 0.5 ? SQRT(x) : p[0] == -1 ? (CT)1 / x : POW(x, (CT)p[0]))
H_UNARY_FLOAT(h_pow_scalar, POW_BODY(float, sqrtf, powf), POW_BODY(double, sqrt, pow))
__device__ __forceinline__ uint64_t ipow_u64(uint64_t b, double e) {
    uint64_t k = e >= 1.8e19 ? UINT64_MAX : (uint64_t)e, r = 1;
    for (; k; k >>= 1, b *= b)
        if (k & 1) r *= b;
    return r;
}
H_UNARY_INT(h_pow_scalar, ipow_u64((uint64_t)x, p[0]))

H_UNARY_FLOAT(h_rpow_scalar, powf((float)p[0], x), pow(p[0], x))
H_UNARY_FLOAT(h_abspow, powf(fabsf(x), (float)p[0]), pow(fabs(x), p[0]))
H_UNARY_FLOAT(h_pow_log, logf(x), log(x))

/* ================================================================ isclose: p = {rtol, atol, equal_nan} */
#define ISCLOSE_FN(NAME, T, FABS)                                                 \
    __device__ __forceinline__ int NAME(T a, T b, const double *p) {              \
        if (a == b) return 1;                                                     \
        if (p[2] != 0 && isnan(a) && isnan(b)) return 1;                          \
        T err = FABS(a - b);                                                      \
        return isfinite(err) && err <= (T)p[1] + FABS((T)p[0] * b);               \
    }
ISCLOSE_FN(isclose_f, float, fabsf)
ISCLOSE_FN(isclose_d, double, fabs)
H_BINARY(h_isclose_b, uint8_t, uint8_t, double, CG_LD_BOOL, CG_ST_BOOL, isclose_d(a, b, p))
H_BINARY(h_isclose_u8, uint8_t, uint8_t, double, CG_ID, CG_ST_BOOL, isclose_d(a, b, p))
H_BINARY(h_isclose_i8, uint8_t, int8_t, double, CG_ID, CG_ST_BOOL, isclose_d(a, b, p))
H_BINARY(h_isclose_i16, uint8_t, int16_t, double, CG_ID, CG_ST_BOOL, isclose_d(a, b, p))
H_BINARY(h_isclose_i32, uint8_t, int32_t, double, CG_ID, CG_ST_BOOL, isclose_d(a, b, p))
H_BINARY(h_isclose_i64, uint8_t, int64_t, double, CG_ID, CG_ST_BOOL, isclose_d(a, b, p))
H_BINARY(h_isclose_f32, uint8_t, float, float, CG_ID, CG_ST_BOOL, isclose_f(a, b, p))
H_BINARY(h_isclose_f64, uint8_t, double, double, CG_ID, CG_ST_BOOL, isclose_d(a, b, p))
H_BINARY(h_isclose_f16, uint8_t, cgcu_f16, float, CG_LD_F16, CG_ST_BOOL, isclose_f(a, b, p))
H_BINARY(h_isclose_bf16, uint8_t, cgcu_bf16, float, CG_LD_BF16, CG_ST_BOOL, isclose_f(a, b, p))
H_BINARY(h_isclose_u16, uint8_t, uint16_t, double, CG_ID, CG_ST_BOOL, isclose_d(a, b, p))
H_BINARY(h_isclose_u32, uint8_t, uint32_t, double, CG_ID, CG_ST_BOOL, isclose_d(a, b, p))
H_BINARY(h_isclose_u64, uint8_t, uint64_t, double, CG_ID, CG_ST_BOOL, isclose_d(a, b, p))

/* ================================================================ n-ary ops */

/* where(cond, a, b): args out, cond (bool bytes: nonzero selects a), a, b; one kernel per item size */
template <class T>
struct h_where {
    static constexpr int nin = 3, osz = (int)sizeof(T), isz0 = 1, isz1 = (int)sizeof(T), isz2 = (int)sizeof(T);
    double p[4];
    __device__ __forceinline__ void operator()(char *o, const char *c, const char *a, const char *b) const {
        *(T *)o = *(const uint8_t *)c ? *(const T *)a : *(const T *)b;
    }
};

/* lerp(start, end, weight), exact at both ends */
H_TERNARY_FLOAT(h_lerp, fabsf(z) < 0.5f ? x + z * (y - x) : y - (y - x) * (1.0f - z),
                fabs(z) < 0.5 ? x + z * (y - x) : y - (y - x) * (1.0 - z))

/* addcmul, addcdiv: self + value * t1 * t2 and self + value * t1 / t2; p = {value} */
H_TERNARY_FLOAT(h_addcmul, x + (float)p[0] * y * z, x + p[0] * y * z)
H_TERNARY_INT(h_addcmul, (int64_t)((uint64_t)x + (uint64_t)(int64_t)p[0] * (uint64_t)y * (uint64_t)z))
H_TERNARY_FLOAT(h_addcdiv, x + (float)p[0] * (y / z), x + p[0] * (y / z))

/* clamp(x, min, max) with tensor bounds: a NaN bound gives NaN, else min(max(x, lo), hi) */
#define CLAMP3_FN(NAME, T, NANV)                                                  \
    __device__ __forceinline__ T NAME(T x, T lo, T hi) {                          \
        if (isnan(lo) || isnan(hi)) return NANV;                                  \
        T m = x < lo ? lo : x;                                                    \
        return hi < m ? hi : m;                                                   \
    }
CLAMP3_FN(clamp3_f, float, NAN)
CLAMP3_FN(clamp3_d, double, (double)NAN)
H_TERNARY_FLOAT(h_clamp, clamp3_f(x, y, z), clamp3_d(x, y, z))
H_TERNARY_INT(h_clamp, z < (x < y ? y : x) ? z : (x < y ? y : x))

H_BINARY_FLOAT(h_clamp_min, (isnan(a) || a > b) ? a : b, (isnan(a) || a > b) ? a : b)
H_BINARY_INT(h_clamp_min, a > b ? a : b)
H_BINARY_FLOAT(h_clamp_max, (isnan(a) || a < b) ? a : b, (isnan(a) || a < b) ? a : b)
H_BINARY_INT(h_clamp_max, a < b ? a : b)

/* normal(mean, std): args out, mean, std, eps; out = mean + std * eps */
H_TERNARY_FLOAT(h_normal, x + y * z, x + y * z)

/* ================================================================ gradient gates
 * args: out, g, x; p = {lo, hi, a, b}: out = PRED(x) ? g*a : (b == 0 ? +0 : g*b). As on the CPU,
 * float32 / float64 round the parameters to their type first (the b == 0 test included), the half
 * dtypes compare in float with b tested as a double. */
#define GATE_T(NAME, T, PRED)                                                      \
    struct NAME : cgcu_ew_typed<NAME, T, T, 2> {                                   \
        double p[4];                                                               \
        __device__ __forceinline__ T f(T a, T b) const {                           \
            const T lo = (T)p[0], hi = (T)p[1], ca = (T)p[2], cb = (T)p[3];        \
            (void)lo;                                                              \
            (void)hi;                                                              \
            return (PRED) ? a * ca : (cb == 0 ? (T)0 : a * cb);                    \
        }                                                                          \
    };
__device__ __forceinline__ float gate_select(int pred, float a, double ca, double cb) {
    float t = a * (float)ca, f = cb == 0 ? 0.0f : a * (float)cb;
    return pred ? t : f;
}
#define GATE_EXPR(PRED) gate_select((PRED), a, p[2], p[3])
#define GATES(kind, PRED_F, PRED_T)                                                                 \
    GATE_T(kind##_f32, float, PRED_T)                                                               \
    GATE_T(kind##_f64, double, PRED_T)                                                              \
    H_BINARY(kind##_f16, cgcu_f16, cgcu_f16, float, CG_LD_F16, CG_ST_F16, GATE_EXPR(PRED_F))        \
    H_BINARY(kind##_bf16, cgcu_bf16, cgcu_bf16, float, CG_LD_BF16, CG_ST_BF16, GATE_EXPR(PRED_F))
GATES(h_gate_incl, b >= (float)p[0] && b <= (float)p[1], (b >= lo) & (b <= hi))
GATES(h_gate_excl, b > (float)p[0] && b < (float)p[1], (b > lo) & (b < hi))
GATES(h_gate_gt, b > (float)p[0], b > lo)
GATES(h_gate_finite, isfinite(b), isfinite(b))
GATES(h_gate_nle, !(b <= (float)p[0]), !(b <= lo))

/* ================================================================ fused activation gradients: args out, g, s */
#define TANH_D(a, b, CT) ((a) * ((CT)1 - (b) * (b)))
H_BINARY_FLOAT(h_tanh_grad, TANH_D(a, b, float), TANH_D(a, b, double))
#define SIGMOID_D(a, b, CT) ((a) * ((b) * ((CT)1 - (b))))
H_BINARY_FLOAT(h_sigmoid_grad, SIGMOID_D(a, b, float), SIGMOID_D(a, b, double))
#define SILU_D(a, b, CT, SG) ((a) * ((SG) * ((b) * ((CT)1 - (SG)) + (CT)1)))
H_BINARY_FLOAT(h_silu_grad, SILU_D(a, b, float, cg_vm_sigmoidf(b)), SILU_D(a, b, double, 1.0 / (1.0 + exp(-b))))
H_BINARY_FLOAT(h_gelu_grad, (a) * cg_vm_gelu_gradf(b), (a) * cg_vm_gelu_grad_d(b))

/* ================================================================ dispatch */
template <class F>
int h_run(int dev, const cgcu_plan *p, const double *params) {
    F f{};
    for (int i = 0; i < 4; i++) f.p[i] = params ? params[i] : 0.0;
    return cgcu_ew_run(dev, p, f);
}

#define C_(DT, F) \
    case DT: return h_run<F>(dev, p, params);
#define FLOAT_CASES(name) \
    C_(CG_DTYPE_F32, name##_f32) C_(CG_DTYPE_F64, name##_f64) C_(CG_DTYPE_F16, name##_f16) C_(CG_DTYPE_BF16, name##_bf16)
#define INT_CASES(name)                                                                                  \
    C_(CG_DTYPE_U8, name##_u8) C_(CG_DTYPE_I8, name##_i8) C_(CG_DTYPE_I16, name##_i16) C_(CG_DTYPE_I32, name##_i32) \
    C_(CG_DTYPE_I64, name##_i64)
#define ROW(ID, CASES)              \
    case ID:                        \
        switch (dtype) {            \
            CASES                   \
        default: return CGCU_MISSING; \
        }

} // namespace

int cgcu_elementwise_hand(int dev, const cgcu_plan *p, int op_id, int dtype, const double *params, int *loop_error) {
    (void)loop_error; /* no hand loop flags */
    switch (op_id) {
        ROW(CG_OP_HARDTANH, FLOAT_CASES(h_hardtanh))
        ROW(CG_OP_LEAKY_RELU, FLOAT_CASES(h_leaky_relu))
        ROW(CG_OP_ELU, FLOAT_CASES(h_elu))
        ROW(CG_OP_CELU, FLOAT_CASES(h_elu))
        ROW(CG_OP_GELU_TANH, FLOAT_CASES(h_gelu_tanh))
        ROW(CG_OP_SOFTPLUS, FLOAT_CASES(h_softplus))
        ROW(CG_OP_NAN_TO_NUM, FLOAT_CASES(h_nan_to_num) C_(CG_DTYPE_BOOL, h_copy1) C_(CG_DTYPE_U8, h_copy1)
            C_(CG_DTYPE_I8, h_copy1) C_(CG_DTYPE_I16, h_copy2) C_(CG_DTYPE_I32, h_copy4) C_(CG_DTYPE_I64, h_copy8)
            C_(CG_DTYPE_U16, h_copy2) C_(CG_DTYPE_U32, h_copy4) C_(CG_DTYPE_U64, h_copy8))
        ROW(CG_OP_CLAMP_SCALAR, FLOAT_CASES(h_clamp_scalar) INT_CASES(h_clamp_scalar))
        ROW(CG_OP_POW_SCALAR, FLOAT_CASES(h_pow_scalar) INT_CASES(h_pow_scalar))
        ROW(CG_OP_RPOW_SCALAR, FLOAT_CASES(h_rpow_scalar))
        ROW(CG_OP_ABSPOW, FLOAT_CASES(h_abspow))
        ROW(CG_OP_POW_LOG, FLOAT_CASES(h_pow_log))
        ROW(CG_OP_ISCLOSE, C_(CG_DTYPE_BOOL, h_isclose_b) INT_CASES(h_isclose) FLOAT_CASES(h_isclose)
            C_(CG_DTYPE_U16, h_isclose_u16) C_(CG_DTYPE_U32, h_isclose_u32) C_(CG_DTYPE_U64, h_isclose_u64))
        ROW(CG_OP_WHERE, C_(CG_DTYPE_BOOL, h_where<uint8_t>) C_(CG_DTYPE_U8, h_where<uint8_t>)
            C_(CG_DTYPE_I8, h_where<uint8_t>) C_(CG_DTYPE_I16, h_where<uint16_t>) C_(CG_DTYPE_F16, h_where<uint16_t>)
            C_(CG_DTYPE_BF16, h_where<uint16_t>) C_(CG_DTYPE_U16, h_where<uint16_t>) C_(CG_DTYPE_I32, h_where<uint32_t>)
            C_(CG_DTYPE_F32, h_where<uint32_t>) C_(CG_DTYPE_U32, h_where<uint32_t>) C_(CG_DTYPE_I64, h_where<uint64_t>)
            C_(CG_DTYPE_F64, h_where<uint64_t>) C_(CG_DTYPE_U64, h_where<uint64_t>))
        ROW(CG_OP_LERP, FLOAT_CASES(h_lerp))
        ROW(CG_OP_ADDCMUL, FLOAT_CASES(h_addcmul) INT_CASES(h_addcmul))
        ROW(CG_OP_ADDCDIV, FLOAT_CASES(h_addcdiv))
        ROW(CG_OP_CLAMP, FLOAT_CASES(h_clamp) INT_CASES(h_clamp))
        ROW(CG_OP_CLAMP_MIN, FLOAT_CASES(h_clamp_min) INT_CASES(h_clamp_min))
        ROW(CG_OP_CLAMP_MAX, FLOAT_CASES(h_clamp_max) INT_CASES(h_clamp_max))
        ROW(CG_OP_NORMAL, FLOAT_CASES(h_normal))
        ROW(CG_OP_GATE_INCL, FLOAT_CASES(h_gate_incl))
        ROW(CG_OP_GATE_EXCL, FLOAT_CASES(h_gate_excl))
        ROW(CG_OP_GATE_GT, FLOAT_CASES(h_gate_gt))
        ROW(CG_OP_GATE_FINITE, FLOAT_CASES(h_gate_finite))
        ROW(CG_OP_GATE_NLE, FLOAT_CASES(h_gate_nle))
        ROW(CG_OP_TANH_GRAD, FLOAT_CASES(h_tanh_grad))
        ROW(CG_OP_SIGMOID_GRAD, FLOAT_CASES(h_sigmoid_grad))
        ROW(CG_OP_SILU_GRAD, FLOAT_CASES(h_silu_grad))
        ROW(CG_OP_GELU_GRAD, FLOAT_CASES(h_gelu_grad))
    default: return CGCU_MISSING;
    }
}
