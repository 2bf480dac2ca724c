/* copy.c — the CPU's copy runner (Note [Backends]): a plan's elements from
 * args[1] into args[0] within host memory, converted between any two dtypes
 * (PyTorch's casts: floats to integers truncate toward zero and saturate, NaN
 * gives 0; integers narrow keeping the low bits), or moved as bytes when the
 * dtypes agree; and fill, the same copy from one value (a source step of 0). */
#include "cpu_kernels.h"

#include "loops.h"

#include <string.h>

/* ------------------------------------------------------------- cast loops */
static inline int64_t f2i(double v) {
    if (isnan(v)) return 0;
    if (v >= 9.2233720368547758e18) return INT64_MAX;
    if (v <= -9.2233720368547758e18) return INT64_MIN;
    return (int64_t)v;
}
/* loads: to double (float path) and to int64 (integer path) */
#define LDF_b(x) ((double)((x) != 0))
#define LDF_u8(x) ((double)(x))
#define LDF_i8(x) ((double)(x))
#define LDF_i16(x) ((double)(x))
#define LDF_i32(x) ((double)(x))
#define LDF_i64(x) ((double)(x))
#define LDF_f16(x) ((double)cg_f16_to_f32(x))
#define LDF_bf16(x) ((double)cg_bf16_to_f32(x))
#define LDF_f32(x) ((double)(x))
#define LDF_f64(x) (x)
#define LDF_u16(x) ((double)(x))
#define LDF_u32(x) ((double)(x))
#define LDF_u64(x) ((double)(x))
#define LDI_b(x) ((int64_t)((x) != 0))
#define LDI_u8(x) ((int64_t)(x))
#define LDI_i8(x) ((int64_t)(x))
#define LDI_i16(x) ((int64_t)(x))
#define LDI_i32(x) ((int64_t)(x))
#define LDI_i64(x) (x)
#define LDI_f16(x) f2i(cg_f16_to_f32(x))
#define LDI_bf16(x) f2i(cg_bf16_to_f32(x))
#define LDI_f32(x) f2i(x)
#define LDI_f64(x) f2i(x)
#define LDI_u16(x) ((int64_t)(x))
#define LDI_u32(x) ((int64_t)(x))
#define LDI_u64(x) ((int64_t)(x)) /* wraps: the integer stores keep the low bits */
/* stores: each dst picks its path: P = F (through double) or I (through int64) */
#define ST_b(v) ((uint8_t)((v) != 0))
#define ST_u8(v) ((uint8_t)(v))
#define ST_i8(v) ((int8_t)(v))
#define ST_i16(v) ((int16_t)(v))
#define ST_i32(v) ((int32_t)(v))
#define ST_i64(v) ((int64_t)(v))
#define ST_f16(v) cg_f32_to_f16((float)(v))
#define ST_bf16(v) cg_f32_to_bf16((float)(v))
#define ST_f32(v) ((float)(v))
#define ST_f64(v) ((double)(v))
#define ST_u16(v) ((uint16_t)(v))
#define ST_u32(v) ((uint32_t)(v))
#define ST_u64(v) ((uint64_t)(v))
#define PATH_b F
#define PATH_u8 I
#define PATH_i8 I
#define PATH_i16 I
#define PATH_i32 I
#define PATH_i64 I
#define PATH_f16 F
#define PATH_bf16 F
#define PATH_f32 F
#define PATH_f64 F
#define PATH_u16 I
#define PATH_u32 I
#define PATH_u64 I
/* float16 <-> float32 casts of contiguous runs use the block conversions
 * (Note [Half conversions]); the condition is a constant in each cast loop */
#define DTY_b CG_DTYPE_BOOL
#define DTY_u8 CG_DTYPE_U8
#define DTY_i8 CG_DTYPE_I8
#define DTY_i16 CG_DTYPE_I16
#define DTY_i32 CG_DTYPE_I32
#define DTY_i64 CG_DTYPE_I64
#define DTY_f16 CG_DTYPE_F16
#define DTY_bf16 CG_DTYPE_BF16
#define DTY_f32 CG_DTYPE_F32
#define DTY_f64 CG_DTYPE_F64
#define DTY_u16 CG_DTYPE_U16
#define DTY_u32 CG_DTYPE_U32
#define DTY_u64 CG_DTYPE_U64
#define HALF_CAST_FAST(dn, sn, O, I, n)                                                  \
    do {                                                                                 \
        if (DTY_##dn == CG_DTYPE_F16 && DTY_##sn == CG_DTYPE_F32) {                      \
            cg_f32_to_f16_n((cg_f16 *)(void *)(O), (const float *)(const void *)(I), n); \
            return;                                                                      \
        }                                                                                \
        if (DTY_##dn == CG_DTYPE_F32 && DTY_##sn == CG_DTYPE_F16) {                      \
            cg_f16_to_f32_n((float *)(void *)(O), (const cg_f16 *)(const void *)(I), n); \
            return;                                                                      \
        }                                                                                \
    } while (0)
#define CAT3_(a, b, c) a##b##c
#define CAT3(a, b, c) CAT3_(a, b, c)
#define LOADER(dn, sn) CAT3(LD, PATH_##dn, _##sn)

