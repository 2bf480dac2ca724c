/* rng.c — the global counter-based generator (Philox4x32-10). An op draws a
 * block of counters up front; element i uses counter base + i, so results
 * depend on (seed, offset) only, never on the thread count. */
#include "core_internal.h"

#include <math.h>
#include <pthread.h>

static pthread_mutex_t g_rng_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_seed = 67280421310721ull;
static uint64_t g_offset = 0;

void cg_manual_seed(uint64_t seed) { cg_rng_set_state(seed, 0); }
uint64_t cg_initial_seed(void) {
    uint64_t s, o;
    cg_rng_get_state(&s, &o);
    return s;
}

void cg_rng_get_state(uint64_t *seed, uint64_t *offset) {
    pthread_mutex_lock(&g_rng_lock);
    *seed = g_seed;
    *offset = g_offset;
    pthread_mutex_unlock(&g_rng_lock);
}

void cg_rng_set_state(uint64_t seed, uint64_t offset) {
    pthread_mutex_lock(&g_rng_lock);
    g_seed = seed;
    g_offset = offset;
    pthread_mutex_unlock(&g_rng_lock);
}

void cg_rng_reserve(uint64_t count, uint64_t *seed, uint64_t *offset) {
    pthread_mutex_lock(&g_rng_lock);
    *seed = g_seed;
    *offset = g_offset;
    g_offset += count;
    pthread_mutex_unlock(&g_rng_lock);
}

/* Philox4x32 with 10 rounds (Salmon et al., SC'11). */
void cg_philox(uint64_t seed, uint64_t counter, uint32_t out[4]) {
    uint32_t c0 = (uint32_t)counter, c1 = (uint32_t)(counter >> 32), c2 = 0, c3 = 0;
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n1 = (uint32_t)p1;
        uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1, n3 = (uint32_t)p0;
        c0 = n0, c1 = n1, c2 = n2, c3 = n3;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

/* Note [Philox streams]: an op that reserved counters from `base` reads them
 * as a stream indexed by element: element i uses the block of counter
 * base + i/2, words (0,1) for even i and (2,3) for odd i, so n elements use
 * cg_rng_counters(n) = ceil(n/2) counters and element i's value depends only
 * on (seed, base, i), never on how a range is split across threads. Normals
 * pair up the same way: the block of counter base + i/2 gives two normals by
 * Box-Muller (u1 from words 0,1; u2 from words 2,3), cos for even i, sin for
 * odd i. */
static inline uint64_t word64(const uint32_t w[4], int h) { return ((uint64_t)w[2 * h] << 32) | w[2 * h + 1]; }

void cg_rng_fill_u64(uint64_t seed, uint64_t base, int64_t begin, int64_t end, uint64_t *out) {
    uint32_t w[4];
    for (int64_t i = begin; i < end;) {
        cg_philox(seed, base + (uint64_t)(i >> 1), w);
        int h = (int)(i & 1);
        out[i - begin] = word64(w, h);
        i++;
        if (h == 0 && i < end) out[i++ - begin] = word64(w, 1);
    }
}

void cg_rng_fill_uniform(uint64_t seed, uint64_t base, int64_t begin, int64_t end, int digits, double *out) {
    CG_ASSERT(digits >= 1 && digits <= 53);
    const double scale = ldexp(1.0, -digits);
    const int shift = 64 - digits;
    uint32_t w[4];
    for (int64_t i = begin; i < end;) {
        cg_philox(seed, base + (uint64_t)(i >> 1), w);
        int h = (int)(i & 1);
        out[i - begin] = (double)(word64(w, h) >> shift) * scale;
        i++;
        if (h == 0 && i < end) out[i++ - begin] = (double)(word64(w, 1) >> shift) * scale;
    }
}

void cg_rng_fill_normal(uint64_t seed, uint64_t base, int64_t begin, int64_t end, double *out) {
    const double two_pi = 6.283185307179586476925286766559;
    uint32_t w[4];
    for (int64_t i = begin; i < end;) {
        cg_philox(seed, base + (uint64_t)(i >> 1), w);
        double u1 = (double)(word64(w, 0) >> 11) * 0x1p-53, u2 = (double)(word64(w, 1) >> 11) * 0x1p-53;
        double r = sqrt(-2.0 * log1p(-u1)); /* 1 - u1 in (0, 1]: the log is finite */
        double th = two_pi * u2;
        if (i & 1) {
            out[i++ - begin] = r * sin(th);
            continue;
        }
        out[i++ - begin] = r * cos(th);
        if (i < end) out[i++ - begin] = r * sin(th);
    }
}
