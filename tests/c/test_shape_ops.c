/* test_shape_ops.c — cat / stack (the variadic driver), split / split_sizes /
 * chunk / unbind, flip, roll, repeat / tile, tril / triu: values against
 * plain-loop references in every dtype and layout, gradcheck and
 * gradgradcheck, storage sharing of the views, and the error cases. */
#include "test.h"

#include <string.h>

static const cg_dtype k_all_dtypes[] = {CG_DTYPE_F64, CG_DTYPE_F32, CG_DTYPE_F16, CG_DTYPE_BF16, CG_DTYPE_I64,
                                        CG_DTYPE_I32, CG_DTYPE_I16, CG_DTYPE_I8,  CG_DTYPE_U8,   CG_DTYPE_BOOL};
#define NDT ((int)(sizeof k_all_dtypes / sizeof k_all_dtypes[0]))

static void release_n(int n, cg_tensor **ts) {
    for (int i = 0; i < n; i++) cg_tensor_release(ts[i]);
}

/* logical row-major flat index of coord in shape */
static int64_t flat_of(int nd, const int64_t *shape, const int64_t *coord) {
    int64_t f = 0;
    for (int d = 0; d < nd; d++) f = f * shape[d] + coord[d];
    return f;
}

typedef double (*ref_at)(const int64_t *coord, void *ctx);

/* out must have shape (nd, shape) and out[c] == ref(c) for every coordinate c */
static bool check_ref(const char *what, const cg_tensor *out, int nd, const int64_t *shape, ref_at ref, void *ctx) {
    if (!out) {
        cg_test_fail(__FILE__, __LINE__, "%s: NULL result: %s", what, cg_last_error_message());
        return false;
    }
    if (cg_tensor_ndim(out) != nd || (nd && memcmp(cg_tensor_shape(out), shape, sizeof(int64_t) * (size_t)nd))) {
        cg_test_fail(__FILE__, __LINE__, "%s: wrong result shape", what);
        return false;
    }
    int64_t n = cg_tensor_numel(out), c[CG_MAX_DIMS];
    for (int64_t f = 0; f < n; f++) {
        int64_t r = f;
        for (int d = nd - 1; d >= 0; d--) {
            c[d] = r % shape[d];
            r /= shape[d];
        }
        double want = ref(c, ctx), got = tt_get(out, f);
        if (!(got == want || (isnan(got) && isnan(want)))) {
            cg_test_fail(__FILE__, __LINE__, "%s: element %lld is %g, expected %g", what, (long long)f, got, want);
            return false;
        }
    }
    return true;
}

/* an input of dtype dt with values in [-4, 4) (bool: mostly true, some false) */
static cg_tensor *make_in(cg_dtype dt, int nd, const int64_t *shape, unsigned seed, bool noncontig) {
    cg_tensor *t = tt_rand(dt, nd, shape, dt == CG_DTYPE_BOOL ? -0.6 : -4, dt == CG_DTYPE_BOOL ? 1.4 : 4, seed);
    if (!noncontig) return t;
    cg_tensor *nc = tt_noncontig(t);
    cg_tensor_release(t);
    return nc;
}

/* ================================================================ cat / stack */

typedef struct cat_ref { int n; cg_tensor *const *ts; int64_t dim; bool stack; } cat_ref;

static double cat_ref_at(const int64_t *c, void *p) {
    const cat_ref *r = p;
    int64_t cc[CG_MAX_DIMS];
    if (r->stack) {
        const cg_tensor *t = r->ts[c[r->dim]];
        int nd = cg_tensor_ndim(t);
        for (int d = 0, j = 0; d <= nd; d++)
            if (d != r->dim) cc[j++] = c[d];
        return tt_get(t, flat_of(nd, cg_tensor_shape(t), cc));
    }
    int64_t pos = c[r->dim];
    for (int i = 0; i < r->n; i++) {
        const cg_tensor *t = r->ts[i];
        int nd = cg_tensor_ndim(t);
        if (nd == 1 && cg_tensor_shape(t)[0] == 0) continue;
        int64_t len = cg_tensor_shape(t)[r->dim];
        if (pos < len) {
            memcpy(cc, c, sizeof(int64_t) * (size_t)nd);
            cc[r->dim] = pos;
            return tt_get(t, flat_of(nd, cg_tensor_shape(t), cc));
        }
        pos -= len;
    }
    return NAN;
}

TEST(cat_values_all_dtypes_dims_layouts) {
    for (int k = 0; k < NDT; k++) {
        cg_dtype dt = k_all_dtypes[k];
        for (int nc = 0; nc < 2; nc++) {
            /* along dim 1 (given as 1 and -2) of 3-D inputs with different sizes there */
            cg_tensor *in[3] = {make_in(dt, 3, (int64_t[]){2, 3, 4}, 1, nc), make_in(dt, 3, (int64_t[]){2, 1, 4}, 2, false),
                                make_in(dt, 3, (int64_t[]){2, 5, 4}, 3, nc)};
            int64_t want[3] = {2, 9, 4};
            cat_ref r = {3, in, 1, false};
            cg_tensor *y = cg_cat(3, in, 1);
            check_ref("cat dim 1", y, 3, want, cat_ref_at, &r);
            cg_tensor *y2 = cg_cat(3, in, -2);
            check_ref("cat dim -2", y2, 3, want, cat_ref_at, &r);
            CHECK(y && cg_tensor_dtype(y) == dt && cg_tensor_is_contiguous(y));
            /* along the last and the first dim */
            cg_tensor *a[2] = {make_in(dt, 2, (int64_t[]){3, 2}, 4, nc), make_in(dt, 2, (int64_t[]){3, 3}, 5, nc)};
            cat_ref ra = {2, a, 1, false};
            cg_tensor *ya = cg_cat(2, a, -1);
            check_ref("cat dim -1", ya, 2, (int64_t[]){3, 5}, cat_ref_at, &ra);
            cg_tensor *b[2] = {make_in(dt, 2, (int64_t[]){1, 3}, 6, nc), make_in(dt, 2, (int64_t[]){2, 3}, 7, nc)};
            cat_ref rb = {2, b, 0, false};
            cg_tensor *yb = cg_cat(2, b, 0);
            check_ref("cat dim 0", yb, 2, (int64_t[]){3, 3}, cat_ref_at, &rb);
            release_n(3, in);
            release_n(2, a);
            release_n(2, b);
            cg_tensor *outs[4] = {y, y2, ya, yb};
            release_n(4, outs);
        }
    }
}

