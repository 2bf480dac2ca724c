/* gather_scatter.c — dim-wise index ops: gather, scatter, scatter_add and
 * scatter_reduce ("sum", "prod", "mean", "amax", "amin"); checks, descriptor
 * and backward formula of each, side by side. The values are computed by the
 * device's gather / scatter entries (the CPU's: src/backend/cpu/gather_scatter.c).
 *
 * Note [Deterministic scatter]: every index is bounds-checked before anything
 * is written, then the scatter walks the index in row-major order on one
 * thread, so duplicate indices resolve the same way on every run (last write
 * wins for scatter; float sums always add in the same order). All schemas
 * here are therefore deterministic (nondeterministic = false).
 *
 * Backward formulas use these same ops (gather <-> scatter_add, scatter with
 * zeros for overwritten slots), so every op differentiates to any order. */
#include "../dispatch/dispatch_internal.h"

#include <string.h>

static const cg_op_schema k_gather = {"gather", "GatherBackward0", 1, CG_AMP_KEEP, false, false, false};
static const cg_op_schema k_scatter = {"scatter", "ScatterBackward0", 1, CG_AMP_KEEP, false, false, false};
static const cg_op_schema k_scatter_add = {"scatter_add", "ScatterAddBackward0", 1, CG_AMP_KEEP, false, false, false};
static const cg_op_schema k_scatter_reduce = {"scatter_reduce", "ScatterReduceBackward0", 1, CG_AMP_KEEP, false, true, true};

typedef enum sc_mode { SC_COPY = 0, SC_SUM, SC_PROD, SC_MEAN, SC_AMAX, SC_AMIN } sc_mode;
static const char *const k_mode_names[] = {"copy", "sum", "prod", "mean", "amax", "amin"};

/* 0-d tensors count as shape (1,) (PyTorch's ensure_nonempty_dim) */
static int nonempty_dim(const cg_tensor *t) { return t->ndim ? t->ndim : 1; }
static int64_t nonempty_size(const cg_tensor *t, int d) { return t->ndim ? t->shape[d] : 1; }

/* Shape and dtype checks shared by gather and the scatters (PyTorch's
 * gather_shape_check / scatter_shape_check). src NULL for gather. */
static cg_status sg_check(const char *op, cg_tensor *x, int64_t dim, cg_tensor *index, cg_tensor *src, int64_t *wdim) {
    cg_tensor *ts[3] = {x, index, src};
    if (cg_check_same(op, src ? 3 : 2, ts, 2u)) return cg_last_error();
    if (index->dtype != CG_DTYPE_I64)
        return cg_set_error(CG_ERR_DTYPE, "[%s] expected dtype int64 for index, got %s", op, cg_dtype_name(index->dtype));
    if (cg_wrap_dim(op, dim, x->ndim, wdim)) return cg_last_error();
    if (cg_tensor_numel(index) == 0) return CG_OK; /* an empty index, of any rank: nothing to check (PyTorch) */
    char a[CG_SHAPE_STR], b[CG_SHAPE_STR];
    int nd = nonempty_dim(x);
    if (nonempty_dim(index) != nd)
        return cg_set_error(CG_ERR_SHAPE, "[%s] index tensor must have the same number of dimensions as input tensor "
                            "(index %s, input %s)", op, cg_shape_str(a, index->ndim, index->shape), cg_shape_str(b, x->ndim, x->shape));
    for (int d = 0; d < nd; d++)
        if (d != *wdim && nonempty_size(index, d) > nonempty_size(x, d))
            return cg_set_error(CG_ERR_SHAPE, "[%s] size does not match at dimension %d: expected index %s to be no larger "
                                "than input %s apart from dimension %lld", op, d, cg_shape_str(a, index->ndim, index->shape),
                                cg_shape_str(b, x->ndim, x->shape), (long long)*wdim);
    if (!src) return CG_OK;
    if (nonempty_dim(src) != nd)
        return cg_set_error(CG_ERR_SHAPE, "[%s] index tensor must have the same number of dimensions as src tensor "
                            "(index %s, src %s)", op, cg_shape_str(a, index->ndim, index->shape), cg_shape_str(b, src->ndim, src->shape));
    for (int d = 0; d < nd; d++)
        if (nonempty_size(index, d) > nonempty_size(src, d))
            return cg_set_error(CG_ERR_SHAPE, "[%s] size does not match at dimension %d: expected index %s to be no larger "
                                "than src %s", op, d, cg_shape_str(a, index->ndim, index->shape), cg_shape_str(b, src->ndim, src->shape));
    return CG_OK;
}

