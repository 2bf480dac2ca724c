/* compare.c — comparison ops (eq, ne, lt, le, gt, ge): every dtype in, bool
 * out, not differentiable. NaN compares unequal (IEEE), as in PyTorch. */
#include "../backend/cpu/loops.h"

#define COMPARE_OP(name, OPX, NODE)                                                                \
    CG_BINARY_PRED_LOOPS(name, (a OPX b))                                                           \
    const cg_binary_op cg_op_##name = {                                                            \
        .schema = {#name, NODE, 1, CG_AMP_KEEP, false, false, false},                              \
        .arity = 2, .out_dtype = CG_DTYPE_BOOL,                                                    \
        .cpu = {CG_ALL_TABLE(name)},                                                               \
        .backward = NULL,                                                                          \
    };                                                                                             \
    cg_tensor *cg_##name(cg_tensor *a, cg_tensor *b) { return cg_binary_forward(&cg_op_##name, a, b, NULL, 0); }

COMPARE_OP(eq, ==, "EqBackward0")
COMPARE_OP(ne, !=, "NeBackward0")
COMPARE_OP(lt, <, "LtBackward0")
COMPARE_OP(le, <=, "LeBackward0")
COMPARE_OP(gt, >, "GtBackward0")
COMPARE_OP(ge, >=, "GeBackward0")
