/* nn_misc.c — dropout (plain, feature, alpha), embedding (+ renorm_),
 * one_hot and scaled_dot_product_attention.
 *
 * Dropout draws a mask and multiplies by it with cg_mul, so the backward
 * reuses the same mask and is differentiable again. Embedding is a fused row
 * gather with its own node whose backward (an accumulating index_put, a cg op)
 * is itself differentiable. Attention is composed from matmul / softmax. */
#include "nn_internal.h"

#include <string.h>

/* ------------------------------------------------------------- dropout */

/* Note [Dropout masks]: a mask holds `kept` where the uniform u_i < keep and
 * 0 elsewhere; u_i is element i of the global generator's stream, reserved up
 * front like cg_rand (ceil(numel / 2) counters), so the mask depends only on
 * the generator state and never on the thread count. */
/* New mask of (ndim, shape) with x's dtype and device (Note [Dropout masks]). */
static cg_tensor *dropout_mask(const char *op, cg_tensor *x, int ndim, const int64_t *shape, double keep,
                               double kept) {
    cg_tensor *m = cg_tensor_new(op, ndim, shape, x->dtype, x->device);
    if (!m || cg_tensor_numel(m) == 0) return m;
    cg_status st;
    CG_RUN_KERNEL(st, op, m->device, dropout_mask, m, keep, kept);
    if (st) cg_tensor_release(m), m = NULL;
    return m;
}

typedef enum { DROP_PLAIN, DROP_FEATURE, DROP_ALPHA } drop_kind;

static cg_tensor *dropout_impl(const char *op, drop_kind kind, cg_tensor *x, double p, bool training) {
    CG_CHECK(x, CG_ERR_VALUE, "[%s] input is NULL", op);
    if (nn_check_float(op, "input", x)) return NULL;
    CG_CHECK(p >= 0.0 && p <= 1.0, CG_ERR_VALUE, "[%s] dropout probability has to be between 0 and 1, but got %g",
             op, p);
    char b[CG_SHAPE_STR];
    CG_CHECK(kind != DROP_FEATURE || x->ndim >= 2, CG_ERR_SHAPE,
             "[%s] expected an input (N, C, *) with at least 2 dims, got %s", op, cg_shape_str(b, x->ndim, x->shape));
    if (!training || p == 0.0) {
        cg_tensor_retain(x);
        return x;
    }
    if (p == 1.0) return cg_scaled(x, 0.0);
    int64_t msh[CG_MAX_DIMS];
    memcpy(msh, x->shape, sizeof(int64_t) * (size_t)x->ndim);
    if (kind == DROP_FEATURE)
        for (int k = 2; k < x->ndim; k++) msh[k] = 1;
    if (kind != DROP_ALPHA) {
        cg_tensor *m = dropout_mask(op, x, x->ndim, msh, 1.0 - p, 1.0 / (1.0 - p));
        cg_tensor *r = m ? cg_mul(x, m) : NULL;
        cg_tensor_release(m);
        return r;
    }
    /* alpha dropout: x * (m a) + (m - 1) alpha a + alpha a p, m in {0, 1} */
    const double alpha = 1.7580993408473766;
    double a = 1.0 / sqrt((alpha * alpha * p + 1) * (1 - p));
    NN_ARENA;
    cg_tensor *m = TK(dropout_mask(op, x, x->ndim, msh, 1.0 - p, 1.0));
    cg_tensor *bias = SHIFT(SCALE(SHIFT(m, -1.0), alpha * a), alpha * a * p);
    cg_tensor *r = ADD(MUL(x, SCALE(m, a)), bias);
    return nn_finish(A_, r);
}

CG_PROF_FN(cg_tensor *, cg_dropout, "dropout", (cg_tensor *input, double p, bool training), (input, p, training),
           input) {
    return dropout_impl("dropout", DROP_PLAIN, input, p, training);
}
CG_PROF_FN(cg_tensor *, cg_feature_dropout, "feature_dropout", (cg_tensor *input, double p, bool training), (input, p,
           training), input) {
    return dropout_impl("feature_dropout", DROP_FEATURE, input, p, training);
}
CG_PROF_FN(cg_tensor *, cg_alpha_dropout, "alpha_dropout", (cg_tensor *input, double p, bool training), (input, p,
           training), input) {
    return dropout_impl("alpha_dropout", DROP_ALPHA, input, p, training);
}

/* ------------------------------------------------------------- embedding */

static cg_tensor *contig_nograd(cg_tensor *t) {
    bool prev = cg_set_grad_enabled(false);
    cg_tensor *c = cg_contiguous(t);
    cg_set_grad_enabled(prev);
    return c;
}

