/* nn_conv.c — convolution ops: conv1d/2d/3d (explicit or 'same' padding)
 * and conv_transpose1d/2d/3d. All are one N-d geometry (Note [Conv geometry])
 * run by three differentiable ops — conv, its transpose and its weight
 * gradient — whose backwards are each other (Note [Conv backward]), so
 * convolutions support gradients of any order. Kernels: the device's conv
 * entries (Note [Kernel entries]; the CPU's are src/backend/cpu/conv.c). */
#include "../dispatch/dispatch_internal.h"

#include <limits.h>
#include <string.h>

/* Note [Conv backward]: with one geometry, the three ops are linear maps
 *   conv(x, w) -> y,   conv_t(y, w) -> x,   wgrad(x, y) -> w
 * satisfying <conv(x,w), y> = <x, conv_t(y,w)> = <w, wgrad(x,y)>. Hence
 *   conv:    gx = conv_t(g, w)   gw = wgrad(x, g)   gbias = sum(g over N, spatial)
 *   conv_t:  gy = conv(g, w)     gw = wgrad(g, y)   gbias = sum(g ...)
 *   wgrad:   gx = conv_t(y, g)   gy = conv(x, g)
 * Each formula calls the ops themselves, so a backward run with grad mode on
 * records a differentiable graph. */
typedef cg_conv_kind conv_kind;
#define CONV_FWD CG_CONV_FORWARD
#define CONV_TRANSPOSE CG_CONV_TRANSPOSE
#define CONV_WGRAD CG_CONV_WEIGHT_GRAD

static const cg_op_schema k_conv_schema[3] = {
    {"convolution", "ConvolutionBackward0", 1, CG_AMP_LOWER, false, true, false},
    {"conv_transpose", "ConvTransposeBackward0", 1, CG_AMP_LOWER, false, true, false},
    {"conv_weight_grad", "ConvWeightGradBackward0", 1, CG_AMP_KEEP, false, true, false},
};

/* ---------------------------------------------------------------- geometry in node attrs */

static void geom_pack(const cg_conv_geom *g, int64_t *ia) {
    ia[0] = g->nsp;
    ia[1] = g->cin;
    ia[2] = g->cout;
    ia[3] = g->groups;
    for (int d = 0; d < 3; d++) {
        ia[4 + d] = g->in[d];
        ia[7 + d] = g->out[d];
        ia[10 + d] = g->k[d];
        ia[13 + d] = g->stride[d];
        ia[16 + d] = g->pad[d];
        ia[19 + d] = g->dil[d];
    }
}

static void geom_unpack(const int64_t *ia, cg_conv_geom *g) {
    memset(g, 0, sizeof *g);
    g->nsp = (int)ia[0];
    g->cin = ia[1];
    g->cout = ia[2];
    g->groups = ia[3];
    for (int d = 0; d < 3; d++) {
        g->in[d] = ia[4 + d];
        g->out[d] = ia[7 + d];
        g->k[d] = ia[10 + d];
        g->stride[d] = ia[13 + d];
        g->pad[d] = ia[16 + d];
        g->dil[d] = ia[19 + d];
    }
}

/* Shapes of the three tensors of a geometry: x (N,cin,in..), w (cout,cin/g,k..), y (N,cout,out..). */
static int geom_shape(const cg_conv_geom *g, int which, int64_t n, int64_t *shape) {
    const int64_t *sp = which == 0 ? g->in : which == 1 ? g->k : g->out;
    shape[0] = which == 1 ? g->cout : n;
    shape[1] = which == 0 ? g->cin : which == 1 ? g->cin / g->groups : g->cout;
    for (int d = 0; d < g->nsp; d++) shape[2 + d] = sp[3 - g->nsp + d];
    return g->nsp + 2;
}

/* ---------------------------------------------------------------- the op core */

static cg_status conv_fwd_backward(cg_node *node, cg_tensor *const *gout, cg_tensor **gin);
static cg_status conv_transpose_backward(cg_node *node, cg_tensor *const *gout, cg_tensor **gin);
static cg_status conv_wgrad_backward(cg_node *node, cg_tensor *const *gout, cg_tensor **gin);
static const cg_backward_fn k_conv_backward[3] = {conv_fwd_backward, conv_transpose_backward, conv_wgrad_backward};

