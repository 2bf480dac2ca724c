/* hooks.c — Python callables as autograd hooks: Tensor.register_hook,
 * Tensor.register_post_accumulate_grad_hook and Node.register_hook /
 * register_prehook (Note [Node hooks] in include/cgrad.h). A hook runs with
 * the GIL taken; a Python exception it raises stays set and the binding
 * re-raises it after backward (backward_result in tensor_methods.c). Results
 * are checked as PyTorch checks them (python_hook.cpp's messages and types). */
#include "cgpy.h"

#include <string.h>

void cgpy_decref_gil(void *o) {
    PyGILState_STATE g = PyGILState_Ensure();
    Py_DECREF((PyObject *)o);
    PyGILState_Release(g);
}

/* fn's __name__ into buf ("hook" when it has none) */
static const char *hook_name(PyObject *fn, char *buf, size_t cap) {
    PyObject *nm = PyObject_GetAttrString(fn, "__name__");
    const char *s = nm && PyUnicode_Check(nm) ? PyUnicode_AsUTF8(nm) : NULL;
    if (!s) PyErr_Clear();
    snprintf(buf, cap, "%s", s ? s : "hook");
    Py_XDECREF(nm);
    return buf;
}

static void format_shape(char *buf, size_t cap, int nd, const int64_t *shape) {
    size_t n = (size_t)snprintf(buf, cap, "(");
    for (int i = 0; i < nd && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%lld%s", (long long)shape[i], nd == 1 || i + 1 < nd ? "," : "");
    if (n < cap) snprintf(buf + n, cap - n, ")");
}

/* A hook's replacement must keep the gradient's shape, dtype and device, as
 * PyTorch requires; otherwise raises a RuntimeError naming the hook and returns 1. */
static int hook_changed(PyObject *fn, cg_tensor *grad, cg_tensor *rep) {
    const char *what = NULL;
    char was[160], got[160], nm[128];
    if (cg_tensor_ndim(rep) != cg_tensor_ndim(grad) ||
        memcmp(cg_tensor_shape(rep), cg_tensor_shape(grad), sizeof(int64_t) * (size_t)cg_tensor_ndim(grad))) {
        what = "size";
        format_shape(was, sizeof was, cg_tensor_ndim(grad), cg_tensor_shape(grad));
        format_shape(got, sizeof got, cg_tensor_ndim(rep), cg_tensor_shape(rep));
    } else if (cg_tensor_dtype(rep) != cg_tensor_dtype(grad)) {
        what = "type";
        snprintf(was, sizeof was, "%s", cg_dtype_name(cg_tensor_dtype(grad)));
        snprintf(got, sizeof got, "%s", cg_dtype_name(cg_tensor_dtype(rep)));
    } else if (!cg_device_eq(cg_tensor_device(rep), cg_tensor_device(grad))) {
        what = "device";
        snprintf(was, sizeof was, "%s", cg_device_name(cg_tensor_device(grad)));
        snprintf(got, sizeof got, "%s", cg_device_name(cg_tensor_device(rep)));
    }
    if (!what) return 0;
    PyErr_Format(PyExc_RuntimeError, "hook '%s' has changed the %s of value (was %s got %s)",
                 hook_name(fn, nm, sizeof nm), what, was, got);
    return 1;
}

/* the status a hook returns once a Python exception is set */
static cg_status raised(const char *what) { return cg_set_error(CG_ERR_RUNTIME, "[hook] a %s raised an exception", what); }

/* ---------------------------------------------------------------- tensor hooks */

/* The Python callable runs with the gradient; a non-None return replaces it. */
static cg_status py_tensor_hook(void *ctx, cg_tensor *grad, cg_tensor **rep) {
    PyGILState_STATE g = PyGILState_Ensure();
    cg_tensor_retain(grad);
    PyObject *arg = cgpy_wrap(grad);
    PyObject *r = arg ? PyObject_CallOneArg((PyObject *)ctx, arg) : NULL;
    Py_XDECREF(arg);
    if (r && r != Py_None) {
        if (!cgpy_is_tensor(r))
            PyErr_Format(PyExc_TypeError, "a tensor hook must return None or a Tensor, not %.100s", Py_TYPE(r)->tp_name);
        else if (!hook_changed(ctx, grad, cgpy_t(r)))
            *rep = (cg_tensor_retain(cgpy_t(r)), cgpy_t(r));
    }
    Py_XDECREF(r);
    cg_status st = PyErr_Occurred() ? raised("tensor hook") : CG_OK;
    PyGILState_Release(g);
    return st;
}

/* The Python callable runs with the leaf once its .grad holds the accumulated gradient; it returns None. */
static cg_status py_post_accumulate_hook(void *ctx, cg_tensor *leaf) {
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *t = cgpy_pyobj_of(leaf);
    PyObject *r = t ? PyObject_CallOneArg((PyObject *)ctx, t) : NULL;
    Py_XDECREF(t);
    if (r && r != Py_None) {
        if (cgpy_is_tensor(r)) PyErr_SetString(PyExc_RuntimeError, "Tensor post accumulate grad hooks should return None.");
        else PyErr_Format(PyExc_TypeError, "expected Variable, but hook returned '%.100s'", Py_TYPE(r)->tp_name);
    }
    Py_XDECREF(r);
    cg_status st = PyErr_Occurred() ? raised("post accumulate grad hook") : CG_OK;
    PyGILState_Release(g);
    return st;
}

extern PyObject *cgpy_make_hook_handle(PyObject *owner, int64_t id); /* module.c (Python-level RemovableHandle) */

PyObject *cgpy_register_tensor_hook(PyObject *self, PyObject *fn, bool post_accumulate) {
    if (!PyCallable_Check(fn)) {
        PyErr_Format(PyExc_TypeError, "%s expects a callable, got %.100s",
                     post_accumulate ? "register_post_accumulate_grad_hook" : "register_hook", Py_TYPE(fn)->tp_name);
        return NULL;
    }
    Py_INCREF(fn);
    cg_tensor *t = cgpy_t(self);
    int64_t id = post_accumulate
                     ? cg_tensor_register_post_accumulate_grad_hook(t, py_post_accumulate_hook, fn, cgpy_decref_gil)
                     : cg_tensor_register_hook(t, py_tensor_hook, fn, cgpy_decref_gil);
    if (id < 0) {
        Py_DECREF(fn);
        return cgpy_raise();
    }
    return cgpy_make_hook_handle(self, id);
}

/* ---------------------------------------------------------------- node hooks */

/* A tuple of the n gradients (None where NULL). */
static PyObject *grads_tuple(int n, cg_tensor *const *g) {
    PyObject *tup = PyTuple_New(n);
    for (int i = 0; tup && i < n; i++) {
        PyObject *x = g[i] ? (cg_tensor_retain(g[i]), cgpy_wrap(g[i])) : (Py_INCREF(Py_None), Py_None);
        if (!x) Py_CLEAR(tup);
        else PyTuple_SET_ITEM(tup, i, x);
    }
    return tup;
}

/* A node hook's result r (new reference, or NULL when it raised) replaces the
 * n entries of g unless it is None: a tuple of n Tensors / Nones, each Tensor
 * with the shape, dtype and device of the gradient it replaces. */
static cg_status take_result(PyObject *fn, PyObject *r, int n, cg_tensor **g) {
    char nm[128];
    if (r && r != Py_None && !PyTuple_Check(r)) {
        PyErr_Format(PyExc_TypeError, "expected tuple, but hook returned '%.100s'", Py_TYPE(r)->tp_name);
    } else if (r && r != Py_None && PyTuple_GET_SIZE(r) != n) {
        PyErr_Format(PyExc_RuntimeError, "hook '%s' has returned an incorrect number of values (got %zd, but expected %d)",
                     hook_name(fn, nm, sizeof nm), PyTuple_GET_SIZE(r), n);
    } else if (r && r != Py_None) {
        for (int i = 0; i < n && !PyErr_Occurred(); i++) {
            PyObject *x = PyTuple_GET_ITEM(r, i);
            if (x != Py_None && !cgpy_is_tensor(x))
                PyErr_Format(PyExc_TypeError, "expected Variable, but hook returned '%.100s'", Py_TYPE(x)->tp_name);
            else if (x != Py_None && g[i]) hook_changed(fn, g[i], cgpy_t(x));
        }
        for (int i = 0; i < n && !PyErr_Occurred(); i++) {
            PyObject *x = PyTuple_GET_ITEM(r, i);
            cg_tensor_release(g[i]);
            g[i] = x == Py_None ? NULL : (cg_tensor_retain(cgpy_t(x)), cgpy_t(x));
        }
    }
    Py_XDECREF(r);
    return PyErr_Occurred() ? raised("node hook") : CG_OK;
}

/* fn(grad_outputs) */
static cg_status py_node_pre_hook(void *ctx, cg_node *node, int n, cg_tensor **gout) {
    (void)node;
    PyGILState_STATE gs = PyGILState_Ensure();
    PyObject *a = grads_tuple(n, gout);
    PyObject *r = a ? PyObject_CallOneArg((PyObject *)ctx, a) : NULL;
    Py_XDECREF(a);
    cg_status st = take_result((PyObject *)ctx, r, n, gout);
    PyGILState_Release(gs);
    return st;
}

/* fn(grad_inputs, grad_outputs) */
static cg_status py_node_post_hook(void *ctx, cg_node *node, int nin, cg_tensor **gin, int nout,
                                   cg_tensor *const *gout) {
    (void)node;
    PyGILState_STATE gs = PyGILState_Ensure();
    PyObject *a = grads_tuple(nin, gin), *b = a ? grads_tuple(nout, gout) : NULL;
    PyObject *r = b ? PyObject_CallFunctionObjArgs((PyObject *)ctx, a, b, NULL) : NULL;
    Py_XDECREF(a);
    Py_XDECREF(b);
    cg_status st = take_result((PyObject *)ctx, r, nin, gin);
    PyGILState_Release(gs);
    return st;
}

PyObject *cgpy_register_node_hook(PyObject *self, cg_node *n, PyObject *fn, bool pre) {
    if (!PyCallable_Check(fn)) {
        PyErr_Format(PyExc_TypeError, "%s expects a callable, got %.100s", pre ? "register_prehook" : "register_hook",
                     Py_TYPE(fn)->tp_name);
        return NULL;
    }
    Py_INCREF(fn);
    int64_t id = pre ? cg_node_register_pre_hook(n, py_node_pre_hook, fn, cgpy_decref_gil)
                     : cg_node_register_post_hook(n, py_node_post_hook, fn, cgpy_decref_gil);
    if (id < 0) {
        Py_DECREF(fn);
        return cgpy_raise();
    }
    return cgpy_make_hook_handle(self, id);
}

/* ------------------------------------------------------------- the gc's view of hooks */

typedef struct {
    visitproc visit;
    void *arg;
} gc_visit;

static int visit_context(void *ctx, void *arg) {
    const gc_visit *v = arg;
    return v->visit((PyObject *)ctx, v->arg);
}

int cgpy_traverse_node_hooks(cg_node *n, visitproc visit, void *arg) {
    if (!n || cg_node_use_count(n) != 1) return 0;
    gc_visit v = {visit, arg};
    return cg_node_visit_hook_contexts(n, cgpy_decref_gil, visit_context, &v);
}

void cgpy_clear_node_hooks(cg_node *n) {
    if (n && cg_node_use_count(n) == 1) cg_node_drop_hook_contexts(n, cgpy_decref_gil);
}

/* a non-leaf's hooks live on its grad_fn: visited when t alone holds that node */
int cgpy_traverse_tensor_hooks(cg_tensor *t, visitproc visit, void *arg) {
    if (!t || cg_tensor_use_count(t) != 1) return 0;
    gc_visit v = {visit, arg};
    int rc = cg_tensor_visit_hook_contexts(t, cgpy_decref_gil, visit_context, &v);
    cg_node *fn = cg_tensor_grad_fn(t);
    if (!rc && fn && !cg_node_pyobj(fn)) rc = cgpy_traverse_node_hooks(fn, visit, arg);
    return rc;
}

void cgpy_clear_tensor_hooks(cg_tensor *t) {
    if (!t || cg_tensor_use_count(t) != 1) return;
    cg_tensor_drop_hook_contexts(t, cgpy_decref_gil);
    cg_node *fn = cg_tensor_grad_fn(t);
    if (fn && !cg_node_pyobj(fn)) cgpy_clear_node_hooks(fn);
}
