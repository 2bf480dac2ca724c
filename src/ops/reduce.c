/* reduce.c — sum-like reductions: sum, mean, prod, count_nonzero, any, all
 * (descriptor, loops, backward side by side), plus the helpers shared by the
 * reduction files (reduce_internal.h). Floating reductions accumulate in
 * double; integer sums and products in int64 (PyTorch's result dtype). */
#include "reduce_internal.h"

/* ---------------------------------------------------------------- sum */
#define SUM_STEP(acc, x) ((acc) + (x))
#define SUM_FINAL(acc, n) (acc)
/* Floating sums accumulate in double. A contiguous run keeps sixteen
 * independent accumulators (combined in a fixed order) so the adds pipeline
 * and vectorise instead of waiting on one dependency chain; a strided run
 * folds serially. SUM_RUN defines cg_rd_sum_run_<dtype> (reduce_internal.h). */
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

/* ---------------------------------------------------------------- chunked double sums (reduce_internal.h) */
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

/* gx = expand(g) */
static cg_status sum_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    return (gin[0] = cg_reduce_grad_expand(node, g[0])) ? CG_OK : cg_last_error();
}

static const cg_reduce_op k_sum = {
    .schema = {"sum", "SumBackward1", 1, CG_AMP_KEEP, false, false, false},
    .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(sum), CG_INT_TABLE(sum), [CG_DTYPE_BOOL] = sum_b, CG_UINT_TABLE(sum)},
    .cols = {CG_FLOAT_TABLE(sum_cols), CG_INT_TABLE(sum_cols), [CG_DTYPE_BOOL] = sum_cols_b, CG_UINT_TABLE(sum_cols)},
    .full = sum_full,
    .chunked = true,
    .backward = sum_backward,
};

cg_tensor *cg_sum_dtype(cg_tensor *x, int ndims, const int64_t *dims, bool keepdim, cg_dtype dt) {
    CG_CHECK(x, CG_ERR_VALUE, "[sum] argument is NULL");
    uint32_t mask;
    if (cg_dims_mask("sum", ndims, dims, x->ndim, &mask)) return NULL;
    cg_tensor *src = x;
    if ((int)dt >= 0 && dt != x->dtype) { /* sum(dtype=...) casts first, as PyTorch does */
        src = cg_to_dtype(x, dt);
        if (!src) return NULL;
    } else {
        cg_tensor_retain(src);
    }
    int odt = cg_dtype_is_floating(src->dtype) ? -1 : CG_DTYPE_I64;
    cg_tensor *out = NULL;
    cg_reduce_forward(&k_sum, src, mask, keepdim, NULL, 0, odt, &out, NULL);
    cg_tensor_release(src);
    return out;
}

cg_tensor *cg_sum(cg_tensor *x, int ndims, const int64_t *dims, bool keepdim) {
    return cg_sum_dtype(x, ndims, dims, keepdim, (cg_dtype)-1);
}

/* ---------------------------------------------------------------- any / all (-> bool) */
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

static const cg_reduce_op k_any = {
    .schema = {"any", NULL, 1, CG_AMP_KEEP, false, false, false},
    .out_dtype = CG_DTYPE_BOOL,
    .cpu = {CG_ALL_TABLE(any), CG_UINT_TABLE(any)},
    .cols = {CG_ALL_TABLE(any_cols), CG_UINT_TABLE(any_cols)},
    .chunked = true,
};
static const cg_reduce_op k_all = {
    .schema = {"all", NULL, 1, CG_AMP_KEEP, false, false, false},
    .out_dtype = CG_DTYPE_BOOL,
    .cpu = {CG_ALL_TABLE(all), CG_UINT_TABLE(all)},
    .cols = {CG_ALL_TABLE(all_cols), CG_UINT_TABLE(all_cols)},
    .chunked = true,
};

static cg_tensor *bool_reduce(const cg_reduce_op *op, cg_tensor *x, int ndims, const int64_t *dims, bool keepdim) {
    CG_CHECK(x, CG_ERR_VALUE, "[%s] argument is NULL", op->schema.name);
    uint32_t mask;
    if (cg_dims_mask(op->schema.name, ndims, dims, x->ndim, &mask)) return NULL;
    cg_tensor *out = NULL;
    cg_reduce_forward(op, x, mask, keepdim, NULL, 0, -1, &out, NULL);
    return out;
}
cg_tensor *cg_any(cg_tensor *x, int ndims, const int64_t *dims, bool keepdim) { return bool_reduce(&k_any, x, ndims, dims, keepdim); }
cg_tensor *cg_all(cg_tensor *x, int ndims, const int64_t *dims, bool keepdim) { return bool_reduce(&k_all, x, ndims, dims, keepdim); }