TEST(cat_single_empty_and_legacy_skip) {
    /* one input: a copy */
    cg_tensor *x = make_in(CG_DTYPE_F32, 2, (int64_t[]){2, 3}, 8, true);
    cg_tensor *y = cg_cat(1, &x, 0);
    CHECK(y && cg_tensor_storage_id(y) != cg_tensor_storage_id(x) && tt_maxdiff(x, y) == 0);
    /* empty along the cat dim and empty elsewhere */
    cg_tensor *e = cg_zeros(2, (int64_t[]){0, 3}, CG_DTYPE_F32, cg_cpu());
    cg_tensor *in[3] = {e, x, e};
    cg_tensor *ye = cg_cat(3, in, 0);
    CHECK(ye && tt_maxdiff(ye, x) == 0);
    cg_tensor *e2 = cg_zeros(2, (int64_t[]){2, 0}, CG_DTYPE_F32, cg_cpu());
    cg_tensor *in2[2] = {e2, e2};
    cg_tensor *ye2 = cg_cat(2, in2, 0);
    CHECK(ye2 && cg_tensor_shape(ye2)[0] == 4 && cg_tensor_shape(ye2)[1] == 0);
    /* legacy rule: 1-D (0,) tensors are skipped whatever the rank of the others */
    cg_tensor *z = cg_zeros(1, (int64_t[]){0}, CG_DTYPE_F32, cg_cpu());
    cg_tensor *in3[4] = {z, x, z, x};
    cg_tensor *ys = cg_cat(4, in3, 1);
    cat_ref r = {4, in3, 1, false};
    check_ref("cat legacy skip", ys, 2, (int64_t[]){2, 6}, cat_ref_at, &r);
    cg_tensor *in4[2] = {z, z};
    cg_tensor *yz = cg_cat(2, in4, 0);
    CHECK(yz && cg_tensor_ndim(yz) == 1 && cg_tensor_numel(yz) == 0);
    /* 1-D with (0,) among others is an ordinary cat */
    cg_tensor *v = make_in(CG_DTYPE_I64, 1, (int64_t[]){3}, 9, false);
    cg_tensor *zi = cg_zeros(1, (int64_t[]){0}, CG_DTYPE_I64, cg_cpu());
    cg_tensor *in5[3] = {v, zi, v};
    cg_tensor *y5 = cg_cat(3, in5, 0);
    cat_ref r5 = {3, in5, 0, false};
    check_ref("cat 1-D", y5, 1, (int64_t[]){6}, cat_ref_at, &r5);
    cg_tensor *all[] = {x, y, e, ye, e2, ye2, z, ys, yz, v, zi, y5};
    release_n(12, all);
}

TEST(cat_meta_device) {
    cg_tensor *a = cg_empty(2, (int64_t[]){2, 3}, CG_DTYPE_F32, cg_meta());
    cg_tensor *b = cg_empty(2, (int64_t[]){2, 5}, CG_DTYPE_F32, cg_meta());
    cg_tensor *in[2] = {a, b};
    cg_tensor *y = cg_cat(2, in, 1);
    CHECK(y && cg_device_eq(cg_tensor_device(y), cg_meta()) && cg_tensor_shape(y)[1] == 8);
    cg_tensor *s = cg_stack(2, (cg_tensor *[]){a, a}, 0);
    CHECK(s && cg_tensor_ndim(s) == 3 && cg_tensor_shape(s)[0] == 2);
    cg_tensor *c = cg_zeros(2, (int64_t[]){2, 3}, CG_DTYPE_F32, cg_cpu());
    CHECK_ERR(cg_cat(2, (cg_tensor *[]){c, a}, 0) == NULL, CG_ERR_DEVICE, "same device");
    cg_tensor *all[] = {a, b, y, s, c};
    release_n(5, all);
}

TEST(cat_stack_errors) {
    cg_tensor *a = cg_zeros(2, (int64_t[]){2, 3}, CG_DTYPE_F32, cg_cpu());
    cg_tensor *b = cg_zeros(2, (int64_t[]){2, 4}, CG_DTYPE_F32, cg_cpu());
    cg_tensor *c = cg_zeros(3, (int64_t[]){2, 3, 1}, CG_DTYPE_F32, cg_cpu());
    cg_tensor *d = cg_zeros(2, (int64_t[]){2, 3}, CG_DTYPE_F64, cg_cpu());
    cg_tensor *s = cg_scalar(1.0, CG_DTYPE_F32);
    CHECK_ERR(cg_cat(3, (cg_tensor *[]){a, a, b}, 0) == NULL, CG_ERR_SHAPE, "tensor number 2");
    CHECK_ERR(cg_cat(2, (cg_tensor *[]){a, b}, 0) == NULL, CG_ERR_SHAPE, "(2,3)");
    CHECK_ERR(cg_cat(2, (cg_tensor *[]){a, b}, 0) == NULL, CG_ERR_SHAPE, "(2,4)");
    CHECK_ERR(cg_cat(2, (cg_tensor *[]){a, c}, 0) == NULL, CG_ERR_SHAPE, "same number of dimensions");
    CHECK_ERR(cg_cat(2, (cg_tensor *[]){a, d}, 0) == NULL, CG_ERR_DTYPE, "float64");
    CHECK_ERR(cg_cat(2, (cg_tensor *[]){a, NULL}, 0) == NULL, CG_ERR_VALUE, "tensor 1");
    CHECK_ERR(cg_cat(0, NULL, 0) == NULL, CG_ERR_VALUE, "non-empty");
    CHECK_ERR(cg_cat(2, (cg_tensor *[]){a, a}, 2) == NULL, CG_ERR_INDEX, "out of range");
    CHECK_ERR(cg_cat(2, (cg_tensor *[]){s, s}, 0) == NULL, CG_ERR_SHAPE, "zero-dimensional");
    CHECK_ERR(cg_stack(2, (cg_tensor *[]){a, b}, 0) == NULL, CG_ERR_SHAPE, "(2,4) at entry 1");
    CHECK_ERR(cg_stack(2, (cg_tensor *[]){a, d}, 0) == NULL, CG_ERR_DTYPE, "dtype mismatch");
    CHECK_ERR(cg_stack(2, (cg_tensor *[]){a, a}, 3) == NULL, CG_ERR_INDEX, "out of range");
    CHECK_ERR(cg_stack(0, NULL, 0) == NULL, CG_ERR_VALUE, "non-empty");
    cg_tensor *all[] = {a, b, c, d, s};
    release_n(5, all);
}

