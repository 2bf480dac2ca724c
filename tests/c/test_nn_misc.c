/* test_nn_misc.c — dropout (reproducibility, thread-count independence,
 * mask / scale, feature and alpha variants), embedding (+ padding_idx
 * gradient, renorm_), one_hot, scaled_dot_product_attention, pad (all modes),
 * interpolate (nearest, bilinear, bicubic, align_corners, sizes and scale
 * factors) and pixel_(un)shuffle against float64 reference loops, with
 * gradcheck + gradgradcheck and error cases. */
#include "test.h"

#include <stdlib.h>
#include <string.h>

static void check_close(cg_tensor *r, const double *ref, int64_t n, double tol, const char *what) {
    CHECK_MSG(r != NULL, "%s: NULL (%s)", what, cg_last_error_message());
    if (!r) return;
    CHECK_MSG(cg_tensor_numel(r) == n, "%s: numel %lld, expected %lld", what, (long long)cg_tensor_numel(r),
              (long long)n);
    if (cg_tensor_numel(r) != n) return;
    for (int64_t i = 0; i < n; i++) {
        double v = tt_get(r, i);
        if (!(fabs(v - ref[i]) <= tol * (1 + fabs(ref[i])))) {
            CHECK_MSG(0, "%s[%lld] = %.10g, expected %.10g", what, (long long)i, v, ref[i]);
            return;
        }
    }
}

static void release_all(cg_tensor **ts, size_t n) {
    for (size_t i = 0; i < n; i++) cg_tensor_release(ts[i]);
}
#define RELEASE(...)                                           \
    do {                                                       \
        cg_tensor *arr_[] = {__VA_ARGS__};                      \
        release_all(arr_, sizeof arr_ / sizeof *arr_);          \
    } while (0)

/* ------------------------------------------------------------- dropout */

TEST(nn_dropout) {
    int64_t n = 100000;
    cg_tensor *x = tt_rand(CG_DTYPE_F32, 1, &n, 0.5, 1.5, 1);
    int prev = cg_get_num_threads();
    cg_manual_seed(7);
    cg_set_num_threads(1);
    cg_tensor *a = cg_dropout(x, 0.3, true);
    cg_manual_seed(7);
    cg_set_num_threads(4);
    cg_tensor *b = cg_dropout(x, 0.3, true);
    cg_set_num_threads(prev);
    CHECK(tt_maxdiff(a, b) == 0);
    int64_t zeros = 0;
    bool scaled = true;
    for (int64_t i = 0; i < n; i++) {
        double v = tt_get(a, i), xv = tt_get(x, i);
        if (v == 0) zeros++;
        else scaled &= fabs(v - xv / 0.7) <= 1e-6 * fabs(v);
    }
    CHECK(scaled);
    CHECK_MSG(fabs((double)zeros / (double)n - 0.3) < 0.01, "dropped fraction %g", (double)zeros / (double)n);
    /* the offset advanced like cg_rand: ceil(n / 2) counters */
    uint64_t s, off0, off1;
    cg_rng_get_state(&s, &off0);
    cg_tensor *c = cg_dropout(x, 0.3, true);
    cg_rng_get_state(&s, &off1);
    CHECK(off1 - off0 == (uint64_t)(n + 1) / 2);
    CHECK(tt_maxdiff(a, c) > 0);
    /* eval and p = 0 return the input itself; p = 1 zeros */
    cg_tensor *e = cg_dropout(x, 0.3, false), *z = cg_dropout(x, 0.0, true), *one = cg_dropout(x, 1.0, true);
    CHECK(e == x && z == x);
    double mx = 0;
    for (int64_t i = 0; i < n; i += 997) mx = fmax(mx, fabs(tt_get(one, i)));
    CHECK(mx == 0);
    /* backward: the same mask */
    int64_t sm = 64;
    cg_tensor *xs = tt_rand(CG_DTYPE_F64, 1, &sm, 0.5, 1.5, 2);
    cg_tensor_set_requires_grad(xs, true);
    cg_tensor *d = cg_dropout(xs, 0.5, true), *sum = cg_sum(d, 0, NULL, false);
    CHECK_OK(cg_backward(sum, NULL, false, false));
    cg_tensor *g = cg_tensor_grad(xs);
    for (int64_t i = 0; i < sm; i++)
        CHECK_NEAR(tt_get(g, i), tt_get(d, i) == 0 ? 0.0 : 2.0, 1e-12);
    /* errors */
    CHECK_ERR(cg_dropout(x, 1.5, true) == NULL, CG_ERR_VALUE, "between 0 and 1");
    cg_tensor *xi = cg_zeros(1, &n, CG_DTYPE_I64, cg_cpu());
    CHECK_ERR(cg_dropout(xi, 0.5, true) == NULL, CG_ERR_DTYPE, "int64");
    CHECK_ERR(cg_feature_dropout(x, 0.5, true) == NULL, CG_ERR_SHAPE, "at least 2 dims");
    RELEASE(x, a, b, c, e, z, one, xs, d, sum, xi);
}

