/* reduce_stats.c — statistical reductions on floating dtypes: var / std
 * (with `correction`), logsumexp (max-shifted, stable) and vector norms
 * (any real p, +-inf, 0), plus the private |x|^q op their backward formulas
 * need. Everything accumulates in double; integer inputs are CG_ERR_DTYPE
 * (the Python layer promotes). */
#include "reduce_internal.h"

/* ---------------------------------------------------------------- |x|^q (private, differentiable)
 * p = {q}: a hand row of the op table (loops in src/backend/cpu/elementwise_hand.c) */
static cg_tensor *abspow(cg_tensor *x, double q);

/* d|x|^q/dx = q |x|^(q-1) sgn(x); itself written with abspow, so any order works */
static cg_status abspow_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    double q = node->dattr[0];
    cg_rd_tmp tl = {0};
    cg_tensor *x, *a, *sg, *qs, *t;
    CG_RD_TRY(x, cg_node_saved(node, 0));
    if (q == 0) {
        gin[0] = cg_zeros_like(x);
        goto fail;
    }
    CG_RD_TRY(a, abspow(x, q - 1));
    CG_RD_TRY(sg, cg_rd_sgn(x));
    CG_RD_TRY(qs, cg_rd_scalar(q, x));
    CG_RD_TRY(t, cg_mul(a, sg));
    CG_RD_TRY(t, cg_mul(t, qs));
    gin[0] = cg_mul(g[0], t);
fail:
    cg_rd_free(&tl);
    return gin[0] ? CG_OK : cg_last_error();
}

static const cg_unary_op k_abspow = {
    .id = CG_OP_ABSPOW,
    .schema = {"abs_pow", "AbsPowBackward0", 1, CG_AMP_KEEP, false, true, false},
    .arity = 1, .out_dtype = CG_SAME_DTYPE,
    .dtypes = CG_OP_DTYPES_ABSPOW,
    .backward = abspow_backward,
};
static cg_tensor *abspow(cg_tensor *x, double q) { return cg_unary_forward(&k_abspow, x, &q, 1); }

/* ---------------------------------------------------------------- var / std
 * Two passes in double: the mean, then the sum of squared deviations,
 * divided by max(0, N - correction) (0/0 -> nan, x/0 -> inf, as PyTorch).
 * Contiguous runs keep sixteen accumulators per pass; column folds (Note
 * [Column reductions]) keep the strided order; one whole large reduction sums
 * both passes in fixed chunks (Note [Chunked reductions]). */
#define NO_SQRT(v) (v)
#define VAR_RESULT(ss, n, p) ((n) == 0 ? NAN : (ss) / ((double)(n) - (p)[0] > 0 ? (double)(n) - (p)[0] : 0.0))
/* sum of (x - m)^2 over a run (a cg_rd_run_fn) */
#define SQDEV_RUN(fname, T, LOAD)                                                    \
    static double fname(const char *in, int64_t n, int64_t s, double m) {           \
        double acc = 0.0;                                                            \
        int64_t k = 0;                                                               \
        if (s == (int64_t)sizeof(T)) {                                               \
            const T *x = (const T *)in;                                              \
            double a[16] = {0};                                                      \
            for (; k + 16 <= n; k += 16)                                             \
                for (int j = 0; j < 16; j++) {                                       \
                    double d = (double)LOAD(x[k + j]) - m;                           \
                    a[j] += d * d;                                                   \
                }                                                                    \
            for (int w = 8; w >= 1; w /= 2)                                          \
                for (int j = 0; j < w; j++) a[j] += a[j + w];                        \
            acc = a[0];                                                              \
        }                                                                            \
        for (; k < n; k++) {                                                         \
            double d = (double)LOAD(*(const T *)(in + k * s)) - m;                   \
            acc += d * d;                                                            \
        }                                                                            \
        return acc;                                                                  \
    }
