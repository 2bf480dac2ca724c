/* opcheck.c — the elementwise op checker (see opcheck.h). */
#include "opcheck.h"

#include <string.h>

typedef struct shape_set {
    int ndim[4];
    int64_t shape[4][3];
} shape_set;

/* argument shapes per layout kind; arity-independent lists truncated by arity */
static const shape_set k_same = {{2, 2, 2, 2}, {{3, 4}, {3, 4}, {3, 4}, {3, 4}}};
static const shape_set k_bcast = {{2, 2, 1, 2}, {{3, 1}, {1, 4}, {4}, {3, 4}}};
static const shape_set k_scalar = {{0, 1, 0, 1}, {{0}, {3}, {0}, {3}}};
static const shape_set k_empty = {{2, 1, 2, 1}, {{0, 3}, {3}, {0, 3}, {3}}};
static const shape_set k_rank3 = {{3, 1, 2, 3}, {{2, 3, 4}, {4}, {3, 4}, {2, 1, 4}}};

static void make_inputs(const tt_ew_case *c, const shape_set *s, cg_dtype dt, bool noncontig, unsigned seed,
                        cg_tensor **in) {
    for (int i = 0; i < c->arity; i++) {
        cg_dtype d = (c->bool_args & (1u << i)) ? CG_DTYPE_BOOL : dt;
        double lo = c->lo[i], hi = c->hi[i];
        if (lo == 0 && hi == 0) lo = -2, hi = 2;
        int64_t n = 1;
        for (int k = 0; k < s->ndim[i]; k++) n *= s->shape[i][k];
        double v[64];
        uint64_t st = (seed + 17u * (unsigned)i) * 6364136223846793005ull + 1442695040888963407ull;
        for (int64_t k = 0; k < n; k++) {
            st = st * 6364136223846793005ull + 1442695040888963407ull;
            v[k] = lo + (hi - lo) * (double)(st >> 11) / 9007199254740992.0;
            if (d == CG_DTYPE_BOOL) v[k] = v[k] > (lo + hi) / 2;
            else if (!cg_dtype_is_floating(d)) v[k] = round(v[k]);
        }
        cg_tensor *t = tt_tensor(d, s->ndim[i], s->shape[i], v);
        if (noncontig) {
            cg_tensor *nc = tt_noncontig(t);
            cg_tensor_release(t);
            t = nc;
        }
        in[i] = t;
    }
}

static double tol_for(const tt_ew_case *c, cg_dtype dt, double ref) {
    double r = 0, a = 0;
    switch (dt) {
    case CG_DTYPE_F64: r = 1e-12, a = 1e-12; break;
    case CG_DTYPE_F32: r = c->rtol32 ? c->rtol32 : 1e-5, a = c->atol32 ? c->atol32 : 1e-6; break;
    case CG_DTYPE_F16: r = 2e-3, a = 1e-3; break;
    case CG_DTYPE_BF16: r = 1.6e-2, a = 1e-2; break;
    default: r = 0, a = 0; break;
    }
    return a + r * fabs(ref);
}

