/* test_optim.c — the fused optimizer steps (src/optim/optim.c): each
 * optimizer's 20-step trajectory, with every option, against a plain
 * reference loop written here in double (PyTorch's formulas; its float32
 * one-element states, NAdam's mu_product and ASGD's eta and mu, rounded as
 * PyTorch rounds them); float32 / float16 / bfloat16
 * parameters, non-contiguous grads and parameters, a parameter large enough
 * to be split across threads, version counters, and the argument errors. */
#include "test.h"

#include <stdlib.h>
#include <string.h>

typedef enum { K_SGD, K_ADAM, K_RMSPROP, K_ADAGRAD, K_ADADELTA, K_ADAMAX, K_NADAM, K_RADAM, K_RPROP, K_ASGD } opt_kind;

typedef struct opt_cfg {
    opt_kind kind;
    cg_sgd_options sgd;
    cg_adam_options adam;
    cg_rmsprop_options rms;
    cg_adagrad_options ada;
    double init_acc; /* Adagrad's initial_accumulator_value; Rprop's lr (the first step sizes) */
    cg_adadelta_options adadelta;
    cg_adamax_options adamax;
    cg_nadam_options nadam;
    cg_radam_options radam;
    cg_rprop_options rprop;
    cg_asgd_options asgd;
} opt_cfg;

#define NSTEPS 20
#define MAXP 5

/* reference state of one parameter, in double */
typedef struct ref_param {
    int64_t n;
    double *p, *s0, *s1, *s2; /* states in the order of the step's arguments */
    double step;
    bool has_buf;
    double sc1, sc2; /* NAdam's mu_product; ASGD's mu and eta */
} ref_param;

/* v rounded to float32. Through a volatile: GCC 12's SLP vectoriser drops a
 * double -> float -> double round trip when two of them sit side by side. */
static double f32(double v) {
    volatile float f = (float)v;
    return f;
}

static double *dup_values(const cg_tensor *t) {
    int64_t n = cg_tensor_numel(t);
    double *v = calloc((size_t)(n ? n : 1), sizeof *v);
    for (int64_t i = 0; i < n; i++) v[i] = tt_get(t, i);
    return v;
}

/* One reference step of parameter r with gradient g (already rounded). */
static void ref_step(const opt_cfg *c, ref_param *r, const double *g0) {
    r->step += 1;
    double t = r->step;
    for (int64_t i = 0; i < r->n; i++) {
        double g = g0[i], *p = &r->p[i];
        switch (c->kind) {
        case K_SGD: {
            const cg_sgd_options *o = &c->sgd;
            if (o->maximize) g = -g;
            g += o->weight_decay * *p;
            if (o->momentum != 0) {
                double *b = &r->s0[i];
                *b = r->has_buf ? o->momentum * *b + (1 - o->dampening) * g : g;
                g = o->nesterov ? g + o->momentum * *b : *b;
            }
            *p -= o->lr * g;
            break;
        }
        case K_ADAM: {
            const cg_adam_options *o = &c->adam;
            if (o->maximize) g = -g;
            if (o->decoupled_weight_decay) *p *= 1 - o->lr * o->weight_decay;
            else g += o->weight_decay * *p;
            double *m = &r->s0[i], *v = &r->s1[i], *vm = &r->s2[i];
            *m = o->beta1 * *m + (1 - o->beta1) * g;
            *v = o->beta2 * *v + (1 - o->beta2) * g * g;
            if (*v > *vm) *vm = *v;
            double denom = sqrt(o->amsgrad ? *vm : *v) / sqrt(1 - pow(o->beta2, t)) + o->eps;
            *p -= o->lr / (1 - pow(o->beta1, t)) * *m / denom;
            break;
        }
        case K_RMSPROP: {
            const cg_rmsprop_options *o = &c->rms;
            if (o->maximize) g = -g;
            g += o->weight_decay * *p;
            double *sa = &r->s0[i], *b = &r->s1[i], *ga = &r->s2[i];
            *sa = o->alpha * *sa + (1 - o->alpha) * g * g;
            double avg;
            if (o->centered) {
                *ga = o->alpha * *ga + (1 - o->alpha) * g;
                avg = sqrt(*sa - *ga * *ga) + o->eps;
            } else {
                avg = sqrt(*sa) + o->eps;
            }
            if (o->momentum > 0) {
                *b = o->momentum * *b + g / avg;
                *p -= o->lr * *b;
            } else {
                *p -= o->lr * g / avg;
            }
            break;
        }
        case K_ADAGRAD: {
            const cg_adagrad_options *o = &c->ada;
            if (o->maximize) g = -g;
            g += o->weight_decay * *p;
            double *ss = &r->s0[i];
            *ss += g * g;
            *p -= o->lr / (1 + (t - 1) * o->lr_decay) * g / (sqrt(*ss) + o->eps);
            break;
        }
        case K_ADADELTA: {
            const cg_adadelta_options *o = &c->adadelta;
            if (o->maximize) g = -g;
            g += o->weight_decay * *p;
            double *sa = &r->s0[i], *ad = &r->s1[i];
            *sa = o->rho * *sa + (1 - o->rho) * g * g;
            double delta = sqrt(*ad + o->eps) / sqrt(*sa + o->eps) * g;
            *ad = o->rho * *ad + (1 - o->rho) * delta * delta;
            *p -= o->lr * delta;
            break;
        }
        case K_ADAMAX: {
            const cg_adamax_options *o = &c->adamax;
            if (o->maximize) g = -g;
            g += o->weight_decay * *p;
            double *m = &r->s0[i], *u = &r->s1[i];
            *m = o->beta1 * *m + (1 - o->beta1) * g;
            *u = fmax(o->beta2 * *u, fabs(g) + o->eps);
            *p -= o->lr / (1 - pow(o->beta1, t)) * *m / *u;
            break;
        }
        case K_NADAM: {
            const cg_nadam_options *o = &c->nadam;
            if (o->maximize) g = -g;
            if (o->decoupled_weight_decay) *p *= 1 - o->lr * o->weight_decay;
            else g += o->weight_decay * *p;
            double *m = &r->s0[i], *v = &r->s1[i];
            *m = o->beta1 * *m + (1 - o->beta1) * g;
            *v = o->beta2 * *v + (1 - o->beta2) * g * g;
            double mu = o->beta1 * (1 - 0.5 * pow(0.96, t * o->momentum_decay));
            double mu_next = o->beta1 * (1 - 0.5 * pow(0.96, (t + 1) * o->momentum_decay));
            double mp = r->sc1, denom = sqrt(*v / (1 - pow(o->beta2, t))) + o->eps;
            *p -= o->lr * (1 - mu) / (1 - mp) * g / denom + o->lr * mu_next / (1 - mp * mu_next) * *m / denom;
            break;
        }
        case K_RADAM: {
            const cg_radam_options *o = &c->radam;
            if (o->maximize) g = -g;
            if (o->decoupled_weight_decay) *p *= 1 - o->lr * o->weight_decay;
            else g += o->weight_decay * *p;
            double *m = &r->s0[i], *v = &r->s1[i];
            *m = o->beta1 * *m + (1 - o->beta1) * g;
            *v = o->beta2 * *v + (1 - o->beta2) * g * g;
            double bc2 = 1 - pow(o->beta2, t), rho_inf = 2 / (1 - o->beta2) - 1;
            double rho_t = rho_inf - 2 * t * pow(o->beta2, t) / bc2;
            double upd = *m / (1 - pow(o->beta1, t)) * o->lr;
            if (rho_t > 5)
                upd *= sqrt(bc2) / (sqrt(*v) + o->eps) *
                       sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t));
            *p -= upd;
            break;
        }
        case K_RPROP: {
            const cg_rprop_options *o = &c->rprop;
            if (o->maximize) g = -g;
            double *prev = &r->s0[i], *size = &r->s1[i], agree = g * *prev;
            *size *= agree > 0 ? o->etaplus : agree < 0 ? o->etaminus : 1;
            *size = fmin(fmax(*size, o->step_size_min), o->step_size_max);
            if (agree < 0) g = 0;
            *p -= (g > 0 ? 1 : g < 0 ? -1 : 0) * *size;
            *prev = g;
            break;
        }
        case K_ASGD: {
            const cg_asgd_options *o = &c->asgd;
            if (o->maximize) g = -g;
            g += o->weight_decay * *p;
            double mu = r->sc1, eta = r->sc2, *ax = &r->s0[i];
            *p = *p * (1 - o->lambd * eta) - eta * g;
            *ax = mu != 1 ? *ax + (*p - *ax) * mu : *p;
            break;
        }
        }
    }
    r->has_buf = true;
}

