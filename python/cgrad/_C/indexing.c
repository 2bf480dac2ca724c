/* indexing.c — Tensor.__getitem__ / __setitem__: ints, slices (with steps),
 * None, Ellipsis as views; integer / bool tensors, Python bools and lists as
 * advanced indices (cg_index / cg_index_put_) with PyTorch's placement rules.
 *
 * Note [Index entries]: basic indices are applied to a view first, left to
 * right. Advanced indices leave their dims in the view and are collected as
 * the engine's entry list: one entry per index, in order, each covering the
 * view dims it indexes (1 for an integer tensor, r for a bool mask of rank r,
 * 0 for a 0-d bool), with NULL (full slice) entries for the view dims between
 * them. Basic indices after an advanced one only touch later view dims, so
 * the dims the entries cover stay valid as the view changes. */
#include "bind.h"

#include <string.h>

extern cg_tensor *cgpy_tensor_from_data(PyObject *data, int dtype, cg_device dev);

enum { IT_ELLIPSIS, IT_NONE, IT_INT, IT_SLICE, IT_TENSOR };

typedef struct {
    int kind;
    Py_ssize_t k;  /* IT_INT */
    PyObject *o;   /* IT_SLICE (borrowed) */
    cg_tensor *t;  /* IT_TENSOR (owned; int64/int32/bool) */
} index_item;

typedef struct {
    cg_tensor *view;                /* after basic indexing (owned) */
    int nent;                       /* entries for cg_index; 0 when there is no advanced index */
    cg_tensor *ent[CG_MAX_DIMS];    /* NULL = full slice, else borrowed from the items */
} index_result;

#define MAX_ITEMS (2 * CG_MAX_DIMS + 8)

static void items_free(int n, index_item *it) {
    for (int i = 0; i < n; i++) cg_tensor_release(it[i].t);
}

/* PyTorch's treatSequenceAsTuple: a non-tuple sequence holding a slice,
 * Ellipsis, None, a tensor or a sequence is taken as a tuple of indices. */
static int sequence_as_tuple(PyObject *idx) {
    if (PyTuple_Check(idx)) return 1;
    if (cgpy_is_tensor(idx) || !PyList_Check(idx)) return 0;
    Py_ssize_t n = PyList_GET_SIZE(idx);
    if (n >= 32) return 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PyList_GET_ITEM(idx, i);
        if (cgpy_is_tensor(o) || PySequence_Check(o) || PySlice_Check(o) || o == Py_Ellipsis || o == Py_None)
            return 1;
    }
    return 0;
}

static int raise_engine(void) {
    cgpy_raise();
    return -1;
}

static int index_tensor_error(void) {
    PyErr_SetString(PyExc_IndexError, "tensors used as indices must be long, int, byte or bool tensors");
    return -1;
}

