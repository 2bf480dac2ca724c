/* nn_rnn.c — the whole-sequence LSTM layer of one direction (cg_lstm_layer):
 * the time loop, the recurrent GEMM, the gate activations and the cell update
 * in C, recorded as one autograd node per layer.
 *
 * Note [LSTM layer]: the caller projects the whole input sequence with one
 * GEMM (xp = x W_ih^T + b_ih + b_hh, (T, B, 4H), gates in torch's order
 * i, f, g, o). Step t (t = 0 .. T-1, or T-1 .. 0 with `reverse`) computes
 *   G = xp[t] + h W_hh^T            one GEMM (beta = 1 over a copy of xp[t])
 *   i, f, o = sigmoid(G_i, G_f, G_o), g = tanh(G_g)
 *   c = f * c + i * g,  h = o * tanh(c)
 * and keeps the activated gates (T, B, 4H) and the cell states (T, B, H) for
 * the backward. The first-order backward walks the steps back with one fused
 * pass per step (dG from dh, dc and the saved gates) and one GEMM
 * dh = dG W_hh; the weight gradient is a single GEMM over all steps,
 * dW_hh = sum_t dG[t]^T h_prev[t] (k = T * B), and dxp is dG itself. Under
 * create_graph the forward is recomputed with cg ops from the saved inputs
 * and the same formulas are written with cg ops, so the gradient is
 * differentiable again (Note [One formula]). The time loops are the
 * device's lstm_layer / lstm_layer_backward entries (Note [Kernel entries];
 * the CPU's are src/backend/cpu/rnn.c). */
#include "nn_internal.h"

#include <string.h>

enum { L_XP, L_H0, L_C0, L_W, L_GATES, L_CELLS, L_OUT, L_NSAVED };

/* ------------------------------------------------------------- backward */

/* The composite backward (grad mode on): recompute the forward with cg ops from
 * the saved inputs, then walk back with the formulas in cg ops. */
