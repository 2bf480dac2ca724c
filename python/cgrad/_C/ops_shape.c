/* ops_shape.c — bindings of views and shape ops (view, reshape, permute,
 * transpose, expand, squeeze, narrow, diagonal, as_strided, movedim, cat,
 * stack, split, chunk, flip, roll, repeat, tile, tril/triu, ...) as Tensor
 * methods and module functions with PyTorch's signatures. Views share storage
 * (the engine builds them); cat / stack promote mixed dtypes as PyTorch. */
#include "reduce_shape_args.h"

#include <stdlib.h>
#include <string.h>

extern PyTypeObject CgSize_Type; /* tensor.c */

/* ---------------------------------------------------------------- argument helpers */

/* A shape / dim list given as ints (`x.view(2, 3)`), one sequence
 * (`x.view((2, 3))`) or, when there are no positional arguments, the keyword
 * `kwname`. No other keywords are accepted. */
static int intlist_arg(PyObject *rest, PyObject *kwr, const char *op, const char *kwname, int *n, int64_t *v) {
    Py_ssize_t nk = kwr ? PyDict_GET_SIZE(kwr) : 0;
    PyObject *kv = opargs_kw(kwr, kwname);
    if (nk > (kv ? 1 : 0) || (kv && PyTuple_GET_SIZE(rest))) {
        PyErr_Format(PyExc_TypeError, "%s() received an invalid combination of arguments (expected %s as ints or one "
                     "sequence of ints)", op, kwname);
        return -1;
    }
    if (kv) {
        PyObject *t = PyTuple_Pack(1, kv);
        int r = t ? cgpy_parse_shape(t, 0, n, v) : -1;
        Py_XDECREF(t);
        return r;
    }
    return cgpy_parse_shape(rest, 0, n, v);
}

/* Exactly `count` int arguments named `names` (positional or keyword); those
 * from index `required` on are optional and keep the value already in v[]. */
static int ints_args(PyObject *rest, PyObject *kwr, const char *op, int count, int required, const char *const *names,
                     int64_t *v) {
    Py_ssize_t n = PyTuple_GET_SIZE(rest), used = 0;
    if (n > count) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d arguments after the input (%zd given)", op, count, n);
        return -1;
    }
    for (int i = 0; i < count; i++) {
        PyObject *o = i < n ? PyTuple_GET_ITEM(rest, i) : opargs_kw(kwr, names[i]);
        if (i >= n && o) used++;
        else if (i < n && opargs_kw(kwr, names[i])) {
            PyErr_Format(PyExc_TypeError, "%s(): got multiple values for argument '%s'", op, names[i]);
            return -1;
        }
        if (!o || o == Py_None) {
            if (i < required) {
                PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", op, names[i]);
                return -1;
            }
            continue;
        }
        if (opargs_int(o, op, names[i], &v[i])) return -1;
    }
    if (kwr && PyDict_GET_SIZE(kwr) > used) { /* name the first key that is none of names[] */
        PyObject *key, *val;
        Py_ssize_t pos = 0;
        while (PyDict_Next(kwr, &pos, &key, &val)) {
            int known = 0;
            for (int i = 0; i < count && !known; i++) known = PyUnicode_Check(key) && !PyUnicode_CompareWithASCIIString(key, names[i]);
            if (!known) {
                PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%S'", op, key);
                return -1;
            }
        }
        PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument", op);
        return -1;
    }
    return 0;
}

/* Wrap dim d into [0, nd) (0-d tensors accept -1 and 0), or raise IndexError. */
static int wrap_dim(int64_t *d, int nd) {
    int64_t lim = nd ? nd : 1;
    if (*d < -lim || *d >= lim) {
        PyErr_Format(PyExc_IndexError, "Dimension out of range (expected to be in range of [%lld, %lld], but got %lld)",
                     (long long)-lim, (long long)lim - 1, (long long)*d);
        return -1;
    }
    if (*d < 0) *d += lim;
    return 0;
}

/* Tuple of wrapped results: out[0..n) are stolen (n < 0: the engine failed). */
static PyObject *tuple_of(int n, cg_tensor **out) {
    if (n < 0) return cgpy_raise();
    PyObject *t = PyTuple_New(n);
    for (int i = 0; i < n; i++) {
        PyObject *w = t ? cgpy_wrap(out[i]) : (cg_tensor_release(out[i]), NULL);
        if (!w) {
            for (int j = i + 1; j < n; j++) cg_tensor_release(out[j]);
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, i, w);
    }
    return t;
}

/* The tensors of a list/tuple argument, promoted to their common dtype:
 * *ts receives n new references (free with free_tensors). */
static int tensor_list(PyObject *seq, const char *op, int *n, cg_tensor ***ts) {
    if (cgpy_is_tensor(seq) || !PySequence_Check(seq)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'tensors' (position 1) must be tuple of Tensors, not %.100s", op,
                     Py_TYPE(seq)->tp_name);
        return -1;
    }
    PyObject *fast = PySequence_Fast(seq, "expected a sequence of Tensors");
    if (!fast) return -1;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
    PyObject **items = PySequence_Fast_ITEMS(fast);
    for (Py_ssize_t i = 0; i < len; i++) {
        if (!cgpy_is_tensor(items[i])) {
            PyErr_Format(PyExc_TypeError, "expected Tensor as element %zd in argument 0, but got %.100s", i,
                         Py_TYPE(items[i])->tp_name);
            Py_DECREF(fast);
            return -1;
        }
    }
    if (len == 0 || len > INT32_MAX) {
        /* PyTorch: a ValueError from cat, a RuntimeError from stack; InvalidArgument is both */
        PyErr_Format(cgpy_InvalidArgument, "%s(): expected a non-empty list of Tensors", op);
        Py_DECREF(fast);
        return -1;
    }
    *ts = PyMem_Calloc((size_t)len, sizeof(cg_tensor *));
    if (!*ts) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return -1;
    }
    cg_dtype dt;
    int r = cgpy_promote_operands((int)len, items, false, *ts, &dt);
    Py_DECREF(fast);
    if (r) {
        PyMem_Free(*ts);
        return -1;
    }
    *n = (int)len;
    return 0;
}
static void free_tensors(int n, cg_tensor **ts) {
    cgpy_release_n(n, ts);
    PyMem_Free(ts);
}

