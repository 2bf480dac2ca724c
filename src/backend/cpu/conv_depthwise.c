/* conv_depthwise.c — the channels-last depthwise convolution (groups = cin =
 * cout: one filter per channel) computed directly, without im2col or GEMM
 * (Note [Channels-last depthwise conv]). */
#include "conv_internal.h"

#include <string.h>

/* Note [Channels-last depthwise conv]: with one input and one output channel
 * per group, the GEMMs of Note [Channels-last conv] are C products of
 * length kvol, far too small for BLAS. With channels innermost, every tap is
 * instead a vector operation over a block of channels:
 *   forward:     y[n, o, c]  = bias[c] + sum_t x[n, p(o, t), c] * w[c, t]
 *   transpose:   x'[n, p, c] = bias[c] + sum over (o, t) reading p of y'[n, o, c] * w[c, t]
 *                (gathered per input position, so every sum stays in registers)
 *   weight grad: w'[c, t]    = sum_{n, o} y'[n, o, c] * x[n, p(o, t), c]
 * (t a tap, p(o, t) the position it reads; padding reads are skipped). The
 * weight is first transposed to (kvol, C) so a tap's weights are contiguous
 * too. Work is cut by the shape alone: forward and transpose into (sample,
 * block of DW_BLOCK channels) units that each own their outputs; the weight
 * gradient into (block, group of samples) units whose partial sums, over at
 * most DW_PARTS sample groups, are added in group order. So no result
 * depends on the thread count. A half operand is converted to float32 once,
 * whole. */
#define DW_BLOCK 64
#define DW_PARTS 8

static const cg_device k_cpu = {CG_DEVICE_CPU, 0};

typedef struct dw_job {
    const cg_conv_geom *g;
    cg_dtype dt;
    bool tr; /* the transpose: y' in, x' out */
    int64_t C, T, L, P, nblk, parts, per_part;
    const char *x, *y, *wt, *bias;
    char *out, *partials; /* partials: (parts, T, C) for the weight gradient */
} dw_job;

/* The input position read by tap (j0, j1, j2) of output position (o0, o1, o2), or -1 for padding. */
static inline int64_t dw_source(const cg_conv_geom *g, int64_t o0, int64_t o1, int64_t o2, int64_t j0, int64_t j1,
                                int64_t j2) {
    int64_t i0 = o0 * g->stride[0] - g->pad[0] + j0 * g->dil[0];
    int64_t i1 = o1 * g->stride[1] - g->pad[1] + j1 * g->dil[1];
    int64_t i2 = o2 * g->stride[2] - g->pad[2] + j2 * g->dil[2];
    if (i0 < 0 || i0 >= g->in[0] || i1 < 0 || i1 >= g->in[1] || i2 < 0 || i2 >= g->in[2]) return -1;
    return (i0 * g->in[1] + i1) * g->in[2] + i2;
}

/* FOR_TAPS runs its body for every tap t of output position o whose source s is not padding;
 * DW_KERNELS defines the three maps for one element type. */
#define FOR_TAPS(g, o, t, s, ...)                                                                \
    do {                                                                                         \
        int64_t o2_ = (o) % (g)->out[2], o1_ = (o) / (g)->out[2] % (g)->out[1];                  \
        int64_t o0_ = (o) / (g)->out[2] / (g)->out[1];                                           \
        int64_t t = 0;                                                                           \
        for (int64_t j0_ = 0; j0_ < (g)->k[0]; j0_++)                                            \
            for (int64_t j1_ = 0; j1_ < (g)->k[1]; j1_++)                                        \
                for (int64_t j2_ = 0; j2_ < (g)->k[2]; j2_++, t++) {                             \
                    int64_t s = dw_source((g), o0_, o1_, o2_, j0_, j1_, j2_);                    \
                    if (s >= 0) __VA_ARGS__                                                         \
                }                                                                                \
    } while (0)

/* FOR_READERS runs its body for every (tap t, output position o) pair that reads input position q
 * (the transpose's gather form: o_d = (q_d + pad_d - j_d * dil_d) / stride_d when that divides and
 * lands inside the output). */
