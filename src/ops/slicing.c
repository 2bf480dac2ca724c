/* slicing.c — views that select part of a tensor: narrow, slice (with step),
 * select, diagonal, as_strided, unfold. Their common backward scatters the
 * gradient into zeros of the input's shape through the same geometry
 * (Note [Strided scatter]; the accumulation is the device's strided_accumulate
 * entry, the CPU's in src/backend/cpu/slicing.c); its own backward is the view
 * again, so every slicing view is differentiable to any order. */
#include "views_internal.h"

#include <stdlib.h>
#include <string.h>

/* Note [Strided scatter]: the view's geometry is recorded relative to a
 * contiguous tensor of the input's shape (node->iattr: ndim, shape, strides,
 * offset). Backward: z = zeros(input shape); as_strided(z, geometry) += g,
 * accumulated sequentially so overlapping windows (unfold, as_strided) sum. */

typedef struct geom {
    int ndim;
    int64_t shape[CG_MAX_DIMS], strides[CG_MAX_DIMS], offset;
} geom;

static void geom_store(cg_node *n, const geom *g) {
    n->iattr[0] = g->ndim;
    n->iattr[1] = g->offset;
    for (int i = 0; i < g->ndim; i++) {
        n->iattr[2 + i] = g->shape[i];
        n->iattr[2 + CG_MAX_DIMS + i] = g->strides[i];
    }
}
static void geom_load(const cg_node *n, geom *g) {
    g->ndim = (int)n->iattr[0];
    g->offset = n->iattr[1];
    for (int i = 0; i < g->ndim; i++) {
        g->shape[i] = n->iattr[2 + i];
        g->strides[i] = n->iattr[2 + CG_MAX_DIMS + i];
    }
}

static cg_tensor *restride(cg_tensor *x, const geom *g);

/* backward of the scatter: gather through the geometry again */
static cg_status scatter_backward(cg_node *node, cg_tensor *const *gout, cg_tensor **gin) {
    geom g;
    geom_load(node, &g);
    cg_tensor *c = cg_contiguous(gout[0]);
    if (!c) return cg_last_error();
    gin[0] = restride(c, &g);
    cg_tensor_release(c);
    return gin[0] ? CG_OK : cg_last_error();
}

/* z = zeros(in shape); as_strided(z, g) += grad; differentiable (ScatterBackward) */
static cg_tensor *strided_scatter(cg_tensor *grad, const cg_tensor_meta *in, const geom *g) {
    cg_tensor *z = cg_zeros(in->ndim, in->shape, grad->dtype, grad->device);
    if (!z) return NULL;
    cg_tensor *zv = cg_tensor_view_of(z, g->ndim, g->shape, g->strides, g->offset);
    if (!zv) {
        cg_tensor_release(z);
        return NULL;
    }
    cg_tensor *args[2] = {zv, grad};
    cg_iter it;
    cg_iter_init(&it, 2, args, zv->ndim, zv->shape);
    cg_status st;
    CG_RUN_KERNEL(st, "as_strided_scatter", z->device, strided_accumulate, z->device, &it, grad->dtype);
    cg_tensor_release(zv);
    if (st) {
        cg_tensor_release(z);
        return NULL;
    }
    bool failed;
    cg_node *node = cg_wire_unary_output("AsStridedScatterBackward0", scatter_backward, NULL, 1, &grad, z, 0, &failed);
    if (failed) {
        cg_tensor_release(z);
        return NULL;
    }
    if (node) geom_store(node, g);
    return z;
}

static cg_status slice_backward(cg_node *node, cg_tensor *const *gout, cg_tensor **gin) {
    geom g;
    geom_load(node, &g);
    return (gin[0] = strided_scatter(gout[0], &node->input_meta[0], &g)) ? CG_OK : cg_last_error();
}

/* Make the view of x with geometry `v` (storage-relative), recording the
 * geometry relative to a contiguous input for the backward. */
static cg_tensor *slicing_view(cg_tensor *x, const char *node_name, int ndim, const int64_t *shape,
                               const int64_t *strides, int64_t offset, const geom *rel) {
    cg_tensor *v = cg_make_view(x, ndim, shape, strides, offset, node_name, slice_backward, NULL, 0);
    if (v && v->grad_fn && v->grad_fn->backward == slice_backward) geom_store(v->grad_fn, rel);
    return v;
}

