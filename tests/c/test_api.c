/* test_api.c — the rest of the public API: accessors and state switches,
 * the remaining comparison ops, in-place forms, and autograd entry points
 * (backward with inputs, detach_, hook removal, node introspection). */
#include "opcheck.h"

#include <string.h>

static cg_tensor *f_ne(cg_tensor *const *x, void *c) { (void)c; return cg_ne(x[0], x[1]); }
static cg_tensor *f_le(cg_tensor *const *x, void *c) { (void)c; return cg_le(x[0], x[1]); }
static cg_tensor *f_gt(cg_tensor *const *x, void *c) { (void)c; return cg_gt(x[0], x[1]); }
static cg_tensor *f_ge(cg_tensor *const *x, void *c) { (void)c; return cg_ge(x[0], x[1]); }
static double r_ne(const double *x, void *c) { (void)c; return x[0] != x[1]; }
static double r_le(const double *x, void *c) { (void)c; return x[0] <= x[1]; }
static double r_gt(const double *x, void *c) { (void)c; return x[0] > x[1]; }
static double r_ge(const double *x, void *c) { (void)c; return x[0] >= x[1]; }
#define INTS ((1u << CG_DTYPE_U8) | (1u << CG_DTYPE_I32) | (1u << CG_DTYPE_I64) | (1u << CG_DTYPE_BOOL))

TEST(api_comparisons) {
    tt_check_elementwise(&(tt_ew_case){.name = "ne", .arity = 2, .fn = f_ne, .ref = r_ne, .int_dtypes = INTS, .lo = {0, 0}, .hi = {2, 2}});
    tt_check_elementwise(&(tt_ew_case){.name = "le", .arity = 2, .fn = f_le, .ref = r_le, .int_dtypes = INTS, .lo = {0, 0}, .hi = {2, 2}});
    tt_check_elementwise(&(tt_ew_case){.name = "gt", .arity = 2, .fn = f_gt, .ref = r_gt, .int_dtypes = INTS, .lo = {0, 0}, .hi = {2, 2}});
    tt_check_elementwise(&(tt_ew_case){.name = "ge", .arity = 2, .fn = f_ge, .ref = r_ge, .int_dtypes = INTS, .lo = {0, 0}, .hi = {2, 2}});
}

TEST(api_isnan_all_sum_dtype) {
    int64_t s[1] = {4};
    double v[4] = {1, NAN, 0, -INFINITY};
    cg_tensor *x = tt_tensor(CG_DTYPE_F32, 1, s, v);
    cg_tensor *n = cg_isnan(x), *a = cg_all(x, 0, NULL, false), *an = cg_all(n, 0, NULL, false);
    CHECK(n && cg_tensor_dtype(n) == CG_DTYPE_BOOL && tt_get(n, 1) == 1 && tt_get(n, 0) == 0 && tt_get(n, 3) == 0);
    CHECK(a && tt_get(a, 0) == 0 && an && tt_get(an, 0) == 0); /* 0 is falsy */
    int64_t s2[2] = {2, 3};
    cg_tensor *i = tt_rand(CG_DTYPE_I32, 2, s2, 0, 5, 3);
    int64_t d[1] = {1};
    cg_tensor *sd = cg_sum_dtype(i, 1, d, true, CG_DTYPE_F64);
    CHECK(sd && cg_tensor_dtype(sd) == CG_DTYPE_F64 && cg_tensor_ndim(sd) == 2 && cg_tensor_shape(sd)[1] == 1);
    CHECK_NEAR(tt_get(sd, 0), tt_get(i, 0) + tt_get(i, 1) + tt_get(i, 2), 0);
    cg_tensor *ts[] = {x, n, a, an, i, sd};
    for (int k = 0; k < 6; k++) cg_tensor_release(ts[k]);
}

