/* conv_gemm.c — the CPU convolution kernels (Note [Conv geometry]): the
 * batch in chunks of samples (Note [Conv chunks]), each chunk one column
 * matrix and one BLAS GEMM per group; the transpose runs the GEMM the other
 * way and col2im; the weight gradient accumulates one GEMM per chunk. */
#include "conv_internal.h"

#include <cblas.h>
#include <string.h>

/* Note [Conv chunks]: the samples of a chunk lay their columns side by side
 * in one (cin*kvol, B*L) matrix (im2col with row stride B*L), so each group
 * is one GEMM of width B*L instead of B narrow ones: a narrow GEMM (a 14x14
 * output is 196 columns) spends much of its time packing and on edges, and
 * threading it costs a pool hand-off per sample. The GEMM results
 * (cout, B*L) are then copied to the (B, cout, L) output, the bias added on
 * the way. B is the largest count whose column matrix and result fit
 * CONV_CHUNK_BYTES (at least 1): it depends only on the shapes.
 *
 * Note [Conv threads]: the GEMMs are threaded by OpenBLAS; the column
 * transforms and copies between them split (sample, channel) pairs across
 * our threads. The two pools take turns and never nest (an OpenBLAS call
 * made from inside one of our parallel regions would wait for OpenBLAS's
 * busy workers). OpenBLAS splits a GEMM over rows and columns, never over
 * the depth, and every column copy is a plain copy, so every output element
 * is computed by the same operations whatever the thread count; the weight
 * gradient sums its chunks in chunk order. */
#define CONV_CHUNK_BYTES ((size_t)2 << 20)
#define COL_GRAIN 32768

typedef struct conv_job {
    const cg_conv_geom *g;
    cg_dtype dt;
    size_t es;
    bool pointwise;         /* 1x1, stride 1, no padding: a sample's columns are the sample itself */
    int64_t cin_g, cout_g;  /* channels per group */
    int64_t K, L, P;        /* K = cin_g*kvol (GEMM depth), L = out volume, P = in volume */
    int64_t rows;           /* cin*kvol: rows of the column matrix */
    int64_t B;              /* samples per chunk */
    const char *a, *b, *bias;
    char *out;
    /* the current chunk */
    int64_t n0, nb;         /* first sample, count */
    char *col;              /* (rows, nb*L) */
    char *mat;              /* (cout, nb*L): GEMM result or gathered gradient */
    const char *src;        /* copies: source */
    char *dst;              /* copies: destination */
    int64_t C;              /* copies: channels per sample */
} conv_job;

/* C (m,n) = op(A) @ op(B) + beta * C, row-major, leading dims given. */
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
    j->rows = g->cin * cg_conv_vol(g->k);
    j->pointwise = cg_conv_vol(g->k) == 1 && j->L == j->P;
    for (int d = 0; d < 3; d++)
        if (g->stride[d] != 1 || g->pad[d] != 0) j->pointwise = false;
    size_t per_sample = (size_t)((j->rows + g->cout) * j->L) * j->es;
    int64_t B = per_sample ? (int64_t)(CONV_CHUNK_BYTES / per_sample) : g->n;
    j->B = B < 1 ? 1 : B > g->n ? g->n : B;
}

/* Scratch comes from the caching allocator: a fresh column buffer of
 * several MB would cost page faults on every call. */
static const cg_device k_cpu = {CG_DEVICE_CPU, 0};

/* The chunk's buffers: col (unless a single pointwise sample needs none) and,
 * for several samples, mat. false + CG_ERR_OOM on failure. */
static bool chunk_alloc(conv_job *j, const char *op) {
    size_t w = (size_t)(j->B * j->L) * j->es;
    if (!(j->B == 1 && j->pointwise) && !(j->col = cg_alloc((size_t)j->rows * w, k_cpu))) goto oom;
    if (j->B > 1 && !(j->mat = cg_alloc((size_t)j->g->cout * w, k_cpu))) goto oom;
    return true;
oom:
    cg_set_error(CG_ERR_OOM, "[%s] out of memory for the column buffer", op);
    return false;
}

static void chunk_free(conv_job *j) {
    size_t w = (size_t)(j->B * j->L) * j->es;
    if (j->col) cg_free(j->col, (size_t)j->rows * w, k_cpu);
    if (j->mat) cg_free(j->mat, (size_t)j->g->cout * w, k_cpu);
}

