/* cuda_abi.h — the C ABI between the engine's CUDA backend (cuda_backend.c,
 * plain C, compiled into every engine) and the CUDA kernel library
 * libcgrad_cuda.so (src/backend/cuda/lib, built by nvcc when a CUDA toolkit is
 * found, loaded at run time: Note [CUDA kernel library]). Plain C types only;
 * included by C and by CUDA C++. The library exports one symbol,
 * cgcu_get_api, which returns the table of entry points below.
 *
 * Conventions. Every entry returns an int status: CGCU_OK, one of the negative
 * CGCU_ codes, or a positive cudaError_t (error_string names it). `dev` is the
 * CUDA device ordinal; an entry makes it current on the calling thread. Work is
 * enqueued on the device's stream (one per device, created at first use) and
 * the entry returns without waiting, except where it says it waits. Device
 * pointers are plain CUDA device addresses. dtype codes are cg_dtype values and
 * op ids cg_op_id values (cgrad.h). */
#ifndef CG_CUDA_ABI_H
#define CG_CUDA_ABI_H

#include <stddef.h>
#include <stdint.h>

#define CGCU_ABI_VERSION 3 /* 2: pointer_device removed (plan entries take their device); 3: index_gather / index_put, embedding, dropout_mask, optim_step */
#define CGCU_MAX_DIMS 16 /* = CG_MAX_DIMS */
#define CGCU_MAX_ARGS 6  /* = CG_ITER_MAX_ARGS */
#define CGCU_MAX_PARAMS 4

enum {
    CGCU_OK = 0,
    CGCU_MISSING = -1, /* the library has no kernel for this op / kind / dtype */
    CGCU_OOM = -2,     /* device memory (or host memory for the library's own bookkeeping) ran out */
    CGCU_INVALID = -3, /* an argument the library cannot take (a size beyond its indexing) */
    CGCU_NO_BLAS = -4, /* cuBLAS could not be loaded or set up (error_string says from where it was looked for) */
    CGCU_BLAS_FAILED = -5, /* a cuBLAS call failed (error_string names its status) */
};

/* An iterator plan, the same layout as cg_iter (backend.h; the engine
 * checks this with a static assertion): dim 0 innermost, byte strides, ptr[0]
 * the output, ptr[1..] the inputs; only the first nargs entries of ptr and
 * strides are defined. */
typedef struct cgcu_plan {
    int ndim;
    int nargs;
    int64_t numel;
    int64_t shape[CGCU_MAX_DIMS];
    char *ptr[CGCU_MAX_ARGS];
    int64_t strides[CGCU_MAX_ARGS][CGCU_MAX_DIMS];
} cgcu_plan;

/* A reduction plan (cg_reduce_plan, backend.h): `iter` runs over the outputs
 * (args: the outputs, the int64 indices when has_idx, then the first input
 * element of each output's run); each output folds n input elements `stride`
 * bytes apart, with the semantics of the CPU loops of `kind` (a
 * cg_reduce_kind) for input dtype in_dtype into out_dtype. */
typedef struct cgcu_reduce_plan {
    cgcu_plan iter;
    int64_t n, stride;
    int in_dtype, out_dtype;
    int has_idx;
    int kind;
    double params[CGCU_MAX_PARAMS];
} cgcu_reduce_plan;

/* One parameter's optimizer step (the optim_step entry, src/backend/kernels.h): n elements of dtype
 * `dtype` (f32 / f64 / f16 / bf16), d[0] the parameter, d[1] its gradient, then the optimizer's states in
 * the CPU entry's order (SGD: momentum buffer; Adam: exp_avg, exp_avg_sq, max_exp_avg_sq), all
 * contiguous device memory; s the per-parameter scalars (Adam: -lr / bias_correction1,
 * sqrt(bias_correction2)); first: SGD's momentum buffer is new; the options of cg_sgd_options /
 * cg_adam_options (kind a cg_optim_kind). */
typedef struct cgcu_optim {
    int kind, dtype, first;
    int64_t n;
    void *d[6];
    double s[4];
    double lr, momentum, dampening, weight_decay, beta1, beta2, eps;
    int nesterov, maximize, amsgrad, decoupled_weight_decay;
} cgcu_optim;

typedef struct cgcu_props {
    char name[256];
    int major, minor;    /* compute capability */
    int multiprocessors;
    size_t total_memory; /* bytes */
} cgcu_props;

