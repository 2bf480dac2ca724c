/* optim.c — bindings of the fused optimizer steps (cg_sgd_step, ...) behind
 * cgrad.optim: private `_C._sgd_step`, `_adam_step`, `_rmsprop_step`,
 * `_adagrad_step`, each taking lists (or tuples) of tensors — parameters,
 * grads, state tensors — and the hyperparameters positionally, updating one
 * parameter group in one call. The GIL is released around large updates; the
 * tensors are retained meanwhile, so the lists may change under us. */
#include "bind.h"

/* The tensors of up to 7 lists, retained (borrowed from no one). */
#define OPTB_LISTS 7
typedef struct optb_lists {
    Py_ssize_t n;
    cg_tensor **t[OPTB_LISTS]; /* NULL for a list passed as None */
    cg_tensor **block;
} optb_lists;

static void optb_free(optb_lists *L) {
    if (L->block) {
        for (Py_ssize_t k = 0; k < OPTB_LISTS * L->n; k++) cg_tensor_release(L->block[k]);
        PyMem_Free(L->block);
    }
    L->block = NULL;
}

/* Parse list k (`what`) of `op`: a sequence of n tensors (None entries allowed
 * when `none_ok`), or None when `may_be_none`. */
static int optb_list(optb_lists *L, int k, PyObject *o, const char *op, const char *what, bool may_be_none,
                     bool none_ok) {
    if (o == Py_None && may_be_none) return 0;
    if (!PyList_Check(o) && !PyTuple_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s(): %s must be a list or tuple of Tensors, not %.100s", op, what,
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    if (k == 0) {
        L->n = n;
        L->block = PyMem_Calloc((size_t)(OPTB_LISTS * (n ? n : 1)), sizeof(cg_tensor *));
        if (!L->block) {
            PyErr_NoMemory();
            return -1;
        }
    } else if (n != L->n) {
        PyErr_Format(PyExc_ValueError, "%s(): %s has %zd entries but there are %zd parameters", op, what, n, L->n);
        return -1;
    }
    L->t[k] = L->block + (Py_ssize_t)k * L->n;
    PyObject **items = PySequence_Fast_ITEMS(o);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *it = items[i];
        if (it == Py_None && none_ok) continue;
        if (!cgpy_is_tensor(it)) {
            PyErr_Format(PyExc_TypeError, "%s(): %s[%zd] must be a Tensor, not %.100s", op, what, i,
                         Py_TYPE(it)->tp_name);
            return -1;
        }
        L->t[k][i] = cgpy_t(it);
        cg_tensor_retain(L->t[k][i]);
    }
    return 0;
}

static int optb_bool(PyObject *o, bool *v) {
    int r = PyObject_IsTrue(o);
    if (r < 0) return -1;
    *v = r;
    return 0;
}

static int64_t optb_numel(const optb_lists *L) {
    int64_t total = 0;
    for (Py_ssize_t i = 0; i < L->n; i++) total += cg_tensor_numel(L->t[0][i]);
    return total;
}

static int optb_nargs(Py_ssize_t nargs, Py_ssize_t want, const char *op) {
    if (nargs == want) return 0;
    PyErr_Format(PyExc_TypeError, "%s() takes %zd positional arguments but %zd were given", op, want, nargs);
    return -1;
}

/* _sgd_step(params, grads, momentum_buffers, lr, momentum, dampening,
 *           weight_decay, nesterov, maximize)
 * momentum_buffers: a list (None entries are replaced by the new buffers) or
 * None when momentum is 0. */
static PyObject *f_sgd_step(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
    (void)m;
    static const char *op = "_sgd_step";
    if (optb_nargs(nargs, 9, op)) return NULL;
    optb_lists L = {0};
    cg_sgd_options o = {0};
    PyObject *bufs = args[2];
    if (optb_list(&L, 0, args[0], op, "params", false, false) || optb_list(&L, 1, args[1], op, "grads", false, false) ||
        cgpy_parse_double(args[3], &o.lr, "lr") || cgpy_parse_double(args[4], &o.momentum, "momentum") ||
        cgpy_parse_double(args[5], &o.dampening, "dampening") ||
        cgpy_parse_double(args[6], &o.weight_decay, "weight_decay") || optb_bool(args[7], &o.nesterov) ||
        optb_bool(args[8], &o.maximize))
        goto fail;
    if (o.momentum != 0) {
        if (!PyList_Check(bufs)) {
            PyErr_Format(PyExc_TypeError, "%s(): momentum_buffers must be a list when momentum is nonzero", op);
            goto fail;
        }
        if (optb_list(&L, 2, bufs, op, "momentum_buffers", false, true)) goto fail;
    }
    cg_status st;
    CGPY_NOGIL_IF(optb_numel(&L), st = cg_sgd_step(L.n, L.t[0], L.t[1], L.t[2], &o));
    if (cgpy_check(st)) goto fail;
    if (o.momentum != 0) {
        /* slots that were None now hold new buffers (one reference each, ours) */
        for (Py_ssize_t i = 0; i < L.n; i++) {
            if (PyList_GET_ITEM(bufs, i) != Py_None) continue;
            cg_tensor_retain(L.t[2][i]); /* the block keeps its own reference */
            PyObject *w = cgpy_wrap(L.t[2][i]);
            if (!w || PyList_SetItem(bufs, i, w) < 0) goto fail;
        }
    }
    optb_free(&L);
    Py_RETURN_NONE;
fail:
    optb_free(&L);
    return NULL;
}

/* _adam_step(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
 *            lr, beta1, beta2, eps, weight_decay, amsgrad, maximize,
 *            decoupled_weight_decay) — max_exp_avg_sqs may be None unless amsgrad. */
