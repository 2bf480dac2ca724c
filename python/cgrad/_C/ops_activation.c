/* ops_activation.c — bindings of the activations with parameters (celu and
 * the private `_<name>` functions cgrad.nn.functional builds on), softmax /
 * log_softmax, and the n-ary elementwise ops: where, lerp, addcmul, addcdiv,
 * clamp / clip / clamp_min / clamp_max and nan_to_num, with their in-place
 * forms. Entries are appended to the math tables (ops_math.h). */
#include "ops_math.h"

#include <float.h>
#include <math.h>
#include <string.h>

#define FASTKW_ARGS PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw
#define PARSE(fname, names, npos, nreq, v)                                                    \
    (cgpy_parse_fastkw(self, args, nargs, kw, fname, names, npos, nreq, v) ||                 \
     cgpy_need_tensor(v[0], fname, "input"))

static int opt_double(PyObject *o, double *v, const char *what) { return o && o != Py_None ? cgpy_parse_double(o, v, what) : 0; }

/* ================================================================ activations with parameters */

/* f(input, <one double parameter>) */
typedef cg_tensor *(*act1_fn)(cg_tensor *, double);
static PyObject *act1(FASTKW_ARGS, act1_fn fn, const char *fname, const char *pname, double dflt) {
    const char *const names[] = {"input", pname, NULL};
    PyObject *v[2];
    double p = dflt;
    if (PARSE(fname, names, 2, 1, v) || opt_double(v[1], &p, pname)) return NULL;
    return cgpy_result(fn(cgpy_t(v[0]), p));
}

PyObject *cgpy_act_celu(FASTKW_ARGS) { return act1(self, args, nargs, kw, cg_celu, "celu", "alpha", 1.0); }
PyObject *cgpy_act_celu_(FASTKW_ARGS) { return cgpy_inplace_via("celu", cgpy_act_celu, self, args, nargs, kw); }
PyObject *cgpy_act__elu(FASTKW_ARGS) { return act1(self, args, nargs, kw, cg_elu, "elu", "alpha", 1.0); }
PyObject *cgpy_act__elu_(FASTKW_ARGS) { return cgpy_inplace_via("elu", cgpy_act__elu, self, args, nargs, kw); }
PyObject *cgpy_act__leaky_relu(FASTKW_ARGS) {
    return act1(self, args, nargs, kw, cg_leaky_relu, "leaky_relu", "negative_slope", 0.01);
}
PyObject *cgpy_act__leaky_relu_(FASTKW_ARGS) {
    static const char *const names[] = {"input", "negative_slope", NULL};
    PyObject *v[2];
    double p = 0.01;
    if (PARSE("leaky_relu_", names, 2, 1, v) || opt_double(v[1], &p, "negative_slope")) return NULL;
    return cgpy_inplace_result(v[0], cg_leaky_relu_(cgpy_t(v[0]), p));
}

/* parameter-free activations: f(input) and the engine's in-place by name */
static PyObject *act0(FASTKW_ARGS, cg_tensor *(*fn)(cg_tensor *), const char *fname) {
    static const char *const names[] = {"input", NULL};
    PyObject *v[1];
    if (PARSE(fname, names, 1, 1, v)) return NULL;
    return cgpy_result(fn(cgpy_t(v[0])));
}
static PyObject *act0_(FASTKW_ARGS, const char *fname) {
    static const char *const names[] = {"input", NULL};
    PyObject *v[1];
    if (PARSE(fname, names, 1, 1, v)) return NULL;
    cg_tensor *t = cgpy_t(v[0]);
    if (cgpy_check_cast(cg_dtype_is_floating(cg_tensor_dtype(t)) ? cg_tensor_dtype(t) : cgpy_default_dtype,
                        cg_tensor_dtype(t)))
        return NULL;
    return cgpy_inplace_result(v[0], cg_unary_(fname, t));
}
#define ACT0(name)                                                                            \
    PyObject *cgpy_act__##name(FASTKW_ARGS) { return act0(self, args, nargs, kw, cg_##name, #name); }
