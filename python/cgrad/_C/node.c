/* node.c — Python view of autograd graph nodes (Tensor.grad_fn): name(),
 * next_functions, variable (for AccumulateGrad), metadata, register_hook /
 * register_prehook (Note [Node hooks] in include/cgrad.h). A node has one
 * Python object at a time (its pyobj slot), so `y.grad_fn is y.grad_fn`. */
#include "cgpy.h"

#include <string.h>

typedef struct {
    PyObject_HEAD
    cg_node *n;
} CgNodeObject;

static void node_dealloc(PyObject *self) {
    PyObject_GC_UnTrack(self);
    cg_node *n = ((CgNodeObject *)self)->n;
    if (cg_node_pyobj(n) == self) cg_node_set_pyobj(n, NULL);
    cg_node_release(n);
    Py_TYPE(self)->tp_free(self);
}
/* a hook or metadata that refers back to its node is a cycle through the engine (Note [Hook contexts
 * and a garbage collector]) */
static int node_traverse(PyObject *self, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(self));
    return cgpy_traverse_node_hooks(((CgNodeObject *)self)->n, visit, arg);
}
static int node_clear(PyObject *self) {
    cgpy_clear_node_hooks(((CgNodeObject *)self)->n);
    return 0;
}
/* PyTorch's name(): its C++ nodes' qualified names ("torch::autograd::AccumulateGrad"; the class
 * name, as in repr, stays AccumulateGrad), the generated ones' as they are. */
static PyObject *node_name(PyObject *self, PyObject *u) {
    (void)u;
    const char *name = cg_node_name(((CgNodeObject *)self)->n);
    if (!strcmp(name, "AccumulateGrad")) return PyUnicode_FromString("torch::autograd::AccumulateGrad");
    return PyUnicode_FromString(name);
}
static PyObject *node_repr(PyObject *self) {
    return PyUnicode_FromFormat("<%s object at %p>", cg_node_name(((CgNodeObject *)self)->n), (void *)((CgNodeObject *)self)->n);
}
PyObject *cgpy_node_wrap(cg_node *n);
static PyObject *node_next(PyObject *self, void *c) {
    (void)c;
    cg_node *n = ((CgNodeObject *)self)->n;
    int k = cg_node_num_inputs(n);
    PyObject *tup = PyTuple_New(k);
    for (int i = 0; tup && i < k; i++) {
        int nr = 0;
        cg_node *x = cg_node_next(n, i, &nr);
        PyObject *fn = x ? cgpy_node_wrap(x) : (Py_INCREF(Py_None), Py_None);
        PyTuple_SET_ITEM(tup, i, Py_BuildValue("(Ni)", fn, nr));
    }
    return tup;
}
static PyObject *node_variable(PyObject *self, void *c) {
    (void)c;
    cg_tensor *t = cg_node_variable(((CgNodeObject *)self)->n);
    if (!t) {
        PyErr_SetString(PyExc_AttributeError, "only AccumulateGrad nodes have a 'variable'");
        return NULL;
    }
    cg_tensor_retain(t);
    return cgpy_wrap(t);
}
static PyObject *node_richcompare(PyObject *a, PyObject *b, int op);
static Py_hash_t node_hash(PyObject *self) { return (Py_hash_t)(uintptr_t)((CgNodeObject *)self)->n >> 4; }

static PyObject *node_register_hook(PyObject *self, PyObject *fn) {
    return cgpy_register_node_hook(self, ((CgNodeObject *)self)->n, fn, false);
}
static PyObject *node_register_prehook(PyObject *self, PyObject *fn) {
    return cgpy_register_node_hook(self, ((CgNodeObject *)self)->n, fn, true);
}
static PyObject *node_remove_hook(PyObject *self, PyObject *arg) {
    long long id = PyLong_AsLongLong(arg);
    if (id == -1 && PyErr_Occurred()) return NULL;
    if (cgpy_check(cg_node_remove_hook(((CgNodeObject *)self)->n, id))) return NULL;
    Py_RETURN_NONE;
}

/* Node.metadata: one dict per node, kept with the node (not with this Python object). */
static PyObject *node_metadata(PyObject *self, void *c) {
    (void)c;
    cg_node *n = ((CgNodeObject *)self)->n;
    PyObject *d = cg_node_user_data(n);
    if (!d) {
        if (!(d = PyDict_New())) return NULL;
        cg_node_set_user_data(n, d, cgpy_decref_gil);
    }
    Py_INCREF(d);
    return d;
}
static PyObject *node_sequence_nr(PyObject *self, PyObject *u) {
    (void)u;
    return PyLong_FromUnsignedLongLong(cg_node_sequence_nr(((CgNodeObject *)self)->n));
}

static PyMethodDef node_methods[] = {
    {"name", node_name, METH_NOARGS, NULL},
    {"register_hook", node_register_hook, METH_O, NULL},
    {"register_prehook", node_register_prehook, METH_O, NULL},
    {"_remove_hook", node_remove_hook, METH_O, NULL},
    {"_sequence_nr", node_sequence_nr, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};
static PyGetSetDef node_getset[] = {
    {"next_functions", node_next, NULL, NULL, NULL},
    {"variable", node_variable, NULL, NULL, NULL},
    {"metadata", node_metadata, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};
PyTypeObject CgNode_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cgrad.autograd.graph.Node",
    .tp_basicsize = sizeof(CgNodeObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_dealloc = node_dealloc,
    .tp_traverse = node_traverse,
    .tp_clear = node_clear,
    .tp_repr = node_repr,
    .tp_methods = node_methods,
    .tp_getset = node_getset,
    .tp_richcompare = node_richcompare,
    .tp_hash = node_hash,
};
static PyObject *node_richcompare(PyObject *a, PyObject *b, int op) {
    if ((op != Py_EQ && op != Py_NE) || !PyObject_TypeCheck(b, &CgNode_Type)) Py_RETURN_NOTIMPLEMENTED;
    int eq = ((CgNodeObject *)a)->n == ((CgNodeObject *)b)->n;
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

/* The class of a node named `name`: one subclass of Node per name, made on first use, so that
 * type(y.grad_fn).__name__ is "MulBackward0" as in PyTorch (borrowed). */
static PyTypeObject *node_class(const char *name) {
    static PyObject *classes; /* name -> class */
    if (!classes && !(classes = PyDict_New())) return NULL;
    PyObject *cls = PyDict_GetItemString(classes, name);
    if (cls) return (PyTypeObject *)cls;
    cls = PyObject_CallFunction((PyObject *)&PyType_Type, "s(O){s:(),s:s}", name, (PyObject *)&CgNode_Type,
                                "__slots__", "__module__", "cgrad.autograd.graph");
    if (!cls) return NULL;
    int bad = PyDict_SetItemString(classes, name, cls);
    Py_DECREF(cls); /* the dict holds it */
    return bad ? NULL : (PyTypeObject *)cls;
}

PyObject *cgpy_node_wrap(cg_node *n) {
    PyObject *cached = cg_node_pyobj(n);
    if (cached) {
        Py_INCREF(cached);
        return cached;
    }
    PyTypeObject *cls = node_class(cg_node_name(n));
    CgNodeObject *o = cls ? (CgNodeObject *)cls->tp_alloc(cls, 0) : NULL;
    if (!o) return NULL;
    cg_node_retain(n);
    o->n = n;
    cg_node_set_pyobj(n, o);
    return (PyObject *)o;
}
