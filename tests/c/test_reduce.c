/* test_reduce.c — reductions: values against float64 references computed
 * with plain loops here, for every dim subset of a 3-D input (keepdim,
 * negative dims, non-contiguous, every float dtype, integer dtypes where
 * supported), 0-d and empty inputs, NaN propagation, gradcheck and
 * gradgradcheck of every differentiable reduction, prod's zero handling, tie
 * splitting, thread-count independence and the error cases. */
#include "test.h"

#include <stdlib.h>
#include <string.h>

typedef enum rop {
    R_SUM, R_MEAN, R_PROD, R_AMAX, R_AMIN, R_VAR, R_STD, R_LSE, R_NORM, R_NZ,
    R_MAXDIM, R_MINDIM, R_MAX, R_MIN, R_COUNT
} rop;
static const char *k_names[R_COUNT] = {"sum", "mean", "prod", "amax", "amin", "var", "std", "logsumexp",
                                       "norm", "count_nonzero", "max_dim", "min_dim", "max", "min"};

static cg_tensor *call(rop op, cg_tensor *x, int nd, const int64_t *dims, bool keep, double param) {
    cg_tensor *v = NULL, *i = NULL;
    switch (op) {
    case R_SUM: return cg_sum(x, nd, dims, keep);
    case R_MEAN: return cg_mean(x, nd, dims, keep);
    case R_PROD: return cg_prod(x, nd, dims, keep);
    case R_AMAX: return cg_amax(x, nd, dims, keep);
    case R_AMIN: return cg_amin(x, nd, dims, keep);
    case R_VAR: return cg_var(x, nd, dims, param, keep);
    case R_STD: return cg_std(x, nd, dims, param, keep);
    case R_LSE: return cg_logsumexp(x, nd, dims, keep);
    case R_NORM: return cg_norm(x, param, nd, dims, keep);
    case R_NZ: return cg_count_nonzero(x, nd, dims);
    case R_MAXDIM:
    case R_MINDIM:
        if ((op == R_MAXDIM ? cg_max_dim : cg_min_dim)(x, dims[0], keep, &v, &i) != CG_OK) return NULL;
        cg_tensor_release(i);
        return v;
    case R_MAX: return cg_max(x);
    case R_MIN: return cg_min(x);
    default: return NULL;
    }
}

/* float64 reference of one slice v[0..n) */
static double ref1(rop op, const double *v, int64_t n, double param) {
    double acc = 0, m;
    switch (op) {
    case R_SUM:
        for (int64_t i = 0; i < n; i++) acc += v[i];
        return acc;
    case R_MEAN: return ref1(R_SUM, v, n, 0) / (double)n;
    case R_PROD:
        acc = 1;
        for (int64_t i = 0; i < n; i++) acc *= v[i];
        return acc;
    case R_AMAX:
    case R_MAX:
    case R_MAXDIM:
    case R_AMIN:
    case R_MIN:
    case R_MINDIM: {
        bool mx = op == R_AMAX || op == R_MAX || op == R_MAXDIM;
        m = v[0];
        for (int64_t i = 0; i < n; i++) {
            if (isnan(v[i])) return NAN;
            if (mx ? v[i] > m : v[i] < m) m = v[i];
        }
        return m;
    }
    case R_VAR:
    case R_STD: {
        if (n == 0) return NAN;
        double mean = ref1(R_MEAN, v, n, 0);
        for (int64_t i = 0; i < n; i++) acc += (v[i] - mean) * (v[i] - mean);
        double dof = (double)n - param;
        double r = acc / (dof > 0 ? dof : 0);
        return op == R_STD ? sqrt(r) : r;
    }
    case R_LSE:
        m = -INFINITY;
        for (int64_t i = 0; i < n; i++) m = v[i] > m ? v[i] : m;
        if (isinf(m)) m = 0;
        for (int64_t i = 0; i < n; i++) acc += exp(v[i] - m);
        return log(acc) + m;
    case R_NORM:
        if (param == 0) return ref1(R_NZ, v, n, 0);
        if (isinf(param)) {
            m = fabs(v[0]);
            for (int64_t i = 0; i < n; i++) m = param > 0 ? fmax(m, fabs(v[i])) : fmin(m, fabs(v[i]));
            return m;
        }
        for (int64_t i = 0; i < n; i++) acc += pow(fabs(v[i]), param);
        return pow(acc, 1 / param);
    case R_NZ:
        for (int64_t i = 0; i < n; i++) acc += v[i] != 0;
        return acc;
    default: return NAN;
    }
}

/* first index of the extreme (NaN wins) in a slice */
static int64_t ref_arg(bool mx, const double *v, int64_t n) {
    int64_t b = 0;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(v[i])) return i;
        if (mx ? v[i] > v[b] : v[i] < v[b]) b = i;
    }
    return b;
}

/* Gather the slices of x for a reduction mask: out[o * R + r] where o is the
 * row-major index over kept dims and r the row-major index over reduced dims. */
static double *slices(cg_tensor *x, uint32_t mask, int64_t *nout, int64_t *R) {
    int nd = cg_tensor_ndim(x);
    const int64_t *sh = cg_tensor_shape(x);
    int64_t no = 1, r = 1;
    for (int d = 0; d < nd; d++) {
        if (mask & (1u << d)) r *= sh[d];
        else no *= sh[d];
    }
    int64_t n = cg_tensor_numel(x);
    double *buf = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    for (int64_t f = 0; f < n; f++) {
        int64_t rem = f, o = 0, ri = 0, ostride = 1, rstride = 1;
        for (int d = nd - 1; d >= 0; d--) {
            int64_t c = rem % sh[d];
            rem /= sh[d];
            if (mask & (1u << d)) ri += c * rstride, rstride *= sh[d];
            else o += c * ostride, ostride *= sh[d];
        }
        buf[o * r + ri] = tt_get(x, f);
    }
    *nout = no;
    *R = r;
    return buf;
}

static double tol_for(cg_dtype dt) {
    switch (dt) {
    case CG_DTYPE_F64: return 1e-10;
    case CG_DTYPE_F32: return 2e-5;
    case CG_DTYPE_F16: return 4e-3;
    case CG_DTYPE_BF16: return 2e-2;
    default: return 0;
    }
}

