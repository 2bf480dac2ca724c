/* random.c — random sampling on the global Philox generator: rand, randn,
 * randint, randperm and their _like forms; normal(mean, std) (differentiable,
 * reparameterised); the in-place samplers uniform_, normal_, bernoulli_;
 * bernoulli(p) and multinomial.
 *
 * Note [RNG offsets]: every sampler reserves its Philox counters up front
 * (cg_rng_reserve) and element i of the result reads the stream at index i
 * (Note [Philox streams] in rng.c), so results depend only on the generator
 * state (seed, offset) and never on the thread count. The offset advances by:
 *   rand, randn, randint, the _like forms, uniform_, normal_, bernoulli_,
 *   bernoulli(p), normal(mean, std)   ceil(numel / 2)
 *   randperm(n)                        ceil(n / 2)
 *   multinomial, with replacement      ceil(rows * num_samples / 2)
 *   multinomial, without replacement   ceil(rows * categories / 2)
 * Meta tensors, empty results and failed calls advance nothing. Values are
 * computed in double and rounded to the dtype (float16 / bfloat16 included);
 * uniforms carry as many random bits as the dtype's significand, so rand is
 * strictly below 1 in every floating dtype. */
#include "../dispatch/dispatch_internal.h"
#include "creation_internal.h"
#include "elementwise_ops.gen.h"

#include <math.h>

/* ------------------------------------------------------------- the fill kernel */

/* Fill the contiguous tensor t through the device's sample entry, which
 * reserves the counters (nothing on an empty t or a device without data). */
static cg_status run_sampler(const char *op, const cg_sample_args *j, cg_tensor *t) {
    if (cg_tensor_numel(t) == 0) return CG_OK;
    cg_status st;
    CG_RUN_KERNEL(st, op, t->device, sample, t, j);
    return st;
}

static cg_tensor *sample_new(const char *op, cg_sample_args *j, int ndim, const int64_t *shape, cg_dtype dt,
                             cg_device dev) {
    CG_CHECK(ndim == 0 || shape, CG_ERR_VALUE, "[%s] shape is NULL", op);
    cg_tensor *t = cg_tensor_new(op, ndim, shape, dt, dev);
    if (t && run_sampler(op, j, t)) cg_tensor_release(t), t = NULL;
    return t;
}

/* Note [In-place samplers]: the new values carry no history (as with fill_).
 * An in-place sampler is rejected on a leaf (or a view of one) requiring grad
 * in grad mode; when autograd bookkeeping is needed (self or its base requires
 * grad) the values are drawn into a buffer and committed with
 * cg_inplace_commit, so a non-leaf loses its history and a view's base gets a
 * CopySlices node (zero gradient for the overwritten region). A
 * non-contiguous self is also filled through a contiguous buffer, so element i
 * (row-major) always gets stream value i. */
static cg_status sample_inplace(const char *op, cg_tensor *t, cg_sample_args *j) {
    if (cg_check_inplace(op, t)) return cg_last_error();
    bool graph = cg_is_grad_enabled() && cg_dtype_is_floating(t->dtype) &&
                 (t->requires_grad || (t->base && t->base->requires_grad));
    if (!graph && cg_tensor_is_contiguous(t)) {
        cg_status st = run_sampler(op, j, t);
        if (!st) cg_storage_bump_version(t->storage);
        return st;
    }
    cg_tensor *tmp = cg_tensor_new(op, t->ndim, t->shape, t->dtype, t->device);
    if (!tmp) return cg_last_error();
    cg_status st = run_sampler(op, j, tmp);
    if (!st) st = graph ? cg_inplace_commit(op, t, tmp) : cg_copy_(t, tmp);
    cg_tensor_release(tmp);
    return st;
}

/* A contiguous, history-free version of t (new reference). */
static cg_tensor *contiguous_nograd(cg_tensor *t) {
    bool prev = cg_set_grad_enabled(false);
    cg_tensor *c = cg_contiguous(t);
    cg_set_grad_enabled(prev);
    return c;
}

