/* nn_loss.c — loss functions (cross_entropy, nll_loss, mse / l1 / smooth_l1 /
 * huber, binary cross-entropy with and without logits, kl_div) and the
 * similarity measures cosine_similarity and pairwise_distance.
 *
 * Every loss is composed from cg ops (log_softmax, gather, index_select,
 * where, the reductions, ...), so its gradient is built by those ops' own
 * backward formulas and is differentiable again. The log-softmax of
 * cross_entropy is the fused, numerically stable kernel of softmax.c; the only
 * loops here validate user data (class targets, probabilities). */
#include "nn_internal.h"

#include <string.h>

/* Note [Loss autocast]: PyTorch's CPU autocast runs the losses in float32.
 * A loss is a composition, so its schema exists for the policy alone: when
 * autocast would cast an argument, the entry point casts them through the
 * schema guard and calls itself again with float32 operands (NN_AMP_CALL). */
#define LOSS_SCHEMA(var, name) static const cg_op_schema var = {name, NULL, 1, CG_AMP_FP32, false, false, false}
LOSS_SCHEMA(k_amp_nll, "nll_loss");
LOSS_SCHEMA(k_amp_ce, "cross_entropy");
LOSS_SCHEMA(k_amp_mse, "mse_loss");
LOSS_SCHEMA(k_amp_l1, "l1_loss");
LOSS_SCHEMA(k_amp_smooth_l1, "smooth_l1_loss");
LOSS_SCHEMA(k_amp_huber, "huber_loss");
LOSS_SCHEMA(k_amp_bce, "binary_cross_entropy");
LOSS_SCHEMA(k_amp_bce_logits, "binary_cross_entropy_with_logits");
LOSS_SCHEMA(k_amp_kl_div, "kl_div");


/* ------------------------------------------------------------- shared helpers */

cg_status nn_check_opt(const char *op, const char *what, const cg_tensor *t, const cg_tensor *ref) {
    if (!t) return CG_OK;
    CG_CHECK_S(cg_device_eq(t->device, ref->device), CG_ERR_DEVICE, "[%s] %s is on %s but input is on %s", op, what,
               cg_device_name(t->device), cg_device_name(ref->device));
    CG_CHECK_S(t->dtype == ref->dtype, CG_ERR_DTYPE,
               "[%s] %s has dtype %s but input has dtype %s (the engine never promotes; cast first)", op, what,
               cg_dtype_name(t->dtype), cg_dtype_name(ref->dtype));
    return CG_OK;
}

cg_tensor *nn_reduce_loss(const char *op, cg_tensor *l, cg_reduction reduction) {
    switch (reduction) {
    case CG_REDUCTION_NONE: cg_tensor_retain(l); return l;
    case CG_REDUCTION_MEAN: return cg_mean(l, 0, NULL, false);
    case CG_REDUCTION_SUM: return cg_sum(l, 0, NULL, false);
    }
    cg_set_error(CG_ERR_VALUE, "[%s] invalid reduction %d (expected NONE, MEAN or SUM)", op, (int)reduction);
    return NULL;
}

static cg_status check_reduction(const char *op, cg_reduction r) {
    CG_CHECK_S(r == CG_REDUCTION_NONE || r == CG_REDUCTION_MEAN || r == CG_REDUCTION_SUM, CG_ERR_VALUE,
               "[%s] invalid reduction %d (expected NONE, MEAN or SUM)", op, (int)r);
    return CG_OK;
}

/* A contiguous copy without autograd history (new reference). */
static cg_tensor *contig_nograd(cg_tensor *t) {
    bool prev = cg_set_grad_enabled(false);
    cg_tensor *c = cg_contiguous(t);
    cg_set_grad_enabled(prev);
    return c;
}

