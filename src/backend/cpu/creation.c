/* creation.c — the CPU's entries of the deterministic factories (Note [Kernel
 * entries]): arange, linspace / logspace and eye fill the contiguous output
 * the op allocated; and the chunk conversion helpers (runs of doubles / int64
 * to and from contiguous data of any dtype) that these and the samplers use. */
#include "cpu_kernels.h"
#include "loops.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------- chunk conversions */

static inline int64_t d2i(double v) {
    if (isnan(v)) return 0;
    if (v >= 9.2233720368547758e18) return INT64_MAX;
    if (v <= -9.2233720368547758e18) return INT64_MIN;
    return (int64_t)v;
}

#define CONVERT_LOOP(T, EXPR)                                  \
    do {                                                       \
        T *o_ = (T *)dst;                                      \
        for (int64_t k = 0; k < n; k++) o_[k] = EXPR(src[k]);  \
    } while (0)
#define TO_BOOL(v) ((uint8_t)((v) != 0))
#define D_U8(v) ((uint8_t)d2i(v))
#define D_I8(v) ((int8_t)d2i(v))
#define D_I16(v) ((int16_t)d2i(v))
#define D_I32(v) ((int32_t)d2i(v))
#define D_I64(v) d2i(v)
#define D_F16(v) cg_f32_to_f16((float)(v))
#define D_BF16(v) cg_f32_to_bf16((float)(v))
#define D_F32(v) ((float)(v))
#define D_F64(v) ((double)(v))
#define D_U16(v) ((uint16_t)d2i(v))
#define D_U32(v) ((uint32_t)d2i(v))
#define D_U64(v) cg_f64_to_u64(v)

void cg_store_doubles(char *dst, cg_dtype dt, const double *src, int64_t n) {
    switch (dt) {
    case CG_DTYPE_BOOL: CONVERT_LOOP(uint8_t, TO_BOOL); break;
    case CG_DTYPE_U8: CONVERT_LOOP(uint8_t, D_U8); break;
    case CG_DTYPE_I8: CONVERT_LOOP(int8_t, D_I8); break;
    case CG_DTYPE_I16: CONVERT_LOOP(int16_t, D_I16); break;
    case CG_DTYPE_I32: CONVERT_LOOP(int32_t, D_I32); break;
    case CG_DTYPE_I64: CONVERT_LOOP(int64_t, D_I64); break;
    case CG_DTYPE_F16: CONVERT_LOOP(cg_f16, D_F16); break;
    case CG_DTYPE_BF16: CONVERT_LOOP(cg_bf16, D_BF16); break;
    case CG_DTYPE_F32: CONVERT_LOOP(float, D_F32); break;
    case CG_DTYPE_F64: CONVERT_LOOP(double, D_F64); break;
    case CG_DTYPE_U16: CONVERT_LOOP(uint16_t, D_U16); break;
    case CG_DTYPE_U32: CONVERT_LOOP(uint32_t, D_U32); break;
    case CG_DTYPE_U64: CONVERT_LOOP(uint64_t, D_U64); break;
    default: CG_ASSERT(0);
    }
}

void cg_store_ints(char *dst, cg_dtype dt, const int64_t *src, int64_t n) {
    switch (dt) {
    case CG_DTYPE_BOOL: CONVERT_LOOP(uint8_t, TO_BOOL); break;
    case CG_DTYPE_U8: CONVERT_LOOP(uint8_t, (uint8_t)); break;
    case CG_DTYPE_I8: CONVERT_LOOP(int8_t, (int8_t)); break;
    case CG_DTYPE_I16: CONVERT_LOOP(int16_t, (int16_t)); break;
    case CG_DTYPE_I32: CONVERT_LOOP(int32_t, (int32_t)); break;
    case CG_DTYPE_I64: CONVERT_LOOP(int64_t, (int64_t)); break;
    case CG_DTYPE_F16: CONVERT_LOOP(cg_f16, D_F16); break;
    case CG_DTYPE_BF16: CONVERT_LOOP(cg_bf16, D_BF16); break;
    case CG_DTYPE_F32: CONVERT_LOOP(float, D_F32); break;
    case CG_DTYPE_F64: CONVERT_LOOP(double, D_F64); break;
    case CG_DTYPE_U16: CONVERT_LOOP(uint16_t, (uint16_t)); break;
    case CG_DTYPE_U32: CONVERT_LOOP(uint32_t, (uint32_t)); break;
    case CG_DTYPE_U64: CONVERT_LOOP(uint64_t, (uint64_t)); break;
    default: CG_ASSERT(0);
    }
}

#define LOAD_LOOP(T, EXPR)                                             \
    do {                                                               \
        const T *i_ = (const T *)src;                                  \
        for (int64_t k = 0; k < n; k++) dst[k] = (double)EXPR(i_[k]);  \
    } while (0)
