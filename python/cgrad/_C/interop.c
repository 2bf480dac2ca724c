/* interop.c — exchanging tensors with other array libraries, without
 * importing NumPy at `import cgrad` time:
 *  - NumPy: Tensor.numpy() (zero-copy on the CPU, through a small holder
 *    object exporting __array_interface__), from_numpy / as_tensor / asarray
 *    (zero-copy views of an ndarray), frombuffer / asarray of any buffer
 *    (its bytes read as a dtype, as PyTorch does), tensor(ndarray) (copy);
 *  - DLPack: Tensor.__dlpack__ / __dlpack_device__ (legacy and versioned
 *    capsules) and from_dlpack (a capsule or an object with __dlpack__);
 *  - raw bytes for pickling (_to_bytes / _from_bytes).
 * Note [Foreign memory lifetime]: a tensor viewing foreign memory holds a
 * reference to its owner (ndarray, buffer exporter or DLPack manager) in the
 * storage deleter's context; the deleter takes the GIL before dropping it,
 * since the last tensor reference may go away on a thread without it. */
#include "bind.h"

#include <string.h>

/* ------------------------------------------------------------- NumPy detection */

static PyObject *g_ndarray_type, *g_generic_type; /* cached once numpy is imported */

/* 1: ndarray, 2: NumPy scalar, 0: neither (NumPy not imported counts as
 * neither: nothing can be an ndarray then), -1: error. */
int cgpy_numpy_kind(PyObject *o) {
    if (!g_ndarray_type) {
        static PyObject *name;
        if (!name && !(name = PyUnicode_InternFromString("numpy"))) return -1;
        PyObject *np = PyImport_GetModule(name);
        if (!np) return PyErr_Occurred() ? -1 : 0;
        g_ndarray_type = PyObject_GetAttrString(np, "ndarray");
        g_generic_type = g_ndarray_type ? PyObject_GetAttrString(np, "generic") : NULL;
        Py_DECREF(np);
        if (!g_ndarray_type || !g_generic_type) {
            Py_CLEAR(g_ndarray_type);
            Py_CLEAR(g_generic_type);
            return -1;
        }
    }
    if (PyObject_TypeCheck(o, (PyTypeObject *)g_ndarray_type)) return 1;
    if (PyObject_TypeCheck(o, (PyTypeObject *)g_generic_type)) return 2;
    return 0;
}

/* ------------------------------------------------------------- foreign memory owners */

typedef struct {
    PyObject *owner; /* ndarray / exporter, or NULL */
    Py_buffer view;  /* when has_view */
    int has_view;
} foreign_ctx;

static void foreign_free(void *p) {
    foreign_ctx *c = p;
    if (!Py_IsInitialized()) return; /* interpreter gone: the memory went with it */
    PyGILState_STATE g = PyGILState_Ensure();
    if (c->has_view) PyBuffer_Release(&c->view);
    Py_XDECREF(c->owner);
    PyMem_RawFree(c);
    PyGILState_Release(g);
}

/* ------------------------------------------------------------- ndarray -> tensor */

/* array-interface typestr ('<f4', '|b1', ...) -> dtype; -1 unsupported, -2 byte order */
static int typestr_dtype(const char *ts) {
    if (!ts || strlen(ts) < 3) return -1;
    const uint16_t one = 1;
    int little = *(const unsigned char *)&one == 1;
    if ((ts[0] == '>' && little) || (ts[0] == '<' && !little)) return -2;
    char kind = ts[1];
    int size = atoi(ts + 2);
    switch (kind) {
    case 'b': return size == 1 ? CG_DTYPE_BOOL : -1;
    case 'u': return size == 1 ? CG_DTYPE_U8 : size == 2 ? CG_DTYPE_U16 : size == 4 ? CG_DTYPE_U32 : size == 8 ? CG_DTYPE_U64 : -1;
    case 'i': return size == 1 ? CG_DTYPE_I8 : size == 2 ? CG_DTYPE_I16 : size == 4 ? CG_DTYPE_I32 : size == 8 ? CG_DTYPE_I64 : -1;
    case 'f': return size == 2 ? CG_DTYPE_F16 : size == 4 ? CG_DTYPE_F32 : size == 8 ? CG_DTYPE_F64 : -1;
    default: return -1;
    }
}

static const char *dtype_typestr(cg_dtype dt) {
    switch (dt) {
    case CG_DTYPE_BOOL: return "|b1";
    case CG_DTYPE_U8: return "|u1";
    case CG_DTYPE_I8: return "|i1";
    case CG_DTYPE_I16: return "<i2";
    case CG_DTYPE_I32: return "<i4";
    case CG_DTYPE_I64: return "<i8";
    case CG_DTYPE_F16: return "<f2";
    case CG_DTYPE_F32: return "<f4";
    case CG_DTYPE_F64: return "<f8";
    case CG_DTYPE_U16: return "<u2";
    case CG_DTYPE_U32: return "<u4";
    case CG_DTYPE_U64: return "<u8";
    default: return NULL;
    }
}

static int long_item(PyObject *seq, Py_ssize_t i, int64_t *v) {
    PyObject *o = PySequence_GetItem(seq, i);
    if (!o) return -1;
    long long x = PyLong_AsLongLong(o);
    Py_DECREF(o);
    if (x == -1 && PyErr_Occurred()) return -1;
    *v = x;
    return 0;
}

/* The dtype of a NumPy scalar (np.float32(1), ...): >= 0, -1 when `o` is no
 * NumPy scalar, -2 when its dtype is unsupported (TypeError raised). */
int cgpy_numpy_scalar_dtype(PyObject *o) {
    if (PyFloat_CheckExact(o) || PyLong_CheckExact(o) || PyBool_Check(o) || cgpy_is_tensor(o)) return -1;
    int k = cgpy_numpy_kind(o);
    if (k != 2) return k < 0 ? -2 : -1;
    PyObject *d = PyObject_GetAttrString(o, "dtype"), *str = d ? PyObject_GetAttrString(d, "str") : NULL;
    Py_XDECREF(d);
    if (!str) return -2;
    int dt = PyUnicode_Check(str) ? typestr_dtype(PyUnicode_AsUTF8(str)) : -1;
    if (dt < 0)
        PyErr_Format(PyExc_TypeError, "can't convert a NumPy scalar of dtype %U to a tensor element", str);
    Py_DECREF(str);
    return dt < 0 ? -2 : dt;
}

