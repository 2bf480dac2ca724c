/* unary_math.c — unary math ops (neg, abs, sign, powers, exp/log family,
 * trigonometric and hyperbolic functions, erf family, rounding, nan_to_num,
 * clamp with scalar bounds, pow with a scalar): descriptor, loops and
 * backward formula of each, side by side. Backward formulas are cg ops
 * (unary_internal.h), so every op is differentiable again. The float32
 * exp / expm1 / log / log1p / tanh / erf / erfc loops use the vectorisable
 * versions of vmath.h (Note [Vector math]). */
#include "unary_internal.h"

/* ---------------------------------------------------------------- neg */
CG_UNARY_FLOAT_LOOPS(neg, -x, -x)
CG_UNARY_INT_LOOPS(neg, -x)

static cg_status neg_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    (void)node;
    return (gin[0] = cg_neg(g[0])) ? CG_OK : cg_last_error();
}

const cg_unary_op cg_op_neg = {
    .schema = {"neg", "NegBackward0", 1, CG_AMP_KEEP, false, false, false},
    .arity = 1, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(neg), CG_INT_TABLE(neg)},
    .backward = neg_backward,
};
cg_tensor *cg_neg(cg_tensor *x) { return cg_unary_forward(&cg_op_neg, x, NULL, 0); }

/* ---------------------------------------------------------------- exp: d/dx = exp(x) = out */
CG_UNARY_FLOAT_LOOPS(exp, cg_vm_expf(x), exp(x))

static cg_status exp_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    cg_tensor *out = cg_node_saved(node, 0);
    if (!out) return cg_last_error();
    gin[0] = cg_mul(g[0], out);
    cg_tensor_release(out);
    return gin[0] ? CG_OK : cg_last_error();
}

const cg_unary_op cg_op_exp = {
    .schema = {"exp", "ExpBackward0", 1, CG_AMP_KEEP, false, false, true},
    .arity = 1, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(exp)},
    .backward = exp_backward,
};
cg_tensor *cg_exp(cg_tensor *x) { return cg_unary_forward(&cg_op_exp, x, NULL, 0); }

/* ---------------------------------------------------------------- isnan (-> bool) */
CG_UNARY_FLOAT_PRED_LOOPS(isnan, isnan(x), isnan(x))
CG_UNARY_LOOP(isnan_int, uint8_t, int, uint8_t, CG_ID, CG_ST_BOOL, 0 * x)
CG_UNARY_LOOP(isnan_i16, int16_t, int, uint8_t, CG_ID, CG_ST_BOOL, 0 * x)
CG_UNARY_LOOP(isnan_i32, int32_t, int, uint8_t, CG_ID, CG_ST_BOOL, 0 * x)
CG_UNARY_LOOP(isnan_i64, int64_t, int64_t, uint8_t, CG_ID, CG_ST_BOOL, 0 * x)

const cg_unary_op cg_op_isnan = {
    .schema = {"isnan", "IsnanBackward0", 1, CG_AMP_KEEP, false, false, false},
    .arity = 1, .out_dtype = CG_DTYPE_BOOL,
    .cpu = {CG_FLOAT_TABLE(isnan), [CG_DTYPE_BOOL] = isnan_int, [CG_DTYPE_U8] = isnan_int,
            [CG_DTYPE_I8] = isnan_int, [CG_DTYPE_I16] = isnan_i16, [CG_DTYPE_I32] = isnan_i32,
            [CG_DTYPE_I64] = isnan_i64, [CG_DTYPE_U16] = isnan_i16, [CG_DTYPE_U32] = isnan_i32,
            [CG_DTYPE_U64] = isnan_i64},
    .backward = NULL,
};
cg_tensor *cg_isnan(cg_tensor *x) { return cg_unary_forward(&cg_op_isnan, x, NULL, 0); }

/* ================================================================ ops below: one formula each
 * UNARY_OP(name, node, amp, saves_input, saves_output, backward, cpu table...)
 * declares the descriptor and the entry point. Formulas (CG_GRAD) see the
 * saved tensor as s: the input x (saves_input) or the output y (saves_output).
 * AMP: none of these is on PyTorch's CPU autocast lists, so all keep their dtype. */
#define UNARY_OP(name, NODE, AMP, SIN, SOUT, BW, ...)                            \
    const cg_unary_op cg_op_##name = {                                           \
        .schema = {#name, NODE, 1, AMP, false, SIN, SOUT},                       \
        .arity = 1, .out_dtype = CG_SAME_DTYPE, .cpu = {__VA_ARGS__}, .backward = BW, \
    };                                                                           \
    cg_tensor *cg_##name(cg_tensor *x) { return cg_unary_forward(&cg_op_##name, x, NULL, 0); }
