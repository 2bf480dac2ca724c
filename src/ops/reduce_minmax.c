/* reduce_minmax.c — value-selecting reductions: amax / amin (dims list),
 * max / min along one dim (values + int64 indices), max / min over all
 * elements, argmax / argmin. NaN propagates as the extreme value; ties pick
 * the first occurrence. Reducing over zero elements is an error (no identity). */
#include "reduce_internal.h"

#include <string.h>

/* A value-selecting loop: keeps the first element x for which BETTER(x, best)
 * held last; writes the element itself (bit-exact, any dtype) to out and its
 * position in the run (int64) to out2 when indices are requested.
 * in: n elements at byte stride s; out: one T; out2: one int64 or NULL. */
#define MM_LOOP(fname, T, CT, LOAD, BETTER)                                                           \
    static void fname(char *out, char *out2, const char *in, int64_t n, int64_t s, const double *p) { \
        (void)p;                                                                                      \
        if (n <= 0) return;                                                                           \
        const T *bp = (const T *)in;                                                                  \
        CT best = (CT)LOAD(*bp);                                                                      \
        int64_t bi = 0;                                                                               \
        for (int64_t k = 1; k < n; k++) {                                                             \
            const T *xp = (const T *)(in + k * s);                                                    \
            CT x = (CT)LOAD(*xp);                                                                     \
            if (BETTER(x, best)) {                                                                    \
                best = x;                                                                             \
                bp = xp;                                                                              \
                bi = k;                                                                               \
            }                                                                                         \
        }                                                                                             \
        *(T *)out = *bp;                                                                              \
        if (out2) *(int64_t *)out2 = bi;                                                              \
    }

/* floats: once the best is NaN it stays; a NaN beats any number */
#define FMAX_BETTER(x, b) (!isnan(b) && ((x) > (b) || isnan(x)))
#define FMIN_BETTER(x, b) (!isnan(b) && ((x) < (b) || isnan(x)))
#define IMAX_BETTER(x, b) ((x) > (b))
#define IMIN_BETTER(x, b) ((x) < (b))

/* float32 / float64 without indices on a contiguous run: the extreme value in
 * sixteen vector lanes, NaN noted on the side. The element the serial rule
 * picks is then that value unless the run holds a NaN (the first NaN) or the
 * value is a zero (the first zero: -0 and +0 compare equal); those rare cases
 * scan once more. CMP is > for max, < for min. */
