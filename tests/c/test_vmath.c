/* test_vmath.c — accuracy of the vectorisable float32 math of
 * src/backend/cpu/vmath.h against float64 libm: a sweep over every 257th
 * float32 bit pattern (both signs, subnormals included) plus the edge cases
 * (±0, ±inf, NaN, subnormals, overflow / underflow thresholds and the
 * boundaries between the approximations, each with its neighbours), in ulps
 * of the correctly rounded result. CG_VMATH_STEP=1 in the environment sweeps
 * all 2^32 inputs. Also gelu's negative tail bit for bit, and the float64
 * gelu and gelu' against a double-double reference. */
#include "test.h"

#include "backend/cpu/vmath.h"

#include <float.h>
#include <stdint.h>
#include <stdlib.h>

typedef void (*vm_batch)(float *y, const float *x, int64_t n);
typedef double (*vm_ref)(double x);

/* the functions run in loops like the kernels', so the vectorised code is what is tested */
#define VM_BATCH(name, F)                                                    \
    static void name(float *restrict y, const float *restrict x, int64_t n) { \
        for (int64_t i = 0; i < n; i++) y[i] = F(x[i]);                      \
    }
VM_BATCH(b_exp, cg_vm_expf)
VM_BATCH(b_expm1, cg_vm_expm1f)
VM_BATCH(b_log, cg_vm_logf)
VM_BATCH(b_log1p, cg_vm_log1pf)
VM_BATCH(b_tanh, cg_vm_tanhf)
VM_BATCH(b_sigmoid, cg_vm_sigmoidf)
VM_BATCH(b_log1pexp, cg_vm_log1pexpf)
VM_BATCH(b_erf, cg_vm_erff)
VM_BATCH(b_erfc, cg_vm_erfcf)
VM_BATCH(b_gelu, cg_vm_geluf)
VM_BATCH(b_gelu_grad, cg_vm_gelu_gradf)

static double r_sigmoid(double x) { return x < 0 ? exp(x) / (1 + exp(x)) : 1 / (1 + exp(-x)); }
static double r_log1pexp(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }
/* gelu and gelu' (-0 and 0 at -inf, their limits; an underflowed gelu' keeps the sign of x phi(x)) */
static double r_gelu(double x) { return x == -INFINITY ? -0.0 : 0.5 * x * erfc(-x * M_SQRT1_2); }
static double r_gelu_grad(double x) {
    if (isinf(x)) return x > 0 ? 1 : -0.0;
    const double xphi = x * exp(-0.5 * x * x) * 0.3989422804014327, r = 0.5 * erfc(-x * M_SQRT1_2) + xphi;
    return r == 0 ? copysign(0.0, xphi) : r;
}
/* gelu' = Phi(x) + x phi(x) is a sum of two terms that cancel at its root (x = -0.7518):
 * its error is measured in ulps of the larger term */
static double s_gelu_grad(double x) {
    return fmax(0.5 * erfc(-x * M_SQRT1_2), fabs(x * exp(-0.5 * x * x) * 0.3989422804014327));
}

/* error of y in ulps of the float nearest to r (or to scale, where that is larger); 0 when both
 * are the same NaN / inf / signed zero, INFINITY when the classes differ or y is not 0 where
 * r is exactly 0 (a result below 2^-1075 is not 2^-149) */
static double ulp_err(float y, double r, double scale) {
    float rf = (float)r;
    if (isnan(rf) || isnan(y)) return isnan(rf) && isnan(y) ? 0 : INFINITY;
    if (isinf(rf) || isinf(y)) return y == rf ? 0 : INFINITY;
    if (r == 0) return y == 0 && !signbit(y) == !signbit(r) ? 0 : INFINITY;
    if (scale > fabs(r)) rf = (float)scale;
    int e;
    frexp(fabs((double)rf) > 0 ? (double)rf : r, &e); /* |rf| in [2^(e-1), 2^e) */
    double ulp = ldexp(1.0, (e - 1 < -126 ? -126 : e - 1) - 23);
    return fabs((double)y - r) / ulp;
}

/* max_ulp: the maxima over all 2^32 inputs (Note [Vector math]) with a little
 * room, also for builds without FMA (-Dnative=false: sigmoid 2.05, gelu 2.98,
 * gelu' 2.75 on the default sweep) */
typedef struct vm_case {
    const char *name;
    vm_batch f;
    vm_ref r;
    double max_ulp;
    float edges[24]; /* extra inputs (both signs are tried), 0-terminated after the first */
    vm_ref scale;    /* NULL, or: errors in ulps of max(|r|, scale) */
} vm_case;

