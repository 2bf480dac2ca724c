/* args.c — argument helpers: shapes given as ints or one sequence, dim
 * lists given as an int, a sequence or None, and random seeds. */
#include "cgpy.h"

int cgpy_parse_shape(PyObject *args, Py_ssize_t start, int *ndim, int64_t *shape) {
    Py_ssize_t n = PyTuple_GET_SIZE(args) - start;
    PyObject *seq = args;
    Py_ssize_t off = start;
    if (n == 1 && !PyLong_Check(PyTuple_GET_ITEM(args, start)) && PySequence_Check(PyTuple_GET_ITEM(args, start))) {
        seq = PySequence_Tuple(PyTuple_GET_ITEM(args, start));
        if (!seq) return -1;
        n = PyTuple_GET_SIZE(seq);
        off = 0;
    } else {
        Py_INCREF(seq);
    }
    if (n > CG_MAX_DIMS) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_RuntimeError, "shape has %zd dims; the maximum is %d", n, CG_MAX_DIMS);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PyTuple_GET_ITEM(seq, off + i);
        PyObject *idx = PyNumber_Index(o);
        if (!idx) {
            Py_DECREF(seq);
            PyErr_Format(PyExc_TypeError, "shape must be a sequence of ints, got an element of type %.100s", Py_TYPE(o)->tp_name);
            return -1;
        }
        int overflow;
        shape[i] = PyLong_AsLongLongAndOverflow(idx, &overflow);
        Py_DECREF(idx);
        if (overflow) {
            Py_DECREF(seq);
            /* a TypeError, as PyTorch's argument parser raises */
            PyErr_Format(PyExc_TypeError, "shape element %zd overflows int64", i);
            return -1;
        }
    }
    *ndim = (int)n;
    Py_DECREF(seq);
    return 0;
}

int cgpy_parse_dims(PyObject *o, int *ndims, int64_t *dims) {
    *ndims = 0;
    if (!o || o == Py_None) return 0;
    if (PyLong_Check(o) || PyIndex_Check(o)) {
        long long v = PyLong_AsLongLong(o);
        if (v == -1 && PyErr_Occurred()) return -1;
        dims[0] = v;
        *ndims = 1;
        return 0;
    }
    PyObject *seq = PySequence_Fast(o, "dim must be an int, a sequence of ints or None");
    if (!seq) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > CG_MAX_DIMS) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_IndexError, "too many dims");
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        long long v = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return -1;
        }
        dims[i] = v;
    }
    *ndims = (int)n;
    Py_DECREF(seq);
    return 0;
}

int cgpy_parse_seed(PyObject *o, uint64_t *seed) {
    PyObject *i = PyNumber_Index(o);
    if (!i) return -1;
    int overflow;
    (void)PyLong_AsLongLongAndOverflow(i, &overflow);
    if (overflow > 0) {
        (void)PyLong_AsUnsignedLongLong(i);
        if (PyErr_Occurred()) overflow = -1;
    }
    PyErr_Clear();
    if (overflow < 0) {
        /* a ValueError, as PyTorch raises */
        PyErr_Format(PyExc_ValueError, "seed %R is out of range: seeds are integers in [-2**63, 2**64 - 1]", i);
        Py_DECREF(i);
        return -1;
    }
    *seed = PyLong_AsUnsignedLongLongMask(i);
    Py_DECREF(i);
    return PyErr_Occurred() ? -1 : 0;
}
