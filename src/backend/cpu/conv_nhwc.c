/* conv_nhwc.c — the CPU convolution kernels on channels-last operands
 * (Note [Channels-last conv]): the rows of a GEMM are output positions, its
 * columns channels, so a 1x1 convolution is one GEMM on the input itself
 * and im2col / col2im move whole channel vectors. The same three linear maps
 * as conv_gemm.c (Note [Conv geometry]), chunked and threaded by the same
 * rules (Note [Conv chunks], Note [Conv threads]). */
#include "conv_internal.h"

#include "../../core/half.h"

#include <stdatomic.h>
#include <string.h>

/* Note [Channels-last conv]: with channels innermost, a sample is an
 * (positions, channels) matrix: x (in-volume P, cin), y (out-volume L, cout),
 * and the weight (cout, kvol, cin/groups) (the channels_last layout of
 * (cout, cin/groups, k...)). The column matrix of rows m = n*L + o holds, per
 * group, every tap's channel vector: col[m, gi*K + j*cin_g + c] (K =
 * kvol*cin_g) is x[n, p(o, j), gi*cin_g + c], 0 where tap j of o reads
 * padding. Then, per group gi, with W_g (cout_g, K):
 *   forward:     y[:, gi]  (M, cout_g) = col_g (M, K) @ W_g^T
 *   transpose:   col_g     (M, K)      = y'[:, gi] (M, cout_g) @ W_g, then col2im
 *   weight grad: W'_g      (cout_g, K) = y'[:, gi]^T @ col_g
 * which write the (N, out..., cout) output, the (N, in..., cin) input and the
 * channels_last weight directly: no layout is converted. A pointwise conv
 * (1x1, stride 1, no padding) reads x itself as col (lda cin) and its
 * transpose writes x directly. A bfloat16 / float16 x is converted by im2col
 * (never read in place), a half y per chunk (Note [Half conv]). The chunks
 * are whole samples as in conv_gemm.c; the single chunk is cut into blocks
 * of NHWC_UNIT_ROWS rows for the GEMMs, its col2im split over samples. */
#define NHWC_UNIT_ROWS 512
#define NHWC_GRAIN 32768

static const cg_device k_cpu = {CG_DEVICE_CPU, 0};

typedef struct nhwc_job {
    const cg_conv_geom *g;
    cg_dtype dt, xdt, ydt;
    size_t es, xes, yes;
    bool pointwise;
    int64_t cin_g, cout_g, kvol, K, rows; /* rows = groups * K: the col row length */
    int64_t L, P, M;                      /* out / in volume, M = n * L GEMM rows */
    int64_t B, nchunks;
    const char *x, *w, *y, *bias;
    char *out;
    char *partials; /* weight gradient: (parts - 1, cout, K) */
    atomic_llong next;
    atomic_int oom;
} nhwc_job;

/* The rows [m0, m1) of a chunk being worked on: its col and converted y. */
typedef struct nhwc_part {
    const nhwc_job *j;
    int64_t n0, nb;   /* the chunk's samples */
    char *col;        /* (nb*L, rows) */
    char *ymat;       /* (nb*L, cout) float32: a half y converted */
    const char *ys;   /* the chunk's y rows (ymat or y itself) */
} nhwc_part;

static void job_init(nhwc_job *j, cg_dtype dt, const cg_conv_geom *g, cg_dtype xdt, cg_dtype ydt) {
    memset(j, 0, sizeof *j);
    j->g = g;
    j->dt = dt, j->xdt = xdt, j->ydt = ydt;
    j->es = cg_dtype_size(dt), j->xes = cg_dtype_size(xdt), j->yes = cg_dtype_size(ydt);
    j->cin_g = g->cin / g->groups;
    j->cout_g = g->cout / g->groups;
    j->kvol = cg_conv_vol(g->k);
    j->K = j->cin_g * j->kvol;
    j->rows = g->cin * j->kvol;
    j->L = cg_conv_vol(g->out);
    j->P = cg_conv_vol(g->in);
    j->M = g->n * j->L;
    j->pointwise = j->kvol == 1 && j->L == j->P && xdt == dt;
    for (int d = 0; d < 3; d++)
        if (g->stride[d] != 1 || g->pad[d] != 0) j->pointwise = false;
    cg_conv_chunking(g->n, (size_t)((j->rows + g->cout) * j->L) * j->es, &j->B, &j->nchunks);
}

