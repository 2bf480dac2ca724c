/* cgrad.h — the public C API of the cgrad engine: the only header users include.
 *
 * Ownership (Note [Ownership]):
 *   - Every function returning `cg_tensor *` returns a NEW reference (release it
 *     with cg_tensor_release) or NULL on error; the error code and message are
 *     then in thread-local state (cg_last_error / cg_last_error_message).
 *   - Tensor arguments are BORROWED: the callee retains what it keeps.
 *   - Functions documented as "borrowed" return a pointer owned by the tensor
 *     (valid while the tensor lives); do not release it.
 *   - Functions returning cg_status return CG_OK or an error code (error state set).
 * Ops never promote dtypes (mixed dtypes -> CG_ERR_DTYPE) and never move data
 * between devices (mixed devices -> CG_ERR_DEVICE). Broadcasting follows NumPy.
 */
#ifndef CGRAD_H
#define CGRAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The release this header belongs to (docs/engine.md, "Versions": within one major version, existing
 * functions keep their signatures and meaning, and new ones may be added; a minor release adds,
 * a patch release fixes). cg_version() is the release of the library actually loaded. */
#define CG_VERSION_MAJOR 0
#define CG_VERSION_MINOR 1
#define CG_VERSION_PATCH 0
#define CG_VERSION_STRING "0.1.0"

#if defined(_WIN32)
#define CG_API __declspec(dllexport)
#else
#define CG_API __attribute__((visibility("default")))
#endif

/* Maximum rank of a tensor; larger ranks are rejected with CG_ERR_SHAPE. */
#define CG_MAX_DIMS 16

/* ------------------------------------------------------------------ types */

typedef enum cg_dtype {
    CG_DTYPE_BOOL = 0,
    CG_DTYPE_U8,
    CG_DTYPE_I8,
    CG_DTYPE_I16,
    CG_DTYPE_I32,
    CG_DTYPE_I64,
    CG_DTYPE_F16,
    CG_DTYPE_BF16,
    CG_DTYPE_F32,
    CG_DTYPE_F64,
    CG_DTYPE_U16, /* the barebones unsigned dtypes (PyTorch's level of support: docs/engine.md) */
    CG_DTYPE_U32,
    CG_DTYPE_U64,
    CG_DTYPE_COUNT
} cg_dtype;

typedef enum cg_device_type {
    CG_DEVICE_CPU = 0,
    CG_DEVICE_META = 1, /* shapes and dtypes only, no data */
    CG_DEVICE_PRIVATE = 2, /* served by a backend registered at run time (out-of-tree, tests) */
    CG_DEVICE_CUDA = 3, /* an NVIDIA GPU, by ordinal (cg_cuda; the CUDA section below) */
    CG_DEVICE_TYPE_COUNT
} cg_device_type;

typedef struct cg_device {
    cg_device_type type;
    int index; /* the CUDA ordinal for cuda devices; 0 for the others (one device of each type) */
} cg_device;

typedef enum cg_status {
    CG_OK = 0,
    CG_ERR_DTYPE,           /* dtype mismatch or unsupported dtype */
    CG_ERR_DEVICE,          /* device mismatch */
    CG_ERR_SHAPE,           /* shapes incompatible / invalid */
    CG_ERR_INDEX,           /* index out of range */
    CG_ERR_VALUE,           /* invalid argument value */
    CG_ERR_OOM,             /* allocation failure */
    CG_ERR_NOT_IMPLEMENTED, /* feature not available; message names it */
    CG_ERR_RUNTIME,         /* autograd misuse, in-place conflicts, ... */
    CG_ERR_COUNT
} cg_status;

typedef enum cg_reduction { CG_REDUCTION_NONE = 0, CG_REDUCTION_MEAN, CG_REDUCTION_SUM } cg_reduction;

typedef struct cg_tensor cg_tensor; /* opaque, refcounted */
typedef struct cg_node cg_node;     /* opaque autograd graph node, refcounted */

/* ------------------------------------------------------------- errors */