/* One Python index object -> an item (the tensor, if any, owned by the item). */
static int classify(PyObject *o, index_item *it) {
    memset(it, 0, sizeof *it);
    if (o == Py_Ellipsis) {
        it->kind = IT_ELLIPSIS;
    } else if (o == Py_None) {
        it->kind = IT_NONE;
    } else if (PyBool_Check(o)) { /* x[True]: a 0-d bool mask */
        bool b = o == Py_True;
        it->kind = IT_TENSOR;
        it->t = cg_from_data(&b, 0, NULL, CG_DTYPE_BOOL);
        if (!it->t) return raise_engine();
    } else if (PyLong_Check(o) || (!cgpy_is_tensor(o) && !PySequence_Check(o) && PyIndex_Check(o))) {
        it->kind = IT_INT;
        it->k = PyNumber_AsSsize_t(o, PyExc_IndexError);
        if (it->k == -1 && PyErr_Occurred()) return -1;
    } else if (PySlice_Check(o)) {
        it->kind = IT_SLICE;
        it->o = o;
    } else if (cgpy_is_tensor(o) || PySequence_Check(o)) { /* lists, tuples; other sequences fail conversion */
        cg_tensor *t;
        if (cgpy_is_tensor(o)) {
            t = cgpy_t(o);
            cg_tensor_retain(t);
        } else {
            t = cgpy_tensor_from_data(o, -1, cg_cpu());
            if (!t) return -1;
            if (cg_tensor_numel(t) == 0 && cg_dtype_is_floating(cg_tensor_dtype(t))) { /* x[[]] */
                cg_tensor *l = cg_to_dtype(t, CG_DTYPE_I64);
                cg_tensor_release(t);
                if (!l) return raise_engine();
                t = l;
            }
        }
        cg_dtype dt = cg_tensor_dtype(t);
        if (dt == CG_DTYPE_U8) { /* byte masks act as bool masks, as in PyTorch */
            cg_tensor *b = cg_to_dtype(t, CG_DTYPE_BOOL);
            cg_tensor_release(t);
            if (!b) return raise_engine();
            t = b;
        } else if (dt != CG_DTYPE_I64 && dt != CG_DTYPE_I32 && dt != CG_DTYPE_BOOL) {
            cg_tensor_release(t);
            return index_tensor_error();
        }
        if (cg_tensor_ndim(t) == 0 && dt != CG_DTYPE_BOOL) { /* a 0-d integer tensor selects, like an int */
            int64_t k = 0;
            cg_status st = cg_tensor_copy_to_buffer(t, &k, CG_DTYPE_I64);
            cg_tensor_release(t);
            if (st != CG_OK) return raise_engine();
            it->kind = IT_INT;
            it->k = (Py_ssize_t)k;
            return 0;
        }
        it->kind = IT_TENSOR;
        it->t = t;
    } else {
        PyErr_Format(PyExc_IndexError,
                     "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
                     "indices (got %.100s)", Py_TYPE(o)->tp_name);
        return -1;
    }
    return 0;
}

static int item_dims(const index_item *it) {
    switch (it->kind) {
    case IT_INT:
    case IT_SLICE: return 1;
    case IT_TENSOR: return cg_tensor_dtype(it->t) == CG_DTYPE_BOOL ? cg_tensor_ndim(it->t) : 1;
    default: return 0;
    }
}

/* Apply the basic indices of `idx` to x and collect the advanced ones
 * (Note [Index entries]). On success r->view and items[0..*nitems) are owned
 * by the caller (release with items_free / cg_tensor_release). */
