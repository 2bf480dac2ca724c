/* optim_steps.c — the CPU's optimizer-step entries (Note [Kernel entries]):
 * the fused element loops of SGD, Adam / AdamW, RMSprop, Adagrad, Adadelta,
 * Adamax, NAdam, RAdam, Rprop and ASGD over one parameter's flat operands,
 * split across the thread pool, and GradScaler's unscale-and-check loop.
 * The element formulas follow PyTorch's single-tensor optimizers operation by
 * operation (same operand order, scalars rounded to the compute type the way
 * PyTorch's kernels round them), so trajectories match to rounding: PyTorch's
 * vectorised add(alpha=), addcmul and lerp fuse a multiply-add (FMA) that
 * these loops (ISO C, no contraction) round twice, an ulp per operation. */
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
static inline float abs_f32(float x) { return fabsf(x); }
static inline double abs_f64(double x) { return fabs(x); }

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
 * a + w (b - a) when |w| < 0.5, else b - (b - a) (1 - w): LERP_LOW tells
 * which, LERP(low, a, b, w, wc) computes it with wc = 1 - w. */
#define LERP_LOW(T, w) ((T)(w) < (T)0.5 && (T)(w) > (T)-0.5)
#define LERP(low, a, b, w, wc) ((low) ? (a) + (w) * ((b) - (a)) : (b) - ((b) - (a)) * (wc))

/* torch.maximum: NaN when either is NaN, else std::max (a when equal) */
#define MAX_NAN(a, b) (((a) < (b) || (b) != (b)) ? (b) : (a))

/* Note [Specialised loops]: a loop testing several loop-invariant options
 * per element does not vectorise (the compiler stops unswitching), so the
 * optimizer bodies (all but Adagrad's) are always-inline functions of an
 * option bitmask and the float32 / float64 kernels switch once per chunk to
 * one instantiation per mask value, each a straight vectorisable loop. The
 * half types convert element by element anyway and take the mask at run
 * time. OPT_DISPATCH's last argument covers the mask's values: OPT_C<2^bits>. */
#define OPT_INLINE static inline __attribute__((always_inline))
#define OPT_C1(fn, n) \
    case (n): fn(b, e, j, (n)); break;
#define OPT_C2(fn, n) OPT_C1(fn, n) OPT_C1(fn, (n) + 1)
#define OPT_C4(fn, n) OPT_C2(fn, n) OPT_C2(fn, (n) + 2)
#define OPT_C8(fn, n) OPT_C4(fn, n) OPT_C4(fn, (n) + 4)
#define OPT_C16(fn, n) OPT_C8(fn, n) OPT_C8(fn, (n) + 8)
#define OPT_C32(fn, n) OPT_C16(fn, n) OPT_C16(fn, (n) + 16)
/* f32 / f64: one instantiation per mask; f16 / bf16: the mask at run time */
#define OPT_DISPATCH_f32(fn, f, cases) switch (f) { cases(fn, 0u) default: CG_ASSERT(0); }
#define OPT_DISPATCH_f64(fn, f, cases) OPT_DISPATCH_f32(fn, f, cases)
#define OPT_DISPATCH_f16(fn, f, cases) fn(b, e, j, f);
#define OPT_DISPATCH_bf16(fn, f, cases) fn(b, e, j, f);

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
        OPT_DISPATCH_##sfx(sgd_body_##sfx, f, OPT_C32)                                                  \
    }
OPT_DTYPES(DEFINE_SGD)

/* ------------------------------------------------------------- Adam's moments
 * Adam, NAdam and RAdam start alike: maximize, coupled or decoupled weight
 * decay, exp_avg.lerp_(grad, 1 - beta1), exp_avg_sq * beta2 + (1 - beta2)
 * grad^2. moments_<T> is that start for one element, on the constants of
 * moments_init_<T>; MOM_FLAGS its option bits, bit 16 being the optimizer's
 * own (Adam's amsgrad, RAdam's rectification). */

enum { MOM_MAX = 1, MOM_WD = 2, MOM_DECOUPLED = 4, MOM_LERP_LO = 8, MOM_OWN = 16 };

#define MOM_FLAGS(T, o)                                                                                    \
    ((o->maximize ? MOM_MAX : 0u) | (o->weight_decay != 0 ? MOM_WD : 0u) |                                 \
     (o->decoupled_weight_decay ? MOM_DECOUPLED : 0u) | (LERP_LOW(T, 1.0 - o->beta1) ? MOM_LERP_LO : 0u))

