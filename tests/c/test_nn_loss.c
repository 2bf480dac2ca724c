/* test_nn_loss.c — losses (cross_entropy with class indices / probabilities,
 * weights, ignore_index and label smoothing; nll_loss; mse / l1 / smooth_l1 /
 * huber; binary cross-entropy with and without logits; kl_div) and
 * cosine_similarity / pairwise_distance against float64 reference loops,
 * every reduction, gradcheck + gradgradcheck, and error cases. */
#include "test.h"

#include <stdlib.h>
#include <string.h>

static const cg_reduction k_reds[3] = {CG_REDUCTION_NONE, CG_REDUCTION_MEAN, CG_REDUCTION_SUM};

/* r matches ref (n values; a reduced result has one) within tol */
static void check_vals(cg_tensor *r, const double *ref, int64_t n, double tol, const char *what) {
    CHECK_MSG(r != NULL, "%s: NULL (%s)", what, cg_last_error_message());
    if (!r) return;
    CHECK_MSG(cg_tensor_numel(r) == n, "%s: numel %lld, expected %lld", what, (long long)cg_tensor_numel(r),
              (long long)n);
    if (cg_tensor_numel(r) != n) return;
    for (int64_t i = 0; i < n; i++) {
        double v = tt_get(r, i);
        CHECK_MSG(fabs(v - ref[i]) <= tol * (1 + fabs(ref[i])) || (isnan(v) && isnan(ref[i])),
                  "%s[%lld] = %.10g, expected %.10g", what, (long long)i, v, ref[i]);
    }
}

/* reduce an elementwise reference (n values) as the loss would */
static double red_ref(const double *l, int64_t n, cg_reduction r) {
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += l[i];
    return r == CG_REDUCTION_MEAN ? s / (double)n : s;
}

static cg_tensor *longs(int nd, const int64_t *sh, const int64_t *v) { return cg_from_data(v, nd, sh, CG_DTYPE_I64); }

/* ------------------------------------------------------------- cross entropy, class targets */

/* x (N, C, D) flattened row-major as in the tensor; t (N, D). */
static void ce_ref(const double *x, const int64_t *t, const double *w, int64_t N, int64_t C, int64_t D, int64_t ign,
                   double ls, bool logits, cg_reduction red, double *out, int64_t *nout) {
    double tot_n = 0, tot_s = 0, wsum = 0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t d = 0; d < D; d++) {
            double lp[16], m = -INFINITY, s = 0;
            for (int64_t c = 0; c < C; c++) m = fmax(m, x[(n * C + c) * D + d]);
            for (int64_t c = 0; c < C; c++) s += exp(x[(n * C + c) * D + d] - m);
            for (int64_t c = 0; c < C; c++) lp[c] = logits ? x[(n * C + c) * D + d] - m - log(s) : x[(n * C + c) * D + d];
            int64_t tt = t[n * D + d];
            double li = 0;
            if (tt != ign) {
                double wt = w ? w[tt] : 1, sm = 0;
                for (int64_t c = 0; c < C; c++) sm -= (w ? w[c] : 1) * lp[c];
                li = (1 - ls) * (-wt * lp[tt]) + ls / (double)C * sm;
                tot_n += -wt * lp[tt];
                tot_s += sm;
                wsum += wt;
            }
            out[n * D + d] = li;
        }
    if (red == CG_REDUCTION_NONE) {
        *nout = N * D;
        return;
    }
    double r = (1 - ls) * tot_n + ls / (double)C * tot_s;
    out[0] = red == CG_REDUCTION_MEAN ? r / wsum : r;
    *nout = 1;
}