static inline bool dw_reader(int64_t q, int64_t j, int64_t pad, int64_t dil, int64_t stride, int64_t out,
                             int64_t *o) {
    int64_t r = q + pad - j * dil;
    if (stride == 1) { /* no division: the common case */
        *o = r;
        return r >= 0 && r < out;
    }
    if (r < 0 || r % stride) return false;
    *o = r / stride;
    return *o < out;
}
#define FOR_READERS(g, q, t, o, ...)                                                             \
    do {                                                                                         \
        int64_t q2_ = (q) % (g)->in[2], q1_ = (q) / (g)->in[2] % (g)->in[1];                     \
        int64_t q0_ = (q) / (g)->in[2] / (g)->in[1], a0_, a1_, a2_;                              \
        int64_t t = 0;                                                                           \
        for (int64_t j0_ = 0; j0_ < (g)->k[0]; j0_++)                                            \
            for (int64_t j1_ = 0; j1_ < (g)->k[1]; j1_++)                                        \
                for (int64_t j2_ = 0; j2_ < (g)->k[2]; j2_++, t++) {                             \
                    if (!dw_reader(q0_, j0_, (g)->pad[0], (g)->dil[0], (g)->stride[0], (g)->out[0], &a0_) || \
                        !dw_reader(q1_, j1_, (g)->pad[1], (g)->dil[1], (g)->stride[1], (g)->out[1], &a1_) || \
                        !dw_reader(q2_, j2_, (g)->pad[2], (g)->dil[2], (g)->stride[2], (g)->out[2], &a2_))   \
                        continue;                                                                \
                    int64_t o = (a0_ * (g)->out[1] + a1_) * (g)->out[2] + a2_;                   \
                    __VA_ARGS__                                                                  \
                }                                                                                \
    } while (0)

/* acc += src row r * tap t's weights (dw_gather's body) */
#define DW_ACC(T_)                                                                               \
    {                                                                                            \
        const T_ *sr = src + r * j->C, *wts = wt + t * j->C + c0;                                \
        for (int64_t c = 0; c < nc; c++) acc[c] += sr[c] * wts[c];                               \
    }
#define DW_KERNELS(T_, SFX)                                                                          \
    /* forward (y from x, over taps) and transpose (x' from y', over readers) alike */             \
    static void dw_gather_##SFX(int64_t u0, int64_t u1, void *p) {                                   \
        const dw_job *j = p;                                                                         \
        const cg_conv_geom *g = j->g;                                                                \
        const T_ *wt = (const T_ *)j->wt, *bias = (const T_ *)j->bias;                               \
        int64_t svol = j->tr ? j->L : j->P, dvol = j->tr ? j->P : j->L;                              \
        for (int64_t u = u0; u < u1; u++) {                                                          \
            int64_t n = u / j->nblk, c0 = u % j->nblk * DW_BLOCK;                                    \
            int64_t nc = j->C - c0 < DW_BLOCK ? j->C - c0 : DW_BLOCK;                                \
            const T_ *src = (const T_ *)(j->tr ? j->y : j->x) + n * svol * j->C + c0;                \
            T_ *dst = (T_ *)j->out + n * dvol * j->C + c0;                                           \
            for (int64_t q = 0; q < dvol; q++) {                                                     \
                T_ acc[DW_BLOCK];                                                                    \
                for (int64_t c = 0; c < nc; c++) acc[c] = bias ? bias[c0 + c] : 0;                   \
                if (j->tr) FOR_READERS(g, q, t, r, DW_ACC(T_));                                      \
                else FOR_TAPS(g, q, t, r, DW_ACC(T_));                                               \
                memcpy(dst + q * j->C, acc, (size_t)nc * sizeof(T_));                                \
            }                                                                                        \
        }                                                                                            \
    }                                                                                                \
    static void dw_wgrad_##SFX(int64_t u0, int64_t u1, void *p) {                                    \
        const dw_job *j = p;                                                                         \
        const cg_conv_geom *g = j->g;                                                                \
        for (int64_t u = u0; u < u1; u++) {                                                          \
            int64_t part = u / j->nblk, c0 = u % j->nblk * DW_BLOCK;                                 \
            int64_t nc = j->C - c0 < DW_BLOCK ? j->C - c0 : DW_BLOCK;                                \
            int64_t n0 = part * j->per_part, n1 = n0 + j->per_part < g->n ? n0 + j->per_part : g->n; \
            T_ *acc = (T_ *)j->partials + part * j->T * j->C;                                        \
            for (int64_t t = 0; t < j->T; t++)                                                       \
                for (int64_t c = 0; c < nc; c++) acc[t * j->C + c0 + c] = 0;                         \
            for (int64_t n = n0; n < n1; n++) {                                                      \
                const T_ *x = (const T_ *)j->x + n * j->P * j->C + c0;                               \
                const T_ *y = (const T_ *)j->y + n * j->L * j->C + c0;                               \
                for (int64_t o = 0; o < j->L; o++) {                                                 \
                    const T_ *yo = y + o * j->C;                                                     \
                    FOR_TAPS(g, o, t, s, {                                                           \
                        const T_ *xs = x + s * j->C;                                                 \
                        T_ *a = acc + t * j->C + c0;                                                 \
                        for (int64_t c = 0; c < nc; c++) a[c] += yo[c] * xs[c];                      \
                    });                                                                              \
                }                                                                                    \
            }                                                                                        \
        }                                                                                            \
    }                                                                                                \
    static void dw_weight_in_##SFX(const T_ *w, int64_t C, int64_t T, T_ *wt) {                      \
        for (int64_t c = 0; c < C; c++)                                                              \
            for (int64_t t = 0; t < T; t++) wt[t * C + c] = w[c * T + t];                            \
    }                                                                                                \
    static void dw_weight_out_##SFX(const T_ *partials, int64_t parts, int64_t C, int64_t T, T_ *w) { \
        for (int64_t c = 0; c < C; c++)                                                              \
            for (int64_t t = 0; t < T; t++) {                                                        \
                T_ s = 0;                                                                            \
                for (int64_t k = 0; k < parts; k++) s += partials[(k * T + t) * C + c];              \
                w[c * T + t] = s;                                                                    \
            }                                                                                        \
    }

