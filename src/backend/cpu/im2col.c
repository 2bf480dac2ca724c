/* im2col.c — the column transforms of the CPU convolution (Note [Conv
 * geometry]): im2col gathers every kernel tap of one sample into a row of a
 * (cin*kvol, L) matrix so the conv is one GEMM per group; col2im is its
 * adjoint (scatter-add back into the sample). 1-D, 2-D and 3-D (vol2col)
 * share the canonical 3-D loop; the innermost dim is a range copy. A half
 * x is converted to float32 columns on the way (Note [Half conv]). */
#include "conv_internal.h"

#include "../../core/half.h"

#include <string.h>

/* Output positions o in [0, n_out) whose input o*s + base lies in [0, n_in):
 * a contiguous range [*lo, *hi). */
static void valid_range(int64_t n_out, int64_t n_in, int64_t s, int64_t base, int64_t *lo, int64_t *hi) {
    /* ceil(a / s) as a / s + (a % s != 0): a + s - 1 overflows for a huge stride */
    int64_t l = base >= 0 ? 0 : -base / s + (-base % s != 0);
    int64_t h = n_in - base <= 0 ? 0 : (n_in - base) / s + ((n_in - base) % s != 0);
    if (h > n_out) h = n_out;
    if (l > h) l = h;
    *lo = l;
    *hi = h;
}

/* The loop nest shared by both transforms: for every row (c, j0, j1, j2) of
 * col (row stride ld) and output (o0, o1) row, BODY runs with `crow` the col
 * row segment (out2 entries), `xrow` the input row (in2 entries) or NULL when (o0, o1) reads
 * padding, and [lo, hi) the valid o2 range reading xrow[o2*s2 + base2]. */
#define CONV_COL_LOOP(T, XPTR, CPTR, BODY) CONV_COL_LOOP2(T, T, XPTR, CPTR, BODY)
/* the same with columns of type T and input of type TX */
#define CONV_COL_LOOP2(T, TX, XPTR, CPTR, BODY)                                                          \
    do {                                                                                                 \
        const int64_t *K = g->k, *I = g->in, *O = g->out, *S = g->stride, *P = g->pad, *D = g->dil;    \
        int64_t plane = cg_conv_vol(I);                                                                  \
        for (int64_t c = c0; c < c1; c++)                                                                \
            for (int64_t j0 = 0; j0 < K[0]; j0++)                                                        \
                for (int64_t j1 = 0; j1 < K[1]; j1++)                                                    \
                    for (int64_t j2 = 0; j2 < K[2]; j2++) {                                              \
                        int64_t row = ((c * K[0] + j0) * K[1] + j1) * K[2] + j2;                         \
                        int64_t base2 = j2 * D[2] - P[2], lo, hi;                                        \
                        valid_range(O[2], I[2], S[2], base2, &lo, &hi);                                  \
                        for (int64_t o0 = 0; o0 < O[0]; o0++) {                                          \
                            int64_t i0 = o0 * S[0] - P[0] + j0 * D[0];                                   \
                            for (int64_t o1 = 0; o1 < O[1]; o1++) {                                      \
                                int64_t i1 = o1 * S[1] - P[1] + j1 * D[1];                               \
                                T *crow = (T *)(CPTR) + row * ld + (o0 * O[1] + o1) * O[2];              \
                                TX *xrow = (i0 < 0 || i0 >= I[0] || i1 < 0 || i1 >= I[1])                \
                                               ? NULL                                                    \
                                               : (TX *)(XPTR) + c * plane + (i0 * I[1] + i1) * I[2];    \
                                BODY                                                                     \
                            }                                                                            \
                        }                                                                                \
                    }                                                                                    \
    } while (0)

#define IM2COL(name, T)                                                                        \
    static void name(const cg_conv_geom *g, int64_t c0, int64_t c1, const T *x, T *col, int64_t ld) { \
        int64_t s2 = g->stride[2];                                                             \
        CONV_COL_LOOP(T, x, col, {                                                             \
            if (!xrow) {                                                                       \
                memset(crow, 0, sizeof(T) * (size_t)O[2]);                                     \
                continue;                                                                      \
            }                                                                                  \
            for (int64_t o = 0; o < lo; o++) crow[o] = 0;                                      \
            if (s2 == 1) {                                                                     \
                if (hi > lo) memcpy(crow + lo, xrow + lo + base2, sizeof(T) * (size_t)(hi - lo)); \
            } else {                                                                           \
                for (int64_t o = lo; o < hi; o++) crow[o] = xrow[o * s2 + base2];              \
            }                                                                                  \
            for (int64_t o = hi; o < O[2]; o++) crow[o] = 0;                                   \
        });                                                                                    \
    }
IM2COL(im2col_f32, float)
IM2COL(im2col_f64, double)

/* im2col of a half x into float32 columns (Note [Half conv]): the generic
 * loop, each valid range converted on the way. */
