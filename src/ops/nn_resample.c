/* nn_resample.c — pad (constant / reflect / replicate / circular),
 * interpolate (nearest, linear / bilinear / trilinear, bicubic) and
 * pixel_shuffle / pixel_unshuffle.
 *
 * Note [Index-map resampling]: every mode but constant padding maps each
 * output position along a dim to one or a few input positions with fixed
 * weights. We build those maps (int64 index vectors and weight vectors) and
 * apply them with index_select and mul / add, one dim at a time (all these
 * resamplers are separable). The gradients are then index_select's (an
 * accumulating index_put), so reflect / replicate backward accumulates and
 * every gradient is differentiable again. Constant padding is narrow + cat
 * with constant blocks. Pixel shuffles are reshape + permute. uint8 bilinear /
 * bicubic (plain and antialiased) run PyTorch's fixed-point passes instead
 * (Note [uint8 resampling]). */
#include "nn_internal.h"

#include <string.h>

/* A 1-D int64 tensor of n values on dev (new reference). */
static cg_tensor *index_vec(const int64_t *v, int64_t n, cg_device dev) {
    cg_tensor *t = cg_from_data(v, 1, &n, CG_DTYPE_I64);
    if (!t || dev.type == CG_DEVICE_CPU) return t;
    cg_tensor *m = cg_to_device(t, dev);
    cg_tensor_release(t);
    return m;
}

/* n weights laid along dim d of an nd-dim tensor: shape (n, 1, ..., 1) with
 * nd - 1 - d trailing ones, dtype / device of like (new reference). */
static cg_tensor *weight_vec(const double *w, int64_t n, int nd, int d, cg_tensor *like) {
    int64_t sh[CG_MAX_DIMS];
    int r = nd - d;
    sh[0] = n;
    for (int k = 1; k < r; k++) sh[k] = 1;
    cg_tensor *t = cg_from_data(w, r, sh, CG_DTYPE_F64);
    if (!t) return NULL;
    cg_tensor *c = cg_to_dtype(t, like->dtype);
    cg_tensor_release(t);
    if (!c || like->device.type == CG_DEVICE_CPU) return c;
    cg_tensor *m = cg_to_device(c, like->device);
    cg_tensor_release(c);
    return m;
}

static cg_tensor *select_along(cg_tensor *x, int d, const int64_t *idx, int64_t n) {
    cg_tensor *iv = index_vec(idx, n, x->device);
    cg_tensor *r = iv ? cg_index_select(x, d, iv) : NULL;
    cg_tensor_release(iv);
    return r;
}

/* ------------------------------------------------------------- pad */

static cg_tensor *pad_constant_dim(cg_tensor *x, int d, int64_t l, int64_t r, double value) {
    NN_ARENA;
    cg_tensor *y = x;
    if (l < 0) y = TK(cg_narrow(y, d, -l, y->shape[d] + l));
    if (r < 0 && y) y = TK(cg_narrow(y, d, 0, y->shape[d] + r));
    if (y && (l > 0 || r > 0)) {
        cg_tensor *parts[3];
        int np = 0;
        int64_t sh[CG_MAX_DIMS];
        memcpy(sh, y->shape, sizeof(int64_t) * (size_t)y->ndim);
        if (l > 0) sh[d] = l, parts[np++] = TK(cg_full(y->ndim, sh, value, y->dtype, y->device));
        parts[np++] = y;
        if (r > 0) sh[d] = r, parts[np++] = TK(cg_full(y->ndim, sh, value, y->dtype, y->device));
        y = A_->failed ? NULL : TK(cg_cat(np, parts, d));
    }
    return nn_finish(A_, y);
}

/* Input position of output position i (i - l before mapping) along a dim of
 * size n, for the non-constant modes. */
