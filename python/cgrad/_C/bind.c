/* bind.c — the shared op-binding helpers declared in bind.h. */
#include "bind.h"

#include <string.h>

void cgpy_release_n(int n, cg_tensor **ts) {
    for (int i = 0; i < n; i++) cg_tensor_release(ts[i]);
}

int cgpy_promote_operands(int n, PyObject *const *in, bool float_only, cg_tensor **out, cg_dtype *dt) {
    cg_device dev = cg_cpu();
    bool found = false;
    for (int i = 0; i < n && !found; i++)
        if (cgpy_is_tensor(in[i])) dev = cg_tensor_device(cgpy_t(in[i])), found = true;
    if (cgpy_result_type(n, in, dt)) return -1;
    if (float_only && !cg_dtype_is_floating(*dt)) *dt = cgpy_default_dtype;
    for (int i = 0; i < n; i++) {
        out[i] = cgpy_as_tensor(in[i], *dt, dev);
        if (!out[i]) {
            cgpy_release_n(i, out);
            return -1;
        }
    }
    return 0;
}

PyObject *cgpy_finish_out(PyObject *out, cg_tensor *result) {
    if (!result) return PyErr_Occurred() ? NULL : cgpy_raise();
    if (!out || out == Py_None) return cgpy_wrap(result);
    if (!cgpy_is_tensor(out)) {
        cg_tensor_release(result);
        PyErr_SetString(PyExc_TypeError, "out= must be a Tensor");
        return NULL;
    }
    cg_tensor *o = cgpy_t(out);
    int nd = cg_tensor_ndim(o);
    if (nd != cg_tensor_ndim(result) || memcmp(cg_tensor_shape(o), cg_tensor_shape(result), sizeof(int64_t) * (size_t)nd)) {
        cg_tensor_release(result);
        PyErr_SetString(cgpy_ShapeMismatch, "out= tensor has a different shape than the result (resizing out= is not supported)");
        return NULL;
    }
    cg_status st = cg_copy_(o, result);
    cg_tensor_release(result);
    if (cgpy_check(st)) return NULL;
    Py_INCREF(out);
    return out;
}

int cgpy_parse_int(PyObject *o, int64_t *v, const char *what) {
    PyObject *i = PyNumber_Index(o);
    if (!i) {
        PyErr_Format(PyExc_TypeError, "%s must be an int, not %.100s", what, Py_TYPE(o)->tp_name);
        return -1;
    }
    *v = PyLong_AsLongLong(i);
    Py_DECREF(i);
    return (*v == -1 && PyErr_Occurred()) ? -1 : 0;
}

int cgpy_parse_double(PyObject *o, double *v, const char *what) {
    if (cgpy_is_tensor(o)) return cgpy_check(cg_tensor_item(cgpy_t(o), v));
    *v = PyFloat_AsDouble(o);
    if (*v == -1.0 && PyErr_Occurred()) {
        PyErr_Format(PyExc_TypeError, "%s must be a number, not %.100s", what, Py_TYPE(o)->tp_name);
        return -1;
    }
    return 0;
}
