/* inplace.c — committing the result of an in-place op to autograd
 * (Note [In-place]): the data goes into self's storage; self takes the
 * result's history, or, when self is a view, its base gets a CopySlices node
 * so gradients reach both the untouched part of the base and the new values. */
#include "autograd_internal.h"

#include <string.h>

/* iattr layout: [0] ndim, [1] offset relative to the base, [2..] shape, [2+MAX..] strides */
static cg_tensor *region_of(cg_tensor *t, const cg_node *node) {
    int nd = (int)node->iattr[0];
    return cg_as_strided(t, nd, &node->iattr[2], &node->iattr[2 + CG_MAX_DIMS], t->offset + node->iattr[1]);
}

/* base_out gradient g -> (old base: g with the written region zeroed, result: g[region]) */
static cg_status copyslices_backward(cg_node *node, cg_tensor *const *gout, cg_tensor **gin) {
    cg_status st = CG_OK;
    cg_tensor *g = cg_contiguous(gout[0]);
    if (!g) return cg_last_error();
    if (cg_node_needs_grad(node, 0)) {
        const cg_tensor_meta *m = &node->output_meta[0];
        bool prev = cg_set_grad_enabled(false);
        cg_tensor *mask = cg_ones(m->ndim, m->shape, g->dtype, g->device);
        cg_tensor *region = mask ? region_of(mask, node) : NULL;
        if (!region || cg_fill_(region, 0.0)) st = cg_last_error();
        cg_tensor_release(region);
        cg_set_grad_enabled(prev);
        if (!st && !(gin[0] = cg_mul(g, mask))) st = cg_last_error();
        cg_tensor_release(mask);
    }
    if (!st && cg_node_needs_grad(node, 1)) {
        cg_tensor *r = region_of(g, node);
        if (!r) st = cg_last_error();
        else {
            gin[1] = cg_contiguous(r);
            cg_tensor_release(r);
            if (!gin[1]) st = cg_last_error();
        }
    }
    cg_tensor_release(g);
    return st;
}

cg_status cg_inplace_commit(const char *op, cg_tensor *self, cg_tensor *result) {
    bool prev = cg_set_grad_enabled(false);
    cg_status st = cg_copy_(self, result);
    cg_set_grad_enabled(prev);
    if (st || !cg_is_grad_enabled()) return st;
    cg_tensor *base = self->base;
    if (!base) {
        if (result->requires_grad) {
            cg_tensor_set_history(self, result->grad_fn, result->output_nr);
        } else if (self->grad_fn) {
            cg_tensor_set_history(self, NULL, 0);
            self->requires_grad = false;
        }
        return CG_OK;
    }
    if (!result->requires_grad && !base->requires_grad) return CG_OK;
    if (!cg_tensor_is_contiguous(base))
        return cg_set_error(CG_ERR_NOT_IMPLEMENTED,
                            "[%s_] in-place modification of a view of a non-contiguous tensor while recording autograd "
                            "history is not supported; use the out-of-place op", op);
    cg_tensor *in[2] = {base, result};
    cg_node *node = cg_node_new("CopySlices", copyslices_backward, NULL, 2, in, 1, 0);
    if (!node) return cg_last_error();
    node->iattr[0] = self->ndim;
    node->iattr[1] = self->offset - base->offset;
    memcpy(&node->iattr[2], self->shape, sizeof(int64_t) * (size_t)self->ndim);
    memcpy(&node->iattr[2 + CG_MAX_DIMS], self->strides, sizeof(int64_t) * (size_t)self->ndim);
    cg_node_set_output(node, 0, base);
    cg_node_release(node);
    /* self is now a view of the new base: its history goes through it */
    cg_tensor *v = cg_as_strided(base, self->ndim, self->shape, self->strides, self->offset);
    if (!v) return cg_last_error();
    cg_tensor_set_history(self, v->grad_fn, 0);
    cg_tensor_release(v);
    return CG_OK;
}