DW_KERNELS(float, f32)
DW_KERNELS(double, f64)

bool cg_conv_depthwise_nhwc_applies(const cg_conv_geom *g) {
    return g->groups == g->cin && g->cout == g->cin && g->cin > 1;
}

/* a float32 copy of a half operand of n elements (NULL + CG_ERR_OOM) */
static float *to_f32(cg_dtype sdt, const void *src, int64_t n, size_t *bytes) {
    *bytes = (size_t)(n > 0 ? n : 1) * sizeof(float);
    float *d = cg_alloc(*bytes, k_cpu);
    if (d) cg_conv_half_to_f32(sdt, src, n, d);
    return d;
}

cg_status cg_conv_cpu_depthwise_nhwc(cg_conv_kind kind, cg_dtype dt, cg_dtype adt, cg_dtype bdt,
                                     const cg_conv_geom *g, const void *a, const void *b, const void *bias,
                                     void *out) {
    bool f32 = dt == CG_DTYPE_F32, fwd = kind == CG_CONV_FORWARD, tr = kind == CG_CONV_TRANSPOSE;
    size_t es = cg_dtype_size(dt);
    dw_job j = {.g = g, .dt = dt, .C = g->cin, .T = cg_conv_vol(g->k), .L = cg_conv_vol(g->out),
                .P = cg_conv_vol(g->in), .bias = bias, .out = out};
    j.nblk = (j.C + DW_BLOCK - 1) / DW_BLOCK;
    /* the operands in dt: a (x, or y for the transpose) and, for the weight gradient, b (y) */
    int64_t a_numel = g->n * (tr ? j.L : j.P) * j.C, b_numel = g->n * j.L * j.C;
    size_t abytes = 0, bbytes = 0, wbytes = (size_t)(j.T * j.C) * es;
    float *ac = adt != dt ? to_f32(adt, a, a_numel, &abytes) : NULL;
    float *bc = !fwd && !tr && bdt != dt ? to_f32(bdt, b, b_numel, &bbytes) : NULL;
    const char *av = ac ? (const char *)ac : a, *bv = bc ? (const char *)bc : b;
    cg_status st = CG_OK;
    if ((adt != dt && !ac) || (!fwd && !tr && bdt != dt && !bc)) {
        st = cg_set_error(CG_ERR_OOM, "[conv] out of memory converting a half operand");
        goto done;
    }
    if (fwd || tr) {
        char *wt = cg_alloc(wbytes ? wbytes : 1, k_cpu);
        if (!wt) {
            st = cg_set_error(CG_ERR_OOM, "[conv] out of memory for the depthwise weight");
            goto done;
        }
        if (f32) dw_weight_in_f32(b, j.C, j.T, (float *)wt);
        else dw_weight_in_f64(b, j.C, j.T, (double *)wt);
        j.wt = wt;
        if (fwd) j.x = av;
        else j.y = av;
        j.tr = tr;
        cg_parallel_for(g->n * j.nblk, 1, f32 ? dw_gather_f32 : dw_gather_f64, &j);
        cg_free(wt, wbytes ? wbytes : 1, k_cpu);
    } else {
        j.x = av, j.y = bv;
        j.parts = g->n < DW_PARTS ? g->n : DW_PARTS;
        if (j.parts < 1) j.parts = 1;
        j.per_part = (g->n + j.parts - 1) / j.parts;
        if (j.per_part < 1) j.per_part = 1;
        size_t pbytes = (size_t)j.parts * wbytes;
        if (!(j.partials = cg_alloc(pbytes ? pbytes : 1, k_cpu))) {
            st = cg_set_error(CG_ERR_OOM, "[conv_weight_grad] out of memory for partial sums");
            goto done;
        }
        cg_parallel_for(j.parts * j.nblk, 1, f32 ? dw_wgrad_f32 : dw_wgrad_f64, &j);
        if (f32) dw_weight_out_f32((const float *)j.partials, j.parts, j.C, j.T, out);
        else dw_weight_out_f64((const double *)j.partials, j.parts, j.C, j.T, out);
        cg_free(j.partials, pbytes ? pbytes : 1, k_cpu);
    }
done:
    if (ac) cg_free(ac, abytes, k_cpu);
    if (bc) cg_free(bc, bbytes, k_cpu);
    return st;
}
