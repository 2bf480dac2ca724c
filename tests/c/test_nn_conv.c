/* test_nn_conv.c — conv1d/2d/3d ('same' too) and conv_transpose1d/2d/3d:
 * values against float64 direct loops for every option (stride, padding,
 * dilation, groups, bias NULL, 1x1, odd sizes, batch 1 and > 1, unbatched,
 * non-contiguous, half types), batches in several chunks, thread-count
 * independence, meta shapes,
 * gradcheck / gradgradcheck, and the error cases. */
#include "test.h"

#include <stdlib.h>
#include <string.h>

#define SH(...) ((const int64_t[]){__VA_ARGS__})

/* One convolution case, spatial arrays in user order (nsp entries used). */
typedef struct conv_case {
    int nsp;
    int64_t n, cin, cout, groups; /* n = 0: unbatched */
    int64_t in[3], k[3], s[3], p[3], d[3], op[3];
    bool same, bias;
} conv_case;

static int64_t prod3(const int64_t *v, int n) {
    int64_t p = 1;
    for (int i = 0; i < n; i++) p *= v[i];
    return p;
}

/* Flat index of (c, pos) in a (C, sp...) sample. */
static int64_t at(int nsp, const int64_t *sp, int64_t c, const int64_t *pos) {
    int64_t f = c;
    for (int i = 0; i < nsp; i++) f = f * sp[i] + pos[i];
    return f;
}

/* Advance a multi-index over shape sp; false when done. */
static bool next_pos(int nsp, const int64_t *sp, int64_t *pos) {
    for (int i = nsp - 1; i >= 0; i--) {
        if (++pos[i] < sp[i]) return true;
        pos[i] = 0;
    }
    return false;
}

/* Output spatial size and left padding of the forward conv. */
static void conv_out(const conv_case *c, int64_t *out, int64_t *pl) {
    for (int i = 0; i < c->nsp; i++) {
        int64_t ext = c->d[i] * (c->k[i] - 1) + 1;
        if (c->same) {
            pl[i] = (ext - 1) / 2;
            out[i] = c->in[i];
        } else {
            pl[i] = c->p[i];
            out[i] = (c->in[i] + 2 * c->p[i] - ext) / c->s[i] + 1;
        }
    }
}

/* Direct float64 conv: x (N,cin,in), w (cout,cin/g,k), b -> (N,cout,out) */
static double *ref_conv(const conv_case *c, const cg_tensor *x, const cg_tensor *w, const cg_tensor *b, int64_t *out) {
    int64_t pl[3], N = c->n ? c->n : 1, cig = c->cin / c->groups, cog = c->cout / c->groups;
    conv_out(c, out, pl);
    int64_t L = prod3(out, c->nsp), P = prod3(c->in, c->nsp), KV = prod3(c->k, c->nsp);
    double *r = calloc((size_t)(N * c->cout * L) + 1, sizeof(double));
    for (int64_t n = 0; n < N; n++)
        for (int64_t co = 0; co < c->cout; co++) {
            int64_t grp = co / cog, o[3] = {0, 0, 0};
            do {
                double acc = b ? tt_get(b, co) : 0;
                for (int64_t ci = 0; ci < cig; ci++) {
                    int64_t j[3] = {0, 0, 0};
                    do {
                        int64_t ip[3];
                        bool ok = true;
                        for (int i = 0; i < c->nsp; i++) {
                            ip[i] = o[i] * c->s[i] - pl[i] + j[i] * c->d[i];
                            ok &= ip[i] >= 0 && ip[i] < c->in[i];
                        }
                        if (ok)
                            acc += tt_get(x, n * c->cin * P + at(c->nsp, c->in, grp * cig + ci, ip)) *
                                   tt_get(w, co * cig * KV + at(c->nsp, c->k, ci, j));
                    } while (next_pos(c->nsp, c->k, j));
                }
                r[n * c->cout * L + at(c->nsp, out, co, o)] = acc;
            } while (next_pos(c->nsp, out, o));
        }
    return r;
}

/* Direct float64 transposed conv: x (N,cin,in), w (cin,cout/g,k), b -> (N,cout,out) */
static double *ref_conv_t(const conv_case *c, const cg_tensor *x, const cg_tensor *w, const cg_tensor *b, int64_t *out) {
    int64_t N = c->n ? c->n : 1, cig = c->cin / c->groups, cog = c->cout / c->groups;
    for (int i = 0; i < c->nsp; i++)
        out[i] = (c->in[i] - 1) * c->s[i] - 2 * c->p[i] + c->d[i] * (c->k[i] - 1) + c->op[i] + 1;
    int64_t L = prod3(out, c->nsp), P = prod3(c->in, c->nsp), KV = prod3(c->k, c->nsp);
    double *r = calloc((size_t)(N * c->cout * L) + 1, sizeof(double));
    for (int64_t n = 0; n < N; n++)
        for (int64_t co = 0; co < c->cout; co++) {
            int64_t o[3] = {0, 0, 0};
            do r[n * c->cout * L + at(c->nsp, out, co, o)] = b ? tt_get(b, co) : 0;
            while (next_pos(c->nsp, out, o));
        }
    for (int64_t n = 0; n < N; n++)
        for (int64_t ci = 0; ci < c->cin; ci++) {
            int64_t grp = ci / cig, q[3] = {0, 0, 0};
            do {
                double xv = tt_get(x, n * c->cin * P + at(c->nsp, c->in, ci, q));
                for (int64_t co = 0; co < cog; co++) {
                    int64_t j[3] = {0, 0, 0};
                    do {
                        int64_t op[3];
                        bool ok = true;
                        for (int i = 0; i < c->nsp; i++) {
                            op[i] = q[i] * c->s[i] - c->p[i] + j[i] * c->d[i];
                            ok &= op[i] >= 0 && op[i] < out[i];
                        }
                        if (ok)
                            r[n * c->cout * L + at(c->nsp, out, grp * cog + co, op)] +=
                                xv * tt_get(w, (ci * cog + co) * KV + at(c->nsp, c->k, 0, j));
                    } while (next_pos(c->nsp, c->k, j));
                }
            } while (next_pos(c->nsp, c->in, q));
        }
    return r;
}

