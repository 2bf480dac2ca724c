/* mock_cuda.c — a CUDA kernel library of the real one's ABI (cuda_abi.h)
 * over host memory, for the CUDA backend's tests on machines without a GPU
 * (Note [Mock CUDA library], src/backend/cuda/cuda_backend.c). Its "device
 * pointers" are host pointers with bit 62 set, which fault when the engine's
 * CPU code dereferences one, so a path that read cuda memory directly would
 * crash the tests. Compute runs the CPU backend's loops on the untagged
 * pointers (elementwise, casts, fill, reductions) or plain loops in double
 * (products, softmax); every call is counted, the memory limit is settable
 * for out-of-memory tests, and a pending asynchronous error can be planted. */
#include "mock_cuda.h"

#include "backend/backend.h"
#include "core/half.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG ((uintptr_t)1 << 62)
#define MOCK_DEVICES 2

static mock_cuda_counts g_counts;
static size_t g_limit = (size_t)1 << 33, g_used;
static int g_planted; /* the status the next synchronize / copy to host returns */

static void *untag(const void *p) { return (void *)((uintptr_t)p & ~TAG); }

static const char *m_error_string(int st) {
    switch (st) {
    case CGCU_OK: return "no error";
    case CGCU_MISSING: return "no CUDA kernel for this op and dtype";
    case CGCU_OOM: return "CUDA out of memory";
    case CGCU_INVALID: return "an argument beyond the CUDA kernels' limits";
    case MOCK_DEVICE_ASSERT: return "device-side assert triggered (mock)";
    default: return "mock CUDA error";
    }
}

static int m_device_count(int *n) {
    *n = MOCK_DEVICES;
    return CGCU_OK;
}

static int m_properties(int dev, cgcu_props *p) {
    if (dev < 0 || dev >= MOCK_DEVICES) return CGCU_INVALID;
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "cgrad mock GPU %d", dev);
    p->major = 9, p->minor = 0, p->multiprocessors = 4, p->total_memory = g_limit;
    return CGCU_OK;
}

static int m_malloc(int dev, size_t nbytes, void **p) {
    (void)dev;
    g_counts.mallocs++;
    if (nbytes > g_limit - g_used) return CGCU_OOM;
    /* the size sits before the block, for free */
    size_t *b = malloc(nbytes + 64);
    if (!b) return CGCU_OOM;
    b[0] = nbytes;
    g_used += nbytes;
    *p = (void *)((uintptr_t)((char *)b + 64) | TAG);
    return CGCU_OK;
}

static int m_free(int dev, void *p) {
    (void)dev;
    g_counts.frees++;
    size_t *b = (size_t *)((char *)untag(p) - 64);
    g_used -= b[0];
    free(b);
    return CGCU_OK;
}

static int m_mem_info(int dev, size_t *free_b, size_t *total) {
    (void)dev;
    *free_b = g_limit - g_used, *total = g_limit;
    return CGCU_OK;
}

static int m_copy_h2d(int dev, void *dst, const void *src, size_t nbytes) {
    (void)dev;
    g_counts.h2d++;
    memcpy(untag(dst), src, nbytes);
    return CGCU_OK;
}

static int take_planted(void) {
    int st = g_planted;
    g_planted = CGCU_OK;
    return st;
}

static int m_copy_d2h(int dev, void *dst, const void *src, size_t nbytes) {
    (void)dev;
    g_counts.d2h++;
    memcpy(dst, untag(src), nbytes);
    return take_planted();
}

static int m_synchronize(int dev) {
    (void)dev;
    g_counts.syncs++;
    return take_planted();
}

static cg_iter host_plan(const cgcu_plan *p) {
    cg_iter it;
    memcpy(&it, p, sizeof it);
    for (int i = 0; i < it.nargs; i++) it.ptr[i] = untag(it.ptr[i]);
    return it;
}

static int m_elementwise(int dev, const cgcu_plan *p, int op_id, int dtype, const double *params, int *loop_error) {
    (void)dev;
    g_counts.elementwise++;
    cg_iter it = host_plan(p);
    cg_loop_params lp;
    memcpy(lp.p, params, sizeof lp.p);
    atomic_init(&lp.error, 0);
    if (cg_backend_cpu.run_elementwise(cg_cpu(), &it, op_id, (cg_dtype)dtype, &lp, 1 << 30)) return CGCU_MISSING;
    *loop_error = atomic_load(&lp.error);
    return CGCU_OK;
}

static int m_cast(int dev, const cgcu_plan *p, int dst, int src) {
    (void)dev;
    g_counts.casts++;
    cg_iter it = host_plan(p);
    cg_backend_cpu.copy(cg_cpu(), &it, (cg_dtype)dst, (cg_dtype)src);
    return CGCU_OK;
}

static int m_fill(int dev, const cgcu_plan *p, const void *value, size_t itemsize) {
    (void)dev;
    g_counts.fills++;
    cg_iter it = host_plan(p);
    cg_backend_cpu.fill(cg_cpu(), &it, value, itemsize);
    return CGCU_OK;
}

