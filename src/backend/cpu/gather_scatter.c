/* gather_scatter.c — the CPU's gather / scatter entries (Note [Kernel
 * entries]): the per-dtype combine loops, the row-major index walk (every
 * index bounds-checked before anything is written, then one thread in order:
 * Note [Deterministic scatter] in src/ops/gather_scatter.c), gather and the
 * scatter family (copy, sum, prod, mean, amax, amin). */
#include "cpu_kernels.h"
#include "loops.h"

#include <stdlib.h>
#include <string.h>

typedef enum sc_mode { SC_COPY = 0, SC_SUM, SC_PROD, SC_MEAN, SC_AMAX, SC_AMIN } sc_mode;

/* ---------------------------------------------------------------- per-dtype combine loops */

/* dst <- dst (op) src, one element each */
typedef void (*combine_fn)(char *dst, const char *src);
/* dst <- dst / count (floor division for integers), count >= 1 */
typedef void (*divide_fn)(char *dst, int64_t count);

#define COMBINE_FNS(sfx, T, CT, LD, ST)                                                           \
    static void c_sum_##sfx(char *d, const char *s) { *(T *)d = ST(LD(*(T *)d) + LD(*(const T *)s)); } \
    static void c_prod_##sfx(char *d, const char *s) { *(T *)d = ST(LD(*(T *)d) * LD(*(const T *)s)); } \
    static void c_max_##sfx(char *d, const char *s) {                                             \
        CT a = LD(*(T *)d), b = LD(*(const T *)s);                                                \
        if (b != b || b > a) *(T *)d = *(const T *)s; /* NaN propagates */                      \
    }                                                                                             \
    static void c_min_##sfx(char *d, const char *s) {                                             \
        CT a = LD(*(T *)d), b = LD(*(const T *)s);                                                \
        if (b != b || b < a) *(T *)d = *(const T *)s;                                             \
    }
#define FDIV_FN(sfx, T, CT, LD, ST) \
    static void c_div_##sfx(char *d, int64_t c) { *(T *)d = ST(LD(*(T *)d) / (CT)c); }
#define IDIV_FN(sfx, T)                                      \
    static void c_div_##sfx(char *d, int64_t c) {            \
        int64_t a = (int64_t) * (T *)d, q = a / c;           \
        if (a % c != 0 && a < 0) q--; /* floor, c > 0 */    \
        *(T *)d = (T)q;                                      \
    }

COMBINE_FNS(b, uint8_t, int, CG_LD_BOOL, CG_ST_BOOL) /* sum = or, prod = and */
COMBINE_FNS(u8, uint8_t, uint8_t, CG_ID, CG_ID)
COMBINE_FNS(i8, int8_t, int8_t, CG_ID, CG_ID)
COMBINE_FNS(i16, int16_t, int16_t, CG_ID, CG_ID)
COMBINE_FNS(i32, int32_t, int32_t, CG_ID, CG_ID)
COMBINE_FNS(i64, int64_t, int64_t, CG_ID, CG_ID)
COMBINE_FNS(f16, cg_f16, float, CG_LD_F16, CG_ST_F16)
COMBINE_FNS(bf16, cg_bf16, float, CG_LD_BF16, CG_ST_BF16)
COMBINE_FNS(f32, float, float, CG_ID, CG_ID)
COMBINE_FNS(f64, double, double, CG_ID, CG_ID)
IDIV_FN(u8, uint8_t)
IDIV_FN(i8, int8_t)
IDIV_FN(i16, int16_t)
IDIV_FN(i32, int32_t)
IDIV_FN(i64, int64_t)
FDIV_FN(f16, cg_f16, float, CG_LD_F16, CG_ST_F16)
FDIV_FN(bf16, cg_bf16, float, CG_LD_BF16, CG_ST_BF16)
FDIV_FN(f32, float, float, CG_ID, CG_ID)
FDIV_FN(f64, double, double, CG_ID, CG_ID)

