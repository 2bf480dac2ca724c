/* arith.c — arithmetic binary ops: add, sub, mul, div, floor_divide,
 * remainder, fmod, pow, atan2, maximum, minimum, hypot, logaddexp (descriptor,
 * loops and backward formula side by side), and their in-place forms. */
#include "../dispatch/dispatch_internal.h"
#include "../backend/cpu/loops.h"

#include <stdatomic.h>

/* ---------------------------------------------------------------- add */
CG_BINARY_FLOAT_LOOPS(add, a + b, a + b)
CG_BINARY_WRAPPING_INT_LOOPS(add, a + b)
CG_BINARY_LOOP(add_b, uint8_t, int, uint8_t, CG_LD_BOOL, CG_ST_BOOL, a || b)

static cg_status add_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    for (int i = 0; i < 2; i++)
        if (cg_node_needs_grad(node, i)) {
            cg_tensor_retain(g[0]);
            gin[i] = g[0];
        }
    return CG_OK;
}

const cg_binary_op cg_op_add = {
    .schema = {"add", "AddBackward0", 1, CG_AMP_KEEP, false, false, false},
    .arity = 2, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(add), CG_INT_TABLE(add), [CG_DTYPE_BOOL] = add_b},
    .backward = add_backward,
};

/* ---------------------------------------------------------------- sub */
CG_BINARY_FLOAT_LOOPS(sub, a - b, a - b)
CG_BINARY_WRAPPING_INT_LOOPS(sub, a - b)

static cg_status sub_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    if (cg_node_needs_grad(node, 0)) {
        cg_tensor_retain(g[0]);
        gin[0] = g[0];
    }
    if (cg_node_needs_grad(node, 1) && !(gin[1] = cg_neg(g[0]))) return cg_last_error();
    return CG_OK;
}

const cg_binary_op cg_op_sub = {
    .schema = {"sub", "SubBackward0", 1, CG_AMP_KEEP, false, false, false},
    .arity = 2, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(sub), CG_INT_TABLE(sub)},
    .backward = sub_backward,
};

/* ---------------------------------------------------------------- mul */
CG_BINARY_FLOAT_LOOPS(mul, a * b, a * b)
CG_BINARY_WRAPPING_INT_LOOPS(mul, a * b)
CG_BINARY_LOOP(mul_b, uint8_t, int, uint8_t, CG_LD_BOOL, CG_ST_BOOL, a && b)
CG_BINARY_UINT_LOOPS(mul, a * b)

static cg_status mul_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
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

const cg_binary_op cg_op_mul = {
    .schema = {"mul", "MulBackward0", 1, CG_AMP_KEEP, false, true, false},
    .arity = 2, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(mul), CG_INT_TABLE(mul), [CG_DTYPE_BOOL] = mul_b, CG_UINT_TABLE(mul)},
    .backward = mul_backward,
};

/* ---------------------------------------------------------------- div (true division) */
CG_BINARY_FLOAT_LOOPS(div, a / b, a / b)

/* ga = g / b ; gb = -g * a / b^2 = -(ga * a) / b */
static cg_status div_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
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

const cg_binary_op cg_op_div = {
    .schema = {"div", "DivBackward0", 1, CG_AMP_KEEP, false, true, false},
    .arity = 2, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(div)},
    .backward = div_backward,
};

/* ---------------------------------------------------------------- backward helpers */

/* A 0-d tensor holding v, in t's dtype and on t's device. */
static cg_tensor *scalar_like(double v, const cg_tensor *t) { return cg_scalar_on(v, t->dtype, t->device); }

/* Note [Integer division by zero]: integer floor_divide / remainder / fmod by
 * zero is an error in PyTorch. The loops never divide by zero (UB in C): they
 * store 0 and flag the error to the driver (Note [Loop errors]), which fails
 * the call, in-place forms included. INT64_MIN / -1 wraps (no trap). */
static inline int64_t zero_divisor(const void *params) {
    cg_loop_flag_error(params);
    return 0;
}