/* Check op(x, dims, keepdim) against the reference; returns false on mismatch. */
static bool check_value(rop op, cg_tensor *x, int nd, const int64_t *dims, bool keep, double param) {
    char what[160];
    snprintf(what, sizeof what, "%s(%s, nd=%d [%lld,%lld], keep=%d, p=%g)", k_names[op],
             cg_dtype_name(cg_tensor_dtype(x)), nd, nd > 0 ? (long long)dims[0] : 99LL,
             nd > 1 ? (long long)dims[1] : 99LL, keep, param);
    cg_tensor *y = call(op, x, nd, dims, keep, param);
    if (!y) {
        CHECK_MSG(false, "%s failed: %s", what, cg_last_error_message());
        return false;
    }
    int xn = cg_tensor_ndim(x);
    uint32_t mask = 0;
    int nred = 0;
    if (!dims || nd == 0) mask = (1u << xn) - 1u;
    for (int i = 0; dims && i < nd; i++) mask |= 1u << ((dims[i] % (xn ? xn : 1) + (xn ? xn : 1)) % (xn ? xn : 1));
    if (xn == 0) mask = 0;
    for (int d = 0; d < xn; d++) nred += (mask >> d) & 1u;
    int expect_nd = keep ? xn : xn - nred;
    bool ok = cg_tensor_ndim(y) == expect_nd;
    CHECK_MSG(ok, "%s: ndim %d, expected %d", what, cg_tensor_ndim(y), expect_nd);
    cg_dtype xdt = cg_tensor_dtype(x), ydt = cg_tensor_dtype(y);
    cg_dtype edt = op == R_NZ ? CG_DTYPE_I64
                   : ((op == R_SUM || op == R_PROD) && !cg_dtype_is_floating(xdt)) ? CG_DTYPE_I64 : xdt;
    CHECK_MSG(ydt == edt, "%s: dtype %s, expected %s", what, cg_dtype_name(ydt), cg_dtype_name(edt));
    int64_t no, R;
    double *buf = slices(x, mask, &no, &R);
    CHECK_MSG(cg_tensor_numel(y) == no, "%s: numel %lld, expected %lld", what, (long long)cg_tensor_numel(y), (long long)no);
    double tol = tol_for(ydt);
    for (int64_t o = 0; ok && o < no && o < cg_tensor_numel(y); o++) {
        double r = ref1(op, buf + o * R, R, param), v = tt_get(y, o);
        bool good = (isnan(r) && isnan(v)) || r == v || fabs(r - v) <= tol * (1 + fabs(r));
        if (!good) {
            CHECK_MSG(false, "%s: out[%lld] = %.12g, expected %.12g", what, (long long)o, v, r);
            ok = false;
        }
    }
    free(buf);
    cg_tensor_release(y);
    return ok;
}

/* every dim subset of a 3-D input (positive and negative spellings), keepdim both ways */
static void check_all_subsets(rop op, cg_tensor *x, double param) {
    for (uint32_t sub = 0; sub < 8; sub++) {
        int64_t dims[3];
        int nd = 0;
        for (int d = 0; d < 3; d++)
            if (sub & (1u << d)) dims[nd++] = (sub & 4u) ? d - 3 : d; /* negative spelling for some */
        for (int keep = 0; keep < 2; keep++) {
            if (op == R_NZ && keep) continue;
            if (!check_value(op, x, nd, nd ? dims : NULL, keep, param)) return;
        }
    }
}

static const cg_dtype k_float_dtypes[4] = {CG_DTYPE_F64, CG_DTYPE_F32, CG_DTYPE_F16, CG_DTYPE_BF16};

TEST(reduce_values_every_dim_subset_float) {
    int64_t sh[3] = {3, 4, 5};
    for (int k = 0; k < 4; k++) {
        cg_tensor *x = tt_rand(k_float_dtypes[k], 3, sh, 0.5, 1.5, 21);
        cg_tensor *neg = tt_rand(k_float_dtypes[k], 3, sh, -2, 2, 22);
        cg_tensor *nc = tt_noncontig(neg);
        int64_t perm[3] = {2, 0, 1};
        cg_tensor *pm = cg_permute(neg, perm); /* another non-contiguous layout, (5,3,4) */
        cg_tensor *xs[3] = {neg, nc, pm};
        check_all_subsets(R_PROD, x, 0); /* values near 1: products stay O(1) */
        for (int i = 0; i < 3; i++) {
            cg_tensor *t = xs[i];
            check_all_subsets(R_SUM, t, 0);
            check_all_subsets(R_MEAN, t, 0);
            check_all_subsets(R_AMAX, t, 0);
            check_all_subsets(R_AMIN, t, 0);
            check_all_subsets(R_VAR, t, 1);
            check_all_subsets(R_VAR, t, 0);
            check_all_subsets(R_STD, t, 1);
            check_all_subsets(R_STD, t, 2.5);
            check_all_subsets(R_LSE, t, 0);
            check_all_subsets(R_NZ, t, 0);
            const double ps[] = {2, 1, 0, 3, 0.5, 1.5, -1, INFINITY, -INFINITY};
            for (int j = 0; j < 9; j++) check_all_subsets(R_NORM, t, ps[j]);
        }
        CHECK(!cg_tensor_is_contiguous(nc) && !cg_tensor_is_contiguous(pm));
        cg_tensor_release(x);
        cg_tensor_release(neg);
        cg_tensor_release(nc);
        cg_tensor_release(pm);
    }
}

