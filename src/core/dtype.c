/* dtype.c — dtype and device descriptions, scalar load/store through double,
 * and the run converters (runs of doubles / int64 to and from contiguous data
 * of any dtype). */
#include "core_internal.h"

#include <math.h>
#include <string.h>

static const struct { const char *name; size_t size; bool fp, integral, sign; } k_dtypes[CG_DTYPE_COUNT] = {
    [CG_DTYPE_BOOL] = {"bool", 1, false, true, false},
    [CG_DTYPE_U8] = {"uint8", 1, false, true, false},
    [CG_DTYPE_I8] = {"int8", 1, false, true, true},
    [CG_DTYPE_I16] = {"int16", 2, false, true, true},
    [CG_DTYPE_I32] = {"int32", 4, false, true, true},
    [CG_DTYPE_I64] = {"int64", 8, false, true, true},
    [CG_DTYPE_F16] = {"float16", 2, true, false, true},
    [CG_DTYPE_BF16] = {"bfloat16", 2, true, false, true},
    [CG_DTYPE_F32] = {"float32", 4, true, false, true},
    [CG_DTYPE_F64] = {"float64", 8, true, false, true},
    [CG_DTYPE_U16] = {"uint16", 2, false, true, false},
    [CG_DTYPE_U32] = {"uint32", 4, false, true, false},
    [CG_DTYPE_U64] = {"uint64", 8, false, true, false},
};

static bool valid(cg_dtype dt) { return dt >= 0 && dt < CG_DTYPE_COUNT; }
const char *cg_dtype_name(cg_dtype dt) { return valid(dt) ? k_dtypes[dt].name : "invalid"; }
size_t cg_dtype_size(cg_dtype dt) { return valid(dt) ? k_dtypes[dt].size : 0; }
bool cg_dtype_is_floating(cg_dtype dt) { return valid(dt) && k_dtypes[dt].fp; }
bool cg_dtype_is_integral(cg_dtype dt) { return valid(dt) && k_dtypes[dt].integral; }
bool cg_dtype_is_signed(cg_dtype dt) { return valid(dt) && k_dtypes[dt].sign; }

cg_device cg_cpu(void) { return (cg_device){CG_DEVICE_CPU, 0}; }
cg_device cg_meta(void) { return (cg_device){CG_DEVICE_META, 0}; }
bool cg_device_eq(cg_device a, cg_device b) { return a.type == b.type && a.index == b.index; }

double cg_load_f64(const void *p, cg_dtype dt) {
    switch (dt) {
    case CG_DTYPE_BOOL: return *(const uint8_t *)p ? 1.0 : 0.0;
    case CG_DTYPE_U8: return *(const uint8_t *)p;
    case CG_DTYPE_I8: return *(const int8_t *)p;
    case CG_DTYPE_I16: return *(const int16_t *)p;
    case CG_DTYPE_I32: return *(const int32_t *)p;
    case CG_DTYPE_I64: return (double)*(const int64_t *)p;
    case CG_DTYPE_F16: return cg_f16_to_f32(*(const cg_f16 *)p);
    case CG_DTYPE_BF16: return cg_bf16_to_f32(*(const cg_bf16 *)p);
    case CG_DTYPE_F32: return *(const float *)p;
    case CG_DTYPE_F64: return *(const double *)p;
    case CG_DTYPE_U16: return *(const uint16_t *)p;
    case CG_DTYPE_U32: return *(const uint32_t *)p;
    case CG_DTYPE_U64: return (double)*(const uint64_t *)p;
    default: CG_ASSERT(0); return 0;
    }
}

/* Float -> integer conversion of out-of-range values is undefined in C; we
 * saturate-free wrap through int64 like PyTorch's CPU casts do for in-range
 * values, and map nan/inf/out-of-range to 0 / limits deterministically. */
static int64_t to_i64(double v) {
    if (isnan(v)) return 0;
    if (v >= 9.2233720368547758e18) return INT64_MAX;
    if (v <= -9.2233720368547758e18) return INT64_MIN;
    return (int64_t)v;
}

uint64_t cg_f64_to_u64(double v) {
    if (v >= 1.8446744073709552e19 && isfinite(v)) v = fmod(v, 1.8446744073709552e19);
    if (v >= 9.2233720368547758e18) return (uint64_t)v;
    return (uint64_t)to_i64(v);
}

void cg_store_f64(void *p, cg_dtype dt, double v) {
    switch (dt) {
    case CG_DTYPE_BOOL: *(uint8_t *)p = v != 0.0; break;
    case CG_DTYPE_U8: *(uint8_t *)p = (uint8_t)to_i64(v); break;
    case CG_DTYPE_I8: *(int8_t *)p = (int8_t)to_i64(v); break;
    case CG_DTYPE_I16: *(int16_t *)p = (int16_t)to_i64(v); break;
    case CG_DTYPE_I32: *(int32_t *)p = (int32_t)to_i64(v); break;
    case CG_DTYPE_I64: *(int64_t *)p = to_i64(v); break;
    case CG_DTYPE_F16: *(cg_f16 *)p = cg_f32_to_f16((float)v); break;
    case CG_DTYPE_BF16: *(cg_bf16 *)p = cg_f32_to_bf16((float)v); break;
    case CG_DTYPE_F32: *(float *)p = (float)v; break;
    case CG_DTYPE_F64: *(double *)p = v; break;
    case CG_DTYPE_U16: *(uint16_t *)p = (uint16_t)to_i64(v); break;
    case CG_DTYPE_U32: *(uint32_t *)p = (uint32_t)to_i64(v); break;
    case CG_DTYPE_U64: *(uint64_t *)p = cg_f64_to_u64(v); break;
    default: CG_ASSERT(0);
    }
}

cg_status cg_dtype_unsupported(const char *op, cg_dtype dt) {
    if (cg_dtype_is_barebones(dt))
        return cg_set_error(CG_ERR_NOT_IMPLEMENTED, "[%s] \"%s\" not implemented for '%s'", op, op,
                            dt == CG_DTYPE_U16 ? "UInt16" : dt == CG_DTYPE_U32 ? "UInt32" : "UInt64");
    return cg_set_error(CG_ERR_DTYPE, "[%s] not supported for dtype %s", op, cg_dtype_name(dt));
}

/* Note [Barebones refusals]: the entry points PyTorch 2.13 refuses for the
 * barebones unsigned dtypes on CPU; the drivers' ops refuse through their
 * loop tables (no uint16/32/64 loop: cg_dtype_unsupported). */
static const char *const k_barebones_refused[] = {
    "nonzero", "index_select", "take", "masked_fill", "masked_select", "masked_scatter", "flip", "tril", "triu",
    "gather", "scatter", "scatter_add", "scatter_reduce", "cummax", "index_put", "index_put_", "one_hot", "einsum",
};

bool cg_barebones_refused(const char *op, int n, cg_tensor *const *in) {
    for (int i = 0; i < n; i++) {
        if (!in[i] || !cg_dtype_is_barebones(in[i]->dtype)) continue;
        for (size_t k = 0; k < sizeof k_barebones_refused / sizeof *k_barebones_refused; k++)
            if (!strcmp(op, k_barebones_refused[k])) {
                cg_dtype_unsupported(op, in[i]->dtype);
                return true;
            }
        return false;
    }
    return false;
}

/* ------------------------------------------------------------- run converters */

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
