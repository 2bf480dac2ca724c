/* blas.cu — the CUDA products: cgcu_gemm (cuda_abi.h: row-major, batched,
 * strided, alpha / beta with beta 0 never reading C) through cuBLAS's
 * cublasGemmStridedBatchedEx, a row-major C = op(A) op(B) being the
 * column-major C^T = op(B)^T op(A)^T (the operands swapped). cuBLAS is not
 * linked: it is loaded with dlopen at first use (once, thread-safe) from
 * $CGRAD_CUBLAS_DIR when set (e.g. the nvidia-cublas wheel's
 * nvidia/cublas/lib), then by the loader's search path, as libcublas.so.13,
 * .so.12 or .so; the few entry points are declared here with the cuBLAS v2
 * enum values. One handle per device, made at its first product and bound to
 * the device's stream, in CUBLAS_DEFAULT_MATH (float32 products are not
 * computed in TF32); float32 and float64 compute in their own precision,
 * float16 / bfloat16 operands into a float32 C accumulate in float32. k == 0
 * scales C by beta here (zeros when beta is 0). Enqueued without waiting. */
#include "cgcu_internal.cuh"

#include <library_types.h>

#include <atomic>
#include <dlfcn.h>
#include <limits.h>
#include <mutex>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace {

/* ---------------------------------------------------------------- the cuBLAS v2 declarations used (cublas_api.h) */
typedef int bl_status; /* cublasStatus_t */
typedef void *bl_handle;  /* cublasHandle_t */
enum {
    BL_STATUS_SUCCESS = 0,
    BL_STATUS_NOT_INITIALIZED = 1,
    BL_STATUS_ALLOC_FAILED = 3,
    BL_STATUS_INVALID_VALUE = 7,
    BL_STATUS_ARCH_MISMATCH = 8,
    BL_STATUS_MAPPING_ERROR = 11,
    BL_STATUS_EXECUTION_FAILED = 13,
    BL_STATUS_INTERNAL_ERROR = 14,
    BL_STATUS_NOT_SUPPORTED = 15,
    BL_STATUS_LICENSE_ERROR = 16,
};
enum { BL_OP_N = 0, BL_OP_T = 1 };               /* cublasOperation_t */
enum { BL_DEFAULT_MATH = 0 };                    /* cublasMath_t: no TF32 */
enum { BL_COMPUTE_32F = 68, BL_COMPUTE_64F = 70 }; /* cublasComputeType_t */
enum { BL_GEMM_DEFAULT = -1 };                   /* cublasGemmAlgo_t */

typedef bl_status (*bl_create_fn)(bl_handle *);
typedef bl_status (*bl_destroy_fn)(bl_handle);
typedef bl_status (*bl_set_stream_fn)(bl_handle, cudaStream_t);
typedef bl_status (*bl_set_math_fn)(bl_handle, int);
typedef bl_status (*bl_gemm_fn)(bl_handle, int transa, int transb, int m, int n, int k, const void *alpha,
                                const void *A, int atype, int lda, long long stride_a, const void *B, int btype,
                                int ldb, long long stride_b, const void *beta, void *C, int ctype, int ldc,
                                long long stride_c, int batch, int compute, int algo);

struct bl_lib {
    void *h;
    bl_create_fn create;
    bl_destroy_fn destroy;
    bl_set_stream_fn set_stream;
    bl_set_math_fn set_math;
    bl_gemm_fn gemm;
};

bl_lib g_lib;
pthread_once_t g_once = PTHREAD_ONCE_INIT;
char g_loaded[1024];     /* the path or name that loaded */
char g_load_error[4096]; /* where it was looked for (written once, in bl_load) */
char g_create_error[1280];
std::atomic<const char *> g_message{"cuBLAS: no failure recorded"};

bl_handle g_handle[CGCU_MAX_DEVICES];
std::mutex g_dev_lock[CGCU_MAX_DEVICES];
bool g_create_failed;    /* g_create_error written (under g_create_lock) */
std::mutex g_create_lock;

/* appends to g_load_error (truncating) */
void bl_note(const char *fmt, const char *a, const char *b) {
    const size_t used = strlen(g_load_error);
    if (used + 1 < sizeof g_load_error) snprintf(g_load_error + used, sizeof g_load_error - used, fmt, a, b);
}

void *bl_try(const char *path) {
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h) {
        snprintf(g_loaded, sizeof g_loaded, "%s", path);
        return h;
    }
    const char *e = dlerror(); /* names the file */
    static int tries; /* (bl_load runs once) */
    const char *sep = tries++ ? "; " : " ";
    if (e) bl_note("%s%s", sep, e);
    else bl_note("%s%s: not found", sep, path);
    return NULL;
}

