/* args.c — the binding's one argument parser, cgpy_args_parse (Note
 * [Argument specs] in args.h), its typed converters, and the shape / dim /
 * int / seed / number parsers the bindings share. */
#include "cgpy.h"

int cgpy_parse_shape_items(PyObject *const *items, Py_ssize_t n, int *ndim, int64_t *shape) {
    PyObject *seq = NULL;
    if (n == 1 && !PyLong_Check(items[0]) && PySequence_Check(items[0])) {
        seq = PySequence_Tuple(items[0]);
        if (!seq) return -1;
        n = PyTuple_GET_SIZE(seq);
        items = &PyTuple_GET_ITEM(seq, 0);
    }
    if (n > CG_MAX_DIMS) {
        Py_XDECREF(seq);
        PyErr_Format(PyExc_RuntimeError, "shape has %zd dims; the maximum is %d", n, CG_MAX_DIMS);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = items[i];
        PyObject *idx = PyNumber_Index(o);
        if (!idx) {
            Py_XDECREF(seq);
            PyErr_Format(PyExc_TypeError, "shape must be a sequence of ints, got an element of type %.100s", Py_TYPE(o)->tp_name);
            return -1;
        }
        int overflow;
        shape[i] = PyLong_AsLongLongAndOverflow(idx, &overflow);
        Py_DECREF(idx);
        if (overflow) {
            Py_XDECREF(seq);
            /* a TypeError, as PyTorch's argument parser raises */
            PyErr_Format(PyExc_TypeError, "shape element %zd overflows int64", i);
            return -1;
        }
    }
    *ndim = (int)n;
    Py_XDECREF(seq);
    return 0;
}

int cgpy_parse_shape(PyObject *args, Py_ssize_t start, int *ndim, int64_t *shape) {
    Py_ssize_t n = PyTuple_GET_SIZE(args) - start;
    return cgpy_parse_shape_items(n > 0 ? &PyTuple_GET_ITEM(args, start) : NULL, n > 0 ? n : 0, ndim, shape);
}

int cgpy_parse_dims(PyObject *o, int *ndims, int64_t *dims) {
    *ndims = 0;
    if (!o || o == Py_None) return 0;
    if (PyLong_Check(o) || PyIndex_Check(o)) {
        long long v = PyLong_AsLongLong(o);
        if (v == -1 && PyErr_Occurred()) return -1;
        dims[0] = v;
        *ndims = 1;
        return 0;
    }
    PyObject *seq = PySequence_Fast(o, "dim must be an int, a sequence of ints or None");
    if (!seq) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > CG_MAX_DIMS) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_IndexError, "too many dims");
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        long long v = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return -1;
        }
        dims[i] = v;
    }
    *ndims = (int)n;
    Py_DECREF(seq);
    return 0;
}

int cgpy_parse_seed(PyObject *o, uint64_t *seed) {
    PyObject *i = PyNumber_Index(o);
    if (!i) return -1;
    int overflow;
    (void)PyLong_AsLongLongAndOverflow(i, &overflow);
    if (overflow > 0) {
        (void)PyLong_AsUnsignedLongLong(i);
        if (PyErr_Occurred()) overflow = -1;
    }
    PyErr_Clear();
    if (overflow < 0) {
        /* a ValueError, as PyTorch raises */
        PyErr_Format(PyExc_ValueError, "seed %R is out of range: seeds are integers in [-2**63, 2**64 - 1]", i);
        Py_DECREF(i);
        return -1;
    }
    *seed = PyLong_AsUnsignedLongLongMask(i);
    Py_DECREF(i);
    return PyErr_Occurred() ? -1 : 0;
}

int cgpy_parse_int(PyObject *o, int64_t *v, const char *what) {
    PyObject *i = PyNumber_Index(o);
    if (!i) {
        PyErr_Format(PyExc_TypeError, "%s must be an int, not %.100s", what, Py_TYPE(o)->tp_name);
        return -1;
    }
    *v = PyLong_AsLongLong(i);
    Py_DECREF(i);
    return (*v == -1 && PyErr_Occurred()) ? -1 : 0;
}

int cgpy_parse_double(PyObject *o, double *v, const char *what) {
    if (cgpy_is_tensor(o)) return cgpy_check(cg_tensor_item(cgpy_t(o), v));
    *v = PyFloat_AsDouble(o);
    if (*v == -1.0 && PyErr_Occurred()) {
        PyErr_Format(PyExc_TypeError, "%s must be a number, not %.100s", what, Py_TYPE(o)->tp_name);
        return -1;
    }
    return 0;
}

