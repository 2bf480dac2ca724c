/* ops_creation.c — bindings of creation and random sampling: arange, linspace,
 * logspace, eye, rand, randn, randint, randperm, the *_like samplers,
 * normal, bernoulli, multinomial, the in-place samplers (uniform_, normal_,
 * bernoulli_, random_), seed / get_rng_state / set_rng_state, and the
 * Generator type with `generator=` on every random function.
 *
 * Note [Generators]: the engine has one global Philox generator whose whole
 * state is (seed, offset). A Generator object holds its own (seed, offset);
 * a call with generator=g saves the global state, installs g's, runs the
 * sampler, stores the advanced state back into g and restores the global
 * state. The binding never releases the GIL around engine calls, so no other
 * Python thread can observe or draw from the swapped-in state. The default
 * generator (cgrad.default_generator) is a Generator object that reads and
 * writes the global state itself. */
#include "bind.h"

#define DEFAULT_GENERATOR_SEED UINT64_C(67280421310721) /* PyTorch's default seed */

/* ------------------------------------------------------------- errors */

/* PyTorch raises NotImplementedError for samplers on unsupported dtypes and
 * RuntimeError for bad values (low >= high, std < 0, p outside [0, 1], ...). */
static PyObject *creation_raise(void) {
    cg_status st = cg_last_error();
    if (st == CG_ERR_DTYPE) {
        PyErr_SetString(PyExc_NotImplementedError, cg_last_error_message());
        cg_clear_error();
        return NULL;
    }
    return cgpy_raise_rt(false);
}

/* ------------------------------------------------------------- Generator */

typedef struct {
    PyObject_HEAD
    uint64_t seed, offset;
    bool is_default; /* the global generator: state lives in the engine */
} CgGenerator;

static PyTypeObject CgGenerator_Type;
static PyObject *g_default_generator;

static void gen_get(CgGenerator *g, uint64_t *seed, uint64_t *offset) {
    if (g->is_default) cg_rng_get_state(seed, offset);
    else *seed = g->seed, *offset = g->offset;
}
static void gen_set(CgGenerator *g, uint64_t seed, uint64_t offset) {
    if (g->is_default) cg_rng_set_state(seed, offset);
    else g->seed = seed, g->offset = offset;
}

/* Note [Generators]: install g's state for one engine call */
typedef struct {
    CgGenerator *g; /* NULL: the global generator is used as is */
    uint64_t seed, offset;
} gen_scope;
static void gen_enter(gen_scope *s, PyObject *g) {
    s->g = (g && g != Py_None && !((CgGenerator *)g)->is_default) ? (CgGenerator *)g : NULL;
    if (!s->g) return;
    cg_rng_get_state(&s->seed, &s->offset);
    cg_rng_set_state(s->g->seed, s->g->offset);
}
static void gen_exit(gen_scope *s) {
    if (!s->g) return;
    cg_rng_get_state(&s->g->seed, &s->g->offset);
    cg_rng_set_state(s->seed, s->offset);
}

/* "O&" converter for generator=: None or a Generator */
static int gen_conv(PyObject *o, void *out) {
    if (o == Py_None) return 1;
    if (!PyObject_TypeCheck(o, &CgGenerator_Type)) {
        PyErr_Format(PyExc_TypeError, "generator must be a cgrad.Generator, not %.100s", Py_TYPE(o)->tp_name);
        return 0;
    }
    *(PyObject **)out = o;
    return 1;
}

/* generator=, keyword-only: None or a Generator (.ptr) */
#define GENERATOR_ARG CGPY_ARG("generator", CGPY_A_CONV, CGPY_KWONLY, 0, 0, gen_conv)

/* a non-deterministic 63-bit seed from the OS (os.urandom) */
static int os_seed(uint64_t *out) {
    PyObject *os = PyImport_ImportModule("os");
    PyObject *b = os ? PyObject_CallMethod(os, "urandom", "i", 8) : NULL;
    Py_XDECREF(os);
    if (!b) return -1;
    uint64_t v = 0;
    const unsigned char *p = (const unsigned char *)PyBytes_AsString(b);
    if (!p) {
        Py_DECREF(b);
        return -1;
    }
    for (int i = 0; i < 8; i++) v = (v << 8) | p[i];
    Py_DECREF(b);
    *out = v & (UINT64_MAX >> 1);
    return 0;
}

static int gen_init(PyObject *self, PyObject *args, PyObject *kw) {
    static cgpy_spec spec = CGPY_SPEC("Generator", CGPY_ARG("device", CGPY_A_DEVICE));
    cgpy_val v[1];
    if (cgpy_args_parse_tuple(&spec, NULL, args, kw, v)) return -1;
    cg_device dev = v[0].dev;
    if (dev.type != CG_DEVICE_CPU) {
        PyErr_Format(PyExc_NotImplementedError, "Generator: only cpu generators exist (got device '%s')", cg_device_name(dev));
        return -1;
    }
    CgGenerator *g = (CgGenerator *)self;
    g->seed = DEFAULT_GENERATOR_SEED;
    g->offset = 0;
    return 0;
}