static PyObject *f_adam_step(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
    (void)m;
    static const char *op = "_adam_step";
    if (optb_nargs(nargs, 14, op)) return NULL;
    optb_lists L = {0};
    cg_adam_options o = {0};
    if (optb_list(&L, 0, args[0], op, "params", false, false) || optb_list(&L, 1, args[1], op, "grads", false, false) ||
        optb_list(&L, 2, args[2], op, "exp_avgs", false, false) ||
        optb_list(&L, 3, args[3], op, "exp_avg_sqs", false, false) ||
        optb_list(&L, 4, args[4], op, "max_exp_avg_sqs", true, false) ||
        optb_list(&L, 5, args[5], op, "state_steps", false, false) || cgpy_parse_double(args[6], &o.lr, "lr") ||
        cgpy_parse_double(args[7], &o.beta1, "beta1") || cgpy_parse_double(args[8], &o.beta2, "beta2") ||
        cgpy_parse_double(args[9], &o.eps, "eps") || cgpy_parse_double(args[10], &o.weight_decay, "weight_decay") ||
        optb_bool(args[11], &o.amsgrad) || optb_bool(args[12], &o.maximize) ||
        optb_bool(args[13], &o.decoupled_weight_decay))
        goto fail;
    if (o.amsgrad && !L.t[4]) {
        PyErr_Format(PyExc_TypeError, "%s(): max_exp_avg_sqs is required when amsgrad is True", op);
        goto fail;
    }
    cg_status st;
    CGPY_NOGIL_IF(optb_numel(&L), st = cg_adam_step(L.n, L.t[0], L.t[1], L.t[2], L.t[3], L.t[4], L.t[5], &o));
    optb_free(&L);
    if (cgpy_check(st)) return NULL;
    Py_RETURN_NONE;
fail:
    optb_free(&L);
    return NULL;
}

/* _rmsprop_step(params, grads, square_avgs, momentum_buffers, grad_avgs,
 *               state_steps, lr, alpha, eps, weight_decay, momentum, centered,
 *               maximize) — momentum_buffers / grad_avgs may be None when unused. */
static PyObject *f_rmsprop_step(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
    (void)m;
    static const char *op = "_rmsprop_step";
    if (optb_nargs(nargs, 13, op)) return NULL;
    optb_lists L = {0};
    cg_rmsprop_options o = {0};
    if (optb_list(&L, 0, args[0], op, "params", false, false) || optb_list(&L, 1, args[1], op, "grads", false, false) ||
        optb_list(&L, 2, args[2], op, "square_avgs", false, false) ||
        optb_list(&L, 3, args[3], op, "momentum_buffers", true, false) ||
        optb_list(&L, 4, args[4], op, "grad_avgs", true, false) ||
        optb_list(&L, 5, args[5], op, "state_steps", false, false) || cgpy_parse_double(args[6], &o.lr, "lr") ||
        cgpy_parse_double(args[7], &o.alpha, "alpha") || cgpy_parse_double(args[8], &o.eps, "eps") ||
        cgpy_parse_double(args[9], &o.weight_decay, "weight_decay") ||
        cgpy_parse_double(args[10], &o.momentum, "momentum") || optb_bool(args[11], &o.centered) ||
        optb_bool(args[12], &o.maximize))
        goto fail;
    if ((o.momentum > 0 && !L.t[3]) || (o.centered && !L.t[4])) {
        PyErr_Format(PyExc_TypeError, "%s(): momentum_buffers / grad_avgs are required by momentum / centered", op);
        goto fail;
    }
    cg_status st;
    CGPY_NOGIL_IF(optb_numel(&L), st = cg_rmsprop_step(L.n, L.t[0], L.t[1], L.t[2], L.t[3], L.t[4], L.t[5], &o));
    optb_free(&L);
    if (cgpy_check(st)) return NULL;
    Py_RETURN_NONE;
fail:
    optb_free(&L);
    return NULL;
}

/* _adagrad_step(params, grads, state_sums, state_steps, lr, lr_decay,
 *               weight_decay, eps, maximize) */
static PyObject *f_adagrad_step(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
    (void)m;
    static const char *op = "_adagrad_step";
    if (optb_nargs(nargs, 9, op)) return NULL;
    optb_lists L = {0};
    cg_adagrad_options o = {0};
    if (optb_list(&L, 0, args[0], op, "params", false, false) || optb_list(&L, 1, args[1], op, "grads", false, false) ||
        optb_list(&L, 2, args[2], op, "state_sums", false, false) ||
        optb_list(&L, 3, args[3], op, "state_steps", false, false) || cgpy_parse_double(args[4], &o.lr, "lr") ||
        cgpy_parse_double(args[5], &o.lr_decay, "lr_decay") ||
        cgpy_parse_double(args[6], &o.weight_decay, "weight_decay") || cgpy_parse_double(args[7], &o.eps, "eps") ||
        optb_bool(args[8], &o.maximize))
        goto fail;
    cg_status st;
    CGPY_NOGIL_IF(optb_numel(&L), st = cg_adagrad_step(L.n, L.t[0], L.t[1], L.t[2], L.t[3], &o));
    optb_free(&L);
    if (cgpy_check(st)) return NULL;
    Py_RETURN_NONE;
fail:
    optb_free(&L);
    return NULL;
}

static PyMethodDef optim_functions[] = {
    CGPY_FAST("_sgd_step", f_sgd_step),
    CGPY_FAST("_adam_step", f_adam_step),
    CGPY_FAST("_rmsprop_step", f_rmsprop_step),
    CGPY_FAST("_adagrad_step", f_adagrad_step),
    CGPY_TABLE_END,
};

int cgpy_init_optim(PyObject *m) { return PyModule_AddFunctions(m, optim_functions); }