#define COMBINE_ROW(op) {c_##op##_b, c_##op##_u8, c_##op##_i8, c_##op##_i16, c_##op##_i32, c_##op##_i64, \
                         c_##op##_f16, c_##op##_bf16, c_##op##_f32, c_##op##_f64}
/* k_combine[mode][dtype]; SC_COPY and SC_MEAN rows: copy is memcpy, mean sums */
static const combine_fn k_combine[6][CG_DTYPE_COUNT] = {
    {0}, COMBINE_ROW(sum), COMBINE_ROW(prod), COMBINE_ROW(sum), COMBINE_ROW(max), COMBINE_ROW(min),
};
static const divide_fn k_divide[CG_DTYPE_COUNT] = {
    NULL, c_div_u8, c_div_i8, c_div_i16, c_div_i32, c_div_i64, c_div_f16, c_div_bf16, c_div_f32, c_div_f64,
};

/* ---------------------------------------------------------------- the index walk */

/* Geometry of a gather/scatter: the walk runs over the index's shape. 0-d
 * tensors count as shape (1,) (PyTorch's ensure_nonempty_dim). Strides are
 * in elements. */
typedef struct sg_geom {
    int nd;
    int64_t dim;
    int64_t shape[CG_MAX_DIMS]; /* the index's shape */
    int64_t ist[CG_MAX_DIMS];   /* index strides */
    int64_t tst[CG_MAX_DIMS];   /* target strides: the tensor indexed along dim */
    int64_t sst[CG_MAX_DIMS];   /* strides of the other operand (walked like the index) */
    int64_t tsize;              /* target size along dim */
} sg_geom;

static int nonempty_dim(const cg_tensor *t) { return t->ndim ? t->ndim : 1; }
static int64_t nonempty_size(const cg_tensor *t, int d) { return t->ndim ? t->shape[d] : 1; }
static int64_t nonempty_stride(const cg_tensor *t, int d) { return t->ndim ? t->strides[d] : 1; }

/* visit(ctx, idx, target offset without the dim term, other offset) */
typedef void (*sg_visit)(void *ctx, int64_t idx, int64_t toff, int64_t soff);

/* Walk the index in row-major order; every value is checked first (visit
 * NULL), so a failing call writes nothing. index: int64 of shape g->shape. */
static cg_status sg_walk(const char *op, const sg_geom *g, const int64_t *index, sg_visit visit, void *ctx) {
    int64_t n = cg_shape_numel(g->nd, g->shape);
    int64_t c[CG_MAX_DIMS] = {0}, io = 0, to = 0, so = 0;
    for (int64_t k = 0; k < n; k++) {
        int64_t v = index[io];
        if (!visit && (v < 0 || v >= g->tsize))
            return cg_set_error(CG_ERR_INDEX, "[%s] index %lld is out of bounds for dimension %lld with size %lld", op,
                                (long long)v, (long long)g->dim, (long long)g->tsize);
        if (visit) visit(ctx, v, to, so);
        for (int d = g->nd - 1; d >= 0; d--) {
            int64_t tstep = d == g->dim ? 0 : g->tst[d];
            if (++c[d] < g->shape[d]) {
                io += g->ist[d];
                so += g->sst[d];
                to += tstep;
                break;
            }
            io -= g->ist[d] * (g->shape[d] - 1);
            so -= g->sst[d] * (g->shape[d] - 1);
            to -= tstep * (g->shape[d] - 1);
            c[d] = 0;
        }
    }
    return CG_OK;
}

static void sg_geom_init(sg_geom *g, int64_t dim, const cg_tensor *index, const cg_tensor *target, const cg_tensor *other) {
    g->nd = nonempty_dim(index);
    g->dim = dim;
    g->tsize = nonempty_size(target, (int)dim);
    for (int d = 0; d < g->nd; d++) {
        g->shape[d] = nonempty_size(index, d);
        g->ist[d] = nonempty_stride(index, d);
        g->tst[d] = nonempty_stride(target, d);
        g->sst[d] = nonempty_stride(other, d);
    }
}

