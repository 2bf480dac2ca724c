/* test_unary.c — unary math ops (abs .. frac, nan_to_num, clamp with scalar
 * bounds, pow with a scalar) through the elementwise checker against libm
 * references, plus special values, integer dtypes, in-place and errors. */
#include "opcheck.h"

#include <string.h>

#define INTS ((1u << CG_DTYPE_U8) | (1u << CG_DTYPE_I8) | (1u << CG_DTYPE_I16) | (1u << CG_DTYPE_I32) | (1u << CG_DTYPE_I64))
#define SINTS (INTS & ~(1u << CG_DTYPE_U8))

/* erfinv reference: bisection on erf to bracket, then Newton polish */
static double ref_erfinv(double y) {
    if (y <= -1 || y >= 1) return y == 1 ? INFINITY : y == -1 ? -INFINITY : NAN;
    double lo = -6, hi = 6;
    for (int i = 0; i < 60; i++) {
        double mid = 0.5 * (lo + hi);
        if (erf(mid) < y) lo = mid;
        else hi = mid;
    }
    double x = 0.5 * (lo + hi);
    for (int i = 0; i < 3; i++) x -= (erf(x) - y) / (2 / sqrt(M_PI) * exp(-x * x));
    return x;
}

typedef cg_tensor *(*unary_fn)(cg_tensor *);
typedef double (*ref1)(double);
typedef struct u_ctx {
    unary_fn f;
    ref1 r;
} u_ctx;
static cg_tensor *f_unary(cg_tensor *const *x, void *c) { return ((u_ctx *)c)->f(x[0]); }
static double r_unary(const double *x, void *c) { return ((u_ctx *)c)->r(x[0]); }

static double r_sign(double x) { return (x > 0) - (x < 0); }
static double r_recip(double x) { return 1 / x; }
static double r_square(double x) { return x * x; }
static double r_rsqrt(double x) { return 1 / sqrt(x); }
static double r_frac(double x) { return x - trunc(x); }
static double r_round(double x) { return nearbyint(x); }

/* one checker run per op: name, fn, reference, domain, extra integer dtypes, float32 rtol */
static void check1(const char *name, unary_fn f, ref1 r, double lo, double hi, unsigned ints, double rtol32) {
    u_ctx c = {f, r};
    tt_check_elementwise(&(tt_ew_case){.name = name, .arity = 1, .fn = f_unary, .ctx = &c, .ref = r_unary,
                                       .lo = {lo}, .hi = {hi}, .differentiable = true, .int_dtypes = ints,
                                       .rtol32 = rtol32});
}

TEST(unary_abs_sign_square) {
    check1("abs", cg_abs, fabs, 0.1, 2, 0, 0);           /* positive side */
    check1("abs-neg", cg_abs, fabs, -2, -0.1, SINTS, 0); /* negative side, ints */
    check1("sign", cg_sign, r_sign, -2, 2, INTS | (1u << CG_DTYPE_BOOL), 0);
    check1("square", cg_square, r_square, -3, 3, INTS, 0);
    u_ctx c = {cg_abs, fabs};
    tt_check_elementwise(&(tt_ew_case){.name = "abs-u8", .arity = 1, .fn = f_unary, .ctx = &c, .ref = r_unary,
                                       .lo = {0}, .hi = {9}, .int_dtypes = 1u << CG_DTYPE_U8});
}

TEST(unary_powers_exp_log) {
    check1("reciprocal", cg_reciprocal, r_recip, 0.5, 3, 0, 0);
    check1("reciprocal-neg", cg_reciprocal, r_recip, -3, -0.5, 0, 0);
    check1("sqrt", cg_sqrt, sqrt, 0.2, 4, 0, 0);
    check1("rsqrt", cg_rsqrt, r_rsqrt, 0.2, 4, 0, 0);
    check1("exp2", cg_exp2, exp2, -3, 3, 0, 0);
    check1("expm1", cg_expm1, expm1, -2, 2, 0, 0);
    check1("log", cg_log, log, 0.2, 5, 0, 0);
    check1("log2", cg_log2, log2, 0.2, 5, 0, 0);
    check1("log10", cg_log10, log10, 0.2, 5, 0, 0);
    check1("log1p", cg_log1p, log1p, -0.7, 3, 0, 0);
}