static void part_free(nhwc_part *c) {
    size_t r = (size_t)(c->j->B * c->j->L);
    if (c->col) cg_free(c->col, r * (size_t)c->j->rows * c->j->es, k_cpu);
    if (c->ymat) cg_free(c->ymat, r * (size_t)c->j->g->cout * sizeof(float), k_cpu);
}

static bool part_alloc(nhwc_part *c, nhwc_job *j, bool need_y) {
    size_t r = (size_t)(j->B * j->L);
    memset(c, 0, sizeof *c);
    c->j = j;
    bool ok = j->pointwise || (c->col = cg_alloc(r * (size_t)j->rows * j->es, k_cpu));
    ok = ok && (!need_y || j->ydt == j->dt || (c->ymat = cg_alloc(r * (size_t)j->g->cout * sizeof(float), k_cpu)));
    if (!ok) {
        part_free(c);
        atomic_store(&j->oom, 1);
    }
    return ok;
}

static void part_select(nhwc_part *c, int64_t chunk) {
    c->n0 = chunk * c->j->B;
    c->nb = c->j->g->n - c->n0 < c->j->B ? c->j->g->n - c->n0 : c->j->B;
}

/* The input position read by tap (j0, j1, j2) of output position o, or -1 for padding. */
static int64_t tap_source(const cg_conv_geom *g, int64_t o, int64_t j0, int64_t j1, int64_t j2) {
    int64_t o2 = o % g->out[2], o1 = o / g->out[2] % g->out[1], o0 = o / g->out[2] / g->out[1];
    int64_t i0 = o0 * g->stride[0] - g->pad[0] + j0 * g->dil[0];
    int64_t i1 = o1 * g->stride[1] - g->pad[1] + j1 * g->dil[1];
    int64_t i2 = o2 * g->stride[2] - g->pad[2] + j2 * g->dil[2];
    if (i0 < 0 || i0 >= g->in[0] || i1 < 0 || i1 >= g->in[1] || i2 < 0 || i2 >= g->in[2]) return -1;
    return (i0 * g->in[1] + i1) * g->in[2] + i2;
}

/* Note [Channels-last tap runs]: with one group and dilation 1 in the last
 * spatial dim, the taps (j0, j1, 0..k2) of an output position read k2
 * consecutive input positions, whose channel vectors are consecutive in x,
 * and fill consecutive col entries: one run of k2*cin elements, less the
 * taps that read padding at either end. im2col copies and col2im adds such
 * runs whole (a 7x7 stem conv with 3 channels moves 21 elements at a time,
 * not 3); other geometries go tap by tap, group by group. */
typedef struct tap_run {
    int64_t src, len, lead, tap; /* first source position, taps in the run, padding taps before it, first tap */
} tap_run;

/* The body, once per (j0, j1) row of taps of output position o, with that row's run r (len 0: all padding). */
#define FOR_TAP_RUNS(g, o, r, ...)                                                                          \
    do {                                                                                                    \
        int64_t o2_ = (o) % (g)->out[2], o1_ = (o) / (g)->out[2] % (g)->out[1];                             \
        int64_t o0_ = (o) / (g)->out[2] / (g)->out[1];                                                      \
        int64_t b2_ = o2_ * (g)->stride[2] - (g)->pad[2];                                                   \
        int64_t lo_ = b2_ < 0 ? -b2_ : 0, hi_ = (g)->in[2] - b2_ < (g)->k[2] ? (g)->in[2] - b2_ : (g)->k[2]; \
        for (int64_t j0_ = 0; j0_ < (g)->k[0]; j0_++)                                                       \
            for (int64_t j1_ = 0; j1_ < (g)->k[1]; j1_++) {                                                 \
                int64_t i0_ = o0_ * (g)->stride[0] - (g)->pad[0] + j0_ * (g)->dil[0];                       \
                int64_t i1_ = o1_ * (g)->stride[1] - (g)->pad[1] + j1_ * (g)->dil[1];                       \
                tap_run r = {0, 0, (g)->k[2], (j0_ * (g)->k[1] + j1_) * (g)->k[2]};                         \
                if (i0_ >= 0 && i0_ < (g)->in[0] && i1_ >= 0 && i1_ < (g)->in[1] && lo_ < hi_) {            \
                    r.src = (i0_ * (g)->in[1] + i1_) * (g)->in[2] + b2_ + lo_;                              \
                    r.len = hi_ - lo_, r.lead = lo_;                                                        \
                }                                                                                           \
                __VA_ARGS__                                                                                 \
            }                                                                                               \
    } while (0)