/* ---------------------------------------------------------------- shared helpers (reduce_internal.h) */

int64_t cg_rd_count(const cg_node *node) {
    const cg_tensor_meta *m = &node->input_meta[0];
    uint32_t mask = (uint32_t)node->iattr[0];
    int64_t r = 1;
    for (int d = 0; d < m->ndim; d++)
        if (mask & (1u << d)) r *= m->shape[d];
    return r;
}

bool cg_rd_is_full(const cg_node *node) {
    const cg_tensor_meta *m = &node->input_meta[0];
    uint32_t mask = (uint32_t)node->iattr[0];
    for (int d = 0; d < m->ndim; d++)
        if (!(mask & (1u << d))) return false;
    return true;
}

cg_tensor *cg_rd_scalar(double v, const cg_tensor *t) { return cg_scalar_on(v, t->dtype, t->device); }

cg_tensor *cg_rd_sgn(cg_tensor *x) {
    cg_rd_tmp tl = {0};
    cg_tensor *zero, *one, *mone, *gt, *lt, *inner, *r = NULL;
    bool prev = cg_set_grad_enabled(false);
    CG_RD_TRY(zero, cg_rd_scalar(0.0, x));
    CG_RD_TRY(one, cg_rd_scalar(1.0, x));
    CG_RD_TRY(mone, cg_rd_scalar(-1.0, x));
    CG_RD_TRY(gt, cg_gt(x, zero));
    CG_RD_TRY(lt, cg_lt(x, zero));
    CG_RD_TRY(inner, cg_where(lt, mone, zero));
    CG_RD_TRY(inner, cg_where(gt, one, inner));
    /* NaN compares false both ways: x * 0 keeps it NaN, and is 0 elsewhere */
    {
        cg_tensor *nan = cg_rd_keep(&tl, cg_isnan(x));
        if (!nan) goto fail;
        r = cg_where(nan, x, inner);
    }
fail:
    cg_set_grad_enabled(prev);
    cg_rd_free(&tl);
    return r;
}

static int mask_dims(uint32_t mask, int ndim, int64_t *dims) {
    int n = 0;
    for (int d = 0; d < ndim; d++)
        if (mask & (1u << d)) dims[n++] = d;
    return n;
}

cg_tensor *cg_rd_mask_count(cg_node *node, cg_tensor *mask, cg_dtype dt) {
    int64_t dims[CG_MAX_DIMS];
    int nd = mask_dims((uint32_t)node->iattr[0], node->input_meta[0].ndim, dims);
    cg_tensor *c = cg_sum(mask, nd, dims, true);
    if (!c) return NULL;
    cg_tensor *f = cg_to_dtype(c, dt);
    cg_tensor_release(c);
    return f;
}

cg_status cg_rd_mask(const char *op, cg_tensor *x, int ndims, const int64_t *dims, bool float_only, uint32_t *mask) {
    CG_CHECK_S(x, CG_ERR_VALUE, "[%s] argument is NULL", op);
    if (cg_dims_mask(op, ndims, dims, x->ndim, mask)) return cg_last_error();
    if (float_only && !cg_dtype_is_floating(x->dtype))
        return cg_set_error(CG_ERR_DTYPE, "[%s] not supported for dtype %s (expected a floating dtype)", op,
                            cg_dtype_name(x->dtype));
    return CG_OK;
}

/* ---------------------------------------------------------------- mean (float dtypes; empty -> nan) */
#define MEAN_FINAL(acc, n) ((acc) / (double)(n))
SUM_FLOAT_LOOPS(mean, MEAN_FINAL)
SUM_COLS_LOOPS(mean, MEAN_FINAL)
static bool mean_full(cg_dtype dt, char *out, const char *in, int64_t n, int64_t s, const double *p) {
    (void)p;
    return sum_full_div(dt, out, in, n, s, (double)n);
}

/* gx = expand(g) / N */
static cg_status mean_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    cg_rd_tmp tl = {0};
    cg_tensor *e, *n;
    CG_RD_TRY(e, cg_reduce_grad_expand(node, g[0]));
    CG_RD_TRY(n, cg_rd_scalar((double)cg_rd_count(node), g[0]));
    gin[0] = cg_div(e, n);
fail:
    cg_rd_free(&tl);
    return gin[0] ? CG_OK : cg_last_error();
}