static cg_tensor *f_views(cg_tensor *const *in, void *ctx) {
    (void)ctx;
    cg_tensor *n = cg_narrow(in[0], 1, 1, 2);      /* (3,2) */
    cg_tensor *t = cg_t(n);                        /* (2,3) */
    cg_tensor *c = cg_contiguous(t);
    cg_tensor *u = cg_unsqueeze(c, 0);             /* (1,2,3) */
    cg_tensor *b = cg_broadcast_to(u, 3, (int64_t[]){2, 2, 3});
    cg_tensor *sq = cg_squeeze_dim(u, 0);
    cg_tensor *p = cg_mul(b, b), *q = cg_add(p, sq);
    cg_tensor *ts[] = {n, t, c, u, b, sq, p};
    for (int i = 0; i < 7; i++) cg_tensor_release(ts[i]);
    return q;
}

TEST(api_view_helpers_grads) {
    int64_t s[2] = {3, 4};
    cg_tensor *x = tt_rand(CG_DTYPE_F64, 2, s, -1, 1, 5);
    cg_tensor_set_requires_grad(x, true);
    CHECK(tt_gradcheck(f_views, NULL, 1, &x, 1e-6, 1e-7, 1e-5));
    CHECK(tt_gradgradcheck(f_views, NULL, 1, &x, 1e-6, 1e-6, 1e-4));
    cg_tensor *n = cg_narrow(x, 0, 0, 2);
    CHECK(cg_tensor_is_view(n) && !cg_tensor_is_view(x));
    cg_tensor *c = cg_contiguous(x);
    CHECK(c == x); /* already contiguous: the same tensor */
    CHECK_ERR(cg_narrow(x, 1, 3, 2) == NULL, CG_ERR_INDEX, "exceeds dimension size");
    cg_tensor_release(c);
    cg_tensor_release(n);
    cg_tensor_release(x);
}

TEST(api_inplace_forms_match) {
    int64_t s[2] = {2, 3};
    cg_tensor *a = tt_rand(CG_DTYPE_F32, 2, s, 1, 2, 6), *b = tt_rand(CG_DTYPE_F32, 2, s, 1, 2, 7);
    cg_tensor *(*outf[2])(cg_tensor *, cg_tensor *) = {cg_sub, cg_div};
    cg_status (*inf[2])(cg_tensor *, cg_tensor *) = {cg_sub_, cg_div_};
    for (int k = 0; k < 2; k++) {
        cg_tensor *ref = outf[k](a, b), *c = cg_clone(a);
        const void *sid = cg_tensor_storage_id(c);
        uint64_t v0 = cg_tensor_version(c);
        CHECK_OK(inf[k](c, b));
        CHECK(cg_tensor_storage_id(c) == sid && cg_tensor_version(c) == v0 + 1);
        CHECK(tt_maxdiff(c, ref) == 0);
        cg_tensor_release(ref);
        cg_tensor_release(c);
    }
    CHECK_OK(cg_zero_(a));
    CHECK(tt_get(a, 5) == 0);
    cg_tensor_release(a);
    cg_tensor_release(b);
}

TEST(api_state_switches) {
    CHECK(cg_is_grad_enabled());
    bool prev = cg_set_inference_mode(true);
    CHECK(cg_is_inference_mode() && !cg_is_grad_enabled());
    cg_tensor *x = cg_scalar(1.0, CG_DTYPE_F32);
    cg_tensor_set_requires_grad(x, true);
    cg_tensor *y = cg_mul(x, x);
    CHECK(!cg_tensor_requires_grad(y)); /* no graph in inference mode */
    cg_set_inference_mode(prev);
    CHECK(!cg_is_inference_mode() && cg_is_grad_enabled());
    cg_set_deterministic(true, false);
    CHECK(cg_is_deterministic());
    cg_set_deterministic(false, false);
    cg_set_autocast(true, CG_DTYPE_F16);
    CHECK(cg_is_autocast_enabled() && cg_get_autocast_dtype() == CG_DTYPE_F16);
    cg_set_autocast(false, CG_DTYPE_BF16);
    bool pa = cg_set_anomaly_enabled(true);
    CHECK(cg_is_anomaly_enabled());
    cg_set_anomaly_enabled(pa);
    CHECK(cg_dtype_is_integral(CG_DTYPE_BOOL) && !cg_dtype_is_integral(CG_DTYPE_F16));
    CHECK(cg_dtype_is_signed(CG_DTYPE_I8) && !cg_dtype_is_signed(CG_DTYPE_U8));
    CHECK(strcmp(cg_device_name(cg_meta()), "meta") == 0 && strcmp(cg_device_name(cg_cpu()), "cpu") == 0);
    CHECK(cg_set_error(CG_ERR_VALUE, "[test] %d", 7) == CG_ERR_VALUE && strcmp(cg_last_error_message(), "[test] 7") == 0);
    cg_clear_error();
    cg_tensor_release(x);
    cg_tensor_release(y);
}

