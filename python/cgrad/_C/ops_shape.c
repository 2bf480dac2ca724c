/* ops_shape.c — bindings of views and shape ops (view, reshape, permute,
 * transpose, expand, squeeze, narrow, diagonal, as_strided, movedim, cat,
 * stack, split, chunk, flip, roll, repeat, tile, tril/triu, ...) as Tensor
 * methods and module functions with PyTorch's signatures. Views share storage
 * (the engine builds them); cat / stack promote mixed dtypes as PyTorch. */
#include "bind.h"

#include <stdlib.h>
#include <string.h>

extern PyTypeObject CgSize_Type; /* tensor.c */

/* ---------------------------------------------------------------- argument helpers */

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

/* x.view(dtype): the same bytes read as another dtype of the same element size */
static PyObject *view_dtype(cg_tensor *t, cg_dtype dt) { return cgpy_result(cg_view_dtype(t, dt)); }

/* x.view(*shape) / x.view(dtype) */
static PyObject *py_view(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("view", CGPY_INPUT_ARG, CGPY_ARG("size", CGPY_A_SIZE));
    static cgpy_spec dtype_spec = CGPY_SPEC("view", CGPY_ARG("dtype", CGPY_A_DTYPE, CGPY_REQ));
    cgpy_val v[2];
    PyObject *d = nargs == 1 ? args[0] : (nargs == 0 && kwnames && PyTuple_GET_SIZE(kwnames) == 1 ? args[0] : NULL);
    if (d && (PyObject_TypeCheck(d, &CgDtype_Type) || PyType_Check(d))) {
        if (cgpy_args_parse(&dtype_spec, self, args, nargs, kwnames, v)) return NULL;
        return view_dtype(cgpy_t(self), v[0].dtype);
    }
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    return cgpy_result(cg_view(v[0].t, v[1].n, v[1].v));
}

typedef cg_tensor *(*shape_fn)(cg_tensor *, int, const int64_t *);

