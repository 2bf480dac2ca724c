/* unary_grads.c — fused first-derivative kernels of tanh, sigmoid, silu and
 * gelu: g * f'(s) in one elementwise pass (s the saved output or input), with
 * their own backward so that gradients of every order still work
 * (Note [Fused activation gradients]). */
#include "unary_internal.h"

/* Note [Fused activation gradients]: written with cg ops, tanh's gradient
 * g * (1 - y^2) is three elementwise passes and three temporaries; the
 * LSTM's gates run it on every step. These kernels compute the same
 * expression (in the same order, so first-order results are unchanged for
 * float32 / float64; gelu's is vmath.h's form, accurate in the tails) in one
 * pass. Each is a binary op of (g, s) whose backward
 * is the same kernel with respect to g (the map is linear in g) and
 * g * f''(s) in cg ops with respect to s, so create_graph builds a graph that
 * differentiates again. */

#define K_INV_SQRT_2PI 0.39894228040143267794 /* 1/sqrt(2 pi) */

/* g * f''(s), written with cg ops (arena A_) */
static cg_tensor *tanh_d2(cg_tmp *A_, cg_tensor *g, cg_tensor *y) { return SCALE(MUL(g, y), -2.0); }
static cg_tensor *sigmoid_d2(cg_tmp *A_, cg_tensor *g, cg_tensor *y) { return MUL(g, RSUB(1.0, SCALE(y, 2.0))); }
/* silu'' = sg (1 - sg) (2 + x (1 - 2 sg)) */
static cg_tensor *silu_d2(cg_tmp *A_, cg_tensor *g, cg_tensor *x) {
    cg_tensor *sg = TK(cg_sigmoid(x));
    cg_tensor *inner = SHIFT(MUL(x, RSUB(1.0, SCALE(sg, 2.0))), 2.0);
    return MUL(g, MUL(MUL(sg, RSUB(1.0, sg)), inner));
}
/* gelu'' = phi(x) (2 - x^2), from x clamped to [-40, 40]: phi(40) is 0 in float and double,
 * and beyond it x^2 may overflow (0 * inf) */
static cg_tensor *gelu_d2(cg_tmp *A_, cg_tensor *g, cg_tensor *x) {
    double lo = -40, hi = 40;
    cg_tensor *x2 = SQ(TK(cg_clamp_scalar(x, &lo, &hi)));
    cg_tensor *phi = SCALE(TK(cg_exp(SCALE(x2, -0.5))), K_INV_SQRT_2PI);
    return MUL(g, MUL(phi, RSUB(2.0, x2)));
}

typedef cg_tensor *(*d2_formula)(cg_tmp *A_, cg_tensor *g, cg_tensor *s);
static const d2_formula k_d2[CG_ACT_GRAD_COUNT] = {
    [CG_ACT_GRAD_TANH] = tanh_d2,
    [CG_ACT_GRAD_SIGMOID] = sigmoid_d2,
    [CG_ACT_GRAD_SILU] = silu_d2,
    [CG_ACT_GRAD_GELU] = gelu_d2,
};

static const cg_binary_op k_act_grads[CG_ACT_GRAD_COUNT];

/* inputs (g, s); gg = the gradient of g * f'(s) */
static cg_status act_grad_backward(cg_node *node, cg_tensor *const *gg, cg_tensor **gin) {
    cg_act_grad_kind kind = (cg_act_grad_kind)((const cg_binary_op *)node->op - k_act_grads);
    cg_tensor *g = cg_node_saved(node, 0), *s = g ? cg_node_saved(node, 1) : NULL;
    cg_status st = CG_OK;
    if (!s) {
        st = cg_last_error();
        goto done;
    }
    if (cg_node_needs_grad(node, 0) && !(gin[0] = cg_act_grad(kind, gg[0], s))) {
        st = cg_last_error();
        goto done;
    }
    if (cg_node_needs_grad(node, 1)) {
        cg_tmp arena = {.n = 0}, *A_ = &arena;
        cg_tensor *r = MUL(gg[0], k_d2[kind](A_, g, s));
        if (r) cg_tensor_retain(r);
        gin[1] = r;
        if (!r) st = cg_last_error();
        cg_tmp_free(&arena);
    }
done:
    cg_tensor_release(g);
    cg_tensor_release(s);
    return st;
}

/* the hand row <name>_grad (loops in src/backend/cpu/elementwise_hand.c) */
#define ACT_GRAD_OP(name, ROW, NODE)                                                          \
    {                                                                                         \
        .id = CG_OP_##ROW, .schema = {#name "_backward", NODE, 1, CG_AMP_KEEP, false, true, false}, \
        .arity = 2, .out_dtype = CG_SAME_DTYPE, .dtypes = CG_OP_DTYPES_##ROW,                 \
        .backward = act_grad_backward,                                                        \
    }
static const cg_binary_op k_act_grads[CG_ACT_GRAD_COUNT] = {
    [CG_ACT_GRAD_TANH] = ACT_GRAD_OP(tanh, TANH_GRAD, "TanhBackwardBackward0"),
    [CG_ACT_GRAD_SIGMOID] = ACT_GRAD_OP(sigmoid, SIGMOID_GRAD, "SigmoidBackwardBackward0"),
    [CG_ACT_GRAD_SILU] = ACT_GRAD_OP(silu, SILU_GRAD, "SiluBackwardBackward0"),
    [CG_ACT_GRAD_GELU] = ACT_GRAD_OP(gelu, GELU_GRAD, "GeluBackwardBackward0"),
};

cg_tensor *cg_act_grad(cg_act_grad_kind kind, cg_tensor *g, cg_tensor *s) {
    return cg_binary_forward(&k_act_grads[kind], g, s, NULL, 0);
}
