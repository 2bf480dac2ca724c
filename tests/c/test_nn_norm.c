/* test_nn_norm.c — batch_norm (training with running-stat updates and
 * momentum, eval), instance_norm, layer_norm, group_norm and rms_norm against
 * float64 reference loops; gradcheck + gradgradcheck (input, weight, bias) on
 * contiguous and non-contiguous inputs; error cases. */
#include <math.h>
#include "test.h"

#include <stdlib.h>
#include <string.h>

static void check_close(cg_tensor *r, const double *ref, int64_t n, double tol, const char *what) {
    CHECK_MSG(r != NULL, "%s: NULL (%s)", what, cg_last_error_message());
    if (!r) return;
    CHECK_MSG(cg_tensor_numel(r) == n, "%s: numel %lld, expected %lld", what, (long long)cg_tensor_numel(r),
              (long long)n);
    if (cg_tensor_numel(r) != n) return;
    for (int64_t i = 0; i < n; i++) {
        double v = tt_get(r, i);
        if (!(fabs(v - ref[i]) <= tol * (1 + fabs(ref[i])))) {
            CHECK_MSG(0, "%s[%lld] = %.10g, expected %.10g", what, (long long)i, v, ref[i]);
            return;
        }
    }
}

/* x viewed as (P, Q, R): per-q stats over P and R; y = (x - m) / sqrt(v + eps) */
static void norm_ref(const double *x, int64_t P, int64_t Q, int64_t R, double eps, double *y, double *mean,
                     double *var) {
    for (int64_t q = 0; q < Q; q++) {
        double s = 0, ss = 0, n = (double)(P * R);
        for (int64_t p = 0; p < P; p++)
            for (int64_t r = 0; r < R; r++) s += x[(p * Q + q) * R + r];
        double m = s / n;
        for (int64_t p = 0; p < P; p++)
            for (int64_t r = 0; r < R; r++) ss += pow(x[(p * Q + q) * R + r] - m, 2);
        double v = ss / n;
        for (int64_t p = 0; p < P; p++)
            for (int64_t r = 0; r < R; r++) y[(p * Q + q) * R + r] = (x[(p * Q + q) * R + r] - m) / sqrt(v + eps);
        if (mean) mean[q] = m;
        if (var) var[q] = v;
    }
}

static void vals(cg_tensor *t, double *out) {
    for (int64_t i = 0; i < cg_tensor_numel(t); i++) out[i] = tt_get(t, i);
}

/* ------------------------------------------------------------- batch_norm */

TEST(nn_batch_norm_values) {
    int64_t sh[3] = {3, 2, 5}, C = 2;
    const double eps = 1e-5, mom = 0.1;
    for (int d = 0; d < 3; d++) {
        cg_dtype dt = d == 0 ? CG_DTYPE_F64 : d == 1 ? CG_DTYPE_F32 : CG_DTYPE_F16;
        double tol = d == 0 ? 1e-12 : d == 1 ? 1e-5 : 2e-2;
        cg_tensor *x = tt_rand(dt, 3, sh, -2, 2, 71), *w = tt_rand(dt, 1, &C, 0.5, 1.5, 72),
                  *b = tt_rand(dt, 1, &C, -1, 1, 73);
        double rm0[2] = {0.5, -0.25}, rv0[2] = {2.0, 0.5};
        cg_tensor *rm = tt_tensor(CG_DTYPE_F32, 1, &C, rm0), *rv = tt_tensor(CG_DTYPE_F32, 1, &C, rv0);
        double xs[30], y[30], m[2], v[2], ref[30];
        vals(x, xs);
        norm_ref(xs, 3, 2, 5, eps, y, m, v);
        for (int64_t i = 0; i < 30; i++) {
            int64_t c = (i / 5) % 2;
            ref[i] = y[i] * tt_get(w, c) + tt_get(b, c);
        }
        uint64_t ver = cg_tensor_version(rm);
        cg_tensor *r = cg_batch_norm(x, rm, rv, w, b, true, mom, eps);
        check_close(r, ref, 30, tol, "batch_norm train");
        CHECK(cg_tensor_version(rm) > ver);
        double erm[2], erv[2];
        for (int c = 0; c < 2; c++) erm[c] = 0.9 * rm0[c] + 0.1 * m[c], erv[c] = 0.9 * rv0[c] + 0.1 * v[c] * 15 / 14;
        check_close(rm, erm, 2, d == 2 ? 1e-2 : 1e-6, "running_mean");
        check_close(rv, erv, 2, d == 2 ? 1e-2 : 1e-6, "running_var");
        cg_tensor_release(r);
        /* eval: the running stats normalize */
        r = cg_batch_norm(x, rm, rv, w, b, false, mom, eps);
        for (int64_t i = 0; i < 30; i++) {
            int64_t c = (i / 5) % 2;
            ref[i] = (xs[i] - erm[c]) / sqrt(erv[c] + eps) * tt_get(w, c) + tt_get(b, c);
        }
        check_close(r, ref, 30, d == 2 ? 2e-2 : 1e-5, "batch_norm eval");
        cg_tensor_release(r);
        /* training without affine and without running stats */
        r = cg_batch_norm(x, NULL, NULL, NULL, NULL, true, mom, eps);
        check_close(r, y, 30, tol, "batch_norm plain");
        cg_tensor_release(r);
        cg_tensor_release(x), cg_tensor_release(w), cg_tensor_release(b), cg_tensor_release(rm), cg_tensor_release(rv);
    }
    /* 2-D input (N, C) */
    int64_t s2[2] = {4, 3};
    cg_tensor *x = tt_rand(CG_DTYPE_F64, 2, s2, -1, 1, 74);
    double xs[12], y[12];
    vals(x, xs);
    norm_ref(xs, 4, 3, 1, 1e-5, y, NULL, NULL);
    cg_tensor *r = cg_batch_norm(x, NULL, NULL, NULL, NULL, true, 0.1, 1e-5);
    check_close(r, y, 12, 1e-12, "batch_norm 2-D");
    cg_tensor_release(r), cg_tensor_release(x);
}

