/* number.c — the Tensor's number slots and rich comparisons: `a + b` goes
 * from the nb_add slot straight into C (no Python frame): operand
 * normalisation (NumPy scalars act as Python numbers, ndarrays as tensors),
 * PyTorch type promotion and dtype checks here, then the strict engine op.
 * Also the in-place forms (`a += b`: the result dtype must cast to a's),
 * unary operators, scalar conversions (__bool__, __float__, __int__,
 * __index__) and `element in tensor`. */
#include "bind.h"
#include "elementwise_ops.gen.h" /* the op table's promotion kinds (tools/gen_ops.py) */

/* interop.c: NumPy objects without importing NumPy */
extern int cgpy_numpy_kind(PyObject *o);
extern cg_tensor *cgpy_tensor_from_numpy(PyObject *o, int dtype, int copy);

typedef cg_tensor *(*binop_fn)(cg_tensor *, cg_tensor *);

/* Operator families: what dtypes they accept and how the result dtype follows. */
enum {
    K_ARITH,   /* + *: result_type */
    K_SUB,     /* -: no bool operand */
    K_TRUEDIV, /* /: integers compute in the default float dtype */
    K_DIVMOD,  /* // %: no bool */
    K_COMPARE, /* == != < ...: bool result */
    K_BITWISE, /* & | ^: integers and bool */
    K_SHIFT,   /* << >>: integers */
    K_POW,     /* **: no bool ** bool */
};

typedef struct {
    const char *name; /* engine op name (also used by the in-place form) */
    binop_fn fn;
    int kind;
} binop;

static const binop OP_ADD = {"add", cg_add, K_ARITH}, OP_SUB = {"sub", cg_sub, K_SUB}, OP_MUL = {"mul", cg_mul, K_ARITH},
                   OP_DIV = {"div", cg_div, K_TRUEDIV}, OP_FLOORDIV = {"floor_divide", cg_floor_divide, K_DIVMOD},
                   OP_REM = {"remainder", cg_remainder, K_DIVMOD}, OP_POW = {"pow", cg_pow, K_POW},
                   OP_AND = {"bitwise_and", cg_bitwise_and, K_BITWISE}, OP_OR = {"bitwise_or", cg_bitwise_or, K_BITWISE},
                   OP_XOR = {"bitwise_xor", cg_bitwise_xor, K_BITWISE},
                   OP_LSHIFT = {"bitwise_left_shift", cg_bitwise_left_shift, K_SHIFT},
                   OP_RSHIFT = {"bitwise_right_shift", cg_bitwise_right_shift, K_SHIFT};

/* PyTorch's scalar-type names, used in its messages ('Float', 'Long', ...) */
const char *cgpy_torch_type_name(cg_dtype dt) {
    static const char *names[CG_DTYPE_COUNT] = {
        [CG_DTYPE_BOOL] = "Bool", [CG_DTYPE_U8] = "Byte",   [CG_DTYPE_I8] = "Char",     [CG_DTYPE_I16] = "Short",
        [CG_DTYPE_I32] = "Int",   [CG_DTYPE_I64] = "Long",  [CG_DTYPE_F16] = "Half",    [CG_DTYPE_BF16] = "BFloat16",
        [CG_DTYPE_F32] = "Float", [CG_DTYPE_F64] = "Double", [CG_DTYPE_U16] = "UInt16", [CG_DTYPE_U32] = "UInt32",
        [CG_DTYPE_U64] = "UInt64",
    };
    return (int)dt >= 0 && dt < CG_DTYPE_COUNT && names[dt] ? names[dt] : "Unknown";
}

static PyObject *not_implemented_for(const char *op, cg_dtype dt) {
    PyErr_Format(PyExc_NotImplementedError, "\"%s\" not implemented for '%s'", op, cgpy_torch_type_name(dt));
    return NULL;
}

/* An operand as a tensor or a Python scalar (new reference in *out): NumPy
 * scalars become Python numbers and NumPy arrays tensors (copied), as PyTorch
 * accepts them. Returns 1, 0 when `o` is no operand (-> NotImplemented) or -1
 * (raised). */
