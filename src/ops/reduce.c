/* reduce.c — reductions: sum and any (descriptor, loops, backward side by side).
 * Floating sums accumulate in double; integer sums in int64 (PyTorch's
 * result dtype for integer sums is int64). */
#include "../backend/cpu/loops.h"

/* ---------------------------------------------------------------- sum */
#define SUM_STEP(acc, x) ((acc) + (x))
#define SUM_FINAL(acc, n) (acc)
CG_REDUCE_LOOP(sum_f32, float, double, float, CG_ID, CG_ID, 0.0, SUM_STEP, SUM_FINAL)
CG_REDUCE_LOOP(sum_f64, double, double, double, CG_ID, CG_ID, 0.0, SUM_STEP, SUM_FINAL)
CG_REDUCE_LOOP(sum_f16, cg_f16, double, cg_f16, CG_LD_F16, CG_ST_F16, 0.0, SUM_STEP, SUM_FINAL)
CG_REDUCE_LOOP(sum_bf16, cg_bf16, double, cg_bf16, CG_LD_BF16, CG_ST_BF16, 0.0, SUM_STEP, SUM_FINAL)
CG_REDUCE_LOOP(sum_b, uint8_t, int64_t, int64_t, CG_LD_BOOL, CG_ID, 0, SUM_STEP, SUM_FINAL)
CG_REDUCE_LOOP(sum_u8, uint8_t, int64_t, int64_t, CG_ID, CG_ID, 0, SUM_STEP, SUM_FINAL)
CG_REDUCE_LOOP(sum_i8, int8_t, int64_t, int64_t, CG_ID, CG_ID, 0, SUM_STEP, SUM_FINAL)
CG_REDUCE_LOOP(sum_i16, int16_t, int64_t, int64_t, CG_ID, CG_ID, 0, SUM_STEP, SUM_FINAL)
CG_REDUCE_LOOP(sum_i32, int32_t, int64_t, int64_t, CG_ID, CG_ID, 0, SUM_STEP, SUM_FINAL)
CG_REDUCE_LOOP(sum_i64, int64_t, int64_t, int64_t, CG_ID, CG_ID, 0, SUM_STEP, SUM_FINAL)

/* gx = expand(g) */
static cg_status sum_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    return (gin[0] = cg_reduce_grad_expand(node, g[0])) ? CG_OK : cg_last_error();
}

static const cg_reduce_op k_sum = {
    .schema = {"sum", "SumBackward1", 1, CG_AMP_KEEP, false, false, false},
    .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(sum), CG_INT_TABLE(sum), [CG_DTYPE_BOOL] = sum_b},
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
#define REDUCE_BOOL_LOOPS(name, INIT, STEP)                                                         \
    CG_REDUCE_LOOP(name##_b, uint8_t, int, uint8_t, CG_ID, CG_ST_BOOL, INIT, STEP, BOOL_FINAL)      \
    CG_REDUCE_LOOP(name##_u8, uint8_t, int, uint8_t, CG_ID, CG_ST_BOOL, INIT, STEP, BOOL_FINAL)     \
    CG_REDUCE_LOOP(name##_i8, int8_t, int, uint8_t, CG_ID, CG_ST_BOOL, INIT, STEP, BOOL_FINAL)      \
    CG_REDUCE_LOOP(name##_i16, int16_t, int, uint8_t, CG_ID, CG_ST_BOOL, INIT, STEP, BOOL_FINAL)    \
    CG_REDUCE_LOOP(name##_i32, int32_t, int, uint8_t, CG_ID, CG_ST_BOOL, INIT, STEP, BOOL_FINAL)    \
    CG_REDUCE_LOOP(name##_i64, int64_t, int64_t, uint8_t, CG_ID, CG_ST_BOOL, INIT, STEP, BOOL_FINAL) \
    CG_REDUCE_LOOP(name##_f32, float, int, uint8_t, CG_ID, CG_ST_BOOL, INIT, STEP, BOOL_FINAL)      \
    CG_REDUCE_LOOP(name##_f64, double, int, uint8_t, CG_ID, CG_ST_BOOL, INIT, STEP, BOOL_FINAL)     \
    CG_REDUCE_LOOP(name##_f16, cg_f16, int, uint8_t, CG_LD_F16, CG_ST_BOOL, INIT, STEP, BOOL_FINAL) \
    CG_REDUCE_LOOP(name##_bf16, cg_bf16, int, uint8_t, CG_LD_BF16, CG_ST_BOOL, INIT, STEP, BOOL_FINAL)
REDUCE_BOOL_LOOPS(any, 0, ANY_STEP)
REDUCE_BOOL_LOOPS(all, 1, ALL_STEP)

static const cg_reduce_op k_any = {
    .schema = {"any", NULL, 1, CG_AMP_KEEP, false, false, false},
    .out_dtype = CG_DTYPE_BOOL,
    .cpu = {CG_ALL_TABLE(any)},
};
static const cg_reduce_op k_all = {
    .schema = {"all", NULL, 1, CG_AMP_KEEP, false, false, false},
    .out_dtype = CG_DTYPE_BOOL,
    .cpu = {CG_ALL_TABLE(all)},
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
