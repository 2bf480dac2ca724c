/* op_registry.c — the named elementwise ops by name, for the public by-name
 * in-place entry points (cg_unary_, cg_binary_) and the internal finders. The
 * names, ids and descriptors come from the op table (elementwise_ops.gen.c:
 * cg_op_id_from_name, a binary search; cg_elementwise_ops, by id). */
#include "elementwise_ops.gen.h"

static const cg_elementwise_op *find(const char *name, int arity) {
    cg_op_id id = cg_op_id_from_name(name);
    const cg_elementwise_op *op = id != CG_OP_NONE ? cg_elementwise_ops[id] : NULL;
    return op && op->arity == arity ? op : NULL;
}
const cg_elementwise_op *cg_find_unary_op(const char *name) { return find(name, 1); }
const cg_elementwise_op *cg_find_binary_op(const char *name) { return find(name, 2); }

cg_status cg_unary_(const char *op_name, cg_tensor *self) {
    const cg_elementwise_op *op = find(op_name, 1);
    CG_CHECK_S(op, CG_ERR_VALUE, "[unary_] unknown unary op '%s'", op_name ? op_name : "(null)");
    return cg_elementwise_inplace(op, 1, &self, NULL, 0);
}

cg_status cg_binary_(const char *op_name, cg_tensor *self, cg_tensor *other) {
    const cg_elementwise_op *op = find(op_name, 2);
    CG_CHECK_S(op, CG_ERR_VALUE, "[binary_] unknown binary op '%s'", op_name ? op_name : "(null)");
    cg_tensor *in[2] = {self, other};
    return cg_elementwise_inplace(op, 2, in, NULL, 0);
}