/* Every class target must be ignore_index or in [0, C). */
static cg_status check_class_targets(const char *op, cg_tensor *target, int64_t C, int64_t ignore_index) {
    cg_tensor *c = contig_nograd(target);
    if (!c) return cg_last_error();
    bool found = false;
    int64_t bad = 0;
    cg_status st;
    CG_RUN_KERNEL(st, op, c->device, class_target_check, c, C, ignore_index, &found, &bad);
    cg_tensor_release(c);
    if (!st && found)
        st = cg_set_error(CG_ERR_INDEX, "[%s] target %lld is out of bounds for %lld classes", op, (long long)bad,
                          (long long)C);
    return st;
}

/* Shapes of a class loss: input (N, C, *) with target (N, *), or input (C)
 * with a 0-d target. */
static cg_status check_class_shapes(const char *op, const cg_tensor *input, const cg_tensor *target) {
    char a[CG_SHAPE_STR], b[CG_SHAPE_STR];
    CG_CHECK_S(input->ndim >= 1, CG_ERR_SHAPE, "[%s] input must have at least 1 dim (C), got a 0-d tensor", op);
    bool ok = target->ndim == input->ndim - 1;
    if (ok && input->ndim >= 2) {
        ok = target->shape[0] == input->shape[0];
        for (int k = 2; ok && k < input->ndim; k++) ok = target->shape[k - 1] == input->shape[k];
    }
    CG_CHECK_S(ok, CG_ERR_SHAPE, "[%s] input %s and target %s: expected target of shape (N, *) for input (N, C, *)",
               op, cg_shape_str(a, input->ndim, input->shape), cg_shape_str(b, target->ndim, target->shape));
    return CG_OK;
}

static cg_status check_class_weight(const char *op, const cg_tensor *weight, const cg_tensor *input, int64_t C) {
    if (!weight) return CG_OK;
    if (nn_check_opt(op, "weight", weight, input)) return cg_last_error();
    CG_CHECK_S(weight->ndim == 1 && weight->shape[0] == C, CG_ERR_SHAPE,
               "[%s] weight must be a 1-D tensor of %lld elements (one per class), got %d dims with %lld elements",
               op, (long long)C, weight->ndim, (long long)cg_tensor_numel(weight));
    return CG_OK;
}

/* Weight reshaped to broadcast along dim 1 of an nd-dim tensor (new ref). */
static cg_tensor *class_weight_view(cg_tensor *weight, int nd) {
    int64_t sh[CG_MAX_DIMS];
    for (int k = 0; k < nd; k++) sh[k] = 1;
    sh[nd >= 2 ? 1 : 0] = weight->shape[0];
    return cg_reshape(weight, nd, sh);
}

/* ------------------------------------------------------------- class-index losses */

/* The class-target loss on log-probabilities logp (N, C, *) and int64
 * target (N, *): nll (weighted, 0 at ignored targets) plus, when
 * label_smoothing > 0, PyTorch's smoothing term
 *   (1 - ls) * nll + ls / C * (-sum_c w_c logp_c, 0 at ignored targets),
 * reduced; MEAN divides both terms by the sum of the weights of the
 * non-ignored targets. A 1-D logp (C) with a 0-d target is treated as a batch
 * of one (the NONE result is 0-d). */
