/* compare.c — isclose (every dtype in, bool out, not differentiable). The
 * comparisons eq, ne, lt, le, gt, ge (NaN compares unequal, as in PyTorch) are
 * rows of the op table (src/ops/elementwise_ops.py): generated. */
#include "../dispatch/dispatch_internal.h"
#include "../backend/cpu/loops.h"

/* ---------------------------------------------------------------- isclose
 * |a - b| <= atol + |rtol * b| (finite error only), or a == b (equal
 * infinities), or both NaN when equal_nan. params: {rtol, atol, equal_nan}.
 * Floating dtypes compute in their own precision (half in float); integers
 * and bool in double. */
#define ISCLOSE_FN(NAME, T, FABS)                                                 \
    static inline int NAME(T a, T b, const double *p) {                           \
        if (a == b) return 1;                                                     \
        if (p[2] != 0 && isnan(a) && isnan(b)) return 1;                          \
        T err = FABS(a - b);                                                      \
        return isfinite(err) && err <= (T)p[1] + FABS((T)p[0] * b);               \
    }
ISCLOSE_FN(isclose_f, float, fabsf)
ISCLOSE_FN(isclose_d, double, fabs)

CG_BINARY_LOOP(isclose_b, uint8_t, double, uint8_t, CG_LD_BOOL, CG_ST_BOOL, isclose_d(a, b, p))
CG_BINARY_LOOP(isclose_u8, uint8_t, double, uint8_t, CG_ID, CG_ST_BOOL, isclose_d(a, b, p))
CG_BINARY_LOOP(isclose_i8, int8_t, double, uint8_t, CG_ID, CG_ST_BOOL, isclose_d(a, b, p))
CG_BINARY_LOOP(isclose_i16, int16_t, double, uint8_t, CG_ID, CG_ST_BOOL, isclose_d(a, b, p))
CG_BINARY_LOOP(isclose_i32, int32_t, double, uint8_t, CG_ID, CG_ST_BOOL, isclose_d(a, b, p))
CG_BINARY_LOOP(isclose_i64, int64_t, double, uint8_t, CG_ID, CG_ST_BOOL, isclose_d(a, b, p))
CG_BINARY_LOOP(isclose_f32, float, float, uint8_t, CG_ID, CG_ST_BOOL, isclose_f(a, b, p))
CG_BINARY_LOOP(isclose_f64, double, double, uint8_t, CG_ID, CG_ST_BOOL, isclose_d(a, b, p))
CG_BINARY_LOOP(isclose_f16, cg_f16, float, uint8_t, CG_LD_F16, CG_ST_BOOL, isclose_f(a, b, p))
CG_BINARY_LOOP(isclose_bf16, cg_bf16, float, uint8_t, CG_LD_BF16, CG_ST_BOOL, isclose_f(a, b, p))
CG_BINARY_LOOP(isclose_u16, uint16_t, double, uint8_t, CG_ID, CG_ST_BOOL, isclose_d(a, b, p))
CG_BINARY_LOOP(isclose_u32, uint32_t, double, uint8_t, CG_ID, CG_ST_BOOL, isclose_d(a, b, p))
CG_BINARY_LOOP(isclose_u64, uint64_t, double, uint8_t, CG_ID, CG_ST_BOOL, isclose_d(a, b, p))

const cg_binary_op cg_op_isclose = {
    .schema = {"isclose", "IscloseBackward0", 1, CG_AMP_KEEP, false, false, false},
    .arity = 2, .out_dtype = CG_DTYPE_BOOL,
    .cpu = {CG_ALL_TABLE(isclose), CG_UINT_TABLE(isclose)},
    .backward = NULL,
};

cg_tensor *cg_isclose(cg_tensor *a, cg_tensor *b, double rtol, double atol, bool equal_nan) {
    CG_CHECK(rtol >= 0, CG_ERR_VALUE, "[isclose] rtol must be greater than or equal to zero, but got %g", rtol);
    CG_CHECK(atol >= 0, CG_ERR_VALUE, "[isclose] atol must be greater than or equal to zero, but got %g", atol);
    double p[3] = {rtol, atol, equal_nan ? 1.0 : 0.0};
    return cg_binary_forward(&cg_op_isclose, a, b, p, 3);
}
