/* nn_pool.c — pooling ops: max_pool1d/2d/3d and adaptive_max_pool1d/2d/3d
 * (values + int64 argmax indices), avg_pool1d/2d/3d and
 * adaptive_avg_pool1d/2d/3d. One window geometry (Note [Pool windows]) serves
 * all of them, in the planar or the channels-last layout (Note
 * [Channels-last pool]). Max pool's
 * backward scatters g to the argmax with scatter_add (differentiable: its
 * backward gathers); avg pool and its backward are a pair of linear ops,
 * each the other's backward, so every pool has gradients of any order.
 * Kernels: the device's pool entries (Note [Kernel entries]; the CPU's are
 * src/backend/cpu/pool.c). */
#include "../dispatch/dispatch_internal.h"

#include <string.h>

/* The window geometry: cg_pool_geom, Note [Pool windows] (src/backend/kernels.h). */
typedef cg_pool_geom pool_geom;

static void geom_pack(const pool_geom *g, int64_t *ia) {
    ia[0] = g->nsp;
    ia[1] = g->adaptive;
    ia[2] = g->count_include_pad;
    ia[3] = g->divisor;
    ia[23] = g->channels; /* ia[22]: max pool's tap-code flag */
    for (int c = 0; c < 3; c++) {
        ia[4 + c] = g->in[c];
        ia[7 + c] = g->out[c];
        ia[10 + c] = g->k[c];
        ia[13 + c] = g->s[c];
        ia[16 + c] = g->p[c];
        ia[19 + c] = g->d[c];
    }
}

static void geom_unpack(const int64_t *ia, pool_geom *g) {
    g->nsp = (int)ia[0];
    g->adaptive = ia[1] != 0;
    g->count_include_pad = ia[2] != 0;
    g->divisor = ia[3];
    g->channels = ia[23];
    for (int c = 0; c < 3; c++) {
        g->in[c] = ia[4 + c];
        g->out[c] = ia[7 + c];
        g->k[c] = ia[10 + c];
        g->s[c] = ia[13 + c];
        g->p[c] = ia[16 + c];
        g->d[c] = ia[19 + c];
    }
}


/* ---------------------------------------------------------------- running a kernel */

/* Shape of t with its nsp spatial dims replaced by sp (canonical 3-D). */
static int with_spatial(const cg_tensor *t, int nsp, const int64_t sp[3], int64_t *shape) {
    int lead = t->ndim - nsp;
    memcpy(shape, t->shape, sizeof(int64_t) * (size_t)lead);
    for (int d = 0; d < nsp; d++) shape[lead + d] = sp[3 - nsp + d];
    return t->ndim;
}


/* Note [Channels-last pool]: PyTorch keeps the memory format through
 * pooling. A batched input whose suggested memory format is channels_last
 * (channels_last_3d) gets outputs, indices and input gradients in that
 * layout; the op then runs the channels-last kernels (g->channels = C) on
 * the (N, spatial..., C) memory as stored, without a layout copy. Which ops
 * do so follows PyTorch 2.x's CPU kernels, shape quirks included:
 *   - the 2-D pools, on suggest_memory_format(x) == channels_last;
 *   - the 1-D pools are PyTorch's 2-D ones of x.unsqueeze(-2), so they follow
 *     the suggested format of that view (strides (L*C, 1, C) count), except
 *     max_pool1d with neither indices nor a graph (its own, planar kernel);
 *   - of the 3-D pools only max_pool3d (avg_pool3d and the adaptive ones
 *     make the input contiguous and return contiguous results);
 *   - an adaptive avg pool to all-1 output sizes is PyTorch's mean over the
 *     spatial dims: its output takes channels-last strides, its gradient
 *     comes back contiguous (so the node records the planar geometry).
 * The unbatched forms are planar. Every operand is made dense in the chosen
 * layout (pool_dense: a no-op for the usual inputs). */
