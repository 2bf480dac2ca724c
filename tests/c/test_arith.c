/* test_arith.c — the core arithmetic ops (add, sub, mul, div, neg, exp)
 * through the elementwise checker. */
#include "opcheck.h"

static cg_tensor *f_add(cg_tensor *const *x, void *c) { (void)c; return cg_add(x[0], x[1]); }
static cg_tensor *f_sub(cg_tensor *const *x, void *c) { (void)c; return cg_sub(x[0], x[1]); }
static cg_tensor *f_mul(cg_tensor *const *x, void *c) { (void)c; return cg_mul(x[0], x[1]); }
static cg_tensor *f_div(cg_tensor *const *x, void *c) { (void)c; return cg_div(x[0], x[1]); }
static cg_tensor *f_neg(cg_tensor *const *x, void *c) { (void)c; return cg_neg(x[0]); }
static cg_tensor *f_exp(cg_tensor *const *x, void *c) { (void)c; return cg_exp(x[0]); }
static double r_add(const double *x, void *c) { (void)c; return x[0] + x[1]; }
static double r_sub(const double *x, void *c) { (void)c; return x[0] - x[1]; }
static double r_mul(const double *x, void *c) { (void)c; return x[0] * x[1]; }
static double r_div(const double *x, void *c) { (void)c; return x[0] / x[1]; }
static double r_neg(const double *x, void *c) { (void)c; return -x[0]; }
static double r_exp(const double *x, void *c) { (void)c; return exp(x[0]); }

#define INTS ((1u << CG_DTYPE_U8) | (1u << CG_DTYPE_I8) | (1u << CG_DTYPE_I16) | (1u << CG_DTYPE_I32) | (1u << CG_DTYPE_I64))

TEST(arith_add) { tt_check_elementwise(&(tt_ew_case){.name = "add", .arity = 2, .fn = f_add, .ref = r_add, .differentiable = true, .int_dtypes = INTS, .lo = {0, 0}, .hi = {9, 9}}); }
TEST(arith_sub) { tt_check_elementwise(&(tt_ew_case){.name = "sub", .arity = 2, .fn = f_sub, .ref = r_sub, .differentiable = true, .int_dtypes = INTS & ~(1u << CG_DTYPE_U8), .lo = {-5, -5}, .hi = {5, 5}}); }
TEST(arith_mul) { tt_check_elementwise(&(tt_ew_case){.name = "mul", .arity = 2, .fn = f_mul, .ref = r_mul, .differentiable = true, .int_dtypes = INTS, .lo = {0, 0}, .hi = {9, 9}}); }
TEST(arith_div) { tt_check_elementwise(&(tt_ew_case){.name = "div", .arity = 2, .fn = f_div, .ref = r_div, .differentiable = true, .lo = {-2, 0.5}, .hi = {2, 2}}); }
TEST(arith_neg) { tt_check_elementwise(&(tt_ew_case){.name = "neg", .arity = 1, .fn = f_neg, .ref = r_neg, .differentiable = true, .int_dtypes = INTS & ~(1u << CG_DTYPE_U8)}); }
TEST(arith_exp) { tt_check_elementwise(&(tt_ew_case){.name = "exp", .arity = 1, .fn = f_exp, .ref = r_exp, .differentiable = true}); }

TEST(arith_int_div_rejected_by_engine) {
    int64_t s[1] = {2};
    cg_tensor *a = cg_ones(1, s, CG_DTYPE_I64, cg_cpu());
    CHECK_ERR(cg_div(a, a) == NULL, CG_ERR_DTYPE, "[div] not supported for dtype int64");
    CHECK_ERR(cg_exp(a) == NULL, CG_ERR_DTYPE, "[exp] not supported for dtype int64");
    cg_tensor_release(a);
}

