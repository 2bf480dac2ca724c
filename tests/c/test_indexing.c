/* test_indexing.c — index_select, masked_fill/select/scatter, take, nonzero,
 * advanced indexing (cg_index) and index_put / index_put_: values against
 * plain-loop references, gradients (first and second order) and errors. */
#include "test.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- helpers */

static cg_tensor *ti64(int nd, const int64_t *sh, const double *v) { return tt_tensor(CG_DTYPE_I64, nd, sh, v); }
static cg_tensor *tbool(int nd, const int64_t *sh, const double *v) { return tt_tensor(CG_DTYPE_BOOL, nd, sh, v); }
static cg_tensor *vec_i64(int64_t n, const double *v) { return ti64(1, &n, v); }

/* out has shape (nd, sh) and elements ref[0..numel) */
static void expect(cg_tensor *out, int nd, const int64_t *sh, const double *ref, double tol, int line) {
    if (!out) {
        CHECK_MSG(0, "line %d: op failed: %s", line, cg_last_error_message());
        return;
    }
    bool same = cg_tensor_ndim(out) == nd;
    for (int i = 0; same && i < nd; i++) same = cg_tensor_shape(out)[i] == sh[i];
    CHECK_MSG(same, "line %d: wrong result shape (ndim %d)", line, cg_tensor_ndim(out));
    if (!same) return;
    int64_t n = cg_tensor_numel(out);
    for (int64_t i = 0; i < n; i++)
        if (!(fabs(tt_get(out, i) - ref[i]) <= tol)) {
            CHECK_MSG(0, "line %d: element %lld = %g, expected %g", line, (long long)i, tt_get(out, i), ref[i]);
            return;
        }
}
#define EXPECT(out, nd, sh, ref, tol) expect(out, nd, sh, ref, tol, __LINE__)

static int64_t wrap(int64_t i, int64_t n) { return i < 0 ? i + n : i; }

/* x is (3,4,5); X(i,j,k) reads its logical element */
static double X3(const cg_tensor *x, int64_t i, int64_t j, int64_t k) { return tt_get(x, (i * 4 + j) * 5 + k); }

typedef struct idx_ctx {
    int n;
    cg_tensor *list[CG_MAX_DIMS];
    bool accumulate;
    int64_t dim;
} idx_ctx;

static cg_tensor *f_index(cg_tensor *const *in, void *c) {
    idx_ctx *k = c;
    return cg_index(in[0], k->n, k->list);
}

/* ---------------------------------------------------------------- cg_index values */

static void check_index_cases(cg_dtype dt, bool noncontig, double tol) {
    int64_t sh[3] = {3, 4, 5};
    cg_tensor *x0 = tt_rand(dt, 3, sh, -4, 4, 21);
    cg_tensor *x = noncontig ? tt_noncontig(x0) : x0;
    if (noncontig) CHECK(!cg_tensor_is_contiguous(x));
    double *ref = malloc(sizeof(double) * 400);

    /* [idx]: idx = {2,-1,0} */
    cg_tensor *ia = vec_i64(3, (double[]){2, -1, 0});
    cg_tensor *o = cg_index(x, 1, &ia);
    for (int a = 0, p = 0; a < 3; a++)
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 5; k++) ref[p++] = X3(x, wrap((int64_t[]){2, -1, 0}[a], 3), j, k);
    EXPECT(o, 3, ((int64_t[]){3, 4, 5}), ref, tol);
    cg_tensor_release(o);

    /* [NULL, idx (2,2) int32] -> (3,2,2,5) */
    double bv[4] = {3, -4, 1, 1};
    cg_tensor *ib = tt_tensor(CG_DTYPE_I32, 2, (int64_t[]){2, 2}, bv);
    o = cg_index(x, 2, (cg_tensor *[]){NULL, ib});
    for (int i = 0, p = 0; i < 3; i++)
        for (int a = 0; a < 4; a++)
            for (int k = 0; k < 5; k++) ref[p++] = X3(x, i, wrap((int64_t)bv[a], 4), k);
    EXPECT(o, 4, ((int64_t[]){3, 2, 2, 5}), ref, tol);
    cg_tensor_release(o);

    /* [idx (2,1), NULL, idx (3,)]: non-adjacent, broadcast dims first -> (2,3,4) */
    double av[2] = {1, -3}, cv[3] = {4, 0, -2};
    cg_tensor *i0 = ti64(2, (int64_t[]){2, 1}, av), *i2 = vec_i64(3, cv);
    o = cg_index(x, 3, (cg_tensor *[]){i0, NULL, i2});
    for (int a = 0, p = 0; a < 2; a++)
        for (int c = 0; c < 3; c++)
            for (int j = 0; j < 4; j++) ref[p++] = X3(x, wrap((int64_t)av[a], 3), j, wrap((int64_t)cv[c], 5));
    EXPECT(o, 3, ((int64_t[]){2, 3, 4}), ref, tol);
    cg_tensor_release(o);

    /* [NULL, idx (2,1), idx (3,)]: adjacent, in place -> (3,2,3) */
    double bv2[2] = {3, -1};
    cg_tensor *i1 = ti64(2, (int64_t[]){2, 1}, bv2);
    o = cg_index(x, 3, (cg_tensor *[]){NULL, i1, i2});
    for (int i = 0, p = 0; i < 3; i++)
        for (int a = 0; a < 2; a++)
            for (int c = 0; c < 3; c++) ref[p++] = X3(x, i, wrap((int64_t)bv2[a], 4), wrap((int64_t)cv[c], 5));
    EXPECT(o, 3, ((int64_t[]){3, 2, 3}), ref, tol);
    cg_tensor_release(o);

    /* [NULL, mask (4,)] -> (3,3,5) */
    cg_tensor *m1 = tbool(1, (int64_t[]){4}, (double[]){1, 0, 1, 1});
    int sel[3] = {0, 2, 3};
    o = cg_index(x, 2, (cg_tensor *[]){NULL, m1});
    for (int i = 0, p = 0; i < 3; i++)
        for (int q = 0; q < 3; q++)
            for (int k = 0; k < 5; k++) ref[p++] = X3(x, i, sel[q], k);
    EXPECT(o, 3, ((int64_t[]){3, 3, 5}), ref, tol);
    cg_tensor_release(o);

    /* [mask (3,4)] -> (N,5), row-major order of the true positions */
    double mv[12] = {0, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1};
    cg_tensor *m2 = tbool(2, (int64_t[]){3, 4}, mv);
    o = cg_index(x, 1, &m2);
    int p = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            if (mv[i * 4 + j])
                for (int k = 0; k < 5; k++) ref[p++] = X3(x, i, j, k);
    EXPECT(o, 2, ((int64_t[]){4, 5}), ref, tol);
    cg_tensor_release(o);

    /* [idx, NULL, mask (5,)]: non-adjacent mask + index broadcast together */
    cg_tensor *m5 = tbool(1, (int64_t[]){5}, (double[]){0, 1, 0, 0, 1});
    cg_tensor *i0b = vec_i64(2, (double[]){2, 0});
    o = cg_index(x, 3, (cg_tensor *[]){i0b, NULL, m5});
    p = 0;
    for (int a = 0; a < 2; a++)
        for (int j = 0; j < 4; j++) ref[p++] = X3(x, a == 0 ? 2 : 0, j, a == 0 ? 1 : 4);
    EXPECT(o, 2, ((int64_t[]){2, 4}), ref, tol);
    cg_tensor_release(o);

    /* empty index tensors */
    cg_tensor *ie = vec_i64(0, NULL);
    o = cg_index(x, 1, &ie);
    EXPECT(o, 3, ((int64_t[]){0, 4, 5}), ref, 0);
    cg_tensor_release(o);
    o = cg_index(x, 2, (cg_tensor *[]){NULL, ie});
    EXPECT(o, 3, ((int64_t[]){3, 0, 5}), ref, 0);
    cg_tensor_release(o);

    /* 0-d index drops the dim */
    cg_tensor *is = ti64(0, NULL, (double[]){-2});
    o = cg_index(x, 1, &is);
    for (int j = 0, q = 0; j < 4; j++)
        for (int k = 0; k < 5; k++) ref[q++] = X3(x, 1, j, k);
    EXPECT(o, 2, ((int64_t[]){4, 5}), ref, tol);
    cg_tensor_release(o);

    cg_tensor *ts[] = {ia, ib, i0, i2, i1, m1, m2, m5, i0b, ie, is};
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++) cg_tensor_release(ts[i]);
    if (noncontig) cg_tensor_release(x);
    cg_tensor_release(x0);
    free(ref);
}

