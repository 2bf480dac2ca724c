/* args.h — internal: the binding's one argument parser (Note [Argument
 * specs]) and its typed converters, plus the shape / dim / int / seed
 * parsers it is built from (args.c). */
#ifndef CGPY_ARGS_H
#define CGPY_ARGS_H

#include "cgpy.h"

/* Note [Argument specs]: every binding that takes keywords is a
 * METH_FASTCALL | METH_KEYWORDS function with one static spec, PyTorch's
 * signature written as a table:
 *
 *     static cgpy_spec sum_spec = {"sum", {{"input", CGPY_A_TENSOR, CGPY_SELF}, {"dim", CGPY_A_DIMS},
 *                                          {"keepdim", CGPY_A_BOOL}, {"dtype", CGPY_A_DTYPE, CGPY_KWONLY},
 *                                          {"out", CGPY_A_OBJ, CGPY_KWONLY | CGPY_FUNC_ONLY}}};
 *     cgpy_val v[5];
 *     if (cgpy_args_parse(&sum_spec, self, args, nargs, kwnames, v)) return NULL;
 *
 * One spec serves the method form (x.sum(0): a CGPY_SELF first parameter is
 * `self`, and cannot be given again) and the function form (cgrad.sum(x, 0)
 * or input=x). Parameters before the first CGPY_KWONLY one may be given by
 * position or keyword, the others only by keyword (a keyword-only argument
 * given by position is "takes N positional arguments but M were given", as
 * Python and PyTorch refuse it). Parameters are optional unless CGPY_REQ
 * (a CGPY_SELF one is required). v[i].o is the argument as given
 * (borrowed) or NULL when absent; the converted value is in the member of
 * the kind (absent: .i / .b = def, .f = fdef, .dtype = -1, .dev = the CPU,
 * .n = 0, .t = NULL). Errors are PyTorch's types and name the op and the
 * argument: `TypeError: sum(): argument 'dim' must be tuple of ints, not str`.
 *
 * CGPY_A_SIZE is an int list that may also be spread over the positional
 * arguments, `x.view(2, 3)` as `x.view((2, 3))`, when it is the first
 * positional parameter after the input. */
enum {
    CGPY_A_OBJ,        /* any object, None included: the binding converts it (.o) */
    CGPY_A_TENSOR,     /* Tensor (.t borrowed) */
    CGPY_A_OPT_TENSOR, /* Tensor or None (.t NULL for None) */
    CGPY_A_INT,        /* int, not bool / float (.i) */
    CGPY_A_OPT_INT,    /* int or None (.i = def for None; .o is None) */
    CGPY_A_INTLIST,    /* int, or a tuple / list / torch.Size of ints (.n, .v) */
    CGPY_A_SIZE,       /* as INTLIST, or spread over the positional arguments */
    CGPY_A_DIMS,       /* int, sequence of ints or None (.n = 0 for None) */
    CGPY_A_BOOL,       /* truth value (.b) */
    CGPY_A_FLOAT,      /* Python number or one-element tensor (.f) */
    CGPY_A_DTYPE,      /* cgrad.dtype, Python int/float/bool type or None (.dtype, -1 for None) */
    CGPY_A_DEVICE,     /* cgrad.device, a device string or None (.dev) */
    CGPY_A_STR,        /* str (.s, UTF-8 owned by the object) */
    CGPY_A_SEED,       /* an integer in [-2^63, 2^64 - 1] (.seed) */
    CGPY_A_CONV,       /* conv(o, &v.ptr) as PyArg's "O&" (None passed to it too) */
};
/* CGPY_DEFAULT_DEV: a device parameter that, absent or None, is the default
 * device (the factories' device=; Note [Default device] in dtype_device.c) */
enum { CGPY_REQ = 1, CGPY_KWONLY = 2, CGPY_SELF = 4, CGPY_FUNC_ONLY = 8, CGPY_NONE_OK = 16, CGPY_DEFAULT_DEV = 32 };
#define CGPY_MAX_PARAMS 12

typedef struct cgpy_param {
    const char *name;
    unsigned char kind, flags;
    int64_t def;              /* INT / OPT_INT / BOOL default */
    double fdef;              /* FLOAT default */
    int (*conv)(PyObject *, void *); /* CGPY_A_CONV */
} cgpy_param;

typedef struct cgpy_spec {
    const char *fname;
    cgpy_param p[CGPY_MAX_PARAMS]; /* ends at the first entry without a name */
    /* filled on first use */
    signed char n, npos, nreq, ready;
} cgpy_spec;

