/* softmax.c — softmax and log_softmax along one dim. The forward is one fused,
 * numerically stable kernel per device (the `softmax` entry, Note [Kernel
 * entries]; the CPU's is src/backend/cpu/softmax.c); the backward formulas are
 *   softmax:     gx = y * (g - sum(g * y, dim, keepdim))
 *   log_softmax: gx = g - exp(y) * sum(g, dim, keepdim)
 * on the saved output: one fused kernel for a first-order backward, cg ops
 * under create_graph so that both are differentiable again. */
#include "unary_internal.h"

/* gx from g and the saved output y (same shape and dtype); new reference */
static cg_tensor *sm_backward_fused(cg_tensor *g, cg_tensor *y, int64_t dim, bool log) {
    const char *name = log ? "log_softmax_backward" : "softmax_backward";
    cg_tensor *gc = cg_contiguous(g), *yc = gc ? cg_contiguous(y) : NULL;
    cg_tensor *gx = yc ? cg_tensor_new(name, y->ndim, y->shape, y->dtype, y->device) : NULL;
    if (gx) {
        cg_status st;
        CG_RUN_KERNEL(st, name, gx->device, softmax_backward, gx, gc, yc, dim, log);
        if (st) cg_tensor_release(gx), gx = NULL;
    }
    cg_tensor_release(gc);
    cg_tensor_release(yc);
    return gx;
}

/* the composite formulas (create_graph), or the fused kernel (first order) */
static cg_status sm_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin, bool log) {
    if (!cg_node_needs_grad(node, 0)) return CG_OK;
    cg_tensor *y = cg_node_saved(node, 0);
    if (!y) return cg_last_error();
    int64_t dim = node->iattr[0];
    cg_tensor *r;
    if (!cg_is_grad_enabled() && g[0]->dtype == y->dtype &&
        cg_shape_eq(g[0]->ndim, g[0]->shape, y->ndim, y->shape)) {
        r = sm_backward_fused(g[0], y, dim, log);
    } else {
        cg_tmp arena = {.n = 0}, *A_ = &arena;
        r = log ? SUB(g[0], MUL(TK(cg_exp(y)), TK(cg_sum(g[0], 1, &dim, true))))
                : MUL(y, SUB(g[0], TK(cg_sum(MUL(g[0], y), 1, &dim, true))));
        if (r) cg_tensor_retain(r);
        cg_tmp_free(&arena);
    }
    gin[0] = r;
    cg_tensor_release(y);
    return r ? CG_OK : cg_last_error();
}
static cg_status softmax_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    return sm_backward(node, g, gin, false);
}
static cg_status log_softmax_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    return sm_backward(node, g, gin, true);
}

static const cg_op_schema k_softmax = {"softmax", "SoftmaxBackward0", 1, CG_AMP_KEEP, false, false, true};
static const cg_op_schema k_log_softmax = {"log_softmax", "LogSoftmaxBackward0", 1, CG_AMP_KEEP, false, false, true};

static cg_tensor *softmax_body(const cg_op_schema *sc, cg_backward_fn bw, cg_tensor *x, int64_t dim) {
    const char *name = sc->name;
    CG_CHECK(x, CG_ERR_VALUE, "[%s] argument is NULL", name);
    int64_t d;
    if (cg_wrap_dim(name, dim, x->ndim, &d)) return NULL;
    if (!cg_dtype_is_floating(x->dtype)) {
        cg_dtype_unsupported(name, x->dtype); /* NotImplementedError for uint16/32/64, as PyTorch */
        return NULL;
    }
    cg_tensor *in;
    bool owned;
    if (cg_schema_guard(sc, 1, &x, &in, &owned)) return NULL;
    cg_tensor *out = cg_tensor_new(name, in->ndim, in->shape, in->dtype, in->device);
    if (out) {
        bool prev = cg_set_grad_enabled(false);
        cg_tensor *xc = cg_contiguous(in);
        cg_set_grad_enabled(prev);
        cg_status st = xc ? CG_OK : cg_last_error();
        if (xc) CG_RUN_KERNEL(st, name, out->device, softmax, out, xc, d, sc == &k_log_softmax);
        if (st) cg_tensor_release(out), out = NULL;
        cg_tensor_release(xc);
    }
    if (out) {
        bool failed;
        cg_node *node = cg_wire_unary_output(sc->node_name, bw, sc, 1, &in, out, 1, &failed);
        if (node) {
            node->iattr[0] = d;
            failed = cg_node_save(node, 0, out, true, 0) != CG_OK;
        }
        if (failed) cg_tensor_release(out), out = NULL;
    }
    if (owned) cg_tensor_release(in);
    return out;
}

/* the call recorded as a profiler event (off the hot path) */
static CG_PROF_COLD cg_tensor *softmax_impl_profiled(const cg_op_schema *sc, cg_backward_fn bw, cg_tensor *x,
                                                     int64_t dim) {
    int64_t ev = cg_prof_begin(sc->name, CG_PROF_OP, 1, &x);
    cg_tensor *r = softmax_body(sc, bw, x, dim);
    cg_prof_end(ev, r);
    return r;
}
static cg_tensor *softmax_impl(const cg_op_schema *sc, cg_backward_fn bw, cg_tensor *x, int64_t dim) {
    if (cg_prof_active()) return softmax_impl_profiled(sc, bw, x, dim);
    return softmax_body(sc, bw, x, dim);
}

cg_tensor *cg_softmax(cg_tensor *x, int64_t dim) { return softmax_impl(&k_softmax, softmax_backward, x, dim); }
cg_tensor *cg_log_softmax(cg_tensor *x, int64_t dim) {
    return softmax_impl(&k_log_softmax, log_softmax_backward, x, dim);
}
