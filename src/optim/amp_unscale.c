/* amp_unscale.c — GradScaler's fused gradient check: one call multiplies
 * every gradient of a list by 1/scale in place and records in one flag
 * whether any element of any of them is inf or NaN (PyTorch's
 * _amp_foreach_non_finite_check_and_unscale_). */
#include "../dispatch/dispatch_internal.h"

static bool scalar_f32(const cg_tensor *t) {
    return t && t->dtype == CG_DTYPE_F32 && cg_tensor_numel(t) == 1 && cg_device_host_addressable(t->device);
}

CG_PROF_FNV(cg_status, cg_amp_unscale_, "_amp_foreach_non_finite_check_and_unscale_", (int64_t n,
            cg_tensor *const *grads, cg_tensor *found_inf, cg_tensor *inv_scale), (n, grads, found_inf, inv_scale), 0,
            NULL) {
    const char *op = "_amp_foreach_non_finite_check_and_unscale_";
    CG_CHECK_S(scalar_f32(found_inf) && scalar_f32(inv_scale), CG_ERR_DTYPE,
               "[%s] found_inf and inv_scale must be one-element float32 tensors", op);
    for (int64_t i = 0; i < n; i++) {
        CG_CHECK_S(grads[i], CG_ERR_VALUE, "[%s] gradient %lld is NULL", op, (long long)i);
        CG_CHECK_S(cg_dtype_is_floating(grads[i]->dtype) && cg_device_has_data(grads[i]->device), CG_ERR_DTYPE,
                   "[%s] gradient %lld: expected a floating CPU tensor, got dtype %s", op, (long long)i,
                   cg_dtype_name(grads[i]->dtype));
    }
    float s = *(const float *)cg_tensor_ptr(inv_scale);
    bool bad = false;
    for (int64_t i = 0; i < n; i++) {
        cg_tensor *g = grads[i];
        cg_status st;
        if (cg_tensor_is_contiguous(g)) {
            CG_RUN_KERNEL(st, op, g->device, amp_unscale, g, s, &bad);
            if (st) return st;
            cg_storage_bump_version(g->storage);
            continue;
        }
        bool prev = cg_set_grad_enabled(false); /* Note [Optimizer staging]: the rare strided case */
        cg_tensor *copy = cg_contiguous(g); /* a fresh copy: g is not contiguous */
        st = copy ? CG_OK : cg_last_error();
        if (copy) {
            CG_RUN_KERNEL(st, op, g->device, amp_unscale, copy, s, &bad);
            if (!st) st = cg_copy_(g, copy);
        }
        cg_tensor_release(copy);
        cg_set_grad_enabled(prev);
        if (st) return st;
    }
    if (bad) *(float *)cg_tensor_ptr(found_inf) = 1.0f;
    return CG_OK;
}
