/* copy.c — copy and conversion: copy_ (broadcast + conversion into an
 * existing storage), contiguous, clone, to(dtype/device), fill_ and zero_.
 * The element loops are the backend's copy runner (Note [Backends]). */
#include "../dispatch/dispatch_internal.h"

#include <string.h>

/* Raw data copy dst <- src (broadcast, convert; one device), through the
 * device's backend; no autograd, no version bump. */
static void copy_raw(cg_tensor *dst, cg_tensor *src) {
    cg_tensor *args[2] = {dst, src};
    cg_iter it;
    cg_iter_init(&it, 2, args, dst->ndim, dst->shape);
    cg_backend_of(dst->device)->copy(dst->device, &it, dst->dtype, src->dtype);
}

/* ------------------------------------------------------------- copy_ */

/* CopyBackward: the gradient goes to the input (reduced to its shape, cast to its dtype). */
static cg_status copy_backward(cg_node *node, cg_tensor *const *gout, cg_tensor **gin) {
    const cg_tensor_meta *m = &node->input_meta[0];
    cg_tensor *g = cg_reduce_to_shape(gout[0], m->ndim, m->shape);
    if (!g) return cg_last_error();
    if (g->dtype != m->dtype) {
        cg_tensor *c = cg_to_dtype(g, m->dtype);
        cg_tensor_release(g);
        g = c;
    }
    gin[0] = g;
    return g ? CG_OK : cg_last_error();
}

/* Does an in-place write into t need autograd bookkeeping? */
static bool inplace_graph(const cg_tensor *t, const cg_tensor *src) {
    return cg_is_grad_enabled() && cg_dtype_is_floating(t->dtype) &&
           ((src && src->requires_grad) || t->requires_grad || (t->base && t->base->requires_grad));
}

CG_PROF_FN(cg_status, cg_copy_, "copy_", (cg_tensor *dst, cg_tensor *src), (dst, src), dst, src) {
    CG_CHECK_S(dst && src, CG_ERR_VALUE, "[copy_] argument is NULL");
    /* a device that stores no data (meta) takes a copy from any device: nothing moves */
    if (!cg_device_eq(dst->device, src->device) && cg_device_has_data(dst->device))
        return cg_set_error(CG_ERR_DEVICE, "[copy_] cannot copy from %s to %s", cg_device_name(src->device),
                            cg_device_name(dst->device));
    int nd;
    int64_t shape[CG_MAX_DIMS];
    if (cg_broadcast_shapes("copy_", dst->ndim, dst->shape, src->ndim, src->shape, &nd, shape)) return cg_last_error();
    if (!cg_shape_eq(nd, shape, dst->ndim, dst->shape)) {
        char a[CG_SHAPE_STR], b[CG_SHAPE_STR];
        return cg_set_error(CG_ERR_SHAPE, "[copy_] source of shape %s cannot be broadcast to destination shape %s",
                            cg_shape_str(a, src->ndim, src->shape), cg_shape_str(b, dst->ndim, dst->shape));
    }
    if (cg_check_inplace("copy", dst)) return cg_last_error();
    /* Note [Memory overlap]: a copy onto a partly overlapping tensor is
     * refused; onto itself (same range and strides) it does nothing */
    if (cg_check_no_partial_overlap("copy", dst, src)) return cg_last_error();
    if (!inplace_graph(dst, cg_dtype_is_floating(src->dtype) ? src : NULL)) {
        if (dst->dtype != src->dtype || cg_tensor_overlap(dst, src) != CG_OVERLAP_FULL) copy_raw(dst, src);
        cg_storage_bump_version(dst->storage);
        return CG_OK;
    }
    /* differentiable: the new values are src cast and broadcast to dst */
    cg_tensor *c = cg_dtype_is_floating(src->dtype) ? cg_to_dtype(src, dst->dtype) : NULL;
    if (!c) {
        bool prev = cg_set_grad_enabled(false);
        c = cg_to_dtype(src, dst->dtype);
        cg_set_grad_enabled(prev);
        if (!c) return cg_last_error();
    }
    cg_tensor *r = cg_expand(c, dst->ndim, dst->shape);
    cg_tensor_release(c);
    if (!r) return cg_last_error();
    cg_status st = cg_inplace_commit("copy", dst, r);
    cg_tensor_release(r);
    return st;
}

