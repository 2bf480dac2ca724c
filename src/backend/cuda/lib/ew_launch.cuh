/* ew_launch.cuh — internal to the CUDA kernel library: the generic
 * elementwise kernels and their launcher, shared by the generated op kernels
 * (elementwise.gen.cu), the hand rows' kernels (elementwise_hand.cu) and the
 * casts (copy_fill.cu). A functor F computes one element from byte pointers:
 *     static constexpr int nin;                      1 .. 3 inputs
 *     static constexpr int osz, isz0, isz1, isz2;     item sizes (output, inputs)
 *     __device__ void operator()(char *o, const char *a, const char *b, const char *c) const;
 * (cgcu_ew_typed builds one from a scalar function f of typed loads). Two
 * kernels per functor: the contiguous one (ndim <= 1, the output and inputs
 * with stride = item size or broadcast scalars of stride 0, under 2^31
 * elements: 32-bit indices, grid-stride loop; a typed functor on aligned
 * operands without broadcasts runs on 16-byte vectors) and the general
 * strided one (offsets from the plan's shape and byte strides, each thread
 * a run of CGCU_EW_RUN consecutive elements; 32-bit index arithmetic under
 * 2^32 elements, else 64-bit). */
#ifndef CGCU_EW_LAUNCH_CUH
#define CGCU_EW_LAUNCH_CUH

#include "cgcu_internal.cuh"

#include <type_traits>

#define CGCU_EW_THREADS 256

/* the common functor shape: OT f(T a[, T b[, T c]]) on typed loads and stores (D derives from it) */
template <class D, class OT, class T, int N>
struct cgcu_ew_typed {
    typedef OT out_t; /* marks a typed functor: the contiguous kernel may run it on vectors */
    typedef T in_t;
    static constexpr int nin = N, osz = (int)sizeof(OT), isz0 = (int)sizeof(T), isz1 = (int)sizeof(T),
                         isz2 = (int)sizeof(T);
    __device__ __forceinline__ void operator()(char *o, const char *a, const char *b, const char *c) const {
        const D &d = static_cast<const D &>(*this);
        if constexpr (N == 1) {
            (void)b;
            (void)c;
            *(OT *)o = d.f(*(const T *)a);
        } else if constexpr (N == 2) {
            (void)c;
            *(OT *)o = d.f(*(const T *)a, *(const T *)b);
        } else {
            *(OT *)o = d.f(*(const T *)a, *(const T *)b, *(const T *)c);
        }
    }
};

/* the base pointers of a plan's arguments (inputs past nin stay NULL) */
struct cgcu_ew_ptrs {
    char *p[4];
};

/* whether F is a cgcu_ew_typed functor */
template <class F, class = void>
struct cgcu_ew_is_typed : std::false_type {};
template <class F>
struct cgcu_ew_is_typed<F, std::void_t<typename F::out_t>> : std::true_type {};

/* U elements of T, loaded and stored as one aligned access (16 bytes at most) */
template <class T, int U>
struct alignas(sizeof(T) * U) cgcu_ew_vec {
    T v[U];
};
/* the vector width of a typed functor: 16 bytes of its wider type */
template <class F>
struct cgcu_ew_width {
    static constexpr int w = (int)(sizeof(typename F::out_t) > sizeof(typename F::in_t) ? sizeof(typename F::out_t)
                                                                                          : sizeof(typename F::in_t));
    static constexpr int u = 16 / w;
};

/* contiguous arguments, n < 2^31: input k is read at element i, or at element 0 when bit k of bcast is set
 * (a broadcast scalar). vec (typed functors only, no broadcast, every pointer aligned to its vector): the
 * body runs on vectors of cgcu_ew_width<F>::u elements, the tail element by element. */
