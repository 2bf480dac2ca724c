/* reduce_stats.c — the CPU loops of the statistical reductions on floating
 * dtypes: var / std (two passes in double: the mean, then the sum of squared
 * deviations, divided by max(0, N - correction)), logsumexp (max-shifted) and
 * vector norms. The descriptors and backward formulas are in
 * src/ops/reduce_stats.c. */
#include "reduce_loops.h"

/* ---------------------------------------------------------------- var / std */
#define NO_SQRT(v) (v)
#define VAR_RESULT(ss, n, p) ((n) == 0 ? NAN : (ss) / ((double)(n) - (p)[0] > 0 ? (double)(n) - (p)[0] : 0.0))
/* sum of (x - m)^2 over a run (a cg_rd_run_fn) */
#define SQDEV_RUN(fname, T, LOAD)                                                    \
    static double fname(const char *in, int64_t n, int64_t s, double m) {           \
        double acc = 0.0;                                                            \
        int64_t k = 0;                                                               \
        if (s == (int64_t)sizeof(T)) {                                               \
            const T *x = (const T *)in;                                              \
            double a[16] = {0};                                                      \
            for (; k + 16 <= n; k += 16)                                             \
                for (int j = 0; j < 16; j++) {                                       \
                    double d = (double)LOAD(x[k + j]) - m;                           \
                    a[j] += d * d;                                                   \
                }                                                                    \
            for (int w = 8; w >= 1; w /= 2)                                          \
                for (int j = 0; j < w; j++) a[j] += a[j + w];                        \
            acc = a[0];                                                              \
        }                                                                            \
        for (; k < n; k++) {                                                         \
            double d = (double)LOAD(*(const T *)(in + k * s)) - m;                   \
            acc += d * d;                                                            \
        }                                                                            \
        return acc;                                                                  \
    }
SQDEV_RUN(sqdev_run_f32, float, CG_ID)
SQDEV_RUN(sqdev_run_f64, double, CG_ID)
/* float16: the same sum in the same order, converted in blocks (Note [Half compute]) */
static double sqdev_run_f16(const char *in, int64_t n, int64_t s, double m) {
    double acc = 0.0;
    int64_t k = 0;
    if (s == (int64_t)sizeof(cg_f16)) {
        const cg_f16 *x = (const cg_f16 *)in;
        const int64_t e = n / 16 * 16;
        float xb[CG_HALF_BLOCK];
        double a[16] = {0};
        for (; k < e; k += CG_HALF_BLOCK) {
            const int64_t w = e - k < CG_HALF_BLOCK ? e - k : CG_HALF_BLOCK;
            cg_f16_to_f32_n(xb, x + k, w);
            for (int64_t i = 0; i < w; i += 16)
                for (int j = 0; j < 16; j++) {
                    double d = (double)xb[i + j] - m;
                    a[j] += d * d;
                }
        }
        k = e;
        for (int w = 8; w >= 1; w /= 2)
            for (int j = 0; j < w; j++) a[j] += a[j + w];
        acc = a[0];
    }
    for (; k < n; k++) {
        double d = (double)cg_f16_to_f32(*(const cg_f16 *)(in + k * s)) - m;
        acc += d * d;
    }
    return acc;
}
SQDEV_RUN(sqdev_run_bf16, cg_bf16, CG_LD_BF16)

#define VAR_LOOP(fname, T, OT, STORE, SFX, ROOT)                                                      \
    static void fname(char *out, char *out2, const char *in, int64_t n, int64_t s, const double *p) { \
        (void)out2;                                                                                   \
        double mean = cg_rd_sum_run_##SFX(in, n, s, 0.0) / (double)n;                                 \
        double ss = sqdev_run_##SFX(in, n, s, mean);                                                  \
        *(OT *)out = STORE(ROOT(VAR_RESULT(ss, n, p)));                                               \
    }