typedef struct drop_ctx {
    int kind;
    double p;
} drop_ctx;

static cg_tensor *f_drop(cg_tensor *const *in, void *p) {
    drop_ctx *c = p;
    cg_manual_seed(123); /* the same mask on every evaluation */
    if (c->kind == 0) return cg_dropout(in[0], c->p, true);
    if (c->kind == 1) return cg_feature_dropout(in[0], c->p, true);
    return cg_alpha_dropout(in[0], c->p, true);
}

TEST(nn_dropout_variants) {
    int64_t sh[3] = {4, 6, 5};
    cg_tensor *x = tt_rand(CG_DTYPE_F64, 3, sh, 0.5, 1.5, 3);
    drop_ctx fc = {1, 0.5};
    cg_tensor *f = f_drop(&x, &fc);
    int dropped = 0;
    for (int64_t nc = 0; nc < 24; nc++) { /* whole channels: all zero or all scaled */
        int z = 0;
        for (int k = 0; k < 5; k++) z += tt_get(f, nc * 5 + k) == 0;
        CHECK(z == 0 || z == 5);
        if (z == 0)
            for (int k = 0; k < 5; k++) CHECK_NEAR(tt_get(f, nc * 5 + k), 2 * tt_get(x, nc * 5 + k), 1e-12);
        dropped += z == 5;
    }
    CHECK(dropped > 0 && dropped < 24);
    /* alpha dropout: kept a*x + alpha*a*p, dropped -alpha*a + alpha*a*p */
    const double alpha = 1.7580993408473766, p = 0.2, a = 1 / sqrt((alpha * alpha * p + 1) * (1 - p));
    drop_ctx ac = {2, p};
    cg_tensor *al = f_drop(&x, &ac);
    for (int64_t i = 0; i < 120; i++) {
        double v = tt_get(al, i), kept = a * tt_get(x, i) + alpha * a * p, drop = -alpha * a + alpha * a * p;
        CHECK(fabs(v - kept) < 1e-12 || fabs(v - drop) < 1e-12);
    }
    cg_tensor_set_requires_grad(x, true);
    for (int k = 0; k < 3; k++) {
        drop_ctx c = {k, 0.4};
        CHECK_MSG(tt_gradcheck(f_drop, &c, 1, &x, 1e-6, 1e-7, 1e-5), "dropout %d gradcheck", k);
        CHECK_MSG(tt_gradgradcheck(f_drop, &c, 1, &x, 1e-6, 1e-6, 1e-4), "dropout %d gradgradcheck", k);
    }
    RELEASE(x, f, al);
}

/* ------------------------------------------------------------- embedding, one_hot */

/* padding_idx -1: a padding row has no gradient by design, which finite
 * differences would see */
static cg_tensor *f_emb(cg_tensor *const *in, void *p) { return cg_embedding(in[0], (cg_tensor *)p, -1); }

