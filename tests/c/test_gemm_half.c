/* test_gemm_half.c — the bfloat16 / float16 GEMM glue (Note [Half GEMM]):
 * the float32 panels against a float64 reference over shapes (empty, 1,
 * depths of several panels, more rows / columns than a panel), operand
 * layouts (row- / column-major, padded, non-BLAS strides), broadcast
 * batches, alpha / beta; and the sbgemm dispatch with an injected reference
 * sbgemm of cblas_sbgemm's signature (OpenBLAS's own is not exported here). */
#include "test.h"

#include "backend/cpu/blas_internal.h"
#include "core/half.h"

#include <stdlib.h>
#include <string.h>

enum { L_ROW, L_COL, L_PAD, L_STRIDED, L_NLAYOUTS };

/* A half matrix (rows, cols) per batch index, in one of the layouts above. */
typedef struct hmat {
    int64_t rows, cols, rs, cs, span; /* span: elements one batch index occupies */
    uint16_t *buf;
} hmat;

static uint32_t g_seed = 12345u;
static float rnd(void) {
    g_seed = g_seed * 1664525u + 1013904223u;
    return (float)((g_seed >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static uint16_t to_half(cg_dtype dt, float v) {
    return dt == CG_DTYPE_BF16 ? cg_f32_to_bf16(v).bits : cg_f32_to_f16(v).bits;
}
static double from_half(cg_dtype dt, uint16_t b) {
    return dt == CG_DTYPE_BF16 ? cg_bf16_to_f32((cg_bf16){b}) : cg_f16_to_f32((cg_f16){b});
}

static hmat hmat_make(cg_dtype dt, int64_t rows, int64_t cols, int layout, int64_t nb) {
    hmat m = {rows, cols, 0, 0, 0, NULL};
    switch (layout) {
    case L_ROW: m.rs = cols, m.cs = 1; break;
    case L_COL: m.rs = 1, m.cs = rows; break;
    case L_PAD: m.rs = cols + 3, m.cs = 1; break;
    default: m.rs = 3 * cols + 1, m.cs = 3; break; /* no unit stride: never BLAS-ready */
    }
    m.span = (rows > 0 && cols > 0 ? (rows - 1) * m.rs + (cols - 1) * m.cs + 1 : 0) + 2;
    size_t n = (size_t)(m.span * nb) + 1;
    m.buf = malloc(n * sizeof(uint16_t));
    for (size_t i = 0; i < n; i++) m.buf[i] = to_half(dt, rnd());
    return m;
}

/* C = alpha A@B + beta C in float64 over the half values, batch index b of
 * a 1-D batch where A is broadcast (stride 0) when a_bcast. */
static double ref_elem(cg_dtype dt, const hmat *A, const hmat *B, int64_t oa, int64_t ob, int64_t i, int64_t j) {
    double s = 0;
    for (int64_t p = 0; p < A->cols; p++)
        s += from_half(dt, A->buf[oa + i * A->rs + p * A->cs]) * from_half(dt, B->buf[ob + p * B->rs + j * B->cs]);
    return s;
}

static int g_sb_calls;

/* cblas_sbgemm's contract (row-major): C = alpha op(A) op(B) + beta C with
 * bfloat16 A, B and float32 accumulation. */
static void ref_sbgemm(CBLAS_ORDER order, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, blasint m, blasint n, blasint k,
                       float alpha, const uint16_t *a, blasint lda, const uint16_t *b, blasint ldb, float beta,
                       float *c, blasint ldc) {
    g_sb_calls++;
    CHECK(order == CblasRowMajor);
    for (blasint i = 0; i < m; i++)
        for (blasint j = 0; j < n; j++) {
            float acc = 0;
            for (blasint p = 0; p < k; p++) {
                uint16_t x = ta == CblasNoTrans ? a[i * lda + p] : a[p * lda + i];
                uint16_t y = tb == CblasNoTrans ? b[p * ldb + j] : b[j * ldb + p];
                acc += cg_bf16_to_f32((cg_bf16){x}) * cg_bf16_to_f32((cg_bf16){y});
            }
            c[i * ldc + j] = alpha * acc + (beta == 0 ? 0.0f : beta * c[i * ldc + j]);
        }
}

/* One batched product through cg_gemm_half against the reference; nb batch
 * indices, A broadcast over them when a_bcast. Returns the max error / tol. */
static void run_case(cg_dtype dt, int64_t m, int64_t n, int64_t k, int la, int lb, int64_t nb, bool a_bcast,
                     double alpha, double beta) {
    hmat A = hmat_make(dt, m, k, la, a_bcast ? 1 : nb), B = hmat_make(dt, k, n, lb, nb);
    size_t cn = (size_t)(nb * m * n) + 1;
    float *C = malloc(cn * sizeof(float)), *C0 = malloc(cn * sizeof(float));
    for (size_t i = 0; i < cn; i++) C0[i] = C[i] = beta == 0 ? NAN : rnd();
    cg_gemm_desc d = {.dtype = dt, .nbatch = nb > 1 ? 1 : 0, .m = m, .n = n, .k = k, .alpha = alpha, .beta = beta,
                      .c = (char *)C};
    d.bshape[0] = nb;
    d.a.ptr = (const char *)A.buf, d.a.rs = A.rs, d.a.cs = A.cs, d.a.bstride[0] = a_bcast ? 0 : A.span;
    d.b.ptr = (const char *)B.buf, d.b.rs = B.rs, d.b.cs = B.cs, d.b.bstride[0] = B.span;
    CHECK_OK(cg_gemm_half(&d));
    /* float32 accumulation of products of values in [-1, 1] */
    double tol = 4e-7 * (double)(k + 4) * (fabs(alpha) + 1) + 1e-6 * fabs(beta);
    double worst = 0;
    for (int64_t b = 0; b < nb; b++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double c0 = beta == 0 ? 0 : beta * C0[(b * m + i) * n + j];
                double r = alpha * ref_elem(dt, &A, &B, a_bcast ? 0 : b * A.span, b * B.span, i, j) + c0;
                double e = fabs(C[(b * m + i) * n + j] - r);
                if (!(e <= worst)) worst = e;
            }
    CHECK_MSG(worst <= tol, "%s m=%lld n=%lld k=%lld layouts %d/%d batch %lld%s alpha %g beta %g: error %g > %g",
              dt == CG_DTYPE_BF16 ? "bf16" : "f16", (long long)m, (long long)n, (long long)k, la, lb, (long long)nb,
              a_bcast ? " (A broadcast)" : "", alpha, beta, worst, tol);
    CHECK(C[cn - 1] == C0[cn - 1] || (isnan(C[cn - 1]) && isnan(C0[cn - 1]))); /* nothing written past C */
    free(A.buf);
    free(B.buf);
    free(C);
    free(C0);
}

static const int64_t k_shapes[][3] = {
    {0, 3, 4}, {3, 0, 4}, {3, 4, 0}, {1, 1, 1}, {1, 5, 7}, {5, 1, 7}, {1, 1, 300},
    {7, 9, 300},          /* deep and narrow: one deep panel */
    {13, 11, 800},
};

TEST(gemm_half_panels_shapes_layouts) {
    cg_gemm_set_sbgemm(true, NULL); /* the float32 panels, whatever this machine's BLAS offers */
    for (int t = 0; t < 2; t++) {
        cg_dtype dt = t ? CG_DTYPE_F16 : CG_DTYPE_BF16;
        for (size_t s = 0; s < sizeof k_shapes / sizeof k_shapes[0]; s++)
            for (int la = 0; la < L_NLAYOUTS; la++)
                for (int lb = 0; lb < L_NLAYOUTS; lb++)
                    run_case(dt, k_shapes[s][0], k_shapes[s][1], k_shapes[s][2], la, lb, 1, false, 1.0, 0.0);
    }
    cg_gemm_set_sbgemm(false, NULL);
}

TEST(gemm_half_panels_big_alpha_beta_batches) {
    cg_gemm_set_sbgemm(true, NULL);
    /* more rows than a row panel, more columns than a column panel: depth
     * blocks of 256, three of them, the last partial */
    run_case(CG_DTYPE_BF16, 530, 1030, 600, L_ROW, L_COL, 1, false, 1.0, 0.0);
    /* two depth blocks (256 + 4) accumulating onto beta C */
    run_case(CG_DTYPE_F16, 520, 1024, 260, L_COL, L_ROW, 1, false, 0.5, 1.5);
    for (int t = 0; t < 2; t++) {
        cg_dtype dt = t ? CG_DTYPE_F16 : CG_DTYPE_BF16;
        run_case(dt, 6, 5, 300, L_ROW, L_ROW, 4, true, -2.0, 0.5);    /* small GEMMs: batches over threads */
        run_case(dt, 70, 80, 300, L_STRIDED, L_PAD, 3, false, 1.0, 1.0); /* large: one after another */
        run_case(dt, 4, 3, 0, L_ROW, L_ROW, 3, false, 1.0, 2.0);      /* empty depth: C = beta C */
        run_case(dt, 4, 3, 0, L_ROW, L_ROW, 3, false, 1.0, 0.0);      /* ... and zeros for beta = 0 */
    }
    cg_gemm_set_sbgemm(false, NULL);
}

TEST(gemm_half_sbgemm_dispatch) {
    cg_gemm_set_sbgemm(true, ref_sbgemm);
    static const int64_t shapes[][3] = {{1, 1, 1}, {1, 6, 5}, {6, 1, 5}, {9, 7, 33}, {17, 12, 300}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int la = L_ROW; la <= L_PAD; la++)
            for (int lb = L_ROW; lb <= L_PAD; lb++) {
                g_sb_calls = 0;
                run_case(CG_DTYPE_BF16, shapes[s][0], shapes[s][1], shapes[s][2], la, lb, 1, false, 0.75, 0.0);
                CHECK_MSG(g_sb_calls == 1, "BLAS-ready bf16 operands: sbgemm called %d times", g_sb_calls);
            }
    g_sb_calls = 0;
    run_case(CG_DTYPE_BF16, 5, 4, 40, L_COL, L_PAD, 3, true, 2.0, -1.0); /* a broadcast batch of 3 */
    CHECK(g_sb_calls == 3);
    g_sb_calls = 0;
    run_case(CG_DTYPE_BF16, 5, 4, 40, L_STRIDED, L_ROW, 2, false, 1.0, 1.0); /* no unit stride: the panels */
    CHECK(g_sb_calls == 0);
    run_case(CG_DTYPE_F16, 5, 4, 40, L_ROW, L_ROW, 2, false, 1.0, 0.0); /* float16 never goes to sbgemm */
    CHECK(g_sb_calls == 0);
    run_case(CG_DTYPE_BF16, 5, 4, 0, L_ROW, L_ROW, 1, false, 1.0, 0.5); /* empty depth: no call */
    CHECK(g_sb_calls == 0);
    cg_gemm_set_sbgemm(false, NULL);
    /* the machine's own choice: cblas_sbgemm when exported and the CPU has
     * AVX512_BF16 (or CGRAD_SBGEMM=1); whichever it is, products are right */
    g_sb_calls = 0;
    run_case(CG_DTYPE_BF16, 9, 7, 33, L_ROW, L_ROW, 1, false, 1.0, 0.0);
    CHECK(g_sb_calls == 0);
    CHECK(cg_gemm_sbgemm() != ref_sbgemm);
}
