/* amp_unscale.c — GradScaler's fused gradient check: one call multiplies
 * every gradient of a list by 1/scale in place and records in one flag
 * whether any element of any of them is inf or NaN (PyTorch's
 * _amp_foreach_non_finite_check_and_unscale_). */
#include "../core/core_internal.h"

#include <math.h>

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

static bool unscale_flat(cg_tensor *t, float s) {
    int64_t n = cg_tensor_numel(t);
    void *p = cg_tensor_ptr(t);
    switch (t->dtype) {
    case CG_DTYPE_F32: return unscale_f32(p, n, s);
    case CG_DTYPE_F64: return unscale_f64(p, n, s);
    case CG_DTYPE_F16: return unscale_f16(p, n, s);
    default: return unscale_bf16(p, n, s);
    }
}

static bool scalar_f32(const cg_tensor *t) {
    return t && t->dtype == CG_DTYPE_F32 && cg_tensor_numel(t) == 1 && !cg_is_meta((cg_tensor *)t);
}

CG_PROF_FNV(cg_status, cg_amp_unscale_, "_amp_foreach_non_finite_check_and_unscale_", (int64_t n,
            cg_tensor *const *grads, cg_tensor *found_inf, cg_tensor *inv_scale), (n, grads, found_inf, inv_scale), 0,
            NULL) {
    const char *op = "_amp_foreach_non_finite_check_and_unscale_";
    CG_CHECK_S(scalar_f32(found_inf) && scalar_f32(inv_scale), CG_ERR_DTYPE,
               "[%s] found_inf and inv_scale must be one-element float32 tensors", op);
    for (int64_t i = 0; i < n; i++) {
        CG_CHECK_S(grads[i], CG_ERR_VALUE, "[%s] gradient %lld is NULL", op, (long long)i);
        CG_CHECK_S(cg_dtype_is_floating(grads[i]->dtype) && !cg_is_meta(grads[i]), CG_ERR_DTYPE,
                   "[%s] gradient %lld: expected a floating CPU tensor, got dtype %s", op, (long long)i,
                   cg_dtype_name(grads[i]->dtype));
    }
    float s = *(const float *)cg_tensor_ptr(inv_scale);
    bool bad = false;
    for (int64_t i = 0; i < n; i++) {
        cg_tensor *g = grads[i];
        if (cg_tensor_is_contiguous(g)) {
            bad |= unscale_flat(g, s);
            cg_storage_bump_version(g->storage);
            continue;
        }
        bool prev = cg_set_grad_enabled(false); /* Note [Optimizer staging]: the rare strided case */
        cg_tensor *copy = cg_contiguous(g); /* a fresh copy: g is not contiguous */
        cg_status st = copy ? CG_OK : cg_last_error();
        if (copy) {
            bad |= unscale_flat(copy, s);
            st = cg_copy_(g, copy);
        }
        cg_tensor_release(copy);
        cg_set_grad_enabled(prev);
        if (st) return st;
    }
    if (bad) *(float *)cg_tensor_ptr(found_inf) = 1.0f;
    return CG_OK;
}
