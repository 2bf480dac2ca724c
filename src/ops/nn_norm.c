/* nn_norm.c — normalization layers: batch_norm, instance_norm, layer_norm,
 * group_norm (one fused statistics kernel) and rms_norm (composed).
 *
 * Note [Normalization as (P, Q, R)]: each of the first four normalizes a view
 * of the input as (P, Q, R) with one mean / variance per q, taken over P and R:
 *   batch_norm     (N, C, *)  ->  (N, C, S)        P = N, Q = C, R = S
 *   instance_norm  (N, C, *)  ->  (1, N*C, S)
 *   layer_norm     (*, norm)  ->  (1, lead, norm)
 *   group_norm     (N, C, *)  ->  (1, N*G, C/G*S)
 * The fused kernel writes xhat = (x - mean) * invstd (statistics in double,
 * biased variance) and records one node; the affine part (weight, bias) is
 * cg ops on top. The node's backward is the usual formula in cg ops
 *   gx = invstd * (g - mean_PR(g) - xhat * mean_PR(g * xhat))
 * using the saved statistics, as one fused two-pass kernel when the backward
 * runs without create_graph; when it runs with grad mode on (create_graph)
 * the statistics are recomputed from x with cg ops (mean, var, rsqrt), so the
 * gradient is differentiable again with respect to x. */
#include "nn_internal.h"

#include <math.h>

#include <float.h>
#include <string.h>

/* Note [Half input, float32 parameters]: as in PyTorch (and as autocast
 * produces: a bf16 conv output into a float32 BatchNorm), a float16 / bfloat16
 * input may come with a float32 weight and bias (float32 running statistics
 * alone the kernels take as they are). The norm then runs on the input cast
 * to float32 and its result is cast back to the input's dtype; both casts are
 * differentiable. */
static bool half_with_f32(const cg_tensor *x, int n, cg_tensor *const *ps) {
    if (!x || (x->dtype != CG_DTYPE_F16 && x->dtype != CG_DTYPE_BF16)) return false;
    for (int i = 0; i < n; i++)
        if (ps[i] && ps[i]->dtype == CG_DTYPE_F32) return true;
    return false;
}

#define NORM_VIA_F32(x, call)                                        \
    do {                                                             \
        cg_tensor *x32_ = cg_to_dtype(x, CG_DTYPE_F32);              \
        if (!x32_) return NULL;                                      \
        cg_tensor *in_ = x;                                          \
        x = x32_;                                                    \
        cg_tensor *r32_ = call;                                      \
        cg_tensor_release(x32_);                                     \
        cg_tensor *r_ = r32_ ? cg_to_dtype(r32_, in_->dtype) : NULL; \
        cg_tensor_release(r32_);                                     \
        return r_;                                                   \
    } while (0)

/* gx for x (P, Q, R) from g and the saved (1, Q, 1) statistics; new reference. */
static cg_tensor *norm_backward_fused(cg_tensor *g, cg_tensor *x, cg_tensor *mean, cg_tensor *invstd) {
    cg_tensor *gc = cg_contiguous(g), *xc = gc ? cg_contiguous(x) : NULL;
    cg_tensor *gx = xc ? cg_tensor_new("norm_backward", 3, x->shape, x->dtype, x->device) : NULL;
    cg_status st = CG_OK;
    if (gx) CG_RUN_KERNEL(st, "norm_backward", gx->device, norm_backward, gx, gc, xc, mean, invstd);
    cg_tensor_release(gc), cg_tensor_release(xc);
    if (!gx || st) {
        cg_tensor_release(gx);
        return NULL;
    }
    return gx;
}

/* ------------------------------------------------------------- the node */

/* Statistics over dims 0 and 2 of x (P, Q, R), keepdim: mean and invstd. */
static cg_status stats_ops(nn_tmp *A_, cg_tensor *x, double eps, cg_tensor **mean, cg_tensor **invstd) {
    int64_t dims[2] = {0, 2};
    *mean = TK(cg_mean(x, 2, dims, true));
    cg_tensor *var = TK(cg_var(x, 2, dims, 0.0, true));
    *invstd = TK(var ? cg_rsqrt(TK(cg_shifted(var, eps))) : NULL);
    return A_->failed ? cg_last_error() : CG_OK;
}

/* Saved: 0 = x (P, Q, R), 1 = mean (1, Q, 1), 2 = invstd (1, Q, 1); dattr[0] = eps. */
static cg_status norm_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    if (!cg_node_needs_grad(node, 0)) return CG_OK;
    NN_ARENA;
    cg_tensor *x = TK(cg_node_saved(node, 0)), *mean = NULL, *invstd = NULL;
    if (x && cg_is_grad_enabled()) stats_ops(A_, x, node->dattr[0], &mean, &invstd);
    else if (x) {
        mean = TK(cg_node_saved(node, 1));
        invstd = TK(cg_node_saved(node, 2));
        if (mean && invstd) { /* first order: one fused kernel */
            gin[0] = nn_finish(A_, TK(norm_backward_fused(g[0], x, mean, invstd)));
            return gin[0] ? CG_OK : cg_last_error();
        }
    }
    int64_t dims[2] = {0, 2};
    cg_tensor *xhat = MUL(SUB(x, mean), invstd);
    cg_tensor *mg = TK(cg_mean(g[0], 2, dims, true));
    cg_tensor *gx = MUL(g[0], xhat);
    cg_tensor *mgx = TK(gx ? cg_mean(gx, 2, dims, true) : NULL);
    cg_tensor *r = MUL(invstd, SUB(SUB(g[0], mg), MUL(xhat, mgx)));
    gin[0] = nn_finish(A_, r);
    return gin[0] ? CG_OK : cg_last_error();
}

