/* softmax.cu — the CUDA softmax entries: softmax / log_softmax of a
 * contiguous (outer, len, inner) tensor along its middle dim, and their fused
 * first-order backward, with the formulas of the CPU's kernels
 * (src/backend/cpu/softmax.c): m = the max of the line (NaN skipped by the
 * max but poisoning the sum, so a line holding NaN, or all -inf, is NaN),
 * s = the sum of exp(x - m) in double, y = exp(x - m) * (1 / s) or
 * (x - m) - log(s); backward s = the double sum of g * y (softmax) or g
 * (log_softmax), gx = y * (g - s) or g - exp(y) * s. float32, float16 and
 * bfloat16 compute in float (halves converted exactly, ew_math.cuh), float64
 * in double. Kernels: a warp (len <= 1024) or a block of 256 threads per line
 * when lines are contiguous (inner == 1) or few; otherwise, and for many
 * lines of at most 8, a thread per line (the threads of a warp on
 * consecutive inner columns: coalesced). Enqueued on the device's stream
 * without waiting. */
#include "cgcu_internal.cuh"
#include "ew_math.cuh"

#include <math.h>
#include <stdint.h>
#include <type_traits>

namespace {

#define SM_THREADS 256
#define SM_WARP_LEN 1024 /* lines up to this long: a warp each */
#define SM_FEW_LINES 16384 /* strided lines (inner > 1) fewer than this: a warp or block each too */

/* the compute type: double for float64, float otherwise */
template <class T>
struct sm_ct {
    typedef float type;
};
template <>
struct sm_ct<double> {
    typedef double type;
};

template <class T>
__device__ __forceinline__ typename sm_ct<T>::type sm_ld(T x) {
    if constexpr (std::is_same<T, cgcu_f16>::value) return cgcu_f16_to_f32(x);
    else if constexpr (std::is_same<T, cgcu_bf16>::value) return cgcu_bf16_to_f32(x);
    else return x;
}
template <class T>
__device__ __forceinline__ T sm_st(typename sm_ct<T>::type v) {
    if constexpr (std::is_same<T, cgcu_f16>::value) return cgcu_f32_to_f16(v);
    else if constexpr (std::is_same<T, cgcu_bf16>::value) return cgcu_f32_to_bf16(v);
    else return v;
}
__device__ __forceinline__ float sm_exp(float v) { return expf(v); }
__device__ __forceinline__ double sm_exp(double v) { return exp(v); }

/* the max as the CPU's (v > m ? v : m: a NaN never enters) and the sum */
struct sm_max {
    template <class V>
    __device__ __forceinline__ V operator()(V m, V v) const {
        return v > m ? v : m;
    }
};
struct sm_sum {
    __device__ __forceinline__ double operator()(double a, double b) const { return a + b; }
};

/* v combined over the TPL threads of a line (a warp, or the whole block), the result in every one of them;
 * every thread of the block calls it */
template <int TPL, class V, class F>
__device__ __forceinline__ V sm_allreduce(V v, F f) {
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) v = f(v, __shfl_xor_sync(0xffffffffu, v, d));
    if constexpr (TPL > 32) {
        constexpr int W = TPL / 32;
        __shared__ V sh[W];
        const int lane = (int)(threadIdx.x & 31u), warp = (int)(threadIdx.x >> 5);
        __syncthreads(); /* a previous call's readers are done */
        if (lane == 0) sh[warp] = v;
        __syncthreads();
        v = sh[0];
#pragma unroll
        for (int w = 1; w < W; w++) v = f(v, sh[w]);
    }
    return v;
}

/* the first element of line l (of outer * inner; elements `inner` apart) */
__device__ __forceinline__ int64_t sm_base(uint64_t l, int64_t len, int64_t inner) {
    if (inner == 1) return (int64_t)l * len;
    const uint64_t o = l / (uint64_t)inner;
    return (int64_t)o * len * inner + (int64_t)(l - o * (uint64_t)inner);
}

