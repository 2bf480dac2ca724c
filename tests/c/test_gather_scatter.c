/* test_gather_scatter.c — gather, scatter, scatter_add and scatter_reduce:
 * values against a plain-loop reference (every dim of a 3-D input, index
 * smaller than the input, src larger than the index, duplicates resolved in
 * index order, non-contiguous operands, every dtype, 0-d, empty), gradcheck +
 * gradgradcheck, tie splitting of amax/amin, and the error cases. */
#include "test.h"

#include <stdlib.h>
#include <string.h>

enum { M_COPY, M_SUM, M_PROD, M_MEAN, M_AMAX, M_AMIN, M_GATHER };
static const char *const k_reduce[] = {"copy", "sum", "prod", "mean", "amax", "amin"};

static int64_t flat3(const int64_t *sh, int64_t a, int64_t b, int64_t c) { return (a * sh[1] + b) * sh[2] + c; }

/* Plain-loop reference on 3-D row-major arrays, walking the index in order. */
static void ref_op(int mode, bool incl, bool is_int, int dim, const int64_t *xs, const double *x, const int64_t *is,
                   const double *idx, const int64_t *ss, const double *src, double *out) {
    int64_t xn = xs[0] * xs[1] * xs[2];
    int *cnt = calloc((size_t)xn, sizeof(int));
    if (mode != M_GATHER) memcpy(out, x, sizeof(double) * (size_t)xn);
    for (int64_t a = 0; a < is[0]; a++)
        for (int64_t b = 0; b < is[1]; b++)
            for (int64_t c = 0; c < is[2]; c++) {
                int64_t p[3] = {a, b, c}, i = flat3(is, a, b, c);
                p[dim] = (int64_t)idx[i];
                int64_t t = flat3(xs, p[0], p[1], p[2]);
                if (mode == M_GATHER) {
                    out[i] = x[t];
                    continue;
                }
                double s = src[flat3(ss, a, b, c)], *o = &out[t];
                bool first = cnt[t]++ == 0 && !incl;
                if (mode == M_COPY || first) *o = s;
                else if (mode == M_SUM || mode == M_MEAN) *o += s;
                else if (mode == M_PROD) *o *= s;
                else if (mode == M_AMAX) *o = (isnan(s) || s > *o) ? s : *o;
                else *o = (isnan(s) || s < *o) ? s : *o;
            }
    if (mode == M_MEAN)
        for (int64_t t = 0; t < xn; t++) {
            int n = cnt[t] + (incl ? 1 : 0);
            if (n > 1) out[t] = is_int ? floor(out[t] / n) : out[t] / n;
        }
    free(cnt);
}

static double *vals(const cg_tensor *t) {
    int64_t n = cg_tensor_numel(t);
    double *v = malloc(sizeof(double) * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) v[i] = tt_get(t, i);
    return v;
}

/* index of shape is with values in [0, size), pseudo-random with duplicates */
static cg_tensor *rand_index(const int64_t *is, int64_t size, unsigned seed) {
    double v[64];
    uint64_t s = seed;
    for (int i = 0; i < is[0] * is[1] * is[2]; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        v[i] = (double)((s >> 33) % (uint64_t)size);
    }
    return tt_tensor(CG_DTYPE_I64, 3, is, v);
}
/* index of shape is whose values are distinct along dim (a shifted arange) */
static cg_tensor *perm_index(const int64_t *is, int dim, int64_t size) {
    double v[64];
    for (int64_t a = 0; a < is[0]; a++)
        for (int64_t b = 0; b < is[1]; b++)
            for (int64_t c = 0; c < is[2]; c++) {
                int64_t p[3] = {a, b, c};
                v[flat3(is, a, b, c)] = (double)((p[dim] + a + 2 * b + c) % size);
            }
    return tt_tensor(CG_DTYPE_I64, 3, is, v);
}

/* values: quarters in [-2, 2] (exact in every float dtype), small ints, or bools */
static cg_tensor *data3(cg_dtype dt, const int64_t *sh, unsigned seed, bool noncontig) {
    double v[64];
    uint64_t s = seed;
    for (int i = 0; i < sh[0] * sh[1] * sh[2]; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        int r = (int)((s >> 33) % 9) - 4;
        v[i] = dt == CG_DTYPE_BOOL ? (r > 0) : cg_dtype_is_floating(dt) ? r / 2.0 : r;
        if (dt == CG_DTYPE_U8) v[i] = r + 4;
    }
    cg_tensor *t = tt_tensor(dt, 3, sh, v);
    if (!noncontig) return t;
    cg_tensor *nc = tt_noncontig(t);
    cg_tensor_release(t);
    return nc;
}

