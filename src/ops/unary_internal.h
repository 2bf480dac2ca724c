/* unary_internal.h — internal: helpers shared by the unary math, activation
 * and softmax files: a small arena for the temporaries of backward formulas,
 * scalar-operand shortcuts, the gradient gate ops (masked pass-through of a
 * gradient, themselves differentiable), the fused activation gradients and
 * the chain-rule trampoline. */
#ifndef CG_UNARY_INTERNAL_H
#define CG_UNARY_INTERNAL_H

#include "elementwise_ops.gen.h"

#include <math.h>

/* ------------------------------------------------------------- temporaries
 * Backward formulas chain many cg ops. Each result goes into the arena; the
 * first failure stops evaluation (later steps are skipped, so the first
 * error message survives) and everything is released at the end. */
#define CG_TMP_MAX 24
typedef struct cg_tmp {
    cg_tensor *t[CG_TMP_MAX];
    int n;
    bool failed;
} cg_tmp;

static inline cg_tensor *cg_tmp_keep(cg_tmp *a, cg_tensor *t) {
    if (!t) {
        a->failed = true;
        return NULL;
    }
    CG_ASSERT(a->n < CG_TMP_MAX);
    a->t[a->n++] = t;
    return t;
}
static inline void cg_tmp_free(cg_tmp *a) {
    for (int i = 0; i < a->n; i++) cg_tensor_release(a->t[i]);
    a->n = 0;
}
/* Evaluate expr (a new reference) into arena A_ unless something failed. */
#define TK(expr) (A_->failed ? NULL : cg_tmp_keep(A_, (expr)))

/* x * c and x + c with c a 0-d tensor of x's dtype and device (new references). */
cg_tensor *cg_scaled(cg_tensor *x, double c);
cg_tensor *cg_shifted(cg_tensor *x, double c);
/* c - x */
cg_tensor *cg_rsubbed(double c, cg_tensor *x);
/* x OP c (bool) for OP in gt / ge / lt / le */
cg_tensor *cg_cmp_scalar(cg_tensor *(*cmp)(cg_tensor *, cg_tensor *), cg_tensor *x, double c);

/* Arena shorthands for formulas (A_ is the arena in scope). */
#define MUL(a, b) TK(cg_mul((a), (b)))
#define DIV(a, b) TK(cg_div((a), (b)))
#define ADD(a, b) TK(cg_add((a), (b)))
#define SUB(a, b) TK(cg_sub((a), (b)))
#define NEG(a) TK(cg_neg(a))
#define SCALE(a, c) TK(cg_scaled((a), (c)))
#define SHIFT(a, c) TK(cg_shifted((a), (c)))
#define RSUB(c, a) TK(cg_rsubbed((c), (a)))
#define SQ(a) TK(cg_square(a))
#define WHERE(m, a, b) TK(cg_where((m), (a), (b)))
#define GT(a, c) TK(cg_cmp_scalar(cg_gt, (a), (c)))
#define GE(a, c) TK(cg_cmp_scalar(cg_ge, (a), (c)))
#define LT(a, c) TK(cg_cmp_scalar(cg_lt, (a), (c)))
#define LE(a, c) TK(cg_cmp_scalar(cg_le, (a), (c)))

/* ------------------------------------------------------------- gradient gates
 * gate(g, x; lo, hi, a, b) = pred(x) ? g*a : g*b  (b == 0 gives an exact 0,
 * as PyTorch's masked backward kernels do, even for non-finite g). Their own
 * backward is the same gate applied to the incoming gradient (w.r.t. g) and
 * nothing w.r.t. x, so formulas built on them are differentiable again. */
typedef enum cg_gate_kind {
    CG_GATE_INCL = 0, /* lo <= x <= hi */
    CG_GATE_EXCL,     /* lo < x < hi */
    CG_GATE_GT,       /* x > lo */
    CG_GATE_FINITE,   /* isfinite(x) */
    CG_GATE_NLE,      /* !(x <= lo): NaN passes (relu, as in PyTorch) */
} cg_gate_kind;
cg_tensor *cg_grad_gate(cg_gate_kind kind, cg_tensor *g, cg_tensor *x, double lo, double hi, double a, double b);

/* ------------------------------------------------------------- fused activation gradients
 * g * f'(s) in one pass for s the saved output (tanh, sigmoid) or input
 * (silu, gelu); differentiable again (Note [Fused activation gradients] in
 * unary_grads.c). */
typedef enum cg_act_grad_kind {
    CG_ACT_GRAD_TANH = 0,
    CG_ACT_GRAD_SIGMOID,
    CG_ACT_GRAD_SILU,
    CG_ACT_GRAD_GELU,
    CG_ACT_GRAD_COUNT
} cg_act_grad_kind;
cg_tensor *cg_act_grad(cg_act_grad_kind kind, cg_tensor *g, cg_tensor *s);

/* ------------------------------------------------------------- chain rule
 * A formula computes the input gradient from g (the output gradient) and s
 * (the op's single saved tensor: its input or its output), with the node's
 * double attributes p; results live in the arena. */
typedef cg_tensor *(*cg_grad_formula)(cg_tmp *A_, cg_tensor *g, cg_tensor *s, const double *p);
cg_status cg_chain_rule(cg_node *node, cg_tensor *const *g, cg_tensor **gin, cg_grad_formula f);

/* Declares `static cg_status name##_backward` from a formula expression in
 * (A_, g, s, p). */
#define CG_GRAD(name, EXPR)                                                                     \
    static cg_tensor *name##_formula(cg_tmp *A_, cg_tensor *g, cg_tensor *s, const double *p) { \
        (void)g, (void)s, (void)p;                                                              \
        return (EXPR);                                                                          \
    }                                                                                           \
    static cg_status name##_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {     \
        return cg_chain_rule(node, g, gin, name##_formula);                                     \
    }

/* The same for an op of the op table: defines `cg_status cg_bw_<name>`, the
 * backward function its row names (declared in elementwise_ops.gen.h). */
#define CG_GRAD_ROW(name, EXPR)                                                                 \
    static cg_tensor *name##_formula(cg_tmp *A_, cg_tensor *g, cg_tensor *s, const double *p) { \
        (void)g, (void)s, (void)p;                                                              \
        return (EXPR);                                                                          \
    }                                                                                           \
    cg_status cg_bw_##name(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {               \
        return cg_chain_rule(node, g, gin, name##_formula);                                     \
    }

/* zeros for every input that needs a gradient (floor, sign, ...) */
cg_status cg_zero_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin);

#endif
