/* test_half.c — the branch-free float16 / bfloat16 conversions of
 * src/core/half.h (Note [Half conversions]) against straightforward branchy
 * reference definitions: every float16 value to float32, and float32 to
 * float16 over a sweep of every 61st bit pattern (both signs) plus, for every
 * float16 value, the float32 values at and next to the value and to the
 * rounding midpoints above and below it (ties, subnormals, overflow, NaNs);
 * both the element functions and the block ones (F16C where compiled in).
 * CG_HALF_STEP=1 in the environment sweeps all 2^32 float32 inputs. */
#include "test.h"

#include "core/half.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- reference definitions */
static uint32_t ref_f16_to_f32_bits(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    if (exp == 0) {
        if (man == 0) return sign;
        float v = (float)man * 5.9604644775390625e-8f; /* man * 2^-24 */
        return sign | cg_f32_bits(v);
    }
    if (exp == 31) return sign | 0x7f800000u | (man << 13) | (man ? 0x400000u : 0); /* NaN made quiet */
    return sign | ((exp + 112) << 23) | (man << 13);
}

static uint16_t ref_f32_to_f16(uint32_t x) {
    uint32_t sign = (x >> 16) & 0x8000;
    uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00 | ((ax >> 13) & 0x3ff)); /* quiet, top payload */
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00); /* rounds to >= 65520: inf */
    if (ax < 0x38800000u) {                                  /* subnormal or zero */
        uint32_t m = (uint32_t)__builtin_rint((double)cg_bits_f32(ax) * 16777216.0);
        return (uint16_t)(sign | m);
    }
    uint32_t exp = (ax >> 23) - 112, man = ax & 0x7fffff;
    uint32_t h = (exp << 10) | (man >> 13), rem = man & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;
    return (uint16_t)(sign | h);
}

static uint16_t ref_f32_to_bf16(uint32_t x) {
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40);
    uint32_t r = x >> 16, rem = x & 0xffff;
    if (rem > 0x8000 || (rem == 0x8000 && (r & 1))) r++;
    return (uint16_t)r;
}

/* ---------------------------------------------------------------- the conversions in loops
 * (as the kernels run them, so the vectorised code is what is tested) */
static void to_f32_batch(float *restrict y, const cg_f16 *restrict x, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = cg_f16_to_f32(x[i]);
}
static void to_f16_batch(cg_f16 *restrict y, const float *restrict x, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = cg_f32_to_f16(x[i]);
}
/* the block conversions (F16C where compiled for it) must give the same bits */
static void to_f16_blocks(cg_f16 *restrict y, const float *restrict x, int64_t n) {
    for (int64_t i = 0; i < n; i += 253) cg_f32_to_f16_n(y + i, x + i, n - i < 253 ? n - i : 253);
}
static void to_bf16_batch(cg_bf16 *restrict y, const float *restrict x, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = cg_f32_to_bf16(x[i]);
}

#define BATCH 4096

typedef struct {
    uint32_t in[BATCH];
    float f[BATCH];
    cg_f16 h[BATCH];
    cg_bf16 b[BATCH];
    cg_f16 hn[BATCH];
    int n;
    int64_t checked, bad;
} f32_batch;

static void flush(f32_batch *B) {
    memcpy(B->f, B->in, sizeof(float) * (size_t)B->n);
    to_f16_batch(B->h, B->f, B->n);
    to_bf16_batch(B->b, B->f, B->n);
    to_f16_blocks(B->hn, B->f, B->n);
    for (int i = 0; i < B->n; i++) {
        uint16_t want = ref_f32_to_f16(B->in[i]), wantb = ref_f32_to_bf16(B->in[i]);
        if (B->h[i].bits != want || B->b[i].bits != wantb || B->hn[i].bits != want) {
            if (B->bad++ < 5)
                cg_test_fail(__FILE__, __LINE__, "f32 0x%08x -> f16 0x%04x (want 0x%04x), bf16 0x%04x (want 0x%04x)",
                             (unsigned)B->in[i], B->h[i].bits, want, B->b[i].bits, wantb);
        }
    }
    B->checked += B->n;
    B->n = 0;
}

