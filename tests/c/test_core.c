/* test_core.c — core tests: shapes and overflow, dtypes and half conversion,
 * storage sharing and versions, the allocator and its statistics, meta
 * device, error state, and broadcast without copies. */
#include "test.h"
#include "core/core_internal.h"

#include <string.h>

TEST(core_shape_errors) {
    int64_t neg[2] = {2, -1};
    CHECK_ERR(cg_empty(2, neg, CG_DTYPE_F32, cg_cpu()) == NULL, CG_ERR_SHAPE, "negative size");
    int64_t big[3] = {1ll << 31, 1ll << 31, 1ll << 31};
    CHECK_ERR(cg_empty(3, big, CG_DTYPE_F32, cg_cpu()) == NULL, CG_ERR_SHAPE, "overflows");
    int64_t bytes_over[1] = {(1ll << 62)};
    CHECK_ERR(cg_empty(1, bytes_over, CG_DTYPE_F64, cg_cpu()) == NULL, CG_ERR_SHAPE, "overflows");
    int64_t deep[CG_MAX_DIMS + 1];
    for (int i = 0; i <= CG_MAX_DIMS; i++) deep[i] = 1;
    CHECK_ERR(cg_empty(CG_MAX_DIMS + 1, deep, CG_DTYPE_F32, cg_cpu()) == NULL, CG_ERR_SHAPE, "maximum");
    cg_tensor *ok = cg_empty(CG_MAX_DIMS, deep, CG_DTYPE_F32, cg_cpu());
    CHECK_NN(ok);
    cg_tensor_release(ok);
}

TEST(core_one_pib_allocation_fails_cleanly) {
    int64_t shape[1] = {1ll << 50}; /* 1 PiB of bytes */
    CHECK_ERR(cg_empty(1, shape, CG_DTYPE_U8, cg_cpu()) == NULL, CG_ERR_OOM, "alloc");
    cg_tensor *t = cg_scalar(1.0, CG_DTYPE_F32); /* the process goes on */
    CHECK_NN(t);
    cg_tensor_release(t);
}

TEST(core_dtype_roundtrip_half) {
    float vals[] = {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 1e-7f, 6.1e-5f, 3.14159f, INFINITY, -INFINITY};
    for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
        float h = cg_f16_to_f32(cg_f32_to_f16(vals[i]));
        CHECK_MSG(fabsf(h - vals[i]) <= fabsf(vals[i]) * 1e-3f + 6e-8f || h == vals[i], "f16(%g) = %g", vals[i], h);
        float b = cg_bf16_to_f32(cg_f32_to_bf16(vals[i]));
        CHECK_MSG(fabsf(b - vals[i]) <= fabsf(vals[i]) * 8e-3f || b == vals[i], "bf16(%g) = %g", vals[i], b);
    }
    CHECK(isnan(cg_f16_to_f32(cg_f32_to_f16(NAN))));
    CHECK(isnan(cg_bf16_to_f32(cg_f32_to_bf16(NAN))));
    CHECK(isinf(cg_f16_to_f32(cg_f32_to_f16(70000.0f))));
    CHECK(cg_dtype_size(CG_DTYPE_BF16) == 2 && cg_dtype_size(CG_DTYPE_I64) == 8);
    CHECK(strcmp(cg_dtype_name(CG_DTYPE_F16), "float16") == 0);
}

TEST(core_all_dtypes_store_and_cast) {
    int64_t shape[1] = {4};
    double v[4] = {0, 1, -3, 7.75};
    for (int dt = 0; dt < CG_DTYPE_COUNT; dt++) {
        cg_tensor *t = tt_tensor((cg_dtype)dt, 1, shape, v);
        CHECK_NN(t);
        for (int j = 0; j < CG_DTYPE_COUNT; j++) {
            cg_tensor *c = cg_to_dtype(t, (cg_dtype)j);
            CHECK_NN(c);
            CHECK(cg_tensor_dtype(c) == (cg_dtype)j);
            for (int k = 0; k < 4; k++) {
                /* -3 wraps in the wide unsigned dtypes to values a double or a half cannot hold */
                if ((dt == CG_DTYPE_U16 || dt == CG_DTYPE_U32 || dt == CG_DTYPE_U64) && v[k] < 0) continue;
                double src = tt_get(t, k), got = tt_get(c, k);
                double want = src;
                int64_t w = (int64_t)trunc(src);
                switch (j) {
                case CG_DTYPE_BOOL: want = src != 0; break;
                case CG_DTYPE_U8: want = (uint8_t)w; break;
                case CG_DTYPE_I8: want = (int8_t)w; break;
                case CG_DTYPE_I16: want = (int16_t)w; break;
                case CG_DTYPE_I32: want = (int32_t)w; break;
                case CG_DTYPE_I64: want = (double)w; break;
                case CG_DTYPE_U16: want = (uint16_t)w; break;
                case CG_DTYPE_U32: want = (uint32_t)w; break;
                case CG_DTYPE_U64: want = (double)(uint64_t)w; break;
                default: break;
                }
                CHECK_MSG(got == want, "%s -> %s: %g became %g", cg_dtype_name((cg_dtype)dt), cg_dtype_name((cg_dtype)j), src, got);
            }
            cg_tensor_release(c);
        }
        cg_tensor_release(t);
    }
}