static bool pool_suggests_channels_last(const cg_tensor *x, int nsp) {
    if (x->ndim != nsp + 2) return false;
    if (nsp == 1) { /* x.unsqueeze(-2): the new dim's stride is L * stride(L), as PyTorch's */
        int64_t sh[4] = {x->shape[0], x->shape[1], 1, x->shape[2]};
        int64_t st[4] = {x->strides[0], x->strides[1], x->shape[2] * x->strides[2], x->strides[2]};
        return cg_strides_suggest_memory_format(4, sh, st) == CG_MEMORY_CHANNELS_LAST;
    }
    return cg_tensor_suggest_memory_format(x) != CG_MEMORY_CONTIGUOUS;
}

static bool unit_output(const pool_geom *g) { return g->out[0] == 1 && g->out[1] == 1 && g->out[2] == 1; }

/* g->channels for input x (Note [Channels-last pool]); max_recorded: a max pool whose indices are wanted
 * or whose graph is recorded */
static void pool_choose_layout(pool_geom *g, const cg_tensor *x, bool is_max, bool max_recorded) {
    g->channels = 0;
    if (!pool_suggests_channels_last(x, g->nsp)) return;
    if (g->nsp == 3 && !(is_max ? !g->adaptive : g->adaptive && unit_output(g))) return;
    if (g->nsp == 1 && is_max && !g->adaptive && !max_recorded) return;
    g->channels = x->shape[1];
}

/* The dense strides of shape in g's layout: contiguous, or channels-last (C innermost, then the spatial
 * dims from the last, then N) */
static void pool_strides(const pool_geom *g, int ndim, const int64_t *shape, int64_t *st) {
    if (!g->channels) {
        cg_contiguous_strides(ndim, shape, st);
        return;
    }
    int perm[CG_MAX_DIMS];
    perm[0] = 0;
    for (int d = 1; d < ndim - 1; d++) perm[d] = d + 1;
    perm[ndim - 1] = 1;
    cg_permuted_strides(ndim, shape, perm, st);
}

/* A new tensor of shape laid out in g's layout */
static cg_tensor *pool_new(const char *name, const pool_geom *g, int ndim, const int64_t *shape, cg_dtype dt,
                           cg_device dev) {
    int64_t st[CG_MAX_DIMS];
    pool_strides(g, ndim, shape, st);
    return cg_tensor_new_strided(name, ndim, shape, st, dt, dev);
}

/* t as dtype dt, dense in g's layout: t itself (a new reference) when it already is, else a copy
 * (not recorded: callers run it with grad mode off) */
static cg_tensor *pool_dense(const char *name, const pool_geom *g, cg_tensor *t, cg_dtype dt) {
    int64_t st[CG_MAX_DIMS];
    pool_strides(g, t->ndim, t->shape, st);
    bool ok = t->dtype == dt;
    for (int d = 0; d < t->ndim && ok; d++) ok = t->shape[d] == 1 || t->strides[d] == st[d];
    if (ok) {
        cg_tensor_retain(t);
        return t;
    }
    cg_tensor *c = cg_tensor_new_strided(name, t->ndim, t->shape, st, dt, t->device);
    if (c && cg_copy_(c, t)) cg_tensor_release(c), c = NULL;
    return c;
}

/* Run pool kernel `kind` from src into dst (and idx), both allocated in g's layout; half types compute in
 * float32. */
static cg_status pool_run(const char *name, cg_pool_kind kind, const pool_geom *g, cg_tensor *src, cg_tensor *dst,
                          cg_tensor *idx) {
    cg_dtype dt = dst->dtype, cdt = dt == CG_DTYPE_F64 ? CG_DTYPE_F64 : CG_DTYPE_F32;
    if (!cg_dtype_is_floating(dt)) cdt = CG_DTYPE_I64; /* exact (Note [Integer pool], src/backend/cpu/pool.c) */
    bool prev = cg_set_grad_enabled(false);
    cg_status st = CG_OK;
    cg_tensor *sc = pool_dense(name, g, src, cdt), *dw = NULL;
    if (!sc) goto fail;
    if (cdt == dt) {
        cg_tensor_retain(dst);
        dw = dst;
    } else if (!(dw = pool_new(name, g, dst->ndim, dst->shape, cdt, dst->device))) {
        goto fail;
    }
    CG_RUN_KERNEL(st, name, dw->device, pool, kind, g, dw, idx, sc);
    if (!st && dw != dst) st = cg_copy_(dst, dw);
    goto done;
fail:
    st = cg_last_error();
done:
    cg_tensor_release(sc);
    cg_tensor_release(dw);
    cg_set_grad_enabled(prev);
    return st;
}
/* ---------------------------------------------------------------- avg pool (a pair of linear ops) */