TEST(api_tensor_accessors_and_meta) {
    cg_tensor *m = cg_scalar_on(2.0, CG_DTYPE_F32, cg_meta());
    CHECK(m && cg_tensor_device(m).type == CG_DEVICE_META);
    double v;
    CHECK_ERR(cg_tensor_item(m, &v) != CG_OK, CG_ERR_DEVICE, "meta");
    int64_t s[1] = {3};
    cg_tensor *x = cg_ones(1, s, CG_DTYPE_F32, cg_cpu());
    cg_tensor *mx = cg_to_device(x, cg_meta());
    CHECK(mx && cg_tensor_device(mx).type == CG_DEVICE_META && cg_tensor_numel(mx) == 3);
    CHECK_ERR(cg_to_device(mx, cg_cpu()) == NULL, CG_ERR_NOT_IMPLEMENTED, "meta");
    CHECK_ERR(cg_tensor_item(x, &v) != CG_OK, CG_ERR_VALUE, "3 elements");
    int tag;
    cg_tensor_set_pyobj(x, &tag);
    CHECK(cg_tensor_pyobj(x) == &tag);
    cg_tensor_set_pyobj(x, NULL);
    cg_tensor *el = cg_empty_like(x), *zl = cg_zeros_like(x), *fl = cg_full_like(x, 4.5);
    CHECK(el && zl && fl && tt_get(zl, 2) == 0 && tt_get(fl, 1) == 4.5);
    cg_allocator_empty_cache(cg_cpu());
    CHECK(cg_allocator_stats(cg_cpu()).cached_bytes == 0);
    cg_tensor *ts[] = {m, x, mx, el, zl, fl};
    for (int i = 0; i < 6; i++) cg_tensor_release(ts[i]);
}

static cg_status count_hook(void *ctx, cg_tensor *grad, cg_tensor **rep) {
    (void)grad, (void)rep;
    (*(int *)ctx)++;
    return CG_OK;
}

TEST(api_autograd_entry_points) {
    cg_tensor *a = cg_scalar(2.0, CG_DTYPE_F64), *b = cg_scalar(3.0, CG_DTYPE_F64);
    cg_tensor_set_requires_grad(a, true);
    cg_tensor_set_requires_grad(b, true);
    cg_tensor *y = cg_mul(a, b), *z = cg_mul(y, a);
    CHECK(cg_tensor_is_leaf(a) && !cg_tensor_is_leaf(y) && cg_tensor_output_nr(y) == 0);
    /* node introspection: z = y * a -> next functions (MulBackward0, AccumulateGrad(a)) */
    cg_node *n = cg_tensor_grad_fn(z);
    int nr = -1;
    CHECK(cg_node_num_inputs(n) == 2);
    CHECK(strcmp(cg_node_name(cg_node_next(n, 0, &nr)), "MulBackward0") == 0 && nr == 0);
    cg_node *acc = cg_node_next(n, 1, &nr);
    CHECK(strcmp(cg_node_name(acc), "AccumulateGrad") == 0 && cg_node_variable(acc) == a);
    cg_node_retain(acc);
    cg_node_release(acc);
    /* hooks can be removed */
    int calls = 0;
    int64_t h = cg_tensor_register_hook(a, count_hook, &calls, NULL);
    CHECK_OK(cg_tensor_remove_hook(a, h));
    CHECK_OK(cg_tensor_retain_grad(y));
    CHECK(cg_tensor_retains_grad(y));
    /* backward restricted to inputs: only b accumulates */
    cg_tensor *only_b[1] = {b};
    CHECK_OK(cg_backward_multi(1, &z, NULL, true, false, 1, only_b));
    CHECK(cg_tensor_grad(a) == NULL && cg_tensor_grad(b) && tt_get(cg_tensor_grad(b), 0) == 4.0);
    CHECK(calls == 0);
    CHECK_OK(cg_backward_multi(1, &z, NULL, false, false, 0, NULL));
    CHECK(tt_get(cg_tensor_grad(a), 0) == 12.0); /* dz/da = 2ab */
    /* detach_ turns z into a leaf without history */
    CHECK_OK(cg_detach_(z));
    CHECK(cg_tensor_is_leaf(z) && !cg_tensor_requires_grad(z));
    cg_tensor *ts[] = {a, b, y, z};
    for (int i = 0; i < 4; i++) cg_tensor_release(ts[i]);
}

