/* test_scan_sort.c — cumsum, cumprod, cummax, sort, argsort and topk: values
 * against plain-loop references (all dims of a 3-D input, ties, NaN,
 * descending, non-contiguous, 0-d, empty, integer and bool dtypes), result
 * dtypes, gradcheck + gradgradcheck, and the error cases. */
#include "test.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- line references */

/* Lines of a contiguous row-major shape along dim d: start and stride. */
typedef void (*line_ref)(const double *in, int64_t n, double *out, double *idx, void *ctx);

static void ref_lines(int nd, const int64_t *sh, int d, const double *in, double *out, double *idx, int64_t out_n,
                      line_ref fn, void *ctx) {
    int64_t outer = 1, inner = 1, n = nd ? sh[d] : 1;
    for (int i = 0; i < d; i++) outer *= sh[i];
    for (int i = d + 1; i < nd; i++) inner *= sh[i];
    double *li = malloc(sizeof(double) * (size_t)(n + 1)), *lo = malloc(sizeof(double) * (size_t)(n + 1)),
           *lx = malloc(sizeof(double) * (size_t)(n + 1));
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            for (int64_t k = 0; k < n; k++) li[k] = in[(o * n + k) * inner + i];
            fn(li, n, lo, lx, ctx);
            for (int64_t k = 0; k < out_n; k++) {
                out[(o * out_n + k) * inner + i] = lo[k];
                if (idx) idx[(o * out_n + k) * inner + i] = lx[k];
            }
        }
    free(li);
    free(lo);
    free(lx);
}

static void r_cumsum(const double *in, int64_t n, double *out, double *idx, void *c) {
    (void)idx, (void)c;
    double s = 0;
    for (int64_t k = 0; k < n; k++) out[k] = s += in[k];
}
static void r_cumprod(const double *in, int64_t n, double *out, double *idx, void *c) {
    (void)idx, (void)c;
    double s = 1;
    for (int64_t k = 0; k < n; k++) out[k] = s *= in[k];
}
static void r_cummax(const double *in, int64_t n, double *out, double *idx, void *c) {
    (void)c;
    double b = in[0];
    int64_t bi = 0;
    for (int64_t k = 0; k < n; k++) {
        if (isnan(in[k]) || (!isnan(b) && in[k] >= b)) b = in[k], bi = k;
        out[k] = b;
        idx[k] = (double)bi;
    }
}
/* stable insertion sort with NaN largest; ctx: int[2] = {descending, k} */
static bool before(double a, double b, bool desc) {
    if (desc) return !isnan(b) && (isnan(a) || a > b);
    return !isnan(a) && (isnan(b) || a < b);
}
static void r_sort(const double *in, int64_t n, double *out, double *idx, void *c) {
    bool desc = ((int *)c)[0];
    for (int64_t k = 0; k < n; k++) {
        int64_t j = k;
        while (j > 0 && before(in[k], out[j - 1], desc)) {
            out[j] = out[j - 1];
            idx[j] = idx[j - 1];
            j--;
        }
        out[j] = in[k];
        idx[j] = (double)k;
    }
}

static double *values_of(const cg_tensor *t) {
    int64_t n = cg_tensor_numel(t);
    double *v = malloc(sizeof(double) * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) v[i] = tt_get(t, i);
    return v;
}
static cg_tensor *from_vals(int nd, const int64_t *sh, const double *v) { return tt_tensor(CG_DTYPE_F64, nd, sh, v); }

/* compare t (any dtype) with ref values of shape sh */
static double diff_ref(const cg_tensor *t, int nd, const int64_t *sh, const double *ref) {
    cg_tensor *r = from_vals(nd, sh, ref);
    double m = tt_maxdiff(t, r);
    cg_tensor_release(r);
    return m;
}

/* A 3-D input with ties and (optionally) NaN, every dim. */
static const int64_t k_sh3[3] = {3, 4, 5};

