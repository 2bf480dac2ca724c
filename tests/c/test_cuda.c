/* test_cuda.c — the CUDA backend (src/backend/cuda). Every device test runs
 * twice: on the mock kernel library (mock_cuda.c: host memory behind faulting
 * pointers, Note [Mock CUDA library]) on every machine, which runs all of
 * cuda_backend.c, and on a real GPU when there is one (tools/gpu_check.sh runs
 * these on a GPU machine), which also checks the kernels: every row of the op
 * table in each of its dtypes on contiguous, broadcast, non-contiguous, 0-d
 * and empty inputs, with the gradient and, in float64, the second derivative;
 * the reductions; the products; softmax; casts between all dtypes; the
 * device's memory statistics and out-of-memory recovery. Without a device:
 * every way onto a cuda device fails with CG_ERR_DEVICE and says why. */
#include "dispatch/dispatch_internal.h"
#include "mock_cuda.h"
#include "ops/elementwise_ops.gen.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

/* a real, usable GPU (the mock is not installed between tests) */
static bool real_gpu(void) { return cg_cuda_device_count() > 0; }

/* CUDA_TEST(name) { body }: the body on the mock, then on a real GPU when there is one */
#define CUDA_TEST(name)                    \
    static void name##_body(void);         \
    TEST(name##_mock) {                    \
        mock_cuda_install();               \
        name##_body();                     \
        mock_cuda_uninstall();             \
    }                                      \
    TEST(name##_gpu) {                     \
        if (real_gpu()) name##_body();     \
    }                                      \
    static void name##_body(void)

/* ---------------------------------------------------------------- no device */

TEST(cuda_unavailable_is_explained) {
    if (real_gpu()) return;
    const char *why = cg_cuda_unavailable_reason();
    CHECK(why != NULL && strlen(why) > 0);
    CHECK(cg_cuda_device_count() == 0);
    CHECK(strcmp(cg_device_name(cg_cuda(0)), "cuda") == 0);
    CHECK(!cg_device_valid(cg_cuda(0)));
    int64_t shape[1] = {3};
    CHECK_ERR(cg_zeros(1, shape, CG_DTYPE_F32, cg_cuda(0)) == NULL, CG_ERR_DEVICE, "cuda:0");
    CHECK_ERR(cg_zeros(1, shape, CG_DTYPE_F32, cg_cuda(0)) == NULL, CG_ERR_DEVICE, why);
    cg_tensor *x = cg_zeros(1, shape, CG_DTYPE_F32, cg_cpu());
    CHECK_ERR(cg_to_device(x, cg_cuda(1)) == NULL, CG_ERR_DEVICE, "cuda:1");
    CHECK_ERR(cg_cuda_synchronize(0) != CG_OK, CG_ERR_DEVICE, why);
    cg_cuda_props p;
    CHECK_ERR(cg_cuda_properties(0, &p) != CG_OK, CG_ERR_DEVICE, why);
    size_t fr, tot;
    CHECK_ERR(cg_cuda_mem_info(0, &fr, &tot) != CG_OK, CG_ERR_DEVICE, why);
    /* no pool: zero statistics, nothing to empty */
    cg_alloc_stats s = cg_allocator_stats(cg_cuda(0));
    CHECK(s.live_bytes == 0 && s.cached_bytes == 0);
    cg_allocator_empty_cache(cg_cuda(0));
    /* the CPU works as before */
    cg_tensor *y = cg_add(x, x);
    CHECK_NN(y);
    cg_tensor_release(y);
    cg_tensor_release(x);
}

/* the DLPack device of a cuda tensor is kDLCUDA with the ordinal, and back only when the device exists */
TEST(cuda_dlpack_without_a_device) {
    cg_device d;
    if (!real_gpu()) CHECK(!cg_device_from_dlpack(2, 0, &d));
}

CUDA_TEST(cuda_dlpack_device_mapping) {
    int32_t type = 0, id = -1;
    cg_device d;
    CHECK(cg_device_to_dlpack(cg_cuda(0), &type, &id) && type == 2 && id == 0);
    CHECK(cg_device_from_dlpack(2, 0, &d) && d.type == CG_DEVICE_CUDA && d.index == 0);
    CHECK(!cg_device_from_dlpack(2, cg_cuda_device_count(), &d));
}

/* ---------------------------------------------------------------- with a device: helpers */

static cg_tensor *to_gpu(cg_tensor *t) { return cg_to_device(t, cg_cuda(0)); }
static cg_tensor *to_cpu(cg_tensor *t) { return cg_to_device(t, cg_cpu()); }

static double tol_rel(cg_dtype dt) {
    switch (dt) {
    case CG_DTYPE_F64: return 1e-12;
    case CG_DTYPE_F32: return 2e-6;
    case CG_DTYPE_F16: return 2e-3;
    case CG_DTYPE_BF16: return 1.6e-2;
    default: return 0;
    }
}

/* whether gpu (a cuda tensor; released) equals cpu within dt's tolerance scaled by `scale`
 * (0 for exact dtypes); prints the worst element otherwise */
static bool same(const char *what, cg_tensor *gpu, const cg_tensor *cpu, double scale) {
    if (!gpu || !cpu) {
        fprintf(stderr, "    %s: %s result missing: %s\n", what, gpu ? "cpu" : "cuda", cg_last_error_message());
        cg_tensor_release(gpu);
        return false;
    }
    cg_tensor *g = to_cpu(gpu);
    cg_tensor_release(gpu);
    if (!g) return false;
    bool ok = cg_tensor_dtype(g) == cg_tensor_dtype(cpu) && cg_tensor_ndim(g) == cg_tensor_ndim(cpu) &&
              !memcmp(cg_tensor_shape(g), cg_tensor_shape(cpu), sizeof(int64_t) * (size_t)cg_tensor_ndim(g));
    double rel = tol_rel(cg_tensor_dtype(cpu)) * scale;
    for (int64_t i = 0; ok && i < cg_tensor_numel(g); i++) {
        double a = tt_get(g, i), b = tt_get(cpu, i);
        if (a == b || (isnan(a) && isnan(b))) continue;
        if (!(fabs(a - b) <= rel * (fabs(b) + 1e-3))) {
            fprintf(stderr, "    %s: element %lld: cuda %.17g, cpu %.17g\n", what, (long long)i, a, b);
            ok = false;
        }
    }
    if (!ok && cg_tensor_numel(g) == cg_tensor_numel(cpu) && cg_tensor_dtype(g) != cg_tensor_dtype(cpu))
        fprintf(stderr, "    %s: dtype %s vs %s\n", what, cg_dtype_name(cg_tensor_dtype(g)),
                cg_dtype_name(cg_tensor_dtype(cpu)));
    cg_tensor_release(g);
    return ok;
}

/* same, keeping gpu */
static bool same_keep(const char *what, cg_tensor *gpu, const cg_tensor *cpu, double scale) {
    if (gpu) cg_tensor_retain(gpu);
    return same(what, gpu, cpu, scale);
}

/* values safe for every row's domain (logs, inverse trigonometry, division, shifts) */
static cg_tensor *input_for(cg_dtype dt, int nd, const int64_t *shape, unsigned seed) {
    if (dt == CG_DTYPE_BOOL) {
        cg_tensor *r = tt_rand(CG_DTYPE_F32, nd, shape, 0, 1, seed), *half = cg_scalar(0.5, CG_DTYPE_F32);
        cg_tensor *b = cg_binary_forward(&cg_op_gt, r, half, NULL, 0);
        cg_tensor_release(r);
        cg_tensor_release(half);
        return b;
    }
    if (cg_dtype_is_floating(dt)) return tt_rand(dt, nd, shape, 0.2, 0.8, seed);
    cg_tensor *r = tt_rand(CG_DTYPE_F64, nd, shape, 1, 6, seed), *i = cg_to_dtype(r, dt); /* 1 .. 5 */
    cg_tensor_release(r);
    return i;
}

/* ---------------------------------------------------------------- every op table row */

typedef enum { L_CONTIG, L_BROADCAST, L_STRIDED, L_SCALAR, L_EMPTY, L_COUNT } layout;
static const char *const k_layout[L_COUNT] = {"contiguous", "broadcast", "strided", "0-d", "empty"};

