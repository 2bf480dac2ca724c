/* cpu_kernels.h — internal: the CPU's custom-kernel entries (Note [Kernel
 * entries], src/backend/kernels.h), one section per op family, collected in
 * the table cg_cpu_kernels (cpu_kernels.c). */
#ifndef CG_CPU_KERNELS_H
#define CG_CPU_KERNELS_H

#include "../backend.h"

extern const cg_kernels cg_cpu_kernels;

/* ---- softmax (softmax.c) */
cg_status cg_cpu_softmax(cg_tensor *y, const cg_tensor *x, int64_t dim, bool log);
cg_status cg_cpu_softmax_backward(cg_tensor *gx, const cg_tensor *g, const cg_tensor *y, int64_t dim, bool log);

/* ---- BLAS products, convolution, pooling, recurrent cells */

/* ---- normalization, losses, resampling and the other nn kernels, RNG */

/* ---- creation, indexing, gather / scatter, sort, scan, repeat, copies */

/* ---- reductions and optimizer steps */

#endif
