/* test_random.c — random sampling: reproducibility from (seed, offset), the
 * documented offset advance, bitwise independence from the thread count,
 * sample statistics (moments, chi-square buckets), permutations, in-place
 * samplers (storage, version, autograd rules), normal(mean, std) gradients,
 * meta device, and argument errors. */
#include "core/core_internal.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

#define N_STAT 100000

/* all elements as doubles (new malloc'd buffer) */
static double *values(const cg_tensor *t) {
    int64_t n = cg_tensor_numel(t);
    double *v = malloc((size_t)(n ? n : 1) * sizeof(double));
    if (cg_tensor_copy_to_buffer(t, v, CG_DTYPE_F64)) CHECK_MSG(0, "copy_to_buffer: %s", cg_last_error_message());
    return v;
}

static void moments(const cg_tensor *t, double *mean, double *var) {
    int64_t n = cg_tensor_numel(t);
    double *v = values(t), s = 0, s2 = 0;
    for (int64_t i = 0; i < n; i++) s += v[i];
    *mean = s / (double)n;
    for (int64_t i = 0; i < n; i++) s2 += (v[i] - *mean) * (v[i] - *mean);
    *var = s2 / (double)(n - 1);
    free(v);
}

static bool same_bytes(const cg_tensor *a, const cg_tensor *b) {
    if (!a || !b || cg_tensor_dtype(a) != cg_tensor_dtype(b) || cg_tensor_numel(a) != cg_tensor_numel(b)) return false;
    return memcmp(cg_tensor_data(a), cg_tensor_data(b), (size_t)cg_tensor_numel(a) * cg_dtype_size(cg_tensor_dtype(a))) == 0;
}

static uint64_t offset_now(void) {
    uint64_t s, o;
    cg_rng_get_state(&s, &o);
    return o;
}

/* chi-square statistic of counts against expected probabilities */
static double chi2(const int64_t *counts, const double *p, int k, int64_t total) {
    double x = 0;
    for (int i = 0; i < k; i++) {
        if (p[i] == 0) continue;
        double e = p[i] * (double)total;
        x += (counts[i] - e) * (counts[i] - e) / e;
    }
    return x;
}

/* ---------------------------------------------------------------- reproducibility */

TEST(random_reproducible_and_offsets) {
    int64_t sh[2] = {3, 333};
    cg_manual_seed(7);
    cg_tensor *a = cg_rand(2, sh, CG_DTYPE_F32, cg_cpu());
    CHECK(offset_now() == 500); /* ceil(999 / 2) */
    cg_tensor *a2 = cg_rand(2, sh, CG_DTYPE_F32, cg_cpu());
    CHECK(offset_now() == 1000);
    cg_manual_seed(7);
    cg_tensor *b = cg_rand(2, sh, CG_DTYPE_F32, cg_cpu());
    CHECK(same_bytes(a, b));
    CHECK(!same_bytes(a, a2)); /* consecutive calls differ */
    cg_manual_seed(8);
    cg_tensor *c = cg_rand(2, sh, CG_DTYPE_F32, cg_cpu());
    CHECK(!same_bytes(a, c));
    /* set_state replays from any point */
    cg_rng_set_state(7, 500);
    cg_tensor *d = cg_rand(2, sh, CG_DTYPE_F32, cg_cpu());
    CHECK(same_bytes(a2, d));
    /* documented advances */
    cg_manual_seed(1);
    cg_tensor *r1 = cg_randn(1, (int64_t[]){7}, CG_DTYPE_F64, cg_cpu());
    CHECK(offset_now() == 4);
    cg_tensor *r2 = cg_randperm(9, CG_DTYPE_I64, cg_cpu());
    CHECK(offset_now() == 9);
    cg_tensor *pr = cg_full(2, (int64_t[]){3, 5}, 1.0, CG_DTYPE_F32, cg_cpu());
    cg_tensor *m1 = cg_multinomial(pr, 4, true);
    CHECK(offset_now() == 15); /* ceil(3*4/2) */
    cg_tensor *m2 = cg_multinomial(pr, 4, false);
    CHECK(offset_now() == 23); /* ceil(3*5/2) */
    cg_tensor *mt = cg_rand(1, (int64_t[]){100}, CG_DTYPE_F32, cg_meta());
    CHECK(mt && offset_now() == 23); /* meta draws nothing */
    CHECK_ERR(cg_randint(5, 5, 1, (int64_t[]){3}, CG_DTYPE_I64, cg_cpu()) == NULL, CG_ERR_VALUE, "low < high");
    CHECK(offset_now() == 23); /* failed calls draw nothing */
    cg_tensor *ts[] = {a, a2, b, c, d, r1, r2, pr, m1, m2, mt};
    for (int i = 0; i < 11; i++) cg_tensor_release(ts[i]);
}

