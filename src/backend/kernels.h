/* kernels.h — internal: the per-device entries of the custom kernels, the ops
 * whose compute is neither an elementwise formula nor a reduction (softmax,
 * conv, pool, norm, sort / scan, indexing, gather / scatter, RNG, losses,
 * optimizer steps, BLAS products). One table of entries per backend (Note
 * [Kernel entries]). Knows nothing of autograd or op descriptors. */
#ifndef CG_BACKEND_KERNELS_H
#define CG_BACKEND_KERNELS_H

#include "../core/core_internal.h"

struct cg_iter; /* the iterator plan (backend.h) */

/* Note [Kernel entries]: the op (src/ops) validates its arguments, infers the
 * output shapes, allocates the outputs on the inputs' device, prepares its
 * inputs (contiguous copies and casts, which run through the backend) and
 * wires the graph; the entry only computes values into the outputs it is
 * handed. Entries take tensors of their backend's device and return CG_OK, or
 * a failure status with the error set (CG_ERR_OOM for scratch memory). Ops
 * call them through CG_RUN_KERNEL (src/dispatch/dispatch_internal.h): on a
 * device that stores no data (meta) nothing runs, and a device whose table
 * lacks the entry fails with CG_ERR_NOT_IMPLEMENTED naming the op and the
 * device. The CPU's entries are in src/backend/cpu/cpu_kernels.c.
 *
 * Sections are kept one per op family, in the order of the families' files. */
typedef struct cg_kernels {
    /* ---- softmax (src/ops/softmax.c): along `dim` of contiguous tensors of one shape */
    cg_status (*softmax)(cg_tensor *y, const cg_tensor *x, int64_t dim, bool log);
    cg_status (*softmax_backward)(cg_tensor *gx, const cg_tensor *g, const cg_tensor *y, int64_t dim, bool log);

    /* ---- BLAS products, convolution, pooling, recurrent cells (src/ops/linalg.c, nn_linear.c, nn_conv.c,
     *      nn_pool.c, nn_rnn.c) */

    /* ---- normalization, losses, resampling and the other nn kernels, RNG (src/ops/nn_norm.c, nn_loss.c,
     *      nn_misc.c, nn_resample.c, random.c) */

    /* ---- creation, indexing, gather / scatter, sort, scan, repeat, copies (src/ops/creation.c, indexing.c,
     *      advanced_index.c, gather_scatter.c, sort.c, scan.c, repeat.c, slicing.c, views.c, copy.c) */
    /* creation: out (n,) contiguous <- start + i * step; integer dtypes from the truncated int64 istart /
     * istep, wrapped to the dtype (Note [arange of an integer dtype]), the others in double */
    cg_status (*arange)(cg_tensor *out, double start, double step, int64_t istart, int64_t istep);
    /* out (steps,) contiguous <- the linspace values (base ** v when log): i < halfway counts up from start,
     * the rest down from end; start, end, step already as the dtype holds them (src/ops/creation.c) */
    cg_status (*linspace)(cg_tensor *out, double start, double end, double step, int64_t halfway, bool log,
                          double base);
    /* out (n, m) contiguous <- ones on the main diagonal, zeros elsewhere */
    cg_status (*eye)(cg_tensor *out);
    /* gather / scatter (any strides; index int64, 0-d counts as (1,)): every index is checked against the
     * target's size along dim first (CG_ERR_INDEX "[op] index ... is out of bounds ...", nothing written),
     * then the index is walked in row-major order on one thread (Note [Deterministic scatter]).
     * gather: out (index-shaped, contiguous) <- x[..., index, ...] along dim */
    cg_status (*gather)(cg_tensor *out, const cg_tensor *x, const cg_tensor *index, int64_t dim);
    /* scatter: out (contiguous, holding x) <- src scattered along dim; mode 0 copy, 1 sum, 2 prod, 3 mean,
     * 4 amax, 5 amin; include_self false: a slot's first write copies; op names the caller in errors */
    cg_status (*scatter)(const char *op, cg_tensor *out, const cg_tensor *index, const cg_tensor *src, int64_t dim,
                         int mode, bool include_self);
    /* indexing: *count <- the number of nonzero elements of contiguous x (any dtype) */
    cg_status (*nonzero_count)(const cg_tensor *x, int64_t *count);
    /* out (count, ndim) int64 <- the coordinates of the nonzero elements of contiguous x, row-major order */
    cg_status (*nonzero)(cg_tensor *out, const cg_tensor *x);
    /* *found, and *bad <- the first value of contiguous int64 t outside [lo, hi) */
    cg_status (*index_find_out_of_range)(const cg_tensor *t, int64_t lo, int64_t hi, bool *found, int64_t *bad);
    /* advanced indexing (Note [Index plan], src/ops/advanced_index.c): off (the broadcast index shape B,
     * contiguous int64) <- sum_k wrap(idx[k]) * x.stride[k] for every position of B; idx[d] (d < x->ndim):
     * NULL (a full slice) or contiguous int64 broadcasting to B; CG_ERR_INDEX "[op] index ... is out of
     * bounds ..." for an index outside its dim (only x's geometry is read) */
    cg_status (*index_offsets)(const char *op, cg_tensor *off, const cg_tensor *x, cg_tensor *const *idx);
    /* the plan's iterator (cg_iter_init over the result shape): args[0] out, args[1] x restrided (stride 0 on
     * B), args[2] the int64 offsets: out = x[base + off] (elements of itemsize bytes) */
    cg_status (*index_gather)(const struct cg_iter *it, size_t itemsize);
    /* args[0] x restrided, args[1] values (broadcast), args[2] offsets: x[base + off] = v, or += v when
     * accumulate (by dtype dt), in row-major order on one thread (duplicates resolve deterministically) */
    cg_status (*index_put)(const struct cg_iter *it, cg_dtype dt, bool accumulate);

    /* ---- reductions and optimizer steps (src/ops/reduce*.c, src/optim) */
} cg_kernels;

#endif
