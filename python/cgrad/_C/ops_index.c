/* ops_index.c — bindings of the indexing ops (gather, scatter, scatter_add,
 * scatter_reduce, index_select, index_add / index_copy / index_fill,
 * index_put, masked_fill / masked_select / masked_scatter, take, nonzero,
 * argwhere) as Tensor methods, in-place methods and module functions, with
 * PyTorch's argument checks and exception types. In-place forms the engine
 * lacks run out of place and copy back (Note [In-place via out of place] in
 * opargs.h). */
#include "opargs.h"

/* PyTorch's dim check: IndexError naming the valid range (0-d tensors take -1 and 0). */
static int check_dim(cg_tensor *x, int64_t *dim) {
    int nd = cg_tensor_ndim(x), n = nd ? nd : 1;
    if (*dim < -n || *dim >= n) {
        PyErr_Format(PyExc_IndexError, "Dimension out of range (expected to be in range of [%d, %d], but got %lld)", -n,
                     n - 1, (long long)*dim);
        return -1;
    }
    if (*dim < 0) *dim += n;
    return 0;
}

static int parse_dim(PyObject *o, cg_tensor *x, int64_t *dim) {
    return cgpy_parse_int(o, dim, "dim") || check_dim(x, dim) ? -1 : 0;
}

/* a 0-d tensor of x's dtype from a Python number or a 0-d tensor (differentiable cast) */
static cg_tensor *fill_value(PyObject *v, cg_tensor *x, const char *op) {
    if (cgpy_is_tensor(v) && cg_tensor_ndim(cgpy_t(v)) != 0) {
        PyErr_Format(PyExc_RuntimeError, "%s only supports a 0-dimensional value tensor, but got tensor with %d dimension(s).",
                     op, cg_tensor_ndim(cgpy_t(v)));
        return NULL;
    }
    if (cgpy_is_scalar(v) && cgpy_check_fits(v, cg_tensor_dtype(x), true)) return NULL;
    return cgpy_as_tensor(v, cg_tensor_dtype(x), cg_tensor_device(x));
}

static int same_dtype(cg_tensor *x, cg_tensor *src, const char *op, const char *what) {
    if (cg_tensor_dtype(x) == cg_tensor_dtype(src)) return 0;
    PyErr_Format(PyExc_RuntimeError, "%s(): Expected self.dtype to be equal to %s.dtype (got %s and %s)", op, what,
                 cg_dtype_name(cg_tensor_dtype(x)), cg_dtype_name(cg_tensor_dtype(src)));
    return -1;
}

/* ------------------------------------------------------------- gather */

static PyObject *py_gather(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"input", "dim", "index", "sparse_grad", "out", NULL};
    PyObject *x, *dim_o, *index_o, *out = NULL;
    int sparse = 0;
    if (!opargs_parse(self, args, kw, "O!OO|$pO:gather", kwlist, &CgTensorBase_Type, &x, &dim_o, &index_o, &sparse, &out))
        return NULL;
    int64_t dim;
    if (parse_dim(dim_o, cgpy_t(x), &dim)) return NULL;
    cg_tensor *idx = opargs_index(index_o, "gather", true);
    if (!idx) return NULL;
    static const cgpy_out_rule rule = {"gather", CGPY_OUT_EXACT, CGPY_OUT_NO_ALIAS, 0};
    cg_tensor *ins[2] = {cgpy_t(x), idx};
    PyObject *res = opargs_out(cg_gather(cgpy_t(x), dim, idx), out, false, &rule, 2, ins);
    cg_tensor_release(idx);
    return res;
}

/* ------------------------------------------------------------- scatter family */

typedef enum { SC_SCATTER, SC_ADD, SC_REDUCE } sc_kind;

