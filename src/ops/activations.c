/* activations.c — elementwise activation functions (relu family, elu family,
 * gelu, silu, mish, softplus, softsign, sigmoid family, hard* functions): the
 * backward formula of each, and the descriptors of those with parameters (hand
 * rows of the op table src/ops/elementwise_ops.py, whose CPU loops are in
 * src/backend/cpu/elementwise_hand.c; the parameter-free ones' descriptors and
 * loops are generated). Gradients at kinks follow PyTorch (relu'(0) = 0,
 * hardtanh' = 0 on its bounds, ...); masks use the differentiable gradient
 * gates of unary_internal.h. */
#include "unary_internal.h"

/* Note [NaN in piecewise gradients]: PyTorch's CPU backward of a piecewise
 * activation at a NaN input depends on where the element sits: its scalar
 * loop (single elements, the tail of a row) tests the branch conditions as
 * written (elu: x <= 0 ? negative branch : grad; hardswish: x <= -3 ? 0 :
 * x < 3 ? ... : grad; hardshrink / softshrink: inside the band ? 0 : grad),
 * so a NaN takes the last branch and the gradient passes, while its
 * vectorised body gives NaN or 0 there. cgrad follows the scalar definition
 * (the one PyTorch states) for every element where the formula is a branch
 * on x: elu / celu / selu pass scale * grad (like relu's !(x <= 0) gate),
 * hardshrink / softshrink pass grad. Where the gradient is a mask (hardtanh,
 * relu6, hardsigmoid, hardswish) the gate stays closed at NaN, 0, so a
 * masked-out NaN does not make the input's gradient NaN (the convention of
 * tests/python/test_special_values.py). */


/* descriptor of the hand row ROW, a unary op whose formula reads its saved input (SIN) or output (SOUT) */
#define ACT_OP(var, ROW, NAME, NODE, AMP, SIN, SOUT, BW)                                        \
    static const cg_unary_op var = {                                                           \
        .id = CG_OP_##ROW, .schema = {NAME, NODE, 1, AMP, false, SIN, SOUT},                   \
        .arity = 1, .out_dtype = CG_SAME_DTYPE, .dtypes = CG_OP_DTYPES_##ROW, .backward = BW,  \
    };
/* ---------------------------------------------------------------- relu: NaN propagates; d = [!(y <= 0)] */
CG_GRAD_ROW(relu, TK(cg_grad_gate(CG_GATE_NLE, g, s, 0, 0, 1, 0)))

/* ---------------------------------------------------------------- hardtanh(lo, hi), relu6 = hardtanh(0, 6):
 * d = [lo < x < hi], read from the output (lo < y < hi is the same set); 0 at NaN, as
 * PyTorch's vectorised loop gives (its scalar tail passes the gradient) */
CG_GRAD(hardtanh, TK(cg_grad_gate(CG_GATE_EXCL, g, s, p[0], p[1], 1, 0)))
ACT_OP(k_hardtanh, HARDTANH, "hardtanh", "HardtanhBackward0", CG_AMP_KEEP, false, true, hardtanh_backward)
cg_tensor *cg_hardtanh(cg_tensor *x, double min_val, double max_val) {
    CG_CHECK(min_val <= max_val, CG_ERR_VALUE, "[hardtanh] min_val (%g) must be less than or equal to max_val (%g)",
             min_val, max_val);
    double p[2] = {min_val, max_val};
    return cg_unary_forward(&k_hardtanh, x, p, 2);
}

CG_GRAD_ROW(relu6, TK(cg_grad_gate(CG_GATE_EXCL, g, s, 0, 6, 1, 0)))

/* ---------------------------------------------------------------- leaky_relu: p = {slope}; d = x > 0 ? 1 : slope */
CG_GRAD(leaky_relu, TK(cg_grad_gate(CG_GATE_GT, g, s, 0, 0, 1, p[0])))
ACT_OP(k_leaky_relu, LEAKY_RELU, "leaky_relu", "LeakyReluBackward0", CG_AMP_KEEP, true, false, leaky_relu_backward)
cg_tensor *cg_leaky_relu(cg_tensor *x, double negative_slope) {
    return cg_unary_forward(&k_leaky_relu, x, &negative_slope, 1);
}
cg_status cg_leaky_relu_(cg_tensor *self, double negative_slope) {
    return cg_elementwise_inplace(&k_leaky_relu, 1, &self, &negative_slope, 1);
}

