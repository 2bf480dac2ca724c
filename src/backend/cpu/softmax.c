/* softmax.c — the CPU's softmax entries (Note [Kernel entries]): one fused,
 * numerically stable forward (subtract the max, exponentiate, normalise) and
 * the fused first-order backward, over contiguous tensors viewed as
 * (outer, D, inner), split across threads in work units independent of the
 * thread count. */
#include "cpu_kernels.h"
#include "loops.h"
#include "vmath.h"

/* Work unit: one outer index and a block of at most SM_BLOCK inner columns.
 * Units are independent, so results do not depend on the thread count. */
#define SM_BLOCK 256

typedef struct sm_args {
    const char *in; /* contiguous (outer, D, inner) */
    char *out;      /* contiguous (outer, D, inner) */
    int64_t D, inner, nblocks;
    bool log;
    void (*unit)(const struct sm_args *a, int64_t o, int64_t i0, int64_t bw);
} sm_args;

/* Lanes of the vectorised row loops: few enough that the compiler keeps the
 * lane loop (and vectorises it) instead of unrolling it into scalar code. */
#define SM_LANES 32

/* One contiguous row (I == 1) of float32 / float64: the max in lanes (a NaN
 * is skipped by the max but poisons the sum, so the row is NaN as below),
 * y = exp(x - m) in one vectorised pass, the sum of y in double lanes, then
 * the normalisation pass. */
#define SM_ROW(sfx, T, EXP)                                                                      \
    static void sm_row_##sfx(const T *x, T *y, int64_t D, bool take_log) {                       \
        T m = (T)-INFINITY;                                                                      \
        int64_t d = 0;                                                                           \
        if (D >= SM_LANES) {                                                                     \
            T b[SM_LANES];                                                                       \
            for (int j = 0; j < SM_LANES; j++) b[j] = (T)-INFINITY;                              \
            for (; d + SM_LANES <= D; d += SM_LANES)                                             \
                for (int j = 0; j < SM_LANES; j++) b[j] = x[d + j] > b[j] ? x[d + j] : b[j];     \
            for (int w = SM_LANES / 2; w >= 1; w /= 2) /* halving tree: vector steps */          \
                for (int j = 0; j < w; j++) b[j] = b[j + w] > b[j] ? b[j + w] : b[j];            \
            m = b[0];                                                                            \
        }                                                                                        \
        for (; d < D; d++) m = x[d] > m ? x[d] : m;                                              \
        for (d = 0; d < D; d++) y[d] = EXP(x[d] - m);                                            \
        double s = 0;                                                                            \
        d = 0;                                                                                   \
        if (D >= SM_LANES) {                                                                     \
            double a[SM_LANES] = {0};                                                            \
            for (; d + SM_LANES <= D; d += SM_LANES)                                             \
                for (int j = 0; j < SM_LANES; j++) a[j] += (double)y[d + j];                     \
            for (int w = SM_LANES / 2; w >= 1; w /= 2)                                           \
                for (int j = 0; j < w; j++) a[j] += a[j + w];                                    \
            s = a[0];                                                                            \
        }                                                                                        \
        for (; d < D; d++) s += (double)y[d];                                                    \
        if (take_log) {                                                                          \
            const T ls = (T)log(s);                                                              \
            for (d = 0; d < D; d++) y[d] = (x[d] - m) - ls;                                      \
        } else {                                                                                 \
            const T inv = (T)(1.0 / s);                                                          \
            for (d = 0; d < D; d++) y[d] *= inv;                                                 \
        }                                                                                        \
    }
SM_ROW(f32, float, cg_vm_expf)
SM_ROW(f64, double, exp)

/* float16 / bfloat16 rows of at most SM_HALF_ROW elements: converted to float
 * on the stack, the float32 row kernel (the same float operations as the
 * element loop below, the sum in lanes), converted back; longer rows take
 * the element loop */
