/* ops_math.c — bindings of elementwise math: unary math, binary arithmetic,
 * comparisons, logic and bitwise ops, pow / float_power, rounding with
 * decimals, predicates and closeness tests, as Tensor methods, in-place
 * methods and module functions (with out=), with PyTorch's promotion.
 * Activations, softmax and the n-ary ops live in ops_activation.c; their
 * entries are appended to this file's tables. */
#include "ops_math.h"
#include "elementwise_ops.gen.h" /* the op table's lists (tools/gen_ops.py) */

#include <math.h>
#include <string.h>

typedef cg_tensor *(*unary_fn)(cg_tensor *);
typedef cg_tensor *(*binary_fn)(cg_tensor *, cg_tensor *);

/* ================================================================ shared helpers */

int cgpy_check_cast(cg_dtype from, cg_dtype to) {
    if ((cg_dtype_is_floating(from) && !cg_dtype_is_floating(to)) || (to == CG_DTYPE_BOOL && from != CG_DTYPE_BOOL)) {
        PyErr_Format(PyExc_RuntimeError, "result type %s can't be cast to the desired output type %s",
                     cg_dtype_name(from), cg_dtype_name(to));
        return -1;
    }
    return 0;
}

int cgpy_need_tensor(PyObject *o, const char *fname, const char *arg) {
    if (o && cgpy_is_tensor(o)) return 0;
    PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be Tensor, not %.100s", fname, arg,
                 o ? Py_TYPE(o)->tp_name : "nothing");
    return -1;
}

cg_tensor *cgpy_like_operand(PyObject *o, cg_tensor *x) {
    return cgpy_as_tensor(o, cg_tensor_dtype(x), cg_tensor_device(x));
}

static int same_shape(cg_tensor *a, cg_tensor *b) {
    int nd = cg_tensor_ndim(a);
    return nd == cg_tensor_ndim(b) && !memcmp(cg_tensor_shape(a), cg_tensor_shape(b), sizeof(int64_t) * (size_t)nd);
}

/* Note [Memory overlap]: self.<op>_(other) with other overlapping self
 * partially raises, checked on other as given (a cast or an alpha scale
 * would hide it). 0 or -1 (raised). */
static int inplace_overlap(const char *op, cg_tensor *self, PyObject *other) {
    if (!cgpy_overlap_refused(self, cgpy_tensor_or_null(other), false)) return 0;
    char fname[64];
    snprintf(fname, sizeof fname, "%s_", op);
    return cgpy_check_overlap(fname, self, cgpy_tensor_or_null(other), false);
}

PyObject *cgpy_inplace_via(const char *op, cgpy_fastkw_fn fn, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames) {
    if (!cgpy_is_method(self)) { /* module form, torch.relu_(x): the tensor is the first argument */
        if (nargs < 1 || cgpy_need_tensor(args[0], "in-place op", "input")) {
            if (nargs < 1) cgpy_need_tensor(NULL, "in-place op", "input");
            return NULL;
        }
        self = args[0];
        args++;
        nargs--;
    }
    cg_tensor *t = cgpy_t(self);
    /* Note [Memory overlap]: the result is computed apart, but PyTorch's loop
     * writes self while reading the inputs, and refuses a partial overlap */
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t i = 0; i < nargs + nkw; i++)
        if (inplace_overlap(op, t, args[i])) return NULL;
    PyObject *src;
    if (cg_is_grad_enabled() && cg_tensor_requires_grad(t)) {
        src = cgpy_wrap(cg_clone(t));
        if (!src) return NULL;
    } else {
        Py_INCREF(self);
        src = self;
    }
    PyObject *r = fn(src, args, nargs, kwnames);
    Py_DECREF(src);
    if (!r) return NULL;
    cg_tensor *rt = cgpy_t(r);
    if (cgpy_check_cast(cg_tensor_dtype(rt), cg_tensor_dtype(t))) {
        Py_DECREF(r);
        return NULL;
    }
    if (!same_shape(rt, t)) {
        Py_DECREF(r);
        PyErr_SetString(cgpy_ShapeMismatch, "in-place op: the broadcast result's shape differs from the output's shape");
        return NULL;
    }
    cg_status st = cg_copy_(t, rt);
    Py_DECREF(r);
    return cgpy_inplace_result(self, st);
}

PyObject *cgpy_elementwise_out(PyObject *out, cg_tensor *r, const char *op, int dtype_rule, int n,
    PyObject *const *operands) {
    cgpy_out_rule rule = {op, (unsigned char)dtype_rule, CGPY_OUT_NO_PARTIAL, 0};
    cg_tensor *ins[3] = {NULL, NULL, NULL};
    for (int i = 0; i < n && i < 3; i++) ins[i] = cgpy_tensor_or_null(operands[i]);
    return cgpy_out_finish(out, r, &rule, n < 3 ? n : 3, ins);
}
static PyObject *finish(PyObject *out, cg_tensor *r, const char *op, int dtype_rule, PyObject *a, PyObject *b) {
    PyObject *operands[2] = {a, b};
    return cgpy_elementwise_out(out, r, op, dtype_rule, 2, operands);
}

