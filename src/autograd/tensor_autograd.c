/* tensor_autograd.c — the autograd side of a tensor: requires_grad, grad,
 * grad_fn, retain_grad, detach, hooks, and the in-place guards. */
#include "autograd_internal.h"

#include <stdio.h>
#include <string.h>

bool cg_tensor_requires_grad(const cg_tensor *t) { return t->requires_grad; }

cg_status cg_tensor_set_requires_grad(cg_tensor *t, bool requires_grad) {
    if (t->grad_fn) {
        if (requires_grad) return CG_OK;
        return cg_set_error(CG_ERR_RUNTIME,
                            "[requires_grad_] you can only change requires_grad flags of leaf variables. If you want to "
                            "use a computed variable in a subgraph that doesn't require differentiation use "
                            "var_no_grad = var.detach().");
    }
    if (requires_grad && !cg_dtype_is_floating(t->dtype))
        return cg_set_error(CG_ERR_RUNTIME, "[requires_grad_] only Tensors of floating point dtype can require gradients (got %s)",
                            cg_dtype_name(t->dtype));
    t->requires_grad = requires_grad;
    return CG_OK;
}

cg_tensor *cg_tensor_grad(const cg_tensor *t) { return t->grad; }

cg_tensor *cg_tensor_grad_ref(const cg_tensor *t) {
    cg_grad_lock();
    cg_tensor *g = t->grad;
    if (g) cg_tensor_retain(g);
    cg_grad_unlock();
    return g;
}

cg_status cg_tensor_set_grad(cg_tensor *t, cg_tensor *grad) {
    if (grad) {
        if (!cg_shape_eq(grad->ndim, grad->shape, t->ndim, t->shape)) {
            char a[CG_SHAPE_STR], b[CG_SHAPE_STR];
            return cg_set_error(CG_ERR_SHAPE, "[grad] assigned grad has shape %s but the tensor has shape %s",
                                cg_shape_str(a, grad->ndim, grad->shape), cg_shape_str(b, t->ndim, t->shape));
        }
        if (grad->dtype != t->dtype)
            return cg_set_error(CG_ERR_DTYPE, "[grad] assigned grad has dtype %s but the tensor has dtype %s",
                                cg_dtype_name(grad->dtype), cg_dtype_name(t->dtype));
        if (!cg_device_eq(grad->device, t->device))
            return cg_set_error(CG_ERR_DEVICE, "[grad] assigned grad is on %s but the tensor is on %s",
                                cg_device_name(grad->device), cg_device_name(t->device));
        cg_tensor_retain(grad);
    }
    cg_grad_lock();
    cg_tensor *old = t->grad;
    t->grad = grad;
    cg_grad_unlock();
    cg_tensor_release(old); /* outside the lock: freeing may tear down a graph */
    return CG_OK;
}

cg_node *cg_tensor_grad_fn(const cg_tensor *t) { return t->grad_fn; }
int cg_tensor_output_nr(const cg_tensor *t) { return t->output_nr; }
bool cg_tensor_is_leaf(const cg_tensor *t) { return t->grad_fn == NULL; }
bool cg_tensor_retains_grad(const cg_tensor *t) { return t->retains_grad; }

static atomic_int_fast64_t g_hook_id = 1;

cg_status cg_tensor_retain_grad(cg_tensor *t) {
    if (!t->requires_grad)
        return cg_set_error(CG_ERR_RUNTIME, "[retain_grad] can't retain_grad on Tensor that has requires_grad=False");
    if (!t->grad_fn || t->retains_grad) return CG_OK; /* leaves always keep their grad */
    cg_node_hook *h = calloc(1, sizeof *h);
    if (!h) return cg_set_error(CG_ERR_OOM, "[retain_grad] out of memory");
    h->id = atomic_fetch_add(&g_hook_id, 1);
    h->output_nr = t->output_nr;
    h->retain_target = t; /* weak: removed when t dies (tensor.c) */
    h->next = t->grad_fn->hooks;
    t->grad_fn->hooks = h;
    t->retains_grad = true;
    return CG_OK;
}