static void check_ce_case(cg_dtype dt, int nd, const int64_t *sh, const int64_t *tv, bool weighted, int64_t ign,
                          double ls, bool nll, double tol) {
    int64_t N = nd == 1 ? 1 : sh[0], C = nd == 1 ? sh[0] : sh[1], D = 1;
    for (int k = 2; k < nd; k++) D *= sh[k];
    cg_tensor *x = tt_rand(dt, nd, sh, -2, 2, 11 + (unsigned)nd);
    int64_t tsh[CG_MAX_DIMS];
    int tnd = nd - 1;
    if (nd >= 2) {
        tsh[0] = sh[0];
        for (int k = 2; k < nd; k++) tsh[k - 1] = sh[k];
    }
    cg_tensor *t = longs(tnd, tsh, tv);
    cg_tensor *w = weighted ? tt_rand(dt, 1, &C, 0.2, 2, 5) : NULL;
    double xs[256], ws[16], ref[256];
    for (int64_t i = 0; i < cg_tensor_numel(x); i++) xs[i] = tt_get(x, i);
    for (int64_t i = 0; w && i < C; i++) ws[i] = tt_get(w, i);
    for (int ri = 0; ri < 3; ri++) {
        int64_t nref;
        ce_ref(xs, tv, w ? ws : NULL, N, C, D, ign, ls, !nll, k_reds[ri], ref, &nref);
        cg_tensor *in = nll ? cg_log_softmax(x, nd == 1 ? 0 : 1) : x;
        if (nll) {
            /* nll_loss takes log-probabilities: the reference reads them from xs as given */
            for (int64_t i = 0; i < cg_tensor_numel(in); i++) xs[i] = tt_get(in, i);
            ce_ref(xs, tv, w ? ws : NULL, N, C, D, ign, 0, false, k_reds[ri], ref, &nref);
            for (int64_t i = 0; i < cg_tensor_numel(x); i++) xs[i] = tt_get(x, i);
        }
        cg_tensor *r = nll ? cg_nll_loss(in, t, w, ign, k_reds[ri])
                           : cg_cross_entropy(in, t, w, ign, ls, k_reds[ri]);
        char what[128];
        snprintf(what, sizeof what, "%s %s nd=%d w=%d ls=%g red=%d", nll ? "nll" : "ce", cg_dtype_name(dt), nd,
                 weighted, ls, ri);
        check_vals(r, ref, nref, tol, what);
        if (r && k_reds[ri] == CG_REDUCTION_NONE)
            CHECK_MSG(cg_tensor_ndim(r) == tnd, "%s: result has %d dims, expected %d", what, cg_tensor_ndim(r), tnd);
        if (r && k_reds[ri] != CG_REDUCTION_NONE) CHECK(cg_tensor_ndim(r) == 0);
        cg_tensor_release(r);
        if (nll) cg_tensor_release(in);
    }
    cg_tensor_release(x), cg_tensor_release(t), cg_tensor_release(w);
}

TEST(nn_cross_entropy_values) {
    int64_t s2[2] = {4, 5}, t2[4] = {0, 3, -100, 4};
    int64_t s3[3] = {2, 3, 4}, t3[8] = {0, 1, 2, 2, 1, 7, 0, 1}; /* 7 is ignore_index below */
    int64_t s1[1] = {5}, t1[1] = {2};
    for (int d = 0; d < 2; d++) {
        cg_dtype dt = d ? CG_DTYPE_F32 : CG_DTYPE_F64;
        double tol = d ? 2e-6 : 1e-12;
        for (int wgt = 0; wgt < 2; wgt++)
            for (int l = 0; l < 2; l++) {
                double ls = l ? 0.2 : 0.0;
                check_ce_case(dt, 2, s2, t2, wgt, -100, ls, false, tol);
                check_ce_case(dt, 3, s3, t3, wgt, 7, ls, false, tol);
                check_ce_case(dt, 1, s1, t1, wgt, -100, ls, false, tol);
            }
        for (int wgt = 0; wgt < 2; wgt++) {
            check_ce_case(dt, 2, s2, t2, wgt, -100, 0, true, tol);
            check_ce_case(dt, 3, s3, t3, wgt, 7, 0, true, tol);
            check_ce_case(dt, 1, s1, t1, wgt, -100, 0, true, tol);
        }
    }
    /* float16 / bfloat16 with loose tolerance */
    check_ce_case(CG_DTYPE_F16, 2, s2, t2, true, -100, 0.1, false, 2e-2);
    check_ce_case(CG_DTYPE_BF16, 2, s2, t2, false, -100, 0, false, 5e-2);
    /* every target ignored: the weighted mean is 0/0 = nan, as PyTorch */
    int64_t all_ign[4] = {-100, -100, -100, -100};
    cg_tensor *x = tt_rand(CG_DTYPE_F64, 2, s2, -1, 1, 3), *t = longs(1, s2, all_ign);
    cg_tensor *r = cg_cross_entropy(x, t, NULL, -100, 0, CG_REDUCTION_MEAN);
    double v = 0;
    CHECK_OK(cg_tensor_item(r, &v));
    CHECK(isnan(v));
    cg_tensor_release(r);
    r = cg_cross_entropy(x, t, NULL, -100, 0, CG_REDUCTION_SUM);
    CHECK_OK(cg_tensor_item(r, &v));
    CHECK(v == 0);
    cg_tensor_release(r), cg_tensor_release(x), cg_tensor_release(t);
    /* large logits stay finite (numerically stable log-softmax) */
    double big[4] = {1000, -1000, 0, 500};
    int64_t bs[2] = {1, 4}, bt[1] = {1};
    x = tt_tensor(CG_DTYPE_F32, 2, bs, big), t = longs(1, bs, bt);
    r = cg_cross_entropy(x, t, NULL, -100, 0, CG_REDUCTION_SUM);
    CHECK_OK(cg_tensor_item(r, &v));
    CHECK_NEAR(v, 2000.0, 1e-3);
    cg_tensor_release(r), cg_tensor_release(x), cg_tensor_release(t);
}

