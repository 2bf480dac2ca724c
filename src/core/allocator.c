/* allocator.c — the CPU caching allocator: 64-byte aligned blocks rounded to
 * size classes, freed blocks kept per class for reuse without touching the OS
 * (a fresh large buffer costs page faults), with statistics.
 * Note [Allocator]: classes are 64-byte steps up to 1 KiB, then four steps per
 * power of two. The cache holds at most CG_CACHE_LIMIT bytes; beyond that
 * blocks go back to the OS. Blocks over CG_CACHE_MAX_BLOCK are never cached.
 * Tensor blocks (a tensor struct with its storage) have their own short list. */
#include "core_internal.h"

#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#define CG_NUM_CLASSES 256
#define CG_CACHE_LIMIT ((int64_t)2 << 30)
#define CG_CACHE_MAX_BLOCK ((size_t)1 << 31)

typedef struct free_block { struct free_block *next; } free_block;

/* The critical sections are a few loads and stores, so a spin lock (yielding
 * after a short spin) costs far less than a mutex on the per-op path. */
static atomic_flag g_lock_flag = ATOMIC_FLAG_INIT;
/* recycled tensor blocks (a struct of a few hundred bytes per op output) */
#ifdef __SANITIZE_ADDRESS__
#define CG_BLOCK_CACHE 0 /* let AddressSanitizer see every tensor's lifetime */
#else
#define CG_BLOCK_CACHE 1024
#endif
static free_block *g_blocks;
static int g_nblocks;

static void lock(void) {
    for (int spins = 0; atomic_flag_test_and_set_explicit(&g_lock_flag, memory_order_acquire); spins++)
        if (spins >= 64) sched_yield();
}
static void unlock(void) { atomic_flag_clear_explicit(&g_lock_flag, memory_order_release); }
static free_block *g_free[CG_NUM_CLASSES];
static cg_alloc_stats g_stats;

/* statistics of a block handed out (lock held) */
static void note_alloc(size_t rounded) {
    g_stats.live_bytes += (int64_t)rounded;
    g_stats.total_bytes += (int64_t)rounded;
    if (g_stats.live_bytes > g_stats.peak_bytes) g_stats.peak_bytes = g_stats.live_bytes;
    if (++g_stats.live_allocs > g_stats.peak_allocs) g_stats.peak_allocs = g_stats.live_allocs;
}

/* class index and rounded size for a request */
static int size_class(size_t n, size_t *rounded) {
    if (n <= 1024) {
        size_t r = (n + 63) & ~(size_t)63;
        *rounded = r;
        return (int)(r / 64) - 1; /* 0..15 */
    }
    int p = 63 - __builtin_clzll((unsigned long long)(n - 1)); /* 2^p < n <= 2^(p+1) */
    size_t base = (size_t)1 << p, step = base / 4;
    size_t k = (n - base + step - 1) / step; /* 1..4 */
    *rounded = base + k * step;
    int idx = 16 + (p - 10) * 4 + (int)(k - 1);
    return idx < CG_NUM_CLASSES ? idx : -1;
}

void *cg_alloc(size_t nbytes, cg_device dev) {
    (void)dev;
    if (nbytes == 0) return NULL;
    size_t rounded;
    int c = size_class(nbytes, &rounded);
    if (c < 0 || rounded < nbytes) {
        cg_set_error(CG_ERR_OOM, "[alloc] cannot allocate %zu bytes", nbytes);
        return NULL;
    }
    lock();
    g_stats.alloc_calls++;
    free_block *b = g_free[c];
    if (b) {
        g_free[c] = b->next;
        g_stats.cache_hits++;
        g_stats.cached_bytes -= (int64_t)rounded;
    }
    if (b) {
        note_alloc(rounded);
        unlock();
        if (cg_prof_active()) cg_prof_note_alloc(rounded);
        return b;
    }
    unlock();
    void *p = NULL;
    if (rounded > ((size_t)1 << 50) || posix_memalign(&p, 64, rounded) != 0 || !p) {
        cg_set_error(CG_ERR_OOM, "[alloc] out of memory allocating %zu bytes", nbytes);
        return NULL;
    }
    lock();
    g_stats.system_allocs++;
    note_alloc(rounded);
    unlock();
    if (cg_prof_active()) cg_prof_note_alloc(rounded);
    return p;
}

void cg_free(void *p, size_t nbytes, cg_device dev) {
    (void)dev;
    if (!p) return;
    size_t rounded;
    int c = size_class(nbytes, &rounded);
    CG_ASSERT(c >= 0);
    lock();
    g_stats.live_bytes -= (int64_t)rounded;
    g_stats.live_allocs--;
    if (rounded <= CG_CACHE_MAX_BLOCK && g_stats.cached_bytes + (int64_t)rounded <= CG_CACHE_LIMIT) {
        free_block *b = p;
        b->next = g_free[c];
        g_free[c] = b;
        g_stats.cached_bytes += (int64_t)rounded;
        unlock();
        return;
    }
    unlock();
    free(p);
}

cg_tensor_block *cg_tensor_block_alloc(void) {
    lock();
    free_block *b = g_blocks;
    if (b) {
        g_blocks = b->next;
        g_nblocks--;
    }
    unlock();
    if (!b && !(b = malloc(sizeof(cg_tensor_block)))) cg_set_error(CG_ERR_OOM, "[tensor] out of memory");
    return (cg_tensor_block *)b;
}

void cg_tensor_block_free(cg_tensor_block *p) {
    free_block *b = (free_block *)p;
    lock();
    if (g_nblocks < CG_BLOCK_CACHE) {
        b->next = g_blocks;
        g_blocks = b;
        g_nblocks++;
        b = NULL;
    }
    unlock();
    free(b);
}

cg_alloc_stats cg_allocator_stats(cg_device dev) {
    (void)dev;
    lock();
    cg_alloc_stats s = g_stats;
    unlock();
    s.freed_bytes = s.total_bytes - s.live_bytes; /* derived: every live byte was handed out and not freed */
    return s;
}

void cg_allocator_reset_peak(cg_device dev) {
    (void)dev;
    lock();
    g_stats.peak_bytes = g_stats.live_bytes;
    g_stats.peak_allocs = g_stats.live_allocs;
    unlock();
}

void cg_allocator_empty_cache(cg_device dev) {
    (void)dev;
    lock();
    for (int c = 0; c < CG_NUM_CLASSES; c++) {
        free_block *b = g_free[c];
        while (b) {
            free_block *n = b->next;
            free(b);
            b = n;
        }
        g_free[c] = NULL;
    }
    while (g_blocks) {
        free_block *n = g_blocks->next;
        free(g_blocks);
        g_blocks = n;
    }
    g_nblocks = 0;
    g_stats.cached_bytes = 0;
    unlock();
}
