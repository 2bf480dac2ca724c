/* creation.c — deterministic factories: zeros, ones, full, their _like forms,
 * empty_like, arange, linspace, logspace and eye; and the chunk conversion
 * helpers of creation_internal.h. (Random factories live in random.c.) */
#include "creation_internal.h"

#include <math.h>
#include <string.h>

CG_PROF_FN0(cg_tensor *, cg_full, "full", (int ndim, const int64_t *shape, double value, cg_dtype dt, cg_device dev),
            (ndim, shape, value, dt, dev)) {
    cg_tensor *t = cg_empty(ndim, shape, dt, dev);
    if (t && cg_fill_(t, value)) {
        cg_tensor_release(t);
        return NULL;
    }
    if (t) atomic_store(&t->storage->version, 0);
    return t;
}
CG_PROF_FN0(cg_tensor *, cg_zeros, "zeros", (int ndim, const int64_t *shape, cg_dtype dt, cg_device dev), (ndim, shape,
            dt, dev)) { return cg_full(ndim, shape, 0.0, dt, dev); }
CG_PROF_FN0(cg_tensor *, cg_ones, "ones", (int ndim, const int64_t *shape, cg_dtype dt, cg_device dev), (ndim, shape,
            dt, dev)) { return cg_full(ndim, shape, 1.0, dt, dev); }

CG_PROF_FN(cg_tensor *, cg_empty_like, "empty_like", (cg_tensor *t), (t), t) {
    CG_CHECK(t, CG_ERR_VALUE, "[empty_like] argument is NULL");
    return cg_empty(t->ndim, t->shape, t->dtype, t->device);
}
CG_PROF_FN(cg_tensor *, cg_full_like, "full_like", (cg_tensor *t, double value), (t, value), t) {
    CG_CHECK(t, CG_ERR_VALUE, "[full_like] argument is NULL");
    return cg_full(t->ndim, t->shape, value, t->dtype, t->device);
}
CG_PROF_FN(cg_tensor *, cg_zeros_like, "zeros_like", (cg_tensor *t), (t), t) { return cg_full_like(t, 0.0); }
CG_PROF_FN(cg_tensor *, cg_ones_like, "ones_like", (cg_tensor *t), (t), t) { return cg_full_like(t, 1.0); }

/* Note [arange of an integer dtype]: PyTorch's rules, measured against torch
 * 2.13 (the table in tests/python/test_opdb_fixes.py):
 *  - checks on the numbers as given: step != 0, finite bounds, and the sign
 *    rule (end >= start for step > 0, end <= start for step < 0);
 *  - float dtypes: ceil((end - start) / step) values start + i * step;
 *  - integer dtypes: the values are start + i * step with start and step
 *    truncated toward zero, computed in int64 and wrapped to the dtype (so a
 *    fractional step below 1 repeats start);
 *  - the length for int64 is computed from the truncated numbers in integer
 *    arithmetic, (end - start + step - sign(step)) / step, and a step that
 *    truncates to 0 is an error (a ValueError in PyTorch, which
 *    cgrad.InvalidArgument is); for the narrower integer dtypes it is
 *    ceil((end - start) / step) on the numbers as given.
 * So arange(3.1, dtype=int64) is [0, 1, 2] and arange(3.1, dtype=int32) is
 * [0, 1, 2, 3]. */

/* v truncated toward zero as int64; CG_ERR_VALUE when it does not fit */
static cg_status arange_trunc(double v, int64_t *out) {
    CG_CHECK_S(v > -9.2233720368547758e18 && v < 9.2233720368547758e18, CG_ERR_VALUE,
               "[arange] value %g cannot be converted to type int64 without overflow", v);
    *out = (int64_t)v;
    return CG_OK;
}

/* t (contiguous, n elements of integer dtype dt) <- start + i * step, wrapped to dt */
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

CG_PROF_FN0(cg_tensor *, cg_arange, "arange", (double start, double end, double step, cg_dtype dt, cg_device dev),
            (start, end, step, dt, dev)) {
    if (cg_dtype_is_barebones(dt)) { /* PyTorch has no arange, linspace, logspace or eye for them */
        cg_dtype_unsupported("arange", dt);
        return NULL;
    }
    CG_CHECK(step != 0, CG_ERR_VALUE, "[arange] step must be nonzero");
    CG_CHECK(isfinite(start) && isfinite(end), CG_ERR_VALUE, "[arange] unsupported range: %g -> %g", start, end);
    CG_CHECK((step > 0 && end >= start) || (step < 0 && end <= start), CG_ERR_VALUE,
             "[arange] upper bound and lower bound inconsistent with step sign (start %g, end %g, step %g)", start, end, step);
    bool ints = !cg_dtype_is_floating(dt) && dt != CG_DTYPE_BOOL; /* Note [arange of an integer dtype] */
    int64_t istart = 0, iend = 0, istep = 0;
    if (ints && (arange_trunc(start, &istart) || arange_trunc(step, &istep))) return NULL;
    double nd;
    if (ints && dt == CG_DTYPE_I64) {
        if (arange_trunc(end, &iend)) return NULL;
        CG_CHECK(istep != 0, CG_ERR_VALUE, "[arange] step must be nonzero (step %g truncates to 0 for int64)", step);
        /* (end - start + step - sign(step)) / step = ceil(|end - start| / |step|): in
         * unsigned arithmetic, where |end - start| cannot overflow (the signs agree) */
        uint64_t span = istep > 0 ? (uint64_t)iend - (uint64_t)istart : (uint64_t)istart - (uint64_t)iend;
        uint64_t astep = istep > 0 ? (uint64_t)istep : 0 - (uint64_t)istep;
        nd = (double)(span / astep + (span % astep != 0));
    } else {
        nd = ceil((end - start) / step);
    }
    CG_CHECK(nd < 9.2e18, CG_ERR_VALUE, "[arange] too many elements (%g)", nd);
    int64_t n = nd > 0 ? (int64_t)nd : 0;
    cg_tensor *t = cg_empty(1, &n, dt, dev);
    if (!t || cg_is_meta(t)) return t;
    char *p = cg_tensor_ptr(t);
    if (ints) {
        arange_fill_ints(p, dt, n, istart, istep);
        return t;
    }
    size_t isz = cg_dtype_size(dt);
    for (int64_t i = 0; i < n; i++) cg_store_f64(p + (size_t)i * isz, dt, start + (double)i * step);
    return t;
}

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