#define SM_HALF_ROW 2048
static void sm_row_f16_v(const void *x, void *y, int64_t D, bool take_log) {
    float xf[SM_HALF_ROW], yf[SM_HALF_ROW];
    if (D <= 0 || D > SM_HALF_ROW) return; /* (the callers' bound, for the compiler) */
    cg_f16_to_f32_n(xf, x, D);
    sm_row_f32(xf, yf, D, take_log);
    cg_f32_to_f16_n(y, yf, D);
}
static void sm_row_bf16_v(const void *x, void *y, int64_t D, bool take_log) {
    float xf[SM_HALF_ROW], yf[SM_HALF_ROW];
    const cg_bf16 *xh = x;
    cg_bf16 *yh = y;
    if (D <= 0 || D > SM_HALF_ROW) return; /* (the callers' bound, for the compiler) */
    for (int64_t d = 0; d < D; d++) xf[d] = cg_bf16_to_f32(xh[d]);
    sm_row_f32(xf, yf, D, take_log);
    for (int64_t d = 0; d < D; d++) yh[d] = cg_f32_to_bf16(yf[d]);
}

/* One unit: columns [i0, i0 + bw) of outer slice o. Max and sum are kept per
 * column (sum in double); NaN anywhere in a column makes it all NaN, and an
 * all -inf column gives NaN, as in PyTorch. */
#define SM_UNIT(sfx, T, CT, LD, ST, EXP, ROW_MAX, ROW)                                           \
    static void sm_unit_##sfx(const sm_args *a, int64_t o, int64_t i0, int64_t bw) {             \
        const int64_t D = a->D, I = a->inner;                                                    \
        const T *x = (const T *)a->in + o * D * I + i0;                                          \
        T *y = (T *)a->out + o * D * I + i0;                                                     \
        const bool keep = sizeof(T) == sizeof(CT) && !a->log; /* y holds exp(x - m) exactly */   \
        if (I == 1 && D <= ROW_MAX) { /* rows: float32 / float64, short half rows */            \
            ROW((const void *)x, (void *)y, D, a->log);                                          \
            return;                                                                              \
        }                                                                                        \
        if (I == 1) { /* softmax over the innermost dim: one contiguous row */                  \
            CT m = (CT)-INFINITY;                                                                \
            for (int64_t d = 0; d < D; d++) {                                                    \
                CT v = LD(x[d]);                                                                 \
                m = v > m ? v : m;                                                               \
            }                                                                                    \
            double s = 0;                                                                        \
            if (keep)                                                                            \
                for (int64_t d = 0; d < D; d++) {                                                \
                    CT e = EXP(LD(x[d]) - m);                                                    \
                    y[d] = ST(e);                                                                \
                    s += e;                                                                      \
                }                                                                                \
            else                                                                                 \
                for (int64_t d = 0; d < D; d++) s += EXP(LD(x[d]) - m);                          \
            if (a->log) {                                                                        \
                CT ls = (CT)log(s);                                                              \
                for (int64_t d = 0; d < D; d++) y[d] = ST((LD(x[d]) - m) - ls);                  \
            } else if (keep) {                                                                   \
                CT inv = (CT)(1.0 / s);                                                          \
                for (int64_t d = 0; d < D; d++) y[d] = ST(LD(y[d]) * inv);                       \
            } else {                                                                             \
                CT inv = (CT)(1.0 / s);                                                          \
                for (int64_t d = 0; d < D; d++) y[d] = ST(EXP(LD(x[d]) - m) * inv);              \
            }                                                                                    \
            return;                                                                              \
        }                                                                                        \
        CT mx[SM_BLOCK];                                                                         \
        double sm[SM_BLOCK];                                                                     \
        for (int64_t i = 0; i < bw; i++) mx[i] = (CT)-INFINITY, sm[i] = 0;                       \
        for (int64_t d = 0; d < D; d++)                                                          \
            for (int64_t i = 0; i < bw; i++) {                                                   \
                CT v = LD(x[d * I + i]);                                                         \
                mx[i] = v > mx[i] ? v : mx[i];                                                   \
            }                                                                                    \
        for (int64_t d = 0; d < D; d++)                                                          \
            for (int64_t i = 0; i < bw; i++) {                                                   \
                CT e = EXP(LD(x[d * I + i]) - mx[i]);                                            \
                sm[i] += e;                                                                      \
                if (keep) y[d * I + i] = ST(e);                                                  \
            }                                                                                    \
        if (a->log) {                                                                            \
            CT ls[SM_BLOCK];                                                                     \
            for (int64_t i = 0; i < bw; i++) ls[i] = (CT)log(sm[i]);                     \
            for (int64_t d = 0; d < D; d++)                                                      \
                for (int64_t i = 0; i < bw; i++) y[d * I + i] = ST((LD(x[d * I + i]) - mx[i]) - ls[i]);    \
        } else {                                                                                 \
            CT inv[SM_BLOCK];                                                                    \
            for (int64_t i = 0; i < bw; i++) inv[i] = (CT)(1.0 / sm[i]);                         \
            for (int64_t d = 0; d < D; d++)                                                      \
                for (int64_t i = 0; i < bw; i++)                                                 \
                    y[d * I + i] = ST((keep ? LD(y[d * I + i]) : EXP(LD(x[d * I + i]) - mx[i])) * inv[i]); \
        }                                                                                        \
    }
