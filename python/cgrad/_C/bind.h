/* bind.h — internal: helpers shared by the op-binding files (ops_*.c): the
 * method/function table registry, type promotion of op operands, the one
 * out= path (Note [out= validation]), engine errors raised as PyTorch raises
 * them, index tensors, in-place ops computed out of place, and casts.
 * Arguments are parsed by cgpy_args_parse (args.h). */
#ifndef CGPY_BIND_H
#define CGPY_BIND_H

#include "cgpy.h"

/* Each ops_<family>.c defines two NULL-terminated tables: Tensor methods and
 * module functions. The same C function usually serves both: it receives
 * `self` = the tensor for methods and the module for functions; use
 * cgpy_self_or_arg to get the input either way. */
#define CGPY_OP_FAMILIES(X) X(math) X(reduce) X(shape) X(index) X(linalg) X(creation) X(interop) X(nn_func) X(nn_layers)
#define CGPY_DECLARE_TABLES(fam) extern PyMethodDef cgpy_##fam##_methods[]; extern PyMethodDef cgpy_##fam##_functions[];
CGPY_OP_FAMILIES(CGPY_DECLARE_TABLES)
#undef CGPY_DECLARE_TABLES

#define CGPY_FAST(pyname, cfn) {pyname, (PyCFunction)(void (*)(void))(cfn), METH_FASTCALL, NULL}
#define CGPY_FASTKW(pyname, cfn) {pyname, (PyCFunction)(void (*)(void))(cfn), METH_FASTCALL | METH_KEYWORDS, NULL}
#define CGPY_TABLE_END {NULL, NULL, 0, NULL}

/* For a FASTCALL function: the tensor is `self` (method) or the first
 * argument (module function; then args/nargs are advanced past it). */
static inline int cgpy_self_or_arg(PyObject *self, PyObject *const **args, Py_ssize_t *nargs, PyObject **x,
                                   const char *op) {
    if (self && cgpy_is_tensor(self)) {
        *x = self;
        return 0;
    }
    if (*nargs < 1 || !cgpy_is_tensor((*args)[0])) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'input' must be Tensor", op);
        return -1;
    }
    *x = (*args)[0];
    (*args)++;
    (*nargs)--;
    return 0;
}
/* For a function serving as Tensor method and module function: is this a method call? */
static inline int cgpy_is_method(PyObject *self) { return self && cgpy_is_tensor(self); }

/* Result of an engine call: wrap or raise. */
static inline PyObject *cgpy_result(cg_tensor *t) { return t ? cgpy_wrap(t) : (PyErr_Occurred() ? NULL : cgpy_raise()); }
/* In-place result: return self (new ref) or raise. */
static inline PyObject *cgpy_inplace_result(PyObject *self, cg_status st) {
    if (cgpy_check(st)) return NULL;
    Py_INCREF(self);
    return self;
}

/* Run engine work without the GIL so other Python threads run meanwhile:
 * CGPY_NOGIL(stmt) always, CGPY_NOGIL_IF(numel, stmt) when numel (the work's
 * input size) is at least CGPY_NOGIL_NUMEL — below that, dropping and
 * retaking the GIL costs more than it frees. stmt must not touch Python
 * objects (engine calls only; assign results to variables declared before):
 *     cg_tensor *r;
 *     CGPY_NOGIL_IF(cg_tensor_numel(x), r = cg_add(x, y));
 * The engine is thread-safe (Note [Concurrent backward] in src/autograd/node.c);
 * engine callbacks into Python (hooks) take the GIL with PyGILState_Ensure. */
#define CGPY_NOGIL_NUMEL 32768
#define CGPY_NOGIL(stmt)            \
    do {                            \
        Py_BEGIN_ALLOW_THREADS stmt; \
        Py_END_ALLOW_THREADS         \
    } while (0)
#define CGPY_NOGIL_IF(numel, stmt)                            \
    do {                                                      \
        if ((int64_t)(numel) >= CGPY_NOGIL_NUMEL) CGPY_NOGIL(stmt); \
        else { stmt; }                                        \
    } while (0)

/* Promote n operands (tensors / Python scalars) to one dtype and convert them
 * (new references in out[]); `float_only` raises int/bool results to the
 * default float dtype (as exp(int) does in PyTorch). The device is that of
 * the first tensor. Returns 0 or -1 (raised). */
int cgpy_promote_operands(int n, PyObject *const *in, bool float_only, cg_tensor **out, cg_dtype *dt);
void cgpy_release_n(int n, cg_tensor **ts);
/* cgrad.Generator and cgrad.default_generator (ops_creation.c) */
int cgpy_init_generator(PyObject *m);
PyObject *cgpy_default_generator(void); /* new reference */