static PyObject *scatter_common(PyObject *self, PyObject *args, PyObject *kw, sc_kind kind, bool inplace) {
    static char *kw_scatter[] = {"input", "dim", "index", "src", "value", "reduce", NULL};
    static char *kw_add[] = {"input", "dim", "index", "src", NULL};
    static char *kw_reduce[] = {"input", "dim", "index", "src", "reduce", "include_self", NULL};
    const char *name = kind == SC_SCATTER ? (inplace ? "scatter_" : "scatter")
                       : kind == SC_ADD   ? (inplace ? "scatter_add_" : "scatter_add")
                                          : (inplace ? "scatter_reduce_" : "scatter_reduce");
    PyObject *x, *dim_o, *index_o, *src_o = NULL, *value_o = NULL;
    const char *reduce = NULL;
    int include_self = 1, ok;
    char fmt[48];
    if (kind == SC_SCATTER) {
        snprintf(fmt, sizeof fmt, "O!OO|OO$z:%s", name);
        ok = opargs_parse(self, args, kw, fmt, kw_scatter, &CgTensorBase_Type, &x, &dim_o, &index_o, &src_o, &value_o,
                          &reduce);
    } else if (kind == SC_ADD) {
        snprintf(fmt, sizeof fmt, "O!OOO:%s", name);
        ok = opargs_parse(self, args, kw, fmt, kw_add, &CgTensorBase_Type, &x, &dim_o, &index_o, &src_o);
    } else {
        snprintf(fmt, sizeof fmt, "O!OOOs|$p:%s", name);
        ok = opargs_parse(self, args, kw, fmt, kw_reduce, &CgTensorBase_Type, &x, &dim_o, &index_o, &src_o, &reduce,
                          &include_self);
    }
    if (!ok) return NULL;
    cg_tensor *xt = cgpy_t(x);
    int64_t dim;
    if (parse_dim(dim_o, xt, &dim)) return NULL;
    /* scatter(dim, index, value): a number (or a src given as value=) */
    if (kind == SC_SCATTER) {
        if (src_o && value_o) {
            PyErr_Format(PyExc_TypeError, "%s() got both 'src' and 'value'", name);
            return NULL;
        }
        if (!src_o && !value_o) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument 'src' or 'value'", name);
            return NULL;
        }
        if (src_o && !cgpy_is_tensor(src_o)) value_o = src_o, src_o = NULL;
        if (value_o && cgpy_is_tensor(value_o)) src_o = value_o, value_o = NULL;
    } else if (!cgpy_is_tensor(src_o)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'src' must be Tensor, not %.100s", name, Py_TYPE(src_o)->tp_name);
        return NULL;
    }
    const char *mode = NULL; /* scatter_reduce mode, NULL = plain scatter / scatter_add */
    if (kind == SC_SCATTER && reduce) {
        if (strcmp(reduce, "add") == 0) mode = "sum";
        else if (strcmp(reduce, "multiply") == 0) mode = "prod";
        else {
            PyErr_SetString(PyExc_RuntimeError, "reduce argument must be either add or multiply.");
            return NULL;
        }
    } else if (kind == SC_REDUCE) {
        static const char *modes[] = {"sum", "prod", "mean", "amax", "amin"};
        for (int i = 0; i < 5 && !mode; i++)
            if (strcmp(reduce, modes[i]) == 0) mode = modes[i];
        if (!mode) {
            PyErr_Format(PyExc_RuntimeError, "reduce argument must be either sum, prod, mean, amax or amin, got %s", reduce);
            return NULL;
        }
    }
    cg_tensor *idx = opargs_index(index_o, name, true);
    if (!idx) return NULL;
    cg_tensor *src;
    if (src_o) {
        src = cgpy_t(src_o);
        if (same_dtype(xt, src, name, "src")) {
            cg_tensor_release(idx);
            return NULL;
        }
        cg_tensor_retain(src);
    } else { /* the value broadcast to the index's shape */
        cg_tensor *v = fill_value(value_o, xt, name);
        src = v ? cg_expand(v, cg_tensor_ndim(idx), cg_tensor_shape(idx)) : NULL;
        cg_tensor_release(v);
        if (!src) {
            cg_tensor_release(idx);
            return PyErr_Occurred() ? NULL : cgpy_raise();
        }
    }
    cg_tensor *xin = xt;
    /* Note [Memory overlap]: PyTorch's scatter refuses a src or index sharing any memory with self */
    if (inplace && (cgpy_check_overlap(name, xt, src_o ? src : NULL, true) || cgpy_check_overlap(name, xt, idx, true))) {
        cg_tensor_release(idx);
        cg_tensor_release(src);
        return NULL;
    }
    if (inplace && opargs_inplace_begin(xt, cg_tensor_requires_grad(src), name, &xin)) {
        cg_tensor_release(idx);
        cg_tensor_release(src);
        return NULL;
    }
    cg_tensor *r = mode ? cg_scatter_reduce(xin, dim, idx, src, mode, kind == SC_SCATTER || include_self)
                   : kind == SC_ADD ? cg_scatter_add(xin, dim, idx, src)
                                    : cg_scatter(xin, dim, idx, src);
    cg_tensor_release(idx);
    cg_tensor_release(src);
    if (inplace) return opargs_inplace_end(x, xin, r, false);
    return opargs_result(r, false);
}