/* input i of a row for layout l: the CPU tensor and the same values on cuda (strided: a permuted view on each) */
static void make_input(layout l, int i, cg_dtype dt, unsigned seed, cg_tensor **cpu, cg_tensor **gpu) {
    int64_t full[3] = {3, 4, 5}, bc[2][3] = {{3, 1, 5}, {1, 4, 1}}, rev[3] = {5, 4, 3}, empty[2] = {0, 3};
    static const int64_t perm[3] = {2, 1, 0};
    cg_tensor *c = NULL;
    switch (l) {
    case L_CONTIG: c = input_for(dt, 3, full, seed); break;
    case L_BROADCAST: c = input_for(dt, 3, bc[i % 2], seed); break;
    case L_STRIDED: c = input_for(dt, 3, rev, seed); break;
    case L_SCALAR: c = input_for(dt, 0, NULL, seed); break;
    default: c = input_for(dt, 2, empty, seed); break;
    }
    cg_tensor *g = c ? to_gpu(c) : NULL;
    if (l == L_STRIDED && c && g) {
        cg_tensor *cp = cg_permute(c, perm), *gp = cg_permute(g, perm);
        cg_tensor_release(c);
        cg_tensor_release(g);
        c = cp, g = gp;
    }
    *cpu = c, *gpu = g;
}

static const double k_params[CG_EW_MAX_PARAMS] = {0.5, 2.0, 0.25, 3.0};

/* one row, one dtype, one layout: forward; the gradient of <v, y> for differentiable float rows (and the
 * second derivative in float64); returns false on a mismatch */
static bool check_row(const cg_elementwise_op *op, cg_dtype dt, layout l) {
    char what[160];
    snprintf(what, sizeof what, "%s %s %s", op->schema.name, cg_dtype_name(dt), k_layout[l]);
    cg_tensor *c[CG_ITER_MAX_ARGS] = {0}, *g[CG_ITER_MAX_ARGS] = {0};
    bool grad = op->backward && (dt == CG_DTYPE_F32 || dt == CG_DTYPE_F64), ok = true;
    for (int i = 0; i < op->arity; i++) {
        cg_dtype di = (op->bool_inputs >> i) & 1 ? CG_DTYPE_BOOL : dt;
        make_input(l, i, di, 17u * (unsigned)op->id + 3u * (unsigned)i + (unsigned)l, &c[i], &g[i]);
        if (!c[i] || !g[i]) {
            fprintf(stderr, "    %s: making input %d failed: %s\n", what, i, cg_last_error_message());
            ok = false;
        }
        if (ok && grad && cg_dtype_is_floating(di)) {
            cg_tensor_set_requires_grad(c[i], true);
            cg_tensor_set_requires_grad(g[i], true);
        }
    }
    cg_tensor *yc = ok ? cg_elementwise_forward(op, op->arity, c, k_params, CG_EW_MAX_PARAMS) : NULL;
    cg_status stc = yc ? CG_OK : cg_last_error();
    cg_tensor *yg = ok ? cg_elementwise_forward(op, op->arity, g, k_params, CG_EW_MAX_PARAMS) : NULL;
    if (ok && !yc) { /* the CPU refuses these inputs: so must cuda, the same way */
        if (yg || cg_last_error() != stc) {
            fprintf(stderr, "    %s: cpu failed (%d), cuda %s\n", what, (int)stc, yg ? "did not" : "failed otherwise");
            ok = false;
        }
        cg_tensor_release(yg);
        yg = NULL;
    } else if (ok) {
        ok = same_keep(what, yg, yc, 4);
    }
    if (ok && yc && grad && cg_tensor_requires_grad(yc) && cg_tensor_numel(yc) > 0) {
        cg_tensor *v = tt_rand(cg_tensor_dtype(yc), cg_tensor_ndim(yc), cg_tensor_shape(yc), -1, 1, 99);
        cg_tensor *vg = to_gpu(v);
        cg_tensor *rc[CG_ITER_MAX_ARGS] = {0}, *rg[CG_ITER_MAX_ARGS] = {0}, *ic[CG_ITER_MAX_ARGS],
                  *ig[CG_ITER_MAX_ARGS];
        int m = 0;
        for (int i = 0; i < op->arity; i++)
            if (cg_tensor_requires_grad(c[i])) ic[m] = c[i], ig[m++] = g[i];
        bool second = dt == CG_DTYPE_F64, cpu_refused = false;
        cg_status bc = cg_autograd_grad(1, &yc, &v, m, ic, second, second, true, rc);
        if (bc) { /* a derivative the engine lacks (igamma's): cuda must refuse it the same way */
            cpu_refused = true;
            if (cg_autograd_grad(1, &yg, &vg, m, ig, second, second, true, rg) != bc) {
                fprintf(stderr, "    %s: backward refused on cpu (%d) but not the same on cuda\n", what, (int)bc);
                ok = false;
            }
        } else if (cg_autograd_grad(1, &yg, &vg, m, ig, second, second, true, rg)) {
            fprintf(stderr, "    %s: backward failed: %s\n", what, cg_last_error_message());
            ok = false;
        }
        if (cpu_refused) second = false;
        for (int k = 0; ok && !cpu_refused && k < m; k++) {
            if (!rc[k] != !rg[k]) ok = false;
            else if (rc[k]) {
                cg_tensor_retain(rg[k]);
                char w2[200];
                snprintf(w2, sizeof w2, "%s grad %d", what, k);
                ok = same(w2, rg[k], rc[k], 16);
            }
        }
        /* second order: d/d inputs of sum_k <grad_k, w_k> */
        if (ok && second) {
            cg_tensor *sc = NULL, *sg = NULL;
            for (int k = 0; k < m; k++) {
                if (!rc[k] || !cg_tensor_requires_grad(rc[k])) continue;
                cg_tensor *w = tt_rand(CG_DTYPE_F64, cg_tensor_ndim(rc[k]), cg_tensor_shape(rc[k]), -1, 1, 7 + k);
                cg_tensor *wg = to_gpu(w);
                cg_tensor *pc = cg_mul(rc[k], w), *pg = cg_mul(rg[k], wg);
                cg_tensor *tc = cg_sum(pc, 0, NULL, false), *tg = cg_sum(pg, 0, NULL, false);
                cg_tensor *nc = sc ? cg_add(sc, tc) : (cg_tensor_retain(tc), tc);
                cg_tensor *ng = sg ? cg_add(sg, tg) : (cg_tensor_retain(tg), tg);
                cg_tensor *rel[] = {w, wg, pc, pg, tc, tg, sc, sg};
                for (int r = 0; r < 8; r++) cg_tensor_release(rel[r]);
                sc = nc, sg = ng;
            }
            if (sc && sg) {
                cg_tensor *hc[CG_ITER_MAX_ARGS] = {0}, *hg[CG_ITER_MAX_ARGS] = {0};
                if (cg_autograd_grad(1, &sc, NULL, m, ic, false, false, true, hc) ||
                    cg_autograd_grad(1, &sg, NULL, m, ig, false, false, true, hg)) {
                    fprintf(stderr, "    %s: double backward failed: %s\n", what, cg_last_error_message());
                    ok = false;
                }
                for (int k = 0; k < m; k++) {
                    if (ok && hc[k] && hg[k]) {
                        char w2[200];
                        snprintf(w2, sizeof w2, "%s grad-grad %d", what, k);
                        ok = same_keep(w2, hg[k], hc[k], 64);
                    } else if (ok && !hc[k] != !hg[k]) {
                        fprintf(stderr, "    %s: grad-grad %d present on one device only\n", what, k);
                        ok = false;
                    }
                    cg_tensor_release(hc[k]);
                    cg_tensor_release(hg[k]);
                }
            } else if (!sc != !sg) {
                ok = false;
            }
            cg_tensor_release(sc);
            cg_tensor_release(sg);
        }
        for (int k = 0; k < m; k++) {
            cg_tensor_release(rc[k]);
            cg_tensor_release(rg[k]);
        }
        cg_tensor_release(v);
        cg_tensor_release(vg);
    }
    cg_tensor_release(yc);
    cg_tensor_release(yg);
    for (int i = 0; i < op->arity; i++) {
        cg_tensor_release(c[i]);
        cg_tensor_release(g[i]);
    }
    return ok;
}