/* A 1-D double array as a (1, n, 1) tensor of dtype dt. */
static cg_tensor *stat_tensor(const double *v, int64_t n, cg_dtype dt, cg_device dev) {
    int64_t sh[3] = {1, n, 1};
    cg_tensor *t = cg_tensor_new("norm", 3, sh, dt, dev);
    cg_status st = CG_OK;
    if (t) CG_RUN_KERNEL(st, "norm", dev, store_values, t, v);
    if (st) cg_tensor_release(t), t = NULL;
    return t;
}

/* xhat of x3 (P, Q, R) (new reference, graph recorded under `node_name`; op
 * names the caller in errors). mean / var (Q doubles, biased variance)
 * receive the statistics when non-NULL. */
static cg_tensor *normalize_pqr(const char *op, const char *node_name, cg_tensor *x3, double eps, double *mean_out,
                                double *var_out) {
    int64_t P = x3->shape[0], Q = x3->shape[1], R = x3->shape[2];
    cg_tensor *out = cg_tensor_new(node_name, 3, x3->shape, x3->dtype, x3->device);
    if (!out) return NULL;
    double *mean = cg_malloc_n(node_name, Q, sizeof(double)), *var = cg_malloc_n(node_name, Q, sizeof(double));
    cg_tensor *xc = NULL, *tm = NULL, *ti = NULL;
    if (!mean || !var) {
        cg_set_error(CG_ERR_OOM, "[%s] out of memory for %lld statistics", node_name, (long long)Q);
        goto fail;
    }
    for (int64_t q = 0; q < Q; q++) mean[q] = NAN, var[q] = NAN;
    if (Q > 0) {
        xc = cg_contiguous(x3);
        if (!xc) goto fail;
        if (P * R > 0) {
            cg_status st;
            CG_RUN_KERNEL(st, op, out->device, norm, out, xc, eps, mean, var);
            if (st) goto fail;
        }
    }
    bool failed;
    cg_node *node = cg_wire_unary_output(node_name, norm_backward, NULL, 1, &x3, out, 3, &failed);
    if (failed) goto fail;
    if (node) {
        node->dattr[0] = eps;
        double *is = cg_malloc_n(node_name, Q, sizeof(double));
        if (!is) {
            cg_set_error(CG_ERR_OOM, "[%s] out of memory", node_name);
            goto fail;
        }
        for (int64_t q = 0; q < Q; q++) is[q] = 1.0 / sqrt(var[q] + eps);
        tm = stat_tensor(mean, Q, x3->dtype, x3->device);
        ti = stat_tensor(is, Q, x3->dtype, x3->device);
        free(is);
        if (!tm || !ti || cg_node_save(node, 0, x3, false, 0) || cg_node_save(node, 1, tm, false, 0) ||
            cg_node_save(node, 2, ti, false, 0))
            goto fail;
    }
    if (mean_out) memcpy(mean_out, mean, sizeof(double) * (size_t)Q);
    if (var_out) memcpy(var_out, var, sizeof(double) * (size_t)Q);
    free(mean), free(var);
    cg_tensor_release(xc), cg_tensor_release(tm), cg_tensor_release(ti);
    return out;
fail:
    free(mean), free(var);
    cg_tensor_release(xc), cg_tensor_release(tm), cg_tensor_release(ti);
    cg_tensor_release(out);
    return NULL;
}

/* ------------------------------------------------------------- shared checks */

static cg_status check_input(const char *op, cg_tensor *x, int min_dims) {
    CG_CHECK_S(x, CG_ERR_VALUE, "[%s] input is NULL", op);
    if (nn_check_float(op, "input", x)) return cg_last_error();
    char b[CG_SHAPE_STR];
    CG_CHECK_S(x->ndim >= min_dims, CG_ERR_SHAPE, "[%s] expected an input with at least %d dims, got %s", op,
               min_dims, cg_shape_str(b, x->ndim, x->shape));
    return CG_OK;
}

/* An optional per-channel tensor: 1-D of C elements. same_dtype: must match x's dtype. */
static cg_status check_channel(const char *op, const char *what, cg_tensor *t, cg_tensor *x, int64_t C,
                               bool same_dtype) {
    if (!t) return CG_OK;
    CG_CHECK_S(cg_device_eq(t->device, x->device), CG_ERR_DEVICE, "[%s] %s is on %s but input is on %s", op, what,
               cg_device_name(t->device), cg_device_name(x->device));
    if (same_dtype && nn_check_opt(op, what, t, x)) return cg_last_error();
    if (!same_dtype && nn_check_float(op, what, t)) return cg_last_error();
    CG_CHECK_S(t->ndim == 1 && t->shape[0] == C, CG_ERR_SHAPE,
               "[%s] %s must be a 1-D tensor of %lld elements (one per channel), got %d dims with %lld elements", op,
               what, (long long)C, t->ndim, (long long)cg_tensor_numel(t));
    return CG_OK;
}

