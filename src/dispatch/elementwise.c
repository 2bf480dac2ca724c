/* elementwise.c — the elementwise driver behind unary, binary and n-ary ops
 * (Note [Drivers]), its in-place form (Note [In-place]) and the backward
 * trampoline that reduces each gradient to its input's shape. */
#include "dispatch_internal.h"

#include <string.h>

/* Node backward for every elementwise op: the op's formula, then
 * reduce_to_shape for inputs that were broadcast. */
static cg_status elementwise_apply(cg_node *node, cg_tensor *const *gout, cg_tensor **gin) {
    const cg_elementwise_op *op = node->op;
    cg_status st = op->backward(node, gout, gin);
    if (st) return st;
    for (int i = 0; i < node->num_inputs; i++) {
        const cg_tensor_meta *m = &node->input_meta[i];
        if (!gin[i] || cg_shape_eq(gin[i]->ndim, gin[i]->shape, m->ndim, m->shape)) continue;
        cg_tensor *r = cg_reduce_to_shape(gin[i], m->ndim, m->shape);
        cg_tensor_release(gin[i]);
        gin[i] = r;
        if (!r) return cg_last_error();
    }
    return CG_OK;
}

/* Note [Elementwise fast path]: the common call (every operand non-NULL, of
 * one dtype and device, contiguous, all of one shape, no bool mask operand)
 * passes validation with one scan; anything else takes the general checks,
 * which produce the errors. */
static bool same_flat(const cg_tensor *a, const cg_tensor *b) {
    if (!b || b->dtype != a->dtype || b->device.type != a->device.type || b->device.index != a->device.index ||
        b->ndim != a->ndim)
        return false;
    int64_t s = 1;
    for (int d = a->ndim - 1; d >= 0; d--) {
        if (b->shape[d] != a->shape[d] || (b->strides[d] != s && b->shape[d] != 1)) return false;
        s *= b->shape[d];
    }
    return true;
}

static bool flat_case(const cg_elementwise_op *op, int n, cg_tensor *const *in) {
    if (n != op->arity || op->bool_inputs || !in[0]) return false;
    for (int i = 0; i < n; i++)
        if (!same_flat(in[0], in[i])) return false;
    return true;
}

static cg_status validate(const cg_elementwise_op *op, int n, cg_tensor *const *in, int *ondim, int64_t *oshape,
                          cg_dtype *odt, bool *flat) {
    const char *name = op->schema.name;
    *flat = false;
    if (flat_case(op, n, in) && (op->dtypes & CG_DTYPE_BIT(in[0]->dtype))) {
        *flat = true;
        *odt = op->out_dtype == CG_SAME_DTYPE ? in[0]->dtype : (cg_dtype)op->out_dtype;
        *ondim = in[0]->ndim;
        memcpy(oshape, in[0]->shape, sizeof(int64_t) * (size_t)in[0]->ndim);
        return CG_OK;
    }
    if (n != op->arity) return cg_set_error(CG_ERR_VALUE, "[%s] expects %d inputs, got %d", name, op->arity, n);
    if (cg_check_same(name, n, in, op->bool_inputs)) return cg_last_error();
    int data = -1;
    for (int i = 0; i < n; i++) {
        if (op->bool_inputs & (1u << i)) {
            if (in[i]->dtype != CG_DTYPE_BOOL)
                return cg_set_error(CG_ERR_DTYPE, "[%s] expected a bool tensor for argument %d, got %s", name, i,
                                    cg_dtype_name(in[i]->dtype));
        } else if (data < 0) {
            data = i;
        }
    }
    cg_dtype dt = data >= 0 ? in[data]->dtype : CG_DTYPE_BOOL;
    if (!(op->dtypes & CG_DTYPE_BIT(dt))) return cg_dtype_unsupported(name, dt);
    *odt = op->out_dtype == CG_SAME_DTYPE ? dt : (cg_dtype)op->out_dtype;
    *ondim = in[0]->ndim;
    memcpy(oshape, in[0]->shape, sizeof(int64_t) * (size_t)in[0]->ndim);
    for (int i = 1; i < n; i++)
        if (cg_broadcast_shapes(name, *ondim, oshape, in[i]->ndim, in[i]->shape, ondim, oshape)) return cg_last_error();
    return CG_OK;
}

/* Run the loop through out's backend (Note [Backends]); a loop-flagged
 * error (Note [Loop errors]) fails the call. flat: every operand is
 * contiguous with out's shape (Note [Elementwise fast path]), so the plan is
 * one flat dim, built without the general iterator. */
