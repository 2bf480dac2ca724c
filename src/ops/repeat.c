/* repeat.c — copies that tile or mask a tensor: repeat / tile (the input
 * expanded with stride-0 repeat dims, then copied; backward sums over the
 * repeat blocks) and tril / triu over the last two dims with batch dims
 * (backward: tril / triu of the gradient), computed by the device's tril_triu
 * entry (the CPU's: src/backend/cpu/repeat.c). */
#include "views_internal.h"

/* ---------------------------------------------------------------- repeat / tile */

/* Note [Repeat plan]: with the input padded to len(repeats) dims (sizes s_i),
 * the output (r0*s0, r1*s1, ...) is laid out as (r0, s0, r1, s1, ...).
 * Factors equal to 1 are dropped so the plan fits in CG_MAX_DIMS more often;
 * is_rep[k] marks the repeat factors (stride 0 in the source, summed over in
 * the backward). */
typedef struct repeat_plan {
    int m;
    int64_t shape[CG_MAX_DIMS];
    int64_t src_stride[CG_MAX_DIMS];
    bool is_rep[CG_MAX_DIMS];
} repeat_plan;

/* xs/xst: the input's shape/strides padded to n dims */
static cg_status make_plan(int n, const int64_t *xs, const int64_t *xst, const int64_t *r, repeat_plan *p) {
    p->m = 0;
    for (int i = 0; i < n; i++) {
        for (int part = 0; part < 2; part++) {
            int64_t size = part == 0 ? r[i] : xs[i];
            if (size == 1) continue;
            if (p->m == CG_MAX_DIMS)
                return cg_set_error(CG_ERR_NOT_IMPLEMENTED,
                                    "[repeat] more than %d dims that are both repeated and of size > 1 is not supported",
                                    CG_MAX_DIMS / 2);
            p->shape[p->m] = size;
            p->src_stride[p->m] = part == 0 ? 0 : xst[i];
            p->is_rep[p->m++] = part == 0;
        }
    }
    return CG_OK;
}

static void pad_shape(int n, int ndim, const int64_t *shape, const int64_t *strides, int64_t *xs, int64_t *xst) {
    int lead = n - ndim;
    for (int i = 0; i < n; i++) {
        xs[i] = i < lead ? 1 : shape[i - lead];
        if (xst) xst[i] = i < lead ? 0 : strides[i - lead];
    }
}

/* iattr[0] = len(repeats), iattr[1..] = repeats.
 * gx = reshape(sum(reshape(g, plan), repeat dims), x.shape) */
static cg_status repeat_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    const cg_tensor_meta *im = &node->input_meta[0];
    int n = (int)node->iattr[0];
    int64_t xs[CG_MAX_DIMS], sum_dims[CG_MAX_DIMS];
    pad_shape(n, im->ndim, im->shape, NULL, xs, NULL);
    repeat_plan p;
    if (make_plan(n, xs, xs, node->iattr + 1, &p)) return cg_last_error();
    int ns = 0;
    for (int k = 0; k < p.m; k++)
        if (p.is_rep[k]) sum_dims[ns++] = k;
    cg_tensor *h = cg_reshape(g[0], p.m, p.shape);
    if (!h) return cg_last_error();
    cg_tensor *s = h;
    if (ns) {
        s = cg_sum(h, ns, sum_dims, false);
        cg_tensor_release(h);
        if (!s) return cg_last_error();
    }
    gin[0] = cg_reshape(s, im->ndim, im->shape);
    cg_tensor_release(s);
    return gin[0] ? CG_OK : cg_last_error();
}