#define DEFINE_MOMENTS(sfx, T, sq)                                                                         \
    typedef struct moments_c_##sfx { T wd, decay, w1, w1c, beta2, c2; } moments_c_##sfx;                   \
    static inline moments_c_##sfx moments_init_##sfx(double lr, double beta1, double beta2, double wd) {   \
        T w1 = (T)(1.0 - beta1);                                                                           \
        return (moments_c_##sfx){(T)wd, (T)(1.0 - lr * wd), w1, (T)1 - w1, (T)beta2, (T)(1.0 - beta2)};   \
    }                                                                                                      \
    OPT_INLINE void moments_##sfx(const moments_c_##sfx *c, unsigned f, T *g, T *p, T *m, T *v) {          \
        if (f & MOM_MAX) *g = -*g;                                                                         \
        if (f & MOM_WD) {                                                                                  \
            if (f & MOM_DECOUPLED) *p = *p * c->decay;                                                     \
            else *g = *g + c->wd * *p;                                                                     \
        }                                                                                                  \
        *m = LERP(f & MOM_LERP_LO, *m, *g, c->w1, c->w1c);                                                 \
        *v = *v * c->beta2;                                                                                \
        *v = *v + c->c2 * *g * *g;                                                                         \
    }
OPT_DTYPES(DEFINE_MOMENTS)

/* One element's operands of the three: p, g, exp_avg m, exp_avg_sq v after moments_<T>. */
#define MOMENTS_LOOP_HEAD(sfx, T, o)                                                                       \
    char *restrict p = j->d[0], *restrict m = j->d[2], *restrict v = j->d[3];                              \
    const char *restrict g = j->d[1];                                                                      \
    const moments_c_##sfx mc = moments_init_##sfx(o->lr, o->beta1, o->beta2, o->weight_decay);             \
    const T eps = (T)o->eps

#define MOMENTS_ELEMENT(sfx, T)                                                                            \
    T gi = ld_##sfx(g, i), pi = ld_##sfx(p, i), mi = ld_##sfx(m, i), vi = ld_##sfx(v, i);                  \
    moments_##sfx(&mc, f, &gi, &pi, &mi, &vi);                                                             \
    st_##sfx(m, i, mi);                                                                                    \
    st_##sfx(v, i, vi)

/* ------------------------------------------------------------- Adam / AdamW
 * s[0] = -lr / bias_correction1, s[1] = sqrt(bias_correction2); MOM_OWN: amsgrad. */

#define DEFINE_ADAM(sfx, T, sq)                                                                            \
    OPT_INLINE void adam_body_##sfx(int64_t b, int64_t e, const opt_job *j, unsigned f) {                  \
        const cg_adam_options *o = j->opt;                                                                 \
        MOMENTS_LOOP_HEAD(sfx, T, o);                                                                      \
        char *restrict vm = j->d[4];                                                                       \
        const T nss = (T)j->s[0], bc2s = (T)j->s[1];                                                       \
        for (int64_t i = b; i < e; i++) {                                                                  \
            MOMENTS_ELEMENT(sfx, T);                                                                       \
            T d = vi;                                                                                      \
            if (f & MOM_OWN) {                                                                             \
                d = MAX_NAN(ld_##sfx(vm, i), vi);                                                          \
                st_##sfx(vm, i, d);                                                                        \
            }                                                                                              \
            T denom = sqrt_##sq(d) / bc2s + eps;                                                           \
            st_##sfx(p, i, pi + nss * mi / denom);                                                         \
        }                                                                                                  \
    }                                                                                                      \
    static void adam_##sfx(int64_t b, int64_t e, const opt_job *j) {                                       \
        const cg_adam_options *o = j->opt;                                                                 \
        unsigned f = MOM_FLAGS(T, o) | (o->amsgrad ? MOM_OWN : 0u);                                        \
        OPT_DISPATCH_##sfx(adam_body_##sfx, f, OPT_C32)                                                    \
    }
OPT_DTYPES(DEFINE_ADAM)

/* ------------------------------------------------------------- NAdam
 * s[0], s[1] the values of the grad and the exp_avg addcdiv, s[2] = bias_correction2. */

