/* state.c — global and thread-local engine state: grad mode, inference mode,
 * determinism, autocast and anomaly mode (all read by the schema guard and
 * the autograd engine); the CPU level this build was compiled for; and the
 * release (cg_version). */
#include "core_internal.h"

#include <stdio.h>

static _Thread_local bool tl_grad_enabled = true;
static _Thread_local bool tl_inference = false;
static _Thread_local bool tl_autocast = false;
static _Thread_local cg_dtype tl_autocast_dtype = CG_DTYPE_BF16;
static _Thread_local bool tl_anomaly = false;
static atomic_bool g_deterministic = false;
static atomic_bool g_det_warn_only = false;

bool cg_set_grad_enabled(bool enabled) {
    bool prev = tl_grad_enabled;
    tl_grad_enabled = enabled;
    return prev;
}
bool cg_is_grad_enabled(void) { return tl_grad_enabled && !tl_inference; }

bool cg_set_inference_mode(bool enabled) {
    bool prev = tl_inference;
    tl_inference = enabled;
    return prev;
}
bool cg_is_inference_mode(void) { return tl_inference; }

void cg_set_deterministic(bool enabled, bool warn_only) {
    atomic_store(&g_deterministic, enabled);
    atomic_store(&g_det_warn_only, warn_only);
}
bool cg_is_deterministic(void) { return atomic_load(&g_deterministic); }
bool cg_warn_only_deterministic(void) { return atomic_load(&g_det_warn_only); }

static _Atomic(cg_warning_fn) g_warning_handler = NULL;

void cg_set_warning_handler(cg_warning_fn fn) { atomic_store(&g_warning_handler, fn); }

cg_status cg_alert_nondeterministic(const char *op) {
    if (!cg_is_deterministic()) return CG_OK;
    char msg[512];
    snprintf(msg, sizeof msg,
             "[%s] does not have a deterministic implementation, but you set use_deterministic_algorithms(True)%s",
             op ? op : "?", cg_warn_only_deterministic() ? " with warn_only=True" : "");
    if (!cg_warn_only_deterministic()) return cg_set_error(CG_ERR_RUNTIME, "%s", msg);
    cg_warning_fn fn = atomic_load(&g_warning_handler);
    if (!fn) {
        fprintf(stderr, "cgrad warning: %s\n", msg);
        return CG_OK;
    }
    return fn(msg) ? cg_set_error(CG_ERR_RUNTIME, "%s", msg) : CG_OK;
}

void cg_set_autocast(bool enabled, cg_dtype dtype) {
    tl_autocast = enabled;
    tl_autocast_dtype = dtype;
}
bool cg_is_autocast_enabled(void) { return tl_autocast; }
cg_dtype cg_get_autocast_dtype(void) { return tl_autocast_dtype; }
bool cg_autocast_active(void) { return tl_autocast; }
bool cg_autocast_suspend(void) {
    bool prev = tl_autocast;
    tl_autocast = false;
    return prev;
}
void cg_autocast_resume(bool prev) { tl_autocast = prev; }

bool cg_set_anomaly_enabled(bool enabled) {
    bool prev = tl_anomaly;
    tl_anomaly = enabled;
    return prev;
}
bool cg_is_anomaly_enabled(void) { return tl_anomaly; }

/* from the compiler's target macros (Note [CPU levels], cpu_features.c) */
cg_cpu_level cg_cpu_level_built(void) {
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512CD__) && defined(__AVX512DQ__) && \
    defined(__AVX512VL__)
    return CG_CPU_LEVEL_AVX512;
#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
    return CG_CPU_LEVEL_AVX2;
#else
    return CG_CPU_LEVEL_BASELINE;
#endif
}

const char *cg_version(void) { return CG_VERSION_STRING; }
