/* norm.c — the CPU's normalization entries (Note [Normalization as (P, Q, R)],
 * src/ops/nn_norm.c): the fused statistics kernel and its first-order
 * backward over x viewed as (P, Q, R), the batch-norm kernels of batch_norm.c
 * as entries, and the host-value loads / stores the norm ops use for their
 * per-channel statistics. */
#include "batch_norm_internal.h"
#include "cpu_kernels.h"
#include "loops.h"

#include <math.h>
#include <stdlib.h>

/* ------------------------------------------------------------- host values */

/* the offset (in elements) of row-major element i of t */
static int64_t elem_offset(const cg_tensor *t, int64_t i) {
    int64_t off = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        off += (i % t->shape[d]) * t->strides[d];
        i /= t->shape[d];
    }
    return off;
}

cg_status cg_cpu_load_values(const cg_tensor *t, double *out) {
    const char *p = cg_tensor_ptr(t);
    size_t es = cg_dtype_size(t->dtype);
    int64_t n = cg_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) out[i] = cg_load_f64(p + (size_t)elem_offset(t, i) * es, t->dtype);
    return CG_OK;
}

cg_status cg_cpu_store_values(cg_tensor *t, const double *v) {
    char *p = cg_tensor_ptr(t);
    size_t es = cg_dtype_size(t->dtype);
    int64_t n = cg_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) cg_store_f64(p + (size_t)elem_offset(t, i) * es, t->dtype, v[i]);
    return CG_OK;
}

/* ------------------------------------------------------------- the fused kernel */

typedef struct norm_job {
    const char *x; /* (P, Q, R) contiguous */
    char *y;       /* (P, Q, R) contiguous */
    double *mean, *var; /* (Q) */
    int64_t P, Q, R;
    double eps;
    void (*unit)(const struct norm_job *j, int64_t q);
} norm_job;

#define NORM_UNIT(sfx, T, LD, ST)                                                    \
    static void norm_unit_##sfx(const norm_job *j, int64_t q) {                      \
        const T *x = (const T *)j->x;                                                \
        T *y = (T *)j->y;                                                            \
        const int64_t Q = j->Q, R = j->R;                                            \
        double s = 0;                                                                \
        for (int64_t p = 0; p < j->P; p++) {                                         \
            const T *xr = x + (p * Q + q) * R;                                       \
            for (int64_t r = 0; r < R; r++) s += (double)LD(xr[r]);                  \
        }                                                                            \
        double n = (double)(j->P * R), m = s / n, v = 0;                             \
        for (int64_t p = 0; p < j->P; p++) {                                         \
            const T *xr = x + (p * Q + q) * R;                                       \
            for (int64_t r = 0; r < R; r++) {                                        \
                double d = (double)LD(xr[r]) - m;                                    \
                v += d * d;                                                          \
            }                                                                        \
        }                                                                            \
        v /= n;                                                                      \
        double is = 1.0 / sqrt(v + j->eps);                                          \
        for (int64_t p = 0; p < j->P; p++) {                                         \
            const T *xr = x + (p * Q + q) * R;                                       \
            T *yr = y + (p * Q + q) * R;                                             \
            for (int64_t r = 0; r < R; r++) yr[r] = ST(((double)LD(xr[r]) - m) * is); \
        }                                                                            \
        j->mean[q] = m;                                                              \
        j->var[q] = v;                                                               \
    }
#define LD_F16(x) cg_f16_to_f32(x)
#define ST_F16(x) cg_f32_to_f16((float)(x))
#define LD_BF16(x) cg_bf16_to_f32(x)
#define ST_BF16(x) cg_f32_to_bf16((float)(x))
#define ST_F32(x) ((float)(x))
NORM_UNIT(f32, float, CG_ID, ST_F32)
NORM_UNIT(f64, double, CG_ID, CG_ID)
NORM_UNIT(f16, cg_f16, LD_F16, ST_F16)
NORM_UNIT(bf16, cg_bf16, LD_BF16, ST_BF16)

static void norm_range(int64_t b, int64_t e, void *ctx) {
    const norm_job *j = ctx;
    for (int64_t q = b; q < e; q++) j->unit(j, q);
}

cg_status cg_cpu_norm(cg_tensor *y, const cg_tensor *x, double eps, double *mean, double *var) {
    int64_t P = x->shape[0], Q = x->shape[1], R = x->shape[2];
    norm_job j = {.x = cg_tensor_ptr(x), .y = cg_tensor_ptr(y), .mean = mean, .var = var, .P = P, .Q = Q, .R = R,
                  .eps = eps};
    switch (x->dtype) {
    case CG_DTYPE_F32: j.unit = norm_unit_f32; break;
    case CG_DTYPE_F64: j.unit = norm_unit_f64; break;
    case CG_DTYPE_F16: j.unit = norm_unit_f16; break;
    default: j.unit = norm_unit_bf16; break;
    }
    if (Q > 0 && P * R > 0) {
        int64_t per = P * R, grain = CG_GRAIN / per > 0 ? CG_GRAIN / per : 1;
        cg_parallel_for(Q, grain, norm_range, &j);
    }
    return CG_OK;
}

/* ------------------------------------------------------------- the fused first-order backward
 * gx = invstd * (g - mean_PR(g) - xhat * mean_PR(g * xhat)) for one q, in two
 * passes over g and x; used when the backward runs without create_graph. */

typedef struct norm_bwd_job {
    const char *g, *x; /* (P, Q, R) contiguous */
    char *gx;          /* (P, Q, R) contiguous */
    const double *mean, *invstd; /* (Q) */
    int64_t P, Q, R;
    void (*unit)(const struct norm_bwd_job *j, int64_t q);
} norm_bwd_job;