#define DEFINE_NADAM(sfx, T, sq)                                                                           \
    OPT_INLINE void nadam_body_##sfx(int64_t b, int64_t e, const opt_job *j, unsigned f) {                 \
        const cg_nadam_options *o = j->opt;                                                                \
        MOMENTS_LOOP_HEAD(sfx, T, o);                                                                      \
        const T cgr = (T)j->s[0], cm = (T)j->s[1], bc2 = (T)j->s[2];                                       \
        for (int64_t i = b; i < e; i++) {                                                                  \
            MOMENTS_ELEMENT(sfx, T);                                                                       \
            T denom = sqrt_##sq(vi / bc2) + eps;                                                           \
            pi = pi + cgr * gi / denom;                                                                    \
            st_##sfx(p, i, pi + cm * mi / denom);                                                          \
        }                                                                                                  \
    }                                                                                                      \
    static void nadam_##sfx(int64_t b, int64_t e, const opt_job *j) {                                      \
        const cg_nadam_options *o = j->opt;                                                                \
        unsigned f = MOM_FLAGS(T, o);                                                                      \
        OPT_DISPATCH_##sfx(nadam_body_##sfx, f, OPT_C16)                                                   \
    }
OPT_DTYPES(DEFINE_NADAM)

/* ------------------------------------------------------------- RAdam
 * s[0] = bias_correction1, s[1] = sqrt(bias_correction2), s[2] the
 * rectification, s[3] nonzero when it applies (MOM_OWN). PyTorch's adaptive
 * lr sqrt(bc2) / denom is Tensor.__rtruediv__: denom.reciprocal() * sqrt(bc2). */

#define DEFINE_RADAM(sfx, T, sq)                                                                           \
    OPT_INLINE void radam_body_##sfx(int64_t b, int64_t e, const opt_job *j, unsigned f) {                 \
        const cg_radam_options *o = j->opt;                                                                \
        MOMENTS_LOOP_HEAD(sfx, T, o);                                                                      \
        const T bc1 = (T)j->s[0], bc2s = (T)j->s[1], rect = (T)j->s[2], lr = (T)o->lr;                     \
        for (int64_t i = b; i < e; i++) {                                                                  \
            MOMENTS_ELEMENT(sfx, T);                                                                       \
            T upd = mi / bc1 * lr;                                                                         \
            if (f & MOM_OWN) upd = upd * ((T)1 / (sqrt_##sq(vi) + eps) * bc2s) * rect;                     \
            st_##sfx(p, i, pi + (T)-1 * upd);                                                              \
        }                                                                                                  \
    }                                                                                                      \
    static void radam_##sfx(int64_t b, int64_t e, const opt_job *j) {                                      \
        const cg_radam_options *o = j->opt;                                                                \
        unsigned f = MOM_FLAGS(T, o) | (j->s[3] != 0 ? MOM_OWN : 0u);                                      \
        OPT_DISPATCH_##sfx(radam_body_##sfx, f, OPT_C32)                                                   \
    }
OPT_DTYPES(DEFINE_RADAM)

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
                gai = LERP(f & RMS_LERP_LO, gai, gi, c1, c1c);                                              \
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
        OPT_DISPATCH_##sfx(rmsprop_body_##sfx, f, OPT_C32)                                                           \
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

/* ------------------------------------------------------------- Adadelta */

enum { ADADELTA_MAX = 1, ADADELTA_WD = 2 };

#define DEFINE_ADADELTA(sfx, T, sq)                                                                        \
    OPT_INLINE void adadelta_body_##sfx(int64_t b, int64_t e, const opt_job *j, unsigned f) {              \
        const cg_adadelta_options *o = j->opt;                                                             \
        char *restrict p = j->d[0], *restrict sa = j->d[2], *restrict ad = j->d[3];                        \
        const char *restrict g = j->d[1];                                                                  \
        const T wd = (T)o->weight_decay, rho = (T)o->rho, c = (T)(1.0 - o->rho), eps = (T)o->eps;         \
        const T nlr = (T)(-o->lr);                                                                         \
        for (int64_t i = b; i < e; i++) {                                                                  \
            T gi = ld_##sfx(g, i), pi = ld_##sfx(p, i), si = ld_##sfx(sa, i), ai = ld_##sfx(ad, i);        \
            if (f & ADADELTA_MAX) gi = -gi;                                                                \
            if (f & ADADELTA_WD) gi = gi + wd * pi;                                                        \
            si = si * rho;                                                                                 \
            si = si + c * gi * gi;                                                                         \
            T std = sqrt_##sq(si + eps);                                                                   \
            T delta = sqrt_##sq(ai + eps);                                                                 \
            delta = delta / std;                                                                           \
            delta = delta * gi;                                                                            \
            ai = ai * rho;                                                                                 \
            ai = ai + c * delta * delta;                                                                   \
            st_##sfx(p, i, pi + nlr * delta);                                                              \
            st_##sfx(sa, i, si);                                                                           \
            st_##sfx(ad, i, ai);                                                                           \
        }                                                                                                  \
    }                                                                                                      \
    static void adadelta_##sfx(int64_t b, int64_t e, const opt_job *j) {                                   \
        const cg_adadelta_options *o = j->opt;                                                             \
        unsigned f = (o->maximize ? ADADELTA_MAX : 0u) | (o->weight_decay != 0 ? ADADELTA_WD : 0u);        \
        OPT_DISPATCH_##sfx(adadelta_body_##sfx, f, OPT_C4)                                                 \
    }