TEST(random_stream_split_consistency) {
    /* any sub-range of a stream equals the same slice of the whole */
    double whole[37], part[37], nw[37], np[37];
    uint64_t uw[37], up[37];
    cg_rng_fill_uniform(3, 100, 0, 37, 53, whole);
    cg_rng_fill_normal(3, 100, 0, 37, nw);
    cg_rng_fill_u64(3, 100, 0, 37, uw);
    for (int b = 0; b < 37; b++) {
        for (int e = b; e <= 37; e += 5) {
            cg_rng_fill_uniform(3, 100, b, e, 53, part);
            cg_rng_fill_normal(3, 100, b, e, np);
            cg_rng_fill_u64(3, 100, b, e, up);
            CHECK(memcmp(part, whole + b, sizeof(double) * (size_t)(e - b)) == 0);
            CHECK(memcmp(np, nw + b, sizeof(double) * (size_t)(e - b)) == 0);
            CHECK(memcmp(up, uw + b, sizeof(uint64_t) * (size_t)(e - b)) == 0);
        }
    }
    /* the batched uniform fill is the scalar definition, element by element */
    enum { N = 1000 };
    static double u[N];
    int bad = 0;
    for (int digits = 24; digits <= 53; digits += 29)
        for (int64_t b = 0; b < 3; b++) {
            cg_rng_fill_uniform(0x123456789abcull, 77, b, N, digits, u);
            for (int64_t i = b; i < N; i++) {
                uint32_t w[4];
                cg_philox(0x123456789abcull, 77 + (uint64_t)(i / 2), w);
                uint64_t v = i % 2 ? ((uint64_t)w[2] << 32) | w[3] : ((uint64_t)w[0] << 32) | w[1];
                bad += u[i - b] != (double)(v >> (64 - digits)) * ldexp(1.0, -digits);
            }
        }
    CHECK_MSG(bad == 0, "%d batched uniforms differ from the scalar Philox stream", bad);
}

/* ---------------------------------------------------------------- thread independence */

enum { K_RAND, K_RANDN, K_RANDINT, K_UNIFORM_, K_NORMAL_, K_BERN_, K_BERN_P, K_NORMAL_T, K_RANDPERM, K_MN_R, K_MN_NR, K_COUNT };

static cg_tensor *draw(int kind, int64_t n) {
    int64_t sh[1] = {n};
    cg_tensor *t = NULL;
    switch (kind) {
    case K_RAND: return cg_rand(1, sh, CG_DTYPE_F32, cg_cpu());
    case K_RANDN: return cg_randn(1, sh, CG_DTYPE_F64, cg_cpu());
    case K_RANDINT: return cg_randint(-1000, 1000, 1, sh, CG_DTYPE_I32, cg_cpu());
    case K_UNIFORM_:
        t = cg_empty(1, sh, CG_DTYPE_BF16, cg_cpu());
        cg_uniform_(t, -2, 3);
        return t;
    case K_NORMAL_:
        t = cg_empty(1, sh, CG_DTYPE_F16, cg_cpu());
        cg_normal_(t, 1, 2);
        return t;
    case K_BERN_:
        t = cg_empty(1, sh, CG_DTYPE_U8, cg_cpu());
        cg_bernoulli_(t, 0.25);
        return t;
    case K_BERN_P: {
        cg_tensor *p = cg_linspace(0, 1, n, CG_DTYPE_F32, cg_cpu());
        t = cg_bernoulli(p);
        cg_tensor_release(p);
        return t;
    }
    case K_NORMAL_T: {
        cg_tensor *m = cg_linspace(-1, 1, n, CG_DTYPE_F64, cg_cpu()), *s = cg_scalar(2.0, CG_DTYPE_F64);
        t = cg_normal(m, s);
        cg_tensor_release(m);
        cg_tensor_release(s);
        return t;
    }
    case K_RANDPERM: return cg_randperm(n, CG_DTYPE_I64, cg_cpu());
    case K_MN_R:
    case K_MN_NR: {
        int64_t ps[2] = {n / 10, 10};
        cg_tensor *p = cg_rand(2, ps, CG_DTYPE_F64, cg_cpu());
        t = cg_multinomial(p, kind == K_MN_R ? 7 : 5, kind == K_MN_R);
        cg_tensor_release(p);
        return t;
    }
    }
    return NULL;
}

TEST(random_thread_count_independent) {
    int prev = cg_get_num_threads();
    const int64_t n = 99999; /* odd, so thread ranges start on odd elements */
    for (int kind = 0; kind < K_COUNT; kind++) {
        cg_tensor *r[3];
        for (int th = 1; th <= 3; th++) {
            cg_set_num_threads(th);
            cg_manual_seed(2024);
            r[th - 1] = draw(kind, n);
            CHECK_NN(r[th - 1]);
        }
        CHECK_MSG(same_bytes(r[0], r[1]) && same_bytes(r[0], r[2]), "kind %d differs across thread counts", kind);
        for (int i = 0; i < 3; i++) cg_tensor_release(r[i]);
    }
    cg_set_num_threads(prev);
}

/* ---------------------------------------------------------------- statistics */

TEST(random_rand_randn_statistics) {
    int64_t sh[1] = {N_STAT};
    const cg_dtype fl[] = {CG_DTYPE_F64, CG_DTYPE_F32, CG_DTYPE_F16, CG_DTYPE_BF16};
    cg_manual_seed(11);
    for (int d = 0; d < 4; d++) {
        double loose = fl[d] == CG_DTYPE_BF16 ? 0.01 : fl[d] == CG_DTYPE_F16 ? 0.003 : 0;
        cg_tensor *u = cg_rand(1, sh, fl[d], cg_cpu());
        double mean, var;
        moments(u, &mean, &var);
        CHECK_NEAR(mean, 0.5, 0.005 + loose);
        CHECK_NEAR(var, 1.0 / 12, 0.002 + loose);
        double *v = values(u);
        double lo = 1, hi = 0;
        for (int64_t i = 0; i < N_STAT; i++) lo = fmin(lo, v[i]), hi = fmax(hi, v[i]);
        CHECK(lo >= 0 && hi < 1);
        free(v);
        cg_tensor *z = cg_randn(1, sh, fl[d], cg_cpu());
        moments(z, &mean, &var);
        CHECK_NEAR(mean, 0, 0.016 + loose);
        CHECK_NEAR(var, 1, 0.025 + 2 * loose);
        /* tails: P(|z| > 2) = 0.0455 */
        v = values(z);
        int64_t tail = 0;
        for (int64_t i = 0; i < N_STAT; i++) tail += fabs(v[i]) > 2;
        CHECK_NEAR((double)tail / N_STAT, 0.0455, 0.004);
        free(v);
        cg_tensor_release(u);
        cg_tensor_release(z);
    }
}

