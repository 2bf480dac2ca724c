/* batch_norm.c — the CPU kernels of batch norm over x viewed as (N, C, S):
 * the training forward (per-channel statistics, then y = x * alpha + beta),
 * the transform alone (evaluation with running statistics) and the fused
 * first-order backward (per-channel sums, then the input gradient).
 * Note [Batch norm kernels]. */
#include "batch_norm_internal.h"
#include "loops.h"

/* Note [Batch norm kernels]: a channel is one unit of work, done by one
 * thread in a fixed order, so results never depend on the thread count.
 * Its sums run over the N rows of S contiguous elements into sixteen double
 * lanes (element s of a row goes to lane s % 16), added pairwise at the end:
 * a single accumulator would chain every add on the previous one's latency
 * and the compiler may not reorder it; the lanes vectorise into four
 * independent vector accumulators. The channel's
 * data stays in cache between its passes (statistics, then the write). The
 * elementwise passes compute in float for float / half types (double for
 * float64), like PyTorch's kernels:
 *   forward:  alpha = w * invstd, beta = b - mean * alpha, y = x * alpha + beta
 *   backward: gx = (g - mean(g) - (x - mean) * invstd^2 * mean(g * (x - mean))) * w * invstd */
#define BN_LANES 16

/* The lanes added pairwise in a fixed tree: (0+1), (2+3), ... then pairs of those. */
static double lane_sum(double *acc) {
    for (int w = BN_LANES / 2; w > 0; w /= 2)
        for (int k = 0; k < w; k++) acc[k] = acc[2 * k] + acc[2 * k + 1];
    return acc[0];
}

typedef struct bn_job {
    const char *x, *g;           /* (N, C, S) */
    char *y;                     /* forward output or input gradient, (N, C, S) */
    const double *w, *b;         /* (C) or NULL */
    double *mean, *var;          /* forward outputs (C) */
    const double *m_in, *is_in;  /* backward inputs (C): mean and invstd */
    const double *alpha, *beta;  /* transform */
    double *sum_g, *sum_gxm;     /* backward outputs (C) */
    int64_t N, C, S;
    double eps;
} bn_job;

