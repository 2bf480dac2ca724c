/* rnn.c — the CPU's recurrent-cell entries (Note [Kernel entries]): the
 * whole-sequence LSTM layer of one direction and its fused first-order
 * backward (Note [LSTM layer], src/ops/nn_rnn.c): the time loop, the
 * recurrent GEMMs through the BLAS glue (blas.c) and the gate math split
 * across threads by batch rows. */
#include "blas_internal.h"
#include "cpu_kernels.h"
#include "vmath.h"

#include <math.h>
#include <string.h>

static const cg_device k_cpu = {CG_DEVICE_CPU, 0};

/* ------------------------------------------------------------- GEMM glue */

/* C (m, n) = A (m, k) @ B (k, n) + beta C; A row-major with row stride lda;
 * B given as the row-major (n, k) matrix `bt` (B = bt^T) when bt_trans, else
 * as the row-major (k, n) matrix. */
static void gemm(cg_dtype dt, int64_t m, int64_t n, int64_t k, const char *a, int64_t lda, const char *b,
                 bool bt_trans, double beta, char *c) {
    cg_gemm_desc d = {.dtype = dt, .nbatch = 0, .m = m, .n = n, .k = k, .alpha = 1.0, .beta = beta, .c = c};
    d.a.ptr = a, d.a.rs = lda, d.a.cs = 1;
    d.b.ptr = b;
    if (bt_trans) d.b.rs = 1, d.b.cs = k;
    else d.b.rs = n, d.b.cs = 1;
    cg_gemm(&d);
}

/* C (m, n) += A^T B for A (k, m) and B (k, n) row-major. */
static void gemm_tn(cg_dtype dt, int64_t m, int64_t n, int64_t k, const char *a, const char *b, double beta, char *c) {
    cg_gemm_desc d = {.dtype = dt, .nbatch = 0, .m = m, .n = n, .k = k, .alpha = 1.0, .beta = beta, .c = c};
    d.a.ptr = a, d.a.rs = 1, d.a.cs = m;
    d.b.ptr = b, d.b.rs = n, d.b.cs = 1;
    cg_gemm(&d);
}

/* ------------------------------------------------------------- the step kernels */

typedef struct step_job {
    int64_t H;
    char *gates;        /* (B, 4H): pre-activations in, activations out (forward); dG out (backward) */
    const char *acts;   /* backward: the saved activated gates (B, 4H) */
    const char *c_prev; /* (B, H) */
    char *c;            /* forward: new cell (B, H); backward: the saved cell of this step (read) */
    char *h;            /* forward: new hidden (B, H) */
    const char *dh;     /* backward: gradient of this step's h (B, H) */
    char *dc;           /* backward: gradient of this step's c in, of c_prev out (B, H) */
} step_job;

/* One row of the gate math. The gate blocks of a row are disjoint, so each
 * gets its own restrict pointer and the loop vectorises (the vector sigmoid /
 * tanh inline). */
#define LSTM_FWD(sfx, T, SIG, TANH)                                                          \
    static void lstm_fwd_row_##sfx(T *restrict gi, T *restrict gf, T *restrict gg, T *restrict go, \
                                   const T *restrict cp, T *restrict c, T *restrict h, int64_t H) { \
        for (int64_t k = 0; k < H; k++) {                                                    \
            T i = SIG(gi[k]), f = SIG(gf[k]), g = TANH(gg[k]), o = SIG(go[k]);               \
            T cn = f * cp[k] + i * g;                                                        \
            gi[k] = i, gf[k] = f, gg[k] = g, go[k] = o;                                      \
            c[k] = cn;                                                                       \
            h[k] = o * TANH(cn);                                                             \
        }                                                                                    \
    }                                                                                        \
    static void lstm_fwd_##sfx(int64_t b0, int64_t b1, void *ctx) {                         \
        const step_job *j = ctx;                                                             \
        const int64_t H = j->H;                                                              \
        for (int64_t b = b0; b < b1; b++) {                                                  \
            T *g = (T *)j->gates + b * 4 * H;                                                \
            lstm_fwd_row_##sfx(g, g + H, g + 2 * H, g + 3 * H, (const T *)j->c_prev + b * H, \
                               (T *)j->c + b * H, (T *)j->h + b * H, H);                     \
        }                                                                                    \
    }

