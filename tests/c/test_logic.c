/* test_logic.c — logical ops (and/or/xor/not), bitwise ops (and/or/xor/not,
 * shifts) and the predicates isinf / isfinite: the elementwise checker where
 * the op takes floats, a small integer-only checker over the same layouts for
 * the bitwise ops, hand-computed shift edge cases and dtype errors. */
#include "opcheck.h"

#include <stdint.h>
#include <string.h>

#define INTS ((1u << CG_DTYPE_U8) | (1u << CG_DTYPE_I8) | (1u << CG_DTYPE_I16) | (1u << CG_DTYPE_I32) | (1u << CG_DTYPE_I64))
#define ALL_NONFLOAT (INTS | (1u << CG_DTYPE_BOOL))

static cg_tensor *f_land(cg_tensor *const *x, void *c) { (void)c; return cg_logical_and(x[0], x[1]); }
static cg_tensor *f_lor(cg_tensor *const *x, void *c) { (void)c; return cg_logical_or(x[0], x[1]); }
static cg_tensor *f_lxor(cg_tensor *const *x, void *c) { (void)c; return cg_logical_xor(x[0], x[1]); }
static cg_tensor *f_lnot(cg_tensor *const *x, void *c) { (void)c; return cg_logical_not(x[0]); }
static cg_tensor *f_isinf(cg_tensor *const *x, void *c) { (void)c; return cg_isinf(x[0]); }
static cg_tensor *f_isfinite(cg_tensor *const *x, void *c) { (void)c; return cg_isfinite(x[0]); }
static double r_land(const double *x, void *c) { (void)c; return x[0] != 0 && x[1] != 0; }
static double r_lor(const double *x, void *c) { (void)c; return x[0] != 0 || x[1] != 0; }
static double r_lxor(const double *x, void *c) { (void)c; return (x[0] != 0) != (x[1] != 0); }
static double r_lnot(const double *x, void *c) { (void)c; return x[0] == 0; }
static double r_isinf(const double *x, void *c) { (void)c; return isinf(x[0]); }
static double r_isfinite(const double *x, void *c) { (void)c; return isfinite(x[0]); }

TEST(logic_logical_ops) {
    /* integers in [0, 2] give zeros; floats are nonzero */
    tt_check_elementwise(&(tt_ew_case){.name = "logical_and", .arity = 2, .fn = f_land, .ref = r_land, .int_dtypes = ALL_NONFLOAT, .lo = {0, 0}, .hi = {2, 2}});
    tt_check_elementwise(&(tt_ew_case){.name = "logical_or", .arity = 2, .fn = f_lor, .ref = r_lor, .int_dtypes = ALL_NONFLOAT, .lo = {0, 0}, .hi = {2, 2}});
    tt_check_elementwise(&(tt_ew_case){.name = "logical_xor", .arity = 2, .fn = f_lxor, .ref = r_lxor, .int_dtypes = ALL_NONFLOAT, .lo = {0, 0}, .hi = {2, 2}});
    tt_check_elementwise(&(tt_ew_case){.name = "logical_not", .arity = 1, .fn = f_lnot, .ref = r_lnot, .int_dtypes = ALL_NONFLOAT, .lo = {0}, .hi = {2}});
}

TEST(logic_predicates) {
    tt_check_elementwise(&(tt_ew_case){.name = "isinf", .arity = 1, .fn = f_isinf, .ref = r_isinf, .int_dtypes = ALL_NONFLOAT});
    tt_check_elementwise(&(tt_ew_case){.name = "isfinite", .arity = 1, .fn = f_isfinite, .ref = r_isfinite, .int_dtypes = ALL_NONFLOAT, .lo = {0}, .hi = {2}});
}

