/* random.c — the CPU's samplers (src/ops/random.c): the fill kernel of the
 * elementwise samplers, randperm and multinomial. Each entry reserves its
 * Philox counters of the global generator (Note [RNG offsets]) and element i
 * reads the stream at index i, so results never depend on the thread count. */
#include "cpu_kernels.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#define SAMPLE_GRAIN 8192

/* ------------------------------------------------------------- the fill kernel */

typedef struct sample_job {
    cg_sample_kind kind;
    uint64_t seed, base; /* reserved counters */
    cg_dtype dt;
    char *out;           /* (numel,) contiguous, dtype dt */
    double a, b;
    int64_t low;
    uint64_t range;
    const char *p;       /* CG_SAMPLE_BERNOULLI_P: (numel,) contiguous, dtype pdt */
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
        case CG_SAMPLE_UNIFORM:
            cg_rng_fill_uniform(j->seed, j->base, s, s + n, uniform_digits(j->dt), d);
            if (j->a != 0.0 || j->b != 1.0)
                for (int64_t k = 0; k < n; k++) d[k] = j->a + d[k] * (j->b - j->a);
            cg_store_doubles(dst, j->dt, d, n);
            break;
        case CG_SAMPLE_NORMAL:
            cg_rng_fill_normal(j->seed, j->base, s, s + n, d);
            for (int64_t k = 0; k < n; k++) d[k] = j->a + j->b * d[k];
            cg_store_doubles(dst, j->dt, d, n);
            break;
        case CG_SAMPLE_RANDINT:
            cg_rng_fill_u64(j->seed, j->base, s, s + n, u);
            for (int64_t k = 0; k < n; k++) q[k] = (int64_t)((uint64_t)j->low + u[k] % j->range);
            cg_store_ints(dst, j->dt, q, n);
            break;
        case CG_SAMPLE_BERNOULLI:
            cg_rng_fill_uniform(j->seed, j->base, s, s + n, 53, d);
            for (int64_t k = 0; k < n; k++) d[k] = d[k] < j->a;
            cg_store_doubles(dst, j->dt, d, n);
            break;
        case CG_SAMPLE_BERNOULLI_P:
            cg_rng_fill_uniform(j->seed, j->base, s, s + n, 53, d);
            cg_load_doubles(j->p + (size_t)s * cg_dtype_size(j->pdt), j->pdt, pv, n);
            for (int64_t k = 0; k < n; k++) d[k] = d[k] < pv[k];
            cg_store_doubles(dst, j->dt, d, n);
            break;
        }
    }
}

cg_status cg_cpu_sample(cg_tensor *t, const cg_sample_args *a) {
    sample_job j = {.kind = a->kind, .a = a->a, .b = a->b, .low = a->low, .range = a->range};
    if (a->p) j.p = cg_tensor_ptr(a->p), j.pdt = a->p->dtype;
    int64_t n = cg_tensor_numel(t);
    cg_rng_reserve(cg_rng_counters(n), &j.seed, &j.base);
    j.dt = t->dtype;
    j.out = cg_tensor_ptr(t);
    cg_parallel_for(n, SAMPLE_GRAIN, sample_range, &j);
    return CG_OK;
}

/* ------------------------------------------------------------- randperm (Fisher-Yates, src/ops/random.c) */

cg_status cg_cpu_randperm(cg_tensor *t) {
    int64_t n = t->shape[0];
    cg_dtype dt = t->dtype;
    int64_t *perm = dt == CG_DTYPE_I64 ? (int64_t *)cg_tensor_ptr(t) : cg_malloc_n("randperm", n, sizeof(int64_t));
    if (!perm) return cg_set_error(CG_ERR_OOM, "[randperm] out of memory for %lld indices", (long long)n);
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
    return CG_OK;
}

/* ------------------------------------------------------------- multinomial (the laws: src/ops/random.c) */

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

cg_status cg_cpu_multinomial(cg_tensor *out, const cg_tensor *pc, int64_t num_samples, bool replacement) {
    int64_t ncat = pc->shape[pc->ndim - 1], rows = pc->ndim == 2 ? pc->shape[0] : 1;
    double *w = cg_malloc_n("multinomial", cg_count_axpb(rows, ncat, 0), sizeof(double));
    cg_status st = CG_OK;
    if (!w) st = cg_set_error(CG_ERR_OOM, "[multinomial] out of memory");
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
    return st;
}
