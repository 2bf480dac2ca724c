/* test_autograd.c — the engine: accumulation, retain_graph, grad(), higher
 * order, hooks, retain_grad, anomaly mode, saved-tensor version checks, a
 * 100 000-op chain, in-place rules, and the checker catching a wrong backward. */
#include "test.h"
#include "dispatch/dispatch_internal.h"

#include <string.h>

static cg_tensor *leaf(double v) {
    cg_tensor *t = cg_scalar(v, CG_DTYPE_F64);
    cg_tensor_set_requires_grad(t, true);
    return t;
}

TEST(autograd_mul_add_accumulates) {
    cg_tensor *x = leaf(3.0), *y = leaf(4.0);
    cg_tensor *p = cg_mul(x, y), *z = cg_add(p, x); /* z = xy + x */
    CHECK_OK(cg_backward(z, NULL, true, false));
    CHECK_NEAR(tt_get(cg_tensor_grad(x), 0), 5.0, 0);
    CHECK_NEAR(tt_get(cg_tensor_grad(y), 0), 3.0, 0);
    CHECK_OK(cg_backward(z, NULL, false, false)); /* accumulates */
    CHECK_NEAR(tt_get(cg_tensor_grad(x), 0), 10.0, 0);
    CHECK(strcmp(cg_node_name(cg_tensor_grad_fn(z)), "AddBackward0") == 0);
    /* the graph's saved tensors were freed: a third backward fails clearly */
    CHECK_ERR(cg_backward(z, NULL, false, false) != CG_OK, CG_ERR_RUNTIME, "backward through the graph a second time");
    cg_tensor *ts[] = {x, y, p, z};
    for (int i = 0; i < 4; i++) cg_tensor_release(ts[i]);
}

TEST(autograd_grad_and_higher_order) {
    cg_tensor *x = leaf(2.0);
    cg_tensor *x2 = cg_mul(x, x), *x3 = cg_mul(x2, x); /* x^3 */
    cg_tensor *g1 = NULL, *g2 = NULL, *g3 = NULL;
    CHECK_OK(cg_autograd_grad(1, &x3, NULL, 1, &x, true, true, false, &g1));
    CHECK_NEAR(tt_get(g1, 0), 12.0, 1e-12); /* 3x^2 */
    CHECK_OK(cg_autograd_grad(1, &g1, NULL, 1, &x, true, true, false, &g2));
    CHECK_NEAR(tt_get(g2, 0), 12.0, 1e-12); /* 6x */
    CHECK_OK(cg_autograd_grad(1, &g2, NULL, 1, &x, true, false, false, &g3));
    CHECK_NEAR(tt_get(g3, 0), 6.0, 1e-12);
    CHECK(cg_tensor_grad(x) == NULL); /* grad() accumulates nothing */
    cg_tensor *ts[] = {x, x2, x3, g1, g2, g3};
    for (int i = 0; i < 6; i++) cg_tensor_release(ts[i]);
}

TEST(autograd_unused_and_no_grad) {
    cg_tensor *x = leaf(1.0), *y = leaf(2.0);
    cg_tensor *z = cg_mul(x, x);
    cg_tensor *in[2] = {x, y}, *res[2];
    CHECK_ERR(cg_autograd_grad(1, &z, NULL, 2, in, true, false, false, res) != CG_OK, CG_ERR_RUNTIME, "allow_unused");
    CHECK_OK(cg_autograd_grad(1, &z, NULL, 2, in, true, false, true, res));
    CHECK(res[0] && !res[1]);
    cg_tensor_release(res[0]);
    bool prev = cg_set_grad_enabled(false);
    cg_tensor *w = cg_mul(x, y);
    CHECK(!cg_tensor_requires_grad(w) && cg_tensor_grad_fn(w) == NULL);
    cg_set_grad_enabled(prev);
    CHECK_ERR(cg_backward(w, NULL, false, false) != CG_OK, CG_ERR_RUNTIME, "does not require grad");
    int64_t s[1] = {3};
    cg_tensor *v = cg_ones(1, s, CG_DTYPE_F64, cg_cpu());
    cg_tensor_set_requires_grad(v, true);
    cg_tensor *vv = cg_mul(v, v);
    CHECK_ERR(cg_backward(vv, NULL, false, false) != CG_OK, CG_ERR_RUNTIME, "only for scalar outputs");
    cg_tensor *ts[] = {x, y, z, w, v, vv};
    for (int i = 0; i < 6; i++) cg_tensor_release(ts[i]);
}

