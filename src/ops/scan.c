/* scan.c — scans along one dim: cumsum (and reverse_cumsum, cumsum's
 * backward, whose own backward is cumsum), cumprod (backward exact with zeros
 * in the input) and cummax (values + int64 indices); descriptor, line loops
 * and backward formula of each, side by side. Integer and bool inputs of
 * cumsum / cumprod accumulate in int64 and return int64 (PyTorch's result
 * dtype); floating inputs accumulate in double. Lines run in parallel and are
 * each computed sequentially, so results do not depend on the thread count. */
#include "scan_internal.h"
#include "../dispatch/dispatch_internal.h"
#include "../backend/cpu/loops.h"

static const cg_op_schema k_cumsum = {"cumsum", "CumsumBackward0", 1, CG_AMP_KEEP, false, false, false};
static const cg_op_schema k_rcumsum = {"reverse_cumsum", "ReverseCumsumBackward0", 1, CG_AMP_KEEP, false, false, false};
static const cg_op_schema k_cumprod = {"cumprod", "CumprodBackward0", 1, CG_AMP_KEEP, false, true, true};
static const cg_op_schema k_cummax = {"cummax", "CummaxBackward0", 1, CG_AMP_KEEP, false, false, false};

static cg_status guard(const cg_op_schema *s, cg_tensor *x) {
    cg_tensor *o;
    bool owned;
    cg_status st = cg_schema_guard(s, 1, &x, &o, &owned); /* AMP_KEEP: never casts */
    if (owned) cg_tensor_release(o);
    return st;
}

/* ---------------------------------------------------------------- line loops */

/* One line: in (n elements, byte stride is) -> out (byte stride os), scanned
 * from the end when rev. */
typedef void (*scan_line_fn)(const char *in, int64_t is, char *out, int64_t os, int64_t n, bool rev);

#define LDD_F16(x) ((double)cg_f16_to_f32(x))
#define LDD_BF16(x) ((double)cg_bf16_to_f32(x))
#define STD_F16(v) cg_f32_to_f16((float)(v))
#define STD_BF16(v) cg_f32_to_bf16((float)(v))
#define LD_U64(x) ((uint64_t)(int64_t)(x))
#define LD_BOOL_U64(x) ((uint64_t)((x) != 0))
#define ST_I64(v) ((int64_t)(v))
#define ADD(a, x) ((a) + (x))
#define MUL(a, x) ((a) * (x))

#define SCAN_LINE(name, T, ACC, OT, LOAD, STORE, INIT, STEP)                                   \
    static void name(const char *in, int64_t is, char *out, int64_t os, int64_t n, bool rev) { \
        ACC acc = INIT;                                                                        \
        for (int64_t k = 0; k < n; k++) {                                                      \
            int64_t j = rev ? n - 1 - k : k;                                                   \
            ACC x = (ACC)LOAD(*(const T *)(in + j * is));                                      \
            acc = STEP(acc, x);                                                                \
            *(OT *)(out + j * os) = STORE(acc);                                                \
        }                                                                                      \
    }