/* ---------------------------------------------------------------- elu family:
 * f(x) = x > 0 ? scale*x : scale*alpha*expm1(input_scale*x); p = {alpha, scale, input_scale}.
 * elu: (alpha, 1, 1); celu: (alpha, 1, 1/alpha); selu: fixed constants. */
/* d = x <= 0 ? scale*alpha*is*exp(is*min(x, 0)) : scale (min keeps the unused branch finite); NaN takes
 * the second branch, PyTorch's test (Note [NaN in piecewise gradients]) */
static cg_tensor *elu_formula_(cg_tmp *A_, cg_tensor *g, cg_tensor *x, double alpha, double scale, double is) {
    double zero = 0;
    cg_tensor *neg = MUL(SCALE(g, scale * alpha * is), TK(cg_exp(SCALE(TK(cg_clamp_scalar(x, NULL, &zero)), is))));
    return WHERE(LE(x, 0), neg, SCALE(g, scale));
}
CG_GRAD(elu, elu_formula_(A_, g, s, p[0], p[1], p[2]))
ACT_OP(k_elu, ELU, "elu", "EluBackward0", CG_AMP_KEEP, true, false, elu_backward)
ACT_OP(k_celu, CELU, "celu", "CeluBackward0", CG_AMP_KEEP, true, false, elu_backward)
cg_tensor *cg_elu(cg_tensor *x, double alpha) {
    double p[3] = {alpha, 1.0, 1.0};
    return cg_unary_forward(&k_elu, x, p, 3);
}
cg_tensor *cg_celu(cg_tensor *x, double alpha) {
    CG_CHECK(alpha != 0, CG_ERR_VALUE, "[celu] alpha must not be zero (ZeroDivisionError)");
    double p[3] = {alpha, 1.0, 1.0 / alpha};
    return cg_unary_forward(&k_celu, x, p, 3);
}

CG_GRAD_ROW(selu, elu_formula_(A_, g, s, CG_SELU_ALPHA, CG_SELU_SCALE, 1.0))

/* ---------------------------------------------------------------- gelu (exact): x * Phi(x), Phi(x) = erfc(-x/sqrt2)/2;
 * d = Phi(x) + x phi(x). At -inf both are the limit, -0 (x Phi(x) literally is -inf * 0);
 * the negative tail underflows to -0 (vmath.h) */
CG_GRAD_ROW(gelu, TK(cg_act_grad(CG_ACT_GRAD_GELU, g, s)))

/* gelu (tanh approximation): 0.5 x (1 + tanh(u)), u = k (x + c x^3), k = sqrt(2/pi).
 * 0.5 (1 + tanh(u)) = sigmoid(2u) = s: f = x s, one exp and no cancellation for u << 0
 * (1 + tanh(u) rounds to 0 from u = -9 in float, -19 in double, where f is still normal).
 * f(-inf) = -0, the limit (x s literally is -inf * 0); f is -0 below x = -40 anyway.
 * The relative error is about |2u| times the unit roundoff (u's rounding): inherent in
 * evaluating the formula in the working precision. */
/* d = s + 0.5 x (1 - t^2) k (1 + 3 c x^2) = s (1 + 2k x (1 - s) (1 + 3 c x^2)), using
 * 1 - t^2 = 4 s (1 - s) and 1 - s = sigmoid(-2u): no cancellation in either tail (written
 * with t, d is 0 in float from x = -8 on). The bracket's x is clamped to [-30, 30]: beyond
 * it 1 - s (x > 0) or s (x < 0) is exactly 0 in every dtype (from |x| = 21.5 in double), and
 * within it the bracket stays finite even in float16 (d = 1 at +inf and 0 at -inf, the
 * limits, not inf * 0). */
static cg_tensor *gelu_tanh_formula_(cg_tmp *A_, cg_tensor *g, cg_tensor *x) {
    double lo = -30, hi = 30;
    cg_tensor *z = SCALE(MUL(x, SHIFT(SCALE(SQ(x), CG_GELU_C), 1.0)), 2 * CG_SQRT_2_PI);
    cg_tensor *s = TK(cg_sigmoid(z)), *s_neg = TK(cg_sigmoid(NEG(z)));
    cg_tensor *xc = TK(cg_clamp_scalar(x, &lo, &hi));
    cg_tensor *bracket = SHIFT(SCALE(MUL(MUL(xc, s_neg), SHIFT(SCALE(SQ(xc), 3 * CG_GELU_C), 1.0)), 2 * CG_SQRT_2_PI), 1.0);
    return MUL(g, MUL(s, bracket));
}
CG_GRAD(gelu_tanh, gelu_tanh_formula_(A_, g, s))
ACT_OP(k_gelu_tanh, GELU_TANH, "gelu", "GeluBackward0", CG_AMP_KEEP, true, false, gelu_tanh_backward)
cg_tensor *cg_gelu(cg_tensor *x, bool tanh_approx) {
    return cg_unary_forward(tanh_approx ? &k_gelu_tanh : &cg_op_gelu, x, NULL, 0);
}

