/* nn_pool.c — pooling ops: max_pool1d/2d and adaptive_max_pool1d/2d (values
 * + int64 argmax indices), avg_pool1d/2d and adaptive_avg_pool1d/2d. One
 * window geometry (Note [Pool windows]) serves all of them. Max pool's
 * backward scatters g to the argmax with scatter_add (differentiable: its
 * backward gathers); avg pool and its backward are a pair of linear ops,
 * each the other's backward, so every pool has gradients of any order. */
#include "../dispatch/dispatch_internal.h"

#include <math.h>
#include <string.h>

/* Note [Pool windows]: an input (lead..., in...) is `planes` = prod(lead)
 * independent planes of the canonical 3-D spatial shape `in` (leading 1s).
 * Output position o of dim c reads positions start + j*step, j < count,
 * skipping those outside [0, in[c]):
 *   fixed:    start = o*stride - pad, count = kernel, step = dilation;
 *   adaptive: start = floor(o*I/O), count = ceil((o+1)*I/O) - start, step = 1.
 * The avg divisor is divisor_override, or the product over dims of each
 * window's size — clipped to [-pad, in+pad) with count_include_pad, to the
 * input otherwise (PyTorch's rule); an empty window averages to 0. */
typedef struct pool_geom {
    int nsp;
    bool adaptive, count_include_pad;
    int64_t divisor; /* 0 = none */
    int64_t in[3], out[3], k[3], s[3], p[3], d[3];
} pool_geom;

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

static void geom_pack(const pool_geom *g, int64_t *ia) {
    ia[0] = g->nsp;
    ia[1] = g->adaptive;
    ia[2] = g->count_include_pad;
    ia[3] = g->divisor;
    for (int c = 0; c < 3; c++) {
        ia[4 + c] = g->in[c];
        ia[7 + c] = g->out[c];
        ia[10 + c] = g->k[c];
        ia[13 + c] = g->s[c];
        ia[16 + c] = g->p[c];
        ia[19 + c] = g->d[c];
    }
}

