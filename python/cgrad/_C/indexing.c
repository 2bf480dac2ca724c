/* indexing.c — Tensor.__getitem__ / __setitem__: ints, slices (with steps),
 * None, Ellipsis as views; integer / bool tensors and lists as advanced
 * indices (cg_index / cg_index_put_) with PyTorch's placement rules. */
#include "cgpy.h"

#include <string.h>

typedef struct {
    cg_tensor *view;            /* after basic indexing (new ref) */
    int nadv;                   /* advanced index tensors collected */
    cg_tensor *adv[CG_MAX_DIMS]; /* per dim of `view`: NULL or index tensor (new refs) */
    int adv_ndim;               /* number of dims of view the adv list spans */
} index_result;

static void index_result_free(index_result *r) {
    cg_tensor_release(r->view);
    for (int i = 0; i < CG_MAX_DIMS; i++) cg_tensor_release(r->adv[i]);
}

extern cg_tensor *cgpy_tensor_from_data(PyObject *data, int dtype, cg_device dev);

/* Apply basic indexing; record advanced indices by the dim they apply to. */
static int apply_index(cg_tensor *x, PyObject *idx, index_result *r) {
    memset(r, 0, sizeof *r);
    PyObject *tup;
    if (PyTuple_Check(idx)) {
        tup = idx;
        Py_INCREF(tup);
    } else {
        tup = PyTuple_Pack(1, idx);
        if (!tup) return -1;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(tup);
    /* count dims consumed to place the Ellipsis */
    int consumed = 0, ellipsis = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PyTuple_GET_ITEM(tup, i);
        if (o == Py_Ellipsis) {
            if (ellipsis++) {
                Py_DECREF(tup);
                PyErr_SetString(PyExc_IndexError, "an index can only have a single ellipsis ('...')");
                return -1;
            }
        } else if (o != Py_None) {
            if (cgpy_is_tensor(o) && cg_tensor_dtype(cgpy_t(o)) == CG_DTYPE_BOOL) consumed += cg_tensor_ndim(cgpy_t(o));
            else consumed++;
        }
    }
    int nd = cg_tensor_ndim(x);
    if (consumed > nd) {
        Py_DECREF(tup);
        PyErr_Format(PyExc_IndexError, "too many indices for tensor of dimension %d", nd);
        return -1;
    }
    cg_tensor_retain(x);
    cg_tensor *v = x;
    int d = 0; /* current dim in v */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PyTuple_GET_ITEM(tup, i);
        cg_tensor *next = NULL;
        if (o == Py_Ellipsis) {
            d += nd - consumed;
            continue;
        } else if (o == Py_None) {
            next = cg_unsqueeze(v, d);
            d++;
        } else if (PyLong_Check(o) || (PyIndex_Check(o) && !cgpy_is_tensor(o))) {
            Py_ssize_t k = PyNumber_AsSsize_t(o, PyExc_IndexError);
            if (k == -1 && PyErr_Occurred()) goto fail;
            next = cg_select(v, d, k);
            if (!next && cg_last_error() == CG_ERR_INDEX) {
                cg_clear_error();
                PyErr_Format(PyExc_IndexError, "index %zd is out of bounds for dimension %d with size %lld", k, d,
                             (long long)cg_tensor_shape(v)[d]);
                goto fail;
            }
        } else if (PySlice_Check(o)) {
            Py_ssize_t start, stop, step;
            if (PySlice_Unpack(o, &start, &stop, &step) < 0) goto fail;
            if (step <= 0) {
                PyErr_SetString(PyExc_ValueError, "step must be greater than zero");
                goto fail;
            }
            int64_t size = cg_tensor_shape(v)[d];
            PySlice_AdjustIndices(size, &start, &stop, step);
            next = cg_slice(v, d, start, stop > start ? stop : start, step);
            d++;
        } else if (cgpy_is_tensor(o) || PyList_Check(o) || (PyTuple_Check(o) && idx != o)) {
            cg_tensor *it = cgpy_is_tensor(o) ? (cg_tensor_retain(cgpy_t(o)), cgpy_t(o)) : cgpy_tensor_from_data(o, -1, cg_cpu());
            if (!it) goto fail;
            cg_dtype dt = cg_tensor_dtype(it);
            if (cg_dtype_is_floating(dt)) {
                cg_tensor_release(it);
                PyErr_SetString(PyExc_IndexError, "tensors used as indices must be long, int, byte or bool tensors");
                goto fail;
            }
            if (d >= CG_MAX_DIMS) {
                cg_tensor_release(it);
                PyErr_SetString(PyExc_IndexError, "too many indices");
                goto fail;
            }
            r->adv[d] = it;
            r->nadv++;
            int span = dt == CG_DTYPE_BOOL ? cg_tensor_ndim(it) : 1;
            d += span;
            if (d > r->adv_ndim) r->adv_ndim = d;
            continue;
        } else {
            PyErr_Format(PyExc_IndexError,
                         "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
                         "indices (got %.100s)", Py_TYPE(o)->tp_name);
            goto fail;
        }
        if (!next) {
            cgpy_raise();
            goto fail;
        }
        cg_tensor_release(v);
        v = next;
    }
    Py_DECREF(tup);
    r->view = v;
    return 0;
fail:
    Py_DECREF(tup);
    cg_tensor_release(v);
    index_result_free(r);
    memset(r, 0, sizeof *r);
    return -1;
}

/* NOTE on integer-index dims: an int index removes its dim, which shifts the
 * dims recorded for later advanced indices; apply_index records the dim in the
 * view at the time it is seen, which is exactly the dim of the final view
 * because later basic indices only touch later dims. */

static PyObject *tensor_getitem(PyObject *self, PyObject *idx) {
    index_result r;
    if (apply_index(cgpy_t(self), idx, &r)) return NULL;
    if (!r.nadv) {
        cg_tensor *v = r.view;
        r.view = NULL;
        index_result_free(&r);
        return cgpy_wrap(v);
    }
    cg_tensor *out = cg_index(r.view, r.adv_ndim, r.adv);
    index_result_free(&r);
    return cgpy_wrap(out);
}

static int tensor_setitem(PyObject *self, PyObject *idx, PyObject *value) {
    if (!value) {
        PyErr_SetString(PyExc_TypeError, "cannot delete tensor elements");
        return -1;
    }
    index_result r;
    cg_tensor *x = cgpy_t(self);
    if (apply_index(x, idx, &r)) return -1;
    cg_tensor *v = cgpy_as_tensor(value, cg_tensor_dtype(x), cg_tensor_device(x));
    cg_status st = CG_OK;
    if (!v) {
        index_result_free(&r);
        return -1;
    }
    if (!r.nadv) st = cg_copy_(r.view, v);
    else st = cg_index_put_(r.view, r.adv_ndim, r.adv, v, false);
    cg_tensor_release(v);
    index_result_free(&r);
    return cgpy_check(st);
}

PyMappingMethods cgpy_tensor_as_mapping = {
    .mp_subscript = tensor_getitem,
    .mp_ass_subscript = tensor_setitem,
};