TEST(random_inplace_statistics) {
    int64_t sh[2] = {250, 400};
    cg_manual_seed(12);
    cg_tensor *t = cg_empty(2, sh, CG_DTYPE_F64, cg_cpu());
    double mean, var;
    CHECK_OK(cg_normal_(t, 3, 2));
    moments(t, &mean, &var);
    CHECK_NEAR(mean, 3, 0.035);
    CHECK_NEAR(var, 4, 0.1);
    CHECK_OK(cg_uniform_(t, -2, 5));
    moments(t, &mean, &var);
    CHECK_NEAR(mean, 1.5, 0.035);
    CHECK_NEAR(var, 49.0 / 12, 0.06);
    double *v = values(t);
    bool inside = true;
    for (int64_t i = 0; i < N_STAT; i++) inside &= v[i] >= -2 && v[i] < 5;
    CHECK(inside);
    free(v);
    CHECK_OK(cg_bernoulli_(t, 0.3));
    moments(t, &mean, &var);
    CHECK_NEAR(mean, 0.3, 0.0075);
    CHECK_NEAR(var, 0.21, 0.005);
    /* bernoulli_ on bool and int tensors */
    cg_tensor *b = cg_empty(2, sh, CG_DTYPE_BOOL, cg_cpu());
    CHECK_OK(cg_bernoulli_(b, 0.8));
    moments(b, &mean, &var);
    CHECK_NEAR(mean, 0.8, 0.0065);
    CHECK_OK(cg_bernoulli_(b, 0.0));
    moments(b, &mean, &var);
    CHECK_NEAR(mean, 0, 0);
    CHECK_OK(cg_bernoulli_(b, 1.0));
    moments(b, &mean, &var);
    CHECK_NEAR(mean, 1, 0);
    cg_tensor_release(t);
    cg_tensor_release(b);
}

TEST(random_bernoulli_tensor_statistics) {
    /* first half p = 0.1, second half p = 0.9, in float32 and bfloat16 */
    const cg_dtype dts[] = {CG_DTYPE_F32, CG_DTYPE_BF16};
    cg_manual_seed(13);
    for (int d = 0; d < 2; d++) {
        int64_t sh[2] = {2, N_STAT / 2};
        cg_tensor *p = cg_empty(2, sh, dts[d], cg_cpu());
        cg_tensor *r0 = cg_select(p, 0, 0), *r1 = cg_select(p, 0, 1);
        cg_fill_(r0, 0.1);
        cg_fill_(r1, 0.9);
        cg_tensor *x = cg_bernoulli(p);
        CHECK(x && cg_tensor_dtype(x) == dts[d] && cg_tensor_ndim(x) == 2);
        double *v = values(x);
        double s0 = 0, s1 = 0;
        for (int64_t i = 0; i < N_STAT / 2; i++) s0 += v[i], s1 += v[N_STAT / 2 + i];
        CHECK_NEAR(s0 / (N_STAT / 2), dts[d] == CG_DTYPE_BF16 ? 0.10009765625 : 0.1, 0.007);
        CHECK_NEAR(s1 / (N_STAT / 2), 0.9, 0.007);
        free(v);
        cg_tensor *ts[] = {p, r0, r1, x};
        for (int i = 0; i < 4; i++) cg_tensor_release(ts[i]);
    }
}

TEST(random_normal_tensor_statistics) {
    int64_t sh[1] = {N_STAT};
    cg_tensor *m = cg_scalar(1.0, CG_DTYPE_F32), *s = cg_full(1, sh, 0.5, CG_DTYPE_F32, cg_cpu());
    cg_manual_seed(14);
    cg_tensor *x = cg_normal(m, s);
    CHECK(x && cg_tensor_numel(x) == N_STAT && cg_tensor_dtype(x) == CG_DTYPE_F32);
    double mean, var;
    moments(x, &mean, &var);
    CHECK_NEAR(mean, 1, 0.008);
    CHECK_NEAR(var, 0.25, 0.007);
    /* it is mean + std * randn of the same state */
    cg_manual_seed(14);
    cg_tensor *z = cg_randn(1, sh, CG_DTYPE_F32, cg_cpu());
    CHECK_NEAR(tt_get(x, 17), 1 + 0.5 * tt_get(z, 17), 1e-6);
    /* std 0 gives the mean exactly */
    cg_tensor *zs = cg_zeros(1, sh, CG_DTYPE_F32, cg_cpu());
    cg_tensor *y = cg_normal(m, zs);
    moments(y, &mean, &var);
    CHECK_NEAR(mean, 1, 0);
    CHECK_NEAR(var, 0, 0);
    cg_tensor *ts[] = {m, s, x, z, zs, y};
    for (int i = 0; i < 6; i++) cg_tensor_release(ts[i]);
}