/* special values in every floating dtype: zeros (both signs), NaN (truthy), infinities */
TEST(logic_special_values) {
    const cg_dtype fdt[] = {CG_DTYPE_F64, CG_DTYPE_F32, CG_DTYPE_F16, CG_DTYPE_BF16};
    int64_t s[1] = {6};
    const double v[] = {0.0, -0.0, NAN, INFINITY, -INFINITY, 2.5};
    const double w_not[] = {1, 1, 0, 0, 0, 0}, w_inf[] = {0, 0, 0, 1, 1, 0}, w_fin[] = {1, 1, 0, 0, 0, 1};
    for (int d = 0; d < 4; d++) {
        cg_tensor *x = tt_tensor(fdt[d], 1, s, v), *one = cg_scalar(1, fdt[d]);
        cg_tensor *n = cg_logical_not(x), *i = cg_isinf(x), *f = cg_isfinite(x), *a = cg_logical_and(x, one);
        CHECK(n && i && f && a);
        if (n && i && f && a) {
            CHECK(cg_tensor_dtype(n) == CG_DTYPE_BOOL && cg_tensor_dtype(i) == CG_DTYPE_BOOL);
            for (int k = 0; k < 6; k++) {
                CHECK_MSG(tt_get(n, k) == w_not[k], "logical_not %s element %d", cg_dtype_name(fdt[d]), k);
                CHECK_MSG(tt_get(i, k) == w_inf[k], "isinf %s element %d", cg_dtype_name(fdt[d]), k);
                CHECK_MSG(tt_get(f, k) == w_fin[k], "isfinite %s element %d", cg_dtype_name(fdt[d]), k);
                CHECK_MSG(tt_get(a, k) == 1 - w_not[k], "logical_and %s element %d", cg_dtype_name(fdt[d]), k);
            }
        }
        cg_tensor *all[] = {x, one, n, i, f, a};
        for (int k = 0; k < 6; k++) cg_tensor_release(all[k]);
    }
}

/* ---------------------------------------------------------------- integer-only ops */

/* wrap an int64 value to dtype dt the way a fixed-width store does */
static int64_t wrap(int64_t v, cg_dtype dt) {
    switch (dt) {
    case CG_DTYPE_BOOL: return v != 0;
    case CG_DTYPE_U8: return (uint8_t)v;
    case CG_DTYPE_I8: return (int8_t)v;
    case CG_DTYPE_I16: return (int16_t)v;
    case CG_DTYPE_I32: return (int32_t)v;
    default: return v;
    }
}

typedef cg_tensor *(*bin_fn)(cg_tensor *, cg_tensor *);
typedef int64_t (*bin_ref)(int64_t, int64_t, cg_dtype);

static int64_t r_band(int64_t a, int64_t b, cg_dtype dt) { (void)dt; return a & b; }
static int64_t r_bor(int64_t a, int64_t b, cg_dtype dt) { (void)dt; return a | b; }
static int64_t r_bxor(int64_t a, int64_t b, cg_dtype dt) { (void)dt; return a ^ b; }
/* amounts in [0, width): plain shifts (the edges are checked by hand below) */
static int64_t r_shl(int64_t a, int64_t b, cg_dtype dt) { (void)dt; return (int64_t)((uint64_t)a << b); }
static int64_t r_shr(int64_t a, int64_t b, cg_dtype dt) { (void)dt; return a >> b; }

static cg_tensor *int_tensor(cg_dtype dt, int nd, const int64_t *shape, int64_t lo, int64_t hi, unsigned seed, bool nc) {
    int64_t n = 1;
    for (int i = 0; i < nd; i++) n *= shape[i];
    double v[64];
    uint64_t st = seed * 2654435761u + 1;
    for (int64_t k = 0; k < n; k++) {
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        v[k] = (double)(lo + (int64_t)((st >> 33) % (uint64_t)(hi - lo + 1)));
    }
    cg_tensor *t = tt_tensor(dt, nd, shape, v);
    if (nc) {
        cg_tensor *u = tt_noncontig(t);
        cg_tensor_release(t);
        t = u;
    }
    return t;
}

/* run op over contiguous, broadcast, 0-d, empty and non-contiguous layouts in
 * the given dtypes against ref (a in [alo, ahi], b in [blo, bhi]) */
