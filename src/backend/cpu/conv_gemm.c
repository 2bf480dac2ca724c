/* conv_gemm.c — the CPU convolution kernels (Note [Conv geometry]): per
 * sample, im2col (skipped for 1x1 stride-1 unpadded convs, whose input
 * already is the column matrix) and one BLAS GEMM per group; the transpose
 * runs the GEMM the other way and col2im; the weight gradient sums
 * g_n @ col_n^T over the batch. Note [Conv threads] says how work is split. */
#include "conv_internal.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>

/* Note [Conv threads]: when one group's GEMM is small (OpenBLAS then runs it
 * on the calling thread, see blas.c) and the batch has several samples, the
 * batch is split across our threads, each with its own column buffer;
 * otherwise samples run one after another and OpenBLAS threads each GEMM;
 * im2col / col2im then split their channels across our threads only for a
 * single sample: between two OpenBLAS-threaded GEMMs, an OpenMP region
 * leaves its workers spin-waiting on the cores OpenBLAS's threads need,
 * which made a batched conv up to ~50x slower (the spin outlives the next
 * GEMM on a busy machine). Every output element is computed by
 * the same sequence of operations either way. The weight gradient sums over
 * the batch in a fixed number of chunks that depends only on the shapes
 * (partial sums added in chunk order), so it never depends on the thread
 * count either. */
#define CONV_SMALL_GEMM 262144
#define WGRAD_MAX_CHUNKS 16
#define COL_GRAIN 32768

typedef struct conv_job {
    const cg_conv_geom *g;
    cg_dtype dt;
    size_t es;
    bool pointwise;         /* 1x1, stride 1, no padding: col = the sample itself */
    int64_t cin_g, cout_g;  /* channels per group */
    int64_t K, L, P;        /* K = cin_g*kvol (GEMM depth), L = out volume, P = in volume */
    const char *a, *b, *bias;
    char *out;
    int64_t nchunks;        /* weight grad */
    char *partials;         /* weight grad: (nchunks-1, cout, K) */
    atomic_int oom;
} conv_job;

/* C (m,n) = alpha * op(A) @ op(B) + beta * C, row-major, leading dims given. */
static void gemm(cg_dtype dt, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void *A, int64_t lda,
                 const void *B, int64_t ldb, double beta, void *C, int64_t ldc) {
    CBLAS_TRANSPOSE TA = ta ? CblasTrans : CblasNoTrans, TB = tb ? CblasTrans : CblasNoTrans;
    if (dt == CG_DTYPE_F32)
        cblas_sgemm(CblasRowMajor, TA, TB, (blasint)m, (blasint)n, (blasint)k, 1.0f, (const float *)A, (blasint)lda,
                    (const float *)B, (blasint)ldb, (float)beta, (float *)C, (blasint)ldc);
    else
        cblas_dgemm(CblasRowMajor, TA, TB, (blasint)m, (blasint)n, (blasint)k, 1.0, (const double *)A, (blasint)lda,
                    (const double *)B, (blasint)ldb, beta, (double *)C, (blasint)ldc);
}

static void job_init(conv_job *j, cg_dtype dt, const cg_conv_geom *g) {
    memset(j, 0, sizeof *j);
    j->g = g;
    j->dt = dt;
    j->es = cg_dtype_size(dt);
    j->cin_g = g->cin / g->groups;
    j->cout_g = g->cout / g->groups;
    j->K = j->cin_g * cg_conv_vol(g->k);
    j->L = cg_conv_vol(g->out);
    j->P = cg_conv_vol(g->in);
    j->pointwise = cg_conv_vol(g->k) == 1 && j->L == j->P;
    for (int d = 0; d < 3; d++)
        if (g->stride[d] != 1 || g->pad[d] != 0) j->pointwise = false;
}

/* Split the batch across threads (Note [Conv threads])? */
static bool batch_parallel(const conv_job *j) {
    return j->g->n > 1 && j->cout_g * j->K * j->L < CONV_SMALL_GEMM;
}

static char *col_buffer(conv_job *j) {
    if (j->pointwise) return NULL;
    char *col = malloc((size_t)(j->g->cin * cg_conv_vol(j->g->k) * j->L) * j->es);
    if (!col) atomic_store(&j->oom, 1);
    return col;
}

typedef struct col_task {
    const conv_job *j;
    const char *src;
    char *dst;
} col_task;

static void im2col_range(int64_t c0, int64_t c1, void *p) {
    const col_task *t = p;
    cg_im2col(t->j->dt, t->j->g, c0, c1, t->src, t->dst);
}

static void col2im_range(int64_t c0, int64_t c1, void *p) {
    const col_task *t = p;
    cg_col2im(t->j->dt, t->j->g, c0, c1, t->src, t->dst);
}

