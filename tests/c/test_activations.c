/* test_activations.c — activation functions through the elementwise checker
 * (float64 references written out here), their kinks and in-place forms, and
 * softmax / log_softmax against a float64 reference loop on every dim of a
 * 3-D input, non-contiguous, 0-d and empty inputs, with gradcheck and
 * gradgradcheck. */
#include "opcheck.h"

#include <stdlib.h>
#include <string.h>

#define SINTS ((1u << CG_DTYPE_I8) | (1u << CG_DTYPE_I16) | (1u << CG_DTYPE_I32) | (1u << CG_DTYPE_I64))

typedef struct a_ctx {
    int which;
    double a, b;
} a_ctx;

enum { RELU, RELU6, LEAKY, ELU, SELU, CELU, GELU, GELU_T, SILU, MISH, SOFTPLUS, SOFTSIGN, SIGMOID, LOGSIGMOID,
       HARDTANH, HARDSIGMOID, HARDSWISH };

static cg_tensor *f_act(cg_tensor *const *x, void *p) {
    a_ctx *c = p;
    switch (c->which) {
    case RELU: return cg_relu(x[0]);
    case RELU6: return cg_relu6(x[0]);
    case LEAKY: return cg_leaky_relu(x[0], c->a);
    case ELU: return cg_elu(x[0], c->a);
    case SELU: return cg_selu(x[0]);
    case CELU: return cg_celu(x[0], c->a);
    case GELU: return cg_gelu(x[0], false);
    case GELU_T: return cg_gelu(x[0], true);
    case SILU: return cg_silu(x[0]);
    case MISH: return cg_mish(x[0]);
    case SOFTPLUS: return cg_softplus(x[0], c->a, c->b);
    case SOFTSIGN: return cg_softsign(x[0]);
    case SIGMOID: return cg_sigmoid(x[0]);
    case LOGSIGMOID: return cg_logsigmoid(x[0]);
    case HARDTANH: return cg_hardtanh(x[0], c->a, c->b);
    case HARDSIGMOID: return cg_hardsigmoid(x[0]);
    default: return cg_hardswish(x[0]);
    }
}

static double sigm(double x) { return 1 / (1 + exp(-x)); }
static double r_act(const double *xs, void *p) {
    a_ctx *c = p;
    double x = xs[0];
    const double sa = 1.6732632423543772848170429916717, ss = 1.0507009873554804934193349852946;
    switch (c->which) {
    case RELU: return x > 0 ? x : 0;
    case RELU6: return fmin(fmax(x, 0), 6);
    case LEAKY: return x > 0 ? x : c->a * x;
    case ELU: return x > 0 ? x : c->a * (exp(x) - 1);
    case SELU: return ss * (x > 0 ? x : sa * (exp(x) - 1));
    case CELU: return fmax(0, x) + fmin(0, c->a * (exp(x / c->a) - 1));
    case GELU: return x * 0.5 * (1 + erf(x / sqrt(2)));
    case GELU_T: return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    case SILU: return x * sigm(x);
    case MISH: return x * tanh(log(1 + exp(x)));
    case SOFTPLUS: return c->a * x > c->b ? x : log(1 + exp(c->a * x)) / c->a;
    case SOFTSIGN: return x / (1 + fabs(x));
    case SIGMOID: return sigm(x);
    case LOGSIGMOID: return log(sigm(x));
    case HARDTANH: return fmin(fmax(x, c->a), c->b);
    case HARDSIGMOID: return fmin(fmax(x / 6 + 0.5, 0), 1);
    default: return x * fmin(fmax(x + 3, 0), 6) / 6;
    }
}

static void check_act(const char *name, int which, double a, double b, double lo, double hi, unsigned ints) {
    a_ctx c = {which, a, b};
    tt_check_elementwise(&(tt_ew_case){.name = name, .arity = 1, .fn = f_act, .ctx = &c, .ref = r_act, .lo = {lo},
                                       .hi = {hi}, .differentiable = true, .int_dtypes = ints, .rtol32 = 2e-5,
                                       .atol32 = 2e-6});
}