static cg_tensor *f_lt(cg_tensor *const *x, void *c) { (void)c; return cg_lt(x[0], x[1]); }
static cg_tensor *f_eq(cg_tensor *const *x, void *c) { (void)c; return cg_eq(x[0], x[1]); }
static cg_tensor *f_where(cg_tensor *const *x, void *c) { (void)c; return cg_where(x[0], x[1], x[2]); }
static double r_lt(const double *x, void *c) { (void)c; return x[0] < x[1]; }
static double r_eq(const double *x, void *c) { (void)c; return x[0] == x[1]; }
static double r_where(const double *x, void *c) { (void)c; return x[0] != 0 ? x[1] : x[2]; }

TEST(compare_lt_eq) {
    tt_check_elementwise(&(tt_ew_case){.name = "lt", .arity = 2, .fn = f_lt, .ref = r_lt, .int_dtypes = INTS | (1u << CG_DTYPE_BOOL), .lo = {0, 0}, .hi = {3, 3}});
    tt_check_elementwise(&(tt_ew_case){.name = "eq", .arity = 2, .fn = f_eq, .ref = r_eq, .int_dtypes = INTS | (1u << CG_DTYPE_BOOL), .lo = {0, 0}, .hi = {2, 2}});
}
TEST(nary_where) {
    tt_check_elementwise(&(tt_ew_case){.name = "where", .arity = 3, .fn = f_where, .ref = r_where, .differentiable = true,
                                       .bool_args = 1u, .int_dtypes = INTS, .lo = {0, -3, -3}, .hi = {1, 3, 3}});
}
TEST(arange_values) {
    cg_tensor *a = cg_arange(1, 2, 0.25, CG_DTYPE_F32, cg_cpu());
    CHECK(a && cg_tensor_numel(a) == 4);
    CHECK_NEAR(tt_get(a, 3), 1.75, 0);
    cg_tensor *b = cg_arange(5, 0, -2, CG_DTYPE_I64, cg_cpu());
    CHECK(b && cg_tensor_numel(b) == 3 && tt_get(b, 2) == 1);
    CHECK_ERR(cg_arange(0, 1, 0, CG_DTYPE_F32, cg_cpu()) == NULL, CG_ERR_VALUE, "step must be nonzero");
    CHECK_ERR(cg_arange(0, 1, -1, CG_DTYPE_F32, cg_cpu()) == NULL, CG_ERR_VALUE, "inconsistent");
    cg_tensor_release(a);
    cg_tensor_release(b);
}
/* Note [arange of an integer dtype]: truncated start/step; int64 counts on the truncated bounds */
TEST(arange_integer_fractional_bounds) {
    cg_tensor *a = cg_arange(0, 3.1, 1, CG_DTYPE_I64, cg_cpu());
    CHECK(a && cg_tensor_numel(a) == 3 && tt_get(a, 2) == 2);
    cg_tensor *b = cg_arange(0, 3.1, 1, CG_DTYPE_I32, cg_cpu());
    CHECK(b && cg_tensor_numel(b) == 4 && tt_get(b, 3) == 3);
    cg_tensor *c = cg_arange(0.5, 3.7, 0.8, CG_DTYPE_I32, cg_cpu()); /* step truncates to 0: start repeated */
    CHECK(c && cg_tensor_numel(c) == 4 && tt_get(c, 3) == 0);
    cg_tensor *d = cg_arange(2.5, -3.5, -1.5, CG_DTYPE_I64, cg_cpu());
    CHECK(d && cg_tensor_numel(d) == 5 && tt_get(d, 0) == 2 && tt_get(d, 4) == -2);
    cg_tensor *e = cg_arange(2.5, -3.5, -1.5, CG_DTYPE_U8, cg_cpu()); /* -1 wraps to 255 */
    CHECK(e && cg_tensor_numel(e) == 4 && tt_get(e, 3) == 255);
    CHECK_ERR(cg_arange(0.5, 3.7, 0.8, CG_DTYPE_I64, cg_cpu()) == NULL, CG_ERR_VALUE, "step must be nonzero");
    CHECK_ERR(cg_arange(-1e19, 0, 1e18, CG_DTYPE_I64, cg_cpu()) == NULL, CG_ERR_VALUE, "without overflow");
    cg_tensor *ts[] = {a, b, c, d, e};
    for (int i = 0; i < 5; i++) cg_tensor_release(ts[i]);
}