/* apply a relative geometry to x (any layout): x's strides composed with it */
static cg_tensor *restride(cg_tensor *x, const geom *g) {
    /* g is expressed for a contiguous tensor of x's shape; x here is contiguous */
    return slicing_view(x, "AsStridedBackward0", g->ndim, g->shape, g->strides, x->offset + g->offset, g);
}

/* The relative geometry of a view built by `build` from x's own strides:
 * run the same construction on contiguous strides. */
typedef void (*geom_builder)(int nd, const int64_t *shape, const int64_t *strides, int64_t offset, const int64_t *args,
                             geom *out);

static cg_tensor *build_view(cg_tensor *x, const char *node_name, geom_builder build, const int64_t *args) {
    geom real, rel;
    int64_t cst[CG_MAX_DIMS];
    build(x->ndim, x->shape, x->strides, x->offset, args, &real);
    cg_contiguous_strides(x->ndim, x->shape, cst);
    build(x->ndim, x->shape, cst, 0, args, &rel);
    return slicing_view(x, node_name, real.ndim, real.shape, real.strides, real.offset, &rel);
}

/* ---------------------------------------------------------------- slice / narrow */

/* args: dim, start, stop, step (already normalised) */
static void slice_geom(int nd, const int64_t *shape, const int64_t *strides, int64_t offset, const int64_t *a, geom *g) {
    int64_t d = a[0], start = a[1], stop = a[2], step = a[3];
    g->ndim = nd;
    memcpy(g->shape, shape, sizeof(int64_t) * (size_t)nd);
    memcpy(g->strides, strides, sizeof(int64_t) * (size_t)nd);
    g->shape[d] = stop > start ? (stop - start - 1) / step + 1 : 0; /* no overflow for any step */
    g->strides[d] = strides[d] * step;
    g->offset = offset + (g->shape[d] ? start * strides[d] : 0);
}

CG_PROF_FN(cg_tensor *, cg_slice, "slice", (cg_tensor *t, int64_t dim, int64_t start, int64_t stop, int64_t step), (t,
           dim, start, stop, step), t) {
    CG_CHECK(t, CG_ERR_VALUE, "[slice] argument is NULL");
    CG_CHECK(t->ndim > 0, CG_ERR_INDEX, "[slice] cannot slice a 0-d tensor");
    int64_t d;
    if (cg_wrap_dim("slice", dim, t->ndim, &d)) return NULL;
    CG_CHECK(step > 0, CG_ERR_VALUE, "[slice] slice step must be positive, got %lld", (long long)step);
    int64_t n = t->shape[d];
    if (start < 0) start += n;
    if (stop < 0) stop += n;
    start = start < 0 ? 0 : start > n ? n : start;
    stop = stop < start ? start : stop > n ? n : stop;
    int64_t a[4] = {d, start, stop, step};
    return build_view(t, "SliceBackward0", slice_geom, a);
}

CG_PROF_FN(cg_tensor *, cg_narrow, "narrow", (cg_tensor *t, int64_t dim, int64_t start, int64_t length), (t, dim, start,
           length), t) {
    CG_CHECK(t, CG_ERR_VALUE, "[narrow] argument is NULL");
    CG_CHECK(t->ndim > 0, CG_ERR_INDEX, "[narrow] cannot be applied to a 0-dim tensor");
    int64_t d;
    if (cg_wrap_dim("narrow", dim, t->ndim, &d)) return NULL;
    int64_t n = t->shape[d];
    if (start < 0 && start >= -n) start += n;
    CG_CHECK(start >= 0 && start <= n, CG_ERR_INDEX, "[narrow] start (%lld) is out of bounds for dimension %lld of size %lld",
             (long long)start, (long long)d, (long long)n);
    CG_CHECK(length >= 0 && length <= n - start, CG_ERR_INDEX,
             "[narrow] start (%lld) + length (%lld) exceeds dimension size (%lld)", (long long)start, (long long)length, (long long)n);
    int64_t a[4] = {d, start, start + length, 1};
    return build_view(t, "NarrowBackward0", slice_geom, a);
}

/* ---------------------------------------------------------------- select */

static void select_geom(int nd, const int64_t *shape, const int64_t *strides, int64_t offset, const int64_t *a, geom *g) {
    int64_t d = a[0], idx = a[1];
    g->ndim = 0;
    for (int i = 0; i < nd; i++) {
        if (i == d) continue;
        g->shape[g->ndim] = shape[i];
        g->strides[g->ndim++] = strides[i];
    }
    g->offset = offset + idx * strides[d];
}

