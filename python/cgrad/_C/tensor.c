/* tensor.c — the Tensor base type (cgrad._C._TensorBase): object lifetime and
 * identity (Note [Python identity]), properties, and the core methods that
 * are not ops (size, stride, item, tolist, backward, hooks, to, ...). */
#include "cgpy.h"

#include <string.h>

PyTypeObject *cgpy_tensor_class = &CgTensorBase_Type;

/* ------------------------------------------------------------- Size (tuple subclass) */

static PyObject *size_numel(PyObject *self, PyObject *unused) {
    (void)unused;
    long long n = 1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(self); i++) {
        long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(self, i));
        if (v == -1 && PyErr_Occurred()) return NULL;
        if (__builtin_mul_overflow(n, v, &n)) {
            PyErr_SetString(PyExc_RuntimeError, "numel: integer multiplication overflow");
            return NULL;
        }
    }
    return PyLong_FromLongLong(n);
}
static PyObject *size_repr(PyObject *self) {
    PyObject *t = PyTuple_Type.tp_repr(self);
    if (!t) return NULL;
    PyObject *r = PyUnicode_FromFormat("cgrad.Size(%s%U%s)", PyTuple_GET_SIZE(self) ? "" : "", t, "");
    Py_DECREF(t);
    if (!r) return NULL;
    /* cgrad.Size((2, 3)) -> cgrad.Size([2, 3]) like PyTorch */
    PyObject *l = PySequence_List(self), *lr = l ? PyObject_Repr(l) : NULL;
    Py_XDECREF(l);
    Py_DECREF(r);
    if (!lr) return NULL;
    r = PyUnicode_FromFormat("cgrad.Size(%U)", lr);
    Py_DECREF(lr);
    return r;
}
static PyMethodDef size_methods[] = {{"numel", size_numel, METH_NOARGS, "number of elements"}, {NULL, NULL, 0, NULL}};
PyTypeObject CgSize_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cgrad.Size",
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_TUPLE_SUBCLASS,
    .tp_repr = size_repr,
    .tp_methods = size_methods,
};

static PyObject *make_size(int n, const int64_t *v) {
    PyObject *tup = PyTuple_New(n);
    if (!tup) return NULL;
    for (int i = 0; i < n; i++) PyTuple_SET_ITEM(tup, i, PyLong_FromLongLong(v[i]));
    PyObject *args = PyTuple_Pack(1, tup);
    Py_DECREF(tup);
    if (!args) return NULL;
    PyObject *s = PyTuple_Type.tp_new(&CgSize_Type, args, NULL);
    Py_DECREF(args);
    return s;
}

/* ------------------------------------------------------------- wrapping */

PyObject *cgpy_wrap_as(PyTypeObject *cls, cg_tensor *t) {
    if (!t) return cgpy_raise();
    PyObject *existing = cg_tensor_pyobj(t);
    if (existing && Py_TYPE(existing) == cls) {
        Py_INCREF(existing);
        cg_tensor_release(t);
        return existing;
    }
    CgTensorObject *o = (CgTensorObject *)cls->tp_alloc(cls, 0);
    if (!o) {
        cg_tensor_release(t);
        return NULL;
    }
    o->t = t;
    if (!existing) cg_tensor_set_pyobj(t, o);
    return (PyObject *)o;
}

PyObject *cgpy_wrap(cg_tensor *t) { return cgpy_wrap_as(cgpy_tensor_class, t); }

PyObject *cgpy_pyobj_of(cg_tensor *t) {
    PyObject *existing = cg_tensor_pyobj(t);
    if (existing) {
        Py_INCREF(existing);
        return existing;
    }
    cg_tensor_retain(t);
    return cgpy_wrap(t);
}

