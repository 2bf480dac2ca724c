/* creation.c — deterministic factories: zeros, ones, full, their _like forms,
 * empty_like, arange, linspace, logspace and eye. The op checks the arguments,
 * works out the length and the host scalars and allocates the output; the
 * values are written by the device's entries (arange, linspace, eye; the
 * CPU's are src/backend/cpu/creation.c). (Random factories live in
 * random.c.) */
#include "creation_internal.h"

#include <math.h>
#include <string.h>

CG_PROF_FN0(cg_tensor *, cg_full, "full", (int ndim, const int64_t *shape, double value, cg_dtype dt, cg_device dev),
            (ndim, shape, value, dt, dev)) {
    cg_tensor *t = cg_empty(ndim, shape, dt, dev);
    if (t && cg_fill_(t, value)) {
        cg_tensor_release(t);
        return NULL;
    }
    if (t) atomic_store(&t->storage->version, 0);
    return t;
}
CG_PROF_FN0(cg_tensor *, cg_zeros, "zeros", (int ndim, const int64_t *shape, cg_dtype dt, cg_device dev), (ndim, shape,
            dt, dev)) { return cg_full(ndim, shape, 0.0, dt, dev); }
CG_PROF_FN0(cg_tensor *, cg_ones, "ones", (int ndim, const int64_t *shape, cg_dtype dt, cg_device dev), (ndim, shape,
            dt, dev)) { return cg_full(ndim, shape, 1.0, dt, dev); }

CG_PROF_FN(cg_tensor *, cg_empty_like, "empty_like", (cg_tensor *t), (t), t) {
    CG_CHECK(t, CG_ERR_VALUE, "[empty_like] argument is NULL");
    return cg_empty(t->ndim, t->shape, t->dtype, t->device);
}
CG_PROF_FN(cg_tensor *, cg_full_like, "full_like", (cg_tensor *t, double value), (t, value), t) {
    CG_CHECK(t, CG_ERR_VALUE, "[full_like] argument is NULL");
    return cg_full(t->ndim, t->shape, value, t->dtype, t->device);
}
CG_PROF_FN(cg_tensor *, cg_zeros_like, "zeros_like", (cg_tensor *t), (t), t) { return cg_full_like(t, 0.0); }
CG_PROF_FN(cg_tensor *, cg_ones_like, "ones_like", (cg_tensor *t), (t), t) { return cg_full_like(t, 1.0); }

/* Note [arange of an integer dtype]: PyTorch's rules, measured against torch
 * 2.13 (the table in tests/python/test_opdb_fixes.py):
 *  - checks on the numbers as given: step != 0, finite bounds, and the sign
 *    rule (end >= start for step > 0, end <= start for step < 0);
 *  - float dtypes: ceil((end - start) / step) values start + i * step;
 *  - integer dtypes: the values are start + i * step with start and step
 *    truncated toward zero, computed in int64 and wrapped to the dtype (so a
 *    fractional step below 1 repeats start);
 *  - the length for int64 is computed from the truncated numbers in integer
 *    arithmetic, (end - start + step - sign(step)) / step, and a step that
 *    truncates to 0 is an error (a ValueError in PyTorch, which
 *    cgrad.InvalidArgument is); for the narrower integer dtypes it is
 *    ceil((end - start) / step) on the numbers as given.
 * So arange(3.1, dtype=int64) is [0, 1, 2] and arange(3.1, dtype=int32) is
 * [0, 1, 2, 3]. */

/* v truncated toward zero as int64; CG_ERR_VALUE when it does not fit */
static cg_status arange_trunc(double v, int64_t *out) {
    CG_CHECK_S(v > -9.2233720368547758e18 && v < 9.2233720368547758e18, CG_ERR_VALUE,
               "[arange] value %g cannot be converted to type int64 without overflow", v);
    *out = (int64_t)v;
    return CG_OK;
}

CG_PROF_FN0(cg_tensor *, cg_arange, "arange", (double start, double end, double step, cg_dtype dt, cg_device dev),
            (start, end, step, dt, dev)) {
    if (cg_dtype_is_barebones(dt)) { /* PyTorch has no arange, linspace, logspace or eye for them */
        cg_dtype_unsupported("arange", dt);
        return NULL;
    }
    CG_CHECK(step != 0, CG_ERR_VALUE, "[arange] step must be nonzero");
    CG_CHECK(isfinite(start) && isfinite(end), CG_ERR_VALUE, "[arange] unsupported range: %g -> %g", start, end);
    CG_CHECK((step > 0 && end >= start) || (step < 0 && end <= start), CG_ERR_VALUE,
             "[arange] upper bound and lower bound inconsistent with step sign (start %g, end %g, step %g)", start, end, step);
    bool ints = !cg_dtype_is_floating(dt) && dt != CG_DTYPE_BOOL; /* Note [arange of an integer dtype] */
    int64_t istart = 0, iend = 0, istep = 0;
    if (ints && (arange_trunc(start, &istart) || arange_trunc(step, &istep))) return NULL;
    double nd;
    if (ints && dt == CG_DTYPE_I64) {
        if (arange_trunc(end, &iend)) return NULL;
        CG_CHECK(istep != 0, CG_ERR_VALUE, "[arange] step must be nonzero (step %g truncates to 0 for int64)", step);
        /* (end - start + step - sign(step)) / step = ceil(|end - start| / |step|): in
         * unsigned arithmetic, where |end - start| cannot overflow (the signs agree) */
        uint64_t span = istep > 0 ? (uint64_t)iend - (uint64_t)istart : (uint64_t)istart - (uint64_t)iend;
        uint64_t astep = istep > 0 ? (uint64_t)istep : 0 - (uint64_t)istep;
        nd = (double)(span / astep + (span % astep != 0));
    } else {
        nd = ceil((end - start) / step);
    }
    CG_CHECK(nd < 9.2e18, CG_ERR_VALUE, "[arange] too many elements (%g)", nd);
    int64_t n = nd > 0 ? (int64_t)nd : 0;
    cg_tensor *t = cg_tensor_new("arange", 1, &n, dt, dev);
    if (!t) return NULL;
    cg_status st;
    CG_RUN_KERNEL(st, "arange", dev, arange, t, start, step, istart, istep);
    if (st) cg_tensor_release(t), t = NULL;
    return t;
}

