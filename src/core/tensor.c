/* tensor.c — the tensor struct: creation over storage, refcounting, metadata
 * accessors and host-side element access. */
#include "core_internal.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* fill a tensor struct over s (which the caller has given it a reference to) */
static void tensor_init(cg_tensor *t, cg_storage *s, int64_t offset, int ndim, const int64_t *shape,
                        const int64_t *strides, cg_dtype dt) {
    atomic_init(&t->refcount, 1);
    t->storage = s;
    t->offset = offset;
    t->ndim = ndim;
    t->dtype = dt;
    t->device = s->device;
    if (ndim) memcpy(t->shape, shape, (size_t)ndim * sizeof *shape);
    if (strides) {
        if (ndim) memcpy(t->strides, strides, (size_t)ndim * sizeof *strides);
    } else {
        cg_contiguous_strides(ndim, shape, t->strides);
    }
    t->requires_grad = false;
    t->retains_grad = false;
    t->is_view = false;
    t->base = NULL;
    t->output_nr = 0;
    t->grad = NULL;
    t->grad_fn = NULL;
    t->grad_acc = NULL;
    t->hooks = NULL;
    t->pyobj = NULL;
    t->home = NULL;
    t->version_bias = 0;
}

cg_tensor *cg_tensor_make(cg_storage *s, int64_t offset, int ndim, const int64_t *shape,
                          const int64_t *strides, cg_dtype dt) {
    cg_tensor *t = malloc(sizeof *t);
    if (!t) {
        cg_set_error(CG_ERR_OOM, "[tensor] out of memory");
        return NULL;
    }
    cg_storage_retain(s);
    tensor_init(t, s, offset, ndim, shape, strides, dt);
    return t;
}

cg_tensor *cg_tensor_alias(const cg_tensor *t) {
    return cg_tensor_make(t->storage, t->offset, t->ndim, t->shape, t->strides, t->dtype);
}

cg_tensor *cg_tensor_view_of(const cg_tensor *t, int ndim, const int64_t *shape,
                             const int64_t *strides, int64_t offset) {
    cg_tensor *v = cg_tensor_make(t->storage, offset, ndim, shape, strides, t->dtype);
    if (v) {
        v->is_view = true;
        v->base = t->base ? t->base : (cg_tensor *)t;
        cg_tensor_retain(v->base);
    }
    return v;
}

/* s is the storage embedded beside t in t's own block (Note [Tensor block]) */
static bool is_own_block_storage(const cg_tensor *t, const cg_storage *s) {
    return s->embedded && (uintptr_t)s == (uintptr_t)t + offsetof(cg_tensor_block, storage);
}

void cg_tensor_retain(cg_tensor *t) { atomic_fetch_add_explicit(&t->refcount, 1, memory_order_relaxed); }

void cg_tensor_release(cg_tensor *t) {
    if (!t || atomic_fetch_sub_explicit(&t->refcount, 1, memory_order_acq_rel) != 1) return;
    if (t->retains_grad && t->grad_fn) cg_node_drop_retain_hook(t->grad_fn, t);
    for (cg_hook *h = t->hooks; h;) {
        cg_hook *n = h->next;
        if (h->ctx_free) h->ctx_free(h->ctx);
        free(h);
        h = n;
    }
    cg_tensor_release(t->grad);
    cg_tensor_release(t->base);
    if (t->grad_fn) cg_node_release(t->grad_fn);
    cg_storage *s = t->storage, *home = t->home;
    bool own_block = home || is_own_block_storage(t, s);
    cg_storage_release(s); /* frees the block too when t's storage is embedded and this was its last reference */
    if (home) cg_storage_release(home); /* last: t lives in that block */
    if (!own_block) free(t);
}

cg_tensor *cg_tensor_new(const char *op, int ndim, const int64_t *shape, cg_dtype dt, cg_device dev) {
    int64_t numel;
    CG_CHECK(dt >= 0 && dt < CG_DTYPE_COUNT, CG_ERR_DTYPE, "[%s] invalid dtype %d", op, (int)dt);
    if (!cg_device_valid(dev)) {
        cg_device_invalid(op, dev);
        return NULL;
    }
    size_t isz = cg_itemsize(dt);
    if (cg_shape_check(op, ndim, shape, isz, &numel)) return NULL;
    cg_tensor_block *b = cg_tensor_block_alloc();
    if (!b) return NULL;
    if (cg_storage_init(&b->storage, (size_t)numel * isz, dev, true)) {
        cg_tensor_block_free(b);
        return NULL;
    }
    tensor_init(&b->tensor, &b->storage, 0, ndim, shape, NULL, dt);
    return &b->tensor;
}

