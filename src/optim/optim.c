/* optim.c — fused optimizer steps (SGD, Adam / AdamW, RMSprop, Adagrad):
 * one call updates a whole parameter group in place, without autograd, each
 * parameter in one pass over its elements (Note [Fused optimizer steps] in
 * cgrad.h). The element formulas follow PyTorch's single-tensor optimizers
 * operation by operation (same operand order, scalars rounded to the compute
 * type the way PyTorch's kernels round them), so trajectories match.
 *
 * Note [Optimizer staging]: the kernels read and write flat contiguous
 * arrays. A tensor that is not contiguous (a strided grad, a transposed leaf
 * and the contiguous state created for it) is staged: copied to a contiguous
 * temporary before the kernel and, when the kernel writes it, copied back
 * afterwards. Both copies run with grad mode off; they are the rare path. */
#include "../backend/backend.h"

#include <math.h>
#include <string.h>

#define OPT_GRAIN 32768
#define OPT_MAX_OPERANDS 6 /* param, grad and up to four state tensors */

/* ------------------------------------------------------------- element access */

static inline float ld_f32(const void *p, int64_t i) { return ((const float *)p)[i]; }
static inline double ld_f64(const void *p, int64_t i) { return ((const double *)p)[i]; }
static inline float ld_f16(const void *p, int64_t i) { return cg_f16_to_f32(((const cg_f16 *)p)[i]); }
static inline float ld_bf16(const void *p, int64_t i) { return cg_bf16_to_f32(((const cg_bf16 *)p)[i]); }
static inline void st_f32(void *p, int64_t i, float v) { ((float *)p)[i] = v; }
static inline void st_f64(void *p, int64_t i, double v) { ((double *)p)[i] = v; }
static inline void st_f16(void *p, int64_t i, float v) { ((cg_f16 *)p)[i] = cg_f32_to_f16(v); }
static inline void st_bf16(void *p, int64_t i, float v) { ((cg_bf16 *)p)[i] = cg_f32_to_bf16(v); }
static inline float sqrt_f32(float x) { return sqrtf(x); }
static inline double sqrt_f64(double x) { return sqrt(x); }

/* X(suffix, compute type, sqrt suffix) for every supported storage dtype */
#define OPT_DTYPES(X) X(f32, float, f32) X(f64, double, f64) X(f16, float, f32) X(bf16, float, f32)

/* One parameter's update: flat data pointers (d[0] param, d[1] grad, then the
 * optimizer's states in its argument order; NULL when unused), the
 * per-parameter scalars and the options. */
typedef struct opt_job {
    cg_dtype dt;
    char *d[OPT_MAX_OPERANDS];
    double s[4];
    bool first; /* SGD: the momentum buffer is new */
    const void *opt;
} opt_job;

/* PyTorch's lerp with a scalar weight w (in the compute type T) computes
 * a + w (b - a) when |w| < 0.5, else b - (b - a) (1 - w). */
#define LERP_LOW(T, w) ((T)(w) < (T)0.5 && (T)(w) > (T)-0.5)

/* Note [Specialised loops]: a loop testing several loop-invariant options
 * per element does not vectorise (the compiler stops unswitching), so the
 * SGD, Adam and RMSprop bodies are always-inline functions of an option
 * bitmask and the float32 / float64 kernels switch once per chunk to one
 * instantiation per mask value, each a straight vectorisable loop. The half
 * types convert element by element anyway and take the mask at run time. */
#define OPT_INLINE static inline __attribute__((always_inline))
#define OPT_C1(fn, n) \
    case (n): fn(b, e, j, (n)); break;
#define OPT_C2(fn, n) OPT_C1(fn, n) OPT_C1(fn, (n) + 1)
#define OPT_C4(fn, n) OPT_C2(fn, n) OPT_C2(fn, (n) + 2)
#define OPT_C8(fn, n) OPT_C4(fn, n) OPT_C4(fn, (n) + 4)
#define OPT_C16(fn, n) OPT_C8(fn, n) OPT_C8(fn, (n) + 8)
#define OPT_C32(fn, n) OPT_C16(fn, n) OPT_C16(fn, (n) + 16)
/* f32 / f64: one instantiation per mask; f16 / bf16: the mask at run time */
#define OPT_DISPATCH_f32(fn, f) switch (f) { OPT_C32(fn, 0u) default: CG_ASSERT(0); }
#define OPT_DISPATCH_f64(fn, f) OPT_DISPATCH_f32(fn, f)
#define OPT_DISPATCH_f16(fn, f) fn(b, e, j, f);
#define OPT_DISPATCH_bf16(fn, f) fn(b, e, j, f);