TEST(core_views_share_storage_and_version) {
    int64_t shape[2] = {3, 4};
    cg_tensor *a = tt_rand(CG_DTYPE_F32, 2, shape, -1, 1, 1);
    cg_tensor *t = cg_transpose(a, 0, 1);
    int64_t flat[1] = {12};
    cg_tensor *r = cg_reshape(a, 1, flat);
    cg_tensor *s = cg_slice(a, 1, 1, 4, 2);
    CHECK(cg_tensor_storage_id(t) == cg_tensor_storage_id(a));
    CHECK(cg_tensor_storage_id(r) == cg_tensor_storage_id(a));
    CHECK(cg_tensor_storage_id(s) == cg_tensor_storage_id(a));
    CHECK(!cg_tensor_is_contiguous(t) && !cg_tensor_is_contiguous(s));
    uint64_t v0 = cg_tensor_version(a);
    cg_tensor *one = cg_scalar(1.0, CG_DTYPE_F32);
    CHECK_OK(cg_add_(s, one));
    CHECK(cg_tensor_version(a) == v0 + 1 && cg_tensor_version(t) == v0 + 1);
    cg_tensor *ts[] = {a, t, r, s, one};
    for (size_t i = 0; i < 5; i++) cg_tensor_release(ts[i]);
}

/* cg_tensor_resize_: contiguous strides, the offset kept, the shared storage grown with its bytes */
TEST(core_resize_in_place) {
    int64_t four[1] = {4}, two3[2] = {2, 3}, big[1] = {40};
    cg_tensor *a = cg_arange(0, 4, 1, CG_DTYPE_F32, cg_cpu());
    cg_tensor *v = cg_slice(a, 0, 2, 4, 1); /* a[2:], offset 2 */
    uint64_t ver = cg_tensor_version(a);
    CHECK_OK(cg_tensor_resize_(v, 2, two3)); /* needs 2 + 6 elements: the storage grows */
    CHECK(cg_tensor_ndim(v) == 2 && cg_tensor_shape(v)[1] == 3 && cg_tensor_strides(v)[0] == 3);
    CHECK(cg_tensor_offset(v) == 2 && cg_tensor_storage_nbytes(v) == 8 * 4);
    CHECK(cg_tensor_storage_id(v) == cg_tensor_storage_id(a) && cg_tensor_version(a) == ver + 1);
    CHECK(tt_get(v, 0) == 2 && tt_get(v, 1) == 3 && tt_get(a, 3) == 3); /* old bytes kept, a sees the new block */
    CHECK_OK(cg_tensor_resize_(v, 0, NULL)); /* shrinking keeps the storage */
    CHECK(cg_tensor_ndim(v) == 0 && cg_tensor_storage_nbytes(v) == 8 * 4 && tt_get(v, 0) == 2);
    CHECK_OK(cg_tensor_resize_(a, 1, four));
    int64_t neg[1] = {-1};
    CHECK_ERR(cg_tensor_resize_(a, 1, neg) != CG_OK, CG_ERR_SHAPE, "negative");
    cg_tensor *g = cg_zeros(1, four, CG_DTYPE_F32, cg_cpu());
    CHECK_OK(cg_tensor_set_requires_grad(g, true));
    CHECK_ERR(cg_tensor_resize_(g, 1, big) != CG_OK, CG_ERR_RUNTIME, "require grad");
    float ext[4] = {1, 2, 3, 4};
    cg_tensor *e = cg_from_blob(ext, 1, four, NULL, CG_DTYPE_F32, NULL, NULL);
    CHECK_OK(cg_tensor_resize_(e, 2, (int64_t[2]){2, 2})); /* fits: no growth */
    CHECK_ERR(cg_tensor_resize_(e, 1, big) != CG_OK, CG_ERR_RUNTIME, "not resizable");
    cg_tensor *ts[] = {a, v, g, e};
    for (size_t i = 0; i < 4; i++) cg_tensor_release(ts[i]);
}

