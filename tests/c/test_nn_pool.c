/* test_nn_pool.c — max / avg / adaptive pooling (1-D and 2-D): values and
 * indices against float64 direct loops (stride, padding, dilation,
 * ceil_mode, count_include_pad, divisor_override, unbatched, non-contiguous,
 * NaN, half types), meta shapes, gradcheck / gradgradcheck, and errors. */
#include "test.h"

#include <stdlib.h>
#include <string.h>

#define SH(...) ((const int64_t[]){__VA_ARGS__})

typedef enum { P_MAX, P_AVG, P_AMAX, P_AAVG } pool_kind;

typedef struct pool_case {
    pool_kind kind;
    int nsp, ndim;
    int64_t shape[4];
    int64_t k[2], s[2], p[2], d[2]; /* s[0] == 0: stride NULL; adaptive: k = output size */
    bool ceil, cip;
    int64_t divisor;
} pool_case;

static int64_t out_size(int64_t I, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil) {
    int64_t num = I + 2 * p - d * (k - 1) - 1 + (ceil ? s - 1 : 0);
    int64_t o = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
    if (ceil && (o - 1) * s >= I + p) o--;
    return o;
}

/* Direct float64 pooling of x; fills out values / indices (flat in each plane) and the output spatial sizes. */
static void ref_pool(const pool_case *c, const cg_tensor *x, double *vals, int64_t *idx, int64_t *osp) {
    int nsp = c->nsp, lead = c->ndim - nsp;
    int64_t planes = 1, I[2] = {1, 1}, O[2] = {1, 1};
    for (int i = 0; i < lead; i++) planes *= c->shape[i];
    for (int i = 0; i < nsp; i++) {
        I[2 - nsp + i] = c->shape[lead + i];
        int64_t s = c->s[0] ? c->s[i] : c->k[i];
        O[2 - nsp + i] = (c->kind == P_AMAX || c->kind == P_AAVG) ? c->k[i]
                                                                   : out_size(c->shape[lead + i], c->k[i], s, c->p[i], c->d[i], c->ceil);
        osp[i] = O[2 - nsp + i];
    }
    for (int64_t pl = 0; pl < planes; pl++)
        for (int64_t oh = 0; oh < O[0]; oh++)
            for (int64_t ow = 0; ow < O[1]; ow++) {
                int64_t h0, h1, w0, w1, hs = 1, ws = 1; /* window [h0, h1) step hs (before clipping) */
                int64_t oo[2] = {oh, ow}, st[2], en[2], step[2], cnt_pad[2];
                for (int a = 0; a < 2; a++) {
                    int ui = a - (2 - nsp); /* user dim */
                    if (ui < 0) {
                        st[a] = 0, en[a] = 1, step[a] = 1, cnt_pad[a] = 1;
                        continue;
                    }
                    if (c->kind == P_AMAX || c->kind == P_AAVG) {
                        st[a] = (int64_t)floor((double)(oo[a] * I[a]) / (double)O[a]);
                        en[a] = (int64_t)ceil((double)((oo[a] + 1) * I[a]) / (double)O[a]);
                        step[a] = 1;
                        cnt_pad[a] = en[a] - st[a];
                    } else {
                        int64_t s = c->s[0] ? c->s[ui] : c->k[ui];
                        st[a] = oo[a] * s - c->p[ui];
                        step[a] = c->kind == P_MAX ? c->d[ui] : 1;
                        en[a] = st[a] + (c->k[ui] - 1) * step[a] + 1;
                        int64_t e2 = st[a] + c->k[ui] < I[a] + c->p[ui] ? st[a] + c->k[ui] : I[a] + c->p[ui];
                        cnt_pad[a] = e2 - st[a];
                    }
                }
                h0 = st[0], h1 = en[0], w0 = st[1], w1 = en[1], hs = step[0], ws = step[1];
                double best = -INFINITY, sum = 0;
                int64_t bi = -1, n = 0;
                for (int64_t h = h0; h < h1; h += hs)
                    for (int64_t w = w0; w < w1; w += ws) {
                        if (h < 0 || h >= I[0] || w < 0 || w >= I[1]) continue;
                        double v = tt_get(x, pl * I[0] * I[1] + h * I[1] + w);
                        if (bi < 0) bi = h * I[1] + w;
                        if (v > best || isnan(v)) best = v, bi = h * I[1] + w;
                        sum += v;
                        n++;
                    }
                int64_t o = pl * O[0] * O[1] + oh * O[1] + ow;
                if (c->kind == P_MAX || c->kind == P_AMAX) {
                    vals[o] = best;
                    idx[o] = bi;
                } else {
                    double div = c->divisor ? (double)c->divisor
                                 : (c->cip || c->kind == P_AAVG) ? (double)(cnt_pad[0] * cnt_pad[1])
                                                                 : (double)n;
                    vals[o] = n ? sum / div : 0;
                }
            }
}