/* Input, weight and bias tensors of a case (transpose: weight (cin, cout/g, k)). */
static void make_operands(const conv_case *c, bool transpose, cg_dtype dt, unsigned seed, cg_tensor **x, cg_tensor **w,
                          cg_tensor **b) {
    int64_t xs[5], ws[5];
    int xn = 0;
    if (c->n) xs[xn++] = c->n;
    xs[xn++] = c->cin;
    for (int i = 0; i < c->nsp; i++) xs[xn++] = c->in[i];
    ws[0] = transpose ? c->cin : c->cout;
    ws[1] = transpose ? c->cout / c->groups : c->cin / c->groups;
    for (int i = 0; i < c->nsp; i++) ws[2 + i] = c->k[i];
    *x = tt_rand(dt, xn, xs, -1, 1, seed);
    *w = tt_rand(dt, c->nsp + 2, ws, -1, 1, seed + 1);
    *b = c->bias ? tt_rand(dt, 1, &c->cout, -1, 1, seed + 2) : NULL;
}

static cg_tensor *run_case(const conv_case *c, bool transpose, cg_tensor *x, cg_tensor *w, cg_tensor *b) {
    if (transpose) {
        switch (c->nsp) {
        case 1: return cg_conv_transpose1d(x, w, b, c->s, c->p, c->op, c->groups, c->d);
        case 2: return cg_conv_transpose2d(x, w, b, c->s, c->p, c->op, c->groups, c->d);
        default: return cg_conv_transpose3d(x, w, b, c->s, c->p, c->op, c->groups, c->d);
        }
    }
    if (c->same) {
        switch (c->nsp) {
        case 1: return cg_conv1d_same(x, w, b, c->s, c->d, c->groups);
        case 2: return cg_conv2d_same(x, w, b, c->s, c->d, c->groups);
        default: return cg_conv3d_same(x, w, b, c->s, c->d, c->groups);
        }
    }
    switch (c->nsp) {
    case 1: return cg_conv1d(x, w, b, c->s, c->p, c->d, c->groups);
    case 2: return cg_conv2d(x, w, b, c->s, c->p, c->d, c->groups);
    default: return cg_conv3d(x, w, b, c->s, c->p, c->d, c->groups);
    }
}

static double tol_for(cg_dtype dt) {
    switch (dt) {
    case CG_DTYPE_F64: return 1e-11;
    case CG_DTYPE_F32: return 2e-5;
    case CG_DTYPE_F16: return 2e-2;
    default: return 1.5e-1; /* bfloat16 */
    }
}

/* Operand layouts of check_values. */
typedef enum { LAYOUT_CONTIGUOUS, LAYOUT_NONCONTIG, LAYOUT_CHANNELS_LAST } operand_layout;

/* The channels-last format of a batched 2-d / 3-d case, else contiguous. */
static cg_memory_format cl_format(const conv_case *c) {
    if (!c->n || c->nsp < 2) return CG_MEMORY_CONTIGUOUS;
    return c->nsp == 2 ? CG_MEMORY_CHANNELS_LAST : CG_MEMORY_CHANNELS_LAST_3D;
}

static cg_tensor *relaid(cg_tensor *t, operand_layout layout, cg_memory_format f) {
    cg_tensor *r = layout == LAYOUT_NONCONTIG ? tt_noncontig(t) : cg_contiguous_as(t, f);
    cg_tensor_release(t);
    return r;
}