TEST(unary_trig_hyperbolic) {
    check1("sin", cg_sin, sin, -3, 3, 0, 0);
    check1("cos", cg_cos, cos, -3, 3, 0, 0);
    check1("tan", cg_tan, tan, -1.2, 1.2, 0, 0);
    check1("asin", cg_asin, asin, -0.9, 0.9, 0, 0);
    check1("acos", cg_acos, acos, -0.9, 0.9, 0, 0);
    check1("atan", cg_atan, atan, -3, 3, 0, 0);
    check1("sinh", cg_sinh, sinh, -2, 2, 0, 0);
    check1("cosh", cg_cosh, cosh, -2, 2, 0, 0);
    check1("tanh", cg_tanh, tanh, -2, 2, 0, 0);
    check1("asinh", cg_asinh, asinh, -3, 3, 0, 0);
    check1("acosh", cg_acosh, acosh, 1.2, 4, 0, 0);
    check1("atanh", cg_atanh, atanh, -0.9, 0.9, 0, 0);
}

TEST(unary_erf_family) {
    check1("erf", cg_erf, erf, -2, 2, 0, 0);
    check1("erfc", cg_erfc, erfc, -2, 2, 0, 0);
    check1("erfinv", cg_erfinv, ref_erfinv, -0.95, 0.95, 0, 0);
    /* tails and specials */
    double v[] = {0, 1e-8, 0.5, 0.999, 0.999999, -0.9999999, 1, -1, 1.5, NAN};
    int64_t n = 10;
    cg_tensor *x = tt_tensor(CG_DTYPE_F64, 1, &n, v), *y = cg_erfinv(x);
    CHECK_NN(y);
    for (int i = 0; y && i < 10; i++) {
        double want = ref_erfinv(v[i]), got = tt_get(y, i);
        CHECK_MSG((isnan(want) && isnan(got)) || got == want || fabs(got - want) <= 1e-9 * fabs(want),
                  "erfinv(%g) = %.17g, want %.17g", v[i], got, want);
    }
    cg_tensor_release(x);
    cg_tensor_release(y);
}

TEST(unary_rounding) {
    check1("floor", cg_floor, floor, -5, 5, INTS, 0);
    check1("ceil", cg_ceil, ceil, -5, 5, INTS, 0);
    check1("round", cg_round, r_round, -5, 5, INTS, 0);
    check1("trunc", cg_trunc, trunc, -5, 5, INTS, 0);
    check1("frac", cg_frac, r_frac, -5, 5, 0, 0);
    /* round: half to even; gradients of floor & co are zero (not absent) */
    double v[] = {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999};
    double w[] = {0, 2, 2, -0.0, -2, -2, 2};
    int64_t n = 7;
    cg_tensor *x = tt_tensor(CG_DTYPE_F32, 1, &n, v), *y = cg_round(x);
    for (int i = 0; i < 7; i++) CHECK_NEAR(tt_get(y, i), w[i], 0);
    cg_tensor *xd = tt_tensor(CG_DTYPE_F64, 1, &n, v);
    cg_tensor_set_requires_grad(xd, true);
    cg_tensor *f = cg_floor(xd), *s = cg_sum(f, 0, NULL, false);
    CHECK_OK(cg_backward(s, NULL, false, false));
    cg_tensor *gr = cg_tensor_grad(xd);
    CHECK(gr && cg_tensor_numel(gr) == 7 && tt_get(gr, 0) == 0 && tt_get(gr, 6) == 0);
    cg_tensor_release(x), cg_tensor_release(y), cg_tensor_release(xd), cg_tensor_release(f), cg_tensor_release(s);
}

/* ---------------------------------------------------------------- parameterised ops */
typedef struct p_ctx {
    double a, b, c;
    const double *lo, *hi;
} p_ctx;

static cg_tensor *f_ntn(cg_tensor *const *x, void *c) { p_ctx *p = c; return cg_nan_to_num(x[0], p->a, p->b, p->c); }
static double r_ident(const double *x, void *c) { (void)c; return x[0]; }
static cg_tensor *f_clamp(cg_tensor *const *x, void *c) { p_ctx *p = c; return cg_clamp_scalar(x[0], p->lo, p->hi); }
static double r_clamp(const double *x, void *c) {
    p_ctx *p = c;
    double r = x[0];
    if (p->lo && r < *p->lo) r = *p->lo;
    if (p->hi && r > *p->hi) r = *p->hi;
    return r;
}
static cg_tensor *f_pow(cg_tensor *const *x, void *c) { return cg_pow_scalar(x[0], ((p_ctx *)c)->a); }
static double r_pow(const double *x, void *c) { return pow(x[0], ((p_ctx *)c)->a); }
static cg_tensor *f_rpow(cg_tensor *const *x, void *c) { return cg_rpow_scalar(((p_ctx *)c)->a, x[0]); }
static double r_rpow(const double *x, void *c) { return pow(((p_ctx *)c)->a, x[0]); }

