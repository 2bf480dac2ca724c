/* ops_reduce.c — bindings of reductions, scans and sorting (sum, mean, max,
 * var, norm, ..., cumsum, sort, topk) with PyTorch's dim / keepdim / dtype
 * arguments and overloads, as Tensor methods and module functions. Ops that
 * return (values, indices) return the named tuples of cgrad.return_types
 * (PyStructSequence types created on first use). */
#include "reduce_shape_args.h"

#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------- return types */

enum { RT_MAX, RT_MIN, RT_SORT, RT_TOPK, RT_CUMMAX, RT_AMINMAX, RT_COUNT };
static PyStructSequence_Field rt_values_indices[] = {{"values", NULL}, {"indices", NULL}, {NULL, NULL}};
static PyStructSequence_Field rt_min_max[] = {{"min", NULL}, {"max", NULL}, {NULL, NULL}};
static PyStructSequence_Desc rt_desc[RT_COUNT] = {
    {"cgrad.return_types.max", NULL, rt_values_indices, 2},
    {"cgrad.return_types.min", NULL, rt_values_indices, 2},
    {"cgrad.return_types.sort", NULL, rt_values_indices, 2},
    {"cgrad.return_types.topk", NULL, rt_values_indices, 2},
    {"cgrad.return_types.cummax", NULL, rt_values_indices, 2},
    {"cgrad.return_types.aminmax", NULL, rt_min_max, 2},
};
static PyTypeObject *rt_types[RT_COUNT];

static PyTypeObject *rt_type(int kind) {
    if (!rt_types[kind]) rt_types[kind] = PyStructSequence_NewType(&rt_desc[kind]);
    return rt_types[kind];
}

/* _return_types() -> {name: type}, for cgrad/return_types.py */
static PyObject *py_return_types(PyObject *m, PyObject *u) {
    (void)m, (void)u;
    PyObject *d = PyDict_New();
    for (int k = 0; d && k < RT_COUNT; k++) {
        PyTypeObject *tp = rt_type(k);
        const char *name = strrchr(rt_desc[k].name, '.') + 1;
        if (!tp || PyDict_SetItemString(d, name, (PyObject *)tp) < 0) Py_CLEAR(d);
    }
    return d;
}

/* A pair of results (both stolen; NULL means the engine failed) as a named
 * tuple of `kind`, or copied into out=(a, b) when given under `rule`
 * (Note [out= validation]), x being the input. */
static PyObject *pair_result(int kind, cg_tensor *a, cg_tensor *b, PyObject *out, const cgpy_out_rule *rule, PyObject *x) {
    if (!a || !b) {
        cg_tensor_release(a);
        cg_tensor_release(b);
        return PyErr_Occurred() ? NULL : cgpy_raise();
    }
    PyObject *items[2] = {NULL, NULL};
    if (out) {
        if (!PyTuple_Check(out) || PyTuple_GET_SIZE(out) != 2) {
            cg_tensor_release(a);
            cg_tensor_release(b);
            PyErr_SetString(PyExc_TypeError, "out= must be a tuple of two Tensors");
            return NULL;
        }
        cg_tensor *in = cgpy_t(x);
        items[0] = cgpy_out_finish(PyTuple_GET_ITEM(out, 0), a, rule, 1, &in);
        if (!items[0]) {
            cg_tensor_release(b);
            return NULL;
        }
        items[1] = cgpy_out_finish(PyTuple_GET_ITEM(out, 1), b, rule, 1, &in);
    } else {
        items[0] = cgpy_wrap(a);
        items[1] = cgpy_wrap(b);
    }
    PyTypeObject *tp = (items[0] && items[1]) ? rt_type(kind) : NULL;
    PyObject *r = tp ? PyStructSequence_New(tp) : NULL;
    if (!r) {
        Py_XDECREF(items[0]);
        Py_XDECREF(items[1]);
        return NULL;
    }
    PyStructSequence_SetItem(r, 0, items[0]);
    PyStructSequence_SetItem(r, 1, items[1]);
    return r;
}

/* ---------------------------------------------------------------- helpers */

/* Result of op (stolen) into out= when given, under PyTorch's rules for it
 * (Note [out= validation]); x: the input tensor. Reductions are computed
 * before the copy, so out may overlap the input (PyTorch does not check). */
static PyObject *finish_rule(PyObject *out, cg_tensor *r, const char *op, int dtype_rule, int alias_rule, PyObject *x) {
    cgpy_out_rule rule = {op, (unsigned char)dtype_rule, (unsigned char)alias_rule, 0};
    cg_tensor *in = cgpy_t(x);
    return cgpy_out_finish(out, r, &rule, 1, &in);
}
/* a reduction into an out of exactly its dtype */
static PyObject *finish(PyObject *out, cg_tensor *r, const char *op, PyObject *x) {
    return finish_rule(out, r, op, CGPY_OUT_EXACT, CGPY_OUT_ALIAS_OK, x);
}

extern const char *cgpy_torch_type_name(cg_dtype dt); /* number.c */