/* A history-free copy (or alias) of t in dtype dt laid out in format f. */
static cg_tensor *contig_as(cg_tensor *t, cg_dtype dt, cg_memory_format f) {
    cg_tensor *a = cg_tensor_alias(t);
    if (a && a->dtype != dt) {
        cg_tensor *c = cg_to_dtype_as(a, dt, f);
        cg_tensor_release(a);
        a = c;
    }
    cg_tensor *c = a ? cg_contiguous_as(a, f) : NULL;
    cg_tensor_release(a);
    return c;
}

/* Note [Channels-last conv output]: PyTorch's rule (mkldnn_conv_use_channels_last,
 * thnn_conv_use_channels_last): a 2-d convolution whose input or weight suggests channels_last gives
 * a channels_last result; so do its transpose and, for the weight gradient, x or the gradient
 * suggesting it. A node's gradients are laid out as its own result (decided from its saved
 * operands, never from the incoming gradient, as PyTorch's convolution_backward decides from input
 * and weight): y.sum().backward() sends an expanded gradient, yet x's gradient is channels_last. In
 * 3-d the same holds with channels_last_3d for float32 and the half types (oneDNN computes them);
 * float64 and integer 3-d convolutions are contiguous, as PyTorch's slow 3-d kernels give. PyTorch
 * also takes its slow kernels for some small float32 single-sample 3-d problems (and, on CPUs
 * without bf16 / fp16 instructions, for the half types), and their result is contiguous: a
 * performance heuristic of its, not a layout rule, which cgrad does not follow (its 3-d result
 * keeps channels_last_3d there). The float kernels compute on channels-last operands directly (Note
 * [Channels-last conv]; a contiguous operand is converted once, as PyTorch converts it); the
 * integer kernels compute contiguous and the result is copied into the channels-last output. */
static cg_memory_format conv_out_format(const cg_conv_geom *g, const cg_tensor *a, const cg_tensor *b) {
    if (g->nsp < 2) return CG_MEMORY_CONTIGUOUS;
    if (g->nsp == 3 && (a->dtype == CG_DTYPE_F64 || !cg_dtype_is_floating(a->dtype))) return CG_MEMORY_CONTIGUOUS;
    cg_memory_format f = g->nsp == 2 ? CG_MEMORY_CHANNELS_LAST : CG_MEMORY_CHANNELS_LAST_3D;
    return cg_tensor_suggest_memory_format(a) == f || cg_tensor_suggest_memory_format(b) == f ? f
                                                                                               : CG_MEMORY_CONTIGUOUS;
}

/* A new tensor of shape laid out in format f. */
static cg_tensor *new_in_format(const char *name, int ndim, const int64_t *shape, cg_dtype dt, cg_device dev,
                                cg_memory_format f) {
    int64_t strides[CG_MAX_DIMS];
    if (f == CG_MEMORY_CONTIGUOUS || !cg_memory_strides(f, ndim, shape, strides))
        return cg_tensor_new(name, ndim, shape, dt, dev);
    return cg_tensor_new_strided(name, ndim, shape, strides, dt, dev);
}

/* Run kernel `kind` into out (allocated, laid out in format f); half types compute in float32. */
static cg_status conv_compute(conv_kind kind, const char *name, const cg_conv_geom *g0, cg_tensor *a, cg_tensor *b,
                              cg_tensor *bias, cg_tensor *out, cg_memory_format f) {
    cg_dtype dt = out->dtype, cdt = (dt == CG_DTYPE_F16 || dt == CG_DTYPE_BF16) ? CG_DTYPE_F32 : dt;
    bool integer = !cg_dtype_is_floating(dt);
    if (integer) cdt = CG_DTYPE_I64; /* exact: Note [Integer conv] (src/backend/cpu/conv_int.c) */
    cg_conv_geom g = *g0;
    g.channels_last = f != CG_MEMORY_CONTIGUOUS && !integer; /* Note [Channels-last conv output] */
    cg_memory_format kf = g.channels_last ? f : CG_MEMORY_CONTIGUOUS;
    bool prev = cg_set_grad_enabled(false);
    cg_status st = CG_OK;
    /* a half x / y stays half: the kernels convert it per chunk (Note [Half conv]) */
    cg_dtype adt = integer ? cdt : a->dtype, bdt = kind == CONV_WGRAD && !integer ? b->dtype : cdt;
    cg_tensor *ac = contig_as(a, adt, kf), *bc = ac ? contig_as(b, bdt, kf) : NULL;
    cg_tensor *biasc = bc && bias ? contig_as(bias, cdt, CG_MEMORY_CONTIGUOUS) : NULL, *ow = NULL;
    if (!ac || !bc || (bias && !biasc)) goto fail;
    if (cdt == dt && kf == f) {
        cg_tensor_retain(out);
        ow = out;
    } else if (!(ow = new_in_format(k_conv_schema[kind].name, out->ndim, out->shape, cdt, out->device, kf))) {
        goto fail;
    }
    CG_RUN_KERNEL(st, name, ow->device, conv, kind, &g, ow, ac, bc, biasc);
    if (!st && ow != out) st = cg_copy_(out, ow);
    goto done;
fail:
    st = cg_last_error();
done:
    cg_tensor_release(ac);
    cg_tensor_release(bc);
    cg_tensor_release(biasc);
    cg_tensor_release(ow);
    cg_set_grad_enabled(prev);
    return st;
}

