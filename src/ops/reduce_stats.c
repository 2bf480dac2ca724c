/* reduce_stats.c — statistical reductions on floating dtypes: var / std
 * (with `correction`), logsumexp (max-shifted, stable) and vector norms
 * (any real p, +-inf, 0), plus the private |x|^q op their backward formulas
 * need. Everything accumulates in double; integer inputs are CG_ERR_DTYPE
 * (the Python layer promotes). Descriptors and backward formulas; the loops
 * are the backends' (the CPU's in src/backend/cpu/reduce_stats.c). */
#include "reduce_internal.h"

/* ---------------------------------------------------------------- |x|^q (private, differentiable)
 * p = {q}: a hand row of the op table (loops in src/backend/cpu/elementwise_hand.c) */
static cg_tensor *abspow(cg_tensor *x, double q);

/* d|x|^q/dx = q |x|^(q-1) sgn(x); itself written with abspow, so any order works */
static cg_status abspow_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    double q = node->dattr[0];
    cg_rd_tmp tl = {0};
    cg_tensor *x, *a, *sg, *qs, *t;
    CG_RD_TRY(x, cg_node_saved(node, 0));
    if (q == 0) {
        gin[0] = cg_zeros_like(x);
        goto fail;
    }
    CG_RD_TRY(a, abspow(x, q - 1));
    CG_RD_TRY(sg, cg_rd_sgn(x));
    CG_RD_TRY(qs, cg_rd_scalar(q, x));
    CG_RD_TRY(t, cg_mul(a, sg));
    CG_RD_TRY(t, cg_mul(t, qs));
    gin[0] = cg_mul(g[0], t);
fail:
    cg_rd_free(&tl);
    return gin[0] ? CG_OK : cg_last_error();
}

static const cg_unary_op k_abspow = {
    .id = CG_OP_ABSPOW,
    .schema = {"abs_pow", "AbsPowBackward0", 1, CG_AMP_KEEP, false, true, false},
    .arity = 1, .out_dtype = CG_SAME_DTYPE,
    .dtypes = CG_OP_DTYPES_ABSPOW,
    .backward = abspow_backward,
};
static cg_tensor *abspow(cg_tensor *x, double q) { return cg_unary_forward(&k_abspow, x, &q, 1); }

/* ---------------------------------------------------------------- var / std
 * Two passes in double: the mean, then the sum of squared deviations,
 * divided by max(0, N - correction) (0/0 -> nan, x/0 -> inf, as PyTorch).
 * Contiguous runs keep sixteen accumulators per pass; column folds (Note
 * [Column reductions]) keep the strided order; one whole large reduction sums
 * both passes in fixed chunks (Note [Chunked reductions]). */
/* PyTorch's var_backward: (2 / (N - correction)) * g * (x - mean(x)); over all
 * elements with N - correction <= 0: g * where(x == mean, nan, inf).
 * gu: the output gradient at the input's rank (keepdim shape). */
static cg_tensor *var_grad(cg_node *node, cg_tensor *x, cg_tensor *gu) {
    const cg_tensor_meta *m = &node->input_meta[0];
    uint32_t mask = (uint32_t)node->iattr[0];
    double dof = (double)cg_rd_count(node) - node->dattr[0];
    int64_t dims[CG_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < m->ndim; d++)
        if (mask & (1u << d)) dims[nd++] = d;
    cg_rd_tmp tl = {0};
    cg_tensor *mean, *r = NULL;
    CG_RD_TRY(mean, cg_mean(x, nd, dims, true));
    if (dof <= 0 && cg_rd_is_full(node)) {
        cg_tensor *eq, *nan, *inf, *w;
        CG_RD_TRY(eq, cg_eq(x, mean));
        CG_RD_TRY(nan, cg_rd_scalar(NAN, x));
        CG_RD_TRY(inf, cg_rd_scalar(INFINITY, x));
        CG_RD_TRY(w, cg_where(eq, nan, inf));
        r = cg_mul(gu, w);
    } else {
        cg_tensor *c, *dev, *t;
        CG_RD_TRY(c, cg_rd_scalar(2.0 / dof, x));
        CG_RD_TRY(dev, cg_sub(x, mean));
        CG_RD_TRY(t, cg_mul(gu, c));
        r = cg_mul(t, dev);
    }
fail:
    cg_rd_free(&tl);
    return r;
}

static cg_status var_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    cg_rd_tmp tl = {0};
    cg_tensor *x, *gu;
    CG_RD_TRY(x, cg_node_saved(node, 0));
    CG_RD_TRY(gu, cg_reduce_unsqueeze(node, g[0]));
    gin[0] = var_grad(node, x, gu);
fail:
    cg_rd_free(&tl);
    return gin[0] ? CG_OK : cg_last_error();
}