/* t (C) reshaped to broadcast along dim 1 of an nd-dim tensor (new reference). */
static cg_tensor *channel_view(cg_tensor *t, int nd) {
    int64_t sh[CG_MAX_DIMS];
    for (int k = 0; k < nd; k++) sh[k] = 1;
    sh[1] = t->shape[0];
    return cg_reshape(t, nd, sh);
}

/* y * w + b for per-channel w, b (either may be NULL); new reference. */
static cg_tensor *channel_affine(cg_tensor *y, cg_tensor *w, cg_tensor *b) {
    NN_ARENA;
    cg_tensor *r = y;
    if (w) r = MUL(r, TK(channel_view(w, y->ndim)));
    if (b) r = ADD(r, TK(channel_view(b, y->ndim)));
    return nn_finish(A_, r);
}

/* r <- (1 - m) r + m v, elementwise over C entries (no grad, version bumped). */
static cg_status update_running(const char *op, cg_tensor *r, const double *v, double m) {
    if (!r) return CG_OK;
    int64_t C = r->shape[0];
    double *cur = cg_calloc_n(op, cg_count_axpb(1, C, 1), sizeof(double));
    if (!cur) return cg_set_error(CG_ERR_OOM, "[%s] out of memory for %lld channels", op, (long long)C);
    cg_status st;
    CG_RUN_KERNEL(st, op, r->device, load_values, r, cur);
    if (!st) {
        for (int64_t c = 0; c < C; c++) cur[c] = (1 - m) * cur[c] + m * v[c];
        CG_RUN_KERNEL(st, op, r->device, store_values, r, cur);
    }
    free(cur);
    if (!st) cg_storage_bump_version(r->storage);
    return st;
}

/* Normalize with given (running) statistics: (x - rm) * rsqrt(rv + eps),
 * the stats broadcast along dim 1 and cast to x's dtype. New reference. */
static cg_tensor *normalize_with_stats(cg_tensor *x, cg_tensor *rm, cg_tensor *rv, double eps) {
    NN_ARENA;
    cg_tensor *m = rm->dtype == x->dtype ? rm : TK(cg_to_dtype(rm, x->dtype));
    cg_tensor *v = rv->dtype == x->dtype ? rv : TK(cg_to_dtype(rv, x->dtype));
    m = TK(m ? channel_view(m, x->ndim) : NULL);
    v = TK(v ? channel_view(v, x->ndim) : NULL);
    cg_tensor *r = MUL(SUB(x, m), TK(v ? cg_rsqrt(TK(cg_shifted(v, eps))) : NULL));
    return nn_finish(A_, r);
}

/* ------------------------------------------------------------- batch_norm, fused */

/* Note [Fused batch norm]: training-mode batch_norm is one node
 * (NativeBatchNormBackward0, inputs x, weight, bias) computed by one kernel
 * (statistics and affine transform, batch_norm.c). It saves x and weight;
 * the statistics (mean, invstd: C doubles each) live in node->extra. Its
 * backward without create_graph is one fused kernel giving gx, gw and gb;
 * with create_graph it is the composite formula in cg ops with the
 * statistics recomputed from x, so it is differentiable again. Evaluation
 * with running statistics and no graph to record is one transform pass; with
 * a graph it stays composite (normalize_with_stats, channel_affine). */

/* t's C values (any float dtype and stride) as doubles; t NULL: nothing. */
static cg_status channel_values(const char *op, const cg_tensor *t, double *out) {
    if (!t) return CG_OK;
    cg_status st;
    CG_RUN_KERNEL(st, op, t->device, load_values, t, out);
    return st;
}

/* A new (C) tensor holding v. */
static cg_tensor *channel_tensor(const double *v, int64_t C, cg_dtype dt, cg_device dev) {
    cg_tensor *t = cg_tensor_new("batch_norm_backward", 1, &C, dt, dev);
    cg_status st = CG_OK;
    if (t) CG_RUN_KERNEL(st, "batch_norm_backward", dev, store_values, t, v);
    if (st) cg_tensor_release(t), t = NULL;
    return t;
}

/* The composite backward (create_graph): statistics recomputed from x with cg ops.
 * x, g (N, C, S); w (C) or NULL; fills gin[0..2] where needed. */