#define ACT0_IP(name)                                                                         \
    ACT0(name)                                                                                \
    PyObject *cgpy_act__##name##_(FASTKW_ARGS) { return act0_(self, args, nargs, kw, #name); }
ACT0_IP(relu6)
ACT0_IP(silu)
ACT0_IP(mish)
ACT0_IP(hardsigmoid)
ACT0_IP(hardswish)
ACT0(softsign)
ACT0(logsigmoid)

/* gelu(input, approximate='none') */
PyObject *cgpy_act__gelu(FASTKW_ARGS) {
    static const char *const names[] = {"input", "approximate", NULL};
    PyObject *v[2];
    if (PARSE("gelu", names, 2, 1, v)) return NULL;
    bool tanh_approx = false;
    if (v[1]) {
        if (PyUnicode_Check(v[1]) && !PyUnicode_CompareWithASCIIString(v[1], "tanh")) tanh_approx = true;
        else if (!PyUnicode_Check(v[1]) || PyUnicode_CompareWithASCIIString(v[1], "none")) {
            PyErr_Format(PyExc_RuntimeError, "gelu: approximate argument must be either none or tanh, not %R", v[1]);
            return NULL;
        }
    }
    return cgpy_result(cg_gelu(cgpy_t(v[0]), tanh_approx));
}

/* softplus(input, beta=1.0, threshold=20.0) */
PyObject *cgpy_act__softplus(FASTKW_ARGS) {
    static const char *const names[] = {"input", "beta", "threshold", NULL};
    PyObject *v[3];
    double beta = 1.0, thr = 20.0;
    if (PARSE("softplus", names, 3, 1, v) || opt_double(v[1], &beta, "beta") || opt_double(v[2], &thr, "threshold"))
        return NULL;
    return cgpy_result(cg_softplus(cgpy_t(v[0]), beta, thr));
}

/* hardtanh(input, min_val=-1.0, max_val=1.0) */
PyObject *cgpy_act__hardtanh(FASTKW_ARGS) {
    static const char *const names[] = {"input", "min_val", "max_val", NULL};
    PyObject *v[3];
    double lo = -1.0, hi = 1.0;
    if (PARSE("hardtanh", names, 3, 1, v) || opt_double(v[1], &lo, "min_val") || opt_double(v[2], &hi, "max_val"))
        return NULL;
    return cgpy_result(cg_hardtanh(cgpy_t(v[0]), lo, hi));
}
PyObject *cgpy_act__hardtanh_(FASTKW_ARGS) { return cgpy_inplace_via("hardtanh", cgpy_act__hardtanh, self, args, nargs, kw); }

/* ================================================================ softmax / log_softmax(input, dim, dtype=None) */

static PyObject *softmax_common(FASTKW_ARGS, cg_tensor *(*fn)(cg_tensor *, int64_t), const char *fname) {
    static const char *const names[] = {"input", "dim", "dtype", NULL};
    PyObject *v[3];
    int64_t dim;
    int dt = -1;
    if (PARSE(fname, names, 3, 2, v) || cgpy_parse_int(v[1], &dim, "softmax(): argument 'dim'")) return NULL;
    if (v[2] && v[2] != Py_None && !cgpy_dtype_conv(v[2], &dt)) return NULL;
    cg_tensor *x = cgpy_t(v[0]);
    if (dt < 0 || (cg_dtype)dt == cg_tensor_dtype(x)) return cgpy_result(fn(x, dim));
    cg_tensor *c = cg_to_dtype(x, (cg_dtype)dt);
    if (!c) return cgpy_raise();
    cg_tensor *r = fn(c, dim);
    cg_tensor_release(c);
    return cgpy_result(r);
}
PyObject *cgpy_act_softmax(FASTKW_ARGS) { return softmax_common(self, args, nargs, kw, cg_softmax, "softmax"); }
PyObject *cgpy_act_log_softmax(FASTKW_ARGS) {
    return softmax_common(self, args, nargs, kw, cg_log_softmax, "log_softmax");
}

