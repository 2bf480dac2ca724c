/* blas_internal.h — internal: the BLAS glue. One batched GEMM entry point
 * that takes strided operands (Note [GEMM operands]) and dispatches to
 * OpenBLAS (float32 / float64) or to a plain C loop (integer dtypes), and
 * its bfloat16 / float16 counterpart (Note [Half GEMM], gemm_half.c). */
#ifndef CG_BLAS_INTERNAL_H
#define CG_BLAS_INTERNAL_H

#include "../backend.h"

#include "cblas_names.h"

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
    cg_dtype dtype;               /* float32, float64, an integer dtype; cg_gemm_half: bfloat16 / float16 */
    int nbatch;                   /* batch rank (0 = a single GEMM) */
    int64_t bshape[CG_MAX_DIMS];
    int64_t m, n, k;
    double alpha, beta;           /* integer dtypes: integral values */
    cg_gemm_mat a, b;
    char *c;                      /* contiguous (batch..., m, n); float32 for cg_gemm_half */
} cg_gemm_desc;

/* Can a (rows, cols) matrix with these element strides go to BLAS as is
 * (as N or T)? Matrices with a zero extent always can. */
bool cg_blas_layout_ok(int64_t rows, int64_t cols, int64_t rs, int64_t cs);
/* Largest extent / leading dimension BLAS can index (its int type). */
int64_t cg_blas_max_dim(void);
/* Run the batched GEMM. Batches of small GEMMs are split across threads;
 * large GEMMs run one after another and let OpenBLAS thread each one. */
void cg_gemm(const cg_gemm_desc *d);

/* Per-GEMM work (m*n*k) below which a batch is split across our threads. */
#define CG_GEMM_SMALL_WORK 262144
/* As layout-ok, also giving the BLAS transpose flag and leading dimension. */
bool cg_blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, CBLAS_TRANSPOSE *trans, blasint *ld);
/* Element offsets of batch index b in A and B. */
void cg_gemm_batch_offsets(const cg_gemm_desc *d, int64_t b, int64_t *oa, int64_t *ob);

/* The half-precision GEMM (Note [Half GEMM]): A and B bfloat16 or float16
 * (d->dtype) with any strides, C float32 (the float32 accumulator, beta
 * applied to it). CG_ERR_OOM when the panels cannot be allocated. */
cg_status cg_gemm_half(const cg_gemm_desc *d);
/* cblas_sbgemm's signature (bfloat16 storage as uint16_t, float32 C). */
typedef void (*cg_sbgemm_fn)(CBLAS_ORDER order, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, blasint m, blasint n,
                             blasint k, float alpha, const uint16_t *a, blasint lda, const uint16_t *b, blasint ldb,
                             float beta, float *c, blasint ldc);
/* The sbgemm bfloat16 products use, or NULL for the float32 panels: picked
 * at first use (cblas_sbgemm exported by the loaded BLAS and the CPU has
 * AVX512_BF16; CGRAD_SBGEMM=1 / 0 forces it on when exported / off). */
cg_sbgemm_fn cg_gemm_sbgemm(void);
/* Tests: inject fn in place of that choice (NULL: the panels), or with
 * inject false go back to it. */
void cg_gemm_set_sbgemm(bool inject, cg_sbgemm_fn fn);

#endif