/* ------------------------------------------------------------- SGD */

enum { SGD_MAX = 1, SGD_WD = 2, SGD_MOM = 4, SGD_NESTEROV = 8, SGD_FIRST = 16 };

#define DEFINE_SGD(sfx, T, sq)                                                                 \
    OPT_INLINE void sgd_body_##sfx(int64_t b, int64_t e, const opt_job *j, unsigned f) {       \
        const cg_sgd_options *o = j->opt;                                                      \
        char *restrict p = j->d[0], *restrict bf = j->d[2];                                    \
        const char *restrict g = j->d[1];                                                      \
        const T wd = (T)o->weight_decay, mom = (T)o->momentum, damp = (T)(1.0 - o->dampening); \
        const T nlr = (T)(-o->lr);                                                             \
        for (int64_t i = b; i < e; i++) {                                                      \
            T gi = ld_##sfx(g, i), pi = ld_##sfx(p, i);                                        \
            if (f & SGD_MAX) gi = -gi;                                                         \
            if (f & SGD_WD) gi = gi + wd * pi;                                                 \
            if (f & SGD_MOM) {                                                                 \
                T bi = (f & SGD_FIRST) ? gi : ld_##sfx(bf, i) * mom + damp * gi;               \
                st_##sfx(bf, i, bi);                                                           \
                gi = (f & SGD_NESTEROV) ? gi + mom * bi : bi;                                  \
            }                                                                                  \
            st_##sfx(p, i, pi + nlr * gi);                                                     \
        }                                                                                      \
    }                                                                                          \
    static void sgd_##sfx(int64_t b, int64_t e, const opt_job *j) {                            \
        const cg_sgd_options *o = j->opt;                                                      \
        unsigned f = (o->maximize ? SGD_MAX : 0u) | (o->weight_decay != 0 ? SGD_WD : 0u) |     \
                     (o->momentum != 0 ? SGD_MOM : 0u) | (o->nesterov ? SGD_NESTEROV : 0u) |   \
                     (j->first ? SGD_FIRST : 0u);                                              \
        OPT_DISPATCH_##sfx(sgd_body_##sfx, f)                                                  \
    }
OPT_DTYPES(DEFINE_SGD)

/* ------------------------------------------------------------- Adam / AdamW
 * s[0] = -lr / bias_correction1, s[1] = sqrt(bias_correction2). */

enum { ADAM_MAX = 1, ADAM_WD = 2, ADAM_DECOUPLED = 4, ADAM_AMS = 8, ADAM_LERP_LO = 16 };

#define DEFINE_ADAM(sfx, T, sq)                                                                           \
    OPT_INLINE void adam_body_##sfx(int64_t b, int64_t e, const opt_job *j, unsigned f) {                 \
        const cg_adam_options *o = j->opt;                                                                \
        char *restrict p = j->d[0], *restrict m = j->d[2], *restrict v = j->d[3], *restrict vm = j->d[4]; \
        const char *restrict g = j->d[1];                                                                 \
        const T wd = (T)o->weight_decay, decay = (T)(1.0 - o->lr * o->weight_decay);                      \
        const T w1 = (T)(1.0 - o->beta1), w1c = (T)1 - w1, beta2 = (T)o->beta2, c2 = (T)(1.0 - o->beta2); \
        const T nss = (T)j->s[0], bc2s = (T)j->s[1], eps = (T)o->eps;                                     \
        for (int64_t i = b; i < e; i++) {                                                                 \
            T gi = ld_##sfx(g, i), pi = ld_##sfx(p, i), mi = ld_##sfx(m, i), vi = ld_##sfx(v, i);         \
            if (f & ADAM_MAX) gi = -gi;                                                                   \
            if (f & ADAM_WD) {                                                                            \
                if (f & ADAM_DECOUPLED) pi = pi * decay;                                                  \
                else gi = gi + wd * pi;                                                                   \
            }                                                                                             \
            mi = (f & ADAM_LERP_LO) ? mi + w1 * (gi - mi) : gi - (gi - mi) * w1c;                         \
            vi = vi * beta2;                                                                              \
            vi = vi + c2 * gi * gi;                                                                       \
            T d = vi;                                                                                     \
            if (f & ADAM_AMS) {                                                                           \
                T x = ld_##sfx(vm, i);                                                                    \
                x = (vi > x || vi != vi) ? vi : x;                                                        \
                st_##sfx(vm, i, x);                                                                       \
                d = x;                                                                                    \
            }                                                                                             \
            T denom = sqrt_##sq(d) / bc2s + eps;                                                          \
            st_##sfx(p, i, pi + nss * mi / denom);                                                        \
            st_##sfx(m, i, mi);                                                                           \
            st_##sfx(v, i, vi);                                                                           \
        }                                                                                                 \
    }                                                                                                     \
    static void adam_##sfx(int64_t b, int64_t e, const opt_job *j) {                                      \
        const cg_adam_options *o = j->opt;                                                                \
        unsigned f = (o->maximize ? ADAM_MAX : 0u) | (o->weight_decay != 0 ? ADAM_WD : 0u) |              \
                     (o->decoupled_weight_decay ? ADAM_DECOUPLED : 0u) | (o->amsgrad ? ADAM_AMS : 0u) |   \
                     (LERP_LOW(T, 1.0 - o->beta1) ? ADAM_LERP_LO : 0u);                                   \
        OPT_DISPATCH_##sfx(adam_body_##sfx, f)                                                            \
    }
