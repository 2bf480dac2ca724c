/* profiler.c — the op-level profiler: per-thread event buffers filled by the
 * drivers' begin / end hooks, the autograd engine and user ranges, gathered
 * into one start-ordered array when the session stops.
 * Note [Profiler]: cg_g_prof_on is the only state the hot path reads; a driver
 * tests it once and, when set, runs its body between cg_prof_begin and
 * cg_prof_end. Each thread records into its own buffer (a per-buffer mutex,
 * uncontended except against cg_profiler_stop) with a stack of open events,
 * so nesting (composite ops, backward nodes calling ops, user ranges) is the
 * parent index. Sessions are numbered: a buffer left from an older session is
 * cleared on its thread's first event in the new one. Bytes allocated are
 * counted per thread by cg_alloc while profiling; FLOPs are computed for the
 * GEMM-like ops and convolutions (forward, input and weight gradients) from
 * the input and output shapes. With CG_PROF_STACK an op event outside any op
 * asks the stack hook (installed by the binding) for its caller's location,
 * before taking the buffer's lock: the hook may wait for the Python GIL,
 * whose holder may be in cg_profiler_stop waiting for that lock. */
#include "core_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define PROF_MAX_DEPTH 256

typedef struct prof_rec {
    cg_prof_event e;
    int64_t flop_k;  /* FLOPs per output element / 2, or -1 */
    int64_t alloc0;  /* the thread's allocation counter at begin */
} prof_rec;

typedef struct prof_buf {
    pthread_mutex_t mu;
    prof_rec *rec;
    int64_t n, cap;
    int64_t stack[PROF_MAX_DEPTH];
    int depth;  /* may exceed PROF_MAX_DEPTH: deeper events get the deepest stored parent */
    int64_t thread;
    uint64_t session;
    struct prof_buf *next;
} prof_buf;

atomic_int cg_g_prof_on = 0;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER; /* guards everything below */
static prof_buf *g_bufs;
static int64_t g_nthreads;
static _Atomic uint64_t g_session;
static unsigned g_flags;
static int64_t g_t0;
static cg_prof_event *g_out;
static int64_t g_nout;

static _Atomic(cg_prof_stack_fn) g_stack_fn;

static _Thread_local prof_buf *tl_buf;
static _Thread_local int64_t tl_alloc; /* bytes this thread allocated while profiling */

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void cg_prof_note_alloc(size_t nbytes) { tl_alloc += (int64_t)nbytes; }

/* this thread's buffer, locked, cleared if left from an older session; NULL on OOM */
static prof_buf *lock_buf(void) {
    uint64_t session = atomic_load(&g_session);
    prof_buf *b = tl_buf;
    if (!b) {
        if (!(b = calloc(1, sizeof(*b)))) return NULL;
        pthread_mutex_init(&b->mu, NULL);
        pthread_mutex_lock(&g_mu);
        b->thread = ++g_nthreads;
        b->next = g_bufs;
        g_bufs = b;
        pthread_mutex_unlock(&g_mu);
        tl_buf = b;
    }
    pthread_mutex_lock(&b->mu);
    if (b->session != session) {
        b->session = session;
        b->n = 0;
        b->depth = 0;
    }
    return b;
}

static void append(char *dst, size_t cap, const char *src) {
    size_t len = strlen(dst);
    if (len + 1 < cap) snprintf(dst + len, cap - len, "%s", src);
}

static void describe_inputs(cg_prof_event *e, int n, cg_tensor *const *in) {
    e->shapes[0] = e->dtypes[0] = '\0';
    append(e->shapes, sizeof e->shapes, "[");
    append(e->dtypes, sizeof e->dtypes, "[");
    for (int i = 0; i < n; i++) {
        if (i) {
            append(e->shapes, sizeof e->shapes, ", ");
            append(e->dtypes, sizeof e->dtypes, ", ");
        }
        append(e->shapes, sizeof e->shapes, "[");
        if (in[i]) {
            for (int d = 0; d < in[i]->ndim; d++) {
                char num[32];
                snprintf(num, sizeof num, d ? ", %lld" : "%lld", (long long)in[i]->shape[d]);
                append(e->shapes, sizeof e->shapes, num);
            }
            append(e->dtypes, sizeof e->dtypes, cg_dtype_name(in[i]->dtype));
        }
        append(e->shapes, sizeof e->shapes, "]");
    }
    append(e->shapes, sizeof e->shapes, "]");
    append(e->dtypes, sizeof e->dtypes, "]");
}

static int64_t numel(const cg_tensor *t) { return cg_shape_numel(t->ndim, t->shape); }