/* ---------------------------------------------------------------- view / reshape / expand */

static void release_ctx(void *ctx) { cg_tensor_release((cg_tensor *)ctx); }

/* x.view(dtype): the same bytes read as another dtype of the same element size */
static PyObject *view_dtype(cg_tensor *t, cg_dtype dt) {
    cg_dtype src = cg_tensor_dtype(t);
    if (dt == src) return cgpy_result(cg_view(t, cg_tensor_ndim(t), cg_tensor_shape(t)));
    if (cg_dtype_size(dt) != cg_dtype_size(src)) {
        PyErr_Format(PyExc_NotImplementedError, "view(dtype): viewing %s as %s (a different element size) is not supported",
                     cg_dtype_name(src), cg_dtype_name(dt));
        return NULL;
    }
    void *data = cg_tensor_data(t);
    if (!data && cg_tensor_numel(t) > 0) {
        PyErr_Format(PyExc_NotImplementedError, "view(dtype): not supported on the %s device",
                     cg_device_name(cg_tensor_device(t)));
        return NULL;
    }
    cg_tensor_retain(t);
    cg_tensor *r = cg_from_blob(data, cg_tensor_ndim(t), cg_tensor_shape(t), cg_tensor_strides(t), dt, release_ctx, t);
    if (!r) cg_tensor_release(t);
    else if (cg_tensor_is_readonly(t)) cg_tensor_mark_readonly(r); /* Note [Read-only memory] */
    return cgpy_result(r);
}

/* x.view(*shape) / x.view(dtype) */
static PyObject *py_view(PyObject *self, PyObject *args, PyObject *kw) {
    PyObject *d = PyTuple_GET_SIZE(args) == 1 ? PyTuple_GET_ITEM(args, 0) : opargs_kw(kw, "dtype");
    if (d && (PyObject_TypeCheck(d, &CgDtype_Type) || PyType_Check(d))) {
        cg_dtype dt = CG_DTYPE_COUNT;
        if (!cgpy_dtype_conv(d, &dt)) return NULL;
        return view_dtype(cgpy_t(self), dt);
    }
    int nd;
    int64_t shape[CG_MAX_DIMS];
    if (intlist_arg(args, kw, "view", "size", &nd, shape)) return NULL;
    return cgpy_result(cg_view(cgpy_t(self), nd, shape));
}

typedef cg_tensor *(*shape_fn)(cg_tensor *, int, const int64_t *);

/* op(input, *shape): reshape / broadcast_to / expand / permute / tile / repeat / flip */
static PyObject *shape_op(PyObject *self, PyObject *args, PyObject *kw, const char *name, const char *kwname, shape_fn fn) {
    PyObject *x, *rest, *kwr;
    if (opargs_split(self, args, kw, name, "input", NULL, &x, &rest, &kwr)) return NULL;
    int nd;
    int64_t v[CG_MAX_DIMS];
    int r = intlist_arg(rest, kwr, name, kwname, &nd, v);
    opargs_done(rest, kwr);
    if (r) return NULL;
    return cgpy_result(fn(cgpy_t(x), nd, v));
}
static cg_tensor *permute_fn(cg_tensor *t, int n, const int64_t *dims) {
    if (n != cg_tensor_ndim(t)) {
        cg_set_error(CG_ERR_SHAPE, "[permute] the number of dims don't match: input has %d dims, permutation has %d",
                     cg_tensor_ndim(t), n);
        return NULL;
    }
    return cg_permute(t, dims);
}
static cg_tensor *flip_fn(cg_tensor *t, int n, const int64_t *dims) { return cg_flip(t, n, dims); }

static PyObject *py_reshape(PyObject *s, PyObject *a, PyObject *k) { return shape_op(s, a, k, "reshape", "shape", cg_reshape); }
static PyObject *py_expand(PyObject *s, PyObject *a, PyObject *k) { return shape_op(s, a, k, "expand", "size", cg_expand); }
static PyObject *py_broadcast_to(PyObject *s, PyObject *a, PyObject *k) {
    return shape_op(s, a, k, "broadcast_to", "size", cg_broadcast_to);
}
static PyObject *py_permute(PyObject *s, PyObject *a, PyObject *k) { return shape_op(s, a, k, "permute", "dims", permute_fn); }
static PyObject *py_tile(PyObject *s, PyObject *a, PyObject *k) { return shape_op(s, a, k, "tile", "dims", cg_tile); }
static PyObject *py_repeat(PyObject *s, PyObject *a, PyObject *k) { return shape_op(s, a, k, "repeat", "repeats", cg_repeat); }
static PyObject *py_flip(PyObject *s, PyObject *a, PyObject *k) { return shape_op(s, a, k, "flip", "dims", flip_fn); }

/* ---------------------------------------------------------------- transposes */