/* ------------------------------------------------------------- probability targets */

TEST(nn_cross_entropy_prob_targets) {
    int64_t sh[3] = {2, 3, 2}, C = 3;
    cg_tensor *x = tt_rand(CG_DTYPE_F64, 3, sh, -2, 2, 21), *p = tt_rand(CG_DTYPE_F64, 3, sh, 0, 1, 22);
    cg_tensor *w = tt_rand(CG_DTYPE_F64, 1, &C, 0.5, 1.5, 23);
    for (int wg = 0; wg < 2; wg++)
        for (int l = 0; l < 2; l++)
            for (int ri = 0; ri < 3; ri++) {
                double ls = l ? 0.3 : 0, ref[4], tot = 0;
                for (int64_t n = 0; n < 2; n++)
                    for (int64_t d = 0; d < 2; d++) {
                        double m = -INFINITY, s = 0, li = 0;
                        for (int64_t c = 0; c < C; c++) m = fmax(m, tt_get(x, (n * C + c) * 2 + d));
                        for (int64_t c = 0; c < C; c++) s += exp(tt_get(x, (n * C + c) * 2 + d) - m);
                        for (int64_t c = 0; c < C; c++) {
                            double lp = tt_get(x, (n * C + c) * 2 + d) - m - log(s);
                            double tc = tt_get(p, (n * C + c) * 2 + d) * (1 - ls) + ls / (double)C;
                            li -= (wg ? tt_get(w, c) : 1) * tc * lp;
                        }
                        ref[n * 2 + d] = li;
                        tot += li;
                    }
                int64_t nref = 4;
                if (k_reds[ri] != CG_REDUCTION_NONE) ref[0] = k_reds[ri] == CG_REDUCTION_MEAN ? tot / 4 : tot, nref = 1;
                cg_tensor *r = cg_cross_entropy(x, p, wg ? w : NULL, -100, ls, k_reds[ri]);
                check_vals(r, ref, nref, 1e-12, "ce prob");
                cg_tensor_release(r);
            }
    cg_tensor_release(x), cg_tensor_release(p), cg_tensor_release(w);
}

/* ------------------------------------------------------------- gradients */

typedef struct ce_ctx {
    cg_tensor *t, *w;
    int64_t ign;
    double ls;
    cg_reduction red;
    int kind; /* 0 ce, 1 nll */
} ce_ctx;

static cg_tensor *f_ce(cg_tensor *const *in, void *p) {
    ce_ctx *c = p;
    if (c->kind == 1) return cg_nll_loss(in[0], c->t, c->w, c->ign, c->red);
    return cg_cross_entropy(in[0], c->t, c->w, c->ign, c->ls, c->red);
}

static cg_tensor *f_ce_prob(cg_tensor *const *in, void *p) {
    ce_ctx *c = p;
    return cg_cross_entropy(in[0], in[1], c->w, c->ign, c->ls, c->red);
}

