/* testutil.c — tensor builders, comparisons and the float64 gradcheck /
 * gradgradcheck used by the op tests. */
#include "test.h"

#include <stdlib.h>
#include <string.h>

cg_tensor *tt_tensor(cg_dtype dt, int ndim, const int64_t *shape, const double *vals) {
    cg_tensor *t = cg_empty(ndim, shape, dt, cg_cpu());
    if (!t) return NULL;
    int64_t n = cg_tensor_numel(t);
    cg_tensor *src = cg_from_blob((void *)vals, ndim, shape, NULL, CG_DTYPE_F64, NULL, NULL);
    if (n && src) cg_copy_(t, src);
    cg_tensor_release(src);
    return t;
}

cg_tensor *tt_rand(cg_dtype dt, int ndim, const int64_t *shape, double lo, double hi, unsigned seed) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
    for (int64_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        v[i] = lo + (hi - lo) * (double)(s >> 11) / 9007199254740992.0;
    }
    cg_tensor *t = tt_tensor(dt, ndim, shape, v);
    free(v);
    return t;
}

cg_tensor *tt_noncontig(cg_tensor *t) {
    /* build a buffer with the last dim doubled and take every other element */
    int nd = cg_tensor_ndim(t);
    const int64_t *sh = cg_tensor_shape(t);
    if (nd == 0) {
        cg_tensor_retain(t);
        return t;
    }
    int64_t big[CG_MAX_DIMS];
    memcpy(big, sh, sizeof(int64_t) * (size_t)nd);
    big[nd - 1] *= 2;
    cg_tensor *b = cg_zeros(nd, big, cg_tensor_dtype(t), cg_cpu());
    cg_tensor *v = cg_slice(b, nd - 1, 0, big[nd - 1], 2);
    cg_copy_(v, t);
    cg_tensor_release(b);
    cg_tensor *d = cg_detach(v);
    cg_tensor_release(v);
    if (cg_tensor_requires_grad(t)) cg_tensor_set_requires_grad(d, true);
    return d;
}

double tt_get(const cg_tensor *t, int64_t flat) {
    double v = NAN;
    cg_tensor_get_flat(t, flat, &v);
    return v;
}

double tt_maxdiff(const cg_tensor *a, const cg_tensor *b) {
    if (!a || !b) return INFINITY;
    int n = cg_tensor_ndim(a);
    if (n != cg_tensor_ndim(b) || memcmp(cg_tensor_shape(a), cg_tensor_shape(b), sizeof(int64_t) * (size_t)n))
        return INFINITY;
    double m = 0;
    for (int64_t i = 0; i < cg_tensor_numel(a); i++) {
        double x = tt_get(a, i), y = tt_get(b, i);
        if (isnan(x) && isnan(y)) continue;
        if (x == y) continue; /* covers equal infinities */
        double d = fabs(x - y);
        if (!(d <= m)) m = d;
    }
    return m;
}

/* ---------------------------------------------------------------- gradcheck */

static double *elem_ptr(cg_tensor *t, int64_t flat) {
    int nd = cg_tensor_ndim(t);
    const int64_t *sh = cg_tensor_shape(t), *st = cg_tensor_strides(t);
    int64_t off = 0;
    for (int d = nd - 1; d >= 0; d--) {
        off += (flat % sh[d]) * st[d];
        flat /= sh[d];
    }
    return (double *)cg_tensor_data(t) + off;
}

/* <v, f(inputs)> in float64 */
static bool eval_dot(tt_fn f, void *ctx, cg_tensor *const *inputs, cg_tensor *v, double *out) {
    bool prev = cg_set_grad_enabled(false);
    cg_tensor *y = f(inputs, ctx);
    cg_set_grad_enabled(prev);
    if (!y) return false;
    double s = 0;
    for (int64_t i = 0; i < cg_tensor_numel(y); i++) s += tt_get(y, i) * tt_get(v, i);
    cg_tensor_release(y);
    *out = s;
    return true;
}

static bool check_grads(const char *what, tt_fn f, void *ctx, int n, cg_tensor *const *inputs, cg_tensor *v,
                        cg_tensor *const *grads, double eps, double atol, double rtol) {
    bool ok = true;
    for (int i = 0; i < n; i++) {
        cg_tensor *x = inputs[i];
        if (!cg_tensor_requires_grad(x)) continue;
        if (cg_tensor_dtype(x) != CG_DTYPE_F64) {
            fprintf(stderr, "    %s: input %d is not float64\n", what, i);
            return false;
        }
        for (int64_t j = 0; j < cg_tensor_numel(x); j++) {
            double *p = elem_ptr(x, j), orig = *p, fp, fm;
            *p = orig + eps;
            bool a = eval_dot(f, ctx, inputs, v, &fp);
            *p = orig - eps;
            bool b = eval_dot(f, ctx, inputs, v, &fm);
            *p = orig;
            if (!a || !b) {
                fprintf(stderr, "    %s: evaluation failed: %s\n", what, cg_last_error_message());
                return false;
            }
            double num = (fp - fm) / (2 * eps);
            double ana = grads[i] ? tt_get(grads[i], j) : 0.0;
            if (!(fabs(num - ana) <= atol + rtol * fabs(num))) {
                fprintf(stderr, "    %s: input %d element %lld: analytic %.10g vs numeric %.10g\n", what, i,
                        (long long)j, ana, num);
                ok = false;
                break;
            }
        }
    }
    return ok;
}