/* Note [out= validation]: every binding that takes out= computes its result
 * as usual and hands it to cgpy_out_finish, which applies PyTorch's rules
 * for out= in one place, in this order:
 *  - out must be a Tensor (TypeError);
 *  - with grad mode on, neither the result nor out may require grad
 *    (RuntimeError "functions with out=... arguments don't support automatic
 *    differentiation");
 *  - the device must be the result's;
 *  - the dtype: CGPY_OUT_CAST (TensorIterator ops: the result dtype must be
 *    castable to out's, cgpy_can_cast), CGPY_OUT_EXACT (ops that ask for the
 *    result's dtype exactly) or CGPY_OUT_ANY_DTYPE; a DtypeMismatch (both the
 *    RuntimeError and the TypeError PyTorch raises, depending on the op);
 *  - out may not have internal overlap (a stride-0 dim of size > 1): cgrad
 *    refuses it for every op (PyTorch lets a few, such as tril and sum, write
 *    into it with unspecified results);
 *  - overlap with an input: PyTorch's memory-overlap status
 *    (cg_tensor_overlap, Note [Memory overlap] in src/core/overlap.c) under
 *    CGPY_OUT_ALIAS_OK (not checked: reductions, products), CGPY_OUT_NO_PARTIAL
 *    (identical aliasing allowed: elementwise ops) or CGPY_OUT_NO_ALIAS (any
 *    shared element refused: gather, index_select, cat, ...). Where aliasing
 *    is allowed the result is right, since it is computed before the copy;
 *  - a wrong shape resizes out (cg_tensor_resize_), with PyTorch's
 *    UserWarning when out had elements;
 *  - the result is copied into out, which is returned.
 * Ops whose out dtype picks the computation's dtype (sum, prod, cumsum, the
 * factories) first take it with cgpy_out_dtype. */
enum { CGPY_OUT_CAST, CGPY_OUT_EXACT, CGPY_OUT_ANY_DTYPE };
enum { CGPY_OUT_ALIAS_OK, CGPY_OUT_NO_PARTIAL, CGPY_OUT_NO_ALIAS };
/* flags, PyTorch's exceptions to the rules above: GRAD_INPUTS, the autograd
 * check looks at the inputs even where the result is not differentiable
 * (argsort runs sort, bernoulli has a zero gradient); QUIET_RESIZE, no
 * warning when resizing (factories, samplers) */
enum { CGPY_OUT_GRAD_INPUTS = 1, CGPY_OUT_QUIET_RESIZE = 2 };
typedef struct cgpy_out_rule {
    const char *op;      /* named in the errors */
    unsigned char dtype; /* CGPY_OUT_CAST / _EXACT / _ANY_DTYPE */
    unsigned char alias; /* CGPY_OUT_ALIAS_OK / _NO_PARTIAL / _NO_ALIAS */
    unsigned char flags; /* CGPY_OUT_GRAD_INPUTS | CGPY_OUT_QUIET_RESIZE */
} cgpy_out_rule;
/* Finish an op with out= (Note [out= validation]): `result` (stolen; NULL =
 * the engine failed: its error is raised) into `out` (borrowed; NULL or None:
 * the result is returned as is). inputs: the n tensors the op read (NULL
 * entries skipped). Returns out or the result (new reference), or NULL. */
PyObject *cgpy_out_finish(PyObject *out, cg_tensor *result, const cgpy_out_rule *rule, int n, cg_tensor *const *inputs);
/* The borrowed tensor of o, or NULL when o is not a Tensor (for inputs[]). */
static inline cg_tensor *cgpy_tensor_or_null(PyObject *o) { return o && cgpy_is_tensor(o) ? cgpy_t(o) : NULL; }
/* Note [Memory overlap] (src/core/overlap.c), for the in-place forms the
 * binding computes out of place and copies into self, and for out=: raise
 * PyTorch's RuntimeError "<op>(): unsupported operation: some elements of
 * the input tensor and the written-to tensor refer to a single memory
 * location..." when `in` (NULL: skipped) overlaps the written tensor `out`
 * partially, or at all when `any` (index writes). 0 or -1 (raised). */
int cgpy_check_overlap(const char *op, cg_tensor *out, cg_tensor *in, bool any);
/* The test alone, raising nothing (callers format the op name only on failure). */
static inline bool cgpy_overlap_refused(cg_tensor *out, cg_tensor *in, bool any) {
    cg_overlap s = in ? cg_tensor_overlap(out, in) : CG_OVERLAP_NO;
    return s == CG_OVERLAP_PARTIAL || (s == CG_OVERLAP_FULL && any);
}
/* For ops whose out dtype is the computation's dtype: *dtype (-1 = not given)
 * becomes out's dtype. A factory (factory_op != NULL) given both raises, as
 * PyTorch, when they differ. 0 or -1 (raised). */
int cgpy_out_dtype(PyObject *out, int *dtype, const char *factory_op);

/* ------------------------------------------------------------- results, index arguments, casts */

/* Raise the engine's error the way PyTorch does for these ops: index, value
 * and dtype errors are RuntimeErrors there (cgpy_raise would give IndexError /
 * ValueError / DtypeMismatch). Shape, device, memory and not-implemented
 * errors keep cgpy_raise's mapping. keep_index: IndexError stays (PyTorch
 * raises IndexError for index_select and take). */
