/* cpu_kernels.c — the CPU's table of custom-kernel entries (Note [Kernel
 * entries]), one section per op family as in src/backend/kernels.h. */
#include "cpu_kernels.h"

const cg_kernels cg_cpu_kernels = {
    /* ---- softmax */
    .softmax = cg_cpu_softmax,
    .softmax_backward = cg_cpu_softmax_backward,

    /* ---- BLAS products, convolution, pooling, recurrent cells */

    /* ---- normalization, losses, resampling and the other nn kernels, RNG */

    /* ---- creation, indexing, gather / scatter, sort, scan, repeat, copies */

    /* ---- reductions and optimizer steps */
    .optim_step = cg_cpu_optim_step,
    .amp_unscale = cg_cpu_amp_unscale,
};
