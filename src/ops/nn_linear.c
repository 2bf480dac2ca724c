/* nn_linear.c — the fully connected layers: linear (y = x W^T + b as one GEMM
 * with the bias added in the same op, one autograd node) and bilinear
 * (y = x1^T A x2 + b, composed from cg ops). Both backward paths are cg ops,
 * so every gradient is differentiable again. */
#include "nn_internal.h"

#include <stdint.h>
#include <string.h>

/* Note [Linear as one GEMM]: input (*, in) is viewed as x (rows, in) with
 * rows = numel / in (a copy only when the batch dims cannot be flattened as a
 * view), weight (out, in) is read as W^T (in, out) through its strides (the
 * GEMM's transpose flag, never a copy), and the contiguous output (rows, out)
 * is pre-filled with the broadcast bias so the GEMM (the device's gemm entry,
 * Note [Kernel entries]) runs with beta = 1.
 * float16 / bfloat16 accumulate in float32 (Note [Half GEMM]). Backward, with g viewed as (rows, out):
 *   grad_input = g @ W (reshaped to input's shape), grad_weight = g^T @ x,
 *   grad_bias = sum of g over rows (reduced to bias's shape). */

static const cg_op_schema k_linear = {"linear", "LinearBackward0", 1, CG_AMP_LOWER, false, true, false};

/* t (*, in) as (rows, in): a view, or a copy when the batch dims do not flatten. */
static cg_tensor *as_rows(cg_tensor *t, int64_t rows, int64_t in) {
    int64_t s2[2] = {rows, in};
    return cg_reshape(t, 2, s2);
}

/* A history-free operand in compute dtype cdt. */
static cg_tensor *in_dtype(cg_tensor *t, cg_dtype cdt) {
    cg_tensor *a = cg_tensor_alias(t);
    if (!a || a->dtype == cdt) return a;
    cg_tensor *c = cg_to_dtype(a, cdt);
    cg_tensor_release(a);
    return c;
}

/* A matrix the device's GEMM accepts: its own strides when it can read them, else a contiguous copy. */
static cg_tensor *blas_ready(cg_tensor *t) {
    bool ok = true;
    if (cg_dtype_is_floating(t->dtype)) {
        cg_status st;
        CG_RUN_KERNEL(st, "linear", t->device, gemm_layout, t->shape[0], t->shape[1], t->strides[0], t->strides[1],
                      &ok);
        if (st) return NULL;
    }
    if (ok) return (cg_tensor_retain(t), t);
    return cg_contiguous(t);
}

/* out (rows, out_f) contiguous = x W^T + b; grad mode is off. */
static cg_status linear_compute(cg_tensor *out, cg_tensor *input, cg_tensor *weight, cg_tensor *bias, int64_t rows,
                                int64_t in) {
    cg_dtype dt = out->dtype;
    cg_dtype cdt = (dt == CG_DTYPE_F16 || dt == CG_DTYPE_BF16) ? CG_DTYPE_F32 : dt;
    cg_status st = CG_OK;
    bool half = cdt != dt; /* half operands go to the entry as they are (Note [Half GEMM]) */
    cg_tensor *xc = NULL, *x = NULL, *xr = NULL, *w = NULL, *wr = NULL, *wt = NULL, *cw = NULL;
    if (!(xc = in_dtype(input, half ? dt : cdt)) || !(x = as_rows(xc, rows, in))) goto fail;
    if (!(xr = half ? (cg_tensor_retain(x), x) : blas_ready(x))) goto fail;
    if (!(w = in_dtype(weight, half ? dt : cdt)) || !(wr = half ? (cg_tensor_retain(w), w) : blas_ready(w))) goto fail;
    /* A = x (rows, in); B = W^T (in, out), a view: element (p, j) of B is W[j, p] */
    if (!(wt = cg_transpose(wr, 0, 1))) goto fail;
    if (cdt == dt) cw = (cg_tensor_retain(out), out);
    else if (!(cw = cg_tensor_new("linear", 2, out->shape, cdt, out->device))) goto fail;
    if (bias && cg_copy_(cw, bias)) goto fail;
    CG_RUN_KERNEL(st, "linear", cw->device, gemm, cw, xr, wt, 1.0, bias ? 1.0 : 0.0);
    if (st) goto fail;
    if (cw != out && cg_copy_(out, cw)) goto fail;
    goto done;
fail:
    st = cg_last_error();
done:;
    cg_tensor *all[] = {xc, x, xr, w, wr, wt, cw};
    for (int i = 0; i < 7; i++) cg_tensor_release(all[i]);
    return st;
}

