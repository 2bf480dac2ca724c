/* dtype_device.c — the cgrad.dtype and cgrad.device objects (singletons for
 * dtypes), their argument converters and the default dtype. */
#include "cgpy.h"

#include <stdio.h>
#include <string.h>

cg_dtype cgpy_default_dtype = CG_DTYPE_F32;

/* Note [Default device]
 * set_default_device (cgrad/_default_device.py) decides; this keeps what it
 * decided: a device (cpu unless set; 'cuda' without an index stays so and is
 * the thread's current CUDA device at each factory call, as in PyTorch), or,
 * for a device type this build has no backend for ('mps' on PyTorch's CPU
 * build), the exception type and message that each factory called without
 * device= then raises, as PyTorch does at the first tensor rather than at
 * set_default_device. A cuda device is kept as a device whatever the state of
 * CUDA: a factory then fails in the engine, which cannot use the device, and
 * that error is mapped as every other (errors.c: AssertionError "Torch not
 * compiled with CUDA enabled" without the CUDA kernel library, RuntimeError
 * with its reason otherwise). The factories' device parameters carry
 * CGPY_DEFAULT_DEV (args.h). */
static cg_device g_default_device = {CG_DEVICE_CPU, 0};
static int g_default_has_index = 0;
static PyObject *g_default_device_error; /* (type, message) or NULL */

static int device_raw(PyObject *o, cg_device *out, int *has_index);

/* Note [Current CUDA device]
 * PyTorch's current device (torch.cuda.set_device / torch.cuda.device) is per
 * thread, 0 in a new thread; 'cuda' without an index means it wherever a
 * device is used (factories, to(), the default device). The engine has no
 * such notion (a cg_device always names its ordinal), so the binding keeps it
 * here and resolves an index-less cuda device when converting it. */
static _Thread_local int tl_cuda_current = 0;

int cgpy_cuda_current(void) { return tl_cuda_current; }
void cgpy_cuda_set_current(int index) { tl_cuda_current = index; }

static cg_device resolve(cg_device d, int has_index) {
    if (d.type == CG_DEVICE_CUDA && !has_index) d.index = tl_cuda_current;
    return d;
}

int cgpy_default_device(cg_device *out) {
    if (g_default_device_error) {
        PyErr_SetObject(PyTuple_GET_ITEM(g_default_device_error, 0), PyTuple_GET_ITEM(g_default_device_error, 1));
        return -1;
    }
    *out = resolve(g_default_device, g_default_has_index);
    return 0;
}

/* _set_default_device(device) or _set_default_device(None, exc_type, message) */
PyObject *cgpy_set_default_device(PyObject *m, PyObject *args) {
    (void)m;
    PyObject *dev, *type = NULL, *msg = NULL;
    if (!PyArg_ParseTuple(args, "O|OU:_set_default_device", &dev, &type, &msg)) return NULL;
    if (dev != Py_None) {
        cg_device d = g_default_device;
        int has = 0;
        if (!device_raw(dev, &d, &has)) return NULL;
        Py_CLEAR(g_default_device_error);
        g_default_device = d;
        g_default_has_index = has;
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

/* ------------------------------------------------------------- device
 * cgrad.device is PyTorch's: a type and an optional index. cpu and meta have
 * one device each (index None; 'cpu:0' is 'cpu'); cuda devices are cuda:N,
 * and 'cuda' without an index (index None) means the current CUDA device
 * where a device is used (Note [Current CUDA device]). Parsing never needs a
 * GPU: cgrad.device('cuda:3') works on any machine, as torch.device does on
 * its CPU build; using an unusable device fails where a tensor is made. */

#define DEVICE_TYPES "cpu, cuda, meta"

static int invalid_device_string(const char *s) {
    PyErr_Format(PyExc_RuntimeError, "Invalid device string: '%s'", s);
    return 0;
}

/* PyTorch's grammar: a type name ([A-Za-z_]+) and an optional ":N" (N without leading zeros) */
static int parse_device_str(const char *s, cg_device *out, int *has_index) {
    const char *p = s;
    while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_') p++;
    size_t tlen = (size_t)(p - s);
    int has = 0;
    long long idx = 0;
    if (tlen == 0) return invalid_device_string(s);
    if (*p == ':') {
        p++;
        if (*p == '0') {
            p++;
        } else if (*p >= '1' && *p <= '9') {
            while (*p >= '0' && *p <= '9') {
                idx = idx * 10 + (*p++ - '0');
                if (idx > 0x7fffffff) return invalid_device_string(s);
            }
        } else {
            return invalid_device_string(s);
        }
        has = 1;
    }
    if (*p != '\0') return invalid_device_string(s);
    if (tlen == 4 && strncmp(s, "cuda", 4) == 0) {
        *out = cg_cuda((int)idx);
        *has_index = has;
        return 1;
    }
    int cpu = tlen == 3 && strncmp(s, "cpu", 3) == 0, meta = tlen == 4 && strncmp(s, "meta", 4) == 0;
    if (cpu || meta) {
        if (idx != 0) {
            PyErr_Format(PyExc_RuntimeError, "Invalid device string: '%s' (cgrad has one %s device: '%s' or '%s:0')", s,
                         cpu ? "cpu" : "meta", cpu ? "cpu" : "meta", cpu ? "cpu" : "meta");
            return 0;
        }
        *out = cpu ? cg_cpu() : cg_meta();
        *has_index = 0;
        return 1;
    }
    PyErr_Format(PyExc_RuntimeError, "Expected one of " DEVICE_TYPES " device type at start of device string: %s", s);
    return 0;
}

/* an int N as a device: cuda:N when a CUDA device is usable (PyTorch: the current accelerator's device N) */
static int int_device(PyObject *o, cg_device *out) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred()) return 0;
    if (overflow < 0 || v < 0) {
        PyErr_SetString(PyExc_RuntimeError, "Device index must not be negative");
        return 0;
    }
    if (cg_cuda_device_count() <= 0) {
        PyErr_SetString(PyExc_RuntimeError, "Cannot access accelerator device when none is available.");
        return 0;
    }
    if (overflow || v > 0x7fffffff) {
        PyErr_Format(PyExc_RuntimeError, "Device index %R is out of range", o);
        return 0;
    }
    *out = cg_cuda((int)v);
    return 1;
}

