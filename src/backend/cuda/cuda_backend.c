/* cuda_backend.c — the cuda device's entry in the backend table (Note
 * [Backends]) and the public CUDA calls of cgrad.h. Plain C, in every engine:
 * it loads the kernel library libcgrad_cuda.so at the first use of a cuda
 * device (Note [CUDA kernel library]) and reaches the GPU only through that
 * library's entry points (cuda_abi.h). Device memory goes through one caching
 * pool per device; work is enqueued on the device's stream, so the pool's
 * reuse of a freed block is ordered after the work that used it. */
#include "cuda_backend.h"

#include "../backend.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(CGCU_MAX_DIMS == CG_MAX_DIMS && CGCU_MAX_ARGS == CG_ITER_MAX_ARGS, "cuda_abi.h's limits");
_Static_assert(sizeof(cgcu_plan) == sizeof(cg_iter), "cgcu_plan mirrors cg_iter");
_Static_assert(offsetof(cgcu_plan, strides) == offsetof(cg_iter, strides), "cgcu_plan mirrors cg_iter");

#define CUDA_MAX_DEVICES 16

/* ------------------------------------------------------------- loading the kernel library */

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static const cgcu_api *g_api;   /* NULL: not loaded */
static int g_count;             /* usable devices */
static bool g_built;            /* the library was found and loaded */
static char g_reason[1200];     /* why there is no device ("" when there is one) */
extern const cg_backend cg_backend_cuda;

/* the folder of the file holding the engine's code (libcgrad*.so, or a program linking its objects) */
static bool engine_dir(char *out, size_t cap) {
    Dl_info info;
    if (!dladdr((void *)&engine_dir, &info) || !info.dli_fname) return false;
    const char *slash = strrchr(info.dli_fname, '/');
    if (!slash) return snprintf(out, cap, ".") < (int)cap;
    return snprintf(out, cap, "%.*s", (int)(slash - info.dli_fname), info.dli_fname) < (int)cap;
}

static void load(void) {
    char path[4096];
    const char *env = getenv("CGRAD_CUDA_LIBRARY");
    if (env && *env) {
        snprintf(path, sizeof path, "%s", env);
    } else {
        char dir[3800];
        if (!engine_dir(dir, sizeof dir)) {
            snprintf(g_reason, sizeof g_reason, "the engine's folder could not be found to load libcgrad_cuda.so");
            return;
        }
        /* a C install's per-level engines sit in libdir/glibc-hwcaps/<level>/, the library in libdir */
        char *hw = strstr(dir, "/glibc-hwcaps/");
        if (hw && !strchr(hw + strlen("/glibc-hwcaps/"), '/')) *hw = '\0';
        snprintf(path, sizeof path, "%s/libcgrad_cuda.so", dir);
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(g_reason, sizeof g_reason,
                 "this cgrad was built without its CUDA kernel library (libcgrad_cuda.so could not be loaded: %.900s)",
                 e ? e : path);
        return;
    }
    cgcu_get_api_fn get = (cgcu_get_api_fn)(uintptr_t)dlsym(h, CGCU_GET_API_SYMBOL);
    const cgcu_api *api = get ? get(CGCU_ABI_VERSION) : NULL;
    if (!api) {
        snprintf(g_reason, sizeof g_reason, "%.900s is not a CUDA kernel library of this engine (ABI %d)", path,
                 CGCU_ABI_VERSION);
        dlclose(h);
        return;
    }
    g_built = true;
    int n = 0, st = api->device_count(&n);
    void *driver = st != CGCU_OK ? dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL) : NULL;
    if (st != CGCU_OK && !driver) {
        snprintf(g_reason, sizeof g_reason, "found no NVIDIA driver on this system (libcuda.so.1 could not be loaded)");
    } else if (st != CGCU_OK) {
        dlclose(driver);
        snprintf(g_reason, sizeof g_reason, "CUDA is not usable here: %s", api->error_string(st));
    } else if (n == 0) {
        snprintf(g_reason, sizeof g_reason, "no CUDA GPUs are available");
    } else {
        g_api = api;
        g_count = n < CUDA_MAX_DEVICES ? n : CUDA_MAX_DEVICES;
    }
}

static const cgcu_api *api_get(void) {
    pthread_once(&g_once, load);
    return g_api;
}

const cg_backend *cg_backend_cuda_get(void) { return api_get() ? &cg_backend_cuda : NULL; }


/* ------------------------------------------------------------- errors
 * A status of the library as the engine's error, naming the op. Asynchronous
 * failures of work that returns nothing (copy, fill) are kept per device and
 * reported by its next copy to the host or synchronize. */

static _Atomic int g_pending[CUDA_MAX_DEVICES];

static cg_status fail(const char *op, cg_device dev, int st) {
    if (st == CGCU_MISSING) return cg_kernel_missing(op, dev);
    if (st == CGCU_OOM) return cg_set_error(CG_ERR_OOM, "[%s] CUDA out of memory on cuda:%d", op, dev.index);
    return cg_set_error(CG_ERR_RUNTIME, "[%s] CUDA error on cuda:%d: %s", op, dev.index, g_api->error_string(st));
}

static void keep_pending(cg_device dev, int st) {
    int none = 0;
    if (st != CGCU_OK) atomic_compare_exchange_strong(&g_pending[dev.index], &none, st);
}

/* the pending status of dev (cleared), else st */
static int with_pending(cg_device dev, int st) {
    int p = atomic_exchange(&g_pending[dev.index], 0);
    return p ? p : st;
}

/* ------------------------------------------------------------- memory: one caching pool per device */

#define RAW_FNS(i)                                                                                       \
    static void *raw_alloc_##i(size_t nbytes) {                                                          \
        void *p = NULL;                                                                                  \
        return g_api->malloc(i, nbytes, &p) == CGCU_OK ? p : NULL;                                       \
    }                                                                                                    \
    static void raw_free_##i(void *p, size_t nbytes) {                                                   \
        (void)nbytes;                                                                                    \
        g_api->free(i, p);                                                                               \
    }
#define POOL(i) {.raw_alloc = raw_alloc_##i, .raw_free = raw_free_##i, .intrusive = false, .lock = ATOMIC_FLAG_INIT}
RAW_FNS(0) RAW_FNS(1) RAW_FNS(2) RAW_FNS(3) RAW_FNS(4) RAW_FNS(5) RAW_FNS(6) RAW_FNS(7)
RAW_FNS(8) RAW_FNS(9) RAW_FNS(10) RAW_FNS(11) RAW_FNS(12) RAW_FNS(13) RAW_FNS(14) RAW_FNS(15)
static cg_cache_pool g_pools[CUDA_MAX_DEVICES] = {POOL(0),  POOL(1),  POOL(2),  POOL(3), POOL(4),  POOL(5),
                                                  POOL(6),  POOL(7),  POOL(8),  POOL(9), POOL(10), POOL(11),
                                                  POOL(12), POOL(13), POOL(14), POOL(15)};