/* "MAJOR.MINOR.PATCH" of the loaded library (static storage); compare with CG_VERSION_STRING. */
CG_API const char *cg_version(void);
CG_API cg_status cg_last_error(void);
CG_API const char *cg_last_error_message(void); /* borrowed, thread-local */
CG_API void cg_clear_error(void);
/* Set the thread-local error (for callbacks such as hooks); returns code. */
CG_API cg_status cg_set_error(cg_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
CG_API const char *cg_status_name(cg_status s);

/* ------------------------------------------------------------- dtypes, devices */

CG_API const char *cg_dtype_name(cg_dtype dt);   /* "float32", ... */
CG_API size_t cg_dtype_size(cg_dtype dt);
CG_API bool cg_dtype_is_floating(cg_dtype dt);
CG_API bool cg_dtype_is_integral(cg_dtype dt);   /* includes bool */
CG_API bool cg_dtype_is_signed(cg_dtype dt);
CG_API cg_device cg_cpu(void);
CG_API cg_device cg_meta(void);
CG_API bool cg_device_eq(cg_device a, cg_device b);
CG_API const char *cg_device_name(cg_device d); /* "cpu", "meta", or the registered backend's name */
/* DLPack's device (DLDeviceType code and id: kDLCPU = 1, ...) of a cgrad device; false for a device
 * DLPack has no type for (meta) */
CG_API bool cg_device_to_dlpack(cg_device d, int32_t *type, int32_t *id);
/* the cgrad device of a DLPack device; false when no backend serves that type and id */
CG_API bool cg_device_from_dlpack(int32_t type, int32_t id, cg_device *d);

/* ------------------------------------------------------------- CUDA devices
 * The CUDA backend's kernels live in libcgrad_cuda.so beside the engine, loaded
 * at the first of these calls (Note [CUDA kernel library]); without it, a
 * driver or a GPU, there are no cuda devices and cg_cuda_unavailable_reason
 * says why. Work on a cuda tensor is enqueued on its device's stream; reading
 * its values (a copy to the CPU) waits for it, as does cg_cuda_synchronize. */

typedef struct cg_cuda_props {
    char name[256];
    int major, minor;    /* compute capability */
    int multiprocessors;
    size_t total_memory; /* bytes */
} cg_cuda_props;

CG_API cg_device cg_cuda(int index);
/* whether this engine has the CUDA kernel library beside it */
CG_API bool cg_cuda_is_built(void);
/* the number of usable CUDA devices (0 when none) */
CG_API int cg_cuda_device_count(void);
/* why there is no usable cuda device (static storage); NULL when there is one */
CG_API const char *cg_cuda_unavailable_reason(void);
CG_API cg_status cg_cuda_properties(int index, cg_cuda_props *out);
/* waits for the device's work; fails with the first asynchronous error of its kernels */
CG_API cg_status cg_cuda_synchronize(int index);
CG_API cg_status cg_cuda_mem_info(int index, size_t *free_bytes, size_t *total_bytes);

/* ------------------------------------------------------------- global state */

CG_API void cg_set_num_threads(int n); /* our loops and BLAS together */
CG_API int cg_get_num_threads(void);

/* CPU levels (Note [CPU levels], docs/engine.md): the engine is compiled once
 * per level and one build is loaded per process (by the dynamic loader's
 * glibc-hwcaps search for C programs, by cgrad's loader in Python). */
typedef enum cg_cpu_level {
    CG_CPU_LEVEL_NONE = -1,    /* below the baseline: no build of cgrad runs here */
    CG_CPU_LEVEL_BASELINE = 0, /* x86-64-v2 (SSE4.2, POPCNT) */
    CG_CPU_LEVEL_AVX2,         /* x86-64-v3: AVX2, FMA, F16C, BMI1/2, LZCNT, MOVBE */
    CG_CPU_LEVEL_AVX512,       /* x86-64-v4: AVX-512 F, BW, CD, DQ, VL */
    CG_CPU_LEVEL_COUNT
} cg_cpu_level;
/* The level this build of the engine was compiled for. */
CG_API cg_cpu_level cg_cpu_level_built(void);
/* The highest level this CPU and OS run: cpuid's feature bits, and for AVX2
 * and AVX-512 the OS's saved register state (xgetbv's XCR0). */
CG_API cg_cpu_level cg_cpu_level_supported(void);
/* "baseline", "avx2", "avx512" ("none" for CG_CPU_LEVEL_NONE); NULL if out of range. */
CG_API const char *cg_cpu_level_name(cg_cpu_level level);
/* AVX512_BF16 instructions usable (cpuid leaf 7.1 and the ZMM state saved). */
CG_API bool cg_cpu_has_avx512_bf16(void);
/* The BLAS the engine calls: OpenBLAS's build configuration ("OpenBLAS 0.3.34
 * DYNAMIC_ARCH ... SkylakeX MAX_THREADS=64") and the kernel family it picked
 * for this CPU ("SkylakeX", "Haswell", ...). Borrowed static strings. */
CG_API const char *cg_blas_config(void);
CG_API const char *cg_blas_corename(void);

/* Grad mode is thread-local. Returns the previous value. */
CG_API bool cg_set_grad_enabled(bool enabled);
CG_API bool cg_is_grad_enabled(void);
/* Inference mode (thread-local): grad mode off and no version tracking needs. */
CG_API bool cg_set_inference_mode(bool enabled);
CG_API bool cg_is_inference_mode(void);
/* Determinism flag (global): ops declared nondeterministic fail when set. */
CG_API void cg_set_deterministic(bool enabled, bool warn_only);
CG_API bool cg_is_deterministic(void);
/* The check every op declared nondeterministic runs (other C code may call it
 * too): with the flag set, CG_ERR_RUNTIME naming `op`, or under warn_only a
 * warning through the warning handler and CG_OK; CG_OK when the flag is off. */
CG_API cg_status cg_alert_nondeterministic(const char *op);
/* Engine warnings go to this handler (process-wide; NULL: stderr). A nonzero
 * return turns the warning into a CG_ERR_RUNTIME error with the same text. */
typedef int (*cg_warning_fn)(const char *message);
CG_API void cg_set_warning_handler(cg_warning_fn fn);
/* Autocast state (thread-local): when enabled, ops whose AMP policy is
 * "lower precision" run in `dtype`, ops with policy "fp32" run in float32. */
CG_API void cg_set_autocast(bool enabled, cg_dtype dtype);
CG_API bool cg_is_autocast_enabled(void);
CG_API cg_dtype cg_get_autocast_dtype(void);
/* Autocast cast cache (thread-local): while enabled (the default), the
 * low-precision cast of a float32 leaf that requires grad is made once and
 * reused until cg_autocast_clear_cache (called when the outermost autocast
 * region exits). cache_size: entries held now. */
CG_API bool cg_set_autocast_cache_enabled(bool enabled);
CG_API bool cg_is_autocast_cache_enabled(void);
CG_API void cg_autocast_clear_cache(void);
CG_API int64_t cg_autocast_cache_size(void);
/* Anomaly mode (thread-local): NaN produced by a backward raises. */
CG_API bool cg_set_anomaly_enabled(bool enabled);
CG_API bool cg_is_anomaly_enabled(void);

/* ------------------------------------------------------------- RNG (Philox4x32-10) */

CG_API void cg_manual_seed(uint64_t seed);
CG_API uint64_t cg_initial_seed(void);
/* state = (seed, offset); results depend only on state, never on thread count */
CG_API void cg_rng_get_state(uint64_t *seed, uint64_t *offset);
CG_API void cg_rng_set_state(uint64_t seed, uint64_t offset);

/* ------------------------------------------------------------- allocator */

typedef struct cg_alloc_stats {
    int64_t live_bytes;     /* bytes in blocks handed out and not yet freed */
    int64_t peak_bytes;     /* max of live_bytes since the last reset */
    int64_t cached_bytes;   /* bytes held in the cache for reuse */
    int64_t alloc_calls;    /* number of allocation requests */
    int64_t cache_hits;     /* requests served from the cache */
    int64_t system_allocs;  /* requests that went to the OS */
    int64_t live_allocs;    /* blocks handed out and not yet freed */
    int64_t peak_allocs;    /* max of live_allocs since the last reset */
    int64_t total_bytes;    /* bytes handed out, ever (rounded sizes) */
    int64_t freed_bytes;    /* bytes given back, ever */
} cg_alloc_stats;

CG_API cg_alloc_stats cg_allocator_stats(cg_device dev);
CG_API void cg_allocator_reset_peak(cg_device dev);
CG_API void cg_allocator_empty_cache(cg_device dev); /* return cached blocks to the OS */

/* ------------------------------------------------------------- profiler
 * Op-level profiler (Note [Profiler] in src/core/profiler.c): while started,
 * every op call, backward node and user range is recorded, per thread, with
 * its nesting. Off, each op pays one predicted branch. */

enum { CG_PROF_SHAPES = 1, CG_PROF_MEMORY = 2, CG_PROF_FLOPS = 4, CG_PROF_STACK = 8 };
typedef enum cg_prof_kind { CG_PROF_OP = 0, CG_PROF_BACKWARD, CG_PROF_RANGE } cg_prof_kind;

typedef struct cg_prof_event {
    char name[64];
    char shapes[192];    /* "[[32, 784], [128, 784], [128]]" with CG_PROF_SHAPES, else "" */
    char dtypes[96];     /* "[float32, float32, float32]" with CG_PROF_SHAPES, else "" */
    char stack[160];     /* with CG_PROF_STACK, for ops: the caller's location from the stack hook, else "" */
    int64_t start_ns;    /* since cg_profiler_start */
    int64_t end_ns;
    int64_t flops;       /* with CG_PROF_FLOPS, for GEMM-like ops and convolutions; else -1 */
    int64_t alloc_bytes; /* with CG_PROF_MEMORY: bytes this call allocated, children included; else -1 */
    int64_t parent;      /* index of the enclosing event in the events array, -1 at top level */
    int64_t thread;      /* 1, 2, ... in the order threads first recorded */
    cg_prof_kind kind;
} cg_prof_event;

/* Start a session (clears the previous one's events); CG_ERR_RUNTIME when one runs. */
CG_API cg_status cg_profiler_start(unsigned flags);
CG_API bool cg_profiler_enabled(void);
/* Stop; the events, ordered by start time, stay readable until the next start. */
CG_API cg_status cg_profiler_stop(void);
CG_API const cg_prof_event *cg_profiler_events(int64_t *n);
/* A user range ("record_function"): returns its id, or -1 when not profiling. */
CG_API int64_t cg_profiler_range_push(const char *name);
CG_API void cg_profiler_range_pop(int64_t id);
/* With CG_PROF_STACK, an op event that is not nested in another op gets fn's
 * text (the caller's source location; the Python binding installs one), and
 * nested ops their parent's. fn runs outside the profiler's locks. */
typedef void (*cg_prof_stack_fn)(char *buf, size_t cap);
CG_API void cg_profiler_set_stack_fn(cg_prof_stack_fn fn);

/* ------------------------------------------------------------- tensor basics */

CG_API void cg_tensor_retain(cg_tensor *t);
CG_API void cg_tensor_release(cg_tensor *t); /* NULL-safe */

/* Uninitialised tensor, contiguous. */
CG_API cg_tensor *cg_empty(int ndim, const int64_t *shape, cg_dtype dt, cg_device dev);
/* Contiguous tensor initialised from a host buffer holding numel elements of dt (copied). */
CG_API cg_tensor *cg_from_data(const void *data, int ndim, const int64_t *shape, cg_dtype dt);
/* Wrap external memory without copying; `deleter(ctx)` runs when the storage dies.
 * strides in elements (NULL = contiguous). On failure (NULL) the deleter is
 * never called: ctx is still the caller's to free. */
CG_API cg_tensor *cg_from_blob(void *data, int ndim, const int64_t *shape, const int64_t *strides,
                               cg_dtype dt, void (*deleter)(void *ctx), void *ctx);
/* The same for memory of device dev (its backend's memory; CG_ERR_DEVICE for a device that holds none). */
CG_API cg_tensor *cg_from_blob_on(void *data, int ndim, const int64_t *shape, const int64_t *strides, cg_dtype dt,
                                  void (*deleter)(void *ctx), void *ctx, cg_device dev);
/* 0-d tensor holding `value` converted to dt (on cpu). */
CG_API cg_tensor *cg_scalar(double value, cg_dtype dt);
CG_API cg_tensor *cg_scalar_on(double value, cg_dtype dt, cg_device dev);

CG_API int cg_tensor_ndim(const cg_tensor *t);
CG_API const int64_t *cg_tensor_shape(const cg_tensor *t);   /* borrowed, ndim entries */
CG_API const int64_t *cg_tensor_strides(const cg_tensor *t); /* borrowed, in elements */
CG_API int64_t cg_tensor_size(const cg_tensor *t, int dim);  /* negative dims wrap; -1 on error */
CG_API int64_t cg_tensor_numel(const cg_tensor *t);
CG_API int64_t cg_tensor_offset(const cg_tensor *t);          /* storage offset in elements */
CG_API cg_dtype cg_tensor_dtype(const cg_tensor *t);
CG_API cg_device cg_tensor_device(const cg_tensor *t);
CG_API bool cg_tensor_is_contiguous(const cg_tensor *t);
/* Note [Memory formats]: PyTorch's memory formats. CHANNELS_LAST is a 4-D NCHW tensor whose memory is
 * NHWC (strides (H*W*C, 1, W*C, C)), CHANNELS_LAST_3D a 5-D NCDHW tensor stored NDHWC; PRESERVE keeps
 * the input's strides where it is non-overlapping and dense, else its suggested format. Size-1 dims'
 * strides do not count, as in PyTorch's is_contiguous(memory_format=). */
typedef enum cg_memory_format {
    CG_MEMORY_CONTIGUOUS = 0,
    CG_MEMORY_CHANNELS_LAST,
    CG_MEMORY_CHANNELS_LAST_3D,
    CG_MEMORY_PRESERVE
} cg_memory_format;
/* t's strides are those of format f (CONTIGUOUS: cg_tensor_is_contiguous; PRESERVE: false) */
CG_API bool cg_tensor_is_contiguous_as(const cg_tensor *t, cg_memory_format f);
/* CHANNELS_LAST(_3D) when t is 4-D (5-D) with channels-last strides and not contiguous, else CONTIGUOUS
 * (PyTorch's suggest_memory_format) */
CG_API cg_memory_format cg_tensor_suggest_memory_format(const cg_tensor *t);
/* no two elements share memory and the elements fill storage[offset, offset + numel) exactly */
CG_API bool cg_tensor_is_non_overlapping_and_dense(const cg_tensor *t);
CG_API void *cg_tensor_data(const cg_tensor *t);             /* pointer to element 0; NULL on meta, and on a device
                                                              * whose memory the host cannot address (CG_ERR_DEVICE) */
/* the device address of element 0 on any device with data (a CUDA device pointer for cuda tensors: for
 * DLPack and __cuda_array_interface__, never to be dereferenced on the host); NULL on meta */
CG_API void *cg_tensor_device_ptr(const cg_tensor *t);
CG_API const void *cg_tensor_storage_id(const cg_tensor *t); /* equal for tensors sharing storage */
CG_API int64_t cg_tensor_storage_nbytes(const cg_tensor *t);
/* Move t's storage (CPU) into the caller's memory `data` of nbytes >= its size: its bytes are copied
 * there, every tensor on the storage then reads and writes `data`, and the old memory is freed. The
 * storage calls deleter(ctx) when it dies (share_memory_: shared memory). CG_ERR_DEVICE off the CPU,
 * CG_ERR_VALUE when nbytes is too small; on error nothing changes and ctx stays the caller's. */
CG_API cg_status cg_tensor_move_storage(cg_tensor *t, void *data, size_t nbytes, void (*deleter)(void *ctx),
                                        void *ctx);
CG_API uint64_t cg_tensor_version(const cg_tensor *t);
CG_API bool cg_tensor_is_view(const cg_tensor *t);
/* Memory overlap (Note [Memory overlap] in src/core/overlap.c): PyTorch's
 * get_overlap_status. FULL: a and b are the same tensor, or both dense with
 * the same byte range and strides; PARTIAL: same storage, both dense, byte
 * ranges that intersect otherwise; TOO_HARD: a non-dense tensor on the same
 * storage (not checked, as in PyTorch); NO: anything else (other storage,
 * disjoint ranges, an empty tensor). */
typedef enum cg_overlap { CG_OVERLAP_NO = 0, CG_OVERLAP_FULL, CG_OVERLAP_PARTIAL, CG_OVERLAP_TOO_HARD } cg_overlap;
CG_API cg_overlap cg_tensor_overlap(const cg_tensor *a, const cg_tensor *b);
/* PyTorch's has_internal_overlap == YES: a stride-0 dim of size > 1, so a
 * write through t reaches one memory location more than once. */
CG_API bool cg_tensor_has_internal_overlap(const cg_tensor *t);
/* Read element at a flat (row-major logical) index as double. */
CG_API cg_status cg_tensor_get_flat(const cg_tensor *t, int64_t index, double *out);
/* Value of a one-element tensor. */
CG_API cg_status cg_tensor_item(const cg_tensor *t, double *out);
/* Copy the elements (logical row-major order) to `buf` converted to dtype `dt`. */
CG_API cg_status cg_tensor_copy_to_buffer(const cg_tensor *t, void *buf, cg_dtype dt);

/* Resize t in place to a contiguous `shape` (PyTorch's resize_): the offset
 * stays, the strides become contiguous, and the storage grows (its old bytes
 * kept) when it is too small; every tensor sharing it sees the new block.
 * Errors: a tensor that requires grad, external (cg_from_blob) storage that
 * would have to grow, a bad shape, out of memory. */
CG_API cg_status cg_tensor_resize_(cg_tensor *t, int ndim, const int64_t *shape);

/* `t.data = src` (PyTorch's set_data): t shares src's storage, offset, shape,
 * strides and dtype from now on, and keeps everything else: requires_grad,
 * grad, hooks, grad_fn, its place in recorded graphs, and its version.
 * t moves to src's device when they differ (PyTorch's `param.data = param.data.cuda()`).
 * Errors: src not floating while t requires grad. */
CG_API cg_status cg_tensor_set_data(cg_tensor *t, const cg_tensor *src);

/* Read-only memory (for cg_from_blob over memory that must not be written):
 * after cg_tensor_mark_readonly(t), every in-place write to t or to any tensor
 * sharing its storage fails with CG_ERR_RUNTIME; reads and out-of-place ops work. */
CG_API void cg_tensor_mark_readonly(cg_tensor *t);
CG_API bool cg_tensor_is_readonly(const cg_tensor *t);
/* An inference tensor (PyTorch's Tensor.is_inference): its storage was
 * allocated in inference mode (a tensor created there, or a view of one; a
 * view made in inference mode of a normal tensor stays normal). */
CG_API bool cg_tensor_is_inference(const cg_tensor *t);

/* Python back-pointer slot (weak, not refcounted; the binding manages it). */
CG_API void *cg_tensor_pyobj(const cg_tensor *t);
CG_API void cg_tensor_set_pyobj(cg_tensor *t, void *obj);

/* ------------------------------------------------------------- autograd API */

CG_API bool cg_tensor_requires_grad(const cg_tensor *t);
/* Leaf only (non-leaf: CG_ERR_RUNTIME); only floating dtypes may require grad. */
CG_API cg_status cg_tensor_set_requires_grad(cg_tensor *t, bool requires_grad);
/* borrowed, may be NULL; not safe while another thread may set t's grad or
 * run backward into t: use cg_tensor_grad_ref there */
CG_API cg_tensor *cg_tensor_grad(const cg_tensor *t);
/* t's grad as a new reference (NULL when none), safe against concurrent
 * backward and cg_tensor_set_grad (Note [Concurrent backward]) */
CG_API cg_tensor *cg_tensor_grad_ref(const cg_tensor *t);
CG_API cg_status cg_tensor_set_grad(cg_tensor *t, cg_tensor *grad); /* retains grad; NULL clears; thread-safe */
CG_API cg_node *cg_tensor_grad_fn(const cg_tensor *t);             /* borrowed, NULL for leaves */
CG_API int cg_tensor_output_nr(const cg_tensor *t);
CG_API bool cg_tensor_is_leaf(const cg_tensor *t);
CG_API cg_status cg_tensor_retain_grad(cg_tensor *t);
CG_API bool cg_tensor_retains_grad(const cg_tensor *t);
/* Alias sharing storage with no autograd history (new reference). */
CG_API cg_tensor *cg_detach(cg_tensor *t);
/* Detach in place: drop grad_fn, requires_grad=false. */
CG_API cg_status cg_detach_(cg_tensor *t);

/* Tensor hooks run when t's gradient is computed. A hook sets *replacement to a
 * new reference to replace the gradient, or leaves it NULL to keep it; a non-OK
 * return aborts backward with that error (set it with cg_set_error). */
typedef cg_status (*cg_hook_fn)(void *ctx, cg_tensor *grad, cg_tensor **replacement);
/* Returns a handle > 0, or -1 on error. ctx_free(ctx) runs when the hook is dropped. */
CG_API int64_t cg_tensor_register_hook(cg_tensor *t, cg_hook_fn fn, void *ctx, void (*ctx_free)(void *));
CG_API cg_status cg_tensor_remove_hook(cg_tensor *t, int64_t handle);

CG_API void cg_node_retain(cg_node *n);
CG_API void cg_node_release(cg_node *n);
CG_API const char *cg_node_name(const cg_node *n); /* e.g. "MulBackward0"; borrowed */
CG_API int cg_node_num_inputs(const cg_node *n);  /* number of next functions */
/* Next function i: borrowed node (NULL when that input needs no grad) and its input_nr. */
CG_API cg_node *cg_node_next(const cg_node *n, int i, int *input_nr);
/* For AccumulateGrad nodes: the leaf tensor (borrowed), else NULL. */
CG_API cg_tensor *cg_node_variable(const cg_node *n);
/* Creation order of n: a node created later has a larger number; backward runs larger first. */
CG_API uint64_t cg_node_sequence_nr(const cg_node *n);
CG_API int cg_node_num_outputs(const cg_node *n);

/* Note [Node hooks]: PyTorch's Node.register_prehook / register_hook. While
 * backward runs the node, a pre-hook sees the gradients of the node's outputs
 * (after the tensor hooks of those outputs), a post-hook the gradients the
 * node computed for its inputs (grad_inputs; NULL where an input needs none)
 * beside the grad_outputs it was given. The arrays hold references the engine
 * owns: a hook replaces entry i by releasing it and storing a new reference
 * (or NULL: no gradient). A replacement must have the shape and device of the
 * entry it replaces (else backward fails naming the node). Hooks run in
 * registration order with grad mode = create_graph; a non-OK return aborts
 * backward with that error. An AccumulateGrad node has one output (the leaf's
 * gradient) and no inputs; its post-hooks run after the accumulation. Hooks
 * run only when the node runs (not for nodes backward skips). Handles are
 * > 0 (-1 on error); ctx_free(ctx) runs when the hook is removed or the node
 * dies. */
typedef cg_status (*cg_node_pre_hook_fn)(void *ctx, cg_node *node, int num_grad_outputs, cg_tensor **grad_outputs);
typedef cg_status (*cg_node_post_hook_fn)(void *ctx, cg_node *node, int num_grad_inputs, cg_tensor **grad_inputs,
                                          int num_grad_outputs, cg_tensor *const *grad_outputs);
CG_API int64_t cg_node_register_pre_hook(cg_node *n, cg_node_pre_hook_fn fn, void *ctx, void (*ctx_free)(void *));
CG_API int64_t cg_node_register_post_hook(cg_node *n, cg_node_post_hook_fn fn, void *ctx, void (*ctx_free)(void *));
CG_API cg_status cg_node_remove_hook(cg_node *n, int64_t handle); /* idempotent */
/* Python back-pointer slot (weak, not refcounted; the binding manages it), and
 * one owned slot of binding data, freed with user_free when the node dies or
 * the slot is set again. */
CG_API void *cg_node_pyobj(const cg_node *n);
CG_API void cg_node_set_pyobj(cg_node *n, void *obj);
CG_API void *cg_node_user_data(const cg_node *n);
CG_API void cg_node_set_user_data(cg_node *n, void *data, void (*user_free)(void *));

/* Note [Hook contexts and a garbage collector]: a binding whose hook contexts
 * are objects of a tracing collector (Python's gc) must show the collector what
 * a tensor or node holds, or a hook whose closure refers back to its tensor or
 * node makes a cycle the collector cannot see. The visit calls run visit(ctx,
 * arg) on each context of t's own hooks (leaf and post-accumulate hooks), or of
 * n's node hooks, its outputs' tensor hooks and its user data, whose free
 * function is ctx_free (the binding's own), stopping at a nonzero return, which
 * they return. The drop calls remove those hooks (and n's user data), running
 * ctx_free. Both are sound only where the caller's reference is the only one
 * (use_count 1): then nothing else can reach the contexts through t or n, as
 * PyTorch's traverse functions require. Not thread-safe against concurrent
 * hook registration. */
typedef int (*cg_context_visit_fn)(void *ctx, void *arg);
CG_API long cg_tensor_use_count(const cg_tensor *t);
CG_API long cg_node_use_count(const cg_node *n);
CG_API int cg_tensor_visit_hook_contexts(const cg_tensor *t, void (*ctx_free)(void *), cg_context_visit_fn visit,
                                         void *arg);
CG_API int cg_node_visit_hook_contexts(const cg_node *n, void (*ctx_free)(void *), cg_context_visit_fn visit,
                                       void *arg);
CG_API void cg_tensor_drop_hook_contexts(cg_tensor *t, void (*ctx_free)(void *));
CG_API void cg_node_drop_hook_contexts(cg_node *n, void (*ctx_free)(void *));

/* PyTorch's Tensor.register_post_accumulate_grad_hook: on a leaf that requires
 * grad (else CG_ERR_RUNTIME), fn(ctx, leaf) runs after backward accumulated
 * into leaf->grad (backward only: cg_autograd_grad accumulates nothing).
 * Removed with cg_tensor_remove_hook. */
typedef cg_status (*cg_post_accumulate_hook_fn)(void *ctx, cg_tensor *leaf);
CG_API int64_t cg_tensor_register_post_accumulate_grad_hook(cg_tensor *t, cg_post_accumulate_hook_fn fn, void *ctx,
                                                            void (*ctx_free)(void *));

/* Backward from `root`. grad NULL means ones (root must have one element).
 * inputs (optional, n_inputs > 0) restricts accumulation to those leaves. */
CG_API cg_status cg_backward(cg_tensor *root, cg_tensor *grad, bool retain_graph, bool create_graph);
CG_API cg_status cg_backward_multi(int n_roots, cg_tensor *const *roots, cg_tensor *const *grads,
                                   bool retain_graph, bool create_graph,
                                   int n_inputs, cg_tensor *const *inputs);
/* torch.autograd.grad: results[i] receives a new reference (or NULL when unused
 * and allow_unused). grad_outputs may be NULL or contain NULLs (ones for scalars). */
CG_API cg_status cg_autograd_grad(int n_outputs, cg_tensor *const *outputs, cg_tensor *const *grad_outputs,
                                  int n_inputs, cg_tensor *const *inputs,
                                  bool retain_graph, bool create_graph, bool allow_unused,
                                  cg_tensor **results);

/* Custom nodes, for language bindings (Python's autograd.Function); Note
 * [Custom nodes] in src/autograd/custom.c. backward gets grad_outputs
 * [num_outputs] (borrowed; zeros for outputs that received no gradient, or NULL
 * when materialize_grads is off) and fills grad_inputs[num_inputs] with new
 * references or NULL. It runs with grad mode = create_graph. */
typedef cg_status (*cg_custom_backward_fn)(void *ctx, cg_node *node, cg_tensor *const *grad_outputs,
                                           cg_tensor **grad_inputs);
/* New reference. Edges go to the inputs that require grad (entries may be
 * NULL). `name` is copied. On success the node owns ctx: ctx_free(ctx) runs
 * when the node dies (it must not own the node). */
CG_API cg_node *cg_custom_node_new(const char *name, int num_inputs, cg_tensor *const *inputs, int num_outputs,
                                   int num_saved, cg_custom_backward_fn backward, void *ctx,
                                   void (*ctx_free)(void *));
CG_API bool cg_node_is_custom(const cg_node *node);
/* Record output i's metadata; a differentiable t (floating) becomes output i
 * of node (grad_fn, output_nr, requires_grad). */
CG_API cg_status cg_custom_node_set_output(cg_node *node, int i, cg_tensor *t, bool differentiable);
CG_API void cg_custom_node_set_materialize_grads(cg_node *node, bool materialize);
/* Save t in slot (after the outputs are set: an output is saved without a
 * reference cycle); its version is recorded now. */
CG_API cg_status cg_custom_node_save(cg_node *node, int slot, cg_tensor *t);
/* Saved slot as a new reference, or NULL with CG_ERR_RUNTIME when it was freed
 * by a backward without retain_graph or modified in place since. */
CG_API cg_tensor *cg_custom_node_saved(cg_node *node, int slot);

/* ------------------------------------------------------------- creation */

CG_API cg_tensor *cg_zeros(int ndim, const int64_t *shape, cg_dtype dt, cg_device dev);
CG_API cg_tensor *cg_ones(int ndim, const int64_t *shape, cg_dtype dt, cg_device dev);
CG_API cg_tensor *cg_full(int ndim, const int64_t *shape, double value, cg_dtype dt, cg_device dev);
CG_API cg_tensor *cg_arange(double start, double end, double step, cg_dtype dt, cg_device dev);
CG_API cg_tensor *cg_linspace(double start, double end, int64_t steps, cg_dtype dt, cg_device dev);
CG_API cg_tensor *cg_logspace(double start, double end, int64_t steps, double base, cg_dtype dt, cg_device dev);
/* (n, m) identity; m < 0 means m = n */
CG_API cg_tensor *cg_eye(int64_t n, int64_t m, cg_dtype dt, cg_device dev);
/* Samplers draw from the global generator and advance its offset by ceil(numel/2)
 * (randperm: ceil(n/2); multinomial: see src/ops/random.c, Note [RNG offsets]). */
CG_API cg_tensor *cg_rand(int ndim, const int64_t *shape, cg_dtype dt, cg_device dev);
CG_API cg_tensor *cg_randn(int ndim, const int64_t *shape, cg_dtype dt, cg_device dev);
CG_API cg_tensor *cg_randint(int64_t low, int64_t high, int ndim, const int64_t *shape, cg_dtype dt, cg_device dev);
CG_API cg_tensor *cg_randperm(int64_t n, cg_dtype dt, cg_device dev);
CG_API cg_tensor *cg_empty_like(cg_tensor *t);
CG_API cg_tensor *cg_zeros_like(cg_tensor *t);
CG_API cg_tensor *cg_ones_like(cg_tensor *t);
CG_API cg_tensor *cg_full_like(cg_tensor *t, double value);
CG_API cg_tensor *cg_rand_like(cg_tensor *t);
CG_API cg_tensor *cg_randn_like(cg_tensor *t);
CG_API cg_tensor *cg_randint_like(cg_tensor *t, int64_t low, int64_t high);
/* normal(mean, std) with tensor mean/std (broadcast) */
CG_API cg_tensor *cg_normal(cg_tensor *mean, cg_tensor *std);
/* in-place samplers (bump version; fail on leaves requiring grad in grad mode) */
CG_API cg_status cg_uniform_(cg_tensor *t, double low, double high);
CG_API cg_status cg_normal_(cg_tensor *t, double mean, double std);
CG_API cg_status cg_bernoulli_(cg_tensor *t, double p);
/* bernoulli(p): each element 1 with probability p[i] */
CG_API cg_tensor *cg_bernoulli(cg_tensor *p); /* p floating; p requiring grad gets a zero gradient (PyTorch) */
/* multinomial over the last dim of probs (1-D or 2-D), int64 result */
CG_API cg_tensor *cg_multinomial(cg_tensor *probs, int64_t num_samples, bool replacement);

/* ------------------------------------------------------------- copy, cast, in-place basics */

CG_API cg_tensor *cg_clone(cg_tensor *t);
CG_API cg_tensor *cg_contiguous(cg_tensor *t); /* t itself (new ref) when already contiguous */
/* contiguous(memory_format=f): t itself (new ref) when already laid out in f, else a differentiable
 * copy in f; CG_ERR_SHAPE for channels_last(_3d) on a tensor that is not 4-D (5-D), CG_ERR_VALUE for
 * PRESERVE (PyTorch: "preserve memory format is unsupported by the contiguous operator") */
CG_API cg_tensor *cg_contiguous_as(cg_tensor *t, cg_memory_format f);
/* clone(memory_format=f): always a new differentiable copy, laid out in f (PRESERVE: t's strides when t
 * is non-overlapping and dense, else its suggested format). cg_clone is cg_clone_as(t, CONTIGUOUS). */
CG_API cg_tensor *cg_clone_as(cg_tensor *t, cg_memory_format f);
/* empty_like(t, memory_format=f) of dtype dt: an uninitialised tensor of t's shape laid out as
 * cg_clone_as would lay it out */
CG_API cg_tensor *cg_empty_like_as(cg_tensor *t, cg_dtype dt, cg_device dev, cg_memory_format f);
CG_API cg_tensor *cg_to_dtype(cg_tensor *t, cg_dtype dt); /* differentiable between float dtypes; contiguous */
/* to(dtype, memory_format=f): t itself (new ref) when dt is t's dtype, else cg_to_dtype's copy laid out
 * as cg_clone_as(t, f) lays it out (PyTorch's Tensor.to keeps the layout: f = PRESERVE) */
CG_API cg_tensor *cg_to_dtype_as(cg_tensor *t, cg_dtype dt, cg_memory_format f);
CG_API cg_tensor *cg_to_device(cg_tensor *t, cg_device dev);
/* dst <- src with broadcast and dtype conversion, written into dst's storage */
CG_API cg_status cg_copy_(cg_tensor *dst, cg_tensor *src);
CG_API cg_status cg_fill_(cg_tensor *t, double value);
CG_API cg_status cg_zero_(cg_tensor *t);

/* ------------------------------------------------------------- views and shape ops */

/* shape may contain one -1. view fails (CG_ERR_SHAPE) when strides do not allow. */
CG_API cg_tensor *cg_view(cg_tensor *t, int ndim, const int64_t *shape);
/* t's elements read as dt, a dtype of the same element size (else CG_ERR_NOT_IMPLEMENTED): the same
 * storage, offset and strides; no autograd (PyTorch's view(dtype) across dtypes has none). */
CG_API cg_tensor *cg_view_dtype(cg_tensor *t, cg_dtype dt);
CG_API cg_tensor *cg_reshape(cg_tensor *t, int ndim, const int64_t *shape);
CG_API cg_tensor *cg_permute(cg_tensor *t, const int64_t *dims); /* ndim entries */
CG_API cg_tensor *cg_transpose(cg_tensor *t, int64_t dim0, int64_t dim1);
CG_API cg_tensor *cg_t(cg_tensor *t); /* <= 2-D */
CG_API cg_tensor *cg_expand(cg_tensor *t, int ndim, const int64_t *shape); /* -1 keeps a size */
CG_API cg_tensor *cg_broadcast_to(cg_tensor *t, int ndim, const int64_t *shape);
CG_API cg_tensor *cg_squeeze(cg_tensor *t);                    /* all size-1 dims */
CG_API cg_tensor *cg_squeeze_dim(cg_tensor *t, int64_t dim);
CG_API cg_tensor *cg_unsqueeze(cg_tensor *t, int64_t dim);
CG_API cg_tensor *cg_flatten(cg_tensor *t, int64_t start_dim, int64_t end_dim);
CG_API cg_tensor *cg_unflatten(cg_tensor *t, int64_t dim, int nsizes, const int64_t *sizes);
CG_API cg_tensor *cg_narrow(cg_tensor *t, int64_t dim, int64_t start, int64_t length);
/* Python slice semantics on one dim: start/stop clamped, step > 0 */
CG_API cg_tensor *cg_slice(cg_tensor *t, int64_t dim, int64_t start, int64_t stop, int64_t step);
CG_API cg_tensor *cg_select(cg_tensor *t, int64_t dim, int64_t index);
CG_API cg_tensor *cg_diagonal(cg_tensor *t, int64_t offset, int64_t dim1, int64_t dim2);
CG_API cg_tensor *cg_as_strided(cg_tensor *t, int ndim, const int64_t *shape, const int64_t *strides,
                                int64_t storage_offset);
CG_API cg_tensor *cg_unfold(cg_tensor *t, int64_t dim, int64_t size, int64_t step);
/* In-place views (Note [In-place views] in src/ops/views.c): t's own shape,
 * strides and offset become those of the out-of-place view, on the same
 * storage; with grad mode on and t requiring grad, t's grad_fn becomes the
 * view's backward (TransposeBackward1, ...), leading to t's old history. The
 * version is bumped. Errors: a leaf requiring grad (or a view of one) in grad
 * mode (CG_ERR_RUNTIME), and the out-of-place view's errors. */
CG_API cg_status cg_transpose_(cg_tensor *t, int64_t dim0, int64_t dim1);
CG_API cg_status cg_t_(cg_tensor *t); /* <= 2-D, else CG_ERR_RUNTIME */
CG_API cg_status cg_squeeze_(cg_tensor *t); /* all size-1 dims */
/* the size-1 dims among `dims` (ndims entries, wrapped; a repeat is CG_ERR_RUNTIME) */
CG_API cg_status cg_squeeze_dims_(cg_tensor *t, int ndims, const int64_t *dims);
CG_API cg_status cg_unsqueeze_(cg_tensor *t, int64_t dim);
CG_API cg_status cg_as_strided_(cg_tensor *t, int ndim, const int64_t *shape, const int64_t *strides,
                                int64_t storage_offset);
CG_API cg_tensor *cg_cat(int n, cg_tensor *const *ts, int64_t dim);
CG_API cg_tensor *cg_stack(int n, cg_tensor *const *ts, int64_t dim);
/* split into chunks of split_size along dim: out[] receives new references,
 * returns the count (or -1 on error). out must hold max(1, ceil(size/split_size)).
 * split_sizes: n entries; chunk: out must hold `chunks`; unbind: size along dim. */
CG_API int cg_split(cg_tensor *t, int64_t split_size, int64_t dim, cg_tensor **out);
CG_API int cg_split_sizes(cg_tensor *t, int n, const int64_t *sizes, int64_t dim, cg_tensor **out);
CG_API int cg_chunk(cg_tensor *t, int64_t chunks, int64_t dim, cg_tensor **out);
CG_API int cg_unbind(cg_tensor *t, int64_t dim, cg_tensor **out);
CG_API cg_tensor *cg_flip(cg_tensor *t, int ndims, const int64_t *dims);
CG_API cg_tensor *cg_roll(cg_tensor *t, int nshifts, const int64_t *shifts, const int64_t *dims); /* dims NULL: flattened */
CG_API cg_tensor *cg_repeat(cg_tensor *t, int nreps, const int64_t *repeats);
CG_API cg_tensor *cg_tile(cg_tensor *t, int nreps, const int64_t *reps);
CG_API cg_tensor *cg_tril(cg_tensor *t, int64_t diagonal);
CG_API cg_tensor *cg_triu(cg_tensor *t, int64_t diagonal);

/* ------------------------------------------------------------- elementwise binary */

/* The named elementwise ops (one row each in src/ops/elementwise_ops.py): their
 * ids and functions are generated (tools/gen_ops.py). */
#include "cgrad_op_ids.h"
#include "cgrad_elementwise_ops.h"

/* comparison -> bool */
CG_API cg_tensor *cg_isclose(cg_tensor *a, cg_tensor *b, double rtol, double atol, bool equal_nan);
/* logical -> bool (any dtype, nonzero is true) */
/* bitwise: integer and bool dtypes */

/* ------------------------------------------------------------- elementwise unary */

CG_API cg_tensor *cg_nan_to_num(cg_tensor *x, double nan, double posinf, double neginf);
CG_API cg_tensor *cg_clamp_scalar(cg_tensor *x, const double *min, const double *max); /* NULL = no bound */
CG_API cg_tensor *cg_pow_scalar(cg_tensor *x, double exponent);
CG_API cg_tensor *cg_rpow_scalar(double base, cg_tensor *x); /* base ** x */

/* ------------------------------------------------------------- activations */

CG_API cg_tensor *cg_leaky_relu(cg_tensor *x, double negative_slope);
CG_API cg_tensor *cg_elu(cg_tensor *x, double alpha);
CG_API cg_tensor *cg_celu(cg_tensor *x, double alpha);
CG_API cg_tensor *cg_gelu(cg_tensor *x, bool tanh_approx);
CG_API cg_tensor *cg_softplus(cg_tensor *x, double beta, double threshold);
CG_API cg_tensor *cg_hardtanh(cg_tensor *x, double min_val, double max_val);
CG_API cg_tensor *cg_softmax(cg_tensor *x, int64_t dim);
CG_API cg_tensor *cg_log_softmax(cg_tensor *x, int64_t dim);

/* ------------------------------------------------------------- n-ary */

CG_API cg_tensor *cg_where(cg_tensor *cond, cg_tensor *a, cg_tensor *b); /* cond: bool */
CG_API cg_tensor *cg_lerp(cg_tensor *start, cg_tensor *end, cg_tensor *weight);
CG_API cg_tensor *cg_addcmul(cg_tensor *self, cg_tensor *t1, cg_tensor *t2, double value);
CG_API cg_tensor *cg_addcdiv(cg_tensor *self, cg_tensor *t1, cg_tensor *t2, double value);
CG_API cg_tensor *cg_clamp(cg_tensor *x, cg_tensor *min, cg_tensor *max); /* NULL = no bound */

/* ------------------------------------------------------------- reductions
 * dims: list of ndims dims (negative wrap); dims == NULL / ndims == 0 means all dims. */

CG_API cg_tensor *cg_sum(cg_tensor *x, int ndims, const int64_t *dims, bool keepdim);
CG_API cg_tensor *cg_sum_dtype(cg_tensor *x, int ndims, const int64_t *dims, bool keepdim, cg_dtype dt);
CG_API cg_tensor *cg_mean(cg_tensor *x, int ndims, const int64_t *dims, bool keepdim);
CG_API cg_tensor *cg_prod(cg_tensor *x, int ndims, const int64_t *dims, bool keepdim);
CG_API cg_tensor *cg_amax(cg_tensor *x, int ndims, const int64_t *dims, bool keepdim);
CG_API cg_tensor *cg_amin(cg_tensor *x, int ndims, const int64_t *dims, bool keepdim);
/* max/min along one dim: values and int64 indices (both new refs) */
CG_API cg_status cg_max_dim(cg_tensor *x, int64_t dim, bool keepdim, cg_tensor **values, cg_tensor **indices);
CG_API cg_status cg_min_dim(cg_tensor *x, int64_t dim, bool keepdim, cg_tensor **values, cg_tensor **indices);
CG_API cg_tensor *cg_max(cg_tensor *x); /* over all elements */
CG_API cg_tensor *cg_min(cg_tensor *x);
/* dim < 0 after wrapping never happens; pass has_dim=false to flatten */
CG_API cg_tensor *cg_argmax(cg_tensor *x, bool has_dim, int64_t dim, bool keepdim);
CG_API cg_tensor *cg_argmin(cg_tensor *x, bool has_dim, int64_t dim, bool keepdim);
CG_API cg_tensor *cg_var(cg_tensor *x, int ndims, const int64_t *dims, double correction, bool keepdim);
CG_API cg_tensor *cg_std(cg_tensor *x, int ndims, const int64_t *dims, double correction, bool keepdim);
CG_API cg_tensor *cg_logsumexp(cg_tensor *x, int ndims, const int64_t *dims, bool keepdim);
/* p: any real, INFINITY, -INFINITY; "fro" is p=2 over the dims */
CG_API cg_tensor *cg_norm(cg_tensor *x, double p, int ndims, const int64_t *dims, bool keepdim);
CG_API cg_tensor *cg_all(cg_tensor *x, int ndims, const int64_t *dims, bool keepdim);
CG_API cg_tensor *cg_any(cg_tensor *x, int ndims, const int64_t *dims, bool keepdim);
CG_API cg_tensor *cg_count_nonzero(cg_tensor *x, int ndims, const int64_t *dims);
CG_API cg_tensor *cg_cumsum(cg_tensor *x, int64_t dim);
CG_API cg_tensor *cg_cumprod(cg_tensor *x, int64_t dim);
CG_API cg_status cg_cummax(cg_tensor *x, int64_t dim, cg_tensor **values, cg_tensor **indices);
CG_API cg_status cg_sort(cg_tensor *x, int64_t dim, bool descending, bool stable, cg_tensor **values, cg_tensor **indices);
CG_API cg_tensor *cg_argsort(cg_tensor *x, int64_t dim, bool descending, bool stable);
CG_API cg_status cg_topk(cg_tensor *x, int64_t k, int64_t dim, bool largest, bool sorted, cg_tensor **values, cg_tensor **indices);

/* ------------------------------------------------------------- linear algebra (BLAS) */

CG_API cg_tensor *cg_matmul(cg_tensor *a, cg_tensor *b);
CG_API cg_tensor *cg_mm(cg_tensor *a, cg_tensor *b);
CG_API cg_tensor *cg_bmm(cg_tensor *a, cg_tensor *b);
CG_API cg_tensor *cg_mv(cg_tensor *a, cg_tensor *v);
CG_API cg_tensor *cg_dot(cg_tensor *a, cg_tensor *b);
CG_API cg_tensor *cg_outer(cg_tensor *a, cg_tensor *b);
/* beta * self + alpha * (a @ b); for integer inputs beta and alpha are truncated to integers (as PyTorch). */
CG_API cg_tensor *cg_addmm(cg_tensor *self, cg_tensor *a, cg_tensor *b, double beta, double alpha);
/* linear: input (*, in) @ weight (out, in)^T + bias (out) -> (*, out); bias may be NULL.
 * One GEMM (the weight transposed by the GEMM flags), one autograd node. */
CG_API cg_tensor *cg_linear(cg_tensor *input, cg_tensor *weight, cg_tensor *bias);
/* bilinear: input1 (*, in1), input2 (*, in2), weight (out, in1, in2), bias (out) or NULL -> (*, out);
 * y = x1^T A x2 + b; float and integer dtypes (bool: CG_ERR_NOT_IMPLEMENTED). */
CG_API cg_tensor *cg_bilinear(cg_tensor *input1, cg_tensor *input2, cg_tensor *weight, cg_tensor *bias);
CG_API cg_tensor *cg_baddbmm(cg_tensor *self, cg_tensor *a, cg_tensor *b, double beta, double alpha);
/* einsum with PyTorch's dtype rule for integers: a contraction keeps the dtype; a dim only one operand has
 * is summed first as that operand's sum (small integers widen to int64), so is a one-operand einsum. */
CG_API cg_tensor *cg_einsum(const char *equation, int n, cg_tensor *const *operands);

/* ------------------------------------------------------------- indexing (all indices bounds-checked) */

CG_API cg_tensor *cg_index_select(cg_tensor *x, int64_t dim, cg_tensor *index);
CG_API cg_tensor *cg_gather(cg_tensor *x, int64_t dim, cg_tensor *index);
CG_API cg_tensor *cg_scatter(cg_tensor *x, int64_t dim, cg_tensor *index, cg_tensor *src);
CG_API cg_tensor *cg_scatter_add(cg_tensor *x, int64_t dim, cg_tensor *index, cg_tensor *src);
/* reduce: "sum", "prod", "mean", "amax", "amin" */
CG_API cg_tensor *cg_scatter_reduce(cg_tensor *x, int64_t dim, cg_tensor *index, cg_tensor *src,
                                    const char *reduce, bool include_self);
CG_API cg_tensor *cg_masked_fill(cg_tensor *x, cg_tensor *mask, cg_tensor *value); /* value 0-d */
CG_API cg_tensor *cg_masked_select(cg_tensor *x, cg_tensor *mask);
CG_API cg_tensor *cg_masked_scatter(cg_tensor *x, cg_tensor *mask, cg_tensor *source);
CG_API cg_tensor *cg_take(cg_tensor *x, cg_tensor *index);
CG_API cg_tensor *cg_nonzero(cg_tensor *x); /* (n, ndim) int64 */
/* Advanced indexing x[i0, i1, ...]: indices[k] is NULL (full slice) or an
 * int64/bool tensor; follows PyTorch's placement rules. */
CG_API cg_tensor *cg_index(cg_tensor *x, int n, cg_tensor *const *indices);
CG_API cg_tensor *cg_index_put(cg_tensor *x, int n, cg_tensor *const *indices, cg_tensor *values, bool accumulate);
CG_API cg_status cg_index_put_(cg_tensor *x, int n, cg_tensor *const *indices, cg_tensor *values, bool accumulate);

/* ------------------------------------------------------------- in-place variants
 * Written into self's storage, bumping its version. Rejected (CG_ERR_RUNTIME)
 * on a leaf requiring grad while grad mode is on, and (CG_ERR_SHAPE) when the
 * broadcast result's shape differs from self's. */

/* Generic in-place for any unary op by name: cg_unary_inplace("exp", x) etc.
 * Names are those of the op schemas ("relu", "sigmoid", ...). */
CG_API cg_status cg_unary_(const char *op_name, cg_tensor *self);
/* Generic in-place for any binary arithmetic op by name ("add", "maximum", ...). */
CG_API cg_status cg_binary_(const char *op_name, cg_tensor *self, cg_tensor *other);
CG_API cg_status cg_clamp_(cg_tensor *self, const double *min, const double *max);
CG_API cg_status cg_leaky_relu_(cg_tensor *self, double negative_slope);

/* ------------------------------------------------------------- optim: fused parameter updates
 * Note [Fused optimizer steps]: one call updates the n parameters of a group
 * in place, without autograd (grad mode is ignored): the loop over parameters
 * runs in C and each parameter's update is one pass over its elements, split
 * across threads when large. params[i], grads[i] and the state tensors of
 * index i must have the same shape (else CG_ERR_SHAPE), dtype (float32,
 * float64, float16 or bfloat16; else CG_ERR_DTYPE) and device, the message
 * naming the optimizer and i; every check runs before anything is written.
 * float16 / bfloat16 compute in float32. Grads may have any strides. Every
 * written tensor's version is bumped. The formulas and options are PyTorch's
 * (torch.optim, single-tensor form). steps[i] are one-element tensors holding
 * parameter i's step count: incremented first, then used (bias correction). */

typedef struct cg_sgd_options {
    double lr, momentum, dampening, weight_decay;
    bool nesterov, maximize;
} cg_sgd_options;
/* momentum_buffers: n slots, unused when momentum == 0; a NULL slot receives a
 * new buffer (a new reference the caller owns) holding that step's gradient
 * (after maximize and weight decay), as in PyTorch's first step. */
CG_API cg_status cg_sgd_step(int64_t n, cg_tensor *const *params, cg_tensor *const *grads,
                             cg_tensor **momentum_buffers, const cg_sgd_options *opt);

typedef struct cg_adam_options {
    double lr, beta1, beta2, eps, weight_decay;
    bool amsgrad, maximize;
    bool decoupled_weight_decay; /* AdamW: p *= 1 - lr * weight_decay */
} cg_adam_options;
/* max_exp_avg_sqs is read only when amsgrad (may be NULL otherwise). */
CG_API cg_status cg_adam_step(int64_t n, cg_tensor *const *params, cg_tensor *const *grads,
                              cg_tensor *const *exp_avgs, cg_tensor *const *exp_avg_sqs,
                              cg_tensor *const *max_exp_avg_sqs, cg_tensor *const *steps,
                              const cg_adam_options *opt);
/* GradScaler's fused check: every grads[i] (floating, CPU) *= inv_scale in
 * place, and found_inf (a one-element float32 tensor) is set to 1 when any
 * element of any gradient is inf or NaN (left as is otherwise). */
CG_API cg_status cg_amp_unscale_(int64_t n, cg_tensor *const *grads, cg_tensor *found_inf, cg_tensor *inv_scale);

typedef struct cg_rmsprop_options {
    double lr, alpha, eps, weight_decay, momentum;
    bool centered, maximize;
} cg_rmsprop_options;
/* momentum_buffers is read only when momentum > 0, grad_avgs only when
 * centered (either may be NULL otherwise). */
CG_API cg_status cg_rmsprop_step(int64_t n, cg_tensor *const *params, cg_tensor *const *grads,
                                 cg_tensor *const *square_avgs, cg_tensor *const *momentum_buffers,
                                 cg_tensor *const *grad_avgs, cg_tensor *const *steps,
                                 const cg_rmsprop_options *opt);

typedef struct cg_adagrad_options {
    double lr, lr_decay, weight_decay, eps;
    bool maximize;
} cg_adagrad_options;
/* state_sums start at initial_accumulator_value (the caller creates them). */
CG_API cg_status cg_adagrad_step(int64_t n, cg_tensor *const *params, cg_tensor *const *grads,
                                 cg_tensor *const *state_sums, cg_tensor *const *steps,
                                 const cg_adagrad_options *opt);

/* Adadelta, Adamax, NAdam, RAdam, Rprop and ASGD keep, besides steps[i], some
 * one-element state tensors of their own (NAdam's mu_products, ASGD's etas and
 * mus; float32 in PyTorch's state, any floating dtype accepted): like steps
 * they are checked first and updated by the call, in their own dtype, the way
 * PyTorch updates them. */

typedef struct cg_adadelta_options {
    double lr, rho, eps, weight_decay;
    bool maximize;
} cg_adadelta_options;
CG_API cg_status cg_adadelta_step(int64_t n, cg_tensor *const *params, cg_tensor *const *grads,
                                  cg_tensor *const *square_avgs, cg_tensor *const *acc_deltas,
                                  cg_tensor *const *steps, const cg_adadelta_options *opt);

typedef struct cg_adamax_options {
    double lr, beta1, beta2, eps, weight_decay;
    bool maximize;
} cg_adamax_options;
CG_API cg_status cg_adamax_step(int64_t n, cg_tensor *const *params, cg_tensor *const *grads,
                                cg_tensor *const *exp_avgs, cg_tensor *const *exp_infs, cg_tensor *const *steps,
                                const cg_adamax_options *opt);

typedef struct cg_nadam_options {
    double lr, beta1, beta2, eps, weight_decay, momentum_decay;
    bool maximize;
    bool decoupled_weight_decay; /* p *= 1 - lr * weight_decay */
} cg_nadam_options;
/* mu_products[i] (one-element, starting at 1) *= mu_t, the step's momentum coefficient. */
CG_API cg_status cg_nadam_step(int64_t n, cg_tensor *const *params, cg_tensor *const *grads,
                               cg_tensor *const *exp_avgs, cg_tensor *const *exp_avg_sqs,
                               cg_tensor *const *mu_products, cg_tensor *const *steps, const cg_nadam_options *opt);

typedef struct cg_radam_options {
    double lr, beta1, beta2, eps, weight_decay;
    bool maximize;
    bool decoupled_weight_decay; /* p *= 1 - lr * weight_decay */
} cg_radam_options;
/* The rectified update where rho_t > 5, else the bias-corrected momentum alone. */
CG_API cg_status cg_radam_step(int64_t n, cg_tensor *const *params, cg_tensor *const *grads,
                               cg_tensor *const *exp_avgs, cg_tensor *const *exp_avg_sqs, cg_tensor *const *steps,
                               const cg_radam_options *opt);

typedef struct cg_rprop_options {
    double etaminus, etaplus, step_size_min, step_size_max;
    bool maximize;
} cg_rprop_options;
/* step_sizes start at lr and prevs at 0 (the caller creates them); prevs[i]
 * receive the step's gradient, zeroed where its sign flipped. */
CG_API cg_status cg_rprop_step(int64_t n, cg_tensor *const *params, cg_tensor *const *grads,
                               cg_tensor *const *prevs, cg_tensor *const *step_sizes, cg_tensor *const *steps,
                               const cg_rprop_options *opt);

typedef struct cg_asgd_options {
    double lr, lambd, alpha, t0, weight_decay;
    bool maximize;
} cg_asgd_options;
/* etas[i] start at lr and mus[i] at 1 (one-element); after the update they
 * hold lr / (1 + lambd lr step)^alpha and 1 / max(1, step - t0), rounded to
 * float32 first as PyTorch's are. axs[i] is the running average of params[i]. */
CG_API cg_status cg_asgd_step(int64_t n, cg_tensor *const *params, cg_tensor *const *grads, cg_tensor *const *axs,
                              cg_tensor *const *mus, cg_tensor *const *etas, cg_tensor *const *steps,
                              const cg_asgd_options *opt);

/* ------------------------------------------------------------- checkpoints (safetensors)
 * The safetensors format that cgrad.utils.safetensors and the safetensors package read and write
 * (docs/engine.md, "Checkpoints from C"): a file saved here loads in Python (cgrad.load,
 * cgrad.utils.safetensors.load_file) and the reverse. The loader validates the whole header
 * before reading any data, as the Python loader does, and fails with CG_ERR_VALUE naming the
 * problem. */

typedef struct cg_checkpoint cg_checkpoint; /* the tensors of a loaded file, by name */
/* Write n named CPU tensors to path (saved contiguous; a new file renamed over path when whole). */
CG_API cg_status cg_save_safetensors(const char *path, int64_t n, const char *const *names,
                                     cg_tensor *const *tensors);
/* The tensors of a safetensors file (each in memory of its own), or NULL with the error set. */
CG_API cg_checkpoint *cg_load_safetensors(const char *path);
CG_API void cg_checkpoint_free(cg_checkpoint *c); /* NULL-safe; the tensors taken out stay valid */
CG_API int64_t cg_checkpoint_count(const cg_checkpoint *c);
CG_API const char *cg_checkpoint_name(const cg_checkpoint *c, int64_t i); /* borrowed; NULL + CG_ERR_INDEX */
CG_API cg_tensor *cg_checkpoint_tensor(const cg_checkpoint *c, int64_t i); /* new reference; NULL + CG_ERR_INDEX */
CG_API cg_tensor *cg_checkpoint_get(const cg_checkpoint *c, const char *name); /* new reference; NULL + CG_ERR_INDEX */
/* The value of a __metadata__ key (borrowed), or NULL when the file has none. */
CG_API const char *cg_checkpoint_metadata(const cg_checkpoint *c, const char *key);

/* ------------------------------------------------------------- nn: convolution and pooling */

/* Convolutions (PyTorch conv1d/2d/3d): input (N, C_in, *spatial) or unbatched
 * (C_in, *spatial), weight (C_out, C_in/groups, *kernel), bias (C_out) or NULL.
 * stride, padding, dilation: one entry per spatial dim (NULL = all 1 / 0 / 1).
 * The _same variants are padding='same' (output spatial size = input's; stride
 * must be all 1, else CG_ERR_VALUE; an odd total padding puts the extra element
 * on the right, as PyTorch). Other padding modes: pad first, then padding 0.
 * Floating dtypes only (float16 / bfloat16 compute in float32). */
CG_API cg_tensor *cg_conv1d(cg_tensor *input, cg_tensor *weight, cg_tensor *bias, const int64_t *stride,
                            const int64_t *padding, const int64_t *dilation, int64_t groups);
CG_API cg_tensor *cg_conv2d(cg_tensor *input, cg_tensor *weight, cg_tensor *bias, const int64_t *stride,
                            const int64_t *padding, const int64_t *dilation, int64_t groups);
CG_API cg_tensor *cg_conv3d(cg_tensor *input, cg_tensor *weight, cg_tensor *bias, const int64_t *stride,
                            const int64_t *padding, const int64_t *dilation, int64_t groups);
CG_API cg_tensor *cg_conv1d_same(cg_tensor *input, cg_tensor *weight, cg_tensor *bias, const int64_t *stride,
                                 const int64_t *dilation, int64_t groups);
CG_API cg_tensor *cg_conv2d_same(cg_tensor *input, cg_tensor *weight, cg_tensor *bias, const int64_t *stride,
                                 const int64_t *dilation, int64_t groups);
CG_API cg_tensor *cg_conv3d_same(cg_tensor *input, cg_tensor *weight, cg_tensor *bias, const int64_t *stride,
                                 const int64_t *dilation, int64_t groups);
/* Transposed convolutions: weight (C_in, C_out/groups, *kernel), bias (C_out) or
 * NULL; output size (in-1)*stride - 2*padding + dilation*(k-1) + output_padding + 1.
 * output_padding (NULL = 0) must be smaller than stride or dilation. */
CG_API cg_tensor *cg_conv_transpose1d(cg_tensor *input, cg_tensor *weight, cg_tensor *bias, const int64_t *stride,
                                      const int64_t *padding, const int64_t *output_padding, int64_t groups,
                                      const int64_t *dilation);
CG_API cg_tensor *cg_conv_transpose2d(cg_tensor *input, cg_tensor *weight, cg_tensor *bias, const int64_t *stride,
                                      const int64_t *padding, const int64_t *output_padding, int64_t groups,
                                      const int64_t *dilation);
CG_API cg_tensor *cg_conv_transpose3d(cg_tensor *input, cg_tensor *weight, cg_tensor *bias, const int64_t *stride,
                                      const int64_t *padding, const int64_t *output_padding, int64_t groups,
                                      const int64_t *dilation);

/* Pooling over the last 1 / 2 / 3 dims of input (N, C, *spatial) or (C, *spatial).
 * kernel_size, stride, padding, dilation: one entry per spatial dim; stride NULL
 * means stride = kernel_size, padding NULL = 0, dilation NULL = 1; padding must
 * be at most half the kernel size. ceil_mode rounds the output size up (a
 * window must still start inside the input or its left padding).
 * max_pool: *out receives the values; indices (may be NULL) receives int64 flat
 * indices into each input (L, H*W or D*H*W) plane, like PyTorch. NaN propagates.
 * Outputs, indices and gradients keep a channels_last / channels_last_3d input's
 * layout where PyTorch's CPU kernels do (max / avg / adaptive pools in 1-D and
 * 2-D, max_pool3d; Note [Channels-last pool] in src/ops/nn_pool.c). */
CG_API cg_status cg_max_pool1d(cg_tensor *input, const int64_t *kernel_size, const int64_t *stride,
                               const int64_t *padding, const int64_t *dilation, bool ceil_mode, cg_tensor **out,
                               cg_tensor **indices);
CG_API cg_status cg_max_pool2d(cg_tensor *input, const int64_t *kernel_size, const int64_t *stride,
                               const int64_t *padding, const int64_t *dilation, bool ceil_mode, cg_tensor **out,
                               cg_tensor **indices);
CG_API cg_status cg_max_pool3d(cg_tensor *input, const int64_t *kernel_size, const int64_t *stride,
                               const int64_t *padding, const int64_t *dilation, bool ceil_mode, cg_tensor **out,
                               cg_tensor **indices);
/* avg_pool: count_include_pad counts padded positions in the divisor;
 * divisor_override > 0 replaces the divisor (0 = none; PyTorch's avg_pool1d
 * has no such argument: pass 0). */
CG_API cg_tensor *cg_avg_pool1d(cg_tensor *input, const int64_t *kernel_size, const int64_t *stride,
                                const int64_t *padding, bool ceil_mode, bool count_include_pad,
                                int64_t divisor_override);
CG_API cg_tensor *cg_avg_pool2d(cg_tensor *input, const int64_t *kernel_size, const int64_t *stride,
                                const int64_t *padding, bool ceil_mode, bool count_include_pad,
                                int64_t divisor_override);
CG_API cg_tensor *cg_avg_pool3d(cg_tensor *input, const int64_t *kernel_size, const int64_t *stride,
                                const int64_t *padding, bool ceil_mode, bool count_include_pad,
                                int64_t divisor_override);
/* Adaptive pooling: output_size one entry per spatial dim; window o of a dim
 * of size I covers [floor(o*I/O), ceil((o+1)*I/O)). */
CG_API cg_tensor *cg_adaptive_avg_pool1d(cg_tensor *input, const int64_t *output_size);
CG_API cg_tensor *cg_adaptive_avg_pool2d(cg_tensor *input, const int64_t *output_size);
CG_API cg_tensor *cg_adaptive_avg_pool3d(cg_tensor *input, const int64_t *output_size);
CG_API cg_status cg_adaptive_max_pool1d(cg_tensor *input, const int64_t *output_size, cg_tensor **out,
                                        cg_tensor **indices);
CG_API cg_status cg_adaptive_max_pool2d(cg_tensor *input, const int64_t *output_size, cg_tensor **out,
                                        cg_tensor **indices);
CG_API cg_status cg_adaptive_max_pool3d(cg_tensor *input, const int64_t *output_size, cg_tensor **out,
                                        cg_tensor **indices);

/* ------------------------------------------------------------- nn: normalization, losses, embedding, misc */

/* Optional tensor arguments (weight, bias, running stats, masks) may be NULL.
 * Gradients of every op below are built from cg ops, so they are differentiable
 * again (double backward). */

/* Normalization. input is (N, C, *) for batch / instance / group norm.
 * batch_norm: training uses the batch statistics (mean and biased variance over
 * every dim but C) and, when running_mean / running_var (C) are given, updates
 * them in place (no grad): r = (1 - momentum) * r + momentum * stat, with the
 * unbiased variance for running_var. Eval (training = false) normalizes with
 * the running stats (then required). weight, bias: (C). */
CG_API cg_tensor *cg_batch_norm(cg_tensor *input, cg_tensor *running_mean, cg_tensor *running_var,
                                cg_tensor *weight, cg_tensor *bias, bool training, double momentum, double eps);
/* instance_norm: statistics per (n, c) over the spatial dims when
 * use_input_stats (running stats, if given, are updated with the stats averaged
 * over N); else the running stats normalize. */
CG_API cg_tensor *cg_instance_norm(cg_tensor *input, cg_tensor *running_mean, cg_tensor *running_var,
                                   cg_tensor *weight, cg_tensor *bias, bool use_input_stats, double momentum,
                                   double eps);
/* layer_norm over the last ndims dims, which must equal normalized_shape;
 * weight and bias have normalized_shape. */
CG_API cg_tensor *cg_layer_norm(cg_tensor *input, int ndims, const int64_t *normalized_shape, cg_tensor *weight,
                                cg_tensor *bias, double eps);
/* group_norm: C split into num_groups groups; weight, bias: (C). */
CG_API cg_tensor *cg_group_norm(cg_tensor *input, int64_t num_groups, cg_tensor *weight, cg_tensor *bias, double eps);
/* rms_norm over the last ndims dims: x * rsqrt(mean(x^2) + eps) * weight;
 * eps NaN means the dtype's machine epsilon (PyTorch's eps=None); a negative eps is used as given. */
CG_API cg_tensor *cg_rms_norm(cg_tensor *input, int ndims, const int64_t *normalized_shape, cg_tensor *weight,
                              double eps);
/* One direction of an LSTM layer over a whole sequence: xp (T, B, 4H) is the
 * input projection with both biases added (gates i, f, g, o), h0, c0 (B, H),
 * w_hh (4H, H); float32 / float64. Steps run t = 0 .. T-1, or backwards with
 * reverse. out (T, B, H), h_n, c_n (B, H); one autograd node (Note [LSTM layer]). */
CG_API cg_status cg_lstm_layer(cg_tensor *xp, cg_tensor *h0, cg_tensor *c0, cg_tensor *w_hh, bool reverse,
                               cg_tensor **out, cg_tensor **h_n, cg_tensor **c_n);

/* Dropout (0 <= p <= 1). The mask is drawn from the global generator like
 * cg_rand (ceil(numel(mask) / 2) counters), so results depend only on the
 * generator state, never on the thread count. Not training (or p == 0): the
 * input itself is returned (a new reference). Kept elements are scaled by
 * 1 / (1 - p); the backward multiplies by the same mask. */
CG_API cg_tensor *cg_dropout(cg_tensor *input, double p, bool training);
/* Feature dropout (dropout1d / 2d / 3d): input (N, C, *) (ndim >= 2); zeroes
 * whole channels, one draw per (n, c). */
CG_API cg_tensor *cg_feature_dropout(cg_tensor *input, double p, bool training);
/* Alpha dropout (for SELU networks): keeps mean and variance. */
CG_API cg_tensor *cg_alpha_dropout(cg_tensor *input, double p, bool training);

/* Embedding: weight (V, D), indices int64 of any shape -> indices.shape + (D).
 * Indices are bounds-checked (CG_ERR_INDEX). padding_idx < 0: none; else the
 * rows equal to padding_idx get no gradient. */
CG_API cg_tensor *cg_embedding(cg_tensor *weight, cg_tensor *indices, int64_t padding_idx);
/* In place, no grad: every row of weight referenced by indices whose
 * norm_type-norm exceeds max_norm is scaled to max_norm / (norm + 1e-7). */
CG_API cg_status cg_embedding_renorm_(cg_tensor *weight, cg_tensor *indices, double max_norm, double norm_type);

/* Losses. Class targets are int64 and bounds-checked (CG_ERR_INDEX naming the
 * value); ignore_index entries contribute nothing. reduction MEAN of a weighted
 * class loss divides by the sum of the weights of the non-ignored targets. */
/* cross_entropy = nll_loss(log_softmax(input, class dim)): input (N, C, *) or
 * (C); target int64 (N, *) or () of class indices, or class probabilities
 * (floating, input's shape). weight: (C). label_smoothing in [0, 1]. */
CG_API cg_tensor *cg_cross_entropy(cg_tensor *input, cg_tensor *target, cg_tensor *weight, int64_t ignore_index,
                                   double label_smoothing, cg_reduction reduction);
CG_API cg_tensor *cg_nll_loss(cg_tensor *log_probs, cg_tensor *target, cg_tensor *weight, int64_t ignore_index,
                              cg_reduction reduction);
/* Pointwise regression losses (input and target broadcast). */
CG_API cg_tensor *cg_mse_loss(cg_tensor *input, cg_tensor *target, cg_reduction reduction);
CG_API cg_tensor *cg_l1_loss(cg_tensor *input, cg_tensor *target, cg_reduction reduction);
CG_API cg_tensor *cg_smooth_l1_loss(cg_tensor *input, cg_tensor *target, cg_reduction reduction, double beta);
CG_API cg_tensor *cg_huber_loss(cg_tensor *input, cg_tensor *target, cg_reduction reduction, double delta);
/* input: probabilities in [0, 1] (checked); target: input's shape; logs are
 * clamped at -100. weight broadcasts to input. */
CG_API cg_tensor *cg_binary_cross_entropy(cg_tensor *input, cg_tensor *target, cg_tensor *weight,
                                          cg_reduction reduction);
/* pos_weight broadcasts along the last (class) dim. */
CG_API cg_tensor *cg_binary_cross_entropy_with_logits(cg_tensor *input, cg_tensor *target, cg_tensor *weight,
                                                      cg_tensor *pos_weight, cg_reduction reduction);
/* input: log-probabilities; target: probabilities (log-probabilities when
 * log_target). MEAN averages over every element: "batchmean" is the caller's
 * SUM divided by the batch size. */
CG_API cg_tensor *cg_kl_div(cg_tensor *input, cg_tensor *target, cg_reduction reduction, bool log_target);
/* sum(x1/max(|x1|,eps) * x2/max(|x2|,eps)) along dim (x1, x2 broadcast). */
CG_API cg_tensor *cg_cosine_similarity(cg_tensor *x1, cg_tensor *x2, int64_t dim, double eps);
/* p-norm of (x1 - x2 + eps) along the last dim. */
CG_API cg_tensor *cg_pairwise_distance(cg_tensor *x1, cg_tensor *x2, double p, double eps, bool keepdim);

/* Padding: pads holds npad (even) entries, last dim first as in PyTorch:
 * (left, right) of the last dim, then of the one before, ... Negative pads
 * crop. reflect needs pads < the dim's size, circular pads <= size. The
 * backward of reflect / replicate / circular accumulates. */
typedef enum cg_pad_mode { CG_PAD_CONSTANT = 0, CG_PAD_REFLECT, CG_PAD_REPLICATE, CG_PAD_CIRCULAR } cg_pad_mode;
CG_API cg_tensor *cg_pad(cg_tensor *input, int npad, const int64_t *pads, cg_pad_mode mode, double value);
/* Resampling of input (N, C, *spatial) (1 to 3 spatial dims). Give the output
 * size (size, ndim-2 entries) or scale factors (ndim-2 entries; output size
 * floor(in * scale), and the scale itself maps coordinates as in PyTorch with
 * recompute_scale_factor=False), the other NULL. LINEAR is linear / bilinear /
 * trilinear by rank; BICUBIC needs 2 spatial dims; align_corners is for
 * LINEAR and BICUBIC only. */
typedef enum cg_interp_mode { CG_INTERP_NEAREST = 0, CG_INTERP_LINEAR, CG_INTERP_BICUBIC } cg_interp_mode;
CG_API cg_tensor *cg_interpolate(cg_tensor *input, cg_interp_mode mode, const int64_t *size,
                                 const double *scale_factors, bool align_corners);
/* Antialiased bilinear / bicubic (LINEAR / BICUBIC) of a 4-D uint8 input, as
 * PyTorch's interpolate(antialias=True) computes it; arguments as for
 * cg_interpolate. (uint8 LINEAR / BICUBIC without antialias go through
 * cg_interpolate; floating antialiased resampling is composed in Python.) */
CG_API cg_tensor *cg_interpolate_aa(cg_tensor *input, cg_interp_mode mode, const int64_t *size,
                                    const double *scale_factors, bool align_corners);
/* (*, C*r*r, H, W) <-> (*, C, H*r, W*r) */
CG_API cg_tensor *cg_pixel_shuffle(cg_tensor *input, int64_t upscale_factor);
CG_API cg_tensor *cg_pixel_unshuffle(cg_tensor *input, int64_t downscale_factor);
/* int64 indices (any shape) -> int64 indices.shape + (num_classes);
 * num_classes < 0: max(indices) + 1. */
CG_API cg_tensor *cg_one_hot(cg_tensor *indices, int64_t num_classes);
/* softmax(q k^T * scale + mask) v. q (*, L, E), k (*, S, E), v (*, S, Ev)
 * (batch dims broadcast). attn_mask broadcasts to (*, L, S): bool (true =
 * attend) or additive of q's dtype. is_causal masks j > i (no attn_mask then).
 * scale <= 0: 1/sqrt(E). Rows with every position masked give zeros.
 * dropout_p > 0 applies dropout to the attention weights. */
CG_API cg_tensor *cg_scaled_dot_product_attention(cg_tensor *q, cg_tensor *k, cg_tensor *v, cg_tensor *attn_mask,
                                                  double dropout_p, bool is_causal, double scale);

#ifdef __cplusplus
}
#endif
#endif /* CGRAD_H */