static cg_status guard(const cg_op_schema *s, cg_tensor *x) {
    cg_tensor *o;
    bool owned;
    cg_status st = cg_schema_guard(s, 1, &x, &o, &owned); /* AMP_KEEP: never casts */
    if (owned) cg_tensor_release(o);
    return st;
}

/* ---------------------------------------------------------------- gather */

/* gx = scatter_add(zeros(x), dim, index, g) */
static cg_status gather_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    const cg_tensor_meta *m = &node->input_meta[0];
    cg_tensor *index = cg_node_saved(node, 0);
    if (!index) return cg_last_error();
    cg_tensor *z = cg_zeros(m->ndim, m->shape, g[0]->dtype, g[0]->device);
    gin[0] = z ? cg_scatter_add(z, node->iattr[0], index, g[0]) : NULL;
    cg_tensor_release(z);
    cg_tensor_release(index);
    return gin[0] ? CG_OK : cg_last_error();
}

CG_PROF_FN(cg_tensor *, cg_gather, "gather", (cg_tensor *x, int64_t dim, cg_tensor *index), (x, dim, index), x, index) {
    int64_t d;
    if (sg_check("gather", x, dim, index, NULL, &d) || guard(&k_gather, x)) return NULL;
    cg_tensor *out = cg_tensor_new("gather", index->ndim, index->shape, x->dtype, x->device);
    if (!out) return NULL;
    cg_status st = CG_OK;
    if (cg_tensor_numel(out)) CG_RUN_KERNEL(st, "gather", x->device, gather, out, x, index, d);
    if (st) {
        cg_tensor_release(out);
        return NULL;
    }
    bool failed;
    cg_node *node = cg_wire_unary_output(k_gather.node_name, gather_backward, &k_gather, 1, &x, out, 1, &failed);
    if (!failed && node) {
        node->iattr[0] = d;
        failed = cg_node_save(node, 0, index, false, 0) != CG_OK;
    }
    if (failed) {
        cg_tensor_release(out);
        return NULL;
    }
    return out;
}

/* ---------------------------------------------------------------- scatter family */

/* t (index-shaped) placed into zeros of `shape` at the same coordinates:
 * scatter(zeros(shape), 0, J, t) with J[i, ...] = i. Differentiable. */
static cg_tensor *pad_to(cg_tensor *t, const cg_tensor_meta *m) {
    if (cg_shape_eq(t->ndim, t->shape, m->ndim, m->shape)) {
        cg_tensor_retain(t);
        return t;
    }
    if (t->ndim == 0 || m->ndim == 0) return cg_reshape(t, m->ndim, m->shape); /* (1,) vs 0-d */
    int64_t vs[CG_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++) vs[i] = i ? 1 : t->shape[0];
    cg_tensor *ar = cg_arange(0, (double)t->shape[0], 1, CG_DTYPE_I64, t->device);
    cg_tensor *rv = ar ? cg_reshape(ar, t->ndim, vs) : NULL;
    cg_tensor *j = rv ? cg_expand(rv, t->ndim, t->shape) : NULL;
    cg_tensor *z = j ? cg_zeros(m->ndim, m->shape, t->dtype, t->device) : NULL;
    cg_tensor *r = z ? cg_scatter(z, 0, j, t) : NULL;
    cg_tensor_release(ar);
    cg_tensor_release(rv);
    cg_tensor_release(j);
    cg_tensor_release(z);
    return r;
}

/* The index-shaped leading block of t (narrow on every dim). */
static cg_tensor *crop_to(cg_tensor *t, const cg_tensor *index) {
    cg_tensor_retain(t);
    for (int d = 0; d < t->ndim && d < index->ndim; d++) {
        if (t->shape[d] == index->shape[d]) continue;
        cg_tensor *n = cg_narrow(t, d, 0, index->shape[d]);
        cg_tensor_release(t);
        if (!(t = n)) return NULL;
    }
    return t;
}

static cg_tensor *full_of(const cg_tensor *like, double v) { return cg_full(like->ndim, like->shape, v, like->dtype, like->device); }
static cg_tensor *scalar_like(const cg_tensor *like, double v) { return cg_scalar_on(v, like->dtype, like->device); }

