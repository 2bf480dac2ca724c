/* threads.c — the engine's own thread pool and the one thread-count setting
 * that governs our loops and OpenBLAS together, Note [Threads].
 *
 * Note [Thread pool]: the pool is ours (pthreads), not OpenMP, so how long an
 * idle worker spins before it sleeps is decided here and not by whichever
 * OpenMP runtime the process loaded first (PyTorch ships a libgomp.so.1 of its
 * own; imported before cgrad, its runtime served our loops with its default
 * spin of 300 000 rounds, and on 2 cores those spinning workers took the
 * cores OpenBLAS's threads needed: an MLP training step went from 1.7 to
 * 12 ms). A region: the caller publishes the job and a new ticket (a serial
 * number and the region's member count in one atomic word, so a worker never
 * pairs one region's serial with another's count), runs chunk 0 itself, and
 * waits until every member has run its chunk. Workers spin briefly on the
 * ticket, then sleep on a condition
 * variable. One region runs at a time; a caller that finds the pool busy (or
 * that is itself inside a region) runs the whole range on its own thread,
 * which gives the same results because kernels never depend on the split. */
#include "../backend.h"

#include "cblas_names.h"
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_RELAX() _mm_pause()
#else
#define CPU_RELAX() ((void)0)
#endif

enum { MAX_WORKERS = 255, SPIN_ROUNDS = 2000, TICKET_SHIFT = 16 };
#define TICKET_COUNT_MASK ((uint_fast64_t)0xffff)

typedef struct pool {
    pthread_mutex_t region;        /* held by the caller for a whole region */
    pthread_mutex_t lock;          /* guards the sleeps below */
    pthread_cond_t work;           /* workers sleep here between regions */
    pthread_cond_t done;           /* the caller sleeps here until the join */
    atomic_uint_fast64_t ticket;   /* serial << TICKET_SHIFT | members of the region (caller included) */
    atomic_int remaining;          /* workers of the current region still running */
    int workers;                   /* threads started (ids 1..workers) */
    uint_fast64_t start_ticket[MAX_WORKERS + 1]; /* the ticket each worker was started at */
    /* the current region, written before the ticket is published */
    cg_range_fn fn;
    void *ctx;
    int64_t n, chunk;
} pool;

static pool g_pool = {.region = PTHREAD_MUTEX_INITIALIZER,
                      .lock = PTHREAD_MUTEX_INITIALIZER,
                      .work = PTHREAD_COND_INITIALIZER,
                      .done = PTHREAD_COND_INITIALIZER};
static _Thread_local bool t_in_region;
static atomic_int g_threads = 0;
static pthread_once_t g_atfork_once = PTHREAD_ONCE_INIT;

static void run_chunk(int64_t id) {
    int64_t b = id * g_pool.chunk, e = b + g_pool.chunk < g_pool.n ? b + g_pool.chunk : g_pool.n;
    t_in_region = true;
    if (b < e) g_pool.fn(b, e, g_pool.ctx);
    t_in_region = false;
}

static void *worker_main(void *arg) {
    int id = (int)(intptr_t)arg;
    uint_fast64_t seen = g_pool.start_ticket[id]; /* regions before this one are not ours */
    for (;;) {
        uint_fast64_t t;
        int spins = 0;
        while ((t = atomic_load_explicit(&g_pool.ticket, memory_order_acquire)) == seen &&
               spins++ < SPIN_ROUNDS)
            CPU_RELAX();
        if (t == seen) {
            pthread_mutex_lock(&g_pool.lock);
            while ((t = atomic_load(&g_pool.ticket)) == seen) pthread_cond_wait(&g_pool.work, &g_pool.lock);
            pthread_mutex_unlock(&g_pool.lock);
        }
        seen = t;
        if (id >= (int)(t & TICKET_COUNT_MASK)) continue; /* not a member of this region */
        run_chunk(id);
        if (atomic_fetch_sub_explicit(&g_pool.remaining, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&g_pool.lock);
            pthread_cond_signal(&g_pool.done);
            pthread_mutex_unlock(&g_pool.lock);
        }
    }
    return NULL;
}

/* A forked child has only the forking thread: it starts with an empty pool. */
static void reset_after_fork(void) {
    pthread_mutex_init(&g_pool.region, NULL);
    pthread_mutex_init(&g_pool.lock, NULL);
    pthread_cond_init(&g_pool.work, NULL);
    pthread_cond_init(&g_pool.done, NULL);
    g_pool.workers = 0;
    atomic_store(&g_pool.remaining, 0);
    t_in_region = false;
}

