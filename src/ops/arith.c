/* arith.c — the backward formulas of the arithmetic binary ops (add, sub, mul,
 * div, floor_divide, remainder, fmod, pow, atan2, maximum, minimum, hypot,
 * logaddexp, logaddexp2, copysign), written with cg ops. Their descriptors, entry points and CPU
 * loops are generated from the op table (src/ops/elementwise_ops.py); pow's private
 * log is a hand row (loops in src/backend/cpu/elementwise_hand.c). */
#include "../dispatch/dispatch_internal.h"
#include "elementwise_ops.gen.h"

#include <stdatomic.h>

/* ---------------------------------------------------------------- add */

cg_status cg_bw_add(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    for (int i = 0; i < 2; i++)
        if (cg_node_needs_grad(node, i)) {
            cg_tensor_retain(g[0]);
            gin[i] = g[0];
        }
    return CG_OK;
}

/* ---------------------------------------------------------------- sub */

cg_status cg_bw_sub(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    if (cg_node_needs_grad(node, 0)) {
        cg_tensor_retain(g[0]);
        gin[0] = g[0];
    }
    if (cg_node_needs_grad(node, 1) && !(gin[1] = cg_neg(g[0]))) return cg_last_error();
    return CG_OK;
}

/* ---------------------------------------------------------------- mul */

cg_status cg_bw_mul(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    for (int i = 0; i < 2; i++) {
        if (!cg_node_needs_grad(node, i)) continue;
        cg_tensor *other = cg_node_saved(node, 1 - i);
        if (!other) return cg_last_error();
        gin[i] = cg_mul(g[0], other);
        cg_tensor_release(other);
        if (!gin[i]) return cg_last_error();
    }
    return CG_OK;
}

/* ---------------------------------------------------------------- div (true division) */

/* ga = g / b ; gb = -g * a / b^2 = -(ga * a) / b */
cg_status cg_bw_div(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    cg_tensor *a = cg_node_saved(node, 0), *b = cg_node_saved(node, 1);
    cg_status st = CG_OK;
    cg_tensor *ga = NULL, *t = NULL, *u = NULL;
    if (!a || !b) { st = cg_last_error(); goto done; }
    ga = cg_div(g[0], b);
    if (!ga) { st = cg_last_error(); goto done; }
    if (cg_node_needs_grad(node, 1)) {
        t = cg_mul(ga, a);
        u = t ? cg_div(t, b) : NULL;
        gin[1] = u ? cg_neg(u) : NULL;
        if (!gin[1]) { st = cg_last_error(); goto done; }
    }
    if (cg_node_needs_grad(node, 0)) {
        gin[0] = ga;
        ga = NULL;
    }
done:
    cg_tensor_release(a);
    cg_tensor_release(b);
    cg_tensor_release(ga);
    cg_tensor_release(t);
    cg_tensor_release(u);
    return st;
}

/* ---------------------------------------------------------------- backward helpers */

/* A 0-d tensor holding v, in t's dtype and on t's device. */
static cg_tensor *scalar_like(double v, const cg_tensor *t) { return cg_scalar_on(v, t->dtype, t->device); }

/* (the scalar kernels of the loops, integer division by zero included, are in
 * src/backend/cpu/elementwise_kernels.h) */

/* ---------------------------------------------------------------- floor_divide
 * Piecewise constant: the gradient is zero wherever it exists. */

/* ---------------------------------------------------------------- remainder
 * ga = g ; gb = -g * floor_divide(a, b) (the quotient is piecewise constant). */

/* Shared by remainder and fmod: ga = g ; gb = -g * q(a, b), q computed
 * without history (its derivative is zero almost everywhere). */
