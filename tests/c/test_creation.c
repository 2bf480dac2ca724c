/* test_creation.c — deterministic factories: linspace, logspace and eye
 * against independent references (every dtype, steps 0 / 1 / 2 / many,
 * integer truncation), meta device, and argument errors. */
#include "test.h"

#include <stdlib.h>
#include <string.h>

static const cg_dtype k_all[] = {CG_DTYPE_BOOL, CG_DTYPE_U8, CG_DTYPE_I8, CG_DTYPE_I16, CG_DTYPE_I32,
                                 CG_DTYPE_I64, CG_DTYPE_F16, CG_DTYPE_BF16, CG_DTYPE_F32, CG_DTYPE_F64};
static const cg_dtype k_float[] = {CG_DTYPE_F16, CG_DTYPE_BF16, CG_DTYPE_F32, CG_DTYPE_F64};

static double rel_tol(cg_dtype dt) {
    switch (dt) {
    case CG_DTYPE_F16: return 2e-3;
    case CG_DTYPE_BF16: return 1.6e-2;
    case CG_DTYPE_F32: return 1e-6;
    default: return 1e-13;
    }
}

static bool is_1d(cg_tensor *t, int64_t n) { return t && cg_tensor_ndim(t) == 1 && cg_tensor_shape(t)[0] == n; }

/* reference: start + i * (end - start) / (steps - 1), exact endpoints */
static double lin_ref(double a, double b, int64_t steps, int64_t i) {
    if (steps == 1) return a;
    if (i == steps - 1) return b;
    return a + (double)i * (b - a) / (double)(steps - 1);
}

TEST(linspace_float_values) {
    const struct { double a, b; int64_t steps; } cases[] = {
        {0, 1, 2}, {-3, 7, 11}, {1, -1, 1001}, {2.5, 2.5, 5}, {-1e3, 1e3, 7}, {0.1, 0.9, 64},
    };
    for (size_t d = 0; d < sizeof k_float / sizeof *k_float; d++) {
        cg_dtype dt = k_float[d];
        for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
            cg_tensor *t = cg_linspace(cases[c].a, cases[c].b, cases[c].steps, dt, cg_cpu());
            CHECK_NN(t);
            if (!t) continue;
            CHECK(is_1d(t, cases[c].steps) && cg_tensor_dtype(t) == dt);
            double scale = fmax(fabs(cases[c].a), fabs(cases[c].b));
            for (int64_t i = 0; i < cases[c].steps; i++)
                CHECK_NEAR(tt_get(t, i), lin_ref(cases[c].a, cases[c].b, cases[c].steps, i), rel_tol(dt) * scale + 1e-300);
            /* endpoints exact (as the dtype holds them) */
            cg_tensor *ab = cg_full(1, (int64_t[]){1}, cases[c].b, dt, cg_cpu());
            CHECK_NEAR(tt_get(t, cases[c].steps - 1), tt_get(ab, 0), 0);
            cg_tensor_release(ab);
            cg_tensor_release(t);
        }
    }
}

TEST(linspace_symmetry_and_small_steps) {
    /* second half computed from the end: values mirror around the middle */
    cg_tensor *t = cg_linspace(-1, 1, 101, CG_DTYPE_F64, cg_cpu());
    for (int64_t i = 0; i < 101; i++) CHECK_NEAR(tt_get(t, i), -tt_get(t, 100 - i), 0);
    CHECK_NEAR(tt_get(t, 50), 0.0, 1e-15);
    cg_tensor_release(t);
    cg_tensor *e = cg_linspace(3, 9, 0, CG_DTYPE_F32, cg_cpu());
    CHECK(is_1d(e, 0));
    cg_tensor *one = cg_linspace(3, 9, 1, CG_DTYPE_F32, cg_cpu());
    CHECK(is_1d(one, 1));
    CHECK_NEAR(tt_get(one, 0), 3, 0);
    cg_tensor *two = cg_linspace(3, 9, 2, CG_DTYPE_I64, cg_cpu());
    CHECK(is_1d(two, 2));
    CHECK_NEAR(tt_get(two, 0), 3, 0);
    CHECK_NEAR(tt_get(two, 1), 9, 0);
    cg_tensor_release(e);
    cg_tensor_release(one);
    cg_tensor_release(two);
}