/* In-place forms: self is the method's tensor, or the first argument of a module-level in-place function. */
static int inplace_self(PyObject **self, PyObject *const **args, Py_ssize_t *nargs, const char *fname) {
    if (cgpy_is_method(*self)) return 0;
    if (*nargs < 1) return cgpy_need_tensor(NULL, fname, "input");
    if (cgpy_need_tensor((*args)[0], fname, "input")) return -1;
    *self = (*args)[0];
    (*args)++;
    (*nargs)--;
    return 0;
}

/* ================================================================ unary ops */

enum {
    UK_SAME,   /* the engine's loops decide which dtypes work; the result keeps the dtype */
    UK_FLOAT,  /* integer / bool inputs compute in the default float dtype */
    UK_SQUARE, /* bool inputs compute in int64 */
};

typedef struct {
    const char *name;
    unary_fn fn;
    int kind;
    bool inplace_copy; /* the engine's in-place form does not fit (bool results) */
} unary_def;

static cg_dtype unary_result_dtype(const unary_def *d, cg_dtype dt) {
    if (d->kind == UK_FLOAT && !cg_dtype_is_floating(dt)) return cgpy_default_dtype;
    if (d->kind == UK_SQUARE && dt == CG_DTYPE_BOOL) return CG_DTYPE_I64;
    return dt;
}

static cg_tensor *unary_apply(const unary_def *d, cg_tensor *x) {
    cg_dtype dt = cg_tensor_dtype(x), rdt = unary_result_dtype(d, dt);
    if (rdt == dt) return d->fn(x);
    cg_tensor *c = cg_to_dtype(x, rdt);
    if (!c) return NULL;
    cg_tensor *r = d->fn(c);
    cg_tensor_release(c);
    return r;
}

static const char *const k_unary_names[] = {"input", "out", NULL};

static PyObject *unary_call(const unary_def *d, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) {
    PyObject *v[2];
    if (!kwnames && nargs == 0 && cgpy_is_method(self)) { /* x.exp(): the hot path */
        v[0] = self;
        v[1] = NULL;
    } else if (cgpy_parse_fastkw(self, args, nargs, kwnames, d->name, k_unary_names, 1, 1, v) ||
               cgpy_need_tensor(v[0], d->name, "input")) {
        return NULL;
    }
    /* PyTorch asks for the input's dtype exactly where the result keeps it (abs, floor, round, ...) */
    int rule = d->kind == UK_SAME && !d->inplace_copy ? CGPY_OUT_EXACT : CGPY_OUT_CAST;
    return finish(v[1], unary_apply(d, cgpy_t(v[0])), d->name, rule, v[0], NULL);
}

static PyObject *unary_inplace(const unary_def *d, cgpy_fastkw_fn outofplace, PyObject *self, PyObject *const *args,
                               Py_ssize_t nargs, PyObject *kwnames) {
    if (inplace_self(&self, &args, &nargs, d->name)) return NULL;
    if (nargs || (kwnames && PyTuple_GET_SIZE(kwnames))) {
        PyErr_Format(PyExc_TypeError, "%s_() takes no arguments", d->name);
        return NULL;
    }
    cg_tensor *t = cgpy_t(self);
    if (cgpy_check_cast(unary_result_dtype(d, cg_tensor_dtype(t)), cg_tensor_dtype(t))) return NULL;
    if (d->inplace_copy) return cgpy_inplace_via(d->name, outofplace, self, NULL, 0, NULL);
    return cgpy_inplace_result(self, cg_unary_(d->name, t));
}

#define UNARY(name, kind)                                                                                     \
    static const unary_def U_##name = {#name, cg_##name, kind, false};                                          \
    static PyObject *py_##name(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {        \
        return unary_call(&U_##name, self, args, nargs, kw);                                                    \
    }
#define UNARY_IP(name, kind, copy)                                                                            \
    static const unary_def U_##name = {#name, cg_##name, kind, copy};                                           \
    static PyObject *py_##name(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {        \
        return unary_call(&U_##name, self, args, nargs, kw);                                                    \
    }                                                                                                          \
    static PyObject *py_##name##_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {     \
        return unary_inplace(&U_##name, py_##name, self, args, nargs, kw);                                      \
    }

/* name, dtype rule, in-place through a copy: the op table's rows (elementwise_ops.gen.h) */
#define UNARY_OPS(X) CGPY_UNARY_METHOD_OPS(X)
#define UNARY_NOIP(name, kind, copy) UNARY(name, kind)
UNARY_OPS(UNARY_IP)
CGPY_UNARY_FUNCTION_OPS(UNARY_IP) /* module function only, as in PyTorch (selu) */
CGPY_UNARY_NOIP_OPS(UNARY_NOIP)

