/* blas.c — the BLAS glue behind every matrix product (Note [GEMM operands]):
 * picks N / T and the leading dimension for each strided operand, calls
 * cblas_{s,d}gemm (gemv / dot for the vector shapes), loops over broadcast
 * batches by pointer arithmetic, and holds the integer GEMM loops. */
#include "blas_internal.h"

#include <limits.h>
#include <string.h>

/* Per-GEMM work below which a batch is split across our threads
 * (CG_GEMM_SMALL_WORK): OpenBLAS runs GEMMs this small on the calling
 * thread, so the two pools never nest; larger GEMMs are threaded by
 * OpenBLAS itself. */
#define GEMM_SMALL_WORK CG_GEMM_SMALL_WORK

int64_t cg_blas_max_dim(void) { return sizeof(blasint) >= 8 ? INT64_MAX : INT_MAX; }

/* How a stored (rows, cols) matrix maps to a row-major BLAS operand. */
typedef struct blas_mat {
    CBLAS_TRANSPOSE trans; /* CblasNoTrans: element (i,j) at i*ld + j; CblasTrans: at j*ld + i */
    blasint ld;
} blas_mat;

static bool layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, blas_mat *out) {
    int64_t one = 1;
    if ((cs == 1 || cols <= 1) && (rows <= 1 || rs >= (cols > one ? cols : one))) {
        out->trans = CblasNoTrans;
        out->ld = (blasint)(rows <= 1 ? (cols > one ? cols : one) : rs);
        return true;
    }
    if ((rs == 1 || rows <= 1) && (cols <= 1 || cs >= (rows > one ? rows : one))) {
        out->trans = CblasTrans;
        out->ld = (blasint)(cols <= 1 ? (rows > one ? rows : one) : cs);
        return true;
    }
    return false;
}

bool cg_blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, CBLAS_TRANSPOSE *trans, blasint *ld) {
    blas_mat m;
    if (!layout(rows, cols, rs, cs, &m)) return false;
    *trans = m.trans;
    *ld = m.ld;
    return true;
}

bool cg_blas_layout_ok(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
    blas_mat m;
    return rows == 0 || cols == 0 || layout(rows, cols, rs, cs, &m);
}

/* ---------------------------------------------------------------- float GEMM */

