/* conv_gemm.c — the CPU convolution kernels (Note [Conv geometry]): the
 * batch in chunks of samples (Note [Conv chunks]), each chunk one column
 * matrix and one BLAS GEMM per group; the transpose runs the GEMM the other
 * way and col2im; the weight gradient sums one GEMM per chunk. Chunks run
 * in parallel (Note [Conv threads]). Also the bias gradient. */
#include "conv_internal.h"

#include "../../core/half.h"

#include "cblas_names.h"
#include <pthread.h>
#include <string.h>

/* Note [Conv chunks]: the samples of a chunk lay their columns side by side
 * in one (cin*kvol, B*L) matrix (im2col with row stride B*L), so each group
 * is one GEMM of width B*L instead of B narrow ones (a 14x14 output is 196
 * columns: a GEMM that narrow spends much of its time packing and on
 * edges). The results (cout, B*L) are copied to the (B, cout, L) output,
 * the bias added on the way. Outputs of CONV_WIDE or more positions per
 * sample are wide enough for a GEMM each: those write the output directly,
 * accumulating onto the bias (beta = 1), which saves the copy. B keeps a
 * chunk's column matrix and result within CONV_CHUNK_BYTES (cache-sized:
 * larger chunks were slower); the chunk count is then rounded up to a
 * multiple of CONV_CHUNK_MULT so chunks share out evenly over 2, 4 or 8
 * threads. A batch that fits in one chunk (or one sample that does not fit)
 * is cut into units instead: (sample, block of CONV_UNIT_COLS output
 * positions), one GEMM per group each. All of it depends only on the shapes.
 *
 * Note [Conv threads]: OpenBLAS's result for an element depends on how a
 * GEMM is cut (its threads split the columns, and an element's sum depends
 * on where its column falls), so no conv GEMM is threaded by OpenBLAS: with
 * several threads, OpenBLAS is set to one thread for the duration of the op
 * (blas_serial) and the GEMMs, cut by the shapes alone, run on our threads.
 * Several chunks: each thread takes whole chunks, the next free one as it
 * finishes one (im2col, GEMM, copies: one parallel region per op, a chunk's
 * data staying in its core's cache). One
 * chunk: the column transforms split (sample, channel) pairs and the GEMMs
 * split units across threads. The weight gradient is one partial sum per
 * chunk or unit, added in order. So no result depends on the thread count.
 *
 * Note [Half conv]: a bfloat16 / float16 x (the input of conv and of the
 * weight gradient) or y (the input of the transpose, the gradient of the
 * weight gradient) is not converted as a whole: im2col reads x and writes
 * float32 columns, and the chunk's gather converts y into its float32
 * (cout, nb*L) matrix, so those chunk-sized panels of the GEMMs are the only
 * float32 forms (the single chunk, at most one chunk's worth of samples or
 * one sample, converts its y before its units run). The kernels then run in
 * float32; the weight is float32 (the op converts it, it is small). */
#define CONV_CHUNK_BYTES ((size_t)2 << 20)
#define CONV_CHUNK_MULT 8
#define CONV_WIDE 512
#define CONV_UNIT_COLS 1024
#define COL_GRAIN 32768

typedef struct conv_job {
    const cg_conv_geom *g;
    cg_dtype dt;
    size_t es;
    cg_dtype xdt, ydt;      /* x's / y's dtype: dt, or a half type converted per chunk (Note [Half conv]) */
    size_t xes, yes;
    bool pointwise;         /* 1x1, stride 1, no padding: a sample's columns are the sample itself */
    int64_t cin_g, cout_g;  /* channels per group */
    int64_t K, L, P;        /* K = cin_g*kvol (GEMM depth), L = out volume, P = in volume */
    int64_t rows;           /* cin*kvol: rows of the column matrix */
    int64_t B, nchunks;     /* samples per chunk, chunks */
    const char *x, *w, *y, *bias; /* operands (which ones depends on the kernel) */
    char *out;
    char *partials;         /* weight gradient: (chunks or units - 1, cout, K) */
    atomic_llong next;      /* the next chunk not yet taken by a worker */
    atomic_int oom;
} conv_job;

