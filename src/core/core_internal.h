/* core_internal.h — internal: struct layouts of storage and tensor, and the
 * core helpers (errors, shapes, allocator, threads, RNG) used by every layer
 * below the binding. Not part of the public API. */
#ifndef CG_CORE_INTERNAL_H
#define CG_CORE_INTERNAL_H

#include "cgrad.h"
#include "half.h"
#include "checked.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- errors
 * Note [Errors]: fallible functions set the thread-local error with
 * cg_set_error and return NULL / a status. Messages start with "[op]".
 * CG_ASSERT is for internal invariants only: user input never reaches it. */

/* cg_set_error(code, fmt, ...) is public (cgrad.h). */
/* The error for an op without a loop for dt: CG_ERR_DTYPE, or for the
 * barebones unsigned dtypes (uint16/32/64, which PyTorch supports only in a
 * few ops) CG_ERR_NOT_IMPLEMENTED, PyTorch's NotImplementedError. */
cg_status cg_dtype_unsupported(const char *op, cg_dtype dt);
/* double -> uint64: exact in [2^63, 2^64) (beyond int64), modulo 2^64 above, through int64 below */
uint64_t cg_f64_to_u64(double v);
static inline bool cg_dtype_is_barebones(cg_dtype dt) {
    return dt == CG_DTYPE_U16 || dt == CG_DTYPE_U32 || dt == CG_DTYPE_U64;
}

#define CG_ASSERT(cond)                                                                      \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "cgrad internal error: %s at %s:%d\n", #cond, __FILE__, __LINE__); \
            abort();                                                                         \
        }                                                                                    \
    } while (0)

/* CG_CHECK(cond, code, fmt...): on failure set the error and return NULL. */
#define CG_CHECK(cond, code, ...)             \
    do {                                      \
        if (!(cond)) {                        \
            cg_set_error((code), __VA_ARGS__); \
            return NULL;                      \
        }                                     \
    } while (0)
/* Same, returning the status code. */
#define CG_CHECK_S(cond, code, ...)                 \
    do {                                            \
        if (!(cond)) return cg_set_error((code), __VA_ARGS__); \
    } while (0)

/* Format a shape as "(2,3)" into buf (at least CG_SHAPE_STR bytes). */
#define CG_SHAPE_STR 256
const char *cg_shape_str(char *buf, int ndim, const int64_t *shape);

/* ------------------------------------------------------------- storage
 * Note [Version counter sharing]: the version counter lives on the storage, so
 * every view of it sees every in-place write. Saved tensors record it. */

typedef struct cg_storage {
    atomic_long refcount;
    void *data;          /* NULL for meta storage and for zero bytes */
    size_t nbytes;
    cg_device device;
    atomic_uint_fast64_t version;
    bool external;              /* memory not from our allocator (cg_from_blob) */
    bool embedded;              /* lives inside a cg_tensor_block (Note [Tensor block]) */
    bool readonly;              /* Note [Read-only memory]: every write through any tensor on it is refused */
    bool inference;             /* allocated in inference mode: its tensors are inference tensors */
    void (*deleter)(void *ctx); /* external memory: called when the storage dies (may be NULL) */
    void *deleter_ctx;
} cg_storage;

cg_storage *cg_storage_new(size_t nbytes, cg_device dev); /* NULL + CG_ERR_OOM */
/* Do two storages' memory blocks intersect (the same storage, or two over one
 * buffer: view(dtype), from_numpy)? The O(1) first test of Note [Memory
 * overlap], inline for the per-op paths. */
static inline bool cg_storages_alias(const cg_storage *a, const cg_storage *b) {
    if (a == b) return true;
    if (!a->data || !b->data) return false;
    uintptr_t a0 = (uintptr_t)a->data, b0 = (uintptr_t)b->data;
    return a0 < b0 + b->nbytes && b0 < a0 + a->nbytes;
}
/* Initialise a storage struct in place, allocating its data (CG_OK or CG_ERR_OOM). */
cg_status cg_storage_init(cg_storage *s, size_t nbytes, cg_device dev, bool embedded);
void cg_storage_retain(cg_storage *s);
void cg_storage_release(cg_storage *s);
static inline void cg_storage_bump_version(cg_storage *s) { atomic_fetch_add(&s->version, 1); }
/* CG_OK, or the read-only error naming op (Note [Read-only memory]); every
 * path that writes a tensor's elements in place calls it before writing. */