static const cg_reduce_op k_mean = {
    .schema = {"mean", "MeanBackward1", 1, CG_AMP_KEEP, false, false, false},
    .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(mean)},
    .cols = {CG_FLOAT_TABLE(mean_cols)},
    .full = mean_full,
    .backward = mean_backward,
};

cg_tensor *cg_mean(cg_tensor *x, int ndims, const int64_t *dims, bool keepdim) {
    uint32_t mask;
    if (cg_rd_mask("mean", x, ndims, dims, true, &mask)) return NULL;
    cg_tensor *out = NULL;
    cg_reduce_forward(&k_mean, x, mask, keepdim, NULL, 0, -1, &out, NULL);
    return out;
}

/* ---------------------------------------------------------------- prod (empty -> 1) */
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

static const cg_reduce_op k_prod;
static cg_tensor *prod_mask(cg_tensor *x, uint32_t mask, bool keepdim) {
    cg_tensor *out = NULL;
    cg_reduce_forward(&k_prod, x, mask, keepdim, NULL, 0, -1, &out, NULL);
    return out;
}

/* Note [prod backward with zeros]: d prod / dx_i = prod_{j != i} x_j.
 * - no zero in the input: g * out / x (PyTorch's fast path);
 * - zeros, first-order only (grad mode off): with P = product of the nonzero
 *   elements of the slice and z = its zero count, the gradient is P / x_i when
 *   z == 0, P at the zero when z == 1, and 0 otherwise;
 * - zeros with create_graph: the where-formula has the right value but not the
 *   right derivative (it is flat in the zero elements), so the product of the
 *   others is formed exactly as prod over j of where(j == i, 1, x_j): a
 *   (K, n, n) tensor, n = slice length, differentiable to any order (PyTorch
 *   uses exclusive cumprods to the same effect). */
#define PROD_EXACT_MAX_ELEMS (1ll << 26)

static cg_tensor *prod_others_exact(cg_node *node, cg_tensor *x) {
    const cg_tensor_meta *m = &node->input_meta[0];
    uint32_t mask = (uint32_t)node->iattr[0];
    cg_rd_tmp tl = {0};
    cg_tensor *r = NULL, *xp, *xr, *ar, *a1, *a2, *eye, *one, *e, *oth, *op;
    int64_t perm[CG_MAX_DIMS], inv[CG_MAX_DIMS], pshape[CG_MAX_DIMS];
    int p = 0;
    int64_t K = 1, n = 1;
    for (int d = 0; d < m->ndim; d++)
        if (!(mask & (1u << d))) perm[p] = d, pshape[p++] = m->shape[d], K *= m->shape[d];
    for (int d = 0; d < m->ndim; d++)
        if (mask & (1u << d)) perm[p] = d, pshape[p++] = m->shape[d], n *= m->shape[d];
    for (int i = 0; i < m->ndim; i++) inv[perm[i]] = i;
    if ((double)K * (double)n * (double)n > (double)PROD_EXACT_MAX_ELEMS) {
        cg_set_error(CG_ERR_NOT_IMPLEMENTED,
                     "[prod] higher-order gradient of prod over slices of %lld elements containing zeros is not "
                     "supported (it needs %lld x %lld x %lld temporaries)",
                     (long long)n, (long long)K, (long long)n, (long long)n);
        return NULL;
    }
    int64_t s3[3] = {K, 1, n}, c1[2] = {n, 1}, r1[2] = {1, n};
    CG_RD_TRY(xp, cg_permute(x, perm));
    CG_RD_TRY(xr, cg_reshape(xp, 3, s3));
    CG_RD_TRY(ar, cg_arange(0, (double)n, 1, CG_DTYPE_I64, x->device));
    CG_RD_TRY(a1, cg_reshape(ar, 2, c1));
    CG_RD_TRY(a2, cg_reshape(ar, 2, r1));
    CG_RD_TRY(eye, cg_eq(a1, a2));
    CG_RD_TRY(one, cg_rd_scalar(1.0, x));
    CG_RD_TRY(e, cg_where(eye, one, xr));            /* (K, n, n): row i is x with x_i -> 1 */
    CG_RD_TRY(oth, prod_mask(e, 1u << 2, false));    /* (K, n) */
    CG_RD_TRY(op, cg_reshape(oth, m->ndim, pshape));
    r = cg_permute(op, inv);
fail:
    cg_rd_free(&tl);
    return r;
}

