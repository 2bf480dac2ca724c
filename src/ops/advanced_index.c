/* advanced_index.c — PyTorch advanced indexing: cg_index (x[i0, i1, ...] with
 * full slices, integer and bool index tensors), cg_index_put (out of place)
 * and cg_index_put_ (in place). Both build one plan (Note [Index plan]) and
 * run a gather or a sequential put over element offsets. Each is the other's
 * backward, so indexing is differentiable to any order. The offsets, the
 * gather and the put are the device's entries (the CPU's:
 * src/backend/cpu/advanced_index.c). */
#include "../dispatch/dispatch_internal.h"

#include <string.h>

/* Note [Index plan]: the entries are expanded to one slot per dim of x: NULL
 * (full slice) or a contiguous int64 index tensor (a bool mask of rank r
 * becomes the r columns of nonzero(mask)). The index tensors broadcast to B.
 * If the indexed dims are adjacent, B replaces them in place in the result,
 * otherwise B goes first: result = rest[0..bpos) ++ B ++ rest[bpos..), where
 * rest are the non-indexed dims of x in order. `off` (shape B) holds, for
 * every broadcast position, sum_k wrap(idx_k) * x.stride[k] in elements,
 * computed once with every index bounds-checked. Kernels then iterate over
 * the result with x restrided (stride 0 on the B dims) plus that offset.
 * A 0-d bool entry (x[True]) inserts a size-1 dim at its position and becomes
 * the int64 index [0] (true) or [] (false), as in PyTorch. */

typedef struct index_plan {
    int nd;                      /* x's rank */
    cg_tensor *idx[CG_MAX_DIMS]; /* per dim of x: (B-broadcastable) contiguous int64, or NULL; owned */
    int bnd;
    int64_t bshape[CG_MAX_DIMS]; /* broadcast shape of the index tensors */
    int rnd;
    int64_t rshape[CG_MAX_DIMS]; /* result (indexed) shape */
    int bpos;                    /* first result dim of B */
    int rest[CG_MAX_DIMS];       /* non-indexed dims of x, in order */
    cg_tensor *off;              /* (B) int64 element offsets into x; owned; no data on meta */
} index_plan;

static void plan_free(index_plan *p) {
    for (int d = 0; d < p->nd; d++) cg_tensor_release(p->idx[d]);
    cg_tensor_release(p->off);
}

static bool is_index_dtype(cg_dtype dt) { return dt == CG_DTYPE_I64 || dt == CG_DTYPE_I32 || dt == CG_DTYPE_BOOL; }

/* Checks shared by cg_index / cg_index_put: non-NULL x, entry count, dtypes, devices. */
static cg_status check_entries(const char *op, cg_tensor *x, int n, cg_tensor *const *indices) {
    CG_CHECK_S(x, CG_ERR_VALUE, "[%s] argument is NULL", op);
    CG_CHECK_S(n >= 0 && (n == 0 || indices), CG_ERR_VALUE, "[%s] invalid index list (n = %d)", op, n);
    CG_CHECK_S(n <= CG_MAX_DIMS, CG_ERR_INDEX, "[%s] too many indices for tensor of dimension %d (got %d)", op,
               x->ndim, n);
    for (int k = 0; k < n; k++) {
        cg_tensor *t = indices[k];
        if (!t) continue;
        if (!is_index_dtype(t->dtype))
            return cg_set_error(CG_ERR_DTYPE,
                                "[%s] tensors used as indices must be long, int or bool tensors, got %s at position %d",
                                op, cg_dtype_name(t->dtype), k);
        if (!cg_device_eq(t->device, x->device))
            return cg_set_error(CG_ERR_DEVICE, "[%s] index at position %d is on %s but the indexed tensor is on %s", op,
                                k, cg_device_name(t->device), cg_device_name(x->device));
    }
    return CG_OK;
}

/* First 0-d bool entry (or -1) and the dim of x it sits at. */
static int find_zero_dim_bool(cg_tensor *x, int n, cg_tensor *const *indices, int64_t *pos) {
    int64_t d = 0;
    (void)x;
    for (int k = 0; k < n; k++) {
        cg_tensor *t = indices[k];
        if (t && t->dtype == CG_DTYPE_BOOL && t->ndim == 0) {
            *pos = d;
            return k;
        }
        d += (t && t->dtype == CG_DTYPE_BOOL) ? t->ndim : 1;
    }
    return -1;
}