TEST(act_relu_family) {
    check_act("relu+", RELU, 0, 0, 0.1, 3, 0);
    check_act("relu-", RELU, 0, 0, -3, -0.1, SINTS);
    check_act("relu6", RELU6, 0, 0, 0.1, 5.9, 0);
    check_act("relu6-hi", RELU6, 0, 0, 6.1, 9, 0);
    check_act("relu6-lo", RELU6, 0, 0, -3, -0.1, 0);
    check_act("leaky_relu+", LEAKY, 0.1, 0, 0.1, 3, 0);
    check_act("leaky_relu-", LEAKY, 0.1, 0, -3, -0.1, 0);
    check_act("hardtanh", HARDTANH, -0.5, 1.5, -0.4, 1.4, 0);
    check_act("hardtanh-out", HARDTANH, -0.5, 1.5, 1.6, 3, 0);
    check_act("hardsigmoid", HARDSIGMOID, 0, 0, -2.9, 2.9, 0);
    check_act("hardsigmoid-out", HARDSIGMOID, 0, 0, 3.1, 5, 0);
    check_act("hardswish", HARDSWISH, 0, 0, -2.9, 2.9, 0);
    check_act("hardswish-hi", HARDSWISH, 0, 0, 3.1, 5, 0);
    check_act("hardswish-lo", HARDSWISH, 0, 0, -5, -3.1, 0);
}

TEST(act_smooth) {
    check_act("elu+", ELU, 1.3, 0, 0.1, 3, 0);
    check_act("elu-", ELU, 1.3, 0, -3, -0.1, 0);
    check_act("selu+", SELU, 0, 0, 0.1, 3, 0);
    check_act("selu-", SELU, 0, 0, -3, -0.1, 0);
    check_act("celu+", CELU, 0.7, 0, 0.1, 3, 0);
    check_act("celu-", CELU, 0.7, 0, -3, -0.1, 0);
    check_act("gelu", GELU, 0, 0, -3, 3, 0);
    check_act("gelu_tanh", GELU_T, 0, 0, -3, 3, 0);
    check_act("silu", SILU, 0, 0, -4, 4, 0);
    check_act("mish", MISH, 0, 0, -4, 4, 0);
    check_act("softplus", SOFTPLUS, 1, 20, -4, 4, 0);
    check_act("softplus-beta", SOFTPLUS, 2, 3, -3, 1.4, 0);
    check_act("softplus-linear", SOFTPLUS, 2, 3, 1.6, 3, 0);
    check_act("softsign+", SOFTSIGN, 0, 0, 0.1, 3, 0);
    check_act("softsign-", SOFTSIGN, 0, 0, -3, -0.1, 0);
    check_act("sigmoid", SIGMOID, 0, 0, -5, 5, 0);
    check_act("logsigmoid", LOGSIGMOID, 0, 0, -5, 5, 0);
}

/* values at kinks and extremes, and gradients there (PyTorch's choices) */
static double grad_at(int which, double a, double b, double x) {
    int64_t n = 1;
    cg_tensor *t = tt_tensor(CG_DTYPE_F64, 1, &n, &x);
    cg_tensor_set_requires_grad(t, true);
    a_ctx c = {which, a, b};
    cg_tensor *y = f_act(&t, &c), *s = cg_sum(y, 0, NULL, false);
    double g = NAN;
    if (s && cg_backward(s, NULL, false, false) == CG_OK && cg_tensor_grad(t)) g = tt_get(cg_tensor_grad(t), 0);
    cg_tensor_release(t), cg_tensor_release(y), cg_tensor_release(s);
    return g;
}

