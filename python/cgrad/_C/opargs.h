/* opargs.h — internal: small helpers shared by ops_index.c, ops_linalg.c and
 * ops_creation.c: one keyword list for the method and function forms of an
 * op, PyTorch's exception types for engine errors, index tensors, and
 * in-place ops computed out of place. */
#ifndef CGPY_OPARGS_H
#define CGPY_OPARGS_H

#include "bind.h"

#include <stdarg.h>

/* The positional arguments with `self` prepended for method calls, so that one
 * keyword list ("input", ...) parses both x.op(a, b) and cgrad.op(x, a, b).
 * New reference or NULL. */
static inline PyObject *opargs_full(PyObject *self, PyObject *args) {
    if (!cgpy_is_method(self)) {
        Py_INCREF(args);
        return args;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    PyObject *t = PyTuple_New(n + 1);
    if (!t) return NULL;
    Py_INCREF(self);
    PyTuple_SET_ITEM(t, 0, self);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PyTuple_GET_ITEM(args, i);
        Py_INCREF(o);
        PyTuple_SET_ITEM(t, i + 1, o);
    }
    return t;
}

/* Parse (self-prepended) args with PyArg_VaParseTupleAndKeywords. */
static inline int opargs_parse(PyObject *self, PyObject *args, PyObject *kw, const char *fmt, char **kwlist, ...) {
    PyObject *full = opargs_full(self, args);
    if (!full) return 0;
    va_list va;
    va_start(va, kwlist);
    int ok = PyArg_VaParseTupleAndKeywords(full, kw, fmt, kwlist, va);
    va_end(va);
    Py_DECREF(full);
    return ok;
}

/* Raise the engine's error the way PyTorch does for these ops: index, value
 * and dtype errors are RuntimeErrors there (cgpy_raise would give IndexError /
 * ValueError / DtypeMismatch). Shape, device, memory and not-implemented
 * errors keep cgpy_raise's mapping. keep_index: IndexError stays (PyTorch
 * raises IndexError for index_select and take). */
static inline PyObject *opargs_raise(bool keep_index) {
    cg_status st = cg_last_error();
    if (st == CG_ERR_VALUE || st == CG_ERR_DTYPE || (st == CG_ERR_INDEX && !keep_index)) {
        PyErr_SetString(PyExc_RuntimeError, cg_last_error_message());
        cg_clear_error();
        return NULL;
    }
    return cgpy_raise();
}
static inline PyObject *opargs_result(cg_tensor *t, bool keep_index) {
    if (t) return cgpy_wrap(t);
    return PyErr_Occurred() ? NULL : opargs_raise(keep_index);
}
/* result (stolen) with out= (Note [out= validation] in bind.h); engine errors as opargs_raise */
static inline PyObject *opargs_out(cg_tensor *t, PyObject *out, bool keep_index, const cgpy_out_rule *rule, int n,
                                   cg_tensor *const *inputs) {
    if (!t) return PyErr_Occurred() ? NULL : opargs_raise(keep_index);
    return cgpy_out_finish(out, t, rule, n, inputs);
}

/* An index argument as an int64 tensor (new reference): int64 tensors as
 * they are, int32 (where PyTorch accepts it) cast; anything else raises
 * RuntimeError "<op>(): Expected dtype int64 for index" as PyTorch does. */
static inline cg_tensor *opargs_index(PyObject *o, const char *op, bool allow_int32) {
    if (!cgpy_is_tensor(o)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'index' must be Tensor, not %.100s", op, Py_TYPE(o)->tp_name);
        return NULL;
    }
    cg_tensor *t = cgpy_t(o);
    cg_dtype dt = cg_tensor_dtype(t);
    if (dt == CG_DTYPE_I64) {
        cg_tensor_retain(t);
        return t;
    }
    if (dt == CG_DTYPE_I32 && allow_int32) {
        cg_tensor *c = cg_to_dtype(t, CG_DTYPE_I64);
        if (!c) cgpy_raise();
        return c;
    }
    PyErr_Format(PyExc_RuntimeError, "%s(): Expected dtype %s for index, but got %s", op,
                 allow_int32 ? "int32/int64" : "int64", cg_dtype_name(dt));
    return NULL;
}

/* PyTorch's check for in-place ops on leaves: 0 or -1 (RuntimeError). */
static inline int opargs_check_leaf(cg_tensor *x, const char *op) {
    if (cg_is_grad_enabled() && cg_tensor_requires_grad(x) && cg_tensor_is_leaf(x)) {
        PyErr_Format(PyExc_RuntimeError,
                     "%s(): a leaf Variable that requires grad is being used in an in-place operation.", op);
        return -1;
    }
    return 0;
}

/* Note [In-place via out of place]: the engine has no in-place form of most
 * index ops, so x.op_(...) computes the op out of place and copies the result
 * into x's storage with cg_copy_, which bumps x's version and, when a graph
 * is recorded, moves the result's history onto x (for views through the
 * base). When a graph is recorded the op runs on a differentiable clone of x,
 * so tensors it saves for backward are not the x that copy_ overwrites.
 * `x_for_op` receives the tensor to pass to the op (new reference). */
static inline int opargs_inplace_begin(cg_tensor *x, bool others_require_grad, const char *op, cg_tensor **x_for_op) {
    if (opargs_check_leaf(x, op)) return -1;
    bool graph = cg_is_grad_enabled() && (others_require_grad || cg_tensor_requires_grad(x));
    if (graph) {
        *x_for_op = cg_clone(x);
        if (!*x_for_op) {
            cgpy_raise();
            return -1;
        }
    } else {
        cg_tensor_retain(x);
        *x_for_op = x;
    }
    return 0;
}
/* Finish: result (stolen) -> x's storage; returns self (new ref) or NULL. */
static inline PyObject *opargs_inplace_end(PyObject *self, cg_tensor *xin, cg_tensor *result, bool keep_index) {
    cg_tensor_release(xin);
    if (!result) return PyErr_Occurred() ? NULL : opargs_raise(keep_index);
    cg_status st = cg_copy_(cgpy_t(self), result);
    cg_tensor_release(result);
    if (cgpy_check(st)) return NULL;
    Py_INCREF(self);
    return self;
}

static inline bool opargs_requires_grad(PyObject *o) { return cgpy_is_tensor(o) && cg_tensor_requires_grad(cgpy_t(o)); }

#endif
