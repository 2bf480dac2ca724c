/* advanced_index.c — the CPU's advanced-indexing entries (Note [Kernel
 * entries]; Note [Index plan] in src/ops/advanced_index.c): the element
 * offsets of a plan (every index bounds-checked), the gather over the
 * result, and the sequential put (assign, or accumulate by dtype) that keeps
 * duplicate indices deterministic. */
#include "cpu_kernels.h"
#include "loops.h"

/* Element offsets into x for every position of B (off's shape), bounds-checking
 * each index. idx[d] (d < x->ndim) is NULL or contiguous int64 with a shape
 * that broadcasts to B. */
cg_status cg_cpu_index_offsets(const char *op, cg_tensor *off, const cg_tensor *x, cg_tensor *const *idx) {
    int m = 0, bnd = off->ndim;
    const int64_t *bshape = off->shape;
    const int64_t *ptr[CG_MAX_DIMS];
    int64_t bst[CG_MAX_DIMS][CG_MAX_DIMS], pos[CG_MAX_DIMS], size[CG_MAX_DIMS], xst[CG_MAX_DIMS];
    int dim[CG_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) {
        const cg_tensor *t = idx[d];
        if (!t) continue;
        ptr[m] = (const int64_t *)cg_tensor_ptr(t);
        int64_t cst[CG_MAX_DIMS];
        cg_contiguous_strides(t->ndim, t->shape, cst);
        for (int j = 0; j < bnd; j++) {
            int tj = t->ndim - bnd + j;
            bst[m][j] = (tj >= 0 && t->shape[tj] != 1) ? cst[tj] : 0;
        }
        pos[m] = 0;
        size[m] = x->shape[d];
        xst[m] = x->strides[d];
        dim[m] = d;
        m++;
    }
    int64_t numel = cg_shape_numel(bnd, bshape);
    int64_t *o = (int64_t *)cg_tensor_ptr(off);
    int64_t coord[CG_MAX_DIMS] = {0};
    for (int64_t b = 0; b < numel; b++) {
        int64_t sum = 0;
        for (int k = 0; k < m; k++) {
            int64_t v = ptr[k][pos[k]], w = v < 0 ? v + size[k] : v;
            if (w < 0 || w >= size[k])
                return cg_set_error(CG_ERR_INDEX, "[%s] index %lld is out of bounds for dimension %d with size %lld",
                                    op, (long long)v, dim[k], (long long)size[k]);
            sum += w * xst[k];
        }
        o[b] = sum;
        for (int j = bnd - 1; j >= 0; j--) {
            for (int k = 0; k < m; k++) pos[k] += bst[k][j];
            if (++coord[j] < bshape[j]) break;
            for (int k = 0; k < m; k++) pos[k] -= bst[k][j] * bshape[j];
            coord[j] = 0;
        }
    }
    return CG_OK;
}

/* gather: args[0] out (R), args[1] x restrided (R), args[2] int64 offsets (R):
 * out = x[base + off] (element offsets); by item size */
#define GATHER_LOOP(name, T)                                                                        \
    static void name(char **a, const int64_t *s, int64_t n, const void *p) {                        \
        (void)p;                                                                                    \
        for (int64_t k = 0; k < n; k++)                                                             \
            *(T *)(a[0] + k * s[0]) =                                                               \
                *(const T *)(a[1] + k * s[1] + *(const int64_t *)(a[2] + k * s[2]) * (int64_t)sizeof(T)); \
    }
GATHER_LOOP(gather_1, uint8_t)
GATHER_LOOP(gather_2, uint16_t)
GATHER_LOOP(gather_4, uint32_t)
GATHER_LOOP(gather_8, uint64_t)

/* put: args[0] x restrided (R), args[1] values broadcast (R), args[2] offsets (R):
 * x[base + off] = v (assign, by item size) or += v (accumulate, by dtype) */
#define PUT_LOOP(name, T, LOAD, STORE, OP)                                                          \
    static void name(char **a, const int64_t *s, int64_t n, const void *p) {                        \
        (void)p;                                                                                    \
        for (int64_t k = 0; k < n; k++) {                                                           \
            T *dst = (T *)(a[0] + k * s[0] + *(const int64_t *)(a[2] + k * s[2]) * (int64_t)sizeof(T)); \
            const T *src = (const T *)(a[1] + k * s[1]);                                            \
            *dst = STORE(OP(LOAD(*dst), LOAD(*src)));                                               \
        }                                                                                           \
    }
#define PUT_SET(d, v) (v)
#define PUT_ADD(d, v) ((d) + (v))
#define PUT_OR(d, v) ((d) | (v))
PUT_LOOP(put_1, uint8_t, CG_ID, CG_ID, PUT_SET)
PUT_LOOP(put_2, uint16_t, CG_ID, CG_ID, PUT_SET)
PUT_LOOP(put_4, uint32_t, CG_ID, CG_ID, PUT_SET)
PUT_LOOP(put_8, uint64_t, CG_ID, CG_ID, PUT_SET)
PUT_LOOP(acc_b, uint8_t, CG_ID, CG_ID, PUT_OR)
PUT_LOOP(acc_u8, uint8_t, CG_ID, CG_ID, PUT_ADD)
PUT_LOOP(acc_i8, int8_t, CG_ID, CG_ID, PUT_ADD)
PUT_LOOP(acc_i16, int16_t, CG_ID, CG_ID, PUT_ADD)
PUT_LOOP(acc_i32, int32_t, CG_ID, CG_ID, PUT_ADD)
PUT_LOOP(acc_i64, int64_t, CG_ID, CG_ID, PUT_ADD)
PUT_LOOP(acc_f32, float, CG_ID, CG_ID, PUT_ADD)
PUT_LOOP(acc_f64, double, CG_ID, CG_ID, PUT_ADD)
PUT_LOOP(acc_f16, cg_f16, CG_LD_F16, CG_ST_F16, PUT_ADD)
PUT_LOOP(acc_bf16, cg_bf16, CG_LD_BF16, CG_ST_BF16, PUT_ADD)

static cg_loop_fn loop_by_size(size_t isz, bool gather) {
    switch (isz) {
    case 1: return gather ? gather_1 : put_1;
    case 2: return gather ? gather_2 : put_2;
    case 4: return gather ? gather_4 : put_4;
    default: return gather ? gather_8 : put_8;
    }
}

static const cg_loop_fn acc_loops[CG_DTYPE_COUNT] = {
    [CG_DTYPE_BOOL] = acc_b, [CG_DTYPE_U8] = acc_u8, [CG_DTYPE_I8] = acc_i8, [CG_DTYPE_I16] = acc_i16,
    [CG_DTYPE_I32] = acc_i32, [CG_DTYPE_I64] = acc_i64, [CG_DTYPE_F16] = acc_f16, [CG_DTYPE_BF16] = acc_bf16,
    [CG_DTYPE_F32] = acc_f32, [CG_DTYPE_F64] = acc_f64,
};

cg_status cg_cpu_index_gather(cg_device dev, const cg_iter *it, size_t itemsize) {
    (void)dev;
    cg_iter_run(it, loop_by_size(itemsize, true), NULL, CG_GRAIN);
    return CG_OK;
}

cg_status cg_cpu_index_put(cg_device dev, const cg_iter *it, cg_dtype dt, bool accumulate) {
    (void)dev;
    cg_iter_run(it, accumulate ? acc_loops[dt] : loop_by_size(cg_dtype_size(dt), false), NULL, INT64_MAX);
    return CG_OK;
}