TEST(index_values_all_placements) {
    check_index_cases(CG_DTYPE_F64, false, 0);
    check_index_cases(CG_DTYPE_F64, true, 0);
    check_index_cases(CG_DTYPE_F32, true, 0);
    check_index_cases(CG_DTYPE_F16, false, 0);
    check_index_cases(CG_DTYPE_BF16, true, 0);
    check_index_cases(CG_DTYPE_I64, true, 0);
    check_index_cases(CG_DTYPE_I8, false, 0);
}

TEST(index_zero_dim_and_bool_scalar) {
    cg_tensor *x = cg_scalar(7.5, CG_DTYPE_F32);
    cg_tensor *t = cg_scalar(1, CG_DTYPE_BOOL), *f = cg_scalar(0, CG_DTYPE_BOOL);
    cg_tensor *o = cg_index(x, 1, &t);
    EXPECT(o, 1, ((int64_t[]){1}), ((double[]){7.5}), 0);
    cg_tensor_release(o);
    o = cg_index(x, 1, &f);
    EXPECT(o, 1, ((int64_t[]){0}), ((double[]){0}), 0);
    cg_tensor_release(o);
    /* 0-d bool on a 2-D tensor inserts a dim: x[True] -> (1,2,3) */
    int64_t sh[2] = {2, 3};
    cg_tensor *y = tt_rand(CG_DTYPE_F64, 2, sh, -1, 1, 3);
    o = cg_index(y, 1, &t);
    double ref[6];
    for (int i = 0; i < 6; i++) ref[i] = tt_get(y, i);
    EXPECT(o, 3, ((int64_t[]){1, 2, 3}), ref, 0);
    cg_tensor_release(o);
    /* x[:, False] -> (2,0,3) */
    o = cg_index(y, 2, (cg_tensor *[]){NULL, f});
    EXPECT(o, 3, ((int64_t[]){2, 0, 3}), ref, 0);
    cg_tensor_release(o);
    /* masked_select on 0-d */
    o = cg_masked_select(x, t);
    EXPECT(o, 1, ((int64_t[]){1}), ((double[]){7.5}), 0);
    cg_tensor_release(o);
    cg_tensor_release(x);
    cg_tensor_release(t);
    cg_tensor_release(f);
    cg_tensor_release(y);
}

/* ---------------------------------------------------------------- nonzero */