static cg_status prod_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    const cg_tensor_meta *m = &node->input_meta[0];
    uint32_t mask = (uint32_t)node->iattr[0];
    if (cg_rd_count(node) <= 1 || cg_shape_numel(m->ndim, m->shape) == 0)
        return (gin[0] = cg_reduce_grad_expand(node, g[0])) ? CG_OK : cg_last_error();
    cg_rd_tmp tl = {0};
    cg_tensor *x, *gu, *zero, *isz, *sel = NULL;
    CG_RD_TRY(x, cg_node_saved(node, 0));
    CG_RD_TRY(gu, cg_reduce_unsqueeze(node, g[0]));
    CG_RD_TRY(zero, cg_rd_scalar(0.0, x));
    CG_RD_TRY(isz, cg_eq(x, zero));
    bool has_zero = true;
    if (cg_device_has_data(x->device)) { /* meta: no values, the general formula */
        cg_tensor *any;
        double v = 0;
        CG_RD_TRY(any, cg_any(isz, 0, NULL, false));
        if (cg_tensor_item(any, &v)) goto fail;
        has_zero = v != 0;
    }
    if (!has_zero) {
        cg_tensor *out, *ou;
        CG_RD_TRY(out, cg_node_saved(node, 1));
        CG_RD_TRY(ou, cg_reduce_unsqueeze(node, out));
        CG_RD_TRY(sel, cg_div(ou, x));
    } else if (!cg_is_grad_enabled()) {
        cg_tensor *one, *xnz, *P, *zc, *zi, *oi, *c0, *c1, *q, *inner;
        int64_t dims[CG_MAX_DIMS];
        int nd = mask_dims(mask, m->ndim, dims);
        CG_RD_TRY(one, cg_rd_scalar(1.0, x));
        CG_RD_TRY(xnz, cg_where(isz, one, x));
        CG_RD_TRY(P, prod_mask(xnz, mask, true));
        CG_RD_TRY(zc, cg_sum(isz, nd, dims, true));
        CG_RD_TRY(zi, cg_scalar_on(0, CG_DTYPE_I64, x->device));
        CG_RD_TRY(oi, cg_scalar_on(1, CG_DTYPE_I64, x->device));
        CG_RD_TRY(c0, cg_eq(zc, zi));
        CG_RD_TRY(c1, cg_eq(zc, oi));
        CG_RD_TRY(c1, cg_mul(c1, isz));
        CG_RD_TRY(q, cg_div(P, xnz));
        CG_RD_TRY(inner, cg_where(c1, P, zero));
        CG_RD_TRY(sel, cg_where(c0, q, inner));
    } else {
        CG_RD_TRY(sel, prod_others_exact(node, x));
    }
    gin[0] = cg_mul(gu, sel);
fail:
    cg_rd_free(&tl);
    return gin[0] ? CG_OK : cg_last_error();
}

static const cg_reduce_op k_prod = {
    .schema = {"prod", "ProdBackward1", 1, CG_AMP_FP32, false, true, true},
    .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(prod), CG_INT_TABLE(prod), [CG_DTYPE_BOOL] = prod_b, CG_UINT_TABLE(prod)},
    .cols = {CG_FLOAT_TABLE(prod_cols), CG_INT_TABLE(prod_cols), [CG_DTYPE_BOOL] = prod_cols_b, CG_UINT_TABLE(prod_cols)},
    .chunked = true,
    .backward = prod_backward,
};

cg_tensor *cg_prod(cg_tensor *x, int ndims, const int64_t *dims, bool keepdim) {
    uint32_t mask;
    if (cg_rd_mask("prod", x, ndims, dims, false, &mask)) return NULL;
    int odt = cg_dtype_is_floating(x->dtype) ? -1 : CG_DTYPE_I64;
    cg_tensor *out = NULL;
    cg_reduce_forward(&k_prod, x, mask, keepdim, NULL, 0, odt, &out, NULL);
    return out;
}

/* ---------------------------------------------------------------- count_nonzero (-> int64) */
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

static const cg_reduce_op k_count_nonzero = {
    .schema = {"count_nonzero", NULL, 1, CG_AMP_KEEP, false, false, false},
    .out_dtype = CG_DTYPE_I64,
    .cpu = {CG_ALL_TABLE(nz)},
};

cg_tensor *cg_count_nonzero(cg_tensor *x, int ndims, const int64_t *dims) {
    uint32_t mask;
    if (cg_rd_mask("count_nonzero", x, ndims, dims, false, &mask)) return NULL;
    cg_tensor *out = NULL;
    cg_reduce_forward(&k_count_nonzero, x, mask, false, NULL, 0, -1, &out, NULL);
    return out;
}
