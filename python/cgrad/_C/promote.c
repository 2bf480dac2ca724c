/* promote.c — PyTorch's type promotion at the binding: promote_types over
 * dtypes, result_type over tensors / 0-d tensors / Python scalars (a weak
 * scalar may raise the category, never the width), conversion of an
 * operand to the computed dtype, and PyTorch's overflow check for a Python
 * number written into a tensor. The engine itself never promotes. */
#include <float.h>
#include <math.h>

#include "cgpy.h"

enum { CAT_BOOL = 0, CAT_INT = 1, CAT_FLOAT = 2 };

static int category(cg_dtype dt) {
    return dt == CG_DTYPE_BOOL ? CAT_BOOL : cg_dtype_is_floating(dt) ? CAT_FLOAT : CAT_INT;
}

cg_dtype cgpy_promote_types(cg_dtype a, cg_dtype b) {
    if (a == b) return a;
    if (a == CG_DTYPE_BOOL) return b;
    if (b == CG_DTYPE_BOOL) return a;
    int ca = category(a), cb = category(b);
    if (ca != cb) return ca > cb ? a : b; /* int with float -> the float */
    if (ca == CAT_FLOAT) {
        if ((a == CG_DTYPE_F16 && b == CG_DTYPE_BF16) || (a == CG_DTYPE_BF16 && b == CG_DTYPE_F16)) return CG_DTYPE_F32;
        return cg_dtype_size(a) >= cg_dtype_size(b) ? a : b;
    }
    /* integers: uint8 with a signed type needs the next wider signed type */
    if (a == CG_DTYPE_U8 || b == CG_DTYPE_U8) {
        cg_dtype s = a == CG_DTYPE_U8 ? b : a;
        return s == CG_DTYPE_I8 ? CG_DTYPE_I16 : s;
    }
    return cg_dtype_size(a) >= cg_dtype_size(b) ? a : b;
}

/* Note [Barebones unsigned dtypes]: uint16, uint32 and uint64 promote only
 * with themselves and with floating dtypes; any other pair raises PyTorch's
 * RuntimeError (a Python scalar or a 0-d tensor of a lower category never
 * promotes, so `u32 * 2` stays uint32). */
static bool barebones(cg_dtype dt) { return dt == CG_DTYPE_U16 || dt == CG_DTYPE_U32 || dt == CG_DTYPE_U64; }
extern const char *cgpy_torch_type_name(cg_dtype dt); /* number.c: PyTorch's ScalarType names */

int cgpy_promote_checked(cg_dtype a, cg_dtype b, cg_dtype *out) {
    if (a != b && (barebones(a) || barebones(b)) && !cg_dtype_is_floating(a) && !cg_dtype_is_floating(b)) {
        PyErr_Format(PyExc_RuntimeError,
                     "Promotion for uint16, uint32, uint64 types is not supported, attempted to promote %s and %s",
                     cgpy_torch_type_name(a), cgpy_torch_type_name(b));
        return -1;
    }
    *out = cgpy_promote_types(a, b);
    return 0;
}

#define UNDEF (-1)
static int promote_opt(int *acc, cg_dtype dt) {
    cg_dtype r = dt;
    if (*acc != UNDEF && cgpy_promote_checked((cg_dtype)*acc, dt, &r)) return -1;
    *acc = (int)r;
    return 0;
}

/* higher-priority class wins unless the lower class is of a higher category */
static int combine(int higher, int lower, int *out) {
    *out = higher;
    if (higher == UNDEF) *out = lower;
    else if (lower == UNDEF || cg_dtype_is_floating((cg_dtype)higher)) *out = higher;
    else if (higher == CG_DTYPE_BOOL || cg_dtype_is_floating((cg_dtype)lower)) {
        cg_dtype r;
        if (cgpy_promote_checked((cg_dtype)higher, (cg_dtype)lower, &r)) return -1;
        *out = (int)r;
    }
    return 0;
}

