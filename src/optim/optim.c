/* optim.c — fused optimizer steps (SGD, Adam / AdamW, RMSprop, Adagrad,
 * Adadelta, Adamax, NAdam, RAdam, Rprop, ASGD):
 * one call updates a whole parameter group in place, without autograd, each
 * parameter in one pass over its elements (Note [Fused optimizer steps] in
 * cgrad.h). This file validates the group, counts steps, computes the
 * per-parameter scalars and stages operands; the element loops are the
 * device's `optim_step` entry (Note [Kernel entries]; the CPU's is
 * src/backend/cpu/optim_steps.c).
 *
 * Note [Optimizer staging]: the kernels read and write flat contiguous
 * arrays. A tensor that is not contiguous (a strided grad, a transposed leaf
 * and the contiguous state created for it) is staged: copied to a contiguous
 * temporary before the kernel and, when the kernel writes it, copied back
 * afterwards. Both copies run with grad mode off; they are the rare path. */
#include "../dispatch/dispatch_internal.h"

#include <math.h>
#include <string.h>

#define OPT_MAX_OPERANDS CG_OPTIM_OPERANDS /* param, grad and up to four state tensors */

/* One parameter's operands: t[0] param, t[1] grad, t[2..] states (NULL =
 * unused); `written` marks the ones the kernel writes. */
typedef struct opt_operands {
    cg_tensor *t[OPT_MAX_OPERANDS];
    bool written[OPT_MAX_OPERANDS];
    const char *names[OPT_MAX_OPERANDS];
} opt_operands;

static cg_status check_operands(const char *op, int64_t i, const opt_operands *x) {
    const cg_tensor *p = x->t[0];
    if (!p) return cg_set_error(CG_ERR_VALUE, "[%s] parameter %lld is NULL", op, (long long)i);
    for (int k = 0; k < OPT_MAX_OPERANDS; k++)
        if (x->t[k] && x->written[k] && cg_check_writable(op, x->t[k])) return CG_ERR_RUNTIME;
    if (!cg_dtype_is_floating(p->dtype))
        return cg_set_error(CG_ERR_DTYPE, "[%s] parameter %lld has dtype %s; expected a floating dtype", op,
                            (long long)i, cg_dtype_name(p->dtype));
    for (int k = 1; k < OPT_MAX_OPERANDS; k++) {
        const cg_tensor *t = x->t[k];
        if (!x->names[k]) continue;
        if (!t) return cg_set_error(CG_ERR_VALUE, "[%s] %s of parameter %lld is NULL", op, x->names[k], (long long)i);
        if (t->dtype != p->dtype)
            return cg_set_error(CG_ERR_DTYPE, "[%s] parameter %lld: %s has dtype %s but the parameter has %s", op,
                                (long long)i, x->names[k], cg_dtype_name(t->dtype), cg_dtype_name(p->dtype));
        if (!cg_shape_eq(t->ndim, t->shape, p->ndim, p->shape)) {
            char a[CG_SHAPE_STR], b[CG_SHAPE_STR];
            return cg_set_error(CG_ERR_SHAPE, "[%s] parameter %lld: %s has shape %s but the parameter has %s", op,
                                (long long)i, x->names[k], cg_shape_str(a, t->ndim, t->shape),
                                cg_shape_str(b, p->ndim, p->shape));
        }
        if (!cg_device_eq(t->device, p->device))
            return cg_set_error(CG_ERR_DEVICE, "[%s] parameter %lld: %s is on %s but the parameter is on %s", op,
                                (long long)i, x->names[k], cg_device_name(t->device), cg_device_name(p->device));
    }
    return CG_OK;
}

/* A one-element per-parameter state (steps[i], mu_products[i], ...): on the
 * host, writable, and floating unless it is the step count. */
