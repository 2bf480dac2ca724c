/* scan.c — scans along one dim: cumsum (and reverse_cumsum, cumsum's
 * backward, whose own backward is cumsum), cumprod (backward exact with zeros
 * in the input) and cummax (values + int64 indices); schema and backward
 * formula of each, side by side. The values come from the device's scan entry
 * (the CPU's: src/backend/cpu/scan.c). Integer and bool inputs of cumsum /
 * cumprod accumulate in int64 and return int64 (PyTorch's result dtype);
 * floating inputs accumulate in double. Lines are each computed sequentially,
 * so results do not depend on the thread count. */
#include "../dispatch/dispatch_internal.h"

static const cg_op_schema k_cumsum = {"cumsum", "CumsumBackward0", 1, CG_AMP_KEEP, false, false, false};
static const cg_op_schema k_rcumsum = {"reverse_cumsum", "ReverseCumsumBackward0", 1, CG_AMP_KEEP, false, false, false};
static const cg_op_schema k_cumprod = {"cumprod", "CumprodBackward0", 1, CG_AMP_KEEP, false, true, true};
static const cg_op_schema k_cummax = {"cummax", "CummaxBackward0", 1, CG_AMP_KEEP, false, false, false};

static cg_status guard(const cg_op_schema *s, cg_tensor *x) {
    cg_tensor *o;
    bool owned;
    cg_status st = cg_schema_guard(s, 1, &x, &o, &owned); /* AMP_KEEP: never casts */
    if (owned) cg_tensor_release(o);
    return st;
}

/* The scan driver: validate, allocate (int64 for integer inputs), run the
 * device's scan entry, wire the node (iattr[0] = dim; saves per the schema). */
static cg_tensor *scan_apply(const cg_op_schema *s, cg_scan_kind kind, cg_tensor *x, int64_t dim, bool rev,
                             cg_backward_fn backward) {
    CG_CHECK(x, CG_ERR_VALUE, "[%s] argument is NULL", s->name);
    int64_t d;
    if (cg_wrap_dim(s->name, dim, x->ndim, &d) || guard(s, x)) return NULL;
    cg_dtype odt = cg_dtype_is_floating(x->dtype) ? x->dtype : CG_DTYPE_I64;
    cg_tensor *out = cg_tensor_new(s->name, x->ndim, x->shape, odt, x->device);
    if (!out) return NULL;
    cg_status st;
    CG_RUN_KERNEL(st, s->name, x->device, scan, kind, out, NULL, x, d, rev);
    if (st) {
        cg_tensor_release(out);
        return NULL;
    }
    bool failed;
    int nsaved = (s->saves_inputs ? 1 : 0) + (s->saves_output ? 1 : 0);
    cg_node *node = cg_wire_unary_output(s->node_name, backward, s, 1, &x, out, nsaved, &failed);
    if (!failed && node) {
        node->iattr[0] = d;
        int slot = 0;
        if (s->saves_inputs) failed = cg_node_save(node, slot++, x, false, 0) != CG_OK;
        if (!failed && s->saves_output) failed = cg_node_save(node, slot++, out, true, 0) != CG_OK;
    }
    if (failed) {
        cg_tensor_release(out);
        return NULL;
    }
    return out;
}

/* ---------------------------------------------------------------- cumsum / reverse_cumsum */

static cg_tensor *reverse_cumsum(cg_tensor *x, int64_t dim);

/* d cumsum = reverse_cumsum(g) */
static cg_status cumsum_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    return (gin[0] = reverse_cumsum(g[0], node->iattr[0])) ? CG_OK : cg_last_error();
}
/* d reverse_cumsum = cumsum(g) */
static cg_status rcumsum_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    return (gin[0] = cg_cumsum(g[0], node->iattr[0])) ? CG_OK : cg_last_error();
}

CG_PROF_FN(cg_tensor *, cg_cumsum, "cumsum", (cg_tensor *x, int64_t dim), (x, dim), x) { return scan_apply(&k_cumsum,
           CG_SCAN_SUM, x, dim, false, cumsum_backward); }
static cg_tensor *reverse_cumsum(cg_tensor *x, int64_t dim) {
    return scan_apply(&k_rcumsum, CG_SCAN_SUM, x, dim, true, rcumsum_backward);
}

/* ---------------------------------------------------------------- cumprod */

/* Note [Cumprod backward]: gx_k = sum_{j >= k} g_j prod_{i <= j, i != k} x_i.
 * Without zeros in x this is reverse_cumsum(g * y) / x (y = cumprod(x)).
 * With zeros, x is moved to the last dim and expanded to (..., n, n) with
 * X2[.., k, i] = (i == k ? 1 : x_i); then cumprod(X2)[.., k, j] is the
 * product omitting x_k and gx_k = sum_j [j >= k] g_j cumprod(X2)[.., k, j].
 * O(n^2) like PyTorch's double-differentiable path, exact for any number of
 * zeros, and written with cg ops (twice differentiable). */
