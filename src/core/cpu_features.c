/* cpu_features.c — what the processor and the OS let the engine run: the CPU
 * level (Note [CPU levels]) from cpuid's feature bits and the register state
 * the OS saves (XCR0, read with xgetbv). Always compiled for the baseline (in
 * every level's build too), so asking is safe on any x86-64 CPU; and
 * self-contained, so the Python package also compiles it into cgrad._cpuinfo,
 * which picks the engine build to load. (The level a build was compiled for
 * is cg_cpu_level_built, state.c.) */
#include "cgrad.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

/* Note [CPU levels]: the engine is built three times, for x86-64-v2
 * ("baseline"), x86-64-v3 ("avx2") and x86-64-v4 ("avx512"), each a whole
 * libcgrad.so compiled with that -march (the loops, reductions, vmath, half
 * conversions, softmax / norm rows, im2col and GEMM panels all vectorise for
 * it). One is loaded per process: C programs get the best one the dynamic
 * loader finds in glibc-hwcaps/x86-64-v{3,4}/ beside libcgrad.so; Python's
 * cgrad/_engine.py loads the level cg_cpu_level_supported() reports, or the
 * lower one CGRAD_CPU_LEVEL names, before cgrad._C (whose libcgrad.so
 * dependency the loaded build then satisfies). */

#if defined(__x86_64__) || defined(__i386__)
typedef struct cpu_regs {
    unsigned l1c, l1d;       /* leaf 1: ECX, EDX */
    unsigned l7b, l7c, l71a; /* leaf 7.0: EBX, ECX; leaf 7.1: EAX */
    unsigned e1c;            /* leaf 0x80000001: ECX */
    unsigned long long xcr0; /* 0 when the OS does not enable xgetbv */
} cpu_regs;

static cpu_regs read_cpu(void) {
    cpu_regs r = {0};
    unsigned a, b, c, d, max = __get_cpuid_max(0, 0);
    if (max >= 1 && __get_cpuid(1, &a, &b, &c, &d)) {
        r.l1c = c;
        r.l1d = d;
    }
    if (max >= 7 && __get_cpuid_count(7, 0, &a, &b, &c, &d)) {
        r.l7b = b;
        r.l7c = c;
        if (a >= 1 && __get_cpuid_count(7, 1, &a, &b, &c, &d)) r.l71a = a;
    }
    if (__get_cpuid_max(0x80000000u, 0) >= 0x80000001u && __get_cpuid(0x80000001u, &a, &b, &c, &d)) r.e1c = c;
    if ((r.l1c >> 27) & 1u) { /* OSXSAVE: the OS enabled xgetbv */
        unsigned lo, hi;
        __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        r.xcr0 = ((unsigned long long)hi << 32) | lo;
    }
    return r;
}

static bool all_bits(unsigned long long v, unsigned long long mask) { return (v & mask) == mask; }
#define BIT(n) (1ull << (n))

static bool zmm_state(const cpu_regs *r) { return all_bits(r->xcr0, BIT(1) | BIT(2) | BIT(5) | BIT(6) | BIT(7)); }

cg_cpu_level cg_cpu_level_supported(void) {
    cpu_regs r = read_cpu();
    /* x86-64-v2: SSE3, SSSE3, SSE4.1, SSE4.2, POPCNT, CMPXCHG16B; LAHF/SAHF */
    if (!all_bits(r.l1c, BIT(0) | BIT(9) | BIT(13) | BIT(19) | BIT(20) | BIT(23)) || !(r.e1c & 1u))
        return CG_CPU_LEVEL_NONE;
    /* x86-64-v3: AVX, FMA, F16C, MOVBE, XSAVE/OSXSAVE; AVX2, BMI1, BMI2; LZCNT;
     * the OS saves the SSE and AVX state */
    if (!all_bits(r.l1c, BIT(12) | BIT(22) | BIT(26) | BIT(27) | BIT(28) | BIT(29)) ||
        !all_bits(r.l7b, BIT(3) | BIT(5) | BIT(8)) || !((r.e1c >> 5) & 1u) || !all_bits(r.xcr0, BIT(1) | BIT(2)))
        return CG_CPU_LEVEL_BASELINE;
    /* x86-64-v4: AVX512 F, DQ, CD, BW, VL; the OS saves opmask and ZMM state */
    if (!all_bits(r.l7b, BIT(16) | BIT(17) | BIT(28) | BIT(30) | BIT(31)) || !zmm_state(&r))
        return CG_CPU_LEVEL_AVX2;
    return CG_CPU_LEVEL_AVX512;
}

bool cg_cpu_has_avx512_bf16(void) {
    cpu_regs r = read_cpu();
    return ((r.l71a >> 5) & 1u) && ((r.l7b >> 16) & 1u) && zmm_state(&r);
}
#else
cg_cpu_level cg_cpu_level_supported(void) { return CG_CPU_LEVEL_BASELINE; }
bool cg_cpu_has_avx512_bf16(void) { return false; }
#endif

const char *cg_cpu_level_name(cg_cpu_level level) {
    static const char *const names[] = {"none", "baseline", "avx2", "avx512"};
    if (level < CG_CPU_LEVEL_NONE || level >= CG_CPU_LEVEL_COUNT) return 0;
    return names[level + 1];
}