/* Multiply-adds per output element (FLOPs = 2 * that * output numel) for the
 * GEMM-like ops and convolution; conv_transpose counts per input element and
 * is returned as a total (negated, below -1). -1: not counted. */
static int64_t flop_factor(const char *name, int n, cg_tensor *const *in) {
    const cg_tensor *a = NULL, *w = NULL;
    if (!strcmp(name, "mm") || !strcmp(name, "bmm") || !strcmp(name, "matmul") || !strcmp(name, "mv") ||
        !strcmp(name, "dot") || !strcmp(name, "linear"))
        a = n >= 1 ? in[0] : NULL;
    else if (!strcmp(name, "addmm") || !strcmp(name, "baddbmm"))
        a = n >= 2 ? in[1] : NULL;
    else if (!strcmp(name, "convolution") || !strcmp(name, "conv_transpose"))
        w = n >= 2 ? in[1] : NULL;
    else if (!strcmp(name, "conv_weight_grad")) {
        /* (conv input, conv output): each weight-gradient element sums batch x output positions */
        const cg_tensor *y = n >= 2 ? in[1] : NULL;
        return y && y->ndim >= 2 && y->shape[1] > 0 ? numel(y) / y->shape[1] : -1;
    }
    if (a) return a->ndim ? a->shape[a->ndim - 1] : -1;
    if (!w || !in[0] || w->ndim < 1 || w->shape[0] == 0) return -1;
    int64_t per = numel(w) / w->shape[0];
    if (!strcmp(name, "conv_transpose")) return -2 - 2 * numel(in[0]) * per; /* the total, encoded */
    return per;
}

void cg_profiler_set_stack_fn(cg_prof_stack_fn fn) { atomic_store(&g_stack_fn, fn); }

/* The open op this thread's next event nests in, or -1. Only the owning
 * thread writes its buffer, so it may read it without the lock. */
static int64_t open_op_parent(void) {
    prof_buf *b = tl_buf;
    if (!b || b->session != atomic_load(&g_session) || b->depth <= 0 || b->depth > PROF_MAX_DEPTH) return -1;
    int64_t p = b->stack[b->depth - 1];
    return b->rec[p].e.kind == CG_PROF_OP ? p : -1;
}

int64_t cg_prof_begin(const char *name, cg_prof_kind kind, int n, cg_tensor *const *in) {
    char stack[sizeof(((cg_prof_event *)0)->stack)];
    int64_t stack_from = -1; /* the parent op whose location this event shares */
    stack[0] = '\0';
    if ((g_flags & CG_PROF_STACK) && kind == CG_PROF_OP && (stack_from = open_op_parent()) < 0) {
        cg_prof_stack_fn fn = atomic_load(&g_stack_fn);
        if (fn) fn(stack, sizeof stack);
    }
    prof_buf *b = lock_buf();
    if (!b) return -1;
    if (b->n == b->cap) {
        int64_t cap = b->cap ? b->cap * 2 : 1024;
        prof_rec *r = realloc(b->rec, (size_t)cap * sizeof(*r));
        if (!r) {
            pthread_mutex_unlock(&b->mu);
            return -1;
        }
        b->rec = r;
        b->cap = cap;
    }
    int64_t id = b->n++;
    prof_rec *r = &b->rec[id];
    cg_prof_event *e = &r->e;
    snprintf(e->name, sizeof e->name, "%s", name ? name : "");
    e->shapes[0] = e->dtypes[0] = '\0';
    if ((g_flags & CG_PROF_SHAPES) && in) describe_inputs(e, n, in);
    snprintf(e->stack, sizeof e->stack, "%s", stack_from >= 0 && stack_from < id ? b->rec[stack_from].e.stack : stack);
    r->flop_k = (g_flags & CG_PROF_FLOPS) && in ? flop_factor(e->name, n, in) : -1;
    r->alloc0 = tl_alloc;
    e->flops = e->alloc_bytes = -1;
    e->parent = b->depth ? b->stack[(b->depth <= PROF_MAX_DEPTH ? b->depth : PROF_MAX_DEPTH) - 1] : -1;
    e->thread = b->thread;
    e->kind = kind;
    e->end_ns = 0;
    if (b->depth < PROF_MAX_DEPTH) b->stack[b->depth] = id;
    b->depth++;
    e->start_ns = now_ns() - g_t0; /* last, so the bookkeeping above is not charged to the op */
    pthread_mutex_unlock(&b->mu);
    return id;
}