static void check_values(const conv_case *c, bool transpose, cg_dtype dt, operand_layout layout, int line) {
    cg_tensor *x, *w, *b;
    make_operands(c, transpose, dt, (unsigned)line, &x, &w, &b);
    cg_memory_format f = layout == LAYOUT_CHANNELS_LAST ? cl_format(c) : CG_MEMORY_CONTIGUOUS;
    if (layout != LAYOUT_CONTIGUOUS) {
        x = relaid(x, layout, f);
        w = relaid(w, layout, f);
    }
    cg_tensor *y = run_case(c, transpose, x, w, b);
    CHECK_MSG(y != NULL, "line %d: %s", line, cg_last_error_message());
    /* a channels-last operand gives a channels-last result (Note [Channels-last conv output]) */
    if (y && layout == LAYOUT_CHANNELS_LAST && f != CG_MEMORY_CONTIGUOUS && (dt != CG_DTYPE_F64 || c->nsp == 2))
        CHECK_MSG(cg_tensor_is_contiguous_as(y, f), "line %d: result not channels-last", line);
    if (y) {
        int64_t out[3];
        double *r = transpose ? ref_conv_t(c, x, w, b, out) : ref_conv(c, x, w, b, out);
        int64_t ys[5];
        int yn = 0;
        if (c->n) ys[yn++] = c->n;
        ys[yn++] = c->cout;
        for (int i = 0; i < c->nsp; i++) ys[yn++] = out[i];
        CHECK_MSG(cg_tensor_dtype(y) == dt && cg_tensor_ndim(y) == yn && !memcmp(cg_tensor_shape(y), ys, sizeof(int64_t) * (size_t)yn),
                  "line %d: wrong output shape/dtype", line);
        double worst = 0;
        for (int64_t i = 0; i < cg_tensor_numel(y); i++) {
            double e = fabs(tt_get(y, i) - r[i]) / (1 + fabs(r[i]));
            if (e > worst) worst = e;
        }
        CHECK_MSG(worst <= tol_for(dt), "line %d (%s, %s): max rel error %g", line, transpose ? "conv_t" : "conv",
                  cg_dtype_name(dt), worst);
        free(r);
    }
    cg_tensor_release(y);
    cg_tensor_release(x);
    cg_tensor_release(w);
    cg_tensor_release(b);
}

static const conv_case k_conv_cases[] = {
    /* nsp n cin cout g   in          k          s          p          d          op  same bias */
    {2, 2, 3, 4, 1, {5, 6}, {3, 3}, {1, 1}, {0, 0}, {1, 1}, {0}, false, true},
    {2, 2, 3, 4, 1, {7, 5}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {0}, false, false},
    {2, 1, 2, 3, 1, {8, 7}, {3, 2}, {1, 2}, {2, 1}, {2, 3}, {0}, false, true},
    {2, 3, 4, 6, 2, {5, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0}, false, true},
    {2, 2, 3, 3, 3, {6, 5}, {3, 3}, {2, 1}, {1, 0}, {1, 1}, {0}, false, true},   /* depthwise */
    {2, 2, 5, 4, 1, {4, 6}, {1, 1}, {1, 1}, {0, 0}, {1, 1}, {0}, false, true},   /* 1x1 (no im2col) */
    {2, 2, 4, 6, 2, {4, 5}, {1, 1}, {1, 1}, {0, 0}, {1, 1}, {0}, false, false},  /* 1x1 grouped */
    {2, 2, 3, 4, 1, {5, 6}, {1, 1}, {2, 2}, {0, 0}, {1, 1}, {0}, false, true},   /* 1x1 strided */
    {2, 2, 3, 4, 1, {5, 6}, {4, 3}, {1, 1}, {0}, {1, 2}, {0}, true, true},       /* same, odd total */
    {2, 1, 2, 2, 2, {5, 4}, {2, 2}, {1, 1}, {0}, {1, 1}, {0}, true, false},      /* same, even k */
    {2, 0, 3, 4, 1, {5, 5}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {0}, false, true},   /* unbatched */
    {2, 5, 2, 3, 1, {4, 4}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0}, false, true},   /* batch > threads */
    {2, 2, 16, 32, 1, {10, 10}, {3, 3}, {1, 1}, {0, 0}, {1, 1}, {0}, false, true}, /* large GEMM path */
    {1, 2, 3, 4, 1, {9}, {3}, {2}, {1}, {1}, {0}, false, true},
    {1, 3, 4, 2, 2, {7}, {4}, {1}, {0}, {2}, {0}, true, true},
    {1, 0, 2, 3, 1, {6}, {2}, {3}, {1}, {1}, {0}, false, false},
    {3, 2, 2, 4, 2, {3, 4, 5}, {2, 2, 3}, {1, 2, 1}, {1, 0, 1}, {1, 1, 2}, {0}, false, true},
    {3, 1, 2, 2, 1, {3, 3, 4}, {2, 3, 2}, {1, 1, 1}, {0}, {1, 1, 1}, {0}, true, false},
};
#define NCONV ((int)(sizeof k_conv_cases / sizeof k_conv_cases[0]))

static const conv_case k_convt_cases[] = {
    {2, 2, 3, 4, 1, {4, 5}, {3, 3}, {1, 1}, {0, 0}, {1, 1}, {0, 0}, false, true},
    {2, 2, 4, 6, 2, {3, 4}, {3, 2}, {2, 3}, {1, 0}, {1, 2}, {1, 2}, false, true},
    {2, 1, 2, 3, 1, {4, 3}, {2, 3}, {2, 1}, {0, 1}, {2, 1}, {1, 0}, false, false}, /* output_padding < dilation */
    {2, 3, 4, 4, 4, {3, 3}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {0, 0}, false, true}, /* depthwise */
    {2, 2, 5, 3, 1, {4, 4}, {1, 1}, {1, 1}, {0, 0}, {1, 1}, {0, 0}, false, true}, /* 1x1 */
    {2, 0, 3, 2, 1, {3, 4}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 0}, false, true}, /* unbatched */
    {1, 2, 3, 4, 1, {5}, {3}, {2}, {1}, {1}, {1}, false, true},
    {3, 1, 2, 4, 2, {2, 3, 2}, {2, 2, 2}, {2, 1, 2}, {0, 1, 0}, {1, 1, 1}, {1, 0, 0}, false, true},
};
#define NCONVT ((int)(sizeof k_convt_cases / sizeof k_convt_cases[0]))