static cg_status bn_backward_composite(cg_node *node, cg_tensor *x, cg_tensor *g, cg_tensor *w, cg_tensor **gin) {
    NN_ARENA;
    int64_t dims[2] = {0, 2}, C = x->shape[1], sh3[3] = {1, C, 1};
    cg_tensor *mean = NULL, *invstd = NULL;
    stats_ops(A_, x, node->dattr[0], &mean, &invstd);
    cg_tensor *xhat = MUL(SUB(x, mean), invstd);
    cg_tensor *r[3] = {NULL, NULL, NULL};
    if (cg_node_needs_grad(node, 0)) {
        cg_tensor *gh = w ? MUL(g, TK(cg_reshape(w, 3, sh3))) : g;
        cg_tensor *mg = TK(gh ? cg_mean(gh, 2, dims, true) : NULL);
        cg_tensor *ghx = MUL(gh, xhat);
        cg_tensor *mgx = TK(ghx ? cg_mean(ghx, 2, dims, true) : NULL);
        r[0] = MUL(invstd, SUB(SUB(gh, mg), MUL(xhat, mgx)));
    }
    cg_tensor *gxh = cg_node_needs_grad(node, 1) ? MUL(g, xhat) : NULL;
    if (gxh) r[1] = TK(cg_sum(gxh, 2, dims, false));
    if (cg_node_needs_grad(node, 2)) r[2] = TK(cg_sum(g, 2, dims, false));
    if (A_->failed) {
        nn_free(A_);
        return cg_last_error();
    }
    for (int i = 0; i < 3; i++)
        if (r[i]) cg_tensor_retain(r[i]), gin[i] = r[i];
    nn_free(A_);
    return CG_OK;
}

/* Saved: 0 = x (N, C, *), 1 = weight when iattr[0]; extra = mean, invstd (C each); dattr[0] = eps. */
static cg_status bn_backward(cg_node *node, cg_tensor *const *gout, cg_tensor **gin) {
    NN_ARENA;
    const cg_tensor_meta *m = &node->input_meta[0];
    int64_t N = m->shape[0], C = m->shape[1], S = 1;
    for (int k = 2; k < m->ndim; k++) S *= m->shape[k];
    int64_t sh3[3] = {N, C, S};
    cg_tensor *x = TK(cg_node_saved(node, 0));
    cg_tensor *w = node->iattr[0] ? TK(cg_node_saved(node, 1)) : NULL;
    cg_tensor *x3 = TK(x ? cg_reshape(x, 3, sh3) : NULL), *g3 = TK(x3 ? cg_reshape(gout[0], 3, sh3) : NULL);
    if (A_->failed) {
        nn_free(A_);
        return cg_last_error();
    }
    if (cg_is_grad_enabled()) {
        cg_status st = bn_backward_composite(node, x3, g3, w, gin);
        if (!st && gin[0]) {
            cg_tensor *r = cg_reshape(gin[0], m->ndim, m->shape);
            cg_tensor_release(gin[0]);
            gin[0] = r;
            if (!r) st = cg_last_error();
        }
        nn_free(A_);
        return st;
    }
    /* first order: one fused pass per channel */
    const double *mean = node->extra, *invstd = mean + C;
    cg_tensor *xc = TK(cg_contiguous(x3)), *gc = TK(cg_contiguous(g3));
    cg_tensor *gx = cg_node_needs_grad(node, 0) ? TK(cg_tensor_new("batch_norm_backward", m->ndim, m->shape, m->dtype,
                                                                    m->device))
                                                : NULL;
    double *buf = cg_calloc_n("batch_norm_backward", cg_count_axpb(3, C, 1), sizeof(double));
    if (!buf && !A_->failed) cg_set_error(CG_ERR_OOM, "[batch_norm_backward] out of memory for %lld channels",
                                          (long long)C);
    if (!buf || A_->failed) {
        free(buf);
        nn_free(A_);
        return cg_last_error();
    }
    double *wv = w ? buf + 2 * C : NULL, *sg = buf, *sgx = buf + C;
    cg_status st = channel_values("batch_norm_backward", w, wv);
    if (!st) CG_RUN_KERNEL(st, "batch_norm_backward", m->device, batch_norm_backward, gx, gc, xc, mean, invstd, wv, sg,
                           sgx);
    if (!st && cg_node_needs_grad(node, 1)) {
        for (int64_t c = 0; c < C; c++) sgx[c] *= invstd[c]; /* sum(g * xhat) */
        const cg_tensor_meta *wm = &node->input_meta[1];
        if (!(gin[1] = channel_tensor(sgx, C, wm->dtype, wm->device))) st = cg_last_error();
    }
    if (!st && cg_node_needs_grad(node, 2)) {
        const cg_tensor_meta *bm = &node->input_meta[2];
        if (!(gin[2] = channel_tensor(sg, C, bm->dtype, bm->device))) st = cg_last_error();
    }
    if (!st && gx) cg_tensor_retain(gx), gin[0] = gx;
    free(buf);
    nn_free(A_);
    return st;
}

/* Training-mode batch norm of x (N, C, *) (non-empty) as one node.
 * mean / var (C doubles, biased variance) receive the statistics. New reference. */