/* ================================================================ the parser */

/* "argument 'dim' (position 2)" or "argument 'dim'", as PyTorch names an argument */
static const char *pos_note(char *buf, size_t len, int pos) {
    if (pos > 0) snprintf(buf, len, " (position %d)", pos);
    else buf[0] = 0;
    return buf;
}

static int type_error(const char *fname, const char *arg, int pos, const char *want, PyObject *o) {
    char note[32];
    PyErr_Format(PyExc_TypeError, "%s(): argument '%s'%s must be %s, not %.100s", fname, arg,
                 pos_note(note, sizeof note, pos), want, Py_TYPE(o)->tp_name);
    return -1;
}

static int arg_int_at(PyObject *o, const char *fname, const char *arg, int pos, int64_t *v) {
    if (PyLong_CheckExact(o)) {
        int overflow;
        *v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (!overflow) return 0;
    }
    if (PyBool_Check(o) || PyFloat_Check(o) || !PyIndex_Check(o)) return type_error(fname, arg, pos, "int", o);
    return cgpy_parse_int(o, v, arg);
}

int cgpy_arg_int(PyObject *o, const char *fname, const char *arg, int64_t *v) {
    return arg_int_at(o, fname, arg, 0, v);
}

static int arg_intlist_at(PyObject *o, const char *fname, const char *arg, int pos, int *n, int64_t *v) {
    if (!PyIndex_Check(o) && !PySequence_Check(o) && !PyFloat_Check(o)) return type_error(fname, arg, pos,
        "tuple of ints", o);
    return cgpy_parse_shape_items(&o, 1, n, v);
}

int cgpy_arg_intlist(PyObject *o, const char *fname, const char *arg, int *n, int64_t *v) {
    return arg_intlist_at(o, fname, arg, 0, n, v);
}

static int arg_dims_at(PyObject *o, const char *fname, const char *arg, int pos, int *n, int64_t *v) {
    if (o != Py_None && !PyLong_Check(o) && !PyTuple_Check(o) && !PyList_Check(o) && !PyIndex_Check(o))
        return type_error(fname, arg, pos, "tuple of ints", o);
    return cgpy_parse_dims(o, n, v);
}

int cgpy_arg_dims(PyObject *o, const char *fname, const char *arg, int *n, int64_t *v) {
    return arg_dims_at(o, fname, arg, 0, n, v);
}

static void spec_init(cgpy_spec *s) {
    int n = 0, npos = -1, nreq = 0;
    while (n < CGPY_MAX_PARAMS && s->p[n].name) {
        if ((s->p[n].flags & CGPY_KWONLY) && npos < 0) npos = n;
        if (s->p[n].flags & (CGPY_REQ | CGPY_SELF)) nreq = n + 1;
        n++;
    }
    s->n = (signed char)n;
    s->npos = (signed char)(npos < 0 ? n : npos);
    s->nreq = (signed char)nreq;
    s->ready = 1;
}

/* Convert v->o (given at 1-based position pos, 0: keyword) under p. */
static int convert(const cgpy_spec *s, const cgpy_param *p, int pos, cgpy_val *v) {
    PyObject *o = v->o;
    switch (p->kind) {
    case CGPY_A_OBJ: return 0;
    case CGPY_A_TENSOR:
        if (cgpy_is_tensor(o)) {
            v->t = cgpy_t(o);
            return 0;
        }
        return type_error(s->fname, p->name, pos, "Tensor", o);
    case CGPY_A_OPT_TENSOR:
        if (o == Py_None) {
            v->t = NULL;
            return 0;
        }
        if (cgpy_is_tensor(o)) {
            v->t = cgpy_t(o);
            return 0;
        }
        return type_error(s->fname, p->name, pos, "Tensor", o);
    case CGPY_A_OPT_INT:
        if (o == Py_None) {
            v->i = p->def;
            return 0;
        }
        return arg_int_at(o, s->fname, p->name, pos, &v->i);
    case CGPY_A_INT:
        if (o == Py_None && (p->flags & CGPY_NONE_OK)) {
            v->i = p->def;
            return 0;
        }
        return arg_int_at(o, s->fname, p->name, pos, &v->i);
    case CGPY_A_INTLIST:
    case CGPY_A_SIZE:
        if (o == Py_None && (p->flags & CGPY_NONE_OK)) {
            v->n = 0;
            return 0;
        }
        return arg_intlist_at(o, s->fname, p->name, pos, &v->n, v->v);
    case CGPY_A_DIMS: return arg_dims_at(o, s->fname, p->name, pos, &v->n, v->v);
    case CGPY_A_BOOL: {
        int b = PyObject_IsTrue(o);
        if (b < 0) return -1;
        v->b = b;
        return 0;
    }
    case CGPY_A_FLOAT:
        if (o == Py_None && (p->flags & CGPY_NONE_OK)) {
            v->f = p->fdef;
            return 0;
        }
        v->f = PyFloat_AsDouble(o);
        if (v->f == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            return type_error(s->fname, p->name, pos, "float", o);
        }
        return 0;
    case CGPY_A_DTYPE: v->dtype = (cg_dtype)-1; return cgpy_dtype_conv(o, &v->dtype) ? 0 : -1;
    case CGPY_A_DEVICE:
        if (o == Py_None && (p->flags & CGPY_DEFAULT_DEV)) return cgpy_default_device(&v->dev);
        v->dev = cg_cpu();
        return cgpy_device_conv(o, &v->dev) ? 0 : -1;
    case CGPY_A_STR:
        if (o == Py_None && (p->flags & CGPY_NONE_OK)) {
            v->s = NULL;
            return 0;
        }
        if (!PyUnicode_Check(o)) return type_error(s->fname, p->name, pos, "str", o);
        v->s = PyUnicode_AsUTF8(o);
        return v->s ? 0 : -1;
    case CGPY_A_SEED: return cgpy_parse_seed(o, &v->seed);
    case CGPY_A_CONV: v->ptr = NULL; return p->conv(o, &v->ptr) ? 0 : -1;
    }
    return 0;
}