/* Integer kernels computed in int64 (inputs of every integer dtype fit; the
 * store narrows with wrap-around, as the fixed-width op would). */
static inline int64_t ifloordiv(int64_t a, int64_t b, const void *flag) {
    if (b == 0) return zero_divisor(flag);
    if (b == -1) return (int64_t)(0 - (uint64_t)a);
    int64_t q = a / b, r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
}
static inline int64_t iremainder(int64_t a, int64_t b, const void *flag) {
    if (b == 0) return zero_divisor(flag);
    if (b == -1) return 0;
    int64_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
static inline int64_t ifmod(int64_t a, int64_t b, const void *flag) {
    if (b == 0) return zero_divisor(flag);
    if (b == -1) return 0;
    return a % b;
}
/* PyTorch's powi: negative exponents give 0 except for bases 1 and -1. */
static inline int64_t ipow(int64_t a, int64_t b) {
    if (b < 0) {
        if (a == 1) return 1;
        if (a == -1) return (b & 1) ? -1 : 1;
        return 0;
    }
    uint64_t r = 1, base = (uint64_t)a;
    for (uint64_t e = (uint64_t)b; e; e >>= 1) {
        if (e & 1) r *= base;
        base *= base;
    }
    return (int64_t)r;
}

#define INT64_COMPUTE_LOOPS(name, EXPR)                                          \
    CG_BINARY_LOOP(name##_u8, uint8_t, int64_t, uint8_t, CG_ID, CG_ID, EXPR)     \
    CG_BINARY_LOOP(name##_i8, int8_t, int64_t, int8_t, CG_ID, CG_ID, EXPR)       \
    CG_BINARY_LOOP(name##_i16, int16_t, int64_t, int16_t, CG_ID, CG_ID, EXPR)    \
    CG_BINARY_LOOP(name##_i32, int32_t, int64_t, int32_t, CG_ID, CG_ID, EXPR)    \
    CG_BINARY_LOOP(name##_i64, int64_t, int64_t, int64_t, CG_ID, CG_ID, EXPR)

/* Floating floor division as PyTorch computes it (exact quotient from fmod,
 * then floor, with the sign of zero kept); b == 0 gives the IEEE a / b. */
#define FLOORDIV_FN(NAME, T, FMOD, FLOOR, COPYSIGN)                     \
    static inline T NAME(T a, T b) {                                    \
        if (b == 0) return a / b;                                       \
        T mod = FMOD(a, b);                                             \
        T div = (a - mod) / b;                                          \
        if (mod != 0 && ((b < 0) != (mod < 0))) div -= (T)1;            \
        if (div == 0) return COPYSIGN((T)0, a / b);                     \
        T fl = FLOOR(div);                                              \
        return div - fl > (T)0.5 ? fl + (T)1 : fl;                      \
    }
FLOORDIV_FN(floordiv_f, float, fmodf, floorf, copysignf)
FLOORDIV_FN(floordiv_d, double, fmod, floor, copysign)

/* Python %: the result takes the divisor's sign. */
#define REMAINDER_FN(NAME, T, FMOD)                                     \
    static inline T NAME(T a, T b) {                                    \
        T mod = FMOD(a, b);                                             \
        return (mod != 0 && ((b < 0) != (mod < 0))) ? mod + b : mod;   \
    }
REMAINDER_FN(remainder_f, float, fmodf)
REMAINDER_FN(remainder_d, double, fmod)

/* ---------------------------------------------------------------- floor_divide
 * Piecewise constant: the gradient is zero wherever it exists. */
CG_BINARY_FLOAT_LOOPS(floor_divide, floordiv_f(a, b), floordiv_d(a, b))
INT64_COMPUTE_LOOPS(floor_divide, ifloordiv(a, b, p))

static cg_status zero_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    for (int i = 0; i < node->num_inputs; i++)
        if (cg_node_needs_grad(node, i) && !(gin[i] = cg_zeros_like(g[0]))) return cg_last_error();
    return CG_OK;
}

const cg_binary_op cg_op_floor_divide = {
    .schema = {"floor_divide", "FloorDivideBackward0", 1, CG_AMP_KEEP, false, false, false},
    .arity = 2, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(floor_divide), CG_INT_TABLE(floor_divide)},
    .loop_error = "integer division by zero (ZeroDivisionError)",
    .backward = zero_backward,
};

/* ---------------------------------------------------------------- remainder
 * ga = g ; gb = -g * floor_divide(a, b) (the quotient is piecewise constant). */
CG_BINARY_FLOAT_LOOPS(remainder, remainder_f(a, b), remainder_d(a, b))
INT64_COMPUTE_LOOPS(remainder, iremainder(a, b, p))

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
static cg_status remainder_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    return mod_backward(node, g, gin, false);
}

const cg_binary_op cg_op_remainder = {
    .schema = {"remainder", "RemainderBackward0", 1, CG_AMP_KEEP, false, true, false},
    .arity = 2, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(remainder), CG_INT_TABLE(remainder)},
    .loop_error = "integer division by zero (ZeroDivisionError)",
    .backward = remainder_backward,
};

/* ---------------------------------------------------------------- fmod
 * C fmod: the result takes the dividend's sign. ga = g ; gb = -g * trunc(a / b). */
CG_BINARY_FLOAT_LOOPS(fmod, fmodf(a, b), fmod(a, b))
INT64_COMPUTE_LOOPS(fmod, ifmod(a, b, p))

static cg_status fmod_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    return mod_backward(node, g, gin, true);
}

const cg_binary_op cg_op_fmod = {
    .schema = {"fmod", "FmodBackward0", 1, CG_AMP_KEEP, false, true, false},
    .arity = 2, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(fmod), CG_INT_TABLE(fmod)},
    .loop_error = "integer division by zero (ZeroDivisionError)",
    .backward = fmod_backward,
};