static bool tap_runs_apply(const cg_conv_geom *g) { return g->groups == 1 && g->dil[2] == 1; }

/* dst[0..n) = src[0..n) in float32 from dtype sdt (a float32 / float64 copy when sdt is dt) */
static void vec_load(cg_dtype dt, cg_dtype sdt, const char *src, int64_t n, char *dst) {
    if (sdt == dt) memcpy(dst, src, (size_t)n * cg_dtype_size(dt));
    else cg_conv_half_to_f32(sdt, src, n, (float *)dst);
}

/* dst[0..n) += src[0..n) */
static void vec_add(cg_dtype dt, const char *src, int64_t n, char *dst) {
    if (dt == CG_DTYPE_F32) {
        const float *s = (const float *)src;
        float *d = (float *)dst;
        for (int64_t i = 0; i < n; i++) d[i] += s[i];
    } else {
        const double *s = (const double *)src;
        double *d = (double *)dst;
        for (int64_t i = 0; i < n; i++) d[i] += s[i];
    }
}

/* rows [m0, m1) of the chunk's col (row r = m - n0*L) from x */
static void im2col_rows(int64_t m0, int64_t m1, void *p) {
    const nhwc_part *c = p;
    const nhwc_job *j = c->j;
    const cg_conv_geom *g = j->g;
    bool runs = tap_runs_apply(g);
    int64_t C = g->cin;
    for (int64_t m = m0; m < m1; m++) {
        int64_t n = c->n0 + m / j->L, o = m % j->L;
        char *crow = c->col + (size_t)(m * j->rows) * j->es;
        const char *xn = j->x + (size_t)(n * j->P * C) * j->xes;
        if (runs) { /* Note [Channels-last tap runs] */
            FOR_TAP_RUNS(g, o, r, {
                char *dst = crow + (size_t)(r.tap * C) * j->es;
                size_t tail = (size_t)((g->k[2] - r.lead - r.len) * C) * j->es;
                memset(dst, 0, (size_t)(r.lead * C) * j->es);
                if (r.len) vec_load(j->dt, j->xdt, xn + (size_t)(r.src * C) * j->xes, r.len * C,
                                    dst + (size_t)(r.lead * C) * j->es);
                memset(dst + (size_t)((r.lead + r.len) * C) * j->es, 0, tail);
            });
            continue;
        }
        int64_t tap = 0;
        for (int64_t j0 = 0; j0 < g->k[0]; j0++)
            for (int64_t j1 = 0; j1 < g->k[1]; j1++)
                for (int64_t j2 = 0; j2 < g->k[2]; j2++, tap++) {
                    int64_t src = tap_source(g, o, j0, j1, j2);
                    for (int64_t gi = 0; gi < g->groups; gi++) {
                        char *dst = crow + (size_t)(gi * j->K + tap * j->cin_g) * j->es;
                        if (src < 0) memset(dst, 0, (size_t)j->cin_g * j->es);
                        else vec_load(j->dt, j->xdt, xn + (size_t)(src * C + gi * j->cin_g) * j->xes, j->cin_g, dst);
                    }
                }
    }
}