/* 0-d bool -> int64 [0] (true) or [] (false). */
static cg_tensor *zero_dim_bool_to_long(const char *op, cg_tensor *b) {
    if (cg_need_values(op, b, "bool mask indexing: the result size depends on data")) return NULL;
    int64_t n = 0;
    cg_status st;
    CG_RUN_KERNEL(st, op, b->device, nonzero_count, b, &n); /* one element: 1 (true) or 0 */
    return st ? NULL : cg_zeros(1, &n, CG_DTYPE_I64, b->device);
}

/* Contiguous int64 copy (or reference) of an int32/int64 index tensor. */
static cg_tensor *to_long_contig(cg_tensor *t) {
    cg_tensor *l = cg_to_dtype(t, CG_DTYPE_I64);
    if (!l) return NULL;
    cg_tensor *c = cg_contiguous(l);
    cg_tensor_release(l);
    return c;
}

/* Expand the entries (no 0-d bools left) into a plan; runs with grad mode off. */
static cg_status plan_build_impl(const char *op, cg_tensor *x, int n, cg_tensor *const *indices, index_plan *p) {
    int nd = x->ndim, d = 0;
    char a[CG_SHAPE_STR], b[CG_SHAPE_STR];
    for (int k = 0; k < n; k++) {
        cg_tensor *t = indices[k];
        int r = (t && t->dtype == CG_DTYPE_BOOL) ? t->ndim : 1;
        if (d + r > nd)
            return cg_set_error(CG_ERR_INDEX, "[%s] too many indices for tensor of dimension %d", op, nd);
        if (!t) {
            d++;
            continue;
        }
        if (t->dtype != CG_DTYPE_BOOL) {
            if (!(p->idx[d++] = to_long_contig(t))) return cg_last_error();
            continue;
        }
        for (int j = 0; j < r; j++)
            if (t->shape[j] != x->shape[d + j])
                return cg_set_error(CG_ERR_INDEX,
                                    "[%s] the shape of the mask %s at index %d does not match the shape of the indexed "
                                    "tensor %s at index %d", op, cg_shape_str(a, t->ndim, t->shape), j,
                                    cg_shape_str(b, nd, x->shape), d + j);
        if (cg_need_values(op, t, "bool mask indexing: the result size depends on data")) return cg_last_error();
        cg_tensor *nz = cg_nonzero(t); /* (N, r) */
        if (!nz) return cg_last_error();
        for (int j = 0; j < r; j++) {
            cg_tensor *col = cg_select(nz, 1, j);
            p->idx[d + j] = col ? cg_contiguous(col) : NULL;
            cg_tensor_release(col);
            if (!p->idx[d + j]) {
                cg_tensor_release(nz);
                return cg_last_error();
            }
        }
        cg_tensor_release(nz);
        d += r;
    }
    int first = -1, last = -1, nrest = 0;
    bool any = false;
    for (int i = 0; i < nd; i++) {
        cg_tensor *t = p->idx[i];
        if (!t) {
            p->rest[nrest++] = i;
            continue;
        }
        if (!any) {
            p->bnd = t->ndim;
            memcpy(p->bshape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
        } else {
            int64_t sh[CG_MAX_DIMS];
            int nsh;
            if (cg_broadcast_shapes(op, p->bnd, p->bshape, t->ndim, t->shape, &nsh, sh))
                return cg_set_error(CG_ERR_INDEX,
                                    "[%s] shape mismatch: indexing tensors could not be broadcast together with shapes "
                                    "%s and %s", op, cg_shape_str(a, p->bnd, p->bshape), cg_shape_str(b, t->ndim, t->shape));
            p->bnd = nsh;
            memcpy(p->bshape, sh, sizeof(int64_t) * (size_t)nsh);
        }
        any = true;
        if (first < 0) first = i;
        last = i;
    }
    if (!any)
        return cg_set_error(CG_ERR_INDEX, "[%s] at least one index tensor is required (all entries are full slices)", op);
    bool adjacent = true;
    for (int i = first; i <= last; i++) adjacent = adjacent && p->idx[i];
    p->bpos = adjacent ? first : 0;
    p->rnd = nrest + p->bnd;
    if (p->rnd > CG_MAX_DIMS)
        return cg_set_error(CG_ERR_SHAPE, "[%s] result rank %d exceeds the maximum of %d dims", op, p->rnd, CG_MAX_DIMS);
    for (int r = 0; r < p->rnd; r++) {
        if (r < p->bpos) p->rshape[r] = x->shape[p->rest[r]];
        else if (r < p->bpos + p->bnd) p->rshape[r] = p->bshape[r - p->bpos];
        else p->rshape[r] = x->shape[p->rest[r - p->bnd]];
    }
    if (!(p->off = cg_tensor_new(op, p->bnd, p->bshape, CG_DTYPE_I64, x->device))) return cg_last_error();
    cg_status st;
    CG_RUN_KERNEL(st, op, x->device, index_offsets, op, p->off, x, p->idx);
    return st;
}

static cg_status plan_build(const char *op, cg_tensor *x, int n, cg_tensor *const *indices, index_plan *p) {
    memset(p, 0, sizeof *p);
    p->nd = x->ndim;
    bool prev = cg_set_grad_enabled(false);
    cg_status st = plan_build_impl(op, x, n, indices, p);
    cg_set_grad_enabled(prev);
    if (st) plan_free(p);
    return st;
}

/* Views over the result shape: x (base `base`, stride 0 on B dims) and the
 * offsets (stride 0 on the other dims). No autograd history. */
static cg_status plan_views(const index_plan *p, const cg_tensor *base, cg_tensor **xv, cg_tensor **ov) {
    int64_t xs[CG_MAX_DIMS], os[CG_MAX_DIMS], bcs[CG_MAX_DIMS];
    cg_contiguous_strides(p->bnd, p->bshape, bcs);
    for (int r = 0; r < p->rnd; r++) {
        bool in_b = r >= p->bpos && r < p->bpos + p->bnd;
        int xd = r < p->bpos ? p->rest[r] : in_b ? -1 : p->rest[r - p->bnd];
        xs[r] = in_b ? 0 : base->strides[xd];
        os[r] = in_b ? bcs[r - p->bpos] : 0;
    }
    *xv = cg_tensor_view_of(base, p->rnd, p->rshape, xs, base->offset);
    *ov = *xv ? cg_tensor_view_of(p->off, p->rnd, p->rshape, os, 0) : NULL;
    if (*ov) return CG_OK;
    cg_tensor_release(*xv);
    return cg_last_error();
}

/* ---------------------------------------------------------------- kernels */

/* result = x[plan] (new contiguous tensor, no history) */
static cg_tensor *gather_run(const char *op, cg_tensor *x, const index_plan *p) {
    cg_tensor *out = cg_tensor_new(op, p->rnd, p->rshape, x->dtype, x->device);
    if (!out || cg_tensor_numel(out) == 0) return out;
    cg_tensor *xv, *ov;
    if (plan_views(p, x, &xv, &ov)) {
        cg_tensor_release(out);
        return NULL;
    }
    cg_tensor *args[3] = {out, xv, ov};
    cg_iter it;
    cg_iter_init(&it, 3, args, p->rnd, p->rshape);
    cg_status st;
    CG_RUN_KERNEL(st, op, x->device, index_gather, x->device, &it, cg_dtype_size(x->dtype));
    cg_tensor_release(xv);
    cg_tensor_release(ov);
    if (st) cg_tensor_release(out), out = NULL;
    return out;
}

/* dst[plan] = values (or += values), sequentially in row-major order of the
 * indexed shape so duplicates resolve deterministically (last write wins /
 * sums in order). values must broadcast to the indexed shape. */
static cg_status put_run(const char *op, cg_tensor *dst, const index_plan *p, cg_tensor *values, bool accumulate) {
    if (cg_shape_numel(p->rnd, p->rshape) == 0) return CG_OK;
    cg_tensor *xv, *ov;
    if (plan_views(p, dst, &xv, &ov)) return cg_last_error();
    cg_tensor *args[3] = {xv, values, ov};
    cg_iter it;
    cg_iter_init(&it, 3, args, p->rnd, p->rshape);
    cg_status st;
    CG_RUN_KERNEL(st, op, dst->device, index_put, dst->device, &it, dst->dtype, accumulate);
    cg_tensor_release(xv);
    cg_tensor_release(ov);
    return st;
}

static cg_status check_values(const char *op, const index_plan *p, cg_tensor *values) {
    int64_t sh[CG_MAX_DIMS];
    int nsh;
    char a[CG_SHAPE_STR], b[CG_SHAPE_STR];
    int lead = 0; /* leading size-1 dims of values are dropped, as in x[idx] = v */
    while (values->ndim - lead > p->rnd && values->shape[lead] == 1) lead++;
    if (cg_broadcast_shapes(op, values->ndim - lead, values->shape + lead, p->rnd, p->rshape, &nsh, sh) ||
        !cg_shape_eq(nsh, sh, p->rnd, p->rshape))
        return cg_set_error(CG_ERR_SHAPE, "[%s] shape mismatch: value tensor of shape %s cannot be broadcast to indexing "
                            "result of shape %s", op, cg_shape_str(a, values->ndim, values->shape),
                            cg_shape_str(b, p->rnd, p->rshape));
    return CG_OK;
}

/* ---------------------------------------------------------------- autograd glue */

/* Record the plan's index tensors on the node: iattr[0] = rank of x,
 * iattr[1] = bitmask of indexed dims, saved slots in dim order. */
static cg_status save_plan(cg_node *node, const index_plan *p) {
    int slot = 0;
    node->iattr[0] = p->nd;
    node->iattr[1] = 0;
    for (int d = 0; d < p->nd; d++) {
        if (!p->idx[d]) continue;
        node->iattr[1] |= (int64_t)1 << d;
        if (cg_node_save(node, slot++, p->idx[d], false, 0)) return cg_last_error();
    }
    return CG_OK;
}

static int plan_count(const index_plan *p) {
    int c = 0;
    for (int d = 0; d < p->nd; d++) c += p->idx[d] != NULL;
    return c;
}

/* Unpack the per-dim index list (new references; NULL = full slice). */
static cg_status load_plan(cg_node *node, cg_tensor **list, int *nd) {
    int slot = 0;
    *nd = (int)node->iattr[0];
    memset(list, 0, sizeof(cg_tensor *) * CG_MAX_DIMS);
    for (int d = 0; d < *nd; d++) {
        if (!(node->iattr[1] & ((int64_t)1 << d))) continue;
        if (!(list[d] = cg_node_saved(node, slot++))) {
            cg_release_all(d, list);
            return cg_last_error();
        }
    }
    return CG_OK;
}

static void release_list(int nd, cg_tensor **list) {
    for (int d = 0; d < nd; d++) cg_tensor_release(list[d]);
}

/* Reduce g (broadcast result) to the shape in meta, which may carry extra
 * leading size-1 dims. New reference. */
static cg_tensor *reduce_to_meta(cg_tensor *g, const cg_tensor_meta *m) {
    int lead = m->ndim - g->ndim;
    if (lead <= 0) return cg_reduce_to_shape(g, m->ndim, m->shape);
    cg_tensor *r = cg_reduce_to_shape(g, g->ndim, m->shape + lead);
    if (!r) return NULL;
    cg_tensor *o = cg_reshape(r, m->ndim, m->shape);
    cg_tensor_release(r);
    return o;
}

/* d index(x)/dx: zeros(x).index_put_(idx, g, accumulate=true) */
static cg_status index_backward(cg_node *node, cg_tensor *const *gout, cg_tensor **gin) {
    cg_tensor *list[CG_MAX_DIMS];
    int nd;
    if (load_plan(node, list, &nd)) return cg_last_error();
    const cg_tensor_meta *m = &node->input_meta[0];
    cg_tensor *z = cg_zeros(m->ndim, m->shape, gout[0]->dtype, gout[0]->device);
    gin[0] = z ? cg_index_put(z, nd, list, gout[0], true) : NULL;
    cg_tensor_release(z);
    release_list(nd, list);
    return gin[0] ? CG_OK : cg_last_error();
}

/* d index_put(x, v): x gets g (accumulate) or g with the indexed positions
 * zeroed; v gets g[idx] reduced to v's shape. */
static cg_status index_put_backward(cg_node *node, cg_tensor *const *gout, cg_tensor **gin) {
    cg_tensor *list[CG_MAX_DIMS];
    int nd;
    cg_tensor *g = gout[0];
    if (load_plan(node, list, &nd)) return cg_last_error();
    cg_status st = CG_OK;
    if (cg_node_needs_grad(node, 0)) {
        if (node->iattr[2]) {
            cg_tensor_retain(g);
            gin[0] = g;
        } else {
            cg_tensor *zero = cg_scalar_on(0.0, g->dtype, g->device);
            gin[0] = zero ? cg_index_put(g, nd, list, zero, false) : NULL;
            cg_tensor_release(zero);
            if (!gin[0]) st = cg_last_error();
        }
    }
    if (!st && cg_node_needs_grad(node, 1)) {
        cg_tensor *gi = cg_index(g, nd, list);
        gin[1] = gi ? reduce_to_meta(gi, &node->input_meta[1]) : NULL;
        cg_tensor_release(gi);
        if (!gin[1]) st = cg_last_error();
    }
    release_list(nd, list);
    return st;
}

/* ---------------------------------------------------------------- public ops */

CG_PROF_FNV(cg_tensor *, cg_index, "index", (cg_tensor *x, int n, cg_tensor *const *indices), (x, n, indices), 1, &x) {
    if (check_entries("index", x, n, indices)) return NULL;
    int64_t pos;
    int k = find_zero_dim_bool(x, n, indices, &pos);
    if (k >= 0) { /* x[..., True, ...]: unsqueeze, index with [0] or [] */
        cg_tensor *ni[CG_MAX_DIMS];
        memcpy(ni, indices, sizeof(cg_tensor *) * (size_t)n);
        cg_tensor *u = cg_unsqueeze(x, pos), *l = u ? zero_dim_bool_to_long("index", indices[k]) : NULL;
        ni[k] = l;
        cg_tensor *r = l ? cg_index(u, n, ni) : NULL;
        cg_tensor_release(u);
        cg_tensor_release(l);
        return r;
    }
    index_plan p;
    if (plan_build("index", x, n, indices, &p)) return NULL;
    cg_tensor *out = gather_run("index", x, &p);
    if (out) {
        bool failed;
        cg_node *node = cg_wire_unary_output("IndexBackward0", index_backward, NULL, 1, &x, out, plan_count(&p), &failed);
        if (failed || (node && save_plan(node, &p))) {
            cg_tensor_release(out);
            out = NULL;
        }
    }
    plan_free(&p);
    return out;
}

static cg_status check_put_args(const char *op, cg_tensor *x, int n, cg_tensor *const *indices, cg_tensor *values) {
    if (check_entries(op, x, n, indices)) return cg_last_error();
    cg_tensor *xv[2] = {x, values};
    if (cg_check_same(op, 2, xv, 0)) return cg_last_error();
    return CG_OK;
}

CG_PROF_FN(cg_tensor *, cg_index_put, "index_put", (cg_tensor *x, int n, cg_tensor *const *indices, cg_tensor *values,
           bool accumulate), (x, n, indices, values, accumulate), x, values) {
    if (check_put_args("index_put", x, n, indices, values)) return NULL;
    int64_t pos;
    int k = find_zero_dim_bool(x, n, indices, &pos);
    if (k >= 0) { /* put into unsqueeze(x), then drop the inserted dim */
        cg_tensor *ni[CG_MAX_DIMS];
        memcpy(ni, indices, sizeof(cg_tensor *) * (size_t)n);
        cg_tensor *u = cg_unsqueeze(x, pos), *l = u ? zero_dim_bool_to_long("index_put", indices[k]) : NULL;
        ni[k] = l;
        cg_tensor *r = l ? cg_index_put(u, n, ni, values, accumulate) : NULL;
        cg_tensor *o = r ? cg_squeeze_dim(r, pos) : NULL;
        cg_tensor_release(u);
        cg_tensor_release(l);
        cg_tensor_release(r);
        return o;
    }
    /* the offsets depend on the destination's strides: plan on the clone */
    bool prev = cg_set_grad_enabled(false);
    cg_tensor *out = cg_clone(x);
    cg_set_grad_enabled(prev);
    if (!out) return NULL;
    index_plan p;
    if (plan_build("index_put", out, n, indices, &p)) {
        cg_tensor_release(out);
        return NULL;
    }
    if (check_values("index_put", &p, values) || put_run("index_put", out, &p, values, accumulate)) {
        cg_tensor_release(out);
        out = NULL;
    }
    if (out) {
        bool failed;
        cg_tensor *in[2] = {x, values};
        cg_node *node = cg_wire_unary_output("IndexPutBackward0", index_put_backward, NULL, 2, in, out, plan_count(&p),
                                             &failed);
        if (node) node->iattr[2] = accumulate;
        if (failed || (node && save_plan(node, &p))) {
            cg_tensor_release(out);
            out = NULL;
        }
    }
    plan_free(&p);
    return out;
}

/* PyTorch runs index_put_ with one bool (or uint8) mask and a one-element
 * value as masked_fill_, which reads the value once and checks no overlap
 * with it; any other index_put_ refuses values or indices that share any
 * memory with x (Note [Memory overlap]). */
static bool masked_fill_like(int n, cg_tensor *const *indices, const cg_tensor *values, bool accumulate) {
    if (accumulate || cg_shape_numel(values->ndim, values->shape) != 1) return false;
    int masks = 0;
    for (int k = 0; k < n; k++) {
        if (!indices[k]) continue;
        if (indices[k]->dtype != CG_DTYPE_BOOL && indices[k]->dtype != CG_DTYPE_U8) return false;
        masks++;
    }
    return masks == 1;
}

/* In-place index_put_: with a graph to record, run out of place and let
 * cg_inplace_commit write the result into x's storage and move history
 * (Note [In-place]). Otherwise write x's storage directly; values that share
 * x's storage are copied first. */
CG_PROF_FN(cg_status, cg_index_put_, "index_put_", (cg_tensor *x, int n, cg_tensor *const *indices, cg_tensor *values,
           bool accumulate), (x, n, indices, values, accumulate), x, values) {
    if (check_put_args("index_put_", x, n, indices, values)) return cg_last_error();
    if (cg_check_inplace("index_put", x)) return cg_last_error();
    if (!masked_fill_like(n, indices, values, accumulate)) { /* Note [Memory overlap] */
        if (cg_check_no_overlap("index_put", x, values)) return cg_last_error();
        for (int k = 0; k < n; k++)
            if (cg_check_no_overlap("index_put", x, indices[k])) return cg_last_error();
    }
    cg_tensor *in[2] = {x, values};
    if (cg_dtype_is_floating(x->dtype) && cg_any_requires_grad(2, in)) {
        cg_tensor *r = cg_index_put(x, n, indices, values, accumulate);
        if (!r) return cg_last_error();
        cg_status st = cg_inplace_commit("index_put", x, r);
        cg_tensor_release(r);
        return st;
    }
    int64_t pos;
    int k = find_zero_dim_bool(x, n, indices, &pos);
    if (k >= 0) { /* write through an unsqueezed alias of x */
        cg_tensor *ni[CG_MAX_DIMS];
        memcpy(ni, indices, sizeof(cg_tensor *) * (size_t)n);
        int64_t sh[CG_MAX_DIMS], st[CG_MAX_DIMS];
        CG_CHECK_S(x->ndim < CG_MAX_DIMS, CG_ERR_SHAPE, "[index_put_] rank would exceed %d dims", CG_MAX_DIMS);
        for (int d = 0, s = 0; d <= x->ndim; d++) {
            if (d == pos) {
                sh[d] = 1;
                st[d] = 1;
            } else {
                sh[d] = x->shape[s];
                st[d] = x->strides[s++];
            }
        }
        cg_tensor *u = cg_tensor_view_of(x, x->ndim + 1, sh, st, x->offset);
        cg_tensor *l = u ? zero_dim_bool_to_long("index_put_", indices[k]) : NULL;
        ni[k] = l;
        cg_status s = l ? cg_index_put_(u, n, ni, values, accumulate) : cg_last_error();
        cg_tensor_release(u);
        cg_tensor_release(l);
        return s;
    }
    index_plan p;
    if (plan_build("index_put_", x, n, indices, &p)) return cg_last_error();
    cg_status st = check_values("index_put_", &p, values);
    cg_tensor *v = values;
    if (!st && values->storage == x->storage) {
        bool prev = cg_set_grad_enabled(false);
        v = cg_clone(values);
        cg_set_grad_enabled(prev);
        if (!v) st = cg_last_error();
    }
    if (!st) st = put_run("index_put_", x, &p, v, accumulate);
    if (!st) cg_storage_bump_version(x->storage);
    if (v != values) cg_tensor_release(v);
    plan_free(&p);
    return st;
}
