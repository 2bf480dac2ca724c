/* tensor_methods.c — Tensor methods that are not ops: metadata (size,
 * stride, ...), conversion (item, tolist, to, float, type, ...), autograd
 * (backward, register_hook, retain_grad, detach, requires_grad_), the
 * basic in-place writers (zero_, fill_, copy_), the *_as / new_* helpers,
 * the transposed views behind T / mT / H / mH, and __iter__ / __contains__. */
#include "bind.h"

#include <string.h>

#define T_OF(self) (((CgTensorObject *)(self))->t)

static PyObject *m_size(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("size", CGPY_ARG("dim", CGPY_A_OPT_INT));
    cgpy_val v[1];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    if (!cgpy_given(&v[0])) return PyObject_GetAttrString(self, "shape");
    int64_t d = v[0].i;
    cg_tensor *t = T_OF(self);
    int nd = cg_tensor_ndim(t);
    if (d < -(nd ? nd : 1) || d >= (nd ? nd : 1) || nd == 0) {
        PyErr_Format(PyExc_IndexError, "Dimension out of range (expected to be in range of [%d, %d], but got %lld)",
                     -(nd ? nd : 1), (nd ? nd : 1) - 1, (long long)d);
        return NULL;
    }
    return PyLong_FromLongLong(cg_tensor_shape(t)[d < 0 ? d + nd : d]);
}

static PyObject *m_stride(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("stride", CGPY_ARG("dim", CGPY_A_OPT_INT));
    cgpy_val v[1];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    cg_tensor *t = T_OF(self);
    int nd = cg_tensor_ndim(t);
    if (!cgpy_given(&v[0])) {
        PyObject *tup = PyTuple_New(nd);
        for (int i = 0; tup && i < nd; i++) PyTuple_SET_ITEM(tup, i, PyLong_FromLongLong(cg_tensor_strides(t)[i]));
        return tup;
    }
    int64_t d = v[0].i;
    if (nd == 0 || d < -nd || d >= nd) {
        PyErr_Format(PyExc_IndexError, "Dimension out of range (got %lld for a %d-d tensor)", (long long)d, nd);
        return NULL;
    }
    return PyLong_FromLongLong(cg_tensor_strides(t)[d < 0 ? d + nd : d]);
}

static PyObject *m_dim(PyObject *self, PyObject *u) {
    (void)u;
    return PyLong_FromLong(cg_tensor_ndim(T_OF(self)));
}
static PyObject *m_numel(PyObject *self, PyObject *u) {
    (void)u;
    return PyLong_FromLongLong(cg_tensor_numel(T_OF(self)));
}
static PyObject *m_storage_offset(PyObject *self, PyObject *u) {
    (void)u;
    return PyLong_FromLongLong(cg_tensor_offset(T_OF(self)));
}
/* _storage_key(): (an id equal for tensors sharing one storage, the storage's size in bytes), for
 * checkpoints that keep views sharing their storage (serialization.py) */
static PyObject *m_storage_key(PyObject *self, PyObject *u) {
    (void)u;
    cg_tensor *t = T_OF(self);
    PyObject *id = PyLong_FromVoidPtr((void *)cg_tensor_storage_id(t));
    if (!id) return NULL;
    return Py_BuildValue("(NL)", id, (long long)cg_tensor_storage_nbytes(t));
}
static PyObject *m_element_size(PyObject *self, PyObject *u) {
    (void)u;
    return PyLong_FromSize_t(cg_dtype_size(cg_tensor_dtype(T_OF(self))));
}
/* is_contiguous / contiguous / clone (memory_format=; Note [Memory formats] in cgrad.h): the one
 * argument of spec as a format (dflt when absent); -1 with the error set */
static int format_arg(cgpy_spec *spec, CGPY_FASTKW_ARGS, cg_memory_format dflt, cg_memory_format *f) {
    cgpy_val v[1];
    if (cgpy_args_parse(spec, self, args, nargs, kwnames, v)) return -1;
    return cgpy_memory_format(v[0].o, dflt, spec->fname, f);
}
static PyObject *m_is_contiguous(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("is_contiguous", CGPY_ARG("memory_format", CGPY_A_OBJ));
    cg_memory_format f;
    if (format_arg(&spec, self, args, nargs, kwnames, CG_MEMORY_CONTIGUOUS, &f)) return NULL;
    if (f == CG_MEMORY_PRESERVE) f = CG_MEMORY_CONTIGUOUS; /* as PyTorch's */
    return PyBool_FromLong(cg_tensor_is_contiguous_as(T_OF(self), f));
}
static PyObject *m_contiguous(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("contiguous", CGPY_ARG("memory_format", CGPY_A_OBJ));
    cg_memory_format f;
    if (format_arg(&spec, self, args, nargs, kwnames, CG_MEMORY_CONTIGUOUS, &f)) return NULL;
    cg_tensor *t = T_OF(self);
    if (f == CG_MEMORY_PRESERVE && cg_tensor_is_contiguous(t)) return cgpy_wrap(cg_contiguous(t));
    return cgpy_wrap(cg_contiguous_as(t, f));
}
static PyObject *m_clone(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("clone", CGPY_ARG("memory_format", CGPY_A_OBJ, CGPY_KWONLY));
    cg_memory_format f;
    if (format_arg(&spec, self, args, nargs, kwnames, CG_MEMORY_PRESERVE, &f)) return NULL;
    return cgpy_wrap(cg_clone_as(T_OF(self), f));
}
static PyObject *m_detach(PyObject *self, PyObject *u) {
    (void)u;
    return cgpy_wrap(cg_detach(T_OF(self)));
}
static PyObject *m_detach_(PyObject *self, PyObject *u) {
    (void)u;
    if (cgpy_check(cg_detach_(T_OF(self)))) return NULL;
    Py_INCREF(self);
    return self;
}

