/* dispatch_internal.h — internal: the op schema, the strided iterator and the
 * op-family drivers (elementwise: unary / binary / n-ary; reduction). Every op
 * is a const descriptor handed to one of these drivers (Note [Drivers]). */
#ifndef CG_KERNEL_INTERNAL_H
#define CG_KERNEL_INTERNAL_H

#include "../autograd/autograd_internal.h"
#include "../backend/backend.h"

/* Note [Drivers]: a driver owns, in order: null / dtype / device validation;
 * the schema guard (determinism, AMP effective dtype); broadcast inference;
 * output allocation; dispatch to the backend loop (skipped on meta); and graph
 * wiring when grad mode is on and an input requires grad. Its node's backward
 * runs the op's formula and reduces each gradient to its input's shape. */

typedef enum cg_amp_policy {
    CG_AMP_KEEP = 0,  /* run in the input dtype */
    CG_AMP_LOWER,     /* run in the autocast dtype (GEMM-like ops) */
    CG_AMP_FP32,      /* force float32 (precision-sensitive ops) */
} cg_amp_policy;

typedef struct cg_op_schema {
    const char *name;      /* "add": used in error messages and op lookup */
    const char *node_name; /* "AddBackward0": the autograd node's name */
    int version;
    cg_amp_policy amp;
    bool nondeterministic; /* fails under cg_set_deterministic(true) */
    bool saves_inputs;
    bool saves_output;
} cg_op_schema;

/* Determinism check and AMP casts. in[0..n) borrowed; out[i] receives either
 * in[i] (when *owned is false) or new references the caller releases. */
cg_status cg_schema_guard(const cg_op_schema *s, int n, cg_tensor *const *in, cg_tensor **out, bool *owned);
/* The dtype autocast casts this op's inputs to (policy LOWER or FP32). */
cg_dtype cg_amp_target(const cg_op_schema *s);
/* Bit i set: the guard will cast input i (autocast on, policy not KEEP), so
 * a dtype check before the guard skips it (cg_check_same's skip_mask). */
unsigned cg_amp_cast_mask(const cg_op_schema *s, int n, cg_tensor *const *in);

/* ------------------------------------------------------------- iterator plan */

/* Build the plan (cg_iter, src/backend/backend.h) for args[0..nargs): each
 * must broadcast to (ndim, shape); broadcast dims get stride 0; dims are
 * ordered innermost-fastest and coalesced where they merge. */
void cg_iter_init(cg_iter *it, int nargs, cg_tensor *const *args, int ndim, const int64_t *shape);

/* ------------------------------------------------------------- elementwise ops */

#define CG_SAME_DTYPE (-1)

typedef struct cg_elementwise_op {
    cg_op_schema schema;
    int arity;                      /* 1 .. CG_ITER_MAX_ARGS-1 */
    unsigned bool_inputs;           /* bit i: input i must be bool (where's cond); not dtype-matched */
    int out_dtype;                  /* CG_SAME_DTYPE or a fixed cg_dtype (bool for comparisons) */
    uint32_t dtypes;                /* CG_DTYPE_BIT of each dtype it runs on (by the data inputs'); the
                                     * loops are the backends', found by id (Note [Backends]) */
    cg_backward_fn backward;        /* NULL = not differentiable (no graph recorded) */
    const char *loop_error;         /* message when a loop flags an error (Note [Loop errors]) */
    cg_op_id id;                    /* its row in the op table (src/ops/elementwise_ops.py) */
} cg_elementwise_op;

typedef cg_elementwise_op cg_unary_op;
typedef cg_elementwise_op cg_binary_op;
typedef cg_elementwise_op cg_nary_op;

/* The elementwise driver. params (np <= CG_EW_MAX_PARAMS doubles) reach the
 * loop and are kept in node->dattr for the backward formula. */
cg_tensor *cg_elementwise_forward(const cg_elementwise_op *op, int n, cg_tensor *const *inputs,
                                  const double *params, int np);
static inline cg_tensor *cg_unary_forward(const cg_unary_op *op, cg_tensor *x, const double *p, int np) {
    return cg_elementwise_forward(op, 1, &x, p, np);
}
static inline cg_tensor *cg_binary_forward(const cg_binary_op *op, cg_tensor *a, cg_tensor *b, const double *p, int np) {
    cg_tensor *in[2] = {a, b};
    return cg_elementwise_forward(op, 2, in, p, np);
}
cg_tensor *cg_nary_forward(const cg_nary_op *op, int n, cg_tensor *const *inputs, const double *p, int np);
/* In-place: inputs[0] is self (Note [In-place]). */
cg_status cg_elementwise_inplace(const cg_elementwise_op *op, int n, cg_tensor *const *inputs,
                                 const double *params, int np);