int cgpy_result_type(int n, PyObject *const *ops, cg_dtype *out) {
    int dim = UNDEF, zero = UNDEF, wrapped = UNDEF, e = 0;
    for (int i = 0; i < n && !e; i++) {
        PyObject *o = ops[i];
        if (cgpy_is_tensor(o)) {
            cg_tensor *t = cgpy_t(o);
            if (cg_tensor_ndim(t) > 0) e = promote_opt(&dim, cg_tensor_dtype(t));
            else e = promote_opt(&zero, cg_tensor_dtype(t));
        } else if (PyBool_Check(o)) {
            e = promote_opt(&wrapped, CG_DTYPE_BOOL);
        } else if (PyLong_Check(o)) {
            e = promote_opt(&wrapped, CG_DTYPE_I64);
        } else if (PyFloat_Check(o)) {
            e = promote_opt(&wrapped, cgpy_default_dtype);
        } else {
            PyErr_Format(PyExc_TypeError, "expected a Tensor or a Python number, got %.100s", Py_TYPE(o)->tp_name);
            return -1;
        }
    }
    int zw, r;
    if (e || combine(zero, wrapped, &zw) || combine(dim, zw, &r)) return -1;
    *out = r == UNDEF ? cgpy_default_dtype : (cg_dtype)r;
    return 0;
}

cg_tensor *cgpy_as_tensor(PyObject *o, cg_dtype dt, cg_device dev) {
    if (cgpy_is_tensor(o)) {
        cg_tensor *t = cgpy_t(o);
        cg_tensor *r = cg_to_dtype(t, dt);
        if (!r) cgpy_raise();
        return r;
    }
    double v;
    if (PyBool_Check(o)) v = o == Py_True;
    else if (PyLong_Check(o)) {
        int overflow = 0;
        long long ll = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow > 0 && dt == CG_DTYPE_U64) { /* [2^63, 2^64): exact */
            unsigned long long u = PyLong_AsUnsignedLongLong(o);
            if (u == (unsigned long long)-1 && PyErr_Occurred()) PyErr_Clear();
            else ll = (long long)u, overflow = 0; /* the bits; from_data below takes them as uint64 */
        }
        if (overflow) {
            PyErr_Format(PyExc_RuntimeError, "value cannot be converted to type %s without overflow", cg_dtype_name(dt));
            return NULL;
        }
        if (ll == -1 && PyErr_Occurred()) return NULL;
        if (dt == CG_DTYPE_I64 || dt == CG_DTYPE_U64) { /* exact, beyond 2^53 (uint64: the int64 wraps) */
            int64_t x = ll;
            cg_tensor *t = cg_from_data(&x, 0, NULL, dt);
            if (!t) cgpy_raise();
            if (t && dev.type != CG_DEVICE_CPU) {
                cg_tensor *m = cg_to_device(t, dev);
                cg_tensor_release(t);
                t = m;
                if (!t) cgpy_raise();
            }
            return t;
        }
        v = (double)ll;
    } else if (PyFloat_Check(o)) {
        v = PyFloat_AS_DOUBLE(o);
    } else {
        PyErr_Format(PyExc_TypeError, "expected a Tensor or a Python number, got %.100s", Py_TYPE(o)->tp_name);
        return NULL;
    }
    cg_tensor *t = cg_scalar_on(v, dt, dev);
    if (!t) cgpy_raise();
    return t;
}

/* PyTorch's canCast: no float to integral or bool, no non-bool to bool. */
bool cgpy_can_cast(cg_dtype from, cg_dtype to) {
    if (cg_dtype_is_floating(from) && !cg_dtype_is_floating(to)) return false;
    if (from != CG_DTYPE_BOOL && to == CG_DTYPE_BOOL) return false;
    return true;
}

/* cgrad.can_cast(from_, to) */
PyObject *cgpy_f_can_cast(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("can_cast", CGPY_ARG("from_", CGPY_A_DTYPE, CGPY_REQ), CGPY_ARG("to",
                                      CGPY_A_DTYPE, CGPY_REQ));
    cgpy_val v[2];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    cg_dtype a = v[0].dtype, b = v[1].dtype;
    if ((int)a < 0 || (int)b < 0) {
        PyErr_SetString(PyExc_TypeError, "can_cast(): arguments 'from_' and 'to' must be dtypes");
        return NULL;
    }
    return PyBool_FromLong(cgpy_can_cast(a, b));
}

/* Note [Checked scalar conversion]: PyTorch (c10::checked_convert) refuses a
 * Python number written into a tensor (tensor(), full, fill_, x[i] = v, ...)
 * when the dtype cannot hold it: an int outside the integer dtype's range (an
 * unsigned dtype also takes negatives down to -max, which wrap), a float that
 * is NaN, infinite or out of range for an integer dtype, and (check_float) a
 * finite float beyond float32's range. An int beyond int64 is an OverflowError
 * (check_float, or an integer dtype), as PyTorch's argument parser raises.
 * Otherwise bool targets and bool values always fit. */