static cg_tensor *class_loss(cg_tensor *logp, cg_tensor *target, cg_tensor *weight,
                             int64_t ignore_index, double ls, cg_reduction reduction) {
    NN_ARENA;
    bool unbatched = logp->ndim == 1;
    if (unbatched) {
        logp = TK(cg_unsqueeze(logp, 0));
        target = TK(cg_unsqueeze(target, 0));
        if (A_->failed) return nn_finish(A_, NULL);
    }
    int64_t C = logp->shape[1];
    cg_tensor *keep = TK(cg_cmp_scalar(cg_ne, target, (double)ignore_index)); /* bool (N, *) */
    cg_tensor *zi = TK(nn_scalar(0, target));
    cg_tensor *safe = WHERE(keep, target, zi);
    cg_tensor *idx = TK(safe ? cg_unsqueeze(safe, 1) : NULL);
    cg_tensor *picked = TK(idx ? cg_gather(logp, 1, idx) : NULL);
    picked = TK(picked ? cg_squeeze_dim(picked, 1) : NULL);
    cg_tensor *wt = TK(keep ? cg_to_dtype(keep, logp->dtype) : NULL); /* weight of each target, 0 if ignored */
    if (weight && !A_->failed) {
        int64_t n = cg_tensor_numel(safe);
        cg_tensor *flat = TK(cg_reshape(safe, 1, &n));
        cg_tensor *ws = TK(flat ? cg_index_select(weight, 0, flat) : NULL);
        ws = TK(ws ? cg_reshape(ws, target->ndim, target->shape) : NULL);
        wt = MUL(ws, wt);
    }
    cg_tensor *zf = TK(nn_scalar(0, logp));
    cg_tensor *loss = WHERE(keep, NEG(MUL(picked, wt)), zf);
    cg_tensor *smooth = NULL;
    if (ls > 0 && !A_->failed) {
        int64_t one = 1;
        cg_tensor *lw = logp;
        if (weight) lw = MUL(logp, TK(class_weight_view(weight, logp->ndim)));
        smooth = TK(lw ? cg_sum(lw, 1, &one, false) : NULL);
        smooth = WHERE(keep, NEG(smooth), zf);
    }
    cg_tensor *r = NULL;
    if (!A_->failed) {
        if (reduction == CG_REDUCTION_NONE) {
            r = loss;
            if (smooth) r = ADD(SCALE(loss, 1 - ls), SCALE(smooth, ls / (double)C));
            if (unbatched) r = TK(r ? cg_reshape(r, 0, NULL) : NULL);
        } else {
            r = TK(cg_sum(loss, 0, NULL, false));
            if (smooth) r = ADD(SCALE(r, 1 - ls), SCALE(TK(cg_sum(smooth, 0, NULL, false)), ls / (double)C));
            if (reduction == CG_REDUCTION_MEAN) r = DIV(r, TK(cg_sum(wt, 0, NULL, false)));
        }
    }
    return nn_finish(A_, r);
}

static cg_status check_class_args(const char *op, cg_tensor *input, cg_tensor *target, cg_tensor *weight,
                                  int64_t ignore_index, cg_reduction reduction) {
    CG_CHECK_S(input && target, CG_ERR_VALUE, "[%s] input and target must not be NULL", op);
    if (nn_check_float(op, "input", input)) return cg_last_error();
    CG_CHECK_S(target->dtype == CG_DTYPE_I64, CG_ERR_DTYPE,
               "[%s] class targets must be int64, got %s", op, cg_dtype_name(target->dtype));
    CG_CHECK_S(cg_device_eq(target->device, input->device), CG_ERR_DEVICE, "[%s] target is on %s but input is on %s",
               op, cg_device_name(target->device), cg_device_name(input->device));
    if (check_reduction(op, reduction) || check_class_shapes(op, input, target)) return cg_last_error();
    int64_t C = input->shape[input->ndim >= 2 ? 1 : 0];
    if (check_class_weight(op, weight, input, C)) return cg_last_error();
    return check_class_targets(op, target, C, ignore_index);
}

CG_PROF_FN(cg_tensor *, cg_nll_loss, "nll_loss", (cg_tensor *log_probs, cg_tensor *target, cg_tensor *weight,
           int64_t ignore_index, cg_reduction reduction), (log_probs, target, weight, ignore_index, reduction),
           log_probs, target) {
    cg_tensor *amp_[2] = {log_probs, weight};
    NN_AMP_CALL(k_amp_nll, 2, amp_, cg_nll_loss(amp_[0], target, amp_[1], ignore_index, reduction));
    if (check_class_args("nll_loss", log_probs, target, weight, ignore_index, reduction)) return NULL;
    return class_loss(log_probs, target, weight, ignore_index, 0.0, reduction);
}

/* Probability targets: loss_i = -sum_c w_c t_ic logp_ic with t smoothed to
 * t (1 - ls) + ls / C; MEAN divides by the number of samples (numel / C). */
