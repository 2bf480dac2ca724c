/* nn_misc.c — the CPU's entries of the other nn ops (src/ops/nn_misc.c):
 * dropout masks, the embedding row gather and renorm_, one_hot and the causal
 * attention mask. */
#include "cpu_kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- dropout (Note [Dropout masks]) */

typedef struct mask_job {
    uint64_t seed, base;
    int64_t numel;
    double keep, kept;
    cg_dtype dt;
    char *out; /* (numel,) contiguous, dtype dt */
} mask_job;

#define MASK_BLOCK 1024
static void mask_range(int64_t b, int64_t e, void *ctx) {
    const mask_job *j = ctx;
    double u[MASK_BLOCK];
    size_t es = cg_dtype_size(j->dt);
    for (int64_t blk = b; blk < e; blk++) {
        int64_t lo = blk * MASK_BLOCK, hi = lo + MASK_BLOCK < j->numel ? lo + MASK_BLOCK : j->numel;
        cg_rng_fill_uniform(j->seed, j->base, lo, hi, 53, u);
        if (j->dt == CG_DTYPE_F32) { /* the common case as a plain loop; the same values */
            float *o = (float *)j->out, kept = (float)j->kept;
            for (int64_t i = lo; i < hi; i++) o[i] = u[i - lo] < j->keep ? kept : 0.0f;
            continue;
        }
        for (int64_t i = lo; i < hi; i++)
            cg_store_f64(j->out + (size_t)i * es, j->dt, u[i - lo] < j->keep ? j->kept : 0.0);
    }
}

cg_status cg_cpu_dropout_mask(cg_tensor *m, double keep, double kept) {
    int64_t n = cg_tensor_numel(m);
    mask_job j = {.numel = n, .keep = keep, .kept = kept, .dt = m->dtype, .out = cg_tensor_ptr(m)};
    cg_rng_reserve(cg_rng_counters(n), &j.seed, &j.base);
    cg_parallel_for((n + MASK_BLOCK - 1) / MASK_BLOCK, 8, mask_range, &j);
    return CG_OK;
}

/* ------------------------------------------------------------- embedding */

cg_status cg_cpu_embedding(cg_tensor *out, const cg_tensor *w, const cg_tensor *idx) {
    int64_t n = cg_tensor_numel(idx), D = w->shape[1];
    size_t row = (size_t)D * cg_dtype_size(w->dtype);
    const char *src = cg_tensor_ptr(w);
    char *dst = cg_tensor_ptr(out);
    const int64_t *ix = (const int64_t *)cg_tensor_ptr(idx);
    for (int64_t i = 0; i < n; i++) memcpy(dst + (size_t)i * row, src + (size_t)ix[i] * row, row);
    return CG_OK;
}

cg_status cg_cpu_embedding_renorm(cg_tensor *weight, const cg_tensor *idx, double max_norm, double norm_type) {
    const char *op = "embedding_renorm_";
    int64_t V = weight->shape[0], D = weight->shape[1];
    bool *seen = cg_calloc_n(op, cg_count_axpb(1, V, 1), 1);
    if (!seen) return cg_set_error(CG_ERR_OOM, "[%s] out of memory", op);
    const int64_t *ix = (const int64_t *)cg_tensor_ptr(idx);
    char *w = cg_tensor_ptr(weight);
    size_t es = cg_dtype_size(weight->dtype);
    const int64_t s0 = weight->strides[0], s1 = weight->strides[1];
    for (int64_t i = 0; i < cg_tensor_numel(idx); i++) {
        int64_t r = ix[i];
        if (seen[r]) continue;
        seen[r] = true;
        double nrm = 0;
        for (int64_t d = 0; d < D; d++) {
            double v = fabs(cg_load_f64(w + (size_t)(r * s0 + d * s1) * es, weight->dtype));
            nrm = isinf(norm_type) ? fmax(nrm, v) : nrm + pow(v, norm_type);
        }
        if (!isinf(norm_type)) nrm = pow(nrm, 1.0 / norm_type);
        if (nrm > max_norm) {
            double sc = max_norm / (nrm + 1e-7);
            for (int64_t d = 0; d < D; d++) {
                char *e = w + (size_t)(r * s0 + d * s1) * es;
                cg_store_f64(e, weight->dtype, cg_load_f64(e, weight->dtype) * sc);
            }
        }
    }
    free(seen);
    return CG_OK;
}

/* ------------------------------------------------------------- one_hot */

cg_status cg_cpu_one_hot_scan(const cg_tensor *idx, bool *negative, int64_t *bad, int64_t *max) {
    const int64_t *ix = (const int64_t *)cg_tensor_ptr(idx);
    int64_t n = cg_tensor_numel(idx), mx = -1;
    *negative = false;
    for (int64_t i = 0; i < n; i++) {
        if (ix[i] < 0) {
            *negative = true;
            *bad = ix[i];
            return CG_OK;
        }
        if (ix[i] > mx) mx = ix[i];
    }
    *max = mx;
    return CG_OK;
}

cg_status cg_cpu_one_hot(cg_tensor *out, const cg_tensor *idx) {
    const int64_t *ix = (const int64_t *)cg_tensor_ptr(idx);
    int64_t n = cg_tensor_numel(idx), num_classes = out->shape[out->ndim - 1];
    int64_t *o = (int64_t *)cg_tensor_ptr(out);
    for (int64_t i = 0; i < n; i++) o[i * num_classes + ix[i]] = 1;
    return CG_OK;
}

/* ------------------------------------------------------------- scaled_dot_product_attention */

cg_status cg_cpu_causal_mask(cg_tensor *m) {
    int64_t L = m->shape[0], S = m->shape[1];
    uint8_t *p = (uint8_t *)cg_tensor_ptr(m);
    for (int64_t i = 0; i < L; i++)
        for (int64_t j = 0; j < S; j++) p[i * S + j] = j <= i;
    return CG_OK;
}
