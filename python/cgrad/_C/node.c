/* node.c — Python view of autograd graph nodes (Tensor.grad_fn): name(),
 * next_functions, variable (for AccumulateGrad) and metadata. */
#include "cgpy.h"

typedef struct {
    PyObject_HEAD
    cg_node *n;
} CgNodeObject;

static void node_dealloc(PyObject *self) {
    cg_node_release(((CgNodeObject *)self)->n);
    Py_TYPE(self)->tp_free(self);
}
static PyObject *node_name(PyObject *self, PyObject *u) {
    (void)u;
    return PyUnicode_FromString(cg_node_name(((CgNodeObject *)self)->n));
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

static PyMethodDef node_methods[] = {{"name", node_name, METH_NOARGS, NULL}, {NULL, NULL, 0, NULL}};
static PyGetSetDef node_getset[] = {
    {"next_functions", node_next, NULL, NULL, NULL},
    {"variable", node_variable, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};
PyTypeObject CgNode_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cgrad.autograd.graph.Node",
    .tp_basicsize = sizeof(CgNodeObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = node_dealloc,
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

PyObject *cgpy_node_wrap(cg_node *n) {
    CgNodeObject *o = PyObject_New(CgNodeObject, &CgNode_Type);
    if (!o) return NULL;
    cg_node_retain(n);
    o->n = n;
    return (PyObject *)o;
}