static void check_int_binary(const char *name, bin_fn fn, bin_ref ref, unsigned dtypes, int64_t alo, int64_t ahi,
                             int64_t blo, int64_t bhi) {
    static const int nds[5][2] = {{2, 2}, {2, 2}, {0, 1}, {2, 1}, {2, 2}};
    static const int64_t shp[5][2][2] = {{{3, 4}, {3, 4}}, {{3, 1}, {1, 4}}, {{0}, {3}}, {{0, 3}, {3}}, {{3, 4}, {3, 4}}};
    const char *layout[5] = {"contiguous", "broadcast", "0-d", "empty", "non-contiguous"};
    for (int dt = 0; dt < CG_DTYPE_COUNT; dt++) {
        if (!(dtypes & (1u << dt))) continue;
        for (int l = 0; l < 5; l++) {
            cg_tensor *a = int_tensor((cg_dtype)dt, nds[l][0], shp[l][0], alo, ahi, 1 + (unsigned)l, l == 4);
            cg_tensor *b = int_tensor((cg_dtype)dt, nds[l][1], shp[l][1], blo, bhi, 7 + (unsigned)l, l == 4);
            cg_tensor *o = fn(a, b);
            CHECK_MSG(o != NULL, "[%s] %s %s failed: %s", name, cg_dtype_name((cg_dtype)dt), layout[l], cg_last_error_message());
            if (o) {
                CHECK(cg_tensor_dtype(o) == (cg_dtype)dt);
                const int64_t *os = cg_tensor_shape(o);
                int ond = cg_tensor_ndim(o);
                int64_t n = cg_tensor_numel(o);
                for (int64_t k = 0; k < n; k++) {
                    /* output index -> broadcast input indices (inputs are at most 2-d) */
                    int64_t r = ond == 2 ? k / os[1] : 0, c = ond == 2 ? k % os[1] : k;
                    cg_tensor *in[2] = {a, b};
                    int64_t x[2];
                    for (int i = 0; i < 2; i++) {
                        int nd = cg_tensor_ndim(in[i]);
                        const int64_t *sh = cg_tensor_shape(in[i]);
                        int64_t flat = 0;
                        if (nd == 2) flat = (sh[0] == 1 ? 0 : r) * sh[1] + (sh[1] == 1 ? 0 : c);
                        else if (nd == 1) flat = sh[0] == 1 ? 0 : c;
                        x[i] = (int64_t)tt_get(in[i], flat);
                    }
                    int64_t want = wrap(ref(x[0], x[1], (cg_dtype)dt), (cg_dtype)dt);
                    int64_t got = (int64_t)tt_get(o, k);
                    if (got != want) {
                        cg_test_fail(__FILE__, __LINE__, "[%s] %s %s element %lld: %lld op %lld = %lld, expected %lld", name,
                                     cg_dtype_name((cg_dtype)dt), layout[l], (long long)k, (long long)x[0],
                                     (long long)x[1], (long long)got, (long long)want);
                        break;
                    }
                }
            }
            cg_tensor_release(o);
            cg_tensor_release(a);
            cg_tensor_release(b);
        }
    }
}

TEST(logic_bitwise_ops) {
    check_int_binary("bitwise_and", cg_bitwise_and, r_band, INTS & ~(1u << CG_DTYPE_U8), -100, 100, -100, 100);
    check_int_binary("bitwise_or", cg_bitwise_or, r_bor, INTS & ~(1u << CG_DTYPE_U8), -100, 100, -100, 100);
    check_int_binary("bitwise_xor", cg_bitwise_xor, r_bxor, INTS & ~(1u << CG_DTYPE_U8), -100, 100, -100, 100);
    check_int_binary("bitwise_and", cg_bitwise_and, r_band, (1u << CG_DTYPE_U8) | (1u << CG_DTYPE_BOOL), 0, 255, 0, 255);
    check_int_binary("bitwise_or", cg_bitwise_or, r_bor, (1u << CG_DTYPE_U8) | (1u << CG_DTYPE_BOOL), 0, 255, 0, 255);
    check_int_binary("bitwise_xor", cg_bitwise_xor, r_bxor, (1u << CG_DTYPE_U8) | (1u << CG_DTYPE_BOOL), 0, 255, 0, 255);
    check_int_binary("bitwise_left_shift", cg_bitwise_left_shift, r_shl, INTS & ~(1u << CG_DTYPE_U8), -100, 100, 0, 7);
    check_int_binary("bitwise_right_shift", cg_bitwise_right_shift, r_shr, INTS & ~(1u << CG_DTYPE_U8), -100, 100, 0, 7);
    check_int_binary("bitwise_left_shift", cg_bitwise_left_shift, r_shl, 1u << CG_DTYPE_U8, 0, 255, 0, 7);
    check_int_binary("bitwise_right_shift", cg_bitwise_right_shift, r_shr, 1u << CG_DTYPE_U8, 0, 255, 0, 7);
}

