/* engine.c — the backward engine (Note [Engine]): discovers the graph from the
 * roots iteratively, keeps only the nodes that lead to a requested gradient,
 * counts dependencies, and runs each node once all its gradient contributions
 * are summed, highest sequence number first. Serves backward() (accumulate
 * into leaves) and grad() (return gradients, accumulate nothing). */
#include "../autograd/autograd_internal.h"

#include <math.h>
#include <string.h>

typedef struct node_info {
    cg_node *node;
    int deps;
    bool needed;
    bool accumulate;   /* AccumulateGrad allowed to write leaf->grad */
    cg_tensor **buf;   /* [num_outputs] summed incoming gradients */
} node_info;

typedef struct capture {
    cg_node *node;
    int output_nr;
    int info;          /* index in infos, or -1 when unreachable */
    cg_tensor *input;  /* borrowed */
    cg_tensor *grad;   /* captured (owned) */
} capture;

typedef struct graph {
    node_info *infos;
    int64_t n, cap;
    int64_t *table; /* open addressing: index+1, 0 = empty */
    int64_t tcap;
} graph;

static uint64_t hash_ptr(const void *p) {
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static int64_t find(const graph *g, const cg_node *n) {
    if (!g->tcap) return -1;
    uint64_t m = (uint64_t)g->tcap - 1;
    for (uint64_t h = hash_ptr(n) & m;; h = (h + 1) & m) {
        int64_t v = g->table[h];
        if (!v) return -1;
        if (g->infos[v - 1].node == n) return v - 1;
    }
}

static cg_status grow(graph *g) {
    if (g->n + 1 > g->cap) {
        int64_t cap = g->cap ? g->cap * 2 : 64;
        node_info *ni = realloc(g->infos, (size_t)cap * sizeof *ni);
        if (!ni) return cg_set_error(CG_ERR_OOM, "[backward] out of memory");
        g->infos = ni;
        g->cap = cap;
    }
    if ((g->n + 1) * 2 > g->tcap) {
        int64_t tcap = g->tcap ? g->tcap * 2 : 128;
        int64_t *t = calloc((size_t)tcap, sizeof *t);
        if (!t) return cg_set_error(CG_ERR_OOM, "[backward] out of memory");
        free(g->table);
        g->table = t;
        g->tcap = tcap;
        for (int64_t i = 0; i < g->n; i++) {
            uint64_t m = (uint64_t)tcap - 1, h = hash_ptr(g->infos[i].node) & m;
            while (t[h]) h = (h + 1) & m;
            t[h] = i + 1;
        }
    }
    return CG_OK;
}

/* add n if new; returns its index or -1 on OOM */
static int64_t insert(graph *g, cg_node *n, bool *is_new) {
    int64_t i = find(g, n);
    *is_new = i < 0;
    if (i >= 0) return i;
    if (grow(g)) return -1;
    i = g->n++;
    g->infos[i] = (node_info){n, 0, false, false, NULL};
    uint64_t m = (uint64_t)g->tcap - 1, h = hash_ptr(n) & m;
    while (g->table[h]) h = (h + 1) & m;
    g->table[h] = i + 1;
    return i;
}

static void graph_free(graph *g) {
    for (int64_t i = 0; i < g->n; i++) {
        node_info *ni = &g->infos[i];
        if (ni->buf) {
            cg_release_all(ni->node->num_outputs, ni->buf);
            free(ni->buf);
        }
    }
    free(g->infos);
    free(g->table);
}

/* add grad into info->buf[nr] (summing) */
static cg_status buf_add(node_info *ni, int nr, cg_tensor *grad) {
    if (!ni->buf) {
        ni->buf = calloc((size_t)ni->node->num_outputs, sizeof(cg_tensor *));
        if (!ni->buf) return cg_set_error(CG_ERR_OOM, "[backward] out of memory");
    }
    if (!ni->buf[nr]) {
        cg_tensor_retain(grad);
        ni->buf[nr] = grad;
        return CG_OK;
    }
    cg_tensor *s = cg_add(ni->buf[nr], grad);
    if (!s) return cg_last_error();
    cg_tensor_release(ni->buf[nr]);
    ni->buf[nr] = s;
    return CG_OK;
}

/* ready queue: max-heap on node seq */
typedef struct heap { int64_t *a; int64_t n, cap; const node_info *infos; } heap;
/* a node's backward, recorded as a profiler event named after the node */
/* A hook's replacement for gradient i of node n (Note [Node hooks]) must look like the slot it fills. */
static cg_status check_hook_grad(const cg_node *n, const char *which, int i, const cg_tensor_meta *m,
                                 const cg_tensor *g) {
    if (!g || (cg_shape_eq(g->ndim, g->shape, m->ndim, m->shape) && cg_device_eq(g->device, m->device)))
        return CG_OK;
    char want[CG_SHAPE_STR], got[CG_SHAPE_STR];
    return cg_set_error(CG_ERR_SHAPE, "[backward] a hook of %s returned a gradient for %s %d of shape %s on %s, "
                        "expected shape %s on %s", n->name, which, i, cg_shape_str(got, g->ndim, g->shape),
                        cg_device_name(g->device), cg_shape_str(want, m->ndim, m->shape), cg_device_name(m->device));
}

/* Runs n's pre-hooks on grads; *skip: a hook took every gradient away, so the node computes
 * nothing (its inputs get no gradient, as in PyTorch, whose formulas pass an undefined gradient
 * on); a gradient taken from some outputs only is zeros again, as the engine gives outputs
 * without one. */
static cg_status run_pre_hooks(cg_node *n, cg_tensor **grads, bool *skip) {
    for (cg_node_fn_hook *h = n->fn_hooks; h; h = h->next) {
        if (!h->pre) continue;
        cg_status st = h->pre(h->ctx, n, n->num_outputs, grads);
        for (int o = 0; !st && o < n->num_outputs; o++) st = check_hook_grad(n, "output", o, &n->output_meta[o], grads[o]);
        if (st) return st;
    }
    *skip = true;
    for (int o = 0; o < n->num_outputs; o++) *skip &= grads[o] == NULL;
    for (int o = 0; o < n->num_outputs && !*skip && !n->lazy_grads; o++) {
        if (grads[o]) continue;
        const cg_tensor_meta *m = &n->output_meta[o];
        if (!(grads[o] = cg_zeros(m->ndim, m->shape, m->dtype, m->device))) return cg_last_error();
    }
    return CG_OK;
}

static cg_status run_post_hooks(cg_node *n, cg_tensor **grads, cg_tensor **gin) {
    for (cg_node_fn_hook *h = n->fn_hooks; h; h = h->next) {
        if (!h->post) continue;
        cg_status st = h->post(h->ctx, n, n->num_inputs, gin, n->num_outputs, grads);
        for (int i = 0; !st && i < n->num_inputs; i++) st = check_hook_grad(n, "input", i, &n->input_meta[i], gin[i]);
        if (st) return st;
    }
    return CG_OK;
}

/* A node's backward, between its pre- and post-hooks (Note [Node hooks]). */
static cg_status run_node(cg_node *n, cg_tensor **grads, cg_tensor **gin) {
    bool skip = false;
    cg_status st = n->fn_hooks ? run_pre_hooks(n, grads, &skip) : CG_OK;
    if (st) return st;
    if (!skip && !cg_prof_active()) {
        st = n->backward(n, grads, gin);
    } else if (!skip) {
        int64_t ev = cg_prof_begin(n->name, CG_PROF_BACKWARD, n->num_outputs, grads);
        st = n->backward(n, grads, gin);
        cg_prof_end(ev, NULL);
    }
    return !st && n->fn_hooks ? run_post_hooks(n, grads, gin) : st;
}

static bool heap_less(const heap *h, int64_t x, int64_t y) { return h->infos[x].node->seq < h->infos[y].node->seq; }
static cg_status heap_push(heap *h, int64_t v) {
    if (h->n == h->cap) {
        int64_t cap = h->cap ? h->cap * 2 : 64;
        int64_t *a = realloc(h->a, (size_t)cap * sizeof *a);
        if (!a) return cg_set_error(CG_ERR_OOM, "[backward] out of memory");
        h->a = a;
        h->cap = cap;
    }
    int64_t i = h->n++;
    h->a[i] = v;
    while (i > 0 && heap_less(h, h->a[(i - 1) / 2], h->a[i])) {
        int64_t p = (i - 1) / 2, t = h->a[p];
        h->a[p] = h->a[i];
        h->a[i] = t;
        i = p;
    }
    return CG_OK;
}
static int64_t heap_pop(heap *h) {
    int64_t top = h->a[0];
    h->a[0] = h->a[--h->n];
    for (int64_t i = 0;;) {
        int64_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->n && heap_less(h, h->a[m], h->a[l])) m = l;
        if (r < h->n && heap_less(h, h->a[m], h->a[r])) m = r;
        if (m == i) break;
        int64_t t = h->a[m];
        h->a[m] = h->a[i];
        h->a[i] = t;
        i = m;
    }
    return top;
}