/* append h to the singly linked list at *pp: hooks run in registration order */
#define APPEND_HOOK(type, head, h)            \
    do {                                      \
        type **pp_ = &(head);                 \
        while (*pp_) pp_ = &(*pp_)->next;     \
        *pp_ = (h);                           \
    } while (0)

int64_t cg_tensor_register_hook(cg_tensor *t, cg_hook_fn fn, void *ctx, void (*ctx_free)(void *)) {
    if (!t->requires_grad) {
        cg_set_error(CG_ERR_RUNTIME, "[register_hook] cannot register a hook on a tensor that doesn't require gradient");
        return -1;
    }
    int64_t id = atomic_fetch_add(&g_hook_id, 1);
    if (t->grad_fn) {
        cg_node_hook *h = calloc(1, sizeof *h);
        if (!h) {
            cg_set_error(CG_ERR_OOM, "[register_hook] out of memory");
            return -1;
        }
        *h = (cg_node_hook){id, t->output_nr, fn, ctx, ctx_free, NULL, NULL};
        APPEND_HOOK(cg_node_hook, t->grad_fn->hooks, h);
        return id;
    }
    cg_hook *h = calloc(1, sizeof *h);
    if (!h) {
        cg_set_error(CG_ERR_OOM, "[register_hook] out of memory");
        return -1;
    }
    *h = (cg_hook){id, fn, NULL, ctx, ctx_free, NULL};
    APPEND_HOOK(cg_hook, t->hooks, h);
    return id;
}

int64_t cg_tensor_register_post_accumulate_grad_hook(cg_tensor *t, cg_post_accumulate_hook_fn fn, void *ctx,
                                                     void (*ctx_free)(void *)) {
    const char *why = !t->requires_grad ? "cannot register a hook on a tensor that doesn't require gradient"
                      : t->grad_fn      ? "post accumulate grad hooks cannot be registered on non-leaf tensors"
                                        : NULL;
    if (why || !fn) {
        cg_set_error(why ? CG_ERR_RUNTIME : CG_ERR_VALUE, "[register_post_accumulate_grad_hook] %s",
                     why ? why : "the hook is NULL");
        return -1;
    }
    cg_hook *h = calloc(1, sizeof *h);
    if (!h) {
        cg_set_error(CG_ERR_OOM, "[register_post_accumulate_grad_hook] out of memory");
        return -1;
    }
    int64_t id = atomic_fetch_add(&g_hook_id, 1);
    *h = (cg_hook){id, NULL, fn, ctx, ctx_free, NULL};
    APPEND_HOOK(cg_hook, t->hooks, h);
    return id;
}

/* Note [Node hooks] */
static int64_t node_register(cg_node *n, cg_node_pre_hook_fn pre, cg_node_post_hook_fn post, void *ctx,
                             void (*ctx_free)(void *)) {
    const char *op = pre ? "register_prehook" : "register_hook";
    if (!n || (!pre && !post)) {
        cg_set_error(CG_ERR_VALUE, "[Node.%s] the node or the hook is NULL", op);
        return -1;
    }
    cg_node_fn_hook *h = calloc(1, sizeof *h);
    if (!h) {
        cg_set_error(CG_ERR_OOM, "[Node.%s] out of memory", op);
        return -1;
    }
    *h = (cg_node_fn_hook){atomic_fetch_add(&g_hook_id, 1), pre, post, ctx, ctx_free, NULL};
    APPEND_HOOK(cg_node_fn_hook, n->fn_hooks, h);
    return h->id;
}
int64_t cg_node_register_pre_hook(cg_node *n, cg_node_pre_hook_fn fn, void *ctx, void (*ctx_free)(void *)) {
    return node_register(n, fn, NULL, ctx, ctx_free);
}
int64_t cg_node_register_post_hook(cg_node *n, cg_node_post_hook_fn fn, void *ctx, void (*ctx_free)(void *)) {
    return node_register(n, NULL, fn, ctx, ctx_free);
}
cg_status cg_node_remove_hook(cg_node *n, int64_t handle) {
    for (cg_node_fn_hook **pp = &n->fn_hooks; *pp; pp = &(*pp)->next) {
        if ((*pp)->id != handle) continue;
        cg_node_fn_hook *h = *pp;
        *pp = h->next;
        if (h->ctx_free) h->ctx_free(h->ctx);
        free(h);
        break;
    }
    return CG_OK;
}