#define NORM_BWD_UNIT(sfx, T, LD, ST)                                                \
    static void norm_bwd_unit_##sfx(const norm_bwd_job *j, int64_t q) {              \
        const T *g = (const T *)j->g, *x = (const T *)j->x;                          \
        T *gx = (T *)j->gx;                                                          \
        const int64_t Q = j->Q, R = j->R;                                            \
        const double m = j->mean[q], is = j->invstd[q];                              \
        double sg = 0, sgx = 0;                                                      \
        for (int64_t p = 0; p < j->P; p++) {                                         \
            const T *gr = g + (p * Q + q) * R, *xr = x + (p * Q + q) * R;            \
            for (int64_t r = 0; r < R; r++) {                                        \
                double gv = (double)LD(gr[r]);                                       \
                sg += gv;                                                            \
                sgx += gv * (((double)LD(xr[r]) - m) * is);                          \
            }                                                                        \
        }                                                                            \
        const double n = (double)(j->P * R), mg = sg / n, mgx = sgx / n;             \
        for (int64_t p = 0; p < j->P; p++) {                                         \
            const T *gr = g + (p * Q + q) * R, *xr = x + (p * Q + q) * R;            \
            T *or = gx + (p * Q + q) * R;                                            \
            for (int64_t r = 0; r < R; r++) {                                        \
                double xh = ((double)LD(xr[r]) - m) * is;                            \
                or[r] = ST(is * ((double)LD(gr[r]) - mg - xh * mgx));                \
            }                                                                        \
        }                                                                            \
    }
NORM_BWD_UNIT(f32, float, CG_ID, ST_F32)
NORM_BWD_UNIT(f64, double, CG_ID, CG_ID)
NORM_BWD_UNIT(f16, cg_f16, LD_F16, ST_F16)
NORM_BWD_UNIT(bf16, cg_bf16, LD_BF16, ST_BF16)

static void norm_bwd_range(int64_t b, int64_t e, void *ctx) {
    const norm_bwd_job *j = ctx;
    for (int64_t q = b; q < e; q++) j->unit(j, q);
}

cg_status cg_cpu_norm_backward(cg_tensor *gx, const cg_tensor *g, const cg_tensor *x, const cg_tensor *mean,
                               const cg_tensor *invstd) {
    int64_t P = x->shape[0], Q = x->shape[1], R = x->shape[2];
    double *st = cg_malloc_n("norm_backward", cg_count_axpb(2, Q, 1), sizeof(double));
    if (!st) return cg_set_error(CG_ERR_OOM, "[norm_backward] out of memory for %lld statistics", (long long)Q);
    if (P * Q * R > 0) {
        const char *pm = cg_tensor_ptr(mean), *pi = cg_tensor_ptr(invstd);
        size_t es = cg_dtype_size(mean->dtype);
        for (int64_t q = 0; q < Q; q++) {
            st[q] = cg_load_f64(pm + (size_t)(q * mean->strides[1]) * es, mean->dtype);
            st[Q + q] = cg_load_f64(pi + (size_t)(q * invstd->strides[1]) * es, invstd->dtype);
        }
        norm_bwd_job j = {.g = cg_tensor_ptr(g), .x = cg_tensor_ptr(x), .gx = cg_tensor_ptr(gx), .mean = st,
                          .invstd = st + Q, .P = P, .Q = Q, .R = R};
        switch (x->dtype) {
        case CG_DTYPE_F32: j.unit = norm_bwd_unit_f32; break;
        case CG_DTYPE_F64: j.unit = norm_bwd_unit_f64; break;
        case CG_DTYPE_F16: j.unit = norm_bwd_unit_f16; break;
        default: j.unit = norm_bwd_unit_bf16; break;
        }
        int64_t per = P * R, grain = CG_GRAIN / per > 0 ? CG_GRAIN / per : 1;
        cg_parallel_for(Q, grain, norm_bwd_range, &j);
    }
    free(st);
    return CG_OK;
}

/* ------------------------------------------------------------- batch norm (batch_norm.c) */

/* x viewed as (N, C, S) */
static void bn_dims(const cg_tensor *x, int64_t *N, int64_t *C, int64_t *S) {
    *N = x->shape[0], *C = x->shape[1];
    int64_t s = 1;
    for (int k = 2; k < x->ndim; k++) s *= x->shape[k];
    *S = s;
}

cg_status cg_cpu_batch_norm(cg_tensor *y, const cg_tensor *x, const double *w, const double *b, double eps,
                            double *mean, double *var) {
    int64_t N, C, S;
    bn_dims(x, &N, &C, &S);
    cg_bn_cpu_forward(x->dtype, N, C, S, cg_tensor_ptr(x), w, b, eps, cg_tensor_ptr(y), mean, var);
    return CG_OK;
}

cg_status cg_cpu_batch_norm_transform(cg_tensor *y, const cg_tensor *x, const double *alpha, const double *beta) {
    int64_t N, C, S;
    bn_dims(x, &N, &C, &S);
    cg_bn_cpu_transform(x->dtype, N, C, S, cg_tensor_ptr(x), alpha, beta, cg_tensor_ptr(y));
    return CG_OK;
}

cg_status cg_cpu_batch_norm_backward(cg_tensor *gx, const cg_tensor *g, const cg_tensor *x, const double *mean,
                                     const double *invstd, const double *w, double *sum_g, double *sum_gxm) {
    int64_t N, C, S;
    bn_dims(x, &N, &C, &S);
    cg_bn_cpu_backward(x->dtype, N, C, S, cg_tensor_ptr(g), cg_tensor_ptr(x), mean, invstd, w,
                       gx ? cg_tensor_ptr(gx) : NULL, sum_g, sum_gxm);
    return CG_OK;
}
