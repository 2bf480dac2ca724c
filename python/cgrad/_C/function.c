/* function.c — the C side of cgrad.autograd.Function: the context base type
 * (_C._FunctionCtx) that becomes an engine custom node's owner-less partner
 * (Note [Custom nodes] in src/autograd/custom.c), the backward trampoline that
 * calls the Python `backward`, multi-root backward(), and the determinism
 * switches (use_deterministic_algorithms). */
#include "cgpy.h"

/* The ctx object: `node` is borrowed and cleared when the node dies (the node
 * owns one reference to the ctx; the ctx never owns the node, so no cycle). */
typedef struct {
    PyObject_HEAD
    cg_node *node;
    int num_outputs; /* outputs of forward (differentiable or not) */
} CgFunctionCtx;

static PyObject *node_wrap(cg_node *n) {
    extern PyObject *cgpy_node_wrap(cg_node * n); /* node.c */
    return cgpy_node_wrap(n);
}

static void ctx_free(void *p) {
    PyGILState_STATE g = PyGILState_Ensure();
    ((CgFunctionCtx *)p)->node = NULL;
    Py_DECREF((PyObject *)p);
    PyGILState_Release(g);
}

/* status for the engine when Python raised: the exception stays set and the
 * binding's backward()/grad() re-raises it (see backward_result). */
static cg_status py_failed(const char *name) {
    return cg_set_error(CG_ERR_RUNTIME, "[%s] the Python backward raised an exception", name);
}

/* Engine callback: wrap grad_outputs, call ctx._call_backward(grads) (which
 * runs the user's backward and checks its results, function.py), and convert
 * the returned tuple (one Tensor/None per tensor input) into grad_inputs. */
static cg_status trampoline(void *ctxp, cg_node *node, cg_tensor *const *gout, cg_tensor **gin) {
    PyGILState_STATE gs = PyGILState_Ensure();
    CgFunctionCtx *ctx = ctxp;
    const char *name = cg_node_name(node);
    cg_status st = CG_OK;
    int nout = ctx->num_outputs;
    PyObject *grads = PyTuple_New(nout);
    for (int i = 0; grads && i < nout; i++) {
        PyObject *g;
        if (gout[i]) {
            cg_tensor_retain(gout[i]);
            g = cgpy_wrap(gout[i]);
            if (!g) {
                Py_CLEAR(grads);
                break;
            }
        } else {
            g = Py_None;
            Py_INCREF(g);
        }
        PyTuple_SET_ITEM(grads, i, g);
    }
    PyObject *r = grads ? PyObject_CallMethod((PyObject *)ctx, "_call_backward", "(O)", grads) : NULL;
    Py_XDECREF(grads);
    if (!r) {
        st = py_failed(name);
        goto out;
    }
    int nin = cg_node_num_inputs(node);
    if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != nin) {
        PyErr_Format(PyExc_RuntimeError, "%s: internal error: _call_backward returned %zd gradients for %d inputs",
                     name, PyTuple_Check(r) ? PyTuple_GET_SIZE(r) : (Py_ssize_t)-1, nin);
        Py_DECREF(r);
        st = py_failed(name);
        goto out;
    }
    for (int i = 0; i < nin; i++) {
        PyObject *g = PyTuple_GET_ITEM(r, i);
        if (g == Py_None || !cg_node_next(node, i, NULL)) continue;
        if (!cgpy_is_tensor(g)) {
            PyErr_Format(PyExc_TypeError, "%s: gradient %d must be a Tensor or None, not %.100s", name, i,
                         Py_TYPE(g)->tp_name);
            st = py_failed(name);
            break;
        }
        gin[i] = cgpy_t(g);
        cg_tensor_retain(gin[i]);
    }
    if (st)
        for (int i = 0; i < nin; i++) {
            cg_tensor_release(gin[i]);
            gin[i] = NULL;
        }
    Py_DECREF(r);
out:
    PyGILState_Release(gs);
    return st;
}

