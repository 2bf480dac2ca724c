/* ops_index.c — bindings of the indexing ops (gather, scatter, scatter_add,
 * scatter_reduce, index_select, index_add / index_copy / index_fill,
 * index_put, masked_fill / masked_select / masked_scatter, take, nonzero,
 * argwhere) as Tensor methods, in-place methods and module functions, with
 * PyTorch's argument checks and exception types. In-place forms the engine
 * lacks run out of place and copy back (Note [In-place via out of place] in
 * bind.h). */
#include "bind.h"

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

static PyObject *py_gather(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("gather", CGPY_INPUT_ARG, CGPY_ARG("dim", CGPY_A_OBJ, CGPY_REQ),
                                      CGPY_ARG("index", CGPY_A_OBJ, CGPY_REQ),
                                        CGPY_ARG("sparse_grad", CGPY_A_BOOL, CGPY_KWONLY), CGPY_ARG("out", CGPY_A_OBJ,
                                            CGPY_KWONLY));
    cgpy_val v[5];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *x = v[0].o, *dim_o = v[1].o, *index_o = v[2].o, *out = v[4].o;
    int64_t dim;
    if (parse_dim(dim_o, cgpy_t(x), &dim)) return NULL;
    cg_tensor *idx;
    if (cgpy_is_tensor(index_o) && cg_tensor_numel(cgpy_t(index_o)) == 0 &&
        cg_dtype_is_integral(cg_tensor_dtype(cgpy_t(index_o)))) {
        idx = cg_to_dtype(cgpy_t(index_o), CG_DTYPE_I64); /* PyTorch checks an empty index's dtype only when it is
                                                           * not integral: a uint8 () index gathers nothing */
        if (!idx) return cgpy_raise();
    } else {
        idx = cgpy_index_arg(index_o, "gather", true);
    }
    if (!idx) return NULL;
    static const cgpy_out_rule rule = {"gather", CGPY_OUT_EXACT, CGPY_OUT_NO_ALIAS, 0};
    cg_tensor *ins[2] = {cgpy_t(x), idx};
    PyObject *res = cgpy_out_rt(cg_gather(cgpy_t(x), dim, idx), out, false, &rule, 2, ins);
    cg_tensor_release(idx);
    return res;
}

/* ------------------------------------------------------------- scatter family */

typedef enum { SC_SCATTER, SC_ADD, SC_REDUCE } sc_kind;

#define SCATTER_SPEC(name)                                                                                         \
    CGPY_SPEC(name, CGPY_INPUT_ARG, CGPY_ARG("dim", CGPY_A_OBJ, CGPY_REQ), CGPY_ARG("index", CGPY_A_OBJ, CGPY_REQ), CGPY_ARG("src", CGPY_A_OBJ),       \
            CGPY_ARG("value", CGPY_A_OBJ), CGPY_ARG("reduce", CGPY_A_STR, CGPY_KWONLY | CGPY_NONE_OK))
#define SCATTER_ADD_SPEC(name)                                                                                     \
    CGPY_SPEC(name, CGPY_INPUT_ARG, CGPY_ARG("dim", CGPY_A_OBJ, CGPY_REQ), CGPY_ARG("index", CGPY_A_OBJ, CGPY_REQ), CGPY_ARG("src", CGPY_A_OBJ, CGPY_REQ))
#define SCATTER_REDUCE_SPEC(name)                                                                                  \
    CGPY_SPEC(name, CGPY_INPUT_ARG, CGPY_ARG("dim", CGPY_A_OBJ, CGPY_REQ), CGPY_ARG("index", CGPY_A_OBJ, CGPY_REQ), CGPY_ARG("src", CGPY_A_OBJ, CGPY_REQ), \
            CGPY_ARG("reduce", CGPY_A_STR, CGPY_REQ), CGPY_ARG("include_self", CGPY_A_BOOL, CGPY_KWONLY, 1))
