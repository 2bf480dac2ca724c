/* unary_math.c — the backward formulas of the unary math ops of the op table
 * (neg, abs, sign, powers, exp/log family, trigonometric and hyperbolic
 * functions, erf family, rounding; their descriptors, entry points and CPU
 * loops are generated from src/ops/elementwise_ops.py), and the unary ops with
 * scalar parameters (nan_to_num, clamp with scalar bounds, pow with a scalar):
 * descriptor and backward formula side by side (hand rows of the op table,
 * loops in src/backend/cpu/elementwise_hand.c). Backward formulas are
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

/* ================================================================ ops with scalar parameters */

/* ---------------------------------------------------------------- nan_to_num: p = {nan, posinf, neginf};
 * gradient passes where x is finite. Integer inputs are copied. */
CG_GRAD(nan_to_num, TK(cg_grad_gate(CG_GATE_FINITE, g, s, 0, 0, 1, 0)))
const cg_unary_op cg_op_nan_to_num = {
    .id = CG_OP_NAN_TO_NUM,
    .schema = {"nan_to_num", "NanToNumBackward0", 1, CG_AMP_KEEP, false, true, false},
    .arity = 1, .out_dtype = CG_SAME_DTYPE,
    .dtypes = CG_OP_DTYPES_NAN_TO_NUM,
    .backward = nan_to_num_backward,
};
cg_tensor *cg_nan_to_num(cg_tensor *x, double nan, double posinf, double neginf) {
    double p[3] = {nan, posinf, neginf};
    return cg_unary_forward(&cg_op_nan_to_num, x, p, 3);
}

/* ---------------------------------------------------------------- clamp with scalar bounds:
 * p = {lo, hi} (±inf when absent); NaN propagates; lo > hi gives hi (PyTorch).
 * Gradient passes where lo <= x <= hi. Integer bounds saturate to the dtype's range. */
CG_GRAD(clamp_scalar, TK(cg_grad_gate(CG_GATE_INCL, g, s, p[0], p[1], 1, 0)))
static const cg_unary_op k_clamp = {
    .id = CG_OP_CLAMP_SCALAR,
    .schema = {"clamp", "ClampBackward1", 1, CG_AMP_KEEP, false, true, false},
    .arity = 1, .out_dtype = CG_SAME_DTYPE,
    .dtypes = CG_OP_DTYPES_CLAMP_SCALAR,
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
/* d = e x^(e-1); zero when e == 0 (PyTorch) */
CG_GRAD(pow_scalar, p[0] == 0 ? TK(cg_zeros_like(g)) : MUL(g, SCALE(TK(cg_pow_scalar(s, p[0] - 1)), p[0])))
static const cg_unary_op k_pow_scalar = {
    .id = CG_OP_POW_SCALAR,
    .schema = {"pow", "PowBackward0", 1, CG_AMP_KEEP, false, true, false},
    .arity = 1, .out_dtype = CG_SAME_DTYPE,
    .dtypes = CG_OP_DTYPES_POW_SCALAR,
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
CG_GRAD(rpow_scalar, p[0] == 0 ? WHERE(LE(s, 1.0), TK(cg_zeros_like(g)), SCALE(MUL(g, s), -INFINITY))
                               : SCALE(MUL(g, s), log(p[0])))
static const cg_unary_op k_rpow_scalar = {
    .id = CG_OP_RPOW_SCALAR,
    .schema = {"pow", "PowBackward2", 1, CG_AMP_KEEP, false, false, true},
    .arity = 1, .out_dtype = CG_SAME_DTYPE,
    .dtypes = CG_OP_DTYPES_RPOW_SCALAR,
    .backward = rpow_scalar_backward,
};
cg_tensor *cg_rpow_scalar(double base, cg_tensor *x) {
    double p[1] = {base};
    return cg_unary_forward(&k_rpow_scalar, x, p, 1);
}