/* Split a column transform of cin channels across our threads: only for a
 * single sample (Note [Conv threads]); else run fn on the calling thread. */
static void col_parallel(const conv_job *j, cg_range_fn fn, col_task *t) {
    if (j->g->n != 1) {
        fn(0, j->g->cin, t);
        return;
    }
    int64_t per_channel = cg_conv_vol(j->g->k) * j->L;
    cg_parallel_for(j->g->cin, COL_GRAIN / (per_channel > 0 ? per_channel : 1) + 1, fn, t);
}

/* Column matrix of sample x_n (cin, in...): x_n itself when pointwise. */
static const char *columns(const conv_job *j, const char *xn, char *col) {
    if (j->pointwise) return xn;
    col_task t = {j, xn, col};
    col_parallel(j, im2col_range, &t);
    return col;
}

/* out (C, L) += bias[c] on every row. */
static void add_bias(cg_dtype dt, const char *bias, char *out, int64_t C, int64_t L) {
    for (int64_t c = 0; c < C; c++) {
        if (dt == CG_DTYPE_F32) {
            float b = ((const float *)bias)[c], *o = (float *)out + c * L;
            for (int64_t l = 0; l < L; l++) o[l] += b;
        } else {
            double b = ((const double *)bias)[c], *o = (double *)out + c * L;
            for (int64_t l = 0; l < L; l++) o[l] += b;
        }
    }
}

/* ---------------------------------------------------------------- forward */

static void forward_range(int64_t n0, int64_t n1, void *p) {
    conv_job *j = p;
    const cg_conv_geom *g = j->g;
    char *col = col_buffer(j);
    if (!j->pointwise && !col) return;
    for (int64_t n = n0; n < n1; n++) {
        const char *src = columns(j, j->a + (size_t)(n * g->cin * j->P) * j->es, col);
        char *yn = j->out + (size_t)(n * g->cout * j->L) * j->es;
        for (int64_t gi = 0; gi < g->groups; gi++)
            gemm(j->dt, false, false, j->cout_g, j->L, j->K, j->b + (size_t)(gi * j->cout_g * j->K) * j->es, j->K,
                 src + (size_t)(gi * j->K * j->L) * j->es, j->L, 0.0, yn + (size_t)(gi * j->cout_g * j->L) * j->es,
                 j->L);
        if (j->bias) add_bias(j->dt, j->bias, yn, g->cout, j->L);
    }
    free(col);
}

cg_status cg_conv_cpu_forward(cg_dtype dt, const cg_conv_geom *g, const void *x, const void *w, const void *bias,
                              void *y) {
    conv_job j;
    job_init(&j, dt, g);
    int64_t total = g->n * g->cout * j.L;
    if (total == 0) return CG_OK;
    if (j.K == 0) { /* no input channels: the bias alone */
        memset(y, 0, (size_t)total * j.es);
        for (int64_t n = 0; bias && n < g->n; n++)
            add_bias(dt, bias, (char *)y + (size_t)(n * g->cout * j.L) * j.es, g->cout, j.L);
        return CG_OK;
    }
    j.a = x;
    j.b = w;
    j.bias = bias;
    j.out = y;
    if (batch_parallel(&j)) cg_parallel_for(g->n, 1, forward_range, &j);
    else forward_range(0, g->n, &j);
    return atomic_load(&j.oom) ? cg_set_error(CG_ERR_OOM, "[conv] out of memory for the column buffer") : CG_OK;
}

/* ---------------------------------------------------------------- transpose */

static void transpose_range(int64_t n0, int64_t n1, void *p) {
    conv_job *j = p;
    const cg_conv_geom *g = j->g;
    char *col = col_buffer(j);
    if (!j->pointwise && !col) return;
    for (int64_t n = n0; n < n1; n++) {
        const char *yn = j->a + (size_t)(n * g->cout * j->L) * j->es;
        char *xn = j->out + (size_t)(n * g->cin * j->P) * j->es;
        char *dst = j->pointwise ? xn : col;
        /* col_g (K, L) = W_g^T (K, cout_g) @ y_g (cout_g, L) */
        for (int64_t gi = 0; gi < g->groups; gi++)
            gemm(j->dt, true, false, j->K, j->L, j->cout_g, j->b + (size_t)(gi * j->cout_g * j->K) * j->es, j->K,
                 yn + (size_t)(gi * j->cout_g * j->L) * j->es, j->L, 0.0, dst + (size_t)(gi * j->K * j->L) * j->es,
                 j->L);
        if (!j->pointwise) {
            memset(xn, 0, (size_t)(g->cin * j->P) * j->es);
            col_task t = {j, col, xn};
            col_parallel(j, col2im_range, &t);
        }
        if (j->bias) add_bias(j->dt, j->bias, xn, g->cin, j->P);
    }
    free(col);
}