static inline double sig_d(double x) { return 1.0 / (1.0 + exp(-x)); }
LSTM_FWD(f32, float, cg_vm_sigmoidf, cg_vm_tanhf)
LSTM_FWD(f64, double, sig_d, tanh)

/* dG (written into j->gates) and dc_prev (into j->dc) from dh, dc and the saved
 * activations: with tc = tanh(c) and dct = dc + dh * o * (1 - tc^2),
 *   dG_i = dct g i (1 - i), dG_f = dct c_prev f (1 - f), dG_g = dct i (1 - g^2),
 *   dG_o = dh tc o (1 - o), dc_prev = dct f. */
#define LSTM_BWD(sfx, T, TANH)                                                               \
    static void lstm_bwd_row_##sfx(const T *restrict ai, const T *restrict af, const T *restrict ag, \
                                   const T *restrict ao, T *restrict di, T *restrict df, T *restrict dg, \
                                   T *restrict dout, const T *restrict cp, const T *restrict c,     \
                                   const T *restrict dh, T *restrict dc, int64_t H) {               \
        for (int64_t k = 0; k < H; k++) {                                                    \
            T i = ai[k], f = af[k], g = ag[k], o = ao[k];                                    \
            T tc = TANH(c[k]);                                                               \
            T dct = dc[k] + dh[k] * o * (1 - tc * tc);                                       \
            di[k] = dct * g * i * (1 - i);                                                   \
            df[k] = dct * cp[k] * f * (1 - f);                                               \
            dg[k] = dct * i * (1 - g * g);                                                   \
            dout[k] = dh[k] * tc * o * (1 - o);                                              \
            dc[k] = dct * f;                                                                 \
        }                                                                                    \
    }                                                                                        \
    static void lstm_bwd_##sfx(int64_t b0, int64_t b1, void *ctx) {                         \
        const step_job *j = ctx;                                                             \
        const int64_t H = j->H;                                                              \
        for (int64_t b = b0; b < b1; b++) {                                                  \
            const T *a = (const T *)j->acts + b * 4 * H;                                     \
            T *d = (T *)j->gates + b * 4 * H;                                                \
            lstm_bwd_row_##sfx(a, a + H, a + 2 * H, a + 3 * H, d, d + H, d + 2 * H, d + 3 * H, \
                               (const T *)j->c_prev + b * H, (const T *)j->c + b * H,        \
                               (const T *)j->dh + b * H, (T *)j->dc + b * H, H);             \
        }                                                                                    \
    }
LSTM_BWD(f32, float, cg_vm_tanhf)
LSTM_BWD(f64, double, tanh)

/* rows of B per work unit: at least CG_GRAIN elements of gate math */
static int64_t row_grain(int64_t H) { return H > 0 && CG_GRAIN / (4 * H) > 0 ? CG_GRAIN / (4 * H) : 1; }

/* ------------------------------------------------------------- the entries */

cg_status cg_cpu_lstm_layer(bool reverse, cg_tensor *acts, cg_tensor *cells, cg_tensor *out, cg_tensor *hn,
                            cg_tensor *cn, const cg_tensor *xp, const cg_tensor *h0, const cg_tensor *c0,
                            const cg_tensor *w) {
    const int64_t T = xp->shape[0], B = h0->shape[0], H = h0->shape[1];
    const cg_dtype dt = xp->dtype;
    const size_t es = cg_itemsize(dt);
    const int64_t bh = B * H, step = B * 4 * H;
    char *pa = cg_tensor_ptr(acts), *pc = cg_tensor_ptr(cells), *po = cg_tensor_ptr(out);
    const char *hp = cg_tensor_ptr(h0), *cp = cg_tensor_ptr(c0), *pw = cg_tensor_ptr(w);
    if (T * step > 0) memcpy(pa, cg_tensor_ptr(xp), (size_t)(T * step) * es);
    cg_range_fn fn = dt == CG_DTYPE_F32 ? lstm_fwd_f32 : lstm_fwd_f64;
    for (int64_t s = 0; s < T && bh > 0; s++) {
        int64_t t = reverse ? T - 1 - s : s;
        char *g = pa + t * step * es;
        gemm(dt, B, 4 * H, H, hp, H, pw, true, 1.0, g);
        step_job j = {.H = H, .gates = g, .c_prev = cp, .c = pc + t * bh * es, .h = po + t * bh * es};
        cg_parallel_for(B, row_grain(H), fn, &j);
        hp = j.h, cp = j.c;
    }
    if (bh > 0) {
        memcpy(cg_tensor_ptr(hn), hp, (size_t)bh * es);
        memcpy(cg_tensor_ptr(cn), cp, (size_t)bh * es);
    }
    return CG_OK;
}