int cgpy_check_fits(PyObject *o, cg_dtype dt, bool check_float) {
    if (PyBool_Check(o) || cgpy_is_tensor(o)) return 0;
    bool integral = !cg_dtype_is_floating(dt); /* bool included */
    if ((dt == CG_DTYPE_BOOL || !integral) && !check_float) return 0;
    long long v = 0;
    if (dt == CG_DTYPE_U64 && PyLong_Check(o)) { /* uint64 takes [-2^63, 2^64); negatives wrap */
        int overflow;
        v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (v == -1 && PyErr_Occurred()) return -1;
        if (overflow > 0) {
            unsigned long long u = PyLong_AsUnsignedLongLong(o);
            if (u == (unsigned long long)-1 && PyErr_Occurred()) {
                PyErr_Clear();
                overflow = -1;
            } else
                overflow = 0;
        }
        if (overflow) {
            PyErr_SetString(PyExc_OverflowError, "int too big to convert");
            return -1;
        }
        return 0;
    }
    if (PyLong_Check(o)) { /* Python ints are taken as int64 first */
        int overflow;
        v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (v == -1 && PyErr_Occurred()) return -1;
        if (overflow) {
            if (overflow > 0 && check_float) { /* [2^63, 2^64): PyTorch takes it as a uint64, then checks */
                unsigned long long u = PyLong_AsUnsignedLongLong(o);
                if (!(u == (unsigned long long)-1 && PyErr_Occurred())) {
                    if (dt == CG_DTYPE_BOOL || !integral) return 0;
                    PyErr_Format(PyExc_RuntimeError, "value cannot be converted to type %s without overflow",
                                 cg_dtype_name(dt));
                    return -1;
                }
                PyErr_Clear();
            }
            PyErr_SetString(PyExc_OverflowError, "int too big to convert"); /* as PyTorch */
            return -1;
        }
    }
    if (dt == CG_DTYPE_BOOL || (!integral && dt != CG_DTYPE_F32)) return 0;
    double lo, hi;
    switch (dt) {
    case CG_DTYPE_U8: lo = 0, hi = UINT8_MAX; break;
    case CG_DTYPE_I8: lo = INT8_MIN, hi = INT8_MAX; break;
    case CG_DTYPE_I16: lo = INT16_MIN, hi = INT16_MAX; break;
    case CG_DTYPE_I32: lo = INT32_MIN, hi = INT32_MAX; break;
    case CG_DTYPE_I64: lo = (double)INT64_MIN, hi = (double)INT64_MAX; break;
    case CG_DTYPE_U16: lo = 0, hi = UINT16_MAX; break;
    case CG_DTYPE_U32: lo = 0, hi = UINT32_MAX; break;
    case CG_DTYPE_U64: lo = 0, hi = 18446744073709551616.0; break;
    default: lo = -FLT_MAX, hi = FLT_MAX; break;
    }
    bool ok;
    if (PyLong_Check(o)) {
        if (!integral || dt == CG_DTYPE_I64) ok = true;
        else if (dt == CG_DTYPE_U8) ok = v <= UINT8_MAX && v >= -(long long)UINT8_MAX;
        else if (dt == CG_DTYPE_U16 || dt == CG_DTYPE_U32) ok = v <= (long long)hi && v >= -(long long)hi;
        else ok = v >= (long long)lo && v <= (long long)hi;
    } else {
        double f = PyFloat_AsDouble(o);
        if (f == -1.0 && PyErr_Occurred()) return -1;
        ok = integral ? !isnan(f) && f >= lo && f <= hi : isnan(f) || isinf(f) || fabs(f) <= FLT_MAX;
    }
    if (ok) return 0;
    PyErr_Format(PyExc_RuntimeError, "value cannot be converted to type %s without overflow", cg_dtype_name(dt));
    return -1;
}

/* A Python int that full / fill_ write into a uint64 tensor, exactly (their
 * double rounds values above 2^53): t gets a copy of the uint64 scalar.
 * 0 (also when this is not such a case), or -1 raised. */
int cgpy_fill_exact(cg_tensor *t, PyObject *v) {
    if (!t || cg_tensor_dtype(t) != CG_DTYPE_U64 || !PyLong_Check(v) || PyBool_Check(v)) return 0;
    cg_tensor *s = cgpy_as_tensor(v, CG_DTYPE_U64, cg_tensor_device(t));
    if (!s) return -1;
    cg_status st = cg_copy_(t, s);
    cg_tensor_release(s);
    return cgpy_check(st) ? -1 : 0;
}
