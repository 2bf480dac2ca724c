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
#include "../backend/cpu/loops.h"
#include "creation_internal.h"
#include "elementwise_ops.gen.h"

#include <stdlib.h>
#include <string.h>

#define SAMPLE_GRAIN 8192

/* ------------------------------------------------------------- the fill kernel */

typedef enum sample_kind {
    SAMPLE_UNIFORM,     /* a + u * (b - a) */
    SAMPLE_NORMAL,      /* a + b * z */
    SAMPLE_RANDINT,     /* low + r % range */
    SAMPLE_BERNOULLI,   /* u < a */
    SAMPLE_BERNOULLI_P, /* u < p[i] */
} sample_kind;

typedef struct sample_job {
    sample_kind kind;
    uint64_t seed, base; /* reserved counters */
    cg_dtype dt;
    char *out;           /* (numel,) contiguous, dtype dt */
    double a, b;
    int64_t low;
    uint64_t range;
    const char *p;       /* SAMPLE_BERNOULLI_P: (numel,) contiguous, dtype pdt */
    cg_dtype pdt;
} sample_job;

/* random bits of a uniform in dt: every k * 2^-digits below 1 is exact there */
static int uniform_digits(cg_dtype dt) {
    switch (dt) {
    case CG_DTYPE_F16: return 11;
    case CG_DTYPE_BF16: return 8;
    case CG_DTYPE_F32: return 24;
    default: return 53;
    }
}

static void sample_range(int64_t begin, int64_t end, void *ctx) {
    const sample_job *j = ctx;
    double d[CG_CHUNK], pv[CG_CHUNK];
    uint64_t u[CG_CHUNK];
    int64_t q[CG_CHUNK];
    size_t isz = cg_dtype_size(j->dt);
    for (int64_t s = begin; s < end; s += CG_CHUNK) {
        int64_t n = end - s < CG_CHUNK ? end - s : CG_CHUNK;
        char *dst = j->out + (size_t)s * isz;
        switch (j->kind) {
        case SAMPLE_UNIFORM:
            cg_rng_fill_uniform(j->seed, j->base, s, s + n, uniform_digits(j->dt), d);
            if (j->a != 0.0 || j->b != 1.0)
                for (int64_t k = 0; k < n; k++) d[k] = j->a + d[k] * (j->b - j->a);
            cg_store_doubles(dst, j->dt, d, n);
            break;
        case SAMPLE_NORMAL:
            cg_rng_fill_normal(j->seed, j->base, s, s + n, d);
            for (int64_t k = 0; k < n; k++) d[k] = j->a + j->b * d[k];
            cg_store_doubles(dst, j->dt, d, n);
            break;
        case SAMPLE_RANDINT:
            cg_rng_fill_u64(j->seed, j->base, s, s + n, u);
            for (int64_t k = 0; k < n; k++) q[k] = (int64_t)((uint64_t)j->low + u[k] % j->range);
            cg_store_ints(dst, j->dt, q, n);
            break;
        case SAMPLE_BERNOULLI:
            cg_rng_fill_uniform(j->seed, j->base, s, s + n, 53, d);
            for (int64_t k = 0; k < n; k++) d[k] = d[k] < j->a;
            cg_store_doubles(dst, j->dt, d, n);
            break;
        case SAMPLE_BERNOULLI_P:
            cg_rng_fill_uniform(j->seed, j->base, s, s + n, 53, d);
            cg_load_doubles(j->p + (size_t)s * cg_dtype_size(j->pdt), j->pdt, pv, n);
            for (int64_t k = 0; k < n; k++) d[k] = d[k] < pv[k];
            cg_store_doubles(dst, j->dt, d, n);
            break;
        }
    }
}

/* Fill the contiguous tensor t: reserve its counters, then split the elements
 * across threads. */