/* Is v[0]*v[1]*v[2] <= lim (sizes >= 0)? The product goes to *vol when asked. */
static bool vol_within(const int64_t v[3], int64_t lim, int64_t *vol) {
    int64_t p = 1;
    if (v[0] == 0 || v[1] == 0 || v[2] == 0) {
        p = 0;
    } else {
        for (int i = 0; i < 3; i++)
            if (__builtin_mul_overflow(p, v[i], &p) || p > lim) return false;
    }
    if (vol) *vol = p;
    return true;
}

/* One of the three ops on geometry g0 (g0->n is ignored: a's batch is used), its result laid out
 * in `want` (PRESERVE: decided from a and b, Note [Channels-last conv output]).
 * Operands (Note [Conv geometry]):
 *   CONV_FWD:       a = x (N,cin,in..),  b = w (cout,cin/g,k..), bias (cout) or NULL -> (N,cout,out..)
 *   CONV_TRANSPOSE: a = y (N,cout,out..), b = w,                  bias (cin) or NULL  -> (N,cin,in..)
 *   CONV_WGRAD:     a = x (N,cin,in..),  b = y (N,cout,out..)                        -> (cout,cin/g,k..) */
static cg_tensor *conv_body(conv_kind kind, const char *name, const cg_conv_geom *g0, cg_tensor *a, cg_tensor *b,
                             cg_tensor *bias, cg_memory_format want) {
    static const int a_which[3] = {0, 2, 0}, b_which[3] = {1, 1, 2}, o_which[3] = {2, 0, 1};
    cg_tensor *args[3] = {a, b, bias};
    int nargs = bias ? 3 : 2;
    if (cg_check_same(name, nargs, args, cg_amp_cast_mask(&k_conv_schema[kind], nargs, args))) return NULL;
    CG_CHECK(a->dtype != CG_DTYPE_BOOL, CG_ERR_NOT_IMPLEMENTED, "[%s] not supported for dtype %s", name,
             cg_dtype_name(a->dtype));
    cg_conv_geom g = *g0;
    g.n = a->ndim > 0 ? a->shape[0] : 0;
    int64_t sa[5], sb[5], so[5];
    int na = geom_shape(&g, a_which[kind], g.n, sa), nb = geom_shape(&g, b_which[kind], g.n, sb);
    int no = geom_shape(&g, o_which[kind], g.n, so);
    char s1[CG_SHAPE_STR], s2[CG_SHAPE_STR], s3[CG_SHAPE_STR], s4[CG_SHAPE_STR];
    if (!cg_shape_eq(a->ndim, a->shape, na, sa) || !cg_shape_eq(b->ndim, b->shape, nb, sb))
        CG_CHECK(false, CG_ERR_SHAPE, "[%s] operands of shapes %s and %s don't match the geometry (expected %s and %s)",
                 name, cg_shape_str(s1, a->ndim, a->shape), cg_shape_str(s2, b->ndim, b->shape),
                 cg_shape_str(s3, na, sa), cg_shape_str(s4, nb, sb));
    int64_t lim = INT_MAX, kvol = 0, cin_k = 0;
    /* products checked without overflowing: a huge padding makes out[] ~2^41 per dim */
    bool fits = vol_within(g.k, lim, &kvol) && !__builtin_mul_overflow(g.cin, kvol, &cin_k) && cin_k <= lim &&
                g.cout <= lim && vol_within(g.out, lim, NULL) && vol_within(g.in, lim, NULL);
    CG_CHECK(fits, CG_ERR_NOT_IMPLEMENTED, "[%s] sizes exceed the BLAS index range", name);
    cg_tensor *in[3];
    bool owned;
    if (cg_schema_guard(&k_conv_schema[kind], nargs, args, in, &owned)) return NULL;
    cg_memory_format f = want == CG_MEMORY_PRESERVE ? conv_out_format(&g, in[0], in[1]) : want;
    cg_tensor *out = new_in_format(name, no, so, in[0]->dtype, in[0]->device, f);
    if (out && conv_compute(kind, name, &g, in[0], in[1], bias ? in[2] : NULL, out, f)) {
        cg_tensor_release(out);
        out = NULL;
    }
    if (out) {
        bool failed;
        cg_node *node = cg_wire_unary_output(k_conv_schema[kind].node_name, k_conv_backward[kind], &k_conv_schema[kind],
                                             nargs, in, out, 2, &failed);
        if (node) {
            geom_pack(&g, node->iattr);
            failed = cg_node_save(node, 0, in[0], false, 0) || cg_node_save(node, 1, in[1], false, 0);
        }
        if (failed) {
            cg_tensor_release(out);
            out = NULL;
        }
    }
    if (owned) cg_release_all(nargs, in);
    return out;
}