template <class F>
__global__ void __launch_bounds__(CGCU_EW_THREADS) cgcu_ew_contig(cgcu_ew_ptrs a, uint32_t n, unsigned bcast, int vec, F f) {
    const uint32_t step = blockDim.x * gridDim.x, tid = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t start = 0;
    if constexpr (cgcu_ew_is_typed<F>::value) {
        if (vec) {
            typedef typename F::out_t OT;
            typedef typename F::in_t T;
            constexpr int U = cgcu_ew_width<F>::u;
            typedef cgcu_ew_vec<T, U> VI;
            typedef cgcu_ew_vec<OT, U> VO;
            const uint32_t nv = n / U;
            for (uint32_t j = tid; j < nv; j += step) {
                VO r;
                if constexpr (F::nin == 1) {
                    const VI x = ((const VI *)a.p[1])[j];
#pragma unroll
                    for (int u = 0; u < U; u++) r.v[u] = f.f(x.v[u]);
                } else if constexpr (F::nin == 2) {
                    const VI x = ((const VI *)a.p[1])[j], y = ((const VI *)a.p[2])[j];
#pragma unroll
                    for (int u = 0; u < U; u++) r.v[u] = f.f(x.v[u], y.v[u]);
                } else {
                    const VI x = ((const VI *)a.p[1])[j], y = ((const VI *)a.p[2])[j], z = ((const VI *)a.p[3])[j];
#pragma unroll
                    for (int u = 0; u < U; u++) r.v[u] = f.f(x.v[u], y.v[u], z.v[u]);
                }
                ((VO *)a.p[0])[j] = r;
            }
            start = nv * U;
        }
    }
    const uint32_t m1 = bcast & 1u ? 0u : 1u, m2 = bcast & 2u ? 0u : 1u, m3 = bcast & 4u ? 0u : 1u;
    for (uint32_t i = start + tid; i < n; i += step) {
        f(a.p[0] + (size_t)i * F::osz, a.p[1] + (size_t)(i * m1) * F::isz0,
          F::nin > 1 ? a.p[2] + (size_t)(i * m2) * F::isz1 : nullptr,
          F::nin > 2 ? a.p[3] + (size_t)(i * m3) * F::isz2 : nullptr);
    }
}

/* byte offsets of element i (dims innermost first, the last dim takes the rest of i) of NA arguments;
 * returns i's index along dim 0 */
template <class I, int NA>
__device__ __forceinline__ I cgcu_ew_offsets(const cgcu_plan &P, I i, int64_t *off) {
#pragma unroll
    for (int k = 0; k < NA; k++) off[k] = 0;
    const int last = P.ndim - 1;
    I inner = i;
    for (int d = 0; d < last; d++) {
        const I s = (I)P.shape[d], q = i / s, idx = i - q * s;
        if (d == 0) inner = idx;
        i = q;
#pragma unroll
        for (int k = 0; k < NA; k++) off[k] += (int64_t)idx * P.strides[k][d];
    }
    if (last >= 0) {
#pragma unroll
        for (int k = 0; k < NA; k++) off[k] += (int64_t)i * P.strides[k][last];
    }
    return inner;
}

/* each thread takes CGCU_EW_RUN consecutive elements: one decomposition of the index, then steps along
 * dim 0 (a new decomposition where dim 0 wraps) */
#define CGCU_EW_RUN 4

template <class I, class F>
__device__ __forceinline__ void cgcu_ew_strided_run(const cgcu_plan &P, const F &f, I first, I n) {
    constexpr int NA = F::nin + 1;
    int64_t off[NA];
    I inner = 0;
    const I len0 = P.ndim > 0 ? (I)P.shape[0] : (I)1;
#pragma unroll 1
    for (int u = 0; u < CGCU_EW_RUN; u++) {
        const I i = first + (I)u;
        if (i >= n) break;
        if (u == 0 || ++inner == len0) {
            inner = cgcu_ew_offsets<I, NA>(P, i, off);
        } else {
#pragma unroll
            for (int k = 0; k < NA; k++) off[k] += P.strides[k][0];
        }
        f(P.ptr[0] + off[0], P.ptr[1] + off[1], NA > 2 ? P.ptr[2] + off[NA > 2 ? 2 : 0] : nullptr,
          NA > 3 ? P.ptr[3] + off[NA > 3 ? 3 : 0] : nullptr);
    }
}

template <class F>
__global__ void __launch_bounds__(CGCU_EW_THREADS) cgcu_ew_strided(const __grid_constant__ cgcu_plan P, F f) {
    const uint64_t n = (uint64_t)P.numel, step = (uint64_t)blockDim.x * gridDim.x * CGCU_EW_RUN;
    for (uint64_t i = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) * CGCU_EW_RUN; i < n; i += step) {
        if (n <= 0xffffffffull - CGCU_EW_RUN)
            cgcu_ew_strided_run<uint32_t>(P, f, (uint32_t)i, (uint32_t)n);
        else
            cgcu_ew_strided_run<uint64_t>(P, f, i, n);
    }
}

/* the grid of a launch over n elements: enough blocks to fill the device a few times over */
static inline unsigned cgcu_ew_blocks(int dev, uint64_t n) {
    int sm = cgcu_sm_count(dev);
    if (sm <= 0) sm = 132;
    const uint64_t want = (n + CGCU_EW_THREADS - 1) / CGCU_EW_THREADS, cap = (uint64_t)sm * 16;
    return (unsigned)(want < cap ? want : cap);
}

/* whether the plan is contiguous (ndim 0 or 1): the output with its item size, each input with its item
 * size or 0 (a broadcast scalar: its bit in *bcast) */
