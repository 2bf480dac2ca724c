/* autocast_cache.c — the autocast cast cache (thread-local): within one
 * autocast region the low-precision copy of a parameter (a float32 leaf that
 * requires grad, not a view) is made once and reused by every op that needs
 * it, as PyTorch's autocast does; the region's outermost exit clears it. */
#include "core_internal.h"

#include <stdlib.h>

typedef struct cache_entry {
    cg_tensor *src; /* owned: keeps the key's address from being reused */
    cg_tensor *dst; /* owned: the cast, with its ToCopy node */
} cache_entry;

static _Thread_local cache_entry *tl_entries;
static _Thread_local int64_t tl_count, tl_cap;
static _Thread_local bool tl_cache_disabled;

bool cg_set_autocast_cache_enabled(bool enabled) {
    bool prev = !tl_cache_disabled;
    tl_cache_disabled = !enabled;
    return prev;
}
bool cg_is_autocast_cache_enabled(void) { return !tl_cache_disabled; }
int64_t cg_autocast_cache_size(void) { return tl_count; }

void cg_autocast_clear_cache(void) {
    for (int64_t i = 0; i < tl_count; i++) {
        cg_tensor_release(tl_entries[i].src);
        cg_tensor_release(tl_entries[i].dst);
    }
    free(tl_entries);
    tl_entries = NULL;
    tl_count = tl_cap = 0;
}

cg_tensor *cg_autocast_cached_cast(cg_tensor *t, cg_dtype target) {
    bool cacheable = !tl_cache_disabled && t->dtype == CG_DTYPE_F32 && t->requires_grad && !t->grad_fn && !t->base &&
                     cg_is_grad_enabled();
    if (!cacheable) return cg_to_dtype(t, target);
    for (int64_t i = 0; i < tl_count; i++)
        if (tl_entries[i].src == t && tl_entries[i].dst->dtype == target) {
            cg_tensor_retain(tl_entries[i].dst);
            return tl_entries[i].dst;
        }
    cg_tensor *c = cg_to_dtype(t, target);
    if (!c) return NULL;
    if (tl_count == tl_cap) {
        int64_t cap = tl_cap ? 2 * tl_cap : 16;
        cache_entry *e = realloc(tl_entries, (size_t)cap * sizeof *e);
        if (!e) return c; /* no room to remember it: the cast is still right */
        tl_entries = e;
        tl_cap = cap;
    }
    cg_tensor_retain(t);
    cg_tensor_retain(c);
    tl_entries[tl_count++] = (cache_entry){t, c};
    return c;
}