/* a Python scalar of the tensor's kind */
static PyObject *scalar_of(cg_dtype dt, double v, const void *raw) {
    if (dt == CG_DTYPE_BOOL) return PyBool_FromLong(v != 0);
    if (dt == CG_DTYPE_I64 && raw) return PyLong_FromLongLong(*(const int64_t *)raw);
    if (dt == CG_DTYPE_U64 && raw) return PyLong_FromUnsignedLongLong(*(const uint64_t *)raw); /* exact above 2^63 */
    if (!cg_dtype_is_floating(dt)) return PyLong_FromLongLong((long long)v);
    return PyFloat_FromDouble(v);
}

static PyObject *m_item(PyObject *self, PyObject *u) {
    (void)u;
    cg_tensor *t = T_OF(self);
    if (cg_tensor_numel(t) != 1) {
        PyErr_Format(PyExc_RuntimeError, "a Tensor with %lld elements cannot be converted to Scalar", (long long)cg_tensor_numel(t));
        return NULL;
    }
    double v;
    if (cgpy_check(cg_tensor_item(t, &v))) return NULL;
    int64_t raw = 0;
    cg_dtype dt = cg_tensor_dtype(t);
    bool exact = dt == CG_DTYPE_I64 || dt == CG_DTYPE_U64; /* 64-bit integers do not go through double */
    if (exact && cgpy_check(cg_tensor_copy_to_buffer(t, &raw, dt))) return NULL;
    return scalar_of(dt, v, exact ? &raw : NULL);
}

static PyObject *tolist_rec(cg_tensor *t, const double *f, const int64_t *iv, int d, int64_t *pos) {
    int nd = cg_tensor_ndim(t);
    cg_dtype dt = cg_tensor_dtype(t);
    if (d == nd) {
        int64_t k = (*pos)++;
        return scalar_of(dt, f ? f[k] : 0, iv ? &iv[k] : NULL);
    }
    int64_t n = cg_tensor_shape(t)[d];
    PyObject *l = PyList_New(n);
    for (int64_t i = 0; l && i < n; i++) {
        PyObject *e = tolist_rec(t, f, iv, d + 1, pos);
        if (!e) {
            Py_DECREF(l);
            return NULL;
        }
        PyList_SET_ITEM(l, i, e);
    }
    return l;
}

static PyObject *m_tolist(PyObject *self, PyObject *u) {
    (void)u;
    cg_tensor *t = T_OF(self);
    int64_t n = cg_tensor_numel(t);
    cg_dtype dt = cg_tensor_dtype(t);
    bool ints = dt == CG_DTYPE_I64 || dt == CG_DTYPE_U64; /* exact: staged in their own dtype */
    void *buf = PyMem_Malloc((size_t)(n ? n : 1) * 8);
    if (!buf) return PyErr_NoMemory();
    if (cgpy_check(cg_tensor_copy_to_buffer(t, buf, ints ? dt : CG_DTYPE_F64))) {
        PyMem_Free(buf);
        return NULL;
    }
    int64_t pos = 0;
    PyObject *r = tolist_rec(t, ints ? NULL : buf, ints ? buf : NULL, 0, &pos);
    PyMem_Free(buf);
    return r;
}

static PyObject *m_requires_grad_(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("requires_grad_", CGPY_ARG("requires_grad", CGPY_A_BOOL, 0, 1));
    cgpy_val v[1];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    int b = v[0].b;
    if (cgpy_check(cg_tensor_set_requires_grad(T_OF(self), b))) return NULL;
    Py_INCREF(self);
    return self;
}

static PyObject *m_retain_grad(PyObject *self, PyObject *u) {
    (void)u;
    if (cgpy_check(cg_tensor_retain_grad(T_OF(self)))) return NULL;
    Py_RETURN_NONE;
}

static PyObject *m_register_hook(PyObject *self, PyObject *fn) { return cgpy_register_tensor_hook(self, fn, false); }
static PyObject *m_register_post_accumulate_grad_hook(PyObject *self, PyObject *fn) {
    return cgpy_register_tensor_hook(self, fn, true);
}

static PyObject *m_remove_hook(PyObject *self, PyObject *arg) {
    long long id = PyLong_AsLongLong(arg);
    if (id == -1 && PyErr_Occurred()) return NULL;
    if (cgpy_check(cg_tensor_remove_hook(T_OF(self), id))) return NULL;
    Py_RETURN_NONE;
}

/* status of a backward call: a Python exception raised inside a hook wins */
static PyObject *backward_result(cg_status st) {
    if (st == CG_OK) Py_RETURN_NONE;
    if (PyErr_Occurred()) {
        cg_clear_error();
        return NULL;
    }
    return cgpy_raise();
}

