/* test_fake_device.c — the device seam through the test-only fake backend
 * (fake_backend.c): explicit moves, the elementwise drivers (flat,
 * broadcast, strided, 0-d, empty), fill, autograd, cross-device refusals,
 * reductions, kernel entries (softmax; optimizer steps it lacks), and
 * NotImplementedError for ops without per-device entries. The fake's
 * data pointers fault when dereferenced, so a CPU code path that touched
 * them would crash these tests. */
#include "fake_backend.h"
#include "test.h"

#include <string.h>

static cg_tensor *on_cpu(cg_tensor *t) { return cg_to_device(t, cg_cpu()); }

/* max |cpu(fake_result) - expected| (INFINITY on failure); releases fake_result */
static double diff_from_fake(cg_tensor *fake_result, const cg_tensor *expected) {
    if (!fake_result) return INFINITY;
    CHECK(cg_device_eq(cg_tensor_device(fake_result), fake_device()));
    cg_tensor *c = on_cpu(fake_result);
    double d = c ? tt_maxdiff(c, expected) : INFINITY;
    cg_tensor_release(c);
    cg_tensor_release(fake_result);
    return d;
}

TEST(fake_moves_go_through_the_backend) {
    fake_backend_install();
    CHECK(strcmp(cg_device_name(fake_device()), "fake") == 0);
    int64_t shape[2] = {2, 3};
    cg_tensor *x = tt_rand(CG_DTYPE_F32, 2, shape, -1, 1, 1);
    fake_counts c0 = fake_backend_counts();
    cg_tensor *f = cg_to_device(x, fake_device());
    CHECK_NN(f);
    fake_counts c1 = fake_backend_counts();
    CHECK(c1.to_device == c0.to_device + 1 && c1.allocs == c0.allocs + 1);
    /* no direct pointer to the fake's memory */
    CHECK_ERR(cg_tensor_data(f) == NULL, CG_ERR_DEVICE, "fake");
    cg_tensor *back = on_cpu(f);
    CHECK(back && tt_maxdiff(back, x) == 0);
    CHECK(fake_backend_counts().to_host == c1.to_host + 1);
    /* a strided source is made contiguous on its own device first */
    cg_tensor *ft = cg_transpose(f, 0, 1), *xt = cg_transpose(x, 0, 1);
    cg_tensor *bt = on_cpu(ft);
    CHECK_NN(bt);
    CHECK(bt && tt_maxdiff(bt, xt) == 0);
    int64_t live = cg_allocator_stats(fake_device()).live_bytes;
    cg_tensor *all[] = {x, f, back, ft, xt, bt};
    for (int i = 0; i < 6; i++) cg_tensor_release(all[i]);
    CHECK(cg_allocator_stats(fake_device()).live_bytes < live);
}

/* each device has its own caching pool: the fake's blocks are cached and reused by its pool,
 * with its own statistics, and go back to its raw allocator on empty_cache */
TEST(fake_device_has_its_own_caching_pool) {
    fake_backend_install();
    cg_device f = fake_device();
    cg_allocator_empty_cache(f);
    int64_t shape[1] = {1000};
    cg_alloc_stats c0 = cg_allocator_stats(cg_cpu()), f0 = cg_allocator_stats(f);
    CHECK(f0.cached_bytes == 0);
    int64_t raw0 = fake_backend_live_bytes();
    cg_tensor *t = cg_empty(1, shape, CG_DTYPE_F32, f);
    CHECK_NN(t);
    cg_alloc_stats f1 = cg_allocator_stats(f);
    CHECK(f1.live_bytes == f0.live_bytes + 4096 && f1.system_allocs == f0.system_allocs + 1);
    CHECK(fake_backend_live_bytes() == raw0 + 4096); /* 4000 bytes rounded to their class */
    cg_tensor_release(t);
    cg_alloc_stats f2 = cg_allocator_stats(f);
    CHECK(f2.live_bytes == f0.live_bytes && f2.cached_bytes == 4096);
    CHECK(fake_backend_live_bytes() == raw0 + 4096); /* kept by the pool */
    t = cg_empty(1, shape, CG_DTYPE_F32, f);
    CHECK_NN(t);
    cg_alloc_stats f3 = cg_allocator_stats(f);
    CHECK(f3.cache_hits == f2.cache_hits + 1 && f3.system_allocs == f2.system_allocs && f3.cached_bytes == 0);
    cg_tensor_release(t);
    /* the CPU's pool saw none of it */
    cg_alloc_stats c1 = cg_allocator_stats(cg_cpu());
    CHECK(c1.system_allocs == c0.system_allocs && c1.alloc_calls == c0.alloc_calls);
    cg_allocator_empty_cache(f);
    CHECK(cg_allocator_stats(f).cached_bytes == 0 && fake_backend_live_bytes() == raw0);
    /* meta has no memory and no pool */
    cg_alloc_stats m = cg_allocator_stats(cg_meta());
    CHECK(m.alloc_calls == 0 && m.live_bytes == 0);
}