static cg_status avg_backward(cg_node *node, cg_tensor *const *gout, cg_tensor **gin);
static cg_status avg_back_backward(cg_node *node, cg_tensor *const *gout, cg_tensor **gin);

static const cg_op_schema k_avg_schema = {"avg_pool", "AvgPoolBackward0", 1, CG_AMP_KEEP, false, false, false};
static const cg_op_schema k_avg_back_schema = {"avg_pool_backward", "AvgPoolBackwardBackward0", 1, CG_AMP_KEEP, false,
                                               false, false};

static const char *avg_node_name(const pool_geom *g) {
    static const char *const names[2][4] = {
        {"", "AvgPool1DBackward0", "AvgPool2DBackward0", "AvgPool3DBackward0"},
        {"", "AdaptiveAvgPool1DBackward0", "AdaptiveAvgPool2DBackward0", "AdaptiveAvgPool3DBackward0"}};
    return names[g->adaptive][g->nsp];
}

/* back = false: t (lead..., in...) -> avg (lead..., out...);
 * back = true:  t (lead..., out...) -> its adjoint (lead..., in...). */
static cg_tensor *avg_body(bool back, const char *name, const pool_geom *g, cg_tensor *t) {
    /* int64 forward only (Note [Integer pool]): PyTorch's CPU build has no other integer avg pool */
    bool ok = cg_dtype_is_floating(t->dtype) || (t->dtype == CG_DTYPE_I64 && !back && !g->adaptive);
    CG_CHECK(ok, CG_ERR_NOT_IMPLEMENTED, "[%s] not supported for dtype %s", name, cg_dtype_name(t->dtype));
    const int64_t *from = back ? g->out : g->in, *to = back ? g->in : g->out;
    int64_t expect[CG_MAX_DIMS], shape[CG_MAX_DIMS];
    char s1[CG_SHAPE_STR], s2[CG_SHAPE_STR];
    CG_CHECK(t->ndim > g->nsp, CG_ERR_SHAPE, "[%s] operand of shape %s has too few dims", name,
             cg_shape_str(s1, t->ndim, t->shape));
    int nd = with_spatial(t, g->nsp, from, expect);
    CG_CHECK(cg_shape_eq(nd, expect, t->ndim, t->shape), CG_ERR_SHAPE,
             "[%s] operand of shape %s doesn't match the pooling geometry (expected %s)", name,
             cg_shape_str(s1, t->ndim, t->shape), cg_shape_str(s2, nd, expect));
    with_spatial(t, g->nsp, to, shape);
    const cg_op_schema *sch = back ? &k_avg_back_schema : &k_avg_schema;
    cg_tensor *in;
    bool owned;
    if (cg_schema_guard(sch, 1, &t, &in, &owned)) return NULL;
    cg_tensor *out = pool_new(name, g, nd, shape, in->dtype, in->device);
    if (out && pool_run(name, back ? CG_POOL_AVG_BACKWARD : CG_POOL_AVG, g, in, out, NULL)) {
        cg_tensor_release(out);
        out = NULL;
    }
    if (out) {
        bool failed;
        cg_node *node = cg_wire_unary_output(back ? sch->node_name : avg_node_name(g),
                                             back ? avg_back_backward : avg_backward, sch, 1, &in, out, 0, &failed);
        if (node) {
            pool_geom gn = *g;
            if (!back && g->adaptive && unit_output(g)) gn.channels = 0; /* Note [Channels-last pool]: a mean */
            geom_pack(&gn, node->iattr);
        }
        if (failed) {
            cg_tensor_release(out);
            out = NULL;
        }
    }
    if (owned) cg_tensor_release(in);
    return out;
}