TEST(reduce_values_integer_dtypes) {
    int64_t sh[3] = {2, 3, 4};
    const cg_dtype dts[] = {CG_DTYPE_I64, CG_DTYPE_I32, CG_DTYPE_I16, CG_DTYPE_I8, CG_DTYPE_U8, CG_DTYPE_BOOL};
    for (int k = 0; k < 6; k++) {
        double lo = dts[k] == CG_DTYPE_U8 || dts[k] == CG_DTYPE_BOOL ? 0 : -3;
        cg_tensor *x = tt_rand(dts[k], 3, sh, lo, dts[k] == CG_DTYPE_BOOL ? 2 : 4, 31);
        check_all_subsets(R_SUM, x, 0);
        check_all_subsets(R_PROD, x, 0);
        check_all_subsets(R_AMAX, x, 0);
        check_all_subsets(R_AMIN, x, 0);
        check_all_subsets(R_NZ, x, 0);
        /* max / min keep the dtype; argmax gives int64 */
        cg_tensor *m = cg_max(x), *a = cg_argmax(x, false, 0, false);
        CHECK(m && cg_tensor_dtype(m) == dts[k]);
        CHECK(a && cg_tensor_dtype(a) == CG_DTYPE_I64 && cg_tensor_ndim(a) == 0);
        int64_t n, R;
        double *buf = slices(x, 7u, &n, &R);
        CHECK_NEAR(tt_get(m, 0), ref1(R_MAX, buf, R, 0), 0);
        CHECK_NEAR(tt_get(a, 0), (double)ref_arg(true, buf, R), 0);
        free(buf);
        /* float-only reductions reject integers (the Python layer promotes) */
        int64_t d1 = 1;
        CHECK_ERR(cg_mean(x, 1, &d1, false) == NULL, CG_ERR_DTYPE, cg_dtype_name(dts[k]));
        CHECK_ERR(cg_var(x, 0, NULL, 1, false) == NULL, CG_ERR_DTYPE, "[var]");
        CHECK_ERR(cg_std(x, 0, NULL, 1, false) == NULL, CG_ERR_DTYPE, "[std]");
        CHECK_ERR(cg_logsumexp(x, 0, NULL, false) == NULL, CG_ERR_DTYPE, "[logsumexp]");
        CHECK_ERR(cg_norm(x, 2, 0, NULL, false) == NULL, CG_ERR_DTYPE, "[norm]");
        cg_tensor_release(m);
        cg_tensor_release(a);
        cg_tensor_release(x);
    }
    /* int64 sum and prod are exact */
    double v[4] = {3e9, 3e9, 7, -1}, w[4] = {3e9, 3, 7, -1};
    int64_t s4 = 4;
    cg_tensor *x = tt_tensor(CG_DTYPE_I64, 1, &s4, v);
    cg_tensor *xw = tt_tensor(CG_DTYPE_I64, 1, &s4, w);
    cg_tensor *s = cg_sum(x, 0, NULL, false), *p = cg_prod(xw, 0, NULL, false);
    int64_t si = 0, pi = 0;
    cg_tensor_copy_to_buffer(s, &si, CG_DTYPE_I64);
    cg_tensor_copy_to_buffer(p, &pi, CG_DTYPE_I64);
    CHECK(si == 6000000006LL);
    CHECK(pi == -63000000000LL);
    cg_tensor_release(xw);
    cg_tensor_release(s);
    cg_tensor_release(p);
    cg_tensor_release(x);
}

/* max_dim / min_dim / argmax / argmin along each dim, with ties (first occurrence) */
TEST(reduce_max_dim_indices_and_ties) {
    int64_t sh[3] = {3, 4, 5};
    const cg_dtype dts[] = {CG_DTYPE_F64, CG_DTYPE_F32, CG_DTYPE_F16, CG_DTYPE_BF16, CG_DTYPE_I32, CG_DTYPE_U8};
    for (int k = 0; k < 6; k++) {
        cg_tensor *base = tt_rand(CG_DTYPE_F64, 3, sh, 0, 4, 41);
        /* small integers: many ties */
        int64_t n = cg_tensor_numel(base);
        double *vals = malloc(sizeof(double) * (size_t)n);
        for (int64_t i = 0; i < n; i++) vals[i] = floor(tt_get(base, i));
        cg_tensor *x0 = tt_tensor(dts[k], 3, sh, vals), *x = tt_noncontig(x0);
        for (int d = -3; d < 3; d++) {
            for (int keep = 0; keep < 2; keep++) {
                for (int mx = 0; mx < 2; mx++) {
                    cg_tensor *v = NULL, *ix = NULL;
                    CHECK_OK((mx ? cg_max_dim : cg_min_dim)(x, d, keep, &v, &ix));
                    cg_tensor *am = (mx ? cg_argmax : cg_argmin)(x, true, d, keep);
                    if (!v || !ix || !am) continue;
                    CHECK(cg_tensor_dtype(ix) == CG_DTYPE_I64 && cg_tensor_dtype(v) == dts[k]);
                    CHECK(cg_tensor_ndim(v) == (keep ? 3 : 2) && cg_tensor_ndim(am) == cg_tensor_ndim(v));
                    int64_t no, R;
                    double *buf = slices(x, 1u << ((d + 3) % 3), &no, &R);
                    for (int64_t o = 0; o < no; o++) {
                        int64_t ri = ref_arg(mx, buf + o * R, R);
                        CHECK_NEAR(tt_get(ix, o), (double)ri, 0);
                        CHECK_NEAR(tt_get(am, o), (double)ri, 0);
                        CHECK_NEAR(tt_get(v, o), buf[o * R + ri], 0);
                    }
                    free(buf);
                    cg_tensor_release(v);
                    cg_tensor_release(ix);
                    cg_tensor_release(am);
                }
            }
        }
        /* flattened argmax: the first maximum in row-major order; keepdim keeps ones */
        cg_tensor *a = cg_argmax(x, false, 0, false), *ak = cg_argmin(x, false, 0, true);
        int64_t no, R;
        double *buf = slices(x, 7u, &no, &R);
        CHECK(a && cg_tensor_ndim(a) == 0 && tt_get(a, 0) == (double)ref_arg(true, buf, R));
        CHECK(ak && cg_tensor_ndim(ak) == 3 && cg_tensor_numel(ak) == 1 && tt_get(ak, 0) == (double)ref_arg(false, buf, R));
        free(buf);
        cg_tensor_release(a);
        cg_tensor_release(ak);
        free(vals);
        cg_tensor_release(base);
        cg_tensor_release(x0);
        cg_tensor_release(x);
    }
}