/* A zero-copy tensor over an ndarray's memory (through its
 * __array_interface__); the tensor keeps the array alive. */
static cg_tensor *view_of_ndarray(PyObject *arr) {
    PyObject *ai = PyObject_GetAttrString(arr, "__array_interface__");
    if (!ai) return NULL;
    cg_tensor *t = NULL;
    PyObject *typestr = PyDict_GetItemString(ai, "typestr"), *shape = PyDict_GetItemString(ai, "shape"),
             *strides = PyDict_GetItemString(ai, "strides"), *data = PyDict_GetItemString(ai, "data");
    if (!typestr || !shape || !data || !PyTuple_Check(data) || PyTuple_GET_SIZE(data) != 2 || !PyUnicode_Check(typestr)) {
        PyErr_SetString(PyExc_TypeError, "from_numpy(): the array exports an unsupported __array_interface__");
        goto done;
    }
    int dt = typestr_dtype(PyUnicode_AsUTF8(typestr));
    if (dt == -2) {
        PyErr_SetString(PyExc_ValueError, "given numpy array has byte order different from the native byte order. "
                                          "Conversion between byte orders is currently not supported.");
        goto done;
    }
    if (dt < 0) {
        PyObject *d = PyObject_GetAttrString(arr, "dtype"), *dty = d ? PyObject_GetAttrString(d, "type") : NULL,
                 *ds = dty ? PyObject_GetAttrString(dty, "__name__") : NULL;
        Py_XDECREF(dty);
        if (ds)
            PyErr_Format(PyExc_TypeError,
                         "can't convert np.ndarray of type numpy.%U. The only supported types are: float64, float32, "
                         "float16, int64, int32, int16, int8, uint64, uint32, uint16, uint8, and bool.",
                         ds);
        Py_XDECREF(d);
        Py_XDECREF(ds);
        goto done;
    }
    Py_ssize_t nd = PyTuple_Size(shape);
    if (nd < 0) goto done;
    if (nd > CG_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "from_numpy(): the array has %zd dims; the maximum is %d", nd, CG_MAX_DIMS);
        goto done;
    }
    int64_t sh[CG_MAX_DIMS], st[CG_MAX_DIMS], isz = (int64_t)cg_dtype_size((cg_dtype)dt);
    for (Py_ssize_t i = 0; i < nd; i++)
        if (long_item(shape, i, &sh[i])) goto done;
    int have_strides = strides && strides != Py_None;
    for (Py_ssize_t i = 0; have_strides && i < nd; i++) {
        if (long_item(strides, i, &st[i])) goto done;
        if (st[i] < 0) {
            PyErr_SetString(PyExc_ValueError,
                            "At least one stride in the given numpy array is negative, and tensors with negative "
                            "strides are not currently supported. (You can probably work around this by making a copy "
                            "of your array  with array.copy().) ");
            goto done;
        }
        if (st[i] % isz) {
            PyErr_SetString(PyExc_ValueError, "given numpy array strides not a multiple of the element byte size. "
                                              "Copy the numpy array to reallocate the memory.");
            goto done;
        }
        st[i] /= isz;
    }
    void *ptr = PyLong_AsVoidPtr(PyTuple_GET_ITEM(data, 0));
    if (PyErr_Occurred()) goto done;
    int readonly = PyObject_IsTrue(PyTuple_GET_ITEM(data, 1));
    if (readonly < 0) goto done;
    foreign_ctx *c = PyMem_RawCalloc(1, sizeof *c);
    if (!c) {
        PyErr_NoMemory();
        goto done;
    }
    c->owner = Py_NewRef(arr);
    t = cg_from_blob(ptr, (int)nd, sh, have_strides ? st : NULL, (cg_dtype)dt, foreign_free, c);
    if (!t) {
        cgpy_raise();
        Py_DECREF(c->owner);
        PyMem_RawFree(c);
    } else if (readonly) cg_tensor_mark_readonly(t); /* Note [Read-only memory] */
done:
    Py_DECREF(ai);
    return t;
}

/* A tensor from an ndarray or a NumPy scalar: a zero-copy view (copy = 0,
 * ndarrays only) or a contiguous copy, cast to dtype (-1 keeps the array's).
 * New reference or NULL (raised). */
cg_tensor *cgpy_tensor_from_numpy(PyObject *o, int dtype, int copy) {
    PyObject *arr = NULL;
    if (cgpy_numpy_kind(o) == 2) copy = 1; /* a NumPy scalar */
    if (copy) { /* through a contiguous array (any strides, scalars as 0-d arrays) */
        PyObject *np = PyImport_ImportModule("numpy");
        /* np.array(o, order="C"), not ascontiguousarray: that one makes 0-d arrays 1-d */
        PyObject *fn = np ? PyObject_GetAttrString(np, "array") : NULL;
        PyObject *args = fn ? PyTuple_Pack(1, o) : NULL;
        PyObject *kw = args ? Py_BuildValue("{s:s}", "order", "C") : NULL;
        arr = kw ? PyObject_Call(fn, args, kw) : NULL;
        Py_XDECREF(kw);
        Py_XDECREF(args);
        Py_XDECREF(fn);
        Py_XDECREF(np);
        if (!arr) return NULL;
    } else {
        arr = Py_NewRef(o);
    }
    cg_tensor *v = view_of_ndarray(arr);
    Py_DECREF(arr);
    if (!v) return NULL;
    cg_dtype dt = dtype < 0 ? cg_tensor_dtype(v) : (cg_dtype)dtype;
    if (!copy && dt == cg_tensor_dtype(v)) return v;
    bool prev = cg_set_grad_enabled(false);
    cg_tensor *r = cg_to_dtype(v, dt);
    if (r == v) {
        cg_tensor_release(r);
        r = cg_clone(v);
    }
    cg_set_grad_enabled(prev);
    cg_tensor_release(v);
    if (!r) cgpy_raise();
    return r;
}

