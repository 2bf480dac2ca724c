/* pool.c — the CPU's pooling entries (Note [Kernel entries]): max pool
 * (values and int64 argmax indices, or int32 tap codes for 2x2 windows),
 * avg pool and its adjoint, the first-order max backward, over contiguous
 * (planes, spatial...) tensors of one window geometry (Note [Pool windows],
 * src/backend/kernels.h); planes split across threads (disjoint outputs).
 * The same maps over channels-last (batch, spatial..., C) tensors run the
 * loops of Note [Channels-last pool kernels], vectorised over C. One kernel
 * of each kind serves 1, 2 and 3 spatial dims (canonical 3-D geometry). */
#include "cpu_kernels.h"

#include <math.h>
#include <string.h>

typedef cg_pool_geom pool_geom;

typedef struct pool_win {
    int64_t start, count, step, factor;
} pool_win;

static pool_win window(const pool_geom *g, int c, int64_t o) {
    pool_win w;
    int64_t I = g->in[c];
    if (g->adaptive) {
        int64_t O = g->out[c];
        w.start = o * I / O;
        w.count = ((o + 1) * I + O - 1) / O - w.start;
        w.step = 1;
        w.factor = w.count;
        return w;
    }
    w.start = o * g->s[c] - g->p[c];
    w.count = g->k[c];
    w.step = g->d[c];
    int64_t end = w.start + g->k[c];
    if (g->count_include_pad) {
        w.factor = (end < I + g->p[c] ? end : I + g->p[c]) - w.start;
    } else {
        int64_t lo = w.start > 0 ? w.start : 0, hi = end < I ? end : I;
        w.factor = hi > lo ? hi - lo : 0;
    }
    return w;
}

static int64_t vol(const int64_t v[3]) { return v[0] * v[1] * v[2]; }

/* ---------------------------------------------------------------- kernels
 * All operands contiguous, (planes, spatial...) with spatial = g->in or g->out;
 * planes split across threads (disjoint outputs). */

typedef struct pool_job {
    const pool_geom *g;
    const char *src;
    char *dst;
    int64_t *idx;
    int32_t *codes; /* 2x2 windows: the tap taken (0..3), instead of idx */
} pool_job;

/* Loop over every output position (o0,o1,o2) of a plane and the valid input
 * positions of its window: BODY_IN runs per input (flat index `f`), then
 * BODY_OUT per output (flat index `ol`, window size product `fac`). */
#define POOL_LOOP(INIT, BODY_IN, BODY_OUT)                                                           \
    for (int64_t o0 = 0; o0 < g->out[0]; o0++) {                                                     \
        pool_win w0 = window(g, 0, o0);                                                              \
        for (int64_t o1 = 0; o1 < g->out[1]; o1++) {                                                 \
            pool_win w1 = window(g, 1, o1);                                                          \
            for (int64_t o2 = 0; o2 < g->out[2]; o2++) {                                             \
                pool_win w2 = window(g, 2, o2);                                                      \
                int64_t ol = (o0 * g->out[1] + o1) * g->out[2] + o2;                                 \
                int64_t fac = w0.factor * w1.factor * w2.factor;                                     \
                (void)fac;                                                                           \
                INIT;                                                                                \
                for (int64_t j0 = 0; j0 < w0.count; j0++) {                                          \
                    int64_t i0 = w0.start + j0 * w0.step;                                            \
                    if (i0 < 0 || i0 >= g->in[0]) continue;                                          \
                    for (int64_t j1 = 0; j1 < w1.count; j1++) {                                      \
                        int64_t i1 = w1.start + j1 * w1.step;                                        \
                        if (i1 < 0 || i1 >= g->in[1]) continue;                                      \
                        for (int64_t j2 = 0; j2 < w2.count; j2++) {                                  \
                            int64_t i2 = w2.start + j2 * w2.step;                                    \
                            if (i2 < 0 || i2 >= g->in[2]) continue;                                  \
                            int64_t f = (i0 * g->in[1] + i1) * g->in[2] + i2;                        \
                            BODY_IN;                                                                 \
                        }                                                                            \
                    }                                                                                \
                }                                                                                    \
                BODY_OUT;                                                                            \
            }                                                                                        \
        }                                                                                            \
    }

/* max: src (planes, in...) -> dst (planes, out...), idx (planes, out...) */
#define MAX_KERNEL(name, T)                                                                    \
    static void name(int64_t b, int64_t e, void *p) {                                          \
        const pool_job *jb = p;                                                                \
        const pool_geom *g = jb->g;                                                            \
        int64_t P = vol(g->in), L = vol(g->out);                                               \
        for (int64_t pl = b; pl < e; pl++) {                                                   \
            const T *x = (const T *)jb->src + pl * P;                                          \
            T *y = (T *)jb->dst + pl * L;                                                      \
            int64_t *ix = jb->idx + pl * L;                                                    \
            T mv;                                                                              \
            int64_t mi;                                                                        \
            POOL_LOOP((mv = -(T)INFINITY, mi = -1), {                                          \
                T v = x[f];                                                                    \
                if (mi < 0) mi = f;                                                            \
                if (v > mv || isnan(v)) {                                                      \
                    mv = v;                                                                    \
                    mi = f;                                                                    \
                }                                                                              \
            }, (y[ol] = mv, ix[ol] = mi < 0 ? 0 : mi))                                         \
        }                                                                                      \
    }
