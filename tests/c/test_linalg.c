/* test_linalg.c — matrix products and einsum: values against float64 triple
 * loops for every matmul rank combination (broadcast batches, transposed and
 * strided operands, empty dims, every dtype), no-copy checks, errors, and
 * gradcheck / gradgradcheck of every op. */
#include "test.h"

#include <stdlib.h>
#include <string.h>

#define SH(...) ((const int64_t[]){__VA_ARGS__})
#define NDIMS(...) ((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))

/* ---------------------------------------------------------------- float64 reference
 * PyTorch matmul semantics written out with plain loops: a 1-D a is a (1,k)
 * row, a 1-D b a (k,1) column (their dims removed from the result), leading
 * batch dims broadcast. Returns the result as a new float64 tensor. */
static cg_tensor *ref_matmul(const cg_tensor *a, const cg_tensor *b) {
    int na = cg_tensor_ndim(a), nb = cg_tensor_ndim(b);
    const int64_t *sa = cg_tensor_shape(a), *sb = cg_tensor_shape(b);
    int64_t m = na == 1 ? 1 : sa[na - 2], k = sa[na - 1], n = nb == 1 ? 1 : sb[nb - 1];
    int ba = na > 2 ? na - 2 : 0, bb = nb > 2 ? nb - 2 : 0, nbat = ba > bb ? ba : bb;
    int64_t bsh[CG_MAX_DIMS], dimA[CG_MAX_DIMS], dimB[CG_MAX_DIMS], osh[CG_MAX_DIMS];
    int on = 0;
    for (int i = 0; i < nbat; i++) {
        int ia = i - (nbat - ba), ib = i - (nbat - bb);
        dimA[i] = ia >= 0 ? sa[ia] : 1;
        dimB[i] = ib >= 0 ? sb[ib] : 1;
        bsh[i] = dimA[i] > dimB[i] ? dimA[i] : dimB[i];
        osh[on++] = bsh[i];
    }
    if (na > 1) osh[on++] = m;
    if (nb > 1) osh[on++] = n;
    int64_t nbatch = 1;
    for (int i = 0; i < nbat; i++) nbatch *= bsh[i];
    double *out = calloc((size_t)(nbatch * m * n) + 1, sizeof(double));
    for (int64_t bi = 0; bi < nbatch; bi++) {
        int64_t rem = bi, offA = 0, offB = 0, mulA = m * k, mulB = k * n;
        for (int d = nbat - 1; d >= 0; d--) {
            int64_t idx = rem % bsh[d];
            rem /= bsh[d];
            offA += (dimA[d] == 1 ? 0 : idx) * mulA;
            offB += (dimB[d] == 1 ? 0 : idx) * mulB;
            mulA *= dimA[d];
            mulB *= dimB[d];
        }
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double s = 0;
                for (int64_t p = 0; p < k; p++) s += tt_get(a, offA + i * k + p) * tt_get(b, offB + p * n + j);
                out[(bi * m + i) * n + j] = s;
            }
    }
    cg_tensor *r = tt_tensor(CG_DTYPE_F64, on, osh, out);
    free(out);
    return r;
}

static double tol_for(cg_dtype dt, int64_t k) {
    switch (dt) {
    case CG_DTYPE_F64: return 1e-12 * (double)(k + 1);
    case CG_DTYPE_F32: return 1e-5 * (double)(k + 1);
    case CG_DTYPE_F16: return 4e-3 * (double)(k + 1);
    case CG_DTYPE_BF16: return 3e-2 * (double)(k + 1);
    default: return 0; /* integers are exact */
    }
}

typedef struct mm_case {
    int na, nb, no;
    int64_t a[5], b[5], o[5];
} mm_case;

static const mm_case k_cases[] = {
    {1, 1, 0, {4}, {4}, {0}},
    {2, 1, 1, {3, 4}, {4}, {3}},
    {1, 2, 1, {4}, {4, 5}, {5}},
    {2, 2, 2, {3, 4}, {4, 5}, {3, 5}},
    {3, 1, 2, {2, 3, 4}, {4}, {2, 3}},
    {1, 3, 2, {4}, {2, 4, 5}, {2, 5}},
    {3, 2, 3, {2, 3, 4}, {4, 5}, {2, 3, 5}},
    {2, 3, 3, {3, 4}, {2, 4, 5}, {2, 3, 5}},
    {3, 3, 3, {2, 3, 4}, {2, 4, 5}, {2, 3, 5}},
    {3, 3, 3, {1, 3, 4}, {2, 4, 5}, {2, 3, 5}},
    {4, 3, 4, {2, 1, 3, 4}, {5, 4, 6}, {2, 5, 3, 6}},
    {4, 2, 4, {2, 2, 3, 4}, {4, 1}, {2, 2, 3, 1}},
    {4, 1, 3, {2, 2, 3, 4}, {4}, {2, 2, 3}},
};
#define NCASES ((int)(sizeof k_cases / sizeof k_cases[0]))

/* A non-contiguous copy whose last two dims are swapped in memory (the
 * transposed layout BLAS takes as T); 1-D inputs get a stride-2 layout. */
static cg_tensor *transposed_layout(cg_tensor *t) {
    int nd = cg_tensor_ndim(t);
    if (nd < 2) return tt_noncontig(t);
    int64_t sh[CG_MAX_DIMS];
    memcpy(sh, cg_tensor_shape(t), sizeof(int64_t) * (size_t)nd);
    int64_t tmp = sh[nd - 1];
    sh[nd - 1] = sh[nd - 2];
    sh[nd - 2] = tmp;
    cg_tensor *base = cg_empty(nd, sh, cg_tensor_dtype(t), cg_cpu());
    cg_tensor *v = cg_transpose(base, -1, -2);
    cg_copy_(v, t);
    cg_tensor_release(base);
    return v;
}