static cg_tensor *prob_loss(cg_tensor *logp, cg_tensor *target, cg_tensor *weight, double ls,
                            cg_reduction reduction) {
    NN_ARENA;
    int cdim = logp->ndim >= 2 ? 1 : 0;
    int64_t C = logp->shape[cdim], cd = cdim;
    cg_tensor *t = target;
    if (ls > 0) t = SHIFT(SCALE(target, 1 - ls), ls / (double)C);
    cg_tensor *prod = MUL(logp, t);
    if (weight) prod = MUL(prod, TK(class_weight_view(weight, logp->ndim)));
    cg_tensor *r = NULL;
    if (!A_->failed) {
        if (reduction == CG_REDUCTION_NONE) r = NEG(TK(cg_sum(prod, 1, &cd, false)));
        else {
            r = NEG(TK(cg_sum(prod, 0, NULL, false)));
            if (reduction == CG_REDUCTION_MEAN) {
                double ns = C ? (double)(cg_tensor_numel(logp) / C) : 0.0;
                r = DIV(r, TK(nn_scalar(ns, r)));
            }
        }
    }
    return nn_finish(A_, r);
}

CG_PROF_FN(cg_tensor *, cg_cross_entropy, "cross_entropy_loss", (cg_tensor *input, cg_tensor *target, cg_tensor *weight,
           int64_t ignore_index, double label_smoothing, cg_reduction reduction), (input, target, weight, ignore_index,
           label_smoothing, reduction), input, target) {
    cg_tensor *amp_[3] = {input, target, weight};
    NN_AMP_CALL(k_amp_ce, 3, amp_, cg_cross_entropy(amp_[0], amp_[1], amp_[2], ignore_index, label_smoothing, reduction));
    const char *op = "cross_entropy";
    CG_CHECK(input && target, CG_ERR_VALUE, "[%s] input and target must not be NULL", op);
    CG_CHECK(label_smoothing >= 0.0 && label_smoothing <= 1.0, CG_ERR_VALUE,
             "[%s] label_smoothing must be between 0.0 and 1.0, got %g", op, label_smoothing);
    int cdim = input->ndim >= 2 ? 1 : 0;
    if (cg_dtype_is_floating(target->dtype)) { /* class probabilities */
        if (nn_check_float(op, "input", input) || check_reduction(op, reduction)) return NULL;
        if (nn_check_opt(op, "target", target, input)) return NULL;
        char a[CG_SHAPE_STR], b[CG_SHAPE_STR];
        CG_CHECK(input->ndim >= 1, CG_ERR_SHAPE, "[%s] input must have at least 1 dim (C), got a 0-d tensor", op);
        CG_CHECK(cg_shape_eq(input->ndim, input->shape, target->ndim, target->shape), CG_ERR_SHAPE,
                 "[%s] probability target %s must have the input's shape %s", op,
                 cg_shape_str(b, target->ndim, target->shape), cg_shape_str(a, input->ndim, input->shape));
        if (check_class_weight(op, weight, input, input->shape[cdim])) return NULL;
        cg_tensor *logp = cg_log_softmax(input, cdim);
        if (!logp) return NULL;
        cg_tensor *r = prob_loss(logp, target, weight, label_smoothing, reduction);
        cg_tensor_release(logp);
        return r;
    }
    if (check_class_args(op, input, target, weight, ignore_index, reduction)) return NULL;
    cg_tensor *logp = cg_log_softmax(input, cdim);
    if (!logp) return NULL;
    cg_tensor *r = class_loss(logp, target, weight, ignore_index, label_smoothing, reduction);
    cg_tensor_release(logp);
    return r;
}

/* ------------------------------------------------------------- regression losses */

static cg_status check_pair(const char *op, cg_tensor *input, cg_tensor *target, cg_reduction reduction) {
    cg_tensor *it[2] = {input, target};
    if (cg_check_same(op, 2, it, 0)) return cg_last_error();
    if (nn_check_float(op, "input", input) || check_reduction(op, reduction)) return cg_last_error();
    return CG_OK;
}

typedef enum { PW_MSE, PW_L1, PW_SMOOTH_L1, PW_HUBER } pw_kind;