CUDA_TEST(cuda_every_op_row_matches_cpu) {
    int rows = 0, cases = 0, failed = 0;
    for (int id = 1; id < CG_OP_COUNT; id++) {
        const cg_elementwise_op *op = cg_elementwise_ops[id];
        if (!op) continue;
        rows++;
        for (int dt = 0; dt < CG_DTYPE_COUNT; dt++) {
            if (!(op->dtypes & CG_DTYPE_BIT(dt))) continue;
            for (int l = 0; l < L_COUNT; l++) {
                cases++;
                if (!check_row(op, (cg_dtype)dt, (layout)l)) failed++;
            }
        }
    }
    printf("    cuda op rows: %d rows, %d (row, dtype, layout) cases, %d mismatches\n", rows, cases, failed);
    CHECK_MSG(failed == 0, "%d of %d op-row cases differ between cuda and cpu", failed, cases);
}

/* ---------------------------------------------------------------- reductions */

typedef cg_tensor *(*red_fn)(cg_tensor *x, int nd, const int64_t *dims, bool keepdim);
static cg_tensor *r_var(cg_tensor *x, int nd, const int64_t *d, bool k) { return cg_var(x, nd, d, 1, k); }
static cg_tensor *r_std(cg_tensor *x, int nd, const int64_t *d, bool k) { return cg_std(x, nd, d, 0, k); }
static cg_tensor *r_n1(cg_tensor *x, int nd, const int64_t *d, bool k) { return cg_norm(x, 1, nd, d, k); }
static cg_tensor *r_n2(cg_tensor *x, int nd, const int64_t *d, bool k) { return cg_norm(x, 2, nd, d, k); }
static cg_tensor *r_n3(cg_tensor *x, int nd, const int64_t *d, bool k) { return cg_norm(x, 3, nd, d, k); }
static cg_tensor *r_ninf(cg_tensor *x, int nd, const int64_t *d, bool k) { return cg_norm(x, INFINITY, nd, d, k); }
static cg_tensor *r_cnz(cg_tensor *x, int nd, const int64_t *d, bool k) {
    (void)k;
    return cg_count_nonzero(x, nd, d);
}

CUDA_TEST(cuda_reductions_match_cpu) {
    static const struct {
        const char *name;
        red_fn fn;
        uint32_t dtypes; /* input dtypes */
        bool grad;
    } k_red[] = {
        {"sum", cg_sum, 0x1fffu, true},      {"mean", cg_mean, 0, true},    {"prod", cg_prod, 0x1fffu, true},
        {"amax", cg_amax, 0x1ffeu, true},    {"amin", cg_amin, 0x1ffeu, true}, {"var", r_var, 0, true},
        {"std", r_std, 0, true},             {"logsumexp", cg_logsumexp, 0, true}, {"norm1", r_n1, 0, true},
        {"norm2", r_n2, 0, true},            {"norm3", r_n3, 0, true},     {"norm_inf", r_ninf, 0, true},
        {"all", cg_all, 0x1fffu, false},     {"any", cg_any, 0x1fffu, false}, {"count_nonzero", r_cnz, 0x1fffu, false},
    };
    static const struct {
        int nd;
        int64_t dims[3];
        bool keep;
    } k_dims[] = {{0, {0}, false}, {1, {0}, false}, {1, {1}, true}, {1, {2}, false}, {2, {0, 2}, true}};
    const uint32_t floats = CG_DTYPE_BIT(CG_DTYPE_F16) | CG_DTYPE_BIT(CG_DTYPE_BF16) | CG_DTYPE_BIT(CG_DTYPE_F32) |
                            CG_DTYPE_BIT(CG_DTYPE_F64);
    int failed = 0, cases = 0;
    int64_t rev[3] = {7, 6, 5}, big[1] = {(int64_t)1 << 21};
    static const int64_t perm[3] = {2, 1, 0};
    for (size_t r = 0; r < sizeof k_red / sizeof k_red[0]; r++) {
        uint32_t dts = k_red[r].dtypes ? k_red[r].dtypes : floats;
        for (int dt = 0; dt < CG_DTYPE_COUNT; dt++) {
            if (!(dts & CG_DTYPE_BIT(dt))) continue;
            cg_tensor *c0 = input_for((cg_dtype)dt, 3, rev, 5 + (unsigned)r), *g0 = to_gpu(c0);
            cg_tensor *c = cg_permute(c0, perm), *g = cg_permute(g0, perm); /* (5, 6, 7), not contiguous */
            bool grad = k_red[r].grad && (dt == CG_DTYPE_F32 || dt == CG_DTYPE_F64);
            for (size_t d = 0; d < sizeof k_dims / sizeof k_dims[0]; d++) {
                char what[128];
                snprintf(what, sizeof what, "%s %s dims#%zu", k_red[r].name, cg_dtype_name((cg_dtype)dt), d);
                cases++;
                cg_tensor *xc = c, *xg = g;
                if (grad) {
                    xc = cg_detach(c), xg = cg_detach(g);
                    cg_tensor_set_requires_grad(xc, true);
                    cg_tensor_set_requires_grad(xg, true);
                }
                cg_tensor *yc = k_red[r].fn(xc, k_dims[d].nd, k_dims[d].dims, k_dims[d].keep);
                cg_status sc = yc ? CG_OK : cg_last_error();
                cg_tensor *yg = k_red[r].fn(xg, k_dims[d].nd, k_dims[d].dims, k_dims[d].keep);
                bool ok = !yc ? !yg && cg_last_error() == sc /* a dtype the op refuses: refused alike */
                              : same_keep(what, yg, yc, 64);
                if (ok && grad && yc) {
                    cg_tensor *v = tt_rand(cg_tensor_dtype(yc), cg_tensor_ndim(yc), cg_tensor_shape(yc), -1, 1, 3);
                    cg_tensor *vg = to_gpu(v), *hc = NULL, *hg = NULL;
                    if (cg_autograd_grad(1, &yc, &v, 1, &xc, false, false, false, &hc) ||
                        cg_autograd_grad(1, &yg, &vg, 1, &xg, false, false, false, &hg)) {
                        fprintf(stderr, "    %s: backward failed: %s\n", what, cg_last_error_message());
                        ok = false;
                    } else {
                        char w2[160];
                        snprintf(w2, sizeof w2, "%s grad", what);
                        ok = same_keep(w2, hg, hc, 64);
                    }
                    cg_tensor *rel[] = {v, vg, hc, hg};
                    for (int i = 0; i < 4; i++) cg_tensor_release(rel[i]);
                }
                failed += !ok;
                cg_tensor_release(yc);
                cg_tensor_release(yg);
                if (grad) {
                    cg_tensor_release(xc);
                    cg_tensor_release(xg);
                }
            }
            cg_tensor *rel[] = {c0, g0, c, g};
            for (int i = 0; i < 4; i++) cg_tensor_release(rel[i]);
        }
    }
    /* max / min / argmax along a dim, with ties and NaN: the first index, NaN wins */
    double vals[12] = {1, 3, 3, 2, NAN, 0, 5, 5, 1, -1, -1, -2};
    int64_t s34[2] = {3, 4};
    for (int dt = CG_DTYPE_F32; dt <= CG_DTYPE_F64; dt++) {
        cg_tensor *c = tt_tensor((cg_dtype)dt, 2, s34, vals), *g = to_gpu(c);
        for (int dim = 0; dim < 2; dim++) {
            cg_tensor *vc, *icx, *vg, *igx;
            CHECK_OK(cg_max_dim(c, dim, false, &vc, &icx));
            CHECK_OK(cg_max_dim(g, dim, false, &vg, &igx));
            cases += 2;
            failed += !same("max_dim values", vg, vc, 0);
            failed += !same("max_dim indices", igx, icx, 0);
            cg_tensor_release(vc);
            cg_tensor_release(icx);
            cg_tensor *ac = cg_argmin(c, true, dim, false), *ag = cg_argmin(g, true, dim, false);
            cases++;
            failed += !same("argmin", ag, ac, 0);
            cg_tensor_release(ac);
        }
        cg_tensor *ac = cg_argmax(c, false, 0, false), *ag = cg_argmax(g, false, 0, false);
        cases++;
        failed += !same("argmax (flat)", ag, ac, 0);
        cg_tensor_release(ac);
        cg_tensor_release(c);
        cg_tensor_release(g);
    }
    /* one long run (the block-wide path) and empty reductions */
    for (int dt = CG_DTYPE_F32; dt <= CG_DTYPE_F64; dt++) {
        cg_tensor *c = tt_rand((cg_dtype)dt, 1, big, -1, 1, 11), *g = to_gpu(c);
        red_fn fns[3] = {cg_sum, cg_amax, r_var};
        for (int i = 0; i < 3; i++) {
            cg_tensor *yc = fns[i](c, 0, NULL, false);
            cases++;
            failed += !same("long reduction", fns[i](g, 0, NULL, false), yc, 1e4);
            cg_tensor_release(yc);
        }
        int64_t e[2] = {0, 4};
        cg_tensor *ec = cg_zeros(2, e, (cg_dtype)dt, cg_cpu()), *eg = to_gpu(ec);
        red_fn efns[4] = {cg_sum, cg_prod, cg_mean, r_var};
        for (int i = 0; i < 4; i++) {
            int64_t dim0 = 0;
            cg_tensor *yc = efns[i](ec, 1, &dim0, false);
            cases++;
            failed += !same("empty reduction", efns[i](eg, 1, &dim0, false), yc, 0);
            cg_tensor_release(yc);
        }
        cg_tensor *rel[] = {c, g, ec, eg};
        for (int i = 0; i < 4; i++) cg_tensor_release(rel[i]);
    }
    printf("    cuda reductions: %d cases, %d mismatches\n", cases, failed);
    CHECK_MSG(failed == 0, "%d of %d reduction cases differ between cuda and cpu", failed, cases);
}