cg_status cg_check_factory(const char *op, cg_dtype dt, cg_device dev) {
    if ((int)dt < 0 || dt >= CG_DTYPE_COUNT) return cg_set_error(CG_ERR_DTYPE, "[%s] invalid dtype %d", op, (int)dt);
    if ((int)dev.type < 0 || dev.type >= CG_DEVICE_TYPE_COUNT)
        return cg_set_error(CG_ERR_DEVICE, "[%s] invalid device %d", op, (int)dev.type);
    return CG_OK;
}

/* ------------------------------------------------------------- linspace / logspace
 * PyTorch's formula: step = (end - start) / (steps - 1); the first half counts
 * up from start, the second half down from end, so the ends are exact and the
 * sequence is symmetric. start and end are first converted to the dtype
 * (integers truncate); floating dtypes other than float64 compute in float32
 * (the halves with start, end and step rounded to the half type), integers in
 * double, and the result is converted (truncated) to the dtype. logspace
 * raises base to each such value. */

/* the value v as the dtype dt holds it (integers truncate, halves round) */
static double as_dtype(double v, cg_dtype dt) {
    char tmp[8];
    cg_store_doubles(tmp, dt, &v, 1);
    double r;
    cg_load_doubles(tmp, dt, &r, 1);
    return r;
}

static cg_tensor *space_impl(const char *op, double start, double end, int64_t steps, bool log, double base,
                             cg_dtype dt, cg_device dev) {
    if (cg_check_factory(op, dt, dev)) return NULL;
    CG_CHECK(steps >= 0, CG_ERR_SHAPE, "[%s] number of steps must be non-negative, got %lld", op, (long long)steps);
    cg_tensor *t = cg_tensor_new(op, 1, &steps, dt, dev);
    if (!t) return NULL;
    bool in_float = cg_dtype_is_floating(dt) && dt != CG_DTYPE_F64; /* compute in float32 */
    double s0 = as_dtype(start, dt), s1 = as_dtype(end, dt), step = 0;
    int64_t halfway;
    if (steps == 1) {
        halfway = 1; /* the single value is start */
    } else {
        halfway = steps / 2;
        step = in_float ? (double)(((float)s1 - (float)s0) / (float)(steps - 1)) : (s1 - s0) / (double)(steps - 1);
        if (dt == CG_DTYPE_F16 || dt == CG_DTYPE_BF16) step = as_dtype(step, dt);
    }
    cg_status st;
    CG_RUN_KERNEL(st, op, dev, linspace, t, s0, s1, step, halfway, log, base);
    if (st) cg_tensor_release(t), t = NULL;
    return t;
}

CG_PROF_FN0(cg_tensor *, cg_linspace, "linspace", (double start, double end, int64_t steps, cg_dtype dt, cg_device dev),
            (start, end, steps, dt, dev)) {
    if (cg_dtype_is_barebones(dt)) {
        cg_dtype_unsupported("linspace", dt);
        return NULL;
    }
    return space_impl("linspace", start, end, steps, false, 0.0, dt, dev);
}

CG_PROF_FN0(cg_tensor *, cg_logspace, "logspace", (double start, double end, int64_t steps, double base, cg_dtype dt,
            cg_device dev), (start, end, steps, base, dt, dev)) {
    if (cg_dtype_is_barebones(dt)) {
        cg_dtype_unsupported("logspace", dt);
        return NULL;
    }
    return space_impl("logspace", start, end, steps, true, base, dt, dev);
}

/* ------------------------------------------------------------- eye */

/* (n, m) with ones on the main diagonal; m < 0 means m = n. */
CG_PROF_FN0(cg_tensor *, cg_eye, "eye", (int64_t n, int64_t m, cg_dtype dt, cg_device dev), (n, m, dt, dev)) {
    if (cg_check_factory("eye", dt, dev)) return NULL;
    if (cg_dtype_is_barebones(dt)) {
        cg_dtype_unsupported("eye", dt);
        return NULL;
    }
    CG_CHECK(n >= 0, CG_ERR_SHAPE, "[eye] n must be non-negative, got %lld", (long long)n);
    if (m < 0) m = n;
    int64_t shape[2] = {n, m};
    cg_tensor *t = cg_tensor_new("eye", 2, shape, dt, dev);
    if (!t) return NULL;
    cg_status st;
    CG_RUN_KERNEL(st, "eye", dev, eye, t);
    if (st) cg_tensor_release(t), t = NULL;
    return t;
}
