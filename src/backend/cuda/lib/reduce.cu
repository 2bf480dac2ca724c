/* reduce.cu — the CUDA runner of a reduction plan (cgcu_reduce_plan): for
 * every output of the plan's iterator, n input elements `stride` bytes apart
 * folded with the semantics of the CPU loops of its kind
 * (src/backend/cpu/reduce_sum.c, reduce_minmax.c, reduce_stats.c): floating
 * sums, means, products, var / std (two passes: the mean, then the squared
 * deviations), logsumexp (max-shifted) and norms accumulate in double;
 * integer and bool sums and products in 64-bit integers wrapping modulo 2^64
 * (int64 out); any / all / count_nonzero test != 0; max / min keep the
 * element's bits, NaN propagating, the first occurrence on ties and the
 * first NaN (its int64 position with indices). Kernels: one thread per
 * output for short runs (n <= 32); otherwise a block of 256 threads per
 * output (warp shuffles, then shared memory), or per 32 consecutive outputs
 * when they read consecutive input elements (column reductions, coalesced);
 * a few outputs with long runs split each run across blocks into partials
 * (stream-ordered scratch) combined by a second kernel. 64-bit indices
 * throughout; enqueued on the device's stream without waiting. */
#include "cgcu_internal.cuh"
#include "ew_math.cuh"

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <type_traits>