TEST(nonzero_values) {
    double v[6] = {0, 1.5, 0, -2, 0, NAN};
    cg_tensor *x = tt_tensor(CG_DTYPE_F32, 2, (int64_t[]){2, 3}, v);
    cg_tensor *nz = cg_nonzero(x);
    EXPECT(nz, 2, ((int64_t[]){3, 2}), ((double[]){0, 1, 1, 0, 1, 2}), 0);
    CHECK(cg_tensor_dtype(nz) == CG_DTYPE_I64);
    cg_tensor_release(nz);
    cg_tensor *xn = tt_noncontig(x);
    nz = cg_nonzero(xn);
    EXPECT(nz, 2, ((int64_t[]){3, 2}), ((double[]){0, 1, 1, 0, 1, 2}), 0);
    cg_tensor_release(nz);
    cg_tensor *tr = cg_transpose(x, 0, 1); /* (3,2): [[0,-2],[1.5,0],[0,nan]] */
    nz = cg_nonzero(tr);
    EXPECT(nz, 2, ((int64_t[]){3, 2}), ((double[]){0, 1, 1, 0, 2, 1}), 0);
    cg_tensor_release(nz);
    cg_tensor *s = cg_scalar(3, CG_DTYPE_I32), *z = cg_scalar(0, CG_DTYPE_I32);
    nz = cg_nonzero(s);
    EXPECT(nz, 2, ((int64_t[]){1, 0}), NULL, 0);
    cg_tensor_release(nz);
    nz = cg_nonzero(z);
    EXPECT(nz, 2, ((int64_t[]){0, 0}), NULL, 0);
    cg_tensor_release(nz);
    cg_tensor *e = cg_zeros(2, (int64_t[]){0, 4}, CG_DTYPE_F64, cg_cpu());
    nz = cg_nonzero(e);
    EXPECT(nz, 2, ((int64_t[]){0, 2}), NULL, 0);
    cg_tensor_release(nz);
    double hv[3] = {-0.0, 0.25, 0};
    cg_tensor *h = tt_tensor(CG_DTYPE_BF16, 1, (int64_t[]){3}, hv);
    nz = cg_nonzero(h);
    EXPECT(nz, 2, ((int64_t[]){1, 1}), ((double[]){1}), 0);
    cg_tensor_release(nz);
    cg_tensor *m = cg_empty(1, (int64_t[]){3}, CG_DTYPE_F32, cg_meta());
    CHECK_ERR(cg_nonzero(m) == NULL, CG_ERR_NOT_IMPLEMENTED, "meta");
    cg_tensor *ts[] = {x, xn, tr, s, z, e, h, m};
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++) cg_tensor_release(ts[i]);
}

/* ---------------------------------------------------------------- index_put */

TEST(index_put_values_and_duplicates) {
    double xv[4] = {1, 2, 3, 4};
    cg_tensor *x = tt_tensor(CG_DTYPE_F64, 1, (int64_t[]){4}, xv);
    cg_tensor *idx = vec_i64(4, (double[]){1, -3, 2, 0});
    cg_tensor *v = tt_tensor(CG_DTYPE_F64, 1, (int64_t[]){4}, (double[]){10, 20, 30, 40});
    cg_tensor *o = cg_index_put(x, 1, &idx, v, false); /* idx 1 twice: last write (20) wins */
    EXPECT(o, 1, ((int64_t[]){4}), ((double[]){40, 20, 30, 4}), 0);
    cg_tensor_release(o);
    o = cg_index_put(x, 1, &idx, v, true);
    EXPECT(o, 1, ((int64_t[]){4}), ((double[]){41, 32, 33, 4}), 0);
    cg_tensor_release(o);
    EXPECT(x, 1, ((int64_t[]){4}), xv, 0); /* out of place: x untouched */

    /* 0-d value broadcast, bool mask of rank 2 */
    int64_t sh[2] = {3, 4};
    cg_tensor *y = tt_rand(CG_DTYPE_F32, 2, sh, -1, 1, 5);
    double mv[12] = {1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 1, 0};
    cg_tensor *m = tbool(2, sh, mv), *s = cg_scalar(9, CG_DTYPE_F32);
    o = cg_index_put(y, 1, &m, s, false);
    double ref[12];
    for (int i = 0; i < 12; i++) ref[i] = mv[i] ? 9 : tt_get(y, i);
    EXPECT(o, 2, sh, ref, 0);
    cg_tensor_release(o);

    /* non-adjacent [ia, NULL, ic] on (3,4,5) with values (4,) broadcast over (2,4) */
    int64_t sh3[3] = {3, 4, 5};
    cg_tensor *z = tt_rand(CG_DTYPE_F64, 3, sh3, -1, 1, 6);
    cg_tensor *zn = tt_noncontig(z);
    cg_tensor *ia = vec_i64(2, (double[]){2, 2}), *ic = vec_i64(2, (double[]){-1, 4});
    cg_tensor *vals = tt_tensor(CG_DTYPE_F64, 1, (int64_t[]){4}, (double[]){1, 2, 3, 4});
    double r3[60];
    for (int acc = 0; acc < 2; acc++) {
        for (int i = 0; i < 60; i++) r3[i] = tt_get(z, i);
        for (int a = 0; a < 2; a++)
            for (int j = 0; j < 4; j++) {
                double *dst = &r3[(2 * 4 + j) * 5 + 4];
                *dst = acc ? *dst + (j + 1) : (j + 1);
            }
        o = cg_index_put(zn, 3, (cg_tensor *[]){ia, NULL, ic}, vals, acc);
        EXPECT(o, 3, sh3, r3, 1e-12);
        cg_tensor_release(o);
        /* in place matches, keeps storage, bumps version */
        cg_tensor *w = cg_clone(z);
        const void *sid = cg_tensor_storage_id(w);
        uint64_t ver = cg_tensor_version(w);
        CHECK_OK(cg_index_put_(w, 3, (cg_tensor *[]){ia, NULL, ic}, vals, acc));
        CHECK(cg_tensor_storage_id(w) == sid && cg_tensor_version(w) > ver);
        EXPECT(w, 3, sh3, r3, 1e-12);
        cg_tensor_release(w);
    }

    /* integer accumulate, int32 index */
    cg_tensor *xi = tt_tensor(CG_DTYPE_I64, 1, (int64_t[]){3}, (double[]){1, 2, 3});
    cg_tensor *i32 = tt_tensor(CG_DTYPE_I32, 1, (int64_t[]){3}, (double[]){0, 0, 2});
    cg_tensor *vi = tt_tensor(CG_DTYPE_I64, 1, (int64_t[]){3}, (double[]){5, 6, 7});
    CHECK_OK(cg_index_put_(xi, 1, &i32, vi, true));
    EXPECT(xi, 1, ((int64_t[]){3}), ((double[]){12, 2, 10}), 0);

    /* half accumulate (computed in float) */
    cg_tensor *xh = tt_tensor(CG_DTYPE_F16, 1, (int64_t[]){2}, (double[]){0.5, 1});
    cg_tensor *ih = vec_i64(3, (double[]){1, 1, 0});
    cg_tensor *vh = tt_tensor(CG_DTYPE_F16, 1, (int64_t[]){3}, (double[]){0.25, 2, -1});
    CHECK_OK(cg_index_put_(xh, 1, &ih, vh, true));
    EXPECT(xh, 1, ((int64_t[]){2}), ((double[]){-0.5, 3.25}), 0);
    cg_tensor_release(xh);
    cg_tensor_release(ih);
    cg_tensor_release(vh);

    /* 0-d x: x[True] = 5, x[False] = 5 */
    cg_tensor *x0 = cg_scalar(1, CG_DTYPE_F64), *bt = cg_scalar(1, CG_DTYPE_BOOL), *bf = cg_scalar(0, CG_DTYPE_BOOL);
    cg_tensor *five = cg_scalar(5, CG_DTYPE_F64);
    o = cg_index_put(x0, 1, &bf, five, false);
    EXPECT(o, 0, NULL, ((double[]){1}), 0);
    cg_tensor_release(o);
    CHECK_OK(cg_index_put_(x0, 1, &bt, five, false));
    EXPECT(x0, 0, NULL, ((double[]){5}), 0);

    /* values aliasing x: refused when dense (Note [Memory overlap], as PyTorch),
     * read before writing when PyTorch's check cannot tell (a strided view) */
    cg_tensor *al = tt_tensor(CG_DTYPE_F64, 1, (int64_t[]){4}, (double[]){1, 2, 3, 4});
    cg_tensor *rev = vec_i64(4, (double[]){3, 2, 1, 0});
    CHECK_ERR(cg_index_put_(al, 1, &rev, al, false) != CG_OK, CG_ERR_RUNTIME, "single memory location");
    EXPECT(al, 1, ((int64_t[]){4}), ((double[]){1, 2, 3, 4}), 0);
    cg_tensor *ev = cg_slice(al, 0, 0, 4, 2), *i20 = vec_i64(2, (double[]){2, 0});
    CHECK_OK(cg_index_put_(al, 1, &i20, ev, false)); /* al[2] = al[0], al[0] = old al[2] */
    EXPECT(al, 1, ((int64_t[]){4}), ((double[]){3, 2, 1, 4}), 0);

    cg_tensor *ts[] = {x, idx, v, y, m, s, z, zn, ia, ic, vals, xi, i32, vi, x0, bt, bf, five, al, rev, ev, i20};
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++) cg_tensor_release(ts[i]);
}

