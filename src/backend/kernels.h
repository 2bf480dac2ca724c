/* kernels.h — internal: the per-device entries of the custom kernels, the ops
 * whose compute is neither an elementwise formula nor a reduction (softmax,
 * conv, pool, norm, sort / scan, indexing, gather / scatter, RNG, losses,
 * optimizer steps, BLAS products). One table of entries per backend (Note
 * [Kernel entries]). Knows nothing of autograd or op descriptors. */
#ifndef CG_BACKEND_KERNELS_H
#define CG_BACKEND_KERNELS_H

#include "../core/core_internal.h"

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
/* the optimizers of the optim_step entry; its operands: param, grad and up to four states */
typedef enum cg_optim_kind { CG_OPTIM_SGD = 0, CG_OPTIM_ADAM, CG_OPTIM_RMSPROP, CG_OPTIM_ADAGRAD } cg_optim_kind;
#define CG_OPTIM_OPERANDS 6

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

    /* ---- reductions and optimizer steps (src/ops/reduce*.c, src/optim) */
    /* one parameter's update in place: t[0] the parameter, t[1] its gradient, t[2..] the optimizer's states in
     * its argument order (contiguous, of the parameter's dtype and shape; NULL: unused); s: the per-parameter
     * scalars; opt: that optimizer's options (cg_sgd_options, ...); first: SGD's momentum buffer is new */
    cg_status (*optim_step)(cg_optim_kind kind, cg_tensor *const *t, const double *s, bool first, const void *opt);
    /* x *= inv_scale in place (contiguous, floating); *found_inf = true when an element was inf or NaN */
    cg_status (*amp_unscale)(cg_tensor *x, float inv_scale, bool *found_inf);
} cg_kernels;

#endif
