/* test_sizes.c — overflow-checked size arithmetic (src/core/checked.h) and
 * the ops issue 22 found wrapping: each huge size, offset, pad or scale must
 * give an error naming the op, never a wrapped value. */
#include "test.h"
#include "core/core_internal.h"

#include <stdint.h>
#include <stdlib.h>

static const cg_device k_cpu = {CG_DEVICE_CPU, 0};

TEST(sizes_checked_arithmetic) {
    int64_t r;
    CHECK(cg_mul_ok(1LL << 31, 1LL << 31, &r) && r == 1LL << 62);
    CHECK(!cg_mul_ok(1LL << 32, 1LL << 31, &r));
    CHECK(!cg_mul_ok(-1, INT64_MIN, &r));
    CHECK(cg_add_ok(INT64_MAX - 1, 1, &r) && r == INT64_MAX);
    CHECK(!cg_add_ok(INT64_MAX, 1, &r));
    CHECK(!cg_sub_ok(INT64_MIN, 1, &r));
    CHECK(!cg_mul3_ok(1LL << 31, 1LL << 31, 4, &r));
    CHECK(cg_count_axpb(2, 5, 1) == 11);
    CHECK(cg_count_axpb(2, INT64_MAX / 2 + 1, 0) == -1);
    CHECK(cg_count_axpb(1, -1, 1) == -1);
    int64_t big[3] = {1LL << 31, 1LL << 31, 4}, zero[3] = {INT64_MAX, 0, INT64_MAX};
    CHECK(!cg_numel_ok(3, big, &r));
    CHECK(cg_numel_ok(3, zero, &r) && r == 0);
    size_t b;
    CHECK(cg_bytes_ok(10, 8, &b) && b == 80);
    CHECK(!cg_bytes_ok(-1, 8, &b));
    CHECK(!cg_bytes_ok(1LL << 61, 8, &b));
}

TEST(sizes_checked_extent) {
    int64_t lo, hi;
    int64_t sh[2] = {3, 4}, st[2] = {4, 1};
    CHECK(cg_strided_extent(2, sh, st, 5, &lo, &hi) && lo == 5 && hi == 5 + 8 + 3);
    int64_t sh0[2] = {0, INT64_MAX}, st0[2] = {INT64_MAX, INT64_MAX};
    CHECK(cg_strided_extent(2, sh0, st0, 7, &lo, &hi) && hi < lo); /* empty touches nothing */
    int64_t sh1[1] = {4}, st1[1] = {(1LL << 62) - 1};
    CHECK(!cg_strided_extent(1, sh1, st1, 0, &lo, &hi));
    int64_t sh2[1] = {2}, st2[1] = {INT64_MAX};
    CHECK(!cg_strided_extent(1, sh2, st2, 1, &lo, &hi));
    int64_t sh3[1] = {3}, st3[1] = {-2};
    CHECK(cg_strided_extent(1, sh3, st3, 10, &lo, &hi) && lo == 6 && hi == 10);
}

TEST(sizes_checked_malloc) {
    void *p = cg_malloc_n("test", 0, 8); /* a zero count still gives a pointer */
    CHECK(p != NULL);
    free(p);
    CHECK_ERR(cg_malloc_n("scratch_op", 1LL << 61, 8) == NULL, CG_ERR_OOM, "[scratch_op]");
    CHECK_ERR(cg_malloc_n("scratch_op", -1, 8) == NULL, CG_ERR_OOM, "too large");
    CHECK_ERR(cg_calloc_n("scratch_op", INT64_MAX, 2) == NULL, CG_ERR_OOM, "too large");
    int64_t *q = cg_calloc_n("test", 4, sizeof *q);
    CHECK(q && q[0] == 0 && q[3] == 0);
    free(q);
}

TEST(sizes_views_refuse_wrapping_geometry) {
    int64_t four = 4;
    cg_tensor *x = cg_zeros(1, &four, CG_DTYPE_F32, k_cpu);
    int64_t sz[1] = {4}, st[1] = {(1LL << 62) - 1}; /* read memory before the storage when it wrapped */
    CHECK_ERR(cg_as_strided(x, 1, sz, st, 0) == NULL, CG_ERR_VALUE, "[as_strided]");
    int64_t sz3[1] = {3}, st3[1] = {(1LL << 62) + (1LL << 40)};
    CHECK_ERR(cg_as_strided(x, 1, sz3, st3, 0) == NULL, CG_ERR_VALUE, "[as_strided]");
    int64_t one[1] = {1};
    CHECK_ERR(cg_as_strided(x, 1, one, one, 1LL << 62) == NULL, CG_ERR_VALUE, "storage offset");
    CHECK_ERR(cg_as_strided(x, 1, one, one, 4) == NULL, CG_ERR_INDEX, "out of bounds");
    cg_tensor *ok = cg_as_strided(x, 1, one, one, 3);
    CHECK_NN(ok);
    cg_tensor_release(ok);
    CHECK_ERR(cg_narrow(x, 0, 2, INT64_MAX) == NULL, CG_ERR_INDEX, "[narrow]");
    cg_tensor *s = cg_slice(x, 0, 1, 4, INT64_MAX); /* one element, no wrapped length */
    CHECK(s && cg_tensor_numel(s) == 1);
    cg_tensor_release(s);
    int64_t e = 1LL << 40, unit = 1;
    cg_tensor *u = cg_zeros(1, &unit, CG_DTYPE_F32, k_cpu);
    cg_tensor *big = cg_expand(u, 1, &e); /* large but valid: a view */
    CHECK(big && cg_tensor_numel(big) == e);
    cg_tensor *v = NULL, *ix = NULL;
    CHECK_ERR(cg_topk(big, 1, 0, true, true, &v, &ix) != CG_OK, CG_ERR_OOM, "[topk]");
    cg_tensor_release(big);
    cg_tensor_release(u);
    cg_tensor_release(x);
}

TEST(sizes_nn_pads_scales_factors) {
    int64_t sh[3] = {1, 1, 3}, sh4[4] = {1, 4, 2, 2};
    cg_tensor *x = cg_zeros(3, sh, CG_DTYPE_F32, k_cpu), *y = cg_zeros(4, sh4, CG_DTYPE_F32, k_cpu);
    int64_t pads[2] = {1LL << 61, 0};
    CHECK_ERR(cg_pad(x, 2, pads, CG_PAD_REPLICATE, 0) == NULL, CG_ERR_OOM, "[pad]");
    int64_t pads2[2] = {INT64_MAX, INT64_MAX};
    CHECK_ERR(cg_pad(x, 2, pads2, CG_PAD_CONSTANT, 0) == NULL, CG_ERR_SHAPE, "overflows");
    int64_t size = 1LL << 61;
    CHECK_ERR(cg_interpolate(x, CG_INTERP_NEAREST, &size, NULL, false) == NULL, CG_ERR_OOM, "[interpolate]");
    double scale = 1e30;
    CHECK_ERR(cg_interpolate(x, CG_INTERP_NEAREST, NULL, &scale, false) == NULL, CG_ERR_VALUE, "beyond int64");
    CHECK_ERR(cg_pixel_shuffle(y, 1LL << 32) == NULL, CG_ERR_VALUE, "[pixel_shuffle]"); /* was SIGFPE */
    CHECK_ERR(cg_pixel_unshuffle(y, 1LL << 62) == NULL, CG_ERR_VALUE, "[pixel_unshuffle]");
    cg_tensor_release(x);
    cg_tensor_release(y);
}