/* zero the slots that receive a scatter: t.scatter(dim, index, 0) */
static cg_tensor *mask_scattered(cg_tensor *t, int64_t d, cg_tensor *index) {
    cg_tensor *z = cg_zeros(index->ndim, index->shape, t->dtype, t->device);
    cg_tensor *r = z ? cg_scatter(t, d, index, z) : NULL;
    cg_tensor_release(z);
    return r;
}

/* Temporaries of a backward formula, released together. */
#define BW_TMPS 40
typedef struct tmps {
    cg_tensor *t[BW_TMPS];
    int n;
    bool failed;
} tmps;
static cg_tensor *keep(tmps *k, cg_tensor *t) {
    if (!t) k->failed = true;
    else if (k->n < BW_TMPS) k->t[k->n++] = t;
    else CG_ASSERT(0);
    return t;
}
static void tmps_free(tmps *k) { cg_release_all(k->n, k->t); }
static cg_tensor *ret(cg_tensor *t) {
    if (t) cg_tensor_retain(t);
    return t;
}

/* Note [Scatter backward]: with I = index, G = grad, R = result:
 *   copy:  gx = G.scatter(I, 0)              gsrc = G.gather(I)
 *   sum:   gx = G                            gsrc = G.gather(I)
 *   mean:  N = count (incl. self) >= 1       gx = G / N, gsrc = G.gather(I) / N.gather(I)
 *   amax/amin: ties share the gradient evenly (PyTorch's rule):
 *          N = [x == R] .scatter_add(I, [src == R.gather(I)]), Gd = G / N,
 *          gx = [x == R] Gd, gsrc = [src == R.gather(I)] Gd.gather(I)
 *   prod:  PyTorch's formula, exact with one zero per slot (below).
 * Without include_self, gx is zero in the scattered slots (and self never
 * counts as a tie). gsrc is padded with zeros to src's shape. */