/* from_numpy(ndarray): a tensor sharing the array's memory */
static PyObject *f_from_numpy(PyObject *m, PyObject *arr) {
    (void)m;
    int k = cgpy_numpy_kind(arr);
    if (k < 0) return NULL;
    if (k != 1) {
        PyErr_Format(PyExc_TypeError, "expected np.ndarray (got %.100s)", Py_TYPE(arr)->tp_name);
        return NULL;
    }
    /* a non-writable array gives a read-only tensor (Note [Read-only memory]) */
    return cgpy_result(cgpy_tensor_from_numpy(arr, -1, 0));
}

/* ------------------------------------------------------------- buffer protocol -> tensor (frombuffer, asarray) */

/* PyTorch's frombuffer: a 1-D tensor of `count` elements of dtype (count < 0:
 * as many as fit) sharing the bytes of any object exporting a contiguous
 * buffer (bytes, bytearray, memoryview, array.array, mmap), from byte
 * `offset`. The buffer's own format is not looked at: the bytes are read as
 * dtype, as in PyTorch. A read-only buffer gives a read-only tensor (Note
 * [Read-only memory]). New reference or NULL (raised). */
static cg_tensor *tensor_of_buffer(PyObject *o, cg_dtype dt, long long count, long long offset) {
    foreign_ctx *c = PyMem_RawCalloc(1, sizeof *c);
    if (!c) return (cg_tensor *)PyErr_NoMemory();
    if (PyObject_GetBuffer(o, &c->view, PyBUF_SIMPLE) < 0) {
        PyMem_RawFree(c);
        return NULL;
    }
    c->has_view = 1;
    Py_buffer *v = &c->view;
    long long len = (long long)v->len, esz = (long long)cg_dtype_size(dt);
    if (count == 0 || len == 0) {
        PyErr_Format(PyExc_ValueError, "frombuffer(): both buffer length (%lld) and count (%lld) must not be 0", len, count);
        goto fail;
    }
    if (offset < 0 || offset >= len) {
        PyErr_Format(PyExc_ValueError, "frombuffer(): offset (%lld bytes) must be non-negative and no greater than "
                     "buffer length (%lld bytes) minus 1", offset, len);
        goto fail;
    }
    if (count < 0) {
        if ((len - offset) % esz) {
            PyErr_Format(PyExc_ValueError, "frombuffer(): buffer length (%lld bytes) after offset (%lld bytes) must be "
                         "a multiple of element size (%lld)", len, offset, esz);
            goto fail;
        }
        count = (len - offset) / esz;
    } else if (count > (len - offset) / esz) {
        PyErr_Format(PyExc_ValueError, "frombuffer(): requested buffer length (%lld elements of %lld bytes) after offset "
                     "(%lld bytes) must not be greater than actual buffer length (%lld bytes)", count, esz, offset, len);
        goto fail;
    }
    int64_t n = count;
    cg_tensor *t = cg_from_blob((char *)v->buf + offset, 1, &n, NULL, dt, foreign_free, c);
    if (!t) {
        cgpy_raise();
        goto fail;
    }
    if (v->readonly) cg_tensor_mark_readonly(t);
    return t;
fail:
    PyBuffer_Release(&c->view);
    PyMem_RawFree(c);
    return NULL;
}

/* frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False) */
static PyObject *f_frombuffer(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("frombuffer", CGPY_ARG("buffer", CGPY_A_OBJ, CGPY_REQ), CGPY_ARG("dtype",
                                      CGPY_A_DTYPE, CGPY_KWONLY),
                                      CGPY_ARG("count", CGPY_A_INT, CGPY_KWONLY, -1), CGPY_ARG("offset", CGPY_A_INT,
                                          CGPY_KWONLY),
                                      CGPY_ARG("requires_grad", CGPY_A_BOOL, CGPY_KWONLY));
    cgpy_val v[5];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *obj = v[0].o;
    int dt = (int)v[1].dtype, rg = v[4].b;
    long long count = v[2].i, offset = v[3].i;
    if (dt < 0) {
        PyErr_SetString(PyExc_TypeError, "frombuffer() missing 1 required keyword argument: 'dtype'");
        return NULL;
    }
    if (!PyObject_CheckBuffer(obj)) {
        PyErr_Format(PyExc_TypeError, "frombuffer(): object of type %.100s does not implement the buffer protocol",
                     Py_TYPE(obj)->tp_name);
        return NULL;
    }
    PyObject *r = cgpy_result(tensor_of_buffer(obj, (cg_dtype)dt, count, offset));
    if (r && rg && cgpy_check(cg_tensor_set_requires_grad(cgpy_t(r), true))) Py_CLEAR(r);
    return r;
}

/* ------------------------------------------------------------- Tensor.numpy() */

/* The object a NumPy array made by Tensor.numpy() keeps as its base: it owns
 * a reference to the C tensor and describes it through __array_interface__. */
typedef struct {
    PyObject_HEAD
    cg_tensor *t;
} ArrayHolder;