/* ---------------------------------------------------------------- products and softmax */

CUDA_TEST(cuda_products_match_cpu) {
    static const cg_dtype k_dt[] = {CG_DTYPE_F32, CG_DTYPE_F64, CG_DTYPE_BF16, CG_DTYPE_F16};
    int failed = 0, cases = 0;
    for (size_t t = 0; t < sizeof k_dt / sizeof k_dt[0]; t++) {
        cg_dtype dt = k_dt[t];
        double scale = dt == CG_DTYPE_F64 || dt == CG_DTYPE_F32 ? 100 : 4;
        int64_t sa[2] = {33, 17}, sb[2] = {17, 45}, sat[2] = {17, 33}, sbt[2] = {45, 17};
        cg_tensor *a = tt_rand(dt, 2, sa, -1, 1, 1), *b = tt_rand(dt, 2, sb, -1, 1, 2);
        cg_tensor *at0 = tt_rand(dt, 2, sat, -1, 1, 3), *bt0 = tt_rand(dt, 2, sbt, -1, 1, 4);
        cg_tensor *at = cg_transpose(at0, 0, 1), *bt = cg_transpose(bt0, 0, 1); /* transposed layouts */
        cg_tensor *ga = to_gpu(a), *gb = to_gpu(b), *gat0 = to_gpu(at0), *gbt0 = to_gpu(bt0);
        cg_tensor *gat = cg_transpose(gat0, 0, 1), *gbt = cg_transpose(gbt0, 0, 1);
        cg_tensor *pairs[4][4] = {{a, b, ga, gb}, {at, b, gat, gb}, {a, bt, ga, gbt}, {at, bt, gat, gbt}};
        for (int p = 0; p < 4; p++) {
            cg_tensor *yc = cg_matmul(pairs[p][0], pairs[p][1]);
            cases++;
            if (!same("matmul", cg_matmul(pairs[p][2], pairs[p][3]), yc, scale)) {
                fprintf(stderr, "    (matmul %s layout %d)\n", cg_dtype_name(dt), p);
                failed++;
            }
            cg_tensor_release(yc);
        }
        /* batched with broadcast, linear with bias, addmm */
        int64_t s3[3] = {4, 9, 17}, w2[2] = {12, 17}, b1[1] = {12}, s4[2] = {9, 12};
        cg_tensor *x3 = tt_rand(dt, 3, s3, -1, 1, 5), *w = tt_rand(dt, 2, w2, -1, 1, 6),
                  *bias = tt_rand(dt, 1, b1, -1, 1, 7), *self = tt_rand(dt, 2, s4, -1, 1, 8);
        cg_tensor *gx3 = to_gpu(x3), *gw = to_gpu(w), *gbias = to_gpu(bias), *gself = to_gpu(self);
        cg_tensor *yc = cg_matmul(x3, b);
        cases++;
        failed += !same("batched matmul", cg_matmul(gx3, gb), yc, scale);
        cg_tensor_release(yc);
        yc = cg_linear(x3, w, bias);
        cases++;
        failed += !same("linear", cg_linear(gx3, gw, gbias), yc, scale);
        cg_tensor_release(yc);
        cg_tensor *x2c = cg_select(x3, 0, 1), *x2g = cg_select(gx3, 0, 1), *wtc = cg_transpose(w, 0, 1),
                  *wtg = cg_transpose(gw, 0, 1);
        yc = cg_addmm(self, x2c, wtc, 0.5, 2.0);
        cases++;
        failed += !same("addmm", cg_addmm(gself, x2g, wtg, 0.5, 2.0), yc, scale);
        cg_tensor_release(yc);
        cg_tensor *rel[] = {a, b, at0, bt0, at, bt, ga, gb, gat0, gbt0, gat, gbt, x3, w, bias, self, gx3, gw,
                            gbias, gself, x2c, x2g, wtc, wtg};
        for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) cg_tensor_release(rel[i]);
    }
    /* the gradient of a linear layer (three products) */
    int64_t sx[2] = {8, 5}, sw[2] = {3, 5};
    cg_tensor *x = tt_rand(CG_DTYPE_F64, 2, sx, -1, 1, 9), *w = tt_rand(CG_DTYPE_F64, 2, sw, -1, 1, 10);
    cg_tensor *gx = to_gpu(x), *gw = to_gpu(w);
    cg_tensor *in_c[2] = {x, w}, *in_g[2] = {gx, gw};
    for (int i = 0; i < 2; i++) {
        cg_tensor_set_requires_grad(in_c[i], true);
        cg_tensor_set_requires_grad(in_g[i], true);
    }
    cg_tensor *yc = cg_linear(x, w, NULL), *yg = cg_linear(gx, gw, NULL);
    cg_tensor *sc = cg_sum(yc, 0, NULL, false), *sg = cg_sum(yg, 0, NULL, false);
    cg_tensor *hc[2] = {0}, *hg[2] = {0};
    CHECK_OK(cg_autograd_grad(1, &sc, NULL, 2, in_c, false, false, false, hc));
    CHECK_OK(cg_autograd_grad(1, &sg, NULL, 2, in_g, false, false, false, hg));
    for (int i = 0; i < 2; i++) {
        cases++;
        failed += !same("linear grad", hg[i], hc[i], 100);
        cg_tensor_release(hc[i]);
    }
    cg_tensor *rel[] = {x, w, gx, gw, yc, yg, sc, sg};
    for (int i = 0; i < 8; i++) cg_tensor_release(rel[i]);
    printf("    cuda products: %d cases, %d mismatches\n", cases, failed);
    CHECK_MSG(failed == 0, "%d of %d product cases differ between cuda and cpu", failed, cases);
}