/* Is some element of the contiguous c outside [lo, hi] (NaN included)? The
 * first such value goes to *bad. -1: the entry failed (error set). */
static int find_outside(const char *op, const cg_tensor *c, double lo, double hi, double *bad) {
    bool found = false;
    cg_status st;
    CG_RUN_KERNEL(st, op, c->device, find_outside, c, lo, hi, &found, bad);
    return st ? -1 : found;
}

/* ------------------------------------------------------------- rand, randn */

static cg_status check_floating(const char *op, cg_dtype dt) {
    if (!cg_dtype_is_floating(dt)) return cg_dtype_unsupported(op, dt);
    return CG_OK;
}

CG_PROF_FN0(cg_tensor *, cg_rand, "rand", (int ndim, const int64_t *shape, cg_dtype dt, cg_device dev), (ndim, shape,
            dt, dev)) {
    if (cg_check_factory("rand", dt, dev) || check_floating("rand", dt)) return NULL;
    cg_sample_args j = {.kind = CG_SAMPLE_UNIFORM, .a = 0.0, .b = 1.0};
    return sample_new("rand", &j, ndim, shape, dt, dev);
}

CG_PROF_FN0(cg_tensor *, cg_randn, "randn", (int ndim, const int64_t *shape, cg_dtype dt, cg_device dev), (ndim, shape,
            dt, dev)) {
    if (cg_check_factory("randn", dt, dev) || check_floating("randn", dt)) return NULL;
    cg_sample_args j = {.kind = CG_SAMPLE_NORMAL, .a = 0.0, .b = 1.0};
    return sample_new("randn", &j, ndim, shape, dt, dev);
}

/* ------------------------------------------------------------- randint, randperm */

/* The integers dt holds exactly: [*lo, *hi]. */
static void exact_int_range(cg_dtype dt, int64_t *lo, int64_t *hi) {
    switch (dt) {
    case CG_DTYPE_BOOL: *lo = 0, *hi = 1; break;
    case CG_DTYPE_U8: *lo = 0, *hi = UINT8_MAX; break;
    case CG_DTYPE_I8: *lo = INT8_MIN, *hi = INT8_MAX; break;
    case CG_DTYPE_I16: *lo = INT16_MIN, *hi = INT16_MAX; break;
    case CG_DTYPE_I32: *lo = INT32_MIN, *hi = INT32_MAX; break;
    case CG_DTYPE_F16: *lo = -(1 << 11), *hi = 1 << 11; break;
    case CG_DTYPE_BF16: *lo = -(1 << 8), *hi = 1 << 8; break;
    case CG_DTYPE_F32: *lo = -(1 << 24), *hi = 1 << 24; break;
    case CG_DTYPE_F64: *lo = -(INT64_C(1) << 53), *hi = INT64_C(1) << 53; break;
    default: *lo = INT64_MIN, *hi = INT64_MAX; break;
    }
}

/* randint draws 64 random bits per element: low + bits % (high - low). */
CG_PROF_FN0(cg_tensor *, cg_randint, "randint", (int64_t low, int64_t high, int ndim, const int64_t *shape, cg_dtype dt,
            cg_device dev), (low, high, ndim, shape, dt, dev)) {
    if (cg_check_factory("randint", dt, dev)) return NULL;
    CG_CHECK(low < high, CG_ERR_VALUE, "[randint] expects low < high, but got low=%lld, high=%lld", (long long)low,
             (long long)high);
    int64_t lo, hi;
    exact_int_range(dt, &lo, &hi);
    CG_CHECK(low >= lo && high - 1 <= hi, CG_ERR_VALUE, "[randint] range [%lld, %lld) is out of bounds for dtype %s",
             (long long)low, (long long)high, cg_dtype_name(dt));
    cg_sample_args j = {.kind = CG_SAMPLE_RANDINT, .low = low, .range = (uint64_t)high - (uint64_t)low};
    return sample_new("randint", &j, ndim, shape, dt, dev);
}