/* TPL threads per line (32: a warp, SM_THREADS: the block), SM_THREADS / TPL lines per block */
template <class T, int TPL>
__global__ void __launch_bounds__(SM_THREADS) sm_fwd_lines(T *y, const T *x, uint64_t lines, int64_t len, int64_t inner,
                                                          int take_log) {
    typedef typename sm_ct<T>::type CT;
    constexpr int LPB = SM_THREADS / TPL;
    const int sub = (int)(threadIdx.x / TPL), lt = (int)(threadIdx.x % TPL);
    for (uint64_t l0 = (uint64_t)blockIdx.x * LPB; l0 < lines; l0 += (uint64_t)gridDim.x * LPB) {
        const uint64_t l = l0 + (uint64_t)sub;
        const bool act = l < lines;
        const int64_t base = act ? sm_base(l, len, inner) : 0;
        const T *xl = x + base;
        T *yl = y + base;
        CT m = (CT)-INFINITY;
        if (act)
            for (int64_t d = lt; d < len; d += TPL) m = sm_max()(m, sm_ld(xl[d * inner]));
        m = sm_allreduce<TPL>(m, sm_max());
        double s = 0.0;
        if (act)
            for (int64_t d = lt; d < len; d += TPL) s += (double)sm_exp(sm_ld(xl[d * inner]) - m);
        s = sm_allreduce<TPL>(s, sm_sum());
        if (!act) continue;
        if (take_log) {
            const CT ls = (CT)log(s);
            for (int64_t d = lt; d < len; d += TPL) yl[d * inner] = sm_st<T>((sm_ld(xl[d * inner]) - m) - ls);
        } else {
            const CT inv = (CT)(1.0 / s);
            for (int64_t d = lt; d < len; d += TPL) yl[d * inner] = sm_st<T>(sm_exp(sm_ld(xl[d * inner]) - m) * inv);
        }
    }
}

/* a thread per line, consecutive threads on consecutive inner columns */
template <class T>
__global__ void __launch_bounds__(SM_THREADS) sm_fwd_cols(T *y, const T *x, uint64_t lines, int64_t len, int64_t inner,
                                                         int take_log) {
    typedef typename sm_ct<T>::type CT;
    const uint64_t step = (uint64_t)blockDim.x * gridDim.x;
    for (uint64_t l = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; l < lines; l += step) {
        const int64_t base = sm_base(l, len, inner);
        const T *xl = x + base;
        T *yl = y + base;
        CT m = (CT)-INFINITY;
        for (int64_t d = 0; d < len; d++) m = sm_max()(m, sm_ld(xl[d * inner]));
        double s = 0.0;
        for (int64_t d = 0; d < len; d++) s += (double)sm_exp(sm_ld(xl[d * inner]) - m);
        if (take_log) {
            const CT ls = (CT)log(s);
            for (int64_t d = 0; d < len; d++) yl[d * inner] = sm_st<T>((sm_ld(xl[d * inner]) - m) - ls);
        } else {
            const CT inv = (CT)(1.0 / s);
            for (int64_t d = 0; d < len; d++) yl[d * inner] = sm_st<T>(sm_exp(sm_ld(xl[d * inner]) - m) * inv);
        }
    }
}

/* the backward's sum term: g (log_softmax) or g * y, in double */
template <class CT>
__device__ __forceinline__ double sm_term(CT g, CT y, int take_log) {
    return take_log ? (double)g : (double)g * (double)y;
}
template <class T>
__device__ __forceinline__ T sm_grad(typename sm_ct<T>::type g, typename sm_ct<T>::type y,
                                     typename sm_ct<T>::type sc, int take_log) {
    return sm_st<T>(take_log ? g - sm_exp(y) * sc : y * (g - sc));
}