/* ---------------------------------------------------------------- log (private, for pow's backward)
 * Note [pow log]: pow's exponent gradient needs log(a); this private unary op
 * (d/dx = 1/x, so it is differentiable to any order) keeps this file free of a
 * link dependency on the unary math family. */
CG_UNARY_FLOAT_LOOPS(pow_log, logf(x), log(x))

static cg_status pow_log_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    cg_tensor *x = cg_node_saved(node, 0);
    if (!x) return cg_last_error();
    gin[0] = cg_div(g[0], x);
    cg_tensor_release(x);
    return gin[0] ? CG_OK : cg_last_error();
}

static const cg_unary_op pow_log_op = {
    .schema = {"log", "LogBackward0", 1, CG_AMP_KEEP, false, true, false},
    .arity = 1, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(pow_log)},
    .backward = pow_log_backward,
};

/* ---------------------------------------------------------------- pow (tensor ** tensor) */
CG_BINARY_FLOAT_LOOPS(pow, powf(a, b), pow(a, b))
INT64_COMPUTE_LOOPS(pow, ipow(a, b))

/* ga = where(b == 0, 0, g * b * a^(b-1))
 * gb = g * where(a == 0 & b >= 0, 0, out * log(a))   (PyTorch's masking at a = 0) */
static cg_status pow_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
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

const cg_binary_op cg_op_pow = {
    .schema = {"pow", "PowBackward1", 1, CG_AMP_KEEP, false, true, true},
    .arity = 2, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(pow), CG_INT_TABLE(pow)},
    .backward = pow_backward,
};

/* ---------------------------------------------------------------- atan2 (a = y, b = x) */
CG_BINARY_FLOAT_LOOPS(atan2, atan2f(a, b), atan2(a, b))