TEST(core_allocator_stats_and_reuse) {
    cg_alloc_stats s0 = cg_allocator_stats(cg_cpu());
    int64_t shape[1] = {100000};
    cg_tensor *a = cg_empty(1, shape, CG_DTYPE_F32, cg_cpu());
    cg_alloc_stats s1 = cg_allocator_stats(cg_cpu());
    CHECK(s1.alloc_calls == s0.alloc_calls + 1);
    CHECK(s1.live_bytes >= s0.live_bytes + 400000);
    CHECK(s1.peak_bytes >= s1.live_bytes);
    cg_tensor_release(a);
    cg_alloc_stats s2 = cg_allocator_stats(cg_cpu());
    CHECK(s2.live_bytes == s0.live_bytes);
    cg_tensor *b = cg_empty(1, shape, CG_DTYPE_F32, cg_cpu());
    cg_alloc_stats s3 = cg_allocator_stats(cg_cpu());
    CHECK(s3.cache_hits == s2.cache_hits + 1); /* reused without the OS */
    cg_tensor_release(b);
}

TEST(core_broadcast_allocates_no_copy) {
    int64_t sa[2] = {1000, 1}, sb[2] = {1, 1000};
    cg_tensor *a = tt_rand(CG_DTYPE_F32, 2, sa, -1, 1, 2), *b = tt_rand(CG_DTYPE_F32, 2, sb, -1, 1, 3);
    cg_tensor_set_requires_grad(a, true);
    cg_tensor_set_requires_grad(b, true);
    cg_allocator_reset_peak(cg_cpu());
    cg_alloc_stats s0 = cg_allocator_stats(cg_cpu());
    cg_tensor *c = cg_add(a, b);
    cg_alloc_stats s1 = cg_allocator_stats(cg_cpu());
    /* exactly one allocation: the (1000,1000) output (a broadcast copy of an
     * input would be a second 4 MB block) */
    CHECK(s1.alloc_calls == s0.alloc_calls + 1);
    CHECK(s1.peak_bytes - s0.live_bytes < 2 * 4000000);
    cg_tensor *g = cg_ones_like(c);
    cg_allocator_reset_peak(cg_cpu());
    cg_alloc_stats s2 = cg_allocator_stats(cg_cpu());
    CHECK_OK(cg_backward(c, g, false, false));
    cg_alloc_stats s3 = cg_allocator_stats(cg_cpu());
    /* backward: the two reduced grads (1000 floats each) plus small temporaries;
     * never a (1000,1000) broadcast copy of a or b beyond the incoming grad */
    CHECK_MSG(s3.peak_bytes - s2.live_bytes < 4000000, "backward peak grew by %lld bytes",
              (long long)(s3.peak_bytes - s2.live_bytes));
    CHECK(cg_tensor_grad(a) && cg_tensor_grad(b));
    CHECK_NEAR(tt_get(cg_tensor_grad(a), 7), 1000.0, 1e-3);
    cg_tensor_release(g);
    cg_tensor_release(c);
    cg_tensor_release(a);
    cg_tensor_release(b);
}

TEST(core_meta_device) {
    int64_t s[2] = {2, 3}, s2[1] = {3};
    cg_tensor *a = cg_empty(2, s, CG_DTYPE_F32, cg_meta());
    cg_tensor *b = cg_empty(1, s2, CG_DTYPE_F32, cg_meta());
    cg_tensor *c = cg_add(a, b);
    CHECK_NN(c);
    CHECK(cg_tensor_device(c).type == CG_DEVICE_META && cg_tensor_ndim(c) == 2 && cg_tensor_data(c) == NULL);
    cg_tensor *cpu = cg_ones(1, s2, CG_DTYPE_F32, cg_cpu());
    CHECK_ERR(cg_add(a, cpu) == NULL, CG_ERR_DEVICE, "same device");
    int64_t big[2] = {1ll << 40, 1ll << 20}; /* 4 PiB of metadata only */
    cg_tensor *m = cg_empty(2, big, CG_DTYPE_F32, cg_meta());
    CHECK_NN(m);
    cg_tensor_release(m);
    cg_tensor_release(cpu);
    cg_tensor_release(c);
    cg_tensor_release(a);
    cg_tensor_release(b);
}

TEST(core_errors_dtype_and_shape) {
    int64_t s[1] = {3}, s4[1] = {4};
    cg_tensor *f = cg_ones(1, s, CG_DTYPE_F32, cg_cpu());
    cg_tensor *d = cg_ones(1, s, CG_DTYPE_F64, cg_cpu());
    cg_tensor *q = cg_ones(1, s4, CG_DTYPE_F32, cg_cpu());
    CHECK_ERR(cg_add(f, d) == NULL, CG_ERR_DTYPE, "[add] dtype mismatch: float32 and float64");
    CHECK_ERR(cg_mul(f, q) == NULL, CG_ERR_SHAPE, "[mul] shapes (3,) and (4,) cannot broadcast");
    CHECK_ERR(cg_add(f, NULL) == NULL, CG_ERR_VALUE, "NULL");
    cg_tensor_release(f);
    cg_tensor_release(d);
    cg_tensor_release(q);
}