TEST(act_kinks_and_extremes) {
    CHECK(grad_at(RELU, 0, 0, 0) == 0);
    CHECK(grad_at(RELU6, 0, 0, 0) == 0 && grad_at(RELU6, 0, 0, 6) == 0);
    CHECK(grad_at(LEAKY, 0.2, 0, 0) == 0.2);
    CHECK(grad_at(HARDTANH, -1, 1, -1) == 0 && grad_at(HARDTANH, -1, 1, 1) == 0);
    CHECK(grad_at(HARDSIGMOID, 0, 0, 3) == 0 && grad_at(HARDSIGMOID, 0, 0, -3) == 0);
    /* PyTorch 2.13's boundaries: 0 at -3, 1 at 3 */
    CHECK(grad_at(HARDSWISH, 0, 0, -3) == 0 && grad_at(HARDSWISH, 0, 0, 3) == 1);
    CHECK(grad_at(ELU, 1, 0, NAN) == 1); /* x <= 0 is false at NaN: the gradient passes */
    CHECK(grad_at(ELU, 1, 0, 0) == 1);
    CHECK(grad_at(ELU, 1, 0, 1000) == 1 && grad_at(ELU, 1, 0, -1000) == 0);
    CHECK_NEAR(grad_at(SOFTPLUS, 1, 20, 30), 1, 0);
    CHECK_NEAR(grad_at(SIGMOID, 0, 0, -800), 0, 0);
    CHECK_NEAR(grad_at(LOGSIGMOID, 0, 0, -800), 1, 0);
    /* extreme inputs stay finite / exact where the function is */
    double v[] = {-800, -30, 30, 800, NAN};
    int64_t n = 5;
    cg_tensor *x = tt_tensor(CG_DTYPE_F32, 1, &n, v);
    cg_tensor *ls = cg_logsigmoid(x), *sg = cg_sigmoid(x), *sp = cg_softplus(x, 1, 20), *r = cg_relu(x);
    CHECK(tt_get(ls, 0) == -800 && tt_get(ls, 3) == 0);
    CHECK(tt_get(sg, 0) == 0 && tt_get(sg, 3) == 1);
    CHECK(tt_get(sp, 3) == 800 && tt_get(sp, 0) == 0);
    CHECK(isnan(tt_get(r, 4)) && isnan(tt_get(sg, 4)));
    cg_tensor_release(x), cg_tensor_release(ls), cg_tensor_release(sg), cg_tensor_release(sp), cg_tensor_release(r);
}

TEST(act_errors_inplace) {
    int64_t sh[2] = {3, 4};
    cg_tensor *i = cg_ones(2, sh, CG_DTYPE_I64, cg_cpu());
    CHECK_ERR(cg_sigmoid(i) == NULL, CG_ERR_DTYPE, "[sigmoid] not supported for dtype int64");
    CHECK_ERR(cg_gelu(i, true) == NULL, CG_ERR_DTYPE, "[gelu] not supported for dtype int64");
    CHECK_ERR(cg_leaky_relu(i, 0.1) == NULL, CG_ERR_DTYPE, "[leaky_relu]");
    CHECK_ERR(cg_celu(i, 0) == NULL, CG_ERR_VALUE, "[celu] alpha");
    CHECK_ERR(cg_hardtanh(i, 1, 0) == NULL, CG_ERR_VALUE, "[hardtanh] min_val");
    CHECK_ERR(cg_softplus(i, 0, 20) == NULL, CG_ERR_VALUE, "[softplus] beta");
    cg_tensor *ri = cg_relu(i);
    CHECK(ri && cg_tensor_dtype(ri) == CG_DTYPE_I64);
    const char *names[] = {"relu", "relu6", "selu", "gelu", "silu", "mish", "softsign", "sigmoid", "logsigmoid",
                           "hardsigmoid", "hardswish"};
    int which[] = {RELU, RELU6, SELU, GELU, SILU, MISH, SOFTSIGN, SIGMOID, LOGSIGMOID, HARDSIGMOID, HARDSWISH};
    for (int k = 0; k < 11; k++) {
        cg_tensor *x = tt_rand(CG_DTYPE_F32, 2, sh, -4, 4, 21), *v = cg_transpose(x, 0, 1);
        a_ctx c = {which[k], 0, 0};
        cg_tensor *want = f_act(&v, &c);
        const void *sid = cg_tensor_storage_id(v);
        uint64_t ver = cg_tensor_version(x);
        CHECK_OK(cg_unary_(names[k], v));
        CHECK(cg_tensor_storage_id(v) == sid && cg_tensor_version(x) > ver);
        CHECK_MSG(tt_maxdiff(v, want) == 0, "%s_ differs", names[k]);
        cg_tensor_release(x), cg_tensor_release(v), cg_tensor_release(want);
    }
    /* leaky_relu_ in place, with and without history */
    cg_tensor *x = tt_rand(CG_DTYPE_F64, 2, sh, -2, 2, 4), *want = cg_leaky_relu(x, 0.3);
    uint64_t ver = cg_tensor_version(x);
    CHECK_OK(cg_leaky_relu_(x, 0.3));
    CHECK(tt_maxdiff(x, want) == 0 && cg_tensor_version(x) > ver);
    cg_tensor *leaf = tt_rand(CG_DTYPE_F64, 2, sh, -2, 2, 6);
    cg_tensor_set_requires_grad(leaf, true);
    CHECK_ERR(cg_leaky_relu_(leaf, 0.3) != CG_OK, CG_ERR_RUNTIME, "");
    cg_tensor *t = cg_mul(leaf, leaf), *t0 = cg_detach(t);
    cg_tensor *tneg = cg_neg(leaf);
    CHECK_OK(cg_leaky_relu_(tneg, 0.3));
    CHECK_OK(cg_unary_("relu", t));
    cg_tensor *s1 = cg_sum(tneg, 0, NULL, false);
    CHECK_OK(cg_backward(s1, NULL, false, false));
    cg_tensor *g = cg_tensor_grad(leaf);
    for (int64_t j = 0; g && j < 12; j++) CHECK_NEAR(tt_get(g, j), tt_get(leaf, j) < 0 ? -1 : -0.3, 1e-15);
    cg_tensor_release(i), cg_tensor_release(ri), cg_tensor_release(x), cg_tensor_release(want);
    cg_tensor_release(leaf), cg_tensor_release(t), cg_tensor_release(t0), cg_tensor_release(tneg), cg_tensor_release(s1);
}