static cg_status mod_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin, bool trunc) {
    if (cg_node_needs_grad(node, 0)) {
        cg_tensor_retain(g[0]);
        gin[0] = g[0];
    }
    if (!cg_node_needs_grad(node, 1)) return CG_OK;
    cg_tensor *a = cg_node_saved(node, 0), *b = cg_node_saved(node, 1);
    cg_tensor *t[5] = {0};
    cg_status st = CG_OK;
    bool prev = cg_set_grad_enabled(false);
    if (!a || !b) goto fail;
    if (trunc) { /* trunc(a / b) = q - fmod(q, 1), exact in floating point */
        if (!(t[0] = cg_div(a, b)) || !(t[1] = scalar_like(1.0, t[0])) || !(t[2] = cg_fmod(t[0], t[1])) ||
            !(t[3] = cg_sub(t[0], t[2])))
            goto fail;
    } else if (!(t[3] = cg_floor_divide(a, b))) {
        goto fail;
    }
    cg_set_grad_enabled(prev);
    if (!(t[4] = cg_mul(g[0], t[3])) || !(gin[1] = cg_neg(t[4]))) goto fail;
    goto done;
fail:
    st = cg_last_error();
done:
    cg_set_grad_enabled(prev);
    cg_release_all(5, t);
    cg_tensor_release(a);
    cg_tensor_release(b);
    return st;
}
cg_status cg_bw_remainder(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    return mod_backward(node, g, gin, false);
}

/* ---------------------------------------------------------------- fmod
 * C fmod: the result takes the dividend's sign. ga = g ; gb = -g * trunc(a / b). */

cg_status cg_bw_fmod(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    return mod_backward(node, g, gin, true);
}

/* ---------------------------------------------------------------- log (private, for pow's backward)
 * Note [pow log]: pow's exponent gradient needs log(a); this private unary op
 * (d/dx = 1/x, so it is differentiable to any order) keeps this file free of a
 * link dependency on the unary math family. */
static cg_status pow_log_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    cg_tensor *x = cg_node_saved(node, 0);
    if (!x) return cg_last_error();
    gin[0] = cg_div(g[0], x);
    cg_tensor_release(x);
    return gin[0] ? CG_OK : cg_last_error();
}

static const cg_unary_op pow_log_op = {
    .id = CG_OP_POW_LOG,
    .schema = {"log", "LogBackward0", 1, CG_AMP_KEEP, false, true, false},
    .arity = 1, .out_dtype = CG_SAME_DTYPE,
    .dtypes = CG_OP_DTYPES_POW_LOG,
    .backward = pow_log_backward,
};

/* ---------------------------------------------------------------- pow (tensor ** tensor) */

/* ga = where(b == 0, 0, g * b * a^(b-1))
 * gb = g * where(a == 0 & b >= 0, 0, out * log(a))   (PyTorch's masking at a = 0) */
cg_status cg_bw_pow(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    cg_tensor *a = cg_node_saved(node, 0), *b = cg_node_saved(node, 1), *out = cg_node_saved(node, 2);
    cg_tensor *t[12] = {0};
    cg_status st = CG_OK;
    if (!a || !b || !out || !(t[0] = scalar_like(0.0, g[0]))) goto fail;
    if (cg_node_needs_grad(node, 0)) {
        if (!(t[1] = scalar_like(1.0, g[0])) || !(t[2] = cg_sub(b, t[1])) || !(t[3] = cg_pow(a, t[2])) ||
            !(t[4] = cg_mul(b, t[3])) || !(t[5] = cg_mul(g[0], t[4])) || !(t[6] = cg_eq(b, t[0])) ||
            !(gin[0] = cg_where(t[6], t[0], t[5])))
            goto fail;
    }
    if (cg_node_needs_grad(node, 1)) {
        if (!(t[7] = cg_eq(a, t[0])) || !(t[8] = cg_ge(b, t[0])) || !(t[9] = cg_logical_and(t[7], t[8])) ||
            !(t[10] = cg_unary_forward(&pow_log_op, a, NULL, 0)) || !(t[11] = cg_mul(out, t[10])))
            goto fail;
        cg_tensor *m = cg_where(t[9], t[0], t[11]);
        if (!m) goto fail;
        gin[1] = cg_mul(g[0], m);
        cg_tensor_release(m);
        if (!gin[1]) goto fail;
    }
    goto done;
fail:
    st = cg_last_error();
done:
    cg_release_all(12, t);
    cg_tensor_release(a);
    cg_tensor_release(b);
    cg_tensor_release(out);
    return st;
}

/* ---------------------------------------------------------------- atan2 (a = y, b = x) */