/* o as a device as written (a cuda device may have no index: *has_index 0) */
static int device_raw(PyObject *o, cg_device *out, int *has_index) {
    if (PyObject_TypeCheck(o, &CgDevice_Type)) {
        *out = ((CgDeviceObject *)o)->dev;
        *has_index = ((CgDeviceObject *)o)->has_index;
        return 1;
    }
    if (PyUnicode_Check(o)) {
        const char *s = PyUnicode_AsUTF8(o);
        return s ? parse_device_str(s, out, has_index) : 0;
    }
    if (PyLong_Check(o) && !PyBool_Check(o)) {
        *has_index = 1;
        return int_device(o, out);
    }
    PyErr_Format(PyExc_TypeError, "expected a cgrad.device, a device string or a device index, got %R", o);
    return 0;
}

int cgpy_device_conv(PyObject *o, void *out) {
    if (o == Py_None) return 1;
    cg_device d;
    int has = 0;
    if (!device_raw(o, &d, &has)) return 0;
    *(cg_device *)out = resolve(d, has);
    return 1;
}

const char *cgpy_device_str(cg_device d, char *buf, size_t cap) {
    if (d.type == CG_DEVICE_CUDA) snprintf(buf, cap, "cuda:%d", d.index);
    else snprintf(buf, cap, "%s", cg_device_name(d));
    return buf;
}

static PyObject *device_make(cg_device d, int has_index) {
    CgDeviceObject *o = PyObject_New(CgDeviceObject, &CgDevice_Type);
    if (o) {
        o->dev = d;
        o->has_index = d.type == CG_DEVICE_CUDA ? has_index : 0;
        if (!o->has_index && d.type == CG_DEVICE_CUDA) o->dev.index = 0;
    }
    return (PyObject *)o;
}

PyObject *cgpy_device(cg_device d) { return device_make(d, 1); }

