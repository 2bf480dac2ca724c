/* test_nary.c — the n-ary ops lerp, addcmul, addcdiv and clamp with tensor
 * bounds (both, one or none): the elementwise checker, NaN handling, the
 * gradient routing of clamp and errors. */
#include "opcheck.h"

#define SIGNED_INTS ((1u << CG_DTYPE_I8) | (1u << CG_DTYPE_I16) | (1u << CG_DTYPE_I32) | (1u << CG_DTYPE_I64))

static cg_tensor *f_lerp(cg_tensor *const *x, void *c) { (void)c; return cg_lerp(x[0], x[1], x[2]); }
static double r_lerp(const double *x, void *c) { (void)c; return x[0] + x[2] * (x[1] - x[0]); }
static cg_tensor *f_addcmul(cg_tensor *const *x, void *c) { return cg_addcmul(x[0], x[1], x[2], *(double *)c); }
static double r_addcmul(const double *x, void *c) { return x[0] + *(double *)c * x[1] * x[2]; }
static cg_tensor *f_addcdiv(cg_tensor *const *x, void *c) { return cg_addcdiv(x[0], x[1], x[2], *(double *)c); }
static double r_addcdiv(const double *x, void *c) { return x[0] + *(double *)c * x[1] / x[2]; }
static cg_tensor *f_clamp(cg_tensor *const *x, void *c) { (void)c; return cg_clamp(x[0], x[1], x[2]); }
static double r_clamp(const double *x, void *c) { (void)c; return fmin(fmax(x[0], x[1]), x[2]); }
static cg_tensor *f_clamp_min(cg_tensor *const *x, void *c) { (void)c; return cg_clamp(x[0], x[1], NULL); }
static double r_clamp_min(const double *x, void *c) { (void)c; return fmax(x[0], x[1]); }
static cg_tensor *f_clamp_max(cg_tensor *const *x, void *c) { (void)c; return cg_clamp(x[0], NULL, x[1]); }
static double r_clamp_max(const double *x, void *c) { (void)c; return fmin(x[0], x[1]); }

TEST(nary_lerp) {
    /* weights on both sides of 0.5 exercise both forms of the formula */
    tt_check_elementwise(&(tt_ew_case){.name = "lerp", .arity = 3, .fn = f_lerp, .ref = r_lerp, .differentiable = true,
                                       .lo = {-2, -2, -0.5}, .hi = {2, 2, 1.5}});
    /* exact at the ends */
    int64_t s[1] = {2};
    const double sv[] = {0.1, -3}, ev[] = {0.7, 1e8}, wv[] = {0, 1};
    cg_tensor *a = tt_tensor(CG_DTYPE_F32, 1, s, sv), *b = tt_tensor(CG_DTYPE_F32, 1, s, ev), *w = tt_tensor(CG_DTYPE_F32, 1, s, wv);
    cg_tensor *r = cg_lerp(a, b, w);
    CHECK_NN(r);
    if (r) {
        CHECK(tt_get(r, 0) == tt_get(a, 0));
        CHECK(tt_get(r, 1) == tt_get(b, 1));
    }
    cg_tensor_release(r);
    cg_tensor_release(a);
    cg_tensor_release(b);
    cg_tensor_release(w);
}

TEST(nary_addcmul_addcdiv) {
    double v = 0.75, vi = 3, vd = -1.5;
    tt_check_elementwise(&(tt_ew_case){.name = "addcmul", .arity = 3, .fn = f_addcmul, .ctx = &v, .ref = r_addcmul,
                                       .differentiable = true, .lo = {-2, -2, -2}, .hi = {2, 2, 2}});
    tt_check_elementwise(&(tt_ew_case){.name = "addcmul(int)", .arity = 3, .fn = f_addcmul, .ctx = &vi, .ref = r_addcmul,
                                       .int_dtypes = SIGNED_INTS, .lo = {-3, -3, -3}, .hi = {3, 3, 3}});
    tt_check_elementwise(&(tt_ew_case){.name = "addcmul(uint8)", .arity = 3, .fn = f_addcmul, .ctx = &vi, .ref = r_addcmul,
                                       .int_dtypes = 1u << CG_DTYPE_U8, .lo = {0, 0, 0}, .hi = {4, 4, 4}});
    tt_check_elementwise(&(tt_ew_case){.name = "addcdiv", .arity = 3, .fn = f_addcdiv, .ctx = &vd, .ref = r_addcdiv,
                                       .differentiable = true, .lo = {-2, -2, 0.5}, .hi = {2, 2, 2}});
}

