/* compare.c — isclose (every dtype in, bool out, not differentiable): a hand
 * row of the op table, whose loops are in src/backend/cpu/elementwise_hand.c.
 * The comparisons eq, ne, lt, le, gt, ge (NaN compares unequal, as in PyTorch)
 * are generated rows of the op table (src/ops/elementwise_ops.py). */
#include "elementwise_ops.gen.h"

/* ---------------------------------------------------------------- isclose
 * |a - b| <= atol + |rtol * b| (finite error only), or a == b (equal
 * infinities), or both NaN when equal_nan. params: {rtol, atol, equal_nan}. */
const cg_binary_op cg_op_isclose = {
    .id = CG_OP_ISCLOSE,
    .schema = {"isclose", "IscloseBackward0", 1, CG_AMP_KEEP, false, false, false},
    .arity = 2, .out_dtype = CG_DTYPE_BOOL,
    .dtypes = CG_OP_DTYPES_ISCLOSE,
    .backward = NULL,
};

cg_tensor *cg_isclose(cg_tensor *a, cg_tensor *b, double rtol, double atol, bool equal_nan) {
    CG_CHECK(rtol >= 0, CG_ERR_VALUE, "[isclose] rtol must be greater than or equal to zero, but got %g", rtol);
    CG_CHECK(atol >= 0, CG_ERR_VALUE, "[isclose] atol must be greater than or equal to zero, but got %g", atol);
    double p[3] = {rtol, atol, equal_nan ? 1.0 : 0.0};
    return cg_binary_forward(&cg_op_isclose, a, b, p, 3);
}