MAX_KERNEL(max_pool_f32, float)
MAX_KERNEL(max_pool_f64, double)

/* The common geometry (cg_pool_simple_windows): direct offsets, no
 * per-window bounds checks. Same result as MAX_KERNEL (first maximum; the
 * last NaN wins). */
#define MAX_SIMPLE_KERNEL(name, T)                                                             \
    static void name(int64_t b, int64_t e, void *p) {                                          \
        const pool_job *jb = p;                                                                \
        const pool_geom *g = jb->g;                                                            \
        const int64_t P = vol(g->in), L = vol(g->out), I1 = g->in[1], I2 = g->in[2];           \
        for (int64_t pl = b; pl < e; pl++) {                                                   \
            const T *x = (const T *)jb->src + pl * P;                                          \
            T *y = (T *)jb->dst + pl * L;                                                      \
            int64_t *ix = jb->idx + pl * L, ol = 0;                                            \
            for (int64_t o0 = 0; o0 < g->out[0]; o0++)                                         \
                for (int64_t o1 = 0; o1 < g->out[1]; o1++)                                     \
                    for (int64_t o2 = 0; o2 < g->out[2]; o2++, ol++) {                         \
                        int64_t f0 = (o0 * g->s[0] * I1 + o1 * g->s[1]) * I2 + o2 * g->s[2];   \
                        T mv = x[f0];                                                          \
                        int64_t mi = f0;                                                       \
                        for (int64_t j0 = 0; j0 < g->k[0]; j0++)                               \
                            for (int64_t j1 = 0; j1 < g->k[1]; j1++)                           \
                                for (int64_t j2 = 0; j2 < g->k[2]; j2++) {                     \
                                    int64_t f = f0 + (j0 * I1 + j1) * I2 + j2;                 \
                                    T v = x[f];                                                \
                                    bool take = (v > mv) | (v != v); /* selects, not branches */ \
                                    mv = take ? v : mv;                                        \
                                    mi = take ? f : mi;                                        \
                                }                                                              \
                        y[ol] = mv;                                                            \
                        ix[ol] = mi;                                                           \
                    }                                                                          \
        }                                                                                      \
    }
MAX_SIMPLE_KERNEL(max_simple_f32, float)
MAX_SIMPLE_KERNEL(max_simple_f64, double)

/* Note [2x2 max pool]: the 2-D 2x2 window with stride 2 (cg_pool_2x2:
 * simple windows, k = s = (1,2,2)) as selects (one per statement: the form GCC if-converts):
 * the max of each row pair of taps, then of the two rows, a later candidate
 * winning when greater or NaN. That picks what MAX_SIMPLE_KERNEL's row-major
 * scan picks (the last NaN if any, else the first maximum). The tap taken,
 * k = 0..3 (row-major in the window), is stored as an int64 flat index (the
 * indices users see), as an int32 code (what the graph saves when no indices
 * are asked for: half the memory traffic), or not at all (no graph). Rows are short (7 or
 * 14 outputs in a small CNN), so a row runs in blocks of a fixed 8 (or 4)
 * outputs, which the compiler turns into straight vector code, the last
 * block overlapping the one before instead of a scalar tail (its branches
 * mispredicted on every row); codes and values keep one element width so
 * nothing widens the vectors. */

/* Run BLOCK(V, o) over a row of OW outputs in blocks of V = 8, 4 or 1, the
 * last block ending at the row's end (overlapping: blocks are idempotent). */
#define ROW_BLOCKS(OW, BLOCK)                                                                  \
    do {                                                                                       \
        if ((OW) >= 8) {                                                                       \
            int64_t o_ = 0;                                                                    \
            for (; o_ + 8 <= (OW); o_ += 8) BLOCK(8, o_);                                      \
            if (o_ < (OW)) BLOCK(8, (OW) - 8);                                                 \
        } else if ((OW) >= 4) {                                                                \
            BLOCK(4, 0);                                                                       \
            BLOCK(4, (OW) - 4);                                                                \
        } else {                                                                               \
            for (int64_t o_ = 0; o_ < (OW); o_++) BLOCK(1, o_);                                \
        }                                                                                      \
    } while (0)

/* Outputs [o0, o0 + V) of one row: y (and the tap, through STORE(i, k)). */
#define MAX2_BLOCK(T, V, o0, STORE)                                                            \
    for (int q_ = 0; q_ < (V); q_++) {                                                         \
        const int64_t i = (o0) + q_;                                                           \
        T a = r0[2 * i], bb = r0[2 * i + 1], c = r1[2 * i], d = r1[2 * i + 1];                 \
        T m01 = a, m23 = c, m, k01 = 0, k23 = 2, k; /* the tap in T: one element width */      \
        k01 = bb > a ? 1 : k01;                                                                \
        m01 = bb > a ? bb : m01;                                                               \
        k01 = bb != bb ? 1 : k01;                                                              \
        m01 = bb != bb ? bb : m01;                                                             \
        k23 = d > c ? 3 : k23;                                                                 \
        m23 = d > c ? d : m23;                                                                 \
        k23 = d != d ? 3 : k23;                                                                \
        m23 = d != d ? d : m23;                                                                \
        k = m23 > m01 ? k23 : k01;                                                             \
        m = m23 > m01 ? m23 : m01;                                                             \
        k = m23 != m23 ? k23 : k;                                                              \
        m = m23 != m23 ? m23 : m;                                                              \
        y[i] = m;                                                                              \
        STORE(i, k);                                                                           \
    }