TEST(nn_embedding) {
    int64_t wsh[2] = {5, 3}, ish[2] = {2, 3}, iv[6] = {0, 1, 4, 1, 1, 3};
    cg_tensor *w = tt_rand(CG_DTYPE_F64, 2, wsh, -1, 1, 5), *idx = cg_from_data(iv, 2, ish, CG_DTYPE_I64);
    cg_tensor *wn = tt_noncontig(w);
    cg_tensor *r = cg_embedding(wn, idx, -1);
    double ref[18];
    for (int i = 0; i < 6; i++)
        for (int d = 0; d < 3; d++) ref[i * 3 + d] = tt_get(w, iv[i] * 3 + d);
    check_close(r, ref, 18, 0, "embedding");
    CHECK(r && cg_tensor_ndim(r) == 3 && cg_tensor_shape(r)[2] == 3);
    cg_tensor_release(r);
    /* gradient: rows accumulate, padding row 1 gets none */
    cg_tensor_set_requires_grad(w, true);
    r = cg_embedding(w, idx, 1);
    check_close(r, ref, 18, 0, "embedding padding forward");
    cg_tensor *s = cg_sum(r, 0, NULL, false);
    CHECK_OK(cg_backward(s, NULL, false, false));
    double cnt[5] = {1, 0, 0, 1, 1}, gref[15];
    for (int v = 0; v < 5; v++)
        for (int d = 0; d < 3; d++) gref[v * 3 + d] = cnt[v];
    check_close(cg_tensor_grad(w), gref, 15, 0, "embedding grad");
    CHECK(strcmp(cg_node_name(cg_tensor_grad_fn(r)), "EmbeddingBackward0") == 0);
    CHECK(tt_gradcheck(f_emb, idx, 1, &w, 1e-6, 1e-7, 1e-5));
    CHECK(tt_gradgradcheck(f_emb, idx, 1, &w, 1e-6, 1e-6, 1e-4));
    RELEASE(r, s);
    /* f32 and 0-d / empty indices */
    cg_tensor *w32 = cg_to_dtype(w, CG_DTYPE_F32), *i0 = cg_scalar(4, CG_DTYPE_I64);
    r = cg_embedding(w32, i0, -1);
    CHECK(r && cg_tensor_ndim(r) == 1);
    check_close(r, ref + 6, 3, 1e-6, "embedding 0-d");
    cg_tensor_release(r);
    int64_t z = 0;
    cg_tensor *ie = cg_zeros(1, &z, CG_DTYPE_I64, cg_cpu());
    r = cg_embedding(w32, ie, -1);
    CHECK(r && cg_tensor_numel(r) == 0 && cg_tensor_ndim(r) == 2);
    cg_tensor_release(r);
    /* errors */
    int64_t bad[2] = {0, 9};
    int64_t two = 2;
    cg_tensor *ib = cg_from_data(bad, 1, &two, CG_DTYPE_I64), *fi = cg_zeros(1, &two, CG_DTYPE_F32, cg_cpu());
    CHECK_ERR(cg_embedding(w, ib, -1) == NULL, CG_ERR_INDEX, "index 9 is out of range");
    CHECK_ERR(cg_embedding(w, fi, -1) == NULL, CG_ERR_DTYPE, "int64 or int32");
    CHECK_ERR(cg_embedding(fi, idx, -1) == NULL, CG_ERR_SHAPE, "2-D");
    CHECK_ERR(cg_embedding(w, idx, 5) == NULL, CG_ERR_INDEX, "padding_idx");
    /* renorm_: rows 0 and 2 referenced; only those above max_norm shrink */
    double wv[6] = {3, 4, 0.3, 0.4, 6, 8};
    int64_t w2s[2] = {3, 2}, rv[3] = {0, 2, 0}, three = 3;
    cg_tensor *w2 = tt_tensor(CG_DTYPE_F64, 2, w2s, wv), *ri = cg_from_data(rv, 1, &three, CG_DTYPE_I64);
    uint64_t ver = cg_tensor_version(w2);
    CHECK_OK(cg_embedding_renorm_(w2, ri, 1.0, 2.0));
    CHECK(cg_tensor_version(w2) > ver);
    double s0 = 1 / (5 + 1e-7), s2 = 1 / (10 + 1e-7);
    double wref[6] = {3 * s0, 4 * s0, 0.3, 0.4, 6 * s2, 8 * s2};
    check_close(w2, wref, 6, 1e-12, "embedding_renorm_");
    CHECK_ERR(cg_embedding_renorm_(w2, ib, 1.0, 2.0) != CG_OK, CG_ERR_INDEX, "out of range");
    RELEASE(w, idx, wn, w32, i0, ie, ib, fi, w2, ri);
}

TEST(nn_one_hot) {
    int64_t sh[2] = {2, 2}, v[4] = {0, 3, 1, 3};
    cg_tensor *i = cg_from_data(v, 2, sh, CG_DTYPE_I64);
    for (int k = 0; k < 2; k++) {
        int64_t nc = k ? 6 : -1, C = k ? 6 : 4;
        cg_tensor *r = cg_one_hot(i, nc);
        CHECK(r && cg_tensor_dtype(r) == CG_DTYPE_I64 && cg_tensor_ndim(r) == 3 && cg_tensor_shape(r)[2] == C);
        double ref[24];
        for (int64_t e = 0; e < 4; e++)
            for (int64_t c = 0; c < C; c++) ref[e * C + c] = v[e] == c;
        check_close(r, ref, 4 * C, 0, "one_hot");
        cg_tensor_release(r);
    }
    CHECK_ERR(cg_one_hot(i, 3) == NULL, CG_ERR_INDEX, "smaller than num_classes");
    int64_t neg = -2, one = 1, zero = 0;
    cg_tensor *n = cg_from_data(&neg, 1, &one, CG_DTYPE_I64), *e = cg_zeros(1, &zero, CG_DTYPE_I64, cg_cpu());
    CHECK_ERR(cg_one_hot(n, 3) == NULL, CG_ERR_INDEX, "non-negative");
    CHECK_ERR(cg_one_hot(e, -1) == NULL, CG_ERR_VALUE, "empty");
    cg_tensor *f = cg_zeros(1, &one, CG_DTYPE_F32, cg_cpu());
    CHECK_ERR(cg_one_hot(f, 3) == NULL, CG_ERR_DTYPE, "int64");
    RELEASE(i, n, e, f);
}