/* The one-element states after step t (NAdam's product runs before the
 * update, ASGD's eta and mu after it). */
static void ref_scalars_before(const opt_cfg *c, ref_param *r) {
    if (c->kind != K_NADAM) return;
    double t = r->step + 1, mu = c->nadam.beta1 * (1 - 0.5 * pow(0.96, t * c->nadam.momentum_decay));
    r->sc1 = (float)r->sc1 * (float)mu;
}
static void ref_scalars_after(const opt_cfg *c, ref_param *r) {
    if (c->kind != K_ASGD) return;
    const cg_asgd_options *o = &c->asgd;
    r->sc1 = f32(1 / fmax(1, r->step - o->t0));
    r->sc2 = f32(o->lr / pow(1 + o->lambd * o->lr * r->step, o->alpha));
}

static cg_tensor *filled(const cg_tensor *like, double v) {
    cg_tensor *t = cg_empty(cg_tensor_ndim(like), cg_tensor_shape(like), cg_tensor_dtype(like), cg_cpu());
    if (t) cg_fill_(t, v);
    return t;
}

typedef struct traj_opts {
    cg_dtype dt;
    bool noncontig_grad, noncontig_param, big;
    double tol; /* relative */
} traj_opts;

/* Run NSTEPS steps of c on parameters of several shapes and compare the
 * parameters and states with the reference. */
