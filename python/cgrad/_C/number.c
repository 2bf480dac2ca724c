/* number.c — the Tensor's number slots and rich comparisons: `a + b` goes
 * from the nb_add slot straight into C (no Python frame): scalar wrapping and
 * PyTorch type promotion here, then the strict engine op. */
#include "cgpy.h"

typedef cg_tensor *(*binop_fn)(cg_tensor *, cg_tensor *);

enum { K_ARITH, K_TRUEDIV, K_COMPARE, K_BITWISE, K_INT_ONLY_FLOATS_OK };

static int is_operand(PyObject *o) { return cgpy_is_tensor(o) || cgpy_is_scalar(o); }

static cg_device device_of(PyObject *a, PyObject *b) {
    if (cgpy_is_tensor(a) && cg_tensor_ndim(cgpy_t(a)) > 0) return cg_tensor_device(cgpy_t(a));
    if (cgpy_is_tensor(b) && cg_tensor_ndim(cgpy_t(b)) > 0) return cg_tensor_device(cgpy_t(b));
    return cgpy_is_tensor(a) ? cg_tensor_device(cgpy_t(a)) : cg_tensor_device(cgpy_t(b));
}

/* compute dtype of a binary op of this kind, and the dtype its operands are cast to */
static int op_dtypes(int kind, const char *name, PyObject *a, PyObject *b, cg_dtype *compute) {
    PyObject *ops[2] = {a, b};
    if (cgpy_result_type(2, ops, compute)) return -1;
    if (kind == K_TRUEDIV && !cg_dtype_is_floating(*compute)) *compute = cgpy_default_dtype;
    if (kind == K_BITWISE && cg_dtype_is_floating(*compute)) {
        PyErr_Format(PyExc_TypeError, "\"%s\" is not implemented for '%s' (bitwise ops need integer or bool tensors)", name,
                     cg_dtype_name(*compute));
        return -1;
    }
    return 0;
}

static PyObject *binary(PyObject *a, PyObject *b, binop_fn fn, int kind, const char *name) {
    if (!is_operand(a) || !is_operand(b)) Py_RETURN_NOTIMPLEMENTED;
    /* fast path: two tensors of one dtype */
    if (cgpy_is_tensor(a) && cgpy_is_tensor(b) && cg_tensor_dtype(cgpy_t(a)) == cg_tensor_dtype(cgpy_t(b)) &&
        (kind == K_ARITH || kind == K_COMPARE || (kind == K_TRUEDIV && cg_dtype_is_floating(cg_tensor_dtype(cgpy_t(a))))))
        return cgpy_wrap(fn(cgpy_t(a), cgpy_t(b)));
    cg_dtype dt;
    if (op_dtypes(kind, name, a, b, &dt)) return NULL;
    cg_device dev = device_of(a, b);
    cg_tensor *x = cgpy_as_tensor(a, dt, dev);
    if (!x) return NULL;
    cg_tensor *y = cgpy_as_tensor(b, dt, dev);
    if (!y) {
        cg_tensor_release(x);
        return NULL;
    }
    cg_tensor *r = fn(x, y);
    cg_tensor_release(x);
    cg_tensor_release(y);
    return cgpy_wrap(r);
}

/* a op= b: the result dtype must be castable to a's dtype (PyTorch's rule:
 * no float result into an integer tensor, no int into bool). */
static PyObject *inplace(PyObject *a, PyObject *b, const char *opname, int kind, const char *name) {
    if (!cgpy_is_tensor(a) || !is_operand(b)) Py_RETURN_NOTIMPLEMENTED;
    cg_tensor *self = cgpy_t(a);
    cg_dtype dt, sdt = cg_tensor_dtype(self);
    if (op_dtypes(kind, name, a, b, &dt)) return NULL;
    if ((cg_dtype_is_floating(dt) && !cg_dtype_is_floating(sdt)) || (sdt == CG_DTYPE_BOOL && dt != CG_DTYPE_BOOL)) {
        PyErr_Format(PyExc_RuntimeError, "result type %s can't be cast to the desired output type %s", cg_dtype_name(dt),
                     cg_dtype_name(sdt));
        return NULL;
    }
    cg_tensor *y = cgpy_as_tensor(b, sdt, cg_tensor_device(self));
    if (!y) return NULL;
    cg_status st = cg_binary_(opname, self, y);
    cg_tensor_release(y);
    if (cgpy_check(st)) return NULL;
    Py_INCREF(a);
    return a;
}

