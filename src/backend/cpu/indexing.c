/* indexing.c — the CPU's entries of the index ops that read values on the
 * host's behalf (Note [Kernel entries]): the nonzero count and coordinates
 * (nonzero, masked_scatter's mask count) and the range check of an index
 * tensor (index_select, take). */
#include "cpu_kernels.h"
#include "loops.h"

#include <string.h>

#define NZ_TEST(name, T, ISNZ)                                                        \
    static void name(const char *p, int64_t n, uint8_t *flags) {                     \
        const T *v = (const T *)p;                                                    \
        for (int64_t i = 0; i < n; i++) flags[i] = ISNZ(v[i]);                        \
    }
#define NZ_PLAIN(x) ((x) != 0)
#define NZ_F16(x) (cg_f16_to_f32(x) != 0.0f)
#define NZ_BF16(x) (cg_bf16_to_f32(x) != 0.0f)
NZ_TEST(nz_u8, uint8_t, NZ_PLAIN)
NZ_TEST(nz_i8, int8_t, NZ_PLAIN)
NZ_TEST(nz_i16, int16_t, NZ_PLAIN)
NZ_TEST(nz_i32, int32_t, NZ_PLAIN)
NZ_TEST(nz_i64, int64_t, NZ_PLAIN)
NZ_TEST(nz_f16, cg_f16, NZ_F16)
NZ_TEST(nz_bf16, cg_bf16, NZ_BF16)
NZ_TEST(nz_f32, float, NZ_PLAIN)
NZ_TEST(nz_f64, double, NZ_PLAIN)

typedef void (*nz_fn)(const char *p, int64_t n, uint8_t *flags);
static const nz_fn nz_tests[CG_DTYPE_COUNT] = {
    [CG_DTYPE_BOOL] = nz_u8, [CG_DTYPE_U8] = nz_u8, [CG_DTYPE_I8] = nz_i8, [CG_DTYPE_I16] = nz_i16,
    [CG_DTYPE_I32] = nz_i32, [CG_DTYPE_I64] = nz_i64, [CG_DTYPE_F16] = nz_f16, [CG_DTYPE_BF16] = nz_bf16,
    [CG_DTYPE_F32] = nz_f32, [CG_DTYPE_F64] = nz_f64,
};

/* the flags are computed in chunks of this many elements (stack scratch) */
#define NZ_CHUNK 4096

cg_status cg_cpu_nonzero_count(const cg_tensor *x, int64_t *count) {
    int64_t numel = cg_tensor_numel(x), cnt = 0;
    const char *p = cg_tensor_ptr(x);
    size_t isz = cg_dtype_size(x->dtype);
    uint8_t flags[NZ_CHUNK];
    for (int64_t i0 = 0; i0 < numel; i0 += NZ_CHUNK) {
        int64_t m = numel - i0 < NZ_CHUNK ? numel - i0 : NZ_CHUNK;
        nz_tests[x->dtype](p + (size_t)i0 * isz, m, flags);
        for (int64_t i = 0; i < m; i++) cnt += flags[i];
    }
    *count = cnt;
    return CG_OK;
}

cg_status cg_cpu_nonzero(cg_tensor *out, const cg_tensor *x) {
    int nd = x->ndim;
    int64_t numel = cg_tensor_numel(x);
    if (!cg_tensor_numel(out) || !nd) return CG_OK;
    const char *p = cg_tensor_ptr(x);
    size_t isz = cg_dtype_size(x->dtype);
    int64_t *o = (int64_t *)cg_tensor_ptr(out), coord[CG_MAX_DIMS] = {0};
    uint8_t flags[NZ_CHUNK];
    for (int64_t i0 = 0; i0 < numel; i0 += NZ_CHUNK) {
        int64_t m = numel - i0 < NZ_CHUNK ? numel - i0 : NZ_CHUNK;
        nz_tests[x->dtype](p + (size_t)i0 * isz, m, flags);
        for (int64_t i = 0; i < m; i++) {
            if (flags[i]) {
                memcpy(o, coord, sizeof(int64_t) * (size_t)nd);
                o += nd;
            }
            for (int d = nd - 1; d >= 0; d--) {
                if (++coord[d] < x->shape[d]) break;
                coord[d] = 0;
            }
        }
    }
    return CG_OK;
}

cg_status cg_cpu_index_find_out_of_range(const cg_tensor *t, int64_t lo, int64_t hi, bool *found, int64_t *bad) {
    const int64_t *v = (const int64_t *)cg_tensor_ptr(t);
    int64_t n = cg_tensor_numel(t);
    *found = false;
    for (int64_t i = 0; i < n; i++)
        if (v[i] < lo || v[i] >= hi) {
            *bad = v[i];
            *found = true;
            break;
        }
    return CG_OK;
}
