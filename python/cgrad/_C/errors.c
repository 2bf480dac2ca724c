/* errors.c — the one place engine status codes become Python exceptions. */
#include "cgpy.h"

PyObject *cgpy_DtypeMismatch, *cgpy_DeviceMismatch, *cgpy_ShapeMismatch;

PyObject *cgpy_raise(void) {
    /* a failure reported as a Python exception (argument conversion, a hook)
     * with no engine error behind it keeps that exception */
    if (cg_last_error() == CG_OK && PyErr_Occurred()) return NULL;
    const char *msg = cg_last_error_message();
    PyObject *exc;
    switch (cg_last_error()) {
    case CG_ERR_DTYPE: exc = cgpy_DtypeMismatch; break;
    case CG_ERR_DEVICE: exc = cgpy_DeviceMismatch; break;
    case CG_ERR_SHAPE: exc = cgpy_ShapeMismatch; break;
    case CG_ERR_INDEX: exc = PyExc_IndexError; break;
    case CG_ERR_VALUE: exc = PyExc_ValueError; break;
    case CG_ERR_OOM: exc = PyExc_MemoryError; break;
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

int cgpy_init_errors(PyObject *m) {
    /* DtypeMismatch is a TypeError (wrong kind of data); device and shape
     * mismatches are RuntimeErrors, as PyTorch raises for them. */
    cgpy_DtypeMismatch = PyErr_NewExceptionWithDoc("cgrad.DtypeMismatch",
        "Operands have dtypes the operation cannot combine (the engine never promotes).", PyExc_TypeError, NULL);
    cgpy_DeviceMismatch = PyErr_NewExceptionWithDoc("cgrad.DeviceMismatch",
        "Operands live on different devices (data is never moved implicitly).", PyExc_RuntimeError, NULL);
    cgpy_ShapeMismatch = PyErr_NewExceptionWithDoc("cgrad.ShapeMismatch",
        "Operand shapes are incompatible (cannot broadcast, wrong rank, ...).", PyExc_RuntimeError, NULL);
    if (!cgpy_DtypeMismatch || !cgpy_DeviceMismatch || !cgpy_ShapeMismatch) return -1;
    if (PyModule_AddObjectRef(m, "DtypeMismatch", cgpy_DtypeMismatch) < 0) return -1;
    if (PyModule_AddObjectRef(m, "DeviceMismatch", cgpy_DeviceMismatch) < 0) return -1;
    if (PyModule_AddObjectRef(m, "ShapeMismatch", cgpy_ShapeMismatch) < 0) return -1;
    return 0;
}