/* the call recorded as a profiler event (off the hot path) */
static CG_PROF_COLD cg_tensor *conv_apply_profiled(conv_kind kind, const char *name, const cg_conv_geom *g0,
                                                   cg_tensor *a, cg_tensor *b, cg_tensor *bias,
                                                   cg_memory_format want) {
    cg_tensor *args[3] = {a, b, bias};
    int64_t ev = cg_prof_begin(k_conv_schema[kind].name, CG_PROF_OP, bias ? 3 : 2, args);
    cg_tensor *r = conv_body(kind, name, g0, a, b, bias, want);
    cg_prof_end(ev, r);
    return r;
}
static cg_tensor *conv_apply(conv_kind kind, const char *name, const cg_conv_geom *g0, cg_tensor *a, cg_tensor *b,
                             cg_tensor *bias, cg_memory_format want) {
    if (cg_prof_active()) return conv_apply_profiled(kind, name, g0, a, b, bias, want);
    return conv_body(kind, name, g0, a, b, bias, want);
}

/* ---------------------------------------------------------------- backward (Note [Conv backward]) */

/* Sum of g (N, C, spatial...) over every dim but the channel: the bias
 * gradient; one kernel pass for a first-order float32 / float64 backward. */
static cg_tensor *bias_grad(cg_tensor *g) {
    int64_t dims[CG_MAX_DIMS];
    int n = 0;
    for (int d = 0; d < g->ndim; d++)
        if (d != 1) dims[n++] = d;
    if (cg_is_grad_enabled() || (g->dtype != CG_DTYPE_F32 && g->dtype != CG_DTYPE_F64))
        return cg_sum(g, n, dims, false);
    /* contiguous, or dense channels-last as it comes (Note [Channels-last conv output]) */
    cg_memory_format f = cg_tensor_suggest_memory_format(g);
    cg_tensor *gc = cg_contiguous_as(g, f);
    cg_tensor *r = gc ? cg_tensor_new("conv_bias_grad", 1, &g->shape[1], g->dtype, g->device) : NULL;
    if (r) {
        cg_status st;
        CG_RUN_KERNEL(st, "conv_bias_grad", r->device, conv_bias_grad, r, gc);
        if (st) cg_tensor_release(r), r = NULL;
    }
    cg_tensor_release(gc);
    return r;
}

/* gin[i] = apply(kinds[i], ops[i][0], ops[i][1]) for the weight-less inputs
 * i = 0, 1, where operand index s >= 0 is saved slot s and -1 the incoming
 * gradient; the bias (input 2, when present) gets bias_grad. */
static cg_status run_backward(cg_node *node, cg_tensor *const *gout, cg_tensor **gin, const conv_kind kinds[2],
                              const int ops[2][2], const char *const names[2]) {
    cg_conv_geom geo;
    geom_unpack(node->iattr, &geo);
    cg_tensor *saved[2] = {NULL, NULL};
    cg_status st = CG_OK;
    bool any = cg_node_needs_grad(node, 0) || cg_node_needs_grad(node, 1);
    for (int s = 0; any && s < 2 && !st; s++)
        if (!(saved[s] = cg_node_saved(node, s))) st = cg_last_error();
    /* the gradients are laid out as the node's own result (Note [Channels-last conv output]):
     * PyTorch decides them from the input and weight, not from the incoming gradient */
    cg_memory_format f = any && !st ? conv_out_format(&geo, saved[0], saved[1]) : CG_MEMORY_CONTIGUOUS;
    for (int i = 0; i < 2 && !st; i++) {
        if (!cg_node_needs_grad(node, i)) continue;
        cg_tensor *opnd[2] = {NULL, NULL};
        for (int k = 0; k < 2; k++) opnd[k] = ops[i][k] < 0 ? gout[0] : saved[ops[i][k]];
        if (!(gin[i] = conv_apply(kinds[i], names[i], &geo, opnd[0], opnd[1], NULL, f))) st = cg_last_error();
    }
    if (!st && node->num_inputs == 3 && cg_node_needs_grad(node, 2) && !(gin[2] = bias_grad(gout[0])))
        st = cg_last_error();
    cg_tensor_release(saved[0]);
    cg_tensor_release(saved[1]);
    return st;
}

