/* nary.c — fixed-arity (>= 3) elementwise ops through the n-ary driver:
 * where(cond, a, b), lerp, addcmul, addcdiv and clamp with tensor bounds (whose
 * one-bound forms are the binary ops clamp_min / clamp_max): descriptors and
 * backward formulas. Hand rows of the op table; their loops are in
 * src/backend/cpu/elementwise_hand.c. */
#include "elementwise_ops.gen.h"

#include <string.h>

/* ---------------------------------------------------------------- where */
/* ga = where(cond, g, 0); gb = where(cond, 0, g) */
static cg_status where_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    cg_tensor *cond = cg_node_saved(node, 0);
    if (!cond) return cg_last_error();
    cg_tensor *zero = cg_scalar_on(0.0, g[0]->dtype, g[0]->device);
    cg_status st = CG_OK;
    if (!zero) st = cg_last_error();
    if (!st && cg_node_needs_grad(node, 1) && !(gin[1] = cg_where(cond, g[0], zero))) st = cg_last_error();
    if (!st && cg_node_needs_grad(node, 2) && !(gin[2] = cg_where(cond, zero, g[0]))) st = cg_last_error();
    cg_tensor_release(zero);
    cg_tensor_release(cond);
    return st;
}

const cg_nary_op cg_op_where = {
    .id = CG_OP_WHERE,
    .schema = {"where", "WhereBackward0", 1, CG_AMP_KEEP, false, true, false},
    .arity = 3, .bool_inputs = 1u, .out_dtype = CG_SAME_DTYPE,
    .dtypes = CG_OP_DTYPES_WHERE,
    .backward = where_backward,
};

cg_tensor *cg_where(cg_tensor *cond, cg_tensor *a, cg_tensor *b) {
    cg_tensor *in[3] = {cond, a, b};
    return cg_nary_forward(&cg_op_where, 3, in, NULL, 0);
}

/* ---------------------------------------------------------------- backward helpers */
static cg_tensor *scalar_like(double v, const cg_tensor *t) { return cg_scalar_on(v, t->dtype, t->device); }
static void release_n(int n, cg_tensor **ts) {
    for (int i = 0; i < n; i++) cg_tensor_release(ts[i]);
}
/* gin[i] = g (new reference) when input i needs a gradient */
static void pass_grad(cg_node *node, int i, cg_tensor *g, cg_tensor **gin) {
    if (!cg_node_needs_grad(node, i)) return;
    cg_tensor_retain(g);
    gin[i] = g;
}

/* ---------------------------------------------------------------- lerp(start, end, weight)
 * PyTorch's two-sided form, exact at both ends: |w| < 0.5 ? s + w (e - s) : e - (e - s)(1 - w). */

/* gs = g (1 - w) ; ge = g w ; gw = g (e - s) */
static cg_status lerp_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    cg_tensor *s = cg_node_saved(node, 0), *e = cg_node_saved(node, 1), *w = cg_node_saved(node, 2);
    cg_tensor *t[3] = {0};
    cg_status st = CG_OK;
    if (!s || !e || !w) goto fail;
    if (cg_node_needs_grad(node, 0) &&
        (!(t[0] = scalar_like(1.0, g[0])) || !(t[1] = cg_sub(t[0], w)) || !(gin[0] = cg_mul(g[0], t[1]))))
        goto fail;
    if (cg_node_needs_grad(node, 1) && !(gin[1] = cg_mul(g[0], w))) goto fail;
    if (cg_node_needs_grad(node, 2) && (!(t[2] = cg_sub(e, s)) || !(gin[2] = cg_mul(g[0], t[2])))) goto fail;
    goto done;
fail:
    st = cg_last_error();
done:
    release_n(3, t);
    cg_tensor_release(s);
    cg_tensor_release(e);
    cg_tensor_release(w);
    return st;
}

const cg_nary_op cg_op_lerp = {
    .id = CG_OP_LERP,
    .schema = {"lerp", "LerpBackward1", 1, CG_AMP_KEEP, false, true, false},
    .arity = 3, .out_dtype = CG_SAME_DTYPE,
    .dtypes = CG_OP_DTYPES_LERP,
    .backward = lerp_backward,
};

cg_tensor *cg_lerp(cg_tensor *start, cg_tensor *end, cg_tensor *weight) {
    cg_tensor *in[3] = {start, end, weight};
    return cg_nary_forward(&cg_op_lerp, 3, in, NULL, 0);
}