static cg_tensor *cumprod_grad_with_zeros(cg_tensor *x, cg_tensor *g, int64_t d) {
    CG_CHECK(x->ndim < CG_MAX_DIMS, CG_ERR_NOT_IMPLEMENTED,
             "[cumprod] backward with zeros in the input needs one extra dim; rank %d is the maximum", x->ndim);
    int64_t last = x->ndim - 1, n = x->shape[d], rs[2] = {n, 1}, cs[2] = {1, n}, ld = -1;
    cg_tensor *t[16] = {0};
    int k = 0;
    cg_tensor *res = NULL;
#define STEP_(expr) if (!(t[k++] = (expr))) goto done
    STEP_(cg_transpose(x, d, last));                                   /* 0: xt */
    STEP_(cg_transpose(g, d, last));                                   /* 1: gt */
    STEP_(cg_arange(0, (double)n, 1, CG_DTYPE_I64, x->device));        /* 2 */
    STEP_(cg_reshape(t[2], 2, rs));                                    /* 3: row k */
    STEP_(cg_reshape(t[2], 2, cs));                                    /* 4: col j */
    STEP_(cg_eq(t[3], t[4]));                                          /* 5: i == k */
    STEP_(cg_ge(t[4], t[3]));                                          /* 6: j >= k */
    STEP_(cg_scalar_on(1.0, x->dtype, x->device));                     /* 7 */
    STEP_(cg_scalar_on(0.0, x->dtype, x->device));                     /* 8 */
    STEP_(cg_unsqueeze(t[0], -2));                                     /* 9: (..., 1, n) */
    STEP_(cg_where(t[5], t[7], t[9]));                                 /* 10: X2 */
    STEP_(cg_cumprod(t[10], -1));                                      /* 11 */
    STEP_(cg_unsqueeze(t[1], -2));                                     /* 12 */
    STEP_(cg_mul(t[11], t[12]));                                       /* 13 */
    STEP_(cg_where(t[6], t[13], t[8]));                                /* 14 */
    STEP_(cg_sum(t[14], 1, &ld, false));                               /* 15: (..., n) over k */
    res = cg_transpose(t[15], d, last);
#undef STEP_
done:
    cg_release_all(k, t);
    return res;
}

static cg_status cumprod_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    int64_t d = node->iattr[0];
    const cg_tensor_meta *m = &node->input_meta[0];
    if (m->ndim == 0 || m->shape[d] <= 1 || cg_shape_numel(m->ndim, m->shape) == 0) {
        cg_tensor_retain(g[0]);
        gin[0] = g[0];
        return CG_OK;
    }
    cg_tensor *x = cg_node_saved(node, 0), *y = cg_node_saved(node, 1);
    cg_tensor *zero = NULL, *isz = NULL, *anyz = NULL, *w = NULL, *r = NULL;
    double has_zero = 0;
    if (!x || !y) goto done;
    if (!cg_device_has_data(x->device)) { /* no values to test for zeros: the formula exact for any input */
        gin[0] = cumprod_grad_with_zeros(x, g[0], d);
        goto done;
    }
    if (!(zero = cg_scalar_on(0.0, x->dtype, x->device)) || !(isz = cg_eq(x, zero)) ||
        !(anyz = cg_any(isz, 0, NULL, false)) || cg_tensor_item(anyz, &has_zero))
        goto done;
    if (has_zero != 0) {
        gin[0] = cumprod_grad_with_zeros(x, g[0], d);
    } else if ((w = cg_mul(g[0], y)) && (r = reverse_cumsum(w, d))) {
        gin[0] = cg_div(r, x);
    }
done:
    cg_tensor_release(x);
    cg_tensor_release(y);
    cg_tensor_release(zero);
    cg_tensor_release(isz);
    cg_tensor_release(anyz);
    cg_tensor_release(w);
    cg_tensor_release(r);
    return gin[0] ? CG_OK : cg_last_error();
}

CG_PROF_FN(cg_tensor *, cg_cumprod, "cumprod", (cg_tensor *x, int64_t dim), (x, dim), x) { return scan_apply(&k_cumprod,
           CG_SCAN_PROD, x, dim, false, cumprod_backward); }

/* ---------------------------------------------------------------- cummax */

/* gx = scatter_add(zeros(x), dim, indices, g) */
static cg_status cummax_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    const cg_tensor_meta *m = &node->input_meta[0];
    cg_tensor *idx = cg_node_saved(node, 0);
    if (!idx) return cg_last_error();
    cg_tensor *z = cg_zeros(m->ndim, m->shape, g[0]->dtype, g[0]->device);
    gin[0] = z ? cg_scatter_add(z, node->iattr[0], idx, g[0]) : NULL;
    cg_tensor_release(z);
    cg_tensor_release(idx);
    return gin[0] ? CG_OK : cg_last_error();
}

CG_PROF_FN(cg_status, cg_cummax, "cummax", (cg_tensor *x, int64_t dim, cg_tensor **values, cg_tensor **indices), (x,
           dim, values, indices), x) {
    CG_CHECK_S(values && indices, CG_ERR_VALUE, "[cummax] output pointers are NULL");
    *values = *indices = NULL;
    CG_CHECK_S(x, CG_ERR_VALUE, "[cummax] argument is NULL");
    int64_t d;
    if (cg_wrap_dim("cummax", dim, x->ndim, &d) || guard(&k_cummax, x)) return cg_last_error();
    cg_tensor *v = cg_tensor_new("cummax", x->ndim, x->shape, x->dtype, x->device);
    cg_tensor *ix = v ? cg_tensor_new("cummax", x->ndim, x->shape, CG_DTYPE_I64, x->device) : NULL;
    if (!ix) {
        cg_tensor_release(v);
        return cg_last_error();
    }
    cg_status st;
    CG_RUN_KERNEL(st, "cummax", x->device, scan, CG_SCAN_MAX, v, ix, x, d, false);
    if (st) {
        cg_tensor_release(v);
        cg_tensor_release(ix);
        return st;
    }
    bool failed;
    cg_node *node = cg_wire_unary_output(k_cummax.node_name, cummax_backward, &k_cummax, 1, &x, v, 1, &failed);
    if (!failed && node) {
        node->iattr[0] = d;
        failed = cg_node_save(node, 0, ix, false, 0) != CG_OK;
    }
    if (failed) {
        cg_tensor_release(v);
        cg_tensor_release(ix);
        return cg_last_error();
    }
    *values = v;
    *indices = ix;
    return CG_OK;
}