static int64_t pad_source(cg_pad_mode mode, int64_t i, int64_t n) {
    switch (mode) {
    case CG_PAD_REFLECT:
        if (i < 0) i = -i;
        if (i >= n) i = 2 * (n - 1) - i;
        return i;
    case CG_PAD_REPLICATE: return i < 0 ? 0 : (i >= n ? n - 1 : i);
    default: return ((i % n) + n) % n;
    }
}

CG_PROF_FN(cg_tensor *, cg_pad, "pad", (cg_tensor *input, int npad, const int64_t *pads, cg_pad_mode mode,
           double value), (input, npad, pads, mode, value), input) {
    const char *op = "pad";
    static const char *names[] = {"constant", "reflect", "replicate", "circular"};
    CG_CHECK(input, CG_ERR_VALUE, "[%s] input is NULL", op);
    CG_CHECK(mode >= CG_PAD_CONSTANT && mode <= CG_PAD_CIRCULAR, CG_ERR_VALUE, "[%s] invalid mode %d", op, (int)mode);
    CG_CHECK(npad >= 0 && npad % 2 == 0 && (npad == 0 || pads), CG_ERR_VALUE,
             "[%s] padding length must be even (a (left, right) pair per dim), got %d", op, npad);
    CG_CHECK(npad / 2 <= input->ndim, CG_ERR_SHAPE,
             "[%s] padding length %d is too large for an input with %d dims", op, npad, input->ndim);
    char b[CG_SHAPE_STR];
    for (int k = 0; k < npad / 2; k++) {
        int d = input->ndim - 1 - k;
        int64_t n = input->shape[d], l = pads[2 * k], r = pads[2 * k + 1], nl, nr, nlr;
        CG_CHECK(cg_add_ok(n, l, &nl) && cg_add_ok(n, r, &nr) && cg_add_ok(nl, r, &nlr), CG_ERR_SHAPE,
                 "[%s] padding (%lld, %lld) at dim %d of input %s: the padded size overflows int64", op,
                 (long long)l, (long long)r, d, cg_shape_str(b, input->ndim, input->shape));
        CG_CHECK(nl >= 0 && nr >= 0 && nlr >= 0, CG_ERR_SHAPE,
                 "[%s] padding (%lld, %lld) at dim %d of input %s gives a negative size", op, (long long)l,
                 (long long)r, d, cg_shape_str(b, input->ndim, input->shape));
        if (mode == CG_PAD_REFLECT)
            CG_CHECK(l < n && r < n, CG_ERR_VALUE,
                     "[%s] reflect: padding size should be less than the corresponding input dimension, but got "
                     "padding (%lld, %lld) at dim %d of input %s", op, (long long)l, (long long)r, d,
                     cg_shape_str(b, input->ndim, input->shape));
        if (mode == CG_PAD_CIRCULAR)
            CG_CHECK(l <= n && r <= n, CG_ERR_VALUE,
                     "[%s] circular: padding (%lld, %lld) at dim %d must not exceed the input size %lld", op,
                     (long long)l, (long long)r, d, (long long)n);
        if (mode != CG_PAD_CONSTANT && (l > 0 || r > 0))
            CG_CHECK(n > 0, CG_ERR_VALUE, "[%s] %s padding of an empty dim %d of input %s", op, names[mode], d,
                     cg_shape_str(b, input->ndim, input->shape));
    }
    cg_tensor *x = input;
    cg_tensor_retain(x);
    bool changed = false;
    for (int k = 0; k < npad / 2 && x; k++) {
        int d = input->ndim - 1 - k;
        int64_t n = x->shape[d], l = pads[2 * k], r = pads[2 * k + 1];
        if (l == 0 && r == 0) continue;
        cg_tensor *y;
        if (mode == CG_PAD_CONSTANT) y = pad_constant_dim(x, d, l, r, value);
        else {
            int64_t m = n + l + r;
            int64_t *idx = cg_malloc_n(op, m, sizeof(int64_t));
            if (!idx) {
                y = NULL;
            } else {
                for (int64_t i = 0; i < m; i++) idx[i] = pad_source(mode, i - l, n);
                y = select_along(x, d, idx, m);
                free(idx);
            }
        }
        cg_tensor_release(x);
        x = y;
        changed = true;
    }
    if (x && !changed) {
        cg_tensor *c = cg_clone(x);
        cg_tensor_release(x);
        x = c;
    }
    return x;
}