namespace {

/* cg_reduce_kind (src/backend/backend.h), in its order */
enum {
    RD_SUM,
    RD_MEAN,
    RD_PROD,
    RD_ANY,
    RD_ALL,
    RD_COUNT_NONZERO,
    RD_MAX,
    RD_MIN,
    RD_VAR,
    RD_STD,
    RD_LOGSUMEXP,
    RD_NORM,
    RD_KINDS
};

#define RD_THREADS 256 /* threads of every block-wide kernel */
#define RD_SMALL 32    /* runs up to this long: one thread per output */
#define RD_COLS 32     /* outputs per block of the column kernel */

/* ---------------------------------------------------------------- loads and stores */
template <class T>
struct rd_is_half : std::integral_constant<bool, std::is_same<T, cgcu_f16>::value || std::is_same<T, cgcu_bf16>::value> {};
template <class T>
struct rd_is_float : std::integral_constant<bool, rd_is_half<T>::value || std::is_floating_point<T>::value> {};

/* a floating element as double (halves through float, exactly) */
template <class T>
__device__ __forceinline__ double rd_d(T x) {
    if constexpr (std::is_same<T, cgcu_f16>::value) return (double)cgcu_f16_to_f32(x);
    else if constexpr (std::is_same<T, cgcu_bf16>::value) return (double)cgcu_bf16_to_f32(x);
    else return (double)x;
}
/* a double result stored as the floating T (halves through float, as cg_store_f64 / CG_ST_*) */
template <class T>
__device__ __forceinline__ T rd_st(double v) {
    if constexpr (std::is_same<T, cgcu_f16>::value) return cgcu_f32_to_f16((float)v);
    else if constexpr (std::is_same<T, cgcu_bf16>::value) return cgcu_f32_to_bf16((float)v);
    else return (T)v;
}
/* an integer element as uint64 (B: bool, loaded as x != 0); signed ones sign-extended */
template <class T, bool B>
__device__ __forceinline__ uint64_t rd_u(T x) {
    if constexpr (B) return (uint64_t)(x != 0);
    else if constexpr (std::is_signed<T>::value) return (uint64_t)(int64_t)x;
    else return (uint64_t)x;
}
/* x != 0 (floats: NaN is nonzero, -0 is zero) */
template <class T>
__device__ __forceinline__ uint32_t rd_nz(T x) {
    if constexpr (rd_is_float<T>::value) return rd_d(x) != 0.0;
    else return x != 0;
}
template <class T>
__device__ __forceinline__ T rd_load(const char *p) {
    return *(const T *)p;
}

/* ---------------------------------------------------------------- the ops
 * An op: `A` its accumulator (a multiple of 4 bytes: warp shuffles move it in words); passes 1 or 2 (the
 * second pass folds with the constant c = mid(first pass) — var's mean, logsumexp's max); init(pass);
 * step(a, element, k: the element's position in the run, pass, c); combine(a, b, pass): b's elements into a
 * (any order); store(out, index out or NULL, a, n, c). can_idx: it can write indices (max / min); isz: the
 * input item size. */
struct rd_one_pass {
    static constexpr int passes = 1;
    static constexpr bool can_idx = false;
    __device__ __forceinline__ double mid(double, int64_t) const { return 0.0; }
};

/* sum / mean of a floating dtype (reduce_sum.c: double, stored through the output dtype) */
template <class T, bool MEAN>
struct op_fsum : rd_one_pass {
    typedef double A;
    static constexpr int isz = (int)sizeof(T);
    __device__ __forceinline__ A init(int) const { return 0.0; }
    __device__ __forceinline__ void step(A &a, const char *x, int64_t, int, double) const { a += rd_d(rd_load<T>(x)); }
    __device__ __forceinline__ void combine(A &a, const A &b, int) const { a += b; }
    __device__ __forceinline__ void store(char *o, char *, const A &a, int64_t n, double) const {
        *(T *)o = rd_st<T>(MEAN ? a / (double)n : a);
    }
};
/* sum of bool / integers: int64 out, wrapping (uint64 arithmetic: the same bits, no signed overflow) */
template <class T, bool B>
struct op_isum : rd_one_pass {
    typedef uint64_t A;
    static constexpr int isz = (int)sizeof(T);
    __device__ __forceinline__ A init(int) const { return 0; }
    __device__ __forceinline__ void step(A &a, const char *x, int64_t, int, double) const { a += rd_u<T, B>(rd_load<T>(x)); }
    __device__ __forceinline__ void combine(A &a, const A &b, int) const { a += b; }
    __device__ __forceinline__ void store(char *o, char *, const A &a, int64_t, double) const { *(int64_t *)o = (int64_t)a; }
};
/* product of a floating dtype: double, stored through the input dtype */
template <class T>
struct op_fprod : rd_one_pass {
    typedef double A;
    static constexpr int isz = (int)sizeof(T);
    __device__ __forceinline__ A init(int) const { return 1.0; }
    __device__ __forceinline__ void step(A &a, const char *x, int64_t, int, double) const { a *= rd_d(rd_load<T>(x)); }
    __device__ __forceinline__ void combine(A &a, const A &b, int) const { a *= b; }
    __device__ __forceinline__ void store(char *o, char *, const A &a, int64_t, double) const { *(T *)o = rd_st<T>(a); }
};
/* product of bool / integers: modulo 2^64, int64 out */
template <class T, bool B>
struct op_iprod : rd_one_pass {
    typedef uint64_t A;
    static constexpr int isz = (int)sizeof(T);
    __device__ __forceinline__ A init(int) const { return 1; }
    __device__ __forceinline__ void step(A &a, const char *x, int64_t, int, double) const { a *= rd_u<T, B>(rd_load<T>(x)); }
    __device__ __forceinline__ void combine(A &a, const A &b, int) const { a *= b; }
    __device__ __forceinline__ void store(char *o, char *, const A &a, int64_t, double) const { *(int64_t *)o = (int64_t)a; }
};
/* any / all: bool out */
template <class T, bool ALL>
struct op_anyall : rd_one_pass {
    typedef uint32_t A;
    static constexpr int isz = (int)sizeof(T);
    __device__ __forceinline__ A init(int) const { return ALL ? 1u : 0u; }
    __device__ __forceinline__ void combine(A &a, const A &b, int) const { a = ALL ? (a & b) : (a | b); }
    __device__ __forceinline__ void step(A &a, const char *x, int64_t, int, double) const {
        combine(a, rd_nz(rd_load<T>(x)), 0);
    }
    __device__ __forceinline__ void store(char *o, char *, const A &a, int64_t, double) const {
        *(uint8_t *)o = (uint8_t)(a != 0);
    }
};
/* count_nonzero: int64 out */
template <class T>
struct op_nz : rd_one_pass {
    typedef uint64_t A;
    static constexpr int isz = (int)sizeof(T);
    __device__ __forceinline__ A init(int) const { return 0; }
    __device__ __forceinline__ void step(A &a, const char *x, int64_t, int, double) const { a += rd_nz(rd_load<T>(x)); }
    __device__ __forceinline__ void combine(A &a, const A &b, int) const { a += b; }
    __device__ __forceinline__ void store(char *o, char *, const A &a, int64_t, double) const { *(int64_t *)o = (int64_t)a; }
};

/* max / min (reduce_minmax.c): the element itself (its bits) and its position; the serial rule "the first
 * element x for which BETTER(x, best) held last" is: the first NaN if any, else the first element equal to
 * the extreme value (-0 == +0). As a combine of (position, value) pairs in any order: NaN beats a number,
 * the larger (MAX) / smaller value beats the other, equal values (or two NaNs) go to the lower position.
 * B: bool, compared as x != 0. i < 0: no element yet. An empty run writes nothing, as the CPU's loop. */
template <class T, bool B, bool MAX>
struct op_mm {
    struct A {
        int64_t i;
        T v;
    };
    static constexpr int passes = 1;
    static constexpr bool can_idx = true;
    static constexpr int isz = (int)sizeof(T);
    __device__ __forceinline__ double mid(const A &, int64_t) const { return 0.0; }
    __device__ __forceinline__ static auto key(T x) {
        if constexpr (std::is_same<T, cgcu_f16>::value) return cgcu_f16_to_f32(x);
        else if constexpr (std::is_same<T, cgcu_bf16>::value) return cgcu_bf16_to_f32(x);
        else if constexpr (B) return (int)(x != 0);
        else return x;
    }
    /* whether b replaces a */
    __device__ __forceinline__ static bool takes(const A &a, const A &b) {
        if (b.i < 0) return false;
        if (a.i < 0) return true;
        const auto va = key(a.v), vb = key(b.v);
        if constexpr (rd_is_float<T>::value) {
            const bool na = isnan(va), nb = isnan(vb);
            if (na || nb) return nb && (!na || b.i < a.i);
        }
        if (MAX ? vb > va : vb < va) return true;
        return vb == va && b.i < a.i;
    }
    __device__ __forceinline__ A init(int) const {
        A a;
        a.i = -1;
        a.v = T{};
        return a;
    }
    __device__ __forceinline__ void combine(A &a, const A &b, int) const {
        if (takes(a, b)) a = b;
    }
    __device__ __forceinline__ void step(A &a, const char *x, int64_t k, int, double) const {
        A b;
        b.i = k;
        b.v = rd_load<T>(x);
        combine(a, b, 0);
    }
    __device__ __forceinline__ void store(char *o, char *idx, const A &a, int64_t, double) const {
        if (a.i < 0) return;
        *(T *)o = a.v;
        if (idx) *(int64_t *)idx = a.i;
    }
};

/* var / std (reduce_stats.c): the mean in double, then the sum of squared deviations from it, divided by
 * max(0, n - correction); n == 0 gives NaN */
template <class T, bool ROOT>
struct op_var {
    typedef double A;
    static constexpr int passes = 2;
    static constexpr bool can_idx = false;
    static constexpr int isz = (int)sizeof(T);
    double corr;
    __device__ __forceinline__ A init(int) const { return 0.0; }
    __device__ __forceinline__ void step(A &a, const char *x, int64_t, int pass, double c) const {
        const double v = rd_d(rd_load<T>(x));
        if (pass == 0) {
            a += v;
        } else {
            const double d = v - c;
            a += d * d;
        }
    }
    __device__ __forceinline__ void combine(A &a, const A &b, int) const { a += b; }
    __device__ __forceinline__ double mid(const A &a, int64_t n) const { return a / (double)n; }
    __device__ __forceinline__ void store(char *o, char *, const A &a, int64_t n, double) const {
        const double dof = (double)n - corr;
        double r = n == 0 ? (double)NAN : a / (dof > 0 ? dof : 0.0);
        if (ROOT) r = sqrt(r);
        *(T *)o = rd_st<T>(r);
    }
};

/* logsumexp: m = the max (NaN skipped), 0 when infinite; log(sum exp(x - m)) + m, in double */
template <class T>
struct op_lse {
    typedef double A;
    static constexpr int passes = 2;
    static constexpr bool can_idx = false;
    static constexpr int isz = (int)sizeof(T);
    __device__ __forceinline__ A init(int pass) const { return pass == 0 ? -(double)INFINITY : 0.0; }
    __device__ __forceinline__ void step(A &a, const char *x, int64_t, int pass, double c) const {
        const double v = rd_d(rd_load<T>(x));
        if (pass == 0) a = v > a ? v : a;
        else a += exp(v - c);
    }
    __device__ __forceinline__ void combine(A &a, const A &b, int pass) const {
        if (pass == 0) a = b > a ? b : a;
        else a += b;
    }
    __device__ __forceinline__ double mid(const A &a, int64_t) const { return isinf(a) ? 0.0 : a; }
    __device__ __forceinline__ void store(char *o, char *, const A &a, int64_t, double c) const {
        *(T *)o = rd_st<T>(log(a) + c);
    }
};

/* vector norms of order p (reduce_stats.c's NORM_LOOP): mode 0: p = 2, 1: p = 1, 2: p = 0 (the nonzero
 * count), 3: +inf (max |x|), 4: -inf (min |x|; both with NaN sticking), 5: (sum |x|^p)^(1/p) */
template <class T>
struct op_norm : rd_one_pass {
    typedef double A;
    static constexpr int isz = (int)sizeof(T);
    double p;
    int mode;
    __device__ __forceinline__ A init(int) const { return mode == 4 ? (double)INFINITY : 0.0; }
    __device__ __forceinline__ void combine(A &a, const A &b, int) const {
        if (mode == 3) {
            if (!isnan(a) && (isnan(b) || b > a)) a = b;
        } else if (mode == 4) {
            if (!isnan(a) && (isnan(b) || b < a)) a = b;
        } else {
            a += b;
        }
    }
    __device__ __forceinline__ void step(A &a, const char *x, int64_t, int, double) const {
        const double v = rd_d(rd_load<T>(x));
        switch (mode) {
        case 0: a += v * v; break;
        case 1: a += fabs(v); break;
        case 2: a += (double)(v != 0); break;
        case 3:
        case 4: combine(a, fabs(v), 0); break;
        default: a += pow(fabs(v), p); break;
        }
    }
    __device__ __forceinline__ void store(char *o, char *, const A &a, int64_t, double) const {
        const double r = mode == 0 ? sqrt(a) : mode == 5 ? pow(a, 1.0 / p) : a;
        *(T *)o = rd_st<T>(r);
    }
};

/* ---------------------------------------------------------------- plan offsets and block reductions */

/* q <- i / s, returns i % s (32-bit division when both fit) */
__device__ __forceinline__ uint64_t rd_divmod(uint64_t i, uint64_t s, uint64_t &q) {
    if (((i | s) >> 32) == 0) {
        const uint32_t q32 = (uint32_t)i / (uint32_t)s;
        q = q32;
        return i - (uint64_t)q32 * s;
    }
    q = i / s;
    return i - q * s;
}

/* byte offsets of output i of the plan: the output (arg 0), the index output (arg 1, HI) and the first
 * element of its run (the last arg); dims innermost first, the last dim takes the rest of i */
template <bool HI>
__device__ __forceinline__ void rd_offsets(const cgcu_plan &P, uint64_t i, int64_t &oo, int64_t &oi, int64_t &ox) {
    const int last = P.ndim - 1, xa = P.nargs - 1;
    oo = oi = ox = 0;
    for (int d = 0; d < last; d++) {
        uint64_t q;
        const int64_t idx = (int64_t)rd_divmod(i, (uint64_t)P.shape[d], q);
        i = q;
        oo += idx * P.strides[0][d];
        if (HI) oi += idx * P.strides[1][d];
        ox += idx * P.strides[xa][d];
    }
    if (last >= 0) {
        oo += (int64_t)i * P.strides[0][last];
        if (HI) oi += (int64_t)i * P.strides[1][last];
        ox += (int64_t)i * P.strides[xa][last];
    }
}

/* an accumulator moved down the warp in 4-byte words */
template <class A>
__device__ __forceinline__ A rd_shfl_down(const A &v, int d) {
    static_assert(sizeof(A) % 4 == 0, "accumulators are whole words");
    constexpr int W = (int)(sizeof(A) / 4);
    unsigned w[W];
    memcpy(w, &v, sizeof(A));
#pragma unroll
    for (int j = 0; j < W; j++) w[j] = __shfl_down_sync(0xffffffffu, w[j], d);
    A r;
    memcpy(&r, w, sizeof(A));
    return r;
}

/* the warp's accumulators combined into lane 0 */
template <class Op>
__device__ __forceinline__ typename Op::A rd_warp_reduce(const Op &op, typename Op::A a, int pass) {
    const int lane = (int)(threadIdx.x & 31u);
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) {
        const typename Op::A b = rd_shfl_down(a, d);
        if (lane + d < 32) op.combine(a, b, pass);
    }
    return a;
}

