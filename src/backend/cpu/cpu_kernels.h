/* cpu_kernels.h — internal: the CPU's reduction runner and its custom-kernel
 * entries (Note [Kernel entries], src/backend/kernels.h), one section per op
 * family, collected in the table cg_cpu_kernels (cpu_kernels.c). */
#ifndef CG_CPU_KERNELS_H
#define CG_CPU_KERNELS_H

#include "../backend.h"

extern const cg_kernels cg_cpu_kernels;

/* the reduction runner (reduce_run.c) */
void cg_cpu_run_reduce(const cg_reduce_plan *plan);

/* ---- softmax (softmax.c) */
cg_status cg_cpu_softmax(cg_tensor *y, const cg_tensor *x, int64_t dim, bool log);
cg_status cg_cpu_softmax_backward(cg_tensor *gx, const cg_tensor *g, const cg_tensor *y, int64_t dim, bool log);

/* ---- BLAS products, convolution, pooling, recurrent cells */

/* ---- normalization, losses, resampling and the other nn kernels, RNG */

/* ---- creation, indexing, gather / scatter, sort, scan, repeat, copies */

/* ---- reductions and optimizer steps (optim_steps.c) */
cg_status cg_cpu_optim_step(cg_optim_kind kind, cg_tensor *const *t, const double *s, bool first, const void *opt);
cg_status cg_cpu_amp_unscale(cg_tensor *x, float inv_scale, bool *found_inf);

#endif