CG_PROF_FN(cg_tensor *, cg_select, "select", (cg_tensor *t, int64_t dim, int64_t index), (t, dim, index), t) {
    CG_CHECK(t, CG_ERR_VALUE, "[select] argument is NULL");
    CG_CHECK(t->ndim > 0, CG_ERR_INDEX, "[select] cannot be applied to a 0-dim tensor");
    int64_t d;
    if (cg_wrap_dim("select", dim, t->ndim, &d)) return NULL;
    int64_t n = t->shape[d];
    CG_CHECK(index >= -n && index < n, CG_ERR_INDEX, "[select] index %lld is out of bounds for dimension %lld with size %lld",
             (long long)index, (long long)d, (long long)n);
    if (index < 0) index += n;
    int64_t a[2] = {d, index};
    return build_view(t, "SelectBackward0", select_geom, a);
}

/* ---------------------------------------------------------------- diagonal */

static void diag_geom(int nd, const int64_t *shape, const int64_t *strides, int64_t offset, const int64_t *a, geom *g) {
    int64_t off = a[0], d1 = a[1], d2 = a[2];
    int64_t len;
    if (off >= 0) len = shape[d2] - off < shape[d1] ? shape[d2] - off : shape[d1];
    else len = shape[d1] + off < shape[d2] ? shape[d1] + off : shape[d2];
    if (len < 0) len = 0;
    g->offset = offset;
    if (len > 0) g->offset += off >= 0 ? off * strides[d2] : -off * strides[d1];
    g->ndim = 0;
    for (int i = 0; i < nd; i++) {
        if (i == d1 || i == d2) continue;
        g->shape[g->ndim] = shape[i];
        g->strides[g->ndim++] = strides[i];
    }
    g->shape[g->ndim] = len;
    g->strides[g->ndim++] = strides[d1] + strides[d2];
}

CG_PROF_FN(cg_tensor *, cg_diagonal, "diagonal", (cg_tensor *t, int64_t offset, int64_t dim1, int64_t dim2), (t, offset,
           dim1, dim2), t) {
    CG_CHECK(t, CG_ERR_VALUE, "[diagonal] argument is NULL");
    CG_CHECK(t->ndim >= 2, CG_ERR_SHAPE, "[diagonal] expects a tensor with at least 2 dimensions, got %d", t->ndim);
    int64_t d1, d2;
    if (cg_wrap_dim("diagonal", dim1, t->ndim, &d1) || cg_wrap_dim("diagonal", dim2, t->ndim, &d2)) return NULL;
    CG_CHECK(d1 != d2, CG_ERR_VALUE, "[diagonal] dimensions cannot be identical %lld, %lld", (long long)dim1, (long long)dim2);
    int64_t a[3] = {offset, d1, d2};
    return build_view(t, "DiagonalBackward0", diag_geom, a);
}

/* ---------------------------------------------------------------- unfold */

static void unfold_geom(int nd, const int64_t *shape, const int64_t *strides, int64_t offset, const int64_t *a, geom *g) {
    int64_t d = a[0], size = a[1], step = a[2];
    g->ndim = nd + 1;
    memcpy(g->shape, shape, sizeof(int64_t) * (size_t)nd);
    memcpy(g->strides, strides, sizeof(int64_t) * (size_t)nd);
    if (nd == 0) {
        g->ndim = 1;
        g->shape[0] = size;
        g->strides[0] = 1;
    } else {
        g->shape[d] = (shape[d] - size) / step + 1;
        g->strides[d] = strides[d] * step;
        g->shape[nd] = size;
        g->strides[nd] = strides[d];
    }
    g->offset = offset;
}

CG_PROF_FN(cg_tensor *, cg_unfold, "unfold", (cg_tensor *t, int64_t dim, int64_t size, int64_t step), (t, dim, size,
           step), t) {
    CG_CHECK(t, CG_ERR_VALUE, "[unfold] argument is NULL");
    int64_t d;
    if (cg_wrap_dim("unfold", dim, t->ndim, &d)) return NULL;
    int64_t n = t->ndim ? t->shape[d] : 1;
    CG_CHECK(size >= 0 && size <= n, CG_ERR_SHAPE, "[unfold] maximum size for tensor at dimension %lld is %lld but size is %lld",
             (long long)d, (long long)n, (long long)size);
    CG_CHECK(step > 0, CG_ERR_VALUE, "[unfold] step is %lld but must be > 0", (long long)step);
    CG_CHECK(t->ndim < CG_MAX_DIMS, CG_ERR_SHAPE, "[unfold] result rank would exceed %d", CG_MAX_DIMS);
    int64_t a[3] = {d, size, step};
    return build_view(t, "UnfoldBackward0", unfold_geom, a);
}