static void tensor_dealloc(PyObject *self) {
    CgTensorObject *o = (CgTensorObject *)self;
    PyObject_GC_UnTrack(self);
    if (o->weakreflist) PyObject_ClearWeakRefs(self);
    Py_CLEAR(o->dict);
    if (o->t) {
        if (cg_tensor_pyobj(o->t) == self) cg_tensor_set_pyobj(o->t, NULL);
        cg_tensor_release(o->t);
        o->t = NULL;
    }
    Py_TYPE(self)->tp_free(self);
}

static int tensor_traverse(PyObject *self, visitproc visit, void *arg) {
    Py_VISIT(((CgTensorObject *)self)->dict);
    Py_VISIT(Py_TYPE(self));
    return cgpy_traverse_tensor_hooks(((CgTensorObject *)self)->t, visit, arg);
}
static int tensor_clear(PyObject *self) {
    Py_CLEAR(((CgTensorObject *)self)->dict);
    cgpy_clear_tensor_hooks(((CgTensorObject *)self)->t);
    return 0;
}

/* ------------------------------------------------------------- properties */

#define T_OF(self) (((CgTensorObject *)(self))->t)

static PyObject *get_shape(PyObject *self, void *c) {
    (void)c;
    return make_size(cg_tensor_ndim(T_OF(self)), cg_tensor_shape(T_OF(self)));
}
static PyObject *get_dtype(PyObject *self, void *c) {
    (void)c;
    PyObject *d = cgpy_dtype(cg_tensor_dtype(T_OF(self)));
    Py_INCREF(d);
    return d;
}
static PyObject *get_device(PyObject *self, void *c) {
    (void)c;
    return cgpy_device(cg_tensor_device(T_OF(self)));
}
static PyObject *get_ndim(PyObject *self, void *c) {
    (void)c;
    return PyLong_FromLong(cg_tensor_ndim(T_OF(self)));
}
static PyObject *get_requires_grad(PyObject *self, void *c) {
    (void)c;
    return PyBool_FromLong(cg_tensor_requires_grad(T_OF(self)));
}
static int set_requires_grad(PyObject *self, PyObject *v, void *c) {
    (void)c;
    if (!v) {
        PyErr_SetString(PyExc_TypeError, "cannot delete requires_grad");
        return -1;
    }
    int b = PyObject_IsTrue(v);
    if (b < 0) return -1;
    return cgpy_check(cg_tensor_set_requires_grad(T_OF(self), b));
}
static PyObject *get_grad(PyObject *self, void *c) {
    (void)c;
    cg_tensor *g = cg_tensor_grad_ref(T_OF(self)); /* backward may replace it on another thread */
    if (!g) Py_RETURN_NONE;
    return cgpy_wrap(g);
}
static int set_grad(PyObject *self, PyObject *v, void *c) {
    (void)c;
    if (!v || v == Py_None) return cgpy_check(cg_tensor_set_grad(T_OF(self), NULL));
    if (!cgpy_is_tensor(v)) {
        PyErr_SetString(PyExc_TypeError, "assigned grad expected to be a Tensor or None");
        return -1;
    }
    return cgpy_check(cg_tensor_set_grad(T_OF(self), cgpy_t(v)));
}
static PyObject *get_is_leaf(PyObject *self, void *c) {
    (void)c;
    return PyBool_FromLong(cg_tensor_is_leaf(T_OF(self)));
}
static PyObject *get_itemsize(PyObject *self, void *c) {
    (void)c;
    return PyLong_FromSize_t(cg_dtype_size(cg_tensor_dtype(T_OF(self))));
}
static PyObject *get_nbytes(PyObject *self, void *c) {
    (void)c;
    return PyLong_FromLongLong(cg_tensor_numel(T_OF(self)) * (long long)cg_dtype_size(cg_tensor_dtype(T_OF(self))));
}
static PyObject *get_data(PyObject *self, void *c) {
    (void)c;
    return cgpy_wrap(cg_detach(T_OF(self)));
}
static int set_data(PyObject *self, PyObject *v, void *c) {
    (void)c;
    if (!v) {
        PyErr_SetString(PyExc_TypeError, "cannot delete Tensor.data");
        return -1;
    }
    if (!cgpy_is_tensor(v)) {
        PyErr_Format(PyExc_TypeError, "Variable data has to be a tensor, but got %.100s", Py_TYPE(v)->tp_name);
        return -1;
    }
    return cgpy_check(cg_tensor_set_data(T_OF(self), cgpy_t(v))); /* Note [Data assignment] */
}