TEST(nn_cross_entropy_gradients) {
    int64_t s2[2] = {3, 4}, t2[3] = {1, -100, 3}, C = 4;
    int64_t s3[3] = {2, 4, 3}, t3[6] = {0, 1, 3, 2, -100, 0};
    cg_tensor *w = tt_rand(CG_DTYPE_F64, 1, &C, 0.5, 2, 9);
    for (int shp = 0; shp < 2; shp++) {
        cg_tensor *x = shp ? tt_rand(CG_DTYPE_F64, 3, s3, -2, 2, 31) : tt_rand(CG_DTYPE_F64, 2, s2, -2, 2, 30);
        cg_tensor *t = shp ? longs(2, (int64_t[2]){2, 3}, t3) : longs(1, s2, t2);
        cg_tensor *nc = tt_noncontig(x);
        for (int ri = 0; ri < 3; ri++)
            for (int v = 0; v < 3; v++) {
                cg_tensor *in = v == 2 ? nc : x;
                cg_tensor_set_requires_grad(in, true);
                ce_ctx c = {t, v ? w : NULL, -100, v == 1 ? 0.15 : 0, k_reds[ri], 0};
                CHECK_MSG(tt_gradcheck(f_ce, &c, 1, &in, 1e-6, 1e-7, 1e-5), "ce gradcheck shape %d red %d v %d", shp,
                          ri, v);
                CHECK_MSG(tt_gradgradcheck(f_ce, &c, 1, &in, 1e-6, 1e-6, 1e-4), "ce gradgradcheck shape %d red %d v %d",
                          shp, ri, v);
                c.kind = 1;
                CHECK_MSG(tt_gradcheck(f_ce, &c, 1, &in, 1e-6, 1e-7, 1e-5), "nll gradcheck");
                CHECK_MSG(tt_gradgradcheck(f_ce, &c, 1, &in, 1e-6, 1e-6, 1e-4), "nll gradgradcheck");
            }
        cg_tensor_release(x), cg_tensor_release(t), cg_tensor_release(nc);
    }
    /* probability targets: gradient w.r.t. both input and target */
    cg_tensor *x = tt_rand(CG_DTYPE_F64, 2, s2, -2, 2, 33), *p = tt_rand(CG_DTYPE_F64, 2, s2, 0, 1, 34);
    cg_tensor_set_requires_grad(x, true);
    cg_tensor_set_requires_grad(p, true);
    cg_tensor *in[2] = {x, p};
    for (int ri = 0; ri < 3; ri++) {
        ce_ctx c = {NULL, w, -100, 0.1, k_reds[ri], 2};
        CHECK_MSG(tt_gradcheck(f_ce_prob, &c, 2, in, 1e-6, 1e-7, 1e-5), "ce prob gradcheck red %d", ri);
        CHECK_MSG(tt_gradgradcheck(f_ce_prob, &c, 2, in, 1e-6, 1e-6, 1e-4), "ce prob gradgradcheck red %d", ri);
    }
    cg_tensor_release(x), cg_tensor_release(p), cg_tensor_release(w);
}