static cg_status run_loop(const cg_elementwise_op *op, cg_tensor *out, int n, cg_tensor *const *in,
                          const double *params, int np, bool flat) {
    cg_dtype dt = CG_DTYPE_BOOL; /* the loop's: its data inputs' dtype */
    for (int i = 0; i < n; i++)
        if (!(op->bool_inputs & (1u << i))) {
            dt = in[i]->dtype;
            break;
        }
    cg_tensor *args[CG_ITER_MAX_ARGS];
    args[0] = out;
    for (int i = 0; i < n; i++) args[i + 1] = in[i];
    cg_loop_params lp = {{0}, 0};
    for (int i = 0; i < np; i++) lp.p[i] = params[i];
    cg_iter it;
    if (flat) {
        it.ndim = 1;
        it.nargs = n + 1;
        it.numel = it.shape[0] = cg_shape_numel(out->ndim, out->shape);
        for (int k = 0; k <= n; k++) {
            it.ptr[k] = cg_tensor_ptr(args[k]);
            it.strides[k][0] = (int64_t)cg_itemsize(args[k]->dtype);
        }
    } else {
        cg_iter_init(&it, n + 1, args, out->ndim, out->shape);
    }
    cg_status st = cg_backend_of(out->device)->run_elementwise(out->device, &it, (int)op->id, dt, &lp, CG_GRAIN);
    if (st) return cg_backend_failed(op->schema.name, out->device, dt, st);
    if (atomic_load_explicit(&lp.error, memory_order_relaxed))
        return cg_set_error(CG_ERR_VALUE, "[%s] %s", op->schema.name, op->loop_error ? op->loop_error : "invalid input");
    return CG_OK;
}

static cg_status wire(const cg_elementwise_op *op, int n, cg_tensor *const *in, cg_tensor *out,
                      const double *params, int np) {
    if (!op->backward || !cg_dtype_is_floating(out->dtype) || !cg_any_requires_grad(n, in)) return CG_OK;
    int nsaved = (op->schema.saves_inputs ? n : 0) + (op->schema.saves_output ? 1 : 0);
    cg_node *node = cg_node_new(op->schema.node_name, elementwise_apply, op, n, in, 1, nsaved);
    if (!node) return cg_last_error();
    cg_node_set_output(node, 0, out);
    cg_node_release(node); /* owned by out now */
    for (int i = 0; i < np; i++) node->dattr[i] = params[i];
    if (op->schema.saves_inputs)
        for (int i = 0; i < n; i++)
            if (cg_node_save(node, i, in[i], false, 0)) return cg_last_error();
    if (op->schema.saves_output && cg_node_save(node, nsaved - 1, out, true, 0)) return cg_last_error();
    return CG_OK;
}

/* Note [Output layout]: an out-of-place result is laid out like its inputs, as PyTorch's
 * TensorIterator lays it out: the output's dims are sorted by the operands' strides (the first operand
 * whose strides differ decides; broadcast dims, stride 0, are skipped; for equal strides the smaller
 * dim goes inside), so a channels_last or transposed input gives a channels_last or transposed result.
 * Only the general path comes here: contiguous operands of one shape take the flat path, contiguous. */
static int should_swap(int n, cg_tensor *const *in, int ondim, const int64_t *oshape, int d0, int d1) {
    for (int k = 0; k < n; k++) {
        const cg_tensor *t = in[k];
        if (!t) continue;
        int lead = ondim - t->ndim, a = d0 - lead, b = d1 - lead;
        int64_t s0 = a >= 0 && t->shape[a] == oshape[d0] ? t->strides[a] : 0; /* 0: broadcast */
        int64_t s1 = b >= 0 && t->shape[b] == oshape[d1] ? t->strides[b] : 0;
        if (s0 == 0 || s1 == 0) continue;
        if (s0 < s1) return -1;
        if (s0 > s1) return 1;
        if (oshape[d0] > oshape[d1]) return 1;
    }
    return 0;
}

static void output_strides(int n, cg_tensor *const *in, int ondim, const int64_t *oshape, int64_t *strides) {
    int perm[CG_MAX_DIMS]; /* perm[0]: the innermost dim */
    for (int i = 0; i < ondim; i++) perm[i] = ondim - 1 - i;
    for (int i = 1; i < ondim; i++) {
        int d1 = i;
        for (int d0 = i - 1; d0 >= 0; d0--) {
            int c = should_swap(n, in, ondim, oshape, perm[d0], perm[d1]);
            if (c > 0) {
                int x = perm[d0];
                perm[d0] = perm[d1];
                perm[d1] = x;
                d1 = d0;
            } else if (c < 0) {
                break;
            }
        }
    }
    int outer_first[CG_MAX_DIMS];
    for (int i = 0; i < ondim; i++) outer_first[i] = perm[ondim - 1 - i];
    cg_permuted_strides(ondim, oshape, outer_first, strides); /* raw sizes, as TensorIterator's */
}

static cg_tensor *elementwise_forward(const cg_elementwise_op *op, int n, cg_tensor *const *inputs,
                                      const double *params, int np) {
    CG_ASSERT(np <= CG_EW_MAX_PARAMS && n < CG_ITER_MAX_ARGS);
    int ondim;
    int64_t oshape[CG_MAX_DIMS];
    cg_dtype odt;
    bool flat;
    if (validate(op, n, inputs, &ondim, oshape, &odt, &flat)) return NULL;
    cg_tensor *in[CG_ITER_MAX_ARGS];
    bool owned;
    if (cg_schema_guard(&op->schema, n, inputs, in, &owned)) return NULL;
    if (owned && validate(op, n, in, &ondim, oshape, &odt, &flat)) { /* dtype changed by AMP */
        cg_release_all(n, in);
        return NULL;
    }
    int64_t ostrides[CG_MAX_DIMS];
    if (!flat) output_strides(n, in, ondim, oshape, ostrides);
    cg_tensor *out = cg_tensor_new_strided(op->schema.name, ondim, oshape, flat ? NULL : ostrides, odt, in[0]->device);
    if (out) {
        if (run_loop(op, out, n, in, params, np, flat) || wire(op, n, in, out, params, np)) {
            cg_tensor_release(out);
            out = NULL;
        }
    }
    if (owned) cg_release_all(n, in);
    return out;
}

