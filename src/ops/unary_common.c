/* unary_common.c — helpers shared by the unary math, activation and softmax
 * ops (unary_internal.h): scalar-operand shortcuts, the differentiable
 * gradient gates and the chain-rule trampoline. */
#include "unary_internal.h"

/* ---------------------------------------------------------------- scalar operands */
static cg_tensor *scalar_like(cg_tensor *x, double c) {
    CG_CHECK(x, CG_ERR_VALUE, "[scalar] argument is NULL");
    return cg_scalar_on(c, x->dtype, x->device);
}

cg_tensor *cg_scaled(cg_tensor *x, double c) {
    cg_tensor *s = scalar_like(x, c);
    if (!s) return NULL;
    cg_tensor *r = cg_mul(x, s);
    cg_tensor_release(s);
    return r;
}

cg_tensor *cg_shifted(cg_tensor *x, double c) {
    cg_tensor *s = scalar_like(x, c);
    if (!s) return NULL;
    cg_tensor *r = cg_add(x, s);
    cg_tensor_release(s);
    return r;
}

cg_tensor *cg_rsubbed(double c, cg_tensor *x) {
    cg_tensor *s = scalar_like(x, c);
    if (!s) return NULL;
    cg_tensor *r = cg_sub(s, x);
    cg_tensor_release(s);
    return r;
}

cg_tensor *cg_cmp_scalar(cg_tensor *(*cmp)(cg_tensor *, cg_tensor *), cg_tensor *x, double c) {
    cg_tensor *s = scalar_like(x, c);
    if (!s) return NULL;
    cg_tensor *r = cmp(x, s);
    cg_tensor_release(s);
    return r;
}

/* ---------------------------------------------------------------- gradient gates
 * out = PRED(x) ? g*a : g*b, p = {lo, hi, a, b}: hand rows of the op table, one per
 * predicate (loops in src/backend/cpu/elementwise_hand.c) */
static const cg_binary_op k_gates[5];

/* d gate / d g = the same gate; nothing flows to x (piecewise constant in x) */
static cg_status gate_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    if (!cg_node_needs_grad(node, 0)) return CG_OK;
    cg_tensor *x = cg_node_saved(node, 1);
    if (!x) return cg_last_error();
    const double *d = node->dattr;
    gin[0] = cg_grad_gate((cg_gate_kind)((const cg_binary_op *)node->op - k_gates), g[0], x, d[0], d[1], d[2], d[3]);
    cg_tensor_release(x);
    return gin[0] ? CG_OK : cg_last_error();
}

#define GATE_OP(ROW)                                                                      \
    {                                                                                     \
        .id = CG_OP_##ROW, .schema = {"grad_gate", "GradGateBackward0", 1, CG_AMP_KEEP, false, true, false}, \
        .arity = 2, .out_dtype = CG_SAME_DTYPE, .dtypes = CG_OP_DTYPES_##ROW,            \
        .backward = gate_backward,                                                        \
    }
static const cg_binary_op k_gates[5] = {
    [CG_GATE_INCL] = GATE_OP(GATE_INCL),
    [CG_GATE_EXCL] = GATE_OP(GATE_EXCL),
    [CG_GATE_GT] = GATE_OP(GATE_GT),
    [CG_GATE_FINITE] = GATE_OP(GATE_FINITE),
    [CG_GATE_NLE] = GATE_OP(GATE_NLE),
};

cg_tensor *cg_grad_gate(cg_gate_kind kind, cg_tensor *g, cg_tensor *x, double lo, double hi, double a, double b) {
    double p[4] = {lo, hi, a, b};
    return cg_binary_forward(&k_gates[kind], g, x, p, 4);
}

/* ---------------------------------------------------------------- chain rule */
cg_status cg_chain_rule(cg_node *node, cg_tensor *const *g, cg_tensor **gin, cg_grad_formula f) {
    if (!cg_node_needs_grad(node, 0)) return CG_OK;
    cg_tensor *s = cg_node_saved(node, 0);
    if (!s) return cg_last_error();
    cg_tmp arena = {.n = 0};
    cg_tensor *r = f(&arena, g[0], s, node->dattr);
    cg_status st = CG_OK;
    if (r && !arena.failed) {
        cg_tensor_retain(r);
        gin[0] = r;
    } else {
        st = cg_last_error();
        if (!st) st = cg_set_error(CG_ERR_RUNTIME, "[%s] backward formula failed", node->name);
    }
    cg_tmp_free(&arena);
    cg_tensor_release(s);
    return st;
}

cg_status cg_zero_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    for (int i = 0; i < node->num_inputs; i++)
        if (cg_node_needs_grad(node, i) && !(gin[i] = cg_zeros_like(g[0]))) return cg_last_error();
    return CG_OK;
}