/* One product: A (m,k), B (k,n) strided as described by d; C (m,n) contiguous. */
static void gemm_float(const cg_gemm_desc *d, const char *A, const char *B, char *C) {
    int64_t m = d->m, n = d->n, k = d->k;
    size_t es = d->dtype == CG_DTYPE_F32 ? 4 : 8;
    if (m == 0 || n == 0) return;
    if (k == 0) {
        for (int64_t i = 0; i < m * n; i++) {
            if (d->dtype == CG_DTYPE_F32) ((float *)C)[i] = d->beta == 0 ? 0.0f : (float)d->beta * ((float *)C)[i];
            else ((double *)C)[i] = d->beta == 0 ? 0.0 : d->beta * ((double *)C)[i];
        }
        return;
    }
    blas_mat la, lb;
    CG_ASSERT(layout(m, k, d->a.rs, d->a.cs, &la) && layout(k, n, d->b.rs, d->b.cs, &lb));
    if (d->beta == 0) memset(C, 0, (size_t)(m * n) * es); /* beta = 0: C is never read */
    bool f32 = d->dtype == CG_DTYPE_F32;
    if (m == 1 && n == 1) { /* dot: a row of A times a column of B */
        blasint ia = la.trans == CblasNoTrans ? 1 : la.ld, ib = lb.trans == CblasNoTrans ? lb.ld : 1;
        if (f32) {
            float r = cblas_sdot((blasint)k, (const float *)A, ia, (const float *)B, ib);
            *(float *)C = (float)d->alpha * r + (d->beta == 0 ? 0.0f : (float)d->beta * *(float *)C);
        } else {
            double r = cblas_ddot((blasint)k, (const double *)A, ia, (const double *)B, ib);
            *(double *)C = d->alpha * r + (d->beta == 0 ? 0.0 : d->beta * *(double *)C);
        }
    } else if (n == 1) { /* C(m) = A(m,k) x(k) */
        blasint ib = lb.trans == CblasNoTrans ? lb.ld : 1;
        blasint rows = (blasint)(la.trans == CblasNoTrans ? m : k), cols = (blasint)(la.trans == CblasNoTrans ? k : m);
        if (f32)
            cblas_sgemv(CblasRowMajor, la.trans, rows, cols, (float)d->alpha, (const float *)A, la.ld, (const float *)B,
                        ib, (float)d->beta, (float *)C, 1);
        else
            cblas_dgemv(CblasRowMajor, la.trans, rows, cols, d->alpha, (const double *)A, la.ld, (const double *)B, ib,
                        d->beta, (double *)C, 1);
    } else if (m == 1) { /* C(n) = B(k,n)^T a(k) */
        blasint ia = la.trans == CblasNoTrans ? 1 : la.ld;
        CBLAS_TRANSPOSE t = lb.trans == CblasNoTrans ? CblasTrans : CblasNoTrans;
        blasint rows = (blasint)(lb.trans == CblasNoTrans ? k : n), cols = (blasint)(lb.trans == CblasNoTrans ? n : k);
        if (f32)
            cblas_sgemv(CblasRowMajor, t, rows, cols, (float)d->alpha, (const float *)B, lb.ld, (const float *)A, ia,
                        (float)d->beta, (float *)C, 1);
        else
            cblas_dgemv(CblasRowMajor, t, rows, cols, d->alpha, (const double *)B, lb.ld, (const double *)A, ia,
                        d->beta, (double *)C, 1);
    } else if (f32) {
        cblas_sgemm(CblasRowMajor, la.trans, lb.trans, (blasint)m, (blasint)n, (blasint)k, (float)d->alpha,
                    (const float *)A, la.ld, (const float *)B, lb.ld, (float)d->beta, (float *)C, (blasint)n);
    } else {
        cblas_dgemm(CblasRowMajor, la.trans, lb.trans, (blasint)m, (blasint)n, (blasint)k, d->alpha,
                    (const double *)A, la.ld, (const double *)B, lb.ld, d->beta, (double *)C, (blasint)n);
    }
}

/* ---------------------------------------------------------------- integer GEMM
 * Computed with wrapping unsigned 64-bit arithmetic, then truncated to the
 * dtype: the same bits as accumulating in the dtype itself (PyTorch's result). */
#define INT_GEMM(name, T)                                                                        \
    static void name(const cg_gemm_desc *d, const char *A_, const char *B_, char *C_, int64_t i0, \
                     int64_t i1) {                                                               \
        const T *A = (const T *)A_, *B = (const T *)B_;                                          \
        T *C = (T *)C_;                                                                          \
        uint64_t alpha = (uint64_t)(int64_t)d->alpha, beta = (uint64_t)(int64_t)d->beta;         \
        for (int64_t i = i0; i < i1; i++)                                                        \
            for (int64_t j = 0; j < d->n; j++) {                                                 \
                uint64_t acc = 0;                                                                \
                for (int64_t p = 0; p < d->k; p++)                                               \
                    acc += (uint64_t)(int64_t)A[i * d->a.rs + p * d->a.cs] *                     \
                           (uint64_t)(int64_t)B[p * d->b.rs + j * d->b.cs];                      \
                uint64_t r = alpha * acc;                                                        \
                if (d->beta != 0) r += beta * (uint64_t)(int64_t)C[i * d->n + j];                \
                C[i * d->n + j] = (T)r;                                                          \
            }                                                                                    \
    }
INT_GEMM(gemm_u8, uint8_t)
INT_GEMM(gemm_i8, int8_t)
INT_GEMM(gemm_i16, int16_t)
INT_GEMM(gemm_i32, int32_t)
INT_GEMM(gemm_i64, int64_t)