TEST(conv_forward_values) {
    for (int i = 0; i < NCONV; i++) {
        check_values(&k_conv_cases[i], false, CG_DTYPE_F64, LAYOUT_CONTIGUOUS, 1000 + i);
        check_values(&k_conv_cases[i], false, CG_DTYPE_F32, i % 3 == 0 ? LAYOUT_NONCONTIG : LAYOUT_CONTIGUOUS, 2000 + i);
    }
    check_values(&k_conv_cases[1], false, CG_DTYPE_F16, LAYOUT_CONTIGUOUS, 3000);
    check_values(&k_conv_cases[3], false, CG_DTYPE_BF16, LAYOUT_CONTIGUOUS, 3001);
    check_values(&k_conv_cases[2], false, CG_DTYPE_F64, LAYOUT_NONCONTIG, 3002);
    check_values(&k_conv_cases[16], false, CG_DTYPE_F64, LAYOUT_NONCONTIG, 3003);
}

/* Channels-last operands (Note [Channels-last conv]): every case against the direct loops. */
TEST(conv_channels_last_values) {
    for (int i = 0; i < NCONV; i++) {
        check_values(&k_conv_cases[i], false, CG_DTYPE_F64, LAYOUT_CHANNELS_LAST, 7000 + i);
        check_values(&k_conv_cases[i], false, CG_DTYPE_F32, LAYOUT_CHANNELS_LAST, 7100 + i);
    }
    for (int i = 0; i < NCONVT; i++) {
        check_values(&k_convt_cases[i], true, CG_DTYPE_F64, LAYOUT_CHANNELS_LAST, 7200 + i);
        check_values(&k_convt_cases[i], true, CG_DTYPE_F32, LAYOUT_CHANNELS_LAST, 7300 + i);
    }
    check_values(&k_conv_cases[3], false, CG_DTYPE_BF16, LAYOUT_CHANNELS_LAST, 7400);
    check_values(&k_conv_cases[16], false, CG_DTYPE_F16, LAYOUT_CHANNELS_LAST, 7401);
    check_values(&k_convt_cases[1], true, CG_DTYPE_F16, LAYOUT_CHANNELS_LAST, 7402);
}

TEST(conv_transpose_values) {
    for (int i = 0; i < NCONVT; i++) {
        check_values(&k_convt_cases[i], true, CG_DTYPE_F64, LAYOUT_CONTIGUOUS, 4000 + i);
        check_values(&k_convt_cases[i], true, CG_DTYPE_F32, i % 2 == 1 ? LAYOUT_NONCONTIG : LAYOUT_CONTIGUOUS, 5000 + i);
    }
    check_values(&k_convt_cases[1], true, CG_DTYPE_F16, LAYOUT_CONTIGUOUS, 6000);
}

/* Results (forward and every gradient) are bitwise equal for 1 and 2 threads. */
TEST(conv_thread_count_independent) {
    const conv_case *c = &k_conv_cases[11];
    int prev = cg_get_num_threads();
    double sums[2][3];
    for (int t = 0; t < 2; t++) {
        cg_set_num_threads(t + 1);
        cg_tensor *x, *w, *b;
        make_operands(c, false, CG_DTYPE_F32, 77, &x, &w, &b);
        cg_tensor_set_requires_grad(x, true);
        cg_tensor_set_requires_grad(w, true);
        cg_tensor *y = run_case(c, false, x, w, b);
        cg_tensor *s = y ? cg_sum(y, 0, NULL, false) : NULL;
        CHECK_NN(s);
        if (s) CHECK_OK(cg_backward(s, NULL, false, false));
        cg_tensor *all[3] = {y, cg_tensor_grad(x), cg_tensor_grad(w)};
        for (int k = 0; k < 3; k++) {
            sums[t][k] = 0;
            for (int64_t i = 0; all[k] && i < cg_tensor_numel(all[k]); i++) sums[t][k] += tt_get(all[k], i) * (double)(i % 7 + 1);
        }
        cg_tensor_release(s);
        cg_tensor_release(y);
        cg_tensor_release(x);
        cg_tensor_release(w);
        cg_tensor_release(b);
    }
    cg_set_num_threads(prev);
    for (int k = 0; k < 3; k++) CHECK_MSG(sums[0][k] == sums[1][k], "result %d differs: %.17g vs %.17g", k, sums[0][k], sums[1][k]);
}

/* Batches split into several chunks (Note [Conv chunks]): narrow and wide
 * outputs, pointwise grouped, strided; a single chunk in units (one large
 * sample, a small batch); float32 / float64 and the transpose against the
 * direct loops; values and all three gradients bitwise equal for 1, 2 and 3
 * threads (Note [Conv threads]). */