TEST(fake_elementwise_drivers) {
    fake_backend_install();
    int64_t s23[2] = {2, 3}, s3[1] = {3}, s0[1] = {0};
    cg_tensor *a = tt_rand(CG_DTYPE_F32, 2, s23, -1, 1, 2), *b = tt_rand(CG_DTYPE_F32, 2, s23, -1, 1, 3);
    cg_tensor *row = tt_rand(CG_DTYPE_F32, 1, s3, -1, 1, 4), *sc = cg_scalar(0.5, CG_DTYPE_F32);
    cg_tensor *e = cg_empty(1, s0, CG_DTYPE_F32, cg_cpu());
    cg_tensor *fa = cg_to_device(a, fake_device()), *fb = cg_to_device(b, fake_device());
    cg_tensor *frow = cg_to_device(row, fake_device()), *fsc = cg_to_device(sc, fake_device());
    cg_tensor *fe = cg_to_device(e, fake_device());
    fake_counts c0 = fake_backend_counts();
    cg_tensor *r;
    /* flat, unary, broadcast, 0-d, strided, empty, in-place */
    r = cg_add(a, b); CHECK(diff_from_fake(cg_add(fa, fb), r) == 0); cg_tensor_release(r);
    r = cg_exp(a); CHECK(diff_from_fake(cg_exp(fa), r) == 0); cg_tensor_release(r);
    r = cg_mul(a, row); CHECK(diff_from_fake(cg_mul(fa, frow), r) == 0); cg_tensor_release(r);
    r = cg_sub(a, sc); CHECK(diff_from_fake(cg_sub(fa, fsc), r) == 0); cg_tensor_release(r);
    cg_tensor *at = cg_transpose(a, 0, 1), *bt = cg_transpose(b, 0, 1);
    cg_tensor *fat = cg_transpose(fa, 0, 1), *fbt = cg_transpose(fb, 0, 1);
    r = cg_div(at, bt); CHECK(diff_from_fake(cg_div(fat, fbt), r) == 0); cg_tensor_release(r);
    r = cg_contiguous(at); CHECK(diff_from_fake(cg_contiguous(fat), r) == 0); cg_tensor_release(r);
    r = cg_neg(e); CHECK(diff_from_fake(cg_neg(fe), r) == 0); cg_tensor_release(r);
    r = cg_to_dtype(a, CG_DTYPE_F64); CHECK(diff_from_fake(cg_to_dtype(fa, CG_DTYPE_F64), r) == 0); cg_tensor_release(r);
    cg_tensor *ac = cg_clone(a), *fac = cg_clone(fa);
    CHECK_OK(cg_add_(ac, b));
    CHECK_OK(cg_add_(fac, fb));
    CHECK(diff_from_fake(fac, ac) == 0);
    /* fill: zeros / full */
    cg_tensor *z = cg_full(2, s23, 2.5, CG_DTYPE_F32, fake_device()), *zc = cg_full(2, s23, 2.5, CG_DTYPE_F32, cg_cpu());
    CHECK(diff_from_fake(z, zc) == 0);
    fake_counts c1 = fake_backend_counts();
    CHECK(c1.runs > c0.runs && c1.fills > c0.fills);
    cg_tensor *all[] = {a, b, row, sc, e, fa, fb, frow, fsc, fe, at, bt, fat, fbt, ac, zc};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) cg_tensor_release(all[i]);
}

TEST(fake_cross_device_rules) {
    fake_backend_install();
    int64_t s2[1] = {2};
    cg_tensor *c = cg_ones(1, s2, CG_DTYPE_F32, cg_cpu()), *f = cg_ones(1, s2, CG_DTYPE_F32, fake_device());
    cg_tensor *m = cg_ones(1, s2, CG_DTYPE_F32, cg_meta());
    CHECK_ERR(cg_add(c, f) == NULL, CG_ERR_DEVICE, NULL);
    CHECK_ERR(cg_mul(f, m) == NULL, CG_ERR_DEVICE, NULL);
    CHECK_ERR(cg_copy_(c, f) != CG_OK, CG_ERR_DEVICE, NULL);
    /* ops whose kernels are not per-device entries name the op and the device */
    CHECK_ERR(cg_matmul(f, f) == NULL, CG_ERR_NOT_IMPLEMENTED, "fake");
    double v;
    cg_tensor *f1 = cg_narrow(f, 0, 0, 1);
    /* item reads its one element through the backend's copy to the host */
    int64_t to_host = fake_backend_counts().to_host;
    CHECK_OK(cg_tensor_item(f1, &v));
    CHECK(v == 1.0 && fake_backend_counts().to_host == to_host + 1);
    cg_tensor_release(f1);
    /* meta moves: to meta keeps the shape; from meta there is no data */
    cg_tensor *fm = cg_to_device(f, cg_meta());
    CHECK(fm && cg_tensor_numel(fm) == 2);
    CHECK_ERR(cg_to_device(m, fake_device()) == NULL, CG_ERR_NOT_IMPLEMENTED, "meta");
    cg_tensor_release(fm);
    cg_tensor_release(c);
    cg_tensor_release(f);
    cg_tensor_release(m);
}