/* ================================================================ where */

/* where(condition): the indices of its nonzero elements, one tensor per dim */
static PyObject *where_indices(cg_tensor *cond) {
    cg_tensor *nz = cg_nonzero(cond);
    if (!nz) return cgpy_raise();
    int nd = cg_tensor_ndim(cond);
    PyObject *tup = PyTuple_New(nd);
    for (int d = 0; tup && d < nd; d++) {
        PyObject *col = cgpy_wrap(cg_select(nz, 1, d));
        if (!col) Py_CLEAR(tup);
        else PyTuple_SET_ITEM(tup, d, col);
    }
    cg_tensor_release(nz);
    return tup;
}

/* where(condition, input, other) / input.where(condition, other) */
PyObject *cgpy_act_where(FASTKW_ARGS) {
    PyObject *v[4] = {NULL, NULL, NULL, NULL}; /* condition, input, other, out */
    if (cgpy_is_method(self)) {
        static const char *const names[] = {"input", "condition", "other", NULL};
        PyObject *m[3];
        if (cgpy_parse_fastkw(self, args, nargs, kw, "where", names, 3, 3, m)) return NULL;
        v[0] = m[1], v[1] = m[0], v[2] = m[2];
    } else {
        static const char *const names[] = {"condition", "input", "other", "out", NULL};
        if (cgpy_parse_fastkw(self, args, nargs, kw, "where", names, 3, 1, v)) return NULL;
    }
    if (cgpy_need_tensor(v[0], "where", "condition")) return NULL;
    cg_tensor *c = cgpy_t(v[0]);
    if (!v[1] && !v[2]) return where_indices(c);
    if (!v[1] || !v[2]) {
        PyErr_SetString(PyExc_TypeError, "where() expects (condition) or (condition, input, other)");
        return NULL;
    }
    if (cg_tensor_dtype(c) != CG_DTYPE_BOOL) {
        PyErr_Format(PyExc_RuntimeError, "where expected condition to be a boolean tensor, but got a tensor with dtype %s",
                     cg_dtype_name(cg_tensor_dtype(c)));
        return NULL;
    }
    cg_dtype dt;
    if (cgpy_result_type(2, &v[1], &dt)) return NULL;
    for (int i = 1; i < 3; i++) /* a number operand must fit the result dtype, as in PyTorch */
        if (cgpy_is_scalar(v[i]) && cgpy_check_fits(v[i], dt, true)) return NULL;
    cg_tensor *t[2];
    if (cgpy_promote_operands(2, &v[1], false, t, &dt)) return NULL;
    cg_tensor *r = cg_where(c, t[0], t[1]);
    cgpy_release_n(2, t);
    return cgpy_elementwise_out(v[3], r, "where", CGPY_OUT_EXACT, 3, v);
}

/* ================================================================ lerp(input, end, weight) */

PyObject *cgpy_act_lerp(FASTKW_ARGS) {
    static const char *const names[] = {"input", "end", "weight", "out", NULL};
    PyObject *v[4];
    if (PARSE("lerp", names, 3, 3, v) || cgpy_need_tensor(v[1], "lerp", "end")) return NULL;
    cg_tensor *x = cgpy_t(v[0]), *e = cgpy_t(v[1]);
    if (cg_tensor_dtype(x) != cg_tensor_dtype(e)) {
        PyErr_Format(PyExc_RuntimeError, "lerp: expected dtype %s for `end` but got dtype %s",
                     cg_dtype_name(cg_tensor_dtype(x)), cg_dtype_name(cg_tensor_dtype(e)));
        return NULL;
    }
    if (!cgpy_is_tensor(v[2]) && !cgpy_is_scalar(v[2])) return cgpy_need_tensor(v[2], "lerp", "weight"), NULL;
    cg_tensor *w = cgpy_like_operand(v[2], x);
    if (!w) return NULL;
    cg_tensor *r = cg_lerp(x, e, w);
    cg_tensor_release(w);
    return cgpy_elementwise_out(v[3], r, "lerp", CGPY_OUT_CAST, 3, v);
}
PyObject *cgpy_act_lerp_(FASTKW_ARGS) { return cgpy_inplace_via("lerp", cgpy_act_lerp, self, args, nargs, kw); }