static const vm_case k_cases[] = {
    {"exp", b_exp, exp, 2, {0, 88.72283f, 88.72284f, 88.8f, 89, -87.33654f, -87.33655f, -103.2789f, -103.97208f, -103.97209f,
                           -104, 0.34657359f, 1e-8f, 0}, NULL},
    {"expm1", b_expm1, expm1, 2, {0, 88.72283f, 88.72284f, 1e-8f, 0.34657359f, 17.32868f, 69.3f, 70, -17.33f, -104, 0}, NULL},
    {"log", b_log, log, 2, {0, 1, 0.70710677f, 0.70710671f, 1.41421354f, 2, FLT_MIN, FLT_MAX, 0x1p-149f, 0x1.fffffcp-127f, 0}, NULL},
    {"log1p", b_log1p, log1p, 2, {0, 1, -1, -0.5f, -0.99999994f, 1e-8f, 1e-30f, 16777216, 3e38f, 0x1p-149f, 0}, NULL},
    {"tanh", b_tanh, tanh, 2, {0, 0.625f, 0.62499994f, 9.01f, 44.4f, 1e-20f, 0x1p-149f, FLT_MIN, 0}, NULL},
    {"sigmoid", b_sigmoid, r_sigmoid, 2.5, {0, 88.8f, 103.9f, 104, 150, 16.7f, 1e-8f, 0}, NULL},
    {"log1pexp", b_log1pexp, r_log1pexp, 2.5, {0, 20, 88.8f, 103.9f, 200, 1e-8f, 0}, NULL},
    {"erf", b_erf, erf, 2.5, {0, 0.4769f, 0.47689998f, 1.1f, 2, 4, 6, 3.9f, 10.06f, 1e-30f, 0x1p-149f, 0}, NULL},
    {"erfc", b_erfc, erfc, 3, {0, 0.4769f, 0.47689998f, 1.1f, 2, 4, 6, 9.19f, 10.05f, 10.06f, 10.1f, 10.11f, 27, 0}, NULL},
    {"gelu", b_gelu, r_gelu, 3.5, {0, 0.6744f, 1.5556f, 2.8285f, 5.6569f, 8.4853f, 13, 14.28f, 14.3f, 0x1.cb64eap+3f,
                                   20, 1e20f, FLT_MAX, 1e-30f, 0}, NULL},
    {"gelu_grad", b_gelu_grad, r_gelu_grad, 3, {0, 0.6744f, 0.7518f, 1.5556f, 2.8285f, 5.6569f, 8.4853f, 13, 14.28f,
                                                  14.5f, 14.5667f, 20, 1e20f, FLT_MAX, 1e-30f, 0}, s_gelu_grad},
};

#define VM_BATCH_N 4096

/* max error of case c over the inputs x[0..n) (and -x), recording the worst input */
static void vm_check_batch(const vm_case *c, float *x, int64_t n, float *y, double *worst, float *worst_x) {
    for (int sign = 0; sign < 2; sign++) {
        c->f(y, x, n);
        for (int64_t i = 0; i < n; i++) {
            double e = ulp_err(y[i], c->r((double)x[i]), c->scale ? c->scale((double)x[i]) : 0);
            if (!(e <= *worst)) *worst = e, *worst_x = x[i];
        }
        for (int64_t i = 0; i < n; i++) x[i] = -x[i];
    }
}

TEST(vmath_ulp_sweep) {
    const char *env = getenv("CG_VMATH_STEP");
    uint64_t step = env ? strtoull(env, NULL, 10) : 257;
    if (step < 1) step = 1;
    float *x = malloc(sizeof(float) * VM_BATCH_N), *y = malloc(sizeof(float) * VM_BATCH_N);
    CHECK(x && y);
    if (!x || !y) goto done;
    for (size_t k = 0; k < sizeof k_cases / sizeof k_cases[0]; k++) {
        const vm_case *c = &k_cases[k];
        double worst = 0;
        float wx = 0;
        /* positive bit patterns 0 .. 0x7f800000 (+inf) and two NaNs; vm_check_batch adds the negatives */
        int64_t n = 0;
        for (uint64_t u = 0; u <= 0x7f800000u; u += step) {
            x[n++] = cg_vm_float((uint32_t)u);
            if (n == VM_BATCH_N) vm_check_batch(c, x, n, y, &worst, &wx), n = 0;
        }
        vm_check_batch(c, x, n, y, &worst, &wx);
        n = 0;
        x[n++] = INFINITY;
        x[n++] = NAN;
        x[n++] = cg_vm_float(0x7f800001u);
        for (int i = 0; i == 0 || c->edges[i] != 0; i++) { /* each edge with its two neighbours */
            float e = c->edges[i];
            x[n++] = e;
            x[n++] = nextafterf(e, INFINITY);
            x[n++] = nextafterf(e, -INFINITY);
        }
        vm_check_batch(c, x, n, y, &worst, &wx);
        CHECK_MSG(worst <= c->max_ulp, "%s: max error %.3f ulp at x = %a (%.9g), allowed %.1f", c->name, worst,
                  (double)wx, (double)wx, c->max_ulp);
        if (env) printf("  %-9s max %.3f ulp at %a\n", c->name, worst, (double)wx);
    }
done:
    free(x);
    free(y);
}