TEST(logic_bitwise_not) {
    const cg_dtype dts[] = {CG_DTYPE_U8, CG_DTYPE_I8, CG_DTYPE_I16, CG_DTYPE_I32, CG_DTYPE_I64, CG_DTYPE_BOOL};
    int64_t s[2] = {3, 4};
    for (int d = 0; d < 6; d++) {
        for (int nc = 0; nc < 2; nc++) {
            bool is_u = dts[d] == CG_DTYPE_U8 || dts[d] == CG_DTYPE_BOOL;
            cg_tensor *x = int_tensor(dts[d], 2, s, is_u ? 0 : -100, is_u ? 255 : 100, 3, nc);
            cg_tensor *y = cg_bitwise_not(x);
            CHECK_NN(y);
            for (int64_t k = 0; y && k < 12; k++) {
                int64_t v = (int64_t)tt_get(x, k);
                int64_t want = dts[d] == CG_DTYPE_BOOL ? !v : wrap(~v, dts[d]);
                CHECK_MSG((int64_t)tt_get(y, k) == want, "bitwise_not %s element %lld", cg_dtype_name(dts[d]), (long long)k);
            }
            cg_tensor_release(y);
            cg_tensor_release(x);
        }
    }
    /* in place by name */
    int64_t s1[1] = {2};
    const double v[] = {0, 5};
    cg_tensor *x = tt_tensor(CG_DTYPE_I32, 1, s1, v);
    CHECK_OK(cg_unary_("bitwise_not", x));
    CHECK(tt_get(x, 0) == -1 && tt_get(x, 1) == -6);
    cg_tensor_release(x);
}

/* edge cases by hand (PyTorch's results): shift amounts that are negative or
 * >= the width, sign fill of right shifts, bits shifted out of the width */
typedef struct { cg_dtype dt; double a, b, shl, shr; } shift_case;

