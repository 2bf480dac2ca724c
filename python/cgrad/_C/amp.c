/* amp.c — bindings of the mixed-precision state and helpers behind
 * cgrad.amp: the thread-local autocast switch and dtype, the cast cache, and
 * GradScaler's fused gradient check `_amp_foreach_non_finite_check_and_unscale_`. */
#include "bind.h"

/* _set_autocast(enabled, dtype): the engine's thread-local autocast state. */
static PyObject *f_set_autocast(PyObject *m, PyObject *args) {
    (void)m;
    int enabled;
    cg_dtype dt = CG_DTYPE_BF16;
    if (!PyArg_ParseTuple(args, "pO&:_set_autocast", &enabled, cgpy_dtype_conv, &dt)) return NULL;
    if (dt != CG_DTYPE_BF16 && dt != CG_DTYPE_F16) {
        PyErr_Format(PyExc_ValueError, "_set_autocast(): dtype must be bfloat16 or float16, got %s", cg_dtype_name(dt));
        return NULL;
    }
    cg_set_autocast(enabled, dt);
    Py_RETURN_NONE;
}

/* _autocast_state() -> (enabled, dtype) */
static PyObject *f_autocast_state(PyObject *m, PyObject *u) {
    (void)m, (void)u;
    return Py_BuildValue("(NO)", PyBool_FromLong(cg_is_autocast_enabled()), cgpy_dtype(cg_get_autocast_dtype()));
}

static PyObject *f_set_cache_enabled(PyObject *m, PyObject *arg) {
    (void)m;
    int on = PyObject_IsTrue(arg);
    if (on < 0) return NULL;
    cg_set_autocast_cache_enabled(on);
    Py_RETURN_NONE;
}
static PyObject *f_is_cache_enabled(PyObject *m, PyObject *u) {
    (void)m, (void)u;
    return PyBool_FromLong(cg_is_autocast_cache_enabled());
}
static PyObject *f_clear_cache(PyObject *m, PyObject *u) {
    (void)m, (void)u;
    cg_autocast_clear_cache();
    Py_RETURN_NONE;
}
static PyObject *f_cache_size(PyObject *m, PyObject *u) {
    (void)m, (void)u;
    return PyLong_FromLongLong(cg_autocast_cache_size());
}

/* _amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale) */
static PyObject *f_unscale(PyObject *m, PyObject *args) {
    (void)m;
    const char *op = "_amp_foreach_non_finite_check_and_unscale_";
    PyObject *seq, *fi, *is;
    if (!PyArg_ParseTuple(args, "OO!O!:_amp_foreach_non_finite_check_and_unscale_", &seq, &CgTensorBase_Type, &fi,
                          &CgTensorBase_Type, &is))
        return NULL;
    PyObject *fast = PySequence_Fast(seq, "_amp_foreach_non_finite_check_and_unscale_(): grads must be a sequence");
    if (!fast) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    cg_tensor **ts = PyMem_Calloc((size_t)(n ? n : 1), sizeof *ts);
    if (!ts) {
        Py_DECREF(fast);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PySequence_Fast_GET_ITEM(fast, i);
        if (!PyObject_TypeCheck(o, &CgTensorBase_Type)) {
            PyErr_Format(PyExc_TypeError, "%s(): grads[%zd] must be a Tensor, not %.100s", op, i, Py_TYPE(o)->tp_name);
            PyMem_Free(ts);
            Py_DECREF(fast);
            return NULL;
        }
        ts[i] = cgpy_t(o);
    }
    cg_status st = cg_amp_unscale_(n, ts, cgpy_t(fi), cgpy_t(is));
    PyMem_Free(ts);
    Py_DECREF(fast);
    if (st) return cgpy_raise();
    Py_RETURN_NONE;
}

static PyMethodDef amp_functions[] = {
    {"_set_autocast", f_set_autocast, METH_VARARGS, NULL},
    {"_autocast_state", f_autocast_state, METH_NOARGS, NULL},
    {"_set_autocast_cache_enabled", f_set_cache_enabled, METH_O, NULL},
    {"_is_autocast_cache_enabled", f_is_cache_enabled, METH_NOARGS, NULL},
    {"_clear_autocast_cache", f_clear_cache, METH_NOARGS, NULL},
    {"_autocast_cache_size", f_cache_size, METH_NOARGS, NULL},
    {"_amp_foreach_non_finite_check_and_unscale_", f_unscale, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

int cgpy_init_amp(PyObject *m) { return PyModule_AddFunctions(m, amp_functions); }