OPT_DTYPES(DEFINE_ADAM)

/* ------------------------------------------------------------- RMSprop */

enum { RMS_MAX = 1, RMS_WD = 2, RMS_MOM = 4, RMS_CENTERED = 8, RMS_LERP_LO = 16 };

#define DEFINE_RMSPROP(sfx, T, sq)                                                                          \
    OPT_INLINE void rmsprop_body_##sfx(int64_t b, int64_t e, const opt_job *j, unsigned f) {                \
        const cg_rmsprop_options *o = j->opt;                                                               \
        char *restrict p = j->d[0], *restrict sa = j->d[2], *restrict bf = j->d[3], *restrict ga = j->d[4]; \
        const char *restrict g = j->d[1];                                                                   \
        const T wd = (T)o->weight_decay, alpha = (T)o->alpha, c1 = (T)(1.0 - o->alpha), c1c = (T)1 - c1;   \
        const T eps = (T)o->eps, mom = (T)o->momentum, nlr = (T)(-o->lr);                                   \
        for (int64_t i = b; i < e; i++) {                                                                   \
            T gi = ld_##sfx(g, i), pi = ld_##sfx(p, i), si = ld_##sfx(sa, i);                               \
            if (f & RMS_MAX) gi = -gi;                                                                      \
            if (f & RMS_WD) gi = gi + wd * pi;                                                              \
            si = si * alpha;                                                                                \
            si = si + c1 * gi * gi;                                                                         \
            st_##sfx(sa, i, si);                                                                            \
            T avg;                                                                                          \
            if (f & RMS_CENTERED) {                                                                         \
                T gai = ld_##sfx(ga, i);                                                                    \
                gai = (f & RMS_LERP_LO) ? gai + c1 * (gi - gai) : gi - (gi - gai) * c1c;                    \
                st_##sfx(ga, i, gai);                                                                       \
                avg = sqrt_##sq(si + (T)-1 * gai * gai);                                                    \
            } else {                                                                                        \
                avg = sqrt_##sq(si);                                                                        \
            }                                                                                               \
            avg = avg + eps;                                                                                \
            if (f & RMS_MOM) {                                                                              \
                T bi = ld_##sfx(bf, i) * mom;                                                               \
                bi = bi + (T)1 * gi / avg;                                                                  \
                st_##sfx(bf, i, bi);                                                                        \
                pi = pi + nlr * bi;                                                                         \
            } else {                                                                                        \
                pi = pi + nlr * gi / avg;                                                                   \
            }                                                                                               \
            st_##sfx(p, i, pi);                                                                             \
        }                                                                                                   \
    }                                                                                                       \
    static void rmsprop_##sfx(int64_t b, int64_t e, const opt_job *j) {                                     \
        const cg_rmsprop_options *o = j->opt;                                                               \
        unsigned f = (o->maximize ? RMS_MAX : 0u) | (o->weight_decay != 0 ? RMS_WD : 0u) |                  \
                     (o->momentum > 0 ? RMS_MOM : 0u) | (o->centered ? RMS_CENTERED : 0u) |                 \
                     (LERP_LOW(T, 1.0 - o->alpha) ? RMS_LERP_LO : 0u);                                    \
        OPT_DISPATCH_##sfx(rmsprop_body_##sfx, f)                                                           \
    }
OPT_DTYPES(DEFINE_RMSPROP)

/* ------------------------------------------------------------- Adagrad
 * s[0] = -lr / (1 + (step - 1) * lr_decay). */