/* the call recorded as a profiler event (off the hot path) */
static CG_PROF_COLD cg_tensor *avg_apply_profiled(bool back, const char *name, const pool_geom *g, cg_tensor *t) {
    int64_t ev = cg_prof_begin(name, CG_PROF_OP, 1, &t);
    cg_tensor *r = avg_body(back, name, g, t);
    cg_prof_end(ev, r);
    return r;
}
static cg_tensor *avg_apply(bool back, const char *name, const pool_geom *g, cg_tensor *t) {
    if (cg_prof_active()) return avg_apply_profiled(back, name, g, t);
    return avg_body(back, name, g, t);
}

static cg_status avg_backward(cg_node *node, cg_tensor *const *gout, cg_tensor **gin) {
    pool_geom g;
    geom_unpack(node->iattr, &g);
    gin[0] = avg_apply(true, "avg_pool_backward", &g, gout[0]);
    return gin[0] ? CG_OK : cg_last_error();
}

static cg_status avg_back_backward(cg_node *node, cg_tensor *const *gout, cg_tensor **gin) {
    pool_geom g;
    geom_unpack(node->iattr, &g);
    gin[0] = avg_apply(false, "avg_pool", &g, gout[0]);
    return gin[0] ? CG_OK : cg_last_error();
}

/* ---------------------------------------------------------------- max pool */

static const cg_op_schema k_max_schema = {"max_pool", "MaxPoolBackward0", 1, CG_AMP_KEEP, false, false, false};

/* The flat indices (planes, out) of saved tap codes (Note [2x2 max pool]). */
static cg_tensor *codes_to_index(const pool_geom *g, cg_tensor *codes) {
    cg_tensor *r = cg_tensor_new("max_pool_backward", codes->ndim, codes->shape, CG_DTYPE_I64, codes->device);
    if (!r) return NULL;
    cg_status st;
    CG_RUN_KERNEL(st, "max_pool_backward", r->device, max_pool_codes_to_index, g, r, codes);
    if (st) cg_tensor_release(r), r = NULL;
    return r;
}

/* gx = scatter_add(zeros(planes, P), 1, indices, g) viewed as the input's shape:
 * differentiable (scatter_add's backward gathers). Without create_graph (grad
 * mode off in the backward) one fused pass does the same sums. */
/* gin[0] = gx (computed in float32 for half types: rounded to dt once here, keeping the layout) */
static cg_status max_back_result(cg_tensor *gx, cg_dtype dt, cg_tensor **gin) {
    if (gx && gx->dtype != dt) {
        cg_tensor *r = cg_to_dtype_as(gx, dt, CG_MEMORY_PRESERVE);
        cg_tensor_release(gx);
        gx = r;
    }
    gin[0] = gx;
    return gx ? CG_OK : cg_last_error();
}

/* The fused first-order pass into gx (released, NULL on failure). */
static cg_tensor *max_back_run(const pool_geom *g, cg_tensor *gx, cg_tensor *gc, cg_tensor *idx) {
    cg_status st;
    CG_RUN_KERNEL(st, "max_pool_backward", gx->device, max_pool_backward, g, gx, gc, idx);
    if (st) cg_tensor_release(gx), gx = NULL;
    return gx;
}

/* t (N, C, spatial...) copied into the channels-last layout, differentiably: the (N, spatial..., C)
 * permutation made contiguous, permuted back */
static cg_tensor *relayout(const pool_geom *g, cg_tensor *t) {
    int64_t to[CG_MAX_DIMS], from[CG_MAX_DIMS];
    int nd = t->ndim;
    to[0] = from[0] = 0;
    for (int d = 1; d < nd - 1; d++) to[d] = d + 1, from[d + 1] = d;
    to[nd - 1] = 1, from[1] = nd - 1;
    (void)g;
    cg_tensor *p = cg_permute(t, to), *c = p ? cg_contiguous(p) : NULL, *r = c ? cg_permute(c, from) : NULL;
    cg_tensor_release(p), cg_tensor_release(c);
    return r;
}

