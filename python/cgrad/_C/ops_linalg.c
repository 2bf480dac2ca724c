/* ops_linalg.c — bindings of the matrix products (matmul, mm, bmm, mv, dot,
 * vdot, inner, outer/ger, addmm, baddbmm, einsum) as Tensor methods, in-place
 * methods, the @ operator and module functions, and the layers' products:
 * the private `_linear` (nn.functional.linear) and `bilinear`. As in PyTorch, the products
 * need operands of one dtype (RuntimeError otherwise: no promotion), except
 * outer, which PyTorch computes as a broadcast multiply and so promotes. */
#include "ops_math.h"

#include <string.h>

/* PyTorch's dtype check for products: same dtype, RuntimeError otherwise.
 * Under autocast the engine's schema guard casts first and checks after. */
static int same_dtype(const char *op, int n, cg_tensor *const *ts) {
    if (cg_is_autocast_enabled()) return 0;
    for (int i = 1; i < n; i++) {
        if (cg_tensor_dtype(ts[i]) != cg_tensor_dtype(ts[0])) {
            PyErr_Format(PyExc_RuntimeError, "%s: expected m1 and m2 to have the same dtype, but got: %s != %s", op,
                         cg_dtype_name(cg_tensor_dtype(ts[0])), cg_dtype_name(cg_tensor_dtype(ts[i])));
            return -1;
        }
    }
    return 0;
}

typedef cg_tensor *(*prod2_fn)(cg_tensor *, cg_tensor *);