/* Fisher-Yates: step k (k = 0 .. n-2) swaps position i = n-1-k with
 * r_k % (i+1), r_k the stream's 64-bit value k. Sequential by nature, so the
 * result never depends on the thread count. */
CG_PROF_FN0(cg_tensor *, cg_randperm, "randperm", (int64_t n, cg_dtype dt, cg_device dev), (n, dt, dev)) {
    if (cg_check_factory("randperm", dt, dev)) return NULL;
    if (cg_dtype_is_barebones(dt)) { /* as PyTorch */
        cg_dtype_unsupported("randperm", dt);
        return NULL;
    }
    CG_CHECK(n >= 0, CG_ERR_SHAPE, "[randperm] n must be non-negative, got %lld", (long long)n);
    CG_CHECK(dt != CG_DTYPE_BOOL, CG_ERR_NOT_IMPLEMENTED, "[randperm] not supported for dtype bool");
    int64_t lo, hi;
    exact_int_range(dt, &lo, &hi);
    CG_CHECK(n == 0 || n - 1 <= hi, CG_ERR_VALUE, "[randperm] n=%lld is too large for dtype %s", (long long)n,
             cg_dtype_name(dt));
    cg_tensor *t = cg_tensor_new("randperm", 1, &n, dt, dev);
    if (!t || n == 0) return t;
    cg_status st;
    CG_RUN_KERNEL(st, "randperm", dev, randperm, t);
    if (st) cg_tensor_release(t), t = NULL;
    return t;
}

/* ------------------------------------------------------------- _like forms */

CG_PROF_FN(cg_tensor *, cg_rand_like, "rand_like", (cg_tensor *t), (t), t) {
    CG_CHECK(t, CG_ERR_VALUE, "[rand_like] argument is NULL");
    return cg_rand(t->ndim, t->shape, t->dtype, t->device);
}
CG_PROF_FN(cg_tensor *, cg_randn_like, "randn_like", (cg_tensor *t), (t), t) {
    CG_CHECK(t, CG_ERR_VALUE, "[randn_like] argument is NULL");
    return cg_randn(t->ndim, t->shape, t->dtype, t->device);
}
CG_PROF_FN(cg_tensor *, cg_randint_like, "randint_like", (cg_tensor *t, int64_t low, int64_t high), (t, low, high), t) {
    CG_CHECK(t, CG_ERR_VALUE, "[randint_like] argument is NULL");
    return cg_randint(low, high, t->ndim, t->shape, t->dtype, t->device);
}

/* ------------------------------------------------------------- normal(mean, std)
 * out = mean + std * eps with eps = randn of the broadcast shape, drawn first
 * and passed to the n-ary driver as a third input that never requires grad
 * (the reparameterisation): d out/d mean = 1, d out/d std = eps. */

/* g_mean = g; g_std = g * eps (eps is saved input 2) */
static cg_status normal_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    if (cg_node_needs_grad(node, 0)) {
        cg_tensor_retain(g[0]);
        gin[0] = g[0];
    }
    if (cg_node_needs_grad(node, 1)) {
        cg_tensor *eps = cg_node_saved(node, 2);
        if (!eps) return cg_last_error();
        gin[1] = cg_mul(g[0], eps);
        cg_tensor_release(eps);
        if (!gin[1]) return cg_last_error();
    }
    return CG_OK;
}

/* a hand row of the op table (loops in src/backend/cpu/elementwise_hand.c) */
static const cg_nary_op cg_op_normal = {
    .id = CG_OP_NORMAL,
    .schema = {"normal", "NormalBackward3", 1, CG_AMP_KEEP, false, true, false},
    .arity = 3, .out_dtype = CG_SAME_DTYPE,
    .dtypes = CG_OP_DTYPES_NORMAL,
    .backward = normal_backward,
};