/* ------------------------------------------------------------- attention */

typedef struct sdpa_ctx {
    cg_tensor *mask;
    bool causal;
    double scale;
} sdpa_ctx;

static cg_tensor *f_sdpa(cg_tensor *const *in, void *p) {
    sdpa_ctx *c = p;
    return cg_scaled_dot_product_attention(in[0], in[1], in[2], c->mask, 0.0, c->causal, c->scale);
}

/* q (B, L, E), k (B, S, E), v (B, S, Ev); mask (L, S): kind 0 none, 1 bool, 2 additive */
static void sdpa_ref(cg_tensor *q, cg_tensor *k, cg_tensor *v, cg_tensor *m, int kind, bool causal, double scale,
                     int64_t B, int64_t L, int64_t S, int64_t E, int64_t Ev, double *out) {
    for (int64_t b = 0; b < B; b++)
        for (int64_t i = 0; i < L; i++) {
            double s[8], mx = -INFINITY, tot = 0;
            for (int64_t j = 0; j < S; j++) {
                double d = 0;
                for (int64_t e = 0; e < E; e++) d += tt_get(q, (b * L + i) * E + e) * tt_get(k, (b * S + j) * E + e);
                d *= scale;
                if (causal && j > i) d = -INFINITY;
                if (kind == 1 && tt_get(m, i * S + j) == 0) d = -INFINITY;
                if (kind == 2) d += tt_get(m, i * S + j);
                s[j] = d;
                mx = fmax(mx, d);
            }
            for (int64_t j = 0; j < S; j++) tot += s[j] = isinf(mx) ? 0 : exp(s[j] - mx);
            for (int64_t e = 0; e < Ev; e++) {
                double acc = 0;
                for (int64_t j = 0; j < S; j++) acc += tot > 0 ? s[j] / tot * tt_get(v, (b * S + j) * Ev + e) : 0;
                out[(b * L + i) * Ev + e] = acc;
            }
        }
}

TEST(nn_sdpa) {
    int64_t B = 2, L = 3, S = 4, E = 2, Ev = 3;
    int64_t qs[3] = {B, L, E}, ks[3] = {B, S, E}, vs[3] = {B, S, Ev}, ms[2] = {L, S};
    cg_tensor *q = tt_rand(CG_DTYPE_F64, 3, qs, -1, 1, 11), *k = tt_rand(CG_DTYPE_F64, 3, ks, -1, 1, 12),
              *v = tt_rand(CG_DTYPE_F64, 3, vs, -1, 1, 13);
    double bm[12] = {1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 0, 1}; /* row 1 fully masked */
    cg_tensor *mb = tt_tensor(CG_DTYPE_BOOL, 2, ms, bm), *mf = tt_rand(CG_DTYPE_F64, 2, ms, -1, 1, 14);
    double out[24];
    struct { cg_tensor *m; int kind; bool causal; double scale; } cases[4] = {
        {NULL, 0, false, 0}, {mb, 1, false, 0.7}, {mf, 2, false, 0}, {NULL, 0, true, 0}};
    for (int c = 0; c < 4; c++) {
        double sc = cases[c].scale > 0 ? cases[c].scale : 1 / sqrt((double)E);
        sdpa_ref(q, k, v, cases[c].m, cases[c].kind, cases[c].causal, sc, B, L, S, E, Ev, out);
        sdpa_ctx ctx = {cases[c].m, cases[c].causal, cases[c].scale};
        cg_tensor *in[3] = {q, k, v};
        cg_tensor *r = f_sdpa(in, &ctx);
        char what[32];
        snprintf(what, sizeof what, "sdpa case %d", c);
        check_close(r, out, B * L * Ev, 1e-12, what);
        cg_tensor_release(r);
        for (int i = 0; i < 3; i++) cg_tensor_set_requires_grad(in[i], true);
        CHECK_MSG(tt_gradcheck(f_sdpa, &ctx, 3, in, 1e-6, 1e-7, 1e-5), "sdpa case %d gradcheck", c);
        CHECK_MSG(tt_gradgradcheck(f_sdpa, &ctx, 3, in, 1e-6, 1e-6, 1e-4), "sdpa case %d gradgradcheck", c);
        for (int i = 0; i < 3; i++) cg_tensor_set_requires_grad(in[i], false);
    }
    CHECK_ERR(cg_scaled_dot_product_attention(q, q, v, NULL, 0, false, 0) == NULL, CG_ERR_SHAPE, "expected query");
    CHECK_ERR(cg_scaled_dot_product_attention(q, k, v, mb, 0, true, 0) == NULL, CG_ERR_VALUE, "is_causal");
    cg_tensor *m32 = cg_to_dtype(mf, CG_DTYPE_F32);
    CHECK_ERR(cg_scaled_dot_product_attention(q, k, v, m32, 0, false, 0) == NULL, CG_ERR_DTYPE, "attn_mask");
    RELEASE(q, k, v, mb, mf, m32);
}

