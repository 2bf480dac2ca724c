/* indexing.c — index ops built on advanced indexing (advanced_index.c):
 * index_select, masked_fill, masked_select, masked_scatter, take, and the
 * nonzero kernel. Each forward runs with grad mode off and records its own
 * node; the backward formulas are cg ops (index_put, masked_scatter, where,
 * ...), so every op is differentiable to any order. Values the ops must read
 * (nonzero's count and coordinates, a mask's count, index range checks) come
 * from the device's entries (the CPU's: src/backend/cpu/indexing.c). */
#include "../dispatch/dispatch_internal.h"

#include <string.h>

/* ---------------------------------------------------------------- helpers */

static bool is_int_index(cg_dtype dt) { return dt == CG_DTYPE_I64 || dt == CG_DTYPE_I32; }

/* Contiguous int64 version of an int32/int64 tensor (new ref; grad mode off). */
static cg_tensor *long_contig(cg_tensor *t) {
    bool prev = cg_set_grad_enabled(false);
    cg_tensor *l = cg_to_dtype(t, CG_DTYPE_I64), *c = l ? cg_contiguous(l) : NULL;
    cg_set_grad_enabled(prev);
    cg_tensor_release(l);
    return c;
}

/* The first value of contiguous int64 `t` outside [lo, hi) into *bad (none on
 * meta): CG_OK and *found, or the entry's failure (error set). */
static cg_status find_out_of_range(const char *op, const cg_tensor *t, int64_t lo, int64_t hi, bool *found,
                                   int64_t *bad) {
    cg_status st;
    *found = false;
    CG_RUN_KERNEL(st, op, t->device, index_find_out_of_range, t, lo, hi, found, bad);
    return st;
}

/* Number of true elements of a bool tensor (any layout); -1 on failure (error set). */
static int64_t count_true(const char *op, cg_tensor *m) {
    bool prev = cg_set_grad_enabled(false);
    cg_tensor *c = cg_contiguous(m);
    cg_set_grad_enabled(prev);
    if (!c) return -1;
    int64_t cnt = 0;
    cg_status st;
    CG_RUN_KERNEL(st, op, c->device, nonzero_count, c, &cnt);
    cg_tensor_release(c);
    return st ? -1 : cnt;
}

static cg_status check_mask(const char *op, cg_tensor *x, cg_tensor *mask) {
    cg_tensor *xm[2] = {x, mask};
    if (cg_check_same(op, 2, xm, 2u)) return cg_last_error();
    if (mask->dtype != CG_DTYPE_BOOL)
        return cg_set_error(CG_ERR_DTYPE, "[%s] expected a bool mask, got mask with dtype %s", op,
                            cg_dtype_name(mask->dtype));
    return CG_OK;
}

/* Broadcast shape of x and mask (CG_ERR_SHAPE when they don't broadcast). */
static cg_status mask_shape(const char *op, cg_tensor *x, cg_tensor *mask, int *nd, int64_t *shape) {
    return cg_broadcast_shapes(op, x->ndim, x->shape, mask->ndim, mask->shape, nd, shape);
}

/* Wire a single-output node; saved tensors are inputs (not outputs). */
static cg_tensor *finish(cg_tensor *out, const char *name, cg_backward_fn bw, int nin, cg_tensor *const *in,
                         int nsaved, cg_tensor *const *saved, const int64_t *iattr, int niattr) {
    if (!out) return NULL;
    bool failed;
    cg_node *node = cg_wire_unary_output(name, bw, NULL, nin, in, out, nsaved, &failed);
    if (node) {
        for (int i = 0; i < niattr; i++) node->iattr[i] = iattr[i];
        for (int i = 0; i < nsaved && !failed; i++) failed = cg_node_save(node, i, saved[i], false, 0) != CG_OK;
    }
    if (failed) {
        cg_tensor_release(out);
        return NULL;
    }
    return out;
}

/* ---------------------------------------------------------------- nonzero */