static int seq_of_tensors(PyObject *o, Py_ssize_t *n, cg_tensor ***out, const char *what) {
    *out = NULL;
    *n = 0;
    if (o == Py_None || !o) return 0;
    PyObject *fast = cgpy_is_tensor(o) ? PyTuple_Pack(1, o) : PySequence_Fast(o, what);
    if (!fast) return -1;
    *n = PySequence_Fast_GET_SIZE(fast);
    *out = PyMem_Calloc((size_t)(*n ? *n : 1), sizeof(cg_tensor *));
    for (Py_ssize_t i = 0; i < *n; i++) {
        PyObject *e = PySequence_Fast_GET_ITEM(fast, i);
        if (e == Py_None) continue;
        if (!cgpy_is_tensor(e)) {
            PyErr_Format(PyExc_TypeError, "%s: expected Tensors, got %.100s", what, Py_TYPE(e)->tp_name);
            Py_DECREF(fast);
            PyMem_Free(*out);
            *out = NULL;
            return -1;
        }
        (*out)[i] = cgpy_t(e);
    }
    Py_DECREF(fast);
    return 0;
}

static PyObject *m_backward(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("backward", CGPY_ARG("gradient", CGPY_A_OBJ), CGPY_ARG("retain_graph",
                                      CGPY_A_OBJ),
                                      CGPY_ARG("create_graph", CGPY_A_BOOL), CGPY_ARG("inputs", CGPY_A_OBJ));
    cgpy_val v[4];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *gradient = v[0].o ? v[0].o : Py_None, *retain = v[1].o ? v[1].o : Py_None,
        *inputs = v[3].o ? v[3].o : Py_None;
    int create_graph = v[2].b;
    if (gradient != Py_None && !cgpy_is_tensor(gradient)) {
        PyErr_SetString(PyExc_TypeError, "backward: gradient must be a Tensor or None");
        return NULL;
    }
    int retain_graph = retain == Py_None ? create_graph : PyObject_IsTrue(retain);
    if (retain_graph < 0) return NULL;
    cg_tensor **in;
    Py_ssize_t nin;
    if (seq_of_tensors(inputs, &nin, &in, "backward inputs")) return NULL;
    cg_tensor *root = T_OF(self), *g = gradient == Py_None ? NULL : cgpy_t(gradient);
    cg_status st;
    CGPY_NOGIL(st = cg_backward_multi(1, &root, &g, retain_graph, create_graph, (int)nin, in));
    PyMem_Free(in);
    return backward_result(st);
}

PyObject *cgpy_autograd_grad(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("grad", CGPY_ARG("outputs", CGPY_A_OBJ, CGPY_REQ), CGPY_ARG("inputs", CGPY_A_OBJ,
                                      CGPY_REQ),
                                      CGPY_ARG("grad_outputs", CGPY_A_OBJ), CGPY_ARG("retain_graph", CGPY_A_OBJ),
                                      CGPY_ARG("create_graph", CGPY_A_BOOL), CGPY_ARG("allow_unused", CGPY_A_BOOL));
    cgpy_val v[6];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *outputs = v[0].o, *inputs = v[1].o, *grad_outputs = v[2].o ? v[2].o : Py_None;
    PyObject *retain = v[3].o ? v[3].o : Py_None;
    int create_graph = v[4].b, allow_unused = v[5].b;
    int retain_graph = retain == Py_None ? create_graph : PyObject_IsTrue(retain);
    cg_tensor **outs = NULL, **ins = NULL, **gos = NULL;
    Py_ssize_t no, ni, ng;
    PyObject *res = NULL;
    if (seq_of_tensors(outputs, &no, &outs, "grad outputs") || seq_of_tensors(inputs, &ni, &ins, "grad inputs") ||
        seq_of_tensors(grad_outputs, &ng, &gos, "grad grad_outputs"))
        goto done;
    if (gos && ng != no) {
        PyErr_Format(PyExc_RuntimeError, "grad requires one grad_output per output (got %zd for %zd outputs)", ng, no);
        goto done;
    }
    cg_tensor **results = PyMem_Calloc((size_t)(ni ? ni : 1), sizeof(cg_tensor *));
    cg_status st;
    CGPY_NOGIL(st = cg_autograd_grad((int)no, outs, gos, (int)ni, ins, retain_graph, create_graph, allow_unused, results));
    if (st) {
        backward_result(st);
    } else {
        res = PyTuple_New(ni);
        for (Py_ssize_t i = 0; res && i < ni; i++) {
            PyObject *r = results[i] ? cgpy_wrap(results[i]) : (Py_INCREF(Py_None), Py_None);
            results[i] = NULL;
            PyTuple_SET_ITEM(res, i, r);
        }
    }
    for (Py_ssize_t i = 0; i < ni; i++) cg_tensor_release(results[i]);
    PyMem_Free(results);
done:
    PyMem_Free(outs);
    PyMem_Free(ins);
    PyMem_Free(gos);
    return res;
}