static cg_status check_scalar(const char *op, int64_t i, const char *name, const cg_tensor *s, bool floating) {
    if (!s) return cg_set_error(CG_ERR_VALUE, "[%s] %s of parameter %lld is NULL", op, name, (long long)i);
    if (cg_shape_numel(s->ndim, s->shape) != 1 || !cg_device_host_addressable(s->device))
        return cg_set_error(CG_ERR_SHAPE, "[%s] parameter %lld: %s must be a one-element cpu tensor", op,
                            (long long)i, name);
    if (floating && !cg_dtype_is_floating(s->dtype))
        return cg_set_error(CG_ERR_DTYPE, "[%s] parameter %lld: %s has dtype %s; expected a floating dtype", op,
                            (long long)i, name, cg_dtype_name(s->dtype));
    return cg_check_writable(op, s);
}

static double scalar_get(const cg_tensor *s) { return cg_load_f64(cg_tensor_ptr(s), s->dtype); }

/* s <- v (v already rounded to s's dtype); returns the stored value. */
static double scalar_set(cg_tensor *s, double v) {
    cg_store_f64(cg_tensor_ptr(s), s->dtype, v);
    cg_storage_bump_version(s->storage);
    return scalar_get(s);
}

/* steps[i] += 1; returns the new count. */
static double bump_step(cg_tensor *s) { return scalar_set(s, scalar_get(s) + 1.0); }

/* s *= v, computed as PyTorch's in-place product of a tensor and a number:
 * in float64 for a float64 s, else in float32. Returns the stored value. */
static double scalar_mul_(cg_tensor *s, double v) {
    double x = scalar_get(s);
    return scalar_set(s, s->dtype == CG_DTYPE_F64 ? x * v : (double)((float)x * (float)v));
}

/* s <- v through a float32 tensor, as PyTorch's s.copy_(torch.as_tensor(v)). */
static double scalar_copy_f32(cg_tensor *s, double v) { return scalar_set(s, (double)(float)v); }

/* Run the device's step over one parameter's operands (Note [Optimizer
 * staging]): s the per-parameter scalars, first SGD's new momentum buffer. */
static cg_status run_one(const char *op, cg_optim_kind kind, opt_operands *x, const double *s, bool first,
                         const void *opt) {
    cg_tensor *p = x->t[0];
    cg_status st = CG_OK;
    if (cg_tensor_numel(p) > 0) {
        cg_tensor *staged[OPT_MAX_OPERANDS] = {0}, *t[OPT_MAX_OPERANDS] = {0};
        bool prev = cg_set_grad_enabled(false);
        for (int q = 0; q < OPT_MAX_OPERANDS && !st; q++) {
            t[q] = x->names[q] ? x->t[q] : NULL;
            if (!t[q] || cg_tensor_is_contiguous(t[q])) continue;
            staged[q] = cg_contiguous(t[q]);
            if (!staged[q]) st = cg_last_error();
            else t[q] = staged[q];
        }
        if (!st) CG_RUN_KERNEL(st, op, p->device, optim_step, kind, t, s, first, opt);
        for (int q = 0; q < OPT_MAX_OPERANDS; q++) {
            if (!staged[q]) continue;
            if (!st && x->written[q]) st = cg_copy_(x->t[q], staged[q]);
            cg_tensor_release(staged[q]);
        }
        cg_set_grad_enabled(prev);
    }
    for (int q = 0; q < OPT_MAX_OPERANDS; q++)
        if (x->t[q] && x->written[q]) cg_storage_bump_version(x->t[q]->storage);
    return st;
}

static opt_operands operands(cg_tensor *p, cg_tensor *g) {
    opt_operands x;
    memset(&x, 0, sizeof x);
    x.t[0] = p, x.written[0] = true, x.names[0] = "param";
    x.t[1] = g, x.names[1] = "grad";
    return x;
}
static void add_state(opt_operands *x, int q, cg_tensor *t, const char *name) {
    x->t[q] = t, x->written[q] = true, x->names[q] = name;
}