/* One chunk being processed by one thread. */
typedef struct conv_chunk {
    const conv_job *j;
    int64_t n0, nb;         /* first sample, count */
    char *col;              /* (rows, nb*L) */
    char *mat;              /* (cout, nb*L): GEMM result or gathered gradient */
    const char *src;        /* copies: source */
    char *dst;              /* copies: destination */
    int64_t C, R;           /* copies: channels per sample, row length */
} conv_chunk;

void cg_conv_gemm(cg_dtype dt, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void *A, int64_t lda,
                 const void *B, int64_t ldb, double beta, void *C, int64_t ldc) {
    CBLAS_TRANSPOSE TA = ta ? CblasTrans : CblasNoTrans, TB = tb ? CblasTrans : CblasNoTrans;
    if (dt == CG_DTYPE_F32)
        cblas_sgemm(CblasRowMajor, TA, TB, (blasint)m, (blasint)n, (blasint)k, 1.0f, (const float *)A, (blasint)lda,
                    (const float *)B, (blasint)ldb, (float)beta, (float *)C, (blasint)ldc);
    else
        cblas_dgemm(CblasRowMajor, TA, TB, (blasint)m, (blasint)n, (blasint)k, 1.0, (const double *)A, (blasint)lda,
                    (const double *)B, (blasint)ldb, beta, (double *)C, (blasint)ldc);
}

/* OpenBLAS on one thread while any conv runs (Note [Conv threads]); the
 * last one out restores the thread count. */
static pthread_mutex_t g_serial_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_serial_users;

void cg_conv_blas_serial(bool enter) {
    pthread_mutex_lock(&g_serial_lock);
    if (enter ? g_serial_users++ == 0 : --g_serial_users == 0)
        cg_blas_set_num_threads(enter ? 1 : cg_get_num_threads());
    pthread_mutex_unlock(&g_serial_lock);
}

void cg_conv_chunking(int64_t n, size_t per_sample, int64_t *samples, int64_t *chunks) {
    /* Note [Conv chunks] */
    int64_t N = n > 0 ? n : 1;
    int64_t fit = per_sample ? (int64_t)(CONV_CHUNK_BYTES / per_sample) : N;
    fit = fit < 1 ? 1 : fit > N ? N : fit;
    int64_t nch = (N + fit - 1) / fit;
    if (nch > 1) nch = (nch + CONV_CHUNK_MULT - 1) / CONV_CHUNK_MULT * CONV_CHUNK_MULT;
    if (nch > N) nch = N;
    *samples = (N + nch - 1) / nch;
    *chunks = (N + *samples - 1) / *samples;
}

static void job_init(conv_job *j, cg_dtype dt, const cg_conv_geom *g) {
    memset(j, 0, sizeof *j);
    j->g = g;
    j->dt = j->xdt = j->ydt = dt;
    j->es = j->xes = j->yes = cg_dtype_size(dt);
    j->cin_g = g->cin / g->groups;
    j->cout_g = g->cout / g->groups;
    j->K = j->cin_g * cg_conv_vol(g->k);
    j->L = cg_conv_vol(g->out);
    j->P = cg_conv_vol(g->in);
    j->rows = g->cin * cg_conv_vol(g->k);
    j->pointwise = cg_conv_vol(g->k) == 1 && j->L == j->P;
    for (int d = 0; d < 3; d++)
        if (g->stride[d] != 1 || g->pad[d] != 0) j->pointwise = false;
    cg_conv_chunking(g->n, (size_t)((j->rows + g->cout) * j->L) * j->es, &j->B, &j->nchunks);
}

/* Run a kernel: chunks in parallel (multi), or the single chunk (single),
 * with OpenBLAS on one thread meanwhile (Note [Conv threads]). */
static void run_job(conv_job *j, cg_range_fn multi, void (*single)(conv_job *)) {
    int nt = cg_get_num_threads();
    bool serial = nt > 1;
    if (serial) cg_conv_blas_serial(true);
    /* one worker per thread, each taking the next free chunk (take_chunk) */
    atomic_store(&j->next, 0);
    if (j->nchunks > 1) cg_parallel_for(nt < j->nchunks ? nt : j->nchunks, 1, multi, j);
    else single(j);
    if (serial) cg_conv_blas_serial(false);
}

/* The next chunk for a worker, or -1 when all are taken. Workers take chunks
 * as they finish the previous one: a thread that loses its core for a while
 * (a busy machine) holds up one chunk, not a fixed share of them. Where a
 * chunk runs changes nothing in its result. */