TEST(nary_clamp_tensor_bounds) {
    tt_check_elementwise(&(tt_ew_case){.name = "clamp", .arity = 3, .fn = f_clamp, .ref = r_clamp, .differentiable = true,
                                       .int_dtypes = SIGNED_INTS, .lo = {-2, -1.5, 0.1}, .hi = {2, -0.1, 1.5}});
    /* min > max: the result is max, and only max gets a gradient */
    tt_check_elementwise(&(tt_ew_case){.name = "clamp(min>max)", .arity = 3, .fn = f_clamp, .ref = r_clamp,
                                       .differentiable = true, .lo = {-2, 0.6, -0.5}, .hi = {2, 1.5, 0.4}});
    tt_check_elementwise(&(tt_ew_case){.name = "clamp(min)", .arity = 2, .fn = f_clamp_min, .ref = r_clamp_min,
                                       .differentiable = true, .int_dtypes = SIGNED_INTS, .lo = {-2, -2}, .hi = {2, 2}});
    tt_check_elementwise(&(tt_ew_case){.name = "clamp(max)", .arity = 2, .fn = f_clamp_max, .ref = r_clamp_max,
                                       .differentiable = true, .int_dtypes = SIGNED_INTS, .lo = {-2, -2}, .hi = {2, 2}});
}

TEST(nary_clamp_nan_and_grad_routing) {
    int64_t s[1] = {4};
    const double xv[] = {NAN, 0.5, 0.5, 3}, lov[] = {0, NAN, 0, 0}, hiv[] = {1, 1, NAN, 1};
    cg_tensor *x = tt_tensor(CG_DTYPE_F32, 1, s, xv), *lo = tt_tensor(CG_DTYPE_F32, 1, s, lov), *hi = tt_tensor(CG_DTYPE_F32, 1, s, hiv);
    cg_tensor *r = cg_clamp(x, lo, hi), *rmin = cg_clamp(x, lo, NULL), *rmax = cg_clamp(x, NULL, hi);
    CHECK(r && rmin && rmax);
    if (r && rmin && rmax) {
        CHECK(isnan(tt_get(r, 0)) && isnan(tt_get(r, 1)) && isnan(tt_get(r, 2)) && tt_get(r, 3) == 1);
        CHECK(isnan(tt_get(rmin, 0)) && isnan(tt_get(rmin, 1)) && tt_get(rmin, 2) == 0.5 && tt_get(rmin, 3) == 3);
        CHECK(isnan(tt_get(rmax, 0)) && tt_get(rmax, 1) == 0.5 && isnan(tt_get(rmax, 2)) && tt_get(rmax, 3) == 1);
    }
    cg_tensor_release(r);
    cg_tensor_release(rmin);
    cg_tensor_release(rmax);
    cg_tensor_release(x);
    cg_tensor_release(lo);
    cg_tensor_release(hi);

    /* gradient goes to x inside [lo, hi] (bounds included), to the bound that binds otherwise */
    const double x2[] = {-1, 0.5, 2, 0}, lo2[] = {0, 0, 0, 0}, hi2[] = {1, 1, 1, 0};
    cg_tensor *a = tt_tensor(CG_DTYPE_F64, 1, s, x2), *l = tt_tensor(CG_DTYPE_F64, 1, s, lo2), *h = tt_tensor(CG_DTYPE_F64, 1, s, hi2);
    cg_tensor_set_requires_grad(a, true);
    cg_tensor_set_requires_grad(l, true);
    cg_tensor_set_requires_grad(h, true);
    cg_tensor *y = cg_clamp(a, l, h), *sy = y ? cg_sum(y, 0, NULL, false) : NULL;
    CHECK_NN(sy);
    if (sy) {
        CHECK_OK(cg_backward(sy, NULL, false, false));
        const cg_tensor *ga = cg_tensor_grad(a), *gl = cg_tensor_grad(l), *gh = cg_tensor_grad(h);
        CHECK(ga && gl && gh);
        if (ga && gl && gh) {
            const double wa[] = {0, 1, 0, 1}, wl[] = {1, 0, 0, 0}, wh[] = {0, 0, 1, 0};
            for (int k = 0; k < 4; k++) {
                CHECK_MSG(tt_get(ga, k) == wa[k], "clamp grad x element %d", k);
                CHECK_MSG(tt_get(gl, k) == wl[k], "clamp grad min element %d", k);
                CHECK_MSG(tt_get(gh, k) == wh[k], "clamp grad max element %d", k);
            }
        }
    }
    cg_tensor_release(sy);
    cg_tensor_release(y);
    cg_tensor_release(a);
    cg_tensor_release(l);
    cg_tensor_release(h);
}