#define CHECK_GROUP(op)                                                                            \
    do {                                                                                           \
        CG_CHECK_S(n >= 0, CG_ERR_VALUE, "[%s] negative parameter count", op);                     \
        CG_CHECK_S(n == 0 || (params && grads), CG_ERR_VALUE, "[%s] params or grads is NULL", op); \
        CG_CHECK_S(opt, CG_ERR_VALUE, "[%s] options are NULL", op);                                \
    } while (0)

/* ------------------------------------------------------------- groups
 * Every step but SGD's is one opt_group: its state lists by operand (states[k]
 * feeds operand 2 + k; a NULL name leaves the operand unused and its list may
 * be NULL), its one-element states (steps first) and `prepare`, which updates
 * parameter i's one-element states sc as PyTorch does and fills the kernel's
 * scalars s. run_group checks the whole group, then updates it parameter by
 * parameter. */

#define OPT_MAX_STATES (OPT_MAX_OPERANDS - 2)
#define OPT_MAX_SCALARS 3

typedef void (*opt_prepare)(const void *opt, cg_tensor *const *sc, double *s);

typedef struct opt_group {
    const char *op;
    cg_optim_kind kind;
    cg_tensor *const *states[OPT_MAX_STATES];
    const char *state_names[OPT_MAX_STATES];
    cg_tensor *const *scalars[OPT_MAX_SCALARS];
    const char *scalar_names[OPT_MAX_SCALARS];
    opt_prepare prepare;
} opt_group;

static cg_status run_group(const opt_group *g, int64_t n, cg_tensor *const *params, cg_tensor *const *grads,
                           const void *opt) {
    bool lists = true;
    for (int k = 0; k < OPT_MAX_STATES; k++) lists = lists && (!g->state_names[k] || g->states[k]);
    for (int k = 0; k < OPT_MAX_SCALARS; k++) lists = lists && (!g->scalar_names[k] || g->scalars[k]);
    CG_CHECK_S(n == 0 || lists, CG_ERR_VALUE, "[%s] a state list is NULL", g->op);
    for (int pass = 0; pass < 2; pass++) {
        for (int64_t i = 0; i < n; i++) {
            opt_operands x = operands(params[i], grads[i]);
            cg_tensor *sc[OPT_MAX_SCALARS] = {0};
            for (int k = 0; k < OPT_MAX_STATES; k++)
                if (g->state_names[k]) add_state(&x, 2 + k, g->states[k][i], g->state_names[k]);
            for (int k = 0; k < OPT_MAX_SCALARS; k++)
                if (g->scalar_names[k]) sc[k] = g->scalars[k][i];
            if (pass == 0) {
                if (check_operands(g->op, i, &x)) return cg_last_error();
                for (int k = 0; k < OPT_MAX_SCALARS; k++)
                    if (g->scalar_names[k] && check_scalar(g->op, i, g->scalar_names[k], sc[k], k > 0))
                        return cg_last_error();
                continue;
            }
            double s[4] = {0};
            g->prepare(opt, sc, s);
            cg_status st = run_one(g->op, g->kind, &x, s, false, opt);
            if (st) return st;
        }
    }
    return CG_OK;
}

/* ------------------------------------------------------------- per-parameter scalars
 * Computed in double from the step count as PyTorch computes them in Python
 * (same operations, same order); the kernel rounds them to its compute type. */

/* Adadelta, RMSprop, Rprop: the step is only counted */
static void prep_count(const void *opt, cg_tensor *const *sc, double *s) {
    (void)opt, (void)s;
    bump_step(sc[0]);
}

/* s[0] = -lr / bias_correction1, s[1] = sqrt(bias_correction2) */
static void prep_adam(const void *opt, cg_tensor *const *sc, double *s) {
    const cg_adam_options *o = opt;
    double step = bump_step(sc[0]);
    double bc1 = 1.0 - pow(o->beta1, step), bc2 = 1.0 - pow(o->beta2, step);
    s[0] = -(o->lr / bc1), s[1] = pow(bc2, 0.5);
}

/* s[0] = -lr / (1 + (step - 1) lr_decay) */
static void prep_adagrad(const void *opt, cg_tensor *const *sc, double *s) {
    const cg_adagrad_options *o = opt;
    double step = bump_step(sc[0]);
    s[0] = -(o->lr / (1.0 + (step - 1.0) * o->lr_decay));
}