static const int64_t k_xs[3] = {3, 4, 5}, k_is[3] = {2, 3, 4}, k_ss[3] = {3, 4, 5};

TEST(gather_scatter_values_all_dims_modes_dtypes) {
    const cg_dtype dts[] = {CG_DTYPE_F64, CG_DTYPE_F32, CG_DTYPE_F16, CG_DTYPE_BF16, CG_DTYPE_I64, CG_DTYPE_I32,
                            CG_DTYPE_I8, CG_DTYPE_U8, CG_DTYPE_BOOL};
    double out[64], ref[64];
    (void)out;
    for (size_t di = 0; di < sizeof dts / sizeof *dts; di++) {
        cg_dtype dt = dts[di];
        bool is_int = !cg_dtype_is_floating(dt), is_bool = dt == CG_DTYPE_BOOL;
        double tol = dt == CG_DTYPE_F16 || dt == CG_DTYPE_BF16 ? 2e-2 : dt == CG_DTYPE_F32 ? 1e-6 : 0;
        for (int nc = 0; nc < 2; nc++) {
            cg_tensor *x = data3(dt, k_xs, 3 + (unsigned)di, nc), *src = data3(dt, k_ss, 40 + (unsigned)di, !nc);
            double *xv = vals(x), *sv = vals(src);
            for (int d = 0; d < 3; d++) {
                cg_tensor *idx = rand_index(k_is, k_xs[d], 7 + (unsigned)d);
                if (nc) { /* non-contiguous index too */
                    cg_tensor *t = tt_noncontig(idx);
                    cg_tensor_release(idx);
                    idx = t;
                }
                double *iv = vals(idx);
                cg_tensor *g = cg_gather(x, d - 3, idx);
                ref_op(M_GATHER, true, is_int, d, k_xs, xv, k_is, iv, k_ss, sv, ref);
                cg_tensor *r = tt_tensor(CG_DTYPE_F64, 3, k_is, ref);
                CHECK_MSG(g && tt_maxdiff(g, r) <= tol, "gather %s dim %d", cg_dtype_name(dt), d);
                CHECK(g && cg_tensor_dtype(g) == dt);
                cg_tensor_release(r), cg_tensor_release(g);
                for (int m = M_COPY; m <= M_AMIN; m++)
                    for (int incl = 0; incl < 2; incl++) {
                        if (m == M_COPY && !incl) continue;
                        if (is_bool && (m == M_MEAN)) continue;
                        cg_tensor *o = m == M_COPY ? cg_scatter(x, d, idx, src)
                                       : m == M_SUM && incl ? cg_scatter_add(x, d, idx, src)
                                                            : cg_scatter_reduce(x, d, idx, src, k_reduce[m], incl);
                        ref_op(m, incl, is_int, d, k_xs, xv, k_is, iv, k_ss, sv, ref);
                        for (int i = 0; i < 60; i++) {
                            if (is_bool) ref[i] = ref[i] != 0;
                            if (dt == CG_DTYPE_U8) ref[i] = fmod(ref[i], 256); /* uint8 products wrap */
                        }
                        r = tt_tensor(CG_DTYPE_F64, 3, k_xs, ref);
                        double mt = m == M_PROD || m == M_MEAN ? tol * 4 : tol;
                        CHECK_MSG(o && tt_maxdiff(o, r) <= mt * 8, "scatter %s %s incl %d dim %d nc %d: diff %g",
                                  k_reduce[m], cg_dtype_name(dt), incl, d, nc, tt_maxdiff(o, r));
                        CHECK(o && cg_tensor_dtype(o) == dt && cg_tensor_is_contiguous(o));
                        cg_tensor_release(r), cg_tensor_release(o);
                    }
                free(iv);
                cg_tensor_release(idx);
            }
            free(xv), free(sv);
            cg_tensor_release(x), cg_tensor_release(src);
        }
    }
}