static void set_default(const cgpy_param *p, cgpy_val *v) {
    switch (p->kind) { /* v->o is NULL already */
    case CGPY_A_OBJ: break;
    case CGPY_A_INTLIST:
    case CGPY_A_SIZE:
    case CGPY_A_DIMS: v->n = 0; break;
    case CGPY_A_FLOAT: v->f = p->fdef; break;
    case CGPY_A_DTYPE: v->dtype = (cg_dtype)-1; break;
    case CGPY_A_DEVICE: v->dev = (cg_device){CG_DEVICE_CPU, 0}; break;
    case CGPY_A_BOOL: v->b = (int)p->def; break;
    case CGPY_A_TENSOR:
    case CGPY_A_OPT_TENSOR: v->t = NULL; break;
    case CGPY_A_STR: v->s = NULL; break;
    case CGPY_A_CONV: v->ptr = NULL; break;
    default: v->i = p->def; break;
    }
}

/* The step both entry points share: the positional and keyword arguments
 * into the parameters' slots (slot j at base + j * stride bytes, NULL when
 * absent), refusing too many positional arguments, unknown or repeated
 * keywords and missing required arguments. A spec (p) or a name list
 * (names, with npos / nreq) describes the parameters; parameter 0 is the
 * input when self_param (self in a method call, then not a keyword). A size
 * spread over `spread` positional arguments (Note [Argument specs]) fills
 * slot ks with its first and is converted by the caller. *first: 1 in a
 * method call. 0 or -1 (raised). */
typedef struct {
    const char *fname;
    const cgpy_param *p;
    const char *const *names;
    int n, npos, nreq;
    bool self_param;
} bind_sig;
#define SLOT(j) (*(PyObject **)((char *)base + (size_t)(j) * stride))
#define NAME(j) (g->p ? g->p[j].name : g->names[j])

static int bind(const bind_sig *g, PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                void *base, size_t stride, int ks, Py_ssize_t spread, int *first_out) {
    int n = g->n, npos = g->npos, first = 0;
    bool method = g->self_param && self && cgpy_is_tensor(self);
    for (int j = 0; j < n; j++) SLOT(j) = NULL;
    if (method) {
        SLOT(0) = self;
        first = 1;
    }
    *first_out = first;
    if (spread) {
        Py_ssize_t a0 = ks - first;
        for (Py_ssize_t i = 0; i < a0; i++) SLOT(first + i) = args[i];
        SLOT(ks) = args[a0];
    } else {
        if (nargs > npos - first) { /* Python's words for it */
            int most = npos - first, least = (g->nreq < npos ? g->nreq : npos) - first;
            if (least < most)
                PyErr_Format(PyExc_TypeError, "%s() takes from %d to %d positional arguments but %zd were given",
                    g->fname,
                             least, most, nargs);
            else
                PyErr_Format(PyExc_TypeError, "%s() takes %d positional argument%s but %zd were given", g->fname, most,
                             most == 1 ? "" : "s", nargs);
            return -1;
        }
        for (Py_ssize_t i = 0; i < nargs; i++) SLOT(first + i) = args[i];
    }
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k);
        int j = first;
        while (j < n && PyUnicode_CompareWithASCIIString(key, NAME(j)) != 0) j++;
        if (j == n || (method && g->p && (g->p[j].flags & CGPY_FUNC_ONLY))) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", g->fname, key);
            return -1;
        }
        if (SLOT(j)) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", g->fname, NAME(j));
            return -1;
        }
        SLOT(j) = args[nargs + k];
    }
    for (int j = first; j < g->nreq; j++)
        if (!SLOT(j) && (!g->p || (g->p[j].flags & (CGPY_REQ | CGPY_SELF)))) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", g->fname, NAME(j));
            return -1;
        }
    return 0;
}
#undef SLOT
#undef NAME