TEST(reduce_nan_propagation) {
    double v[6] = {1, NAN, 5, 2, NAN, -1};
    int64_t sh[2] = {2, 3};
    for (int k = 0; k < 4; k++) {
        cg_tensor *x = tt_tensor(k_float_dtypes[k], 2, sh, v);
        cg_tensor *m = cg_max(x), *mn = cg_min(x), *am = cg_amax(x, 0, NULL, false);
        int64_t d1 = 1;
        cg_tensor *ar = cg_amin(x, 1, &d1, false);
        CHECK(m && isnan(tt_get(m, 0)) && mn && isnan(tt_get(mn, 0)) && am && isnan(tt_get(am, 0)));
        CHECK(ar && isnan(tt_get(ar, 0)) && isnan(tt_get(ar, 1)));
        cg_tensor *vals = NULL, *idx = NULL;
        CHECK_OK(cg_max_dim(x, 1, false, &vals, &idx));
        CHECK(vals && isnan(tt_get(vals, 0)) && tt_get(idx, 0) == 1 && tt_get(idx, 1) == 1);
        cg_tensor_release(vals);
        cg_tensor_release(idx);
        CHECK_OK(cg_min_dim(x, 0, false, &vals, &idx));
        CHECK(vals && tt_get(idx, 0) == 0 && tt_get(idx, 1) == 0 && tt_get(idx, 2) == 1 && tt_get(vals, 2) == -1);
        cg_tensor *a = cg_argmax(x, false, 0, false);
        CHECK(a && tt_get(a, 0) == 1);
        cg_tensor *n = cg_norm(x, INFINITY, 0, NULL, false), *s = cg_sum(x, 0, NULL, false);
        CHECK(n && isnan(tt_get(n, 0)) && s && isnan(tt_get(s, 0)));
        cg_tensor *ts[] = {x, m, mn, am, ar, vals, idx, a, n, s};
        for (int i = 0; i < 10; i++) cg_tensor_release(ts[i]);
    }
}

/* all / any of floats test each value against zero: fractions and NaN are true */
TEST(reduce_all_any_float_fractions) {
    double v[4] = {0.3, -0.25, NAN, 0.5};
    int64_t sh[1] = {4};
    for (int k = 0; k < 4; k++) {
        cg_tensor *x = tt_tensor(k_float_dtypes[k], 1, sh, v);
        cg_tensor *al = cg_all(x, 0, NULL, false), *an = cg_any(x, 0, NULL, false);
        CHECK(al && tt_get(al, 0) == 1 && an && tt_get(an, 0) == 1);
        cg_tensor *ts[] = {x, al, an};
        for (int i = 0; i < 3; i++) cg_tensor_release(ts[i]);
    }
}

/* ---------------------------------------------------------------- 0-d and empty */

TEST(reduce_zero_dim_inputs) {
    cg_tensor *x = cg_scalar(-2.5, CG_DTYPE_F64);
    int64_t d0 = 0, dm = -1;
    rop ops[] = {R_SUM, R_MEAN, R_PROD, R_AMAX, R_AMIN, R_LSE};
    for (int i = 0; i < 6; i++) {
        check_value(ops[i], x, 0, NULL, false, 0);
        check_value(ops[i], x, 1, &d0, true, 0);
        check_value(ops[i], x, 1, &dm, false, 0);
    }
    check_value(R_VAR, x, 0, NULL, false, 1); /* nan */
    check_value(R_VAR, x, 0, NULL, false, 0); /* 0 */
    check_value(R_STD, x, 1, &dm, false, 0);
    check_value(R_NORM, x, 0, NULL, false, 3);
    check_value(R_NORM, x, 0, NULL, false, INFINITY);
    check_value(R_NZ, x, 0, NULL, false, 0);
    cg_tensor *v = NULL, *i = NULL;
    CHECK_OK(cg_max_dim(x, -1, false, &v, &i));
    CHECK(v && cg_tensor_ndim(v) == 0 && tt_get(v, 0) == -2.5 && tt_get(i, 0) == 0);
    cg_tensor_release(v);
    cg_tensor_release(i);
    cg_tensor *a = cg_argmin(x, true, 0, true);
    CHECK(a && cg_tensor_ndim(a) == 0 && tt_get(a, 0) == 0);
    cg_tensor_release(a);
    CHECK_ERR(cg_sum(x, 1, (int64_t[]){1}, false) == NULL, CG_ERR_INDEX, "out of range");
    CHECK_ERR(cg_max_dim(x, 2, false, &v, &i) != CG_OK, CG_ERR_INDEX, "out of range");
    cg_tensor_release(x);
}