static PyObject *py_scatter(PyObject *s, PyObject *a, PyObject *k) { return scatter_common(s, a, k, SC_SCATTER, false); }
static PyObject *py_scatter_(PyObject *s, PyObject *a, PyObject *k) { return scatter_common(s, a, k, SC_SCATTER, true); }
static PyObject *py_scatter_add(PyObject *s, PyObject *a, PyObject *k) { return scatter_common(s, a, k, SC_ADD, false); }
static PyObject *py_scatter_add_(PyObject *s, PyObject *a, PyObject *k) { return scatter_common(s, a, k, SC_ADD, true); }
static PyObject *py_scatter_reduce(PyObject *s, PyObject *a, PyObject *k) { return scatter_common(s, a, k, SC_REDUCE, false); }
static PyObject *py_scatter_reduce_(PyObject *s, PyObject *a, PyObject *k) { return scatter_common(s, a, k, SC_REDUCE, true); }

/* ------------------------------------------------------------- index_select, take */

static PyObject *py_index_select(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"input", "dim", "index", "out", NULL};
    PyObject *x, *dim_o, *index_o, *out = NULL;
    if (!opargs_parse(self, args, kw, "O!OO|$O:index_select", kwlist, &CgTensorBase_Type, &x, &dim_o, &index_o, &out))
        return NULL;
    int64_t dim;
    if (parse_dim(dim_o, cgpy_t(x), &dim)) return NULL;
    if (cgpy_is_tensor(index_o) && cg_tensor_ndim(cgpy_t(index_o)) > 1) {
        PyErr_SetString(PyExc_IndexError, "index_select(): Index is supposed to be a vector");
        return NULL;
    }
    cg_tensor *idx = opargs_index(index_o, "index_select", true);
    if (!idx) return NULL;
    if (cg_tensor_ndim(cgpy_t(x)) == 0 && cg_tensor_numel(idx) != 1) {
        PyErr_Format(PyExc_RuntimeError, "index_select(): Index to scalar can have only 1 value, got %lld value(s)",
                     (long long)cg_tensor_numel(idx));
        cg_tensor_release(idx);
        return NULL;
    }
    static const cgpy_out_rule rule = {"index_select", CGPY_OUT_EXACT, CGPY_OUT_NO_ALIAS, 0};
    cg_tensor *ins[2] = {cgpy_t(x), idx};
    PyObject *res = opargs_out(cg_index_select(cgpy_t(x), dim, idx), out, true, &rule, 2, ins);
    cg_tensor_release(idx);
    return res;
}

static PyObject *py_take(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"input", "index", "out", NULL};
    PyObject *x, *index_o, *out = NULL;
    if (!opargs_parse(self, args, kw, "O!O|$O:take", kwlist, &CgTensorBase_Type, &x, &index_o, &out)) return NULL;
    cg_tensor *idx = opargs_index(index_o, "take", false);
    if (!idx) return NULL;
    static const cgpy_out_rule rule = {"take", CGPY_OUT_EXACT, CGPY_OUT_NO_ALIAS, 0};
    cg_tensor *ins[2] = {cgpy_t(x), idx};
    PyObject *res = opargs_out(cg_take(cgpy_t(x), idx), out, true, &rule, 2, ins);
    cg_tensor_release(idx);
    return res;
}

/* ------------------------------------------------------------- index_put and the index_* family */

/* one index tensor of index_put: int64 / bool as they are, int32 -> int64, uint8 -> bool mask */
static cg_tensor *put_index(PyObject *o, Py_ssize_t pos) {
    if (!cgpy_is_tensor(o)) {
        PyErr_Format(PyExc_TypeError, "index_put(): expected Tensor as element %zd in argument 'indices', but got %.100s",
                     pos, Py_TYPE(o)->tp_name);
        return NULL;
    }
    cg_tensor *t = cgpy_t(o);
    cg_dtype dt = cg_tensor_dtype(t);
    if (dt == CG_DTYPE_I64 || dt == CG_DTYPE_BOOL) {
        cg_tensor_retain(t);
        return t;
    }
    if (dt == CG_DTYPE_I32 || dt == CG_DTYPE_U8) {
        cg_tensor *c = cg_to_dtype(t, dt == CG_DTYPE_I32 ? CG_DTYPE_I64 : CG_DTYPE_BOOL);
        if (!c) cgpy_raise();
        return c;
    }
    PyErr_SetString(PyExc_IndexError, "tensors used as indices must be long, int, byte or bool tensors");
    return NULL;
}