/* ------------------------------------------------------------- interpolate */

/* PyTorch's area_pixel_compute_scale: input / output coordinate ratio. */
static double interp_scale(int64_t in, int64_t out, bool align_corners, const double *sf) {
    if (align_corners) return out > 1 ? (double)(in - 1) / (double)(out - 1) : 0.0;
    return sf ? 1.0 / *sf : (double)in / (double)out;
}

/* One spatial dim d of x resampled to `out` positions (new reference). */
static cg_tensor *interp_dim(cg_tensor *x, int d, int64_t out, cg_interp_mode mode, bool align_corners,
                             const double *sf) {
    int64_t in = x->shape[d];
    double sc = interp_scale(in, out, align_corners, sf);
    int taps = mode == CG_INTERP_NEAREST ? 1 : mode == CG_INTERP_LINEAR ? 2 : 4;
    int64_t *idx = cg_malloc_n("interpolate", out, 4 * sizeof(int64_t));
    double *w = idx ? cg_malloc_n("interpolate", out, 4 * sizeof(double)) : NULL;
    if (!idx || !w) {
        free(idx), free(w);
        return NULL;
    }
    for (int64_t i = 0; i < out; i++) {
        if (mode == CG_INTERP_NEAREST) { /* floor(i * scale) in float, as PyTorch */
            float fs = (float)(sf ? 1.0 / *sf : (double)in / (double)out);
            int64_t s = (int64_t)floorf((float)i * fs);
            idx[i] = s < in - 1 ? s : in - 1;
            w[i] = 1.0;
        } else if (mode == CG_INTERP_LINEAR) {
            double src = align_corners ? sc * (double)i : sc * ((double)i + 0.5) - 0.5;
            if (src < 0) src = 0;
            int64_t i0 = (int64_t)src;
            if (i0 > in - 1) i0 = in - 1;
            int64_t i1 = i0 + (i0 < in - 1 ? 1 : 0);
            double l1 = src - (double)i0;
            idx[i] = i0, idx[out + i] = i1;
            w[i] = 1.0 - l1, w[out + i] = l1;
        } else { /* cubic convolution, A = -0.75, border indices clamped */
            const double A = -0.75;
            double src = align_corners ? sc * (double)i : sc * ((double)i + 0.5) - 0.5;
            double fl = floor(src), t = src - fl;
            double x1 = t, x2 = 1.0 - t;
            double c[4] = {((A * (x1 + 1) - 5 * A) * (x1 + 1) + 8 * A) * (x1 + 1) - 4 * A,
                           ((A + 2) * x1 - (A + 3)) * x1 * x1 + 1, ((A + 2) * x2 - (A + 3)) * x2 * x2 + 1,
                           ((A * (x2 + 1) - 5 * A) * (x2 + 1) + 8 * A) * (x2 + 1) - 4 * A};
            for (int k = 0; k < 4; k++) {
                int64_t j = (int64_t)fl - 1 + k;
                idx[k * out + i] = j < 0 ? 0 : (j > in - 1 ? in - 1 : j);
                w[k * out + i] = c[k];
            }
        }
    }
    NN_ARENA;
    cg_tensor *acc = NULL;
    for (int k = 0; k < taps && !A_->failed; k++) {
        cg_tensor *s = TK(select_along(x, d, idx + k * out, out));
        if (mode != CG_INTERP_NEAREST) s = MUL(s, TK(weight_vec(w + k * out, out, x->ndim, d, x)));
        acc = acc ? ADD(acc, s) : s;
    }
    free(idx), free(w);
    return nn_finish(A_, acc);
}