static cg_status double_hook(void *ctx, cg_tensor *grad, cg_tensor **rep) {
    (*(int *)ctx)++;
    cg_tensor *two = cg_scalar(2.0, cg_tensor_dtype(grad));
    *rep = cg_mul(grad, two);
    cg_tensor_release(two);
    return *rep ? CG_OK : cg_last_error();
}

TEST(autograd_hooks_and_retain_grad) {
    cg_tensor *x = leaf(3.0);
    cg_tensor *y = cg_mul(x, x); /* non-leaf */
    int calls = 0, leaf_calls = 0;
    CHECK(cg_tensor_register_hook(y, double_hook, &calls, NULL) > 0);
    CHECK(cg_tensor_register_hook(x, double_hook, &leaf_calls, NULL) > 0);
    CHECK_OK(cg_tensor_retain_grad(y));
    cg_tensor *z = cg_mul(y, y);
    CHECK_OK(cg_backward(z, NULL, false, false));
    /* dz/dy = 2y = 18, doubled by y's hook -> 36 retained; dx = 36*2x = 216, doubled by leaf hook */
    CHECK(calls == 1 && leaf_calls == 1);
    CHECK_NEAR(tt_get(cg_tensor_grad(y), 0), 36.0, 1e-12);
    CHECK_NEAR(tt_get(cg_tensor_grad(x), 0), 432.0, 1e-12);
    cg_tensor *ts[] = {x, y, z};
    for (int i = 0; i < 3; i++) cg_tensor_release(ts[i]);
}

TEST(autograd_version_check_names_op) {
    int64_t s[1] = {3};
    cg_tensor *x = tt_rand(CG_DTYPE_F64, 1, s, -1, 1, 5);
    cg_tensor_set_requires_grad(x, true);
    cg_tensor *a = cg_exp(x);          /* saves its output */
    cg_tensor *one = cg_scalar(1.0, CG_DTYPE_F64);
    CHECK_OK(cg_add_(a, one));         /* modifies the saved output in place */
    cg_tensor *l = cg_sum(a, 0, NULL, false);
    CHECK_ERR(cg_backward(l, NULL, false, false) != CG_OK, CG_ERR_RUNTIME, "ExpBackward0");
    CHECK_MSG(strstr(cg_last_error_message(), "") != NULL, "x");
    cg_tensor *ts[] = {x, a, one, l};
    for (int i = 0; i < 4; i++) cg_tensor_release(ts[i]);
}

TEST(autograd_version_message_details) {
    int64_t s[2] = {2, 3};
    cg_tensor *x = tt_rand(CG_DTYPE_F64, 2, s, -1, 1, 6);
    cg_tensor_set_requires_grad(x, true);
    cg_tensor *a = cg_exp(x);
    cg_tensor *one = cg_scalar(1.0, CG_DTYPE_F64);
    cg_add_(a, one);
    cg_tensor *l = cg_sum(a, 0, NULL, false);
    CHECK(cg_backward(l, NULL, false, false) != CG_OK);
    const char *m = cg_last_error_message();
    CHECK_MSG(strstr(m, "(2,3)") && strstr(m, "version 1") && strstr(m, "expected version 0"), "message: %s", m);
    cg_clear_error();
    cg_tensor *ts[] = {x, a, one, l};
    for (int i = 0; i < 4; i++) cg_tensor_release(ts[i]);
}