/* ---------------------------------------------------------------- other ops: values */

TEST(index_select_take_values) {
    int64_t sh[2] = {3, 4};
    cg_tensor *x = tt_rand(CG_DTYPE_F32, 2, sh, -1, 1, 8), *xn = tt_noncontig(x);
    cg_tensor *idx = tt_tensor(CG_DTYPE_I32, 1, (int64_t[]){3}, (double[]){3, 0, 3});
    cg_tensor *o = cg_index_select(xn, 1, idx);
    double ref[16];
    for (int i = 0, p = 0; i < 3; i++)
        for (int a = 0; a < 3; a++) ref[p++] = tt_get(x, i * 4 + (int[]){3, 0, 3}[a]);
    EXPECT(o, 2, ((int64_t[]){3, 3}), ref, 0);
    cg_tensor_release(o);
    cg_tensor *i0 = ti64(0, NULL, (double[]){2}); /* 0-d index keeps the dim (size 1) */
    o = cg_index_select(x, -2, i0);
    for (int j = 0; j < 4; j++) ref[j] = tt_get(x, 8 + j);
    EXPECT(o, 2, ((int64_t[]){1, 4}), ref, 0);
    cg_tensor_release(o);
    cg_tensor *s = cg_scalar(2.5, CG_DTYPE_F64), *zi = vec_i64(1, (double[]){0});
    o = cg_index_select(s, 0, zi);
    EXPECT(o, 0, NULL, ((double[]){2.5}), 0);
    cg_tensor_release(o);
    cg_tensor *ei = vec_i64(0, NULL);
    o = cg_index_select(x, 0, ei);
    EXPECT(o, 2, ((int64_t[]){0, 4}), ref, 0);
    cg_tensor_release(o);

    double tv[4] = {11, -12, 0, 5};
    cg_tensor *ti = ti64(2, (int64_t[]){2, 2}, tv);
    o = cg_take(xn, ti);
    for (int a = 0; a < 4; a++) ref[a] = tt_get(x, wrap((int64_t)tv[a], 12));
    EXPECT(o, 2, ((int64_t[]){2, 2}), ref, 0);
    cg_tensor_release(o);
    cg_tensor *xi = tt_tensor(CG_DTYPE_I16, 2, sh, (double[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
    o = cg_take(xi, ti);
    EXPECT(o, 2, ((int64_t[]){2, 2}), ((double[]){11, 0, 0, 5}), 0);
    cg_tensor_release(o);
    cg_tensor *ts[] = {x, xn, idx, i0, s, zi, ei, ti, xi};
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++) cg_tensor_release(ts[i]);
}

TEST(masked_ops_values) {
    int64_t sh[2] = {3, 4};
    cg_tensor *x = tt_rand(CG_DTYPE_F64, 2, sh, -1, 1, 9), *xn = tt_noncontig(x);
    double mv[4] = {1, 0, 0, 1};
    cg_tensor *m = tbool(1, (int64_t[]){4}, mv); /* broadcast over rows */
    cg_tensor *val = cg_scalar(-7, CG_DTYPE_F32);  /* converted to x's dtype */
    cg_tensor *o = cg_masked_fill(xn, m, val);
    double ref[24];
    for (int i = 0; i < 12; i++) ref[i] = mv[i % 4] ? -7 : tt_get(x, i);
    EXPECT(o, 2, sh, ref, 0);
    cg_tensor_release(o);
    /* mask bigger than x: result takes the broadcast shape */
    cg_tensor *m2 = tbool(2, (int64_t[]){2, 4}, (double[]){1, 0, 0, 0, 0, 0, 0, 1});
    cg_tensor *r = tt_tensor(CG_DTYPE_F64, 1, (int64_t[]){4}, (double[]){1, 2, 3, 4});
    o = cg_masked_fill(r, m2, val);
    EXPECT(o, 2, ((int64_t[]){2, 4}), ((double[]){-7, 2, 3, 4, 1, 2, 3, -7}), 0);
    cg_tensor_release(o);

    o = cg_masked_select(xn, m);
    for (int i = 0, p = 0; i < 12; i++)
        if (mv[i % 4]) ref[p++] = tt_get(x, i);
    EXPECT(o, 1, ((int64_t[]){6}), ref, 0);
    cg_tensor_release(o);
    o = cg_masked_select(r, m2); /* x broadcast to the mask */
    EXPECT(o, 1, ((int64_t[]){2}), ((double[]){1, 4}), 0);
    cg_tensor_release(o);

    cg_tensor *src = tt_rand(CG_DTYPE_F64, 2, (int64_t[]){2, 4}, 10, 20, 10);
    o = cg_masked_scatter(xn, m, src);
    for (int i = 0, p = 0; i < 12; i++) ref[i] = mv[i % 4] ? tt_get(src, p++) : tt_get(x, i);
    EXPECT(o, 2, sh, ref, 0);
    cg_tensor_release(o);
    o = cg_masked_scatter(r, m2, src);
    EXPECT(o, 2, ((int64_t[]){2, 4}), ((double[]){tt_get(src, 0), 2, 3, 4, 1, 2, 3, tt_get(src, 1)}), 0);
    cg_tensor_release(o);
    /* integer masked ops */
    cg_tensor *xi = tt_tensor(CG_DTYPE_I32, 1, (int64_t[]){4}, (double[]){1, 2, 3, 4});
    cg_tensor *vi = cg_scalar(0, CG_DTYPE_I32);
    o = cg_masked_fill(xi, m, vi);
    EXPECT(o, 1, ((int64_t[]){4}), ((double[]){0, 2, 3, 0}), 0);
    cg_tensor_release(o);
    cg_tensor *ts[] = {x, xn, m, val, m2, r, src, xi, vi};
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++) cg_tensor_release(ts[i]);
}

/* ---------------------------------------------------------------- gradients */

#define GRADS(fn, ctx, n, in)                                                   \
    do {                                                                        \
        CHECK(tt_gradcheck(fn, ctx, n, in, 1e-6, 1e-7, 1e-5));                  \
        CHECK(tt_gradgradcheck(fn, ctx, n, in, 1e-6, 1e-7, 1e-5));              \
    } while (0)

static cg_tensor *grad_input(int nd, const int64_t *sh, unsigned seed, bool noncontig) {
    cg_tensor *x = tt_rand(CG_DTYPE_F64, nd, sh, -1, 1, seed);
    if (noncontig) {
        cg_tensor *y = tt_noncontig(x);
        cg_tensor_release(x);
        x = y;
    }
    cg_tensor_set_requires_grad(x, true);
    return x;
}

TEST(index_gradients) {
    int64_t sh[3] = {3, 4, 5};
    cg_tensor *x = grad_input(3, sh, 31, false), *xn = grad_input(3, sh, 32, true);
    cg_tensor *dup = vec_i64(4, (double[]){2, -1, 0, 2});
    cg_tensor *i0 = ti64(2, (int64_t[]){2, 1}, (double[]){1, 1}), *i2 = vec_i64(3, (double[]){4, 0, -1});
    cg_tensor *m2 = tbool(2, (int64_t[]){3, 4}, (double[]){0, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1});
    cg_tensor *m1 = tbool(1, (int64_t[]){5}, (double[]){1, 0, 0, 1, 1});
    cg_tensor *ie = vec_i64(0, NULL);
    idx_ctx cases[] = {
        {1, {dup}, false, 0},
        {2, {NULL, dup}, false, 0},
        {3, {i0, NULL, i2}, false, 0},
        {3, {NULL, i0, i2}, false, 0},
        {1, {m2}, false, 0},
        {3, {NULL, NULL, m1}, false, 0},
        {2, {NULL, ie}, false, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        GRADS(f_index, &cases[c], 1, &x);
        GRADS(f_index, &cases[c], 1, &xn);
    }
    cg_tensor *s = grad_input(0, NULL, 33, false), *bt = cg_scalar(1, CG_DTYPE_BOOL);
    idx_ctx c0 = {1, {bt}, false, 0};
    GRADS(f_index, &c0, 1, &s);
    cg_tensor *e = grad_input(2, (int64_t[]){3, 0}, 34, false); /* empty input: (4,0) result */
    GRADS(f_index, &cases[0], 1, &e);
    cg_tensor *ts[] = {x, xn, dup, i0, i2, m2, m1, ie, s, bt, e};
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++) cg_tensor_release(ts[i]);
}

static cg_tensor *f_index_put(cg_tensor *const *in, void *c) {
    idx_ctx *k = c;
    return cg_index_put(in[0], k->n, k->list, in[1], k->accumulate);
}

/* in place on a non-leaf: y = x * 1; y[idx] = v (or +=) */
static cg_tensor *f_index_put_(cg_tensor *const *in, void *c) {
    idx_ctx *k = c;
    cg_tensor *one = cg_scalar(1, CG_DTYPE_F64), *y = cg_mul(in[0], one);
    cg_tensor_release(one);
    if (cg_index_put_(y, k->n, k->list, in[1], k->accumulate)) {
        cg_tensor_release(y);
        return NULL;
    }
    return y;
}

TEST(index_put_gradients) {
    int64_t sh[3] = {3, 4, 5};
    cg_tensor *x = grad_input(3, sh, 41, true);
    cg_tensor *dup = vec_i64(3, (double[]){2, -1, 2}), *uniq = vec_i64(2, (double[]){-1, 0});
    cg_tensor *i0 = vec_i64(2, (double[]){1, 2}), *i2 = vec_i64(2, (double[]){4, 0});
    cg_tensor *m2 = tbool(2, (int64_t[]){3, 4}, (double[]){0, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1});
    /* values shapes: broadcast (5,) over (3,4,5) rows, full shapes, with leading 1 */
    cg_tensor *v_dup = grad_input(3, (int64_t[]){3, 4, 5}, 42, false);
    cg_tensor *v_row = grad_input(1, (int64_t[]){5}, 43, false);
    cg_tensor *v_nonadj = grad_input(3, (int64_t[]){1, 2, 1}, 44, true); /* -> (2,4) after reduce */
    cg_tensor *v_mask = grad_input(2, (int64_t[]){4, 5}, 45, false);
    struct { idx_ctx c; cg_tensor *v; } cases[] = {
        {{1, {dup}, true, 0}, v_dup},       /* accumulate with duplicates */
        {{1, {uniq}, false, 0}, v_row},     /* assign, broadcast values */
        {{1, {uniq}, true, 0}, v_row},
        {{3, {i0, NULL, i2}, false, 0}, v_nonadj},
        {{3, {i0, NULL, i2}, true, 0}, v_nonadj},
        {{1, {m2}, false, 0}, v_mask},
        {{1, {m2}, true, 0}, v_mask},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        cg_tensor *in[2] = {x, cases[c].v};
        GRADS(f_index_put, &cases[c].c, 2, in);
        GRADS(f_index_put_, &cases[c].c, 2, in);
    }
    cg_tensor *ts[] = {x, dup, uniq, i0, i2, m2, v_dup, v_row, v_nonadj, v_mask};
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++) cg_tensor_release(ts[i]);
}