/* Note [uint8 resampling]: PyTorch resamples uint8 bilinear / bicubic (4-D
 * input, antialias or not) with separable fixed-point passes, and cgrad
 * computes the same values:
 *  - the width (innermost dim) first, then the height; a dim whose size does
 *    not change is skipped (an input of the output's shape is copied), and the
 *    intermediate is rounded to uint8;
 *  - per dim, in double: scale = align_corners ? (in-1)/(out-1) (0 for out 1)
 *    : 1/scale_factor when one is given, else in/out. Output i reads count[i]
 *    consecutive inputs from start[i] with weights w[i][j]:
 *      antialias (PIL's rule): support = (1 bilinear, 2 bicubic) * max(scale,
 *      1), K = 2 ceil(support) + 1 taps at most, center = scale (i + 0.5),
 *      start = max(trunc(center - support + 0.5), 0), count = min(trunc(center
 *      + support + 0.5), in) - start (clamped to [0, K]), w_j = filter((start
 *      + j - center + 0.5) / max(scale, 1)), normalised by their sum (when it
 *      is not 0); bicubic's filter is Keys' cubic with a = -0.5;
 *      otherwise: the float path's source index (align_corners ? scale i :
 *      scale (i + 0.5) - 0.5, the latter clamped at 0 for bilinear), its floor
 *      taken in float (floorf) and capped at in - 1, lambda = src - floor in
 *      [0, 1]; K = 2 or 4 taps from floor - K/2 + 1, each with filter(j + 1 -
 *      K/2 - lambda) (a = -0.75), where taps before the first input add into
 *      the first weight and taps past the last add into the last one;
 *  - precision: the largest weight seen while building the weights (running
 *    sums included), wmax, sets prec = the first p < 22 with trunc(0.5 + wmax
 *    2^(p+1)) >= 2^15 (22 when none); weights become round-half-away(w 2^prec)
 *    as int16, and an output is clamp((2^(prec-1) + sum x w) >> prec, 0, 255)
 *    summed in int32.
 * PyTorch runs this as an AVX2 kernel for C <= 4 and as a generic loop
 * otherwise (or without AVX2); both compute the values above except in one
 * case: the generic loop's height pass uses the first output row's taps for
 * every row when the width is 1 (its inner loop then runs along the height),
 * which is a PyTorch bug (its float antialias path shares it). cgrad gives
 * the values above there (those of the AVX2 kernel), for any C, layout or ISA. */

typedef struct u8_taps {
    int64_t *start, *count; /* (out,) */
    int16_t *w;             /* (out, K) */
    int64_t K;
    unsigned prec;
} u8_taps;

static double u8_filter(double x, bool cubic, double a) {
    x = fabs(x);
    if (!cubic) return x < 1.0 ? 1.0 - x : 0.0;
    if (x < 1.0) return ((a + 2) * x - (a + 3)) * x * x + 1;
    if (x < 2.0) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
    return 0.0;
}

static void u8_taps_free(u8_taps *t) { free(t->start), free(t->count), free(t->w); }