/* Run fn over the chunk's (sample, channel) pairs, per_item elements of work each. */
static void chunk_parallel(const conv_job *j, int64_t channels, int64_t per_item, cg_range_fn fn) {
    cg_parallel_for(j->nb * channels, COL_GRAIN / (per_item > 0 ? per_item : 1) + 1, fn, (void *)j);
}

/* pairs [i0, i1) -> im2col of x (the job's `src`, all samples) into col */
static void im2col_pairs(int64_t i0, int64_t i1, void *p) {
    const conv_job *j = p;
    const int64_t cin = j->g->cin, ld = j->nb * j->L;
    for (int64_t i = i0; i < i1;) {
        int64_t s = i / cin, c0 = i % cin, c1 = c0 + (i1 - i) < cin ? c0 + (i1 - i) : cin;
        cg_im2col(j->dt, j->g, c0, c1, j->src + (size_t)((j->n0 + s) * cin * j->P) * j->es,
                  j->col + (size_t)(s * j->L) * j->es, ld);
        i += c1 - c0;
    }
}

/* pairs [i0, i1) -> x[n, c] = col2im of col (dst = x, all samples), zeroed first */
static void col2im_pairs(int64_t i0, int64_t i1, void *p) {
    const conv_job *j = p;
    const int64_t cin = j->g->cin, ld = j->nb * j->L;
    for (int64_t i = i0; i < i1; i++) {
        int64_t s = i / cin, c = i % cin;
        char *xn = j->dst + (size_t)((j->n0 + s) * cin * j->P) * j->es;
        memset(xn + (size_t)(c * j->P) * j->es, 0, (size_t)j->P * j->es);
        cg_col2im(j->dt, j->g, c, c + 1, j->col + (size_t)(s * j->L) * j->es, xn, ld);
    }
}

/* out[n, c, :] += bias[c] for the rows of (n, c) pairs */
static void add_bias_row(cg_dtype dt, const char *bias, int64_t c, char *row, int64_t L) {
    if (dt == CG_DTYPE_F32) {
        float b = ((const float *)bias)[c], *o = (float *)row;
        for (int64_t l = 0; l < L; l++) o[l] += b;
    } else {
        double b = ((const double *)bias)[c], *o = (double *)row;
        for (int64_t l = 0; l < L; l++) o[l] += b;
    }
}

/* pairs [i0, i1) -> dst[n0+s, c, :] = mat[c, s*L ...] (+ bias[c]): the
 * (C, nb*L) GEMM result to the (N, C, L) output */
static void scatter_pairs(int64_t i0, int64_t i1, void *p) {
    const conv_job *j = p;
    const int64_t C = j->C, L = j->L;
    for (int64_t i = i0; i < i1; i++) {
        int64_t s = i / C, c = i % C;
        char *row = j->dst + (size_t)(((j->n0 + s) * C + c) * L) * j->es;
        memcpy(row, j->mat + (size_t)((c * j->nb + s) * L) * j->es, (size_t)L * j->es);
        if (j->bias) add_bias_row(j->dt, j->bias, c, row, L);
    }
}

/* pairs [i0, i1) -> mat[c, s*L ...] = src[n0+s, c, :]: a (N, C, L) gradient
 * gathered to the (C, nb*L) layout of the GEMMs */
static void gather_pairs(int64_t i0, int64_t i1, void *p) {
    const conv_job *j = p;
    const int64_t C = j->C, L = j->L;
    for (int64_t i = i0; i < i1; i++) {
        int64_t s = i / C, c = i % C;
        memcpy(j->mat + (size_t)((c * j->nb + s) * L) * j->es, j->src + (size_t)(((j->n0 + s) * C + c) * L) * j->es,
               (size_t)L * j->es);
    }
}

/* pairs [i0, i1) -> bias added to the rows of dst (N, C, L) */
static void bias_pairs(int64_t i0, int64_t i1, void *p) {
    const conv_job *j = p;
    for (int64_t i = i0; i < i1; i++) {
        int64_t s = i / j->C, c = i % j->C;
        add_bias_row(j->dt, j->bias, c, j->dst + (size_t)(((j->n0 + s) * j->C + c) * j->L) * j->es, j->L);
    }
}

