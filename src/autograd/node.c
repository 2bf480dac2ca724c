/* node.c — autograd graph nodes: creation with edges to the inputs' history,
 * saved tensors with version checks, gradient accumulators for leaves, and
 * iterative teardown (Note [Iterative teardown]). */
#include "autograd_internal.h"

#include <pthread.h>
#include <string.h>

static atomic_uint_fast64_t g_seq = 0;

/* Note [Concurrent backward]: several threads may run backward at once on
 * graphs that share leaves (the binding releases the GIL around the engine).
 * Two global mutexes guard the state those graphs share: g_acc_lock a leaf's
 * weak grad_acc slot (creation of its AccumulateGrad node versus teardown of
 * the old one in another thread), g_grad_lock every read-with-reference and
 * update of a tensor's ->grad (accumulation here, retain_grad and inputs= in
 * engine.c, Tensor.grad get/set and zero_grad through cg_tensor_grad_ref /
 * cg_tensor_set_grad). Lock
 * order is g_grad_lock before g_acc_lock (a create_graph accumulation may
 * create nodes); neither is held while user hooks run or tensors are freed. */
static pthread_mutex_t g_acc_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t g_grad_lock = PTHREAD_MUTEX_INITIALIZER;

void cg_grad_lock(void) { pthread_mutex_lock(&g_grad_lock); }
void cg_grad_unlock(void) { pthread_mutex_unlock(&g_grad_lock); }

bool cg_any_requires_grad(int n, cg_tensor *const *inputs) {
    if (!cg_is_grad_enabled()) return false;
    for (int i = 0; i < n; i++)
        if (inputs[i] && inputs[i]->requires_grad) return true;
    return false;
}

static void meta_of(cg_tensor_meta *m, const cg_tensor *t) {
    m->ndim = t->ndim;
    m->dtype = t->dtype;
    m->device = t->device;
    if (t->ndim) memcpy(m->shape, t->shape, (size_t)t->ndim * sizeof(int64_t));
}

static cg_node *node_alloc(const char *name, cg_backward_fn backward, const void *op,
                           int num_inputs, int num_outputs, int num_saved) {
    size_t sz = sizeof(cg_node) + (size_t)num_inputs * (sizeof(cg_edge) + sizeof(cg_tensor_meta)) +
                (size_t)num_outputs * sizeof(cg_tensor_meta) + (size_t)num_saved * sizeof(cg_saved);
    cg_node *n = calloc(1, sz);
    if (!n) {
        cg_set_error(CG_ERR_OOM, "[autograd] out of memory creating %s", name);
        return NULL;
    }
    char *p = (char *)(n + 1);
    n->edges = (cg_edge *)p;
    p += (size_t)num_inputs * sizeof(cg_edge);
    n->input_meta = (cg_tensor_meta *)p;
    p += (size_t)num_inputs * sizeof(cg_tensor_meta);
    n->output_meta = (cg_tensor_meta *)p;
    p += (size_t)num_outputs * sizeof(cg_tensor_meta);
    n->saved = (cg_saved *)p;
    atomic_init(&n->refcount, 1);
    n->name = name;
    n->backward = backward;
    n->op = op;
    n->seq = atomic_fetch_add(&g_seq, 1);
    n->num_inputs = num_inputs;
    n->num_outputs = num_outputs;
    n->num_saved = num_saved;
    return n;
}

static cg_status accumulate_backward(cg_node *node, cg_tensor *const *gout, cg_tensor **gin);

cg_node *cg_grad_accumulator(cg_tensor *leaf) {
    pthread_mutex_lock(&g_acc_lock);
    cg_node *n = leaf->grad_acc;
    if (n) {
        /* retain unless another thread already dropped the last reference
         * (its teardown clears the slot under this lock) */
        long c = atomic_load(&n->refcount);
        while (c > 0 && !atomic_compare_exchange_weak(&n->refcount, &c, c + 1)) {}
        if (c > 0) {
            pthread_mutex_unlock(&g_acc_lock);
            return n;
        }
    }
    n = node_alloc("AccumulateGrad", accumulate_backward, NULL, 0, 1, 0);
    if (n) {
        cg_tensor_retain(leaf);
        n->variable = leaf;
        meta_of(&n->output_meta[0], leaf);
        leaf->grad_acc = n; /* weak; cleared in node teardown */
    }
    pthread_mutex_unlock(&g_acc_lock);
    return n;
}