/* The taps of one dim (Note [uint8 resampling]); CG_ERR_OOM on failure. */
static cg_status u8_taps_build(u8_taps *t, int64_t in, int64_t out, bool cubic, bool aa, bool align_corners,
                               const double *sf) {
    const char *op = "interpolate";
    double scale = align_corners ? (out > 1 ? (double)(in - 1) / (double)(out - 1) : 0.0)
                                 : (sf && *sf > 0 ? 1.0 / *sf : (double)in / (double)out);
    double half = cubic ? 2.0 : 1.0, support = aa && scale >= 1.0 ? half * scale : half;
    double K_ = aa ? ceil(support) * 2 + 1 : 2 * half;
    CG_CHECK_S(K_ < 1e9, CG_ERR_VALUE, "[%s] antialias: a scale of %g needs too many taps", op, scale);
    int64_t K = (int64_t)K_;
    t->K = K;
    t->start = cg_malloc_n(op, out, sizeof(int64_t));
    t->count = t->start ? cg_malloc_n(op, out, sizeof(int64_t)) : NULL;
    double *wf = t->count ? cg_malloc_n(op, cg_count_axpb(out, K, 0), sizeof(double)) : NULL;
    t->w = wf ? cg_malloc_n(op, cg_count_axpb(out, K, 0), sizeof(int16_t)) : NULL;
    if (!t->w) {
        free(wf);
        u8_taps_free(t);
        return cg_last_error();
    }
    double wmax = 0.0;
    for (int64_t i = 0; i < out; i++) {
        double *w = wf + i * K;
        for (int64_t j = 0; j < K; j++) w[j] = 0.0;
        int64_t lo, n;
        if (aa) {
            double center = scale * ((double)i + 0.5), inv = scale >= 1.0 ? 1.0 / scale : 1.0, total = 0.0;
            lo = (int64_t)(center - support + 0.5);
            if (lo < 0) lo = 0;
            int64_t hi = (int64_t)(center + support + 0.5);
            n = (hi < in ? hi : in) - lo;
            n = n < 0 ? 0 : (n > K ? K : n);
            for (int64_t j = 0; j < n; j++) total += w[j] = u8_filter(((double)(j + lo) - center + 0.5) * inv, cubic, -0.5);
            if (total != 0.0)
                for (int64_t j = 0; j < n; j++) w[j] /= total, wmax = fmax(wmax, w[j]);
        } else {
            double src = align_corners ? scale * (double)i : scale * ((double)i + 0.5) - 0.5;
            if (!cubic && !align_corners && src < 0) src = 0;
            int64_t fl = (int64_t)floorf((float)src);
            if (fl > in - 1) fl = in - 1;
            double lambda = fmin(fmax(src - (double)fl, 0.0), 1.0);
            int64_t sup = K / 2, umin = fl - sup + 1, umax = fl + sup + 1;
            lo = umin > 0 ? umin : 0;
            n = (umax < in ? umax : in) - lo;
            n = n < 0 ? 0 : (n > K ? K : n);
            int64_t at = 0;
            for (int64_t j = 0; j < K; j++) { /* out-of-range taps fold into the first / last weight */
                double v = u8_filter((double)(j + 1 - sup) - lambda, cubic, -0.75);
                if (umin + j <= 0) at = 0;
                else if (umin + j >= in - 1) at = n - 1;
                w[at] += v;
                wmax = fmax(wmax, w[at]);
                at++;
            }
        }
        t->start[i] = lo, t->count[i] = n;
    }
    unsigned p = 0;
    while (p < 22 && (int64_t)(0.5 + wmax * (double)(1 << (p + 1))) < (1 << 15)) p++;
    t->prec = p;
    for (int64_t i = 0; i < out * K; i++) {
        double v = wf[i] * (double)(1 << p);
        t->w[i] = (int16_t)(v < 0 ? (int64_t)(-0.5 + v) : (int64_t)(0.5 + v));
    }
    free(wf);
    CG_CHECK_S(p > 0, CG_ERR_VALUE, "[%s] uint8 weights without precision (largest weight %g)", op, wmax);
    return CG_OK;
}

/* One uint8 pass along dim d of contiguous x (new reference). */
static cg_tensor *u8_pass(cg_tensor *x, int d, int64_t out, bool cubic, bool aa, bool align_corners,
                          const double *sf) {
    const char *op = "interpolate";
    int64_t sh[CG_MAX_DIMS], P = 1, R = 1, In = x->shape[d];
    for (int k = 0; k < x->ndim; k++) sh[k] = x->shape[k], P *= k < d ? sh[k] : 1, R *= k > d ? sh[k] : 1;
    sh[d] = out;
    cg_tensor *y = cg_tensor_new(op, x->ndim, sh, x->dtype, x->device);
    if (!y || cg_tensor_numel(y) == 0) return y;
    u8_taps t = {0};
    cg_status st = u8_taps_build(&t, In, out, cubic, aa, align_corners, sf);
    if (!st) CG_RUN_KERNEL(st, op, y->device, resample_u8, y, x, P, In, out, R, t.start, t.count, t.w, t.K, t.prec);
    u8_taps_free(&t);
    if (st) cg_tensor_release(y), y = NULL;
    return y;
}

