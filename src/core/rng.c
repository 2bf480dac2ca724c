/* rng.c — the global counter-based generator (Philox4x32-10). An op draws a
 * block of counters up front; element i uses counter base + i, so results
 * depend on (seed, offset) only, never on the thread count. */
#include "core_internal.h"

#include <math.h>
#include <pthread.h>
#if defined(__AVX2__)
#include <immintrin.h>
#endif
#include <string.h>

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

/* cg_philox for PHILOX_LANES consecutive counters at once: word k of counter
 * counter + j in w[k][j]. The same rounds as cg_philox; with AVX2 each
 * 32x32 -> 64-bit product is one vector multiply on 64-bit lanes (a
 * compiler left to itself emits shuffles or shift-add chains here). */
#define PHILOX_LANES 16
static void philox_lanes(uint64_t seed, uint64_t counter, uint32_t w[4][PHILOX_LANES]) {
#if defined(__AVX2__)
    enum { V = PHILOX_LANES / 4 };
    const __m256i m0 = _mm256_set1_epi64x(0xD2511F53u), m1 = _mm256_set1_epi64x(0xCD9E8D57u);
    const __m256i lo32 = _mm256_set1_epi64x(0xFFFFFFFFu);
    __m256i c0[V], c1[V], c2[V], c3[V];
    for (int v = 0; v < V; v++) {
        __m256i c = _mm256_add_epi64(_mm256_set1_epi64x((long long)counter), _mm256_setr_epi64x(4 * v, 4 * v + 1, 4 * v + 2, 4 * v + 3));
        c0[v] = _mm256_and_si256(c, lo32), c1[v] = _mm256_srli_epi64(c, 32);
        c2[v] = c3[v] = _mm256_setzero_si256();
    }
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int r = 0; r < 10; r++) {
        const __m256i kk0 = _mm256_set1_epi64x(k0), kk1 = _mm256_set1_epi64x(k1);
        for (int v = 0; v < V; v++) {
            __m256i p0 = _mm256_mul_epu32(c0[v], m0), p1 = _mm256_mul_epu32(c2[v], m1);
            c0[v] = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p1, 32), c1[v]), kk0);
            c2[v] = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p0, 32), c3[v]), kk1);
            c1[v] = _mm256_and_si256(p1, lo32);
            c3[v] = _mm256_and_si256(p0, lo32);
        }
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    uint64_t t[4][PHILOX_LANES];
    for (int v = 0; v < V; v++) {
        _mm256_storeu_si256((__m256i *)&t[0][4 * v], c0[v]);
        _mm256_storeu_si256((__m256i *)&t[1][4 * v], c1[v]);
        _mm256_storeu_si256((__m256i *)&t[2][4 * v], c2[v]);
        _mm256_storeu_si256((__m256i *)&t[3][4 * v], c3[v]);
    }
    for (int k = 0; k < 4; k++)
        for (int j = 0; j < PHILOX_LANES; j++) w[k][j] = (uint32_t)t[k][j];
#else
    uint32_t b[4];
    for (int j = 0; j < PHILOX_LANES; j++) {
        cg_philox(seed, counter + (uint64_t)j, b);
        w[0][j] = b[0], w[1][j] = b[1], w[2][j] = b[2], w[3][j] = b[3];
    }
#endif
}

/* (double)v for v < 2^53, exactly, from two 32-bit halves (2^52 + x has x in
 * its low mantissa bits): integer and float operations that vectorise */
static inline double u53_to_double(uint64_t v) {
    uint64_t bl = 0x4330000000000000ull | (v & 0xFFFFFFFFu), bh = 0x4330000000000000ull | (v >> 32);
    double dl, dh;
    memcpy(&dl, &bl, sizeof dl);
    memcpy(&dh, &bh, sizeof dh);
    return (dh - 0x1p52) * 0x1p32 + (dl - 0x1p52);
}

/* Element i takes word pair i & 1 of counter base + i/2 (Note [Philox streams]);
 * the counters are generated PHILOX_LANES at a time. */
void cg_rng_fill_uniform(uint64_t seed, uint64_t base, int64_t begin, int64_t end, int digits, double *out) {
    CG_ASSERT(digits >= 1 && digits <= 53);
    const double scale = ldexp(1.0, -digits);
    const int shift = 64 - digits;
    uint32_t w[4][PHILOX_LANES];
    double v[2][PHILOX_LANES];
    for (int64_t c = begin >> 1; 2 * c < end; c += PHILOX_LANES) { /* c: the batch's first counter index */
        philox_lanes(seed, base + (uint64_t)c, w);
        for (int j = 0; j < PHILOX_LANES; j++) {
            v[0][j] = u53_to_double((((uint64_t)w[0][j] << 32) | w[1][j]) >> shift) * scale;
            v[1][j] = u53_to_double((((uint64_t)w[2][j] << 32) | w[3][j]) >> shift) * scale;
        }
        int64_t first = 2 * c;
        if (first >= begin && first + 2 * PHILOX_LANES <= end) {
            double *o = out + (first - begin);
            for (int j = 0; j < PHILOX_LANES; j++) o[2 * j] = v[0][j], o[2 * j + 1] = v[1][j];
            continue;
        }
        for (int j = 0; j < 2 * PHILOX_LANES; j++)
            if (first + j >= begin && first + j < end) out[first + j - begin] = v[j & 1][j >> 1];
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