/* (n, ndim) int64 coordinates of the nonzero elements, row-major order. */
CG_PROF_FN(cg_tensor *, cg_nonzero, "nonzero", (cg_tensor *x), (x), x) {
    CG_CHECK(x, CG_ERR_VALUE, "[nonzero] argument is NULL");
    if (cg_need_values("nonzero", x, "the result size depends on data")) return NULL;
    int nd = x->ndim;
    bool prev = cg_set_grad_enabled(false);
    cg_tensor *c = cg_contiguous(x);
    cg_set_grad_enabled(prev);
    if (!c) return NULL;
    int64_t cnt = 0;
    cg_status st;
    CG_RUN_KERNEL(st, "nonzero", c->device, nonzero_count, c, &cnt);
    int64_t osh[2] = {cnt, nd};
    cg_tensor *out = st ? NULL : cg_tensor_new("nonzero", 2, osh, CG_DTYPE_I64, x->device);
    if (out && cnt && nd) {
        CG_RUN_KERNEL(st, "nonzero", c->device, nonzero, out, c);
        if (st) cg_tensor_release(out), out = NULL;
    }
    cg_tensor_release(c);
    return out;
}

/* ---------------------------------------------------------------- index_select */

/* gx = zeros(x).index_put_([:, ..., idx], g, accumulate=true): an index_add
 * whose own backward selects again. iattr[0] = dim. */
static cg_status index_select_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    cg_tensor *idx = cg_node_saved(node, 0);
    if (!idx) return cg_last_error();
    const cg_tensor_meta *m = &node->input_meta[0];
    cg_tensor *list[CG_MAX_DIMS] = {0};
    int64_t dim = node->iattr[0];
    list[dim] = idx;
    cg_tensor *z = cg_zeros(m->ndim, m->shape, g[0]->dtype, g[0]->device);
    gin[0] = z ? cg_index_put(z, (int)dim + 1, list, g[0], true) : NULL;
    cg_tensor_release(z);
    cg_tensor_release(idx);
    return gin[0] ? CG_OK : cg_last_error();
}

CG_PROF_FN(cg_tensor *, cg_index_select, "index_select", (cg_tensor *x, int64_t dim, cg_tensor *index), (x, dim, index),
           x, index) {
    cg_tensor *xi[2] = {x, index};
    if (cg_check_same("index_select", 2, xi, 2u)) return NULL;
    CG_CHECK(is_int_index(index->dtype), CG_ERR_DTYPE, "[index_select] index must be an int64 or int32 tensor, got %s",
             cg_dtype_name(index->dtype));
    CG_CHECK(index->ndim <= 1, CG_ERR_INDEX, "[index_select] index is supposed to be a vector, got %d dims",
             index->ndim);
    int64_t d;
    if (cg_wrap_dim("index_select", dim, x->ndim, &d)) return NULL;
    if (x->ndim == 0) { /* a scalar takes one index, 0, and stays 0-d */
        CG_CHECK(cg_tensor_numel(index) == 1, CG_ERR_INDEX,
                 "[index_select] index to scalar can have only 1 value, got %lld value(s)",
                 (long long)cg_tensor_numel(index));
        cg_tensor *u = cg_unsqueeze(x, 0), *s = u ? cg_index_select(u, 0, index) : NULL;
        cg_tensor *r = s ? cg_reshape(s, 0, NULL) : NULL;
        cg_tensor_release(u);
        cg_tensor_release(s);
        return r;
    }
    cg_tensor *l = long_contig(index);
    if (!l) return NULL;
    int64_t n1 = cg_tensor_numel(l), bad = 0;
    cg_tensor *idx = l->ndim == 1 ? l : cg_reshape(l, 1, &n1);
    if (idx != l) cg_tensor_release(l);
    if (!idx) return NULL;
    bool found;
    if (find_out_of_range("index_select", idx, 0, x->shape[d], &found, &bad)) {
        cg_tensor_release(idx);
        return NULL;
    }
    if (found) {
        cg_tensor_release(idx);
        cg_set_error(CG_ERR_INDEX, "[index_select] index %lld is out of range for dimension %lld with size %lld",
                     (long long)bad, (long long)d, (long long)x->shape[d]);
        return NULL;
    }
    cg_tensor *list[CG_MAX_DIMS] = {0};
    list[d] = idx;
    bool prev = cg_set_grad_enabled(false);
    cg_tensor *out = cg_index(x, (int)d + 1, list);
    cg_set_grad_enabled(prev);
    out = finish(out, "IndexSelectBackward0", index_select_backward, 1, &x, 1, &idx, &d, 1);
    cg_tensor_release(idx);
    return out;
}