static cg_status scatter_backward(cg_node *node, cg_tensor *const *gout, cg_tensor **gin) {
    sc_mode mode = (sc_mode)node->iattr[1];
    bool include_self = node->iattr[2] != 0;
    int64_t d = node->iattr[0];
    cg_tensor *G = gout[0];
    tmps k = {{0}, 0, false};
    cg_tensor *I = keep(&k, cg_node_saved(node, 0));
    cg_tensor *gx = NULL, *gs = NULL; /* borrowed from k */
    bool need_x = cg_node_needs_grad(node, 0), need_s = cg_node_needs_grad(node, 1);
    if (k.failed) goto done;
    if (mode == SC_COPY || mode == SC_SUM) {
        if (need_x) gx = (mode == SC_COPY || !include_self) ? keep(&k, mask_scattered(G, d, I)) : G;
        if (need_s) gs = keep(&k, cg_gather(G, d, I));
    } else if (mode == SC_MEAN) {
        cg_tensor *base = keep(&k, full_of(G, include_self ? 1.0 : 0.0));
        cg_tensor *ones = keep(&k, cg_ones(I->ndim, I->shape, G->dtype, G->device));
        cg_tensor *cnt = !k.failed ? keep(&k, cg_scatter_add(base, d, I, ones)) : NULL;
        cg_tensor *zero = keep(&k, scalar_like(G, 0)), *one = keep(&k, scalar_like(G, 1));
        cg_tensor *isz = !k.failed ? keep(&k, cg_eq(cnt, zero)) : NULL;
        cg_tensor *N = !k.failed ? keep(&k, cg_where(isz, one, cnt)) : NULL;
        cg_tensor *gd = !k.failed ? keep(&k, cg_div(G, N)) : NULL;
        if (!k.failed) gx = include_self ? gd : keep(&k, mask_scattered(gd, d, I));
        if (!k.failed && need_s) {
            cg_tensor *gg = keep(&k, cg_gather(G, d, I)), *ng = keep(&k, cg_gather(N, d, I));
            if (!k.failed) gs = keep(&k, cg_div(gg, ng));
        }
    } else if (mode == SC_AMAX || mode == SC_AMIN) {
        cg_tensor *X = keep(&k, cg_node_saved(node, 1)), *S = keep(&k, cg_node_saved(node, 2));
        cg_tensor *R = keep(&k, cg_node_saved(node, 3));
        if (k.failed) goto done;
        cg_tensor *zero = keep(&k, scalar_like(G, 0)), *one = keep(&k, scalar_like(G, 1));
        cg_tensor *Sc = keep(&k, crop_to(S, I)), *val = keep(&k, cg_gather(R, d, I));
        cg_tensor *xb = !k.failed ? keep(&k, cg_eq(X, R)) : NULL, *sb = !k.failed ? keep(&k, cg_eq(Sc, val)) : NULL;
        cg_tensor *xis = !k.failed ? keep(&k, cg_where(xb, one, zero)) : NULL;
        cg_tensor *sis = !k.failed ? keep(&k, cg_where(sb, one, zero)) : NULL;
        if (!k.failed && !include_self) xis = keep(&k, mask_scattered(xis, d, I));
        cg_tensor *N = !k.failed ? keep(&k, cg_scatter_add(xis, d, I, sis)) : NULL;
        cg_tensor *gd = !k.failed ? keep(&k, cg_div(G, N)) : NULL;
        if (!k.failed && need_x) gx = keep(&k, cg_mul(xis, gd));
        if (!k.failed && need_s) {
            cg_tensor *gg = keep(&k, cg_gather(gd, d, I));
            if (!k.failed) gs = keep(&k, cg_mul(sis, gg));
        }
    } else { /* SC_PROD */
        cg_tensor *X = keep(&k, cg_node_saved(node, 1)), *S = keep(&k, cg_node_saved(node, 2));
        cg_tensor *R = keep(&k, cg_node_saved(node, 3));
        if (k.failed) goto done;
        cg_tensor *zero = keep(&k, scalar_like(G, 0)), *one = keep(&k, scalar_like(G, 1));
        if (need_x && !k.failed) {
            /* gx = G * (x with zeros as 1).scatter_reduce(...) / (x with zeros as 1) */
            cg_tensor *xz = keep(&k, cg_eq(X, zero));
            cg_tensor *mx = !k.failed ? keep(&k, cg_where(xz, one, X)) : NULL;
            cg_tensor *mr = !k.failed ? keep(&k, cg_scatter_reduce(mx, d, I, S, "prod", include_self)) : NULL;
            cg_tensor *p = !k.failed ? keep(&k, cg_mul(G, mr)) : NULL;
            cg_tensor *q = !k.failed ? keep(&k, cg_div(p, mx)) : NULL;
            if (!k.failed) gx = include_self ? q : keep(&k, mask_scattered(q, d, I));
        }
        if (need_s && !k.failed) {
            cg_tensor *Sc = keep(&k, crop_to(S, I));
            cg_tensor *sz = !k.failed ? keep(&k, cg_eq(Sc, zero)) : NULL;
            cg_tensor *szf = !k.failed ? keep(&k, cg_where(sz, one, zero)) : NULL;
            cg_tensor *zx = keep(&k, cg_zeros_like(X));
            cg_tensor *nz = !k.failed ? keep(&k, cg_scatter_add(zx, d, I, szf)) : NULL;
            cg_tensor *nzg = !k.failed ? keep(&k, cg_gather(nz, d, I)) : NULL;
            cg_tensor *n1 = !k.failed ? keep(&k, cg_eq(nzg, one)) : NULL;
            cg_tensor *fls = keep(&k, cg_scalar_on(0, CG_DTYPE_BOOL, G->device));
            cg_tensor *single = !k.failed ? keep(&k, cg_where(sz, n1, fls)) : NULL;
            if (!k.failed && cg_is_grad_enabled()) {
                cg_tensor *many = keep(&k, cg_gt(nzg, one));
                cg_tensor *anym = !k.failed ? keep(&k, cg_any(many, 0, NULL, false)) : NULL;
                double a = 0;
                if (!k.failed && cg_tensor_item(anym, &a) == CG_OK && a != 0) {
                    cg_set_error(CG_ERR_NOT_IMPLEMENTED,
                                 "[scatter_reduce] double backward of reduce=\"prod\" is not supported for src when more "
                                 "than one zero of src is scattered to the same position");
                    k.failed = true;
                }
            }
            cg_tensor *ms = !k.failed ? keep(&k, cg_where(single, one, Sc)) : NULL;
            cg_tensor *msr = !k.failed ? keep(&k, cg_scatter_reduce(X, d, I, ms, "prod", include_self)) : NULL;
            cg_tensor *a1 = !k.failed ? keep(&k, cg_mul(G, msr)) : NULL;
            cg_tensor *a2 = !k.failed ? keep(&k, cg_gather(a1, d, I)) : NULL;
            cg_tensor *b1 = !k.failed ? keep(&k, cg_mul(G, R)) : NULL;
            cg_tensor *b2 = !k.failed ? keep(&k, cg_gather(b1, d, I)) : NULL;
            cg_tensor *b3 = !k.failed ? keep(&k, cg_where(sz, one, Sc)) : NULL;
            cg_tensor *b4 = !k.failed ? keep(&k, cg_div(b2, b3)) : NULL;
            if (!k.failed) gs = keep(&k, cg_where(single, a2, b4));
        }
    }
done:
    if (!k.failed && need_x && gx) gin[0] = ret(gx);
    if (!k.failed && need_s && gs && !(gin[1] = pad_to(gs, &node->input_meta[1]))) k.failed = true;
    tmps_free(&k);
    if (k.failed) {
        cg_tensor_release(gin[0]);
        gin[0] = NULL;
        return cg_last_error();
    }
    return CG_OK;
}