/* A contiguous int64 copy of integer indices (new reference). */
static cg_tensor *long_indices(const char *op, cg_tensor *idx) {
    CG_CHECK(idx->dtype == CG_DTYPE_I64 || idx->dtype == CG_DTYPE_I32, CG_ERR_DTYPE,
             "[%s] indices must be an int64 or int32 tensor, got %s", op, cg_dtype_name(idx->dtype));
    if (idx->dtype == CG_DTYPE_I64) return contig_nograd(idx);
    return cg_to_dtype(idx, CG_DTYPE_I64);
}

/* Every index in [0, n). */
static cg_status check_rows(const char *op, cg_tensor *idx, int64_t n) {
    bool found = false;
    int64_t bad = 0;
    cg_status st;
    CG_RUN_KERNEL(st, op, idx->device, index_find_out_of_range, idx, 0, n, &found, &bad);
    if (st) return st;
    CG_CHECK_S(!found, CG_ERR_INDEX, "[%s] index %lld is out of range for %lld rows", op, (long long)bad,
               (long long)n);
    return CG_OK;
}

/* Saved: 0 = flat int64 indices (n); iattr[0] = padding_idx.
 * gW = zeros(V, D).index_put_((idx,), g.view(n, D) * (idx != padding_idx), accumulate) */
static cg_status embedding_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    if (!cg_node_needs_grad(node, 0)) return CG_OK;
    NN_ARENA;
    const cg_tensor_meta *m = &node->input_meta[0];
    cg_tensor *idx = TK(cg_node_saved(node, 0));
    int64_t gsh[2] = {idx ? cg_tensor_numel(idx) : 0, m->shape[1]};
    cg_tensor *gf = TK(idx ? cg_reshape(g[0], 2, gsh) : NULL);
    if (node->iattr[0] >= 0 && !A_->failed) {
        cg_tensor *keep = TK(cg_cmp_scalar(cg_ne, idx, (double)node->iattr[0]));
        keep = TK(keep ? cg_unsqueeze(keep, 1) : NULL);
        gf = WHERE(keep, gf, TK(nn_scalar(0.0, g[0])));
    }
    cg_tensor *z = TK(cg_zeros(m->ndim, m->shape, g[0]->dtype, g[0]->device));
    cg_tensor *r = TK(z && gf ? cg_index_put(z, 1, &idx, gf, true) : NULL);
    gin[0] = nn_finish(A_, r);
    return gin[0] ? CG_OK : cg_last_error();
}

CG_PROF_FN(cg_tensor *, cg_embedding, "embedding", (cg_tensor *weight, cg_tensor *indices, int64_t padding_idx),
           (weight, indices, padding_idx), weight, indices) {
    const char *op = "embedding";
    cg_tensor *wi[2] = {weight, indices};
    if (cg_check_same(op, 2, wi, 2u)) return NULL;
    char b[CG_SHAPE_STR];
    CG_CHECK(weight->ndim == 2, CG_ERR_SHAPE, "[%s] weight must be 2-D (num_embeddings, embedding_dim), got %s", op,
             cg_shape_str(b, weight->ndim, weight->shape));
    CG_CHECK(indices->ndim < CG_MAX_DIMS, CG_ERR_SHAPE, "[%s] indices have too many dims (%d)", op, indices->ndim);
    int64_t V = weight->shape[0], D = weight->shape[1];
    CG_CHECK(padding_idx < V, CG_ERR_INDEX, "[%s] padding_idx %lld must be within num_embeddings (%lld)", op,
             (long long)padding_idx, (long long)V);
    cg_tensor *idx = long_indices(op, indices);
    if (!idx) return NULL;
    int64_t n = cg_tensor_numel(idx);
    cg_tensor *flat = cg_reshape(idx, 1, &n);
    cg_tensor_release(idx);
    if (!flat || check_rows(op, flat, V)) {
        cg_tensor_release(flat);
        return NULL;
    }
    int64_t osh[CG_MAX_DIMS];
    memcpy(osh, indices->shape, sizeof(int64_t) * (size_t)indices->ndim);
    osh[indices->ndim] = D;
    cg_tensor *out = cg_tensor_new(op, indices->ndim + 1, osh, weight->dtype, weight->device);
    if (out && n * D > 0) {
        cg_tensor *wc = contig_nograd(weight);
        cg_status st = CG_OK;
        if (wc) CG_RUN_KERNEL(st, op, out->device, embedding, out, wc, flat);
        if (!wc || st) cg_tensor_release(out), out = NULL;
        cg_tensor_release(wc);
    }
    if (out) {
        bool failed;
        cg_node *node = cg_wire_unary_output("EmbeddingBackward0", embedding_backward, NULL, 1, &weight, out, 1, &failed);
        if (node) {
            node->iattr[0] = padding_idx;
            failed = cg_node_save(node, 0, flat, false, 0) != CG_OK;
        }
        if (failed) cg_tensor_release(out), out = NULL;
    }
    cg_tensor_release(flat);
    return out;
}

