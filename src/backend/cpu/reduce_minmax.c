/* reduce_minmax.c — the CPU loops of the value-selecting reductions (amax /
 * amin, max / min with or without indices, argmax / argmin: kinds MAX and
 * MIN). NaN propagates as the extreme value; ties pick the first occurrence.
 * The descriptors and backward formulas are in src/ops/reduce_minmax.c. */
#include "reduce_loops.h"

#include <string.h>

/* A value-selecting loop: keeps the first element x for which BETTER(x, best)
 * held last; writes the element itself (bit-exact, any dtype) to out and its
 * position in the run (int64) to out2 when indices are requested.
 * in: n elements at byte stride s; out: one T; out2: one int64 or NULL. */
#define MM_LOOP(fname, T, CT, LOAD, BETTER)                                                           \
    static void fname(char *out, char *out2, const char *in, int64_t n, int64_t s, const double *p) { \
        (void)p;                                                                                      \
        if (n <= 0) return;                                                                           \
        const T *bp = (const T *)in;                                                                  \
        CT best = (CT)LOAD(*bp);                                                                      \
        int64_t bi = 0;                                                                               \
        for (int64_t k = 1; k < n; k++) {                                                             \
            const T *xp = (const T *)(in + k * s);                                                    \
            CT x = (CT)LOAD(*xp);                                                                     \
            if (BETTER(x, best)) {                                                                    \
                best = x;                                                                             \
                bp = xp;                                                                              \
                bi = k;                                                                               \
            }                                                                                         \
        }                                                                                             \
        *(T *)out = *bp;                                                                              \
        if (out2) *(int64_t *)out2 = bi;                                                              \
    }

/* floats: once the best is NaN it stays; a NaN beats any number */
#define FMAX_BETTER(x, b) (!isnan(b) && ((x) > (b) || isnan(x)))
#define FMIN_BETTER(x, b) (!isnan(b) && ((x) < (b) || isnan(x)))
#define IMAX_BETTER(x, b) ((x) > (b))
#define IMIN_BETTER(x, b) ((x) < (b))

/* float32 / float64 without indices on a contiguous run: the extreme value in
 * sixteen vector lanes, NaN noted on the side. The element the serial rule
 * picks is then that value unless the run holds a NaN (the first NaN) or the
 * value is a zero (the first zero: -0 and +0 compare equal); those rare cases
 * scan once more. CMP is > for max, < for min. */
