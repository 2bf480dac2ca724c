/* reduce.c — sum-like reductions: sum, mean, prod, count_nonzero, any, all
 * (descriptor and backward side by side; the loops are the backends', by
 * kind: the CPU's in src/backend/cpu/reduce_sum.c), plus the helpers shared by
 * the reduction files (reduce_internal.h). Floating reductions accumulate in
 * double; integer sums and products in int64 (PyTorch's result dtype). */
#include "reduce_internal.h"

/* ---------------------------------------------------------------- sum */
/* gx = expand(g) */
static cg_status sum_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    return (gin[0] = cg_reduce_grad_expand(node, g[0])) ? CG_OK : cg_last_error();
}

static const cg_reduce_op k_sum = {
    .schema = {"sum", "SumBackward1", 1, CG_AMP_KEEP, false, false, false},
    .out_dtype = CG_SAME_DTYPE,
    .kind = CG_REDUCE_SUM,
    .chunked = true,
    .backward = sum_backward,
};

cg_tensor *cg_sum_dtype(cg_tensor *x, int ndims, const int64_t *dims, bool keepdim, cg_dtype dt) {
    CG_CHECK(x, CG_ERR_VALUE, "[sum] argument is NULL");
    uint32_t mask;
    if (cg_dims_mask("sum", ndims, dims, x->ndim, &mask)) return NULL;
    cg_tensor *src = x;
    if ((int)dt >= 0 && dt != x->dtype) { /* sum(dtype=...) casts first, as PyTorch does */
        src = cg_to_dtype(x, dt);
        if (!src) return NULL;
    } else {
        cg_tensor_retain(src);
    }
    int odt = cg_dtype_is_floating(src->dtype) ? -1 : CG_DTYPE_I64;
    cg_tensor *out = NULL;
    cg_reduce_forward(&k_sum, src, mask, keepdim, NULL, 0, odt, &out, NULL);
    cg_tensor_release(src);
    return out;
}

cg_tensor *cg_sum(cg_tensor *x, int ndims, const int64_t *dims, bool keepdim) {
    return cg_sum_dtype(x, ndims, dims, keepdim, (cg_dtype)-1);
}

/* ---------------------------------------------------------------- any / all (-> bool) */
static const cg_reduce_op k_any = {
    .schema = {"any", NULL, 1, CG_AMP_KEEP, false, false, false},
    .out_dtype = CG_DTYPE_BOOL,
    .kind = CG_REDUCE_ANY,
    .chunked = true,
};
static const cg_reduce_op k_all = {
    .schema = {"all", NULL, 1, CG_AMP_KEEP, false, false, false},
    .out_dtype = CG_DTYPE_BOOL,
    .kind = CG_REDUCE_ALL,
    .chunked = true,
};

static cg_tensor *bool_reduce(const cg_reduce_op *op, cg_tensor *x, int ndims, const int64_t *dims, bool keepdim) {
    CG_CHECK(x, CG_ERR_VALUE, "[%s] argument is NULL", op->schema.name);
    uint32_t mask;
    if (cg_dims_mask(op->schema.name, ndims, dims, x->ndim, &mask)) return NULL;
    cg_tensor *out = NULL;
    cg_reduce_forward(op, x, mask, keepdim, NULL, 0, -1, &out, NULL);
    return out;
}
cg_tensor *cg_any(cg_tensor *x, int ndims, const int64_t *dims, bool keepdim) { return bool_reduce(&k_any, x, ndims, dims, keepdim); }
cg_tensor *cg_all(cg_tensor *x, int ndims, const int64_t *dims, bool keepdim) { return bool_reduce(&k_all, x, ndims, dims, keepdim); }

/* ---------------------------------------------------------------- shared helpers (reduce_internal.h) */

int64_t cg_rd_count(const cg_node *node) {
    const cg_tensor_meta *m = &node->input_meta[0];
    uint32_t mask = (uint32_t)node->iattr[0];
    int64_t r = 1;
    for (int d = 0; d < m->ndim; d++)
        if (mask & (1u << d)) r *= m->shape[d];
    return r;
}