/* ga = g * b / (a^2 + b^2) ; gb = -g * a / (a^2 + b^2) */
static cg_status atan2_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    cg_tensor *a = cg_node_saved(node, 0), *b = cg_node_saved(node, 1);
    cg_tensor *t[6] = {0};
    cg_status st = CG_OK;
    if (!a || !b || !(t[0] = cg_mul(a, a)) || !(t[1] = cg_mul(b, b)) || !(t[2] = cg_add(t[0], t[1])) ||
        !(t[3] = cg_div(g[0], t[2])))
        goto fail;
    if (cg_node_needs_grad(node, 0) && !(gin[0] = cg_mul(t[3], b))) goto fail;
    if (cg_node_needs_grad(node, 1) && (!(t[4] = cg_mul(t[3], a)) || !(gin[1] = cg_neg(t[4])))) goto fail;
    goto done;
fail:
    st = cg_last_error();
done:
    cg_release_all(6, t);
    cg_tensor_release(a);
    cg_tensor_release(b);
    return st;
}

const cg_binary_op cg_op_atan2 = {
    .schema = {"atan2", "Atan2Backward0", 1, CG_AMP_KEEP, false, true, false},
    .arity = 2, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(atan2)},
    .backward = atan2_backward,
};

/* ---------------------------------------------------------------- maximum, minimum
 * NaN in either operand propagates. Gradient (PyTorch): the winner gets g, a
 * tie splits it evenly (g/2 each). */
CG_BINARY_FLOAT_LOOPS(maximum, (isnan(a) || a > b) ? a : b, (isnan(a) || a > b) ? a : b)
CG_BINARY_INT_LOOPS(maximum, a > b ? a : b)
CG_BINARY_LOOP(maximum_b, uint8_t, int, uint8_t, CG_LD_BOOL, CG_ST_BOOL, a || b)
CG_BINARY_FLOAT_LOOPS(minimum, (isnan(a) || a < b) ? a : b, (isnan(a) || a < b) ? a : b)
CG_BINARY_INT_LOOPS(minimum, a < b ? a : b)
CG_BINARY_LOOP(minimum_b, uint8_t, int, uint8_t, CG_LD_BOOL, CG_ST_BOOL, a && b)

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
static cg_status maximum_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    return minmax_backward(node, g, gin, true);
}
static cg_status minimum_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    return minmax_backward(node, g, gin, false);
}

const cg_binary_op cg_op_maximum = {
    .schema = {"maximum", "MaximumBackward0", 1, CG_AMP_KEEP, false, true, false},
    .arity = 2, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(maximum), CG_INT_TABLE(maximum), [CG_DTYPE_BOOL] = maximum_b},
    .backward = maximum_backward,
};
const cg_binary_op cg_op_minimum = {
    .schema = {"minimum", "MinimumBackward0", 1, CG_AMP_KEEP, false, true, false},
    .arity = 2, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(minimum), CG_INT_TABLE(minimum), [CG_DTYPE_BOOL] = minimum_b},
    .backward = minimum_backward,
};

/* ---------------------------------------------------------------- hypot */
CG_BINARY_FLOAT_LOOPS(hypot, hypotf(a, b), hypot(a, b))

/* ga = g * a / out ; gb = g * b / out   (slots: a, b, out) */
static cg_status hypot_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
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

const cg_binary_op cg_op_hypot = {
    .schema = {"hypot", "HypotBackward0", 1, CG_AMP_KEEP, false, true, true},
    .arity = 2, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(hypot)},
    .backward = hypot_backward,
};

/* ---------------------------------------------------------------- logaddexp
 * log(exp(a) + exp(b)) = max + log1p(exp(-|a - b|)); equal infinities give themselves. */
#define LOGADDEXP_FN(NAME, T, FABS, LOG1P, EXP)                              \
    static inline T NAME(T a, T b) {                                         \
        if (isinf(a) && a == b) return a;                                    \
        T m = a < b ? b : a;                                                 \
        return m + LOG1P(EXP(-FABS(a - b)));                                 \
    }
LOGADDEXP_FN(logaddexp_f, float, fabsf, log1pf, expf)
LOGADDEXP_FN(logaddexp_d, double, fabs, log1p, exp)
CG_BINARY_FLOAT_LOOPS(logaddexp, logaddexp_f(a, b), logaddexp_d(a, b))