/* s[0] = -lr / bias_correction1 */
static void prep_adamax(const void *opt, cg_tensor *const *sc, double *s) {
    const cg_adamax_options *o = opt;
    double step = bump_step(sc[0]);
    s[0] = -(o->lr / (1.0 - pow(o->beta1, step)));
}

/* mu_product *= mu_t; s[0], s[1] the values of the two addcdiv (grad and
 * exp_avg terms), s[2] = bias_correction2 */
static void prep_nadam(const void *opt, cg_tensor *const *sc, double *s) {
    const cg_nadam_options *o = opt;
    double step = bump_step(sc[0]);
    double mu = o->beta1 * (1.0 - 0.5 * pow(0.96, step * o->momentum_decay));
    double mu_next = o->beta1 * (1.0 - 0.5 * pow(0.96, (step + 1) * o->momentum_decay));
    double mu_product = scalar_mul_(sc[1], mu);
    s[0] = -o->lr * (1.0 - mu) / (1.0 - mu_product);
    s[1] = (-o->lr * mu_next) / (1.0 - mu_product * mu_next);
    s[2] = 1.0 - pow(o->beta2, step);
}

/* s[0] = bias_correction1, s[1] = sqrt(bias_correction2), s[2] the
 * rectification term, s[3] = 1 when it applies (rho_t > 5), else 0 */
static void prep_radam(const void *opt, cg_tensor *const *sc, double *s) {
    const cg_radam_options *o = opt;
    double step = bump_step(sc[0]);
    double bc1 = 1.0 - pow(o->beta1, step), bc2 = 1.0 - pow(o->beta2, step);
    double rho_inf = 2 / (1 - o->beta2) - 1;
    double rho_t = rho_inf - 2 * step * pow(o->beta2, step) / bc2;
    s[0] = bc1, s[1] = pow(bc2, 0.5);
    if (rho_t > 5.0) {
        s[2] = pow((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t), 0.5);
        s[3] = 1;
    }
}

/* s[0] = 1 - lambd eta, s[1] = -eta, s[2] = mu, s[3] = 1 when mu != 1 (ax
 * averages; else ax copies the parameter), from the previous step's eta and
 * mu, which then take this step's values */
static void prep_asgd(const void *opt, cg_tensor *const *sc, double *s) {
    const cg_asgd_options *o = opt;
    double step = bump_step(sc[0]);
    double mu = scalar_get(sc[1]), eta = scalar_get(sc[2]);
    s[0] = 1 - o->lambd * eta, s[1] = -eta, s[2] = mu, s[3] = mu != 1;
    scalar_copy_f32(sc[2], o->lr / pow(1 + o->lambd * o->lr * step, o->alpha));
    scalar_copy_f32(sc[1], 1 / fmax(1, step - o->t0));
}

/* ------------------------------------------------------------- public steps */