/* ---------------------------------------------------------------- as_strided */

/* Note [General as_strided backward]: as_strided of an input whose region
 * does not hold the view (another offset, a non-contiguous or overlapping
 * input) takes PyTorch's as_strided_backward: both geometries are expressed
 * on a stand-in for the storage, a 1-D tensor covering both from the lower of
 * their offsets; the gradient is scattered (summed where the view overlaps)
 * into zeros of it through the view's geometry and read back through the
 * input's, divided, when the input reaches an element more than once, by
 * how many times it does. Elements of the view outside the input's region
 * get no gradient. Every step is a differentiable cg op. */
typedef struct strided_geoms {
    geom out, inp;     /* relative to the stand-in's element 0 */
    int64_t base_size; /* the stand-in's elements */
    bool inp_overlap;
} strided_geoms;

static int64_t min_storage_size(const geom *g) {
    int64_t n = g->offset + 1;
    for (int i = 0; i < g->ndim; i++) {
        if (g->shape[i] == 0) return g->offset;
        n += (g->shape[i] - 1) * g->strides[i];
    }
    return n;
}

/* PyTorch's _maybe_overlapping_memory: may two indices reach one element? */
static bool maybe_overlapping(const geom *g) {
    int idx[CG_MAX_DIMS], n = 0;
    for (int i = 0; i < g->ndim; i++) {
        if (g->shape[i] == 0) return false;
        if (g->shape[i] > 1) idx[n++] = i;
    }
    for (int i = 1; i < n; i++) /* sort by stride */
        for (int j = i; j > 0 && g->strides[idx[j - 1]] > g->strides[idx[j]]; j--) {
            int k = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = k;
        }
    int64_t max_index = 0;
    for (int i = 0; i < n; i++) {
        int64_t st = g->strides[idx[i]];
        if (st <= max_index) return true;
        max_index += st * (g->shape[idx[i]] - 1);
    }
    return false;
}

static cg_status as_strided_general_backward(cg_node *node, cg_tensor *const *gout, cg_tensor **gin) {
    const strided_geoms *a = node->extra;
    cg_tensor_meta sm = {.ndim = 1, .dtype = gout[0]->dtype, .device = gout[0]->device, .shape = {a->base_size}};
    cg_tensor *s = strided_scatter(gout[0], &sm, &a->out);
    if (!s) return cg_last_error();
    if (a->inp_overlap) {
        bool prev = cg_set_grad_enabled(false);
        double one = 1.0;
        cg_tensor *ones = cg_ones(a->inp.ndim, a->inp.shape, gout[0]->dtype, gout[0]->device);
        cg_tensor *cnt = ones ? strided_scatter(ones, &sm, &a->inp) : NULL;
        /* elements the input does not reach count 1 (they are not read back) */
        cg_tensor *div = cnt ? cg_clamp_scalar(cnt, &one, NULL) : NULL;
        cg_set_grad_enabled(prev);
        cg_tensor_release(ones);
        cg_tensor_release(cnt);
        cg_tensor *q = div ? cg_div(s, div) : NULL;
        cg_tensor_release(div);
        cg_tensor_release(s);
        if (!(s = q)) return cg_last_error();
    }
    gin[0] = restride(s, &a->inp);
    cg_tensor_release(s);
    return gin[0] ? CG_OK : cg_last_error();
}