TEST(gather_scatter_duplicates_in_index_order_and_nan) {
    int64_t n = 3, m = 4;
    double iv[4] = {0, 2, 0, 0}, sv[4] = {1, 2, 3, 4}, xv[3] = {10, 20, 30};
    cg_tensor *x = tt_tensor(CG_DTYPE_F32, 1, &n, xv), *idx = tt_tensor(CG_DTYPE_I64, 1, &m, iv);
    cg_tensor *src = tt_tensor(CG_DTYPE_F32, 1, &m, sv);
    cg_tensor *o = cg_scatter(x, 0, idx, src); /* last write wins */
    CHECK(o && tt_get(o, 0) == 4 && tt_get(o, 1) == 20 && tt_get(o, 2) == 2);
    cg_tensor_release(o);
    o = cg_scatter_reduce(x, 0, idx, src, "mean", false);
    CHECK(o && fabs(tt_get(o, 0) - 8.0 / 3) < 1e-6 && tt_get(o, 1) == 20 && tt_get(o, 2) == 2);
    cg_tensor_release(o);
    /* NaN propagates through amax / amin, from self or src */
    double sn[4] = {1, NAN, 3, 4}, xn[3] = {NAN, 20, 30};
    cg_tensor *srcn = tt_tensor(CG_DTYPE_F32, 1, &m, sn), *xnan = tt_tensor(CG_DTYPE_F32, 1, &n, xn);
    o = cg_scatter_reduce(x, 0, idx, srcn, "amax", true);
    CHECK(o && tt_get(o, 0) == 10 && isnan(tt_get(o, 2)));
    cg_tensor_release(o);
    o = cg_scatter_reduce(xnan, 0, idx, src, "amin", true);
    CHECK(o && isnan(tt_get(o, 0)) && tt_get(o, 2) == 2);
    cg_tensor_release(o);
    /* x is never modified */
    CHECK(tt_get(x, 0) == 10 && tt_get(x, 2) == 30);
    cg_tensor_release(srcn), cg_tensor_release(xnan);
    cg_tensor_release(x), cg_tensor_release(idx), cg_tensor_release(src);
}

TEST(gather_scatter_zero_dim_and_empty) {
    cg_tensor *x = cg_scalar(3, CG_DTYPE_F64), *s = cg_scalar(7, CG_DTYPE_F64), *i0 = cg_scalar(0, CG_DTYPE_I64);
    for (int d = -1; d <= 0; d++) {
        cg_tensor *g = cg_gather(x, d, i0), *o = cg_scatter(x, d, i0, s), *a = cg_scatter_add(x, d, i0, s);
        CHECK(g && cg_tensor_ndim(g) == 0 && tt_get(g, 0) == 3);
        CHECK(o && cg_tensor_ndim(o) == 0 && tt_get(o, 0) == 7);
        CHECK(a && cg_tensor_ndim(a) == 0 && tt_get(a, 0) == 10);
        cg_tensor_release(g), cg_tensor_release(o), cg_tensor_release(a);
    }
    cg_tensor *i1 = cg_scalar(1, CG_DTYPE_I64);
    CHECK_ERR(cg_gather(x, 0, i1) == NULL, CG_ERR_INDEX, "index 1 is out of bounds for dimension 0 with size 1");
    CHECK_ERR(cg_gather(x, 1, i0) == NULL, CG_ERR_INDEX, "dimension out of range");
    /* empty index: empty gather, scatter returns a copy */
    int64_t es[3] = {0, 3, 4}, xs[3] = {3, 4, 5};
    cg_tensor *ei = cg_zeros(3, es, CG_DTYPE_I64, cg_cpu()), *xx = data3(CG_DTYPE_F32, xs, 1, false);
    cg_tensor *g = cg_gather(xx, 1, ei), *o = cg_scatter_add(xx, 1, ei, ei == NULL ? NULL : xx);
    CHECK(g && cg_tensor_numel(g) == 0 && cg_tensor_shape(g)[1] == 3);
    CHECK(o && tt_maxdiff(o, xx) == 0 && cg_tensor_storage_id(o) != cg_tensor_storage_id(xx));
    cg_tensor_release(g), cg_tensor_release(o);
    /* empty input with empty index */
    cg_tensor *ex = cg_zeros(3, es, CG_DTYPE_F32, cg_cpu());
    g = cg_gather(ex, 0, ei);
    o = cg_scatter(ex, 2, ei, ex);
    CHECK(g && o && cg_tensor_numel(g) == 0 && cg_tensor_numel(o) == 0);
    cg_tensor_release(g), cg_tensor_release(o), cg_tensor_release(ex);
    cg_tensor_release(ei), cg_tensor_release(xx), cg_tensor_release(i1);
    cg_tensor_release(x), cg_tensor_release(s), cg_tensor_release(i0);
}