static int norm_operand(PyObject *o, PyObject **out) {
    if (cgpy_is_tensor(o) || cgpy_is_scalar(o)) {
        Py_INCREF(o);
        *out = o;
        return 1;
    }
    int k = cgpy_numpy_kind(o);
    if (k <= 0) return k;
    if (k == 1) {
        cg_tensor *t = cgpy_tensor_from_numpy(o, -1, 1);
        if (!t) return -1;
        *out = cgpy_wrap(t);
        return *out ? 1 : -1;
    }
    /* NumPy scalar: bool, integer (has __index__) or floating */
    PyObject *item = PyObject_CallMethod(o, "item", NULL);
    if (!item) return -1;
    if (cgpy_is_scalar(item)) {
        *out = item;
        return 1;
    }
    Py_DECREF(item);
    return 0; /* complex, datetime, ...: not a number cgrad handles */
}

static int is_bool_operand(PyObject *o) {
    return PyBool_Check(o) || (cgpy_is_tensor(o) && cg_tensor_dtype(cgpy_t(o)) == CG_DTYPE_BOOL);
}

/* the op's device: a tensor operand's, a 0-d CPU tensor giving way (Note [CPU scalars on CUDA] in bind.c) */
static bool cpu_scalar_operand(PyObject *o) {
    return cgpy_is_tensor(o) && cg_tensor_ndim(cgpy_t(o)) == 0 && cg_tensor_device(cgpy_t(o)).type == CG_DEVICE_CPU;
}
static cg_device device_of(PyObject *a, PyObject *b) {
    if (cgpy_is_tensor(a) && cg_tensor_ndim(cgpy_t(a)) > 0) return cg_tensor_device(cgpy_t(a));
    if (cgpy_is_tensor(b) && cg_tensor_ndim(cgpy_t(b)) > 0) return cg_tensor_device(cgpy_t(b));
    if (cgpy_is_tensor(a) && cgpy_is_tensor(b) && cpu_scalar_operand(a)) return cg_tensor_device(cgpy_t(b));
    return cgpy_is_tensor(a) ? cg_tensor_device(cgpy_t(a)) : cg_tensor_device(cgpy_t(b));
}

/* dtype checks of an operator family on its computed dtype (PyTorch's errors) */
static int check_kind(const binop *op, PyObject *a, PyObject *b, cg_dtype dt) {
    switch (op->kind) {
    case K_SUB:
        if (is_bool_operand(a) && is_bool_operand(b)) {
            PyErr_SetString(PyExc_RuntimeError, "Subtraction, the `-` operator, with two bool tensors is not supported. "
                                                "Use the `^` or `logical_xor()` operator instead.");
            return -1;
        }
        if (is_bool_operand(a) || is_bool_operand(b)) {
            PyErr_SetString(PyExc_RuntimeError,
                            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
                            "invert a mask, use the `~` or `logical_not()` operator instead.");
            return -1;
        }
        return 0;
    case K_DIVMOD:
    case K_POW:
        if (dt == CG_DTYPE_BOOL) return not_implemented_for(op->name, dt), -1;
        return 0;
    case K_BITWISE:
        if (cg_dtype_is_floating(dt)) return not_implemented_for(op->name, dt), -1;
        return 0;
    case K_SHIFT:
        if (cg_dtype_is_floating(dt) || dt == CG_DTYPE_BOOL) return not_implemented_for(op->name, dt), -1;
        return 0;
    default:
        return 0;
    }
}

/* compute dtype of `a op b` (operands normalised), checked */
static int op_dtype(const binop *op, PyObject *a, PyObject *b, cg_dtype *dt) {
    PyObject *ops[2] = {a, b};
    if (cgpy_result_type(2, ops, dt)) return -1;
    if (op->kind == K_TRUEDIV) *dt = cgpy_promoted_dtype(CGPY_PROMOTE_div, *dt); /* div's row */
    return check_kind(op, a, b, *dt);
}

/* may two same-dtype tensors skip promotion and checks? */
static int fast_ok(int kind, cg_dtype dt) {
    switch (kind) {
    case K_ARITH:
    case K_COMPARE: return 1;
    case K_TRUEDIV: return cg_dtype_is_floating(dt);
    case K_SUB:
    case K_DIVMOD:
    case K_POW: return dt != CG_DTYPE_BOOL;
    case K_BITWISE: return !cg_dtype_is_floating(dt);
    default: return !cg_dtype_is_floating(dt) && dt != CG_DTYPE_BOOL;
    }
}