/* ---------------------------------------------------------------- take */

/* gx = zeros(numel).index_put_([idx], g, accumulate=true).reshape(x) */
static cg_status take_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    cg_tensor *idx = cg_node_saved(node, 0);
    if (!idx) return cg_last_error();
    const cg_tensor_meta *m = &node->input_meta[0];
    int64_t n = cg_shape_numel(m->ndim, m->shape);
    cg_tensor *z = cg_zeros(1, &n, g[0]->dtype, g[0]->device);
    cg_tensor *p = z ? cg_index_put(z, 1, &idx, g[0], true) : NULL;
    gin[0] = p ? cg_reshape(p, m->ndim, m->shape) : NULL;
    cg_tensor_release(z);
    cg_tensor_release(p);
    cg_tensor_release(idx);
    return gin[0] ? CG_OK : cg_last_error();
}

CG_PROF_FN(cg_tensor *, cg_take, "take", (cg_tensor *x, cg_tensor *index), (x, index), x, index) {
    cg_tensor *xi[2] = {x, index};
    if (cg_check_same("take", 2, xi, 2u)) return NULL;
    CG_CHECK(is_int_index(index->dtype), CG_ERR_DTYPE, "[take] index must be an int64 or int32 tensor, got %s",
             cg_dtype_name(index->dtype));
    cg_tensor *idx = long_contig(index);
    if (!idx) return NULL;
    int64_t n = cg_tensor_numel(x), bad = 0;
    bool found;
    if (find_out_of_range("take", idx, -n, n, &found, &bad)) {
        cg_tensor_release(idx);
        return NULL;
    }
    if (found) {
        cg_tensor_release(idx);
        cg_set_error(CG_ERR_INDEX, "[take] out of range: tried to access index %lld on a tensor of %lld elements",
                     (long long)bad, (long long)n);
        return NULL;
    }
    bool prev = cg_set_grad_enabled(false);
    cg_tensor *flat = cg_reshape(x, 1, &n);
    cg_tensor *out = flat ? cg_index(flat, 1, &idx) : NULL;
    cg_set_grad_enabled(prev);
    cg_tensor_release(flat);
    out = finish(out, "TakeBackward0", take_backward, 1, &x, 1, &idx, NULL, 0);
    cg_tensor_release(idx);
    return out;
}

/* ---------------------------------------------------------------- masked_fill */

/* gx = where(mask, 0, g) reduced to x; gvalue = sum(where(mask, g, 0)) */
static cg_status masked_fill_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    cg_tensor *mask = cg_node_saved(node, 0);
    if (!mask) return cg_last_error();
    cg_tensor *zero = cg_scalar_on(0.0, g[0]->dtype, g[0]->device);
    cg_status st = zero ? CG_OK : cg_last_error();
    if (!st && cg_node_needs_grad(node, 0)) {
        cg_tensor *w = cg_where(mask, zero, g[0]);
        const cg_tensor_meta *m = &node->input_meta[0];
        gin[0] = w ? cg_reduce_to_shape(w, m->ndim, m->shape) : NULL;
        cg_tensor_release(w);
        if (!gin[0]) st = cg_last_error();
    }
    if (!st && cg_node_needs_grad(node, 1)) {
        cg_tensor *w = cg_where(mask, g[0], zero);
        gin[1] = w ? cg_sum(w, 0, NULL, false) : NULL;
        cg_tensor_release(w);
        if (!gin[1]) st = cg_last_error();
    }
    cg_tensor_release(zero);
    cg_tensor_release(mask);
    return st;
}