/* ================================================================ addcmul / addcdiv(input, tensor1, tensor2, *, value=1) */

static PyObject *addc(FASTKW_ARGS, bool is_div) {
    const char *fname = is_div ? "addcdiv" : "addcmul";
    static const char *const names[] = {"input", "tensor1", "tensor2", "value", "out", NULL};
    PyObject *v[5];
    double value = 1.0;
    if (PARSE(fname, names, 3, 3, v) || cgpy_need_tensor(v[1], fname, "tensor1") ||
        cgpy_need_tensor(v[2], fname, "tensor2") || opt_double(v[3], &value, "value"))
        return NULL;
    cg_tensor *t[3];
    cg_dtype dt;
    if (cgpy_promote_operands(3, v, false, t, &dt)) return NULL;
    if (is_div && !cg_dtype_is_floating(cg_tensor_dtype(t[1])) && !cg_dtype_is_floating(cg_tensor_dtype(cgpy_t(v[2])))) {
        cgpy_release_n(3, t);
        PyErr_SetString(PyExc_RuntimeError, "Integer division with addcdiv is no longer supported; use floating-point "
                                            "tensor1 / tensor2 (or torch.floor_divide)");
        return NULL;
    }
    cg_tensor *r = is_div ? cg_addcdiv(t[0], t[1], t[2], value) : cg_addcmul(t[0], t[1], t[2], value);
    cgpy_release_n(3, t);
    return cgpy_elementwise_out(v[4], r, fname, CGPY_OUT_CAST, 3, v);
}
PyObject *cgpy_act_addcmul(FASTKW_ARGS) { return addc(self, args, nargs, kw, false); }
PyObject *cgpy_act_addcdiv(FASTKW_ARGS) { return addc(self, args, nargs, kw, true); }
PyObject *cgpy_act_addcmul_(FASTKW_ARGS) { return cgpy_inplace_via("addcmul", cgpy_act_addcmul, self, args, nargs, kw); }
PyObject *cgpy_act_addcdiv_(FASTKW_ARGS) { return cgpy_inplace_via("addcdiv", cgpy_act_addcdiv, self, args, nargs, kw); }

/* ================================================================ clamp family */

static int is_none(PyObject *o) { return !o || o == Py_None; }
static int is_tensor_arg(PyObject *o) { return o && cgpy_is_tensor(o); }

