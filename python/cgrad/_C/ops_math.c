/* ops_math.c — bindings of elementwise math: unary math, activations,
 * binary arithmetic, comparisons, logic and n-ary ops, as Tensor methods,
 * in-place methods and module functions, with PyTorch's promotion. */
#include "bind.h"

typedef cg_tensor *(*unary_fn)(cg_tensor *);
typedef cg_tensor *(*binary_fn)(cg_tensor *, cg_tensor *);

/* unary: float-only ops promote integer inputs to the default float dtype */
static PyObject *call_unary(PyObject *self, PyObject *const *args, Py_ssize_t nargs, unary_fn fn, bool float_only,
                            const char *name) {
    PyObject *x;
    if (cgpy_self_or_arg(self, &args, &nargs, &x, name)) return NULL;
    if (nargs != 0) {
        PyErr_Format(PyExc_TypeError, "%s() takes no extra positional arguments", name);
        return NULL;
    }
    cg_tensor *t = cgpy_t(x);
    if (!float_only || cg_dtype_is_floating(cg_tensor_dtype(t))) return cgpy_result(fn(t));
    cg_tensor *c = cg_to_dtype(t, cgpy_default_dtype);
    if (!c) return cgpy_raise();
    cg_tensor *r = fn(c);
    cg_tensor_release(c);
    return cgpy_result(r);
}

static PyObject *call_binary(PyObject *self, PyObject *const *args, Py_ssize_t nargs, binary_fn fn, bool float_only,
                             const char *name) {
    PyObject *x;
    if (cgpy_self_or_arg(self, &args, &nargs, &x, name)) return NULL;
    if (nargs != 1) {
        PyErr_Format(PyExc_TypeError, "%s() expects exactly one other operand", name);
        return NULL;
    }
    PyObject *ops[2] = {x, args[0]};
    cg_tensor *t[2];
    cg_dtype dt;
    if (cgpy_promote_operands(2, ops, float_only, t, &dt)) return NULL;
    cg_tensor *r = fn(t[0], t[1]);
    cgpy_release_n(2, t);
    return cgpy_result(r);
}

/* x.op_(): the engine's in-place op by name (float-only ops need a float self) */
static PyObject *call_unary_inplace(PyObject *self, Py_ssize_t nargs, const char *name) {
    if (nargs != 0) {
        PyErr_Format(PyExc_TypeError, "%s_() takes no arguments", name);
        return NULL;
    }
    return cgpy_inplace_result(self, cg_unary_(name, cgpy_t(self)));
}

/* x.op_(other): the promoted result dtype must be castable to x's dtype */
static PyObject *call_binary_inplace(PyObject *self, PyObject *const *args, Py_ssize_t nargs, bool float_only,
                                     const char *name) {
    if (nargs != 1) {
        PyErr_Format(PyExc_TypeError, "%s_() expects exactly one other operand", name);
        return NULL;
    }
    cg_tensor *t = cgpy_t(self);
    PyObject *ops[2] = {self, args[0]};
    cg_dtype dt, sdt = cg_tensor_dtype(t);
    if (cgpy_result_type(2, ops, &dt)) return NULL;
    if (float_only && !cg_dtype_is_floating(dt)) dt = cgpy_default_dtype;
    if ((cg_dtype_is_floating(dt) && !cg_dtype_is_floating(sdt)) || (sdt == CG_DTYPE_BOOL && dt != CG_DTYPE_BOOL)) {
        PyErr_Format(PyExc_RuntimeError, "result type %s can't be cast to the desired output type %s",
                     cg_dtype_name(dt), cg_dtype_name(sdt));
        return NULL;
    }
    cg_tensor *o = cgpy_as_tensor(args[0], sdt, cg_tensor_device(t));
    if (!o) return NULL;
    cg_status st = cg_binary_(name, t, o);
    cg_tensor_release(o);
    return cgpy_inplace_result(self, st);
}

#define UNARY(name, float_only)                                                                  \
    static PyObject *py_##name(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {       \
        return call_unary(self, args, nargs, cg_##name, float_only, #name);                      \
    }
#define BINARY(name, float_only)                                                                 \
    static PyObject *py_##name(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {       \
        return call_binary(self, args, nargs, cg_##name, float_only, #name);                     \
    }
#define UNARY_INPLACE(name)                                                                      \
    static PyObject *py_##name##_(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {    \
        (void)args;                                                                              \
        return call_unary_inplace(self, nargs, #name);                                           \
    }
#define BINARY_INPLACE(name, float_only)                                                         \
    static PyObject *py_##name##_(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {    \
        return call_binary_inplace(self, args, nargs, float_only, #name);                        \
    }

UNARY(neg, false)
UNARY(exp, true)
BINARY(add, false)
BINARY(sub, false)
BINARY(mul, false)
BINARY(div, true)
BINARY(eq, false)
BINARY(ne, false)
BINARY(lt, false)
BINARY(le, false)
BINARY(gt, false)
BINARY(ge, false)

UNARY_INPLACE(neg)
UNARY_INPLACE(exp)
BINARY_INPLACE(add, false)
BINARY_INPLACE(sub, false)
BINARY_INPLACE(mul, false)
BINARY_INPLACE(div, true)

#define ENTRY(name) CGPY_FAST(#name, py_##name)
#define INPLACE_ENTRY(name) CGPY_FAST(#name "_", py_##name##_)
#define MATH_ENTRIES ENTRY(neg), ENTRY(exp), ENTRY(add), ENTRY(sub), ENTRY(mul), ENTRY(div), ENTRY(eq), ENTRY(ne), \
                     ENTRY(lt), ENTRY(le), ENTRY(gt), ENTRY(ge)

PyMethodDef cgpy_math_methods[] = {
    MATH_ENTRIES,
    INPLACE_ENTRY(neg), INPLACE_ENTRY(exp), INPLACE_ENTRY(add), INPLACE_ENTRY(sub), INPLACE_ENTRY(mul),
    INPLACE_ENTRY(div),
    CGPY_TABLE_END,
};
PyMethodDef cgpy_math_functions[] = {MATH_ENTRIES, CGPY_TABLE_END};