static cg_tensor *pointwise_loss(const char *op, pw_kind kind, cg_tensor *input, cg_tensor *target,
                                 cg_reduction reduction, double c) {
    if (check_pair(op, input, target, reduction)) return NULL;
    NN_ARENA;
    cg_tensor *d = SUB(input, target), *l = NULL;
    switch (kind) {
    case PW_MSE: l = SQ(d); break;
    case PW_L1: l = TK(d ? cg_abs(d) : NULL); break;
    case PW_SMOOTH_L1: { /* |d| < beta ? 0.5 d^2 / beta : |d| - 0.5 beta */
        cg_tensor *ad = TK(d ? cg_abs(d) : NULL);
        if (c == 0) l = ad;
        else l = WHERE(LT(ad, c), SCALE(SQ(d), 0.5 / c), SHIFT(ad, -0.5 * c));
        break;
    }
    case PW_HUBER: { /* |d| < delta ? 0.5 d^2 : delta (|d| - 0.5 delta) */
        cg_tensor *ad = TK(d ? cg_abs(d) : NULL);
        l = WHERE(LT(ad, c), SCALE(SQ(d), 0.5), SCALE(SHIFT(ad, -0.5 * c), c));
        break;
    }
    }
    cg_tensor *r = l ? TK(nn_reduce_loss(op, l, reduction)) : NULL;
    return nn_finish(A_, r);
}

CG_PROF_FN(cg_tensor *, cg_mse_loss, "mse_loss", (cg_tensor *input, cg_tensor *target, cg_reduction reduction), (input,
           target, reduction), input, target) {
    cg_tensor *amp_[2] = {input, target};
    NN_AMP_CALL(k_amp_mse, 2, amp_, cg_mse_loss(amp_[0], amp_[1], reduction));
    return pointwise_loss("mse_loss", PW_MSE, input, target, reduction, 0);
}
CG_PROF_FN(cg_tensor *, cg_l1_loss, "l1_loss", (cg_tensor *input, cg_tensor *target, cg_reduction reduction), (input,
           target, reduction), input, target) {
    cg_tensor *amp_[2] = {input, target};
    NN_AMP_CALL(k_amp_l1, 2, amp_, cg_l1_loss(amp_[0], amp_[1], reduction));
    return pointwise_loss("l1_loss", PW_L1, input, target, reduction, 0);
}
CG_PROF_FN(cg_tensor *, cg_smooth_l1_loss, "smooth_l1_loss", (cg_tensor *input, cg_tensor *target,
           cg_reduction reduction, double beta), (input, target, reduction, beta), input, target) {
    cg_tensor *amp_[2] = {input, target};
    NN_AMP_CALL(k_amp_smooth_l1, 2, amp_, cg_smooth_l1_loss(amp_[0], amp_[1], reduction, beta));
    CG_CHECK(beta >= 0, CG_ERR_VALUE, "[smooth_l1_loss] beta must be non-negative, got %g", beta);
    return pointwise_loss("smooth_l1_loss", PW_SMOOTH_L1, input, target, reduction, beta);
}
CG_PROF_FN(cg_tensor *, cg_huber_loss, "huber_loss", (cg_tensor *input, cg_tensor *target, cg_reduction reduction,
           double delta), (input, target, reduction, delta), input, target) {
    cg_tensor *amp_[2] = {input, target};
    NN_AMP_CALL(k_amp_huber, 2, amp_, cg_huber_loss(amp_[0], amp_[1], reduction, delta));
    CG_CHECK(delta > 0, CG_ERR_VALUE, "[huber_loss] delta must be positive, got %g", delta);
    return pointwise_loss("huber_loss", PW_HUBER, input, target, reduction, delta);
}

/* ------------------------------------------------------------- binary cross-entropy */

static cg_status check_same_shape(const char *op, const cg_tensor *input, const cg_tensor *target) {
    char a[CG_SHAPE_STR], b[CG_SHAPE_STR];
    CG_CHECK_S(cg_shape_eq(input->ndim, input->shape, target->ndim, target->shape), CG_ERR_SHAPE,
               "[%s] target size %s must be the same as input size %s", op,
               cg_shape_str(b, target->ndim, target->shape), cg_shape_str(a, input->ndim, input->shape));
    return CG_OK;
}