static void check_case(const mm_case *c, cg_dtype dt, int layout, unsigned seed) {
    double lo = cg_dtype_is_floating(dt) ? -1 : dt == CG_DTYPE_U8 ? 0 : -4, hi = cg_dtype_is_floating(dt) ? 1 : 5;
    cg_tensor *a0 = tt_rand(dt, c->na, c->a, lo, hi, seed), *b0 = tt_rand(dt, c->nb, c->b, lo, hi, seed + 1);
    if (!cg_dtype_is_floating(dt)) { /* integral values */
        cg_tensor *fa = tt_rand(CG_DTYPE_F64, c->na, c->a, lo, hi, seed), *fb = tt_rand(CG_DTYPE_F64, c->nb, c->b, lo, hi, seed + 1);
        double va[256], vb[256];
        for (int64_t i = 0; i < cg_tensor_numel(fa); i++) va[i] = floor(tt_get(fa, i));
        for (int64_t i = 0; i < cg_tensor_numel(fb); i++) vb[i] = floor(tt_get(fb, i));
        cg_tensor_release(a0);
        cg_tensor_release(b0);
        a0 = tt_tensor(dt, c->na, c->a, va);
        b0 = tt_tensor(dt, c->nb, c->b, vb);
        cg_tensor_release(fa);
        cg_tensor_release(fb);
    }
    cg_tensor *a = layout == 0 ? (cg_tensor_retain(a0), a0) : layout == 1 ? transposed_layout(a0) : tt_noncontig(a0);
    cg_tensor *b = layout == 0 ? (cg_tensor_retain(b0), b0) : layout == 1 ? transposed_layout(b0) : tt_noncontig(b0);
    cg_tensor *r = cg_matmul(a, b);
    CHECK_MSG(r, "matmul case a%dD b%dD dtype %s layout %d failed: %s", c->na, c->nb, cg_dtype_name(dt), layout,
              cg_last_error_message());
    if (r) {
        CHECK(cg_tensor_dtype(r) == dt);
        CHECK(cg_tensor_ndim(r) == c->no && !memcmp(cg_tensor_shape(r), c->o, sizeof(int64_t) * (size_t)c->no));
        cg_tensor *ref = ref_matmul(a0, b0);
        double d = tt_maxdiff(r, ref);
        CHECK_MSG(d <= tol_for(dt, c->a[c->na - 1]), "matmul a%dD b%dD %s layout %d: max diff %g", c->na, c->nb,
                  cg_dtype_name(dt), layout, d);
        cg_tensor_release(ref);
    }
    cg_tensor *ts[] = {a0, b0, a, b, r};
    for (int i = 0; i < 5; i++) cg_tensor_release(ts[i]);
}

TEST(linalg_matmul_all_ranks_dtypes_layouts) {
    const cg_dtype dts[] = {CG_DTYPE_F64, CG_DTYPE_F32, CG_DTYPE_F16, CG_DTYPE_BF16, CG_DTYPE_I64, CG_DTYPE_I32,
                            CG_DTYPE_I16, CG_DTYPE_U8};
    for (int c = 0; c < NCASES; c++)
        for (int d = 0; d < 8; d++)
            for (int layout = 0; layout < 3; layout++) check_case(&k_cases[c], dts[d], layout, 100u + (unsigned)c);
}

TEST(linalg_mm_larger_blas_paths) {
    /* sizes where OpenBLAS runs its real kernels (and threads), plus gemv shapes */
    const int64_t sizes[][3] = {{67, 45, 33}, {1, 50, 40}, {50, 1, 40}, {50, 40, 1}, {130, 70, 90}};
    for (int s = 0; s < 5; s++) {
        int64_t m = sizes[s][0], k = sizes[s][1], n = sizes[s][2];
        for (int t = 0; t < 4; t++) {
            cg_tensor *a0 = tt_rand(CG_DTYPE_F32, 2, SH(m, k), -1, 1, 7), *b0 = tt_rand(CG_DTYPE_F32, 2, SH(k, n), -1, 1, 8);
            cg_tensor *a = (t & 1) ? transposed_layout(a0) : (cg_tensor_retain(a0), a0);
            cg_tensor *b = (t & 2) ? transposed_layout(b0) : (cg_tensor_retain(b0), b0);
            cg_tensor *r = cg_mm(a, b), *ref = ref_matmul(a0, b0);
            CHECK_MSG(tt_maxdiff(r, ref) < 1e-4, "mm (%lld,%lld)x(%lld,%lld) layout %d: diff %g", (long long)m,
                      (long long)k, (long long)k, (long long)n, t, tt_maxdiff(r, ref));
            cg_tensor *ts[] = {a0, b0, a, b, r, ref};
            for (int i = 0; i < 6; i++) cg_tensor_release(ts[i]);
        }
    }
}

