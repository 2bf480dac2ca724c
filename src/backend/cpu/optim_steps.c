/* optim_steps.c — the CPU's optimizer-step entries (Note [Kernel entries]):
 * the fused element loops of SGD, Adam / AdamW, RMSprop and Adagrad over one
 * parameter's flat operands, split across the thread pool, and GradScaler's
 * unscale-and-check loop. The element formulas follow PyTorch's single-tensor
 * optimizers operation by operation (same operand order, scalars rounded to
 * the compute type the way PyTorch's kernels round them), so trajectories
 * match. */
#include "cpu_kernels.h"

#include <math.h>

#define OPT_GRAIN 32768

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
    char *d[CG_OPTIM_OPERANDS];
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

cg_status cg_cpu_optim_step(cg_optim_kind kind, cg_tensor *const *t, const double *s, bool first, const void *opt) {
    static const opt_kernels *const by_kind[] = {
        [CG_OPTIM_SGD] = &k_sgd, [CG_OPTIM_ADAM] = &k_adam, [CG_OPTIM_RMSPROP] = &k_rmsprop,
        [CG_OPTIM_ADAGRAD] = &k_adagrad};
    opt_job job = {.dt = t[0]->dtype, .first = first, .opt = opt};
    for (int k = 0; k < 4; k++) job.s[k] = s[k];
    for (int q = 0; q < CG_OPTIM_OPERANDS; q++) job.d[q] = t[q] ? cg_tensor_ptr(t[q]) : NULL;
    opt_run r = {pick(by_kind[kind], job.dt), &job};
    cg_parallel_for(cg_tensor_numel(t[0]), OPT_GRAIN, opt_range, &r);
    return CG_OK;
}

/* ---- GradScaler's unscale (src/optim/amp_unscale.c) */

/* Scale x[0..n) by s in place; true when an element (before scaling) is not finite. */
#define UNSCALE_LOOP(name, T, LD, ST)                                    \
    static bool name(void *p, int64_t n, float s) {                      \
        T *x = p;                                                        \
        int bad = 0;                                                     \
        for (int64_t i = 0; i < n; i++) {                                \
            float v = LD(x[i]);                                          \
            bad |= !(v - v == 0.0f); /* inf - inf and NaN are NaN */     \
            x[i] = ST(v * s);                                            \
        }                                                                \
        return bad != 0;                                                 \
    }
#define ID(v) (v)
UNSCALE_LOOP(unscale_f32, float, ID, ID)
UNSCALE_LOOP(unscale_f16, cg_f16, cg_f16_to_f32, cg_f32_to_f16)
UNSCALE_LOOP(unscale_bf16, cg_bf16, cg_bf16_to_f32, cg_f32_to_bf16)

static bool unscale_f64(void *p, int64_t n, float s) {
    double *x = p;
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        bad |= !(x[i] - x[i] == 0.0);
        x[i] *= (double)s;
    }
    return bad != 0;
}

static bool unscale_flat(const cg_tensor *t, float s) {
    int64_t n = cg_tensor_numel(t);
    void *p = cg_tensor_ptr(t);
    switch (t->dtype) {
    case CG_DTYPE_F32: return unscale_f32(p, n, s);
    case CG_DTYPE_F64: return unscale_f64(p, n, s);
    case CG_DTYPE_F16: return unscale_f16(p, n, s);
    default: return unscale_bf16(p, n, s);
    }
}

cg_status cg_cpu_amp_unscale(cg_tensor *x, float inv_scale, bool *found_inf) {
    if (unscale_flat(x, inv_scale)) *found_inf = true;
    return CG_OK;
}