/* ------------------------------------------------------------- pad */

typedef struct pad_ctx {
    int npad;
    int64_t pads[4];
    cg_pad_mode mode;
} pad_ctx;

static cg_tensor *f_pad(cg_tensor *const *in, void *p) {
    pad_ctx *c = p;
    return cg_pad(in[0], c->npad, c->pads, c->mode, 0.5);
}

static int64_t ref_src(cg_pad_mode m, int64_t i, int64_t n) {
    if (m == CG_PAD_REFLECT) return i < 0 ? -i : (i >= n ? 2 * n - 2 - i : i);
    if (m == CG_PAD_REPLICATE) return i < 0 ? 0 : (i >= n ? n - 1 : i);
    return ((i % n) + n) % n;
}

TEST(nn_pad) {
    int64_t sh[3] = {2, 3, 4};
    cg_tensor *x = tt_rand(CG_DTYPE_F64, 3, sh, -1, 1, 21);
    pad_ctx cases[6] = {{4, {1, 2, 0, 1}, CG_PAD_CONSTANT}, {4, {-1, 2, 1, -1}, CG_PAD_CONSTANT},
                        {4, {2, 3, 2, 1}, CG_PAD_REFLECT},   {4, {3, 1, 0, 2}, CG_PAD_REPLICATE},
                        {4, {4, 2, 3, 1}, CG_PAD_CIRCULAR},  {2, {-1, 2, 0, 0}, CG_PAD_REPLICATE}};
    for (int c = 0; c < 6; c++) {
        pad_ctx *pc = &cases[c];
        int64_t l1 = pc->pads[0], r1 = pc->pads[1], l2 = pc->npad > 2 ? pc->pads[2] : 0, r2 = pc->npad > 2 ? pc->pads[3] : 0;
        int64_t H = 3 + l2 + r2, W = 4 + l1 + r1;
        double ref[2 * 16 * 16];
        for (int64_t n = 0; n < 2; n++)
            for (int64_t h = 0; h < H; h++)
                for (int64_t w = 0; w < W; w++) {
                    int64_t sh_ = h - l2, sw = w - l1;
                    double v;
                    if (pc->mode == CG_PAD_CONSTANT)
                        v = sh_ >= 0 && sh_ < 3 && sw >= 0 && sw < 4 ? tt_get(x, (n * 3 + sh_) * 4 + sw) : 0.5;
                    else v = tt_get(x, (n * 3 + ref_src(pc->mode, sh_, 3)) * 4 + ref_src(pc->mode, sw, 4));
                    ref[(n * H + h) * W + w] = v;
                }
        cg_tensor *r = f_pad(&x, pc);
        char what[32];
        snprintf(what, sizeof what, "pad case %d", c);
        check_close(r, ref, 2 * H * W, 0, what);
        if (r) CHECK(cg_tensor_shape(r)[1] == H && cg_tensor_shape(r)[2] == W);
        cg_tensor_release(r);
        cg_tensor *nc = tt_noncontig(x);
        cg_tensor_set_requires_grad(nc, true);
        CHECK_MSG(tt_gradcheck(f_pad, pc, 1, &nc, 1e-6, 1e-7, 1e-5), "pad case %d gradcheck", c);
        CHECK_MSG(tt_gradgradcheck(f_pad, pc, 1, &nc, 1e-6, 1e-6, 1e-4), "pad case %d gradgradcheck", c);
        cg_tensor_release(nc);
    }
    /* integer input, no pads (a copy) */
    cg_tensor *xi = cg_ones(3, sh, CG_DTYPE_I64, cg_cpu());
    int64_t p2[2] = {1, 1};
    cg_tensor *ri = cg_pad(xi, 2, p2, CG_PAD_CONSTANT, 7), *r0 = cg_pad(x, 0, NULL, CG_PAD_REFLECT, 0);
    CHECK(ri && cg_tensor_shape(ri)[2] == 6 && tt_get(ri, 0) == 7 && tt_get(ri, 1) == 1);
    CHECK(r0 && cg_tensor_storage_id(r0) != cg_tensor_storage_id(x) && tt_maxdiff(r0, x) == 0);
    int64_t big[2] = {4, 0}, odd[3] = {1, 1, 1}, neg[2] = {-3, -2};
    CHECK_ERR(cg_pad(x, 2, big, CG_PAD_REFLECT, 0) == NULL, CG_ERR_VALUE, "less than the corresponding input dimension");
    CHECK_ERR(cg_pad(x, 3, odd, CG_PAD_CONSTANT, 0) == NULL, CG_ERR_VALUE, "even");
    CHECK_ERR(cg_pad(x, 2, neg, CG_PAD_CONSTANT, 0) == NULL, CG_ERR_SHAPE, "negative size");
    int64_t circ[2] = {5, 0};
    CHECK_ERR(cg_pad(x, 2, circ, CG_PAD_CIRCULAR, 0) == NULL, CG_ERR_VALUE, "circular");
    RELEASE(x, xi, ri, r0);
}