static int64_t take_chunk(conv_job *j) {
    int64_t k = atomic_fetch_add(&j->next, 1);
    return k < j->nchunks ? k : -1;
}

/* The chunk's buffers for chunks of up to B samples: col (unless a single
 * pointwise sample needs none), mat (for several samples, when asked). Scratch comes
 * from the caching allocator: fresh MBs would cost page faults every call. */
static const cg_device k_cpu = {CG_DEVICE_CPU, 0};

static void chunk_free(conv_chunk *c) {
    size_t w = (size_t)(c->j->B * c->j->L) * c->j->es;
    if (c->col) cg_free(c->col, (size_t)c->j->rows * w, k_cpu);
    if (c->mat) cg_free(c->mat, (size_t)c->j->g->cout * w, k_cpu);
}

static bool chunk_alloc(conv_chunk *c, conv_job *j, bool need_mat) {
    size_t w = (size_t)(j->B * j->L) * j->es;
    memset(c, 0, sizeof *c);
    c->j = j;
    bool ok = (j->B == 1 && j->pointwise) || (c->col = cg_alloc((size_t)j->rows * w, k_cpu));
    ok = ok && ((j->B == 1 && j->ydt == j->dt) || !need_mat || (c->mat = cg_alloc((size_t)j->g->cout * w, k_cpu)));
    if (!ok) {
        chunk_free(c);
        atomic_store(&j->oom, 1);
    }
    return ok;
}

static void chunk_select(conv_chunk *c, int64_t chunk) {
    c->n0 = chunk * c->j->B;
    c->nb = c->j->g->n - c->n0 < c->j->B ? c->j->g->n - c->n0 : c->j->B;
}

/* Run fn over the chunk's (sample, channel) pairs, per_item elements of work
 * each: across our threads for a single chunk, inline inside a chunk region. */
static void pairs_parallel(conv_chunk *c, int64_t channels, int64_t per_item, cg_range_fn fn) {
    cg_parallel_for(c->nb * channels, COL_GRAIN / (per_item > 0 ? per_item : 1) + 1, fn, c);
}

/* pairs [i0, i1) -> im2col of x (src, all samples) into col */
static void im2col_pairs(int64_t i0, int64_t i1, void *p) {
    const conv_chunk *c = p;
    const conv_job *j = c->j;
    const int64_t cin = j->g->cin, ld = c->nb * j->L;
    for (int64_t i = i0; i < i1;) {
        int64_t s = i / cin, k0 = i % cin, k1 = k0 + (i1 - i) < cin ? k0 + (i1 - i) : cin;
        const char *xs = c->src + (size_t)((c->n0 + s) * cin * j->P) * j->xes;
        char *cs = c->col + (size_t)(s * j->L) * j->es;
        if (j->xdt != j->dt) cg_im2col_half(j->xdt, j->g, k0, k1, xs, (float *)cs, ld);
        else cg_im2col(j->dt, j->g, k0, k1, xs, cs, ld);
        i += k1 - k0;
    }
}

/* pairs [i0, i1) -> x[n, k] = col2im of col (dst = x, all samples), zeroed first */
static void col2im_pairs(int64_t i0, int64_t i1, void *p) {
    const conv_chunk *c = p;
    const conv_job *j = c->j;
    const int64_t cin = j->g->cin, ld = c->nb * j->L;
    for (int64_t i = i0; i < i1; i++) {
        int64_t s = i / cin, k = i % cin;
        char *xn = c->dst + (size_t)((c->n0 + s) * cin * j->P) * j->es;
        memset(xn + (size_t)(k * j->P) * j->es, 0, (size_t)j->P * j->es);
        cg_col2im(j->dt, j->g, k, k + 1, c->col + (size_t)(s * j->L) * j->es, xn, ld);
    }
}

/* row (R entries) += bias[k] */
static void add_bias_row(cg_dtype dt, const char *bias, int64_t k, char *row, int64_t R) {
    if (dt == CG_DTYPE_F32) {
        float b = ((const float *)bias)[k], *o = (float *)row;
        for (int64_t r = 0; r < R; r++) o[r] += b;
    } else {
        double b = ((const double *)bias)[k], *o = (double *)row;
        for (int64_t r = 0; r < R; r++) o[r] += b;
    }
}