TEST(stack_values_all_dtypes) {
    for (int k = 0; k < NDT; k++) {
        cg_dtype dt = k_all_dtypes[k];
        cg_tensor *in[3] = {make_in(dt, 2, (int64_t[]){2, 3}, 10, true), make_in(dt, 2, (int64_t[]){2, 3}, 11, false),
                            make_in(dt, 2, (int64_t[]){2, 3}, 12, true)};
        int64_t dims[4] = {0, 1, 2, -1};
        int64_t shapes[4][3] = {{3, 2, 3}, {2, 3, 3}, {2, 3, 3}, {2, 3, 3}};
        for (int j = 0; j < 4; j++) {
            cat_ref r = {3, in, dims[j] < 0 ? dims[j] + 3 : dims[j], true};
            cg_tensor *y = cg_stack(3, in, dims[j]);
            check_ref("stack", y, 3, shapes[j], cat_ref_at, &r);
            cg_tensor_release(y);
        }
        release_n(3, in);
    }
    /* 0-d inputs stack into a vector */
    cg_tensor *s[2] = {cg_scalar(1.5, CG_DTYPE_F32), cg_scalar(-2, CG_DTYPE_F32)};
    cg_tensor *v = cg_stack(2, s, 0);
    CHECK(v && cg_tensor_ndim(v) == 1 && tt_get(v, 0) == 1.5 && tt_get(v, 1) == -2);
    cg_tensor_release(v);
    release_n(2, s);
}

static cg_tensor *f_cat3(cg_tensor *const *x, void *c) {
    cg_tensor *sq = cg_mul(x[1], x[1]); /* second order terms for gradgradcheck */
    cg_tensor *in[4] = {x[0], sq, x[2], x[0]};
    cg_tensor *y = cg_cat(4, in, *(int64_t *)c);
    cg_tensor_release(sq);
    return y;
}
static cg_tensor *f_stack3(cg_tensor *const *x, void *c) {
    cg_tensor *sq = cg_mul(x[1], x[0]);
    cg_tensor *in[3] = {x[0], sq, x[2]};
    cg_tensor *y = cg_stack(3, in, *(int64_t *)c);
    cg_tensor_release(sq);
    return y;
}

TEST(cat_stack_gradcheck) {
    int64_t dim = -1;
    cg_tensor *x[3] = {make_in(CG_DTYPE_F64, 2, (int64_t[]){2, 3}, 13, true), make_in(CG_DTYPE_F64, 2, (int64_t[]){2, 1}, 14, false),
                       make_in(CG_DTYPE_F64, 2, (int64_t[]){2, 2}, 15, true)};
    for (int i = 0; i < 3; i++) cg_tensor_set_requires_grad(x[i], true);
    CHECK(tt_gradcheck(f_cat3, &dim, 3, x, 1e-6, 1e-7, 1e-5));
    CHECK(tt_gradgradcheck(f_cat3, &dim, 3, x, 1e-6, 1e-7, 1e-5));
    /* dim 0, with an empty input and a skipped (0,) input */
    int64_t d0 = 0;
    cg_tensor *e[3] = {make_in(CG_DTYPE_F64, 2, (int64_t[]){0, 3}, 16, false), make_in(CG_DTYPE_F64, 1, (int64_t[]){0}, 17, false),
                       make_in(CG_DTYPE_F64, 2, (int64_t[]){1, 3}, 18, false)};
    for (int i = 0; i < 3; i++) cg_tensor_set_requires_grad(e[i], true);
    CHECK(tt_gradcheck(f_cat3, &d0, 3, e, 1e-6, 1e-7, 1e-5));
    CHECK(tt_gradgradcheck(f_cat3, &d0, 3, e, 1e-6, 1e-7, 1e-5));
    cg_tensor *y = f_cat3(e, &d0), *g = cg_ones_like(y);
    CHECK_OK(cg_backward(y, g, false, false));
    CHECK(cg_tensor_grad(e[1]) && cg_tensor_ndim(cg_tensor_grad(e[1])) == 1 && cg_tensor_numel(cg_tensor_grad(e[1])) == 0);
    CHECK(cg_tensor_grad(e[0]) && cg_tensor_shape(cg_tensor_grad(e[0]))[0] == 0);
    CHECK(cg_tensor_grad(e[2]) && tt_get(cg_tensor_grad(e[2]), 2) == 1.0);
    cg_tensor_release(y);
    cg_tensor_release(g);
    /* stack at every position */
    cg_tensor *s[3] = {make_in(CG_DTYPE_F64, 2, (int64_t[]){2, 3}, 19, true), make_in(CG_DTYPE_F64, 2, (int64_t[]){2, 3}, 20, false),
                       make_in(CG_DTYPE_F64, 2, (int64_t[]){2, 3}, 21, true)};
    for (int i = 0; i < 3; i++) cg_tensor_set_requires_grad(s[i], true);
    for (int64_t sd = -3; sd < 3; sd += 2) {
        CHECK(tt_gradcheck(f_stack3, &sd, 3, s, 1e-6, 1e-7, 1e-5));
        CHECK(tt_gradgradcheck(f_stack3, &sd, 3, s, 1e-6, 1e-7, 1e-5));
    }
    /* 0-d inputs */
    int64_t z = 0;
    cg_tensor *q[3] = {cg_scalar(0.5, CG_DTYPE_F64), cg_scalar(-1.5, CG_DTYPE_F64), cg_scalar(2.0, CG_DTYPE_F64)};
    for (int i = 0; i < 3; i++) cg_tensor_set_requires_grad(q[i], true);
    CHECK(tt_gradcheck(f_stack3, &z, 3, q, 1e-6, 1e-7, 1e-5));
    CHECK(tt_gradgradcheck(f_stack3, &z, 3, q, 1e-6, 1e-7, 1e-5));
    release_n(3, x);
    release_n(3, e);
    release_n(3, s);
    release_n(3, q);
}

