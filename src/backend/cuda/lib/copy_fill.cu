/* copy_fill.cu — the CUDA copy runner and fill: cgcu_cast moves a plan's
 * elements from ptr[1] into ptr[0] converted between any two of the 13 dtypes
 * exactly as the CPU's cast loops (src/backend/cpu/copy.c): each destination
 * goes through double (bool, floats) or int64 (integers) — floats to integers
 * truncate toward zero, saturate at the int64 range and give 0 for NaN, then
 * narrow keeping the low bits; ->bool is != 0 (NaN gives 1); float16 /
 * bfloat16 through float (ew_math.cuh's conversions, bit for bit the CPU's) —
 * or as bytes when the dtypes agree (contiguous: one cudaMemcpyAsync).
 * cgcu_fill writes one itemsize-byte value (passed by value in the kernel's
 * arguments) to every element. Kernels: ew_launch.cuh's, enqueued without
 * waiting. */
#include "ew_launch.cuh"
#include "ew_math.cuh"

namespace {

template <int D>
struct cc_dt;
#define CC_DT(D, T, F)                  \
    template <>                         \
    struct cc_dt<D> {                   \
        typedef T type;                 \
        static constexpr bool fpath = F; \
    };
/* the storage type of each dtype and its path (true: through double, false: through int64) */
CC_DT(CG_DTYPE_BOOL, uint8_t, true)
CC_DT(CG_DTYPE_U8, uint8_t, false)
CC_DT(CG_DTYPE_I8, int8_t, false)
CC_DT(CG_DTYPE_I16, int16_t, false)
CC_DT(CG_DTYPE_I32, int32_t, false)
CC_DT(CG_DTYPE_I64, int64_t, false)
CC_DT(CG_DTYPE_F16, cgcu_f16, true)
CC_DT(CG_DTYPE_BF16, cgcu_bf16, true)
CC_DT(CG_DTYPE_F32, float, true)
CC_DT(CG_DTYPE_F64, double, true)
CC_DT(CG_DTYPE_U16, uint16_t, false)
CC_DT(CG_DTYPE_U32, uint32_t, false)
CC_DT(CG_DTYPE_U64, uint64_t, false)
#undef CC_DT

/* copy.c's f2i: NaN -> 0, saturated at the int64 range, else truncated */
__device__ __forceinline__ int64_t cc_f2i(double v) {
    if (isnan(v)) return 0;
    if (v >= 9.2233720368547758e18) return INT64_MAX;
    if (v <= -9.2233720368547758e18) return INT64_MIN;
    return (int64_t)v;
}

/* copy.c's LDF_<src>: to double */
template <int S, class T>
__device__ __forceinline__ double cc_ldf(T x) {
    if constexpr (S == CG_DTYPE_BOOL) return (double)(x != 0);
    else if constexpr (S == CG_DTYPE_F16) return (double)cgcu_f16_to_f32(x);
    else if constexpr (S == CG_DTYPE_BF16) return (double)cgcu_bf16_to_f32(x);
    else return (double)x;
}

/* copy.c's LDI_<src>: to int64 (uint64 wraps; the integer stores keep the low bits) */
template <int S, class T>
__device__ __forceinline__ int64_t cc_ldi(T x) {
    if constexpr (S == CG_DTYPE_BOOL) return (int64_t)(x != 0);
    else if constexpr (S == CG_DTYPE_F16) return cc_f2i(cgcu_f16_to_f32(x));
    else if constexpr (S == CG_DTYPE_BF16) return cc_f2i(cgcu_bf16_to_f32(x));
    else if constexpr (S == CG_DTYPE_F32 || S == CG_DTYPE_F64) return cc_f2i(x);
    else return (int64_t)x;
}

/* copy.c's ST_<dst> */
template <int D, class V>
__device__ __forceinline__ typename cc_dt<D>::type cc_st(V v) {
    typedef typename cc_dt<D>::type OT;
    if constexpr (D == CG_DTYPE_BOOL) return (uint8_t)(v != 0);
    else if constexpr (D == CG_DTYPE_F16) return cgcu_f32_to_f16((float)v);
    else if constexpr (D == CG_DTYPE_BF16) return cgcu_f32_to_bf16((float)v);
    else return (OT)v;
}

template <int D, int S>
struct cc_cast : cgcu_ew_typed<cc_cast<D, S>, typename cc_dt<D>::type, typename cc_dt<S>::type, 1> {
    __device__ __forceinline__ typename cc_dt<D>::type f(typename cc_dt<S>::type x) const {
        if constexpr (cc_dt<D>::fpath) return cc_st<D>(cc_ldf<S>(x));
        else return cc_st<D>(cc_ldi<S>(x));
    }
};

/* a byte copy of U-sized elements */
template <class U>
struct cc_copy : cgcu_ew_typed<cc_copy<U>, U, U, 1> {
    __device__ __forceinline__ U f(U x) const { return x; }
};

/* fill: writes v; its one "input" is never read (item size 0, so a plan whose input strides are 0 is contiguous) */
template <class U>
struct cc_fill {
    static constexpr int nin = 1, osz = (int)sizeof(U), isz0 = 0, isz1 = 0, isz2 = 0;
    U v;
    __device__ __forceinline__ void operator()(char *o, const char *, const char *, const char *) const {
        *(U *)o = v;
    }
};

typedef int (*cc_fn)(int dev, const cgcu_plan *p);

template <int D, int S>
int cc_run(int dev, const cgcu_plan *p) {
    return cgcu_ew_run(dev, p, cc_cast<D, S>{});
}

#define CC_ROW(D)                                                                                              \
    {cc_run<D, CG_DTYPE_BOOL>, cc_run<D, CG_DTYPE_U8>, cc_run<D, CG_DTYPE_I8>, cc_run<D, CG_DTYPE_I16>,           \
     cc_run<D, CG_DTYPE_I32>, cc_run<D, CG_DTYPE_I64>, cc_run<D, CG_DTYPE_F16>, cc_run<D, CG_DTYPE_BF16>,         \
     cc_run<D, CG_DTYPE_F32>, cc_run<D, CG_DTYPE_F64>, cc_run<D, CG_DTYPE_U16>, cc_run<D, CG_DTYPE_U32>,          \
     cc_run<D, CG_DTYPE_U64>}

/* k_cast[dst][src] (the diagonal is never called: same dtypes are byte copies) */
const cc_fn k_cast[CG_DTYPE_COUNT][CG_DTYPE_COUNT] = {
    CC_ROW(CG_DTYPE_BOOL), CC_ROW(CG_DTYPE_U8),  CC_ROW(CG_DTYPE_I8),  CC_ROW(CG_DTYPE_I16), CC_ROW(CG_DTYPE_I32),
    CC_ROW(CG_DTYPE_I64),  CC_ROW(CG_DTYPE_F16), CC_ROW(CG_DTYPE_BF16), CC_ROW(CG_DTYPE_F32), CC_ROW(CG_DTYPE_F64),
    CC_ROW(CG_DTYPE_U16),  CC_ROW(CG_DTYPE_U32), CC_ROW(CG_DTYPE_U64),
};
#undef CC_ROW

int cc_itemsize(int dt) {
    switch (dt) {
    case CG_DTYPE_BOOL: case CG_DTYPE_U8: case CG_DTYPE_I8: return 1;
    case CG_DTYPE_I16: case CG_DTYPE_F16: case CG_DTYPE_BF16: case CG_DTYPE_U16: return 2;
    case CG_DTYPE_I32: case CG_DTYPE_F32: case CG_DTYPE_U32: return 4;
    default: return 8;
    }
}

/* same dtype: bytes; contiguous runs in one cudaMemcpyAsync */
int cc_copy_same(int dev, const cgcu_plan *p, int isz) {
    if (p->numel <= 0) return CGCU_OK;
    const int sizes[2] = {isz, isz};
    unsigned bcast = 0;
    if (cgcu_ew_is_contig(p, 2, sizes, &bcast) && !bcast) {
        if (p->ptr[0] == p->ptr[1]) return CGCU_OK;
        int s = CGCU_OK;
        cudaStream_t st = cgcu_stream(dev, &s);
        if (s != CGCU_OK) return s;
        return cgcu_status(cudaMemcpyAsync(p->ptr[0], p->ptr[1], (size_t)p->numel * (size_t)isz,
                                           cudaMemcpyDeviceToDevice, st));
    }
    switch (isz) {
    case 1: return cgcu_ew_run(dev, p, cc_copy<uint8_t>{});
    case 2: return cgcu_ew_run(dev, p, cc_copy<uint16_t>{});
    case 4: return cgcu_ew_run(dev, p, cc_copy<uint32_t>{});
    default: return cgcu_ew_run(dev, p, cc_copy<uint64_t>{});
    }
}

template <class U>
int cc_fill_run(int dev, const cgcu_plan *q, const void *value) {
    cc_fill<U> f;
    memcpy(&f.v, value, sizeof(U));
    return cgcu_ew_run(dev, q, f);
}

} // namespace