static int tensor_items(PyObject *seq, const char *what, Py_ssize_t *n, cg_tensor ***out, int allow_none) {
    *out = NULL;
    if (!PyTuple_Check(seq)) {
        PyErr_Format(PyExc_TypeError, "%s must be a tuple", what);
        return -1;
    }
    *n = PyTuple_GET_SIZE(seq);
    *out = PyMem_Calloc((size_t)(*n ? *n : 1), sizeof(cg_tensor *));
    if (!*out) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < *n; i++) {
        PyObject *o = PyTuple_GET_ITEM(seq, i);
        if (o == Py_None && allow_none) continue;
        if (!cgpy_is_tensor(o)) {
            PyErr_Format(PyExc_TypeError, "%s: expected Tensors, got %.100s", what, Py_TYPE(o)->tp_name);
            PyMem_Free(*out);
            *out = NULL;
            return -1;
        }
        (*out)[i] = cgpy_t(o);
    }
    return 0;
}

/* ctx._make_node(name, inputs, outputs, differentiable, to_save, materialize_grads):
 * create the custom node with edges to `inputs` (tensor inputs), make the
 * differentiable `outputs` its outputs, save `to_save`. */
static PyObject *ctx_make_node(PyObject *self, PyObject *args) {
    CgFunctionCtx *ctx = (CgFunctionCtx *)self;
    const char *name;
    PyObject *inputs, *outputs, *diff, *to_save;
    int materialize;
    if (!PyArg_ParseTuple(args, "sO!O!O!O!p:_make_node", &name, &PyTuple_Type, &inputs, &PyTuple_Type, &outputs,
                          &PyTuple_Type, &diff, &PyTuple_Type, &to_save, &materialize))
        return NULL;
    if (ctx->node) {
        PyErr_SetString(PyExc_RuntimeError, "this Function context already has a graph node");
        return NULL;
    }
    cg_tensor **in = NULL, **outs = NULL, **saves = NULL;
    Py_ssize_t nin, nout, nsave;
    PyObject *res = NULL;
    if (tensor_items(inputs, "inputs", &nin, &in, 1) || tensor_items(outputs, "outputs", &nout, &outs, 0) ||
        tensor_items(to_save, "saved tensors", &nsave, &saves, 0))
        goto done;
    if (PyTuple_GET_SIZE(diff) != nout) {
        PyErr_SetString(PyExc_ValueError, "_make_node: one differentiable flag per output");
        goto done;
    }
    cg_node *node = cg_custom_node_new(name, (int)nin, in, (int)nout, (int)nsave, trampoline, self, ctx_free);
    if (!node) {
        cgpy_raise();
        goto done;
    }
    Py_INCREF(self); /* owned by the node from now on */
    ctx->node = node;
    ctx->num_outputs = (int)nout;
    cg_custom_node_set_materialize_grads(node, materialize);
    cg_status st = CG_OK;
    for (Py_ssize_t i = 0; !st && i < nout; i++) {
        int d = PyObject_IsTrue(PyTuple_GET_ITEM(diff, i));
        if (d < 0) {
            cg_node_release(node);
            goto done;
        }
        st = cg_custom_node_set_output(node, (int)i, outs[i], d);
    }
    for (Py_ssize_t i = 0; !st && i < nsave; i++) st = cg_custom_node_save(node, (int)i, saves[i]);
    cg_node_release(node); /* the outputs keep it alive (or nothing does: then ctx->node is cleared) */
    if (cgpy_check(st)) goto done;
    res = Py_None;
    Py_INCREF(res);
done:
    PyMem_Free(in);
    PyMem_Free(outs);
    PyMem_Free(saves);
    return res;
}

/* ctx._saved(slot): unpack a saved tensor (version-checked by the engine). */
static PyObject *ctx_saved(PyObject *self, PyObject *arg) {
    CgFunctionCtx *ctx = (CgFunctionCtx *)self;
    long slot = PyLong_AsLong(arg);
    if (slot == -1 && PyErr_Occurred()) return NULL;
    if (!ctx->node) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Trying to backward through the graph a second time (or directly access saved tensors after "
                        "they have already been freed): this Function's graph node no longer exists");
        return NULL;
    }
    cg_tensor *t = cg_custom_node_saved(ctx->node, (int)slot);
    return t ? cgpy_wrap(t) : cgpy_raise();
}

static PyObject *ctx_get_node(PyObject *self, void *c) {
    (void)c;
    CgFunctionCtx *ctx = (CgFunctionCtx *)self;
    if (!ctx->node) Py_RETURN_NONE;
    return node_wrap(ctx->node);
}

