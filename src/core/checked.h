/* checked.h — internal: overflow-checked size arithmetic. Every size, offset,
 * product of sizes and scratch-buffer byte count the engine computes from user
 * input goes through these, so a huge size becomes an error naming the op
 * instead of a wrapped value (Note [Checked sizes]).
 *
 * Note [Checked sizes]: int64 products and sums use the compiler's overflow
 * builtins; a scratch allocation of `count` elements of `size` bytes goes
 * through cg_malloc_n / cg_calloc_n, which refuse a negative count or a byte
 * count that does not fit size_t (CG_ERR_OOM, "[op] ... too large") and never
 * return NULL for a zero count, so callers need no `n ? n : 1` dance. A view's
 * storage extent (lowest and highest element offset it can touch) comes from
 * cg_strided_extent, which fails instead of wrapping. */
#ifndef CG_CHECKED_H
#define CG_CHECKED_H

#include "cgrad.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* a * b and a + b into *out; false (and *out unspecified) on int64 overflow. */
static inline bool cg_mul_ok(int64_t a, int64_t b, int64_t *out) { return !__builtin_mul_overflow(a, b, out); }
static inline bool cg_add_ok(int64_t a, int64_t b, int64_t *out) { return !__builtin_add_overflow(a, b, out); }
static inline bool cg_sub_ok(int64_t a, int64_t b, int64_t *out) { return !__builtin_sub_overflow(a, b, out); }

/* a * b * c into *out; false on overflow at any step. */
static inline bool cg_mul3_ok(int64_t a, int64_t b, int64_t c, int64_t *out) {
    int64_t ab;
    return cg_mul_ok(a, b, &ab) && cg_mul_ok(ab, c, out);
}

/* The element count of a shape of non-negative sizes into *out; false on
 * overflow. A zero size makes the count 0 whatever the other sizes are. */
static inline bool cg_numel_ok(int ndim, const int64_t *shape, int64_t *out) {
    int64_t n = 1;
    bool overflow = false;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] == 0) {
            *out = 0;
            return true;
        }
        if (!overflow && __builtin_mul_overflow(n, shape[i], &n)) overflow = true;
    }
    *out = n;
    return !overflow;
}

/* count * size bytes into *out; false when count < 0 or the product does not
 * fit in both size_t and int64 (so it can also be held as an int64). */
static inline bool cg_bytes_ok(int64_t count, size_t size, size_t *out) {
    size_t b;
    if (count < 0 || __builtin_mul_overflow((size_t)count, size, &b) || b > (size_t)INT64_MAX) return false;
    *out = b;
    return true;
}

/* a * x + b as an element count for cg_malloc_n / cg_calloc_n, or -1 (which
 * they refuse) when it overflows or x < 0. */
static inline int64_t cg_count_axpb(int64_t a, int64_t x, int64_t b) {
    int64_t ax, r;
    return x >= 0 && cg_mul_ok(a, x, &ax) && cg_add_ok(ax, b, &r) ? r : -1;
}

/* Scratch allocation of count elements of size bytes (malloc / calloc): NULL
 * with CG_ERR_OOM naming op when the count is negative, the byte count
 * overflows, or the allocator fails. A zero count still gives a unique
 * pointer (free it as usual). */
static inline void *cg_malloc_n(const char *op, int64_t count, size_t size) {
    size_t b;
    if (!cg_bytes_ok(count, size, &b)) {
        cg_set_error(CG_ERR_OOM, "[%s] scratch buffer of %lld x %zu bytes is too large", op, (long long)count, size);
        return NULL;
    }
    void *p = malloc(b ? b : 1);
    if (!p) cg_set_error(CG_ERR_OOM, "[%s] out of memory (scratch buffer of %zu bytes)", op, b);
    return p;
}
static inline void *cg_calloc_n(const char *op, int64_t count, size_t size) {
    size_t b;
    if (!cg_bytes_ok(count, size, &b)) {
        cg_set_error(CG_ERR_OOM, "[%s] scratch buffer of %lld x %zu bytes is too large", op, (long long)count, size);
        return NULL;
    }
    void *p = count && size ? calloc((size_t)count, size) : malloc(1);
    if (!p) cg_set_error(CG_ERR_OOM, "[%s] out of memory (scratch buffer of %zu bytes)", op, b);
    return p;
}

/* The storage extent of a view (sizes >= 0, any strides, element offset):
 * the lowest and highest element offsets it touches, into *lo / *hi. An empty
 * view touches nothing: lo = offset, hi = offset - 1. false on overflow. */
static inline bool cg_strided_extent(int ndim, const int64_t *shape, const int64_t *strides, int64_t offset,
                                     int64_t *lo, int64_t *hi) {
    int64_t l = offset, h = offset;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] == 0) {
            *lo = offset;
            *hi = offset - 1;
            return true;
        }
    }
    for (int i = 0; i < ndim; i++) {
        int64_t span;
        if (!cg_mul_ok(shape[i] - 1, strides[i], &span)) return false;
        if (span >= 0 ? !cg_add_ok(h, span, &h) : !cg_add_ok(l, span, &l)) return false;
    }
    *lo = l;
    *hi = h;
    return true;
}

#endif