SQDEV_RUN(sqdev_run_f32, float, CG_ID)
SQDEV_RUN(sqdev_run_f64, double, CG_ID)
/* float16: the same sum in the same order, converted in blocks (Note [Half compute]) */
static double sqdev_run_f16(const char *in, int64_t n, int64_t s, double m) {
    double acc = 0.0;
    int64_t k = 0;
    if (s == (int64_t)sizeof(cg_f16)) {
        const cg_f16 *x = (const cg_f16 *)in;
        const int64_t e = n / 16 * 16;
        float xb[CG_HALF_BLOCK];
        double a[16] = {0};
        for (; k < e; k += CG_HALF_BLOCK) {
            const int64_t w = e - k < CG_HALF_BLOCK ? e - k : CG_HALF_BLOCK;
            cg_f16_to_f32_n(xb, x + k, w);
            for (int64_t i = 0; i < w; i += 16)
                for (int j = 0; j < 16; j++) {
                    double d = (double)xb[i + j] - m;
                    a[j] += d * d;
                }
        }
        k = e;
        for (int w = 8; w >= 1; w /= 2)
            for (int j = 0; j < w; j++) a[j] += a[j + w];
        acc = a[0];
    }
    for (; k < n; k++) {
        double d = (double)cg_f16_to_f32(*(const cg_f16 *)(in + k * s)) - m;
        acc += d * d;
    }
    return acc;
}
SQDEV_RUN(sqdev_run_bf16, cg_bf16, CG_LD_BF16)

#define VAR_LOOP(fname, T, OT, STORE, SFX, ROOT)                                                      \
    static void fname(char *out, char *out2, const char *in, int64_t n, int64_t s, const double *p) { \
        (void)out2;                                                                                   \
        double mean = cg_rd_sum_run_##SFX(in, n, s, 0.0) / (double)n;                                 \
        double ss = sqdev_run_##SFX(in, n, s, mean);                                                  \
        *(OT *)out = STORE(ROOT(VAR_RESULT(ss, n, p)));                                               \
    }
#define VAR_COLS(fname, T, OT, LOAD, STORE, ROOT)                                                      \
    static void fname(char *out, const char *in, int64_t rows, int64_t rs, int64_t m, const double *p) { \
        double sm[CG_RD_COLS_BLOCK], ss[CG_RD_COLS_BLOCK];                                              \
        for (int64_t j0 = 0; j0 < m; j0 += CG_RD_COLS_BLOCK) {                                          \
            const int64_t w = m - j0 < CG_RD_COLS_BLOCK ? m - j0 : CG_RD_COLS_BLOCK;                    \
            for (int64_t j = 0; j < w; j++) sm[j] = 0, ss[j] = 0;                                       \
            for (int64_t i = 0; i < rows; i++) {                                                        \
                const T *x = (const T *)(in + i * rs) + j0;                                             \
                for (int64_t j = 0; j < w; j++) sm[j] += (double)LOAD(x[j]);                            \
            }                                                                                           \
            for (int64_t j = 0; j < w; j++) sm[j] /= (double)rows;                                      \
            for (int64_t i = 0; i < rows; i++) {                                                        \
                const T *x = (const T *)(in + i * rs) + j0;                                             \
                for (int64_t j = 0; j < w; j++) {                                                       \
                    double d = (double)LOAD(x[j]) - sm[j];                                              \
                    ss[j] += d * d;                                                                     \
                }                                                                                       \
            }                                                                                           \
            OT *o = (OT *)out + j0;                                                                     \
            for (int64_t j = 0; j < w; j++) o[j] = STORE(ROOT(VAR_RESULT(ss[j], rows, p)));             \
        }                                                                                               \
    }