extern PyObject *cgpy_node_wrap(cg_node *n); /* node.c */
static PyObject *get_grad_fn(PyObject *self, void *c) {
    (void)c;
    cg_node *n = cg_tensor_grad_fn(T_OF(self));
    if (!n) Py_RETURN_NONE;
    return cgpy_node_wrap(n);
}
static PyObject *get_output_nr(PyObject *self, void *c) {
    (void)c;
    return PyLong_FromLong(cg_tensor_output_nr(T_OF(self)));
}
static PyObject *get_retains_grad(PyObject *self, void *c) {
    (void)c;
    return PyBool_FromLong(cg_tensor_retains_grad(T_OF(self)));
}
static PyObject *get_is_cpu(PyObject *self, void *c) {
    (void)c;
    return PyBool_FromLong(cg_tensor_device(T_OF(self)).type == CG_DEVICE_CPU);
}
static PyObject *get_is_meta(PyObject *self, void *c) {
    (void)c;
    return PyBool_FromLong(cg_tensor_device(T_OF(self)).type == CG_DEVICE_META);
}
static PyObject *get_is_cuda(PyObject *self, void *c) {
    (void)c;
    return PyBool_FromLong(cg_tensor_device(T_OF(self)).type == CG_DEVICE_CUDA);
}
static PyObject *get_version(PyObject *self, void *c) {
    (void)c;
    return PyLong_FromUnsignedLongLong(cg_tensor_version(T_OF(self)));
}
static PyObject *get_false(PyObject *self, void *c) {
    (void)self, (void)c;
    Py_RETURN_FALSE;
}
static PyObject *get_dict(PyObject *self, void *c) {
    (void)c;
    CgTensorObject *o = (CgTensorObject *)self;
    if (!o->dict && !(o->dict = PyDict_New())) return NULL;
    Py_INCREF(o->dict);
    return o->dict;
}

