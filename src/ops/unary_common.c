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
    static void name(char **args, const int64_t *steps, int64_t n, const void *params) {         \
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

GATE_LOOPS(gate_incl, b >= (float)p[0] && b <= (float)p[1], (b >= lo) & (b <= hi))
GATE_LOOPS(gate_excl, b > (float)p[0] && b < (float)p[1], (b > lo) & (b < hi))
GATE_LOOPS(gate_gt, b > (float)p[0], b > lo)
GATE_LOOPS(gate_finite, isfinite(b), isfinite(b))
GATE_LOOPS(gate_nle, !(b <= (float)p[0]), !(b <= lo))

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

#define GATE_OP(kind)                                                       \
    {                                                                       \
        .schema = {"grad_gate", "GradGateBackward0", 1, CG_AMP_KEEP, false, true, false}, \
        .arity = 2, .out_dtype = CG_SAME_DTYPE, .cpu = {CG_FLOAT_TABLE(kind)}, \
        .backward = gate_backward,                                          \
    }
static const cg_binary_op k_gates[5] = {
    [CG_GATE_INCL] = GATE_OP(gate_incl),
    [CG_GATE_EXCL] = GATE_OP(gate_excl),
    [CG_GATE_GT] = GATE_OP(gate_gt),
    [CG_GATE_FINITE] = GATE_OP(gate_finite),
    [CG_GATE_NLE] = GATE_OP(gate_nle),
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