cg_cache_pool *cg_cuda_pool(int index) {
    return api_get() && index >= 0 && index < g_count ? &g_pools[index] : NULL;
}

/* Note [Mock CUDA library]: the tests serve the cuda devices from a host-memory library of the same ABI
 * (tests/c/mock_cuda.c) on machines without a GPU, so every line of this file runs in make test. The
 * caches of the pools go back to the library that allocated them before the switch. */
static const cgcu_api *g_loaded_api; /* what loading found, kept while a test library serves */
static int g_loaded_count;
static bool g_swapped;

void cg_cuda_use_library(const cgcu_api *api, int ndev) {
    api_get();
    for (int i = 0; i < g_count; i++) cg_pool_empty(&g_pools[i]);
    for (int i = 0; i < CUDA_MAX_DEVICES; i++) atomic_store(&g_pending[i], 0);
    if (!g_swapped) g_loaded_api = g_api, g_loaded_count = g_count;
    g_swapped = api != NULL;
    g_api = api ? api : g_loaded_api;
    g_count = api ? (ndev < CUDA_MAX_DEVICES ? ndev : CUDA_MAX_DEVICES) : g_loaded_count;
}

static void *cuda_alloc(size_t nbytes, cg_device dev) {
    cg_cache_pool *pool = &g_pools[dev.index];
    void *p = cg_pool_alloc(pool, nbytes);
    if (!p) { /* PyTorch's rule: free the cached blocks once and try again */
        cg_pool_empty(pool);
        p = cg_pool_alloc(pool, nbytes);
    }
    if (!p) {
        size_t free_b = 0, total = 0;
        g_api->mem_info(dev.index, &free_b, &total);
        cg_set_error(CG_ERR_OOM, "CUDA out of memory. Tried to allocate %zu bytes on cuda:%d (%zu of %zu bytes free)",
                     nbytes, dev.index, free_b, total);
    }
    return p;
}

static void cuda_free(void *p, size_t nbytes, cg_device dev) { cg_pool_free(&g_pools[dev.index], p, nbytes); }

static cg_status cuda_from_host(void *dst, const void *src, size_t nbytes, cg_device dev) {
    int st = nbytes ? g_api->copy_h2d(dev.index, dst, src, nbytes) : CGCU_OK;
    return st ? fail("copy to cuda", dev, st) : CG_OK;
}

static cg_status cuda_to_host(void *dst, const void *src, size_t nbytes, cg_device dev) {
    int st = with_pending(dev, nbytes ? g_api->copy_d2h(dev.index, dst, src, nbytes) : CGCU_OK);
    return st ? fail("copy to cpu", dev, st) : CG_OK;
}

static cg_status cuda_synchronize(cg_device dev) {
    int st = with_pending(dev, g_api->synchronize(dev.index));
    return st ? fail("synchronize", dev, st) : CG_OK;
}

/* ------------------------------------------------------------- the generic runners */

static cg_status cuda_run_elementwise(cg_device dev, const cg_iter *plan, int op_id, cg_dtype dt, const void *params,
                                      int64_t grain) {
    (void)grain;
    if (plan->numel == 0) return CG_OK;
    cg_loop_params *lp = (cg_loop_params *)(uintptr_t)params;
    int loop_error = 0;
    int st = g_api->elementwise(dev.index, (const cgcu_plan *)plan, op_id, (int)dt, lp->p, &loop_error);
    /* the driver names the op (its errors start with the op's name) */
    if (st) return fail("elementwise", dev, st);
    if (loop_error) cg_loop_flag_error(params);
    return CG_OK;
}

static void cuda_copy(cg_device dev, const cg_iter *plan, cg_dtype dst, cg_dtype src) {
    if (plan->numel) keep_pending(dev, g_api->cast(dev.index, (const cgcu_plan *)plan, (int)dst, (int)src));
}

static void cuda_fill(cg_device dev, const cg_iter *plan, const void *value, size_t itemsize) {
    if (plan->numel) keep_pending(dev, g_api->fill(dev.index, (const cgcu_plan *)plan, value, itemsize));
}

static cg_status cuda_run_reduce(cg_device dev, const cg_reduce_plan *plan) {
    if (plan->iter.numel == 0) return CG_OK;
    cgcu_reduce_plan p;
    memcpy(&p.iter, &plan->iter, sizeof p.iter);
    p.n = plan->n, p.stride = plan->stride;
    p.in_dtype = (int)plan->in_dtype, p.out_dtype = (int)plan->out_dtype;
    p.has_idx = plan->has_idx, p.kind = (int)plan->kind;
    memset(p.params, 0, sizeof p.params);
    for (int i = 0; i < plan->nparams && i < CGCU_MAX_PARAMS; i++) p.params[i] = plan->params[i];
    int st = g_api->reduce(dev.index, &p);
    return st ? fail("reduction", dev, st) : CG_OK; /* the driver names the op */
}

/* ------------------------------------------------------------- scratch and staging */

static size_t nbytes_of(const cg_tensor *t) { return (size_t)cg_tensor_numel(t) * cg_itemsize(t->dtype); }

/* the plan of a dense copy between t (any strides) and a contiguous buffer of t's shape and dtype:
 * to_dense: buffer <- t, else t <- buffer */
static void dense_plan(cgcu_plan *p, const cg_tensor *t, void *buffer, bool to_dense) {
    memset(p, 0, sizeof *p);
    p->nargs = 2;
    p->numel = cg_tensor_numel(t);
    p->ndim = t->ndim ? t->ndim : 1;
    int64_t isz = (int64_t)cg_itemsize(t->dtype), run = isz;
    int o = to_dense ? 1 : 0, d = to_dense ? 0 : 1;
    for (int i = 0; i < p->ndim; i++) p->shape[i] = 1;
    for (int i = 0; i < t->ndim; i++) {
        int k = t->ndim - 1 - i; /* dim 0 innermost */
        p->shape[k] = t->shape[i];
    }
    for (int k = 0; k < t->ndim; k++) {
        int i = t->ndim - 1 - k;
        p->strides[o][k] = t->strides[i] * isz;
        p->strides[d][k] = run;
        run *= t->shape[i];
    }
    p->ptr[o] = cg_tensor_ptr(t);
    p->ptr[d] = buffer;
}

/* a host tensor holding t's values (t on cuda, any strides), with t's strides when t is dense (a
 * channels-last tensor stays channels-last), else contiguous; NULL + error on failure */