#define VAR_COLS(fname, T, OT, LOAD, STORE, ROOT)                                                      \
    static void fname(char *out, const char *in, int64_t rows, int64_t rs, int64_t m, const double *p) { \
        double sm[CG_RD_COLS_BLOCK], ss[CG_RD_COLS_BLOCK];                                              \
        for (int64_t j0 = 0; j0 < m; j0 += CG_RD_COLS_BLOCK) {                                          \
            const int64_t w = m - j0 < CG_RD_COLS_BLOCK ? m - j0 : CG_RD_COLS_BLOCK;                    \
            for (int64_t j = 0; j < w; j++) sm[j] = 0, ss[j] = 0;                                       \
            for (int64_t i = 0; i < rows; i++) {                                                        \
                const T *x = (const T *)(in + i * rs) + j0;                                             \
                for (int64_t j = 0; j < w; j++) sm[j] += (double)LOAD(x[j]);                            \
            }                                                                                           \
            for (int64_t j = 0; j < w; j++) sm[j] /= (double)rows;                                      \
            for (int64_t i = 0; i < rows; i++) {                                                        \
                const T *x = (const T *)(in + i * rs) + j0;                                             \
                for (int64_t j = 0; j < w; j++) {                                                       \
                    double d = (double)LOAD(x[j]) - sm[j];                                              \
                    ss[j] += d * d;                                                                     \
                }                                                                                       \
            }                                                                                           \
            OT *o = (OT *)out + j0;                                                                     \
            for (int64_t j = 0; j < w; j++) o[j] = STORE(ROOT(VAR_RESULT(ss[j], rows, p)));             \
        }                                                                                               \
    }