CG_PROF_FN(cg_tensor *, cg_normal, "normal", (cg_tensor *mean, cg_tensor *std), (mean, std), mean, std) {
    cg_tensor *in2[2] = {mean, std};
    if (cg_check_same("normal", 2, in2, 0) || check_floating("normal", mean->dtype)) return NULL;
    int nd;
    int64_t shape[CG_MAX_DIMS];
    if (cg_broadcast_shapes("normal", mean->ndim, mean->shape, std->ndim, std->shape, &nd, shape)) return NULL;
    {
        cg_tensor *sc = contiguous_nograd(std);
        if (!sc) return NULL;
        double bad = 0;
        int neg = find_outside("normal", sc, 0.0, INFINITY, &bad);
        cg_tensor_release(sc);
        if (neg < 0) return NULL;
        CG_CHECK(!neg, CG_ERR_VALUE, "[normal] expects all elements of std >= 0.0, found %g", bad);
    }
    cg_tensor *eps = cg_randn(nd, shape, mean->dtype, mean->device);
    if (!eps) return NULL;
    cg_tensor *in[3] = {mean, std, eps};
    cg_tensor *out = cg_nary_forward(&cg_op_normal, 3, in, NULL, 0);
    cg_tensor_release(eps);
    return out;
}

/* ------------------------------------------------------------- in-place samplers */

CG_PROF_FN(cg_status, cg_uniform_, "uniform_", (cg_tensor *t, double low, double high), (t, low, high), t) {
    CG_CHECK_S(t, CG_ERR_VALUE, "[uniform_] argument is NULL");
    if (check_floating("uniform_", t->dtype)) return cg_last_error();
    CG_CHECK_S(low <= high && isfinite(high - low), CG_ERR_VALUE,
               "[uniform_] expects a finite range low <= high, but got low=%g, high=%g", low, high);
    cg_sample_args j = {.kind = CG_SAMPLE_UNIFORM, .a = low, .b = high};
    return sample_inplace("uniform", t, &j);
}

CG_PROF_FN(cg_status, cg_normal_, "normal_", (cg_tensor *t, double mean, double std), (t, mean, std), t) {
    CG_CHECK_S(t, CG_ERR_VALUE, "[normal_] argument is NULL");
    if (check_floating("normal_", t->dtype)) return cg_last_error();
    CG_CHECK_S(std >= 0.0, CG_ERR_VALUE, "[normal_] expects std >= 0.0, but found std %g", std);
    cg_sample_args j = {.kind = CG_SAMPLE_NORMAL, .a = mean, .b = std};
    return sample_inplace("normal", t, &j);
}

/* any dtype: 1 (true) with probability p, else 0 */
CG_PROF_FN(cg_status, cg_bernoulli_, "bernoulli_", (cg_tensor *t, double p), (t, p), t) {
    CG_CHECK_S(t, CG_ERR_VALUE, "[bernoulli_] argument is NULL");
    CG_CHECK_S(p >= 0.0 && p <= 1.0, CG_ERR_VALUE, "[bernoulli_] expects 0 <= p <= 1, but got p=%g", p);
    cg_sample_args j = {.kind = CG_SAMPLE_BERNOULLI, .a = p};
    return sample_inplace("bernoulli", t, &j);
}

/* ------------------------------------------------------------- bernoulli(p) */

/* PyTorch's BernoulliBackward0: the samples do not depend smoothly on p, so
 * p's gradient is zero (the output still records history when p requires grad). */
static cg_status bernoulli_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    const cg_tensor_meta *m = &node->input_meta[0];
    return (gin[0] = cg_zeros(m->ndim, m->shape, g[0]->dtype, g[0]->device)) ? CG_OK : cg_last_error();
}