TEST(autograd_inplace_rules) {
    int64_t s[1] = {3}, s2[2] = {2, 3};
    cg_tensor *x = cg_ones(1, s, CG_DTYPE_F32, cg_cpu());
    cg_tensor_set_requires_grad(x, true);
    cg_tensor *one = cg_scalar(1.0, CG_DTYPE_F32);
    CHECK_ERR(cg_add_(x, one) != CG_OK, CG_ERR_RUNTIME, "leaf Variable that requires grad");
    bool prev = cg_set_grad_enabled(false);
    CHECK_OK(cg_add_(x, one)); /* allowed under no_grad */
    cg_set_grad_enabled(prev);
    cg_tensor *m = cg_ones(2, s2, CG_DTYPE_F32, cg_cpu());
    cg_tensor *small = cg_ones(1, s, CG_DTYPE_F32, cg_cpu());
    CHECK_ERR(cg_add_(small, m) != CG_OK, CG_ERR_SHAPE, "doesn't match the broadcast shape");
    /* in-place on a non-leaf records history and keeps the storage */
    cg_tensor *y = cg_mul(x, x);
    const void *sid = cg_tensor_storage_id(y);
    CHECK_OK(cg_mul_(y, x)); /* y = x^3 */
    CHECK(cg_tensor_storage_id(y) == sid);
    cg_tensor *l = cg_sum(y, 0, NULL, false);
    CHECK_OK(cg_backward(l, NULL, false, false));
    CHECK_NEAR(tt_get(cg_tensor_grad(x), 0), 12.0, 1e-5); /* 3x^2 at x=2 */
    cg_tensor *ts[] = {x, one, m, small, y, l};
    for (int i = 0; i < 6; i++) cg_tensor_release(ts[i]);
}

TEST(autograd_anomaly_names_op) {
    int64_t s[1] = {2};
    double v[2] = {0.0, 1.0};
    cg_tensor *x = tt_tensor(CG_DTYPE_F64, 1, s, v);
    cg_tensor_set_requires_grad(x, true);
    cg_tensor *zero = cg_zeros(1, s, CG_DTYPE_F64, cg_cpu());
    cg_tensor *d = cg_div(x, zero); /* backward: g / 0 * ... gives nan for x=0 */
    cg_tensor *l = cg_sum(d, 0, NULL, false);
    bool prev = cg_set_anomaly_enabled(true);
    cg_tensor *in[1] = {zero};
    (void)in;
    cg_tensor_set_requires_grad(zero, true);
    cg_tensor *d2 = cg_div(x, zero);
    cg_tensor *l2 = cg_sum(d2, 0, NULL, false);
    CHECK_ERR(cg_backward(l2, NULL, false, false) != CG_OK, CG_ERR_RUNTIME, "DivBackward0");
    cg_set_anomaly_enabled(prev);
    cg_tensor *ts[] = {x, zero, d, l, d2, l2};
    for (int i = 0; i < 6; i++) cg_tensor_release(ts[i]);
}

TEST(autograd_long_chain_no_stack_overflow) {
    cg_tensor *x = leaf(1.0);
    cg_tensor *one = cg_scalar(1e-6, CG_DTYPE_F64);
    cg_tensor *y = x;
    cg_tensor_retain(y);
    for (int i = 0; i < 100000; i++) {
        cg_tensor *n = cg_add(y, one);
        cg_tensor_release(y);
        y = n;
    }
    CHECK_OK(cg_backward(y, NULL, false, false));
    CHECK_NEAR(tt_get(cg_tensor_grad(x), 0), 1.0, 0);
    cg_tensor_release(y); /* frees a 100 000-node graph iteratively */
    cg_tensor_release(x);
    cg_tensor_release(one);
}

static char g_warning[512];
static int g_warning_fails;
static int keep_warning(const char *msg) {
    snprintf(g_warning, sizeof g_warning, "%s", msg);
    return g_warning_fails;
}

