/* index.cu — advanced indexing on the device: the gather of x[indices] and
 * the put of x[indices] = v / += v (cuda_abi.h, index_gather / index_put),
 * elementwise kernels over the engine's index plans (Note [Index plan]):
 * argument 2 holds each element's int64 offset, in items, from argument 0's
 * (put) or 1's (gather) address. Accumulation is atomic, so repeated offsets
 * all add: native atomicAdd for float, double, int32 and int64 (two's
 * complement wraps alike), a compare-and-swap on the enclosing 32-bit word for
 * the 1- and 2-byte dtypes (the half types round after each addition, as the
 * CPU's loop does; only the order of the additions may differ). And the
 * embedding lookup: rows of a table by int64 index. */
#include "ew_launch.cuh"
#include "ew_math.cuh"

/* ptr[0] <- the item at ptr[1] + offset */
template <class T>
struct gather_fn {
    static constexpr int nin = 2, osz = (int)sizeof(T), isz0 = (int)sizeof(T), isz1 = 8, isz2 = 8;
    __device__ __forceinline__ void operator()(char *o, const char *a, const char *b, const char *) const {
        *(T *)o = *(const T *)(a + *(const int64_t *)b * (int64_t)sizeof(T));
    }
};

/* the item at ptr[0] + offset <- ptr[1] (osz 0: argument 0 is written only through the offset) */
template <class T>
struct put_fn {
    static constexpr int nin = 2, osz = (int)sizeof(T), isz0 = (int)sizeof(T), isz1 = 8, isz2 = 8;
    __device__ __forceinline__ void operator()(char *o, const char *a, const char *b, const char *) const {
        *(T *)(o + *(const int64_t *)b * (int64_t)sizeof(T)) = *(const T *)a;
    }
};

/* the dtypes' additions on their storage type (bool: or) */
template <class T> struct add_op {
    __device__ __forceinline__ T operator()(T d, T v) const { return (T)(d + v); }
};
struct or_op {
    __device__ __forceinline__ uint8_t operator()(uint8_t d, uint8_t v) const { return d | v; }
};
struct f16_add {
    __device__ __forceinline__ cgcu_f16 operator()(cgcu_f16 d, cgcu_f16 v) const {
        return cgcu_f32_to_f16(cgcu_f16_to_f32(d) + cgcu_f16_to_f32(v));
    }
};
struct bf16_add {
    __device__ __forceinline__ cgcu_bf16 operator()(cgcu_bf16 d, cgcu_bf16 v) const {
        return cgcu_f32_to_bf16(cgcu_bf16_to_f32(d) + cgcu_bf16_to_f32(v));
    }
};

/* *p <- op(*p, v) atomically for a 1- or 2-byte T: a compare-and-swap on the aligned word holding it */
template <class T, class Op>
__device__ __forceinline__ void atomic_narrow(T *p, T v, Op op) {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2, "narrow types only");
    const uintptr_t addr = (uintptr_t)p;
    unsigned *word = (unsigned *)(addr & ~(uintptr_t)3);
    const unsigned shift = (unsigned)(addr & 3) * 8, mask = (sizeof(T) == 1 ? 0xffu : 0xffffu) << shift;
    unsigned old = *word, assumed;
    do {
        assumed = old;
        T cur;
        const unsigned bits = (assumed & mask) >> shift;
        memcpy(&cur, &bits, sizeof(T));
        const T nv = op(cur, v);
        unsigned nbits = 0;
        memcpy(&nbits, &nv, sizeof(T));
        old = atomicCAS(word, assumed, (assumed & ~mask) | ((nbits << shift) & mask));
    } while (old != assumed);
}

template <class T> __device__ __forceinline__ void atomic_acc(T *p, T v);
template <> __device__ __forceinline__ void atomic_acc<float>(float *p, float v) { atomicAdd(p, v); }
template <> __device__ __forceinline__ void atomic_acc<double>(double *p, double v) { atomicAdd(p, v); }
template <> __device__ __forceinline__ void atomic_acc<int32_t>(int32_t *p, int32_t v) { atomicAdd((int *)p, (int)v); }
template <> __device__ __forceinline__ void atomic_acc<int64_t>(int64_t *p, int64_t v) {
    atomicAdd((unsigned long long *)p, (unsigned long long)v);
}
template <> __device__ __forceinline__ void atomic_acc<int16_t>(int16_t *p, int16_t v) { atomic_narrow(p, v, add_op<int16_t>{}); }
template <> __device__ __forceinline__ void atomic_acc<int8_t>(int8_t *p, int8_t v) { atomic_narrow(p, v, add_op<int8_t>{}); }
template <> __device__ __forceinline__ void atomic_acc<uint8_t>(uint8_t *p, uint8_t v) { atomic_narrow(p, v, add_op<uint8_t>{}); }
template <> __device__ __forceinline__ void atomic_acc<cgcu_f16>(cgcu_f16 *p, cgcu_f16 v) { atomic_narrow(p, v, f16_add{}); }
template <> __device__ __forceinline__ void atomic_acc<cgcu_bf16>(cgcu_bf16 *p, cgcu_bf16 v) { atomic_narrow(p, v, bf16_add{}); }