TEST(cat_graph_node_and_int_no_graph) {
    cg_tensor *x[2] = {make_in(CG_DTYPE_F32, 1, (int64_t[]){2}, 22, false), make_in(CG_DTYPE_F32, 1, (int64_t[]){3}, 23, false)};
    cg_tensor_set_requires_grad(x[1], true);
    cg_tensor *y = cg_cat(2, x, 0);
    CHECK(y && cg_tensor_grad_fn(y) && !strcmp(cg_node_name(cg_tensor_grad_fn(y)), "CatBackward0"));
    CHECK(y && cg_node_num_inputs(cg_tensor_grad_fn(y)) == 2 && cg_node_next(cg_tensor_grad_fn(y), 0, NULL) == NULL);
    cg_tensor *s = cg_stack(2, (cg_tensor *[]){x[1], x[1]}, 0);
    CHECK(s && cg_tensor_grad_fn(s) && !strcmp(cg_node_name(cg_tensor_grad_fn(s)), "StackBackward0"));
    bool prev = cg_set_grad_enabled(false);
    cg_tensor *ng = cg_cat(2, x, 0);
    cg_set_grad_enabled(prev);
    CHECK(ng && !cg_tensor_requires_grad(ng));
    cg_tensor *i = make_in(CG_DTYPE_I32, 1, (int64_t[]){2}, 24, false);
    cg_tensor *yi = cg_cat(2, (cg_tensor *[]){i, i}, 0);
    CHECK(yi && !cg_tensor_requires_grad(yi) && !cg_tensor_grad_fn(yi));
    cg_tensor *all[] = {x[0], x[1], y, s, ng, i, yi};
    release_n(7, all);
}

/* cat's backward hands each input a narrow view of g: no gradient copies */
TEST(cat_backward_grads_are_views_no_alloc) {
    enum { N = 16 };
    cg_tensor *x[N];
    for (int i = 0; i < N; i++) {
        x[i] = make_in(CG_DTYPE_F32, 2, (int64_t[]){4, 1 + i % 3}, 30 + (unsigned)i, false);
        cg_tensor_set_requires_grad(x[i], true);
    }
    cg_tensor *y = cg_cat(N, x, 1);
    cg_tensor *g = cg_ones_like(y);
    cg_tensor *res[N] = {0};
    cg_alloc_stats before = cg_allocator_stats(cg_cpu());
    CHECK_OK(cg_autograd_grad(1, &y, &g, N, x, false, false, false, res));
    cg_alloc_stats after = cg_allocator_stats(cg_cpu());
    CHECK_MSG(after.alloc_calls - before.alloc_calls == 0, "cat backward made %lld allocations",
              (long long)(after.alloc_calls - before.alloc_calls));
    for (int i = 0; i < N; i++) {
        CHECK(res[i] && cg_tensor_storage_id(res[i]) == cg_tensor_storage_id(g));
        CHECK(res[i] && cg_tensor_shape(res[i])[1] == 1 + i % 3);
    }
    release_n(N, res);
    release_n(N, x);
    cg_tensor_release(y);
    cg_tensor_release(g);
}

/* ================================================================ split family */

TEST(split_chunk_unbind_views) {
    for (int k = 0; k < NDT; k++) {
        cg_dtype dt = k_all_dtypes[k];
        cg_tensor *x = make_in(dt, 2, (int64_t[]){3, 7}, 40, k % 2 == 1);
        cg_tensor *o[8] = {0};
        /* split by size 3 along dim -1: 3, 3, 1 */
        int n = cg_split(x, 3, -1, o);
        CHECK(n == 3);
        int64_t start = 0;
        for (int i = 0; i < n; i++) {
            int64_t len = i < 2 ? 3 : 1;
            CHECK(cg_tensor_shape(o[i])[1] == len && cg_tensor_storage_id(o[i]) == cg_tensor_storage_id(x));
            for (int64_t r = 0; r < 3; r++)
                for (int64_t c = 0; c < len; c++) CHECK(tt_get(o[i], r * len + c) == tt_get(x, r * 7 + start + c));
            start += len;
        }
        release_n(n, o);
        /* split_sizes */
        n = cg_split_sizes(x, 3, (int64_t[]){2, 0, 5}, 1, o);
        CHECK(n == 3 && cg_tensor_shape(o[1])[1] == 0 && cg_tensor_shape(o[2])[1] == 5);
        CHECK(n == 3 && tt_get(o[2], 0) == tt_get(x, 2) && cg_tensor_storage_id(o[2]) == cg_tensor_storage_id(x));
        release_n(n, o);
        /* chunk: ceil(7/4) = 2 -> 2, 2, 2, 1; chunk(7, 3): 3, 3, 1; chunk(3 rows, 5) -> 3 chunks of 1 */
        n = cg_chunk(x, 4, 1, o);
        CHECK(n == 4 && cg_tensor_shape(o[3])[1] == 1 && cg_tensor_shape(o[0])[1] == 2);
        CHECK(n == 4 && tt_get(o[3], 0) == tt_get(x, 6));
        release_n(n, o);
        n = cg_chunk(x, 5, 0, o);
        CHECK(n == 3 && cg_tensor_shape(o[2])[0] == 1 && tt_get(o[2], 0) == tt_get(x, 14));
        release_n(n, o);
        /* unbind */
        n = cg_unbind(x, 1, o);
        CHECK(n == 7 && cg_tensor_ndim(o[0]) == 1 && cg_tensor_shape(o[0])[0] == 3);
        for (int i = 0; i < n; i++) {
            CHECK(cg_tensor_storage_id(o[i]) == cg_tensor_storage_id(x));
            for (int64_t r = 0; r < 3; r++) CHECK(tt_get(o[i], r) == tt_get(x, r * 7 + i));
        }
        release_n(n, o);
        cg_tensor_release(x);
    }
    /* empty dims */
    cg_tensor *e = cg_zeros(2, (int64_t[]){0, 2}, CG_DTYPE_F32, cg_cpu());
    cg_tensor *o[4] = {0};
    CHECK(cg_split(e, 0, 0, o) == 1 && cg_tensor_shape(o[0])[0] == 0);
    release_n(1, o);
    CHECK(cg_split(e, 2, 0, o) == 1);
    release_n(1, o);
    CHECK(cg_chunk(e, 3, 0, o) == 3 && cg_tensor_numel(o[2]) == 0);
    release_n(3, o);
    CHECK(cg_unbind(e, 0, o) == 0);
    CHECK(cg_unbind(e, 1, o) == 2 && cg_tensor_shape(o[0])[0] == 0);
    release_n(2, o);
    /* split_size larger than the dim: one chunk */
    CHECK(cg_split(e, 5, 1, o) == 1 && cg_tensor_shape(o[0])[1] == 2);
    release_n(1, o);
    cg_tensor_release(e);
}