bool cg_rd_is_full(const cg_node *node) {
    const cg_tensor_meta *m = &node->input_meta[0];
    uint32_t mask = (uint32_t)node->iattr[0];
    for (int d = 0; d < m->ndim; d++)
        if (!(mask & (1u << d))) return false;
    return true;
}

cg_tensor *cg_rd_scalar(double v, const cg_tensor *t) { return cg_scalar_on(v, t->dtype, t->device); }

cg_tensor *cg_rd_sgn(cg_tensor *x) {
    cg_rd_tmp tl = {0};
    cg_tensor *zero, *one, *mone, *gt, *lt, *inner, *r = NULL;
    bool prev = cg_set_grad_enabled(false);
    CG_RD_TRY(zero, cg_rd_scalar(0.0, x));
    CG_RD_TRY(one, cg_rd_scalar(1.0, x));
    CG_RD_TRY(mone, cg_rd_scalar(-1.0, x));
    CG_RD_TRY(gt, cg_gt(x, zero));
    CG_RD_TRY(lt, cg_lt(x, zero));
    CG_RD_TRY(inner, cg_where(lt, mone, zero));
    CG_RD_TRY(inner, cg_where(gt, one, inner));
    /* NaN compares false both ways: x * 0 keeps it NaN, and is 0 elsewhere */
    {
        cg_tensor *nan = cg_rd_keep(&tl, cg_isnan(x));
        if (!nan) goto fail;
        r = cg_where(nan, x, inner);
    }
fail:
    cg_set_grad_enabled(prev);
    cg_rd_free(&tl);
    return r;
}

static int mask_dims(uint32_t mask, int ndim, int64_t *dims) {
    int n = 0;
    for (int d = 0; d < ndim; d++)
        if (mask & (1u << d)) dims[n++] = d;
    return n;
}

cg_tensor *cg_rd_mask_count(cg_node *node, cg_tensor *mask, cg_dtype dt) {
    int64_t dims[CG_MAX_DIMS];
    int nd = mask_dims((uint32_t)node->iattr[0], node->input_meta[0].ndim, dims);
    cg_tensor *c = cg_sum(mask, nd, dims, true);
    if (!c) return NULL;
    cg_tensor *f = cg_to_dtype(c, dt);
    cg_tensor_release(c);
    return f;
}

cg_status cg_rd_mask(const char *op, cg_tensor *x, int ndims, const int64_t *dims, bool float_only, uint32_t *mask) {
    CG_CHECK_S(x, CG_ERR_VALUE, "[%s] argument is NULL", op);
    if (cg_dims_mask(op, ndims, dims, x->ndim, mask)) return cg_last_error();
    if (float_only && !cg_dtype_is_floating(x->dtype))
        return cg_set_error(CG_ERR_DTYPE, "[%s] not supported for dtype %s (expected a floating dtype)", op,
                            cg_dtype_name(x->dtype));
    return CG_OK;
}

/* ---------------------------------------------------------------- mean (float dtypes; empty -> nan) */
/* gx = expand(g) / N */
static cg_status mean_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    cg_rd_tmp tl = {0};
    cg_tensor *e, *n;
    CG_RD_TRY(e, cg_reduce_grad_expand(node, g[0]));
    CG_RD_TRY(n, cg_rd_scalar((double)cg_rd_count(node), g[0]));
    gin[0] = cg_div(e, n);
fail:
    cg_rd_free(&tl);
    return gin[0] ? CG_OK : cg_last_error();
}

static const cg_reduce_op k_mean = {
    .schema = {"mean", "MeanBackward1", 1, CG_AMP_KEEP, false, false, false},
    .out_dtype = CG_SAME_DTYPE,
    .kind = CG_REDUCE_MEAN,
    .backward = mean_backward,
};

cg_tensor *cg_mean(cg_tensor *x, int ndims, const int64_t *dims, bool keepdim) {
    uint32_t mask;
    if (cg_rd_mask("mean", x, ndims, dims, true, &mask)) return NULL;
    cg_tensor *out = NULL;
    cg_reduce_forward(&k_mean, x, mask, keepdim, NULL, 0, -1, &out, NULL);
    return out;
}

