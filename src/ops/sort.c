/* sort.c — sorting along one dim: sort (values + int64 indices), argsort and
 * topk. The device's sort entry (the CPU's: src/backend/cpu/sort.c) sorts
 * every line stably, so ties keep their input order in both directions and
 * the `stable` flag is always honoured; NaN sorts as the largest value
 * (PyTorch). Backward of the values scatters the gradient into zeros at the
 * indices with scatter_add, so it differentiates to any order. */
#include "../dispatch/dispatch_internal.h"

static const cg_op_schema k_sort = {"sort", "SortBackward0", 1, CG_AMP_KEEP, false, false, false};
static const cg_op_schema k_topk = {"topk", "TopkBackward0", 1, CG_AMP_KEEP, false, false, false};

/* gx = scatter_add(zeros(x), dim, indices, g): indices are distinct per line */
static cg_status sort_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    const cg_tensor_meta *m = &node->input_meta[0];
    cg_tensor *idx = cg_node_saved(node, 0);
    if (!idx) return cg_last_error();
    cg_tensor *z = cg_zeros(m->ndim, m->shape, g[0]->dtype, g[0]->device);
    gin[0] = z ? cg_scatter_add(z, node->iattr[0], idx, g[0]) : NULL;
    cg_tensor_release(z);
    cg_tensor_release(idx);
    return gin[0] ? CG_OK : cg_last_error();
}

/* Sort every line of x along dim and keep the first k: values (when wanted)
 * and indices of shape x with size k along dim. */
static cg_status sort_body(const cg_op_schema *s, cg_tensor *x, int64_t dim, int64_t k, bool k_given, bool desc,
                           cg_tensor **values, cg_tensor **indices) {
    const char *op = s->name;
    CG_CHECK_S(indices, CG_ERR_VALUE, "[%s] output pointer is NULL", op);
    if (values) *values = NULL;
    *indices = NULL;
    CG_CHECK_S(x, CG_ERR_VALUE, "[%s] argument is NULL", op);
    int64_t d;
    if (cg_wrap_dim(op, dim, x->ndim, &d)) return cg_last_error();
    cg_tensor *o;
    bool owned;
    if (cg_schema_guard(s, 1, &x, &o, &owned)) return cg_last_error();
    if (owned) cg_tensor_release(o); /* AMP_KEEP: never casts */
    if (k_given && cg_dtype_is_barebones(x->dtype)) return cg_dtype_unsupported(op, x->dtype); /* topk, as PyTorch */
    int64_t n = x->ndim ? x->shape[d] : 1;
    if (!k_given) k = n;
    CG_CHECK_S(k >= 0 && k <= n, CG_ERR_INDEX, "[%s] selected index k out of range (k = %lld, size %lld along dim %lld)",
               op, (long long)k, (long long)n, (long long)d);
    int64_t shape[CG_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++) shape[i] = i == d ? k : x->shape[i];
    cg_tensor *v = values ? cg_tensor_new(op, x->ndim, shape, x->dtype, x->device) : NULL;
    cg_tensor *ix = (v || !values) ? cg_tensor_new(op, x->ndim, shape, CG_DTYPE_I64, x->device) : NULL;
    if (!ix) {
        cg_tensor_release(v);
        return cg_last_error();
    }
    cg_status st;
    CG_RUN_KERNEL(st, op, x->device, sort, op, v, ix, x, d, k, desc);
    if (st) {
        cg_tensor_release(v);
        cg_tensor_release(ix);
        return st;
    }
    bool failed = false;
    cg_node *node = v ? cg_wire_unary_output(s->node_name, sort_backward, s, 1, &x, v, 1, &failed) : NULL;
    if (!failed && node) {
        node->iattr[0] = d;
        failed = cg_node_save(node, 0, ix, false, 0) != CG_OK;
    }
    if (failed) {
        cg_tensor_release(v);
        cg_tensor_release(ix);
        return cg_last_error();
    }
    if (values) *values = v;
    *indices = ix;
    return CG_OK;
}

/* the call recorded as a profiler event (off the hot path) */
static CG_PROF_COLD cg_status sort_impl_profiled(const cg_op_schema *s, cg_tensor *x, int64_t dim, int64_t k,
                                                 bool k_given, bool desc, cg_tensor **values, cg_tensor **indices) {
    int64_t ev = cg_prof_begin(s->name, CG_PROF_OP, 1, &x);
    cg_status st = sort_body(s, x, dim, k, k_given, desc, values, indices);
    cg_prof_end(ev, indices ? *indices : NULL);
    return st;
}
static cg_status sort_impl(const cg_op_schema *s, cg_tensor *x, int64_t dim, int64_t k, bool k_given, bool desc,
                           cg_tensor **values, cg_tensor **indices) {
    if (cg_prof_active()) return sort_impl_profiled(s, x, dim, k, k_given, desc, values, indices);
    return sort_body(s, x, dim, k, k_given, desc, values, indices);
}

cg_status cg_sort(cg_tensor *x, int64_t dim, bool descending, bool stable, cg_tensor **values, cg_tensor **indices) {
    (void)stable; /* always stable */
    CG_CHECK_S(values, CG_ERR_VALUE, "[sort] output pointer is NULL");
    return sort_impl(&k_sort, x, dim, 0, false, descending, values, indices);
}

cg_tensor *cg_argsort(cg_tensor *x, int64_t dim, bool descending, bool stable) {
    (void)stable;
    cg_tensor *ix = NULL;
    sort_impl(&k_sort, x, dim, 0, false, descending, NULL, &ix);
    return ix;
}

/* sorted = false may return any order; ours is always sorted. */
cg_status cg_topk(cg_tensor *x, int64_t k, int64_t dim, bool largest, bool sorted, cg_tensor **values, cg_tensor **indices) {
    (void)sorted;
    CG_CHECK_S(values, CG_ERR_VALUE, "[topk] output pointer is NULL");
    return sort_impl(&k_topk, x, dim, k, true, largest, values, indices);
}
