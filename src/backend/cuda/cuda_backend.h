/* cuda_backend.h — internal to the engine and its tests: the CUDA backend's
 * one hook beyond cgrad.h, which serves the cuda devices from another kernel
 * library of the same ABI (Note [Mock CUDA library] in cuda_backend.c). */
#ifndef CG_CUDA_BACKEND_H
#define CG_CUDA_BACKEND_H

#include "cuda_abi.h"

/* serve the cuda devices from `api` with ndev devices (NULL: back to the library loading found); the
 * pools' cached blocks are returned first. Not thread-safe: for tests, between ops. */
void cg_cuda_use_library(const cgcu_api *api, int ndev);

#endif