static int apply_index(cg_tensor *x, PyObject *idx, index_result *r, index_item *items, int *nitems) {
    memset(r, 0, sizeof *r);
    *nitems = 0;
    int n;
    if (PySlice_Check(idx)) { /* x[a:b:c] alone: its step is checked first, as in PyTorch */
        Py_ssize_t start, stop, step;
        if (PySlice_Unpack(idx, &start, &stop, &step) < 0) return -1;
        if (step <= 0) {
            PyErr_SetString(PyExc_ValueError, "step must be greater than zero");
            return -1;
        }
    }
    if (sequence_as_tuple(idx)) {
        PyObject *seq = PySequence_Fast(idx, "index");
        if (!seq) return -1;
        Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
        if (len > MAX_ITEMS) {
            Py_DECREF(seq);
            PyErr_Format(PyExc_IndexError, "too many indices for tensor of dimension %d", cg_tensor_ndim(x));
            return -1;
        }
        n = (int)len;
        for (int i = 0; i < n; i++) {
            /* items keep borrowed slices: the index object outlives this call */
            if (classify(PySequence_Fast_GET_ITEM(seq, i), &items[i])) {
                items_free(i, items);
                Py_DECREF(seq);
                return -1;
            }
        }
        Py_DECREF(seq);
    } else {
        n = 1;
        if (classify(idx, &items[0])) return -1;
    }
    *nitems = n;
    cg_device xd = cg_tensor_device(x);
    for (int i = 0; xd.type == CG_DEVICE_CUDA && i < n; i++) { /* CPU index tensors (and lists) go to x's device */
        cg_tensor *t = items[i].kind == IT_TENSOR ? items[i].t : NULL;
        if (!t || cg_tensor_device(t).type != CG_DEVICE_CPU) continue;
        cg_tensor *m = cg_to_device(t, xd);
        if (!m) return raise_engine();
        cg_tensor_release(t);
        items[i].t = m;
    }
    int consumed = 0;
    for (int i = 0; i < n; i++) consumed += item_dims(&items[i]);
    int nd = cg_tensor_ndim(x);
    if (consumed > nd) {
        if (nd == 0 && n == 1 && items[0].kind == IT_INT)
            PyErr_SetString(PyExc_IndexError, "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                                              "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number");
        else
            PyErr_Format(PyExc_IndexError, "too many indices for tensor of dimension %d", nd);
        goto fail;
    }
    cg_tensor_retain(x);
    r->view = x;
    int d = 0, covered = 0; /* current dim of the view; view dims covered by entries */
    for (int i = 0; i < n; i++) {
        index_item *it = &items[i];
        cg_tensor *v = r->view, *next = NULL;
        switch (it->kind) {
        case IT_ELLIPSIS: /* as in PyTorch, every Ellipsis skips the dims no index names */
            d += nd - consumed;
            continue;
        case IT_NONE:
            next = cg_unsqueeze(v, d);
            d++;
            break;
        case IT_INT: {
            int64_t size = cg_tensor_shape(v)[d];
            if (it->k < -size || it->k >= size) {
                PyErr_Format(PyExc_IndexError, "index %zd is out of bounds for dimension %d with size %lld", it->k, d,
                             (long long)size);
                goto fail;
            }
            next = cg_select(v, d, it->k);
            break;
        }
        case IT_SLICE: {
            Py_ssize_t start, stop, step;
            if (PySlice_Unpack(it->o, &start, &stop, &step) < 0) goto fail;
            if (step <= 0) {
                PyErr_SetString(PyExc_ValueError, "step must be greater than zero");
                goto fail;
            }
            PySlice_AdjustIndices(cg_tensor_shape(v)[d], &start, &stop, step);
            next = cg_slice(v, d, start, stop > start ? stop : start, step);
            d++;
            break;
        }
        default: { /* IT_TENSOR */
            int span = item_dims(it);
            while (covered < d) {
                if (r->nent == CG_MAX_DIMS) goto too_many;
                r->ent[r->nent++] = NULL;
                covered++;
            }
            if (r->nent == CG_MAX_DIMS) goto too_many;
            r->ent[r->nent++] = it->t;
            covered += span;
            d += span;
            continue;
        }
        }
        if (!next) {
            cgpy_raise();
            goto fail;
        }
        cg_tensor_release(v);
        r->view = next;
    }
    return 0;
too_many:
    PyErr_Format(PyExc_IndexError, "too many indices for tensor of dimension %d", nd);
fail:
    cg_tensor_release(r->view);
    items_free(*nitems, items);
    memset(r, 0, sizeof *r);
    *nitems = 0;
    return -1;
}

static PyObject *tensor_getitem(PyObject *self, PyObject *idx) {
    index_result r;
    index_item items[MAX_ITEMS];
    int nitems;
    if (apply_index(cgpy_t(self), idx, &r, items, &nitems)) return NULL;
    cg_tensor *out;
    if (!r.nent) {
        out = r.view;
        r.view = NULL;
    } else {
        CGPY_NOGIL_IF(cg_tensor_numel(r.view), out = cg_index(r.view, r.nent, r.ent));
    }
    cg_tensor_release(r.view);
    items_free(nitems, items);
    return cgpy_wrap(out);
}

/* The value of x[idx] = value as x's dtype, without its leading size-1 dims
 * (PyTorch's slicePrefix1sSize: x[0] = ones(1, 1, n) writes a row). */
static cg_tensor *value_for_put(PyObject *value, cg_tensor *x) {
    if (cgpy_is_scalar(value) && cgpy_check_fits(value, cg_tensor_dtype(x), true)) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) { /* a ValueError, as PyTorch raises here */
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "Overflow when unpacking long long: %R does not fit in int64", value);
        }
        return NULL;
    }
    cg_tensor *v = cgpy_as_tensor(value, cg_tensor_dtype(x), cg_tensor_device(x));
    if (v && cgpy_to_device_of(&v, cg_tensor_device(x))) return NULL; /* x[i] = cpu_tensor on a cuda x */
    if (!v) return NULL;
    int nd = cg_tensor_ndim(v), lead = 0;
    const int64_t *sh = cg_tensor_shape(v);
    while (lead < nd && sh[lead] == 1) lead++;
    if (!lead) return v;
    cg_tensor *s = cg_reshape(v, nd - lead, sh + lead);
    cg_tensor_release(v);
    if (!s) cgpy_raise();
    return s;
}