TEST(conv_chunked_batches) {
    static const conv_case cs[] = {
        {2, 16, 32, 8, 1, {14, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0}, false, true},   /* narrow: copied out */
        {2, 16, 8, 8, 1, {24, 24}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0}, false, true},    /* wide: GEMM per sample */
        {2, 12, 128, 64, 2, {24, 24}, {1, 1}, {1, 1}, {0, 0}, {1, 1}, {0}, false, false}, /* pointwise, grouped */
        {2, 16, 32, 8, 1, {28, 28}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {0}, false, true},   /* strided */
        {2, 1, 32, 32, 1, {48, 48}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0}, false, true},   /* one sample in units */
        {2, 4, 8, 8, 1, {12, 12}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0}, false, true},     /* one chunk in units */
    };
    static const conv_case ct = {2, 16, 8, 32, 1, {14, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, false, true};
    for (int i = 0; i < 6; i++) {
        check_values(&cs[i], false, i % 2 ? CG_DTYPE_F64 : CG_DTYPE_F32, LAYOUT_CONTIGUOUS, 9000 + i);
        check_values(&cs[i], false, i % 2 ? CG_DTYPE_F32 : CG_DTYPE_F64, LAYOUT_CHANNELS_LAST, 9020 + i);
    }
    check_values(&ct, true, CG_DTYPE_F32, LAYOUT_CONTIGUOUS, 9010);
    check_values(&ct, true, CG_DTYPE_F32, LAYOUT_CHANNELS_LAST, 9011);
    int prev = cg_get_num_threads();
    for (int i = 0; i < 12; i++) { /* cases 6..11: channels-last operands */
        cg_tensor *res[3][4] = {{NULL}};
        for (int t = 0; t < 3; t++) {
            cg_set_num_threads(t + 1);
            cg_tensor *x, *w, *b;
            make_operands(&cs[i % 6], false, CG_DTYPE_F32, 9100 + (unsigned)i, &x, &w, &b);
            if (i >= 6) {
                x = relaid(x, LAYOUT_CHANNELS_LAST, CG_MEMORY_CHANNELS_LAST);
                w = relaid(w, LAYOUT_CHANNELS_LAST, CG_MEMORY_CHANNELS_LAST);
            }
            cg_tensor *in[3] = {x, w, b};
            for (int k = 0; k < 3; k++)
                if (in[k]) cg_tensor_set_requires_grad(in[k], true);
            cg_tensor *y = run_case(&cs[i % 6], false, x, w, b);
            cg_tensor *g = y ? tt_rand(CG_DTYPE_F32, cg_tensor_ndim(y), cg_tensor_shape(y), -1, 1, 9200) : NULL;
            CHECK_NN(g);
            if (g) CHECK_OK(cg_backward(y, g, false, false));
            res[t][0] = y;
            for (int k = 0; k < 3; k++) {
                res[t][k + 1] = in[k] ? cg_tensor_grad(in[k]) : NULL;
                if (res[t][k + 1]) cg_tensor_retain(res[t][k + 1]);
                cg_tensor_release(in[k]);
            }
            cg_tensor_release(g);
        }
        for (int t = 1; t < 3; t++)
            for (int k = 0; k < 4; k++) {
                cg_tensor *a = res[0][k], *o = res[t][k];
                CHECK_MSG((a == NULL) == (o == NULL), "case %d result %d missing", i, k);
                for (int64_t e = 0; a && o && e < cg_tensor_numel(a); e++)
                    if (tt_get(a, e) != tt_get(o, e)) {
                        CHECK_MSG(false, "case %d result %d element %lld differs with %d threads", i, k, (long long)e,
                                  t + 1);
                        break;
                    }
            }
        for (int t = 0; t < 3; t++)
            for (int k = 0; k < 4; k++) cg_tensor_release(res[t][k]);
    }
    cg_set_num_threads(prev);
}

TEST(conv_meta_and_empty) {
    cg_tensor *x = cg_empty(4, SH(2, 3, 9, 8), CG_DTYPE_F32, cg_meta());
    cg_tensor *w = cg_empty(4, SH(4, 3, 3, 2), CG_DTYPE_F32, cg_meta());
    cg_tensor *y = cg_conv2d(x, w, NULL, SH(2, 1), SH(1, 0), SH(1, 2), 1);
    CHECK_NN(y);
    if (y) {
        CHECK(cg_device_eq(cg_tensor_device(y), cg_meta()));
        CHECK(cg_tensor_size(y, 2) == 5 && cg_tensor_size(y, 3) == 6 && cg_tensor_size(y, 1) == 4);
    }
    cg_tensor_release(y);
    cg_tensor_release(x);
    cg_tensor_release(w);
    /* empty batch */
    x = cg_zeros(4, SH(0, 3, 5, 5), CG_DTYPE_F32, cg_cpu());
    w = cg_ones(4, SH(2, 3, 3, 3), CG_DTYPE_F32, cg_cpu());
    y = cg_conv2d(x, w, NULL, NULL, NULL, NULL, 1);
    CHECK(y && cg_tensor_numel(y) == 0 && cg_tensor_size(y, 1) == 2 && cg_tensor_size(y, 2) == 3);
    cg_tensor_release(y);
    cg_tensor_release(x);
    cg_tensor_release(w);
}

/* ---------------------------------------------------------------- gradients */

typedef struct grad_ctx {
    const conv_case *c;
    bool transpose;
} grad_ctx;

static cg_tensor *conv_fn(cg_tensor *const *in, void *p) {
    grad_ctx *g = p;
    return run_case(g->c, g->transpose, in[0], in[1], g->c->bias ? in[2] : NULL);
}