#define FLOAT_OP_X(name, NODE, AMP) UNARY_OP(name, NODE, AMP, true, false, name##_backward, CG_FLOAT_TABLE(name))
#define FLOAT_OP_Y(name, NODE, AMP) UNARY_OP(name, NODE, AMP, false, true, name##_backward, CG_FLOAT_TABLE(name))

#define K_LN2 0.69314718055994530942
#define K_LN10 2.30258509299404568402
#define K_2_SQRTPI 1.12837916709551257390 /* 2/sqrt(pi) */
#define K_SQRTPI_2 0.88622692545275801365 /* sqrt(pi)/2 */

/* ---------------------------------------------------------------- abs: d = sign(x) (0 at 0) */
CG_UNARY_FLOAT_LOOPS(abs, fabsf(x), fabs(x))
CG_UNARY_SINT_LOOPS(abs, x < 0 ? -x : x)
CG_UNARY_LOOP(abs_u8, uint8_t, uint8_t, uint8_t, CG_ID, CG_ID, x)
CG_GRAD(abs, MUL(g, TK(cg_sign(s))))
UNARY_OP(abs, "AbsBackward0", CG_AMP_KEEP, true, false, abs_backward, CG_FLOAT_TABLE(abs), CG_INT_TABLE(abs))

/* ---------------------------------------------------------------- sign (NaN -> 0, as PyTorch); zero gradient */
CG_UNARY_FLOAT_LOOPS(sign, (float)((x > 0) - (x < 0)), (double)((x > 0) - (x < 0)))
CG_UNARY_SINT_LOOPS(sign, (x > 0) - (x < 0))
CG_UNARY_LOOP(sign_u8, uint8_t, uint8_t, uint8_t, CG_ID, CG_ID, x > 0)
CG_UNARY_LOOP(sign_b, uint8_t, uint8_t, uint8_t, CG_ID, CG_ID, x != 0)
UNARY_OP(sign, "SignBackward0", CG_AMP_KEEP, false, false, cg_zero_backward, CG_FLOAT_TABLE(sign), CG_INT_TABLE(sign),
         [CG_DTYPE_BOOL] = sign_b)

/* ---------------------------------------------------------------- reciprocal: d = -y^2 */
CG_UNARY_FLOAT_LOOPS(reciprocal, 1.0f / x, 1.0 / x)
CG_GRAD(reciprocal, NEG(MUL(MUL(g, s), s)))
FLOAT_OP_Y(reciprocal, "ReciprocalBackward0", CG_AMP_KEEP)

/* ---------------------------------------------------------------- square: d = 2x
 * integer squares wrap (computed in uint64 so overflow is defined) */
CG_UNARY_FLOAT_LOOPS(square, x * x, x * x)
CG_UNARY_INT_LOOPS(square, (uint64_t)x * (uint64_t)x)
CG_GRAD(square, MUL(g, SCALE(s, 2.0)))
UNARY_OP(square, "PowBackward0", CG_AMP_KEEP, true, false, square_backward, CG_FLOAT_TABLE(square), CG_INT_TABLE(square))

/* ---------------------------------------------------------------- sqrt: d = 1/(2y) */
CG_UNARY_FLOAT_LOOPS(sqrt, sqrtf(x), sqrt(x))
CG_GRAD(sqrt, DIV(g, SCALE(s, 2.0)))
FLOAT_OP_Y(sqrt, "SqrtBackward0", CG_AMP_KEEP)

/* ---------------------------------------------------------------- rsqrt: d = -y^3/2 */
CG_UNARY_FLOAT_LOOPS(rsqrt, 1.0f / sqrtf(x), 1.0 / sqrt(x))
CG_GRAD(rsqrt, SCALE(MUL(MUL(MUL(g, s), s), s), -0.5))
FLOAT_OP_Y(rsqrt, "RsqrtBackward0", CG_AMP_KEEP)

/* ---------------------------------------------------------------- exp2: d = y ln2 */
CG_UNARY_FLOAT_LOOPS(exp2, exp2f(x), exp2(x))
CG_GRAD(exp2, SCALE(MUL(g, s), K_LN2))
FLOAT_OP_Y(exp2, "Exp2Backward0", CG_AMP_KEEP)