static cg_status run_hooks(cg_node *node, int nr, cg_tensor **g) {
    /* user hooks first, then retain_grad (which sees the final gradient) */
    for (int pass = 0; pass < 2; pass++) {
        for (cg_node_hook *h = node->hooks; h; h = h->next) {
            if (h->output_nr != nr || (pass == 0) != (h->retain_target == NULL)) continue;
            if (h->retain_target) {
                cg_tensor *t = h->retain_target;
                cg_tensor *v = cg_is_grad_enabled() ? (cg_tensor_retain(*g), *g) : cg_detach(*g);
                if (!v) return cg_last_error();
                cg_grad_lock();
                cg_tensor *old = t->grad;
                if (old) {
                    cg_tensor *s = cg_add(old, v);
                    cg_tensor_release(v);
                    v = s;
                }
                if (v) t->grad = v;
                cg_grad_unlock();
                if (!v) return cg_last_error();
                cg_tensor_release(old);
                continue;
            }
            cg_tensor *rep = NULL;
            cg_status st = h->fn(h->ctx, *g, &rep);
            if (st) return st;
            if (rep) {
                cg_tensor_release(*g);
                *g = rep;
            }
        }
    }
    return CG_OK;
}

static cg_status anomaly_check(cg_node *node, int n, cg_tensor **gin) {
    for (int i = 0; i < n; i++) {
        if (!gin[i] || !cg_device_has_data(gin[i]->device)) continue;
        bool prev = cg_set_grad_enabled(false);
        cg_tensor *nan = cg_isnan(gin[i]);
        cg_tensor *any = nan ? cg_any(nan, 0, NULL, false) : NULL;
        cg_set_grad_enabled(prev);
        double v = 0;
        cg_status st = any ? cg_tensor_item(any, &v) : cg_last_error();
        cg_tensor_release(nan);
        cg_tensor_release(any);
        if (st) return st;
        if (v != 0)
            return cg_set_error(CG_ERR_RUNTIME, "[anomaly] Function '%s' returned nan values in its %dth output.",
                                node->name, i);
    }
    return CG_OK;
}

