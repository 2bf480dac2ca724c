/* reduce_loops.h — internal: the CPU's reduction loops, by kind (cg_reduce_kind,
 * src/backend/backend.h): for each kind its loop per input dtype, optional
 * column loops (Note [Column reductions]) and an optional whole-reduction
 * function (Note [Chunked reductions]); the fold macros and chunked double
 * sums the loop files share (reduce_sum.c, reduce_minmax.c, reduce_stats.c). */
#ifndef CG_CPU_REDUCE_LOOPS_H
#define CG_CPU_REDUCE_LOOPS_H

#include "loops.h"

typedef struct cg_cpu_reduce_loops {
    cg_reduce_loop loop[CG_DTYPE_COUNT];      /* by the input's dtype; a chunked combine takes the output's */
    cg_reduce_cols_loop cols[CG_DTYPE_COUNT]; /* optional, by the input's dtype */
    cg_reduce_full_fn full;                   /* optional; preferred over the chunked combine */
} cg_cpu_reduce_loops;

/* by kind (reduce_run.c); each kind's loops are defined in its family's file */
extern const cg_cpu_reduce_loops *const cg_cpu_reduce_table[CG_REDUCE_COUNT];
extern const cg_cpu_reduce_loops cg_cpu_reduce_sum, cg_cpu_reduce_mean, cg_cpu_reduce_prod, cg_cpu_reduce_any,
    cg_cpu_reduce_all, cg_cpu_reduce_count_nonzero; /* reduce_sum.c */
extern const cg_cpu_reduce_loops cg_cpu_reduce_max, cg_cpu_reduce_min; /* reduce_minmax.c */
extern const cg_cpu_reduce_loops cg_cpu_reduce_var, cg_cpu_reduce_std, cg_cpu_reduce_logsumexp,
    cg_cpu_reduce_norm; /* reduce_stats.c */

/* Inside a cg_reduce_loop (arguments in, n, s): run BODY for each of the n
 * elements, loaded from type T through LOAD into `CT x`. Contiguous runs take
 * a plain indexed loop. */
#define CG_RD_FOR(T, CT, LOAD, ...)                                             \
    do {                                                                        \
        if (s == (int64_t)sizeof(T)) {                                          \
            const T *X_ = (const T *)in;                                        \
            for (int64_t k_ = 0; k_ < n; k_++) {                                \
                CT x = (CT)LOAD(X_[k_]);                                        \
                __VA_ARGS__                                                     \
            }                                                                   \
        } else {                                                                \
            for (int64_t k_ = 0; k_ < n; k_++) {                                \
                CT x = (CT)LOAD(*(const T *)(in + k_ * s));                     \
                __VA_ARGS__                                                     \
            }                                                                   \
        }                                                                       \
    } while (0)

/* A cg_reduce_cols_loop (Note [Column reductions]): rows x m columns folded
 * per column in row order, in blocks of CG_RD_COLS_BLOCK columns whose
 * accumulators stay in L1; INIT / STEP / FINAL as in CG_REDUCE_LOOP, so each
 * output gets exactly the strided loop's result. */
#define CG_RD_COLS_BLOCK 1024
#define CG_REDUCE_COLS_LOOP(fname, T, ACC, OT, LOAD, STORE, INIT, STEP, FINAL)                        \
    static void fname(char *out, const char *in, int64_t rows, int64_t rs, int64_t m, const double *p) { \
        (void)p;                                                                                       \
        ACC acc[CG_RD_COLS_BLOCK];                                                                     \
        for (int64_t j0 = 0; j0 < m; j0 += CG_RD_COLS_BLOCK) {                                         \
            const int64_t w = m - j0 < CG_RD_COLS_BLOCK ? m - j0 : CG_RD_COLS_BLOCK;                   \
            for (int64_t j = 0; j < w; j++) acc[j] = INIT;                                             \
            for (int64_t i = 0; i < rows; i++) {                                                       \
                const T *x_ = (const T *)(in + i * rs) + j0;                                           \
                for (int64_t j = 0; j < w; j++) acc[j] = STEP(acc[j], (ACC)LOAD(x_[j]));               \
            }                                                                                          \
            OT *o_ = (OT *)out + j0;                                                                   \
            for (int64_t j = 0; j < w; j++) o_[j] = STORE(FINAL(acc[j], rows));                        \
        }                                                                                              \
    }

/* Sums of double terms over n elements in fixed chunks of CG_RD_CHUNK, in
 * parallel, the partials added in chunk order (Note [Chunked reductions]):
 * run(in, len, s, c) returns the double sum of one chunk of len elements
 * (c: a constant the terms use, e.g. a mean). Returns false when out of memory. */
#define CG_RD_CHUNK 32768
typedef double (*cg_rd_run_fn)(const char *in, int64_t n, int64_t s, double c);
bool cg_rd_chunked_sum(cg_rd_run_fn run, const char *in, int64_t n, int64_t s, double c, double *total);
/* The double sum of n floating elements at byte stride s (c unused); sixteen
 * accumulators on a contiguous run. cg_rd_sum_run(dt): the one for dt, NULL
 * for non-floating dtypes. */
double cg_rd_sum_run_f32(const char *in, int64_t n, int64_t s, double c);
double cg_rd_sum_run_f64(const char *in, int64_t n, int64_t s, double c);
double cg_rd_sum_run_f16(const char *in, int64_t n, int64_t s, double c);
double cg_rd_sum_run_bf16(const char *in, int64_t n, int64_t s, double c);
cg_rd_run_fn cg_rd_sum_run(cg_dtype dt);

#endif