typedef struct bn_ctx {
    int kind; /* 0 batch train, 1 batch eval, 2 instance, 3 layer, 4 group, 5 rms */
    cg_tensor *rm, *rv;
} bn_ctx;

static cg_tensor *f_norm(cg_tensor *const *in, void *p) {
    bn_ctx *c = p;
    switch (c->kind) {
    case 0: return cg_batch_norm(in[0], NULL, NULL, in[1], in[2], true, 0.1, 1e-5);
    case 1: return cg_batch_norm(in[0], c->rm, c->rv, in[1], in[2], false, 0.1, 1e-5);
    case 2: return cg_instance_norm(in[0], NULL, NULL, in[1], in[2], true, 0.1, 1e-5);
    case 3: {
        int64_t ns[2] = {2, 3};
        return cg_layer_norm(in[0], 2, ns, in[1], in[2], 1e-5);
    }
    case 4: return cg_group_norm(in[0], 2, in[1], in[2], 1e-5);
    default: {
        int64_t ns[2] = {2, 3};
        return cg_rms_norm(in[0], 2, ns, in[1], 1e-6);
    }
    }
}

TEST(nn_norm_gradients) {
    int64_t sh[3] = {3, 4, 3}, C = 4, ls[3] = {2, 2, 3}, lns[2] = {2, 3};
    double rm0[4] = {0.1, -0.2, 0.3, 0}, rv0[4] = {1, 2, 0.5, 1.5};
    cg_tensor *rm = tt_tensor(CG_DTYPE_F64, 1, &C, rm0), *rv = tt_tensor(CG_DTYPE_F64, 1, &C, rv0);
    for (int kind = 0; kind < 6; kind++) {
        bool layer = kind == 3 || kind == 5;
        cg_tensor *x = layer ? tt_rand(CG_DTYPE_F64, 3, ls, -2, 2, 80) : tt_rand(CG_DTYPE_F64, 3, sh, -2, 2, 81);
        cg_tensor *w = layer ? tt_rand(CG_DTYPE_F64, 2, lns, 0.5, 1.5, 82) : tt_rand(CG_DTYPE_F64, 1, &C, 0.5, 1.5, 82);
        cg_tensor *b = layer ? tt_rand(CG_DTYPE_F64, 2, lns, -1, 1, 83) : tt_rand(CG_DTYPE_F64, 1, &C, -1, 1, 83);
        cg_tensor *nc = tt_noncontig(x);
        bn_ctx c = {kind, rm, rv};
        for (int v = 0; v < 2; v++) {
            cg_tensor *in[3] = {v ? nc : x, w, b};
            for (int i = 0; i < 3; i++) cg_tensor_set_requires_grad(in[i], true);
            CHECK_MSG(tt_gradcheck(f_norm, &c, 3, in, 1e-6, 1e-7, 1e-5), "norm kind %d gradcheck (noncontig %d)",
                      kind, v);
            CHECK_MSG(tt_gradgradcheck(f_norm, &c, 3, in, 1e-6, 1e-6, 1e-4),
                      "norm kind %d gradgradcheck (noncontig %d)", kind, v);
        }
        cg_tensor_release(x), cg_tensor_release(w), cg_tensor_release(b), cg_tensor_release(nc);
    }
    cg_tensor_release(rm), cg_tensor_release(rv);
}