static cg_tensor *staged(const char *op, const cg_tensor *t) {
    cg_tensor *h = cg_tensor_new(op, t->ndim, t->shape, t->dtype, cg_cpu());
    if (!h || !cg_tensor_numel(t)) return h;
    size_t nb = nbytes_of(t);
    void *src = cg_tensor_ptr(t), *tmp = NULL;
    int st = CGCU_OK;
    if (cg_tensor_is_non_overlapping_and_dense(t)) {
        if (!cg_tensor_is_contiguous(t)) {
            cg_tensor *hs = cg_tensor_make(h->storage, 0, t->ndim, t->shape, t->strides, t->dtype);
            cg_tensor_release(h);
            if (!hs) return NULL;
            h = hs;
        }
    } else {
        tmp = cuda_alloc(nb, t->device);
        if (!tmp) {
            cg_tensor_release(h);
            return NULL;
        }
        cgcu_plan p;
        dense_plan(&p, t, tmp, true);
        st = g_api->cast(t->device.index, &p, (int)t->dtype, (int)t->dtype);
        src = tmp;
    }
    if (!st) st = with_pending(t->device, g_api->copy_d2h(t->device.index, cg_tensor_ptr(h), src, nb));
    if (tmp) cuda_free(tmp, nb, t->device);
    if (st) {
        fail(op, t->device, st);
        cg_tensor_release(h);
        return NULL;
    }
    return h;
}

/* t (on cuda, any strides) <- the host tensor h of its shape and dtype, laid out as staged() lays t out */
static cg_status unstage(const char *op, cg_tensor *t, const cg_tensor *h) {
    size_t nb = nbytes_of(t);
    if (!nb) return CG_OK;
    if (cg_tensor_is_non_overlapping_and_dense(t)) {
        int st = g_api->copy_h2d(t->device.index, cg_tensor_ptr(t), cg_tensor_ptr(h), nb);
        return st ? fail(op, t->device, st) : CG_OK;
    }
    void *tmp = cuda_alloc(nb, t->device);
    if (!tmp) return cg_last_error();
    int st = g_api->copy_h2d(t->device.index, tmp, cg_tensor_ptr(h), nb);
    if (!st) {
        cgcu_plan p;
        dense_plan(&p, t, tmp, false);
        st = g_api->cast(t->device.index, &p, (int)t->dtype, (int)t->dtype);
    }
    cuda_free(tmp, nb, t->device);
    return st ? fail(op, t->device, st) : CG_OK;
}

/* Note [Staged entries]: a custom kernel the library has no CUDA kernel for yet runs as the CPU's entry
 * on host copies: every tensor argument is staged (read back, waiting for the device), the CPU entry
 * runs, and the tensors it writes are copied back. Correct and deterministic (the RNG entries draw the
 * CPU's Philox stream, so a seeded sample on cuda equals the CPU's bit for bit), but synchronous and
 * bound by the host link: each is a CUDA kernel to come. */
typedef struct {
    cg_tensor *h[CG_MAX_DIMS + 4]; /* the most an entry stages: index_offsets (off, x, an index per dim) */
    int n;
} stage_set;

/* the host copy of t (NULL stays NULL); false + error on failure */
static bool stage_in(stage_set *s, const char *op, const cg_tensor *t, cg_tensor **out) {
    *out = t ? staged(op, t) : NULL;
    s->h[s->n++] = *out;
    return !t || *out;
}

/* copies the written tensors back (pairs: nw times a cuda tensor, NULL when not written, and its host
 * copy), then releases every host copy; returns the first failure */
static cg_status stage_end(stage_set *s, const char *op, cg_status st, int nw, cg_tensor *const *pairs) {
    for (int i = 0; i < nw && !st; i++)
        if (pairs[2 * i]) st = unstage(op, pairs[2 * i], pairs[2 * i + 1]);
    for (int i = 0; i < s->n; i++) cg_tensor_release(s->h[i]);
    return st;
}
#define STAGE_BEGIN(name)   \
    const char *op_ = name; \
    stage_set s_ = {0};     \
    cg_status st = CG_OK
/* h <- the host copy of the cuda tensor t (NULL stays NULL) */
#define STAGE(t, h)    \
    cg_tensor *h = NULL; \
    if (!st && !stage_in(&s_, op_, (t), &h)) st = cg_last_error()
#define STAGE_RUN(call) \
    if (!st) st = cg_backend_cpu.kernels->call
/* nw (cuda tensor, host copy) pairs to copy back */
#define STAGE_END(nw, ...) return stage_end(&s_, op_, st, nw, (cg_tensor *const[]){__VA_ARGS__})

/* ------------------------------------------------------------- kernel entries: host-value queries
 * Entries whose answer is host data (values, a found-or-not, a count) read
 * their tensor back and run the CPU's entry on it; like PyTorch's, each waits
 * for the device. */

static cg_status k_load_values(const cg_tensor *t, double *out) {
    cg_tensor *h = staged("load_values", t);
    if (!h) return cg_last_error();
    cg_status st = cg_backend_cpu.kernels->load_values(h, out);
    cg_tensor_release(h);
    return st;
}

static cg_status k_store_values(cg_tensor *t, const double *v) {
    cg_tensor *h = cg_tensor_new("store_values", t->ndim, t->shape, t->dtype, cg_cpu());
    if (!h) return cg_last_error();
    cg_status st = cg_backend_cpu.kernels->store_values(h, v);
    if (!st) st = unstage("store_values", t, h);
    cg_tensor_release(h);
    return st;
}

#define STAGED_QUERY(fn, op, params, call)                                                                  \
    static cg_status fn params {                                                                            \
        cg_tensor *h = staged(op, t);                                                                       \
        if (!h) return cg_last_error();                                                                     \
        cg_status st = cg_backend_cpu.kernels->call;                                                        \
        cg_tensor_release(h);                                                                               \
        return st;                                                                                          \
    }
STAGED_QUERY(k_find_outside, "find_outside", (const cg_tensor *t, double lo, double hi, bool *found, double *bad),
             find_outside(h, lo, hi, found, bad))
STAGED_QUERY(k_class_target_check, "class_target_check",
             (const cg_tensor *t, int64_t C, int64_t ignore, bool *found, int64_t *bad),
             class_target_check(h, C, ignore, found, bad))
STAGED_QUERY(k_index_find, "index", (const cg_tensor *t, int64_t lo, int64_t hi, bool *found, int64_t *bad),
             index_find_out_of_range(h, lo, hi, found, bad))
STAGED_QUERY(k_one_hot_scan, "one_hot", (const cg_tensor *t, bool *negative, int64_t *bad, int64_t *max),
             one_hot_scan(h, negative, bad, max))
STAGED_QUERY(k_nonzero_count, "nonzero", (const cg_tensor *t, int64_t *count), nonzero_count(h, count))