#define IM2COL_HALF(name, TX, CVT)                                                             \
    static void name(const cg_conv_geom *g, int64_t c0, int64_t c1, const TX *x, float *col, int64_t ld) { \
        int64_t s2 = g->stride[2];                                                             \
        CONV_COL_LOOP2(float, const TX, x, col, {                                              \
            if (!xrow) {                                                                       \
                memset(crow, 0, sizeof(float) * (size_t)O[2]);                                 \
                continue;                                                                      \
            }                                                                                  \
            for (int64_t o = 0; o < lo; o++) crow[o] = 0;                                      \
            if (s2 == 1) {                                                                     \
                const TX *xp = xrow + base2;                                                   \
                for (int64_t o = lo; o < hi; o++) crow[o] = CVT(xp[o]);                        \
            } else {                                                                           \
                for (int64_t o = lo; o < hi; o++) crow[o] = CVT(xrow[o * s2 + base2]);         \
            }                                                                                  \
            for (int64_t o = hi; o < O[2]; o++) crow[o] = 0;                                   \
        });                                                                                    \
    }
IM2COL_HALF(im2col_bf16, cg_bf16, cg_bf16_to_f32)
IM2COL_HALF(im2col_f16, cg_f16, cg_f16_to_f32)

/* Note [Row-block im2col]: when the rows of the output are as wide as the
 * input's (stride 1 along the last two dims, out2 == in2: a 'same'-padded
 * conv), the valid output rows of one (channel, tap, o0) read consecutive
 * input rows shifted by a constant, so they are one block copy; the
 * entries that read padding (the first / last few of each row, which the
 * block copy filled from the neighbouring row) are zeroed afterwards. */
static bool row_block_ok(const cg_conv_geom *g) {
    return g->stride[1] == 1 && g->stride[2] == 1 && g->out[2] == g->in[2];
}
/* The loop nest of the row-block transforms: for every (channel, tap, o0)
 * slab `cs` of col (O1 x W entries) whose input slab `xs` (row i0 of
 * channel c) exists, BODY runs with the valid output rows [a, b), the valid
 * entries [lo, hi) of each row, and the block cs[d] <-> xs[d + delta],
 * d in [d0, d1) (clipped to the input slab); PAD runs for the other slabs. */
#define ROW_BLOCK_LOOP(T, XPTR, CPTR, PAD, BODY) ROW_BLOCK_LOOP2(T, T, XPTR, CPTR, PAD, BODY)
/* the same with columns of type T and input of type TX */
#define ROW_BLOCK_LOOP2(T, TX, XPTR, CPTR, PAD, BODY)                                          \
    do {                                                                                       \
        const int64_t *K = g->k, *I = g->in, *O = g->out, *S = g->stride, *P = g->pad, *D = g->dil; \
        const int64_t W = O[2], slab = O[1] * W, plane = cg_conv_vol(I);                       \
        for (int64_t c = c0; c < c1; c++)                                                      \
            for (int64_t j0 = 0; j0 < K[0]; j0++)                                              \
                for (int64_t j1 = 0; j1 < K[1]; j1++)                                          \
                    for (int64_t j2 = 0; j2 < K[2]; j2++) {                                    \
                        int64_t row = ((c * K[0] + j0) * K[1] + j1) * K[2] + j2;               \
                        int64_t base1 = j1 * D[1] - P[1], base2 = j2 * D[2] - P[2], a, b, lo, hi; \
                        valid_range(O[1], I[1], 1, base1, &a, &b);                             \
                        valid_range(W, I[2], 1, base2, &lo, &hi);                              \
                        const int64_t delta = base1 * W + base2;                               \
                        const int64_t d0 = a * W > -delta ? a * W : -delta;                    \
                        const int64_t d1 = b * W < I[1] * W - delta ? b * W : I[1] * W - delta; \
                        for (int64_t o0 = 0; o0 < O[0]; o0++) {                                \
                            T *cs = (T *)(CPTR) + row * ld + o0 * slab;                        \
                            int64_t i0 = o0 * S[0] - P[0] + j0 * D[0];                         \
                            if (i0 < 0 || i0 >= I[0] || a >= b) {                              \
                                PAD;                                                           \
                                continue;                                                      \
                            }                                                                  \
                            TX *xs = (TX *)(XPTR) + c * plane + i0 * I[1] * W;                 \
                            BODY                                                               \
                        }                                                                      \
                    }                                                                          \
    } while (0)

/* zero the entries of rows [a, b) of cs outside [lo, hi) */
#define ZERO_ROW_EDGES(cs)                                                                     \
    for (int64_t r = a; r < b; r++) {                                                          \
        for (int64_t o = 0; o < lo; o++) (cs)[r * W + o] = 0;                                  \
        for (int64_t o = hi; o < W; o++) (cs)[r * W + o] = 0;                                  \
    }

#define IM2COL_ROWS(name, T)                                                                   \
    static void name(const cg_conv_geom *g, int64_t c0, int64_t c1, const T *x, T *col, int64_t ld) { \
        ROW_BLOCK_LOOP(T, x, col, memset(cs, 0, sizeof(T) * (size_t)slab), {                   \
            memset(cs, 0, sizeof(T) * (size_t)(a * W));                                        \
            memset(cs + b * W, 0, sizeof(T) * (size_t)((O[1] - b) * W));                       \
            if (d1 > d0) memcpy(cs + d0, xs + d0 + delta, sizeof(T) * (size_t)(d1 - d0));      \
            ZERO_ROW_EDGES(cs)                                                                 \
        });                                                                                    \
    }