TEST(autograd_determinism_guard) {
    static const cg_elementwise_op *add;
    add = cg_find_binary_op("add");
    CHECK(add != NULL);
    cg_elementwise_op nondet = *add;
    nondet.schema.nondeterministic = true;
    cg_tensor *a = cg_scalar(1.0, CG_DTYPE_F32);
    cg_set_deterministic(true, false);
    CHECK_ERR(cg_binary_forward(&nondet, a, a, NULL, 0) == NULL, CG_ERR_RUNTIME, "deterministic");
    cg_set_deterministic(true, true); /* warn_only: the op runs and warns through the handler */
    cg_set_warning_handler(keep_warning);
    g_warning[0] = '\0';
    cg_tensor *w = cg_binary_forward(&nondet, a, a, NULL, 0);
    CHECK_NN(w);
    cg_tensor_release(w);
    CHECK(strstr(g_warning, "[add]") && strstr(g_warning, "warn_only"));
    g_warning_fails = 1; /* a handler that refuses turns the warning into the op's error */
    CHECK_ERR(cg_binary_forward(&nondet, a, a, NULL, 0) == NULL, CG_ERR_RUNTIME, "[add]");
    g_warning_fails = 0;
    cg_set_warning_handler(NULL);
    cg_set_deterministic(false, false);
    cg_tensor *r = cg_binary_forward(&nondet, a, a, NULL, 0);
    CHECK_NN(r);
    cg_tensor_release(r);
    cg_tensor_release(a);
}

TEST(autograd_autocast_guard_casts) {
    cg_elementwise_op lower = *cg_find_binary_op("mul");
    lower.schema.amp = CG_AMP_LOWER;
    int64_t s[1] = {4};
    cg_tensor *a = tt_rand(CG_DTYPE_F32, 1, s, -1, 1, 9);
    cg_tensor_set_requires_grad(a, true);
    cg_set_autocast(true, CG_DTYPE_BF16);
    cg_tensor *r = cg_binary_forward(&lower, a, a, NULL, 0);
    cg_tensor *k = cg_mul(a, a); /* keep policy: stays float32 */
    cg_set_autocast(false, CG_DTYPE_BF16);
    CHECK(r && cg_tensor_dtype(r) == CG_DTYPE_BF16);
    CHECK(k && cg_tensor_dtype(k) == CG_DTYPE_F32);
    cg_tensor *r32 = cg_to_dtype(r, CG_DTYPE_F32);
    cg_tensor *l = cg_sum(r32, 0, NULL, false);
    CHECK_OK(cg_backward(l, NULL, false, false));
    CHECK(cg_tensor_grad(a) && cg_tensor_dtype(cg_tensor_grad(a)) == CG_DTYPE_F32); /* float32 leaf gets float32 grad */
    cg_tensor *ts[] = {a, r, k, r32, l};
    for (int i = 0; i < 5; i++) cg_tensor_release(ts[i]);
}

TEST(autograd_autocast_cache_and_float64) {
    int64_t s[2] = {3, 3};
    cg_tensor *w = tt_rand(CG_DTYPE_F32, 2, s, -1, 1, 11), *d = tt_rand(CG_DTYPE_F64, 2, s, -1, 1, 12);
    cg_tensor_set_requires_grad(w, true);
    cg_set_autocast(true, CG_DTYPE_BF16);
    cg_tensor *r1 = cg_mm(w, w), *r2 = cg_mm(w, w), *rd = cg_mm(d, d);
    CHECK(cg_autocast_cache_size() == 1); /* one cast of the parameter, reused */
    cg_set_autocast(false, CG_DTYPE_BF16);
    cg_autocast_clear_cache();
    CHECK(cg_autocast_cache_size() == 0);
    CHECK(r1 && r2 && cg_tensor_dtype(r1) == CG_DTYPE_BF16 && cg_tensor_dtype(r2) == CG_DTYPE_BF16);
    CHECK(rd && cg_tensor_dtype(rd) == CG_DTYPE_F64); /* autocast never touches float64 */
    cg_tensor *ts[] = {w, d, r1, r2, rd};
    for (int i = 0; i < 5; i++) cg_tensor_release(ts[i]);
}