/* ---------------------------------------------------------------- expm1: d = y + 1 */
CG_UNARY_FLOAT_LOOPS(expm1, cg_vm_expm1f(x), expm1(x))
CG_GRAD(expm1, MUL(g, SHIFT(s, 1.0)))
FLOAT_OP_Y(expm1, "Expm1Backward0", CG_AMP_KEEP)

/* ---------------------------------------------------------------- log family: d = 1/(x ln b), 1/(1+x) */
CG_UNARY_FLOAT_LOOPS(log, cg_vm_logf(x), log(x))
CG_GRAD(log, DIV(g, s))
FLOAT_OP_X(log, "LogBackward0", CG_AMP_KEEP)

CG_UNARY_FLOAT_LOOPS(log2, log2f(x), log2(x))
CG_GRAD(log2, DIV(g, SCALE(s, K_LN2)))
FLOAT_OP_X(log2, "Log2Backward0", CG_AMP_KEEP)

CG_UNARY_FLOAT_LOOPS(log10, log10f(x), log10(x))
CG_GRAD(log10, DIV(g, SCALE(s, K_LN10)))
FLOAT_OP_X(log10, "Log10Backward0", CG_AMP_KEEP)

CG_UNARY_FLOAT_LOOPS(log1p, cg_vm_log1pf(x), log1p(x))
CG_GRAD(log1p, DIV(g, SHIFT(s, 1.0)))
FLOAT_OP_X(log1p, "Log1PBackward0", CG_AMP_KEEP)

/* ---------------------------------------------------------------- trigonometric */
CG_UNARY_FLOAT_LOOPS(sin, sinf(x), sin(x))
CG_GRAD(sin, MUL(g, TK(cg_cos(s))))
FLOAT_OP_X(sin, "SinBackward0", CG_AMP_KEEP)

CG_UNARY_FLOAT_LOOPS(cos, cosf(x), cos(x))
CG_GRAD(cos, NEG(MUL(g, TK(cg_sin(s)))))
FLOAT_OP_X(cos, "CosBackward0", CG_AMP_KEEP)

/* d = 1 + y^2 */
CG_UNARY_FLOAT_LOOPS(tan, tanf(x), tan(x))
CG_GRAD(tan, MUL(g, SHIFT(SQ(s), 1.0)))
FLOAT_OP_Y(tan, "TanBackward0", CG_AMP_KEEP)

/* d = ±rsqrt(1 - x^2) */
CG_UNARY_FLOAT_LOOPS(asin, asinf(x), asin(x))
CG_GRAD(asin, MUL(g, TK(cg_rsqrt(RSUB(1.0, SQ(s))))))
FLOAT_OP_X(asin, "AsinBackward0", CG_AMP_KEEP)

CG_UNARY_FLOAT_LOOPS(acos, acosf(x), acos(x))
CG_GRAD(acos, NEG(MUL(g, TK(cg_rsqrt(RSUB(1.0, SQ(s)))))))
FLOAT_OP_X(acos, "AcosBackward0", CG_AMP_KEEP)

/* d = 1/(1 + x^2) */
CG_UNARY_FLOAT_LOOPS(atan, atanf(x), atan(x))
CG_GRAD(atan, DIV(g, SHIFT(SQ(s), 1.0)))
FLOAT_OP_X(atan, "AtanBackward0", CG_AMP_KEEP)

/* ---------------------------------------------------------------- hyperbolic */
CG_UNARY_FLOAT_LOOPS(sinh, sinhf(x), sinh(x))
CG_GRAD(sinh, MUL(g, TK(cg_cosh(s))))
FLOAT_OP_X(sinh, "SinhBackward0", CG_AMP_KEEP)

CG_UNARY_FLOAT_LOOPS(cosh, coshf(x), cosh(x))
CG_GRAD(cosh, MUL(g, TK(cg_sinh(s))))
FLOAT_OP_X(cosh, "CoshBackward0", CG_AMP_KEEP)

/* d = 1 - y^2 */
CG_UNARY_FLOAT_LOOPS(tanh, cg_vm_tanhf(x), tanh(x))
CG_GRAD(tanh, TK(cg_act_grad(CG_ACT_GRAD_TANH, g, s)))
FLOAT_OP_Y(tanh, "TanhBackward0", CG_AMP_KEEP)

