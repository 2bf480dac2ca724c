/* reduce_shape_args.h — internal: argument helpers of the reduction and shape bindings
 * (ops_reduce.c, ops_shape.c). Their functions serve both as Tensor methods
 * and as module functions; opargs_split takes the input tensor off the call
 * (self, or the first argument / `input=`), so one kwlist without the input
 * parses the rest in both forms. Also: optional `out=`, dims, tensor lists. */
#ifndef CGPY_REDUCE_SHAPE_ARGS_H
#define CGPY_REDUCE_SHAPE_ARGS_H

#include "bind.h"

/* Split a METH_VARARGS|METH_KEYWORDS call. Sets *x (borrowed), *rest (new
 * ref: the positional arguments after the input) and *kwrest (new ref or
 * NULL: the keywords less `argname` and, for module functions with out !=
 * NULL, less `out=`, which goes to *out, borrowed). Release with opargs_done. */
static inline int opargs_split(PyObject *self, PyObject *args, PyObject *kw, const char *op, const char *argname,
                               PyObject **out, PyObject **x, PyObject **rest, PyObject **kwrest) {
    *kwrest = NULL;
    *rest = NULL;
    if (out) *out = NULL;
    if (cgpy_is_method(self)) {
        *x = self;
        Py_INCREF(args);
        *rest = args;
        Py_XINCREF(kw);
        *kwrest = kw;
        return 0;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    PyObject *in = n ? PyTuple_GET_ITEM(args, 0) : NULL;
    PyObject *kin = kw ? PyDict_GetItemString(kw, argname) : NULL;
    PyObject *kout = (kw && out) ? PyDict_GetItemString(kw, "out") : NULL;
    if (in && kin) {
        PyErr_Format(PyExc_TypeError, "%s(): got multiple values for argument '%s'", op, argname);
        return -1;
    }
    if (!in) in = kin;
    if (!in) {
        PyErr_Format(PyExc_TypeError, "%s() missing 1 required positional argument: \"%s\"", op, argname);
        return -1;
    }
    if (!cgpy_is_tensor(in)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' (position 1) must be Tensor, not %.100s", op, argname,
                     Py_TYPE(in)->tp_name);
        return -1;
    }
    *x = in;
    *rest = PyTuple_GetSlice(args, n ? 1 : 0, n);
    if (!*rest) return -1;
    if (kw && (kin || kout)) {
        *kwrest = PyDict_Copy(kw);
        if (!*kwrest || (kin && PyDict_DelItemString(*kwrest, argname)) || (kout && PyDict_DelItemString(*kwrest, "out"))) {
            Py_CLEAR(*rest);
            Py_CLEAR(*kwrest);
            return -1;
        }
        if (kout != Py_None) *out = kout;
    } else {
        Py_XINCREF(kw);
        *kwrest = kw;
    }
    return 0;
}

static inline void opargs_done(PyObject *rest, PyObject *kwrest) {
    Py_XDECREF(rest);
    Py_XDECREF(kwrest);
}

/* Keyword lookup in a possibly NULL dict (borrowed or NULL). */
static inline PyObject *opargs_kw(PyObject *kw, const char *name) { return kw ? PyDict_GetItemString(kw, name) : NULL; }

/* A dim list: int, sequence of ints, or None (-> *ndims 0), with the op's name in errors. */
static inline int opargs_dims(PyObject *o, const char *op, int *ndims, int64_t *dims) {
    if (o && o != Py_None && !PyLong_Check(o) && !PyTuple_Check(o) && !PyList_Check(o) && !PyIndex_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'dim' must be tuple of ints, not %.100s", op, Py_TYPE(o)->tp_name);
        return -1;
    }
    return cgpy_parse_dims(o, ndims, dims);
}

/* An int argument with the op's and the argument's names in the error. */
static inline int opargs_int(PyObject *o, const char *op, const char *name, int64_t *v) {
    if (PyBool_Check(o) || PyFloat_Check(o) || !PyIndex_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be int, not %.100s", op, name, Py_TYPE(o)->tp_name);
        return -1;
    }
    return cgpy_parse_int(o, v, name);
}

/* Cast t (borrowed) to dt: new reference (t itself retained when equal) or NULL (raised). */
static inline cg_tensor *opargs_cast(cg_tensor *t, cg_dtype dt) {
    if (cg_tensor_dtype(t) == dt) {
        cg_tensor_retain(t);
        return t;
    }
    cg_tensor *r = cg_to_dtype(t, dt);
    if (!r) cgpy_raise();
    return r;
}

/* A result (stolen, may be NULL) cast to dt unless dt < 0. */
static inline cg_tensor *opargs_cast_result(cg_tensor *r, int dt) {
    if (!r || dt < 0 || cg_tensor_dtype(r) == (cg_dtype)dt) return r;
    cg_tensor *c = cg_to_dtype(r, (cg_dtype)dt);
    cg_tensor_release(r);
    return c;
}

#endif