cg_tensor *cg_tensor_new_strided(const char *op, int ndim, const int64_t *shape, const int64_t *strides, cg_dtype dt,
                                 cg_device dev) {
    cg_tensor *t = cg_tensor_new(op, ndim, shape, dt, dev);
    if (t && strides && ndim) memcpy(t->strides, strides, (size_t)ndim * sizeof *strides);
    return t;
}

CG_PROF_FN0(cg_tensor *, cg_empty, "empty", (int ndim, const int64_t *shape, cg_dtype dt, cg_device dev), (ndim, shape,
            dt, dev)) {
    return cg_tensor_new("empty", ndim, shape, dt, dev);
}

cg_status cg_tensor_resize_(cg_tensor *t, int ndim, const int64_t *shape) {
    CG_CHECK_S(t, CG_ERR_VALUE, "[resize_] argument is NULL");
    CG_CHECK_S(!t->requires_grad, CG_ERR_RUNTIME, "[resize_] cannot resize variables that require grad");
    int64_t numel;
    size_t isz = cg_itemsize(t->dtype);
    cg_status st = cg_shape_check("resize_", ndim, shape, isz, &numel);
    if (st) return st;
    CG_CHECK_S(t->offset <= (INT64_MAX / (int64_t)isz) - numel, CG_ERR_VALUE, "[resize_] storage size overflows");
    size_t need = (size_t)(t->offset + numel) * isz;
    cg_storage *s = t->storage;
    if (need > s->nbytes) {
        CG_CHECK_S(!s->external, CG_ERR_RUNTIME,
                   "[resize_] Trying to resize storage that is not resizable (memory not owned by cgrad, %zu bytes; "
                   "%zu needed)", s->nbytes, need);
        if (cg_device_host_addressable(s->device)) {
            void *data;
            if (cg_device_alloc(&data, need, s->device)) return CG_ERR_OOM;
            if (s->nbytes) memcpy(data, s->data, s->nbytes);
            cg_device_free(s->data, s->nbytes, s->device);
            s->data = data;
        } else {
            CG_CHECK_S(!cg_device_has_data(s->device), CG_ERR_NOT_IMPLEMENTED, "[resize_] is not implemented for device '%s'",
                       cg_device_name(s->device));
        }
        s->nbytes = need;
    }
    t->ndim = ndim;
    if (ndim) memcpy(t->shape, shape, (size_t)ndim * sizeof *shape);
    cg_contiguous_strides(ndim, t->shape, t->strides);
    cg_storage_bump_version(s);
    return CG_OK;
}

/* Note [Data assignment]: `t.data = src` (PyTorch's set_data) keeps t itself,
 * so its autograd identity stays: requires_grad, .grad, hooks, grad_fn and the
 * AccumulateGrad node that graphs recorded before the assignment point at.
 * Only the data side moves: t shares src's storage from then on, with src's
 * offset, shape, strides and dtype. Two details follow from the block layout
 * and the storage-held version counter:
 *  - t's struct may live in its first storage's block (Note [Tensor block]);
 *    t keeps a reference to that storage in `home` and drops it last, so the
 *    block outlives t.
 *  - the version counter lives on the storage; version_bias keeps t's version
 *    where it was, so saved-tensor checks neither fire on the assignment itself
 *    nor miss later in-place writes. (PyTorch gives t a counter of its own; here
 *    in-place writes to src also count as writes to t, which can only turn a
 *    silent use of changed data into the "modified by an inplace operation"
 *    error.) */
cg_status cg_tensor_set_data(cg_tensor *t, const cg_tensor *src) {
    CG_CHECK_S(t && src, CG_ERR_VALUE, "[set_data] argument is NULL");
    CG_CHECK_S(!t->requires_grad || cg_dtype_is_floating(src->dtype), CG_ERR_RUNTIME,
               "[set_data] data set to a tensor that requires gradients must be floating point or complex dtype "
               "(got %s)", cg_dtype_name(src->dtype));
    if (t == src) return CG_OK;
    uint64_t version = cg_tensor_version(t);
    cg_storage *old = t->storage;
    cg_storage_retain(src->storage);
    if (!t->home && is_own_block_storage(t, old)) t->home = old; /* keeps t's reference */
    else cg_storage_release(old);
    t->storage = src->storage;
    t->device = src->device;
    t->offset = src->offset;
    t->ndim = src->ndim;
    t->dtype = src->dtype;
    if (src->ndim) {
        memcpy(t->shape, src->shape, (size_t)src->ndim * sizeof *src->shape);
        memcpy(t->strides, src->strides, (size_t)src->ndim * sizeof *src->strides);
    }
    t->version_bias = version - atomic_load(&t->storage->version);
    return CG_OK;
}

