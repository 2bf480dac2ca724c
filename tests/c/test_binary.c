/* test_binary.c — the binary arithmetic ops beyond add/sub/mul/div
 * (floor_divide, remainder, fmod, pow, atan2, maximum, minimum, hypot,
 * logaddexp) and isclose: the elementwise checker, Python-style integer
 * semantics on hand-computed references, special values and errors. */
#include "opcheck.h"

#include <stdint.h>
#include <string.h>

#define SIGNED_INTS ((1u << CG_DTYPE_I8) | (1u << CG_DTYPE_I16) | (1u << CG_DTYPE_I32) | (1u << CG_DTYPE_I64))
#define INTS (SIGNED_INTS | (1u << CG_DTYPE_U8))

#define BIN_FN(name)                                                                \
    static cg_tensor *f_##name(cg_tensor *const *x, void *c) {                      \
        (void)c;                                                                    \
        return cg_##name(x[0], x[1]);                                               \
    }
BIN_FN(floor_divide)
BIN_FN(remainder)
BIN_FN(fmod)
BIN_FN(pow)
BIN_FN(atan2)
BIN_FN(maximum)
BIN_FN(minimum)
BIN_FN(hypot)
BIN_FN(logaddexp)

/* float64 references, written from the definitions */
static double r_floor_divide(const double *x, void *c) { (void)c; return floor(x[0] / x[1]); }
static double r_remainder(const double *x, void *c) {
    (void)c;
    return x[0] - floor(x[0] / x[1]) * x[1]; /* Python %: sign of the divisor */
}
static double r_fmod(const double *x, void *c) { (void)c; return fmod(x[0], x[1]); }
static double r_pow(const double *x, void *c) { (void)c; return pow(x[0], x[1]); }
static double r_atan2(const double *x, void *c) { (void)c; return atan2(x[0], x[1]); }
static double r_maximum(const double *x, void *c) { (void)c; return x[0] > x[1] ? x[0] : x[1]; }
static double r_minimum(const double *x, void *c) { (void)c; return x[0] < x[1] ? x[0] : x[1]; }
static double r_hypot(const double *x, void *c) { (void)c; return sqrt(x[0] * x[0] + x[1] * x[1]); }
static double r_logaddexp(const double *x, void *c) { (void)c; return log(exp(x[0]) + exp(x[1])); }

#define CASE(op, ...) tt_check_elementwise(&(tt_ew_case){.name = #op, .arity = 2, .fn = f_##op, .ref = r_##op, __VA_ARGS__})

TEST(binary_floor_divide) {
    CASE(floor_divide, .differentiable = true, .int_dtypes = SIGNED_INTS, .lo = {-9, 1}, .hi = {9, 5});
    CASE(floor_divide, .differentiable = true, .int_dtypes = SIGNED_INTS, .lo = {-9, -5}, .hi = {9, -1});
    CASE(floor_divide, .int_dtypes = 1u << CG_DTYPE_U8, .lo = {0, 1}, .hi = {20, 6});
}
TEST(binary_remainder) {
    CASE(remainder, .differentiable = true, .int_dtypes = SIGNED_INTS, .lo = {-9, 1}, .hi = {9, 5}, .atol32 = 1e-5);
    CASE(remainder, .differentiable = true, .int_dtypes = SIGNED_INTS, .lo = {-9, -5}, .hi = {9, -1}, .atol32 = 1e-5);
    CASE(remainder, .int_dtypes = 1u << CG_DTYPE_U8, .lo = {0, 1}, .hi = {20, 6});
}
TEST(binary_fmod) {
    CASE(fmod, .differentiable = true, .int_dtypes = SIGNED_INTS, .lo = {-9, 1}, .hi = {9, 5});
    CASE(fmod, .differentiable = true, .int_dtypes = SIGNED_INTS, .lo = {-9, -5}, .hi = {9, -1});
    CASE(fmod, .int_dtypes = 1u << CG_DTYPE_U8, .lo = {0, 1}, .hi = {20, 6});
}
TEST(binary_pow) {
    CASE(pow, .differentiable = true, .lo = {0.5, -2}, .hi = {2.5, 2});
    CASE(pow, .int_dtypes = INTS & ~(1u << CG_DTYPE_U8), .lo = {-3, 0}, .hi = {3, 3}); /* int: non-negative exponents */
    CASE(pow, .int_dtypes = 1u << CG_DTYPE_U8, .lo = {0, 0}, .hi = {5, 3});
}
TEST(binary_atan2) {
    CASE(atan2, .differentiable = true, .lo = {-2, 0.3}, .hi = {2, 2});
    CASE(atan2, .differentiable = true, .lo = {0.3, -2}, .hi = {2, 2});
}
TEST(binary_maximum_minimum) {
    CASE(maximum, .differentiable = true, .lo = {-2, -2}, .hi = {2, 2});
    CASE(minimum, .differentiable = true, .lo = {-2, -2}, .hi = {2, 2});
    CASE(maximum, .int_dtypes = INTS | (1u << CG_DTYPE_BOOL), .lo = {0, 0}, .hi = {5, 5});
    CASE(minimum, .int_dtypes = INTS | (1u << CG_DTYPE_BOOL), .lo = {0, 0}, .hi = {5, 5});
}
TEST(binary_hypot) { CASE(hypot, .differentiable = true, .lo = {-2, -2}, .hi = {2, 2}); }
TEST(binary_logaddexp) { CASE(logaddexp, .differentiable = true, .lo = {-3, -3}, .hi = {3, 3}); }