/* op(input, dim0, dim1) with the argument names of transpose / swapaxes / swapdims */
static PyObject *transpose_op(PyObject *self, PyObject *args, PyObject *kw, const char *name, const char *const *names) {
    PyObject *x, *rest, *kwr;
    if (opargs_split(self, args, kw, name, "input", NULL, &x, &rest, &kwr)) return NULL;
    int64_t d[2];
    int r = ints_args(rest, kwr, name, 2, 2, names, d);
    opargs_done(rest, kwr);
    if (r) return NULL;
    return cgpy_result(cg_transpose(cgpy_t(x), d[0], d[1]));
}
static const char *const dim01[] = {"dim0", "dim1"};
static const char *const axis01[] = {"axis0", "axis1"};
static PyObject *py_transpose(PyObject *s, PyObject *a, PyObject *k) { return transpose_op(s, a, k, "transpose", dim01); }
static PyObject *py_swapdims(PyObject *s, PyObject *a, PyObject *k) { return transpose_op(s, a, k, "swapdims", dim01); }
static PyObject *py_swapaxes(PyObject *s, PyObject *a, PyObject *k) { return transpose_op(s, a, k, "swapaxes", axis01); }

/* t(input): 0-d and 1-d unchanged, 2-d transposed */
static PyObject *py_t(PyObject *self, PyObject *args, PyObject *kw) {
    PyObject *x, *rest, *kwr;
    if (opargs_split(self, args, kw, "t", "input", NULL, &x, &rest, &kwr)) return NULL;
    int r = ints_args(rest, kwr, "t", 0, 0, NULL, NULL);
    opargs_done(rest, kwr);
    if (r) return NULL;
    if (cg_tensor_ndim(cgpy_t(x)) > 2) {
        PyErr_Format(PyExc_RuntimeError, "t() expects a tensor with <= 2 dimensions, but self is %dD", cg_tensor_ndim(cgpy_t(x)));
        return NULL;
    }
    return cgpy_result(cg_t(cgpy_t(x)));
}

/* movedim / moveaxis(input, source, destination): int or sequences of ints */
static PyObject *movedim_op(PyObject *self, PyObject *args, PyObject *kw, const char *name) {
    PyObject *x, *rest, *kwr, *src, *dst;
    if (opargs_split(self, args, kw, name, "input", NULL, &x, &rest, &kwr)) return NULL;
    static char *kwlist[] = {"source", "destination", NULL};
    char fmt[32];
    snprintf(fmt, sizeof fmt, "OO:%s", name);
    int ok = PyArg_ParseTupleAndKeywords(rest, kwr, fmt, kwlist, &src, &dst);
    opargs_done(rest, kwr);
    if (!ok) return NULL;
    int ns, ndst, nd = cg_tensor_ndim(cgpy_t(x));
    int64_t s[CG_MAX_DIMS], d[CG_MAX_DIMS], perm[CG_MAX_DIMS];
    if (opargs_dims(src, name, &ns, s) || opargs_dims(dst, name, &ndst, d)) return NULL;
    if (ns != ndst) {
        PyErr_Format(PyExc_RuntimeError, "%s: Invalid source or destination dims: source (%d dims) should contain the same "
                     "number of dims as destination (%d dims)", name, ns, ndst);
        return NULL;
    }
    bool src_used[CG_MAX_DIMS] = {0}, dst_used[CG_MAX_DIMS] = {0};
    for (int i = 0; i < ns; i++) {
        if (wrap_dim(&s[i], nd) || wrap_dim(&d[i], nd)) return NULL;
        if (nd == 0) continue;
        if (src_used[s[i]] || dst_used[d[i]]) {
            PyErr_Format(PyExc_RuntimeError, "%s: repeated dim in %s", name, src_used[s[i]] ? "source" : "destination");
            return NULL;
        }
        src_used[s[i]] = dst_used[d[i]] = true;
        perm[d[i]] = s[i];
    }
    if (nd == 0) return cgpy_result(cg_view(cgpy_t(x), 0, NULL));
    for (int i = 0, next = 0; i < nd; i++) {
        if (dst_used[i]) continue;
        while (src_used[next]) next++;
        perm[i] = next++;
    }
    return cgpy_result(cg_permute(cgpy_t(x), perm));
}
static PyObject *py_movedim(PyObject *s, PyObject *a, PyObject *k) { return movedim_op(s, a, k, "movedim"); }
static PyObject *py_moveaxis(PyObject *s, PyObject *a, PyObject *k) { return movedim_op(s, a, k, "moveaxis"); }

/* ---------------------------------------------------------------- squeeze / unsqueeze / flatten */

/* squeeze(input, dim=None): dim an int or a sequence of ints */
static PyObject *py_squeeze(PyObject *self, PyObject *args, PyObject *kw) {
    PyObject *x, *rest, *kwr, *dim = Py_None;
    if (opargs_split(self, args, kw, "squeeze", "input", NULL, &x, &rest, &kwr)) return NULL;
    static char *kwlist[] = {"dim", NULL};
    int ok = PyArg_ParseTupleAndKeywords(rest, kwr, "|O:squeeze", kwlist, &dim);
    opargs_done(rest, kwr);
    if (!ok) return NULL;
    cg_tensor *t = cgpy_t(x);
    if (dim == Py_None) return cgpy_result(cg_squeeze(t));
    int n, nd = cg_tensor_ndim(t);
    int64_t dims[CG_MAX_DIMS];
    if (opargs_dims(dim, "squeeze", &n, dims)) return NULL;
    bool seen[CG_MAX_DIMS + 1] = {0};
    for (int i = 0; i < n; i++) {
        if (wrap_dim(&dims[i], nd)) return NULL;
        if (seen[dims[i]]) {
            PyErr_Format(PyExc_RuntimeError, "squeeze(): dim %lld appears multiple times in the list of dims",
                         (long long)dims[i]);
            return NULL;
        }
        seen[dims[i]] = true;
    }
    /* from the last dim down, so the earlier indices stay valid */
    cg_tensor_retain(t);
    for (int d = nd - 1; d >= 0; d--) {
        if (!seen[d]) continue;
        cg_tensor *s = cg_squeeze_dim(t, d);
        cg_tensor_release(t);
        if (!(t = s)) return cgpy_raise();
    }
    if (nd == 0) { /* a 0-d tensor squeezes to an alias of itself */
        cg_tensor *v = cg_view(t, 0, NULL);
        cg_tensor_release(t);
        t = v;
    }
    return cgpy_result(t);
}