/* The chunk's column matrix (rows, nb*L) of x: col, or x_n itself for a single pointwise sample. */
static const char *chunk_columns(conv_job *j, const char *x) {
    if (j->nb == 1 && j->pointwise) return x + (size_t)(j->n0 * j->g->cin * j->P) * j->es;
    j->src = x;
    chunk_parallel(j, j->g->cin, cg_conv_vol(j->g->k) * j->L, im2col_pairs);
    return j->col;
}

/* The chunk's gradient (C = cout, nb*L) of y (N, cout, L): mat, or y_n itself for a single sample. */
static const char *chunk_gradient(conv_job *j, const char *y) {
    if (j->nb == 1) return y + (size_t)(j->n0 * j->g->cout * j->L) * j->es;
    j->src = y;
    j->C = j->g->cout;
    chunk_parallel(j, j->C, j->L, gather_pairs);
    return j->mat;
}

static void next_chunk(conv_job *j, int64_t n0) {
    j->n0 = n0;
    j->nb = j->g->n - n0 < j->B ? j->g->n - n0 : j->B;
}

/* ---------------------------------------------------------------- forward */

cg_status cg_conv_cpu_forward(cg_dtype dt, const cg_conv_geom *g, const void *x, const void *w, const void *bias,
                              void *y) {
    conv_job j;
    job_init(&j, dt, g);
    int64_t total = g->n * g->cout * j.L;
    if (total == 0) return CG_OK;
    j.bias = bias;
    j.dst = y;
    j.C = g->cout;
    if (j.K == 0) { /* no input channels: the bias alone */
        memset(y, 0, (size_t)total * j.es);
        for (int64_t n0 = 0; bias && n0 < g->n; n0 += j.nb) {
            next_chunk(&j, n0);
            chunk_parallel(&j, g->cout, j.L, bias_pairs);
        }
        return CG_OK;
    }
    if (!chunk_alloc(&j, "conv")) return cg_last_error();
    for (int64_t n0 = 0; n0 < g->n; n0 += j.nb) {
        next_chunk(&j, n0);
        const char *col = chunk_columns(&j, x);
        const int64_t ld = j.nb * j.L;
        /* single sample: the GEMM writes y_n (cout, L) directly */
        char *res = j.nb == 1 ? (char *)y + (size_t)(n0 * g->cout * j.L) * j.es : j.mat;
        for (int64_t gi = 0; gi < g->groups; gi++)
            gemm(dt, false, false, j.cout_g, ld, j.K, (const char *)w + (size_t)(gi * j.cout_g * j.K) * j.es, j.K,
                 col + (size_t)(gi * j.K * ld) * j.es, ld, 0.0, res + (size_t)(gi * j.cout_g * ld) * j.es, ld);
        if (j.nb > 1) chunk_parallel(&j, g->cout, j.L, scatter_pairs);
        else if (bias) chunk_parallel(&j, g->cout, j.L, bias_pairs);
    }
    chunk_free(&j);
    return CG_OK;
}

/* ---------------------------------------------------------------- transpose */

cg_status cg_conv_cpu_transpose(cg_dtype dt, const cg_conv_geom *g, const void *y, const void *w, const void *bias,
                                void *x) {
    conv_job j;
    job_init(&j, dt, g);
    int64_t total = g->n * g->cin * j.P;
    if (total == 0) return CG_OK;
    j.bias = bias;
    j.dst = x;
    if (j.L == 0 || j.cout_g == 0) { /* nothing reaches x: the bias alone */
        memset(x, 0, (size_t)total * j.es);
        j.L = j.P; /* bias_pairs walks rows of x */
        j.C = g->cin;
        for (int64_t n0 = 0; bias && n0 < g->n; n0 += j.nb) {
            next_chunk(&j, n0);
            chunk_parallel(&j, g->cin, j.P, bias_pairs);
        }
        return CG_OK;
    }
    if (!chunk_alloc(&j, "conv_transpose")) return cg_last_error();
    for (int64_t n0 = 0; n0 < g->n; n0 += j.nb) {
        next_chunk(&j, n0);
        const char *gy = chunk_gradient(&j, y);
        const int64_t ld = j.nb * j.L;
        /* a single pointwise sample: the GEMM writes x_n directly */
        bool direct = j.nb == 1 && j.pointwise;
        char *dst = direct ? (char *)x + (size_t)(n0 * g->cin * j.P) * j.es : j.col;
        /* col_g (K, nb*L) = W_g^T (K, cout_g) @ gy_g (cout_g, nb*L) */
        for (int64_t gi = 0; gi < g->groups; gi++)
            gemm(dt, true, false, j.K, ld, j.cout_g, (const char *)w + (size_t)(gi * j.cout_g * j.K) * j.es, j.K,
                 gy + (size_t)(gi * j.cout_g * ld) * j.es, ld, 0.0, dst + (size_t)(gi * j.K * ld) * j.es, ld);
        if (!direct) chunk_parallel(&j, g->cin, cg_conv_vol(g->k) * j.L, col2im_pairs);
        if (bias) {
            int64_t L = j.L;
            j.L = j.P, j.C = g->cin;
            chunk_parallel(&j, g->cin, j.P, bias_pairs);
            j.L = L;
        }
    }
    chunk_free(&j);
    return CG_OK;
}