TEST(nn_cross_entropy_errors) {
    int64_t s2[2] = {3, 4}, C = 4, t_ok[3] = {0, 1, 2}, t_bad[3] = {0, 7, 2}, t_neg[3] = {0, -1, 2};
    cg_tensor *x = tt_rand(CG_DTYPE_F32, 2, s2, -1, 1, 1);
    cg_tensor *t = longs(1, s2, t_ok), *tb = longs(1, s2, t_bad), *tn = longs(1, s2, t_neg);
    CHECK_ERR(cg_cross_entropy(x, tb, NULL, -100, 0, CG_REDUCTION_MEAN) == NULL, CG_ERR_INDEX, "target 7 is out of bounds");
    CHECK_ERR(cg_nll_loss(x, tn, NULL, -100, CG_REDUCTION_MEAN) == NULL, CG_ERR_INDEX, "[nll_loss] target -1");
    cg_tensor *ti = cg_to_dtype(t, CG_DTYPE_I32);
    CHECK_ERR(cg_cross_entropy(x, ti, NULL, -100, 0, CG_REDUCTION_MEAN) == NULL, CG_ERR_DTYPE, "int64");
    int64_t two = 2;
    cg_tensor *t2 = longs(1, &two, t_ok);
    CHECK_ERR(cg_cross_entropy(x, t2, NULL, -100, 0, CG_REDUCTION_MEAN) == NULL, CG_ERR_SHAPE, "[cross_entropy] input (3,4)");
    int64_t three = 3;
    cg_tensor *w3 = tt_rand(CG_DTYPE_F32, 1, &three, 0, 1, 2), *w64 = tt_rand(CG_DTYPE_F64, 1, &C, 0, 1, 2);
    CHECK_ERR(cg_cross_entropy(x, t, w3, -100, 0, CG_REDUCTION_MEAN) == NULL, CG_ERR_SHAPE, "weight");
    CHECK_ERR(cg_cross_entropy(x, t, w64, -100, 0, CG_REDUCTION_MEAN) == NULL, CG_ERR_DTYPE, "weight");
    CHECK_ERR(cg_cross_entropy(x, t, NULL, -100, 1.5, CG_REDUCTION_MEAN) == NULL, CG_ERR_VALUE, "label_smoothing");
    CHECK_ERR(cg_cross_entropy(x, t, NULL, -100, 0, (cg_reduction)7) == NULL, CG_ERR_VALUE, "reduction");
    cg_tensor *xi = cg_to_dtype(x, CG_DTYPE_I64);
    CHECK_ERR(cg_cross_entropy(xi, t, NULL, -100, 0, CG_REDUCTION_MEAN) == NULL, CG_ERR_DTYPE, "int64");
    int64_t s3[2] = {3, 5};
    cg_tensor *p = tt_rand(CG_DTYPE_F32, 2, s3, 0, 1, 3);
    CHECK_ERR(cg_cross_entropy(x, p, NULL, -100, 0, CG_REDUCTION_MEAN) == NULL, CG_ERR_SHAPE, "probability target");
    cg_tensor *s0 = cg_scalar(1, CG_DTYPE_F32), *t0 = cg_scalar(0, CG_DTYPE_I64);
    CHECK_ERR(cg_cross_entropy(s0, t0, NULL, -100, 0, CG_REDUCTION_MEAN) == NULL, CG_ERR_SHAPE, "0-d");
    CHECK_ERR(cg_cross_entropy(NULL, t, NULL, -100, 0, CG_REDUCTION_MEAN) == NULL, CG_ERR_VALUE, "NULL");
    cg_tensor *arr[] = {x, t, tb, tn, ti, t2, w3, w64, xi, p, s0, t0};
    for (size_t i = 0; i < sizeof arr / sizeof *arr; i++) cg_tensor_release(arr[i]);
}

/* ------------------------------------------------------------- pointwise losses */

enum { L_MSE, L_L1, L_SL1, L_HUBER, L_BCE, L_BCEL, L_KL, L_KLLOG };
typedef struct pw_ctx {
    int kind;
    cg_reduction red;
    double c;
    cg_tensor *w, *pw;
} pw_ctx;

static cg_tensor *f_pw(cg_tensor *const *in, void *p) {
    pw_ctx *c = p;
    switch (c->kind) {
    case L_MSE: return cg_mse_loss(in[0], in[1], c->red);
    case L_L1: return cg_l1_loss(in[0], in[1], c->red);
    case L_SL1: return cg_smooth_l1_loss(in[0], in[1], c->red, c->c);
    case L_HUBER: return cg_huber_loss(in[0], in[1], c->red, c->c);
    case L_BCE: return cg_binary_cross_entropy(in[0], in[1], c->w, c->red);
    case L_BCEL: return cg_binary_cross_entropy_with_logits(in[0], in[1], c->w, c->pw, c->red);
    case L_KL: return cg_kl_div(in[0], in[1], c->red, false);
    default: return cg_kl_div(in[0], in[1], c->red, true);
    }
}

