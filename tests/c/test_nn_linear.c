/* test_nn_linear.c — linear and bilinear: values against float64 loops (1-d,
 * 2-d, 3-d and empty inputs, non-contiguous operands, with and without bias,
 * float32 / float16 / int64), gradcheck + gradgradcheck of every input, and
 * the shape / dtype errors. */
#include "test.h"

#include <stdlib.h>
#include <string.h>

/* y[r, o] = sum_p x[r, p] w[o, p] + b[o]: x (rows, in) flat, result float64 (rows, out) */
static cg_tensor *ref_linear(cg_tensor *x, cg_tensor *w, cg_tensor *b, int ndim, const int64_t *oshape) {
    int64_t outf = cg_tensor_shape(w)[0], in = cg_tensor_shape(w)[1];
    int64_t rows = in ? cg_tensor_numel(x) / in : 0;
    if (!in) {
        rows = 1;
        for (int i = 0; i < ndim - 1; i++) rows *= oshape[i];
    }
    double *v = calloc((size_t)(rows * outf) + 1, sizeof(double));
    for (int64_t r = 0; r < rows; r++)
        for (int64_t o = 0; o < outf; o++) {
            double s = b ? tt_get(b, cg_tensor_numel(b) == 1 ? 0 : o) : 0.0;
            for (int64_t p = 0; p < in; p++) s += tt_get(x, r * in + p) * tt_get(w, o * in + p);
            v[r * outf + o] = s;
        }
    cg_tensor *t = tt_tensor(CG_DTYPE_F64, ndim, oshape, v);
    free(v);
    return t;
}

typedef struct lin_case {
    int nx;
    int64_t x[3];
    int64_t outf;
} lin_case;

static const lin_case k_lin[] = {
    {2, {4, 3}, 5}, {1, {3}, 2}, {3, {2, 3, 4}, 3}, {2, {0, 3}, 4}, {3, {2, 0, 3}, 2}, {2, {3, 0}, 2}, {2, {1, 1}, 1},
};

TEST(nn_linear_values) {
    cg_dtype dts[] = {CG_DTYPE_F32, CG_DTYPE_F64, CG_DTYPE_F16, CG_DTYPE_I64};
    double tols[] = {1e-5, 1e-12, 1e-2, 0};
    for (size_t c = 0; c < sizeof(k_lin) / sizeof(k_lin[0]); c++) {
        const lin_case *lc = &k_lin[c];
        int64_t in = lc->x[lc->nx - 1], wsh[2] = {lc->outf, in}, osh[3];
        memcpy(osh, lc->x, sizeof(osh));
        osh[lc->nx - 1] = lc->outf;
        for (size_t d = 0; d < sizeof(dts) / sizeof(dts[0]); d++) {
            for (int variant = 0; variant < 4; variant++) { /* bit 0: bias, bit 1: non-contiguous operands */
                cg_tensor *x = tt_rand(dts[d], lc->nx, lc->x, -2, 2, 11 + (unsigned)c);
                cg_tensor *w = tt_rand(dts[d], 2, wsh, -2, 2, 21 + (unsigned)c);
                cg_tensor *b = (variant & 1) ? tt_rand(dts[d], 1, &lc->outf, -2, 2, 31 + (unsigned)c) : NULL;
                if (variant & 2) {
                    cg_tensor *xn = tt_noncontig(x), *wn = tt_noncontig(w);
                    cg_tensor_release(x), cg_tensor_release(w);
                    x = xn, w = wn;
                }
                cg_tensor *y = cg_linear(x, w, b);
                CHECK_NN(y);
                cg_tensor *ref = ref_linear(x, w, b, lc->nx, osh);
                if (y) {
                    CHECK(cg_tensor_dtype(y) == dts[d]);
                    CHECK_MSG(tt_maxdiff(y, ref) <= tols[d] * (double)(in + 1), "linear case %zu dtype %s variant %d: %g", c,
                              cg_dtype_name(dts[d]), variant, tt_maxdiff(y, ref));
                }
                cg_tensor_release(y), cg_tensor_release(ref);
                cg_tensor_release(x), cg_tensor_release(w), cg_tensor_release(b);
            }
        }
    }
}