OPT_DTYPES(DEFINE_ADADELTA)

/* ------------------------------------------------------------- Adamax
 * s[0] = -lr / bias_correction1. */

enum { ADAMAX_MAX = 1, ADAMAX_WD = 2, ADAMAX_LERP_LO = 4 };

#define DEFINE_ADAMAX(sfx, T, sq)                                                                          \
    OPT_INLINE void adamax_body_##sfx(int64_t b, int64_t e, const opt_job *j, unsigned f) {                \
        const cg_adamax_options *o = j->opt;                                                               \
        char *restrict p = j->d[0], *restrict m = j->d[2], *restrict u = j->d[3];                          \
        const char *restrict g = j->d[1];                                                                  \
        const T wd = (T)o->weight_decay, w1 = (T)(1.0 - o->beta1), w1c = (T)1 - w1, beta2 = (T)o->beta2;  \
        const T eps = (T)o->eps, nclr = (T)j->s[0];                                                        \
        for (int64_t i = b; i < e; i++) {                                                                  \
            T gi = ld_##sfx(g, i), pi = ld_##sfx(p, i), mi = ld_##sfx(m, i), ui = ld_##sfx(u, i);          \
            if (f & ADAMAX_MAX) gi = -gi;                                                                  \
            if (f & ADAMAX_WD) gi = gi + wd * pi;                                                          \
            mi = LERP(f & ADAMAX_LERP_LO, mi, gi, w1, w1c);                                                \
            ui = ui * beta2;                                                                               \
            T ai = abs_##sq(gi) + eps;                                                                     \
            ui = MAX_NAN(ui, ai);                                                                          \
            st_##sfx(p, i, pi + nclr * mi / ui);                                                           \
            st_##sfx(m, i, mi);                                                                            \
            st_##sfx(u, i, ui);                                                                            \
        }                                                                                                  \
    }                                                                                                      \
    static void adamax_##sfx(int64_t b, int64_t e, const opt_job *j) {                                     \
        const cg_adamax_options *o = j->opt;                                                               \
        unsigned f = (o->maximize ? ADAMAX_MAX : 0u) | (o->weight_decay != 0 ? ADAMAX_WD : 0u) |           \
                     (LERP_LOW(T, 1.0 - o->beta1) ? ADAMAX_LERP_LO : 0u);                                  \
        OPT_DISPATCH_##sfx(adamax_body_##sfx, f, OPT_C8)                                                   \
    }
OPT_DTYPES(DEFINE_ADAMAX)

/* ------------------------------------------------------------- Rprop
 * PyTorch's sign masks in one pass: the factor is etaplus where grad * prev
 * > 0, etaminus where < 0, else 1 (sign(NaN) is 0); the gradient is zeroed
 * where the factor equals etaminus (compared in T, as PyTorch's eq). */

enum { RPROP_MAX = 1 };

#define DEFINE_RPROP(sfx, T, sq)                                                                           \
    OPT_INLINE void rprop_body_##sfx(int64_t b, int64_t e, const opt_job *j, unsigned f) {                 \
        const cg_rprop_options *o = j->opt;                                                                \
        char *restrict p = j->d[0], *restrict pv = j->d[2], *restrict ss = j->d[3];                        \
        const char *restrict g = j->d[1];                                                                  \
        const T em = (T)o->etaminus, ep = (T)o->etaplus, lo = (T)o->step_size_min, hi = (T)o->step_size_max; \
        for (int64_t i = b; i < e; i++) {                                                                  \
            T gi = ld_##sfx(g, i);                                                                         \
            if (f & RPROP_MAX) gi = -gi;                                                                   \
            T prod = gi * ld_##sfx(pv, i);                                                                 \
            T fac = prod > 0 ? ep : prod < 0 ? em : (T)1;                                                  \
            T si = ld_##sfx(ss, i) * fac;                                                                  \
            si = si < lo ? lo : si;                                                                        \
            si = hi < si ? hi : si;                                                                        \
            gi = fac == em ? (T)0 : gi;                                                                    \
            T sg = (T)((gi > 0) - (gi < 0));                                                               \
            st_##sfx(p, i, ld_##sfx(p, i) + (T)-1 * sg * si);                                              \
            st_##sfx(ss, i, si);                                                                           \
            st_##sfx(pv, i, gi);                                                                           \
        }                                                                                                  \
    }                                                                                                      \
    static void rprop_##sfx(int64_t b, int64_t e, const opt_job *j) {                                      \
        const cg_rprop_options *o = j->opt;                                                                \
        unsigned f = o->maximize ? RPROP_MAX : 0u;                                                         \
        OPT_DISPATCH_##sfx(rprop_body_##sfx, f, OPT_C2)                                                    \
    }
