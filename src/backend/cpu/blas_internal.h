/* blas_internal.h — internal: the BLAS glue. One batched GEMM entry point
 * that takes strided operands (Note [GEMM operands]) and dispatches to
 * OpenBLAS (float32 / float64) or to a plain C loop (integer dtypes). */
#ifndef CG_BLAS_INTERNAL_H
#define CG_BLAS_INTERNAL_H

#include "../../core/core_internal.h"

/* Note [GEMM operands]: C[b] = alpha * A[b] @ B[b] + beta * C[b] for every
 * batch index b of a (possibly broadcast) batch shape. A[b] is (m,k) and
 * B[b] is (k,n), each described by a data pointer, row / column strides and
 * per-batch-dim strides in elements; a batch stride of 0 is a broadcast
 * operand, handled by pointer arithmetic, never copied. C is contiguous
 * (batch..., m, n). For float dtypes each matrix must be BLAS-compatible
 * (cg_blas_layout_ok): unit stride along rows or columns; integer dtypes
 * accept any strides. beta == 0 means C is not read (NaNs in C vanish). */
typedef struct cg_gemm_mat {
    const char *ptr;              /* element (0,0) of batch index 0 */
    int64_t rs, cs;               /* row / column strides (elements) */
    int64_t bstride[CG_MAX_DIMS]; /* batch strides (elements), 0 = broadcast */
} cg_gemm_mat;

typedef struct cg_gemm_desc {
    cg_dtype dtype;               /* float32, float64 or an integer dtype */
    int nbatch;                   /* batch rank (0 = a single GEMM) */
    int64_t bshape[CG_MAX_DIMS];
    int64_t m, n, k;
    double alpha, beta;           /* integer dtypes: integral values */
    cg_gemm_mat a, b;
    char *c;                      /* contiguous (batch..., m, n) */
} cg_gemm_desc;

/* Can a (rows, cols) matrix with these element strides go to BLAS as is
 * (as N or T)? Matrices with a zero extent always can. */
bool cg_blas_layout_ok(int64_t rows, int64_t cols, int64_t rs, int64_t cs);
/* Largest extent / leading dimension BLAS can index (its int type). */
int64_t cg_blas_max_dim(void);
/* Run the batched GEMM. Batches of small GEMMs are split across threads;
 * large GEMMs run one after another and let OpenBLAS thread each one. */
void cg_gemm(const cg_gemm_desc *d);

#endif