TEST(linalg_no_copies_for_transposed_and_broadcast) {
    cg_tensor *a = tt_rand(CG_DTYPE_F32, 2, SH(6, 5), -1, 1, 1), *b0 = tt_rand(CG_DTYPE_F32, 2, SH(7, 5), -1, 1, 2);
    cg_tensor *bt = cg_transpose(b0, 0, 1); /* (5,7), first-dim stride 1 */
    cg_tensor *x = tt_rand(CG_DTYPE_F32, 4, SH(2, 1, 3, 4), -1, 1, 3), *y = tt_rand(CG_DTYPE_F32, 3, SH(5, 4, 6), -1, 1, 4);
    cg_tensor *at = cg_transpose(a, 0, 1); /* (5,6) */
    cg_alloc_stats s0 = cg_allocator_stats(cg_cpu());
    cg_tensor *r1 = cg_mm(a, bt);          /* N x T */
    cg_tensor *r2 = cg_mm(at, a);          /* T x N */
    cg_tensor *r3 = cg_matmul(x, y);       /* broadcast batch (2,1) x (5,) */
    cg_alloc_stats s1 = cg_allocator_stats(cg_cpu());
    CHECK_MSG(s1.alloc_calls - s0.alloc_calls == 3, "expected only the 3 outputs to be allocated, got %lld allocations",
              (long long)(s1.alloc_calls - s0.alloc_calls));
    cg_tensor *ref = ref_matmul(x, y);
    CHECK(tt_maxdiff(r3, ref) < 1e-5);
    /* the check can fail: a stride-2 operand is copied once before the GEMM */
    cg_tensor *nc = tt_noncontig(a);
    cg_alloc_stats s2 = cg_allocator_stats(cg_cpu());
    cg_tensor *r4 = cg_mm(nc, bt);
    cg_alloc_stats s3 = cg_allocator_stats(cg_cpu());
    CHECK(s3.alloc_calls - s2.alloc_calls == 2);
    CHECK(tt_maxdiff(r4, r1) == 0);
    cg_tensor *ts[] = {a, b0, bt, x, y, at, r1, r2, r3, ref, nc, r4};
    for (int i = 0; i < 12; i++) cg_tensor_release(ts[i]);
}

TEST(linalg_autocast_runs_in_lower_precision) {
    cg_tensor *a = tt_rand(CG_DTYPE_F32, 2, SH(3, 4), -1, 1, 1), *b = tt_rand(CG_DTYPE_F32, 2, SH(4, 2), -1, 1, 2);
    cg_set_autocast(true, CG_DTYPE_BF16);
    cg_tensor *r = cg_matmul(a, b);
    cg_set_autocast(false, CG_DTYPE_BF16);
    CHECK(r && cg_tensor_dtype(r) == CG_DTYPE_BF16);
    cg_tensor *ref = ref_matmul(a, b);
    CHECK(r && tt_maxdiff(r, ref) < 0.1);
    cg_tensor *ts[] = {a, b, r, ref};
    for (int i = 0; i < 4; i++) cg_tensor_release(ts[i]);
}

TEST(linalg_empty_dims) {
    /* k = 0: zeros (the output buffer may hold garbage: fill it first through the cache) */
    cg_tensor *junk = cg_full(2, SH(3, 4), NAN, CG_DTYPE_F32, cg_cpu());
    cg_tensor_release(junk);
    const cg_dtype dts[] = {CG_DTYPE_F32, CG_DTYPE_F64, CG_DTYPE_F16, CG_DTYPE_I64};
    for (int d = 0; d < 4; d++) {
        cg_tensor *a = cg_zeros(2, SH(3, 0), dts[d], cg_cpu()), *b = cg_zeros(2, SH(0, 4), dts[d], cg_cpu());
        cg_tensor *r = cg_matmul(a, b);
        CHECK(r && cg_tensor_ndim(r) == 2 && cg_tensor_shape(r)[0] == 3 && cg_tensor_shape(r)[1] == 4);
        for (int64_t i = 0; r && i < 12; i++) CHECK(tt_get(r, i) == 0.0);
        cg_tensor *e1 = cg_zeros(1, SH(0), dts[d], cg_cpu());
        cg_tensor *dt = cg_dot(e1, e1);
        CHECK(dt && cg_tensor_ndim(dt) == 0 && tt_get(dt, 0) == 0.0);
        cg_tensor *ts[] = {a, b, r, e1, dt};
        for (int i = 0; i < 5; i++) cg_tensor_release(ts[i]);
    }
    /* m = 0, n = 0, batch = 0 */
    cg_tensor *a = cg_zeros(2, SH(0, 3), CG_DTYPE_F32, cg_cpu()), *b = tt_rand(CG_DTYPE_F32, 2, SH(3, 4), -1, 1, 1);
    cg_tensor *c = cg_zeros(2, SH(4, 0), CG_DTYPE_F32, cg_cpu()), *z = cg_zeros(3, SH(0, 2, 3), CG_DTYPE_F32, cg_cpu());
    cg_tensor *r1 = cg_mm(a, b), *r2 = cg_mm(b, c), *r3 = cg_matmul(z, b), *r4 = cg_matmul(b, c);
    CHECK(r1 && cg_tensor_shape(r1)[0] == 0 && cg_tensor_shape(r1)[1] == 4);
    CHECK(r2 && cg_tensor_shape(r2)[0] == 3 && cg_tensor_shape(r2)[1] == 0);
    CHECK(r3 && cg_tensor_ndim(r3) == 3 && cg_tensor_shape(r3)[0] == 0 && cg_tensor_shape(r3)[2] == 4);
    /* addmm with k = 0 is beta * self */
    cg_tensor *k0a = cg_zeros(2, SH(2, 0), CG_DTYPE_F64, cg_cpu()), *k0b = cg_zeros(2, SH(0, 3), CG_DTYPE_F64, cg_cpu());
    cg_tensor *self = tt_rand(CG_DTYPE_F64, 1, SH(3), -1, 1, 5);
    cg_tensor *am = cg_addmm(self, k0a, k0b, 0.5, 2.0);
    for (int64_t i = 0; am && i < 6; i++) CHECK_NEAR(tt_get(am, i), 0.5 * tt_get(self, i % 3), 1e-15);
    /* gradients through empty products */
    cg_tensor *ga = cg_zeros(2, SH(2, 0), CG_DTYPE_F64, cg_cpu()), *gb = cg_zeros(2, SH(0, 3), CG_DTYPE_F64, cg_cpu());
    cg_tensor_set_requires_grad(ga, true);
    cg_tensor_set_requires_grad(gb, true);
    cg_tensor *gr = cg_mm(ga, gb), *gs = cg_sum(gr, 0, NULL, false);
    CHECK_OK(cg_backward(gs, NULL, false, false));
    CHECK(cg_tensor_grad(ga) && cg_tensor_numel(cg_tensor_grad(ga)) == 0 && cg_tensor_numel(cg_tensor_grad(gb)) == 0);
    cg_tensor *ts[] = {a, b, c, z, r1, r2, r3, r4, k0a, k0b, self, am, ga, gb, gr, gs};
    for (int i = 0; i < 16; i++) cg_tensor_release(ts[i]);
}