static cg_status max_backward(cg_node *node, cg_tensor *const *gout, cg_tensor **gin) {
    const cg_tensor_meta *m = &node->input_meta[0];
    int nsp = (int)node->iattr[0];
    int64_t planes = 1, P = 1;
    for (int d = 0; d < m->ndim; d++) {
        if (d < m->ndim - nsp) planes *= m->shape[d];
        else P *= m->shape[d];
    }
    int64_t L = planes ? cg_tensor_numel(gout[0]) / planes : 0;
    int64_t s2[2] = {planes, L}, z2[2] = {planes, P};
    cg_tensor *idx = cg_node_saved(node, 0);
    cg_dtype dt = gout[0]->dtype;
    /* first order: one fused pass; half types run it in float32 (g converted,
     * the sums rounded once), instead of zeros + scatter_add in half */
    bool half = dt == CG_DTYPE_F16 || dt == CG_DTYPE_BF16;
    bool first = !cg_is_grad_enabled() && (half || dt == CG_DTYPE_F32 || dt == CG_DTYPE_F64);
    cg_dtype cdt = half ? CG_DTYPE_F32 : dt;
    pool_geom g;
    geom_unpack(node->iattr, &g);
    if (idx && node->iattr[22]) { /* tap codes (Note [2x2 max pool]) */
        if (first) {
            cg_tensor *gc = half ? cg_to_dtype(gout[0], cdt) : cg_contiguous(gout[0]);
            cg_tensor *gx = gc ? cg_tensor_new("max_pool_backward", m->ndim, m->shape, cdt, gout[0]->device) : NULL;
            if (gx) gx = max_back_run(&g, gx, gc, idx);
            cg_tensor_release(gc), cg_tensor_release(idx);
            return max_back_result(gx, dt, gin);
        }
        cg_tensor *flat = codes_to_index(&g, idx);
        cg_tensor_release(idx);
        idx = flat;
    }
    if (idx && first) {
        cg_tensor *gc = pool_dense("max_pool_backward", &g, gout[0], cdt);
        cg_tensor *ic = gc ? pool_dense("max_pool_backward", &g, idx, CG_DTYPE_I64) : NULL;
        cg_tensor *gx = ic ? pool_new("max_pool_backward", &g, m->ndim, m->shape, cdt, gout[0]->device) : NULL;
        if (gx) gx = max_back_run(&g, gx, gc, ic);
        cg_tensor_release(gc), cg_tensor_release(ic), cg_tensor_release(idx);
        return max_back_result(gx, dt, gin);
    }
    cg_tensor *i2 = idx ? cg_reshape(idx, 2, s2) : NULL, *g2 = i2 ? cg_reshape(gout[0], 2, s2) : NULL;
    cg_tensor *z = g2 ? cg_zeros(2, z2, gout[0]->dtype, gout[0]->device) : NULL;
    cg_tensor *r = z ? cg_scatter_add(z, 1, i2, g2) : NULL;
    cg_tensor *gx = r ? cg_reshape(r, m->ndim, m->shape) : NULL;
    cg_tensor *tmp[] = {idx, i2, g2, z, r};
    for (int i = 0; i < 5; i++) cg_tensor_release(tmp[i]);
    gin[0] = gx && g.channels ? relayout(&g, gx) : gx; /* the input's layout (Note [Channels-last pool]) */
    if (gin[0] != gx) cg_tensor_release(gx);
    return gin[0] ? CG_OK : cg_last_error();
}