void bl_load(void) {
    static const char *const names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
    snprintf(g_load_error, sizeof g_load_error, "cuBLAS could not be loaded; tried");
    void *h = NULL;
    const char *dir = getenv("CGRAD_CUBLAS_DIR");
    if (dir && *dir) {
        for (int i = 0; i < 3 && !h; i++) {
            char path[1024];
            snprintf(path, sizeof path, "%s/%s", dir, names[i]);
            h = bl_try(path);
        }
    }
    for (int i = 0; i < 3 && !h; i++) h = bl_try(names[i]);
    if (!h) {
        bl_note("%s%s", dir && *dir ? "; CGRAD_CUBLAS_DIR was searched first" : "; CGRAD_CUBLAS_DIR is unset",
                " (set it to the folder holding libcublas.so.13 or .12, e.g. the nvidia-cublas wheel's "
                "nvidia/cublas/lib)");
        g_message.store(g_load_error);
        return;
    }
    bl_lib L;
    L.h = h;
    L.create = (bl_create_fn)dlsym(h, "cublasCreate_v2");
    L.destroy = (bl_destroy_fn)dlsym(h, "cublasDestroy_v2");
    L.set_stream = (bl_set_stream_fn)dlsym(h, "cublasSetStream_v2");
    L.set_math = (bl_set_math_fn)dlsym(h, "cublasSetMathMode");
    L.gemm = (bl_gemm_fn)dlsym(h, "cublasGemmStridedBatchedEx");
    if (!L.create || !L.destroy || !L.set_stream || !L.set_math || !L.gemm) {
        snprintf(g_load_error, sizeof g_load_error,
                 "cuBLAS loaded from %s lacks cublasCreate_v2, cublasDestroy_v2, cublasSetStream_v2, "
                 "cublasSetMathMode or cublasGemmStridedBatchedEx",
                 g_loaded);
        dlclose(h);
        g_message.store(g_load_error);
        return;
    }
    g_lib = L;
}

const char *bl_status_name(bl_status s) {
    switch (s) {
    case BL_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case BL_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case BL_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case BL_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case BL_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case BL_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case BL_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case BL_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case BL_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: return "an unknown cuBLAS status";
    }
}

/* the last failed call's status, for cgcu_blas_call_error */
std::atomic<int> g_last_call_status{0};

/* a cuBLAS call's status: out of memory, else CGCU_BLAS_FAILED (its status kept for the message) */
int bl_result(bl_status s) {
    if (s == BL_STATUS_SUCCESS) return CGCU_OK;
    if (s == BL_STATUS_ALLOC_FAILED) return CGCU_OOM;
    g_last_call_status.store((int)s);
    return CGCU_BLAS_FAILED;
}

/* a handle that could not be made: CGCU_NO_BLAS, the first such failure's message kept */
int bl_create_failed(const char *what, bl_status s) {
    if (s == BL_STATUS_ALLOC_FAILED) return CGCU_OOM;
    std::lock_guard<std::mutex> guard(g_create_lock);
    if (!g_create_failed) {
        snprintf(g_create_error, sizeof g_create_error, "cuBLAS (%s) could not be set up: %s returned %s (%d)",
                 g_loaded, what, bl_status_name(s), s);
        g_create_failed = true;
        g_message.store(g_create_error);
    }
    return CGCU_NO_BLAS;
}

/* dev's handle bound to its stream, made at first use; the caller holds g_dev_lock[dev] */
int bl_handle_of(int dev, cudaStream_t st, bl_handle *out) {
    if (!g_handle[dev]) {
        bl_handle h = NULL;
        bl_status s = g_lib.create(&h);
        if (s != BL_STATUS_SUCCESS) return bl_create_failed("cublasCreate_v2", s);
        s = g_lib.set_stream(h, st);
        if (s != BL_STATUS_SUCCESS) {
            g_lib.destroy(h);
            return bl_create_failed("cublasSetStream_v2", s);
        }
        s = g_lib.set_math(h, BL_DEFAULT_MATH);
        if (s != BL_STATUS_SUCCESS) {
            g_lib.destroy(h);
            return bl_create_failed("cublasSetMathMode", s);
        }
        g_handle[dev] = h;
    }
    *out = g_handle[dev];
    return CGCU_OK;
}

/* k == 0: C_b <- beta * C_b, zeros when beta is 0 (C not read) */
template <class T>
__global__ void __launch_bounds__(256) bl_scale(T *c, int64_t m, int64_t n, int64_t ldc, int64_t sc, int64_t batch,
                                                T beta) {
    const uint64_t total = (uint64_t)batch * (uint64_t)m * (uint64_t)n, step = (uint64_t)blockDim.x * gridDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += step) {
        const uint64_t r = i / (uint64_t)n, j = i - r * (uint64_t)n, b = r / (uint64_t)m, row = r - b * (uint64_t)m;
        T *p = c + (int64_t)b * sc + (int64_t)row * ldc + (int64_t)j;
        *p = beta == (T)0 ? (T)0 : beta * *p;
    }
}