static PyObject *nb_add(PyObject *a, PyObject *b) { return binary(a, b, cg_add, K_ARITH, "add"); }
static PyObject *nb_sub(PyObject *a, PyObject *b) { return binary(a, b, cg_sub, K_ARITH, "sub"); }
static PyObject *nb_mul(PyObject *a, PyObject *b) { return binary(a, b, cg_mul, K_ARITH, "mul"); }
static PyObject *nb_truediv(PyObject *a, PyObject *b) { return binary(a, b, cg_div, K_TRUEDIV, "div"); }
static PyObject *nb_iadd(PyObject *a, PyObject *b) { return inplace(a, b, "add", K_ARITH, "add_"); }
static PyObject *nb_isub(PyObject *a, PyObject *b) { return inplace(a, b, "sub", K_ARITH, "sub_"); }
static PyObject *nb_imul(PyObject *a, PyObject *b) { return inplace(a, b, "mul", K_ARITH, "mul_"); }
static PyObject *nb_itruediv(PyObject *a, PyObject *b) { return inplace(a, b, "div", K_TRUEDIV, "div_"); }

static PyObject *nb_neg(PyObject *a) { return cgpy_wrap(cg_neg(cgpy_t(a))); }
static PyObject *nb_pos(PyObject *a) {
    Py_INCREF(a);
    return a;
}

static PyObject *nb_float(PyObject *a) {
    double v;
    if (cg_tensor_numel(cgpy_t(a)) != 1) {
        PyErr_SetString(PyExc_TypeError, "only one element tensors can be converted to Python scalars");
        return NULL;
    }
    if (cgpy_check(cg_tensor_item(cgpy_t(a), &v))) return NULL;
    return PyFloat_FromDouble(v);
}
static PyObject *nb_int(PyObject *a) {
    cg_tensor *t = cgpy_t(a);
    if (cg_tensor_numel(t) != 1) {
        PyErr_SetString(PyExc_TypeError, "only one element tensors can be converted to Python scalars");
        return NULL;
    }
    int64_t v;
    if (cgpy_check(cg_tensor_copy_to_buffer(t, &v, CG_DTYPE_I64))) return NULL;
    return PyLong_FromLongLong(v);
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
        PyErr_Format(PyExc_RuntimeError, "Boolean value of Tensor with %s values is ambiguous",
                     cg_tensor_numel(t) ? "more than one" : "no");
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
    .nb_inplace_add = nb_iadd,
    .nb_inplace_subtract = nb_isub,
    .nb_inplace_multiply = nb_imul,
    .nb_inplace_true_divide = nb_itruediv,
    .nb_negative = nb_neg,
    .nb_positive = nb_pos,
    .nb_float = nb_float,
    .nb_int = nb_int,
    .nb_index = nb_index,
    .nb_bool = nb_bool,
};

PyObject *cgpy_richcompare(PyObject *a, PyObject *b, int op) {
    static const binop_fn fns[6] = {cg_lt, cg_le, cg_eq, cg_ne, cg_gt, cg_ge};
    static const char *names[6] = {"lt", "le", "eq", "ne", "gt", "ge"};
    if ((op == Py_EQ || op == Py_NE) && !is_operand(b)) {
        if (b == Py_None) return PyBool_FromLong(op == Py_NE);
        Py_RETURN_NOTIMPLEMENTED;
    }
    return binary(a, b, fns[op], K_COMPARE, names[op]);
}
