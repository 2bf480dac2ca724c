/* errors.c — the one place engine status codes become Python exceptions. */
#include "cgpy.h"

#include <string.h>

PyObject *cgpy_DtypeMismatch, *cgpy_DeviceMismatch, *cgpy_ShapeMismatch, *cgpy_InvalidArgument, *cgpy_IndexOutOfRange;
PyObject *cgpy_OutOfMemoryError;

/* Note [CUDA errors]: the engine reports a cuda device it cannot use (no
 * kernel library, no driver or GPU, an ordinal past the last device) as
 * CG_ERR_DEVICE, "[op] cannot use device cuda:N: <why>" or "[op] invalid
 * device ordinal cuda:N (K CUDA devices)"; PyTorch raises AssertionError
 * "Torch not compiled with CUDA enabled" on its CPU build, which is what a
 * cgrad without libcgrad_cuda.so is, and RuntimeError on its CUDA build (no
 * driver, no GPU, a bad ordinal). Neither is a device mismatch between
 * operands. An allocation that fails on a CUDA device is PyTorch's
 * torch.OutOfMemoryError (a RuntimeError, not a MemoryError); the host's own
 * allocations stay MemoryError (Note [Exception classes]). */
static PyObject *device_exception(const char **msg) {
    if (!strstr(*msg, "cannot use device cuda:") && !strstr(*msg, "invalid device ordinal cuda:"))
        return cgpy_DeviceMismatch;
    if (!cg_cuda_is_built()) {
        *msg = "Torch not compiled with CUDA enabled";
        return PyExc_AssertionError;
    }
    return PyExc_RuntimeError;
}

PyObject *cgpy_raise(void) {
    /* a failure reported as a Python exception (argument conversion, a hook)
     * with no engine error behind it keeps that exception */
    if (cg_last_error() == CG_OK && PyErr_Occurred()) return NULL;
    const char *msg = cg_last_error_message();
    PyObject *exc;
    switch (cg_last_error()) {
    case CG_ERR_DTYPE: exc = cgpy_DtypeMismatch; break;
    case CG_ERR_DEVICE: exc = device_exception(&msg); break; /* Note [CUDA errors] */
    case CG_ERR_SHAPE: exc = cgpy_ShapeMismatch; break;
    case CG_ERR_INDEX: exc = cgpy_IndexOutOfRange; break;
    case CG_ERR_VALUE: exc = cgpy_InvalidArgument; break;
    case CG_ERR_OOM: exc = strstr(msg, "CUDA out of memory") ? cgpy_OutOfMemoryError : PyExc_MemoryError; break;
    case CG_ERR_NOT_IMPLEMENTED: exc = PyExc_NotImplementedError; break;
    case CG_ERR_RUNTIME: exc = PyExc_RuntimeError; break;
    default:
        exc = PyExc_RuntimeError;
        msg = *msg ? msg : "cgrad: operation failed without an error message";
    }
    PyErr_SetString(exc, msg);
    cg_clear_error();
    return NULL;
}

int cgpy_check(cg_status st) {
    if (st == CG_OK) return 0;
    cgpy_raise();
    return -1;
}

/* A new exception class deriving from two built-in ones. */
static PyObject *two_base_exception(const char *name, const char *doc, PyObject *a, PyObject *b) {
    PyObject *bases = PyTuple_Pack(2, a, b);
    if (!bases) return NULL;
    PyObject *e = PyErr_NewExceptionWithDoc(name, doc, bases, NULL);
    Py_DECREF(bases);
    return e;
}

/* Note [Exception classes]: PyTorch raises RuntimeError for most bad
 * arguments and dtype problems, and IndexError or RuntimeError for indices
 * out of range, depending on the op. Our classes derive from both the
 * Python-idiomatic type and RuntimeError, so code written against PyTorch
 * (`except RuntimeError`) and idiomatic code (`except ValueError`) both work. */
int cgpy_init_errors(PyObject *m) {
    cgpy_DtypeMismatch = two_base_exception("cgrad.DtypeMismatch",
        "Operands have dtypes the operation cannot combine (the engine never promotes).", PyExc_TypeError,
        PyExc_RuntimeError);
    cgpy_DeviceMismatch = PyErr_NewExceptionWithDoc("cgrad.DeviceMismatch",
        "Operands live on different devices (data is never moved implicitly).", PyExc_RuntimeError, NULL);
    cgpy_ShapeMismatch = PyErr_NewExceptionWithDoc("cgrad.ShapeMismatch",
        "Operand shapes are incompatible (cannot broadcast, wrong rank, ...).", PyExc_RuntimeError, NULL);
    cgpy_InvalidArgument = two_base_exception("cgrad.InvalidArgument",
        "An argument value is invalid for the operation.", PyExc_ValueError, PyExc_RuntimeError);
    cgpy_IndexOutOfRange = two_base_exception("cgrad.IndexOutOfRange",
        "An index or dimension is out of range.", PyExc_IndexError, PyExc_RuntimeError);
    cgpy_OutOfMemoryError = PyErr_NewExceptionWithDoc("cgrad.OutOfMemoryError",
        "A device ran out of memory (torch.OutOfMemoryError; also cgrad.cuda.OutOfMemoryError). A RuntimeError, "
        "as in PyTorch; the host's own allocations raise MemoryError.", PyExc_RuntimeError, NULL);
    if (!cgpy_DtypeMismatch || !cgpy_DeviceMismatch || !cgpy_ShapeMismatch || !cgpy_InvalidArgument ||
        !cgpy_IndexOutOfRange || !cgpy_OutOfMemoryError)
        return -1;
    if (PyModule_AddObjectRef(m, "DtypeMismatch", cgpy_DtypeMismatch) < 0) return -1;
    if (PyModule_AddObjectRef(m, "DeviceMismatch", cgpy_DeviceMismatch) < 0) return -1;
    if (PyModule_AddObjectRef(m, "ShapeMismatch", cgpy_ShapeMismatch) < 0) return -1;
    if (PyModule_AddObjectRef(m, "InvalidArgument", cgpy_InvalidArgument) < 0) return -1;
    if (PyModule_AddObjectRef(m, "IndexOutOfRange", cgpy_IndexOutOfRange) < 0) return -1;
    if (PyModule_AddObjectRef(m, "OutOfMemoryError", cgpy_OutOfMemoryError) < 0) return -1;
    return 0;
}
