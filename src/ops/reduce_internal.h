/* reduce_internal.h — internal: helpers shared by the reduction files
 * (reduce.c, reduce_minmax.c, reduce_stats.c): a temporary-tensor list for
 * backward formulas and small cg-op compositions (scalars, sign, counts) used
 * by several formulas. Their loops are the backends' (the CPU's in
 * src/backend/cpu/reduce_*.c), found by the descriptor's kind. */
#ifndef CG_REDUCE_INTERNAL_H
#define CG_REDUCE_INTERNAL_H

#include "../dispatch/dispatch_internal.h"
#include "elementwise_ops.gen.h"

#include <math.h>

/* Temporaries of a backward formula, released together. */
#define CG_RD_TMP_MAX 48
typedef struct cg_rd_tmp {
    cg_tensor *t[CG_RD_TMP_MAX];
    int n;
} cg_rd_tmp;

/* Keep t (may be NULL) in the list; returns t. */
static inline cg_tensor *cg_rd_keep(cg_rd_tmp *l, cg_tensor *t) {
    if (t) {
        CG_ASSERT(l->n < CG_RD_TMP_MAX);
        l->t[l->n++] = t;
    }
    return t;
}
static inline void cg_rd_free(cg_rd_tmp *l) {
    for (int i = 0; i < l->n; i++) cg_tensor_release(l->t[i]);
    l->n = 0;
}
/* var = expr, kept in `tl`; jumps to `fail` on error. */
#define CG_RD_TRY(var, expr)                                 \
    do {                                                     \
        if (!((var) = cg_rd_keep(&tl, (expr)))) goto fail;   \
    } while (0)

/* Number of input elements reduced into each output element. */
int64_t cg_rd_count(const cg_node *node);
/* True when the node's reduction covers every dim of its input. */
bool cg_rd_is_full(const cg_node *node);
/* 0-d tensor holding v with t's dtype and device (new reference). */
cg_tensor *cg_rd_scalar(double v, const cg_tensor *t);
/* sign(x) as a constant (no graph): 1, -1, 0; NaN stays NaN. */
cg_tensor *cg_rd_sgn(cg_tensor *x);
/* float count of true values of the bool `mask` over the node's reduced dims
 * (keepdim), in dtype dt. */
cg_tensor *cg_rd_mask_count(cg_node *node, cg_tensor *mask, cg_dtype dt);
/* Resolve a dims list into a reduction mask; ops with a float-only result check the dtype. */
cg_status cg_rd_mask(const char *op, cg_tensor *x, int ndims, const int64_t *dims, bool float_only, uint32_t *mask);

#endif