static cg_tensor *input3(cg_dtype dt, bool with_nan, bool noncontig, unsigned seed) {
    int64_t n = 60;
    double v[60];
    uint64_t s = seed;
    for (int64_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        v[i] = (double)((s >> 33) % 7) - 3.0; /* small integers: many ties */
        if (cg_dtype_is_floating(dt) && i % 3 == 0) v[i] += 0.25;
        if (dt == CG_DTYPE_BOOL) v[i] = v[i] > 0;
        if (dt == CG_DTYPE_U8) v[i] += 3;
    }
    if (with_nan) v[7] = v[31] = v[44] = NAN;
    cg_tensor *t = tt_tensor(dt, 3, k_sh3, v);
    if (!noncontig) return t;
    cg_tensor *nc = tt_noncontig(t);
    cg_tensor_release(t);
    return nc;
}

/* ---------------------------------------------------------------- cumsum / cumprod */

TEST(scan_cumsum_cumprod_values_all_dims_dtypes) {
    const cg_dtype dts[] = {CG_DTYPE_F64, CG_DTYPE_F32, CG_DTYPE_F16, CG_DTYPE_BF16, CG_DTYPE_I32, CG_DTYPE_I8,
                            CG_DTYPE_U8, CG_DTYPE_BOOL, CG_DTYPE_I64};
    for (size_t di = 0; di < sizeof dts / sizeof *dts; di++) {
        for (int nc = 0; nc < 2; nc++) {
            cg_tensor *x = input3(dts[di], false, nc, 5 + (unsigned)di);
            double *xv = values_of(x), ref[60];
            for (int d = -3; d < 3; d++) {
                int dd = d < 0 ? d + 3 : d;
                bool fl = cg_dtype_is_floating(dts[di]);
                double tol = dts[di] == CG_DTYPE_F64 ? 1e-12 : dts[di] == CG_DTYPE_F32 ? 1e-4 : fl ? 0.2 : 0;
                cg_tensor *c = cg_cumsum(x, d);
                CHECK_NN(c);
                ref_lines(3, k_sh3, dd, xv, ref, NULL, k_sh3[dd], r_cumsum, NULL);
                CHECK_MSG(diff_ref(c, 3, k_sh3, ref) <= tol, "cumsum dtype %s dim %d nc %d: diff %g",
                          cg_dtype_name(dts[di]), d, nc, diff_ref(c, 3, k_sh3, ref));
                CHECK(cg_tensor_dtype(c) == (fl ? dts[di] : CG_DTYPE_I64));
                cg_tensor *p = cg_cumprod(x, d);
                CHECK_NN(p);
                ref_lines(3, k_sh3, dd, xv, ref, NULL, k_sh3[dd], r_cumprod, NULL);
                double ptol = tol ? tol * 50 : 0;
                CHECK_MSG(diff_ref(p, 3, k_sh3, ref) <= ptol, "cumprod dtype %s dim %d: diff %g", cg_dtype_name(dts[di]), d,
                          diff_ref(p, 3, k_sh3, ref));
                CHECK(cg_tensor_dtype(p) == (fl ? dts[di] : CG_DTYPE_I64));
                cg_tensor_release(c);
                cg_tensor_release(p);
            }
            free(xv);
            cg_tensor_release(x);
        }
    }
}

TEST(scan_zero_dim_and_empty) {
    cg_tensor *s = cg_scalar(2.5, CG_DTYPE_F32);
    for (int d = -1; d <= 0; d++) {
        cg_tensor *c = cg_cumsum(s, d), *p = cg_cumprod(s, d), *v = NULL, *i = NULL;
        CHECK_OK(cg_cummax(s, d, &v, &i));
        CHECK(c && cg_tensor_ndim(c) == 0 && tt_get(c, 0) == 2.5);
        CHECK(p && cg_tensor_ndim(p) == 0 && tt_get(p, 0) == 2.5);
        CHECK(v && i && cg_tensor_ndim(v) == 0 && tt_get(v, 0) == 2.5 && tt_get(i, 0) == 0);
        cg_tensor_release(c), cg_tensor_release(p), cg_tensor_release(v), cg_tensor_release(i);
    }
    CHECK_ERR(cg_cumsum(s, 1) == NULL, CG_ERR_INDEX, "dimension out of range");
    int64_t es[2] = {0, 3};
    cg_tensor *e = cg_zeros(2, es, CG_DTYPE_F32, cg_cpu());
    for (int d = 0; d < 2; d++) {
        cg_tensor *c = cg_cumsum(e, d), *p = cg_cumprod(e, d), *v = NULL, *i = NULL, *sv = NULL, *si = NULL;
        CHECK_OK(cg_cummax(e, d, &v, &i));
        CHECK_OK(cg_sort(e, d, false, true, &sv, &si));
        CHECK(c && p && v && i && sv && si && cg_tensor_numel(c) == 0 && cg_tensor_shape(si)[1] == 3);
        cg_tensor_release(c), cg_tensor_release(p), cg_tensor_release(v), cg_tensor_release(i);
        cg_tensor_release(sv), cg_tensor_release(si);
    }
    CHECK_ERR(cg_cumsum(e, 2) == NULL, CG_ERR_INDEX, "dimension out of range");
    cg_tensor_release(e);
    cg_tensor_release(s);
}

