/* test_threads_stress.c — several POSIX threads driving the engine at once:
 * forward/backward on separate graphs and on shared parameters, thread-local
 * grad / inference mode, draws from the global generator, and allocator
 * churn. Run in the normal C tests, under ASan, and under ThreadSanitizer
 * (make test-tsan), where any data race is a failure. The engine's own pool
 * is set to one thread here so that every access TSan sees comes from these
 * threads (OpenMP regions are covered by the thread-count invariance tests). */
#include "test.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define N_THREADS 4

typedef struct {
    int id;
    int rounds;
    cg_tensor *shared_w;   /* shared leaf (may be NULL) */
    double result;         /* per-thread result, read by the main thread */
    int failures;          /* checks that failed in this thread */
} worker;

static void run_threads(void *(*fn)(void *), worker *w, int n) {
    pthread_t th[N_THREADS];
    for (int i = 0; i < n; i++) CHECK(pthread_create(&th[i], NULL, fn, &w[i]) == 0);
    for (int i = 0; i < n; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < n; i++) CHECK_MSG(w[i].failures == 0, "thread %d: %d failed checks", i, w[i].failures);
}

/* loss = sum(tanh(x @ w + b)^2); returns it (new reference) or NULL */
static cg_tensor *mlp_loss(cg_tensor *x, cg_tensor *w, cg_tensor *b) {
    cg_tensor *h = cg_matmul(x, w);
    cg_tensor *hb = h ? cg_add(h, b) : NULL;
    cg_tensor *t = hb ? cg_tanh(hb) : NULL;
    cg_tensor *sq = t ? cg_mul(t, t) : NULL;
    cg_tensor *loss = sq ? cg_sum(sq, 0, NULL, false) : NULL;
    cg_tensor_release(h);
    cg_tensor_release(hb);
    cg_tensor_release(t);
    cg_tensor_release(sq);
    return loss;
}

static double grad_sum(const cg_tensor *t) {
    cg_tensor *g = cg_tensor_grad(t);
    if (!g) return NAN;
    double s = 0;
    for (int64_t i = 0; i < cg_tensor_numel(g); i++) s += tt_get(g, i);
    return s;
}

/* the whole step for one seed: leaves, loss, backward; returns sum of w.grad + loss */
static double separate_step(unsigned seed, int *failures) {
    const int64_t xs[2] = {16, 24}, ws[2] = {24, 8}, bs[1] = {8};
    cg_tensor *x = tt_rand(CG_DTYPE_F64, 2, xs, -1, 1, seed);
    cg_tensor *w = tt_rand(CG_DTYPE_F64, 2, ws, -1, 1, seed + 1);
    cg_tensor *b = tt_rand(CG_DTYPE_F64, 1, bs, -1, 1, seed + 2);
    double out = NAN;
    if (x && w && b && cg_tensor_set_requires_grad(w, true) == CG_OK && cg_tensor_set_requires_grad(b, true) == CG_OK) {
        cg_tensor *loss = mlp_loss(x, w, b);
        double l = NAN;
        if (loss && cg_tensor_item(loss, &l) == CG_OK && cg_backward(loss, NULL, false, false) == CG_OK)
            out = l + grad_sum(w) + grad_sum(b);
        else
            (*failures)++;
        cg_tensor_release(loss);
    } else {
        (*failures)++;
    }
    cg_tensor_release(x);
    cg_tensor_release(w);
    cg_tensor_release(b);
    return out;
}

static void *separate_graphs_worker(void *arg) {
    worker *w = arg;
    double acc = 0;
    for (int r = 0; r < w->rounds; r++) acc += separate_step((unsigned)(100 * w->id + r), &w->failures);
    w->result = acc;
    return NULL;
}

TEST(stress_threads_separate_graphs) {
    int prev = cg_get_num_threads();
    cg_set_num_threads(1);
    int64_t live0 = cg_allocator_stats(cg_cpu()).live_bytes;
    worker w[N_THREADS];
    double expect[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) {
        int f = 0;
        w[i] = (worker){.id = i, .rounds = 6};
        expect[i] = 0;
        for (int r = 0; r < w[i].rounds; r++) expect[i] += separate_step((unsigned)(100 * i + r), &f);
        CHECK(f == 0);
    }
    run_threads(separate_graphs_worker, w, N_THREADS);
    for (int i = 0; i < N_THREADS; i++)  /* the same code on the same data: the same bits */
        CHECK_MSG(w[i].result == expect[i], "thread %d: %.17g vs serial %.17g", i, w[i].result, expect[i]);
    CHECK(cg_allocator_stats(cg_cpu()).live_bytes == live0);
    cg_set_num_threads(prev);
}

static void *shared_params_worker(void *arg) {
    worker *w = arg;
    const int64_t xs[2] = {8, 12}, bs[1] = {6};
    cg_tensor *x = tt_rand(CG_DTYPE_F64, 2, xs, -1, 1, 7);  /* every thread the same batch */
    cg_tensor *b = cg_zeros(1, bs, CG_DTYPE_F64, cg_cpu());
    for (int r = 0; r < w->rounds && x && b; r++) {
        cg_tensor *loss = mlp_loss(x, w->shared_w, b);
        if (!loss || cg_backward(loss, NULL, false, false) != CG_OK) w->failures++;
        cg_tensor_release(loss);
    }
    if (!x || !b) w->failures++;
    cg_tensor_release(x);
    cg_tensor_release(b);
    return NULL;
}

