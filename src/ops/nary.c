/* nary.c — fixed-arity (>= 3) elementwise ops through the n-ary driver:
 * where(cond, a, b). */
#include "../backend/cpu/loops.h"

#include <string.h>

/* ---------------------------------------------------------------- where */
#define WHERE_LOOP(name, T)                                                                    \
    static void name(char **args, const int64_t *s, int64_t n, const void *p) {                \
        (void)p;                                                                               \
        if (s[0] == (int64_t)sizeof(T) && s[1] == 1 && s[2] == (int64_t)sizeof(T) && s[3] == (int64_t)sizeof(T)) { \
            T *o = (T *)args[0];                                                               \
            const uint8_t *c = (const uint8_t *)args[1];                                       \
            const T *a = (const T *)args[2], *b = (const T *)args[3];                          \
            for (int64_t k = 0; k < n; k++) o[k] = c[k] ? a[k] : b[k];                         \
            return;                                                                            \
        }                                                                                      \
        for (int64_t k = 0; k < n; k++)                                                        \
            *(T *)(args[0] + k * s[0]) = *(const uint8_t *)(args[1] + k * s[1])                \
                                             ? *(const T *)(args[2] + k * s[2])                \
                                             : *(const T *)(args[3] + k * s[3]);               \
    }
WHERE_LOOP(where_1, uint8_t)
WHERE_LOOP(where_2, uint16_t)
WHERE_LOOP(where_4, uint32_t)
WHERE_LOOP(where_8, uint64_t)

/* ga = where(cond, g, 0); gb = where(cond, 0, g) */
static cg_status where_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    cg_tensor *cond = cg_node_saved(node, 0);
    if (!cond) return cg_last_error();
    cg_tensor *zero = cg_scalar_on(0.0, g[0]->dtype, g[0]->device);
    cg_status st = CG_OK;
    if (!zero) st = cg_last_error();
    if (!st && cg_node_needs_grad(node, 1) && !(gin[1] = cg_where(cond, g[0], zero))) st = cg_last_error();
    if (!st && cg_node_needs_grad(node, 2) && !(gin[2] = cg_where(cond, zero, g[0]))) st = cg_last_error();
    cg_tensor_release(zero);
    cg_tensor_release(cond);
    return st;
}

const cg_nary_op cg_op_where = {
    .schema = {"where", "WhereBackward0", 1, CG_AMP_KEEP, false, true, false},
    .arity = 3, .bool_inputs = 1u, .out_dtype = CG_SAME_DTYPE,
    .cpu = {[CG_DTYPE_BOOL] = where_1, [CG_DTYPE_U8] = where_1, [CG_DTYPE_I8] = where_1,
            [CG_DTYPE_I16] = where_2, [CG_DTYPE_F16] = where_2, [CG_DTYPE_BF16] = where_2,
            [CG_DTYPE_I32] = where_4, [CG_DTYPE_F32] = where_4, [CG_DTYPE_I64] = where_8, [CG_DTYPE_F64] = where_8},
    .backward = where_backward,
};

cg_tensor *cg_where(cg_tensor *cond, cg_tensor *a, cg_tensor *b) {
    cg_tensor *in[3] = {cond, a, b};
    return cg_nary_forward(&cg_op_where, 3, in, NULL, 0);
}