/* ------------------------------------------------------------- clone / contiguous / to */

static cg_status identity_backward(cg_node *node, cg_tensor *const *gout, cg_tensor **gin) {
    (void)node;
    cg_tensor_retain(gout[0]);
    gin[0] = gout[0];
    return CG_OK;
}

/* strides NULL: contiguous */
static cg_tensor *copy_out_strided(const char *name, const char *node_name, cg_tensor *t, cg_dtype dt,
                                   const int64_t *strides) {
    cg_tensor *out = cg_tensor_new_strided(name, t->ndim, t->shape, strides, dt, t->device);
    if (!out) return NULL;
    copy_raw(out, t);
    if (!cg_dtype_is_floating(dt)) return out;
    bool failed;
    cg_wire_unary_output(node_name, dt == t->dtype ? identity_backward : copy_backward, NULL, 1, &t, out, 0, &failed);
    if (failed) {
        cg_tensor_release(out);
        return NULL;
    }
    return out;
}

static cg_tensor *copy_out(const char *name, const char *node_name, cg_tensor *t, cg_dtype dt) {
    return copy_out_strided(name, node_name, t, dt, NULL);
}

static cg_tensor *copy_out_profiled(const char *op, const char *node, cg_tensor *t, cg_dtype dt,
                                    const int64_t *strides);

/* Note [Memory formats] (cgrad.h): the strides a copy of t in format f gets; false (an error set) when f
 * does not apply to t's rank. */
static bool format_strides(const char *op, const cg_tensor *t, cg_memory_format f, int64_t *strides) {
    if (f == CG_MEMORY_PRESERVE) {
        if (cg_tensor_is_non_overlapping_and_dense(t)) {
            if (t->ndim) memcpy(strides, t->strides, (size_t)t->ndim * sizeof *strides);
            return true;
        }
        f = cg_tensor_suggest_memory_format(t);
    }
    if ((unsigned)f > CG_MEMORY_PRESERVE) {
        cg_set_error(CG_ERR_VALUE, "[%s] invalid memory format %d", op, (int)f);
        return false;
    }
    if (cg_memory_strides(f, t->ndim, t->shape, strides)) return true;
    cg_set_error(CG_ERR_SHAPE, "[%s] required rank %d tensor to use %s format, got a %d-D tensor", op,
                 f == CG_MEMORY_CHANNELS_LAST ? 4 : 5, f == CG_MEMORY_CHANNELS_LAST ? "channels_last" : "channels_last_3d",
                 t->ndim);
    return false;
}

cg_tensor *cg_clone_as(cg_tensor *t, cg_memory_format f) {
    CG_CHECK(t, CG_ERR_VALUE, "[clone] argument is NULL");
    int64_t strides[CG_MAX_DIMS];
    if (!format_strides("clone", t, f, strides)) return NULL;
    if (cg_prof_active()) return copy_out_profiled("clone", "CloneBackward0", t, t->dtype, strides);
    return copy_out_strided("clone", "CloneBackward0", t, t->dtype, strides);
}

cg_tensor *cg_contiguous_as(cg_tensor *t, cg_memory_format f) {
    CG_CHECK(t, CG_ERR_VALUE, "[contiguous] argument is NULL");
    CG_CHECK(f != CG_MEMORY_PRESERVE, CG_ERR_RUNTIME,
             "[contiguous] preserve memory format is unsupported by the contiguous operator");
    if (f == CG_MEMORY_CONTIGUOUS) return cg_contiguous(t);
    if (cg_tensor_is_contiguous_as(t, f)) { /* false on a rank f does not apply to: format_strides raises */
        cg_tensor_retain(t);
        return t;
    }
    int64_t strides[CG_MAX_DIMS];
    if (!format_strides("contiguous", t, f, strides)) return NULL;
    return copy_out_strided("contiguous", "CloneBackward0", t, t->dtype, strides);
}