TEST(reduce_empty_inputs) {
    int64_t sh[2] = {0, 3}, d0 = 0, d1 = 1;
    cg_tensor *x = cg_zeros(2, sh, CG_DTYPE_F32, cg_cpu());
    cg_tensor *s = cg_sum(x, 0, NULL, false), *s0 = cg_sum(x, 1, &d0, false), *s1 = cg_sum(x, 1, &d1, true);
    CHECK(s && tt_get(s, 0) == 0 && s0 && cg_tensor_numel(s0) == 3 && tt_get(s0, 2) == 0);
    CHECK(s1 && cg_tensor_ndim(s1) == 2 && cg_tensor_shape(s1)[0] == 0 && cg_tensor_shape(s1)[1] == 1);
    cg_tensor *p = cg_prod(x, 1, &d0, false), *m = cg_mean(x, 0, NULL, false), *m1 = cg_mean(x, 1, &d1, false);
    CHECK(p && tt_get(p, 1) == 1 && m && isnan(tt_get(m, 0)) && m1 && cg_tensor_numel(m1) == 0);
    cg_tensor *l = cg_logsumexp(x, 1, &d0, false), *n = cg_norm(x, 2, 0, NULL, false), *n1 = cg_norm(x, 1, 1, &d0, false);
    CHECK(l && tt_get(l, 0) == -INFINITY && n && tt_get(n, 0) == 0 && n1 && tt_get(n1, 0) == 0);
    cg_tensor *va = cg_var(x, 0, NULL, 1, false), *c = cg_count_nonzero(x, 0, NULL);
    CHECK(va && isnan(tt_get(va, 0)) && c && tt_get(c, 0) == 0);
    cg_tensor *a1 = cg_amax(x, 1, &d1, false); /* reducing size-3 dims of zero rows: fine, empty result */
    CHECK(a1 && cg_tensor_numel(a1) == 0 && cg_tensor_shape(a1)[0] == 0);
    CHECK_ERR(cg_amax(x, 1, &d0, false) == NULL, CG_ERR_INDEX, "[amax] cannot reduce over a zero-size dimension");
    CHECK_ERR(cg_amin(x, 0, NULL, false) == NULL, CG_ERR_INDEX, "zero-size");
    CHECK_ERR(cg_max(x) == NULL, CG_ERR_INDEX, "[max]");
    CHECK_ERR(cg_argmax(x, false, 0, false) == NULL, CG_ERR_INDEX, "[argmax]");
    CHECK_ERR(cg_norm(x, INFINITY, 0, NULL, false) == NULL, CG_ERR_INDEX, "[norm]");
    cg_tensor *v = NULL, *i = NULL;
    CHECK_ERR(cg_min_dim(x, 0, false, &v, &i) != CG_OK, CG_ERR_INDEX, "[min]");
    CHECK(v == NULL && i == NULL);
    CHECK_OK(cg_max_dim(x, 1, false, &v, &i));
    CHECK(v && cg_tensor_numel(v) == 0 && i && cg_tensor_numel(i) == 0);
    cg_tensor *ts[] = {x, s, s0, s1, p, m, m1, l, n, n1, va, c, a1, v, i};
    for (int k = 0; k < 15; k++) cg_tensor_release(ts[k]);
    /* integer empties: sum 0 / prod 1 in int64 */
    cg_tensor *xi = cg_zeros(2, sh, CG_DTYPE_I32, cg_cpu());
    cg_tensor *si = cg_sum(xi, 0, NULL, false), *pi = cg_prod(xi, 0, NULL, false);
    CHECK(si && cg_tensor_dtype(si) == CG_DTYPE_I64 && tt_get(si, 0) == 0);
    CHECK(pi && cg_tensor_dtype(pi) == CG_DTYPE_I64 && tt_get(pi, 0) == 1);
    cg_tensor_release(xi);
    cg_tensor_release(si);
    cg_tensor_release(pi);
}

TEST(reduce_var_std_degenerate_correction) {
    double v[3] = {1, 2, 4};
    int64_t s3 = 3;
    cg_tensor *x = tt_tensor(CG_DTYPE_F64, 1, &s3, v);
    cg_tensor *a = cg_var(x, 0, NULL, 3, false), *b = cg_var(x, 0, NULL, 5, false), *c = cg_std(x, 0, NULL, 0, false);
    CHECK(a && isinf(tt_get(a, 0)) && b && isinf(tt_get(b, 0)));
    CHECK_NEAR(tt_get(c, 0), sqrt(14.0 / 9.0), 1e-12);
    /* the gradient with N - correction <= 0 is inf (nan where x == mean), as PyTorch */
    cg_tensor_set_requires_grad(x, true);
    cg_tensor *y = cg_var(x, 0, NULL, 3, false);
    CHECK_OK(cg_backward(y, NULL, false, false));
    cg_tensor *g = cg_tensor_grad(x);
    CHECK(g && isinf(tt_get(g, 0)) && isinf(tt_get(g, 2)));
    double w[3] = {2, 2, 2};
    cg_tensor *z = tt_tensor(CG_DTYPE_F64, 1, &s3, w);
    cg_tensor_set_requires_grad(z, true);
    cg_tensor *sz = cg_std(z, 0, NULL, 1, false); /* std == 0: gradient 0 */
    CHECK_OK(cg_backward(sz, NULL, false, false));
    CHECK(cg_tensor_grad(z) && tt_get(cg_tensor_grad(z), 1) == 0);
    cg_tensor *ts[] = {x, a, b, c, y, z, sz};
    for (int i = 0; i < 7; i++) cg_tensor_release(ts[i]);
}

/* ---------------------------------------------------------------- gradients */

typedef struct gctx {
    rop op;
    int nd;
    int64_t dims[3];
    bool keep;
    double param;
} gctx;

static cg_tensor *gfn(cg_tensor *const *in, void *p) {
    gctx *c = p;
    return call(c->op, in[0], c->nd, c->nd ? c->dims : NULL, c->keep, c->param);
}

/* float64 input with |x| in [0.2, 1] and mixed signs, optionally non-contiguous */
static cg_tensor *grad_input(int nd, const int64_t *sh, unsigned seed, bool noncontig, bool positive) {
    cg_tensor *u = tt_rand(CG_DTYPE_F64, nd, sh, 0.2, 1.0, seed);
    int64_t n = cg_tensor_numel(u);
    double *v = malloc(sizeof(double) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) v[i] = tt_get(u, i) * (!positive && i % 3 == 1 ? -1 : 1);
    cg_tensor *t = tt_tensor(CG_DTYPE_F64, nd, sh, v);
    free(v);
    cg_tensor_release(u);
    if (noncontig) {
        cg_tensor *c = tt_noncontig(t);
        cg_tensor_release(t);
        t = c;
    }
    cg_tensor_set_requires_grad(t, true);
    return t;
}

static void grad_check(rop op, cg_tensor *x, int nd, const int64_t *dims, bool keep, double param, bool second) {
    gctx c = {op, nd, {0, 0, 0}, keep, param};
    for (int i = 0; i < nd; i++) c.dims[i] = dims[i];
    bool a = tt_gradcheck(gfn, &c, 1, &x, 1e-6, 1e-6, 1e-5);
    CHECK_MSG(a, "gradcheck %s nd=%d keep=%d p=%g", k_names[op], nd, keep, param);
    if (second && a) {
        bool b = tt_gradgradcheck(gfn, &c, 1, &x, 1e-6, 1e-6, 1e-5);
        CHECK_MSG(b, "gradgradcheck %s nd=%d keep=%d p=%g", k_names[op], nd, keep, param);
    }
}

