/* profiler.c — binding of the engine's op-level profiler (cg_profiler_*):
 * start / stop, the recorded events as tuples, user ranges. The Python side
 * (cgrad.profiler) builds the tables and the Chrome trace from them. */
#include "cgpy.h"

static PyObject *f_profiler_start(PyObject *m, PyObject *arg) {
    (void)m;
    unsigned long flags = PyLong_AsUnsignedLong(arg);
    if (flags == (unsigned long)-1 && PyErr_Occurred()) return NULL;
    if (cgpy_check(cg_profiler_start((unsigned)flags))) return NULL;
    Py_RETURN_NONE;
}

static PyObject *f_profiler_enabled(PyObject *m, PyObject *u) {
    (void)m, (void)u;
    return PyBool_FromLong(cg_profiler_enabled());
}

/* stop, then every event as (name, kind, thread, start_ns, end_ns, parent,
 * shapes, dtypes, flops, alloc_bytes), ordered by start time */
static PyObject *f_profiler_stop(PyObject *m, PyObject *u) {
    (void)m, (void)u;
    if (cgpy_check(cg_profiler_stop())) return NULL;
    int64_t n;
    const cg_prof_event *ev = cg_profiler_events(&n);
    PyObject *list = PyList_New((Py_ssize_t)n);
    if (!list) return NULL;
    static const char *kinds[] = {"op", "backward", "range"};
    for (int64_t i = 0; i < n; i++) {
        const cg_prof_event *e = &ev[i];
        PyObject *t = Py_BuildValue("(ssLLLLssLL)", e->name, kinds[e->kind], (long long)e->thread,
                                    (long long)e->start_ns, (long long)e->end_ns, (long long)e->parent, e->shapes,
                                    e->dtypes, (long long)e->flops, (long long)e->alloc_bytes);
        if (!t) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, t);
    }
    return list;
}

static PyObject *f_range_push(PyObject *m, PyObject *arg) {
    (void)m;
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name) return NULL;
    return PyLong_FromLongLong((long long)cg_profiler_range_push(name));
}

static PyObject *f_range_pop(PyObject *m, PyObject *arg) {
    (void)m;
    long long id = PyLong_AsLongLong(arg);
    if (id == -1 && PyErr_Occurred()) return NULL;
    cg_profiler_range_pop((int64_t)id);
    Py_RETURN_NONE;
}

static PyMethodDef profiler_functions[] = {
    {"_profiler_start", f_profiler_start, METH_O, NULL},
    {"_profiler_enabled", f_profiler_enabled, METH_NOARGS, NULL},
    {"_profiler_stop", f_profiler_stop, METH_NOARGS, NULL},
    {"_profiler_range_push", f_range_push, METH_O, NULL},
    {"_profiler_range_pop", f_range_pop, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

int cgpy_init_profiler(PyObject *m) { return PyModule_AddFunctions(m, profiler_functions); }
