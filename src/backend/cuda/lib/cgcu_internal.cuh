/* cgcu_internal.cuh — internal to the CUDA kernel library: the per-device
 * state (current device, stream), the status conventions and the entry points
 * each .cu file defines, which api.cu gathers into the cgcu_api table. */
#ifndef CGCU_INTERNAL_CUH
#define CGCU_INTERNAL_CUH

#include <cuda_runtime.h>

#include "../cuda_abi.h"
#include "cgrad.h"

/* the device ordinals the library keeps state for */
#define CGCU_MAX_DEVICES 64

/* make dev current on this thread and return its stream (NULL and *st set on failure) */
cudaStream_t cgcu_stream(int dev, int *st);
/* a CUDA error as a status (cudaSuccess -> CGCU_OK); cudaErrorMemoryAllocation -> CGCU_OOM */
int cgcu_status(cudaError_t e);
/* the status of the kernels just launched (cudaGetLastError) */
int cgcu_launch_status(void);
/* the number of multiprocessors of dev (cached), for grid sizing */
int cgcu_sm_count(int dev);

/* runtime.cu */
const char *cgcu_error_string(int status);
int cgcu_device_count(int *n);
int cgcu_properties(int dev, cgcu_props *p);
int cgcu_malloc(int dev, size_t nbytes, void **p);
int cgcu_free(int dev, void *p);
int cgcu_mem_info(int dev, size_t *free_bytes, size_t *total_bytes);
int cgcu_copy_h2d(int dev, void *dst, const void *src, size_t nbytes);
int cgcu_copy_d2h(int dev, void *dst, const void *src, size_t nbytes);
int cgcu_synchronize(int dev);
/* elementwise.gen.cu, copy_fill.cu */
int cgcu_elementwise(int dev, const cgcu_plan *p, int op_id, int dtype, const double *params, int *loop_error);
int cgcu_cast(int dev, const cgcu_plan *p, int dst_dtype, int src_dtype);
int cgcu_fill(int dev, const cgcu_plan *p, const void *value, size_t itemsize);
/* reduce.cu */
int cgcu_reduce(int dev, const cgcu_reduce_plan *p);
/* blas.cu */
int cgcu_gemm(int dev, int dtype_ab, int dtype_c, int ta, int tb, int64_t m, int64_t n, int64_t k, double alpha,
              const void *a, int64_t lda, int64_t sa, const void *b, int64_t ldb, int64_t sb, double beta, void *c,
              int64_t ldc, int64_t sc, int64_t batch);
/* the message of the last CGCU_NO_BLAS (where cuBLAS was looked for) */
const char *cgcu_blas_error(void);
/* the status name of the last cuBLAS call that failed (CGCU_BLAS_FAILED) */
const char *cgcu_blas_call_error(void);
/* index.cu */
int cgcu_index_gather(int dev, const cgcu_plan *p, int itemsize);
int cgcu_index_put(int dev, const cgcu_plan *p, int dtype, int accumulate);
int cgcu_embedding(int dev, void *out, const void *w, const int64_t *idx, int64_t n, int64_t D, int itemsize);
/* random.cu */
int cgcu_dropout_mask(int dev, void *m, int64_t n, int itemsize, const void *kept, double keep, uint64_t seed,
                      uint64_t base);
/* optim.cu */
int cgcu_optim_step(int dev, const cgcu_optim *o);
/* softmax.cu */
int cgcu_softmax(int dev, int dtype, void *y, const void *x, int64_t outer, int64_t len, int64_t inner, int log);
int cgcu_softmax_backward(int dev, int dtype, void *gx, const void *g, const void *y, int64_t outer, int64_t len,
                          int64_t inner, int log);

#endif