int cgcu_cast(int dev, const cgcu_plan *p, int dst_dtype, int src_dtype) {
    if (dst_dtype < 0 || dst_dtype >= CG_DTYPE_COUNT || src_dtype < 0 || src_dtype >= CG_DTYPE_COUNT)
        return CGCU_INVALID;
    if (dst_dtype == src_dtype) return cc_copy_same(dev, p, cc_itemsize(dst_dtype));
    if (p->numel <= 0) return CGCU_OK;
    return k_cast[dst_dtype][src_dtype](dev, p);
}

int cgcu_fill(int dev, const cgcu_plan *p, const void *value, size_t itemsize) {
    if (itemsize != 1 && itemsize != 2 && itemsize != 4 && itemsize != 8) return CGCU_INVALID;
    if (p->numel <= 0) return CGCU_OK;
    /* the output alone: the input slot points at the output with stride 0 (never read) */
    cgcu_plan q = *p;
    q.nargs = 2;
    q.ptr[1] = q.ptr[0];
    for (int d = 0; d < CGCU_MAX_DIMS; d++) q.strides[1][d] = 0;
    const int sizes[2] = {(int)itemsize, 0};
    unsigned bcast = 0;
    if (cgcu_ew_is_contig(&q, 2, sizes, &bcast)) {
        /* a value of equal bytes (zeros, most often): cudaMemsetAsync */
        const unsigned char *v = (const unsigned char *)value;
        bool same = true;
        for (size_t k = 1; k < itemsize; k++) same = same && v[k] == v[0];
        if (same) {
            int s = CGCU_OK;
            cudaStream_t st = cgcu_stream(dev, &s);
            if (s != CGCU_OK) return s;
            return cgcu_status(cudaMemsetAsync(q.ptr[0], v[0], (size_t)q.numel * itemsize, st));
        }
    }
    switch (itemsize) {
    case 1: return cc_fill_run<uint8_t>(dev, &q, value);
    case 2: return cc_fill_run<uint16_t>(dev, &q, value);
    case 4: return cc_fill_run<uint32_t>(dev, &q, value);
    default: return cc_fill_run<uint64_t>(dev, &q, value);
    }
}
