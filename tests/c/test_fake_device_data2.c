/* test_fake_device_data2.c — the sort, scan, tril / triu and strided-scatter
 * kernel entries through the device seam: on the fake device (whose table
 * lacks them) each op fails with NotImplementedError naming the op and the
 * device, never touching its memory, while the ops that are copies or views
 * (repeat / tile, the slicing views and their forward) run there; on meta each
 * gives the right shape and dtype, backward included, and the view bounds
 * checks hold as on the CPU. */
#include "fake_checks.h"

#include <stdio.h>
#include <string.h>

static bool same_geometry(const cg_tensor *a, const cg_tensor *b) {
    return a && b && shape_is(a, cg_tensor_ndim(b), cg_tensor_shape(b), cg_tensor_dtype(b));
}


/* nothing read back, run or computed on the device */
static bool untouched(fake_counts a, fake_counts b) {
    return a.to_host == b.to_host && a.runs == b.runs && a.kernels == b.kernels && a.fills == b.fills;
}

TEST(fake_data2_entries_missing) {
    fake_backend_install();
    cg_device f = fake_device();
    int64_t s34[2] = {3, 4};
    cg_tensor *x = cg_ones(2, s34, CG_DTYPE_F32, f), *xi = cg_ones(2, s34, CG_DTYPE_I32, f);
    CHECK_NN(x);
    CHECK_NN(xi);
    fake_counts c0 = fake_backend_counts();
    cg_tensor *v = NULL, *ix = NULL;
    check_refused(cg_sort(x, -1, false, true, &v, &ix) != CG_OK, "sort");
    CHECK(!v && !ix);
    check_refused(cg_argsort(x, 0, true, false) == NULL, "sort");
    check_refused(cg_topk(x, 2, -1, true, true, &v, &ix) != CG_OK, "topk");
    CHECK(!v && !ix);
    check_refused(cg_cumsum(x, 1) == NULL, "cumsum");
    check_refused(cg_cumsum(xi, 0) == NULL, "cumsum");
    check_refused(cg_cumprod(x, 0) == NULL, "cumprod");
    check_refused(cg_cummax(x, 1, &v, &ix) != CG_OK, "cummax");
    CHECK(!v && !ix);
    check_refused(cg_tril(x, 0) == NULL, "tril");
    check_refused(cg_triu(x, 1) == NULL, "triu");
    CHECK(untouched(c0, fake_backend_counts()));
    cg_tensor_release(x);
    cg_tensor_release(xi);
}

/* repeat / tile are copies through the backend and the slicing views share
 * storage: they run on the fake device; the views' backward (a strided
 * scatter) is an entry the fake table lacks */
TEST(fake_data2_copies_and_views) {
    fake_backend_install();
    cg_device f = fake_device();
    int64_t s23[2] = {2, 3}, r[2] = {2, 1}, s43[2] = {4, 3};
    double vals[6] = {1, 2, 3, 4, 5, 6};
    cg_tensor *xc = cg_from_data(vals, 2, s23, CG_DTYPE_F64);
    cg_tensor *x = xc ? cg_to_device(xc, f) : NULL;
    CHECK_NN(x);
    cg_tensor *rp = x ? cg_repeat(x, 2, r) : NULL, *tl = x ? cg_tile(x, 2, r) : NULL;
    CHECK(shape_is(rp, 2, s43, CG_DTYPE_F64) && shape_is(tl, 2, s43, CG_DTYPE_F64));
    cg_tensor *rpc = rp ? cg_to_device(rp, cg_cpu()) : NULL;
    CHECK_NN(rpc);
    if (rpc) {
        const double *p = cg_tensor_data(rpc);
        for (int i = 0; i < 12; i++) CHECK_NEAR(p[i], vals[i % 6], 0);
    }
    CHECK_OK(cg_tensor_set_requires_grad(x, true));
    int64_t one = 1;
    cg_tensor *views[5] = {
        cg_slice(x, 1, 0, 3, 2), cg_narrow(x, 0, 1, 1), cg_select(x, 1, 2), cg_diagonal(x, 0, 0, 1),
        cg_unfold(x, 1, 2, 1),
    };
    for (int i = 0; i < 5; i++) {
        CHECK_NN(views[i]);
        cg_tensor *s = views[i] ? cg_sum(views[i], 0, NULL, false) : NULL;
        CHECK_NN(s);
        cg_tensor *seed = cg_ones(0, NULL, CG_DTYPE_F64, f);
        CHECK_NN(seed);
        if (s && seed) check_refused(cg_backward(s, seed, false, false) != CG_OK, "as_strided_scatter");
        cg_tensor_release(seed);
        cg_tensor_release(s);
    }
    cg_tensor *xs = x ? cg_as_strided(x, 1, &one, &one, 0) : NULL;
    CHECK_NN(xs);
    cg_tensor *rel[] = {xc, x, rp, tl, rpc, xs, views[0], views[1], views[2], views[3], views[4]};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) cg_tensor_release(rel[i]);
}