/* the block's accumulators (RD_THREADS threads: OPB outputs x RD_THREADS / OPB lanes, thread = lane * OPB +
 * column) combined per column into the threads of lane 0; every thread of the block calls it. sh: shared,
 * RD_THREADS accumulators (reused: the first barrier guards a previous call's readers). */
template <class Op, int OPB>
__device__ __forceinline__ typename Op::A rd_block_reduce(const Op &op, typename Op::A a, int pass,
                                                          typename Op::A *sh) {
    if constexpr (OPB == 1) {
        a = rd_warp_reduce(op, a, pass);
        const int lane = (int)(threadIdx.x & 31u), warp = (int)(threadIdx.x >> 5);
        __syncthreads();
        if (lane == 0) sh[warp] = a;
        __syncthreads();
        if (warp == 0) {
            a = lane < (int)(blockDim.x >> 5) ? sh[lane] : op.init(pass);
            a = rd_warp_reduce(op, a, pass);
        }
        return a;
    } else {
        constexpr int LANES = RD_THREADS / OPB;
        __syncthreads();
        sh[threadIdx.x] = a;
        __syncthreads();
        if ((int)threadIdx.x < OPB) {
#pragma unroll
            for (int l = 1; l < LANES; l++) op.combine(a, sh[l * OPB + threadIdx.x], pass);
        }
        return a;
    }
}