/* nonzero: a data-dependent shape, computed on the host as PyTorch's waits for the device */
static cg_status k_nonzero(cg_tensor *out, const cg_tensor *t) {
    cg_tensor *h = staged("nonzero", t);
    if (!h) return cg_last_error();
    cg_tensor *ho = cg_tensor_new("nonzero", out->ndim, out->shape, out->dtype, cg_cpu());
    cg_status st = ho ? cg_backend_cpu.kernels->nonzero(ho, h) : cg_last_error();
    if (!st) st = unstage("nonzero", out, ho);
    cg_tensor_release(h);
    cg_tensor_release(ho);
    return st;
}

/* ------------------------------------------------------------- kernel entries: staged (Note [Staged entries]) */

static cg_status k_conv(cg_conv_kind kind, const cg_conv_geom *g, cg_tensor *out, const cg_tensor *a,
                        const cg_tensor *b, const cg_tensor *bias) {
    STAGE_BEGIN("conv");
    STAGE(out, ho);
    STAGE(a, ha);
    STAGE(b, hb);
    STAGE(bias, hbias);
    STAGE_RUN(conv(kind, g, ho, ha, hb, hbias));
    STAGE_END(1, out, ho);
}
static cg_status k_conv_bias_grad(cg_tensor *out, const cg_tensor *g) {
    STAGE_BEGIN("conv_bias_grad");
    STAGE(out, ho);
    STAGE(g, hg);
    STAGE_RUN(conv_bias_grad(ho, hg));
    STAGE_END(1, out, ho);
}
static cg_status k_pool(cg_pool_kind kind, const cg_pool_geom *g, cg_tensor *dst, cg_tensor *idx,
                        const cg_tensor *src) {
    STAGE_BEGIN("pool");
    STAGE(dst, hd);
    STAGE(idx, hi);
    STAGE(src, hs);
    STAGE_RUN(pool(kind, g, hd, hi, hs));
    STAGE_END(2, dst, hd, idx, hi);
}
static cg_status k_max_pool_backward(const cg_pool_geom *g, cg_tensor *gx, const cg_tensor *gy,
                                     const cg_tensor *idx) {
    STAGE_BEGIN("max_pool_backward");
    STAGE(gx, hgx);
    STAGE(gy, hgy);
    STAGE(idx, hi);
    STAGE_RUN(max_pool_backward(g, hgx, hgy, hi));
    STAGE_END(1, gx, hgx);
}
static cg_status k_max_pool_codes_to_index(const cg_pool_geom *g, cg_tensor *index, const cg_tensor *codes) {
    STAGE_BEGIN("max_pool");
    STAGE(index, hi);
    STAGE(codes, hc);
    STAGE_RUN(max_pool_codes_to_index(g, hi, hc));
    STAGE_END(1, index, hi);
}
static cg_status k_lstm_layer(bool reverse, cg_tensor *acts, cg_tensor *cells, cg_tensor *out, cg_tensor *hn,
                              cg_tensor *cn, const cg_tensor *xp, const cg_tensor *h0, const cg_tensor *c0,
                              const cg_tensor *w) {
    STAGE_BEGIN("lstm");
    STAGE(acts, ha);
    STAGE(cells, hc);
    STAGE(out, ho);
    STAGE(hn, hhn);
    STAGE(cn, hcn);
    STAGE(xp, hx);
    STAGE(h0, hh0);
    STAGE(c0, hc0);
    STAGE(w, hw);
    STAGE_RUN(lstm_layer(reverse, ha, hc, ho, hhn, hcn, hx, hh0, hc0, hw));
    STAGE_END(5, acts, ha, cells, hc, out, ho, hn, hhn, cn, hcn);
}
static cg_status k_lstm_layer_backward(bool reverse, cg_tensor *dG, cg_tensor *dh, cg_tensor *dc, cg_tensor *dw,
                                       const cg_tensor *go, const cg_tensor *acts, const cg_tensor *cells,
                                       const cg_tensor *out, const cg_tensor *h0, const cg_tensor *c0,
                                       const cg_tensor *w) {
    STAGE_BEGIN("lstm_backward");
    STAGE(dG, hdG);
    STAGE(dh, hdh);
    STAGE(dc, hdc);
    STAGE(dw, hdw);
    STAGE(go, hgo);
    STAGE(acts, ha);
    STAGE(cells, hc);
    STAGE(out, ho);
    STAGE(h0, hh0);
    STAGE(c0, hc0);
    STAGE(w, hw);
    STAGE_RUN(lstm_layer_backward(reverse, hdG, hdh, hdc, hdw, hgo, ha, hc, ho, hh0, hc0, hw));
    STAGE_END(4, dG, hdG, dh, hdh, dc, hdc, dw, hdw);
}
static cg_status k_norm(cg_tensor *y, const cg_tensor *x, double eps, double *mean, double *var) {
    STAGE_BEGIN("norm");
    STAGE(y, hy);
    STAGE(x, hx);
    STAGE_RUN(norm(hy, hx, eps, mean, var));
    STAGE_END(1, y, hy);
}
static cg_status k_norm_backward(cg_tensor *gx, const cg_tensor *g, const cg_tensor *x, const cg_tensor *mean,
                                 const cg_tensor *invstd) {
    STAGE_BEGIN("norm_backward");
    STAGE(gx, hgx);
    STAGE(g, hg);
    STAGE(x, hx);
    STAGE(mean, hm);
    STAGE(invstd, hi);
    STAGE_RUN(norm_backward(hgx, hg, hx, hm, hi));
    STAGE_END(1, gx, hgx);
}
static cg_status k_batch_norm(cg_tensor *y, const cg_tensor *x, const double *w, const double *b, double eps,
                              double *mean, double *var) {
    STAGE_BEGIN("batch_norm");
    STAGE(y, hy);
    STAGE(x, hx);
    STAGE_RUN(batch_norm(hy, hx, w, b, eps, mean, var));
    STAGE_END(1, y, hy);
}
static cg_status k_batch_norm_transform(cg_tensor *y, const cg_tensor *x, const double *alpha, const double *beta) {
    STAGE_BEGIN("batch_norm");
    STAGE(y, hy);
    STAGE(x, hx);
    STAGE_RUN(batch_norm_transform(hy, hx, alpha, beta));
    STAGE_END(1, y, hy);
}
static cg_status k_batch_norm_backward(cg_tensor *gx, const cg_tensor *g, const cg_tensor *x, const double *mean,
                                       const double *invstd, const double *w, double *sum_g, double *sum_gxm) {
    STAGE_BEGIN("batch_norm_backward");
    STAGE(gx, hgx);
    STAGE(g, hg);
    STAGE(x, hx);
    STAGE_RUN(batch_norm_backward(hgx, hg, hx, mean, invstd, w, sum_g, sum_gxm));
    STAGE_END(1, gx, hgx);
}
/* random.cu: the counters reserved here, as the CPU's entry reserves them; `kept` in m's dtype as the
 * CPU stores it */