TEST(linalg_errors) {
    cg_tensor *s = cg_scalar(1.0, CG_DTYPE_F32);
    cg_tensor *a = tt_rand(CG_DTYPE_F32, 2, SH(2, 3), -1, 1, 1), *b = tt_rand(CG_DTYPE_F32, 2, SH(4, 5), -1, 1, 2);
    cg_tensor *ad = tt_rand(CG_DTYPE_F64, 2, SH(3, 2), -1, 1, 1), *v3 = tt_rand(CG_DTYPE_F32, 1, SH(3), -1, 1, 3);
    cg_tensor *v4 = tt_rand(CG_DTYPE_F32, 1, SH(4), -1, 1, 3);
    cg_tensor *x = tt_rand(CG_DTYPE_F32, 3, SH(2, 2, 3), -1, 1, 1), *y = tt_rand(CG_DTYPE_F32, 3, SH(3, 3, 4), -1, 1, 1);
    cg_tensor *bl = cg_zeros(2, SH(2, 2), CG_DTYPE_BOOL, cg_cpu()), *ia = cg_zeros(2, SH(2, 2), CG_DTYPE_I64, cg_cpu());
    CHECK_ERR(cg_matmul(s, a) == NULL, CG_ERR_SHAPE, "[matmul] both arguments need to be at least 1D, but they are 0D and 2D");
    CHECK_ERR(cg_matmul(a, s) == NULL, CG_ERR_SHAPE, "at least 1D");
    CHECK_ERR(cg_matmul(a, b) == NULL, CG_ERR_SHAPE, "[matmul] shapes (2,3) and (4,5) cannot be multiplied (3 != 4)");
    CHECK_ERR(cg_matmul(v3, v4) == NULL, CG_ERR_SHAPE, "[matmul] shapes (3,) and (4,) cannot be multiplied");
    CHECK_ERR(cg_matmul(x, y) == NULL, CG_ERR_SHAPE, "[matmul] batch dimensions of shapes (2,2,3) and (3,3,4) cannot be broadcast");
    CHECK_ERR(cg_matmul(a, ad) == NULL, CG_ERR_DTYPE, "dtype mismatch");
    CHECK_ERR(cg_matmul(bl, bl) == NULL, CG_ERR_NOT_IMPLEMENTED, "bool");
    CHECK_ERR(cg_mm(x, a) == NULL, CG_ERR_SHAPE, "[mm] expected 2D and 2D tensors, got shapes (2,2,3) and (2,3)");
    CHECK_ERR(cg_mm(a, b) == NULL, CG_ERR_SHAPE, "[mm] shapes (2,3) and (4,5) cannot be multiplied");
    CHECK_ERR(cg_bmm(a, a) == NULL, CG_ERR_SHAPE, "[bmm] expected 3D and 3D");
    CHECK_ERR(cg_bmm(x, y) == NULL, CG_ERR_SHAPE, "[bmm] batch sizes of shapes (2,2,3) and (3,3,4) differ");
    CHECK_ERR(cg_mv(a, v4) == NULL, CG_ERR_SHAPE, "[mv] shapes (2,3) and (4,)");
    CHECK_ERR(cg_mv(v3, v3) == NULL, CG_ERR_SHAPE, "[mv] expected 2D and 1D");
    CHECK_ERR(cg_dot(v3, v4) == NULL, CG_ERR_SHAPE, "[dot] shapes (3,) and (4,) cannot be multiplied");
    CHECK_ERR(cg_dot(a, v3) == NULL, CG_ERR_SHAPE, "[dot] expected 1D and 1D");
    CHECK_ERR(cg_outer(a, v3) == NULL, CG_ERR_SHAPE, "[outer] expected 1D and 1D");
    cg_tensor *bad_self = tt_rand(CG_DTYPE_F32, 1, SH(4), -1, 1, 1), *sq = tt_rand(CG_DTYPE_F32, 2, SH(3, 2), -1, 1, 1);
    CHECK_ERR(cg_addmm(bad_self, a, sq, 1, 1) == NULL, CG_ERR_SHAPE, "[addmm] self of shape (4,) cannot be broadcast to the product's shape (2,2)");
    CHECK_ERR(cg_baddbmm(bad_self, x, x, 1, 1) == NULL, CG_ERR_SHAPE, "[baddbmm] shapes (2,2,3) and (2,2,3) cannot be multiplied");
    CHECK_ERR(cg_addmm(ia, ia, ia, 1e30, 1) == NULL, CG_ERR_VALUE, "without overflow");
    cg_tensor *i1 = cg_ones(2, SH(2, 2), CG_DTYPE_I64, cg_cpu());
    cg_tensor *trunc_r = cg_addmm(i1, i1, i1, 2.5, 1.5); /* integer inputs: beta 2, alpha 1 (PyTorch truncates) */
    CHECK(trunc_r && tt_get(trunc_r, 0) == 4.0);
    cg_tensor_release(trunc_r);
    cg_tensor_release(i1);
    CHECK_ERR(cg_matmul(NULL, a) == NULL, CG_ERR_VALUE, "NULL");
    cg_tensor *ts[] = {s, a, b, ad, v3, v4, x, y, bl, ia, bad_self, sq};
    for (int i = 0; i < 12; i++) cg_tensor_release(ts[i]);
}

