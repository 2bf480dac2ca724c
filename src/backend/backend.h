/* backend.h — internal: what the drivers hand a backend and what its loops
 * receive, device-independent: the inner-loop signatures (elementwise and
 * reduction), the loop parameter block, the iterator plan (shapes, byte
 * strides, data pointers after broadcast and coalescing) and the thread pool's
 * range runner; and the backend interface (Note [Backends]): one struct of
 * function pointers per device type, in a table indexed by device type.
 * Knows nothing of autograd or op descriptors. */
#ifndef CG_BACKEND_H
#define CG_BACKEND_H

#include "../core/core_internal.h"
#include "kernels.h"

/* ------------------------------------------------------------- threads (src/backend/cpu/threads.c)
 * Note [Threads]: cg_parallel_for splits [0, n) in contiguous chunks; the
 * split depends only on n, grain and the thread count, so elementwise results
 * never depend on it and reductions are deterministic for a given count. */

typedef void (*cg_range_fn)(int64_t begin, int64_t end, void *ctx);
void cg_parallel_for(int64_t n, int64_t grain, cg_range_fn fn, void *ctx);
bool cg_in_parallel_region(void);

/* ------------------------------------------------------------- the iterator plan */

#define CG_ITER_MAX_ARGS 6

/* NumPy-style inner loop: args[0] is the output, args[1..] the inputs; steps
 * are byte strides along the loop; n elements. params: op parameters. */
typedef void (*cg_loop_fn)(char **args, const int64_t *steps, int64_t n, const void *params);

typedef struct cg_iter {
    int ndim;                          /* after coalescing; dim 0 innermost */
    int nargs;
    int64_t numel;
    int64_t shape[CG_MAX_DIMS];
    char *ptr[CG_ITER_MAX_ARGS];
    int64_t strides[CG_ITER_MAX_ARGS][CG_MAX_DIMS]; /* bytes */
} cg_iter;

/* The plan is built by the drivers (cg_iter_init, src/dispatch/iter.c) and
 * run by the backend. CPU: run fn over every element, split across threads
 * when numel >= grain (src/backend/cpu/iter_run.c). */
void cg_iter_run(const cg_iter *it, cg_loop_fn fn, const void *params, int64_t grain);
#define CG_GRAIN 32768

/* ------------------------------------------------------------- loop parameters */

#define CG_EW_MAX_PARAMS 4

/* Note [Loop errors]: elementwise loops receive a pointer to this struct as
 * `params` (its first member, so loops read their doubles as `const double *`).
 * A loop that meets an input it cannot compute (integer division by zero)
 * stores its result, sets `error` and carries on; the driver then fails the
 * call with CG_ERR_VALUE and the op's `loop_error` message. */
typedef struct cg_loop_params {
    double p[CG_EW_MAX_PARAMS];
    atomic_int error;
} cg_loop_params;
static inline void cg_loop_flag_error(const void *params) {
    atomic_store_explicit(&((cg_loop_params *)(uintptr_t)params)->error, 1, memory_order_relaxed);
}

/* ------------------------------------------------------------- reduction loops */

/* Reduce n elements of `in` (byte stride `stride`) into *out (and *out2, the
 * int64 index, for ops with indices). */
typedef void (*cg_reduce_loop)(char *out, char *out2, const char *in, int64_t n, int64_t stride,
                               const double *params);

/* Reduce `rows` rows (byte stride rs) of m contiguous columns into m contiguous
 * outputs, each column folded in row order (Note [Column reductions]). */
typedef void (*cg_reduce_cols_loop)(char *out, const char *in, int64_t rows, int64_t rs, int64_t m,
                                    const double *params);
/* One whole reduction of n elements (byte stride s, input dtype dt) into
 * *out, split across threads in fixed chunks (Note [Chunked reductions]);
 * false = not done (a dtype it does not cover, or no memory): the driver then
 * tries `chunked`, then the plain loop. */
typedef bool (*cg_reduce_full_fn)(cg_dtype dt, char *out, const char *in, int64_t n, int64_t s,
                                  const double *params);

/* The reduction kinds, each a family of loops every backend with reductions
 * implements, and the input dtypes it takes: X(KIND, dtypes). Several ops
 * share a kind (amax, max, argmax: MAX; the norms: NORM, with p a parameter). */
#define CG_REDUCE_KINDS(X)                                                                         \
    X(SUM, CG_DTYPES_ALL) X(MEAN, CG_DTYPES_FLOAT) X(PROD, CG_DTYPES_ALL) X(ANY, CG_DTYPES_ALL)      \
    X(ALL, CG_DTYPES_ALL) X(COUNT_NONZERO, CG_DTYPES_BIF) X(MAX, CG_DTYPES_BIF) X(MIN, CG_DTYPES_BIF) \
    X(VAR, CG_DTYPES_FLOAT) X(STD, CG_DTYPES_FLOAT) X(LOGSUMEXP, CG_DTYPES_FLOAT) X(NORM, CG_DTYPES_FLOAT)
typedef enum cg_reduce_kind {
#define CG_REDUCE_KIND_ENUM_(k, d) CG_REDUCE_##k,
    CG_REDUCE_KINDS(CG_REDUCE_KIND_ENUM_)
#undef CG_REDUCE_KIND_ENUM_
    CG_REDUCE_COUNT
} cg_reduce_kind;
/* CG_DTYPE_BIT of each input dtype kind k reduces */
static inline uint32_t cg_reduce_dtypes(cg_reduce_kind k) {
#define CG_REDUCE_KIND_DTYPES_(k, d) d,
    static const uint32_t t[CG_REDUCE_COUNT] = {CG_REDUCE_KINDS(CG_REDUCE_KIND_DTYPES_)};
#undef CG_REDUCE_KIND_DTYPES_
    return t[k];
}