static cg_status run_pool(const pool_case *c, cg_tensor *x, cg_tensor **out, cg_tensor **idx) {
    const int64_t *s = c->s[0] ? c->s : NULL;
    *out = NULL;
    switch (c->kind) {
    case P_MAX:
        return c->nsp == 1 ? cg_max_pool1d(x, c->k, s, c->p, c->d, c->ceil, out, idx)
                           : cg_max_pool2d(x, c->k, s, c->p, c->d, c->ceil, out, idx);
    case P_AMAX:
        return c->nsp == 1 ? cg_adaptive_max_pool1d(x, c->k, out, idx) : cg_adaptive_max_pool2d(x, c->k, out, idx);
    case P_AVG:
        *out = c->nsp == 1 ? cg_avg_pool1d(x, c->k, s, c->p, c->ceil, c->cip, c->divisor)
                           : cg_avg_pool2d(x, c->k, s, c->p, c->ceil, c->cip, c->divisor);
        break;
    default: *out = c->nsp == 1 ? cg_adaptive_avg_pool1d(x, c->k) : cg_adaptive_avg_pool2d(x, c->k); break;
    }
    return *out ? CG_OK : cg_last_error();
}

static const pool_case k_cases[] = {
    {P_MAX, 2, 4, {2, 3, 7, 6}, {3, 2}, {2, 1}, {1, 1}, {1, 2}, false, false, 0},
    {P_MAX, 2, 4, {2, 3, 7, 6}, {3, 2}, {2, 1}, {1, 1}, {1, 2}, true, false, 0},
    {P_MAX, 2, 4, {1, 2, 6, 5}, {2, 2}, {0, 0}, {0, 0}, {1, 1}, false, false, 0}, /* stride = kernel */
    {P_MAX, 2, 3, {3, 5, 5}, {3, 3}, {2, 2}, {1, 0}, {1, 1}, true, false, 0},     /* unbatched, ceil */
    {P_MAX, 1, 3, {2, 3, 9}, {3, 0}, {2, 0}, {1, 0}, {2, 0}, true, false, 0},
    {P_MAX, 1, 2, {3, 8}, {2, 0}, {0, 0}, {1, 0}, {1, 0}, false, false, 0},
    {P_AVG, 2, 4, {2, 2, 7, 5}, {3, 2}, {2, 2}, {1, 1}, {1, 1}, true, true, 0},
    {P_AVG, 2, 4, {2, 2, 7, 5}, {3, 2}, {2, 2}, {1, 1}, {1, 1}, true, false, 0},
    {P_AVG, 2, 4, {2, 2, 7, 5}, {3, 2}, {2, 2}, {1, 1}, {1, 1}, false, true, 3},
    {P_AVG, 2, 3, {2, 6, 6}, {2, 2}, {0, 0}, {0, 0}, {1, 1}, false, true, 0},
    {P_AVG, 1, 3, {2, 3, 8}, {3, 0}, {2, 0}, {1, 0}, {1, 0}, true, false, 0},
    {P_AVG, 1, 3, {2, 3, 8}, {4, 0}, {3, 0}, {2, 0}, {1, 0}, true, true, 0},
    {P_AAVG, 2, 4, {2, 3, 7, 5}, {3, 2}, {0}, {0}, {0}, false, false, 0},
    {P_AAVG, 2, 3, {3, 7, 5}, {4, 7}, {0}, {0}, {0}, false, false, 0}, /* output larger than input */
    {P_AAVG, 1, 3, {2, 3, 10}, {4, 0}, {0}, {0}, {0}, false, false, 0},
    {P_AMAX, 2, 4, {2, 3, 7, 5}, {3, 2}, {0}, {0}, {0}, false, false, 0},
    {P_AMAX, 2, 4, {1, 2, 3, 5}, {5, 3}, {0}, {0}, {0}, false, false, 0},
    {P_AMAX, 1, 2, {3, 10}, {4, 0}, {0}, {0}, {0}, false, false, 0},
};
#define NCASES ((int)(sizeof k_cases / sizeof k_cases[0]))