static PyObject *gen_manual_seed(PyObject *self, PyObject *arg) {
    uint64_t s;
    if (cgpy_parse_seed(arg, &s)) return NULL;
    gen_set((CgGenerator *)self, s, 0);
    Py_INCREF(self);
    return self;
}
static PyObject *gen_seed(PyObject *self, PyObject *unused) {
    (void)unused;
    uint64_t s;
    if (os_seed(&s)) return NULL;
    gen_set((CgGenerator *)self, s, 0);
    return PyLong_FromUnsignedLongLong(s);
}
static PyObject *gen_initial_seed(PyObject *self, PyObject *unused) {
    (void)unused;
    uint64_t s, o;
    gen_get((CgGenerator *)self, &s, &o);
    return PyLong_FromUnsignedLongLong(s);
}
static PyObject *gen_get_offset(PyObject *self, PyObject *unused) {
    (void)unused;
    uint64_t s, o;
    gen_get((CgGenerator *)self, &s, &o);
    return PyLong_FromUnsignedLongLong(o);
}
static PyObject *gen_set_offset(PyObject *self, PyObject *arg) {
    uint64_t s, o, no = PyLong_AsUnsignedLongLong(arg);
    if (PyErr_Occurred()) return NULL;
    gen_get((CgGenerator *)self, &s, &o);
    gen_set((CgGenerator *)self, s, no);
    Py_INCREF(self);
    return self;
}

/* state as a uint8 tensor of 16 bytes: seed then offset, little-endian */
static PyObject *state_tensor(uint64_t seed, uint64_t offset) {
    uint8_t buf[16];
    for (int i = 0; i < 8; i++) buf[i] = (uint8_t)(seed >> (8 * i)), buf[8 + i] = (uint8_t)(offset >> (8 * i));
    int64_t n = 16;
    cg_tensor *t = cg_from_data(buf, 1, &n, CG_DTYPE_U8);
    return t ? cgpy_wrap(t) : cgpy_raise();
}
static int parse_state(PyObject *o, uint64_t *seed, uint64_t *offset) {
    uint8_t buf[16];
    if (cgpy_is_tensor(o)) {
        cg_tensor *t = cgpy_t(o);
        if (cg_tensor_dtype(t) != CG_DTYPE_U8 || cg_tensor_numel(t) != 16) {
            PyErr_Format(PyExc_RuntimeError, "RNG state must be a uint8 tensor of 16 elements (got %s with %lld elements)",
                         cg_dtype_name(cg_tensor_dtype(t)), (long long)cg_tensor_numel(t));
            return -1;
        }
        if (cgpy_check(cg_tensor_copy_to_buffer(t, buf, CG_DTYPE_U8))) return -1;
    } else if (PyBytes_Check(o) && PyBytes_GET_SIZE(o) == 16) {
        memcpy(buf, PyBytes_AS_STRING(o), 16);
    } else {
        PyErr_Format(PyExc_TypeError, "RNG state must be a uint8 Tensor (or 16 bytes), not %.100s", Py_TYPE(o)->tp_name);
        return -1;
    }
    *seed = *offset = 0;
    for (int i = 7; i >= 0; i--) *seed = (*seed << 8) | buf[i], *offset = (*offset << 8) | buf[8 + i];
    return 0;
}
static PyObject *gen_get_state(PyObject *self, PyObject *unused) {
    (void)unused;
    uint64_t s, o;
    gen_get((CgGenerator *)self, &s, &o);
    return state_tensor(s, o);
}
static PyObject *gen_set_state(PyObject *self, PyObject *arg) {
    uint64_t s, o;
    if (parse_state(arg, &s, &o)) return NULL;
    gen_set((CgGenerator *)self, s, o);
    Py_INCREF(self);
    return self;
}
static PyObject *gen_clone_state(PyObject *self, PyObject *unused) {
    (void)unused;
    CgGenerator *g = PyObject_New(CgGenerator, &CgGenerator_Type);
    if (!g) return NULL;
    g->is_default = false;
    gen_get((CgGenerator *)self, &g->seed, &g->offset);
    return (PyObject *)g;
}
static PyObject *gen_device(PyObject *self, void *c) {
    (void)self, (void)c;
    return cgpy_device(cg_cpu());
}
static PyObject *gen_repr(PyObject *self) {
    return PyUnicode_FromFormat("<cgrad.Generator object at %p%s>", (void *)self,
                                ((CgGenerator *)self)->is_default ? " (default)" : "");
}