static cg_status k_dropout_mask(cg_tensor *m, double keep, double kept) {
    int64_t n = cg_tensor_numel(m);
    uint64_t seed, base;
    cg_rng_reserve(cg_rng_counters(n), &seed, &base);
    unsigned char kb[8];
    cg_store_f64(kb, m->dtype, kept);
    int st = g_api->dropout_mask(m->device.index, cg_tensor_ptr(m), n, (int)cg_itemsize(m->dtype), kb, keep, seed,
                                 base);
    return st ? fail("dropout", m->device, st) : CG_OK;
}
static cg_status k_resample_u8(cg_tensor *y, const cg_tensor *x, int64_t P, int64_t In, int64_t O, int64_t R,
                               const int64_t *start, const int64_t *count, const int16_t *w, int64_t K, unsigned prec) {
    STAGE_BEGIN("interpolate");
    STAGE(y, hy);
    STAGE(x, hx);
    STAGE_RUN(resample_u8(hy, hx, P, In, O, R, start, count, w, K, prec));
    STAGE_END(1, y, hy);
}
static cg_status k_embedding(cg_tensor *out, const cg_tensor *w, const cg_tensor *idx) { /* index.cu */
    int st = g_api->embedding(out->device.index, cg_tensor_ptr(out), cg_tensor_ptr(w),
                              (const int64_t *)cg_tensor_ptr(idx), cg_tensor_numel(idx), w->shape[1],
                              (int)cg_itemsize(w->dtype));
    return st ? fail("embedding", out->device, st) : CG_OK;
}
static cg_status k_embedding_renorm(cg_tensor *w, const cg_tensor *idx, double max_norm, double norm_type) {
    STAGE_BEGIN("embedding_renorm_");
    STAGE(w, hw);
    STAGE(idx, hi);
    STAGE_RUN(embedding_renorm(hw, hi, max_norm, norm_type));
    STAGE_END(1, w, hw);
}
static cg_status k_one_hot(cg_tensor *out, const cg_tensor *idx) {
    STAGE_BEGIN("one_hot");
    STAGE(out, ho);
    STAGE(idx, hi);
    STAGE_RUN(one_hot(ho, hi));
    STAGE_END(1, out, ho);
}
static cg_status k_causal_mask(cg_tensor *m) {
    STAGE_BEGIN("scaled_dot_product_attention");
    STAGE(m, hm);
    STAGE_RUN(causal_mask(hm));
    STAGE_END(1, m, hm);
}
static cg_status k_sample(cg_tensor *out, const cg_sample_args *a) {
    STAGE_BEGIN("sample");
    STAGE(out, ho);
    STAGE_RUN(sample(ho, a));
    STAGE_END(1, out, ho);
}
static cg_status k_randperm(cg_tensor *out) {
    STAGE_BEGIN("randperm");
    STAGE(out, ho);
    STAGE_RUN(randperm(ho));
    STAGE_END(1, out, ho);
}
static cg_status k_multinomial(cg_tensor *out, const cg_tensor *probs, int64_t num_samples, bool replacement) {
    STAGE_BEGIN("multinomial");
    STAGE(out, ho);
    STAGE(probs, hp);
    STAGE_RUN(multinomial(ho, hp, num_samples, replacement));
    STAGE_END(1, out, ho);
}
static cg_status k_arange(cg_tensor *out, double start, double step, int64_t istart, int64_t istep) {
    STAGE_BEGIN("arange");
    STAGE(out, ho);
    STAGE_RUN(arange(ho, start, step, istart, istep));
    STAGE_END(1, out, ho);
}
static cg_status k_linspace(cg_tensor *out, double start, double end, double step, int64_t halfway, bool log,
                            double base) {
    STAGE_BEGIN("linspace");
    STAGE(out, ho);
    STAGE_RUN(linspace(ho, start, end, step, halfway, log, base));
    STAGE_END(1, out, ho);
}
static cg_status k_eye(cg_tensor *out) {
    STAGE_BEGIN("eye");
    STAGE(out, ho);
    STAGE_RUN(eye(ho));
    STAGE_END(1, out, ho);
}
static cg_status k_gather(cg_tensor *out, const cg_tensor *x, const cg_tensor *index, int64_t dim) {
    STAGE_BEGIN("gather");
    STAGE(out, ho);
    STAGE(x, hx);
    STAGE(index, hi);
    STAGE_RUN(gather(ho, hx, hi, dim));
    STAGE_END(1, out, ho);
}
static cg_status k_scatter(const char *op, cg_tensor *out, const cg_tensor *index, const cg_tensor *src, int64_t dim,
                           int mode, bool include_self) {
    STAGE_BEGIN(op);
    STAGE(out, ho);
    STAGE(index, hi);
    STAGE(src, hs);
    STAGE_RUN(scatter(op, ho, hi, hs, dim, mode, include_self));
    STAGE_END(1, out, ho);
}
static cg_status k_index_offsets(const char *op, cg_tensor *off, const cg_tensor *x, cg_tensor *const *idx) {
    /* only x's geometry is read: a CPU tensor of its shape and strides stands in for it */
    STAGE_BEGIN(op);
    STAGE(off, hoff);
    cg_tensor *hidx[CG_MAX_DIMS] = {0};
    for (int d = 0; d < x->ndim && !st; d++)
        if (idx[d] && !stage_in(&s_, op_, idx[d], &hidx[d])) st = cg_last_error();
    cg_tensor *hx = st ? NULL : cg_tensor_new(op, 0, NULL, x->dtype, cg_cpu());
    if (!st && !hx) st = cg_last_error();
    if (hx) { /* a 0-d host tensor reshaped to x's geometry (no element is read) */
        cg_tensor *v = cg_tensor_make(hx->storage, 0, x->ndim, x->shape, x->strides, x->dtype);
        cg_tensor_release(hx);
        hx = v;
        if (!hx) st = cg_last_error();
        else s_.h[s_.n++] = hx;
    }
    STAGE_RUN(index_offsets(op, hoff, hx, hidx));
    STAGE_END(1, off, hoff);
}
static cg_status k_sort(const char *op, cg_tensor *values, cg_tensor *indices, const cg_tensor *x, int64_t dim,
                        int64_t k, bool desc) {
    STAGE_BEGIN(op);
    STAGE(values, hv);
    STAGE(indices, hi);
    STAGE(x, hx);
    STAGE_RUN(sort(op, hv, hi, hx, dim, k, desc));
    STAGE_END(2, values, hv, indices, hi);
}
static cg_status k_scan(cg_scan_kind kind, cg_tensor *out, cg_tensor *indices, const cg_tensor *x, int64_t dim,
                        bool reverse) {
    STAGE_BEGIN(kind == CG_SCAN_SUM ? "cumsum" : kind == CG_SCAN_PROD ? "cumprod" : "cummax");
    STAGE(out, ho);
    STAGE(indices, hi);
    STAGE(x, hx);
    STAGE_RUN(scan(kind, ho, hi, hx, dim, reverse));
    STAGE_END(2, out, ho, indices, hi);
}
static cg_status k_tril_triu(cg_tensor *out, const cg_tensor *x, int64_t diagonal, bool upper) {
    STAGE_BEGIN(upper ? "triu" : "tril");
    STAGE(out, ho);
    STAGE(x, hx);
    STAGE_RUN(tril_triu(ho, hx, diagonal, upper));
    STAGE_END(1, out, ho);
}
/* SGD and Adam run on the library's kernels (optim.cu); the other optimizers, and a library without
 * them, are staged */
