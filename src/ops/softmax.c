/* softmax.c — softmax and log_softmax along one dim. The forward is one fused,
 * numerically stable kernel (subtract the max, exponentiate, normalise) over
 * the input viewed as (outer, D, inner); the backward formulas are
 *   softmax:     gx = y * (g - sum(g * y, dim, keepdim))
 *   log_softmax: gx = g - exp(y) * sum(g, dim, keepdim)
 * on the saved output: one fused kernel for a first-order backward, cg ops
 * under create_graph so that both are differentiable again. */
#include "unary_internal.h"

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

/* gx from g and the saved output y (same shape and dtype); new reference */
static cg_tensor *sm_backward_fused(cg_tensor *g, cg_tensor *y, int64_t dim, bool log) {
    cg_tensor *gc = cg_contiguous(g), *yc = gc ? cg_contiguous(y) : NULL;
    cg_tensor *gx = yc ? cg_new_output(log ? "log_softmax_backward" : "softmax_backward", y->ndim, y->shape, y->dtype,
                                       y->device)
                       : NULL;
    int64_t outer = 1, D = 1, inner = 1;
    for (int k = 0; k < y->ndim; k++) {
        if (k < dim) outer *= y->shape[k];
        else if (k == dim) D = y->shape[k];
        else inner *= y->shape[k];
    }
    if (gx && !cg_is_meta(gx) && outer * D * inner > 0) {
        smb_args a = {.g = cg_tensor_ptr(gc), .y = cg_tensor_ptr(yc), .gx = cg_tensor_ptr(gx), .D = D, .inner = inner,
                      .nblocks = (inner + SM_BLOCK - 1) / SM_BLOCK, .log = log};
        switch (y->dtype) {
        case CG_DTYPE_F32: a.unit = smb_unit_f32; break;
        case CG_DTYPE_F64: a.unit = smb_unit_f64; break;
        case CG_DTYPE_F16: a.unit = smb_unit_f16; break;
        default: a.unit = smb_unit_bf16; break;
        }
        int64_t per_unit = D * (inner < SM_BLOCK ? inner : SM_BLOCK);
        int64_t grain = CG_GRAIN / per_unit > 0 ? CG_GRAIN / per_unit : 1;
        cg_parallel_for(outer * a.nblocks, grain, smb_range, &a);
    }
    cg_tensor_release(gc);
    cg_tensor_release(yc);
    return gx;
}

/* the composite formulas (create_graph), or the fused kernel (first order) */
static cg_status sm_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin, bool log) {
    if (!cg_node_needs_grad(node, 0)) return CG_OK;
    cg_tensor *y = cg_node_saved(node, 0);
    if (!y) return cg_last_error();
    int64_t dim = node->iattr[0];
    cg_tensor *r;
    if (!cg_is_grad_enabled() && g[0]->dtype == y->dtype &&
        cg_shape_eq(g[0]->ndim, g[0]->shape, y->ndim, y->shape)) {
        r = sm_backward_fused(g[0], y, dim, log);
    } else {
        cg_tmp arena = {.n = 0}, *A_ = &arena;
        r = log ? SUB(g[0], MUL(TK(cg_exp(y)), TK(cg_sum(g[0], 1, &dim, true))))
                : MUL(y, SUB(g[0], TK(cg_sum(MUL(g[0], y), 1, &dim, true))));
        if (r) cg_tensor_retain(r);
        cg_tmp_free(&arena);
    }
    gin[0] = r;
    cg_tensor_release(y);
    return r ? CG_OK : cg_last_error();
}
static cg_status softmax_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    return sm_backward(node, g, gin, false);
}
static cg_status log_softmax_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    return sm_backward(node, g, gin, true);
}

static const cg_op_schema k_softmax = {"softmax", "SoftmaxBackward0", 1, CG_AMP_KEEP, false, false, true};
static const cg_op_schema k_log_softmax = {"log_softmax", "LogSoftmaxBackward0", 1, CG_AMP_KEEP, false, false, true};

