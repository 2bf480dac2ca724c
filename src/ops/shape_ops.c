/* shape_ops.c — shape ops that are not plain views: cat and stack (through
 * the variadic driver), split / split_sizes / chunk / unbind (views built with
 * narrow / select), flip and roll (copies through a re-strided view of the
 * input). Every backward is written with cg ops, so all are differentiable to
 * any order. repeat / tile / tril / triu live in repeat.c. */
#include "views_internal.h"

#include <string.h>

/* ---------------------------------------------------------------- cat / stack */

/* cat: input i's gradient is narrow(g, dim, offset_i, size_i), a view of g
 * (no copy). stack: select(g, dim, i). Inputs skipped by the legacy (0,) rule
 * get an empty gradient. */
static cg_status cat_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    int64_t dim = node->iattr[0];
    bool new_dim = node->iattr[1] != 0;
    const cg_tensor_meta *om = &node->output_meta[0];
    int64_t off = 0;
    for (int i = 0; i < node->num_inputs; i++) {
        const cg_tensor_meta *m = &node->input_meta[i];
        bool need = cg_node_needs_grad(node, i);
        if (new_dim) {
            if (need && !(gin[i] = cg_select(g[0], dim, i))) return cg_last_error();
            continue;
        }
        if (m->ndim != om->ndim) { /* skipped (0,) input */
            if (need && !(gin[i] = cg_zeros(m->ndim, m->shape, m->dtype, m->device))) return cg_last_error();
            continue;
        }
        int64_t len = m->shape[dim];
        if (need && !(gin[i] = cg_narrow(g[0], dim, off, len))) return cg_last_error();
        off += len;
    }
    return CG_OK;
}

static const cg_variadic_op k_cat = {
    .schema = {"cat", "CatBackward0", 1, CG_AMP_KEEP, false, false, false},
    .new_dim = false,
    .backward = cat_backward,
};
static const cg_variadic_op k_stack = {
    .schema = {"stack", "StackBackward0", 1, CG_AMP_KEEP, false, false, false},
    .new_dim = true,
    .backward = cat_backward,
};

cg_tensor *cg_cat(int n, cg_tensor *const *ts, int64_t dim) { return cg_variadic_forward(&k_cat, n, ts, dim); }
cg_tensor *cg_stack(int n, cg_tensor *const *ts, int64_t dim) { return cg_variadic_forward(&k_stack, n, ts, dim); }

/* ---------------------------------------------------------------- split family */

static cg_status split_dim(const char *op, cg_tensor *t, int64_t dim, int64_t *d) {
    CG_CHECK_S(t, CG_ERR_VALUE, "[%s] argument is NULL", op);
    CG_CHECK_S(t->ndim > 0, CG_ERR_SHAPE, "[%s] expects at least a 1-dimensional tensor", op);
    return cg_wrap_dim(op, dim, t->ndim, d);
}

/* out[k] = narrow(t, d, start_k, sizes[k]); on failure nothing is left in out */
static int narrow_all(cg_tensor *t, int64_t d, int n, const int64_t *sizes, int64_t split_size, cg_tensor **out) {
    int64_t start = 0;
    for (int k = 0; k < n; k++) {
        int64_t len = sizes ? sizes[k] : (t->shape[d] - start < split_size ? t->shape[d] - start : split_size);
        out[k] = cg_narrow(t, d, start, len);
        if (!out[k]) {
            cg_release_all(k, out);
            return -1;
        }
        start += len;
    }
    return n;
}

int cg_split(cg_tensor *t, int64_t split_size, int64_t dim, cg_tensor **out) {
    int64_t d;
    if (split_dim("split", t, dim, &d)) return -1;
    int64_t size = t->shape[d];
    if (split_size < 0) {
        cg_set_error(CG_ERR_VALUE, "[split] expects split_size be non-negative, but got split_size=%lld", (long long)split_size);
        return -1;
    }
    if (split_size == 0 && size != 0) {
        cg_set_error(CG_ERR_VALUE, "[split] split_size can only be 0 if dimension size is 0, but got dimension size of %lld",
                     (long long)size);
        return -1;
    }
    int64_t n = split_size ? size / split_size + (size % split_size != 0) : 1; /* size + split_size - 1 may overflow */
    if (n < 1) n = 1; /* split_size > size: one chunk, as PyTorch */
    if (n > INT32_MAX) {
        cg_set_error(CG_ERR_VALUE, "[split] %lld chunks are too many", (long long)n);
        return -1;
    }
    return narrow_all(t, d, (int)n, NULL, split_size, out);
}

