/* optim.c — bindings of the fused optimizer steps (cg_sgd_step, ...) behind
 * cgrad.optim: private `_C._sgd_step`, `_adam_step`, `_rmsprop_step`,
 * `_adagrad_step`, `_adadelta_step`, `_adamax_step`, `_nadam_step`,
 * `_radam_step`, `_rprop_step`, `_asgd_step`, each taking lists (or tuples)
 * of tensors — parameters, grads, state tensors — and the hyperparameters
 * positionally, updating one parameter group in one call. The GIL is released around large updates; the
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

/* The arguments of every step but SGD's, in order: the lists (names[k]; a
 * name ending in '?' may be None, passed on as NULL), then the numbers nums[k]
 * (names from nums_names), then the flags. */
typedef struct optb_spec {
    const char *op;
    int nlists, nnums, nflags;
    const char *lists[OPTB_LISTS];
    const char *num_names[8];
} optb_spec;

#define OPTB_N(...) ((int)(sizeof((const char *[]){__VA_ARGS__}) / sizeof(const char *)))
#define OPTB_SPEC(op_, lists_, nums_, nflags_) \
    {op_, OPTB_N lists_, OPTB_N nums_, nflags_, {OPTB_UNPAREN lists_}, {OPTB_UNPAREN nums_}}
#define OPTB_UNPAREN(...) __VA_ARGS__

static int optb_parse(const optb_spec *sp, PyObject *const *args, Py_ssize_t nargs, optb_lists *L,
                      double *const *nums, bool *const *flags) {
    if (optb_nargs(nargs, sp->nlists + sp->nnums + sp->nflags, sp->op)) return -1;
    for (int k = 0; k < sp->nlists; k++) {
        char what[48];
        size_t len = strlen(sp->lists[k]);
        bool opt = len > 0 && sp->lists[k][len - 1] == '?';
        snprintf(what, sizeof what, "%.*s", (int)(opt ? len - 1 : len), sp->lists[k]);
        if (optb_list(L, k, args[k], sp->op, what, opt, false)) return -1;
    }
    for (int k = 0; k < sp->nnums; k++)
        if (cgpy_parse_double(args[sp->nlists + k], nums[k], sp->num_names[k])) return -1;
    for (int k = 0; k < sp->nflags; k++)
        if (optb_bool(args[sp->nlists + sp->nnums + k], flags[k])) return -1;
    return 0;
}

/* The end of a step's binding: the lists released, st mapped to an exception. */
static PyObject *optb_done(optb_lists *L, cg_status st) {
    optb_free(L);
    if (cgpy_check(st)) return NULL;
    Py_RETURN_NONE;
}

/* A binding parsing `spec` into the options `o` (type opts_t) and calling `call`,
 * which sees the lists as L.t[k] and the options as &o; `check` (a statement)
 * runs in between and may `goto fail`. */