typedef struct gather_ctx {
    const char *x;  /* target: x, indexed along dim */
    char *out;      /* contiguous, index-shaped */
    int64_t xdst;   /* x's stride along dim (elements) */
    size_t isz;
} gather_ctx;

static void gather_visit(void *p, int64_t idx, int64_t toff, int64_t soff) {
    gather_ctx *c = p;
    cg_copy_item(c->out + (size_t)soff * c->isz, c->x + (size_t)(toff + idx * c->xdst) * c->isz, c->isz);
}

cg_status cg_cpu_gather(cg_tensor *out, const cg_tensor *x, const cg_tensor *index, int64_t dim) {
    if (!cg_tensor_numel(out)) return CG_OK;
    sg_geom g;
    sg_geom_init(&g, dim, index, x, out);
    gather_ctx c = {cg_tensor_ptr(x), cg_tensor_ptr(out), g.tst[dim], cg_dtype_size(x->dtype)};
    const int64_t *ip = (const int64_t *)cg_tensor_ptr(index);
    if (sg_walk("gather", &g, ip, NULL, NULL)) return cg_last_error();
    sg_walk("gather", &g, ip, gather_visit, &c);
    return CG_OK;
}

typedef struct scatter_ctx {
    char *out;          /* contiguous copy of x: the target */
    const char *src;
    int64_t odst;       /* out's stride along dim (elements) */
    size_t isz;
    combine_fn fn;      /* NULL: overwrite */
    uint8_t *touched;   /* include_self = false: per out element, first write copies */
    int64_t *count;     /* mean: per out element */
} scatter_ctx;

static void scatter_visit(void *p, int64_t idx, int64_t toff, int64_t soff) {
    scatter_ctx *c = p;
    int64_t flat = toff + idx * c->odst;
    char *d = c->out + (size_t)flat * c->isz;
    const char *s = c->src + (size_t)soff * c->isz;
    if (c->count) c->count[flat]++;
    if (c->touched && !c->touched[flat]) {
        c->touched[flat] = 1;
        cg_copy_item(d, s, c->isz);
    } else if (c->fn) {
        c->fn(d, s);
    } else {
        cg_copy_item(d, s, c->isz);
    }
}

cg_status cg_cpu_scatter(const char *op, cg_tensor *out, const cg_tensor *index, const cg_tensor *src, int64_t dim,
                         int mode, bool include_self) {
    if (!cg_tensor_numel(index)) return CG_OK;
    const int64_t d = dim;
    sg_geom g;
    sg_geom_init(&g, d, index, out, src);
    const int64_t *ip = (const int64_t *)cg_tensor_ptr(index);
    if (sg_walk(op, &g, ip, NULL, NULL)) return cg_last_error();
    int64_t n = cg_tensor_numel(out);
    scatter_ctx c = {cg_tensor_ptr(out), cg_tensor_ptr(src), g.tst[d], cg_dtype_size(out->dtype),
                     k_combine[mode][out->dtype], NULL, NULL};
    if (mode != SC_COPY && !include_self && !(c.touched = cg_calloc_n(op, n, 1)))
        return cg_set_error(CG_ERR_OOM, "[%s] out of memory", op);
    if (mode == SC_MEAN && !(c.count = cg_malloc_n(op, n, sizeof(int64_t)))) {
        free(c.touched);
        return cg_set_error(CG_ERR_OOM, "[%s] out of memory", op);
    }
    for (int64_t i = 0; c.count && i < n; i++) c.count[i] = include_self ? 1 : 0;
    sg_walk(op, &g, ip, scatter_visit, &c);
    if (c.count) {
        divide_fn div = k_divide[out->dtype];
        for (int64_t i = 0; i < n; i++)
            if (c.count[i] > 1) div(c.out + (size_t)i * c.isz, c.count[i]);
    }
    free(c.touched);
    free(c.count);
    return CG_OK;
}