TEST(core_rng_reproducible) {
    uint32_t a[4], b[4];
    cg_philox(42, 7, a);
    cg_philox(42, 7, b);
    CHECK(memcmp(a, b, sizeof a) == 0);
    cg_philox(42, 8, b);
    CHECK(memcmp(a, b, sizeof a) != 0);
    cg_manual_seed(5);
    uint64_t s, o;
    cg_rng_get_state(&s, &o);
    CHECK(s == 5 && o == 0);
}

TEST(core_threads_setting) {
    int prev = cg_get_num_threads();
    cg_set_num_threads(1);
    CHECK(cg_get_num_threads() == 1);
    cg_set_num_threads(prev);
    CHECK(cg_get_num_threads() == prev);
}

/* Note [BLAS thread cap]: the setting reaches OpenBLAS, capped by a positive
 * OPENBLAS_NUM_THREADS (make test-tsan runs this with 1) */
TEST(core_blas_thread_cap) {
    CHECK(cg_blas_thread_cap(NULL) == 0 && cg_blas_thread_cap("") == 0 && cg_blas_thread_cap("0") == 0);
    CHECK(cg_blas_thread_cap("1") == 1 && cg_blas_thread_cap("12") == 12);
    CHECK(cg_blas_thread_cap("-2") == 0 && cg_blas_thread_cap("2x") == 0 && cg_blas_thread_cap("x") == 0);
    CHECK(cg_blas_thread_cap("99999999999") == 0);
    int prev = cg_get_num_threads(), cap = cg_blas_thread_cap(getenv("OPENBLAS_NUM_THREADS"));
    cg_set_num_threads(3);
    CHECK(cg_get_num_threads() == 3);
    CHECK_MSG(cg_blas_get_num_threads() == (cap && cap < 3 ? cap : 3), "OpenBLAS threads %d, cap %d",
              cg_blas_get_num_threads(), cap);
    cg_set_num_threads(prev);
}

static int g_moved_freed;
static void moved_free(void *ctx) {
    free(ctx);
    g_moved_freed++;
}

/* cg_tensor_move_storage (share_memory_): every tensor on the storage, views and view(dtype)
 * included, reads and writes the new memory; the deleter runs when the storage dies */
TEST(core_move_storage) {
    int64_t n = 6;
    cg_tensor *a = cg_arange(0, 6, 1, CG_DTYPE_F32, cg_cpu());
    int64_t two = 2;
    cg_tensor *v = cg_narrow(a, 0, 2, two);
    cg_tensor *i = cg_view_dtype(a, CG_DTYPE_I32);
    CHECK(a && v && i && cg_tensor_storage_id(i) == cg_tensor_storage_id(a));
    CHECK_ERR(cg_view_dtype(a, CG_DTYPE_F64) == NULL, CG_ERR_NOT_IMPLEMENTED, "different element size");
    float *mem = malloc(6 * sizeof(float));
    CHECK_ERR(cg_tensor_move_storage(a, mem, 8, moved_free, mem) != CG_OK, CG_ERR_VALUE, "holds 8 bytes");
    CHECK(cg_tensor_move_storage(a, mem, 6 * sizeof(float), moved_free, mem) == CG_OK);
    CHECK(cg_tensor_data(a) == mem && (float *)cg_tensor_data(v) == mem + 2 && cg_tensor_data(i) == mem);
    CHECK(mem[5] == 5.0f);
    CHECK(cg_fill_(v, 9.0) == CG_OK && mem[2] == 9.0f && mem[3] == 9.0f && mem[4] == 4.0f);
    double x;
    CHECK(cg_tensor_get_flat(a, 3, &x) == CG_OK && x == 9.0);
    cg_tensor *m = cg_zeros(1, &n, CG_DTYPE_F32, cg_meta());
    CHECK_ERR(cg_tensor_move_storage(m, mem, 64, moved_free, mem) != CG_OK, CG_ERR_DEVICE, "not the CPU");
    g_moved_freed = 0;
    cg_tensor_release(a);
    cg_tensor_release(v);
    CHECK(g_moved_freed == 0);
    cg_tensor_release(i);
    CHECK(g_moved_freed == 1);
    cg_tensor_release(m);
}