/* d = rsqrt(x^2 + 1), rsqrt(x^2 - 1), 1/(1 - x^2) */
CG_UNARY_FLOAT_LOOPS(asinh, asinhf(x), asinh(x))
CG_GRAD(asinh, MUL(g, TK(cg_rsqrt(SHIFT(SQ(s), 1.0)))))
FLOAT_OP_X(asinh, "AsinhBackward0", CG_AMP_KEEP)

CG_UNARY_FLOAT_LOOPS(acosh, acoshf(x), acosh(x))
CG_GRAD(acosh, MUL(g, TK(cg_rsqrt(SHIFT(SQ(s), -1.0)))))
FLOAT_OP_X(acosh, "AcoshBackward0", CG_AMP_KEEP)

CG_UNARY_FLOAT_LOOPS(atanh, atanhf(x), atanh(x))
CG_GRAD(atanh, DIV(g, RSUB(1.0, SQ(s))))
FLOAT_OP_X(atanh, "AtanhBackward0", CG_AMP_KEEP)

/* ---------------------------------------------------------------- erf family */
/* d erf = 2/sqrt(pi) exp(-x^2) */
CG_UNARY_FLOAT_LOOPS(erf, cg_vm_erff(x), erf(x))
CG_GRAD(erf, MUL(g, SCALE(TK(cg_exp(NEG(SQ(s)))), K_2_SQRTPI)))
FLOAT_OP_X(erf, "ErfBackward0", CG_AMP_KEEP)

CG_UNARY_FLOAT_LOOPS(erfc, cg_vm_erfcf(x), erfc(x))
CG_GRAD(erfc, MUL(g, SCALE(TK(cg_exp(NEG(SQ(s)))), -K_2_SQRTPI)))
FLOAT_OP_X(erfc, "ErfcBackward0", CG_AMP_KEEP)

/* erfinv: Giles' single-precision approximation ("Approximating the erfinv
 * function", GPU Computing Gems, 2011) refined by two Newton steps on erf,
 * all in double; |y| == 1 gives ±inf, |y| > 1 NaN. */
static double erfinv_d(double y) {
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
        double d = K_2_SQRTPI * exp(-x * x);
        if (d > 0) x -= (erf(x) - y) / d;
    }
    return x;
}
CG_UNARY_FLOAT_LOOPS(erfinv, (float)erfinv_d(x), erfinv_d(x))
/* d = sqrt(pi)/2 exp(y^2) */
CG_GRAD(erfinv, MUL(g, SCALE(TK(cg_exp(SQ(s))), K_SQRTPI_2)))
FLOAT_OP_Y(erfinv, "ErfinvBackward0", CG_AMP_KEEP)

/* ---------------------------------------------------------------- rounding: zero gradient;
 * integer inputs are returned unchanged (as PyTorch does) */