/* engine calls drop the GIL when the work is large (bind.h) */
static int64_t work_of(cg_tensor *x, cg_tensor *y) {
    int64_t a = cg_tensor_numel(x), b = y ? cg_tensor_numel(y) : 0;
    return a > b ? a : b;
}
static cg_tensor *call2(binop_fn fn, cg_tensor *x, cg_tensor *y) {
    cg_tensor *r;
    CGPY_NOGIL_IF(work_of(x, y), r = fn(x, y));
    return r;
}
static cg_tensor *call1(cg_tensor *(*fn)(cg_tensor *), cg_tensor *x) {
    cg_tensor *r;
    CGPY_NOGIL_IF(cg_tensor_numel(x), r = fn(x));
    return r;
}

/* `a op b` on normalised operands with the computed dtype */
static PyObject *binary_promoted(const binop *op, PyObject *a, PyObject *b) {
    cg_dtype dt;
    if (op_dtype(op, a, b, &dt)) return NULL;
    cg_device dev = device_of(a, b);
    cg_tensor *x = cgpy_as_operand(a, dt, dev);
    if (!x) return NULL;
    cg_tensor *y = cgpy_as_operand(b, dt, dev);
    if (!y) {
        cg_tensor_release(x);
        return NULL;
    }
    cg_tensor *r = call2(op->fn, x, y);
    cg_tensor_release(x);
    cg_tensor_release(y);
    return cgpy_result(r);
}

static PyObject *binary(PyObject *a, PyObject *b, const binop *op) {
    /* fast path: two tensors of one dtype */
    if (cgpy_is_tensor(a) && cgpy_is_tensor(b) && cg_tensor_dtype(cgpy_t(a)) == cg_tensor_dtype(cgpy_t(b)) &&
        fast_ok(op->kind, cg_tensor_dtype(cgpy_t(a))) &&
        cg_tensor_device(cgpy_t(a)).type == cg_tensor_device(cgpy_t(b)).type)
        return cgpy_result(call2(op->fn, cgpy_t(a), cgpy_t(b)));
    PyObject *x, *y;
    int k = norm_operand(a, &x);
    if (k <= 0) return k ? NULL : Py_NewRef(Py_NotImplemented);
    if ((k = norm_operand(b, &y)) <= 0) {
        Py_DECREF(x);
        return k ? NULL : Py_NewRef(Py_NotImplemented);
    }
    PyObject *r = cgpy_is_tensor(x) || cgpy_is_tensor(y) ? binary_promoted(op, x, y) : Py_NewRef(Py_NotImplemented);
    Py_DECREF(x);
    Py_DECREF(y);
    return r;
}

/* a op= b: the result dtype must be castable to a's dtype (PyTorch's rule:
 * no float result into an integer tensor, no int into bool). b is cast to
 * a's dtype and the engine's in-place op runs by name. */
static PyObject *inplace(PyObject *a, PyObject *b, const binop *op) {
    if (!cgpy_is_tensor(a)) Py_RETURN_NOTIMPLEMENTED;
    PyObject *y;
    int k = norm_operand(b, &y);
    if (k <= 0) return k ? NULL : Py_NewRef(Py_NotImplemented);
    cg_tensor *self = cgpy_t(a), *o = NULL;
    cg_dtype dt, sdt = cg_tensor_dtype(self);
    PyObject *res = NULL;
    if (op->kind == K_POW && sdt == CG_DTYPE_BOOL && PyBool_Check(y)) { /* b **= True keeps b, **= False gives ones */
        if (y == Py_False && cgpy_check(cg_fill_(self, 1))) goto done;
        res = Py_NewRef(a);
        goto done;
    }
    if (op_dtype(op, a, y, &dt)) goto done;
    if ((cg_dtype_is_floating(dt) && !cg_dtype_is_floating(sdt)) || (sdt == CG_DTYPE_BOOL && dt != CG_DTYPE_BOOL)) {
        PyErr_Format(PyExc_RuntimeError, "result type %s can't be cast to the desired output type %s",
                     cgpy_torch_type_name(dt), cgpy_torch_type_name(sdt));
        goto done;
    }
    if (op->kind == K_POW && !cg_dtype_is_floating(sdt) && PyLong_Check(y) && !PyBool_Check(y) &&
        PyObject_RichCompareBool(y, Py_False, Py_LT) == 1) {
        PyErr_SetString(PyExc_RuntimeError, "Integers to negative integer powers are not allowed.");
        goto done;
    }
    if (!(o = cgpy_as_operand(y, sdt, cg_tensor_device(self)))) goto done;
    /* Note [Memory overlap]: a cast copy hides the overlap from the engine's check: test y as given */
    if (cgpy_is_tensor(y) && o != cgpy_t(y) && cgpy_overlap_refused(self, cgpy_t(y), false)) {
        char fname[64];
        snprintf(fname, sizeof fname, "%s_", op->name);
        cgpy_check_overlap(fname, self, cgpy_t(y), false);
        goto done;
    }
    cg_status st;
    CGPY_NOGIL_IF(work_of(self, o), st = cg_binary_(op->name, self, o));
    if (st != CG_OK) {
        cgpy_raise();
        goto done;
    }
    res = Py_NewRef(a);
done:
    cg_tensor_release(o);
    Py_DECREF(y);
    return res;
}