CG_PROF_FNV(cg_status, cg_sgd_step, "sgd_step", (int64_t n, cg_tensor *const *params, cg_tensor *const *grads,
            cg_tensor **momentum_buffers, const cg_sgd_options *opt), (n, params, grads, momentum_buffers, opt), 0,
            NULL) {
    CHECK_GROUP("sgd");
    bool mom = opt->momentum != 0;
    CG_CHECK_S(!mom || n == 0 || momentum_buffers, CG_ERR_VALUE, "[sgd] momentum_buffers is NULL");
    for (int64_t i = 0; i < n; i++) {
        opt_operands x = operands(params[i], grads[i]);
        if (mom && momentum_buffers[i]) add_state(&x, 2, momentum_buffers[i], "momentum_buffer");
        if (check_operands("sgd", i, &x)) return cg_last_error();
    }
    /* new buffers first, so a failed allocation leaves everything untouched */
    bool *fresh = NULL;
    if (mom && n > 0) {
        fresh = cg_calloc_n("sgd", n, sizeof *fresh);
        if (!fresh) return cg_set_error(CG_ERR_OOM, "[sgd] out of memory");
        for (int64_t i = 0; i < n; i++) {
            if (momentum_buffers[i]) continue;
            const cg_tensor *p = params[i];
            momentum_buffers[i] = cg_tensor_new("sgd", p->ndim, p->shape, p->dtype, p->device);
            if (!momentum_buffers[i]) {
                for (int64_t k = 0; k < i; k++)
                    if (fresh[k]) {
                        cg_tensor_release(momentum_buffers[k]);
                        momentum_buffers[k] = NULL;
                    }
                free(fresh);
                return cg_last_error();
            }
            fresh[i] = true;
        }
    }
    cg_status st = CG_OK;
    for (int64_t i = 0; i < n && !st; i++) {
        opt_operands x = operands(params[i], grads[i]);
        if (mom) add_state(&x, 2, momentum_buffers[i], "momentum_buffer");
        const double none[4] = {0};
        st = run_one("sgd", CG_OPTIM_SGD, &x, none, mom && fresh[i], opt);
    }
    free(fresh);
    return st;
}

CG_PROF_FNV(cg_status, cg_adam_step, "adam_step", (int64_t n, cg_tensor *const *params, cg_tensor *const *grads,
            cg_tensor *const *exp_avgs, cg_tensor *const *exp_avg_sqs, cg_tensor *const *max_exp_avg_sqs,
            cg_tensor *const *steps, const cg_adam_options *opt), (n, params, grads, exp_avgs, exp_avg_sqs,
            max_exp_avg_sqs, steps, opt), 0, NULL) {
    const char *op = opt && opt->decoupled_weight_decay ? "adamw" : "adam";
    CHECK_GROUP(op);
    const opt_group g = {op, CG_OPTIM_ADAM, {exp_avgs, exp_avg_sqs, max_exp_avg_sqs},
                         {"exp_avg", "exp_avg_sq", opt->amsgrad ? "max_exp_avg_sq" : NULL}, {steps}, {"step"},
                         prep_adam};
    return run_group(&g, n, params, grads, opt);
}

CG_PROF_FNV(cg_status, cg_rmsprop_step, "rmsprop_step", (int64_t n, cg_tensor *const *params, cg_tensor *const *grads,
            cg_tensor *const *square_avgs, cg_tensor *const *momentum_buffers, cg_tensor *const *grad_avgs,
            cg_tensor *const *steps, const cg_rmsprop_options *opt), (n, params, grads, square_avgs, momentum_buffers,
            grad_avgs, steps, opt), 0, NULL) {
    CHECK_GROUP("rmsprop");
    const opt_group g = {"rmsprop", CG_OPTIM_RMSPROP, {square_avgs, momentum_buffers, grad_avgs},
                         {"square_avg", opt->momentum > 0 ? "momentum_buffer" : NULL,
                          opt->centered ? "grad_avg" : NULL},
                         {steps}, {"step"}, prep_count};
    return run_group(&g, n, params, grads, opt);
}

CG_PROF_FNV(cg_status, cg_adagrad_step, "adagrad_step", (int64_t n, cg_tensor *const *params, cg_tensor *const *grads,
            cg_tensor *const *state_sums, cg_tensor *const *steps, const cg_adagrad_options *opt), (n, params, grads,
            state_sums, steps, opt), 0, NULL) {
    CHECK_GROUP("adagrad");
    const opt_group g = {"adagrad", CG_OPTIM_ADAGRAD, {state_sums}, {"state_sum"}, {steps}, {"step"}, prep_adagrad};
    return run_group(&g, n, params, grads, opt);
}