/* device(type, index=None): type a str ("cuda", "cuda:1", "cpu"), a device or an int (cuda:N) */
static PyObject *device_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    (void)type;
    static cgpy_spec spec = CGPY_SPEC("device", CGPY_ARG("type", CGPY_A_OBJ, CGPY_REQ), CGPY_ARG("index", CGPY_A_OBJ));
    cgpy_val v[2];
    if (cgpy_args_parse_tuple(&spec, NULL, args, kw, v)) return NULL;
    PyObject *t = v[0].o, *index = v[1].o && v[1].o != Py_None ? v[1].o : NULL;
    if (index && !PyUnicode_Check(t)) {
        PyErr_Format(PyExc_TypeError, "device(): argument 'type' must be str when an index is given, not %.100s",
                     Py_TYPE(t)->tp_name);
        return NULL;
    }
    if (PyObject_TypeCheck(t, &CgDevice_Type)) return Py_NewRef(t);
    cg_device d;
    int has = 0;
    if (!device_raw(t, &d, &has)) return NULL;
    if (index) {
        if (!PyLong_Check(index) || PyBool_Check(index)) {
            PyErr_Format(PyExc_TypeError, "device(): argument 'index' (position 2) must be int, not %.100s",
                         Py_TYPE(index)->tp_name);
            return NULL;
        }
        if (has) {
            PyErr_Format(PyExc_RuntimeError, "type (string) must not include an index because index was passed "
                         "explicitly: %U", t);
            return NULL;
        }
        int overflow = 0;
        long long i = PyLong_AsLongLongAndOverflow(index, &overflow);
        if (i == -1 && PyErr_Occurred()) return NULL;
        if (overflow < 0 || i < 0) {
            PyErr_SetString(PyExc_RuntimeError, "Device index must not be negative");
            return NULL;
        }
        if (d.type != CG_DEVICE_CUDA) {
            if (overflow || i != 0) {
                PyErr_Format(PyExc_RuntimeError, "device(): cgrad has one %s device (index 0), got index %R",
                             cg_device_name(d), index);
                return NULL;
            }
        } else {
            if (overflow || i > 0x7fffffff) {
                PyErr_Format(PyExc_RuntimeError, "Device index %R is out of range", index);
                return NULL;
            }
            d.index = (int)i;
            has = 1;
        }
    }
    return device_make(d, has);
}
static PyObject *device_repr(PyObject *self) {
    CgDeviceObject *o = (CgDeviceObject *)self;
    if (o->has_index) return PyUnicode_FromFormat("device(type='%s', index=%d)", cg_device_name(o->dev), o->dev.index);
    return PyUnicode_FromFormat("device(type='%s')", cg_device_name(o->dev));
}
static PyObject *device_str(PyObject *self) {
    CgDeviceObject *o = (CgDeviceObject *)self;
    if (o->has_index) return PyUnicode_FromFormat("%s:%d", cg_device_name(o->dev), o->dev.index);
    return PyUnicode_FromString(cg_device_name(o->dev));
}
static PyObject *device_type(PyObject *self, void *c) {
    (void)c;
    return PyUnicode_FromString(cg_device_name(((CgDeviceObject *)self)->dev));
}
static PyObject *device_index(PyObject *self, void *c) {
    (void)c;
    CgDeviceObject *o = (CgDeviceObject *)self;
    if (!o->has_index) Py_RETURN_NONE;
    return PyLong_FromLong(o->dev.index);
}
/* equal: the same type and index (cuda:0 is not cuda, as in PyTorch); a device string compares as its device */
static PyObject *device_richcompare(PyObject *a, PyObject *b, int op) {
    cg_device x, y;
    int hx, hy = 0;
    if ((op != Py_EQ && op != Py_NE) || !PyObject_TypeCheck(a, &CgDevice_Type)) Py_RETURN_NOTIMPLEMENTED;
    x = ((CgDeviceObject *)a)->dev;
    hx = ((CgDeviceObject *)a)->has_index;
    if (PyObject_TypeCheck(b, &CgDevice_Type)) {
        y = ((CgDeviceObject *)b)->dev;
        hy = ((CgDeviceObject *)b)->has_index;
    } else if (PyUnicode_Check(b)) {
        const char *s = PyUnicode_AsUTF8(b);
        if (!s || !parse_device_str(s, &y, &hy)) {
            PyErr_Clear();
            Py_RETURN_NOTIMPLEMENTED;
        }
        if (y.type == CG_DEVICE_CUDA && !hy) y.index = 0;
    } else {
        Py_RETURN_NOTIMPLEMENTED;
    }
    bool eq = x.type == y.type && hx == hy && (!hx || x.index == y.index);
    return PyBool_FromLong(eq == (op == Py_EQ));
}
static Py_hash_t device_hash(PyObject *self) {
    CgDeviceObject *o = (CgDeviceObject *)self;
    return (Py_hash_t)(o->dev.type * 131 + (o->has_index ? o->dev.index + 2 : 0) + 1);
}
static PyObject *device_reduce(PyObject *self, PyObject *unused) {
    (void)unused;
    CgDeviceObject *o = (CgDeviceObject *)self;
    if (o->has_index)
        return Py_BuildValue("(O(si))", (PyObject *)&CgDevice_Type, cg_device_name(o->dev), o->dev.index);
    return Py_BuildValue("(O(s))", (PyObject *)&CgDevice_Type, cg_device_name(o->dev));
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