/* signs and special values the ulp measure does not pin down */
TEST(vmath_special_values) {
    CHECK(signbit(cg_vm_tanhf(-0.0f)) && signbit(cg_vm_erff(-0.0f)) && signbit(cg_vm_expm1f(-0.0f)));
    CHECK(signbit(cg_vm_log1pf(-0.0f)) && !signbit(cg_vm_tanhf(0.0f)));
    CHECK(cg_vm_expf(-INFINITY) == 0 && cg_vm_expf(INFINITY) == INFINITY && isnan(cg_vm_expf(NAN)));
    CHECK(cg_vm_logf(0.0f) == -INFINITY && cg_vm_logf(-0.0f) == -INFINITY && isnan(cg_vm_logf(-1.0f)));
    CHECK(isnan(cg_vm_logf(-INFINITY)) && cg_vm_logf(INFINITY) == INFINITY && isnan(cg_vm_logf(NAN)));
    CHECK(cg_vm_log1pf(-1.0f) == -INFINITY && isnan(cg_vm_log1pf(-2.0f)) && cg_vm_log1pf(INFINITY) == INFINITY);
    CHECK(cg_vm_expm1f(-INFINITY) == -1 && cg_vm_expm1f(INFINITY) == INFINITY);
    CHECK(cg_vm_tanhf(INFINITY) == 1 && cg_vm_tanhf(-INFINITY) == -1 && isnan(cg_vm_tanhf(NAN)));
    CHECK(cg_vm_sigmoidf(INFINITY) == 1 && cg_vm_sigmoidf(-INFINITY) == 0 && isnan(cg_vm_sigmoidf(NAN)));
    CHECK(cg_vm_erff(INFINITY) == 1 && cg_vm_erff(-INFINITY) == -1 && isnan(cg_vm_erff(NAN)));
    CHECK(cg_vm_erfcf(INFINITY) == 0 && cg_vm_erfcf(-INFINITY) == 2 && isnan(cg_vm_erfcf(NAN)));
    /* gelu and gelu' at the infinities are their limits (not inf * 0) */
    CHECK(cg_vm_geluf(INFINITY) == INFINITY && isnan(cg_vm_geluf(NAN)));
    CHECK(cg_vm_geluf(-INFINITY) == 0 && signbit(cg_vm_geluf(-INFINITY)));
    CHECK(cg_vm_gelu_gradf(INFINITY) == 1 && cg_vm_gelu_gradf(-INFINITY) == 0 && isnan(cg_vm_gelu_gradf(NAN)));
    CHECK(cg_vm_log1pexpf(INFINITY) == INFINITY && cg_vm_log1pexpf(-INFINITY) == 0);
    /* the smallest subnormal result and the first input that underflows */
    CHECK(cg_vm_expf(-103.27893f) == 0x1p-149f && cg_vm_expf(-103.97209f) == 0);
}

/* gelu's negative tail from -14 down to -FLT_MAX: the subnormal results
 * within an ulp of the true value and nonzero down to CG_VM_GELU_UNDERFLOW,
 * exactly -0 from there (a result stuck at the smallest subnormal is 1 ulp and
 * passes the sweep, but not this); gelu' likewise, 0 from its own threshold. */
#define CG_GELU_GRAD_UNDERFLOW (-0x1.d152bcp+3f) /* -14.5413494: the first x with |gelu'(x)| <= 2^-150 */
TEST(vmath_gelu_negative_tail) {
    int bad_value = 0, bad_grad = 0;
    float first_bad = 0, first_bad_grad = 0;
    /* every input in [-15, -14], then every 4099th bit pattern down to -FLT_MAX, and -FLT_MAX */
    for (uint64_t u = 0xc1600000u; u <= 0xff7fffffu; u += u < 0xc1700000u ? 1 : 4099) {
        const float x = u + 4099 > 0xff7fffffu ? -FLT_MAX : cg_vm_float((uint32_t)u);
        const float y = cg_vm_geluf(x), d = cg_vm_gelu_gradf(x);
        /* the double references are accurate to ~1e-13 here, far below the subnormal ulps; the
         * float results may be 1 ulp (2^-149) off where the last scaling rounds a second time */
        const double r = r_gelu((double)x), rd = r_gelu_grad((double)x);
        const int ok = x <= CG_VM_GELU_UNDERFLOW ? y == 0 && signbit(y) : fabs((double)y - r) <= 0x1p-149 && y < 0;
        const int ok_d = x <= CG_GELU_GRAD_UNDERFLOW ? d == 0 : fabs((double)d - rd) <= 0x1p-149 && d < 0;
        if (!ok && !bad_value++) first_bad = x;
        if (!ok_d && !bad_grad++) first_bad_grad = x;
    }
    CHECK_MSG(bad_value == 0, "gelu: %d tail inputs not correctly rounded, first %a", bad_value, (double)first_bad);
    CHECK_MSG(bad_grad == 0, "gelu': %d tail inputs not correctly rounded, first %a", bad_grad, (double)first_bad_grad);
    CHECK(cg_vm_geluf(CG_VM_GELU_UNDERFLOW) == 0 && cg_vm_geluf(nextafterf(CG_VM_GELU_UNDERFLOW, 0)) == -0x1p-149f);
}