/* ---------------------------------------------------------------- other products */

TEST(linalg_mm_bmm_mv_dot_outer_values) {
    cg_tensor *a = tt_rand(CG_DTYPE_F64, 3, SH(3, 2, 4), -1, 1, 1), *b = tt_rand(CG_DTYPE_F64, 3, SH(3, 4, 5), -1, 1, 2);
    cg_tensor *r = cg_bmm(a, b), *ref = ref_matmul(a, b);
    CHECK(tt_maxdiff(r, ref) < 1e-12);
    cg_tensor *u = tt_rand(CG_DTYPE_F32, 1, SH(3), -1, 1, 3), *w = tt_rand(CG_DTYPE_F32, 1, SH(4), -1, 1, 4);
    cg_tensor *o = cg_outer(u, w);
    CHECK(o && cg_tensor_ndim(o) == 2 && cg_tensor_shape(o)[0] == 3 && cg_tensor_shape(o)[1] == 4);
    for (int i = 0; o && i < 12; i++) CHECK_NEAR(tt_get(o, i), tt_get(u, i / 4) * tt_get(w, i % 4), 1e-6);
    cg_tensor *ts[] = {a, b, r, ref, u, w, o};
    for (int i = 0; i < 7; i++) cg_tensor_release(ts[i]);
}

TEST(linalg_addmm_baddbmm_values) {
    const cg_dtype dts[] = {CG_DTYPE_F64, CG_DTYPE_F32, CG_DTYPE_BF16, CG_DTYPE_I32};
    for (int d = 0; d < 4; d++) {
        cg_dtype dt = dts[d];
        bool fl = cg_dtype_is_floating(dt);
        double alpha = fl ? 0.75 : 3, beta = fl ? -1.5 : 2;
        cg_tensor *self = tt_rand(dt, 1, SH(5), fl ? -1 : 0, fl ? 1 : 4, 1);
        cg_tensor *a = tt_rand(dt, 2, SH(3, 4), fl ? -1 : 0, fl ? 1 : 4, 2), *b = tt_rand(dt, 2, SH(4, 5), fl ? -1 : 0, fl ? 1 : 4, 3);
        cg_tensor *r = cg_addmm(self, a, b, beta, alpha), *p = ref_matmul(a, b);
        for (int64_t i = 0; r && i < 15; i++)
            CHECK_NEAR(tt_get(r, i), beta * tt_get(self, i % 5) + alpha * tt_get(p, i), tol_for(dt, 4) * 4);
        cg_tensor *bs = tt_rand(dt, 3, SH(1, 3, 1), fl ? -1 : 0, fl ? 1 : 4, 4);
        cg_tensor *ba = tt_rand(dt, 3, SH(2, 3, 4), fl ? -1 : 0, fl ? 1 : 4, 5), *bb = tt_rand(dt, 3, SH(2, 4, 5), fl ? -1 : 0, fl ? 1 : 4, 6);
        cg_tensor *br = cg_baddbmm(bs, ba, bb, beta, alpha), *bp = ref_matmul(ba, bb);
        for (int64_t i = 0; br && i < 30; i++)
            CHECK_NEAR(tt_get(br, i), beta * tt_get(bs, (i / 5) % 3) + alpha * tt_get(bp, i), tol_for(dt, 4) * 4);
        cg_tensor *ts[] = {self, a, b, r, p, bs, ba, bb, br, bp};
        for (int i = 0; i < 10; i++) cg_tensor_release(ts[i]);
    }
    /* beta = 0 ignores self, NaNs included */
    cg_tensor *nan = cg_full(2, SH(2, 2), NAN, CG_DTYPE_F32, cg_cpu()), *e = tt_tensor(CG_DTYPE_F32, 2, SH(2, 2), (const double[]){1, 0, 0, 1});
    if (e) {
        cg_tensor *r = cg_addmm(nan, e, e, 0.0, 1.0);
        for (int i = 0; r && i < 4; i++) CHECK_NEAR(tt_get(r, i), i == 0 || i == 3 ? 1.0 : 0.0, 0);
        cg_tensor_release(r);
    }
    cg_tensor_release(nan);
    cg_tensor_release(e);
}

TEST(linalg_meta_shapes) {
    cg_tensor *a = cg_empty(4, SH(2, 1, 3, 4), CG_DTYPE_F32, cg_meta()), *b = cg_empty(3, SH(5, 4, 6), CG_DTYPE_F32, cg_meta());
    cg_tensor *r = cg_matmul(a, b);
    CHECK(r && cg_tensor_ndim(r) == 4 && cg_tensor_shape(r)[1] == 5 && cg_tensor_shape(r)[3] == 6 && !cg_tensor_data(r));
    cg_tensor *c = cg_empty(2, SH(3, 4), CG_DTYPE_F32, cg_meta()), *d = cg_empty(2, SH(4, 6), CG_DTYPE_F32, cg_meta());
    cg_tensor *sf = cg_empty(1, SH(6), CG_DTYPE_F32, cg_meta());
    cg_tensor *am = cg_addmm(sf, c, d, 1, 1);
    CHECK(am && cg_tensor_shape(am)[0] == 3 && cg_tensor_shape(am)[1] == 6);
    cg_tensor *es = cg_einsum("ij,jk->ki", 2, (cg_tensor *[]){c, d});
    CHECK(es && cg_tensor_shape(es)[0] == 6 && cg_tensor_shape(es)[1] == 3);
    CHECK_ERR(cg_matmul(a, c) == NULL, CG_ERR_SHAPE, "cannot be multiplied");
    cg_tensor *ts[] = {a, b, r, c, d, sf, am, es};
    for (int i = 0; i < 8; i++) cg_tensor_release(ts[i]);
}