/* ---------------------------------------------------------------- integer semantics */

static cg_tensor *i64_tensor(int n, const int64_t *v) {
    int64_t s[1] = {n};
    return cg_from_data(v, 1, s, CG_DTYPE_I64);
}
static void check_i64(cg_tensor *t, int n, const int64_t *want, const char *what) {
    CHECK_MSG(t != NULL, "%s failed: %s", what, cg_last_error_message());
    if (!t) return;
    int64_t got[16];
    CHECK_OK(cg_tensor_copy_to_buffer(t, got, CG_DTYPE_I64));
    for (int i = 0; i < n; i++)
        CHECK_MSG(got[i] == want[i], "%s element %d: got %lld, expected %lld", what, i, (long long)got[i],
                  (long long)want[i]);
    cg_tensor_release(t);
}

TEST(binary_int_division_python_semantics) {
    const int64_t a[] = {7, -7, 7, -7, 0, -1, INT64_MIN, 9, -9};
    const int64_t b[] = {2, 2, -2, -2, 3, 5, -1, 3, 3};
    /* Python: 7 // 2 ... and the wrapping INT64_MIN // -1 */
    const int64_t fdiv[] = {3, -4, -4, 3, 0, -1, INT64_MIN, 3, -3};
    const int64_t rem[] = {1, 1, -1, -1, 0, 4, 0, 0, 0};
    const int64_t fmd[] = {1, -1, 1, -1, 0, -1, 0, 0, 0};
    cg_tensor *ta = i64_tensor(9, a), *tb = i64_tensor(9, b);
    check_i64(cg_floor_divide(ta, tb), 9, fdiv, "floor_divide int64");
    check_i64(cg_remainder(ta, tb), 9, rem, "remainder int64");
    check_i64(cg_fmod(ta, tb), 9, fmd, "fmod int64");
    cg_tensor_release(ta);
    cg_tensor_release(tb);

    /* int8: -128 // -1 wraps to -128; also through casts of the same values */
    int64_t s[1] = {4};
    const double a8[] = {-128, -7, 100, -100}, b8[] = {-1, 3, -7, 7};
    cg_tensor *x = tt_tensor(CG_DTYPE_I8, 1, s, a8), *y = tt_tensor(CG_DTYPE_I8, 1, s, b8);
    const int64_t fd8[] = {-128, -3, -15, -15}, rm8[] = {0, 2, -5, 5}, fm8[] = {0, -1, 2, -2};
    check_i64(cg_floor_divide(x, y), 4, fd8, "floor_divide int8");
    check_i64(cg_remainder(x, y), 4, rm8, "remainder int8");
    check_i64(cg_fmod(x, y), 4, fm8, "fmod int8");
    cg_tensor_release(x);
    cg_tensor_release(y);
}