static void run_traj(const opt_cfg *c, traj_opts to, const char *label) {
    static const int64_t shapes[MAXP][3] = {{0}, {7}, {3, 5}, {2, 3, 4}, {70001}};
    static const int ndims[MAXP] = {0, 1, 2, 3, 1};
    int np = to.big ? MAXP : MAXP - 1;
    cg_tensor *params[MAXP], *grads[MAXP], *s0[MAXP] = {0}, *s1[MAXP] = {0}, *s2[MAXP] = {0}, *steps[MAXP];
    cg_tensor *sc1[MAXP] = {0}, *sc2[MAXP] = {0};
    ref_param ref[MAXP];
    for (int k = 0; k < np; k++) {
        cg_tensor *p = tt_rand(to.dt, ndims[k], shapes[k], -1, 1, 11u + (unsigned)k);
        if (to.noncontig_param) {
            cg_tensor *q = tt_noncontig(p);
            cg_tensor_release(p);
            p = q;
        }
        params[k] = p;
        steps[k] = cg_scalar(0, CG_DTYPE_F32);
        memset(&ref[k], 0, sizeof ref[k]);
        ref[k].n = cg_tensor_numel(p);
        ref[k].p = dup_values(p);
        double init = c->kind == K_ADAGRAD ? c->init_acc : 0, init1 = c->kind == K_RPROP ? c->init_acc : 0;
        if (c->kind != K_SGD) s0[k] = filled(p, init);
        if (c->kind != K_SGD && c->kind != K_ADAGRAD && c->kind != K_ASGD) s1[k] = filled(p, init1);
        if (c->kind == K_ADAM || c->kind == K_RMSPROP) s2[k] = filled(p, 0);
        ref[k].s0 = calloc((size_t)ref[k].n, sizeof(double));
        ref[k].s1 = calloc((size_t)ref[k].n, sizeof(double));
        ref[k].s2 = calloc((size_t)ref[k].n, sizeof(double));
        for (int64_t i = 0; i < ref[k].n; i++) ref[k].s0[i] = init, ref[k].s1[i] = init1;
        /* the one-element states as PyTorch creates them: float32 */
        if (c->kind == K_NADAM || c->kind == K_ASGD) sc1[k] = cg_scalar(1, CG_DTYPE_F32), ref[k].sc1 = 1;
        if (c->kind == K_ASGD) sc2[k] = cg_scalar(c->asgd.lr, CG_DTYPE_F32), ref[k].sc2 = f32(c->asgd.lr);
    }
    uint64_t v0 = cg_tensor_version(params[1]);
    for (int s = 0; s < NSTEPS; s++) {
        for (int k = 0; k < np; k++) {
            cg_tensor *g = tt_rand(to.dt, ndims[k], shapes[k], -1, 1, 1000u + 37u * (unsigned)s + (unsigned)k);
            if (to.noncontig_grad) {
                cg_tensor *q = tt_noncontig(g);
                cg_tensor_release(g);
                g = q;
            }
            grads[k] = g;
            double *gv = dup_values(g);
            ref_scalars_before(c, &ref[k]);
            ref_step(c, &ref[k], gv);
            ref_scalars_after(c, &ref[k]);
            free(gv);
        }
        cg_status st = CG_OK;
        switch (c->kind) {
        case K_SGD: st = cg_sgd_step(np, params, grads, s0, &c->sgd); break;
        case K_ADAM: st = cg_adam_step(np, params, grads, s0, s1, s2, steps, &c->adam); break;
        case K_RMSPROP: st = cg_rmsprop_step(np, params, grads, s0, s1, s2, steps, &c->rms); break;
        case K_ADAGRAD: st = cg_adagrad_step(np, params, grads, s0, steps, &c->ada); break;
        case K_ADADELTA: st = cg_adadelta_step(np, params, grads, s0, s1, steps, &c->adadelta); break;
        case K_ADAMAX: st = cg_adamax_step(np, params, grads, s0, s1, steps, &c->adamax); break;
        case K_NADAM: st = cg_nadam_step(np, params, grads, s0, s1, sc1, steps, &c->nadam); break;
        case K_RADAM: st = cg_radam_step(np, params, grads, s0, s1, steps, &c->radam); break;
        case K_RPROP: st = cg_rprop_step(np, params, grads, s0, s1, steps, &c->rprop); break;
        case K_ASGD: st = cg_asgd_step(np, params, grads, s0, sc1, sc2, steps, &c->asgd); break;
        }
        CHECK_MSG(st == CG_OK, "%s: step failed: %s", label, cg_last_error_message());
        for (int k = 0; k < np; k++) cg_tensor_release(grads[k]);
        if (st != CG_OK) break;
    }
    CHECK_MSG(cg_tensor_version(params[1]) >= v0 + NSTEPS, "%s: version not bumped", label);
    for (int k = 0; k < np; k++) {
        double worst = 0, worst_state = 0;
        for (int64_t i = 0; i < ref[k].n; i++) {
            double got = tt_get(params[k], i), want = ref[k].p[i];
            double e = fabs(got - want) / (1 + fabs(want));
            if (!(e <= worst)) worst = e;
            for (int q = 0; q < 2; q++) {
                const cg_tensor *t = q ? s1[k] : s0[k];
                double ref_v = q ? ref[k].s1[i] : ref[k].s0[i];
                if (!t || (q && c->kind != K_RPROP && c->kind != K_ADADELTA)) continue;
                double es = fabs(tt_get(t, i) - ref_v) / (1 + fabs(ref_v));
                if (!(es <= worst_state)) worst_state = es;
            }
        }
        if (sc1[k]) CHECK_NEAR(tt_get(sc1[k], 0), ref[k].sc1, 1e-7 * (1 + fabs(ref[k].sc1)));
        if (sc2[k]) CHECK_NEAR(tt_get(sc2[k], 0), ref[k].sc2, 1e-7 * (1 + fabs(ref[k].sc2)));
        CHECK_MSG(worst <= to.tol, "%s: parameter %d off by %g (tol %g)", label, k, worst, to.tol);
        CHECK_MSG(worst_state <= to.tol, "%s: state of parameter %d off by %g (tol %g)", label, k, worst_state,
                  to.tol);
        if (c->kind != K_SGD) CHECK_NEAR(tt_get(steps[k], 0), NSTEPS, 0);
        cg_tensor_release(sc1[k]);
        cg_tensor_release(sc2[k]);
        cg_tensor_release(params[k]);
        cg_tensor_release(s0[k]);
        cg_tensor_release(s1[k]);
        cg_tensor_release(s2[k]);
        cg_tensor_release(steps[k]);
        free(ref[k].p), free(ref[k].s0), free(ref[k].s1), free(ref[k].s2);
    }
}

/* Every configuration in float64 (tight) and float32; the first ones also with
 * non-contiguous grads / parameters, half types and a threaded parameter. */
static void run_all(const opt_cfg *cfgs, int n, const char *name) {
    char label[96];
    for (int i = 0; i < n; i++) {
        snprintf(label, sizeof label, "%s config %d float64", name, i);
        run_traj(&cfgs[i], (traj_opts){.dt = CG_DTYPE_F64, .tol = 1e-12}, label);
        snprintf(label, sizeof label, "%s config %d float32", name, i);
        run_traj(&cfgs[i], (traj_opts){.dt = CG_DTYPE_F32, .tol = 2e-5}, label);
    }
    snprintf(label, sizeof label, "%s non-contiguous grads", name);
    run_traj(&cfgs[n - 1], (traj_opts){.dt = CG_DTYPE_F64, .noncontig_grad = true, .tol = 1e-12}, label);
    snprintf(label, sizeof label, "%s non-contiguous params", name);
    run_traj(&cfgs[n - 1], (traj_opts){.dt = CG_DTYPE_F64, .noncontig_param = true, .tol = 1e-12}, label);
    snprintf(label, sizeof label, "%s threaded", name);
    run_traj(&cfgs[n - 1], (traj_opts){.dt = CG_DTYPE_F32, .big = true, .tol = 2e-5}, label);
    snprintf(label, sizeof label, "%s float16", name);
    run_traj(&cfgs[0], (traj_opts){.dt = CG_DTYPE_F16, .tol = 3e-2}, label);
    snprintf(label, sizeof label, "%s bfloat16", name);
    run_traj(&cfgs[0], (traj_opts){.dt = CG_DTYPE_BF16, .tol = 1e-1}, label);
}

TEST(optim_sgd_trajectories) {
    const cg_sgd_options base = {.lr = 0.1};
    opt_cfg c[8];
    for (int i = 0; i < 8; i++) c[i] = (opt_cfg){.kind = K_SGD, .sgd = base};
    c[1].sgd.momentum = 0.9;
    c[2].sgd.momentum = 0.9, c[2].sgd.dampening = 0.3;
    c[3].sgd.momentum = 0.8, c[3].sgd.nesterov = true;
    c[4].sgd.weight_decay = 0.05;
    c[5].sgd.maximize = true, c[5].sgd.momentum = 0.5;
    c[6].sgd.momentum = 0.9, c[6].sgd.nesterov = true, c[6].sgd.weight_decay = 0.1;
    c[7].sgd.momentum = 0.7, c[7].sgd.dampening = 0.1, c[7].sgd.weight_decay = 0.01, c[7].sgd.maximize = true;
    run_all(c, 8, "sgd");
}