/* A reduction's plan: `iter` runs over the outputs (args: the outputs, the
 * int64 indices when has_idx, then the first input element of each output's
 * run); each output folds n input elements `stride` bytes apart with the
 * device's loops of `kind`. chunked: the op's partial results combine with
 * its own loop on the output dtype, so one large output may be reduced in
 * fixed chunks (Note [Chunked reductions]). */
typedef struct cg_reduce_plan {
    cg_iter iter;
    int64_t n, stride;
    cg_dtype in_dtype, out_dtype;
    bool has_idx, chunked;
    cg_reduce_kind kind;
    const double *params;
    int nparams; /* the doubles at params */
} cg_reduce_plan;

/* ------------------------------------------------------------- the backend interface
 * Note [Backends]: a device type is served by one cg_backend. Drivers reach
 * memory and compute only through it: storage comes from `alloc` (the CPU's is
 * the caching allocator, src/core/allocator.c), data crosses between host and
 * device only by `copy_from_host` / `copy_to_host`, and the generic runners
 * take a plan (an iterator plan; `run_reduce` a reduction plan).
 * `run_elementwise` gets the op's table id and dtype, and runs the device's own
 * loop for that row (the CPU's: cg_cpu_elementwise_loops, generated from the
 * op table); `copy` moves and converts elements within the device. Streams: the
 * CPU's work is done when a call returns; `synchronize` waits for a device's.
 * Custom kernels (softmax, conv, pool, norm, ...) are the entries of the
 * backend's `kernels` table (Note [Kernel entries], kernels.h); a device that
 * lacks one raises NotImplementedError naming the op and the device
 * (cg_kernel_missing). Each device's memory goes through its caching pool
 * (`memory`, Note [Allocator]); `dlpack_type` is its DLPack device type. */
typedef struct cg_backend {
    const char *name;      /* "cpu", "meta", ... (cg_device_name) */
    bool has_data;         /* false: meta, shapes and dtypes only */
    bool host_addressable; /* the engine's CPU code may read and write the data directly */
    int dlpack_type;       /* DLPack's DLDeviceType code for this device (kDLCPU = 1, kDLCUDA = 2); 0: none */
    /* memory: alloc returns NULL and sets CG_ERR_OOM on failure (nbytes > 0) */
    void *(*alloc)(size_t nbytes, cg_device dev);
    void (*free)(void *p, size_t nbytes, cg_device dev);
    /* copies and waits: a failure (an asynchronous error of the device's earlier work) sets the error */
    cg_status (*copy_from_host)(void *dst, const void *src, size_t nbytes, cg_device dev);
    cg_status (*copy_to_host)(void *dst, const void *src, size_t nbytes, cg_device dev);
    cg_status (*synchronize)(cg_device dev);
    /* compute on device dev: every element of the plan (its ptr[] are dev's) through the device's loop of
     * op table row op_id (cg_op_id) for the data inputs' dtype dt (the driver checked the row's dtypes);
     * fails (error set) when the device has no loop for the row (cg_kernel_missing) */
    cg_status (*run_elementwise)(cg_device dev, const cg_iter *plan, int op_id, cg_dtype dt, const void *params,
                                 int64_t grain);
    /* plan->ptr[0] (dtype dst) <- plan->ptr[1] (dtype src, converted), every element, within the device.
     * copy and fill cannot fail on the host's devices; an asynchronous device reports a failure of
     * either at its next copy_to_host / synchronize */
    void (*copy)(cg_device dev, const cg_iter *plan, cg_dtype dst, cg_dtype src);
    /* every output of a reduction plan; NULL: the device has no reductions; fails as run_elementwise */
    cg_status (*run_reduce)(cg_device dev, const cg_reduce_plan *plan);
    /* plan->ptr[0] <- the itemsize-byte value at `value` (host memory), every element */
    void (*fill)(cg_device dev, const cg_iter *plan, const void *value, size_t itemsize);
    /* the custom kernels (NULL or a NULL entry: the device lacks it) */
    const cg_kernels *kernels;
    /* the device's caching pool, behind alloc / free (cg_allocator_stats reads it); NULL: none */
    cg_cache_pool *memory;
} cg_backend;

/* Fails with CG_ERR_NOT_IMPLEMENTED, "[op] is not implemented for device
 * 'name'", and returns that status: the one message for an op a device lacks. */
cg_status cg_kernel_missing(const char *op, cg_device dev);
/* A generic runner's failure (status st, error set) restated for the op the driver runs: "[op] is not
 * implemented for device 'name' (dtype dt)" for CG_ERR_NOT_IMPLEMENTED, else "[op] " + the backend's
 * message. Returns st. */
cg_status cg_backend_failed(const char *op, cg_device dev, cg_dtype dt, cg_status st);

/* The backend of a device type (never NULL for a valid, registered type). */
const cg_backend *cg_backend_of(cg_device dev);
/* Serve CG_DEVICE_PRIVATE with b (NULL: none). For out-of-tree and test
 * backends (tests/c/fake_backend.c); not thread-safe against running ops. */
void cg_backend_register_private(const cg_backend *b);
/* The backends in this tree. */
extern const cg_backend cg_backend_cpu;
extern const cg_backend cg_backend_meta;
/* the CUDA backend (src/backend/cuda/cuda_backend.c) once its kernel library is loaded and a device
 * found; NULL otherwise */
const cg_backend *cg_backend_cuda_get(void);
/* the caching pool of CUDA device `index` (NULL when there is no such device) */
cg_cache_pool *cg_cuda_pool(int index);

#endif