CG_PROF_FN(cg_status, cg_embedding_renorm_, "embedding_renorm_", (cg_tensor *weight, cg_tensor *indices,
           double max_norm, double norm_type), (weight, indices, max_norm, norm_type), weight, indices) {
    const char *op = "embedding_renorm_";
    cg_tensor *wi[2] = {weight, indices};
    if (cg_check_same(op, 2, wi, 2u)) return cg_last_error();
    if (nn_check_float(op, "weight", weight) || cg_check_writable(op, weight)) return cg_last_error();
    char b[CG_SHAPE_STR];
    CG_CHECK_S(weight->ndim == 2, CG_ERR_SHAPE, "[%s] weight must be 2-D, got %s", op,
               cg_shape_str(b, weight->ndim, weight->shape));
    CG_CHECK_S(max_norm >= 0 && norm_type > 0, CG_ERR_VALUE,
               "[%s] expected max_norm >= 0 and norm_type > 0, got %g and %g", op, max_norm, norm_type);
    int64_t V = weight->shape[0];
    cg_tensor *idx = long_indices(op, indices);
    if (!idx) return cg_last_error();
    cg_status st = check_rows(op, idx, V);
    if (!st) CG_RUN_KERNEL(st, op, weight->device, embedding_renorm, weight, idx, max_norm, norm_type);
    if (!st) cg_storage_bump_version(weight->storage);
    cg_tensor_release(idx);
    return st;
}

/* ------------------------------------------------------------- one_hot */

CG_PROF_FN(cg_tensor *, cg_one_hot, "one_hot", (cg_tensor *indices, int64_t num_classes), (indices, num_classes),
           indices) {
    const char *op = "one_hot";
    CG_CHECK(indices, CG_ERR_VALUE, "[%s] indices is NULL", op);
    CG_CHECK(indices->dtype == CG_DTYPE_I64, CG_ERR_DTYPE, "[%s] indices must be int64, got %s", op,
             cg_dtype_name(indices->dtype));
    CG_CHECK(indices->ndim < CG_MAX_DIMS, CG_ERR_SHAPE, "[%s] indices have too many dims (%d)", op, indices->ndim);
    CG_CHECK(num_classes >= -1, CG_ERR_VALUE, "[%s] num_classes must be -1 (inferred) or non-negative, got %lld", op,
             (long long)num_classes);
    if (num_classes < 0 && cg_need_values(op, indices, "num_classes would be inferred from the values"))
        return NULL;
    int64_t n = cg_tensor_numel(indices);
    CG_CHECK(!(n == 0 && num_classes < 0), CG_ERR_VALUE,
             "[%s] can not infer the total number of classes from an empty tensor", op);
    cg_tensor *c = contig_nograd(indices);
    if (!c) return NULL;
    bool negative = false;
    int64_t bad = 0, mx = -1;
    cg_status st;
    CG_RUN_KERNEL(st, op, c->device, one_hot_scan, c, &negative, &bad, &mx);
    if (st || negative) {
        if (!st) cg_set_error(CG_ERR_INDEX, "[%s] class values must be non-negative, got %lld", op, (long long)bad);
        cg_tensor_release(c);
        return NULL;
    }
    if (num_classes < 0) num_classes = mx + 1;
    if (mx >= num_classes) {
        cg_tensor_release(c);
        cg_set_error(CG_ERR_INDEX, "[%s] class values must be smaller than num_classes (%lld), got %lld", op,
                     (long long)num_classes, (long long)mx);
        return NULL;
    }
    int64_t osh[CG_MAX_DIMS];
    memcpy(osh, indices->shape, sizeof(int64_t) * (size_t)indices->ndim);
    osh[indices->ndim] = num_classes;
    cg_tensor *out = cg_zeros(indices->ndim + 1, osh, CG_DTYPE_I64, indices->device);
    if (out && n > 0) {
        CG_RUN_KERNEL(st, op, out->device, one_hot, out, c);
        if (st) cg_tensor_release(out), out = NULL;
    }
    cg_tensor_release(c);
    return out;
}

/* ------------------------------------------------------------- scaled_dot_product_attention */

/* (L, S) bool, true where j <= i (PyTorch's top-left aligned causal mask). */
static cg_tensor *causal_mask(int64_t L, int64_t S, cg_device dev) {
    int64_t sh[2] = {L, S};
    cg_tensor *m = cg_tensor_new("scaled_dot_product_attention", 2, sh, CG_DTYPE_BOOL, dev);
    cg_status st = CG_OK;
    if (m && L * S > 0) CG_RUN_KERNEL(st, "scaled_dot_product_attention", dev, causal_mask, m);
    if (st) cg_tensor_release(m), m = NULL;
    return m;
}