/* samples [s0, s1) of the chunk: x_n zeroed, then += col2im of the chunk's col (+ bias) */
static void col2im_samples(int64_t s0, int64_t s1, void *p) {
    const nhwc_part *c = p;
    const nhwc_job *j = c->j;
    const cg_conv_geom *g = j->g;
    bool runs = tap_runs_apply(g);
    int64_t C = g->cin;
    for (int64_t s = s0; s < s1; s++) {
        char *xn = j->out + (size_t)((c->n0 + s) * j->P * C) * j->es;
        memset(xn, 0, (size_t)(j->P * C) * j->es);
        for (int64_t o = 0; o < j->L; o++) {
            const char *crow = c->col + (size_t)((s * j->L + o) * j->rows) * j->es;
            if (runs) { /* Note [Channels-last tap runs] */
                FOR_TAP_RUNS(g, o, r, {
                    if (r.len)
                        vec_add(j->dt, crow + (size_t)((r.tap + r.lead) * C) * j->es, r.len * C,
                                xn + (size_t)(r.src * C) * j->es);
                });
                continue;
            }
            int64_t tap = 0;
            for (int64_t j0 = 0; j0 < g->k[0]; j0++)
                for (int64_t j1 = 0; j1 < g->k[1]; j1++)
                    for (int64_t j2 = 0; j2 < g->k[2]; j2++, tap++) {
                        int64_t dst = tap_source(g, o, j0, j1, j2);
                        if (dst < 0) continue;
                        for (int64_t gi = 0; gi < g->groups; gi++)
                            vec_add(j->dt, crow + (size_t)(gi * j->K + tap * j->cin_g) * j->es, j->cin_g,
                                    xn + (size_t)(dst * C + gi * j->cin_g) * j->es);
                    }
        }
    }
}

/* rows [m0, m1) of out (R channels each) = bias, or += bias */
static void bias_rows(cg_dtype dt, const char *bias, int64_t R, char *out, int64_t m0, int64_t m1, bool add) {
    size_t es = cg_dtype_size(dt);
    for (int64_t m = m0; m < m1; m++) {
        char *row = out + (size_t)(m * R) * es;
        if (add) vec_add(dt, bias, R, row);
        else memcpy(row, bias, (size_t)R * es);
    }
}

/* The chunk's columns (rows nb*L, ld) of x: col, or x itself (pointwise). */
static const char *part_columns(nhwc_part *c, bool parallel, int64_t *ld) {
    const nhwc_job *j = c->j;
    if (j->pointwise) {
        *ld = j->g->cin;
        return j->x + (size_t)(c->n0 * j->L * j->g->cin) * j->es;
    }
    *ld = j->rows;
    int64_t R = c->nb * j->L, per = j->rows > 0 ? j->rows : 1;
    if (parallel) cg_parallel_for(R, NHWC_GRAIN / per + 1, im2col_rows, c);
    else im2col_rows(0, R, c);
    return c->col;
}

/* The chunk's y rows (nb*L, cout) in dt: y itself, or a half y converted. */
static const char *part_gradient(nhwc_part *c) {
    const nhwc_job *j = c->j;
    const char *ys = j->y + (size_t)(c->n0 * j->L * j->g->cout) * j->yes;
    if (j->ydt == j->dt) return ys;
    cg_conv_half_to_f32(j->ydt, ys, c->nb * j->L * j->g->cout, (float *)c->ymat);
    return c->ymat;
}

/* ---------------------------------------------------------------- the GEMMs of rows [r0, r1) of a chunk */

/* y rows (+)= col rows @ W_g^T for every group (beta 1 onto the bias) */
static void forward_gemm(const nhwc_job *j, const char *col, int64_t ld, char *y, int64_t r0, int64_t r1) {
    for (int64_t gi = 0; gi < j->g->groups; gi++)
        cg_conv_gemm(j->dt, false, true, r1 - r0, j->cout_g, j->K,
                     col + (size_t)(r0 * ld + gi * j->K) * j->es, ld,
                     j->w + (size_t)(gi * j->cout_g * j->K) * j->es, j->K, j->bias ? 1.0 : 0.0,
                     y + (size_t)(r0 * j->g->cout + gi * j->cout_g) * j->es, j->g->cout);
}