static void sm_row_f32_v(const void *x, void *y, int64_t D, bool log) { sm_row_f32(x, y, D, log); }
static void sm_row_f64_v(const void *x, void *y, int64_t D, bool log) { sm_row_f64(x, y, D, log); }
SM_UNIT(f32, float, float, CG_ID, CG_ID, cg_vm_expf, INT64_MAX, sm_row_f32_v)
SM_UNIT(f64, double, double, CG_ID, CG_ID, exp, INT64_MAX, sm_row_f64_v)
SM_UNIT(f16, cg_f16, float, CG_LD_F16, CG_ST_F16, cg_vm_expf, SM_HALF_ROW, sm_row_f16_v)
SM_UNIT(bf16, cg_bf16, float, CG_LD_BF16, CG_ST_BF16, cg_vm_expf, SM_HALF_ROW, sm_row_bf16_v)

static void sm_range(int64_t begin, int64_t end, void *ctx) {
    const sm_args *a = ctx;
    for (int64_t u = begin; u < end; u++) {
        int64_t o = u / a->nblocks, i0 = (u % a->nblocks) * SM_BLOCK;
        int64_t bw = a->inner - i0 < SM_BLOCK ? a->inner - i0 : SM_BLOCK;
        a->unit(a, o, i0, bw);
    }
}

/* ------------------------------------------------------------- fused first-order backward
 * Per unit (as in the forward): s = sum over the dim of g * y (softmax) or of
 * g (log_softmax) in double, then gx = y * (g - s) or g - exp(y) * s. */
typedef struct smb_args {
    const char *g, *y; /* contiguous (outer, D, inner) */
    char *gx;          /* contiguous (outer, D, inner) */
    int64_t D, inner, nblocks;
    bool log;
    void (*unit)(const struct smb_args *a, int64_t o, int64_t i0, int64_t bw);
} smb_args;

#define SMB_TERM(a, gv, yv) ((a)->log ? (double)(gv) : (double)(gv) * (double)(yv))
#define SMB_UNIT(sfx, T, CT, LD, ST, EXP)                                                         \
    static void smb_unit_##sfx(const smb_args *a, int64_t o, int64_t i0, int64_t bw) {            \
        const int64_t D = a->D, I = a->inner;                                                     \
        const T *g = (const T *)a->g + o * D * I + i0, *y = (const T *)a->y + o * D * I + i0;     \
        T *gx = (T *)a->gx + o * D * I + i0;                                                      \
        double acc[SM_BLOCK];                                                                     \
        if (I == 1) {                                                                             \
            double l[SM_LANES] = {0}, s = 0;                                                      \
            int64_t d = 0;                                                                        \
            for (; d + SM_LANES <= D; d += SM_LANES)                                              \
                for (int j = 0; j < SM_LANES; j++) l[j] += SMB_TERM(a, LD(g[d + j]), LD(y[d + j])); \
            for (int w = SM_LANES / 2; w >= 1; w /= 2)                                            \
                for (int j = 0; j < w; j++) l[j] += l[j + w];                                     \
            s = l[0];                                                                             \
            for (; d < D; d++) s += SMB_TERM(a, LD(g[d]), LD(y[d]));                              \
            const CT sc = (CT)s;                                                                  \
            if (a->log)                                                                           \
                for (d = 0; d < D; d++) gx[d] = ST(LD(g[d]) - EXP(LD(y[d])) * sc);                \
            else                                                                                  \
                for (d = 0; d < D; d++) gx[d] = ST(LD(y[d]) * (LD(g[d]) - sc));                   \
            return;                                                                               \
        }                                                                                         \
        for (int64_t i = 0; i < bw; i++) acc[i] = 0;                                              \
        for (int64_t d = 0; d < D; d++)                                                           \
            for (int64_t i = 0; i < bw; i++) acc[i] += SMB_TERM(a, LD(g[d * I + i]), LD(y[d * I + i])); \
        for (int64_t d = 0; d < D; d++)                                                           \
            for (int64_t i = 0; i < bw; i++) {                                                    \
                const CT gv = LD(g[d * I + i]), yv = LD(y[d * I + i]), sc = (CT)acc[i];           \
                gx[d * I + i] = ST(a->log ? gv - EXP(yv) * sc : yv * (gv - sc));                  \
            }                                                                                     \
    }