typedef cg_tensor *(*dim_fn)(cg_tensor *, int64_t);

static PyObject *one_dim_op(PyObject *self, PyObject *args, PyObject *kw, const char *name, dim_fn fn, bool required) {
    PyObject *x, *rest, *kwr;
    if (opargs_split(self, args, kw, name, "input", NULL, &x, &rest, &kwr)) return NULL;
    static const char *const names[] = {"dim"};
    int64_t d = 0;
    int r = ints_args(rest, kwr, name, 1, required, names, &d);
    opargs_done(rest, kwr);
    if (r) return NULL;
    return cgpy_result(fn(cgpy_t(x), d));
}
static PyObject *py_unsqueeze(PyObject *s, PyObject *a, PyObject *k) { return one_dim_op(s, a, k, "unsqueeze", cg_unsqueeze, true); }

/* flatten(input, start_dim=0, end_dim=-1) */
static PyObject *py_flatten(PyObject *self, PyObject *args, PyObject *kw) {
    PyObject *x, *rest, *kwr;
    if (opargs_split(self, args, kw, "flatten", "input", NULL, &x, &rest, &kwr)) return NULL;
    static const char *const names[] = {"start_dim", "end_dim"};
    int64_t d[2] = {0, -1};
    int r = ints_args(rest, kwr, "flatten", 2, 0, names, d);
    opargs_done(rest, kwr);
    if (r) return NULL;
    return cgpy_result(cg_flatten(cgpy_t(x), d[0], d[1]));
}

/* unflatten(input, dim, sizes) */
static PyObject *py_unflatten(PyObject *self, PyObject *args, PyObject *kw) {
    PyObject *x, *rest, *kwr, *dim, *sizes;
    if (opargs_split(self, args, kw, "unflatten", "input", NULL, &x, &rest, &kwr)) return NULL;
    static char *kwlist[] = {"dim", "sizes", NULL};
    int ok = PyArg_ParseTupleAndKeywords(rest, kwr, "OO:unflatten", kwlist, &dim, &sizes);
    opargs_done(rest, kwr);
    int64_t d, sz[CG_MAX_DIMS];
    int n;
    if (!ok || opargs_int(dim, "unflatten", "dim", &d)) return NULL;
    PyObject *t = PyTuple_Pack(1, sizes);
    int r = t ? cgpy_parse_shape(t, 0, &n, sz) : -1;
    Py_XDECREF(t);
    if (r) return NULL;
    return cgpy_result(cg_unflatten(cgpy_t(x), d, n, sz));
}

/* ---------------------------------------------------------------- narrow / select / diagonal / as_strided / unfold */

static PyObject *py_narrow(PyObject *self, PyObject *args, PyObject *kw) {
    PyObject *x, *rest, *kwr;
    if (opargs_split(self, args, kw, "narrow", "input", NULL, &x, &rest, &kwr)) return NULL;
    static const char *const names[] = {"dim", "start", "length"};
    int64_t v[3];
    int r = ints_args(rest, kwr, "narrow", 3, 3, names, v);
    opargs_done(rest, kwr);
    if (r) return NULL;
    return cgpy_result(cg_narrow(cgpy_t(x), v[0], v[1], v[2]));
}

static PyObject *py_select(PyObject *self, PyObject *args, PyObject *kw) {
    PyObject *x, *rest, *kwr;
    if (opargs_split(self, args, kw, "select", "input", NULL, &x, &rest, &kwr)) return NULL;
    static const char *const names[] = {"dim", "index"};
    int64_t v[2];
    int r = ints_args(rest, kwr, "select", 2, 2, names, v);
    opargs_done(rest, kwr);
    if (r) return NULL;
    return cgpy_result(cg_select(cgpy_t(x), v[0], v[1]));
}

/* diagonal(input, offset=0, dim1=0, dim2=1) */
static PyObject *py_diagonal(PyObject *self, PyObject *args, PyObject *kw) {
    PyObject *x, *rest, *kwr;
    if (opargs_split(self, args, kw, "diagonal", "input", NULL, &x, &rest, &kwr)) return NULL;
    static const char *const names[] = {"offset", "dim1", "dim2"};
    int64_t v[3] = {0, 0, 1};
    int r = ints_args(rest, kwr, "diagonal", 3, 0, names, v);
    opargs_done(rest, kwr);
    if (r) return NULL;
    return cgpy_result(cg_diagonal(cgpy_t(x), v[0], v[1], v[2]));
}

/* as_strided(input, size, stride, storage_offset=None) */
static PyObject *py_as_strided(PyObject *self, PyObject *args, PyObject *kw) {
    PyObject *x, *rest, *kwr, *size, *stride, *off = Py_None;
    if (opargs_split(self, args, kw, "as_strided", "input", NULL, &x, &rest, &kwr)) return NULL;
    static char *kwlist[] = {"size", "stride", "storage_offset", NULL};
    int ok = PyArg_ParseTupleAndKeywords(rest, kwr, "OO|O:as_strided", kwlist, &size, &stride, &off);
    opargs_done(rest, kwr);
    if (!ok) return NULL;
    int n1, n2;
    int64_t sz[CG_MAX_DIMS], st[CG_MAX_DIMS], o = cg_tensor_offset(cgpy_t(x));
    PyObject *t1 = PyTuple_Pack(1, size), *t2 = PyTuple_Pack(1, stride);
    int r = (t1 && t2) ? (cgpy_parse_shape(t1, 0, &n1, sz) || cgpy_parse_shape(t2, 0, &n2, st)) : -1;
    Py_XDECREF(t1);
    Py_XDECREF(t2);
    if (r || (off != Py_None && opargs_int(off, "as_strided", "storage_offset", &o))) return NULL;
    if (n1 != n2) {
        PyErr_Format(PyExc_RuntimeError, "as_strided: mismatch in length of strides and shape (%d vs %d)", n2, n1);
        return NULL;
    }
    return cgpy_result(cg_as_strided(cgpy_t(x), n1, sz, st, o));
}

