/* conv_int.c — the integer convolution kernels (Note [Integer conv]): the
 * three maps of one conv geometry (Note [Conv geometry]) as a direct loop
 * nest over int64 operands, exact modular arithmetic (no float round trip). */
#include "conv_internal.h"

/* Note [Integer conv]: integer convolutions (PyTorch's CPU build has them:
 * int64 for every op, the narrower types for the forward conv) run on int64
 * copies of the operands; products and sums are computed in uint64, so they
 * wrap modulo 2^64 without undefined behaviour, and the op narrows the result
 * to its dtype, which gives the same value as arithmetic wrapping in that
 * dtype. Each thread owns whole output rows (a sample's channel, or a
 * weight's output channel), so no result depends on the thread count. */

typedef struct int_job {
    const cg_conv_geom *g;
    cg_conv_kind kind;
    const int64_t *a, *b, *bias;
    int64_t *out;
    int64_t cin_g, cout_g, kvol, P, L;
} int_job;

/* For input channel ci of sample (n) and output channel co (same group),
 * BODY runs for every tap j (flat, kernel-local) and output position o whose
 * input position i (flat) is inside the input. */
#define TAP_LOOP(BODY)                                                                               \
    for (int64_t j0 = 0; j0 < g->k[0]; j0++)                                                         \
        for (int64_t j1 = 0; j1 < g->k[1]; j1++)                                                     \
            for (int64_t j2 = 0; j2 < g->k[2]; j2++) {                                               \
                const int64_t j = (j0 * g->k[1] + j1) * g->k[2] + j2;                                \
                for (int64_t o0 = 0; o0 < g->out[0]; o0++) {                                         \
                    const int64_t i0 = o0 * g->stride[0] - g->pad[0] + j0 * g->dil[0];               \
                    if (i0 < 0 || i0 >= g->in[0]) continue;                                          \
                    for (int64_t o1 = 0; o1 < g->out[1]; o1++) {                                     \
                        const int64_t i1 = o1 * g->stride[1] - g->pad[1] + j1 * g->dil[1];           \
                        if (i1 < 0 || i1 >= g->in[1]) continue;                                      \
                        for (int64_t o2 = 0; o2 < g->out[2]; o2++) {                                 \
                            const int64_t i2 = o2 * g->stride[2] - g->pad[2] + j2 * g->dil[2];       \
                            if (i2 < 0 || i2 >= g->in[2]) continue;                                  \
                            const int64_t o = (o0 * g->out[1] + o1) * g->out[2] + o2;                \
                            const int64_t i = (i0 * g->in[1] + i1) * g->in[2] + i2;                  \
                            BODY;                                                                    \
                        }                                                                            \
                    }                                                                                \
                }                                                                                    \
            }

/* rows [r0, r1): forward (n, co) of y; transpose (n, ci) of x; weight grad co of w */
static void int_rows(int64_t r0, int64_t r1, void *p) {
    const int_job *jb = p;
    const cg_conv_geom *g = jb->g;
    const int64_t cin = g->cin, cout = g->cout, K = jb->cin_g * jb->kvol;
    for (int64_t r = r0; r < r1; r++) {
        if (jb->kind == CG_CONV_FORWARD) { /* a = x (N,cin,P), b = w (cout,cin_g,kvol) -> y (N,cout,L) */
            int64_t n = r / cout, co = r % cout, grp = co / jb->cout_g;
            uint64_t *y = (uint64_t *)jb->out + r * jb->L;
            for (int64_t o = 0; o < jb->L; o++) y[o] = jb->bias ? (uint64_t)jb->bias[co] : 0;
            for (int64_t cl = 0; cl < jb->cin_g; cl++) {
                const uint64_t *x = (const uint64_t *)jb->a + (n * cin + grp * jb->cin_g + cl) * jb->P;
                const uint64_t *w = (const uint64_t *)jb->b + co * K + cl * jb->kvol;
                TAP_LOOP(y[o] += x[i] * w[j])
            }
        } else if (jb->kind == CG_CONV_TRANSPOSE) { /* a = y (N,cout,L), b = w -> x (N,cin,P) */
            int64_t n = r / cin, ci = r % cin, grp = ci / jb->cin_g, cl = ci % jb->cin_g;
            uint64_t *x = (uint64_t *)jb->out + r * jb->P;
            for (int64_t i = 0; i < jb->P; i++) x[i] = jb->bias ? (uint64_t)jb->bias[ci] : 0;
            for (int64_t c = 0; c < jb->cout_g; c++) {
                int64_t co = grp * jb->cout_g + c;
                const uint64_t *y = (const uint64_t *)jb->a + (n * cout + co) * jb->L;
                const uint64_t *w = (const uint64_t *)jb->b + co * K + cl * jb->kvol;
                TAP_LOOP(x[i] += y[o] * w[j])
            }
        } else { /* a = x (N,cin,P), b = y (N,cout,L) -> w (cout,cin_g,kvol) */
            int64_t co = r, grp = co / jb->cout_g;
            uint64_t *w = (uint64_t *)jb->out + co * K;
            for (int64_t e = 0; e < K; e++) w[e] = 0;
            for (int64_t n = 0; n < g->n; n++) {
                const uint64_t *y = (const uint64_t *)jb->b + (n * cout + co) * jb->L;
                for (int64_t cl = 0; cl < jb->cin_g; cl++) {
                    const uint64_t *x = (const uint64_t *)jb->a + (n * cin + grp * jb->cin_g + cl) * jb->P;
                    uint64_t *wc = w + cl * jb->kvol;
                    TAP_LOOP(wc[j] += x[i] * y[o])
                }
            }
        }
    }
}

void cg_conv_cpu_int(cg_conv_kind kind, const cg_conv_geom *g, const int64_t *a, const int64_t *b,
                     const int64_t *bias, int64_t *out) {
    int_job jb = {g, kind, a, b, bias, out, g->cin / g->groups, g->cout / g->groups, cg_conv_vol(g->k),
                  cg_conv_vol(g->in), cg_conv_vol(g->out)};
    int64_t rows = kind == CG_CONV_FORWARD ? g->n * g->cout : kind == CG_CONV_TRANSPOSE ? g->n * g->cin : g->cout;
    int64_t work = jb.kvol * (kind == CG_CONV_TRANSPOSE ? jb.cout_g : jb.cin_g) * jb.L;
    if (kind == CG_CONV_WEIGHT_GRAD) work *= g->n;
    if (rows > 0) cg_parallel_for(rows, CG_GRAIN / (work > 0 ? work : 1) + 1, int_rows, &jb);
}