#define MM_FLOAT_LOOP(fname, T, FB, CMP)                                                              \
    MM_LOOP(fname##_serial, T, T, CG_ID, FB)                                                          \
    static void fname(char *out, char *out2, const char *in, int64_t n, int64_t s, const double *p) { \
        if (out2 || s != (int64_t)sizeof(T) || n < 64) {                                              \
            fname##_serial(out, out2, in, n, s, p);                                                   \
            return;                                                                                   \
        }                                                                                             \
        const T *x = (const T *)in;                                                                   \
        T b[32];                                                                                      \
        int nan[32];                                                                                  \
        for (int j = 0; j < 32; j++) b[j] = x[j], nan[j] = x[j] != x[j];                              \
        int64_t k = 32;                                                                               \
        for (; k + 32 <= n; k += 32)                                                                  \
            for (int j = 0; j < 32; j++) {                                                            \
                const T v = x[k + j];                                                                 \
                b[j] = v CMP b[j] ? v : b[j];                                                         \
                nan[j] |= v != v;                                                                     \
            }                                                                                         \
        for (int w = 16; w >= 1; w /= 2) /* halving tree (equal values are equal bits here) */        \
            for (int j = 0; j < w; j++) b[j] = b[j + w] CMP b[j] ? b[j + w] : b[j], nan[j] |= nan[j + w]; \
        T best = b[0];                                                                                \
        int any_nan = nan[0];                                                                         \
        for (; k < n; k++) best = x[k] CMP best ? x[k] : best, any_nan |= x[k] != x[k];               \
        if (any_nan || best == 0) {                                                                   \
            for (k = 0; k < n; k++)                                                                   \
                if (any_nan ? x[k] != x[k] : x[k] == 0) break;                                        \
            best = x[k];                                                                              \
        }                                                                                             \
        *(T *)out = best;                                                                             \
    }
/* float16 / bfloat16 without indices on a contiguous run: the float32 scheme
 * above on blocks converted to float (LDN; Note [Half compute]). A half value
 * converts to float and back exactly, so the result is the element's bits
 * except for NaN and zero, which the rescan takes from the input. */
#define MM_HALF_LOOP(fname, T, LD, ST, LDN, FB, CMP)                                                  \
    MM_LOOP(fname##_serial, T, float, LD, FB)                                                         \
    static void fname(char *out, char *out2, const char *in, int64_t n, int64_t s, const double *p) { \
        if (out2 || s != (int64_t)sizeof(T) || n < 64) {                                              \
            fname##_serial(out, out2, in, n, s, p);                                                   \
            return;                                                                                   \
        }                                                                                             \
        const T *x = (const T *)in;                                                                   \
        float xb[CG_HALF_BLOCK], b[32];                                                               \
        int nan[32];                                                                                  \
        for (int j = 0; j < 32; j++) b[j] = LD(x[0]), nan[j] = 0;                                     \
        for (int64_t k0 = 0; k0 < n; k0 += CG_HALF_BLOCK) {                                           \
            const int64_t w = n - k0 < CG_HALF_BLOCK ? n - k0 : CG_HALF_BLOCK;                        \
            LDN(xb, x + k0, w);                                                                       \
            int64_t k = 0;                                                                            \
            for (; k + 32 <= w; k += 32)                                                              \
                for (int j = 0; j < 32; j++) {                                                        \
                    const float v = xb[k + j];                                                        \
                    b[j] = v CMP b[j] ? v : b[j];                                                     \
                    nan[j] |= v != v;                                                                 \
                }                                                                                     \
            for (; k < w; k++) b[0] = xb[k] CMP b[0] ? xb[k] : b[0], nan[0] |= xb[k] != xb[k];       \
        }                                                                                             \
        for (int w = 16; w >= 1; w /= 2)                                                              \
            for (int j = 0; j < w; j++) b[j] = b[j + w] CMP b[j] ? b[j + w] : b[j], nan[j] |= nan[j + w]; \
        const float best = b[0];                                                                      \
        int64_t k = 0;                                                                                \
        if (nan[0] || best == 0) {                                                                    \
            for (; k < n; k++) {                                                                      \
                const float v = LD(x[k]);                                                             \
                if (nan[0] ? v != v : v == 0) break;                                                  \
            }                                                                                         \
            *(T *)out = x[k];                                                                         \
            return;                                                                                   \
        }                                                                                             \
        *(T *)out = ST(best);                                                                         \
    }
static inline void mm_bf16_to_f32_n(float *restrict y, const cg_bf16 *restrict x, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = cg_bf16_to_f32(x[i]);
}
#define MM_LOOPS(name, FB, IB, CMP)                                                      \
    MM_FLOAT_LOOP(name##_f32, float, FB, CMP)                                            \
    MM_FLOAT_LOOP(name##_f64, double, FB, CMP)                                           \
    MM_HALF_LOOP(name##_f16, cg_f16, CG_LD_F16, CG_ST_F16, cg_f16_to_f32_n, FB, CMP)     \
    MM_HALF_LOOP(name##_bf16, cg_bf16, CG_LD_BF16, CG_ST_BF16, mm_bf16_to_f32_n, FB, CMP)\
    MM_LOOP(name##_b, uint8_t, int, CG_LD_BOOL, IB)                                      \
    MM_LOOP(name##_u8, uint8_t, uint8_t, CG_ID, IB)                                      \
    MM_LOOP(name##_i8, int8_t, int8_t, CG_ID, IB)                                        \
    MM_LOOP(name##_i16, int16_t, int16_t, CG_ID, IB)                                     \
    MM_LOOP(name##_i32, int32_t, int32_t, CG_ID, IB)                                     \
    MM_LOOP(name##_i64, int64_t, int64_t, CG_ID, IB)
MM_LOOPS(max, FMAX_BETTER, IMAX_BETTER, >)
MM_LOOPS(min, FMIN_BETTER, IMIN_BETTER, <)

/* The column form (Note [Column reductions]) of the value-only ops: per column
 * the same first-best rule, row by row; rows >= 1 (empty is an error). */
#define MM_COLS_LOOP(fname, T, LOAD, BETTER)                                                           \
    static void fname(char *out, const char *in, int64_t rows, int64_t rs, int64_t m, const double *p) { \
        (void)p;                                                                                        \
        T bv[CG_RD_COLS_BLOCK];                                                                         \
        for (int64_t j0 = 0; j0 < m; j0 += CG_RD_COLS_BLOCK) {                                          \
            const int64_t w = m - j0 < CG_RD_COLS_BLOCK ? m - j0 : CG_RD_COLS_BLOCK;                    \
            memcpy(bv, (const T *)in + j0, (size_t)w * sizeof(T));                                      \
            for (int64_t i = 1; i < rows; i++) {                                                        \
                const T *xr = (const T *)(in + i * rs) + j0;                                            \
                for (int64_t j = 0; j < w; j++) {                                                       \
                    const T x = xr[j], b = bv[j];                                                       \
                    bv[j] = BETTER(LOAD(x), LOAD(b)) ? x : b;                                           \
                }                                                                                       \
            }                                                                                           \
            memcpy((T *)out + j0, bv, (size_t)w * sizeof(T));                                           \
        }                                                                                               \
    }
#define MM_COLS_LOOPS(name, FB, IB)                          \
    MM_COLS_LOOP(name##_f32, float, CG_ID, FB)               \
    MM_COLS_LOOP(name##_f64, double, CG_ID, FB)              \
    MM_COLS_LOOP(name##_f16, cg_f16, CG_LD_F16, FB)          \
    MM_COLS_LOOP(name##_bf16, cg_bf16, CG_LD_BF16, FB)       \
    MM_COLS_LOOP(name##_b, uint8_t, CG_LD_BOOL, IB)          \
    MM_COLS_LOOP(name##_u8, uint8_t, CG_ID, IB)              \
    MM_COLS_LOOP(name##_i8, int8_t, CG_ID, IB)               \
    MM_COLS_LOOP(name##_i16, int16_t, CG_ID, IB)             \
    MM_COLS_LOOP(name##_i32, int32_t, CG_ID, IB)             \
    MM_COLS_LOOP(name##_i64, int64_t, CG_ID, IB)
MM_COLS_LOOPS(max_cols, FMAX_BETTER, IMAX_BETTER)
MM_COLS_LOOPS(min_cols, FMIN_BETTER, IMIN_BETTER)

/* ---------------------------------------------------------------- backward formulas */

/* amax / amin: the gradient is split evenly among the elements equal to the
 * result: (g / count) * mask, PyTorch's scale_grad_by_count (a slice whose
 * result is NaN matches nothing and gets NaN, as in PyTorch). */
static cg_status amax_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    cg_rd_tmp tl = {0};
    cg_tensor *x, *out, *ou, *gu, *mask, *maskf, *cnt, *q;
    CG_RD_TRY(x, cg_node_saved(node, 0));
    CG_RD_TRY(out, cg_node_saved(node, 1));
    CG_RD_TRY(ou, cg_reduce_unsqueeze(node, out));
    CG_RD_TRY(gu, cg_reduce_unsqueeze(node, g[0]));
    CG_RD_TRY(mask, cg_eq(x, ou));
    CG_RD_TRY(maskf, cg_to_dtype(mask, g[0]->dtype));
    CG_RD_TRY(cnt, cg_rd_mask_count(node, mask, g[0]->dtype));
    CG_RD_TRY(q, cg_div(gu, cnt));
    gin[0] = cg_mul(q, maskf);
fail:
    cg_rd_free(&tl);
    return gin[0] ? CG_OK : cg_last_error();
}

/* max() / min() over all elements: PyTorch's evenly_distribute_backward: the
 * gradient goes in equal parts to the elements equal to the result, or to
 * the NaN elements when the result is NaN. */
static cg_status all_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    cg_rd_tmp tl = {0};
    cg_tensor *x, *out, *mask, *cnt, *q, *zero;
    CG_RD_TRY(x, cg_node_saved(node, 0));
    CG_RD_TRY(out, cg_node_saved(node, 1));
    double v = 0;
    if (cg_device_has_data(out->device) && cg_tensor_item(out, &v)) goto fail; /* meta: no value */
    if (isnan(v)) CG_RD_TRY(mask, cg_isnan(x));
    else CG_RD_TRY(mask, cg_eq(x, out));
    CG_RD_TRY(cnt, cg_rd_mask_count(node, mask, g[0]->dtype));
    CG_RD_TRY(q, cg_div(g[0], cnt));
    CG_RD_TRY(zero, cg_rd_scalar(0.0, g[0]));
    gin[0] = cg_where(mask, q, zero);
fail:
    cg_rd_free(&tl);
    return gin[0] ? CG_OK : cg_last_error();
}

/* max / min along a dim: the gradient flows to the selected index only:
 * where(arange(size) == unsqueeze(indices), g, 0), a one-hot scatter along
 * the dim built from differentiable ops. */
static cg_status dim_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    const cg_tensor_meta *m = &node->input_meta[0];
    uint32_t mask = (uint32_t)node->iattr[0];
    if (cg_rd_count(node) <= 1)
        return (gin[0] = cg_reduce_grad_expand(node, g[0])) ? CG_OK : cg_last_error();
    cg_rd_tmp tl = {0};
    cg_tensor *idx, *iu, *ar, *arr, *hot, *gu, *zero;
    int64_t shape[CG_MAX_DIMS];
    int d = 0;
    for (int i = 0; i < m->ndim; i++) {
        shape[i] = 1;
        if (mask & (1u << i)) d = i;
    }
    shape[d] = m->shape[d];
    CG_RD_TRY(idx, cg_node_saved(node, 0));
    CG_RD_TRY(iu, cg_reduce_unsqueeze(node, idx));
    CG_RD_TRY(ar, cg_arange(0, (double)m->shape[d], 1, CG_DTYPE_I64, g[0]->device));
    CG_RD_TRY(arr, cg_reshape(ar, m->ndim, shape));
    CG_RD_TRY(hot, cg_eq(arr, iu));
    CG_RD_TRY(gu, cg_reduce_unsqueeze(node, g[0]));
    CG_RD_TRY(zero, cg_rd_scalar(0.0, g[0]));
    gin[0] = cg_where(hot, gu, zero);
fail:
    cg_rd_free(&tl);
    return gin[0] ? CG_OK : cg_last_error();
}

/* ---------------------------------------------------------------- descriptors */

#define MM_OP(var, opname, node, table, idx, bw, saves)                                    \
    static const cg_reduce_op var = {                                                      \
        .schema = {opname, node, 1, CG_AMP_KEEP, false, saves, saves},                     \
        .out_dtype = CG_SAME_DTYPE,                                                        \
        .has_indices = idx,                                                                \
        .empty_error = true,                                                               \
        .chunked = !(idx),                                                                 \
        .cpu = {CG_ALL_TABLE(table)},                                                      \
        .cols = {CG_ALL_TABLE(table##_cols)}, /* unused by the ops with indices */         \
        .backward = bw,                                                                    \
    };
MM_OP(k_amax, "amax", "AmaxBackward0", max, false, amax_backward, true)
MM_OP(k_amin, "amin", "AminBackward0", min, false, amax_backward, true)
MM_OP(k_max_all, "max", "MaxBackward1", max, false, all_backward, true)
MM_OP(k_min_all, "min", "MinBackward1", min, false, all_backward, true)
MM_OP(k_max_dim, "max", "MaxBackward0", max, true, dim_backward, false)
MM_OP(k_min_dim, "min", "MinBackward0", min, true, dim_backward, false)
MM_OP(k_argmax, "argmax", NULL, max, true, NULL, false)
MM_OP(k_argmin, "argmin", NULL, min, true, NULL, false)

/* ---------------------------------------------------------------- entry points */

static cg_tensor *amax_impl(const cg_reduce_op *op, cg_tensor *x, int ndims, const int64_t *dims, bool keepdim) {
    uint32_t mask;
    if (cg_rd_mask(op->schema.name, x, ndims, dims, false, &mask)) return NULL;
    cg_tensor *out = NULL;
    cg_reduce_forward(op, x, mask, keepdim, NULL, 0, -1, &out, NULL);
    return out;
}
cg_tensor *cg_amax(cg_tensor *x, int ndims, const int64_t *dims, bool keepdim) { return amax_impl(&k_amax, x, ndims, dims, keepdim); }
cg_tensor *cg_amin(cg_tensor *x, int ndims, const int64_t *dims, bool keepdim) { return amax_impl(&k_amin, x, ndims, dims, keepdim); }
cg_tensor *cg_max(cg_tensor *x) { return amax_impl(&k_max_all, x, 0, NULL, false); }
cg_tensor *cg_min(cg_tensor *x) { return amax_impl(&k_min_all, x, 0, NULL, false); }

static cg_status dim_impl(const cg_reduce_op *op, cg_tensor *x, int64_t dim, bool keepdim, cg_tensor **values,
                          cg_tensor **indices) {
    const char *name = op->schema.name;
    CG_CHECK_S(values && indices, CG_ERR_VALUE, "[%s] output pointers are NULL", name);
    *values = *indices = NULL;
    CG_CHECK_S(x, CG_ERR_VALUE, "[%s] argument is NULL", name);
    int64_t d;
    if (cg_wrap_dim(name, dim, x->ndim, &d)) return cg_last_error();
    uint32_t mask = x->ndim ? 1u << d : 0;
    return cg_reduce_forward(op, x, mask, keepdim, NULL, 0, -1, values, indices);
}
cg_status cg_max_dim(cg_tensor *x, int64_t dim, bool keepdim, cg_tensor **values, cg_tensor **indices) {
    return dim_impl(&k_max_dim, x, dim, keepdim, values, indices);
}
cg_status cg_min_dim(cg_tensor *x, int64_t dim, bool keepdim, cg_tensor **values, cg_tensor **indices) {
    return dim_impl(&k_min_dim, x, dim, keepdim, values, indices);
}

/* has_dim == false: the flat index over all elements (row-major). keepdim
 * then keeps every dim with size 1, as PyTorch does. */
static cg_tensor *arg_impl(const cg_reduce_op *op, cg_tensor *x, bool has_dim, int64_t dim, bool keepdim) {
    const char *name = op->schema.name;
    CG_CHECK(x, CG_ERR_VALUE, "[%s] argument is NULL", name);
    uint32_t mask;
    if (has_dim) {
        int64_t d;
        if (cg_wrap_dim(name, dim, x->ndim, &d)) return NULL;
        mask = x->ndim ? 1u << d : 0;
    } else if (cg_dims_mask(name, 0, NULL, x->ndim, &mask)) {
        return NULL;
    }
    cg_tensor *vals = NULL, *idx = NULL;
    /* the values are a by-product: no graph for them */
    bool prev = cg_set_grad_enabled(false);
    cg_reduce_forward(op, x, mask, keepdim, NULL, 0, -1, &vals, &idx);
    cg_set_grad_enabled(prev);
    cg_tensor_release(vals);
    return idx;
}
cg_tensor *cg_argmax(cg_tensor *x, bool has_dim, int64_t dim, bool keepdim) { return arg_impl(&k_argmax, x, has_dim, dim, keepdim); }
cg_tensor *cg_argmin(cg_tensor *x, bool has_dim, int64_t dim, bool keepdim) { return arg_impl(&k_argmin, x, has_dim, dim, keepdim); }