/* x.unfold(dimension, size, step) */
static PyObject *py_unfold(PyObject *self, PyObject *args, PyObject *kw) {
    static const char *const names[] = {"dimension", "size", "step"};
    int64_t v[3];
    if (ints_args(args, kw, "unfold", 3, 3, names, v)) return NULL;
    return cgpy_result(cg_unfold(cgpy_t(self), v[0], v[1], v[2]));
}

/* ---------------------------------------------------------------- cat / stack / hstack / vstack / dstack */

typedef cg_tensor *(*variadic_fn)(int, cg_tensor *const *, int64_t);

/* op(tensors, dim=0); dimkw is "dim" or "axis" (concatenate) */
static PyObject *join_op(PyObject *args, PyObject *kw, const char *name, const char *dimkw, variadic_fn fn) {
    PyObject *seq, *dim = NULL, *out = NULL;
    char *kwlist[] = {"tensors", (char *)dimkw, "out", NULL};
    char fmt[32];
    snprintf(fmt, sizeof fmt, "O|O$O:%s", name);
    if (!PyArg_ParseTupleAndKeywords(args, kw, fmt, kwlist, &seq, &dim, &out)) return NULL;
    int64_t d = 0;
    if (dim && opargs_int(dim, name, dimkw, &d)) return NULL;
    int n;
    cg_tensor **ts;
    if (tensor_list(seq, name, &n, &ts)) return NULL;
    cgpy_out_rule rule = {name, CGPY_OUT_CAST, CGPY_OUT_NO_ALIAS, 0};
    PyObject *res = cgpy_out_finish(out, fn(n, ts, d), &rule, n, ts);
    free_tensors(n, ts);
    return res;
}
static PyObject *py_cat(PyObject *m, PyObject *a, PyObject *k) { (void)m; return join_op(a, k, "cat", "dim", cg_cat); }
static PyObject *py_concat(PyObject *m, PyObject *a, PyObject *k) { (void)m; return join_op(a, k, "concat", "dim", cg_cat); }
static PyObject *py_concatenate(PyObject *m, PyObject *a, PyObject *k) {
    (void)m;
    return join_op(a, k, "concatenate", "axis", cg_cat);
}
static PyObject *py_stack(PyObject *m, PyObject *a, PyObject *k) { (void)m; return join_op(a, k, "stack", "dim", cg_stack); }

/* t viewed with at least `rank` dims, numpy's atleast_{1,2,3}d placement */
static cg_tensor *atleast(cg_tensor *t, int rank) {
    int nd = cg_tensor_ndim(t);
    const int64_t *s = cg_tensor_shape(t);
    int64_t shape[3] = {1, 1, 1};
    if (nd >= rank) return cg_view(t, nd, s);
    if (nd == 1) shape[rank == 3 ? 1 : rank - 1] = s[0];
    if (nd == 2) shape[0] = s[0], shape[1] = s[1];
    return cg_view(t, rank, shape);
}

/* hstack / vstack / dstack(tensors): kind 0, 1, 2 */
static PyObject *stack_like(PyObject *args, PyObject *kw, int kind) {
    static const char *names[] = {"hstack", "vstack", "dstack"};
    PyObject *seq, *out = NULL;
    static char *kwlist[] = {"tensors", "out", NULL};
    char fmt[32];
    snprintf(fmt, sizeof fmt, "O|$O:%s", names[kind]);
    if (!PyArg_ParseTupleAndKeywords(args, kw, fmt, kwlist, &seq, &out)) return NULL;
    int n;
    cg_tensor **ts;
    if (tensor_list(seq, names[kind], &n, &ts)) return NULL;
    int rank = kind == 0 ? 1 : kind + 1;
    for (int i = 0; i < n; i++) {
        cg_tensor *v = atleast(ts[i], rank);
        cg_tensor_release(ts[i]);
        ts[i] = v;
        if (!v) {
            for (int j = i + 1; j < n; j++) cg_tensor_release(ts[j]);
            n = i;
            free_tensors(n, ts);
            return cgpy_raise();
        }
    }
    int64_t dim = kind == 0 ? (cg_tensor_ndim(ts[0]) == 1 ? 0 : 1) : kind == 1 ? 0 : 2;
    cgpy_out_rule rule = {names[kind], CGPY_OUT_CAST, CGPY_OUT_NO_ALIAS, 0};
    PyObject *res = cgpy_out_finish(out, cg_cat(n, ts, dim), &rule, n, ts);
    free_tensors(n, ts);
    return res;
}
static PyObject *py_hstack(PyObject *m, PyObject *a, PyObject *k) { (void)m; return stack_like(a, k, 0); }
static PyObject *py_vstack(PyObject *m, PyObject *a, PyObject *k) { (void)m; return stack_like(a, k, 1); }
static PyObject *py_dstack(PyObject *m, PyObject *a, PyObject *k) { (void)m; return stack_like(a, k, 2); }

/* ---------------------------------------------------------------- broadcasting */

