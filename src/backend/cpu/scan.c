/* scan.c — the CPU's scan entry (Note [Kernel entries]; the ops: src/ops/scan.c):
 * cumsum / reverse_cumsum, cumprod and cummax line loops. Integer and bool
 * inputs of cumsum / cumprod accumulate in uint64 (wrapping) and store int64;
 * floating inputs accumulate in double. Lines run in parallel (lines.h) and
 * are each computed sequentially, so results do not depend on the thread
 * count. */
#include "cpu_kernels.h"
#include "lines.h"
#include "loops.h"

/* ---------------------------------------------------------------- line loops */

/* One line: in (n elements, byte stride is) -> out (byte stride os), scanned
 * from the end when rev. */
typedef void (*scan_line_fn)(const char *in, int64_t is, char *out, int64_t os, int64_t n, bool rev);

#define LDD_F16(x) ((double)cg_f16_to_f32(x))
#define LDD_BF16(x) ((double)cg_bf16_to_f32(x))
#define STD_F16(v) cg_f32_to_f16((float)(v))
#define STD_BF16(v) cg_f32_to_bf16((float)(v))
#define LD_U64(x) ((uint64_t)(int64_t)(x))
#define LD_BOOL_U64(x) ((uint64_t)((x) != 0))
#define ST_I64(v) ((int64_t)(v))
#define ADD(a, x) ((a) + (x))
#define MUL(a, x) ((a) * (x))

#define SCAN_LINE(name, T, ACC, OT, LOAD, STORE, INIT, STEP)                                   \
    static void name(const char *in, int64_t is, char *out, int64_t os, int64_t n, bool rev) { \
        ACC acc = INIT;                                                                        \
        for (int64_t k = 0; k < n; k++) {                                                      \
            int64_t j = rev ? n - 1 - k : k;                                                   \
            ACC x = (ACC)LOAD(*(const T *)(in + j * is));                                      \
            acc = STEP(acc, x);                                                                \
            *(OT *)(out + j * os) = STORE(acc);                                                \
        }                                                                                      \
    }