static cg_tensor *f_index_select(cg_tensor *const *in, void *c) {
    idx_ctx *k = c;
    return cg_index_select(in[0], k->dim, k->list[0]);
}
static cg_tensor *f_take(cg_tensor *const *in, void *c) { return cg_take(in[0], ((idx_ctx *)c)->list[0]); }
static cg_tensor *f_masked_fill(cg_tensor *const *in, void *c) {
    return cg_masked_fill(in[0], ((idx_ctx *)c)->list[0], in[1]);
}
static cg_tensor *f_masked_select(cg_tensor *const *in, void *c) {
    return cg_masked_select(in[0], ((idx_ctx *)c)->list[0]);
}
static cg_tensor *f_masked_scatter(cg_tensor *const *in, void *c) {
    return cg_masked_scatter(in[0], ((idx_ctx *)c)->list[0], in[1]);
}

TEST(index_select_take_gradients) {
    int64_t sh[3] = {3, 4, 5};
    cg_tensor *x = grad_input(3, sh, 51, true);
    cg_tensor *dup = vec_i64(4, (double[]){3, 0, 3, 1});
    cg_tensor *i32 = tt_tensor(CG_DTYPE_I32, 1, (int64_t[]){2}, (double[]){2, 2});
    cg_tensor *ie = vec_i64(0, NULL);
    idx_ctx c1 = {1, {dup}, false, 1}, c2 = {1, {i32}, false, -1}, c3 = {1, {ie}, false, 0};
    GRADS(f_index_select, &c1, 1, &x);
    GRADS(f_index_select, &c2, 1, &x);
    GRADS(f_index_select, &c3, 1, &x);
    cg_tensor *s = grad_input(0, NULL, 52, false), *z = vec_i64(1, (double[]){0});
    idx_ctx c4 = {1, {z}, false, 0};
    GRADS(f_index_select, &c4, 1, &s);
    cg_tensor *ti = ti64(2, (int64_t[]){2, 3}, (double[]){0, -1, 59, 7, 7, -60});
    idx_ctx c5 = {1, {ti}, false, 0};
    GRADS(f_take, &c5, 1, &x);
    GRADS(f_take, &c4, 1, &s);
    cg_tensor *ts[] = {x, dup, i32, ie, s, z, ti};
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++) cg_tensor_release(ts[i]);
}