/* Note [Read-only memory]: a tensor over memory its owner exported read-only
 * (a bytes object, a read-only buffer or mmap, a non-writable NumPy array, a
 * DLPack tensor flagged read-only) is marked so on its storage, and so are all
 * its views, detaches and `.data`. Every in-place write checks the mark first
 * (cg_check_inplace, the optimizers, batch_norm's running statistics,
 * embedding's max_norm) and raises; reading, and ops that make new tensors,
 * work as usual. PyTorch only warns and lets the write go to memory that may
 * be shared or mapped from a file; refusing keeps that from corrupting it.
 * clone() gives a writable copy. */
void cg_tensor_mark_readonly(cg_tensor *t) { t->storage->readonly = true; }
bool cg_tensor_is_readonly(const cg_tensor *t) { return t->storage->readonly; }
bool cg_tensor_is_inference(const cg_tensor *t) { return t->storage->inference; }

cg_status cg_check_writable(const char *op, const cg_tensor *t) {
    if (!t->storage->readonly) return CG_OK;
    return cg_set_error(CG_ERR_RUNTIME,
                        "[%s] the tensor is read-only: it shares memory that its owner exported read-only (bytes, a "
                        "read-only buffer or mmap, a non-writable NumPy array or a read-only DLPack tensor); clone() "
                        "it to get a writable copy", op);
}

cg_tensor *cg_from_data(const void *data, int ndim, const int64_t *shape, cg_dtype dt) {
    cg_tensor *t = cg_tensor_new("from_data", ndim, shape, dt, cg_cpu());
    if (t && t->storage->nbytes) memcpy(t->storage->data, data, t->storage->nbytes);
    return t;
}

cg_tensor *cg_from_blob(void *data, int ndim, const int64_t *shape, const int64_t *strides,
                        cg_dtype dt, void (*deleter)(void *ctx), void *ctx) {
    return cg_from_blob_on(data, ndim, shape, strides, dt, deleter, ctx, cg_cpu());
}

cg_tensor *cg_from_blob_on(void *data, int ndim, const int64_t *shape, const int64_t *strides, cg_dtype dt,
                           void (*deleter)(void *ctx), void *ctx, cg_device dev) {
    int64_t numel;
    CG_CHECK(cg_device_valid(dev) && cg_device_has_data(dev), CG_ERR_DEVICE,
             "[from_blob] device '%s' holds no memory to wrap", cg_device_name(dev));
    CG_CHECK(dt >= 0 && dt < CG_DTYPE_COUNT, CG_ERR_DTYPE, "[from_blob] invalid dtype %d", (int)dt);
    if (cg_shape_check("from_blob", ndim, shape, cg_dtype_size(dt), &numel)) return NULL;
    /* extent of the strided region, so nbytes is meaningful (checked: the
     * shape and strides come from foreign producers, Note [Checked sizes]) */
    int64_t extent = numel ? 1 : 0;
    int64_t cstr[CG_MAX_DIMS];
    if (!strides) {
        cg_contiguous_strides(ndim, shape, cstr);
        strides = cstr;
    }
    size_t nbytes = 0;
    bool ok = true;
    for (int i = 0; ok && numel && i < ndim; i++) {
        int64_t span;
        ok = strides[i] != INT64_MIN && cg_mul_ok(shape[i] - 1, strides[i] < 0 ? -strides[i] : strides[i], &span) &&
             cg_add_ok(extent, span, &extent);
    }
    CG_CHECK(ok && cg_bytes_ok(extent, cg_dtype_size(dt), &nbytes), CG_ERR_VALUE,
             "[from_blob] the memory spanned by the shape and strides overflows int64");
    cg_storage *s = cg_storage_new(0, dev);
    if (!s) return NULL;
    s->data = data;
    s->nbytes = nbytes;
    s->external = true;
    s->deleter = deleter;
    s->deleter_ctx = ctx;
    cg_tensor *t = cg_tensor_make(s, 0, ndim, shape, strides, dt);
    if (!t) s->deleter = NULL; /* on failure ctx stays the caller's */
    cg_storage_release(s);
    return t;
}