cg_status cg_tensor_remove_hook(cg_tensor *t, int64_t handle) {
    for (cg_hook **pp = &t->hooks; *pp; pp = &(*pp)->next) {
        if ((*pp)->id != handle) continue;
        cg_hook *h = *pp;
        *pp = h->next;
        if (h->ctx_free) h->ctx_free(h->ctx);
        free(h);
        return CG_OK;
    }
    if (t->grad_fn)
        for (cg_node_hook **pp = &t->grad_fn->hooks; *pp; pp = &(*pp)->next) {
            if ((*pp)->id != handle) continue;
            cg_node_hook *h = *pp;
            *pp = h->next;
            if (h->ctx_free) h->ctx_free(h->ctx);
            free(h);
            return CG_OK;
        }
    return CG_OK; /* already gone (e.g. the graph was freed): removing is idempotent */
}

/* ------------------------------------------------------------- hook contexts for a binding's collector
 * (Note [Hook contexts and a garbage collector] in cgrad.h) */

long cg_tensor_use_count(const cg_tensor *t) { return atomic_load(&((cg_tensor *)t)->refcount); }
long cg_node_use_count(const cg_node *n) { return atomic_load(&((cg_node *)n)->refcount); }

/* visit(ctx, arg) on each entry of list `head` whose free function is ctx_free */
#define VISIT_LIST(type, head)                                                   \
    for (const type *h = (head); h; h = h->next)                                 \
        if (h->ctx_free == ctx_free) {                                           \
            int rc = visit(h->ctx, arg);                                         \
            if (rc) return rc;                                                   \
        }

int cg_tensor_visit_hook_contexts(const cg_tensor *t, void (*ctx_free)(void *), cg_context_visit_fn visit, void *arg) {
    VISIT_LIST(cg_hook, t->hooks);
    return 0;
}

int cg_node_visit_hook_contexts(const cg_node *n, void (*ctx_free)(void *), cg_context_visit_fn visit, void *arg) {
    VISIT_LIST(cg_node_fn_hook, n->fn_hooks);
    VISIT_LIST(cg_node_hook, n->hooks);
    if (n->user && n->user_free == ctx_free) return visit(n->user, arg);
    return 0;
}

/* Moves the entries of list *head whose free function is ctx_free to *dropped (in any order). The
 * contexts are freed after every list is unlinked: a free function may run binding code that reads
 * the lists. */
#define UNLINK_LIST(type, head, dropped)                                         \
    for (type **pp = (head); *pp;) {                                             \
        type *h = *pp;                                                           \
        if (h->ctx_free != ctx_free) {                                           \
            pp = &h->next;                                                       \
            continue;                                                            \
        }                                                                        \
        *pp = h->next;                                                           \
        h->next = (dropped);                                                     \
        (dropped) = h;                                                           \
    }
#define FREE_LIST(type, dropped)                                                 \
    while (dropped) {                                                            \
        type *h = (dropped);                                                     \
        (dropped) = h->next;                                                     \
        h->ctx_free(h->ctx);                                                     \
        free(h);                                                                 \
    }

void cg_tensor_drop_hook_contexts(cg_tensor *t, void (*ctx_free)(void *)) {
    cg_hook *dropped = NULL;
    UNLINK_LIST(cg_hook, &t->hooks, dropped);
    FREE_LIST(cg_hook, dropped);
}

void cg_node_drop_hook_contexts(cg_node *n, void (*ctx_free)(void *)) {
    cg_node_fn_hook *fns = NULL;
    cg_node_hook *outs = NULL;
    UNLINK_LIST(cg_node_fn_hook, &n->fn_hooks, fns);
    UNLINK_LIST(cg_node_hook, &n->hooks, outs);
    void *user = n->user_free == ctx_free ? n->user : NULL;
    if (user) n->user = NULL, n->user_free = NULL;
    FREE_LIST(cg_node_fn_hook, fns);
    FREE_LIST(cg_node_hook, outs);
    if (user) ctx_free(user);
}