/* ------------------------------------------------------------- the other norms */

TEST(nn_other_norm_values) {
    int64_t sh[3] = {2, 4, 3}, C = 4;
    cg_tensor *x = tt_rand(CG_DTYPE_F64, 3, sh, -2, 2, 91), *w = tt_rand(CG_DTYPE_F64, 1, &C, 0.5, 1.5, 92),
              *b = tt_rand(CG_DTYPE_F64, 1, &C, -1, 1, 93);
    double xs[24], y[24], ref[24], m[8], v[8];
    vals(x, xs);
    /* instance norm: per (n, c) over 3 elements, running stats averaged over N */
    norm_ref(xs, 1, 8, 3, 1e-5, y, m, v);
    for (int64_t i = 0; i < 24; i++) ref[i] = y[i] * tt_get(w, (i / 3) % 4) + tt_get(b, (i / 3) % 4);
    cg_tensor *rm = cg_zeros(1, &C, CG_DTYPE_F64, cg_cpu()), *rv = cg_ones(1, &C, CG_DTYPE_F64, cg_cpu());
    cg_tensor *r = cg_instance_norm(x, rm, rv, w, b, true, 0.2, 1e-5);
    check_close(r, ref, 24, 1e-12, "instance_norm");
    double erm[4], erv[4];
    for (int c = 0; c < 4; c++) {
        erm[c] = 0.2 * (m[c] + m[4 + c]) / 2;
        erv[c] = 0.8 + 0.2 * (v[c] + v[4 + c]) / 2 * 1.5;
    }
    check_close(rm, erm, 4, 1e-12, "instance_norm running_mean");
    check_close(rv, erv, 4, 1e-12, "instance_norm running_var");
    cg_tensor_release(r);
    r = cg_instance_norm(x, rm, rv, NULL, NULL, false, 0.2, 1e-5);
    for (int64_t i = 0; i < 24; i++) ref[i] = (xs[i] - erm[(i / 3) % 4]) / sqrt(erv[(i / 3) % 4] + 1e-5);
    check_close(r, ref, 24, 1e-12, "instance_norm eval");
    cg_tensor_release(r);
    /* group norm, 2 groups: per (n, g) over 2 channels x 3 */
    norm_ref(xs, 1, 4, 6, 1e-5, y, NULL, NULL);
    for (int64_t i = 0; i < 24; i++) ref[i] = y[i] * tt_get(w, (i / 3) % 4) + tt_get(b, (i / 3) % 4);
    r = cg_group_norm(x, 2, w, b, 1e-5);
    check_close(r, ref, 24, 1e-12, "group_norm");
    cg_tensor_release(r);
    /* layer norm over the last 2 dims (4, 3) */
    int64_t ns[2] = {4, 3};
    cg_tensor *lw = tt_rand(CG_DTYPE_F64, 2, ns, 0.5, 1.5, 94), *lb = tt_rand(CG_DTYPE_F64, 2, ns, -1, 1, 95);
    norm_ref(xs, 1, 2, 12, 1e-5, y, NULL, NULL);
    for (int64_t i = 0; i < 24; i++) ref[i] = y[i] * tt_get(lw, i % 12) + tt_get(lb, i % 12);
    r = cg_layer_norm(x, 2, ns, lw, lb, 1e-5);
    check_close(r, ref, 24, 1e-12, "layer_norm");
    cg_tensor_release(r);
    cg_tensor *x32 = cg_to_dtype(x, CG_DTYPE_F32), *lw32 = cg_to_dtype(lw, CG_DTYPE_F32),
              *lb32 = cg_to_dtype(lb, CG_DTYPE_F32), *xbf = cg_to_dtype(x, CG_DTYPE_BF16);
    r = cg_layer_norm(x32, 2, ns, lw32, lb32, 1e-5);
    check_close(r, ref, 24, 1e-5, "layer_norm f32");
    cg_tensor_release(r);
    r = cg_layer_norm(xbf, 2, ns, NULL, NULL, 1e-5);
    check_close(r, y, 24, 3e-2, "layer_norm bf16");
    cg_tensor_release(r);
    /* rms norm over the last dim, default eps */
    int64_t n1 = 3;
    cg_tensor *rw = tt_rand(CG_DTYPE_F64, 1, &n1, 0.5, 1.5, 96);
    for (int64_t row = 0; row < 8; row++) {
        double s = 0;
        for (int k = 0; k < 3; k++) s += xs[row * 3 + k] * xs[row * 3 + k];
        double is = 1 / sqrt(s / 3 + 2.220446049250313e-16);
        for (int k = 0; k < 3; k++) ref[row * 3 + k] = xs[row * 3 + k] * is * tt_get(rw, k);
    }
    r = cg_rms_norm(x, 1, &n1, rw, NAN);
    check_close(r, ref, 24, 1e-12, "rms_norm");
    cg_tensor_release(r);
    /* empty batch */
    int64_t es[3] = {0, 4, 3};
    cg_tensor *e = cg_zeros(3, es, CG_DTYPE_F64, cg_cpu());
    r = cg_layer_norm(e, 2, ns, NULL, NULL, 1e-5);
    CHECK(r && cg_tensor_numel(r) == 0);
    cg_tensor_release(r);
    r = cg_group_norm(e, 2, NULL, NULL, 1e-5);
    CHECK(r && cg_tensor_numel(r) == 0);
    cg_tensor_release(r);
    cg_tensor *arr[] = {x, w, b, rm, rv, lw, lb, x32, lw32, lb32, xbf, rw, e};
    for (size_t i = 0; i < sizeof arr / sizeof *arr; i++) cg_tensor_release(arr[i]);
}