/* the barebones unsigned dtypes: copies (PyTorch runs rounding and nan_to_num on them) */
#define UINT_COPY_LOOPS(name)                                                        \
    CG_UNARY_LOOP(name##_u16, uint16_t, uint16_t, uint16_t, CG_ID, CG_ID, x)          \
    CG_UNARY_LOOP(name##_u32, uint32_t, uint32_t, uint32_t, CG_ID, CG_ID, x)          \
    CG_UNARY_LOOP(name##_u64, uint64_t, uint64_t, uint64_t, CG_ID, CG_ID, x)
#define ROUNDING_OP(name, NODE, FF, FD)                                                          \
    CG_UNARY_FLOAT_LOOPS(name, FF(x), FD(x))                                                     \
    CG_UNARY_INT_LOOPS(name, x)                                                                  \
    UINT_COPY_LOOPS(name)                                                                        \
    UNARY_OP(name, NODE, CG_AMP_KEEP, false, false, cg_zero_backward, CG_FLOAT_TABLE(name), CG_INT_TABLE(name), \
             CG_UINT_TABLE(name))
ROUNDING_OP(floor, "FloorBackward0", floorf, floor)
ROUNDING_OP(ceil, "CeilBackward0", ceilf, ceil)
ROUNDING_OP(round, "RoundBackward0", rintf, rint) /* rint: half to even in the default rounding mode */
ROUNDING_OP(trunc, "TruncBackward0", truncf, trunc)

/* ---------------------------------------------------------------- frac = x - trunc(x): d = 1 */
CG_UNARY_FLOAT_LOOPS(frac, x - truncf(x), x - trunc(x))
static cg_status frac_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    if (cg_node_needs_grad(node, 0)) {
        cg_tensor_retain(g[0]);
        gin[0] = g[0];
    }
    return CG_OK;
}
UNARY_OP(frac, "FracBackward0", CG_AMP_KEEP, false, false, frac_backward, CG_FLOAT_TABLE(frac))

/* ================================================================ ops with scalar parameters */

/* ---------------------------------------------------------------- nan_to_num: p = {nan, posinf, neginf};
 * gradient passes where x is finite. Integer inputs are copied. */
#define NTN(x, CT) (isnan(x) ? (CT)p[0] : isinf(x) ? ((x) > 0 ? (CT)p[1] : (CT)p[2]) : (x))
CG_UNARY_FLOAT_LOOPS(nan_to_num, NTN(x, float), NTN(x, double))
CG_UNARY_INT_LOOPS(nan_to_num, x)
CG_UNARY_LOOP(nan_to_num_b, uint8_t, uint8_t, uint8_t, CG_ID, CG_ID, x)
UINT_COPY_LOOPS(nan_to_num)
CG_GRAD(nan_to_num, TK(cg_grad_gate(CG_GATE_FINITE, g, s, 0, 0, 1, 0)))
const cg_unary_op cg_op_nan_to_num = {
    .schema = {"nan_to_num", "NanToNumBackward0", 1, CG_AMP_KEEP, false, true, false},
    .arity = 1, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(nan_to_num), CG_INT_TABLE(nan_to_num), [CG_DTYPE_BOOL] = nan_to_num_b,
            CG_UINT_TABLE(nan_to_num)},
    .backward = nan_to_num_backward,
};
cg_tensor *cg_nan_to_num(cg_tensor *x, double nan, double posinf, double neginf) {
    double p[3] = {nan, posinf, neginf};
    return cg_unary_forward(&cg_op_nan_to_num, x, p, 3);
}

/* ---------------------------------------------------------------- clamp with scalar bounds:
 * p = {lo, hi} (±inf when absent); NaN propagates; lo > hi gives hi (PyTorch).
 * Gradient passes where lo <= x <= hi. Integer bounds saturate to the dtype's range. */
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
CG_UNARY_FLOAT_LOOPS(clamp_scalar, clamp_f(x, p), clamp_d(x, p))
CG_UNARY_LOOP(clamp_scalar_u8, uint8_t, uint8_t, uint8_t, CG_ID, CG_ID, clamp_uint8_t(x, p))
CG_UNARY_LOOP(clamp_scalar_i8, int8_t, int8_t, int8_t, CG_ID, CG_ID, clamp_int8_t(x, p))
CG_UNARY_LOOP(clamp_scalar_i16, int16_t, int16_t, int16_t, CG_ID, CG_ID, clamp_int16_t(x, p))
CG_UNARY_LOOP(clamp_scalar_i32, int32_t, int32_t, int32_t, CG_ID, CG_ID, clamp_int32_t(x, p))
CG_UNARY_LOOP(clamp_scalar_i64, int64_t, int64_t, int64_t, CG_ID, CG_ID, clamp_int64_t(x, p))
CG_GRAD(clamp_scalar, TK(cg_grad_gate(CG_GATE_INCL, g, s, p[0], p[1], 1, 0)))
static const cg_unary_op k_clamp = {
    .schema = {"clamp", "ClampBackward1", 1, CG_AMP_KEEP, false, true, false},
    .arity = 1, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(clamp_scalar), CG_INT_TABLE(clamp_scalar)},
    .backward = clamp_scalar_backward,
};
static cg_status clamp_params(const char *op, const double *min, const double *max, double *p) {
    CG_CHECK_S(min || max, CG_ERR_VALUE, "[%s] at least one of 'min' or 'max' must not be None", op);
    p[0] = min ? *min : -INFINITY;
    p[1] = max ? *max : INFINITY;
    return CG_OK;
}
cg_tensor *cg_clamp_scalar(cg_tensor *x, const double *min, const double *max) {
    double p[2];
    if (clamp_params("clamp", min, max, p)) return NULL;
    return cg_unary_forward(&k_clamp, x, p, 2);
}
cg_status cg_clamp_(cg_tensor *self, const double *min, const double *max) {
    double p[2];
    if (clamp_params("clamp_", min, max, p)) return cg_last_error();
    return cg_elementwise_inplace(&k_clamp, 1, &self, p, 2);
}

/* ---------------------------------------------------------------- pow(x, e), e a scalar: p = {e}.
 * The loop picks a specialised body once per call (x*x, x*x*x, sqrt, 1/x).
 * Integer tensors take non-negative integral exponents (wrapping products). */
