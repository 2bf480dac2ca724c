/* ops_reduce.c — bindings of reductions, scans and sorting (sum, mean, max,
 * var, norm, ..., cumsum, sort, topk) with PyTorch's dim / keepdim / dtype
 * arguments and overloads, as Tensor methods and module functions. Ops that
 * return (values, indices) return the named tuples of cgrad.return_types
 * (PyStructSequence types created on first use). */
#include "bind.h"

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

/* Parsed (input, dim=None, keepdim=False, *, dtype=None, out=None). */
typedef struct {
    PyObject *x, *out;
    int nd;
    const int64_t *dims;
    int has_dim, keepdim, dtype;
    cgpy_val v[5];
} red_args;

/* The spec of a dims reduction, with or without the keyword-only dtype= */
#define RED_SPEC(name) CGPY_SPEC(name, CGPY_INPUT_ARG, CGPY_ARG("dim", CGPY_A_DIMS), CGPY_ARG("keepdim", CGPY_A_BOOL), CGPY_OUT_ARG)
#define RED_SPEC_DT(name)                                                                                          \
    CGPY_SPEC(name, CGPY_INPUT_ARG, CGPY_ARG("dim", CGPY_A_DIMS), CGPY_ARG("keepdim", CGPY_A_BOOL), CGPY_ARG("dtype", CGPY_A_DTYPE, CGPY_KWONLY), \
            CGPY_OUT_ARG)

static int parse_reduce(cgpy_spec *spec, CGPY_FASTKW_ARGS, red_args *a) {
    if (cgpy_args_parse(spec, self, args, nargs, kwnames, a->v)) return -1;
    a->x = a->v[0].o;
    a->has_dim = cgpy_given(&a->v[1]);
    a->nd = a->v[1].n;
    a->dims = a->v[1].v;
    a->keepdim = a->v[2].b;
    int k = 3;
    a->dtype = spec->p[3].kind == CGPY_A_DTYPE ? (int)a->v[k++].dtype : -1;
    a->out = cgpy_opt(&a->v[k]);
    return 0;
}

/* ---------------------------------------------------------------- sum, mean, nansum, nanmean, prod */

/* sum(input, dim=None, keepdim=False, *, dtype=None) */
static PyObject *py_sum(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = RED_SPEC_DT("sum");
    red_args a;
    if (parse_reduce(&spec, self, args, nargs, kwnames, &a) || cgpy_out_dtype(a.out, &a.dtype, NULL)) return NULL;
    cg_tensor *r = cg_sum_dtype(cgpy_t(a.x), a.nd, a.dims, a.keepdim, (cg_dtype)a.dtype);
    return finish(a.out, cgpy_cast_result(r, a.dtype), "sum", a.x);
}