static int m_reduce(int dev, const cgcu_reduce_plan *p) {
    (void)dev;
    g_counts.reductions++;
    cg_reduce_plan rp;
    memset(&rp, 0, sizeof rp);
    rp.iter = host_plan(&p->iter);
    rp.n = p->n, rp.stride = p->stride;
    rp.in_dtype = (cg_dtype)p->in_dtype, rp.out_dtype = (cg_dtype)p->out_dtype;
    rp.has_idx = p->has_idx, rp.chunked = false, rp.kind = (cg_reduce_kind)p->kind;
    rp.params = p->params, rp.nparams = CGCU_MAX_PARAMS;
    return cg_backend_cpu.run_reduce(cg_cpu(), &rp) ? CGCU_MISSING : CGCU_OK;
}

static double ld(int dt, const void *base, int64_t i) {
    switch (dt) {
    case CG_DTYPE_F32: return ((const float *)base)[i];
    case CG_DTYPE_F64: return ((const double *)base)[i];
    case CG_DTYPE_F16: return cg_f16_to_f32(((const cg_f16 *)base)[i]);
    default: return cg_bf16_to_f32(((const cg_bf16 *)base)[i]);
    }
}

static void st(int dt, void *base, int64_t i, double v) {
    switch (dt) {
    case CG_DTYPE_F32: ((float *)base)[i] = (float)v; break;
    case CG_DTYPE_F64: ((double *)base)[i] = v; break;
    case CG_DTYPE_F16: ((cg_f16 *)base)[i] = cg_f32_to_f16((float)v); break;
    default: ((cg_bf16 *)base)[i] = cg_f32_to_bf16((float)v); break;
    }
}

static int m_gemm(int dev, int dt_ab, int dt_c, int ta, int tb, int64_t m, int64_t n, int64_t k, double alpha,
                  const void *a, int64_t lda, int64_t sa, const void *b, int64_t ldb, int64_t sb, double beta, void *c,
                  int64_t ldc, int64_t sc, int64_t batch) {
    (void)dev;
    g_counts.gemms++;
    bool half = dt_ab == CG_DTYPE_F16 || dt_ab == CG_DTYPE_BF16;
    if (!(dt_ab == dt_c && (dt_c == CG_DTYPE_F32 || dt_c == CG_DTYPE_F64)) && !(half && dt_c == CG_DTYPE_F32))
        return CGCU_MISSING;
    const char *A = untag(a), *B = untag(b);
    char *C = untag(c);
    size_t iab = cg_itemsize((cg_dtype)dt_ab), ic = cg_itemsize((cg_dtype)dt_c);
    for (int64_t q = 0; q < batch; q++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double acc = 0;
                for (int64_t l = 0; l < k; l++)
                    acc += ld(dt_ab, A + (size_t)(q * sa) * iab, ta ? l * lda + i : i * lda + l) *
                           ld(dt_ab, B + (size_t)(q * sb) * iab, tb ? j * ldb + l : l * ldb + j);
                char *cq = C + (size_t)(q * sc) * ic;
                double old = beta != 0 ? ld(dt_c, cq, i * ldc + j) : 0;
                st(dt_c, cq, i * ldc + j, alpha * acc + (beta != 0 ? beta * old : 0));
            }
    return CGCU_OK;
}

static bool float_dt(int dt) {
    return dt == CG_DTYPE_F32 || dt == CG_DTYPE_F64 || dt == CG_DTYPE_F16 || dt == CG_DTYPE_BF16;
}

static int m_softmax(int dev, int dt, void *y, const void *x, int64_t outer, int64_t len, int64_t inner, int log_) {
    (void)dev;
    g_counts.softmax++;
    if (!float_dt(dt)) return CGCU_MISSING;
    const void *X = untag(x);
    void *Y = untag(y);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            int64_t base = o * len * inner + in;
            double mx = -INFINITY, sum = 0;
            for (int64_t l = 0; l < len; l++) mx = fmax(mx, ld(dt, X, base + l * inner));
            for (int64_t l = 0; l < len; l++) sum += exp(ld(dt, X, base + l * inner) - mx);
            for (int64_t l = 0; l < len; l++) {
                double v = ld(dt, X, base + l * inner) - mx;
                st(dt, Y, base + l * inner, log_ ? v - log(sum) : exp(v) / sum);
            }
        }
    return CGCU_OK;
}

static int m_softmax_backward(int dev, int dt, void *gx, const void *g, const void *y, int64_t outer, int64_t len,
                              int64_t inner, int log_) {
    (void)dev;
    g_counts.softmax++;
    if (!float_dt(dt)) return CGCU_MISSING;
    const void *G = untag(g), *Y = untag(y);
    void *GX = untag(gx);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            int64_t base = o * len * inner + in;
            double s = 0;
            for (int64_t l = 0; l < len; l++) {
                int64_t i = base + l * inner;
                s += log_ ? ld(dt, G, i) : ld(dt, G, i) * ld(dt, Y, i);
            }
            for (int64_t l = 0; l < len; l++) {
                int64_t i = base + l * inner;
                double gi = ld(dt, G, i), yi = ld(dt, Y, i);
                st(dt, GX, i, log_ ? gi - exp(yi) * s : yi * (gi - s));
            }
        }
    return CGCU_OK;
}

