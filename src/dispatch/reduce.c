/* reduce.c — the reduction driver: validation, output shape (keepdim),
 * a layout where the reduced dims form one strided run (a contiguous copy
 * only when they cannot), the reduction plan handed to the backend
 * (run_reduce), and graph wiring; plus reduce_to_shape and the
 * gradient-expansion helpers. */
#include "dispatch_internal.h"

/* Note [Chunked reductions] (src/backend/cpu/reduce_run.c): one large output
 * is reduced in fixed chunks, the same for every thread count.
 *
 * Note [Column reductions]: when consecutive outputs read consecutive input
 * elements and the reduced run is strided (a sum over dim 0 of a matrix: every
 * Linear bias gradient), folding each output's run alone walks memory with a
 * large stride per element. An op's `cols` loop instead folds whole rows into
 * a block of accumulators, column by column in row order: the same operations
 * in the same order per output as the strided loop, so the result is
 * identical, and the work still splits across outputs. */

static cg_status reduce_forward(const cg_reduce_op *op, cg_tensor *x, uint32_t mask, bool keepdim, const double *params,
                                int np, int out_dtype, cg_tensor **out, cg_tensor **indices) {
    const char *name = op->schema.name;
    *out = NULL;
    if (indices) *indices = NULL;
    CG_CHECK_S(x, CG_ERR_VALUE, "[%s] argument 0 is NULL", name);
    cg_tensor *xs;
    bool owned;
    if (cg_schema_guard(&op->schema, 1, &x, &xs, &owned)) return cg_last_error();
    cg_tensor *src = xs;
    cg_status st = CG_OK;
    cg_dtype odt = out_dtype >= 0 ? (cg_dtype)out_dtype
                   : op->out_dtype == CG_SAME_DTYPE ? src->dtype : (cg_dtype)op->out_dtype;
    int nd = src->ndim;
    int64_t oshape[CG_MAX_DIMS], kshape[CG_MAX_DIMS], kstr[CG_MAX_DIMS], rshape[CG_MAX_DIMS], rstr[CG_MAX_DIMS];
    int on = 0, kn = 0, rn = 0;
    int64_t R = 1;
    cg_tensor *xc = NULL, *xk = NULL, *o = NULL, *ix = NULL, *ok = NULL, *ixk = NULL;
    if (!(cg_reduce_dtypes(op->kind) & CG_DTYPE_BIT(src->dtype))) {
        st = cg_dtype_unsupported(name, src->dtype);
        goto done;
    }
    for (int d = 0; d < nd; d++) {
        if (mask & (1u << d)) {
            R *= src->shape[d];
            if (keepdim) oshape[on++] = 1;
            rshape[rn] = src->shape[d];
            rstr[rn++] = src->strides[d];
        } else {
            oshape[on++] = src->shape[d];
            kshape[kn] = src->shape[d];
            kstr[kn++] = src->strides[d];
        }
    }
    if (R == 0 && op->empty_error && cg_shape_numel(kn, kshape) != 0) {
        st = cg_set_error(CG_ERR_INDEX, "[%s] cannot reduce over a zero-size dimension (the operation has no identity)", name);
        goto done;
    }
    /* collapse the reduced dims into one strided run, or copy them into one */
    int64_t rstride = 0;
    {
        int64_t expect = -1;
        bool single = true;
        for (int i = rn - 1; i >= 0; i--) {
            if (rshape[i] == 1) continue;
            if (expect < 0) {
                rstride = rstr[i];
                expect = rstr[i] * rshape[i];
            } else if (rstr[i] != expect) {
                single = false;
                break;
            } else {
                expect *= rshape[i];
            }
        }
        if (!single) {
            int64_t perm[CG_MAX_DIMS];
            int p = 0;
            for (int d = 0; d < nd; d++) if (!(mask & (1u << d))) perm[p++] = d;
            for (int d = 0; d < nd; d++) if (mask & (1u << d)) perm[p++] = d;
            bool prev = cg_set_grad_enabled(false);
            cg_tensor *pv = cg_permute(src, perm);
            xc = pv ? cg_contiguous(pv) : NULL;
            cg_tensor_release(pv);
            cg_set_grad_enabled(prev);
            if (!xc) { st = cg_last_error(); goto done; }
            src = xc;
            rstride = 1;
            for (int i = 0; i < kn; i++) kstr[i] = xc->strides[i];
        }
    }
    rstride *= (int64_t)cg_dtype_size(src->dtype);
    const cg_backend *be = cg_backend_of(src->device);
    if (!be->run_reduce) {
        st = cg_kernel_missing(name, src->device);
        goto done;
    }
    o = cg_tensor_new(name, on, oshape, odt, src->device);
    if (!o) { st = cg_last_error(); goto done; }
    if (op->has_indices) {
        ix = cg_tensor_new(name, on, oshape, CG_DTYPE_I64, src->device);
        if (!ix) { st = cg_last_error(); goto done; }
    }
    xk = cg_tensor_view_of(src, kn, kshape, kstr, src->offset);
    ok = cg_tensor_view_of(o, kn, kshape, NULL, 0);
    if (ix) ixk = cg_tensor_view_of(ix, kn, kshape, NULL, 0);
    if (!xk || !ok || (ix && !ixk)) { st = cg_last_error(); goto done; }
    {
        cg_reduce_plan plan; /* field by field: an initializer would zero the whole iterator first */
        plan.n = R, plan.stride = rstride, plan.in_dtype = src->dtype, plan.out_dtype = odt;
        plan.has_idx = ix != NULL, plan.chunked = op->chunked, plan.kind = op->kind, plan.params = params;
        plan.nparams = np;
        cg_tensor *args[3] = {ok, ix ? ixk : xk, xk};
        cg_iter_init(&plan.iter, ix ? 3 : 2, args, kn, kshape);
        st = be->run_reduce(src->device, &plan);
        if (st) {
            st = cg_backend_failed(name, src->device, src->dtype, st);
            goto done;
        }
    }
    if (op->backward && cg_dtype_is_floating(odt) && cg_any_requires_grad(1, &xs)) {
        int nsaved = (op->schema.saves_inputs ? 1 : 0) + (op->schema.saves_output ? 1 : 0) + (op->has_indices ? 1 : 0);
        cg_node *node = cg_node_new(op->schema.node_name, op->backward, op, 1, &xs, 1, nsaved);
        if (!node) { st = cg_last_error(); goto done; }
        cg_node_set_output(node, 0, o);
        cg_node_release(node);
        node->iattr[0] = mask;
        node->iattr[1] = keepdim;
        for (int i = 0; i < np && i < CG_NODE_DATTRS; i++) node->dattr[i] = params[i];
        int slot = 0;
        if (op->schema.saves_inputs) st = cg_node_save(node, slot++, xs, false, 0);
        if (!st && op->schema.saves_output) st = cg_node_save(node, slot++, o, true, 0);
        if (!st && op->has_indices) st = cg_node_save(node, slot++, ix, false, 0);
        if (st) goto done;
    }
done:
    cg_tensor_release(xc);
    cg_tensor_release(xk);
    cg_tensor_release(ok);
    cg_tensor_release(ixk);
    if (owned) cg_tensor_release(xs);
    if (st) {
        cg_tensor_release(o);
        cg_tensor_release(ix);
        return st;
    }
    *out = o;
    if (indices) *indices = ix;
    else cg_tensor_release(ix);
    return CG_OK;
}