static cg_status lstm_backward_composite(cg_node *node, cg_tensor *const *gout, cg_tensor **gin, cg_tensor *xp,
                                         cg_tensor *h0, cg_tensor *c0, cg_tensor *w) {
    const int64_t T = xp->shape[0];
    const bool rev = node->iattr[0] != 0;
    cg_status st = CG_OK;
    /* per step: h_prev, c_prev, i, f, g, o, c (new references) */
    enum { S_HP, S_CP, S_I, S_F, S_G, S_O, S_C, S_N };
    cg_tensor **keep = cg_calloc_n("lstm_backward", cg_count_axpb(S_N, T, 1), sizeof *keep);
    cg_tensor **dxs = cg_calloc_n("lstm_backward", cg_count_axpb(1, T, 1), sizeof *dxs);
    cg_tensor *wt = NULL, *h = NULL, *c = NULL, *dh = NULL, *dc = NULL, *dw = NULL;
    if (!keep || !dxs) {
        st = cg_set_error(CG_ERR_OOM, "[lstm_layer] out of memory in backward");
        goto done;
    }
    if (!(wt = cg_transpose(w, 0, 1))) goto fail;
    cg_tensor_retain(h0), cg_tensor_retain(c0);
    h = h0, c = c0;
    for (int64_t s = 0; s < T; s++) {
        int64_t t = rev ? T - 1 - s : s;
        NN_ARENA;
        cg_tensor *xt = TK(cg_select(xp, 0, t));
        cg_tensor *G = TK(cg_addmm(xt, h, wt, 1.0, 1.0));
        cg_tensor *parts[4] = {NULL};
        if (G && cg_chunk(G, 4, 1, parts) != 4) G = NULL, A_->failed = true;
        for (int q = 0; q < 4 && G; q++) TK(parts[q]);
        cg_tensor **k = keep + t * S_N;
        if (!A_->failed) {
            k[S_I] = cg_sigmoid(parts[0]), k[S_F] = cg_sigmoid(parts[1]);
            k[S_G] = cg_tanh(parts[2]), k[S_O] = cg_sigmoid(parts[3]);
        }
        bool ok = !A_->failed && k[S_I] && k[S_F] && k[S_G] && k[S_O];
        cg_tensor *cn = ok ? ADD(MUL(k[S_F], c), MUL(k[S_I], k[S_G])) : NULL;
        cg_tensor *hn = cn ? MUL(k[S_O], TK(cg_tanh(cn))) : NULL;
        if (hn) cg_tensor_retain(cn), cg_tensor_retain(cn), cg_tensor_retain(hn); /* k[S_C], c, h */
        nn_free(A_);
        if (!hn) goto fail;
        k[S_HP] = h, k[S_CP] = c, k[S_C] = cn;
        h = hn, c = cn;
    }
    cg_tensor_release(h), cg_tensor_release(c);
    h = c = NULL;
    dh = gout[1], dc = gout[2];
    cg_tensor_retain(dh), cg_tensor_retain(dc);
    for (int64_t s = T - 1; s >= 0; s--) {
        int64_t t = rev ? T - 1 - s : s;
        cg_tensor **k = keep + t * S_N;
        NN_ARENA;
        cg_tensor *dht = ADD(dh, TK(cg_select(gout[0], 0, t)));
        cg_tensor *tc = TK(cg_tanh(k[S_C]));
        cg_tensor *dct = ADD(dc, MUL(MUL(dht, k[S_O]), RSUB(1.0, SQ(tc))));
        cg_tensor *di = MUL(MUL(dct, k[S_G]), MUL(k[S_I], RSUB(1.0, k[S_I])));
        cg_tensor *df = MUL(MUL(dct, k[S_CP]), MUL(k[S_F], RSUB(1.0, k[S_F])));
        cg_tensor *dg = MUL(MUL(dct, k[S_I]), RSUB(1.0, SQ(k[S_G])));
        cg_tensor *dout = MUL(MUL(dht, tc), MUL(k[S_O], RSUB(1.0, k[S_O])));
        cg_tensor *cat_in[4] = {di, df, dg, dout};
        cg_tensor *dG = A_->failed ? NULL : TK(cg_cat(4, cat_in, 1));
        cg_tensor *dcp = dG ? MUL(dct, k[S_F]) : NULL;
        cg_tensor *dhp = dcp ? TK(cg_mm(dG, w)) : NULL;
        if (dhp) {
            cg_tensor_retain(dG), cg_tensor_retain(dcp), cg_tensor_retain(dhp);
            dxs[t] = dG;
            cg_tensor_release(dh), cg_tensor_release(dc);
            dh = dhp, dc = dcp;
        }
        nn_free(A_);
        if (!dhp) goto fail;
    }
    if (cg_node_needs_grad(node, L_XP) && T > 0 && !(gin[L_XP] = cg_stack((int)T, dxs, 0))) goto fail;
    if (cg_node_needs_grad(node, L_W)) {
        for (int64_t t = 0; t < T; t++) {
            cg_tensor *tr = cg_transpose(dxs[t], 0, 1);
            cg_tensor *term = tr ? cg_mm(tr, keep[t * S_N + S_HP]) : NULL;
            cg_tensor_release(tr);
            cg_tensor *sum = term && dw ? cg_add(dw, term) : term;
            if (dw && term) cg_tensor_release(term);
            cg_tensor_release(dw);
            dw = sum;
            if (!dw) goto fail;
        }
        gin[L_W] = dw;
        dw = NULL;
    }
    if (cg_node_needs_grad(node, L_H0)) gin[L_H0] = dh, dh = NULL;
    if (cg_node_needs_grad(node, L_C0)) gin[L_C0] = dc, dc = NULL;
    goto done;
fail:
    st = cg_last_error();
    for (int i = 0; i < 4; i++) cg_tensor_release(gin[i]), gin[i] = NULL;
done:
    if (keep)
        for (int64_t i = 0; i < T * S_N; i++) cg_tensor_release(keep[i]);
    if (dxs)
        for (int64_t i = 0; i < T; i++) cg_tensor_release(dxs[i]);
    free(keep), free(dxs);
    cg_tensor_release(wt), cg_tensor_release(h), cg_tensor_release(c);
    cg_tensor_release(dh), cg_tensor_release(dc), cg_tensor_release(dw);
    return st;
}

/* the fused first-order backward (Note [LSTM layer]): the device's
 * lstm_layer_backward entry */