#define MM_FLOAT_LOOP(fname, T, FB, CMP)                                                              \
    MM_LOOP(fname##_serial, T, T, CG_ID, FB)                                                          \
    static void fname(char *out, char *out2, const char *in, int64_t n, int64_t s, const double *p) { \
        if (out2 || s != (int64_t)sizeof(T) || n < 64) {                                              \
            fname##_serial(out, out2, in, n, s, p);                                                   \
            return;                                                                                   \
        }                                                                                             \
        const T *x = (const T *)in;                                                                   \
        T b[32];                                                                                      \
        int nan[32];                                                                                  \
        for (int j = 0; j < 32; j++) b[j] = x[j], nan[j] = x[j] != x[j];                              \
        int64_t k = 32;                                                                               \
        for (; k + 32 <= n; k += 32)                                                                  \
            for (int j = 0; j < 32; j++) {                                                            \
                const T v = x[k + j];                                                                 \
                b[j] = v CMP b[j] ? v : b[j];                                                         \
                nan[j] |= v != v;                                                                     \
            }                                                                                         \
        for (int w = 16; w >= 1; w /= 2) /* halving tree (equal values are equal bits here) */        \
            for (int j = 0; j < w; j++) b[j] = b[j + w] CMP b[j] ? b[j + w] : b[j], nan[j] |= nan[j + w]; \
        T best = b[0];                                                                                \
        int any_nan = nan[0];                                                                         \
        for (; k < n; k++) best = x[k] CMP best ? x[k] : best, any_nan |= x[k] != x[k];               \
        if (any_nan || best == 0) {                                                                   \
            for (k = 0; k < n; k++)                                                                   \
                if (any_nan ? x[k] != x[k] : x[k] == 0) break;                                        \
            best = x[k];                                                                              \
        }                                                                                             \
        *(T *)out = best;                                                                             \
    }
/* float16 / bfloat16 without indices on a contiguous run: the float32 scheme
 * above on blocks converted to float (LDN; Note [Half compute]). A half value
 * converts to float and back exactly, so the result is the element's bits
 * except for NaN and zero, which the rescan takes from the input. */
#define MM_HALF_LOOP(fname, T, LD, ST, LDN, FB, CMP)                                                  \
    MM_LOOP(fname##_serial, T, float, LD, FB)                                                         \
    static void fname(char *out, char *out2, const char *in, int64_t n, int64_t s, const double *p) { \
        if (out2 || s != (int64_t)sizeof(T) || n < 64) {                                              \
            fname##_serial(out, out2, in, n, s, p);                                                   \
            return;                                                                                   \
        }                                                                                             \
        const T *x = (const T *)in;                                                                   \
        float xb[CG_HALF_BLOCK], b[32];                                                               \
        int nan[32];                                                                                  \
        for (int j = 0; j < 32; j++) b[j] = LD(x[0]), nan[j] = 0;                                     \
        for (int64_t k0 = 0; k0 < n; k0 += CG_HALF_BLOCK) {                                           \
            const int64_t w = n - k0 < CG_HALF_BLOCK ? n - k0 : CG_HALF_BLOCK;                        \
            LDN(xb, x + k0, w);                                                                       \
            int64_t k = 0;                                                                            \
            for (; k + 32 <= w; k += 32)                                                              \
                for (int j = 0; j < 32; j++) {                                                        \
                    const float v = xb[k + j];                                                        \
                    b[j] = v CMP b[j] ? v : b[j];                                                     \
                    nan[j] |= v != v;                                                                 \
                }                                                                                     \
            for (; k < w; k++) b[0] = xb[k] CMP b[0] ? xb[k] : b[0], nan[0] |= xb[k] != xb[k];       \
        }                                                                                             \
        for (int w = 16; w >= 1; w /= 2)                                                              \
            for (int j = 0; j < w; j++) b[j] = b[j + w] CMP b[j] ? b[j + w] : b[j], nan[j] |= nan[j + w]; \
        const float best = b[0];                                                                      \
        int64_t k = 0;                                                                                \
        if (nan[0] || best == 0) {                                                                    \
            for (; k < n; k++) {                                                                      \
                const float v = LD(x[k]);                                                             \
                if (nan[0] ? v != v : v == 0) break;                                                  \
            }                                                                                         \
            *(T *)out = x[k];                                                                         \
            return;                                                                                   \
        }                                                                                             \
        *(T *)out = ST(best);                                                                         \
    }
static inline void mm_bf16_to_f32_n(float *restrict y, const cg_bf16 *restrict x, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = cg_bf16_to_f32(x[i]);
}
#define MM_LOOPS(name, FB, IB, CMP)                                                      \
    MM_FLOAT_LOOP(name##_f32, float, FB, CMP)                                            \
    MM_FLOAT_LOOP(name##_f64, double, FB, CMP)                                           \
    MM_HALF_LOOP(name##_f16, cg_f16, CG_LD_F16, CG_ST_F16, cg_f16_to_f32_n, FB, CMP)     \
    MM_HALF_LOOP(name##_bf16, cg_bf16, CG_LD_BF16, CG_ST_BF16, mm_bf16_to_f32_n, FB, CMP)\
    MM_LOOP(name##_b, uint8_t, int, CG_LD_BOOL, IB)                                      \
    MM_LOOP(name##_u8, uint8_t, uint8_t, CG_ID, IB)                                      \
    MM_LOOP(name##_i8, int8_t, int8_t, CG_ID, IB)                                        \
    MM_LOOP(name##_i16, int16_t, int16_t, CG_ID, IB)                                     \
    MM_LOOP(name##_i32, int32_t, int32_t, CG_ID, IB)                                     \
    MM_LOOP(name##_i64, int64_t, int64_t, CG_ID, IB)
MM_LOOPS(max, FMAX_BETTER, IMAX_BETTER, >)
MM_LOOPS(min, FMIN_BETTER, IMIN_BETTER, <)

/* The column form (Note [Column reductions]) of the value-only ops: per column
 * the same first-best rule, row by row; rows >= 1 (empty is an error). */
#define MM_COLS_LOOP(fname, T, LOAD, BETTER)                                                           \
    static void fname(char *out, const char *in, int64_t rows, int64_t rs, int64_t m, const double *p) { \
        (void)p;                                                                                        \
        T bv[CG_RD_COLS_BLOCK];                                                                         \
        for (int64_t j0 = 0; j0 < m; j0 += CG_RD_COLS_BLOCK) {                                          \
            const int64_t w = m - j0 < CG_RD_COLS_BLOCK ? m - j0 : CG_RD_COLS_BLOCK;                    \
            memcpy(bv, (const T *)in + j0, (size_t)w * sizeof(T));                                      \
            for (int64_t i = 1; i < rows; i++) {                                                        \
                const T *xr = (const T *)(in + i * rs) + j0;                                            \
                for (int64_t j = 0; j < w; j++) {                                                       \
                    const T x = xr[j], b = bv[j];                                                       \
                    bv[j] = BETTER(LOAD(x), LOAD(b)) ? x : b;                                           \
                }                                                                                       \
            }                                                                                           \
            memcpy((T *)out + j0, bv, (size_t)w * sizeof(T));                                           \
        }                                                                                               \
    }
#define MM_COLS_LOOPS(name, FB, IB)                          \
    MM_COLS_LOOP(name##_f32, float, CG_ID, FB)               \
    MM_COLS_LOOP(name##_f64, double, CG_ID, FB)              \
    MM_COLS_LOOP(name##_f16, cg_f16, CG_LD_F16, FB)          \
    MM_COLS_LOOP(name##_bf16, cg_bf16, CG_LD_BF16, FB)       \
    MM_COLS_LOOP(name##_b, uint8_t, CG_LD_BOOL, IB)          \
    MM_COLS_LOOP(name##_u8, uint8_t, CG_ID, IB)              \
    MM_COLS_LOOP(name##_i8, int8_t, CG_ID, IB)               \
    MM_COLS_LOOP(name##_i16, int16_t, CG_ID, IB)             \
    MM_COLS_LOOP(name##_i32, int32_t, CG_ID, IB)             \
    MM_COLS_LOOP(name##_i64, int64_t, CG_ID, IB)
MM_COLS_LOOPS(max_cols, FMAX_BETTER, IMAX_BETTER)
MM_COLS_LOOPS(min_cols, FMIN_BETTER, IMIN_BETTER)

const cg_cpu_reduce_loops cg_cpu_reduce_max = {
    .loop = {CG_ALL_TABLE(max)},
    .cols = {CG_ALL_TABLE(max_cols)},
};
const cg_cpu_reduce_loops cg_cpu_reduce_min = {
    .loop = {CG_ALL_TABLE(min)},
    .cols = {CG_ALL_TABLE(min_cols)},
};