cg_status cg_check_factory(const char *op, cg_dtype dt, cg_device dev) {
    if ((int)dt < 0 || dt >= CG_DTYPE_COUNT) return cg_set_error(CG_ERR_DTYPE, "[%s] invalid dtype %d", op, (int)dt);
    if ((int)dev.type < 0 || dev.type >= CG_DEVICE_TYPE_COUNT)
        return cg_set_error(CG_ERR_DEVICE, "[%s] invalid device %d", op, (int)dev.type);
    return CG_OK;
}

/* ------------------------------------------------------------- linspace / logspace
 * PyTorch's formula: step = (end - start) / (steps - 1); the first half counts
 * up from start, the second half down from end, so the ends are exact and the
 * sequence is symmetric. start and end are first converted to the dtype
 * (integers truncate); floating dtypes other than float64 compute in float32
 * (the halves with start, end and step rounded to the half type), integers in
 * double, and the result is converted (truncated) to the dtype. logspace
 * raises base to each such value. */

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

/* the value v as the dtype dt holds it (integers truncate, halves round) */
static double as_dtype(double v, cg_dtype dt) {
    char tmp[8];
    cg_store_doubles(tmp, dt, &v, 1);
    double r;
    cg_load_doubles(tmp, dt, &r, 1);
    return r;
}

static cg_tensor *space_impl(const char *op, double start, double end, int64_t steps, bool log, double base,
                             cg_dtype dt, cg_device dev) {
    if (cg_check_factory(op, dt, dev)) return NULL;
    CG_CHECK(steps >= 0, CG_ERR_SHAPE, "[%s] number of steps must be non-negative, got %lld", op, (long long)steps);
    cg_tensor *t = cg_new_output(op, 1, &steps, dt, dev);
    if (!t || cg_is_meta(t) || steps == 0) return t;
    space_job j = {.dt = dt, .out = cg_tensor_ptr(t), .steps = steps, .log = log, .base = base,
                   .in_float = cg_dtype_is_floating(dt) && dt != CG_DTYPE_F64};
    j.start = as_dtype(start, dt);
    j.end = as_dtype(end, dt);
    if (steps == 1) {
        j.halfway = 1; /* the single value is start */
    } else {
        j.halfway = steps / 2;
        j.step = j.in_float ? (double)(((float)j.end - (float)j.start) / (float)(steps - 1))
                            : (j.end - j.start) / (double)(steps - 1);
        if (dt == CG_DTYPE_F16 || dt == CG_DTYPE_BF16) j.step = as_dtype(j.step, dt);
    }
    cg_parallel_for(steps, CG_GRAIN, space_range, &j);
    return t;
}

CG_PROF_FN0(cg_tensor *, cg_linspace, "linspace", (double start, double end, int64_t steps, cg_dtype dt, cg_device dev),
            (start, end, steps, dt, dev)) {
    if (cg_dtype_is_barebones(dt)) {
        cg_dtype_unsupported("linspace", dt);
        return NULL;
    }
    return space_impl("linspace", start, end, steps, false, 0.0, dt, dev);
}

CG_PROF_FN0(cg_tensor *, cg_logspace, "logspace", (double start, double end, int64_t steps, double base, cg_dtype dt,
            cg_device dev), (start, end, steps, base, dt, dev)) {
    if (cg_dtype_is_barebones(dt)) {
        cg_dtype_unsupported("logspace", dt);
        return NULL;
    }
    return space_impl("logspace", start, end, steps, true, base, dt, dev);
}

/* ------------------------------------------------------------- eye */

/* (n, m) with ones on the main diagonal; m < 0 means m = n. */
CG_PROF_FN0(cg_tensor *, cg_eye, "eye", (int64_t n, int64_t m, cg_dtype dt, cg_device dev), (n, m, dt, dev)) {
    if (cg_check_factory("eye", dt, dev)) return NULL;
    if (cg_dtype_is_barebones(dt)) {
        cg_dtype_unsupported("eye", dt);
        return NULL;
    }
    CG_CHECK(n >= 0, CG_ERR_SHAPE, "[eye] n must be non-negative, got %lld", (long long)n);
    if (m < 0) m = n;
    int64_t shape[2] = {n, m};
    cg_tensor *t = cg_new_output("eye", 2, shape, dt, dev);
    if (!t || cg_is_meta(t) || n * m == 0) return t;
    size_t isz = cg_dtype_size(dt);
    memset(cg_tensor_ptr(t), 0, (size_t)(n * m) * isz);
    char one[8];
    double v = 1.0;
    cg_store_doubles(one, dt, &v, 1);
    char *p = cg_tensor_ptr(t);
    int64_t k = n < m ? n : m;
    for (int64_t i = 0; i < k; i++) memcpy(p + (size_t)(i * (m + 1)) * isz, one, isz);
    return t;
}