/* Per-dtype units: T the storage type, CT the compute type, LD / ST its conversions. */
#define BN_UNITS(sfx, T, CT, LD, ST)                                                           \
    static double bn_sum_##sfx(const bn_job *j, const T *x, int64_t c, double shift, bool sq) { \
        double acc[BN_LANES] = {0};                                                            \
        const int64_t S = j->S, S8 = S - S % BN_LANES;                                         \
        for (int64_t n = 0; n < j->N; n++) {                                                   \
            const T *xr = x + (n * j->C + c) * S;                                              \
            for (int64_t s = 0; s < S8; s += BN_LANES)                                         \
                for (int k = 0; k < BN_LANES; k++) {                                           \
                    double d = (double)LD(xr[s + k]) - shift;                                  \
                    acc[k] += sq ? d * d : d;                                                  \
                }                                                                              \
            for (int64_t s = S8; s < S; s++) {                                                 \
                double d = (double)LD(xr[s]) - shift;                                          \
                acc[s % BN_LANES] += sq ? d * d : d;                                           \
            }                                                                                  \
        }                                                                                      \
        return lane_sum(acc);                                                                  \
    }                                                                                          \
    /* y = x * alpha + beta over channel c */                                                  \
    static void bn_apply_##sfx(const bn_job *j, int64_t c, double alpha, double beta) {        \
        const CT a = (CT)alpha, bt = (CT)beta;                                                 \
        for (int64_t n = 0; n < j->N; n++) {                                                   \
            const T *restrict xr = (const T *)j->x + (n * j->C + c) * j->S;                    \
            T *restrict yr = (T *)j->y + (n * j->C + c) * j->S;                                \
            for (int64_t s = 0; s < j->S; s++) yr[s] = ST((CT)LD(xr[s]) * a + bt);             \
        }                                                                                      \
    }                                                                                          \
    static void bn_forward_##sfx(int64_t c0, int64_t c1, void *p) {                            \
        const bn_job *j = p;                                                                   \
        const double cnt = (double)(j->N * j->S);                                              \
        for (int64_t c = c0; c < c1; c++) {                                                    \
            double m = bn_sum_##sfx(j, (const T *)j->x, c, 0.0, false) / cnt;                  \
            double v = bn_sum_##sfx(j, (const T *)j->x, c, m, true) / cnt;                     \
            double is = 1.0 / sqrt(v + j->eps);                                                \
            double a = j->w ? j->w[c] * is : is;                                               \
            bn_apply_##sfx(j, c, a, (j->b ? j->b[c] : 0.0) - m * a);                           \
            j->mean[c] = m;                                                                    \
            j->var[c] = v;                                                                     \
        }                                                                                      \
    }                                                                                          \
    /* rows [r0, r1) of the (N*C, S) view, in memory order */                                \
    static void bn_transform_##sfx(int64_t r0, int64_t r1, void *p) {                          \
        const bn_job *j = p;                                                                   \
        for (int64_t r = r0; r < r1; r++) {                                                    \
            const CT a = (CT)j->alpha[r % j->C], bt = (CT)j->beta[r % j->C];                   \
            const T *restrict xr = (const T *)j->x + r * j->S;                                 \
            T *restrict yr = (T *)j->y + r * j->S;                                             \
            for (int64_t s = 0; s < j->S; s++) yr[s] = ST((CT)LD(xr[s]) * a + bt);             \
        }                                                                                      \
    }                                                                                          \
    static void bn_backward_##sfx(int64_t c0, int64_t c1, void *p) {                           \
        const bn_job *j = p;                                                                   \
        const int64_t S = j->S, S8 = S - S % BN_LANES;                                         \
        const double cnt = (double)(j->N * S);                                                 \
        for (int64_t c = c0; c < c1; c++) {                                                    \
            const double m = j->m_in[c], is = j->is_in[c];                                       \
            double ag[BN_LANES] = {0}, agx[BN_LANES] = {0};                                    \
            for (int64_t n = 0; n < j->N; n++) {                                               \
                const T *xr = (const T *)j->x + (n * j->C + c) * S;                            \
                const T *gr = (const T *)j->g + (n * j->C + c) * S;                            \
                for (int64_t s = 0; s < S8; s += BN_LANES)                                     \
                    for (int k = 0; k < BN_LANES; k++) {                                       \
                        double gv = (double)LD(gr[s + k]);                                     \
                        ag[k] += gv;                                                           \
                        agx[k] += gv * ((double)LD(xr[s + k]) - m);                            \
                    }                                                                          \
                for (int64_t s = S8; s < S; s++) {                                             \
                    double gv = (double)LD(gr[s]);                                             \
                    ag[s % BN_LANES] += gv;                                                    \
                    agx[s % BN_LANES] += gv * ((double)LD(xr[s]) - m);                         \
                }                                                                              \
            }                                                                                  \
            const double sg = lane_sum(ag), sgx = lane_sum(agx);                               \
            j->sum_g[c] = sg;                                                                  \
            j->sum_gxm[c] = sgx;                                                               \
            if (!j->y) continue;                                                               \
            const double wis = (j->w ? j->w[c] : 1.0) * is;                                    \
            const CT mf = (CT)m, mg = (CT)(sg / cnt), kx = (CT)(is * is * sgx / cnt), wf = (CT)wis; \
            for (int64_t n = 0; n < j->N; n++) {                                               \
                const T *restrict xr = (const T *)j->x + (n * j->C + c) * S;                   \
                const T *restrict gr = (const T *)j->g + (n * j->C + c) * S;                   \
                T *restrict o = (T *)j->y + (n * j->C + c) * S;                                \
                for (int64_t s = 0; s < S; s++)                                                \
                    o[s] = ST(((CT)LD(gr[s]) - mg - ((CT)LD(xr[s]) - mf) * kx) * wf);          \
            }                                                                                  \
        }                                                                                      \
    }