TEST(linalg_batched_result_independent_of_threads) {
    cg_tensor *a = tt_rand(CG_DTYPE_F32, 3, SH(64, 8, 9), -1, 1, 1), *b = tt_rand(CG_DTYPE_F32, 3, SH(64, 9, 7), -1, 1, 2);
    int nt = cg_get_num_threads();
    cg_set_num_threads(1);
    cg_tensor *r1 = cg_bmm(a, b);
    cg_set_num_threads(4);
    cg_tensor *r2 = cg_bmm(a, b);
    cg_set_num_threads(nt);
    CHECK(tt_maxdiff(r1, r2) == 0);
    cg_tensor *ref = ref_matmul(a, b);
    CHECK(tt_maxdiff(r1, ref) < 1e-5);
    cg_tensor *ts[] = {a, b, r1, r2, ref};
    for (int i = 0; i < 5; i++) cg_tensor_release(ts[i]);
}

/* ---------------------------------------------------------------- gradients */

static cg_tensor *f_matmul(cg_tensor *const *x, void *c) { (void)c; return cg_matmul(x[0], x[1]); }
static cg_tensor *f_mm(cg_tensor *const *x, void *c) { (void)c; return cg_mm(x[0], x[1]); }
static cg_tensor *f_bmm(cg_tensor *const *x, void *c) { (void)c; return cg_bmm(x[0], x[1]); }
static cg_tensor *f_mv(cg_tensor *const *x, void *c) { (void)c; return cg_mv(x[0], x[1]); }
static cg_tensor *f_dot(cg_tensor *const *x, void *c) { (void)c; return cg_dot(x[0], x[1]); }
static cg_tensor *f_outer(cg_tensor *const *x, void *c) { (void)c; return cg_outer(x[0], x[1]); }
static cg_tensor *f_addmm(cg_tensor *const *x, void *c) { (void)c; return cg_addmm(x[0], x[1], x[2], 0.5, -1.25); }
static cg_tensor *f_baddbmm(cg_tensor *const *x, void *c) { (void)c; return cg_baddbmm(x[0], x[1], x[2], -0.75, 1.5); }
static cg_tensor *f_einsum(cg_tensor *const *x, void *c) {
    const char *eq = c;
    int n = 1;
    for (const char *p = eq; *p && *p != '-'; p++) n += *p == ',';
    return cg_einsum(eq, n, x);
}

static cg_tensor *leaf64(int nd, const int64_t *sh, unsigned seed, bool noncontig) {
    cg_tensor *t = tt_rand(CG_DTYPE_F64, nd, sh, -1, 1, seed);
    if (noncontig) {
        cg_tensor *n = tt_noncontig(t);
        cg_tensor_release(t);
        t = n;
    }
    cg_tensor_set_requires_grad(t, true);
    return t;
}

static void grad_both(tt_fn f, void *ctx, int n, cg_tensor *const *in, const char *what) {
    CHECK_MSG(tt_gradcheck(f, ctx, n, in, 1e-6, 1e-7, 1e-5), "gradcheck failed: %s", what);
    CHECK_MSG(tt_gradgradcheck(f, ctx, n, in, 1e-6, 1e-7, 1e-5), "gradgradcheck failed: %s", what);
}

TEST(linalg_matmul_gradients) {
    static const mm_case gc[] = {
        {1, 1, 0, {3}, {3}, {0}},
        {2, 1, 1, {2, 3}, {3}, {2}},
        {1, 2, 1, {3}, {3, 2}, {2}},
        {2, 2, 2, {2, 3}, {3, 2}, {2, 2}},
        {3, 2, 3, {2, 2, 3}, {3, 2}, {2, 2, 2}},
        {3, 1, 2, {2, 2, 3}, {3}, {2, 2}},
        {1, 3, 2, {3}, {2, 3, 2}, {2, 2}},
        {2, 3, 3, {2, 3}, {2, 3, 2}, {2, 2, 2}},
        {4, 3, 4, {2, 1, 2, 3}, {3, 3, 2}, {2, 3, 2, 2}},
    };
    for (int c = 0; c < (int)(sizeof gc / sizeof gc[0]); c++)
        for (int nc = 0; nc < 2; nc++) {
            cg_tensor *in[2] = {leaf64(gc[c].na, gc[c].a, 10u + (unsigned)c, nc), leaf64(gc[c].nb, gc[c].b, 20u + (unsigned)c, nc)};
            char what[64];
            snprintf(what, sizeof what, "matmul case %d noncontig %d", c, nc);
            grad_both(f_matmul, NULL, 2, in, what);
            cg_tensor_release(in[0]);
            cg_tensor_release(in[1]);
        }
    /* transposed operand */
    cg_tensor *a = leaf64(2, SH(3, 2), 1, false), *b = leaf64(2, SH(3, 4), 2, false);
    cg_tensor *at = cg_transpose(a, 0, 1);
    cg_tensor_release(a);
    a = cg_detach(at);
    cg_tensor_set_requires_grad(a, true);
    grad_both(f_mm, NULL, 2, (cg_tensor *[]){a, b}, "mm transposed");
    cg_tensor *ts[] = {a, b, at};
    for (int i = 0; i < 3; i++) cg_tensor_release(ts[i]);
}