TEST(random_randint_buckets) {
    int64_t sh[1] = {N_STAT};
    const cg_dtype dts[] = {CG_DTYPE_I64, CG_DTYPE_I8, CG_DTYPE_I16, CG_DTYPE_I32, CG_DTYPE_F32, CG_DTYPE_F64, CG_DTYPE_BF16};
    cg_manual_seed(15);
    for (int d = 0; d < 7; d++) {
        cg_tensor *t = cg_randint(-3, 7, 1, sh, dts[d], cg_cpu());
        CHECK(t && cg_tensor_dtype(t) == dts[d]);
        double *v = values(t);
        int64_t counts[10] = {0};
        bool ok = true;
        for (int64_t i = 0; i < N_STAT; i++) {
            ok &= v[i] >= -3 && v[i] < 7 && v[i] == floor(v[i]);
            if (ok) counts[(int)v[i] + 3]++;
        }
        CHECK(ok);
        double p[10];
        for (int i = 0; i < 10; i++) p[i] = 0.1;
        CHECK_MSG(chi2(counts, p, 10, N_STAT) < 40, "randint chi2 %g (dtype %s)", chi2(counts, p, 10, N_STAT),
                  cg_dtype_name(dts[d]));
        free(v);
        cg_tensor_release(t);
    }
    /* bool and uint8 full ranges; a huge int64 range */
    cg_tensor *b = cg_randint(0, 2, 1, sh, CG_DTYPE_BOOL, cg_cpu());
    double mean, var;
    moments(b, &mean, &var);
    CHECK_NEAR(mean, 0.5, 0.008);
    cg_tensor *u8 = cg_randint(0, 256, 1, sh, CG_DTYPE_U8, cg_cpu());
    moments(u8, &mean, &var);
    CHECK_NEAR(mean, 127.5, 1.5);
    cg_tensor *big = cg_randint(INT64_MIN, INT64_MAX, 1, (int64_t[]){1000}, CG_DTYPE_I64, cg_cpu());
    const int64_t *bv = cg_tensor_data(big);
    int neg = 0;
    for (int i = 0; i < 1000; i++) neg += bv[i] < 0;
    CHECK(neg > 400 && neg < 600);
    cg_tensor_release(b);
    cg_tensor_release(u8);
    cg_tensor_release(big);
}

TEST(random_randint_like_and_like_forms) {
    int64_t sh[2] = {4, 5};
    cg_tensor *t = cg_zeros(2, sh, CG_DTYPE_I16, cg_cpu()), *f = cg_zeros(2, sh, CG_DTYPE_F16, cg_cpu());
    cg_tensor *a = cg_randint_like(t, 10, 20), *b = cg_rand_like(f), *c = cg_randn_like(f);
    CHECK(a && cg_tensor_dtype(a) == CG_DTYPE_I16 && cg_tensor_shape(a)[1] == 5);
    for (int i = 0; i < 20; i++) CHECK(tt_get(a, i) >= 10 && tt_get(a, i) < 20);
    CHECK(b && cg_tensor_dtype(b) == CG_DTYPE_F16 && c && cg_tensor_dtype(c) == CG_DTYPE_F16);
    CHECK_ERR(cg_rand_like(t) == NULL, CG_ERR_DTYPE, "[rand] not supported for dtype int16");
    CHECK_ERR(cg_randn_like(NULL) == NULL, CG_ERR_VALUE, "NULL");
    cg_tensor *ts[] = {t, f, a, b, c};
    for (int i = 0; i < 5; i++) cg_tensor_release(ts[i]);
}

/* ---------------------------------------------------------------- randperm */

static bool is_perm(const cg_tensor *t, int64_t n) {
    if (!t || cg_tensor_numel(t) != n) return false;
    double *v = values(t);
    char *seen = calloc((size_t)n + 1, 1);
    bool ok = true;
    for (int64_t i = 0; i < n && ok; i++) {
        int64_t k = (int64_t)v[i];
        ok = k >= 0 && k < n && (double)k == v[i] && !seen[k];
        if (ok) seen[k] = 1;
    }
    free(seen);
    free(v);
    return ok;
}

TEST(random_randperm) {
    cg_manual_seed(16);
    const cg_dtype dts[] = {CG_DTYPE_I64, CG_DTYPE_I32, CG_DTYPE_I16, CG_DTYPE_F32, CG_DTYPE_F64};
    for (int d = 0; d < 5; d++) {
        cg_tensor *p = cg_randperm(1000, dts[d], cg_cpu());
        CHECK(p && cg_tensor_dtype(p) == dts[d] && is_perm(p, 1000));
        cg_tensor_release(p);
    }
    cg_tensor *z = cg_randperm(0, CG_DTYPE_I64, cg_cpu()), *o = cg_randperm(1, CG_DTYPE_I64, cg_cpu());
    CHECK(z && cg_tensor_numel(z) == 0 && o && tt_get(o, 0) == 0);
    cg_tensor_release(z);
    cg_tensor_release(o);
    cg_manual_seed(3);
    cg_tensor *a = cg_randperm(5000, CG_DTYPE_I64, cg_cpu());
    cg_manual_seed(3);
    cg_tensor *b = cg_randperm(5000, CG_DTYPE_I64, cg_cpu());
    CHECK(same_bytes(a, b) && is_perm(a, 5000));
    cg_tensor_release(a);
    cg_tensor_release(b);
    /* all 6 orders of 3 equally likely */
    int64_t counts[6] = {0};
    for (int r = 0; r < 6000; r++) {
        cg_tensor *p = cg_randperm(3, CG_DTYPE_I64, cg_cpu());
        const int64_t *v = cg_tensor_data(p);
        counts[v[0] * 2 + (v[1] > v[2])]++;
        cg_tensor_release(p);
    }
    double pr[6] = {1. / 6, 1. / 6, 1. / 6, 1. / 6, 1. / 6, 1. / 6};
    CHECK_MSG(chi2(counts, pr, 6, 6000) < 30, "randperm chi2 %g", chi2(counts, pr, 6, 6000));
}

/* ---------------------------------------------------------------- multinomial */