/* pairs [i0, i1) -> dst[n0+s, k, :] = mat[k, s*R ...] (+ bias[k]): a
 * (C, nb*R) GEMM result to the (N, C, R) output */
static void scatter_pairs(int64_t i0, int64_t i1, void *p) {
    const conv_chunk *c = p;
    const conv_job *j = c->j;
    for (int64_t i = i0; i < i1; i++) {
        int64_t s = i / c->C, k = i % c->C;
        char *row = c->dst + (size_t)(((c->n0 + s) * c->C + k) * c->R) * j->es;
        memcpy(row, c->mat + (size_t)((k * c->nb + s) * c->R) * j->es, (size_t)c->R * j->es);
        if (j->bias) add_bias_row(j->dt, j->bias, k, row, c->R);
    }
}

void cg_conv_half_to_f32(cg_dtype dt, const void *src, int64_t n, float *restrict dst) {
    if (dt == CG_DTYPE_BF16)
        for (int64_t i = 0; i < n; i++) dst[i] = cg_bf16_to_f32(((const cg_bf16 *)src)[i]);
    else
        cg_f16_to_f32_n(dst, (const cg_f16 *)src, n);
}

/* pairs [i0, i1) -> mat[k, s*R ...] = src[n0+s, k, :]: a (N, C, R) gradient
 * gathered to the (C, nb*R) layout of the GEMMs (converted from a half y) */
static void gather_pairs(int64_t i0, int64_t i1, void *p) {
    const conv_chunk *c = p;
    const conv_job *j = c->j;
    for (int64_t i = i0; i < i1; i++) {
        int64_t s = i / c->C, k = i % c->C;
        char *dst = c->mat + (size_t)((k * c->nb + s) * c->R) * j->es;
        const char *src = c->src + (size_t)(((c->n0 + s) * c->C + k) * c->R) * j->yes;
        if (j->ydt != j->dt) cg_conv_half_to_f32(j->ydt, src, c->R, (float *)dst);
        else memcpy(dst, src, (size_t)c->R * j->es);
    }
}

/* pairs [i0, i1) -> the rows of dst (N, C, R) set to bias */
static void fill_bias_pairs(int64_t i0, int64_t i1, void *p) {
    const conv_chunk *c = p;
    const conv_job *j = c->j;
    for (int64_t i = i0; i < i1; i++) {
        int64_t s = i / c->C, k = i % c->C;
        char *row = c->dst + (size_t)(((c->n0 + s) * c->C + k) * c->R) * j->es;
        if (j->dt == CG_DTYPE_F32)
            for (int64_t r = 0; r < c->R; r++) ((float *)row)[r] = ((const float *)j->bias)[k];
        else
            for (int64_t r = 0; r < c->R; r++) ((double *)row)[r] = ((const double *)j->bias)[k];
    }
}

/* pairs [i0, i1) -> bias added to the rows of dst (N, C, R) */
static void bias_pairs(int64_t i0, int64_t i1, void *p) {
    const conv_chunk *c = p;
    for (int64_t i = i0; i < i1; i++) {
        int64_t s = i / c->C, k = i % c->C;
        add_bias_row(c->j->dt, c->j->bias, k, c->dst + (size_t)(((c->n0 + s) * c->C + k) * c->R) * c->j->es, c->R);
    }
}

/* The chunk's column matrix (rows, nb*L) of x: col, or x_n itself for a single pointwise sample. */
static const char *chunk_columns(conv_chunk *c) {
    const conv_job *j = c->j;
    if (c->nb == 1 && j->pointwise) return j->x + (size_t)(c->n0 * j->g->cin * j->P) * j->xes;
    c->src = j->x;
    pairs_parallel(c, j->g->cin, cg_conv_vol(j->g->k) * j->L, im2col_pairs);
    return c->col;
}

/* The chunk's gradient (cout, nb*L) of y (N, cout, L): mat, or y_n itself
 * for a single sample that needs no conversion. */
static const char *chunk_gradient(conv_chunk *c) {
    const conv_job *j = c->j;
    if (c->nb == 1 && j->ydt == j->dt) return j->y + (size_t)(c->n0 * j->g->cout * j->L) * j->es;
    c->src = j->y;
    c->C = j->g->cout, c->R = j->L;
    pairs_parallel(c, c->C, c->R, gather_pairs);
    return c->mat;
}