static inline PyObject *cgpy_raise_rt(bool keep_index) {
    cg_status st = cg_last_error();
    if (st == CG_ERR_VALUE || st == CG_ERR_DTYPE || (st == CG_ERR_INDEX && !keep_index)) {
        PyErr_SetString(PyExc_RuntimeError, cg_last_error_message());
        cg_clear_error();
        return NULL;
    }
    return cgpy_raise();
}
static inline PyObject *cgpy_result_rt(cg_tensor *t, bool keep_index) {
    if (t) return cgpy_wrap(t);
    return PyErr_Occurred() ? NULL : cgpy_raise_rt(keep_index);
}
/* result (stolen) with out= (Note [out= validation] in bind.h); engine errors as cgpy_raise_rt */
static inline PyObject *cgpy_out_rt(cg_tensor *t, PyObject *out, bool keep_index, const cgpy_out_rule *rule, int n,
                                   cg_tensor *const *inputs) {
    if (!t) return PyErr_Occurred() ? NULL : cgpy_raise_rt(keep_index);
    return cgpy_out_finish(out, t, rule, n, inputs);
}

/* An index argument as an int64 tensor (new reference): int64 tensors as
 * they are, int32 (where PyTorch accepts it) cast; anything else raises
 * RuntimeError "<op>(): Expected dtype int64 for index" as PyTorch does. */
static inline cg_tensor *cgpy_index_arg(PyObject *o, const char *op, bool allow_int32) {
    if (!cgpy_is_tensor(o)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'index' must be Tensor, not %.100s", op, Py_TYPE(o)->tp_name);
        return NULL;
    }
    cg_tensor *t = cgpy_t(o);
    cg_dtype dt = cg_tensor_dtype(t);
    if (dt == CG_DTYPE_I64) {
        cg_tensor_retain(t);
        return t;
    }
    if (dt == CG_DTYPE_I32 && allow_int32) {
        cg_tensor *c = cg_to_dtype(t, CG_DTYPE_I64);
        if (!c) cgpy_raise();
        return c;
    }
    PyErr_Format(PyExc_RuntimeError, "%s(): Expected dtype %s for index, but got %s", op,
                 allow_int32 ? "int32/int64" : "int64", cg_dtype_name(dt));
    return NULL;
}

/* PyTorch's check for in-place ops on leaves: 0 or -1 (RuntimeError). */
static inline int cgpy_check_leaf(cg_tensor *x, const char *op) {
    if (cg_is_grad_enabled() && cg_tensor_requires_grad(x) && cg_tensor_is_leaf(x)) {
        PyErr_Format(PyExc_RuntimeError,
                     "%s(): a leaf Variable that requires grad is being used in an in-place operation.", op);
        return -1;
    }
    return 0;
}

/* Note [In-place via out of place]: the engine has no in-place form of most
 * index ops, so x.op_(...) computes the op out of place and copies the result
 * into x's storage with cg_copy_, which bumps x's version and, when a graph
 * is recorded, moves the result's history onto x (for views through the
 * base). When a graph is recorded the op runs on a differentiable clone of x,
 * so tensors it saves for backward are not the x that copy_ overwrites.
 * `x_for_op` receives the tensor to pass to the op (new reference). */
static inline int cgpy_inplace_begin(cg_tensor *x, bool others_require_grad, const char *op, cg_tensor **x_for_op) {
    if (cgpy_check_leaf(x, op)) return -1;
    bool graph = cg_is_grad_enabled() && (others_require_grad || cg_tensor_requires_grad(x));
    if (graph) {
        *x_for_op = cg_clone(x);
        if (!*x_for_op) {
            cgpy_raise();
            return -1;
        }
    } else {
        cg_tensor_retain(x);
        *x_for_op = x;
    }
    return 0;
}
/* Finish: result (stolen) -> x's storage; returns self (new ref) or NULL. */
static inline PyObject *cgpy_inplace_end(PyObject *self, cg_tensor *xin, cg_tensor *result, bool keep_index) {
    cg_tensor_release(xin);
    if (!result) return PyErr_Occurred() ? NULL : cgpy_raise_rt(keep_index);
    cg_status st = cg_copy_(cgpy_t(self), result);
    cg_tensor_release(result);
    if (cgpy_check(st)) return NULL;
    Py_INCREF(self);
    return self;
}

static inline bool cgpy_requires_grad(PyObject *o) { return cgpy_is_tensor(o) && cg_tensor_requires_grad(cgpy_t(o)); }

/* Cast t (borrowed) to dt: new reference (t itself retained when equal) or NULL (raised). */
static inline cg_tensor *cgpy_cast(cg_tensor *t, cg_dtype dt) {
    if (cg_tensor_dtype(t) == dt) {
        cg_tensor_retain(t);
        return t;
    }
    cg_tensor *r = cg_to_dtype(t, dt);
    if (!r) cgpy_raise();
    return r;
}

/* A result (stolen, may be NULL) cast to dt unless dt < 0. */
static inline cg_tensor *cgpy_cast_result(cg_tensor *r, int dt) {
    if (!r || dt < 0 || cg_tensor_dtype(r) == (cg_dtype)dt) return r;
    cg_tensor *c = cg_to_dtype(r, (cg_dtype)dt);
    cg_tensor_release(r);
    return c;
}

#endif
