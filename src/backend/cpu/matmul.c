/* matmul.c — the CPU's BLAS-product entries (Note [Kernel entries]): the
 * operand rules of the GEMM (which strided matrices BLAS reads in place, the
 * largest extent it indexes) and the product itself, one batched GEMM over
 * broadcast batches through the BLAS glue (blas.c, Note [GEMM operands];
 * gemm_half.c for bfloat16 / float16, Note [Half GEMM]). Behind matmul, mm,
 * bmm, mv, dot, addmm, baddbmm and linear. */
#include "blas_internal.h"
#include "cpu_kernels.h"

#include <string.h>

cg_status cg_cpu_gemm_max_dim(int64_t *max_dim) {
    *max_dim = cg_blas_max_dim();
    return CG_OK;
}

cg_status cg_cpu_gemm_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, bool *ok) {
    *ok = cg_blas_layout_ok(rows, cols, rs, cs);
    return CG_OK;
}

/* Describe operand t (a: is_a) for the glue, aligned to the broadcast batch
 * (nbatch dims, the leading dims of c). */
static void fill_mat(cg_gemm_mat *mat, const cg_tensor *t, bool is_a, int nbatch) {
    mat->ptr = cg_tensor_ptr(t);
    int nd = t->ndim;
    if (nd == 1) { /* a: a (1,k) row (its row stride is never used); b: a (k,1) column */
        mat->rs = is_a ? 0 : t->strides[0];
        mat->cs = is_a ? t->strides[0] : 1;
    } else {
        mat->rs = t->strides[nd - 2];
        mat->cs = t->strides[nd - 1];
    }
    int nb = nd > 2 ? nd - 2 : 0;
    for (int i = 0; i < nbatch; i++) {
        int j = i - (nbatch - nb);
        mat->bstride[i] = j >= 0 && t->shape[j] != 1 ? t->strides[j] : 0;
    }
}

cg_status cg_cpu_gemm(cg_tensor *c, const cg_tensor *a, const cg_tensor *b, double alpha, double beta) {
    bool a_vec = a->ndim == 1, b_vec = b->ndim == 1;
    int nbatch = c->ndim - (a_vec ? 0 : 1) - (b_vec ? 0 : 1);
    bool half = a->dtype == CG_DTYPE_F16 || a->dtype == CG_DTYPE_BF16;
    cg_gemm_desc d = {.dtype = a->dtype, .nbatch = nbatch, .alpha = alpha, .beta = beta, .c = cg_tensor_ptr(c)};
    d.m = a_vec ? 1 : a->shape[a->ndim - 2];
    d.k = a->shape[a->ndim - 1];
    d.n = b_vec ? 1 : b->shape[b->ndim - 1];
    memcpy(d.bshape, c->shape, sizeof(int64_t) * (size_t)nbatch);
    fill_mat(&d.a, a, true, nbatch);
    fill_mat(&d.b, b, false, nbatch);
    if (half) return cg_gemm_half(&d);
    cg_gemm(&d);
    return CG_OK;
}