static void check_case(const pool_case *c, cg_dtype dt, bool noncontig, int line) {
    cg_tensor *x = tt_rand(dt, c->ndim, c->shape, -2, 2, (unsigned)line);
    if (noncontig) {
        cg_tensor *n = tt_noncontig(x);
        cg_tensor_release(x);
        x = n;
    }
    cg_tensor *y = NULL, *ix = NULL;
    cg_status st = run_pool(c, x, &y, &ix);
    CHECK_MSG(st == CG_OK, "line %d: %s", line, cg_last_error_message());
    if (!st) {
        int64_t osp[2], numel = 1;
        for (int i = 0; i < c->ndim; i++) numel *= c->shape[i];
        double *v = calloc((size_t)numel * 8 + 64, sizeof(double));
        int64_t *id = calloc((size_t)numel * 8 + 64, sizeof(int64_t));
        ref_pool(c, x, v, id, osp);
        int lead = c->ndim - c->nsp;
        bool shape_ok = cg_tensor_ndim(y) == c->ndim && cg_tensor_dtype(y) == dt;
        for (int i = 0; i < c->ndim && shape_ok; i++)
            shape_ok = cg_tensor_size(y, i) == (i < lead ? c->shape[i] : osp[i - lead]);
        CHECK_MSG(shape_ok, "line %d: wrong output shape", line);
        double tol = dt == CG_DTYPE_F64 ? 1e-12 : dt == CG_DTYPE_F32 ? 1e-6 : 2e-2;
        for (int64_t i = 0; shape_ok && i < cg_tensor_numel(y); i++) {
            CHECK_MSG(fabs(tt_get(y, i) - v[i]) <= tol * (1 + fabs(v[i])), "line %d: value %lld: %g vs %g", line,
                      (long long)i, tt_get(y, i), v[i]);
            if (ix) CHECK_MSG(tt_get(ix, i) == (double)id[i], "line %d: index %lld: %g vs %lld", line, (long long)i,
                              tt_get(ix, i), (long long)id[i]);
        }
        if (ix) CHECK(cg_tensor_dtype(ix) == CG_DTYPE_I64 && !cg_tensor_requires_grad(ix));
        free(v);
        free(id);
    }
    cg_tensor_release(x);
    cg_tensor_release(y);
    cg_tensor_release(ix);
}

TEST(pool_values) {
    for (int i = 0; i < NCASES; i++) {
        check_case(&k_cases[i], CG_DTYPE_F64, false, 100 + i);
        check_case(&k_cases[i], CG_DTYPE_F32, i % 2 == 0, 200 + i);
    }
    check_case(&k_cases[1], CG_DTYPE_F16, false, 300);
    check_case(&k_cases[6], CG_DTYPE_BF16, true, 301);
    check_case(&k_cases[15], CG_DTYPE_F16, false, 302);
}

/* NaN wins (the last NaN of the window, like PyTorch); -inf windows keep the first index. */
TEST(max_pool_nan_and_inf) {
    double v[8] = {1, NAN, 3, NAN, -INFINITY, -INFINITY, 2, 0};
    cg_tensor *x = tt_tensor(CG_DTYPE_F32, 3, SH(1, 1, 8), v), *y = NULL, *ix = NULL;
    CHECK_OK(cg_max_pool1d(x, SH(4), NULL, NULL, NULL, false, &y, &ix));
    if (y) {
        CHECK(isnan(tt_get(y, 0)) && tt_get(ix, 0) == 3);
        CHECK(tt_get(y, 1) == 2 && tt_get(ix, 1) == 6);
    }
    cg_tensor_release(y);
    cg_tensor_release(ix);
    double w[4] = {-INFINITY, -INFINITY, 5, 6};
    cg_tensor *x2 = tt_tensor(CG_DTYPE_F64, 2, SH(1, 4), w);
    CHECK_OK(cg_max_pool1d(x2, SH(2), NULL, NULL, NULL, false, &y, NULL));
    if (y) CHECK(isinf(tt_get(y, 0)) && tt_get(y, 1) == 6);
    cg_tensor_release(y);
    cg_tensor_release(x);
    cg_tensor_release(x2);
}

