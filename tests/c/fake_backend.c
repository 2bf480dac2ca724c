/* fake_backend.c — a second, test-only backend (Note [Backends] in
 * src/backend/backend.h). Its data lives in host memory, but a storage's data
 * pointer is a handle (the host address with bit 62 set: non-canonical, so a
 * direct dereference by any CPU code path faults). The backend alone turns
 * handles into addresses: in its copies, fill, its own serial runners of
 * iterator and reduction plans (running the CPU's loops of the op table's
 * rows, found by op id), and its custom-kernel entries (Note [Kernel entries]),
 * which stage their tensors through host memory and run the CPU's entries,
 * as a device backend without its own kernel would. Its table has the softmax
 * entries only, so every other custom op names itself and "fake" in a
 * NotImplementedError. This is how the seam is tested without a GPU. */
#include "fake_backend.h"

#include "backend/backend.h"
#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/elementwise_loops.gen.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_TAG ((uintptr_t)1 << 62)

static atomic_llong g_allocs, g_frees, g_to_device, g_to_host, g_runs, g_fills, g_kernels, g_live;

static char *host_of(const void *handle) {
    uintptr_t h = (uintptr_t)handle;
    CG_ASSERT(h & FAKE_TAG);
    return (char *)(h - FAKE_TAG);
}

/* the device's raw memory (g_live: its bytes), behind the fake's caching pool */
static void *fake_raw_alloc(size_t nbytes) {
    void *p = malloc(nbytes);
    if (!p) return NULL;
    atomic_fetch_add(&g_live, (long long)nbytes);
    return (void *)((uintptr_t)p + FAKE_TAG);
}
static void fake_raw_free(void *p, size_t nbytes) {
    atomic_fetch_sub(&g_live, (long long)nbytes);
    free(host_of(p));
}
/* device memory: the pool keeps its links in host nodes */
static cg_cache_pool g_pool = {.raw_alloc = fake_raw_alloc, .raw_free = fake_raw_free, .intrusive = false,
                               .lock = ATOMIC_FLAG_INIT};

static void *fake_alloc(size_t nbytes, cg_device dev) {
    (void)dev;
    atomic_fetch_add(&g_allocs, 1);
    return cg_pool_alloc(&g_pool, nbytes);
}
static void fake_free(void *p, size_t nbytes, cg_device dev) {
    (void)dev;
    atomic_fetch_add(&g_frees, 1);
    cg_pool_free(&g_pool, p, nbytes);
}
static cg_status fake_from_host(void *dst, const void *src, size_t nbytes, cg_device dev) {
    (void)dev;
    atomic_fetch_add(&g_to_device, 1);
    memcpy(host_of(dst), src, nbytes);
    return CG_OK;
}
static cg_status fake_to_host(void *dst, const void *src, size_t nbytes, cg_device dev) {
    (void)dev;
    atomic_fetch_add(&g_to_host, 1);
    memcpy(dst, host_of(src), nbytes);
    return CG_OK;
}
static cg_status fake_synchronize(cg_device dev) {
    (void)dev;
    return CG_OK;
}

/* the plan, run serially over its outer coordinates with host addresses */
static void run_plan(const cg_iter *plan, cg_loop_fn fn, const void *params) {
    if (plan->numel == 0) return;
    int n = plan->nargs;
    char *base[CG_ITER_MAX_ARGS];
    int64_t steps[CG_ITER_MAX_ARGS];
    for (int k = 0; k < n; k++) {
        base[k] = plan->ptr[k] ? host_of(plan->ptr[k]) : NULL; /* NULL: an empty input (a reduction over 0 elements) */
        steps[k] = plan->strides[k][0];
    }
    int64_t outer = plan->numel / plan->shape[0];
    for (int64_t o = 0; o < outer; o++) {
        char *ptr[CG_ITER_MAX_ARGS];
        int64_t rem = o;
        for (int k = 0; k < n; k++) ptr[k] = base[k];
        for (int d = 1; d < plan->ndim; d++) {
            int64_t c = rem % plan->shape[d];
            rem /= plan->shape[d];
            for (int k = 0; k < n; k++) ptr[k] += c * plan->strides[k][d];
        }
        fn(ptr, steps, plan->shape[0], params);
    }
}

/* the row's loops are the CPU's (a device backend compiles its own from the same op table) */
static cg_status fake_run_elementwise(cg_device dev, const cg_iter *plan, int op_id, cg_dtype dt, const void *params,
                                      int64_t grain) {
    (void)dev, (void)grain;
    atomic_fetch_add(&g_runs, 1);
    run_plan(plan, cg_cpu_elementwise_loops[op_id][dt], params);
    return CG_OK;
}
static void fake_copy(cg_device dev, const cg_iter *plan, cg_dtype dst, cg_dtype src) {
    (void)dev;
    atomic_fetch_add(&g_runs, 1);
    run_plan(plan, cg_cpu_cast_loop(dst, src), NULL);
}

