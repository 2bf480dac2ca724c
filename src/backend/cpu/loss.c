/* loss.c — the CPU's value checks of the losses and samplers: class targets
 * in range (src/ops/nn_loss.c) and values inside an interval (probabilities
 * of binary_cross_entropy and bernoulli, the std of normal). */
#include "cpu_kernels.h"

cg_status cg_cpu_find_outside(const cg_tensor *t, double lo, double hi, bool *found, double *bad) {
    int64_t n = cg_tensor_numel(t);
    const char *p = cg_tensor_ptr(t);
    size_t isz = cg_dtype_size(t->dtype);
    double buf[CG_CHUNK];
    *found = false;
    for (int64_t s = 0; s < n; s += CG_CHUNK) {
        int64_t m = n - s < CG_CHUNK ? n - s : CG_CHUNK;
        cg_load_doubles(p + (size_t)s * isz, t->dtype, buf, m);
        for (int64_t k = 0; k < m; k++)
            if (!(buf[k] >= lo && buf[k] <= hi)) {
                *bad = buf[k];
                *found = true;
                return CG_OK;
            }
    }
    return CG_OK;
}

cg_status cg_cpu_class_target_check(const cg_tensor *target, int64_t C, int64_t ignore, bool *found, int64_t *bad) {
    const int64_t *t = (const int64_t *)cg_tensor_ptr(target);
    int64_t n = cg_tensor_numel(target);
    *found = false;
    for (int64_t i = 0; i < n; i++)
        if (t[i] != ignore && (t[i] < 0 || t[i] >= C)) {
            *bad = t[i];
            *found = true;
            break;
        }
    return CG_OK;
}