static void holder_dealloc(PyObject *self) {
    cg_tensor_release(((ArrayHolder *)self)->t);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *int_tuple(int n, const int64_t *v, int64_t scale) {
    PyObject *tup = PyTuple_New(n);
    for (int i = 0; tup && i < n; i++) {
        PyObject *e = PyLong_FromLongLong(v[i] * scale);
        if (!e) {
            Py_CLEAR(tup);
            break;
        }
        PyTuple_SET_ITEM(tup, i, e);
    }
    return tup;
}

static PyObject *holder_interface(PyObject *self, void *c) {
    (void)c;
    cg_tensor *t = ((ArrayHolder *)self)->t;
    int nd = cg_tensor_ndim(t);
    PyObject *shape = int_tuple(nd, cg_tensor_shape(t), 1);
    PyObject *strides = int_tuple(nd, cg_tensor_strides(t), (int64_t)cg_dtype_size(cg_tensor_dtype(t)));
    void *p = cg_tensor_data(t);
    static char dummy[16]; /* NumPy wants a non-NULL pointer even for zero elements */
    PyObject *r = NULL;
    if (shape && strides)
        r = Py_BuildValue("{s:i,s:O,s:s,s:(N,O),s:O}", "version", 3, "shape", shape, "typestr",
                          dtype_typestr(cg_tensor_dtype(t)), "data", PyLong_FromVoidPtr(p ? p : dummy),
                          cg_tensor_is_readonly(t) ? Py_True : Py_False,
                          "strides", strides);
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    return r;
}

static PyGetSetDef holder_getset[] = {
    {"__array_interface__", holder_interface, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject ArrayHolder_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cgrad._C._ArrayHolder",
    .tp_basicsize = sizeof(ArrayHolder),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = holder_dealloc,
    .tp_getset = holder_getset,
};

static PyObject *m_numpy(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("numpy", CGPY_ARG("force", CGPY_A_BOOL, CGPY_KWONLY));
    cgpy_val v[1];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    int force = v[0].b;
    cg_tensor *t = cgpy_t(self);
    if (cg_tensor_requires_grad(t) && !force) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.");
        return NULL;
    }
    if (cg_tensor_device(t).type != CG_DEVICE_CPU) {
        char dev[32];
        PyErr_Format(PyExc_TypeError, "can't convert %s device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
                                      "to host memory first.", cgpy_device_str(cg_tensor_device(t), dev, sizeof dev));
        return NULL;
    }
    if (!dtype_typestr(cg_tensor_dtype(t))) {
        PyErr_Format(PyExc_TypeError, "Got unsupported ScalarType %s", cg_dtype_name(cg_tensor_dtype(t)));
        return NULL;
    }
    if (PyType_Ready(&ArrayHolder_Type) < 0) return NULL;
    PyObject *np = PyImport_ImportModule("numpy");
    if (!np) return NULL;
    ArrayHolder *h = PyObject_New(ArrayHolder, &ArrayHolder_Type);
    if (!h) {
        Py_DECREF(np);
        return NULL;
    }
    cg_tensor_retain(t);
    h->t = t;
    PyObject *arr = PyObject_CallMethod(np, "asarray", "O", (PyObject *)h);
    Py_DECREF(h);
    Py_DECREF(np);
    return arr;
}

/* ------------------------------------------------------------- as_tensor / asarray */

static int same_device(cg_device a, cg_device b) { return cg_device_eq(a, b); }

/* a tensor (alias when dtype / device already match) */
static PyObject *tensor_to(PyObject *x, int dt, int has_dev, cg_device dev, int copy) {
    cg_tensor *t = cgpy_t(x);
    cg_dtype want = dt < 0 ? cg_tensor_dtype(t) : (cg_dtype)dt;
    if (!copy && want == cg_tensor_dtype(t) && (!has_dev || same_device(dev, cg_tensor_device(t)))) return Py_NewRef(x);
    cg_tensor *a = has_dev ? cg_to_device(t, dev) : (cg_tensor_retain(t), t);
    if (!a) return cgpy_raise();
    cg_tensor *b = cg_to_dtype(a, want);
    cg_tensor_release(a);
    if (!b) return cgpy_raise();
    if (copy && b == t) {
        cg_tensor *c = cg_clone(b);
        cg_tensor_release(b);
        b = c;
    }
    return cgpy_wrap(b);
}

/* a zero-copy tensor from foreign memory moved / cast as asked; copy: 1
 * forces a copy, 0 forbids one (ValueError when the dtype / device needs it),
 * -1 copies only when needed */
static PyObject *finish_foreign(cg_tensor *v, int dt, int has_dev, cg_device dev, int copy) {
    if (!v) return NULL;
    PyObject *x = cgpy_wrap(v);
    if (!x) return NULL;
    PyObject *r = tensor_to(x, dt, has_dev, dev, copy == 1);
    if (r && copy == 0 && r != x) {
        Py_CLEAR(r);
        PyErr_SetString(PyExc_ValueError, "asarray(): the requested dtype or device needs a copy, but copy=False");
    }
    Py_DECREF(x);
    return r;
}

extern cg_tensor *cgpy_tensor_from_data(PyObject *data, int dtype, cg_device dev); /* tensor.c */
static PyObject *f_from_dlpack_impl(PyObject *ext);

/* as_tensor(data, dtype=None, device=None): shares memory when possible */
static PyObject *f_as_tensor(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("as_tensor", CGPY_ARG("data", CGPY_A_OBJ, CGPY_REQ), CGPY_ARG("dtype",
                                      CGPY_A_DTYPE),
                                      CGPY_ARG("device", CGPY_A_DEVICE));
    cgpy_val v[3];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *data = v[0].o;
    int dt = (int)v[1].dtype, has_dev = cgpy_given(&v[2]);
    cg_device dev = v[2].dev;
    if (cgpy_is_tensor(data)) return tensor_to(data, dt, has_dev, dev, 0);
    int k = cgpy_numpy_kind(data);
    if (k < 0) return NULL;
    if (k == 1) return finish_foreign(cgpy_tensor_from_numpy(data, -1, 0), dt, has_dev, dev, -1);
    return cgpy_result(cgpy_tensor_from_data(data, dt, dev));
}

/* asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False) */
static PyObject *f_asarray(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("asarray", CGPY_ARG("obj", CGPY_A_OBJ, CGPY_REQ), CGPY_ARG("dtype", CGPY_A_DTYPE,
                                      CGPY_KWONLY),
                                      CGPY_ARG("device", CGPY_A_DEVICE, CGPY_KWONLY), CGPY_ARG("copy", CGPY_A_OBJ,
                                          CGPY_KWONLY),
                                      CGPY_ARG("requires_grad", CGPY_A_BOOL, CGPY_KWONLY));
    cgpy_val v[5];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *obj = v[0].o, *copyo = v[3].o ? v[3].o : Py_None;
    int dt = (int)v[1].dtype, rg = v[4].b, has_dev = cgpy_given(&v[2]);
    cg_device dev = v[2].dev;
    int copy = copyo == Py_None ? -1 : PyObject_IsTrue(copyo);
    if (copy == -1 && copyo != Py_None) return NULL;
    PyObject *r = NULL;
    if (cgpy_is_tensor(obj)) {
        r = tensor_to(obj, dt, has_dev, dev, copy == 1);
    } else {
        int k = cgpy_numpy_kind(obj);
        if (k < 0) return NULL;
        if (k == 1) {
            r = finish_foreign(cgpy_tensor_from_numpy(obj, -1, 0), dt, has_dev, dev, copy);
        } else if (k == 0 && PyObject_HasAttrString(obj, "__dlpack__")) {
            PyObject *x = f_from_dlpack_impl(obj);
            if (!x) return NULL;
            r = finish_foreign((cg_tensor_retain(cgpy_t(x)), cgpy_t(x)), dt, has_dev, dev, copy);
            Py_DECREF(x);
        } else if (k == 0 && PyObject_CheckBuffer(obj)) { /* as PyTorch: the bytes read as dtype (default float) */
            r = finish_foreign(tensor_of_buffer(obj, dt < 0 ? cgpy_default_dtype : (cg_dtype)dt, -1, 0), -1, has_dev,
                               dev, copy);
        } else {
            if (copy == 0) {
                PyErr_Format(PyExc_ValueError, "asarray(): can't alias a %.100s without copying (copy=False)",
                             Py_TYPE(obj)->tp_name);
                return NULL;
            }
            r = cgpy_result(cgpy_tensor_from_data(obj, dt, has_dev ? dev : cg_cpu()));
        }
    }
    if (r && copy == 0 && cgpy_is_tensor(obj) && r != obj) {
        Py_DECREF(r);
        PyErr_SetString(PyExc_ValueError, "asarray(): the requested dtype or device needs a copy, but copy=False");
        return NULL;
    }
    if (r && rg && cgpy_check(cg_tensor_set_requires_grad(cgpy_t(r), true))) Py_CLEAR(r);
    return r;
}

/* ------------------------------------------------------------- DLPack
 * The structs of dlpack.h (v1.0), declared here: the layout is the ABI. */

typedef struct { int32_t device_type, device_id; } DLDevice;
typedef struct { uint8_t code, bits; uint16_t lanes; } DLDataType;
typedef struct {
    void *data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape, *strides;
    uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;
typedef struct { uint32_t major, minor; } DLPackVersion;
typedef struct DLManagedTensorVersioned {
    DLPackVersion version;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensorVersioned *self);
    uint64_t flags;
    DLTensor dl_tensor;
} DLManagedTensorVersioned;

enum { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLBool = 6 };
#define DLPACK_FLAG_BITMASK_READ_ONLY (1ULL << 0)

static DLDataType dl_dtype(cg_dtype dt) {
    DLDataType d = {kDLFloat, (uint8_t)(8 * cg_dtype_size(dt)), 1};
    if (dt == CG_DTYPE_BOOL) d.code = kDLBool;
    else if (dt == CG_DTYPE_U8 || dt == CG_DTYPE_U16 || dt == CG_DTYPE_U32 || dt == CG_DTYPE_U64) d.code = kDLUInt;
    else if (dt == CG_DTYPE_BF16) d.code = kDLBfloat;
    else if (!cg_dtype_is_floating(dt)) d.code = kDLInt;
    return d;
}
static int dtype_of_dl(DLDataType d) {
    if (d.lanes != 1) return -1;
    switch (d.code) {
    case kDLBool: return d.bits == 8 ? CG_DTYPE_BOOL : -1;
    case kDLUInt:
        return d.bits == 8 ? CG_DTYPE_U8 : d.bits == 16 ? CG_DTYPE_U16 : d.bits == 32 ? CG_DTYPE_U32
               : d.bits == 64 ? CG_DTYPE_U64 : -1;
    case kDLInt:
        return d.bits == 8 ? CG_DTYPE_I8 : d.bits == 16 ? CG_DTYPE_I16 : d.bits == 32 ? CG_DTYPE_I32
               : d.bits == 64 ? CG_DTYPE_I64 : -1;
    case kDLFloat: return d.bits == 16 ? CG_DTYPE_F16 : d.bits == 32 ? CG_DTYPE_F32 : d.bits == 64 ? CG_DTYPE_F64 : -1;
    case kDLBfloat: return d.bits == 16 ? CG_DTYPE_BF16 : -1;
    default: return -1;
    }
}

/* what an exported capsule owns: the managed struct, the tensor, shape and strides */
typedef struct {
    union {
        DLManagedTensor legacy;
        DLManagedTensorVersioned versioned;
    } m;
    cg_tensor *t;
    int64_t shape[CG_MAX_DIMS], strides[CG_MAX_DIMS];
} export_ctx;

static void export_free(export_ctx *c) {
    cg_tensor_release(c->t);
    free(c);
}
static void legacy_deleter(DLManagedTensor *self) { export_free(self->manager_ctx); }
static void versioned_deleter(DLManagedTensorVersioned *self) { export_free(self->manager_ctx); }

static void capsule_legacy_destructor(PyObject *cap) {
    if (PyCapsule_IsValid(cap, "dltensor")) { /* never consumed */
        DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
        if (m && m->deleter) m->deleter(m);
    }
}
static void capsule_versioned_destructor(PyObject *cap) {
    if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
        DLManagedTensorVersioned *m = PyCapsule_GetPointer(cap, "dltensor_versioned");
        if (m && m->deleter) m->deleter(m);
    }
}