#define VAR_LOOPS(name, ROOT)                                                          \
    VAR_LOOP(name##_f32, float, float, (float), f32, ROOT)                             \
    VAR_LOOP(name##_f64, double, double, CG_ID, f64, ROOT)                             \
    VAR_LOOP(name##_f16, cg_f16, cg_f16, CG_ST_F16, f16, ROOT)                         \
    VAR_LOOP(name##_bf16, cg_bf16, cg_bf16, CG_ST_BF16, bf16, ROOT)                    \
    VAR_COLS(name##_cols_f32, float, float, CG_ID, (float), ROOT)                      \
    VAR_COLS(name##_cols_f64, double, double, CG_ID, CG_ID, ROOT)                      \
    VAR_COLS(name##_cols_f16, cg_f16, cg_f16, CG_LD_F16, CG_ST_F16, ROOT)              \
    VAR_COLS(name##_cols_bf16, cg_bf16, cg_bf16, CG_LD_BF16, CG_ST_BF16, ROOT)
VAR_LOOPS(var, NO_SQRT)
VAR_LOOPS(std, sqrt)

static bool var_full_impl(cg_dtype dt, char *out, const char *in, int64_t n, int64_t s, const double *p, bool root) {
    cg_rd_run_fn sum = cg_rd_sum_run(dt), sq = dt == CG_DTYPE_F32 ? sqdev_run_f32 : dt == CG_DTYPE_F64 ? sqdev_run_f64
                                                : dt == CG_DTYPE_F16 ? sqdev_run_f16 : sqdev_run_bf16;
    double t, ss;
    if (!sum || !cg_rd_chunked_sum(sum, in, n, s, 0.0, &t) || !cg_rd_chunked_sum(sq, in, n, s, t / (double)n, &ss))
        return false;
    double v = VAR_RESULT(ss, n, p);
    cg_store_f64(out, dt, root ? sqrt(v) : v);
    return true;
}
static bool var_full(cg_dtype dt, char *out, const char *in, int64_t n, int64_t s, const double *p) {
    return var_full_impl(dt, out, in, n, s, p, false);
}
static bool std_full(cg_dtype dt, char *out, const char *in, int64_t n, int64_t s, const double *p) {
    return var_full_impl(dt, out, in, n, s, p, true);
}

#define LSE_LOOP(fname, T, OT, LOAD, STORE)                                                           \
    static void fname(char *out, char *out2, const char *in, int64_t n, int64_t s, const double *p) { \
        (void)out2;                                                                                   \
        (void)p;                                                                                      \
        double m = -INFINITY, acc = 0;                                                                \
        CG_RD_FOR(T, double, LOAD, if (x > m) m = x;);                                                \
        if (isinf(m)) m = 0;                                                                          \
        CG_RD_FOR(T, double, LOAD, acc += exp(x - m););                                               \
        *(OT *)out = STORE(log(acc) + m);                                                             \
    }
LSE_LOOP(lse_f32, float, float, CG_ID, CG_ID)
LSE_LOOP(lse_f64, double, double, CG_ID, CG_ID)
LSE_LOOP(lse_f16, cg_f16, cg_f16, CG_LD_F16, CG_ST_F16)
LSE_LOOP(lse_bf16, cg_bf16, cg_bf16, CG_LD_BF16, CG_ST_BF16)

#define NORM_LOOP(fname, T, OT, LOAD, STORE)                                                          \
    static void fname(char *out, char *out2, const char *in, int64_t n, int64_t s, const double *p) { \
        (void)out2;                                                                                   \
        double pp = p[0], acc = 0, r;                                                                 \
        if (pp == 2) {                                                                                \
            CG_RD_FOR(T, double, LOAD, acc += x * x;);                                                \
            r = sqrt(acc);                                                                            \
        } else if (pp == 1) {                                                                         \
            CG_RD_FOR(T, double, LOAD, acc += fabs(x););                                              \
            r = acc;                                                                                  \
        } else if (pp == 0) {                                                                         \
            CG_RD_FOR(T, double, LOAD, acc += (x != 0););                                             \
            r = acc;                                                                                  \
        } else if (isinf(pp)) {                                                                       \
            acc = pp > 0 ? 0.0 : INFINITY;                                                            \
            if (pp > 0) CG_RD_FOR(T, double, LOAD, double a_ = fabs(x);                               \
                                  if (!isnan(acc) && (isnan(a_) || a_ > acc)) acc = a_;);             \
            else CG_RD_FOR(T, double, LOAD, double a_ = fabs(x);                                      \
                           if (!isnan(acc) && (isnan(a_) || a_ < acc)) acc = a_;);                    \
            r = acc;                                                                                  \
        } else {                                                                                      \
            CG_RD_FOR(T, double, LOAD, acc += pow(fabs(x), pp););                                     \
            r = pow(acc, 1.0 / pp);                                                                   \
        }                                                                                             \
        *(OT *)out = STORE(r);                                                                        \
    }
NORM_LOOP(norm_f32, float, float, CG_ID, CG_ID)
NORM_LOOP(norm_f64, double, double, CG_ID, CG_ID)
NORM_LOOP(norm_f16, cg_f16, cg_f16, CG_LD_F16, CG_ST_F16)
NORM_LOOP(norm_bf16, cg_bf16, cg_bf16, CG_LD_BF16, CG_ST_BF16)

const cg_cpu_reduce_loops cg_cpu_reduce_var = {
    .loop = {CG_FLOAT_TABLE(var)},
    .cols = {CG_FLOAT_TABLE(var_cols)},
    .full = var_full,
};
const cg_cpu_reduce_loops cg_cpu_reduce_std = {
    .loop = {CG_FLOAT_TABLE(std)},
    .cols = {CG_FLOAT_TABLE(std_cols)},
    .full = std_full,
};
const cg_cpu_reduce_loops cg_cpu_reduce_logsumexp = {
    .loop = {CG_FLOAT_TABLE(lse)},
};
const cg_cpu_reduce_loops cg_cpu_reduce_norm = {
    .loop = {CG_FLOAT_TABLE(norm)},
};