/* forward and backward on meta: shapes and dtypes, no data */
TEST(meta_data2_shapes_and_backward) {
    cg_device m = cg_meta();
    int64_t s34[2] = {3, 4}, s32[2] = {3, 2}, s68[2] = {6, 8}, s234[3] = {2, 3, 4};
    cg_tensor *x = cg_ones(2, s34, CG_DTYPE_F32, m), *xi = cg_ones(2, s34, CG_DTYPE_I16, m);
    cg_tensor *x3 = cg_ones(3, s234, CG_DTYPE_F64, m);
    CHECK_NN(x);
    CHECK_NN(xi);
    CHECK_NN(x3);
    CHECK_OK(cg_tensor_set_requires_grad(x, true));
    CHECK_OK(cg_tensor_set_requires_grad(x3, true));
    cg_tensor *sv = NULL, *si = NULL, *tv = NULL, *ti = NULL, *mv = NULL, *mi = NULL;
    CHECK_OK(cg_sort(x, 1, true, true, &sv, &si));
    CHECK(shape_is(sv, 2, s34, CG_DTYPE_F32) && shape_is(si, 2, s34, CG_DTYPE_I64));
    cg_tensor *as = cg_argsort(x, 0, false, false);
    CHECK(shape_is(as, 2, s34, CG_DTYPE_I64));
    CHECK_OK(cg_topk(x, 2, -1, true, true, &tv, &ti));
    CHECK(shape_is(tv, 2, s32, CG_DTYPE_F32) && shape_is(ti, 2, s32, CG_DTYPE_I64));
    cg_tensor *cs = cg_cumsum(x, 0), *csi = cg_cumsum(xi, 1), *cp = cg_cumprod(x3, 2);
    CHECK(shape_is(cs, 2, s34, CG_DTYPE_F32) && shape_is(csi, 2, s34, CG_DTYPE_I64) &&
          shape_is(cp, 3, s234, CG_DTYPE_F64));
    CHECK_OK(cg_cummax(x, 1, &mv, &mi));
    CHECK(shape_is(mv, 2, s34, CG_DTYPE_F32) && shape_is(mi, 2, s34, CG_DTYPE_I64));
    int64_t r[2] = {2, 2};
    cg_tensor *rp = cg_repeat(x, 2, r), *tl = cg_tile(x, 2, r);
    CHECK(shape_is(rp, 2, s68, CG_DTYPE_F32) && shape_is(tl, 2, s68, CG_DTYPE_F32));
    cg_tensor *lo = cg_tril(x, 0), *up = cg_triu(x3, -1);
    CHECK(shape_is(lo, 2, s34, CG_DTYPE_F32) && shape_is(up, 3, s234, CG_DTYPE_F64));
    /* the slicing views */
    int64_t s3[1] = {3}, sas[2] = {2, 2}, sst[2] = {1, 2};
    cg_tensor *sl = cg_slice(x, 1, 0, 4, 2), *nw = cg_narrow(x, 0, 1, 2), *se = cg_select(x, 1, 3);
    cg_tensor *dg = cg_diagonal(x, 1, 0, 1), *uf = cg_unfold(x, 0, 2, 1), *ast = cg_as_strided(x, 2, sas, sst, 1);
    CHECK(shape_is(sl, 2, s32, CG_DTYPE_F32) && shape_is(se, 1, s3, CG_DTYPE_F32) && shape_is(dg, 1, s3, CG_DTYPE_F32));
    int64_t s24[2] = {2, 4}, s243[3] = {2, 4, 2};
    CHECK(shape_is(nw, 2, s24, CG_DTYPE_F32) && shape_is(uf, 3, s243, CG_DTYPE_F32) &&
          shape_is(ast, 2, sas, CG_DTYPE_F32));
    /* one scalar loss over every differentiable result, backward on meta */
    cg_tensor *parts[] = {sv, tv, cs, cp, mv, rp, tl, lo, up, sl, nw, se, dg, uf, ast};
    enum { NP = sizeof parts / sizeof parts[0] };
    cg_tensor *sums[NP] = {0}, *acc = NULL;
    for (int i = 0; i < NP; i++) {
        sums[i] = parts[i] ? cg_sum(parts[i], 0, NULL, false) : NULL;
        CHECK_NN(sums[i]);
        if (!sums[i]) continue;
        cg_tensor *s = sums[i];
        if (cg_tensor_dtype(s) != CG_DTYPE_F32) {
            s = cg_to_dtype(sums[i], CG_DTYPE_F32);
            CHECK_NN(s);
        } else {
            cg_tensor_retain(s);
        }
        cg_tensor *n = acc ? cg_add(acc, s) : s;
        if (acc) cg_tensor_release(s);
        cg_tensor_release(acc);
        acc = n;
    }
    CHECK_NN(acc);
    if (acc) CHECK_OK(cg_backward(acc, NULL, false, false));
    cg_tensor *gx = cg_tensor_grad_ref(x), *g3 = cg_tensor_grad_ref(x3);
    CHECK(same_geometry(gx, x) && same_geometry(g3, x3));
    cg_tensor_release(gx);
    cg_tensor_release(g3);
    cg_tensor *rel[] = {x, xi, x3, si, as, ti, csi, mi, acc};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) cg_tensor_release(rel[i]);
    for (int i = 0; i < NP; i++) cg_tensor_release(parts[i]), cg_tensor_release(sums[i]);
}

/* the view bounds checks hold on meta as on the CPU: a meta storage has its size; an empty view reads
 * nothing and may start anywhere */
TEST(meta_view_bounds_as_on_cpu) {
    int64_t s4[1] = {4}, big[1] = {10}, st1[1] = {1}, zero[1] = {0};
    cg_device devs[2] = {cg_cpu(), cg_meta()};
    for (int k = 0; k < 2; k++) {
        cg_tensor *x = cg_ones(1, s4, CG_DTYPE_F32, devs[k]);
        CHECK_NN(x);
        if (!x) continue;
        CHECK_ERR(cg_as_strided(x, 1, big, st1, 0) == NULL, CG_ERR_INDEX, "out of bounds");
        cg_tensor *empty = cg_as_strided(x, 1, zero, st1, 7); /* an empty view may start past the end, as in PyTorch */
        CHECK_NN(empty);
        if (empty) CHECK(cg_tensor_offset(empty) == 7);
        cg_tensor_release(empty);
        cg_tensor *ok = cg_as_strided(x, 1, s4, st1, 0);
        CHECK_NN(ok);
        cg_tensor_release(ok);
        cg_tensor_release(x);
    }
}