static cg_status max_apply(const char *name, const pool_geom *g, cg_tensor *x, cg_tensor **out, cg_tensor **indices) {
    static const char *const names[2][4] = {
        {"", "MaxPool1DWithIndicesBackward0", "MaxPool2DWithIndicesBackward0", "MaxPool3DWithIndicesBackward0"},
        {"", "AdaptiveMaxPool1DBackward0", "AdaptiveMaxPool2DBackward0", "AdaptiveMaxPool3DBackward0"}};
    int64_t shape[CG_MAX_DIMS];
    int nd = with_spatial(x, g->nsp, g->out, shape);
    bool graph = cg_any_requires_grad(1, &x);
    pool_geom gl = *g;
    pool_choose_layout(&gl, x, true, indices || graph); /* Note [Channels-last pool] */
    g = &gl;
    /* 2x2 planar windows without indices asked for (Note [2x2 max pool]): tap
     * codes for the graph, or nothing when none is recorded; channels-last
     * windows keep int64 indices, or nothing */
    bool two = cg_pool_2x2(g) && !indices;
    bool values_only = (two || g->channels) && !indices && !graph, codes = two && graph;
    cg_tensor *y = pool_new(name, g, nd, shape, x->dtype, x->device);
    cg_tensor *idx = y && !values_only ? pool_new(name, g, nd, shape, codes ? CG_DTYPE_I32 : CG_DTYPE_I64, x->device)
                                       : NULL;
    bool failed = !y || (!values_only && !idx);
    if (!failed) failed = pool_run(name, CG_POOL_MAX, g, x, y, idx) != CG_OK;
    if (!failed) {
        cg_node *node = cg_wire_unary_output(names[g->adaptive][g->nsp], max_backward, &k_max_schema, 1, &x, y, 1,
                                             &failed);
        if (node) {
            geom_pack(g, node->iattr);
            node->iattr[22] = codes;
            failed = cg_node_save(node, 0, idx, false, 0) != CG_OK;
        }
    }
    if (failed) {
        cg_tensor_release(y);
        cg_tensor_release(idx);
        return cg_last_error();
    }
    *out = y;
    if (indices) *indices = idx;
    else cg_tensor_release(idx);
    return CG_OK;
}

/* ---------------------------------------------------------------- validation */

static const char *const k_layouts[4][2] = {
    {"", ""}, {"(N,C,L)", "(C,L)"}, {"(N,C,H,W)", "(C,H,W)"}, {"(N,C,D,H,W)", "(C,D,H,W)"}};

/* input non-NULL, floating, (N,C,spatial) or (C,spatial) with non-empty
 * non-batch dims; fills g->nsp and g->in. */
static cg_status check_input(const char *name, int nsp, cg_tensor *x, bool ints, pool_geom *g) {
    char s1[CG_SHAPE_STR];
    CG_CHECK_S(x, CG_ERR_VALUE, "[%s] input must not be NULL", name);
    /* ints: max pool takes every integer dtype but bool, avg pool int64 (Note [Integer pool]) */
    bool ok = cg_dtype_is_floating(x->dtype) || (ints && x->dtype != CG_DTYPE_BOOL);
    CG_CHECK_S(ok, CG_ERR_NOT_IMPLEMENTED, "[%s] not supported for dtype %s", name, cg_dtype_name(x->dtype));
    CG_CHECK_S(x->ndim == nsp + 1 || x->ndim == nsp + 2, CG_ERR_SHAPE,
               "[%s] expected input with %d dims %s or %d %s, got %s", name, nsp + 2, k_layouts[nsp][0], nsp + 1,
               k_layouts[nsp][1], cg_shape_str(s1, x->ndim, x->shape));
    for (int d = x->ndim - nsp - 1; d < x->ndim; d++)
        CG_CHECK_S(x->shape[d] > 0, CG_ERR_SHAPE, "[%s] expected input with non-zero channel and spatial sizes, got %s",
                   name, cg_shape_str(s1, x->ndim, x->shape));
    memset(g, 0, sizeof *g);
    g->nsp = nsp;
    for (int c = 0; c < 3; c++) g->in[c] = g->out[c] = g->k[c] = g->s[c] = g->d[c] = 1;
    for (int d = 0; d < nsp; d++) g->in[3 - nsp + d] = x->shape[x->ndim - nsp + d];
    return CG_OK;
}

