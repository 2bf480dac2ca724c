/* logic.c — logical ops (and/or/xor/not: any dtype, nonzero is true, bool
 * out), bitwise ops (and/or/xor/not on integers and bool, left/right shifts
 * on integers) and the float predicates isinf / isfinite. None is
 * differentiable. */
#include "../dispatch/dispatch_internal.h"
#include "../backend/cpu/loops.h"

/* unary loops for every dtype -> bool; bool loads as 0/1 */
#define UNARY_PRED_ALL_LOOPS(name, EXPR_INT, EXPR_F, EXPR_D)                                    \
    CG_UNARY_LOOP(name##_b, uint8_t, int, uint8_t, CG_LD_BOOL, CG_ST_BOOL, EXPR_INT)              \
    CG_UNARY_LOOP(name##_u8, uint8_t, int64_t, uint8_t, CG_ID, CG_ST_BOOL, EXPR_INT)              \
    CG_UNARY_LOOP(name##_i8, int8_t, int64_t, uint8_t, CG_ID, CG_ST_BOOL, EXPR_INT)               \
    CG_UNARY_LOOP(name##_i16, int16_t, int64_t, uint8_t, CG_ID, CG_ST_BOOL, EXPR_INT)             \
    CG_UNARY_LOOP(name##_i32, int32_t, int64_t, uint8_t, CG_ID, CG_ST_BOOL, EXPR_INT)             \
    CG_UNARY_LOOP(name##_i64, int64_t, int64_t, uint8_t, CG_ID, CG_ST_BOOL, EXPR_INT)             \
    CG_UNARY_FLOAT_PRED_LOOPS(name, EXPR_F, EXPR_D)

/* UINT: the table entries of the barebones unsigned dtypes, where PyTorch has them */
#define PRED_OP(name, NODE, UINT)                                                                  \
    const cg_unary_op cg_op_##name = {                                                             \
        .schema = {#name, NODE, 1, CG_AMP_KEEP, false, false, false},                              \
        .arity = 1, .out_dtype = CG_DTYPE_BOOL,                                                    \
        .cpu = {CG_ALL_TABLE(name), UINT},                                                         \
        .backward = NULL,                                                                          \
    };                                                                                             \
    cg_tensor *cg_##name(cg_tensor *x) { return cg_unary_forward(&cg_op_##name, x, NULL, 0); }

/* ---------------------------------------------------------------- logical_and / or / xor / not */
#define LOGICAL_OP(name, EXPR, NODE)                                                               \
    CG_BINARY_PRED_LOOPS(name, EXPR)                                                               \
    const cg_binary_op cg_op_##name = {                                                            \
        .schema = {#name, NODE, 1, CG_AMP_KEEP, false, false, false},                              \
        .arity = 2, .out_dtype = CG_DTYPE_BOOL,                                                    \
        .cpu = {CG_ALL_TABLE(name)},                                                               \
        .backward = NULL,                                                                          \
    };                                                                                             \
    cg_tensor *cg_##name(cg_tensor *a, cg_tensor *b) { return cg_binary_forward(&cg_op_##name, a, b, NULL, 0); }

LOGICAL_OP(logical_and, (a != 0) && (b != 0), "LogicalAndBackward0")
LOGICAL_OP(logical_or, (a != 0) || (b != 0), "LogicalOrBackward0")
LOGICAL_OP(logical_xor, (a != 0) != (b != 0), "LogicalXorBackward0")

UNARY_PRED_ALL_LOOPS(logical_not, x == 0, x == 0, x == 0)
PRED_OP(logical_not, "LogicalNotBackward0", )

/* ---------------------------------------------------------------- isinf / isfinite (integers are finite) */
UNARY_PRED_ALL_LOOPS(isinf, 0 * x, isinf(x), isinf(x))
#define UINT_PRED_LOOPS(name, EXPR)                                                  \
    CG_UNARY_LOOP(name##_u16, uint16_t, int64_t, uint8_t, CG_ID, CG_ST_BOOL, EXPR)  \
    CG_UNARY_LOOP(name##_u32, uint32_t, int64_t, uint8_t, CG_ID, CG_ST_BOOL, EXPR)  \
    CG_UNARY_LOOP(name##_u64, uint64_t, int64_t, uint8_t, CG_ID, CG_ST_BOOL, EXPR)
UINT_PRED_LOOPS(isinf, 0 * x)
PRED_OP(isinf, "IsinfBackward0", CG_UINT_TABLE(isinf))
UNARY_PRED_ALL_LOOPS(isfinite, 1 + 0 * x, isfinite(x), isfinite(x))
UINT_PRED_LOOPS(isfinite, 1 + 0 * x)
PRED_OP(isfinite, "IsfiniteBackward0", CG_UINT_TABLE(isfinite))

/* ---------------------------------------------------------------- bitwise and / or / xor / not */
#define BITWISE_OP(name, OPX, NODE)                                                                \
    CG_BINARY_INT_LOOPS(name, a OPX b)                                                             \
    CG_BINARY_UINT_LOOPS(name, a OPX b)                                                            \
    CG_BINARY_LOOP(name##_b, uint8_t, int, uint8_t, CG_LD_BOOL, CG_ST_BOOL, a OPX b)               \
    const cg_binary_op cg_op_##name = {                                                            \
        .schema = {#name, NODE, 1, CG_AMP_KEEP, false, false, false},                              \
        .arity = 2, .out_dtype = CG_SAME_DTYPE,                                                    \
        .cpu = {CG_INT_TABLE(name), [CG_DTYPE_BOOL] = name##_b, CG_UINT_TABLE(name)},              \
        .backward = NULL,                                                                          \
    };                                                                                             \
    cg_tensor *cg_##name(cg_tensor *a, cg_tensor *b) { return cg_binary_forward(&cg_op_##name, a, b, NULL, 0); }

BITWISE_OP(bitwise_and, &, "BitwiseAndBackward0")
BITWISE_OP(bitwise_or, |, "BitwiseOrBackward0")
BITWISE_OP(bitwise_xor, ^, "BitwiseXorBackward0")

CG_UNARY_INT_LOOPS(bitwise_not, ~x)
CG_UNARY_LOOP(bitwise_not_b, uint8_t, int, uint8_t, CG_LD_BOOL, CG_ST_BOOL, !x)

const cg_unary_op cg_op_bitwise_not = {
    .schema = {"bitwise_not", "BitwiseNotBackward0", 1, CG_AMP_KEEP, false, false, false},
    .arity = 1, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_INT_TABLE(bitwise_not), [CG_DTYPE_BOOL] = bitwise_not_b},
    .backward = NULL,
};
cg_tensor *cg_bitwise_not(cg_tensor *x) { return cg_unary_forward(&cg_op_bitwise_not, x, NULL, 0); }

/* ---------------------------------------------------------------- shifts
 * PyTorch's results without C UB: a shift amount that is negative or >= the
 * width gives 0 for <<, and for >> the value shifted by (width - 1) for
 * signed types (the sign fill) or 0 for unsigned ones. Computed in int64 on
 * the value of the fixed-width input (the store narrows with wrap-around). */
static inline int64_t shl(int64_t a, int64_t b, int bits) {
    if (b < 0 || b >= bits) return 0;
    return (int64_t)((uint64_t)a << b);
}
static inline int64_t shr(int64_t a, int64_t b, int bits, int is_signed) {
    int max_shift = bits - is_signed;
    if (b < 0 || b >= max_shift) return a >> max_shift;
    return a >> b;
}

#define SHIFT_LOOPS(name, EXPR_OF)                                                                          \
    CG_BINARY_LOOP(name##_u8, uint8_t, int64_t, uint8_t, CG_ID, CG_ID, EXPR_OF(8, 0))                   \
    CG_BINARY_LOOP(name##_i8, int8_t, int64_t, int8_t, CG_ID, CG_ID, EXPR_OF(8, 1))                     \
    CG_BINARY_LOOP(name##_i16, int16_t, int64_t, int16_t, CG_ID, CG_ID, EXPR_OF(16, 1))                 \
    CG_BINARY_LOOP(name##_i32, int32_t, int64_t, int32_t, CG_ID, CG_ID, EXPR_OF(32, 1))                 \
    CG_BINARY_LOOP(name##_i64, int64_t, int64_t, int64_t, CG_ID, CG_ID, EXPR_OF(64, 1))
#define SHL_EXPR(bits, sgn) shl(a, b, bits)
#define SHR_EXPR(bits, sgn) shr(a, b, bits, sgn)
SHIFT_LOOPS(bitwise_left_shift, SHL_EXPR)
SHIFT_LOOPS(bitwise_right_shift, SHR_EXPR)

const cg_binary_op cg_op_bitwise_left_shift = {
    .schema = {"bitwise_left_shift", "BitwiseLeftShiftBackward0", 1, CG_AMP_KEEP, false, false, false},
    .arity = 2, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_INT_TABLE(bitwise_left_shift)},
    .backward = NULL,
};
const cg_binary_op cg_op_bitwise_right_shift = {
    .schema = {"bitwise_right_shift", "BitwiseRightShiftBackward0", 1, CG_AMP_KEEP, false, false, false},
    .arity = 2, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_INT_TABLE(bitwise_right_shift)},
    .backward = NULL,
};
cg_tensor *cg_bitwise_left_shift(cg_tensor *a, cg_tensor *b) {
    return cg_binary_forward(&cg_op_bitwise_left_shift, a, b, NULL, 0);
}
cg_tensor *cg_bitwise_right_shift(cg_tensor *a, cg_tensor *b) {
    return cg_binary_forward(&cg_op_bitwise_right_shift, a, b, NULL, 0);
}