#define VAR_LOOPS(name, ROOT)                                                          \
    VAR_LOOP(name##_f32, float, float, (float), f32, ROOT)                             \
    VAR_LOOP(name##_f64, double, double, CG_ID, f64, ROOT)                             \
    VAR_LOOP(name##_f16, cg_f16, cg_f16, CG_ST_F16, f16, ROOT)                         \
    VAR_LOOP(name##_bf16, cg_bf16, cg_bf16, CG_ST_BF16, bf16, ROOT)                    \
    VAR_COLS(name##_cols_f32, float, float, CG_ID, (float), ROOT)                      \
    VAR_COLS(name##_cols_f64, double, double, CG_ID, CG_ID, ROOT)                      \
    VAR_COLS(name##_cols_f16, cg_f16, cg_f16, CG_LD_F16, CG_ST_F16, ROOT)              \
    VAR_COLS(name##_cols_bf16, cg_bf16, cg_bf16, CG_LD_BF16, CG_ST_BF16, ROOT)
VAR_LOOPS(var, NO_SQRT)
VAR_LOOPS(std, sqrt)

static bool var_full_impl(cg_dtype dt, char *out, const char *in, int64_t n, int64_t s, const double *p, bool root) {
    cg_rd_run_fn sum = cg_rd_sum_run(dt), sq = dt == CG_DTYPE_F32 ? sqdev_run_f32 : dt == CG_DTYPE_F64 ? sqdev_run_f64
                                                : dt == CG_DTYPE_F16 ? sqdev_run_f16 : sqdev_run_bf16;
    double t, ss;
    if (!sum || !cg_rd_chunked_sum(sum, in, n, s, 0.0, &t) || !cg_rd_chunked_sum(sq, in, n, s, t / (double)n, &ss))
        return false;
    double v = VAR_RESULT(ss, n, p);
    cg_store_f64(out, dt, root ? sqrt(v) : v);
    return true;
}
static bool var_full(cg_dtype dt, char *out, const char *in, int64_t n, int64_t s, const double *p) {
    return var_full_impl(dt, out, in, n, s, p, false);
}
static bool std_full(cg_dtype dt, char *out, const char *in, int64_t n, int64_t s, const double *p) {
    return var_full_impl(dt, out, in, n, s, p, true);
}

/* PyTorch's var_backward: (2 / (N - correction)) * g * (x - mean(x)); over all
 * elements with N - correction <= 0: g * where(x == mean, nan, inf).
 * gu: the output gradient at the input's rank (keepdim shape). */
static cg_tensor *var_grad(cg_node *node, cg_tensor *x, cg_tensor *gu) {
    const cg_tensor_meta *m = &node->input_meta[0];
    uint32_t mask = (uint32_t)node->iattr[0];
    double dof = (double)cg_rd_count(node) - node->dattr[0];
    int64_t dims[CG_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < m->ndim; d++)
        if (mask & (1u << d)) dims[nd++] = d;
    cg_rd_tmp tl = {0};
    cg_tensor *mean, *r = NULL;
    CG_RD_TRY(mean, cg_mean(x, nd, dims, true));
    if (dof <= 0 && cg_rd_is_full(node)) {
        cg_tensor *eq, *nan, *inf, *w;
        CG_RD_TRY(eq, cg_eq(x, mean));
        CG_RD_TRY(nan, cg_rd_scalar(NAN, x));
        CG_RD_TRY(inf, cg_rd_scalar(INFINITY, x));
        CG_RD_TRY(w, cg_where(eq, nan, inf));
        r = cg_mul(gu, w);
    } else {
        cg_tensor *c, *dev, *t;
        CG_RD_TRY(c, cg_rd_scalar(2.0 / dof, x));
        CG_RD_TRY(dev, cg_sub(x, mean));
        CG_RD_TRY(t, cg_mul(gu, c));
        r = cg_mul(t, dev);
    }
fail:
    cg_rd_free(&tl);
    return r;
}

static cg_status var_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    cg_rd_tmp tl = {0};
    cg_tensor *x, *gu;
    CG_RD_TRY(x, cg_node_saved(node, 0));
    CG_RD_TRY(gu, cg_reduce_unsqueeze(node, g[0]));
    gin[0] = var_grad(node, x, gu);
fail:
    cg_rd_free(&tl);
    return gin[0] ? CG_OK : cg_last_error();
}

/* PyTorch's std_backward: var_backward(where(std == 0, 0, g / (2 std))) */
static cg_status std_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    cg_rd_tmp tl = {0};
    cg_tensor *x, *out, *ou, *gu, *zero, *one, *two, *isz, *safe, *den, *q, *gv;
    CG_RD_TRY(x, cg_node_saved(node, 0));
    CG_RD_TRY(out, cg_node_saved(node, 1));
    CG_RD_TRY(ou, cg_reduce_unsqueeze(node, out));
    CG_RD_TRY(gu, cg_reduce_unsqueeze(node, g[0]));
    CG_RD_TRY(zero, cg_rd_scalar(0.0, x));
    CG_RD_TRY(one, cg_rd_scalar(1.0, x));
    CG_RD_TRY(two, cg_rd_scalar(2.0, x));
    CG_RD_TRY(isz, cg_eq(ou, zero));
    CG_RD_TRY(safe, cg_where(isz, one, ou));
    CG_RD_TRY(den, cg_mul(safe, two));
    CG_RD_TRY(q, cg_div(gu, den));
    CG_RD_TRY(gv, cg_where(isz, zero, q));
    gin[0] = var_grad(node, x, gv);
fail:
    cg_rd_free(&tl);
    return gin[0] ? CG_OK : cg_last_error();
}

static const cg_reduce_op k_var = {
    .schema = {"var", "VarBackward0", 1, CG_AMP_KEEP, false, true, false},
    .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(var)},
    .cols = {CG_FLOAT_TABLE(var_cols)},
    .full = var_full,
    .backward = var_backward,
};
static const cg_reduce_op k_std = {
    .schema = {"std", "StdBackward0", 1, CG_AMP_KEEP, false, true, true},
    .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(std)},
    .cols = {CG_FLOAT_TABLE(std_cols)},
    .full = std_full,
    .backward = std_backward,
};

static cg_tensor *var_impl(const cg_reduce_op *op, cg_tensor *x, int ndims, const int64_t *dims, double correction,
                           bool keepdim) {
    uint32_t mask;
    if (cg_rd_mask(op->schema.name, x, ndims, dims, true, &mask)) return NULL;
    CG_CHECK(isfinite(correction), CG_ERR_VALUE, "[%s] correction must be finite, got %g", op->schema.name, correction);
    cg_tensor *out = NULL;
    cg_reduce_forward(op, x, mask, keepdim, &correction, 1, -1, &out, NULL);
    return out;
}
cg_tensor *cg_var(cg_tensor *x, int ndims, const int64_t *dims, double correction, bool keepdim) {
    return var_impl(&k_var, x, ndims, dims, correction, keepdim);
}
cg_tensor *cg_std(cg_tensor *x, int ndims, const int64_t *dims, double correction, bool keepdim) {
    return var_impl(&k_std, x, ndims, dims, correction, keepdim);
}

/* ---------------------------------------------------------------- logsumexp
 * m = max (NaN ignored; set to 0 when infinite, as PyTorch), then
 * log(sum exp(x - m)) + m. Empty -> -inf. */
#define LSE_LOOP(fname, T, OT, LOAD, STORE)                                                           \
    static void fname(char *out, char *out2, const char *in, int64_t n, int64_t s, const double *p) { \
        (void)out2;                                                                                   \
        (void)p;                                                                                      \
        double m = -INFINITY, acc = 0;                                                                \
        CG_RD_FOR(T, double, LOAD, if (x > m) m = x;);                                                \
        if (isinf(m)) m = 0;                                                                          \
        CG_RD_FOR(T, double, LOAD, acc += exp(x - m););                                               \
        *(OT *)out = STORE(log(acc) + m);                                                             \
    }
LSE_LOOP(lse_f32, float, float, CG_ID, CG_ID)
LSE_LOOP(lse_f64, double, double, CG_ID, CG_ID)
LSE_LOOP(lse_f16, cg_f16, cg_f16, CG_LD_F16, CG_ST_F16)
LSE_LOOP(lse_bf16, cg_bf16, cg_bf16, CG_LD_BF16, CG_ST_BF16)

/* gx = g * exp(x - out) */
static cg_status lse_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    cg_rd_tmp tl = {0};
    cg_tensor *x, *out, *ou, *gu, *d, *e;
    CG_RD_TRY(x, cg_node_saved(node, 0));
    CG_RD_TRY(out, cg_node_saved(node, 1));
    CG_RD_TRY(ou, cg_reduce_unsqueeze(node, out));
    CG_RD_TRY(gu, cg_reduce_unsqueeze(node, g[0]));
    CG_RD_TRY(d, cg_sub(x, ou));
    CG_RD_TRY(e, cg_exp(d));
    gin[0] = cg_mul(gu, e);
fail:
    cg_rd_free(&tl);
    return gin[0] ? CG_OK : cg_last_error();
}

static const cg_reduce_op k_logsumexp = {
    .schema = {"logsumexp", "LogsumexpBackward0", 1, CG_AMP_KEEP, false, true, true},
    .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(lse)},
    .backward = lse_backward,
};

cg_tensor *cg_logsumexp(cg_tensor *x, int ndims, const int64_t *dims, bool keepdim) {
    uint32_t mask;
    if (cg_rd_mask("logsumexp", x, ndims, dims, true, &mask)) return NULL;
    cg_tensor *out = NULL;
    cg_reduce_forward(&k_logsumexp, x, mask, keepdim, NULL, 0, -1, &out, NULL);
    return out;
}

/* ---------------------------------------------------------------- norm
 * p = 0: count of nonzeros; 1: sum |x|; 2: sqrt(sum x^2); +-inf: max / min |x|
 * (NaN propagates; no identity: empty is an error); otherwise
 * (sum |x|^p)^(1/p). */
#define NORM_LOOP(fname, T, OT, LOAD, STORE)                                                          \
    static void fname(char *out, char *out2, const char *in, int64_t n, int64_t s, const double *p) { \
        (void)out2;                                                                                   \
        double pp = p[0], acc = 0, r;                                                                 \
        if (pp == 2) {                                                                                \
            CG_RD_FOR(T, double, LOAD, acc += x * x;);                                                \
            r = sqrt(acc);                                                                            \
        } else if (pp == 1) {                                                                         \
            CG_RD_FOR(T, double, LOAD, acc += fabs(x););                                              \
            r = acc;                                                                                  \
        } else if (pp == 0) {                                                                         \
            CG_RD_FOR(T, double, LOAD, acc += (x != 0););                                             \
            r = acc;                                                                                  \
        } else if (isinf(pp)) {                                                                       \
            acc = pp > 0 ? 0.0 : INFINITY;                                                            \
            if (pp > 0) CG_RD_FOR(T, double, LOAD, double a_ = fabs(x);                               \
                                  if (!isnan(acc) && (isnan(a_) || a_ > acc)) acc = a_;);             \
            else CG_RD_FOR(T, double, LOAD, double a_ = fabs(x);                                      \
                           if (!isnan(acc) && (isnan(a_) || a_ < acc)) acc = a_;);                    \
            r = acc;                                                                                  \
        } else {                                                                                      \
            CG_RD_FOR(T, double, LOAD, acc += pow(fabs(x), pp););                                     \
            r = pow(acc, 1.0 / pp);                                                                   \
        }                                                                                             \
        *(OT *)out = STORE(r);                                                                        \
    }
NORM_LOOP(norm_f32, float, float, CG_ID, CG_ID)
NORM_LOOP(norm_f64, double, double, CG_ID, CG_ID)
NORM_LOOP(norm_f16, cg_f16, cg_f16, CG_LD_F16, CG_ST_F16)
NORM_LOOP(norm_bf16, cg_bf16, cg_bf16, CG_LD_BF16, CG_ST_BF16)

/* PyTorch's norm_backward, with n = norm at the input's rank:
 *   p = 0: zero;  p = 1: sgn(x) g;  p = 2: g x / n (0 where n == 0);
 *   +-inf: sgn(x) (g / count) mask, mask = (|x| == n) | isnan(|x|);
 *   p < 1: sgn(x) |x|^(p-1) (0 at x == 0) g n^(1-p);
 *   p < 2: sgn(x) |x|^(p-1) g / n^(p-1)  (0 where n == 0);
 *   else:  x |x|^(p-2) g / n^(p-1)       (0 where n == 0).
 * Masked divisions use a safe denominator so that no NaN leaks into the
 * higher-order gradients through the unselected branch. */
static cg_status norm_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    double p = node->dattr[0];
    const cg_tensor_meta *m = &node->input_meta[0];
    if (p == 0) return (gin[0] = cg_zeros(m->ndim, m->shape, g[0]->dtype, g[0]->device)) ? CG_OK : cg_last_error();
    cg_rd_tmp tl = {0};
    cg_tensor *x, *nrm, *nu, *gu, *sg, *zero, *one, *nz, *safe, *t, *u;
    CG_RD_TRY(x, cg_node_saved(node, 0));
    CG_RD_TRY(gu, cg_reduce_unsqueeze(node, g[0]));
    CG_RD_TRY(sg, cg_rd_sgn(x));
    if (p == 1) {
        gin[0] = cg_mul(sg, gu);
        goto fail;
    }
    CG_RD_TRY(nrm, cg_node_saved(node, 1));
    CG_RD_TRY(nu, cg_reduce_unsqueeze(node, nrm));
    CG_RD_TRY(zero, cg_rd_scalar(0.0, x));
    CG_RD_TRY(one, cg_rd_scalar(1.0, x));
    CG_RD_TRY(nz, cg_eq(nu, zero));
    CG_RD_TRY(safe, cg_where(nz, one, nu));
    if (isinf(p)) {
        cg_tensor *ax, *mask, *isn, *cnt, *maskf;
        CG_RD_TRY(ax, cg_mul(x, sg));
        CG_RD_TRY(mask, cg_eq(ax, nu));
        CG_RD_TRY(isn, cg_isnan(ax));
        CG_RD_TRY(mask, cg_add(mask, isn)); /* logical or */
        CG_RD_TRY(cnt, cg_rd_mask_count(node, mask, x->dtype));
        CG_RD_TRY(maskf, cg_to_dtype(mask, x->dtype));
        CG_RD_TRY(t, cg_div(gu, cnt));
        CG_RD_TRY(t, cg_mul(t, maskf));
        gin[0] = cg_mul(sg, t);
    } else if (p == 2) {
        CG_RD_TRY(t, cg_div(x, safe));
        CG_RD_TRY(t, cg_where(nz, zero, t));
        gin[0] = cg_mul(gu, t);
    } else if (p < 1) {
        cg_tensor *xz, *xs;
        CG_RD_TRY(xz, cg_eq(x, zero));
        CG_RD_TRY(xs, cg_where(xz, one, x));
        CG_RD_TRY(t, abspow(xs, p - 1));
        CG_RD_TRY(t, cg_where(xz, zero, t));
        CG_RD_TRY(t, cg_mul(sg, t));
        CG_RD_TRY(u, abspow(nu, 1 - p));
        CG_RD_TRY(u, cg_mul(gu, u));
        gin[0] = cg_mul(t, u);
    } else {
        if (p < 2) {
            CG_RD_TRY(t, abspow(x, p - 1));
            CG_RD_TRY(t, cg_mul(sg, t));
        } else {
            CG_RD_TRY(t, abspow(x, p - 2));
            CG_RD_TRY(t, cg_mul(x, t));
        }
        CG_RD_TRY(u, abspow(safe, p - 1));
        CG_RD_TRY(u, cg_div(gu, u));
        CG_RD_TRY(u, cg_where(nz, zero, u));
        gin[0] = cg_mul(t, u);
    }
fail:
    cg_rd_free(&tl);
    return gin[0] ? CG_OK : cg_last_error();
}

static const cg_reduce_op k_norm = {
    .schema = {"norm", "NormBackward1", 1, CG_AMP_KEEP, false, true, true},
    .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(norm)},
    .backward = norm_backward,
};
/* +-inf norms have no identity: reducing zero elements is an error */
static const cg_reduce_op k_norm_inf = {
    .schema = {"norm", "NormBackward1", 1, CG_AMP_KEEP, false, true, true},
    .out_dtype = CG_SAME_DTYPE,
    .empty_error = true,
    .cpu = {CG_FLOAT_TABLE(norm)},
    .backward = norm_backward,
};

cg_tensor *cg_norm(cg_tensor *x, double p, int ndims, const int64_t *dims, bool keepdim) {
    uint32_t mask;
    if (cg_rd_mask("norm", x, ndims, dims, true, &mask)) return NULL;
    CG_CHECK(!isnan(p), CG_ERR_VALUE, "[norm] p must not be nan");
    cg_tensor *out = NULL;
    cg_reduce_forward(isinf(p) ? &k_norm_inf : &k_norm, x, mask, keepdim, &p, 1, -1, &out, NULL);
    return out;
}