TEST(split_family_errors) {
    cg_tensor *x = cg_zeros(2, (int64_t[]){2, 5}, CG_DTYPE_F32, cg_cpu());
    cg_tensor *s = cg_scalar(1, CG_DTYPE_F32);
    cg_tensor *o[8];
    CHECK_ERR(cg_split(x, 0, 1, o) < 0, CG_ERR_VALUE, "split_size can only be 0");
    CHECK_ERR(cg_split(x, -1, 1, o) < 0, CG_ERR_VALUE, "non-negative");
    CHECK_ERR(cg_split(x, 2, 2, o) < 0, CG_ERR_INDEX, "out of range");
    CHECK_ERR(cg_split(s, 1, 0, o) < 0, CG_ERR_SHAPE, "at least a 1-dimensional");
    CHECK_ERR(cg_split_sizes(x, 2, (int64_t[]){2, 2}, 1, o) < 0, CG_ERR_VALUE, "sum exactly to 5");
    CHECK_ERR(cg_split_sizes(x, 2, (int64_t[]){6, -1}, 1, o) < 0, CG_ERR_VALUE, "non-negative");
    CHECK_ERR(cg_chunk(x, 0, 1, o) < 0, CG_ERR_VALUE, "greater than 0");
    CHECK_ERR(cg_chunk(s, 1, 0, o) < 0, CG_ERR_SHAPE, "at least a 1-dimensional");
    CHECK_ERR(cg_unbind(s, 0, o) < 0, CG_ERR_SHAPE, "at least a 1-dimensional");
    CHECK_ERR(cg_unbind(x, -3, o) < 0, CG_ERR_INDEX, "out of range");
    cg_tensor_release(x);
    cg_tensor_release(s);
}

/* y = cat(p2 * p0[:, :1], p1 * p1, unbind/chunk pieces stacked) over a 2 x 5 input */
static cg_tensor *f_split(cg_tensor *const *x, void *c) {
    (void)c;
    cg_tensor *p[3] = {0}, *q[3] = {0}, *u[5] = {0};
    cg_split(x[0], 2, 1, p);                          /* (2,2) (2,2) (2,1) */
    cg_split_sizes(x[0], 2, (int64_t[]){1, 1}, 0, q); /* (1,5) (1,5) */
    cg_unbind(x[0], 1, u);                            /* five (2,) */
    cg_tensor *ch[3] = {0};
    int nch = cg_chunk(x[0], 3, 1, ch);               /* (2,2) (2,2) (2,1) */
    cg_tensor *a = cg_mul(p[2], p[0]);                /* (2,2) broadcast */
    cg_tensor *b = cg_mul(p[1], ch[1]);
    cg_tensor *qq = cg_mul(q[0], q[1]);               /* (1,5) */
    cg_tensor *qt = cg_reshape(qq, 2, (int64_t[]){5, 1});
    cg_tensor *st = cg_stack(2, (cg_tensor *[]){u[4], u[0]}, 1); /* (2,2) */
    cg_tensor *sm = cg_mul(st, u[2]);                 /* broadcast (2,) */
    cg_tensor *y1 = cg_cat(3, (cg_tensor *[]){a, b, sm}, 1); /* (2,6) */
    cg_tensor *y1f = cg_reshape(y1, 2, (int64_t[]){12, 1});
    cg_tensor *y = cg_cat(2, (cg_tensor *[]){y1f, qt}, 0);
    cg_tensor *tmp[] = {a, b, qq, qt, st, sm, y1, y1f};
    release_n(8, tmp);
    release_n(3, p);
    release_n(2, q);
    release_n(5, u);
    release_n(nch, ch);
    return y;
}

TEST(split_family_gradcheck) {
    for (int nc = 0; nc < 2; nc++) {
        cg_tensor *x = make_in(CG_DTYPE_F64, 2, (int64_t[]){2, 5}, 41, nc);
        cg_tensor_set_requires_grad(x, true);
        CHECK(tt_gradcheck(f_split, NULL, 1, &x, 1e-6, 1e-7, 1e-5));
        CHECK(tt_gradgradcheck(f_split, NULL, 1, &x, 1e-6, 1e-7, 1e-5));
        cg_tensor_release(x);
    }
}

/* ================================================================ flip */

typedef struct flip_ref { const cg_tensor *x; uint32_t mask; } flip_ref;
static double flip_ref_at(const int64_t *c, void *p) {
    const flip_ref *r = p;
    int nd = cg_tensor_ndim(r->x);
    const int64_t *sh = cg_tensor_shape(r->x);
    int64_t cc[CG_MAX_DIMS];
    for (int d = 0; d < nd; d++) cc[d] = (r->mask & (1u << d)) ? sh[d] - 1 - c[d] : c[d];
    return tt_get(r->x, flat_of(nd, sh, cc));
}

TEST(flip_values_all_dtypes) {
    int64_t sh[3] = {2, 3, 4};
    struct { int n; int64_t dims[3]; uint32_t mask; } cases[] = {
        {2, {0, 2}, 5u}, {1, {-1}, 4u}, {0, {0}, 0u}, {3, {2, 1, 0}, 7u}, {1, {1}, 2u}};
    for (int k = 0; k < NDT; k++) {
        for (int nc = 0; nc < 2; nc++) {
            cg_tensor *x = make_in(k_all_dtypes[k], 3, sh, 50, nc);
            for (int j = 0; j < 5; j++) {
                flip_ref r = {x, cases[j].mask};
                cg_tensor *y = cg_flip(x, cases[j].n, cases[j].dims);
                check_ref("flip", y, 3, sh, flip_ref_at, &r);
                CHECK(y && cg_tensor_storage_id(y) != cg_tensor_storage_id(x));
                cg_tensor_release(y);
            }
            cg_tensor_release(x);
        }
    }
    cg_tensor *s = cg_scalar(3, CG_DTYPE_I32);
    cg_tensor *fs = cg_flip(s, 1, (int64_t[]){0});
    CHECK(fs && cg_tensor_ndim(fs) == 0 && tt_get(fs, 0) == 3);
    cg_tensor *e = cg_zeros(2, (int64_t[]){0, 3}, CG_DTYPE_F32, cg_cpu());
    cg_tensor *fe = cg_flip(e, 2, (int64_t[]){0, 1});
    CHECK(fe && cg_tensor_numel(fe) == 0);
    CHECK_ERR(cg_flip(e, 2, (int64_t[]){1, -1}) == NULL, CG_ERR_VALUE, "multiple times");
    CHECK_ERR(cg_flip(e, 1, (int64_t[]){2}) == NULL, CG_ERR_INDEX, "out of range");
    cg_tensor *all[] = {s, fs, e, fe};
    release_n(4, all);
}