#define POW_FLOAT(sfx, T, CT, LD, ST, SQRT, POW)                                                 \
    CG_UNARY_LOOP(pow2_##sfx, T, CT, T, LD, ST, x * x)                                           \
    CG_UNARY_LOOP(pow3_##sfx, T, CT, T, LD, ST, x * x * x)                                       \
    CG_UNARY_LOOP(powh_##sfx, T, CT, T, LD, ST, SQRT(x))                                         \
    CG_UNARY_LOOP(powm1_##sfx, T, CT, T, LD, ST, (CT)1 / x)                                      \
    CG_UNARY_LOOP(powg_##sfx, T, CT, T, LD, ST, POW(x, (CT)p[0]))                                \
    static void pow_scalar_##sfx(char **a, const int64_t *s, int64_t n, const void *params) {    \
        double e = ((const double *)params)[0];                                                  \
        cg_loop_fn f = e == 2 ? pow2_##sfx : e == 3 ? pow3_##sfx : e == 0.5 ? powh_##sfx        \
                     : e == -1 ? powm1_##sfx : powg_##sfx;                                       \
        f(a, s, n, params);                                                                      \
    }
POW_FLOAT(f32, float, float, CG_ID, CG_ID, sqrtf, powf)
POW_FLOAT(f64, double, double, CG_ID, CG_ID, sqrt, pow)
POW_FLOAT(f16, cg_f16, float, CG_LD_F16, CG_ST_F16, sqrtf, powf)
POW_FLOAT(bf16, cg_bf16, float, CG_LD_BF16, CG_ST_BF16, sqrtf, powf)

static inline uint64_t ipow_u64(uint64_t b, double e) {
    uint64_t k = e >= 1.8e19 ? UINT64_MAX : (uint64_t)e, r = 1;
    for (; k; k >>= 1, b *= b)
        if (k & 1) r *= b;
    return r;
}
CG_UNARY_INT_LOOPS(pow_scalar, ipow_u64((uint64_t)x, p[0]))

/* d = e x^(e-1); zero when e == 0 (PyTorch) */
CG_GRAD(pow_scalar, p[0] == 0 ? TK(cg_zeros_like(g)) : MUL(g, SCALE(TK(cg_pow_scalar(s, p[0] - 1)), p[0])))
static const cg_unary_op k_pow_scalar = {
    .schema = {"pow", "PowBackward0", 1, CG_AMP_KEEP, false, true, false},
    .arity = 1, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(pow_scalar), CG_INT_TABLE(pow_scalar)},
    .backward = pow_scalar_backward,
};
cg_tensor *cg_pow_scalar(cg_tensor *x, double exponent) {
    CG_CHECK(x, CG_ERR_VALUE, "[pow] argument is NULL");
    if (!cg_dtype_is_floating(x->dtype) && x->dtype != CG_DTYPE_BOOL) {
        CG_CHECK(isfinite(exponent) && exponent == floor(exponent), CG_ERR_DTYPE,
                 "[pow] non-integral exponent %g for a %s tensor (the engine never promotes; cast first)", exponent,
                 cg_dtype_name(x->dtype));
        CG_CHECK(exponent >= 0, CG_ERR_VALUE, "[pow] Integers to negative integer powers are not allowed (exponent %g)",
                 exponent);
    }
    double p[1] = {exponent};
    return cg_unary_forward(&k_pow_scalar, x, p, 1);
}

/* ---------------------------------------------------------------- pow(base, x), base a scalar: p = {base}.
 * d = y ln(base); with base 0 the gradient is 0 where x >= 0 (y <= 1), as PyTorch masks it. */
CG_UNARY_FLOAT_LOOPS(rpow_scalar, powf((float)p[0], x), pow(p[0], x))
CG_GRAD(rpow_scalar, p[0] == 0 ? WHERE(LE(s, 1.0), TK(cg_zeros_like(g)), SCALE(MUL(g, s), -INFINITY))
                               : SCALE(MUL(g, s), log(p[0])))
static const cg_unary_op k_rpow_scalar = {
    .schema = {"pow", "PowBackward2", 1, CG_AMP_KEEP, false, false, true},
    .arity = 1, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(rpow_scalar)},
    .backward = rpow_scalar_backward,
};
cg_tensor *cg_rpow_scalar(double base, cg_tensor *x) {
    double p[1] = {base};
    return cg_unary_forward(&k_rpow_scalar, x, p, 1);
}
