/* nary.c — fixed-arity (>= 3) elementwise ops through the n-ary driver:
 * where(cond, a, b), lerp, addcmul, addcdiv and clamp with tensor bounds (whose
 * one-bound forms are the binary ops clamp_min / clamp_max). */
#include "../dispatch/dispatch_internal.h"
#include "../backend/cpu/loops.h"

#include <string.h>

/* ---------------------------------------------------------------- where */
#define WHERE_LOOP(name, T)                                                                    \
    static void name(char **args, const int64_t *s, int64_t n, const void *p) {                \
        (void)p;                                                                               \
        if (s[0] == (int64_t)sizeof(T) && s[1] == 1 && s[2] == (int64_t)sizeof(T) && s[3] == (int64_t)sizeof(T)) { \
            T *o = (T *)args[0];                                                               \
            const uint8_t *c = (const uint8_t *)args[1];                                       \
            const T *a = (const T *)args[2], *b = (const T *)args[3];                          \
            for (int64_t k = 0; k < n; k++) o[k] = c[k] ? a[k] : b[k];                         \
            return;                                                                            \
        }                                                                                      \
        for (int64_t k = 0; k < n; k++)                                                        \
            *(T *)(args[0] + k * s[0]) = *(const uint8_t *)(args[1] + k * s[1])                \
                                             ? *(const T *)(args[2] + k * s[2])                \
                                             : *(const T *)(args[3] + k * s[3]);               \
    }
WHERE_LOOP(where_1, uint8_t)
WHERE_LOOP(where_2, uint16_t)
WHERE_LOOP(where_4, uint32_t)
WHERE_LOOP(where_8, uint64_t)

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
    .schema = {"where", "WhereBackward0", 1, CG_AMP_KEEP, false, true, false},
    .arity = 3, .bool_inputs = 1u, .out_dtype = CG_SAME_DTYPE,
    .cpu = {[CG_DTYPE_BOOL] = where_1, [CG_DTYPE_U8] = where_1, [CG_DTYPE_I8] = where_1,
            [CG_DTYPE_I16] = where_2, [CG_DTYPE_F16] = where_2, [CG_DTYPE_BF16] = where_2,
            [CG_DTYPE_I32] = where_4, [CG_DTYPE_F32] = where_4, [CG_DTYPE_I64] = where_8, [CG_DTYPE_F64] = where_8,
            [CG_DTYPE_U16] = where_2, [CG_DTYPE_U32] = where_4, [CG_DTYPE_U64] = where_8},
    .backward = where_backward,
};

cg_tensor *cg_where(cg_tensor *cond, cg_tensor *a, cg_tensor *b) {
    cg_tensor *in[3] = {cond, a, b};
    return cg_nary_forward(&cg_op_where, 3, in, NULL, 0);
}

/* ---------------------------------------------------------------- ternary loops
 * args: out, x, y, z (all broadcast to the output); EXPR computes from x, y, z
 * of compute type CT; p = params. Contiguous fast path, else strided. */
#define TERNARY_LOOP(fname, T, CT, LOAD, STORE, EXPR)                                                   \
    static void fname(char **args, const int64_t *s, int64_t n, const void *params) {                   \
        const double *p = params;                                                                       \
        (void)p;                                                                                        \
        const int64_t sz_ = (int64_t)sizeof(T);                                                         \
        if (s[0] == sz_ && s[1] == sz_ && s[2] == sz_ && s[3] == sz_) {                                 \
            T *O_ = (T *)args[0];                                                                       \
            const T *X_ = (const T *)args[1], *Y_ = (const T *)args[2], *Z_ = (const T *)args[3];       \
            for (int64_t k_ = 0; k_ < n; k_++) {                                                        \
                CT x = LOAD(X_[k_]), y = LOAD(Y_[k_]), z = LOAD(Z_[k_]);                                \
                O_[k_] = STORE(EXPR);                                                                   \
            }                                                                                           \
            return;                                                                                     \
        }                                                                                               \
        for (int64_t k_ = 0; k_ < n; k_++) {                                                            \
            CT x = LOAD(*(const T *)(args[1] + k_ * s[1])), y = LOAD(*(const T *)(args[2] + k_ * s[2])); \
            CT z = LOAD(*(const T *)(args[3] + k_ * s[3]));                                             \
            *(T *)(args[0] + k_ * s[0]) = STORE(EXPR);                                                  \
        }                                                                                               \
    }