#define MAX_2X2_KERNEL(name, T, DECL, STORE)                                                   \
    static void name(int64_t b, int64_t e, void *p) {                                          \
        const pool_job *jb = p;                                                                \
        const pool_geom *g = jb->g;                                                            \
        const int64_t W = g->in[2], OH = g->out[1], OW = g->out[2], P = vol(g->in), L = vol(g->out); \
        for (int64_t pl = b; pl < e; pl++)                                                     \
            for (int64_t oh = 0; oh < OH; oh++) {                                              \
                const T *restrict r0 = (const T *)jb->src + pl * P + 2 * oh * W;               \
                const T *restrict r1 = r0 + W;                                                 \
                T *restrict y = (T *)jb->dst + pl * L + oh * OW;                               \
                const int64_t lrow = pl * L + oh * OW, f0 = 2 * oh * W;                        \
                DECL;                                                                          \
                (void)lrow, (void)f0;                                                          \
                ROW_BLOCKS(OW, BLOCK_##name);                                                  \
            }                                                                                  \
    }
#define STORE_INDEX(i, k) (ix[i] = f0 + 2 * (i) + ((int)(k) >> 1) * W + ((int)(k) & 1))
#define STORE_CODE(i, k) (kc[i] = (int32_t)(k))
#define STORE_NONE(i, k) (void)(k)
#define BLOCK_max_2x2_f32(V, o) MAX2_BLOCK(float, V, o, STORE_INDEX)
#define BLOCK_max_2x2_f64(V, o) MAX2_BLOCK(double, V, o, STORE_INDEX)
#define BLOCK_max_2x2_codes_f32(V, o) MAX2_BLOCK(float, V, o, STORE_CODE)
#define BLOCK_max_2x2_codes_f64(V, o) MAX2_BLOCK(double, V, o, STORE_CODE)
#define BLOCK_max_2x2_values_f32(V, o) MAX2_BLOCK(float, V, o, STORE_NONE)
#define BLOCK_max_2x2_values_f64(V, o) MAX2_BLOCK(double, V, o, STORE_NONE)
MAX_2X2_KERNEL(max_2x2_f32, float, int64_t *restrict ix = jb->idx + lrow, STORE_INDEX)
MAX_2X2_KERNEL(max_2x2_f64, double, int64_t *restrict ix = jb->idx + lrow, STORE_INDEX)
MAX_2X2_KERNEL(max_2x2_codes_f32, float, int32_t *restrict kc = jb->codes + lrow, STORE_CODE)
MAX_2X2_KERNEL(max_2x2_codes_f64, double, int32_t *restrict kc = jb->codes + lrow, STORE_CODE)
MAX_2X2_KERNEL(max_2x2_values_f32, float, (void)0, STORE_NONE)
MAX_2X2_KERNEL(max_2x2_values_f64, double, (void)0, STORE_NONE)

/* First-order backward from codes: gx (planes, in) zeroed, then each
 * window's taken tap += g (what zeros + scatter-add at the indices gives). */
typedef struct max2_back_job {
    const pool_geom *g;
    const char *gy;
    const int32_t *codes;
    char *gx;
} max2_back_job;
#define MAX_2X2_BACK_KERNEL(name, T)                                                           \
    static void name(int64_t b, int64_t e, void *p) {                                          \
        const max2_back_job *j = p;                                                            \
        const pool_geom *g = j->g;                                                             \
        const int64_t W = g->in[2], OH = g->out[1], OW = g->out[2], P = vol(g->in), L = vol(g->out); \
        for (int64_t pl = b; pl < e; pl++) {                                                   \
            T *gx = (T *)j->gx + pl * P;                                                       \
            const T *gr = (const T *)j->gy + pl * L;                                           \
            const int32_t *kr = j->codes + pl * L;                                             \
            memset(gx, 0, sizeof(T) * (size_t)P);                                              \
            for (int64_t oh = 0, l = 0; oh < OH; oh++)                                         \
                for (int64_t o = 0; o < OW; o++, l++)                                          \
                    gx[2 * oh * W + 2 * o + (kr[l] >> 1) * W + (kr[l] & 1)] += gr[l];          \
        }                                                                                      \
    }
MAX_2X2_BACK_KERNEL(max_2x2_back_f32, float)
MAX_2X2_BACK_KERNEL(max_2x2_back_f64, double)

/* First-order max backward: gx (planes, P) zeroed, gx[idx] += g per plane. */
typedef struct max_back_job {
    const char *g;
    const int64_t *idx;
    char *gx;
    int64_t L, P;
} max_back_job;
#define MAX_BACK_KERNEL(name, T)                                                               \
    static void name(int64_t b, int64_t e, void *p) {                                          \
        const max_back_job *j = p;                                                             \
        for (int64_t pl = b; pl < e; pl++) {                                                   \
            const T *g = (const T *)j->g + pl * j->L;                                          \
            const int64_t *ix = j->idx + pl * j->L;                                            \
            T *gx = (T *)j->gx + pl * j->P;                                                    \
            memset(gx, 0, sizeof(T) * (size_t)j->P);                                           \
            for (int64_t l = 0; l < j->L; l++) gx[ix[l]] += g[l];                              \
        }                                                                                      \
    }
MAX_BACK_KERNEL(max_back_f32, float)
MAX_BACK_KERNEL(max_back_f64, double)

/* Note [Integer pool]: integer max pool (every integer dtype but bool) and
 * avg pool (int64, as PyTorch's CPU build) run on int64 operands (the op
 * widens and narrows them exactly): max takes the first maximum, avg sums in
 * int64 and divides with C's truncation toward zero, as PyTorch does. */
static void max_pool_i64(int64_t b, int64_t e, void *p) {
    const pool_job *jb = p;
    const pool_geom *g = jb->g;
    int64_t P = vol(g->in), L = vol(g->out);
    for (int64_t pl = b; pl < e; pl++) {
        const int64_t *x = (const int64_t *)jb->src + pl * P;
        int64_t *y = (int64_t *)jb->dst + pl * L, *ix = jb->idx ? jb->idx + pl * L : NULL;
        int64_t mv = 0, mi;
        POOL_LOOP(mi = -1, {
            if (mi < 0 || x[f] > mv) {
                mv = x[f];
                mi = f;
            }
        }, {
            y[ol] = mi < 0 ? 0 : mv;
            if (ix) ix[ol] = mi < 0 ? 0 : mi;
        })
    }
}

static void avg_pool_i64(int64_t b, int64_t e, void *p) {
    const pool_job *jb = p;
    const pool_geom *g = jb->g;
    int64_t P = vol(g->in), L = vol(g->out);
    for (int64_t pl = b; pl < e; pl++) {
        const int64_t *x = (const int64_t *)jb->src + pl * P;
        int64_t *y = (int64_t *)jb->dst + pl * L;
        uint64_t acc;
        int64_t n;
        POOL_LOOP((acc = 0, n = 0), (acc += (uint64_t)x[f], n++), {
            int64_t div = g->divisor ? g->divisor : fac;
            y[ol] = n && div ? (int64_t)acc / div : 0;
        })
    }
}

/* avg: src (planes, in...) -> dst (planes, out...) */
#define AVG_KERNEL(name, T)                                                                    \
    static void name(int64_t b, int64_t e, void *p) {                                          \
        const pool_job *jb = p;                                                                \
        const pool_geom *g = jb->g;                                                            \
        int64_t P = vol(g->in), L = vol(g->out);                                               \
        for (int64_t pl = b; pl < e; pl++) {                                                   \
            const T *x = (const T *)jb->src + pl * P;                                          \
            T *y = (T *)jb->dst + pl * L;                                                      \
            double acc;                                                                        \
            int64_t n;                                                                         \
            POOL_LOOP((acc = 0, n = 0), (acc += (double)x[f], n++), {                          \
                double div = g->divisor ? (double)g->divisor : (double)fac;                    \
                y[ol] = n ? (T)(acc / div) : (T)0;                                             \
            })                                                                                 \
        }                                                                                      \
    }
AVG_KERNEL(avg_pool_f32, float)
AVG_KERNEL(avg_pool_f64, double)

/* avg backward: src = g (planes, out...) -> dst = gx (planes, in...) */
#define AVG_BACK_KERNEL(name, T)                                                               \
    static void name(int64_t b, int64_t e, void *p) {                                          \
        const pool_job *jb = p;                                                                \
        const pool_geom *g = jb->g;                                                            \
        int64_t P = vol(g->in), L = vol(g->out);                                               \
        for (int64_t pl = b; pl < e; pl++) {                                                   \
            const T *gy = (const T *)jb->src + pl * L;                                         \
            T *gx = (T *)jb->dst + pl * P;                                                     \
            memset(gx, 0, sizeof(T) * (size_t)P);                                              \
            T v;                                                                               \
            POOL_LOOP(v = g->divisor ? (T)((double)gy[ol] / (double)g->divisor)                 \
                          : fac ? (T)((double)gy[ol] / (double)fac) : (T)0,                    \
                      gx[f] += v, (void)0)                                                     \
        }                                                                                      \
    }
AVG_BACK_KERNEL(avg_back_f32, float)
AVG_BACK_KERNEL(avg_back_f64, double)



/* ---------------------------------------------------------------- channels-last kernels */

/* Note [Channels-last pool kernels]: with g->channels = C every operand is
 * (batch, spatial..., C) contiguous, so one spatial position holds a row of
 * C channels and every window tap is a row: the loops run over a window's
 * valid taps (clipped once per dim, no per-tap bounds checks) and, inside,
 * over the C channels with unit stride, which the compiler vectorises (the
 * max is a compare and two selects per channel, as in Note [2x2 max pool]).
 * The forward splits the (batch, output position) rows across threads; the
 * backwards split (batch, block of channels) pairs, each summing its
 * gradients in the one order of the outputs, so the result does not depend
 * on the thread count. The max takes the first maximum of the row-major
 * scan, a later NaN replacing it (the last NaN wins), as the planar kernels;
 * the sums run in the element type (float32 for float32, as PyTorch's
 * channels-last kernels; the planar ones sum in double). */

/* The taps j in [*lo, *hi) of window w whose positions lie in [0, I). */
static void valid_taps(const pool_win *w, int64_t I, int64_t *lo, int64_t *hi) {
    int64_t a = 0, b = w->count;
    if (w->start < 0) a = (-w->start + w->step - 1) / w->step;
    int64_t room = I - w->start; /* positions start + j*step < I: j < ceil(room / step) */
    int64_t lim = room > 0 ? (room + w->step - 1) / w->step : 0;
    if (lim < b) b = lim;
    *lo = a;
    *hi = b > a ? b : a;
}

/* The windows of output row r (a (batch, position) pair) and its clipped taps. */
typedef struct cl_row {
    int64_t n, ol;
    pool_win w[3];
    int64_t lo[3], hi[3];
} cl_row;

static void cl_row_of(const pool_geom *g, int64_t r, cl_row *q) {
    int64_t L = vol(g->out);
    q->n = r / L;
    q->ol = r % L;
    int64_t o[3] = {q->ol / (g->out[1] * g->out[2]), (q->ol / g->out[2]) % g->out[1], q->ol % g->out[2]};
    for (int c = 0; c < 3; c++) {
        q->w[c] = window(g, c, o[c]);
        valid_taps(&q->w[c], g->in[c], &q->lo[c], &q->hi[c]);
    }
}

/* Loop over the valid taps of row q: BODY with the input position's flat index f. */
#define CL_TAPS(q, BODY)                                                                       \
    for (int64_t j0 = (q).lo[0]; j0 < (q).hi[0]; j0++) {                                       \
        const int64_t i0 = (q).w[0].start + j0 * (q).w[0].step;                                \
        for (int64_t j1 = (q).lo[1]; j1 < (q).hi[1]; j1++) {                                   \
            const int64_t i1 = (q).w[1].start + j1 * (q).w[1].step;                            \
            for (int64_t j2 = (q).lo[2]; j2 < (q).hi[2]; j2++) {                               \
                const int64_t f = (i0 * g->in[1] + i1) * g->in[2] + (q).w[2].start + j2 * (q).w[2].step; \
                BODY;                                                                          \
            }                                                                                  \
        }                                                                                      \
    }

#define CL_FLOAT_NAN(v) ((v) != (v))
#define CL_NO_NAN(v) false

/* max: src (batch, in..., C) -> dst (batch, out..., C) and, WITH_IDX, idx (batch, out..., C) */
#define MAX_CL_KERNEL(name, T, ISNAN, WITH_IDX)                                                \
    static void name(int64_t b, int64_t e, void *p) {                                          \
        const pool_job *jb = p;                                                                \
        const pool_geom *g = jb->g;                                                            \
        const int64_t C = g->channels, P = vol(g->in);                                         \
        for (int64_t r = b; r < e; r++) {                                                      \
            cl_row q;                                                                          \
            cl_row_of(g, r, &q);                                                               \
            const T *x = (const T *)jb->src + q.n * P * C;                                     \
            T *restrict y = (T *)jb->dst + r * C;                                              \
            int64_t *restrict ix = WITH_IDX ? jb->idx + r * C : NULL;                          \
            bool first = true;                                                                 \
            CL_TAPS(q, {                                                                       \
                const T *restrict xr = x + f * C;                                              \
                if (first) {                                                                   \
                    for (int64_t c = 0; c < C; c++) y[c] = xr[c];                              \
                    if (WITH_IDX)                                                              \
                        for (int64_t c = 0; c < C; c++) ix[c] = f;                             \
                    first = false;                                                             \
                } else if (WITH_IDX) {                                                         \
                    for (int64_t c = 0; c < C; c++) {                                          \
                        T v = xr[c];                                                           \
                        bool take = (v > y[c]) | ISNAN(v);                                     \
                        y[c] = take ? v : y[c];                                                \
                        ix[c] = take ? f : ix[c];                                              \
                    }                                                                          \
                } else {                                                                       \
                    for (int64_t c = 0; c < C; c++) {                                          \
                        T v = xr[c];                                                           \
                        y[c] = (v > y[c]) | ISNAN(v) ? v : y[c];                               \
                    }                                                                          \
                }                                                                              \
            })                                                                                 \
            if (first) { /* no valid tap (cannot happen for a validated geometry): zeros */   \
                memset(y, 0, sizeof(T) * (size_t)C);                                           \
                if (WITH_IDX) memset(ix, 0, sizeof(int64_t) * (size_t)C);                      \
            }                                                                                  \
        }                                                                                      \
    }
MAX_CL_KERNEL(max_cl_f32, float, CL_FLOAT_NAN, 1)
MAX_CL_KERNEL(max_cl_f64, double, CL_FLOAT_NAN, 1)
MAX_CL_KERNEL(max_cl_i64, int64_t, CL_NO_NAN, 1)
MAX_CL_KERNEL(max_cl_values_f32, float, CL_FLOAT_NAN, 0)
MAX_CL_KERNEL(max_cl_values_f64, double, CL_FLOAT_NAN, 0)
MAX_CL_KERNEL(max_cl_values_i64, int64_t, CL_NO_NAN, 0)

/* The avg divisor of row q (Note [Pool windows]): divisor_override, else the product of the window factors */
static int64_t cl_divisor(const pool_geom *g, const cl_row *q) {
    return g->divisor ? g->divisor : q->w[0].factor * q->w[1].factor * q->w[2].factor;
}

/* avg: src (batch, in..., C) -> dst (batch, out..., C), summed in dst's row */
#define AVG_CL_KERNEL(name, T)                                                                 \
    static void name(int64_t b, int64_t e, void *p) {                                          \
        const pool_job *jb = p;                                                                \
        const pool_geom *g = jb->g;                                                            \
        const int64_t C = g->channels, P = vol(g->in);                                         \
        for (int64_t r = b; r < e; r++) {                                                      \
            cl_row q;                                                                          \
            cl_row_of(g, r, &q);                                                               \
            const T *x = (const T *)jb->src + q.n * P * C;                                     \
            T *restrict y = (T *)jb->dst + r * C;                                              \
            for (int64_t c = 0; c < C; c++) y[c] = 0;                                          \
            CL_TAPS(q, {                                                                       \
                const T *restrict xr = x + f * C;                                              \
                for (int64_t c = 0; c < C; c++) y[c] += xr[c];                                 \
            })                                                                                 \
            int64_t taps = (q.hi[0] - q.lo[0]) * (q.hi[1] - q.lo[1]) * (q.hi[2] - q.lo[2]);     \
            const T dv = (T)cl_divisor(g, &q);                                                 \
            if (taps && dv != 0)                                                               \
                for (int64_t c = 0; c < C; c++) y[c] = y[c] / dv;                              \
            else                                                                               \
                for (int64_t c = 0; c < C; c++) y[c] = 0;                                      \
        }                                                                                      \
    }
AVG_CL_KERNEL(avg_cl_f32, float)
AVG_CL_KERNEL(avg_cl_f64, double)

/* int64 avg (Note [Integer pool]): wrapping int64 sums, truncating division */
static void avg_cl_i64(int64_t b, int64_t e, void *p) {
    const pool_job *jb = p;
    const pool_geom *g = jb->g;
    const int64_t C = g->channels, P = vol(g->in);
    for (int64_t r = b; r < e; r++) {
        cl_row q;
        cl_row_of(g, r, &q);
        const int64_t *x = (const int64_t *)jb->src + q.n * P * C;
        int64_t *restrict y = (int64_t *)jb->dst + r * C;
        for (int64_t c = 0; c < C; c++) y[c] = 0;
        CL_TAPS(q, {
            const int64_t *restrict xr = x + f * C;
            for (int64_t c = 0; c < C; c++) y[c] = (int64_t)((uint64_t)y[c] + (uint64_t)xr[c]);
        })
        int64_t taps = (q.hi[0] - q.lo[0]) * (q.hi[1] - q.lo[1]) * (q.hi[2] - q.lo[2]);
        const int64_t dv = cl_divisor(g, &q);
        for (int64_t c = 0; c < C; c++) y[c] = taps && dv ? y[c] / dv : 0;
    }
}

/* The backwards' unit of work: a block of CL_CBLOCK channels of one batch element. */
#define CL_CBLOCK 64
typedef struct cl_back_job {
    const pool_geom *g;
    const char *gy;
    const int64_t *idx; /* max: the argmax indices (batch, out..., C); avg: NULL */
    char *gx;
} cl_back_job;

/* gx block (batch n, in..., [c0, c1)) <- 0 */
#define CL_ZERO_BLOCK(T, gx, P, C, c0, cb)                                                     \
    for (int64_t s_ = 0; s_ < (P); s_++) memset((gx) + s_ * (C) + (c0), 0, sizeof(T) * (size_t)(cb))

/* avg backward: gy (batch, out..., C) -> gx (batch, in..., C), each output's g / divisor added to its taps */
#define AVG_BACK_CL_KERNEL(name, T)                                                            \
    static void name(int64_t b, int64_t e, void *p) {                                          \
        const cl_back_job *jb = p;                                                             \
        const pool_geom *g = jb->g;                                                            \
        const int64_t C = g->channels, P = vol(g->in), L = vol(g->out);                        \
        const int64_t nb = (C + CL_CBLOCK - 1) / CL_CBLOCK;                                    \
        for (int64_t u = b; u < e; u++) {                                                      \
            const int64_t n = u / nb, c0 = (u % nb) * CL_CBLOCK;                               \
            const int64_t cb = C - c0 < CL_CBLOCK ? C - c0 : CL_CBLOCK;                        \
            T *gx = (T *)jb->gx + n * P * C;                                                   \
            CL_ZERO_BLOCK(T, gx, P, C, c0, cb);                                                \
            for (int64_t ol = 0; ol < L; ol++) {                                               \
                cl_row q;                                                                      \
                cl_row_of(g, n * L + ol, &q);                                                  \
                const int64_t dv = cl_divisor(g, &q);                                          \
                if (!dv) continue;                                                             \
                const T *restrict gr = (const T *)jb->gy + (n * L + ol) * C + c0;              \
                T v[CL_CBLOCK];                                                                \
                for (int64_t c = 0; c < cb; c++) v[c] = (T)((double)gr[c] / (double)dv);       \
                CL_TAPS(q, {                                                                   \
                    T *restrict xr = gx + f * C + c0;                                          \
                    for (int64_t c = 0; c < cb; c++) xr[c] += v[c];                            \
                })                                                                             \
            }                                                                                  \
        }                                                                                      \
    }
AVG_BACK_CL_KERNEL(avg_back_cl_f32, float)
AVG_BACK_CL_KERNEL(avg_back_cl_f64, double)

/* max backward: gx (batch, in..., C) = 0, then gx[n, idx, c] += gy[n, o, c] */
#define MAX_BACK_CL_KERNEL(name, T)                                                            \
    static void name(int64_t b, int64_t e, void *p) {                                          \
        const cl_back_job *jb = p;                                                             \
        const pool_geom *g = jb->g;                                                            \
        const int64_t C = g->channels, P = vol(g->in), L = vol(g->out);                        \
        const int64_t nb = (C + CL_CBLOCK - 1) / CL_CBLOCK;                                    \
        for (int64_t u = b; u < e; u++) {                                                      \
            const int64_t n = u / nb, c0 = (u % nb) * CL_CBLOCK;                               \
            const int64_t cb = C - c0 < CL_CBLOCK ? C - c0 : CL_CBLOCK;                        \
            T *gx = (T *)jb->gx + n * P * C;                                                   \
            CL_ZERO_BLOCK(T, gx, P, C, c0, cb);                                                \
            for (int64_t ol = 0; ol < L; ol++) {                                               \
                const T *gr = (const T *)jb->gy + (n * L + ol) * C;                            \
                const int64_t *ir = jb->idx + (n * L + ol) * C;                                \
                for (int64_t c = c0; c < c0 + cb; c++) gx[ir[c] * C + c] += gr[c];             \
            }                                                                                  \
        }                                                                                      \
    }
MAX_BACK_CL_KERNEL(max_back_cl_f32, float)
MAX_BACK_CL_KERNEL(max_back_cl_f64, double)

/* The forward over rows of batch * out positions, the backwards over (batch, channel block) pairs. */
static int64_t cl_tap_count(const pool_geom *g) {
    int64_t w = 1;
    for (int c = 0; c < 3; c++) w *= g->adaptive ? g->in[c] / (g->out[c] ? g->out[c] : 1) + 2 : g->k[c];
    return w;
}

static cg_status cl_forward(cg_range_fn fn, const pool_geom *g, cg_tensor *dst, cg_tensor *idx,
                            const cg_tensor *src) {
    pool_job jb = {g, cg_tensor_ptr(src), cg_tensor_ptr(dst), idx ? (int64_t *)cg_tensor_ptr(idx) : NULL, NULL};
    int64_t rows = g->channels ? cg_tensor_numel(dst) / g->channels : 0, work = cl_tap_count(g) * g->channels;
    cg_parallel_for(rows, CG_GRAIN / (work > 0 ? work : 1) + 1, fn, &jb);
    return CG_OK;
}

static cg_status cl_backward(cg_range_fn fn, const pool_geom *g, cg_tensor *gx, const cg_tensor *gy,
                             const cg_tensor *idx) {
    cl_back_job jb = {g, cg_tensor_ptr(gy), idx ? (const int64_t *)cg_tensor_ptr(idx) : NULL, cg_tensor_ptr(gx)};
    int64_t C = g->channels, batch = C ? cg_tensor_numel(gx) / (vol(g->in) * C) : 0;
    int64_t units = batch * ((C + CL_CBLOCK - 1) / CL_CBLOCK);
    int64_t work = (vol(g->in) + vol(g->out) * (idx ? 1 : cl_tap_count(g))) * (C < CL_CBLOCK ? C : CL_CBLOCK);
    cg_parallel_for(units, CG_GRAIN / (work > 0 ? work : 1) + 1, fn, &jb);
    return CG_OK;
}

static cg_status cl_pool(cg_pool_kind kind, const pool_geom *g, cg_tensor *dst, cg_tensor *idx,
                         const cg_tensor *src) {
    cg_dtype dt = dst->dtype;
    int w = dt == CG_DTYPE_F64 ? 1 : dt == CG_DTYPE_I64 ? 2 : 0;
    static const cg_range_fn maxi[3] = {max_cl_f32, max_cl_f64, max_cl_i64},
                             maxv[3] = {max_cl_values_f32, max_cl_values_f64, max_cl_values_i64},
                             avg[3] = {avg_cl_f32, avg_cl_f64, avg_cl_i64};
    if (kind == CG_POOL_MAX) {
        CG_CHECK_S(!idx || idx->dtype == CG_DTYPE_I64, CG_ERR_NOT_IMPLEMENTED,
                   "[pool] channels-last max pool keeps int64 indices");
        return cl_forward(idx ? maxi[w] : maxv[w], g, dst, idx, src);
    }
    if (kind == CG_POOL_AVG) return cl_forward(avg[w], g, dst, NULL, src);
    CG_CHECK_S(dt != CG_DTYPE_I64, CG_ERR_NOT_IMPLEMENTED, "[pool] integer pooling has no backward");
    return cl_backward(w ? avg_back_cl_f64 : avg_back_cl_f32, g, dst, src, NULL);
}

/* Number of planes of t (prod of its dims before the nsp spatial ones). */
static int64_t planes_of(const cg_tensor *t, int nsp) {
    int64_t n = 1;
    for (int d = 0; d < t->ndim - nsp; d++) n *= t->shape[d];
    return n;
}


static int64_t window_work(const pool_geom *g) {
    int64_t w = vol(g->out);
    for (int c = 0; c < 3; c++) {
        int64_t per = g->adaptive ? g->in[c] / (g->out[c] ? g->out[c] : 1) + 2 : g->k[c];
        if (!cg_mul_ok(w, per, &w)) return INT64_MAX; /* a grain hint: saturate */
    }
    return w;
}


/* The variants of a pool kernel: float32 (or the int64 one, Note [Integer pool]) and float64. */
static cg_status pool_launch(cg_range_fn f32, cg_range_fn f64, const pool_geom *g, cg_tensor *dst, cg_tensor *idx,
                             const cg_tensor *src) {
    bool codes = idx && idx->dtype == CG_DTYPE_I32;
    pool_job jb = {g, cg_tensor_ptr(src), cg_tensor_ptr(dst), idx && !codes ? (int64_t *)cg_tensor_ptr(idx) : NULL,
                   codes ? (int32_t *)cg_tensor_ptr(idx) : NULL};
    int64_t planes = planes_of(dst, g->nsp), work_per_plane = window_work(g);
    cg_parallel_for(planes, CG_GRAIN / (work_per_plane > 0 ? work_per_plane : 1) + 1,
                    dst->dtype == CG_DTYPE_F64 ? f64 : f32, &jb);
    return CG_OK;
}

cg_status cg_cpu_pool(cg_pool_kind kind, const cg_pool_geom *g, cg_tensor *dst, cg_tensor *idx, const cg_tensor *src) {
    if (g->channels) return cl_pool(kind, g, dst, idx, src); /* Note [Channels-last pool kernels] */
    if (dst->dtype == CG_DTYPE_I64) { /* Note [Integer pool] */
        CG_CHECK_S(kind != CG_POOL_AVG_BACKWARD && (!idx || idx->dtype == CG_DTYPE_I64), CG_ERR_NOT_IMPLEMENTED,
                   "[pool] integer pooling has no backward");
        return pool_launch(kind == CG_POOL_AVG ? avg_pool_i64 : max_pool_i64, NULL, g, dst, idx, src);
    }
    if (kind == CG_POOL_AVG) return pool_launch(avg_pool_f32, avg_pool_f64, g, dst, NULL, src);
    if (kind == CG_POOL_AVG_BACKWARD) return pool_launch(avg_back_f32, avg_back_f64, g, dst, NULL, src);
    cg_range_fn f32 = max_pool_f32, f64 = max_pool_f64;
    if (!idx) f32 = max_2x2_values_f32, f64 = max_2x2_values_f64;
    else if (idx->dtype == CG_DTYPE_I32) f32 = max_2x2_codes_f32, f64 = max_2x2_codes_f64;
    else if (cg_pool_2x2(g)) f32 = max_2x2_f32, f64 = max_2x2_f64;
    else if (cg_pool_simple_windows(g)) f32 = max_simple_f32, f64 = max_simple_f64;
    return pool_launch(f32, f64, g, dst, idx, src);
}

cg_status cg_cpu_max_pool_backward(const cg_pool_geom *g, cg_tensor *gx, const cg_tensor *gy, const cg_tensor *idx) {
    int64_t P = vol(g->in), L = vol(g->out), planes = planes_of(gx, g->nsp);
    if (planes * P <= 0) return CG_OK;
    bool f32 = gx->dtype == CG_DTYPE_F32;
    if (g->channels) return cl_backward(f32 ? max_back_cl_f32 : max_back_cl_f64, g, gx, gy, idx);
    if (idx->dtype == CG_DTYPE_I32) { /* tap codes (Note [2x2 max pool]) */
        max2_back_job j = {g, cg_tensor_ptr(gy), (const int32_t *)cg_tensor_ptr(idx), cg_tensor_ptr(gx)};
        cg_parallel_for(planes, CG_GRAIN / (2 * P) + 1, f32 ? max_2x2_back_f32 : max_2x2_back_f64, &j);
    } else {
        max_back_job j = {cg_tensor_ptr(gy), (const int64_t *)cg_tensor_ptr(idx), cg_tensor_ptr(gx), L, P};
        cg_parallel_for(planes, CG_GRAIN / (P + L > 0 ? P + L : 1) + 1, f32 ? max_back_f32 : max_back_f64, &j);
    }
    return CG_OK;
}

cg_status cg_cpu_max_pool_codes_to_index(const cg_pool_geom *g, cg_tensor *index, const cg_tensor *codes) {
    const int32_t *k = (const int32_t *)cg_tensor_ptr(codes);
    int64_t *f = (int64_t *)cg_tensor_ptr(index), W = g->in[2], OW = g->out[2], L = vol(g->out);
    for (int64_t i = 0, n = cg_tensor_numel(index); i < n; i++) {
        int64_t l = i % L, oh = l / OW, o = l % OW;
        f[i] = 2 * oh * W + 2 * o + (k[i] >> 1) * W + (k[i] & 1);
    }
    return CG_OK;
}