TEST(binary_int_division_by_zero) {
    const int64_t a[] = {1, 2, 3}, b[] = {1, 0, 1};
    cg_tensor *ta = i64_tensor(3, a), *tb = i64_tensor(3, b);
    CHECK_ERR(cg_floor_divide(ta, tb) == NULL, CG_ERR_VALUE, "[floor_divide] integer division by zero");
    CHECK_ERR(cg_remainder(ta, tb) == NULL, CG_ERR_VALUE, "[remainder] integer division by zero");
    CHECK_ERR(cg_fmod(ta, tb) == NULL, CG_ERR_VALUE, "[fmod] integer division by zero");
    /* a zero divisor reached through broadcasting (stride 0), int32, large enough to run threaded */
    int64_t big[1] = {100000};
    cg_tensor *x = cg_full(1, big, 5, CG_DTYPE_I32, cg_cpu()), *z = cg_scalar(0, CG_DTYPE_I32);
    CHECK_ERR(cg_floor_divide(x, z) == NULL, CG_ERR_VALUE, "integer division by zero");
    /* the flag belongs to the failing call only */
    cg_tensor *ok = cg_floor_divide(x, x);
    CHECK_NN(ok);
    if (ok) CHECK(tt_get(ok, 99999) == 1);
    cg_tensor_release(ok);
    cg_tensor_release(x);
    cg_tensor_release(z);
    cg_tensor_release(ta);
    cg_tensor_release(tb);
}

TEST(binary_float_division_special) {
    int64_t s[1] = {6};
    const double a[] = {-7.5, 7.5, 0.0, 1.0, -1.0, 1.0}, b[] = {2, -2, -3, 0, 3, INFINITY};
    cg_tensor *x = tt_tensor(CG_DTYPE_F64, 1, s, a), *y = tt_tensor(CG_DTYPE_F64, 1, s, b);
    cg_tensor *fd = cg_floor_divide(x, y), *rm = cg_remainder(x, y), *fm = cg_fmod(x, y);
    CHECK_NN(fd);
    CHECK_NN(rm);
    CHECK_NN(fm);
    if (fd && rm && fm) {
        CHECK(tt_get(fd, 0) == -4 && tt_get(fd, 1) == -4);
        CHECK(tt_get(fd, 2) == 0 && signbit(tt_get(fd, 2))); /* 0.0 // -3 == -0.0 */
        CHECK(isinf(tt_get(fd, 3)) && tt_get(fd, 3) > 0);    /* IEEE 1 / 0 */
        CHECK(tt_get(fd, 4) == -1);
        CHECK(tt_get(rm, 0) == 0.5 && tt_get(rm, 1) == -0.5 && tt_get(rm, 4) == 2);
        CHECK(isnan(tt_get(rm, 3)));
        CHECK(tt_get(fm, 0) == -1.5 && tt_get(fm, 1) == 1.5 && tt_get(fm, 4) == -1);
        CHECK(tt_get(fm, 5) == 1);
    }
    cg_tensor_release(fd);
    cg_tensor_release(rm);
    cg_tensor_release(fm);
    cg_tensor_release(x);
    cg_tensor_release(y);
}

TEST(binary_int_pow) {
    const int64_t a[] = {2, 2, 1, -1, -1, 0, 3, -3, 5};
    const int64_t b[] = {10, -1, -5, -3, -2, 0, 39, 3, 0};
    const int64_t want[] = {1024, 0, 1, -1, 1, 1, 4052555153018976267LL, -27, 1};
    cg_tensor *ta = i64_tensor(9, a), *tb = i64_tensor(9, b);
    check_i64(cg_pow(ta, tb), 9, want, "pow int64");
    /* overflow wraps like fixed-width multiplication: 3^41 mod 2^64 */
    const int64_t a2[] = {3}, b2[] = {41};
    uint64_t w = 1;
    for (int i = 0; i < 41; i++) w *= 3u;
    const int64_t want2[] = {(int64_t)w};
    cg_tensor *tc = i64_tensor(1, a2), *td = i64_tensor(1, b2);
    check_i64(cg_pow(tc, td), 1, want2, "pow int64 wrap");
    cg_tensor_release(ta);
    cg_tensor_release(tb);
    cg_tensor_release(tc);
    cg_tensor_release(td);
}

/* ---------------------------------------------------------------- special values and gradients */