TEST(unary_nan_to_num) {
    p_ctx c = {.a = 0, .b = 100, .c = -100};
    tt_check_elementwise(&(tt_ew_case){.name = "nan_to_num", .arity = 1, .fn = f_ntn, .ctx = &c, .ref = r_ident,
                                       .differentiable = true, .int_dtypes = INTS});
    double v[] = {NAN, INFINITY, -INFINITY, 1.5};
    int64_t n = 4;
    cg_tensor *x = tt_tensor(CG_DTYPE_F64, 1, &n, v);
    cg_tensor_set_requires_grad(x, true);
    cg_tensor *y = cg_nan_to_num(x, 7, 8, 9);
    CHECK(tt_get(y, 0) == 7 && tt_get(y, 1) == 8 && tt_get(y, 2) == 9 && tt_get(y, 3) == 1.5);
    cg_tensor *s = cg_sum(y, 0, NULL, false);
    CHECK_OK(cg_backward(s, NULL, false, false));
    cg_tensor *g = cg_tensor_grad(x);
    CHECK(g && tt_get(g, 0) == 0 && tt_get(g, 1) == 0 && tt_get(g, 2) == 0 && tt_get(g, 3) == 1);
    cg_tensor *h = tt_tensor(CG_DTYPE_F16, 1, &n, v), *hy = cg_nan_to_num(h, 0, 65504, -65504);
    CHECK(hy && tt_get(hy, 0) == 0 && tt_get(hy, 1) == 65504 && tt_get(hy, 2) == -65504);
    cg_tensor_release(x), cg_tensor_release(y), cg_tensor_release(s), cg_tensor_release(h), cg_tensor_release(hy);
}

TEST(unary_clamp_scalar) {
    double lo = -0.7, hi = 0.9;
    p_ctx both = {.lo = &lo, .hi = &hi}, onlylo = {.lo = &lo}, onlyhi = {.hi = &hi};
    p_ctx *cs[] = {&both, &onlylo, &onlyhi};
    for (int i = 0; i < 3; i++)
        tt_check_elementwise(&(tt_ew_case){.name = "clamp", .arity = 1, .fn = f_clamp, .ctx = cs[i], .ref = r_clamp,
                                           .differentiable = true});
    double ilo = -1, ihi = 2;
    p_ctx ints = {.lo = &ilo, .hi = &ihi};
    tt_check_elementwise(&(tt_ew_case){.name = "clamp-int", .arity = 1, .fn = f_clamp, .ctx = &ints, .ref = r_clamp,
                                       .lo = {-4}, .hi = {4}, .int_dtypes = SINTS});
    /* min > max gives max; NaN propagates; bounds saturate on small int dtypes; gradient at the bounds passes */
    double v[] = {-5, 0, 5, NAN, 2, 3};
    int64_t n = 6;
    cg_tensor *x = tt_tensor(CG_DTYPE_F64, 1, &n, v);
    double a = 3, b = 1;
    cg_tensor *y = cg_clamp_scalar(x, &a, &b);
    CHECK(tt_get(y, 0) == 1 && tt_get(y, 2) == 1 && isnan(tt_get(y, 3)));
    cg_tensor_set_requires_grad(x, true);
    double c2 = 2, c3 = 3;
    cg_tensor *z = cg_clamp_scalar(x, &c2, &c3), *s = cg_sum(z, 0, NULL, false);
    CHECK_OK(cg_backward(s, NULL, false, false));
    cg_tensor *g = cg_tensor_grad(x);
    CHECK(g && tt_get(g, 0) == 0 && tt_get(g, 3) == 0 && tt_get(g, 4) == 1 && tt_get(g, 5) == 1);
    double iv[] = {-100, 0, 100};
    int64_t n3 = 3;
    cg_tensor *i8 = tt_tensor(CG_DTYPE_I8, 1, &n3, iv);
    double big = 1000, nbig = -1000;
    cg_tensor *r1 = cg_clamp_scalar(i8, &big, NULL), *r2 = cg_clamp_scalar(i8, NULL, &nbig);
    CHECK(tt_get(r1, 0) == 127 && tt_get(r2, 2) == -128);
    CHECK_ERR(cg_clamp_scalar(x, NULL, NULL) == NULL, CG_ERR_VALUE, "[clamp] at least one of");
    cg_tensor_release(x), cg_tensor_release(y), cg_tensor_release(z), cg_tensor_release(s);
    cg_tensor_release(i8), cg_tensor_release(r1), cg_tensor_release(r2);
}