TEST(masked_gradients) {
    int64_t sh[2] = {3, 4};
    cg_tensor *x = grad_input(2, sh, 61, true), *xr = grad_input(1, (int64_t[]){4}, 62, false);
    cg_tensor *val = grad_input(0, NULL, 63, false);
    cg_tensor *m = tbool(2, sh, (double[]){1, 0, 0, 1, 0, 1, 0, 0, 1, 1, 0, 0});
    cg_tensor *mr = tbool(1, (int64_t[]){4}, (double[]){0, 1, 1, 0});
    cg_tensor *me = tbool(2, sh, (double[]){0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
    idx_ctx cm = {1, {m}, false, 0}, cr = {1, {mr}, false, 0}, ce = {1, {me}, false, 0};
    cg_tensor *in[2] = {x, val}, *inb[2] = {xr, val};
    GRADS(f_masked_fill, &cm, 2, in);
    GRADS(f_masked_fill, &cr, 2, in);
    GRADS(f_masked_fill, &cm, 2, inb); /* x broadcast to the mask */
    GRADS(f_masked_select, &cm, 1, &x);
    GRADS(f_masked_select, &cr, 1, &x);
    GRADS(f_masked_select, &cm, 1, &xr);
    GRADS(f_masked_select, &ce, 1, &x);
    cg_tensor *src = grad_input(2, (int64_t[]){2, 5}, 64, true); /* 10 >= count */
    cg_tensor *src5 = grad_input(1, (int64_t[]){5}, 65, false); /* == count of m */
    cg_tensor *s1[2] = {x, src}, *s2[2] = {x, src5}, *s3[2] = {xr, src};
    GRADS(f_masked_scatter, &cm, 2, s1);
    GRADS(f_masked_scatter, &cm, 2, s2);
    GRADS(f_masked_scatter, &cr, 2, s1);
    GRADS(f_masked_scatter, &cm, 2, s3);
    GRADS(f_masked_scatter, &ce, 2, s1);
    cg_tensor *ts[] = {x, xr, val, m, mr, me, src, src5};
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++) cg_tensor_release(ts[i]);
}

TEST(index_node_names) {
    int64_t sh[2] = {3, 4};
    cg_tensor *x = grad_input(2, sh, 71, false), *i = vec_i64(1, (double[]){1});
    cg_tensor *m = tbool(2, sh, (double[]){1, 0, 0, 1, 0, 1, 0, 0, 1, 1, 0, 0}), *v = cg_scalar(0, CG_DTYPE_F64);
    cg_tensor *outs[] = {cg_index(x, 1, &i), cg_index_put(x, 1, &i, v, false), cg_index_select(x, 0, i),
                         cg_take(x, i), cg_masked_fill(x, m, v), cg_masked_select(x, m), cg_masked_scatter(x, m, x)};
    const char *names[] = {"IndexBackward0", "IndexPutBackward0", "IndexSelectBackward0", "TakeBackward0",
                           "MaskedFillBackward0", "MaskedSelectBackward0", "MaskedScatterBackward0"};
    for (int k = 0; k < 7; k++) {
        CHECK_MSG(outs[k] && cg_tensor_grad_fn(outs[k]) && !strcmp(cg_node_name(cg_tensor_grad_fn(outs[k])), names[k]),
                  "op %d: expected %s", k, names[k]);
        cg_tensor_release(outs[k]);
    }
    /* integer results carry no graph; nonzero never does */
    cg_tensor *nz = cg_nonzero(x);
    CHECK(nz && !cg_tensor_requires_grad(nz));
    cg_tensor *ts[] = {x, i, m, v, nz};
    for (size_t k = 0; k < sizeof ts / sizeof *ts; k++) cg_tensor_release(ts[k]);
}

/* ---------------------------------------------------------------- errors */

TEST(index_errors) {
    int64_t sh[2] = {3, 4};
    cg_tensor *x = tt_rand(CG_DTYPE_F32, 2, sh, -1, 1, 81), *v = cg_scalar(1, CG_DTYPE_F32);
    cg_tensor *big = vec_i64(2, (double[]){0, 3}), *neg = vec_i64(1, (double[]){-4});
    cg_tensor *fl = tt_tensor(CG_DTYPE_F32, 1, (int64_t[]){1}, (double[]){0});
    cg_tensor *ok = vec_i64(2, (double[]){0, 1}), *ok3 = vec_i64(3, (double[]){0, 1, 2});
    cg_tensor *mbad = tbool(1, (int64_t[]){4}, (double[]){1, 0, 0, 1});

    CHECK_ERR(cg_index(x, 1, &big) == NULL, CG_ERR_INDEX, "index 3 is out of bounds for dimension 0 with size 3");
    CHECK_ERR(cg_index(x, 1, &neg) == NULL, CG_ERR_INDEX, "index -4 is out of bounds for dimension 0 with size 3");
    cg_tensor *neg5 = vec_i64(1, (double[]){-5});
    CHECK_ERR(cg_index(x, 2, (cg_tensor *[]){NULL, neg5}) == NULL, CG_ERR_INDEX,
              "index -5 is out of bounds for dimension 1 with size 4");
    CHECK_ERR(cg_index(x, 1, &fl) == NULL, CG_ERR_DTYPE, "must be long, int or bool tensors, got float32");
    CHECK_ERR(cg_index(x, 3, (cg_tensor *[]){ok, ok, ok}) == NULL, CG_ERR_INDEX, "too many indices");
    CHECK_ERR(cg_index(x, 1, &mbad) == NULL, CG_ERR_INDEX, "does not match the shape of the indexed tensor");
    CHECK_ERR(cg_index(x, 2, (cg_tensor *[]){ok, ok3}) == NULL, CG_ERR_INDEX, "could not be broadcast");
    CHECK_ERR(cg_index(x, 2, (cg_tensor *[]){NULL, NULL}) == NULL, CG_ERR_INDEX, "at least one index");

    CHECK_ERR(cg_index_put(x, 1, &big, v, false) == NULL, CG_ERR_INDEX, "out of bounds");
    CHECK_ERR(cg_index_put(x, 1, &neg, v, true) == NULL, CG_ERR_INDEX, "index -4");
    CHECK_ERR(cg_index_put_(x, 2, (cg_tensor *[]){NULL, neg5}, v, false) != CG_OK, CG_ERR_INDEX, "index -5");
    CHECK_ERR(cg_index_put_(x, 1, &big, v, true) != CG_OK, CG_ERR_INDEX, "index 3 is out of bounds for dimension 0");
    cg_tensor *v3 = tt_rand(CG_DTYPE_F32, 1, (int64_t[]){3}, 0, 1, 2);
    CHECK_ERR(cg_index_put(x, 1, &ok, v3, false) == NULL, CG_ERR_SHAPE, "cannot be broadcast to indexing result");
    cg_tensor *v64 = cg_scalar(1, CG_DTYPE_F64);
    CHECK_ERR(cg_index_put(x, 1, &ok, v64, false) == NULL, CG_ERR_DTYPE, "dtype mismatch");
    CHECK_ERR(cg_index_put_(x, 1, &fl, v, false) != CG_OK, CG_ERR_DTYPE, "got float32");
    cg_tensor *leaf = tt_rand(CG_DTYPE_F64, 1, (int64_t[]){3}, 0, 1, 3), *lv = cg_scalar(1, CG_DTYPE_F64);
    cg_tensor_set_requires_grad(leaf, true);
    CHECK_ERR(cg_index_put_(leaf, 1, &ok, lv, false) != CG_OK, CG_ERR_RUNTIME, "leaf Variable that requires grad");
    EXPECT(x, 2, sh, ((double[]){tt_get(x, 0), tt_get(x, 1), tt_get(x, 2), tt_get(x, 3), tt_get(x, 4), tt_get(x, 5),
                                 tt_get(x, 6), tt_get(x, 7), tt_get(x, 8), tt_get(x, 9), tt_get(x, 10), tt_get(x, 11)}), 0);

    CHECK_ERR(cg_index_select(x, 0, big) == NULL, CG_ERR_INDEX, "index 3 is out of range for dimension 0 with size 3");
    cg_tensor *m1 = vec_i64(1, (double[]){-1});
    CHECK_ERR(cg_index_select(x, 1, m1) == NULL, CG_ERR_INDEX, "index -1 is out of range");
    CHECK_ERR(cg_index_select(x, 0, fl) == NULL, CG_ERR_DTYPE, "int64 or int32");
    CHECK_ERR(cg_index_select(x, 2, ok) == NULL, CG_ERR_INDEX, "dimension out of range");
    cg_tensor *i2d = ti64(2, (int64_t[]){1, 1}, (double[]){0});
    CHECK_ERR(cg_index_select(x, 0, i2d) == NULL, CG_ERR_INDEX, "vector");
    cg_tensor *s = cg_scalar(1, CG_DTYPE_F32);
    CHECK_ERR(cg_index_select(s, 0, ok) == NULL, CG_ERR_INDEX, "only 1 value");

    cg_tensor *t12 = vec_i64(1, (double[]){12}), *tm13 = vec_i64(1, (double[]){-13});
    CHECK_ERR(cg_take(x, t12) == NULL, CG_ERR_INDEX, "tried to access index 12 on a tensor of 12 elements");
    CHECK_ERR(cg_take(x, tm13) == NULL, CG_ERR_INDEX, "index -13");
    CHECK_ERR(cg_take(x, fl) == NULL, CG_ERR_DTYPE, "int64 or int32");

    cg_tensor *mf = tt_tensor(CG_DTYPE_U8, 1, (int64_t[]){4}, (double[]){1, 0, 0, 1});
    CHECK_ERR(cg_masked_fill(x, mf, v) == NULL, CG_ERR_DTYPE, "bool mask");
    CHECK_ERR(cg_masked_fill(x, mbad, v3) == NULL, CG_ERR_SHAPE, "0-dimensional value");
    cg_tensor *m3 = tbool(1, (int64_t[]){3}, (double[]){1, 1, 1});
    CHECK_ERR(cg_masked_fill(x, m3, v) == NULL, CG_ERR_SHAPE, "broadcast");
    CHECK_ERR(cg_masked_select(x, mf) == NULL, CG_ERR_DTYPE, "bool mask");
    CHECK_ERR(cg_masked_scatter(x, mbad, v3) == NULL, CG_ERR_SHAPE, "at least as many elements (3) as ones in mask (6)");
    CHECK_ERR(cg_masked_scatter(x, mbad, v64) == NULL, CG_ERR_DTYPE, "dtype mismatch");

    cg_tensor *ts[] = {x, v, big, neg, neg5, fl, ok, ok3, mbad, v3, v64, leaf, lv, m1, i2d, s, t12, tm13, mf, m3};
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++) cg_tensor_release(ts[i]);
}

