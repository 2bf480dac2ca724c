/* slicing.c — the CPU's strided_accumulate entry (Note [Kernel entries]; the
 * op: the slicing views' backward, Note [Strided scatter] in
 * src/ops/slicing.c): dst += src over an iterator plan, run on one thread in
 * the plan's order so overlapping windows (unfold, as_strided) sum the same
 * way every time. */
#include "cpu_kernels.h"

#define ACC_LOOP(name, T)                                                                   \
    static void name(char **a, const int64_t *s, int64_t n, const void *p) {                \
        (void)p;                                                                            \
        for (int64_t k = 0; k < n; k++) *(T *)(a[0] + k * s[0]) += *(const T *)(a[1] + k * s[1]); \
    }
ACC_LOOP(acc_f32, float)
ACC_LOOP(acc_f64, double)
static void acc_f16(char **a, const int64_t *s, int64_t n, const void *p) {
    (void)p;
    for (int64_t k = 0; k < n; k++) {
        cg_f16 *o = (cg_f16 *)(a[0] + k * s[0]);
        *o = cg_f32_to_f16(cg_f16_to_f32(*o) + cg_f16_to_f32(*(const cg_f16 *)(a[1] + k * s[1])));
    }
}
static void acc_bf16(char **a, const int64_t *s, int64_t n, const void *p) {
    (void)p;
    for (int64_t k = 0; k < n; k++) {
        cg_bf16 *o = (cg_bf16 *)(a[0] + k * s[0]);
        *o = cg_f32_to_bf16(cg_bf16_to_f32(*o) + cg_bf16_to_f32(*(const cg_bf16 *)(a[1] + k * s[1])));
    }
}

cg_status cg_cpu_strided_accumulate(cg_device dev, const cg_iter *it, cg_dtype dt) {
    (void)dev;
    cg_loop_fn fn = dt == CG_DTYPE_F32 ? acc_f32 : dt == CG_DTYPE_F64 ? acc_f64
                    : dt == CG_DTYPE_F16 ? acc_f16 : acc_bf16;
    cg_iter_run(it, fn, NULL, INT64_MAX); /* sequential: windows may overlap */
    return CG_OK;
}