typedef void (*int_gemm_fn)(const cg_gemm_desc *, const char *, const char *, char *, int64_t, int64_t);

static int_gemm_fn int_gemm(cg_dtype dt) {
    switch (dt) {
    case CG_DTYPE_U8: return gemm_u8;
    case CG_DTYPE_I8: return gemm_i8;
    case CG_DTYPE_I16: return gemm_i16;
    case CG_DTYPE_I32: return gemm_i32;
    case CG_DTYPE_I64: return gemm_i64;
    default: return NULL;
    }
}

/* ---------------------------------------------------------------- batch loop */

/* Element offsets of batch index `b` in A and B. */
void cg_gemm_batch_offsets(const cg_gemm_desc *d, int64_t b, int64_t *oa, int64_t *ob) {
    *oa = *ob = 0;
    for (int i = d->nbatch - 1; i >= 0; i--) {
        int64_t idx = b % d->bshape[i];
        b /= d->bshape[i];
        *oa += idx * d->a.bstride[i];
        *ob += idx * d->b.bstride[i];
    }
}

typedef struct gemm_ctx {
    const cg_gemm_desc *d;
    size_t es;
} gemm_ctx;

static void run_batches(int64_t b0, int64_t b1, void *p) {
    const gemm_ctx *g = p;
    const cg_gemm_desc *d = g->d;
    int_gemm_fn ifn = int_gemm(d->dtype);
    for (int64_t b = b0; b < b1; b++) {
        int64_t oa, ob;
        cg_gemm_batch_offsets(d, b, &oa, &ob);
        const char *A = d->a.ptr + oa * (int64_t)g->es, *B = d->b.ptr + ob * (int64_t)g->es;
        char *C = d->c + b * d->m * d->n * (int64_t)g->es;
        if (ifn) ifn(d, A, B, C, 0, d->m);
        else gemm_float(d, A, B, C);
    }
}

/* Integer GEMMs are split over (batch, row) pairs. */
static void run_int_rows(int64_t r0, int64_t r1, void *p) {
    const gemm_ctx *g = p;
    const cg_gemm_desc *d = g->d;
    int_gemm_fn ifn = int_gemm(d->dtype);
    for (int64_t r = r0; r < r1;) {
        int64_t b = r / d->m, i = r % d->m, i1 = d->m < i + (r1 - r) ? d->m : i + (r1 - r);
        int64_t oa, ob;
        cg_gemm_batch_offsets(d, b, &oa, &ob);
        ifn(d, d->a.ptr + oa * (int64_t)g->es, d->b.ptr + ob * (int64_t)g->es, d->c + b * d->m * d->n * (int64_t)g->es,
            i, i1);
        r += i1 - i;
    }
}

void cg_gemm(const cg_gemm_desc *d) {
    int64_t batch = cg_shape_numel(d->nbatch, d->bshape);
    if (batch == 0 || d->m == 0 || d->n == 0) return;
    gemm_ctx g = {d, cg_dtype_size(d->dtype)};
    int64_t work = d->m * d->n * (d->k > 0 ? d->k : 1);
    if (int_gemm(d->dtype)) {
        int64_t grain = GEMM_SMALL_WORK / (d->n * (d->k > 0 ? d->k : 1)) + 1;
        cg_parallel_for(batch * d->m, grain, run_int_rows, &g);
        return;
    }
    CG_ASSERT(d->dtype == CG_DTYPE_F32 || d->dtype == CG_DTYPE_F64);
    if (batch > 1 && work < GEMM_SMALL_WORK)
        cg_parallel_for(batch, GEMM_SMALL_WORK / work + 1, run_batches, &g);
    else
        run_batches(0, batch, &g);
}

const char *cg_blas_config(void) { return openblas_get_config(); }
const char *cg_blas_corename(void) { return openblas_get_corename(); }