static void push(f32_batch *B, uint32_t x) {
    B->in[B->n++] = x;
    if (B->n == BATCH) flush(B);
}

TEST(half_f16_to_f32_all_values) {
    static cg_f16 h[65536];
    static float y[65536], yn[65536];
    for (uint32_t i = 0; i < 65536; i++) h[i].bits = (uint16_t)i;
    to_f32_batch(y, h, 65536);
    for (int64_t i = 0; i < 65536; i += 253) cg_f16_to_f32_n(yn + i, h + i, 65536 - i < 253 ? 65536 - i : 253);
    int bad = 0;
    for (uint32_t i = 0; i < 65536; i++) {
        uint32_t got = cg_f32_bits(y[i]), want = ref_f16_to_f32_bits((uint16_t)i), blk = cg_f32_bits(yn[i]);
        uint32_t one = cg_f32_bits(cg_f16_to_f32(h[i])); /* the scalar (not vectorised) use too */
        if ((got != want || one != want || blk != want) && bad++ < 5)
            CHECK_MSG(0, "f16 0x%04x -> f32 0x%08x / 0x%08x / 0x%08x (want 0x%08x)", (unsigned)i, (unsigned)got,
                      (unsigned)one, (unsigned)blk, (unsigned)want);
        /* the round trip is exact except that a NaN is made quiet */
        uint16_t back = cg_f32_to_f16(y[i]).bits;
        bool nan = (i & 0x7c00) == 0x7c00 && (i & 0x3ff);
        uint16_t want_back = nan ? (uint16_t)(i | 0x200) : (uint16_t)i;
        if (back != want_back && bad++ < 5) CHECK_MSG(0, "f16 0x%04x round trip gives 0x%04x", (unsigned)i, back);
    }
    CHECK(bad == 0);
}

TEST(half_f32_to_f16_sweep) {
    f32_batch *B = calloc(1, sizeof *B);
    CHECK_NN(B);
    if (!B) return;
    const char *env = getenv("CG_HALF_STEP");
    uint64_t step = env ? strtoull(env, NULL, 10) : 61;
    if (step == 0) step = 61;
    for (uint64_t x = 0; x <= 0xffffffffull; x += step) push(B, (uint32_t)x);
    /* around every float16 value v (both signs): v's float32 image, the
     * midpoints to its neighbours (ties) and the patterns next to them */
    for (uint32_t i = 0; i < 0x7c00; i++) {
        uint32_t v = ref_f16_to_f32_bits((uint16_t)i), up = ref_f16_to_f32_bits((uint16_t)(i + 1));
        uint32_t mid = cg_f32_bits((cg_bits_f32(v) + cg_bits_f32(up)) / 2); /* exact in float32 */
        for (int d = -2; d <= 2; d++)
            for (int neg = 0; neg < 2; neg++) {
                uint32_t s = neg ? 0x80000000u : 0;
                push(B, s | (uint32_t)((int32_t)v + d));
                push(B, s | (uint32_t)((int32_t)mid + d));
            }
    }
    /* infinities, NaNs with assorted payloads, the largest finite floats */
    static const uint32_t edge[] = {0x7f800000u, 0x7f800001u, 0x7fc00000u, 0x7fffffffu, 0x7fa00000u, 0x7f802000u,
                                    0x7f7fffffu, 0x477fefffu, 0x477ff000u, 0x477ff001u, 0x477fe000u, 0x00000001u,
                                    0x33000000u, 0x33000001u, 0x32ffffffu, 0x387fffffu, 0x38800000u};
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++) {
        push(B, edge[i]);
        push(B, edge[i] | 0x80000000u);
    }
    flush(B);
    CHECK(B->bad == 0);
    CHECK(B->checked > 1000000);
    free(B);
}