/* PyTorch's broadcast of shapes (n shapes of ranks nds); 0 or -1 (raised) */
static int broadcast_shapes(int n, const int *nds, int64_t (*shapes)[CG_MAX_DIMS], int *ond, int64_t *out) {
    *ond = 0;
    for (int i = 0; i < n; i++) *ond = nds[i] > *ond ? nds[i] : *ond;
    for (int k = 0; k < *ond; k++) out[k] = 1;
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < nds[i]; k++) {
            int64_t s = shapes[i][k], *o = &out[*ond - nds[i] + k];
            if (s == *o || s == 1) continue;
            if (*o == 1) {
                *o = s;
                continue;
            }
            PyErr_Format(cgpy_ShapeMismatch, "The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                         "non-singleton dimension %d", (long long)*o, (long long)s, k + *ond - nds[i]);
            return -1;
        }
    }
    return 0;
}

/* broadcast_tensors(*tensors) -> tuple of broadcast views */
static PyObject *py_broadcast_tensors(PyObject *m, PyObject *args) {
    (void)m;
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    PyObject *seq = args;
    if (n == 1 && !cgpy_is_tensor(PyTuple_GET_ITEM(args, 0))) seq = PyTuple_GET_ITEM(args, 0);
    PyObject *fast = PySequence_Fast(seq, "broadcast_tensors() expects Tensors");
    if (!fast) return NULL;
    n = PySequence_Fast_GET_SIZE(fast);
    int (*nds) = PyMem_Calloc((size_t)n + 1, sizeof(int));
    int64_t(*shapes)[CG_MAX_DIMS] = PyMem_Calloc((size_t)n + 1, sizeof *shapes);
    cg_tensor **outs = PyMem_Calloc((size_t)n + 1, sizeof(cg_tensor *));
    PyObject *res = NULL;
    int ond;
    int64_t shape[CG_MAX_DIMS];
    if (!nds || !shapes || !outs) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PySequence_Fast_GET_ITEM(fast, i);
        if (!cgpy_is_tensor(o)) {
            PyErr_Format(PyExc_TypeError, "broadcast_tensors(): expected Tensor as element %zd, but got %.100s", i,
                         Py_TYPE(o)->tp_name);
            goto done;
        }
        nds[i] = cg_tensor_ndim(cgpy_t(o));
        memcpy(shapes[i], cg_tensor_shape(cgpy_t(o)), sizeof(int64_t) * (size_t)nds[i]);
    }
    if (broadcast_shapes((int)n, nds, shapes, &ond, shape)) goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!(outs[i] = cg_broadcast_to(cgpy_t(PySequence_Fast_GET_ITEM(fast, i)), ond, shape))) {
            cgpy_release_n((int)i, outs);
            cgpy_raise();
            goto done;
        }
    }
    res = tuple_of((int)n, outs);
done:
    PyMem_Free(nds);
    PyMem_Free(shapes);
    PyMem_Free(outs);
    Py_DECREF(fast);
    return res;
}

/* broadcast_shapes(*shapes) -> Size */
static PyObject *py_broadcast_shapes(PyObject *m, PyObject *args) {
    (void)m;
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    int *nds = PyMem_Calloc((size_t)n + 1, sizeof(int));
    int64_t(*shapes)[CG_MAX_DIMS] = PyMem_Calloc((size_t)n + 1, sizeof *shapes);
    PyObject *res = NULL, *tup = NULL;
    int ond;
    int64_t shape[CG_MAX_DIMS];
    if (!nds || !shapes) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PyTuple_GET_ITEM(args, i);
        PyObject *t = PyTuple_Pack(1, o);
        int r = t ? cgpy_parse_shape(t, 0, &nds[i], shapes[i]) : -1;
        Py_XDECREF(t);
        if (r) goto done;
        for (int k = 0; k < nds[i]; k++)
            if (shapes[i][k] < 0) {
                PyErr_Format(PyExc_RuntimeError, "broadcast_shapes(): trying to create a tensor with negative dimension %lld",
                             (long long)shapes[i][k]);
                goto done;
            }
    }
    if (broadcast_shapes((int)n, nds, shapes, &ond, shape)) goto done;
    tup = PyTuple_New(ond);
    for (int k = 0; tup && k < ond; k++) {
        PyObject *v = PyLong_FromLongLong(shape[k]);
        if (!v) Py_CLEAR(tup);
        else PyTuple_SET_ITEM(tup, k, v);
    }
    if (tup) res = PyObject_CallOneArg((PyObject *)&CgSize_Type, tup);
done:
    Py_XDECREF(tup);
    PyMem_Free(nds);
    PyMem_Free(shapes);
    return res;
}

/* ---------------------------------------------------------------- split / chunk / unbind */