#define OPTB_STEP(fname, opts_t, spec, nums, flags, check, call)                         \
    static PyObject *fname(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {       \
        (void)m;                                                                         \
        static const optb_spec sp = spec;                                                \
        optb_lists L = {0};                                                              \
        opts_t o = {0};                                                                  \
        double *const num[] = {OPTB_UNPAREN nums};                                       \
        bool *const flag[] = {OPTB_UNPAREN flags};                                       \
        if (optb_parse(&sp, args, nargs, &L, num, flag)) goto fail;                      \
        check;                                                                           \
        cg_status st;                                                                    \
        CGPY_NOGIL_IF(optb_numel(&L), st = call);                                        \
        return optb_done(&L, st);                                                        \
    fail:                                                                                \
        optb_free(&L);                                                                   \
        return NULL;                                                                     \
    }

/* _adam_step(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
 *            lr, beta1, beta2, eps, weight_decay, amsgrad, maximize,
 *            decoupled_weight_decay) — max_exp_avg_sqs may be None unless amsgrad. */
OPTB_STEP(f_adam_step, cg_adam_options,
          OPTB_SPEC("_adam_step", ("params", "grads", "exp_avgs", "exp_avg_sqs", "max_exp_avg_sqs?", "state_steps"),
                    ("lr", "beta1", "beta2", "eps", "weight_decay"), 3),
          (&o.lr, &o.beta1, &o.beta2, &o.eps, &o.weight_decay), (&o.amsgrad, &o.maximize, &o.decoupled_weight_decay),
          if (o.amsgrad && !L.t[4]) {
              PyErr_Format(PyExc_TypeError, "%s(): max_exp_avg_sqs is required when amsgrad is True", sp.op);
              goto fail;
          },
          cg_adam_step(L.n, L.t[0], L.t[1], L.t[2], L.t[3], L.t[4], L.t[5], &o))

/* _rmsprop_step(params, grads, square_avgs, momentum_buffers, grad_avgs,
 *               state_steps, lr, alpha, eps, weight_decay, momentum, centered,
 *               maximize) — momentum_buffers / grad_avgs may be None when unused. */
OPTB_STEP(f_rmsprop_step, cg_rmsprop_options,
          OPTB_SPEC("_rmsprop_step",
                    ("params", "grads", "square_avgs", "momentum_buffers?", "grad_avgs?", "state_steps"),
                    ("lr", "alpha", "eps", "weight_decay", "momentum"), 2),
          (&o.lr, &o.alpha, &o.eps, &o.weight_decay, &o.momentum), (&o.centered, &o.maximize),
          if ((o.momentum > 0 && !L.t[3]) || (o.centered && !L.t[4])) {
              PyErr_Format(PyExc_TypeError, "%s(): momentum_buffers / grad_avgs are required by momentum / centered",
                           sp.op);
              goto fail;
          },
          cg_rmsprop_step(L.n, L.t[0], L.t[1], L.t[2], L.t[3], L.t[4], L.t[5], &o))

/* _adagrad_step(params, grads, state_sums, state_steps, lr, lr_decay,
 *               weight_decay, eps, maximize) */
OPTB_STEP(f_adagrad_step, cg_adagrad_options,
          OPTB_SPEC("_adagrad_step", ("params", "grads", "state_sums", "state_steps"),
                    ("lr", "lr_decay", "weight_decay", "eps"), 1),
          (&o.lr, &o.lr_decay, &o.weight_decay, &o.eps), (&o.maximize), (void)0,
          cg_adagrad_step(L.n, L.t[0], L.t[1], L.t[2], L.t[3], &o))

/* _adadelta_step(params, grads, square_avgs, acc_deltas, state_steps, lr, rho,
 *                eps, weight_decay, maximize) */
OPTB_STEP(f_adadelta_step, cg_adadelta_options,
          OPTB_SPEC("_adadelta_step", ("params", "grads", "square_avgs", "acc_deltas", "state_steps"),
                    ("lr", "rho", "eps", "weight_decay"), 1),
          (&o.lr, &o.rho, &o.eps, &o.weight_decay), (&o.maximize), (void)0,
          cg_adadelta_step(L.n, L.t[0], L.t[1], L.t[2], L.t[3], L.t[4], &o))

/* _adamax_step(params, grads, exp_avgs, exp_infs, state_steps, lr, beta1,
 *              beta2, eps, weight_decay, maximize) */
OPTB_STEP(f_adamax_step, cg_adamax_options,
          OPTB_SPEC("_adamax_step", ("params", "grads", "exp_avgs", "exp_infs", "state_steps"),
                    ("lr", "beta1", "beta2", "eps", "weight_decay"), 1),
          (&o.lr, &o.beta1, &o.beta2, &o.eps, &o.weight_decay), (&o.maximize), (void)0,
          cg_adamax_step(L.n, L.t[0], L.t[1], L.t[2], L.t[3], L.t[4], &o))

/* _nadam_step(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps,
 *             lr, beta1, beta2, eps, weight_decay, momentum_decay, maximize,
 *             decoupled_weight_decay) */
OPTB_STEP(f_nadam_step, cg_nadam_options,
          OPTB_SPEC("_nadam_step", ("params", "grads", "exp_avgs", "exp_avg_sqs", "mu_products", "state_steps"),
                    ("lr", "beta1", "beta2", "eps", "weight_decay", "momentum_decay"), 2),
          (&o.lr, &o.beta1, &o.beta2, &o.eps, &o.weight_decay, &o.momentum_decay),
          (&o.maximize, &o.decoupled_weight_decay), (void)0,
          cg_nadam_step(L.n, L.t[0], L.t[1], L.t[2], L.t[3], L.t[4], L.t[5], &o))

/* _radam_step(params, grads, exp_avgs, exp_avg_sqs, state_steps, lr, beta1,
 *             beta2, eps, weight_decay, maximize, decoupled_weight_decay) */
OPTB_STEP(f_radam_step, cg_radam_options,
          OPTB_SPEC("_radam_step", ("params", "grads", "exp_avgs", "exp_avg_sqs", "state_steps"),
                    ("lr", "beta1", "beta2", "eps", "weight_decay"), 2),
          (&o.lr, &o.beta1, &o.beta2, &o.eps, &o.weight_decay), (&o.maximize, &o.decoupled_weight_decay), (void)0,
          cg_radam_step(L.n, L.t[0], L.t[1], L.t[2], L.t[3], L.t[4], &o))

/* _rprop_step(params, grads, prevs, step_sizes, state_steps, etaminus,
 *             etaplus, step_size_min, step_size_max, maximize) */
OPTB_STEP(f_rprop_step, cg_rprop_options,
          OPTB_SPEC("_rprop_step", ("params", "grads", "prevs", "step_sizes", "state_steps"),
                    ("etaminus", "etaplus", "step_size_min", "step_size_max"), 1),
          (&o.etaminus, &o.etaplus, &o.step_size_min, &o.step_size_max), (&o.maximize), (void)0,
          cg_rprop_step(L.n, L.t[0], L.t[1], L.t[2], L.t[3], L.t[4], &o))

/* _asgd_step(params, grads, axs, mus, etas, state_steps, lr, lambd, alpha, t0,
 *            weight_decay, maximize) */
OPTB_STEP(f_asgd_step, cg_asgd_options,
          OPTB_SPEC("_asgd_step", ("params", "grads", "axs", "mus", "etas", "state_steps"),
                    ("lr", "lambd", "alpha", "t0", "weight_decay"), 1),
          (&o.lr, &o.lambd, &o.alpha, &o.t0, &o.weight_decay), (&o.maximize), (void)0,
          cg_asgd_step(L.n, L.t[0], L.t[1], L.t[2], L.t[3], L.t[4], L.t[5], &o))

static PyMethodDef optim_functions[] = {
    CGPY_FAST("_sgd_step", f_sgd_step),
    CGPY_FAST("_adam_step", f_adam_step),
    CGPY_FAST("_rmsprop_step", f_rmsprop_step),
    CGPY_FAST("_adagrad_step", f_adagrad_step),
    CGPY_FAST("_adadelta_step", f_adadelta_step),
    CGPY_FAST("_adamax_step", f_adamax_step),
    CGPY_FAST("_nadam_step", f_nadam_step),
    CGPY_FAST("_radam_step", f_radam_step),
    CGPY_FAST("_rprop_step", f_rprop_step),
    CGPY_FAST("_asgd_step", f_asgd_step),
    CGPY_TABLE_END,
};

int cgpy_init_optim(PyObject *m) { return PyModule_AddFunctions(m, optim_functions); }