TEST(fake_autograd_through_the_seam) {
    fake_backend_install();
    int64_t s4[1] = {4};
    double xv[4] = {-1.5, 0.25, 2, 3};
    cg_tensor *xc = tt_tensor(CG_DTYPE_F64, 1, s4, xv);
    /* a leaf on the fake device: y = x * x + x, dy/dx = 2x + 1 */
    cg_tensor *x = cg_to_device(xc, fake_device());
    CHECK_OK(cg_tensor_set_requires_grad(x, true));
    cg_tensor *xx = cg_mul(x, x), *y = cg_add(xx, x);
    cg_tensor *seed = cg_ones(1, s4, CG_DTYPE_F64, fake_device());
    CHECK_OK(cg_backward(y, seed, false, false));
    cg_tensor *g = cg_tensor_grad_ref(x);
    CHECK(g && cg_device_eq(cg_tensor_device(g), fake_device()));
    cg_tensor *gc = g ? on_cpu(g) : NULL;
    for (int i = 0; gc && i < 4; i++) CHECK_NEAR(tt_get(gc, i), 2 * xv[i] + 1, 0);
    /* to() is differentiable both ways: a CPU leaf through the fake device */
    cg_tensor *leaf = cg_clone(xc);
    CHECK_OK(cg_tensor_set_requires_grad(leaf, true));
    cg_tensor *lf = cg_to_device(leaf, fake_device()), *sq = cg_mul(lf, lf), *back = on_cpu(sq);
    cg_tensor *ones = cg_ones(1, s4, CG_DTYPE_F64, cg_cpu());
    CHECK_OK(cg_backward(back, ones, false, false));
    cg_tensor *lg = cg_tensor_grad_ref(leaf);
    CHECK(lg && cg_device_eq(cg_tensor_device(lg), cg_cpu()));
    for (int i = 0; lg && i < 4; i++) CHECK_NEAR(tt_get(lg, i), 2 * xv[i], 0);
    cg_tensor *all[] = {xc, x, xx, y, seed, g, gc, leaf, lf, sq, back, ones, lg};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) cg_tensor_release(all[i]);
}

/* custom-kernel entries (Note [Kernel entries]): softmax runs the fake's own
 * entries (forward, and the fused backward), matching the CPU; meta runs none */
TEST(fake_custom_kernel_entries) {
    fake_backend_install();
    int64_t s23[2] = {2, 3};
    double xv[6] = {-1, 0.5, 2, 3, -4, 0.25}, gv[6] = {1, -2, 0.5, 3, 0.25, -1};
    cg_tensor *xc = tt_tensor(CG_DTYPE_F64, 2, s23, xv), *gc = tt_tensor(CG_DTYPE_F64, 2, s23, gv);
    cg_tensor *x = cg_to_device(xc, fake_device()), *g = cg_to_device(gc, fake_device());
    int64_t before = fake_backend_counts().kernels;
    for (int dim = 0; dim < 2; dim++) {
        cg_tensor *want = cg_log_softmax(xc, dim);
        CHECK_NEAR(diff_from_fake(cg_log_softmax(x, dim), want), 0, 0);
        cg_tensor_release(want);
        /* autograd: the fake leaf's gradient through the fused backward entry */
        cg_tensor *lc = cg_clone(xc), *lf = cg_clone(x);
        CHECK_OK(cg_tensor_set_requires_grad(lc, true));
        CHECK_OK(cg_tensor_set_requires_grad(lf, true));
        cg_tensor *yc = cg_softmax(lc, dim), *yf = cg_softmax(lf, dim);
        CHECK_OK(cg_backward(yc, gc, false, false));
        CHECK_OK(cg_backward(yf, g, false, false));
        cg_tensor *gl = cg_tensor_grad_ref(lf);
        CHECK(gl != NULL);
        CHECK_NEAR(diff_from_fake(gl, cg_tensor_grad(lc)), 0, 0);
        cg_tensor *rel[] = {lc, lf, yc, yf};
        for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) cg_tensor_release(rel[i]);
    }
    CHECK(fake_backend_counts().kernels - before == 6); /* 2 x (log_softmax, softmax, its backward) */
    /* meta: shapes only, no entry runs */
    cg_tensor *m = cg_ones(2, s23, CG_DTYPE_F32, cg_meta()), *sm = cg_softmax(m, 1);
    CHECK(sm && cg_tensor_ndim(sm) == 2 && cg_device_eq(cg_tensor_device(sm), cg_meta()));
    CHECK(fake_backend_counts().kernels - before == 6);
    cg_tensor *all[] = {xc, gc, x, g, m, sm};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) cg_tensor_release(all[i]);
}