cg_node *cg_node_new(const char *name, cg_backward_fn backward, const void *op,
                     int num_inputs, cg_tensor *const *inputs, int num_outputs, int num_saved) {
    cg_node *n = node_alloc(name, backward, op, num_inputs, num_outputs, num_saved);
    if (!n) return NULL;
    for (int i = 0; i < num_inputs; i++) {
        cg_tensor *t = inputs[i];
        if (!t) continue;
        meta_of(&n->input_meta[i], t);
        if (!t->requires_grad) continue;
        if (t->grad_fn) {
            cg_node_retain(t->grad_fn);
            n->edges[i].fn = t->grad_fn;
            n->edges[i].input_nr = t->output_nr;
        } else {
            n->edges[i].fn = cg_grad_accumulator(t);
            if (!n->edges[i].fn) {
                cg_node_release(n);
                return NULL;
            }
        }
    }
    return n;
}

void cg_node_set_output(cg_node *node, int i, cg_tensor *t) {
    cg_node_retain(node);
    if (t->grad_fn) cg_node_release(t->grad_fn);
    t->grad_fn = node;
    t->output_nr = i;
    t->requires_grad = true;
    meta_of(&node->output_meta[i], t);
}

cg_status cg_node_save(cg_node *node, int slot, cg_tensor *t, bool is_output, int output_nr) {
    CG_ASSERT(slot < node->num_saved);
    cg_saved *s = &node->saved[slot];
    if (is_output) {
        s->t = cg_tensor_alias(t); /* no grad_fn: no cycle */
        if (!s->t) return cg_last_error();
    } else {
        cg_tensor_retain(t);
        s->t = t;
    }
    s->version = cg_tensor_version(s->t);
    s->is_output = is_output;
    s->output_nr = output_nr;
    return CG_OK;
}

cg_tensor *cg_node_saved(cg_node *node, int slot) {
    CG_ASSERT(slot < node->num_saved);
    CG_CHECK(!node->saved_released, CG_ERR_RUNTIME,
             "[%s] Trying to backward through the graph a second time (or directly access saved tensors after they "
             "have already been freed). Saved intermediate values of the graph are freed when you call backward() "
             "or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time",
             node->name);
    cg_saved *s = &node->saved[slot];
    CG_ASSERT(s->t);
    uint64_t v = cg_tensor_version(s->t);
    if (v != s->version) {
        char b[CG_SHAPE_STR];
        cg_set_error(CG_ERR_RUNTIME,
                     "[%s] one of the variables needed for gradient computation has been modified by an inplace "
                     "operation: tensor of shape %s, dtype %s, is at version %llu; expected version %llu instead",
                     node->name, cg_shape_str(b, s->t->ndim, s->t->shape), cg_dtype_name(s->t->dtype),
                     (unsigned long long)v, (unsigned long long)s->version);
        return NULL;
    }
    if (!s->is_output) {
        cg_tensor_retain(s->t);
        return s->t;
    }
    cg_tensor *a = cg_tensor_alias(s->t);
    if (a) {
        cg_node_retain(node);
        a->grad_fn = node;
        a->output_nr = s->output_nr;
        a->requires_grad = true;
    }
    return a;
}

void cg_node_release_saved(cg_node *node) {
    for (int i = 0; i < node->num_saved; i++) {
        cg_tensor_release(node->saved[i].t);
        node->saved[i].t = NULL;
    }
    if (node->num_saved) node->saved_released = true;
}

void cg_node_retain(cg_node *n) { atomic_fetch_add_explicit(&n->refcount, 1, memory_order_relaxed); }

/* Note [Iterative teardown]: freeing a node releases its edges, which may free
 * their nodes, and so on down a chain of any length. Releases that reach zero
 * are pushed on a thread-local stack and drained in a loop, so the C stack
 * never grows with the graph's depth. */
static _Thread_local cg_node **tl_stack;
static _Thread_local int64_t tl_len, tl_cap;
static _Thread_local bool tl_draining;

/* The stack's block is freed when its thread exits: the key's destructor gets
 * the block (set again on every reallocation), so threads that come and go do
 * not leak it. */
static pthread_key_t g_stack_key;
static pthread_once_t g_stack_key_once = PTHREAD_ONCE_INIT;
static bool g_stack_key_ok;