static void grad_case(const conv_case *c, bool transpose, bool second, operand_layout layout, int line) {
    cg_tensor *in[3];
    make_operands(c, transpose, CG_DTYPE_F64, (unsigned)line, &in[0], &in[1], &in[2]);
    if (layout != LAYOUT_CONTIGUOUS) {
        in[0] = relaid(in[0], layout, cl_format(c));
        if (layout == LAYOUT_CHANNELS_LAST) in[1] = relaid(in[1], layout, cl_format(c));
    }
    int n = c->bias ? 3 : 2;
    for (int i = 0; i < n; i++) cg_tensor_set_requires_grad(in[i], true);
    grad_ctx g = {c, transpose};
    CHECK_MSG(tt_gradcheck(conv_fn, &g, n, in, 1e-6, 1e-7, 1e-5), "gradcheck failed (line %d)", line);
    if (second) CHECK_MSG(tt_gradgradcheck(conv_fn, &g, n, in, 1e-6, 1e-6, 1e-5), "gradgradcheck failed (line %d)", line);
    for (int i = 0; i < n; i++) cg_tensor_release(in[i]);
}

TEST(conv_gradcheck) {
    static const conv_case cs[] = {
        {2, 2, 4, 4, 2, {5, 4}, {3, 2}, {2, 1}, {1, 1}, {1, 2}, {0}, false, true},
        {2, 1, 2, 3, 1, {4, 4}, {1, 1}, {1, 1}, {0, 0}, {1, 1}, {0}, false, true},
        {2, 0, 2, 2, 1, {4, 5}, {2, 3}, {1, 1}, {0}, {1, 1}, {0}, true, false},
        {1, 2, 2, 2, 2, {7}, {3}, {2}, {1}, {2}, {0}, false, true},
        {3, 1, 2, 2, 1, {3, 3, 3}, {2, 2, 2}, {1, 2, 1}, {1, 0, 0}, {1, 1, 1}, {0}, false, true},
    };
    for (int i = 0; i < 5; i++) grad_case(&cs[i], false, i == 0 || i == 3, i == 1 ? LAYOUT_NONCONTIG : LAYOUT_CONTIGUOUS, 7000 + i);
    grad_case(&cs[0], false, true, LAYOUT_CHANNELS_LAST, 7010); /* Note [Channels-last conv] */
    grad_case(&cs[1], false, true, LAYOUT_CHANNELS_LAST, 7011);
    grad_case(&cs[4], false, false, LAYOUT_CHANNELS_LAST, 7012);
}

TEST(conv_transpose_gradcheck) {
    static const conv_case cs[] = {
        {2, 2, 4, 4, 2, {3, 3}, {3, 2}, {2, 1}, {1, 0}, {1, 2}, {1, 0}, false, true},
        {1, 0, 2, 3, 1, {4}, {3}, {2}, {1}, {1}, {1}, false, false},
    };
    for (int i = 0; i < 2; i++) grad_case(&cs[i], true, true, i == 1 ? LAYOUT_NONCONTIG : LAYOUT_CONTIGUOUS, 8000 + i);
    grad_case(&cs[0], true, true, LAYOUT_CHANNELS_LAST, 8010);
}

/* Names of the nodes a second-order graph goes through. */
TEST(conv_double_backward_graph) {
    cg_tensor *x = tt_rand(CG_DTYPE_F64, 4, SH(1, 2, 4, 4), -1, 1, 3), *w = tt_rand(CG_DTYPE_F64, 4, SH(3, 2, 3, 3), -1, 1, 4);
    cg_tensor_set_requires_grad(x, true);
    cg_tensor_set_requires_grad(w, true);
    cg_tensor *y = cg_conv2d(x, w, NULL, NULL, SH(1, 1), NULL, 1);
    CHECK(y && !strcmp(cg_node_name(cg_tensor_grad_fn(y)), "ConvolutionBackward0"));
    cg_tensor *s = cg_sum(y, 0, NULL, false), *gx = NULL;
    CHECK_OK(cg_autograd_grad(1, &s, NULL, 1, &x, true, true, false, &gx));
    CHECK(gx && cg_tensor_requires_grad(gx) && !strcmp(cg_node_name(cg_tensor_grad_fn(gx)), "ConvTransposeBackward0"));
    cg_tensor *gw = NULL;
    CHECK_OK(cg_autograd_grad(1, &s, NULL, 1, &w, true, true, false, &gw));
    CHECK(gw && !strcmp(cg_node_name(cg_tensor_grad_fn(gw)), "ConvWeightGradBackward0"));
    cg_tensor *all[] = {x, w, y, s, gx, gw};
    for (int i = 0; i < 6; i++) cg_tensor_release(all[i]);
}

/* ---------------------------------------------------------------- errors */