/* Note [DLPack streams]: a CUDA consumer names the stream it will read on
 * (None: the legacy default stream; -1: no synchronization wanted). cgrad's
 * work on a device runs on that device's one stream, which the engine does
 * not expose for an event to be recorded on, so the producer side waits for
 * the device instead (cg_cuda_synchronize) unless the consumer passed -1:
 * slower than an event, never a race. A CPU tensor takes None or -1 only. */
/* __dlpack__(stream=None, *, max_version=None, dl_device=None, copy=None) */
static PyObject *m_dlpack(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("__dlpack__", CGPY_ARG("stream", CGPY_A_OBJ), CGPY_ARG("max_version", CGPY_A_OBJ,
                                      CGPY_KWONLY),
                                      CGPY_ARG("dl_device", CGPY_A_OBJ, CGPY_KWONLY), CGPY_ARG("copy", CGPY_A_OBJ,
                                          CGPY_KWONLY));
    cgpy_val v[4];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *stream = v[0].o ? v[0].o : Py_None, *max_version = v[1].o ? v[1].o : Py_None;
    PyObject *dl_device = v[2].o ? v[2].o : Py_None, *copyo = v[3].o ? v[3].o : Py_None;
    cg_tensor *t = cgpy_t(self);
    if (cg_tensor_requires_grad(t)) {
        PyErr_SetString(PyExc_BufferError, "Can't export tensors that require gradient, use tensor.detach()");
        return NULL;
    }
    DLDevice dev = {0, 0};
    if (!cg_device_to_dlpack(cg_tensor_device(t), &dev.device_type, &dev.device_id)) {
        PyErr_Format(PyExc_BufferError, "__dlpack__: can't export a tensor on device '%s' (it has no DLPack device type)",
                     cg_device_name(cg_tensor_device(t)));
        return NULL;
    }
    cg_device tdev = cg_tensor_device(t);
    int sync = 0; /* Note [DLPack streams] */
    if (tdev.type == CG_DEVICE_CUDA) {
        if (stream != Py_None && (!PyLong_Check(stream) || PyBool_Check(stream))) {
            PyErr_Format(PyExc_TypeError, "__dlpack__: stream must be None or an int, got %.100s",
                         Py_TYPE(stream)->tp_name);
            return NULL;
        }
        long long s = stream == Py_None ? 1 : PyLong_AsLongLong(stream);
        if (s == -1 && PyErr_Occurred()) return NULL;
        if (s == 0) {
            PyErr_SetString(PyExc_ValueError, "__dlpack__: stream 0 is ambiguous for CUDA (use 1 for the legacy "
                                              "default stream, 2 for the per-thread one)");
            return NULL;
        }
        sync = s != -1;
    } else if (stream != Py_None) {
        long s = PyLong_Check(stream) ? PyLong_AsLong(stream) : 0;
        if (!PyLong_Check(stream) || s != -1) {
            PyErr_SetString(PyExc_ValueError, "__dlpack__: stream must be None (or -1) for a CPU tensor");
            return NULL;
        }
    }
    if (dl_device != Py_None) {
        int32_t dtyp = -1, did = -1;
        if (!PyArg_ParseTuple(dl_device, "ii:__dlpack__ dl_device", &dtyp, &did)) return NULL;
        if (dtyp != dev.device_type || did != dev.device_id) {
            PyErr_Format(PyExc_BufferError, "__dlpack__: can't export a %s tensor to DLPack device (%d, %d) (no copy "
                         "between devices)", cg_device_name(cg_tensor_device(t)), (int)dtyp, (int)did);
            return NULL;
        }
    }
    int versioned = 0;
    if (max_version != Py_None) {
        int major = 0, minor = 0;
        if (!PyArg_ParseTuple(max_version, "ii:__dlpack__ max_version", &major, &minor)) return NULL;
        versioned = major >= 1;
    }
    int copy = copyo == Py_None ? 0 : PyObject_IsTrue(copyo);
    if (copy < 0) return NULL;
    export_ctx *c = calloc(1, sizeof *c);
    if (!c) return PyErr_NoMemory();
    if (copy) {
        bool prev = cg_set_grad_enabled(false);
        c->t = cg_clone(t);
        cg_set_grad_enabled(prev);
        if (!c->t) {
            free(c);
            return cgpy_raise();
        }
    } else {
        cg_tensor_retain(t);
        c->t = t;
    }
    void *data = cgpy_data_ptr(c->t);
    if (!data && PyErr_Occurred()) {
        export_free(c);
        return NULL;
    }
    if (sync) { /* the consumer's stream may read once the device's stream has done the work on t */
        cg_status st;
        Py_BEGIN_ALLOW_THREADS
        st = cg_cuda_synchronize(tdev.index);
        Py_END_ALLOW_THREADS
        if (cgpy_check(st)) {
            export_free(c);
            return NULL;
        }
    }
    int nd = cg_tensor_ndim(c->t);
    memcpy(c->shape, cg_tensor_shape(c->t), (size_t)nd * sizeof(int64_t));
    memcpy(c->strides, cg_tensor_strides(c->t), (size_t)nd * sizeof(int64_t));
    DLTensor dl = {
        .data = data, .device = dev, .ndim = nd, .dtype = dl_dtype(cg_tensor_dtype(c->t)),
        .shape = c->shape, .strides = c->strides, .byte_offset = 0,
    };
    PyObject *cap;
    if (versioned) {
        c->m.versioned.version = (DLPackVersion){1, 0};
        c->m.versioned.manager_ctx = c;
        c->m.versioned.deleter = versioned_deleter;
        c->m.versioned.flags = (copy ? (1ULL << 1) /* IS_COPIED */ : 0) |
                               (cg_tensor_is_readonly(t) ? DLPACK_FLAG_BITMASK_READ_ONLY : 0);
        c->m.versioned.dl_tensor = dl;
        cap = PyCapsule_New(&c->m.versioned, "dltensor_versioned", capsule_versioned_destructor);
    } else {
        c->m.legacy.dl_tensor = dl;
        c->m.legacy.manager_ctx = c;
        c->m.legacy.deleter = legacy_deleter;
        cap = PyCapsule_New(&c->m.legacy, "dltensor", capsule_legacy_destructor);
    }
    if (!cap) export_free(c);
    return cap;
}