/* ------------------------------------------------------------- ** */

/* tensor ** Python number: the engine's pow_scalar (PowBackward0) */
static PyObject *pow_tensor_scalar(PyObject *a, PyObject *e) {
    cg_dtype dt;
    if (op_dtype(&OP_POW, a, e, &dt) && !(PyErr_ExceptionMatches(PyExc_NotImplementedError) && PyBool_Check(e))) return NULL;
    PyErr_Clear();
    cg_tensor *t = cgpy_t(a);
    if (dt == CG_DTYPE_BOOL) /* bool ** True is the tensor, bool ** False is ones (PyTorch) */
        return cgpy_wrap(e == Py_True ? cg_clone(t) : cg_ones_like(t));
    double v = PyFloat_AsDouble(e);
    if (v == -1.0 && PyErr_Occurred()) return NULL;
    if (!cg_dtype_is_floating(dt) && v < 0) {
        PyErr_SetString(PyExc_RuntimeError, "Integers to negative integer powers are not allowed.");
        return NULL;
    }
    cg_tensor *x = cg_to_dtype(t, dt);
    if (!x) return cgpy_raise();
    cg_tensor *r;
    CGPY_NOGIL_IF(cg_tensor_numel(x), r = cg_pow_scalar(x, v));
    cg_tensor_release(x);
    return cgpy_wrap(r);
}

/* Python number ** tensor: rpow_scalar for float results, else integer pow */
static PyObject *pow_scalar_tensor(PyObject *base, PyObject *b) {
    cg_dtype dt;
    if (op_dtype(&OP_POW, base, b, &dt)) return NULL;
    if (!cg_dtype_is_floating(dt)) return binary_promoted(&OP_POW, base, b);
    double v = PyFloat_AsDouble(base);
    if (v == -1.0 && PyErr_Occurred()) return NULL;
    cg_tensor *x = cg_to_dtype(cgpy_t(b), dt);
    if (!x) return cgpy_raise();
    cg_tensor *r;
    CGPY_NOGIL_IF(cg_tensor_numel(x), r = cg_rpow_scalar(v, x));
    cg_tensor_release(x);
    return cgpy_wrap(r);
}

static PyObject *nb_pow(PyObject *a, PyObject *b, PyObject *mod) {
    if (mod != Py_None) Py_RETURN_NOTIMPLEMENTED;
    PyObject *x, *y, *r;
    int k = norm_operand(a, &x);
    if (k <= 0) return k ? NULL : Py_NewRef(Py_NotImplemented);
    if ((k = norm_operand(b, &y)) <= 0) {
        Py_DECREF(x);
        return k ? NULL : Py_NewRef(Py_NotImplemented);
    }
    if (cgpy_is_tensor(x) && cgpy_is_scalar(y)) r = pow_tensor_scalar(x, y);
    else if (cgpy_is_scalar(x) && cgpy_is_tensor(y)) r = pow_scalar_tensor(x, y);
    else if (cgpy_is_tensor(x)) r = binary(x, y, &OP_POW);
    else r = Py_NewRef(Py_NotImplemented);
    Py_DECREF(x);
    Py_DECREF(y);
    return r;
}
static PyObject *nb_ipow(PyObject *a, PyObject *b, PyObject *mod) {
    if (mod != Py_None) Py_RETURN_NOTIMPLEMENTED;
    return inplace(a, b, &OP_POW);
}