cg_tensor *cg_scalar_on(double value, cg_dtype dt, cg_device dev) {
    cg_tensor *t = cg_tensor_new("scalar", 0, NULL, dt, dev);
    if (!t || !t->storage->data) return t;
    if (cg_device_host_addressable(dev)) {
        cg_store_f64(t->storage->data, dt, value);
        return t;
    }
    uint64_t v = 0; /* the value in host memory, then one copy to the device */
    cg_store_f64(&v, dt, value);
    if (cg_device_copy_from_host(t->storage->data, &v, cg_itemsize(dt), dev)) {
        cg_tensor_release(t);
        return NULL;
    }
    return t;
}
cg_tensor *cg_scalar(double value, cg_dtype dt) { return cg_scalar_on(value, dt, cg_cpu()); }

int cg_tensor_ndim(const cg_tensor *t) { return t->ndim; }
const int64_t *cg_tensor_shape(const cg_tensor *t) { return t->shape; }
const int64_t *cg_tensor_strides(const cg_tensor *t) { return t->strides; }
int64_t cg_tensor_size(const cg_tensor *t, int dim) {
    int64_t d;
    if (t->ndim == 0 || cg_wrap_dim("size", dim, t->ndim, &d)) return -1;
    return t->shape[d];
}
int64_t cg_tensor_numel(const cg_tensor *t) { return cg_shape_numel(t->ndim, t->shape); }
int64_t cg_tensor_offset(const cg_tensor *t) { return t->offset; }
cg_dtype cg_tensor_dtype(const cg_tensor *t) { return t->dtype; }
cg_device cg_tensor_device(const cg_tensor *t) { return t->device; }
void *cg_tensor_device_ptr(const cg_tensor *t) {
    return t && t->storage->data ? cg_tensor_ptr(t) : NULL;
}
void *cg_tensor_data(const cg_tensor *t) {
    CG_CHECK(cg_device_host_addressable(t->device) || !t->storage->data, CG_ERR_DEVICE,
             "[data] tensor is on %s, whose memory the host cannot address: copy it with to(cpu) first",
             cg_device_name(t->device));
    return cg_tensor_ptr(t);
}
const void *cg_tensor_storage_id(const cg_tensor *t) { return t->storage; }
int64_t cg_tensor_storage_nbytes(const cg_tensor *t) { return (int64_t)t->storage->nbytes; }
uint64_t cg_tensor_version(const cg_tensor *t) { return atomic_load(&t->storage->version) + t->version_bias; }
bool cg_tensor_is_view(const cg_tensor *t) { return t->is_view; }
void *cg_tensor_pyobj(const cg_tensor *t) { return t->pyobj; }
void cg_tensor_set_pyobj(cg_tensor *t, void *obj) { t->pyobj = obj; }

bool cg_tensor_is_contiguous(const cg_tensor *t) {
    int64_t s = 1;
    for (int i = 0; i < t->ndim; i++)
        if (t->shape[i] == 0) return true; /* an empty tensor is contiguous, whatever its strides */
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (t->shape[i] != 1 && t->strides[i] != s) return false;
        s *= t->shape[i];
    }
    return true;
}

/* The channels-last dim orders, innermost first: C, W, H (D), N */
static const int cl2d_inner[] = {1, 3, 2, 0}, cl3d_inner[] = {1, 4, 3, 2, 0};

/* PyTorch's is_contiguous(memory_format=channels_last(_3d)): the dims in memory order, innermost
 * first, skipping size-1 dims, have strides 1, C, ... (`order` innermost first). */
static bool strides_follow(const cg_tensor *t, const int *order) {
    int64_t expected = 1;
    for (int i = 0; i < t->ndim; i++) {
        int d = order[i];
        if (t->shape[d] == 1) continue;
        if (t->strides[d] != expected) return false;
        expected *= t->shape[d];
    }
    return true;
}

bool cg_tensor_is_contiguous_as(const cg_tensor *t, cg_memory_format f) {
    switch (f) {
    case CG_MEMORY_CONTIGUOUS: return cg_tensor_is_contiguous(t);
    case CG_MEMORY_CHANNELS_LAST: return t->ndim == 4 && strides_follow(t, cl2d_inner);
    case CG_MEMORY_CHANNELS_LAST_3D: return t->ndim == 5 && strides_follow(t, cl3d_inner);
    default: return false;
    }
}

/* PyTorch's is_channels_last_strides_2d / _3d: channel stride smallest, then W, H (D), N in
 * increasing order; a tensor with C == 1 or ambiguous strides stays contiguous. */
