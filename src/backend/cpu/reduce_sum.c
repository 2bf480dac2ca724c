/* reduce_sum.c — the CPU loops of the sum-like reductions: sum, mean, prod,
 * count_nonzero, any, all, and the chunked double sums they and var / std
 * share. Floating reductions accumulate in double; integer sums and products
 * in int64 (PyTorch's result dtype). The descriptors and backward formulas are
 * in src/ops/reduce.c. */
#include "reduce_loops.h"

#include <stdlib.h>

/* ---------------------------------------------------------------- sum */
#define SUM_STEP(acc, x) ((acc) + (x))
#define SUM_FINAL(acc, n) (acc)
/* Floating sums accumulate in double. A contiguous run keeps sixteen
 * independent accumulators (combined in a fixed order) so the adds pipeline
 * and vectorise instead of waiting on one dependency chain; a strided run
 * folds serially. SUM_RUN defines cg_rd_sum_run_<dtype> (reduce_loops.h). */
#define SUM_RUN(fname, T, LOAD)                                                                       \
    double fname(const char *in, int64_t n, int64_t s, double c) {                                   \
        (void)c;                                                                                      \
        double acc = 0.0;                                                                             \
        int64_t k = 0;                                                                                \
        if (s == (int64_t)sizeof(T)) {                                                                \
            const T *x = (const T *)in;                                                               \
            double a[16] = {0};                                                                       \
            for (; k + 16 <= n; k += 16)                                                              \
                for (int j = 0; j < 16; j++) a[j] += (double)LOAD(x[k + j]);                          \
            for (int w = 8; w >= 1; w /= 2)                                                           \
                for (int j = 0; j < w; j++) a[j] += a[j + w];                                         \
            acc = a[0];                                                                               \
            for (; k < n; k++) acc += (double)LOAD(x[k]);                                             \
        } else {                                                                                      \
            for (; k < n; k++) acc += (double)LOAD(*(const T *)(in + k * s));                         \
        }                                                                                             \
        return acc;                                                                                   \
    }
SUM_RUN(cg_rd_sum_run_f32, float, CG_ID)
SUM_RUN(cg_rd_sum_run_f64, double, CG_ID)
/* float16: the same sums in the same order, the contiguous run converted in
 * blocks (Note [Half compute]) */
double cg_rd_sum_run_f16(const char *in, int64_t n, int64_t s, double c) {
    (void)c;
    double acc = 0.0;
    int64_t k = 0;
    if (s == (int64_t)sizeof(cg_f16)) {
        const cg_f16 *x = (const cg_f16 *)in;
        const int64_t m = n / 16 * 16;
        float xb[CG_HALF_BLOCK];
        double a[16] = {0};
        for (; k < m; k += CG_HALF_BLOCK) {
            const int64_t w = m - k < CG_HALF_BLOCK ? m - k : CG_HALF_BLOCK;
            cg_f16_to_f32_n(xb, x + k, w);
            for (int64_t i = 0; i < w; i += 16)
                for (int j = 0; j < 16; j++) a[j] += (double)xb[i + j];
        }
        k = m;
        for (int w = 8; w >= 1; w /= 2)
            for (int j = 0; j < w; j++) a[j] += a[j + w];
        acc = a[0];
    }
    for (; k < n; k++) acc += (double)cg_f16_to_f32(*(const cg_f16 *)(in + k * s));
    return acc;
}
SUM_RUN(cg_rd_sum_run_bf16, cg_bf16, CG_LD_BF16)

/* sum / mean loops on a run: FIN(acc, n) */
#define SUM_FLOAT_LOOP(fname, T, STORE, RUN, FIN)                                                     \
    static void fname(char *out, char *out2, const char *in, int64_t n, int64_t s, const double *p) { \
        (void)out2, (void)p;                                                                          \
        *(T *)out = STORE(FIN(RUN(in, n, s, 0.0), n));                                                \
    }
