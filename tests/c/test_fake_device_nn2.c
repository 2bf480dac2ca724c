/* test_fake_device_nn2.c — the normalization, loss, nn_misc and RNG kernel
 * entries through the device seam: on the fake device (whose table lacks
 * them) each op fails with NotImplementedError naming the op and the device,
 * never touching its memory and never advancing the generator; on meta each
 * gives the right shape and dtype, backward included where differentiable. */
#include "fake_checks.h"

#include <stdio.h>
#include <string.h>

static bool same_shape(const cg_tensor *a, const cg_tensor *b) {
    return a && b && shape_is(a, cg_tensor_ndim(b), cg_tensor_shape(b), cg_tensor_dtype(b));
}


TEST(fake_nn2_entries_missing) {
    fake_backend_install();
    cg_device f = fake_device();
    uint64_t seed0, off0, seed1, off1;
    cg_manual_seed(7);
    cg_rng_get_state(&seed0, &off0);
    int64_t sx[3] = {2, 3, 4}, s3[1] = {3}, s4[1] = {4}, s2[1] = {2}, s23[2] = {2, 3}, s34[2] = {3, 4};
    cg_tensor *x = cg_ones(3, sx, CG_DTYPE_F32, f), *c3 = cg_ones(1, s3, CG_DTYPE_F32, f);
    cg_tensor *c4 = cg_ones(1, s4, CG_DTYPE_F32, f), *l23 = cg_ones(2, s23, CG_DTYPE_F32, f);
    cg_tensor *emb = cg_ones(2, s34, CG_DTYPE_F32, f), *idx = cg_zeros(1, s2, CG_DTYPE_I64, f);
    cg_tensor *probs = cg_full(2, s23, 0.5, CG_DTYPE_F32, f);
    cg_tensor *made[] = {x, c3, c4, l23, emb, idx, probs};
    for (int i = 0; i < 7; i++) CHECK_NN(made[i]);
    /* normalization: training (fused), evaluation (fused), layer and group norm */
    check_refused(cg_batch_norm(x, c3, c3, c3, c3, true, 0.1, 1e-5) == NULL, "batch_norm");
    check_refused(cg_batch_norm(x, c3, c3, c3, c3, false, 0.1, 1e-5) == NULL, "batch_norm");
    check_refused(cg_instance_norm(x, NULL, NULL, NULL, NULL, true, 0.1, 1e-5) == NULL, "instance_norm");
    int64_t ns[1] = {4};
    check_refused(cg_layer_norm(x, 1, ns, c4, c4, 1e-5) == NULL, "layer_norm");
    int64_t sg[3] = {2, 4, 3};
    cg_tensor *xg = cg_ones(3, sg, CG_DTYPE_F32, f), *c4g = cg_ones(1, s4, CG_DTYPE_F32, f);
    check_refused(cg_group_norm(xg, 2, c4g, c4g, 1e-5) == NULL, "group_norm");
    cg_tensor_release(xg), cg_tensor_release(c4g);
    /* losses reading their data: class targets, probabilities */
    check_refused(cg_nll_loss(l23, idx, NULL, -100, CG_REDUCTION_MEAN) == NULL, "nll_loss");
    check_refused(cg_cross_entropy(l23, idx, NULL, -100, 0.0, CG_REDUCTION_MEAN) == NULL, "cross_entropy");
    check_refused(cg_binary_cross_entropy(probs, probs, NULL, CG_REDUCTION_MEAN) == NULL, "binary_cross_entropy");
    /* nn_misc */
    check_refused(cg_dropout(x, 0.5, true) == NULL, "dropout");
    check_refused(cg_feature_dropout(x, 0.5, true) == NULL, "feature_dropout");
    check_refused(cg_alpha_dropout(x, 0.5, true) == NULL, "alpha_dropout");
    check_refused(cg_embedding(emb, idx, -1) == NULL, "embedding");
    check_refused(cg_embedding_renorm_(emb, idx, 1.0, 2.0) != CG_OK, "embedding_renorm_");
    check_refused(cg_one_hot(idx, 3) == NULL, "one_hot");
    check_refused(cg_one_hot(idx, -1) == NULL, "one_hot");
    /* random fills */
    check_refused(cg_rand(2, s23, CG_DTYPE_F32, f) == NULL, "rand");
    check_refused(cg_randn(2, s23, CG_DTYPE_F32, f) == NULL, "randn");
    check_refused(cg_randint(0, 5, 2, s23, CG_DTYPE_I64, f) == NULL, "randint");
    check_refused(cg_randperm(5, CG_DTYPE_I64, f) == NULL, "randperm");
    check_refused(cg_rand_like(x) == NULL, "rand");
    check_refused(cg_uniform_(x, 0.0, 1.0) != CG_OK, "uniform");
    check_refused(cg_normal_(x, 0.0, 1.0) != CG_OK, "normal");
    check_refused(cg_bernoulli_(x, 0.5) != CG_OK, "bernoulli");
    check_refused(cg_bernoulli(probs) == NULL, "bernoulli");
    check_refused(cg_normal(l23, probs) == NULL, "normal");
    check_refused(cg_multinomial(probs, 2, true) == NULL, "multinomial");
    check_refused(cg_multinomial(probs, 2, false) == NULL, "multinomial");
    /* nothing was drawn */
    cg_rng_get_state(&seed1, &off1);
    CHECK(seed1 == seed0 && off1 == off0);
    for (int i = 0; i < 7; i++) cg_tensor_release(made[i]);
    CHECK(cg_allocator_stats(fake_device()).live_bytes == 0); /* nothing leaked (the pool may cache) */
}