static PyObject *m_zero_(PyObject *self, PyObject *u) {
    (void)u;
    if (cgpy_check(cg_zero_(T_OF(self)))) return NULL;
    Py_INCREF(self);
    return self;
}
static PyObject *m_fill_(PyObject *self, PyObject *v) {
    double x;
    if (cgpy_is_tensor(v)) {
        if (cgpy_check(cg_tensor_item(cgpy_t(v), &x))) return NULL;
    } else {
        x = PyFloat_AsDouble(v);
        if ((x == -1.0 && PyErr_Occurred()) || cgpy_check_fits(v, cg_tensor_dtype(T_OF(self)), true)) return NULL;
    }
    if (cg_tensor_dtype(T_OF(self)) == CG_DTYPE_U64 && PyLong_Check(v) && !PyBool_Check(v)) {
        if (cgpy_fill_exact(T_OF(self), v)) return NULL;
    } else if (cgpy_check(cg_fill_(T_OF(self), x))) {
        return NULL;
    }
    Py_INCREF(self);
    return self;
}
static PyObject *m_copy_(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("copy_", CGPY_ARG("src", CGPY_A_OBJ, CGPY_REQ), CGPY_ARG("non_blocking",
                                      CGPY_A_BOOL));
    cgpy_val v[2];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *src = v[0].o; /* non_blocking: accepted (to()'s note) */
    cg_tensor *s = cgpy_as_tensor(src, cgpy_is_tensor(src) ? cg_tensor_dtype(cgpy_t(src)) : cg_tensor_dtype(T_OF(self)),
                                  cg_tensor_device(T_OF(self)));
    if (s && cgpy_to_device_of(&s, cg_tensor_device(T_OF(self)))) return NULL; /* copy_ crosses devices, as PyTorch's */
    if (!s) return NULL;
    cg_status st = cg_copy_(T_OF(self), s);
    cg_tensor_release(s);
    if (cgpy_check(st)) return NULL;
    Py_INCREF(self);
    return self;
}

/* to(dtype) / to(device) / to(other) / to(device, dtype), copy=False */
/* Note [Tensor.to signatures]: PyTorch's three overloads, positionally or by keyword:
 *     to(dtype, non_blocking=False, copy=False, *, memory_format=...)
 *     to(device=None, dtype=None, non_blocking=False, copy=False, *, memory_format=...)
 *     to(other, non_blocking=False, copy=False, *, memory_format=...)
 * The first positional argument picks the overload (a dtype; a tensor, whose
 * dtype and device are taken; else a device, a device string or None);
 * `other` is positional only, non_blocking and copy must be bools, and
 * anything else is a TypeError, as in PyTorch. copy=True returns a new tensor
 * even when nothing changes (a differentiable copy); otherwise the result is
 * self when dtype and device already match. memory_format (Note [Memory
 * formats] in cgrad.h) defaults to preserve_format: a converted tensor keeps
 * its layout; another format gives a tensor laid out in it (self when it
 * already is and nothing else changes). */
enum { TO_DEVICE, TO_DTYPE, TO_OTHER };
static const char *const k_to_names[3][4] = {
    [TO_DEVICE] = {"device", "dtype", "non_blocking", "copy"},
    [TO_DTYPE] = {"dtype", "non_blocking", "copy", NULL},
    [TO_OTHER] = {"other", "non_blocking", "copy", NULL},
};
#define TO_SIGNATURES                                                                                           \
    "expected one of (dtype, non_blocking=False, copy=False, *, memory_format), (device=None, dtype=None, "     \
    "non_blocking=False, copy=False, *, memory_format), (Tensor other, non_blocking=False, copy=False, *, "    \
    "memory_format)"

static bool to_is_dtype(PyObject *o) {
    return PyObject_TypeCheck(o, &CgDtype_Type) || o == (PyObject *)&PyFloat_Type || o == (PyObject *)&PyLong_Type ||
           o == (PyObject *)&PyBool_Type;
}

/* TypeError "to() received an invalid combination of arguments: <why>; expected one of ..." */
static PyObject *to_invalid(const char *why, PyObject *what) {
    if (what) PyErr_Format(PyExc_TypeError, "to() received an invalid combination of arguments: %s %R; " TO_SIGNATURES,
                           why, what);
    else PyErr_Format(PyExc_TypeError, "to() received an invalid combination of arguments: %s; " TO_SIGNATURES, why);
    return NULL;
}