static PyMethodDef ctx_methods[] = {
    {"_make_node", ctx_make_node, METH_VARARGS, NULL},
    {"_saved", ctx_saved, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};
static PyGetSetDef ctx_getset[] = {
    {"_node", ctx_get_node, NULL, "the graph node of this Function call (None before forward finished)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject CgFunctionCtx_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cgrad._C._FunctionCtx",
    .tp_basicsize = sizeof(CgFunctionCtx),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_new = PyType_GenericNew,
    .tp_methods = ctx_methods,
    .tp_getset = ctx_getset,
};

/* ------------------------------------------------------------- backward of several roots */

/* _backward(tensors, grad_tensors, retain_graph, create_graph, inputs): one
 * engine run over every root (cg_backward_multi); grad_tensors entries may be
 * None (ones for one-element roots). */
static PyObject *f_backward(PyObject *m, PyObject *args) {
    (void)m;
    PyObject *tensors, *grads, *inputs;
    int retain, create;
    if (!PyArg_ParseTuple(args, "O!O!ppO!:_backward", &PyTuple_Type, &tensors, &PyTuple_Type, &grads, &retain,
                          &create, &PyTuple_Type, &inputs))
        return NULL;
    cg_tensor **roots = NULL, **gs = NULL, **ins = NULL;
    Py_ssize_t nr, ng, ni;
    PyObject *res = NULL;
    if (tensor_items(tensors, "tensors", &nr, &roots, 0) || tensor_items(grads, "grad_tensors", &ng, &gs, 1) ||
        tensor_items(inputs, "inputs", &ni, &ins, 0))
        goto done;
    if (ng != nr) {
        PyErr_Format(PyExc_RuntimeError, "grad_tensors should have the same length as tensors (got %zd and %zd)", ng,
                     nr);
        goto done;
    }
    cg_status st = cg_backward_multi((int)nr, roots, gs, retain, create, (int)ni, ins);
    if (st == CG_OK) {
        res = Py_None;
        Py_INCREF(res);
    } else if (PyErr_Occurred()) { /* a Python hook or Function backward raised: keep its exception */
        cg_clear_error();
    } else {
        cgpy_raise();
    }
done:
    PyMem_Free(roots);
    PyMem_Free(gs);
    PyMem_Free(ins);
    return res;
}

/* ------------------------------------------------------------- shape helpers
 * Differentiable helpers for the autograd package (Function gradient checks,
 * functional.jacobian), on the public engine ops. */

/* _ag_sum_to_size(t, shape): sum t down to a shape it broadcasts from. */
static PyObject *f_sum_to_size(PyObject *m, PyObject *args) {
    (void)m;
    PyObject *x;
    int nd;
    int64_t shape[CG_MAX_DIMS], dims[CG_MAX_DIMS];
    if (PyTuple_GET_SIZE(args) != 2 || !cgpy_is_tensor(x = PyTuple_GET_ITEM(args, 0))) {
        PyErr_SetString(PyExc_TypeError, "_ag_sum_to_size(tensor, shape)");
        return NULL;
    }
    if (cgpy_parse_shape(args, 1, &nd, shape)) return NULL;
    cg_tensor *t = cgpy_t(x);
    int tn = cg_tensor_ndim(t), lead = tn - nd, k = 0;
    const int64_t *ts = cg_tensor_shape(t);
    if (lead < 0) {
        PyErr_Format(PyExc_RuntimeError, "_ag_sum_to_size: tensor of %d dims cannot be summed to %d dims", tn, nd);
        return NULL;
    }
    for (int i = 0; i < tn; i++) {
        if (i < lead || (shape[i - lead] == 1 && ts[i] != 1)) {
            dims[k++] = i;
        } else if (shape[i - lead] != ts[i]) {
            PyErr_Format(PyExc_RuntimeError, "_ag_sum_to_size: size %lld of dim %d does not match %lld",
                         (long long)ts[i], i, (long long)shape[i - lead]);
            return NULL;
        }
    }
    if (k == 0) {
        Py_INCREF(x);
        return x;
    }
    cg_tensor *s = cg_sum(t, k, dims, true);
    if (!s) return cgpy_raise();
    cg_tensor *r = cg_reshape(s, nd, shape);
    cg_tensor_release(s);
    return cgpy_wrap(r);
}

/* _ag_reshape(t, shape) */
static PyObject *f_reshape(PyObject *m, PyObject *args) {
    (void)m;
    PyObject *x;
    int nd;
    int64_t shape[CG_MAX_DIMS];
    if (PyTuple_GET_SIZE(args) != 2 || !cgpy_is_tensor(x = PyTuple_GET_ITEM(args, 0))) {
        PyErr_SetString(PyExc_TypeError, "_ag_reshape(tensor, shape)");
        return NULL;
    }
    if (cgpy_parse_shape(args, 1, &nd, shape)) return NULL;
    return cgpy_wrap(cg_reshape(cgpy_t(x), nd, shape));
}

/* _ag_stack(tensors, dim) */
static PyObject *f_stack(PyObject *m, PyObject *args) {
    (void)m;
    PyObject *seq;
    long long dim;
    if (!PyArg_ParseTuple(args, "O!L:_ag_stack", &PyTuple_Type, &seq, &dim)) return NULL;
    cg_tensor **ts;
    Py_ssize_t n;
    if (tensor_items(seq, "_ag_stack", &n, &ts, 0)) return NULL;
    cg_tensor *r = cg_stack((int)n, ts, dim);
    PyMem_Free(ts);
    return cgpy_wrap(r);
}

/* ------------------------------------------------------------- determinism */

static bool g_warn_only;

static PyObject *f_use_deterministic_algorithms(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("use_deterministic_algorithms", CGPY_ARG("mode", CGPY_A_BOOL, CGPY_REQ),
                                      CGPY_ARG("warn_only", CGPY_A_BOOL, CGPY_KWONLY));
    cgpy_val v[2];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    int mode = v[0].b, warn_only = v[1].b;
    cg_set_deterministic(mode, warn_only);
    g_warn_only = mode && warn_only;
    Py_RETURN_NONE;
}
static PyObject *f_are_deterministic_algorithms_enabled(PyObject *m, PyObject *u) {
    (void)m, (void)u;
    return PyBool_FromLong(cg_is_deterministic());
}
static PyObject *f_is_deterministic_algorithms_warn_only_enabled(PyObject *m, PyObject *u) {
    (void)m, (void)u;
    return PyBool_FromLong(cg_is_deterministic() && g_warn_only);
}

/* engine warnings (e.g. warn_only determinism alerts) as Python UserWarnings;
 * a warning filter that raises makes the op fail with the same message */
static int warn_to_python(const char *msg) {
    PyGILState_STATE g = PyGILState_Ensure();
    int rc = PyErr_WarnEx(PyExc_UserWarning, msg, 1);
    if (rc < 0) PyErr_Clear();
    PyGILState_Release(g);
    return rc < 0;
}
static PyObject *f_alert_not_deterministic(PyObject *m, PyObject *arg) {
    (void)m;
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name || cgpy_check(cg_alert_nondeterministic(name))) return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef function_functions[] = {
    {"_backward", f_backward, METH_VARARGS, NULL},
    {"_ag_sum_to_size", f_sum_to_size, METH_VARARGS, NULL},
    {"_ag_reshape", f_reshape, METH_VARARGS, NULL},
    {"_ag_stack", f_stack, METH_VARARGS, NULL},
    {"_alert_not_deterministic", f_alert_not_deterministic, METH_O, NULL},
    {"use_deterministic_algorithms", (PyCFunction)(void (*)(void))f_use_deterministic_algorithms,
     METH_FASTCALL | METH_KEYWORDS, NULL},
    {"are_deterministic_algorithms_enabled", f_are_deterministic_algorithms_enabled, METH_NOARGS, NULL},
    {"is_deterministic_algorithms_warn_only_enabled", f_is_deterministic_algorithms_warn_only_enabled, METH_NOARGS,
     NULL},
    {NULL, NULL, 0, NULL},
};

int cgpy_init_function(PyObject *m) {
    if (PyType_Ready(&CgFunctionCtx_Type) < 0) return -1;
    if (PyModule_AddObjectRef(m, "_FunctionCtx", (PyObject *)&CgFunctionCtx_Type) < 0) return -1;
    cg_set_warning_handler(warn_to_python);
    return PyModule_AddFunctions(m, function_functions);
}