/* uint8 bilinear / bicubic of a 4-D input (Note [uint8 resampling]; new reference). */
static cg_tensor *interp_u8(cg_tensor *input, const int64_t *out, bool cubic, bool aa, bool align_corners,
                            const double *sf) {
    if (input->shape[2] == out[0] && input->shape[3] == out[1]) return cg_clone(input);
    cg_tensor *x = cg_contiguous(input);
    for (int d = 3; d >= 2 && x; d--) {
        if (x->shape[d] == out[d - 2]) continue;
        cg_tensor *y = u8_pass(x, d, out[d - 2], cubic, aa, align_corners, sf ? &sf[d - 2] : NULL);
        cg_tensor_release(x);
        x = y;
    }
    return x;
}

/* out <- the output sizes of interpolate (validated). */
static cg_status interp_sizes(const char *op, const cg_tensor *input, int ns, const int64_t *size,
                              const double *scale_factors, int64_t *out) {
    char b[CG_SHAPE_STR];
    CG_CHECK_S((size == NULL) != (scale_factors == NULL), CG_ERR_VALUE,
               "[%s] exactly one of size and scale_factors must be given", op);
    for (int k = 0; k < ns; k++) {
        int64_t in = input->shape[k + 2];
        if (size) {
            CG_CHECK_S(size[k] > 0, CG_ERR_VALUE, "[%s] output size must be positive, got %lld", op,
                       (long long)size[k]);
            out[k] = size[k];
        } else {
            CG_CHECK_S(scale_factors[k] > 0 && isfinite(scale_factors[k]), CG_ERR_VALUE,
                       "[%s] scale factors must be positive, got %g", op, scale_factors[k]);
            double o = floor((double)in * scale_factors[k]);
            CG_CHECK_S(o < 9223372036854775807.0, CG_ERR_VALUE,
                       "[%s] input size %lld with scale factor %g gives an output size beyond int64", op,
                       (long long)in, scale_factors[k]);
            out[k] = (int64_t)o;
            CG_CHECK_S(out[k] > 0, CG_ERR_VALUE, "[%s] input size %lld with scale factor %g gives an empty output",
                       op, (long long)in, scale_factors[k]);
        }
        CG_CHECK_S(in > 0, CG_ERR_VALUE, "[%s] input %s has an empty spatial dim", op,
                   cg_shape_str(b, input->ndim, input->shape));
    }
    return CG_OK;
}

