/* resample.c — the CPU's entry of the uint8 interpolation pass (Note [uint8
 * resampling], src/ops/nn_resample.c): one separable 1-D pass of fixed-point
 * taps along the middle dim of a (P, In, R) block, in int32 as PyTorch does. */
#include "cpu_kernels.h"

typedef struct u8_job {
    const uint8_t *x; /* (P, In, R) */
    uint8_t *y;       /* (P, O, R) */
    int64_t In, O, R, K;
    const int64_t *start, *count; /* (O,) */
    const int16_t *w;             /* (O, K) */
    unsigned prec;
} u8_job;

/* acc >> prec clamped to [0, 255]; a negative sum is 0 (PyTorch's arithmetic
 * shift then clamp), written without shifting a negative value. */
static inline uint8_t u8_round(int32_t acc, unsigned prec) {
    if (acc < 0) return 0;
    int32_t v = acc >> prec;
    return (uint8_t)(v > 255 ? 255 : v);
}

#define U8_CHUNK 512
/* rows b..e of the (P, O) output rows */
static void u8_range(int64_t b, int64_t e, void *ctx) {
    const u8_job *j = ctx;
    const int32_t half = (int32_t)1 << (j->prec - 1);
    for (int64_t row = b; row < e; row++) {
        int64_t p = row / j->O, o = row % j->O, n = j->count[o];
        const int16_t *w = j->w + o * j->K;
        const uint8_t *src = j->x + (p * j->In + j->start[o]) * j->R;
        uint8_t *dst = j->y + row * j->R;
        if (j->R == 1) { /* along the innermost dim: one dot product per output */
            int32_t acc = half;
            for (int64_t k = 0; k < n; k++) acc += (int32_t)src[k] * w[k];
            dst[0] = u8_round(acc, j->prec);
            continue;
        }
        int32_t acc[U8_CHUNK]; /* across rows: R-long rows weighed and summed, in chunks */
        for (int64_t r0 = 0; r0 < j->R; r0 += U8_CHUNK) {
            int64_t m = j->R - r0 < U8_CHUNK ? j->R - r0 : U8_CHUNK;
            for (int64_t r = 0; r < m; r++) acc[r] = half;
            for (int64_t k = 0; k < n; k++) {
                const uint8_t *s = src + k * j->R + r0;
                int32_t wk = w[k];
                for (int64_t r = 0; r < m; r++) acc[r] += (int32_t)s[r] * wk;
            }
            for (int64_t r = 0; r < m; r++) dst[r0 + r] = u8_round(acc[r], j->prec);
        }
    }
}

cg_status cg_cpu_resample_u8(cg_tensor *y, const cg_tensor *x, int64_t P, int64_t In, int64_t O, int64_t R,
                             const int64_t *start, const int64_t *count, const int16_t *w, int64_t K, unsigned prec) {
    u8_job j = {.x = (const uint8_t *)cg_tensor_ptr(x), .y = (uint8_t *)cg_tensor_ptr(y), .In = In, .O = O, .R = R,
                .K = K, .start = start, .count = count, .w = w, .prec = prec};
    int64_t work = R * (K > 0 ? K : 1);
    cg_parallel_for(P * O, work >= 32768 ? 1 : 32768 / work, u8_range, &j);
    return CG_OK;
}