/* integers accumulate in uint64 (wrapping, like int64 in PyTorch, without UB) */
#define SCAN_LINES(op, INIT, STEP)                                                              \
    SCAN_LINE(op##_f32, float, double, float, CG_ID, CG_ID, INIT, STEP)                         \
    SCAN_LINE(op##_f64, double, double, double, CG_ID, CG_ID, INIT, STEP)                       \
    SCAN_LINE(op##_f16, cg_f16, double, cg_f16, LDD_F16, STD_F16, INIT, STEP)                   \
    SCAN_LINE(op##_bf16, cg_bf16, double, cg_bf16, LDD_BF16, STD_BF16, INIT, STEP)              \
    SCAN_LINE(op##_b, uint8_t, uint64_t, int64_t, LD_BOOL_U64, ST_I64, INIT, STEP)              \
    SCAN_LINE(op##_u8, uint8_t, uint64_t, int64_t, LD_U64, ST_I64, INIT, STEP)                  \
    SCAN_LINE(op##_i8, int8_t, uint64_t, int64_t, LD_U64, ST_I64, INIT, STEP)                   \
    SCAN_LINE(op##_i16, int16_t, uint64_t, int64_t, LD_U64, ST_I64, INIT, STEP)                 \
    SCAN_LINE(op##_i32, int32_t, uint64_t, int64_t, LD_U64, ST_I64, INIT, STEP)                 \
    SCAN_LINE(op##_i64, int64_t, uint64_t, int64_t, LD_U64, ST_I64, INIT, STEP)                 \
    SCAN_LINE(op##_u16, uint16_t, uint64_t, int64_t, CG_ID, ST_I64, INIT, STEP)                 \
    SCAN_LINE(op##_u32, uint32_t, uint64_t, int64_t, CG_ID, ST_I64, INIT, STEP)                 \
    SCAN_LINE(op##_u64, uint64_t, uint64_t, int64_t, CG_ID, ST_I64, INIT, STEP)
SCAN_LINES(csum, 0, ADD)
SCAN_LINES(cprod, 1, MUL)

static const scan_line_fn k_csum[CG_DTYPE_COUNT] = {CG_ALL_TABLE(csum), CG_UINT_TABLE(csum)};
static const scan_line_fn k_cprod[CG_DTYPE_COUNT] = {CG_ALL_TABLE(cprod), CG_UINT_TABLE(cprod)};

typedef struct scan_job {
    cg_lines L; /* args: out, x */
    scan_line_fn fn;
    bool rev;
} scan_job;

static void scan_range(int64_t b, int64_t e, void *p) {
    const scan_job *j = p;
    char *ptr[2];
    for (int64_t i = b; i < e; i++) {
        cg_lines_ptrs(&j->L, i, ptr);
        j->fn(ptr[1], j->L.step[1], ptr[0], j->L.step[0], j->L.len[1], j->rev);
    }
}

/* The scan driver: validate, allocate (int64 for integer inputs), run the
 * lines, wire the node (iattr[0] = dim; saves per the schema). */
static cg_tensor *scan_apply(const cg_op_schema *s, const scan_line_fn *table, cg_tensor *x, int64_t dim, bool rev,
                             cg_backward_fn backward) {
    CG_CHECK(x, CG_ERR_VALUE, "[%s] argument is NULL", s->name);
    int64_t d;
    if (cg_wrap_dim(s->name, dim, x->ndim, &d) || guard(s, x)) return NULL;
    scan_line_fn fn = table[x->dtype];
    if (!fn) {
        cg_dtype_unsupported(s->name, x->dtype);
        return NULL;
    }
    cg_dtype odt = cg_dtype_is_floating(x->dtype) ? x->dtype : CG_DTYPE_I64;
    cg_tensor *out = cg_new_output(s->name, x->ndim, x->shape, odt, x->device);
    if (!out) return NULL;
    if (!cg_is_meta(x) && cg_tensor_numel(x)) {
        scan_job job = {.fn = fn, .rev = rev};
        cg_tensor *args[2] = {out, x};
        cg_lines_init(&job.L, 2, args, d);
        cg_parallel_for(job.L.count, cg_lines_grain(job.L.len[1]), scan_range, &job);
    }
    bool failed;
    int nsaved = (s->saves_inputs ? 1 : 0) + (s->saves_output ? 1 : 0);
    cg_node *node = cg_wire_unary_output(s->node_name, backward, s, 1, &x, out, nsaved, &failed);
    if (!failed && node) {
        node->iattr[0] = d;
        int slot = 0;
        if (s->saves_inputs) failed = cg_node_save(node, slot++, x, false, 0) != CG_OK;
        if (!failed && s->saves_output) failed = cg_node_save(node, slot++, out, true, 0) != CG_OK;
    }
    if (failed) {
        cg_tensor_release(out);
        return NULL;
    }
    return out;
}

/* ---------------------------------------------------------------- cumsum / reverse_cumsum */

static cg_tensor *reverse_cumsum(cg_tensor *x, int64_t dim);

/* d cumsum = reverse_cumsum(g) */
static cg_status cumsum_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    return (gin[0] = reverse_cumsum(g[0], node->iattr[0])) ? CG_OK : cg_last_error();
}
/* d reverse_cumsum = cumsum(g) */
static cg_status rcumsum_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    return (gin[0] = cg_cumsum(g[0], node->iattr[0])) ? CG_OK : cg_last_error();
}

CG_PROF_FN(cg_tensor *, cg_cumsum, "cumsum", (cg_tensor *x, int64_t dim), (x, dim), x) { return scan_apply(&k_cumsum,
           k_csum, x, dim, false, cumsum_backward); }
static cg_tensor *reverse_cumsum(cg_tensor *x, int64_t dim) {
    return scan_apply(&k_rcumsum, k_csum, x, dim, true, rcumsum_backward);
}

/* ---------------------------------------------------------------- cumprod */

/* Note [Cumprod backward]: gx_k = sum_{j >= k} g_j prod_{i <= j, i != k} x_i.
 * Without zeros in x this is reverse_cumsum(g * y) / x (y = cumprod(x)).
 * With zeros, x is moved to the last dim and expanded to (..., n, n) with
 * X2[.., k, i] = (i == k ? 1 : x_i); then cumprod(X2)[.., k, j] is the
 * product omitting x_k and gx_k = sum_j [j >= k] g_j cumprod(X2)[.., k, j].
 * O(n^2) like PyTorch's double-differentiable path, exact for any number of
 * zeros, and written with cg ops (twice differentiable). */
static cg_tensor *cumprod_grad_with_zeros(cg_tensor *x, cg_tensor *g, int64_t d) {
    CG_CHECK(x->ndim < CG_MAX_DIMS, CG_ERR_NOT_IMPLEMENTED,
             "[cumprod] backward with zeros in the input needs one extra dim; rank %d is the maximum", x->ndim);
    int64_t last = x->ndim - 1, n = x->shape[d], rs[2] = {n, 1}, cs[2] = {1, n}, ld = -1;
    cg_tensor *t[16] = {0};
    int k = 0;
    cg_tensor *res = NULL;
#define STEP_(expr) if (!(t[k++] = (expr))) goto done
    STEP_(cg_transpose(x, d, last));                                   /* 0: xt */
    STEP_(cg_transpose(g, d, last));                                   /* 1: gt */
    STEP_(cg_arange(0, (double)n, 1, CG_DTYPE_I64, x->device));        /* 2 */
    STEP_(cg_reshape(t[2], 2, rs));                                    /* 3: row k */
    STEP_(cg_reshape(t[2], 2, cs));                                    /* 4: col j */
    STEP_(cg_eq(t[3], t[4]));                                          /* 5: i == k */
    STEP_(cg_ge(t[4], t[3]));                                          /* 6: j >= k */
    STEP_(cg_scalar_on(1.0, x->dtype, x->device));                     /* 7 */
    STEP_(cg_scalar_on(0.0, x->dtype, x->device));                     /* 8 */
    STEP_(cg_unsqueeze(t[0], -2));                                     /* 9: (..., 1, n) */
    STEP_(cg_where(t[5], t[7], t[9]));                                 /* 10: X2 */
    STEP_(cg_cumprod(t[10], -1));                                      /* 11 */
    STEP_(cg_unsqueeze(t[1], -2));                                     /* 12 */
    STEP_(cg_mul(t[11], t[12]));                                       /* 13 */
    STEP_(cg_where(t[6], t[13], t[8]));                                /* 14 */
    STEP_(cg_sum(t[14], 1, &ld, false));                               /* 15: (..., n) over k */
    res = cg_transpose(t[15], d, last);
#undef STEP_
done:
    cg_release_all(k, t);
    return res;
}

static cg_status cumprod_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    int64_t d = node->iattr[0];
    const cg_tensor_meta *m = &node->input_meta[0];
    if (m->ndim == 0 || m->shape[d] <= 1 || cg_shape_numel(m->ndim, m->shape) == 0) {
        cg_tensor_retain(g[0]);
        gin[0] = g[0];
        return CG_OK;
    }
    cg_tensor *x = cg_node_saved(node, 0), *y = cg_node_saved(node, 1);
    cg_tensor *zero = NULL, *isz = NULL, *anyz = NULL, *w = NULL, *r = NULL;
    double has_zero = 0;
    if (!x || !y) goto done;
    if (!(zero = cg_scalar_on(0.0, x->dtype, x->device)) || !(isz = cg_eq(x, zero)) ||
        !(anyz = cg_any(isz, 0, NULL, false)) || cg_tensor_item(anyz, &has_zero))
        goto done;
    if (has_zero != 0) {
        gin[0] = cumprod_grad_with_zeros(x, g[0], d);
    } else if ((w = cg_mul(g[0], y)) && (r = reverse_cumsum(w, d))) {
        gin[0] = cg_div(r, x);
    }
done:
    cg_tensor_release(x);
    cg_tensor_release(y);
    cg_tensor_release(zero);
    cg_tensor_release(isz);
    cg_tensor_release(anyz);
    cg_tensor_release(w);
    cg_tensor_release(r);
    return gin[0] ? CG_OK : cg_last_error();
}

CG_PROF_FN(cg_tensor *, cg_cumprod, "cumprod", (cg_tensor *x, int64_t dim), (x, dim), x) { return scan_apply(&k_cumprod,
           k_cprod, x, dim, false, cumprod_backward); }

/* ---------------------------------------------------------------- cummax */

/* One line: in (n, byte stride is) -> values (stride os), indices (int64,
 * stride xs). Ties take the later index and NaN propagates, as PyTorch. */
typedef void (*cummax_line_fn)(const char *in, int64_t is, char *out, int64_t os, char *idx, int64_t xs, int64_t n);

#define CUMMAX_LINE(name, T, CT, LOAD)                                                                 \
    static void name(const char *in, int64_t is, char *out, int64_t os, char *idx, int64_t xs, int64_t n) { \
        T best = *(const T *)in;                                                                       \
        CT bv = LOAD(best);                                                                            \
        int64_t bi = 0;                                                                                \
        for (int64_t k = 0; k < n; k++) {                                                              \
            T raw = *(const T *)(in + k * is);                                                         \
            CT v = LOAD(raw);                                                                          \
            if (v != v || (bv == bv && v >= bv)) {                                                     \
                best = raw;                                                                            \
                bv = v;                                                                                \
                bi = k;                                                                                \
            }                                                                                          \
            *(T *)(out + k * os) = best;                                                               \
            *(int64_t *)(idx + k * xs) = bi;                                                           \
        }                                                                                              \
    }
CUMMAX_LINE(cmax_b, uint8_t, int, CG_LD_BOOL)
CUMMAX_LINE(cmax_u8, uint8_t, uint8_t, CG_ID)
CUMMAX_LINE(cmax_i8, int8_t, int8_t, CG_ID)
CUMMAX_LINE(cmax_i16, int16_t, int16_t, CG_ID)
CUMMAX_LINE(cmax_i32, int32_t, int32_t, CG_ID)
CUMMAX_LINE(cmax_i64, int64_t, int64_t, CG_ID)
CUMMAX_LINE(cmax_f16, cg_f16, float, CG_LD_F16)
CUMMAX_LINE(cmax_bf16, cg_bf16, float, CG_LD_BF16)
CUMMAX_LINE(cmax_f32, float, float, CG_ID)
CUMMAX_LINE(cmax_f64, double, double, CG_ID)
static const cummax_line_fn k_cmax[CG_DTYPE_COUNT] = {CG_ALL_TABLE(cmax)};

typedef struct cummax_job {
    cg_lines L; /* args: values, indices, x */
    cummax_line_fn fn;
} cummax_job;

static void cummax_range(int64_t b, int64_t e, void *p) {
    const cummax_job *j = p;
    char *ptr[3];
    for (int64_t i = b; i < e; i++) {
        cg_lines_ptrs(&j->L, i, ptr);
        j->fn(ptr[2], j->L.step[2], ptr[0], j->L.step[0], ptr[1], j->L.step[1], j->L.len[2]);
    }
}

/* gx = scatter_add(zeros(x), dim, indices, g) */
static cg_status cummax_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    const cg_tensor_meta *m = &node->input_meta[0];
    cg_tensor *idx = cg_node_saved(node, 0);
    if (!idx) return cg_last_error();
    cg_tensor *z = cg_zeros(m->ndim, m->shape, g[0]->dtype, g[0]->device);
    gin[0] = z ? cg_scatter_add(z, node->iattr[0], idx, g[0]) : NULL;
    cg_tensor_release(z);
    cg_tensor_release(idx);
    return gin[0] ? CG_OK : cg_last_error();
}

CG_PROF_FN(cg_status, cg_cummax, "cummax", (cg_tensor *x, int64_t dim, cg_tensor **values, cg_tensor **indices), (x,
           dim, values, indices), x) {
    CG_CHECK_S(values && indices, CG_ERR_VALUE, "[cummax] output pointers are NULL");
    *values = *indices = NULL;
    CG_CHECK_S(x, CG_ERR_VALUE, "[cummax] argument is NULL");
    int64_t d;
    if (cg_wrap_dim("cummax", dim, x->ndim, &d) || guard(&k_cummax, x)) return cg_last_error();
    cg_tensor *v = cg_new_output("cummax", x->ndim, x->shape, x->dtype, x->device);
    cg_tensor *ix = v ? cg_new_output("cummax", x->ndim, x->shape, CG_DTYPE_I64, x->device) : NULL;
    if (!ix) {
        cg_tensor_release(v);
        return cg_last_error();
    }
    if (!cg_is_meta(x) && cg_tensor_numel(x)) {
        cummax_job job = {.fn = k_cmax[x->dtype]};
        cg_tensor *args[3] = {v, ix, x};
        cg_lines_init(&job.L, 3, args, d);
        cg_parallel_for(job.L.count, cg_lines_grain(job.L.len[2]), cummax_range, &job);
    }
    bool failed;
    cg_node *node = cg_wire_unary_output(k_cummax.node_name, cummax_backward, &k_cummax, 1, &x, v, 1, &failed);
    if (!failed && node) {
        node->iattr[0] = d;
        failed = cg_node_save(node, 0, ix, false, 0) != CG_OK;
    }
    if (failed) {
        cg_tensor_release(v);
        cg_tensor_release(ix);
        return cg_last_error();
    }
    *values = v;
    *indices = ix;
    return CG_OK;
}