/* split(tensor, split_size_or_sections, dim=0) */
static PyObject *py_split(PyObject *self, PyObject *args, PyObject *kw) {
    PyObject *x, *rest, *kwr, *sp, *dim = NULL;
    if (opargs_split(self, args, kw, "split", "tensor", NULL, &x, &rest, &kwr)) return NULL;
    static char *kwlist[] = {"split_size", "dim", NULL};
    PyObject *alt = opargs_kw(kwr, "split_size_or_sections");
    int ok;
    if (alt && PyTuple_GET_SIZE(rest) == 0) { /* torch.split's name for the argument */
        static char *kwlist2[] = {"split_size_or_sections", "dim", NULL};
        ok = PyArg_ParseTupleAndKeywords(rest, kwr, "O|O:split", kwlist2, &sp, &dim);
    } else {
        ok = PyArg_ParseTupleAndKeywords(rest, kwr, "O|O:split", kwlist, &sp, &dim);
    }
    opargs_done(rest, kwr);
    int64_t d = 0;
    if (!ok || (dim && opargs_int(dim, "split", "dim", &d))) return NULL;
    cg_tensor *t = cgpy_t(x);
    int nd = cg_tensor_ndim(t);
    int64_t dd = d;
    if (nd && wrap_dim(&dd, nd)) return NULL;
    int64_t size = nd ? cg_tensor_shape(t)[dd] : 0;
    cg_tensor **outs;
    int n;
    if (PyLong_Check(sp) || (PyIndex_Check(sp) && !PySequence_Check(sp))) {
        int64_t s;
        if (opargs_int(sp, "split", "split_size", &s)) return NULL;
        int64_t cap = s > 0 ? size / s + (size % s != 0) : 1; /* size + s - 1 may overflow */
        outs = PyMem_Calloc((size_t)(cap > 1 ? cap : 1), sizeof(cg_tensor *));
        if (!outs) return PyErr_NoMemory();
        n = cg_split(t, s, d, outs);
    } else {
        int ns;
        int64_t sizes_small[CG_MAX_DIMS];
        PyObject *fast = PySequence_Fast(sp, "split(): split_size_or_sections must be an int or a sequence of ints");
        if (!fast) return NULL;
        Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
        int64_t *sizes = len > CG_MAX_DIMS ? PyMem_Malloc(sizeof(int64_t) * (size_t)len) : sizes_small;
        if (!sizes) {
            Py_DECREF(fast);
            return PyErr_NoMemory();
        }
        for (Py_ssize_t i = 0; i < len; i++)
            if (opargs_int(PySequence_Fast_GET_ITEM(fast, i), "split", "split_size_or_sections", &sizes[i])) {
                Py_DECREF(fast);
                if (sizes != sizes_small) PyMem_Free(sizes);
                return NULL;
            }
        Py_DECREF(fast);
        ns = (int)len;
        outs = PyMem_Calloc((size_t)(ns ? ns : 1), sizeof(cg_tensor *));
        n = outs ? cg_split_sizes(t, ns, sizes, d, outs) : -1;
        if (sizes != sizes_small) PyMem_Free(sizes);
        if (!outs) return PyErr_NoMemory();
    }
    PyObject *r = tuple_of(n, outs);
    PyMem_Free(outs);
    return r;
}

/* chunk(input, chunks, dim=0) */
static PyObject *py_chunk(PyObject *self, PyObject *args, PyObject *kw) {
    PyObject *x, *rest, *kwr;
    if (opargs_split(self, args, kw, "chunk", "input", NULL, &x, &rest, &kwr)) return NULL;
    static const char *const names[] = {"chunks", "dim"};
    int64_t v[2] = {0, 0};
    int r = ints_args(rest, kwr, "chunk", 2, 1, names, v);
    opargs_done(rest, kwr);
    if (r) return NULL;
    if (v[0] <= 0) {
        PyErr_Format(PyExc_RuntimeError, "chunk expects `chunks` to be greater than 0, got: %lld", (long long)v[0]);
        return NULL;
    }
    if (v[0] > INT32_MAX) {
        PyErr_Format(PyExc_ValueError, "chunk(): %lld chunks are too many", (long long)v[0]);
        return NULL;
    }
    cg_tensor **outs = PyMem_Calloc((size_t)v[0], sizeof(cg_tensor *));
    if (!outs) return PyErr_NoMemory();
    PyObject *res = tuple_of(cg_chunk(cgpy_t(x), v[0], v[1], outs), outs);
    PyMem_Free(outs);
    return res;
}

/* unbind(input, dim=0) */
static PyObject *py_unbind(PyObject *self, PyObject *args, PyObject *kw) {
    PyObject *x, *rest, *kwr;
    if (opargs_split(self, args, kw, "unbind", "input", NULL, &x, &rest, &kwr)) return NULL;
    static const char *const names[] = {"dim"};
    int64_t d = 0;
    int r = ints_args(rest, kwr, "unbind", 1, 0, names, &d);
    opargs_done(rest, kwr);
    if (r) return NULL;
    cg_tensor *t = cgpy_t(x);
    int nd = cg_tensor_ndim(t);
    if (nd == 0) {
        PyErr_SetString(PyExc_IndexError, "unbind(): dimension specified as 0 but tensor has no dimensions");
        return NULL;
    }
    int64_t dd = d;
    if (wrap_dim(&dd, nd)) return NULL;
    int64_t size = cg_tensor_shape(t)[dd];
    cg_tensor **outs = PyMem_Calloc((size_t)(size ? size : 1), sizeof(cg_tensor *));
    if (!outs) return PyErr_NoMemory();
    PyObject *res = tuple_of(cg_unbind(t, d, outs), outs);
    PyMem_Free(outs);
    return res;
}

/* ---------------------------------------------------------------- flips, roll */

static PyObject *flip_lr_ud(PyObject *self, PyObject *args, PyObject *kw, bool lr) {
    const char *name = lr ? "fliplr" : "flipud";
    PyObject *x, *rest, *kwr;
    if (opargs_split(self, args, kw, name, "input", NULL, &x, &rest, &kwr)) return NULL;
    int r = ints_args(rest, kwr, name, 0, 0, NULL, NULL);
    opargs_done(rest, kwr);
    if (r) return NULL;
    if (cg_tensor_ndim(cgpy_t(x)) < (lr ? 2 : 1)) {
        PyErr_Format(PyExc_RuntimeError, "%s: Input must be >= %d-d.", name, lr ? 2 : 1);
        return NULL;
    }
    int64_t d = lr ? 1 : 0;
    return cgpy_result(cg_flip(cgpy_t(x), 1, &d));
}
static PyObject *py_fliplr(PyObject *s, PyObject *a, PyObject *k) { return flip_lr_ud(s, a, k, true); }
static PyObject *py_flipud(PyObject *s, PyObject *a, PyObject *k) { return flip_lr_ud(s, a, k, false); }