TEST(optim_adam_trajectories) {
    const cg_adam_options base = {.lr = 0.01, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8};
    opt_cfg c[8];
    for (int i = 0; i < 8; i++) c[i] = (opt_cfg){.kind = K_ADAM, .adam = base};
    c[1].adam.amsgrad = true;
    c[2].adam.weight_decay = 0.1;
    c[3].adam.weight_decay = 0.1, c[3].adam.decoupled_weight_decay = true;
    c[4].adam.maximize = true, c[4].adam.amsgrad = true;
    c[5].adam.beta1 = 0.3, c[5].adam.beta2 = 0.5, c[5].adam.eps = 1e-3; /* lerp weight >= 0.5 */
    c[6].adam.decoupled_weight_decay = true, c[6].adam.weight_decay = 0.01, c[6].adam.amsgrad = true;
    c[7].adam.weight_decay = 0.02, c[7].adam.amsgrad = true, c[7].adam.maximize = true;
    run_all(c, 8, "adam");
}

TEST(optim_rmsprop_trajectories) {
    const cg_rmsprop_options base = {.lr = 0.01, .alpha = 0.99, .eps = 1e-8};
    opt_cfg c[7];
    for (int i = 0; i < 7; i++) c[i] = (opt_cfg){.kind = K_RMSPROP, .rms = base};
    c[1].rms.centered = true;
    c[2].rms.momentum = 0.9;
    c[3].rms.weight_decay = 0.1;
    c[4].rms.maximize = true, c[4].rms.alpha = 0.4;
    c[5].rms.centered = true, c[5].rms.momentum = 0.5, c[5].rms.eps = 1e-4;
    c[6].rms.centered = true, c[6].rms.momentum = 0.9, c[6].rms.weight_decay = 0.05, c[6].rms.maximize = true;
    run_all(c, 7, "rmsprop");
}

TEST(optim_adagrad_trajectories) {
    const cg_adagrad_options base = {.lr = 0.1, .eps = 1e-10};
    opt_cfg c[5];
    for (int i = 0; i < 5; i++) c[i] = (opt_cfg){.kind = K_ADAGRAD, .ada = base};
    c[1].ada.lr_decay = 0.1;
    c[2].ada.weight_decay = 0.1;
    c[3].init_acc = 0.5, c[3].ada.maximize = true;
    c[4].ada.lr_decay = 0.05, c[4].ada.weight_decay = 0.01, c[4].init_acc = 0.1, c[4].ada.eps = 1e-3;
    run_all(c, 5, "adagrad");
}

TEST(optim_sgd_momentum_buffer) {
    /* the first step creates the buffer holding the (decayed, negated) grad */
    int64_t sh[1] = {3};
    cg_tensor *p = tt_tensor(CG_DTYPE_F32, 1, sh, (double[]){1, 2, 3});
    cg_tensor *g = tt_tensor(CG_DTYPE_F32, 1, sh, (double[]){0.5, -1, 2});
    cg_tensor *buf = NULL;
    cg_sgd_options o = {.lr = 0.1, .momentum = 0.9, .weight_decay = 0.5, .maximize = true};
    CHECK_OK(cg_sgd_step(1, &p, &g, &buf, &o));
    CHECK_NN(buf);
    if (buf) {
        CHECK(cg_tensor_is_contiguous(buf) && cg_tensor_dtype(buf) == CG_DTYPE_F32);
        CHECK_NEAR(tt_get(buf, 0), -0.5 + 0.5, 1e-7);
        CHECK_NEAR(tt_get(buf, 1), 1 + 1, 1e-7);
        CHECK_NEAR(tt_get(buf, 2), -2 + 1.5, 1e-7);
    }
    CHECK_NEAR(tt_get(p, 1), 2 - 0.1 * 2, 1e-6);
    /* momentum 0: no buffers needed */
    cg_sgd_options plain = {.lr = 1};
    CHECK_OK(cg_sgd_step(1, &p, &g, NULL, &plain));
    CHECK_NEAR(tt_get(p, 0), 1 - 0.5, 1e-6);
    CHECK_OK(cg_sgd_step(0, NULL, NULL, NULL, &plain));
    cg_tensor_release(buf);
    cg_tensor_release(p);
    cg_tensor_release(g);
}