/* ---------------------------------------------------------------- softmax / log_softmax */
typedef struct sm_ctx {
    int64_t dim;
    bool log;
} sm_ctx;
static cg_tensor *f_sm(cg_tensor *const *x, void *p) {
    sm_ctx *c = p;
    return c->log ? cg_log_softmax(x[0], c->dim) : cg_softmax(x[0], c->dim);
}

/* float64 reference over the logical layout */
static void sm_reference(cg_tensor *x, int64_t dim, bool lg, double *out) {
    int nd = cg_tensor_ndim(x);
    const int64_t *sh = cg_tensor_shape(x);
    int64_t d = nd == 0 ? 0 : (dim < 0 ? dim + nd : dim);
    int64_t outer = 1, D = nd == 0 ? 1 : sh[d], inner = 1;
    for (int k = 0; k < nd; k++) {
        if (k < d) outer *= sh[k];
        if (k > d) inner *= sh[k];
    }
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            double m = -INFINITY, s = 0;
            for (int64_t j = 0; j < D; j++) m = fmax(m, tt_get(x, (o * D + j) * inner + i));
            for (int64_t j = 0; j < D; j++) s += exp(tt_get(x, (o * D + j) * inner + i) - m);
            for (int64_t j = 0; j < D; j++) {
                double v = tt_get(x, (o * D + j) * inner + i);
                out[(o * D + j) * inner + i] = lg ? v - m - log(s) : exp(v - m) / s;
            }
        }
}

static void check_sm(cg_tensor *x, int64_t dim, bool log, double tol, const char *what) {
    sm_ctx c = {dim, log};
    cg_tensor *y = f_sm(&x, &c);
    CHECK_MSG(y != NULL, "%s: %s", what, cg_last_error_message());
    if (!y) return;
    int64_t n = cg_tensor_numel(x);
    double *ref = malloc(sizeof(double) * (size_t)(n ? n : 1));
    sm_reference(x, dim, log, ref);
    CHECK(cg_tensor_numel(y) == n && cg_tensor_dtype(y) == cg_tensor_dtype(x));
    for (int64_t k = 0; k < n; k++)
        if (!(fabs(tt_get(y, k) - ref[k]) <= tol * (1 + fabs(ref[k])))) {
            cg_test_fail(__FILE__, __LINE__, "%s %s dim %lld element %lld: got %.12g want %.12g", log ? "log_softmax" : "softmax",
                         what, (long long)dim, (long long)k, tt_get(y, k), ref[k]);
            break;
        }
    free(ref);
    cg_tensor_release(y);
}