/* the call recorded as a profiler event (off the hot path) */
static CG_PROF_COLD cg_tensor *elementwise_forward_profiled(const cg_elementwise_op *op, int n,
                                                            cg_tensor *const *inputs, const double *params, int np) {
    int64_t ev = cg_prof_begin(op->schema.name, CG_PROF_OP, n, inputs);
    cg_tensor *r = elementwise_forward(op, n, inputs, params, np);
    cg_prof_end(ev, r);
    return r;
}
cg_tensor *cg_elementwise_forward(const cg_elementwise_op *op, int n, cg_tensor *const *inputs, const double *params,
                                  int np) {
    if (cg_prof_active()) return elementwise_forward_profiled(op, n, inputs, params, np);
    return elementwise_forward(op, n, inputs, params, np);
}

cg_tensor *cg_nary_forward(const cg_nary_op *op, int n, cg_tensor *const *inputs, const double *p, int np) {
    return cg_elementwise_forward(op, n, inputs, p, np);
}

/* Note [In-place]: an in-place op writes into self's existing storage and
 * bumps its version. When a graph must be recorded, the op runs out of place
 * (on a clone of self if the formula needs self's old value) and
 * cg_inplace_commit writes the result into self's storage and moves history
 * (CopySlices on the base when self is a view). */
static cg_status elementwise_inplace(const cg_elementwise_op *op, int n, cg_tensor *const *inputs, const double *params,
                                     int np) {
    const char *name = op->schema.name;
    int ondim;
    int64_t oshape[CG_MAX_DIMS];
    cg_dtype odt;
    bool flat;
    cg_tensor *self = inputs[0];
    if (validate(op, n, inputs, &ondim, oshape, &odt, &flat)) return cg_last_error();
    if (!cg_shape_eq(ondim, oshape, self->ndim, self->shape)) {
        char a[CG_SHAPE_STR], b[CG_SHAPE_STR];
        return cg_set_error(CG_ERR_SHAPE, "[%s_] output with shape %s doesn't match the broadcast shape %s", name,
                            cg_shape_str(a, self->ndim, self->shape), cg_shape_str(b, ondim, oshape));
    }
    if (odt != self->dtype)
        return cg_set_error(CG_ERR_DTYPE, "[%s_] result dtype %s can't be written into a %s tensor in place", name,
                            cg_dtype_name(odt), cg_dtype_name(self->dtype));
    if (cg_check_inplace(name, self)) return cg_last_error();
    for (int i = 1; i < n; i++) /* Note [Memory overlap]: O(ndim); other memory is one inline test */
        if (cg_storages_alias(self->storage, inputs[i]->storage) && cg_check_no_partial_overlap(name, self, inputs[i]))
            return cg_last_error();
    if (op->backward && cg_dtype_is_floating(odt) && cg_any_requires_grad(n, inputs)) {
        cg_tensor *in[CG_ITER_MAX_ARGS];
        memcpy(in, inputs, sizeof(cg_tensor *) * (size_t)n);
        cg_tensor *orig = NULL;
        if (op->schema.saves_inputs) {
            orig = cg_clone(self);
            if (!orig) return cg_last_error();
            in[0] = orig;
        }
        cg_tensor *r = cg_elementwise_forward(op, n, in, params, np);
        cg_tensor_release(orig);
        if (!r) return cg_last_error();
        cg_status st = cg_inplace_commit(name, self, r);
        cg_tensor_release(r);
        return st;
    }
    cg_status st = run_loop(op, self, n, inputs, params, np, flat);
    cg_storage_bump_version(self->storage);
    return st;
}

/* the call recorded as a profiler event (off the hot path) */
static CG_PROF_COLD cg_status elementwise_inplace_profiled(const cg_elementwise_op *op, int n, cg_tensor *const *inputs,
                                                           const double *params, int np) {
    char name[64];
    snprintf(name, sizeof name, "%s_", op->schema.name);
    int64_t ev = cg_prof_begin(name, CG_PROF_OP, n, inputs);
    cg_status st = elementwise_inplace(op, n, inputs, params, np);
    cg_prof_end(ev, inputs[0]);
    return st;
}
cg_status cg_elementwise_inplace(const cg_elementwise_op *op, int n, cg_tensor *const *inputs, const double *params,
                                 int np) {
    if (cg_prof_active()) return elementwise_inplace_profiled(op, n, inputs, params, np);
    return elementwise_inplace(op, n, inputs, params, np);
}