TEST(optim_errors) {
    int64_t s2[1] = {2}, s3[1] = {3};
    cg_tensor *p0 = tt_rand(CG_DTYPE_F32, 1, s2, -1, 1, 1), *p1 = tt_rand(CG_DTYPE_F32, 1, s3, -1, 1, 2);
    cg_tensor *g0 = tt_rand(CG_DTYPE_F32, 1, s2, -1, 1, 3), *g1 = tt_rand(CG_DTYPE_F32, 1, s2, -1, 1, 4);
    cg_tensor *g1d = tt_rand(CG_DTYPE_F64, 1, s3, -1, 1, 5), *g1ok = tt_rand(CG_DTYPE_F32, 1, s3, -1, 1, 6);
    cg_tensor *pi = cg_from_data((int64_t[]){1, 2}, 1, s2, CG_DTYPE_I64);
    cg_tensor *params[2] = {p0, p1};
    double before = tt_get(p0, 0);
    cg_sgd_options so = {.lr = 0.1, .momentum = 0.9};
    cg_tensor *bufs[2] = {NULL, NULL};
    CHECK_ERR(cg_sgd_step(2, params, (cg_tensor *[]){g0, g1}, bufs, &so) != CG_OK, CG_ERR_SHAPE, "[sgd] parameter 1");
    CHECK(bufs[0] == NULL && bufs[1] == NULL);
    CHECK(tt_get(p0, 0) == before); /* nothing written */
    CHECK_ERR(cg_sgd_step(2, params, (cg_tensor *[]){g0, g1d}, bufs, &so) != CG_OK, CG_ERR_DTYPE, "float64");
    CHECK_ERR(cg_sgd_step(1, &pi, &pi, bufs, &so) != CG_OK, CG_ERR_DTYPE, "[sgd] parameter 0");
    CHECK_ERR(cg_sgd_step(2, params, (cg_tensor *[]){g0, NULL}, bufs, &so) != CG_OK, CG_ERR_VALUE, "grad");

    cg_tensor *m[2] = {filled(p0, 0), filled(p0, 0)}, *v[2] = {filled(p0, 0), filled(p1, 0)};
    cg_tensor *st[2] = {cg_scalar(0, CG_DTYPE_F32), cg_scalar(0, CG_DTYPE_F32)};
    cg_adam_options ao = {.lr = 0.1, .beta1 = 0.9, .beta2 = 0.99, .eps = 1e-8};
    CHECK_ERR(cg_adam_step(2, params, (cg_tensor *[]){g0, g1ok}, m, v, NULL, st, &ao) != CG_OK, CG_ERR_SHAPE,
              "[adam] parameter 1: exp_avg");
    ao.decoupled_weight_decay = true;
    CHECK_ERR(cg_adam_step(2, params, (cg_tensor *[]){g0, g1ok}, m, v, NULL, st, &ao) != CG_OK, CG_ERR_SHAPE,
              "[adamw] parameter 1");
    CHECK(tt_get(st[0], 0) == 0); /* steps untouched on error */
    ao.amsgrad = true;
    CHECK_ERR(cg_adam_step(1, params, &g0, m, v, NULL, st, &ao) != CG_OK, CG_ERR_VALUE, "NULL");
    CHECK_ERR(cg_rmsprop_step(1, params, &g0, (cg_tensor *[]){p1}, NULL, NULL, st,
                              &(cg_rmsprop_options){.lr = 0.1, .alpha = 0.9}) != CG_OK,
              CG_ERR_SHAPE, "[rmsprop] parameter 0: square_avg");
    CHECK_ERR(cg_adagrad_step(1, params, &g0, m, (cg_tensor *[]){p0}, &(cg_adagrad_options){.lr = 0.1}) != CG_OK,
              CG_ERR_SHAPE, "[adagrad] parameter 0: step");
    for (int k = 0; k < 2; k++) cg_tensor_release(m[k]), cg_tensor_release(v[k]), cg_tensor_release(st[k]);
    cg_tensor_release(p0), cg_tensor_release(p1), cg_tensor_release(g0), cg_tensor_release(g1);
    cg_tensor_release(g1d), cg_tensor_release(g1ok), cg_tensor_release(pi);
}

TEST(optim_adadelta_trajectories) {
    const cg_adadelta_options base = {.lr = 1.0, .rho = 0.9, .eps = 1e-6};
    opt_cfg c[5];
    for (int i = 0; i < 5; i++) c[i] = (opt_cfg){.kind = K_ADADELTA, .adadelta = base};
    c[1].adadelta.lr = 0.5, c[1].adadelta.rho = 0.5, c[1].adadelta.eps = 1e-4;
    c[2].adadelta.weight_decay = 0.1;
    c[3].adadelta.maximize = true;
    c[4].adadelta.weight_decay = 0.05, c[4].adadelta.maximize = true, c[4].adadelta.rho = 0.7;
    run_all(c, 5, "adadelta");
}

TEST(optim_adamax_trajectories) {
    const cg_adamax_options base = {.lr = 0.01, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8};
    opt_cfg c[5];
    for (int i = 0; i < 5; i++) c[i] = (opt_cfg){.kind = K_ADAMAX, .adamax = base};
    c[1].adamax.beta1 = 0.3, c[1].adamax.beta2 = 0.5, c[1].adamax.eps = 1e-3; /* lerp weight >= 0.5 */
    c[2].adamax.weight_decay = 0.1;
    c[3].adamax.maximize = true;
    c[4].adamax.weight_decay = 0.05, c[4].adamax.maximize = true, c[4].adamax.beta1 = 0.5;
    run_all(c, 5, "adamax");
}

TEST(optim_nadam_trajectories) {
    const cg_nadam_options base = {.lr = 0.01, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .momentum_decay = 4e-3};
    opt_cfg c[7];
    for (int i = 0; i < 7; i++) c[i] = (opt_cfg){.kind = K_NADAM, .nadam = base};
    c[1].nadam.momentum_decay = 0.1, c[1].nadam.beta1 = 0.3, c[1].nadam.beta2 = 0.9;
    c[2].nadam.weight_decay = 0.1;
    c[3].nadam.weight_decay = 0.1, c[3].nadam.decoupled_weight_decay = true;
    c[4].nadam.maximize = true;
    c[5].nadam.decoupled_weight_decay = true; /* without weight decay: nothing to decouple */
    c[6].nadam.weight_decay = 0.05, c[6].nadam.decoupled_weight_decay = true, c[6].nadam.maximize = true;
    run_all(c, 7, "nadam");
}

TEST(optim_radam_trajectories) {
    /* beta2 0.999 rectifies from step 6 on, 0.6 never (rho_inf = 4), 0.9 from step 2 */
    const cg_radam_options base = {.lr = 0.01, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8};
    opt_cfg c[7];
    for (int i = 0; i < 7; i++) c[i] = (opt_cfg){.kind = K_RADAM, .radam = base};
    c[1].radam.beta1 = 0.5, c[1].radam.beta2 = 0.6;
    c[2].radam.beta1 = 0.3, c[2].radam.beta2 = 0.9, c[2].radam.eps = 1e-3;
    c[3].radam.weight_decay = 0.1;
    c[4].radam.weight_decay = 0.1, c[4].radam.decoupled_weight_decay = true;
    c[5].radam.maximize = true, c[5].radam.beta2 = 0.9;
    c[6].radam.weight_decay = 0.05, c[6].radam.decoupled_weight_decay = true, c[6].radam.maximize = true;
    run_all(c, 7, "radam");
}

TEST(optim_rprop_trajectories) {
    const cg_rprop_options base = {.etaminus = 0.5, .etaplus = 1.2, .step_size_min = 1e-6, .step_size_max = 50};
    opt_cfg c[4];
    for (int i = 0; i < 4; i++) c[i] = (opt_cfg){.kind = K_RPROP, .rprop = base, .init_acc = 0.01};
    c[1].rprop.etaminus = 0.3, c[1].rprop.etaplus = 1.5, c[1].rprop.step_size_min = 1e-3,
    c[1].rprop.step_size_max = 0.2, c[1].init_acc = 0.05; /* both clamps reached */
    c[2].rprop.maximize = true;
    c[3].rprop.maximize = true, c[3].rprop.step_size_min = 5e-3, c[3].init_acc = 0.02;
    run_all(c, 4, "rprop");
}