CG_PROF_FN(cg_tensor *, cg_interpolate, "interpolate", (cg_tensor *input, cg_interp_mode mode, const int64_t *size,
           const double *scale_factors, bool align_corners), (input, mode, size, scale_factors, align_corners), input) {
    const char *op = "interpolate";
    CG_CHECK(input, CG_ERR_VALUE, "[%s] input is NULL", op);
    char b[CG_SHAPE_STR];
    int ns = input->ndim - 2;
    CG_CHECK(ns >= 1 && ns <= 3, CG_ERR_SHAPE, "[%s] expected an input (N, C, *spatial) with 1 to 3 spatial dims, got %s",
             op, cg_shape_str(b, input->ndim, input->shape));
    CG_CHECK(mode >= CG_INTERP_NEAREST && mode <= CG_INTERP_BICUBIC, CG_ERR_VALUE, "[%s] invalid mode %d", op,
             (int)mode);
    CG_CHECK(mode != CG_INTERP_BICUBIC || ns == 2, CG_ERR_SHAPE, "[%s] bicubic needs a 4-D input, got %s", op,
             cg_shape_str(b, input->ndim, input->shape));
    CG_CHECK(mode != CG_INTERP_NEAREST || !align_corners, CG_ERR_VALUE,
             "[%s] align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | "
             "trilinear", op);
    bool u8 = input->dtype == CG_DTYPE_U8 && mode != CG_INTERP_NEAREST;
    CG_CHECK(!u8 || ns == 2, CG_ERR_DTYPE, "[%s] %s: not supported for dtype uint8 (bilinear and bicubic are)", op,
             ns == 1 ? "linear" : "trilinear");
    if (mode != CG_INTERP_NEAREST && !u8 && nn_check_float(op, "input", input)) return NULL;
    int64_t out[3];
    if (interp_sizes(op, input, ns, size, scale_factors, out)) return NULL;
    if (u8) return interp_u8(input, out, mode == CG_INTERP_BICUBIC, false, align_corners, scale_factors);
    cg_tensor *x = input;
    cg_tensor_retain(x);
    for (int k = 0; k < ns && x; k++) {
        cg_tensor *y = interp_dim(x, k + 2, out[k], mode, align_corners, scale_factors ? &scale_factors[k] : NULL);
        cg_tensor_release(x);
        x = y;
    }
    return x;
}

CG_PROF_FN(cg_tensor *, cg_interpolate_aa, "interpolate", (cg_tensor *input, cg_interp_mode mode, const int64_t *size,
           const double *scale_factors, bool align_corners), (input, mode, size, scale_factors, align_corners), input) {
    const char *op = "interpolate";
    CG_CHECK(input, CG_ERR_VALUE, "[%s] input is NULL", op);
    char b[CG_SHAPE_STR];
    CG_CHECK(input->ndim == 4, CG_ERR_SHAPE, "[%s] antialias needs a 4-D input (N, C, H, W), got %s", op,
             cg_shape_str(b, input->ndim, input->shape));
    CG_CHECK(mode == CG_INTERP_LINEAR || mode == CG_INTERP_BICUBIC, CG_ERR_VALUE,
             "[%s] antialias is for bilinear and bicubic, got mode %d", op, (int)mode);
    CG_CHECK(input->dtype == CG_DTYPE_U8, CG_ERR_DTYPE,
             "[%s] antialias: not supported for dtype %s here (uint8; the Python API resamples floating inputs "
             "with weight matrices)", op, cg_dtype_name(input->dtype));
    int64_t out[2];
    if (interp_sizes(op, input, 2, size, scale_factors, out)) return NULL;
    return interp_u8(input, out, mode == CG_INTERP_BICUBIC, true, align_corners, scale_factors);
}

/* ------------------------------------------------------------- pixel shuffle */

static cg_tensor *reshape_permute_reshape(cg_tensor *x, int n1, const int64_t *s1, const int64_t *perm, int n2,
                                          const int64_t *s2) {
    NN_ARENA;
    cg_tensor *a = TK(cg_reshape(x, n1, s1));
    cg_tensor *p = TK(a ? cg_permute(a, perm) : NULL);
    cg_tensor *r = TK(p ? cg_reshape(p, n2, s2) : NULL);
    return nn_finish(A_, r);
}

