/* storage.c — refcounted storage: a block from the device allocator (or
 * external memory with a deleter) plus the shared version counter. */
#include "core_internal.h"

cg_storage *cg_storage_new(size_t nbytes, cg_device dev) {
    cg_storage *s = malloc(sizeof *s);
    if (!s) {
        cg_set_error(CG_ERR_OOM, "[storage] out of memory");
        return NULL;
    }
    s->data = NULL;
    if (dev.type == CG_DEVICE_CPU && nbytes > 0) {
        s->data = cg_alloc(nbytes, dev);
        if (!s->data) {
            free(s);
            return NULL;
        }
    }
    atomic_init(&s->refcount, 1);
    atomic_init(&s->version, 0);
    s->nbytes = nbytes;
    s->device = dev;
    s->external = false;
    s->deleter = NULL;
    s->deleter_ctx = NULL;
    return s;
}

void cg_storage_retain(cg_storage *s) { atomic_fetch_add_explicit(&s->refcount, 1, memory_order_relaxed); }

void cg_storage_release(cg_storage *s) {
    if (!s || atomic_fetch_sub_explicit(&s->refcount, 1, memory_order_acq_rel) != 1) return;
    if (s->external) {
        if (s->deleter) s->deleter(s->deleter_ctx);
    } else {
        cg_free(s->data, s->nbytes, s->device);
    }
    free(s);
}