/* Saved: 0 = input, 1 = weight. Inputs: 0 input, 1 weight, 2 bias (may be absent). */
static cg_status linear_backward(cg_node *node, cg_tensor *const *gout, cg_tensor **gin) {
    bool ni = cg_node_needs_grad(node, 0), nw = cg_node_needs_grad(node, 1), nb = cg_node_needs_grad(node, 2);
    if (!ni && !nw && !nb) return CG_OK;
    NN_ARENA;
    const cg_tensor_meta *xm = &node->input_meta[0];
    int64_t in = xm->shape[xm->ndim - 1], outf = node->input_meta[1].shape[0];
    int64_t rows = cg_shape_numel(xm->ndim - 1, xm->shape);
    cg_tensor *g = TK(as_rows(gout[0], rows, outf));
    if (ni) {
        cg_tensor *w = TK(cg_node_saved(node, 1));
        cg_tensor *gx = TK(g && w ? cg_mm(g, w) : NULL);
        gin[0] = gx ? cg_reshape(gx, xm->ndim, xm->shape) : NULL;
        if (!gin[0]) A_->failed = true;
    }
    if (nw && !A_->failed) {
        cg_tensor *x = TK(cg_node_saved(node, 0));
        cg_tensor *xr = TK(x ? as_rows(x, rows, in) : NULL);
        cg_tensor *gt = TK(g ? cg_t(g) : NULL);
        gin[1] = gt && xr ? cg_mm(gt, xr) : NULL;
        if (!gin[1]) A_->failed = true;
    }
    if (nb && !A_->failed) {
        const cg_tensor_meta *bm = &node->input_meta[2];
        int64_t d0 = 0;
        cg_tensor *s = TK(g ? cg_sum(g, 1, &d0, false) : NULL);
        gin[2] = s ? cg_reduce_to_shape(s, bm->ndim, bm->shape) : NULL;
        if (!gin[2]) A_->failed = true;
    }
    bool failed = A_->failed;
    nn_free(A_);
    return failed ? cg_last_error() : CG_OK;
}