static const cg_op_schema k_sdpa = {"scaled_dot_product_attention", NULL, 1, CG_AMP_LOWER, false, false, false};

CG_PROF_FN(cg_tensor *, cg_scaled_dot_product_attention, "scaled_dot_product_attention", (cg_tensor *q, cg_tensor *k,
           cg_tensor *v, cg_tensor *attn_mask, double dropout_p, bool is_causal, double scale), (q, k, v, attn_mask,
           dropout_p, is_causal, scale), q, k, v) {
    const char *op = "scaled_dot_product_attention";
    cg_tensor *amp_[4] = {q, k, v, attn_mask};
    NN_AMP_CALL(k_sdpa, 4, amp_, cg_scaled_dot_product_attention(amp_[0], amp_[1], amp_[2], amp_[3], dropout_p,
                                                                  is_causal, scale));
    cg_tensor *qkv[3] = {q, k, v};
    if (cg_check_same(op, 3, qkv, 0) || nn_check_float(op, "query", q)) return NULL;
    char a[CG_SHAPE_STR], b[CG_SHAPE_STR], c[CG_SHAPE_STR];
    CG_CHECK(q->ndim >= 2 && k->ndim >= 2 && v->ndim >= 2, CG_ERR_SHAPE,
             "[%s] query, key and value need at least 2 dims, got %s, %s and %s", op,
             cg_shape_str(a, q->ndim, q->shape), cg_shape_str(b, k->ndim, k->shape), cg_shape_str(c, v->ndim, v->shape));
    int64_t L = q->shape[q->ndim - 2], E = q->shape[q->ndim - 1], S = k->shape[k->ndim - 2];
    CG_CHECK(k->shape[k->ndim - 1] == E && v->shape[v->ndim - 2] == S, CG_ERR_SHAPE,
             "[%s] expected query (*, L, E), key (*, S, E) and value (*, S, Ev), got %s, %s and %s", op,
             cg_shape_str(a, q->ndim, q->shape), cg_shape_str(b, k->ndim, k->shape), cg_shape_str(c, v->ndim, v->shape));
    CG_CHECK(!(is_causal && attn_mask), CG_ERR_VALUE, "[%s] explicit attn_mask should not be set when is_causal=true", op);
    CG_CHECK(dropout_p >= 0 && dropout_p <= 1, CG_ERR_VALUE, "[%s] dropout_p must be in [0, 1], got %g", op, dropout_p);
    if (attn_mask) {
        CG_CHECK(cg_device_eq(attn_mask->device, q->device), CG_ERR_DEVICE, "[%s] attn_mask is on %s but query is on %s",
                 op, cg_device_name(attn_mask->device), cg_device_name(q->device));
        CG_CHECK(attn_mask->dtype == CG_DTYPE_BOOL || attn_mask->dtype == q->dtype, CG_ERR_DTYPE,
                 "[%s] attn_mask must be bool or of the query's dtype %s, got %s", op, cg_dtype_name(q->dtype),
                 cg_dtype_name(attn_mask->dtype));
    }
    if (scale <= 0) scale = E > 0 ? 1.0 / sqrt((double)E) : 1.0;
    NN_ARENA;
    cg_tensor *kt = TK(cg_transpose(k, -2, -1));
    cg_tensor *s = SCALE(TK(kt ? cg_matmul(q, kt) : NULL), scale);
    bool masked = is_causal || attn_mask;
    if (masked && !A_->failed) {
        cg_tensor *ninf = TK(nn_scalar(-INFINITY, q));
        if (is_causal) s = WHERE(TK(causal_mask(L, S, q->device)), s, ninf);
        else if (attn_mask->dtype == CG_DTYPE_BOOL) s = WHERE(attn_mask, s, ninf);
        else s = ADD(s, attn_mask);
        /* rows with every position masked: softmax over zeros (finite), then 0 */
        int64_t last = -1;
        cg_tensor *dead = TK(s ? cg_all(TK(cg_eq(s, ninf)), 1, &last, true) : NULL);
        cg_tensor *zero = TK(nn_scalar(0.0, q));
        s = WHERE(dead, zero, s);
        cg_tensor *p = TK(s ? cg_softmax(s, -1) : NULL);
        s = WHERE(dead, zero, p);
    } else {
        s = TK(s ? cg_softmax(s, -1) : NULL);
    }
    if (dropout_p > 0) s = TK(s ? cg_dropout(s, dropout_p, true) : NULL);
    cg_tensor *r = TK(s ? cg_matmul(s, v) : NULL);
    return nn_finish(A_, r);
}