_Static_assert(CG_OPTIM_SGD == 0 && CG_OPTIM_ADAM == 1, "optim.cu names the kinds by these values");
static int device_optim_step(cg_optim_kind kind, cg_tensor *const *t, const double *s, bool first, const void *opt) {
    if (kind != CG_OPTIM_SGD && kind != CG_OPTIM_ADAM) return CGCU_MISSING;
    cgcu_optim o = {.kind = (int)kind, .dtype = (int)t[0]->dtype, .first = first, .n = cg_tensor_numel(t[0])};
    for (int q = 0; q < CG_OPTIM_OPERANDS; q++) o.d[q] = t[q] ? cg_tensor_ptr(t[q]) : NULL;
    memcpy(o.s, s, sizeof o.s);
    if (kind == CG_OPTIM_SGD) {
        const cg_sgd_options *so = opt;
        o.lr = so->lr, o.momentum = so->momentum, o.dampening = so->dampening, o.weight_decay = so->weight_decay;
        o.nesterov = so->nesterov, o.maximize = so->maximize;
    } else {
        const cg_adam_options *ao = opt;
        o.lr = ao->lr, o.beta1 = ao->beta1, o.beta2 = ao->beta2, o.eps = ao->eps, o.weight_decay = ao->weight_decay;
        o.amsgrad = ao->amsgrad, o.maximize = ao->maximize, o.decoupled_weight_decay = ao->decoupled_weight_decay;
    }
    return g_api->optim_step(t[0]->device.index, &o);
}
static cg_status k_optim_step(cg_optim_kind kind, cg_tensor *const *t, const double *s, bool first, const void *opt) {
    int dst = device_optim_step(kind, t, s, first, opt);
    if (dst != CGCU_MISSING) return dst ? fail("optimizer step", t[0]->device, dst) : CG_OK;
    STAGE_BEGIN("optimizer step");
    cg_tensor *h[CG_OPTIM_OPERANDS] = {0}, *pairs[2 * CG_OPTIM_OPERANDS];
    for (int i = 0; i < CG_OPTIM_OPERANDS && !st; i++)
        if (t[i] && !stage_in(&s_, op_, t[i], &h[i])) st = cg_last_error();
    STAGE_RUN(optim_step(kind, h, s, first, opt));
    for (int i = 0; i < CG_OPTIM_OPERANDS; i++) pairs[2 * i] = i == 1 ? NULL : t[i], pairs[2 * i + 1] = h[i];
    return stage_end(&s_, op_, st, CG_OPTIM_OPERANDS, pairs); /* the gradient t[1] is only read */
}
static cg_status k_amp_unscale(cg_tensor *x, float inv_scale, bool *found_inf) {
    STAGE_BEGIN("_amp_foreach_non_finite_check_and_unscale_");
    STAGE(x, hx);
    STAGE_RUN(amp_unscale(hx, inv_scale, found_inf));
    STAGE_END(1, x, hx);
}

/* ------------------------------------------------------------- kernel entries: over iterator plans */

/* whether argument a of the plan never reaches one address twice (the dims sorted by stride, each
 * stride at least the extent of the dims inside it) */
static bool plan_arg_disjoint(const cg_iter *it, int a, size_t isz) {
    int order[CG_MAX_DIMS], n = 0;
    for (int d = 0; d < it->ndim; d++)
        if (it->shape[d] > 1) order[n++] = d;
    for (int i = 1; i < n; i++) /* insertion sort by |stride| */
        for (int j = i; j > 0 && llabs(it->strides[a][order[j]]) < llabs(it->strides[a][order[j - 1]]); j--) {
            int t = order[j];
            order[j] = order[j - 1], order[j - 1] = t;
        }
    int64_t extent = (int64_t)isz;
    for (int i = 0; i < n; i++) {
        int64_t st = llabs(it->strides[a][order[i]]);
        if (st < extent) return false;
        extent = st * (it->shape[order[i]] - 1) + extent;
    }
    return true;
}

/* the slicing views' backward (Note [Strided scatter]): dst += src as the op table's add row over the
 * plan with dst as output and first input; a destination view that overlaps itself must be summed in
 * the plan's order, which only the CPU's sequential loop does */
static cg_status k_strided_accumulate(cg_device dev, const struct cg_iter *it, cg_dtype dt) {
    if (it->numel == 0) return CG_OK;
    if (!plan_arg_disjoint(it, 0, cg_itemsize(dt)))
        return cg_set_error(CG_ERR_NOT_IMPLEMENTED,
                            "[as_strided_scatter] the gradient of a self-overlapping view (unfold, as_strided) is "
                            "not implemented for device 'cuda'");
    cg_iter p = *it;
    p.nargs = 3;
    p.ptr[2] = it->ptr[1], p.ptr[1] = it->ptr[0];
    memcpy(p.strides[2], it->strides[1], sizeof p.strides[2]);
    memcpy(p.strides[1], it->strides[0], sizeof p.strides[1]);
    double params[CGCU_MAX_PARAMS] = {0};
    int loop_error = 0;
    int st = g_api->elementwise(dev.index, (const cgcu_plan *)&p, CG_OP_ADD, (int)dt, params, &loop_error);
    return st ? fail("as_strided_scatter", dev, st) : CG_OK;
}

/* advanced indexing over its plans (Note [Index plan]): the offsets were checked in range before */
static cg_status k_index_gather(cg_device dev, const struct cg_iter *it, size_t itemsize) {
    if (it->numel == 0) return CG_OK;
    int st = g_api->index_gather(dev.index, (const cgcu_plan *)it, (int)itemsize);
    return st ? fail("index", dev, st) : CG_OK;
}