/* dst rows (ld) = y rows @ W_g for every group */
static void transpose_gemm(const nhwc_job *j, const char *ys, char *dst, int64_t ld, int64_t r0, int64_t r1) {
    for (int64_t gi = 0; gi < j->g->groups; gi++)
        cg_conv_gemm(j->dt, false, false, r1 - r0, j->K, j->cout_g,
                     ys + (size_t)(r0 * j->g->cout + gi * j->cout_g) * j->es, j->g->cout,
                     j->w + (size_t)(gi * j->cout_g * j->K) * j->es, j->K, 0.0,
                     dst + (size_t)(r0 * ld + gi * j->K) * j->es, ld);
}

/* acc (cout, K) = y rows^T @ col rows for every group */
static void wgrad_gemm(const nhwc_job *j, const char *ys, const char *col, int64_t ld, char *acc, int64_t r0,
                       int64_t r1) {
    for (int64_t gi = 0; gi < j->g->groups; gi++)
        cg_conv_gemm(j->dt, true, false, j->cout_g, j->K, r1 - r0,
                     ys + (size_t)(r0 * j->g->cout + gi * j->cout_g) * j->es, j->g->cout,
                     col + (size_t)(r0 * ld + gi * j->K) * j->es, ld, 0.0,
                     acc + (size_t)(gi * j->cout_g * j->K) * j->es, j->K);
}

/* ---------------------------------------------------------------- the single chunk in row blocks */

typedef struct nhwc_units {
    nhwc_part *c;
    int kind;
    const char *col, *ys;
    char *dst;
    int64_t ld, dst_ld;
} nhwc_units;

static int64_t units_of(int64_t R) { return (R + NHWC_UNIT_ROWS - 1) / NHWC_UNIT_ROWS; }

static void run_units(int64_t u0, int64_t u1, void *p) {
    const nhwc_units *u = p;
    const nhwc_job *j = u->c->j;
    int64_t R = u->c->nb * j->L;
    size_t wsize = (size_t)(j->g->cout * j->K) * j->es;
    for (int64_t i = u0; i < u1; i++) {
        int64_t r0 = i * NHWC_UNIT_ROWS, r1 = r0 + NHWC_UNIT_ROWS < R ? r0 + NHWC_UNIT_ROWS : R;
        if (u->kind == CG_CONV_FORWARD) forward_gemm(j, u->col, u->ld, u->dst, r0, r1);
        else if (u->kind == CG_CONV_TRANSPOSE) transpose_gemm(j, u->ys, u->dst, u->dst_ld, r0, r1);
        else wgrad_gemm(j, u->ys, u->col, u->ld, i == 0 ? j->out : j->partials + (size_t)(i - 1) * wsize, r0, r1);
    }
}

static void units_parallel(nhwc_units *u) {
    const nhwc_job *j = u->c->j;
    int64_t per = j->g->cout * j->K * NHWC_UNIT_ROWS;
    cg_parallel_for(units_of(u->c->nb * j->L), per > 0 && 262144 / per > 0 ? 262144 / per : 1, run_units, u);
}

/* ---------------------------------------------------------------- one chunk, and the drivers */

