/* allocator.c — the CPU caching allocator: 64-byte aligned blocks rounded to
 * size classes, freed blocks kept per class for reuse without touching the OS
 * (a fresh large buffer costs page faults), with statistics.
 * Note [Allocator]: classes are 64-byte steps up to 1 KiB, then four steps per
 * power of two. The cache holds at most CG_CACHE_LIMIT bytes; beyond that
 * blocks go back to the OS. Blocks over CG_CACHE_MAX_BLOCK are never cached. */
#include "core_internal.h"

#include <pthread.h>
#include <string.h>

#define CG_NUM_CLASSES 256
#define CG_CACHE_LIMIT ((int64_t)2 << 30)
#define CG_CACHE_MAX_BLOCK ((size_t)1 << 31)

typedef struct free_block { struct free_block *next; } free_block;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static free_block *g_free[CG_NUM_CLASSES];
static cg_alloc_stats g_stats;

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
    pthread_mutex_lock(&g_lock);
    g_stats.alloc_calls++;
    free_block *b = g_free[c];
    if (b) {
        g_free[c] = b->next;
        g_stats.cache_hits++;
        g_stats.cached_bytes -= (int64_t)rounded;
    }
    if (b) {
        g_stats.live_bytes += (int64_t)rounded;
        if (g_stats.live_bytes > g_stats.peak_bytes) g_stats.peak_bytes = g_stats.live_bytes;
        pthread_mutex_unlock(&g_lock);
        return b;
    }
    pthread_mutex_unlock(&g_lock);
    void *p = NULL;
    if (rounded > ((size_t)1 << 50) || posix_memalign(&p, 64, rounded) != 0 || !p) {
        cg_set_error(CG_ERR_OOM, "[alloc] out of memory allocating %zu bytes", nbytes);
        return NULL;
    }
    pthread_mutex_lock(&g_lock);
    g_stats.system_allocs++;
    g_stats.live_bytes += (int64_t)rounded;
    if (g_stats.live_bytes > g_stats.peak_bytes) g_stats.peak_bytes = g_stats.live_bytes;
    pthread_mutex_unlock(&g_lock);
    return p;
}

void cg_free(void *p, size_t nbytes, cg_device dev) {
    (void)dev;
    if (!p) return;
    size_t rounded;
    int c = size_class(nbytes, &rounded);
    CG_ASSERT(c >= 0);
    pthread_mutex_lock(&g_lock);
    g_stats.live_bytes -= (int64_t)rounded;
    if (rounded <= CG_CACHE_MAX_BLOCK && g_stats.cached_bytes + (int64_t)rounded <= CG_CACHE_LIMIT) {
        free_block *b = p;
        b->next = g_free[c];
        g_free[c] = b;
        g_stats.cached_bytes += (int64_t)rounded;
        pthread_mutex_unlock(&g_lock);
        return;
    }
    pthread_mutex_unlock(&g_lock);
    free(p);
}

cg_alloc_stats cg_allocator_stats(cg_device dev) {
    (void)dev;
    pthread_mutex_lock(&g_lock);
    cg_alloc_stats s = g_stats;
    pthread_mutex_unlock(&g_lock);
    return s;
}

void cg_allocator_reset_peak(cg_device dev) {
    (void)dev;
    pthread_mutex_lock(&g_lock);
    g_stats.peak_bytes = g_stats.live_bytes;
    pthread_mutex_unlock(&g_lock);
}

void cg_allocator_empty_cache(cg_device dev) {
    (void)dev;
    pthread_mutex_lock(&g_lock);
    for (int c = 0; c < CG_NUM_CLASSES; c++) {
        free_block *b = g_free[c];
        while (b) {
            free_block *n = b->next;
            free(b);
            b = n;
        }
        g_free[c] = NULL;
    }
    g_stats.cached_bytes = 0;
    pthread_mutex_unlock(&g_lock);
}