/* PyTorch's nansum / nanmean kernels take no integer out= for a floating
 * input (NotImplementedError naming the kernel and out's type); 0 or -1. */
static int nan_reduce_out_check(PyObject *out, PyObject *x) {
    if (!out || !cgpy_is_tensor(out) || !cg_dtype_is_floating(cg_tensor_dtype(cgpy_t(x)))) return 0;
    cg_dtype odt = cg_tensor_dtype(cgpy_t(out));
    if (cg_dtype_is_floating(odt)) return 0;
    PyErr_Format(PyExc_NotImplementedError, "\"nansum_cpu\" not implemented for '%s'", cgpy_torch_type_name(odt));
    return -1;
}

/* PyTorch's error for float-only reductions of integer inputs. */
static PyObject *float_only_error(const char *what, cg_tensor *x) {
    PyErr_Format(PyExc_RuntimeError, "%s Got: %s", what, cg_dtype_name(cg_tensor_dtype(x)));
    return NULL;
}

/* Parsed (dim=None, keepdim=False, *, dtype=None) after the input. */
typedef struct {
    PyObject *x, *out;
    int nd;
    int64_t dims[CG_MAX_DIMS];
    int has_dim, keepdim, dtype;
} red_args;

/* Parse `dims [keepdim] [dtype]` for op `name`; with_dtype adds the keyword-only dtype=. */
static int parse_reduce(PyObject *self, PyObject *args, PyObject *kw, const char *name, bool with_dtype, red_args *a) {
    PyObject *rest, *kwr, *dim = Py_None;
    a->keepdim = 0;
    a->dtype = -1;
    if (opargs_split(self, args, kw, name, "input", &a->out, &a->x, &rest, &kwr)) return -1;
    a->has_dim = 0;
    a->nd = 0;
    if (PyTuple_GET_SIZE(rest) == 0 && (!kwr || PyDict_GET_SIZE(kwr) == 0)) { /* x.sum(): nothing more to parse */
        opargs_done(rest, kwr);
        return 0;
    }
    static char *kwlist[] = {"dim", "keepdim", "dtype", NULL};
    static char *kwlist_nodtype[] = {"dim", "keepdim", NULL};
    char fmt[64];
    snprintf(fmt, sizeof fmt, "|Op%s:%s", with_dtype ? "$O&" : "", name);
    int ok = with_dtype ? PyArg_ParseTupleAndKeywords(rest, kwr, fmt, kwlist, &dim, &a->keepdim, cgpy_dtype_conv, &a->dtype)
                        : PyArg_ParseTupleAndKeywords(rest, kwr, fmt, kwlist_nodtype, &dim, &a->keepdim);
    opargs_done(rest, kwr);
    if (!ok) return -1;
    a->has_dim = dim != Py_None;
    return opargs_dims(dim, name, &a->nd, a->dims);
}

/* ---------------------------------------------------------------- sum, mean, nansum, nanmean, prod */

/* sum(input, dim=None, keepdim=False, *, dtype=None) */
static PyObject *py_sum(PyObject *self, PyObject *args, PyObject *kw) {
    red_args a;
    if (parse_reduce(self, args, kw, "sum", true, &a) || cgpy_out_dtype(a.out, &a.dtype, NULL)) return NULL;
    cg_tensor *r = cg_sum_dtype(cgpy_t(a.x), a.nd, a.dims, a.keepdim, (cg_dtype)a.dtype);
    return finish(a.out, opargs_cast_result(r, a.dtype), "sum", a.x);
}