/* ---------------------------------------------------------------- prod (empty -> 1) */
static const cg_reduce_op k_prod;
static cg_tensor *prod_mask(cg_tensor *x, uint32_t mask, bool keepdim) {
    cg_tensor *out = NULL;
    cg_reduce_forward(&k_prod, x, mask, keepdim, NULL, 0, -1, &out, NULL);
    return out;
}

/* Note [prod backward with zeros]: d prod / dx_i = prod_{j != i} x_j.
 * - no zero in the input: g * out / x (PyTorch's fast path);
 * - zeros, first-order only (grad mode off): with P = product of the nonzero
 *   elements of the slice and z = its zero count, the gradient is P / x_i when
 *   z == 0, P at the zero when z == 1, and 0 otherwise;
 * - zeros with create_graph: the where-formula has the right value but not the
 *   right derivative (it is flat in the zero elements), so the product of the
 *   others is formed exactly as prod over j of where(j == i, 1, x_j): a
 *   (K, n, n) tensor, n = slice length, differentiable to any order (PyTorch
 *   uses exclusive cumprods to the same effect). */
#define PROD_EXACT_MAX_ELEMS (1ll << 26)

static cg_tensor *prod_others_exact(cg_node *node, cg_tensor *x) {
    const cg_tensor_meta *m = &node->input_meta[0];
    uint32_t mask = (uint32_t)node->iattr[0];
    cg_rd_tmp tl = {0};
    cg_tensor *r = NULL, *xp, *xr, *ar, *a1, *a2, *eye, *one, *e, *oth, *op;
    int64_t perm[CG_MAX_DIMS], inv[CG_MAX_DIMS], pshape[CG_MAX_DIMS];
    int p = 0;
    int64_t K = 1, n = 1;
    for (int d = 0; d < m->ndim; d++)
        if (!(mask & (1u << d))) perm[p] = d, pshape[p++] = m->shape[d], K *= m->shape[d];
    for (int d = 0; d < m->ndim; d++)
        if (mask & (1u << d)) perm[p] = d, pshape[p++] = m->shape[d], n *= m->shape[d];
    for (int i = 0; i < m->ndim; i++) inv[perm[i]] = i;
    if ((double)K * (double)n * (double)n > (double)PROD_EXACT_MAX_ELEMS) {
        cg_set_error(CG_ERR_NOT_IMPLEMENTED,
                     "[prod] higher-order gradient of prod over slices of %lld elements containing zeros is not "
                     "supported (it needs %lld x %lld x %lld temporaries)",
                     (long long)n, (long long)K, (long long)n, (long long)n);
        return NULL;
    }
    int64_t s3[3] = {K, 1, n}, c1[2] = {n, 1}, r1[2] = {1, n};
    CG_RD_TRY(xp, cg_permute(x, perm));
    CG_RD_TRY(xr, cg_reshape(xp, 3, s3));
    CG_RD_TRY(ar, cg_arange(0, (double)n, 1, CG_DTYPE_I64, x->device));
    CG_RD_TRY(a1, cg_reshape(ar, 2, c1));
    CG_RD_TRY(a2, cg_reshape(ar, 2, r1));
    CG_RD_TRY(eye, cg_eq(a1, a2));
    CG_RD_TRY(one, cg_rd_scalar(1.0, x));
    CG_RD_TRY(e, cg_where(eye, one, xr));            /* (K, n, n): row i is x with x_i -> 1 */
    CG_RD_TRY(oth, prod_mask(e, 1u << 2, false));    /* (K, n) */
    CG_RD_TRY(op, cg_reshape(oth, m->ndim, pshape));
    r = cg_permute(op, inv);
fail:
    cg_rd_free(&tl);
    return r;
}