/* ---------------------------------------------------------------- weight gradient */

cg_status cg_conv_cpu_weight_grad(cg_dtype dt, const cg_conv_geom *g, const void *x, const void *y, void *w) {
    conv_job j;
    job_init(&j, dt, g);
    int64_t wnum = g->cout * j.K;
    if (wnum == 0) return CG_OK;
    if (g->n == 0 || j.L == 0) {
        memset(w, 0, (size_t)wnum * j.es);
        return CG_OK;
    }
    if (!chunk_alloc(&j, "conv_weight_grad")) return cg_last_error();
    for (int64_t n0 = 0; n0 < g->n; n0 += j.nb) {
        next_chunk(&j, n0);
        const char *col = chunk_columns(&j, x);
        const char *gy = chunk_gradient(&j, y);
        const int64_t ld = j.nb * j.L;
        /* W_g (cout_g, K) (+)= gy_g (cout_g, nb*L) @ col_g^T (nb*L, K), chunks summed in order */
        for (int64_t gi = 0; gi < g->groups; gi++)
            gemm(dt, false, true, j.cout_g, j.K, ld, gy + (size_t)(gi * j.cout_g * ld) * j.es, ld,
                 col + (size_t)(gi * j.K * ld) * j.es, ld, n0 == 0 ? 0.0 : 1.0,
                 (char *)w + (size_t)(gi * j.cout_g * j.K) * j.es, j.K);
    }
    chunk_free(&j);
    return CG_OK;
}

/* ---------------------------------------------------------------- bias gradient */

/* Channels [c0, c1): out[c] = sum of g[:, c, :] in eight double lanes (the
 * order is fixed per channel; Note [Batch norm kernels] says why lanes). */
typedef struct bias_job {
    cg_dtype dt;
    const void *g;
    void *out;
    int64_t N, C, L;
} bias_job;

static void bias_grad_range(int64_t c0, int64_t c1, void *p) {
    const bias_job *j = p;
    for (int64_t c = c0; c < c1; c++) {
        double acc[8] = {0};
        for (int64_t n = 0; n < j->N; n++) {
            int64_t off = (n * j->C + c) * j->L, l = 0;
            if (j->dt == CG_DTYPE_F32) {
                const float *r = (const float *)j->g + off;
                for (; l + 8 <= j->L; l += 8)
                    for (int k = 0; k < 8; k++) acc[k] += (double)r[l + k];
                for (; l < j->L; l++) acc[l % 8] += (double)r[l];
            } else {
                const double *r = (const double *)j->g + off;
                for (; l + 8 <= j->L; l += 8)
                    for (int k = 0; k < 8; k++) acc[k] += r[l + k];
                for (; l < j->L; l++) acc[l % 8] += r[l];
            }
        }
        double s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        if (j->dt == CG_DTYPE_F32) ((float *)j->out)[c] = (float)s;
        else ((double *)j->out)[c] = s;
    }
}

void cg_conv_cpu_bias_grad(cg_dtype dt, int64_t N, int64_t C, int64_t L, const void *g, void *out) {
    bias_job j = {dt, g, out, N, C, L};
    int64_t per = N * L;
    cg_parallel_for(C, per > 0 && COL_GRAIN / per > 0 ? COL_GRAIN / per : 1, bias_grad_range, &j);
}