cg_status cg_check_writable(const char *op, const cg_tensor *t);

/* ------------------------------------------------------------- tensor */

typedef struct cg_hook {
    int64_t id;
    cg_hook_fn fn;                      /* a gradient hook, or */
    cg_post_accumulate_hook_fn post_fn; /* a post-accumulate-grad hook (leaves only) */
    void *ctx;
    void (*ctx_free)(void *);
    struct cg_hook *next;
} cg_hook;

struct cg_tensor {
    atomic_long refcount;
    cg_storage *storage;
    int64_t offset; /* elements */
    int ndim;
    cg_dtype dtype;
    cg_device device;
    int64_t shape[CG_MAX_DIMS];
    int64_t strides[CG_MAX_DIMS]; /* elements */
    bool requires_grad;
    bool retains_grad;
    bool is_view;      /* created by a view op (shares storage with its base) */
    cg_tensor *base;   /* views: the tensor owning the storage's history (owned); else NULL */
    int output_nr;
    cg_tensor *grad;   /* owned */
    cg_node *grad_fn;  /* owned */
    cg_node *grad_acc; /* weak: the leaf's AccumulateGrad node, cleared when it dies */
    cg_hook *hooks;    /* leaf hooks and post-accumulate-grad hooks (non-leaf hooks live on grad_fn) */
    void *pyobj;       /* weak back-pointer for the binding */
    cg_storage *home;  /* Note [Data assignment]: the embedded storage of t's own block, kept after
                        * `.data =` moved t to another storage (owned; NULL otherwise) */
    uint64_t version_bias; /* added to storage->version: `.data =` keeps t's version (Note [Data assignment]) */
};

/* Element size of a valid dtype, inlined for the per-op paths (the public
 * cg_dtype_size also accepts invalid values). */
static inline size_t cg_itemsize(cg_dtype dt) {
    static const unsigned char size[CG_DTYPE_COUNT] = {
        [CG_DTYPE_BOOL] = 1, [CG_DTYPE_U8] = 1,  [CG_DTYPE_I8] = 1,   [CG_DTYPE_I16] = 2, [CG_DTYPE_I32] = 4,
        [CG_DTYPE_I64] = 8,  [CG_DTYPE_F16] = 2, [CG_DTYPE_BF16] = 2, [CG_DTYPE_F32] = 4, [CG_DTYPE_F64] = 8,
        [CG_DTYPE_U16] = 2, [CG_DTYPE_U32] = 4,  [CG_DTYPE_U64] = 8,
    };
    return size[dt];
}

/* One element of isz bytes (1, 2, 4 or 8) from src to dst. */
static inline void cg_copy_item(char *dst, const char *src, size_t isz) {
    switch (isz) {
    case 1: *(uint8_t *)dst = *(const uint8_t *)src; break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    default: memcpy(dst, src, 8); break;
    }
}

/* Note [Tensor block]: a tensor created with fresh storage (cg_tensor_new,
 * every op's output) gets its tensor struct and storage struct from one
 * malloc. The storage holds the block: releasing the tensor releases its
 * reference to the embedded storage last, and the storage frees the whole
 * block when its last reference (the tensor's, or a view's) goes. A tensor's
 * storage pointer never changes, so the tensor part is never freed early. */
typedef struct cg_tensor_block {
    cg_tensor tensor;
    cg_storage storage;
} cg_tensor_block;

/* A new contiguous tensor with fresh storage; `op` names the caller in errors
 * (invalid dtype / device, bad shape, out of memory). */