TEST(nn_linear_scalar_bias_and_meta) {
    int64_t xs[2] = {2, 3}, ws[2] = {4, 3}, one = 1;
    cg_tensor *x = tt_rand(CG_DTYPE_F64, 2, xs, -1, 1, 3), *w = tt_rand(CG_DTYPE_F64, 2, ws, -1, 1, 4);
    cg_tensor *b = tt_rand(CG_DTYPE_F64, 1, &one, -1, 1, 5);
    cg_tensor *y = cg_linear(x, w, b);
    int64_t os[2] = {2, 4};
    cg_tensor *ref = ref_linear(x, w, b, 2, os);
    CHECK(tt_maxdiff(y, ref) < 1e-12);
    cg_tensor *xm = cg_empty(2, xs, CG_DTYPE_F32, cg_meta()), *wm = cg_empty(2, ws, CG_DTYPE_F32, cg_meta());
    cg_tensor *ym = cg_linear(xm, wm, NULL);
    CHECK_NN(ym);
    if (ym) CHECK(cg_tensor_shape(ym)[0] == 2 && cg_tensor_shape(ym)[1] == 4 && cg_device_eq(cg_tensor_device(ym), cg_meta()));
    cg_tensor *all[] = {x, w, b, y, ref, xm, wm, ym};
    for (int i = 0; i < 8; i++) cg_tensor_release(all[i]);
}

static cg_tensor *f_linear(cg_tensor *const *in, void *p) { return cg_linear(in[0], in[1], p ? in[2] : NULL); }

TEST(nn_linear_grad) {
    const int64_t shapes[][3] = {{3, 4, 0}, {4, 0, 0}, {2, 3, 4}, {0, 4, 0}};
    const int nds[] = {2, 1, 3, 2};
    for (int c = 0; c < 4; c++) {
        int64_t in = shapes[c][nds[c] - 1], ws[2] = {3, in}, bs = 3;
        for (int withb = 0; withb < 2; withb++) {
            cg_tensor *in3[3] = {tt_rand(CG_DTYPE_F64, nds[c], shapes[c], -1, 1, 40 + (unsigned)c),
                                 tt_rand(CG_DTYPE_F64, 2, ws, -1, 1, 50 + (unsigned)c),
                                 withb ? tt_rand(CG_DTYPE_F64, 1, &bs, -1, 1, 60) : NULL};
            if (c == 2) { /* non-contiguous input and weight */
                for (int k = 0; k < 2; k++) {
                    cg_tensor *n = tt_noncontig(in3[k]);
                    cg_tensor_release(in3[k]);
                    in3[k] = n;
                }
            }
            int n = withb ? 3 : 2;
            for (int k = 0; k < n; k++) cg_tensor_set_requires_grad(in3[k], true);
            void *ctx = withb ? (void *)1 : NULL;
            CHECK_MSG(tt_gradcheck(f_linear, ctx, n, in3, 1e-6, 1e-7, 1e-5), "linear gradcheck case %d bias %d", c, withb);
            CHECK_MSG(tt_gradgradcheck(f_linear, ctx, n, in3, 1e-6, 1e-6, 1e-4), "linear gradgradcheck case %d bias %d", c,
                      withb);
            for (int k = 0; k < 3; k++) cg_tensor_release(in3[k]);
        }
    }
}

TEST(nn_linear_errors) {
    int64_t xs[2] = {2, 3}, ws[2] = {4, 3}, wbad[2] = {4, 5}, b5 = 5, w1 = 3;
    cg_tensor *x = tt_rand(CG_DTYPE_F32, 2, xs, -1, 1, 1), *w = tt_rand(CG_DTYPE_F32, 2, ws, -1, 1, 2);
    cg_tensor *wb = tt_rand(CG_DTYPE_F32, 2, wbad, -1, 1, 3), *b = tt_rand(CG_DTYPE_F32, 1, &b5, -1, 1, 4);
    cg_tensor *w1d = tt_rand(CG_DTYPE_F32, 1, &w1, -1, 1, 5), *wd = tt_rand(CG_DTYPE_F64, 2, ws, -1, 1, 6);
    cg_tensor *x0 = cg_scalar_on(1.0, CG_DTYPE_F32, cg_cpu()), *xb = cg_zeros(2, xs, CG_DTYPE_BOOL, cg_cpu());
    cg_tensor *wbool = cg_zeros(2, ws, CG_DTYPE_BOOL, cg_cpu());
    CHECK_ERR(cg_linear(x, wb, NULL) == NULL, CG_ERR_SHAPE, "(2,3) and weight of shape (4,5) cannot be multiplied");
    CHECK_ERR(cg_linear(x, w, b) == NULL, CG_ERR_SHAPE, "bias of shape (5,) does not match out_features 4");
    CHECK_ERR(cg_linear(x, w1d, NULL) == NULL, CG_ERR_SHAPE, "weight must be 2-D");
    CHECK_ERR(cg_linear(x0, w, NULL) == NULL, CG_ERR_SHAPE, "at least 1-D");
    CHECK_ERR(cg_linear(x, wd, NULL) == NULL, CG_ERR_DTYPE, "dtype mismatch");
    CHECK_ERR(cg_linear(xb, wbool, NULL) == NULL, CG_ERR_NOT_IMPLEMENTED, "bool");
    CHECK_ERR(cg_linear(NULL, w, NULL) == NULL, CG_ERR_VALUE, "NULL");
    cg_tensor *all[] = {x, w, wb, b, w1d, wd, x0, xb, wbool};
    for (int i = 0; i < 9; i++) cg_tensor_release(all[i]);
}

