/* bind.c — the shared op-binding helpers declared in bind.h: operand
 * promotion, out= validation and finishing (Note [out= validation]), and
 * int / double argument parsing. */
#include "bind.h"

#include <string.h>

void cgpy_release_n(int n, cg_tensor **ts) {
    for (int i = 0; i < n; i++) cg_tensor_release(ts[i]);
}

static bool cpu_scalar(const cg_tensor *t) { return cg_tensor_ndim(t) == 0 && cg_tensor_device(t).type == CG_DEVICE_CPU; }

/* Note [CPU scalars on CUDA]: as in PyTorch, a 0-d CPU tensor may join an op
 * on a cuda tensor (x * torch.tensor(0.5)): the op's device is the first
 * operand's that is not such a scalar, and the scalars are copied there
 * (differentiably). Any other mix of devices reaches the engine, which refuses
 * it (CG_ERR_DEVICE). */
cg_tensor *cgpy_as_operand(PyObject *o, cg_dtype dt, cg_device dev) {
    cg_tensor *t = cgpy_as_tensor(o, dt, dev);
    if (t && dev.type == CG_DEVICE_CUDA && cgpy_is_tensor(o) && cpu_scalar(t) && cgpy_to_device_of(&t, dev)) return NULL;
    return t;
}

int cgpy_promote_operands(int n, PyObject *const *in, bool float_only, cg_tensor **out, cg_dtype *dt) {
    cg_device dev = cg_cpu();
    bool found = false, scalar_dev = false;
    for (int i = 0; i < n; i++) {
        if (!cgpy_is_tensor(in[i])) continue;
        cg_tensor *t = cgpy_t(in[i]);
        if (!found || (scalar_dev && !cpu_scalar(t))) {
            dev = cg_tensor_device(t);
            scalar_dev = cpu_scalar(t);
            if (found) break;
            found = true;
            if (!scalar_dev) break;
        }
    }
    if (cgpy_result_type(n, in, dt)) return -1;
    if (float_only && !cg_dtype_is_floating(*dt)) *dt = cgpy_default_dtype;
    for (int i = 0; i < n; i++) {
        out[i] = cgpy_as_operand(in[i], *dt, dev);
        if (!out[i]) {
            cgpy_release_n(i, out);
            return -1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------- out= (Note [out= validation]) */

extern bool cgpy_can_cast(cg_dtype from, cg_dtype to); /* promote.c */

/* "[3, 4]" into buf (at least 24 * CG_MAX_DIMS + 3 bytes) */
static const char *shape_str(char *buf, size_t cap, cg_tensor *t) {
    int nd = cg_tensor_ndim(t);
    const int64_t *s = cg_tensor_shape(t);
    size_t k = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < nd && k < cap; i++) k += (size_t)snprintf(buf + k, cap - k, i ? ", %lld" : "%lld", (long long)s[i]);
    if (k < cap) snprintf(buf + k, cap - k, "]");
    return buf;
}

#define CGPY_CLONE_HINT "Please clone() the tensor before performing the operation."

int cgpy_check_overlap(const char *op, cg_tensor *out, cg_tensor *in, bool any) {
    if (cgpy_overlap_refused(out, in, any)) {
        PyErr_Format(PyExc_RuntimeError, "%s(): unsupported operation: some elements of the input tensor and the "
                     "written-to tensor refer to a single memory location. " CGPY_CLONE_HINT, op);
        return -1;
    }
    return 0;
}

/* Note [out= validation]: every check, then the resize; 0 or -1 (raised). */
static int out_check(cg_tensor *o, cg_tensor *r, const cgpy_out_rule *rule, int n, cg_tensor *const *inputs) {
    const char *op = rule->op;
    bool grad = cg_tensor_requires_grad(r) || cg_tensor_requires_grad(o);
    for (int i = 0; !grad && (rule->flags & CGPY_OUT_GRAD_INPUTS) && i < n; i++)
        grad = inputs[i] && cg_tensor_requires_grad(inputs[i]);
    if (cg_is_grad_enabled() && grad) {
        PyErr_Format(PyExc_RuntimeError, "%s(): functions with out=... arguments don't support automatic "
                     "differentiation, but one of the arguments requires grad.", op);
        return -1;
    }
    cg_device od = cg_tensor_device(o), rd = cg_tensor_device(r);
    if (od.type != rd.type || od.index != rd.index) {
        char rs[32], os_[32];
        PyErr_Format(cgpy_DeviceMismatch, "%s(): expected out= on the result's device (%s), but it is on %s", op,
                     cgpy_device_str(rd, rs, sizeof rs), cgpy_device_str(od, os_, sizeof os_));
        return -1;
    }
    cg_dtype odt = cg_tensor_dtype(o), rdt = cg_tensor_dtype(r);
    if (rule->dtype == CGPY_OUT_CAST && !cgpy_can_cast(rdt, odt)) {
        PyErr_Format(cgpy_DtypeMismatch, "%s(): result type %s can't be cast to the desired output type %s (out=)", op,
                     cg_dtype_name(rdt), cg_dtype_name(odt));
        return -1;
    }
    if (rule->dtype == CGPY_OUT_EXACT && odt != rdt) {
        PyErr_Format(cgpy_DtypeMismatch, "%s(): expected out= to have the result's dtype %s, but got %s", op,
                     cg_dtype_name(rdt), cg_dtype_name(odt));
        return -1;
    }
    int nd = cg_tensor_ndim(o);
    const int64_t *sh = cg_tensor_shape(o), *st = cg_tensor_strides(o);
    for (int d = 0; d < nd; d++)
        if (st[d] == 0 && sh[d] > 1) {
            PyErr_Format(PyExc_RuntimeError, "%s(): unsupported operation: more than one element of the written-to "
                         "tensor refers to a single memory location. " CGPY_CLONE_HINT, op);
            return -1;
        }
    for (int i = 0; rule->alias != CGPY_OUT_ALIAS_OK && i < n; i++)
        if (cgpy_check_overlap(op, o, inputs[i], rule->alias == CGPY_OUT_NO_ALIAS)) return -1;
    bool same_shape = nd == cg_tensor_ndim(r) && !memcmp(sh, cg_tensor_shape(r), sizeof(int64_t) * (size_t)nd);
    if (!same_shape) {
        if (cg_tensor_numel(o) && !(rule->flags & CGPY_OUT_QUIET_RESIZE)) {
            char a[24 * CG_MAX_DIMS + 3], b[24 * CG_MAX_DIMS + 3];
            if (PyErr_WarnFormat(PyExc_UserWarning, 1, "%s(): An output with one or more elements was resized since "
                                 "it had shape %s, which does not match the required output shape %s. This behavior "
                                 "is deprecated (as in PyTorch): pass an out tensor with zero elements to have it "
                                 "resized silently.", op, shape_str(a, sizeof a, o), shape_str(b, sizeof b, r)))
                return -1;
        }
        if (cgpy_check(cg_tensor_resize_(o, cg_tensor_ndim(r), cg_tensor_shape(r)))) return -1;
    }
    return 0;
}

PyObject *cgpy_out_finish(PyObject *out, cg_tensor *result, const cgpy_out_rule *rule, int n, cg_tensor *const *inputs) {
    if (!result) return PyErr_Occurred() ? NULL : cgpy_raise();
    if (!out || out == Py_None) return cgpy_wrap(result);
    if (!cgpy_is_tensor(out)) {
        cg_tensor_release(result);
        PyErr_Format(PyExc_TypeError, "%s(): argument 'out' must be Tensor, not %.100s", rule->op, Py_TYPE(out)->tp_name);
        return NULL;
    }
    cg_tensor *o = cgpy_t(out);
    int rc = out_check(o, result, rule, n, inputs);
    if (!rc) rc = cgpy_check(cg_copy_(o, result));
    cg_tensor_release(result);
    if (rc) return NULL;
    Py_INCREF(out);
    return out;
}

int cgpy_out_dtype(PyObject *out, int *dtype, const char *factory_op) {
    if (!out || out == Py_None || !cgpy_is_tensor(out)) return 0; /* a non-tensor out is refused when finishing */
    cg_dtype odt = cg_tensor_dtype(cgpy_t(out));
    if (*dtype < 0) *dtype = (int)odt;
    else if (factory_op && *dtype != (int)odt) {
        PyErr_Format(PyExc_RuntimeError, "%s(): dtype %s does not match dtype of out parameter (%s)", factory_op,
                     cg_dtype_name((cg_dtype)*dtype), cg_dtype_name(odt));
        return -1;
    }
    return 0;
}