TEST(conv_errors) {
    cg_tensor *x = tt_rand(CG_DTYPE_F32, 4, SH(2, 3, 5, 5), -1, 1, 1), *w = tt_rand(CG_DTYPE_F32, 4, SH(4, 3, 3, 3), -1, 1, 2);
    cg_tensor *x2 = tt_rand(CG_DTYPE_F32, 2, SH(2, 3), -1, 1, 3), *w3 = tt_rand(CG_DTYPE_F32, 3, SH(4, 3, 3), -1, 1, 4);
    cg_tensor *xd = tt_rand(CG_DTYPE_F64, 4, SH(2, 3, 5, 5), -1, 1, 5), *xi = cg_zeros(4, SH(2, 3, 5, 5), CG_DTYPE_BOOL, cg_cpu());
    cg_tensor *wi = cg_zeros(4, SH(4, 3, 3, 3), CG_DTYPE_BOOL, cg_cpu()), *bb = cg_zeros(1, SH(5), CG_DTYPE_F32, cg_cpu());
    cg_tensor *wg = tt_rand(CG_DTYPE_F32, 4, SH(5, 1, 3, 3), -1, 1, 6), *wbig = tt_rand(CG_DTYPE_F32, 4, SH(4, 3, 7, 3), -1, 1, 7);
    CHECK_ERR(!cg_conv2d(x2, w, NULL, NULL, NULL, NULL, 1), CG_ERR_SHAPE,
              "[conv2d] expected input with 4 dims (N,C,H,W) or 3 (C,H,W), got (2,3)");
    CHECK_ERR(!cg_conv2d(x, w3, NULL, NULL, NULL, NULL, 1), CG_ERR_SHAPE, "expected weight with 4 dims");
    CHECK_ERR(!cg_conv2d(x, w, NULL, NULL, NULL, NULL, 3), CG_ERR_VALUE, "must be divisible by groups");
    CHECK_ERR(!cg_conv2d(x, wg, NULL, NULL, NULL, NULL, 5), CG_ERR_SHAPE, "to have 5 channels, but got 3 channels");
    CHECK_ERR(!cg_conv2d(x, w, NULL, NULL, NULL, NULL, 0), CG_ERR_VALUE, "groups must be positive");
    CHECK_ERR(!cg_conv2d(x, wbig, NULL, NULL, NULL, NULL, 1), CG_ERR_SHAPE,
              "kernel size (dilated) (7,3) can't be greater than the padded input size (5,5)");
    CHECK_ERR(!cg_conv2d(x, w, NULL, NULL, NULL, SH(3, 1), 1), CG_ERR_SHAPE, "can't be greater than the padded input");
    CHECK_ERR(!cg_conv2d(x, w, NULL, SH(0, 1), NULL, NULL, 1), CG_ERR_VALUE, "stride must be positive");
    CHECK_ERR(!cg_conv2d(x, w, NULL, NULL, SH(-1, 0), NULL, 1), CG_ERR_VALUE, "padding must be non-negative");
    CHECK_ERR(!cg_conv2d(x, w, NULL, NULL, NULL, SH(1, 0), 1), CG_ERR_VALUE, "dilation must be positive");
    CHECK_ERR(!cg_conv2d_same(x, w, NULL, SH(2, 1), NULL, 1), CG_ERR_VALUE, "padding='same' is not supported for strided");
    CHECK_ERR(!cg_conv2d(xd, w, NULL, NULL, NULL, NULL, 1), CG_ERR_DTYPE, "");
    CHECK_ERR(!cg_conv2d(xi, wi, NULL, NULL, NULL, NULL, 1), CG_ERR_NOT_IMPLEMENTED, "[conv2d] not supported for dtype bool");
    CHECK_ERR(!cg_conv2d(x, w, bb, NULL, NULL, NULL, 1), CG_ERR_SHAPE, "expected bias of shape (4)");
    CHECK_ERR(!cg_conv2d(NULL, w, NULL, NULL, NULL, NULL, 1), CG_ERR_VALUE, "must not be NULL");
    CHECK_ERR(!cg_conv1d(x, w, NULL, NULL, NULL, NULL, 1), CG_ERR_SHAPE, "[conv1d] expected input with 3 dims (N,C,L)");
    /* transposed: weight (C_in, C_out/g, k) */
    cg_tensor *wt = tt_rand(CG_DTYPE_F32, 4, SH(3, 2, 3, 3), -1, 1, 8);
    CHECK_ERR(!cg_conv_transpose2d(x, w, NULL, NULL, NULL, NULL, 1, NULL), CG_ERR_SHAPE, "to have 4 channels, but got 3");
    CHECK_ERR(!cg_conv_transpose2d(x, wt, NULL, SH(2, 2), NULL, SH(2, 0), 1, NULL), CG_ERR_VALUE,
              "output padding must be non-negative and smaller than either stride or dilation");
    CHECK_ERR(!cg_conv_transpose2d(x, wt, NULL, NULL, SH(4, 0), NULL, 1, NULL), CG_ERR_SHAPE, "too small");
    CHECK_ERR(!cg_conv_transpose2d(x, wt, NULL, NULL, NULL, NULL, 2, NULL), CG_ERR_VALUE, "must be divisible by groups");
    cg_tensor *all[] = {x, w, x2, w3, xd, xi, wi, bb, wg, wbig, wt};
    for (int i = 0; i < 11; i++) cg_tensor_release(all[i]);
}

/* Autocast runs conv in the autocast dtype; an empty batch still backpropagates (zero weight grad). */
/* Integer convs (Note [Integer conv]) are exact: small integers give the
 * float64 conv's values; int8 wraps like arithmetic in int8; conv_transpose
 * takes int64 alone. */
