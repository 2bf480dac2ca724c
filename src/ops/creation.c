/* creation.c — deterministic factories: zeros, ones, full, their _like forms,
 * and empty_like. (Random factories live in random.c.) */
#include "../kernel/kernel_internal.h"

#include <math.h>

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

/* arange: ceil((end - start) / step) values start + i*step */
cg_tensor *cg_arange(double start, double end, double step, cg_dtype dt, cg_device dev) {
    CG_CHECK(step != 0, CG_ERR_VALUE, "[arange] step must be nonzero");
    CG_CHECK(isfinite(start) && isfinite(end), CG_ERR_VALUE, "[arange] unsupported range: %g -> %g", start, end);
    CG_CHECK((step > 0 && end >= start) || (step < 0 && end <= start), CG_ERR_VALUE,
             "[arange] upper bound and larger bound inconsistent with step sign (start %g, end %g, step %g)", start, end, step);
    double nd = ceil((end - start) / step);
    CG_CHECK(nd < 9.2e18, CG_ERR_VALUE, "[arange] too many elements (%g)", nd);
    int64_t n = (int64_t)nd;
    cg_tensor *t = cg_empty(1, &n, dt, dev);
    if (!t || cg_is_meta(t)) return t;
    char *p = cg_tensor_ptr(t);
    size_t isz = cg_dtype_size(dt);
    for (int64_t i = 0; i < n; i++) cg_store_f64(p + (size_t)i * isz, dt, start + (double)i * step);
    return t;
}