CG_PROF_FNV(cg_status, cg_adadelta_step, "adadelta_step", (int64_t n, cg_tensor *const *params,
            cg_tensor *const *grads, cg_tensor *const *square_avgs, cg_tensor *const *acc_deltas,
            cg_tensor *const *steps, const cg_adadelta_options *opt), (n, params, grads, square_avgs, acc_deltas,
            steps, opt), 0, NULL) {
    CHECK_GROUP("adadelta");
    const opt_group g = {"adadelta", CG_OPTIM_ADADELTA, {square_avgs, acc_deltas}, {"square_avg", "acc_delta"},
                         {steps}, {"step"}, prep_count};
    return run_group(&g, n, params, grads, opt);
}

CG_PROF_FNV(cg_status, cg_adamax_step, "adamax_step", (int64_t n, cg_tensor *const *params, cg_tensor *const *grads,
            cg_tensor *const *exp_avgs, cg_tensor *const *exp_infs, cg_tensor *const *steps,
            const cg_adamax_options *opt), (n, params, grads, exp_avgs, exp_infs, steps, opt), 0, NULL) {
    CHECK_GROUP("adamax");
    const opt_group g = {"adamax", CG_OPTIM_ADAMAX, {exp_avgs, exp_infs}, {"exp_avg", "exp_inf"}, {steps}, {"step"},
                         prep_adamax};
    return run_group(&g, n, params, grads, opt);
}

CG_PROF_FNV(cg_status, cg_nadam_step, "nadam_step", (int64_t n, cg_tensor *const *params, cg_tensor *const *grads,
            cg_tensor *const *exp_avgs, cg_tensor *const *exp_avg_sqs, cg_tensor *const *mu_products,
            cg_tensor *const *steps, const cg_nadam_options *opt), (n, params, grads, exp_avgs, exp_avg_sqs,
            mu_products, steps, opt), 0, NULL) {
    CHECK_GROUP("nadam");
    const opt_group g = {"nadam", CG_OPTIM_NADAM, {exp_avgs, exp_avg_sqs}, {"exp_avg", "exp_avg_sq"},
                         {steps, mu_products}, {"step", "mu_product"}, prep_nadam};
    return run_group(&g, n, params, grads, opt);
}

CG_PROF_FNV(cg_status, cg_radam_step, "radam_step", (int64_t n, cg_tensor *const *params, cg_tensor *const *grads,
            cg_tensor *const *exp_avgs, cg_tensor *const *exp_avg_sqs, cg_tensor *const *steps,
            const cg_radam_options *opt), (n, params, grads, exp_avgs, exp_avg_sqs, steps, opt), 0, NULL) {
    CHECK_GROUP("radam");
    const opt_group g = {"radam", CG_OPTIM_RADAM, {exp_avgs, exp_avg_sqs}, {"exp_avg", "exp_avg_sq"}, {steps},
                         {"step"}, prep_radam};
    return run_group(&g, n, params, grads, opt);
}

CG_PROF_FNV(cg_status, cg_rprop_step, "rprop_step", (int64_t n, cg_tensor *const *params, cg_tensor *const *grads,
            cg_tensor *const *prevs, cg_tensor *const *step_sizes, cg_tensor *const *steps,
            const cg_rprop_options *opt), (n, params, grads, prevs, step_sizes, steps, opt), 0, NULL) {
    CHECK_GROUP("rprop");
    const opt_group g = {"rprop", CG_OPTIM_RPROP, {prevs, step_sizes}, {"prev", "step_size"}, {steps}, {"step"},
                         prep_count};
    return run_group(&g, n, params, grads, opt);
}

CG_PROF_FNV(cg_status, cg_asgd_step, "asgd_step", (int64_t n, cg_tensor *const *params, cg_tensor *const *grads,
            cg_tensor *const *axs, cg_tensor *const *mus, cg_tensor *const *etas, cg_tensor *const *steps,
            const cg_asgd_options *opt), (n, params, grads, axs, mus, etas, steps, opt), 0, NULL) {
    CHECK_GROUP("asgd");
    const opt_group g = {"asgd", CG_OPTIM_ASGD, {axs}, {"ax"}, {steps, mus, etas}, {"step", "mu", "eta"},
                         prep_asgd};
    return run_group(&g, n, params, grads, opt);
}