CUDA_TEST(cuda_softmax_matches_cpu) {
    static const cg_dtype k_dt[] = {CG_DTYPE_F32, CG_DTYPE_F64, CG_DTYPE_BF16, CG_DTYPE_F16};
    int failed = 0, cases = 0;
    int64_t shape[3] = {6, 50, 7};
    for (size_t t = 0; t < sizeof k_dt / sizeof k_dt[0]; t++) {
        for (int log = 0; log < 2; log++) {
            for (int dim = 0; dim < 3; dim++) {
                cg_tensor *c = tt_rand(k_dt[t], 3, shape, -4, 4, 1 + dim), *g = to_gpu(c);
                bool grad = k_dt[t] == CG_DTYPE_F32 || k_dt[t] == CG_DTYPE_F64;
                if (grad) {
                    cg_tensor_set_requires_grad(c, true);
                    cg_tensor_set_requires_grad(g, true);
                }
                cg_tensor *yc = log ? cg_log_softmax(c, dim) : cg_softmax(c, dim);
                cg_tensor *yg = log ? cg_log_softmax(g, dim) : cg_softmax(g, dim);
                cases++;
                bool ok = same_keep(log ? "log_softmax" : "softmax", yg, yc, 16);
                if (ok && grad) {
                    cg_tensor *v = tt_rand(k_dt[t], 3, shape, -1, 1, 4), *vg = to_gpu(v), *hc = NULL, *hg = NULL;
                    CHECK_OK(cg_autograd_grad(1, &yc, &v, 1, &c, false, false, false, &hc));
                    CHECK_OK(cg_autograd_grad(1, &yg, &vg, 1, &g, false, false, false, &hg));
                    cases++;
                    ok = same(log ? "log_softmax grad" : "softmax grad", hg, hc, 64);
                    cg_tensor_release(hc);
                    cg_tensor_release(v);
                    cg_tensor_release(vg);
                }
                failed += !ok;
                cg_tensor *rel[] = {c, g, yc, yg};
                for (int i = 0; i < 4; i++) cg_tensor_release(rel[i]);
            }
        }
    }
    printf("    cuda softmax: %d cases, %d mismatches\n", cases, failed);
    CHECK_MSG(failed == 0, "%d of %d softmax cases differ between cuda and cpu", failed, cases);
}

/* ---------------------------------------------------------------- casts, memory, errors */

CUDA_TEST(cuda_casts_between_every_dtype) {
    double vals[8] = {0, 1, -1, 2.5, -3.75, 300, 70000.5, NAN};
    int64_t s[1] = {8};
    int failed = 0;
    for (int src = 0; src < CG_DTYPE_COUNT; src++) {
        cg_tensor *c0 = tt_tensor(CG_DTYPE_F64, 1, s, vals), *c = cg_to_dtype(c0, (cg_dtype)src), *g = to_gpu(c);
        for (int dst = 0; dst < CG_DTYPE_COUNT; dst++) {
            cg_tensor *yc = cg_to_dtype(c, (cg_dtype)dst);
            char what[64];
            snprintf(what, sizeof what, "cast %s -> %s", cg_dtype_name((cg_dtype)src), cg_dtype_name((cg_dtype)dst));
            failed += !same(what, cg_to_dtype(g, (cg_dtype)dst), yc, 0);
            cg_tensor_release(yc);
        }
        cg_tensor_release(c0);
        cg_tensor_release(c);
        cg_tensor_release(g);
    }
    CHECK_MSG(failed == 0, "%d casts differ between cuda and cpu", failed);
}

CUDA_TEST(cuda_memory_statistics_and_out_of_memory) {
    CHECK_OK(cg_cuda_synchronize(0));
    cg_cuda_props p;
    CHECK_OK(cg_cuda_properties(0, &p));
    CHECK(p.major >= 3 && p.total_memory > 0 && strlen(p.name) > 0);
    size_t fr = 0, tot = 0;
    CHECK_OK(cg_cuda_mem_info(0, &fr, &tot));
    CHECK(tot > 0 && fr <= tot);
    int64_t live0 = cg_allocator_stats(cg_cuda(0)).live_bytes;
    int64_t shape[1] = {1 << 20};
    cg_tensor *t = cg_zeros(1, shape, CG_DTYPE_F32, cg_cuda(0));
    CHECK_NN(t);
    CHECK(cg_allocator_stats(cg_cuda(0)).live_bytes >= live0 + (4 << 20));
    cg_tensor_release(t);
    CHECK(cg_allocator_stats(cg_cuda(0)).live_bytes == live0);
    /* far beyond any GPU: CG_ERR_OOM naming CUDA, after which allocation works again */
    int64_t huge[2] = {(int64_t)1 << 22, (int64_t)1 << 22};
    CHECK_ERR(cg_empty(2, huge, CG_DTYPE_F32, cg_cuda(0)) == NULL, CG_ERR_OOM, "CUDA out of memory");
    t = cg_zeros(1, shape, CG_DTYPE_F32, cg_cuda(0));
    CHECK_NN(t);
    cg_tensor_release(t);
    cg_allocator_empty_cache(cg_cuda(0));
    CHECK(cg_allocator_stats(cg_cuda(0)).cached_bytes == 0);
    /* a cross-device op is refused, never copied */
    cg_tensor *a = cg_zeros(1, shape, CG_DTYPE_F32, cg_cpu()), *b = cg_zeros(1, shape, CG_DTYPE_F32, cg_cuda(0));
    CHECK_ERR(cg_add(a, b) == NULL, CG_ERR_DEVICE, "cuda");
    cg_tensor_release(a);
    cg_tensor_release(b);
}

/* ---------------------------------------------------------------- the engine side, on the mock */

/* a kernel failure found after the op returned is reported by the next read of the device, naming it */
TEST(cuda_asynchronous_errors_surface_at_the_next_sync) {
    mock_cuda_install();
    int64_t shape[1] = {4};
    cg_tensor *x = cg_full(1, shape, 2.0, CG_DTYPE_F32, cg_cuda(0));
    CHECK_NN(x);
    mock_cuda_plant_error(MOCK_DEVICE_ASSERT);
    cg_tensor *h = cg_to_device(x, cg_cpu());
    CHECK_ERR(h == NULL, CG_ERR_RUNTIME, "device-side assert triggered");
    h = cg_to_device(x, cg_cpu()); /* reported once: the next read works */
    CHECK(h && tt_get(h, 3) == 2.0);
    mock_cuda_plant_error(MOCK_DEVICE_ASSERT);
    CHECK_ERR(cg_cuda_synchronize(0) != CG_OK, CG_ERR_RUNTIME, "synchronize");
    CHECK_OK(cg_cuda_synchronize(0));
    /* the engine cannot address cuda memory */
    CHECK_ERR(cg_tensor_data(x) == NULL, CG_ERR_DEVICE, "cuda");
    cg_tensor_release(h);
    cg_tensor_release(x);
    mock_cuda_uninstall();
}

/* each device has its own caching pool over the library's allocator: a freed block is reused without a
 * new device allocation, empty_cache gives the cache back, and the devices do not mix */
TEST(cuda_pools_cache_per_device) {
    mock_cuda_install();
    int64_t shape[1] = {1000};
    cg_tensor *a = cg_zeros(1, shape, CG_DTYPE_F32, cg_cuda(0));
    CHECK_NN(a);
    cg_tensor_release(a);
    int64_t mallocs = mock_cuda_get_counts().mallocs;
    a = cg_zeros(1, shape, CG_DTYPE_F32, cg_cuda(0));
    CHECK(mock_cuda_get_counts().mallocs == mallocs);
    CHECK(cg_allocator_stats(cg_cuda(0)).cache_hits >= 1);
    cg_tensor *b = cg_zeros(1, shape, CG_DTYPE_F32, cg_cuda(1));
    CHECK_NN(b);
    CHECK(cg_allocator_stats(cg_cuda(1)).live_bytes >= 4000);
    CHECK_ERR(cg_add(a, b) == NULL, CG_ERR_DEVICE, "cuda");
    cg_tensor *b0 = cg_to_device(b, cg_cuda(0)); /* between devices: staged through the host */
    CHECK_NN(b0);
    cg_tensor *s = b0 ? cg_add(a, b0) : NULL;
    CHECK(s && cg_tensor_device(s).index == 0);
    cg_tensor *rel[] = {a, b, b0, s};
    for (int i = 0; i < 4; i++) cg_tensor_release(rel[i]);
    size_t used = mock_cuda_memory_used();
    CHECK(used > 0); /* cached */
    cg_allocator_empty_cache(cg_cuda(0));
    cg_allocator_empty_cache(cg_cuda(1));
    CHECK(mock_cuda_memory_used() == 0);
    /* out of memory: the cache is emptied and the allocation tried once more before it fails */
    a = cg_zeros(1, shape, CG_DTYPE_F32, cg_cuda(0));
    cg_tensor_release(a); /* one cached block */
    mock_cuda_set_memory_limit(mock_cuda_memory_used() + 4096);
    int64_t big[1] = {2000};
    cg_tensor *c = cg_zeros(1, big, CG_DTYPE_F32, cg_cuda(0)); /* fits only once the cache is given back */
    CHECK_NN(c);
    cg_tensor_release(c);
    mock_cuda_uninstall();
}

