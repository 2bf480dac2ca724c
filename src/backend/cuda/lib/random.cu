/* random.cu — random numbers on the device, drawn from the CPU's streams:
 * Philox4x32-10 keyed by the generator's seed at counters the engine
 * reserved on the host (Note [Philox streams], src/core/rng.c), element i
 * reading word pair i & 1 of counter base + i / 2, so a seeded draw on cuda
 * equals the CPU's bit for bit. The dropout mask: one thread per counter,
 * two elements each. */
#include "ew_launch.cuh"

/* cg_philox of src/core/rng.c (host and device: the host build is how it is checked without a GPU) */
__host__ __device__ __forceinline__ void cgcu_philox(uint64_t seed, uint64_t counter, uint32_t out[4]) {
    uint32_t c0 = (uint32_t)counter, c1 = (uint32_t)(counter >> 32), c2 = 0, c3 = 0;
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
#pragma unroll
    for (int r = 0; r < 10; r++) {
        const uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        const uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c0 = n0, c1 = (uint32_t)p1, c2 = n2, c3 = (uint32_t)p0;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

/* the 53-bit uniform in [0, 1) of words (a, b), as cg_rng_fill_uniform's (exact in double) */
__host__ __device__ __forceinline__ double uniform53(uint32_t a, uint32_t b) {
    return (double)((((uint64_t)a << 32) | b) >> 11) * 0x1p-53;
}

template <class T>
__global__ void dropout_kernel(T *m, int64_t n, T kept, double keep, uint64_t seed, uint64_t base) {
    const int64_t pairs = (n + 1) / 2;
    for (int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; c < pairs; c += (int64_t)blockDim.x * gridDim.x) {
        uint32_t w[4];
        cgcu_philox(seed, base + (uint64_t)c, w);
        m[2 * c] = uniform53(w[0], w[1]) < keep ? kept : (T)0;
        if (2 * c + 1 < n) m[2 * c + 1] = uniform53(w[2], w[3]) < keep ? kept : (T)0;
    }
}

template <class T>
static int dropout_run(int dev, void *m, int64_t n, const void *kept, double keep, uint64_t seed, uint64_t base) {
    int s = CGCU_OK;
    cudaStream_t st = cgcu_stream(dev, &s);
    if (s != CGCU_OK) return s;
    T k;
    memcpy(&k, kept, sizeof k);
    dropout_kernel<T><<<cgcu_ew_blocks(dev, (uint64_t)(n + 1) / 2), CGCU_EW_THREADS, 0, st>>>((T *)m, n, k, keep, seed, base);
    return cgcu_launch_status();
}

int cgcu_dropout_mask(int dev, void *m, int64_t n, int itemsize, const void *kept, double keep, uint64_t seed,
                      uint64_t base) {
    if (n <= 0) return CGCU_OK;
    switch (itemsize) {
    case 2: return dropout_run<uint16_t>(dev, m, n, kept, keep, seed, base);
    case 4: return dropout_run<uint32_t>(dev, m, n, kept, keep, seed, base);
    case 8: return dropout_run<uint64_t>(dev, m, n, kept, keep, seed, base);
    default: return CGCU_INVALID;
    }
}