typedef struct cgpy_val {
    PyObject *o;
    union {
        int64_t i;
        double f;
        int b;
        cg_dtype dtype;
        cg_device dev;
        cg_tensor *t;
        const char *s;
        uint64_t seed;
        void *ptr;
    };
    int n;
    int64_t v[CG_MAX_DIMS];
} cgpy_val;

/* A parameter: CGPY_ARG(name, kind[, flags[, def[, fdef[, conv]]]]); a spec:
 * CGPY_SPEC(fname, parameters...) (designated, so -Wextra sees no missing
 * field initializers). */
#define CGPY_ARG(...) CGPY_ARG_(__VA_ARGS__, 0, 0, 0, 0, 0)
#define CGPY_ARG_(nm, kd, fl, df, fd, cv, ...) {nm, kd, fl, df, fd, cv}
#define CGPY_NO_ARG CGPY_ARG(NULL, CGPY_A_OBJ)
#define CGPY_SPEC(fn, ...) {.fname = fn, .p = {__VA_ARGS__}}

/* The parameters every op binding spells the same way: the input tensor
 * (self in the method form) and out= (module functions only). */
#define CGPY_INPUT_ARG {"input", CGPY_A_TENSOR, CGPY_SELF, 0, 0, NULL}
#define CGPY_OUT_ARG {"out", CGPY_A_OBJ, CGPY_KWONLY | CGPY_FUNC_ONLY, 0, 0, NULL}
/* The signature of a METH_FASTCALL | METH_KEYWORDS binding. */
#define CGPY_FASTKW_ARGS PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames

/* Parse a FASTCALL call against spec into v[] (one per parameter). 0 or -1 (raised). */
int cgpy_args_parse(cgpy_spec *spec, PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                    cgpy_val *v);

/* The same for a (tuple, dict) call: type slots (tp_new / tp_init) that
 * CPython calls that way. */
int cgpy_args_parse_tuple(cgpy_spec *spec, PyObject *self, PyObject *args, PyObject *kw, cgpy_val *v);

/* The name-list entry of the same parser, for bindings that convert their
 * arguments themselves (the elementwise and nn bindings): names is
 * NULL-terminated, names[0] the input (self in a method call, then not
 * accepted as a keyword); the first npos may be given by position, the rest
 * only by keyword; the first nreq are required. vals[i] receives a borrowed
 * reference or NULL when absent. 0 or -1 (raised). */
int cgpy_parse_fastkw(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, const char *fname,
                      const char *const *names, int npos, int nreq, PyObject **vals);

/* v's object, NULL when absent or None (for out=, optional objects). */
static inline PyObject *cgpy_opt(const cgpy_val *v) { return v->o == Py_None ? NULL : v->o; }
/* Was the argument given, and not as None? */
static inline bool cgpy_given(const cgpy_val *v) { return v->o && v->o != Py_None; }

/* The converters, also for arguments a binding takes apart itself. fname /
 * arg name the op and the argument in the error; pos is the 1-based position
 * it was given at, 0 for a keyword. Each 0 or -1 (raised). */
int cgpy_arg_int(PyObject *o, const char *fname, const char *arg, int64_t *v);
int cgpy_arg_intlist(PyObject *o, const char *fname, const char *arg, int *n, int64_t *v);
int cgpy_arg_dims(PyObject *o, const char *fname, const char *arg, int *n, int64_t *v);

/* Parse a shape given as ints or one sequence (`zeros(2, 3)`, `zeros((2, 3))`):
 * the n objects items[0..n). */
int cgpy_parse_shape_items(PyObject *const *items, Py_ssize_t n, int *ndim, int64_t *shape);
/* The same over a tuple from index start. */
int cgpy_parse_shape(PyObject *args, Py_ssize_t start, int *ndim, int64_t *shape);
/* A dim list: int, sequence of ints, or None (-> ndims 0). */
int cgpy_parse_dims(PyObject *o, int *ndims, int64_t *dims);
/* A random seed: an integer in [-2^63, 2^64 - 1] (negative ones wrap), as PyTorch takes. */
int cgpy_parse_seed(PyObject *o, uint64_t *seed);
/* An int (via __index__): "<what> must be an int, not T". 0 or -1. */
int cgpy_parse_int(PyObject *o, int64_t *v, const char *what);
/* Python number or one-element tensor as double. */
int cgpy_parse_double(PyObject *o, double *v, const char *what);

#endif