/* clamp(x, lo, hi) with PyTorch's promotion over x and the bounds (numbers or tensors, None = no bound) */
static cg_tensor *clamp_apply(PyObject *x, PyObject *lo, PyObject *hi, const char *fname) {
    if (is_none(lo) && is_none(hi)) {
        PyErr_Format(PyExc_RuntimeError, "%s: At least one of 'min' or 'max' must not be None", fname);
        return NULL;
    }
    PyObject *ops[3] = {x, NULL, NULL};
    int n = 1;
    bool tensors = false;
    PyObject *b[2] = {lo, hi};
    for (int i = 0; i < 2; i++) {
        if (is_none(b[i])) continue;
        if (!cgpy_is_tensor(b[i]) && !cgpy_is_scalar(b[i])) {
            PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be a Number or a Tensor, not %.100s", fname,
                         i ? "max" : "min", Py_TYPE(b[i])->tp_name);
            return NULL;
        }
        tensors |= cgpy_is_tensor(b[i]) != 0;
        ops[n++] = b[i];
    }
    cg_dtype dt;
    if (cgpy_result_type(n, ops, &dt)) return NULL;
    cg_tensor *xt = cg_to_dtype(cgpy_t(x), dt);
    if (!xt) return cgpy_raise(), NULL;
    cg_tensor *r = NULL;
    if (!tensors) {
        double bv[2] = {0, 0};
        for (int i = 0; i < 2; i++)
            if (!is_none(b[i]) && (cgpy_check_fits(b[i], dt, true) || cgpy_parse_double(b[i], &bv[i], i ? "max" : "min")))
                goto done;
        r = cg_clamp_scalar(xt, is_none(lo) ? NULL : &bv[0], is_none(hi) ? NULL : &bv[1]);
    } else {
        cg_tensor *bt[2] = {NULL, NULL};
        for (int i = 0; i < 2; i++)
            if (!is_none(b[i]) && !(bt[i] = cgpy_like_operand(b[i], xt))) {
                if (bt[0]) cg_tensor_release(bt[0]);
                goto done;
            }
        if (dt != CG_DTYPE_BOOL) {
            r = cg_clamp(xt, bt[0], bt[1]);
        } else if (bt[0] && bt[1]) { /* PyTorch: clamp_min / clamp_max kernels take bool, clamp's does not */
            PyErr_SetString(PyExc_NotImplementedError, "\"clamp_cpu\" not implemented for 'Bool'");
        } else { /* one bool tensor bound: max(x, lo) or min(x, hi), as PyTorch */
            cg_tensor *m = bt[0] ? cg_maximum(xt, bt[0]) : (cg_tensor_retain(xt), xt);
            r = m && bt[1] ? cg_minimum(m, bt[1]) : (m ? (cg_tensor_retain(m), m) : NULL);
            cg_tensor_release(m);
        }
        for (int i = 0; i < 2; i++)
            if (bt[i]) cg_tensor_release(bt[i]);
    }
    if (!r && !PyErr_Occurred()) cgpy_raise();
done:
    cg_tensor_release(xt);
    return r;
}

static PyObject *clamp_common(FASTKW_ARGS, int which, const char *fname) {
    /* which: 0 clamp(input, min=None, max=None), 1 clamp_min(input, min), 2 clamp_max(input, max) */
    static const char *const n0[] = {"input", "min", "max", "out", NULL};
    static const char *const n1[] = {"input", "min", "out", NULL};
    static const char *const n2[] = {"input", "max", "out", NULL};
    PyObject *v[4];
    /* PyTorch asks for the input's dtype exactly with number bounds, its cast rule with tensor bounds */
    if (which == 0) {
        if (PARSE(fname, n0, 3, 1, v)) return NULL;
        int rule = is_tensor_arg(v[1]) || is_tensor_arg(v[2]) ? CGPY_OUT_CAST : CGPY_OUT_EXACT;
        return cgpy_elementwise_out(v[3], clamp_apply(v[0], v[1], v[2], fname), fname, rule, 3, v);
    }
    if (PARSE(fname, which == 1 ? n1 : n2, 2, 2, v)) return NULL;
    int rule = is_tensor_arg(v[1]) ? CGPY_OUT_CAST : CGPY_OUT_EXACT;
    return cgpy_elementwise_out(v[2], which == 1 ? clamp_apply(v[0], v[1], NULL, fname) : clamp_apply(v[0], NULL, v[1],
        fname), fname,
                  rule, 2, v);
}
PyObject *cgpy_act_clamp(FASTKW_ARGS) { return clamp_common(self, args, nargs, kw, 0, "clamp"); }
PyObject *cgpy_act_clip(FASTKW_ARGS) { return clamp_common(self, args, nargs, kw, 0, "clip"); }
PyObject *cgpy_act_clamp_min(FASTKW_ARGS) { return clamp_common(self, args, nargs, kw, 1, "clamp_min"); }
PyObject *cgpy_act_clamp_max(FASTKW_ARGS) { return clamp_common(self, args, nargs, kw, 2, "clamp_max"); }