/* the reduction driver through the fake's run_reduce: strided input, dims
 * subsets, keepdim, indices (argmax), a full reduction, empty, backward */
TEST(fake_reductions) {
    fake_backend_install();
    int64_t s34[2] = {3, 4};
    double v[12];
    for (int i = 0; i < 12; i++) v[i] = (i * 7 % 5) - 1.5 + 0.25 * i;
    cg_tensor *xc = tt_tensor(CG_DTYPE_F64, 2, s34, v), *x = cg_to_device(xc, fake_device());
    cg_tensor *xct = cg_transpose(xc, 0, 1), *xt = cg_transpose(x, 0, 1); /* strided */
    int64_t d0 = 0, d1 = 1;
    struct { cg_tensor *got, *want; } cases[] = {
        {cg_sum(x, 0, NULL, false), cg_sum(xc, 0, NULL, false)},
        {cg_sum(xt, 1, &d0, true), cg_sum(xct, 1, &d0, true)},
        {cg_mean(xt, 1, &d1, false), cg_mean(xct, 1, &d1, false)},
        {cg_amax(x, 1, &d1, false), cg_amax(xc, 1, &d1, false)},
        {cg_argmax(xt, true, d1, false), cg_argmax(xct, true, d1, false)},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        CHECK(cases[i].want != NULL);
        CHECK_NEAR(diff_from_fake(cases[i].got, cases[i].want), 0, 0);
        cg_tensor_release(cases[i].want);
    }
    int64_t s0[2] = {0, 3};
    cg_tensor *e = cg_zeros(2, s0, CG_DTYPE_F32, fake_device()), *es = cg_sum(e, 1, &d0, false);
    CHECK(es && cg_tensor_numel(es) == 3);
    cg_tensor *esc = es ? on_cpu(es) : NULL;
    for (int i = 0; esc && i < 3; i++) CHECK_NEAR(tt_get(esc, i), 0, 0);
    /* d sum(x * x) / dx = 2x, on the fake device */
    cg_tensor *leaf = cg_clone(x);
    CHECK_OK(cg_tensor_set_requires_grad(leaf, true));
    cg_tensor *sq = cg_mul(leaf, leaf), *tot = cg_sum(sq, 0, NULL, false);
    cg_tensor *seed = cg_ones(0, NULL, CG_DTYPE_F64, fake_device());
    CHECK_OK(cg_backward(tot, seed, false, false));
    cg_tensor *want = cg_add(xc, xc);
    CHECK_NEAR(diff_from_fake(cg_tensor_grad_ref(leaf), want), 0, 0);
    cg_tensor *all[] = {xc, x, xct, xt, e, es, esc, leaf, sq, tot, seed, want};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) cg_tensor_release(all[i]);
}

/* optimizer steps are kernel entries: the fake device lacks them (named), meta runs none */
TEST(fake_optimizer_step_entries) {
    fake_backend_install();
    int64_t s3[1] = {3};
    cg_sgd_options o = {.lr = 0.1};
    cg_tensor *p = cg_ones(1, s3, CG_DTYPE_F32, fake_device()), *g = cg_ones(1, s3, CG_DTYPE_F32, fake_device());
    CHECK_ERR(cg_sgd_step(1, &p, &g, NULL, &o) != CG_OK, CG_ERR_NOT_IMPLEMENTED, "[sgd] is not implemented for device 'fake'");
    cg_tensor *pm = cg_ones(1, s3, CG_DTYPE_F32, cg_meta()), *gm = cg_ones(1, s3, CG_DTYPE_F32, cg_meta());
    CHECK_OK(cg_sgd_step(1, &pm, &gm, NULL, &o));
    cg_tensor *all[] = {p, g, pm, gm};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) cg_tensor_release(all[i]);
}