/* forward and backward on meta: shapes and dtypes, no data, no draws */
TEST(meta_nn2_shapes_and_backward) {
    cg_device m = cg_meta();
    uint64_t seed0, off0, seed1, off1;
    cg_manual_seed(11);
    cg_rng_get_state(&seed0, &off0);
    int64_t sx[4] = {2, 4, 3, 3}, s4[1] = {4}, s23[2] = {2, 3}, s2[1] = {2}, s53[2] = {5, 3};
    cg_tensor *x = cg_ones(4, sx, CG_DTYPE_F32, m), *w = cg_ones(1, s4, CG_DTYPE_F32, m);
    cg_tensor *b = cg_zeros(1, s4, CG_DTYPE_F32, m), *rm = cg_zeros(1, s4, CG_DTYPE_F32, m);
    cg_tensor *rv = cg_ones(1, s4, CG_DTYPE_F32, m), *lg = cg_ones(2, s23, CG_DTYPE_F64, m);
    cg_tensor *pr = cg_full(2, s23, 0.5, CG_DTYPE_F64, m), *tg = cg_zeros(1, s2, CG_DTYPE_I64, m);
    cg_tensor *emb = cg_ones(2, s53, CG_DTYPE_F32, m);
    cg_tensor *leaves[] = {x, w, b, lg, pr, emb};
    for (int i = 0; i < 6; i++) {
        CHECK_NN(leaves[i]);
        CHECK_OK(cg_tensor_set_requires_grad(leaves[i], true));
    }
    CHECK_NN(rm);
    CHECK_NN(rv);
    CHECK_NN(tg);
    int64_t ns[2] = {3, 3};
    cg_tensor *outs[] = {
        cg_batch_norm(x, rm, rv, w, b, true, 0.1, 1e-5),
        cg_batch_norm(x, rm, rv, w, b, false, 0.1, 1e-5),
        cg_instance_norm(x, NULL, NULL, w, b, true, 0.1, 1e-5),
        cg_layer_norm(x, 2, ns, NULL, NULL, 1e-5),
        cg_group_norm(x, 2, w, b, 1e-5),
        cg_dropout(x, 0.5, true),
        cg_alpha_dropout(x, 0.5, true),
    };
    size_t nouts = sizeof outs / sizeof outs[0];
    for (size_t i = 0; i < nouts; i++) CHECK(same_shape(outs[i], x));
    cg_tensor *fd = cg_feature_dropout(x, 0.5, true);
    CHECK(same_shape(fd, x));
    cg_tensor *nll = cg_nll_loss(lg, tg, NULL, -100, CG_REDUCTION_MEAN);
    cg_tensor *ce = cg_cross_entropy(lg, tg, NULL, -100, 0.1, CG_REDUCTION_NONE);
    cg_tensor *bce = cg_binary_cross_entropy(pr, pr, NULL, CG_REDUCTION_SUM);
    CHECK(shape_is(nll, 0, NULL, CG_DTYPE_F64) && shape_is(ce, 1, s2, CG_DTYPE_F64));
    CHECK(shape_is(bce, 0, NULL, CG_DTYPE_F64));
    int64_t se[2] = {2, 3};
    cg_tensor *e = cg_embedding(emb, tg, 0);
    CHECK(shape_is(e, 2, se, CG_DTYPE_F32));
    cg_tensor *emb2 = cg_ones(2, s53, CG_DTYPE_F32, m);
    CHECK_NN(emb2);
    if (emb2) CHECK_OK(cg_embedding_renorm_(emb2, tg, 1.0, 2.0));
    cg_tensor_release(emb2);
    int64_t so[2] = {2, 6};
    cg_tensor *oh = cg_one_hot(tg, 6);
    CHECK(shape_is(oh, 2, so, CG_DTYPE_I64));
    CHECK_ERR(cg_one_hot(tg, -1) == NULL, CG_ERR_NOT_IMPLEMENTED, "meta");
    int64_t sq[3] = {2, 4, 8}, sk[3] = {2, 5, 8};
    cg_tensor *q = cg_ones(3, sq, CG_DTYPE_F32, m), *k = cg_ones(3, sk, CG_DTYPE_F32, m);
    cg_tensor *at = q && k ? cg_scaled_dot_product_attention(q, k, k, NULL, 0.0, true, 0.0) : NULL;
    CHECK(shape_is(at, 3, sq, CG_DTYPE_F32));
    /* one scalar over everything, backward on meta */
    cg_tensor *tot = NULL;
    cg_tensor *parts[] = {outs[0], outs[1], outs[2], outs[3], outs[4], outs[5], outs[6], fd, nll, ce, bce, e};
    cg_tensor *tmp[32];
    int ntmp = 0;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        cg_tensor *s = parts[i] ? cg_sum(parts[i], 0, NULL, false) : NULL;
        CHECK_NN(s);
        if (!s) continue;
        if (cg_tensor_dtype(s) != CG_DTYPE_F32) {
            cg_tensor *c = cg_to_dtype(s, CG_DTYPE_F32);
            cg_tensor_release(s);
            s = c;
        }
        tmp[ntmp++] = s;
        cg_tensor *t = tot ? cg_add(tot, s) : s;
        if (tot) tmp[ntmp++] = t;
        tot = t;
    }
    CHECK_NN(tot);
    if (tot) CHECK_OK(cg_backward(tot, NULL, false, false));
    for (int i = 0; i < 6; i++) {
        cg_tensor *g = cg_tensor_grad_ref(leaves[i]);
        CHECK(same_shape(g, leaves[i]));
        cg_tensor_release(g);
    }
    /* the random fills on meta */
    cg_tensor *r[] = {cg_rand(2, s23, CG_DTYPE_BF16, m), cg_randn(2, s23, CG_DTYPE_F64, m),
                      cg_randint(0, 9, 2, s23, CG_DTYPE_I32, m), cg_bernoulli(pr),
                      cg_normal(lg, pr), cg_randn_like(lg)};
    CHECK(shape_is(r[0], 2, s23, CG_DTYPE_BF16) && shape_is(r[1], 2, s23, CG_DTYPE_F64));
    CHECK(shape_is(r[2], 2, s23, CG_DTYPE_I32) && same_shape(r[3], pr) && same_shape(r[4], lg));
    CHECK(same_shape(r[5], lg));
    int64_t s5[1] = {5}, sm[2] = {2, 2};
    cg_tensor *rp = cg_randperm(5, CG_DTYPE_I64, m), *mn = cg_multinomial(pr, 2, false);
    CHECK(shape_is(rp, 1, s5, CG_DTYPE_I64) && shape_is(mn, 2, sm, CG_DTYPE_I64));
    cg_tensor *u = cg_zeros(2, s23, CG_DTYPE_F32, m);
    CHECK_OK(cg_uniform_(u, -1.0, 1.0));
    CHECK_OK(cg_normal_(u, 0.0, 2.0));
    CHECK_OK(cg_bernoulli_(u, 0.3));
    cg_rng_get_state(&seed1, &off1);
    CHECK(seed1 == seed0 && off1 == off0);
    cg_tensor_release(u), cg_tensor_release(rp), cg_tensor_release(mn);
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) cg_tensor_release(r[i]);
    for (int i = 0; i < ntmp; i++) cg_tensor_release(tmp[i]);
    for (size_t i = 0; i < nouts; i++) cg_tensor_release(outs[i]);
    cg_tensor *rel[] = {fd, nll, ce, bce, e, oh, q, k, at, rm, rv, tg};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) cg_tensor_release(rel[i]);
    for (int i = 0; i < 6; i++) cg_tensor_release(leaves[i]);
}