static PyObject *m_to(CGPY_FASTKW_ARGS) {
    /* one spec per form, chosen by the first positional argument */
#define TO_FLAGS CGPY_ARG("non_blocking", CGPY_A_OBJ), CGPY_ARG("copy", CGPY_A_OBJ), CGPY_ARG("memory_format", CGPY_A_OBJ, CGPY_KWONLY)
    static cgpy_spec specs[3] = {
        [TO_DEVICE] = CGPY_SPEC("to", CGPY_ARG("device", CGPY_A_OBJ), CGPY_ARG("dtype", CGPY_A_OBJ), TO_FLAGS),
        [TO_DTYPE] = CGPY_SPEC("to", CGPY_ARG("dtype", CGPY_A_OBJ, CGPY_REQ), TO_FLAGS),
        [TO_OTHER] = CGPY_SPEC("to", CGPY_ARG("other", CGPY_A_TENSOR, CGPY_REQ), TO_FLAGS),
    };
#undef TO_FLAGS
    cg_tensor *t = T_OF(self);
    PyObject *first = nargs ? args[0] : NULL;
    int form = first && to_is_dtype(first) ? TO_DTYPE : first && cgpy_is_tensor(first) ? TO_OTHER : TO_DEVICE;
    const char *const *names = k_to_names[form];
    cgpy_val a[5];
    if (cgpy_args_parse(&specs[form], self, args, nargs, kwnames, a)) return NULL;
    PyObject *v[4] = {a[0].o, a[1].o, a[2].o, form == TO_DEVICE ? a[3].o : NULL};
    cg_dtype dt = cg_tensor_dtype(t);
    cg_device dev = cg_tensor_device(t);
    int flag[2] = {0, 0}; /* non_blocking, copy */
    int flag_slot = form == TO_DEVICE ? 2 : 1;
    for (int k = 0; k < 2; k++) {
        PyObject *o = v[flag_slot + k];
        if (!o) continue;
        if (!PyBool_Check(o)) {
            PyErr_Format(PyExc_TypeError, "to(): argument '%s' must be bool, not %.100s", names[flag_slot + k],
                         Py_TYPE(o)->tp_name);
            return NULL;
        }
        flag[k] = o == Py_True;
    }
    if (form == TO_OTHER) {
        dt = cg_tensor_dtype(cgpy_t(v[0]));
        dev = cg_tensor_device(cgpy_t(v[0]));
    } else {
        PyObject *dto = form == TO_DTYPE ? v[0] : v[1], *devo = form == TO_DEVICE ? v[0] : NULL;
        if (dto && dto != Py_None && !to_is_dtype(dto)) return to_invalid("expected a dtype, got", dto);
        if (dto && !cgpy_dtype_conv(dto, &dt)) return NULL;
        if (devo && devo != Py_None) {
            int index = PyLong_Check(devo) && !PyBool_Check(devo); /* cuda:N, as in PyTorch */
            if (!index && !PyUnicode_Check(devo) && !PyObject_TypeCheck(devo, &CgDevice_Type))
                return to_invalid("expected a device, a device string or a dtype, got", devo);
            if (!cgpy_device_conv(devo, &dev)) return NULL;
        }
    }
    /* non_blocking: accepted. A copy to a cuda device is enqueued on its stream once the host memory may be
     * reused (pageable memory: PyTorch's non_blocking then is as synchronous); a copy to the CPU waits for
     * the device, so its result is ready when to() returns, as PyTorch's is with non_blocking=False */
    (void)flag[0];
    cg_memory_format fmt;
    if (cgpy_memory_format(a[form == TO_DEVICE ? 4 : 3].o, CG_MEMORY_PRESERVE, "to", &fmt)) return NULL;
    cg_tensor *r = cg_to_device(t, dev);
    if (!r) return cgpy_raise();
    cg_tensor *c = cg_to_dtype_as(r, dt, CG_MEMORY_PRESERVE);
    cg_tensor_release(r);
    if (!c) return cgpy_raise();
    if (fmt != CG_MEMORY_PRESERVE && cg_tensor_suggest_memory_format(c) != fmt) { /* PyTorch's test */
        r = cg_clone_as(c, fmt);
        cg_tensor_release(c);
        if (!r) return cgpy_raise();
        c = r;
    }
    if (flag[1] && c == t) { /* copy=True: a new tensor even when nothing changes */
        cg_tensor_release(c);
        c = cg_clone_as(t, fmt);
        if (!c) return cgpy_raise();
    }
    return cgpy_wrap(c);
}

/* x.float(memory_format=preserve_format) and the like: Tensor.to(dtype, memory_format=) */
static PyObject *cast_method(CGPY_FASTKW_ARGS, const char *name, cg_dtype dt) {
    if (!nargs && !kwnames) return cgpy_wrap(cg_to_dtype_as(T_OF(self), dt, CG_MEMORY_PRESERVE));
    cgpy_spec spec = CGPY_SPEC(name, CGPY_ARG("memory_format", CGPY_A_OBJ, CGPY_KWONLY)); /* per call: named */
    cg_memory_format f;
    if (format_arg(&spec, self, args, nargs, kwnames, CG_MEMORY_PRESERVE, &f)) return NULL;
    cg_tensor *t = T_OF(self), *c = cg_to_dtype_as(t, dt, f);
    if (c && f != CG_MEMORY_PRESERVE && cg_tensor_suggest_memory_format(c) != f) {
        cg_tensor *r = cg_clone_as(c, f);
        cg_tensor_release(c);
        c = r;
    }
    return cgpy_wrap(c);
}
#define CAST_METHOD(name, DT) \
    static PyObject *m_##name(CGPY_FASTKW_ARGS) { return cast_method(self, args, nargs, kwnames, #name, DT); }
CAST_METHOD(float, CG_DTYPE_F32)
CAST_METHOD(double, CG_DTYPE_F64)
CAST_METHOD(half, CG_DTYPE_F16)
CAST_METHOD(bfloat16, CG_DTYPE_BF16)
CAST_METHOD(int, CG_DTYPE_I32)
CAST_METHOD(long, CG_DTYPE_I64)
CAST_METHOD(short, CG_DTYPE_I16)
CAST_METHOD(char, CG_DTYPE_I8)
CAST_METHOD(byte, CG_DTYPE_U8)
CAST_METHOD(bool, CG_DTYPE_BOOL)


/* ------------------------------------------------------------- type(), *_as, new_* */

extern const char *cgpy_torch_type_name(cg_dtype dt); /* number.c */
extern cg_tensor *cgpy_tensor_from_data(PyObject *data, int dtype, cg_device dev); /* tensor.c */