/* ---------------------------------------------------------------- addcmul, addcdiv
 * self + value * t1 * t2 and self + value * t1 / t2; params: {value}. */
/* addcmul: gs = g ; gt1 = g v t2 ; gt2 = g v t1
 * addcdiv: gs = g ; gt1 = g v / t2 ; gt2 = -(g v t1 / t2) / t2 */
static cg_status addc_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin, bool is_div) {
    cg_tensor *t1 = cg_node_saved(node, 1), *t2 = cg_node_saved(node, 2);
    cg_tensor *t[4] = {0};
    cg_status st = CG_OK;
    pass_grad(node, 0, g[0], gin);
    if (!t1 || !t2 || !(t[0] = scalar_like(node->dattr[0], g[0])) || !(t[1] = cg_mul(g[0], t[0]))) goto fail;
    if (!is_div) {
        if (cg_node_needs_grad(node, 1) && !(gin[1] = cg_mul(t[1], t2))) goto fail;
        if (cg_node_needs_grad(node, 2) && !(gin[2] = cg_mul(t[1], t1))) goto fail;
    } else {
        if (cg_node_needs_grad(node, 1) && !(gin[1] = cg_div(t[1], t2))) goto fail;
        if (cg_node_needs_grad(node, 2)) {
            if (!(t[2] = cg_mul(t[1], t1)) || !(t[3] = cg_div(t[2], t2))) goto fail;
            cg_tensor *u = cg_div(t[3], t2);
            gin[2] = u ? cg_neg(u) : NULL;
            cg_tensor_release(u);
            if (!gin[2]) goto fail;
        }
    }
    goto done;
fail:
    st = cg_last_error();
done:
    release_n(4, t);
    cg_tensor_release(t1);
    cg_tensor_release(t2);
    return st;
}
static cg_status addcmul_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    return addc_backward(node, g, gin, false);
}
static cg_status addcdiv_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    return addc_backward(node, g, gin, true);
}

const cg_nary_op cg_op_addcmul = {
    .id = CG_OP_ADDCMUL,
    .schema = {"addcmul", "AddcmulBackward0", 1, CG_AMP_KEEP, false, true, false},
    .arity = 3, .out_dtype = CG_SAME_DTYPE,
    .dtypes = CG_OP_DTYPES_ADDCMUL,
    .backward = addcmul_backward,
};
const cg_nary_op cg_op_addcdiv = {
    .id = CG_OP_ADDCDIV,
    .schema = {"addcdiv", "AddcdivBackward0", 1, CG_AMP_KEEP, false, true, false},
    .arity = 3, .out_dtype = CG_SAME_DTYPE,
    .dtypes = CG_OP_DTYPES_ADDCDIV,
    .backward = addcdiv_backward,
};

cg_tensor *cg_addcmul(cg_tensor *self, cg_tensor *t1, cg_tensor *t2, double value) {
    cg_tensor *in[3] = {self, t1, t2};
    return cg_nary_forward(&cg_op_addcmul, 3, in, &value, 1);
}
cg_tensor *cg_addcdiv(cg_tensor *self, cg_tensor *t1, cg_tensor *t2, double value) {
    cg_tensor *in[3] = {self, t1, t2};
    return cg_nary_forward(&cg_op_addcdiv, 3, in, &value, 1);
}

/* ---------------------------------------------------------------- clamp(x, min, max), tensor bounds
 * Both bounds (PyTorch's clamp kernel): a NaN bound gives NaN, otherwise
 * min(max(x, lo), hi) with std::max / std::min semantics, so a NaN x stays NaN
 * and lo > hi gives hi. One bound: clamp_min = maximum, clamp_max = minimum
 * (NaN from either side propagates), with clamp's gradient rule (no tie split). */
/* where(pred, g, 0) into *dst, releasing pred */
static cg_status masked_grad(cg_tensor *pred, cg_tensor *g, cg_tensor *zero, cg_tensor **dst) {
    if (!pred) return cg_last_error();
    *dst = cg_where(pred, g, zero);
    cg_tensor_release(pred);
    return *dst ? CG_OK : cg_last_error();
}

/* x:   where(x >= lo & x <= hi, g, 0)
 * lo:  where(x < lo & lo < hi, g, 0)
 * hi:  where(x > hi | hi < lo, g, 0)     (PyTorch's clamp_backward_min_max) */