/* a reduction: the kind's loop per output (the CPU's), serially (its cols / full paths are CPU speedups) */
static void reduce_outputs(char **args, const int64_t *steps, int64_t n, const void *ctx) {
    const cg_reduce_plan *p = ctx;
    cg_reduce_loop loop = cg_cpu_reduce_loop(p->kind, p->in_dtype);
    int in = p->has_idx ? 2 : 1;
    for (int64_t i = 0; i < n; i++)
        loop(args[0] + i * steps[0], p->has_idx ? args[1] + i * steps[1] : NULL, args[in] + i * steps[in], p->n,
                p->stride, p->params);
}
static cg_status fake_run_reduce(cg_device dev, const cg_reduce_plan *plan) {
    (void)dev;
    atomic_fetch_add(&g_runs, 1);
    run_plan(&plan->iter, reduce_outputs, plan);
    return CG_OK;
}

static void fill_bytes(char **args, const int64_t *steps, int64_t n, const void *params) {
    const size_t *isz = params;
    for (int64_t k = 0; k < n; k++) memcpy(args[0] + k * steps[0], args[1], *isz);
}
static void fake_fill(cg_device dev, const cg_iter *plan, const void *value, size_t itemsize) {
    (void)dev;
    atomic_fetch_add(&g_fills, 1);
    if (plan->numel == 0) return;
    /* the value is host memory: tag a copy's address so run_plan treats it as ours */
    cg_iter p = *plan;
    p.nargs = 2;
    p.ptr[1] = (char *)((uintptr_t)value + FAKE_TAG);
    for (int d = 0; d < p.ndim; d++) p.strides[1][d] = 0;
    run_plan(&p, fill_bytes, &itemsize);
}

/* ---- custom-kernel entries, staged: inputs are contiguous fake tensors */
static size_t nbytes_of(const cg_tensor *t) { return (size_t)cg_tensor_numel(t) * cg_itemsize(t->dtype); }
/* a host tensor holding t's values (NULL: out of memory, error set) */
static cg_tensor *staged(const cg_tensor *t) {
    cg_tensor *h = cg_tensor_new("fake", t->ndim, t->shape, t->dtype, cg_cpu());
    if (h && cg_tensor_numel(t)) fake_to_host(cg_tensor_ptr(h), cg_tensor_ptr(t), nbytes_of(t), t->device);
    return h;
}
/* out <- the host result h (released), or the failure status */
static cg_status unstage(cg_tensor *out, cg_tensor *h, cg_status st) {
    if (st == CG_OK && cg_tensor_numel(out)) fake_from_host(cg_tensor_ptr(out), cg_tensor_ptr(h), nbytes_of(out), out->device);
    cg_tensor_release(h);
    return st;
}

static cg_status fake_softmax(cg_tensor *y, const cg_tensor *x, int64_t dim, bool log) {
    atomic_fetch_add(&g_kernels, 1);
    cg_tensor *hx = staged(x), *hy = hx ? staged(y) : NULL;
    cg_status st = hy ? cg_backend_cpu.kernels->softmax(hy, hx, dim, log) : cg_last_error();
    cg_tensor_release(hx);
    return hy ? unstage(y, hy, st) : st;
}
static cg_status fake_softmax_backward(cg_tensor *gx, const cg_tensor *g, const cg_tensor *y, int64_t dim, bool log) {
    atomic_fetch_add(&g_kernels, 1);
    cg_tensor *hg = staged(g), *hy = hg ? staged(y) : NULL, *hgx = hy ? staged(gx) : NULL;
    cg_status st = hgx ? cg_backend_cpu.kernels->softmax_backward(hgx, hg, hy, dim, log) : cg_last_error();
    cg_tensor_release(hg);
    cg_tensor_release(hy);
    return hgx ? unstage(gx, hgx, st) : st;
}

static const cg_kernels k_fake_kernels = {
    .softmax = fake_softmax,
    .softmax_backward = fake_softmax_backward,
};

static const cg_backend k_fake = {
    .name = "fake",
    .has_data = true,
    .host_addressable = false,
    .alloc = fake_alloc,
    .free = fake_free,
    .copy_from_host = fake_from_host,
    .copy_to_host = fake_to_host,
    .synchronize = fake_synchronize,
    .run_elementwise = fake_run_elementwise,
    .copy = fake_copy,
    .run_reduce = fake_run_reduce,
    .fill = fake_fill,
    .kernels = &k_fake_kernels,
    .memory = &g_pool,
};

/* the pool's cached blocks back to the raw allocator at exit (their handles hide them from LeakSanitizer) */
static void empty_pool_at_exit(void) { cg_pool_empty(&g_pool); }

void fake_backend_install(void) {
    static atomic_flag once = ATOMIC_FLAG_INIT;
    if (!atomic_flag_test_and_set(&once)) atexit(empty_pool_at_exit);
    cg_backend_register_private(&k_fake);
}
cg_device fake_device(void) { return (cg_device){CG_DEVICE_PRIVATE, 0}; }
fake_counts fake_backend_counts(void) {
    return (fake_counts){atomic_load(&g_allocs), atomic_load(&g_frees), atomic_load(&g_to_device),
                         atomic_load(&g_to_host), atomic_load(&g_runs), atomic_load(&g_fills),
                         atomic_load(&g_kernels)};
}
int64_t fake_backend_live_bytes(void) { return atomic_load(&g_live); }
