/* test_overlap.c — the memory-overlap rule (Note [Memory overlap] in
 * src/core/overlap.c): cg_tensor_overlap's four answers on views of one
 * storage, internal overlap, and the in-place ops that refuse a partial
 * overlap (elementwise, copy_, index_put_) while running the same layout. */
#include "test.h"

TEST(overlap_status_of_views) {
    int64_t sh[2] = {4, 4};
    cg_tensor *a = tt_rand(CG_DTYPE_F32, 2, sh, -1, 1, 3), *other = tt_rand(CG_DTYPE_F32, 2, sh, -1, 1, 4);
    cg_tensor *at = cg_transpose(a, 0, 1), *same = cg_view(a, 2, sh);
    cg_tensor *r0 = cg_select(a, 0, 0), *r1 = cg_select(a, 0, 1);
    cg_tensor *head = cg_slice(a, 0, 0, 3, 1), *tail = cg_slice(a, 0, 1, 4, 1);
    cg_tensor *even = cg_slice(a, 1, 0, 4, 2), *odd = cg_slice(a, 1, 1, 4, 2);
    cg_tensor *empty = cg_slice(a, 0, 2, 2, 1), *u = cg_unsqueeze(a, 0);
    int64_t ex[2] = {4, 4};
    cg_tensor *e = cg_expand(r0, 2, ex);
    CHECK(cg_tensor_overlap(a, a) == CG_OVERLAP_FULL);
    CHECK(cg_tensor_overlap(a, same) == CG_OVERLAP_FULL);
    CHECK(cg_tensor_overlap(a, other) == CG_OVERLAP_NO);
    CHECK(cg_tensor_overlap(a, at) == CG_OVERLAP_PARTIAL);  /* same range, other strides */
    CHECK(cg_tensor_overlap(a, u) == CG_OVERLAP_PARTIAL);   /* other stride vector */
    CHECK(cg_tensor_overlap(head, tail) == CG_OVERLAP_PARTIAL);
    CHECK(cg_tensor_overlap(a, r0) == CG_OVERLAP_PARTIAL);  /* a broadcast operand inside self */
    CHECK(cg_tensor_overlap(r0, r1) == CG_OVERLAP_NO);      /* disjoint rows */
    CHECK(cg_tensor_overlap(even, odd) == CG_OVERLAP_TOO_HARD);
    CHECK(cg_tensor_overlap(a, empty) == CG_OVERLAP_NO);
    CHECK(cg_tensor_overlap(e, r1) == CG_OVERLAP_TOO_HARD);
    CHECK(cg_tensor_has_internal_overlap(e));
    CHECK(!cg_tensor_has_internal_overlap(at) && !cg_tensor_has_internal_overlap(even));
    cg_tensor *ts[] = {a, other, at, same, r0, r1, head, tail, even, odd, empty, u, e};
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++) cg_tensor_release(ts[i]);
}

TEST(overlap_inplace_ops_refuse_partial) {
    int64_t sh[2] = {3, 3};
    cg_tensor *a = tt_rand(CG_DTYPE_F64, 2, sh, -1, 1, 5);
    cg_tensor *at = cg_transpose(a, 0, 1), *same = cg_view(a, 2, sh);
    double before[9], after[9];
    CHECK_OK(cg_tensor_copy_to_buffer(a, before, CG_DTYPE_F64));
    uint64_t v = cg_tensor_version(a);
    CHECK_ERR(cg_binary_("add", a, at) != CG_OK, CG_ERR_RUNTIME, "single memory location");
    CHECK_ERR(cg_binary_("mul", a, at) != CG_OK, CG_ERR_RUNTIME, "[mul_]");
    CHECK_ERR(cg_copy_(a, at) != CG_OK, CG_ERR_RUNTIME, "[copy_] unsupported operation");
    cg_tensor *i = tt_tensor(CG_DTYPE_I64, 1, (int64_t[]){3}, (double[]){0, 1, 2});
    CHECK_ERR(cg_index_put_(a, 1, &i, a, false) != CG_OK, CG_ERR_RUNTIME, "[index_put_]"); /* full: refused */
    CHECK_OK(cg_tensor_copy_to_buffer(a, after, CG_DTYPE_F64));
    for (int k = 0; k < 9; k++) CHECK(before[k] == after[k]);
    CHECK(cg_tensor_version(a) == v);
    /* the same layout runs: a += a doubles, copy_ onto itself keeps */
    CHECK_OK(cg_binary_("add", a, same));
    CHECK_OK(cg_copy_(a, same));
    CHECK_OK(cg_tensor_copy_to_buffer(a, after, CG_DTYPE_F64));
    for (int k = 0; k < 9; k++) CHECK(after[k] == 2 * before[k]);
    /* disjoint rows of one storage run */
    cg_tensor *r0 = cg_select(a, 0, 0), *r1 = cg_select(a, 0, 1);
    CHECK_OK(cg_binary_("sub", r0, r1));
    CHECK_OK(cg_tensor_copy_to_buffer(a, after, CG_DTYPE_F64));
    for (int k = 0; k < 3; k++) CHECK_NEAR(after[k], 2 * before[k] - 2 * before[3 + k], 1e-12);
    /* an expanded self: refused for add_, written by fill_ */
    int64_t ex[2] = {3, 3};
    cg_tensor *e = cg_expand(r1, 2, ex);
    CHECK_ERR(cg_binary_("add", e, at) != CG_OK, CG_ERR_RUNTIME, "more than one element");
    CHECK_OK(cg_fill_(e, 7.0));
    CHECK_OK(cg_tensor_copy_to_buffer(a, after, CG_DTYPE_F64));
    for (int k = 3; k < 6; k++) CHECK(after[k] == 7.0);
    cg_tensor *ts[] = {a, at, same, i, r0, r1, e};
    for (size_t k = 0; k < sizeof ts / sizeof *ts; k++) cg_tensor_release(ts[k]);
}