TEST(optim_asgd_trajectories) {
    /* t0 = 1e6: ax copies the parameter; a small t0 averages from step t0 + 2 on */
    const cg_asgd_options base = {.lr = 0.01, .lambd = 1e-4, .alpha = 0.75, .t0 = 1e6};
    opt_cfg c[5];
    for (int i = 0; i < 5; i++) c[i] = (opt_cfg){.kind = K_ASGD, .asgd = base};
    c[1].asgd.lr = 0.05, c[1].asgd.lambd = 1e-2, c[1].asgd.alpha = 0.5, c[1].asgd.t0 = 5;
    c[2].asgd.weight_decay = 0.1;
    c[3].asgd.maximize = true, c[3].asgd.t0 = 3;
    c[4].asgd.lr = 0.05, c[4].asgd.t0 = 3, c[4].asgd.weight_decay = 0.1, c[4].asgd.maximize = true;
    run_all(c, 5, "asgd");
}

/* ------------------------------------------------------------- hand-computed steps */

static cg_tensor *vec64(int64_t n, const double *v) { return tt_tensor(CG_DTYPE_F64, 1, (int64_t[]){n}, v); }
static cg_tensor *zeros64(int64_t n) { return cg_zeros(1, (int64_t[]){n}, CG_DTYPE_F64, cg_cpu()); }

TEST(optim_adadelta_adamax_values) {
    cg_tensor *p = vec64(2, (double[]){1, -2}), *g = vec64(2, (double[]){0.5, 1});
    cg_tensor *sa = cg_zeros_like(p), *ad = cg_zeros_like(p), *st = cg_scalar(0, CG_DTYPE_F32);
    cg_adadelta_options o = {.lr = 1, .rho = 0.9, .eps = 1e-6};
    CHECK_OK(cg_adadelta_step(1, &p, &g, &sa, &ad, &st, &o));
    /* first step: square_avg = 0.1 g^2, delta = sqrt(eps) / sqrt(square_avg + eps) * g */
    double d0 = 1e-3 / sqrt(0.025 + 1e-6) * 0.5, d1 = 1e-3 / sqrt(0.1 + 1e-6);
    CHECK_NEAR(tt_get(sa, 0), 0.025, 1e-15);
    CHECK_NEAR(tt_get(p, 0), 1 - d0, 1e-15);
    CHECK_NEAR(tt_get(p, 1), -2 - d1, 1e-15);
    CHECK_NEAR(tt_get(ad, 1), 0.1 * d1 * d1, 1e-15);
    CHECK(tt_get(st, 0) == 1);

    cg_tensor *q = vec64(2, (double[]){1, -2}), *h = vec64(2, (double[]){0.5, -1});
    cg_tensor *m = cg_zeros_like(q), *u = cg_zeros_like(q), *st2 = cg_scalar(0, CG_DTYPE_F32);
    cg_adamax_options ao = {.lr = 0.1, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .weight_decay = 0.1};
    CHECK_OK(cg_adamax_step(1, &q, &h, &m, &u, &st2, &ao));
    /* grad + 0.1 p = (0.6, -1.2); exp_avg = 0.1 grad, exp_inf = |grad| + eps; lr / (1 - beta1) = 1 */
    CHECK_NEAR(tt_get(m, 1), -0.12, 1e-15);
    CHECK_NEAR(tt_get(u, 0), 0.6 + 1e-8, 1e-15);
    CHECK_NEAR(tt_get(q, 0), 1 - 0.06 / (0.6 + 1e-8), 1e-14);
    CHECK_NEAR(tt_get(q, 1), -2 + 0.12 / (1.2 + 1e-8), 1e-14);
    cg_tensor *all[] = {p, g, sa, ad, st, q, h, m, u, st2};
    for (int k = 0; k < 10; k++) cg_tensor_release(all[k]);
}

TEST(optim_nadam_radam_values) {
    cg_tensor *p = vec64(1, (double[]){1}), *g = vec64(1, (double[]){0.5});
    cg_tensor *m = cg_zeros_like(p), *v = cg_zeros_like(p), *st = cg_scalar(0, CG_DTYPE_F32);
    cg_tensor *mp = cg_scalar(1, CG_DTYPE_F32);
    cg_nadam_options o = {.lr = 0.1, .beta1 = 0.9, .beta2 = 0.99, .eps = 1e-8, .momentum_decay = 4e-3,
                          .weight_decay = 0.1, .decoupled_weight_decay = true};
    CHECK_OK(cg_nadam_step(1, &p, &g, &m, &v, &mp, &st, &o));
    /* p *= 1 - lr wd; exp_avg 0.05, exp_avg_sq 0.0025, denom sqrt(0.0025 / 0.01) + eps */
    double mu = 0.9 * (1 - 0.5 * pow(0.96, 0.004)), mu1 = 0.9 * (1 - 0.5 * pow(0.96, 0.008));
    double mpf = (float)mu, denom = 0.5 + 1e-8;
    double want = 0.99 - 0.1 * (1 - mu) / (1 - mpf) * 0.5 / denom - 0.1 * mu1 / (1 - mpf * mu1) * 0.05 / denom;
    CHECK(tt_get(mp, 0) == mpf); /* mu_product keeps its float32 dtype */
    CHECK_NEAR(tt_get(p, 0), want, 1e-14);
    CHECK_NEAR(tt_get(v, 0), 0.0025, 1e-16);

    /* RAdam's first step: rho_t = 1, no rectification: p -= lr * exp_avg / (1 - beta1) = lr * grad */
    cg_tensor *q = vec64(2, (double[]){1, -2}), *h = vec64(2, (double[]){0.5, -1});
    cg_tensor *m2 = cg_zeros_like(q), *v2 = cg_zeros_like(q), *st2 = cg_scalar(0, CG_DTYPE_F32);
    cg_radam_options ro = {.lr = 0.1, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .maximize = true};
    CHECK_OK(cg_radam_step(1, &q, &h, &m2, &v2, &st2, &ro));
    CHECK_NEAR(tt_get(q, 0), 1.05, 1e-15);
    CHECK_NEAR(tt_get(q, 1), -2.1, 1e-15);
    CHECK_NEAR(tt_get(m2, 1), 0.1, 1e-15);
    cg_tensor *all[] = {p, g, m, v, st, mp, q, h, m2, v2, st2};
    for (int k = 0; k < 11; k++) cg_tensor_release(all[k]);
}

