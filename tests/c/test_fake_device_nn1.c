/* test_fake_device_nn1.c — the BLAS products, convolution, pooling and LSTM
 * kernel entries through the device seam: on the fake device (whose table
 * lacks them) each op fails with NotImplementedError naming the op and the
 * device, never touching its memory; on meta each gives the right shape and
 * dtype, backward included. */
#include "fake_checks.h"

#include <stdio.h>
#include <string.h>


TEST(fake_nn1_entries_missing) {
    fake_backend_install();
    cg_device f = fake_device();
    int64_t s23[2] = {2, 3}, s32[2] = {3, 2}, s3[1] = {3}, sx[4] = {1, 2, 4, 4}, sw[4] = {3, 2, 3, 3};
    int64_t sxp[3] = {2, 1, 8}, sh[2] = {1, 2}, swh[2] = {8, 2}, k2[2] = {2, 2};
    cg_tensor *a = cg_ones(2, s23, CG_DTYPE_F32, f), *b = cg_ones(2, s32, CG_DTYPE_F32, f);
    cg_tensor *v = cg_ones(1, s3, CG_DTYPE_F32, f), *w = cg_ones(2, s23, CG_DTYPE_F32, f);
    cg_tensor *x = cg_ones(4, sx, CG_DTYPE_F32, f), *cw = cg_ones(4, sw, CG_DTYPE_F32, f);
    cg_tensor *xp = cg_ones(3, sxp, CG_DTYPE_F32, f), *h0 = cg_ones(2, sh, CG_DTYPE_F32, f);
    cg_tensor *wh = cg_ones(2, swh, CG_DTYPE_F32, f);
    cg_tensor *made[] = {a, b, v, w, x, cw, xp, h0, wh};
    for (int i = 0; i < 9; i++) CHECK_NN(made[i]);
    check_refused(cg_mm(a, b) == NULL, "mm");
    check_refused(cg_matmul(a, v) == NULL, "mv");
    int64_t s232[3] = {2, 3, 2}, s22[2] = {2, 2};
    cg_tensor *a3 = cg_ones(3, s232, CG_DTYPE_F32, f), *c22 = cg_ones(2, s22, CG_DTYPE_F32, f);
    CHECK_NN(a3);
    CHECK_NN(c22);
    cg_tensor *a3t = a3 ? cg_transpose(a3, 1, 2) : NULL;
    check_refused(cg_bmm(a3t, a3) == NULL, "bmm");
    check_refused(cg_addmm(c22, a, b, 1.0, 1.0) == NULL, "addmm");
    cg_tensor_release(a3), cg_tensor_release(a3t), cg_tensor_release(c22);
    check_refused(cg_linear(a, w, NULL) == NULL, "linear");
    check_refused(cg_conv2d(x, cw, NULL, NULL, NULL, NULL, 1) == NULL, "conv2d");
    cg_tensor *y = NULL, *idx = NULL;
    check_refused(cg_max_pool2d(x, k2, NULL, NULL, NULL, false, &y, &idx) != CG_OK, "max_pool2d");
    check_refused(cg_avg_pool2d(x, k2, NULL, NULL, false, true, 0) == NULL, "avg_pool2d");
    cg_tensor *o = NULL, *hn = NULL, *cn = NULL;
    check_refused(cg_lstm_layer(xp, h0, h0, wh, false, &o, &hn, &cn) != CG_OK, "lstm_layer");
    cg_tensor *all[] = {a, b, v, w, x, cw, xp, h0, wh};
    for (int i = 0; i < 9; i++) cg_tensor_release(all[i]);
}