OPT_DTYPES(DEFINE_RPROP)

/* ------------------------------------------------------------- ASGD
 * s[0] = 1 - lambd * eta, s[1] = -eta, s[2] = mu, s[3] nonzero when mu != 1
 * (ax moves towards the parameter by mu; else it copies it). */

enum { ASGD_MAX = 1, ASGD_WD = 2, ASGD_AVG = 4 };

#define DEFINE_ASGD(sfx, T, sq)                                                                            \
    OPT_INLINE void asgd_body_##sfx(int64_t b, int64_t e, const opt_job *j, unsigned f) {                  \
        const cg_asgd_options *o = j->opt;                                                                 \
        char *restrict p = j->d[0], *restrict ax = j->d[2];                                                \
        const char *restrict g = j->d[1];                                                                  \
        const T wd = (T)o->weight_decay, decay = (T)j->s[0], neta = (T)j->s[1], mu = (T)j->s[2];           \
        for (int64_t i = b; i < e; i++) {                                                                  \
            T gi = ld_##sfx(g, i), pi = ld_##sfx(p, i);                                                    \
            if (f & ASGD_MAX) gi = -gi;                                                                    \
            if (f & ASGD_WD) gi = gi + wd * pi;                                                            \
            pi = pi * decay;                                                                               \
            pi = pi + neta * gi;                                                                           \
            st_##sfx(p, i, pi);                                                                            \
            if (f & ASGD_AVG) {                                                                            \
                T ai = ld_##sfx(ax, i);                                                                    \
                st_##sfx(ax, i, ai + (pi - ai) * mu);                                                      \
            } else {                                                                                       \
                st_##sfx(ax, i, pi);                                                                       \
            }                                                                                              \
        }                                                                                                  \
    }                                                                                                      \
    static void asgd_##sfx(int64_t b, int64_t e, const opt_job *j) {                                       \
        const cg_asgd_options *o = j->opt;                                                                 \
        unsigned f = (o->maximize ? ASGD_MAX : 0u) | (o->weight_decay != 0 ? ASGD_WD : 0u) |               \
                     (j->s[3] != 0 ? ASGD_AVG : 0u);                                                       \
        OPT_DISPATCH_##sfx(asgd_body_##sfx, f, OPT_C8)                                                     \
    }
OPT_DTYPES(DEFINE_ASGD)

/* ------------------------------------------------------------- dispatch */

typedef void (*opt_kernel)(int64_t b, int64_t e, const opt_job *j);
typedef struct opt_kernels { opt_kernel f32, f64, f16, bf16; } opt_kernels;

static const opt_kernels k_sgd = {sgd_f32, sgd_f64, sgd_f16, sgd_bf16};
static const opt_kernels k_adam = {adam_f32, adam_f64, adam_f16, adam_bf16};
static const opt_kernels k_rmsprop = {rmsprop_f32, rmsprop_f64, rmsprop_f16, rmsprop_bf16};
static const opt_kernels k_adagrad = {adagrad_f32, adagrad_f64, adagrad_f16, adagrad_bf16};
static const opt_kernels k_adadelta = {adadelta_f32, adadelta_f64, adadelta_f16, adadelta_bf16};
static const opt_kernels k_adamax = {adamax_f32, adamax_f64, adamax_f16, adamax_bf16};
static const opt_kernels k_nadam = {nadam_f32, nadam_f64, nadam_f16, nadam_bf16};
static const opt_kernels k_radam = {radam_f32, radam_f64, radam_f16, radam_bf16};
static const opt_kernels k_rprop = {rprop_f32, rprop_f64, rprop_f16, rprop_bf16};
static const opt_kernels k_asgd = {asgd_f32, asgd_f64, asgd_f16, asgd_bf16};

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
        [CG_OPTIM_ADAGRAD] = &k_adagrad, [CG_OPTIM_ADADELTA] = &k_adadelta, [CG_OPTIM_ADAMAX] = &k_adamax,
        [CG_OPTIM_NADAM] = &k_nadam, [CG_OPTIM_RADAM] = &k_radam, [CG_OPTIM_RPROP] = &k_rprop,
        [CG_OPTIM_ASGD] = &k_asgd};
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