static void geom_unpack(const int64_t *ia, pool_geom *g) {
    g->nsp = (int)ia[0];
    g->adaptive = ia[1] != 0;
    g->count_include_pad = ia[2] != 0;
    g->divisor = ia[3];
    for (int c = 0; c < 3; c++) {
        g->in[c] = ia[4 + c];
        g->out[c] = ia[7 + c];
        g->k[c] = ia[10 + c];
        g->s[c] = ia[13 + c];
        g->p[c] = ia[16 + c];
        g->d[c] = ia[19 + c];
    }
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

/* The common geometry (no padding, no dilation, every window inside the
 * input, not adaptive): direct offsets, no per-window bounds checks. Same
 * result as MAX_KERNEL (first maximum; the last NaN wins). */
static bool simple_windows(const pool_geom *g) {
    if (g->adaptive) return false;
    for (int c = 0; c < 3; c++)
        if (g->p[c] != 0 || g->d[c] != 1 || (g->out[c] - 1) * g->s[c] + g->k[c] > g->in[c]) return false;
    return true;
}
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

/* Note [2x2 max pool]: the 2-D 2x2 window with stride 2 (simple_windows,
 * k = s = (1,2,2)) as selects (one per statement: the form GCC if-converts):
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
static bool pool_2x2(const pool_geom *g) {
    return simple_windows(g) && g->k[0] == 1 && g->s[0] == 1 && g->k[1] == 2 && g->k[2] == 2 && g->s[1] == 2 &&
           g->s[2] == 2;
}

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

/* ---------------------------------------------------------------- running a kernel */

/* Number of planes of t (prod of its dims before the nsp spatial ones). */
static int64_t planes_of(const cg_tensor *t, int nsp) {
    int64_t n = 1;
    for (int d = 0; d < t->ndim - nsp; d++) n *= t->shape[d];
    return n;
}

/* Shape of t with its nsp spatial dims replaced by sp (canonical 3-D). */
static int with_spatial(const cg_tensor *t, int nsp, const int64_t sp[3], int64_t *shape) {
    int lead = t->ndim - nsp;
    memcpy(shape, t->shape, sizeof(int64_t) * (size_t)lead);
    for (int d = 0; d < nsp; d++) shape[lead + d] = sp[3 - nsp + d];
    return t->ndim;
}

/* Run kernel (f32 / f64 variants) from src into dst (and idx), both allocated
 * and not meta; half types compute in float32. */
static cg_status pool_run(cg_range_fn f32, cg_range_fn f64, const pool_geom *g, cg_tensor *src, cg_tensor *dst,
                          cg_tensor *idx, int64_t work_per_plane) {
    cg_dtype dt = dst->dtype, cdt = dt == CG_DTYPE_F64 ? CG_DTYPE_F64 : CG_DTYPE_F32;
    bool prev = cg_set_grad_enabled(false);
    cg_status st = CG_OK;
    cg_tensor *a = cg_tensor_alias(src), *sc = NULL, *dw = NULL;
    if (a && a->dtype != cdt) {
        cg_tensor *c = cg_to_dtype(a, cdt);
        cg_tensor_release(a);
        a = c;
    }
    if (!a || !(sc = cg_contiguous(a))) goto fail;
    if (cdt == dt) {
        cg_tensor_retain(dst);
        dw = dst;
    } else if (!(dw = cg_new_output("pool", dst->ndim, dst->shape, cdt, dst->device))) {
        goto fail;
    }
    bool codes = idx && idx->dtype == CG_DTYPE_I32;
    pool_job jb = {g, cg_tensor_ptr(sc), cg_tensor_ptr(dw), idx && !codes ? (int64_t *)cg_tensor_ptr(idx) : NULL,
                   codes ? (int32_t *)cg_tensor_ptr(idx) : NULL};
    int64_t planes = planes_of(dst, g->nsp);
    cg_parallel_for(planes, CG_GRAIN / (work_per_plane > 0 ? work_per_plane : 1) + 1, cdt == CG_DTYPE_F32 ? f32 : f64,
                    &jb);
    if (dw != dst) st = cg_copy_(dst, dw);
    goto done;
fail:
    st = cg_last_error();
done:
    cg_tensor_release(a);
    cg_tensor_release(sc);
    cg_tensor_release(dw);
    cg_set_grad_enabled(prev);
    return st;
}

static int64_t window_work(const pool_geom *g) {
    int64_t w = vol(g->out);
    for (int c = 0; c < 3; c++) {
        int64_t per = g->adaptive ? g->in[c] / (g->out[c] ? g->out[c] : 1) + 2 : g->k[c];
        if (!cg_mul_ok(w, per, &w)) return INT64_MAX; /* a grain hint: saturate */
    }
    return w;
}

/* ---------------------------------------------------------------- avg pool (a pair of linear ops) */

static cg_status avg_backward(cg_node *node, cg_tensor *const *gout, cg_tensor **gin);
static cg_status avg_back_backward(cg_node *node, cg_tensor *const *gout, cg_tensor **gin);

static const cg_op_schema k_avg_schema = {"avg_pool", "AvgPoolBackward0", 1, CG_AMP_KEEP, false, false, false};
static const cg_op_schema k_avg_back_schema = {"avg_pool_backward", "AvgPoolBackwardBackward0", 1, CG_AMP_KEEP, false,
                                               false, false};

static const char *avg_node_name(const pool_geom *g) {
    static const char *const names[2][4] = {
        {"", "AvgPool1DBackward0", "AvgPool2DBackward0", "AvgPool3DBackward0"},
        {"", "AdaptiveAvgPool1DBackward0", "AdaptiveAvgPool2DBackward0", "AdaptiveAvgPool3DBackward0"}};
    return names[g->adaptive][g->nsp];
}

/* back = false: t (lead..., in...) -> avg (lead..., out...);
 * back = true:  t (lead..., out...) -> its adjoint (lead..., in...). */
static cg_tensor *avg_body(bool back, const char *name, const pool_geom *g, cg_tensor *t) {
    CG_CHECK(cg_dtype_is_floating(t->dtype), CG_ERR_DTYPE, "[%s] not supported for dtype %s", name,
             cg_dtype_name(t->dtype));
    const int64_t *from = back ? g->out : g->in, *to = back ? g->in : g->out;
    int64_t expect[CG_MAX_DIMS], shape[CG_MAX_DIMS];
    char s1[CG_SHAPE_STR], s2[CG_SHAPE_STR];
    CG_CHECK(t->ndim > g->nsp, CG_ERR_SHAPE, "[%s] operand of shape %s has too few dims", name,
             cg_shape_str(s1, t->ndim, t->shape));
    int nd = with_spatial(t, g->nsp, from, expect);
    CG_CHECK(cg_shape_eq(nd, expect, t->ndim, t->shape), CG_ERR_SHAPE,
             "[%s] operand of shape %s doesn't match the pooling geometry (expected %s)", name,
             cg_shape_str(s1, t->ndim, t->shape), cg_shape_str(s2, nd, expect));
    with_spatial(t, g->nsp, to, shape);
    const cg_op_schema *sch = back ? &k_avg_back_schema : &k_avg_schema;
    cg_tensor *in;
    bool owned;
    if (cg_schema_guard(sch, 1, &t, &in, &owned)) return NULL;
    cg_tensor *out = cg_new_output(name, nd, shape, in->dtype, in->device);
    if (out && !cg_is_meta(out) &&
        pool_run(back ? avg_back_f32 : avg_pool_f32, back ? avg_back_f64 : avg_pool_f64, g, in, out, NULL,
                 window_work(g))) {
        cg_tensor_release(out);
        out = NULL;
    }
    if (out) {
        bool failed;
        cg_node *node = cg_wire_unary_output(back ? sch->node_name : avg_node_name(g),
                                             back ? avg_back_backward : avg_backward, sch, 1, &in, out, 0, &failed);
        if (node) geom_pack(g, node->iattr);
        if (failed) {
            cg_tensor_release(out);
            out = NULL;
        }
    }
    if (owned) cg_tensor_release(in);
    return out;
}

/* the call recorded as a profiler event (off the hot path) */
static CG_PROF_COLD cg_tensor *avg_apply_profiled(bool back, const char *name, const pool_geom *g, cg_tensor *t) {
    int64_t ev = cg_prof_begin(name, CG_PROF_OP, 1, &t);
    cg_tensor *r = avg_body(back, name, g, t);
    cg_prof_end(ev, r);
    return r;
}
static cg_tensor *avg_apply(bool back, const char *name, const pool_geom *g, cg_tensor *t) {
    if (cg_prof_active()) return avg_apply_profiled(back, name, g, t);
    return avg_body(back, name, g, t);
}

static cg_status avg_backward(cg_node *node, cg_tensor *const *gout, cg_tensor **gin) {
    pool_geom g;
    geom_unpack(node->iattr, &g);
    gin[0] = avg_apply(true, "avg_pool_backward", &g, gout[0]);
    return gin[0] ? CG_OK : cg_last_error();
}

static cg_status avg_back_backward(cg_node *node, cg_tensor *const *gout, cg_tensor **gin) {
    pool_geom g;
    geom_unpack(node->iattr, &g);
    gin[0] = avg_apply(false, "avg_pool", &g, gout[0]);
    return gin[0] ? CG_OK : cg_last_error();
}

/* ---------------------------------------------------------------- max pool */

static const cg_op_schema k_max_schema = {"max_pool", "MaxPoolBackward0", 1, CG_AMP_KEEP, false, false, false};

/* The flat indices (planes, out) of saved tap codes (Note [2x2 max pool]). */
static cg_tensor *codes_to_index(const pool_geom *g, cg_tensor *codes) {
    cg_tensor *r = cg_new_output("max_pool_backward", codes->ndim, codes->shape, CG_DTYPE_I64, codes->device);
    if (!r || cg_is_meta(r)) return r;
    const int32_t *k = (const int32_t *)cg_tensor_ptr(codes);
    int64_t *f = (int64_t *)cg_tensor_ptr(r), W = g->in[2], OW = g->out[2], L = vol(g->out);
    for (int64_t i = 0, n = cg_tensor_numel(r); i < n; i++) {
        int64_t l = i % L, oh = l / OW, o = l % OW;
        f[i] = 2 * oh * W + 2 * o + (k[i] >> 1) * W + (k[i] & 1);
    }
    return r;
}

/* gx = scatter_add(zeros(planes, P), 1, indices, g) viewed as the input's shape:
 * differentiable (scatter_add's backward gathers). Without create_graph (grad
 * mode off in the backward) one fused pass does the same sums. */
/* gin[0] = gx (computed in float32 for half types: rounded to dt once here) */
static cg_status max_back_result(cg_tensor *gx, cg_dtype dt, cg_tensor **gin) {
    if (gx && gx->dtype != dt) {
        cg_tensor *r = cg_to_dtype(gx, dt);
        cg_tensor_release(gx);
        gx = r;
    }
    gin[0] = gx;
    return gx ? CG_OK : cg_last_error();
}

static cg_status max_backward(cg_node *node, cg_tensor *const *gout, cg_tensor **gin) {
    const cg_tensor_meta *m = &node->input_meta[0];
    int nsp = (int)node->iattr[0];
    int64_t planes = 1, P = 1;
    for (int d = 0; d < m->ndim; d++) {
        if (d < m->ndim - nsp) planes *= m->shape[d];
        else P *= m->shape[d];
    }
    int64_t L = planes ? cg_tensor_numel(gout[0]) / planes : 0;
    int64_t s2[2] = {planes, L}, z2[2] = {planes, P};
    cg_tensor *idx = cg_node_saved(node, 0);
    cg_dtype dt = gout[0]->dtype;
    /* first order: one fused pass; half types run it in float32 (g converted,
     * the sums rounded once), instead of zeros + scatter_add in half */
    bool half = dt == CG_DTYPE_F16 || dt == CG_DTYPE_BF16;
    bool first = !cg_is_grad_enabled() && (half || dt == CG_DTYPE_F32 || dt == CG_DTYPE_F64) && !cg_is_meta(gout[0]);
    cg_dtype cdt = half ? CG_DTYPE_F32 : dt;
    if (idx && node->iattr[22]) { /* tap codes (Note [2x2 max pool]) */
        pool_geom g;
        geom_unpack(node->iattr, &g);
        if (first) {
            cg_tensor *gc = half ? cg_to_dtype(gout[0], cdt) : cg_contiguous(gout[0]);
            cg_tensor *gx = gc ? cg_new_output("max_pool_backward", m->ndim, m->shape, cdt, gout[0]->device) : NULL;
            if (gx && planes * P > 0) {
                max2_back_job j = {&g, cg_tensor_ptr(gc), (const int32_t *)cg_tensor_ptr(idx), cg_tensor_ptr(gx)};
                cg_parallel_for(planes, CG_GRAIN / (2 * P) + 1, cdt == CG_DTYPE_F32 ? max_2x2_back_f32 : max_2x2_back_f64,
                                &j);
            }
            cg_tensor_release(gc), cg_tensor_release(idx);
            return max_back_result(gx, dt, gin);
        }
        cg_tensor *flat = codes_to_index(&g, idx);
        cg_tensor_release(idx);
        idx = flat;
    }
    if (idx && first) {
        cg_tensor *gc = half ? cg_to_dtype(gout[0], cdt) : cg_contiguous(gout[0]);
        cg_tensor *ic = gc ? cg_contiguous(idx) : NULL;
        cg_tensor *gx = ic ? cg_new_output("max_pool_backward", m->ndim, m->shape, cdt, gout[0]->device) : NULL;
        if (gx && planes * P > 0) {
            max_back_job j = {cg_tensor_ptr(gc), (const int64_t *)cg_tensor_ptr(ic), cg_tensor_ptr(gx), L, P};
            cg_parallel_for(planes, CG_GRAIN / (P + L > 0 ? P + L : 1) + 1,
                            cdt == CG_DTYPE_F32 ? max_back_f32 : max_back_f64, &j);
        }
        cg_tensor_release(gc), cg_tensor_release(ic), cg_tensor_release(idx);
        return max_back_result(gx, dt, gin);
    }
    cg_tensor *i2 = idx ? cg_reshape(idx, 2, s2) : NULL, *g2 = i2 ? cg_reshape(gout[0], 2, s2) : NULL;
    cg_tensor *z = g2 ? cg_zeros(2, z2, gout[0]->dtype, gout[0]->device) : NULL;
    cg_tensor *r = z ? cg_scatter_add(z, 1, i2, g2) : NULL;
    gin[0] = r ? cg_reshape(r, m->ndim, m->shape) : NULL;
    cg_tensor *tmp[] = {idx, i2, g2, z, r};
    for (int i = 0; i < 5; i++) cg_tensor_release(tmp[i]);
    return gin[0] ? CG_OK : cg_last_error();
}

static cg_status max_apply(const char *name, const pool_geom *g, cg_tensor *x, cg_tensor **out, cg_tensor **indices) {
    static const char *const names[2][4] = {
        {"", "MaxPool1DWithIndicesBackward0", "MaxPool2DWithIndicesBackward0", "MaxPool3DWithIndicesBackward0"},
        {"", "AdaptiveMaxPool1DBackward0", "AdaptiveMaxPool2DBackward0", "AdaptiveMaxPool3DBackward0"}};
    int64_t shape[CG_MAX_DIMS];
    int nd = with_spatial(x, g->nsp, g->out, shape);
    /* 2x2 windows without indices asked for (Note [2x2 max pool]): tap codes
     * for the graph, or nothing when none is recorded */
    bool two = pool_2x2(g) && !indices, graph = cg_any_requires_grad(1, &x);
    bool values_only = two && !graph, codes = two && graph;
    cg_tensor *y = cg_new_output(name, nd, shape, x->dtype, x->device);
    cg_tensor *idx = y && !values_only ? cg_new_output(name, nd, shape, codes ? CG_DTYPE_I32 : CG_DTYPE_I64, x->device)
                                       : NULL;
    bool failed = !y || (!values_only && !idx);
    if (!failed && !cg_is_meta(y)) {
        cg_range_fn f32 = max_pool_f32, f64 = max_pool_f64;
        if (values_only) f32 = max_2x2_values_f32, f64 = max_2x2_values_f64;
        else if (codes) f32 = max_2x2_codes_f32, f64 = max_2x2_codes_f64;
        else if (pool_2x2(g)) f32 = max_2x2_f32, f64 = max_2x2_f64;
        else if (simple_windows(g)) f32 = max_simple_f32, f64 = max_simple_f64;
        failed = pool_run(f32, f64, g, x, y, idx, window_work(g)) != CG_OK;
    }
    if (!failed) {
        cg_node *node = cg_wire_unary_output(names[g->adaptive][g->nsp], max_backward, &k_max_schema, 1, &x, y, 1,
                                             &failed);
        if (node) {
            geom_pack(g, node->iattr);
            node->iattr[22] = codes;
            failed = cg_node_save(node, 0, idx, false, 0) != CG_OK;
        }
    }
    if (failed) {
        cg_tensor_release(y);
        cg_tensor_release(idx);
        return cg_last_error();
    }
    *out = y;
    if (indices) *indices = idx;
    else cg_tensor_release(idx);
    return CG_OK;
}

/* ---------------------------------------------------------------- validation */

static const char *const k_layouts[3][2] = {{"", ""}, {"(N,C,L)", "(C,L)"}, {"(N,C,H,W)", "(C,H,W)"}};

/* input non-NULL, floating, (N,C,spatial) or (C,spatial) with non-empty
 * non-batch dims; fills g->nsp and g->in. */
static cg_status check_input(const char *name, int nsp, cg_tensor *x, pool_geom *g) {
    char s1[CG_SHAPE_STR];
    CG_CHECK_S(x, CG_ERR_VALUE, "[%s] input must not be NULL", name);
    CG_CHECK_S(cg_dtype_is_floating(x->dtype), CG_ERR_DTYPE, "[%s] not supported for dtype %s", name,
               cg_dtype_name(x->dtype));
    CG_CHECK_S(x->ndim == nsp + 1 || x->ndim == nsp + 2, CG_ERR_SHAPE, "[%s] expected input with %d dims %s or %d %s, got %s",
               name, nsp + 2, k_layouts[nsp][0], nsp + 1, k_layouts[nsp][1], cg_shape_str(s1, x->ndim, x->shape));
    for (int d = x->ndim - nsp - 1; d < x->ndim; d++)
        CG_CHECK_S(x->shape[d] > 0, CG_ERR_SHAPE, "[%s] expected input with non-zero channel and spatial sizes, got %s",
                   name, cg_shape_str(s1, x->ndim, x->shape));
    memset(g, 0, sizeof *g);
    g->nsp = nsp;
    for (int c = 0; c < 3; c++) g->in[c] = g->out[c] = g->k[c] = g->s[c] = g->d[c] = 1;
    for (int d = 0; d < nsp; d++) g->in[3 - nsp + d] = x->shape[x->ndim - nsp + d];
    return CG_OK;
}

/* Fixed-window geometry (Note [Pool windows]), PyTorch's output size rule. */
static cg_status fixed_geom(const char *name, int nsp, cg_tensor *x, const int64_t *kernel, const int64_t *stride,
                            const int64_t *padding, const int64_t *dilation, bool ceil_mode, pool_geom *g) {
    if (check_input(name, nsp, x, g)) return cg_last_error();
    CG_CHECK_S(kernel, CG_ERR_VALUE, "[%s] kernel_size must not be NULL", name);
    char s1[CG_SHAPE_STR], s2[CG_SHAPE_STR];
    for (int d = 0; d < nsp; d++) {
        int c = 3 - nsp + d;
        int64_t k = kernel[d], s = stride ? stride[d] : k, p = padding ? padding[d] : 0, dl = dilation ? dilation[d] : 1;
        CG_CHECK_S(k > 0, CG_ERR_VALUE, "[%s] kernel_size must be positive, got %lld in dim %d", name, (long long)k, d);
        CG_CHECK_S(s > 0, CG_ERR_VALUE, "[%s] stride must be positive, got %lld in dim %d", name, (long long)s, d);
        CG_CHECK_S(dl > 0, CG_ERR_VALUE, "[%s] dilation must be positive, got %lld in dim %d", name, (long long)dl, d);
        CG_CHECK_S(p >= 0 && p <= k / 2, CG_ERR_VALUE,
                   "[%s] pad should be at most half of kernel size, but got pad=%lld and kernel_size=%lld in dim %d", name,
                   (long long)p, (long long)k, d);
        g->k[c] = k;
        g->s[c] = s;
        g->p[c] = p;
        g->d[c] = dl;
        int64_t I = g->in[c];
        /* PyTorch's rule, floor((I + 2p - dl(k-1) - 1 [+ s-1]) / s) + 1, in checked steps */
        int64_t span, padded, o = 0, last;
        CG_CHECK_S(cg_mul_ok(dl, k - 1, &span) && cg_add_ok(span, 1, &span) && cg_add_ok(I, p, &padded) &&
                       cg_add_ok(padded, p, &padded), CG_ERR_VALUE,
                   "[%s] kernel_size %lld, dilation %lld and padding %lld in dim %d overflow int64", name,
                   (long long)k, (long long)dl, (long long)p, d);
        if (padded >= span) {
            int64_t rest = padded - span;
            o = rest / s + (ceil_mode && rest % s ? 1 : 0) + 1;
            if (ceil_mode && o > 1 && (!cg_mul_ok(o - 1, s, &last) || last >= I + p)) o--;
        }
        g->out[c] = o;
    }
    for (int d = 0; d < nsp; d++)
        if (g->out[3 - nsp + d] < 1) {
            int64_t os[3];
            for (int e = 0; e < nsp; e++) os[e] = g->out[3 - nsp + e];
            return cg_set_error(CG_ERR_SHAPE, "[%s] output size is too small: input %s gives output %s", name,
                                cg_shape_str(s1, x->ndim, x->shape), cg_shape_str(s2, nsp, os));
        }
    return CG_OK;
}

static cg_status adaptive_geom(const char *name, int nsp, cg_tensor *x, const int64_t *output_size, pool_geom *g) {
    if (check_input(name, nsp, x, g)) return cg_last_error();
    CG_CHECK_S(output_size, CG_ERR_VALUE, "[%s] output_size must not be NULL", name);
    g->adaptive = true;
    for (int d = 0; d < nsp; d++) {
        CG_CHECK_S(output_size[d] >= 0, CG_ERR_VALUE, "[%s] output_size must be non-negative, got %lld in dim %d", name,
                   (long long)output_size[d], d);
        g->out[3 - nsp + d] = output_size[d];
    }
    return CG_OK;
}

/* ---------------------------------------------------------------- entry points */

static cg_status max_pool_nd(const char *name, int nsp, cg_tensor *x, const int64_t *kernel, const int64_t *stride,
                             const int64_t *padding, const int64_t *dilation, bool ceil_mode, cg_tensor **out,
                             cg_tensor **indices) {
    pool_geom g;
    CG_CHECK_S(out, CG_ERR_VALUE, "[%s] out must not be NULL", name);
    if (fixed_geom(name, nsp, x, kernel, stride, padding, dilation, ceil_mode, &g)) return cg_last_error();
    return max_apply(name, &g, x, out, indices);
}

CG_PROF_FN(cg_status, cg_max_pool1d, "max_pool1d", (cg_tensor *input, const int64_t *kernel_size, const int64_t *stride,
           const int64_t *padding, const int64_t *dilation, bool ceil_mode, cg_tensor **out, cg_tensor **indices),
           (input, kernel_size, stride, padding, dilation, ceil_mode, out, indices), input) {
    return max_pool_nd("max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode, out, indices);
}

CG_PROF_FN(cg_status, cg_max_pool2d, "max_pool2d", (cg_tensor *input, const int64_t *kernel_size, const int64_t *stride,
           const int64_t *padding, const int64_t *dilation, bool ceil_mode, cg_tensor **out, cg_tensor **indices),
           (input, kernel_size, stride, padding, dilation, ceil_mode, out, indices), input) {
    return max_pool_nd("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode, out, indices);
}

static cg_tensor *avg_pool_nd(const char *name, int nsp, cg_tensor *x, const int64_t *kernel, const int64_t *stride,
                              const int64_t *padding, bool ceil_mode, bool count_include_pad, int64_t divisor) {
    pool_geom g;
    if (fixed_geom(name, nsp, x, kernel, stride, padding, NULL, ceil_mode, &g)) return NULL;
    CG_CHECK(divisor >= 0, CG_ERR_VALUE, "[%s] divisor_override must be positive (or 0 for none), got %lld", name,
             (long long)divisor);
    g.count_include_pad = count_include_pad;
    g.divisor = divisor;
    return avg_apply(false, name, &g, x);
}

cg_tensor *cg_avg_pool1d(cg_tensor *input, const int64_t *kernel_size, const int64_t *stride, const int64_t *padding,
                         bool ceil_mode, bool count_include_pad, int64_t divisor_override) {
    return avg_pool_nd("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       divisor_override);
}

cg_tensor *cg_avg_pool2d(cg_tensor *input, const int64_t *kernel_size, const int64_t *stride, const int64_t *padding,
                         bool ceil_mode, bool count_include_pad, int64_t divisor_override) {
    return avg_pool_nd("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       divisor_override);
}

cg_tensor *cg_adaptive_avg_pool1d(cg_tensor *input, const int64_t *output_size) {
    pool_geom g;
    if (adaptive_geom("adaptive_avg_pool1d", 1, input, output_size, &g)) return NULL;
    return avg_apply(false, "adaptive_avg_pool1d", &g, input);
}

cg_tensor *cg_adaptive_avg_pool2d(cg_tensor *input, const int64_t *output_size) {
    pool_geom g;
    if (adaptive_geom("adaptive_avg_pool2d", 2, input, output_size, &g)) return NULL;
    return avg_apply(false, "adaptive_avg_pool2d", &g, input);
}

CG_PROF_FN(cg_status, cg_adaptive_max_pool1d, "adaptive_max_pool1d", (cg_tensor *input, const int64_t *output_size,
           cg_tensor **out, cg_tensor **indices), (input, output_size, out, indices), input) {
    pool_geom g;
    CG_CHECK_S(out, CG_ERR_VALUE, "[adaptive_max_pool1d] out must not be NULL");
    if (adaptive_geom("adaptive_max_pool1d", 1, input, output_size, &g)) return cg_last_error();
    return max_apply("adaptive_max_pool1d", &g, input, out, indices);
}

CG_PROF_FN(cg_status, cg_adaptive_max_pool2d, "adaptive_max_pool2d", (cg_tensor *input, const int64_t *output_size,
           cg_tensor **out, cg_tensor **indices), (input, output_size, out, indices), input) {
    pool_geom g;
    CG_CHECK_S(out, CG_ERR_VALUE, "[adaptive_max_pool2d] out must not be NULL");
    if (adaptive_geom("adaptive_max_pool2d", 2, input, output_size, &g)) return cg_last_error();
    return max_apply("adaptive_max_pool2d", &g, input, out, indices);
}