/* ---------------------------------------------------------------- kernels */

/* short runs: one thread per output, both passes serial */
template <class Op, bool HI>
__global__ void __launch_bounds__(RD_THREADS) rd_thread(const __grid_constant__ cgcu_plan P, int64_t n, int64_t stride, Op op) {
    typedef typename Op::A A;
    const uint64_t N = (uint64_t)P.numel, step = (uint64_t)blockDim.x * gridDim.x;
    for (uint64_t o = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; o < N; o += step) {
        int64_t oo, oi, ox;
        rd_offsets<HI>(P, o, oo, oi, ox);
        const char *x = P.ptr[P.nargs - 1] + ox;
        A a = op.init(0);
        for (int64_t k = 0; k < n; k++) op.step(a, x + k * stride, k, 0, 0.0);
        double c = 0.0;
        if constexpr (Op::passes == 2) {
            c = op.mid(a, n);
            a = op.init(1);
            for (int64_t k = 0; k < n; k++) op.step(a, x + k * stride, k, 1, c);
        }
        op.store(P.ptr[0] + oo, HI ? P.ptr[1] + oi : nullptr, a, n, c);
    }
}

/* blocks of OPB consecutive outputs (a tile) x RD_THREADS / OPB lanes, each lane every LANES-th element of
 * the run. !partial: block x takes tiles x, x + gridDim.x, ... and folds whole runs, both passes, storing
 * the results. partial: block (x, y) folds the elements [y * seg, (y + 1) * seg) of tile x's runs in pass
 * `pass` (pass 1 with c = cv[output]) into part[output * gridDim.y + y]. */