static PyObject *index_put_common(PyObject *self, PyObject *args, PyObject *kw, bool inplace) {
    static char *kwlist[] = {"input", "indices", "values", "accumulate", NULL};
    PyObject *x, *ind, *values;
    int accumulate = 0;
    if (!opargs_parse(self, args, kw, inplace ? "O!OO!|p:index_put_" : "O!OO!|p:index_put", kwlist, &CgTensorBase_Type,
                      &x, &ind, &CgTensorBase_Type, &values, &accumulate))
        return NULL;
    const char *name = inplace ? "index_put_" : "index_put";
    if (!PyTuple_Check(ind) && !PyList_Check(ind)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'indices' must be tuple of Tensors, not %.100s", name,
                     Py_TYPE(ind)->tp_name);
        return NULL;
    }
    cg_tensor *xt = cgpy_t(x), *vt = cgpy_t(values);
    if (cg_tensor_dtype(xt) != cg_tensor_dtype(vt)) {
        PyErr_Format(PyExc_RuntimeError,
                     "Index put requires the source and destination dtypes match, got %s for the destination and %s "
                     "for the source.", cg_dtype_name(cg_tensor_dtype(xt)), cg_dtype_name(cg_tensor_dtype(vt)));
        return NULL;
    }
    Py_ssize_t n = PySequence_Size(ind);
    if (n > CG_MAX_DIMS) {
        PyErr_Format(PyExc_IndexError, "too many indices for tensor of dimension %d", cg_tensor_ndim(xt));
        return NULL;
    }
    cg_tensor *idx[CG_MAX_DIMS] = {0};
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PySequence_GetItem(ind, i);
        idx[i] = o ? put_index(o, i) : NULL;
        Py_XDECREF(o);
        if (!idx[i]) {
            cgpy_release_n((int)i, idx);
            return NULL;
        }
    }
    PyObject *res;
    if (inplace) {
        res = opargs_check_leaf(xt, name) ? NULL : cgpy_inplace_result(x, cg_index_put_(xt, (int)n, idx, vt, accumulate));
    } else {
        res = opargs_result(cg_index_put(xt, (int)n, idx, vt, accumulate), true);
    }
    cgpy_release_n((int)n, idx);
    return res;
}
static PyObject *py_index_put(PyObject *s, PyObject *a, PyObject *k) { return index_put_common(s, a, k, false); }
static PyObject *py_index_put_(PyObject *s, PyObject *a, PyObject *k) { return index_put_common(s, a, k, true); }

typedef enum { IX_ADD, IX_COPY, IX_FILL } ix_kind;

/* index_add / index_copy take no negative indices (index_put would wrap them) */
static int check_nonnegative(cg_tensor *idx, const char *op, int64_t dim, cg_tensor *x, bool as_index_error) {
    int64_t n = cg_tensor_numel(idx);
    if (n == 0 || cg_tensor_device(idx).type != CG_DEVICE_CPU) return 0;
    int64_t *buf = PyMem_Malloc((size_t)n * sizeof(int64_t));
    if (!buf) {
        PyErr_NoMemory();
        return -1;
    }
    int rc = cgpy_check(cg_tensor_copy_to_buffer(idx, buf, CG_DTYPE_I64));
    for (int64_t i = 0; !rc && i < n; i++) {
        if (buf[i] < 0) {
            PyErr_Format(as_index_error ? PyExc_IndexError : cgpy_IndexOutOfRange,
                         "%s(): index %lld is out of bounds for dimension %lld with size %lld", op, (long long)buf[i],
                         (long long)dim, (long long)(cg_tensor_ndim(x) ? cg_tensor_shape(x)[dim] : 1));
            rc = -1;
        }
    }
    PyMem_Free(buf);
    return rc;
}

/* Note [index_fill with a tensor value]: index_fill writes one value into
 * every selected slice, so the value's gradient is the sum of the incoming
 * gradient over the filled positions, each counted once (PyTorch:
 * grad.index_select(dim, unique(index)).sum()). index_put's gradient for its
 * values gathers the gradient at each index, so a repeated index (or a
 * negative one naming the same slice as a positive one) would count a slice
 * twice: the index list is reduced to its distinct slices first (in order of
 * first appearance). Out-of-range entries are kept, for index_put to report.
 * `size` is the length of the filled dimension; *idx (int64, 1-d) is
 * replaced by the reduced list (new reference) when it had repeats. */