static PyObject *m_dlpack_device(PyObject *self, PyObject *u) {
    (void)u;
    cg_device d = cg_tensor_device(cgpy_t(self));
    int32_t type, id;
    if (!cg_device_to_dlpack(d, &type, &id)) {
        PyErr_Format(PyExc_BufferError, "__dlpack_device__: device '%s' has no DLPack device type", cg_device_name(d));
        return NULL;
    }
    return Py_BuildValue("(ii)", (int)type, (int)id);
}

/* the producer's managed tensor, released when the imported storage dies */
typedef struct {
    void *managed;
    int versioned;
} import_ctx;

static void import_free(void *p) {
    import_ctx *c = p;
    int have_py = Py_IsInitialized();
    PyGILState_STATE g = have_py ? PyGILState_Ensure() : PyGILState_UNLOCKED;
    if (c->versioned) {
        DLManagedTensorVersioned *m = c->managed;
        if (m->deleter) m->deleter(m);
    } else {
        DLManagedTensor *m = c->managed;
        if (m->deleter) m->deleter(m);
    }
    if (have_py) PyGILState_Release(g);
    free(c);
}

/* a tensor sharing the memory of a DLPack capsule (consumed: renamed "used_...") */
static PyObject *from_capsule(PyObject *cap) {
    int versioned = PyCapsule_IsValid(cap, "dltensor_versioned");
    if (!versioned && !PyCapsule_IsValid(cap, "dltensor")) {
        PyErr_SetString(PyExc_ValueError, "from_dlpack(): expected a DLPack capsule named 'dltensor' or "
                                          "'dltensor_versioned' that has not been consumed yet");
        return NULL;
    }
    void *managed = PyCapsule_GetPointer(cap, versioned ? "dltensor_versioned" : "dltensor");
    if (!managed) return NULL;
    DLTensor *dl;
    if (versioned) {
        DLManagedTensorVersioned *m = managed;
        if (m->version.major != 1) {
            PyErr_Format(PyExc_BufferError, "from_dlpack(): unsupported DLPack version %u.%u (cgrad reads 1.x)",
                         m->version.major, m->version.minor);
            return NULL;
        }
        dl = &m->dl_tensor;
    } else {
        dl = &((DLManagedTensor *)managed)->dl_tensor;
    }
    cg_device dev;
    if (!cg_device_from_dlpack(dl->device.device_type, dl->device.device_id, &dev)) {
        PyErr_Format(PyExc_BufferError, "from_dlpack(): unsupported DLPack device (%d, %d) (no cgrad device serves it)",
                     (int)dl->device.device_type, (int)dl->device.device_id);
        return NULL;
    }
    int dt = dtype_of_dl(dl->dtype);
    if (dt < 0) {
        PyErr_Format(PyExc_BufferError, "from_dlpack(): unsupported DLPack dtype (code %d, bits %d, lanes %d)",
                     (int)dl->dtype.code, (int)dl->dtype.bits, (int)dl->dtype.lanes);
        return NULL;
    }
    if (dl->ndim < 0 || dl->ndim > CG_MAX_DIMS) {
        PyErr_Format(PyExc_BufferError, "from_dlpack(): %d dims (the maximum is %d)", (int)dl->ndim, CG_MAX_DIMS);
        return NULL;
    }
    if (dl->ndim > 0 && !dl->shape) {
        PyErr_Format(PyExc_BufferError, "from_dlpack(): %d dims but no shape array", (int)dl->ndim);
        return NULL;
    }
    int empty = 0;
    for (int i = 0; i < dl->ndim; i++) empty |= dl->shape[i] == 0;
    if (!dl->data && !empty) { /* only a zero-element tensor may come without memory */
        PyErr_SetString(PyExc_BufferError, "from_dlpack(): the DLPack tensor has a NULL data pointer but a non-empty shape");
        return NULL;
    }
    for (int i = 0; dl->strides && i < dl->ndim; i++)
        if (dl->strides[i] < 0) {
            PyErr_SetString(PyExc_BufferError, "from_dlpack(): negative strides are not supported");
            return NULL;
        }
    import_ctx *c = malloc(sizeof *c);
    if (!c) return PyErr_NoMemory();
    c->managed = managed;
    c->versioned = versioned;
    static char dummy[16]; /* zero-element tensors may come with a NULL data pointer */
    char *data = dl->data ? (char *)dl->data + dl->byte_offset : dummy;
    cg_tensor *t = cg_from_blob_on(data, dl->ndim, dl->shape, dl->strides, (cg_dtype)dt, import_free, c, dev);
    if (!t) {
        free(c);
        return cgpy_raise(); /* the capsule still owns the producer's tensor */
    }
    if (versioned && (((DLManagedTensorVersioned *)managed)->flags & DLPACK_FLAG_BITMASK_READ_ONLY))
        cg_tensor_mark_readonly(t); /* Note [Read-only memory] */
    if (PyCapsule_SetName(cap, versioned ? "used_dltensor_versioned" : "used_dltensor")) {
        cg_tensor_release(t);
        return NULL;
    }
    return cgpy_wrap(t);
}

