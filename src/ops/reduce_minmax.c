/* reduce_minmax.c — value-selecting reductions: amax / amin (dims list),
 * max / min along one dim (values + int64 indices), max / min over all
 * elements, argmax / argmin. NaN propagates as the extreme value; ties pick
 * the first occurrence. Reducing over zero elements is an error (no identity).
 * Descriptors and backward formulas; the loops (kinds MAX and MIN) are the
 * backends' (the CPU's in src/backend/cpu/reduce_minmax.c). */
#include "reduce_internal.h"

/* ---------------------------------------------------------------- backward formulas */

/* amax / amin: the gradient is split evenly among the elements equal to the
 * result: (g / count) * mask, PyTorch's scale_grad_by_count (a slice whose
 * result is NaN matches nothing and gets NaN, as in PyTorch). */
static cg_status amax_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    cg_rd_tmp tl = {0};
    cg_tensor *x, *out, *ou, *gu, *mask, *maskf, *cnt, *q;
    CG_RD_TRY(x, cg_node_saved(node, 0));
    CG_RD_TRY(out, cg_node_saved(node, 1));
    CG_RD_TRY(ou, cg_reduce_unsqueeze(node, out));
    CG_RD_TRY(gu, cg_reduce_unsqueeze(node, g[0]));
    CG_RD_TRY(mask, cg_eq(x, ou));
    CG_RD_TRY(maskf, cg_to_dtype(mask, g[0]->dtype));
    CG_RD_TRY(cnt, cg_rd_mask_count(node, mask, g[0]->dtype));
    CG_RD_TRY(q, cg_div(gu, cnt));
    gin[0] = cg_mul(q, maskf);
fail:
    cg_rd_free(&tl);
    return gin[0] ? CG_OK : cg_last_error();
}

/* max() / min() over all elements: PyTorch's evenly_distribute_backward: the
 * gradient goes in equal parts to the elements equal to the result, or to
 * the NaN elements when the result is NaN. */
static cg_status all_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    cg_rd_tmp tl = {0};
    cg_tensor *x, *out, *mask, *cnt, *q, *zero;
    CG_RD_TRY(x, cg_node_saved(node, 0));
    CG_RD_TRY(out, cg_node_saved(node, 1));
    double v = 0;
    if (cg_device_has_data(out->device) && cg_tensor_item(out, &v)) goto fail; /* meta: no value */
    if (isnan(v)) CG_RD_TRY(mask, cg_isnan(x));
    else CG_RD_TRY(mask, cg_eq(x, out));
    CG_RD_TRY(cnt, cg_rd_mask_count(node, mask, g[0]->dtype));
    CG_RD_TRY(q, cg_div(g[0], cnt));
    CG_RD_TRY(zero, cg_rd_scalar(0.0, g[0]));
    gin[0] = cg_where(mask, q, zero);
fail:
    cg_rd_free(&tl);
    return gin[0] ? CG_OK : cg_last_error();
}

/* max / min along a dim: the gradient flows to the selected index only:
 * where(arange(size) == unsqueeze(indices), g, 0), a one-hot scatter along
 * the dim built from differentiable ops. */
static cg_status dim_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    const cg_tensor_meta *m = &node->input_meta[0];
    uint32_t mask = (uint32_t)node->iattr[0];
    if (cg_rd_count(node) <= 1)
        return (gin[0] = cg_reduce_grad_expand(node, g[0])) ? CG_OK : cg_last_error();
    cg_rd_tmp tl = {0};
    cg_tensor *idx, *iu, *ar, *arr, *hot, *gu, *zero;
    int64_t shape[CG_MAX_DIMS];
    int d = 0;
    for (int i = 0; i < m->ndim; i++) {
        shape[i] = 1;
        if (mask & (1u << i)) d = i;
    }
    shape[d] = m->shape[d];
    CG_RD_TRY(idx, cg_node_saved(node, 0));
    CG_RD_TRY(iu, cg_reduce_unsqueeze(node, idx));
    CG_RD_TRY(ar, cg_arange(0, (double)m->shape[d], 1, CG_DTYPE_I64, g[0]->device));
    CG_RD_TRY(arr, cg_reshape(ar, m->ndim, shape));
    CG_RD_TRY(hot, cg_eq(arr, iu));
    CG_RD_TRY(gu, cg_reduce_unsqueeze(node, g[0]));
    CG_RD_TRY(zero, cg_rd_scalar(0.0, g[0]));
    gin[0] = cg_where(hot, gu, zero);
fail:
    cg_rd_free(&tl);
    return gin[0] ? CG_OK : cg_last_error();
}

/* ---------------------------------------------------------------- descriptors */