static cg_tensor *f_flip(cg_tensor *const *x, void *c) {
    (void)c;
    cg_tensor *f = cg_flip(x[0], 2, (int64_t[]){0, -1});
    cg_tensor *y = cg_mul(f, x[0]);
    cg_tensor_release(f);
    return y;
}
static cg_tensor *f_flip0(cg_tensor *const *x, void *c) {
    (void)c;
    cg_tensor *f = cg_flip(x[0], 1, (int64_t[]){0});
    cg_tensor *y = cg_mul(f, f);
    cg_tensor_release(f);
    return y;
}

TEST(flip_gradcheck) {
    for (int nc = 0; nc < 2; nc++) {
        cg_tensor *x = make_in(CG_DTYPE_F64, 3, (int64_t[]){2, 3, 4}, 51, nc);
        cg_tensor_set_requires_grad(x, true);
        CHECK(tt_gradcheck(f_flip, NULL, 1, &x, 1e-6, 1e-7, 1e-5));
        CHECK(tt_gradgradcheck(f_flip, NULL, 1, &x, 1e-6, 1e-7, 1e-5));
        cg_tensor_release(x);
    }
    cg_tensor *xs[2] = {cg_scalar(0.7, CG_DTYPE_F64), cg_zeros(2, (int64_t[]){0, 2}, CG_DTYPE_F64, cg_cpu())};
    for (int i = 0; i < 2; i++) {
        cg_tensor_set_requires_grad(xs[i], true);
        CHECK(tt_gradcheck(f_flip0, NULL, 1, &xs[i], 1e-6, 1e-7, 1e-5));
        CHECK(tt_gradgradcheck(f_flip0, NULL, 1, &xs[i], 1e-6, 1e-7, 1e-5));
    }
    release_n(2, xs);
}

/* ================================================================ roll */

typedef struct roll_ref { const cg_tensor *x; int64_t shift[CG_MAX_DIMS]; bool flat; } roll_ref;
static int64_t pmod(int64_t a, int64_t n) { return ((a % n) + n) % n; }
static double roll_ref_at(const int64_t *c, void *p) {
    const roll_ref *r = p;
    int nd = cg_tensor_ndim(r->x);
    const int64_t *sh = cg_tensor_shape(r->x);
    if (r->flat) {
        int64_t n = cg_tensor_numel(r->x);
        return tt_get(r->x, pmod(flat_of(nd, sh, c) - r->shift[0], n));
    }
    int64_t cc[CG_MAX_DIMS];
    for (int d = 0; d < nd; d++) cc[d] = pmod(c[d] - r->shift[d], sh[d]);
    return tt_get(r->x, flat_of(nd, sh, cc));
}

TEST(roll_values_all_dtypes) {
    int64_t sh[3] = {2, 3, 4};
    for (int k = 0; k < NDT; k++) {
        for (int nc = 0; nc < 2; nc++) {
            cg_tensor *x = make_in(k_all_dtypes[k], 3, sh, 60, nc);
            /* flattened, positive and negative and large shifts */
            int64_t fl[3] = {5, -7, 50};
            for (int j = 0; j < 3; j++) {
                roll_ref r = {x, {fl[j]}, true};
                cg_tensor *y = cg_roll(x, 1, &fl[j], NULL);
                check_ref("roll flat", y, 3, sh, roll_ref_at, &r);
                cg_tensor_release(y);
            }
            /* per dim, a negative dim, and a repeated dim (shifts add up) */
            roll_ref r1 = {x, {1, 0, -2}, false};
            cg_tensor *y1 = cg_roll(x, 2, (int64_t[]){1, -2}, (int64_t[]){0, -1});
            check_ref("roll dims", y1, 3, sh, roll_ref_at, &r1);
            roll_ref r2 = {x, {0, 2, 0}, false};
            cg_tensor *y2 = cg_roll(x, 2, (int64_t[]){1, 4}, (int64_t[]){1, 1});
            check_ref("roll repeated dim", y2, 3, sh, roll_ref_at, &r2);
            roll_ref r3 = {x, {1, 1, 3}, false};
            cg_tensor *y3 = cg_roll(x, 3, (int64_t[]){3, -5, 7}, (int64_t[]){0, 1, 2});
            check_ref("roll all dims", y3, 3, sh, roll_ref_at, &r3);
            cg_tensor *all[] = {x, y1, y2, y3};
            release_n(4, all);
        }
    }
    cg_tensor *s = cg_scalar(2, CG_DTYPE_I64);
    cg_tensor *rs = cg_roll(s, 1, (int64_t[]){3}, NULL);
    CHECK(rs && cg_tensor_ndim(rs) == 0 && tt_get(rs, 0) == 2);
    CHECK_ERR(cg_roll(s, 1, (int64_t[]){3}, (int64_t[]){0}) == NULL, CG_ERR_INDEX, "no dimensions"); /* as PyTorch */
    cg_tensor *e = cg_zeros(2, (int64_t[]){0, 3}, CG_DTYPE_F32, cg_cpu());
    cg_tensor *re = cg_roll(e, 1, (int64_t[]){2}, (int64_t[]){1});
    cg_tensor *re2 = cg_roll(e, 1, (int64_t[]){2}, NULL);
    CHECK(re && re2 && cg_tensor_numel(re) == 0 && cg_tensor_numel(re2) == 0);
    CHECK_ERR(cg_roll(e, 2, (int64_t[]){1, 2}, NULL) == NULL, CG_ERR_VALUE, "must align");
    CHECK_ERR(cg_roll(e, 0, NULL, NULL) == NULL, CG_ERR_VALUE, "shifts");
    CHECK_ERR(cg_roll(e, 1, (int64_t[]){1}, (int64_t[]){2}) == NULL, CG_ERR_INDEX, "out of range");
    cg_tensor *all[] = {s, rs, e, re, re2};
    release_n(5, all);
}