/* a few dim sets per op on a (2,3,4) input, contiguous and not, plus 0-d and empty */
static void grad_suite(rop op, double param, bool positive) {
    int64_t sh[3] = {2, 3, 4};
    const int64_t d_1[1] = {1}, d_neg[2] = {-1, 0};
    for (int nc = 0; nc < 2; nc++) {
        cg_tensor *x = grad_input(3, sh, 50 + (unsigned)op, nc, positive);
        bool single_only = op == R_MAXDIM || op == R_MINDIM;
        bool all_only = op == R_MAX || op == R_MIN;
        if (all_only) {
            grad_check(op, x, 0, NULL, false, param, true);
        } else {
            grad_check(op, x, 1, d_1, nc == 0, param, true);
            if (!single_only) {
                grad_check(op, x, 2, d_neg, nc == 1, param, nc == 0);
                grad_check(op, x, 0, NULL, false, param, nc == 0);
            }
        }
        cg_tensor_release(x);
    }
    /* 0-d */
    cg_tensor *s = grad_input(0, NULL, 60, false, positive);
    int64_t d0 = 0;
    /* one element: var / std with correction >= 1 are nan; check them with correction 0 */
    double p0 = (op == R_VAR || op == R_STD) ? 0 : param;
    grad_check(op, s, (op == R_MAXDIM || op == R_MINDIM) ? 1 : 0, &d0, false, p0, true);
    cg_tensor_release(s);
    /* empty (no identity needed: reduce the non-empty dim) */
    if (op != R_MAX && op != R_MIN) {
        int64_t es[2] = {0, 3}, d1 = 1;
        cg_tensor *e = grad_input(2, es, 61, false, positive);
        grad_check(op, e, 1, &d1, false, param, true);
        cg_tensor_release(e);
    }
}

TEST(reduce_grad_sum_mean) {
    grad_suite(R_SUM, 0, false);
    grad_suite(R_MEAN, 0, false);
}
TEST(reduce_grad_prod) { grad_suite(R_PROD, 0, false); }
TEST(reduce_grad_amax_amin) {
    grad_suite(R_AMAX, 0, false);
    grad_suite(R_AMIN, 0, false);
}
TEST(reduce_grad_max_min_dim_and_all) {
    grad_suite(R_MAXDIM, 0, false);
    grad_suite(R_MINDIM, 0, false);
    grad_suite(R_MAX, 0, false);
    grad_suite(R_MIN, 0, false);
}
TEST(reduce_grad_var_std) {
    grad_suite(R_VAR, 1, false);
    grad_suite(R_VAR, 0, false);
    grad_suite(R_STD, 1, false);
    grad_suite(R_STD, 0.5, false);
}
TEST(reduce_grad_logsumexp) { grad_suite(R_LSE, 0, false); }
TEST(reduce_grad_norm) {
    const double ps[] = {2, 1, 3, 1.5, 0.5, -1, 4, INFINITY, -INFINITY};
    for (int i = 0; i < 9; i++) grad_suite(R_NORM, ps[i], false);
}

/* prod with zeros: one zero and several zeros in a slice, first and second order */
TEST(reduce_prod_zeros) {
    double v[12] = {2, 0, 3, 0.5,   /* one zero */
                    0, 1.5, 0, 2,   /* two zeros */
                    1, 2, -1, 3};   /* none */
    int64_t sh[2] = {3, 4}, d1 = 1, d0 = 0;
    cg_tensor *x = tt_tensor(CG_DTYPE_F64, 2, sh, v);
    cg_tensor_set_requires_grad(x, true);
    cg_tensor *y = cg_prod(x, 1, &d1, false), *ys = cg_sum(y, 0, NULL, false);
    CHECK_OK(cg_backward(ys, NULL, false, false));
    const double want[12] = {0, 3, 0, 0, 0, 0, 0, 0, -6, -3, 6, -2};
    cg_tensor *g = cg_tensor_grad(x);
    for (int i = 0; g && i < 12; i++) CHECK_NEAR(tt_get(g, i), want[i], 1e-12);
    grad_check(R_PROD, x, 1, &d1, false, 0, true);
    grad_check(R_PROD, x, 1, &d0, true, 0, true);
    grad_check(R_PROD, x, 0, NULL, false, 0, true);
    cg_tensor *nc = tt_noncontig(x);
    grad_check(R_PROD, nc, 1, &d1, false, 0, true);
    /* second derivative with one zero: d2/dx0 dx1 prod(x0, x1, x2) = x2 */
    double w[3] = {0, 5, 7};
    int64_t s3 = 3;
    cg_tensor *z = tt_tensor(CG_DTYPE_F64, 1, &s3, w);
    cg_tensor_set_requires_grad(z, true);
    cg_tensor *pz = cg_prod(z, 0, NULL, false), *g1 = NULL, *h = NULL;
    CHECK_OK(cg_autograd_grad(1, &pz, NULL, 1, &z, true, true, false, &g1));
    CHECK(g1 && tt_get(g1, 0) == 35 && tt_get(g1, 1) == 0 && tt_get(g1, 2) == 0);
    cg_tensor *sel = g1 ? cg_select(g1, 0, 1) : NULL; /* d prod / dx1 = x0 x2 */
    CHECK_OK(cg_autograd_grad(1, &sel, NULL, 1, &z, true, false, false, &h));
    CHECK(h && tt_get(h, 0) == 7 && tt_get(h, 1) == 0 && tt_get(h, 2) == 0);
    cg_tensor *ts[] = {x, y, ys, nc, z, pz, g1, sel, h};
    for (int i = 0; i < 9; i++) cg_tensor_release(ts[i]);
}

