/* schema.c — the schema guard every driver runs (determinism check, AMP
 * effective dtype) and the validation helpers shared by the drivers. */
#include "dispatch_internal.h"

cg_status cg_check_same(const char *op, int n, cg_tensor *const *ts, unsigned skip_mask) {
    int first = -1;
    for (int i = 0; i < n; i++) {
        CG_CHECK_S(ts[i], CG_ERR_VALUE, "[%s] argument %d is NULL", op, i);
        if (!cg_device_eq(ts[i]->device, ts[0]->device))
            return cg_set_error(CG_ERR_DEVICE, "[%s] expected all tensors to be on the same device, but found %s and %s",
                                op, cg_device_name(ts[0]->device), cg_device_name(ts[i]->device));
        if (i < 32 && (skip_mask & (1u << i))) continue;
        if (first < 0) first = i;
        else if (ts[i]->dtype != ts[first]->dtype)
            return cg_set_error(CG_ERR_DTYPE, "[%s] dtype mismatch: %s and %s (the engine never promotes; cast first)", op,
                                cg_dtype_name(ts[first]->dtype), cg_dtype_name(ts[i]->dtype));
    }
    return CG_OK;
}

/* Note [Autocast casts]: as in PyTorch, autocast casts floating inputs other
 * than float64 (which it never touches) to the policy's dtype: LOWER -> the
 * autocast dtype (parameters through the cast cache), FP32 -> float32.
 * Integer and bool inputs pass through. */
static bool amp_eligible(const cg_tensor *t, cg_dtype target) {
    return t && cg_dtype_is_floating(t->dtype) && t->dtype != CG_DTYPE_F64 && t->dtype != target;
}

cg_dtype cg_amp_target(const cg_op_schema *s) {
    return s->amp == CG_AMP_LOWER ? cg_get_autocast_dtype() : CG_DTYPE_F32;
}

cg_status cg_schema_guard(const cg_op_schema *s, int n, cg_tensor *const *in, cg_tensor **out, bool *owned) {
    *owned = false;
    if (s->nondeterministic && cg_alert_nondeterministic(s->name)) return cg_last_error();
    cg_dtype target = CG_DTYPE_F32;
    bool cast = false;
    if (cg_autocast_active() && s->amp != CG_AMP_KEEP) {
        target = cg_amp_target(s);
        for (int i = 0; i < n; i++) cast |= amp_eligible(in[i], target);
    }
    if (!cast) {
        for (int i = 0; i < n; i++) out[i] = in[i];
        return CG_OK;
    }
    for (int i = 0; i < n; i++) {
        if (amp_eligible(in[i], target)) {
            out[i] = s->amp == CG_AMP_LOWER ? cg_autocast_cached_cast(in[i], target) : cg_to_dtype(in[i], target);
        } else {
            out[i] = in[i];
            if (in[i]) cg_tensor_retain(in[i]);
        }
        if (in[i] && !out[i]) {
            cg_release_all(i, out);
            return cg_last_error();
        }
    }
    *owned = true;
    return CG_OK;
}

unsigned cg_amp_cast_mask(const cg_op_schema *s, int n, cg_tensor *const *in) {
    if (!cg_autocast_active() || s->amp == CG_AMP_KEEP) return 0;
    cg_dtype target = cg_amp_target(s);
    unsigned mask = 0;
    for (int i = 0; i < n && i < 32; i++)
        if (amp_eligible(in[i], target)) mask |= 1u << i;
    return mask;
}