static cg_tensor *scatter_impl(const cg_op_schema *s, cg_tensor *x, int64_t dim, cg_tensor *index, cg_tensor *src,
                               sc_mode mode, bool include_self) {
    const char *op = s->name;
    int64_t d;
    if (sg_check(op, x, dim, index, src, &d) || guard(s, x)) return NULL;
    if (mode == SC_MEAN && x->dtype == CG_DTYPE_BOOL) {
        cg_set_error(CG_ERR_NOT_IMPLEMENTED, "[%s] reduce=\"mean\" not supported for dtype bool", op);
        return NULL;
    }
    cg_tensor *out = cg_tensor_new(op, x->ndim, x->shape, x->dtype, x->device);
    if (!out) return NULL;
    bool prev = cg_set_grad_enabled(false);
    cg_status st = cg_copy_(out, x); /* (nothing happens on meta) */
    cg_set_grad_enabled(prev);
    if (!st && cg_tensor_numel(index))
        CG_RUN_KERNEL(st, op, out->device, scatter, op, out, index, src, d, (int)mode, include_self);
    if (st) {
        cg_tensor_release(out);
        return NULL;
    }
    cg_tensor *in[2] = {x, src};
    bool failed;
    cg_node *node = cg_wire_unary_output(s->node_name, scatter_backward, s, 2, in, out, 4, &failed);
    if (!failed && node) {
        node->iattr[0] = d;
        node->iattr[1] = mode;
        node->iattr[2] = include_self;
        failed = cg_node_save(node, 0, index, false, 0) != CG_OK;
        if (!failed && (mode == SC_PROD || mode == SC_AMAX || mode == SC_AMIN))
            failed = cg_node_save(node, 1, x, false, 0) || cg_node_save(node, 2, src, false, 0) ||
                     cg_node_save(node, 3, out, true, 0);
    }
    if (failed) {
        cg_tensor_release(out);
        return NULL;
    }
    return out;
}

CG_PROF_FN(cg_tensor *, cg_scatter, "scatter", (cg_tensor *x, int64_t dim, cg_tensor *index, cg_tensor *src), (x, dim,
           index, src), x, index, src) {
    return scatter_impl(&k_scatter, x, dim, index, src, SC_COPY, true);
}

CG_PROF_FN(cg_tensor *, cg_scatter_add, "scatter_add", (cg_tensor *x, int64_t dim, cg_tensor *index, cg_tensor *src),
           (x, dim, index, src), x, index, src) {
    return scatter_impl(&k_scatter_add, x, dim, index, src, SC_SUM, true);
}

CG_PROF_FN(cg_tensor *, cg_scatter_reduce, "scatter_reduce", (cg_tensor *x, int64_t dim, cg_tensor *index,
           cg_tensor *src, const char *reduce, bool include_self), (x, dim, index, src, reduce, include_self), x, index,
           src) {
    for (int m = SC_SUM; m <= SC_AMIN; m++)
        if (reduce && strcmp(reduce, k_mode_names[m]) == 0)
            return scatter_impl(&k_scatter_reduce, x, dim, index, src, (sc_mode)m, include_self);
    cg_set_error(CG_ERR_VALUE, "[scatter_reduce] reduce argument must be one of sum, prod, mean, amax, amin, got '%s'",
                 reduce ? reduce : "(null)");
    return NULL;
}