static void install_atfork(void) { pthread_atfork(NULL, NULL, reset_after_fork); }

/* Starts workers up to `want` (caller holds the region lock); returns how many exist. */
static int ensure_workers(int want) {
    if (want > MAX_WORKERS) want = MAX_WORKERS;
    pthread_once(&g_atfork_once, install_atfork);
    while (g_pool.workers < want) {
        pthread_t th;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        g_pool.start_ticket[g_pool.workers + 1] = atomic_load(&g_pool.ticket);
        int rc = pthread_create(&th, &attr, worker_main, (void *)(intptr_t)(g_pool.workers + 1));
        pthread_attr_destroy(&attr);
        if (rc != 0) break; /* run with the workers we have */
        g_pool.workers++;
    }
    return g_pool.workers;
}

static int default_threads(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* Note [BLAS thread cap]: a positive OPENBLAS_NUM_THREADS in the environment
 * caps the threads the engine gives OpenBLAS. OpenBLAS reads it once, at load;
 * without the cap, cg_set_num_threads (and the conv path's restore, Note [Conv
 * threads]) would raise OpenBLAS past what the environment asked of it.
 * make test-tsan sets it to 1: OpenBLAS's workers synchronise through
 * spin-waits that ThreadSanitizer cannot see, while our own pool keeps the
 * full thread count there. */
int cg_blas_thread_cap(const char *env) {
    if (!env || !*env) return 0;
    char *end;
    long v = strtol(env, &end, 10);
    return *end == '\0' && v > 0 && v <= INT_MAX ? (int)v : 0;
}

static pthread_once_t g_blas_cap_once = PTHREAD_ONCE_INIT;
static int g_blas_cap; /* 0: no cap */
static void read_blas_cap(void) { g_blas_cap = cg_blas_thread_cap(getenv("OPENBLAS_NUM_THREADS")); }

void cg_blas_set_num_threads(int n) {
    pthread_once(&g_blas_cap_once, read_blas_cap);
    if (n < 1) n = 1;
    openblas_set_num_threads(g_blas_cap && n > g_blas_cap ? g_blas_cap : n);
}

int cg_blas_get_num_threads(void) { return openblas_get_num_threads(); }

void cg_set_num_threads(int n) {
    if (n < 1) n = 1;
    atomic_store(&g_threads, n);
    cg_blas_set_num_threads(n);
}

int cg_get_num_threads(void) {
    int n = atomic_load(&g_threads);
    if (n == 0) {
        n = default_threads();
        atomic_store(&g_threads, n);
    }
    return n;
}

bool cg_in_parallel_region(void) { return t_in_region; }

void cg_parallel_for(int64_t n, int64_t grain, cg_range_fn fn, void *ctx) {
    if (n <= 0) return;
    int nt = cg_get_num_threads();
    if (grain < 1) grain = 1;
    int64_t max_chunks = n / grain + (n % grain != 0); /* grain may be INT64_MAX: no n + grain - 1 */
    if (nt > max_chunks) nt = (int)max_chunks;
    if (nt <= 1 || t_in_region || pthread_mutex_trylock(&g_pool.region) != 0) {
        fn(0, n, ctx);
        return;
    }
    int count = 1 + ensure_workers(nt - 1);
    if (count > nt) count = nt;
    if (count <= 1) {
        pthread_mutex_unlock(&g_pool.region);
        fn(0, n, ctx);
        return;
    }
    g_pool.fn = fn;
    g_pool.ctx = ctx;
    g_pool.n = n;
    g_pool.chunk = n / count + (n % count != 0);
    atomic_store(&g_pool.remaining, count - 1);
    pthread_mutex_lock(&g_pool.lock);
    uint_fast64_t serial = (atomic_load(&g_pool.ticket) >> TICKET_SHIFT) + 1;
    atomic_store_explicit(&g_pool.ticket, serial << TICKET_SHIFT | (uint_fast64_t)count, memory_order_release);
    pthread_cond_broadcast(&g_pool.work);
    pthread_mutex_unlock(&g_pool.lock);
    run_chunk(0);
    int spins = 0;
    while (atomic_load_explicit(&g_pool.remaining, memory_order_acquire) > 0 && spins++ < SPIN_ROUNDS) CPU_RELAX();
    if (atomic_load_explicit(&g_pool.remaining, memory_order_acquire) > 0) {
        pthread_mutex_lock(&g_pool.lock);
        while (atomic_load(&g_pool.remaining) > 0) pthread_cond_wait(&g_pool.done, &g_pool.lock);
        pthread_mutex_unlock(&g_pool.lock);
    }
    pthread_mutex_unlock(&g_pool.region);
}