int cgpy_parse_fastkw(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, const char *fname,
                      const char *const *names, int npos, int nreq, PyObject **vals) {
    int n = 0, first;
    while (names[n]) n++;
    bind_sig g = {fname, NULL, names, n, npos, nreq, true};
    return bind(&g, self, args, nargs, kwnames, vals, sizeof *vals, 0, 0, &first);
}

int cgpy_args_parse(cgpy_spec *s, PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                    cgpy_val *v) {
    if (!s->ready) spec_init(s);
    int n = s->n, npos = s->npos, first;
    const cgpy_param *p = s->p;
    bool self_param = (p[0].flags & CGPY_SELF) != 0, method = self_param && self && cgpy_is_tensor(self);
    /* `x.view(2, 3)`: a size spread over the positional arguments. ks: its
     * parameter; a0: where it starts among the positional arguments */
    int ks = self_param ? 1 : 0;
    Py_ssize_t a0 = ks - (method ? 1 : 0), spread = 0;
    if (ks < npos && p[ks].kind == CGPY_A_SIZE && nargs > a0 &&
        (nargs - a0 > 1 || PyLong_Check(args[a0]) || (PyIndex_Check(args[a0]) && !PySequence_Check(args[a0]))))
        spread = nargs - a0;
    bind_sig g = {s->fname, p, NULL, n, npos, s->nreq, self_param};
    if (bind(&g, self, args, nargs, kwnames, &v[0].o, sizeof *v, ks, spread, &first)) return -1;
    if (first) v[0].t = cgpy_t(self);
    if (spread && cgpy_parse_shape_items(args + a0, spread, &v[ks].n, v[ks].v)) {
        v[ks].o = NULL;
        return -1;
    }
    for (int j = first; j < n; j++) {
        if (!v[j].o) {
            set_default(&p[j], &v[j]);
            if ((p[j].flags & CGPY_DEFAULT_DEV) && cgpy_default_device(&v[j].dev)) return -1;
            continue;
        }
        if (spread && j == ks) continue;
        int pos = j - first < nargs ? j - first + 1 : 0;
        if (convert(s, &p[j], pos, &v[j])) {
            v[j].o = NULL;
            return -1;
        }
    }
    return 0;
}

int cgpy_args_parse_tuple(cgpy_spec *s, PyObject *self, PyObject *args, PyObject *kw, cgpy_val *v) {
    Py_ssize_t na = PyTuple_GET_SIZE(args), nk = kw ? PyDict_GET_SIZE(kw) : 0;
    PyObject *stack[2 * CGPY_MAX_PARAMS] = {NULL};
    if (na + nk > 2 * CGPY_MAX_PARAMS) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d arguments (%zd given)", s->fname, CGPY_MAX_PARAMS,
            na + nk);
        return -1;
    }
    for (Py_ssize_t i = 0; i < na; i++) stack[i] = PyTuple_GET_ITEM(args, i);
    PyObject *kwnames = nk ? PyTuple_New(nk) : NULL;
    if (nk && !kwnames) return -1;
    PyObject *key, *val;
    Py_ssize_t pos = 0, k = 0;
    while (nk && PyDict_Next(kw, &pos, &key, &val)) {
        if (!PyUnicode_Check(key)) {
            Py_DECREF(kwnames);
            PyErr_Format(PyExc_TypeError, "%s() keywords must be strings", s->fname);
            return -1;
        }
        Py_INCREF(key);
        PyTuple_SET_ITEM(kwnames, k, key);
        stack[na + k++] = val; /* borrowed from kw, which outlives the call */
    }
    int r = cgpy_args_parse(s, self, stack, na, kwnames, v);
    Py_XDECREF(kwnames);
    return r;
}
