/* ops_reduce.c — bindings of reductions, scans and sorting (sum, mean, max,
 * ..., cumsum, sort, topk) with PyTorch's dim / keepdim / dtype arguments. */
#include "bind.h"

/* sum(input, dim=None, keepdim=False, *, dtype=None) */
static PyObject *py_sum(PyObject *self, PyObject *args, PyObject *kw) {
    PyObject *x = self, *dim = Py_None;
    int keepdim = 0, dt = -1;
    if (!cgpy_is_method(self)) {
        static char *kwlist[] = {"input", "dim", "keepdim", "dtype", NULL};
        if (!PyArg_ParseTupleAndKeywords(args, kw, "O!|Op$O&:sum", kwlist, &CgTensorBase_Type, &x, &dim, &keepdim,
                                         cgpy_dtype_conv, &dt))
            return NULL;
    } else {
        static char *kwlist[] = {"dim", "keepdim", "dtype", NULL};
        if (!PyArg_ParseTupleAndKeywords(args, kw, "|Op$O&:sum", kwlist, &dim, &keepdim, cgpy_dtype_conv, &dt)) return NULL;
    }
    int nd;
    int64_t dims[CG_MAX_DIMS];
    if (cgpy_parse_dims(dim, &nd, dims)) return NULL;
    return cgpy_result(cg_sum_dtype(cgpy_t(x), nd, dims, keepdim, (cg_dtype)dt));
}

PyMethodDef cgpy_reduce_methods[] = {CGPY_KW("sum", py_sum), CGPY_TABLE_END};
PyMethodDef cgpy_reduce_functions[] = {CGPY_KW("sum", py_sum), CGPY_TABLE_END};