static PyMethodDef gen_methods[] = {
    {"manual_seed", gen_manual_seed, METH_O, "Set the seed (and reset the offset); returns the generator."},
    {"seed", gen_seed, METH_NOARGS, "Seed from the OS; returns the seed."},
    {"initial_seed", gen_initial_seed, METH_NOARGS, "The seed the generator was last seeded with."},
    {"get_state", gen_get_state, METH_NOARGS, "State as a uint8 tensor (16 bytes: seed, offset)."},
    {"set_state", gen_set_state, METH_O, "Restore a state from get_state(); returns the generator."},
    {"get_offset", gen_get_offset, METH_NOARGS, "The Philox offset."},
    {"set_offset", gen_set_offset, METH_O, "Set the Philox offset; returns the generator."},
    {"clone_state", gen_clone_state, METH_NOARGS, "A new generator with the same state."},
    {NULL, NULL, 0, NULL},
};
static PyGetSetDef gen_getset[] = {{"device", gen_device, NULL, NULL, NULL}, {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject CgGenerator_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cgrad.Generator",
    .tp_basicsize = sizeof(CgGenerator),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A random number generator (Philox: seed + offset); pass it as generator= to random functions.",
    .tp_new = PyType_GenericNew,
    .tp_init = gen_init,
    .tp_repr = gen_repr,
    .tp_methods = gen_methods,
    .tp_getset = gen_getset,
};

PyObject *cgpy_default_generator(void) {
    Py_INCREF(g_default_generator);
    return g_default_generator;
}

int cgpy_init_generator(PyObject *m) {
    if (PyType_Ready(&CgGenerator_Type) < 0) return -1;
    if (PyModule_AddObjectRef(m, "Generator", (PyObject *)&CgGenerator_Type) < 0) return -1;
    CgGenerator *d = PyObject_New(CgGenerator, &CgGenerator_Type);
    if (!d) return -1;
    d->is_default = true;
    d->seed = d->offset = 0;
    g_default_generator = (PyObject *)d;
    return PyModule_AddObjectRef(m, "default_generator", g_default_generator);
}

/* ------------------------------------------------------------- shared factory keywords */

typedef struct {
    PyObject *gen, *out, *layout;
    int dtype; /* -1: the op's default */
    cg_device dev;
    int requires_grad, pin;
    const char *op; /* set by fkw_check */
} fkw;
/* the factory keywords, the last FKW_N parameters of a spec; FKW_PARAMS's
 * device= is the default device when absent (Note [Default device]), the
 * others' (the *_like functions, normal) the inputs' */
#define FKW_N 6
#define FKW_PARAMS_DEV(devflags)                                                                                   \
    CGPY_ARG("dtype", CGPY_A_DTYPE, CGPY_KWONLY), CGPY_ARG("device", CGPY_A_DEVICE, devflags),                     \
        CGPY_ARG("requires_grad", CGPY_A_BOOL, CGPY_KWONLY), CGPY_ARG("out", CGPY_A_OBJ, CGPY_KWONLY),             \
        CGPY_ARG("layout", CGPY_A_OBJ, CGPY_KWONLY), CGPY_ARG("pin_memory", CGPY_A_BOOL, CGPY_KWONLY)
#define FKW_PARAMS FKW_PARAMS_DEV(CGPY_KWONLY | CGPY_DEFAULT_DEV)
#define FKW_PARAMS_NODEF FKW_PARAMS_DEV(CGPY_KWONLY)
/* f from the FKW_N values at v */
static fkw fkw_from(const cgpy_val *v) {
    fkw f = {NULL, v[3].o, v[4].o, (int)v[0].dtype, v[1].dev, v[2].b, v[5].b, NULL};
    return f;
}

/* The keywords' checks; a dtype= that differs from out='s is a RuntimeError,
 * as in PyTorch (a factory computes in out's dtype, see fkw_dtype). */
static int fkw_check(fkw *f, const char *op) {
    f->op = op;
    if (f->dtype >= 0) {
        int d = f->dtype;
        if (cgpy_out_dtype(f->out, &d, op)) return -1;
    }
    if (cgpy_check_layout(f->layout, op)) return -1;
    if (f->pin && cgpy_check_pin(op)) return -1;
    return 0;
}

/* The dtype a factory computes in: dtype=, else out='s (PyTorch fills out in
 * its own dtype), else the op's default. */
static cg_dtype fkw_dtype(const fkw *f, cg_dtype dflt) {
    int d = f->dtype;
    cgpy_out_dtype(f->out, &d, NULL); /* cannot fail without factory_op */
    return d >= 0 ? (cg_dtype)d : dflt;
}

/* result of a factory: requires_grad (ignored with out=, as in PyTorch), out= */
static PyObject *fkw_finish(cg_tensor *t, const fkw *f) {
    if (!t) return PyErr_Occurred() ? NULL : creation_raise();
    bool has_out = f->out && f->out != Py_None;
    if (f->requires_grad && !has_out && cgpy_check(cg_tensor_set_requires_grad(t, true))) {
        cg_tensor_release(t);
        return NULL;
    }
    cgpy_out_rule rule = {f->op, CGPY_OUT_EXACT, CGPY_OUT_ALIAS_OK, CGPY_OUT_QUIET_RESIZE};
    return cgpy_out_finish(f->out, t, &rule, 0, NULL);
}

/* ------------------------------------------------------------- linspace, logspace, eye */

static int parse_number(PyObject *o, double *v, const char *what) {
    if (cgpy_is_tensor(o) && cg_tensor_ndim(cgpy_t(o)) != 0) {
        PyErr_Format(PyExc_RuntimeError, "linspace only supports 0-dimensional start and end tensors, but got %s with %d dimension(s).",
                     what, cg_tensor_ndim(cgpy_t(o)));
        return -1;
    }
    return cgpy_parse_double(o, v, what);
}

static PyObject *space_common(CGPY_FASTKW_ARGS, bool log) {
    static cgpy_spec lin = CGPY_SPEC("linspace", CGPY_ARG("start", CGPY_A_OBJ, CGPY_REQ), CGPY_ARG("end", CGPY_A_OBJ,
                                     CGPY_REQ),
                                     CGPY_ARG("steps", CGPY_A_INT, CGPY_REQ), FKW_PARAMS);
    static cgpy_spec logs = CGPY_SPEC("logspace", CGPY_ARG("start", CGPY_A_OBJ, CGPY_REQ), CGPY_ARG("end", CGPY_A_OBJ,
                                      CGPY_REQ),
                                      CGPY_ARG("steps", CGPY_A_INT, CGPY_REQ), CGPY_ARG("base", CGPY_A_FLOAT, 0, 0,
                                          10.0), FKW_PARAMS);
    cgpy_val v[4 + FKW_N];
    if (cgpy_args_parse(log ? &logs : &lin, self, args, nargs, kwnames, v)) return NULL;
    PyObject *a = v[0].o, *b = v[1].o;
    int64_t steps = v[2].i;
    double base = log ? v[3].f : 10.0;
    fkw f = fkw_from(v + (log ? 4 : 3));
    if (fkw_check(&f, log ? "logspace" : "linspace")) return NULL;
    double s, e;
    if (parse_number(a, &s, "start") || parse_number(b, &e, "end")) return NULL;
    if (steps < 0) {
        PyErr_SetString(PyExc_RuntimeError, "number of steps must be non-negative");
        return NULL;
    }
    cg_dtype dt = fkw_dtype(&f, cgpy_default_dtype);
    if (dt == CG_DTYPE_BOOL) { /* as PyTorch's kernels */
        PyErr_Format(PyExc_NotImplementedError, "\"%s_cpu\" not implemented for 'Bool'", log ? "logspace" : "linspace");
        return NULL;
    }
    return fkw_finish(log ? cg_logspace(s, e, steps, base, dt, f.dev) : cg_linspace(s, e, steps, dt, f.dev), &f);
}
static PyObject *py_linspace(CGPY_FASTKW_ARGS) { return space_common(self, args, nargs, kwnames, false); }
static PyObject *py_logspace(CGPY_FASTKW_ARGS) { return space_common(self, args, nargs, kwnames, true); }

/* arange(end) / arange(start, end, step=1): int64 when every bound is an
 * integer, else the default dtype; out= picks the dtype, as in PyTorch */
static PyObject *py_arange(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("arange", CGPY_ARG("start", CGPY_A_OBJ, CGPY_REQ), CGPY_ARG("end", CGPY_A_OBJ),
                                      CGPY_ARG("step", CGPY_A_OBJ), FKW_PARAMS);
    cgpy_val v[3 + FKW_N];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    fkw f = fkw_from(v + 3);
    if (fkw_check(&f, "arange")) return NULL;
    PyObject *vals[3] = {v[1].o ? v[0].o : NULL, v[1].o ? v[1].o : v[0].o, v[2].o};
    double b[3] = {0, 0, 1};
    bool all_int = true;
    for (int i = 0; i < 3; i++) {
        if (!vals[i]) continue;
        if (cgpy_is_tensor(vals[i])) {
            if (cgpy_check(cg_tensor_item(cgpy_t(vals[i]), &b[i]))) return NULL;
            all_int &= !cg_dtype_is_floating(cg_tensor_dtype(cgpy_t(vals[i])));
            continue;
        }
        b[i] = PyFloat_AsDouble(vals[i]);
        if (b[i] == -1.0 && PyErr_Occurred()) return NULL;
        all_int &= PyLong_Check(vals[i]) != 0;
    }
    cg_dtype dt = fkw_dtype(&f, all_int ? CG_DTYPE_I64 : cgpy_default_dtype);
    cg_tensor *t = cg_arange(b[0], b[1], b[2], dt, f.dev);
    if (!t) return cgpy_raise(); /* InvalidArgument: PyTorch raises ValueError or RuntimeError by case */
    if (f.out && f.out != Py_None) { /* PyTorch warns when it resizes out here */
        cgpy_out_rule rule = {"arange", CGPY_OUT_EXACT, CGPY_OUT_ALIAS_OK, 0};
        return cgpy_out_finish(f.out, t, &rule, 0, NULL);
    }
    return fkw_finish(t, &f);
}

static PyObject *py_eye(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("eye", CGPY_ARG("n", CGPY_A_INT, CGPY_REQ), CGPY_ARG("m", CGPY_A_OBJ),
                                      FKW_PARAMS);
    cgpy_val v[2 + FKW_N];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    int64_t n = v[0].i, m = n;
    fkw f = fkw_from(v + 2);
    if (fkw_check(&f, "eye")) return NULL;
    if (cgpy_given(&v[1]) && cgpy_parse_int(v[1].o, &m, "m")) return NULL;
    if (n < 0 || m < 0) {
        PyErr_Format(PyExc_RuntimeError, "n and m must be greater or equal to 0, got n=%lld, m=%lld", (long long)n,
            (long long)m);
        return NULL;
    }
    cg_dtype dt = fkw_dtype(&f, cgpy_default_dtype);
    return fkw_finish(cg_eye(n, m, dt, f.dev), &f);
}

/* ------------------------------------------------------------- rand, randn, randint, randperm */

/* rand(*size, *, generator, dtype, device, requires_grad, out, layout, pin_memory) */
static PyObject *rand_common(CGPY_FASTKW_ARGS, bool normal) {
    static cgpy_spec specs[2] = {CGPY_SPEC("rand", CGPY_ARG("size", CGPY_A_SIZE), GENERATOR_ARG, FKW_PARAMS),
                                 CGPY_SPEC("randn", CGPY_ARG("size", CGPY_A_SIZE), GENERATOR_ARG, FKW_PARAMS)};
    const char *name = specs[normal].fname;
    cgpy_val v[2 + FKW_N];
    if (cgpy_args_parse(&specs[normal], self, args, nargs, kwnames, v)) return NULL;
    PyObject *gen = v[1].ptr;
    fkw f = fkw_from(v + 2);
    if (fkw_check(&f, name)) return NULL;
    int nd = v[0].n;
    const int64_t *shape = v[0].v;
    cg_dtype dt = fkw_dtype(&f, cgpy_default_dtype);
    gen_scope g;
    gen_enter(&g, gen);
    cg_tensor *r = normal ? cg_randn(nd, shape, dt, f.dev) : cg_rand(nd, shape, dt, f.dev);
    gen_exit(&g);
    return fkw_finish(r, &f);
}
static PyObject *py_rand(CGPY_FASTKW_ARGS) { return rand_common(self, args, nargs, kwnames, false); }
static PyObject *py_randn(CGPY_FASTKW_ARGS) { return rand_common(self, args, nargs, kwnames, true); }

/* randint(low=0, high, size, *, generator, dtype=int64, ...) */
static PyObject *py_randint(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("randint", CGPY_ARG("low", CGPY_A_OBJ), CGPY_ARG("high", CGPY_A_OBJ),
                                      CGPY_ARG("size", CGPY_A_OBJ),
                                      GENERATOR_ARG, FKW_PARAMS);
    cgpy_val v[4 + FKW_N];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *a = v[0].o, *b = v[1].o, *c = v[2].o, *gen = v[3].ptr;
    fkw f = fkw_from(v + 4);
    if (fkw_check(&f, "randint")) return NULL;
    /* positional (high, size) or (low, high, size); keywords fill the rest */
    PyObject *low = NULL, *high = NULL, *size = c;
    if (!c) high = b ? a : NULL, size = b;
    else if (b) low = a, high = b;
    else high = a;
    if (!high || !size) {
        PyErr_SetString(PyExc_TypeError, "randint() expects (high, size) or (low, high, size)");
        return NULL;
    }
    int64_t lo = 0, hi;
    if ((low && cgpy_parse_int(low, &lo, "low")) || cgpy_parse_int(high, &hi, "high")) return NULL;
    int nd;
    int64_t shape[CG_MAX_DIMS];
    if (cgpy_parse_shape_items(&size, 1, &nd, shape)) return NULL;
    if (lo >= hi) {
        PyErr_Format(PyExc_RuntimeError, "random_ expects 'from' to be less than 'to', but got from=%lld >= to=%lld",
                     (long long)lo, (long long)hi);
        return NULL;
    }
    gen_scope g;
    gen_enter(&g, gen);
    cg_tensor *r = cg_randint(lo, hi, nd, shape, fkw_dtype(&f, CG_DTYPE_I64), f.dev);
    gen_exit(&g);
    return fkw_finish(r, &f);
}

static PyObject *py_randperm(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("randperm", CGPY_ARG("n", CGPY_A_INT, CGPY_REQ), GENERATOR_ARG, FKW_PARAMS);
    cgpy_val v[2 + FKW_N];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    int64_t n = v[0].i;
    PyObject *gen = v[1].ptr;
    fkw f = fkw_from(v + 2);
    if (fkw_check(&f, "randperm")) return NULL;
    if (n < 0) {
        PyErr_Format(PyExc_RuntimeError, "randperm(): n must be non-negative, got %lld", (long long)n);
        return NULL;
    }
    gen_scope g;
    gen_enter(&g, gen);
    cg_tensor *r = cg_randperm(n, fkw_dtype(&f, CG_DTYPE_I64), f.dev);
    gen_exit(&g);
    return fkw_finish(r, &f);
}

/* ------------------------------------------------------------- _like samplers */

typedef enum { LIKE_RAND, LIKE_RANDN, LIKE_RANDINT } like_kind;

/* rand_like / randn_like(input, *, ...) and randint_like(input, low=0, high, *, ...) */
#define LIKE_SPEC(name) \
    CGPY_SPEC(name, CGPY_ARG("input", CGPY_A_TENSOR, CGPY_REQ), GENERATOR_ARG, CGPY_ARG("memory_format", CGPY_A_OBJ, CGPY_KWONLY), FKW_PARAMS_NODEF)
static PyObject *like_common(CGPY_FASTKW_ARGS, like_kind kind) {
    static cgpy_spec specs[3] = {
        LIKE_SPEC("rand_like"), LIKE_SPEC("randn_like"),
        CGPY_SPEC("randint_like", CGPY_ARG("input", CGPY_A_TENSOR, CGPY_REQ), CGPY_ARG("low", CGPY_A_OBJ),
                  CGPY_ARG("high", CGPY_A_OBJ),
                  GENERATOR_ARG, CGPY_ARG("memory_format", CGPY_A_OBJ, CGPY_KWONLY), FKW_PARAMS_NODEF)};
    cgpy_val v[6 + FKW_N];
    if (cgpy_args_parse(&specs[kind], self, args, nargs, kwnames, v)) return NULL;
    int k = kind == LIKE_RANDINT ? 3 : 1;
    PyObject *x = v[0].o, *a = kind == LIKE_RANDINT ? v[1].o : NULL, *b = kind == LIKE_RANDINT ? v[2].o : NULL;
    PyObject *gen = v[k].ptr;
    fkw f = fkw_from(v + k + 2);
    if (fkw_check(&f, specs[kind].fname)) return NULL;
    cg_tensor *t = cgpy_t(x);
    if (!v[k + 2 + 1].o) f.dev = cg_tensor_device(t); /* no device=: the input's */
    cg_dtype dt = fkw_dtype(&f, cg_tensor_dtype(t));
    int64_t lo = 0, hi = 0;
    if (kind == LIKE_RANDINT) {
        PyObject *low = NULL, *high = NULL;
        if (a && b) low = a, high = b;
        else if (a && !b && nargs >= 2) high = a; /* randint_like(x, high) */
        else low = a, high = b;
        if (!high) {
            PyErr_SetString(PyExc_TypeError, "randint_like() missing required argument 'high'");
            return NULL;
        }
        if ((low && cgpy_parse_int(low, &lo, "low")) || cgpy_parse_int(high, &hi, "high")) return NULL;
        if (lo >= hi) {
            PyErr_Format(PyExc_RuntimeError, "random_ expects 'from' to be less than 'to', but got from=%lld >= to=%lld",
                         (long long)lo, (long long)hi);
            return NULL;
        }
    }
    int nd = cg_tensor_ndim(t);
    const int64_t *sh = cg_tensor_shape(t);
    gen_scope g;
    gen_enter(&g, gen);
    cg_tensor *r = kind == LIKE_RAND    ? cg_rand(nd, sh, dt, f.dev)
                   : kind == LIKE_RANDN ? cg_randn(nd, sh, dt, f.dev)
                                        : cg_randint(lo, hi, nd, sh, dt, f.dev);
    gen_exit(&g);
    cg_memory_format fmt;
    if (cgpy_memory_format(v[k + 1].o, CG_MEMORY_PRESERVE, specs[kind].fname, &fmt)) {
        cg_tensor_release(r);
        return NULL;
    }
    if (r && fmt != CG_MEMORY_CONTIGUOUS && !(fmt == CG_MEMORY_PRESERVE && cgpy_has_contiguous_strides(t))) {
        cg_tensor *l = cg_empty_like_as(t, dt, f.dev, fmt); /* laid out like t, or in fmt */
        if (l && cgpy_check(cg_copy_(l, r))) {
            cg_tensor_release(l);
            l = NULL;
        }
        cg_tensor_release(r);
        r = l;
    }
    return fkw_finish(r, &f);
}
static PyObject *py_rand_like(CGPY_FASTKW_ARGS) { return like_common(self, args, nargs, kwnames, LIKE_RAND); }
static PyObject *py_randn_like(CGPY_FASTKW_ARGS) { return like_common(self, args, nargs, kwnames, LIKE_RANDN); }
static PyObject *py_randint_like(CGPY_FASTKW_ARGS) { return like_common(self, args, nargs, kwnames, LIKE_RANDINT); }

/* ------------------------------------------------------------- normal */

/* PyErr_Format has no %g: the value is formatted first */
static PyObject *raise_negative_std(double s) {
    char buf[32];
    snprintf(buf, sizeof buf, "%g", s);
    PyErr_Format(PyExc_RuntimeError, "normal expects std >= 0.0, but found std %s", buf);
    return NULL;
}

/* normal(mean, std=1.0, size=None, *, generator, out, dtype, ...):
 * tensor / tensor, tensor / float, float / tensor (the result takes the
 * tensor's dtype; a Tensor std follows mean's dtype) and float / float with a size. */
static PyObject *py_normal(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("normal", CGPY_ARG("mean", CGPY_A_OBJ, CGPY_REQ), CGPY_ARG("std", CGPY_A_OBJ),
                                      CGPY_ARG("size", CGPY_A_OBJ), GENERATOR_ARG, FKW_PARAMS_NODEF);
    cgpy_val v[4 + FKW_N];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *mean = v[0].o, *std = v[1].o, *size = v[2].o, *gen = v[3].ptr;
    fkw f = fkw_from(v + 4);
    if (fkw_check(&f, "normal")) return NULL;
    bool mt = cgpy_is_tensor(mean), st = std && cgpy_is_tensor(std);
    gen_scope g;
    if (!mt && !st) { /* normal(mean: float, std: float, size) */
        double m, s = 1.0;
        if (cgpy_parse_double(mean, &m, "mean") || (std && cgpy_parse_double(std, &s, "std"))) return NULL;
        if (!size || size == Py_None) {
            PyErr_SetString(PyExc_TypeError, "normal() with float mean and std needs a size");
            return NULL;
        }
        int nd;
        int64_t shape[CG_MAX_DIMS];
        if (cgpy_parse_shape_items(&size, 1, &nd, shape)) return NULL;
        if (s < 0) {
            return raise_negative_std(s);
        }
        cg_dtype dt = fkw_dtype(&f, cgpy_default_dtype);
        cg_tensor *r = cg_empty(nd, shape, dt, f.dev);
        if (!r) return creation_raise();
        gen_enter(&g, gen);
        cg_status stt = cg_normal_(r, m, s);
        gen_exit(&g);
        if (stt) {
            cg_tensor_release(r);
            return creation_raise();
        }
        return fkw_finish(r, &f);
    }
    if (size && size != Py_None) {
        PyErr_SetString(PyExc_TypeError, "normal(): size= is only accepted with float mean and std");
        return NULL;
    }
    if (f.dtype >= 0) {
        PyErr_SetString(PyExc_TypeError, "normal(): dtype= is only accepted with float mean and std");
        return NULL;
    }
    cg_tensor *ref = mt ? cgpy_t(mean) : cgpy_t(std);
    cg_dtype dt = cg_tensor_dtype(ref);
    if (!cg_dtype_is_floating(dt)) {
        PyErr_Format(PyExc_NotImplementedError, "\"normal_kernel_cpu\" not implemented for '%s'", cg_dtype_name(dt));
        return NULL;
    }
    if (!st && std) {
        double s;
        if (cgpy_parse_double(std, &s, "std")) return NULL;
        if (s < 0) {
            return raise_negative_std(s);
        }
    }
    cg_tensor *mtn = cgpy_as_tensor(mean, dt, cg_tensor_device(ref));
    cg_tensor *stn = !mtn ? NULL : std ? cgpy_as_tensor(std, dt, cg_tensor_device(ref)) : cg_scalar_on(1.0, dt, cg_tensor_device(ref));
    if (!stn) {
        cg_tensor_release(mtn);
        return PyErr_Occurred() ? NULL : creation_raise();
    }
    gen_enter(&g, gen);
    cg_tensor *r = cg_normal(mtn, stn);
    gen_exit(&g);
    cg_tensor_release(mtn);
    cg_tensor_release(stn);
    return fkw_finish(r, &f);
}

/* ------------------------------------------------------------- bernoulli, multinomial */

/* bernoulli(input, p=None, *, generator, out): p None -> input holds the
 * probabilities; p a float -> input's shape and dtype with probability p */
static PyObject *py_bernoulli(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("bernoulli", CGPY_INPUT_ARG, CGPY_ARG("p", CGPY_A_OBJ), GENERATOR_ARG,
                                      CGPY_ARG("out", CGPY_A_OBJ, CGPY_KWONLY));
    cgpy_val v[4];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *x = v[0].o, *p = v[1].o ? v[1].o : Py_None, *gen = v[2].ptr, *out = v[3].o;
    cg_tensor *t = cgpy_t(x), *r;
    gen_scope g;
    if (p == Py_None) {
        gen_enter(&g, gen);
        r = cg_bernoulli(t);
        gen_exit(&g);
    } else {
        double pv;
        if (cgpy_parse_double(p, &pv, "p")) return NULL;
        r = cg_empty(cg_tensor_ndim(t), cg_tensor_shape(t), cg_tensor_dtype(t), cg_tensor_device(t));
        if (!r) return creation_raise();
        gen_enter(&g, gen);
        cg_status st = cg_bernoulli_(r, pv);
        gen_exit(&g);
        if (st) {
            cg_tensor_release(r);
            return creation_raise();
        }
    }
    if (!r) return creation_raise();
    static const cgpy_out_rule rule = {"bernoulli", CGPY_OUT_ANY_DTYPE, CGPY_OUT_NO_PARTIAL, /* 0/1 in any dtype */
                                       CGPY_OUT_GRAD_INPUTS | CGPY_OUT_QUIET_RESIZE};
    return cgpy_out_finish(out, r, &rule, 1, &t);
}

static PyObject *py_multinomial(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("multinomial", CGPY_INPUT_ARG, CGPY_ARG("num_samples", CGPY_A_INT, CGPY_REQ),
                                      CGPY_ARG("replacement", CGPY_A_BOOL),
                                             GENERATOR_ARG, CGPY_ARG("out", CGPY_A_OBJ, CGPY_KWONLY));
    cgpy_val v[5];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *x = v[0].o, *gen = v[3].ptr, *out = v[4].o;
    int64_t n = v[1].i;
    int repl = v[2].b;
    cg_tensor *t = cgpy_t(x);
    int nd = cg_tensor_ndim(t);
    if (nd < 1 || nd > 2) {
        PyErr_Format(PyExc_RuntimeError, "multinomial(): prob_dist must be 1 or 2 dim, got %d", nd);
        return NULL;
    }
    if (n <= 0) {
        PyErr_SetString(PyExc_RuntimeError, "multinomial(): cannot sample n_sample <= 0 samples");
        return NULL;
    }
    if (!repl && n > cg_tensor_shape(t)[nd - 1]) {
        PyErr_SetString(PyExc_RuntimeError, "multinomial(): cannot sample n_sample > prob_dist.size(-1) samples without replacement");
        return NULL;
    }
    gen_scope g;
    gen_enter(&g, gen);
    cg_tensor *r = cg_multinomial(t, n, repl);
    gen_exit(&g);
    if (!r) return creation_raise();
    static const cgpy_out_rule rule = {"multinomial", CGPY_OUT_EXACT, CGPY_OUT_NO_ALIAS, CGPY_OUT_QUIET_RESIZE};
    return cgpy_out_finish(out, r, &rule, 1, &t);
}

/* ------------------------------------------------------------- in-place samplers */

static int inplace_ok(cg_tensor *x, const char *op) { return cgpy_check_leaf(x, op); }

/* uniform_(from=0, to=1) / normal_(mean=0, std=1), both with `generator=` */
static PyObject *two_param_sampler_(CGPY_FASTKW_ARGS, cgpy_spec *spec, cg_status (*fn)(cg_tensor *, double, double)) {
    const char *op = spec->fname;
    cgpy_val v[3];
    if (cgpy_args_parse(spec, self, args, nargs, kwnames, v)) return NULL;
    double a = v[0].f, b = v[1].f;
    PyObject *gen = v[2].ptr;
    cg_tensor *t = cgpy_t(self);
    if (inplace_ok(t, op)) return NULL;
    gen_scope g;
    gen_enter(&g, gen);
    cg_status st = fn(t, a, b);
    gen_exit(&g);
    if (st) return creation_raise();
    Py_INCREF(self);
    return self;
}

static PyObject *py_uniform_(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec =
        CGPY_SPEC("uniform_", CGPY_ARG("from", CGPY_A_FLOAT, 0, 0, 0.0), CGPY_ARG("to", CGPY_A_FLOAT, 0, 0, 1.0),
                  GENERATOR_ARG);
    return two_param_sampler_(self, args, nargs, kwnames, &spec, cg_uniform_);
}

static PyObject *py_normal_(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec =
        CGPY_SPEC("normal_", CGPY_ARG("mean", CGPY_A_FLOAT, 0, 0, 0.0), CGPY_ARG("std", CGPY_A_FLOAT, 0, 0, 1.0),
                  GENERATOR_ARG);
    return two_param_sampler_(self, args, nargs, kwnames, &spec, cg_normal_);
}

/* bernoulli_(p=0.5, *, generator): p a float or a tensor of probabilities broadcast to self */
static PyObject *py_bernoulli_(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("bernoulli_", CGPY_ARG("p", CGPY_A_OBJ), GENERATOR_ARG);
    cgpy_val v[2];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *p = v[0].o, *gen = v[1].ptr;
    cg_tensor *t = cgpy_t(self);
    if (inplace_ok(t, "bernoulli_")) return NULL;
    gen_scope g;
    cg_status st;
    if (!p || !cgpy_is_tensor(p)) {
        double pv = 0.5;
        if (p && cgpy_parse_double(p, &pv, "p")) return NULL;
        gen_enter(&g, gen);
        st = cg_bernoulli_(t, pv);
        gen_exit(&g);
    } else {
        cg_tensor *pt = cgpy_t(p);
        cg_dtype fdt = cg_dtype_is_floating(cg_tensor_dtype(pt)) ? cg_tensor_dtype(pt) : CG_DTYPE_F64;
        bool prev = cg_set_grad_enabled(false);
        cg_tensor *pe = cg_expand(pt, cg_tensor_ndim(t), cg_tensor_shape(t));
        cg_tensor *pf = pe ? cg_to_dtype(pe, fdt) : NULL;
        cg_tensor_release(pe);
        gen_enter(&g, gen);
        cg_tensor *r = pf ? cg_bernoulli(pf) : NULL;
        gen_exit(&g);
        cg_tensor_release(pf);
        st = r ? cg_copy_(t, r) : cg_last_error();
        cg_tensor_release(r);
        cg_set_grad_enabled(prev);
    }
    if (st) return creation_raise();
    Py_INCREF(self);
    return self;
}

/* the largest `to` of random_() for a dtype: 2^mantissa + 1 for floats, max + 1 for integers */
static int64_t random_default_to(cg_dtype dt) {
    switch (dt) {
    case CG_DTYPE_BOOL: return 2;
    case CG_DTYPE_U8: return 256;
    case CG_DTYPE_I8: return 128;
    case CG_DTYPE_I16: return 32768;
    case CG_DTYPE_I32: return INT64_C(2147483648);
    case CG_DTYPE_F16: return (1 << 11) + 1;
    case CG_DTYPE_BF16: return (1 << 8) + 1;
    case CG_DTYPE_F32: return (1 << 24) + 1;
    case CG_DTYPE_F64: return (INT64_C(1) << 53) + 1;
    default: return INT64_MAX;
    }
}

/* random_(from=0, to=None, *, generator): integers in [from, to) stored in self's dtype */
static PyObject *py_random_(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("random_", CGPY_ARG("from", CGPY_A_OBJ), CGPY_ARG("to", CGPY_A_OBJ),
                                      GENERATOR_ARG);
    cgpy_val v[3];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *a = v[0].o, *b = v[1].o ? v[1].o : Py_None, *gen = v[2].ptr;
    cg_tensor *t = cgpy_t(self);
    if (inplace_ok(t, "random_")) return NULL;
    int64_t lo = 0, hi;
    if (a && b == Py_None && nargs == 1) { /* random_(to) */
        if (cgpy_parse_int(a, &hi, "to")) return NULL;
    } else {
        if (a && cgpy_parse_int(a, &lo, "from")) return NULL;
        if (b == Py_None) hi = random_default_to(cg_tensor_dtype(t));
        else if (cgpy_parse_int(b, &hi, "to")) return NULL;
    }
    if (lo >= hi) {
        PyErr_Format(PyExc_RuntimeError, "random_ expects 'from' to be less than 'to', but got from=%lld >= to=%lld",
                     (long long)lo, (long long)hi);
        return NULL;
    }
    gen_scope g;
    gen_enter(&g, gen);
    cg_tensor *r = cg_randint(lo, hi, cg_tensor_ndim(t), cg_tensor_shape(t), cg_tensor_dtype(t), cg_tensor_device(t));
    gen_exit(&g);
    if (!r) return creation_raise();
    bool prev = cg_set_grad_enabled(false);
    cg_status st = cg_copy_(t, r);
    cg_set_grad_enabled(prev);
    cg_tensor_release(r);
    if (cgpy_check(st)) return NULL;
    Py_INCREF(self);
    return self;
}

/* ------------------------------------------------------------- global state */

static PyObject *py_seed(PyObject *mod, PyObject *unused) {
    (void)mod, (void)unused;
    uint64_t s;
    if (os_seed(&s)) return NULL;
    cg_manual_seed(s);
    return PyLong_FromUnsignedLongLong(s);
}
static PyObject *py_get_rng_state(PyObject *mod, PyObject *unused) {
    (void)mod, (void)unused;
    uint64_t s, o;
    cg_rng_get_state(&s, &o);
    return state_tensor(s, o);
}
static PyObject *py_set_rng_state(PyObject *mod, PyObject *arg) {
    (void)mod;
    uint64_t s, o;
    if (parse_state(arg, &s, &o)) return NULL;
    cg_rng_set_state(s, o);
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------- tables */

PyMethodDef cgpy_creation_methods[] = {
    CGPY_FASTKW("bernoulli", py_bernoulli),
    CGPY_FASTKW("multinomial", py_multinomial),
    CGPY_FASTKW("uniform_", py_uniform_),
    CGPY_FASTKW("normal_", py_normal_),
    CGPY_FASTKW("bernoulli_", py_bernoulli_),
    CGPY_FASTKW("random_", py_random_),
    CGPY_TABLE_END,
};
PyMethodDef cgpy_creation_functions[] = {
    CGPY_FASTKW("arange", py_arange),
    CGPY_FASTKW("linspace", py_linspace),
    CGPY_FASTKW("logspace", py_logspace),
    CGPY_FASTKW("eye", py_eye),
    CGPY_FASTKW("rand", py_rand),
    CGPY_FASTKW("randn", py_randn),
    CGPY_FASTKW("randint", py_randint),
    CGPY_FASTKW("randperm", py_randperm),
    CGPY_FASTKW("rand_like", py_rand_like),
    CGPY_FASTKW("randn_like", py_randn_like),
    CGPY_FASTKW("randint_like", py_randint_like),
    CGPY_FASTKW("normal", py_normal),
    CGPY_FASTKW("bernoulli", py_bernoulli),
    CGPY_FASTKW("multinomial", py_multinomial),
    {"seed", py_seed, METH_NOARGS, NULL},
    {"get_rng_state", py_get_rng_state, METH_NOARGS, NULL},
    {"set_rng_state", py_set_rng_state, METH_O, NULL},
    CGPY_TABLE_END,
};