static cg_status prod_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    const cg_tensor_meta *m = &node->input_meta[0];
    uint32_t mask = (uint32_t)node->iattr[0];
    if (cg_rd_count(node) <= 1 || cg_shape_numel(m->ndim, m->shape) == 0)
        return (gin[0] = cg_reduce_grad_expand(node, g[0])) ? CG_OK : cg_last_error();
    cg_rd_tmp tl = {0};
    cg_tensor *x, *gu, *zero, *isz, *sel = NULL;
    CG_RD_TRY(x, cg_node_saved(node, 0));
    CG_RD_TRY(gu, cg_reduce_unsqueeze(node, g[0]));
    CG_RD_TRY(zero, cg_rd_scalar(0.0, x));
    CG_RD_TRY(isz, cg_eq(x, zero));
    bool has_zero = true;
    if (cg_device_has_data(x->device)) { /* meta: no values, the general formula */
        cg_tensor *any;
        double v = 0;
        CG_RD_TRY(any, cg_any(isz, 0, NULL, false));
        if (cg_tensor_item(any, &v)) goto fail;
        has_zero = v != 0;
    }
    if (!has_zero) {
        cg_tensor *out, *ou;
        CG_RD_TRY(out, cg_node_saved(node, 1));
        CG_RD_TRY(ou, cg_reduce_unsqueeze(node, out));
        CG_RD_TRY(sel, cg_div(ou, x));
    } else if (!cg_is_grad_enabled()) {
        cg_tensor *one, *xnz, *P, *zc, *zi, *oi, *c0, *c1, *q, *inner;
        int64_t dims[CG_MAX_DIMS];
        int nd = mask_dims(mask, m->ndim, dims);
        CG_RD_TRY(one, cg_rd_scalar(1.0, x));
        CG_RD_TRY(xnz, cg_where(isz, one, x));
        CG_RD_TRY(P, prod_mask(xnz, mask, true));
        CG_RD_TRY(zc, cg_sum(isz, nd, dims, true));
        CG_RD_TRY(zi, cg_scalar_on(0, CG_DTYPE_I64, x->device));
        CG_RD_TRY(oi, cg_scalar_on(1, CG_DTYPE_I64, x->device));
        CG_RD_TRY(c0, cg_eq(zc, zi));
        CG_RD_TRY(c1, cg_eq(zc, oi));
        CG_RD_TRY(c1, cg_mul(c1, isz));
        CG_RD_TRY(q, cg_div(P, xnz));
        CG_RD_TRY(inner, cg_where(c1, P, zero));
        CG_RD_TRY(sel, cg_where(c0, q, inner));
    } else {
        CG_RD_TRY(sel, prod_others_exact(node, x));
    }
    gin[0] = cg_mul(gu, sel);
fail:
    cg_rd_free(&tl);
    return gin[0] ? CG_OK : cg_last_error();
}

static const cg_reduce_op k_prod = {
    .schema = {"prod", "ProdBackward1", 1, CG_AMP_FP32, false, true, true},
    .out_dtype = CG_SAME_DTYPE,
    .kind = CG_REDUCE_PROD,
    .chunked = true,
    .backward = prod_backward,
};

cg_tensor *cg_prod(cg_tensor *x, int ndims, const int64_t *dims, bool keepdim) {
    uint32_t mask;
    if (cg_rd_mask("prod", x, ndims, dims, false, &mask)) return NULL;
    int odt = cg_dtype_is_floating(x->dtype) ? -1 : CG_DTYPE_I64;
    cg_tensor *out = NULL;
    cg_reduce_forward(&k_prod, x, mask, keepdim, NULL, 0, odt, &out, NULL);
    return out;
}

/* ---------------------------------------------------------------- count_nonzero (-> int64) */
static const cg_reduce_op k_count_nonzero = {
    .schema = {"count_nonzero", NULL, 1, CG_AMP_KEEP, false, false, false},
    .out_dtype = CG_DTYPE_I64,
    .kind = CG_REDUCE_COUNT_NONZERO,
};

cg_tensor *cg_count_nonzero(cg_tensor *x, int ndims, const int64_t *dims) {
    uint32_t mask;
    if (cg_rd_mask("count_nonzero", x, ndims, dims, false, &mask)) return NULL;
    cg_tensor *out = NULL;
    cg_reduce_forward(&k_count_nonzero, x, mask, false, NULL, 0, -1, &out, NULL);
    return out;
}