TEST(optim_rprop_asgd_values) {
    cg_tensor *p = vec64(3, (double[]){1, 1, 1}), *prev = zeros64(3), *size = filled(p, 0.1);
    cg_tensor *st = cg_scalar(0, CG_DTYPE_F32);
    cg_rprop_options o = {.etaminus = 0.5, .etaplus = 1.2, .step_size_min = 1e-6, .step_size_max = 50};
    cg_tensor *g = vec64(3, (double[]){0.5, -1, 0});
    CHECK_OK(cg_rprop_step(1, &p, &g, &prev, &size, &st, &o)); /* prev 0: factor 1 */
    cg_tensor_release(g);
    g = vec64(3, (double[]){0.2, 0.3, 0.4}); /* same sign, flipped, after a zero */
    CHECK_OK(cg_rprop_step(1, &p, &g, &prev, &size, &st, &o));
    const double want_p[3] = {0.9 - 0.12, 1.1, 1 - 0.1}, want_size[3] = {0.12, 0.05, 0.1}, want_prev[3] = {0.2, 0, 0.4};
    for (int i = 0; i < 3; i++) {
        CHECK_NEAR(tt_get(p, i), want_p[i], 1e-15);
        CHECK_NEAR(tt_get(size, i), want_size[i], 1e-15);
        CHECK_NEAR(tt_get(prev, i), want_prev[i], 0);
    }
    CHECK(tt_get(st, 0) == 2);
    cg_tensor_release(g);

    /* ASGD with t0 = 0: mu = 1 for two steps (ax copies p), then 1/2 (ax averages) */
    cg_tensor *q = vec64(2, (double[]){1, -2}), *h = vec64(2, (double[]){0.5, 1}), *ax = zeros64(2);
    cg_tensor *mu = cg_scalar(1, CG_DTYPE_F32), *eta = cg_scalar(0.1, CG_DTYPE_F32), *st2 = cg_scalar(0, CG_DTYPE_F32);
    cg_asgd_options ao = {.lr = 0.1, .lambd = 0.01, .alpha = 0.75, .t0 = 0};
    double want[2] = {1, -2}, e = (float)0.1, prev_q[2] = {0};
    for (int s = 1; s <= 3; s++) {
        CHECK_OK(cg_asgd_step(1, &q, &h, &ax, &mu, &eta, &st2, &ao));
        for (int i = 0; i < 2; i++) prev_q[i] = want[i], want[i] = want[i] * (1 - 0.01 * e) - e * (i ? 1 : 0.5);
        e = (float)(0.1 / pow(1 + 0.001 * s, 0.75));
        CHECK(tt_get(eta, 0) == e);
        CHECK(tt_get(mu, 0) == (float)(1.0 / s));
    }
    for (int i = 0; i < 2; i++) {
        CHECK_NEAR(tt_get(q, i), want[i], 1e-15);
        CHECK_NEAR(tt_get(ax, i), (prev_q[i] + want[i]) / 2, 1e-15);
    }
    cg_tensor *all[] = {p, prev, size, st, q, h, ax, mu, eta, st2};
    for (int k = 0; k < 10; k++) cg_tensor_release(all[k]);
}

/* ------------------------------------------------------------- errors and empty parameters
 * One call of each optimizer added with the element-wise group (default options): its two
 * state lists a, b and its one-element states sc1 (mu_product / mu), sc2 (eta). */

static const opt_kind k_more[] = {K_ADADELTA, K_ADAMAX, K_NADAM, K_RADAM, K_RPROP, K_ASGD};
static const char *const k_more_names[] = {"adadelta", "adamax", "nadam", "radam", "rprop", "asgd"};

static cg_status step_more(opt_kind k, int64_t n, cg_tensor **p, cg_tensor **g, cg_tensor **a, cg_tensor **b,
                           cg_tensor **sc1, cg_tensor **sc2, cg_tensor **steps) {
    switch (k) {
    case K_ADADELTA: return cg_adadelta_step(n, p, g, a, b, steps, &(cg_adadelta_options){1, 0.9, 1e-6, 0, false});
    case K_ADAMAX:
        return cg_adamax_step(n, p, g, a, b, steps, &(cg_adamax_options){.lr = 0.01, .beta1 = 0.9, .beta2 = 0.99});
    case K_NADAM:
        return cg_nadam_step(n, p, g, a, b, sc1, steps,
                             &(cg_nadam_options){.lr = 0.01, .beta1 = 0.9, .beta2 = 0.99, .momentum_decay = 4e-3});
    case K_RADAM:
        return cg_radam_step(n, p, g, a, b, steps, &(cg_radam_options){.lr = 0.01, .beta1 = 0.9, .beta2 = 0.99});
    case K_RPROP: return cg_rprop_step(n, p, g, a, b, steps, &(cg_rprop_options){0.5, 1.2, 1e-6, 50, false});
    case K_ASGD:
        return cg_asgd_step(n, p, g, a, sc1, sc2, steps, &(cg_asgd_options){.lr = 0.01, .lambd = 1e-4, .alpha = 0.75});
    default: return CG_ERR_VALUE;
    }
}