/* positive(input): input itself (PyTorch returns the same tensor); not for bool */
static PyObject *py_positive(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {
    static const char *const names[] = {"input", NULL};
    PyObject *v[1];
    if (cgpy_parse_fastkw(self, args, nargs, kw, "positive", names, 1, 1, v) ||
        cgpy_need_tensor(v[0], "positive", "input"))
        return NULL;
    if (cg_tensor_dtype(cgpy_t(v[0])) == CG_DTYPE_BOOL) {
        PyErr_SetString(PyExc_RuntimeError, "positive: the `+` operator, on a bool tensor is not supported");
        return NULL;
    }
    Py_INCREF(v[0]);
    return v[0];
}

/* isposinf / isneginf: x == ±inf for floats, all false for integers */
static PyObject *isinf_signed(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw, double inf,
                              const char *fname) {
    PyObject *v[2];
    if (cgpy_parse_fastkw(self, args, nargs, kw, fname, k_unary_names, 1, 1, v) ||
        cgpy_need_tensor(v[0], fname, "input"))
        return NULL;
    cg_tensor *x = cgpy_t(v[0]);
    if (!cg_dtype_is_floating(cg_tensor_dtype(x)))
        return finish(v[1], cg_zeros(cg_tensor_ndim(x), cg_tensor_shape(x), CG_DTYPE_BOOL, cg_tensor_device(x)), fname,
                      CGPY_OUT_EXACT, v[0], NULL);
    cg_tensor *s = cg_scalar_on(inf, cg_tensor_dtype(x), cg_tensor_device(x));
    if (!s) return cgpy_raise();
    cg_tensor *r = cg_eq(x, s);
    cg_tensor_release(s);
    return finish(v[1], r, fname, CGPY_OUT_EXACT, v[0], NULL);
}
static PyObject *py_isposinf(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {
    return isinf_signed(self, args, nargs, kw, INFINITY, "isposinf");
}
static PyObject *py_isneginf(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {
    return isinf_signed(self, args, nargs, kw, -INFINITY, "isneginf");
}

/* round(input, *, decimals=0): decimals != 0 as PyTorch computes it,
 * round(x * 10^d) / 10^d (d > 0) or round(x / 10^-d) * 10^-d (d < 0). */
static PyObject *py_round(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {
    static const char *const names[] = {"input", "decimals", "out", NULL};
    PyObject *v[3];
    if (cgpy_parse_fastkw(self, args, nargs, kw, "round", names, 1, 1, v) || cgpy_need_tensor(v[0], "round", "input"))
        return NULL;
    int64_t dec = 0;
    if (v[1] && cgpy_parse_int(v[1], &dec, "round(): argument 'decimals'")) return NULL;
    cg_tensor *x = cgpy_t(v[0]);
    if (dec == 0) return finish(v[2], cg_round(x), "round", CGPY_OUT_EXACT, v[0], NULL);
    if (!cg_dtype_is_floating(cg_tensor_dtype(x))) {
        PyErr_Format(PyExc_NotImplementedError, "round: decimals != 0 is not implemented for %s tensors",
                     cg_dtype_name(cg_tensor_dtype(x)));
        return NULL;
    }
    cg_tensor *p = cg_scalar_on(pow(10.0, (double)(dec > 0 ? dec : -dec)), cg_tensor_dtype(x), cg_tensor_device(x));
    if (!p) return cgpy_raise();
    cg_tensor *a = dec > 0 ? cg_mul(x, p) : cg_div(x, p);
    cg_tensor *b = a ? cg_round(a) : NULL;
    cg_tensor *r = b ? (dec > 0 ? cg_div(b, p) : cg_mul(b, p)) : NULL;
    cg_tensor_release(p);
    if (a) cg_tensor_release(a);
    if (b) cg_tensor_release(b);
    return finish(v[2], r, "round", CGPY_OUT_EXACT, v[0], NULL);
}
static PyObject *py_round_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {
    if (!nargs && !kw && cgpy_is_method(self)) return cgpy_inplace_result(self, cg_unary_("round", cgpy_t(self)));
    return cgpy_inplace_via("round", py_round, self, args, nargs, kw);
}

/* ================================================================ binary ops */

enum { /* the op table's promotion kinds (elementwise_ops.gen.h) */
    BK_ARITH = CGPY_PROMOTE_ARITH, /* PyTorch's result type */
    BK_FLOAT = CGPY_PROMOTE_FLOAT, /* result type, integers raised to the default float dtype */
    BK_BOOL = CGPY_PROMOTE_BOOL,   /* comparisons and logic: operands promoted, bool result */
};

/* Which operands may be Python numbers, as in PyTorch's signatures: torch.eq(2, t)
 * is a TypeError, torch.add(2, t) is not. */
enum {
    OPND_ANY,   /* either (add, mul, remainder, bitwise_and, ...) */
    OPND_INPUT, /* `other` only: `input` must be a Tensor (eq, lt, fmod, ...) */
    OPND_BOTH,  /* neither: both must be Tensors (maximum, atan2, logical_and, ...) */
};

typedef struct {
    const char *name;
    binary_fn fn;
    int kind;
    int operands; /* OPND_* */
} binary_def;

static const char *const k_binary_names[] = {"input", "other", "out", NULL};

/* Engine errors of arithmetic ops: integer division by zero is cgrad.InvalidArgument,
 * which is also the RuntimeError PyTorch raises (Note [Exception classes]). */
static void raise_arith(void) { cgpy_raise(); }

/* Note [Two numbers]: PyTorch's parser takes Python numbers for both
 * operands of add, sub, mul, div and floor_divide (torch.add(2, 3.5) is
 * tensor(5.5)), with `input` made a 0-d tensor of the number's own dtype
 * (bool, int64, the default float dtype) on the default device; every other
 * binary op wants a Tensor there. A new 0-d tensor for a, NULL when the op or
 * the operands do not qualify (nothing raised), or NULL raised. */
static PyObject *two_numbers_input(const char *op, PyObject *a, PyObject *b) {
    static const char *const ops[] = {"add", "sub", "mul", "div", "floor_divide"};
    bool listed = false;
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) listed |= !strcmp(op, ops[i]);
    if (!listed || !cgpy_is_scalar(a) || !cgpy_is_scalar(b)) return NULL;
    cg_device dev;
    if (cgpy_default_device(&dev)) return NULL;
    cg_dtype dt = PyBool_Check(a) ? CG_DTYPE_BOOL : PyLong_Check(a) ? CG_DTYPE_I64 : cgpy_default_dtype;
    cg_tensor *t = cgpy_as_tensor(a, dt, dev);
    return t ? cgpy_wrap(t) : NULL;
}

/* promote (input, other) for d and apply it; new reference or NULL (raised) */
static cg_tensor *binary_apply(const binary_def *d, PyObject *a, PyObject *b) {
    if (!cgpy_is_tensor(a) && !cgpy_is_tensor(b)) {
        PyObject *ta = two_numbers_input(d->name, a, b);
        if (ta) {
            cg_tensor *r = binary_apply(d, ta, b);
            Py_DECREF(ta);
            return r;
        }
        if (!PyErr_Occurred()) cgpy_need_tensor(a, d->name, "input");
        return NULL;
    }
    if (d->operands != OPND_ANY && cgpy_need_tensor(a, d->name, "input")) return NULL;
    if (d->operands == OPND_BOTH && cgpy_need_tensor(b, d->name, "other")) return NULL;
    PyObject *ops[2] = {a, b};
    cg_tensor *t[2];
    cg_dtype dt;
    if (cgpy_promote_operands(2, ops, d->kind == BK_FLOAT, t, &dt)) return NULL;
    cg_tensor *r = d->fn(t[0], t[1]);
    cgpy_release_n(2, t);
    if (!r) raise_arith();
    return r;
}

static PyObject *binary_call(const binary_def *d, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
    PyObject *v[3];
    if (!kwnames && nargs == 1 && cgpy_is_method(self)) { /* x.add(y): the hot path */
        v[0] = self;
        v[1] = args[0];
        v[2] = NULL;
    } else if (cgpy_parse_fastkw(self, args, nargs, kwnames, d->name, k_binary_names, 2, 2, v)) {
        return NULL;
    }
    cg_tensor *r = binary_apply(d, v[0], v[1]);
    return r ? finish(v[2], r, d->name, CGPY_OUT_CAST, v[0], v[1]) : NULL;
}

/* self.op_(other): the promoted result dtype must be castable to self's */
static PyObject *binary_inplace(const binary_def *d, cgpy_fastkw_fn outofplace, PyObject *self, PyObject *const *args,
                                Py_ssize_t nargs, PyObject *kwnames) {
    static const char *const names[] = {"input", "other", NULL};
    PyObject *v[2];
    if (cgpy_parse_fastkw(self, args, nargs, kwnames, d->name, names, 2, 2, v) ||
        cgpy_need_tensor(v[0], d->name, "input"))
        return NULL;
    if (d->operands == OPND_BOTH && cgpy_need_tensor(v[1], d->name, "other")) return NULL;
    self = v[0];
    if (d->kind == BK_BOOL) return cgpy_inplace_via(d->name, outofplace, self, &v[1], 1, NULL);
    cg_tensor *t = cgpy_t(self);
    cg_dtype dt;
    if (cgpy_result_type(2, v, &dt)) return NULL;
    dt = cgpy_promoted_dtype(d->kind, dt);
    if (cgpy_check_cast(dt, cg_tensor_dtype(t))) return NULL;
    cg_tensor *o = cgpy_like_operand(v[1], t);
    if (!o) return NULL;
    /* a cast copy hides the overlap from the engine's check: test other as given */
    if (o != cgpy_tensor_or_null(v[1]) && inplace_overlap(d->name, t, v[1])) {
        cg_tensor_release(o);
        return NULL;
    }
    cg_status st = cg_binary_(d->name, t, o);
    cg_tensor_release(o);
    return cgpy_inplace_result(self, st);
}

#define BINARY_DEF(name, kind, strict)                                                                        \
    static const binary_def B_##name = {#name, cg_##name, kind, strict};                                        \
    static PyObject *py_##name(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {        \
        return binary_call(&B_##name, self, args, nargs, kw);                                                   \
    }
#define BINARY_IP(name, kind, strict)                                                                         \
    BINARY_DEF(name, kind, strict)                                                                             \
    static PyObject *py_##name##_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {     \
        return binary_inplace(&B_##name, py_##name, self, args, nargs, kw);                                     \
    }

/* name, dtype rule, which operands may be numbers (as in PyTorch's signatures): the op table's rows */
#define BINARY_IP_OPS(X) CGPY_BINARY_METHOD_OPS(X)
BINARY_IP_OPS(BINARY_IP)
CGPY_BINARY_NOIP_OPS(BINARY_DEF)

/* fmax / fmin: maximum / minimum that ignore NaN (a NaN loses unless both are NaN), as
 * where(a >= b | isnan(b), a, b) (<= for fmin): PyTorch's gradient rule comes with it (a tie or a
 * NaN b gives the whole gradient to a) */
static cg_tensor *nan_ignoring(cg_tensor *a, cg_tensor *b, binary_fn keep_a) {
    cg_tensor *k = keep_a(a, b), *nb = k ? cg_isnan(b) : NULL;
    cg_tensor *mask = nb ? cg_logical_or(k, nb) : NULL;
    cg_tensor *r = mask ? cg_where(mask, a, b) : NULL;
    cg_tensor *tmp[3] = {k, nb, mask};
    for (int i = 0; i < 3; i++)
        if (tmp[i]) cg_tensor_release(tmp[i]);
    return r;
}
static cg_tensor *fmax_fn(cg_tensor *a, cg_tensor *b) { return nan_ignoring(a, b, cg_ge); }
static cg_tensor *fmin_fn(cg_tensor *a, cg_tensor *b) { return nan_ignoring(a, b, cg_le); }
static const binary_def B_fmax = {"fmax", fmax_fn, BK_ARITH, OPND_BOTH};
static const binary_def B_fmin = {"fmin", fmin_fn, BK_ARITH, OPND_BOTH};
static PyObject *py_fmax(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {
    return binary_call(&B_fmax, self, args, nargs, kw);
}
static PyObject *py_fmin(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {
    return binary_call(&B_fmin, self, args, nargs, kw);
}

/* ---------------------------------------------------------------- add / sub with alpha */

/* other * alpha in dtype dt (other itself, retained, when alpha is absent or 1) */
static cg_tensor *scale_alpha(cg_tensor *o, PyObject *alpha, cg_dtype dt, const char *fname) {
    if (alpha && !cgpy_is_scalar(alpha)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'alpha' must be a Number, not %.100s", fname,
                     Py_TYPE(alpha)->tp_name);
        return NULL;
    }
    if (alpha && PyFloat_Check(alpha) && !cg_dtype_is_floating(dt)) {
        PyErr_SetString(PyExc_RuntimeError,
                        "For integral input tensors, argument alpha must not be a floating point number.");
        return NULL;
    }
    if (alpha && dt != CG_DTYPE_BOOL && PyBool_Check(alpha)) {
        PyErr_SetString(PyExc_RuntimeError, "Boolean alpha only supported for Boolean results.");
        return NULL;
    }
    double a = alpha ? PyFloat_AsDouble(alpha) : 1.0;
    if (a == -1.0 && PyErr_Occurred()) return NULL;
    if (a == 1.0) {
        cg_tensor_retain(o);
        return o;
    }
    cg_tensor *s = cgpy_as_tensor(alpha, dt, cg_tensor_device(o));
    if (!s) return NULL;
    cg_tensor *r = cg_mul(o, s);
    cg_tensor_release(s);
    if (!r) cgpy_raise();
    return r;
}

static bool is_bool(PyObject *o) { return PyBool_Check(o) || (cgpy_is_tensor(o) && cg_tensor_dtype(cgpy_t(o)) == CG_DTYPE_BOOL); }
static PyObject *sub_bool_error(void) {
    PyErr_SetString(PyExc_RuntimeError, "Subtraction, the `-` operator, with a bool tensor is not supported. "
                                        "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.");
    return NULL;
}

static PyObject *add_sub_tensors(PyObject *const *v, binary_fn fn, const char *fname);
/* add / sub (input, other, *, alpha, out) */
static PyObject *add_sub(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw, binary_fn fn,
                         const char *fname) {
    static const char *const names[] = {"input", "other", "alpha", "out", NULL};
    PyObject *v[4];
    if (!kw && nargs == 1 && cgpy_is_method(self)) {
        v[0] = self;
        v[1] = args[0];
        v[2] = v[3] = NULL;
    } else if (cgpy_parse_fastkw(self, args, nargs, kw, fname, names, 2, 2, v)) {
        return NULL;
    }
    PyObject *number_input = NULL; /* Note [Two numbers] */
    if (!cgpy_is_tensor(v[0]) && !cgpy_is_tensor(v[1])) {
        if (!(number_input = two_numbers_input(fname, v[0], v[1])))
            return PyErr_Occurred() ? NULL : (cgpy_need_tensor(v[0], fname, "input"), NULL);
        v[0] = number_input;
    }
    PyObject *res = add_sub_tensors(v, fn, fname);
    Py_XDECREF(number_input);
    return res;
}
static PyObject *add_sub_tensors(PyObject *const *v, binary_fn fn, const char *fname) {
    if (fn == cg_sub && (is_bool(v[0]) || is_bool(v[1]))) return sub_bool_error();
    PyObject *ops[2] = {v[0], v[1]};
    cg_tensor *t[2];
    cg_dtype dt;
    if (cgpy_promote_operands(2, ops, false, t, &dt)) return NULL;
    cg_tensor *o = scale_alpha(t[1], v[2], dt, fname);
    cg_tensor *r = o ? fn(t[0], o) : NULL;
    if (o) cg_tensor_release(o);
    cgpy_release_n(2, t);
    if (!r && !PyErr_Occurred()) cgpy_raise();
    return r ? finish(v[3], r, fname, CGPY_OUT_CAST, v[0], v[1]) : NULL;
}
static PyObject *add_sub_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw, const char *opname,
                          const char *fname) {
    static const char *const names[] = {"input", "other", "alpha", NULL};
    PyObject *v[3];
    if (cgpy_parse_fastkw(self, args, nargs, kw, fname, names, 2, 2, v) || cgpy_need_tensor(v[0], fname, "input"))
        return NULL;
    if (opname[0] == 's' && (is_bool(v[0]) || is_bool(v[1]))) return sub_bool_error();
    cg_tensor *t = cgpy_t(v[0]);
    cg_dtype dt, sdt = cg_tensor_dtype(t);
    if (cgpy_result_type(2, v, &dt) || cgpy_check_cast(dt, sdt)) return NULL;
    cg_tensor *o = cgpy_like_operand(v[1], t);
    if (!o) return NULL;
    cg_tensor *so = scale_alpha(o, v[2], dt, fname);
    cg_tensor_release(o);
    if (!so) return NULL;
    /* a cast or alpha-scaled copy hides the overlap from the engine's check: test other as given */
    if (so != cgpy_tensor_or_null(v[1]) && inplace_overlap(opname, t, v[1])) {
        cg_tensor_release(so);
        return NULL;
    }
    cg_status st = cg_binary_(opname, t, so);
    cg_tensor_release(so);
    return cgpy_inplace_result(v[0], st);
}
static PyObject *py_add(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {
    return add_sub(self, args, nargs, kw, cg_add, "add");
}
static PyObject *py_sub(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {
    return add_sub(self, args, nargs, kw, cg_sub, "sub");
}
static PyObject *py_add_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {
    return add_sub_(self, args, nargs, kw, "add", "add_");
}
static PyObject *py_sub_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {
    return add_sub_(self, args, nargs, kw, "sub", "sub_");
}

/* ---------------------------------------------------------------- div with rounding_mode */

/* a / b truncated toward zero: trunc of the true quotient for floats; for
 * integers (a - fmod(a, b)) is an exact multiple of b, so floor division of
 * it is exact. */
static cg_tensor *div_trunc(cg_tensor *a, cg_tensor *b) {
    if (cg_dtype_is_floating(cg_tensor_dtype(a))) {
        cg_tensor *q = cg_div(a, b);
        cg_tensor *r = q ? cg_trunc(q) : NULL;
        if (q) cg_tensor_release(q);
        return r;
    }
    cg_tensor *m = cg_fmod(a, b);
    cg_tensor *d = m ? cg_sub(a, m) : NULL;
    cg_tensor *r = d ? cg_floor_divide(d, b) : NULL;
    if (m) cg_tensor_release(m);
    if (d) cg_tensor_release(d);
    return r;
}
static const binary_def B_div = {"div", cg_div, CGPY_PROMOTE_div, OPND_ANY};
static const binary_def B_div_trunc = {"div", div_trunc, BK_ARITH, OPND_ANY};
static const binary_def B_div_floor = {"div", cg_floor_divide, BK_ARITH, OPND_ANY};

static int rounding_mode(PyObject *o, const binary_def **d) {
    *d = &B_div;
    if (!o || o == Py_None) return 0;
    if (PyUnicode_Check(o) && !PyUnicode_CompareWithASCIIString(o, "trunc")) *d = &B_div_trunc;
    else if (PyUnicode_Check(o) && !PyUnicode_CompareWithASCIIString(o, "floor")) *d = &B_div_floor;
    else {
        PyErr_Format(PyExc_RuntimeError,
                     "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found %R", o);
        return -1;
    }
    return 0;
}
static PyObject *py_div(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {
    static const char *const names[] = {"input", "other", "rounding_mode", "out", NULL};
    PyObject *v[4];
    if (!kw && nargs == 1 && cgpy_is_method(self)) return binary_call(&B_div, self, args, nargs, kw);
    const binary_def *d;
    if (cgpy_parse_fastkw(self, args, nargs, kw, "div", names, 2, 2, v) || rounding_mode(v[2], &d)) return NULL;
    cg_tensor *r = binary_apply(d, v[0], v[1]);
    return r ? finish(v[3], r, "div", CGPY_OUT_CAST, v[0], v[1]) : NULL;
}
static PyObject *py_div_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {
    if (!kw) return binary_inplace(&B_div, py_div, self, args, nargs, kw);
    return cgpy_inplace_via("div", py_div, self, args, nargs, kw);
}

/* ---------------------------------------------------------------- pow / float_power */

static cg_tensor *pow_apply(PyObject *a, PyObject *b, bool f64, const char *fname) {
    if (!cgpy_is_tensor(a) && !cgpy_is_tensor(b)) return cgpy_need_tensor(a, fname, "input"), NULL;
    PyObject *ops[2] = {a, b};
    cg_dtype dt = CG_DTYPE_F64;
    if (!f64 && cgpy_result_type(2, ops, &dt)) return NULL;
    if (cgpy_is_tensor(a) && cgpy_is_scalar(b)) {
        double e = PyFloat_AsDouble(b);
        if (e == -1.0 && PyErr_Occurred()) return NULL;
        if (!cg_dtype_is_floating(dt) && dt != CG_DTYPE_BOOL && e < 0) {
            PyErr_SetString(PyExc_RuntimeError, "Integers to negative integer powers are not allowed.");
            return NULL;
        }
        cg_tensor *x = cg_to_dtype(cgpy_t(a), dt);
        /* bool ** bool: x ** True is x, x ** False is all true */
        cg_tensor *r = !x ? NULL : dt != CG_DTYPE_BOOL ? cg_pow_scalar(x, e) : e != 0 ? cg_clone(x) : cg_ones_like(x);
        if (x) cg_tensor_release(x);
        if (!r) cgpy_raise();
        return r;
    }
    cg_tensor *t[2];
    cg_device dev = cg_tensor_device(cgpy_t(cgpy_is_tensor(a) ? a : b));
    if (!(t[0] = cgpy_as_tensor(a, dt, dev))) return NULL;
    if (!(t[1] = cgpy_as_tensor(b, dt, dev))) return cg_tensor_release(t[0]), NULL;
    cg_tensor *r = cg_pow(t[0], t[1]);
    cgpy_release_n(2, t);
    if (!r) cgpy_raise();
    return r;
}
static PyObject *pow_common(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw, bool f64,
                            const char *fname) {
    static const char *const names[] = {"input", "exponent", "out", NULL};
    PyObject *v[3];
    if (cgpy_parse_fastkw(self, args, nargs, kw, fname, names, 2, 2, v)) return NULL;
    cg_tensor *r = pow_apply(v[0], v[1], f64, fname);
    /* float_power's result is float64 and PyTorch asks for exactly that */
    return r ? finish(v[2], r, fname, f64 ? CGPY_OUT_EXACT : CGPY_OUT_CAST, v[0], v[1]) : NULL;
}
static PyObject *py_pow(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {
    return pow_common(self, args, nargs, kw, false, "pow");
}
static PyObject *py_float_power(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {
    return pow_common(self, args, nargs, kw, true, "float_power");
}
static PyObject *py_pow_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {
    return cgpy_inplace_via("pow", py_pow, self, args, nargs, kw);
}
static PyObject *py_float_power_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {
    if (cgpy_is_method(self) && cg_tensor_dtype(cgpy_t(self)) != CG_DTYPE_F64) {
        PyErr_Format(PyExc_RuntimeError,
                     "the base given to float_power_ has dtype %s but the operation's result requires dtype float64",
                     cg_dtype_name(cg_tensor_dtype(cgpy_t(self))));
        return NULL;
    }
    return cgpy_inplace_via("float_power", py_float_power, self, args, nargs, kw);
}

/* ---------------------------------------------------------------- closeness and equality */

static int close_args(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw, const char *fname,
                      cg_tensor **out) {
    static const char *const names[] = {"input", "other", "rtol", "atol", "equal_nan", NULL};
    PyObject *v[5];
    double rtol = 1e-5, atol = 1e-8;
    if (cgpy_parse_fastkw(self, args, nargs, kw, fname, names, 5, 2, v) || cgpy_need_tensor(v[0], fname, "input") ||
        cgpy_need_tensor(v[1], fname, "other"))
        return -1;
    if ((v[2] && cgpy_parse_double(v[2], &rtol, "rtol")) || (v[3] && cgpy_parse_double(v[3], &atol, "atol"))) return -1;
    int eqnan = v[4] ? PyObject_IsTrue(v[4]) : 0;
    if (eqnan < 0) return -1;
    cg_tensor *a = cgpy_t(v[0]), *b = cgpy_t(v[1]);
    if (cg_tensor_dtype(a) != cg_tensor_dtype(b)) {
        PyErr_Format(PyExc_RuntimeError, "%s: %s did not match %s", fname, cg_dtype_name(cg_tensor_dtype(a)),
                     cg_dtype_name(cg_tensor_dtype(b)));
        return -1;
    }
    *out = cg_isclose(a, b, rtol, atol, eqnan);
    if (!*out) return cgpy_raise(), -1;
    return 0;
}
static PyObject *py_isclose(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {
    cg_tensor *r;
    return close_args(self, args, nargs, kw, "isclose", &r) ? NULL : cgpy_wrap(r);
}
/* all of a bool tensor as a Python bool (r stolen) */
static PyObject *all_true(cg_tensor *r) {
    cg_tensor *all = cg_all(r, 0, NULL, false);
    cg_tensor_release(r);
    if (!all) return cgpy_raise();
    double v = 0;
    cg_status st = cg_tensor_item(all, &v);
    cg_tensor_release(all);
    if (cgpy_check(st)) return NULL;
    return PyBool_FromLong(v != 0);
}
static PyObject *py_allclose(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {
    cg_tensor *r;
    return close_args(self, args, nargs, kw, "allclose", &r) ? NULL : all_true(r);
}
/* equal(input, other): same shape and equal elements (after promotion) */
static PyObject *py_equal(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {
    static const char *const names[] = {"input", "other", NULL};
    PyObject *v[2];
    if (cgpy_parse_fastkw(self, args, nargs, kw, "equal", names, 2, 2, v) || cgpy_need_tensor(v[0], "equal", "input") ||
        cgpy_need_tensor(v[1], "equal", "other"))
        return NULL;
    if (!same_shape(cgpy_t(v[0]), cgpy_t(v[1]))) Py_RETURN_FALSE;
    static const binary_def eq = {"equal", cg_eq, BK_BOOL, OPND_BOTH};
    cg_tensor *r = binary_apply(&eq, v[0], v[1]);
    return r ? all_true(r) : NULL;
}

/* ================================================================ tables */

#define FN(name, cfn) CGPY_FASTKW(name, cfn)
#define OP(name) FN(#name, py_##name)
#define IP(name) FN(#name "_", py_##name##_)
#define ALIAS(alias, name) FN(#alias, py_##name)
#define ALIAS_IP(alias, name) FN(#alias "_", py_##name##_)
#define UNARY_ENTRY(name, kind, copy) OP(name),
#define UNARY_IP_ENTRY(name, kind, copy) IP(name),
#define BINARY_ENTRY(name, kind, strict) OP(name),
#define BINARY_IP_ENTRY(name, kind, strict) IP(name),
#define ACT_ENTRY(name) FN(#name, cgpy_act_##name),

/* entries shared by the Tensor methods and the module functions */
#define MATH_COMMON                                                                                          \
    UNARY_OPS(UNARY_ENTRY) CGPY_UNARY_NOIP_OPS(UNARY_ENTRY) BINARY_IP_OPS(BINARY_ENTRY)                      \
        CGPY_BINARY_NOIP_OPS(BINARY_ENTRY) OP(isposinf), OP(isneginf), OP(positive), OP(round), OP(add),        \
        OP(sub), OP(div), OP(pow), OP(float_power), OP(fmax), OP(fmin), OP(isclose), OP(allclose), OP(equal),  \
        ALIAS(absolute, abs), ALIAS(negative, neg), ALIAS(fix, trunc), ALIAS(arcsin, asin),                   \
        ALIAS(arccos, acos), ALIAS(arctan, atan), ALIAS(arcsinh, asinh), ALIAS(arccosh, acosh),               \
        ALIAS(arctanh, atanh), ALIAS(arctan2, atan2), ALIAS(subtract, sub), ALIAS(multiply, mul),             \
        ALIAS(divide, div), ALIAS(true_divide, div), ALIAS(greater, gt), ALIAS(greater_equal, ge),            \
        ALIAS(less, lt), ALIAS(less_equal, le), ALIAS(not_equal, ne)

PyMethodDef cgpy_math_methods[] = {
    MATH_COMMON,
    UNARY_OPS(UNARY_IP_ENTRY) BINARY_IP_OPS(BINARY_IP_ENTRY) IP(round), IP(add), IP(sub), IP(div), IP(pow),
    IP(float_power), ALIAS_IP(absolute, abs), ALIAS_IP(negative, neg), ALIAS_IP(fix, trunc),
    ALIAS_IP(arcsin, asin), ALIAS_IP(arccos, acos), ALIAS_IP(arctan, atan), ALIAS_IP(arcsinh, asinh),
    ALIAS_IP(arccosh, acosh), ALIAS_IP(arctanh, atanh), ALIAS_IP(arctan2, atan2), ALIAS_IP(subtract, sub),
    ALIAS_IP(multiply, mul), ALIAS_IP(divide, div), ALIAS_IP(true_divide, div), ALIAS_IP(greater, gt),
    ALIAS_IP(greater_equal, ge), ALIAS_IP(less, lt), ALIAS_IP(less_equal, le), ALIAS_IP(not_equal, ne),
    CGPY_ACTIVATION_TENSOR_METHODS(ACT_ENTRY)
    CGPY_TABLE_END,
};

PyMethodDef cgpy_math_functions[] = {
    MATH_COMMON,
    CGPY_UNARY_FUNCTION_OPS(UNARY_ENTRY) CGPY_UNARY_FUNCTION_OPS(UNARY_IP_ENTRY) IP(relu), IP(sigmoid), IP(tanh),
    CGPY_ACTIVATION_FUNCTIONS(ACT_ENTRY)
    CGPY_TABLE_END,
};