template <class Op, bool HI, int OPB>
__global__ void __launch_bounds__(RD_THREADS) rd_fold(const __grid_constant__ cgcu_plan P, int64_t n, int64_t stride,
                                                      int64_t seg, int pass, int partial, const double *cv,
                                                      typename Op::A *part, Op op) {
    typedef typename Op::A A;
    constexpr int LANES = RD_THREADS / OPB;
    __shared__ A sh[RD_THREADS];
    const int col = (int)(threadIdx.x % OPB), lane = (int)(threadIdx.x / OPB);
    const uint64_t N = (uint64_t)P.numel, tiles = (N + OPB - 1) / OPB;
    for (uint64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        const uint64_t o = t * OPB + (uint64_t)col;
        const bool act = o < N;
        int64_t oo = 0, oi = 0, ox = 0;
        if (act) rd_offsets<HI>(P, o, oo, oi, ox);
        const char *x = P.ptr[P.nargs - 1] + ox;
        if (partial) {
            const int64_t k0 = (int64_t)blockIdx.y * seg, k1 = n - k0 < seg ? n : k0 + seg;
            const double c = pass && act ? cv[o] : 0.0;
            A a = op.init(pass);
            if (act)
                for (int64_t k = k0 + lane; k < k1; k += LANES) op.step(a, x + k * stride, k, pass, c);
            a = rd_block_reduce<Op, OPB>(op, a, pass, sh);
            if (act && lane == 0) part[o * gridDim.y + blockIdx.y] = a;
            continue;
        }
        A a = op.init(0);
        if (act)
            for (int64_t k = lane; k < n; k += LANES) op.step(a, x + k * stride, k, 0, 0.0);
        a = rd_block_reduce<Op, OPB>(op, a, 0, sh);
        double c = 0.0;
        if constexpr (Op::passes == 2) {
            __shared__ double shc[OPB];
            if (lane == 0) shc[col] = op.mid(a, n);
            __syncthreads();
            c = shc[col];
            a = op.init(1);
            if (act)
                for (int64_t k = lane; k < n; k += LANES) op.step(a, x + k * stride, k, 1, c);
            a = rd_block_reduce<Op, OPB>(op, a, 1, sh);
        }
        if (act && lane == 0) op.store(P.ptr[0] + oo, HI ? P.ptr[1] + oi : nullptr, a, n, c);
    }
}

