/* dtype_device.c — the cgrad.dtype and cgrad.device objects (singletons for
 * dtypes), their argument converters and the default dtype. */
#include "cgpy.h"

#include <string.h>

cg_dtype cgpy_default_dtype = CG_DTYPE_F32;

/* Note [Default device]
 * set_default_device (cgrad/_default_device.py) decides; this keeps what it
 * decided: a device (cpu unless set), or, for a device this build cannot
 * make tensors on ('cuda:1' on PyTorch's CPU build), the exception type and
 * message that each factory called without device= then raises, as PyTorch's
 * CPU build does at the first tensor rather than at set_default_device. The
 * factories' device parameters carry CGPY_DEFAULT_DEV (args.h). */
static cg_device g_default_device = {CG_DEVICE_CPU, 0};
static PyObject *g_default_device_error; /* (type, message) or NULL */

int cgpy_default_device(cg_device *out) {
    if (g_default_device_error) {
        PyErr_SetObject(PyTuple_GET_ITEM(g_default_device_error, 0), PyTuple_GET_ITEM(g_default_device_error, 1));
        return -1;
    }
    *out = g_default_device;
    return 0;
}

/* _set_default_device(device) or _set_default_device(None, exc_type, message) */
PyObject *cgpy_set_default_device(PyObject *m, PyObject *args) {
    (void)m;
    PyObject *dev, *type = NULL, *msg = NULL;
    if (!PyArg_ParseTuple(args, "O|OU:_set_default_device", &dev, &type, &msg)) return NULL;
    if (dev != Py_None) {
        cg_device d = g_default_device;
        if (!cgpy_device_conv(dev, &d)) return NULL;
        Py_CLEAR(g_default_device_error);
        g_default_device = d;
        Py_RETURN_NONE;
    }
    if (!type || !msg || !PyExceptionClass_Check(type)) {
        PyErr_SetString(PyExc_TypeError, "_set_default_device(None, exc_type, message): an exception type and a str");
        return NULL;
    }
    PyObject *err = PyTuple_Pack(2, type, msg);
    if (!err) return NULL;
    Py_XSETREF(g_default_device_error, err);
    Py_RETURN_NONE;
}
static CgDtypeObject *g_dtypes[CG_DTYPE_COUNT];