/* op(input, <other>, *, out=None) for two same-dtype tensors */
static PyObject *prod2(CGPY_FASTKW_ARGS, cgpy_spec *spec, prod2_fn fn) {
    const char *name = spec->fname;
    cgpy_val v[3];
    if (cgpy_args_parse(spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *a = v[0].o, *b = v[1].o, *out = v[2].o;
    cg_tensor *ts[2] = {cgpy_t(a), cgpy_t(b)};
    if (same_dtype(name, 2, ts)) return NULL;
    cgpy_out_rule rule = {name, CGPY_OUT_EXACT, CGPY_OUT_ALIAS_OK, 0}; /* the product is computed before the copy */
    return cgpy_out_rt(fn(ts[0], ts[1]), out, false, &rule, 2, ts);
}

/* a spec (input, <other>, *, out=None): out= is taken in the method form too */
#define PROD2_SPEC(name, other) \
    CGPY_SPEC(name, CGPY_INPUT_ARG, CGPY_ARG(other, CGPY_A_TENSOR, CGPY_REQ), CGPY_ARG("out", CGPY_A_OBJ, CGPY_KWONLY))
#define PROD2(pyname, cfn, other)                                         \
    static PyObject *py_##pyname(CGPY_FASTKW_ARGS) {                      \
        static cgpy_spec spec = PROD2_SPEC(#pyname, other);               \
        return prod2(self, args, nargs, kwnames, &spec, cfn);             \
    }
PROD2(matmul, cg_matmul, "other")
PROD2(mm, cg_mm, "mat2")
PROD2(bmm, cg_bmm, "mat2")
PROD2(mv, cg_mv, "vec")
PROD2(dot, cg_dot, "tensor")
PROD2(vdot, cg_dot, "other") /* real dtypes only: conj is the identity */

/* inner(a, b): sum over the last dims; a 0-d operand multiplies */
static cg_tensor *inner_impl(cg_tensor *a, cg_tensor *b) {
    int na = cg_tensor_ndim(a), nb = cg_tensor_ndim(b);
    if (na == 1 && nb == 1) return cg_dot(a, b); /* as PyTorch: a dot (which autocast leaves alone) */
    const int64_t *sa = cg_tensor_shape(a), *sb = cg_tensor_shape(b);
    int64_t k = sa[na - 1];
    int64_t ra = 1, rb = 1, os[CG_MAX_DIMS];
    int on = 0;
    if (na + nb - 2 > CG_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "inner(): the result would have more than %d dimensions", CG_MAX_DIMS);
        return NULL;
    }
    for (int i = 0; i < na - 1; i++) ra *= sa[i], os[on++] = sa[i];
    for (int i = 0; i < nb - 1; i++) rb *= sb[i], os[on++] = sb[i];
    int64_t s2a[2] = {ra, k}, s2b[2] = {rb, k};
    cg_tensor *a2 = cg_reshape(a, 2, s2a);
    cg_tensor *b2 = a2 ? cg_reshape(b, 2, s2b) : NULL;
    cg_tensor *bt = b2 ? cg_t(b2) : NULL;
    cg_tensor *p = bt ? cg_mm(a2, bt) : NULL;
    cg_tensor *r = p ? cg_reshape(p, on, os) : NULL;
    cg_tensor_release(a2);
    cg_tensor_release(b2);
    cg_tensor_release(bt);
    cg_tensor_release(p);
    return r;
}

static PyObject *py_inner(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = PROD2_SPEC("inner", "other");
    cgpy_val v[3];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *a = v[0].o, *b = v[1].o, *out = v[2].o;
    cg_tensor *ta = cgpy_t(a), *tb = cgpy_t(b);
    if (cg_tensor_ndim(ta) == 0 || cg_tensor_ndim(tb) == 0) {
        PyObject *ops[2] = {a, b};
        cg_tensor *t[2];
        cg_dtype dt;
        if (cgpy_promote_operands(2, ops, false, t, &dt)) return NULL;
        static const cgpy_out_rule rule = {"inner", CGPY_OUT_EXACT, CGPY_OUT_ALIAS_OK, 0};
        PyObject *res = cgpy_out_rt(cg_mul(t[0], t[1]), out, false, &rule, 2, t);
        cgpy_release_n(2, t);
        return res;
    }
    cg_tensor *ts[2] = {ta, tb};
    if (same_dtype("inner", 2, ts)) return NULL;
    int na = cg_tensor_ndim(ta), nb = cg_tensor_ndim(tb);
    if (cg_tensor_shape(ta)[na - 1] != cg_tensor_shape(tb)[nb - 1]) {
        PyErr_Format(PyExc_RuntimeError,
                     "inner() the last dimension must match on both input tensors but got sizes %lld and %lld",
                     (long long)cg_tensor_shape(ta)[na - 1], (long long)cg_tensor_shape(tb)[nb - 1]);
        return NULL;
    }
    static const cgpy_out_rule rule = {"inner", CGPY_OUT_EXACT, CGPY_OUT_ALIAS_OK, 0};
    return cgpy_out_rt(inner_impl(ta, tb), out, false, &rule, 2, ts);
}

/* outer(input, vec2): a broadcast multiply in PyTorch, so operands promote */
static PyObject *outer_common(CGPY_FASTKW_ARGS, bool ger) {
    static cgpy_spec specs[2] = {PROD2_SPEC("outer", "vec2"), PROD2_SPEC("ger", "vec2")};
    cgpy_val v[3];
    if (cgpy_args_parse(&specs[ger], self, args, nargs, kwnames, v)) return NULL;
    PyObject *a = v[0].o, *b = v[1].o, *out = v[2].o;
    PyObject *ops[2] = {a, b};
    cg_tensor *t[2];
    cg_dtype dt;
    if (cgpy_promote_operands(2, ops, false, t, &dt)) return NULL;
    cgpy_out_rule rule = {specs[ger].fname, CGPY_OUT_CAST, CGPY_OUT_NO_PARTIAL, 0}; /* a broadcast multiply */
    cg_tensor *ins[2] = {cgpy_t(a), cgpy_t(b)};
    PyObject *res = cgpy_out_rt(cg_outer(t[0], t[1]), out, false, &rule, 2, ins);
    cgpy_release_n(2, t);
    return res;
}
static PyObject *py_outer(CGPY_FASTKW_ARGS) { return outer_common(self, args, nargs, kwnames, false); }
static PyObject *py_ger(CGPY_FASTKW_ARGS) { return outer_common(self, args, nargs, kwnames, true); }

typedef cg_tensor *(*addprod_fn)(cg_tensor *, cg_tensor *, cg_tensor *, double, double);

/* addmm / baddbmm (input, m1, m2, *, beta=1, alpha=1, out=None) and their in-place forms */
#define ADDPROD_SPEC(name, m1, m2)                                                                                 \
    CGPY_SPEC(name, CGPY_INPUT_ARG, CGPY_ARG(m1, CGPY_A_TENSOR, CGPY_REQ), CGPY_ARG(m2, CGPY_A_TENSOR, CGPY_REQ), CGPY_ARG("beta", CGPY_A_OBJ, CGPY_KWONLY), \
            CGPY_ARG("alpha", CGPY_A_OBJ, CGPY_KWONLY), CGPY_ARG("out", CGPY_A_OBJ, CGPY_KWONLY))
static PyObject *addprod(CGPY_FASTKW_ARGS, addprod_fn fn, const char *name, bool inplace) {
    static cgpy_spec specs[4] = {ADDPROD_SPEC("addmm", "mat1", "mat2"), ADDPROD_SPEC("addmm_", "mat1", "mat2"),
                                 ADDPROD_SPEC("baddbmm", "batch1", "batch2"), ADDPROD_SPEC("baddbmm_", "batch1",
                                     "batch2")};
    cgpy_val v[6];
    if (cgpy_args_parse(&specs[(fn == cg_addmm ? 0 : 2) + inplace], self, args, nargs, kwnames, v)) return NULL;
    PyObject *x = v[0].o, *beta_o = v[3].o, *alpha_o = v[4].o, *out = v[5].o;
    double beta = 1, alpha = 1;
    if (beta_o && cgpy_parse_double(beta_o, &beta, "beta")) return NULL;
    if (alpha_o && cgpy_parse_double(alpha_o, &alpha, "alpha")) return NULL;
    cg_tensor *ts[3] = {v[0].t, v[1].t, v[2].t};
    if (same_dtype(name, 3, ts)) return NULL;
    if (!inplace) {
        cgpy_out_rule rule = {name, CGPY_OUT_EXACT, CGPY_OUT_NO_PARTIAL, 0};
        return cgpy_out_rt(fn(ts[0], ts[1], ts[2], beta, alpha), out, false, &rule, 3, ts);
    }
    if (out) {
        PyErr_Format(PyExc_TypeError, "%s_() got an unexpected keyword argument 'out'", name);
        return NULL;
    }
    cg_tensor *xin;
    char opn[32];
    snprintf(opn, sizeof opn, "%s_", name);
    if (cgpy_inplace_begin(ts[0], cg_tensor_requires_grad(ts[1]) || cg_tensor_requires_grad(ts[2]), opn, &xin))
        return NULL;
    return cgpy_inplace_end(x, xin, fn(xin, ts[1], ts[2], beta, alpha), false);
}
static PyObject *py_addmm(CGPY_FASTKW_ARGS) { return addprod(self, args, nargs, kwnames, cg_addmm, "addmm", false); }
static PyObject *py_addmm_(CGPY_FASTKW_ARGS) { return addprod(self, args, nargs, kwnames, cg_addmm, "addmm", true); }
static PyObject *py_baddbmm(CGPY_FASTKW_ARGS) { return addprod(self, args, nargs, kwnames, cg_baddbmm, "baddbmm",
    false); }
static PyObject *py_baddbmm_(CGPY_FASTKW_ARGS) { return addprod(self, args, nargs, kwnames, cg_baddbmm, "baddbmm",
    true); }

/* einsum(equation, *operands) or einsum(equation, [operands]) */
static PyObject *py_einsum(PyObject *mod, PyObject *args) {
    (void)mod;
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    if (n < 1 || !PyUnicode_Check(PyTuple_GET_ITEM(args, 0))) {
        PyErr_SetString(PyExc_TypeError, "einsum(): expected an equation string followed by operands");
        return NULL;
    }
    const char *eq = PyUnicode_AsUTF8(PyTuple_GET_ITEM(args, 0));
    if (!eq) return NULL;
    PyObject *seq;
    if (n == 2 && (PyList_Check(PyTuple_GET_ITEM(args, 1)) || PyTuple_Check(PyTuple_GET_ITEM(args, 1))))
        seq = PySequence_Tuple(PyTuple_GET_ITEM(args, 1));
    else
        seq = PyTuple_GetSlice(args, 1, n);
    if (!seq) return NULL;
    Py_ssize_t k = PyTuple_GET_SIZE(seq);
    cg_tensor *ops[64];
    if (k > 64) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_RuntimeError, "einsum(): too many operands (at most 64)");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < k; i++) {
        PyObject *o = PyTuple_GET_ITEM(seq, i);
        if (!cgpy_is_tensor(o)) {
            PyErr_Format(PyExc_TypeError, "einsum(): operand %zd must be a Tensor, not %.100s", i, Py_TYPE(o)->tp_name);
            Py_DECREF(seq);
            return NULL;
        }
        ops[i] = cgpy_t(o);
    }
    cg_tensor *r = NULL;
    if (k > 0 && same_dtype("einsum", (int)k, ops) == 0) r = cg_einsum(eq, (int)k, ops);
    else if (k == 0) PyErr_SetString(PyExc_RuntimeError, "einsum(): must provide at least one operand");
    Py_DECREF(seq);
    return cgpy_result_rt(r, false);
}

