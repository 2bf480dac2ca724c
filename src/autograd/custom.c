/* custom.c — custom graph nodes for language bindings (Python's
 * autograd.Function): a node whose backward is a callback owning an opaque
 * context, with outputs, saved tensors and lazy (non-materialised) gradients.
 * Note [Custom nodes]: the node owns the context (freed with the node); the
 * context must not own the node, so the binding keeps only a borrowed pointer
 * that its ctx_free clears. Saved outputs go through cg_node_save, which keeps
 * history-free aliases, so saving an output creates no reference cycle. */
#include "autograd_internal.h"

#include <string.h>

typedef struct custom_extra {
    cg_custom_backward_fn backward;
    void *ctx;
    void (*ctx_free)(void *);
    char name[]; /* the node's name (node->name points here) */
} custom_extra;

static void custom_free(void *p) {
    custom_extra *e = p;
    if (e->ctx_free) e->ctx_free(e->ctx);
    free(e);
}

static cg_status custom_backward(cg_node *node, cg_tensor *const *gout, cg_tensor **gin) {
    custom_extra *e = node->extra;
    return e->backward(e->ctx, node, gout, gin);
}

cg_node *cg_custom_node_new(const char *name, int num_inputs, cg_tensor *const *inputs, int num_outputs,
                            int num_saved, cg_custom_backward_fn backward, void *ctx, void (*ctx_free)(void *)) {
    CG_CHECK(name && backward && num_inputs >= 0 && num_outputs >= 1 && num_saved >= 0, CG_ERR_VALUE,
             "[custom node] invalid arguments");
    size_t len = strlen(name);
    custom_extra *e = malloc(sizeof *e + len + 1);
    if (!e) {
        cg_set_error(CG_ERR_OOM, "[custom node] out of memory creating %s", name);
        return NULL;
    }
    memcpy(e->name, name, len + 1);
    e->backward = backward;
    e->ctx = NULL; /* set only on success: on failure the caller keeps ctx */
    e->ctx_free = NULL;
    cg_node *n = cg_node_new(e->name, custom_backward, NULL, num_inputs, inputs, num_outputs, num_saved);
    if (!n) {
        free(e);
        return NULL;
    }
    e->ctx = ctx;
    e->ctx_free = ctx_free;
    n->extra = e;
    n->extra_free = custom_free;
    return n;
}

static custom_extra *custom_of(const cg_node *node) {
    return node && node->extra_free == custom_free ? node->extra : NULL;
}

bool cg_node_is_custom(const cg_node *node) { return custom_of(node) != NULL; }

cg_status cg_custom_node_set_output(cg_node *node, int i, cg_tensor *t, bool differentiable) {
    CG_CHECK_S(custom_of(node) && t && i >= 0 && i < node->num_outputs, CG_ERR_VALUE,
               "[custom node] set_output: invalid node, tensor or index %d", i);
    if (!differentiable) {
        node->output_meta[i].ndim = t->ndim;
        node->output_meta[i].dtype = t->dtype;
        node->output_meta[i].device = t->device;
        memcpy(node->output_meta[i].shape, t->shape, (size_t)t->ndim * sizeof(int64_t));
        return CG_OK;
    }
    CG_CHECK_S(cg_dtype_is_floating(t->dtype), CG_ERR_DTYPE,
               "[%s] only floating point outputs can be differentiable (output %d is %s)", node->name, i,
               cg_dtype_name(t->dtype));
    cg_node_set_output(node, i, t);
    return CG_OK;
}

void cg_custom_node_set_materialize_grads(cg_node *node, bool materialize) {
    if (custom_of(node)) node->lazy_grads = !materialize;
}

cg_status cg_custom_node_save(cg_node *node, int slot, cg_tensor *t) {
    CG_CHECK_S(custom_of(node) && t && slot >= 0 && slot < node->num_saved, CG_ERR_VALUE,
               "[custom node] save: invalid node, tensor or slot %d", slot);
    bool is_output = t->grad_fn == node;
    return cg_node_save(node, slot, t, is_output, is_output ? t->output_nr : 0);
}

cg_tensor *cg_custom_node_saved(cg_node *node, int slot) {
    CG_CHECK(custom_of(node) && slot >= 0 && slot < node->num_saved, CG_ERR_VALUE,
             "[custom node] saved: invalid node or slot %d", slot);
    return cg_node_saved(node, slot);
}