static cg_status k_index_put(cg_device dev, const struct cg_iter *it, cg_dtype dt, bool accumulate) {
    if (it->numel == 0) return CG_OK;
    int st = g_api->index_put(dev.index, (const cgcu_plan *)it, (int)dt, accumulate);
    return st ? fail("index_put_", dev, st) : CG_OK;
}

/* ------------------------------------------------------------- kernel entries: BLAS products (cuBLAS) */

/* cuBLAS takes int sizes and leading dimensions */
static cg_status k_gemm_max_dim(int64_t *max_dim) {
    *max_dim = INT32_MAX;
    return CG_OK;
}

/* one operand of the product: the matrix's cuBLAS description */
typedef struct {
    const char *ptr;
    int trans;
    int64_t ld;
    int64_t bstride[CG_MAX_DIMS]; /* per batch dim of c, elements; 0 broadcast */
} gemm_operand;

/* describe a (rows, cols) matrix with element strides (rs, cs) as cuBLAS reads it in place: row-major
 * with a leading dimension (cs 1), or the transpose of one (rs 1); a dim of size 1 takes any stride.
 * false: not readable in place (the op, or k_gemm for half operands, makes it dense) */
static bool describe(gemm_operand *o, int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
    int64_t min_row = cols > 1 ? cols : 1, min_col = rows > 1 ? rows : 1;
    if (cols <= 1 || cs == 1) {
        int64_t ld = rows <= 1 ? min_row : rs;
        if (ld >= min_row) {
            o->trans = 0, o->ld = ld;
            return true;
        }
    }
    if (rows <= 1 || rs == 1) {
        int64_t ld = cols <= 1 ? min_col : cs;
        if (ld >= min_col) {
            o->trans = 1, o->ld = ld;
            return true;
        }
    }
    return false;
}

static cg_status k_gemm_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, bool *ok) {
    gemm_operand o;
    *ok = describe(&o, rows, cols, rs, cs);
    return CG_OK;
}

static cg_status k_gemm(cg_tensor *c, const cg_tensor *a, const cg_tensor *b, double alpha, double beta) {
    cg_device dev = c->device;
    bool a_vec = a->ndim == 1, b_vec = b->ndim == 1;
    int nbatch = c->ndim - (a_vec ? 0 : 1) - (b_vec ? 0 : 1);
    int64_t m = a_vec ? 1 : a->shape[a->ndim - 2], k = a->shape[a->ndim - 1], n = b_vec ? 1 : b->shape[b->ndim - 1];
    bool half = a->dtype == CG_DTYPE_F16 || a->dtype == CG_DTYPE_BF16;
    if (!half && a->dtype != CG_DTYPE_F32 && a->dtype != CG_DTYPE_F64)
        return cg_set_error(CG_ERR_NOT_IMPLEMENTED, "[matmul] is not implemented for dtype %s on device 'cuda'",
                            cg_dtype_name(a->dtype));
    if (cg_tensor_numel(c) == 0) return CG_OK;
    /* half operands come with any strides (Note [Half GEMM]): those cuBLAS cannot read are made dense */
    const cg_tensor *ops[2] = {a, b};
    void *dense[2] = {NULL, NULL};
    size_t dense_nb[2] = {0, 0};
    gemm_operand od[2];
    cg_status st = CG_OK;
    for (int w = 0; w < 2 && !st; w++) {
        const cg_tensor *t = ops[w];
        bool vec = t->ndim == 1;
        int64_t rows = w == 0 ? m : k, cols = w == 0 ? k : n;
        int64_t rs, cs;
        if (vec) {
            rs = w == 0 ? 0 : t->strides[0];
            cs = w == 0 ? t->strides[0] : 1;
        } else {
            rs = t->strides[t->ndim - 2];
            cs = t->strides[t->ndim - 1];
        }
        od[w].ptr = cg_tensor_ptr(t);
        int64_t tstr[CG_MAX_DIMS];
        for (int i = 0; i < t->ndim; i++) tstr[i] = t->strides[i];
        if (!describe(&od[w], rows, cols, rs, cs)) {
            dense_nb[w] = nbytes_of(t);
            dense[w] = cuda_alloc(dense_nb[w], dev);
            if (!dense[w]) {
                st = cg_last_error();
                break;
            }
            cgcu_plan p;
            dense_plan(&p, t, dense[w], true);
            int s = g_api->cast(dev.index, &p, (int)t->dtype, (int)t->dtype);
            if (s) {
                st = fail("matmul", dev, s);
                break;
            }
            od[w].ptr = dense[w];
            cg_contiguous_strides(t->ndim, t->shape, tstr);
            rs = vec ? (w == 0 ? 0 : 1) : tstr[t->ndim - 2];
            cs = vec ? 1 : tstr[t->ndim - 1];
            describe(&od[w], rows, cols, rs, cs);
        }
        int nb = t->ndim > 2 ? t->ndim - 2 : 0;
        for (int i = 0; i < nbatch; i++) {
            int j = i - (nbatch - nb);
            od[w].bstride[i] = j >= 0 && t->shape[j] != 1 ? tstr[j] : 0;
        }
    }
    if (!st) {
        /* the batch dims of c (contiguous): one strided call when every operand's batch collapses to a
         * single stride, else one call per batch element of the outer dims */
        int64_t total = 1;
        for (int i = 0; i < nbatch; i++) total *= c->shape[i];
        int inner = nbatch; /* batch dims [inner, nbatch) collapse into one strided batch for both operands */
        int64_t inner_count = 1;
        if (nbatch > 0) inner = nbatch - 1, inner_count = c->shape[nbatch - 1];
        while (inner > 0) {
            int i = inner - 1;
            bool ok = true;
            for (int w = 0; w < 2; w++)
                if (od[w].bstride[i] != od[w].bstride[inner] * c->shape[inner]) ok = false;
            if (!ok) break;
            inner_count *= c->shape[i];
            inner--;
        }
        int64_t sa = nbatch ? od[0].bstride[nbatch - 1] : 0, sb = nbatch ? od[1].bstride[nbatch - 1] : 0;
        int64_t outer = total / inner_count;
        size_t c_isz = cg_itemsize(c->dtype), ab_isz = cg_itemsize(a->dtype);
        for (int64_t o = 0; o < outer && !st; o++) {
            int64_t offa = 0, offb = 0, rem = o;
            for (int i = inner - 1; i >= 0; i--) {
                int64_t ci = rem % c->shape[i];
                rem /= c->shape[i];
                offa += ci * od[0].bstride[i];
                offb += ci * od[1].bstride[i];
            }
            int s = g_api->gemm(dev.index, (int)a->dtype, (int)c->dtype, od[0].trans, od[1].trans, m, n, k, alpha,
                                od[0].ptr + offa * (int64_t)ab_isz, od[0].ld, sa, od[1].ptr + offb * (int64_t)ab_isz,
                                od[1].ld, sb, beta, cg_tensor_ptr(c) + o * inner_count * m * n * (int64_t)c_isz, n,
                                m * n, inner_count);
            if (s) st = fail("matmul", dev, s);
        }
    }
    for (int w = 0; w < 2; w++)
        if (dense[w]) cuda_free(dense[w], dense_nb[w], dev);
    return st;
}