TEST(index_meta_shapes) {
    cg_tensor *x = cg_empty(3, (int64_t[]){3, 4, 5}, CG_DTYPE_F32, cg_meta());
    cg_tensor *i = cg_empty(2, (int64_t[]){2, 6}, CG_DTYPE_I64, cg_meta());
    cg_tensor *o = cg_index(x, 3, (cg_tensor *[]){i, NULL, i});
    CHECK(o && cg_tensor_ndim(o) == 3 && cg_tensor_shape(o)[0] == 2 && cg_tensor_shape(o)[1] == 6 &&
          cg_tensor_shape(o)[2] == 4);
    cg_tensor_release(o);
    cg_tensor *m = cg_empty(1, (int64_t[]){3}, CG_DTYPE_BOOL, cg_meta());
    CHECK_ERR(cg_index(x, 1, &m) == NULL, CG_ERR_NOT_IMPLEMENTED, "meta");
    cg_tensor *c = tt_rand(CG_DTYPE_F32, 1, (int64_t[]){3}, 0, 1, 1), *ci = vec_i64(1, (double[]){0});
    CHECK_ERR(cg_index(c, 1, &i) == NULL, CG_ERR_DEVICE, "meta");
    cg_tensor *ts[] = {x, i, m, c, ci};
    for (size_t k = 0; k < sizeof ts / sizeof *ts; k++) cg_tensor_release(ts[k]);
}

