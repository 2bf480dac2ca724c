/* cblas_names.h — internal: the BLAS the engine calls, under plain CBLAS /
 * OpenBLAS names whichever build it is. The bundled BLAS (meson option
 * blas=scipy-openblas, the default: the scipy-openblas32 wheel from PyPI, a
 * current OpenBLAS with DYNAMIC_ARCH kernels) exports every symbol with a
 * scipy_ prefix; a system OpenBLAS (blas=system) exports the plain names.
 * CG_BLAS_SYMBOL("cblas_sbgemm") is the exported name, for dlsym. */
#ifndef CG_CBLAS_NAMES_H
#define CG_CBLAS_NAMES_H

#include <cblas.h>

#if defined(CG_BLAS_SCIPY_OPENBLAS)
#define CG_BLAS_SYMBOL(name) "scipy_" name
#define cblas_sdot scipy_cblas_sdot
#define cblas_ddot scipy_cblas_ddot
#define cblas_sgemv scipy_cblas_sgemv
#define cblas_dgemv scipy_cblas_dgemv
#define cblas_sgemm scipy_cblas_sgemm
#define cblas_dgemm scipy_cblas_dgemm
#define openblas_set_num_threads scipy_openblas_set_num_threads
#define openblas_get_num_threads scipy_openblas_get_num_threads
#define openblas_get_config scipy_openblas_get_config
#define openblas_get_corename scipy_openblas_get_corename
#else
#define CG_BLAS_SYMBOL(name) name
#endif

#endif