static double r_pw(int kind, double x, double t, double c, double w, double pw) {
    double d = x - t, ad = fabs(d);
    switch (kind) {
    case L_MSE: return d * d;
    case L_L1: return ad;
    case L_SL1: return c == 0 ? ad : (ad < c ? 0.5 * d * d / c : ad - 0.5 * c);
    case L_HUBER: return ad < c ? 0.5 * d * d : c * (ad - 0.5 * c);
    case L_BCE: return -w * (t * fmax(log(x), -100) + (1 - t) * fmax(log(1 - x), -100));
    case L_BCEL: {
        double sig = 1 / (1 + exp(-x));
        return -w * (pw * t * log(sig) + (1 - t) * log(1 - sig));
    }
    case L_KL: return t > 0 ? t * (log(t) - x) : 0;
    default: return exp(t) * (t - x);
    }
}

static void check_pw(int kind, double c, double xlo, double xhi, double tlo, double thi, bool weighted,
                     const char *name) {
    int64_t sh[2] = {3, 4}, four = 4;
    for (int d = 0; d < 2; d++) {
        cg_dtype dt = d ? CG_DTYPE_F32 : CG_DTYPE_F64;
        cg_tensor *x = tt_rand(dt, 2, sh, xlo, xhi, 51), *t = tt_rand(dt, 2, sh, tlo, thi, 52);
        cg_tensor *w = weighted ? tt_rand(dt, 2, sh, 0.5, 1.5, 53) : NULL;
        cg_tensor *pw = weighted && kind == L_BCEL ? tt_rand(dt, 1, &four, 0.5, 3, 54) : NULL;
        double el[12];
        for (int64_t i = 0; i < 12; i++)
            el[i] = r_pw(kind, tt_get(x, i), tt_get(t, i), c, w ? tt_get(w, i) : 1, pw ? tt_get(pw, i % 4) : 1);
        for (int ri = 0; ri < 3; ri++) {
            pw_ctx ctx = {kind, k_reds[ri], c, w, pw};
            cg_tensor *in[2] = {x, t};
            cg_tensor *r = f_pw(in, &ctx);
            double ref[12];
            int64_t n = 12;
            if (k_reds[ri] == CG_REDUCTION_NONE) memcpy(ref, el, sizeof el);
            else ref[0] = red_ref(el, 12, k_reds[ri]), n = 1;
            char what[96];
            snprintf(what, sizeof what, "%s %s red %d", name, cg_dtype_name(dt), ri);
            check_vals(r, ref, n, d ? 1e-5 : 1e-12, what);
            cg_tensor_release(r);
            if (d == 0) { /* gradients w.r.t. input and target, non-contiguous input */
                cg_tensor *nc = tt_noncontig(x);
                cg_tensor *gi[2] = {nc, t};
                cg_tensor_set_requires_grad(nc, true);
                cg_tensor_set_requires_grad(t, true);
                CHECK_MSG(tt_gradcheck(f_pw, &ctx, 2, gi, 1e-6, 1e-7, 1e-5), "%s gradcheck red %d", name, ri);
                CHECK_MSG(tt_gradgradcheck(f_pw, &ctx, 2, gi, 1e-6, 1e-6, 1e-4), "%s gradgradcheck red %d", name, ri);
                cg_tensor_set_requires_grad(t, false);
                cg_tensor_release(nc);
            }
        }
        cg_tensor_release(x), cg_tensor_release(t), cg_tensor_release(w), cg_tensor_release(pw);
    }
}

TEST(nn_pointwise_losses) {
    check_pw(L_MSE, 0, -2, 2, -2, 2, false, "mse");
    check_pw(L_L1, 0, 0.5, 2, -2, 0, false, "l1"); /* away from the kink */
    check_pw(L_SL1, 1.0, -2, 2, -2, 2, false, "smooth_l1");
    check_pw(L_SL1, 0.0, 0.5, 2, -2, 0, false, "smooth_l1 beta=0");
    check_pw(L_HUBER, 0.7, -2, 2, -2, 2, false, "huber");
    check_pw(L_BCE, 0, 0.05, 0.95, 0, 1, false, "bce");
    check_pw(L_BCE, 0, 0.05, 0.95, 0, 1, true, "bce weighted");
    check_pw(L_BCEL, 0, -3, 3, 0, 1, false, "bce_logits");
    check_pw(L_BCEL, 0, -3, 3, 0, 1, true, "bce_logits weighted");
    check_pw(L_KL, 0, -3, 0, 0.1, 1, false, "kl_div");
    check_pw(L_KLLOG, 0, -3, 0, -3, 0, false, "kl_div log_target");
}