typedef struct cgcu_api {
    int abi_version; /* CGCU_ABI_VERSION */
    /* the message of a status (static storage) */
    const char *(*error_string)(int status);

    /* ---- runtime (src/backend/cuda/lib/runtime.cu) */
    /* *n <- the number of devices (0 and a positive status when there is no driver or device) */
    int (*device_count)(int *n);
    int (*properties)(int dev, cgcu_props *p);
    /* device memory: cudaMalloc / cudaFree (free waits for the device's work) */
    int (*malloc)(int dev, size_t nbytes, void **p);
    int (*free)(int dev, void *p);
    int (*mem_info)(int dev, size_t *free_bytes, size_t *total_bytes);
    /* host -> device: returns once src may be reused; device -> host: waits for the device's stream */
    int (*copy_h2d)(int dev, void *dst, const void *src, size_t nbytes);
    int (*copy_d2h)(int dev, void *dst, const void *src, size_t nbytes);
    /* waits for every piece of work enqueued on the device's stream; returns the first asynchronous error */
    int (*synchronize)(int dev);

    /* ---- elementwise, casts, fill (src/backend/cuda/lib/elementwise.gen.cu, copy_fill.cu) */
    /* every element of the plan through op table row op_id's kernel for data dtype `dtype`, with the CPU
     * loop's semantics bit for bit where the math is exact; params: CGCU_MAX_PARAMS doubles (the loop
     * parameters). *loop_error <- 1 when the kernel flagged an input it cannot compute (Note [Loop errors]);
     * an op row that can flag makes this entry wait for its kernel. CGCU_MISSING: no kernel for the row. */
    int (*elementwise)(int dev, const cgcu_plan *p, int op_id, int dtype, const double *params, int *loop_error);
    /* ptr[0] (dtype dst) <- ptr[1] (dtype src), converted as the CPU's cast loops do */
    int (*cast)(int dev, const cgcu_plan *p, int dst_dtype, int src_dtype);
    /* ptr[0] <- the itemsize-byte value at `value` (host memory) */
    int (*fill)(int dev, const cgcu_plan *p, const void *value, size_t itemsize);

    /* ---- reductions (src/backend/cuda/lib/reduce.cu) */
    int (*reduce)(int dev, const cgcu_reduce_plan *p);

    /* ---- BLAS (src/backend/cuda/lib/blas.cu, cuBLAS loaded at first use) */
    /* row-major, batched: for b < batch, C_b (m, n; leading dim ldc, batch stride sc elements) <-
     * alpha * op(A_b) @ op(B_b) + beta * C_b (beta 0: C not read); op(A_b) is (m, k): A_b (m, k) with
     * leading dim lda when !ta, A_b (k, m) when ta; likewise B. dtype_ab: float32 / float64 with dtype_c the
     * same, or bfloat16 / float16 with dtype_c float32 (accumulated in float32). Strides in elements.
     * k == 0: C_b <- beta * C_b (zeros when beta is 0). */
    int (*gemm)(int dev, int dtype_ab, int dtype_c, int ta, int tb, int64_t m, int64_t n, int64_t k, double alpha,
                const void *a, int64_t lda, int64_t sa, const void *b, int64_t ldb, int64_t sb, double beta, void *c,
                int64_t ldc, int64_t sc, int64_t batch);

    /* ---- softmax (src/backend/cuda/lib/softmax.cu): x, y (outer, len, inner) contiguous of float dtype
     * `dtype` (f32 / f64 / f16 / bf16), along the middle dim, accumulated as the CPU's kernel does */
    int (*softmax)(int dev, int dtype, void *y, const void *x, int64_t outer, int64_t len, int64_t inner, int log);
    /* gx <- the gradient: softmax: y * (g - sum(g * y)); log_softmax: g - exp(y) * sum(g) */
    int (*softmax_backward)(int dev, int dtype, void *gx, const void *g, const void *y, int64_t outer, int64_t len,
                            int64_t inner, int log);

    /* ---- advanced indexing (src/backend/cuda/lib/index.cu), over the plans of Note [Index plan]:
     * gather: ptr[0] out <- the itemsize-byte item at ptr[1] + offset * itemsize, offset the int64 at ptr[2];
     * put: the item at ptr[0] + offset * itemsize (dtype `dtype`, offset at ptr[2]) <- the item at ptr[1],
     * or += it when accumulate (atomically: repeated offsets all add; without accumulate one of them wins,
     * as PyTorch's CUDA index_put_ leaves it unspecified). Offsets are in range (checked before). */
    int (*index_gather)(int dev, const cgcu_plan *p, int itemsize);
    int (*index_put)(int dev, const cgcu_plan *p, int dtype, int accumulate);
    /* out (n, D) contiguous <- the rows idx[0..n) (int64, in range) of w (V, D) contiguous, items of itemsize */
    int (*embedding)(int dev, void *out, const void *w, const int64_t *idx, int64_t n, int64_t D, int itemsize);

    /* ---- random numbers (src/backend/cuda/lib/random.cu), on the CPU's counter-based Philox streams (Note
     * [Philox streams], src/core/rng.c): element i of m (n items of itemsize, contiguous) <- the item at
     * `kept` (host memory, itemsize bytes) when the 53-bit uniform of element i of the stream (seed, base)
     * is below keep, else zero bits; the values equal the CPU's bit for bit */
    int (*dropout_mask)(int dev, void *m, int64_t n, int itemsize, const void *kept, double keep, uint64_t seed,
                        uint64_t base);

    /* ---- optimizer steps (src/backend/cuda/lib/optim.cu): the CPU loops' element formulas, operation by
     * operation (the device may fuse a multiply-add: an ulp per operation); CGCU_MISSING for the kinds
     * without a kernel (the engine stages those) */
    int (*optim_step)(int dev, const cgcu_optim *o);
} cgcu_api;

/* the library's one export; NULL when abi_version is not the library's */
typedef const cgcu_api *(*cgcu_get_api_fn)(int abi_version);
#define CGCU_GET_API_SYMBOL "cgcu_get_api"

#endif