/* "cgrad.FloatTensor" / "torch.FloatTensor" -> dtype; 0 or -1 (ValueError) */
static int dtype_of_type_string(PyObject *s, cg_dtype *out) {
    const char *str = PyUnicode_AsUTF8(s);
    if (!str) return -1;
    const char *name = strncmp(str, "cgrad.", 6) == 0 ? str + 6 : strncmp(str, "torch.", 6) == 0 ? str + 6 : NULL;
    for (int d = 0; name && d < CG_DTYPE_COUNT; d++) {
        const char *tn = cgpy_torch_type_name((cg_dtype)d);
        size_t n = strlen(tn);
        if (strncmp(name, tn, n) == 0 && strcmp(name + n, "Tensor") == 0) {
            *out = (cg_dtype)d;
            return 0;
        }
    }
    PyErr_Format(PyExc_ValueError, "invalid type: '%s'", str);
    return -1;
}

/* self, or self cast to dt (a new tensor; self itself when already dt) */
static PyObject *as_dtype(PyObject *self, cg_dtype dt) {
    if (cg_tensor_dtype(T_OF(self)) == dt) return Py_NewRef(self);
    return cgpy_wrap(cg_to_dtype(T_OF(self), dt));
}

/* type() -> 'cgrad.FloatTensor'; type(dtype or type string) -> cast */
static PyObject *m_type(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("type", CGPY_ARG("dtype", CGPY_A_OBJ), CGPY_ARG("non_blocking", CGPY_A_BOOL));
    cgpy_val v[2];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *dtype = v[0].o ? v[0].o : Py_None;
    cg_dtype dt = cg_tensor_dtype(T_OF(self));
    if (dtype == Py_None) return PyUnicode_FromFormat("cgrad.%sTensor", cgpy_torch_type_name(dt));
    if (PyUnicode_Check(dtype)) {
        if (dtype_of_type_string(dtype, &dt)) return NULL;
    } else if (!cgpy_dtype_conv(dtype, &dt)) {
        return NULL;
    }
    return as_dtype(self, dt);
}

static PyObject *tensor_arg(PyObject *o, const char *fn) {
    if (!cgpy_is_tensor(o)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'other' (position 1) must be Tensor, not %.100s", fn,
                     Py_TYPE(o)->tp_name);
        return NULL;
    }
    return o;
}
static PyObject *m_type_as(PyObject *self, PyObject *other) {
    if (!tensor_arg(other, "type_as")) return NULL;
    return as_dtype(self, cg_tensor_dtype(cgpy_t(other)));
}
static PyObject *m_view_as(PyObject *self, PyObject *other) {
    if (!tensor_arg(other, "view_as")) return NULL;
    cg_tensor *o = cgpy_t(other);
    return cgpy_wrap(cg_view(T_OF(self), cg_tensor_ndim(o), cg_tensor_shape(o)));
}
static PyObject *m_reshape_as(PyObject *self, PyObject *other) {
    if (!tensor_arg(other, "reshape_as")) return NULL;
    cg_tensor *o = cgpy_t(other);
    return cgpy_wrap(cg_reshape(T_OF(self), cg_tensor_ndim(o), cg_tensor_shape(o)));
}
static PyObject *m_expand_as(PyObject *self, PyObject *other) {
    if (!tensor_arg(other, "expand_as")) return NULL;
    cg_tensor *o = cgpy_t(other);
    return cgpy_wrap(cg_expand(T_OF(self), cg_tensor_ndim(o), cg_tensor_shape(o)));
}

/* keyword arguments of the new_* family (the last NEW_KW_N parameters of
 * their specs; layout and pin_memory are ignored); dtype / device default to self's */
#define NEW_KW_N 5
#define NEW_KW                                                                                                     \
    CGPY_ARG("dtype", CGPY_A_DTYPE, CGPY_KWONLY), CGPY_ARG("device", CGPY_A_DEVICE, CGPY_KWONLY),                  \
        CGPY_ARG("requires_grad", CGPY_A_BOOL, CGPY_KWONLY), CGPY_ARG("layout", CGPY_A_OBJ, CGPY_KWONLY),          \
        CGPY_ARG("pin_memory", CGPY_A_OBJ, CGPY_KWONLY)
static void new_kwargs(PyObject *self, const cgpy_val *kw, cg_dtype *dt, cg_device *dev, int *rg) {
    *dt = (int)kw[0].dtype >= 0 ? kw[0].dtype : cg_tensor_dtype(T_OF(self));
    *dev = cgpy_given(&kw[1]) ? kw[1].dev : cg_tensor_device(T_OF(self));
    *rg = kw[2].b;
}

static PyObject *new_result(cg_tensor *t, int rg) {
    if (!t) return cgpy_raise();
    if (rg && cgpy_check(cg_tensor_set_requires_grad(t, true))) {
        cg_tensor_release(t);
        return NULL;
    }
    return cgpy_wrap(t);
}