TEST(nn_pointwise_loss_edges) {
    /* bce: log clamped at -100, finite zero gradient at probability 0 and 1 */
    int64_t two = 2;
    double xv[2] = {0, 1}, tv[2] = {1, 0};
    cg_tensor *x = tt_tensor(CG_DTYPE_F64, 1, &two, xv), *t = tt_tensor(CG_DTYPE_F64, 1, &two, tv);
    cg_tensor_set_requires_grad(x, true);
    cg_tensor *r = cg_binary_cross_entropy(x, t, NULL, CG_REDUCTION_SUM);
    double v;
    CHECK_OK(cg_tensor_item(r, &v));
    CHECK_NEAR(v, 200.0, 1e-9);
    CHECK_OK(cg_backward(r, NULL, false, false));
    CHECK(isfinite(tt_get(cg_tensor_grad(x), 0)) && isfinite(tt_get(cg_tensor_grad(x), 1)));
    cg_tensor_release(r);
    /* kl_div with zero targets contributes 0 */
    double z[2] = {0, 0};
    cg_tensor *tz = tt_tensor(CG_DTYPE_F64, 1, &two, z);
    r = cg_kl_div(x, tz, CG_REDUCTION_SUM, false);
    CHECK_OK(cg_tensor_item(r, &v));
    CHECK(v == 0);
    cg_tensor_release(r);
    /* bce_with_logits is stable for large logits */
    double big[2] = {200, -200}, tw[2] = {0, 1}; /* confidently wrong: 200 each */
    cg_tensor *xb = tt_tensor(CG_DTYPE_F32, 1, &two, big), *tb = tt_tensor(CG_DTYPE_F32, 1, &two, tw);
    r = cg_binary_cross_entropy_with_logits(xb, tb, NULL, NULL, CG_REDUCTION_SUM);
    CHECK_OK(cg_tensor_item(r, &v));
    CHECK_NEAR(v, 400.0, 1e-3);
    cg_tensor_release(r);
    /* empty input: mean is nan, sum is 0 */
    int64_t zero = 0;
    cg_tensor *e = cg_zeros(1, &zero, CG_DTYPE_F64, cg_cpu());
    r = cg_mse_loss(e, e, CG_REDUCTION_MEAN);
    CHECK_OK(cg_tensor_item(r, &v));
    CHECK(isnan(v));
    cg_tensor_release(r);
    r = cg_l1_loss(e, e, CG_REDUCTION_SUM);
    CHECK_OK(cg_tensor_item(r, &v));
    CHECK(v == 0);
    cg_tensor_release(r);
    /* errors */
    cg_tensor *x32 = cg_to_dtype(x, CG_DTYPE_F32);
    CHECK_ERR(cg_mse_loss(x32, t, CG_REDUCTION_MEAN) == NULL, CG_ERR_DTYPE, "[mse_loss] dtype mismatch");
    double bad[2] = {0.5, 1.5};
    cg_tensor *xbad = tt_tensor(CG_DTYPE_F64, 1, &two, bad);
    CHECK_ERR(cg_binary_cross_entropy(xbad, t, NULL, CG_REDUCTION_MEAN) == NULL, CG_ERR_VALUE, "between 0 and 1");
    int64_t three = 3;
    cg_tensor *t3 = cg_zeros(1, &three, CG_DTYPE_F64, cg_cpu());
    CHECK_ERR(cg_binary_cross_entropy(x, t3, NULL, CG_REDUCTION_MEAN) == NULL, CG_ERR_SHAPE, "target size (3,)");
    CHECK_ERR(cg_mse_loss(x, t3, CG_REDUCTION_MEAN) == NULL, CG_ERR_SHAPE, "broadcast");
    CHECK_ERR(cg_smooth_l1_loss(x, t, CG_REDUCTION_MEAN, -1) == NULL, CG_ERR_VALUE, "beta");
    CHECK_ERR(cg_huber_loss(x, t, CG_REDUCTION_MEAN, 0) == NULL, CG_ERR_VALUE, "delta");
    CHECK_ERR(cg_l1_loss(x, t, (cg_reduction)9) == NULL, CG_ERR_VALUE, "reduction");
    cg_tensor *ii = cg_zeros(1, &two, CG_DTYPE_I64, cg_cpu());
    CHECK_ERR(cg_mse_loss(ii, ii, CG_REDUCTION_MEAN) == NULL, CG_ERR_DTYPE, "int64");
    cg_tensor *arr[] = {x, t, tz, xb, tb, e, x32, xbad, t3, ii};
    for (size_t i = 0; i < sizeof arr / sizeof *arr; i++) cg_tensor_release(arr[i]);
}