TEST(optim_more_errors_write_nothing) {
    int64_t s2[1] = {2}, s3[1] = {3};
    for (int q = 0; q < 6; q++) {
        opt_kind k = k_more[q];
        const char *name = k_more_names[q];
        cg_tensor *p[2] = {tt_rand(CG_DTYPE_F32, 1, s2, -1, 1, 1), tt_rand(CG_DTYPE_F32, 1, s3, -1, 1, 2)};
        cg_tensor *g[2] = {tt_rand(CG_DTYPE_F32, 1, s2, -1, 1, 3), tt_rand(CG_DTYPE_F32, 1, s3, -1, 1, 4)};
        cg_tensor *a[2] = {filled(p[0], 0.5), filled(p[1], 0.5)}, *b[2] = {filled(p[0], 0.5), filled(p[0], 0.5)};
        cg_tensor *sc1[2] = {cg_scalar(1, CG_DTYPE_F32), cg_scalar(1, CG_DTYPE_F32)};
        cg_tensor *sc2[2] = {cg_scalar(0.01, CG_DTYPE_F32), cg_scalar(0.01, CG_DTYPE_F32)};
        cg_tensor *steps[2] = {cg_scalar(0, CG_DTYPE_F32), cg_scalar(0, CG_DTYPE_F32)};
        double p00 = tt_get(p[0], 0);
        uint64_t v0 = cg_tensor_version(p[0]);
        char msg[64];
        bool two_states = k != K_ASGD;
        if (two_states) {
            /* b[1] has parameter 0's shape: the second parameter fails, the first is untouched */
            snprintf(msg, sizeof msg, "[%s] parameter 1: ", name);
            CHECK_ERR(step_more(k, 2, p, g, a, b, sc1, sc2, steps) != CG_OK, CG_ERR_SHAPE, msg);
        }
        cg_tensor *g64 = tt_rand(CG_DTYPE_F64, 1, s3, -1, 1, 5), *gd[2] = {g[0], g64};
        CHECK_ERR(step_more(k, 2, p, gd, a, (cg_tensor *[]){b[0], a[1]}, sc1, sc2, steps) != CG_OK, CG_ERR_DTYPE,
                  "float64");
        CHECK_ERR(step_more(k, 2, p, g, NULL, b, sc1, sc2, steps) != CG_OK, CG_ERR_VALUE, "a state list is NULL");
        cg_tensor *two = filled(p[0], 0), *ints = cg_scalar(1, CG_DTYPE_I64);
        cg_tensor *fixed_b[2] = {b[0], a[1]};
        CHECK_ERR(step_more(k, 2, p, g, a, fixed_b, sc1, sc2, (cg_tensor *[]){steps[0], two}) != CG_OK, CG_ERR_SHAPE,
                  "step must be a one-element cpu tensor");
        if (k == K_NADAM || k == K_ASGD) {
            const char *what = k == K_NADAM ? "mu_product" : "mu";
            snprintf(msg, sizeof msg, "%s must be a one-element", what);
            CHECK_ERR(step_more(k, 2, p, g, a, fixed_b, (cg_tensor *[]){sc1[0], two}, sc2, steps) != CG_OK,
                      CG_ERR_SHAPE, msg);
            snprintf(msg, sizeof msg, "%s has dtype int64", what);
            CHECK_ERR(step_more(k, 2, p, g, a, fixed_b, (cg_tensor *[]){sc1[0], ints}, sc2, steps) != CG_OK,
                      CG_ERR_DTYPE, msg);
        }
        if (k == K_ASGD)
            CHECK_ERR(step_more(k, 2, p, g, a, fixed_b, sc1, (cg_tensor *[]){sc2[0], NULL}, steps) != CG_OK,
                      CG_ERR_VALUE, "eta of parameter 1 is NULL");
        /* nothing was written by any failed call */
        CHECK_MSG(tt_get(p[0], 0) == p00 && cg_tensor_version(p[0]) == v0, "%s: parameter written", name);
        CHECK_MSG(tt_get(a[0], 0) == 0.5 && tt_get(b[0], 0) == 0.5, "%s: state written", name);
        CHECK_MSG(tt_get(steps[0], 0) == 0 && tt_get(sc1[0], 0) == 1 && tt_get(sc2[0], 0) == (float)0.01,
                  "%s: one-element state written", name);
        /* and the group runs once fixed */
        CHECK_OK(step_more(k, 2, p, g, a, fixed_b, sc1, sc2, steps));
        CHECK(tt_get(steps[1], 0) == 1 && cg_tensor_version(p[0]) > v0);
        cg_tensor *all[] = {p[0], p[1], g[0], g[1], a[0], a[1], b[0], b[1], sc1[0], sc1[1], sc2[0], sc2[1],
                            steps[0], steps[1], g64, two, ints};
        for (int i = 0; i < 17; i++) cg_tensor_release(all[i]);
    }
}

TEST(optim_more_empty_params) {
    /* a 0-element parameter counts its step and leaves everything else alone; n = 0 is a no-op */
    int64_t s0[2] = {2, 0}, s4[1] = {4};
    for (int q = 0; q < 6; q++) {
        opt_kind k = k_more[q];
        cg_tensor *p[2] = {cg_zeros(2, s0, CG_DTYPE_F32, cg_cpu()), tt_rand(CG_DTYPE_F32, 1, s4, -1, 1, 7)};
        cg_tensor *g[2] = {cg_zeros(2, s0, CG_DTYPE_F32, cg_cpu()), tt_rand(CG_DTYPE_F32, 1, s4, -1, 1, 8)};
        cg_tensor *a[2] = {cg_zeros_like(p[0]), filled(p[1], 0.01)}, *b[2] = {cg_zeros_like(p[0]), filled(p[1], 0.01)};
        cg_tensor *sc1[2] = {cg_scalar(1, CG_DTYPE_F32), cg_scalar(1, CG_DTYPE_F32)};
        cg_tensor *sc2[2] = {cg_scalar(0.01, CG_DTYPE_F32), cg_scalar(0.01, CG_DTYPE_F32)};
        cg_tensor *steps[2] = {cg_scalar(0, CG_DTYPE_F32), cg_scalar(0, CG_DTYPE_F32)};
        double before[4];
        for (int i = 0; i < 4; i++) before[i] = tt_get(p[1], i);
        CHECK_OK(step_more(k, 2, p, g, a, b, sc1, sc2, steps));
        CHECK_MSG(tt_get(steps[0], 0) == 1 && tt_get(steps[1], 0) == 1, "%s: steps", k_more_names[q]);
        int moved = 0;
        for (int i = 0; i < 4; i++) moved += tt_get(p[1], i) != before[i];
        CHECK_MSG(moved > 0, "%s: the non-empty parameter did not move", k_more_names[q]);
        CHECK_OK(step_more(k, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
        cg_tensor *all[] = {p[0], p[1], g[0], g[1], a[0], a[1], b[0], b[1], sc1[0], sc1[1], sc2[0], sc2[1],
                            steps[0], steps[1]};
        for (int i = 0; i < 14; i++) cg_tensor_release(all[i]);
    }
}