cg_tensor *cg_tensor_new(const char *op, int ndim, const int64_t *shape, cg_dtype dt, cg_device dev);
/* A new dense tensor with fresh storage of numel elements and the given strides, which must be a
 * permutation's dense strides (cg_memory_strides, cg_permuted_strides, or a non-overlapping dense
 * tensor's); strides NULL = contiguous. */
cg_tensor *cg_tensor_new_strided(const char *op, int ndim, const int64_t *shape, const int64_t *strides, cg_dtype dt,
                                 cg_device dev);
/* The dense strides of format f (CONTIGUOUS, CHANNELS_LAST for ndim 4, CHANNELS_LAST_3D for 5) for shape.
 * false when f does not apply to ndim. */
bool cg_memory_strides(cg_memory_format f, int ndim, const int64_t *shape, int64_t *strides);
/* cg_tensor_suggest_memory_format of a tensor of this shape and these strides */
cg_memory_format cg_strides_suggest_memory_format(int ndim, const int64_t *shape, const int64_t *strides);
/* The strides that lay shape out in memory in the dim order `perm` (perm[0] outermost), from the raw
 * sizes as PyTorch's channels-last strides are. */
void cg_permuted_strides(int ndim, const int64_t *shape, const int *perm, int64_t *strides);
/* A new tensor struct over an existing storage (retained). strides NULL = contiguous. */
cg_tensor *cg_tensor_make(cg_storage *s, int64_t offset, int ndim, const int64_t *shape,
                          const int64_t *strides, cg_dtype dt);
/* Alias of t (same storage/geometry), no autograd history. */
cg_tensor *cg_tensor_alias(const cg_tensor *t);
/* Alias of t with new geometry (a view); no autograd history. */
cg_tensor *cg_tensor_view_of(const cg_tensor *t, int ndim, const int64_t *shape,
                             const int64_t *strides, int64_t offset);
/* Devices (Note [Backends], src/backend/backend.h). Storage and tensors know
 * a device only by these entry points, which the backend layer's registry
 * (src/backend/registry.c) implements. */
bool cg_device_valid(cg_device dev);
/* fails with CG_ERR_DEVICE naming op and why dev cannot hold tensors (no CUDA device: the reason) */
cg_status cg_device_invalid(const char *op, cg_device dev);
bool cg_device_host_addressable(cg_device dev);
bool cg_device_has_data(cg_device dev); /* false: meta */
/* *out <- nbytes of the device's memory (NULL for 0 bytes or a device without
 * data); CG_ERR_OOM (error set) on failure. */
cg_status cg_device_alloc(void **out, size_t nbytes, cg_device dev);
void cg_device_free(void *p, size_t nbytes, cg_device dev);
/* dev's memory at dst <- nbytes of host memory (any device with data; waits as the backend's copy does) */
cg_status cg_device_copy_from_host(void *dst, const void *src, size_t nbytes, cg_device dev);
/* host memory at dst <- nbytes of dev's memory at src (waits for the device's work on it) */
cg_status cg_device_copy_to_host(void *dst, const void *src, size_t nbytes, cg_device dev);

/* Release ts[0..n) (NULL entries allowed). */
static inline void cg_release_all(int n, cg_tensor **ts) {
    for (int i = 0; i < n; i++) cg_tensor_release(ts[i]);
}
/* Drop the retain_grad hook that output t holds on its node n, when t is
 * released. The node's hooks are the autograd layer's: defined there
 * (src/autograd/tensor_autograd.c), called from cg_tensor_release. */
void cg_node_drop_retain_hook(cg_node *n, const cg_tensor *t);
static inline char *cg_tensor_ptr(const cg_tensor *t) {
    return t->storage->data ? (char *)t->storage->data + t->offset * (int64_t)cg_itemsize(t->dtype) : NULL;
}

/* ------------------------------------------------------------- shapes */

/* Validate a shape (rank <= CG_MAX_DIMS, sizes >= 0, numel * itemsize fits);
 * writes numel. `op` names the caller in the message. */