TEST(random_multinomial_with_replacement) {
    const double p[5] = {0.1, 0.2, 0.0, 0.3, 0.4};
    cg_tensor *pt = tt_tensor(CG_DTYPE_F32, 1, (int64_t[]){5}, (const double[]){1, 2, 0, 3, 4}); /* unnormalised */
    cg_manual_seed(17);
    cg_tensor *s = cg_multinomial(pt, N_STAT, true);
    CHECK(s && cg_tensor_ndim(s) == 1 && cg_tensor_shape(s)[0] == N_STAT && cg_tensor_dtype(s) == CG_DTYPE_I64);
    const int64_t *v = cg_tensor_data(s);
    int64_t counts[5] = {0};
    for (int64_t i = 0; i < N_STAT; i++) counts[v[i]]++;
    CHECK(counts[2] == 0);
    CHECK_MSG(chi2(counts, p, 5, N_STAT) < 30, "multinomial chi2 %g", chi2(counts, p, 5, N_STAT));
    /* 2-D rows, float16 probabilities, one-hot rows always give their category */
    cg_tensor *oh = tt_tensor(CG_DTYPE_F16, 2, (int64_t[]){2, 3}, (const double[]){0, 0, 5, 0, 1, 0});
    cg_tensor *so = cg_multinomial(oh, 50, true);
    CHECK(so && cg_tensor_ndim(so) == 2 && cg_tensor_shape(so)[0] == 2 && cg_tensor_shape(so)[1] == 50);
    for (int i = 0; i < 50; i++) CHECK(tt_get(so, i) == 2 && tt_get(so, 50 + i) == 1);
    cg_tensor_release(oh);
    cg_tensor_release(so);
    cg_tensor_release(pt);
    cg_tensor_release(s);
}

TEST(random_multinomial_without_replacement) {
    const double p[5] = {0.1, 0.2, 0.0, 0.3, 0.4};
    const int64_t rows = 20000;
    cg_tensor *one = tt_tensor(CG_DTYPE_F64, 2, (int64_t[]){1, 5}, p);
    cg_tensor *pt = cg_expand(one, 2, (int64_t[]){rows, 5}); /* stride-0 rows */
    cg_manual_seed(18);
    cg_tensor *s = cg_multinomial(pt, 4, false);
    CHECK(s && cg_tensor_shape(s)[0] == rows && cg_tensor_shape(s)[1] == 4);
    const int64_t *v = cg_tensor_data(s);
    int64_t first[5] = {0}, second[5] = {0};
    bool distinct = true;
    for (int64_t r = 0; r < rows; r++) {
        int mask = 0;
        for (int k = 0; k < 4; k++) mask |= 1 << v[r * 4 + k];
        distinct &= mask == 0x1b; /* exactly the nonzero categories {0,1,3,4} */
        first[v[r * 4]]++;
        second[v[r * 4 + 1]]++;
    }
    CHECK(distinct);
    CHECK_MSG(chi2(first, p, 5, rows) < 30, "first draw chi2 %g", chi2(first, p, 5, rows));
    /* P(second = j) = sum_{i != j} p_i p_j / (1 - p_i) */
    double p2[5] = {0};
    for (int j = 0; j < 5; j++)
        for (int i = 0; i < 5; i++)
            if (i != j) p2[j] += p[i] * p[j] / (1 - p[i]);
    CHECK_MSG(chi2(second, p2, 5, rows) < 30, "second draw chi2 %g", chi2(second, p2, 5, rows));
    cg_tensor_release(one);
    cg_tensor_release(pt);
    cg_tensor_release(s);
}

/* ---------------------------------------------------------------- in-place rules */

static cg_tensor *times_two(cg_tensor *x) {
    cg_tensor *two = cg_scalar(2.0, cg_tensor_dtype(x));
    cg_tensor *y = cg_mul(x, two);
    cg_tensor_release(two);
    return y;
}

TEST(random_inplace_matches_out_of_place) {
    int64_t sh[2] = {33, 31};
    cg_tensor *t = cg_empty(2, sh, CG_DTYPE_F32, cg_cpu());
    const void *sid = cg_tensor_storage_id(t);
    uint64_t v0 = cg_tensor_version(t);
    cg_manual_seed(21);
    CHECK_OK(cg_uniform_(t, 0, 1));
    cg_manual_seed(21);
    cg_tensor *r = cg_rand(2, sh, CG_DTYPE_F32, cg_cpu());
    CHECK(same_bytes(t, r));
    CHECK(cg_tensor_storage_id(t) == sid && cg_tensor_version(t) == v0 + 1);
    cg_manual_seed(22);
    CHECK_OK(cg_normal_(t, 0, 1));
    cg_manual_seed(22);
    cg_tensor *n = cg_randn(2, sh, CG_DTYPE_F32, cg_cpu());
    CHECK(same_bytes(t, n));
    CHECK(cg_tensor_version(t) == v0 + 2);
    cg_manual_seed(23);
    CHECK_OK(cg_bernoulli_(t, 0.4));
    cg_manual_seed(23);
    cg_tensor *pf = cg_full(2, sh, 0.4, CG_DTYPE_F32, cg_cpu());
    cg_tensor *b = cg_bernoulli(pf);
    CHECK(same_bytes(t, b));
    /* a non-contiguous target gets the same values in row-major order */
    cg_tensor *nc = tt_noncontig(t);
    CHECK(!cg_tensor_is_contiguous(nc));
    const void *nsid = cg_tensor_storage_id(nc);
    uint64_t nv = cg_tensor_version(nc);
    cg_manual_seed(22);
    CHECK_OK(cg_normal_(nc, 0, 1));
    CHECK(tt_maxdiff(nc, n) == 0);
    CHECK(cg_tensor_storage_id(nc) == nsid && cg_tensor_version(nc) == nv + 1);
    cg_tensor *ts[] = {t, r, n, pf, b, nc};
    for (int i = 0; i < 6; i++) cg_tensor_release(ts[i]);
}