static cg_status run_engine(int nroots, cg_tensor *const *roots, cg_tensor *const *grads, bool retain_graph,
                            bool create_graph, int ninputs, cg_tensor *const *inputs, bool accumulate,
                            bool allow_unused, cg_tensor **results) {
    cg_status st = CG_OK;
    graph g = {0};
    heap h = {0};
    cg_node **root_nodes = calloc((size_t)nroots + 1, sizeof *root_nodes);
    int *root_nr = calloc((size_t)nroots + 1, sizeof *root_nr);
    cg_tensor **root_grads = calloc((size_t)nroots + 1, sizeof *root_grads);
    capture *caps = calloc((size_t)ninputs + 1, sizeof *caps);
    int64_t *stack = NULL, *order = NULL;
    bool prev_grad = cg_set_grad_enabled(create_graph);
    bool prev_autocast = cg_autocast_suspend(); /* Note [Autocast in backward] */
    if (!root_nodes || !root_nr || !root_grads || !caps) {
        st = cg_set_error(CG_ERR_OOM, "[backward] out of memory");
        goto done;
    }
    /* 1. roots and their gradients */
    for (int i = 0; i < nroots; i++) {
        cg_tensor *r = roots[i];
        if (!r) { st = cg_set_error(CG_ERR_VALUE, "[backward] output %d is NULL", i); goto done; }
        if (!r->requires_grad) {
            st = cg_set_error(CG_ERR_RUNTIME, "[backward] element %d of tensors does not require grad and does not have a grad_fn", i);
            goto done;
        }
        cg_tensor *gr = grads ? grads[i] : NULL;
        if (gr) {
            if (!cg_shape_eq(gr->ndim, gr->shape, r->ndim, r->shape)) {
                char a[CG_SHAPE_STR], b[CG_SHAPE_STR];
                st = cg_set_error(CG_ERR_SHAPE, "[backward] Mismatch in shape: grad_output[%d] has a shape of %s and output[%d] has a shape of %s",
                                  i, cg_shape_str(a, gr->ndim, gr->shape), i, cg_shape_str(b, r->ndim, r->shape));
                goto done;
            }
            if (gr->dtype != r->dtype || !cg_device_eq(gr->device, r->device)) {
                st = cg_set_error(CG_ERR_DTYPE, "[backward] grad_output[%d] is %s on %s but output[%d] is %s on %s", i,
                                  cg_dtype_name(gr->dtype), cg_device_name(gr->device), i, cg_dtype_name(r->dtype),
                                  cg_device_name(r->device));
                goto done;
            }
            cg_tensor_retain(gr);
        } else {
            if (cg_tensor_numel(r) != 1) {
                st = cg_set_error(CG_ERR_RUNTIME, "[backward] grad can be implicitly created only for scalar outputs (output %d has %lld elements)",
                                  i, (long long)cg_tensor_numel(r));
                goto done;
            }
            gr = cg_ones_like(r);
            if (!gr) { st = cg_last_error(); goto done; }
        }
        root_grads[i] = gr;
        if (r->grad_fn) {
            cg_node_retain(r->grad_fn);
            root_nodes[i] = r->grad_fn;
            root_nr[i] = r->output_nr;
        } else {
            root_nodes[i] = cg_grad_accumulator(r);
            if (!root_nodes[i]) { st = cg_last_error(); goto done; }
        }
    }
    /* 2. captures for the requested inputs */
    for (int i = 0; i < ninputs; i++) {
        cg_tensor *t = inputs[i];
        if (!t || !t->requires_grad) {
            st = cg_set_error(CG_ERR_RUNTIME, "[grad] One of the differentiated Tensors (input %d) does not require grad", i);
            goto done;
        }
        caps[i].input = t;
        caps[i].info = -1;
        if (t->grad_fn) {
            caps[i].node = t->grad_fn;
            caps[i].output_nr = t->output_nr;
        } else {
            caps[i].node = t->grad_acc; /* NULL if no graph uses this leaf */
        }
    }
    /* 3. discovery (iterative DFS) */
    int64_t sp = 0, scap = 64;
    stack = malloc((size_t)scap * sizeof *stack);
    if (!stack) { st = cg_set_error(CG_ERR_OOM, "[backward] out of memory"); goto done; }
    for (int i = 0; i < nroots; i++) {
        bool is_new;
        int64_t k = insert(&g, root_nodes[i], &is_new);
        if (k < 0) { st = cg_last_error(); goto done; }
        if (is_new) stack[sp++] = k;
        if (sp == scap) { /* roots exceed initial stack */
            scap *= 2;
            int64_t *s2 = realloc(stack, (size_t)scap * sizeof *s2);
            if (!s2) { st = cg_set_error(CG_ERR_OOM, "[backward] out of memory"); goto done; }
            stack = s2;
        }
    }
    while (sp > 0) {
        cg_node *n = g.infos[stack[--sp]].node;
        for (int e = 0; e < n->num_inputs; e++) {
            cg_node *c = n->edges[e].fn;
            if (!c) continue;
            bool is_new;
            int64_t k = insert(&g, c, &is_new);
            if (k < 0) { st = cg_last_error(); goto done; }
            if (is_new) {
                if (sp == scap) {
                    scap *= 2;
                    int64_t *s2 = realloc(stack, (size_t)scap * sizeof *s2);
                    if (!s2) { st = cg_set_error(CG_ERR_OOM, "[backward] out of memory"); goto done; }
                    stack = s2;
                }
                stack[sp++] = k;
            }
        }
    }
    /* 4. topological order (Kahn) over all discovered nodes */
    order = malloc((size_t)(g.n + 1) * sizeof *order);
    if (!order) { st = cg_set_error(CG_ERR_OOM, "[backward] out of memory"); goto done; }
    for (int64_t i = 0; i < g.n; i++) g.infos[i].deps = 0;
    for (int64_t i = 0; i < g.n; i++) {
        cg_node *n = g.infos[i].node;
        for (int e = 0; e < n->num_inputs; e++)
            if (n->edges[e].fn) g.infos[find(&g, n->edges[e].fn)].deps++;
    }
    int64_t on = 0, head = 0;
    for (int64_t i = 0; i < g.n; i++) if (g.infos[i].deps == 0) order[on++] = i;
    while (head < on) {
        cg_node *n = g.infos[order[head++]].node;
        for (int e = 0; e < n->num_inputs; e++) {
            if (!n->edges[e].fn) continue;
            int64_t k = find(&g, n->edges[e].fn);
            if (--g.infos[k].deps == 0) order[on++] = k;
        }
    }
    /* 5. needed: capture nodes, allowed accumulators, and whatever reaches them */
    for (int i = 0; i < ninputs; i++) {
        if (!caps[i].node) continue;
        caps[i].info = (int)find(&g, caps[i].node);
        if (caps[i].info < 0) continue;
        node_info *ni = &g.infos[caps[i].info];
        ni->needed = true;
        if (accumulate && ni->node->variable) ni->accumulate = true;
    }
    if (accumulate && ninputs == 0)
        for (int64_t i = 0; i < g.n; i++)
            if (g.infos[i].node->variable) g.infos[i].needed = g.infos[i].accumulate = true;
    for (int64_t j = on - 1; j >= 0; j--) {
        node_info *ni = &g.infos[order[j]];
        for (int e = 0; e < ni->node->num_inputs && !ni->needed; e++)
            if (ni->node->edges[e].fn && g.infos[find(&g, ni->node->edges[e].fn)].needed) ni->needed = true;
    }
    /* 6. dependencies among needed nodes */
    for (int64_t i = 0; i < g.n; i++) g.infos[i].deps = 0;
    for (int64_t i = 0; i < g.n; i++) {
        if (!g.infos[i].needed) continue;
        cg_node *n = g.infos[i].node;
        for (int e = 0; e < n->num_inputs; e++) {
            if (!n->edges[e].fn) continue;
            node_info *c = &g.infos[find(&g, n->edges[e].fn)];
            if (c->needed) c->deps++;
        }
    }
    h.infos = g.infos;
    for (int i = 0; i < nroots; i++) {
        node_info *ni = &g.infos[find(&g, root_nodes[i])];
        if (!ni->needed) continue;
        if ((st = buf_add(ni, root_nr[i], root_grads[i]))) goto done;
    }
    for (int i = 0; i < nroots; i++) {
        int64_t k = find(&g, root_nodes[i]);
        node_info *ni = &g.infos[k];
        if (ni->needed && ni->deps == 0) {
            ni->deps = -1; /* queued */
            if ((st = heap_push(&h, k))) goto done;
        }
    }
    /* 7. execute */
    while (h.n > 0) {
        int64_t k = heap_pop(&h);
        node_info *ni = &g.infos[k];
        cg_node *n = ni->node;
        bool any = false;
        if (ni->buf)
            for (int o = 0; o < n->num_outputs; o++) any |= ni->buf[o] != NULL;
        cg_tensor *gin_small[8] = {0};
        cg_tensor **gin = n->num_inputs <= 8 ? gin_small : calloc((size_t)n->num_inputs, sizeof *gin);
        if (!gin) { st = cg_set_error(CG_ERR_OOM, "[backward] out of memory"); goto done; }
        if (any) {
            for (int o = 0; o < n->num_outputs; o++) {
                if (!ni->buf[o]) {
                    if (n->lazy_grads) continue;
                    const cg_tensor_meta *m = &n->output_meta[o];
                    ni->buf[o] = cg_zeros(m->ndim, m->shape, m->dtype, m->device);
                    if (!ni->buf[o]) { st = cg_last_error(); break; }
                } else if ((st = run_hooks(n, o, &ni->buf[o]))) {
                    break;
                }
            }
            for (int c = 0; !st && c < ninputs; c++) {
                if (caps[c].info != k) continue;
                int nr = n->variable ? 0 : caps[c].output_nr;
                if (!ni->buf[nr]) continue; /* lazy custom node output: no gradient */
                cg_tensor_retain(ni->buf[nr]);
                caps[c].grad = ni->buf[nr];
            }
            if (!st && n->variable) {
                if (ni->accumulate) st = run_node(n, ni->buf, gin);
            } else if (!st) {
                bool downstream = false;
                for (int e = 0; e < n->num_inputs && !downstream; e++)
                    downstream = n->edges[e].fn && g.infos[find(&g, n->edges[e].fn)].needed;
                if (downstream) st = run_node(n, ni->buf, gin);
                if (!st && cg_is_anomaly_enabled()) st = anomaly_check(n, n->num_inputs, gin);
            }
            if (!retain_graph) cg_node_release_saved(n);
        }
        for (int e = 0; !st && e < n->num_inputs; e++) {
            cg_node *c = n->edges[e].fn;
            if (!c) continue;
            int64_t ck = find(&g, c);
            node_info *cn = &g.infos[ck];
            if (!cn->needed) continue;
            if (gin[e] && (st = buf_add(cn, n->edges[e].input_nr, gin[e]))) break;
            if (--cn->deps == 0) {
                cn->deps = -1;
                st = heap_push(&h, ck);
            }
        }
        cg_release_all(n->num_inputs, gin);
        if (gin != gin_small) free(gin);
        if (ni->buf) {
            cg_release_all(n->num_outputs, ni->buf);
            free(ni->buf);
            ni->buf = NULL;
        }
        if (st) goto done;
    }
    /* 8. results */
    for (int i = 0; i < ninputs; i++) {
        if (accumulate) {
            cg_tensor *t = caps[i].input;
            if (t->grad_fn && caps[i].grad) { /* non-leaf input of backward(inputs=...) */
                cg_tensor *v = create_graph ? (cg_tensor_retain(caps[i].grad), caps[i].grad) : cg_detach(caps[i].grad);
                if (!v) { st = cg_last_error(); goto done; }
                cg_grad_lock();
                cg_tensor *old = t->grad;
                if (old) {
                    cg_tensor *s = cg_add(old, v);
                    cg_tensor_release(v);
                    v = s;
                }
                if (v) t->grad = v;
                cg_grad_unlock();
                if (!v) { st = cg_last_error(); goto done; }
                cg_tensor_release(old);
            }
            continue;
        }
        if (!caps[i].grad && !allow_unused) {
            st = cg_set_error(CG_ERR_RUNTIME, "[grad] One of the differentiated Tensors (input %d) appears to not have been used in the graph. "
                              "Set allow_unused=True if this is the desired behavior.", i);
            goto done;
        }
    }
    if (!accumulate)
        for (int i = 0; i < ninputs; i++) {
            results[i] = caps[i].grad;
            caps[i].grad = NULL;
        }
done:
    cg_set_grad_enabled(prev_grad);
    cg_autocast_resume(prev_autocast);
    if (caps) for (int i = 0; i < ninputs; i++) cg_tensor_release(caps[i].grad);
    if (root_nodes) for (int i = 0; i < nroots; i++) cg_node_release(root_nodes[i]);
    if (root_grads) cg_release_all(nroots, root_grads);
    graph_free(&g);
    free(h.a);
    free(stack);
    free(order);
    free(root_nodes);
    free(root_nr);
    free(root_grads);
    free(caps);
    return st;
}

cg_status cg_backward_multi(int n_roots, cg_tensor *const *roots, cg_tensor *const *grads, bool retain_graph,
                            bool create_graph, int n_inputs, cg_tensor *const *inputs) {
    return run_engine(n_roots, roots, grads, retain_graph, create_graph, n_inputs, inputs, true, true, NULL);
}

cg_status cg_backward(cg_tensor *root, cg_tensor *grad, bool retain_graph, bool create_graph) {
    return run_engine(1, &root, &grad, retain_graph, create_graph, 0, NULL, true, true, NULL);
}

cg_status cg_autograd_grad(int n_outputs, cg_tensor *const *outputs, cg_tensor *const *grad_outputs,
                           int n_inputs, cg_tensor *const *inputs, bool retain_graph, bool create_graph,
                           bool allow_unused, cg_tensor **results) {
    for (int i = 0; i < n_inputs; i++) results[i] = NULL;
    CG_CHECK_S(n_inputs > 0, CG_ERR_VALUE, "[grad] requires at least one input");
    return run_engine(n_outputs, outputs, grad_outputs, retain_graph, create_graph, n_inputs, inputs, false,
                      allow_unused, results);
}