TEST(unary_pow_scalar) {
    double es[] = {2, 3, 0.5, -1, 1.7, -2.5, 1, 0};
    for (int i = 0; i < 8; i++) {
        p_ctx c = {.a = es[i]};
        tt_check_elementwise(&(tt_ew_case){.name = "pow_scalar", .arity = 1, .fn = f_pow, .ctx = &c, .ref = r_pow,
                                           .lo = {0.3}, .hi = {2.5}, .differentiable = true, .rtol32 = 3e-5});
    }
    p_ctx c3 = {.a = 3};
    tt_check_elementwise(&(tt_ew_case){.name = "pow_scalar-int", .arity = 1, .fn = f_pow, .ctx = &c3, .ref = r_pow,
                                       .lo = {-4}, .hi = {4}, .int_dtypes = SINTS});
    p_ctx c0 = {.a = 0};
    tt_check_elementwise(&(tt_ew_case){.name = "pow_scalar-int0", .arity = 1, .fn = f_pow, .ctx = &c0, .ref = r_pow,
                                       .lo = {0}, .hi = {5}, .int_dtypes = INTS});
    double bs[] = {2, 0.5, 3.7};
    for (int i = 0; i < 3; i++) {
        p_ctx c = {.a = bs[i]};
        tt_check_elementwise(&(tt_ew_case){.name = "rpow_scalar", .arity = 1, .fn = f_rpow, .ctx = &c, .ref = r_rpow,
                                           .differentiable = true, .rtol32 = 3e-5});
    }
    /* base 0: gradient is 0 where x >= 0 */
    double v[] = {0, 1.5};
    int64_t n = 2;
    cg_tensor *x = tt_tensor(CG_DTYPE_F64, 1, &n, v);
    cg_tensor_set_requires_grad(x, true);
    cg_tensor *y = cg_rpow_scalar(0, x), *s = cg_sum(y, 0, NULL, false);
    CHECK(tt_get(y, 0) == 1 && tt_get(y, 1) == 0);
    CHECK_OK(cg_backward(s, NULL, false, false));
    cg_tensor *g = cg_tensor_grad(x);
    CHECK(g && tt_get(g, 0) == 0 && tt_get(g, 1) == 0);
    int64_t m = 3;
    cg_tensor *xi = cg_ones(1, &m, CG_DTYPE_I64, cg_cpu());
    CHECK_ERR(cg_pow_scalar(xi, 1.5) == NULL, CG_ERR_DTYPE, "non-integral exponent");
    CHECK_ERR(cg_pow_scalar(xi, -1) == NULL, CG_ERR_VALUE, "negative integer powers");
    CHECK_ERR(cg_rpow_scalar(2, xi) == NULL, CG_ERR_DTYPE, "[pow] not supported for dtype int64");
    cg_tensor_release(x), cg_tensor_release(y), cg_tensor_release(s), cg_tensor_release(xi);
}

/* ---------------------------------------------------------------- errors, in-place, registry */
TEST(unary_errors) {
    int64_t s[1] = {3};
    cg_tensor *i = cg_ones(1, s, CG_DTYPE_I64, cg_cpu()), *b = cg_ones(1, s, CG_DTYPE_BOOL, cg_cpu());
    unary_fn float_only[] = {cg_reciprocal, cg_sqrt, cg_rsqrt, cg_exp2, cg_expm1, cg_log, cg_log2, cg_log10,
                             cg_log1p, cg_sin, cg_cos, cg_tan, cg_asin, cg_acos, cg_atan, cg_sinh, cg_cosh,
                             cg_tanh, cg_asinh, cg_acosh, cg_atanh, cg_erf, cg_erfc, cg_erfinv, cg_frac};
    for (size_t k = 0; k < sizeof float_only / sizeof *float_only; k++)
        CHECK_ERR(float_only[k](i) == NULL, CG_ERR_DTYPE, "not supported for dtype int64");
    CHECK_ERR(cg_log(i) == NULL, CG_ERR_DTYPE, "[log] not supported for dtype int64");
    CHECK_ERR(cg_abs(b) == NULL, CG_ERR_DTYPE, "[abs] not supported for dtype bool");
    CHECK_ERR(cg_abs(NULL) == NULL, CG_ERR_VALUE, "NULL");
    cg_tensor_release(i);
    cg_tensor_release(b);
}