static cg_tensor *linear_body(cg_tensor *input, cg_tensor *weight, cg_tensor *bias) {
    const char *op = "linear";
    cg_tensor *args[3] = {input, weight, bias};
    if (cg_check_same(op, bias ? 3 : 2, args, cg_amp_cast_mask(&k_linear, bias ? 3 : 2, args))) return NULL;
    char s1[CG_SHAPE_STR], s2[CG_SHAPE_STR];
    CG_CHECK(input->dtype != CG_DTYPE_BOOL, CG_ERR_NOT_IMPLEMENTED, "[%s] not supported for dtype bool", op);
    if (cg_dtype_is_barebones(input->dtype)) {
        cg_dtype_unsupported(op, input->dtype);
        return NULL;
    }
    CG_CHECK(input->ndim >= 1, CG_ERR_SHAPE, "[%s] input must be at least 1-D, got shape %s", op,
             cg_shape_str(s1, input->ndim, input->shape));
    CG_CHECK(weight->ndim == 2, CG_ERR_SHAPE, "[%s] weight must be 2-D (out_features, in_features), got shape %s", op,
             cg_shape_str(s1, weight->ndim, weight->shape));
    int64_t in = input->shape[input->ndim - 1], outf = weight->shape[0];
    CG_CHECK(weight->shape[1] == in, CG_ERR_SHAPE,
             "[%s] input of shape %s and weight of shape %s cannot be multiplied (%lld != %lld)", op,
             cg_shape_str(s1, input->ndim, input->shape), cg_shape_str(s2, weight->ndim, weight->shape),
             (long long)in, (long long)weight->shape[1]);
    CG_CHECK(!bias || (bias->ndim <= 1 && (cg_tensor_numel(bias) == outf || cg_tensor_numel(bias) == 1)), CG_ERR_SHAPE,
             "[%s] bias of shape %s does not match out_features %lld", op,
             cg_shape_str(s1, bias ? bias->ndim : 0, bias ? bias->shape : NULL), (long long)outf);
    int64_t rows = cg_shape_numel(input->ndim - 1, input->shape), lim = INT64_MAX;
    cg_status lst;
    CG_RUN_KERNEL(lst, op, input->device, gemm_max_dim, &lim);
    if (lst) return NULL;
    CG_CHECK(rows <= lim && in <= lim && outf <= lim, CG_ERR_NOT_IMPLEMENTED,
             "[%s] matrix dimension exceeds the BLAS index range", op);
    cg_tensor *in3[3];
    bool owned;
    if (cg_schema_guard(&k_linear, 3, args, in3, &owned)) return NULL;
    cg_tensor *x = in3[0], *w = in3[1], *b = in3[2];
    int64_t osh[CG_MAX_DIMS];
    memcpy(osh, input->shape, sizeof(int64_t) * (size_t)input->ndim);
    osh[input->ndim - 1] = outf;
    cg_tensor *out = cg_tensor_new(op, input->ndim, osh, x->dtype, x->device);
    if (out) {
        bool prev = cg_set_grad_enabled(false);
        cg_tensor *o2 = as_rows(out, rows, outf); /* a view: out is contiguous */
        cg_status st = o2 ? linear_compute(o2, x, w, b, rows, in) : cg_last_error();
        cg_tensor_release(o2);
        cg_set_grad_enabled(prev);
        if (st) cg_tensor_release(out), out = NULL;
    }
    if (out) {
        bool failed;
        cg_node *node = cg_wire_unary_output(k_linear.node_name, linear_backward, &k_linear, 3, in3, out, 2, &failed);
        if (node) failed = cg_node_save(node, 0, x, false, 0) || cg_node_save(node, 1, w, false, 0);
        if (failed) cg_tensor_release(out), out = NULL;
    }
    if (owned) cg_release_all(3, in3);
    return out;
}

/* the call recorded as a profiler event (off the hot path) */
static CG_PROF_COLD cg_tensor *linear_profiled(cg_tensor *input, cg_tensor *weight, cg_tensor *bias) {
    cg_tensor *args[3] = {input, weight, bias};
    int64_t ev = cg_prof_begin("linear", CG_PROF_OP, bias ? 3 : 2, args);
    cg_tensor *r = linear_body(input, weight, bias);
    cg_prof_end(ev, r);
    return r;
}
cg_tensor *cg_linear(cg_tensor *input, cg_tensor *weight, cg_tensor *bias) {
    if (cg_prof_active()) return linear_profiled(input, weight, bias);
    return linear_body(input, weight, bias);
}

/* ------------------------------------------------------------- bilinear */

/* y[r, o] = sum_ij x1[r, i] A[o, i, j] x2[r, j] + b[o] with rows r over the
 * shared batch dims: one GEMM x1 @ A' where A' = A permuted to (in1, out * in2),
 * then a batched product with x2 (rows, in2, 1). */
