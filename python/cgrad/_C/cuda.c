/* cuda.c — the binding's side of CUDA devices: the private module functions
 * cgrad.cuda is written on (_cuda_*: the kernel library's presence, the
 * devices, their properties, synchronize, memory, the current device), the
 * moves of operands to a tensor's device, and the device address for
 * data_ptr and the interchange protocols. The engine's public CUDA calls are
 * in cgrad.h. */
#include "cgpy.h"

/* ------------------------------------------------------------- device memory */

static bool host_reads(const cg_tensor *t) { return cg_tensor_device(t).type != CG_DEVICE_CUDA; }

int cgpy_to_device_of(cg_tensor **t, cg_device dev) {
    cg_device from = cg_tensor_device(*t);
    if (cg_device_eq(from, dev) || from.type == CG_DEVICE_META || dev.type == CG_DEVICE_META) return 0;
    cg_tensor *m = cg_to_device(*t, dev);
    cg_tensor_release(*t);
    *t = m;
    if (!m) {
        cgpy_raise();
        return -1;
    }
    return 0;
}

/* Note [Device addresses]: cg_tensor_data gives host addresses only (NULL for
 * memory the host cannot address). The address of a cuda tensor's element 0,
 * which data_ptr(), __dlpack__ and __cuda_array_interface__ hand out, comes
 * from cg_tensor_device_ptr. */
void *cgpy_data_ptr(const cg_tensor *t) {
    if (host_reads(t)) {
        void *p = cg_tensor_data(t);
        if (!p) cg_clear_error(); /* meta: no memory, address 0 (PyTorch's data_ptr() there) */
        return p;
    }
    void *p = cg_tensor_device_ptr(t);
    if (!p && cg_last_error() != CG_OK) {
        cgpy_raise();
        return NULL;
    }
    return p;
}

int cgpy_check_pin(const char *op) {
    if (cg_cuda_device_count() > 0) return 0;
    PyErr_Format(PyExc_NotImplementedError, "%s(): pin_memory=True needs an accelerator; cgrad has none usable", op);
    return -1;
}

/* ------------------------------------------------------------- the module functions */

static PyObject *f_cuda_is_built(PyObject *m, PyObject *u) {
    (void)m, (void)u;
    return PyBool_FromLong(cg_cuda_is_built());
}

static PyObject *f_cuda_device_count(PyObject *m, PyObject *u) {
    (void)m, (void)u;
    return PyLong_FromLong(cg_cuda_device_count());
}

/* why no device is usable (None when one is) */
static PyObject *f_cuda_unavailable_reason(PyObject *m, PyObject *u) {
    (void)m, (void)u;
    const char *why = cg_cuda_unavailable_reason();
    if (!why) Py_RETURN_NONE;
    return PyUnicode_FromString(why);
}

static PyObject *f_cuda_current_device(PyObject *m, PyObject *u) {
    (void)m, (void)u;
    return PyLong_FromLong(cgpy_cuda_current());
}

/* an ordinal of a usable device, else -1 with RuntimeError (the engine's reason, or the ordinal's range) */
static int check_ordinal(PyObject *o, const char *who) {
    int overflow = 0;
    long long i = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (i == -1 && PyErr_Occurred()) return -1;
    const char *why = cg_cuda_unavailable_reason();
    if (why) {
        PyErr_Format(PyExc_RuntimeError, "%s: %s", who, why);
        return -1;
    }
    int n = cg_cuda_device_count();
    if (overflow || i < 0 || i >= n) {
        PyErr_Format(PyExc_RuntimeError, "%s: invalid device ordinal %R (%d CUDA devices)", who, o, n);
        return -1;
    }
    return (int)i;
}

static PyObject *f_cuda_set_device(PyObject *m, PyObject *o) {
    (void)m;
    int i = check_ordinal(o, "cuda.set_device");
    if (i < 0) return NULL;
    cgpy_cuda_set_current(i);
    Py_RETURN_NONE;
}

static PyObject *f_cuda_properties(PyObject *m, PyObject *o) {
    (void)m;
    int i = check_ordinal(o, "cuda.get_device_properties");
    if (i < 0) return NULL;
    cg_cuda_props p;
    if (cgpy_check(cg_cuda_properties(i, &p))) return NULL;
    p.name[sizeof p.name - 1] = '\0';
    return Py_BuildValue("{sssisisisK}", "name", p.name, "major", p.major, "minor", p.minor, "multi_processor_count",
                         p.multiprocessors, "total_memory", (unsigned long long)p.total_memory);
}

static PyObject *f_cuda_synchronize(PyObject *m, PyObject *o) {
    (void)m;
    int i = check_ordinal(o, "cuda.synchronize");
    if (i < 0) return NULL;
    cg_status st;
    Py_BEGIN_ALLOW_THREADS
    st = cg_cuda_synchronize(i);
    Py_END_ALLOW_THREADS
    if (cgpy_check(st)) return NULL;
    Py_RETURN_NONE;
}

static PyObject *f_cuda_mem_info(PyObject *m, PyObject *o) {
    (void)m;
    int i = check_ordinal(o, "cuda.mem_get_info");
    if (i < 0) return NULL;
    size_t free_b = 0, total = 0;
    if (cgpy_check(cg_cuda_mem_info(i, &free_b, &total))) return NULL;
    return Py_BuildValue("(KK)", (unsigned long long)free_b, (unsigned long long)total);
}

static PyMethodDef cuda_functions[] = {
    {"_cuda_is_built", f_cuda_is_built, METH_NOARGS, NULL},
    {"_cuda_device_count", f_cuda_device_count, METH_NOARGS, NULL},
    {"_cuda_unavailable_reason", f_cuda_unavailable_reason, METH_NOARGS, NULL},
    {"_cuda_current_device", f_cuda_current_device, METH_NOARGS, NULL},
    {"_cuda_set_device", f_cuda_set_device, METH_O, NULL},
    {"_cuda_properties", f_cuda_properties, METH_O, NULL},
    {"_cuda_synchronize", f_cuda_synchronize, METH_O, NULL},
    {"_cuda_mem_info", f_cuda_mem_info, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

int cgpy_init_cuda(PyObject *m) { return PyModule_AddFunctions(m, cuda_functions); }