#define BN_ST_F32(x) (x)
BN_UNITS(f32, float, float, CG_ID, BN_ST_F32)
BN_UNITS(f64, double, double, CG_ID, CG_ID)
BN_UNITS(f16, cg_f16, float, CG_LD_F16, CG_ST_F16)
BN_UNITS(bf16, cg_bf16, float, CG_LD_BF16, CG_ST_BF16)

static cg_range_fn pick(cg_dtype dt, cg_range_fn f32, cg_range_fn f64, cg_range_fn f16, cg_range_fn bf16) {
    switch (dt) {
    case CG_DTYPE_F32: return f32;
    case CG_DTYPE_F64: return f64;
    case CG_DTYPE_F16: return f16;
    default: CG_ASSERT(dt == CG_DTYPE_BF16); return bf16;
    }
}

/* Channels split across threads; a channel is N*S elements of work. */
typedef struct bn_workers {
    cg_range_fn fn;
    bn_job *j;
    int64_t grain;
    atomic_llong next;
} bn_workers;

/* A worker takes the next `grain` channels as it finishes the previous ones
 * (a thread that loses its core holds up one block, not a fixed share). */
static void bn_worker(int64_t t0, int64_t t1, void *p) {
    bn_workers *w = p;
    (void)t0, (void)t1;
    for (int64_t c; (c = atomic_fetch_add(&w->next, w->grain)) < w->j->C;)
        w->fn(c, c + w->grain < w->j->C ? c + w->grain : w->j->C, w->j);
}

static void run(cg_range_fn fn, bn_job *j) {
    int64_t per = j->N * j->S, grain = per > 0 && CG_GRAIN / per > 0 ? CG_GRAIN / per : 1;
    int64_t blocks = (j->C + grain - 1) / grain, nt = cg_get_num_threads();
    bn_workers w = {.fn = fn, .j = j, .grain = grain};
    atomic_init(&w.next, 0);
    cg_parallel_for(nt < blocks ? nt : blocks, 1, bn_worker, &w);
}

void cg_bn_cpu_forward(cg_dtype dt, int64_t N, int64_t C, int64_t S, const void *x, const double *w,
                       const double *b, double eps, void *y, double *mean, double *var) {
    bn_job j = {.x = x, .y = y, .w = w, .b = b, .mean = mean, .var = var, .N = N, .C = C, .S = S, .eps = eps};
    run(pick(dt, bn_forward_f32, bn_forward_f64, bn_forward_f16, bn_forward_bf16), &j);
}

void cg_bn_cpu_transform(cg_dtype dt, int64_t N, int64_t C, int64_t S, const void *x, const double *alpha,
                         const double *beta, void *y) {
    bn_job j = {.x = x, .y = y, .alpha = alpha, .beta = beta, .N = N, .C = C, .S = S};
    /* no statistics: rows in memory order, not channel by channel */
    cg_parallel_for(N * C, S > 0 && CG_GRAIN / S > 0 ? CG_GRAIN / S : 1,
                    pick(dt, bn_transform_f32, bn_transform_f64, bn_transform_f16, bn_transform_bf16), &j);
}

void cg_bn_cpu_backward(cg_dtype dt, int64_t N, int64_t C, int64_t S, const void *g, const void *x,
                        const double *mean, const double *invstd, const double *w, void *gx, double *sum_g,
                        double *sum_gxm) {
    bn_job j = {.x = x, .g = g, .y = gx, .w = w, .m_in = mean, .is_in = invstd, .sum_g = sum_g,
                .sum_gxm = sum_gxm, .N = N, .C = C, .S = S};
    run(pick(dt, bn_backward_f32, bn_backward_f64, bn_backward_f16, bn_backward_bf16), &j);
}