TEST(autograd_amp_unscale) {
    int64_t s[1] = {3};
    double v[3] = {2, 4, 8}, bad[3] = {1, INFINITY, 1};
    cg_tensor *g[2] = {tt_tensor(CG_DTYPE_F32, 1, s, v), tt_tensor(CG_DTYPE_BF16, 1, s, v)};
    cg_tensor *found = cg_zeros(0, NULL, CG_DTYPE_F32, cg_cpu()), *inv = cg_full(0, NULL, 0.5, CG_DTYPE_F32, cg_cpu());
    CHECK_OK(cg_amp_unscale_(2, g, found, inv));
    CHECK(tt_get(found, 0) == 0 && tt_get(g[0], 2) == 4 && tt_get(g[1], 0) == 1);
    cg_tensor *h = tt_tensor(CG_DTYPE_F32, 1, s, bad);
    CHECK_OK(cg_amp_unscale_(1, &h, found, inv));
    CHECK(tt_get(found, 0) == 1);
    cg_tensor *f64 = cg_zeros(0, NULL, CG_DTYPE_F64, cg_cpu());
    CHECK(cg_amp_unscale_(1, &h, f64, inv) == CG_ERR_DTYPE);
    cg_tensor *ts[] = {g[0], g[1], found, inv, h, f64};
    for (int i = 0; i < 6; i++) cg_tensor_release(ts[i]);
}

/* the checker must be able to fail: a deliberately wrong backward */
static cg_status wrong_mul_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    (void)node;
    for (int i = 0; i < 2; i++) {
        cg_tensor_retain(g[0]);
        gin[i] = g[0]; /* wrong: should be g * other */
    }
    return CG_OK;
}
static cg_elementwise_op g_wrong_mul;
static cg_tensor *wrong_fn(cg_tensor *const *in, void *ctx) {
    (void)ctx;
    return cg_binary_forward(&g_wrong_mul, in[0], in[1], NULL, 0);
}
static cg_tensor *mul_fn(cg_tensor *const *in, void *ctx) {
    (void)ctx;
    return cg_mul(in[0], in[1]);
}

TEST(autograd_gradcheck_catches_wrong_backward) {
    g_wrong_mul = *cg_find_binary_op("mul");
    g_wrong_mul.backward = wrong_mul_backward;
    int64_t s[1] = {3};
    cg_tensor *a = tt_rand(CG_DTYPE_F64, 1, s, 0.5, 2, 1), *b = tt_rand(CG_DTYPE_F64, 1, s, 0.5, 2, 2);
    cg_tensor_set_requires_grad(a, true);
    cg_tensor_set_requires_grad(b, true);
    cg_tensor *in[2] = {a, b};
    fprintf(stderr, "  (a gradcheck failure report is expected below)\n");
    CHECK(!tt_gradcheck(wrong_fn, NULL, 2, in, 1e-6, 1e-6, 1e-4));
    CHECK(tt_gradcheck(mul_fn, NULL, 2, in, 1e-6, 1e-6, 1e-4));
    CHECK(tt_gradgradcheck(mul_fn, NULL, 2, in, 1e-6, 1e-6, 1e-4));
    cg_tensor_release(a);
    cg_tensor_release(b);
}

/* in-place on a view: the base gets CopySlices, gradients reach both parts */
static cg_tensor *f_inplace_view(cg_tensor *const *in, void *ctx) {
    (void)ctx;
    cg_tensor *one = cg_scalar(1.0, CG_DTYPE_F64);
    cg_tensor *y = cg_mul(in[0], one);            /* non-leaf copy of x */
    cg_tensor *v = cg_slice(y, 0, 1, 4, 2);       /* y[1:4:2] */
    cg_status st = cg_mul_(v, in[1]);             /* v *= w (w broadcast) */
    cg_tensor *sq = st ? NULL : cg_mul(y, y);
    cg_tensor_release(one);
    cg_tensor_release(v);
    cg_tensor_release(y);
    return sq;
}

TEST(autograd_inplace_on_view_copyslices) {
    int64_t s[1] = {5}, s1[1] = {1};
    cg_tensor *x = tt_rand(CG_DTYPE_F64, 1, s, -1, 1, 21), *w = tt_rand(CG_DTYPE_F64, 1, s1, 0.5, 2, 22);
    cg_tensor_set_requires_grad(x, true);
    cg_tensor_set_requires_grad(w, true);
    cg_tensor *in[2] = {x, w};
    CHECK(tt_gradcheck(f_inplace_view, NULL, 2, in, 1e-6, 1e-7, 1e-5));
    CHECK(tt_gradgradcheck(f_inplace_view, NULL, 2, in, 1e-6, 1e-6, 1e-4));
    cg_tensor *y = f_inplace_view(in, NULL);
    CHECK(y && strcmp(cg_node_name(cg_tensor_grad_fn(y)), "MulBackward0") == 0);
    /* a view of a leaf requiring grad cannot be modified in place */
    cg_tensor *v = cg_slice(x, 0, 0, 2, 1);
    CHECK_ERR(cg_mul_(v, w) != CG_OK, CG_ERR_RUNTIME, "view of a leaf Variable");
    cg_tensor_release(v);
    cg_tensor_release(y);
    cg_tensor_release(x);
    cg_tensor_release(w);
}