static int distinct_fill_index(cg_tensor **idx, int64_t size) {
    int64_t n = cg_tensor_numel(*idx);
    if (n < 2 || cg_tensor_device(*idx).type != CG_DEVICE_CPU) return 0;
    int64_t *buf = PyMem_Malloc((size_t)n * sizeof(int64_t));
    unsigned char *seen = PyMem_Calloc((size_t)(size > 0 ? size : 1), 1);
    int rc = (!buf || !seen) ? (PyErr_NoMemory(), -1) : cgpy_check(cg_tensor_copy_to_buffer(*idx, buf, CG_DTYPE_I64));
    int64_t kept = 0;
    for (int64_t i = 0; !rc && i < n; i++) {
        int64_t v = buf[i], p = v < 0 ? v + size : v;
        if (p < 0 || p >= size) { /* out of range: left for index_put's error */
            buf[kept++] = v;
            continue;
        }
        if (seen[p]) continue;
        seen[p] = 1;
        buf[kept++] = p;
    }
    if (!rc && kept < n) {
        cg_tensor *d = cg_from_data(buf, 1, &kept, CG_DTYPE_I64);
        if (d) {
            cg_tensor_release(*idx);
            *idx = d;
        } else {
            rc = -1;
            cgpy_raise();
        }
    }
    PyMem_Free(buf);
    PyMem_Free(seen);
    return rc;
}

/* index_add / index_copy / index_fill along dim, as index_put with the index
 * at position dim (accumulating for index_add). */
