/* half.h — internal: float16 / bfloat16 storage types and conversions to and
 * from float32 (CPU computes half types in float32, Note [Half compute]). */
#ifndef CG_HALF_H
#define CG_HALF_H

#include <stdint.h>
#include <string.h>

typedef struct { uint16_t bits; } cg_f16;
typedef struct { uint16_t bits; } cg_bf16;

static inline uint32_t cg_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float cg_bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

static inline float cg_f16_to_f32(cg_f16 h) {
    uint32_t sign = (uint32_t)(h.bits & 0x8000) << 16;
    uint32_t exp = (h.bits >> 10) & 0x1f, man = h.bits & 0x3ff;
    if (exp == 0) {
        if (man == 0) return cg_bits_f32(sign);
        /* subnormal: value = man * 2^-24 */
        float v = (float)man * 5.9604644775390625e-8f;
        return sign ? -v : v;
    }
    if (exp == 31) return cg_bits_f32(sign | 0x7f800000u | (man << 13));
    return cg_bits_f32(sign | ((exp + 112) << 23) | (man << 13));
}

static inline cg_f16 cg_f32_to_f16(float f) {
    uint32_t x = cg_f32_bits(f);
    uint32_t sign = (x >> 16) & 0x8000;
    uint32_t ax = x & 0x7fffffffu;
    cg_f16 r;
    if (ax >= 0x7f800000u) { /* inf or nan */
        r.bits = (uint16_t)(sign | 0x7c00 | (ax > 0x7f800000u ? 0x200 : 0));
        return r;
    }
    if (ax >= 0x477ff000u) { /* rounds to >= 65520 -> inf */
        r.bits = (uint16_t)(sign | 0x7c00);
        return r;
    }
    if (ax < 0x38800000u) { /* below smallest normal: subnormal or zero */
        float v = cg_bits_f32(ax) * 16777216.0f; /* scale by 2^24, round to int (RNE) */
        uint32_t m = (uint32_t)__builtin_rintf(v);
        r.bits = (uint16_t)(sign | m);
        return r;
    }
    uint32_t exp = (ax >> 23) - 112, man = ax & 0x7fffff;
    uint32_t h = (exp << 10) | (man >> 13);
    uint32_t rem = man & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;
    r.bits = (uint16_t)(sign | h);
    return r;
}

static inline float cg_bf16_to_f32(cg_bf16 h) { return cg_bits_f32((uint32_t)h.bits << 16); }

static inline cg_bf16 cg_f32_to_bf16(float f) {
    uint32_t x = cg_f32_bits(f);
    cg_bf16 r;
    if ((x & 0x7fffffffu) > 0x7f800000u) { r.bits = (uint16_t)((x >> 16) | 0x40); return r; }
    x += 0x7fffu + ((x >> 16) & 1);
    r.bits = (uint16_t)(x >> 16);
    return r;
}

#endif