TEST(binary_pow_grad_at_zero) {
    int64_t s[1] = {3};
    const double av[] = {0, 0, 2}, bv[] = {0, 2, 0};
    cg_tensor *a = tt_tensor(CG_DTYPE_F64, 1, s, av), *b = tt_tensor(CG_DTYPE_F64, 1, s, bv);
    cg_tensor_set_requires_grad(a, true);
    cg_tensor_set_requires_grad(b, true);
    cg_tensor *y = cg_pow(a, b);
    CHECK_NN(y);
    if (y) {
        CHECK(tt_get(y, 0) == 1 && tt_get(y, 1) == 0 && tt_get(y, 2) == 1);
        cg_tensor *s0 = cg_sum(y, 0, NULL, false);
        CHECK_OK(cg_backward(s0, NULL, false, false));
        cg_tensor_release(s0);
        const cg_tensor *ga = cg_tensor_grad(a), *gb = cg_tensor_grad(b);
        CHECK(ga && gb);
        if (ga && gb) {
            /* d/da: 0 where b == 0, else b a^(b-1); d/db: 0 where a == 0 and b >= 0, else a^b log a */
            CHECK(tt_get(ga, 0) == 0 && tt_get(ga, 1) == 0 && tt_get(ga, 2) == 0);
            CHECK(tt_get(gb, 0) == 0 && tt_get(gb, 1) == 0);
            CHECK_NEAR(tt_get(gb, 2), log(2.0), 1e-12);
        }
    }
    cg_tensor_release(y);
    cg_tensor_release(a);
    cg_tensor_release(b);
}

TEST(binary_maximum_nan_and_ties) {
    int64_t s[1] = {3};
    const double av[] = {NAN, 1, 1}, bv[] = {1, NAN, 1};
    cg_tensor *a = tt_tensor(CG_DTYPE_F32, 1, s, av), *b = tt_tensor(CG_DTYPE_F32, 1, s, bv);
    cg_tensor *mx = cg_maximum(a, b), *mn = cg_minimum(a, b);
    CHECK(mx && mn);
    if (mx && mn) {
        CHECK(isnan(tt_get(mx, 0)) && isnan(tt_get(mx, 1)) && tt_get(mx, 2) == 1);
        CHECK(isnan(tt_get(mn, 0)) && isnan(tt_get(mn, 1)) && tt_get(mn, 2) == 1);
    }
    cg_tensor_release(mx);
    cg_tensor_release(mn);
    cg_tensor_release(a);
    cg_tensor_release(b);

    /* a tie splits the gradient evenly */
    const double tv[] = {1, 2, 3}, uv[] = {1, 1, 5};
    cg_tensor *x = tt_tensor(CG_DTYPE_F64, 1, s, tv), *y = tt_tensor(CG_DTYPE_F64, 1, s, uv);
    cg_tensor_set_requires_grad(x, true);
    cg_tensor_set_requires_grad(y, true);
    cg_tensor *m = cg_maximum(x, y);
    cg_tensor *sm = m ? cg_sum(m, 0, NULL, false) : NULL;
    CHECK_NN(sm);
    if (sm) {
        CHECK_OK(cg_backward(sm, NULL, false, false));
        const cg_tensor *gx = cg_tensor_grad(x), *gy = cg_tensor_grad(y);
        CHECK(gx && gy);
        if (gx && gy) {
            CHECK(tt_get(gx, 0) == 0.5 && tt_get(gy, 0) == 0.5);
            CHECK(tt_get(gx, 1) == 1 && tt_get(gy, 1) == 0);
            CHECK(tt_get(gx, 2) == 0 && tt_get(gy, 2) == 1);
        }
    }
    cg_tensor_release(sm);
    cg_tensor_release(m);
    cg_tensor_release(x);
    cg_tensor_release(y);
}

TEST(binary_logaddexp_extremes) {
    int64_t s[1] = {4};
    const double av[] = {INFINITY, -INFINITY, 1000, -1000}, bv[] = {INFINITY, -INFINITY, 1000, -1001};
    cg_tensor *a = tt_tensor(CG_DTYPE_F32, 1, s, av), *b = tt_tensor(CG_DTYPE_F32, 1, s, bv);
    cg_tensor *r = cg_logaddexp(a, b);
    CHECK_NN(r);
    if (r) {
        CHECK(isinf(tt_get(r, 0)) && tt_get(r, 0) > 0);
        CHECK(isinf(tt_get(r, 1)) && tt_get(r, 1) < 0);
        CHECK_NEAR(tt_get(r, 2), 1000 + log(2.0), 1e-3);
        CHECK_NEAR(tt_get(r, 3), -1000 + log1p(exp(-1.0)), 1e-3);
    }
    cg_tensor_release(r);
    cg_tensor_release(a);
    cg_tensor_release(b);
}