template <class T, int TPL>
__global__ void __launch_bounds__(SM_THREADS) sm_bwd_lines(T *gx, const T *g, const T *y, uint64_t lines, int64_t len,
                                                          int64_t inner, int take_log) {
    typedef typename sm_ct<T>::type CT;
    constexpr int LPB = SM_THREADS / TPL;
    const int sub = (int)(threadIdx.x / TPL), lt = (int)(threadIdx.x % TPL);
    for (uint64_t l0 = (uint64_t)blockIdx.x * LPB; l0 < lines; l0 += (uint64_t)gridDim.x * LPB) {
        const uint64_t l = l0 + (uint64_t)sub;
        const bool act = l < lines;
        const int64_t base = act ? sm_base(l, len, inner) : 0;
        const T *gl = g + base, *yl = y + base;
        T *ol = gx + base;
        double s = 0.0;
        if (act)
            for (int64_t d = lt; d < len; d += TPL) s += sm_term(sm_ld(gl[d * inner]), sm_ld(yl[d * inner]), take_log);
        s = sm_allreduce<TPL>(s, sm_sum());
        if (!act) continue;
        const CT sc = (CT)s;
        for (int64_t d = lt; d < len; d += TPL)
            ol[d * inner] = sm_grad<T>(sm_ld(gl[d * inner]), sm_ld(yl[d * inner]), sc, take_log);
    }
}

template <class T>
__global__ void __launch_bounds__(SM_THREADS) sm_bwd_cols(T *gx, const T *g, const T *y, uint64_t lines, int64_t len,
                                                         int64_t inner, int take_log) {
    typedef typename sm_ct<T>::type CT;
    const uint64_t step = (uint64_t)blockDim.x * gridDim.x;
    for (uint64_t l = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; l < lines; l += step) {
        const int64_t base = sm_base(l, len, inner);
        const T *gl = g + base, *yl = y + base;
        T *ol = gx + base;
        double s = 0.0;
        for (int64_t d = 0; d < len; d++) s += sm_term(sm_ld(gl[d * inner]), sm_ld(yl[d * inner]), take_log);
        const CT sc = (CT)s;
        for (int64_t d = 0; d < len; d++)
            ol[d * inner] = sm_grad<T>(sm_ld(gl[d * inner]), sm_ld(yl[d * inner]), sc, take_log);
    }
}

static inline unsigned sm_blocks(int dev, uint64_t work_blocks) {
    int sm = cgcu_sm_count(dev);
    if (sm <= 0) sm = 1;
    const uint64_t cap = (uint64_t)sm * 32;
    return (unsigned)(work_blocks < cap ? work_blocks : cap);
}

/* the kernel shape: 0 a thread per line, else the threads per line */
static inline int sm_shape(uint64_t lines, int64_t len, int64_t inner) {
    if (len <= 8 && lines >= SM_FEW_LINES) return 0; /* short lines, many of them */
    if (inner == 1 || (lines < SM_FEW_LINES && len >= 64)) return len > SM_WARP_LEN ? SM_THREADS : 32;
    return 0;
}

template <class T>
int sm_forward(int dev, cudaStream_t st, T *y, const T *x, uint64_t lines, int64_t len, int64_t inner, int take_log) {
    switch (sm_shape(lines, len, inner)) {
    case 32:
        sm_fwd_lines<T, 32><<<sm_blocks(dev, (lines + 7) / 8), SM_THREADS, 0, st>>>(y, x, lines, len, inner, take_log);
        break;
    case SM_THREADS:
        sm_fwd_lines<T, SM_THREADS><<<sm_blocks(dev, lines), SM_THREADS, 0, st>>>(y, x, lines, len, inner, take_log);
        break;
    default:
        sm_fwd_cols<T><<<sm_blocks(dev, (lines + SM_THREADS - 1) / SM_THREADS), SM_THREADS, 0, st>>>(y, x, lines, len,
                                                                                                   inner, take_log);
        break;
    }
    return cgcu_launch_status();
}