CG_PROF_FN(cg_tensor *, cg_pixel_shuffle, "pixel_shuffle", (cg_tensor *input, int64_t r), (input, r), input) {
    const char *op = "pixel_shuffle";
    CG_CHECK(input, CG_ERR_VALUE, "[%s] input is NULL", op);
    char b[CG_SHAPE_STR];
    int nd = input->ndim;
    CG_CHECK(nd >= 3 && nd + 3 <= CG_MAX_DIMS, CG_ERR_SHAPE, "[%s] expected an input (*, C, H, W), got %s", op,
             cg_shape_str(b, nd, input->shape));
    CG_CHECK(r > 0, CG_ERR_VALUE, "[%s] upscale_factor must be positive, got %lld", op, (long long)r);
    int64_t C = input->shape[nd - 3], H = input->shape[nd - 2], W = input->shape[nd - 1], rr, Hr, Wr;
    CG_CHECK(cg_mul_ok(r, r, &rr), CG_ERR_VALUE,
             "[%s] upscale_factor^2 overflows int64 (upscale_factor %lld); channels (%lld) must be divisible by it", op,
             (long long)r, (long long)C);
    CG_CHECK(C % rr == 0, CG_ERR_VALUE, "[%s] channels (%lld) must be divisible by upscale_factor^2 (%lld)", op,
             (long long)C, (long long)rr);
    CG_CHECK(cg_mul_ok(H, r, &Hr) && cg_mul_ok(W, r, &Wr), CG_ERR_VALUE,
             "[%s] output size (%lld x %lld, upscale_factor %lld) overflows int64", op, (long long)H, (long long)W,
             (long long)r);
    int lead = nd - 3;
    int64_t s1[CG_MAX_DIMS], s2[CG_MAX_DIMS], perm[CG_MAX_DIMS];
    for (int k = 0; k < lead; k++) s1[k] = s2[k] = input->shape[k], perm[k] = k;
    int64_t t1[5] = {C / rr, r, r, H, W}, p1[5] = {0, 3, 1, 4, 2}, t2[3] = {C / rr, Hr, Wr};
    for (int k = 0; k < 5; k++) s1[lead + k] = t1[k], perm[lead + k] = lead + p1[k];
    for (int k = 0; k < 3; k++) s2[lead + k] = t2[k];
    return reshape_permute_reshape(input, lead + 5, s1, perm, lead + 3, s2);
}

CG_PROF_FN(cg_tensor *, cg_pixel_unshuffle, "pixel_unshuffle", (cg_tensor *input, int64_t r), (input, r), input) {
    const char *op = "pixel_unshuffle";
    CG_CHECK(input, CG_ERR_VALUE, "[%s] input is NULL", op);
    char b[CG_SHAPE_STR];
    int nd = input->ndim;
    CG_CHECK(nd >= 3 && nd + 3 <= CG_MAX_DIMS, CG_ERR_SHAPE, "[%s] expected an input (*, C, H, W), got %s", op,
             cg_shape_str(b, nd, input->shape));
    CG_CHECK(r > 0, CG_ERR_VALUE, "[%s] downscale_factor must be positive, got %lld", op, (long long)r);
    int64_t C = input->shape[nd - 3], H = input->shape[nd - 2], W = input->shape[nd - 1], Crr;
    CG_CHECK(H % r == 0 && W % r == 0, CG_ERR_VALUE,
             "[%s] height (%lld) and width (%lld) must be divisible by downscale_factor (%lld)", op, (long long)H,
             (long long)W, (long long)r);
    CG_CHECK(cg_mul3_ok(C, r, r, &Crr), CG_ERR_VALUE,
             "[%s] output channels (%lld x downscale_factor^2, downscale_factor %lld) overflow int64", op,
             (long long)C, (long long)r);
    int lead = nd - 3;
    int64_t s1[CG_MAX_DIMS], s2[CG_MAX_DIMS], perm[CG_MAX_DIMS];
    for (int k = 0; k < lead; k++) s1[k] = s2[k] = input->shape[k], perm[k] = k;
    int64_t t1[5] = {C, H / r, r, W / r, r}, p1[5] = {0, 2, 4, 1, 3}, t2[3] = {Crr, H / r, W / r};
    for (int k = 0; k < 5; k++) s1[lead + k] = t1[k], perm[lead + k] = lead + p1[k];
    for (int k = 0; k < 3; k++) s2[lead + k] = t2[k];
    return reshape_permute_reshape(input, lead + 5, s1, perm, lead + 3, s2);
}
