/* registry.c — the table of backends indexed by device type (Note [Backends]
 * in backend.h) and the device entry points the core layer calls: storage
 * allocation, device names and validity, direct-access and per-op refusals. */
#include "backend.h"

#include <stdatomic.h>

static _Atomic(const cg_backend *) g_private = NULL;

static const cg_backend *lookup(cg_device dev) {
    switch (dev.type) {
    case CG_DEVICE_CPU: return &cg_backend_cpu;
    case CG_DEVICE_META: return &cg_backend_meta;
    case CG_DEVICE_PRIVATE: return atomic_load_explicit(&g_private, memory_order_acquire);
    default: return NULL;
    }
}

const cg_backend *cg_backend_of(cg_device dev) {
    const cg_backend *b = lookup(dev);
    CG_ASSERT(b);
    return b;
}

void cg_backend_register_private(const cg_backend *b) { atomic_store_explicit(&g_private, b, memory_order_release); }

bool cg_device_valid(cg_device dev) { return dev.index == 0 && lookup(dev) != NULL; }

const char *cg_device_name(cg_device d) {
    const cg_backend *b = lookup(d);
    return b ? b->name : "invalid";
}

bool cg_device_host_addressable(cg_device dev) {
    const cg_backend *b = lookup(dev);
    return b && b->host_addressable;
}

bool cg_device_has_data(cg_device dev) {
    const cg_backend *b = lookup(dev);
    return b && b->has_data;
}

cg_status cg_device_alloc(void **out, size_t nbytes, cg_device dev) {
    const cg_backend *b = cg_backend_of(dev);
    *out = NULL;
    if (!b->has_data || nbytes == 0) return CG_OK;
    *out = b->alloc(nbytes, dev);
    return *out ? CG_OK : CG_ERR_OOM;
}

void cg_device_free(void *p, size_t nbytes, cg_device dev) {
    if (p) cg_backend_of(dev)->free(p, nbytes, dev);
}

cg_status cg_kernel_missing(const char *op, cg_device dev) {
    return cg_set_error(CG_ERR_NOT_IMPLEMENTED, "[%s] is not implemented for device '%s'", op, cg_device_name(dev));
}

bool cg_device_refused(const char *op, int n, cg_tensor *const *in) {
    for (int i = 0; i < n; i++) {
        if (!in[i] || cg_backend_of(in[i]->device)->host_kernels) continue;
        cg_kernel_missing(op, in[i]->device);
        return true;
    }
    return false;
}