static PyObject *dtype_repr(PyObject *self) {
    return PyUnicode_FromFormat("cgrad.%s", cg_dtype_name(((CgDtypeObject *)self)->dt));
}
static PyObject *dtype_is_floating(PyObject *self, void *c) {
    (void)c;
    return PyBool_FromLong(cg_dtype_is_floating(((CgDtypeObject *)self)->dt));
}
static PyObject *dtype_is_signed(PyObject *self, void *c) {
    (void)c;
    return PyBool_FromLong(cg_dtype_is_signed(((CgDtypeObject *)self)->dt));
}
static PyObject *dtype_itemsize(PyObject *self, void *c) {
    (void)c;
    return PyLong_FromSize_t(cg_dtype_size(((CgDtypeObject *)self)->dt));
}
static PyObject *dtype_reduce(PyObject *self, PyObject *unused) {
    (void)unused;
    return PyUnicode_FromString(cg_dtype_name(((CgDtypeObject *)self)->dt)); /* pickled as module attribute */
}
static PyGetSetDef dtype_getset[] = {
    {"is_floating_point", dtype_is_floating, NULL, NULL, NULL},
    {"is_signed", dtype_is_signed, NULL, NULL, NULL},
    {"itemsize", dtype_itemsize, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};
static PyMethodDef dtype_methods[] = {
    {"__reduce__", dtype_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};
PyTypeObject CgDtype_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cgrad.dtype",
    .tp_basicsize = sizeof(CgDtypeObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_repr = dtype_repr,
    .tp_getset = dtype_getset,
    .tp_methods = dtype_methods,
};

PyObject *cgpy_dtype(cg_dtype dt) { return (PyObject *)g_dtypes[dt]; }

int cgpy_dtype_conv(PyObject *o, void *out) {
    if (o == Py_None) return 1;
    if (PyObject_TypeCheck(o, &CgDtype_Type)) {
        *(cg_dtype *)out = ((CgDtypeObject *)o)->dt;
        return 1;
    }
    if (o == (PyObject *)&PyFloat_Type) { *(cg_dtype *)out = CG_DTYPE_F64; return 1; }
    if (o == (PyObject *)&PyLong_Type) { *(cg_dtype *)out = CG_DTYPE_I64; return 1; }
    if (o == (PyObject *)&PyBool_Type) { *(cg_dtype *)out = CG_DTYPE_BOOL; return 1; }
    PyErr_Format(PyExc_TypeError, "expected a cgrad.dtype, got %R", o);
    return 0;
}

/* ------------------------------------------------------------- device */

static int parse_device_str(const char *s, cg_device *out) {
    if (strcmp(s, "cpu") == 0 || strcmp(s, "cpu:0") == 0) { *out = cg_cpu(); return 1; }
    if (strcmp(s, "meta") == 0) { *out = cg_meta(); return 1; }
    if (strncmp(s, "cuda", 4) == 0) {
        PyErr_Format(PyExc_NotImplementedError, "device '%s': the CUDA backend is not available in this build", s);
        return 0;
    }
    PyErr_Format(PyExc_RuntimeError, "Expected one of cpu, meta device type at start of device string: %s", s);
    return 0;
}

int cgpy_device_conv(PyObject *o, void *out) {
    if (o == Py_None) return 1;
    if (PyObject_TypeCheck(o, &CgDevice_Type)) {
        *(cg_device *)out = ((CgDeviceObject *)o)->dev;
        return 1;
    }
    if (PyUnicode_Check(o)) return parse_device_str(PyUnicode_AsUTF8(o), out);
    PyErr_Format(PyExc_TypeError, "expected a cgrad.device or a device string, got %R", o);
    return 0;
}

PyObject *cgpy_device(cg_device d) {
    CgDeviceObject *o = PyObject_New(CgDeviceObject, &CgDevice_Type);
    if (o) o->dev = d;
    return (PyObject *)o;
}

static PyObject *device_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    (void)type;
    static cgpy_spec spec = CGPY_SPEC("device", CGPY_ARG("type", CGPY_A_OBJ, CGPY_REQ));
    cgpy_val v[1];
    if (cgpy_args_parse_tuple(&spec, NULL, args, kw, v)) return NULL;
    cg_device d;
    if (!cgpy_device_conv(v[0].o, &d)) return NULL;
    return cgpy_device(d);
}
static PyObject *device_repr(PyObject *self) {
    return PyUnicode_FromFormat("device(type='%s')", cg_device_name(((CgDeviceObject *)self)->dev));
}
static PyObject *device_str(PyObject *self) { return PyUnicode_FromString(cg_device_name(((CgDeviceObject *)self)->dev)); }
static PyObject *device_type(PyObject *self, void *c) {
    (void)c;
    return PyUnicode_FromString(cg_device_name(((CgDeviceObject *)self)->dev));
}
static PyObject *device_index(PyObject *self, void *c) {
    (void)self, (void)c;
    Py_RETURN_NONE;
}
static PyObject *device_richcompare(PyObject *a, PyObject *b, int op) {
    cg_device x, y;
    if ((op != Py_EQ && op != Py_NE) || !PyObject_TypeCheck(a, &CgDevice_Type)) Py_RETURN_NOTIMPLEMENTED;
    x = ((CgDeviceObject *)a)->dev;
    if (PyObject_TypeCheck(b, &CgDevice_Type)) y = ((CgDeviceObject *)b)->dev;
    else if (PyUnicode_Check(b)) {
        if (!parse_device_str(PyUnicode_AsUTF8(b), &y)) {
            PyErr_Clear();
            Py_RETURN_NOTIMPLEMENTED;
        }
    } else Py_RETURN_NOTIMPLEMENTED;
    return PyBool_FromLong(cg_device_eq(x, y) == (op == Py_EQ));
}
static Py_hash_t device_hash(PyObject *self) {
    cg_device d = ((CgDeviceObject *)self)->dev;
    return (Py_hash_t)(d.type * 131 + d.index + 1);
}
static PyObject *device_reduce(PyObject *self, PyObject *unused) {
    (void)unused;
    return Py_BuildValue("(O(s))", (PyObject *)&CgDevice_Type, cg_device_name(((CgDeviceObject *)self)->dev));
}
static PyGetSetDef device_getset[] = {
    {"type", device_type, NULL, NULL, NULL},
    {"index", device_index, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};
static PyMethodDef device_methods[] = {
    {"__reduce__", device_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};
PyTypeObject CgDevice_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cgrad.device",
    .tp_basicsize = sizeof(CgDeviceObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = device_new,
    .tp_repr = device_repr,
    .tp_str = device_str,
    .tp_getset = device_getset,
    .tp_methods = device_methods,
    .tp_richcompare = device_richcompare,
    .tp_hash = device_hash,
};

int cgpy_init_dtypes(PyObject *m) {
    if (PyType_Ready(&CgDtype_Type) < 0 || PyType_Ready(&CgDevice_Type) < 0) return -1;
    for (int i = 0; i < CG_DTYPE_COUNT; i++) {
        g_dtypes[i] = PyObject_New(CgDtypeObject, &CgDtype_Type);
        if (!g_dtypes[i]) return -1;
        g_dtypes[i]->dt = (cg_dtype)i;
        if (PyModule_AddObjectRef(m, cg_dtype_name((cg_dtype)i), (PyObject *)g_dtypes[i]) < 0) return -1;
    }
    if (PyModule_AddObjectRef(m, "dtype", (PyObject *)&CgDtype_Type) < 0) return -1;
    if (PyModule_AddObjectRef(m, "device", (PyObject *)&CgDevice_Type) < 0) return -1;
    return 0;
}