/* the partials of rd_fold (partial) combined, one block per output: pass 0 of a two-pass op leaves the
 * constant of pass 1 in cv[output]; otherwise the result is stored */
template <class Op, bool HI>
__global__ void __launch_bounds__(RD_THREADS) rd_final(const __grid_constant__ cgcu_plan P, int64_t n, int64_t splits,
                                                       int pass, double *cv, const typename Op::A *part, Op op) {
    typedef typename Op::A A;
    __shared__ A sh[RD_THREADS];
    const uint64_t N = (uint64_t)P.numel;
    for (uint64_t o = blockIdx.x; o < N; o += gridDim.x) {
        A a = op.init(pass);
        for (int64_t s = threadIdx.x; s < splits; s += blockDim.x) op.combine(a, part[o * (uint64_t)splits + s], pass);
        a = rd_block_reduce<Op, 1>(op, a, pass, sh);
        if (threadIdx.x != 0) continue;
        if (Op::passes == 2 && pass == 0) {
            cv[o] = op.mid(a, n);
        } else {
            int64_t oo, oi, ox;
            rd_offsets<HI>(P, o, oo, oi, ox);
            op.store(P.ptr[0] + oo, HI ? P.ptr[1] + oi : nullptr, a, n, Op::passes == 2 ? cv[o] : 0.0);
        }
    }
}

/* ---------------------------------------------------------------- launches */