/* ------------------------------------------------------------- @ */

static PyObject *nb_matmul(PyObject *a, PyObject *b) {
    if (!cgpy_is_tensor(a) || !cgpy_is_tensor(b)) Py_RETURN_NOTIMPLEMENTED;
    cg_dtype da = cg_tensor_dtype(cgpy_t(a)), db = cg_tensor_dtype(cgpy_t(b));
    if (da != db) {
        PyErr_Format(PyExc_RuntimeError, "[matmul] expected both operands to have the same dtype, but got %s and %s",
                     cgpy_torch_type_name(da), cgpy_torch_type_name(db));
        return NULL;
    }
    if (da == CG_DTYPE_BOOL) return not_implemented_for("matmul", da);
    return cgpy_wrap(call2(cg_matmul, cgpy_t(a), cgpy_t(b)));
}

/* ------------------------------------------------------------- slots */

#define BINARY_SLOTS(slot, OP)                                                                                 \
    static PyObject *nb_##slot(PyObject *a, PyObject *b) { return binary(a, b, &OP); }                        \
    static PyObject *nb_i##slot(PyObject *a, PyObject *b) { return inplace(a, b, &OP); }
BINARY_SLOTS(add, OP_ADD)
BINARY_SLOTS(sub, OP_SUB)
BINARY_SLOTS(mul, OP_MUL)
BINARY_SLOTS(truediv, OP_DIV)
BINARY_SLOTS(floordiv, OP_FLOORDIV)
BINARY_SLOTS(rem, OP_REM)
BINARY_SLOTS(and, OP_AND)
BINARY_SLOTS(or, OP_OR)
BINARY_SLOTS(xor, OP_XOR)
BINARY_SLOTS(lshift, OP_LSHIFT)
BINARY_SLOTS(rshift, OP_RSHIFT)
#undef BINARY_SLOTS

static PyObject *nb_neg(PyObject *a) {
    if (cg_tensor_dtype(cgpy_t(a)) == CG_DTYPE_BOOL) {
        PyErr_SetString(PyExc_RuntimeError, "Negation, the `-` operator, on a bool tensor is not supported. If you are "
                                            "trying to invert a mask, use the `~` or `logical_not()` operator instead.");
        return NULL;
    }
    return cgpy_wrap(call1(cg_neg, cgpy_t(a)));
}
static PyObject *nb_pos(PyObject *a) {
    if (cg_tensor_dtype(cgpy_t(a)) == CG_DTYPE_BOOL) {
        PyErr_SetString(PyExc_RuntimeError, "The `+` operator, on a bool tensor is not supported.");
        return NULL;
    }
    return Py_NewRef(a);
}
static PyObject *nb_abs(PyObject *a) {
    if (cg_tensor_dtype(cgpy_t(a)) == CG_DTYPE_BOOL) return not_implemented_for("abs", CG_DTYPE_BOOL);
    return cgpy_wrap(call1(cg_abs, cgpy_t(a)));
}
static PyObject *nb_invert(PyObject *a) {
    cg_dtype dt = cg_tensor_dtype(cgpy_t(a));
    if (cg_dtype_is_floating(dt)) {
        PyErr_SetString(PyExc_TypeError, "~ (operator.invert) is only implemented on integer and Boolean-type tensors");
        return NULL;
    }
    return cgpy_wrap(call1(dt == CG_DTYPE_BOOL ? cg_logical_not : cg_bitwise_not, cgpy_t(a)));
}