/* log(x) clamped at -100 as PyTorch does; x is clamped first so that a zero
 * probability gives a zero (not NaN) gradient. */
static cg_tensor *clamped_log(nn_tmp *A_, cg_tensor *x) {
    double tiny = exp(-100.0), lo = -100.0;
    cg_tensor *xc = TK(cg_clamp_scalar(x, &tiny, NULL));
    cg_tensor *l = TK(xc ? cg_log(xc) : NULL);
    return TK(l ? cg_clamp_scalar(l, &lo, NULL) : NULL);
}

CG_PROF_FN(cg_tensor *, cg_binary_cross_entropy, "binary_cross_entropy", (cg_tensor *input, cg_tensor *target,
           cg_tensor *weight, cg_reduction reduction), (input, target, weight, reduction), input, target) {
    cg_tensor *amp_[3] = {input, target, weight};
    NN_AMP_CALL(k_amp_bce, 3, amp_, cg_binary_cross_entropy(amp_[0], amp_[1], amp_[2], reduction));
    const char *op = "binary_cross_entropy";
    if (check_pair(op, input, target, reduction) || check_same_shape(op, input, target)) return NULL;
    if (nn_check_opt(op, "weight", weight, input)) return NULL;
    {
        cg_tensor *c = contig_nograd(input);
        if (!c) return NULL;
        bool found = false;
        double bad = 0;
        cg_status st;
        CG_RUN_KERNEL(st, op, c->device, find_outside, c, 0.0, 1.0, &found, &bad);
        cg_tensor_release(c);
        if (st) return NULL;
        CG_CHECK(!found, CG_ERR_VALUE, "[%s] all elements of input should be between 0 and 1, found %g", op, bad);
    }
    NN_ARENA;
    /* -(t log x + (1 - t) log(1 - x)) */
    cg_tensor *l = NEG(ADD(MUL(target, clamped_log(A_, input)),
                           MUL(RSUB(1.0, target), clamped_log(A_, RSUB(1.0, input)))));
    if (weight) l = MUL(l, weight);
    cg_tensor *r = l ? TK(nn_reduce_loss(op, l, reduction)) : NULL;
    return nn_finish(A_, r);
}

CG_PROF_FN(cg_tensor *, cg_binary_cross_entropy_with_logits, "binary_cross_entropy_with_logits", (cg_tensor *input,
           cg_tensor *target, cg_tensor *weight, cg_tensor *pos_weight, cg_reduction reduction), (input, target, weight,
           pos_weight, reduction), input, target) {
    cg_tensor *amp_[4] = {input, target, weight, pos_weight};
    NN_AMP_CALL(k_amp_bce_logits, 4, amp_, cg_binary_cross_entropy_with_logits(amp_[0], amp_[1], amp_[2], amp_[3], reduction));
    const char *op = "binary_cross_entropy_with_logits";
    if (check_pair(op, input, target, reduction) || check_same_shape(op, input, target)) return NULL;
    if (nn_check_opt(op, "weight", weight, input) || nn_check_opt(op, "pos_weight", pos_weight, input)) return NULL;
    NN_ARENA;
    /* (1 - t) x - lw logsigmoid(x), lw = 1 + (pos_weight - 1) t; -logsigmoid
     * is log(1 + exp(-|x|)) + max(-x, 0), stable for any x */
    cg_tensor *ls = TK(cg_logsigmoid(input));
    cg_tensor *lw = pos_weight ? SHIFT(MUL(SHIFT(pos_weight, -1.0), target), 1.0) : NULL;
    cg_tensor *l = SUB(MUL(RSUB(1.0, target), input), lw ? MUL(lw, ls) : ls);
    if (weight) l = MUL(l, weight);
    cg_tensor *r = l ? TK(nn_reduce_loss(op, l, reduction)) : NULL;
    return nn_finish(A_, r);
}

/* ------------------------------------------------------------- kl_div */