int cg_split_sizes(cg_tensor *t, int n, const int64_t *sizes, int64_t dim, cg_tensor **out) {
    int64_t d;
    if (split_dim("split_with_sizes", t, dim, &d)) return -1;
    if (n < 0 || (n > 0 && !sizes)) {
        cg_set_error(CG_ERR_VALUE, "[split_with_sizes] invalid list of %d split sizes", n);
        return -1;
    }
    int64_t sum = 0;
    for (int k = 0; k < n; k++) {
        if (sizes[k] < 0) {
            cg_set_error(CG_ERR_VALUE, "[split_with_sizes] split_sizes must be non-negative, but got split_sizes[%d] = %lld",
                         k, (long long)sizes[k]);
            return -1;
        }
        if (__builtin_add_overflow(sum, sizes[k], &sum)) sum = INT64_MAX;
    }
    if (sum != t->shape[d]) {
        cg_set_error(CG_ERR_VALUE,
                     "[split_with_sizes] expects split_sizes to sum exactly to %lld (input tensor's size at dimension "
                     "%lld), but got a sum of %lld", (long long)t->shape[d], (long long)d, (long long)sum);
        return -1;
    }
    return narrow_all(t, d, n, sizes, 0, out);
}

/* PyTorch's sizing: chunks of ceil(size / chunks), the last one smaller; the
 * count may be below `chunks`. An empty dim gives `chunks` empty chunks. */
int cg_chunk(cg_tensor *t, int64_t chunks, int64_t dim, cg_tensor **out) {
    int64_t d;
    if (split_dim("chunk", t, dim, &d)) return -1;
    if (chunks <= 0 || chunks > INT32_MAX) {
        cg_set_error(CG_ERR_VALUE, "[chunk] expects `chunks` to be greater than 0, got: %lld", (long long)chunks);
        return -1;
    }
    int64_t size = t->shape[d];
    if (size == 0) {
        for (int64_t k = 0; k < chunks; k++) {
            out[k] = cg_narrow(t, d, 0, 0);
            if (!out[k]) {
                cg_release_all((int)k, out);
                return -1;
            }
        }
        return (int)chunks;
    }
    return cg_split(t, size / chunks + (size % chunks != 0), d, out); /* size + chunks - 1 may overflow */
}

int cg_unbind(cg_tensor *t, int64_t dim, cg_tensor **out) {
    int64_t d;
    if (split_dim("unbind", t, dim, &d)) return -1;
    int64_t n = t->shape[d];
    if (n > INT32_MAX) {
        cg_set_error(CG_ERR_VALUE, "[unbind] %lld slices are too many", (long long)n);
        return -1;
    }
    for (int64_t k = 0; k < n; k++) {
        out[k] = cg_select(t, d, k);
        if (!out[k]) {
            cg_release_all((int)k, out);
            return -1;
        }
    }
    return (int)n;
}

/* ---------------------------------------------------------------- flip */

/* x read backwards along the dims in `mask` (negative strides; internal only) */
static cg_tensor *flipped_view(cg_tensor *x, uint32_t mask) {
    int64_t st[CG_MAX_DIMS], off = x->offset;
    for (int i = 0; i < x->ndim; i++) {
        st[i] = x->strides[i];
        if ((mask & (1u << i)) && x->shape[i] > 1) {
            off += (x->shape[i] - 1) * x->strides[i];
            st[i] = -st[i];
        }
    }
    return cg_tensor_view_of(x, x->ndim, x->shape, st, off);
}

static cg_status flip_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    int64_t dims[CG_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < node->input_meta[0].ndim; i++)
        if (node->iattr[0] & (1 << i)) dims[n++] = i;
    return (gin[0] = cg_flip(g[0], n, dims)) ? CG_OK : cg_last_error();
}

CG_PROF_FN(cg_tensor *, cg_flip, "flip", (cg_tensor *t, int ndims, const int64_t *dims), (t, ndims, dims), t) {
    CG_CHECK(t, CG_ERR_VALUE, "[flip] argument is NULL");
    CG_CHECK(ndims >= 0 && (ndims == 0 || dims), CG_ERR_VALUE, "[flip] invalid list of %d dims", ndims);
    uint32_t mask = 0;
    if (ndims > 0 && cg_dims_mask("flip", ndims, dims, t->ndim, &mask)) return NULL;
    cg_tensor *out = cg_tensor_new("flip", t->ndim, t->shape, t->dtype, t->device);
    if (!out) return NULL;
    cg_tensor *src = flipped_view(t, mask);
    if (!src) {
        cg_tensor_release(out);
        return NULL;
    }
    cg_copy_strided(out, src);
    cg_tensor_release(src);
    bool failed;
    cg_node *node = cg_wire_unary_output("FlipBackward0", flip_backward, NULL, 1, &t, out, 0, &failed);
    if (failed) {
        cg_tensor_release(out);
        return NULL;
    }
    if (node) node->iattr[0] = mask;
    return out;
}

/* ---------------------------------------------------------------- roll */

/* out <- src rolled by shift[d] (0 <= shift[d] < size) along every dim: the
 * 2^k blocks (k = dims with a nonzero shift) are copied one by one.
 * Dim d, part 0: out[s:n] <- src[0:n-s]; part 1: out[0:s] <- src[n-s:n]. */
