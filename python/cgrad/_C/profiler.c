/* profiler.c — binding of the engine's op-level profiler (cg_profiler_*):
 * start / stop, the recorded events as tuples, user ranges, and the stack
 * hook giving op events their Python call site (with_stack). The Python side
 * (cgrad.profiler) builds the tables and the Chrome trace from them. */
#include "cgpy.h"

#include <string.h>

/* Frames whose file starts with this prefix (the cgrad package) are library
 * code: the call site is the innermost frame outside it. Read and written
 * with the GIL held. */
static char g_lib_prefix[1024];

/* cg_prof_stack_fn: "file(line): function" of the innermost user frame of the
 * calling thread ("" when it has none). Runs with the GIL taken here: the op
 * may have released it (CGPY_NOGIL); the thread's frames stay on its state. */
static void stack_fn(char *buf, size_t cap) {
    if (!Py_IsInitialized()) return;
    PyGILState_STATE gs = PyGILState_Ensure();
    PyObject *et, *ev, *etb;
    PyErr_Fetch(&et, &ev, &etb);
    size_t plen = strlen(g_lib_prefix);
    PyFrameObject *f = PyEval_GetFrame();
    Py_XINCREF(f);
    while (f) {
        PyCodeObject *code = PyFrame_GetCode(f);
        const char *file = PyUnicode_AsUTF8(code->co_filename);
        if (file && (!plen || strncmp(file, g_lib_prefix, plen) != 0)) {
            const char *fn = PyUnicode_AsUTF8(code->co_name);
            snprintf(buf, cap, "%s(%d): %s", file, PyFrame_GetLineNumber(f), fn ? fn : "?");
            Py_DECREF(code);
            break;
        }
        Py_DECREF(code);
        PyFrameObject *back = PyFrame_GetBack(f);
        Py_DECREF(f);
        f = back;
    }
    Py_XDECREF(f);
    PyErr_Restore(et, ev, etb);
    PyGILState_Release(gs);
}

static PyObject *f_profiler_set_stack_prefix(PyObject *m, PyObject *arg) {
    (void)m;
    const char *p = PyUnicode_AsUTF8(arg);
    if (!p) return NULL;
    snprintf(g_lib_prefix, sizeof g_lib_prefix, "%s", p);
    cg_profiler_set_stack_fn(stack_fn);
    Py_RETURN_NONE;
}

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
 * shapes, dtypes, flops, alloc_bytes, stack), ordered by start time */
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
        PyObject *t = Py_BuildValue("(ssLLLLssLLs)", e->name, kinds[e->kind], (long long)e->thread,
                                    (long long)e->start_ns, (long long)e->end_ns, (long long)e->parent, e->shapes,
                                    e->dtypes, (long long)e->flops, (long long)e->alloc_bytes, e->stack);
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
    {"_profiler_set_stack_prefix", f_profiler_set_stack_prefix, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

int cgpy_init_profiler(PyObject *m) { return PyModule_AddFunctions(m, profiler_functions); }