/* Chunk `ch` of kernel `kind`; parallel: the single chunk, its steps split across threads. */
static void run_chunk(nhwc_job *j, nhwc_part *c, int kind, int64_t ch, bool parallel) {
    part_select(c, ch);
    int64_t R = c->nb * j->L, ld = 0;
    char *yc = j->out + (size_t)(c->n0 * j->L * j->g->cout) * j->es;
    size_t wsize = (size_t)(j->g->cout * j->K) * j->es;
    nhwc_units u = {c, kind, NULL, NULL, NULL, 0, 0};
    if (kind == CG_CONV_FORWARD) {
        const char *col = part_columns(c, parallel, &ld);
        if (j->bias) bias_rows(j->dt, j->bias, j->g->cout, yc, 0, R, false);
        u.col = col, u.ld = ld, u.dst = yc;
        if (parallel) units_parallel(&u);
        else forward_gemm(j, col, ld, yc, 0, R);
    } else if (kind == CG_CONV_TRANSPOSE) {
        const char *ys = part_gradient(c);
        char *xc = j->out + (size_t)(c->n0 * j->P * j->g->cin) * j->es;
        u.ys = ys, u.dst = j->pointwise ? xc : c->col, u.dst_ld = j->pointwise ? j->g->cin : j->rows;
        if (parallel) units_parallel(&u);
        else transpose_gemm(j, ys, u.dst, u.dst_ld, 0, R);
        if (!j->pointwise) {
            if (parallel) cg_parallel_for(c->nb, 1, col2im_samples, c);
            else col2im_samples(0, c->nb, c);
        }
        if (j->bias) bias_rows(j->dt, j->bias, j->g->cin, xc, 0, c->nb * j->P, true);
    } else {
        const char *col = part_columns(c, parallel, &ld);
        const char *ys = part_gradient(c);
        u.col = col, u.ys = ys, u.ld = ld;
        if (parallel) units_parallel(&u);
        else wgrad_gemm(j, ys, col, ld, ch == 0 ? j->out : j->partials + (size_t)(ch - 1) * wsize, 0, R);
    }
}

typedef struct nhwc_run {
    nhwc_job *j;
    int kind;
} nhwc_run;

/* a worker: the next free chunk until none is left */
static void chunk_worker(int64_t t0, int64_t t1, void *p) {
    const nhwc_run *r = p;
    nhwc_job *j = r->j;
    (void)t0, (void)t1;
    nhwc_part c;
    if (!part_alloc(&c, j, r->kind != CG_CONV_FORWARD)) return;
    for (int64_t ch; (ch = atomic_fetch_add(&j->next, 1)) < j->nchunks;) run_chunk(j, &c, r->kind, ch, false);
    part_free(&c);
}

static cg_status run_kind(nhwc_job *j, int kind, const char *name) {
    int nt = cg_get_num_threads();
    if (nt > 1) cg_conv_blas_serial(true);
    nhwc_run r = {j, kind};
    atomic_store(&j->next, 0);
    if (j->nchunks > 1) {
        cg_parallel_for(nt < j->nchunks ? nt : j->nchunks, 1, chunk_worker, &r);
    } else {
        nhwc_part c;
        if (part_alloc(&c, j, kind != CG_CONV_FORWARD)) {
            run_chunk(j, &c, kind, 0, true);
            part_free(&c);
        }
    }
    if (nt > 1) cg_conv_blas_serial(false);
    return atomic_load(&j->oom) ? cg_set_error(CG_ERR_OOM, "[%s] out of memory for the column buffer", name) : CG_OK;
}