void cg_load_doubles(const char *src, cg_dtype dt, double *dst, int64_t n) {
    switch (dt) {
    case CG_DTYPE_BOOL: LOAD_LOOP(uint8_t, TO_BOOL); break;
    case CG_DTYPE_U8: LOAD_LOOP(uint8_t, ); break;
    case CG_DTYPE_I8: LOAD_LOOP(int8_t, ); break;
    case CG_DTYPE_I16: LOAD_LOOP(int16_t, ); break;
    case CG_DTYPE_I32: LOAD_LOOP(int32_t, ); break;
    case CG_DTYPE_I64: LOAD_LOOP(int64_t, ); break;
    case CG_DTYPE_F16: LOAD_LOOP(cg_f16, cg_f16_to_f32); break;
    case CG_DTYPE_BF16: LOAD_LOOP(cg_bf16, cg_bf16_to_f32); break;
    case CG_DTYPE_F32: LOAD_LOOP(float, ); break;
    case CG_DTYPE_F64: LOAD_LOOP(double, ); break;
    case CG_DTYPE_U16: LOAD_LOOP(uint16_t, ); break;
    case CG_DTYPE_U32: LOAD_LOOP(uint32_t, ); break;
    case CG_DTYPE_U64: LOAD_LOOP(uint64_t, ); break;
    default: CG_ASSERT(0);
    }
}

/* ------------------------------------------------------------- arange */

/* p (contiguous, n elements of integer dtype dt) <- start + i * step, wrapped to dt */
static void arange_fill_ints(char *p, cg_dtype dt, int64_t n, int64_t start, int64_t step) {
    int64_t chunk[CG_CHUNK];
    size_t isz = cg_dtype_size(dt);
    for (int64_t i0 = 0; i0 < n; i0 += CG_CHUNK) {
        int64_t m = n - i0 < CG_CHUNK ? n - i0 : CG_CHUNK;
        for (int64_t k = 0; k < m; k++) /* unsigned: wraps like PyTorch's int64 arithmetic, without overflow UB */
            chunk[k] = (int64_t)((uint64_t)start + (uint64_t)step * (uint64_t)(i0 + k));
        cg_store_ints(p + (size_t)i0 * isz, dt, chunk, m);
    }
}

cg_status cg_cpu_arange(cg_tensor *out, double start, double step, int64_t istart, int64_t istep) {
    cg_dtype dt = out->dtype;
    int64_t n = cg_tensor_numel(out);
    char *p = cg_tensor_ptr(out);
    if (!cg_dtype_is_floating(dt) && dt != CG_DTYPE_BOOL) { /* Note [arange of an integer dtype] */
        arange_fill_ints(p, dt, n, istart, istep);
        return CG_OK;
    }
    size_t isz = cg_dtype_size(dt);
    for (int64_t i = 0; i < n; i++) cg_store_f64(p + (size_t)i * isz, dt, start + (double)i * step);
    return CG_OK;
}

/* ------------------------------------------------------------- linspace / logspace */

typedef struct space_job {
    cg_dtype dt;
    char *out;        /* (steps,) contiguous, dtype dt */
    int64_t steps, halfway;
    bool in_float;    /* compute in float32 */
    bool log;
    double start, end, step, base;
} space_job;

static void space_range(int64_t begin, int64_t end, void *ctx) {
    const space_job *j = ctx;
    double buf[CG_CHUNK];
    size_t isz = cg_dtype_size(j->dt);
    const float fs = (float)j->start, fe = (float)j->end, fst = (float)j->step, fb = (float)j->base;
    for (int64_t s = begin; s < end; s += CG_CHUNK) {
        int64_t n = end - s < CG_CHUNK ? end - s : CG_CHUNK;
        if (j->in_float) {
            for (int64_t k = 0; k < n; k++) {
                int64_t i = s + k;
                float v = i < j->halfway ? fs + fst * (float)i : fe - fst * (float)(j->steps - i - 1);
                buf[k] = j->log ? powf(fb, v) : v;
            }
        } else {
            for (int64_t k = 0; k < n; k++) {
                int64_t i = s + k;
                double v = i < j->halfway ? j->start + j->step * (double)i : j->end - j->step * (double)(j->steps - i - 1);
                buf[k] = j->log ? pow(j->base, v) : v;
            }
        }
        cg_store_doubles(j->out + (size_t)s * isz, j->dt, buf, n);
    }
}

cg_status cg_cpu_linspace(cg_tensor *out, double start, double end, double step, int64_t halfway, bool log,
                          double base) {
    int64_t steps = cg_tensor_numel(out);
    if (steps == 0) return CG_OK;
    space_job j = {.dt = out->dtype, .out = cg_tensor_ptr(out), .steps = steps, .halfway = halfway, .log = log,
                   .base = base, .start = start, .end = end, .step = step,
                   .in_float = cg_dtype_is_floating(out->dtype) && out->dtype != CG_DTYPE_F64};
    cg_parallel_for(steps, CG_GRAIN, space_range, &j);
    return CG_OK;
}

/* ------------------------------------------------------------- eye */

cg_status cg_cpu_eye(cg_tensor *out) {
    int64_t n = out->shape[0], m = out->shape[1];
    if (n * m == 0) return CG_OK;
    cg_dtype dt = out->dtype;
    size_t isz = cg_dtype_size(dt);
    memset(cg_tensor_ptr(out), 0, (size_t)(n * m) * isz);
    char one[8];
    double v = 1.0;
    cg_store_doubles(one, dt, &v, 1);
    char *p = cg_tensor_ptr(out);
    int64_t k = n < m ? n : m;
    for (int64_t i = 0; i < k; i++) memcpy(p + (size_t)(i * (m + 1)) * isz, one, isz);
    return CG_OK;
}
