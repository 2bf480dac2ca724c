/* unary_math.c — the backward formulas of the unary math ops of the op table
 * (neg, abs, sign, powers, exp/log family, trigonometric and hyperbolic
 * functions, erf family, rounding; their descriptors, entry points and CPU
 * loops are generated from src/ops/elementwise_ops.py), and the unary ops with
 * scalar parameters (nan_to_num, clamp with scalar bounds, pow with a scalar):
 * descriptor, loops and backward formula side by side. Backward formulas are
 * cg ops (unary_internal.h), so every op is differentiable again. Formulas
 * (CG_GRAD_ROW) see the saved tensor as s: the input x or the output y, as the
 * row's `saves` says. */
#include "unary_internal.h"

#define K_LN2 0.69314718055994530942
#define K_LN10 2.30258509299404568402
#define K_2_SQRTPI 1.12837916709551257390 /* 2/sqrt(pi) */
#define K_SQRTPI_2 0.88622692545275801365 /* sqrt(pi)/2 */

/* neg: d = -1 */
cg_status cg_bw_neg(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    (void)node;
    return (gin[0] = cg_neg(g[0])) ? CG_OK : cg_last_error();
}

/* exp: d/dx = exp(x) = out */
cg_status cg_bw_exp(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    cg_tensor *out = cg_node_saved(node, 0);
    if (!out) return cg_last_error();
    gin[0] = cg_mul(g[0], out);
    cg_tensor_release(out);
    return gin[0] ? CG_OK : cg_last_error();
}

/* abs: d = sign(x) (0 at 0); sign, floor, ceil, round, trunc: zero gradient (cg_zero_backward) */
CG_GRAD_ROW(abs, MUL(g, TK(cg_sign(s))))
/* reciprocal: d = -y^2 */
CG_GRAD_ROW(reciprocal, NEG(MUL(MUL(g, s), s)))
/* square: d = 2x */
CG_GRAD_ROW(square, MUL(g, SCALE(s, 2.0)))
/* sqrt: d = 1/(2y); rsqrt: d = -y^3/2 */
CG_GRAD_ROW(sqrt, DIV(g, SCALE(s, 2.0)))
CG_GRAD_ROW(rsqrt, SCALE(MUL(MUL(MUL(g, s), s), s), -0.5))
/* exp2: d = y ln2; expm1: d = y + 1 */
CG_GRAD_ROW(exp2, SCALE(MUL(g, s), K_LN2))
CG_GRAD_ROW(expm1, MUL(g, SHIFT(s, 1.0)))
/* log family: d = 1/(x ln b), 1/(1+x) */
CG_GRAD_ROW(log, DIV(g, s))
CG_GRAD_ROW(log2, DIV(g, SCALE(s, K_LN2)))
CG_GRAD_ROW(log10, DIV(g, SCALE(s, K_LN10)))
CG_GRAD_ROW(log1p, DIV(g, SHIFT(s, 1.0)))
/* trigonometric; tan: d = 1 + y^2; asin, acos: d = ±rsqrt(1 - x^2); atan: d = 1/(1 + x^2) */
CG_GRAD_ROW(sin, MUL(g, TK(cg_cos(s))))
CG_GRAD_ROW(cos, NEG(MUL(g, TK(cg_sin(s)))))
CG_GRAD_ROW(tan, MUL(g, SHIFT(SQ(s), 1.0)))
CG_GRAD_ROW(asin, MUL(g, TK(cg_rsqrt(RSUB(1.0, SQ(s))))))
CG_GRAD_ROW(acos, NEG(MUL(g, TK(cg_rsqrt(RSUB(1.0, SQ(s)))))))
CG_GRAD_ROW(atan, DIV(g, SHIFT(SQ(s), 1.0)))
/* hyperbolic; tanh: d = 1 - y^2 (fused); asinh, acosh, atanh: d = rsqrt(x^2 + 1), rsqrt(x^2 - 1), 1/(1 - x^2) */
CG_GRAD_ROW(sinh, MUL(g, TK(cg_cosh(s))))
CG_GRAD_ROW(cosh, MUL(g, TK(cg_sinh(s))))
CG_GRAD_ROW(tanh, TK(cg_act_grad(CG_ACT_GRAD_TANH, g, s)))
CG_GRAD_ROW(asinh, MUL(g, TK(cg_rsqrt(SHIFT(SQ(s), 1.0)))))
CG_GRAD_ROW(acosh, MUL(g, TK(cg_rsqrt(SHIFT(SQ(s), -1.0)))))
CG_GRAD_ROW(atanh, DIV(g, RSUB(1.0, SQ(s))))
/* erf family: d erf = 2/sqrt(pi) exp(-x^2); d erfinv = sqrt(pi)/2 exp(y^2) */
CG_GRAD_ROW(erf, MUL(g, SCALE(TK(cg_exp(NEG(SQ(s)))), K_2_SQRTPI)))
CG_GRAD_ROW(erfc, MUL(g, SCALE(TK(cg_exp(NEG(SQ(s)))), -K_2_SQRTPI)))
CG_GRAD_ROW(erfinv, MUL(g, SCALE(TK(cg_exp(SQ(s))), K_SQRTPI_2)))

/* frac = x - trunc(x): d = 1 */
cg_status cg_bw_frac(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    if (cg_node_needs_grad(node, 0)) {
        cg_tensor_retain(g[0]);
        gin[0] = g[0];
    }
    return CG_OK;
}

/* the barebones unsigned dtypes: copies (PyTorch runs nan_to_num on them) */
#define UINT_COPY_LOOPS(name)                                                        \
    CG_UNARY_LOOP(name##_u16, uint16_t, uint16_t, uint16_t, CG_ID, CG_ID, x)          \
    CG_UNARY_LOOP(name##_u32, uint32_t, uint32_t, uint32_t, CG_ID, CG_ID, x)          \
    CG_UNARY_LOOP(name##_u64, uint64_t, uint64_t, uint64_t, CG_ID, CG_ID, x)

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