static PyGetSetDef tensor_getset[] = {
    {"shape", get_shape, NULL, "the tensor's size", NULL},
    {"dtype", get_dtype, NULL, NULL, NULL},
    {"device", get_device, NULL, NULL, NULL},
    {"ndim", get_ndim, NULL, NULL, NULL},
    {"requires_grad", get_requires_grad, set_requires_grad, NULL, NULL},
    {"grad", get_grad, set_grad, NULL, NULL},
    {"grad_fn", get_grad_fn, NULL, NULL, NULL},
    {"is_leaf", get_is_leaf, NULL, NULL, NULL},
    {"retains_grad", get_retains_grad, NULL, NULL, NULL},
    {"output_nr", get_output_nr, NULL, NULL, NULL},
    {"itemsize", get_itemsize, NULL, NULL, NULL},
    {"nbytes", get_nbytes, NULL, NULL, NULL},
    {"data", get_data, set_data, NULL, NULL},
    {"is_cpu", get_is_cpu, NULL, NULL, NULL},
    {"is_meta", get_is_meta, NULL, NULL, NULL},
    {"is_cuda", get_is_cuda, NULL, NULL, NULL},
    {"_version", get_version, NULL, "the in-place version counter (bumped by every in-place write)", NULL},
    {"is_sparse", get_false, NULL, NULL, NULL},
    {"is_quantized", get_false, NULL, NULL, NULL},
    {"__dict__", get_dict, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* ------------------------------------------------------------- tensor(data): nested sequences */

typedef struct {
    int ndim;
    int64_t shape[CG_MAX_DIMS];
    int kind; /* 0 bool, 1 int, 2 float */
    int seen; /* any scalar seen */
    int np_dtype; /* promoted dtype of the NumPy scalars seen, -1 none */
    int py_seen;  /* any Python number / tensor element seen */
} infer_state;

static int infer(PyObject *o, int depth, infer_state *st) {
    if (cgpy_is_tensor(o)) {
        cg_tensor *t = cgpy_t(o);
        if (cg_tensor_numel(t) != 1 || cg_tensor_ndim(t) != 0) {
            PyErr_SetString(PyExc_ValueError, "only one element tensors can be converted to Python scalars inside a nested sequence");
            return -1;
        }
        cg_dtype dt = cg_tensor_dtype(t);
        int k = dt == CG_DTYPE_BOOL ? 0 : cg_dtype_is_floating(dt) ? 2 : 1;
        if (k > st->kind) st->kind = k;
        st->seen = 1;
        st->py_seen = 1;
        goto leaf;
    }
    extern int cgpy_numpy_scalar_dtype(PyObject *o); /* interop.c */
    int nd = cgpy_numpy_scalar_dtype(o); /* a NumPy scalar keeps its dtype (as in PyTorch) */
    if (nd == -2) return -1;
    if (nd >= 0) {
        cg_dtype d = (cg_dtype)nd;
        int k = d == CG_DTYPE_BOOL ? 0 : cg_dtype_is_floating(d) ? 2 : 1;
        if (k > st->kind) st->kind = k;
        st->np_dtype = st->np_dtype < 0 ? nd : (int)cgpy_promote_types((cg_dtype)st->np_dtype, d);
        st->seen = 1;
        goto leaf;
    }
    if (PyBool_Check(o) || PyLong_Check(o) || PyFloat_Check(o)) {
        int k = PyBool_Check(o) ? 0 : PyLong_Check(o) ? 1 : 2;
        if (k > st->kind) st->kind = k;
        st->seen = 1;
        st->py_seen = 1;
    leaf:
        if (depth != st->ndim && st->ndim >= 0) {
            PyErr_SetString(PyExc_ValueError, "expected a sequence of equal-length sequences (ragged nested sequence)");
            return -1;
        }
        st->ndim = depth;
        return 0;
    }
    if (!PySequence_Check(o) || PyUnicode_Check(o) || PyBytes_Check(o)) {
        PyErr_Format(PyExc_TypeError, "new(): invalid data type '%.100s'", Py_TYPE(o)->tp_name);
        return -1;
    }
    if (depth >= CG_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "nested sequence is deeper than the maximum rank %d", CG_MAX_DIMS);
        return -1;
    }
    Py_ssize_t n = PySequence_Size(o);
    if (n < 0) return -1;
    if (st->ndim >= 0 && depth >= st->ndim) {
        PyErr_SetString(PyExc_ValueError, "expected a sequence of equal-length sequences (ragged nested sequence)");
        return -1;
    }
    if (st->shape[depth] < 0) st->shape[depth] = n;
    else if (st->shape[depth] != n) {
        PyErr_Format(PyExc_ValueError, "expected sequence of length %lld at dim %d (got %zd)", (long long)st->shape[depth], depth, n);
        return -1;
    }
    if (n == 0) {
        if (st->ndim < 0) st->ndim = depth + 1;
        else if (st->ndim != depth + 1) {
            PyErr_SetString(PyExc_ValueError, "expected a sequence of equal-length sequences (ragged nested sequence)");
            return -1;
        }
        return 0;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_GetItem(o, i);
        if (!item) return -1;
        int r = infer(item, depth + 1, st);
        Py_DECREF(item);
        if (r) return -1;
    }
    return 0;
}

/* One element into the staging buffer (dt: the staging dtype); target: the
 * tensor's dtype, which a Python number must fit (Note [Checked scalar conversion]). */
static int fill_leaf(PyObject *o, char **p, cg_dtype dt, cg_dtype target) {
    double v;
    if (cgpy_is_scalar(o) && cgpy_check_fits(o, target, false)) {
        /* a ValueError, as PyTorch's parser raises (which reads uint64 data as unsigned: OverflowError) */
        if (target != CG_DTYPE_U64 && PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "Overflow when unpacking long long: %R does not fit in int64", o);
        }
        return -1;
    }
    if (cgpy_is_tensor(o) && (dt == CG_DTYPE_I64 || dt == CG_DTYPE_U64)) { /* exact 64-bit integer staging */
        if (cgpy_check(cg_tensor_copy_to_buffer(cgpy_t(o), *p, dt))) return -1;
        *p += 8;
        return 0;
    }
    if (dt == CG_DTYPE_U64 && PyLong_Check(o)) { /* the unsigned dtypes: exact up to 2^64 - 1, negatives wrap */
        uint64_t x;
        int overflow = 0;
        long long sv = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (sv == -1 && PyErr_Occurred()) return -1;
        if (overflow < 0 || (!overflow && sv < 0)) {
            if (target == CG_DTYPE_U64) { /* as PyTorch's argument parser */
                PyErr_SetString(PyExc_OverflowError, "can't convert negative int to unsigned");
                return -1;
            }
            x = (uint64_t)sv; /* in int64: checked above */
        } else {
            unsigned long long u = PyLong_AsUnsignedLongLong(o);
            if (u == (unsigned long long)-1 && PyErr_Occurred()) return -1;
            x = u;
        }
        memcpy(*p, &x, 8);
        *p += 8;
        return 0;
    }
    if (cgpy_is_tensor(o)) {
        if (cgpy_check(cg_tensor_item(cgpy_t(o), &v))) return -1;
    } else if (dt == CG_DTYPE_I64 && PyLong_Check(o)) {
        int64_t x = PyLong_AsLongLong(o); /* fits: checked above */
        if (x == -1 && PyErr_Occurred()) return -1;
        memcpy(*p, &x, 8);
        *p += 8;
        return 0;
    } else {
        v = PyFloat_AsDouble(o);
        if (v == -1.0 && PyErr_Occurred()) return -1;
    }
    double *d = (double *)*p;
    *d = v;
    *p += 8;
    return 0;
}