IM2COL_ROWS(im2col_rows_f32, float)
IM2COL_ROWS(im2col_rows_f64, double)

/* The row-block im2col of a half x into float32 columns: the block converted. */
#define IM2COL_ROWS_HALF(name, TX, CVT)                                                        \
    static void name(const cg_conv_geom *g, int64_t c0, int64_t c1, const TX *x, float *col, int64_t ld) { \
        ROW_BLOCK_LOOP2(float, const TX, x, col, memset(cs, 0, sizeof(float) * (size_t)slab), { \
            memset(cs, 0, sizeof(float) * (size_t)(a * W));                                   \
            memset(cs + b * W, 0, sizeof(float) * (size_t)((O[1] - b) * W));                  \
            for (int64_t d = d0; d < d1; d++) cs[d] = CVT(xs[d + delta]);                      \
            ZERO_ROW_EDGES(cs)                                                                 \
        });                                                                                    \
    }
IM2COL_ROWS_HALF(im2col_rows_bf16, cg_bf16, cg_bf16_to_f32)
IM2COL_ROWS_HALF(im2col_rows_f16, cg_f16, cg_f16_to_f32)

/* The adjoint adds the whole block; the entries that read padding are
 * zeroed in col first (col is the caller's scratch), so the neighbouring
 * rows they overlap receive nothing. */
#define COL2IM_ROWS(name, T)                                                                   \
    static void name(const cg_conv_geom *g, int64_t c0, int64_t c1, T *col, T *x, int64_t ld) { \
        ROW_BLOCK_LOOP(T, x, col, (void)0, {                                                   \
            ZERO_ROW_EDGES(cs)                                                                 \
            T *restrict xd = xs + delta;                                                       \
            const T *restrict cd = cs;                                                         \
            for (int64_t d = d0; d < d1; d++) xd[d] += cd[d];                                  \
        });                                                                                    \
    }
COL2IM_ROWS(col2im_rows_f32, float)
COL2IM_ROWS(col2im_rows_f64, double)

#define COL2IM(name, T)                                                                        \
    static void name(const cg_conv_geom *g, int64_t c0, int64_t c1, const T *col, T *x, int64_t ld) { \
        int64_t s2 = g->stride[2];                                                             \
        CONV_COL_LOOP(T, x, col, {                                                             \
            if (!xrow) continue;                                                               \
            if (s2 == 1) {                                                                     \
                T *xp = xrow + base2;                                                          \
                for (int64_t o = lo; o < hi; o++) xp[o] += crow[o];                            \
            } else {                                                                           \
                for (int64_t o = lo; o < hi; o++) xrow[o * s2 + base2] += crow[o];             \
            }                                                                                  \
        });                                                                                    \
    }
COL2IM(col2im_f32, float)
COL2IM(col2im_f64, double)

void cg_im2col(cg_dtype dt, const cg_conv_geom *g, int64_t c0, int64_t c1, const void *x, void *col, int64_t ld) {
    CG_ASSERT(dt == CG_DTYPE_F32 || dt == CG_DTYPE_F64);
    bool rows = row_block_ok(g);
    if (dt == CG_DTYPE_F32) (rows ? im2col_rows_f32 : im2col_f32)(g, c0, c1, (const float *)x, (float *)col, ld);
    else (rows ? im2col_rows_f64 : im2col_f64)(g, c0, c1, (const double *)x, (double *)col, ld);
}

void cg_im2col_half(cg_dtype xdt, const cg_conv_geom *g, int64_t c0, int64_t c1, const void *x, float *col,
                    int64_t ld) {
    CG_ASSERT(xdt == CG_DTYPE_BF16 || xdt == CG_DTYPE_F16);
    bool rows = row_block_ok(g);
    if (xdt == CG_DTYPE_BF16) (rows ? im2col_rows_bf16 : im2col_bf16)(g, c0, c1, (const cg_bf16 *)x, col, ld);
    else (rows ? im2col_rows_f16 : im2col_f16)(g, c0, c1, (const cg_f16 *)x, col, ld);
}

void cg_col2im(cg_dtype dt, const cg_conv_geom *g, int64_t c0, int64_t c1, void *col, void *x, int64_t ld) {
    CG_ASSERT(dt == CG_DTYPE_F32 || dt == CG_DTYPE_F64);
    bool rows = row_block_ok(g);
    if (dt == CG_DTYPE_F32) {
        if (rows) col2im_rows_f32(g, c0, c1, (float *)col, (float *)x, ld);
        else col2im_f32(g, c0, c1, (const float *)col, (float *)x, ld);
    } else {
        if (rows) col2im_rows_f64(g, c0, c1, (double *)col, (double *)x, ld);
        else col2im_f64(g, c0, c1, (const double *)col, (double *)x, ld);
    }
}