/* ---------------------------------------------------------------- cummax */

TEST(scan_cummax_ties_nan_all_dims) {
    const cg_dtype dts[] = {CG_DTYPE_F64, CG_DTYPE_F32, CG_DTYPE_F16, CG_DTYPE_I64, CG_DTYPE_I16, CG_DTYPE_BOOL};
    for (size_t di = 0; di < sizeof dts / sizeof *dts; di++) {
        bool fl = cg_dtype_is_floating(dts[di]);
        cg_tensor *x = input3(dts[di], fl, di % 2 == 1, 9 + (unsigned)di);
        double *xv = values_of(x), ref[60], rix[60];
        for (int d = 0; d < 3; d++) {
            cg_tensor *v = NULL, *i = NULL;
            CHECK_OK(cg_cummax(x, d, &v, &i));
            ref_lines(3, k_sh3, d, xv, ref, rix, k_sh3[d], r_cummax, NULL);
            CHECK_MSG(diff_ref(v, 3, k_sh3, ref) == 0, "cummax values %s dim %d", cg_dtype_name(dts[di]), d);
            CHECK_MSG(diff_ref(i, 3, k_sh3, rix) == 0, "cummax indices %s dim %d", cg_dtype_name(dts[di]), d);
            CHECK(cg_tensor_dtype(i) == CG_DTYPE_I64 && cg_tensor_dtype(v) == dts[di]);
            cg_tensor_release(v), cg_tensor_release(i);
        }
        free(xv);
        cg_tensor_release(x);
    }
}

/* ---------------------------------------------------------------- sort / argsort / topk */

TEST(sort_values_indices_ties_nan_desc_all_dims) {
    const cg_dtype dts[] = {CG_DTYPE_F64, CG_DTYPE_F32, CG_DTYPE_BF16, CG_DTYPE_I32, CG_DTYPE_U8, CG_DTYPE_BOOL};
    for (size_t di = 0; di < sizeof dts / sizeof *dts; di++)
        for (int nc = 0; nc < 2; nc++) {
            bool fl = cg_dtype_is_floating(dts[di]);
            cg_tensor *x = input3(dts[di], fl, nc, 21 + (unsigned)di);
            double *xv = values_of(x), ref[60], rix[60];
            for (int d = 0; d < 3; d++)
                for (int desc = 0; desc < 2; desc++) {
                    int ctx[1] = {desc};
                    cg_tensor *v = NULL, *i = NULL;
                    CHECK_OK(cg_sort(x, d - 3, desc, true, &v, &i));
                    ref_lines(3, k_sh3, d, xv, ref, rix, k_sh3[d], r_sort, ctx);
                    CHECK_MSG(diff_ref(v, 3, k_sh3, ref) == 0, "sort values %s dim %d desc %d", cg_dtype_name(dts[di]), d, desc);
                    CHECK_MSG(diff_ref(i, 3, k_sh3, rix) == 0, "sort indices %s dim %d desc %d", cg_dtype_name(dts[di]), d, desc);
                    cg_tensor *a = cg_argsort(x, d, desc, false);
                    CHECK(a && tt_maxdiff(a, i) == 0 && cg_tensor_dtype(a) == CG_DTYPE_I64);
                    /* topk: the first k of the sort (largest = descending) */
                    cg_tensor *tv = NULL, *ti = NULL;
                    CHECK_OK(cg_topk(x, 2, d, desc, true, &tv, &ti));
                    int64_t ks[3] = {3, 4, 5};
                    ks[d] = 2;
                    double tr[60], tix[60];
                    int64_t inner = 1, outer = 1;
                    for (int q = d + 1; q < 3; q++) inner *= k_sh3[q];
                    for (int q = 0; q < d; q++) outer *= k_sh3[q];
                    for (int64_t o = 0; o < outer; o++)
                        for (int64_t kk = 0; kk < 2; kk++)
                            for (int64_t in = 0; in < inner; in++) {
                                tr[(o * 2 + kk) * inner + in] = ref[(o * k_sh3[d] + kk) * inner + in];
                                tix[(o * 2 + kk) * inner + in] = rix[(o * k_sh3[d] + kk) * inner + in];
                            }
                    CHECK_MSG(diff_ref(tv, 3, ks, tr) == 0 && diff_ref(ti, 3, ks, tix) == 0, "topk %s dim %d largest %d",
                              cg_dtype_name(dts[di]), d, desc);
                    cg_tensor_release(v), cg_tensor_release(i), cg_tensor_release(a);
                    cg_tensor_release(tv), cg_tensor_release(ti);
                }
            free(xv);
            cg_tensor_release(x);
        }
}