cg_status cg_shape_check(const char *op, int ndim, const int64_t *shape, size_t itemsize, int64_t *numel);
int64_t cg_shape_numel(int ndim, const int64_t *shape);
void cg_contiguous_strides(int ndim, const int64_t *shape, int64_t *strides);
bool cg_shape_eq(int na, const int64_t *a, int nb, const int64_t *b);
/* NumPy broadcast of two shapes; CG_ERR_SHAPE naming `op` and both shapes. */
cg_status cg_broadcast_shapes(const char *op, int na, const int64_t *a, int nb, const int64_t *b,
                              int *nout, int64_t *out);
/* Wrap a possibly negative dim into [0, ndim); ndim 0 accepts -1 and 0. */
cg_status cg_wrap_dim(const char *op, int64_t dim, int ndim, int64_t *out);
/* Wrap a dim list into a bitmask; NULL/0 dims -> all. Duplicates are an error. */
cg_status cg_dims_mask(const char *op, int ndims, const int64_t *dims, int ndim, uint32_t *mask);

/* ------------------------------------------------------------- allocator */

/* A caching pool of one device's memory (Note [Allocator], allocator.c). The
 * owner sets raw_alloc (NULL on failure), raw_free and intrusive (the memory
 * is host memory: free lists link through the blocks); the rest starts zeroed
 * and `lock` clear (ATOMIC_FLAG_INIT). */
#define CG_POOL_CLASSES 256
typedef struct cg_pool_node cg_pool_node;
typedef struct cg_cache_pool {
    void *(*raw_alloc)(size_t nbytes);
    void (*raw_free)(void *p, size_t nbytes);
    bool intrusive;
    atomic_flag lock;
    void *free[CG_POOL_CLASSES]; /* per class: free blocks (intrusive) or cg_pool_node lists */
    cg_pool_node *spare;         /* unused nodes */
    cg_alloc_stats stats;
} cg_cache_pool;
/* NULL + CG_ERR_OOM on failure; nbytes 0 gives NULL */
void *cg_pool_alloc(cg_cache_pool *pool, size_t nbytes);
void cg_pool_free(cg_cache_pool *pool, void *p, size_t nbytes);
cg_alloc_stats cg_pool_stats(cg_cache_pool *pool);
void cg_pool_reset_peak(cg_cache_pool *pool);
/* every cached block back to the raw allocator */
void cg_pool_empty(cg_cache_pool *pool);
/* the CPU's pool (64-byte aligned host memory) and its two entry points */
extern cg_cache_pool cg_cpu_memory_pool;
void *cg_alloc(size_t nbytes, cg_device dev); /* NULL + CG_ERR_OOM */
void cg_free(void *p, size_t nbytes, cg_device dev);
/* Tensor blocks (Note [Tensor block]) recycled through a short free list, so
 * an op's output struct costs no malloc. NULL + CG_ERR_OOM on failure. */
cg_tensor_block *cg_tensor_block_alloc(void);
void cg_tensor_block_free(cg_tensor_block *b);
/* the cached tensor blocks back to the system (cg_allocator_empty_cache of the CPU) */
void cg_tensor_blocks_empty(void);

/* ------------------------------------------------------------- state */

bool cg_autocast_active(void);
/* Note [Autocast in backward]: backward formulas run with autocast off, so
 * each gradient is computed in the dtype its forward ran in (the saved,
 * already-cast inputs) and a cast's backward casts the gradient back.
 * suspend returns the previous state for resume. */
bool cg_autocast_suspend(void);
void cg_autocast_resume(bool prev);
/* The autocast cast cache (autocast_cache.c): the cast of a float32 leaf that
 * requires grad to the low-precision dtype, made once per autocast region.
 * Returns a new reference (NULL + error on failure). */
cg_tensor *cg_autocast_cached_cast(cg_tensor *t, cg_dtype target);
bool cg_warn_only_deterministic(void);

/* ------------------------------------------------------------- profiler hooks
 * Drivers wrap their body in cg_prof_begin / cg_prof_end only when
 * cg_prof_active() (the one branch paid when not profiling). */