/* runs on the exiting thread: a release after it starts a new block */
static void stack_free(void *block) {
    if (tl_stack == block) {
        tl_stack = NULL;
        tl_len = tl_cap = 0;
    }
    free(block);
}

static void stack_key_create(void) { g_stack_key_ok = pthread_key_create(&g_stack_key, stack_free) == 0; }

static void stack_key_set(cg_node **block) {
    pthread_once(&g_stack_key_once, stack_key_create);
    if (g_stack_key_ok) pthread_setspecific(g_stack_key, block);
}

static void node_destroy(cg_node *n) {
    for (int i = 0; i < n->num_inputs; i++)
        if (n->edges[i].fn) cg_node_release(n->edges[i].fn);
    for (int i = 0; i < n->num_saved; i++) cg_tensor_release(n->saved[i].t);
    for (cg_node_hook *h = n->hooks; h;) {
        cg_node_hook *next = h->next;
        if (h->retain_target) h->retain_target->retains_grad = false;
        if (h->ctx_free) h->ctx_free(h->ctx);
        free(h);
        h = next;
    }
    for (cg_node_fn_hook *h = n->fn_hooks; h;) {
        cg_node_fn_hook *next = h->next;
        if (h->ctx_free) h->ctx_free(h->ctx);
        free(h);
        h = next;
    }
    if (n->user_free) n->user_free(n->user);
    if (n->extra_free) n->extra_free(n->extra);
    if (n->variable) {
        pthread_mutex_lock(&g_acc_lock);
        if (n->variable->grad_acc == n) n->variable->grad_acc = NULL;
        pthread_mutex_unlock(&g_acc_lock);
        cg_tensor_release(n->variable);
    }
    free(n);
}

void cg_teardown_push_node(cg_node *n) {
    if (tl_len == tl_cap) {
        int64_t cap = tl_cap ? tl_cap * 2 : 256;
        cg_node **s = realloc(tl_stack, (size_t)cap * sizeof *s);
        if (!s) { /* cannot defer: destroy now (recursion bounded by memory pressure only) */
            node_destroy(n);
            return;
        }
        tl_stack = s;
        tl_cap = cap;
        stack_key_set(s);
    }
    tl_stack[tl_len++] = n;
    if (tl_draining) return;
    tl_draining = true;
    while (tl_len > 0) node_destroy(tl_stack[--tl_len]);
    tl_draining = false;
    if (tl_cap > 4096) {
        free(tl_stack);
        tl_stack = NULL;
        tl_cap = 0;
        stack_key_set(NULL);
    }
}

void cg_node_release(cg_node *n) {
    if (!n || atomic_fetch_sub_explicit(&n->refcount, 1, memory_order_acq_rel) != 1) return;
    cg_teardown_push_node(n);
}

const char *cg_node_name(const cg_node *n) { return n->name; }
int cg_node_num_inputs(const cg_node *n) { return n->num_inputs; }
cg_node *cg_node_next(const cg_node *n, int i, int *input_nr) {
    if (i < 0 || i >= n->num_inputs) return NULL;
    if (input_nr) *input_nr = n->edges[i].input_nr;
    return n->edges[i].fn;
}
cg_tensor *cg_node_variable(const cg_node *n) { return n->variable; }
uint64_t cg_node_sequence_nr(const cg_node *n) { return n->seq; }
int cg_node_num_outputs(const cg_node *n) { return n->num_outputs; }
void *cg_node_pyobj(const cg_node *n) { return n->pyobj; }
void cg_node_set_pyobj(cg_node *n, void *obj) { n->pyobj = obj; }
void *cg_node_user_data(const cg_node *n) { return n->user; }
void cg_node_set_user_data(cg_node *n, void *data, void (*user_free)(void *)) {
    void *old = n->user;
    void (*old_free)(void *) = n->user_free;
    n->user = data;
    n->user_free = user_free;
    if (old_free && old != data) old_free(old);
}