/* ties: amax / max() split the gradient evenly; max_dim picks the first */
TEST(reduce_tie_gradients) {
    double v[6] = {3, 1, 3, 3, 0, 2};
    int64_t sh[2] = {2, 3}, d1 = 1;
    cg_tensor *x = tt_tensor(CG_DTYPE_F64, 2, sh, v);
    cg_tensor_set_requires_grad(x, true);
    cg_tensor *a = cg_amax(x, 1, &d1, false), *as = cg_sum(a, 0, NULL, false);
    CHECK_OK(cg_backward(as, NULL, false, false));
    const double wa[6] = {0.5, 0, 0.5, 1, 0, 0};
    for (int i = 0; i < 6; i++) CHECK_NEAR(tt_get(cg_tensor_grad(x), i), wa[i], 1e-15);
    CHECK(strcmp(cg_node_name(cg_tensor_grad_fn(a)), "AmaxBackward0") == 0);
    cg_tensor_set_grad(x, NULL);
    cg_tensor *m = cg_max(x);
    CHECK_OK(cg_backward(m, NULL, false, false));
    const double wm[6] = {1.0 / 3, 0, 1.0 / 3, 1.0 / 3, 0, 0};
    for (int i = 0; i < 6; i++) CHECK_NEAR(tt_get(cg_tensor_grad(x), i), wm[i], 1e-15);
    cg_tensor_set_grad(x, NULL);
    cg_tensor *vals = NULL, *idx = NULL;
    CHECK_OK(cg_max_dim(x, 1, true, &vals, &idx));
    cg_tensor *vs = cg_sum(vals, 0, NULL, false);
    CHECK_OK(cg_backward(vs, NULL, false, false));
    const double wd[6] = {1, 0, 0, 1, 0, 0};
    for (int i = 0; i < 6; i++) CHECK_NEAR(tt_get(cg_tensor_grad(x), i), wd[i], 0);
    CHECK(strcmp(cg_node_name(cg_tensor_grad_fn(vals)), "MaxBackward0") == 0);
    CHECK(!cg_tensor_requires_grad(idx));
    /* max() of a NaN-holding tensor: the gradient goes to the NaN elements */
    double n[4] = {1, NAN, 2, NAN};
    int64_t s4 = 4;
    cg_tensor *xn = tt_tensor(CG_DTYPE_F64, 1, &s4, n);
    cg_tensor_set_requires_grad(xn, true);
    cg_tensor *mn = cg_max(xn);
    CHECK_OK(cg_backward(mn, NULL, false, false));
    cg_tensor *gn = cg_tensor_grad(xn);
    CHECK(gn && tt_get(gn, 0) == 0 && tt_get(gn, 1) == 0.5 && tt_get(gn, 3) == 0.5);
    /* argmax is not differentiable */
    cg_tensor *am = cg_argmax(x, false, 0, false);
    CHECK(am && !cg_tensor_requires_grad(am) && cg_tensor_grad_fn(am) == NULL);
    cg_tensor *ts[] = {x, a, as, m, vals, idx, vs, xn, mn, am};
    for (int i = 0; i < 10; i++) cg_tensor_release(ts[i]);
}

TEST(reduce_norm_zero_gradient) {
    int64_t sh[2] = {2, 3}, d1 = 1;
    cg_tensor *x = cg_zeros(2, sh, CG_DTYPE_F64, cg_cpu());
    cg_tensor_set_requires_grad(x, true);
    const double ps[] = {2, 3, 1.5, 0};
    for (int i = 0; i < 4; i++) {
        cg_tensor *n = cg_norm(x, ps[i], 1, &d1, false), *s = cg_sum(n, 0, NULL, false);
        CHECK_OK(cg_backward(s, NULL, false, false));
        cg_tensor *g = cg_tensor_grad(x);
        for (int k = 0; g && k < 6; k++) CHECK_MSG(tt_get(g, k) == 0, "norm p=%g grad at zero = %g", ps[i], tt_get(g, k));
        cg_tensor_set_grad(x, NULL);
        cg_tensor_release(n);
        cg_tensor_release(s);
    }
    cg_tensor_release(x);
}

/* ---------------------------------------------------------------- threads, accuracy, errors */

TEST(reduce_thread_count_independent) {
    int prev = cg_get_num_threads();
    int64_t sh[2] = {512, 1024}, d0 = 0, d1 = 1;
    cg_tensor *x = tt_rand(CG_DTYPE_F32, 2, sh, -1, 1, 71);
    cg_tensor *r[2][7];
    for (int t = 0; t < 2; t++) {
        cg_set_num_threads(t + 1);
        r[t][0] = cg_sum(x, 0, NULL, false);
        r[t][1] = cg_sum(x, 1, &d0, false);
        r[t][2] = cg_mean(x, 1, &d1, false);
        r[t][3] = cg_var(x, 0, NULL, 1, false);
        r[t][4] = cg_norm(x, 2, 1, &d0, false);
        r[t][5] = cg_logsumexp(x, 0, NULL, false);
        r[t][6] = cg_argmax(x, true, 1, false);
    }
    cg_set_num_threads(prev);
    for (int i = 0; i < 7; i++) {
        CHECK_MSG(tt_maxdiff(r[0][i], r[1][i]) == 0, "result %d depends on the thread count", i);
        cg_tensor_release(r[0][i]);
        cg_tensor_release(r[1][i]);
    }
    /* accuracy: float32 input, double accumulation */
    int64_t no, R;
    double *buf = slices(x, 3u, &no, &R);
    cg_tensor *s = cg_sum(x, 0, NULL, false);
    CHECK_NEAR(tt_get(s, 0), ref1(R_SUM, buf, R, 0), 1e-4);
    free(buf);
    cg_tensor_release(s);
    cg_tensor_release(x);
}

