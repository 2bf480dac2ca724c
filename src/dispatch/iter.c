/* iter.c — the strided iterator: aligns operands to the output shape
 * (broadcast dims get byte stride 0, never a copy), orders dims so the
 * innermost is the output's fastest and coalesces mergeable dims: the
 * device-independent plan a backend runs (src/backend/cpu/iter_run.c). */
#include "dispatch_internal.h"

#include <string.h>

/* every operand contiguous with exactly the output's shape: one flat dim */
static bool all_flat(int nargs, cg_tensor *const *args, int ndim, const int64_t *shape) {
    for (int k = 0; k < nargs; k++) {
        const cg_tensor *t = args[k];
        if (t->ndim != ndim) return false;
        int64_t s = 1;
        for (int d = ndim - 1; d >= 0; d--) {
            if (t->shape[d] != shape[d] || (t->strides[d] != s && shape[d] != 1)) return false;
            s *= shape[d];
        }
    }
    return true;
}

void cg_iter_init(cg_iter *it, int nargs, cg_tensor *const *args, int ndim, const int64_t *shape) {
    CG_ASSERT(nargs <= CG_ITER_MAX_ARGS && ndim <= CG_MAX_DIMS);
    it->nargs = nargs;
    it->numel = cg_shape_numel(ndim, shape);
    if (all_flat(nargs, args, ndim, shape)) { /* the common case: no sorting or coalescing to do */
        it->ndim = 1;
        it->shape[0] = it->numel;
        for (int k = 0; k < nargs; k++) {
            it->ptr[k] = cg_tensor_ptr(args[k]);
            it->strides[k][0] = it->numel > 1 ? (int64_t)cg_itemsize(args[k]->dtype) : 0;
        }
        return;
    }
    int64_t st[CG_ITER_MAX_ARGS][CG_MAX_DIMS];
    int64_t sh[CG_MAX_DIMS];
    /* reversed order: d = 0 is the last (innermost) dim */
    for (int d = 0; d < ndim; d++) sh[d] = shape[ndim - 1 - d];
    for (int k = 0; k < nargs; k++) {
        const cg_tensor *t = args[k];
        int64_t isz = (int64_t)cg_itemsize(t->dtype);
        it->ptr[k] = cg_tensor_ptr(t);
        for (int d = 0; d < ndim; d++) {
            int td = t->ndim - 1 - d;
            st[k][d] = (td >= 0 && t->shape[td] != 1) ? t->strides[td] * isz : 0;
        }
    }
    /* order dims by the output's stride (insertion sort, stable) */
    int perm[CG_MAX_DIMS];
    for (int d = 0; d < ndim; d++) perm[d] = d;
    for (int i = 1; i < ndim; i++) {
        int p = perm[i], j = i;
        int64_t sp = st[0][p] < 0 ? -st[0][p] : st[0][p];
        while (j > 0) {
            int64_t sq = st[0][perm[j - 1]] < 0 ? -st[0][perm[j - 1]] : st[0][perm[j - 1]];
            if (sq <= sp) break;
            perm[j] = perm[j - 1];
            j--;
        }
        perm[j] = p;
    }
    /* drop size-1 dims and coalesce */
    int n = 0;
    for (int i = 0; i < ndim; i++) {
        int d = perm[i];
        if (sh[d] == 1) continue;
        if (n > 0) {
            bool merge = true;
            for (int k = 0; k < nargs && merge; k++) merge = st[k][d] == it->strides[k][n - 1] * it->shape[n - 1];
            if (merge) {
                it->shape[n - 1] *= sh[d];
                continue;
            }
        }
        it->shape[n] = sh[d];
        for (int k = 0; k < nargs; k++) it->strides[k][n] = st[k][d];
        n++;
    }
    if (n == 0) { /* 0-d or all ones: one element */
        it->shape[0] = it->numel == 0 ? 0 : 1;
        for (int k = 0; k < nargs; k++) it->strides[k][0] = 0;
        n = 1;
    }
    it->ndim = n;
}
