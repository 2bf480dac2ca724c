/* allocator.c — the caching allocator, one pool per device (Note [Backends]):
 * blocks rounded to size classes, freed blocks kept per class for reuse
 * without going back to the device's allocator (a fresh large host buffer
 * costs page faults, a device allocation a synchronisation), with statistics.
 * The CPU's pool (cg_cpu_memory_pool) serves 64-byte aligned host memory; a device
 * backend makes its own over its raw allocator. Also the tensor-block cache.
 * Note [Allocator]: classes are 64-byte steps up to 1 KiB, then four steps per
 * power of two. A pool holds at most CG_CACHE_LIMIT bytes; beyond that blocks
 * go back to the raw allocator. Blocks over CG_CACHE_MAX_BLOCK are never
 * cached. A pool over host memory links its free blocks through the blocks
 * themselves; one over device memory keeps the links in host nodes. */
#include "core_internal.h"

#include <sched.h>
#include <string.h>

#define CG_CACHE_LIMIT ((int64_t)2 << 30)
#define CG_CACHE_MAX_BLOCK ((size_t)1 << 31)

typedef struct free_block { struct free_block *next; } free_block;
/* a cached device block (non-intrusive pools) */
struct cg_pool_node {
    void *ptr;
    struct cg_pool_node *next;
};

/* The critical sections are a few loads and stores, so a spin lock (yielding
 * after a short spin) costs far less than a mutex on the per-op path. */
static void spin_lock(atomic_flag *f) {
    for (int spins = 0; atomic_flag_test_and_set_explicit(f, memory_order_acquire); spins++)
        if (spins >= 64) sched_yield();
}
static void spin_unlock(atomic_flag *f) { atomic_flag_clear_explicit(f, memory_order_release); }

/* statistics of a block handed out (lock held) */
static void note_alloc(cg_alloc_stats *st, size_t rounded) {
    st->live_bytes += (int64_t)rounded;
    st->total_bytes += (int64_t)rounded;
    if (st->live_bytes > st->peak_bytes) st->peak_bytes = st->live_bytes;
    if (++st->live_allocs > st->peak_allocs) st->peak_allocs = st->live_allocs;
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
    return idx < CG_POOL_CLASSES ? idx : -1;
}

/* the rounded size of class c (size_class's inverse) */
static size_t class_size(int c) {
    if (c < 16) return (size_t)(c + 1) * 64;
    size_t base = (size_t)1 << (10 + (c - 16) / 4);
    return base + (size_t)((c - 16) % 4 + 1) * (base / 4);
}

/* a cached block of class c, or NULL (lock held) */
static void *pop_cached(cg_cache_pool *pl, int c) {
    if (pl->intrusive) {
        free_block *b = pl->free[c];
        if (b) pl->free[c] = b->next;
        return b;
    }
    cg_pool_node *nd = pl->free[c];
    if (!nd) return NULL;
    pl->free[c] = nd->next;
    nd->next = pl->spare;
    pl->spare = nd;
    return nd->ptr;
}

void *cg_pool_alloc(cg_cache_pool *pl, size_t nbytes) {
    if (nbytes == 0) return NULL;
    size_t rounded;
    int c = size_class(nbytes, &rounded);
    if (c < 0 || rounded < nbytes) {
        cg_set_error(CG_ERR_OOM, "[alloc] cannot allocate %zu bytes", nbytes);
        return NULL;
    }
    spin_lock(&pl->lock);
    pl->stats.alloc_calls++;
    void *b = pop_cached(pl, c);
    if (b) {
        pl->stats.cache_hits++;
        pl->stats.cached_bytes -= (int64_t)rounded;
        note_alloc(&pl->stats, rounded);
        spin_unlock(&pl->lock);
        if (cg_prof_active()) cg_prof_note_alloc(rounded);
        return b;
    }
    spin_unlock(&pl->lock);
    void *p = rounded > ((size_t)1 << 50) ? NULL : pl->raw_alloc(rounded);
    if (!p) {
        cg_set_error(CG_ERR_OOM, "[alloc] out of memory allocating %zu bytes", nbytes);
        return NULL;
    }
    spin_lock(&pl->lock);
    pl->stats.system_allocs++;
    note_alloc(&pl->stats, rounded);
    spin_unlock(&pl->lock);
    if (cg_prof_active()) cg_prof_note_alloc(rounded);
    return p;
}

