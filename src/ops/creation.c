/* creation.c — deterministic factories: zeros, ones, full, their _like forms,
 * and empty_like. (Random factories live in random.c.) */
#include "../kernel/kernel_internal.h"

cg_tensor *cg_full(int ndim, const int64_t *shape, double value, cg_dtype dt, cg_device dev) {
    cg_tensor *t = cg_empty(ndim, shape, dt, dev);
    if (t && cg_fill_(t, value)) {
        cg_tensor_release(t);
        return NULL;
    }
    if (t) atomic_store(&t->storage->version, 0);
    return t;
}
cg_tensor *cg_zeros(int ndim, const int64_t *shape, cg_dtype dt, cg_device dev) { return cg_full(ndim, shape, 0.0, dt, dev); }
cg_tensor *cg_ones(int ndim, const int64_t *shape, cg_dtype dt, cg_device dev) { return cg_full(ndim, shape, 1.0, dt, dev); }

cg_tensor *cg_empty_like(cg_tensor *t) {
    CG_CHECK(t, CG_ERR_VALUE, "[empty_like] argument is NULL");
    return cg_empty(t->ndim, t->shape, t->dtype, t->device);
}
cg_tensor *cg_full_like(cg_tensor *t, double value) {
    CG_CHECK(t, CG_ERR_VALUE, "[full_like] argument is NULL");
    return cg_full(t->ndim, t->shape, value, t->dtype, t->device);
}
cg_tensor *cg_zeros_like(cg_tensor *t) { return cg_full_like(t, 0.0); }
cg_tensor *cg_ones_like(cg_tensor *t) { return cg_full_like(t, 1.0); }