static inline uint64_t rd_min(uint64_t a, uint64_t b) { return a < b ? a : b; }
static inline uint64_t rd_ceil(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

/* the block kernel with OPB outputs per block: a few tiles with long runs split each run into segments */
template <class Op, bool HI, int OPB>
int rd_launch_fold(cudaStream_t st, const cgcu_reduce_plan *p, const Op &op, int sm) {
    typedef typename Op::A A;
    const uint64_t N = (uint64_t)p->iter.numel, tiles = rd_ceil(N, OPB), n = (uint64_t)p->n;
    uint64_t splits = 1;
    if (tiles < 4ull * (uint64_t)sm && n >= 8192)
        splits = rd_min(rd_ceil(8ull * (uint64_t)sm, tiles), rd_ceil(n, 4096));
    if (splits >= 2) {
        const uint64_t seg = rd_ceil(n, splits);
        splits = rd_ceil(n, seg); /* no empty segment */
        const size_t bytes = (size_t)(N * sizeof(double) + N * splits * sizeof(A));
        void *buf = nullptr;
        if (cudaMallocAsync(&buf, bytes, st) == cudaSuccess) {
            double *cv = (double *)buf;
            A *part = (A *)((char *)buf + N * sizeof(double));
            const dim3 grid((unsigned)tiles, (unsigned)splits);
            int s = CGCU_OK;
            for (int pass = 0; pass < Op::passes && s == CGCU_OK; pass++) {
                rd_fold<Op, HI, OPB><<<grid, RD_THREADS, 0, st>>>(p->iter, p->n, p->stride, (int64_t)seg, pass, 1, cv,
                                                                  part, op);
                rd_final<Op, HI><<<(unsigned)N, RD_THREADS, 0, st>>>(p->iter, p->n, (int64_t)splits, pass, cv, part, op);
                s = cgcu_launch_status();
            }
            const int sf = cgcu_status(cudaFreeAsync(buf, st));
            return s != CGCU_OK ? s : sf;
        }
        cudaGetLastError(); /* no scratch (or no stream-ordered allocator): the whole runs per block */
    }
    const unsigned blocks = (unsigned)rd_min(tiles, 32ull * (uint64_t)sm);
    rd_fold<Op, HI, OPB><<<blocks, RD_THREADS, 0, st>>>(p->iter, p->n, p->stride, p->n, 0, 0, nullptr, nullptr, op);
    return cgcu_launch_status();
}

template <class Op, bool HI>
int rd_launch(int dev, cudaStream_t st, const cgcu_reduce_plan *p, const Op &op) {
    const cgcu_plan &P = p->iter;
    int sm = cgcu_sm_count(dev);
    if (sm <= 0) sm = 1;
    const uint64_t N = (uint64_t)P.numel;
    if (p->n <= RD_SMALL) {
        const unsigned blocks = (unsigned)rd_min(rd_ceil(N, RD_THREADS), 32ull * (uint64_t)sm);
        rd_thread<Op, HI><<<blocks, RD_THREADS, 0, st>>>(P, p->n, p->stride, op);
        return cgcu_launch_status();
    }
    /* consecutive outputs reading consecutive elements, the runs strided: a column reduction */
    const bool cols = P.ndim >= 1 && P.shape[0] >= RD_COLS && P.strides[P.nargs - 1][0] == Op::isz &&
                      p->stride != Op::isz;
    if (cols) return rd_launch_fold<Op, HI, RD_COLS>(st, p, op, sm);
    return rd_launch_fold<Op, HI, 1>(st, p, op, sm);
}

template <class Op>
int rd_run(int dev, const cgcu_reduce_plan *p, const Op &op) {
    if (p->iter.numel <= 0) return CGCU_OK;
    if (p->has_idx && !Op::can_idx) return CGCU_MISSING;
    if (p->iter.nargs != (p->has_idx ? 3 : 2) || p->iter.ndim < 0 || p->iter.ndim > CGCU_MAX_DIMS || p->n < 0)
        return CGCU_INVALID;
    int s = CGCU_OK;
    cudaStream_t st = cgcu_stream(dev, &s);
    if (s != CGCU_OK) return s;
    if constexpr (Op::can_idx) {
        if (p->has_idx) return rd_launch<Op, true>(dev, st, p, op);
    }
    return rd_launch<Op, false>(dev, st, p, op);
}

/* the output dtype of kind for input dtype in (src/ops: sum / prod of integers and bool -> int64, any /
 * all -> bool, count_nonzero -> int64, the rest the input's), -1 when the CPU has no loop for the pair */
int rd_out_dtype(int kind, int in) {
    const bool fl = in == CG_DTYPE_F16 || in == CG_DTYPE_BF16 || in == CG_DTYPE_F32 || in == CG_DTYPE_F64;
    const bool uns = in == CG_DTYPE_U16 || in == CG_DTYPE_U32 || in == CG_DTYPE_U64;
    switch (kind) {
    case RD_SUM:
    case RD_PROD: return fl ? in : CG_DTYPE_I64;
    case RD_ANY:
    case RD_ALL: return CG_DTYPE_BOOL;
    case RD_COUNT_NONZERO: return uns ? -1 : CG_DTYPE_I64;
    case RD_MAX:
    case RD_MIN: return uns ? -1 : in;
    case RD_MEAN:
    case RD_VAR:
    case RD_STD:
    case RD_LOGSUMEXP:
    case RD_NORM: return fl ? in : -1;
    default: return -1;
    }
}

/* the switch cases over the dtypes: MAKE(T) for the floating ones, MAKE(T, B) for bool and the integers */
#define RD_FLOAT_CASES(MAKE)                                               \
    case CG_DTYPE_F16: return rd_run(dev, p, MAKE(cgcu_f16));             \
    case CG_DTYPE_BF16: return rd_run(dev, p, MAKE(cgcu_bf16));           \
    case CG_DTYPE_F32: return rd_run(dev, p, MAKE(float));                \
    case CG_DTYPE_F64: return rd_run(dev, p, MAKE(double));
#define RD_BINT_CASES(MAKE)                                                \
    case CG_DTYPE_BOOL: return rd_run(dev, p, MAKE(uint8_t, true));       \
    case CG_DTYPE_U8: return rd_run(dev, p, MAKE(uint8_t, false));        \
    case CG_DTYPE_I8: return rd_run(dev, p, MAKE(int8_t, false));         \
    case CG_DTYPE_I16: return rd_run(dev, p, MAKE(int16_t, false));       \
    case CG_DTYPE_I32: return rd_run(dev, p, MAKE(int32_t, false));       \
    case CG_DTYPE_I64: return rd_run(dev, p, MAKE(int64_t, false));
#define RD_UINT_CASES(MAKE)                                                \
    case CG_DTYPE_U16: return rd_run(dev, p, MAKE(uint16_t, false));      \
    case CG_DTYPE_U32: return rd_run(dev, p, MAKE(uint32_t, false));      \
    case CG_DTYPE_U64: return rd_run(dev, p, MAKE(int64_t, false)); /* the same bits as int64 modulo 2^64 */

#define MK_FSUM(T) op_fsum<T, false>{}
#define MK_MEAN(T) op_fsum<T, true>{}
#define MK_ISUM(T, B) op_isum<T, B>{}
#define MK_FPROD(T) op_fprod<T>{}
#define MK_IPROD(T, B) op_iprod<T, B>{}
#define MK_ANY(T, B) op_anyall<T, false>{}
#define MK_ALL(T, B) op_anyall<T, true>{}
#define MK_FANY(T) op_anyall<T, false>{}
#define MK_FALL(T) op_anyall<T, true>{}
#define MK_NZ(T, B) op_nz<T>{}
#define MK_FNZ(T) op_nz<T>{}
#define MK_MAX(T, B) op_mm<T, B, true>{}
#define MK_MIN(T, B) op_mm<T, B, false>{}
#define MK_FMAX(T) op_mm<T, false, true>{}
#define MK_FMIN(T) op_mm<T, false, false>{}
#define MK_VAR(T) op_var<T, false>{p->params[0]}
#define MK_STD(T) op_var<T, true>{p->params[0]}
#define MK_LSE(T) op_lse<T>{}
#define MK_NORM(T) op_norm<T>{{}, p->params[0], norm_mode}

} // namespace