static void check_sm_grads(cg_tensor *x, int64_t dim, bool log, const char *what) {
    sm_ctx c = {dim, log};
    cg_tensor_set_requires_grad(x, true);
    CHECK_MSG(tt_gradcheck(f_sm, &c, 1, &x, 1e-6, 1e-6, 1e-4), "%s gradcheck %s dim %lld", log ? "log_softmax" : "softmax", what, (long long)dim);
    CHECK_MSG(tt_gradgradcheck(f_sm, &c, 1, &x, 1e-6, 1e-5, 1e-3), "%s gradgradcheck %s dim %lld", log ? "log_softmax" : "softmax", what, (long long)dim);
}

TEST(softmax_values_all_dims) {
    int64_t sh[3] = {3, 4, 5};
    cg_dtype dts[] = {CG_DTYPE_F64, CG_DTYPE_F32, CG_DTYPE_F16, CG_DTYPE_BF16};
    double tols[] = {1e-13, 2e-6, 2e-3, 1.6e-2};
    for (int lg = 0; lg < 2; lg++)
        for (int di = 0; di < 4; di++) {
            cg_tensor *x = tt_rand(dts[di], 3, sh, -6, 6, 31);
            cg_tensor *nc = tt_noncontig(x), *tr = cg_transpose(x, 0, 2);
            for (int64_t d = -3; d < 3; d++) {
                check_sm(x, d, lg, tols[di], "contiguous");
                check_sm(nc, d, lg, tols[di], "non-contiguous");
                check_sm(tr, d, lg, tols[di], "transposed");
            }
            cg_tensor_release(x), cg_tensor_release(nc), cg_tensor_release(tr);
        }
    /* large inner extent (several column blocks) and large offsets: stability */
    int64_t big[2] = {3, 600};
    cg_tensor *b = tt_rand(CG_DTYPE_F32, 2, big, 990, 1000, 7);
    check_sm(b, 0, false, 2e-6, "wide");
    check_sm(b, 1, true, 2e-6, "wide");
    cg_tensor_release(b);
    int64_t edge[3] = {2, 3, 257}; /* last column block one wide */
    cg_tensor *c = tt_rand(CG_DTYPE_F64, 3, edge, -5, 5, 8);
    for (int64_t d = 0; d < 3; d++) check_sm(c, d, d == 1, 1e-13, "block edge");
    cg_tensor_release(c);
    /* softmax is on none of PyTorch's CPU autocast lists: it keeps its input dtype */
    cg_tensor *h = tt_rand(CG_DTYPE_F16, 2, big, -1, 1, 9);
    cg_set_autocast(true, CG_DTYPE_BF16);
    cg_tensor *hy = cg_softmax(h, 1);
    cg_set_autocast(false, CG_DTYPE_BF16);
    CHECK(hy && cg_tensor_dtype(hy) == CG_DTYPE_F16);
    cg_tensor_release(h), cg_tensor_release(hy);
}