/* Fixed-window geometry (Note [Pool windows]), PyTorch's output size rule. */
static cg_status fixed_geom(const char *name, int nsp, cg_tensor *x, const int64_t *kernel, const int64_t *stride,
                            const int64_t *padding, const int64_t *dilation, bool ceil_mode, pool_geom *g) {
    if (check_input(name, nsp, x, true, g)) return cg_last_error();
    CG_CHECK_S(kernel, CG_ERR_VALUE, "[%s] kernel_size must not be NULL", name);
    char s1[CG_SHAPE_STR], s2[CG_SHAPE_STR];
    for (int d = 0; d < nsp; d++) {
        int c = 3 - nsp + d;
        int64_t k = kernel[d], s = stride ? stride[d] : k, p = padding ? padding[d] : 0, dl = dilation ? dilation[d] : 1;
        CG_CHECK_S(k > 0, CG_ERR_VALUE, "[%s] kernel_size must be positive, got %lld in dim %d", name, (long long)k, d);
        CG_CHECK_S(s > 0, CG_ERR_VALUE, "[%s] stride must be positive, got %lld in dim %d", name, (long long)s, d);
        CG_CHECK_S(dl > 0, CG_ERR_VALUE, "[%s] dilation must be positive, got %lld in dim %d", name, (long long)dl, d);
        CG_CHECK_S(p >= 0 && p <= k / 2, CG_ERR_VALUE,
                   "[%s] pad should be at most half of kernel size, but got pad=%lld and kernel_size=%lld in dim %d", name,
                   (long long)p, (long long)k, d);
        g->k[c] = k;
        g->s[c] = s;
        g->p[c] = p;
        g->d[c] = dl;
        int64_t I = g->in[c];
        /* PyTorch's rule, floor((I + 2p - dl(k-1) - 1 [+ s-1]) / s) + 1, in checked steps */
        int64_t span, padded, o = 0, last;
        CG_CHECK_S(cg_mul_ok(dl, k - 1, &span) && cg_add_ok(span, 1, &span) && cg_add_ok(I, p, &padded) &&
                       cg_add_ok(padded, p, &padded), CG_ERR_VALUE,
                   "[%s] kernel_size %lld, dilation %lld and padding %lld in dim %d overflow int64", name,
                   (long long)k, (long long)dl, (long long)p, d);
        if (padded >= span) {
            int64_t rest = padded - span;
            o = rest / s + (ceil_mode && rest % s ? 1 : 0) + 1;
            if (ceil_mode && o > 1 && (!cg_mul_ok(o - 1, s, &last) || last >= I + p)) o--;
        }
        g->out[c] = o;
    }
    for (int d = 0; d < nsp; d++)
        if (g->out[3 - nsp + d] < 1) {
            int64_t os[3];
            for (int e = 0; e < nsp; e++) os[e] = g->out[3 - nsp + e];
            return cg_set_error(CG_ERR_SHAPE, "[%s] output size is too small: input %s gives output %s", name,
                                cg_shape_str(s1, x->ndim, x->shape), cg_shape_str(s2, nsp, os));
        }
    return CG_OK;
}

static cg_status adaptive_geom(const char *name, int nsp, cg_tensor *x, const int64_t *output_size, pool_geom *g) {
    if (check_input(name, nsp, x, false, g)) return cg_last_error();
    CG_CHECK_S(output_size, CG_ERR_VALUE, "[%s] output_size must not be NULL", name);
    g->adaptive = true;
    for (int d = 0; d < nsp; d++) {
        CG_CHECK_S(output_size[d] >= 0, CG_ERR_VALUE, "[%s] output_size must be non-negative, got %lld in dim %d", name,
                   (long long)output_size[d], d);
        g->out[3 - nsp + d] = output_size[d];
    }
    return CG_OK;
}

/* ---------------------------------------------------------------- entry points */

