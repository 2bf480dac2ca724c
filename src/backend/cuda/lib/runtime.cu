/* runtime.cu — the kernel library's runtime entries: devices and their
 * properties, the per-device stream, device memory, host <-> device copies,
 * synchronization and the status conventions of cuda_abi.h. */
#include "cgcu_internal.cuh"

#include <mutex>
#include <stdio.h>
#include <string.h>


static cudaStream_t g_stream[CGCU_MAX_DEVICES];
static int g_sms[CGCU_MAX_DEVICES];
static std::mutex g_lock;
static thread_local int t_current = -1;

int cgcu_status(cudaError_t e) {
    if (e == cudaSuccess) return CGCU_OK;
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError(); /* not sticky: clear it */
        return CGCU_OOM;
    }
    return (int)e;
}

int cgcu_launch_status(void) { return cgcu_status(cudaGetLastError()); }

static int make_current(int dev) {
    if (dev < 0 || dev >= CGCU_MAX_DEVICES) return CGCU_INVALID;
    if (t_current == dev) return CGCU_OK;
    int st = cgcu_status(cudaSetDevice(dev));
    if (st == CGCU_OK) t_current = dev;
    return st;
}

cudaStream_t cgcu_stream(int dev, int *st) {
    *st = make_current(dev);
    if (*st) return NULL;
    cudaStream_t s = __atomic_load_n(&g_stream[dev], __ATOMIC_ACQUIRE);
    if (s) return s;
    std::lock_guard<std::mutex> guard(g_lock);
    if (!g_stream[dev]) {
        /* blocking with respect to the legacy default stream, as PyTorch's default stream is the legacy one */
        cudaStream_t made = NULL;
        *st = cgcu_status(cudaStreamCreateWithFlags(&made, cudaStreamDefault));
        if (*st) return NULL;
        int sms = 0;
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
        g_sms[dev] = sms > 0 ? sms : 1;
        __atomic_store_n(&g_stream[dev], made, __ATOMIC_RELEASE);
    }
    return g_stream[dev];
}

int cgcu_sm_count(int dev) {
    int st;
    if (!cgcu_stream(dev, &st)) return 1;
    return g_sms[dev];
}

const char *cgcu_error_string(int status) {
    switch (status) {
    case CGCU_OK: return "no error";
    case CGCU_MISSING: return "no CUDA kernel for this op and dtype";
    case CGCU_OOM: return "CUDA out of memory";
    case CGCU_INVALID: return "an argument beyond the CUDA kernels' limits";
    case CGCU_NO_BLAS: return cgcu_blas_error();
    case CGCU_BLAS_FAILED: return cgcu_blas_call_error();
    default: return status > 0 ? cudaGetErrorString((cudaError_t)status) : "unknown status";
    }
}

int cgcu_device_count(int *n) {
    *n = 0;
    int c = 0;
    cudaError_t e = cudaGetDeviceCount(&c);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return (int)e;
    }
    *n = c > CGCU_MAX_DEVICES ? CGCU_MAX_DEVICES : c;
    return CGCU_OK;
}

int cgcu_properties(int dev, cgcu_props *p) {
    cudaDeviceProp q;
    int st = cgcu_status(cudaGetDeviceProperties(&q, dev));
    if (st) return st;
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", q.name);
    p->major = q.major;
    p->minor = q.minor;
    p->multiprocessors = q.multiProcessorCount;
    p->total_memory = q.totalGlobalMem;
    return CGCU_OK;
}

int cgcu_malloc(int dev, size_t nbytes, void **p) {
    *p = NULL;
    int st = make_current(dev);
    if (st) return st;
    return cgcu_status(cudaMalloc(p, nbytes));
}

int cgcu_free(int dev, void *p) {
    int st = make_current(dev);
    if (st) return st;
    return cgcu_status(cudaFree(p)); /* cudaFree waits for the device's work */
}

int cgcu_mem_info(int dev, size_t *free_bytes, size_t *total_bytes) {
    int st = make_current(dev);
    if (st) return st;
    return cgcu_status(cudaMemGetInfo(free_bytes, total_bytes));
}

int cgcu_copy_h2d(int dev, void *dst, const void *src, size_t nbytes) {
    int st;
    cudaStream_t s = cgcu_stream(dev, &st);
    if (!s) return st;
    /* from pageable memory the call returns once src has been staged, so src may be reused */
    return cgcu_status(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyHostToDevice, s));
}

int cgcu_copy_d2h(int dev, void *dst, const void *src, size_t nbytes) {
    int st;
    cudaStream_t s = cgcu_stream(dev, &st);
    if (!s) return st;
    st = cgcu_status(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToHost, s));
    if (st) return st;
    return cgcu_status(cudaStreamSynchronize(s));
}

int cgcu_synchronize(int dev) {
    int st;
    cudaStream_t s = cgcu_stream(dev, &st);
    if (!s) return st;
    return cgcu_status(cudaStreamSynchronize(s));
}
