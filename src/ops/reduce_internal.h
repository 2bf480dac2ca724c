/* reduce_internal.h — internal: helpers shared by the reduction files
 * (reduce.c, reduce_minmax.c, reduce_stats.c): a strided fold macro with a
 * contiguous fast path, the column-fold macro, chunked double sums, a
 * temporary-tensor list for backward formulas, and small cg-op compositions
 * (scalars, sign, counts) used by several formulas. */
#ifndef CG_REDUCE_INTERNAL_H
#define CG_REDUCE_INTERNAL_H

#include "../dispatch/dispatch_internal.h"
#include "../backend/cpu/loops.h"
#include "elementwise_ops.gen.h"

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

/* Temporaries of a backward formula, released together. */
#define CG_RD_TMP_MAX 48
typedef struct cg_rd_tmp {
    cg_tensor *t[CG_RD_TMP_MAX];
    int n;
} cg_rd_tmp;

/* Keep t (may be NULL) in the list; returns t. */
static inline cg_tensor *cg_rd_keep(cg_rd_tmp *l, cg_tensor *t) {
    if (t) {
        CG_ASSERT(l->n < CG_RD_TMP_MAX);
        l->t[l->n++] = t;
    }
    return t;
}
static inline void cg_rd_free(cg_rd_tmp *l) {
    for (int i = 0; i < l->n; i++) cg_tensor_release(l->t[i]);
    l->n = 0;
}
/* var = expr, kept in `tl`; jumps to `fail` on error. */
#define CG_RD_TRY(var, expr)                                 \
    do {                                                     \
        if (!((var) = cg_rd_keep(&tl, (expr)))) goto fail;   \
    } while (0)

/* Number of input elements reduced into each output element. */
int64_t cg_rd_count(const cg_node *node);
/* True when the node's reduction covers every dim of its input. */
bool cg_rd_is_full(const cg_node *node);
/* 0-d tensor holding v with t's dtype and device (new reference). */
cg_tensor *cg_rd_scalar(double v, const cg_tensor *t);
/* sign(x) as a constant (no graph): 1, -1, 0; NaN stays NaN. */
cg_tensor *cg_rd_sgn(cg_tensor *x);
/* float count of true values of the bool `mask` over the node's reduced dims
 * (keepdim), in dtype dt. */
cg_tensor *cg_rd_mask_count(cg_node *node, cg_tensor *mask, cg_dtype dt);
/* Resolve a dims list into a reduction mask; ops with a float-only result check the dtype. */
cg_status cg_rd_mask(const char *op, cg_tensor *x, int ndims, const int64_t *dims, bool float_only, uint32_t *mask);

#endif