/* ------------------------------------------------------------- interpolate */

typedef struct interp_ctx {
    cg_interp_mode mode;
    int64_t size[2];
    double sf[2];
    bool use_sf, align;
} interp_ctx;

static cg_tensor *f_interp(cg_tensor *const *in, void *p) {
    interp_ctx *c = p;
    return cg_interpolate(in[0], c->mode, c->use_sf ? NULL : c->size, c->use_sf ? c->sf : NULL, c->align);
}

static double cubic_w(double t, int k) {
    const double A = -0.75;
    double x = k == 0 ? t + 1 : k == 1 ? t : k == 2 ? 1 - t : 2 - t;
    return x <= 1 ? ((A + 2) * x - (A + 3)) * x * x + 1 : ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
}

/* direct 2-D reference of PyTorch's upsample kernels on x (H, W) */
static double interp_ref(const double *x, int64_t H, int64_t W, int64_t oh, int64_t ow, const interp_ctx *c,
                         int64_t i, int64_t j) {
    double sc[2];
    int64_t in[2] = {H, W}, out[2] = {oh, ow}, o[2] = {i, j};
    double src[2];
    for (int d = 0; d < 2; d++) {
        if (c->align) sc[d] = out[d] > 1 ? (double)(in[d] - 1) / (double)(out[d] - 1) : 0;
        else sc[d] = c->use_sf ? 1 / c->sf[d] : (double)in[d] / (double)out[d];
        src[d] = c->align ? sc[d] * (double)o[d] : sc[d] * ((double)o[d] + 0.5) - 0.5;
    }
    if (c->mode == CG_INTERP_NEAREST) {
        int64_t a = (int64_t)floor((double)i * sc[0]), b = (int64_t)floor((double)j * sc[1]);
        return x[(a < H - 1 ? a : H - 1) * W + (b < W - 1 ? b : W - 1)];
    }
    if (c->mode == CG_INTERP_LINEAR) {
        double r = 0;
        for (int d = 0; d < 2; d++) src[d] = src[d] < 0 ? 0 : src[d];
        int64_t a0 = (int64_t)src[0], b0 = (int64_t)src[1];
        int64_t a1 = a0 + (a0 < H - 1), b1 = b0 + (b0 < W - 1);
        double la = src[0] - (double)a0, lb = src[1] - (double)b0;
        r += (1 - la) * (1 - lb) * x[a0 * W + b0] + (1 - la) * lb * x[a0 * W + b1];
        r += la * (1 - lb) * x[a1 * W + b0] + la * lb * x[a1 * W + b1];
        return r;
    }
    double fa = floor(src[0]), fb = floor(src[1]), r = 0;
    for (int p = 0; p < 4; p++)
        for (int q = 0; q < 4; q++) {
            int64_t a = (int64_t)fa - 1 + p, b = (int64_t)fb - 1 + q;
            a = a < 0 ? 0 : a > H - 1 ? H - 1 : a;
            b = b < 0 ? 0 : b > W - 1 ? W - 1 : b;
            r += cubic_w(src[0] - fa, p) * cubic_w(src[1] - fb, q) * x[a * W + b];
        }
    return r;
}