static cg_status lstm_backward_fused(cg_node *node, cg_tensor *const *gout, cg_tensor **gin, cg_tensor *h0,
                                     cg_tensor *c0, cg_tensor *w, cg_tensor *acts, cg_tensor *cells,
                                     cg_tensor *out) { /* h0, c0, w, out contiguous */
    const int64_t H = h0->shape[1];
    const bool rev = node->iattr[0] != 0;
    const cg_dtype dt = acts->dtype;
    cg_tensor *go = NULL, *dh = NULL, *dc = NULL, *dG = NULL, *dw = NULL;
    if (!(go = cg_contiguous(gout[0])) || !(dh = cg_contiguous(gout[1])) || !(dc = cg_contiguous(gout[2])))
        goto fail;
    /* private, writable copies of the running gradients */
    cg_tensor *t1 = cg_clone(dh), *t2 = t1 ? cg_clone(dc) : NULL;
    cg_tensor_release(dh), cg_tensor_release(dc);
    dh = t1, dc = t2;
    if (!dh || !dc) goto fail;
    if (!(dG = cg_tensor_new("lstm_layer_backward", 3, acts->shape, dt, acts->device))) goto fail;
    if (cg_node_needs_grad(node, L_W)) {
        int64_t sw[2] = {4 * H, H};
        if (!(dw = cg_tensor_new("lstm_layer_backward", 2, sw, dt, acts->device))) goto fail;
    }
    cg_status st;
    CG_RUN_KERNEL(st, "lstm_layer_backward", dG->device, lstm_layer_backward, rev, dG, dh, dc, dw, go, acts, cells,
                  out, h0, c0, w);
    if (st) goto fail;
    if (dw) gin[L_W] = dw, dw = NULL;
    if (cg_node_needs_grad(node, L_XP)) gin[L_XP] = dG, dG = NULL;
    if (cg_node_needs_grad(node, L_H0)) gin[L_H0] = dh, dh = NULL;
    if (cg_node_needs_grad(node, L_C0)) gin[L_C0] = dc, dc = NULL;
    cg_tensor_release(go), cg_tensor_release(dh), cg_tensor_release(dc);
    cg_tensor_release(dG);
    return CG_OK;
fail:
    cg_tensor_release(go), cg_tensor_release(dh), cg_tensor_release(dc);
    cg_tensor_release(dG), cg_tensor_release(dw);
    return cg_last_error();
}

static cg_status lstm_backward(cg_node *node, cg_tensor *const *gout, cg_tensor **gin) {
    cg_tensor *s[L_NSAVED] = {NULL};
    cg_status st = CG_OK;
    for (int i = 0; i < L_NSAVED && st == CG_OK; i++)
        if (!(s[i] = cg_node_saved(node, i))) st = cg_last_error();
    if (st == CG_OK) {
        bool same = true;
        for (int i = 0; i < 3; i++) same = same && gout[i]->dtype == s[L_XP]->dtype;
        const int64_t *sh = s[L_GATES]->shape;
        if (cg_is_grad_enabled() || !same || sh[0] * sh[1] * sh[2] == 0) {
            st = lstm_backward_composite(node, gout, gin, s[L_XP], s[L_H0], s[L_C0], s[L_W]);
        } else {
            cg_tensor *h0 = cg_contiguous(s[L_H0]), *c0 = h0 ? cg_contiguous(s[L_C0]) : NULL;
            cg_tensor *w = c0 ? cg_contiguous(s[L_W]) : NULL;
            st = w ? lstm_backward_fused(node, gout, gin, h0, c0, w, s[L_GATES], s[L_CELLS], s[L_OUT]) : cg_last_error();
            cg_tensor_release(h0), cg_tensor_release(c0), cg_tensor_release(w);
        }
    }
    for (int i = 0; i < L_NSAVED; i++) cg_tensor_release(s[i]);
    return st;
}

/* ------------------------------------------------------------- forward */

static cg_status check_args(cg_tensor *xp, cg_tensor *h0, cg_tensor *c0, cg_tensor *w) {
    const char *op = "lstm_layer";
    cg_tensor *all[4] = {xp, h0, c0, w};
    for (int i = 0; i < 4; i++)
        CG_CHECK_S(all[i], CG_ERR_VALUE, "[%s] argument %d is NULL", op, i);
    if (cg_check_same(op, 4, all, 0)) return cg_last_error();
    CG_CHECK_S(xp->dtype == CG_DTYPE_F32 || xp->dtype == CG_DTYPE_F64, CG_ERR_DTYPE,
               "[%s] supports float32 and float64, got %s", op, cg_dtype_name(xp->dtype));
    CG_CHECK_S(xp->ndim == 3 && h0->ndim == 2 && c0->ndim == 2 && w->ndim == 2, CG_ERR_SHAPE,
               "[%s] expects xp (T, B, 4H), h0 and c0 (B, H), w_hh (4H, H); got ranks %d, %d, %d, %d", op, xp->ndim,
               h0->ndim, c0->ndim, w->ndim);
    const int64_t B = h0->shape[0], H = h0->shape[1];
    CG_CHECK_S(xp->shape[1] == B && xp->shape[2] == 4 * H && c0->shape[0] == B && c0->shape[1] == H &&
                   w->shape[0] == 4 * H && w->shape[1] == H,
               CG_ERR_SHAPE,
               "[%s] shapes do not match: xp (%lld, %lld, %lld), h0 (%lld, %lld), c0 (%lld, %lld), w_hh (%lld, %lld)",
               op, (long long)xp->shape[0], (long long)xp->shape[1], (long long)xp->shape[2], (long long)B,
               (long long)H, (long long)c0->shape[0], (long long)c0->shape[1], (long long)w->shape[0],
               (long long)w->shape[1]);
    return CG_OK;
}

