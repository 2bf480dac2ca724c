/* ops.c — Python bindings of engine ops as Tensor methods and module
 * functions, with PyTorch's argument names. Binary ops promote at the
 * binding (promote.c); the engine op stays strict. */
#include "cgpy.h"

typedef cg_tensor *(*unary_fn)(cg_tensor *);
typedef cg_tensor *(*binary_fn)(cg_tensor *, cg_tensor *);

/* self-or-first-argument tensor for functions shared by methods and module functions */
static int first_tensor(PyObject *self, PyObject *const **args, Py_ssize_t *nargs, PyObject **x) {
    if (self && cgpy_is_tensor(self)) {
        *x = self;
        return 0;
    }
    if (*nargs < 1 || !cgpy_is_tensor((*args)[0])) {
        PyErr_SetString(PyExc_TypeError, "expected a Tensor as the first argument");
        return -1;
    }
    *x = (*args)[0];
    (*args)++;
    (*nargs)--;
    return 0;
}

static PyObject *call_unary(PyObject *self, PyObject *const *args, Py_ssize_t nargs, unary_fn fn) {
    PyObject *x;
    if (first_tensor(self, &args, &nargs, &x)) return NULL;
    if (nargs != 0) {
        PyErr_SetString(PyExc_TypeError, "unexpected extra arguments");
        return NULL;
    }
    return cgpy_wrap(fn(cgpy_t(x)));
}

static PyObject *call_binary(PyObject *self, PyObject *const *args, Py_ssize_t nargs, binary_fn fn, int truediv) {
    PyObject *x;
    if (first_tensor(self, &args, &nargs, &x)) return NULL;
    if (nargs != 1) {
        PyErr_SetString(PyExc_TypeError, "expected exactly one other operand");
        return NULL;
    }
    PyObject *ops[2] = {x, args[0]};
    cg_dtype dt;
    if (cgpy_result_type(2, ops, &dt)) return NULL;
    if (truediv && !cg_dtype_is_floating(dt)) dt = cgpy_default_dtype;
    cg_tensor *a = cgpy_as_tensor(x, dt, cg_tensor_device(cgpy_t(x)));
    cg_tensor *b = a ? cgpy_as_tensor(args[0], dt, cg_tensor_device(cgpy_t(x))) : NULL;
    cg_tensor *r = b ? fn(a, b) : NULL;
    cg_tensor_release(a);
    cg_tensor_release(b);
    if (!r && !PyErr_Occurred()) return cgpy_raise();
    return r ? cgpy_wrap(r) : NULL;
}

#define UNARY(name)                                                                              \
    static PyObject *py_##name(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {       \
        return call_unary(self, args, nargs, cg_##name);                                         \
    }
#define BINARY(name, truediv)                                                                    \
    static PyObject *py_##name(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {       \
        return call_binary(self, args, nargs, cg_##name, truediv);                               \
    }

UNARY(neg)
UNARY(exp)
BINARY(add, 0)
BINARY(sub, 0)
BINARY(mul, 0)
BINARY(div, 1)
BINARY(eq, 0)
BINARY(ne, 0)
BINARY(lt, 0)
BINARY(le, 0)
BINARY(gt, 0)
BINARY(ge, 0)

/* sum(dim=None, keepdim=False, dtype=None) */
static PyObject *py_sum(PyObject *self, PyObject *args, PyObject *kw) {
    PyObject *x = self, *dim = Py_None;
    int keepdim = 0, dt = -1;
    if (!cgpy_is_tensor(self ? self : Py_None)) {
        static char *kwlist[] = {"input", "dim", "keepdim", "dtype", NULL};
        if (!PyArg_ParseTupleAndKeywords(args, kw, "O!|OpO&:sum", kwlist, &CgTensorBase_Type, &x, &dim, &keepdim,
                                         cgpy_dtype_conv, &dt))
            return NULL;
    } else {
        static char *kwlist[] = {"dim", "keepdim", "dtype", NULL};
        if (!PyArg_ParseTupleAndKeywords(args, kw, "|OpO&:sum", kwlist, &dim, &keepdim, cgpy_dtype_conv, &dt)) return NULL;
    }
    int nd;
    int64_t dims[CG_MAX_DIMS];
    if (cgpy_parse_dims(dim, &nd, dims)) return NULL;
    return cgpy_wrap(cg_sum_dtype(cgpy_t(x), nd, dims, keepdim, (cg_dtype)dt));
}

#define FAST(name) {#name, (PyCFunction)(void (*)(void))py_##name, METH_FASTCALL, NULL}
#define KW(name) {#name, (PyCFunction)(void (*)(void))py_##name, METH_VARARGS | METH_KEYWORDS, NULL}

/* method and function tables share the implementations */
PyMethodDef cgpy_tensor_op_methods[] = {
    FAST(neg), FAST(exp), FAST(add), FAST(sub), FAST(mul), FAST(div),
    FAST(eq), FAST(ne), FAST(lt), FAST(le), FAST(gt), FAST(ge), KW(sum),
    {NULL, NULL, 0, NULL},
};
PyMethodDef cgpy_op_functions[] = {
    FAST(neg), FAST(exp), FAST(add), FAST(sub), FAST(mul), FAST(div),
    FAST(eq), FAST(ne), FAST(lt), FAST(le), FAST(gt), FAST(ge), KW(sum),
    {NULL, NULL, 0, NULL},
};