TEST(gather_scatter_errors) {
    cg_tensor *x = data3(CG_DTYPE_F32, k_xs, 2, false), *src = data3(CG_DTYPE_F32, k_ss, 3, false);
    int64_t is[3] = {2, 2, 2};
    double bad[8] = {0, 1, 2, 3, 0, 1, -1, 2}, big[8] = {0, 1, 2, 3, 0, 1, 4, 2};
    cg_tensor *ineg = tt_tensor(CG_DTYPE_I64, 3, is, bad), *ibig = tt_tensor(CG_DTYPE_I64, 3, is, big);
    CHECK_ERR(cg_gather(x, 1, ineg) == NULL, CG_ERR_INDEX, "index -1 is out of bounds for dimension 1 with size 4");
    CHECK_ERR(cg_gather(x, 1, ibig) == NULL, CG_ERR_INDEX, "index 4 is out of bounds for dimension 1 with size 4");
    CHECK_ERR(cg_scatter(x, 1, ineg, src) == NULL, CG_ERR_INDEX, "index -1 is out of bounds");
    CHECK_ERR(cg_scatter(x, 1, ibig, src) == NULL, CG_ERR_INDEX, "index 4 is out of bounds for dimension 1 with size 4");
    CHECK_ERR(cg_scatter_add(x, -2, ibig, src) == NULL, CG_ERR_INDEX, "index 4 is out of bounds");
    CHECK_ERR(cg_scatter_reduce(x, 1, ineg, src, "amax", false) == NULL, CG_ERR_INDEX, "index -1 is out of bounds");
    /* the process is alive and x untouched */
    cg_tensor *ok = cg_gather(x, 2, ibig);
    CHECK_NN(ok);
    cg_tensor_release(ok);
    cg_tensor *i32 = cg_zeros(3, is, CG_DTYPE_I32, cg_cpu()), *i64 = cg_zeros(3, is, CG_DTYPE_I64, cg_cpu());
    cg_tensor *s64 = cg_zeros(3, k_ss, CG_DTYPE_F64, cg_cpu());
    CHECK_ERR(cg_gather(x, 0, i32) == NULL, CG_ERR_DTYPE, "expected dtype int64 for index, got int32");
    CHECK_ERR(cg_scatter(x, 0, i64, s64) == NULL, CG_ERR_DTYPE, "dtype mismatch");
    int64_t i2[2] = {2, 2}, wide[3] = {2, 5, 2}, huge[3] = {4, 4, 6};
    cg_tensor *r2 = cg_zeros(2, i2, CG_DTYPE_I64, cg_cpu()), *iw = cg_zeros(3, wide, CG_DTYPE_I64, cg_cpu());
    cg_tensor *ih = cg_zeros(3, huge, CG_DTYPE_I64, cg_cpu());
    CHECK_ERR(cg_gather(x, 0, r2) == NULL, CG_ERR_SHAPE, "same number of dimensions");
    CHECK_ERR(cg_gather(x, 0, iw) == NULL, CG_ERR_SHAPE, "size does not match at dimension 1");
    cg_tensor *gw = cg_gather(x, 1, iw); /* larger along dim itself is fine for gather */
    CHECK(gw && cg_tensor_shape(gw)[1] == 5);
    cg_tensor_release(gw);
    CHECK_ERR(cg_scatter(x, 0, ih, src) == NULL, CG_ERR_SHAPE, "size does not match");
    CHECK_ERR(cg_scatter(x, 0, r2, src) == NULL, CG_ERR_SHAPE, "same number of dimensions");
    CHECK_ERR(cg_scatter_reduce(x, 0, i64, src, "max", true) == NULL, CG_ERR_VALUE, "reduce argument must be one of");
    CHECK_ERR(cg_scatter_reduce(x, 0, i64, src, NULL, true) == NULL, CG_ERR_VALUE, "reduce argument");
    CHECK_ERR(cg_gather(x, 3, i64) == NULL, CG_ERR_INDEX, "dimension out of range");
    CHECK_ERR(cg_gather(NULL, 0, i64) == NULL, CG_ERR_VALUE, "NULL");
    cg_tensor *b = cg_zeros(3, k_xs, CG_DTYPE_BOOL, cg_cpu());
    CHECK_ERR(cg_scatter_reduce(b, 0, i64, b, "mean", true) == NULL, CG_ERR_NOT_IMPLEMENTED, "bool");
    cg_tensor *ts[] = {x, src, ineg, ibig, i32, i64, s64, r2, iw, ih, b};
    for (int i = 0; i < 11; i++) cg_tensor_release(ts[i]);
}

/* ---------------------------------------------------------------- gradients */

