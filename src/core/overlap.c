/* overlap.c — PyTorch's memory-overlap tests on tensor layouts (storage,
 * offset, shape, strides), used by every in-place and out= path to refuse a
 * write that would read what it has already written (Note [Memory overlap]). */
#include "core_internal.h"

#include <string.h>

/* Note [Memory overlap]: an op writing into `out` while reading `in` loops
 * over elements in its own order; when `in` and `out` share memory that is
 * not laid out identically, later elements read values the loop already
 * wrote (a.add_(a.t()), x[1:] += x[:-1]: running-sum garbage). cgrad follows
 * PyTorch's rule (ATen's MemoryOverlap.cpp) exactly, so that a PyTorch
 * program that runs runs the same and one that raises raises the same:
 *  - Internal overlap of the written tensor: a stride-0 dim of size > 1
 *    (an expanded tensor) is refused ("more than one element of the
 *    written-to tensor refers to a single memory location"). Other
 *    non-dense layouts are "too hard" and allowed.
 *  - Overlap between the written tensor and an input, from their layouts
 *    alone, in O(ndim): NO when their storages' memory differs (storages
 *    over one buffer, as view(dtype) and from_numpy make, count as one),
 *    either is empty, or their byte ranges [first byte, last byte + 1) are
 *    disjoint; FULL when
 *    they are the same tensor, or have the same range and the same strides
 *    (hence the same elements in the same places: a.add_(a),
 *    a.view(int32).add_(a.view(int32))); PARTIAL when the ranges intersect
 *    otherwise. The range test is only meaningful for tensors that are
 *    non-overlapping and dense (their elements fill their range exactly, in
 *    some order of dims); when either is not, the status is TOO_HARD and
 *    nothing is refused (x[::2] += x[1::2], a[:, 1:] += a[:, :-1]), as in
 *    PyTorch, whose result there is whatever its loop order gives.
 *  - Elementwise in-place ops, copy_ and out= of elementwise ops refuse
 *    PARTIAL ("some elements of the input tensor and the written-to tensor
 *    refer to a single memory location"); FULL is allowed (copy_ of a
 *    tensor onto itself does nothing). Index writes (index_put_ and
 *    setitem with a tensor index, index_add_ / index_copy_, scatter_*) and
 *    out= of gather-like ops and cat refuse FULL too. out= of reductions and
 *    products is not checked (the result is computed before the copy, so it
 *    is right). The checks sit in the elementwise in-place driver
 *    (cg_elementwise_inplace), in copy_, in index_put_, and in the binding's
 *    in-place-via-out-of-place and out= paths (Note [out= validation]).
 * Negative strides (internal views only) count as not dense. */

/* PyTorch's is_non_overlapping_and_dense: ignoring size-1 dims, some order
 * of the dims makes t contiguous. */
static bool dense_nonoverlapping(const cg_tensor *t) {
    int64_t size[CG_MAX_DIMS], stride[CG_MAX_DIMS];
    int m = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (t->shape[d] == 1) continue;
        int i = m++; /* insertion by increasing stride */
        while (i > 0 && stride[i - 1] > t->strides[d]) {
            size[i] = size[i - 1];
            stride[i] = stride[i - 1];
            i--;
        }
        size[i] = t->shape[d];
        stride[i] = t->strides[d];
    }
    int64_t expect = 1;
    for (int i = 0; i < m; i++) {
        if (stride[i] != expect) return false;
        expect *= size[i];
    }
    return true;
}

cg_overlap cg_tensor_overlap(const cg_tensor *a, const cg_tensor *b) {
    if (a == b) return CG_OVERLAP_FULL;
    if (!a || !b || !cg_storages_alias(a->storage, b->storage)) return CG_OVERLAP_NO;
    int64_t na = cg_shape_numel(a->ndim, a->shape), nb = cg_shape_numel(b->ndim, b->shape);
    if (na == 0 || nb == 0) return CG_OVERLAP_NO;
    if (!dense_nonoverlapping(a) || !dense_nonoverlapping(b)) return CG_OVERLAP_TOO_HARD;
    /* dense: the elements fill [begin, begin + numel * itemsize) exactly.
     * Byte addresses (not offsets), since two storages may share a buffer;
     * meta storage has no data and shares nothing. */
    const char *pa = cg_tensor_ptr(a), *pb = cg_tensor_ptr(b);
    if (!pa || !pb) return CG_OVERLAP_NO;
    uintptr_t a0 = (uintptr_t)pa, b0 = (uintptr_t)pb;
    uintptr_t a1 = a0 + (uintptr_t)na * cg_itemsize(a->dtype), b1 = b0 + (uintptr_t)nb * cg_itemsize(b->dtype);
    if (a0 == b0 && a1 == b1) {
        bool same = a->ndim == b->ndim && !memcmp(a->strides, b->strides, sizeof(int64_t) * (size_t)a->ndim);
        return same ? CG_OVERLAP_FULL : CG_OVERLAP_PARTIAL;
    }
    return a0 < b1 && b0 < a1 ? CG_OVERLAP_PARTIAL : CG_OVERLAP_NO;
}

bool cg_tensor_has_internal_overlap(const cg_tensor *t) {
    for (int d = 0; d < t->ndim; d++)
        if (t->strides[d] == 0 && t->shape[d] > 1) return true;
    return false;
}