TEST(reduce_errors) {
    int64_t sh[3] = {2, 3, 4};
    cg_tensor *x = tt_rand(CG_DTYPE_F32, 3, sh, -1, 1, 81);
    int64_t bad[1] = {3}, badn[1] = {-4}, dup[2] = {1, -2};
    CHECK_ERR(cg_sum(x, 1, bad, false) == NULL, CG_ERR_INDEX, "dimension out of range");
    CHECK_ERR(cg_mean(x, 1, badn, false) == NULL, CG_ERR_INDEX, "out of range");
    CHECK_ERR(cg_amax(x, 2, dup, false) == NULL, CG_ERR_VALUE, "multiple times");
    CHECK_ERR(cg_var(x, 2, dup, 1, false) == NULL, CG_ERR_VALUE, "multiple times");
    CHECK_ERR(cg_norm(x, 2, 1, bad, false) == NULL, CG_ERR_INDEX, "[norm]");
    CHECK_ERR(cg_argmax(x, true, 3, false) == NULL, CG_ERR_INDEX, "[argmax]");
    CHECK_ERR(cg_norm(x, NAN, 0, NULL, false) == NULL, CG_ERR_VALUE, "nan");
    CHECK_ERR(cg_var(x, 0, NULL, INFINITY, false) == NULL, CG_ERR_VALUE, "correction");
    cg_tensor *v, *i;
    CHECK_ERR(cg_min_dim(x, -4, false, &v, &i) != CG_OK, CG_ERR_INDEX, "[min]");
    CHECK_ERR(cg_max_dim(x, 0, false, NULL, NULL) != CG_OK, CG_ERR_VALUE, "NULL");
    CHECK_ERR(cg_prod(NULL, 0, NULL, false) == NULL, CG_ERR_VALUE, "NULL");
    CHECK_ERR(cg_max(NULL) == NULL, CG_ERR_VALUE, "NULL");
    int64_t s1 = 2;
    cg_tensor *xi = cg_ones(1, &s1, CG_DTYPE_I64, cg_cpu());
    CHECK_ERR(cg_mean(xi, 0, NULL, false) == NULL, CG_ERR_DTYPE, "[mean] not supported for dtype int64");
    cg_tensor_release(xi);
    /* meta tensors: shapes only */
    cg_tensor *m = cg_empty(3, sh, CG_DTYPE_F32, cg_meta());
    int64_t last = -1;
    cg_tensor *r = cg_std(m, 1, &last, 1, true);
    CHECK(r && cg_tensor_ndim(r) == 3 && cg_tensor_shape(r)[2] == 1 && cg_device_eq(cg_tensor_device(r), cg_meta()));
    cg_tensor_release(r);
    cg_tensor_release(m);
    cg_tensor_release(x);
}

/* Note [Chunked reductions]: a large full reduction runs in fixed chunks; the
 * result is bitwise identical for 1 and 2 threads and accurate. */
TEST(reduce_full_sum_chunked_threads_identical) {
    int64_t n[1] = {1000003};
    cg_tensor *x = tt_rand(CG_DTYPE_F32, 1, n, -1, 1, 77);
    int prev = cg_get_num_threads();
    const char *names[7] = {"sum", "prod", "amax", "any", "mean", "var", "std"};
    for (int k = 0; k < 7; k++) {
        double v[2];
        for (int t = 0; t < 2; t++) {
            cg_set_num_threads(t + 1);
            cg_tensor *r = k == 0 ? cg_sum(x, 0, NULL, false) : k == 1 ? cg_prod(x, 0, NULL, false)
                           : k == 2 ? cg_amax(x, 0, NULL, false) : k == 3 ? cg_any(x, 0, NULL, false)
                           : k == 4 ? cg_mean(x, 0, NULL, false) : k == 5 ? cg_var(x, 0, NULL, 1, false)
                                    : cg_std(x, 0, NULL, 1, false);
            CHECK_NN(r);
            v[t] = tt_get(r, 0);
            cg_tensor_release(r);
        }
        CHECK_MSG(v[0] == v[1] || (isnan(v[0]) && isnan(v[1])), "[%s] 1 thread %.17g vs 2 threads %.17g", names[k], v[0], v[1]);
    }
    cg_set_num_threads(prev);
    double ref = 0, ss = 0;
    for (int64_t i = 0; i < n[0]; i++) ref += tt_get(x, i);
    for (int64_t i = 0; i < n[0]; i++) ss += (tt_get(x, i) - ref / (double)n[0]) * (tt_get(x, i) - ref / (double)n[0]);
    cg_tensor *s = cg_sum(x, 0, NULL, false), *m = cg_mean(x, 0, NULL, false), *v = cg_var(x, 0, NULL, 1, false);
    CHECK_NEAR(tt_get(s, 0), ref, 1e-3);
    CHECK_NEAR(tt_get(m, 0), ref / (double)n[0], 1e-8);
    CHECK_NEAR(tt_get(v, 0), ss / (double)(n[0] - 1), 1e-6);
    cg_tensor_release(s);
    cg_tensor_release(m);
    cg_tensor_release(v);
    cg_tensor_release(x);
}

/* Note [Column reductions]: reducing a leading or middle dim folds whole rows
 * into per-column accumulators; each output is the serial fold in row order
 * (double accumulation) bit for bit, whatever the thread count. */
TEST(reduce_column_folds_match_serial) {
    int64_t sh[3] = {3, 701, 300}, d1 = 1;
    cg_tensor *x = tt_rand(CG_DTYPE_F32, 3, sh, -2, 2, 91);
    const float *px = (const float *)cg_tensor_data(x);
    int prev = cg_get_num_threads();
    for (int t = 1; t <= 2; t++) {
        cg_set_num_threads(t);
        cg_tensor *r[5] = {cg_sum(x, 1, &d1, false), cg_mean(x, 1, &d1, false), cg_var(x, 1, &d1, 1, false),
                           cg_amax(x, 1, &d1, false), cg_prod(x, 1, &d1, false)};
        int bad = 0;
        for (int64_t a = 0; a < sh[0]; a++)
            for (int64_t j = 0; j < sh[2]; j++) {
                double sm = 0, ss = 0, pr = 1;
                float mx = -INFINITY;
                for (int64_t i = 0; i < sh[1]; i++) {
                    float v = px[(a * sh[1] + i) * sh[2] + j];
                    sm += v, pr *= v, mx = v > mx ? v : mx;
                }
                double mean = sm / (double)sh[1];
                for (int64_t i = 0; i < sh[1]; i++) {
                    double d = px[(a * sh[1] + i) * sh[2] + j] - mean;
                    ss += d * d;
                }
                float want[5] = {(float)sm, (float)mean, (float)(ss / (double)(sh[1] - 1)), mx, (float)pr};
                for (int k = 0; k < 5; k++)
                    if (!r[k] || tt_get(r[k], a * sh[2] + j) != (double)want[k]) bad++;
            }
        CHECK_MSG(bad == 0, "%d column-fold results differ from the serial fold (%d threads)", bad, t);
        for (int k = 0; k < 5; k++) cg_tensor_release(r[k]);
    }
    cg_set_num_threads(prev);
    cg_tensor_release(x);
}