cg_status cg_conv_cpu_nhwc(cg_conv_kind kind, cg_dtype dt, cg_dtype adt, cg_dtype bdt, const cg_conv_geom *g,
                           const void *a, const void *b, const void *bias, void *out) {
    nhwc_job j;
    bool fwd = kind == CG_CONV_FORWARD, tr = kind == CG_CONV_TRANSPOSE;
    job_init(&j, dt, g, tr ? dt : adt, tr ? adt : fwd ? dt : bdt);
    j.bias = bias, j.out = out;
    if (fwd) j.x = a, j.w = b;
    else if (tr) j.y = a, j.w = b;
    else j.x = a, j.y = b;
    int64_t channels = fwd ? g->cout : tr ? g->cin : 0;
    int64_t total = fwd ? j.M * g->cout : tr ? g->n * j.P * g->cin : g->cout * j.K;
    if (total == 0) return CG_OK;
    /* nothing to sum: no input channels (forward), no output positions or
     * channels (transpose), no rows (weight grad) */
    bool empty = fwd ? j.K == 0 : tr ? j.L == 0 || j.cout_g == 0 : j.M == 0;
    if (empty) {
        memset(out, 0, (size_t)total * j.es);
        if (bias) bias_rows(dt, bias, channels, out, 0, total / channels, true);
        return CG_OK;
    }
    if (cg_conv_depthwise_nhwc_applies(g)) /* Note [Channels-last depthwise conv] */
        return cg_conv_cpu_depthwise_nhwc(kind, dt, adt, bdt, g, a, b, bias, out);
    if (kind == CG_CONV_WEIGHT_GRAD) {
        int64_t parts = j.nchunks > 1 ? j.nchunks : units_of(j.M);
        size_t wsize = (size_t)(g->cout * j.K) * j.es, psize = (size_t)(parts - 1) * wsize;
        if (psize && !(j.partials = cg_alloc(psize, k_cpu)))
            return cg_set_error(CG_ERR_OOM, "[conv_weight_grad] out of memory for partial sums");
        cg_status st = run_kind(&j, kind, "conv_weight_grad");
        for (int64_t k = 1; !st && k < parts; k++) vec_add(dt, j.partials + (size_t)(k - 1) * wsize, g->cout * j.K, out);
        if (psize) cg_free(j.partials, psize, k_cpu);
        return st;
    }
    return run_kind(&j, kind, fwd ? "conv" : "conv_transpose");
}

/* Note [Channels-last bias gradient]: out[c] sums column c of g (M, C). The
 * rows are cut into at most NHWC_BIAS_BLOCKS blocks by the shape alone;
 * each block sums its rows in order into C doubles (one pass over its
 * memory), and the blocks are added in order: no result depends on the
 * thread count. */
#define NHWC_BIAS_BLOCKS 64

typedef struct nhwc_bias_job {
    cg_dtype dt;
    const char *g;
    double *part; /* (blocks, C) */
    int64_t M, C, rows_per;
} nhwc_bias_job;

static void bias_grad_blocks(int64_t b0, int64_t b1, void *p) {
    const nhwc_bias_job *b = p;
    for (int64_t k = b0; k < b1; k++) {
        double *acc = b->part + k * b->C;
        int64_t m0 = k * b->rows_per, m1 = m0 + b->rows_per < b->M ? m0 + b->rows_per : b->M;
        for (int64_t c = 0; c < b->C; c++) acc[c] = 0;
        for (int64_t m = m0; m < m1; m++) {
            if (b->dt == CG_DTYPE_F32) {
                const float *r = (const float *)b->g + m * b->C;
                for (int64_t c = 0; c < b->C; c++) acc[c] += (double)r[c];
            } else {
                const double *r = (const double *)b->g + m * b->C;
                for (int64_t c = 0; c < b->C; c++) acc[c] += r[c];
            }
        }
    }
}

cg_status cg_conv_cpu_bias_grad_nhwc(cg_dtype dt, int64_t M, int64_t C, const void *g, void *out) {
    int64_t rows_per = (M + NHWC_BIAS_BLOCKS - 1) / NHWC_BIAS_BLOCKS;
    if (rows_per < 1) rows_per = 1;
    int64_t blocks = (M + rows_per - 1) / rows_per;
    size_t bytes = (size_t)((blocks > 0 ? blocks : 1) * C) * sizeof(double);
    nhwc_bias_job b = {dt, g, cg_alloc(bytes, k_cpu), M, C, rows_per};
    if (!b.part) return cg_set_error(CG_ERR_OOM, "[conv_bias_grad] out of memory for partial sums");
    int64_t per = rows_per * C;
    cg_parallel_for(blocks, per > 0 && NHWC_GRAIN / per > 0 ? NHWC_GRAIN / per : 1, bias_grad_blocks, &b);
    for (int64_t c = 0; c < C; c++) {
        double s = 0;
        for (int64_t k = 0; k < blocks; k++) s += b.part[k * C + c];
        if (dt == CG_DTYPE_F32) ((float *)out)[c] = (float)s;
        else ((double *)out)[c] = s;
    }
    cg_free(b.part, bytes, k_cpu);
    return CG_OK;
}