#define DEFINE_ADAGRAD(sfx, T, sq)                                           \
    static void adagrad_##sfx(int64_t b, int64_t e, const opt_job *j) {      \
        const cg_adagrad_options *o = j->opt;                                \
        char *restrict p = j->d[0], *restrict ss = j->d[2];                  \
        const char *restrict g = j->d[1];                                    \
        const T wd = (T)o->weight_decay, eps = (T)o->eps, nclr = (T)j->s[0]; \
        const bool has_wd = o->weight_decay != 0, mx = o->maximize;          \
        for (int64_t i = b; i < e; i++) {                                    \
            T gi = ld_##sfx(g, i), pi = ld_##sfx(p, i);                      \
            if (mx) gi = -gi;                                                \
            if (has_wd) gi = gi + wd * pi;                                   \
            T si = ld_##sfx(ss, i) + (T)1 * gi * gi;                         \
            st_##sfx(ss, i, si);                                             \
            st_##sfx(p, i, pi + nclr * gi / (sqrt_##sq(si) + eps));          \
        }                                                                    \
    }
OPT_DTYPES(DEFINE_ADAGRAD)

/* ------------------------------------------------------------- dispatch */

typedef void (*opt_kernel)(int64_t b, int64_t e, const opt_job *j);
typedef struct opt_kernels { opt_kernel f32, f64, f16, bf16; } opt_kernels;

static const opt_kernels k_sgd = {sgd_f32, sgd_f64, sgd_f16, sgd_bf16};
static const opt_kernels k_adam = {adam_f32, adam_f64, adam_f16, adam_bf16};
static const opt_kernels k_rmsprop = {rmsprop_f32, rmsprop_f64, rmsprop_f16, rmsprop_bf16};
static const opt_kernels k_adagrad = {adagrad_f32, adagrad_f64, adagrad_f16, adagrad_bf16};

typedef struct opt_run {
    opt_kernel fn;
    const opt_job *job;
} opt_run;

static void opt_range(int64_t b, int64_t e, void *ctx) {
    const opt_run *r = ctx;
    r->fn(b, e, r->job);
}

static opt_kernel pick(const opt_kernels *k, cg_dtype dt) {
    switch (dt) {
    case CG_DTYPE_F32: return k->f32;
    case CG_DTYPE_F64: return k->f64;
    case CG_DTYPE_F16: return k->f16;
    case CG_DTYPE_BF16: return k->bf16;
    default: return NULL;
    }
}

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
    if (!pick(&k_sgd, p->dtype))
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
    if (cg_shape_numel(s->ndim, s->shape) != 1 || cg_is_meta(s))
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

/* Run the kernel over one parameter's operands (Note [Optimizer staging]). */
static cg_status run_one(const opt_kernels *k, opt_operands *x, opt_job *job) {
    cg_tensor *p = x->t[0];
    int64_t n = cg_shape_numel(p->ndim, p->shape);
    cg_status st = CG_OK;
    if (!cg_is_meta(p) && n > 0) {
        cg_tensor *staged[OPT_MAX_OPERANDS] = {0};
        bool prev = cg_set_grad_enabled(false);
        for (int q = 0; q < OPT_MAX_OPERANDS && !st; q++) {
            cg_tensor *t = x->t[q];
            job->d[q] = NULL;
            if (!t || !x->names[q]) continue;
            if (!cg_tensor_is_contiguous(t)) {
                staged[q] = cg_contiguous(t);
                if (!staged[q]) st = cg_last_error();
                else t = staged[q];
            }
            job->d[q] = cg_tensor_ptr(t);
        }
        if (!st) {
            opt_run r = {pick(k, p->dtype), job};
            job->dt = p->dtype;
            cg_parallel_for(n, OPT_GRAIN, opt_range, &r);
        }
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
        opt_job job = {.opt = opt, .first = mom && fresh[i]};
        st = run_one(&k_sgd, &x, &job);
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
        opt_job job = {.opt = opt, .s = {-(opt->lr / bc1), pow(bc2, 0.5)}};
        st = run_one(&k_adam, &x, &job);
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
                opt_job job = {.opt = opt};
                st = run_one(&k_rmsprop, &x, &job);
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
                opt_job job = {.opt = opt, .s = {-(opt->lr / (1.0 + (step - 1.0) * opt->lr_decay))}};
                st = run_one(&k_adagrad, &x, &job);
            }
        }
        if (st) return st;
    }
    return CG_OK;
}