static inline bool cgcu_ew_is_contig(const cgcu_plan *p, int nargs, const int *sizes, unsigned *bcast) {
    *bcast = 0;
    if (p->ndim > 1) return false;
    if (p->ndim == 1 && p->shape[0] > 1) { /* (one element: any strides) */
        if (p->strides[0][0] != sizes[0]) return false;
        for (int k = 1; k < nargs; k++) {
            if (p->strides[k][0] == 0) *bcast |= 1u << (k - 1);
            else if (p->strides[k][0] != sizes[k]) return false;
        }
    }
    return true;
}

/* whether the contiguous kernel may run F on vectors over these base pointers */
template <class F>
static inline int cgcu_ew_vectorizable(const cgcu_ew_ptrs &a, unsigned bcast) {
    if constexpr (cgcu_ew_is_typed<F>::value) {
        constexpr unsigned U = cgcu_ew_width<F>::u;
        if (bcast) return 0;
        if ((uintptr_t)a.p[0] % (U * sizeof(typename F::out_t))) return 0;
        for (int k = 1; k <= F::nin; k++)
            if ((uintptr_t)a.p[k] % (U * sizeof(typename F::in_t))) return 0;
        return 1;
    } else {
        (void)a;
        (void)bcast;
        return 0;
    }
}

/* enqueue f over every element of the plan on the device's stream (no wait) */
template <class F>
int cgcu_ew_launch(int dev, cudaStream_t st, const cgcu_plan *p, const F &f) {
    if (p->numel <= 0) return CGCU_OK;
    const int sizes[4] = {F::osz, F::isz0, F::isz1, F::isz2};
    unsigned bcast = 0;
    if (p->numel < ((int64_t)1 << 31) && cgcu_ew_is_contig(p, F::nin + 1, sizes, &bcast)) {
        cgcu_ew_ptrs a = {{p->ptr[0], p->ptr[1], F::nin > 1 ? p->ptr[2] : nullptr, F::nin > 2 ? p->ptr[3] : nullptr}};
        const int vec = cgcu_ew_vectorizable<F>(a, bcast);
        uint64_t work = (uint64_t)p->numel;
        if constexpr (cgcu_ew_is_typed<F>::value)
            if (vec) work = (work + cgcu_ew_width<F>::u - 1) / cgcu_ew_width<F>::u;
        cgcu_ew_contig<F><<<cgcu_ew_blocks(dev, work), CGCU_EW_THREADS, 0, st>>>(a, (uint32_t)p->numel, bcast, vec, f);
    } else {
        const uint64_t runs = ((uint64_t)p->numel + CGCU_EW_RUN - 1) / CGCU_EW_RUN;
        cgcu_ew_strided<F><<<cgcu_ew_blocks(dev, runs), CGCU_EW_THREADS, 0, st>>>(*p, f);
    }
    return cgcu_launch_status();
}

/* the same on the device's stream, made current */
template <class F>
int cgcu_ew_run(int dev, const cgcu_plan *p, const F &f) {
    int s = CGCU_OK;
    cudaStream_t st = cgcu_stream(dev, &s);
    if (s != CGCU_OK) return s;
    return cgcu_ew_launch(dev, st, p, f);
}

/* for a functor that can flag (a member `int *p`, Note [Loop errors]): run it with a zeroed device flag,
 * wait, and set *loop_error to 1 when the flag was raised (it is left alone otherwise) */
template <class F>
int cgcu_ew_run_flagged(int dev, const cgcu_plan *p, F f, int *loop_error) {
    if (p->numel <= 0) return CGCU_OK;
    int s = CGCU_OK;
    cudaStream_t st = cgcu_stream(dev, &s);
    if (s != CGCU_OK) return s;
    int *flag = nullptr;
    cudaError_t e = cudaMallocAsync((void **)&flag, sizeof(int), st);
    if (e != cudaSuccess) return cgcu_status(e);
    e = cudaMemsetAsync(flag, 0, sizeof(int), st);
    if (e == cudaSuccess) {
        f.p = flag;
        s = cgcu_ew_launch(dev, st, p, f);
    } else {
        s = cgcu_status(e);
    }
    int h = 0;
    if (s == CGCU_OK) s = cgcu_status(cudaMemcpyAsync(&h, flag, sizeof(int), cudaMemcpyDeviceToHost, st));
    const cudaError_t ef = cudaFreeAsync(flag, st);
    const cudaError_t es = cudaStreamSynchronize(st);
    if (s == CGCU_OK) s = cgcu_status(ef);
    if (s == CGCU_OK) s = cgcu_status(es);
    if (s == CGCU_OK && h && loop_error) *loop_error = 1;
    return s;
}

/* hand rows (elementwise_hand.cu): the same contract as cgcu_elementwise; CGCU_MISSING when no kernel */
int cgcu_elementwise_hand(int dev, const cgcu_plan *p, int op_id, int dtype, const double *params, int *loop_error);

#endif