/* The profiler from C: op events with shapes and FLOPs, nesting of a user
 * range and of a backward node over the ops its formula runs, nothing
 * recorded once stopped. */
TEST(api_profiler) {
    int64_t sa[2] = {3, 4}, sb[2] = {4, 5};
    cg_tensor *a = tt_rand(CG_DTYPE_F32, 2, sa, -1, 1, 1), *b = tt_rand(CG_DTYPE_F32, 2, sb, -1, 1, 2);
    cg_tensor_set_requires_grad(a, true);
    CHECK(!cg_profiler_enabled());
    CHECK(cg_profiler_start(CG_PROF_SHAPES | CG_PROF_FLOPS | CG_PROF_MEMORY) == CG_OK);
    CHECK(cg_profiler_enabled());
    CHECK_ERR(cg_profiler_start(0) != CG_OK, CG_ERR_RUNTIME, "already running");
    int64_t range = cg_profiler_range_push("block");
    CHECK(range >= 0);
    cg_tensor *p = cg_mm(a, b);
    cg_tensor *s = cg_sum(p, 0, NULL, false);
    cg_profiler_range_pop(range);
    CHECK(cg_backward(s, NULL, false, false) == CG_OK);
    CHECK(cg_profiler_stop() == CG_OK);
    cg_tensor *late = cg_mm(a, b); /* not recorded */
    int64_t n;
    const cg_prof_event *ev = cg_profiler_events(&n);
    int64_t block = -1, mm = -1, mmb = -1, inner_mm = 0;
    for (int64_t i = 0; i < n; i++) {
        if (i) CHECK(ev[i].start_ns >= ev[i - 1].start_ns);
        CHECK(ev[i].end_ns >= ev[i].start_ns && ev[i].thread == ev[0].thread);
        if (!strcmp(ev[i].name, "block")) block = i;
        else if (!strcmp(ev[i].name, "mm") && ev[i].parent == block) mm = i;
        else if (!strcmp(ev[i].name, "MmBackward0")) mmb = i;
        else if (mmb >= 0 && ev[i].parent == mmb && ev[i].kind == CG_PROF_OP) inner_mm++;
    }
    CHECK(block == 0 && ev[block].kind == CG_PROF_RANGE && ev[block].parent == -1);
    CHECK(mm > 0 && ev[mm].flops == 2 * 3 * 4 * 5 && !strcmp(ev[mm].shapes, "[[3, 4], [4, 5]]"));
    CHECK(!strcmp(ev[mm].dtypes, "[float32, float32]") && ev[mm].alloc_bytes >= 3 * 5 * 4);
    CHECK(mmb > 0 && ev[mmb].kind == CG_PROF_BACKWARD && ev[mmb].parent == -1 && inner_mm >= 1);
    CHECK(cg_profiler_stop() != CG_OK);
    cg_clear_error();
    cg_tensor *ts[] = {a, b, p, s, late};
    for (int k = 0; k < 5; k++) cg_tensor_release(ts[k]);
}