template <class T>
int sm_backward(int dev, cudaStream_t st, T *gx, const T *g, const T *y, uint64_t lines, int64_t len, int64_t inner,
                int take_log) {
    switch (sm_shape(lines, len, inner)) {
    case 32:
        sm_bwd_lines<T, 32><<<sm_blocks(dev, (lines + 7) / 8), SM_THREADS, 0, st>>>(gx, g, y, lines, len, inner,
                                                                                      take_log);
        break;
    case SM_THREADS:
        sm_bwd_lines<T, SM_THREADS><<<sm_blocks(dev, lines), SM_THREADS, 0, st>>>(gx, g, y, lines, len, inner, take_log);
        break;
    default:
        sm_bwd_cols<T><<<sm_blocks(dev, (lines + SM_THREADS - 1) / SM_THREADS), SM_THREADS, 0, st>>>(gx, g, y, lines,
                                                                                                   len, inner, take_log);
        break;
    }
    return cgcu_launch_status();
}

/* validates the sizes; *lines <- outer * inner; false: nothing to do (or *st set) */
static bool sm_prepare(int dev, int64_t outer, int64_t len, int64_t inner, uint64_t *lines, cudaStream_t *stream,
                       int *st) {
    *st = CGCU_OK;
    if (outer < 0 || len < 0 || inner < 0) {
        *st = CGCU_INVALID;
        return false;
    }
    if (outer == 0 || len == 0 || inner == 0) return false;
    if (outer > INT64_MAX / inner || outer * inner > INT64_MAX / len) {
        *st = CGCU_INVALID;
        return false;
    }
    *lines = (uint64_t)outer * (uint64_t)inner;
    *stream = cgcu_stream(dev, st);
    return *stream != NULL;
}

} // namespace

int cgcu_softmax(int dev, int dtype, void *y, const void *x, int64_t outer, int64_t len, int64_t inner, int log) {
    if (dtype != CG_DTYPE_F32 && dtype != CG_DTYPE_F64 && dtype != CG_DTYPE_F16 && dtype != CG_DTYPE_BF16)
        return CGCU_MISSING;
    uint64_t lines = 0;
    cudaStream_t st = NULL;
    int s = CGCU_OK;
    if (!sm_prepare(dev, outer, len, inner, &lines, &st, &s)) return s;
    const int lg = log != 0;
    switch (dtype) {
    case CG_DTYPE_F32: return sm_forward(dev, st, (float *)y, (const float *)x, lines, len, inner, lg);
    case CG_DTYPE_F64: return sm_forward(dev, st, (double *)y, (const double *)x, lines, len, inner, lg);
    case CG_DTYPE_F16: return sm_forward(dev, st, (cgcu_f16 *)y, (const cgcu_f16 *)x, lines, len, inner, lg);
    default: return sm_forward(dev, st, (cgcu_bf16 *)y, (const cgcu_bf16 *)x, lines, len, inner, lg);
    }
}

int cgcu_softmax_backward(int dev, int dtype, void *gx, const void *g, const void *y, int64_t outer, int64_t len,
                          int64_t inner, int log) {
    if (dtype != CG_DTYPE_F32 && dtype != CG_DTYPE_F64 && dtype != CG_DTYPE_F16 && dtype != CG_DTYPE_BF16)
        return CGCU_MISSING;
    uint64_t lines = 0;
    cudaStream_t st = NULL;
    int s = CGCU_OK;
    if (!sm_prepare(dev, outer, len, inner, &lines, &st, &s)) return s;
    const int lg = log != 0;
    switch (dtype) {
    case CG_DTYPE_F32:
        return sm_backward(dev, st, (float *)gx, (const float *)g, (const float *)y, lines, len, inner, lg);
    case CG_DTYPE_F64:
        return sm_backward(dev, st, (double *)gx, (const double *)g, (const double *)y, lines, len, inner, lg);
    case CG_DTYPE_F16:
        return sm_backward(dev, st, (cgcu_f16 *)gx, (const cgcu_f16 *)g, (const cgcu_f16 *)y, lines, len, inner, lg);
    default:
        return sm_backward(dev, st, (cgcu_bf16 *)gx, (const cgcu_bf16 *)g, (const cgcu_bf16 *)y, lines, len, inner,
                           lg);
    }
}