cg_status cg_cpu_lstm_layer_backward(bool reverse, cg_tensor *dG, cg_tensor *dh, cg_tensor *dc, cg_tensor *dw,
                                     const cg_tensor *go, const cg_tensor *acts, const cg_tensor *cells,
                                     const cg_tensor *out, const cg_tensor *h0, const cg_tensor *c0,
                                     const cg_tensor *w) {
    const int64_t T = acts->shape[0], B = acts->shape[1], H = h0->shape[1];
    const bool rev = reverse;
    const cg_dtype dt = acts->dtype;
    const size_t es = cg_itemsize(dt);
    const int64_t bh = B * H, step = B * 4 * H;
    size_t dhn_bytes = (size_t)bh * es;
    char *pdhn = dhn_bytes ? cg_alloc(dhn_bytes, k_cpu) : NULL; /* dh_prev of a step */
    if (dhn_bytes && !pdhn) return cg_last_error();
    char *pg = cg_tensor_ptr(dG), *pdh = cg_tensor_ptr(dh), *pdc = cg_tensor_ptr(dc);
    const char *pgo = cg_tensor_ptr(go);
    const char *pa = cg_tensor_ptr(acts), *pc = cg_tensor_ptr(cells), *pc0 = cg_tensor_ptr(c0);
    const char *pw = cg_tensor_ptr(w);
    cg_range_fn fn = dt == CG_DTYPE_F32 ? lstm_bwd_f32 : lstm_bwd_f64;
    for (int64_t s = T - 1; s >= 0; s--) {
        int64_t t = rev ? T - 1 - s : s, tp = rev ? t + 1 : t - 1;
        /* dh += dout[t] */
        const char *gt = pgo + t * bh * es;
        if (dt == CG_DTYPE_F32)
            for (int64_t e = 0; e < bh; e++) ((float *)pdh)[e] += ((const float *)gt)[e];
        else
            for (int64_t e = 0; e < bh; e++) ((double *)pdh)[e] += ((const double *)gt)[e];
        step_job j = {.H = H, .gates = pg + t * step * es, .acts = pa + t * step * es,
                      .c_prev = s == 0 ? pc0 : pc + tp * bh * es, .c = (char *)pc + t * bh * es, .dh = pdh,
                      .dc = pdc};
        cg_parallel_for(B, row_grain(H), fn, &j);
        /* dh_prev = dG[t] (B, 4H) @ W (4H, H) */
        gemm(dt, B, H, 4 * H, j.gates, 4 * H, pw, false, 0.0, pdhn);
        memcpy(pdh, pdhn, (size_t)bh * es);
    }
    if (pdhn) cg_free(pdhn, dhn_bytes, k_cpu);
    if (dw) {
        /* steps after the first take h_prev from out: one GEMM with k = (T - 1) B;
         * the first step's h_prev is h0 */
        int64_t first = rev ? T - 1 : 0;
        const char *po = cg_tensor_ptr(out);
        double beta = 0.0;
        if (T > 1) {
            const char *ga = rev ? pg : pg + step * es;          /* dG rows of the later steps */
            const char *hb = rev ? po + bh * es : po;            /* their h_prev rows */
            gemm_tn(dt, 4 * H, H, (T - 1) * B, ga, hb, 0.0, cg_tensor_ptr(dw));
            beta = 1.0;
        }
        gemm_tn(dt, 4 * H, H, B, pg + first * step * es, cg_tensor_ptr(h0), beta, cg_tensor_ptr(dw));
    }
    return CG_OK;
}