TEST(linalg_other_products_gradients) {
    cg_tensor *m1 = leaf64(2, SH(2, 3), 1, false), *m2 = leaf64(2, SH(3, 4), 2, true);
    grad_both(f_mm, NULL, 2, (cg_tensor *[]){m1, m2}, "mm");
    cg_tensor *b1 = leaf64(3, SH(2, 2, 3), 3, true), *b2 = leaf64(3, SH(2, 3, 2), 4, false);
    grad_both(f_bmm, NULL, 2, (cg_tensor *[]){b1, b2}, "bmm");
    cg_tensor *v = leaf64(1, SH(3), 5, true), *w = leaf64(1, SH(3), 6, false), *u = leaf64(1, SH(4), 7, false);
    grad_both(f_mv, NULL, 2, (cg_tensor *[]){m1, v}, "mv");
    grad_both(f_dot, NULL, 2, (cg_tensor *[]){v, w}, "dot");
    grad_both(f_outer, NULL, 2, (cg_tensor *[]){v, u}, "outer");
    cg_tensor *s1 = leaf64(1, SH(4), 8, false), *s2 = leaf64(0, NULL, 9, false), *s3 = leaf64(2, SH(2, 1), 10, false);
    grad_both(f_addmm, NULL, 3, (cg_tensor *[]){s1, m1, m2}, "addmm broadcast row");
    grad_both(f_addmm, NULL, 3, (cg_tensor *[]){s2, m1, m2}, "addmm 0-d self");
    grad_both(f_addmm, NULL, 3, (cg_tensor *[]){s3, m1, m2}, "addmm column self");
    cg_tensor *bs = leaf64(2, SH(2, 2), 11, true);
    grad_both(f_baddbmm, NULL, 3, (cg_tensor *[]){bs, b1, b2}, "baddbmm");
    cg_tensor *y = cg_addmm(s1, m1, m2, 1, 1);
    CHECK(y && strcmp(cg_node_name(cg_tensor_grad_fn(y)), "AddmmBackward0") == 0);
    cg_tensor *ts[] = {m1, m2, b1, b2, v, w, u, s1, s2, s3, bs, y};
    for (int i = 0; i < 12; i++) cg_tensor_release(ts[i]);
}

/* ---------------------------------------------------------------- einsum */

TEST(linalg_einsum_values) {
    cg_tensor *A = tt_rand(CG_DTYPE_F64, 2, SH(3, 4), -1, 1, 1), *B = tt_rand(CG_DTYPE_F64, 2, SH(4, 5), -1, 1, 2);
    cg_tensor *S = tt_rand(CG_DTYPE_F64, 2, SH(4, 4), -1, 1, 3), *v = tt_rand(CG_DTYPE_F64, 1, SH(3), -1, 1, 4);
    cg_tensor *w = tt_rand(CG_DTYPE_F64, 1, SH(5), -1, 1, 5);
    cg_tensor *X = tt_rand(CG_DTYPE_F64, 3, SH(2, 3, 4), -1, 1, 6), *Y = tt_rand(CG_DTYPE_F64, 3, SH(2, 4, 5), -1, 1, 7);
    /* ij,jk->ik and implicit ij,jk */
    cg_tensor *r = cg_einsum("ij,jk->ik", 2, (cg_tensor *[]){A, B}), *ref = ref_matmul(A, B);
    CHECK(tt_maxdiff(r, ref) < 1e-12);
    cg_tensor *ri = cg_einsum("ij , jk", 2, (cg_tensor *[]){A, B});
    CHECK(tt_maxdiff(ri, ref) < 1e-12);
    cg_tensor *rt = cg_einsum("ij,jk->ki", 2, (cg_tensor *[]){A, B});
    for (int i = 0; rt && i < 3; i++)
        for (int k = 0; k < 5; k++) CHECK_NEAR(tt_get(rt, k * 3 + i), tt_get(ref, i * 5 + k), 1e-12);
    /* bij,bjk->bik */
    cg_tensor *rb = cg_einsum("bij,bjk->bik", 2, (cg_tensor *[]){X, Y}), *refb = ref_matmul(X, Y);
    CHECK(tt_maxdiff(rb, refb) < 1e-12);
    /* ii->i, ii (trace), ij-> */
    cg_tensor *dg = cg_einsum("ii->i", 1, &S), *tr = cg_einsum("ii", 1, &S), *all = cg_einsum("ij->", 1, &A);
    double trace = 0, total = 0;
    for (int i = 0; i < 4; i++) {
        CHECK_NEAR(tt_get(dg, i), tt_get(S, i * 5), 0);
        trace += tt_get(S, i * 5);
    }
    for (int i = 0; i < 12; i++) total += tt_get(A, i);
    CHECK(tr && cg_tensor_ndim(tr) == 0);
    CHECK_NEAR(tt_get(tr, 0), trace, 1e-12);
    CHECK(all && cg_tensor_ndim(all) == 0);
    CHECK_NEAR(tt_get(all, 0), total, 1e-12);
    /* i,j->ij ; implicit "ba" is the transpose ; uppercase sorts first */
    cg_tensor *op = cg_einsum("i,j->ij", 2, (cg_tensor *[]){v, w});
    for (int i = 0; op && i < 15; i++) CHECK_NEAR(tt_get(op, i), tt_get(v, i / 5) * tt_get(w, i % 5), 1e-15);
    cg_tensor *tp = cg_einsum("ba", 1, &A);
    CHECK(tp && cg_tensor_shape(tp)[0] == 4 && tt_get(tp, 1) == tt_get(A, 4));
    cg_tensor *up = cg_einsum("aB", 1, &A);
    CHECK(up && cg_tensor_shape(up)[0] == 4);
    /* ...ij,...jk->...ik with broadcast ellipsis, and ellipsis summed when absent from the output */
    cg_tensor *re = cg_einsum("...ij,...jk->...ik", 2, (cg_tensor *[]){X, B}), *refe = ref_matmul(X, B);
    CHECK(tt_maxdiff(re, refe) < 1e-12);
    cg_tensor *es = cg_einsum("...j->j", 1, &X);
    for (int j = 0; es && j < 4; j++) {
        double s = 0;
        for (int i = 0; i < 6; i++) s += tt_get(X, i * 4 + j);
        CHECK_NEAR(tt_get(es, j), s, 1e-12);
    }
    /* three operands: ij,jk,k->i */
    cg_tensor *r3 = cg_einsum("ij,jk,k->i", 3, (cg_tensor *[]){A, B, w});
    for (int i = 0; r3 && i < 3; i++) {
        double s = 0;
        for (int k = 0; k < 5; k++) s += tt_get(ref, i * 5 + k) * tt_get(w, k);
        CHECK_NEAR(tt_get(r3, i), s, 1e-12);
    }
    /* batch label kept in the output: bij,bj->bi (a batched mv) */
    cg_tensor *Z = tt_rand(CG_DTYPE_F64, 2, SH(2, 4), -1, 1, 8);
    cg_tensor *r4 = cg_einsum("bij,bj->bi", 2, (cg_tensor *[]){X, Z});
    for (int b = 0; r4 && b < 2; b++)
        for (int i = 0; i < 3; i++) {
            double s = 0;
            for (int j = 0; j < 4; j++) s += tt_get(X, (b * 3 + i) * 4 + j) * tt_get(Z, b * 4 + j);
            CHECK_NEAR(tt_get(r4, b * 3 + i), s, 1e-12);
        }
    cg_tensor_release(Z);
    cg_tensor_release(r4);
    /* an integer contraction keeps its dtype; a one-operand sum widens to int64, as PyTorch's */
    cg_tensor *I = cg_ones(2, SH(2, 3), CG_DTYPE_I32, cg_cpu());
    cg_tensor *isum = cg_einsum("ij->i", 1, &I), *imm = cg_einsum("ij,kj->ik", 2, (cg_tensor *[]){I, I});
    CHECK(isum && cg_tensor_dtype(isum) == CG_DTYPE_I64 && tt_get(isum, 1) == 3);
    CHECK(imm && cg_tensor_dtype(imm) == CG_DTYPE_I32 && tt_get(imm, 3) == 3);
    cg_tensor *ts[] = {A, B, S, v, w, X, Y, r, ref, ri, rt, rb, refb, dg, tr, all, op, tp, up, re, refe, es, r3, I, isum, imm};
    for (int i = 0; i < 26; i++) cg_tensor_release(ts[i]);
}