static PyObject *index_dim_common(PyObject *self, PyObject *args, PyObject *kw, ix_kind kind, bool inplace) {
    static char *kw_add[] = {"input", "dim", "index", "source", "alpha", "out", NULL};
    static char *kw_copy[] = {"input", "dim", "index", "source", "out", NULL};
    static char *kw_fill[] = {"input", "dim", "index", "value", NULL};
    const char *base = kind == IX_ADD ? "index_add" : kind == IX_COPY ? "index_copy" : "index_fill";
    char name[32], fmt[48];
    snprintf(name, sizeof name, "%s%s", base, inplace ? "_" : "");
    PyObject *x, *dim_o, *index_o, *src_o, *alpha_o = NULL, *out = NULL;
    int ok;
    if (kind == IX_ADD) {
        snprintf(fmt, sizeof fmt, "O!OOO!|$OO:%s", name);
        ok = opargs_parse(self, args, kw, fmt, kw_add, &CgTensorBase_Type, &x, &dim_o, &index_o, &CgTensorBase_Type,
                          &src_o, &alpha_o, &out);
    } else if (kind == IX_COPY) {
        snprintf(fmt, sizeof fmt, "O!OOO!|$O:%s", name);
        ok = opargs_parse(self, args, kw, fmt, kw_copy, &CgTensorBase_Type, &x, &dim_o, &index_o, &CgTensorBase_Type,
                          &src_o, &out);
    } else {
        snprintf(fmt, sizeof fmt, "O!OOO:%s", name);
        ok = opargs_parse(self, args, kw, fmt, kw_fill, &CgTensorBase_Type, &x, &dim_o, &index_o, &src_o);
    }
    if (!ok) return NULL;
    if (inplace && out) {
        PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument 'out'", name);
        return NULL;
    }
    cg_tensor *xt = cgpy_t(x);
    int64_t dim;
    if (parse_dim(dim_o, xt, &dim)) return NULL;
    if (cgpy_is_tensor(index_o) && cg_tensor_ndim(cgpy_t(index_o)) > 1) {
        PyErr_Format(PyExc_IndexError, "%s(): Index is supposed to be a vector", name);
        return NULL;
    }
    if (kind == IX_FILL && cgpy_is_tensor(index_o) && cg_tensor_dtype(cgpy_t(index_o)) != CG_DTYPE_I64) {
        PyErr_Format(PyExc_IndexError, "%s(): Expected dtype int64 for index.", name);
        return NULL;
    }
    cg_tensor *idx0 = opargs_index(index_o, name, kind == IX_ADD);
    if (!idx0) return NULL;
    int64_t ni = cg_tensor_numel(idx0);
    if (kind != IX_FILL && check_nonnegative(idx0, name, dim, cgpy_t(x), kind == IX_COPY)) {
        cg_tensor_release(idx0);
        return NULL;
    }
    cg_tensor *idx = cg_reshape(idx0, 1, &ni);
    cg_tensor_release(idx0);
    if (!idx) return cgpy_raise();
    if (kind == IX_FILL && cgpy_is_tensor(src_o) &&
        distinct_fill_index(&idx, cg_tensor_ndim(xt) ? cg_tensor_shape(xt)[dim] : 1)) { /* Note [index_fill with a tensor value] */
        cg_tensor_release(idx);
        return NULL;
    }

    /* a 0-d input works as a 1-element vector */
    int nd = cg_tensor_ndim(xt);
    int64_t one = 1;
    cg_tensor *xv = nd ? (cg_tensor_retain(xt), xt) : cg_reshape(xt, 1, &one);
    cg_tensor *vals = NULL;
    PyObject *res = NULL;
    if (!xv) goto engine_fail;
    if (kind == IX_FILL) {
        cg_tensor *v = fill_value(src_o, xt, name);
        if (!v) goto done;
        vals = v; /* 0-d: broadcasts over the selected slices */
        if (cg_tensor_overlap(xt, v) != CG_OVERLAP_NO) { /* a value read once, as PyTorch's scalar */
            vals = cg_clone(v);
            cg_tensor_release(v);
            if (!vals) goto engine_fail;
        }
    } else {
        cg_tensor *st = cgpy_t(src_o);
        /* Note [Memory overlap]: checked on the source as given (alpha scales a copy) */
        if (inplace && cgpy_check_overlap(name, xt, st, true)) goto done;
        if (cg_tensor_dtype(st) != cg_tensor_dtype(xt)) {
            PyErr_Format(PyExc_RuntimeError, "%s(): self (%s) and source (%s) must have the same scalar type", name,
                         cg_dtype_name(cg_tensor_dtype(xt)), cg_dtype_name(cg_tensor_dtype(st)));
            goto done;
        }
        /* source: x's shape with size(dim) = number of indices (0-d counts as 1-d) */
        int snd = cg_tensor_ndim(st), xnd = cg_tensor_ndim(xv);
        const int64_t *ss = cg_tensor_shape(st), *xs = cg_tensor_shape(xv);
        if ((snd ? snd : 1) != xnd) {
            PyErr_Format(PyExc_RuntimeError, "%s(): source has %d dimension(s) but self has %d", name, snd, nd);
            goto done;
        }
        int64_t ssz = 1;
        for (int d = 0; d < xnd; d++) {
            int64_t s = snd ? ss[d] : 1;
            if (d == dim) ssz = s;
            else if (s != xs[d]) {
                PyErr_Format(PyExc_RuntimeError,
                             "%s(): source tensor shape must match self tensor shape, excluding the specified "
                             "dimension (dimension %d: %lld != %lld)", name, d, (long long)s, (long long)xs[d]);
                goto done;
            }
        }
        if (ssz != ni) {
            PyErr_Format(PyExc_RuntimeError, "%s(): Number of indices (%lld) should be equal to source.size(dim) (%lld), for dim: %lld",
                         name, (long long)ni, (long long)ssz, (long long)dim);
            goto done;
        }
        int64_t vs[CG_MAX_DIMS];
        memcpy(vs, xs, sizeof(int64_t) * (size_t)xnd);
        vs[dim] = ni;
        vals = cg_reshape(st, xnd, vs);
        if (!vals) goto engine_fail;
        if (kind == IX_ADD && alpha_o) {
            PyObject *ops[1] = {alpha_o};
            cg_dtype adt;
            if (cgpy_result_type(1, ops, &adt)) goto done;
            if (cg_dtype_is_floating(adt) && !cg_dtype_is_floating(cg_tensor_dtype(xt))) {
                PyErr_Format(PyExc_RuntimeError, "For integral input tensors, argument alpha must not be a floating point number.");
                goto done;
            }
            cg_tensor *a = cgpy_as_tensor(alpha_o, cg_tensor_dtype(xt), cg_tensor_device(xt));
            if (!a) goto done;
            cg_tensor *m = cg_mul(vals, a);
            cg_tensor_release(a);
            cg_tensor_release(vals);
            vals = m;
            if (!vals) goto engine_fail;
        }
    }
    cg_tensor *ind[CG_MAX_DIMS] = {0};
    ind[dim] = idx;
    /* PyTorch raises IndexError from index_copy / index_fill; from index_add an
     * IndexError or a RuntimeError depending on the layout, so index_add raises
     * IndexOutOfRange, which is both */
    bool keep_index = true;
    if (inplace) {
        if (opargs_check_leaf(xt, name)) goto done;
        if (cg_index_put_(xv, (int)dim + 1, ind, vals, kind == IX_ADD)) goto engine_fail;
        Py_INCREF(x);
        res = x;
    } else {
        cg_tensor *r = cg_index_put(xv, (int)dim + 1, ind, vals, kind == IX_ADD);
        if (r && nd == 0) {
            cg_tensor *r0 = cg_reshape(r, 0, NULL);
            cg_tensor_release(r);
            r = r0;
        }
        /* PyTorch lets index_add / index_copy write into self itself, not into part of it */
        cgpy_out_rule rule = {base, CGPY_OUT_EXACT, CGPY_OUT_NO_PARTIAL, 0};
        cg_tensor *ins[3] = {xt, idx, kind == IX_FILL ? NULL : cgpy_t(src_o)};
        res = opargs_out(r, out, keep_index, &rule, 3, ins);
    }
    goto done;
engine_fail:
    opargs_raise(true);
done:
    cg_tensor_release(idx);
    cg_tensor_release(xv);
    cg_tensor_release(vals);
    return res;
}