TEST(linspace_integer_truncation) {
    /* float step, truncated per element (PyTorch: [0, 3, 6, 10] and [-5, -2, 0, 2, 5]) */
    const double r1[] = {0, 3, 6, 10}, r2[] = {-5, -2, 0, 2, 5};
    const cg_dtype ints[] = {CG_DTYPE_I8, CG_DTYPE_I16, CG_DTYPE_I32, CG_DTYPE_I64};
    for (int d = 0; d < 4; d++) {
        cg_tensor *a = cg_linspace(0, 10, 4, ints[d], cg_cpu());
        cg_tensor *b = cg_linspace(-5, 5, 5, ints[d], cg_cpu());
        CHECK(is_1d(a, 4) && is_1d(b, 5));
        for (int i = 0; i < 4; i++) CHECK_NEAR(tt_get(a, i), r1[i], 0);
        for (int i = 0; i < 5; i++) CHECK_NEAR(tt_get(b, i), r2[i], 0);
        cg_tensor_release(a);
        cg_tensor_release(b);
    }
    /* start/end are converted to the dtype first */
    cg_tensor *c = cg_linspace(0.9, 10.9, 3, CG_DTYPE_U8, cg_cpu());
    CHECK_NEAR(tt_get(c, 0), 0, 0);
    CHECK_NEAR(tt_get(c, 1), 5, 0);
    CHECK_NEAR(tt_get(c, 2), 10, 0);
    cg_tensor *bl = cg_linspace(0, 1, 3, CG_DTYPE_BOOL, cg_cpu());
    CHECK_NEAR(tt_get(bl, 0), 0, 0);
    CHECK_NEAR(tt_get(bl, 1), 1, 0); /* 0.5 is nonzero */
    CHECK_NEAR(tt_get(bl, 2), 1, 0);
    cg_tensor_release(c);
    cg_tensor_release(bl);
}

TEST(linspace_large_parallel) {
    int prev = cg_get_num_threads();
    cg_set_num_threads(1);
    cg_tensor *a = cg_linspace(-2, 3, 200001, CG_DTYPE_F32, cg_cpu());
    cg_set_num_threads(3);
    cg_tensor *b = cg_linspace(-2, 3, 200001, CG_DTYPE_F32, cg_cpu());
    cg_set_num_threads(prev);
    CHECK(a && b && memcmp(cg_tensor_data(a), cg_tensor_data(b), 200001 * sizeof(float)) == 0);
    CHECK_NEAR(tt_get(a, 123457), lin_ref(-2, 3, 200001, 123457), 1e-6 * 3);
    cg_tensor_release(a);
    cg_tensor_release(b);
}