TEST(autograd_copy_into_view_of_plain_tensor) {
    int64_t s4[1] = {4}, s2[1] = {2};
    cg_tensor *z = cg_zeros(1, s4, CG_DTYPE_F64, cg_cpu());
    cg_tensor *x = tt_rand(CG_DTYPE_F64, 1, s2, -1, 1, 23);
    cg_tensor_set_requires_grad(x, true);
    cg_tensor *v = cg_slice(z, 0, 1, 3, 1);
    CHECK_OK(cg_copy_(v, x));
    CHECK(cg_tensor_requires_grad(z) && strcmp(cg_node_name(cg_tensor_grad_fn(z)), "CopySlices") == 0);
    CHECK_NEAR(tt_get(z, 1), tt_get(x, 0), 0);
    cg_tensor *w = tt_rand(CG_DTYPE_F64, 1, s4, -1, 1, 24);
    cg_tensor *p = cg_mul(z, w), *l = cg_sum(p, 0, NULL, false);
    CHECK_OK(cg_backward(l, NULL, false, false));
    CHECK_NEAR(tt_get(cg_tensor_grad(x), 0), tt_get(w, 1), 1e-15);
    CHECK_NEAR(tt_get(cg_tensor_grad(x), 1), tt_get(w, 2), 1e-15);
    /* fill_ on a view cuts that region's gradient */
    cg_tensor *y = cg_mul(x, x), *yv = cg_slice(y, 0, 0, 1, 1);
    CHECK_OK(cg_fill_(yv, 3.0));
    cg_tensor *l2 = cg_sum(y, 0, NULL, false);
    cg_tensor_set_grad(x, NULL);
    CHECK_OK(cg_backward(l2, NULL, false, false));
    CHECK_NEAR(tt_get(cg_tensor_grad(x), 0), 0.0, 0);
    CHECK_NEAR(tt_get(cg_tensor_grad(x), 1), 2 * tt_get(x, 1), 1e-15);
    cg_tensor *ts[] = {z, x, v, w, p, l, y, yv, l2};
    for (int i = 0; i < 9; i++) cg_tensor_release(ts[i]);
}

/* Custom nodes (src/autograd/custom.c): a callback backward computing y = x^2
 * and a second, unused output; saved output without a cycle, lazy grads, ctx
 * freed with the node. */
typedef struct custom_ctx {
    int calls, freed;
    bool saw_null;
} custom_ctx;

static cg_status square_backward(void *p, cg_node *node, cg_tensor *const *gout, cg_tensor **gin) {
    custom_ctx *c = p;
    c->calls++;
    c->saw_null = gout[1] == NULL;
    cg_tensor *x = cg_custom_node_saved(node, 0);
    if (!x) return cg_last_error();
    cg_tensor *two = cg_scalar(2.0, CG_DTYPE_F64), *tx = cg_mul(two, x);
    gin[0] = cg_mul(gout[0], tx);
    cg_tensor_release(two);
    cg_tensor_release(tx);
    cg_tensor_release(x);
    return gin[0] ? CG_OK : cg_last_error();
}
static void custom_ctx_free(void *p) { ((custom_ctx *)p)->freed++; }

