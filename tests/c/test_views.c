/* test_views.c — views: geometry, storage sharing, reshape copy vs view,
 * gradients (and second gradients) through every view kind. */
#include "test.h"

static cg_tensor *f_view_chain(cg_tensor *const *in, void *ctx) {
    (void)ctx;
    int64_t sh[2] = {4, 3};
    cg_tensor *t = cg_transpose(in[0], 0, 1);     /* (4,3) non-contiguous */
    cg_tensor *r = cg_reshape(t, 2, sh);          /* copy path */
    cg_tensor *s = cg_slice(r, 0, 1, 4, 2);       /* (2,3) */
    cg_tensor *sel = cg_select(s, 1, 2);          /* (2,) */
    cg_tensor *u = cg_unsqueeze(sel, 0);          /* (1,2) */
    int64_t ex[2] = {3, 2};
    cg_tensor *e = cg_expand(u, 2, ex);           /* (3,2) stride 0 */
    cg_tensor *y = cg_mul(e, e);
    cg_tensor *ts[] = {t, r, s, sel, u, e};
    for (int i = 0; i < 6; i++) cg_tensor_release(ts[i]);
    return y;
}

TEST(views_gradients_through_chain) {
    int64_t sh[2] = {3, 4};
    cg_tensor *x = tt_rand(CG_DTYPE_F64, 2, sh, -1, 1, 11);
    cg_tensor_set_requires_grad(x, true);
    CHECK(tt_gradcheck(f_view_chain, NULL, 1, &x, 1e-6, 1e-7, 1e-5));
    CHECK(tt_gradgradcheck(f_view_chain, NULL, 1, &x, 1e-6, 1e-7, 1e-5));
    cg_tensor_release(x);
}

static cg_tensor *f_diag_unfold(cg_tensor *const *in, void *ctx) {
    (void)ctx;
    cg_tensor *d = cg_diagonal(in[0], 1, 0, 1);     /* (3,) */
    cg_tensor *w = cg_unfold(in[0], 1, 2, 1);       /* (3,3,2) overlapping windows */
    int64_t st[2] = {2, 1}, sz[2] = {3, 2};
    cg_tensor *a = cg_as_strided(in[0], 2, sz, st, 1); /* overlapping */
    cg_tensor *s1 = cg_sum(w, 0, NULL, false), *s2 = cg_sum(a, 0, NULL, false);
    cg_tensor *dd = cg_mul(d, d), *s3 = cg_sum(dd, 0, NULL, false);
    cg_tensor *w2 = cg_mul(w, w), *s4 = cg_sum(w2, 0, NULL, false);
    cg_tensor *a2 = cg_mul(a, a), *s5 = cg_sum(a2, 0, NULL, false);
    cg_tensor *t1 = cg_add(s1, s2), *t2 = cg_add(t1, s3), *t3 = cg_add(t2, s4), *y = cg_add(t3, s5);
    cg_tensor *ts[] = {d, w, a, s1, s2, dd, s3, w2, s4, a2, s5, t1, t2, t3};
    for (int i = 0; i < 14; i++) cg_tensor_release(ts[i]);
    return y;
}

TEST(views_diagonal_unfold_as_strided_grads) {
    int64_t sh[2] = {3, 4};
    cg_tensor *x = tt_rand(CG_DTYPE_F64, 2, sh, -1, 1, 12);
    cg_tensor_set_requires_grad(x, true);
    CHECK(tt_gradcheck(f_diag_unfold, NULL, 1, &x, 1e-6, 1e-7, 1e-5));
    CHECK(tt_gradgradcheck(f_diag_unfold, NULL, 1, &x, 1e-6, 1e-7, 1e-5));
    cg_tensor_release(x);
}

TEST(views_geometry_and_errors) {
    int64_t sh[3] = {2, 3, 4};
    cg_tensor *x = tt_rand(CG_DTYPE_F32, 3, sh, -1, 1, 13);
    int64_t p[3] = {2, 0, 1};
    cg_tensor *pm = cg_permute(x, p);
    CHECK(cg_tensor_shape(pm)[0] == 4 && cg_tensor_strides(pm)[0] == 1);
    CHECK_NEAR(tt_get(pm, 1), tt_get(x, 4), 0); /* pm[0,0,1] = x[0,1,0] */
    int64_t v[2] = {6, -1};
    cg_tensor *vw = cg_view(x, 2, v);
    CHECK(vw && cg_tensor_shape(vw)[1] == 4);
    int64_t bad[1] = {24};
    CHECK_ERR(cg_view(pm, 1, bad) == NULL, CG_ERR_SHAPE, "Use reshape instead");
    cg_tensor *rs = cg_reshape(pm, 1, bad);
    CHECK(rs && cg_tensor_storage_id(rs) != cg_tensor_storage_id(x)); /* copied */
    int64_t bad2[1] = {25};
    CHECK_ERR(cg_reshape(x, 1, bad2) == NULL, CG_ERR_SHAPE, "invalid for input of size 24");
    CHECK_ERR(cg_select(x, 1, 3) == NULL, CG_ERR_INDEX, "out of bounds");
    CHECK_ERR(cg_permute(x, (int64_t[]){0, 0, 1}) == NULL, CG_ERR_VALUE, "repeated dim");
    CHECK_ERR(cg_transpose(x, 0, 3) == NULL, CG_ERR_INDEX, "out of range");
    cg_tensor *sq = cg_unsqueeze(x, -1);
    CHECK(cg_tensor_ndim(sq) == 4 && cg_tensor_shape(sq)[3] == 1);
    cg_tensor *sq2 = cg_squeeze(sq);
    CHECK(cg_tensor_ndim(sq2) == 3);
    cg_tensor *fl = cg_flatten(x, 1, 2);
    CHECK(cg_tensor_ndim(fl) == 2 && cg_tensor_shape(fl)[1] == 12);
    cg_tensor *uf = cg_unflatten(fl, 1, 2, (int64_t[]){3, 4});
    CHECK(uf && cg_tensor_ndim(uf) == 3);
    cg_tensor *ts[] = {x, pm, vw, rs, sq, sq2, fl, uf};
    for (int i = 0; i < 8; i++) cg_tensor_release(ts[i]);
}