static cg_tensor *bn_train_fused(cg_tensor *x, cg_tensor *w, cg_tensor *b, double eps, double *mean, double *var) {
    int64_t C = x->shape[1];
    cg_tensor *xc = cg_contiguous(x);
    cg_tensor *y = xc ? cg_tensor_new("batch_norm", x->ndim, x->shape, x->dtype, x->device) : NULL;
    double *wb = y ? cg_calloc_n("batch_norm", cg_count_axpb(2, C, 0), sizeof(double)) : NULL;
    if (y && !wb) cg_set_error(CG_ERR_OOM, "[batch_norm] out of memory for %lld channels", (long long)C);
    if (!wb) goto fail;
    for (int64_t c = 0; c < C; c++) mean[c] = NAN, var[c] = NAN; /* what a device without data leaves */
    cg_status st = channel_values("batch_norm", w, wb);
    if (!st) st = channel_values("batch_norm", b, wb + C);
    if (!st) CG_RUN_KERNEL(st, "batch_norm", x->device, batch_norm, y, xc, w ? wb : NULL, b ? wb + C : NULL, eps,
                           mean, var);
    free(wb);
    if (st) goto fail;
    cg_tensor *in[3] = {x, w, b};
    bool failed;
    cg_node *node = cg_wire_unary_output("NativeBatchNormBackward0", bn_backward, NULL, 3, in, y, 2, &failed);
    if (failed) goto fail;
    if (node) {
        node->dattr[0] = eps;
        node->iattr[0] = w != NULL;
        double *st = cg_malloc_n("batch_norm", cg_count_axpb(2, C, 0), sizeof(double));
        if (!st) {
            cg_set_error(CG_ERR_OOM, "[batch_norm] out of memory for %lld channels", (long long)C);
            goto fail;
        }
        for (int64_t c = 0; c < C; c++) st[c] = mean[c], st[C + c] = 1.0 / sqrt(var[c] + eps);
        node->extra = st;
        node->extra_free = free;
        if (cg_node_save(node, 0, x, false, 0) || (w && cg_node_save(node, 1, w, false, 0))) goto fail;
    }
    cg_tensor_release(xc);
    return y;
fail:
    cg_tensor_release(xc);
    cg_tensor_release(y);
    return NULL;
}

/* Evaluation with running statistics when no graph is recorded: one pass
 * y = x * alpha + beta, alpha = w / sqrt(rv + eps), beta = b - rm * alpha. */
static cg_tensor *bn_eval_fused(cg_tensor *x, cg_tensor *rm, cg_tensor *rv, cg_tensor *w, cg_tensor *b, double eps) {
    int64_t C = x->shape[1];
    cg_tensor *xc = cg_contiguous(x);
    cg_tensor *y = xc ? cg_tensor_new("batch_norm", x->ndim, x->shape, x->dtype, x->device) : NULL;
    double *v = y ? cg_calloc_n("batch_norm", cg_count_axpb(4, C, 0), sizeof(double)) : NULL;
    if (y && !v) cg_set_error(CG_ERR_OOM, "[batch_norm] out of memory for %lld channels", (long long)C);
    cg_status st = CG_OK;
    if (v) {
        double *alpha = v, *beta = v + C, *m = v + 2 * C, *var = v + 3 * C;
        st = channel_values("batch_norm", rm, m);
        if (!st) st = channel_values("batch_norm", rv, var);
        if (!st) st = channel_values("batch_norm", w, alpha);
        if (!st) st = channel_values("batch_norm", b, beta);
        for (int64_t c = 0; c < C; c++) {
            double a = (w ? alpha[c] : 1.0) / sqrt(var[c] + eps);
            beta[c] = (b ? beta[c] : 0.0) - m[c] * a;
            alpha[c] = a;
        }
        if (!st) CG_RUN_KERNEL(st, "batch_norm", x->device, batch_norm_transform, y, xc, alpha, beta);
        free(v);
    }
    if (!v || st) {
        cg_tensor_release(y);
        y = NULL;
    }
    cg_tensor_release(xc);
    return y;
}

/* ------------------------------------------------------------- batch_norm, instance_norm */

static cg_status check_bn_args(const char *op, cg_tensor *x, cg_tensor *rm, cg_tensor *rv, cg_tensor *w,
                               cg_tensor *b, double eps) {
    if (check_input(op, x, 2)) return cg_last_error();
    int64_t C = x->shape[1];
    if (check_channel(op, "weight", w, x, C, true) || check_channel(op, "bias", b, x, C, true) ||
        check_channel(op, "running_mean", rm, x, C, false) || check_channel(op, "running_var", rv, x, C, false))
        return cg_last_error();
    CG_CHECK_S((rm == NULL) == (rv == NULL), CG_ERR_VALUE,
               "[%s] running_mean and running_var must be given together", op);
    CG_CHECK_S(eps >= 0, CG_ERR_VALUE, "[%s] eps must be non-negative, got %g", op, eps);
    return CG_OK;
}

/* Note [Channels-last batch norm]: a channels_last (channels_last_3d) input is, in memory, the (M, C)
 * matrix of its M = N*H*W (N*D*H*W) positions. Its batch norm is that matrix's, with the same
 * statistics, and the result viewed back is channels_last, as PyTorch's is: the input is read as
 * stored and no layout copy is made either way (the views are recorded, so autograd follows). */