static bool channels_last_strided(int ndim, const int64_t *shape, const int64_t *strides, const int *order) {
    int64_t min = 0;
    if (strides[1] == 0) return false;
    for (int i = 0; i < ndim; i++) {
        int d = order[i];
        if (shape[d] == 0) return false;
        if (strides[d] < min) return false;
        if (d == 0 && min == strides[1]) return false; /* N and C strides tie: ambiguous */
        min = strides[d];
        if (shape[d] > 1) min *= shape[d];
    }
    return true;
}

cg_memory_format cg_strides_suggest_memory_format(int ndim, const int64_t *shape, const int64_t *strides) {
    if (ndim == 4 && channels_last_strided(ndim, shape, strides, cl2d_inner)) return CG_MEMORY_CHANNELS_LAST;
    if (ndim == 5 && channels_last_strided(ndim, shape, strides, cl3d_inner)) return CG_MEMORY_CHANNELS_LAST_3D;
    return CG_MEMORY_CONTIGUOUS;
}

cg_memory_format cg_tensor_suggest_memory_format(const cg_tensor *t) {
    return cg_strides_suggest_memory_format(t->ndim, t->shape, t->strides);
}

bool cg_tensor_is_non_overlapping_and_dense(const cg_tensor *t) {
    if (cg_tensor_is_contiguous(t)) return true;
    int perm[CG_MAX_DIMS], n = 0;
    for (int d = 0; d < t->ndim; d++)
        if (t->shape[d] != 1) perm[n++] = d;
    for (int i = 1; i < n; i++) /* insertion sort by stride, smallest first */
        for (int j = i; j > 0 && t->strides[perm[j]] < t->strides[perm[j - 1]]; j--) {
            int x = perm[j];
            perm[j] = perm[j - 1];
            perm[j - 1] = x;
        }
    int64_t expected = 1;
    for (int i = 0; i < n; i++) {
        if (t->strides[perm[i]] != expected) return false;
        expected *= t->shape[perm[i]];
    }
    return true;
}

/* byte offset of the element at logical flat index i */
static int64_t flat_offset(const cg_tensor *t, int64_t i) {
    int64_t off = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        int64_t sz = t->shape[d];
        off += (i % sz) * t->strides[d];
        i /= sz;
    }
    return off * (int64_t)cg_dtype_size(t->dtype);
}

cg_status cg_tensor_get_flat(const cg_tensor *t, int64_t index, double *out) {
    int64_t n = cg_tensor_numel(t);
    CG_CHECK_S(cg_device_has_data(t->device), CG_ERR_DEVICE, "[get_flat] tensor is on %s, which has no data",
               cg_device_name(t->device));
    CG_CHECK_S(index >= 0 && index < n, CG_ERR_INDEX, "[get_flat] index %lld is out of bounds for %lld elements",
               (long long)index, (long long)n);
    const char *p = cg_tensor_ptr(t) + flat_offset(t, index);
    if (!cg_device_host_addressable(t->device)) { /* one element copied to the host (waits, as PyTorch's item) */
        uint64_t v = 0;
        cg_status st = cg_device_copy_to_host(&v, p, cg_itemsize(t->dtype), t->device);
        if (st) return st;
        *out = cg_load_f64(&v, t->dtype);
        return CG_OK;
    }
    *out = cg_load_f64(p, t->dtype);
    return CG_OK;
}

cg_status cg_tensor_item(const cg_tensor *t, double *out) {
    int64_t n = cg_tensor_numel(t);
    CG_CHECK_S(n == 1, CG_ERR_VALUE, "[item] a Tensor with %lld elements cannot be converted to Scalar", (long long)n);
    return cg_tensor_get_flat(t, 0, out);
}

cg_status cg_tensor_copy_to_buffer(const cg_tensor *t, void *buf, cg_dtype dt) {
    CG_CHECK_S(cg_device_has_data(t->device), CG_ERR_DEVICE, "[copy_to_buffer] tensor is on %s, which has no data",
               cg_device_name(t->device));
    cg_tensor *dst = cg_from_blob(buf, t->ndim, t->shape, NULL, dt, NULL, NULL);
    if (!dst) return cg_last_error();
    bool prev = cg_set_grad_enabled(false);
    /* a device the host cannot read is copied to the host first (waiting for its work) */
    cg_tensor *h = cg_device_host_addressable(t->device) ? (cg_tensor_retain((cg_tensor *)t), (cg_tensor *)t)
                                                         : cg_to_device((cg_tensor *)t, cg_cpu());
    cg_status st = h ? cg_copy_(dst, h) : cg_last_error();
    cg_set_grad_enabled(prev);
    cg_tensor_release(h);
    cg_tensor_release(dst);
    return st;
}