/* roll(input, shifts, dims=None) */
static PyObject *py_roll(PyObject *self, PyObject *args, PyObject *kw) {
    PyObject *x, *rest, *kwr, *shifts, *dims = Py_None;
    if (opargs_split(self, args, kw, "roll", "input", NULL, &x, &rest, &kwr)) return NULL;
    static char *kwlist[] = {"shifts", "dims", NULL};
    int ok = PyArg_ParseTupleAndKeywords(rest, kwr, "O|O:roll", kwlist, &shifts, &dims);
    opargs_done(rest, kwr);
    if (!ok) return NULL;
    int ns, nd;
    int64_t s[CG_MAX_DIMS], d[CG_MAX_DIMS];
    if (opargs_dims(shifts, "roll", &ns, s) || opargs_dims(dims, "roll", &nd, d)) return NULL;
    if (dims != Py_None && ns != nd) {
        PyErr_Format(PyExc_RuntimeError, "roll: shifts and dimensions must align. shifts: %d, dims: %d", ns, nd);
        return NULL;
    }
    if (dims == Py_None && ns != 1) {
        PyErr_Format(PyExc_RuntimeError, "roll: without dims, shifts must be one int (got %d)", ns);
        return NULL;
    }
    return cgpy_result(cg_roll(cgpy_t(x), ns, s, dims == Py_None ? NULL : d));
}

/* ---------------------------------------------------------------- tril / triu */

static PyObject *tri_op(PyObject *self, PyObject *args, PyObject *kw, bool upper, bool inplace) {
    const char *name = upper ? (inplace ? "triu_" : "triu") : (inplace ? "tril_" : "tril");
    PyObject *x, *rest, *kwr, *out = NULL;
    if (opargs_split(self, args, kw, name, "input", inplace ? NULL : &out, &x, &rest, &kwr)) return NULL;
    static const char *const names[] = {"diagonal"};
    int64_t k = 0;
    int r = ints_args(rest, kwr, name, 1, 0, names, &k);
    opargs_done(rest, kwr);
    if (r) return NULL;
    cg_tensor *res = (upper ? cg_triu : cg_tril)(cgpy_t(x), k);
    if (!inplace) {
        cgpy_out_rule rule = {name, CGPY_OUT_EXACT, CGPY_OUT_ALIAS_OK, 0};
        cg_tensor *in = cgpy_t(x);
        return cgpy_out_finish(out, res, &rule, 1, &in);
    }
    if (!res) return cgpy_raise();
    cg_status st = cg_copy_(cgpy_t(self), res);
    cg_tensor_release(res);
    return cgpy_inplace_result(self, st);
}
static PyObject *py_tril(PyObject *s, PyObject *a, PyObject *k) { return tri_op(s, a, k, false, false); }
static PyObject *py_triu(PyObject *s, PyObject *a, PyObject *k) { return tri_op(s, a, k, true, false); }
static PyObject *py_tril_(PyObject *s, PyObject *a, PyObject *k) { return tri_op(s, a, k, false, true); }
static PyObject *py_triu_(PyObject *s, PyObject *a, PyObject *k) { return tri_op(s, a, k, true, true); }

/* ---------------------------------------------------------------- tables */

/* ops that are both Tensor methods and module functions */
#define SHAPE_SHARED_ENTRIES                                                                                             \
    CGPY_KW("reshape", py_reshape), CGPY_KW("broadcast_to", py_broadcast_to), CGPY_KW("permute", py_permute),          \
        CGPY_KW("tile", py_tile), CGPY_KW("flip", py_flip), CGPY_KW("transpose", py_transpose),                          \
        CGPY_KW("swapdims", py_swapdims), CGPY_KW("swapaxes", py_swapaxes), CGPY_KW("t", py_t),                        \
        CGPY_KW("movedim", py_movedim), CGPY_KW("moveaxis", py_moveaxis), CGPY_KW("squeeze", py_squeeze),               \
        CGPY_KW("unsqueeze", py_unsqueeze), CGPY_KW("flatten", py_flatten), CGPY_KW("unflatten", py_unflatten),       \
        CGPY_KW("narrow", py_narrow), CGPY_KW("select", py_select), CGPY_KW("diagonal", py_diagonal),                  \
        CGPY_KW("as_strided", py_as_strided), CGPY_KW("split", py_split), CGPY_KW("chunk", py_chunk),                  \
        CGPY_KW("unbind", py_unbind), CGPY_KW("fliplr", py_fliplr), CGPY_KW("flipud", py_flipud),                      \
        CGPY_KW("roll", py_roll), CGPY_KW("tril", py_tril), CGPY_KW("triu", py_triu)

PyMethodDef cgpy_shape_methods[] = {
    SHAPE_SHARED_ENTRIES,
    CGPY_KW("view", py_view),
    CGPY_KW("expand", py_expand),
    CGPY_KW("repeat", py_repeat),
    CGPY_KW("unfold", py_unfold),
    CGPY_KW("tril_", py_tril_),
    CGPY_KW("triu_", py_triu_),
    CGPY_TABLE_END,
};
PyMethodDef cgpy_shape_functions[] = {
    SHAPE_SHARED_ENTRIES,
    CGPY_KW("cat", py_cat),
    CGPY_KW("concat", py_concat),
    CGPY_KW("concatenate", py_concatenate),
    CGPY_KW("stack", py_stack),
    CGPY_KW("hstack", py_hstack),
    CGPY_KW("vstack", py_vstack),
    CGPY_KW("dstack", py_dstack),
    {"broadcast_tensors", py_broadcast_tensors, METH_VARARGS, NULL},
    {"broadcast_shapes", py_broadcast_shapes, METH_VARARGS, NULL},
    CGPY_TABLE_END,
};