/* conv(x, w, bias): gx = conv_t(g, w), gw = wgrad(x, g) */
static cg_status conv_fwd_backward(cg_node *node, cg_tensor *const *gout, cg_tensor **gin) {
    static const conv_kind kinds[2] = {CONV_TRANSPOSE, CONV_WGRAD};
    static const int ops[2][2] = {{-1, 1}, {0, -1}};
    static const char *const names[2] = {"conv_input_grad", "conv_weight_grad"};
    return run_backward(node, gout, gin, kinds, ops, names);
}

/* conv_t(y, w, bias): gy = conv(g, w), gw = wgrad(g, y) */
static cg_status conv_transpose_backward(cg_node *node, cg_tensor *const *gout, cg_tensor **gin) {
    static const conv_kind kinds[2] = {CONV_FWD, CONV_WGRAD};
    static const int ops[2][2] = {{-1, 1}, {-1, 0}};
    static const char *const names[2] = {"conv_transpose_input_grad", "conv_transpose_weight_grad"};
    return run_backward(node, gout, gin, kinds, ops, names);
}

/* wgrad(x, y): gx = conv_t(y, g), gy = conv(x, g) */
static cg_status conv_wgrad_backward(cg_node *node, cg_tensor *const *gout, cg_tensor **gin) {
    static const conv_kind kinds[2] = {CONV_TRANSPOSE, CONV_FWD};
    static const int ops[2][2] = {{1, -1}, {0, -1}};
    static const char *const names[2] = {"conv_weight_grad_backward", "conv_weight_grad_backward"};
    return run_backward(node, gout, gin, kinds, ops, names);
}

/* ---------------------------------------------------------------- entry points */

static const char *const k_layouts[4][2] = {
    {"", ""}, {"(N,C,L)", "(C,L)"}, {"(N,C,H,W)", "(C,H,W)"}, {"(N,C,D,H,W)", "(C,D,H,W)"}};
static const char *const k_kernels[4] = {"", "kL", "kH,kW", "kD,kH,kW"};

static int64_t arg_at(const int64_t *v, int d, int64_t dflt) { return v ? v[d] : dflt; }

/* Shared checks of conv and conv_transpose: non-NULL, dtypes, ranks, groups,
 * per-dim arguments. *batched tells whether input has its batch dim. */
static cg_status check_common(const char *name, int nsp, cg_tensor *input, cg_tensor *weight, cg_tensor *bias,
                              const int64_t *stride, const int64_t *padding, const int64_t *dilation, int64_t groups,
                              bool transpose, bool *batched) {
    char s1[CG_SHAPE_STR];
    CG_CHECK_S(input && weight, CG_ERR_VALUE, "[%s] input and weight must not be NULL", name);
    cg_tensor *args[3] = {input, weight, bias};
    unsigned amp = cg_amp_cast_mask(&k_conv_schema[CONV_FWD], bias ? 3 : 2, args); /* conv and conv_transpose alike */
    if (cg_check_same(name, bias ? 3 : 2, args, amp)) return cg_last_error();
    /* PyTorch's CPU build: every integer dtype for conv, int64 alone for conv_transpose (Note [Integer conv]) */
    bool ok = cg_dtype_is_floating(input->dtype) ||
              (transpose ? input->dtype == CG_DTYPE_I64 : input->dtype != CG_DTYPE_BOOL);
    CG_CHECK_S(ok, CG_ERR_NOT_IMPLEMENTED, "[%s] not supported for dtype %s", name, cg_dtype_name(input->dtype));
    CG_CHECK_S(input->ndim == nsp + 2 || input->ndim == nsp + 1, CG_ERR_SHAPE,
               "[%s] expected input with %d dims %s or %d %s, got %s", name, nsp + 2, k_layouts[nsp][0], nsp + 1,
               k_layouts[nsp][1], cg_shape_str(s1, input->ndim, input->shape));
    *batched = input->ndim == nsp + 2;
    CG_CHECK_S(weight->ndim == nsp + 2, CG_ERR_SHAPE, "[%s] expected weight with %d dims (out,in/groups,%s), got %s",
               name, nsp + 2, k_kernels[nsp], cg_shape_str(s1, weight->ndim, weight->shape));
    CG_CHECK_S(groups > 0, CG_ERR_VALUE, "[%s] groups must be positive, got %lld", name, (long long)groups);
    for (int d = 0; d < nsp; d++) {
        CG_CHECK_S(arg_at(stride, d, 1) > 0, CG_ERR_VALUE, "[%s] stride must be positive, got %lld in dim %d", name,
                   (long long)arg_at(stride, d, 1), d);
        CG_CHECK_S(arg_at(padding, d, 0) >= 0, CG_ERR_VALUE, "[%s] padding must be non-negative, got %lld in dim %d",
                   name, (long long)arg_at(padding, d, 0), d);
        CG_CHECK_S(arg_at(dilation, d, 1) > 0, CG_ERR_VALUE, "[%s] dilation must be positive, got %lld in dim %d",
                   name, (long long)arg_at(dilation, d, 1), d);
    }
    return CG_OK;
}