/* ---------------------------------------------------------------- in-place */

TEST(binary_inplace_pow_and_by_name) {
    int64_t s[2] = {2, 3};
    cg_tensor *x = tt_rand(CG_DTYPE_F32, 2, s, 0.5, 2, 11), *e = tt_rand(CG_DTYPE_F32, 1, s + 1, -1, 2, 12);
    cg_tensor *want = cg_pow(x, e);
    const void *sid = cg_tensor_storage_id(x);
    uint64_t ver = cg_tensor_version(x);
    CHECK_OK(cg_pow_(x, e));
    CHECK(cg_tensor_storage_id(x) == sid && cg_tensor_version(x) > ver);
    CHECK(tt_maxdiff(x, want) == 0);
    cg_tensor_release(want);

    const char *names[] = {"maximum", "minimum", "atan2", "hypot", "logaddexp", "floor_divide", "remainder", "fmod"};
    cg_tensor *(*fns[])(cg_tensor *, cg_tensor *) = {cg_maximum, cg_minimum, cg_atan2, cg_hypot,
                                                     cg_logaddexp, cg_floor_divide, cg_remainder, cg_fmod};
    for (int i = 0; i < 8; i++) {
        cg_tensor *ref = fns[i](x, e);
        ver = cg_tensor_version(x);
        CHECK_OK(cg_binary_(names[i], x, e));
        CHECK_MSG(ref && tt_maxdiff(x, ref) == 0 && cg_tensor_version(x) > ver, "in-place %s", names[i]);
        cg_tensor_release(ref);
        cg_tensor_release(x);
        x = tt_rand(CG_DTYPE_F32, 2, s, 0.5, 2, 13 + (unsigned)i);
    }
    /* a broadcast result that does not fit self is rejected */
    int64_t s1[1] = {3};
    cg_tensor *small = tt_rand(CG_DTYPE_F32, 1, s1, 1, 2, 3);
    CHECK_ERR(cg_pow_(small, x) != CG_OK, CG_ERR_SHAPE, "[pow_]");
    cg_tensor_release(small);
    cg_tensor_release(x);
    cg_tensor_release(e);
}

/* ---------------------------------------------------------------- isclose */

typedef struct { double rtol, atol; bool equal_nan; } close_ctx;
static cg_tensor *f_isclose(cg_tensor *const *x, void *c) {
    close_ctx *k = c;
    return cg_isclose(x[0], x[1], k->rtol, k->atol, k->equal_nan);
}
static double r_isclose(const double *x, void *c) {
    close_ctx *k = c;
    if (x[0] == x[1]) return 1;
    if (k->equal_nan && isnan(x[0]) && isnan(x[1])) return 1;
    double err = fabs(x[0] - x[1]);
    return isfinite(err) && err <= k->atol + k->rtol * fabs(x[1]);
}

TEST(compare_isclose) {
    close_ctx k = {0.1, 0.3, false};
    tt_check_elementwise(&(tt_ew_case){.name = "isclose", .arity = 2, .fn = f_isclose, .ctx = &k, .ref = r_isclose,
                                       .int_dtypes = INTS | (1u << CG_DTYPE_BOOL), .lo = {0, 0}, .hi = {2, 2}});
    close_ctx k2 = {0, 2, false};
    tt_check_elementwise(&(tt_ew_case){.name = "isclose(atol=2)", .arity = 2, .fn = f_isclose, .ctx = &k2,
                                       .ref = r_isclose, .int_dtypes = INTS, .lo = {0, 0}, .hi = {6, 6}});

    int64_t s[1] = {6};
    const double av[] = {INFINITY, INFINITY, NAN, 1.0, 1e10, 1.0}, bv[] = {INFINITY, -INFINITY, NAN, 1.0 + 1e-9, 1.00001e10, 1.1};
    cg_tensor *a = tt_tensor(CG_DTYPE_F64, 1, s, av), *b = tt_tensor(CG_DTYPE_F64, 1, s, bv);
    cg_tensor *r1 = cg_isclose(a, b, 1e-5, 1e-8, false), *r2 = cg_isclose(a, b, 1e-5, 1e-8, true);
    CHECK(r1 && r2);
    if (r1 && r2) {
        CHECK(cg_tensor_dtype(r1) == CG_DTYPE_BOOL);
        const double w1[] = {1, 0, 0, 1, 1, 0}, w2[] = {1, 0, 1, 1, 1, 0};
        for (int i = 0; i < 6; i++) {
            CHECK_MSG(tt_get(r1, i) == w1[i], "isclose element %d", i);
            CHECK_MSG(tt_get(r2, i) == w2[i], "isclose(equal_nan) element %d", i);
        }
    }
    CHECK_ERR(cg_isclose(a, b, -1, 0, false) == NULL, CG_ERR_VALUE, "rtol must be greater than or equal to zero");
    CHECK_ERR(cg_isclose(a, b, 0, -1, false) == NULL, CG_ERR_VALUE, "atol must be greater than or equal to zero");
    cg_tensor_release(r1);
    cg_tensor_release(r2);
    cg_tensor_release(a);
    cg_tensor_release(b);
}