TEST(logic_shift_edges) {
    const shift_case cases[] = {
        {CG_DTYPE_I8, -1, 3, -8, -1},       {CG_DTYPE_I8, 1, 7, -128, 0},     {CG_DTYPE_I8, 1, 8, 0, 0},
        {CG_DTYPE_I8, 5, -1, 0, 0},         {CG_DTYPE_I8, -16, 2, -64, -4},   {CG_DTYPE_I8, -16, 8, 0, -1},
        {CG_DTYPE_I8, -16, -1, 0, -1},      {CG_DTYPE_I8, 64, 1, -128, 32},   {CG_DTYPE_U8, 255, 8, 0, 0},
        {CG_DTYPE_U8, 200, 1, 144, 100},    {CG_DTYPE_U8, 200, 7, 0, 1},      {CG_DTYPE_U8, 128, 200, 0, 0},
        {CG_DTYPE_I16, 1, 15, -32768, 0},   {CG_DTYPE_I16, -32768, 15, 0, -1}, {CG_DTYPE_I16, 3, 16, 0, 0},
        {CG_DTYPE_I32, 1, 31, -2147483648.0, 0}, {CG_DTYPE_I32, 3, 31, -2147483648.0, 0},
        {CG_DTYPE_I32, -5, 32, 0, -1},      {CG_DTYPE_I32, 7, 100, 0, 0},
        {CG_DTYPE_I64, 1, 63, -9223372036854775808.0, 0}, {CG_DTYPE_I64, 1, 64, 0, 0},
        {CG_DTYPE_I64, -1, 63, -9223372036854775808.0, -1}, {CG_DTYPE_I64, -1, 64, 0, -1},
        {CG_DTYPE_I64, -1, -7, 0, -1},      {CG_DTYPE_I64, 1024, 3, 8192, 128},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const shift_case *c = &cases[i];
        cg_tensor *a = cg_scalar(c->a, c->dt), *b = cg_scalar(c->b, c->dt);
        cg_tensor *l = cg_bitwise_left_shift(a, b), *r = cg_bitwise_right_shift(a, b);
        CHECK(l && r);
        if (l && r) {
            CHECK_MSG(tt_get(l, 0) == c->shl, "%s: %g << %g = %g, expected %g", cg_dtype_name(c->dt), c->a, c->b, tt_get(l, 0), c->shl);
            CHECK_MSG(tt_get(r, 0) == c->shr, "%s: %g >> %g = %g, expected %g", cg_dtype_name(c->dt), c->a, c->b, tt_get(r, 0), c->shr);
        }
        cg_tensor_release(l);
        cg_tensor_release(r);
        cg_tensor_release(a);
        cg_tensor_release(b);
    }
}

TEST(logic_errors) {
    int64_t s[1] = {3};
    cg_tensor *f = cg_ones(1, s, CG_DTYPE_F32, cg_cpu()), *d = cg_ones(1, s, CG_DTYPE_F64, cg_cpu());
    cg_tensor *b = cg_ones(1, s, CG_DTYPE_BOOL, cg_cpu()), *i = cg_ones(1, s, CG_DTYPE_I32, cg_cpu());
    CHECK_ERR(cg_bitwise_and(f, f) == NULL, CG_ERR_DTYPE, "[bitwise_and] not supported for dtype float32");
    CHECK_ERR(cg_bitwise_or(d, d) == NULL, CG_ERR_DTYPE, "[bitwise_or] not supported for dtype float64");
    CHECK_ERR(cg_bitwise_xor(f, f) == NULL, CG_ERR_DTYPE, "[bitwise_xor] not supported for dtype float32");
    CHECK_ERR(cg_bitwise_not(f) == NULL, CG_ERR_DTYPE, "[bitwise_not] not supported for dtype float32");
    CHECK_ERR(cg_bitwise_left_shift(f, f) == NULL, CG_ERR_DTYPE, "[bitwise_left_shift] not supported for dtype float32");
    CHECK_ERR(cg_bitwise_right_shift(b, b) == NULL, CG_ERR_DTYPE, "[bitwise_right_shift] not supported for dtype bool");
    CHECK_ERR(cg_logical_and(f, i) == NULL, CG_ERR_DTYPE, "[logical_and]");
    CHECK_ERR(cg_bitwise_and(i, b) == NULL, CG_ERR_DTYPE, "[bitwise_and]");
    CHECK_ERR(cg_isinf(NULL) == NULL, CG_ERR_VALUE, "[isinf]");
    /* a bool result can't be written into a float tensor in place */
    CHECK_ERR(cg_binary_("logical_or", f, f) != CG_OK, CG_ERR_DTYPE, "[logical_or_]");
    int64_t s2[1] = {2};
    cg_tensor *i2 = cg_ones(1, s2, CG_DTYPE_I32, cg_cpu());
    CHECK_ERR(cg_bitwise_xor(i, i2) == NULL, CG_ERR_SHAPE, "[bitwise_xor]");
    /* bool in place by name */
    CHECK_OK(cg_binary_("logical_xor", b, b));
    CHECK(tt_get(b, 0) == 0);
    cg_tensor *all[] = {f, d, b, i, i2};
    for (int k = 0; k < 5; k++) cg_tensor_release(all[k]);
}