static bool bn_takes_channels_last(const cg_tensor *x) {
    if (cg_tensor_numel(x) == 0 || cg_tensor_is_contiguous(x)) return false;
    cg_memory_format f = cg_tensor_suggest_memory_format(x);
    return (x->ndim == 4 && f == CG_MEMORY_CHANNELS_LAST && cg_tensor_is_contiguous_as(x, f)) ||
           (x->ndim == 5 && f == CG_MEMORY_CHANNELS_LAST_3D && cg_tensor_is_contiguous_as(x, f));
}

static cg_tensor *bn_channels_last(cg_tensor *input, cg_tensor *running_mean, cg_tensor *running_var,
                                   cg_tensor *weight, cg_tensor *bias, bool training, double momentum, double eps) {
    static const int64_t to4[] = {0, 2, 3, 1}, from4[] = {0, 3, 1, 2}, to5[] = {0, 2, 3, 4, 1},
                         from5[] = {0, 4, 1, 2, 3};
    bool four = input->ndim == 4;
    int64_t C = input->shape[1], sh2[2] = {cg_tensor_numel(input) / C, C};
    cg_tensor *p = cg_permute(input, four ? to4 : to5); /* (N, H, W, C): contiguous */
    cg_tensor *x2 = p ? cg_reshape(p, 2, sh2) : NULL;
    cg_tensor *y2 = x2 ? cg_batch_norm(x2, running_mean, running_var, weight, bias, training, momentum, eps) : NULL;
    cg_tensor *yp = y2 ? cg_reshape(y2, p->ndim, p->shape) : NULL;
    cg_tensor *y = yp ? cg_permute(yp, four ? from4 : from5) : NULL;
    cg_tensor_release(p), cg_tensor_release(x2), cg_tensor_release(y2), cg_tensor_release(yp);
    return y;
}

CG_PROF_FN(cg_tensor *, cg_batch_norm, "batch_norm", (cg_tensor *input, cg_tensor *running_mean, cg_tensor *running_var,
           cg_tensor *weight, cg_tensor *bias, bool training, double momentum, double eps), (input, running_mean,
           running_var, weight, bias, training, momentum, eps), input) {
    if (half_with_f32(input, 2, (cg_tensor *[]){weight, bias}))
        NORM_VIA_F32(input, cg_batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps));
    const char *op = "batch_norm";
    if (check_bn_args(op, input, running_mean, running_var, weight, bias, eps)) return NULL;
    int64_t N = input->shape[0], C = input->shape[1], S = 1;
    for (int k = 2; k < input->ndim; k++) S *= input->shape[k];
    if (bn_takes_channels_last(input) && !(training && N * S == 1)) /* Note [Channels-last batch norm] */
        return bn_channels_last(input, running_mean, running_var, weight, bias, training, momentum, eps);
    cg_tensor *y;
    bool fused = N * C * S > 0;
    if (training) {
        char b[CG_SHAPE_STR];
        if ((running_mean && cg_check_writable(op, running_mean)) || (running_var && cg_check_writable(op, running_var)))
            return NULL;
        CG_CHECK(N * S != 1, CG_ERR_VALUE, "[%s] expected more than 1 value per channel when training, got input %s",
                 op, cg_shape_str(b, input->ndim, input->shape));
        if (fused) { /* Note [Fused batch norm] */
            double *st = cg_malloc_n(op, cg_count_axpb(2, C, 0), sizeof(double));
            if (!st) {
                cg_set_error(CG_ERR_OOM, "[%s] out of memory", op);
                return NULL;
            }
            cg_tensor *r = bn_train_fused(input, weight, bias, eps, st, st + C);
            if (r && running_mean) {
                double n = (double)(N * S);
                for (int64_t c = 0; c < C; c++) st[C + c] *= n / (n - 1);
                if (update_running(op, running_mean, st, momentum) || update_running(op, running_var, st + C, momentum))
                    cg_tensor_release(r), r = NULL;
            }
            free(st);
            return r;
        }
        int64_t sh3[3] = {N, C, S};
        cg_tensor *x3 = cg_reshape(input, 3, sh3);
        if (!x3) return NULL;
        double *mean = cg_malloc_n(op, cg_count_axpb(1, C, 1), sizeof(double)), *var = cg_malloc_n(op, cg_count_axpb(1, C, 1), sizeof(double));
        cg_tensor *y3 = mean && var ? normalize_pqr(op, "NativeBatchNormBackward0", x3, eps, mean, var) : NULL;
        if (!mean || !var) cg_set_error(CG_ERR_OOM, "[%s] out of memory", op);
        cg_tensor_release(x3);
        if (y3 && running_mean && N * S > 0) {
            double n = (double)(N * S);
            for (int64_t c = 0; c < C; c++) var[c] *= n / (n - 1);
            if (update_running(op, running_mean, mean, momentum) || update_running(op, running_var, var, momentum))
                cg_tensor_release(y3), y3 = NULL;
        }
        free(mean), free(var);
        if (!y3) return NULL;
        y = cg_reshape(y3, input->ndim, input->shape);
        cg_tensor_release(y3);
    } else {
        CG_CHECK(running_mean, CG_ERR_VALUE, "[%s] running_mean and running_var are required when not training", op);
        cg_tensor *all[5] = {input, running_mean, running_var, weight, bias};
        if (fused && !cg_any_requires_grad(5, all)) return bn_eval_fused(input, running_mean, running_var, weight, bias, eps);
        y = normalize_with_stats(input, running_mean, running_var, eps);
    }
    if (!y) return NULL;
    cg_tensor *r = channel_affine(y, weight, bias);
    cg_tensor_release(y);
    return r;
}

