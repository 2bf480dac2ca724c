/* bench_native.c — the machine's limits for the Python benchmarks (bench/), loaded
 * through ctypes from build/libbench_native.so: a STREAM-style add loop
 * (c[i] = a[i] + b[i], OpenMP over the given thread count) and a direct
 * cblas_sgemm call on the same OpenBLAS that cgrad links. Buffers are allocated
 * once and pre-touched by the threads that later use them, so a timed call
 * measures the loop alone (no page faults, no allocation). */
#include "backend/cpu/cblas_names.h"

#include <omp.h>
#include <stdint.h>
#include <stdlib.h>

#define BENCH_EXPORT __attribute__((visibility("default")))

/* Three float arrays of `count` elements each (a, b: inputs, c: output). */
typedef struct {
    int64_t count;
    float *a, *b, *c;
} bench_buffers;

static int resolve_threads(int threads) { return threads > 0 ? threads : omp_get_max_threads(); }

static float *alloc_floats(int64_t count) {
    size_t bytes = (size_t)count * sizeof(float);
    bytes = (bytes + 63) / 64 * 64;
    return aligned_alloc(64, bytes ? bytes : 64);
}

BENCH_EXPORT void bench_buffers_free(bench_buffers *h) {
    if (!h) return;
    free(h->a);
    free(h->b);
    free(h->c);
    free(h);
}

/* Allocates and fills the arrays, each thread touching the static chunk it
 * will run in bench_add (first touch places the pages). NULL when out of memory. */
BENCH_EXPORT bench_buffers *bench_buffers_new(int64_t count, int threads) {
    bench_buffers *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->count = count;
    h->a = alloc_floats(count);
    h->b = alloc_floats(count);
    h->c = alloc_floats(count);
    if (!h->a || !h->b || !h->c) {
        bench_buffers_free(h);
        return NULL;
    }
    float *a = h->a, *b = h->b, *c = h->c;
#pragma omp parallel for num_threads(resolve_threads(threads)) schedule(static)
    for (int64_t i = 0; i < count; i++) {
        a[i] = (float)(i % 1024) * 0.001f;
        b[i] = 1.0f - (float)(i % 512) * 0.002f;
        c[i] = 0.0f;
    }
    return h;
}

/* One pass of c = a + b over all elements. */
BENCH_EXPORT void bench_add(bench_buffers *h, int threads) {
    const float *restrict a = h->a, *restrict b = h->b;
    float *restrict c = h->c;
    int64_t n = h->count;
#pragma omp parallel for num_threads(resolve_threads(threads)) schedule(static)
    for (int64_t i = 0; i < n; i++) c[i] = a[i] + b[i];
}

/* C = A B for n x n row-major matrices held in the buffers' a, b, c (count >= n * n). */
BENCH_EXPORT int bench_sgemm(bench_buffers *h, int n) {
    if ((int64_t)n * n > h->count) return -1;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, h->a, n, h->b, n, 0.0f, h->c, n);
    return 0;
}

/* OpenBLAS's thread count (process-wide: cgrad's matmul uses the same library). */
BENCH_EXPORT void bench_blas_set_threads(int threads) { openblas_set_num_threads(threads); }
BENCH_EXPORT int bench_blas_get_threads(void) { return openblas_get_num_threads(); }
BENCH_EXPORT const char *bench_blas_config(void) { return openblas_get_config(); }
BENCH_EXPORT const char *bench_blas_corename(void) { return openblas_get_corename(); }

/* The OpenMP thread count a parallel loop with threads <= 0 uses. */
BENCH_EXPORT int bench_omp_max_threads(void) { return omp_get_max_threads(); }

/* The sum of c, read back so tests can check a pass ran. */
BENCH_EXPORT double bench_checksum(const bench_buffers *h) {
    double s = 0.0;
    for (int64_t i = 0; i < h->count; i++) s += h->c[i];
    return s;
}