cg_status cg_conv_cpu_transpose(cg_dtype dt, const cg_conv_geom *g, const void *y, const void *w, const void *bias,
                                void *x) {
    conv_job j;
    job_init(&j, dt, g);
    int64_t total = g->n * g->cin * j.P;
    if (total == 0) return CG_OK;
    if (j.L == 0 || j.cout_g == 0) { /* nothing reaches x: the bias alone */
        memset(x, 0, (size_t)total * j.es);
        for (int64_t n = 0; bias && n < g->n; n++)
            add_bias(dt, bias, (char *)x + (size_t)(n * g->cin * j.P) * j.es, g->cin, j.P);
        return CG_OK;
    }
    j.a = y;
    j.b = w;
    j.bias = bias;
    j.out = x;
    if (batch_parallel(&j)) cg_parallel_for(g->n, 1, transpose_range, &j);
    else transpose_range(0, g->n, &j);
    return atomic_load(&j.oom) ? cg_set_error(CG_ERR_OOM, "[conv_transpose] out of memory for the column buffer")
                               : CG_OK;
}

/* ---------------------------------------------------------------- weight gradient */

/* Chunks [c0, c1) of the batch: chunk c sums its samples into its own
 * (cout, K) buffer (chunk 0 writes the result directly). */
static void wgrad_range(int64_t c0, int64_t c1, void *p) {
    conv_job *j = p;
    const cg_conv_geom *g = j->g;
    char *col = col_buffer(j);
    if (!j->pointwise && !col) return;
    size_t wsize = (size_t)(g->cout * j->K) * j->es;
    for (int64_t c = c0; c < c1; c++) {
        char *acc = c == 0 ? j->out : j->partials + (size_t)(c - 1) * wsize;
        int64_t n0 = g->n * c / j->nchunks, n1 = g->n * (c + 1) / j->nchunks;
        for (int64_t n = n0; n < n1; n++) {
            const char *src = columns(j, j->a + (size_t)(n * g->cin * j->P) * j->es, col);
            const char *yn = j->b + (size_t)(n * g->cout * j->L) * j->es;
            /* W_g (cout_g, K) += y_g (cout_g, L) @ col_g^T (L, K) */
            for (int64_t gi = 0; gi < g->groups; gi++)
                gemm(j->dt, false, true, j->cout_g, j->K, j->L, yn + (size_t)(gi * j->cout_g * j->L) * j->es, j->L,
                     src + (size_t)(gi * j->K * j->L) * j->es, j->L, n == n0 ? 0.0 : 1.0,
                     acc + (size_t)(gi * j->cout_g * j->K) * j->es, j->K);
        }
    }
    free(col);
}

cg_status cg_conv_cpu_weight_grad(cg_dtype dt, const cg_conv_geom *g, const void *x, const void *y, void *w) {
    conv_job j;
    job_init(&j, dt, g);
    int64_t wnum = g->cout * j.K;
    if (wnum == 0) return CG_OK;
    if (g->n == 0 || j.L == 0) {
        memset(w, 0, (size_t)wnum * j.es);
        return CG_OK;
    }
    j.a = x;
    j.b = y;
    j.out = w;
    j.nchunks = batch_parallel(&j) ? (g->n < WGRAD_MAX_CHUNKS ? g->n : WGRAD_MAX_CHUNKS) : 1;
    if (j.nchunks > 1) {
        j.partials = malloc((size_t)((j.nchunks - 1) * wnum) * j.es);
        if (!j.partials) return cg_set_error(CG_ERR_OOM, "[conv_weight_grad] out of memory for partial sums");
        cg_parallel_for(j.nchunks, 1, wgrad_range, &j);
        for (int64_t c = 1; c < j.nchunks && !atomic_load(&j.oom); c++) {
            if (dt == CG_DTYPE_F32) {
                float *o = w;
                const float *s = (const float *)j.partials + (c - 1) * wnum;
                for (int64_t i = 0; i < wnum; i++) o[i] += s[i];
            } else {
                double *o = w;
                const double *s = (const double *)j.partials + (c - 1) * wnum;
                for (int64_t i = 0; i < wnum; i++) o[i] += s[i];
            }
        }
        free(j.partials);
    } else {
        wgrad_range(0, 1, &j);
    }
    return atomic_load(&j.oom) ? cg_set_error(CG_ERR_OOM, "[conv_weight_grad] out of memory for the column buffer")
                               : CG_OK;
}