/* The value of a one-element tensor as a Python scalar (int / float / bool). */
static PyObject *scalar_value(PyObject *a) {
    cg_tensor *t = cgpy_t(a);
    if (cg_tensor_numel(t) != 1) {
        PyErr_SetString(PyExc_ValueError, "only one element tensors can be converted to Python scalars");
        return NULL;
    }
    return PyObject_CallMethod(a, "item", NULL);
}
static PyObject *nb_float(PyObject *a) {
    PyObject *v = scalar_value(a), *r = v ? PyNumber_Float(v) : NULL;
    Py_XDECREF(v);
    return r;
}
static PyObject *nb_int(PyObject *a) {
    PyObject *v = scalar_value(a), *r = v ? PyNumber_Long(v) : NULL;
    Py_XDECREF(v);
    return r;
}
static PyObject *nb_index(PyObject *a) {
    cg_tensor *t = cgpy_t(a);
    if (cg_dtype_is_floating(cg_tensor_dtype(t)) || cg_tensor_numel(t) != 1) {
        PyErr_SetString(PyExc_TypeError, "only integer tensors of a single element can be converted to an index");
        return NULL;
    }
    return nb_int(a);
}
static int nb_bool(PyObject *a) {
    cg_tensor *t = cgpy_t(a);
    if (cg_tensor_numel(t) != 1) {
        PyErr_Format(PyExc_RuntimeError, "Boolean value of Tensor with %s is ambiguous",
                     cg_tensor_numel(t) ? "more than one value" : "no values");
        return -1;
    }
    double v;
    if (cgpy_check(cg_tensor_item(t, &v))) return -1;
    return v != 0;
}

PyNumberMethods cgpy_number_methods = {
    .nb_add = nb_add,
    .nb_subtract = nb_sub,
    .nb_multiply = nb_mul,
    .nb_true_divide = nb_truediv,
    .nb_floor_divide = nb_floordiv,
    .nb_remainder = nb_rem,
    .nb_power = nb_pow,
    .nb_matrix_multiply = nb_matmul,
    .nb_and = nb_and,
    .nb_or = nb_or,
    .nb_xor = nb_xor,
    .nb_lshift = nb_lshift,
    .nb_rshift = nb_rshift,
    .nb_inplace_add = nb_iadd,
    .nb_inplace_subtract = nb_isub,
    .nb_inplace_multiply = nb_imul,
    .nb_inplace_true_divide = nb_itruediv,
    .nb_inplace_floor_divide = nb_ifloordiv,
    .nb_inplace_remainder = nb_irem,
    .nb_inplace_power = nb_ipow,
    .nb_inplace_and = nb_iand,
    .nb_inplace_or = nb_ior,
    .nb_inplace_xor = nb_ixor,
    .nb_inplace_lshift = nb_ilshift,
    .nb_inplace_rshift = nb_irshift,
    .nb_negative = nb_neg,
    .nb_positive = nb_pos,
    .nb_absolute = nb_abs,
    .nb_invert = nb_invert,
    .nb_float = nb_float,
    .nb_int = nb_int,
    .nb_index = nb_index,
    .nb_bool = nb_bool,
};

PyObject *cgpy_richcompare(PyObject *a, PyObject *b, int op) {
    static const binop ops[6] = {{"lt", cg_lt, K_COMPARE}, {"le", cg_le, K_COMPARE}, {"eq", cg_eq, K_COMPARE},
                                 {"ne", cg_ne, K_COMPARE}, {"gt", cg_gt, K_COMPARE}, {"ge", cg_ge, K_COMPARE}};
    if ((op == Py_EQ || op == Py_NE) && b == Py_None) return PyBool_FromLong(op == Py_NE);
    return binary(a, b, &ops[op]);
}

/* element in tensor: (tensor == element).any() for a Tensor or a number */
PyObject *cgpy_tensor_contains(PyObject *self, PyObject *el) {
    PyObject *x;
    int k = norm_operand(el, &x);
    if (k < 0) return NULL;
    if (k == 0) {
        PyObject *tn = PyObject_Repr((PyObject *)Py_TYPE(el));
        if (tn)
            PyErr_Format(PyExc_RuntimeError, "Tensor.__contains__ only supports Tensor or scalar, but you passed in a %U.",
                         tn);
        Py_XDECREF(tn);
        return NULL;
    }
    PyObject *eq = cgpy_richcompare(self, x, Py_EQ);
    Py_DECREF(x);
    if (!eq) return NULL;
    if (!cgpy_is_tensor(eq)) return eq;
    cg_tensor *any = cg_any(cgpy_t(eq), 0, NULL, false);
    Py_DECREF(eq);
    if (!any) return cgpy_raise();
    double v;
    cg_status st = cg_tensor_item(any, &v);
    cg_tensor_release(any);
    if (cgpy_check(st)) return NULL;
    return PyBool_FromLong(v != 0);
}