#define IXFN(base, kind)                                                                                               \
    static PyObject *py_##base(PyObject *s, PyObject *a, PyObject *k) { return index_dim_common(s, a, k, kind, false); } \
    static PyObject *py_##base##_(PyObject *s, PyObject *a, PyObject *k) { return index_dim_common(s, a, k, kind, true); }
IXFN(index_add, IX_ADD)
IXFN(index_copy, IX_COPY)
IXFN(index_fill, IX_FILL)

/* ------------------------------------------------------------- masked ops */

static int check_mask(cg_tensor *mask, const char *op) {
    if (cg_tensor_dtype(mask) == CG_DTYPE_BOOL) return 0;
    PyErr_Format(PyExc_RuntimeError, "%s only supports boolean masks, but got mask with dtype %s", op,
                 cg_dtype_name(cg_tensor_dtype(mask)));
    return -1;
}

static PyObject *masked_fill_common(PyObject *self, PyObject *args, PyObject *kw, bool inplace) {
    static char *kwlist[] = {"input", "mask", "value", NULL};
    PyObject *x, *mask, *value;
    if (!opargs_parse(self, args, kw, inplace ? "O!O!O:masked_fill_" : "O!O!O:masked_fill", kwlist, &CgTensorBase_Type,
                      &x, &CgTensorBase_Type, &mask, &value))
        return NULL;
    cg_tensor *xt = cgpy_t(x);
    if (check_mask(cgpy_t(mask), "masked_fill_")) return NULL;
    cg_tensor *v = fill_value(value, xt, "masked_fill_");
    if (!v) return NULL;
    if (!inplace) {
        cg_tensor *r = cg_masked_fill(xt, cgpy_t(mask), v);
        cg_tensor_release(v);
        return opargs_result(r, false);
    }
    cg_tensor *xin;
    if (opargs_inplace_begin(xt, cg_tensor_requires_grad(v), "masked_fill_", &xin)) {
        cg_tensor_release(v);
        return NULL;
    }
    cg_tensor *r = cg_masked_fill(xin, cgpy_t(mask), v);
    cg_tensor_release(v);
    return opargs_inplace_end(x, xin, r, false);
}
static PyObject *py_masked_fill(PyObject *s, PyObject *a, PyObject *k) { return masked_fill_common(s, a, k, false); }
static PyObject *py_masked_fill_(PyObject *s, PyObject *a, PyObject *k) { return masked_fill_common(s, a, k, true); }

static PyObject *py_masked_select(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"input", "mask", "out", NULL};
    PyObject *x, *mask, *out = NULL;
    if (!opargs_parse(self, args, kw, "O!O!|$O:masked_select", kwlist, &CgTensorBase_Type, &x, &CgTensorBase_Type, &mask,
                      &out))
        return NULL;
    if (cg_tensor_dtype(cgpy_t(mask)) != CG_DTYPE_BOOL) {
        PyErr_Format(PyExc_RuntimeError, "masked_select: expected BoolTensor for mask, got %s",
                     cg_dtype_name(cg_tensor_dtype(cgpy_t(mask))));
        return NULL;
    }
    static const cgpy_out_rule rule = {"masked_select", CGPY_OUT_EXACT, CGPY_OUT_NO_ALIAS, 0};
    cg_tensor *ins[2] = {cgpy_t(x), cgpy_t(mask)};
    return opargs_out(cg_masked_select(cgpy_t(x), cgpy_t(mask)), out, false, &rule, 2, ins);
}