/* index_put_ into a view of a non-leaf records CopySlices on the base */
static cg_tensor *f_put_view(cg_tensor *const *in, void *ctx) {
    (void)ctx;
    cg_tensor *one = cg_scalar(1.0, CG_DTYPE_F64);
    cg_tensor *y = cg_mul(in[0], one);              /* (3,4) non-leaf */
    cg_tensor *row = cg_select(y, 0, 1);            /* view y[1] */
    int64_t iv[2] = {0, 2};
    cg_tensor *idx = cg_from_data(iv, 1, (int64_t[]){2}, CG_DTYPE_I64);
    cg_tensor *ids[1] = {idx};
    cg_status st = cg_index_put_(row, 1, ids, in[1], false); /* y[1, [0,2]] = v */
    cg_tensor *out = st ? NULL : cg_mul(y, y);
    cg_tensor *ts[] = {one, y, row, idx};
    for (int i = 0; i < 4; i++) cg_tensor_release(ts[i]);
    return out;
}

TEST(indexing_index_put_inplace_on_view_grads) {
    int64_t s[2] = {3, 4}, sv[1] = {2};
    cg_tensor *x = tt_rand(CG_DTYPE_F64, 2, s, -1, 1, 31), *v = tt_rand(CG_DTYPE_F64, 1, sv, -1, 1, 32);
    cg_tensor_set_requires_grad(x, true);
    cg_tensor_set_requires_grad(v, true);
    cg_tensor *in[2] = {x, v};
    CHECK(tt_gradcheck(f_put_view, NULL, 2, in, 1e-6, 1e-7, 1e-5));
    CHECK(tt_gradgradcheck(f_put_view, NULL, 2, in, 1e-6, 1e-6, 1e-4));
    cg_tensor_release(x);
    cg_tensor_release(v);
}