static void check_forward(const tt_ew_case *c, const shape_set *s, cg_dtype dt, bool noncontig, const char *layout) {
    cg_tensor *in[4] = {0};
    make_inputs(c, s, dt, noncontig, 101, in);
    cg_tensor *out = c->fn(in, c->ctx);
    if (!out) {
        cg_test_fail(__FILE__, __LINE__, "[%s] forward failed (%s, %s): %s", c->name, cg_dtype_name(dt), layout,
                     cg_last_error_message());
        goto done;
    }
    /* reference: evaluate on the broadcast element values */
    int64_t n = cg_tensor_numel(out);
    int nd = cg_tensor_ndim(out);
    const int64_t *osh = cg_tensor_shape(out);
    for (int64_t k = 0; k < n; k++) {
        double x[4];
        for (int i = 0; i < c->arity; i++) {
            /* map output index k to the input's broadcast index */
            int ind = cg_tensor_ndim(in[i]);
            const int64_t *ish = cg_tensor_shape(in[i]);
            int64_t rem = k, flat = 0, mul = 1;
            for (int d = nd - 1; d >= 0; d--) {
                int64_t coord = rem % osh[d];
                rem /= osh[d];
                int id = d - (nd - ind);
                if (id >= 0) {
                    flat += (ish[id] == 1 ? 0 : coord) * mul;
                    mul *= ish[id];
                }
            }
            x[i] = tt_get(in[i], flat);
        }
        double want = c->ref(x, c->ctx);
        /* the reference is evaluated in float64; results in narrow dtypes are rounded */
        cg_dtype odt = cg_tensor_dtype(out);
        if (!cg_dtype_is_floating(odt) && odt != CG_DTYPE_BOOL && dt == odt) {
            cg_tensor *w = cg_scalar(want, odt);
            want = tt_get(w, 0);
            cg_tensor_release(w);
        }
        double got = tt_get(out, k);
        bool ok = (isnan(want) && isnan(got)) || got == want || fabs(got - want) <= tol_for(c, cg_dtype_is_floating(odt) ? odt : CG_DTYPE_BOOL, want);
        if (!ok) {
            cg_test_fail(__FILE__, __LINE__, "[%s] %s %s element %lld: got %.10g, reference %.10g (inputs %g %g %g)", c->name,
                         cg_dtype_name(dt), layout, (long long)k, got, want, x[0], c->arity > 1 ? x[1] : 0,
                         c->arity > 2 ? x[2] : 0);
            break;
        }
    }
done:
    cg_tensor_release(out);
    for (int i = 0; i < c->arity; i++) cg_tensor_release(in[i]);
}

static void check_grad(const tt_ew_case *c, const shape_set *s, bool noncontig, const char *layout) {
    cg_tensor *in[4] = {0};
    make_inputs(c, s, CG_DTYPE_F64, noncontig, 202, in);
    for (int i = 0; i < c->arity; i++)
        if (!(c->bool_args & (1u << i))) cg_tensor_set_requires_grad(in[i], true);
    bool ok = tt_gradcheck(c->fn, c->ctx, c->arity, in, 1e-6, 1e-6, 1e-4);
    CHECK_MSG(ok, "[%s] gradcheck failed (%s)", c->name, layout);
    if (ok && (c->second_order || c->differentiable)) {
        ok = tt_gradgradcheck(c->fn, c->ctx, c->arity, in, 1e-6, 1e-5, 1e-3);
        CHECK_MSG(ok, "[%s] gradgradcheck failed (%s)", c->name, layout);
    }
    for (int i = 0; i < c->arity; i++) cg_tensor_release(in[i]);
}

void tt_check_elementwise(const tt_ew_case *c) {
    const shape_set *sets[] = {&k_same, &k_bcast, &k_scalar, &k_empty, &k_rank3};
    const char *names[] = {"contiguous", "broadcast", "0-d", "empty", "rank-3 broadcast"};
    cg_dtype fdt[] = {CG_DTYPE_F64, CG_DTYPE_F32, CG_DTYPE_F16, CG_DTYPE_BF16};
    for (size_t si = 0; si < 5; si++) {
        if (c->arity == 1 && (si == 1 || si == 4)) continue; /* broadcast is meaningless for one input */
        for (size_t di = 0; di < 4; di++) {
            if (c->no_half && di >= 2) continue;
            check_forward(c, sets[si], fdt[di], false, names[si]);
        }
        check_forward(c, sets[si], CG_DTYPE_F32, true, "non-contiguous");
        for (int dt = 0; dt < CG_DTYPE_COUNT; dt++)
            if (c->int_dtypes & (1u << dt)) check_forward(c, sets[si], (cg_dtype)dt, false, names[si]);
        if (c->differentiable) {
            check_grad(c, sets[si], false, names[si]);
            if (si == 0 || si == 1) check_grad(c, sets[si], true, "non-contiguous");
        }
    }
}