/* x.clamp_(min, max): the engine's in-place clamp for number bounds, a copy otherwise */
static PyObject *clamp_inplace(FASTKW_ARGS, int which, cgpy_fastkw_fn outofplace, const char *fname) {
    static const char *const n0[] = {"input", "min", "max", NULL};
    static const char *const n1[] = {"input", "min", NULL};
    static const char *const n2[] = {"input", "max", NULL};
    PyObject *v[3] = {NULL, NULL, NULL};
    if (PARSE(fname, which == 0 ? n0 : which == 1 ? n1 : n2, which == 0 ? 3 : 2, which == 0 ? 1 : 2, v)) return NULL;
    PyObject *lo = which == 2 ? NULL : v[1], *hi = which == 0 ? v[2] : which == 2 ? v[1] : NULL;
    char base[32]; /* fname without its trailing '_' */
    snprintf(base, sizeof base, "%.*s", (int)strlen(fname) - 1, fname);
    if ((!is_none(lo) && !cgpy_is_scalar(lo)) || (!is_none(hi) && !cgpy_is_scalar(hi)) || (is_none(lo) && is_none(hi)))
        return cgpy_inplace_via(base, outofplace, self, args, nargs, kw);
    cg_tensor *t = cgpy_t(v[0]);
    PyObject *ops[3] = {v[0], is_none(lo) ? hi : lo, hi};
    cg_dtype dt;
    if (cgpy_result_type(!is_none(lo) && !is_none(hi) ? 3 : 2, ops, &dt) || cgpy_check_cast(dt, cg_tensor_dtype(t)))
        return NULL;
    double bv[2] = {0, 0};
    cg_dtype tdt = cg_tensor_dtype(t);
    if ((!is_none(lo) && (cgpy_check_fits(lo, tdt, true) || cgpy_parse_double(lo, &bv[0], "min"))) ||
        (!is_none(hi) && (cgpy_check_fits(hi, tdt, true) || cgpy_parse_double(hi, &bv[1], "max"))))
        return NULL;
    return cgpy_inplace_result(v[0], cg_clamp_(t, is_none(lo) ? NULL : &bv[0], is_none(hi) ? NULL : &bv[1]));
}
PyObject *cgpy_act_clamp_(FASTKW_ARGS) { return clamp_inplace(self, args, nargs, kw, 0, cgpy_act_clamp, "clamp_"); }
PyObject *cgpy_act_clip_(FASTKW_ARGS) { return clamp_inplace(self, args, nargs, kw, 0, cgpy_act_clip, "clip_"); }
PyObject *cgpy_act_clamp_min_(FASTKW_ARGS) {
    return clamp_inplace(self, args, nargs, kw, 1, cgpy_act_clamp_min, "clamp_min_");
}
PyObject *cgpy_act_clamp_max_(FASTKW_ARGS) {
    return clamp_inplace(self, args, nargs, kw, 2, cgpy_act_clamp_max, "clamp_max_");
}

/* ================================================================ nan_to_num(input, nan=0.0, posinf=None, neginf=None) */

static double dtype_max(cg_dtype dt) {
    switch (dt) {
    case CG_DTYPE_F16: return 65504.0;
    case CG_DTYPE_BF16: return 3.3895313892515355e38;
    case CG_DTYPE_F32: return FLT_MAX;
    default: return DBL_MAX;
    }
}

PyObject *cgpy_act_nan_to_num(FASTKW_ARGS) {
    static const char *const names[] = {"input", "nan", "posinf", "neginf", "out", NULL};
    PyObject *v[5];
    if (PARSE("nan_to_num", names, 4, 1, v)) return NULL;
    cg_tensor *x = cgpy_t(v[0]);
    double big = dtype_max(cg_tensor_dtype(x)), nan = 0.0, pinf = big, ninf = -big;
    if (opt_double(v[1], &nan, "nan") || opt_double(v[2], &pinf, "posinf") || opt_double(v[3], &ninf, "neginf"))
        return NULL;
    return cgpy_elementwise_out(v[4], cg_nan_to_num(x, nan, pinf, ninf), "nan_to_num", CGPY_OUT_EXACT, 1, v);
}
PyObject *cgpy_act_nan_to_num_(FASTKW_ARGS) { return cgpy_inplace_via("nan_to_num", cgpy_act_nan_to_num, self, args, nargs, kw); }