/* integers accumulate in uint64 (wrapping, like int64 in PyTorch, without UB) */
#define SCAN_LINES(op, INIT, STEP)                                                              \
    SCAN_LINE(op##_f32, float, double, float, CG_ID, CG_ID, INIT, STEP)                         \
    SCAN_LINE(op##_f64, double, double, double, CG_ID, CG_ID, INIT, STEP)                       \
    SCAN_LINE(op##_f16, cg_f16, double, cg_f16, LDD_F16, STD_F16, INIT, STEP)                   \
    SCAN_LINE(op##_bf16, cg_bf16, double, cg_bf16, LDD_BF16, STD_BF16, INIT, STEP)              \
    SCAN_LINE(op##_b, uint8_t, uint64_t, int64_t, LD_BOOL_U64, ST_I64, INIT, STEP)              \
    SCAN_LINE(op##_u8, uint8_t, uint64_t, int64_t, LD_U64, ST_I64, INIT, STEP)                  \
    SCAN_LINE(op##_i8, int8_t, uint64_t, int64_t, LD_U64, ST_I64, INIT, STEP)                   \
    SCAN_LINE(op##_i16, int16_t, uint64_t, int64_t, LD_U64, ST_I64, INIT, STEP)                 \
    SCAN_LINE(op##_i32, int32_t, uint64_t, int64_t, LD_U64, ST_I64, INIT, STEP)                 \
    SCAN_LINE(op##_i64, int64_t, uint64_t, int64_t, LD_U64, ST_I64, INIT, STEP)                 \
    SCAN_LINE(op##_u16, uint16_t, uint64_t, int64_t, CG_ID, ST_I64, INIT, STEP)                 \
    SCAN_LINE(op##_u32, uint32_t, uint64_t, int64_t, CG_ID, ST_I64, INIT, STEP)                 \
    SCAN_LINE(op##_u64, uint64_t, uint64_t, int64_t, CG_ID, ST_I64, INIT, STEP)
SCAN_LINES(csum, 0, ADD)
SCAN_LINES(cprod, 1, MUL)

static const scan_line_fn k_csum[CG_DTYPE_COUNT] = {CG_ALL_TABLE(csum), CG_UINT_TABLE(csum)};
static const scan_line_fn k_cprod[CG_DTYPE_COUNT] = {CG_ALL_TABLE(cprod), CG_UINT_TABLE(cprod)};

typedef struct scan_job {
    cg_lines L; /* args: out, x */
    scan_line_fn fn;
    bool rev;
} scan_job;

static void scan_range(int64_t b, int64_t e, void *p) {
    const scan_job *j = p;
    char *ptr[2];
    for (int64_t i = b; i < e; i++) {
        cg_lines_ptrs(&j->L, i, ptr);
        j->fn(ptr[1], j->L.step[1], ptr[0], j->L.step[0], j->L.len[1], j->rev);
    }
}

/* ---------------------------------------------------------------- cummax */

/* One line: in (n, byte stride is) -> values (stride os), indices (int64,
 * stride xs). Ties take the later index and NaN propagates, as PyTorch. */
typedef void (*cummax_line_fn)(const char *in, int64_t is, char *out, int64_t os, char *idx, int64_t xs, int64_t n);

#define CUMMAX_LINE(name, T, CT, LOAD)                                                                 \
    static void name(const char *in, int64_t is, char *out, int64_t os, char *idx, int64_t xs, int64_t n) { \
        T best = *(const T *)in;                                                                       \
        CT bv = LOAD(best);                                                                            \
        int64_t bi = 0;                                                                                \
        for (int64_t k = 0; k < n; k++) {                                                              \
            T raw = *(const T *)(in + k * is);                                                         \
            CT v = LOAD(raw);                                                                          \
            if (v != v || (bv == bv && v >= bv)) {                                                     \
                best = raw;                                                                            \
                bv = v;                                                                                \
                bi = k;                                                                                \
            }                                                                                          \
            *(T *)(out + k * os) = best;                                                               \
            *(int64_t *)(idx + k * xs) = bi;                                                           \
        }                                                                                              \
    }
CUMMAX_LINE(cmax_b, uint8_t, int, CG_LD_BOOL)
CUMMAX_LINE(cmax_u8, uint8_t, uint8_t, CG_ID)
CUMMAX_LINE(cmax_i8, int8_t, int8_t, CG_ID)
CUMMAX_LINE(cmax_i16, int16_t, int16_t, CG_ID)
CUMMAX_LINE(cmax_i32, int32_t, int32_t, CG_ID)
CUMMAX_LINE(cmax_i64, int64_t, int64_t, CG_ID)
CUMMAX_LINE(cmax_f16, cg_f16, float, CG_LD_F16)
CUMMAX_LINE(cmax_bf16, cg_bf16, float, CG_LD_BF16)
CUMMAX_LINE(cmax_f32, float, float, CG_ID)
CUMMAX_LINE(cmax_f64, double, double, CG_ID)
static const cummax_line_fn k_cmax[CG_DTYPE_COUNT] = {CG_ALL_TABLE(cmax)};

typedef struct cummax_job {
    cg_lines L; /* args: values, indices, x */
    cummax_line_fn fn;
} cummax_job;

static void cummax_range(int64_t b, int64_t e, void *p) {
    const cummax_job *j = p;
    char *ptr[3];
    for (int64_t i = b; i < e; i++) {
        cg_lines_ptrs(&j->L, i, ptr);
        j->fn(ptr[2], j->L.step[2], ptr[0], j->L.step[0], ptr[1], j->L.step[1], j->L.len[2]);
    }
}

/* ---------------------------------------------------------------- the entry */

cg_status cg_cpu_scan(cg_scan_kind kind, cg_tensor *out, cg_tensor *indices, const cg_tensor *x, int64_t dim,
                      bool reverse) {
    static const char *const names[] = {"cumsum", "cumprod", "cummax"};
    if (kind == CG_SCAN_MAX) {
        cummax_line_fn fn = k_cmax[x->dtype];
        if (!fn) return cg_dtype_unsupported(names[kind], x->dtype);
        if (!cg_tensor_numel(x)) return CG_OK;
        cummax_job job = {.fn = fn};
        const cg_tensor *args[3] = {out, indices, x};
        cg_lines_init(&job.L, 3, args, dim);
        cg_parallel_for(job.L.count, cg_lines_grain(job.L.len[2]), cummax_range, &job);
        return CG_OK;
    }
    scan_line_fn fn = (kind == CG_SCAN_SUM ? k_csum : k_cprod)[x->dtype];
    if (!fn) return cg_dtype_unsupported(names[kind], x->dtype);
    if (!cg_tensor_numel(x)) return CG_OK;
    scan_job job = {.fn = fn, .rev = reverse};
    const cg_tensor *args[2] = {out, x};
    cg_lines_init(&job.L, 2, args, dim);
    cg_parallel_for(job.L.count, cg_lines_grain(job.L.len[1]), scan_range, &job);
    return CG_OK;
}