/* ------------------------------------------------------------- kernel entries: softmax */

static void split_dim(const cg_tensor *t, int64_t dim, int64_t *outer, int64_t *len, int64_t *inner) {
    *outer = *inner = 1;
    *len = t->ndim ? t->shape[dim] : 1;
    for (int i = 0; i < t->ndim; i++) {
        if (i < dim) *outer *= t->shape[i];
        if (i > dim) *inner *= t->shape[i];
    }
}

static cg_status k_softmax(cg_tensor *y, const cg_tensor *x, int64_t dim, bool log) {
    if (!cg_tensor_numel(x)) return CG_OK;
    int64_t outer, len, inner;
    split_dim(x, dim, &outer, &len, &inner);
    int st = g_api->softmax(x->device.index, (int)x->dtype, cg_tensor_ptr(y), cg_tensor_ptr(x), outer, len, inner, log);
    return st ? fail(log ? "log_softmax" : "softmax", x->device, st) : CG_OK;
}

static cg_status k_softmax_backward(cg_tensor *gx, const cg_tensor *g, const cg_tensor *y, int64_t dim, bool log) {
    if (!cg_tensor_numel(g)) return CG_OK;
    int64_t outer, len, inner;
    split_dim(g, dim, &outer, &len, &inner);
    int st = g_api->softmax_backward(g->device.index, (int)g->dtype, cg_tensor_ptr(gx), cg_tensor_ptr(g),
                                     cg_tensor_ptr(y), outer, len, inner, log);
    return st ? fail(log ? "log_softmax_backward" : "softmax_backward", g->device, st) : CG_OK;
}

static const cg_kernels k_cuda_kernels = {
    .softmax = k_softmax,
    .softmax_backward = k_softmax_backward,
    .gemm_max_dim = k_gemm_max_dim,
    .gemm_layout = k_gemm_layout,
    .gemm = k_gemm,
    .load_values = k_load_values,
    .store_values = k_store_values,
    .find_outside = k_find_outside,
    .class_target_check = k_class_target_check,
    .index_find_out_of_range = k_index_find,
    .one_hot_scan = k_one_hot_scan,
    .nonzero_count = k_nonzero_count,
    .nonzero = k_nonzero,
    /* staged (Note [Staged entries]) */
    .conv = k_conv,
    .conv_bias_grad = k_conv_bias_grad,
    .pool = k_pool,
    .max_pool_backward = k_max_pool_backward,
    .max_pool_codes_to_index = k_max_pool_codes_to_index,
    .lstm_layer = k_lstm_layer,
    .lstm_layer_backward = k_lstm_layer_backward,
    .norm = k_norm,
    .norm_backward = k_norm_backward,
    .batch_norm = k_batch_norm,
    .batch_norm_transform = k_batch_norm_transform,
    .batch_norm_backward = k_batch_norm_backward,
    .resample_u8 = k_resample_u8,
    .embedding_renorm = k_embedding_renorm,
    .one_hot = k_one_hot,
    .causal_mask = k_causal_mask,
    .sample = k_sample,
    .randperm = k_randperm,
    .multinomial = k_multinomial,
    .arange = k_arange,
    .linspace = k_linspace,
    .eye = k_eye,
    .gather = k_gather,
    .scatter = k_scatter,
    .index_offsets = k_index_offsets,
    .sort = k_sort,
    .scan = k_scan,
    .tril_triu = k_tril_triu,
    .optim_step = k_optim_step, /* SGD and Adam on the library's kernels, the others staged */
    .amp_unscale = k_amp_unscale,
    /* on the library's kernels, over iterator plans */
    .index_gather = k_index_gather,
    .index_put = k_index_put,
    .embedding = k_embedding,
    .dropout_mask = k_dropout_mask,
    .strided_accumulate = k_strided_accumulate,
};

/* memory: the caching pool of cuda:0 (the others: cg_cuda_pool, which the registry asks by index) */
const cg_backend cg_backend_cuda = {
    .name = "cuda",
    .has_data = true,
    .host_addressable = false,
    .dlpack_type = 2, /* kDLCUDA */
    .alloc = cuda_alloc,
    .free = cuda_free,
    .copy_from_host = cuda_from_host,
    .copy_to_host = cuda_to_host,
    .synchronize = cuda_synchronize,
    .run_elementwise = cuda_run_elementwise,
    .copy = cuda_copy,
    .run_reduce = cuda_run_reduce,
    .fill = cuda_fill,
    .kernels = &k_cuda_kernels,
    .memory = &g_pools[0],
};

/* ------------------------------------------------------------- the public CUDA calls (cgrad.h) */

cg_device cg_cuda(int index) { return (cg_device){CG_DEVICE_CUDA, index}; }

bool cg_cuda_is_built(void) {
    api_get();
    return g_built;
}

int cg_cuda_device_count(void) { return api_get() ? g_count : 0; }

const char *cg_cuda_unavailable_reason(void) { return api_get() ? NULL : g_reason; }

static cg_status check_index(const char *op, int index) {
    if (!api_get()) return cg_set_error(CG_ERR_DEVICE, "[%s] %s", op, g_reason);
    if (index < 0 || index >= g_count)
        return cg_set_error(CG_ERR_DEVICE, "[%s] invalid device ordinal %d (%d CUDA devices)", op, index, g_count);
    return CG_OK;
}

cg_status cg_cuda_properties(int index, cg_cuda_props *out) {
    if (check_index("cuda.get_device_properties", index)) return cg_last_error();
    cgcu_props p;
    int st = g_api->properties(index, &p);
    if (st) return fail("cuda.get_device_properties", cg_cuda(index), st);
    memcpy(out->name, p.name, sizeof out->name);
    out->major = p.major, out->minor = p.minor, out->multiprocessors = p.multiprocessors;
    out->total_memory = p.total_memory;
    return CG_OK;
}

cg_status cg_cuda_synchronize(int index) {
    if (check_index("cuda.synchronize", index)) return cg_last_error();
    return cuda_synchronize(cg_cuda(index));
}

cg_status cg_cuda_mem_info(int index, size_t *free_bytes, size_t *total_bytes) {
    if (check_index("cuda.mem_get_info", index)) return cg_last_error();
    int st = g_api->mem_info(index, free_bytes, total_bytes);
    return st ? fail("cuda.mem_get_info", cg_cuda(index), st) : CG_OK;
}