TEST(unary_inplace) {
    int64_t sh[2] = {3, 4};
    const char *names[] = {"abs", "sqrt", "log", "tanh", "floor", "erfinv", "reciprocal", "square"};
    unary_fn fns[] = {cg_abs, cg_sqrt, cg_log, cg_tanh, cg_floor, cg_erfinv, cg_reciprocal, cg_square};
    for (int k = 0; k < 8; k++) {
        cg_tensor *x = tt_rand(CG_DTYPE_F32, 2, sh, 0.1, 0.9, 5);
        cg_tensor *want = fns[k](x);
        const void *sid = cg_tensor_storage_id(x);
        uint64_t ver = cg_tensor_version(x);
        CHECK_OK(cg_unary_(names[k], x));
        CHECK(cg_tensor_storage_id(x) == sid && cg_tensor_version(x) > ver);
        CHECK_MSG(tt_maxdiff(x, want) == 0, "%s_ differs from %s", names[k], names[k]);
        cg_tensor_release(x);
        cg_tensor_release(want);
    }
    /* clamp_ on a non-contiguous view; clamp_ with autograd history matches and is differentiable */
    cg_tensor *base = tt_rand(CG_DTYPE_F64, 2, sh, -2, 2, 9), *v = cg_transpose(base, 0, 1);
    double lo = -1, hi = 1;
    cg_tensor *want = cg_clamp_scalar(v, &lo, &hi);
    uint64_t ver = cg_tensor_version(v);
    CHECK_OK(cg_clamp_(v, &lo, &hi));
    CHECK(tt_maxdiff(v, want) == 0 && cg_tensor_version(base) > ver);
    cg_tensor *leaf = tt_rand(CG_DTYPE_F64, 2, sh, -2, 2, 11);
    cg_tensor_set_requires_grad(leaf, true);
    CHECK_ERR(cg_clamp_(leaf, &lo, &hi) != CG_OK, CG_ERR_RUNTIME, "");
    cg_tensor *t = cg_mul(leaf, leaf);
    CHECK_OK(cg_clamp_(t, &lo, &hi));
    CHECK_OK(cg_unary_("sin", t));
    cg_tensor *s = cg_sum(t, 0, NULL, false);
    CHECK_OK(cg_backward(s, NULL, false, false));
    cg_tensor *g = cg_tensor_grad(leaf);
    for (int64_t j = 0; g && j < 12; j++) {
        double a = tt_get(leaf, j), q = a * a;
        double w = q <= 1 ? cos(q) * 2 * a : 0;
        CHECK_NEAR(tt_get(g, j), w, 1e-12);
    }
    CHECK_ERR(cg_clamp_(base, NULL, NULL) != CG_OK, CG_ERR_VALUE, "[clamp_]");
    CHECK_ERR(cg_unary_("nope", base) != CG_OK, CG_ERR_VALUE, "unknown unary op");
    int64_t n = 3;
    cg_tensor *ii = cg_ones(1, &n, CG_DTYPE_I32, cg_cpu());
    CHECK_ERR(cg_unary_("sqrt", ii) != CG_OK, CG_ERR_DTYPE, "[sqrt] not supported for dtype int32");
    CHECK_OK(cg_unary_("neg", ii));
    CHECK_OK(cg_unary_("abs", ii));
    CHECK(tt_get(ii, 2) == 1);
    cg_tensor_release(base), cg_tensor_release(v), cg_tensor_release(want), cg_tensor_release(leaf);
    cg_tensor_release(t), cg_tensor_release(s), cg_tensor_release(ii);
}

TEST(unary_meta_and_names) {
    int64_t sh[2] = {2, 3};
    cg_tensor *m = cg_empty(2, sh, CG_DTYPE_F32, cg_meta());
    cg_tensor *y = cg_erfinv(m);
    CHECK(y && cg_tensor_device(y).type == CG_DEVICE_META && cg_tensor_numel(y) == 6);
    cg_tensor *x = tt_rand(CG_DTYPE_F64, 2, sh, 0.2, 0.8, 3);
    cg_tensor_set_requires_grad(x, true);
    cg_tensor *a = cg_sqrt(x), *b = cg_square(x), *c = cg_clamp_scalar(x, NULL, &(double){0.5});
    CHECK(strcmp(cg_node_name(cg_tensor_grad_fn(a)), "SqrtBackward0") == 0);
    CHECK(strcmp(cg_node_name(cg_tensor_grad_fn(b)), "PowBackward0") == 0);
    CHECK(strcmp(cg_node_name(cg_tensor_grad_fn(c)), "ClampBackward1") == 0);
    cg_tensor_release(m), cg_tensor_release(y), cg_tensor_release(x);
    cg_tensor_release(a), cg_tensor_release(b), cg_tensor_release(c);
}