static PyObject *f_from_dlpack_impl(PyObject *ext) {
    if (PyCapsule_CheckExact(ext)) return from_capsule(ext);
    PyObject *meth = PyObject_GetAttrString(ext, "__dlpack__");
    if (!meth) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "from_dlpack(): expected an object with __dlpack__ or a DLPack capsule, got %.100s",
                     Py_TYPE(ext)->tp_name);
        return NULL;
    }
    PyObject *devf = PyObject_CallMethod(ext, "__dlpack_device__", NULL);
    if (!devf) {
        Py_DECREF(meth);
        return NULL;
    }
    int dtyp = 0, did = 0;
    int ok = PyArg_ParseTuple(devf, "ii", &dtyp, &did);
    Py_DECREF(devf);
    if (!ok) {
        Py_DECREF(meth);
        return NULL;
    }
    cg_device dev;
    if (!cg_device_from_dlpack(dtyp, did, &dev)) {
        Py_DECREF(meth);
        PyErr_Format(PyExc_BufferError, "from_dlpack(): unsupported DLPack device (%d, %d) (no cgrad device serves it)",
                     dtyp, did);
        return NULL;
    }
    /* ask for a versioned capsule; producers that predate DLPack 1.0 reject the keyword */
    PyObject *kw = Py_BuildValue("{s:(ii)}", "max_version", 1, 0), *empty = PyTuple_New(0), *cap = NULL;
    if (kw && empty) cap = PyObject_Call(meth, empty, kw);
    if (!cap && PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        cap = PyObject_CallNoArgs(meth);
    }
    Py_XDECREF(kw);
    Py_XDECREF(empty);
    Py_DECREF(meth);
    if (!cap) return NULL;
    PyObject *r = from_capsule(cap);
    Py_DECREF(cap);
    return r;
}

