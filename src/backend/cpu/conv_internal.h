/* conv_internal.h — internal: the geometry of an N-d convolution and the CPU
 * convolution kernels (im2col / col2im + BLAS GEMM) behind conv, its
 * transpose and its weight gradient (Note [Conv geometry]). */
#ifndef CG_CONV_INTERNAL_H
#define CG_CONV_INTERNAL_H

#include "../backend.h"

/* Note [Conv geometry]: every convolution is described as the forward conv
 *   x (N, cin, in...) * w (cout, cin/groups, k...) -> y (N, cout, out...)
 * with output position o reading input position o*stride - pad + j*dil
 * (positions outside [0, in) read zero). `out` is stored, not derived from
 * the other fields, so asymmetric padding ('same' with an odd total: the
 * extra on the right) and the transposed conv's output_padding need no
 * padded copy. Spatial dims are canonicalised to 3 (leading 1s: a 1-D conv
 * is (1,1,L), a 2-D conv (1,H,W)); nsp keeps the user-visible count. The
 * three kernels below are the linear maps of this one geometry:
 *   conv:        y  = conv(x, w)                  (N,cout,out) from x, w
 *   transpose:   x' = conv^T(y', w)               (N,cin,in)   from y', w
 *   weight grad: w' = sum_n y'_n (x) col(x_n)     (cout,cin/g,k) from x, y'
 * and each one's derivative is another of the three. cg_conv_geom is
 * defined in src/backend/kernels.h (the conv entries take it). */

static inline int64_t cg_conv_vol(const int64_t v[3]) { return v[0] * v[1] * v[2]; }

/* im2col of one sample for channels [c0, c1):
 *   x is (cin, in0, in1, in2) contiguous, col is (cin * kvol, L = out0*out1*out2)
 *   with row stride ld >= L (the sample's columns inside a wider matrix),
 * row (c, j0, j1, j2) holding x at the positions read by kernel tap j. */
void cg_im2col(cg_dtype dt, const cg_conv_geom *g, int64_t c0, int64_t c1, const void *x, void *col, int64_t ld);
/* The same for a bfloat16 / float16 x (xdt), writing float32 columns. */
void cg_im2col_half(cg_dtype xdt, const cg_conv_geom *g, int64_t c0, int64_t c1, const void *x, float *col,
                    int64_t ld);
/* The adjoint: x[c, ...] += col rows of channel c, for channels [c0, c1).
 * col is scratch: its entries that read padding may be overwritten. */
void cg_col2im(cg_dtype dt, const cg_conv_geom *g, int64_t c0, int64_t c1, void *col, void *x, int64_t ld);

/* The kernels; dt is float32 or float64, all buffers contiguous:
 *   x (N, cin, in...), w (cout, cin/groups, k...), y (N, cout, out...),
 *   bias (channels of the result) or NULL. x is in xdt and y (an input) in
 *   ydt: dt, or bfloat16 / float16 when dt is float32 (converted per chunk,
 *   Note [Half conv]).
 * The result never depends on the thread count. CG_ERR_OOM on failure. */
cg_status cg_conv_cpu_forward(cg_dtype dt, cg_dtype xdt, const cg_conv_geom *g, const void *x, const void *w,
                              const void *bias, void *y);
cg_status cg_conv_cpu_transpose(cg_dtype dt, cg_dtype ydt, const cg_conv_geom *g, const void *y, const void *w,
                                const void *bias, void *x);
cg_status cg_conv_cpu_weight_grad(cg_dtype dt, cg_dtype xdt, cg_dtype ydt, const cg_conv_geom *g, const void *x,
                                  const void *y, void *w);
/* The bias gradient: out (C) = sums of g (N, C, L) over N and L (float32 / float64). */
void cg_conv_cpu_bias_grad(cg_dtype dt, int64_t N, int64_t C, int64_t L, const void *g, void *out);

/* The kernels on channels-last operands (Note [Channels-last conv],
 * conv_nhwc.c), for g->channels_last: the map `kind` with a, b, bias, out in
 * cg_cpu_conv's roles, dense channels-last (x (N, in..., cin), w (cout, k...,
 * cin/groups), y (N, out..., cout) in memory); dt (out's) float32 / float64,
 * adt / bdt as the kernels above take x and y. CG_ERR_OOM on failure. */
cg_status cg_conv_cpu_nhwc(cg_conv_kind kind, cg_dtype dt, cg_dtype adt, cg_dtype bdt, const cg_conv_geom *g,
                           const void *a, const void *b, const void *bias, void *out);
/* Depthwise channels-last convolution (groups = cin = cout > 1), computed
 * directly (Note [Channels-last depthwise conv], conv_depthwise.c); the
 * arguments are cg_conv_cpu_nhwc's. */
bool cg_conv_depthwise_nhwc_applies(const cg_conv_geom *g);
cg_status cg_conv_cpu_depthwise_nhwc(cg_conv_kind kind, cg_dtype dt, cg_dtype adt, cg_dtype bdt,
                                     const cg_conv_geom *g, const void *a, const void *b, const void *bias,
                                     void *out);
/* The bias gradient of a channels-last g, (M, C) in memory (Note [Channels-last bias gradient]). */
cg_status cg_conv_cpu_bias_grad_nhwc(cg_dtype dt, int64_t M, int64_t C, const void *g, void *out);

/* Shared by both layouts' kernels (conv_gemm.c):
 *   cg_conv_gemm         C (m,n) = op(A) @ op(B) + beta * C, row-major, leading dims given (float32 / float64);
 *   cg_conv_blas_serial  OpenBLAS on one thread while any conv runs (Note [Conv threads]), counted;
 *   cg_conv_chunking     samples per chunk and the chunk count for n samples of per_sample bytes of
 *                        scratch (Note [Conv chunks]);
 *   cg_conv_half_to_f32  dst[i] = src[i] as float32, i < n, for a bfloat16 / float16 src. */
void cg_conv_gemm(cg_dtype dt, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void *A, int64_t lda,
                  const void *B, int64_t ldb, double beta, void *C, int64_t ldc);
void cg_conv_blas_serial(bool enter);
void cg_conv_chunking(int64_t n, size_t per_sample, int64_t *samples, int64_t *chunks);
void cg_conv_half_to_f32(cg_dtype dt, const void *src, int64_t n, float *restrict dst);

/* The integer kernels (Note [Integer conv], conv_int.c): the map `kind` over
 * contiguous int64 operands in the roles above (a, b, bias as cg_cpu_conv's),
 * arithmetic modulo 2^64. */
void cg_conv_cpu_int(cg_conv_kind kind, const cg_conv_geom *g, const int64_t *a, const int64_t *b,
                     const int64_t *bias, int64_t *out);

#endif