TEST(nary_clamp_no_bounds_is_copy) {
    int64_t s[2] = {2, 3};
    cg_tensor *x = tt_rand(CG_DTYPE_F64, 2, s, -1, 1, 5);
    cg_tensor_set_requires_grad(x, true);
    cg_tensor *y = cg_clamp(x, NULL, NULL);
    CHECK_NN(y);
    if (y) {
        CHECK(y != x && tt_maxdiff(x, y) == 0);
        CHECK(cg_tensor_storage_id(y) != cg_tensor_storage_id(x));
        CHECK(cg_tensor_requires_grad(y));
    }
    cg_tensor_release(y);
    cg_tensor_release(x);
}

TEST(nary_errors) {
    int64_t s[1] = {3}, s2[1] = {2};
    cg_tensor *i = cg_ones(1, s, CG_DTYPE_I64, cg_cpu()), *f = cg_ones(1, s, CG_DTYPE_F32, cg_cpu());
    cg_tensor *f2 = cg_ones(1, s2, CG_DTYPE_F32, cg_cpu()), *d = cg_ones(1, s, CG_DTYPE_F64, cg_cpu());
    cg_tensor *b = cg_ones(1, s, CG_DTYPE_BOOL, cg_cpu());
    CHECK_ERR(cg_lerp(i, i, i) == NULL, CG_ERR_DTYPE, "[lerp] not supported for dtype int64");
    CHECK_ERR(cg_addcdiv(i, i, i, 1) == NULL, CG_ERR_DTYPE, "[addcdiv] not supported for dtype int64");
    CHECK_ERR(cg_addcmul(b, b, b, 1) == NULL, CG_ERR_DTYPE, "[addcmul] not supported for dtype bool");
    CHECK_ERR(cg_lerp(f, d, f) == NULL, CG_ERR_DTYPE, "[lerp]");
    CHECK_ERR(cg_addcmul(f, f, f2, 2) == NULL, CG_ERR_SHAPE, "[addcmul]");
    CHECK_ERR(cg_clamp(f, d, f) == NULL, CG_ERR_DTYPE, "[clamp]");
    CHECK_ERR(cg_clamp(f, f2, f) == NULL, CG_ERR_SHAPE, "[clamp]");
    CHECK_ERR(cg_clamp(f, f2, NULL) == NULL, CG_ERR_SHAPE, "[clamp_min]");
    CHECK_ERR(cg_clamp(b, b, b) == NULL, CG_ERR_DTYPE, "[clamp] not supported for dtype bool");
    CHECK_ERR(cg_clamp(NULL, f, f) == NULL, CG_ERR_VALUE, "[clamp]");
    CHECK_ERR(cg_lerp(f, NULL, f) == NULL, CG_ERR_VALUE, "[lerp]");
    cg_tensor *all[] = {i, f, f2, d, b};
    for (int k = 0; k < 5; k++) cg_tensor_release(all[k]);
}
