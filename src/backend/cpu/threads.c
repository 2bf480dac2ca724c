/* threads.c — the thread pool (OpenMP) and the one thread-count setting that
 * governs our loops and OpenBLAS together, Note [Threads]. */
#include "../../core/core_internal.h"

#include <cblas.h>
#include <omp.h>
#include <unistd.h>

void openblas_set_num_threads(int num_threads);

/* ThreadSanitizer does not see libgomp's fork and join (libgomp is not built
 * with it), so under -fsanitize=thread each region states them: the caller
 * releases before the region and every member acquires on entry; every member
 * releases on exit and the caller acquires after the join. Nothing otherwise. */
#if defined(__SANITIZE_THREAD__)
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define TSAN_ACQUIRE(p) __tsan_acquire(p)
#define TSAN_RELEASE(p) __tsan_release(p)
#else
#define TSAN_ACQUIRE(p) ((void)(p))
#define TSAN_RELEASE(p) ((void)(p))
#endif

static atomic_int g_threads = 0;

static int default_threads(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

void cg_set_num_threads(int n) {
    if (n < 1) n = 1;
    atomic_store(&g_threads, n);
    omp_set_num_threads(n);
    openblas_set_num_threads(n);
}

int cg_get_num_threads(void) {
    int n = atomic_load(&g_threads);
    if (n == 0) {
        n = default_threads();
        atomic_store(&g_threads, n);
    }
    return n;
}

bool cg_in_parallel_region(void) { return omp_in_parallel(); }

void cg_parallel_for(int64_t n, int64_t grain, cg_range_fn fn, void *ctx) {
    if (n <= 0) return;
    int nt = cg_get_num_threads();
    if (grain < 1) grain = 1;
    int64_t max_chunks = (n + grain - 1) / grain;
    if (nt > max_chunks) nt = (int)max_chunks;
    if (nt <= 1 || omp_in_parallel()) {
        fn(0, n, ctx);
        return;
    }
    char fork_sync, join_sync;
    TSAN_RELEASE(&fork_sync);
#pragma omp parallel num_threads(nt)
    {
        TSAN_ACQUIRE(&fork_sync);
        int tid = omp_get_thread_num(), cnt = omp_get_num_threads();
        int64_t chunk = (n + cnt - 1) / cnt;
        int64_t b = tid * chunk, e = b + chunk < n ? b + chunk : n;
        if (b < e) fn(b, e, ctx);
        TSAN_RELEASE(&join_sync);
    }
    TSAN_ACQUIRE(&join_sync);
}
