/* registry.c — the table of backends indexed by device type (Note [Backends]
 * in backend.h) and the device entry points the core layer calls: storage
 * allocation, device names and validity, DLPack devices, the missing-kernel error,
 * and the allocator statistics of each device's pool. */
#include "backend.h"

#include <stdatomic.h>
#include <stdio.h>

static _Atomic(const cg_backend *) g_private = NULL;

static const cg_backend *lookup(cg_device dev) {
    switch (dev.type) {
    case CG_DEVICE_CPU: return &cg_backend_cpu;
    case CG_DEVICE_META: return &cg_backend_meta;
    case CG_DEVICE_PRIVATE: return atomic_load_explicit(&g_private, memory_order_acquire);
    case CG_DEVICE_CUDA: return cg_backend_cuda_get();
    default: return NULL;
    }
}

const cg_backend *cg_backend_of(cg_device dev) {
    const cg_backend *b = lookup(dev);
    CG_ASSERT(b);
    return b;
}

void cg_backend_register_private(const cg_backend *b) { atomic_store_explicit(&g_private, b, memory_order_release); }

bool cg_device_valid(cg_device dev) {
    if (dev.type == CG_DEVICE_CUDA) return lookup(dev) != NULL && dev.index >= 0 && dev.index < cg_cuda_device_count();
    return dev.index == 0 && lookup(dev) != NULL;
}

const char *cg_device_name(cg_device d) {
    if (d.type == CG_DEVICE_CUDA) return "cuda"; /* also where no device is usable, for the messages that say so */
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

bool cg_device_to_dlpack(cg_device d, int32_t *type, int32_t *id) {
    const cg_backend *b = cg_device_valid(d) ? lookup(d) : NULL;
    if (!b || !b->dlpack_type) return false;
    *type = b->dlpack_type;
    *id = d.index;
    return true;
}

bool cg_device_from_dlpack(int32_t type, int32_t id, cg_device *d) {
    static const cg_device_type k_types[] = {CG_DEVICE_CPU, CG_DEVICE_META, CG_DEVICE_PRIVATE, CG_DEVICE_CUDA};
    for (size_t i = 0; type > 0 && i < sizeof k_types / sizeof k_types[0]; i++) {
        cg_device c = {k_types[i], id};
        const cg_backend *b = cg_device_valid(c) ? lookup(c) : NULL;
        if (b && b->dlpack_type == type) {
            *d = c;
            return true;
        }
    }
    return false;
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

cg_status cg_device_copy_from_host(void *dst, const void *src, size_t nbytes, cg_device dev) {
    return nbytes ? cg_backend_of(dev)->copy_from_host(dst, src, nbytes, dev) : CG_OK;
}

cg_status cg_device_copy_to_host(void *dst, const void *src, size_t nbytes, cg_device dev) {
    return nbytes ? cg_backend_of(dev)->copy_to_host(dst, src, nbytes, dev) : CG_OK;
}

cg_status cg_device_invalid(const char *op, cg_device dev) {
    if (dev.type == CG_DEVICE_CUDA) {
        const char *why = cg_cuda_unavailable_reason();
        if (why) return cg_set_error(CG_ERR_DEVICE, "[%s] cannot use device cuda:%d: %s", op, dev.index, why);
        return cg_set_error(CG_ERR_DEVICE, "[%s] invalid device ordinal cuda:%d (%d CUDA devices)", op, dev.index,
                            cg_cuda_device_count());
    }
    return cg_set_error(CG_ERR_DEVICE, "[%s] invalid device %d:%d", op, (int)dev.type, dev.index);
}

cg_status cg_kernel_missing(const char *op, cg_device dev) {
    return cg_set_error(CG_ERR_NOT_IMPLEMENTED, "[%s] is not implemented for device '%s'", op, cg_device_name(dev));
}

cg_status cg_backend_failed(const char *op, cg_device dev, cg_dtype dt, cg_status st) {
    if (st == CG_ERR_NOT_IMPLEMENTED)
        return cg_set_error(st, "[%s] is not implemented for device '%s' (dtype %s)", op, cg_device_name(dev),
                            cg_dtype_name(dt));
    char msg[512];
    snprintf(msg, sizeof msg, "%s", cg_last_error_message());
    return cg_set_error(st, "[%s] %s", op, msg);
}

/* ------------------------------------------------------------- allocator statistics
 * Each device's caching pool (Note [Allocator]); a device without one (meta,
 * or an invalid device) reports zeros and has nothing to reset or empty. */
static cg_cache_pool *pool_of(cg_device dev) {
    if (dev.type == CG_DEVICE_CUDA) return cg_cuda_pool(dev.index);
    const cg_backend *b = cg_device_valid(dev) ? lookup(dev) : NULL;
    return b ? b->memory : NULL;
}

cg_alloc_stats cg_allocator_stats(cg_device dev) {
    cg_cache_pool *p = pool_of(dev);
    if (p) return cg_pool_stats(p);
    cg_alloc_stats zero = {0};
    return zero;
}

void cg_allocator_reset_peak(cg_device dev) {
    cg_cache_pool *p = pool_of(dev);
    if (p) cg_pool_reset_peak(p);
}

void cg_allocator_empty_cache(cg_device dev) {
    cg_cache_pool *p = pool_of(dev);
    if (p) cg_pool_empty(p);
    if (dev.type == CG_DEVICE_CPU) cg_tensor_blocks_empty(); /* tensor structs are host memory */
}