TEST(softmax_special_cases) {
    /* 0-d: softmax = 1, log_softmax = 0 */
    cg_tensor *s = cg_scalar(3.5, CG_DTYPE_F64);
    for (int64_t d = -1; d <= 0; d++) {
        cg_tensor *a = cg_softmax(s, d), *b = cg_log_softmax(s, d);
        CHECK(a && cg_tensor_ndim(a) == 0 && tt_get(a, 0) == 1);
        CHECK(b && cg_tensor_ndim(b) == 0 && tt_get(b, 0) == 0);
        cg_tensor_release(a), cg_tensor_release(b);
    }
    CHECK_ERR(cg_softmax(s, 1) == NULL, CG_ERR_INDEX, "[softmax] dimension out of range");
    /* empty */
    int64_t e[2] = {0, 3}, e2[2] = {3, 0};
    cg_tensor *x0 = cg_zeros(2, e, CG_DTYPE_F32, cg_cpu()), *x1 = cg_zeros(2, e2, CG_DTYPE_F32, cg_cpu());
    cg_tensor *y0 = cg_softmax(x0, 1), *y1 = cg_log_softmax(x1, 1);
    CHECK(y0 && cg_tensor_numel(y0) == 0 && y1 && cg_tensor_numel(y1) == 0 && cg_tensor_shape(y1)[0] == 3);
    /* inf / nan rows */
    double v[] = {-INFINITY, -INFINITY, 1, NAN, 0, INFINITY};
    int64_t sh[2] = {2, 3};
    cg_tensor *x = tt_tensor(CG_DTYPE_F64, 2, sh, v), *y = cg_softmax(x, 1);
    CHECK(tt_get(y, 0) == 0 && tt_get(y, 2) == 1 && isnan(tt_get(y, 3)) && isnan(tt_get(y, 5)));
    /* errors */
    int64_t n = 3;
    cg_tensor *i = cg_ones(1, &n, CG_DTYPE_I64, cg_cpu());
    CHECK_ERR(cg_softmax(i, 0) == NULL, CG_ERR_DTYPE, "[softmax] not supported for dtype int64");
    CHECK_ERR(cg_log_softmax(x, 2) == NULL, CG_ERR_INDEX, "[log_softmax] dimension out of range");
    CHECK_ERR(cg_log_softmax(x, -3) == NULL, CG_ERR_INDEX, "dimension out of range");
    CHECK_ERR(cg_softmax(NULL, 0) == NULL, CG_ERR_VALUE, "NULL");
    /* meta */
    cg_tensor *m = cg_empty(2, sh, CG_DTYPE_F32, cg_meta()), *my = cg_log_softmax(m, 0);
    CHECK(my && cg_tensor_device(my).type == CG_DEVICE_META);
    /* node names */
    cg_tensor *l = tt_rand(CG_DTYPE_F64, 2, sh, -1, 1, 3);
    cg_tensor_set_requires_grad(l, true);
    cg_tensor *ya = cg_softmax(l, 1), *yb = cg_log_softmax(l, 0);
    CHECK(strcmp(cg_node_name(cg_tensor_grad_fn(ya)), "SoftmaxBackward0") == 0);
    CHECK(strcmp(cg_node_name(cg_tensor_grad_fn(yb)), "LogSoftmaxBackward0") == 0);
    cg_tensor_release(s), cg_tensor_release(x0), cg_tensor_release(x1), cg_tensor_release(y0), cg_tensor_release(y1);
    cg_tensor_release(x), cg_tensor_release(y), cg_tensor_release(i), cg_tensor_release(m), cg_tensor_release(my);
    cg_tensor_release(l), cg_tensor_release(ya), cg_tensor_release(yb);
}

TEST(softmax_gradients) {
    int64_t sh[3] = {2, 3, 4};
    for (int lg = 0; lg < 2; lg++) {
        for (int64_t d = -1; d < 3; d++) {
            cg_tensor *x = tt_rand(CG_DTYPE_F64, 3, sh, -2, 2, 40 + (unsigned)d);
            check_sm_grads(x, d, lg, "contiguous");
            cg_tensor *nc = tt_noncontig(x);
            check_sm_grads(nc, d, lg, "non-contiguous");
            cg_tensor_release(x), cg_tensor_release(nc);
        }
        cg_tensor *s = cg_scalar(0.3, CG_DTYPE_F64);
        check_sm_grads(s, 0, lg, "0-d");
        int64_t e[2] = {0, 3};
        cg_tensor *z = cg_zeros(2, e, CG_DTYPE_F64, cg_cpu());
        check_sm_grads(z, 1, lg, "empty");
        cg_tensor_release(s), cg_tensor_release(z);
    }
}