/* ---------------------------------------------------------------- the single chunk in units */

/* Units of the single chunk (Note [Conv chunks]): unit i is sample i / nblk,
 * output positions [l0, l1) of block i % nblk. */
typedef struct unit_job {
    conv_chunk *c;
    const char *col;  /* columns (rows, ld): the chunk's matrix, or a pointwise sample itself */
    char *dst;        /* transpose: where the columns go (ld row stride) */
    int64_t ld, nblk;
} unit_job;

static void unit_at(const unit_job *u, int64_t i, int64_t *s, int64_t *l0, int64_t *n) {
    int64_t L = u->c->j->L;
    *s = i / u->nblk;
    *l0 = i % u->nblk * CONV_UNIT_COLS;
    *n = L - *l0 < CONV_UNIT_COLS ? L - *l0 : CONV_UNIT_COLS;
}

/* Units over threads when each holds enough GEMM work to pay for a thread. */
static void units_parallel(unit_job *u, cg_range_fn fn) {
    const conv_job *j = u->c->j;
    int64_t per = j->g->cout * j->K * (j->L < CONV_UNIT_COLS ? j->L : CONV_UNIT_COLS);
    cg_parallel_for(u->c->nb * u->nblk, per > 0 && 262144 / per > 0 ? 262144 / per : 1, fn, u);
}

static void unit_init(unit_job *u, conv_chunk *c, const char *col) {
    u->c = c;
    u->col = col;
    u->ld = c->nb * c->j->L;
    u->nblk = (c->j->L + CONV_UNIT_COLS - 1) / CONV_UNIT_COLS;
}

/* units -> y_n[:, l0:l0+n] (+)= W @ columns (onto the bias when there is one) */
static void forward_units(int64_t i0, int64_t i1, void *p) {
    const unit_job *u = p;
    const conv_job *j = u->c->j;
    for (int64_t i = i0; i < i1; i++) {
        int64_t s, l0, n;
        unit_at(u, i, &s, &l0, &n);
        char *yn = j->out + (size_t)((u->c->n0 + s) * j->g->cout * j->L) * j->es;
        for (int64_t gi = 0; gi < j->g->groups; gi++)
            cg_conv_gemm(j->dt, false, false, j->cout_g, n, j->K, j->w + (size_t)(gi * j->cout_g * j->K) * j->es, j->K,
                 u->col + (size_t)(gi * j->K * u->ld + s * j->L + l0) * j->es, u->ld, j->bias ? 1.0 : 0.0,
                 yn + (size_t)(gi * j->cout_g * j->L + l0) * j->es, j->L);
    }
}

/* units -> dst columns = W^T @ y_n[:, l0:l0+n] */
static void transpose_units(int64_t i0, int64_t i1, void *p) {
    const unit_job *u = p;
    const conv_job *j = u->c->j;
    for (int64_t i = i0; i < i1; i++) {
        int64_t s, l0, n;
        unit_at(u, i, &s, &l0, &n);
        const char *yn = j->y + (size_t)((u->c->n0 + s) * j->g->cout * j->L) * j->es;
        for (int64_t gi = 0; gi < j->g->groups; gi++)
            cg_conv_gemm(j->dt, true, false, j->K, n, j->cout_g, j->w + (size_t)(gi * j->cout_g * j->K) * j->es, j->K,
                 yn + (size_t)(gi * j->cout_g * j->L + l0) * j->es, j->L, 0.0,
                 u->dst + (size_t)(gi * j->K * u->ld + s * j->L + l0) * j->es, u->ld);
    }
}

/* units -> partial i = y_n[:, l0:l0+n] @ columns^T (unit 0: the result itself) */
static void wgrad_units(int64_t i0, int64_t i1, void *p) {
    const unit_job *u = p;
    const conv_job *j = u->c->j;
    size_t wsize = (size_t)(j->g->cout * j->K) * j->es;
    for (int64_t i = i0; i < i1; i++) {
        int64_t s, l0, n;
        unit_at(u, i, &s, &l0, &n);
        const char *yn = j->y + (size_t)((u->c->n0 + s) * j->g->cout * j->L) * j->es;
        char *acc = i == 0 ? j->out : j->partials + (size_t)(i - 1) * wsize;
        for (int64_t gi = 0; gi < j->g->groups; gi++)
            cg_conv_gemm(j->dt, false, true, j->cout_g, j->K, n, yn + (size_t)(gi * j->cout_g * j->L + l0) * j->es, j->L,
                 u->col + (size_t)(gi * j->K * u->ld + s * j->L + l0) * j->es, u->ld, 0.0,
                 acc + (size_t)(gi * j->cout_g * j->K) * j->es, j->K);
    }
}

