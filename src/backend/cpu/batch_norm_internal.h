/* batch_norm_internal.h — internal: the CPU batch-norm kernels over x viewed
 * as (N, C, S) contiguous (Note [Batch norm kernels] in batch_norm.c). dt is
 * any floating dtype; per-channel arrays are C doubles; results never depend
 * on the thread count. */
#ifndef CG_BATCH_NORM_INTERNAL_H
#define CG_BATCH_NORM_INTERNAL_H

#include "../backend.h"

/* Training forward: mean / biased var (outputs, C) of each channel of x, and
 * y = (x - mean) / sqrt(var + eps) * w + b (w, b (C) or NULL: 1 and 0). */
void cg_bn_cpu_forward(cg_dtype dt, int64_t N, int64_t C, int64_t S, const void *x, const double *w,
                       const double *b, double eps, void *y, double *mean, double *var);
/* y = x * alpha[c] + beta[c]. */
void cg_bn_cpu_transform(cg_dtype dt, int64_t N, int64_t C, int64_t S, const void *x, const double *alpha,
                         const double *beta, void *y);
/* First-order backward of the training forward from g (N, C, S) with the
 * forward's mean and invstd: sum_g[c] = sum of g, sum_gxm[c] = sum of
 * g * (x - mean) (outputs, C), and when gx is non-NULL the input gradient
 * gx = (g - sum_g/n - (x - mean) * invstd^2 * sum_gxm/n) * w * invstd. */
void cg_bn_cpu_backward(cg_dtype dt, int64_t N, int64_t C, int64_t S, const void *g, const void *x,
                        const double *mean, const double *invstd, const double *w, void *gx, double *sum_g,
                        double *sum_gxm);

#endif