static int m_index_gather(int dev, const cgcu_plan *p, int itemsize) {
    (void)dev;
    g_counts.indexing++;
    cg_iter it = host_plan(p);
    return cg_backend_cpu.kernels->index_gather(cg_cpu(), &it, (size_t)itemsize) ? CGCU_MISSING : CGCU_OK;
}

static int m_index_put(int dev, const cgcu_plan *p, int dtype, int accumulate) {
    (void)dev;
    g_counts.indexing++;
    cg_iter it = host_plan(p);
    return cg_backend_cpu.kernels->index_put(cg_cpu(), &it, (cg_dtype)dtype, accumulate) ? CGCU_MISSING : CGCU_OK;
}

static int m_embedding(int dev, void *out, const void *w, const int64_t *idx, int64_t n, int64_t D, int itemsize) {
    (void)dev;
    g_counts.indexing++;
    const int64_t *ix = untag(idx);
    for (int64_t r = 0; r < n; r++)
        memcpy((char *)untag(out) + (size_t)(r * D * itemsize), (const char *)untag(w) + (size_t)(ix[r] * D * itemsize),
               (size_t)(D * itemsize));
    return CGCU_OK;
}

/* the CPU's mask loop at the reserved counters: a temporary generator state at (seed, base) */
static int m_dropout_mask(int dev, void *m, int64_t n, int itemsize, const void *kept, double keep, uint64_t seed,
                          uint64_t base) {
    (void)dev;
    g_counts.random++;
    double *u = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    if (!u) return CGCU_OOM;
    cg_rng_fill_uniform(seed, base, 0, n, 53, u);
    char *o = untag(m);
    for (int64_t i = 0; i < n; i++) {
        if (u[i] < keep) memcpy(o + (size_t)(i * itemsize), kept, (size_t)itemsize);
        else memset(o + (size_t)(i * itemsize), 0, (size_t)itemsize);
    }
    free(u);
    return CGCU_OK;
}

/* the CPU's step on host tensors over the untagged operands */
static int m_optim_step(int dev, const cgcu_optim *o) {
    (void)dev;
    if (o->kind != CG_OPTIM_SGD && o->kind != CG_OPTIM_ADAM) return CGCU_MISSING;
    g_counts.optim++;
    cg_tensor *t[CG_OPTIM_OPERANDS] = {0};
    int bad = 0;
    for (int q = 0; q < CG_OPTIM_OPERANDS; q++)
        if (o->d[q] && !(t[q] = cg_from_blob(untag(o->d[q]), 1, &o->n, NULL, (cg_dtype)o->dtype, NULL, NULL))) bad = 1;
    cg_sgd_options so = {o->lr, o->momentum, o->dampening, o->weight_decay, o->nesterov, o->maximize};
    cg_adam_options ao = {o->lr, o->beta1, o->beta2, o->eps, o->weight_decay, o->amsgrad, o->maximize,
                          o->decoupled_weight_decay};
    if (!bad)
        bad = cg_backend_cpu.kernels->optim_step((cg_optim_kind)o->kind, t, o->s, o->first,
                                                 o->kind == CG_OPTIM_SGD ? (const void *)&so : (const void *)&ao);
    for (int q = 0; q < CG_OPTIM_OPERANDS; q++) cg_tensor_release(t[q]);
    return bad ? CGCU_INVALID : CGCU_OK;
}

static const cgcu_api k_mock = {
    CGCU_ABI_VERSION, m_error_string, m_device_count, m_properties,      m_malloc,      m_free,
    m_mem_info,       m_copy_h2d,     m_copy_d2h,     m_synchronize,     m_elementwise, m_cast,
    m_fill,           m_reduce,       m_gemm,         m_softmax,     m_softmax_backward, m_index_gather,
    m_index_put,      m_embedding,    m_dropout_mask, m_optim_step,
};

void mock_cuda_install(void) {
    memset(&g_counts, 0, sizeof g_counts);
    g_planted = CGCU_OK;
    cg_cuda_use_library(&k_mock, MOCK_DEVICES);
}

void mock_cuda_uninstall(void) {
    cg_cuda_use_library(NULL, 0);
    g_limit = (size_t)1 << 33;
}

mock_cuda_counts mock_cuda_get_counts(void) { return g_counts; }
void mock_cuda_set_memory_limit(size_t bytes) { g_limit = bytes; }
size_t mock_cuda_memory_used(void) { return g_used; }
void mock_cuda_plant_error(int status) { g_planted = status; }