template <class T>
int bl_scale_run(int dev, cudaStream_t st, void *c, int64_t m, int64_t n, int64_t ldc, int64_t sc, int64_t batch,
                 double beta) {
    int sm = cgcu_sm_count(dev);
    if (sm <= 0) sm = 1;
    const uint64_t total = (uint64_t)batch * (uint64_t)m * (uint64_t)n, want = (total + 255) / 256,
                   cap = (uint64_t)sm * 16;
    bl_scale<T><<<(unsigned)(want < cap ? want : cap), 256, 0, st>>>((T *)c, m, n, ldc, sc, batch, (T)beta);
    return cgcu_launch_status();
}

} // namespace

const char *cgcu_blas_error(void) { return g_message.load(); }

const char *cgcu_blas_call_error(void) { return bl_status_name((bl_status)g_last_call_status.load()); }

int cgcu_gemm(int dev, int dtype_ab, int dtype_c, int ta, int tb, int64_t m, int64_t n, int64_t k, double alpha,
              const void *a, int64_t lda, int64_t sa, const void *b, int64_t ldb, int64_t sb, double beta, void *c,
              int64_t ldc, int64_t sc, int64_t batch) {
    int tab, tc, compute;
    size_t isz_ab, isz_c;
    if (dtype_ab == CG_DTYPE_F32 && dtype_c == CG_DTYPE_F32) {
        tab = tc = CUDA_R_32F, compute = BL_COMPUTE_32F, isz_ab = isz_c = 4;
    } else if (dtype_ab == CG_DTYPE_F64 && dtype_c == CG_DTYPE_F64) {
        tab = tc = CUDA_R_64F, compute = BL_COMPUTE_64F, isz_ab = isz_c = 8;
    } else if ((dtype_ab == CG_DTYPE_F16 || dtype_ab == CG_DTYPE_BF16) && dtype_c == CG_DTYPE_F32) {
        tab = dtype_ab == CG_DTYPE_F16 ? CUDA_R_16F : CUDA_R_16BF, tc = CUDA_R_32F, compute = BL_COMPUTE_32F;
        isz_ab = 2, isz_c = 4;
    } else {
        return CGCU_MISSING;
    }
    if (m < 0 || n < 0 || k < 0 || batch < 0) return CGCU_INVALID;
    if (m == 0 || n == 0 || batch == 0) return CGCU_OK;
    if (dev < 0 || dev >= CGCU_MAX_DEVICES) return CGCU_INVALID;
    int s = CGCU_OK;
    cudaStream_t st = cgcu_stream(dev, &s);
    if (s != CGCU_OK) return s;
    if (k == 0) /* the empty product: C <- beta * C, without cuBLAS */
        return dtype_c == CG_DTYPE_F64 ? bl_scale_run<double>(dev, st, c, m, n, ldc, sc, batch, beta)
                                       : bl_scale_run<float>(dev, st, c, m, n, ldc, sc, batch, beta);
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX || lda < 1 || lda > INT_MAX || ldb < 1 || ldb > INT_MAX ||
        ldc < 1 || ldc > INT_MAX)
        return CGCU_INVALID;
    pthread_once(&g_once, bl_load);
    if (!g_lib.gemm) return CGCU_NO_BLAS;
    const float af = (float)alpha, bf = beta == 0.0 ? 0.0f : (float)beta;
    const double ad = alpha, bd = beta == 0.0 ? 0.0 : beta;
    const void *ap = compute == BL_COMPUTE_64F ? (const void *)&ad : (const void *)&af;
    const void *bp = compute == BL_COMPUTE_64F ? (const void *)&bd : (const void *)&bf;
    std::lock_guard<std::mutex> guard(g_dev_lock[dev]);
    bl_handle h = NULL;
    s = bl_handle_of(dev, st, &h);
    if (s != CGCU_OK) return s;
    /* column-major: C^T (n x m, ld ldc) = op(B)^T (n x k) op(A)^T (k x m); batches beyond int in chunks */
    for (int64_t done = 0; done < batch;) {
        const int64_t cnt = batch - done < INT_MAX ? batch - done : INT_MAX;
        const char *ab = (const char *)a + done * sa * (int64_t)isz_ab;
        const char *bb = (const char *)b + done * sb * (int64_t)isz_ab;
        char *cb = (char *)c + done * sc * (int64_t)isz_c;
        const bl_status r = g_lib.gemm(h, tb ? BL_OP_T : BL_OP_N, ta ? BL_OP_T : BL_OP_N, (int)n, (int)m, (int)k, ap,
                                       bb, tab, (int)ldb, (long long)sb, ab, tab, (int)lda, (long long)sa, bp, cb, tc,
                                       (int)ldc, (long long)sc, (int)cnt, compute, BL_GEMM_DEFAULT);
        if (r != BL_STATUS_SUCCESS) return bl_result(r);
        done += cnt;
    }
    return CGCU_OK;
}