int cgcu_reduce(int dev, const cgcu_reduce_plan *p) {
    const int in = p->in_dtype;
    if (in < 0 || in >= CG_DTYPE_COUNT) return CGCU_MISSING;
    const int out = rd_out_dtype(p->kind, in);
    if (out < 0 || out != p->out_dtype) return CGCU_MISSING;
    if (p->iter.numel <= 0) return CGCU_OK;
    switch (p->kind) {
    case RD_SUM:
        switch (in) { RD_FLOAT_CASES(MK_FSUM) RD_BINT_CASES(MK_ISUM) RD_UINT_CASES(MK_ISUM) }
        break;
    case RD_MEAN:
        switch (in) { RD_FLOAT_CASES(MK_MEAN) }
        break;
    case RD_PROD:
        switch (in) { RD_FLOAT_CASES(MK_FPROD) RD_BINT_CASES(MK_IPROD) RD_UINT_CASES(MK_IPROD) }
        break;
    case RD_ANY:
        switch (in) { RD_FLOAT_CASES(MK_FANY) RD_BINT_CASES(MK_ANY) RD_UINT_CASES(MK_ANY) }
        break;
    case RD_ALL:
        switch (in) { RD_FLOAT_CASES(MK_FALL) RD_BINT_CASES(MK_ALL) RD_UINT_CASES(MK_ALL) }
        break;
    case RD_COUNT_NONZERO:
        switch (in) { RD_FLOAT_CASES(MK_FNZ) RD_BINT_CASES(MK_NZ) }
        break;
    case RD_MAX:
        switch (in) { RD_FLOAT_CASES(MK_FMAX) RD_BINT_CASES(MK_MAX) }
        break;
    case RD_MIN:
        switch (in) { RD_FLOAT_CASES(MK_FMIN) RD_BINT_CASES(MK_MIN) }
        break;
    case RD_VAR:
        switch (in) { RD_FLOAT_CASES(MK_VAR) }
        break;
    case RD_STD:
        switch (in) { RD_FLOAT_CASES(MK_STD) }
        break;
    case RD_LOGSUMEXP:
        switch (in) { RD_FLOAT_CASES(MK_LSE) }
        break;
    case RD_NORM: {
        const double pp = p->params[0];
        const int norm_mode = pp == 2 ? 0 : pp == 1 ? 1 : pp == 0 ? 2 : isinf(pp) ? (pp > 0 ? 3 : 4) : 5;
        switch (in) { RD_FLOAT_CASES(MK_NORM) }
        break;
    }
    default: break;
    }
    return CGCU_MISSING;
}
