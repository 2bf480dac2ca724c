/* op_registry.c — lookup of elementwise op descriptors by name, generated
 * from the op lists (unary_ops.def, binary_ops.def), for the generic in-place
 * entry points and the Python binding. */
#include "../dispatch/dispatch_internal.h"

#include <string.h>

#define CG_OP(name) extern const cg_elementwise_op cg_op_##name;
#include "unary_ops.def"
#include "binary_ops.def"
#undef CG_OP

typedef struct { const char *name; const cg_elementwise_op *op; } op_entry;

#define CG_OP(name) {#name, &cg_op_##name},
static const op_entry k_unary[] = {
#include "unary_ops.def"
    {NULL, NULL}};
static const op_entry k_binary[] = {
#include "binary_ops.def"
    {NULL, NULL}};
#undef CG_OP

static const cg_elementwise_op *find(const op_entry *t, const char *name) {
    for (; name && t->name; t++)
        if (strcmp(t->name, name) == 0) return t->op;
    return NULL;
}
const cg_elementwise_op *cg_find_unary_op(const char *name) { return find(k_unary, name); }
const cg_elementwise_op *cg_find_binary_op(const char *name) { return find(k_binary, name); }

cg_status cg_unary_(const char *op_name, cg_tensor *self) {
    const cg_elementwise_op *op = find(k_unary, op_name);
    CG_CHECK_S(op, CG_ERR_VALUE, "[unary_] unknown unary op '%s'", op_name ? op_name : "(null)");
    return cg_elementwise_inplace(op, 1, &self, NULL, 0);
}

cg_status cg_binary_(const char *op_name, cg_tensor *self, cg_tensor *other) {
    const cg_elementwise_op *op = find(k_binary, op_name);
    CG_CHECK_S(op, CG_ERR_VALUE, "[binary_] unknown binary op '%s'", op_name ? op_name : "(null)");
    cg_tensor *in[2] = {self, other};
    return cg_elementwise_inplace(op, 2, in, NULL, 0);
}