TEST(logspace_values) {
    for (size_t d = 0; d < sizeof k_float / sizeof *k_float; d++) {
        cg_dtype dt = k_float[d];
        cg_tensor *t = cg_logspace(0, 3, 4, 10.0, dt, cg_cpu());
        const double r[] = {1, 10, 100, 1000};
        for (int i = 0; i < 4; i++) CHECK_NEAR(tt_get(t, i), r[i], rel_tol(dt) * r[i] * 4);
        cg_tensor_release(t);
        cg_tensor *u = cg_logspace(-1, 2, 31, 2.0, dt, cg_cpu());
        for (int i = 0; i < 31; i++) CHECK_NEAR(tt_get(u, i), pow(2.0, lin_ref(-1, 2, 31, i)), rel_tol(dt) * 4 * 4);
        cg_tensor_release(u);
    }
    cg_tensor *i64 = cg_logspace(0, 2, 3, 10.0, CG_DTYPE_I64, cg_cpu());
    CHECK_NEAR(tt_get(i64, 0), 1, 0);
    CHECK_NEAR(tt_get(i64, 1), 10, 0);
    CHECK_NEAR(tt_get(i64, 2), 100, 0);
    cg_tensor *one = cg_logspace(2, 5, 1, 10.0, CG_DTYPE_F64, cg_cpu());
    CHECK(is_1d(one, 1));
    CHECK_NEAR(tt_get(one, 0), 100, 1e-12);
    cg_tensor *zero = cg_logspace(2, 5, 0, 10.0, CG_DTYPE_F64, cg_cpu());
    CHECK(is_1d(zero, 0));
    cg_tensor *i32 = cg_logspace(0, 10, 11, 2.0, CG_DTYPE_I32, cg_cpu());
    for (int i = 0; i < 11; i++) CHECK_NEAR(tt_get(i32, i), (double)(1 << i), 0);
    cg_tensor_release(i64);
    cg_tensor_release(one);
    cg_tensor_release(zero);
    cg_tensor_release(i32);
}

TEST(eye_values_all_dtypes) {
    const int64_t dims[][2] = {{3, -1}, {2, 4}, {4, 2}, {0, 3}, {1, 1}, {3, 0}};
    for (size_t d = 0; d < sizeof k_all / sizeof *k_all; d++) {
        for (size_t c = 0; c < sizeof dims / sizeof *dims; c++) {
            int64_t n = dims[c][0], m = dims[c][1] < 0 ? n : dims[c][1];
            cg_tensor *t = cg_eye(dims[c][0], dims[c][1], k_all[d], cg_cpu());
            CHECK_NN(t);
            if (!t) continue;
            CHECK(cg_tensor_ndim(t) == 2 && cg_tensor_shape(t)[0] == n && cg_tensor_shape(t)[1] == m);
            CHECK(cg_tensor_dtype(t) == k_all[d] && cg_tensor_is_contiguous(t));
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j < m; j++) CHECK_NEAR(tt_get(t, i * m + j), i == j ? 1.0 : 0.0, 0);
            cg_tensor_release(t);
        }
    }
}

TEST(creation_meta_and_errors) {
    cg_tensor *m = cg_linspace(0, 1, 5, CG_DTYPE_F32, cg_meta());
    CHECK(is_1d(m, 5) && cg_tensor_data(m) == NULL);
    cg_tensor *e = cg_eye(2, 3, CG_DTYPE_F16, cg_meta());
    CHECK(e && cg_tensor_shape(e)[1] == 3 && cg_device_eq(cg_tensor_device(e), cg_meta()));
    cg_tensor *l = cg_logspace(0, 1, 4, 10, CG_DTYPE_F64, cg_meta());
    CHECK(is_1d(l, 4));
    cg_tensor_release(m);
    cg_tensor_release(e);
    cg_tensor_release(l);
    CHECK_ERR(cg_linspace(0, 1, -1, CG_DTYPE_F32, cg_cpu()) == NULL, CG_ERR_SHAPE, "[linspace] number of steps must be non-negative");
    CHECK_ERR(cg_logspace(0, 1, -3, 10, CG_DTYPE_F32, cg_cpu()) == NULL, CG_ERR_SHAPE, "[logspace]");
    CHECK_ERR(cg_eye(-2, 3, CG_DTYPE_F32, cg_cpu()) == NULL, CG_ERR_SHAPE, "[eye] n must be non-negative");
    CHECK_ERR(cg_linspace(0, 1, 3, (cg_dtype)42, cg_cpu()) == NULL, CG_ERR_DTYPE, "invalid dtype");
    CHECK_ERR(cg_eye(2, 2, CG_DTYPE_F32, (cg_device){(cg_device_type)9, 0}) == NULL, CG_ERR_DEVICE, "invalid device");
}