/* ------------------------------------------------------------- bilinear */

static cg_tensor *ref_bilinear(cg_tensor *x1, cg_tensor *x2, cg_tensor *w, cg_tensor *b, int ndim, const int64_t *osh) {
    const int64_t *ws = cg_tensor_shape(w);
    int64_t outf = ws[0], in1 = ws[1], in2 = ws[2], rows = 1;
    for (int i = 0; i < ndim - 1; i++) rows *= osh[i];
    double *v = calloc((size_t)(rows * outf) + 1, sizeof(double));
    for (int64_t r = 0; r < rows; r++)
        for (int64_t o = 0; o < outf; o++) {
            double s = b ? tt_get(b, o) : 0.0;
            for (int64_t i = 0; i < in1; i++)
                for (int64_t j = 0; j < in2; j++)
                    s += tt_get(x1, r * in1 + i) * tt_get(w, (o * in1 + i) * in2 + j) * tt_get(x2, r * in2 + j);
            v[r * outf + o] = s;
        }
    cg_tensor *t = tt_tensor(CG_DTYPE_F64, ndim, osh, v);
    free(v);
    return t;
}

static cg_tensor *f_bilinear(cg_tensor *const *in, void *p) { return cg_bilinear(in[0], in[1], in[2], p ? in[3] : NULL); }

TEST(nn_bilinear) {
    int64_t s1[3] = {2, 3, 4}, s2[3] = {2, 3, 2}, ws[3] = {3, 4, 2}, bs = 3, osh[3] = {2, 3, 3};
    cg_tensor *in4[4] = {tt_rand(CG_DTYPE_F64, 3, s1, -1, 1, 1), tt_rand(CG_DTYPE_F64, 3, s2, -1, 1, 2),
                         tt_rand(CG_DTYPE_F64, 3, ws, -1, 1, 3), tt_rand(CG_DTYPE_F64, 1, &bs, -1, 1, 4)};
    for (int withb = 0; withb < 2; withb++) {
        cg_tensor *y = cg_bilinear(in4[0], in4[1], in4[2], withb ? in4[3] : NULL);
        cg_tensor *ref = ref_bilinear(in4[0], in4[1], in4[2], withb ? in4[3] : NULL, 3, osh);
        CHECK_NN(y);
        CHECK(tt_maxdiff(y, ref) < 1e-12);
        cg_tensor_release(y), cg_tensor_release(ref);
    }
    for (int k = 0; k < 4; k++) cg_tensor_set_requires_grad(in4[k], true);
    CHECK(tt_gradcheck(f_bilinear, (void *)1, 4, in4, 1e-6, 1e-7, 1e-5));
    CHECK(tt_gradgradcheck(f_bilinear, (void *)1, 4, in4, 1e-6, 1e-6, 1e-4));
    CHECK_ERR(cg_bilinear(in4[1], in4[0], in4[2], NULL) == NULL, CG_ERR_SHAPE, "do not match weight of shape (3,4,2)");
    CHECK_ERR(cg_bilinear(in4[0], in4[3], in4[2], NULL) == NULL, CG_ERR_SHAPE, "same size except for the last");
    CHECK_ERR(cg_bilinear(in4[0], in4[1], in4[3], NULL) == NULL, CG_ERR_SHAPE, "weight must be 3-D");
    for (int k = 0; k < 4; k++) cg_tensor_release(in4[k]);
}