static void forward_single(conv_job *j) {
    conv_chunk c;
    if (!chunk_alloc(&c, j, false)) return;
    chunk_select(&c, 0);
    unit_job u;
    unit_init(&u, &c, chunk_columns(&c));
    c.dst = j->out, c.C = j->g->cout, c.R = j->L;
    if (j->bias) pairs_parallel(&c, c.C, c.R, fill_bias_pairs);
    units_parallel(&u, forward_units);
    chunk_free(&c);
}

/* The single chunk's y (all of it: one chunk's worth of samples, or one
 * sample) converted into mat, in y's own layout, for the units to read. */
static void single_y_to_f32(conv_job *j, conv_chunk *c) {
    if (j->ydt == j->dt) return;
    cg_conv_half_to_f32(j->ydt, j->y, c->nb * j->g->cout * j->L, (float *)c->mat);
    j->y = c->mat;
    j->ydt = j->dt;
    j->yes = j->es;
}

static void transpose_single(conv_job *j) {
    conv_chunk c;
    if (!chunk_alloc(&c, j, j->ydt != j->dt)) return;
    chunk_select(&c, 0);
    single_y_to_f32(j, &c);
    unit_job u;
    unit_init(&u, &c, NULL);
    /* a single pointwise sample: the GEMMs write x_0 directly */
    bool direct = c.nb == 1 && j->pointwise;
    u.dst = direct ? j->out : c.col;
    units_parallel(&u, transpose_units);
    c.dst = j->out;
    if (!direct) pairs_parallel(&c, j->g->cin, cg_conv_vol(j->g->k) * j->L, col2im_pairs);
    c.C = j->g->cin, c.R = j->P;
    if (j->bias) pairs_parallel(&c, c.C, c.R, bias_pairs);
    chunk_free(&c);
}

static void wgrad_single(conv_job *j) {
    conv_chunk c;
    if (!chunk_alloc(&c, j, j->ydt != j->dt)) return;
    chunk_select(&c, 0);
    single_y_to_f32(j, &c);
    unit_job u;
    unit_init(&u, &c, chunk_columns(&c));
    units_parallel(&u, wgrad_units);
    chunk_free(&c);
}

/* ---------------------------------------------------------------- forward */

/* a worker: chunks -> y = W @ columns (+ bias) */
static void forward_chunks(int64_t t0, int64_t t1, void *p) {
    conv_job *j = p;
    const cg_conv_geom *g = j->g;
    conv_chunk c;
    (void)t0, (void)t1;
    if (!chunk_alloc(&c, j, true)) return;
    for (int64_t ch; (ch = take_chunk(j)) >= 0;) {
        chunk_select(&c, ch);
        const char *col = chunk_columns(&c);
        const int64_t ld = c.nb * j->L;
        c.dst = j->out, c.C = g->cout, c.R = j->L;
        if (c.nb > 1 && j->L < CONV_WIDE) {
            /* narrow outputs: one GEMM for the chunk, copied out with the bias */
            for (int64_t gi = 0; gi < g->groups; gi++)
                cg_conv_gemm(j->dt, false, false, j->cout_g, ld, j->K, j->w + (size_t)(gi * j->cout_g * j->K) * j->es, j->K,
                     col + (size_t)(gi * j->K * ld) * j->es, ld, 0.0, c.mat + (size_t)(gi * j->cout_g * ld) * j->es,
                     ld);
            pairs_parallel(&c, g->cout, j->L, scatter_pairs);
            continue;
        }
        /* wide outputs: a GEMM per sample into y_n (cout, L), onto the bias */
        if (j->bias) pairs_parallel(&c, g->cout, j->L, fill_bias_pairs);
        for (int64_t s = 0; s < c.nb; s++) {
            char *yn = j->out + (size_t)((c.n0 + s) * g->cout * j->L) * j->es;
            for (int64_t gi = 0; gi < g->groups; gi++)
                cg_conv_gemm(j->dt, false, false, j->cout_g, j->L, j->K, j->w + (size_t)(gi * j->cout_g * j->K) * j->es,
                     j->K, col + (size_t)(gi * j->K * ld + s * j->L) * j->es, ld, j->bias ? 1.0 : 0.0,
                     yn + (size_t)(gi * j->cout_g * j->L) * j->es, j->L);
        }
    }
    chunk_free(&c);
}