/* ---------------------------------------------------------------- advanced indexing (index.cu) */

/* x[i], x[:, j], x[i, j] (broadcast), a transposed x, bool masks; index_put_ with and without
 * accumulate (repeated indices add), the gradient of x[i] (an accumulating put) and an empty index,
 * in every dtype the CPU accumulates: all equal the CPU's */
CUDA_TEST(cuda_advanced_indexing_matches_cpu) {
    int failed = 0;
    const cg_dtype dts[] = {CG_DTYPE_F32, CG_DTYPE_F64, CG_DTYPE_F16, CG_DTYPE_BF16, CG_DTYPE_I64,
                            CG_DTYPE_I32, CG_DTYPE_I16, CG_DTYPE_I8,  CG_DTYPE_U8,   CG_DTYPE_BOOL};
    int64_t sx[2] = {5, 4}, si[1] = {6}, sj[2] = {2, 1}, s0[1] = {0};
    double iv[6] = {3, 0, 2, 2, -1, 0}, jv[2] = {3, 1};
    cg_tensor *i = tt_tensor(CG_DTYPE_I64, 1, si, iv), *j = tt_tensor(CG_DTYPE_I64, 2, sj, jv);
    cg_tensor *e = cg_zeros(1, s0, CG_DTYPE_I64, cg_cpu());
    cg_tensor *ig = to_gpu(i), *jg = to_gpu(j), *eg = to_gpu(e);
    for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++) {
        cg_dtype dt = dts[k];
        char what[64];
        cg_tensor *x = input_for(dt, 2, sx, 40 + (unsigned)k), *xg = to_gpu(x);
        cg_tensor *xt = cg_transpose(x, 0, 1), *xtg = cg_transpose(xg, 0, 1);
        struct { const char *name; int n; cg_tensor *cpu[2], *gpu[2]; cg_tensor *src, *srcg; } cases[] = {
            {"x[i]", 1, {i, NULL}, {ig, NULL}, x, xg},
            {"x[:, j]", 2, {NULL, j}, {NULL, jg}, x, xg},
            {"x[j, i] (broadcast)", 2, {j, i}, {jg, ig}, x, xg},
            {"x.T[j]", 1, {j, NULL}, {jg, NULL}, xt, xtg},
            {"x[empty]", 1, {e, NULL}, {eg, NULL}, x, xg},
        };
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            snprintf(what, sizeof what, "%s %s", cases[c].name, cg_dtype_name(dt));
            cg_tensor *want = cg_index(cases[c].src, cases[c].n, cases[c].cpu);
            failed += !same(what, cg_index(cases[c].srcg, cases[c].n, cases[c].gpu), want, 0);
            /* a put of those values back, then an accumulating one (i repeats 2 and 0) */
            for (int acc = 0; acc < 2; acc++) {
                if (!want) break;
                cg_tensor *wantg = to_gpu(want);
                snprintf(what, sizeof what, "%s = v (acc %d) %s", cases[c].name, acc, cg_dtype_name(dt));
                cg_tensor *pc = cg_index_put(cases[c].src, cases[c].n, cases[c].cpu, want, acc);
                failed += !same(what, cg_index_put(cases[c].srcg, cases[c].n, cases[c].gpu, wantg, acc), pc,
                                acc ? 4 : 0);
                cg_tensor_release(pc);
                cg_tensor_release(wantg);
            }
            cg_tensor_release(want);
        }
        /* a bool mask */
        cg_tensor *mask = input_for(CG_DTYPE_BOOL, 2, sx, 60 + (unsigned)k), *maskg = to_gpu(mask);
        snprintf(what, sizeof what, "x[mask] %s", cg_dtype_name(dt));
        cg_tensor *mc = cg_index(x, 1, &mask);
        failed += !same(what, cg_index(xg, 1, &maskg), mc, 0);
        cg_tensor *rel[] = {x, xg, xt, xtg, mask, maskg, mc};
        for (size_t r = 0; r < sizeof rel / sizeof rel[0]; r++) cg_tensor_release(rel[r]);
    }
    /* the gradient of x[i] (repeated rows add) */
    cg_tensor *x = tt_rand(CG_DTYPE_F32, 2, sx, -1, 1, 77), *xg = to_gpu(x);
    cg_tensor_set_requires_grad(x, true);
    cg_tensor_set_requires_grad(xg, true);
    cg_tensor *leaf[2] = {x, xg}, *grad[2] = {NULL, NULL};
    for (int d = 0; d < 2; d++) {
        cg_tensor *idx[1] = {d ? ig : i};
        cg_tensor *y = cg_index(leaf[d], 1, idx), *sq = y ? cg_mul(y, y) : NULL, *l = sq ? cg_sum(sq, 0, NULL, false) : NULL;
        if (!l || cg_autograd_grad(1, &l, NULL, 1, &leaf[d], false, false, false, &grad[d]))
            fprintf(stderr, "    index backward on %s: %s\n", d ? "cuda" : "cpu", cg_last_error_message());
        cg_tensor *r[] = {y, sq, l};
        for (int q = 0; q < 3; q++) cg_tensor_release(r[q]);
    }
    failed += !same("d x[i] / dx", grad[1], grad[0], 4);
    cg_tensor *rel[] = {x, xg, grad[0], i, j, e, ig, jg, eg};
    for (size_t r = 0; r < sizeof rel / sizeof rel[0]; r++) cg_tensor_release(rel[r]);
    CHECK_MSG(failed == 0, "%d indexing checks differ between cuda and cpu", failed);
}

/* indexing runs on the device entries, not through host staging */
TEST(cuda_indexing_runs_on_the_device_entries) {
    mock_cuda_install();
    int64_t si[1] = {2};
    double iv[2] = {3, 1};
    cg_tensor *x = cg_arange(0, 4, 1, CG_DTYPE_F32, cg_cuda(0)), *i = tt_tensor(CG_DTYPE_I64, 1, si, iv);
    cg_tensor *ig = to_gpu(i);
    int64_t before = mock_cuda_get_counts().indexing;
    cg_tensor *y = cg_index(x, 1, &ig);
    CHECK_NN(y);
    CHECK(mock_cuda_get_counts().indexing == before + 1);
    CHECK_OK(cg_index_put_(x, 1, &ig, y, true));
    CHECK(mock_cuda_get_counts().indexing == before + 2);
    CHECK(tt_get(y, 0) == 3 && tt_get(y, 1) == 1 && tt_get(x, 3) == 6 && tt_get(x, 1) == 2);
    int64_t sw[2] = {4, 3};
    cg_tensor *a = cg_arange(0, 12, 1, CG_DTYPE_F32, cg_cuda(0)), *w = a ? cg_reshape(a, 2, sw) : NULL;
    cg_tensor *e = w ? cg_embedding(w, ig, -1) : NULL; /* rows 3 and 1 */
    CHECK_NN(e);
    CHECK(mock_cuda_get_counts().indexing == before + 3 && tt_get(e, 0) == 9 && tt_get(e, 5) == 5);
    cg_tensor *rel[] = {x, i, ig, y, a, w, e};
    for (int k = 0; k < 7; k++) cg_tensor_release(rel[k]);
    mock_cuda_uninstall();
}

/* ---------------------------------------------------------------- random numbers (random.cu) */

/* a seeded dropout on cuda keeps the CPU's elements with the CPU's scale, in each float dtype and for odd
 * sizes (the last counter's second word unused), and the generator moves on alike */