void cg_prof_end(int64_t id, const cg_tensor *out) {
    int64_t t = now_ns() - g_t0;
    prof_buf *b = tl_buf;
    if (!b || id < 0) return;
    pthread_mutex_lock(&b->mu);
    if (b->session == atomic_load(&g_session) && id < b->n) {
        prof_rec *r = &b->rec[id];
        r->e.end_ns = t;
        if (r->flop_k < -1) r->e.flops = -2 - r->flop_k;
        else if (r->flop_k >= 0 && out) r->e.flops = 2 * r->flop_k * numel(out);
        if (g_flags & CG_PROF_MEMORY) r->e.alloc_bytes = tl_alloc - r->alloc0;
        /* pop up to and including id (children left open by an error path close with it) */
        if (b->depth > PROF_MAX_DEPTH) b->depth--; /* an event deeper than the stack */
        else
            while (b->depth > 0)
                if (b->stack[--b->depth] == id) break;
    }
    pthread_mutex_unlock(&b->mu);
}

cg_status cg_profiler_start(unsigned flags) {
    pthread_mutex_lock(&g_mu);
    if (atomic_load(&cg_g_prof_on)) {
        pthread_mutex_unlock(&g_mu);
        return cg_set_error(CG_ERR_RUNTIME, "[profiler] a profiling session is already running");
    }
    free(g_out);
    g_out = NULL;
    g_nout = 0;
    g_flags = flags;
    g_t0 = now_ns();
    atomic_fetch_add(&g_session, 1);
    atomic_store(&cg_g_prof_on, 1);
    pthread_mutex_unlock(&g_mu);
    return CG_OK;
}

bool cg_profiler_enabled(void) { return cg_prof_active(); }

typedef struct order_key {
    int64_t start, pos;
} order_key;

static int by_start(const void *x, const void *y) {
    const order_key *a = x, *b = y;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

cg_status cg_profiler_stop(void) {
    pthread_mutex_lock(&g_mu);
    if (!atomic_load(&cg_g_prof_on)) {
        pthread_mutex_unlock(&g_mu);
        return cg_set_error(CG_ERR_RUNTIME, "[profiler] no profiling session is running");
    }
    atomic_store(&cg_g_prof_on, 0);
    int64_t t = now_ns() - g_t0;
    uint64_t session = atomic_load(&g_session);
    int64_t total = 0;
    for (prof_buf *b = g_bufs; b; b = b->next) {
        pthread_mutex_lock(&b->mu);
        if (b->session == session) total += b->n;
        pthread_mutex_unlock(&b->mu);
    }
    cg_prof_event *all = malloc((size_t)(total ? total : 1) * sizeof(*all));
    order_key *keys = malloc((size_t)(total ? total : 1) * sizeof(*keys));
    int64_t *inv = malloc((size_t)(total ? total : 1) * sizeof(*inv));
    if (!all || !keys || !inv) {
        free(all), free(keys), free(inv);
        pthread_mutex_unlock(&g_mu);
        return cg_set_error(CG_ERR_OOM, "[profiler] out of memory gathering %lld events", (long long)total);
    }
    int64_t k = 0;
    for (prof_buf *b = g_bufs; b; b = b->next) {
        pthread_mutex_lock(&b->mu);
        if (b->session == session) {
            int64_t base = k;
            for (int64_t i = 0; i < b->n && k < total; i++, k++) {
                all[k] = b->rec[i].e;
                if (all[k].parent >= 0) all[k].parent += base;
                if (!all[k].end_ns) all[k].end_ns = t; /* still open: closed at the stop */
                keys[k] = (order_key){all[k].start_ns, k};
            }
        }
        pthread_mutex_unlock(&b->mu);
    }
    qsort(keys, (size_t)k, sizeof(*keys), by_start);
    for (int64_t i = 0; i < k; i++) inv[keys[i].pos] = i;
    g_out = malloc((size_t)(k ? k : 1) * sizeof(*g_out));
    if (g_out) {
        for (int64_t i = 0; i < k; i++) {
            g_out[i] = all[keys[i].pos];
            if (g_out[i].parent >= 0) g_out[i].parent = inv[g_out[i].parent];
        }
        g_nout = k;
    }
    free(all), free(keys), free(inv);
    pthread_mutex_unlock(&g_mu);
    return g_out ? CG_OK : cg_set_error(CG_ERR_OOM, "[profiler] out of memory gathering %lld events", (long long)k);
}

const cg_prof_event *cg_profiler_events(int64_t *n) {
    pthread_mutex_lock(&g_mu);
    const cg_prof_event *e = g_out;
    if (n) *n = g_nout;
    pthread_mutex_unlock(&g_mu);
    return e;
}

int64_t cg_profiler_range_push(const char *name) {
    if (!cg_prof_active()) return -1;
    return cg_prof_begin(name, CG_PROF_RANGE, 0, NULL);
}

void cg_profiler_range_pop(int64_t id) {
    if (id >= 0) cg_prof_end(id, NULL);
}