#define CG_PROF_COLD __attribute__((noinline, cold)) /* the profiled path of a driver */
extern atomic_int cg_g_prof_on;
static inline bool cg_prof_active(void) { return atomic_load_explicit(&cg_g_prof_on, memory_order_relaxed) != 0; }
int64_t cg_prof_begin(const char *name, cg_prof_kind kind, int n, cg_tensor *const *in);
void cg_prof_end(int64_t id, const cg_tensor *out);
void cg_prof_note_alloc(size_t nbytes);

/* Note [Profiled entry points]: the ops outside the drivers (views, shape ops,
 * indexing, factories, copies, losses, ...) define their public function with
 *     CG_PROF_FN(cg_tensor *, cg_view, "view", (cg_tensor *t, int ndim, const int64_t *shape),
 *                (t, ndim, shape), t) { ...body... }
 * The public function tests the flag and calls the body (fn##_body, defined by
 * the braces that follow); when profiling, a cold function runs the body
 * between cg_prof_begin (the listed tensor inputs) and cg_prof_end (the
 * result when it is a tensor). CG_PROF_FN0: no tensor inputs (factories);
 * CG_PROF_FNV: inputs given as a count and an array expression. */
static inline const cg_tensor *cg_prof_out_tensor(const cg_tensor *t) { return t; }
static inline const cg_tensor *cg_prof_out_status(cg_status s) { (void)s; return NULL; }
#define CG_PROF_RESULT(r) _Generic((r), cg_tensor *: cg_prof_out_tensor, default: cg_prof_out_status)(r)
/* Note [Barebones refusals]: an entry point whose op PyTorch does not run on
 * uint16/32/64 (cg_barebones_refused's list, dtype.c) refuses such an input
 * before its body runs, with PyTorch's NotImplementedError. */
bool cg_barebones_refused(const char *op, int n, cg_tensor *const *in);
#define CG_PROF_FNV(ret, fn, opname, params, args, count, array)                  \
    static ret fn##_body params;                                                   \
    static CG_PROF_COLD ret fn##_profiled params {                                 \
        int64_t prof_ev_ = cg_prof_begin(opname, CG_PROF_OP, (count), (array));    \
        ret prof_r_ = fn##_body args;                                              \
        cg_prof_end(prof_ev_, CG_PROF_RESULT(prof_r_));                            \
        return prof_r_;                                                            \
    }                                                                              \
    ret fn params {                                                                \
        if (cg_barebones_refused(opname, (count), (array)))                        \
            return _Generic((ret){0}, cg_status: cg_last_error(), default: NULL);  \
        if (cg_prof_active()) return fn##_profiled args;                           \
        return fn##_body args;                                                     \
    }                                                                              \
    static ret fn##_body params
#define CG_PROF_FN(ret, fn, opname, params, args, ...) \
    CG_PROF_FNV(ret, fn, opname, params, args, (int)(sizeof((cg_tensor *[]){__VA_ARGS__}) / sizeof(cg_tensor *)), \
                ((cg_tensor *const[]){__VA_ARGS__}))
#define CG_PROF_FN0(ret, fn, opname, params, args) CG_PROF_FNV(ret, fn, opname, params, args, 0, NULL)

/* ------------------------------------------------------------- BLAS threads
 * OpenBLAS's thread count, set capped by OPENBLAS_NUM_THREADS (Note [BLAS
 * thread cap] in threads.c); cg_blas_thread_cap: the cap a value of that
 * variable sets, 0 for none (unset, empty, not a positive integer) */
void cg_blas_set_num_threads(int n);
int cg_blas_get_num_threads(void);
int cg_blas_thread_cap(const char *env);

/* ------------------------------------------------------------- RNG */

/* Reserve `count` Philox counters; returns (seed, base offset). Thread-safe. */
void cg_rng_reserve(uint64_t count, uint64_t *seed, uint64_t *offset);
/* Philox4x32-10 block for (seed, counter): four uniform 32-bit words. */
void cg_philox(uint64_t seed, uint64_t counter, uint32_t out[4]);
/* Element-indexed streams over reserved counters, Note [Philox streams] in
 * rng.c: element i of an op uses counter base + i/2. out[k] is element
 * begin + k (end - begin entries). Uniforms have `digits` random bits
 * (1..53) in [0, 1); normals are standard (Box-Muller). */