/* the @ operator: Tensor.__matmul__ / __rmatmul__ (the Python subclass's
 * nb_matrix_multiply slot dispatches to these C methods) */
static PyObject *py_dunder_matmul(PyObject *self, PyObject *other) {
    if (!cgpy_is_tensor(other)) Py_RETURN_NOTIMPLEMENTED;
    cg_tensor *ts[2] = {cgpy_t(self), cgpy_t(other)};
    if (same_dtype("matmul", 2, ts)) return NULL;
    return cgpy_result_rt(cg_matmul(ts[0], ts[1]), false);
}
static PyObject *py_dunder_rmatmul(PyObject *self, PyObject *other) {
    if (!cgpy_is_tensor(other)) Py_RETURN_NOTIMPLEMENTED;
    cg_tensor *ts[2] = {cgpy_t(other), cgpy_t(self)};
    if (same_dtype("matmul", 2, ts)) return NULL;
    return cgpy_result_rt(cg_matmul(ts[0], ts[1]), false);
}

/* ---------------------------------------------------------------- linear layers */

/* Tensor or None argument `o` of fname: *t is its tensor or NULL. */
static int opt_tensor(PyObject *o, const char *fname, const char *arg, cg_tensor **t) {
    *t = NULL;
    if (!o || o == Py_None) return 0;
    if (cgpy_need_tensor(o, fname, arg)) return -1;
    *t = cgpy_t(o);
    return 0;
}

