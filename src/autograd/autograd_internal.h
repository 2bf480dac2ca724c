/* autograd_internal.h — internal: the graph node, saved tensors and the
 * wiring helpers every op driver uses to record history. */
#ifndef CG_AUTOGRAD_INTERNAL_H
#define CG_AUTOGRAD_INTERNAL_H

#include "../core/core_internal.h"

/* Backward of a node: grad_outputs[i] (borrowed; never NULL: the engine fills
 * zeros for outputs that got no gradient) -> grad_inputs[i] (new reference, or
 * NULL for "no gradient"). Only inputs with cg_node_needs_grad(node, i) need
 * a result. Formulas are written with cg ops (Note [One formula]) so running
 * them with grad mode on builds the graph for higher-order gradients. */
typedef cg_status (*cg_backward_fn)(cg_node *node, cg_tensor *const *grad_outputs, cg_tensor **grad_inputs);

typedef struct cg_edge {
    cg_node *fn;   /* owned; NULL when the input does not require grad */
    int input_nr;  /* which output of fn this input was */
} cg_edge;

/* Shape/dtype of an input or output, kept so gradients can be reduced to the
 * input's shape and missing gradients filled with zeros. */
typedef struct cg_tensor_meta {
    int ndim;
    cg_dtype dtype;
    cg_device device;
    int64_t shape[CG_MAX_DIMS];
} cg_tensor_meta;

/* Note [Saved tensor versions]: a saved tensor records its storage version at
 * save time; unpacking compares and fails naming the op, the shape and both
 * versions. Outputs are saved as history-free aliases (no grad_fn) so the node
 * holds no reference cycle; unpacking re-attaches this node as grad_fn. */
typedef struct cg_saved {
    cg_tensor *t;       /* owned; NULL if the slot is unused */
    uint64_t version;
    bool is_output;
    int output_nr;
} cg_saved;

typedef struct cg_node_hook {
    int64_t id;
    int output_nr;
    cg_hook_fn fn;
    void *ctx;
    void (*ctx_free)(void *);
    cg_tensor *retain_target; /* for retain_grad hooks: weak pointer, see tensor release */
    struct cg_node_hook *next;
} cg_node_hook;

/* Note [Node hooks]: hooks on the node itself (PyTorch's Node.register_prehook /
 * register_hook), run by the engine around the node's backward. */
typedef struct cg_node_fn_hook {
    int64_t id;
    cg_node_pre_hook_fn pre;   /* exactly one of pre / post is set */
    cg_node_post_hook_fn post;
    void *ctx;
    void (*ctx_free)(void *);
    struct cg_node_fn_hook *next;
} cg_node_fn_hook;

#define CG_NODE_IATTRS (CG_MAX_DIMS * 2 + 8)
#define CG_NODE_DATTRS 8

struct cg_node {
    atomic_long refcount;
    const char *name;      /* "MulBackward0" */
    cg_backward_fn backward;
    const void *op;        /* the op descriptor (drivers) */
    uint64_t seq;          /* creation order; higher runs first */
    int num_inputs, num_outputs, num_saved;
    cg_edge *edges;        /* [num_inputs] */
    cg_tensor_meta *input_meta;   /* [num_inputs] */
    cg_tensor_meta *output_meta;  /* [num_outputs] */
    cg_saved *saved;       /* [num_saved] */
    bool saved_released;   /* saved tensors freed after a backward without retain_graph */
    bool lazy_grads;       /* custom nodes: outputs without a gradient reach backward as NULL */
    cg_node_hook *hooks;   /* tensor hooks and retain_grad of this node's outputs */
    cg_node_fn_hook *fn_hooks; /* Note [Node hooks], in registration order */
    void *pyobj;           /* weak back-pointer for the binding */
    void *user;            /* the binding's data (Python: Node.metadata), freed with user_free */
    void (*user_free)(void *);
    cg_tensor *variable;   /* AccumulateGrad: the leaf (owned) */
    /* op attributes: small integers and doubles (dims, scalars, ...) */
    int64_t iattr[CG_NODE_IATTRS];
    double dattr[CG_NODE_DATTRS];
    void *extra;                  /* larger op data, freed with extra_free */
    void (*extra_free)(void *);
};