static void roll_copy(cg_tensor *out, cg_tensor *src, const int64_t *shift) {
    int nd = out->ndim, rd[CG_MAX_DIMS], k = 0;
    for (int d = 0; d < nd; d++)
        if (shift[d]) rd[k++] = d;
    for (uint32_t combo = 0; combo < (1u << k); combo++) {
        int64_t shape[CG_MAX_DIMS], ooff = out->offset, soff = src->offset;
        memcpy(shape, out->shape, sizeof(int64_t) * (size_t)nd);
        for (int j = 0; j < k; j++) {
            int d = rd[j];
            int64_t n = out->shape[d], s = shift[d];
            if (combo & (1u << j)) {
                shape[d] = s;
                soff += (n - s) * src->strides[d];
            } else {
                shape[d] = n - s;
                ooff += s * out->strides[d];
            }
        }
        cg_tensor *dv = cg_tensor_view_of(out, nd, shape, out->strides, ooff);
        cg_tensor *sv = cg_tensor_view_of(src, nd, shape, src->strides, soff);
        CG_ASSERT(dv && sv);
        cg_copy_strided(dv, sv);
        cg_tensor_release(dv);
        cg_tensor_release(sv);
    }
}

static int64_t wrap_shift(int64_t s, int64_t n) {
    if (n == 0) return 0;
    s %= n;
    return s < 0 ? s + n : s;
}

/* iattr[0]: flattened; iattr[1 + d]: the shift applied along dim d (or iattr[1] when flattened) */
static cg_status roll_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    int nd = node->input_meta[0].ndim;
    int64_t sh[CG_MAX_DIMS], dims[CG_MAX_DIMS];
    if (node->iattr[0]) {
        sh[0] = -node->iattr[1];
        gin[0] = cg_roll(g[0], 1, sh, NULL);
    } else if (nd == 0) {
        gin[0] = cg_clone(g[0]);
    } else {
        for (int d = 0; d < nd; d++) {
            sh[d] = -node->iattr[1 + d];
            dims[d] = d;
        }
        gin[0] = cg_roll(g[0], nd, sh, dims);
    }
    return gin[0] ? CG_OK : cg_last_error();
}

CG_PROF_FN(cg_tensor *, cg_roll, "roll", (cg_tensor *t, int nshifts, const int64_t *shifts, const int64_t *dims), (t,
           nshifts, shifts, dims), t) {
    CG_CHECK(t, CG_ERR_VALUE, "[roll] argument is NULL");
    CG_CHECK(nshifts > 0 && shifts, CG_ERR_VALUE, "[roll] `shifts` required");
    CG_CHECK(dims || nshifts == 1, CG_ERR_VALUE, "[roll] shifts and dimensions must align. shifts: %d, dims: 0", nshifts);
    CG_CHECK(!dims || t->ndim > 0, CG_ERR_INDEX, "[roll] Dimension specified as %lld but tensor has no dimensions",
             dims ? (long long)dims[0] : 0LL); /* PyTorch: a 0-d tensor has no dim to roll over */
    int64_t shift[CG_MAX_DIMS] = {0};
    bool flat = dims == NULL;
    cg_tensor *out = cg_tensor_new("roll", t->ndim, t->shape, t->dtype, t->device);
    if (!out) return NULL;
    if (flat) {
        int64_t numel = cg_tensor_numel(t), one[1] = {1};
        shift[0] = wrap_shift(shifts[0], numel);
        cg_tensor *c = t; /* a contiguous copy when t is strided (no history) */
        if (!cg_tensor_is_contiguous(t)) {
            c = cg_tensor_new("roll", t->ndim, t->shape, t->dtype, t->device);
            if (!c) {
                cg_tensor_release(out);
                return NULL;
            }
            cg_copy_strided(c, t);
        } else {
            cg_tensor_retain(c);
        }
        cg_tensor *s1 = cg_tensor_view_of(c, 1, &numel, one, c->offset);
        cg_tensor *o1 = cg_tensor_view_of(out, 1, &numel, one, out->offset);
        CG_ASSERT(s1 && o1);
        roll_copy(o1, s1, shift);
        cg_tensor_release(s1);
        cg_tensor_release(o1);
        cg_tensor_release(c);
    } else {
        for (int i = 0; i < nshifts; i++) {
            int64_t d;
            if (cg_wrap_dim("roll", dims[i], t->ndim, &d)) {
                cg_tensor_release(out);
                return NULL;
            }
            if (t->ndim) shift[d] = wrap_shift(shift[d] + wrap_shift(shifts[i], t->shape[d]), t->shape[d]);
        }
        roll_copy(out, t, shift);
    }
    bool failed;
    cg_node *node = cg_wire_unary_output("RollBackward0", roll_backward, NULL, 1, &t, out, 0, &failed);
    if (failed) {
        cg_tensor_release(out);
        return NULL;
    }
    if (node) {
        node->iattr[0] = flat;
        for (int d = 0; d < (flat ? 1 : t->ndim); d++) node->iattr[1 + d] = shift[d];
    }
    return out;
}
