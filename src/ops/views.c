/* views.c — views that share storage and allocate no data: view / reshape,
 * permute / transpose / t, expand / broadcast_to, squeeze / unsqueeze,
 * flatten / unflatten. Each view records a node whose backward maps the
 * gradient back to the input's geometry with cg ops. */
#include "views_internal.h"

#include <string.h>

cg_tensor *cg_make_view(cg_tensor *x, int ndim, const int64_t *shape, const int64_t *strides, int64_t offset,
                        const char *node_name, cg_backward_fn backward, const int64_t *iattr, int niattr) {
    /* Every view op ends here: a geometry whose extent wraps or leaves the
     * storage is refused whatever arithmetic built it (Note [Checked sizes]),
     * on every device alike: a storage that holds no data (meta) still has
     * its size, so meta refuses the views a real run would. */
    int64_t lo, hi;
    CG_CHECK(cg_strided_extent(ndim, shape, strides, offset, &lo, &hi), CG_ERR_VALUE,
             "[%s] the view's element offsets overflow int64", node_name);
    CG_CHECK(hi < lo ||
                 (lo >= 0 && (uint64_t)hi < x->storage->nbytes / cg_itemsize(x->dtype)),
             CG_ERR_INDEX, "[%s] the view's element offsets [%lld, %lld] fall outside its storage of %zu bytes",
             node_name, (long long)lo, (long long)hi, x->storage->nbytes);
    cg_tensor *v = cg_tensor_view_of(x, ndim, shape, strides, offset);
    if (!v) return NULL;
    if (!backward || !cg_any_requires_grad(1, &x) || !cg_dtype_is_floating(x->dtype)) return v;
    cg_node *node = cg_node_new(node_name, backward, NULL, 1, &x, 1, 0);
    if (!node) {
        cg_tensor_release(v);
        return NULL;
    }
    for (int i = 0; i < niattr; i++) node->iattr[i] = iattr[i];
    cg_node_set_output(node, 0, v);
    cg_node_release(node);
    return v;
}

cg_tensor *cg_view_dtype(cg_tensor *x, cg_dtype dt) {
    CG_CHECK(dt >= 0 && dt < CG_DTYPE_COUNT, CG_ERR_DTYPE, "[view] invalid dtype %d", (int)dt);
    if (dt == x->dtype) return cg_view(x, x->ndim, x->shape);
    CG_CHECK(cg_itemsize(dt) == cg_itemsize(x->dtype), CG_ERR_NOT_IMPLEMENTED,
             "view(dtype): viewing %s as %s (a different element size) is not supported", cg_dtype_name(x->dtype),
             cg_dtype_name(dt));
    /* one storage (not a second one over the same bytes): moving it, share_memory_, moves both */
    return cg_tensor_make(x->storage, x->offset, x->ndim, x->shape, x->strides, dt);
}

/* gradient of any shape-only view: reshape back to the input's shape */
cg_status cg_view_reshape_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    const cg_tensor_meta *m = &node->input_meta[0];
    return (gin[0] = cg_reshape(g[0], m->ndim, m->shape)) ? CG_OK : cg_last_error();
}

/* ---------------------------------------------------------------- view / reshape */