static void run_sampler(sample_job *j, cg_tensor *t) {
    int64_t n = cg_tensor_numel(t);
    if (cg_is_meta(t) || n == 0) return;
    cg_rng_reserve(cg_rng_counters(n), &j->seed, &j->base);
    j->dt = t->dtype;
    j->out = cg_tensor_ptr(t);
    cg_parallel_for(n, SAMPLE_GRAIN, sample_range, j);
}

static cg_tensor *sample_new(const char *op, sample_job *j, int ndim, const int64_t *shape, cg_dtype dt,
                             cg_device dev) {
    CG_CHECK(ndim == 0 || shape, CG_ERR_VALUE, "[%s] shape is NULL", op);
    cg_tensor *t = cg_new_output(op, ndim, shape, dt, dev);
    if (t) run_sampler(j, t);
    return t;
}

/* element copy dst <- src of one dtype; params: the item size */
static void copy_elems(char **args, const int64_t *steps, int64_t n, const void *p) {
    size_t isz = (size_t)(uintptr_t)p;
    for (int64_t k = 0; k < n; k++) memcpy(args[0] + k * steps[0], args[1] + k * steps[1], isz);
}

/* Note [In-place samplers]: the new values carry no history (as with fill_).
 * An in-place sampler is rejected on a leaf (or a view of one) requiring grad
 * in grad mode; when autograd bookkeeping is needed (self or its base requires
 * grad) the values are drawn into a buffer and committed with
 * cg_inplace_commit, so a non-leaf loses its history and a view's base gets a
 * CopySlices node (zero gradient for the overwritten region). A
 * non-contiguous self is also filled through a contiguous buffer, so element i
 * (row-major) always gets stream value i. */
