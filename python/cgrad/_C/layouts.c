/* layouts.c — the cgrad.memory_format objects (contiguous_format, channels_last, channels_last_3d,
 * preserve_format; Note [Memory formats] in cgrad.h) and the cgrad.layout objects (strided, the
 * only layout cgrad's tensors have, and the sparse / jagged / mkldnn names PyTorch's CPU build
 * defines, which factories refuse), with the binding's memory_format= / layout= converters. */
#include "cgpy.h"

typedef struct {
    PyObject_HEAD
    int code;         /* a cg_memory_format, or a layout index */
    const char *name; /* the module attribute */
} CgEnumObject;

static PyObject *enum_repr(PyObject *self) { return PyUnicode_FromFormat("cgrad.%s", ((CgEnumObject *)self)->name); }
static PyObject *enum_reduce(PyObject *self, PyObject *u) { /* pickled by name: cgrad.<name> */
    (void)u;
    return PyUnicode_FromString(((CgEnumObject *)self)->name);
}
static PyMethodDef enum_methods[] = {
    {"__reduce__", enum_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};
static PyObject *enum_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    (void)args, (void)kw;
    PyErr_Format(PyExc_TypeError, "cannot create '%s' instances", type->tp_name);
    return NULL;
}
/* cgrad.memory_format and cgrad.layout: one shape, their instances made by cgpy_init_layouts only */
#define ENUM_TYPE(var, tpname)                                                                                \
    PyTypeObject var = {                                                                                      \
        PyVarObject_HEAD_INIT(NULL, 0).tp_name = tpname,                                                      \
        .tp_basicsize = sizeof(CgEnumObject),                                                                 \
        .tp_flags = Py_TPFLAGS_DEFAULT,                                                                       \
        .tp_new = enum_new,                                                                                   \
        .tp_repr = enum_repr,                                                                                 \
        .tp_methods = enum_methods,                                                                           \
    };
ENUM_TYPE(CgMemoryFormat_Type, "cgrad.memory_format")
ENUM_TYPE(CgLayout_Type, "cgrad.layout")

static const struct {
    const char *name;
    int code;
} g_format_names[] = {
    {"contiguous_format", CG_MEMORY_CONTIGUOUS},
    {"channels_last", CG_MEMORY_CHANNELS_LAST},
    {"channels_last_3d", CG_MEMORY_CHANNELS_LAST_3D},
    {"preserve_format", CG_MEMORY_PRESERVE},
};
static const char *const g_layout_names[] = {"strided", "sparse_coo", "sparse_csr", "sparse_csc",
                                             "sparse_bsr", "sparse_bsc", "_mkldnn", "jagged"};
#define N_FORMATS (int)(sizeof g_format_names / sizeof g_format_names[0])
#define N_LAYOUTS (int)(sizeof g_layout_names / sizeof g_layout_names[0])
static PyObject *g_formats[N_FORMATS], *g_layouts[N_LAYOUTS];

PyObject *cgpy_memory_format_object(cg_memory_format f) {
    for (int i = 0; i < N_FORMATS; i++)
        if (g_format_names[i].code == (int)f) return g_formats[i];
    return g_formats[0];
}
PyObject *cgpy_strided_layout(void) { return g_layouts[0]; }

bool cgpy_has_contiguous_strides(const cg_tensor *t) {
    int nd = cg_tensor_ndim(t);
    const int64_t *sh = cg_tensor_shape(t), *st = cg_tensor_strides(t);
    int64_t s = 1;
    for (int d = nd - 1; d >= 0; d--) {
        if (st[d] != s) return false;
        s *= sh[d] > 1 ? sh[d] : 1;
    }
    return true;
}

int cgpy_memory_format(PyObject *o, cg_memory_format dflt, const char *op, cg_memory_format *out) {
    if (!o || o == Py_None) {
        *out = dflt;
        return 0;
    }
    if (Py_TYPE(o) == &CgMemoryFormat_Type) {
        *out = (cg_memory_format)((CgEnumObject *)o)->code;
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "%s(): argument 'memory_format' must be torch.memory_format, not %s", op,
                 Py_TYPE(o)->tp_name);
    return -1;
}

int cgpy_check_layout(PyObject *o, const char *op) {
    if (!o || o == Py_None || o == g_layouts[0]) return 0;
    if (Py_TYPE(o) == &CgLayout_Type) {
        PyErr_Format(PyExc_NotImplementedError, "%s(): layout=%s: cgrad's tensors are strided only (layout=%s)", op,
                     ((CgEnumObject *)o)->name, "strided");
        return -1;
    }
    PyErr_Format(PyExc_TypeError, "%s(): argument 'layout' must be torch.layout, not %s", op, Py_TYPE(o)->tp_name);
    return -1;
}

static PyObject *make(PyTypeObject *type, PyObject *m, const char *name, int code) {
    CgEnumObject *e = PyObject_New(CgEnumObject, type);
    if (!e) return NULL;
    e->code = code;
    e->name = name;
    if (PyModule_AddObjectRef(m, name, (PyObject *)e) < 0) {
        Py_DECREF(e);
        return NULL;
    }
    return (PyObject *)e; /* the module holds a reference; this one stays for the converters */
}

int cgpy_init_layouts(PyObject *m) {
    if (PyType_Ready(&CgMemoryFormat_Type) < 0 || PyType_Ready(&CgLayout_Type) < 0) return -1;
    for (int i = 0; i < N_FORMATS; i++)
        if (!(g_formats[i] = make(&CgMemoryFormat_Type, m, g_format_names[i].name, g_format_names[i].code))) return -1;
    for (int i = 0; i < N_LAYOUTS; i++)
        if (!(g_layouts[i] = make(&CgLayout_Type, m, g_layout_names[i], i))) return -1;
    if (PyModule_AddObjectRef(m, "memory_format", (PyObject *)&CgMemoryFormat_Type) < 0) return -1;
    if (PyModule_AddObjectRef(m, "layout", (PyObject *)&CgLayout_Type) < 0) return -1;
    return 0;
}