enum { NEW_ZEROS, NEW_ONES, NEW_EMPTY, NEW_FULL };
static PyObject *new_factory(CGPY_FASTKW_ARGS, int kind) {
    static cgpy_spec specs[4] = {
        [NEW_ZEROS] = CGPY_SPEC("new_zeros", CGPY_ARG("size", CGPY_A_SIZE), NEW_KW),
        [NEW_ONES] = CGPY_SPEC("new_ones", CGPY_ARG("size", CGPY_A_SIZE), NEW_KW),
        [NEW_EMPTY] = CGPY_SPEC("new_empty", CGPY_ARG("size", CGPY_A_SIZE), NEW_KW),
        [NEW_FULL] = CGPY_SPEC("new_full", CGPY_ARG("size", CGPY_A_INTLIST, CGPY_REQ), CGPY_ARG("fill_value",
                               CGPY_A_OBJ, CGPY_REQ),
                               NEW_KW),
    };
    cgpy_val v[2 + NEW_KW_N];
    if (cgpy_args_parse(&specs[kind], self, args, nargs, kwnames, v)) return NULL;
    cg_dtype dt;
    cg_device dev;
    int rg, nd = v[0].n;
    const int64_t *shape = v[0].v;
    double fill = 0;
    PyObject *fv = kind == NEW_FULL ? v[1].o : NULL;
    new_kwargs(self, v + (kind == NEW_FULL ? 2 : 1), &dt, &dev, &rg);
    if (fv) {
        if (cgpy_is_tensor(fv)) {
            if (cgpy_check(cg_tensor_item(cgpy_t(fv), &fill))) return NULL;
        } else if (((fill = PyFloat_AsDouble(fv)) == -1.0 && PyErr_Occurred()) || cgpy_check_fits(fv, dt, true)) {
            return NULL;
        }
    }
    cg_tensor *t = kind == NEW_ZEROS ? cg_zeros(nd, shape, dt, dev)
                   : kind == NEW_ONES ? cg_ones(nd, shape, dt, dev)
                   : kind == NEW_EMPTY ? cg_empty(nd, shape, dt, dev)
                   : cg_full(nd, shape, fill, dt, dev);
    if (fv && t && cgpy_fill_exact(t, fv)) {
        cg_tensor_release(t);
        return NULL;
    }
    return new_result(t, rg);
}
static PyObject *m_new_zeros(CGPY_FASTKW_ARGS) { return new_factory(self, args, nargs, kwnames, NEW_ZEROS); }
static PyObject *m_new_ones(CGPY_FASTKW_ARGS) { return new_factory(self, args, nargs, kwnames, NEW_ONES); }
static PyObject *m_new_empty(CGPY_FASTKW_ARGS) { return new_factory(self, args, nargs, kwnames, NEW_EMPTY); }
static PyObject *m_new_full(CGPY_FASTKW_ARGS) { return new_factory(self, args, nargs, kwnames, NEW_FULL); }

/* new_tensor(data): a copy of data with self's dtype and device by default */
static PyObject *m_new_tensor(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("new_tensor", CGPY_ARG("data", CGPY_A_OBJ, CGPY_REQ), NEW_KW);
    cgpy_val v[1 + NEW_KW_N];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    cg_dtype dt;
    cg_device dev;
    int rg;
    new_kwargs(self, v + 1, &dt, &dev, &rg);
    cg_tensor *t = cgpy_tensor_from_data(v[0].o, (int)dt, dev);
    if (!t) return NULL;
    return new_result(t, rg);
}

static PyObject *m_is_floating_point(PyObject *self, PyObject *u) {
    (void)u;
    return PyBool_FromLong(cg_dtype_is_floating(cg_tensor_dtype(T_OF(self))));
}
static PyObject *m_is_signed(PyObject *self, PyObject *u) {
    (void)u;
    cg_dtype dt = cg_tensor_dtype(T_OF(self));
    return PyBool_FromLong(cg_dtype_is_signed(dt));
}
static PyObject *m_data_ptr(PyObject *self, PyObject *u) {
    (void)u;
    cg_tensor *t = T_OF(self);
    void *p = cgpy_data_ptr(t); /* a device address on cuda (Note [Device addresses] in cuda.c) */
    if (!p && PyErr_Occurred()) return NULL;
    return PyLong_FromVoidPtr(p);
}

/* ------------------------------------------------------------- T / mT / H / mH (properties in _tensor.py) */

/* T: all dims reversed (a 0-d or 1-d tensor is returned as an alias) */
static PyObject *m_T(PyObject *self, PyObject *u) {
    (void)u;
    cg_tensor *t = T_OF(self);
    int nd = cg_tensor_ndim(t);
    int64_t perm[CG_MAX_DIMS];
    for (int i = 0; i < nd; i++) perm[i] = nd - 1 - i;
    return cgpy_wrap(cg_permute(t, perm));
}
/* mT / mH: the last two dims swapped; H: 2-D (or 0-d) only. Real dtypes: H == T. */
static PyObject *matrix_transpose(PyObject *self, const char *name, int exact2d) {
    cg_tensor *t = T_OF(self);
    int nd = cg_tensor_ndim(t);
    if (exact2d ? (nd != 2 && nd != 0) : nd < 2) {
        if (exact2d)
            PyErr_Format(PyExc_RuntimeError, "tensor.%s is only supported on matrices (2-D tensors). Got %d-D tensor.%s",
                         name, nd, nd > 2 ? " For batches of matrices, consider using tensor.mH" : "");
        else
            PyErr_Format(PyExc_RuntimeError, "tensor.%s is only supported on matrices or batches of matrices. Got %d-D tensor.",
                         name, nd);
        return NULL;
    }
    if (nd == 0) return cgpy_wrap(cg_permute(t, NULL));
    return cgpy_wrap(cg_transpose(t, -2, -1));
}
static PyObject *m_mT(PyObject *self, PyObject *u) { (void)u; return matrix_transpose(self, "mT", 0); }
static PyObject *m_mH(PyObject *self, PyObject *u) { (void)u; return matrix_transpose(self, "mH", 0); }
static PyObject *m_H(PyObject *self, PyObject *u) { (void)u; return matrix_transpose(self, "H", 1); }