bool tt_gradcheck(tt_fn f, void *ctx, int n, cg_tensor *const *inputs, double eps, double atol, double rtol) {
    cg_tensor *y = f(inputs, ctx);
    if (!y) {
        fprintf(stderr, "    gradcheck: forward failed: %s\n", cg_last_error_message());
        return false;
    }
    cg_tensor *v = tt_rand(CG_DTYPE_F64, cg_tensor_ndim(y), cg_tensor_shape(y), -1, 1, 1234);
    cg_tensor *grads[8] = {0}, *req[8];
    int idx[8], m = 0;
    for (int i = 0; i < n; i++)
        if (cg_tensor_requires_grad(inputs[i])) idx[m] = i, req[m++] = inputs[i];
    bool ok = true;
    if (m && cg_tensor_requires_grad(y)) {
        cg_tensor *res[8] = {0};
        if (cg_autograd_grad(1, &y, &v, m, req, false, false, true, res)) {
            fprintf(stderr, "    gradcheck: backward failed: %s\n", cg_last_error_message());
            ok = false;
        }
        for (int k = 0; k < m; k++) grads[idx[k]] = res[k];
    }
    if (ok) ok = check_grads("gradcheck", f, ctx, n, inputs, v, grads, eps, atol, rtol);
    for (int i = 0; i < n; i++) cg_tensor_release(grads[i]);
    cg_tensor_release(v);
    cg_tensor_release(y);
    return ok;
}

/* S(inputs, v) = sum_i <u_i, d<v, f>/d input_i>, differentiated again */
typedef struct gg_ctx {
    tt_fn f;
    void *ctx;
    int n;
} gg_ctx;

static cg_tensor *gg_fn(cg_tensor *const *all, void *p) {
    gg_ctx *c = p;
    cg_tensor *const *inputs = all;
    cg_tensor *v = all[c->n];
    bool prev = cg_set_grad_enabled(true);
    cg_tensor *y = c->f(inputs, c->ctx);
    cg_tensor *req[8], *res[8] = {0};
    int m = 0;
    for (int i = 0; i < c->n; i++)
        if (cg_tensor_requires_grad(inputs[i])) req[m++] = inputs[i];
    cg_tensor *s = cg_scalar(0.0, CG_DTYPE_F64);
    if (y && cg_tensor_requires_grad(y) && !cg_autograd_grad(1, &y, &v, m, req, true, true, true, res)) {
        for (int k = 0; k < m; k++) {
            if (!res[k]) continue;
            cg_tensor *u = tt_rand(CG_DTYPE_F64, cg_tensor_ndim(res[k]), cg_tensor_shape(res[k]), -1, 1, 777 + (unsigned)k);
            cg_tensor *pr = cg_mul(res[k], u);
            cg_tensor *ps = cg_sum(pr, 0, NULL, false);
            cg_tensor *ns = cg_add(s, ps);
            cg_tensor_release(u);
            cg_tensor_release(pr);
            cg_tensor_release(ps);
            cg_tensor_release(s);
            cg_tensor_release(res[k]);
            s = ns;
        }
    } else if (y && cg_tensor_requires_grad(y)) {
        cg_tensor_release(s);
        s = NULL;
    }
    cg_tensor_release(y);
    cg_set_grad_enabled(prev);
    return s;
}

bool tt_gradgradcheck(tt_fn f, void *ctx, int n, cg_tensor *const *inputs, double eps, double atol, double rtol) {
    cg_tensor *y = f(inputs, ctx);
    if (!y) return false;
    cg_tensor *v = tt_rand(CG_DTYPE_F64, cg_tensor_ndim(y), cg_tensor_shape(y), -1, 1, 4321);
    cg_tensor_release(y);
    cg_tensor_set_requires_grad(v, true);
    cg_tensor *all[9];
    for (int i = 0; i < n; i++) all[i] = inputs[i];
    all[n] = v;
    gg_ctx c = {f, ctx, n};
    bool ok = tt_gradcheck(gg_fn, &c, n + 1, all, eps, atol, rtol);
    cg_tensor_release(v);
    if (!ok) fprintf(stderr, "    (in gradgradcheck)\n");
    return ok;
}
