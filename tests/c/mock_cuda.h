/* mock_cuda.h — the host-memory CUDA kernel library the CUDA backend's tests
 * install on machines without a GPU (mock_cuda.c). */
#ifndef CG_MOCK_CUDA_H
#define CG_MOCK_CUDA_H

#include "backend/cuda/cuda_backend.h"

#include <stddef.h>
#include <stdint.h>

/* a status the mock can plant, as a device-side failure reported at the next sync */
#define MOCK_DEVICE_ASSERT 710

typedef struct {
    int64_t mallocs, frees, h2d, d2h, syncs, elementwise, casts, fills, reductions, gemms, softmax, indexing, random, optim;
} mock_cuda_counts;

/* serve cuda:0 and cuda:1 from the mock (counts reset) / back to the library loading found */
void mock_cuda_install(void);
void mock_cuda_uninstall(void);
mock_cuda_counts mock_cuda_get_counts(void);
/* the mock's device memory (8 GiB by default; uninstall restores it) and what is allocated of it */
void mock_cuda_set_memory_limit(size_t bytes);
size_t mock_cuda_memory_used(void);
/* the next synchronize or copy to the host returns status (an asynchronous kernel failure) */
void mock_cuda_plant_error(int status);

#endif