TEST(random_inplace_autograd_rules) {
    int64_t sh[1] = {6};
    cg_tensor *leaf = cg_zeros(1, sh, CG_DTYPE_F64, cg_cpu());
    cg_tensor_set_requires_grad(leaf, true);
    CHECK_ERR(cg_normal_(leaf, 0, 1) != CG_OK, CG_ERR_RUNTIME, "leaf Variable that requires grad");
    CHECK_ERR(cg_uniform_(leaf, 0, 1) != CG_OK, CG_ERR_RUNTIME, "[uniform_]");
    CHECK_ERR(cg_bernoulli_(leaf, 0.5) != CG_OK, CG_ERR_RUNTIME, "[bernoulli_]");
    bool prev = cg_set_grad_enabled(false);
    CHECK_OK(cg_uniform_(leaf, 2, 3)); /* allowed without grad mode */
    cg_set_grad_enabled(prev);
    CHECK(tt_get(leaf, 0) >= 2 && tt_get(leaf, 0) < 3);
    /* a non-leaf loses its history: the new values do not depend on the input */
    cg_tensor *y = cg_mul(leaf, leaf);
    CHECK(cg_tensor_requires_grad(y));
    CHECK_OK(cg_normal_(y, 0, 1));
    CHECK(!cg_tensor_requires_grad(y) && cg_tensor_grad_fn(y) == NULL);
    /* a view of a non-leaf: its base gets CopySlices; the overwritten region gets no gradient */
    cg_tensor *x = tt_rand(CG_DTYPE_F64, 1, (int64_t[]){4}, -1, 1, 41);
    cg_tensor_set_requires_grad(x, true);
    cg_tensor *x2 = times_two(x);
    cg_tensor *v = cg_slice(x2, 0, 1, 3, 1);
    uint64_t ver = cg_tensor_version(x2);
    CHECK_OK(cg_uniform_(v, 5, 6));
    CHECK(cg_tensor_version(x2) == ver + 1 && tt_get(x2, 1) >= 5 && tt_get(x2, 2) < 6);
    cg_tensor *sum = cg_sum(x2, 0, NULL, false);
    CHECK_OK(cg_backward(sum, NULL, false, false));
    const double gref[4] = {2, 0, 0, 2};
    for (int i = 0; i < 4; i++) CHECK_NEAR(tt_get(cg_tensor_grad(x), i), gref[i], 0);
    /* a view of a leaf requiring grad is refused like the leaf */
    cg_tensor *lv = cg_slice(x, 0, 0, 2, 1);
    CHECK_ERR(cg_normal_(lv, 0, 1) != CG_OK, CG_ERR_RUNTIME, "[normal_]");
    cg_tensor *ts[] = {x, x2, v, sum, lv};
    for (int i = 0; i < 5; i++) cg_tensor_release(ts[i]);
    /* stride-0 targets are refused */
    cg_tensor *s = cg_zeros(1, (int64_t[]){1}, CG_DTYPE_F32, cg_cpu());
    cg_tensor *e = cg_expand(s, 1, (int64_t[]){4});
    CHECK_ERR(cg_uniform_(e, 0, 1) != CG_OK, CG_ERR_RUNTIME, "single memory location");
    cg_tensor_release(leaf);
    cg_tensor_release(y);
    cg_tensor_release(s);
    cg_tensor_release(e);
}

/* ---------------------------------------------------------------- normal(mean, std) gradients */

static cg_tensor *f_normal(cg_tensor *const *x, void *ctx) {
    (void)ctx;
    cg_manual_seed(99); /* the same noise on every evaluation */
    return cg_normal(x[0], x[1]);
}

static void check_normal_grads(cg_tensor *mean, cg_tensor *std) {
    cg_tensor_set_requires_grad(mean, true);
    cg_tensor_set_requires_grad(std, true);
    cg_tensor *in[2] = {mean, std};
    CHECK(tt_gradcheck(f_normal, NULL, 2, in, 1e-6, 1e-7, 1e-5));
    CHECK(tt_gradgradcheck(f_normal, NULL, 2, in, 1e-6, 1e-7, 1e-5));
}

TEST(random_normal_gradients) {
    /* broadcast */
    cg_tensor *m = tt_rand(CG_DTYPE_F64, 2, (int64_t[]){3, 1}, -1, 1, 31);
    cg_tensor *s = tt_rand(CG_DTYPE_F64, 2, (int64_t[]){1, 4}, 0.5, 1.5, 32);
    check_normal_grads(m, s);
    /* non-contiguous */
    cg_tensor *m0 = tt_rand(CG_DTYPE_F64, 2, (int64_t[]){3, 4}, -1, 1, 33);
    cg_tensor *s0 = tt_rand(CG_DTYPE_F64, 2, (int64_t[]){3, 4}, 0.5, 1.5, 34);
    cg_tensor *mn = tt_noncontig(m0), *sn = tt_noncontig(s0);
    check_normal_grads(mn, sn);
    /* 0-d and empty */
    cg_tensor *mz = cg_scalar(0.3, CG_DTYPE_F64), *sz = cg_scalar(0.7, CG_DTYPE_F64);
    check_normal_grads(mz, sz);
    cg_tensor *me = cg_zeros(2, (int64_t[]){0, 3}, CG_DTYPE_F64, cg_cpu()), *se = cg_ones(1, (int64_t[]){3}, CG_DTYPE_F64, cg_cpu());
    check_normal_grads(me, se);
    /* the std gradient is g * eps with eps the drawn noise */
    cg_tensor *in[2] = {m, s};
    cg_tensor *y = f_normal(in, NULL);
    cg_tensor *sum = cg_sum(y, 0, NULL, false);
    CHECK_OK(cg_backward(sum, NULL, false, false));
    cg_manual_seed(99);
    cg_tensor *eps = cg_randn(2, (int64_t[]){3, 4}, CG_DTYPE_F64, cg_cpu());
    for (int j = 0; j < 4; j++) {
        double ref = 0;
        for (int i = 0; i < 3; i++) ref += tt_get(eps, i * 4 + j);
        CHECK_NEAR(tt_get(cg_tensor_grad(s), j), ref, 1e-12);
    }
    CHECK_NEAR(tt_get(cg_tensor_grad(m), 0), 4, 0);
    CHECK(strcmp(cg_node_name(cg_tensor_grad_fn(y)), "NormalBackward3") == 0);
    cg_tensor *ts[] = {m, s, m0, s0, mn, sn, mz, sz, me, se, y, sum, eps};
    for (int i = 0; i < 13; i++) cg_tensor_release(ts[i]);
}