CG_PROF_FN(cg_tensor *, cg_instance_norm, "instance_norm", (cg_tensor *input, cg_tensor *running_mean,
           cg_tensor *running_var, cg_tensor *weight, cg_tensor *bias, bool use_input_stats, double momentum,
           double eps), (input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps), input) {
    if (half_with_f32(input, 2, (cg_tensor *[]){weight, bias}))
        NORM_VIA_F32(input, cg_instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                                             momentum, eps));
    const char *op = "instance_norm";
    if (check_bn_args(op, input, running_mean, running_var, weight, bias, eps)) return NULL;
    int64_t N = input->shape[0], C = input->shape[1], S = 1;
    for (int k = 2; k < input->ndim; k++) S *= input->shape[k];
    cg_tensor *y;
    if (use_input_stats) {
        char b[CG_SHAPE_STR];
        if ((running_mean && cg_check_writable(op, running_mean)) || (running_var && cg_check_writable(op, running_var)))
            return NULL;
        CG_CHECK(S != 1, CG_ERR_VALUE, "[%s] expected more than 1 spatial element when training, got input %s", op,
                 cg_shape_str(b, input->ndim, input->shape));
        int64_t sh3[3] = {1, N * C, S};
        cg_tensor *x3 = cg_reshape(input, 3, sh3);
        if (!x3) return NULL;
        int64_t nq = cg_count_axpb(N, C, 1);
        double *mean = cg_malloc_n(op, nq, sizeof(double)), *var = cg_malloc_n(op, nq, sizeof(double));
        double *am = cg_calloc_n(op, cg_count_axpb(1, C, 1), sizeof(double));
        double *av = cg_calloc_n(op, cg_count_axpb(1, C, 1), sizeof(double));
        bool mem = mean && var && am && av;
        if (!mem) cg_set_error(CG_ERR_OOM, "[%s] out of memory", op);
        cg_tensor *y3 = mem ? normalize_pqr(op, "NativeBatchNormBackward0", x3, eps, mean, var) : NULL;
        cg_tensor_release(x3);
        if (y3 && running_mean && N > 0 && S > 0) {
            for (int64_t n = 0; n < N; n++)
                for (int64_t c = 0; c < C; c++) {
                    am[c] += mean[n * C + c] / (double)N;
                    av[c] += var[n * C + c] * (double)S / (double)(S - 1) / (double)N;
                }
            if (update_running(op, running_mean, am, momentum) || update_running(op, running_var, av, momentum))
                cg_tensor_release(y3), y3 = NULL;
        }
        free(mean), free(var), free(am), free(av);
        if (!y3) return NULL;
        y = cg_reshape(y3, input->ndim, input->shape);
        cg_tensor_release(y3);
    } else {
        CG_CHECK(running_mean, CG_ERR_VALUE,
                 "[%s] running_mean and running_var are required when use_input_stats is false", op);
        y = normalize_with_stats(input, running_mean, running_var, eps);
    }
    if (!y) return NULL;
    cg_tensor *r = channel_affine(y, weight, bias);
    cg_tensor_release(y);
    return r;
}

/* ------------------------------------------------------------- layer_norm, group_norm */

/* The trailing ndims dims of x must equal normalized_shape; *lead and *inner
 * receive the products of the leading and normalized sizes. */
static cg_status check_normalized_shape(const char *op, cg_tensor *x, int ndims, const int64_t *ns, int64_t *lead,
                                        int64_t *inner) {
    CG_CHECK_S(ndims >= 1 && ns, CG_ERR_VALUE, "[%s] normalized_shape must have at least 1 dim", op);
    char a[CG_SHAPE_STR], b[CG_SHAPE_STR], c[CG_SHAPE_STR];
    bool ok = ndims <= x->ndim;
    for (int k = 0; ok && k < ndims; k++) ok = x->shape[x->ndim - ndims + k] == ns[k];
    CG_CHECK_S(ok, CG_ERR_SHAPE, "[%s] given normalized_shape=%s, expected input with shape (*, %s), but got input %s",
               op, cg_shape_str(a, ndims, ns), cg_shape_str(b, ndims, ns) + 1,
               cg_shape_str(c, x->ndim, x->shape));
    *lead = 1, *inner = 1;
    for (int k = 0; k < x->ndim; k++) {
        if (k < x->ndim - ndims) *lead *= x->shape[k];
        else *inner *= x->shape[k];
    }
    return CG_OK;
}