/* The value is converted to x's dtype (differentiably between float dtypes),
 * as PyTorch fills with self's dtype. The result has the broadcast shape. */
CG_PROF_FN(cg_tensor *, cg_masked_fill, "masked_fill", (cg_tensor *x, cg_tensor *mask, cg_tensor *value), (x, mask,
           value), x, mask, value) {
    CG_CHECK(value, CG_ERR_VALUE, "[masked_fill] value is NULL");
    if (check_mask("masked_fill", x, mask)) return NULL;
    CG_CHECK(cg_device_eq(value->device, x->device), CG_ERR_DEVICE,
             "[masked_fill] value is on %s but the tensor is on %s", cg_device_name(value->device),
             cg_device_name(x->device));
    CG_CHECK(value->ndim == 0, CG_ERR_SHAPE,
             "[masked_fill] only supports a 0-dimensional value tensor, but got tensor with %d dimension(s)",
             value->ndim);
    int nd;
    int64_t sh[CG_MAX_DIMS];
    if (mask_shape("masked_fill", x, mask, &nd, sh)) return NULL;
    cg_tensor *v = cg_to_dtype(value, x->dtype);
    if (!v) return NULL;
    bool prev = cg_set_grad_enabled(false);
    cg_tensor *out = cg_where(mask, v, x);
    cg_set_grad_enabled(prev);
    cg_tensor *in[2] = {x, v};
    out = finish(out, "MaskedFillBackward0", masked_fill_backward, 2, in, 1, &mask, NULL, 0);
    cg_tensor_release(v);
    return out;
}

/* ---------------------------------------------------------------- masked_select */

/* gx = masked_scatter(zeros(broadcast shape), mask, g) reduced to x */
static cg_status masked_select_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    cg_tensor *mask = cg_node_saved(node, 0);
    if (!mask) return cg_last_error();
    const cg_tensor_meta *m = &node->input_meta[0];
    int nd;
    int64_t sh[CG_MAX_DIMS];
    cg_tensor *z = NULL, *s = NULL;
    if (!cg_broadcast_shapes("masked_select", m->ndim, m->shape, mask->ndim, mask->shape, &nd, sh) &&
        (z = cg_zeros(nd, sh, g[0]->dtype, g[0]->device)) && (s = cg_masked_scatter(z, mask, g[0])))
        gin[0] = cg_reduce_to_shape(s, m->ndim, m->shape);
    cg_tensor_release(z);
    cg_tensor_release(s);
    cg_tensor_release(mask);
    return gin[0] ? CG_OK : cg_last_error();
}

CG_PROF_FN(cg_tensor *, cg_masked_select, "masked_select", (cg_tensor *x, cg_tensor *mask), (x, mask), x, mask) {
    if (check_mask("masked_select", x, mask)) return NULL;
    int nd;
    int64_t sh[CG_MAX_DIMS];
    if (mask_shape("masked_select", x, mask, &nd, sh)) return NULL;
    bool prev = cg_set_grad_enabled(false);
    cg_tensor *xb = cg_expand(x, nd, sh), *mb = xb ? cg_expand(mask, nd, sh) : NULL;
    cg_tensor *out = mb ? cg_index(xb, 1, &mb) : NULL;
    cg_set_grad_enabled(prev);
    cg_tensor_release(xb);
    cg_tensor_release(mb);
    return finish(out, "MaskedSelectBackward0", masked_select_backward, 1, &x, 1, &mask, NULL, 0);
}

/* ---------------------------------------------------------------- masked_scatter */