TEST(nn_norm_errors) {
    int64_t sh[3] = {2, 4, 3}, C = 4, three = 3;
    cg_tensor *x = tt_rand(CG_DTYPE_F32, 3, sh, -1, 1, 1), *w3 = tt_rand(CG_DTYPE_F32, 1, &three, 0, 1, 2);
    cg_tensor *w64 = tt_rand(CG_DTYPE_F64, 1, &C, 0, 1, 3), *rm = cg_zeros(1, &C, CG_DTYPE_F32, cg_cpu());
    CHECK_ERR(cg_batch_norm(x, NULL, NULL, w3, NULL, true, 0.1, 1e-5) == NULL, CG_ERR_SHAPE, "[batch_norm] weight");
    CHECK_ERR(cg_batch_norm(x, NULL, NULL, w64, NULL, true, 0.1, 1e-5) == NULL, CG_ERR_DTYPE, "weight");
    CHECK_ERR(cg_batch_norm(x, rm, NULL, NULL, NULL, true, 0.1, 1e-5) == NULL, CG_ERR_VALUE, "together");
    CHECK_ERR(cg_batch_norm(x, NULL, NULL, NULL, NULL, false, 0.1, 1e-5) == NULL, CG_ERR_VALUE, "required");
    int64_t one[3] = {1, 4, 1};
    cg_tensor *x1 = cg_zeros(3, one, CG_DTYPE_F32, cg_cpu());
    CHECK_ERR(cg_batch_norm(x1, NULL, NULL, NULL, NULL, true, 0.1, 1e-5) == NULL, CG_ERR_VALUE, "more than 1 value");
    CHECK_ERR(cg_instance_norm(x1, NULL, NULL, NULL, NULL, true, 0.1, 1e-5) == NULL, CG_ERR_VALUE, "spatial");
    cg_tensor *v = cg_zeros(1, &C, CG_DTYPE_F32, cg_cpu());
    CHECK_ERR(cg_batch_norm(v, NULL, NULL, NULL, NULL, true, 0.1, 1e-5) == NULL, CG_ERR_SHAPE, "at least 2 dims");
    int64_t ns[2] = {4, 2};
    CHECK_ERR(cg_layer_norm(x, 2, ns, NULL, NULL, 1e-5) == NULL, CG_ERR_SHAPE, "normalized_shape=(4,2)");
    int64_t ns2[2] = {4, 3};
    CHECK_ERR(cg_layer_norm(x, 2, ns2, w3, NULL, 1e-5) == NULL, CG_ERR_SHAPE, "weight");
    CHECK_ERR(cg_group_norm(x, 3, NULL, NULL, 1e-5) == NULL, CG_ERR_VALUE, "divisible by num_groups");
    CHECK_ERR(cg_rms_norm(x, 1, &C, NULL, NAN) == NULL, CG_ERR_SHAPE, "[rms_norm]");
    cg_tensor *xi = cg_zeros(3, sh, CG_DTYPE_I64, cg_cpu());
    CHECK_ERR(cg_layer_norm(xi, 1, &three, NULL, NULL, 1e-5) == NULL, CG_ERR_DTYPE, "int64");
    CHECK_ERR(cg_batch_norm(NULL, NULL, NULL, NULL, NULL, true, 0.1, 1e-5) == NULL, CG_ERR_VALUE, "NULL");
    cg_tensor *arr[] = {x, w3, w64, rm, x1, v, xi};
    for (size_t i = 0; i < sizeof arr / sizeof *arr; i++) cg_tensor_release(arr[i]);
}