TEST(sort_small_exact_cases) {
    /* NaN largest; stable ties in both directions; -inf / inf */
    double v[7] = {2, NAN, -INFINITY, 2, 1, INFINITY, 1};
    int64_t n = 7;
    cg_tensor *x = tt_tensor(CG_DTYPE_F32, 1, &n, v), *sv = NULL, *si = NULL;
    CHECK_OK(cg_sort(x, 0, false, true, &sv, &si));
    double ea[7] = {-INFINITY, 1, 1, 2, 2, INFINITY, NAN}, ia[7] = {2, 4, 6, 0, 3, 5, 1};
    CHECK(diff_ref(sv, 1, &n, ea) == 0 && diff_ref(si, 1, &n, ia) == 0);
    cg_tensor_release(sv), cg_tensor_release(si);
    CHECK_OK(cg_sort(x, -1, true, true, &sv, &si));
    double ed[7] = {NAN, INFINITY, 2, 2, 1, 1, -INFINITY}, id[7] = {1, 5, 0, 3, 4, 6, 2};
    CHECK(diff_ref(sv, 1, &n, ed) == 0 && diff_ref(si, 1, &n, id) == 0);
    cg_tensor_release(sv), cg_tensor_release(si);
    /* int64 keys beyond 2^53 stay exact */
    int64_t big[3] = {(1ll << 60) + 1, (1ll << 60), -5};
    int64_t three = 3;
    cg_tensor *b = cg_from_data(big, 1, &three, CG_DTYPE_I64);
    CHECK_OK(cg_sort(b, 0, false, false, &sv, &si));
    CHECK(((int64_t *)cg_tensor_data(sv))[1] == (1ll << 60) && tt_get(si, 0) == 2 && tt_get(si, 2) == 0);
    cg_tensor_release(sv), cg_tensor_release(si), cg_tensor_release(b);
    /* 0-d */
    cg_tensor *s = cg_scalar(3, CG_DTYPE_F64);
    CHECK_OK(cg_sort(s, -1, true, false, &sv, &si));
    CHECK(cg_tensor_ndim(sv) == 0 && tt_get(sv, 0) == 3 && tt_get(si, 0) == 0);
    cg_tensor_release(sv), cg_tensor_release(si);
    CHECK_OK(cg_topk(s, 1, 0, true, true, &sv, &si));
    CHECK(cg_tensor_ndim(sv) == 0 && tt_get(sv, 0) == 3);
    cg_tensor_release(sv), cg_tensor_release(si);
    CHECK_OK(cg_topk(x, 0, 0, true, true, &sv, &si));
    CHECK(cg_tensor_numel(sv) == 0 && cg_tensor_numel(si) == 0);
    cg_tensor_release(sv), cg_tensor_release(si);
    /* errors */
    CHECK_ERR(cg_topk(x, 8, 0, true, true, &sv, &si) != CG_OK, CG_ERR_INDEX, "selected index k out of range");
    CHECK(sv == NULL && si == NULL);
    CHECK_ERR(cg_topk(x, -1, 0, true, true, &sv, &si) != CG_OK, CG_ERR_INDEX, "selected index k out of range");
    CHECK_ERR(cg_topk(s, 2, 0, true, true, &sv, &si) != CG_OK, CG_ERR_INDEX, "selected index k out of range");
    CHECK_ERR(cg_sort(x, 1, false, false, &sv, &si) != CG_OK, CG_ERR_INDEX, "dimension out of range");
    CHECK_ERR(cg_argsort(NULL, 0, false, false) == NULL, CG_ERR_VALUE, "NULL");
    cg_tensor_release(s);
    cg_tensor_release(x);
}