typedef struct gctx {
    int mode;
    bool incl;
    int64_t dim;
    cg_tensor *index;
} gctx;

static cg_tensor *f_op(cg_tensor *const *in, void *p) {
    gctx *c = p;
    switch (c->mode) {
    case M_GATHER: return cg_gather(in[0], c->dim, c->index);
    case M_COPY: return cg_scatter(in[0], c->dim, c->index, in[1]);
    case M_SUM:
        if (c->incl) return cg_scatter_add(in[0], c->dim, c->index, in[1]);
        /* fallthrough */
    default: return cg_scatter_reduce(in[0], c->dim, c->index, in[1], k_reduce[c->mode], c->incl);
    }
}

static void grads(gctx *c, cg_tensor *x, cg_tensor *src, const char *what) {
    cg_tensor *in[2] = {x, src};
    int n = c->mode == M_GATHER ? 1 : 2;
    for (int i = 0; i < n; i++) cg_tensor_set_requires_grad(in[i], true);
    CHECK_MSG(tt_gradcheck(f_op, c, n, in, 1e-6, 1e-7, 1e-5), "%s gradcheck dim %lld incl %d", what, (long long)c->dim, c->incl);
    CHECK_MSG(tt_gradgradcheck(f_op, c, n, in, 1e-6, 1e-7, 1e-5), "%s gradgradcheck dim %lld incl %d", what,
              (long long)c->dim, c->incl);
}

TEST(gather_scatter_gradients) {
    for (int m = M_COPY; m <= M_GATHER; m++)
        for (int incl = 0; incl < 2; incl++)
            for (int d = 0; d < 3; d++) {
                if ((m == M_COPY || m == M_GATHER) && !incl) continue;
                bool distinct_vals = m == M_AMAX || m == M_AMIN;
                double lo = m == M_PROD ? 0.5 : -2, hi = m == M_PROD ? 1.5 : 2;
                cg_tensor *x = tt_rand(CG_DTYPE_F64, 3, k_xs, lo, hi, 11 + (unsigned)d);
                cg_tensor *src = tt_rand(CG_DTYPE_F64, 3, k_ss, lo, hi, 31 + (unsigned)d);
                if (d == 1) { /* non-contiguous x */
                    cg_tensor *nc = tt_noncontig(x);
                    cg_tensor_release(x);
                    x = nc;
                }
                gctx c = {m, incl, d, m == M_COPY ? perm_index(k_is, d, k_xs[d]) : rand_index(k_is, k_xs[d], 5 + (unsigned)d)};
                (void)distinct_vals;
                grads(&c, x, src, m == M_GATHER ? "gather" : k_reduce[m]);
                cg_tensor_release(c.index), cg_tensor_release(x), cg_tensor_release(src);
            }
    /* 0-d and empty */
    for (int m = M_COPY; m <= M_GATHER; m++) {
        cg_tensor *x = cg_scalar(0.8, CG_DTYPE_F64), *s = cg_scalar(1.3, CG_DTYPE_F64);
        gctx c = {m, m != M_SUM, 0, cg_scalar(0, CG_DTYPE_I64)};
        grads(&c, x, s, "0-d");
        cg_tensor_release(c.index), cg_tensor_release(x), cg_tensor_release(s);
        int64_t es[3] = {0, 3, 4};
        x = tt_rand(CG_DTYPE_F64, 3, k_xs, -1, 1, 3);
        s = tt_rand(CG_DTYPE_F64, 3, k_ss, -1, 1, 4);
        c.index = cg_zeros(3, es, CG_DTYPE_I64, cg_cpu());
        grads(&c, x, s, "empty index");
        cg_tensor_release(c.index), cg_tensor_release(x), cg_tensor_release(s);
    }
}

