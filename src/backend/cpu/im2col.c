/* im2col.c — the column transforms of the CPU convolution (Note [Conv
 * geometry]): im2col gathers every kernel tap of one sample into a row of a
 * (cin*kvol, L) matrix so the conv is one GEMM per group; col2im is its
 * adjoint (scatter-add back into the sample). 1-D, 2-D and 3-D (vol2col)
 * share the canonical 3-D loop; the innermost dim is a range copy. */
#include "conv_internal.h"

#include <string.h>

/* Output positions o in [0, n_out) whose input o*s + base lies in [0, n_in):
 * a contiguous range [*lo, *hi). */
static void valid_range(int64_t n_out, int64_t n_in, int64_t s, int64_t base, int64_t *lo, int64_t *hi) {
    int64_t l = base >= 0 ? 0 : (-base + s - 1) / s;
    int64_t h = n_in - base <= 0 ? 0 : (n_in - base + s - 1) / s;
    if (h > n_out) h = n_out;
    if (l > h) l = h;
    *lo = l;
    *hi = h;
}

/* The loop nest shared by both transforms: for every row (c, j0, j1, j2) and
 * output (o0, o1) row, BODY runs with `crow` the col row segment (out2
 * entries), `xrow` the input row (in2 entries) or NULL when (o0, o1) reads
 * padding, and [lo, hi) the valid o2 range reading xrow[o2*s2 + base2]. */
#define CONV_COL_LOOP(T, XPTR, CPTR, BODY)                                                               \
    do {                                                                                                 \
        const int64_t *K = g->k, *I = g->in, *O = g->out, *S = g->stride, *P = g->pad, *D = g->dil;    \
        int64_t L = cg_conv_vol(O), plane = cg_conv_vol(I);                                              \
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
                                T *crow = (T *)(CPTR) + row * L + (o0 * O[1] + o1) * O[2];               \
                                T *xrow = (i0 < 0 || i0 >= I[0] || i1 < 0 || i1 >= I[1])                 \
                                              ? NULL                                                     \
                                              : (T *)(XPTR) + c * plane + (i0 * I[1] + i1) * I[2];      \
                                BODY                                                                     \
                            }                                                                            \
                        }                                                                                \
                    }                                                                                    \
    } while (0)

#define IM2COL(name, T)                                                                        \
    static void name(const cg_conv_geom *g, int64_t c0, int64_t c1, const T *x, T *col) {    \
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

#define COL2IM(name, T)                                                                        \
    static void name(const cg_conv_geom *g, int64_t c0, int64_t c1, const T *col, T *x) {    \
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

void cg_im2col(cg_dtype dt, const cg_conv_geom *g, int64_t c0, int64_t c1, const void *x, void *col) {
    CG_ASSERT(dt == CG_DTYPE_F32 || dt == CG_DTYPE_F64);
    if (dt == CG_DTYPE_F32) im2col_f32(g, c0, c1, (const float *)x, (float *)col);
    else im2col_f64(g, c0, c1, (const double *)x, (double *)col);
}

void cg_col2im(cg_dtype dt, const cg_conv_geom *g, int64_t c0, int64_t c1, const void *col, void *x) {
    CG_ASSERT(dt == CG_DTYPE_F32 || dt == CG_DTYPE_F64);
    if (dt == CG_DTYPE_F32) col2im_f32(g, c0, c1, (const float *)col, (float *)x);
    else col2im_f64(g, c0, c1, (const double *)col, (double *)x);
}