/* ---------------------------------------------------------------- errors */

TEST(binary_errors) {
    int64_t s2[2] = {2, 3}, s1[1] = {4};
    cg_tensor *i = cg_ones(2, s2, CG_DTYPE_I64, cg_cpu()), *f = cg_ones(2, s2, CG_DTYPE_F32, cg_cpu());
    cg_tensor *g = cg_ones(1, s1, CG_DTYPE_F32, cg_cpu()), *d = cg_ones(2, s2, CG_DTYPE_F64, cg_cpu());
    CHECK_ERR(cg_atan2(i, i) == NULL, CG_ERR_DTYPE, "[atan2] not supported for dtype int64");
    CHECK_ERR(cg_hypot(i, i) == NULL, CG_ERR_DTYPE, "[hypot] not supported for dtype int64");
    CHECK_ERR(cg_logaddexp(i, i) == NULL, CG_ERR_DTYPE, "[logaddexp] not supported for dtype int64");
    CHECK_ERR(cg_pow(f, d) == NULL, CG_ERR_DTYPE, "[pow]");
    CHECK_ERR(cg_maximum(f, i) == NULL, CG_ERR_DTYPE, "[maximum]");
    CHECK_ERR(cg_floor_divide(f, g) == NULL, CG_ERR_SHAPE, "[floor_divide]");
    CHECK_ERR(cg_remainder(f, NULL) == NULL, CG_ERR_VALUE, "[remainder]");
    CHECK_ERR(cg_isclose(f, g, 1e-5, 1e-8, false) == NULL, CG_ERR_SHAPE, "[isclose]");
    CHECK_ERR(cg_binary_("no_such_op", f, f) != CG_OK, CG_ERR_VALUE, "unknown binary op");
    cg_tensor_release(i);
    cg_tensor_release(f);
    cg_tensor_release(g);
    cg_tensor_release(d);
}

TEST(binary_integer_overflow_wraps_and_inplace_zero_division) {
    int64_t s[1] = {2};
    int64_t av[2] = {INT64_MAX, INT64_MIN}, bv[2] = {1, -1};
    cg_tensor *a = cg_from_data(av, 1, s, CG_DTYPE_I64), *b = cg_from_data(bv, 1, s, CG_DTYPE_I64);
    cg_tensor *c = cg_add(a, b), *d = cg_mul(a, b);
    CHECK(c && d);
    int64_t out[2];
    cg_tensor_copy_to_buffer(c, out, CG_DTYPE_I64);
    CHECK(out[0] == INT64_MIN && out[1] == INT64_MAX); /* wraps like PyTorch */
    cg_tensor_copy_to_buffer(d, out, CG_DTYPE_I64);
    CHECK(out[0] == INT64_MAX && out[1] == INT64_MIN);
    int32_t zv[2] = {0, 3}, xv[2] = {7, 7};
    cg_tensor *x = cg_from_data(xv, 1, s, CG_DTYPE_I32), *z = cg_from_data(zv, 1, s, CG_DTYPE_I32);
    CHECK_ERR(cg_binary_("floor_divide", x, z) != CG_OK, CG_ERR_VALUE, "[floor_divide] integer division by zero");
    CHECK_ERR(cg_binary_("remainder", x, z) != CG_OK, CG_ERR_VALUE, "integer division by zero");
    cg_tensor *ts[] = {a, b, c, d, x, z};
    for (int i = 0; i < 6; i++) cg_tensor_release(ts[i]);
}
