/* storage.c — refcounted storage: a block from the device allocator (or
 * external memory with a deleter) plus the shared version counter; a fresh
 * tensor's storage may live inside its tensor block (Note [Tensor block]). */
#include "core_internal.h"

#include <stddef.h>
#include <string.h>

cg_status cg_storage_init(cg_storage *s, size_t nbytes, cg_device dev, bool embedded) {
    if (cg_device_alloc(&s->data, nbytes, dev)) return CG_ERR_OOM;
    atomic_init(&s->refcount, 1);
    atomic_init(&s->version, 0);
    s->nbytes = nbytes;
    s->device = dev;
    s->external = false;
    s->embedded = embedded;
    s->readonly = false;
    s->inference = cg_is_inference_mode();
    s->deleter = NULL;
    s->deleter_ctx = NULL;
    return CG_OK;
}

cg_storage *cg_storage_new(size_t nbytes, cg_device dev) {
    cg_storage *s = malloc(sizeof *s);
    if (!s) {
        cg_set_error(CG_ERR_OOM, "[storage] out of memory");
        return NULL;
    }
    if (cg_storage_init(s, nbytes, dev, false)) {
        free(s);
        return NULL;
    }
    return s;
}

void cg_storage_retain(cg_storage *s) { atomic_fetch_add_explicit(&s->refcount, 1, memory_order_relaxed); }

void cg_storage_release(cg_storage *s) {
    if (!s || atomic_fetch_sub_explicit(&s->refcount, 1, memory_order_acq_rel) != 1) return;
    if (s->external) {
        if (s->deleter) s->deleter(s->deleter_ctx);
    } else {
        cg_device_free(s->data, s->nbytes, s->device);
    }
    if (s->embedded)
        cg_tensor_block_free((cg_tensor_block *)(void *)((char *)s - offsetof(cg_tensor_block, storage)));
    else
        free(s);
}

cg_status cg_tensor_move_storage(cg_tensor *t, void *data, size_t nbytes, void (*deleter)(void *ctx), void *ctx) {
    cg_storage *s = t->storage;
    CG_CHECK_S(cg_device_eq(s->device, cg_cpu()), CG_ERR_DEVICE, "[move_storage] the storage is on %s, not the CPU",
             cg_device_name(s->device));
    CG_CHECK_S(nbytes >= s->nbytes && (data || !s->nbytes), CG_ERR_VALUE,
             "[move_storage] the new memory holds %zu bytes, and the storage %zu", nbytes, s->nbytes);
    if (s->nbytes) memcpy(data, s->data, s->nbytes);
    void *old = s->data;
    bool was_external = s->external;
    void (*old_deleter)(void *) = s->deleter;
    void *old_ctx = s->deleter_ctx;
    s->data = data;
    s->external = true;
    s->deleter = deleter;
    s->deleter_ctx = ctx;
    if (was_external) {
        if (old_deleter) old_deleter(old_ctx);
    } else {
        cg_device_free(old, s->nbytes, s->device);
    }
    return CG_OK;
}