TEST(random_normal_half_and_meta) {
    int64_t sh[1] = {1000};
    const cg_dtype dts[] = {CG_DTYPE_F16, CG_DTYPE_BF16};
    for (int d = 0; d < 2; d++) {
        cg_tensor *m = cg_full(1, sh, 2.0, dts[d], cg_cpu()), *s = cg_scalar(0.5, dts[d]);
        cg_manual_seed(5);
        cg_tensor *x = cg_normal(m, s);
        cg_manual_seed(5);
        cg_tensor *z = cg_randn(1, sh, dts[d], cg_cpu());
        CHECK(x && cg_tensor_dtype(x) == dts[d]);
        for (int i = 0; i < 1000; i += 97) CHECK_NEAR(tt_get(x, i), 2 + 0.5 * tt_get(z, i), 0.02);
        cg_tensor *ts[] = {m, s, x, z};
        for (int i = 0; i < 4; i++) cg_tensor_release(ts[i]);
    }
    uint64_t o = offset_now();
    cg_tensor *mm = cg_empty(2, (int64_t[]){2, 1}, CG_DTYPE_F32, cg_meta());
    cg_tensor *sm = cg_empty(1, (int64_t[]){5}, CG_DTYPE_F32, cg_meta());
    cg_tensor *xm = cg_normal(mm, sm);
    CHECK(xm && cg_tensor_shape(xm)[0] == 2 && cg_tensor_shape(xm)[1] == 5 && cg_tensor_data(xm) == NULL);
    CHECK_OK(cg_normal_(sm, 0, 1));
    CHECK_OK(cg_bernoulli_(sm, 0.5));
    cg_tensor *bm = cg_bernoulli(sm), *mnm = cg_multinomial(mm, 3, true);
    cg_tensor *rm = cg_randint(0, 3, 1, (int64_t[]){4}, CG_DTYPE_I64, cg_meta()), *pm = cg_randperm(7, CG_DTYPE_I64, cg_meta());
    CHECK(bm && mnm && cg_tensor_shape(mnm)[1] == 3 && rm && pm && cg_tensor_numel(pm) == 7);
    CHECK(offset_now() == o);
    cg_tensor *ts[] = {mm, sm, xm, bm, mnm, rm, pm};
    for (int i = 0; i < 7; i++) cg_tensor_release(ts[i]);
}

/* ---------------------------------------------------------------- errors */