/* ------------------------------------------------------------- similarity */

typedef struct sim_ctx {
    int kind;
    int64_t dim;
    double p;
    bool keep;
} sim_ctx;

static cg_tensor *f_sim(cg_tensor *const *in, void *p) {
    sim_ctx *c = p;
    if (c->kind == 0) return cg_cosine_similarity(in[0], in[1], c->dim, 1e-8);
    return cg_pairwise_distance(in[0], in[1], c->p, 1e-6, c->keep);
}

TEST(nn_similarity) {
    int64_t sa[2] = {3, 4}, sb[2] = {1, 4};
    cg_tensor *a = tt_rand(CG_DTYPE_F64, 2, sa, -1, 1, 61), *b = tt_rand(CG_DTYPE_F64, 2, sb, -1, 1, 62);
    /* cosine along dim 1 with b broadcast over rows */
    cg_tensor *r = cg_cosine_similarity(a, b, 1, 1e-8);
    double ref[4];
    for (int64_t i = 0; i < 3; i++) {
        double d = 0, na = 0, nb = 0;
        for (int64_t j = 0; j < 4; j++) {
            double x = tt_get(a, i * 4 + j), y = tt_get(b, j);
            d += x * y, na += x * x, nb += y * y;
        }
        ref[i] = d / (sqrt(na) * sqrt(nb));
    }
    check_vals(r, ref, 3, 1e-12, "cosine_similarity");
    cg_tensor_release(r);
    /* pairwise distance, p = 2 and p = 1, keepdim */
    for (int pi = 0; pi < 2; pi++) {
        double p = pi ? 1.0 : 2.0;
        r = cg_pairwise_distance(a, b, p, 1e-6, pi == 1);
        for (int64_t i = 0; i < 3; i++) {
            double s = 0;
            for (int64_t j = 0; j < 4; j++) s += pow(fabs(tt_get(a, i * 4 + j) - tt_get(b, j) + 1e-6), p);
            ref[i] = pow(s, 1 / p);
        }
        check_vals(r, ref, 3, 1e-12, "pairwise_distance");
        if (r) CHECK(cg_tensor_ndim(r) == (pi == 1 ? 2 : 1));
        cg_tensor_release(r);
    }
    cg_tensor_set_requires_grad(a, true);
    cg_tensor_set_requires_grad(b, true);
    cg_tensor *in[2] = {a, b};
    sim_ctx cs[3] = {{0, 1, 0, false}, {1, 0, 2.0, false}, {1, 0, 3.0, true}};
    for (int k = 0; k < 3; k++) {
        CHECK_MSG(tt_gradcheck(f_sim, &cs[k], 2, in, 1e-6, 1e-7, 1e-5), "similarity gradcheck %d", k);
        CHECK_MSG(tt_gradgradcheck(f_sim, &cs[k], 2, in, 1e-6, 1e-6, 1e-4), "similarity gradgradcheck %d", k);
    }
    CHECK_ERR(cg_cosine_similarity(a, b, 2, 1e-8) == NULL, CG_ERR_INDEX, "dim");
    cg_tensor *c32 = cg_to_dtype(b, CG_DTYPE_F32);
    CHECK_ERR(cg_pairwise_distance(a, c32, 2, 1e-6, false) == NULL, CG_ERR_DTYPE, "[pairwise_distance]");
    cg_tensor_release(a), cg_tensor_release(b), cg_tensor_release(c32);
}