void cg_pool_free(cg_cache_pool *pl, void *p, size_t nbytes) {
    if (!p) return;
    size_t rounded;
    int c = size_class(nbytes, &rounded);
    CG_ASSERT(c >= 0);
    cg_pool_node *nd = NULL;
    if (!pl->intrusive) { /* a link for the block, taken before the lock (malloc may be slow) */
        spin_lock(&pl->lock);
        nd = pl->spare;
        if (nd) pl->spare = nd->next;
        spin_unlock(&pl->lock);
        if (!nd) nd = malloc(sizeof *nd); /* NULL: the block is not cached */
    }
    spin_lock(&pl->lock);
    pl->stats.live_bytes -= (int64_t)rounded;
    pl->stats.live_allocs--;
    if (rounded <= CG_CACHE_MAX_BLOCK && pl->stats.cached_bytes + (int64_t)rounded <= CG_CACHE_LIMIT &&
        (pl->intrusive || nd)) {
        if (pl->intrusive) {
            free_block *b = p;
            b->next = pl->free[c];
            pl->free[c] = b;
        } else {
            nd->ptr = p;
            nd->next = pl->free[c];
            pl->free[c] = nd;
        }
        pl->stats.cached_bytes += (int64_t)rounded;
        spin_unlock(&pl->lock);
        return;
    }
    if (nd) {
        nd->next = pl->spare;
        pl->spare = nd;
    }
    spin_unlock(&pl->lock);
    pl->raw_free(p, rounded);
}

cg_alloc_stats cg_pool_stats(cg_cache_pool *pl) {
    spin_lock(&pl->lock);
    cg_alloc_stats s = pl->stats;
    spin_unlock(&pl->lock);
    s.freed_bytes = s.total_bytes - s.live_bytes; /* derived: every live byte was handed out and not freed */
    return s;
}

void cg_pool_reset_peak(cg_cache_pool *pl) {
    spin_lock(&pl->lock);
    pl->stats.peak_bytes = pl->stats.live_bytes;
    pl->stats.peak_allocs = pl->stats.live_allocs;
    spin_unlock(&pl->lock);
}

void cg_pool_empty(cg_cache_pool *pl) {
    spin_lock(&pl->lock);
    void *lists[CG_POOL_CLASSES];
    memcpy(lists, pl->free, sizeof lists);
    memset(pl->free, 0, sizeof pl->free);
    cg_pool_node *spare = pl->spare;
    pl->spare = NULL;
    pl->stats.cached_bytes = 0;
    spin_unlock(&pl->lock);
    /* outside the lock: the raw frees may be slow (the class gives each block's rounded size) */
    for (int c = 0; c < CG_POOL_CLASSES; c++) {
        if (!lists[c]) continue;
        const size_t rounded = class_size(c); /* a class that holds blocks: its size fits */
        for (void *e = lists[c]; e;) {
            void *next, *ptr;
            if (pl->intrusive) {
                next = ((free_block *)e)->next;
                ptr = e;
            } else {
                cg_pool_node *nd = e;
                next = nd->next, ptr = nd->ptr;
                free(nd);
            }
            pl->raw_free(ptr, rounded);
            e = next;
        }
    }
    while (spare) {
        cg_pool_node *n = spare->next;
        free(spare);
        spare = n;
    }
}

/* ------------------------------------------------------------- the CPU's pool */

static void *host_raw_alloc(size_t nbytes) {
    void *p = NULL;
    return posix_memalign(&p, 64, nbytes) == 0 ? p : NULL;
}
static void host_raw_free(void *p, size_t nbytes) {
    (void)nbytes;
    free(p);
}

cg_cache_pool cg_cpu_memory_pool = {.raw_alloc = host_raw_alloc, .raw_free = host_raw_free, .intrusive = true,
                             .lock = ATOMIC_FLAG_INIT};

void *cg_alloc(size_t nbytes, cg_device dev) {
    (void)dev;
    return cg_pool_alloc(&cg_cpu_memory_pool, nbytes);
}
void cg_free(void *p, size_t nbytes, cg_device dev) {
    (void)dev;
    cg_pool_free(&cg_cpu_memory_pool, p, nbytes);
}

/* ------------------------------------------------------------- tensor blocks */

/* recycled tensor blocks (a struct of a few hundred bytes per op output) */
#ifdef __SANITIZE_ADDRESS__
#define CG_BLOCK_CACHE 0 /* let AddressSanitizer see every tensor's lifetime */
#else
#define CG_BLOCK_CACHE 1024
#endif
static atomic_flag g_blocks_lock = ATOMIC_FLAG_INIT;
static free_block *g_blocks;
static int g_nblocks;

cg_tensor_block *cg_tensor_block_alloc(void) {
    spin_lock(&g_blocks_lock);
    free_block *b = g_blocks;
    if (b) {
        g_blocks = b->next;
        g_nblocks--;
    }
    spin_unlock(&g_blocks_lock);
    if (!b && !(b = malloc(sizeof(cg_tensor_block)))) cg_set_error(CG_ERR_OOM, "[tensor] out of memory");
    return (cg_tensor_block *)b;
}

void cg_tensor_block_free(cg_tensor_block *p) {
    free_block *b = (free_block *)p;
    spin_lock(&g_blocks_lock);
    if (g_nblocks < CG_BLOCK_CACHE) {
        b->next = g_blocks;
        g_blocks = b;
        g_nblocks++;
        b = NULL;
    }
    spin_unlock(&g_blocks_lock);
    free(b);
}

void cg_tensor_blocks_empty(void) {
    spin_lock(&g_blocks_lock);
    free_block *b = g_blocks;
    g_blocks = NULL;
    g_nblocks = 0;
    spin_unlock(&g_blocks_lock);
    while (b) {
        free_block *n = b->next;
        free(b);
        b = n;
    }
}