TEST(nn_interpolate) {
    int64_t sh[4] = {1, 2, 3, 4};
    cg_tensor *x = tt_rand(CG_DTYPE_F64, 4, sh, -1, 1, 31);
    double xs[24];
    for (int i = 0; i < 24; i++) xs[i] = tt_get(x, i);
    interp_ctx cases[8] = {
        {CG_INTERP_NEAREST, {5, 7}, {0, 0}, false, false}, {CG_INTERP_NEAREST, {0, 0}, {1.5, 0.5}, true, false},
        {CG_INTERP_LINEAR, {5, 7}, {0, 0}, false, false},  {CG_INTERP_LINEAR, {5, 3}, {0, 0}, false, true},
        {CG_INTERP_LINEAR, {0, 0}, {2.0, 1.7}, true, false}, {CG_INTERP_BICUBIC, {5, 6}, {0, 0}, false, false},
        {CG_INTERP_BICUBIC, {4, 2}, {0, 0}, false, true},  {CG_INTERP_BICUBIC, {0, 0}, {1.5, 2.5}, true, false}};
    for (int c = 0; c < 8; c++) {
        interp_ctx *ic = &cases[c];
        int64_t oh = ic->use_sf ? (int64_t)floor(3 * ic->sf[0]) : ic->size[0];
        int64_t ow = ic->use_sf ? (int64_t)floor(4 * ic->sf[1]) : ic->size[1];
        double ref[2 * 16 * 16];
        for (int ch = 0; ch < 2; ch++)
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++) ref[(ch * oh + i) * ow + j] = interp_ref(xs + ch * 12, 3, 4, oh, ow, ic, i, j);
        cg_tensor *r = f_interp(&x, ic);
        char what[32];
        snprintf(what, sizeof what, "interpolate case %d", c);
        check_close(r, ref, 2 * oh * ow, 1e-12, what);
        cg_tensor *nc = tt_noncontig(x);
        cg_tensor_set_requires_grad(nc, true);
        CHECK_MSG(tt_gradcheck(f_interp, ic, 1, &nc, 1e-6, 1e-7, 1e-5), "interpolate case %d gradcheck", c);
        CHECK_MSG(tt_gradgradcheck(f_interp, ic, 1, &nc, 1e-6, 1e-6, 1e-4), "interpolate case %d gradgradcheck", c);
        RELEASE(r, nc);
    }
    /* 1-D linear (3-D input) in float32 */
    int64_t s3[3] = {1, 1, 4}, o3 = 8;
    cg_tensor *x3 = tt_rand(CG_DTYPE_F32, 3, s3, -1, 1, 32);
    cg_tensor *r3 = cg_interpolate(x3, CG_INTERP_LINEAR, &o3, NULL, false);
    double ref3[8];
    for (int64_t j = 0; j < 8; j++) {
        double s = fmax(0.5 * ((double)j + 0.5) - 0.5, 0);
        int64_t a = (int64_t)s, b = a + (a < 3);
        ref3[j] = (1 - (s - (double)a)) * tt_get(x3, a) + (s - (double)a) * tt_get(x3, b);
    }
    check_close(r3, ref3, 8, 1e-6, "linear 1-D");
    int64_t sz[2] = {2, 2};
    CHECK_ERR(cg_interpolate(x3, CG_INTERP_BICUBIC, sz, NULL, false) == NULL, CG_ERR_SHAPE, "bicubic");
    CHECK_ERR(cg_interpolate(x, CG_INTERP_NEAREST, sz, NULL, true) == NULL, CG_ERR_VALUE, "align_corners");
    CHECK_ERR(cg_interpolate(x, CG_INTERP_LINEAR, NULL, NULL, false) == NULL, CG_ERR_VALUE, "exactly one");
    int64_t zs[2] = {0, 2};
    CHECK_ERR(cg_interpolate(x, CG_INTERP_LINEAR, zs, NULL, false) == NULL, CG_ERR_VALUE, "positive");
    cg_tensor *xi = cg_zeros(4, sh, CG_DTYPE_I64, cg_cpu());
    CHECK_ERR(cg_interpolate(xi, CG_INTERP_LINEAR, sz, NULL, false) == NULL, CG_ERR_DTYPE, "int64");
    cg_tensor *ni = cg_interpolate(xi, CG_INTERP_NEAREST, sz, NULL, false);
    CHECK(ni && cg_tensor_dtype(ni) == CG_DTYPE_I64);
    RELEASE(x, x3, r3, xi, ni);
}

/* uint8 bilinear / bicubic: PyTorch's fixed-point values (Note [uint8 resampling]) */
TEST(nn_interpolate_uint8) {
    const uint8_t v[4] = {0, 100, 200, 255};
    int64_t sh[4] = {1, 1, 2, 2}, s33[2] = {3, 3}, s31[2] = {3, 1}, s3[3] = {1, 1, 4}, o1 = 3;
    cg_tensor *x = cg_from_data(v, 4, sh, CG_DTYPE_U8);
    cg_tensor *r = cg_interpolate(x, CG_INTERP_LINEAR, s33, NULL, false);
    const double want[9] = {0, 50, 100, 100, 139, 178, 200, 228, 255};
    CHECK(r && cg_tensor_dtype(r) == CG_DTYPE_U8);
    check_close(r, want, 9, 0, "uint8 bilinear");
    cg_tensor *a = cg_interpolate_aa(x, CG_INTERP_BICUBIC, s31, NULL, false);
    const double want_aa[3] = {38, 139, 240};
    check_close(a, want_aa, 3, 0, "uint8 antialiased bicubic");
    cg_tensor *x3 = cg_zeros(3, s3, CG_DTYPE_U8, cg_cpu());
    CHECK_ERR(cg_interpolate(x3, CG_INTERP_LINEAR, &o1, NULL, false) == NULL, CG_ERR_DTYPE, "uint8");
    cg_tensor *xf = cg_zeros(4, sh, CG_DTYPE_F32, cg_cpu());
    CHECK_ERR(cg_interpolate_aa(xf, CG_INTERP_LINEAR, s33, NULL, false) == NULL, CG_ERR_DTYPE, "antialias");
    CHECK_ERR(cg_interpolate_aa(x, CG_INTERP_NEAREST, s33, NULL, false) == NULL, CG_ERR_VALUE, "antialias");
    RELEASE(x, r, a, x3, xf);
}