#define CAST_LOOP(dn, DT, sn, ST)                                                              \
    static void cast_##dn##_##sn(char **args, const int64_t *steps, int64_t n, const void *p) { \
        (void)p;                                                                               \
        char *o = args[0];                                                                     \
        const char *i = args[1];                                                               \
        if (steps[0] == (int64_t)sizeof(DT) && steps[1] == (int64_t)sizeof(ST)) {             \
            DT *O = (DT *)o;                                                                   \
            const ST *I = (const ST *)i;                                                       \
            HALF_CAST_FAST(dn, sn, O, I, n);                                                   \
            for (int64_t k = 0; k < n; k++) O[k] = ST_##dn(LOADER(dn, sn)(I[k]));              \
        } else {                                                                               \
            for (int64_t k = 0; k < n; k++)                                                    \
                *(DT *)(o + k * steps[0]) = ST_##dn(LOADER(dn, sn)(*(const ST *)(i + k * steps[1]))); \
        }                                                                                      \
    }

#define CAST_FROM_ALL(dn, DT)                                                           \
    CAST_LOOP(dn, DT, b, uint8_t) CAST_LOOP(dn, DT, u8, uint8_t) CAST_LOOP(dn, DT, i8, int8_t) \
    CAST_LOOP(dn, DT, i16, int16_t) CAST_LOOP(dn, DT, i32, int32_t) CAST_LOOP(dn, DT, i64, int64_t) \
    CAST_LOOP(dn, DT, f16, cg_f16) CAST_LOOP(dn, DT, bf16, cg_bf16) CAST_LOOP(dn, DT, f32, float) \
    CAST_LOOP(dn, DT, f64, double) CAST_LOOP(dn, DT, u16, uint16_t) CAST_LOOP(dn, DT, u32, uint32_t) \
    CAST_LOOP(dn, DT, u64, uint64_t)

CAST_FROM_ALL(b, uint8_t)
CAST_FROM_ALL(u8, uint8_t)
CAST_FROM_ALL(i8, int8_t)
CAST_FROM_ALL(i16, int16_t)
CAST_FROM_ALL(i32, int32_t)
CAST_FROM_ALL(i64, int64_t)
CAST_FROM_ALL(f16, cg_f16)
CAST_FROM_ALL(bf16, cg_bf16)
CAST_FROM_ALL(f32, float)
CAST_FROM_ALL(f64, double)
CAST_FROM_ALL(u16, uint16_t)
CAST_FROM_ALL(u32, uint32_t)
CAST_FROM_ALL(u64, uint64_t)

#define CAST_ROW(dn) \
    {cast_##dn##_b, cast_##dn##_u8, cast_##dn##_i8, cast_##dn##_i16, cast_##dn##_i32, cast_##dn##_i64, \
     cast_##dn##_f16, cast_##dn##_bf16, cast_##dn##_f32, cast_##dn##_f64, cast_##dn##_u16, cast_##dn##_u32, \
     cast_##dn##_u64}

/* k_cast[dst][src] */
static const cg_loop_fn k_cast[CG_DTYPE_COUNT][CG_DTYPE_COUNT] = {
    CAST_ROW(b), CAST_ROW(u8), CAST_ROW(i8), CAST_ROW(i16), CAST_ROW(i32),
    CAST_ROW(i64), CAST_ROW(f16), CAST_ROW(bf16), CAST_ROW(f32), CAST_ROW(f64),
    CAST_ROW(u16), CAST_ROW(u32), CAST_ROW(u64),
};

/* strided copy of n elements of a fixed size: the fixed-size memcpy compiles
 * to one load and one store (a runtime-size memcpy is a call per element);
 * a source step of 0 (fill_ with a scalar) becomes a store loop that vectorises */
#define COPY_FIXED(T)                                                                        \
    do {                                                                                     \
        if (steps[1] == 0 && steps[0] == (int64_t)sizeof(T)) {                              \
            T v;                                                                             \
            memcpy(&v, args[1], sizeof(T));                                                  \
            T *d = (T *)(void *)args[0];                                                     \
            for (int64_t k = 0; k < n; k++) d[k] = v;                                        \
            return;                                                                          \
        }                                                                                    \
        for (int64_t k = 0; k < n; k++) memcpy(args[0] + k * steps[0], args[1] + k * steps[1], sizeof(T)); \
        return;                                                                              \
    } while (0)

static void copy_same(char **args, const int64_t *steps, int64_t n, const void *p) {
    size_t isz = (size_t)(uintptr_t)p;
    if (steps[0] == (int64_t)isz && steps[1] == (int64_t)isz) {
        memmove(args[0], args[1], (size_t)n * isz);
        return;
    }
    switch (isz) {
    case 1: COPY_FIXED(uint8_t);
    case 2: COPY_FIXED(uint16_t);
    case 4: COPY_FIXED(uint32_t);
    case 8: COPY_FIXED(uint64_t);
    default: break;
    }
    for (int64_t k = 0; k < n; k++) memcpy(args[0] + k * steps[0], args[1] + k * steps[1], isz);
}

cg_loop_fn cg_cpu_cast_loop(cg_dtype dst, cg_dtype src) { return k_cast[dst][src]; }

void cg_cpu_copy(const cg_iter *plan, cg_dtype dst, cg_dtype src) {
    if (dst == src)
        cg_iter_run(plan, copy_same, (const void *)(uintptr_t)cg_dtype_size(dst), CG_GRAIN);
    else
        cg_iter_run(plan, k_cast[dst][src], NULL, CG_GRAIN);
}

void cg_cpu_fill(const cg_iter *plan, const void *value, size_t itemsize) {
    cg_iter p = *plan;
    p.nargs = 2;
    p.ptr[1] = (char *)(uintptr_t)value;
    for (int d = 0; d < p.ndim; d++) p.strides[1][d] = 0;
    cg_iter_run(&p, copy_same, (const void *)(uintptr_t)itemsize, CG_GRAIN);
}