static cg_tensor *f_roll(cg_tensor *const *x, void *c) {
    cg_tensor *r = *(int *)c ? cg_roll(x[0], 1, (int64_t[]){-4}, NULL) : cg_roll(x[0], 2, (int64_t[]){1, 2}, (int64_t[]){0, -1});
    cg_tensor *y = cg_mul(r, x[0]);
    cg_tensor_release(r);
    return y;
}

TEST(roll_gradcheck) {
    for (int flat = 0; flat < 2; flat++)
        for (int nc = 0; nc < 2; nc++) {
            cg_tensor *x = make_in(CG_DTYPE_F64, 2, (int64_t[]){3, 4}, 61, nc);
            cg_tensor_set_requires_grad(x, true);
            CHECK(tt_gradcheck(f_roll, &flat, 1, &x, 1e-6, 1e-7, 1e-5));
            CHECK(tt_gradgradcheck(f_roll, &flat, 1, &x, 1e-6, 1e-7, 1e-5));
            cg_tensor_release(x);
        }
}

/* ================================================================ repeat / tile */

typedef struct rep_ref { const cg_tensor *x; int n; } rep_ref;
static double rep_ref_at(const int64_t *c, void *p) {
    const rep_ref *r = p;
    int nd = cg_tensor_ndim(r->x), lead = r->n - nd;
    const int64_t *sh = cg_tensor_shape(r->x);
    int64_t cc[CG_MAX_DIMS];
    for (int d = 0; d < nd; d++) cc[d] = c[lead + d] % sh[d];
    return tt_get(r->x, flat_of(nd, sh, cc));
}

TEST(repeat_tile_values_all_dtypes) {
    for (int k = 0; k < NDT; k++) {
        for (int nc = 0; nc < 2; nc++) {
            cg_tensor *x = make_in(k_all_dtypes[k], 2, (int64_t[]){2, 3}, 70, nc);
            rep_ref r3 = {x, 3}, r2 = {x, 2};
            cg_tensor *y = cg_repeat(x, 3, (int64_t[]){2, 1, 3});
            check_ref("repeat", y, 3, (int64_t[]){2, 2, 9}, rep_ref_at, &r3);
            cg_tensor *y1 = cg_repeat(x, 2, (int64_t[]){1, 1});
            check_ref("repeat ones", y1, 2, (int64_t[]){2, 3}, rep_ref_at, &r2);
            CHECK(y1 && cg_tensor_storage_id(y1) != cg_tensor_storage_id(x));
            cg_tensor *y0 = cg_repeat(x, 2, (int64_t[]){0, 2});
            CHECK(y0 && cg_tensor_shape(y0)[0] == 0 && cg_tensor_shape(y0)[1] == 6);
            cg_tensor *t1 = cg_tile(x, 1, (int64_t[]){2});
            check_ref("tile short", t1, 2, (int64_t[]){2, 6}, rep_ref_at, &r2);
            cg_tensor *t2 = cg_tile(x, 3, (int64_t[]){2, 2, 1});
            check_ref("tile long", t2, 3, (int64_t[]){2, 4, 3}, rep_ref_at, &r3);
            cg_tensor *all[] = {x, y, y1, y0, t1, t2};
            release_n(6, all);
        }
    }
    cg_tensor *s = cg_scalar(4, CG_DTYPE_I16);
    rep_ref rs = {s, 2};
    cg_tensor *ys = cg_repeat(s, 2, (int64_t[]){3, 2});
    check_ref("repeat 0-d", ys, 2, (int64_t[]){3, 2}, rep_ref_at, &rs);
    cg_tensor *ys0 = cg_repeat(s, 0, NULL);
    CHECK(ys0 && cg_tensor_ndim(ys0) == 0 && tt_get(ys0, 0) == 4);
    cg_tensor *ts = cg_tile(s, 0, NULL);
    CHECK(ts && cg_tensor_ndim(ts) == 0);
    cg_tensor *x = cg_zeros(2, (int64_t[]){2, 3}, CG_DTYPE_F32, cg_cpu());
    CHECK_ERR(cg_repeat(x, 1, (int64_t[]){2}) == NULL, CG_ERR_VALUE, "can not be smaller");
    CHECK_ERR(cg_repeat(x, 2, (int64_t[]){2, -1}) == NULL, CG_ERR_VALUE, "negative");
    CHECK_ERR(cg_tile(x, 2, (int64_t[]){-1, 1}) == NULL, CG_ERR_VALUE, "negative");
    cg_tensor *all[] = {s, ys, ys0, ts, x};
    release_n(5, all);
}

static cg_tensor *f_repeat(cg_tensor *const *x, void *c) {
    const int64_t *reps = c;
    cg_tensor *r = cg_repeat(x[0], (int)reps[0], reps + 1);
    cg_tensor *y = cg_mul(r, r);
    cg_tensor_release(r);
    return y;
}
static cg_tensor *f_tile(cg_tensor *const *x, void *c) {
    (void)c;
    cg_tensor *r = cg_tile(x[0], 1, (int64_t[]){3});
    cg_tensor *y = cg_mul(r, r);
    cg_tensor_release(r);
    return y;
}

TEST(repeat_tile_gradcheck) {
    int64_t reps[][5] = {{3, 2, 1, 3}, {2, 2, 2}, {4, 1, 2, 1, 2}, {2, 0, 2}};
    for (int nc = 0; nc < 2; nc++) {
        cg_tensor *x = make_in(CG_DTYPE_F64, 2, (int64_t[]){2, 3}, 71, nc);
        cg_tensor_set_requires_grad(x, true);
        for (int j = 0; j < 4; j++) {
            CHECK(tt_gradcheck(f_repeat, reps[j], 1, &x, 1e-6, 1e-7, 1e-5));
            CHECK(tt_gradgradcheck(f_repeat, reps[j], 1, &x, 1e-6, 1e-7, 1e-5));
        }
        CHECK(tt_gradcheck(f_tile, NULL, 1, &x, 1e-6, 1e-7, 1e-5));
        CHECK(tt_gradgradcheck(f_tile, NULL, 1, &x, 1e-6, 1e-7, 1e-5));
        cg_tensor_release(x);
    }
    int64_t r0[] = {2, 3, 2};
    cg_tensor *xs[2] = {cg_scalar(0.3, CG_DTYPE_F64), cg_zeros(2, (int64_t[]){2, 0}, CG_DTYPE_F64, cg_cpu())};
    for (int i = 0; i < 2; i++) {
        cg_tensor_set_requires_grad(xs[i], true);
        CHECK(tt_gradcheck(f_repeat, r0, 1, &xs[i], 1e-6, 1e-7, 1e-5));
        CHECK(tt_gradgradcheck(f_repeat, r0, 1, &xs[i], 1e-6, 1e-7, 1e-5));
    }
    release_n(2, xs);
}