/* the call recorded as a profiler event (off the hot path) */
static CG_PROF_COLD cg_status reduce_forward_profiled(const cg_reduce_op *op, cg_tensor *x, uint32_t mask, bool keepdim,
                                                      const double *params, int np, int out_dtype, cg_tensor **out,
                                                      cg_tensor **indices) {
    int64_t ev = cg_prof_begin(op->schema.name, CG_PROF_OP, 1, &x);
    cg_status st = reduce_forward(op, x, mask, keepdim, params, np, out_dtype, out, indices);
    cg_prof_end(ev, *out);
    return st;
}
cg_status cg_reduce_forward(const cg_reduce_op *op, cg_tensor *x, uint32_t mask, bool keepdim, const double *params,
                            int np, int out_dtype, cg_tensor **out, cg_tensor **indices) {
    if (cg_prof_active()) return reduce_forward_profiled(op, x, mask, keepdim, params, np, out_dtype, out, indices);
    return reduce_forward(op, x, mask, keepdim, params, np, out_dtype, out, indices);
}

cg_tensor *cg_reduce_unsqueeze(cg_node *node, cg_tensor *t) {
    const cg_tensor_meta *m = &node->input_meta[0];
    uint32_t mask = (uint32_t)node->iattr[0];
    int64_t shape[CG_MAX_DIMS];
    for (int d = 0; d < m->ndim; d++) shape[d] = (mask & (1u << d)) ? 1 : m->shape[d];
    return cg_reshape(t, m->ndim, shape);
}

cg_tensor *cg_reduce_grad_expand(cg_node *node, cg_tensor *g) {
    const cg_tensor_meta *m = &node->input_meta[0];
    cg_tensor *u = cg_reduce_unsqueeze(node, g);
    if (!u) return NULL;
    cg_tensor *e = cg_expand(u, m->ndim, m->shape);
    cg_tensor_release(u);
    return e;
}

/* Note [reduce_to_shape]: a gradient of a broadcast input is summed over the
 * leading broadcast dims and over dims where the input had size 1, then
 * reshaped to the input's shape exactly. Written with cg ops, so it is
 * differentiable for higher-order gradients. */
cg_tensor *cg_reduce_to_shape(cg_tensor *grad, int ndim, const int64_t *shape) {
    if (cg_shape_eq(grad->ndim, grad->shape, ndim, shape)) {
        cg_tensor_retain(grad);
        return grad;
    }
    int lead = grad->ndim - ndim;
    CG_CHECK(lead >= 0, CG_ERR_SHAPE, "[reduce_to_shape] gradient rank %d is below the target rank %d", grad->ndim, ndim);
    int64_t dims[CG_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < grad->ndim; d++)
        if (d < lead || (shape[d - lead] == 1 && grad->shape[d] != 1)) dims[nd++] = d;
    if (nd == 0) return cg_reshape(grad, ndim, shape);
    cg_tensor *s = cg_sum(grad, nd, dims, true);
    if (!s) return NULL;
    cg_tensor *r = cg_reshape(s, ndim, shape);
    cg_tensor_release(s);
    return r;
}