CG_PROF_FN(cg_tensor *, cg_kl_div, "kl_div", (cg_tensor *input, cg_tensor *target, cg_reduction reduction,
           bool log_target), (input, target, reduction, log_target), input, target) {
    cg_tensor *amp_[2] = {input, target};
    NN_AMP_CALL(k_amp_kl_div, 2, amp_, cg_kl_div(amp_[0], amp_[1], reduction, log_target));
    const char *op = "kl_div";
    if (check_pair(op, input, target, reduction)) return NULL;
    int bnd;
    int64_t bsh[CG_MAX_DIMS];
    if (cg_broadcast_shapes(op, input->ndim, input->shape, target->ndim, target->shape, &bnd, bsh)) return NULL;
    NN_ARENA;
    cg_tensor *l;
    if (log_target) { /* exp(t) (t - x) */
        l = MUL(TK(cg_exp(target)), SUB(target, input));
    } else { /* xlogy(t, t) - t x (PyTorch's form: +0 where t == 0, nan where t < 0) */
        cg_tensor *zero = TK(cg_cmp_scalar(cg_eq, target, 0.0));
        cg_tensor *safe = WHERE(zero, TK(nn_scalar(1.0, target)), target);
        cg_tensor *logt = TK(safe ? cg_log(safe) : NULL);
        cg_tensor *xlogy = WHERE(zero, TK(nn_scalar(0.0, target)), MUL(target, logt));
        l = SUB(xlogy, MUL(target, input));
    }
    cg_tensor *r = l ? TK(nn_reduce_loss(op, l, reduction)) : NULL;
    return nn_finish(A_, r);
}

/* ------------------------------------------------------------- similarity */

CG_PROF_FN(cg_tensor *, cg_cosine_similarity, "cosine_similarity", (cg_tensor *x1, cg_tensor *x2, int64_t dim,
           double eps), (x1, x2, dim, eps), x1, x2) {
    const char *op = "cosine_similarity";
    cg_tensor *xs[2] = {x1, x2};
    if (cg_check_same(op, 2, xs, 0) || nn_check_float(op, "input", x1)) return NULL;
    int nd;
    int64_t sh[CG_MAX_DIMS], d;
    if (cg_broadcast_shapes(op, x1->ndim, x1->shape, x2->ndim, x2->shape, &nd, sh)) return NULL;
    if (cg_wrap_dim(op, dim, nd, &d)) return NULL;
    NN_ARENA;
    cg_tensor *a = TK(cg_expand(x1, nd, sh)), *b = TK(cg_expand(x2, nd, sh));
    double lo = eps;
    cg_tensor *na = TK(a ? cg_norm(a, 2.0, 1, &d, true) : NULL);
    cg_tensor *nb = TK(b ? cg_norm(b, 2.0, 1, &d, true) : NULL);
    na = TK(na ? cg_clamp_scalar(na, &lo, NULL) : NULL);
    nb = TK(nb ? cg_clamp_scalar(nb, &lo, NULL) : NULL);
    cg_tensor *p = MUL(DIV(a, na), DIV(b, nb));
    cg_tensor *r = TK(p ? cg_sum(p, 1, &d, false) : NULL);
    return nn_finish(A_, r);
}

CG_PROF_FN(cg_tensor *, cg_pairwise_distance, "pairwise_distance", (cg_tensor *x1, cg_tensor *x2, double p, double eps,
           bool keepdim), (x1, x2, p, eps, keepdim), x1, x2) {
    const char *op = "pairwise_distance";
    cg_tensor *xs[2] = {x1, x2};
    if (cg_check_same(op, 2, xs, 0) || nn_check_float(op, "input", x1)) return NULL;
    int nd = x1->ndim > x2->ndim ? x1->ndim : x2->ndim;
    int64_t d = nd > 0 ? nd - 1 : 0;
    NN_ARENA;
    cg_tensor *diff = SHIFT(SUB(x1, x2), eps);
    cg_tensor *r = TK(diff ? cg_norm(diff, p, nd > 0 ? 1 : 0, &d, keepdim) : NULL);
    return nn_finish(A_, r);
}