cg_tensor *cg_empty_like_as(cg_tensor *t, cg_dtype dt, cg_device dev, cg_memory_format f) {
    CG_CHECK(t, CG_ERR_VALUE, "[empty_like] argument is NULL");
    int64_t strides[CG_MAX_DIMS];
    if (!format_strides("empty_like", t, f, strides)) return NULL;
    return cg_tensor_new_strided("empty_like", t->ndim, t->shape, strides, dt, dev);
}

CG_PROF_FN(cg_tensor *, cg_clone, "clone", (cg_tensor *t), (t), t) {
    CG_CHECK(t, CG_ERR_VALUE, "[clone] argument is NULL");
    return copy_out("clone", "CloneBackward0", t, t->dtype);
}

/* contiguous and to(dtype) that return their input (already contiguous, same
 * dtype) are not recorded: the binding calls them on every operand it
 * promotes, and torch's Tensor.contiguous returns such a tensor unrecorded. */
static CG_PROF_COLD cg_tensor *copy_out_profiled(const char *op, const char *node, cg_tensor *t, cg_dtype dt,
                                                  const int64_t *strides) {
    int64_t ev = cg_prof_begin(op, CG_PROF_OP, 1, &t);
    cg_tensor *r = copy_out_strided(op, node, t, dt, strides);
    cg_prof_end(ev, r);
    return r;
}

cg_tensor *cg_contiguous(cg_tensor *t) {
    CG_CHECK(t, CG_ERR_VALUE, "[contiguous] argument is NULL");
    if (cg_tensor_is_contiguous(t)) {
        cg_tensor_retain(t);
        return t;
    }
    if (cg_prof_active()) return copy_out_profiled("contiguous", "CloneBackward0", t, t->dtype, NULL);
    return copy_out("contiguous", "CloneBackward0", t, t->dtype);
}

cg_tensor *cg_to_dtype(cg_tensor *t, cg_dtype dt) {
    CG_CHECK(t, CG_ERR_VALUE, "[to] argument is NULL");
    CG_CHECK(dt >= 0 && dt < CG_DTYPE_COUNT, CG_ERR_DTYPE, "[to] invalid dtype %d", (int)dt);
    if (dt == t->dtype) {
        cg_tensor_retain(t);
        return t;
    }
    if (cg_prof_active()) return copy_out_profiled("to", "ToCopyBackward0", t, dt, NULL);
    return copy_out("to", "ToCopyBackward0", t, dt);
}

cg_tensor *cg_to_dtype_as(cg_tensor *t, cg_dtype dt, cg_memory_format f) {
    CG_CHECK(t, CG_ERR_VALUE, "[to] argument is NULL");
    CG_CHECK(dt >= 0 && dt < CG_DTYPE_COUNT, CG_ERR_DTYPE, "[to] invalid dtype %d", (int)dt);
    if (dt == t->dtype) {
        cg_tensor_retain(t);
        return t;
    }
    int64_t strides[CG_MAX_DIMS];
    if (!format_strides("to", t, f, strides)) return NULL;
    if (cg_prof_active()) return copy_out_profiled("to", "ToCopyBackward0", t, dt, strides);
    return copy_out_strided("to", "ToCopyBackward0", t, dt, strides);
}

/* to(device)'s gradient goes back to the input's device */
static cg_status to_device_backward(cg_node *node, cg_tensor *const *gout, cg_tensor **gin) {
    gin[0] = cg_to_device(gout[0], node->input_meta[0].device);
    return gin[0] ? CG_OK : cg_last_error();
}

/* Note [Moving between devices]: data crosses devices only through the
 * backends' copy_from_host / copy_to_host (Note [Backends]), as one
 * contiguous block: the source is made contiguous on its own device first,
 * and a copy between two devices neither of which is the host stages through
 * a host buffer. A meta tensor has no data to move. */