CG_PROF_FN(cg_status, cg_lstm_layer, "lstm_layer", (cg_tensor *xp_in, cg_tensor *h0_in, cg_tensor *c0_in,
           cg_tensor *w_in, bool reverse, cg_tensor **out_seq, cg_tensor **h_n, cg_tensor **c_n), (xp_in, h0_in, c0_in,
           w_in, reverse, out_seq, h_n, c_n), xp_in, h0_in, c0_in) {
    *out_seq = *h_n = *c_n = NULL;
    cg_status st = check_args(xp_in, h0_in, c0_in, w_in);
    if (st) return st;
    const int64_t T = xp_in->shape[0], B = h0_in->shape[0], H = h0_in->shape[1];
    const cg_dtype dt = xp_in->dtype;
    const cg_device dev = xp_in->device;
    cg_tensor *xp = NULL, *h0 = NULL, *c0 = NULL, *w = NULL, *acts = NULL, *cells = NULL, *out = NULL;
    cg_tensor *hn = NULL, *cn = NULL;
    bool prev = cg_set_grad_enabled(false);
    xp = cg_contiguous(xp_in), h0 = xp ? cg_contiguous(h0_in) : NULL, c0 = h0 ? cg_contiguous(c0_in) : NULL;
    w = c0 ? cg_contiguous(w_in) : NULL;
    cg_set_grad_enabled(prev);
    int64_t s_out[3] = {T, B, H}, s_st[2] = {B, H};
    if (!w || !(acts = cg_tensor_new("lstm_layer", 3, xp->shape, dt, dev)) ||
        !(cells = cg_tensor_new("lstm_layer", 3, s_out, dt, dev)) ||
        !(out = cg_tensor_new("lstm_layer", 3, s_out, dt, dev)) ||
        !(hn = cg_tensor_new("lstm_layer", 2, s_st, dt, dev)) ||
        !(cn = cg_tensor_new("lstm_layer", 2, s_st, dt, dev)))
        goto fail;
    CG_RUN_KERNEL(st, "lstm_layer", dev, lstm_layer, reverse, acts, cells, out, hn, cn, xp, h0, c0, w);
    if (st) goto fail;
    cg_tensor *ins[4] = {xp_in, h0_in, c0_in, w_in};
    if (cg_any_requires_grad(4, ins)) {
        cg_node *node = cg_node_new("LstmLayerBackward0", lstm_backward, NULL, 4, ins, 3, L_NSAVED);
        if (!node) goto fail;
        node->iattr[0] = reverse;
        cg_node_set_output(node, 0, out);
        cg_node_set_output(node, 1, hn);
        cg_node_set_output(node, 2, cn);
        st = cg_node_save(node, L_XP, xp_in, false, 0);
        if (!st) st = cg_node_save(node, L_H0, h0_in, false, 0);
        if (!st) st = cg_node_save(node, L_C0, c0_in, false, 0);
        if (!st) st = cg_node_save(node, L_W, w_in, false, 0);
        if (!st) st = cg_node_save(node, L_GATES, acts, false, 0);
        if (!st) st = cg_node_save(node, L_CELLS, cells, false, 0);
        if (!st) st = cg_node_save(node, L_OUT, out, true, 0);
        cg_node_release(node);
        if (st) goto fail;
    }
    cg_tensor_release(xp), cg_tensor_release(h0), cg_tensor_release(c0), cg_tensor_release(w);
    cg_tensor_release(acts), cg_tensor_release(cells);
    *out_seq = out, *h_n = hn, *c_n = cn;
    return CG_OK;
fail:
    st = cg_last_error();
    cg_tensor_release(xp), cg_tensor_release(h0), cg_tensor_release(c0), cg_tensor_release(w);
    cg_tensor_release(acts), cg_tensor_release(cells), cg_tensor_release(out);
    cg_tensor_release(hn), cg_tensor_release(cn);
    return st;
}