TEST(linalg_einsum_errors) {
    cg_tensor *A = tt_rand(CG_DTYPE_F32, 2, SH(3, 4), -1, 1, 1), *B = tt_rand(CG_DTYPE_F32, 2, SH(5, 6), -1, 1, 2);
    CHECK_ERR(cg_einsum("ij,jk", 1, &A) == NULL, CG_ERR_VALUE, "2 operand subscript(s) but 1 operand(s)");
    CHECK_ERR(cg_einsum("i.j", 1, &A) == NULL, CG_ERR_VALUE, "not part of an ellipsis");
    CHECK_ERR(cg_einsum("i$", 1, &A) == NULL, CG_ERR_VALUE, "invalid subscript '$'");
    CHECK_ERR(cg_einsum("ij->ik", 1, &A) == NULL, CG_ERR_VALUE, "output subscript 'k' does not appear");
    CHECK_ERR(cg_einsum("ij->ii", 1, &A) == NULL, CG_ERR_VALUE, "appears more than once");
    CHECK_ERR(cg_einsum("ij-i", 1, &A) == NULL, CG_ERR_VALUE, "'->'");
    CHECK_ERR(cg_einsum("...i...", 1, &A) == NULL, CG_ERR_VALUE, "more than one ellipsis");
    CHECK_ERR(cg_einsum("ijk", 1, &A) == NULL, CG_ERR_SHAPE, "names 3 dimension(s) but the operand has 2");
    CHECK_ERR(cg_einsum("ii", 1, &A) == NULL, CG_ERR_SHAPE, "subscript 'i' is repeated for operand 0");
    CHECK_ERR(cg_einsum("ij,jk", 2, (cg_tensor *[]){A, B}) == NULL, CG_ERR_SHAPE, "subscript 'j' has size 4 for operand 0 and 5");
    CHECK_ERR(cg_einsum("ij", 0, NULL) == NULL, CG_ERR_VALUE, "at least one operand");
    cg_tensor_release(A);
    cg_tensor_release(B);
}

TEST(linalg_einsum_gradients) {
    struct { const char *eq; int n; int nd[3]; int64_t sh[3][4]; } cs[] = {
        {"ij,jk->ik", 2, {2, 2}, {{2, 3}, {3, 2}}},
        {"bij,bjk->bik", 2, {3, 3}, {{2, 2, 3}, {2, 3, 2}}},
        {"ii->i", 1, {2}, {{3, 3}}},
        {"ij->", 1, {2}, {{2, 3}}},
        {"i,j->ij", 2, {1, 1}, {{3}, {2}}},
        {"...ij,...jk->...ik", 2, {3, 2}, {{2, 2, 3}, {3, 2}}},
        {"ij,jk,k->i", 3, {2, 2, 1}, {{2, 3}, {3, 2}, {2}}},
        {"iij->j", 1, {3}, {{2, 2, 3}}},
    };
    for (int c = 0; c < (int)(sizeof cs / sizeof cs[0]); c++) {
        cg_tensor *in[3] = {0};
        for (int i = 0; i < cs[c].n; i++) in[i] = leaf64(cs[c].nd[i], cs[c].sh[i], 30u + (unsigned)(c * 3 + i), i == 1);
        grad_both(f_einsum, (void *)cs[c].eq, cs[c].n, in, cs[c].eq);
        for (int i = 0; i < cs[c].n; i++) cg_tensor_release(in[i]);
    }
}