TEST(pool_meta) {
    cg_tensor *x = cg_empty(4, SH(2, 3, 9, 8), CG_DTYPE_F32, cg_meta()), *y = NULL, *ix = NULL;
    CHECK_OK(cg_max_pool2d(x, SH(3, 3), SH(2, 2), SH(1, 1), NULL, true, &y, &ix));
    CHECK(y && ix && cg_device_eq(cg_tensor_device(ix), cg_meta()) && cg_tensor_size(y, 2) == 5 && cg_tensor_size(y, 3) == 5);
    cg_tensor_release(y);
    cg_tensor_release(ix);
    y = cg_adaptive_avg_pool2d(x, SH(1, 1));
    CHECK(y && cg_tensor_size(y, 2) == 1 && cg_tensor_size(y, 1) == 3);
    cg_tensor_release(y);
    cg_tensor_release(x);
}

/* ---------------------------------------------------------------- gradients */

static cg_tensor *pool_fn(cg_tensor *const *in, void *p) {
    cg_tensor *y = NULL, *ix = NULL;
    run_pool(p, in[0], &y, &ix);
    cg_tensor_release(ix);
    return y;
}

TEST(pool_gradcheck) {
    static const int which[] = {0, 4, 3, 6, 7, 8, 10, 12, 13, 15, 17};
    for (int i = 0; i < (int)(sizeof which / sizeof which[0]); i++) {
        const pool_case *c = &k_cases[which[i]];
        cg_tensor *x = tt_rand(CG_DTYPE_F64, c->ndim, c->shape, -2, 2, 900 + (unsigned)i);
        if (i % 3 == 1) {
            cg_tensor *n = tt_noncontig(x);
            cg_tensor_release(x);
            x = n;
        }
        cg_tensor_set_requires_grad(x, true);
        CHECK_MSG(tt_gradcheck(pool_fn, (void *)c, 1, &x, 1e-6, 1e-7, 1e-5), "gradcheck case %d", which[i]);
        CHECK_MSG(tt_gradgradcheck(pool_fn, (void *)c, 1, &x, 1e-6, 1e-6, 1e-5), "gradgradcheck case %d", which[i]);
        cg_tensor_release(x);
    }
}

static cg_tensor *pool2x2_no_indices(cg_tensor *const *in, void *p) {
    (void)p;
    cg_tensor *y = NULL;
    cg_max_pool2d(in[0], SH(2, 2), NULL, NULL, NULL, false, &y, NULL);
    return y;
}

/* The 2x2 stride-2 kernel without indices asked for (Note [2x2 max pool]):
 * the graph saves tap codes; gradients (odd sizes, first order, gradcheck,
 * gradgradcheck, float16) agree with the path that returns indices. */
TEST(max_pool_2x2_codes) {
    cg_dtype dts[3] = {CG_DTYPE_F64, CG_DTYPE_F32, CG_DTYPE_F16};
    for (int d = 0; d < 3; d++) {
        cg_tensor *g[2] = {NULL, NULL}, *v[2] = {NULL, NULL};
        for (int k = 0; k < 2; k++) {
            cg_tensor *x = tt_rand(dts[d], 4, SH(2, 3, 7, 9), -2, 2, 950), *y = NULL, *ix = NULL;
            cg_tensor_set_requires_grad(x, true);
            CHECK_OK(cg_max_pool2d(x, SH(2, 2), NULL, NULL, NULL, false, &y, k ? &ix : NULL));
            cg_tensor *w = y ? tt_rand(dts[d], 4, cg_tensor_shape(y), -1, 1, 951) : NULL;
            cg_tensor *s = w ? cg_mul(y, w) : NULL, *t = s ? cg_sum(s, 0, NULL, false) : NULL;
            if (t) CHECK_OK(cg_backward(t, NULL, false, false));
            g[k] = cg_tensor_grad(x);
            if (g[k]) cg_tensor_retain(g[k]);
            v[k] = y;
            cg_tensor *tmp[] = {x, ix, w, s, t};
            for (int i = 0; i < 5; i++) cg_tensor_release(tmp[i]);
        }
        CHECK(g[0] && g[1] && v[0] && v[1]);
        for (int64_t e = 0; g[0] && g[1] && e < cg_tensor_numel(g[0]); e++)
            CHECK_MSG(tt_get(g[0], e) == tt_get(g[1], e), "%s grad element %lld", cg_dtype_name(dts[d]), (long long)e);
        for (int64_t e = 0; v[0] && v[1] && e < cg_tensor_numel(v[0]); e++)
            CHECK(tt_get(v[0], e) == tt_get(v[1], e));
        for (int k = 0; k < 2; k++) cg_tensor_release(g[k]), cg_tensor_release(v[k]);
    }
    cg_tensor *x = tt_rand(CG_DTYPE_F64, 4, SH(1, 2, 5, 7), -2, 2, 952);
    cg_tensor_set_requires_grad(x, true);
    CHECK(tt_gradcheck(pool2x2_no_indices, NULL, 1, &x, 1e-6, 1e-7, 1e-5));
    CHECK(tt_gradgradcheck(pool2x2_no_indices, NULL, 1, &x, 1e-6, 1e-6, 1e-5));
    cg_tensor_release(x);
}

