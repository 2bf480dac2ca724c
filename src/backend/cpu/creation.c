/* creation.c — the CPU's entries of the deterministic factories (Note [Kernel
 * entries]): arange, linspace / logspace and eye fill the contiguous output
 * the op allocated. */
#include "cpu_kernels.h"
#include "loops.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------- arange */

/* p (contiguous, n elements of integer dtype dt) <- start + i * step, wrapped to dt */
static void arange_fill_ints(char *p, cg_dtype dt, int64_t n, int64_t start, int64_t step) {
    int64_t chunk[CG_CHUNK];
    size_t isz = cg_dtype_size(dt);
    for (int64_t i0 = 0; i0 < n; i0 += CG_CHUNK) {
        int64_t m = n - i0 < CG_CHUNK ? n - i0 : CG_CHUNK;
        for (int64_t k = 0; k < m; k++) /* unsigned: wraps like PyTorch's int64 arithmetic, without overflow UB */
            chunk[k] = (int64_t)((uint64_t)start + (uint64_t)step * (uint64_t)(i0 + k));
        cg_store_ints(p + (size_t)i0 * isz, dt, chunk, m);
    }
}

cg_status cg_cpu_arange(cg_tensor *out, double start, double step, int64_t istart, int64_t istep) {
    cg_dtype dt = out->dtype;
    int64_t n = cg_tensor_numel(out);
    char *p = cg_tensor_ptr(out);
    if (!cg_dtype_is_floating(dt) && dt != CG_DTYPE_BOOL) { /* Note [arange of an integer dtype] */
        arange_fill_ints(p, dt, n, istart, istep);
        return CG_OK;
    }
    size_t isz = cg_dtype_size(dt);
    for (int64_t i = 0; i < n; i++) cg_store_f64(p + (size_t)i * isz, dt, start + (double)i * step);
    return CG_OK;
}

/* ------------------------------------------------------------- linspace / logspace */

typedef struct space_job {
    cg_dtype dt;
    char *out;        /* (steps,) contiguous, dtype dt */
    int64_t steps, halfway;
    bool in_float;    /* compute in float32 */
    bool log;
    double start, end, step, base;
} space_job;

static void space_range(int64_t begin, int64_t end, void *ctx) {
    const space_job *j = ctx;
    double buf[CG_CHUNK];
    size_t isz = cg_dtype_size(j->dt);
    const float fs = (float)j->start, fe = (float)j->end, fst = (float)j->step, fb = (float)j->base;
    for (int64_t s = begin; s < end; s += CG_CHUNK) {
        int64_t n = end - s < CG_CHUNK ? end - s : CG_CHUNK;
        if (j->in_float) {
            for (int64_t k = 0; k < n; k++) {
                int64_t i = s + k;
                float v = i < j->halfway ? fs + fst * (float)i : fe - fst * (float)(j->steps - i - 1);
                buf[k] = j->log ? powf(fb, v) : v;
            }
        } else {
            for (int64_t k = 0; k < n; k++) {
                int64_t i = s + k;
                double v = i < j->halfway ? j->start + j->step * (double)i : j->end - j->step * (double)(j->steps - i - 1);
                buf[k] = j->log ? pow(j->base, v) : v;
            }
        }
        cg_store_doubles(j->out + (size_t)s * isz, j->dt, buf, n);
    }
}

cg_status cg_cpu_linspace(cg_tensor *out, double start, double end, double step, int64_t halfway, bool log,
                          double base) {
    int64_t steps = cg_tensor_numel(out);
    if (steps == 0) return CG_OK;
    space_job j = {.dt = out->dtype, .out = cg_tensor_ptr(out), .steps = steps, .halfway = halfway, .log = log,
                   .base = base, .start = start, .end = end, .step = step,
                   .in_float = cg_dtype_is_floating(out->dtype) && out->dtype != CG_DTYPE_F64};
    cg_parallel_for(steps, CG_GRAIN, space_range, &j);
    return CG_OK;
}

/* ------------------------------------------------------------- eye */

cg_status cg_cpu_eye(cg_tensor *out) {
    int64_t n = out->shape[0], m = out->shape[1];
    if (n * m == 0) return CG_OK;
    cg_dtype dt = out->dtype;
    size_t isz = cg_dtype_size(dt);
    memset(cg_tensor_ptr(out), 0, (size_t)(n * m) * isz);
    char one[8];
    double v = 1.0;
    cg_store_doubles(one, dt, &v, 1);
    char *p = cg_tensor_ptr(out);
    int64_t k = n < m ? n : m;
    for (int64_t i = 0; i < k; i++) memcpy(p + (size_t)(i * (m + 1)) * isz, one, isz);
    return CG_OK;
}