CUDA_TEST(cuda_seeded_dropout_equals_cpu) {
    int failed = 0;
    const cg_dtype dts[] = {CG_DTYPE_F32, CG_DTYPE_F64, CG_DTYPE_F16, CG_DTYPE_BF16};
    int64_t sh[2] = {7, 9};
    for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++) {
        cg_tensor *x = tt_rand(dts[k], 2, sh, 0.5, 1.5, 70 + (unsigned)k), *xg = to_gpu(x);
        for (int q = 0; q < 2; q++) {
            double p = q ? 0.3 : 0.5;
            cg_manual_seed(1234 + (uint64_t)k);
            cg_tensor *c1 = cg_dropout(x, p, true), *c2 = cg_dropout(x, p, true);
            cg_manual_seed(1234 + (uint64_t)k);
            cg_tensor *g1 = cg_dropout(xg, p, true), *g2 = cg_dropout(xg, p, true);
            char what[64];
            snprintf(what, sizeof what, "dropout p=%g %s", p, cg_dtype_name(dts[k]));
            failed += !same(what, g1, c1, 0);
            failed += !same(what, g2, c2, 0); /* the second draw: the counters moved on alike */
            cg_tensor_release(c1), cg_tensor_release(c2);
        }
        cg_tensor_release(x), cg_tensor_release(xg);
    }
    CHECK_MSG(failed == 0, "%d dropout checks differ between cuda and cpu", failed);
}

TEST(cuda_dropout_runs_on_the_device_entry) {
    mock_cuda_install();
    int64_t sh[1] = {9};
    cg_tensor *x = cg_ones(1, sh, CG_DTYPE_F32, cg_cuda(0));
    int64_t before = mock_cuda_get_counts().random;
    cg_tensor *y = cg_dropout(x, 0.5, true);
    CHECK_NN(y);
    CHECK(mock_cuda_get_counts().random == before + 1);
    cg_tensor_release(x), cg_tensor_release(y);
    mock_cuda_uninstall();
}

/* ---------------------------------------------------------------- optimizer steps (optim.cu) */

/* three steps of SGD (momentum, dampening, Nesterov, weight decay, maximize) and Adam / AdamW (amsgrad,
 * maximize) on cuda equal the CPU's in every float dtype; Adagrad (staged) too */
CUDA_TEST(cuda_optimizer_steps_match_cpu) {
    int failed = 0;
    const cg_dtype dts[] = {CG_DTYPE_F32, CG_DTYPE_F64, CG_DTYPE_F16, CG_DTYPE_BF16};
    int64_t sh[2] = {7, 9};
    const cg_sgd_options sgds[] = {{.lr = 0.1},
                                   {.lr = 0.05, .momentum = 0.9, .dampening = 0.1, .weight_decay = 0.01},
                                   {.lr = 0.05, .momentum = 0.8, .nesterov = true, .maximize = true}};
    const cg_adam_options adams[] = {{.lr = 1e-2, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8},
                                     {.lr = 1e-2, .beta1 = 0.8, .beta2 = 0.99, .eps = 1e-6, .weight_decay = 0.1,
                                      .decoupled_weight_decay = true, .amsgrad = true},
                                     {.lr = 1e-3, .beta1 = 0.3, .beta2 = 0.9, .eps = 1e-8, .weight_decay = 0.05,
                                      .maximize = true, .amsgrad = true}};
    for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++) {
        cg_dtype dt = dts[k];
        double sc = dt == CG_DTYPE_F32 || dt == CG_DTYPE_F64 ? 16 : 2;
        char what[96];
        for (int which = 0; which < 7; which++) {
            cg_tensor *p[2], *g[2], *st[2][3] = {{0}}, *steps[2] = {0};
            for (int d = 0; d < 2; d++) {
                cg_tensor *p0 = tt_rand(dt, 2, sh, -1, 1, 90 + (unsigned)which), *g0 = tt_rand(dt, 2, sh, -1, 1, 91);
                p[d] = d ? to_gpu(p0) : p0, g[d] = d ? to_gpu(g0) : g0;
                if (d) cg_tensor_release(p0), cg_tensor_release(g0);
                cg_device dv = d ? cg_cuda(0) : cg_cpu();
                for (int q = 0; q < 3; q++) st[d][q] = which < 3 ? NULL : cg_zeros(2, sh, dt, dv);
                steps[d] = cg_zeros(0, NULL, CG_DTYPE_F32, cg_cpu());
            }
            for (int step = 0; step < 3; step++)
                for (int d = 0; d < 2; d++) {
                    cg_status r;
                    if (which < 3) r = cg_sgd_step(1, &p[d], &g[d], &st[d][0], &sgds[which]);
                    else if (which < 6)
                        r = cg_adam_step(1, &p[d], &g[d], &st[d][0], &st[d][1], &st[d][2], &steps[d], &adams[which - 3]);
                    else {
                        cg_adagrad_options ao = {.lr = 0.1, .lr_decay = 0.01, .eps = 1e-10};
                        r = cg_adagrad_step(1, &p[d], &g[d], &st[d][0], &steps[d], &ao);
                    }
                    if (r) fprintf(stderr, "    optimizer %d on %s: %s\n", which, d ? "cuda" : "cpu", cg_last_error_message());
                    failed += r != CG_OK;
                }
            snprintf(what, sizeof what, "%s %d %s parameter", which < 3 ? "sgd" : which < 6 ? "adam" : "adagrad", which,
                     cg_dtype_name(dt));
            failed += !same_keep(what, p[1], p[0], sc);
            for (int q = 0; q < 3; q++)
                if (st[0][q]) {
                    snprintf(what, sizeof what, "optimizer %d %s state %d", which, cg_dtype_name(dt), q);
                    failed += !same_keep(what, st[1][q], st[0][q], sc);
                }
            for (int d = 0; d < 2; d++) {
                cg_tensor_release(p[d]), cg_tensor_release(g[d]), cg_tensor_release(steps[d]);
                for (int q = 0; q < 3; q++) cg_tensor_release(st[d][q]);
            }
        }
    }
    CHECK_MSG(failed == 0, "%d optimizer checks differ between cuda and cpu", failed);
}

/* SGD and Adam run on the device entry, Adagrad is staged */
TEST(cuda_sgd_and_adam_run_on_the_device_entry) {
    mock_cuda_install();
    int64_t sh[1] = {5};
    cg_tensor *p = cg_ones(1, sh, CG_DTYPE_F32, cg_cuda(0)), *g = cg_ones(1, sh, CG_DTYPE_F32, cg_cuda(0));
    cg_tensor *buf = NULL, *s = cg_zeros(1, sh, CG_DTYPE_F32, cg_cuda(0));
    cg_sgd_options so = {.lr = 0.5, .momentum = 0.9};
    int64_t before = mock_cuda_get_counts().optim;
    CHECK_OK(cg_sgd_step(1, &p, &g, &buf, &so));
    CHECK(mock_cuda_get_counts().optim == before + 1 && tt_get(p, 0) == 0.5);
    cg_tensor *step = cg_zeros(0, NULL, CG_DTYPE_F32, cg_cpu());
    cg_adagrad_options ao = {.lr = 0.1, .eps = 1e-10};
    CHECK_OK(cg_adagrad_step(1, &p, &g, &s, &step, &ao));
    CHECK(mock_cuda_get_counts().optim == before + 1);
    cg_tensor *rel[] = {p, g, buf, s, step};
    for (int k = 0; k < 5; k++) cg_tensor_release(rel[k]);
    mock_cuda_uninstall();
}

/* ---------------------------------------------------------------- staged entries (Note [Staged entries]) */

/* a small CNN on cuda, forward and backward, equals the CPU's; the seeded RNG on cuda draws the CPU's values
 * bit for bit; the staged entries (conv, pool, norms, losses, gather / scatter, sort, scans,
 * dropout, one_hot, tril, arange, optimizer steps) agree with the CPU */