/* Overlapping max windows sharing an argmax accumulate its gradient. */
TEST(max_pool_grad_accumulates) {
    double v[5] = {0, 1, 9, 2, 3};
    cg_tensor *x = tt_tensor(CG_DTYPE_F64, 2, SH(1, 5), v), *y = NULL;
    cg_tensor_set_requires_grad(x, true);
    CHECK_OK(cg_max_pool1d(x, SH(3), SH(1), NULL, NULL, false, &y, NULL));
    cg_tensor *s = y ? cg_sum(y, 0, NULL, false) : NULL;
    if (s) CHECK_OK(cg_backward(s, NULL, false, false));
    cg_tensor *g = cg_tensor_grad(x);
    CHECK(g && tt_get(g, 2) == 3 && tt_get(g, 0) == 0 && tt_get(g, 4) == 0);
    cg_tensor_release(s);
    cg_tensor_release(y);
    cg_tensor_release(x);
}

/* ---------------------------------------------------------------- errors */

TEST(pool_errors) {
    cg_tensor *x = tt_rand(CG_DTYPE_F32, 4, SH(2, 3, 5, 5), -1, 1, 1), *x2 = tt_rand(CG_DTYPE_F32, 2, SH(2, 3), -1, 1, 2);
    cg_tensor *xi = cg_zeros(4, SH(2, 3, 5, 5), CG_DTYPE_BOOL, cg_cpu()), *xe = cg_zeros(4, SH(2, 3, 0, 5), CG_DTYPE_F32, cg_cpu());
    cg_tensor *y = NULL, *ix = NULL;
    CHECK_ERR(cg_max_pool2d(x2, SH(2, 2), NULL, NULL, NULL, false, &y, &ix), CG_ERR_SHAPE,
              "[max_pool2d] expected input with 4 dims (N,C,H,W) or 3 (C,H,W), got (2,3)");
    CHECK_ERR(cg_max_pool2d(x, SH(2, 2), NULL, SH(2, 0), NULL, false, &y, &ix), CG_ERR_VALUE,
              "pad should be at most half of kernel size");
    CHECK_ERR(cg_max_pool2d(x, SH(0, 2), NULL, NULL, NULL, false, &y, &ix), CG_ERR_VALUE, "kernel_size must be positive");
    CHECK_ERR(cg_max_pool2d(x, SH(2, 2), SH(0, 1), NULL, NULL, false, &y, &ix), CG_ERR_VALUE, "stride must be positive");
    CHECK_ERR(cg_max_pool2d(x, SH(2, 2), NULL, NULL, SH(0, 1), false, &y, &ix), CG_ERR_VALUE, "dilation must be positive");
    CHECK_ERR(cg_max_pool2d(x, SH(6, 2), NULL, NULL, NULL, false, &y, &ix), CG_ERR_SHAPE, "output size is too small");
    CHECK_ERR(cg_max_pool2d(xi, SH(2, 2), NULL, NULL, NULL, false, &y, &ix), CG_ERR_NOT_IMPLEMENTED,
              "[max_pool2d] not supported for dtype bool");
    CHECK_ERR(cg_max_pool2d(xe, SH(2, 2), NULL, NULL, NULL, false, &y, &ix), CG_ERR_SHAPE, "non-zero");
    CHECK_ERR(cg_max_pool2d(x, NULL, NULL, NULL, NULL, false, &y, &ix), CG_ERR_VALUE, "kernel_size must not be NULL");
    CHECK_ERR(!cg_avg_pool1d(x, SH(2), NULL, NULL, false, true, 0), CG_ERR_SHAPE, "[avg_pool1d] expected input with 3 dims");
    cg_tensor *ones = cg_ones(3, (int64_t[]){1, 2, 2}, CG_DTYPE_F32, cg_cpu());
    cg_tensor *neg = cg_avg_pool2d(ones, SH(2, 2), NULL, NULL, false, true, -2); /* PyTorch divides by it */
    CHECK(neg && cg_tensor_numel(neg) == 1 && tt_get(neg, 0) == -2.0);
    cg_tensor_release(neg);
    cg_tensor_release(ones);
    CHECK_ERR(!cg_avg_pool2d(xi, SH(2, 2), NULL, NULL, false, true, 0), CG_ERR_NOT_IMPLEMENTED, "[avg_pool2d] not supported for dtype bool");
    CHECK_ERR(!cg_adaptive_avg_pool2d(x, SH(-1, 2)), CG_ERR_VALUE, "output_size must be non-negative");
    CHECK_ERR(cg_adaptive_max_pool1d(x, SH(2), &y, &ix), CG_ERR_SHAPE, "[adaptive_max_pool1d] expected input with 3 dims");
    CHECK(y == NULL && ix == NULL);
    cg_tensor *all[] = {x, x2, xi, xe};
    for (int i = 0; i < 4; i++) cg_tensor_release(all[i]);
}