static cg_status check_bias(const char *name, cg_tensor *bias, int64_t channels) {
    char s1[CG_SHAPE_STR];
    if (!bias || (bias->ndim == 1 && bias->shape[0] == channels)) return CG_OK;
    return cg_set_error(CG_ERR_SHAPE, "[%s] expected bias of shape (%lld), got %s", name, (long long)channels,
                        cg_shape_str(s1, bias->ndim, bias->shape));
}

/* Run op `kind` on input with a batch dim added when it has none. */
static cg_tensor *run_batched(conv_kind kind, const char *name, const cg_conv_geom *g, cg_tensor *input,
                              cg_tensor *weight, cg_tensor *bias, bool batched) {
    if (batched) return conv_apply(kind, name, g, input, weight, bias, CG_MEMORY_PRESERVE);
    cg_tensor *x = cg_unsqueeze(input, 0);
    cg_tensor *y = x ? conv_apply(kind, name, g, x, weight, bias, CG_MEMORY_PRESERVE) : NULL;
    cg_tensor *r = y ? cg_squeeze_dim(y, 0) : NULL;
    cg_tensor_release(x);
    cg_tensor_release(y);
    return r;
}

/* conv{1,2,3}d; same: padding 'same' (stride must be 1; padding ignored). */
static cg_tensor *conv_nd(const char *name, int nsp, cg_tensor *input, cg_tensor *weight, cg_tensor *bias,
                          const int64_t *stride, const int64_t *padding, const int64_t *dilation, int64_t groups,
                          bool same) {
    bool batched = true;
    char s1[CG_SHAPE_STR], s2[CG_SHAPE_STR], s3[CG_SHAPE_STR], s4[CG_SHAPE_STR];
    if (check_common(name, nsp, input, weight, bias, stride, same ? NULL : padding, dilation, groups, false, &batched))
        return NULL;
    int off = batched ? 1 : 0;
    int64_t cin = input->shape[off], cout = weight->shape[0];
    CG_CHECK(cout % groups == 0, CG_ERR_VALUE, "[%s] out_channels (weight size 0 = %lld) must be divisible by groups = %lld",
             name, (long long)cout, (long long)groups);
    int64_t wcin;
    CG_CHECK(cg_mul_ok(weight->shape[1], groups, &wcin) && wcin == cin, CG_ERR_SHAPE,
             "[%s] given groups=%lld, weight of size %s, expected input %s to have %lld channels, but got %lld channels "
             "instead",
             name, (long long)groups, cg_shape_str(s1, weight->ndim, weight->shape),
             cg_shape_str(s2, input->ndim, input->shape), (long long)(weight->shape[1] * groups), (long long)cin);
    if (check_bias(name, bias, cout)) return NULL;
    cg_conv_geom g = {.nsp = nsp, .cin = cin, .cout = cout, .groups = groups};
    for (int d = 0; d < 3; d++) g.in[d] = g.out[d] = g.k[d] = g.stride[d] = g.dil[d] = 1;
    for (int d = 0; d < nsp; d++) {
        int c = 3 - nsp + d;
        g.in[c] = input->shape[off + 1 + d];
        g.k[c] = weight->shape[2 + d];
        g.stride[c] = arg_at(stride, d, 1);
        g.dil[c] = arg_at(dilation, d, 1);
        int64_t ext, padded; /* dilated kernel extent, padded input size */
        CG_CHECK(cg_mul_ok(g.dil[c], g.k[c] - 1, &ext) && cg_add_ok(ext, 1, &ext), CG_ERR_VALUE,
                 "[%s] dilation %lld with kernel size %lld in dim %d overflows int64", name, (long long)g.dil[c],
                 (long long)g.k[c], d);
        if (same) {
            CG_CHECK(g.stride[c] == 1, CG_ERR_VALUE, "[%s] padding='same' is not supported for strided convolutions",
                     name);
            g.pad[c] = (ext - 1) / 2; /* an odd total puts the extra element on the right */
            g.out[c] = g.in[c];
        } else {
            g.pad[c] = arg_at(padding, d, 0);
            CG_CHECK(cg_add_ok(g.in[c], g.pad[c], &padded) && cg_add_ok(padded, g.pad[c], &padded), CG_ERR_VALUE,
                     "[%s] padding %lld in dim %d overflows int64 with input size %lld", name, (long long)g.pad[c], d,
                     (long long)g.in[c]);
            if (ext > padded) {
                int64_t ks[3], ps[3];
                for (int e = 0; e < nsp; e++) {
                    /* message only: the wrapped value of a later dim is harmless (no UB either) */
                    __builtin_mul_overflow(arg_at(dilation, e, 1), weight->shape[2 + e] - 1, &ks[e]);
                    __builtin_add_overflow(ks[e], 1, &ks[e]);
                    __builtin_mul_overflow(arg_at(padding, e, 0), 2, &ps[e]);
                    __builtin_add_overflow(ps[e], input->shape[off + 1 + e], &ps[e]);
                }
                CG_CHECK(false, CG_ERR_SHAPE,
                         "[%s] kernel size (dilated) %s can't be greater than the padded input size %s (input %s, "
                         "weight %s)",
                         name, cg_shape_str(s1, nsp, ks), cg_shape_str(s2, nsp, ps),
                         cg_shape_str(s3, input->ndim, input->shape), cg_shape_str(s4, weight->ndim, weight->shape));
            }
            g.out[c] = (padded - ext) / g.stride[c] + 1;
        }
    }
    return run_batched(CONV_FWD, name, &g, input, weight, bias, batched);
}