/* A 1-D weight (in_features,): torch computes matmul(input, weight) + bias. */
static cg_tensor *linear_vector_weight(cg_tensor *x, cg_tensor *w, cg_tensor *b) {
    cg_tensor *p = cg_matmul(x, w);
    if (!p || !b) return p;
    cg_tensor *r = cg_add(p, b);
    cg_tensor_release(p);
    return r;
}

/* _linear(input, weight, bias=None): nn.functional.linear, one engine call.
 * The positional form is parsed without building a keyword table (the hot path). */
static PyObject *py_linear(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("linear", CGPY_ARG("input", CGPY_A_TENSOR, CGPY_REQ),
                                      CGPY_ARG("weight", CGPY_A_TENSOR, CGPY_REQ), CGPY_ARG("bias", CGPY_A_OPT_TENSOR));
    cgpy_val a[3];
    PyObject *v[3];
    cg_tensor *b;
    if (!kwnames && nargs >= 2 && nargs <= 3) { /* the hot path: positional */
        v[0] = args[0], v[1] = args[1], v[2] = nargs == 3 ? args[2] : NULL;
        if (cgpy_need_tensor(v[0], "linear", "input") || cgpy_need_tensor(v[1], "linear", "weight") ||
            opt_tensor(v[2], "linear", "bias", &b))
            return NULL;
    } else {
        if (cgpy_args_parse(&spec, self, args, nargs, kwnames, a)) return NULL;
        v[0] = a[0].o, v[1] = a[1].o, b = a[2].t;
    }
    cg_tensor *ts[3] = {cgpy_t(v[0]), cgpy_t(v[1]), b};
    if (same_dtype("linear", b ? 3 : 2, ts)) return NULL;
    cg_tensor *r;
    if (cg_tensor_ndim(ts[1]) == 1) {
        r = linear_vector_weight(ts[0], ts[1], b);
    } else {
        int64_t work = cg_tensor_numel(ts[0]) * (cg_tensor_ndim(ts[1]) == 2 ? cg_tensor_shape(ts[1])[0] : 1);
        CGPY_NOGIL_IF(work, r = cg_linear(ts[0], ts[1], b));
    }
    return cgpy_result_rt(r, false);
}

