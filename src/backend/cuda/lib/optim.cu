/* optim.cu — fused optimizer steps on the device (cuda_abi.h, optim_step):
 * SGD (momentum, dampening, Nesterov, weight decay, maximize) and Adam /
 * AdamW (amsgrad, maximize, coupled or decoupled weight decay), one thread
 * per element over a parameter's contiguous operands, with the element
 * formulas of the CPU's loops (src/backend/cpu/optim_steps.c) operation by
 * operation: the same operand order, the scalars rounded to the compute type
 * (float for float32 and the half types, double for float64) as there, half
 * states rounded when stored. The other optimizers answer CGCU_MISSING and
 * the engine stages them (Note [Staged entries]). */
#include "ew_launch.cuh"
#include "ew_math.cuh"

template <class S> struct opt_io;
template <> struct opt_io<float> {
    typedef float C;
    static __device__ __forceinline__ float ld(const void *p, int64_t i) { return ((const float *)p)[i]; }
    static __device__ __forceinline__ void st(void *p, int64_t i, float v) { ((float *)p)[i] = v; }
};
template <> struct opt_io<double> {
    typedef double C;
    static __device__ __forceinline__ double ld(const void *p, int64_t i) { return ((const double *)p)[i]; }
    static __device__ __forceinline__ void st(void *p, int64_t i, double v) { ((double *)p)[i] = v; }
};
template <> struct opt_io<cgcu_f16> {
    typedef float C;
    static __device__ __forceinline__ float ld(const void *p, int64_t i) { return cgcu_f16_to_f32(((const cgcu_f16 *)p)[i]); }
    static __device__ __forceinline__ void st(void *p, int64_t i, float v) { ((cgcu_f16 *)p)[i] = cgcu_f32_to_f16(v); }
};
template <> struct opt_io<cgcu_bf16> {
    typedef float C;
    static __device__ __forceinline__ float ld(const void *p, int64_t i) { return cgcu_bf16_to_f32(((const cgcu_bf16 *)p)[i]); }
    static __device__ __forceinline__ void st(void *p, int64_t i, float v) { ((cgcu_bf16 *)p)[i] = cgcu_f32_to_bf16(v); }
};

/* the kernels' constants, in the compute type C */
template <class C>
struct sgd_c {
    C wd, mom, damp, nlr;
    int maximize, decay, momentum, nesterov, first;
};
template <class C>
struct adam_c {
    C wd, decay, w1, w1c, beta2, c2, eps, nss, bc2s;
    int maximize, weight_decay, decoupled, lerp_low, amsgrad;
};

template <class S>
__global__ void sgd_kernel(cgcu_optim o, sgd_c<typename opt_io<S>::C> c) {
    typedef opt_io<S> IO;
    typedef typename IO::C C;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < o.n; i += (int64_t)blockDim.x * gridDim.x) {
        C gi = IO::ld(o.d[1], i), pi = IO::ld(o.d[0], i);
        if (c.maximize) gi = -gi;
        if (c.decay) gi = gi + c.wd * pi;
        if (c.momentum) {
            C bi = c.first ? gi : IO::ld(o.d[2], i) * c.mom + c.damp * gi;
            IO::st(o.d[2], i, bi);
            gi = c.nesterov ? gi + c.mom * bi : bi;
        }
        IO::st(o.d[0], i, pi + c.nlr * gi);
    }
}

template <class S>
__global__ void adam_kernel(cgcu_optim o, adam_c<typename opt_io<S>::C> c) {
    typedef opt_io<S> IO;
    typedef typename IO::C C;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < o.n; i += (int64_t)blockDim.x * gridDim.x) {
        C gi = IO::ld(o.d[1], i), pi = IO::ld(o.d[0], i), mi = IO::ld(o.d[2], i), vi = IO::ld(o.d[3], i);
        if (c.maximize) gi = -gi;
        if (c.weight_decay) {
            if (c.decoupled) pi = pi * c.decay;
            else gi = gi + c.wd * pi;
        }
        mi = c.lerp_low ? mi + c.w1 * (gi - mi) : gi - (gi - mi) * c.w1c;
        vi = vi * c.beta2;
        vi = vi + c.c2 * gi * gi;
        IO::st(o.d[2], i, mi);
        IO::st(o.d[3], i, vi);
        C d = vi;
        if (c.amsgrad) {
            const C old = IO::ld(o.d[4], i);
            d = (old < vi || vi != vi) ? vi : old; /* torch.maximum: NaN wins */
            IO::st(o.d[4], i, d);
        }
        const C denom = sqrt(d) / c.bc2s + c.eps;
        IO::st(o.d[0], i, pi + c.nss * mi / denom);
    }
}

template <class S>
static int launch(int dev, const cgcu_optim *o) {
    typedef typename opt_io<S>::C C;
    int s = CGCU_OK;
    cudaStream_t st = cgcu_stream(dev, &s);
    if (s != CGCU_OK) return s;
    const unsigned blocks = cgcu_ew_blocks(dev, (uint64_t)o->n);
    if (o->kind == 0) { /* CG_OPTIM_SGD */
        sgd_c<C> c = {(C)o->weight_decay, (C)o->momentum, (C)(1.0 - o->dampening), (C)(-o->lr),
                      o->maximize, o->weight_decay != 0, o->momentum != 0, o->nesterov, o->first};
        sgd_kernel<S><<<blocks, CGCU_EW_THREADS, 0, st>>>(*o, c);
    } else { /* CG_OPTIM_ADAM */
        const C w1 = (C)(1.0 - o->beta1), low = (C)(1.0 - o->beta1);
        adam_c<C> c = {(C)o->weight_decay, (C)(1.0 - o->lr * o->weight_decay), w1, (C)1 - w1, (C)o->beta2,
                       (C)(1.0 - o->beta2), (C)o->eps, (C)o->s[0], (C)o->s[1], o->maximize, o->weight_decay != 0,
                       o->decoupled_weight_decay, low < (C)0.5 && low > (C)-0.5, o->amsgrad};
        adam_kernel<S><<<blocks, CGCU_EW_THREADS, 0, st>>>(*o, c);
    }
    return cgcu_launch_status();
}

int cgcu_optim_step(int dev, const cgcu_optim *o) {
    if (o->kind != 0 && o->kind != 1) return CGCU_MISSING; /* SGD, Adam: the order of cg_optim_kind */
    if (o->n <= 0) return CGCU_OK;
    switch (o->dtype) {
    case CG_DTYPE_F32: return launch<float>(dev, o);
    case CG_DTYPE_F64: return launch<double>(dev, o);
    case CG_DTYPE_F16: return launch<cgcu_f16>(dev, o);
    case CG_DTYPE_BF16: return launch<cgcu_bf16>(dev, o);
    default: return CGCU_MISSING;
    }
}