/* the view (ndim, shape, strides, storage_offset) of x with the general backward */
static cg_tensor *as_strided_general(cg_tensor *x, int ndim, const int64_t *shape, const int64_t *strides,
                                     int64_t storage_offset) {
    cg_tensor *v = cg_make_view(x, ndim, shape, strides, storage_offset, "AsStridedBackward0",
                                as_strided_general_backward, NULL, 0);
    if (!v || !v->grad_fn || v->grad_fn->backward != as_strided_general_backward) return v;
    strided_geoms *a = malloc(sizeof *a);
    if (!a) {
        cg_tensor_release(v);
        cg_set_error(CG_ERR_OOM, "[as_strided] out of memory");
        return NULL;
    }
    int64_t shared = storage_offset < x->offset ? storage_offset : x->offset;
    a->out.ndim = ndim;
    a->out.offset = storage_offset - shared;
    memcpy(a->out.shape, shape, sizeof(int64_t) * (size_t)ndim);
    memcpy(a->out.strides, strides, sizeof(int64_t) * (size_t)ndim);
    a->inp.ndim = x->ndim;
    a->inp.offset = x->offset - shared;
    memcpy(a->inp.shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
    memcpy(a->inp.strides, x->strides, sizeof(int64_t) * (size_t)x->ndim);
    int64_t b1 = min_storage_size(&a->inp), b2 = min_storage_size(&a->out);
    a->base_size = b1 > b2 ? b1 : b2;
    a->inp_overlap = maybe_overlapping(&a->inp);
    v->grad_fn->extra = a;
    v->grad_fn->extra_free = free;
    return v;
}

CG_PROF_FN(cg_tensor *, cg_as_strided, "as_strided", (cg_tensor *t, int ndim, const int64_t *shape,
           const int64_t *strides, int64_t storage_offset), (t, ndim, shape, strides, storage_offset), t) {
    CG_CHECK(t, CG_ERR_VALUE, "[as_strided] argument is NULL");
    if (cg_shape_check("as_strided", ndim, shape, cg_dtype_size(t->dtype), NULL)) return NULL;
    CG_CHECK(storage_offset >= 0, CG_ERR_VALUE, "[as_strided] negative storage offset %lld", (long long)storage_offset);
    int64_t numel = cg_shape_numel(ndim, shape), lo, hi;
    for (int i = 0; i < ndim; i++)
        CG_CHECK(strides[i] >= 0, CG_ERR_VALUE, "[as_strided] negative strides are not supported (dim %d)", i);
    char sb[CG_SHAPE_STR], tb[CG_SHAPE_STR];
    CG_CHECK(cg_strided_extent(ndim, shape, strides, storage_offset, &lo, &hi), CG_ERR_VALUE,
             "[as_strided] size %s, stride %s and storage offset %lld are out of bounds: the largest element "
             "offset overflows int64", cg_shape_str(sb, ndim, shape), cg_shape_str(tb, ndim, strides),
             (long long)storage_offset);
    /* the view's bytes must also be addressable: (hi + 1) * itemsize fits */
    int64_t isz = (int64_t)cg_dtype_size(t->dtype), end_bytes;
    CG_CHECK(numel == 0 || (cg_add_ok(hi, 1, &end_bytes) && cg_mul_ok(end_bytes, isz, &end_bytes)), CG_ERR_VALUE,
             "[as_strided] size %s, stride %s and storage offset %lld are out of bounds: the byte offset "
             "overflows int64",
             cg_shape_str(sb, ndim, shape), cg_shape_str(tb, ndim, strides), (long long)storage_offset);
    /* the storage's size, on every device alike (a meta storage has one too) */
    int64_t cap = (int64_t)(t->storage->nbytes / (size_t)isz);
    CG_CHECK(numel == 0 || hi < cap, CG_ERR_INDEX,
             "[as_strided] setStorage: sizes %s, strides %s and storage offset %lld are out of bounds for a storage "
             "of %lld elements", cg_shape_str(sb, ndim, shape), cg_shape_str(tb, ndim, strides),
             (long long)storage_offset, (long long)cap);
    /* an empty view may start anywhere, past the storage's end included, as in PyTorch: it reads nothing */
    geom rel = {ndim, {0}, {0}, storage_offset - t->offset};
    memcpy(rel.shape, shape, sizeof(int64_t) * (size_t)ndim);
    memcpy(rel.strides, strides, sizeof(int64_t) * (size_t)ndim);
    if (cg_any_requires_grad(1, &t) && (!cg_tensor_is_contiguous(t) || rel.offset < 0 ||
                                        (numel && hi - t->offset >= cg_tensor_numel(t))))
        return as_strided_general(t, ndim, shape, strides, storage_offset); /* Note [General as_strided backward] */
    return slicing_view(t, "AsStridedBackward0", ndim, shape, strides, storage_offset, &rel);
}