#define TERNARY_FLOAT_LOOPS(name, EXPR_F, EXPR_D)                             \
    TERNARY_LOOP(name##_f32, float, float, CG_ID, CG_ID, EXPR_F)              \
    TERNARY_LOOP(name##_f64, double, double, CG_ID, CG_ID, EXPR_D)            \
    TERNARY_LOOP(name##_f16, cg_f16, float, CG_LD_F16, CG_ST_F16, EXPR_F)     \
    TERNARY_LOOP(name##_bf16, cg_bf16, float, CG_LD_BF16, CG_ST_BF16, EXPR_F)
/* integers computed in int64 (wrap-around arithmetic goes through uint64) */
#define TERNARY_INT_LOOPS(name, EXPR)                                 \
    TERNARY_LOOP(name##_u8, uint8_t, int64_t, CG_ID, CG_ID, EXPR)     \
    TERNARY_LOOP(name##_i8, int8_t, int64_t, CG_ID, CG_ID, EXPR)      \
    TERNARY_LOOP(name##_i16, int16_t, int64_t, CG_ID, CG_ID, EXPR)    \
    TERNARY_LOOP(name##_i32, int32_t, int64_t, CG_ID, CG_ID, EXPR)    \
    TERNARY_LOOP(name##_i64, int64_t, int64_t, CG_ID, CG_ID, EXPR)

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
TERNARY_FLOAT_LOOPS(lerp, fabsf(z) < 0.5f ? x + z * (y - x) : y - (y - x) * (1.0f - z),
                    fabs(z) < 0.5 ? x + z * (y - x) : y - (y - x) * (1.0 - z))

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
    .schema = {"lerp", "LerpBackward1", 1, CG_AMP_KEEP, false, true, false},
    .arity = 3, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(lerp)},
    .backward = lerp_backward,
};

cg_tensor *cg_lerp(cg_tensor *start, cg_tensor *end, cg_tensor *weight) {
    cg_tensor *in[3] = {start, end, weight};
    return cg_nary_forward(&cg_op_lerp, 3, in, NULL, 0);
}

/* ---------------------------------------------------------------- addcmul, addcdiv
 * self + value * t1 * t2 and self + value * t1 / t2; params: {value}. */
TERNARY_FLOAT_LOOPS(addcmul, x + (float)p[0] * y * z, x + p[0] * y * z)
TERNARY_INT_LOOPS(addcmul, (int64_t)((uint64_t)x + (uint64_t)(int64_t)p[0] * (uint64_t)y * (uint64_t)z))
TERNARY_FLOAT_LOOPS(addcdiv, x + (float)p[0] * (y / z), x + p[0] * (y / z))

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
    .schema = {"addcmul", "AddcmulBackward0", 1, CG_AMP_KEEP, false, true, false},
    .arity = 3, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(addcmul), CG_INT_TABLE(addcmul)},
    .backward = addcmul_backward,
};
const cg_nary_op cg_op_addcdiv = {
    .schema = {"addcdiv", "AddcdivBackward0", 1, CG_AMP_KEEP, false, true, false},
    .arity = 3, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(addcdiv)},
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
#define CLAMP3_FN(NAME, T, NANV)                                       \
    static inline T NAME(T x, T lo, T hi) {                            \
        if (isnan(lo) || isnan(hi)) return NANV;                       \
        T m = x < lo ? lo : x;                                         \
        return hi < m ? hi : m;                                        \
    }
CLAMP3_FN(clamp3_f, float, NAN)
CLAMP3_FN(clamp3_d, double, (double)NAN)
TERNARY_FLOAT_LOOPS(clamp, clamp3_f(x, y, z), clamp3_d(x, y, z))
TERNARY_INT_LOOPS(clamp, z < (x < y ? y : x) ? z : (x < y ? y : x))

CG_BINARY_FLOAT_LOOPS(clamp_min, (isnan(a) || a > b) ? a : b, (isnan(a) || a > b) ? a : b)
CG_BINARY_INT_LOOPS(clamp_min, a > b ? a : b)
CG_BINARY_FLOAT_LOOPS(clamp_max, (isnan(a) || a < b) ? a : b, (isnan(a) || a < b) ? a : b)
CG_BINARY_INT_LOOPS(clamp_max, a < b ? a : b)

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
    .schema = {"clamp", "ClampBackward0", 1, CG_AMP_KEEP, false, true, false},
    .arity = 3, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(clamp), CG_INT_TABLE(clamp)},
    .backward = clamp_backward,
};
const cg_binary_op cg_op_clamp_min = {
    .schema = {"clamp_min", "ClampMinBackward1", 1, CG_AMP_KEEP, false, true, false},
    .arity = 2, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(clamp_min), CG_INT_TABLE(clamp_min)},
    .backward = clamp_min_backward,
};
const cg_binary_op cg_op_clamp_max = {
    .schema = {"clamp_max", "ClampMaxBackward1", 1, CG_AMP_KEEP, false, true, false},
    .arity = 2, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(clamp_max), CG_INT_TABLE(clamp_max)},
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