/* ---------------------------------------------------------------- sigmoid: d = y (1 - y) */
CG_GRAD_ROW(sigmoid, TK(cg_act_grad(CG_ACT_GRAD_SIGMOID, g, s)))

/* ---------------------------------------------------------------- logsigmoid = min(x,0) - log1p(exp(-|x|)): d = sigmoid(-x) */
CG_GRAD_ROW(logsigmoid, MUL(g, TK(cg_sigmoid(NEG(s)))))

/* ---------------------------------------------------------------- silu = x sigmoid(x): d = s (1 + x (1 - s)) */
CG_GRAD_ROW(silu, TK(cg_act_grad(CG_ACT_GRAD_SILU, g, s)))

/* ---------------------------------------------------------------- softplus: p = {beta, threshold};
 * f = beta x > threshold ? x : log1p(exp(beta x)) / beta; d = beta x > threshold ? 1 : sigmoid(beta x) */
static cg_tensor *softplus_formula_(cg_tmp *A_, cg_tensor *g, cg_tensor *x, double beta, double threshold) {
    cg_tensor *z = SCALE(x, beta);
    return WHERE(GT(z, threshold), g, MUL(g, TK(cg_sigmoid(z))));
}
CG_GRAD(softplus, softplus_formula_(A_, g, s, p[0], p[1]))
ACT_OP(k_softplus, SOFTPLUS, "softplus", "SoftplusBackward0", CG_AMP_KEEP, true, false, softplus_backward)
cg_tensor *cg_softplus(cg_tensor *x, double beta, double threshold) {
    CG_CHECK(beta != 0, CG_ERR_VALUE, "[softplus] beta must not be zero");
    double p[2] = {beta, threshold};
    return cg_unary_forward(&k_softplus, x, p, 2);
}

/* ---------------------------------------------------------------- mish = x tanh(softplus(x)):
 * d = t + x sigmoid(x) (1 - t^2), t = tanh(softplus(x)). In float, with w = e^x,
 * tanh(log(1 + w)) = w (w + 2) / (w (w + 2) + 2) (1 above x = 20, where w^2 would overflow). */
static cg_tensor *mish_formula_(cg_tmp *A_, cg_tensor *g, cg_tensor *x) {
    cg_tensor *t = TK(cg_tanh(TK(cg_softplus(x, 1.0, 20.0))));
    return MUL(g, ADD(t, MUL(MUL(x, TK(cg_sigmoid(x))), RSUB(1.0, SQ(t)))));
}
CG_GRAD_ROW(mish, mish_formula_(A_, g, s))

/* ---------------------------------------------------------------- softsign = x / (1 + |x|): d = 1 / (1 + |x|)^2 */
CG_GRAD_ROW(softsign, DIV(g, SQ(SHIFT(TK(cg_abs(s)), 1.0))))

/* ---------------------------------------------------------------- hardsigmoid = clamp(x/6 + 1/2, 0, 1): d = [-3 < x < 3] / 6 */
CG_GRAD_ROW(hardsigmoid, TK(cg_grad_gate(CG_GATE_EXCL, g, s, -3, 3, 1.0 / 6.0, 0)))

/* ---------------------------------------------------------------- hardswish = x relu6(x + 3) / 6:
 * -0 for x <= -3, -inf included (x * 0 there is NaN); d = x <= -3 ? 0 : x < 3 ? x/3 + 1/2 : 1
 * (PyTorch 2.13's boundaries: 0 at -3, 1 at 3), 0 at NaN (the gate is closed there, as hardtanh's:
 * Note [NaN in piecewise gradients]) */
static cg_tensor *hardswish_formula_(cg_tmp *A_, cg_tensor *g, cg_tensor *x) {
    cg_tensor *mid = WHERE(LT(x, 3.0), MUL(g, SHIFT(SCALE(x, 1.0 / 3.0), 0.5)), g);
    return TK(cg_grad_gate(CG_GATE_GT, mid, x, -3, 0, 1, 0));
}
CG_GRAD_ROW(hardswish, hardswish_formula_(A_, g, s))