static cg_status clamp_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    cg_tensor *x = cg_node_saved(node, 0), *lo = cg_node_saved(node, 1), *hi = cg_node_saved(node, 2);
    cg_tensor *t[7] = {0};
    cg_status st = CG_OK;
    if (!x || !lo || !hi || !(t[0] = scalar_like(0.0, g[0]))) goto fail;
    if (cg_node_needs_grad(node, 0) &&
        (!(t[1] = cg_ge(x, lo)) || !(t[2] = cg_le(x, hi)) || masked_grad(cg_logical_and(t[1], t[2]), g[0], t[0], &gin[0])))
        goto fail;
    if (cg_node_needs_grad(node, 1) &&
        (!(t[3] = cg_lt(x, lo)) || !(t[4] = cg_lt(lo, hi)) || masked_grad(cg_logical_and(t[3], t[4]), g[0], t[0], &gin[1])))
        goto fail;
    if (cg_node_needs_grad(node, 2) &&
        (!(t[5] = cg_gt(x, hi)) || !(t[6] = cg_lt(hi, lo)) || masked_grad(cg_logical_or(t[5], t[6]), g[0], t[0], &gin[2])))
        goto fail;
    goto done;
fail:
    st = cg_last_error();
done:
    release_n(7, t);
    cg_tensor_release(x);
    cg_tensor_release(lo);
    cg_tensor_release(hi);
    return st;
}

/* clamp_min: x gets where(x >= lo, g, 0), lo gets where(x < lo, g, 0);
 * clamp_max: x gets where(x <= hi, g, 0), hi gets where(x > hi, g, 0). */
static cg_status clamp1_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin, bool is_min) {
    cg_tensor *x = cg_node_saved(node, 0), *bound = cg_node_saved(node, 1), *zero = NULL;
    cg_status st = CG_OK;
    if (!x || !bound || !(zero = scalar_like(0.0, g[0]))) goto fail;
    if (cg_node_needs_grad(node, 0) &&
        masked_grad(is_min ? cg_ge(x, bound) : cg_le(x, bound), g[0], zero, &gin[0]))
        goto fail;
    if (cg_node_needs_grad(node, 1) &&
        masked_grad(is_min ? cg_lt(x, bound) : cg_gt(x, bound), g[0], zero, &gin[1]))
        goto fail;
    goto done;
fail:
    st = cg_last_error();
done:
    cg_tensor_release(zero);
    cg_tensor_release(x);
    cg_tensor_release(bound);
    return st;
}
static cg_status clamp_min_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    return clamp1_backward(node, g, gin, true);
}
static cg_status clamp_max_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    return clamp1_backward(node, g, gin, false);
}

const cg_nary_op cg_op_clamp = {
    .id = CG_OP_CLAMP,
    .schema = {"clamp", "ClampBackward0", 1, CG_AMP_KEEP, false, true, false},
    .arity = 3, .out_dtype = CG_SAME_DTYPE,
    .dtypes = CG_OP_DTYPES_CLAMP,
    .backward = clamp_backward,
};
const cg_binary_op cg_op_clamp_min = {
    .id = CG_OP_CLAMP_MIN,
    .schema = {"clamp_min", "ClampMinBackward1", 1, CG_AMP_KEEP, false, true, false},
    .arity = 2, .out_dtype = CG_SAME_DTYPE,
    .dtypes = CG_OP_DTYPES_CLAMP_MIN,
    .backward = clamp_min_backward,
};
const cg_binary_op cg_op_clamp_max = {
    .id = CG_OP_CLAMP_MAX,
    .schema = {"clamp_max", "ClampMaxBackward1", 1, CG_AMP_KEEP, false, true, false},
    .arity = 2, .out_dtype = CG_SAME_DTYPE,
    .dtypes = CG_OP_DTYPES_CLAMP_MAX,
    .backward = clamp_max_backward,
};

/* NULL bound = no bound; with neither bound the result is a copy of x. */
cg_tensor *cg_clamp(cg_tensor *x, cg_tensor *min, cg_tensor *max) {
    CG_CHECK(x, CG_ERR_VALUE, "[clamp] input is NULL");
    if (min && max) {
        cg_tensor *in[3] = {x, min, max};
        return cg_nary_forward(&cg_op_clamp, 3, in, NULL, 0);
    }
    if (min) return cg_binary_forward(&cg_op_clamp_min, x, min, NULL, 0);
    if (max) return cg_binary_forward(&cg_op_clamp_max, x, max, NULL, 0);
    return cg_clone(x);
}