static cg_status sample_inplace(const char *op, cg_tensor *t, sample_job *j) {
    if (cg_check_inplace(op, t)) return cg_last_error();
    bool graph = cg_is_grad_enabled() && cg_dtype_is_floating(t->dtype) &&
                 (t->requires_grad || (t->base && t->base->requires_grad));
    if (!graph && (cg_is_meta(t) || cg_tensor_is_contiguous(t))) {
        run_sampler(j, t);
        cg_storage_bump_version(t->storage);
        return CG_OK;
    }
    cg_tensor *tmp = cg_new_output(op, t->ndim, t->shape, t->dtype, t->device);
    if (!tmp) return cg_last_error();
    run_sampler(j, tmp);
    cg_status st = CG_OK;
    if (graph) {
        st = cg_inplace_commit(op, t, tmp);
    } else {
        cg_tensor *args[2] = {t, tmp};
        cg_iter it;
        cg_iter_init(&it, 2, args, t->ndim, t->shape);
        cg_iter_run(&it, copy_elems, (const void *)(uintptr_t)cg_dtype_size(t->dtype), CG_GRAIN);
        cg_storage_bump_version(t->storage);
    }
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
 * first such value goes to *bad. */
static bool find_outside(const cg_tensor *c, double lo, double hi, double *bad) {
    int64_t n = cg_tensor_numel(c);
    const char *p = cg_tensor_ptr(c);
    size_t isz = cg_dtype_size(c->dtype);
    double buf[CG_CHUNK];
    for (int64_t s = 0; s < n; s += CG_CHUNK) {
        int64_t m = n - s < CG_CHUNK ? n - s : CG_CHUNK;
        cg_load_doubles(p + (size_t)s * isz, c->dtype, buf, m);
        for (int64_t k = 0; k < m; k++)
            if (!(buf[k] >= lo && buf[k] <= hi)) {
                *bad = buf[k];
                return true;
            }
    }
    return false;
}

/* ------------------------------------------------------------- rand, randn */

static cg_status check_floating(const char *op, cg_dtype dt) {
    if (!cg_dtype_is_floating(dt)) return cg_dtype_unsupported(op, dt);
    return CG_OK;
}

CG_PROF_FN0(cg_tensor *, cg_rand, "rand", (int ndim, const int64_t *shape, cg_dtype dt, cg_device dev), (ndim, shape,
            dt, dev)) {
    if (cg_check_factory("rand", dt, dev) || check_floating("rand", dt)) return NULL;
    sample_job j = {.kind = SAMPLE_UNIFORM, .a = 0.0, .b = 1.0};
    return sample_new("rand", &j, ndim, shape, dt, dev);
}

CG_PROF_FN0(cg_tensor *, cg_randn, "randn", (int ndim, const int64_t *shape, cg_dtype dt, cg_device dev), (ndim, shape,
            dt, dev)) {
    if (cg_check_factory("randn", dt, dev) || check_floating("randn", dt)) return NULL;
    sample_job j = {.kind = SAMPLE_NORMAL, .a = 0.0, .b = 1.0};
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
    sample_job j = {.kind = SAMPLE_RANDINT, .low = low, .range = (uint64_t)high - (uint64_t)low};
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
    cg_tensor *t = cg_new_output("randperm", 1, &n, dt, dev);
    if (!t || cg_is_meta(t) || n == 0) return t;
    int64_t *perm = dt == CG_DTYPE_I64 ? (int64_t *)cg_tensor_ptr(t) : cg_malloc_n("randperm", n, sizeof(int64_t));
    if (!perm) {
        cg_tensor_release(t);
        cg_set_error(CG_ERR_OOM, "[randperm] out of memory for %lld indices", (long long)n);
        return NULL;
    }
    for (int64_t i = 0; i < n; i++) perm[i] = i;
    uint64_t seed, base, r[CG_CHUNK];
    cg_rng_reserve(cg_rng_counters(n), &seed, &base);
    for (int64_t k0 = 0; k0 < n - 1; k0 += CG_CHUNK) {
        int64_t m = n - 1 - k0 < CG_CHUNK ? n - 1 - k0 : CG_CHUNK;
        cg_rng_fill_u64(seed, base, k0, k0 + m, r);
        for (int64_t k = 0; k < m; k++) {
            int64_t i = n - 1 - (k0 + k), j = (int64_t)(r[k] % (uint64_t)(i + 1));
            int64_t tmp = perm[i];
            perm[i] = perm[j];
            perm[j] = tmp;
        }
    }
    if (dt != CG_DTYPE_I64) {
        cg_store_ints(cg_tensor_ptr(t), dt, perm, n);
        free(perm);
    }
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
    if (!cg_is_meta(std)) {
        cg_tensor *sc = contiguous_nograd(std);
        if (!sc) return NULL;
        double bad;
        bool neg = find_outside(sc, 0.0, INFINITY, &bad);
        cg_tensor_release(sc);
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
    sample_job j = {.kind = SAMPLE_UNIFORM, .a = low, .b = high};
    return sample_inplace("uniform", t, &j);
}

CG_PROF_FN(cg_status, cg_normal_, "normal_", (cg_tensor *t, double mean, double std), (t, mean, std), t) {
    CG_CHECK_S(t, CG_ERR_VALUE, "[normal_] argument is NULL");
    if (check_floating("normal_", t->dtype)) return cg_last_error();
    CG_CHECK_S(std >= 0.0, CG_ERR_VALUE, "[normal_] expects std >= 0.0, but found std %g", std);
    sample_job j = {.kind = SAMPLE_NORMAL, .a = mean, .b = std};
    return sample_inplace("normal", t, &j);
}

/* any dtype: 1 (true) with probability p, else 0 */
CG_PROF_FN(cg_status, cg_bernoulli_, "bernoulli_", (cg_tensor *t, double p), (t, p), t) {
    CG_CHECK_S(t, CG_ERR_VALUE, "[bernoulli_] argument is NULL");
    CG_CHECK_S(p >= 0.0 && p <= 1.0, CG_ERR_VALUE, "[bernoulli_] expects 0 <= p <= 1, but got p=%g", p);
    sample_job j = {.kind = SAMPLE_BERNOULLI, .a = p};
    return sample_inplace("bernoulli", t, &j);
}

/* ------------------------------------------------------------- bernoulli(p) */

/* Same shape and dtype as p (floating); no autograd history. */
CG_PROF_FN(cg_tensor *, cg_bernoulli, "bernoulli", (cg_tensor *p), (p), p) {
    CG_CHECK(p, CG_ERR_VALUE, "[bernoulli] argument is NULL");
    if (check_floating("bernoulli", p->dtype)) return NULL;
    cg_tensor *out = cg_new_output("bernoulli", p->ndim, p->shape, p->dtype, p->device);
    if (!out || cg_is_meta(out) || cg_tensor_numel(out) == 0) return out;
    cg_tensor *pc = contiguous_nograd(p);
    double bad;
    if (!pc || find_outside(pc, 0.0, 1.0, &bad)) {
        if (pc) cg_set_error(CG_ERR_VALUE, "[bernoulli] expects 0 <= p <= 1 for every element, found %g", bad);
        cg_tensor_release(pc);
        cg_tensor_release(out);
        return NULL;
    }
    sample_job j = {.kind = SAMPLE_BERNOULLI_P, .p = cg_tensor_ptr(pc), .pdt = pc->dtype};
    run_sampler(&j, out);
    cg_tensor_release(pc);
    return out;
}

/* ------------------------------------------------------------- multinomial
 * With replacement, sample s of row r is an inverse-CDF draw with the stream's
 * uniform r * num_samples + s. Without replacement, every category c of row r
 * gets an exponential race time E / w (E = -log(1 - u), u the stream's uniform
 * r * categories + c) and the num_samples earliest win, in order: the same
 * law as drawing one at a time and renormalising (Efraimidis-Spirakis). */

typedef struct mn_job {
    const double *w;       /* (rows, ncat) weights */
    int64_t *out;          /* (rows, ns) */
    int64_t rows, ncat, ns;
    uint64_t seed, base;
    atomic_bool oom;
} mn_job;

/* over flat sample indices r * ns + s */
static void mn_replace_range(int64_t begin, int64_t end, void *ctx) {
    mn_job *j = ctx;
    double *cdf = cg_malloc_n("multinomial", j->ncat, sizeof(double));
    if (!cdf) {
        atomic_store(&j->oom, true);
        return;
    }
    double u[CG_CHUNK], total = 0.0;
    int64_t row = -1, last = 0;
    for (int64_t s = begin; s < end; s += CG_CHUNK) {
        int64_t n = end - s < CG_CHUNK ? end - s : CG_CHUNK;
        cg_rng_fill_uniform(j->seed, j->base, s, s + n, 53, u);
        for (int64_t k = 0; k < n; k++) {
            int64_t idx = s + k, r = idx / j->ns;
            if (r != row) {
                row = r;
                const double *w = j->w + r * j->ncat;
                double acc = 0.0;
                for (int64_t c = 0; c < j->ncat; c++) {
                    acc += w[c];
                    cdf[c] = acc;
                    if (w[c] > 0) last = c;
                }
                total = acc;
            }
            double target = u[k] * total;
            int64_t lo = 0, hi = j->ncat; /* first c with cdf[c] > target: a positive weight */
            while (lo < hi) {
                int64_t mid = lo + (hi - lo) / 2;
                if (cdf[mid] > target) hi = mid;
                else lo = mid + 1;
            }
            j->out[idx] = lo < j->ncat ? lo : last;
        }
    }
    free(cdf);
}

typedef struct mn_key {
    double key;
    int64_t idx;
} mn_key;

static int mn_key_cmp(const void *a, const void *b) {
    const mn_key *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* over rows */
static void mn_noreplace_range(int64_t begin, int64_t end, void *ctx) {
    mn_job *j = ctx;
    mn_key *keys = cg_malloc_n("multinomial", j->ncat, sizeof(mn_key));
    double *u = cg_malloc_n("multinomial", j->ncat, sizeof(double));
    if (!keys || !u) {
        atomic_store(&j->oom, true);
        free(keys);
        free(u);
        return;
    }
    for (int64_t r = begin; r < end; r++) {
        const double *w = j->w + r * j->ncat;
        cg_rng_fill_uniform(j->seed, j->base, r * j->ncat, (r + 1) * j->ncat, 53, u);
        for (int64_t c = 0; c < j->ncat; c++) {
            /* log race time log(E) - log(w): finite for every positive w; zero weights never win */
            keys[c].key = w[c] > 0 ? log(-log1p(-u[c])) - log(w[c]) : INFINITY;
            keys[c].idx = c;
        }
        qsort(keys, (size_t)j->ncat, sizeof(mn_key), mn_key_cmp);
        for (int64_t s = 0; s < j->ns; s++) j->out[r * j->ns + s] = keys[s].idx;
    }
    free(keys);
    free(u);
}

/* Validate the rows of w: finite, non-negative, positive sum, and enough
 * nonzero categories when sampling without replacement. */
static cg_status mn_validate(const double *w, int64_t rows, int64_t ncat, int64_t ns, bool replacement) {
    for (int64_t r = 0; r < rows; r++) {
        double sum = 0.0;
        int64_t nonzero = 0;
        for (int64_t c = 0; c < ncat; c++) {
            double v = w[r * ncat + c];
            if (!(isfinite(v) && v >= 0))
                return cg_set_error(CG_ERR_VALUE,
                                    "[multinomial] probability tensor contains either inf, nan or element < 0 "
                                    "(row %lld, category %lld: %g)", (long long)r, (long long)c, v);
            sum += v;
            nonzero += v > 0;
        }
        if (!(sum > 0))
            return cg_set_error(CG_ERR_VALUE, "[multinomial] invalid distribution: row %lld sums to %g (must be positive)",
                                (long long)r, sum);
        if (!replacement && nonzero < ns)
            return cg_set_error(CG_ERR_VALUE,
                                "[multinomial] cannot draw %lld samples without replacement from row %lld with only "
                                "%lld nonzero categories", (long long)ns, (long long)r, (long long)nonzero);
    }
    return CG_OK;
}

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
    cg_tensor *out = probs->ndim == 2 ? cg_new_output("multinomial", 2, oshape, CG_DTYPE_I64, probs->device)
                                      : cg_new_output("multinomial", 1, &num_samples, CG_DTYPE_I64, probs->device);
    if (!out || cg_is_meta(out) || rows == 0) return out;
    cg_tensor *pc = contiguous_nograd(probs);
    double *w = pc ? cg_malloc_n("multinomial", cg_count_axpb(rows, ncat, 0), sizeof(double)) : NULL;
    cg_status st = CG_OK;
    if (!pc) st = cg_last_error();
    else if (!w) st = cg_set_error(CG_ERR_OOM, "[multinomial] out of memory");
    if (!st) {
        cg_load_doubles(cg_tensor_ptr(pc), pc->dtype, w, rows * ncat);
        st = mn_validate(w, rows, ncat, num_samples, replacement);
    }
    if (!st) {
        mn_job j = {.w = w, .out = (int64_t *)cg_tensor_ptr(out), .rows = rows, .ncat = ncat, .ns = num_samples};
        atomic_init(&j.oom, false);
        if (replacement) {
            cg_rng_reserve(cg_rng_counters(rows * num_samples), &j.seed, &j.base);
            cg_parallel_for(rows * num_samples, SAMPLE_GRAIN, mn_replace_range, &j);
        } else {
            cg_rng_reserve(cg_rng_counters(rows * ncat), &j.seed, &j.base);
            int64_t grain = ncat >= SAMPLE_GRAIN ? 1 : SAMPLE_GRAIN / ncat;
            cg_parallel_for(rows, grain, mn_noreplace_range, &j);
        }
        if (atomic_load(&j.oom)) st = cg_set_error(CG_ERR_OOM, "[multinomial] out of memory for scratch buffers");
    }
    free(w);
    cg_tensor_release(pc);
    if (st) {
        cg_tensor_release(out);
        return NULL;
    }
    return out;
}