static PyObject *masked_scatter_common(PyObject *self, PyObject *args, PyObject *kw, bool inplace) {
    static char *kwlist[] = {"input", "mask", "source", NULL};
    PyObject *x, *mask, *src;
    if (!opargs_parse(self, args, kw, inplace ? "O!O!O!:masked_scatter_" : "O!O!O!:masked_scatter", kwlist,
                      &CgTensorBase_Type, &x, &CgTensorBase_Type, &mask, &CgTensorBase_Type, &src))
        return NULL;
    cg_tensor *xt = cgpy_t(x), *st = cgpy_t(src);
    if (check_mask(cgpy_t(mask), "masked_scatter_")) return NULL;
    if (cg_tensor_dtype(xt) != cg_tensor_dtype(st)) {
        PyErr_Format(PyExc_RuntimeError, "masked_scatter: expected self and source to have same dtypes but got %s and %s",
                     cg_dtype_name(cg_tensor_dtype(xt)), cg_dtype_name(cg_tensor_dtype(st)));
        return NULL;
    }
    if (!inplace) return opargs_result(cg_masked_scatter(xt, cgpy_t(mask), st), false);
    cg_tensor *xin;
    if (opargs_inplace_begin(xt, cg_tensor_requires_grad(st), "masked_scatter_", &xin)) return NULL;
    return opargs_inplace_end(x, xin, cg_masked_scatter(xin, cgpy_t(mask), st), false);
}
static PyObject *py_masked_scatter(PyObject *s, PyObject *a, PyObject *k) { return masked_scatter_common(s, a, k, false); }
static PyObject *py_masked_scatter_(PyObject *s, PyObject *a, PyObject *k) { return masked_scatter_common(s, a, k, true); }

/* ------------------------------------------------------------- nonzero, argwhere */

static PyObject *py_nonzero(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"input", "out", "as_tuple", NULL};
    PyObject *x, *out = NULL;
    int as_tuple = 0;
    if (!opargs_parse(self, args, kw, "O!|$Op:nonzero", kwlist, &CgTensorBase_Type, &x, &out, &as_tuple)) return NULL;
    cg_tensor *xt = cgpy_t(x);
    static const cgpy_out_rule rule = {"nonzero", CGPY_OUT_EXACT, CGPY_OUT_NO_ALIAS, 0};
    if (!as_tuple) return opargs_out(cg_nonzero(xt), out, false, &rule, 1, &xt);
    if (out && out != Py_None) {
        PyErr_SetString(PyExc_TypeError, "nonzero(): out= is not supported with as_tuple=True");
        return NULL;
    }
    /* one index vector per dim (a 0-d input counts as 1-d) */
    int nd = cg_tensor_ndim(xt);
    int64_t one = 1;
    cg_tensor *xv = nd ? (cg_tensor_retain(xt), xt) : cg_reshape(xt, 1, &one);
    cg_tensor *nz = xv ? cg_nonzero(xv) : NULL;
    cg_tensor_release(xv);
    if (!nz) return opargs_raise(false);
    int cols = nd ? nd : 1;
    PyObject *tup = PyTuple_New(cols);
    for (int d = 0; tup && d < cols; d++) {
        cg_tensor *c = cg_select(nz, 1, d);
        cg_tensor *cc = c ? cg_contiguous(c) : NULL;
        cg_tensor_release(c);
        PyObject *w = cc ? cgpy_wrap(cc) : cgpy_raise();
        if (!w) Py_CLEAR(tup);
        else PyTuple_SET_ITEM(tup, d, w);
    }
    cg_tensor_release(nz);
    return tup;
}

static PyObject *py_argwhere(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"input", NULL};
    PyObject *x;
    if (!opargs_parse(self, args, kw, "O!:argwhere", kwlist, &CgTensorBase_Type, &x)) return NULL;
    return opargs_result(cg_nonzero(cgpy_t(x)), false);
}

/* ------------------------------------------------------------- tables */

#define E(name) CGPY_KW(#name, py_##name)
#define INDEX_ENTRIES                                                                                                  \
    E(gather), E(scatter), E(scatter_add), E(scatter_reduce), E(index_select), E(take), E(index_put), E(index_add),    \
        E(index_copy), E(index_fill), E(masked_fill), E(masked_select), E(masked_scatter), E(nonzero), E(argwhere)

PyMethodDef cgpy_index_methods[] = {
    INDEX_ENTRIES,
    E(scatter_), E(scatter_add_), E(scatter_reduce_), E(index_put_), E(index_add_), E(index_copy_), E(index_fill_),
    E(masked_fill_), E(masked_scatter_),
    CGPY_TABLE_END,
};
PyMethodDef cgpy_index_functions[] = {INDEX_ENTRIES, CGPY_TABLE_END};