/* True when grad mode is on and some input requires grad. */
bool cg_any_requires_grad(int n, cg_tensor *const *inputs);

/* The lock over every tensor's ->grad slot (Note [Concurrent backward]):
 * held while a grad is read with a new reference, replaced or accumulated into. */
void cg_grad_lock(void);
void cg_grad_unlock(void);

/* Create a node with edges to `inputs` (their grad_fn, or the leaf's
 * AccumulateGrad) and input metadata. NULL + CG_ERR_OOM on failure. */
cg_node *cg_node_new(const char *name, cg_backward_fn backward, const void *op,
                     int num_inputs, cg_tensor *const *inputs, int num_outputs, int num_saved);
/* Make `t` output `i` of `node`: grad_fn, output_nr, requires_grad, metadata. */
void cg_node_set_output(cg_node *node, int i, cg_tensor *t);
/* Save a tensor (input, or output i of this node) in slot `slot`. */
cg_status cg_node_save(cg_node *node, int slot, cg_tensor *t, bool is_output, int output_nr);
/* Unpack saved slot (new reference) or NULL with a clear error (freed, or
 * modified in place). */
cg_tensor *cg_node_saved(cg_node *node, int slot);
/* Does input i of node need a gradient? */
static inline bool cg_node_needs_grad(const cg_node *node, int i) { return node->edges[i].fn != NULL; }
void cg_node_release_saved(cg_node *node);

/* The leaf's gradient accumulator (created on demand, cached weakly). New ref. */
cg_node *cg_grad_accumulator(cg_tensor *leaf);

/* Convenience: wire a single-output op. Returns the node (borrowed; owned by
 * `out`) or NULL when no graph is needed (not an error) — check cg_last_error
 * only if `*failed` is set. */
cg_node *cg_wire_unary_output(const char *name, cg_backward_fn backward, const void *op,
                              int num_inputs, cg_tensor *const *inputs, cg_tensor *out,
                              int num_saved, bool *failed);

/* Reduce a gradient to `shape` (sum over broadcast dims), Note [reduce_to_shape]. New ref. */
cg_tensor *cg_reduce_to_shape(cg_tensor *grad, int ndim, const int64_t *shape);

/* Iterative teardown: deferred release (Note [Iterative teardown]). */
void cg_teardown_push_node(cg_node *n);

/* Engine hook for in-place ops: move t's history to `node` output `nr`. */
void cg_tensor_set_history(cg_tensor *t, cg_node *node, int nr);

/* in-place guard: fails on a leaf (or a view of a leaf) requiring grad in grad
 * mode, and on self with internal overlap (a stride-0 dim; Note [Memory
 * overlap] in src/core/overlap.c). */
cg_status cg_check_inplace(const char *op, cg_tensor *self);
/* The history half of cg_check_inplace (grad mode on: not a leaf that requires grad, nor a view of
 * one), for in-place ops that write no data (Note [In-place views]); errors name op followed by suffix. */
cg_status cg_check_inplace_history(const char *op, const char *suffix, const cg_tensor *self);
/* Note [Memory overlap]: CG_ERR_RUNTIME "[op_] unsupported operation: some
 * elements of the input tensor and the written-to tensor refer to a single
 * memory location..." when `in` overlaps `out` partially (any overlap:
 * CG_OVERLAP_FULL too, for index writes). in may be NULL (no check). O(ndim). */
cg_status cg_check_no_partial_overlap(const char *op, const cg_tensor *out, const cg_tensor *in);
cg_status cg_check_no_overlap(const char *op, const cg_tensor *out, const cg_tensor *in);
/* Note [In-place]: finish an in-place op computed out of place as `result`
 * (same shape as self): copy into self's storage (bumping its version), then
 * move history: self takes result's history, or, for a view, its base gets a
 * CopySlices node and self becomes a view of the new base. */
cg_status cg_inplace_commit(const char *op, cg_tensor *self, cg_tensor *result);

#endif