TEST(random_errors) {
    int64_t sh[1] = {4};
    CHECK_ERR(cg_rand(1, sh, CG_DTYPE_I64, cg_cpu()) == NULL, CG_ERR_DTYPE, "[rand] not supported for dtype int64");
    CHECK_ERR(cg_randn(1, sh, CG_DTYPE_BOOL, cg_cpu()) == NULL, CG_ERR_DTYPE, "[randn] not supported for dtype bool");
    CHECK_ERR(cg_rand(1, (int64_t[]){-2}, CG_DTYPE_F32, cg_cpu()) == NULL, CG_ERR_SHAPE, "[rand] negative size");
    CHECK_ERR(cg_rand(1, sh, (cg_dtype)77, cg_cpu()) == NULL, CG_ERR_DTYPE, "invalid dtype");
    CHECK_ERR(cg_randint(3, 2, 1, sh, CG_DTYPE_I64, cg_cpu()) == NULL, CG_ERR_VALUE, "expects low < high");
    CHECK_ERR(cg_randint(0, 300, 1, sh, CG_DTYPE_U8, cg_cpu()) == NULL, CG_ERR_VALUE, "out of bounds for dtype uint8");
    CHECK_ERR(cg_randint(-1, 1, 1, sh, CG_DTYPE_BOOL, cg_cpu()) == NULL, CG_ERR_VALUE, "out of bounds for dtype bool");
    CHECK_ERR(cg_randint(0, 5000, 1, sh, CG_DTYPE_F16, cg_cpu()) == NULL, CG_ERR_VALUE, "float16");
    CHECK_ERR(cg_randint(0, 5, 1, (int64_t[]){-1}, CG_DTYPE_I64, cg_cpu()) == NULL, CG_ERR_SHAPE, "negative size");
    CHECK_ERR(cg_randperm(-1, CG_DTYPE_I64, cg_cpu()) == NULL, CG_ERR_SHAPE, "[randperm] n must be non-negative");
    CHECK_ERR(cg_randperm(300, CG_DTYPE_I8, cg_cpu()) == NULL, CG_ERR_VALUE, "too large for dtype int8");
    CHECK_ERR(cg_randperm(3, CG_DTYPE_BOOL, cg_cpu()) == NULL, CG_ERR_NOT_IMPLEMENTED, "bool");

    cg_tensor *f = cg_ones(1, sh, CG_DTYPE_F32, cg_cpu()), *d = cg_ones(1, sh, CG_DTYPE_F64, cg_cpu());
    cg_tensor *i = cg_ones(1, sh, CG_DTYPE_I64, cg_cpu()), *f3 = cg_ones(1, (int64_t[]){3}, CG_DTYPE_F32, cg_cpu());
    cg_tensor *neg = tt_tensor(CG_DTYPE_F32, 1, sh, (const double[]){1, 0, -0.5, 2});
    CHECK_ERR(cg_normal(f, d) == NULL, CG_ERR_DTYPE, "dtype mismatch");
    CHECK_ERR(cg_normal(i, i) == NULL, CG_ERR_DTYPE, "[normal] not supported for dtype int64");
    CHECK_ERR(cg_normal(f, f3) == NULL, CG_ERR_SHAPE, "[normal]");
    CHECK_ERR(cg_normal(f, neg) == NULL, CG_ERR_VALUE, "std >= 0.0, found -0.5");
    CHECK_ERR(cg_normal(NULL, f) == NULL, CG_ERR_VALUE, "NULL");
    cg_tensor *fm = cg_ones(1, sh, CG_DTYPE_F32, cg_meta());
    CHECK_ERR(cg_normal(f, fm) == NULL, CG_ERR_DEVICE, "same device");

    CHECK_ERR(cg_uniform_(f, 2, 1) != CG_OK, CG_ERR_VALUE, "low <= high");
    CHECK_ERR(cg_uniform_(i, 0, 1) != CG_OK, CG_ERR_DTYPE, "[uniform_] not supported for dtype int64");
    CHECK_ERR(cg_normal_(f, 0, -1) != CG_OK, CG_ERR_VALUE, "std >= 0.0");
    CHECK_ERR(cg_normal_(i, 0, 1) != CG_OK, CG_ERR_DTYPE, "[normal_]");
    CHECK_ERR(cg_bernoulli_(f, 1.5) != CG_OK, CG_ERR_VALUE, "0 <= p <= 1");
    CHECK_ERR(cg_bernoulli_(f, NAN) != CG_OK, CG_ERR_VALUE, "0 <= p <= 1");
    CHECK_ERR(cg_bernoulli_(NULL, 0.5) != CG_OK, CG_ERR_VALUE, "NULL");
    cg_tensor *pbad = tt_tensor(CG_DTYPE_F32, 1, sh, (const double[]){0, 0.5, 1.2, 1});
    CHECK_ERR(cg_bernoulli(pbad) == NULL, CG_ERR_VALUE, "found 1.2");
    CHECK_ERR(cg_bernoulli(i) == NULL, CG_ERR_DTYPE, "[bernoulli] not supported for dtype int64");

    cg_tensor *pnan = tt_tensor(CG_DTYPE_F32, 1, sh, (const double[]){0, NAN, 1, 1});
    cg_tensor *pinf = tt_tensor(CG_DTYPE_F64, 1, sh, (const double[]){0, INFINITY, 1, 1});
    cg_tensor *pz = tt_tensor(CG_DTYPE_F32, 2, (int64_t[]){2, 2}, (const double[]){1, 1, 0, 0});
    cg_tensor *p3 = cg_ones(3, (int64_t[]){2, 2, 2}, CG_DTYPE_F32, cg_cpu());
    cg_tensor *p0d = cg_scalar(1.0, CG_DTYPE_F32);
    cg_tensor *psparse = tt_tensor(CG_DTYPE_F32, 1, sh, (const double[]){0, 1, 0, 1});
    CHECK_ERR(cg_multinomial(neg, 1, true) == NULL, CG_ERR_VALUE, "element < 0");
    CHECK_ERR(cg_multinomial(pnan, 1, true) == NULL, CG_ERR_VALUE, "inf, nan");
    CHECK_ERR(cg_multinomial(pinf, 1, true) == NULL, CG_ERR_VALUE, "inf, nan");
    CHECK_ERR(cg_multinomial(pz, 1, true) == NULL, CG_ERR_VALUE, "row 1 sums to 0");
    CHECK_ERR(cg_multinomial(p3, 1, true) == NULL, CG_ERR_SHAPE, "1 or 2 dim");
    CHECK_ERR(cg_multinomial(p0d, 1, true) == NULL, CG_ERR_SHAPE, "1 or 2 dim");
    CHECK_ERR(cg_multinomial(f, 0, true) == NULL, CG_ERR_VALUE, "num_samples must be positive");
    CHECK_ERR(cg_multinomial(f, 5, false) == NULL, CG_ERR_VALUE, "without replacement");
    CHECK_ERR(cg_multinomial(psparse, 3, false) == NULL, CG_ERR_VALUE, "only 2 nonzero categories");
    CHECK_ERR(cg_multinomial(i, 1, true) == NULL, CG_ERR_DTYPE, "[multinomial] not supported for dtype int64");
    cg_tensor *ok = cg_multinomial(psparse, 2, false);
    CHECK(ok && ((tt_get(ok, 0) == 1 && tt_get(ok, 1) == 3) || (tt_get(ok, 0) == 3 && tt_get(ok, 1) == 1)));
    cg_tensor *ts[] = {f, d, i, f3, neg, fm, pbad, pnan, pinf, pz, p3, p0d, psparse, ok};
    for (int k = 0; k < 14; k++) cg_tensor_release(ts[k]);
}