/* gx = where(mask, 0, g) reduced to x; gsource = masked_select(g, mask)
 * padded with zeros to source's numel, in source's shape. iattr[0] = count. */
static cg_status masked_scatter_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    cg_tensor *mask = cg_node_saved(node, 0);
    if (!mask) return cg_last_error();
    cg_status st = CG_OK;
    if (cg_node_needs_grad(node, 0)) {
        cg_tensor *zero = cg_scalar_on(0.0, g[0]->dtype, g[0]->device);
        cg_tensor *w = zero ? cg_where(mask, zero, g[0]) : NULL;
        const cg_tensor_meta *m = &node->input_meta[0];
        gin[0] = w ? cg_reduce_to_shape(w, m->ndim, m->shape) : NULL;
        cg_tensor_release(zero);
        cg_tensor_release(w);
        if (!gin[0]) st = cg_last_error();
    }
    if (!st && cg_node_needs_grad(node, 1)) {
        const cg_tensor_meta *m = &node->input_meta[1];
        int64_t n = cg_shape_numel(m->ndim, m->shape), cnt = node->iattr[0];
        cg_tensor *sel = cg_masked_select(g[0], mask), *flat = NULL;
        if (sel && cnt == n) {
            flat = sel;
            cg_tensor_retain(flat);
        } else if (sel) {
            cg_tensor *z = cg_zeros(1, &n, g[0]->dtype, g[0]->device);
            cg_tensor *ar = z ? cg_arange(0, (double)cnt, 1, CG_DTYPE_I64, g[0]->device) : NULL;
            flat = ar ? cg_index_put(z, 1, &ar, sel, false) : NULL;
            cg_tensor_release(z);
            cg_tensor_release(ar);
        }
        gin[1] = flat ? cg_reshape(flat, m->ndim, m->shape) : NULL;
        cg_tensor_release(sel);
        cg_tensor_release(flat);
        if (!gin[1]) st = cg_last_error();
    }
    cg_tensor_release(mask);
    return st;
}

CG_PROF_FN(cg_tensor *, cg_masked_scatter, "masked_scatter", (cg_tensor *x, cg_tensor *mask, cg_tensor *source), (x,
           mask, source), x, mask, source) {
    if (check_mask("masked_scatter", x, mask)) return NULL;
    cg_tensor *xs[2] = {x, source};
    if (cg_check_same("masked_scatter", 2, xs, 0)) return NULL;
    int nd;
    int64_t sh[CG_MAX_DIMS];
    if (mask_shape("masked_scatter", x, mask, &nd, sh)) return NULL;
    if (cg_need_values("masked_scatter", mask, "the mask must be read")) return NULL;
    bool prev = cg_set_grad_enabled(false);
    cg_tensor *mb = cg_expand(mask, nd, sh);
    int64_t cnt = mb ? count_true("masked_scatter", mb) : -1, n = cg_tensor_numel(source);
    cg_tensor *out = NULL;
    if (cnt > n) {
        cg_set_error(CG_ERR_SHAPE,
                     "[masked_scatter] expected source to have at least as many elements (%lld) as ones in mask (%lld)",
                     (long long)n, (long long)cnt);
    } else if (cnt >= 0) {
        cg_tensor *xb = cg_expand(x, nd, sh), *flat = xb ? cg_reshape(source, 1, &n) : NULL;
        cg_tensor *vals = flat ? cg_narrow(flat, 0, 0, cnt) : NULL;
        out = vals ? cg_index_put(xb, 1, &mb, vals, false) : NULL;
        cg_tensor_release(xb);
        cg_tensor_release(flat);
        cg_tensor_release(vals);
    }
    cg_set_grad_enabled(prev);
    cg_tensor_release(mb);
    cg_tensor *in[2] = {x, source};
    return finish(out, "MaskedScatterBackward0", masked_scatter_backward, 2, in, 1, &mask, &cnt, 1);
}
