/* _cpuinfo.c — cgrad._cpuinfo: what this CPU and OS run (Note [CPU levels],
 * src/core/cpu_features.c), asked before any engine build is loaded so that
 * cgrad/_engine.py can pick one. Compiled for the baseline; links no engine. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "cgrad.h"

static PyObject *supported_level(PyObject *m, PyObject *u) {
    (void)m, (void)u;
    return PyUnicode_FromString(cg_cpu_level_name(cg_cpu_level_supported()));
}

static PyObject *has_avx512_bf16(PyObject *m, PyObject *u) {
    (void)m, (void)u;
    return PyBool_FromLong(cg_cpu_has_avx512_bf16());
}

static PyMethodDef functions[] = {
    {"supported_level", supported_level, METH_NOARGS,
     "The highest CPU level this CPU and OS run: 'baseline', 'avx2', 'avx512' (or 'none')."},
    {"has_avx512_bf16", has_avx512_bf16, METH_NOARGS, "AVX512_BF16 instructions usable."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "cgrad._cpuinfo", "CPU feature detection (cpuid and xgetbv).", -1, functions,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__cpuinfo(void) { return PyModule_Create(&module_def); }
