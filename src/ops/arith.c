/* arith.c — arithmetic binary ops: add, sub, mul, div (descriptor, loops and
 * backward formula side by side), and their in-place forms. */
#include "../backend/cpu/loops.h"

/* ---------------------------------------------------------------- add */
CG_BINARY_FLOAT_LOOPS(add, a + b, a + b)
CG_BINARY_INT_LOOPS(add, a + b)
CG_BINARY_LOOP(add_b, uint8_t, int, uint8_t, CG_LD_BOOL, CG_ST_BOOL, a || b)

static cg_status add_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    for (int i = 0; i < 2; i++)
        if (cg_node_needs_grad(node, i)) {
            cg_tensor_retain(g[0]);
            gin[i] = g[0];
        }
    return CG_OK;
}

const cg_binary_op cg_op_add = {
    .schema = {"add", "AddBackward0", 1, CG_AMP_KEEP, false, false, false},
    .arity = 2, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(add), CG_INT_TABLE(add), [CG_DTYPE_BOOL] = add_b},
    .backward = add_backward,
};

/* ---------------------------------------------------------------- sub */
CG_BINARY_FLOAT_LOOPS(sub, a - b, a - b)
CG_BINARY_INT_LOOPS(sub, a - b)

static cg_status sub_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    if (cg_node_needs_grad(node, 0)) {
        cg_tensor_retain(g[0]);
        gin[0] = g[0];
    }
    if (cg_node_needs_grad(node, 1) && !(gin[1] = cg_neg(g[0]))) return cg_last_error();
    return CG_OK;
}

const cg_binary_op cg_op_sub = {
    .schema = {"sub", "SubBackward0", 1, CG_AMP_KEEP, false, false, false},
    .arity = 2, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(sub), CG_INT_TABLE(sub)},
    .backward = sub_backward,
};

/* ---------------------------------------------------------------- mul */
CG_BINARY_FLOAT_LOOPS(mul, a * b, a * b)
CG_BINARY_INT_LOOPS(mul, a * b)
CG_BINARY_LOOP(mul_b, uint8_t, int, uint8_t, CG_LD_BOOL, CG_ST_BOOL, a && b)

static cg_status mul_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    for (int i = 0; i < 2; i++) {
        if (!cg_node_needs_grad(node, i)) continue;
        cg_tensor *other = cg_node_saved(node, 1 - i);
        if (!other) return cg_last_error();
        gin[i] = cg_mul(g[0], other);
        cg_tensor_release(other);
        if (!gin[i]) return cg_last_error();
    }
    return CG_OK;
}

const cg_binary_op cg_op_mul = {
    .schema = {"mul", "MulBackward0", 1, CG_AMP_KEEP, false, true, false},
    .arity = 2, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(mul), CG_INT_TABLE(mul), [CG_DTYPE_BOOL] = mul_b},
    .backward = mul_backward,
};

/* ---------------------------------------------------------------- div (true division) */
CG_BINARY_FLOAT_LOOPS(div, a / b, a / b)

/* ga = g / b ; gb = -g * a / b^2 = -(ga * a) / b */
static cg_status div_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    cg_tensor *a = cg_node_saved(node, 0), *b = cg_node_saved(node, 1);
    cg_status st = CG_OK;
    cg_tensor *ga = NULL, *t = NULL, *u = NULL;
    if (!a || !b) { st = cg_last_error(); goto done; }
    ga = cg_div(g[0], b);
    if (!ga) { st = cg_last_error(); goto done; }
    if (cg_node_needs_grad(node, 1)) {
        t = cg_mul(ga, a);
        u = t ? cg_div(t, b) : NULL;
        gin[1] = u ? cg_neg(u) : NULL;
        if (!gin[1]) { st = cg_last_error(); goto done; }
    }
    if (cg_node_needs_grad(node, 0)) {
        gin[0] = ga;
        ga = NULL;
    }
done:
    cg_tensor_release(a);
    cg_tensor_release(b);
    cg_tensor_release(ga);
    cg_tensor_release(t);
    cg_tensor_release(u);
    return st;
}

const cg_binary_op cg_op_div = {
    .schema = {"div", "DivBackward0", 1, CG_AMP_KEEP, false, true, false},
    .arity = 2, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(div)},
    .backward = div_backward,
};

/* ---------------------------------------------------------------- entry points */
cg_tensor *cg_add(cg_tensor *a, cg_tensor *b) { return cg_binary_forward(&cg_op_add, a, b, NULL, 0); }
cg_tensor *cg_sub(cg_tensor *a, cg_tensor *b) { return cg_binary_forward(&cg_op_sub, a, b, NULL, 0); }
cg_tensor *cg_mul(cg_tensor *a, cg_tensor *b) { return cg_binary_forward(&cg_op_mul, a, b, NULL, 0); }
cg_tensor *cg_div(cg_tensor *a, cg_tensor *b) { return cg_binary_forward(&cg_op_div, a, b, NULL, 0); }

static cg_status inplace2(const cg_binary_op *op, cg_tensor *self, cg_tensor *other) {
    cg_tensor *in[2] = {self, other};
    return cg_elementwise_inplace(op, 2, in, NULL, 0);
}
cg_status cg_add_(cg_tensor *self, cg_tensor *other) { return inplace2(&cg_op_add, self, other); }
cg_status cg_sub_(cg_tensor *self, cg_tensor *other) { return inplace2(&cg_op_sub, self, other); }
cg_status cg_mul_(cg_tensor *self, cg_tensor *other) { return inplace2(&cg_op_mul, self, other); }
cg_status cg_div_(cg_tensor *self, cg_tensor *other) { return inplace2(&cg_op_div, self, other); }