#define SUM_FLOAT_LOOPS(name, FIN)                                                   \
    SUM_FLOAT_LOOP(name##_f32, float, (float), cg_rd_sum_run_f32, FIN)               \
    SUM_FLOAT_LOOP(name##_f64, double, CG_ID, cg_rd_sum_run_f64, FIN)                \
    SUM_FLOAT_LOOP(name##_f16, cg_f16, CG_ST_F16, cg_rd_sum_run_f16, FIN)            \
    SUM_FLOAT_LOOP(name##_bf16, cg_bf16, CG_ST_BF16, cg_rd_sum_run_bf16, FIN)
SUM_FLOAT_LOOPS(sum, SUM_FINAL)
CG_REDUCE_LOOP(sum_b, uint8_t, int64_t, int64_t, CG_LD_BOOL, CG_ID, 0, SUM_STEP, SUM_FINAL)
CG_REDUCE_LOOP(sum_u8, uint8_t, int64_t, int64_t, CG_ID, CG_ID, 0, SUM_STEP, SUM_FINAL)
CG_REDUCE_LOOP(sum_i8, int8_t, int64_t, int64_t, CG_ID, CG_ID, 0, SUM_STEP, SUM_FINAL)
CG_REDUCE_LOOP(sum_i16, int16_t, int64_t, int64_t, CG_ID, CG_ID, 0, SUM_STEP, SUM_FINAL)
CG_REDUCE_LOOP(sum_i32, int32_t, int64_t, int64_t, CG_ID, CG_ID, 0, SUM_STEP, SUM_FINAL)
CG_REDUCE_LOOP(sum_i64, int64_t, int64_t, int64_t, CG_ID, CG_ID, 0, SUM_STEP, SUM_FINAL)
/* the barebones unsigned dtypes sum into int64 as PyTorch does (uint64 wraps modulo 2^64) */
CG_REDUCE_LOOP(sum_u16, uint16_t, int64_t, int64_t, CG_ID, CG_ID, 0, SUM_STEP, SUM_FINAL)
CG_REDUCE_LOOP(sum_u32, uint32_t, int64_t, int64_t, CG_ID, CG_ID, 0, SUM_STEP, SUM_FINAL)
CG_REDUCE_LOOP(sum_u64, uint64_t, uint64_t, int64_t, CG_ID, CG_ID, 0u, SUM_STEP, SUM_FINAL)

/* column folds (Note [Column reductions]) for every dtype sum takes; FIN as the loops' */
#define SUM_COLS_LOOPS(name, FIN)                                                                              \
    CG_REDUCE_COLS_LOOP(name##_cols_f32, float, double, float, CG_ID, (float), 0.0, SUM_STEP, FIN)             \
    CG_REDUCE_COLS_LOOP(name##_cols_f64, double, double, double, CG_ID, CG_ID, 0.0, SUM_STEP, FIN)             \
    CG_REDUCE_COLS_LOOP(name##_cols_f16, cg_f16, double, cg_f16, CG_LD_F16, CG_ST_F16, 0.0, SUM_STEP, FIN)     \
    CG_REDUCE_COLS_LOOP(name##_cols_bf16, cg_bf16, double, cg_bf16, CG_LD_BF16, CG_ST_BF16, 0.0, SUM_STEP, FIN)
SUM_COLS_LOOPS(sum, SUM_FINAL)
CG_REDUCE_COLS_LOOP(sum_cols_b, uint8_t, int64_t, int64_t, CG_LD_BOOL, CG_ID, 0, SUM_STEP, SUM_FINAL)
CG_REDUCE_COLS_LOOP(sum_cols_u8, uint8_t, int64_t, int64_t, CG_ID, CG_ID, 0, SUM_STEP, SUM_FINAL)
CG_REDUCE_COLS_LOOP(sum_cols_i8, int8_t, int64_t, int64_t, CG_ID, CG_ID, 0, SUM_STEP, SUM_FINAL)
CG_REDUCE_COLS_LOOP(sum_cols_i16, int16_t, int64_t, int64_t, CG_ID, CG_ID, 0, SUM_STEP, SUM_FINAL)
CG_REDUCE_COLS_LOOP(sum_cols_i32, int32_t, int64_t, int64_t, CG_ID, CG_ID, 0, SUM_STEP, SUM_FINAL)
CG_REDUCE_COLS_LOOP(sum_cols_i64, int64_t, int64_t, int64_t, CG_ID, CG_ID, 0, SUM_STEP, SUM_FINAL)
CG_REDUCE_COLS_LOOP(sum_cols_u16, uint16_t, int64_t, int64_t, CG_ID, CG_ID, 0, SUM_STEP, SUM_FINAL)
CG_REDUCE_COLS_LOOP(sum_cols_u32, uint32_t, int64_t, int64_t, CG_ID, CG_ID, 0, SUM_STEP, SUM_FINAL)
CG_REDUCE_COLS_LOOP(sum_cols_u64, uint64_t, uint64_t, int64_t, CG_ID, CG_ID, 0u, SUM_STEP, SUM_FINAL)

/* ---------------------------------------------------------------- chunked double sums (reduce_loops.h) */
typedef struct rd_chunk_job {
    cg_rd_run_fn run;
    const char *in;
    int64_t n, s;
    double c;
    double *partials;
} rd_chunk_job;

static void rd_chunk_range(int64_t b, int64_t e, void *ctx) {
    const rd_chunk_job *j = ctx;
    for (int64_t k = b; k < e; k++) {
        int64_t start = k * CG_RD_CHUNK, len = j->n - start < CG_RD_CHUNK ? j->n - start : CG_RD_CHUNK;
        j->partials[k] = j->run(j->in + start * j->s, len, j->s, j->c);
    }
}

bool cg_rd_chunked_sum(cg_rd_run_fn run, const char *in, int64_t n, int64_t s, double c, double *total) {
    int64_t nchunks = n / CG_RD_CHUNK + (n % CG_RD_CHUNK != 0); /* n + CHUNK - 1 may overflow */
    double local[64], *partials = nchunks <= 64 ? local : cg_malloc_n("sum", nchunks, sizeof(double));
    if (!partials) return false;
    rd_chunk_job job = {run, in, n, s, c, partials};
    cg_parallel_for(nchunks, 1, rd_chunk_range, &job);
    double t = 0.0;
    for (int64_t k = 0; k < nchunks; k++) t += partials[k];
    if (partials != local) free(partials);
    *total = t;
    return true;
}

cg_rd_run_fn cg_rd_sum_run(cg_dtype dt) {
    switch (dt) {
    case CG_DTYPE_F32: return cg_rd_sum_run_f32;
    case CG_DTYPE_F64: return cg_rd_sum_run_f64;
    case CG_DTYPE_F16: return cg_rd_sum_run_f16;
    case CG_DTYPE_BF16: return cg_rd_sum_run_bf16;
    default: return NULL;
    }
}

/* one floating sum (div = 1) or mean (div = n) over all of its n elements */
static bool sum_full_div(cg_dtype dt, char *out, const char *in, int64_t n, int64_t s, double div) {
    cg_rd_run_fn run = cg_rd_sum_run(dt);
    double t;
    if (!run || !cg_rd_chunked_sum(run, in, n, s, 0.0, &t)) return false; /* integers: the chunked loops */
    cg_store_f64(out, dt, t / div);
    return true;
}
static bool sum_full(cg_dtype dt, char *out, const char *in, int64_t n, int64_t s, const double *p) {
    (void)p;
    return sum_full_div(dt, out, in, n, s, 1.0);
}

#define ANY_STEP(acc, x) ((acc) | ((x) != 0))
#define ALL_STEP(acc, x) ((acc) & ((x) != 0))
#define BOOL_FINAL(acc, n) (acc)
/* floats are tested against zero before the int accumulator sees them
 * (a plain cast would turn 0.3 into 0 and NaN into undefined behaviour) */
#define NZ_LD(x) ((x) != 0)
#define NZ_LD_F16(x) (CG_LD_F16(x) != 0)
#define NZ_LD_BF16(x) (CG_LD_BF16(x) != 0)
#define REDUCE_BOOL_LOOPS(name, INIT, STEP)                                                         \
    CG_REDUCE_LOOP(name##_b, uint8_t, int, uint8_t, CG_ID, CG_ST_BOOL, INIT, STEP, BOOL_FINAL)      \
    CG_REDUCE_LOOP(name##_u8, uint8_t, int, uint8_t, CG_ID, CG_ST_BOOL, INIT, STEP, BOOL_FINAL)     \
    CG_REDUCE_LOOP(name##_i8, int8_t, int, uint8_t, CG_ID, CG_ST_BOOL, INIT, STEP, BOOL_FINAL)      \
    CG_REDUCE_LOOP(name##_i16, int16_t, int, uint8_t, CG_ID, CG_ST_BOOL, INIT, STEP, BOOL_FINAL)    \
    CG_REDUCE_LOOP(name##_i32, int32_t, int, uint8_t, CG_ID, CG_ST_BOOL, INIT, STEP, BOOL_FINAL)    \
    CG_REDUCE_LOOP(name##_i64, int64_t, int64_t, uint8_t, CG_ID, CG_ST_BOOL, INIT, STEP, BOOL_FINAL) \
    CG_REDUCE_LOOP(name##_f32, float, int, uint8_t, NZ_LD, CG_ST_BOOL, INIT, STEP, BOOL_FINAL)      \
    CG_REDUCE_LOOP(name##_f64, double, int, uint8_t, NZ_LD, CG_ST_BOOL, INIT, STEP, BOOL_FINAL)     \
    CG_REDUCE_LOOP(name##_f16, cg_f16, int, uint8_t, NZ_LD_F16, CG_ST_BOOL, INIT, STEP, BOOL_FINAL) \
    CG_REDUCE_LOOP(name##_bf16, cg_bf16, int, uint8_t, NZ_LD_BF16, CG_ST_BOOL, INIT, STEP, BOOL_FINAL)    \
    CG_REDUCE_LOOP(name##_u16, uint16_t, int, uint8_t, NZ_LD, CG_ST_BOOL, INIT, STEP, BOOL_FINAL)         \
    CG_REDUCE_LOOP(name##_u32, uint32_t, int, uint8_t, NZ_LD, CG_ST_BOOL, INIT, STEP, BOOL_FINAL)         \
    CG_REDUCE_LOOP(name##_u64, uint64_t, int, uint8_t, NZ_LD, CG_ST_BOOL, INIT, STEP, BOOL_FINAL)
REDUCE_BOOL_LOOPS(any, 0, ANY_STEP)
REDUCE_BOOL_LOOPS(all, 1, ALL_STEP)
#define REDUCE_BOOL_COLS(name, INIT, STEP)                                                                   \
    CG_REDUCE_COLS_LOOP(name##_cols_b, uint8_t, int, uint8_t, CG_ID, CG_ST_BOOL, INIT, STEP, BOOL_FINAL)      \
    CG_REDUCE_COLS_LOOP(name##_cols_u8, uint8_t, int, uint8_t, CG_ID, CG_ST_BOOL, INIT, STEP, BOOL_FINAL)     \
    CG_REDUCE_COLS_LOOP(name##_cols_i8, int8_t, int, uint8_t, CG_ID, CG_ST_BOOL, INIT, STEP, BOOL_FINAL)      \
    CG_REDUCE_COLS_LOOP(name##_cols_i16, int16_t, int, uint8_t, CG_ID, CG_ST_BOOL, INIT, STEP, BOOL_FINAL)    \
    CG_REDUCE_COLS_LOOP(name##_cols_i32, int32_t, int, uint8_t, CG_ID, CG_ST_BOOL, INIT, STEP, BOOL_FINAL)    \
    CG_REDUCE_COLS_LOOP(name##_cols_i64, int64_t, int64_t, uint8_t, CG_ID, CG_ST_BOOL, INIT, STEP, BOOL_FINAL) \
    CG_REDUCE_COLS_LOOP(name##_cols_f32, float, int, uint8_t, NZ_LD, CG_ST_BOOL, INIT, STEP, BOOL_FINAL)      \
    CG_REDUCE_COLS_LOOP(name##_cols_f64, double, int, uint8_t, NZ_LD, CG_ST_BOOL, INIT, STEP, BOOL_FINAL)     \
    CG_REDUCE_COLS_LOOP(name##_cols_f16, cg_f16, int, uint8_t, NZ_LD_F16, CG_ST_BOOL, INIT, STEP, BOOL_FINAL) \
    CG_REDUCE_COLS_LOOP(name##_cols_bf16, cg_bf16, int, uint8_t, NZ_LD_BF16, CG_ST_BOOL, INIT, STEP, BOOL_FINAL) \
    CG_REDUCE_COLS_LOOP(name##_cols_u16, uint16_t, int, uint8_t, NZ_LD, CG_ST_BOOL, INIT, STEP, BOOL_FINAL)      \
    CG_REDUCE_COLS_LOOP(name##_cols_u32, uint32_t, int, uint8_t, NZ_LD, CG_ST_BOOL, INIT, STEP, BOOL_FINAL)      \
    CG_REDUCE_COLS_LOOP(name##_cols_u64, uint64_t, int, uint8_t, NZ_LD, CG_ST_BOOL, INIT, STEP, BOOL_FINAL)
REDUCE_BOOL_COLS(any, 0, ANY_STEP)
REDUCE_BOOL_COLS(all, 1, ALL_STEP)

#define MEAN_FINAL(acc, n) ((acc) / (double)(n))
SUM_FLOAT_LOOPS(mean, MEAN_FINAL)
SUM_COLS_LOOPS(mean, MEAN_FINAL)
static bool mean_full(cg_dtype dt, char *out, const char *in, int64_t n, int64_t s, const double *p) {
    (void)p;
    return sum_full_div(dt, out, in, n, s, (double)n);
}

#define PROD_STEP(acc, x) ((acc) * (x))
CG_REDUCE_LOOP(prod_f32, float, double, float, CG_ID, CG_ID, 1.0, PROD_STEP, SUM_FINAL)
CG_REDUCE_LOOP(prod_f64, double, double, double, CG_ID, CG_ID, 1.0, PROD_STEP, SUM_FINAL)
CG_REDUCE_LOOP(prod_f16, cg_f16, double, cg_f16, CG_LD_F16, CG_ST_F16, 1.0, PROD_STEP, SUM_FINAL)
CG_REDUCE_LOOP(prod_bf16, cg_bf16, double, cg_bf16, CG_LD_BF16, CG_ST_BF16, 1.0, PROD_STEP, SUM_FINAL)
/* integer products wrap modulo 2^64 (unsigned arithmetic: no signed overflow) */
CG_REDUCE_LOOP(prod_b, uint8_t, uint64_t, int64_t, CG_LD_BOOL, CG_ID, 1u, PROD_STEP, SUM_FINAL)
CG_REDUCE_LOOP(prod_u8, uint8_t, uint64_t, int64_t, CG_ID, CG_ID, 1u, PROD_STEP, SUM_FINAL)
CG_REDUCE_LOOP(prod_i8, int8_t, uint64_t, int64_t, CG_ID, CG_ID, 1u, PROD_STEP, SUM_FINAL)
CG_REDUCE_LOOP(prod_i16, int16_t, uint64_t, int64_t, CG_ID, CG_ID, 1u, PROD_STEP, SUM_FINAL)
CG_REDUCE_LOOP(prod_i32, int32_t, uint64_t, int64_t, CG_ID, CG_ID, 1u, PROD_STEP, SUM_FINAL)
CG_REDUCE_LOOP(prod_i64, int64_t, uint64_t, int64_t, CG_ID, CG_ID, 1u, PROD_STEP, SUM_FINAL)
CG_REDUCE_LOOP(prod_u16, uint16_t, uint64_t, int64_t, CG_ID, CG_ID, 1u, PROD_STEP, SUM_FINAL)
CG_REDUCE_LOOP(prod_u32, uint32_t, uint64_t, int64_t, CG_ID, CG_ID, 1u, PROD_STEP, SUM_FINAL)
CG_REDUCE_LOOP(prod_u64, uint64_t, uint64_t, int64_t, CG_ID, CG_ID, 1u, PROD_STEP, SUM_FINAL)
CG_REDUCE_COLS_LOOP(prod_cols_f32, float, double, float, CG_ID, CG_ID, 1.0, PROD_STEP, SUM_FINAL)
CG_REDUCE_COLS_LOOP(prod_cols_f64, double, double, double, CG_ID, CG_ID, 1.0, PROD_STEP, SUM_FINAL)
CG_REDUCE_COLS_LOOP(prod_cols_f16, cg_f16, double, cg_f16, CG_LD_F16, CG_ST_F16, 1.0, PROD_STEP, SUM_FINAL)
CG_REDUCE_COLS_LOOP(prod_cols_bf16, cg_bf16, double, cg_bf16, CG_LD_BF16, CG_ST_BF16, 1.0, PROD_STEP, SUM_FINAL)
CG_REDUCE_COLS_LOOP(prod_cols_b, uint8_t, uint64_t, int64_t, CG_LD_BOOL, CG_ID, 1u, PROD_STEP, SUM_FINAL)
CG_REDUCE_COLS_LOOP(prod_cols_u8, uint8_t, uint64_t, int64_t, CG_ID, CG_ID, 1u, PROD_STEP, SUM_FINAL)
CG_REDUCE_COLS_LOOP(prod_cols_i8, int8_t, uint64_t, int64_t, CG_ID, CG_ID, 1u, PROD_STEP, SUM_FINAL)
CG_REDUCE_COLS_LOOP(prod_cols_i16, int16_t, uint64_t, int64_t, CG_ID, CG_ID, 1u, PROD_STEP, SUM_FINAL)
CG_REDUCE_COLS_LOOP(prod_cols_i32, int32_t, uint64_t, int64_t, CG_ID, CG_ID, 1u, PROD_STEP, SUM_FINAL)
CG_REDUCE_COLS_LOOP(prod_cols_i64, int64_t, uint64_t, int64_t, CG_ID, CG_ID, 1u, PROD_STEP, SUM_FINAL)
CG_REDUCE_COLS_LOOP(prod_cols_u16, uint16_t, uint64_t, int64_t, CG_ID, CG_ID, 1u, PROD_STEP, SUM_FINAL)
CG_REDUCE_COLS_LOOP(prod_cols_u32, uint32_t, uint64_t, int64_t, CG_ID, CG_ID, 1u, PROD_STEP, SUM_FINAL)
CG_REDUCE_COLS_LOOP(prod_cols_u64, uint64_t, uint64_t, int64_t, CG_ID, CG_ID, 1u, PROD_STEP, SUM_FINAL)

#define NZ_STEP(acc, x) ((acc) + ((x) != 0))
CG_REDUCE_LOOP(nz_b, uint8_t, int64_t, int64_t, CG_ID, CG_ID, 0, NZ_STEP, SUM_FINAL)
CG_REDUCE_LOOP(nz_u8, uint8_t, int64_t, int64_t, CG_ID, CG_ID, 0, NZ_STEP, SUM_FINAL)
CG_REDUCE_LOOP(nz_i8, int8_t, int64_t, int64_t, CG_ID, CG_ID, 0, NZ_STEP, SUM_FINAL)
CG_REDUCE_LOOP(nz_i16, int16_t, int64_t, int64_t, CG_ID, CG_ID, 0, NZ_STEP, SUM_FINAL)
CG_REDUCE_LOOP(nz_i32, int32_t, int64_t, int64_t, CG_ID, CG_ID, 0, NZ_STEP, SUM_FINAL)
CG_REDUCE_LOOP(nz_i64, int64_t, int64_t, int64_t, CG_ID, CG_ID, 0, NZ_STEP, SUM_FINAL)
#define NZ_FLOAT_STEP(acc, x) ((acc) + ((x) != 0.0))
CG_REDUCE_LOOP(nz_f32, float, double, int64_t, CG_ID, (int64_t), 0.0, NZ_FLOAT_STEP, SUM_FINAL)
CG_REDUCE_LOOP(nz_f64, double, double, int64_t, CG_ID, (int64_t), 0.0, NZ_FLOAT_STEP, SUM_FINAL)
CG_REDUCE_LOOP(nz_f16, cg_f16, double, int64_t, CG_LD_F16, (int64_t), 0.0, NZ_FLOAT_STEP, SUM_FINAL)
CG_REDUCE_LOOP(nz_bf16, cg_bf16, double, int64_t, CG_LD_BF16, (int64_t), 0.0, NZ_FLOAT_STEP, SUM_FINAL)

/* ---------------------------------------------------------------- the tables by kind */
const cg_cpu_reduce_loops cg_cpu_reduce_sum = {
    .loop = {CG_FLOAT_TABLE(sum), CG_INT_TABLE(sum), [CG_DTYPE_BOOL] = sum_b, CG_UINT_TABLE(sum)},
    .cols = {CG_FLOAT_TABLE(sum_cols), CG_INT_TABLE(sum_cols), [CG_DTYPE_BOOL] = sum_cols_b, CG_UINT_TABLE(sum_cols)},
    .full = sum_full,
};
const cg_cpu_reduce_loops cg_cpu_reduce_mean = {
    .loop = {CG_FLOAT_TABLE(mean)},
    .cols = {CG_FLOAT_TABLE(mean_cols)},
    .full = mean_full,
};
const cg_cpu_reduce_loops cg_cpu_reduce_prod = {
    .loop = {CG_FLOAT_TABLE(prod), CG_INT_TABLE(prod), [CG_DTYPE_BOOL] = prod_b, CG_UINT_TABLE(prod)},
    .cols = {CG_FLOAT_TABLE(prod_cols), CG_INT_TABLE(prod_cols), [CG_DTYPE_BOOL] = prod_cols_b, CG_UINT_TABLE(prod_cols)},
};
const cg_cpu_reduce_loops cg_cpu_reduce_any = {
    .loop = {CG_ALL_TABLE(any), CG_UINT_TABLE(any)},
    .cols = {CG_ALL_TABLE(any_cols), CG_UINT_TABLE(any_cols)},
};
const cg_cpu_reduce_loops cg_cpu_reduce_all = {
    .loop = {CG_ALL_TABLE(all), CG_UINT_TABLE(all)},
    .cols = {CG_ALL_TABLE(all_cols), CG_UINT_TABLE(all_cols)},
};
const cg_cpu_reduce_loops cg_cpu_reduce_count_nonzero = {
    .loop = {CG_ALL_TABLE(nz)},
};