static inline uint64_t cg_rng_counters(int64_t n) { return n > 0 ? ((uint64_t)n + 1) / 2 : 0; }
void cg_rng_fill_u64(uint64_t seed, uint64_t base, int64_t begin, int64_t end, uint64_t *out);
void cg_rng_fill_uniform(uint64_t seed, uint64_t base, int64_t begin, int64_t end, int digits, double *out);
void cg_rng_fill_normal(uint64_t seed, uint64_t base, int64_t begin, int64_t end, double *out);
/* Helpers mapping bits to floats in [0,1) and to a standard normal. */
static inline double cg_u32_to_unit(uint32_t a, uint32_t b) {
    uint64_t v = ((uint64_t)a << 21) ^ (uint64_t)b; /* 53 random bits */
    return (double)(v & ((1ull << 53) - 1)) * (1.0 / 9007199254740992.0);
}

/* ------------------------------------------------------------- dtype scalar access */

double cg_load_f64(const void *p, cg_dtype dt);
void cg_store_f64(void *p, cg_dtype dt, double v);

/* Run converters (dtype.c). dst: n contiguous elements of dt <- src: n doubles
 * (integers truncate toward zero; NaN -> 0, out-of-range saturates through
 * int64; bool: nonzero). */
void cg_store_doubles(char *dst, cg_dtype dt, const double *src, int64_t n);
/* dst: n contiguous elements of dt <- src: n int64 values (exact for values
 * the dtype can hold). */
void cg_store_ints(char *dst, cg_dtype dt, const int64_t *src, int64_t n);
/* dst: n doubles <- src: n contiguous elements of dt. */
void cg_load_doubles(const char *src, cg_dtype dt, double *dst, int64_t n);
/* Scratch chunk for the converters' callers (stack arrays of this many values). */
#define CG_CHUNK 256

/* ------------------------------------------------------------- dtype sets
 * Bit masks of dtypes (the dtypes an op runs on). */
#define CG_DTYPE_BIT(d) (1u << (d))
#define CG_DTYPES_FLOAT \
    (CG_DTYPE_BIT(CG_DTYPE_F16) | CG_DTYPE_BIT(CG_DTYPE_BF16) | CG_DTYPE_BIT(CG_DTYPE_F32) | CG_DTYPE_BIT(CG_DTYPE_F64))
#define CG_DTYPES_INT                                                                                               \
    (CG_DTYPE_BIT(CG_DTYPE_U8) | CG_DTYPE_BIT(CG_DTYPE_I8) | CG_DTYPE_BIT(CG_DTYPE_I16) | CG_DTYPE_BIT(CG_DTYPE_I32) | \
     CG_DTYPE_BIT(CG_DTYPE_I64))
#define CG_DTYPES_UINT (CG_DTYPE_BIT(CG_DTYPE_U16) | CG_DTYPE_BIT(CG_DTYPE_U32) | CG_DTYPE_BIT(CG_DTYPE_U64))
/* bool, the integers up to int64 and the floating dtypes: all but the barebones unsigned ones */
#define CG_DTYPES_BIF (CG_DTYPE_BIT(CG_DTYPE_BOOL) | CG_DTYPES_INT | CG_DTYPES_FLOAT)
#define CG_DTYPES_ALL (CG_DTYPES_BIF | CG_DTYPES_UINT)

/* ------------------------------------------------------------- op constants
 * Constants of op definitions, shared by their backward formulas (src/ops)
 * and their kernels (src/backend). */
#define CG_SELU_ALPHA 1.6732632423543772848170429916717
#define CG_SELU_SCALE 1.0507009873554804934193349852946
#define CG_SQRT_2_PI 0.79788456080286535588 /* sqrt(2/pi): gelu's tanh approximation */
#define CG_GELU_C 0.044715

#endif