/* ga = g / (1 + exp(b - a)) ; gb = g / (1 + exp(a - b)) */
static cg_status logaddexp_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    cg_tensor *a = cg_node_saved(node, 0), *b = cg_node_saved(node, 1), *one = NULL;
    cg_status st = CG_OK;
    if (!a || !b || !(one = scalar_like(1.0, g[0]))) goto fail;
    for (int i = 0; i < 2; i++) {
        if (!cg_node_needs_grad(node, i)) continue;
        cg_tensor *d = i == 0 ? cg_sub(b, a) : cg_sub(a, b);
        cg_tensor *e = d ? cg_exp(d) : NULL;
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

const cg_binary_op cg_op_logaddexp = {
    .schema = {"logaddexp", "LogaddexpBackward0", 1, CG_AMP_KEEP, false, true, false},
    .arity = 2, .out_dtype = CG_SAME_DTYPE,
    .cpu = {CG_FLOAT_TABLE(logaddexp)},
    .backward = logaddexp_backward,
};

/* ---------------------------------------------------------------- entry points */
cg_tensor *cg_add(cg_tensor *a, cg_tensor *b) { return cg_binary_forward(&cg_op_add, a, b, NULL, 0); }
cg_tensor *cg_sub(cg_tensor *a, cg_tensor *b) { return cg_binary_forward(&cg_op_sub, a, b, NULL, 0); }
cg_tensor *cg_mul(cg_tensor *a, cg_tensor *b) { return cg_binary_forward(&cg_op_mul, a, b, NULL, 0); }
cg_tensor *cg_div(cg_tensor *a, cg_tensor *b) { return cg_binary_forward(&cg_op_div, a, b, NULL, 0); }

static cg_status inplace2(const cg_binary_op *op, cg_tensor *self, cg_tensor *other) {
    cg_tensor *in[2] = {self, other};
    return cg_elementwise_inplace(op, 2, in, NULL, 0);
}
cg_status cg_add_(cg_tensor *self, cg_tensor *other) { return inplace2(&cg_op_add, self, other); }
cg_status cg_sub_(cg_tensor *self, cg_tensor *other) { return inplace2(&cg_op_sub, self, other); }
cg_status cg_mul_(cg_tensor *self, cg_tensor *other) { return inplace2(&cg_op_mul, self, other); }
cg_status cg_div_(cg_tensor *self, cg_tensor *other) { return inplace2(&cg_op_div, self, other); }

cg_tensor *cg_floor_divide(cg_tensor *a, cg_tensor *b) { return cg_binary_forward(&cg_op_floor_divide, a, b, NULL, 0); }
cg_tensor *cg_remainder(cg_tensor *a, cg_tensor *b) { return cg_binary_forward(&cg_op_remainder, a, b, NULL, 0); }
cg_tensor *cg_fmod(cg_tensor *a, cg_tensor *b) { return cg_binary_forward(&cg_op_fmod, a, b, NULL, 0); }
cg_tensor *cg_pow(cg_tensor *a, cg_tensor *b) { return cg_binary_forward(&cg_op_pow, a, b, NULL, 0); }
cg_tensor *cg_atan2(cg_tensor *a, cg_tensor *b) { return cg_binary_forward(&cg_op_atan2, a, b, NULL, 0); }
cg_tensor *cg_maximum(cg_tensor *a, cg_tensor *b) { return cg_binary_forward(&cg_op_maximum, a, b, NULL, 0); }
cg_tensor *cg_minimum(cg_tensor *a, cg_tensor *b) { return cg_binary_forward(&cg_op_minimum, a, b, NULL, 0); }
cg_tensor *cg_hypot(cg_tensor *a, cg_tensor *b) { return cg_binary_forward(&cg_op_hypot, a, b, NULL, 0); }
cg_tensor *cg_logaddexp(cg_tensor *a, cg_tensor *b) { return cg_binary_forward(&cg_op_logaddexp, a, b, NULL, 0); }
cg_status cg_pow_(cg_tensor *self, cg_tensor *other) { return inplace2(&cg_op_pow, self, other); }