/* bilinear(input1, input2, weight, bias=None) */
static PyObject *py_bilinear(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("bilinear", CGPY_ARG("input1", CGPY_A_TENSOR, CGPY_REQ),
                                      CGPY_ARG("input2", CGPY_A_TENSOR, CGPY_REQ), CGPY_ARG("weight", CGPY_A_TENSOR,
                                          CGPY_REQ),
                                      CGPY_ARG("bias", CGPY_A_OPT_TENSOR));
    cgpy_val a[4];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, a)) return NULL;
    PyObject *v[3] = {a[0].o, a[1].o, a[2].o};
    cg_tensor *b = a[3].t;
    cg_tensor *ts[4] = {cgpy_t(v[0]), cgpy_t(v[1]), cgpy_t(v[2]), b};
    if (same_dtype("bilinear", b ? 4 : 3, ts)) return NULL;
    return cgpy_result_rt(cg_bilinear(ts[0], ts[1], ts[2], b), false);
}

#define LINALG_ENTRIES                                                                                       \
    CGPY_FASTKW("matmul", py_matmul), CGPY_FASTKW("mm", py_mm), CGPY_FASTKW("bmm", py_bmm),                   \
        CGPY_FASTKW("mv", py_mv), CGPY_FASTKW("dot", py_dot), CGPY_FASTKW("vdot", py_vdot),                    \
        CGPY_FASTKW("inner", py_inner), CGPY_FASTKW("outer", py_outer), CGPY_FASTKW("ger", py_ger),            \
        CGPY_FASTKW("addmm", py_addmm), CGPY_FASTKW("baddbmm", py_baddbmm)

PyMethodDef cgpy_linalg_methods[] = {
    LINALG_ENTRIES,
    CGPY_FASTKW("addmm_", py_addmm_),
    CGPY_FASTKW("baddbmm_", py_baddbmm_),
    {"__matmul__", py_dunder_matmul, METH_O, NULL},
    {"__rmatmul__", py_dunder_rmatmul, METH_O, NULL},
    CGPY_TABLE_END,
};
PyMethodDef cgpy_linalg_functions[] = {
    LINALG_ENTRIES,
    {"einsum", py_einsum, METH_VARARGS, NULL},
    CGPY_FASTKW("_linear", py_linear),
    CGPY_FASTKW("bilinear", py_bilinear),
    CGPY_TABLE_END,
};