/* ================================================================ tril / triu */

typedef struct tri_ref { const cg_tensor *x; int64_t diag; bool upper; } tri_ref;
static double tri_ref_at(const int64_t *c, void *p) {
    const tri_ref *r = p;
    int nd = cg_tensor_ndim(r->x);
    int64_t i = c[nd - 2], j = c[nd - 1];
    bool keep = r->upper ? j - i >= r->diag : j - i <= r->diag;
    return keep ? tt_get(r->x, flat_of(nd, cg_tensor_shape(r->x), c)) : 0.0;
}

TEST(tril_triu_values_all_dtypes) {
    int64_t sh[3] = {2, 3, 4};
    int64_t diags[] = {-5, -1, 0, 2, 9, INT64_MAX, INT64_MIN};
    for (int k = 0; k < NDT; k++) {
        for (int nc = 0; nc < 3; nc++) {
            cg_tensor *x = make_in(k_all_dtypes[k], 3, sh, 80, nc == 1);
            if (nc == 2) { /* transposed last two dims: column stride != 1 */
                cg_tensor *b = make_in(k_all_dtypes[k], 3, (int64_t[]){2, 4, 3}, 81, false);
                cg_tensor_release(x);
                x = cg_transpose(b, -1, -2);
                cg_tensor_release(b);
            }
            for (int j = 0; j < 7; j++)
                for (int up = 0; up < 2; up++) {
                    tri_ref r = {x, diags[j], up};
                    cg_tensor *y = up ? cg_triu(x, diags[j]) : cg_tril(x, diags[j]);
                    check_ref(up ? "triu" : "tril", y, 3, sh, tri_ref_at, &r);
                    cg_tensor_release(y);
                }
            cg_tensor_release(x);
        }
    }
    cg_tensor *v = cg_zeros(1, (int64_t[]){3}, CG_DTYPE_F32, cg_cpu());
    CHECK_ERR(cg_tril(v, 0) == NULL, CG_ERR_SHAPE, "at least 2 dimensions");
    CHECK_ERR(cg_triu(NULL, 0) == NULL, CG_ERR_VALUE, "NULL");
    cg_tensor *e = cg_zeros(3, (int64_t[]){2, 0, 3}, CG_DTYPE_F32, cg_cpu());
    cg_tensor *te = cg_triu(e, 0);
    CHECK(te && cg_tensor_numel(te) == 0 && cg_tensor_ndim(te) == 3);
    cg_tensor_release(v);
    cg_tensor_release(e);
    cg_tensor_release(te);
}

static cg_tensor *f_tri(cg_tensor *const *x, void *c) {
    int64_t diag = *(int64_t *)c;
    cg_tensor *a = cg_tril(x[0], diag), *b = cg_triu(x[0], -diag);
    cg_tensor *y = cg_mul(a, b);
    cg_tensor *z = cg_add(y, a);
    cg_tensor_release(a);
    cg_tensor_release(b);
    cg_tensor_release(y);
    return z;
}

TEST(tril_triu_gradcheck) {
    int64_t diags[] = {0, 1, -1};
    for (int nc = 0; nc < 2; nc++) {
        cg_tensor *x = make_in(CG_DTYPE_F64, 3, (int64_t[]){2, 3, 3}, 82, nc);
        cg_tensor_set_requires_grad(x, true);
        for (int j = 0; j < 3; j++) {
            CHECK(tt_gradcheck(f_tri, &diags[j], 1, &x, 1e-6, 1e-7, 1e-5));
            CHECK(tt_gradgradcheck(f_tri, &diags[j], 1, &x, 1e-6, 1e-7, 1e-5));
        }
        cg_tensor_release(x);
    }
    cg_tensor *e = cg_zeros(2, (int64_t[]){0, 3}, CG_DTYPE_F64, cg_cpu());
    cg_tensor_set_requires_grad(e, true);
    CHECK(tt_gradcheck(f_tri, &diags[0], 1, &e, 1e-6, 1e-7, 1e-5));
    CHECK(tt_gradgradcheck(f_tri, &diags[0], 1, &e, 1e-6, 1e-7, 1e-5));
    cg_tensor_release(e);
}

/* large inputs take the threaded paths; results must equal the references */
TEST(shape_ops_large_threaded) {
    cg_tensor *x = make_in(CG_DTYPE_F32, 2, (int64_t[]){300, 257}, 90, true);
    tri_ref r = {x, 3, false};
    cg_tensor *t = cg_tril(x, 3);
    check_ref("tril large", t, 2, (int64_t[]){300, 257}, tri_ref_at, &r);
    cg_tensor *in[2] = {x, x};
    cat_ref rc = {2, in, 0, false};
    cg_tensor *c = cg_cat(2, in, 0);
    check_ref("cat large", c, 2, (int64_t[]){600, 257}, cat_ref_at, &rc);
    flip_ref rf = {x, 3u};
    cg_tensor *f = cg_flip(x, 2, (int64_t[]){0, 1});
    check_ref("flip large", f, 2, (int64_t[]){300, 257}, flip_ref_at, &rf);
    cg_tensor *all[] = {x, t, c, f};
    release_n(4, all);
}

/* meta tensors: shapes only, no kernels run */
TEST(shape_ops_meta_device) {
    cg_tensor *m = cg_empty(2, (int64_t[]){3, 4}, CG_DTYPE_F32, cg_meta());
    cg_tensor *r[5] = {cg_flip(m, 1, (int64_t[]){0}), cg_roll(m, 1, (int64_t[]){1}, NULL),
                       cg_roll(m, 1, (int64_t[]){1}, (int64_t[]){1}), cg_repeat(m, 3, (int64_t[]){2, 1, 2}),
                       cg_tril(m, 0)};
    for (int i = 0; i < 5; i++) CHECK(r[i] && cg_device_eq(cg_tensor_device(r[i]), cg_meta()));
    CHECK(r[3] && cg_tensor_ndim(r[3]) == 3 && cg_tensor_shape(r[3])[2] == 8);
    cg_tensor *o[4] = {0};
    CHECK(cg_chunk(m, 2, 1, o) == 2);
    release_n(2, o);
    release_n(5, r);
    cg_tensor_release(m);
}