static int fill(PyObject *o, int depth, int ndim, char **p, cg_dtype dt, cg_dtype target) {
    if (depth == ndim) {
        if (cgpy_is_tensor(o) || cgpy_is_scalar(o)) return fill_leaf(o, p, dt, target);
        PyObject *num = PyObject_CallMethod(o, "item", NULL); /* a NumPy scalar (see infer) */
        int r = num ? fill_leaf(num, p, dt, target) : -1;
        Py_XDECREF(num);
        return r;
    }
    Py_ssize_t n = PySequence_Size(o);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_GetItem(o, i);
        if (!item) return -1;
        int r = fill(item, depth + 1, ndim, p, dt, target);
        Py_DECREF(item);
        if (r) return -1;
    }
    return 0;
}

/* Build a tensor from nested Python data; dtype -1 infers. New reference or NULL (raised). */
cg_tensor *cgpy_tensor_from_data(PyObject *data, int dtype, cg_device dev) {
    extern int cgpy_numpy_kind(PyObject *o); /* interop.c: NumPy arrays and scalars are copied through memory */
    extern cg_tensor *cgpy_tensor_from_numpy(PyObject *o, int dtype, int copy);
    if (!PyList_Check(data) && !PyTuple_Check(data) && !cgpy_is_scalar(data) && !cgpy_is_tensor(data) &&
        cgpy_numpy_kind(data) > 0) {
        cg_tensor *r = cgpy_tensor_from_numpy(data, dtype, 1), *m = r && dev.type != CG_DEVICE_CPU ? cg_to_device(r, dev) : r;
        if (m != r) cg_tensor_release(r);
        if (r && !m) cgpy_raise();
        return m;
    }
    if (cgpy_is_tensor(data)) {
        cg_tensor *src = cgpy_t(data);
        cg_dtype dt = dtype < 0 ? cg_tensor_dtype(src) : (cg_dtype)dtype;
        bool prev = cg_set_grad_enabled(false);
        cg_tensor *c = cg_to_dtype(src, dt), *r = c ? (c == src ? cg_clone(c) : (cg_tensor_retain(c), c)) : NULL;
        cg_tensor_release(c);
        cg_set_grad_enabled(prev);
        if (!r) cgpy_raise();
        return r;
    }
    infer_state st;
    st.ndim = -1;
    st.kind = 0;
    st.seen = 0;
    st.np_dtype = -1;
    st.py_seen = 0;
    for (int i = 0; i < CG_MAX_DIMS; i++) st.shape[i] = -1;
    if (infer(data, 0, &st)) return NULL;
    int ndim = st.ndim < 0 ? 0 : st.ndim;
    cg_dtype dt = dtype >= 0 ? (cg_dtype)dtype
                  : !st.seen ? cgpy_default_dtype
                  : st.kind == 0 ? CG_DTYPE_BOOL
                  : st.kind == 1 ? CG_DTYPE_I64 : cgpy_default_dtype;
    if (dtype < 0 && st.np_dtype >= 0) /* NumPy scalars: their dtypes promoted with the Python numbers' */
        dt = st.py_seen ? cgpy_promote_types((cg_dtype)st.np_dtype, dt) : (cg_dtype)st.np_dtype;
    int64_t numel = 1;
    for (int i = 0; i < ndim; i++) numel *= st.shape[i];
    /* staging buffer in float64 (or int64 when all values are ints, to stay exact) */
    bool unsigned_wide = dt == CG_DTYPE_U16 || dt == CG_DTYPE_U32 || dt == CG_DTYPE_U64;
    if (dt == CG_DTYPE_U64 && st.kind == 2) { /* PyTorch parses uint64 data as integers only */
        PyErr_SetString(PyExc_TypeError, "an integer is required");
        return NULL;
    }
    cg_dtype stage = st.kind > 1 ? CG_DTYPE_F64 : dt == CG_DTYPE_I64 ? CG_DTYPE_I64 : unsigned_wide ? CG_DTYPE_U64 : CG_DTYPE_F64;
    void *buf = PyMem_Malloc((size_t)(numel > 0 ? numel : 1) * 8);
    if (!buf) return (cg_tensor *)PyErr_NoMemory();
    char *p = buf;
    if (numel > 0 && fill(data, 0, ndim, &p, stage, dt)) {
        PyMem_Free(buf);
        return NULL;
    }
    cg_tensor *staged = cg_from_data(buf, ndim, st.shape, stage);
    PyMem_Free(buf);
    if (!staged) return (cg_tensor *)cgpy_raise();
    cg_tensor *r = cg_to_dtype(staged, dt);
    cg_tensor_release(staged);
    if (!r) return (cg_tensor *)cgpy_raise();
    if (dev.type != CG_DEVICE_CPU) {
        cg_tensor *m = cg_to_device(r, dev);
        cg_tensor_release(r);
        r = m;
        if (!r) cgpy_raise();
    }
    return r;
}

