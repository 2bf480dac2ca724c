/* half.h — internal: float16 / bfloat16 storage types and conversions to and
 * from float32 (CPU computes half types in float32, Note [Half compute]). */
#ifndef CG_HALF_H
#define CG_HALF_H

#include <stdint.h>
#include <string.h>

#if defined(__F16C__) && defined(__AVX__)
#include <immintrin.h>
#endif

typedef struct { uint16_t bits; } cg_f16;
typedef struct { uint16_t bits; } cg_bf16;

static inline uint32_t cg_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float cg_bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

/* Note [Half conversions]: the float16 <-> float32 conversions are
 * branch-free: every case (normal, subnormal, zero, inf, NaN, overflow) is
 * computed with integer shifts / adds and one float operation, and the right
 * one is picked with selects, so a loop that converts each element compiles
 * to vector code (a branchy version kept every float16 loop scalar: 20-50x
 * slower than bfloat16). The results are those of the x86 F16C instructions
 * (which PyTorch's vectorised conversions use): float16 -> float32 exact, a
 * NaN made quiet with its sign and payload kept; float32 -> float16 rounded
 * to nearest even, overflow to inf, a NaN made quiet keeping its sign and the
 * top 10 payload bits.
 * tests/c/test_half.c checks both against the straightforward branchy
 * definitions over every float16 and a dense sweep of float32. */
#if defined(__GNUC__)
#define CG_HALF_INLINE static inline __attribute__((always_inline))
#else
#define CG_HALF_INLINE static inline
#endif

/* all ones when c holds, else 0: selects written as masks, which the
 * vectoriser always accepts (a ?: chain can be left as a branch) */
CG_HALF_INLINE uint32_t cg_half_mask(int c) { return (uint32_t)0 - (uint32_t)c; }
CG_HALF_INLINE uint32_t cg_half_sel(uint32_t m, uint32_t a, uint32_t b) { return (a & m) | (b & ~m); }

CG_HALF_INLINE float cg_f16_to_f32(cg_f16 h) {
    const uint32_t b = h.bits;
    const uint32_t sign = (b & 0x8000u) << 16, ab = b & 0x7fffu, em = ab << 13;
    /* subnormal or zero: man * 2^-24, exact in float */
    const uint32_t sub = cg_f32_bits((float)(int32_t)(b & 0x3ffu) * 5.9604644775390625e-8f);
    const uint32_t normal = em + (112u << 23); /* rebias the exponent 15 -> 127 */
    /* inf / NaN: exponent all ones, a NaN made quiet */
    const uint32_t special = em | 0x7f800000u | (cg_half_mask(ab > 0x7c00u) & 0x400000u);
    uint32_t r = cg_half_sel(cg_half_mask(ab < 0x400u), sub, normal);
    r = cg_half_sel(cg_half_mask(ab >= 0x7c00u), special, r);
    return cg_bits_f32(sign | r);
}

CG_HALF_INLINE cg_f16 cg_f32_to_f16(float f) {
    const uint32_t x = cg_f32_bits(f);
    const uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
    /* normal range: rebias, round the 13 dropped bits to nearest even with an
     * add whose carry may step the exponent (up to inf), clamp at inf */
    const uint32_t t = ax - (112u << 23);
    uint32_t normal = (t + 0xfffu + ((t >> 13) & 1u)) >> 13;
    normal = cg_half_sel(cg_half_mask((int32_t)normal > 0x7c00), 0x7c00u, normal);
    /* below 2^-14: adding 0.5f rounds |f| to a multiple of 2^-24 (nearest
     * even); the low bits of the sum are then the float16 mantissa */
    const uint32_t sub = cg_f32_bits(cg_bits_f32(ax) + 0.5f) - 0x3f000000u;
    /* NaN: quiet, the top 10 payload bits kept */
    const uint32_t nan = 0x7e00u | ((ax >> 13) & 0x3ffu);
    uint32_t r = cg_half_sel(cg_half_mask((int32_t)ax < 0x38800000), sub, normal);
    r = cg_half_sel(cg_half_mask((int32_t)ax > 0x7f800000), nan, r);
    cg_f16 o;
    o.bits = (uint16_t)(sign | r);
    return o;
}

/* n float16 to float32 and back, as a block: the x86 F16C instructions where
 * the compiler targets them (8 per instruction, the same results), else the
 * branch-free functions above in a loop the compiler vectorises. The float16
 * loops (Note [Half compute]) convert blocks of a few hundred elements with
 * these: the generic-x86 conversions cost ~40 vector instructions per 8
 * elements, the F16C ones 1. */
CG_HALF_INLINE void cg_f16_to_f32_n(float *restrict y, const cg_f16 *restrict x, int64_t n) {
    int64_t i = 0;
#if defined(__F16C__) && defined(__AVX__)
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + i))));
#endif
    for (; i < n; i++) y[i] = cg_f16_to_f32(x[i]);
}

CG_HALF_INLINE void cg_f32_to_f16_n(cg_f16 *restrict y, const float *restrict x, int64_t n) {
    int64_t i = 0;
#if defined(__F16C__) && defined(__AVX__)
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(y + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
#endif
    for (; i < n; i++) y[i] = cg_f32_to_f16(x[i]);
}

CG_HALF_INLINE float cg_bf16_to_f32(cg_bf16 h) { return cg_bits_f32((uint32_t)h.bits << 16); }

/* round to nearest even; a NaN made quiet (sign and top payload bits kept) */
CG_HALF_INLINE cg_bf16 cg_f32_to_bf16(float f) {
    const uint32_t x = cg_f32_bits(f);
    const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16, nan = (x >> 16) | 0x40u;
    cg_bf16 r;
    r.bits = (uint16_t)cg_half_sel(cg_half_mask((int32_t)(x & 0x7fffffffu) > 0x7f800000), nan, rounded);
    return r;
}

#endif