/* x read as xdt (Note [Half conv]): columns convert it, never a sample itself */
static void job_set_x(conv_job *j, cg_dtype xdt) {
    if (xdt == j->dt) return;
    CG_ASSERT(j->dt == CG_DTYPE_F32 && (xdt == CG_DTYPE_BF16 || xdt == CG_DTYPE_F16));
    j->xdt = xdt;
    j->xes = cg_dtype_size(xdt);
    j->pointwise = false;
}

/* y read as ydt (Note [Half conv]): gathered per chunk, converted */
static void job_set_y(conv_job *j, cg_dtype ydt) {
    if (ydt == j->dt) return;
    CG_ASSERT(j->dt == CG_DTYPE_F32 && (ydt == CG_DTYPE_BF16 || ydt == CG_DTYPE_F16));
    j->ydt = ydt;
    j->yes = cg_dtype_size(ydt);
}

cg_status cg_conv_cpu_forward(cg_dtype dt, cg_dtype xdt, const cg_conv_geom *g, const void *x, const void *w,
                              const void *bias, void *y) {
    conv_job j;
    job_init(&j, dt, g);
    job_set_x(&j, xdt);
    int64_t total = g->n * g->cout * j.L;
    if (total == 0) return CG_OK;
    if (j.K == 0) { /* no input channels: the bias alone */
        memset(y, 0, (size_t)total * j.es);
        for (int64_t n = 0; bias && n < g->n; n++)
            for (int64_t k = 0; k < g->cout; k++)
                add_bias_row(dt, bias, k, (char *)y + (size_t)((n * g->cout + k) * j.L) * j.es, j.L);
        return CG_OK;
    }
    j.x = x, j.w = w, j.bias = bias, j.out = y;
    run_job(&j, forward_chunks, forward_single);
    return atomic_load(&j.oom) ? cg_set_error(CG_ERR_OOM, "[conv] out of memory for the column buffer") : CG_OK;
}

/* ---------------------------------------------------------------- transpose */

/* a worker: chunks -> x = col2im(W^T @ gradient) (+ bias) */
static void transpose_chunks(int64_t t0, int64_t t1, void *p) {
    conv_job *j = p;
    const cg_conv_geom *g = j->g;
    conv_chunk c;
    (void)t0, (void)t1;
    if (!chunk_alloc(&c, j, true)) return;
    for (int64_t ch; (ch = take_chunk(j)) >= 0;) {
        chunk_select(&c, ch);
        const char *gy = chunk_gradient(&c);
        const int64_t ld = c.nb * j->L;
        /* a single pointwise sample: the GEMM writes x_n directly */
        bool direct = c.nb == 1 && j->pointwise;
        char *dst = direct ? j->out + (size_t)(c.n0 * g->cin * j->P) * j->es : c.col;
        /* col_g (K, nb*L) = W_g^T (K, cout_g) @ gy_g (cout_g, nb*L) */
        for (int64_t gi = 0; gi < g->groups; gi++)
            cg_conv_gemm(j->dt, true, false, j->K, ld, j->cout_g, j->w + (size_t)(gi * j->cout_g * j->K) * j->es, j->K,
                 gy + (size_t)(gi * j->cout_g * ld) * j->es, ld, 0.0, dst + (size_t)(gi * j->K * ld) * j->es, ld);
        c.dst = j->out;
        if (!direct) pairs_parallel(&c, g->cin, cg_conv_vol(g->k) * j->L, col2im_pairs);
        c.C = g->cin, c.R = j->P;
        if (j->bias) pairs_parallel(&c, g->cin, j->P, bias_pairs);
    }
    chunk_free(&c);
}