/* ga = g * b / (a^2 + b^2) ; gb = -g * a / (a^2 + b^2) */
cg_status cg_bw_atan2(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    cg_tensor *a = cg_node_saved(node, 0), *b = cg_node_saved(node, 1);
    cg_tensor *t[9] = {0};
    cg_status st = CG_OK;
    /* r = 1 / (a^2 + b^2), 0 where the sum is 0 (the origin, or underflow), as PyTorch: a zero gradient there
     * with the signs of g * b and -g * a */
    if (!a || !b || !(t[0] = cg_mul(a, a)) || !(t[1] = cg_mul(b, b)) || !(t[2] = cg_add(t[0], t[1])) ||
        !(t[3] = cg_reciprocal(t[2])) || !(t[4] = scalar_like(0.0, t[2])) || !(t[5] = cg_eq(t[2], t[4])) ||
        !(t[6] = cg_where(t[5], t[4], t[3])) || !(t[7] = cg_mul(g[0], t[6])))
        goto fail;
    if (cg_node_needs_grad(node, 0) && !(gin[0] = cg_mul(t[7], b))) goto fail;
    if (cg_node_needs_grad(node, 1) && (!(t[8] = cg_mul(t[7], a)) || !(gin[1] = cg_neg(t[8])))) goto fail;
    goto done;
fail:
    st = cg_last_error();
done:
    cg_release_all(9, t);
    cg_tensor_release(a);
    cg_tensor_release(b);
    return st;
}

/* ---------------------------------------------------------------- maximum, minimum
 * NaN in either operand propagates. Gradient (PyTorch): the winner gets g, a
 * tie splits it evenly (g/2 each). */

/* h = where(a == b, g/2, g); ga = where(a loses, 0, h); gb = where(b loses, 0, h) */
static cg_status minmax_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin, bool is_max) {
    cg_tensor *a = cg_node_saved(node, 0), *b = cg_node_saved(node, 1);
    cg_tensor *t[6] = {0};
    cg_status st = CG_OK;
    if (!a || !b || !(t[0] = scalar_like(0.5, g[0])) || !(t[1] = cg_mul(g[0], t[0])) || !(t[2] = cg_eq(a, b)) ||
        !(t[3] = cg_where(t[2], t[1], g[0])) || !(t[4] = scalar_like(0.0, g[0])))
        goto fail;
    for (int i = 0; i < 2; i++) {
        if (!cg_node_needs_grad(node, i)) continue;
        cg_tensor *self = i == 0 ? a : b, *other = i == 0 ? b : a;
        cg_tensor *loses = is_max ? cg_lt(self, other) : cg_gt(self, other);
        if (!loses) goto fail;
        gin[i] = cg_where(loses, t[4], t[3]);
        cg_tensor_release(loses);
        if (!gin[i]) goto fail;
    }
    goto done;
fail:
    st = cg_last_error();
done:
    cg_release_all(6, t);
    cg_tensor_release(a);
    cg_tensor_release(b);
    return st;
}
cg_status cg_bw_maximum(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    return minmax_backward(node, g, gin, true);
}
cg_status cg_bw_minimum(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    return minmax_backward(node, g, gin, false);
}

/* ---------------------------------------------------------------- hypot */

/* ga = g * a / out ; gb = g * b / out   (slots: a, b, out) */
cg_status cg_bw_hypot(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    cg_tensor *a = cg_node_saved(node, 0), *b = cg_node_saved(node, 1), *out = cg_node_saved(node, 2);
    cg_tensor *q = NULL;
    cg_status st = CG_OK;
    if (!a || !b || !out || !(q = cg_div(g[0], out))) goto fail;
    if (cg_node_needs_grad(node, 0) && !(gin[0] = cg_mul(q, a))) goto fail;
    if (cg_node_needs_grad(node, 1) && !(gin[1] = cg_mul(q, b))) goto fail;
    goto done;
fail:
    st = cg_last_error();
done:
    cg_tensor_release(q);
    cg_tensor_release(a);
    cg_tensor_release(b);
    cg_tensor_release(out);
    return st;
}

/* ---------------------------------------------------------------- logaddexp, logaddexp2
 * log(exp(a) + exp(b)) = max + log1p(exp(-|a - b|)); equal infinities give themselves.
 * logaddexp2 the same in base 2. */