TEST(stress_threads_shared_parameters) {
    int prev = cg_get_num_threads();
    cg_set_num_threads(1);
    const int64_t ws[2] = {12, 6}, xs[2] = {8, 12}, bs[1] = {6};
    cg_tensor *sw = tt_rand(CG_DTYPE_F64, 2, ws, -1, 1, 3);
    CHECK_OK(cg_tensor_set_requires_grad(sw, true));
    /* one step alone gives the gradient every step adds */
    cg_tensor *x = tt_rand(CG_DTYPE_F64, 2, xs, -1, 1, 7);
    cg_tensor *b = cg_zeros(1, bs, CG_DTYPE_F64, cg_cpu());
    cg_tensor *loss = mlp_loss(x, sw, b);
    CHECK_OK(cg_backward(loss, NULL, false, false));
    cg_tensor *g1 = cg_detach(cg_tensor_grad(sw));
    double one[72];  /* copied now: g1 aliases the gradient */
    CHECK_OK(cg_tensor_copy_to_buffer(g1, one, CG_DTYPE_F64));
    cg_tensor_release(g1);
    cg_tensor_release(loss);
    CHECK_OK(cg_tensor_set_grad(sw, NULL));

    worker w[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) w[i] = (worker){.id = i, .rounds = 5, .shared_w = sw};
    run_threads(shared_params_worker, w, N_THREADS);
    cg_tensor *g = cg_tensor_grad(sw);
    CHECK_NN(g);
    for (int64_t i = 0; g && i < 72; i++)
        CHECK_NEAR(tt_get(g, i), one[i] * N_THREADS * 5, 1e-10 * (1 + fabs(one[i]) * N_THREADS * 5));
    cg_tensor_release(x);
    cg_tensor_release(b);
    cg_tensor_release(sw);
    cg_set_num_threads(prev);
}

static void *grad_mode_worker(void *arg) {
    worker *w = arg;
    const int64_t s[1] = {4};
    cg_tensor *a = tt_rand(CG_DTYPE_F32, 1, s, -1, 1, (unsigned)w->id);
    if (!a || cg_tensor_set_requires_grad(a, true) != CG_OK) {
        w->failures++;
        cg_tensor_release(a);
        return NULL;
    }
    for (int r = 0; r < w->rounds; r++) {
        bool on = ((r + w->id) % 3) != 0, inf = ((r + w->id) % 5) == 0;
        cg_set_grad_enabled(on);
        if (inf) cg_set_inference_mode(true);
        bool expect_grad = on && !inf;
        if (cg_is_grad_enabled() != expect_grad) w->failures++;
        cg_tensor *y = cg_mul(a, a);
        if (!y || cg_tensor_requires_grad(y) != expect_grad) w->failures++;
        cg_tensor_release(y);
        if (inf) cg_set_inference_mode(false);
        cg_set_grad_enabled(true);
    }
    cg_tensor_release(a);
    return NULL;
}

TEST(stress_threads_grad_mode_is_per_thread) {
    worker w[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) w[i] = (worker){.id = i, .rounds = 300};
    run_threads(grad_mode_worker, w, N_THREADS);
    CHECK(cg_is_grad_enabled());
    CHECK(!cg_is_inference_mode());
}

static void *rng_worker(void *arg) {
    worker *w = arg;
    const int64_t s[1] = {10};  /* 5 counters per draw */
    double acc = 0;
    for (int r = 0; r < w->rounds; r++) {
        cg_tensor *t = (r & 1) ? cg_rand(1, s, CG_DTYPE_F32, cg_cpu()) : cg_randn(1, s, CG_DTYPE_F64, cg_cpu());
        if (!t) {
            w->failures++;
            continue;
        }
        for (int64_t i = 0; i < 10; i++) acc += tt_get(t, i);
        cg_tensor_release(t);
    }
    w->result = acc;
    return NULL;
}

TEST(stress_threads_global_generator) {
    cg_manual_seed(42);
    uint64_t seed0, off0, seed1, off1;
    cg_rng_get_state(&seed0, &off0);
    worker w[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) w[i] = (worker){.id = i, .rounds = 200};
    run_threads(rng_worker, w, N_THREADS);
    cg_rng_get_state(&seed1, &off1);
    CHECK(seed1 == seed0);
    /* every draw claimed its own counters: none lost, none shared */
    CHECK_MSG(off1 - off0 == (uint64_t)N_THREADS * 200 * 5, "offset advanced by %llu",
              (unsigned long long)(off1 - off0));
}

static void *alloc_worker(void *arg) {
    worker *w = arg;
    unsigned state = 12345u + (unsigned)w->id;
    for (int r = 0; r < w->rounds; r++) {
        state = state * 1103515245u + 12345u;
        int64_t n = 1 + (int64_t)((state >> 8) % 70000);
        double v = (double)(w->id * 1000 + r);
        cg_tensor *t = cg_scalar(v, CG_DTYPE_F64);
        cg_tensor *shape_src = cg_empty(1, &n, CG_DTYPE_F64, cg_cpu());
        cg_tensor *z = shape_src ? cg_zeros_like(shape_src) : NULL;
        cg_tensor *f = z && t ? cg_add(z, t) : NULL;  /* n copies of v */
        if (!f) {
            w->failures++;
        } else {
            const double *d = cg_tensor_data(f);
            if (d[0] != v || d[n - 1] != v || d[n / 2] != v) w->failures++;
        }
        cg_tensor_release(t);
        cg_tensor_release(shape_src);
        cg_tensor_release(z);
        cg_tensor_release(f);
    }
    return NULL;
}

TEST(stress_threads_allocator_churn) {
    int prev = cg_get_num_threads();
    cg_set_num_threads(1);
    int64_t live0 = cg_allocator_stats(cg_cpu()).live_bytes;
    worker w[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) w[i] = (worker){.id = i, .rounds = 150};
    run_threads(alloc_worker, w, N_THREADS);
    CHECK(cg_allocator_stats(cg_cpu()).live_bytes == live0);
    cg_set_num_threads(prev);
}