cg_status cg_conv_cpu_transpose(cg_dtype dt, cg_dtype ydt, const cg_conv_geom *g, const void *y, const void *w,
                                const void *bias, void *x) {
    conv_job j;
    job_init(&j, dt, g);
    job_set_y(&j, ydt);
    int64_t total = g->n * g->cin * j.P;
    if (total == 0) return CG_OK;
    if (j.L == 0 || j.cout_g == 0) { /* nothing reaches x: the bias alone */
        memset(x, 0, (size_t)total * j.es);
        for (int64_t n = 0; bias && n < g->n; n++)
            for (int64_t k = 0; k < g->cin; k++)
                add_bias_row(dt, bias, k, (char *)x + (size_t)((n * g->cin + k) * j.P) * j.es, j.P);
        return CG_OK;
    }
    j.y = y, j.w = w, j.bias = bias, j.out = x;
    run_job(&j, transpose_chunks, transpose_single);
    return atomic_load(&j.oom) ? cg_set_error(CG_ERR_OOM, "[conv_transpose] out of memory for the column buffer")
                               : CG_OK;
}

/* ---------------------------------------------------------------- weight gradient */

/* a worker: chunks -> chunk k's gradient @ columns^T into its partial sum
 * (chunk 0: the result itself) */
static void wgrad_chunks(int64_t t0, int64_t t1, void *p) {
    conv_job *j = p;
    const cg_conv_geom *g = j->g;
    conv_chunk c;
    (void)t0, (void)t1;
    if (!chunk_alloc(&c, j, true)) return;
    size_t wsize = (size_t)(g->cout * j->K) * j->es;
    for (int64_t ch; (ch = take_chunk(j)) >= 0;) {
        chunk_select(&c, ch);
        const char *col = chunk_columns(&c);
        const char *gy = chunk_gradient(&c);
        const int64_t ld = c.nb * j->L;
        char *acc = ch == 0 ? j->out : j->partials + (size_t)(ch - 1) * wsize;
        /* W_g (cout_g, K) = gy_g (cout_g, nb*L) @ col_g^T (nb*L, K) */
        for (int64_t gi = 0; gi < g->groups; gi++)
            cg_conv_gemm(j->dt, false, true, j->cout_g, j->K, ld, gy + (size_t)(gi * j->cout_g * ld) * j->es, ld,
                 col + (size_t)(gi * j->K * ld) * j->es, ld, 0.0, acc + (size_t)(gi * j->cout_g * j->K) * j->es, j->K);
    }
    chunk_free(&c);
}

cg_status cg_conv_cpu_weight_grad(cg_dtype dt, cg_dtype xdt, cg_dtype ydt, const cg_conv_geom *g, const void *x,
                                  const void *y, void *w) {
    conv_job j;
    job_init(&j, dt, g);
    job_set_x(&j, xdt);
    job_set_y(&j, ydt);
    int64_t wnum = g->cout * j.K;
    if (wnum == 0) return CG_OK;
    if (g->n == 0 || j.L == 0) {
        memset(w, 0, (size_t)wnum * j.es);
        return CG_OK;
    }
    j.x = x, j.y = y, j.out = w;
    /* one partial sum per chunk, or per unit of the single chunk */
    int64_t parts = j.nchunks > 1 ? j.nchunks : g->n * ((j.L + CONV_UNIT_COLS - 1) / CONV_UNIT_COLS);
    size_t psize = (size_t)((parts - 1) * wnum) * j.es;
    if (psize && !(j.partials = cg_alloc(psize, k_cpu)))
        return cg_set_error(CG_ERR_OOM, "[conv_weight_grad] out of memory for partial sums");
    run_job(&j, wgrad_chunks, wgrad_single);
    for (int64_t k = 1; k < parts && !atomic_load(&j.oom); k++) {
        if (dt == CG_DTYPE_F32) {
            float *o = w;
            const float *s = (const float *)j.partials + (k - 1) * wnum;
            for (int64_t i = 0; i < wnum; i++) o[i] += s[i];
        } else {
            double *o = w;
            const double *s = (const double *)j.partials + (k - 1) * wnum;
            for (int64_t i = 0; i < wnum; i++) o[i] += s[i];
        }
    }
    if (psize) cg_free(j.partials, psize, k_cpu);
    return atomic_load(&j.oom) ? cg_set_error(CG_ERR_OOM, "[conv_weight_grad] out of memory for the column buffer")
                               : CG_OK;
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