TEST(autograd_custom_node) {
    custom_ctx c = {0, 0, false};
    cg_tensor *x = leaf(3.0);
    bool prev = cg_set_grad_enabled(false);
    cg_tensor *y = cg_mul(x, x), *y2 = cg_add(x, x);
    cg_set_grad_enabled(prev);
    cg_node *n = cg_custom_node_new("SquareBackward", 1, &x, 2, 1, square_backward, &c, custom_ctx_free);
    CHECK_NN(n);
    CHECK_OK(cg_custom_node_set_output(n, 0, y, true));
    CHECK_OK(cg_custom_node_set_output(n, 1, y2, true));
    CHECK(cg_node_is_custom(n) && !cg_node_is_custom(cg_node_next(n, 0, NULL)));
    cg_custom_node_set_materialize_grads(n, false);
    CHECK_OK(cg_custom_node_save(n, 0, x));
    cg_node_release(n);
    CHECK(strcmp(cg_node_name(cg_tensor_grad_fn(y)), "SquareBackward") == 0);
    CHECK_OK(cg_backward(y, NULL, true, false));
    CHECK_NEAR(tt_get(cg_tensor_grad(x), 0), 6.0, 0);
    CHECK(c.calls == 1 && c.saw_null);
    /* an in-place write to the saved input is caught on the next backward */
    bool p2 = cg_set_grad_enabled(false);
    CHECK_OK(cg_add_(x, x));
    cg_set_grad_enabled(p2);
    CHECK_ERR(cg_backward(y, NULL, false, false) != CG_OK, CG_ERR_RUNTIME, "modified by an inplace operation");
    CHECK(c.freed == 0);
    cg_tensor_release(y);
    cg_tensor_release(y2);
    CHECK(c.freed == 1); /* the node died with its outputs and freed its context */
    cg_tensor_release(x);
}

/* ---------------------------------------------------------------- Note [Node hooks] */

typedef struct node_hook_log {
    int pre, post, post_acc, freed;
    double seen_out, seen_in; /* the gradients the hooks saw */
    int nin, nout;
    bool drop;      /* the pre-hook takes the gradient away */
    bool bad_shape; /* the post-hook returns a gradient of the wrong shape */
} node_hook_log;

static void log_free(void *ctx) { ((node_hook_log *)ctx)->freed++; }

/* doubles the node's incoming gradient (or drops it) */
static cg_status pre_double(void *ctx, cg_node *node, int n, cg_tensor **gout) {
    node_hook_log *l = ctx;
    (void)node;
    l->pre++;
    l->nout = n;
    l->seen_out = tt_get(gout[0], 0);
    cg_tensor *two = cg_scalar(2.0, CG_DTYPE_F64), *r = l->drop ? NULL : cg_mul(gout[0], two);
    cg_tensor_release(two);
    cg_tensor_release(gout[0]);
    gout[0] = r;
    return r || l->drop ? CG_OK : cg_last_error();
}

/* adds 1 to the gradient of input 0 */
static cg_status post_add_one(void *ctx, cg_node *node, int nin, cg_tensor **gin, int nout, cg_tensor *const *gout) {
    node_hook_log *l = ctx;
    (void)node;
    (void)gout;
    l->post++;
    l->nin = nin;
    l->nout = nout;
    if (nin == 0 || !gin[0]) return CG_OK; /* AccumulateGrad, or a node a pre-hook emptied */
    l->seen_in = tt_get(gin[0], 0);
    int64_t two[1] = {2};
    cg_tensor *one = l->bad_shape ? cg_ones(1, two, CG_DTYPE_F64, cg_cpu()) : cg_scalar(1.0, CG_DTYPE_F64);
    cg_tensor *r = l->bad_shape ? one : cg_add(gin[0], one);
    if (!l->bad_shape) cg_tensor_release(one);
    cg_tensor_release(gin[0]);
    gin[0] = r;
    return r ? CG_OK : cg_last_error();
}

static cg_status post_acc(void *ctx, cg_tensor *leaf_) {
    node_hook_log *l = ctx;
    l->post_acc++;
    l->seen_in = tt_get(cg_tensor_grad(leaf_), 0);
    return CG_OK;
}