/* the item at ptr[0] + offset += ptr[1]; BOOL: or */
template <class T, bool BOOL = false>
struct acc_fn {
    static constexpr int nin = 2, osz = (int)sizeof(T), isz0 = (int)sizeof(T), isz1 = 8, isz2 = 8;
    __device__ __forceinline__ void operator()(char *o, const char *a, const char *b, const char *) const {
        T *dst = (T *)(o + *(const int64_t *)b * (int64_t)sizeof(T));
        if constexpr (BOOL) atomic_narrow((uint8_t *)dst, *(const uint8_t *)a, or_op{});
        else atomic_acc<T>(dst, *(const T *)a);
    }
};

int cgcu_index_gather(int dev, const cgcu_plan *p, int itemsize) {
    switch (itemsize) {
    case 1: return cgcu_ew_run(dev, p, gather_fn<uint8_t>{});
    case 2: return cgcu_ew_run(dev, p, gather_fn<uint16_t>{});
    case 4: return cgcu_ew_run(dev, p, gather_fn<uint32_t>{});
    case 8: return cgcu_ew_run(dev, p, gather_fn<uint64_t>{});
    default: return CGCU_INVALID;
    }
}

int cgcu_index_put(int dev, const cgcu_plan *p, int dtype, int accumulate) {
    if (!accumulate) {
        switch (dtype) {
        case CG_DTYPE_BOOL:
        case CG_DTYPE_U8:
        case CG_DTYPE_I8: return cgcu_ew_run(dev, p, put_fn<uint8_t>{});
        case CG_DTYPE_I16:
        case CG_DTYPE_U16:
        case CG_DTYPE_F16:
        case CG_DTYPE_BF16: return cgcu_ew_run(dev, p, put_fn<uint16_t>{});
        case CG_DTYPE_I32:
        case CG_DTYPE_U32:
        case CG_DTYPE_F32: return cgcu_ew_run(dev, p, put_fn<uint32_t>{});
        case CG_DTYPE_I64:
        case CG_DTYPE_U64:
        case CG_DTYPE_F64: return cgcu_ew_run(dev, p, put_fn<uint64_t>{});
        default: return CGCU_INVALID;
        }
    }
    switch (dtype) {
    case CG_DTYPE_BOOL: return cgcu_ew_run(dev, p, acc_fn<uint8_t, true>{});
    case CG_DTYPE_U8: return cgcu_ew_run(dev, p, acc_fn<uint8_t>{});
    case CG_DTYPE_I8: return cgcu_ew_run(dev, p, acc_fn<int8_t>{});
    case CG_DTYPE_I16: return cgcu_ew_run(dev, p, acc_fn<int16_t>{});
    case CG_DTYPE_I32: return cgcu_ew_run(dev, p, acc_fn<int32_t>{});
    case CG_DTYPE_I64: return cgcu_ew_run(dev, p, acc_fn<int64_t>{});
    case CG_DTYPE_F16: return cgcu_ew_run(dev, p, acc_fn<cgcu_f16>{});
    case CG_DTYPE_BF16: return cgcu_ew_run(dev, p, acc_fn<cgcu_bf16>{});
    case CG_DTYPE_F32: return cgcu_ew_run(dev, p, acc_fn<float>{});
    case CG_DTYPE_F64: return cgcu_ew_run(dev, p, acc_fn<double>{});
    default: return CGCU_MISSING; /* the CPU has no accumulation for the barebones unsigned dtypes either */
    }
}

/* out[r, :] <- w[idx[r], :], one thread per element */
template <class T>
__global__ void embedding_kernel(T *out, const T *w, const int64_t *idx, int64_t n, int64_t D) {
    const int64_t total = n * D;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (int64_t)blockDim.x * gridDim.x) {
        const int64_t r = i / D, c = i - r * D;
        out[i] = w[idx[r] * D + c];
    }
}

template <class T>
static int embedding_run(int dev, void *out, const void *w, const int64_t *idx, int64_t n, int64_t D) {
    int s = CGCU_OK;
    cudaStream_t st = cgcu_stream(dev, &s);
    if (s != CGCU_OK) return s;
    embedding_kernel<T><<<cgcu_ew_blocks(dev, (uint64_t)(n * D)), CGCU_EW_THREADS, 0, st>>>((T *)out, (const T *)w, idx, n, D);
    return cgcu_launch_status();
}

int cgcu_embedding(int dev, void *out, const void *w, const int64_t *idx, int64_t n, int64_t D, int itemsize) {
    if (n <= 0 || D <= 0) return CGCU_OK;
    switch (itemsize) {
    case 1: return embedding_run<uint8_t>(dev, out, w, idx, n, D);
    case 2: return embedding_run<uint16_t>(dev, out, w, idx, n, D);
    case 4: return embedding_run<uint32_t>(dev, out, w, idx, n, D);
    case 8: return embedding_run<uint64_t>(dev, out, w, idx, n, D);
    default: return CGCU_INVALID;
    }
}