static cg_status move_data(cg_tensor *out, cg_tensor *t) {
    cg_tensor *c = cg_contiguous(t);
    if (!c) return cg_last_error();
    size_t nbytes = (size_t)cg_tensor_numel(c) * cg_itemsize(c->dtype);
    const cg_backend *from = cg_backend_of(c->device), *to = cg_backend_of(out->device);
    cg_status st = CG_OK;
    if (from->host_addressable) {
        st = to->copy_from_host(cg_tensor_ptr(out), cg_tensor_ptr(c), nbytes, out->device);
    } else if (to->host_addressable) {
        st = from->copy_to_host(cg_tensor_ptr(out), cg_tensor_ptr(c), nbytes, c->device);
    } else {
        void *stage = cg_malloc_n("to", 1, nbytes);
        if (!stage) {
            st = cg_last_error();
        } else {
            st = from->copy_to_host(stage, cg_tensor_ptr(c), nbytes, c->device);
            if (!st) st = to->copy_from_host(cg_tensor_ptr(out), stage, nbytes, out->device);
            free(stage);
        }
    }
    cg_tensor_release(c);
    return st;
}

cg_tensor *cg_to_device(cg_tensor *t, cg_device dev) {
    CG_CHECK(t, CG_ERR_VALUE, "[to] argument is NULL");
    if (cg_device_eq(t->device, dev)) {
        cg_tensor_retain(t);
        return t;
    }
    if (!cg_device_valid(dev)) {
        cg_device_invalid("to", dev);
        return NULL;
    }
    CG_CHECK(cg_device_has_data(t->device) || !cg_device_has_data(dev), CG_ERR_NOT_IMPLEMENTED,
             "[to] copying a tensor from %s to %s is not supported (meta tensors have no data)",
             cg_device_name(t->device), cg_device_name(dev));
    cg_tensor *out = cg_empty(t->ndim, t->shape, t->dtype, dev);
    if (!out) return NULL;
    if (cg_device_has_data(dev) && cg_tensor_numel(t) > 0) {
        bool prev = cg_set_grad_enabled(false);
        cg_status st = move_data(out, t);
        cg_set_grad_enabled(prev);
        if (st) {
            cg_tensor_release(out);
            return NULL;
        }
    }
    if (!cg_dtype_is_floating(t->dtype)) return out;
    bool failed;
    cg_wire_unary_output("ToCopyBackward0", to_device_backward, NULL, 1, &t, out, 0, &failed);
    if (failed) {
        cg_tensor_release(out);
        return NULL;
    }
    return out;
}

/* ------------------------------------------------------------- fill_ / zero_ */

/* fill_ runs on every backend (its fill entry; Note [Backends]) */
CG_PROF_FN(cg_status, cg_fill_, "fill_", (cg_tensor *t, double value), (t, value), t) {
    CG_CHECK_S(t, CG_ERR_VALUE, "[fill_] argument is NULL");
    /* Note [Memory overlap]: one value written everywhere is the same in any
     * order, so PyTorch's fill_ / zero_ write through a stride-0 dim; so do
     * we, except under autograd (whose commit is a copy_, which refuses it).
     * Without a graph the leaf checks of cg_check_inplace cannot fail. */
    bool graph = inplace_graph(t, NULL);
    if ((graph || !cg_tensor_has_internal_overlap(t)) && cg_check_inplace("fill", t)) return cg_last_error();
    if (graph) { /* overwritten values get no gradient */
        cg_tensor *r = cg_full(t->ndim, t->shape, value, t->dtype, t->device);
        if (!r) return cg_last_error();
        cg_status st = cg_inplace_commit("fill", t, r);
        cg_tensor_release(r);
        return st;
    }
    cg_tensor *s = cg_scalar_on(value, t->dtype, cg_cpu()); /* the value's bytes, in host memory */
    if (!s) return cg_last_error();
    cg_iter it;
    cg_iter_init(&it, 1, &t, t->ndim, t->shape);
    cg_backend_of(t->device)->fill(t->device, &it, cg_tensor_ptr(s), cg_itemsize(t->dtype));
    cg_tensor_release(s);
    cg_storage_bump_version(t->storage);
    return CG_OK;
}

CG_PROF_FN(cg_status, cg_zero_, "zero_", (cg_tensor *t), (t), t) { return cg_fill_(t, 0.0); }