cg_tensor *cg_conv1d(cg_tensor *input, cg_tensor *weight, cg_tensor *bias, const int64_t *stride,
                     const int64_t *padding, const int64_t *dilation, int64_t groups) {
    return conv_nd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups, false);
}
cg_tensor *cg_conv2d(cg_tensor *input, cg_tensor *weight, cg_tensor *bias, const int64_t *stride,
                     const int64_t *padding, const int64_t *dilation, int64_t groups) {
    return conv_nd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups, false);
}
cg_tensor *cg_conv3d(cg_tensor *input, cg_tensor *weight, cg_tensor *bias, const int64_t *stride,
                     const int64_t *padding, const int64_t *dilation, int64_t groups) {
    return conv_nd("conv3d", 3, input, weight, bias, stride, padding, dilation, groups, false);
}
cg_tensor *cg_conv1d_same(cg_tensor *input, cg_tensor *weight, cg_tensor *bias, const int64_t *stride,
                          const int64_t *dilation, int64_t groups) {
    return conv_nd("conv1d", 1, input, weight, bias, stride, NULL, dilation, groups, true);
}
cg_tensor *cg_conv2d_same(cg_tensor *input, cg_tensor *weight, cg_tensor *bias, const int64_t *stride,
                          const int64_t *dilation, int64_t groups) {
    return conv_nd("conv2d", 2, input, weight, bias, stride, NULL, dilation, groups, true);
}
cg_tensor *cg_conv3d_same(cg_tensor *input, cg_tensor *weight, cg_tensor *bias, const int64_t *stride,
                          const int64_t *dilation, int64_t groups) {
    return conv_nd("conv3d", 3, input, weight, bias, stride, NULL, dilation, groups, true);
}