CG_PROF_FN(cg_tensor *, cg_bilinear, "bilinear", (cg_tensor *input1, cg_tensor *input2, cg_tensor *weight,
           cg_tensor *bias), (input1, input2, weight, bias), input1, input2, weight) {
    const char *op = "bilinear";
    if (cg_autocast_active()) { /* PyTorch's CPU autocast leaves bilinear in its input dtype */
        bool ac = cg_autocast_suspend();
        cg_tensor *r = cg_bilinear(input1, input2, weight, bias);
        cg_autocast_resume(ac);
        return r;
    }
    cg_tensor *args[4] = {input1, input2, weight, bias};
    if (cg_check_same(op, bias ? 4 : 3, args, 0)) return NULL;
    /* integer dtypes run the same products (PyTorch's CPU build has them); bool has none */
    CG_CHECK(input1->dtype != CG_DTYPE_BOOL, CG_ERR_NOT_IMPLEMENTED, "[%s] \"bmm\" not implemented for 'Bool'", op);
    char s1[CG_SHAPE_STR], s2[CG_SHAPE_STR], s3[CG_SHAPE_STR];
    CG_CHECK(weight->ndim == 3, CG_ERR_SHAPE, "[%s] weight must be 3-D (out, in1, in2), got shape %s", op,
             cg_shape_str(s1, weight->ndim, weight->shape));
    int n1 = input1->ndim, n2 = input2->ndim;
    bool same_batch = n1 >= 1 && n1 == n2 && cg_shape_eq(n1 - 1, input1->shape, n2 - 1, input2->shape);
    CG_CHECK(same_batch, CG_ERR_SHAPE, "[%s] input1 of shape %s and input2 of shape %s must have the same size except "
             "for the last dimension", op, cg_shape_str(s1, n1, input1->shape), cg_shape_str(s2, n2, input2->shape));
    int64_t outf = weight->shape[0], in1 = weight->shape[1], in2 = weight->shape[2];
    CG_CHECK(input1->shape[n1 - 1] == in1 && input2->shape[n2 - 1] == in2, CG_ERR_SHAPE,
             "[%s] inputs of shapes %s and %s do not match weight of shape %s", op, cg_shape_str(s1, n1, input1->shape),
             cg_shape_str(s2, n2, input2->shape), cg_shape_str(s3, weight->ndim, weight->shape));
    CG_CHECK(!bias || (bias->ndim == 1 && bias->shape[0] == outf), CG_ERR_SHAPE,
             "[%s] bias of shape %s does not match out_features %lld", op,
             cg_shape_str(s1, bias ? bias->ndim : 0, bias ? bias->shape : NULL), (long long)outf);
    int64_t rows = cg_shape_numel(n1 - 1, input1->shape);
    int64_t p[3] = {1, 0, 2}, wsh[2] = {in1, outf * in2}, tsh[3] = {rows, outf, in2}, x2sh[3] = {rows, in2, 1};
    int64_t ysh[2] = {rows, outf}, osh[CG_MAX_DIMS];
    memcpy(osh, input1->shape, sizeof(int64_t) * (size_t)n1);
    osh[n1 - 1] = outf;
    NN_ARENA;
    cg_tensor *wp = TK(cg_permute(weight, p));
    cg_tensor *w2 = TK(wp ? cg_reshape(wp, 2, wsh) : NULL);
    cg_tensor *x1 = TK(as_rows(input1, rows, in1));
    cg_tensor *t = TK(x1 && w2 ? cg_mm(x1, w2) : NULL);
    cg_tensor *t3 = TK(t ? cg_reshape(t, 3, tsh) : NULL);
    cg_tensor *x2 = TK(cg_reshape(input2, 3, x2sh));
    cg_tensor *y = TK(t3 && x2 ? cg_bmm(t3, x2) : NULL);
    y = TK(y ? cg_reshape(y, 2, ysh) : NULL);
    if (bias) y = TK(y ? cg_add(y, bias) : NULL);
    cg_tensor *r = TK(y ? cg_reshape(y, n1, osh) : NULL);
    return nn_finish(A_, r);
}