/* ------------------------------------------------------------- pixel shuffle */

static cg_tensor *f_ps(cg_tensor *const *in, void *p) {
    (void)p;
    return cg_pixel_shuffle(in[0], 2);
}

TEST(nn_pixel_shuffle) {
    int64_t sh[4] = {2, 8, 2, 3}, r = 2;
    cg_tensor *x = tt_rand(CG_DTYPE_F64, 4, sh, -1, 1, 41);
    cg_tensor *y = cg_pixel_shuffle(x, r);
    CHECK(y && cg_tensor_shape(y)[1] == 2 && cg_tensor_shape(y)[2] == 4 && cg_tensor_shape(y)[3] == 6);
    double ref[96];
    for (int64_t n = 0; n < 2; n++)
        for (int64_t c = 0; c < 2; c++)
            for (int64_t h = 0; h < 4; h++)
                for (int64_t w = 0; w < 6; w++) {
                    int64_t ic = c * 4 + (h % 2) * 2 + (w % 2);
                    ref[((n * 2 + c) * 4 + h) * 6 + w] = tt_get(x, ((n * 8 + ic) * 2 + h / 2) * 3 + w / 2);
                }
    check_close(y, ref, 96, 0, "pixel_shuffle");
    cg_tensor *back = cg_pixel_unshuffle(y, r);
    CHECK(tt_maxdiff(back, x) == 0);
    cg_tensor_set_requires_grad(x, true);
    CHECK(tt_gradcheck(f_ps, NULL, 1, &x, 1e-6, 1e-7, 1e-5));
    CHECK(tt_gradgradcheck(f_ps, NULL, 1, &x, 1e-6, 1e-6, 1e-4));
    CHECK_ERR(cg_pixel_shuffle(x, 3) == NULL, CG_ERR_VALUE, "divisible");
    CHECK_ERR(cg_pixel_unshuffle(x, 2) == NULL, CG_ERR_VALUE, "divisible");
    int64_t two[2] = {2, 2};
    cg_tensor *x2 = cg_zeros(2, two, CG_DTYPE_F32, cg_cpu());
    CHECK_ERR(cg_pixel_shuffle(x2, 2) == NULL, CG_ERR_SHAPE, "(*, C, H, W)");
    RELEASE(x, y, back, x2);
}

/* ------------------------------------------------------------- meta device */

TEST(nn_meta_shapes) {
    int64_t sh[4] = {2, 4, 3, 3}, C = 4, ts[3] = {2, 3, 3}, e2[2] = {5, 3};
    cg_tensor *x = cg_empty(4, sh, CG_DTYPE_F32, cg_meta()), *t = cg_empty(3, ts, CG_DTYPE_I64, cg_meta());
    cg_tensor *w = cg_empty(1, &C, CG_DTYPE_F32, cg_meta()), *emb = cg_empty(2, e2, CG_DTYPE_F32, cg_meta());
    cg_tensor *r[6];
    r[0] = cg_cross_entropy(x, t, w, -100, 0.1, CG_REDUCTION_NONE);
    r[1] = cg_batch_norm(x, NULL, NULL, w, w, true, 0.1, 1e-5);
    int64_t ns[2] = {3, 3}, pads[4] = {1, 1, 2, 2};
    r[2] = cg_layer_norm(x, 2, ns, NULL, NULL, 1e-5);
    r[3] = cg_dropout(x, 0.5, true);
    r[4] = cg_embedding(emb, t, -1);
    r[5] = cg_pad(x, 4, pads, CG_PAD_REFLECT, 0);
    int64_t want_nd[6] = {3, 4, 4, 4, 4, 4};
    for (int i = 0; i < 6; i++) {
        CHECK_MSG(r[i] && cg_device_eq(cg_tensor_device(r[i]), cg_meta()) && cg_tensor_ndim(r[i]) == want_nd[i],
                  "meta op %d: %s", i, r[i] ? "wrong result" : cg_last_error_message());
        cg_tensor_release(r[i]);
    }
    RELEASE(x, t, w, emb);
}