static cg_status check_elem_param(const char *op, const char *what, cg_tensor *t, cg_tensor *x, int ndims,
                                  const int64_t *ns) {
    if (!t) return CG_OK;
    if (nn_check_opt(op, what, t, x)) return cg_last_error();
    char a[CG_SHAPE_STR], b[CG_SHAPE_STR];
    CG_CHECK_S(cg_shape_eq(t->ndim, t->shape, ndims, ns), CG_ERR_SHAPE, "[%s] %s of shape %s must have shape %s", op,
               what, cg_shape_str(a, t->ndim, t->shape), cg_shape_str(b, ndims, ns));
    return CG_OK;
}

CG_PROF_FN(cg_tensor *, cg_layer_norm, "layer_norm", (cg_tensor *input, int ndims, const int64_t *normalized_shape,
           cg_tensor *weight, cg_tensor *bias, double eps), (input, ndims, normalized_shape, weight, bias, eps),
           input) {
    if (half_with_f32(input, 2, (cg_tensor *[]){weight, bias}))
        NORM_VIA_F32(input, cg_layer_norm(input, ndims, normalized_shape, weight, bias, eps));
    const char *op = "layer_norm";
    int64_t lead, inner;
    if (check_input(op, input, 0) || check_normalized_shape(op, input, ndims, normalized_shape, &lead, &inner) ||
        check_elem_param(op, "weight", weight, input, ndims, normalized_shape) ||
        check_elem_param(op, "bias", bias, input, ndims, normalized_shape))
        return NULL;
    NN_ARENA;
    int64_t sh3[3] = {1, lead, inner};
    cg_tensor *x3 = TK(cg_reshape(input, 3, sh3));
    cg_tensor *y = TK(x3 ? normalize_pqr(op, "NativeLayerNormBackward0", x3, eps, NULL, NULL) : NULL);
    y = TK(y ? cg_reshape(y, input->ndim, input->shape) : NULL);
    if (weight) y = MUL(y, weight);
    if (bias) y = ADD(y, bias);
    return nn_finish(A_, y);
}

CG_PROF_FN(cg_tensor *, cg_group_norm, "group_norm", (cg_tensor *input, int64_t num_groups, cg_tensor *weight,
           cg_tensor *bias, double eps), (input, num_groups, weight, bias, eps), input) {
    if (half_with_f32(input, 2, (cg_tensor *[]){weight, bias}))
        NORM_VIA_F32(input, cg_group_norm(input, num_groups, weight, bias, eps));
    const char *op = "group_norm";
    if (check_input(op, input, 2)) return NULL;
    int64_t N = input->shape[0], C = input->shape[1], S = 1;
    for (int k = 2; k < input->ndim; k++) S *= input->shape[k];
    CG_CHECK(num_groups > 0 && C % num_groups == 0, CG_ERR_VALUE,
             "[%s] expected the number of channels (%lld) to be divisible by num_groups (%lld)", op, (long long)C,
             (long long)num_groups);
    if (check_channel(op, "weight", weight, input, C, true) || check_channel(op, "bias", bias, input, C, true))
        return NULL;
    NN_ARENA;
    int64_t sh3[3] = {1, N * num_groups, C / num_groups * S};
    cg_tensor *x3 = TK(cg_reshape(input, 3, sh3));
    cg_tensor *y = TK(x3 ? normalize_pqr(op, "NativeGroupNormBackward0", x3, eps, NULL, NULL) : NULL);
    y = TK(y ? cg_reshape(y, input->ndim, input->shape) : NULL);
    y = TK(y ? channel_affine(y, weight, bias) : NULL);
    return nn_finish(A_, y);
}

/* ------------------------------------------------------------- rms_norm */

static double dtype_eps(cg_dtype dt) {
    switch (dt) {
    case CG_DTYPE_F64: return DBL_EPSILON;
    case CG_DTYPE_F16: return 0.0009765625;
    case CG_DTYPE_BF16: return 0.0078125;
    default: return FLT_EPSILON;
    }
}

CG_PROF_FN(cg_tensor *, cg_rms_norm, "rms_norm", (cg_tensor *input, int ndims, const int64_t *normalized_shape,
           cg_tensor *weight, double eps), (input, ndims, normalized_shape, weight, eps), input) {
    const char *op = "rms_norm";
    int64_t lead, inner;
    if (check_input(op, input, 0) || check_normalized_shape(op, input, ndims, normalized_shape, &lead, &inner) ||
        check_elem_param(op, "weight", weight, input, ndims, normalized_shape))
        return NULL;
    if (isnan(eps)) eps = dtype_eps(input->dtype); /* eps=None */
    int64_t dims[CG_MAX_DIMS];
    for (int k = 0; k < ndims; k++) dims[k] = input->ndim - ndims + k;
    NN_ARENA;
    cg_tensor *ms = TK(cg_mean(TK(cg_square(input)), ndims, dims, true));
    cg_tensor *y = MUL(input, TK(ms ? cg_rsqrt(TK(cg_shifted(ms, eps))) : NULL));
    if (weight) y = MUL(y, weight);
    return nn_finish(A_, y);
}