/* Registries of named elementwise ops (for cg_unary_ / cg_binary_ and the binding). */
const cg_elementwise_op *cg_find_unary_op(const char *name);
const cg_elementwise_op *cg_find_binary_op(const char *name);

/* ------------------------------------------------------------- reductions */

typedef struct cg_reduce_op {
    cg_op_schema schema;
    int out_dtype;          /* CG_SAME_DTYPE or fixed (bool for all/any, int64 for argmax) */
    bool has_indices;       /* second output: int64 indices */
    bool empty_error;       /* reducing over zero elements is an error (max, argmax) */
    bool chunked;           /* partial results combine with the op's own loop on the output
                             * dtype (sum, prod, amax, any, ...): a single large reduction is
                             * split into fixed chunks across threads (Note [Chunked reductions]) */
    cg_reduce_kind kind;    /* its loops, the backends' (the dtypes: cg_reduce_dtypes) */
    cg_backward_fn backward;
} cg_reduce_op;

/* mask: bit d set = reduce dim d (from cg_dims_mask). out_dtype < 0: the op's.
 * Node attrs: iattr[0] = mask, iattr[1] = keepdim. */
cg_status cg_reduce_forward(const cg_reduce_op *op, cg_tensor *x, uint32_t mask, bool keepdim,
                            const double *params, int np, int out_dtype,
                            cg_tensor **out, cg_tensor **indices);
/* Backward helper: bring g (the reduction's output gradient) back to the
 * input's rank (unsqueeze reduced dims when !keepdim) and expand to its shape. */
cg_tensor *cg_reduce_grad_expand(cg_node *node, cg_tensor *g);
/* The same unsqueeze on any tensor shaped like the output (e.g. the saved output). */
cg_tensor *cg_reduce_unsqueeze(cg_node *node, cg_tensor *t);

/* ------------------------------------------------------------- shared helpers */

/* Validate that all tensors are non-NULL, on one device and (for those not in
 * `skip_mask`) of one dtype. */
cg_status cg_check_same(const char *op, int n, cg_tensor *const *ts, unsigned skip_mask);
/* Note [Kernel entries] (src/backend/kernels.h): st <- the result of entry
 * `name` of dev's kernel table called with the remaining arguments; CG_OK
 * without a call on a device that stores no data (meta: nothing to compute);
 * CG_ERR_NOT_IMPLEMENTED naming op and device when the table lacks the entry.
 * Ops that call it allocate their outputs with cg_tensor_new (any device). */
#define CG_RUN_KERNEL(st, op, dev, name, ...)                                    \
    do {                                                                         \
        const cg_backend *cg_kb_ = cg_backend_of(dev);                           \
        if (!cg_kb_->has_data)                                                   \
            (st) = CG_OK;                                                        \
        else if (cg_kb_->kernels && cg_kb_->kernels->name)                       \
            (st) = cg_kb_->kernels->name(__VA_ARGS__);                           \
        else                                                                     \
            (st) = cg_kernel_missing(op, dev);                                   \
    } while (0)

/* For an op that must read t's values to go on (a result size that depends on
 * data, a mask it reads): CG_OK where t's device stores data; on one that
 * does not (meta) CG_ERR_NOT_IMPLEMENTED, "[op] not supported on the <device>
 * device (why)". */
static inline cg_status cg_need_values(const char *op, const cg_tensor *t, const char *why) {
    if (cg_device_has_data(t->device)) return CG_OK;
    return cg_set_error(CG_ERR_NOT_IMPLEMENTED, "[%s] not supported on the %s device (%s)", op,
                        cg_device_name(t->device), why);
}

/* ------------------------------------------------------------- variadic ops (cat, stack)
 * Note [Variadic driver]: cg_variadic_forward owns validation (all non-NULL,
 * one dtype, one device, shapes equal except along `dim`; zero tensors is an
 * error), the schema guard, output allocation, dispatch (each input is copied
 * into its narrow()-slice of the output through the backend) and graph wiring:
 * one node with one edge per input. Each input's size along dim is in the
 * node's input_meta; node->iattr[0] = the wrapped dim, iattr[1] = new_dim.
 * PyTorch's legacy rule: 1-D tensors of shape (0,) are skipped by cat. */

typedef struct cg_variadic_op {
    cg_op_schema schema;
    bool new_dim;            /* stack: every input gains a size-1 dim at `dim` */
    cg_backward_fn backward; /* NULL = not differentiable (no graph recorded) */
} cg_variadic_op;

cg_tensor *cg_variadic_forward(const cg_variadic_op *op, int n, cg_tensor *const *ts, int64_t dim);
/* dst <- src elementwise; same dtype, shape and device, any strides (negative
 * too), through the backend (nothing happens on meta); no autograd, no
 * version bump. */
void cg_copy_strided(cg_tensor *dst, const cg_tensor *src);

#endif