/* PyTorch's std_backward: var_backward(where(std == 0, 0, g / (2 std))) */
static cg_status std_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    cg_rd_tmp tl = {0};
    cg_tensor *x, *out, *ou, *gu, *zero, *one, *two, *isz, *safe, *den, *q, *gv;
    CG_RD_TRY(x, cg_node_saved(node, 0));
    CG_RD_TRY(out, cg_node_saved(node, 1));
    CG_RD_TRY(ou, cg_reduce_unsqueeze(node, out));
    CG_RD_TRY(gu, cg_reduce_unsqueeze(node, g[0]));
    CG_RD_TRY(zero, cg_rd_scalar(0.0, x));
    CG_RD_TRY(one, cg_rd_scalar(1.0, x));
    CG_RD_TRY(two, cg_rd_scalar(2.0, x));
    CG_RD_TRY(isz, cg_eq(ou, zero));
    CG_RD_TRY(safe, cg_where(isz, one, ou));
    CG_RD_TRY(den, cg_mul(safe, two));
    CG_RD_TRY(q, cg_div(gu, den));
    CG_RD_TRY(gv, cg_where(isz, zero, q));
    gin[0] = var_grad(node, x, gv);
fail:
    cg_rd_free(&tl);
    return gin[0] ? CG_OK : cg_last_error();
}

static const cg_reduce_op k_var = {
    .schema = {"var", "VarBackward0", 1, CG_AMP_KEEP, false, true, false},
    .out_dtype = CG_SAME_DTYPE,
    .kind = CG_REDUCE_VAR,
    .backward = var_backward,
};
static const cg_reduce_op k_std = {
    .schema = {"std", "StdBackward0", 1, CG_AMP_KEEP, false, true, true},
    .out_dtype = CG_SAME_DTYPE,
    .kind = CG_REDUCE_STD,
    .backward = std_backward,
};

static cg_tensor *var_impl(const cg_reduce_op *op, cg_tensor *x, int ndims, const int64_t *dims, double correction,
                           bool keepdim) {
    uint32_t mask;
    if (cg_rd_mask(op->schema.name, x, ndims, dims, true, &mask)) return NULL;
    CG_CHECK(isfinite(correction), CG_ERR_VALUE, "[%s] correction must be finite, got %g", op->schema.name, correction);
    cg_tensor *out = NULL;
    cg_reduce_forward(op, x, mask, keepdim, &correction, 1, -1, &out, NULL);
    return out;
}
cg_tensor *cg_var(cg_tensor *x, int ndims, const int64_t *dims, double correction, bool keepdim) {
    return var_impl(&k_var, x, ndims, dims, correction, keepdim);
}
cg_tensor *cg_std(cg_tensor *x, int ndims, const int64_t *dims, double correction, bool keepdim) {
    return var_impl(&k_std, x, ndims, dims, correction, keepdim);
}

/* ---------------------------------------------------------------- logsumexp
 * m = max (NaN ignored; set to 0 when infinite, as PyTorch), then
 * log(sum exp(x - m)) + m. Empty -> -inf. */
/* gx = g * exp(x - out) */
static cg_status lse_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    cg_rd_tmp tl = {0};
    cg_tensor *x, *out, *ou, *gu, *d, *e;
    CG_RD_TRY(x, cg_node_saved(node, 0));
    CG_RD_TRY(out, cg_node_saved(node, 1));
    CG_RD_TRY(ou, cg_reduce_unsqueeze(node, out));
    CG_RD_TRY(gu, cg_reduce_unsqueeze(node, g[0]));
    CG_RD_TRY(d, cg_sub(x, ou));
    CG_RD_TRY(e, cg_exp(d));
    gin[0] = cg_mul(gu, e);
fail:
    cg_rd_free(&tl);
    return gin[0] ? CG_OK : cg_last_error();
}

static const cg_reduce_op k_logsumexp = {
    .schema = {"logsumexp", "LogsumexpBackward0", 1, CG_AMP_KEEP, false, true, true},
    .out_dtype = CG_SAME_DTYPE,
    .kind = CG_REDUCE_LOGSUMEXP,
    .backward = lse_backward,
};

cg_tensor *cg_logsumexp(cg_tensor *x, int ndims, const int64_t *dims, bool keepdim) {
    uint32_t mask;
    if (cg_rd_mask("logsumexp", x, ndims, dims, true, &mask)) return NULL;
    cg_tensor *out = NULL;
    cg_reduce_forward(&k_logsumexp, x, mask, keepdim, NULL, 0, -1, &out, NULL);
    return out;
}

/* ---------------------------------------------------------------- norm
 * p = 0: count of nonzeros; 1: sum |x|; 2: sqrt(sum x^2); +-inf: max / min |x|
 * (NaN propagates; no identity: empty is an error); otherwise
 * (sum |x|^p)^(1/p). */
/* PyTorch's norm_backward, with n = norm at the input's rank:
 *   p = 0: zero;  p = 1: sgn(x) g;  p = 2: g x / n (0 where n == 0);
 *   +-inf: sgn(x) (g / count) mask, mask = (|x| == n) | isnan(|x|);
 *   p < 1: sgn(x) |x|^(p-1) (0 at x == 0) g n^(1-p);
 *   p < 2: sgn(x) |x|^(p-1) g / n^(p-1)  (0 where n == 0);
 *   else:  x |x|^(p-2) g / n^(p-1)       (0 where n == 0).
 * Masked divisions use a safe denominator so that no NaN leaks into the
 * higher-order gradients through the unselected branch. */