static cg_tensor *bernoulli_sample(cg_tensor *p) {
    cg_tensor *out = cg_tensor_new("bernoulli", p->ndim, p->shape, p->dtype, p->device);
    if (!out || cg_tensor_numel(out) == 0) return out;
    cg_tensor *pc = contiguous_nograd(p);
    double bad = 0;
    int outside = pc ? find_outside("bernoulli", pc, 0.0, 1.0, &bad) : -1;
    if (outside) {
        if (outside > 0) cg_set_error(CG_ERR_VALUE, "[bernoulli] expects 0 <= p <= 1 for every element, found %g", bad);
        cg_tensor_release(pc);
        cg_tensor_release(out);
        return NULL;
    }
    cg_sample_args j = {.kind = CG_SAMPLE_BERNOULLI_P, .p = pc};
    cg_status st = run_sampler("bernoulli", &j, out);
    cg_tensor_release(pc);
    if (st) cg_tensor_release(out), out = NULL;
    return out;
}

/* Same shape and dtype as p (floating); a zero gradient for p (BernoulliBackward0). */
CG_PROF_FN(cg_tensor *, cg_bernoulli, "bernoulli", (cg_tensor *p), (p), p) {
    CG_CHECK(p, CG_ERR_VALUE, "[bernoulli] argument is NULL");
    if (check_floating("bernoulli", p->dtype)) return NULL;
    cg_tensor *out = bernoulli_sample(p);
    if (!out) return NULL;
    bool failed;
    cg_wire_unary_output("BernoulliBackward0", bernoulli_backward, NULL, 1, &p, out, 0, &failed);
    if (failed) {
        cg_tensor_release(out);
        return NULL;
    }
    return out;
}

/* ------------------------------------------------------------- multinomial
 * With replacement, sample s of row r is an inverse-CDF draw with the stream's
 * uniform r * num_samples + s. Without replacement, every category c of row r
 * gets an exponential race time E / w (E = -log(1 - u), u the stream's uniform
 * r * categories + c) and the num_samples earliest win, in order: the same
 * law as drawing one at a time and renormalising (Efraimidis-Spirakis). */

CG_PROF_FN(cg_tensor *, cg_multinomial, "multinomial", (cg_tensor *probs, int64_t num_samples, bool replacement),
           (probs, num_samples, replacement), probs) {
    CG_CHECK(probs, CG_ERR_VALUE, "[multinomial] argument is NULL");
    if (check_floating("multinomial", probs->dtype)) return NULL;
    CG_CHECK(probs->ndim == 1 || probs->ndim == 2, CG_ERR_SHAPE, "[multinomial] prob_dist must be 1 or 2 dim, got %d dims",
             probs->ndim);
    CG_CHECK(num_samples > 0, CG_ERR_VALUE, "[multinomial] num_samples must be positive, got %lld", (long long)num_samples);
    int64_t ncat = probs->shape[probs->ndim - 1], rows = probs->ndim == 2 ? probs->shape[0] : 1;
    CG_CHECK(replacement || num_samples <= ncat, CG_ERR_VALUE,
             "[multinomial] cannot sample num_samples=%lld > %lld categories without replacement",
             (long long)num_samples, (long long)ncat);
    int64_t oshape[2] = {rows, num_samples};
    cg_tensor *out = probs->ndim == 2 ? cg_tensor_new("multinomial", 2, oshape, CG_DTYPE_I64, probs->device)
                                      : cg_tensor_new("multinomial", 1, &num_samples, CG_DTYPE_I64, probs->device);
    if (!out || rows == 0) return out;
    cg_tensor *pc = contiguous_nograd(probs);
    cg_status st = pc ? CG_OK : cg_last_error();
    if (!st) CG_RUN_KERNEL(st, "multinomial", out->device, multinomial, out, pc, num_samples, replacement);
    cg_tensor_release(pc);
    if (st) {
        cg_tensor_release(out);
        return NULL;
    }
    return out;
}