/* ------------------------------------------------------------- iteration, membership */

/* iter(t): the sub-tensors along dim 0 (unbind) */
static PyObject *m_iter(PyObject *self, PyObject *u) {
    (void)u;
    cg_tensor *t = T_OF(self);
    if (cg_tensor_ndim(t) == 0) {
        PyErr_SetString(PyExc_TypeError, "iteration over a 0-d tensor");
        return NULL;
    }
    int64_t n = cg_tensor_shape(t)[0];
    cg_tensor **parts = PyMem_Calloc((size_t)(n ? n : 1), sizeof(cg_tensor *));
    if (!parts) return PyErr_NoMemory();
    PyObject *tup = NULL;
    if (n > 0 && cg_unbind(t, 0, parts) < 0) {
        cgpy_raise();
    } else if ((tup = PyTuple_New(n))) {
        for (int64_t i = 0; i < n; i++) {
            PyObject *e = cgpy_wrap(parts[i]);
            parts[i] = NULL;
            if (!e) {
                Py_CLEAR(tup);
                break;
            }
            PyTuple_SET_ITEM(tup, i, e);
        }
    }
    for (int64_t i = 0; i < n; i++) cg_tensor_release(parts[i]);
    PyMem_Free(parts);
    if (!tup) return NULL;
    PyObject *it = PyObject_GetIter(tup);
    Py_DECREF(tup);
    return it;
}

extern PyObject *cgpy_tensor_contains(PyObject *self, PyObject *el); /* number.c */

PyMethodDef cgpy_tensor_core_methods[] = {
    CGPY_FASTKW("size", m_size),
    CGPY_FASTKW("stride", m_stride),
    {"dim", m_dim, METH_NOARGS, NULL},
    {"ndimension", m_dim, METH_NOARGS, NULL},
    {"numel", m_numel, METH_NOARGS, NULL},
    {"nelement", m_numel, METH_NOARGS, NULL},
    {"storage_offset", m_storage_offset, METH_NOARGS, NULL},
    {"_storage_key", m_storage_key, METH_NOARGS, NULL},
    {"element_size", m_element_size, METH_NOARGS, NULL},
    CGPY_FASTKW("is_contiguous", m_is_contiguous),
    CGPY_FASTKW("contiguous", m_contiguous),
    CGPY_FASTKW("clone", m_clone),
    {"detach", m_detach, METH_NOARGS, NULL},
    {"detach_", m_detach_, METH_NOARGS, NULL},
    {"item", m_item, METH_NOARGS, NULL},
    {"tolist", m_tolist, METH_NOARGS, NULL},
    CGPY_FASTKW("requires_grad_", m_requires_grad_),
    {"retain_grad", m_retain_grad, METH_NOARGS, NULL},
    {"register_hook", m_register_hook, METH_O, NULL},
    {"register_post_accumulate_grad_hook", m_register_post_accumulate_grad_hook, METH_O, NULL},
    {"_remove_hook", m_remove_hook, METH_O, NULL},
    CGPY_FASTKW("backward", m_backward),
    {"zero_", m_zero_, METH_NOARGS, NULL},
    {"fill_", m_fill_, METH_O, NULL},
    CGPY_FASTKW("copy_", m_copy_),
    CGPY_FASTKW("to", m_to),
    CGPY_FASTKW("float", m_float),
    CGPY_FASTKW("double", m_double),
    CGPY_FASTKW("half", m_half),
    CGPY_FASTKW("bfloat16", m_bfloat16),
    CGPY_FASTKW("int", m_int),
    CGPY_FASTKW("long", m_long),
    CGPY_FASTKW("short", m_short),
    CGPY_FASTKW("char", m_char),
    CGPY_FASTKW("byte", m_byte),
    CGPY_FASTKW("bool", m_bool),
    CGPY_FASTKW("type", m_type),
    {"type_as", m_type_as, METH_O, NULL},
    {"view_as", m_view_as, METH_O, NULL},
    {"reshape_as", m_reshape_as, METH_O, NULL},
    {"expand_as", m_expand_as, METH_O, NULL},
    CGPY_FASTKW("new_zeros", m_new_zeros),
    CGPY_FASTKW("new_ones", m_new_ones),
    CGPY_FASTKW("new_empty", m_new_empty),
    CGPY_FASTKW("new_full", m_new_full),
    CGPY_FASTKW("new_tensor", m_new_tensor),
    {"is_floating_point", m_is_floating_point, METH_NOARGS, NULL},
    {"is_signed", m_is_signed, METH_NOARGS, NULL},
    {"data_ptr", m_data_ptr, METH_NOARGS, NULL},
    {"_T", m_T, METH_NOARGS, NULL},
    {"_mT", m_mT, METH_NOARGS, NULL},
    {"_mH", m_mH, METH_NOARGS, NULL},
    {"_H", m_H, METH_NOARGS, NULL},
    {"__iter__", m_iter, METH_NOARGS, NULL},
    {"__contains__", cgpy_tensor_contains, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};