/* ga = g / (1 + exp(b - a)) ; gb = g / (1 + exp(a - b)); base 2: exp2 */
static cg_status logaddexp_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin,
                                    cg_tensor *(*expf_)(cg_tensor *)) {
    cg_tensor *a = cg_node_saved(node, 0), *b = cg_node_saved(node, 1), *one = NULL;
    cg_status st = CG_OK;
    if (!a || !b || !(one = scalar_like(1.0, g[0]))) goto fail;
    for (int i = 0; i < 2; i++) {
        if (!cg_node_needs_grad(node, i)) continue;
        cg_tensor *d = i == 0 ? cg_sub(b, a) : cg_sub(a, b);
        cg_tensor *e = d ? expf_(d) : NULL;
        cg_tensor *s = e ? cg_add(one, e) : NULL;
        gin[i] = s ? cg_div(g[0], s) : NULL;
        cg_tensor_release(d);
        cg_tensor_release(e);
        cg_tensor_release(s);
        if (!gin[i]) goto fail;
    }
    goto done;
fail:
    st = cg_last_error();
done:
    cg_tensor_release(one);
    cg_tensor_release(a);
    cg_tensor_release(b);
    return st;
}

cg_status cg_bw_logaddexp(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    return logaddexp_backward(node, g, gin, cg_exp);
}
cg_status cg_bw_logaddexp2(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    return logaddexp_backward(node, g, gin, cg_exp2);
}

/* ---------------------------------------------------------------- copysign
 * ga = g * where(a == 0, 0, out / a) (PyTorch's ratio: ±1, computed without
 * history since it is piecewise constant); gb = 0.   (slots: a, b, out) */
cg_status cg_bw_copysign(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    if (cg_node_needs_grad(node, 1) && !(gin[1] = cg_zeros_like(g[0]))) return cg_last_error();
    if (!cg_node_needs_grad(node, 0)) return CG_OK;
    cg_tensor *a = cg_node_saved(node, 0), *out = cg_node_saved(node, 2);
    cg_tensor *t[4] = {0};
    cg_status st = CG_OK;
    bool prev = cg_set_grad_enabled(false);
    if (!a || !out || !(t[0] = scalar_like(0.0, a)) || !(t[1] = cg_eq(a, t[0])) || !(t[2] = cg_div(out, a)) ||
        !(t[3] = cg_where(t[1], t[0], t[2])))
        st = cg_last_error();
    cg_set_grad_enabled(prev);
    if (st == CG_OK && !(gin[0] = cg_mul(g[0], t[3]))) st = cg_last_error();
    cg_release_all(4, t);
    cg_tensor_release(a);
    cg_tensor_release(out);
    return st;
}

/* ---------------------------------------------------------------- igamma, igammac
 * Note [Incomplete gamma] (src/backend/cpu/special_kernels.h). d/dx P(a, x) = x^(a-1) e^-x / Gamma(a)
 * = -d/dx Q(a, x), written with cg ops so it differentiates again in x; a takes no gradient, as in
 * PyTorch (NotImplementedError naming the op at backward). */
static cg_status igamma_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin, const char *name, bool upper) {
    if (cg_node_needs_grad(node, 0))
        return cg_set_error(CG_ERR_NOT_IMPLEMENTED, "[%s] the derivative for '%s: input' is not implemented.", name,
                            name);
    if (!cg_node_needs_grad(node, 1)) return CG_OK;
    cg_tensor *a = cg_node_saved(node, 0), *x = cg_node_saved(node, 1);
    cg_tensor *t[10] = {0};
    /* t: a (detached), lgamma(a), 1, a - 1, log x, (a - 1) log x, - x, - lgamma(a), the density, its sign */
    bool ok = a && x && (t[0] = cg_detach(a)) && (t[1] = cg_unary_forward(&cg_op_lgamma, t[0], NULL, 0)) &&
              (t[2] = scalar_like(1.0, a)) && (t[3] = cg_sub(t[0], t[2])) && (t[4] = cg_log(x)) &&
              (t[5] = cg_mul(t[3], t[4])) && (t[6] = cg_sub(t[5], x)) && (t[7] = cg_sub(t[6], t[1])) &&
              (t[8] = cg_exp(t[7])) && (!upper || (t[9] = cg_neg(t[8]))) && (gin[1] = cg_mul(g[0], t[upper ? 9 : 8]));
    cg_status st = ok ? CG_OK : cg_last_error();
    cg_release_all(10, t);
    cg_tensor_release(a);
    cg_tensor_release(x);
    return st;
}
cg_status cg_bw_igamma(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    return igamma_backward(node, g, gin, "igamma", false);
}
cg_status cg_bw_igammac(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    return igamma_backward(node, g, gin, "igammac", true);
}