CG_PROF_FN(cg_tensor *, cg_detach, "detach", (cg_tensor *t), (t), t) {
    CG_CHECK(t, CG_ERR_VALUE, "[detach] argument is NULL");
    return cg_tensor_alias(t); /* a plain alias: in-place writes reach t's data, not its graph */
}

CG_PROF_FN(cg_status, cg_detach_, "detach_", (cg_tensor *t), (t), t) {
    if (t->retains_grad && t->grad_fn) {
        for (cg_node_hook **pp = &t->grad_fn->hooks; *pp;) {
            cg_node_hook *h = *pp;
            if (h->retain_target == t) {
                *pp = h->next;
                free(h);
            } else {
                pp = &h->next;
            }
        }
        t->retains_grad = false;
    }
    if (t->grad_fn) cg_node_release(t->grad_fn);
    t->grad_fn = NULL;
    t->output_nr = 0;
    t->requires_grad = false;
    return CG_OK;
}

void cg_tensor_set_history(cg_tensor *t, cg_node *node, int nr) {
    if (node) cg_node_retain(node);
    if (t->retains_grad && t->grad_fn) { /* move the retain hook to the new history */
        cg_detach_(t);
        t->retains_grad = false;
        if (node) {
            t->grad_fn = node;
            t->output_nr = nr;
            t->requires_grad = true;
            cg_tensor_retain_grad(t);
            return;
        }
    }
    if (t->grad_fn) cg_node_release(t->grad_fn);
    t->grad_fn = node;
    t->output_nr = nr;
    if (node) t->requires_grad = true;
}

cg_status cg_check_inplace_history(const char *op, const char *suffix, const cg_tensor *self) {
    if (!cg_is_grad_enabled()) return CG_OK;
    if (self->requires_grad && !self->grad_fn)
        return cg_set_error(CG_ERR_RUNTIME, "[%s%s] a leaf Variable that requires grad is being used in an in-place "
                            "operation.", op, suffix);
    if (self->base && self->base->requires_grad && !self->base->grad_fn)
        return cg_set_error(CG_ERR_RUNTIME, "[%s%s] a view of a leaf Variable that requires grad is being used in an "
                            "in-place operation.", op, suffix);
    return CG_OK;
}

cg_status cg_check_inplace(const char *op, cg_tensor *self) {
    if (self->storage->readonly) {
        char name[64];
        snprintf(name, sizeof name, "%s_", op);
        return cg_check_writable(name, self);
    }
    if (cg_check_inplace_history(op, "_", self)) return cg_last_error();
    for (int d = 0; d < self->ndim; d++) /* cg_tensor_has_internal_overlap, inline on the per-op path */
        if (self->strides[d] == 0 && self->shape[d] > 1)
            return cg_set_error(CG_ERR_RUNTIME,
                                "[%s_] unsupported operation: more than one element of the written-to tensor refers to "
                                "a single memory location. Please clone() the tensor before performing the operation.",
                                op);
    return CG_OK;
}

static cg_status overlap_error(const char *op) {
    return cg_set_error(CG_ERR_RUNTIME,
                        "[%s_] unsupported operation: some elements of the input tensor and the written-to tensor "
                        "refer to a single memory location. Please clone() the tensor before performing the operation.",
                        op);
}

cg_status cg_check_no_partial_overlap(const char *op, const cg_tensor *out, const cg_tensor *in) {
    if (in && cg_tensor_overlap(out, in) == CG_OVERLAP_PARTIAL) return overlap_error(op);
    return CG_OK;
}

cg_status cg_check_no_overlap(const char *op, const cg_tensor *out, const cg_tensor *in) {
    if (!in) return CG_OK;
    cg_overlap s = cg_tensor_overlap(out, in);
    return s == CG_OVERLAP_PARTIAL || s == CG_OVERLAP_FULL ? overlap_error(op) : CG_OK;
}

/* the retain_grad hook of t (output of n) goes with t (cg_tensor_release) */
void cg_node_drop_retain_hook(cg_node *n, const cg_tensor *t) {
    for (cg_node_hook **pp = &n->hooks; *pp;) {
        cg_node_hook *h = *pp;
        if (h->retain_target == t) {
            *pp = h->next;
            free(h);
        } else {
            pp = &h->next;
        }
    }
}