/* ---------------------------------------------------------------- gradients */

static cg_tensor *f_cumsum(cg_tensor *const *in, void *c) { return cg_cumsum(in[0], *(int64_t *)c); }
static cg_tensor *f_cumprod(cg_tensor *const *in, void *c) { return cg_cumprod(in[0], *(int64_t *)c); }
static cg_tensor *f_cummax(cg_tensor *const *in, void *c) {
    cg_tensor *v = NULL, *i = NULL;
    cg_cummax(in[0], *(int64_t *)c, &v, &i);
    cg_tensor_release(i);
    return v;
}
static cg_tensor *f_sort(cg_tensor *const *in, void *c) {
    cg_tensor *v = NULL, *i = NULL;
    cg_sort(in[0], *(int64_t *)c, *(int64_t *)c % 2 != 0, true, &v, &i);
    cg_tensor_release(i);
    return v;
}
static cg_tensor *f_topk(cg_tensor *const *in, void *c) {
    cg_tensor *v = NULL, *i = NULL;
    int64_t d = *(int64_t *)c;
    cg_topk(in[0], cg_tensor_ndim(in[0]) ? 2 : 1, d, d != 1, true, &v, &i);
    cg_tensor_release(i);
    return v;
}

static void grad_both(tt_fn f, cg_tensor *x, int64_t dim, const char *what) {
    cg_tensor_set_requires_grad(x, true);
    CHECK_MSG(tt_gradcheck(f, &dim, 1, &x, 1e-6, 1e-7, 1e-5), "%s gradcheck dim %lld", what, (long long)dim);
    CHECK_MSG(tt_gradgradcheck(f, &dim, 1, &x, 1e-6, 1e-7, 1e-5), "%s gradgradcheck dim %lld", what, (long long)dim);
}

/* distinct values (no ties) so max / sort are differentiable everywhere */
static cg_tensor *distinct(int nd, const int64_t *sh, bool noncontig, unsigned seed) {
    cg_tensor *t = tt_rand(CG_DTYPE_F64, nd, sh, -2, 2, seed);
    if (!noncontig) return t;
    cg_tensor *nc = tt_noncontig(t);
    cg_tensor_release(t);
    return nc;
}

TEST(scan_sort_gradients) {
    int64_t sh[3] = {2, 3, 4};
    const struct { tt_fn f; const char *name; } ops[] = {
        {f_cumsum, "cumsum"}, {f_cumprod, "cumprod"}, {f_cummax, "cummax"}, {f_sort, "sort"}, {f_topk, "topk"}};
    for (size_t o = 0; o < sizeof ops / sizeof *ops; o++) {
        for (int d = 0; d < 3; d++) {
            cg_tensor *x = distinct(3, sh, d == 1, 100 + (unsigned)(o * 3 + (size_t)d));
            grad_both(ops[o].f, x, d, ops[o].name);
            cg_tensor_release(x);
        }
        cg_tensor *s = cg_scalar(0.7, CG_DTYPE_F64);
        grad_both(ops[o].f, s, 0, ops[o].name);
        cg_tensor_release(s);
        int64_t es[2] = {0, 3};
        cg_tensor *e = cg_zeros(2, es, CG_DTYPE_F64, cg_cpu());
        if (ops[o].f != f_topk) grad_both(ops[o].f, e, 1, ops[o].name);
        cg_tensor_release(e);
    }
}