static cg_tensor *conv_transpose_nd(const char *name, int nsp, cg_tensor *input, cg_tensor *weight, cg_tensor *bias,
                                    const int64_t *stride, const int64_t *padding, const int64_t *output_padding,
                                    int64_t groups, const int64_t *dilation) {
    bool batched = true;
    char s1[CG_SHAPE_STR], s2[CG_SHAPE_STR];
    if (check_common(name, nsp, input, weight, bias, stride, padding, dilation, groups, true, &batched)) return NULL;
    int off = batched ? 1 : 0;
    int64_t cin = input->shape[off], cout;
    CG_CHECK(cg_mul_ok(weight->shape[1], groups, &cout), CG_ERR_VALUE,
             "[%s] out_channels (weight size 1 = %lld times groups = %lld) overflow int64", name,
             (long long)weight->shape[1], (long long)groups);
    CG_CHECK(weight->shape[0] % groups == 0, CG_ERR_VALUE,
             "[%s] in_channels (weight size 0 = %lld) must be divisible by groups = %lld", name,
             (long long)weight->shape[0], (long long)groups);
    CG_CHECK(weight->shape[0] == cin, CG_ERR_SHAPE,
             "[%s] given groups=%lld, weight of size %s, expected input %s to have %lld channels, but got %lld channels "
             "instead",
             name, (long long)groups, cg_shape_str(s1, weight->ndim, weight->shape),
             cg_shape_str(s2, input->ndim, input->shape), (long long)weight->shape[0], (long long)cin);
    if (check_bias(name, bias, cout)) return NULL;
    /* the geometry of the conv this op transposes: its input is our output */
    cg_conv_geom g = {.nsp = nsp, .cin = cout, .cout = cin, .groups = groups};
    for (int d = 0; d < 3; d++) g.in[d] = g.out[d] = g.k[d] = g.stride[d] = g.dil[d] = 1;
    for (int d = 0; d < nsp; d++) {
        int c = 3 - nsp + d;
        int64_t op = arg_at(output_padding, d, 0);
        g.out[c] = input->shape[off + 1 + d];
        g.k[c] = weight->shape[2 + d];
        g.stride[c] = arg_at(stride, d, 1);
        g.dil[c] = arg_at(dilation, d, 1);
        g.pad[c] = arg_at(padding, d, 0);
        CG_CHECK(op >= 0 && (op < g.stride[c] || op < g.dil[c]), CG_ERR_VALUE,
                 "[%s] output padding must be non-negative and smaller than either stride or dilation, got "
                 "output_padding=%lld, stride=%lld, dilation=%lld in dim %d",
                 name, (long long)op, (long long)g.stride[c], (long long)g.dil[c], d);
        /* (out - 1) * stride - 2 * pad + dil * (k - 1) + output_padding + 1, checked */
        int64_t a, p2, e;
        CG_CHECK(cg_mul_ok(g.out[c] - 1, g.stride[c], &a) && cg_mul_ok(g.pad[c], 2, &p2) && cg_sub_ok(a, p2, &a) &&
                     cg_mul_ok(g.dil[c], g.k[c] - 1, &e) && cg_add_ok(a, e, &a) && cg_add_ok(a, op, &a) &&
                     cg_add_ok(a, 1, &g.in[c]),
                 CG_ERR_VALUE, "[%s] output size in dim %d overflows int64 (stride %lld, padding %lld, dilation %lld)",
                 name, d, (long long)g.stride[c], (long long)g.pad[c], (long long)g.dil[c]);
        CG_CHECK(g.in[c] > 0, CG_ERR_SHAPE, "[%s] computed output size %lld is too small in dim %d (input %s, weight %s)",
                 name, (long long)g.in[c], d, cg_shape_str(s1, input->ndim, input->shape),
                 cg_shape_str(s2, weight->ndim, weight->shape));
    }
    return run_batched(CONV_TRANSPOSE, name, &g, input, weight, bias, batched);
}

cg_tensor *cg_conv_transpose1d(cg_tensor *input, cg_tensor *weight, cg_tensor *bias, const int64_t *stride,
                               const int64_t *padding, const int64_t *output_padding, int64_t groups,
                               const int64_t *dilation) {
    return conv_transpose_nd("conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding, groups,
                             dilation);
}
cg_tensor *cg_conv_transpose2d(cg_tensor *input, cg_tensor *weight, cg_tensor *bias, const int64_t *stride,
                               const int64_t *padding, const int64_t *output_padding, int64_t groups,
                               const int64_t *dilation) {
    return conv_transpose_nd("conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding, groups,
                             dilation);
}
cg_tensor *cg_conv_transpose3d(cg_tensor *input, cg_tensor *weight, cg_tensor *bias, const int64_t *stride,
                               const int64_t *padding, const int64_t *output_padding, int64_t groups,
                               const int64_t *dilation) {
    return conv_transpose_nd("conv_transpose3d", 3, input, weight, bias, stride, padding, output_padding, groups,
                             dilation);
}
