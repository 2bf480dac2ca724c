/* variadic.c — the variadic driver behind cat and stack (Note [Variadic
 * driver] in dispatch_internal.h) and the same-dtype strided copy the shape ops
 * use to move data between layouts. */
#include "dispatch_internal.h"

#include <string.h>

/* ---------------------------------------------------------------- strided copy */

void cg_copy_strided(cg_tensor *dst, const cg_tensor *src) {
    CG_ASSERT(dst->dtype == src->dtype && cg_shape_eq(dst->ndim, dst->shape, src->ndim, src->shape));
    CG_ASSERT(cg_device_eq(dst->device, src->device));
    cg_tensor *args[2] = {dst, (cg_tensor *)src};
    cg_iter it;
    cg_iter_init(&it, 2, args, dst->ndim, dst->shape);
    cg_backend_of(dst->device)->copy(dst->device, &it, dst->dtype, dst->dtype);
}

/* ---------------------------------------------------------------- validation */

/* PyTorch's legacy cat rule: a 1-D tensor of shape (0,) is ignored. */
static bool legacy_empty(const cg_tensor *t) { return t->ndim == 1 && t->shape[0] == 0; }

/* Checks the inputs; writes the reference input (whose shape the others must
 * match), the wrapped dim and the output shape. */
static cg_status validate(const cg_variadic_op *op, int n, cg_tensor *const *ts, int64_t dim, int *ref_out,
                          int64_t *dim_out, int *ondim, int64_t *oshape) {
    const char *name = op->schema.name;
    if (n <= 0 || !ts) return cg_set_error(CG_ERR_VALUE, "[%s] expected a non-empty list of tensors", name);
    for (int i = 0; i < n; i++) {
        if (!ts[i]) return cg_set_error(CG_ERR_VALUE, "[%s] tensor %d in the list is NULL", name, i);
        if (!cg_device_eq(ts[i]->device, ts[0]->device))
            return cg_set_error(CG_ERR_DEVICE,
                                "[%s] expected all tensors to be on the same device, but found %s (tensor 0) and %s "
                                "(tensor %d)", name, cg_device_name(ts[0]->device), cg_device_name(ts[i]->device), i);
        if (ts[i]->dtype != ts[0]->dtype)
            return cg_set_error(CG_ERR_DTYPE,
                                "[%s] dtype mismatch: %s (tensor 0) and %s (tensor %d) (the engine never promotes; "
                                "cast first)", name, cg_dtype_name(ts[0]->dtype), cg_dtype_name(ts[i]->dtype), i);
    }
    char a[CG_SHAPE_STR], b[CG_SHAPE_STR];
    int ref = 0;
    if (op->new_dim) {
        const cg_tensor *r = ts[0];
        if (r->ndim >= CG_MAX_DIMS)
            return cg_set_error(CG_ERR_SHAPE, "[%s] result rank would exceed the maximum of %d dims", name, CG_MAX_DIMS);
        if (cg_wrap_dim(name, dim, r->ndim + 1, dim_out)) return cg_last_error();
        for (int i = 1; i < n; i++)
            if (!cg_shape_eq(ts[i]->ndim, ts[i]->shape, r->ndim, r->shape))
                return cg_set_error(CG_ERR_SHAPE, "[%s] expects each tensor to be equal size, but got %s at entry 0 and %s at entry %d",
                                    name, cg_shape_str(a, r->ndim, r->shape), cg_shape_str(b, ts[i]->ndim, ts[i]->shape), i);
        *ondim = r->ndim + 1;
        for (int d = 0, j = 0; d < *ondim; d++) oshape[d] = d == *dim_out ? n : r->shape[j++];
        *ref_out = 0;
        return CG_OK;
    }
    while (ref < n && legacy_empty(ts[ref])) ref++;
    if (ref == n) ref = 0; /* all (0,): an ordinary 1-D cat */
    const cg_tensor *r = ts[ref];
    for (int i = 0; i < n; i++)
        if (ts[i]->ndim == 0)
            return cg_set_error(CG_ERR_SHAPE, "[%s] zero-dimensional tensor (at position %d) cannot be concatenated", name, i);
    if (cg_wrap_dim(name, dim, r->ndim, dim_out)) return cg_last_error();
    int64_t d = *dim_out, total = 0;
    for (int i = 0; i < n; i++) {
        const cg_tensor *t = ts[i];
        if (i != ref && legacy_empty(t) && !legacy_empty(r)) continue;
        if (t->ndim != r->ndim)
            return cg_set_error(CG_ERR_SHAPE,
                                "[%s] tensors must have the same number of dimensions: tensor %d has shape %s but "
                                "tensor %d has shape %s", name, ref, cg_shape_str(a, r->ndim, r->shape), i,
                                cg_shape_str(b, t->ndim, t->shape));
        for (int k = 0; k < r->ndim; k++)
            if (k != d && t->shape[k] != r->shape[k])
                return cg_set_error(CG_ERR_SHAPE,
                                    "[%s] sizes of tensors must match except in dimension %lld: expected size %lld but "
                                    "got size %lld for tensor number %d in the list (tensor %d has shape %s, tensor %d "
                                    "has shape %s)", name, (long long)d, (long long)r->shape[k], (long long)t->shape[k],
                                    i, ref, cg_shape_str(a, r->ndim, r->shape), i, cg_shape_str(b, t->ndim, t->shape));
        if (__builtin_add_overflow(total, t->shape[d], &total))
            return cg_set_error(CG_ERR_SHAPE, "[%s] concatenated size along dimension %lld overflows", name, (long long)d);
    }
    *ondim = r->ndim;
    memcpy(oshape, r->shape, sizeof(int64_t) * (size_t)r->ndim);
    oshape[d] = total;
    *ref_out = ref;
    return CG_OK;
}