CUDA_TEST(cuda_staged_entries_match_cpu) {
    int failed = 0;
    cg_device cu = cg_cuda(0);
    int64_t sx[4] = {2, 3, 8, 8}, sw[4] = {4, 3, 3, 3}, sb[1] = {4}, sl[2] = {10, 36};
    cg_manual_seed(7);
    cg_tensor *x = cg_randn(4, sx, CG_DTYPE_F32, cg_cpu());
    cg_manual_seed(7);
    cg_tensor *xg = cg_randn(4, sx, CG_DTYPE_F32, cu);
    failed += !same_keep("randn (seeded)", xg, x, 0);
    cg_tensor *w = tt_rand(CG_DTYPE_F32, 4, sw, -0.5, 0.5, 1), *b = tt_rand(CG_DTYPE_F32, 1, sb, -0.5, 0.5, 2);
    cg_tensor *lw = tt_rand(CG_DTYPE_F32, 2, sl, -0.5, 0.5, 3);
    double tv[2] = {3, 7};
    int64_t s2[1] = {2};
    cg_tensor *tgt = tt_tensor(CG_DTYPE_I64, 1, s2, tv);
    cg_tensor *wg = to_gpu(w), *bg = to_gpu(b), *lwg = to_gpu(lw), *tgtg = to_gpu(tgt);
    cg_tensor *leaves[2][3] = {{w, b, lw}, {wg, bg, lwg}};
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < 3; i++) cg_tensor_set_requires_grad(leaves[d][i], true);
    cg_tensor *loss[2] = {0}, *grads[2][3] = {{0}};
    for (int d = 0; d < 2; d++) {
        cg_tensor *in = d ? xg : x, *t = d ? tgtg : tgt;
        int64_t st1[2] = {1, 1}, pad[2] = {1, 1}, dil[2] = {1, 1}, k2[2] = {2, 2}, p0[2] = {0, 0};
        cg_tensor *y = cg_conv2d(in, leaves[d][0], leaves[d][1], st1, pad, dil, 1);
        cg_tensor *r = y ? cg_leaky_relu(y, 0.01) : NULL, *pooled = NULL;
        if (r) cg_max_pool2d(r, k2, k2, p0, dil, false, &pooled, NULL);
        int64_t nshape[1] = {4};
        cg_tensor *ln = pooled ? cg_layer_norm(pooled, 1, nshape, NULL, NULL, 1e-5) : NULL;
        cg_tensor *fl = ln ? cg_flatten(ln, 1, -1) : NULL;
        int64_t rs[2] = {2, 64};
        cg_tensor *fr = fl ? cg_reshape(fl, 2, rs) : NULL;
        cg_tensor *sel = fr ? cg_narrow(fr, 1, 0, 36) : NULL; /* the first 36 features */
        cg_tensor *logits = sel ? cg_linear(sel, leaves[d][2], NULL) : NULL;
        loss[d] = logits ? cg_cross_entropy(logits, t, NULL, -100, 0.0, CG_REDUCTION_MEAN) : NULL;
        if (!loss[d]) fprintf(stderr, "    cnn on %s failed: %s\n", d ? "cuda" : "cpu", cg_last_error_message());
        else if (cg_autograd_grad(1, &loss[d], NULL, 3, leaves[d], false, false, false, grads[d]))
            fprintf(stderr, "    cnn backward on %s failed: %s\n", d ? "cuda" : "cpu", cg_last_error_message());
        cg_tensor *rel[] = {y, r, pooled, ln, fl, fr, sel, logits};
        for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) cg_tensor_release(rel[i]);
    }
    failed += !same_keep("cnn loss", loss[1], loss[0], 16);
    for (int i = 0; i < 3; i++) failed += !same_keep("cnn grad", grads[1][i], grads[0][i], 64);
    /* dropout with the same seed keeps the same elements */
    cg_manual_seed(11);
    cg_tensor *dc = cg_dropout(x, 0.5, true);
    cg_manual_seed(11);
    failed += !same("dropout (seeded)", cg_dropout(xg, 0.5, true), dc, 0);
    /* embedding, one_hot, gather / scatter_add, sort, cumsum, tril, batch norm */
    int64_t se[2] = {6, 5}, si[1] = {4};
    double iv[4] = {5, 0, 2, 2};
    cg_tensor *emb = tt_rand(CG_DTYPE_F32, 2, se, -1, 1, 4), *ids = tt_tensor(CG_DTYPE_I64, 1, si, iv);
    cg_tensor *embg = to_gpu(emb), *idsg = to_gpu(ids);
    cg_tensor *ec = cg_embedding(emb, ids, -1);
    failed += !same("embedding", cg_embedding(embg, idsg, -1), ec, 0);
    cg_tensor *oc = cg_one_hot(ids, 6);
    failed += !same("one_hot", cg_one_hot(idsg, 6), oc, 0);
    int64_t sgi[2] = {6, 2};
    double giv[12] = {0, 4, 1, 3, 2, 2, 3, 1, 4, 0, 0, 0};
    cg_tensor *gi = tt_tensor(CG_DTYPE_I64, 2, sgi, giv), *gig = to_gpu(gi);
    cg_tensor *gc = cg_gather(emb, 1, gi);
    failed += !same("gather", cg_gather(embg, 1, gig), gc, 0);
    cg_tensor *sc = cg_scatter_add(emb, 1, gi, gc), *gcg = to_gpu(gc);
    failed += !same("scatter_add", cg_scatter_add(embg, 1, gig, gcg), sc, 4);
    cg_tensor *sv, *si_, *svg, *sig;
    CHECK_OK(cg_sort(emb, 1, true, true, &sv, &si_));
    CHECK_OK(cg_sort(embg, 1, true, true, &svg, &sig));
    failed += !same("sort values", svg, sv, 0);
    failed += !same("sort indices", sig, si_, 0);
    cg_tensor *cs = cg_cumsum(emb, 0);
    failed += !same("cumsum", cg_cumsum(embg, 0), cs, 4);
    cg_tensor *tr = cg_tril(emb, 1);
    failed += !same("tril", cg_tril(embg, 1), tr, 0);
    cg_tensor *bn = cg_batch_norm(x, NULL, NULL, NULL, NULL, true, 0.1, 1e-5);
    failed += !same("batch_norm", cg_batch_norm(xg, NULL, NULL, NULL, NULL, true, 0.1, 1e-5), bn, 16);
    /* Adam: two steps on cuda (the step counts on cuda too) equal the CPU's */
    cg_tensor *p[2], *gr[2], *m[2], *v[2], *stp[2];
    for (int d = 0; d < 2; d++) {
        cg_device dv = d ? cu : cg_cpu();
        p[d] = d ? to_gpu(emb) : cg_contiguous(emb);
        gr[d] = d ? to_gpu(gc) : cg_contiguous(gc);
        m[d] = cg_zeros(2, se, CG_DTYPE_F32, dv), v[d] = cg_zeros(2, se, CG_DTYPE_F32, dv);
        stp[d] = cg_zeros(0, NULL, CG_DTYPE_F32, cg_cpu()); /* a cpu step count, as PyTorch keeps it */
    }
    cg_tensor_release(gr[0]);
    cg_tensor_release(gr[1]);
    gr[0] = tt_rand(CG_DTYPE_F32, 2, se, -1, 1, 9), gr[1] = to_gpu(gr[0]);
    cg_adam_options ao = {.lr = 1e-2, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8};
    for (int k = 0; k < 2; k++)
        for (int d = 0; d < 2; d++) CHECK_OK(cg_adam_step(1, &p[d], &gr[d], &m[d], &v[d], NULL, &stp[d], &ao));
    failed += !same_keep("adam parameter", p[1], p[0], 16);
    CHECK(tt_get(stp[1], 0) == 2 && tt_get(stp[0], 0) == 2);
    cg_tensor *rel[] = {x, xg, w, b, lw, tgt, wg, bg, lwg, tgtg, loss[0], loss[1], dc, emb, ids, embg, idsg, ec, oc, gi,
                        gig, gc, sc, gcg, sv, si_, cs, tr, bn};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) cg_tensor_release(rel[i]);
    for (int d = 0; d < 2; d++) {
        for (int i = 0; i < 3; i++) cg_tensor_release(grads[d][i]);
        cg_tensor *r2[] = {p[d], gr[d], m[d], v[d], stp[d]};
        for (int i = 0; i < 5; i++) cg_tensor_release(r2[i]);
    }
    CHECK_MSG(failed == 0, "%d staged-entry checks differ between cuda and cpu", failed);
}
