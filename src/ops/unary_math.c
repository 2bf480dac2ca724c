/* unary_math.c — unary math ops: descriptor, loops and backward formula of
 * each, side by side. */
#include "../backend/cpu/loops.h"

/* ---------------------------------------------------------------- neg */
CG_UNARY_FLOAT_LOOPS(neg, -x, -x)
CG_UNARY_INT_LOOPS(neg, -x)

static cg_status neg_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    (void)node;
    return (gin[0] = cg_neg(g[0])) ? CG_OK : cg_last_error();
}

const cg_unary_op cg_op_neg = {
    .schema = {"neg", "NegBackward0", 1, CG_AMP_KEEP, false, false, false},
    .arity = 1, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(neg), CG_INT_TABLE(neg)},
    .backward = neg_backward,
};
cg_tensor *cg_neg(cg_tensor *x) { return cg_unary_forward(&cg_op_neg, x, NULL, 0); }

/* ---------------------------------------------------------------- exp: d/dx = exp(x) = out */
CG_UNARY_FLOAT_LOOPS(exp, expf(x), exp(x))

static cg_status exp_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    cg_tensor *out = cg_node_saved(node, 0);
    if (!out) return cg_last_error();
    gin[0] = cg_mul(g[0], out);
    cg_tensor_release(out);
    return gin[0] ? CG_OK : cg_last_error();
}

const cg_unary_op cg_op_exp = {
    .schema = {"exp", "ExpBackward0", 1, CG_AMP_KEEP, false, false, true},
    .arity = 1, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(exp)},
    .backward = exp_backward,
};
cg_tensor *cg_exp(cg_tensor *x) { return cg_unary_forward(&cg_op_exp, x, NULL, 0); }

/* ---------------------------------------------------------------- isnan (-> bool) */
CG_UNARY_FLOAT_PRED_LOOPS(isnan, isnan(x), isnan(x))
CG_UNARY_LOOP(isnan_int, uint8_t, int, uint8_t, CG_ID, CG_ST_BOOL, 0 * x)
CG_UNARY_LOOP(isnan_i16, int16_t, int, uint8_t, CG_ID, CG_ST_BOOL, 0 * x)
CG_UNARY_LOOP(isnan_i32, int32_t, int, uint8_t, CG_ID, CG_ST_BOOL, 0 * x)
CG_UNARY_LOOP(isnan_i64, int64_t, int64_t, uint8_t, CG_ID, CG_ST_BOOL, 0 * x)

const cg_unary_op cg_op_isnan = {
    .schema = {"isnan", "IsnanBackward0", 1, CG_AMP_KEEP, false, false, false},
    .arity = 1, .out_dtype = CG_DTYPE_BOOL,
    .cpu = {CG_FLOAT_TABLE(isnan), [CG_DTYPE_BOOL] = isnan_int, [CG_DTYPE_U8] = isnan_int,
            [CG_DTYPE_I8] = isnan_int, [CG_DTYPE_I16] = isnan_i16, [CG_DTYPE_I32] = isnan_i32,
            [CG_DTYPE_I64] = isnan_i64},
    .backward = NULL,
};
cg_tensor *cg_isnan(cg_tensor *x) { return cg_unary_forward(&cg_op_isnan, x, NULL, 0); }