static cg_status norm_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    double p = node->dattr[0];
    const cg_tensor_meta *m = &node->input_meta[0];
    if (p == 0) return (gin[0] = cg_zeros(m->ndim, m->shape, g[0]->dtype, g[0]->device)) ? CG_OK : cg_last_error();
    cg_rd_tmp tl = {0};
    cg_tensor *x, *nrm, *nu, *gu, *sg, *zero, *one, *nz, *safe, *t, *u;
    CG_RD_TRY(x, cg_node_saved(node, 0));
    CG_RD_TRY(gu, cg_reduce_unsqueeze(node, g[0]));
    CG_RD_TRY(sg, cg_rd_sgn(x));
    if (p == 1) {
        gin[0] = cg_mul(sg, gu);
        goto fail;
    }
    CG_RD_TRY(nrm, cg_node_saved(node, 1));
    CG_RD_TRY(nu, cg_reduce_unsqueeze(node, nrm));
    CG_RD_TRY(zero, cg_rd_scalar(0.0, x));
    CG_RD_TRY(one, cg_rd_scalar(1.0, x));
    CG_RD_TRY(nz, cg_eq(nu, zero));
    CG_RD_TRY(safe, cg_where(nz, one, nu));
    if (isinf(p)) {
        cg_tensor *ax, *mask, *isn, *cnt, *maskf;
        CG_RD_TRY(ax, cg_mul(x, sg));
        CG_RD_TRY(mask, cg_eq(ax, nu));
        CG_RD_TRY(isn, cg_isnan(ax));
        CG_RD_TRY(mask, cg_add(mask, isn)); /* logical or */
        CG_RD_TRY(cnt, cg_rd_mask_count(node, mask, x->dtype));
        CG_RD_TRY(maskf, cg_to_dtype(mask, x->dtype));
        CG_RD_TRY(t, cg_div(gu, cnt));
        CG_RD_TRY(t, cg_mul(t, maskf));
        gin[0] = cg_mul(sg, t);
    } else if (p == 2) {
        CG_RD_TRY(t, cg_div(x, safe));
        CG_RD_TRY(t, cg_where(nz, zero, t));
        gin[0] = cg_mul(gu, t);
    } else if (p < 1) {
        cg_tensor *xz, *xs;
        CG_RD_TRY(xz, cg_eq(x, zero));
        CG_RD_TRY(xs, cg_where(xz, one, x));
        CG_RD_TRY(t, abspow(xs, p - 1));
        CG_RD_TRY(t, cg_where(xz, zero, t));
        CG_RD_TRY(t, cg_mul(sg, t));
        CG_RD_TRY(u, abspow(nu, 1 - p));
        CG_RD_TRY(u, cg_mul(gu, u));
        gin[0] = cg_mul(t, u);
    } else {
        if (p < 2) {
            CG_RD_TRY(t, abspow(x, p - 1));
            CG_RD_TRY(t, cg_mul(sg, t));
        } else {
            CG_RD_TRY(t, abspow(x, p - 2));
            CG_RD_TRY(t, cg_mul(x, t));
        }
        CG_RD_TRY(u, abspow(safe, p - 1));
        CG_RD_TRY(u, cg_div(gu, u));
        CG_RD_TRY(u, cg_where(nz, zero, u));
        gin[0] = cg_mul(t, u);
    }
fail:
    cg_rd_free(&tl);
    return gin[0] ? CG_OK : cg_last_error();
}

static const cg_reduce_op k_norm = {
    .schema = {"norm", "NormBackward1", 1, CG_AMP_KEEP, false, true, true},
    .out_dtype = CG_SAME_DTYPE,
    .kind = CG_REDUCE_NORM,
    .backward = norm_backward,
};
/* +-inf norms have no identity: reducing zero elements is an error */
static const cg_reduce_op k_norm_inf = {
    .schema = {"norm", "NormBackward1", 1, CG_AMP_KEEP, false, true, true},
    .out_dtype = CG_SAME_DTYPE,
    .empty_error = true,
    .kind = CG_REDUCE_NORM,
    .backward = norm_backward,
};

cg_tensor *cg_norm(cg_tensor *x, double p, int ndims, const int64_t *dims, bool keepdim) {
    uint32_t mask;
    if (cg_rd_mask("norm", x, ndims, dims, true, &mask)) return NULL;
    CG_CHECK(!isnan(p), CG_ERR_VALUE, "[norm] p must not be nan");
    cg_tensor *out = NULL;
    cg_reduce_forward(isinf(p) ? &k_norm_inf : &k_norm, x, mask, keepdim, &p, 1, -1, &out, NULL);
    return out;
}