TEST(autograd_node_hooks) {
    node_hook_log l = {0};
    cg_tensor *x = leaf(3.0);
    cg_tensor *y = cg_exp(x); /* dy/dx = e^3 */
    cg_node *n = cg_tensor_grad_fn(y);
    cg_tensor *later = cg_exp(y);
    CHECK(cg_node_num_outputs(n) == 1 && cg_node_sequence_nr(n) < cg_node_sequence_nr(cg_tensor_grad_fn(later)));
    cg_tensor_release(later);
    int64_t hp = cg_node_register_pre_hook(n, pre_double, &l, log_free);
    int64_t hq = cg_node_register_post_hook(n, post_add_one, &l, log_free);
    CHECK(hp > 0 && hq > hp);
    CHECK_OK(cg_backward(y, NULL, true, false));
    CHECK(l.pre == 1 && l.post == 1 && l.nin == 1 && l.nout == 1);
    CHECK_NEAR(l.seen_out, 1.0, 0);
    CHECK_NEAR(l.seen_in, 2 * exp(3.0), 1e-12);
    CHECK_NEAR(tt_get(cg_tensor_grad(x), 0), 2 * exp(3.0) + 1, 1e-12);
    /* removing: the ctx is freed once; removing again is a no-op */
    CHECK_OK(cg_node_remove_hook(n, hp));
    CHECK_OK(cg_node_remove_hook(n, hp));
    CHECK(l.freed == 1);
    CHECK_OK(cg_tensor_set_grad(x, NULL));
    CHECK_OK(cg_backward(y, NULL, true, false));
    CHECK(l.pre == 1 && l.post == 2);
    CHECK_NEAR(tt_get(cg_tensor_grad(x), 0), exp(3.0) + 1, 1e-12);
    /* a replacement of the wrong shape fails naming the node, and nothing accumulates */
    l.bad_shape = true;
    CHECK_OK(cg_tensor_set_grad(x, NULL));
    CHECK_ERR(cg_backward(y, NULL, true, false) != CG_OK, CG_ERR_SHAPE, "a hook of ExpBackward0");
    CHECK(cg_tensor_grad(x) == NULL);
    l.bad_shape = false;
    /* a pre-hook taking the only gradient away: the node computes nothing, x gets no gradient */
    l.drop = true;
    CHECK(cg_node_register_pre_hook(n, pre_double, &l, log_free) > 0);
    CHECK_OK(cg_backward(y, NULL, true, false));
    CHECK(cg_tensor_grad(x) == NULL && l.post == 4);
    /* the node frees the remaining hooks' contexts when it dies */
    cg_tensor_release(y);
    CHECK(l.freed == 3);

    /* AccumulateGrad: one output (the leaf's gradient), no inputs; post-hooks after accumulating */
    node_hook_log a = {0};
    y = cg_mul(x, x);
    cg_node *acc = cg_node_next(cg_tensor_grad_fn(y), 0, NULL);
    CHECK(acc && cg_node_variable(acc) == x && cg_node_num_outputs(acc) == 1 && cg_node_num_inputs(acc) == 0);
    CHECK(cg_node_register_post_hook(acc, post_add_one, &a, NULL) > 0);
    int64_t hacc = cg_tensor_register_post_accumulate_grad_hook(x, post_acc, &a, log_free);
    CHECK(hacc > 0);
    CHECK_OK(cg_backward(y, NULL, true, false));
    CHECK(a.post == 1 && a.nin == 0 && a.nout == 1 && a.post_acc == 1);
    CHECK_NEAR(a.seen_in, 6.0, 0);
    /* autograd.grad accumulates nothing: no post-accumulate hook */
    cg_tensor *res = NULL;
    CHECK_OK(cg_autograd_grad(1, &y, NULL, 1, &x, true, false, false, &res));
    cg_tensor_release(res);
    CHECK(a.post_acc == 1);
    CHECK_OK(cg_tensor_remove_hook(x, hacc));
    CHECK(a.freed == 1);
    CHECK_OK(cg_backward(y, NULL, false, false));
    CHECK(a.post_acc == 1);
    /* leaves only, and only those that require grad */
    CHECK_ERR(cg_tensor_register_post_accumulate_grad_hook(y, post_acc, &a, NULL) < 0, CG_ERR_RUNTIME, "non-leaf");
    cg_tensor *z = cg_scalar(1.0, CG_DTYPE_F64);
    CHECK_ERR(cg_tensor_register_post_accumulate_grad_hook(z, post_acc, &a, NULL) < 0, CG_ERR_RUNTIME,
              "doesn't require gradient");
    cg_tensor_release(z);
    cg_tensor_release(y);
    cg_tensor_release(x);
}
