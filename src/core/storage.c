/* storage.c — refcounted storage: a block from the device allocator (or
 * external memory with a deleter) plus the shared version counter; a fresh
 * tensor's storage may live inside its tensor block (Note [Tensor block]). */
#include "core_internal.h"

#include <stddef.h>

cg_status cg_storage_init(cg_storage *s, size_t nbytes, cg_device dev, bool embedded) {
    if (cg_device_alloc(&s->data, nbytes, dev)) return CG_ERR_OOM;
    atomic_init(&s->refcount, 1);
    atomic_init(&s->version, 0);
    s->nbytes = nbytes;
    s->device = dev;
    s->external = false;
    s->embedded = embedded;
    s->readonly = false;
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