static cg_status max_pool_nd(const char *name, int nsp, cg_tensor *x, const int64_t *kernel, const int64_t *stride,
                             const int64_t *padding, const int64_t *dilation, bool ceil_mode, cg_tensor **out,
                             cg_tensor **indices) {
    pool_geom g;
    CG_CHECK_S(out, CG_ERR_VALUE, "[%s] out must not be NULL", name);
    if (fixed_geom(name, nsp, x, kernel, stride, padding, dilation, ceil_mode, &g)) return cg_last_error();
    return max_apply(name, &g, x, out, indices);
}

#define MAX_POOL_FN(N)                                                                                           \
    CG_PROF_FN(cg_status, cg_max_pool##N##d, "max_pool" #N "d", (cg_tensor *input, const int64_t *kernel_size,     \
               const int64_t *stride, const int64_t *padding, const int64_t *dilation, bool ceil_mode,            \
               cg_tensor **out, cg_tensor **indices),                                                             \
               (input, kernel_size, stride, padding, dilation, ceil_mode, out, indices), input) {                 \
        return max_pool_nd("max_pool" #N "d", N, input, kernel_size, stride, padding, dilation, ceil_mode, out,  \
                           indices);                                                                              \
    }
MAX_POOL_FN(1)
MAX_POOL_FN(2)
MAX_POOL_FN(3)

static cg_tensor *avg_pool_nd(const char *name, int nsp, cg_tensor *x, const int64_t *kernel, const int64_t *stride,
                              const int64_t *padding, bool ceil_mode, bool count_include_pad, int64_t divisor) {
    pool_geom g;
    if (fixed_geom(name, nsp, x, kernel, stride, padding, NULL, ceil_mode, &g)) return NULL;
    /* divisor 0 means none (the binding refuses an explicit 0, as PyTorch does); a negative one divides */
    g.count_include_pad = count_include_pad;
    g.divisor = divisor;
    pool_choose_layout(&g, x, false, false);
    return avg_apply(false, name, &g, x);
}

#define AVG_POOL_FN(N)                                                                                           \
    cg_tensor *cg_avg_pool##N##d(cg_tensor *input, const int64_t *kernel_size, const int64_t *stride,            \
                                 const int64_t *padding, bool ceil_mode, bool count_include_pad,                 \
                                 int64_t divisor_override) {                                                     \
        return avg_pool_nd("avg_pool" #N "d", N, input, kernel_size, stride, padding, ceil_mode,                 \
                           count_include_pad, divisor_override);                                                 \
    }
AVG_POOL_FN(1)
AVG_POOL_FN(2)
AVG_POOL_FN(3)

static cg_tensor *adaptive_avg_nd(const char *name, int nsp, cg_tensor *x, const int64_t *output_size) {
    pool_geom g;
    if (adaptive_geom(name, nsp, x, output_size, &g)) return NULL;
    pool_choose_layout(&g, x, false, false);
    return avg_apply(false, name, &g, x);
}

static cg_status adaptive_max_nd(const char *name, int nsp, cg_tensor *x, const int64_t *output_size,
                                 cg_tensor **out, cg_tensor **indices) {
    pool_geom g;
    CG_CHECK_S(out, CG_ERR_VALUE, "[%s] out must not be NULL", name);
    if (adaptive_geom(name, nsp, x, output_size, &g)) return cg_last_error();
    return max_apply(name, &g, x, out, indices);
}

#define ADAPTIVE_FNS(N)                                                                                          \
    cg_tensor *cg_adaptive_avg_pool##N##d(cg_tensor *input, const int64_t *output_size) {                        \
        return adaptive_avg_nd("adaptive_avg_pool" #N "d", N, input, output_size);                               \
    }                                                                                                            \
    CG_PROF_FN(cg_status, cg_adaptive_max_pool##N##d, "adaptive_max_pool" #N "d", (cg_tensor *input,             \
               const int64_t *output_size, cg_tensor **out, cg_tensor **indices),                                \
               (input, output_size, out, indices), input) {                                                      \
        return adaptive_max_nd("adaptive_max_pool" #N "d", N, input, output_size, out, indices);                 \
    }
ADAPTIVE_FNS(1)
ADAPTIVE_FNS(2)
ADAPTIVE_FNS(3)