TEST(gather_scatter_prod_grad_with_zeros) {
    int64_t n = 4, m = 5;
    double xv[4] = {0.5, 2.0, 0.0, 1.5}, sv[5] = {0.0, 1.2, 0.7, 0.9, -1.1}, iv[5] = {1, 1, 2, 3, 0};
    for (int incl = 0; incl < 2; incl++) {
        cg_tensor *x = tt_tensor(CG_DTYPE_F64, 1, &n, xv), *s = tt_tensor(CG_DTYPE_F64, 1, &m, sv);
        gctx c = {M_PROD, incl, 0, tt_tensor(CG_DTYPE_I64, 1, &m, iv)};
        grads(&c, x, s, "prod with single zeros");
        cg_tensor_release(c.index), cg_tensor_release(x), cg_tensor_release(s);
    }
    /* two zeros into one slot: first order is exact, double backward is refused */
    double sv2[5] = {0.0, 0.0, 0.7, 0.9, -1.1};
    cg_tensor *x = tt_tensor(CG_DTYPE_F64, 1, &n, xv), *s = tt_tensor(CG_DTYPE_F64, 1, &m, sv2);
    cg_tensor *idx = tt_tensor(CG_DTYPE_I64, 1, &m, iv);
    cg_tensor_set_requires_grad(s, true);
    cg_tensor *y = cg_scatter_reduce(x, 0, idx, s, "prod", true), *t = cg_sum(y, 0, NULL, false), *g = NULL;
    CHECK(y && strcmp(cg_node_name(cg_tensor_grad_fn(y)), "ScatterReduceBackward0") == 0);
    CHECK_OK(cg_autograd_grad(1, &t, NULL, 1, &s, true, false, false, &g));
    double want[5] = {0, 0, 0, 1.5, 0.5};
    for (int i = 0; i < 5; i++) CHECK_NEAR(tt_get(g, i), want[i], 1e-12);
    cg_tensor_release(g);
    g = NULL;
    CHECK_ERR(cg_autograd_grad(1, &t, NULL, 1, &s, true, true, false, &g) != CG_OK, CG_ERR_NOT_IMPLEMENTED,
              "more than one zero");
    cg_tensor_release(y), cg_tensor_release(t), cg_tensor_release(x), cg_tensor_release(s), cg_tensor_release(idx);
}

TEST(gather_scatter_amax_ties_split_evenly) {
    int64_t n = 2, m = 3;
    double xv[2] = {1, 5}, sv[3] = {5, 2, 5}, iv[3] = {1, 1, 1};
    cg_tensor *x = tt_tensor(CG_DTYPE_F64, 1, &n, xv), *s = tt_tensor(CG_DTYPE_F64, 1, &m, sv);
    cg_tensor *idx = tt_tensor(CG_DTYPE_I64, 1, &m, iv);
    cg_tensor_set_requires_grad(x, true);
    cg_tensor_set_requires_grad(s, true);
    for (int incl = 0; incl < 2; incl++) {
        cg_tensor *y = cg_scatter_reduce(x, 0, idx, s, "amax", incl), *t = cg_sum(y, 0, NULL, false);
        cg_tensor *in[2] = {x, s}, *g[2] = {0};
        CHECK_OK(cg_autograd_grad(1, &t, NULL, 2, in, false, false, false, g));
        double third = incl ? 1.0 / 3 : 0.5;
        CHECK_NEAR(tt_get(g[0], 0), 1, 0);
        CHECK_NEAR(tt_get(g[0], 1), incl ? third : 0, 1e-15);
        CHECK_NEAR(tt_get(g[1], 0), third, 1e-15);
        CHECK_NEAR(tt_get(g[1], 1), 0, 0);
        CHECK_NEAR(tt_get(g[1], 2), third, 1e-15);
        cg_tensor_release(y), cg_tensor_release(t), cg_tensor_release(g[0]), cg_tensor_release(g[1]);
    }
    /* node names */
    cg_tensor *a = cg_gather(x, 0, idx), *b = cg_scatter(x, 0, idx, s), *c = cg_scatter_add(x, 0, idx, s);
    CHECK(strcmp(cg_node_name(cg_tensor_grad_fn(a)), "GatherBackward0") == 0);
    CHECK(strcmp(cg_node_name(cg_tensor_grad_fn(b)), "ScatterBackward0") == 0);
    CHECK(strcmp(cg_node_name(cg_tensor_grad_fn(c)), "ScatterAddBackward0") == 0);
    cg_tensor_release(a), cg_tensor_release(b), cg_tensor_release(c);
    cg_tensor_release(x), cg_tensor_release(s), cg_tensor_release(idx);
}

TEST(gather_scatter_meta_shapes) {
    cg_tensor *x = cg_empty(3, k_xs, CG_DTYPE_F32, cg_meta()), *i = cg_empty(3, k_is, CG_DTYPE_I64, cg_meta());
    cg_tensor *g = cg_gather(x, 1, i), *s = cg_scatter_add(x, 1, i, x);
    CHECK(g && s && cg_tensor_shape(g)[2] == 4 && cg_tensor_shape(s)[2] == 5);
    CHECK(g && cg_device_eq(cg_tensor_device(g), cg_meta()));
    cg_tensor_release(g), cg_tensor_release(s), cg_tensor_release(x), cg_tensor_release(i);
}
