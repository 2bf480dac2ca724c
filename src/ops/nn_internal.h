/* nn_internal.h — internal: helpers shared by the nn normalization, loss and
 * misc files: a larger arena for composite ops (the formula shorthands of
 * unary_internal.h — MUL, SUB, WHERE, ... — evaluate into it), dtype checks
 * and the loss reduction. */
#ifndef CG_NN_INTERNAL_H
#define CG_NN_INTERNAL_H

#include "unary_internal.h"

/* Composite ops chain more cg ops than a backward formula: the shorthands'
 * TK is redirected to this arena (A_ must be an nn_tmp * in scope). Same
 * rules: the first failure stops evaluation, everything is released at the end. */
#define NN_TMP_MAX 96
typedef struct nn_tmp {
    cg_tensor *t[NN_TMP_MAX];
    int n;
    bool failed;
} nn_tmp;

static inline cg_tensor *nn_keep(nn_tmp *a, cg_tensor *t) {
    if (!t) {
        a->failed = true;
        return NULL;
    }
    CG_ASSERT(a->n < NN_TMP_MAX);
    a->t[a->n++] = t;
    return t;
}
static inline void nn_free(nn_tmp *a) {
    for (int i = 0; i < a->n; i++) cg_tensor_release(a->t[i]);
    a->n = 0;
}
/* Return r (a new reference; NULL if anything failed) and free the arena. */
static inline cg_tensor *nn_finish(nn_tmp *a, cg_tensor *r) {
    if (a->failed) r = NULL;
    if (r) cg_tensor_retain(r);
    nn_free(a);
    return r;
}
#undef TK
#define TK(expr) (A_->failed ? NULL : nn_keep(A_, (expr)))
#define NN_ARENA nn_tmp arena_ = {.n = 0}, *A_ = &arena_

/* A 0-d constant of x's dtype and device (new reference). */
static inline cg_tensor *nn_scalar(double c, cg_tensor *x) { return cg_scalar_on(c, x->dtype, x->device); }

/* Fails with CG_ERR_DTYPE unless t is floating. */
static inline cg_status nn_check_float(const char *op, const char *what, const cg_tensor *t) {
    CG_CHECK_S(cg_dtype_is_floating(t->dtype), CG_ERR_DTYPE, "[%s] %s: not supported for dtype %s", op, what,
               cg_dtype_name(t->dtype));
    return CG_OK;
}
/* Optional tensor: same dtype and device as ref when given. */
cg_status nn_check_opt(const char *op, const char *what, const cg_tensor *t, const cg_tensor *ref);

/* Apply a loss reduction to the elementwise loss l (new reference). */
cg_tensor *nn_reduce_loss(const char *op, cg_tensor *l, cg_reduction reduction);

/* Autocast for composite nn ops (Note [Loss autocast] in nn_loss.c): when the
 * schema's policy would cast one of args[0..n) (a local array of the entry
 * point's tensor arguments), cast them all through the schema guard and
 * return `call` evaluated on the cast args (the entry point again). */
#define NN_AMP_CALL(schema, n, args, call)                                  \
    do {                                                                      \
        if (cg_amp_cast_mask(&(schema), n, args)) {                           \
            cg_tensor *c_[n];                                                 \
            bool own_;                                                        \
            if (cg_schema_guard(&(schema), n, args, c_, &own_)) return NULL;  \
            for (int i_ = 0; i_ < n; i_++) args[i_] = c_[i_];                 \
            cg_tensor *r_ = call;                                             \
            if (own_) cg_release_all(n, c_);                                  \
            return r_;                                                        \
        }                                                                     \
    } while (0)

#endif