cg_node *cg_wire_unary_output(const char *name, cg_backward_fn backward, const void *op,
                              int num_inputs, cg_tensor *const *inputs, cg_tensor *out,
                              int num_saved, bool *failed) {
    *failed = false;
    if (!cg_dtype_is_floating(out->dtype) || !cg_any_requires_grad(num_inputs, inputs)) return NULL;
    cg_node *node = cg_node_new(name, backward, op, num_inputs, inputs, 1, num_saved);
    if (!node) {
        *failed = true;
        return NULL;
    }
    cg_node_set_output(node, 0, out);
    cg_node_release(node);
    return node;
}

/* PyTorch's gradient layout contract: a leaf's .grad has the leaf's strides when the leaf is
 * non-overlapping and dense (a channels_last parameter gets a channels_last gradient; size-1 dims'
 * strides do not count), else it is contiguous. */
static bool obeys_layout(const cg_tensor *g, const cg_tensor *leaf) {
    if (!cg_tensor_is_non_overlapping_and_dense(leaf)) return cg_tensor_is_contiguous(g);
    if (g->ndim != leaf->ndim) return false;
    for (int d = 0; d < g->ndim; d++)
        if (g->shape[d] != 1 && g->strides[d] != leaf->strides[d]) return false;
    return true;
}
static cg_tensor *clone_obeying_layout(cg_tensor *g, cg_tensor *leaf) {
    if (!cg_tensor_is_non_overlapping_and_dense(leaf) || !cg_shape_eq(g->ndim, g->shape, leaf->ndim, leaf->shape))
        return cg_clone(g);
    cg_tensor *c = cg_empty_like_as(leaf, g->dtype, g->device, CG_MEMORY_PRESERVE);
    if (c && cg_copy_(c, g)) cg_tensor_release(c), c = NULL;
    return c;
}

/* AccumulateGrad: run the leaf's gradient hooks, add into leaf->grad, then run its post-accumulate-grad hooks. */
static cg_status accumulate_backward(cg_node *node, cg_tensor *const *gout, cg_tensor **gin) {
    (void)gin;
    cg_tensor *leaf = node->variable;
    cg_tensor *g = gout[0];
    cg_tensor_retain(g);
    for (cg_hook *h = leaf->hooks; h; h = h->next) {
        if (!h->fn) continue; /* a post-accumulate-grad hook */
        cg_tensor *rep = NULL;
        cg_status st = h->fn(h->ctx, g, &rep);
        if (st) {
            cg_tensor_release(g);
            return st;
        }
        if (rep) {
            cg_tensor_release(g);
            g = rep;
        }
    }
    bool create_graph = cg_is_grad_enabled();
    cg_tensor *drop[2] = {NULL, NULL}; /* released after unlocking */
    cg_status st = CG_OK;
    pthread_mutex_lock(&g_grad_lock);
    if (!leaf->grad) {
        /* Store as is only when nobody else can see or write it: the references are ours and,
         * while g is still gout[0], the engine's buffer (released after this node). */
        int refs = g == gout[0] ? 2 : 1;
        bool private_ = atomic_load(&g->refcount) == refs && atomic_load(&g->storage->refcount) == 1 &&
                        obeys_layout(g, leaf) && !g->grad_fn;
        if (!create_graph && !private_) {
            cg_tensor *c = clone_obeying_layout(g, leaf);
            if (!c) st = cg_last_error();
            drop[0] = g;
            g = c;
        }
        if (!st && !create_graph && g->grad_fn) {
            cg_tensor *d = cg_detach(g);
            if (!d) st = cg_last_error();
            drop[1] = g;
            g = d;
        }
        if (!st) {
            leaf->grad = g;
            g = NULL;
        }
    } else {
        cg_tensor *old = leaf->grad;
        if (!create_graph && atomic_load(&old->refcount) == 1 && atomic_load(&old->storage->refcount) == 1 &&
            !old->grad_fn && cg_shape_eq(old->ndim, old->shape, g->ndim, g->shape) && old->dtype == g->dtype) {
            st = cg_add_(old, g);
        } else {
            cg_tensor *sum = cg_add(old, g);
            if (!sum) {
                st = cg_last_error();
            } else {
                leaf->grad = sum;
                drop[0] = old;
            }
        }
    }
    pthread_mutex_unlock(&g_grad_lock);
    cg_tensor_release(g);
    cg_tensor_release(drop[0]);
    cg_tensor_release(drop[1]);
    for (cg_hook *h = leaf->hooks; !st && h; h = h->next)
        if (h->post_fn) st = h->post_fn(h->ctx, leaf);
    return st;
}