/* An empty batch pools and backpropagates to an empty gradient. */
/* Integer pools (Note [Integer pool]): max pool of int32 takes the first
 * maximum; int64 avg pool truncates toward zero; int32 avg pool and integer
 * adaptive pools are NotImplemented, as in PyTorch's CPU build. */
TEST(pool_integer) {
    const double xv[8] = {-7, -5, 5, 7, -3, 3, 3, -1};
    cg_tensor *x32 = tt_tensor(CG_DTYPE_I32, 3, SH(1, 1, 8), xv), *x64 = tt_tensor(CG_DTYPE_I64, 3, SH(1, 1, 8), xv);
    cg_tensor *y = NULL, *ix = NULL;
    CHECK(cg_max_pool1d(x32, SH(3), SH(1), SH(1), NULL, false, &y, &ix) == CG_OK);
    const double ym[8] = {-5, 5, 7, 7, 7, 3, 3, 3}, im[8] = {1, 2, 3, 3, 3, 5, 5, 6};
    for (int k = 0; y && ix && k < 8; k++) CHECK(tt_get(y, k) == ym[k] && tt_get(ix, k) == im[k]);
    CHECK(y && cg_tensor_dtype(y) == CG_DTYPE_I32);
    cg_tensor *a = cg_avg_pool1d(x64, SH(3), SH(1), SH(1), false, true, 0); /* PyTorch: -4 -2 2 3 2 1 1 0 */
    const double av[8] = {-4, -2, 2, 3, 2, 1, 1, 0};
    for (int k = 0; a && k < 8; k++) CHECK(tt_get(a, k) == av[k]);
    CHECK(a && cg_tensor_dtype(a) == CG_DTYPE_I64);
    cg_tensor *an = cg_avg_pool1d(x64, SH(3), SH(1), SH(1), false, false, 0); /* first window: -12 / 2 */
    CHECK(an && tt_get(an, 0) == -6.0);
    CHECK_ERR(!cg_avg_pool1d(x32, SH(2), NULL, NULL, false, true, 0), CG_ERR_NOT_IMPLEMENTED,
              "[avg_pool1d] not supported for dtype int32");
    CHECK_ERR(!cg_adaptive_avg_pool1d(x64, SH(2)), CG_ERR_NOT_IMPLEMENTED,
              "[adaptive_avg_pool1d] not supported for dtype int64");
    cg_tensor *all[] = {x32, x64, y, ix, a, an};
    for (int i = 0; i < 6; i++) cg_tensor_release(all[i]);
}

TEST(pool_empty_batch) {
    cg_tensor *x = cg_zeros(4, SH(0, 2, 4, 4), CG_DTYPE_F64, cg_cpu()), *y = NULL, *ix = NULL;
    cg_tensor_set_requires_grad(x, true);
    CHECK_OK(cg_max_pool2d(x, SH(2, 2), NULL, NULL, NULL, false, &y, &ix));
    cg_tensor *a = cg_avg_pool2d(x, SH(2, 2), NULL, NULL, false, true, 0);
    cg_tensor *s1 = y ? cg_sum(y, 0, NULL, false) : NULL, *s2 = a ? cg_sum(a, 0, NULL, false) : NULL;
    cg_tensor *t = s1 && s2 ? cg_add(s1, s2) : NULL;
    CHECK_NN(t);
    if (t) CHECK_OK(cg_backward(t, NULL, false, false));
    CHECK(cg_tensor_grad(x) && cg_tensor_numel(cg_tensor_grad(x)) == 0 && cg_tensor_size(y, 2) == 2);
    cg_tensor *all[] = {x, y, ix, a, s1, s2, t};
    for (int i = 0; i < 7; i++) cg_tensor_release(all[i]);
}