static cg_tensor *int_vals(cg_dtype dt, int ndim, const int64_t *shape, int seed) {
    double v[512];
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    for (int64_t k = 0; k < n && k < 512; k++) v[k] = (double)((k * 37 + seed * 11) % 41) - 20.0;
    return tt_tensor(dt, ndim, shape, v);
}

TEST(conv_integer) {
    cg_tensor *xf = int_vals(CG_DTYPE_F64, 4, SH(2, 4, 6, 5), 1), *wf = int_vals(CG_DTYPE_F64, 4, SH(6, 2, 3, 2), 2);
    cg_tensor *xi = int_vals(CG_DTYPE_I64, 4, SH(2, 4, 6, 5), 1), *wi = int_vals(CG_DTYPE_I64, 4, SH(6, 2, 3, 2), 2);
    cg_tensor *yf = cg_conv2d(xf, wf, NULL, SH(2, 1), SH(1, 1), SH(1, 2), 2);
    cg_tensor *yi = cg_conv2d(xi, wi, NULL, SH(2, 1), SH(1, 1), SH(1, 2), 2);
    CHECK(yf && yi && cg_tensor_dtype(yi) == CG_DTYPE_I64 && cg_tensor_numel(yi) == cg_tensor_numel(yf));
    for (int64_t k = 0; yf && yi && k < cg_tensor_numel(yi); k++) CHECK(tt_get(yi, k) == tt_get(yf, k));
    /* the transpose (weight (cin=6, cout/g=2, ...)) */
    cg_tensor *tf = cg_conv_transpose2d(yf, wf, NULL, SH(2, 1), SH(1, 1), NULL, 2, SH(1, 2));
    cg_tensor *ti = cg_conv_transpose2d(yi, wi, NULL, SH(2, 1), SH(1, 1), NULL, 2, SH(1, 2));
    CHECK(tf && ti && cg_tensor_dtype(ti) == CG_DTYPE_I64 && cg_tensor_numel(ti) == cg_tensor_numel(tf));
    for (int64_t k = 0; tf && ti && k < cg_tensor_numel(ti); k++) CHECK(tt_get(ti, k) == tt_get(tf, k));
    /* int8: 4 * 100 * 100 = 40000 wraps to 64 */
    cg_tensor *x8 = cg_full(3, SH(1, 4, 3), 100.0, CG_DTYPE_I8, cg_cpu()), *w8 = cg_full(3, SH(1, 4, 1), 100.0, CG_DTYPE_I8, cg_cpu());
    cg_tensor *wt8 = cg_full(3, SH(4, 1, 1), 1.0, CG_DTYPE_I8, cg_cpu());
    cg_tensor *y8 = cg_conv1d(x8, w8, NULL, NULL, NULL, NULL, 1);
    CHECK(y8 && cg_tensor_dtype(y8) == CG_DTYPE_I8 && tt_get(y8, 0) == 64.0);
    CHECK_ERR(!cg_conv_transpose1d(x8, wt8, NULL, NULL, NULL, NULL, 1, NULL), CG_ERR_NOT_IMPLEMENTED,
              "[conv_transpose1d] not supported for dtype int8");
    cg_tensor *all[] = {xf, wf, xi, wi, yf, yi, tf, ti, x8, w8, wt8, y8};
    for (int i = 0; i < 12; i++) cg_tensor_release(all[i]);
}

TEST(conv_autocast_and_empty_backward) {
    cg_tensor *x = tt_rand(CG_DTYPE_F32, 4, SH(2, 2, 5, 5), -1, 1, 11), *w = tt_rand(CG_DTYPE_F32, 4, SH(3, 2, 3, 3), -1, 1, 12);
    cg_set_autocast(true, CG_DTYPE_BF16);
    cg_tensor *y = cg_conv2d(x, w, NULL, NULL, NULL, NULL, 1);
    cg_set_autocast(false, CG_DTYPE_BF16);
    CHECK(y && cg_tensor_dtype(y) == CG_DTYPE_BF16);
    cg_tensor_release(y);
    cg_tensor_release(x);
    x = cg_zeros(4, SH(0, 2, 5, 5), CG_DTYPE_F64, cg_cpu());
    cg_tensor_release(w);
    w = tt_rand(CG_DTYPE_F64, 4, SH(3, 2, 3, 3), -1, 1, 13);
    cg_tensor *b = cg_ones(1, SH(3), CG_DTYPE_F64, cg_cpu());
    cg_tensor_set_requires_grad(x, true);
    cg_tensor_set_requires_grad(w, true);
    cg_tensor_set_requires_grad(b, true);
    y = cg_conv2d(x, w, b, NULL, SH(1, 1), NULL, 1);
    cg_tensor *s = y ? cg_sum(y, 0, NULL, false) : NULL;
    CHECK_NN(s);
    if (s) CHECK_OK(cg_backward(s, NULL, false, false));
    cg_tensor *gw = cg_tensor_grad(w), *gx = cg_tensor_grad(x), *gb = cg_tensor_grad(b);
    CHECK(gw && gx && gb && cg_tensor_numel(gx) == 0 && tt_get(gb, 0) == 0);
    for (int64_t i = 0; gw && i < cg_tensor_numel(gw); i++) CHECK(tt_get(gw, i) == 0);
    cg_tensor *all[] = {x, w, b, y, s};
    for (int i = 0; i < 5; i++) cg_tensor_release(all[i]);
}