/* Resolve one -1 and check the element count. */
static cg_status infer_shape(const char *op, const cg_tensor *t, int ndim, const int64_t *shape, int64_t *out) {
    char a[CG_SHAPE_STR], b[CG_SHAPE_STR];
    if (ndim < 0 || ndim > CG_MAX_DIMS)
        return cg_set_error(CG_ERR_SHAPE, "[%s] rank %d is not supported (maximum %d dims)", op, ndim, CG_MAX_DIMS);
    int infer = -1;
    int64_t known = 1, numel = cg_tensor_numel(t);
    for (int i = 0; i < ndim; i++) {
        if (shape[i] == -1) {
            if (infer >= 0) return cg_set_error(CG_ERR_SHAPE, "[%s] only one dimension can be inferred", op);
            infer = i;
        } else if (shape[i] < 0) {
            return cg_set_error(CG_ERR_SHAPE, "[%s] invalid shape dimension %lld", op, (long long)shape[i]);
        } else if (__builtin_mul_overflow(known, shape[i], &known)) {
            return cg_set_error(CG_ERR_SHAPE, "[%s] shape %s overflows", op, cg_shape_str(a, ndim, shape));
        }
        out[i] = shape[i];
    }
    if (infer >= 0) {
        if (known == 0 || numel % known != 0)
            return cg_set_error(CG_ERR_SHAPE, "[%s] shape %s is invalid for input of size %lld", op,
                                cg_shape_str(a, ndim, shape), (long long)numel);
        out[infer] = numel / known;
    } else if (known != numel) {
        return cg_set_error(CG_ERR_SHAPE, "[%s] shape %s is invalid for input of size %lld (input shape %s)", op,
                            cg_shape_str(a, ndim, shape), (long long)numel, cg_shape_str(b, t->ndim, t->shape));
    }
    return CG_OK;
}