/* ------------------------------------------------------------- the type */

#include "bind.h"
extern PyMethodDef cgpy_tensor_core_methods[];

/* Tensor(*sizes) -> uninitialised default-dtype tensor; Tensor(data) -> copy of data */
static PyObject *tensor_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    (void)kw;
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    cg_tensor *t;
    if (n == 1 && !PyLong_Check(PyTuple_GET_ITEM(args, 0))) {
        t = cgpy_tensor_from_data(PyTuple_GET_ITEM(args, 0), cgpy_default_dtype, cg_cpu());
        if (!t) return NULL;
    } else {
        int nd;
        int64_t shape[CG_MAX_DIMS];
        if (n == 0) {
            nd = 1;
            shape[0] = 0;
        } else if (cgpy_parse_shape(args, 0, &nd, shape)) {
            return NULL;
        }
        t = cg_zeros(nd, shape, cgpy_default_dtype, cg_cpu());
        if (!t) return cgpy_raise();
    }
    return cgpy_wrap_as(type, t);
}

static PyObject *tensor_len(PyObject *self) {
    cg_tensor *t = T_OF(self);
    if (cg_tensor_ndim(t) == 0) {
        PyErr_SetString(PyExc_TypeError, "len() of a 0-d tensor");
        return NULL;
    }
    return PyLong_FromLongLong(cg_tensor_shape(t)[0]);
}
static Py_ssize_t sq_len(PyObject *self) {
    PyObject *l = tensor_len(self);
    if (!l) return -1;
    Py_ssize_t v = PyLong_AsSsize_t(l);
    Py_DECREF(l);
    return v;
}