static PyObject *f_from_dlpack(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("from_dlpack", CGPY_ARG("ext_tensor", CGPY_A_OBJ, CGPY_REQ),
                                      CGPY_ARG("device", CGPY_A_DEVICE, CGPY_KWONLY), CGPY_ARG("copy", CGPY_A_OBJ,
                                          CGPY_KWONLY));
    cgpy_val v[3];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *ext = v[0].o, *devo = v[1].o ? v[1].o : Py_None, *copyo = v[2].o ? v[2].o : Py_None;
    cg_device dev = v[1].dev;
    int copy = copyo == Py_None ? 0 : PyObject_IsTrue(copyo);
    if (copy < 0) return NULL;
    PyObject *x = f_from_dlpack_impl(ext);
    if (!x || (devo == Py_None && !copy)) return x;
    PyObject *r = tensor_to(x, -1, devo != Py_None, dev, copy);
    Py_DECREF(x);
    return r;
}

/* ------------------------------------------------------------- raw bytes (pickling) */

/* _to_bytes(t): the elements in row-major order as bytes of t's dtype */
static PyObject *m_to_bytes(PyObject *self, PyObject *u) {
    (void)u;
    cg_tensor *t = cgpy_t(self);
    if (cg_tensor_device(t).type == CG_DEVICE_META) return PyBytes_FromStringAndSize(NULL, 0); /* no data */
    Py_ssize_t n = (Py_ssize_t)(cg_tensor_numel(t) * (int64_t)cg_dtype_size(cg_tensor_dtype(t)));
    PyObject *b = PyBytes_FromStringAndSize(NULL, n);
    if (!b) return NULL;
    if (n && cgpy_check(cg_tensor_copy_to_buffer(t, PyBytes_AS_STRING(b), cg_tensor_dtype(t)))) {
        Py_DECREF(b);
        return NULL;
    }
    return b;
}

/* _from_bytes(data, dtype, shape, device): a new tensor from _to_bytes' output */
static PyObject *f_from_bytes(PyObject *m, PyObject *args) {
    (void)m;
    Py_buffer buf;
    cg_dtype dt = CG_DTYPE_COUNT;
    PyObject *shape;
    cg_device dev = cg_cpu();
    if (!PyArg_ParseTuple(args, "y*O&O|O&:_from_bytes", &buf, cgpy_dtype_conv, &dt, &shape, cgpy_device_conv, &dev))
        return NULL;
    int nd;
    int64_t sh[CG_MAX_DIMS];
    PyObject *st = PyTuple_Pack(1, shape);
    int bad = !st || cgpy_parse_shape(st, 0, &nd, sh);
    Py_XDECREF(st);
    cg_tensor *t = NULL;
    if (!bad) {
        if (dev.type == CG_DEVICE_META) {
            t = cg_empty(nd, sh, dt, dev);
        } else {
            int64_t numel = 1;
            for (int i = 0; i < nd; i++) numel *= sh[i];
            if ((int64_t)buf.len != numel * (int64_t)cg_dtype_size(dt))
                PyErr_Format(PyExc_ValueError, "_from_bytes: %zd bytes do not hold %lld elements of %s", buf.len,
                             (long long)numel, cg_dtype_name(dt));
            else
                t = cg_from_data(buf.buf, nd, sh, dt);
            if (t && dev.type != CG_DEVICE_CPU) { /* a cuda tensor's bytes: made on the CPU, then copied over */
                cg_tensor *m = cg_to_device(t, dev);
                cg_tensor_release(t);
                t = m;
            }
        }
        if (!t && !PyErr_Occurred()) cgpy_raise();
    }
    PyBuffer_Release(&buf);
    return t ? cgpy_wrap(t) : NULL;
}

/* t._move_storage_to(buffer): t's storage (and every tensor on it) moves into the memory of a
 * writable buffer (an mmap of shared memory: Tensor.share_memory_), which it keeps exported
 * until the storage dies. */
static PyObject *m_move_storage_to(PyObject *self, PyObject *o) {
    foreign_ctx *c = PyMem_RawCalloc(1, sizeof *c);
    if (!c) return PyErr_NoMemory();
    if (PyObject_GetBuffer(o, &c->view, PyBUF_SIMPLE | PyBUF_WRITABLE) < 0) {
        PyMem_RawFree(c);
        return NULL;
    }
    c->has_view = 1;
    if (cg_tensor_move_storage(cgpy_t(self), c->view.buf, (size_t)c->view.len, foreign_free, c)) {
        PyBuffer_Release(&c->view);
        PyMem_RawFree(c);
        return cgpy_raise();
    }
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------- tables */

PyMethodDef cgpy_interop_methods[] = {
    {"_move_storage_to", m_move_storage_to, METH_O, NULL},
    CGPY_FASTKW("numpy", m_numpy),
    CGPY_FASTKW("__dlpack__", m_dlpack),
    {"__dlpack_device__", m_dlpack_device, METH_NOARGS, NULL},
    {"_to_bytes", m_to_bytes, METH_NOARGS, NULL},
    CGPY_TABLE_END,
};
PyMethodDef cgpy_interop_functions[] = {
    {"from_numpy", f_from_numpy, METH_O, NULL},
    CGPY_FASTKW("as_tensor", f_as_tensor),
    CGPY_FASTKW("asarray", f_asarray),
    CGPY_FASTKW("frombuffer", f_frombuffer),
    CGPY_FASTKW("from_dlpack", f_from_dlpack),
    {"_from_bytes", f_from_bytes, METH_VARARGS, NULL},
    CGPY_TABLE_END,
};