static int tensor_setitem(PyObject *self, PyObject *idx, PyObject *value) {
    if (!value) {
        PyErr_SetString(PyExc_TypeError, "cannot delete tensor elements");
        return -1;
    }
    cg_tensor *x = cgpy_t(self);
    if (!cgpy_is_tensor(value) && !cgpy_is_scalar(value)) {
        PyErr_Format(PyExc_TypeError, "can't assign a %.100s to a Tensor", Py_TYPE(value)->tp_name);
        return -1;
    }
    index_result r;
    index_item items[MAX_ITEMS];
    int nitems;
    if (apply_index(x, idx, &r, items, &nitems)) return -1;
    cg_tensor *v = NULL;
    cg_status st = CG_OK;
    if (r.nent && cgpy_is_tensor(value) && cg_tensor_dtype(cgpy_t(value)) != cg_tensor_dtype(x))
        PyErr_Format(PyExc_RuntimeError, "Index put requires the source and destination dtypes match, got %s for "
                     "the destination and %s for the source.", cg_dtype_name(cg_tensor_dtype(x)),
                     cg_dtype_name(cg_tensor_dtype(cgpy_t(value))));
    else
        v = value_for_put(value, x);
    if (v && !r.nent && cgpy_is_tensor(value)) { /* Note [Memory overlap], as PyTorch's copy_to */
        cg_tensor *src = cgpy_t(value);
        int nd = cg_tensor_ndim(src);
        if (nd == cg_tensor_ndim(r.view) && cg_device_eq(cg_tensor_device(src), cg_tensor_device(x)) &&
            !memcmp(cg_tensor_shape(src), cg_tensor_shape(r.view), sizeof(int64_t) * (size_t)nd)) {
            /* the same shape: copy_ from the value as given, which refuses a partial overlap */
            cg_tensor_release(v);
            cg_tensor_retain(src);
            v = src;
        } else if (cg_tensor_overlap(r.view, v) != CG_OVERLAP_NO) {
            /* broadcast (PyTorch expands the value, or fills from a 0-d one): it reads the
             * value as it was, so copy the value first */
            cg_tensor *c = cg_clone(v);
            cg_tensor_release(v);
            v = c;
            if (!v) cgpy_raise();
        }
    }
    if (v)
        CGPY_NOGIL_IF(cg_tensor_numel(r.view),
                      st = r.nent ? cg_index_put_(r.view, r.nent, r.ent, v, false) : cg_copy_(r.view, v));
    cg_tensor_release(v);
    cg_tensor_release(r.view);
    items_free(nitems, items);
    if (!v) return -1;
    return cgpy_check(st);
}

PyMappingMethods cgpy_tensor_as_mapping = {
    .mp_subscript = tensor_getitem,
    .mp_ass_subscript = tensor_setitem,
};