#define MM_OP(var, opname, node, KIND, idx, bw, saves)                                     \
    static const cg_reduce_op var = {                                                      \
        .schema = {opname, node, 1, CG_AMP_KEEP, false, saves, saves},                     \
        .out_dtype = CG_SAME_DTYPE,                                                        \
        .has_indices = idx,                                                                \
        .empty_error = true,                                                               \
        .chunked = !(idx),                                                                 \
        .kind = CG_REDUCE_##KIND, /* the column loops serve only the ops without indices */ \
        .backward = bw,                                                                    \
    };
MM_OP(k_amax, "amax", "AmaxBackward0", MAX, false, amax_backward, true)
MM_OP(k_amin, "amin", "AminBackward0", MIN, false, amax_backward, true)
MM_OP(k_max_all, "max", "MaxBackward1", MAX, false, all_backward, true)
MM_OP(k_min_all, "min", "MinBackward1", MIN, false, all_backward, true)
MM_OP(k_max_dim, "max", "MaxBackward0", MAX, true, dim_backward, false)
MM_OP(k_min_dim, "min", "MinBackward0", MIN, true, dim_backward, false)
MM_OP(k_argmax, "argmax", NULL, MAX, true, NULL, false)
MM_OP(k_argmin, "argmin", NULL, MIN, true, NULL, false)

/* ---------------------------------------------------------------- entry points */

static cg_tensor *amax_impl(const cg_reduce_op *op, cg_tensor *x, int ndims, const int64_t *dims, bool keepdim) {
    uint32_t mask;
    if (cg_rd_mask(op->schema.name, x, ndims, dims, false, &mask)) return NULL;
    cg_tensor *out = NULL;
    cg_reduce_forward(op, x, mask, keepdim, NULL, 0, -1, &out, NULL);
    return out;
}
cg_tensor *cg_amax(cg_tensor *x, int ndims, const int64_t *dims, bool keepdim) { return amax_impl(&k_amax, x, ndims, dims, keepdim); }
cg_tensor *cg_amin(cg_tensor *x, int ndims, const int64_t *dims, bool keepdim) { return amax_impl(&k_amin, x, ndims, dims, keepdim); }
cg_tensor *cg_max(cg_tensor *x) { return amax_impl(&k_max_all, x, 0, NULL, false); }
cg_tensor *cg_min(cg_tensor *x) { return amax_impl(&k_min_all, x, 0, NULL, false); }

static cg_status dim_impl(const cg_reduce_op *op, cg_tensor *x, int64_t dim, bool keepdim, cg_tensor **values,
                          cg_tensor **indices) {
    const char *name = op->schema.name;
    CG_CHECK_S(values && indices, CG_ERR_VALUE, "[%s] output pointers are NULL", name);
    *values = *indices = NULL;
    CG_CHECK_S(x, CG_ERR_VALUE, "[%s] argument is NULL", name);
    int64_t d;
    if (cg_wrap_dim(name, dim, x->ndim, &d)) return cg_last_error();
    uint32_t mask = x->ndim ? 1u << d : 0;
    return cg_reduce_forward(op, x, mask, keepdim, NULL, 0, -1, values, indices);
}
cg_status cg_max_dim(cg_tensor *x, int64_t dim, bool keepdim, cg_tensor **values, cg_tensor **indices) {
    return dim_impl(&k_max_dim, x, dim, keepdim, values, indices);
}
cg_status cg_min_dim(cg_tensor *x, int64_t dim, bool keepdim, cg_tensor **values, cg_tensor **indices) {
    return dim_impl(&k_min_dim, x, dim, keepdim, values, indices);
}

/* has_dim == false: the flat index over all elements (row-major). keepdim
 * then keeps every dim with size 1, as PyTorch does. */
static cg_tensor *arg_impl(const cg_reduce_op *op, cg_tensor *x, bool has_dim, int64_t dim, bool keepdim) {
    const char *name = op->schema.name;
    CG_CHECK(x, CG_ERR_VALUE, "[%s] argument is NULL", name);
    uint32_t mask;
    if (has_dim) {
        int64_t d;
        if (cg_wrap_dim(name, dim, x->ndim, &d)) return NULL;
        mask = x->ndim ? 1u << d : 0;
    } else if (cg_dims_mask(name, 0, NULL, x->ndim, &mask)) {
        return NULL;
    }
    cg_tensor *vals = NULL, *idx = NULL;
    /* the values are a by-product: no graph for them */
    bool prev = cg_set_grad_enabled(false);
    cg_reduce_forward(op, x, mask, keepdim, NULL, 0, -1, &vals, &idx);
    cg_set_grad_enabled(prev);
    cg_tensor_release(vals);
    return idx;
}
cg_tensor *cg_argmax(cg_tensor *x, bool has_dim, int64_t dim, bool keepdim) { return arg_impl(&k_argmax, x, has_dim, dim, keepdim); }
cg_tensor *cg_argmin(cg_tensor *x, bool has_dim, int64_t dim, bool keepdim) { return arg_impl(&k_argmin, x, has_dim, dim, keepdim); }