SMB_UNIT(f32, float, float, CG_ID, CG_ID, cg_vm_expf)
SMB_UNIT(f64, double, double, CG_ID, CG_ID, exp)
SMB_UNIT(f16, cg_f16, float, CG_LD_F16, CG_ST_F16, cg_vm_expf)
SMB_UNIT(bf16, cg_bf16, float, CG_LD_BF16, CG_ST_BF16, cg_vm_expf)

static void smb_range(int64_t begin, int64_t end, void *ctx) {
    const smb_args *a = ctx;
    for (int64_t u = begin; u < end; u++) {
        int64_t o = u / a->nblocks, i0 = (u % a->nblocks) * SM_BLOCK;
        int64_t bw = a->inner - i0 < SM_BLOCK ? a->inner - i0 : SM_BLOCK;
        a->unit(a, o, i0, bw);
    }
}

/* The work units of a contiguous tensor around dim: D (the dim's size), inner,
 * the blocks per outer slice, the unit count and the thread grain; false when
 * the tensor is empty. */
typedef struct sm_split {
    int64_t D, inner, nblocks, units, grain;
} sm_split;
static bool sm_plan(const cg_tensor *t, int64_t dim, sm_split *sp) {
    int64_t outer = 1, D = 1, inner = 1;
    for (int k = 0; k < t->ndim; k++) {
        if (k < dim) outer *= t->shape[k];
        else if (k == dim) D = t->shape[k];
        else inner *= t->shape[k];
    }
    if (outer * D * inner == 0) return false;
    int64_t per_unit = D * (inner < SM_BLOCK ? inner : SM_BLOCK);
    sp->D = D, sp->inner = inner, sp->nblocks = (inner + SM_BLOCK - 1) / SM_BLOCK;
    sp->units = outer * sp->nblocks;
    sp->grain = CG_GRAIN / per_unit > 0 ? CG_GRAIN / per_unit : 1;
    return true;
}

cg_status cg_cpu_softmax(cg_tensor *y, const cg_tensor *x, int64_t dim, bool log) {
    sm_split sp;
    if (!sm_plan(x, dim, &sp)) return CG_OK;
    sm_args a = {.in = cg_tensor_ptr(x), .out = cg_tensor_ptr(y), .D = sp.D, .inner = sp.inner,
                 .nblocks = sp.nblocks, .log = log};
    switch (x->dtype) {
    case CG_DTYPE_F32: a.unit = sm_unit_f32; break;
    case CG_DTYPE_F64: a.unit = sm_unit_f64; break;
    case CG_DTYPE_F16: a.unit = sm_unit_f16; break;
    default: a.unit = sm_unit_bf16; break;
    }
    cg_parallel_for(sp.units, sp.grain, sm_range, &a);
    return CG_OK;
}

cg_status cg_cpu_softmax_backward(cg_tensor *gx, const cg_tensor *g, const cg_tensor *y, int64_t dim, bool log) {
    sm_split sp;
    if (!sm_plan(y, dim, &sp)) return CG_OK;
    smb_args a = {.g = cg_tensor_ptr(g), .y = cg_tensor_ptr(y), .gx = cg_tensor_ptr(gx), .D = sp.D, .inner = sp.inner,
                  .nblocks = sp.nblocks, .log = log};
    switch (y->dtype) {
    case CG_DTYPE_F32: a.unit = smb_unit_f32; break;
    case CG_DTYPE_F64: a.unit = smb_unit_f64; break;
    case CG_DTYPE_F16: a.unit = smb_unit_f16; break;
    default: a.unit = smb_unit_bf16; break;
    }
    cg_parallel_for(sp.units, sp.grain, smb_range, &a);
    return CG_OK;
}