/* mean(input, dim=None, keepdim=False, *, dtype=None): floating dtypes only */
static PyObject *py_mean(PyObject *self, PyObject *args, PyObject *kw) {
    red_args a;
    if (parse_reduce(self, args, kw, "mean", true, &a)) return NULL;
    cg_tensor *x = cgpy_t(a.x);
    if (a.dtype >= 0 && !cg_dtype_is_floating((cg_dtype)a.dtype)) {
        PyErr_Format(PyExc_RuntimeError, "mean(): could not infer output dtype. Optional dtype must be either a floating "
                     "point or complex dtype. Got: %s", cg_dtype_name((cg_dtype)a.dtype));
        return NULL;
    }
    if (a.dtype < 0 && !cg_dtype_is_floating(cg_tensor_dtype(x)))
        return float_only_error("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                                "complex dtype.", x);
    cg_tensor *c = opargs_cast(x, a.dtype >= 0 ? (cg_dtype)a.dtype : cg_tensor_dtype(x));
    if (!c) return NULL;
    cg_tensor *r = cg_mean(c, a.nd, a.dims, a.keepdim);
    cg_tensor_release(c);
    return finish_rule(a.out, r, "mean", CGPY_OUT_CAST, CGPY_OUT_ALIAS_OK, a.x);
}

/* x with NaNs replaced by zero (new ref; x retained when not floating) */
static cg_tensor *zero_nans(cg_tensor *x) {
    if (!cg_dtype_is_floating(cg_tensor_dtype(x))) {
        cg_tensor_retain(x);
        return x;
    }
    cg_tensor *nan = cg_isnan(x);
    cg_tensor *zero = nan ? cg_scalar_on(0, cg_tensor_dtype(x), cg_tensor_device(x)) : NULL;
    cg_tensor *r = zero ? cg_where(nan, zero, x) : NULL;
    cg_tensor_release(nan);
    cg_tensor_release(zero);
    return r;
}

/* nansum(input, dim=None, keepdim=False, *, dtype=None) */
static PyObject *py_nansum(PyObject *self, PyObject *args, PyObject *kw) {
    red_args a;
    if (parse_reduce(self, args, kw, "nansum", true, &a) || nan_reduce_out_check(a.out, a.x) ||
        cgpy_out_dtype(a.out, &a.dtype, NULL))
        return NULL;
    cg_tensor *x = cgpy_t(a.x);
    cg_tensor *c = opargs_cast(x, a.dtype >= 0 ? (cg_dtype)a.dtype : cg_tensor_dtype(x));
    if (!c) return NULL;
    cg_tensor *z = zero_nans(c);
    cg_tensor_release(c);
    cg_tensor *r = z ? cg_sum(z, a.nd, a.dims, a.keepdim) : NULL;
    cg_tensor_release(z);
    return finish(a.out, opargs_cast_result(r, a.dtype), "nansum", a.x);
}

/* nanmean(input, dim=None, keepdim=False, *, dtype=None): sum of non-NaN / their count */
static PyObject *py_nanmean(PyObject *self, PyObject *args, PyObject *kw) {
    red_args a;
    if (parse_reduce(self, args, kw, "nanmean", true, &a) || nan_reduce_out_check(a.out, a.x)) return NULL;
    cg_tensor *x = cgpy_t(a.x);
    if (!cg_dtype_is_floating(cg_tensor_dtype(x))) {
        PyErr_Format(PyExc_RuntimeError, "nanmean(): expected input to have floating point or complex dtype but got %s",
                     cg_dtype_name(cg_tensor_dtype(x)));
        return NULL;
    }
    cg_tensor *c = opargs_cast(x, a.dtype >= 0 ? (cg_dtype)a.dtype : cg_tensor_dtype(x));
    if (!c) return NULL;
    cg_tensor *z = zero_nans(c), *nan = cg_isnan(c);
    cg_tensor *ok = nan ? cg_logical_not(nan) : NULL;
    cg_tensor *cnt = ok ? cg_sum(ok, a.nd, a.dims, a.keepdim) : NULL;
    cg_tensor *cntf = cnt ? cg_to_dtype(cnt, cg_tensor_dtype(c)) : NULL;
    cg_tensor *s = z && cntf ? cg_sum(z, a.nd, a.dims, a.keepdim) : NULL;
    cg_tensor *r = s ? cg_div(s, cntf) : NULL;
    cg_tensor *tmp[] = {c, z, nan, ok, cnt, cntf, s};
    cgpy_release_n(7, tmp);
    return finish_rule(a.out, r, "nanmean", CGPY_OUT_CAST, CGPY_OUT_ALIAS_OK, a.x);
}

/* prod(input, *, dtype=None) / prod(input, dim, keepdim=False, *, dtype=None) */
static PyObject *py_prod(PyObject *self, PyObject *args, PyObject *kw) {
    PyObject *x, *out, *rest, *kwr, *dim = Py_None;
    int keepdim = 0, dt = -1;
    if (opargs_split(self, args, kw, "prod", "input", &out, &x, &rest, &kwr)) return NULL;
    static char *kwlist[] = {"dim", "keepdim", "dtype", NULL};
    int ok = PyArg_ParseTupleAndKeywords(rest, kwr, "|Op$O&:prod", kwlist, &dim, &keepdim, cgpy_dtype_conv, &dt);
    opargs_done(rest, kwr);
    if (!ok) return NULL;
    int64_t d = 0;
    if ((dim != Py_None && opargs_int(dim, "prod", "dim", &d)) || cgpy_out_dtype(out, &dt, NULL)) return NULL;
    cg_tensor *c = opargs_cast(cgpy_t(x), dt >= 0 ? (cg_dtype)dt : cg_tensor_dtype(cgpy_t(x)));
    if (!c) return NULL;
    cg_tensor *r = cg_prod(c, dim != Py_None, &d, dim != Py_None && keepdim);
    cg_tensor_release(c);
    return finish(out, opargs_cast_result(r, dt), "prod", x);
}

/* ---------------------------------------------------------------- max / min and friends */

/* max(input) / max(input, dim, keepdim=False) -> (values, indices) / max(input, other) */
static PyObject *minmax(PyObject *self, PyObject *args, PyObject *kw, bool is_max) {
    const char *name = is_max ? "max" : "min";
    PyObject *x, *out, *rest, *kwr, *res = NULL;
    if (opargs_split(self, args, kw, name, "input", &out, &x, &rest, &kwr)) return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(rest);
    PyObject *other = n ? PyTuple_GET_ITEM(rest, 0) : opargs_kw(kwr, "other");
    if (n == 0 && (!kwr || PyDict_GET_SIZE(kwr) == 0)) {
        res = finish(out, is_max ? cg_max(cgpy_t(x)) : cg_min(cgpy_t(x)), name, x);
    } else if (other && cgpy_is_tensor(other)) {
        if (n > 1 || (kwr && PyDict_GET_SIZE(kwr) > (n ? 0 : 1))) {
            PyErr_Format(PyExc_TypeError, "%s(input, other) takes no further arguments", name);
        } else {
            PyObject *ops[2] = {x, other};
            cg_tensor *t[2];
            cg_dtype dt;
            if (!cgpy_promote_operands(2, ops, false, t, &dt)) {
                cg_tensor *r = is_max ? cg_maximum(t[0], t[1]) : cg_minimum(t[0], t[1]);
                cgpy_release_n(2, t);
                cgpy_out_rule rule = {name, CGPY_OUT_CAST, CGPY_OUT_NO_PARTIAL, 0}; /* elementwise, as maximum */
                cg_tensor *ins[2] = {cgpy_t(x), cgpy_t(other)};
                res = cgpy_out_finish(out, r, &rule, 2, ins);
            }
        }
    } else {
        PyObject *dim;
        int keepdim = 0;
        int64_t d;
        static char *kwlist[] = {"dim", "keepdim", NULL};
        char fmt[32];
        snprintf(fmt, sizeof fmt, "O|p:%s", name);
        if (PyArg_ParseTupleAndKeywords(rest, kwr, fmt, kwlist, &dim, &keepdim) && !opargs_int(dim, name, "dim", &d)) {
            cg_tensor *v = NULL, *i = NULL;
            cg_status st = (is_max ? cg_max_dim : cg_min_dim)(cgpy_t(x), d, keepdim, &v, &i);
            if (st) v = i = NULL;
            cgpy_out_rule rule = {name, CGPY_OUT_EXACT, CGPY_OUT_NO_PARTIAL, 0};
            res = pair_result(is_max ? RT_MAX : RT_MIN, v, i, out, &rule, x);
        }
    }
    opargs_done(rest, kwr);
    return res;
}
static PyObject *py_max(PyObject *self, PyObject *args, PyObject *kw) { return minmax(self, args, kw, true); }
static PyObject *py_min(PyObject *self, PyObject *args, PyObject *kw) { return minmax(self, args, kw, false); }

typedef cg_tensor *(*dims_fn)(cg_tensor *, int, const int64_t *, bool);

/* amax / amin(input, dim=(), keepdim=False) */
static PyObject *dims_reduce(PyObject *self, PyObject *args, PyObject *kw, const char *name, dims_fn fn) {
    red_args a;
    if (parse_reduce(self, args, kw, name, false, &a)) return NULL;
    return finish(a.out, fn(cgpy_t(a.x), a.nd, a.dims, a.keepdim), name, a.x);
}
static PyObject *py_amax(PyObject *self, PyObject *args, PyObject *kw) { return dims_reduce(self, args, kw, "amax", cg_amax); }
static PyObject *py_amin(PyObject *self, PyObject *args, PyObject *kw) { return dims_reduce(self, args, kw, "amin", cg_amin); }

/* aminmax(input, *, dim=None, keepdim=False) -> (min, max) */
static PyObject *py_aminmax(PyObject *self, PyObject *args, PyObject *kw) {
    PyObject *x, *out, *rest, *kwr, *dim = Py_None;
    int keepdim = 0;
    if (opargs_split(self, args, kw, "aminmax", "input", &out, &x, &rest, &kwr)) return NULL;
    static char *kwlist[] = {"dim", "keepdim", NULL};
    int ok = PyArg_ParseTupleAndKeywords(rest, kwr, "|$Op:aminmax", kwlist, &dim, &keepdim);
    opargs_done(rest, kwr);
    if (!ok) return NULL;
    int64_t d = 0;
    if (dim != Py_None && opargs_int(dim, "aminmax", "dim", &d)) return NULL;
    int nd = dim != Py_None;
    cg_tensor *lo = cg_amin(cgpy_t(x), nd, &d, keepdim);
    cg_tensor *hi = lo ? cg_amax(cgpy_t(x), nd, &d, keepdim) : NULL;
    static const cgpy_out_rule rule = {"aminmax", CGPY_OUT_EXACT, CGPY_OUT_NO_PARTIAL, 0};
    return pair_result(RT_AMINMAX, lo, hi, out, &rule, x);
}

/* argmax / argmin(input, dim=None, keepdim=False) */
static PyObject *argext(PyObject *self, PyObject *args, PyObject *kw, bool is_max) {
    const char *name = is_max ? "argmax" : "argmin";
    PyObject *x, *out, *rest, *kwr, *dim = Py_None;
    int keepdim = 0;
    if (opargs_split(self, args, kw, name, "input", &out, &x, &rest, &kwr)) return NULL;
    static char *kwlist[] = {"dim", "keepdim", NULL};
    char fmt[32];
    snprintf(fmt, sizeof fmt, "|Op:%s", name);
    int ok = PyArg_ParseTupleAndKeywords(rest, kwr, fmt, kwlist, &dim, &keepdim);
    opargs_done(rest, kwr);
    if (!ok) return NULL;
    int64_t d = 0;
    if (dim != Py_None && opargs_int(dim, name, "dim", &d)) return NULL;
    if (cg_tensor_dtype(cgpy_t(x)) == CG_DTYPE_BOOL) {
        PyErr_Format(PyExc_RuntimeError, "%s(): does not support bool input", name);
        return NULL;
    }
    return finish(out, (is_max ? cg_argmax : cg_argmin)(cgpy_t(x), dim != Py_None, d, keepdim), name, x);
}
static PyObject *py_argmax(PyObject *self, PyObject *args, PyObject *kw) { return argext(self, args, kw, true); }
static PyObject *py_argmin(PyObject *self, PyObject *args, PyObject *kw) { return argext(self, args, kw, false); }

/* ---------------------------------------------------------------- var / std */

/* var(input, dim=None, *, correction=1, keepdim=False) / var(input, dim, unbiased, keepdim=False) /
 * var(input, unbiased). mode: 0 var, 1 std, 2 var_mean, 3 std_mean. */
static PyObject *var_std(PyObject *self, PyObject *args, PyObject *kw, int mode) {
    static const char *names[] = {"var", "std", "var_mean", "std_mean"};
    const char *name = names[mode];
    PyObject *x, *out, *rest, *kwr;
    if (opargs_split(self, args, kw, name, "input", mode < 2 ? &out : NULL, &x, &rest, &kwr)) return NULL;
    if (mode >= 2) out = NULL;
    PyObject *dim = Py_None, *unbiased = NULL, *correction = Py_None;
    int keepdim = 0, ok;
    Py_ssize_t n = PyTuple_GET_SIZE(rest);
    char fmt[48];
    if (n >= 1 && PyBool_Check(PyTuple_GET_ITEM(rest, 0))) { /* var(input, unbiased) */
        static char *kwlist[] = {"unbiased", NULL};
        snprintf(fmt, sizeof fmt, "O:%s", name);
        ok = PyArg_ParseTupleAndKeywords(rest, kwr, fmt, kwlist, &unbiased);
    } else {
        static char *kwlist[] = {"dim", "unbiased", "keepdim", "correction", NULL};
        snprintf(fmt, sizeof fmt, "|OOp$O:%s", name);
        ok = PyArg_ParseTupleAndKeywords(rest, kwr, fmt, kwlist, &dim, &unbiased, &keepdim, &correction);
    }
    opargs_done(rest, kwr);
    if (!ok) return NULL;
    double corr = 1;
    if (unbiased && correction != Py_None) {
        PyErr_Format(PyExc_TypeError, "%s(): cannot specify both unbiased and correction", name);
        return NULL;
    }
    if (unbiased) {
        int u = PyObject_IsTrue(unbiased);
        if (u < 0) return NULL;
        corr = u;
    } else if (correction != Py_None && cgpy_parse_double(correction, &corr, "correction")) {
        return NULL;
    }
    int nd;
    int64_t dims[CG_MAX_DIMS];
    if (opargs_dims(dim, name, &nd, dims)) return NULL;
    cg_tensor *t = cgpy_t(x);
    if (!cg_dtype_is_floating(cg_tensor_dtype(t)))
        return float_only_error("std and var only support floating point and complex dtypes.", t);
    cg_tensor *r = (mode & 1 ? cg_std : cg_var)(t, nd, dims, corr, keepdim);
    if (mode < 2) return finish_rule(out, r, name, CGPY_OUT_CAST, CGPY_OUT_ALIAS_OK, x);
    cg_tensor *m = r ? cg_mean(t, nd, dims, keepdim) : NULL;
    if (!m) {
        cg_tensor_release(r);
        return cgpy_raise();
    }
    PyObject *wr = cgpy_wrap(r), *wm = cgpy_wrap(m);
    if (!wr || !wm) {
        Py_XDECREF(wr);
        Py_XDECREF(wm);
        return NULL;
    }
    PyObject *res = PyTuple_Pack(2, wr, wm);
    Py_DECREF(wr);
    Py_DECREF(wm);
    return res;
}
static PyObject *py_var(PyObject *self, PyObject *args, PyObject *kw) { return var_std(self, args, kw, 0); }
static PyObject *py_std(PyObject *self, PyObject *args, PyObject *kw) { return var_std(self, args, kw, 1); }
static PyObject *py_var_mean(PyObject *self, PyObject *args, PyObject *kw) { return var_std(self, args, kw, 2); }
static PyObject *py_std_mean(PyObject *self, PyObject *args, PyObject *kw) { return var_std(self, args, kw, 3); }

/* ---------------------------------------------------------------- logsumexp, norm */

/* logsumexp(input, dim, keepdim=False): integer inputs compute in the default float dtype */
static PyObject *py_logsumexp(PyObject *self, PyObject *args, PyObject *kw) {
    PyObject *x, *out, *rest, *kwr, *dim;
    int keepdim = 0;
    if (opargs_split(self, args, kw, "logsumexp", "input", &out, &x, &rest, &kwr)) return NULL;
    static char *kwlist[] = {"dim", "keepdim", NULL};
    int ok = PyArg_ParseTupleAndKeywords(rest, kwr, "O|p:logsumexp", kwlist, &dim, &keepdim);
    opargs_done(rest, kwr);
    if (!ok) return NULL;
    int nd;
    int64_t dims[CG_MAX_DIMS];
    if (opargs_dims(dim, "logsumexp", &nd, dims)) return NULL;
    cg_tensor *t = cgpy_t(x);
    cg_tensor *c = opargs_cast(t, cg_dtype_is_floating(cg_tensor_dtype(t)) ? cg_tensor_dtype(t) : cgpy_default_dtype);
    if (!c) return NULL;
    cg_tensor *r = cg_logsumexp(c, nd, dims, keepdim);
    cg_tensor_release(c);
    return finish_rule(out, r, "logsumexp", CGPY_OUT_CAST, CGPY_OUT_ALIAS_OK, x);
}

/* norm(input, p='fro', dim=None, keepdim=False, out=None, dtype=None) */
static PyObject *py_norm(PyObject *self, PyObject *args, PyObject *kw) {
    PyObject *x, *out, *rest, *kwr, *p = Py_None, *dim = Py_None;
    int keepdim = 0, dt = -1;
    if (opargs_split(self, args, kw, "norm", "input", &out, &x, &rest, &kwr)) return NULL;
    static char *kwlist[] = {"p", "dim", "keepdim", "dtype", NULL};
    int ok = PyArg_ParseTupleAndKeywords(rest, kwr, "|OOpO&:norm", kwlist, &p, &dim, &keepdim, cgpy_dtype_conv, &dt);
    opargs_done(rest, kwr);
    if (!ok) return NULL;
    double pv = 2;
    if (PyUnicode_Check(p)) {
        if (PyUnicode_CompareWithASCIIString(p, "nuc") == 0) {
            PyErr_SetString(PyExc_NotImplementedError, "norm(): the nuclear norm (p='nuc') is not available in cgrad");
            return NULL;
        }
        if (PyUnicode_CompareWithASCIIString(p, "fro") != 0) {
            PyErr_Format(PyExc_RuntimeError, "norm(): invalid norm type %R (expected 'fro', 'nuc' or a number)", p);
            return NULL;
        }
    } else if (p != Py_None && cgpy_parse_double(p, &pv, "norm(): p")) {
        return NULL;
    }
    int nd;
    int64_t dims[CG_MAX_DIMS];
    if (opargs_dims(dim, "norm", &nd, dims)) return NULL;
    cg_tensor *t = cgpy_t(x);
    cg_dtype want = dt >= 0 ? (cg_dtype)dt : cg_tensor_dtype(t);
    if (!cg_dtype_is_floating(want) || !cg_dtype_is_floating(cg_tensor_dtype(t))) {
        PyErr_Format(PyExc_RuntimeError, "linalg.vector_norm: Expected a floating point or complex tensor as input. Got %s",
                     cg_dtype_name(cg_dtype_is_floating(cg_tensor_dtype(t)) ? want : cg_tensor_dtype(t)));
        return NULL;
    }
    cg_tensor *c = opargs_cast(t, want);
    if (!c) return NULL;
    cg_tensor *r = cg_norm(c, pv, nd, dims, keepdim);
    cg_tensor_release(c);
    return finish(out, r, "norm", x);
}

/* ---------------------------------------------------------------- all / any / count_nonzero */

/* all / any(input, dim=None, keepdim=False): bool result (uint8 for uint8 input) */
static PyObject *logical_reduce(PyObject *self, PyObject *args, PyObject *kw, const char *name, dims_fn fn) {
    red_args a;
    if (parse_reduce(self, args, kw, name, false, &a)) return NULL;
    cg_tensor *x = cgpy_t(a.x);
    cg_tensor *r = fn(x, a.nd, a.dims, a.keepdim);
    return finish(a.out, opargs_cast_result(r, cg_tensor_dtype(x) == CG_DTYPE_U8 ? CG_DTYPE_U8 : -1), name, a.x);
}
static PyObject *py_all(PyObject *self, PyObject *args, PyObject *kw) { return logical_reduce(self, args, kw, "all", cg_all); }
static PyObject *py_any(PyObject *self, PyObject *args, PyObject *kw) { return logical_reduce(self, args, kw, "any", cg_any); }

/* count_nonzero(input, dim=None) */
static PyObject *py_count_nonzero(PyObject *self, PyObject *args, PyObject *kw) {
    PyObject *x, *rest, *kwr, *dim = Py_None;
    if (opargs_split(self, args, kw, "count_nonzero", "input", NULL, &x, &rest, &kwr)) return NULL;
    static char *kwlist[] = {"dim", NULL};
    int ok = PyArg_ParseTupleAndKeywords(rest, kwr, "|O:count_nonzero", kwlist, &dim);
    opargs_done(rest, kwr);
    if (!ok) return NULL;
    int nd;
    int64_t dims[CG_MAX_DIMS];
    if (opargs_dims(dim, "count_nonzero", &nd, dims)) return NULL;
    return cgpy_result(cg_count_nonzero(cgpy_t(x), nd, dims));
}

/* ---------------------------------------------------------------- scans */

/* cumsum / cumprod(input, dim, *, dtype=None) */
static PyObject *scan(PyObject *self, PyObject *args, PyObject *kw, const char *name, cg_tensor *(*fn)(cg_tensor *, int64_t)) {
    PyObject *x, *out, *rest, *kwr, *dim;
    int dt = -1;
    if (opargs_split(self, args, kw, name, "input", &out, &x, &rest, &kwr)) return NULL;
    static char *kwlist[] = {"dim", "dtype", NULL};
    char fmt[32];
    snprintf(fmt, sizeof fmt, "O|$O&:%s", name);
    int ok = PyArg_ParseTupleAndKeywords(rest, kwr, fmt, kwlist, &dim, cgpy_dtype_conv, &dt);
    opargs_done(rest, kwr);
    int64_t d;
    if (!ok || opargs_int(dim, name, "dim", &d) || cgpy_out_dtype(out, &dt, NULL)) return NULL;
    if (dt == CG_DTYPE_BOOL) { /* as PyTorch's kernels */
        PyErr_Format(PyExc_NotImplementedError, "\"%s_out_cpu\" not implemented for 'Bool'", name);
        return NULL;
    }
    cg_tensor *t = cgpy_t(x);
    cg_tensor *c = opargs_cast(t, dt >= 0 ? (cg_dtype)dt : cg_tensor_dtype(t));
    if (!c) return NULL;
    cg_tensor *r = fn(c, d);
    cg_tensor_release(c);
    return finish_rule(out, opargs_cast_result(r, dt), name, CGPY_OUT_EXACT, CGPY_OUT_NO_PARTIAL, x);
}
static PyObject *py_cumsum(PyObject *self, PyObject *args, PyObject *kw) { return scan(self, args, kw, "cumsum", cg_cumsum); }
static PyObject *py_cumprod(PyObject *self, PyObject *args, PyObject *kw) { return scan(self, args, kw, "cumprod", cg_cumprod); }

/* cummax(input, dim) -> (values, indices) */
static PyObject *py_cummax(PyObject *self, PyObject *args, PyObject *kw) {
    PyObject *x, *out, *rest, *kwr, *dim;
    if (opargs_split(self, args, kw, "cummax", "input", &out, &x, &rest, &kwr)) return NULL;
    static char *kwlist[] = {"dim", NULL};
    int ok = PyArg_ParseTupleAndKeywords(rest, kwr, "O:cummax", kwlist, &dim);
    opargs_done(rest, kwr);
    int64_t d;
    if (!ok || opargs_int(dim, "cummax", "dim", &d)) return NULL;
    cg_tensor *v = NULL, *i = NULL;
    if (cg_cummax(cgpy_t(x), d, &v, &i)) v = i = NULL;
    static const cgpy_out_rule rule = {"cummax", CGPY_OUT_EXACT, CGPY_OUT_ALIAS_OK, 0};
    return pair_result(RT_CUMMAX, v, i, out, &rule, x);
}

/* ---------------------------------------------------------------- sorting */

/* sort(input, dim=-1, descending=False, *, stable=False) -> (values, indices) */
static PyObject *py_sort(PyObject *self, PyObject *args, PyObject *kw) {
    PyObject *x, *out, *rest, *kwr, *dim = NULL, *stable = Py_None;
    int descending = 0;
    if (opargs_split(self, args, kw, "sort", "input", &out, &x, &rest, &kwr)) return NULL;
    static char *kwlist[] = {"dim", "descending", "stable", NULL};
    int ok = PyArg_ParseTupleAndKeywords(rest, kwr, "|Op$O:sort", kwlist, &dim, &descending, &stable);
    opargs_done(rest, kwr);
    int64_t d = -1;
    if (!ok || (dim && opargs_int(dim, "sort", "dim", &d))) return NULL;
    int st = stable == Py_None ? 0 : PyObject_IsTrue(stable);
    if (st < 0) return NULL;
    cg_tensor *v = NULL, *i = NULL;
    if (cg_sort(cgpy_t(x), d, descending, st, &v, &i)) v = i = NULL;
    static const cgpy_out_rule rule = {"sort", CGPY_OUT_EXACT, CGPY_OUT_NO_PARTIAL, 0};
    return pair_result(RT_SORT, v, i, out, &rule, x);
}

/* msort(input) = sort(input, dim=0).values */
static PyObject *py_msort(PyObject *self, PyObject *args, PyObject *kw) {
    PyObject *x, *out, *rest, *kwr;
    if (opargs_split(self, args, kw, "msort", "input", &out, &x, &rest, &kwr)) return NULL;
    static char *kwlist[] = {NULL};
    int ok = PyArg_ParseTupleAndKeywords(rest, kwr, ":msort", kwlist);
    opargs_done(rest, kwr);
    if (!ok) return NULL;
    cg_tensor *v = NULL, *i = NULL;
    if (cg_sort(cgpy_t(x), 0, false, false, &v, &i)) return cgpy_raise();
    cg_tensor_release(i);
    return finish_rule(out, v, "msort", CGPY_OUT_EXACT, CGPY_OUT_NO_PARTIAL, x);
}

/* argsort(input, dim=-1, descending=False, stable=False) */
static PyObject *py_argsort(PyObject *self, PyObject *args, PyObject *kw) {
    PyObject *x, *out, *rest, *kwr, *dim = NULL;
    int descending = 0, stable = 0;
    if (opargs_split(self, args, kw, "argsort", "input", &out, &x, &rest, &kwr)) return NULL;
    static char *kwlist[] = {"dim", "descending", "stable", NULL};
    int ok = PyArg_ParseTupleAndKeywords(rest, kwr, "|Opp:argsort", kwlist, &dim, &descending, &stable);
    opargs_done(rest, kwr);
    int64_t d = -1;
    if (!ok || (dim && opargs_int(dim, "argsort", "dim", &d))) return NULL;
    /* PyTorch's argsort runs sort, whose values make its out= refuse an input that requires grad */
    static const cgpy_out_rule rule = {"argsort", CGPY_OUT_EXACT, CGPY_OUT_NO_PARTIAL, CGPY_OUT_GRAD_INPUTS};
    cg_tensor *in = cgpy_t(x);
    return cgpy_out_finish(out, cg_argsort(in, d, descending, stable), &rule, 1, &in);
}

/* topk(input, k, dim=-1, largest=True, sorted=True) -> (values, indices) */
static PyObject *py_topk(PyObject *self, PyObject *args, PyObject *kw) {
    PyObject *x, *out, *rest, *kwr, *k, *dim = NULL;
    int largest = 1, sorted = 1;
    if (opargs_split(self, args, kw, "topk", "input", &out, &x, &rest, &kwr)) return NULL;
    static char *kwlist[] = {"k", "dim", "largest", "sorted", NULL};
    int ok = PyArg_ParseTupleAndKeywords(rest, kwr, "O|Opp:topk", kwlist, &k, &dim, &largest, &sorted);
    opargs_done(rest, kwr);
    int64_t kv, d = -1;
    if (!ok || opargs_int(k, "topk", "k", &kv) || (dim && opargs_int(dim, "topk", "dim", &d))) return NULL;
    if (cg_tensor_dtype(cgpy_t(x)) == CG_DTYPE_BOOL) {
        PyErr_SetString(PyExc_RuntimeError, "topk does not support bool dtypes");
        return NULL;
    }
    cg_tensor *v = NULL, *i = NULL;
    if (cg_topk(cgpy_t(x), kv, d, largest, sorted, &v, &i)) v = i = NULL;
    static const cgpy_out_rule rule = {"topk", CGPY_OUT_EXACT, CGPY_OUT_NO_PARTIAL, 0};
    return pair_result(RT_TOPK, v, i, out, &rule, x);
}

/* ---------------------------------------------------------------- tables */

#define REDUCE_ENTRIES                                                                                             \
    CGPY_KW("sum", py_sum), CGPY_KW("mean", py_mean), CGPY_KW("nansum", py_nansum), CGPY_KW("nanmean", py_nanmean), \
        CGPY_KW("prod", py_prod), CGPY_KW("max", py_max), CGPY_KW("min", py_min), CGPY_KW("amax", py_amax),       \
        CGPY_KW("amin", py_amin), CGPY_KW("aminmax", py_aminmax), CGPY_KW("argmax", py_argmax),                   \
        CGPY_KW("argmin", py_argmin), CGPY_KW("var", py_var), CGPY_KW("std", py_std),                              \
        CGPY_KW("logsumexp", py_logsumexp), CGPY_KW("norm", py_norm), CGPY_KW("all", py_all),                      \
        CGPY_KW("any", py_any), CGPY_KW("count_nonzero", py_count_nonzero), CGPY_KW("cumsum", py_cumsum),          \
        CGPY_KW("cumprod", py_cumprod), CGPY_KW("cummax", py_cummax), CGPY_KW("sort", py_sort),                    \
        CGPY_KW("msort", py_msort), CGPY_KW("argsort", py_argsort), CGPY_KW("topk", py_topk)

PyMethodDef cgpy_reduce_methods[] = {REDUCE_ENTRIES, CGPY_TABLE_END};
PyMethodDef cgpy_reduce_functions[] = {
    REDUCE_ENTRIES,
    CGPY_KW("var_mean", py_var_mean),
    CGPY_KW("std_mean", py_std_mean),
    {"_return_types", py_return_types, METH_NOARGS, NULL},
    CGPY_TABLE_END,
};