TEST(views_empty_and_zero_dim) {
    int64_t sh[2] = {0, 3};
    cg_tensor *e = cg_zeros(2, sh, CG_DTYPE_F64, cg_cpu());
    cg_tensor_set_requires_grad(e, true);
    cg_tensor *t = cg_transpose(e, 0, 1);
    cg_tensor *s = cg_sum(t, 0, NULL, false);
    CHECK_NEAR(tt_get(s, 0), 0.0, 0);
    CHECK_OK(cg_backward(s, NULL, false, false));
    CHECK(cg_tensor_grad(e) && cg_tensor_numel(cg_tensor_grad(e)) == 0);
    cg_tensor *z = cg_scalar(2.0, CG_DTYPE_F64);
    cg_tensor *u = cg_unsqueeze(z, 0);
    CHECK(cg_tensor_ndim(u) == 1);
    cg_tensor *ts[] = {e, t, s, z, u};
    for (int i = 0; i < 5; i++) cg_tensor_release(ts[i]);
}

/* as_strided of a transposed input, reaching outside its region (Note [General as_strided backward]) */
static cg_tensor *f_as_strided_general(cg_tensor *const *in, void *ctx) {
    (void)ctx;
    cg_tensor *t = cg_t(in[0]); /* (4,3), strides (1,4) */
    int64_t sz[2] = {3, 3}, st[2] = {1, 2};
    cg_tensor *a = cg_as_strided(t, 2, sz, st, 1);
    cg_tensor *a2 = cg_mul(a, a), *y = cg_sum(a2, 0, NULL, false);
    cg_tensor_release(t);
    cg_tensor_release(a);
    cg_tensor_release(a2);
    return y;
}

TEST(views_as_strided_general_input_grads) {
    int64_t sh[2] = {3, 4};
    cg_tensor *x = tt_rand(CG_DTYPE_F64, 2, sh, -1, 1, 21);
    cg_tensor_set_requires_grad(x, true);
    CHECK(tt_gradcheck(f_as_strided_general, NULL, 1, &x, 1e-6, 1e-7, 1e-5));
    CHECK(tt_gradgradcheck(f_as_strided_general, NULL, 1, &x, 1e-6, 1e-7, 1e-5));
    cg_tensor_release(x);
}

/* in-place views: geometry, history, version, errors (Note [In-place views]) */
TEST(views_inplace_geometry_history_errors) {
    int64_t sh[2] = {2, 3};
    cg_tensor *x = tt_rand(CG_DTYPE_F64, 2, sh, -1, 1, 22);
    cg_tensor_set_requires_grad(x, true);
    CHECK(cg_t_(x) == CG_ERR_RUNTIME); /* a leaf requiring grad */
    cg_tensor *two = cg_scalar(2.0, CG_DTYPE_F64);
    cg_tensor *y = cg_mul(x, two);
    uint64_t v0 = cg_tensor_version(y);
    CHECK_OK(cg_transpose_(y, 0, 1));
    CHECK(cg_tensor_shape(y)[0] == 3 && cg_tensor_strides(y)[0] == 1 && cg_tensor_version(y) == v0 + 1);
    CHECK_OK(cg_unsqueeze_(y, 0));
    CHECK(cg_tensor_ndim(y) == 3);
    int64_t d0 = 0;
    CHECK_OK(cg_squeeze_dims_(y, 1, &d0));
    CHECK(cg_tensor_ndim(y) == 2);
    CHECK(cg_transpose_(y, 0, 2) == CG_ERR_INDEX && cg_tensor_ndim(y) == 2);
    int64_t sz = 7, st = 1;
    CHECK(cg_as_strided_(y, 1, &sz, &st, 0) == CG_ERR_INDEX);
    cg_tensor *s = cg_sum(y, 0, NULL, false);
    CHECK_OK(cg_backward(s, NULL, false, false));
    CHECK_NEAR(tt_get(cg_tensor_grad(x), 4), 2.0, 0);
    CHECK_OK(cg_squeeze_(two)); /* 0-d: unchanged */
    CHECK(cg_tensor_ndim(two) == 0);
    cg_tensor *ts[] = {x, two, y, s};
    for (int i = 0; i < 4; i++) cg_tensor_release(ts[i]);
}