/* mean(input, dim=None, keepdim=False, *, dtype=None): floating dtypes only */
static PyObject *py_mean(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = RED_SPEC_DT("mean");
    red_args a;
    if (parse_reduce(&spec, self, args, nargs, kwnames, &a)) return NULL;
    cg_tensor *x = cgpy_t(a.x);
    if (a.dtype >= 0 && !cg_dtype_is_floating((cg_dtype)a.dtype)) {
        PyErr_Format(PyExc_RuntimeError, "mean(): could not infer output dtype. Optional dtype must be either a floating "
                     "point or complex dtype. Got: %s", cg_dtype_name((cg_dtype)a.dtype));
        return NULL;
    }
    if (a.dtype < 0 && !cg_dtype_is_floating(cg_tensor_dtype(x)))
        return float_only_error("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                                "complex dtype.", x);
    cg_tensor *c = cgpy_cast(x, a.dtype >= 0 ? (cg_dtype)a.dtype : cg_tensor_dtype(x));
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
static PyObject *py_nansum(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = RED_SPEC_DT("nansum");
    red_args a;
    if (parse_reduce(&spec, self, args, nargs, kwnames, &a) || nan_reduce_out_check(a.out, a.x) ||
        cgpy_out_dtype(a.out, &a.dtype, NULL))
        return NULL;
    cg_tensor *x = cgpy_t(a.x);
    cg_tensor *c = cgpy_cast(x, a.dtype >= 0 ? (cg_dtype)a.dtype : cg_tensor_dtype(x));
    if (!c) return NULL;
    cg_tensor *z = zero_nans(c);
    cg_tensor_release(c);
    cg_tensor *r = z ? cg_sum(z, a.nd, a.dims, a.keepdim) : NULL;
    cg_tensor_release(z);
    return finish(a.out, cgpy_cast_result(r, a.dtype), "nansum", a.x);
}

/* nanmean(input, dim=None, keepdim=False, *, dtype=None): sum of non-NaN / their count */
static PyObject *py_nanmean(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = RED_SPEC_DT("nanmean");
    red_args a;
    if (parse_reduce(&spec, self, args, nargs, kwnames, &a) || nan_reduce_out_check(a.out, a.x)) return NULL;
    cg_tensor *x = cgpy_t(a.x);
    if (!cg_dtype_is_floating(cg_tensor_dtype(x))) {
        PyErr_Format(PyExc_RuntimeError, "nanmean(): expected input to have floating point or complex dtype but got %s",
                     cg_dtype_name(cg_tensor_dtype(x)));
        return NULL;
    }
    cg_tensor *c = cgpy_cast(x, a.dtype >= 0 ? (cg_dtype)a.dtype : cg_tensor_dtype(x));
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
static PyObject *py_prod(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("prod", CGPY_INPUT_ARG, CGPY_ARG("dim", CGPY_A_OPT_INT), CGPY_ARG("keepdim",
                                      CGPY_A_BOOL),
                                      CGPY_ARG("dtype", CGPY_A_DTYPE, CGPY_KWONLY), CGPY_OUT_ARG);
    cgpy_val v[5];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *x = v[0].o, *out = cgpy_opt(&v[4]);
    int dt = (int)v[3].dtype, has_dim = cgpy_given(&v[1]);
    int64_t d = v[1].i;
    if (cgpy_out_dtype(out, &dt, NULL)) return NULL;
    cg_tensor *c = cgpy_cast(cgpy_t(x), dt >= 0 ? (cg_dtype)dt : cg_tensor_dtype(cgpy_t(x)));
    if (!c) return NULL;
    cg_tensor *r = cg_prod(c, has_dim, &d, has_dim && v[2].b);
    cg_tensor_release(c);
    return finish(out, cgpy_cast_result(r, dt), "prod", x);
}

/* ---------------------------------------------------------------- max / min and friends */

/* max(input) / max(input, dim, keepdim=False) -> (values, indices) / max(input, other) */
static PyObject *minmax(CGPY_FASTKW_ARGS, bool is_max, cgpy_spec *spec) {
    const char *name = spec->fname;
    cgpy_val v[5];
    if (cgpy_args_parse(spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *x = v[0].o, *out = cgpy_opt(&v[4]);
    PyObject *other = v[3].o ? v[3].o : (v[1].o && cgpy_is_tensor(v[1].o) ? v[1].o : NULL);
    if (!v[1].o && !v[2].o && !v[3].o) return finish(out, is_max ? cg_max(cgpy_t(x)) : cg_min(cgpy_t(x)), name, x);
    if (other) {
        if ((v[3].o && v[1].o) || v[2].o) {
            PyErr_Format(PyExc_TypeError, "%s(input, other) takes no further arguments", name);
            return NULL;
        }
        if (!cgpy_is_tensor(other)) {
            PyErr_Format(PyExc_TypeError, "%s(): argument 'other' must be Tensor, not %.100s", name,
                Py_TYPE(other)->tp_name);
            return NULL;
        }
        PyObject *ops[2] = {x, other};
        cg_tensor *t[2];
        cg_dtype dt;
        if (cgpy_promote_operands(2, ops, false, t, &dt)) return NULL;
        cg_tensor *r = is_max ? cg_maximum(t[0], t[1]) : cg_minimum(t[0], t[1]);
        cgpy_release_n(2, t);
        cgpy_out_rule rule = {name, CGPY_OUT_CAST, CGPY_OUT_NO_PARTIAL, 0}; /* elementwise, as maximum */
        cg_tensor *ins[2] = {cgpy_t(x), cgpy_t(other)};
        return cgpy_out_finish(out, r, &rule, 2, ins);
    }
    int64_t d;
    if (!v[1].o) {
        PyErr_Format(PyExc_TypeError, "%s() missing required argument 'dim'", name);
        return NULL;
    }
    int keepdim = v[2].o ? PyObject_IsTrue(v[2].o) : 0;
    if (keepdim < 0 || cgpy_arg_int(v[1].o, name, "dim", &d)) return NULL;
    cg_tensor *vals = NULL, *idx = NULL;
    cg_status st = (is_max ? cg_max_dim : cg_min_dim)(cgpy_t(x), d, keepdim, &vals, &idx);
    if (st) vals = idx = NULL;
    cgpy_out_rule rule = {name, CGPY_OUT_EXACT, CGPY_OUT_NO_PARTIAL, 0};
    return pair_result(is_max ? RT_MAX : RT_MIN, vals, idx, out, &rule, x);
}
#define MINMAX_SPEC(name)                                                                                     \
    CGPY_SPEC(name, CGPY_INPUT_ARG, CGPY_ARG("dim", CGPY_A_OBJ), CGPY_ARG("keepdim", CGPY_A_OBJ), CGPY_ARG("other", CGPY_A_OBJ, CGPY_KWONLY), \
            CGPY_OUT_ARG)
static PyObject *py_max(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = MINMAX_SPEC("max");
    return minmax(self, args, nargs, kwnames, true, &spec);
}
static PyObject *py_min(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = MINMAX_SPEC("min");
    return minmax(self, args, nargs, kwnames, false, &spec);
}

typedef cg_tensor *(*dims_fn)(cg_tensor *, int, const int64_t *, bool);

/* amax / amin(input, dim=(), keepdim=False) */
static PyObject *dims_reduce(CGPY_FASTKW_ARGS, cgpy_spec *spec, dims_fn fn) {
    red_args a;
    if (parse_reduce(spec, self, args, nargs, kwnames, &a)) return NULL;
    return finish(a.out, fn(cgpy_t(a.x), a.nd, a.dims, a.keepdim), spec->fname, a.x);
}
static PyObject *py_amax(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = RED_SPEC("amax");
    return dims_reduce(self, args, nargs, kwnames, &spec, cg_amax);
}
static PyObject *py_amin(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = RED_SPEC("amin");
    return dims_reduce(self, args, nargs, kwnames, &spec, cg_amin);
}

/* aminmax(input, *, dim=None, keepdim=False) -> (min, max) */
static PyObject *py_aminmax(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("aminmax", CGPY_INPUT_ARG, CGPY_ARG("dim", CGPY_A_OPT_INT, CGPY_KWONLY),
                                         CGPY_ARG("keepdim", CGPY_A_BOOL, CGPY_KWONLY), CGPY_OUT_ARG);
    cgpy_val v[4];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *x = v[0].o;
    int64_t d = v[1].i;
    int nd = cgpy_given(&v[1]), keepdim = v[2].b;
    cg_tensor *lo = cg_amin(cgpy_t(x), nd, &d, keepdim);
    cg_tensor *hi = lo ? cg_amax(cgpy_t(x), nd, &d, keepdim) : NULL;
    static const cgpy_out_rule rule = {"aminmax", CGPY_OUT_EXACT, CGPY_OUT_NO_PARTIAL, 0};
    return pair_result(RT_AMINMAX, lo, hi, cgpy_opt(&v[3]), &rule, x);
}

/* argmax / argmin(input, dim=None, keepdim=False) */
static PyObject *argext(CGPY_FASTKW_ARGS, bool is_max, cgpy_spec *spec) {
    const char *name = spec->fname;
    cgpy_val v[4];
    if (cgpy_args_parse(spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *x = v[0].o;
    if (cg_tensor_dtype(cgpy_t(x)) == CG_DTYPE_BOOL) {
        PyErr_Format(PyExc_RuntimeError, "%s(): does not support bool input", name);
        return NULL;
    }
    return finish(cgpy_opt(&v[3]), (is_max ? cg_argmax : cg_argmin)(cgpy_t(x), cgpy_given(&v[1]), v[1].i, v[2].b),
                  name, x);
}
#define ARGEXT_SPEC(name) CGPY_SPEC(name, CGPY_INPUT_ARG, CGPY_ARG("dim", CGPY_A_OPT_INT), CGPY_ARG("keepdim", CGPY_A_BOOL), CGPY_OUT_ARG)
static PyObject *py_argmax(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = ARGEXT_SPEC("argmax");
    return argext(self, args, nargs, kwnames, true, &spec);
}
static PyObject *py_argmin(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = ARGEXT_SPEC("argmin");
    return argext(self, args, nargs, kwnames, false, &spec);
}

/* ---------------------------------------------------------------- var / std */

/* var(input, dim=None, *, correction=1, keepdim=False) / var(input, dim, unbiased, keepdim=False) /
 * var(input, unbiased). mode: 0 var, 1 std, 2 var_mean, 3 std_mean (no out=). */
#define VAR_SPEC(name, ...)                                                                                        \
    CGPY_SPEC(name, CGPY_INPUT_ARG, CGPY_ARG("dim", CGPY_A_DIMS), CGPY_ARG("unbiased", CGPY_A_OBJ), CGPY_ARG("keepdim", CGPY_A_BOOL),            \
            CGPY_ARG("correction", CGPY_A_OBJ, CGPY_KWONLY), __VA_ARGS__)
#define VAR_UNBIASED_SPEC(name) CGPY_SPEC(name, CGPY_INPUT_ARG, CGPY_ARG("unbiased", CGPY_A_OBJ, CGPY_REQ))
static PyObject *var_std(CGPY_FASTKW_ARGS, int mode) {
    static cgpy_spec specs[4] = {VAR_SPEC("var", CGPY_OUT_ARG), VAR_SPEC("std", CGPY_OUT_ARG), VAR_SPEC("var_mean",
        CGPY_NO_ARG),
                                 VAR_SPEC("std_mean", CGPY_NO_ARG)};
    static cgpy_spec unbiased_specs[4] = {VAR_UNBIASED_SPEC("var"), VAR_UNBIASED_SPEC("std"),
                                          VAR_UNBIASED_SPEC("var_mean"), VAR_UNBIASED_SPEC("std_mean")};
    const char *name = specs[mode].fname;
    cgpy_val v[6];
    PyObject *out = NULL, *unbiased, *correction = NULL;
    int nd = 0, keepdim = 0;
    const int64_t *dims = v[1].v;
    PyObject *first = cgpy_is_method(self) ? (nargs >= 1 ? args[0] : NULL) : (nargs >= 2 ? args[1] : NULL);
    if (first && PyBool_Check(first)) { /* var(input, unbiased) */
        if (cgpy_args_parse(&unbiased_specs[mode], self, args, nargs, kwnames, v)) return NULL;
        unbiased = v[1].o;
    } else {
        if (cgpy_args_parse(&specs[mode], self, args, nargs, kwnames, v)) return NULL;
        nd = v[1].n;
        unbiased = v[2].o;
        keepdim = v[3].b;
        correction = cgpy_opt(&v[4]);
        if (mode < 2) out = cgpy_opt(&v[5]);
    }
    PyObject *x = v[0].o;
    double corr = 1;
    if (unbiased && correction) {
        PyErr_Format(PyExc_TypeError, "%s(): cannot specify both unbiased and correction", name);
        return NULL;
    }
    if (unbiased) {
        int u = PyObject_IsTrue(unbiased);
        if (u < 0) return NULL;
        corr = u;
    } else if (correction && cgpy_parse_double(correction, &corr, "correction")) {
        return NULL;
    }
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
static PyObject *py_var(CGPY_FASTKW_ARGS) { return var_std(self, args, nargs, kwnames, 0); }
static PyObject *py_std(CGPY_FASTKW_ARGS) { return var_std(self, args, nargs, kwnames, 1); }
static PyObject *py_var_mean(CGPY_FASTKW_ARGS) { return var_std(self, args, nargs, kwnames, 2); }
static PyObject *py_std_mean(CGPY_FASTKW_ARGS) { return var_std(self, args, nargs, kwnames, 3); }

/* ---------------------------------------------------------------- logsumexp, norm */

/* logsumexp(input, dim, keepdim=False): integer inputs compute in the default float dtype */
static PyObject *py_logsumexp(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("logsumexp", CGPY_INPUT_ARG, CGPY_ARG("dim", CGPY_A_DIMS, CGPY_REQ),
                                      CGPY_ARG("keepdim", CGPY_A_BOOL),
                                           CGPY_OUT_ARG);
    cgpy_val v[4];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *x = v[0].o;
    cg_tensor *t = cgpy_t(x);
    cg_tensor *c = cgpy_cast(t, cg_dtype_is_floating(cg_tensor_dtype(t)) ? cg_tensor_dtype(t) : cgpy_default_dtype);
    if (!c) return NULL;
    cg_tensor *r = cg_logsumexp(c, v[1].n, v[1].v, v[2].b);
    cg_tensor_release(c);
    return finish_rule(cgpy_opt(&v[3]), r, "logsumexp", CGPY_OUT_CAST, CGPY_OUT_ALIAS_OK, x);
}

/* norm(input, p='fro', dim=None, keepdim=False, out=None, dtype=None) */
static PyObject *py_norm(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("norm", CGPY_INPUT_ARG, CGPY_ARG("p", CGPY_A_OBJ), CGPY_ARG("dim", CGPY_A_DIMS),
                                      CGPY_ARG("keepdim", CGPY_A_BOOL),
                                      CGPY_ARG("dtype", CGPY_A_DTYPE), CGPY_OUT_ARG);
    cgpy_val v[6];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *x = v[0].o, *p = cgpy_opt(&v[1]);
    int dt = (int)v[4].dtype;
    double pv = 2;
    if (p && PyUnicode_Check(p)) {
        if (PyUnicode_CompareWithASCIIString(p, "nuc") == 0) {
            PyErr_SetString(PyExc_NotImplementedError, "norm(): the nuclear norm (p='nuc') is not available in cgrad");
            return NULL;
        }
        if (PyUnicode_CompareWithASCIIString(p, "fro") != 0) {
            PyErr_Format(PyExc_RuntimeError, "norm(): invalid norm type %R (expected 'fro', 'nuc' or a number)", p);
            return NULL;
        }
    } else if (p && cgpy_parse_double(p, &pv, "norm(): p")) {
        return NULL;
    }
    cg_tensor *t = cgpy_t(x);
    cg_dtype want = dt >= 0 ? (cg_dtype)dt : cg_tensor_dtype(t);
    if (!cg_dtype_is_floating(want) || !cg_dtype_is_floating(cg_tensor_dtype(t))) {
        PyErr_Format(PyExc_RuntimeError, "linalg.vector_norm: Expected a floating point or complex tensor as input. Got %s",
                     cg_dtype_name(cg_dtype_is_floating(cg_tensor_dtype(t)) ? want : cg_tensor_dtype(t)));
        return NULL;
    }
    cg_tensor *c = cgpy_cast(t, want);
    if (!c) return NULL;
    cg_tensor *r = cg_norm(c, pv, v[2].n, v[2].v, v[3].b);
    cg_tensor_release(c);
    return finish(cgpy_opt(&v[5]), r, "norm", x);
}

/* ---------------------------------------------------------------- all / any / count_nonzero */

/* all / any(input, dim=None, keepdim=False): bool result (uint8 for uint8 input) */
static PyObject *logical_reduce(CGPY_FASTKW_ARGS, cgpy_spec *spec, dims_fn fn) {
    red_args a;
    if (parse_reduce(spec, self, args, nargs, kwnames, &a)) return NULL;
    cg_tensor *x = cgpy_t(a.x);
    cg_tensor *r = fn(x, a.nd, a.dims, a.keepdim);
    return finish(a.out, cgpy_cast_result(r, cg_tensor_dtype(x) == CG_DTYPE_U8 ? CG_DTYPE_U8 : -1), spec->fname, a.x);
}
static PyObject *py_all(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = RED_SPEC("all");
    return logical_reduce(self, args, nargs, kwnames, &spec, cg_all);
}
static PyObject *py_any(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = RED_SPEC("any");
    return logical_reduce(self, args, nargs, kwnames, &spec, cg_any);
}

/* count_nonzero(input, dim=None) */
static PyObject *py_count_nonzero(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("count_nonzero", CGPY_INPUT_ARG, CGPY_ARG("dim", CGPY_A_DIMS));
    cgpy_val v[2];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    return cgpy_result(cg_count_nonzero(cgpy_t(v[0].o), v[1].n, v[1].v));
}

/* ---------------------------------------------------------------- scans */

/* cumsum / cumprod(input, dim, *, dtype=None) */
static PyObject *scan(CGPY_FASTKW_ARGS, cgpy_spec *spec, cg_tensor *(*fn)(cg_tensor *, int64_t)) {
    const char *name = spec->fname;
    cgpy_val v[4];
    if (cgpy_args_parse(spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *x = v[0].o, *out = cgpy_opt(&v[3]);
    int dt = (int)v[2].dtype;
    if (cgpy_out_dtype(out, &dt, NULL)) return NULL;
    if (dt == CG_DTYPE_BOOL) { /* as PyTorch's kernels */
        PyErr_Format(PyExc_NotImplementedError, "\"%s_out_cpu\" not implemented for 'Bool'", name);
        return NULL;
    }
    cg_tensor *t = cgpy_t(x);
    cg_tensor *c = cgpy_cast(t, dt >= 0 ? (cg_dtype)dt : cg_tensor_dtype(t));
    if (!c) return NULL;
    cg_tensor *r = fn(c, v[1].i);
    cg_tensor_release(c);
    return finish_rule(out, cgpy_cast_result(r, dt), name, CGPY_OUT_EXACT, CGPY_OUT_NO_PARTIAL, x);
}
#define SCAN_SPEC(name) CGPY_SPEC(name, CGPY_INPUT_ARG, CGPY_ARG("dim", CGPY_A_INT, CGPY_REQ), CGPY_ARG("dtype", CGPY_A_DTYPE, CGPY_KWONLY), CGPY_OUT_ARG)
static PyObject *py_cumsum(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = SCAN_SPEC("cumsum");
    return scan(self, args, nargs, kwnames, &spec, cg_cumsum);
}
static PyObject *py_cumprod(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = SCAN_SPEC("cumprod");
    return scan(self, args, nargs, kwnames, &spec, cg_cumprod);
}

/* cummax(input, dim) -> (values, indices) */
static PyObject *py_cummax(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("cummax", CGPY_INPUT_ARG, CGPY_ARG("dim", CGPY_A_INT, CGPY_REQ), CGPY_OUT_ARG);
    cgpy_val v[3];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    cg_tensor *vals = NULL, *idx = NULL;
    if (cg_cummax(cgpy_t(v[0].o), v[1].i, &vals, &idx)) vals = idx = NULL;
    static const cgpy_out_rule rule = {"cummax", CGPY_OUT_EXACT, CGPY_OUT_ALIAS_OK, 0};
    return pair_result(RT_CUMMAX, vals, idx, cgpy_opt(&v[2]), &rule, v[0].o);
}

/* ---------------------------------------------------------------- sorting */

/* sort(input, dim=-1, descending=False, *, stable=False) -> (values, indices) */
static PyObject *py_sort(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("sort", CGPY_INPUT_ARG, CGPY_ARG("dim", CGPY_A_INT, 0, -1),
                                      CGPY_ARG("descending", CGPY_A_BOOL),
                                      CGPY_ARG("stable", CGPY_A_BOOL, CGPY_KWONLY), CGPY_OUT_ARG);
    cgpy_val v[5];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    cg_tensor *vals = NULL, *idx = NULL;
    if (cg_sort(cgpy_t(v[0].o), v[1].i, v[2].b, v[3].b, &vals, &idx)) vals = idx = NULL;
    static const cgpy_out_rule rule = {"sort", CGPY_OUT_EXACT, CGPY_OUT_NO_PARTIAL, 0};
    return pair_result(RT_SORT, vals, idx, cgpy_opt(&v[4]), &rule, v[0].o);
}

/* msort(input) = sort(input, dim=0).values */
static PyObject *py_msort(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("msort", CGPY_INPUT_ARG, CGPY_OUT_ARG);
    cgpy_val v[2];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    cg_tensor *vals = NULL, *idx = NULL;
    if (cg_sort(cgpy_t(v[0].o), 0, false, false, &vals, &idx)) return cgpy_raise();
    cg_tensor_release(idx);
    return finish_rule(cgpy_opt(&v[1]), vals, "msort", CGPY_OUT_EXACT, CGPY_OUT_NO_PARTIAL, v[0].o);
}

/* argsort(input, dim=-1, descending=False, stable=False) */
static PyObject *py_argsort(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("argsort", CGPY_INPUT_ARG, CGPY_ARG("dim", CGPY_A_INT, 0, -1),
                                      CGPY_ARG("descending", CGPY_A_BOOL),
                                         CGPY_ARG("stable", CGPY_A_BOOL), CGPY_OUT_ARG);
    cgpy_val v[5];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    /* PyTorch's argsort runs sort, whose values make its out= refuse an input that requires grad */
    static const cgpy_out_rule rule = {"argsort", CGPY_OUT_EXACT, CGPY_OUT_NO_PARTIAL, CGPY_OUT_GRAD_INPUTS};
    cg_tensor *in = v[0].t;
    return cgpy_out_finish(cgpy_opt(&v[4]), cg_argsort(in, v[1].i, v[2].b, v[3].b), &rule, 1, &in);
}

/* topk(input, k, dim=-1, largest=True, sorted=True) -> (values, indices) */
static PyObject *py_topk(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("topk", CGPY_INPUT_ARG, CGPY_ARG("k", CGPY_A_INT, CGPY_REQ), CGPY_ARG("dim",
                                      CGPY_A_INT, 0, -1),
                                      CGPY_ARG("largest", CGPY_A_BOOL, 0, 1), CGPY_ARG("sorted", CGPY_A_BOOL, 0, 1),
                                          CGPY_OUT_ARG);
    cgpy_val v[6];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *x = v[0].o;
    if (cg_tensor_dtype(cgpy_t(x)) == CG_DTYPE_BOOL) {
        PyErr_SetString(PyExc_RuntimeError, "topk does not support bool dtypes");
        return NULL;
    }
    cg_tensor *vals = NULL, *idx = NULL;
    if (cg_topk(cgpy_t(x), v[1].i, v[2].i, v[3].b, v[4].b, &vals, &idx)) vals = idx = NULL;
    static const cgpy_out_rule rule = {"topk", CGPY_OUT_EXACT, CGPY_OUT_NO_PARTIAL, 0};
    return pair_result(RT_TOPK, vals, idx, cgpy_opt(&v[5]), &rule, x);
}

/* ---------------------------------------------------------------- tables */

#define REDUCE_ENTRIES                                                                                             \
    CGPY_FASTKW("sum", py_sum), CGPY_FASTKW("mean", py_mean), CGPY_FASTKW("nansum", py_nansum), CGPY_FASTKW("nanmean", py_nanmean), \
        CGPY_FASTKW("prod", py_prod), CGPY_FASTKW("max", py_max), CGPY_FASTKW("min", py_min), CGPY_FASTKW("amax", py_amax),       \
        CGPY_FASTKW("amin", py_amin), CGPY_FASTKW("aminmax", py_aminmax), CGPY_FASTKW("argmax", py_argmax),                   \
        CGPY_FASTKW("argmin", py_argmin), CGPY_FASTKW("var", py_var), CGPY_FASTKW("std", py_std),                              \
        CGPY_FASTKW("logsumexp", py_logsumexp), CGPY_FASTKW("norm", py_norm), CGPY_FASTKW("all", py_all),                      \
        CGPY_FASTKW("any", py_any), CGPY_FASTKW("count_nonzero", py_count_nonzero), CGPY_FASTKW("cumsum", py_cumsum),          \
        CGPY_FASTKW("cumprod", py_cumprod), CGPY_FASTKW("cummax", py_cummax), CGPY_FASTKW("sort", py_sort),                    \
        CGPY_FASTKW("msort", py_msort), CGPY_FASTKW("argsort", py_argsort), CGPY_FASTKW("topk", py_topk)

PyMethodDef cgpy_reduce_methods[] = {REDUCE_ENTRIES, CGPY_TABLE_END};
PyMethodDef cgpy_reduce_functions[] = {
    REDUCE_ENTRIES,
    CGPY_FASTKW("var_mean", py_var_mean),
    CGPY_FASTKW("std_mean", py_std_mean),
    {"_return_types", py_return_types, METH_NOARGS, NULL},
    CGPY_TABLE_END,
};