/* op(input, *shape): reshape / broadcast_to / expand / permute / tile / repeat / flip */
static PyObject *shape_op(CGPY_FASTKW_ARGS, cgpy_spec *spec, shape_fn fn) {
    cgpy_val v[2];
    if (cgpy_args_parse(spec, self, args, nargs, kwnames, v)) return NULL;
    return cgpy_result(fn(v[0].t, v[1].n, v[1].v));
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

#define SHAPE_OP(pyname, name, kwname, fn)                                                 \
    static PyObject *pyname(CGPY_FASTKW_ARGS) {                                            \
        static cgpy_spec spec = CGPY_SPEC(name, CGPY_INPUT_ARG, CGPY_ARG(kwname, CGPY_A_SIZE));           \
        return shape_op(self, args, nargs, kwnames, &spec, fn);                            \
    }
SHAPE_OP(py_reshape, "reshape", "shape", cg_reshape)
SHAPE_OP(py_expand, "expand", "size", cg_expand)
SHAPE_OP(py_broadcast_to, "broadcast_to", "size", cg_broadcast_to)
SHAPE_OP(py_permute, "permute", "dims", permute_fn)
SHAPE_OP(py_tile, "tile", "dims", cg_tile)
SHAPE_OP(py_repeat, "repeat", "repeats", cg_repeat)
SHAPE_OP(py_flip, "flip", "dims", flip_fn)

/* ---------------------------------------------------------------- transposes */

/* op(input, dim0, dim1) with the argument names of transpose / swapaxes / swapdims; RESULT is the
 * return expression over the parsed v (the view, or the in-place form's result) */
#define TRANSPOSE_OP(pyname, name, d0, d1, RESULT)                                                             \
    static PyObject *pyname(CGPY_FASTKW_ARGS) {                                                                \
        static cgpy_spec spec = CGPY_SPEC(name, CGPY_INPUT_ARG, CGPY_ARG(d0, CGPY_A_INT, CGPY_REQ), CGPY_ARG(d1, CGPY_A_INT, CGPY_REQ)); \
        cgpy_val v[3];                                                                                         \
        if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;                                \
        return RESULT;                                                                                         \
    }
#define TRANSPOSE_VIEW cgpy_result(cg_transpose(v[0].t, v[1].i, v[2].i))
TRANSPOSE_OP(py_transpose, "transpose", "dim0", "dim1", TRANSPOSE_VIEW)
TRANSPOSE_OP(py_swapdims, "swapdims", "dim0", "dim1", TRANSPOSE_VIEW)
TRANSPOSE_OP(py_swapaxes, "swapaxes", "axis0", "axis1", TRANSPOSE_VIEW)

/* t(input): 0-d and 1-d unchanged, 2-d transposed */
static PyObject *py_t(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("t", CGPY_INPUT_ARG);
    cgpy_val v[1];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *x = v[0].o;
    if (cg_tensor_ndim(cgpy_t(x)) > 2) {
        PyErr_Format(PyExc_RuntimeError, "t() expects a tensor with <= 2 dimensions, but self is %dD", cg_tensor_ndim(cgpy_t(x)));
        return NULL;
    }
    return cgpy_result(cg_t(cgpy_t(x)));
}

/* movedim / moveaxis(input, source, destination): int or sequences of ints */
static PyObject *movedim_op(CGPY_FASTKW_ARGS, cgpy_spec *spec) {
    const char *name = spec->fname;
    cgpy_val v[3];
    if (cgpy_args_parse(spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *x = v[0].o;
    int ns = v[1].n, ndst = v[2].n, nd = cg_tensor_ndim(cgpy_t(x));
    int64_t *s = v[1].v, *d = v[2].v, perm[CG_MAX_DIMS];
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
#define MOVEDIM_SPEC(name) CGPY_SPEC(name, CGPY_INPUT_ARG, CGPY_ARG("source", CGPY_A_DIMS, CGPY_REQ), CGPY_ARG("destination", CGPY_A_DIMS, CGPY_REQ))
static PyObject *py_movedim(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = MOVEDIM_SPEC("movedim");
    return movedim_op(self, args, nargs, kwnames, &spec);
}
static PyObject *py_moveaxis(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = MOVEDIM_SPEC("moveaxis");
    return movedim_op(self, args, nargs, kwnames, &spec);
}

/* ---------------------------------------------------------------- squeeze / unsqueeze / flatten */

/* squeeze(input, dim=None): dim an int or a sequence of ints */
static PyObject *py_squeeze(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("squeeze", CGPY_INPUT_ARG, CGPY_ARG("dim", CGPY_A_DIMS));
    cgpy_val v[2];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    cg_tensor *t = v[0].t;
    if (!cgpy_given(&v[1])) return cgpy_result(cg_squeeze(t));
    int n = v[1].n, nd = cg_tensor_ndim(t);
    int64_t *dims = v[1].v;
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

/* unsqueeze(input, dim) */
static PyObject *py_unsqueeze(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("unsqueeze", CGPY_INPUT_ARG, CGPY_ARG("dim", CGPY_A_INT, CGPY_REQ));
    cgpy_val v[2];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    return cgpy_result(cg_unsqueeze(v[0].t, v[1].i));
}

/* flatten(input, start_dim=0, end_dim=-1) */
static PyObject *py_flatten(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("flatten", CGPY_INPUT_ARG, CGPY_ARG("start_dim", CGPY_A_INT, CGPY_NONE_OK, 0),
                                         CGPY_ARG("end_dim", CGPY_A_INT, CGPY_NONE_OK, -1));
    cgpy_val v[3];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    return cgpy_result(cg_flatten(v[0].t, v[1].i, v[2].i));
}

/* unflatten(input, dim, sizes) */
static PyObject *py_unflatten(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("unflatten", CGPY_INPUT_ARG, CGPY_ARG("dim", CGPY_A_INT, CGPY_REQ),
                                      CGPY_ARG("sizes", CGPY_A_INTLIST, CGPY_REQ));
    cgpy_val v[3];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    return cgpy_result(cg_unflatten(v[0].t, v[1].i, v[2].n, v[2].v));
}

/* ---------------------------------------------------------------- narrow / select / diagonal / as_strided / unfold */

/* narrow(input, dim, start, length) */
static PyObject *py_narrow(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("narrow", CGPY_INPUT_ARG, CGPY_ARG("dim", CGPY_A_INT, CGPY_REQ),
                                      CGPY_ARG("start", CGPY_A_OBJ, CGPY_REQ),
                                        CGPY_ARG("length", CGPY_A_INT, CGPY_REQ));
    cgpy_val v[4];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    /* start: an int, or (PyTorch's Tensor overload) a 0-d integral, non-bool tensor */
    PyObject *so = v[2].o;
    if (cgpy_is_tensor(so)) {
        cg_tensor *st = cgpy_t(so);
        cg_dtype dt = cg_tensor_dtype(st);
        if (cg_tensor_ndim(st) != 0 || dt == CG_DTYPE_BOOL || cg_dtype_is_floating(dt)) {
            PyErr_SetString(PyExc_RuntimeError, "start must be an 0-dim integral Tensor.");
            return NULL;
        }
    } else if (PyBool_Check(so) || !PyIndex_Check(so)) {
        PyErr_Format(PyExc_TypeError, "narrow(): argument 'start' must be int, not %.100s", Py_TYPE(so)->tp_name);
        return NULL;
    }
    int64_t start = PyLong_AsLongLong(so);
    if (start == -1 && PyErr_Occurred()) return NULL;
    return cgpy_result(cg_narrow(v[0].t, v[1].i, start, v[3].i));
}

/* select(input, dim, index) */
static PyObject *py_select(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("select", CGPY_INPUT_ARG, CGPY_ARG("dim", CGPY_A_INT, CGPY_REQ),
                                      CGPY_ARG("index", CGPY_A_INT, CGPY_REQ));
    cgpy_val v[3];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    return cgpy_result(cg_select(v[0].t, v[1].i, v[2].i));
}

/* diagonal(input, offset=0, dim1=0, dim2=1) */
static PyObject *py_diagonal(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("diagonal", CGPY_INPUT_ARG, CGPY_ARG("offset", CGPY_A_INT, CGPY_NONE_OK, 0),
                                          CGPY_ARG("dim1", CGPY_A_INT, CGPY_NONE_OK, 0), CGPY_ARG("dim2", CGPY_A_INT,
                                              CGPY_NONE_OK, 1));
    cgpy_val v[4];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    return cgpy_result(cg_diagonal(v[0].t, v[1].i, v[2].i, v[3].i));
}

/* as_strided(input, size, stride, storage_offset=None) */
static PyObject *py_as_strided(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("as_strided", CGPY_INPUT_ARG, CGPY_ARG("size", CGPY_A_INTLIST, CGPY_REQ),
                                            CGPY_ARG("stride", CGPY_A_INTLIST, CGPY_REQ), CGPY_ARG("storage_offset",
                                                CGPY_A_OPT_INT));
    cgpy_val v[4];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    int n1 = v[1].n, n2 = v[2].n;
    int64_t o = cgpy_given(&v[3]) ? v[3].i : cg_tensor_offset(v[0].t);
    if (n1 != n2) {
        PyErr_Format(PyExc_RuntimeError, "as_strided: mismatch in length of strides and shape (%d vs %d)", n2, n1);
        return NULL;
    }
    return cgpy_result(cg_as_strided(v[0].t, n1, v[1].v, v[2].v, o));
}

/* x.unfold(dimension, size, step) */
static PyObject *py_unfold(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("unfold", CGPY_INPUT_ARG, CGPY_ARG("dimension", CGPY_A_INT, CGPY_REQ),
                                      CGPY_ARG("size", CGPY_A_INT, CGPY_REQ),
                                        CGPY_ARG("step", CGPY_A_INT, CGPY_REQ));
    cgpy_val v[4];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    return cgpy_result(cg_unfold(v[0].t, v[1].i, v[2].i, v[3].i));
}

/* ---------------------------------------------------------------- cat / stack / hstack / vstack / dstack */

typedef cg_tensor *(*variadic_fn)(int, cg_tensor *const *, int64_t);

/* op(tensors, dim=0, *, out=None); concatenate names dim "axis" */
static PyObject *join_op(CGPY_FASTKW_ARGS, cgpy_spec *spec, variadic_fn fn) {
    const char *name = spec->fname;
    cgpy_val v[3];
    if (cgpy_args_parse(spec, self, args, nargs, kwnames, v)) return NULL;
    int n;
    cg_tensor **ts;
    if (tensor_list(v[0].o, name, &n, &ts)) return NULL;
    cgpy_out_rule rule = {name, CGPY_OUT_CAST, CGPY_OUT_NO_ALIAS, 0};
    PyObject *res = cgpy_out_finish(cgpy_opt(&v[2]), fn(n, ts, v[1].i), &rule, n, ts);
    free_tensors(n, ts);
    return res;
}
#define JOIN_OP(pyname, name, dimkw, fn)                                                                       \
    static PyObject *pyname(CGPY_FASTKW_ARGS) {                                                                \
        static cgpy_spec spec = CGPY_SPEC(name, CGPY_ARG("tensors", CGPY_A_OBJ, CGPY_REQ), CGPY_ARG(dimkw, CGPY_A_INT),                \
                                        CGPY_ARG("out", CGPY_A_OBJ, CGPY_KWONLY));                                    \
        return join_op(self, args, nargs, kwnames, &spec, fn);                                                 \
    }
JOIN_OP(py_cat, "cat", "dim", cg_cat)
JOIN_OP(py_concat, "concat", "dim", cg_cat)
JOIN_OP(py_concatenate, "concatenate", "axis", cg_cat)
JOIN_OP(py_stack, "stack", "dim", cg_stack)

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

/* hstack / vstack / dstack(tensors, *, out=None): kind 0, 1, 2 */
#define STACK_LIKE_SPEC(name) CGPY_SPEC(name, CGPY_ARG("tensors", CGPY_A_OBJ, CGPY_REQ), CGPY_ARG("out", CGPY_A_OBJ, CGPY_KWONLY))
static PyObject *stack_like(CGPY_FASTKW_ARGS, int kind) {
    static cgpy_spec specs[3] = {STACK_LIKE_SPEC("hstack"), STACK_LIKE_SPEC("vstack"), STACK_LIKE_SPEC("dstack")};
    const char *name = specs[kind].fname;
    cgpy_val v[2];
    if (cgpy_args_parse(&specs[kind], self, args, nargs, kwnames, v)) return NULL;
    PyObject *out = cgpy_opt(&v[1]);
    int n;
    cg_tensor **ts;
    if (tensor_list(v[0].o, name, &n, &ts)) return NULL;
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
    cgpy_out_rule rule = {name, CGPY_OUT_CAST, CGPY_OUT_NO_ALIAS, 0};
    PyObject *res = cgpy_out_finish(out, cg_cat(n, ts, dim), &rule, n, ts);
    free_tensors(n, ts);
    return res;
}
static PyObject *py_hstack(CGPY_FASTKW_ARGS) { return stack_like(self, args, nargs, kwnames, 0); }
static PyObject *py_vstack(CGPY_FASTKW_ARGS) { return stack_like(self, args, nargs, kwnames, 1); }
static PyObject *py_dstack(CGPY_FASTKW_ARGS) { return stack_like(self, args, nargs, kwnames, 2); }

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

/* split(tensor, split_size_or_sections, dim=0); split_size_or_sections is torch.split's name */
static PyObject *py_split(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("split", CGPY_ARG("tensor", CGPY_A_TENSOR, CGPY_SELF), CGPY_ARG("split_size",
                                      CGPY_A_OBJ),
                                       CGPY_ARG("dim", CGPY_A_INT), CGPY_ARG("split_size_or_sections", CGPY_A_OBJ,
                                           CGPY_KWONLY));
    cgpy_val v[4];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *x = v[0].o, *sp = v[1].o ? v[1].o : v[3].o;
    if (v[1].o && v[3].o) {
        PyErr_SetString(PyExc_TypeError, "split() got multiple values for argument 'split_size'");
        return NULL;
    }
    if (!sp) {
        PyErr_SetString(PyExc_TypeError, "split() missing required argument 'split_size_or_sections'");
        return NULL;
    }
    int64_t d = v[2].i;
    cg_tensor *t = cgpy_t(x);
    int nd = cg_tensor_ndim(t);
    int64_t dd = d;
    if (nd && wrap_dim(&dd, nd)) return NULL;
    int64_t size = nd ? cg_tensor_shape(t)[dd] : 0;
    cg_tensor **outs;
    int n;
    if (PyLong_Check(sp) || (PyIndex_Check(sp) && !PySequence_Check(sp))) {
        int64_t s;
        if (cgpy_arg_int(sp, "split", "split_size", &s)) return NULL;
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
            if (cgpy_arg_int(PySequence_Fast_GET_ITEM(fast, i), "split", "split_size_or_sections", &sizes[i])) {
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
static PyObject *py_chunk(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("chunk", CGPY_INPUT_ARG, CGPY_ARG("chunks", CGPY_A_INT, CGPY_REQ),
                                      CGPY_ARG("dim", CGPY_A_INT, CGPY_NONE_OK));
    cgpy_val a[3];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, a)) return NULL;
    PyObject *x = a[0].o;
    int64_t v[2] = {a[1].i, a[2].i};
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
static PyObject *py_unbind(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("unbind", CGPY_INPUT_ARG, CGPY_ARG("dim", CGPY_A_INT, CGPY_NONE_OK));
    cgpy_val v[2];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *x = v[0].o;
    int64_t d = v[1].i;
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

static PyObject *flip_lr_ud(CGPY_FASTKW_ARGS, bool lr) {
    static cgpy_spec specs[2] = {CGPY_SPEC("flipud", CGPY_INPUT_ARG), CGPY_SPEC("fliplr", CGPY_INPUT_ARG)};
    const char *name = lr ? "fliplr" : "flipud";
    cgpy_val v[1];
    if (cgpy_args_parse(&specs[lr], self, args, nargs, kwnames, v)) return NULL;
    PyObject *x = v[0].o;
    if (cg_tensor_ndim(cgpy_t(x)) < (lr ? 2 : 1)) {
        PyErr_Format(PyExc_RuntimeError, "%s: Input must be >= %d-d.", name, lr ? 2 : 1);
        return NULL;
    }
    int64_t d = lr ? 1 : 0;
    return cgpy_result(cg_flip(cgpy_t(x), 1, &d));
}
static PyObject *py_fliplr(CGPY_FASTKW_ARGS) { return flip_lr_ud(self, args, nargs, kwnames, true); }
static PyObject *py_flipud(CGPY_FASTKW_ARGS) { return flip_lr_ud(self, args, nargs, kwnames, false); }

/* roll(input, shifts, dims=None) */
static PyObject *py_roll(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("roll", CGPY_INPUT_ARG, CGPY_ARG("shifts", CGPY_A_DIMS, CGPY_REQ),
                                      CGPY_ARG("dims", CGPY_A_DIMS));
    cgpy_val v[3];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *x = v[0].o, *dims = cgpy_given(&v[2]) ? v[2].o : Py_None;
    int ns = v[1].n, nd = v[2].n;
    int64_t *s = v[1].v, *d = v[2].v;
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

#define TRI_SPEC(name, ...) CGPY_SPEC(name, CGPY_INPUT_ARG, CGPY_ARG("diagonal", CGPY_A_INT, CGPY_NONE_OK), __VA_ARGS__)
static PyObject *tri_op(CGPY_FASTKW_ARGS, bool upper, bool inplace) {
    static cgpy_spec specs[4] = {TRI_SPEC("tril", CGPY_OUT_ARG), TRI_SPEC("triu", CGPY_OUT_ARG), TRI_SPEC("tril_",
        CGPY_NO_ARG),
                                 TRI_SPEC("triu_", CGPY_NO_ARG)};
    cgpy_spec *spec = &specs[upper + 2 * inplace];
    const char *name = spec->fname;
    cgpy_val v[3];
    if (cgpy_args_parse(spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *x = v[0].o, *out = inplace ? NULL : cgpy_opt(&v[2]);
    int64_t k = v[1].i;
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
static PyObject *py_tril(CGPY_FASTKW_ARGS) { return tri_op(self, args, nargs, kwnames, false, false); }
static PyObject *py_triu(CGPY_FASTKW_ARGS) { return tri_op(self, args, nargs, kwnames, true, false); }
static PyObject *py_tril_(CGPY_FASTKW_ARGS) { return tri_op(self, args, nargs, kwnames, false, true); }
static PyObject *py_triu_(CGPY_FASTKW_ARGS) { return tri_op(self, args, nargs, kwnames, true, true); }

/* ---------------------------------------------------------------- in-place views */

/* x.transpose_(dim0, dim1) / swapdims_ / swapaxes_, x.t_(), x.squeeze_(dim=None), x.unsqueeze_(dim),
 * x.as_strided_(size, stride, storage_offset=None): x's own geometry changes (Note [In-place views]) */
#define TRANSPOSE_INPLACE cgpy_inplace_result(v[0].o, cg_transpose_(v[0].t, v[1].i, v[2].i))
TRANSPOSE_OP(py_transpose_, "transpose_", "dim0", "dim1", TRANSPOSE_INPLACE)
TRANSPOSE_OP(py_swapdims_, "swapdims_", "dim0", "dim1", TRANSPOSE_INPLACE)
TRANSPOSE_OP(py_swapaxes_, "swapaxes_", "axis0", "axis1", TRANSPOSE_INPLACE)

static PyObject *py_t_(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("t_", CGPY_INPUT_ARG);
    cgpy_val v[1];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    return cgpy_inplace_result(v[0].o, cg_t_(v[0].t));
}

static PyObject *py_squeeze_(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("squeeze_", CGPY_INPUT_ARG, CGPY_ARG("dim", CGPY_A_DIMS));
    cgpy_val v[2];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    if (!cgpy_given(&v[1])) return cgpy_inplace_result(v[0].o, cg_squeeze_(v[0].t));
    return cgpy_inplace_result(v[0].o, cg_squeeze_dims_(v[0].t, v[1].n, v[1].v));
}

static PyObject *py_unsqueeze_(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("unsqueeze_", CGPY_INPUT_ARG, CGPY_ARG("dim", CGPY_A_INT, CGPY_REQ));
    cgpy_val v[2];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    return cgpy_inplace_result(v[0].o, cg_unsqueeze_(v[0].t, v[1].i));
}

static PyObject *py_as_strided_(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("as_strided_", CGPY_INPUT_ARG, CGPY_ARG("size", CGPY_A_INTLIST, CGPY_REQ),
                                      CGPY_ARG("stride", CGPY_A_INTLIST, CGPY_REQ),
                                      CGPY_ARG("storage_offset", CGPY_A_OPT_INT));
    cgpy_val v[4];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    int n1 = v[1].n, n2 = v[2].n;
    int64_t o = cgpy_given(&v[3]) ? v[3].i : cg_tensor_offset(v[0].t);
    if (n1 != n2) {
        PyErr_Format(PyExc_RuntimeError, "as_strided_: mismatch in length of strides and shape (%d vs %d)", n2, n1);
        return NULL;
    }
    return cgpy_inplace_result(v[0].o, cg_as_strided_(v[0].t, n1, v[1].v, v[2].v, o));
}

/* ---------------------------------------------------------------- tables */

/* ops that are both Tensor methods and module functions */
#define SHAPE_SHARED_ENTRIES                                                                                             \
    CGPY_FASTKW("reshape", py_reshape), CGPY_FASTKW("broadcast_to", py_broadcast_to), CGPY_FASTKW("permute", py_permute),          \
        CGPY_FASTKW("tile", py_tile), CGPY_FASTKW("flip", py_flip), CGPY_FASTKW("transpose", py_transpose),                          \
        CGPY_FASTKW("swapdims", py_swapdims), CGPY_FASTKW("swapaxes", py_swapaxes), CGPY_FASTKW("t", py_t),                        \
        CGPY_FASTKW("movedim", py_movedim), CGPY_FASTKW("moveaxis", py_moveaxis), CGPY_FASTKW("squeeze", py_squeeze),               \
        CGPY_FASTKW("unsqueeze", py_unsqueeze), CGPY_FASTKW("flatten", py_flatten), CGPY_FASTKW("unflatten", py_unflatten),       \
        CGPY_FASTKW("narrow", py_narrow), CGPY_FASTKW("select", py_select), CGPY_FASTKW("diagonal", py_diagonal),                  \
        CGPY_FASTKW("as_strided", py_as_strided), CGPY_FASTKW("split", py_split), CGPY_FASTKW("chunk", py_chunk),                  \
        CGPY_FASTKW("unbind", py_unbind), CGPY_FASTKW("fliplr", py_fliplr), CGPY_FASTKW("flipud", py_flipud),                      \
        CGPY_FASTKW("roll", py_roll), CGPY_FASTKW("tril", py_tril), CGPY_FASTKW("triu", py_triu)

PyMethodDef cgpy_shape_methods[] = {
    SHAPE_SHARED_ENTRIES,
    CGPY_FASTKW("view", py_view),
    CGPY_FASTKW("expand", py_expand),
    CGPY_FASTKW("repeat", py_repeat),
    CGPY_FASTKW("unfold", py_unfold),
    CGPY_FASTKW("tril_", py_tril_),
    CGPY_FASTKW("triu_", py_triu_),
    CGPY_FASTKW("transpose_", py_transpose_),
    CGPY_FASTKW("swapdims_", py_swapdims_),
    CGPY_FASTKW("swapaxes_", py_swapaxes_),
    CGPY_FASTKW("t_", py_t_),
    CGPY_FASTKW("squeeze_", py_squeeze_),
    CGPY_FASTKW("unsqueeze_", py_unsqueeze_),
    CGPY_FASTKW("as_strided_", py_as_strided_),
    CGPY_TABLE_END,
};
PyMethodDef cgpy_shape_functions[] = {
    SHAPE_SHARED_ENTRIES,
    CGPY_FASTKW("cat", py_cat),
    CGPY_FASTKW("concat", py_concat),
    CGPY_FASTKW("concatenate", py_concatenate),
    CGPY_FASTKW("stack", py_stack),
    CGPY_FASTKW("hstack", py_hstack),
    CGPY_FASTKW("vstack", py_vstack),
    CGPY_FASTKW("dstack", py_dstack),
    {"broadcast_tensors", py_broadcast_tensors, METH_VARARGS, NULL},
    {"broadcast_shapes", py_broadcast_shapes, METH_VARARGS, NULL},
    CGPY_TABLE_END,
};