/* forward and backward on meta: shapes and dtypes, no data */
TEST(meta_nn1_shapes_and_backward) {
    cg_device m = cg_meta();
    int64_t s23[2] = {2, 3}, s34[2] = {3, 4}, s24[2] = {2, 4}, sx[4] = {2, 3, 6, 6}, sw[4] = {4, 3, 3, 3};
    int64_t sy[4] = {2, 4, 4, 4}, sp[4] = {2, 4, 2, 2}, k2[2] = {2, 2};
    int64_t sxp[3] = {5, 2, 12}, sh[2] = {2, 3}, swh[2] = {12, 3}, so[3] = {5, 2, 3};
    cg_tensor *a = cg_ones(2, s23, CG_DTYPE_F32, m), *b = cg_ones(2, s34, CG_DTYPE_F32, m);
    cg_tensor *x = cg_ones(4, sx, CG_DTYPE_F32, m), *cw = cg_ones(4, sw, CG_DTYPE_F32, m);
    cg_tensor *bias = cg_ones(1, &sw[0], CG_DTYPE_F32, m);
    cg_tensor *xp = cg_ones(3, sxp, CG_DTYPE_F64, m), *h0 = cg_ones(2, sh, CG_DTYPE_F64, m);
    cg_tensor *wh = cg_ones(2, swh, CG_DTYPE_F64, m);
    cg_tensor *leaves[] = {a, b, x, cw, bias, xp, h0, wh};
    for (int i = 0; i < 8; i++) {
        CHECK_NN(leaves[i]);
        CHECK_OK(cg_tensor_set_requires_grad(leaves[i], true));
    }
    /* products */
    cg_tensor *p = cg_matmul(a, b);
    CHECK(shape_is(p, 2, s24, CG_DTYPE_F32));
    cg_tensor *bt = cg_transpose(b, 0, 1);
    cg_tensor *l = bt ? cg_linear(a, bt, NULL) : NULL;
    CHECK(shape_is(l, 2, s24, CG_DTYPE_F32));
    /* conv -> max pool -> avg pool */
    cg_tensor *y = cg_conv2d(x, cw, bias, NULL, NULL, NULL, 1);
    CHECK(shape_is(y, 4, sy, CG_DTYPE_F32));
    cg_tensor *mp = NULL, *mi = NULL;
    CHECK_OK(cg_max_pool2d(y, k2, NULL, NULL, NULL, false, &mp, &mi));
    CHECK(shape_is(mp, 4, sp, CG_DTYPE_F32) && shape_is(mi, 4, sp, CG_DTYPE_I64));
    cg_tensor *mp2 = NULL;
    CHECK_OK(cg_max_pool2d(y, k2, NULL, NULL, NULL, false, &mp2, NULL)); /* 2x2: tap codes saved */
    CHECK(shape_is(mp2, 4, sp, CG_DTYPE_F32));
    cg_tensor *ap = mp ? cg_avg_pool2d(mp, k2, NULL, NULL, false, true, 0) : NULL;
    int64_t sa[4] = {2, 4, 1, 1};
    CHECK(shape_is(ap, 4, sa, CG_DTYPE_F32));
    /* lstm */
    cg_tensor *o = NULL, *hn = NULL, *cn = NULL;
    CHECK_OK(cg_lstm_layer(xp, h0, h0, wh, false, &o, &hn, &cn));
    CHECK(shape_is(o, 3, so, CG_DTYPE_F64) && shape_is(hn, 2, sh, CG_DTYPE_F64) && shape_is(cn, 2, sh, CG_DTYPE_F64));
    /* one scalar loss over everything, backward on meta */
    cg_tensor *s1 = p ? cg_sum(p, 0, NULL, false) : NULL, *s2 = l ? cg_sum(l, 0, NULL, false) : NULL;
    cg_tensor *s3 = ap ? cg_sum(ap, 0, NULL, false) : NULL, *s4 = mp2 ? cg_sum(mp2, 0, NULL, false) : NULL;
    cg_tensor *s5 = o ? cg_sum(o, 0, NULL, false) : NULL;
    cg_tensor *t12 = s1 && s2 ? cg_add(s1, s2) : NULL, *t34 = s3 && s4 ? cg_add(s3, s4) : NULL;
    cg_tensor *t = t12 && t34 ? cg_add(t12, t34) : NULL;
    CHECK_NN(t);
    if (t) CHECK_OK(cg_backward(t, NULL, false, false));
    if (s5) CHECK_OK(cg_backward(s5, NULL, false, false));
    for (int i = 0; i < 8; i++) {
        cg_tensor *g = cg_tensor_grad_ref(leaves[i]);
        CHECK(g && shape_is(g, cg_tensor_ndim(leaves[i]), cg_tensor_shape(leaves[i]), cg_tensor_dtype(leaves[i])));
        cg_tensor_release(g);
    }
    cg_tensor *rel[] = {p, bt, l, y, mp, mi, mp2, ap, o, hn, cn, s1, s2, s3, s4, s5, t12, t34, t};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) cg_tensor_release(rel[i]);
    for (int i = 0; i < 8; i++) cg_tensor_release(leaves[i]);
}