static PyObject *scatter_common(CGPY_FASTKW_ARGS, sc_kind kind, bool inplace) {
    static cgpy_spec specs[6] = {SCATTER_SPEC("scatter"),         SCATTER_SPEC("scatter_"),
                                 SCATTER_ADD_SPEC("scatter_add"), SCATTER_ADD_SPEC("scatter_add_"),
                                 SCATTER_REDUCE_SPEC("scatter_reduce"), SCATTER_REDUCE_SPEC("scatter_reduce_")};
    cgpy_spec *spec = &specs[2 * kind + inplace];
    const char *name = spec->fname;
    cgpy_val v[6];
    if (cgpy_args_parse(spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *x = v[0].o, *dim_o = v[1].o, *index_o = v[2].o, *src_o = v[3].o, *value_o = NULL;
    const char *reduce = NULL;
    int include_self = 1;
    if (kind == SC_SCATTER) {
        value_o = v[4].o;
        reduce = v[5].s;
    } else if (kind == SC_REDUCE) {
        reduce = v[4].s;
        include_self = v[5].b;
    }
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
    cg_tensor *idx = cgpy_index_arg(index_o, name, true);
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
    if (inplace && cgpy_inplace_begin(xt, cg_tensor_requires_grad(src), name, &xin)) {
        cg_tensor_release(idx);
        cg_tensor_release(src);
        return NULL;
    }
    cg_tensor *r = mode ? cg_scatter_reduce(xin, dim, idx, src, mode, kind == SC_SCATTER || include_self)
                   : kind == SC_ADD ? cg_scatter_add(xin, dim, idx, src)
                                    : cg_scatter(xin, dim, idx, src);
    cg_tensor_release(idx);
    cg_tensor_release(src);
    if (inplace) return cgpy_inplace_end(x, xin, r, false);
    return cgpy_result_rt(r, false);
}

#define SCFN(pyname, kind, inplace) \
    static PyObject *pyname(CGPY_FASTKW_ARGS) { return scatter_common(self, args, nargs, kwnames, kind, inplace); }
SCFN(py_scatter, SC_SCATTER, false)
SCFN(py_scatter_, SC_SCATTER, true)
SCFN(py_scatter_add, SC_ADD, false)
SCFN(py_scatter_add_, SC_ADD, true)
SCFN(py_scatter_reduce, SC_REDUCE, false)
SCFN(py_scatter_reduce_, SC_REDUCE, true)

/* ------------------------------------------------------------- index_select, take */

static PyObject *py_index_select(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("index_select", CGPY_INPUT_ARG, CGPY_ARG("dim", CGPY_A_OBJ, CGPY_REQ),
                                              CGPY_ARG("index", CGPY_A_OBJ, CGPY_REQ), CGPY_ARG("out", CGPY_A_OBJ,
                                                  CGPY_KWONLY));
    cgpy_val v[4];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *x = v[0].o, *dim_o = v[1].o, *index_o = v[2].o, *out = v[3].o;
    int64_t dim;
    if (parse_dim(dim_o, cgpy_t(x), &dim)) return NULL;
    if (cgpy_is_tensor(index_o) && cg_tensor_ndim(cgpy_t(index_o)) > 1) {
        PyErr_SetString(PyExc_IndexError, "index_select(): Index is supposed to be a vector");
        return NULL;
    }
    cg_tensor *idx = cgpy_index_arg(index_o, "index_select", true);
    if (!idx) return NULL;
    if (cg_tensor_ndim(cgpy_t(x)) == 0 && cg_tensor_numel(idx) != 1) {
        PyErr_Format(PyExc_RuntimeError, "index_select(): Index to scalar can have only 1 value, got %lld value(s)",
                     (long long)cg_tensor_numel(idx));
        cg_tensor_release(idx);
        return NULL;
    }
    static const cgpy_out_rule rule = {"index_select", CGPY_OUT_EXACT, CGPY_OUT_NO_ALIAS, 0};
    cg_tensor *ins[2] = {cgpy_t(x), idx};
    PyObject *res = cgpy_out_rt(cg_index_select(cgpy_t(x), dim, idx), out, true, &rule, 2, ins);
    cg_tensor_release(idx);
    return res;
}

static PyObject *py_take(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("take", CGPY_INPUT_ARG, CGPY_ARG("index", CGPY_A_OBJ, CGPY_REQ), CGPY_ARG("out",
                                      CGPY_A_OBJ, CGPY_KWONLY));
    cgpy_val v[3];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *x = v[0].o, *index_o = v[1].o, *out = v[2].o;
    cg_tensor *idx = cgpy_index_arg(index_o, "take", false);
    if (!idx) return NULL;
    static const cgpy_out_rule rule = {"take", CGPY_OUT_EXACT, CGPY_OUT_NO_ALIAS, 0};
    cg_tensor *ins[2] = {cgpy_t(x), idx};
    PyObject *res = cgpy_out_rt(cg_take(cgpy_t(x), idx), out, true, &rule, 2, ins);
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

#define INDEX_PUT_SPEC(name)                                                                                       \
    CGPY_SPEC(name, CGPY_INPUT_ARG, CGPY_ARG("indices", CGPY_A_OBJ, CGPY_REQ), CGPY_ARG("values", CGPY_A_TENSOR, CGPY_REQ),                  \
            CGPY_ARG("accumulate", CGPY_A_BOOL))
static PyObject *index_put_common(CGPY_FASTKW_ARGS, bool inplace) {
    static cgpy_spec specs[2] = {INDEX_PUT_SPEC("index_put"), INDEX_PUT_SPEC("index_put_")};
    cgpy_val v[4];
    if (cgpy_args_parse(&specs[inplace], self, args, nargs, kwnames, v)) return NULL;
    PyObject *x = v[0].o, *ind = v[1].o, *values = v[2].o;
    int accumulate = v[3].b;
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
        res = cgpy_check_leaf(xt, name) ? NULL : cgpy_inplace_result(x, cg_index_put_(xt, (int)n, idx, vt, accumulate));
    } else {
        res = cgpy_result_rt(cg_index_put(xt, (int)n, idx, vt, accumulate), true);
    }
    cgpy_release_n((int)n, idx);
    return res;
}
static PyObject *py_index_put(CGPY_FASTKW_ARGS) { return index_put_common(self, args, nargs, kwnames, false); }
static PyObject *py_index_put_(CGPY_FASTKW_ARGS) { return index_put_common(self, args, nargs, kwnames, true); }

typedef enum { IX_ADD, IX_COPY, IX_FILL } ix_kind;

/* index_add / index_copy take no negative indices (index_put would wrap them) */
static int check_nonnegative(cg_tensor *idx, const char *op, int64_t dim, cg_tensor *x, bool as_index_error) {
    int64_t n = cg_tensor_numel(idx);
    if (n == 0 || cg_tensor_device(idx).type == CG_DEVICE_META) return 0;
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
    if (n < 2 || cg_tensor_device(*idx).type == CG_DEVICE_META) return 0;
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
        cg_device dev = cg_tensor_device(*idx);
        if (d && dev.type != CG_DEVICE_CPU) { /* back on the index's device */
            cg_tensor *m = cg_to_device(d, dev);
            cg_tensor_release(d);
            d = m;
        }
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
#define INDEX_ADD_SPEC(name)                                                                                       \
    CGPY_SPEC(name, CGPY_INPUT_ARG, CGPY_ARG("dim", CGPY_A_OBJ, CGPY_REQ), CGPY_ARG("index", CGPY_A_OBJ, CGPY_REQ),                          \
            CGPY_ARG("source", CGPY_A_TENSOR, CGPY_REQ), CGPY_ARG("alpha", CGPY_A_OBJ, CGPY_KWONLY), CGPY_ARG("out", CGPY_A_OBJ, CGPY_KWONLY))
#define INDEX_COPY_SPEC(name)                                                                                      \
    CGPY_SPEC(name, CGPY_INPUT_ARG, CGPY_ARG("dim", CGPY_A_OBJ, CGPY_REQ), CGPY_ARG("index", CGPY_A_OBJ, CGPY_REQ),                          \
            CGPY_ARG("source", CGPY_A_TENSOR, CGPY_REQ), CGPY_ARG("out", CGPY_A_OBJ, CGPY_KWONLY))
#define INDEX_FILL_SPEC(name)                                                                                      \
    CGPY_SPEC(name, CGPY_INPUT_ARG, CGPY_ARG("dim", CGPY_A_OBJ, CGPY_REQ), CGPY_ARG("index", CGPY_A_OBJ, CGPY_REQ), CGPY_ARG("value", CGPY_A_OBJ, CGPY_REQ))
static PyObject *index_dim_common(CGPY_FASTKW_ARGS, ix_kind kind, bool inplace) {
    static cgpy_spec specs[6] = {INDEX_ADD_SPEC("index_add"),   INDEX_ADD_SPEC("index_add_"),
                                 INDEX_COPY_SPEC("index_copy"), INDEX_COPY_SPEC("index_copy_"),
                                 INDEX_FILL_SPEC("index_fill"), INDEX_FILL_SPEC("index_fill_")};
    int which = (kind == IX_ADD ? 0 : kind == IX_COPY ? 2 : 4) + inplace;
    const char *name = specs[which].fname;
    cgpy_val v[6];
    if (cgpy_args_parse(&specs[which], self, args, nargs, kwnames, v)) return NULL;
    PyObject *x = v[0].o, *dim_o = v[1].o, *index_o = v[2].o, *src_o = v[3].o, *alpha_o = NULL, *out = NULL;
    if (kind == IX_ADD) alpha_o = v[4].o, out = v[5].o;
    else if (kind == IX_COPY) out = v[4].o;
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
    cg_tensor *idx0 = cgpy_index_arg(index_o, name, kind == IX_ADD);
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
        if (cgpy_check_leaf(xt, name)) goto done;
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
        cgpy_out_rule rule = {specs[which - inplace].fname, CGPY_OUT_EXACT, CGPY_OUT_NO_PARTIAL, 0};
        cg_tensor *ins[3] = {xt, idx, kind == IX_FILL ? NULL : cgpy_t(src_o)};
        res = cgpy_out_rt(r, out, keep_index, &rule, 3, ins);
    }
    goto done;
engine_fail:
    cgpy_raise_rt(true);
done:
    cg_tensor_release(idx);
    cg_tensor_release(xv);
    cg_tensor_release(vals);
    return res;
}

#define IXFN(base, kind)                                                                                               \
    static PyObject *py_##base(CGPY_FASTKW_ARGS) { return index_dim_common(self, args, nargs, kwnames, kind, false); } \
    static PyObject *py_##base##_(CGPY_FASTKW_ARGS) { return index_dim_common(self, args, nargs, kwnames, kind, true); }
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

#define MASKED_FILL_SPEC(name) CGPY_SPEC(name, CGPY_INPUT_ARG, CGPY_ARG("mask", CGPY_A_TENSOR, CGPY_REQ), CGPY_ARG("value", CGPY_A_OBJ, CGPY_REQ))
static PyObject *masked_fill_common(CGPY_FASTKW_ARGS, bool inplace) {
    static cgpy_spec specs[2] = {MASKED_FILL_SPEC("masked_fill"), MASKED_FILL_SPEC("masked_fill_")};
    cgpy_val a[3];
    if (cgpy_args_parse(&specs[inplace], self, args, nargs, kwnames, a)) return NULL;
    PyObject *x = a[0].o, *mask = a[1].o, *value = a[2].o;
    cg_tensor *xt = cgpy_t(x);
    if (check_mask(cgpy_t(mask), "masked_fill_")) return NULL;
    cg_tensor *v = fill_value(value, xt, "masked_fill_");
    if (!v) return NULL;
    if (!inplace) {
        cg_tensor *r = cg_masked_fill(xt, cgpy_t(mask), v);
        cg_tensor_release(v);
        return cgpy_result_rt(r, false);
    }
    cg_tensor *xin;
    if (cgpy_inplace_begin(xt, cg_tensor_requires_grad(v), "masked_fill_", &xin)) {
        cg_tensor_release(v);
        return NULL;
    }
    cg_tensor *r = cg_masked_fill(xin, cgpy_t(mask), v);
    cg_tensor_release(v);
    return cgpy_inplace_end(x, xin, r, false);
}
static PyObject *py_masked_fill(CGPY_FASTKW_ARGS) { return masked_fill_common(self, args, nargs, kwnames, false); }
static PyObject *py_masked_fill_(CGPY_FASTKW_ARGS) { return masked_fill_common(self, args, nargs, kwnames, true); }

static PyObject *py_masked_select(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("masked_select", CGPY_INPUT_ARG, CGPY_ARG("mask", CGPY_A_TENSOR, CGPY_REQ),
                                      CGPY_ARG("out", CGPY_A_OBJ, CGPY_KWONLY));
    cgpy_val v[3];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *x = v[0].o, *mask = v[1].o, *out = v[2].o;
    if (cg_tensor_dtype(cgpy_t(mask)) != CG_DTYPE_BOOL) {
        PyErr_Format(PyExc_RuntimeError, "masked_select: expected BoolTensor for mask, got %s",
                     cg_dtype_name(cg_tensor_dtype(cgpy_t(mask))));
        return NULL;
    }
    static const cgpy_out_rule rule = {"masked_select", CGPY_OUT_EXACT, CGPY_OUT_NO_ALIAS, 0};
    cg_tensor *ins[2] = {cgpy_t(x), cgpy_t(mask)};
    return cgpy_out_rt(cg_masked_select(cgpy_t(x), cgpy_t(mask)), out, false, &rule, 2, ins);
}

#define MASKED_SCATTER_SPEC(name) \
    CGPY_SPEC(name, CGPY_INPUT_ARG, CGPY_ARG("mask", CGPY_A_TENSOR, CGPY_REQ), CGPY_ARG("source", CGPY_A_TENSOR, CGPY_REQ))
static PyObject *masked_scatter_common(CGPY_FASTKW_ARGS, bool inplace) {
    static cgpy_spec specs[2] = {MASKED_SCATTER_SPEC("masked_scatter"), MASKED_SCATTER_SPEC("masked_scatter_")};
    cgpy_val v[3];
    if (cgpy_args_parse(&specs[inplace], self, args, nargs, kwnames, v)) return NULL;
    PyObject *x = v[0].o, *mask = v[1].o, *src = v[2].o;
    cg_tensor *xt = cgpy_t(x), *st = cgpy_t(src);
    if (check_mask(cgpy_t(mask), "masked_scatter_")) return NULL;
    if (cg_tensor_dtype(xt) != cg_tensor_dtype(st)) {
        PyErr_Format(PyExc_RuntimeError, "masked_scatter: expected self and source to have same dtypes but got %s and %s",
                     cg_dtype_name(cg_tensor_dtype(xt)), cg_dtype_name(cg_tensor_dtype(st)));
        return NULL;
    }
    if (!inplace) return cgpy_result_rt(cg_masked_scatter(xt, cgpy_t(mask), st), false);
    cg_tensor *xin;
    if (cgpy_inplace_begin(xt, cg_tensor_requires_grad(st), "masked_scatter_", &xin)) return NULL;
    return cgpy_inplace_end(x, xin, cg_masked_scatter(xin, cgpy_t(mask), st), false);
}
static PyObject *py_masked_scatter(CGPY_FASTKW_ARGS) { return masked_scatter_common(self, args, nargs, kwnames,
    false); }
static PyObject *py_masked_scatter_(CGPY_FASTKW_ARGS) { return masked_scatter_common(self, args, nargs, kwnames,
    true); }

/* ------------------------------------------------------------- nonzero, argwhere */

static PyObject *py_nonzero(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("nonzero", CGPY_INPUT_ARG, CGPY_ARG("out", CGPY_A_OBJ, CGPY_KWONLY),
                                      CGPY_ARG("as_tuple", CGPY_A_BOOL, CGPY_KWONLY));
    cgpy_val v[3];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *x = v[0].o, *out = v[1].o;
    int as_tuple = v[2].b;
    cg_tensor *xt = cgpy_t(x);
    static const cgpy_out_rule rule = {"nonzero", CGPY_OUT_EXACT, CGPY_OUT_NO_ALIAS, 0};
    if (!as_tuple) return cgpy_out_rt(cg_nonzero(xt), out, false, &rule, 1, &xt);
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
    if (!nz) return cgpy_raise_rt(false);
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

static PyObject *py_argwhere(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("argwhere", CGPY_INPUT_ARG);
    cgpy_val v[1];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    return cgpy_result_rt(cg_nonzero(v[0].t), false);
}

/* ------------------------------------------------------------- tables */

#define E(name) CGPY_FASTKW(#name, py_##name)
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
