/* optim.c — fused optimizer steps (SGD, Adam / AdamW, RMSprop, Adagrad):
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

static cg_status check_step(const char *op, int64_t i, const cg_tensor *s) {
    if (!s) return cg_set_error(CG_ERR_VALUE, "[%s] step of parameter %lld is NULL", op, (long long)i);
    if (cg_shape_numel(s->ndim, s->shape) != 1 || !cg_device_host_addressable(s->device))
        return cg_set_error(CG_ERR_SHAPE, "[%s] parameter %lld: step must be a one-element cpu tensor", op,
                            (long long)i);
    return CG_OK;
}

/* steps[i] += 1; returns the new count. */
static double bump_step(cg_tensor *s) {
    char *ptr = cg_tensor_ptr(s);
    double v = cg_load_f64(ptr, s->dtype) + 1.0;
    cg_store_f64(ptr, s->dtype, v);
    cg_storage_bump_version(s->storage);
    return v;
}

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
    CG_CHECK_S(n == 0 || (exp_avgs && exp_avg_sqs && steps && (!opt->amsgrad || max_exp_avg_sqs)), CG_ERR_VALUE,
               "[%s] a state list is NULL", op);
    for (int64_t i = 0; i < n; i++) {
        opt_operands x = operands(params[i], grads[i]);
        add_state(&x, 2, exp_avgs[i], "exp_avg");
        add_state(&x, 3, exp_avg_sqs[i], "exp_avg_sq");
        if (opt->amsgrad) add_state(&x, 4, max_exp_avg_sqs[i], "max_exp_avg_sq");
        if (check_operands(op, i, &x) || check_step(op, i, steps[i])) return cg_last_error();
    }
    cg_status st = CG_OK;
    for (int64_t i = 0; i < n && !st; i++) {
        opt_operands x = operands(params[i], grads[i]);
        add_state(&x, 2, exp_avgs[i], "exp_avg");
        add_state(&x, 3, exp_avg_sqs[i], "exp_avg_sq");
        if (opt->amsgrad) add_state(&x, 4, max_exp_avg_sqs[i], "max_exp_avg_sq");
        double step = bump_step(steps[i]);
        double bc1 = 1.0 - pow(opt->beta1, step), bc2 = 1.0 - pow(opt->beta2, step);
        const double sc[4] = {-(opt->lr / bc1), pow(bc2, 0.5)};
        st = run_one(op, CG_OPTIM_ADAM, &x, sc, false, opt);
    }
    return st;
}

CG_PROF_FNV(cg_status, cg_rmsprop_step, "rmsprop_step", (int64_t n, cg_tensor *const *params, cg_tensor *const *grads,
            cg_tensor *const *square_avgs, cg_tensor *const *momentum_buffers, cg_tensor *const *grad_avgs,
            cg_tensor *const *steps, const cg_rmsprop_options *opt), (n, params, grads, square_avgs, momentum_buffers,
            grad_avgs, steps, opt), 0, NULL) {
    CHECK_GROUP("rmsprop");
    bool mom = opt->momentum > 0;
    CG_CHECK_S(n == 0 || (square_avgs && steps && (!mom || momentum_buffers) && (!opt->centered || grad_avgs)),
               CG_ERR_VALUE, "[rmsprop] a state list is NULL");
    for (int pass = 0; pass < 2; pass++) {
        cg_status st = CG_OK;
        for (int64_t i = 0; i < n && !st; i++) {
            opt_operands x = operands(params[i], grads[i]);
            add_state(&x, 2, square_avgs[i], "square_avg");
            if (mom) add_state(&x, 3, momentum_buffers[i], "momentum_buffer");
            if (opt->centered) add_state(&x, 4, grad_avgs[i], "grad_avg");
            if (pass == 0) {
                if (check_operands("rmsprop", i, &x) || check_step("rmsprop", i, steps[i])) return cg_last_error();
            } else {
                bump_step(steps[i]);
                const double none[4] = {0};
                st = run_one("rmsprop", CG_OPTIM_RMSPROP, &x, none, false, opt);
            }
        }
        if (st) return st;
    }
    return CG_OK;
}

CG_PROF_FNV(cg_status, cg_adagrad_step, "adagrad_step", (int64_t n, cg_tensor *const *params, cg_tensor *const *grads,
            cg_tensor *const *state_sums, cg_tensor *const *steps, const cg_adagrad_options *opt), (n, params, grads,
            state_sums, steps, opt), 0, NULL) {
    CHECK_GROUP("adagrad");
    CG_CHECK_S(n == 0 || (state_sums && steps), CG_ERR_VALUE, "[adagrad] a state list is NULL");
    for (int pass = 0; pass < 2; pass++) {
        cg_status st = CG_OK;
        for (int64_t i = 0; i < n && !st; i++) {
            opt_operands x = operands(params[i], grads[i]);
            add_state(&x, 2, state_sums[i], "state_sum");
            if (pass == 0) {
                if (check_operands("adagrad", i, &x) || check_step("adagrad", i, steps[i])) return cg_last_error();
            } else {
                double step = bump_step(steps[i]);
                const double sc[4] = {-(opt->lr / (1.0 + (step - 1.0) * opt->lr_decay))};
                st = run_one("adagrad", CG_OPTIM_ADAGRAD, &x, sc, false, opt);
            }
        }
        if (st) return st;
    }
    return CG_OK;
}