static int g_stack_calls;
static void test_stack_fn(char *buf, size_t cap) { snprintf(buf, cap, "site%d", ++g_stack_calls); }

/* The entry points outside the drivers (Note [Profiled entry points]):
 * factories, views, copies are events, composites nest their parts, a
 * contiguous that returns its input is not an event, and the stack hook runs
 * once per op not nested in an op (nested ones share its text). */
TEST(api_profiler_entry_points) {
    int64_t s23[2] = {2, 3}, s6[1] = {6};
    cg_tensor *x = tt_rand(CG_DTYPE_F32, 2, s23, -1, 1, 3);
    g_stack_calls = 0;
    cg_profiler_set_stack_fn(test_stack_fn);
    CHECK(cg_profiler_start(CG_PROF_STACK) == CG_OK);
    cg_tensor *z = cg_zeros(2, s23, CG_DTYPE_F32, cg_cpu());
    cg_tensor *c = cg_contiguous(x);            /* already contiguous: not recorded */
    cg_tensor *t = cg_transpose(x, 0, 1);
    cg_tensor *r = cg_reshape(t, 1, s6);        /* not viewable: clone, then view */
    CHECK(cg_profiler_stop() == CG_OK);
    cg_profiler_set_stack_fn(NULL);
    int64_t n;
    const cg_prof_event *ev = cg_profiler_events(&n);
    const char *want[][2] = {{"zeros", ""}, {"full", "zeros"}, {"empty", "full"}, {"fill_", "full"},
                             {"transpose", ""}, {"permute", "transpose"}, {"reshape", ""}, {"clone", "reshape"},
                             {"view", "reshape"}};
    CHECK(n == 9);
    for (int64_t i = 0; i < n && i < 9; i++) {
        CHECK(!strcmp(ev[i].name, want[i][0]) && ev[i].kind == CG_PROF_OP);
        CHECK(want[i][1][0] ? ev[i].parent >= 0 && !strcmp(ev[ev[i].parent].name, want[i][1]) : ev[i].parent == -1);
    }
    CHECK(g_stack_calls == 3 && !strcmp(ev[0].stack, "site1") && !strcmp(ev[3].stack, "site1"));
    CHECK(!strcmp(ev[5].stack, "site2") && !strcmp(ev[8].stack, "site3"));
    cg_tensor *ts[] = {x, z, c, t, r};
    for (int k = 0; k < 5; k++) cg_tensor_release(ts[k]);
}

/* DLPack devices come from the backends: the CPU is kDLCPU (1), meta has none */
TEST(api_dlpack_devices) {
    int32_t type = -1, id = -1;
    CHECK(cg_device_to_dlpack(cg_cpu(), &type, &id) && type == 1 && id == 0);
    CHECK(!cg_device_to_dlpack(cg_meta(), &type, &id));
    cg_device d = cg_meta();
    CHECK(cg_device_from_dlpack(1, 0, &d) && d.type == CG_DEVICE_CPU && d.index == 0);
    CHECK(!cg_device_from_dlpack(2, 0, &d));  /* kDLCUDA: no backend serves it in this build */
    CHECK(!cg_device_from_dlpack(1, 3, &d));  /* cpu:3 is no device */
    CHECK(!cg_device_from_dlpack(0, 0, &d));
    float buf[2] = {1, 2};
    int64_t n = 2;
    CHECK_ERR(cg_from_blob_on(buf, 1, &n, NULL, CG_DTYPE_F32, NULL, NULL, cg_meta()) == NULL, CG_ERR_DEVICE, "meta");
    cg_tensor *t = cg_from_blob_on(buf, 1, &n, NULL, CG_DTYPE_F32, NULL, NULL, cg_cpu());
    CHECK(t && cg_tensor_data(t) == (void *)buf);
    cg_tensor_release(t);
}
