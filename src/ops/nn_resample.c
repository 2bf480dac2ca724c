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
 * with constant blocks. Pixel shuffles are reshape + permute. */
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
    CG_CHECK((size == NULL) != (scale_factors == NULL), CG_ERR_VALUE,
             "[%s] exactly one of size and scale_factors must be given", op);
    if (mode != CG_INTERP_NEAREST && nn_check_float(op, "input", input)) return NULL;
    int64_t out[3];
    for (int k = 0; k < ns; k++) {
        int64_t in = input->shape[k + 2];
        if (size) {
            CG_CHECK(size[k] > 0, CG_ERR_VALUE, "[%s] output size must be positive, got %lld", op, (long long)size[k]);
            out[k] = size[k];
        } else {
            CG_CHECK(scale_factors[k] > 0 && isfinite(scale_factors[k]), CG_ERR_VALUE,
                     "[%s] scale factors must be positive, got %g", op, scale_factors[k]);
            double o = floor((double)in * scale_factors[k]);
            CG_CHECK(o < 9223372036854775807.0, CG_ERR_VALUE,
                     "[%s] input size %lld with scale factor %g gives an output size beyond int64", op, (long long)in,
                     scale_factors[k]);
            out[k] = (int64_t)o;
            CG_CHECK(out[k] > 0, CG_ERR_VALUE, "[%s] input size %lld with scale factor %g gives an empty output",
                     op, (long long)in, scale_factors[k]);
        }
        CG_CHECK(in > 0, CG_ERR_VALUE, "[%s] input %s has an empty spatial dim", op,
                 cg_shape_str(b, input->ndim, input->shape));
    }
    cg_tensor *x = input;
    cg_tensor_retain(x);
    for (int k = 0; k < ns && x; k++) {
        cg_tensor *y = interp_dim(x, k + 2, out[k], mode, align_corners, scale_factors ? &scale_factors[k] : NULL);
        cg_tensor_release(x);
        x = y;
    }
    return x;
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