/* ---------------------------------------------------------------- dispatch */

/* Copy each input into its slice of out: along dim (cat) or at index i of the
 * new dim (stack). */
static void dispatch(const cg_variadic_op *op, int n, cg_tensor *const *in, int64_t dim, cg_tensor *out) {
    if (cg_tensor_numel(out) == 0) return;
    int64_t off = 0;
    for (int i = 0; i < n; i++) {
        const cg_tensor *t = in[i];
        int64_t len = op->new_dim ? 1 : (t->ndim == out->ndim ? t->shape[dim] : 0);
        if (len == 0 || cg_tensor_numel(t) == 0) {
            off += len;
            continue;
        }
        /* the slice of out, in t's own geometry */
        int64_t st[CG_MAX_DIMS];
        for (int k = 0, j = 0; k < out->ndim; k++) {
            if (op->new_dim && k == dim) continue;
            st[j++] = out->strides[k];
        }
        cg_tensor *dst = cg_tensor_view_of(out, t->ndim, t->shape, st, out->offset + off * out->strides[dim]);
        CG_ASSERT(dst); /* a struct allocation; storage is shared */
        cg_copy_strided(dst, t);
        cg_tensor_release(dst);
        off += len;
    }
}

/* ---------------------------------------------------------------- driver */

static cg_status wire(const cg_variadic_op *op, int n, cg_tensor *const *in, int64_t dim, cg_tensor *out) {
    if (!op->backward || !cg_dtype_is_floating(out->dtype) || !cg_any_requires_grad(n, in)) return CG_OK;
    cg_node *node = cg_node_new(op->schema.node_name, op->backward, op, n, in, 1, 0);
    if (!node) return cg_last_error();
    node->iattr[0] = dim;
    node->iattr[1] = op->new_dim;
    cg_node_set_output(node, 0, out);
    cg_node_release(node); /* owned by out now */
    return CG_OK;
}

static cg_tensor *variadic_forward(const cg_variadic_op *op, int n, cg_tensor *const *ts, int64_t dim) {
    int ref = 0, ondim = 0;
    int64_t d, oshape[CG_MAX_DIMS];
    if (validate(op, n, ts, dim, &ref, &d, &ondim, oshape)) return NULL;
    cg_tensor **in = malloc((size_t)n * sizeof *in);
    CG_CHECK(in, CG_ERR_OOM, "[%s] out of memory for %d inputs", op->schema.name, n);
    bool owned;
    if (cg_schema_guard(&op->schema, n, ts, in, &owned)) {
        free(in);
        return NULL;
    }
    cg_tensor *out = cg_tensor_new(op->schema.name, ondim, oshape, in[ref]->dtype, in[ref]->device);
    if (out) {
        dispatch(op, n, in, d, out);
        if (wire(op, n, in, d, out)) {
            cg_tensor_release(out);
            out = NULL;
        }
    }
    if (owned) cg_release_all(n, in);
    free(in);
    return out;
}

/* the call recorded as a profiler event (off the hot path) */
static CG_PROF_COLD cg_tensor *variadic_forward_profiled(const cg_variadic_op *op, int n, cg_tensor *const *ts,
                                                         int64_t dim) {
    int64_t ev = cg_prof_begin(op->schema.name, CG_PROF_OP, n, ts);
    cg_tensor *r = variadic_forward(op, n, ts, dim);
    cg_prof_end(ev, r);
    return r;
}
cg_tensor *cg_variadic_forward(const cg_variadic_op *op, int n, cg_tensor *const *ts, int64_t dim) {
    if (cg_prof_active()) return variadic_forward_profiled(op, n, ts, dim);
    return variadic_forward(op, n, ts, dim);
}