CG_PROF_FN(cg_tensor *, cg_repeat, "repeat", (cg_tensor *t, int nreps, const int64_t *repeats), (t, nreps, repeats),
           t) {
    CG_CHECK(t, CG_ERR_VALUE, "[repeat] argument is NULL");
    CG_CHECK(nreps >= t->ndim && (nreps == 0 || repeats), CG_ERR_VALUE,
             "[repeat] number of dimensions of repeat dims (%d) can not be smaller than number of dimensions of tensor (%d)",
             nreps, t->ndim);
    CG_CHECK(nreps <= CG_MAX_DIMS, CG_ERR_SHAPE, "[repeat] %d repeat dims exceed the maximum of %d dims", nreps, CG_MAX_DIMS);
    int64_t xs[CG_MAX_DIMS], xst[CG_MAX_DIMS], os[CG_MAX_DIMS];
    pad_shape(nreps, t->ndim, t->shape, t->strides, xs, xst);
    for (int i = 0; i < nreps; i++) {
        CG_CHECK(repeats[i] >= 0, CG_ERR_VALUE, "[repeat] trying to create tensor with negative dimension %lld (repeats[%d])",
                 (long long)repeats[i], i);
        CG_CHECK(!__builtin_mul_overflow(xs[i], repeats[i], &os[i]), CG_ERR_SHAPE, "[repeat] result size overflows in dim %d", i);
    }
    repeat_plan p;
    if (make_plan(nreps, xs, xst, repeats, &p)) return NULL;
    cg_tensor *out = cg_tensor_new("repeat", nreps, os, t->dtype, t->device);
    if (!out) return NULL;
    if (cg_tensor_numel(out) > 0) {
        int64_t cst[CG_MAX_DIMS];
        cg_contiguous_strides(p.m, p.shape, cst);
        cg_tensor *dst = cg_tensor_view_of(out, p.m, p.shape, cst, out->offset);
        cg_tensor *src = cg_tensor_view_of(t, p.m, p.shape, p.src_stride, t->offset);
        CG_ASSERT(dst && src);
        cg_copy_strided(dst, src);
        cg_tensor_release(dst);
        cg_tensor_release(src);
    }
    bool failed;
    cg_node *node = cg_wire_unary_output("RepeatBackward0", repeat_backward, NULL, 1, &t, out, 0, &failed);
    if (failed) {
        cg_tensor_release(out);
        return NULL;
    }
    if (node) {
        node->iattr[0] = nreps;
        for (int i = 0; i < nreps; i++) node->iattr[1 + i] = repeats[i];
    }
    return out;
}

/* tile: reps padded with leading 1s to the input's rank, then repeat */
CG_PROF_FN(cg_tensor *, cg_tile, "tile", (cg_tensor *t, int nreps, const int64_t *reps), (t, nreps, reps), t) {
    CG_CHECK(t, CG_ERR_VALUE, "[tile] argument is NULL");
    CG_CHECK(nreps >= 0 && (nreps == 0 || reps), CG_ERR_VALUE, "[tile] invalid list of %d reps", nreps);
    if (nreps >= t->ndim) return cg_repeat(t, nreps, reps);
    int64_t full[CG_MAX_DIMS];
    int lead = t->ndim - nreps;
    for (int i = 0; i < t->ndim; i++) full[i] = i < lead ? 1 : reps[i - lead];
    return cg_repeat(t, t->ndim, full);
}

/* ---------------------------------------------------------------- tril / triu */

/* iattr[0] = diagonal */
static cg_status tril_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    return (gin[0] = cg_tril(g[0], node->iattr[0])) ? CG_OK : cg_last_error();
}
static cg_status triu_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    return (gin[0] = cg_triu(g[0], node->iattr[0])) ? CG_OK : cg_last_error();
}

static cg_tensor *tri_forward(const char *name, cg_tensor *t, int64_t diagonal, bool upper) {
    CG_CHECK(t, CG_ERR_VALUE, "[%s] argument is NULL", name);
    CG_CHECK(t->ndim >= 2, CG_ERR_SHAPE, "[%s] input tensor must have at least 2 dimensions, got %d", name, t->ndim);
    cg_tensor *out = cg_tensor_new(name, t->ndim, t->shape, t->dtype, t->device);
    if (!out) return NULL;
    cg_status st;
    CG_RUN_KERNEL(st, name, t->device, tril_triu, out, t, diagonal, upper);
    if (st) {
        cg_tensor_release(out);
        return NULL;
    }
    bool failed;
    cg_node *node = cg_wire_unary_output(upper ? "TriuBackward0" : "TrilBackward0", upper ? triu_backward : tril_backward,
                                         NULL, 1, &t, out, 0, &failed);
    if (failed) {
        cg_tensor_release(out);
        return NULL;
    }
    if (node) node->iattr[0] = diagonal;
    return out;
}

CG_PROF_FN(cg_tensor *, cg_tril, "tril", (cg_tensor *t, int64_t diagonal), (t, diagonal),
           t) { return tri_forward("tril", t, diagonal, false); }
CG_PROF_FN(cg_tensor *, cg_triu, "triu", (cg_tensor *t, int64_t diagonal), (t, diagonal),
           t) { return tri_forward("triu", t, diagonal, true); }