TEST(scan_cumprod_grad_with_zeros) {
    int64_t sh[2] = {3, 4};
    /* one zero in a line, two zeros in a line, zero at the first / last position */
    double v1[12] = {0.5, 0, 1.5, -0.7, 1.2, 0.9, -1.1, 0.8, 0, 1.3, 0.6, 0};
    double v2[12] = {0.5, 0, 1.5, 0, 1.2, 0.9, -1.1, 0.8, 0.4, 1.3, 0.6, -0.9};
    const double *vs[2] = {v1, v2};
    for (int c = 0; c < 2; c++)
        for (int64_t d = 0; d < 2; d++) {
            cg_tensor *x = from_vals(2, sh, vs[c]);
            grad_both(f_cumprod, x, d, c ? "cumprod (two zeros)" : "cumprod (single zero)");
            /* the analytic gradient against the plain product rule */
            cg_tensor *y = cg_cumprod(x, d), *g = NULL;
            int64_t one = 1;
            cg_tensor *s = cg_sum(y, 1, &one, false), *t = cg_sum(s, 0, NULL, false);
            CHECK_OK(cg_autograd_grad(1, &t, NULL, 1, &x, false, false, false, &g));
            for (int64_t i = 0; i < 3 && d == 1; i++)
                for (int64_t k = 0; k < 4; k++) {
                    double want = 0;
                    for (int64_t j = k; j < 4; j++) {
                        double p = 1;
                        for (int64_t q = 0; q <= j; q++)
                            if (q != k) p *= vs[c][i * 4 + q];
                        want += p;
                    }
                    CHECK_NEAR(tt_get(g, i * 4 + k), want, 1e-12);
                }
            cg_tensor_release(y), cg_tensor_release(s), cg_tensor_release(t), cg_tensor_release(g);
            cg_tensor_release(x);
        }
}

TEST(scan_cummax_grad_ties_go_to_the_kept_index) {
    double v[5] = {1, 3, 3, 2, 5};
    int64_t n = 5;
    cg_tensor *x = from_vals(1, &n, v), *val = NULL, *ix = NULL, *g = NULL;
    cg_tensor_set_requires_grad(x, true);
    CHECK_OK(cg_cummax(x, 0, &val, &ix));
    CHECK(strcmp(cg_node_name(cg_tensor_grad_fn(val)), "CummaxBackward0") == 0);
    cg_tensor *s = cg_sum(val, 0, NULL, false);
    CHECK_OK(cg_autograd_grad(1, &s, NULL, 1, &x, false, false, false, &g));
    double want[5] = {1, 1, 2, 0, 1}; /* ties take the later index */
    CHECK(diff_ref(g, 1, &n, want) == 0);
    cg_tensor_release(val), cg_tensor_release(ix), cg_tensor_release(g), cg_tensor_release(s), cg_tensor_release(x);
}

TEST(scan_dtype_errors) {
    int64_t n = 3;
    cg_tensor *x = cg_ones(1, &n, CG_DTYPE_F32, cg_cpu());
    CHECK_ERR(cg_cumsum(NULL, 0) == NULL, CG_ERR_VALUE, "NULL");
    CHECK_ERR(cg_cummax(x, 0, NULL, NULL) != CG_OK, CG_ERR_VALUE, "NULL");
    CHECK_ERR(cg_cumprod(x, -2) == NULL, CG_ERR_INDEX, "dimension out of range");
    /* integer scans never build a graph; float ones do */
    cg_tensor_set_requires_grad(x, true);
    cg_tensor *c = cg_cumsum(x, 0);
    CHECK(c && cg_tensor_requires_grad(c) && strcmp(cg_node_name(cg_tensor_grad_fn(c)), "CumsumBackward0") == 0);
    cg_tensor *i = cg_argsort(x, 0, false, true);
    CHECK(i && !cg_tensor_requires_grad(i));
    cg_tensor_release(c), cg_tensor_release(i), cg_tensor_release(x);
}