static PySequenceMethods tensor_as_sequence = {.sq_length = sq_len};
extern PyMappingMethods cgpy_tensor_as_mapping;

PyTypeObject CgTensorBase_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cgrad._C._TensorBase",
    .tp_basicsize = sizeof(CgTensorObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_new = tensor_new,
    .tp_dealloc = tensor_dealloc,
    .tp_traverse = tensor_traverse,
    .tp_clear = tensor_clear,
    .tp_getset = tensor_getset,
    .tp_as_number = &cgpy_number_methods,
    .tp_as_sequence = &tensor_as_sequence,
    .tp_as_mapping = &cgpy_tensor_as_mapping,
    .tp_richcompare = cgpy_richcompare,
    .tp_weaklistoffset = offsetof(CgTensorObject, weakreflist),
    .tp_dictoffset = offsetof(CgTensorObject, dict),
};

int cgpy_init_tensor_type(PyObject *m) {
    /* one method table: the core methods followed by each op family's */
    PyMethodDef *tables[] = {
        cgpy_tensor_core_methods,
#define CGPY_METHODS_OF(fam) cgpy_##fam##_methods,
        CGPY_OP_FAMILIES(CGPY_METHODS_OF)
#undef CGPY_METHODS_OF
    };
    Py_ssize_t total = 0;
    for (size_t i = 0; i < sizeof tables / sizeof *tables; i++)
        for (PyMethodDef *d = tables[i]; d->ml_name; d++) total++;
    PyMethodDef *all = PyMem_Calloc((size_t)total + 1, sizeof(PyMethodDef));
    if (!all) return -1;
    Py_ssize_t k = 0;
    for (size_t i = 0; i < sizeof tables / sizeof *tables; i++)
        for (PyMethodDef *d = tables[i]; d->ml_name; d++) all[k++] = *d;
    CgTensorBase_Type.tp_methods = all;
    CgTensorBase_Type.tp_hash = PyBaseObject_Type.tp_hash; /* hashed by identity */
    CgSize_Type.tp_base = &PyTuple_Type;
    if (PyType_Ready(&CgSize_Type) < 0 || PyType_Ready(&CgTensorBase_Type) < 0) return -1;
    extern PyTypeObject CgNode_Type;
    if (PyType_Ready(&CgNode_Type) < 0) return -1;
    if (PyModule_AddObjectRef(m, "_TensorBase", (PyObject *)&CgTensorBase_Type) < 0) return -1;
    if (PyModule_AddObjectRef(m, "Size", (PyObject *)&CgSize_Type) < 0) return -1;
    if (PyModule_AddObjectRef(m, "_Node", (PyObject *)&CgNode_Type) < 0) return -1;
    return 0;
}