static void run_kernel(cg_tensor *xc, cg_tensor *out, int64_t dim, bool log) {
    int64_t outer = 1, D = 1, inner = 1;
    for (int k = 0; k < xc->ndim; k++) {
        if (k < dim) outer *= xc->shape[k];
        else if (k == dim) D = xc->shape[k];
        else inner *= xc->shape[k];
    }
    if (outer * D * inner == 0) return;
    sm_args a = {.in = cg_tensor_ptr(xc), .out = cg_tensor_ptr(out), .D = D, .inner = inner,
                 .nblocks = (inner + SM_BLOCK - 1) / SM_BLOCK, .log = log};
    switch (xc->dtype) {
    case CG_DTYPE_F32: a.unit = sm_unit_f32; break;
    case CG_DTYPE_F64: a.unit = sm_unit_f64; break;
    case CG_DTYPE_F16: a.unit = sm_unit_f16; break;
    default: a.unit = sm_unit_bf16; break;
    }
    int64_t per_unit = D * (inner < SM_BLOCK ? inner : SM_BLOCK);
    int64_t grain = CG_GRAIN / per_unit > 0 ? CG_GRAIN / per_unit : 1;
    cg_parallel_for(outer * a.nblocks, grain, sm_range, &a);
}

static cg_tensor *softmax_body(const cg_op_schema *sc, cg_backward_fn bw, cg_tensor *x, int64_t dim) {
    const char *name = sc->name;
    CG_CHECK(x, CG_ERR_VALUE, "[%s] argument is NULL", name);
    int64_t d;
    if (cg_wrap_dim(name, dim, x->ndim, &d)) return NULL;
    if (!cg_dtype_is_floating(x->dtype)) {
        cg_dtype_unsupported(name, x->dtype); /* NotImplementedError for uint16/32/64, as PyTorch */
        return NULL;
    }
    cg_tensor *in;
    bool owned;
    if (cg_schema_guard(sc, 1, &x, &in, &owned)) return NULL;
    cg_tensor *out = cg_new_output(name, in->ndim, in->shape, in->dtype, in->device);
    if (out && !cg_is_meta(out)) {
        bool prev = cg_set_grad_enabled(false);
        cg_tensor *xc = cg_contiguous(in);
        cg_set_grad_enabled(prev);
        if (xc) run_kernel(xc, out, d, sc == &k_log_softmax);
        else cg_tensor_release(out), out = NULL;
        cg_tensor_release(xc);
    }
    if (out) {
        bool failed;
        cg_node *node = cg_wire_unary_output(sc->node_name, bw, sc, 1, &in, out, 1, &failed);
        if (node) {
            node->iattr[0] = d;
            failed = cg_node_save(node, 0, out, true, 0) != CG_OK;
        }
        if (failed) cg_tensor_release(out), out = NULL;
    }
    if (owned) cg_tensor_release(in);
    return out;
}

/* the call recorded as a profiler event (off the hot path) */
static CG_PROF_COLD cg_tensor *softmax_impl_profiled(const cg_op_schema *sc, cg_backward_fn bw, cg_tensor *x,
                                                     int64_t dim) {
    int64_t ev = cg_prof_begin(sc->name, CG_PROF_OP, 1, &x);
    cg_tensor *r = softmax_body(sc, bw, x, dim);
    cg_prof_end(ev, r);
    return r;
}
static cg_tensor *softmax_impl(const cg_op_schema *sc, cg_backward_fn bw, cg_tensor *x, int64_t dim) {
    if (cg_prof_active()) return softmax_impl_profiled(sc, bw, x, dim);
    return softmax_body(sc, bw, x, dim);
}

cg_tensor *cg_softmax(cg_tensor *x, int64_t dim) { return softmax_impl(&k_softmax, softmax_backward, x, dim); }
cg_tensor *cg_log_softmax(cg_tensor *x, int64_t dim) {
    return softmax_impl(&k_log_softmax, log_softmax_backward, x, dim);
}