/* Strides for viewing (shape, strides) as new_shape without a copy, if possible. */
static bool view_strides(int on, const int64_t *os, const int64_t *ost, int nn, const int64_t *ns, int64_t *nst) {
    int64_t numel = cg_shape_numel(on, os);
    if (numel == 0 || on == 0) {
        cg_contiguous_strides(nn, ns, nst);
        return true;
    }
    int view_d = nn - 1;
    int64_t chunk_base_stride = ost[on - 1], tensor_numel = 1, view_numel = 1;
    for (int d = on - 1; d >= 0; d--) {
        tensor_numel *= os[d];
        if (d == 0 || (os[d - 1] != 1 && ost[d - 1] != tensor_numel * chunk_base_stride)) {
            while (view_d >= 0 && (view_numel < tensor_numel || ns[view_d] == 1)) {
                nst[view_d] = view_numel * chunk_base_stride;
                view_numel *= ns[view_d];
                view_d--;
            }
            if (view_numel != tensor_numel) return false;
            if (d > 0) {
                chunk_base_stride = ost[d - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    return view_d == -1;
}

CG_PROF_FN(cg_tensor *, cg_view, "view", (cg_tensor *t, int ndim, const int64_t *shape), (t, ndim, shape), t) {
    CG_CHECK(t, CG_ERR_VALUE, "[view] argument is NULL");
    int64_t ns[CG_MAX_DIMS], nst[CG_MAX_DIMS];
    if (infer_shape("view", t, ndim, shape, ns)) return NULL;
    if (!view_strides(t->ndim, t->shape, t->strides, ndim, ns, nst)) {
        char a[CG_SHAPE_STR], b[CG_SHAPE_STR];
        cg_set_error(CG_ERR_SHAPE,
                     "[view] size %s is not compatible with input tensor's size %s and stride (at least one dimension "
                     "spans across two contiguous subspaces). Use reshape instead.",
                     cg_shape_str(a, ndim, ns), cg_shape_str(b, t->ndim, t->shape));
        return NULL;
    }
    return cg_make_view(t, ndim, ns, nst, t->offset, "ViewBackward0", cg_view_reshape_backward, NULL, 0);
}

CG_PROF_FN(cg_tensor *, cg_reshape, "reshape", (cg_tensor *t, int ndim, const int64_t *shape), (t, ndim, shape), t) {
    CG_CHECK(t, CG_ERR_VALUE, "[reshape] argument is NULL");
    int64_t ns[CG_MAX_DIMS], nst[CG_MAX_DIMS];
    if (infer_shape("reshape", t, ndim, shape, ns)) return NULL;
    if (view_strides(t->ndim, t->shape, t->strides, ndim, ns, nst))
        return cg_make_view(t, ndim, ns, nst, t->offset, "ViewBackward0", cg_view_reshape_backward, NULL, 0);
    cg_tensor *c = cg_clone(t);
    if (!c) return NULL;
    cg_tensor *v = cg_view(c, ndim, ns);
    cg_tensor_release(c);
    return v;
}

/* ---------------------------------------------------------------- permute / transpose */

static cg_status permute_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    int nd = node->input_meta[0].ndim;
    int64_t inv[CG_MAX_DIMS];
    for (int i = 0; i < nd; i++) inv[node->iattr[i]] = i;
    return (gin[0] = cg_permute(g[0], inv)) ? CG_OK : cg_last_error();
}

CG_PROF_FN(cg_tensor *, cg_permute, "permute", (cg_tensor *t, const int64_t *dims), (t, dims), t) {
    CG_CHECK(t, CG_ERR_VALUE, "[permute] argument is NULL");
    int64_t ns[CG_MAX_DIMS], nst[CG_MAX_DIMS], d[CG_MAX_DIMS];
    uint32_t seen = 0;
    for (int i = 0; i < t->ndim; i++) {
        if (cg_wrap_dim("permute", dims[i], t->ndim, &d[i])) return NULL;
        CG_CHECK(!(seen & (1u << d[i])), CG_ERR_VALUE, "[permute] repeated dim %lld in dims", (long long)d[i]);
        seen |= 1u << d[i];
        ns[i] = t->shape[d[i]];
        nst[i] = t->strides[d[i]];
    }
    return cg_make_view(t, t->ndim, ns, nst, t->offset, "PermuteBackward0", permute_backward, d, t->ndim);
}

CG_PROF_FN(cg_tensor *, cg_transpose, "transpose", (cg_tensor *t, int64_t dim0, int64_t dim1), (t, dim0, dim1), t) {
    CG_CHECK(t, CG_ERR_VALUE, "[transpose] argument is NULL");
    int64_t a, b, p[CG_MAX_DIMS];
    if (cg_wrap_dim("transpose", dim0, t->ndim, &a) || cg_wrap_dim("transpose", dim1, t->ndim, &b)) return NULL;
    if (t->ndim == 0) return cg_make_view(t, 0, NULL, NULL, t->offset, "TransposeBackward0", cg_view_reshape_backward, NULL, 0);
    for (int i = 0; i < t->ndim; i++) p[i] = i;
    p[a] = b;
    p[b] = a;
    return cg_permute(t, p);
}

CG_PROF_FN(cg_tensor *, cg_t, "t", (cg_tensor *t), (t), t) {
    CG_CHECK(t, CG_ERR_VALUE, "[t] argument is NULL");
    CG_CHECK(t->ndim <= 2, CG_ERR_SHAPE, "[t] expects a tensor with <= 2 dimensions, but self is %dD", t->ndim);
    return t->ndim < 2 ? cg_transpose(t, 0, 0) : cg_transpose(t, 0, 1);
}

/* ---------------------------------------------------------------- expand */

static cg_status expand_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    const cg_tensor_meta *m = &node->input_meta[0];
    return (gin[0] = cg_reduce_to_shape(g[0], m->ndim, m->shape)) ? CG_OK : cg_last_error();
}

CG_PROF_FN(cg_tensor *, cg_expand, "expand", (cg_tensor *t, int ndim, const int64_t *shape), (t, ndim, shape), t) {
    CG_CHECK(t, CG_ERR_VALUE, "[expand] argument is NULL");
    char a[CG_SHAPE_STR], b[CG_SHAPE_STR];
    CG_CHECK(ndim >= t->ndim && ndim <= CG_MAX_DIMS, CG_ERR_SHAPE,
             "[expand] the number of sizes provided (%d) must be greater or equal to the number of dimensions in the tensor (%d)",
             ndim, t->ndim);
    int64_t ns[CG_MAX_DIMS], nst[CG_MAX_DIMS];
    int lead = ndim - t->ndim;
    for (int i = 0; i < ndim; i++) {
        int j = i - lead;
        int64_t want = shape[i];
        if (j < 0) {
            CG_CHECK(want >= 0, CG_ERR_SHAPE, "[expand] the expanded size %lld is not allowed in a leading, non-existing dimension %d",
                     (long long)want, i);
            ns[i] = want;
            nst[i] = 0;
            continue;
        }
        if (want == -1) want = t->shape[j];
        if (t->shape[j] == want) {
            ns[i] = want;
            nst[i] = t->strides[j];
        } else if (t->shape[j] == 1 && want >= 0) {
            ns[i] = want;
            nst[i] = 0;
        } else {
            cg_set_error(CG_ERR_SHAPE, "[expand] the expanded size of the tensor (%lld) must match the existing size (%lld) at non-singleton dimension %d. Target sizes: %s. Tensor sizes: %s",
                         (long long)shape[i], (long long)t->shape[j], i, cg_shape_str(a, ndim, shape), cg_shape_str(b, t->ndim, t->shape));
            return NULL;
        }
    }
    if (cg_shape_check("expand", ndim, ns, 1, NULL)) return NULL;
    return cg_make_view(t, ndim, ns, nst, t->offset, "ExpandBackward0", expand_backward, NULL, 0);
}

CG_PROF_FN(cg_tensor *, cg_broadcast_to, "broadcast_to", (cg_tensor *t, int ndim, const int64_t *shape), (t, ndim,
           shape), t) { return cg_expand(t, ndim, shape); }

/* ---------------------------------------------------------------- squeeze / unsqueeze / flatten */

CG_PROF_FN(cg_tensor *, cg_unsqueeze, "unsqueeze", (cg_tensor *t, int64_t dim), (t, dim), t) {
    CG_CHECK(t, CG_ERR_VALUE, "[unsqueeze] argument is NULL");
    CG_CHECK(t->ndim < CG_MAX_DIMS, CG_ERR_SHAPE, "[unsqueeze] rank %d would exceed the maximum of %d dims", t->ndim + 1, CG_MAX_DIMS);
    int64_t d;
    if (cg_wrap_dim("unsqueeze", dim, t->ndim + 1, &d)) return NULL;
    int64_t ns[CG_MAX_DIMS], nst[CG_MAX_DIMS];
    for (int i = 0, j = 0; i <= t->ndim; i++) {
        if (i == d) {
            ns[i] = 1;
            nst[i] = j < t->ndim ? t->strides[j] * t->shape[j] : 1;
        } else {
            ns[i] = t->shape[j];
            nst[i] = t->strides[j];
            j++;
        }
    }
    return cg_make_view(t, t->ndim + 1, ns, nst, t->offset, "UnsqueezeBackward0", cg_view_reshape_backward, NULL, 0);
}

static cg_tensor *squeeze_mask(cg_tensor *t, uint32_t mask) {
    int64_t ns[CG_MAX_DIMS], nst[CG_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < t->ndim; i++) {
        if ((mask & (1u << i)) && t->shape[i] == 1) continue;
        ns[n] = t->shape[i];
        nst[n++] = t->strides[i];
    }
    return cg_make_view(t, n, ns, nst, t->offset, "SqueezeBackward0", cg_view_reshape_backward, NULL, 0);
}

CG_PROF_FN(cg_tensor *, cg_squeeze, "squeeze", (cg_tensor *t), (t), t) {
    CG_CHECK(t, CG_ERR_VALUE, "[squeeze] argument is NULL");
    return squeeze_mask(t, 0xffffffffu);
}

CG_PROF_FN(cg_tensor *, cg_squeeze_dim, "squeeze", (cg_tensor *t, int64_t dim), (t, dim), t) {
    CG_CHECK(t, CG_ERR_VALUE, "[squeeze] argument is NULL");
    int64_t d;
    if (cg_wrap_dim("squeeze", dim, t->ndim, &d)) return NULL;
    return squeeze_mask(t, t->ndim ? 1u << d : 0);
}

CG_PROF_FN(cg_tensor *, cg_flatten, "flatten", (cg_tensor *t, int64_t start_dim, int64_t end_dim), (t, start_dim,
           end_dim), t) {
    CG_CHECK(t, CG_ERR_VALUE, "[flatten] argument is NULL");
    int64_t s, e;
    if (cg_wrap_dim("flatten", start_dim, t->ndim, &s) || cg_wrap_dim("flatten", end_dim, t->ndim, &e)) return NULL;
    CG_CHECK(s <= e, CG_ERR_VALUE, "[flatten] start_dim (%lld) cannot come after end_dim (%lld)", (long long)s, (long long)e);
    if (t->ndim == 0) {
        int64_t one = 1;
        return cg_reshape(t, 1, &one);
    }
    int64_t ns[CG_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < s; i++) ns[n++] = t->shape[i];
    int64_t m = 1;
    for (int64_t i = s; i <= e; i++) m *= t->shape[i];
    ns[n++] = m;
    for (int i = (int)e + 1; i < t->ndim; i++) ns[n++] = t->shape[i];
    return cg_reshape(t, n, ns);
}

CG_PROF_FN(cg_tensor *, cg_unflatten, "unflatten", (cg_tensor *t, int64_t dim, int nsizes, const int64_t *sizes), (t,
           dim, nsizes, sizes), t) {
    CG_CHECK(t, CG_ERR_VALUE, "[unflatten] argument is NULL");
    int64_t d;
    if (cg_wrap_dim("unflatten", dim, t->ndim, &d)) return NULL;
    CG_CHECK(nsizes > 0 && t->ndim - 1 + nsizes <= CG_MAX_DIMS, CG_ERR_SHAPE, "[unflatten] invalid number of sizes %d", nsizes);
    int64_t ns[CG_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < d; i++) ns[n++] = t->shape[i];
    int64_t known = 1;
    int infer = -1;
    for (int i = 0; i < nsizes; i++) {
        if (sizes[i] == -1) infer = n;
        else CG_CHECK(sizes[i] >= 0 && cg_mul_ok(known, sizes[i], &known), CG_ERR_SHAPE,
                      "[unflatten] invalid size %lld in sizes (negative, or the product overflows)",
                      (long long)sizes[i]);
        ns[n++] = sizes[i];
    }
    if (infer >= 0 && known > 0) ns[infer] = t->shape[d] / known;
    int64_t got;
    CG_CHECK(infer < 0 || known > 0, CG_ERR_SHAPE, "[unflatten] cannot infer a size with other sizes multiplying to 0");
    CG_CHECK(cg_numel_ok(nsizes, ns + d, &got) && got == t->shape[d], CG_ERR_SHAPE,
             "[unflatten] provided sizes don't multiply up to the size of dim %lld (%lld) in the input tensor",
             (long long)d, (long long)t->shape[d]);
    for (int i = (int)d + 1; i < t->ndim; i++) ns[n++] = t->shape[i];
    return cg_view(t, n, ns);
}

/* ---------------------------------------------------------------- in-place views */

/* Note [In-place views]: t.transpose_(0, 1), t_, squeeze_, unsqueeze_ and
 * as_strided_ change t's own shape, strides and offset; the storage, the
 * tensor object and its base stay. The new geometry is that of the
 * out-of-place view v of t, and so is the history: when v recorded a node
 * (grad mode on, t requiring grad), t takes it as its grad_fn, renamed as
 * PyTorch names the in-place form (TBackward1, ...); its edge leads to t's
 * old history, so gradients reach whatever t came from. A retain_grad hook
 * stays on the old history, as in PyTorch. The storage's version is bumped:
 * a tensor saved for backward before the change fails the version check.
 * Like any in-place op these refuse a leaf that requires grad, and a view of
 * one, while grad mode is on; no data is written, so read-only memory and
 * internal overlap are accepted. */
static cg_status view_inplace_check(const char *op, const cg_tensor *t) {
    if (!t) return cg_set_error(CG_ERR_VALUE, "[%s] argument is NULL", op);
    return cg_check_inplace_history(op, "", t);
}

/* t takes the geometry and history of its view v (released here; NULL: the view failed) */
static cg_status view_commit_(cg_tensor *t, cg_tensor *v, const char *node_name) {
    if (!v) return cg_last_error();
    CG_ASSERT(v->storage == t->storage);
    t->ndim = v->ndim;
    if (v->ndim) {
        memcpy(t->shape, v->shape, sizeof(int64_t) * (size_t)v->ndim);
        memcpy(t->strides, v->strides, sizeof(int64_t) * (size_t)v->ndim);
    }
    t->offset = v->offset;
    if (v->grad_fn) {
        cg_node *n = v->grad_fn;
        n->name = node_name;
        cg_node_retain(n);
        if (t->grad_fn) cg_node_release(t->grad_fn); /* n's edge keeps the old history alive */
        t->grad_fn = n;
        t->output_nr = v->output_nr;
        t->requires_grad = true;
    }
    cg_storage_bump_version(t->storage);
    cg_tensor_release(v);
    return CG_OK;
}

cg_status cg_transpose_(cg_tensor *t, int64_t dim0, int64_t dim1) {
    if (view_inplace_check("transpose_", t)) return cg_last_error();
    return view_commit_(t, cg_transpose(t, dim0, dim1), "TransposeBackward1");
}

cg_status cg_t_(cg_tensor *t) {
    if (view_inplace_check("t_", t)) return cg_last_error();
    CG_CHECK_S(t->ndim <= 2, CG_ERR_RUNTIME, "[t_] t_() expects a tensor with <= 2 dimensions, but self is %dD",
               t->ndim);
    return view_commit_(t, cg_t(t), "TBackward1");
}

cg_status cg_unsqueeze_(cg_tensor *t, int64_t dim) {
    if (view_inplace_check("unsqueeze_", t)) return cg_last_error();
    return view_commit_(t, cg_unsqueeze(t, dim), "UnsqueezeBackward1");
}

cg_status cg_squeeze_(cg_tensor *t) {
    if (view_inplace_check("squeeze_", t)) return cg_last_error();
    return view_commit_(t, squeeze_mask(t, 0xffffffffu), "SqueezeBackward3");
}

cg_status cg_squeeze_dims_(cg_tensor *t, int ndims, const int64_t *dims) {
    if (view_inplace_check("squeeze_", t)) return cg_last_error();
    CG_CHECK_S(ndims >= 0 && (ndims == 0 || dims), CG_ERR_VALUE, "[squeeze_] invalid dims (%d of them)", ndims);
    uint32_t mask = 0;
    for (int i = 0; i < ndims; i++) {
        int64_t d;
        if (cg_wrap_dim("squeeze_", dims[i], t->ndim, &d)) return cg_last_error();
        if (!t->ndim) continue;
        CG_CHECK_S(!(mask & (1u << d)), CG_ERR_RUNTIME, "[squeeze_] dim %lld appears multiple times in the list of dims",
                   (long long)d);
        mask |= 1u << d;
    }
    return view_commit_(t, squeeze_mask(t, mask), ndims == 1 ? "SqueezeBackward4" : "SqueezeBackward5");
}

cg_status cg_as_strided_(cg_tensor *t, int ndim, const int64_t *shape, const int64_t *strides,
                         int64_t storage_offset) {
    if (view_inplace_check("as_strided_", t)) return cg_last_error();
    return view_commit_(t, cg_as_strided(t, ndim, shape, strides, storage_offset), "AsStridedBackward1");
}
