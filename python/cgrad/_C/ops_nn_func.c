/* ops_nn_func.c — bindings of the engine's losses, similarity measures,
 * padding, resampling, one_hot and attention kernels (the nn_func family).
 * Ops torch has at top level (torch.kl_div, torch.pixel_shuffle,
 * torch.constant_pad_nd, ...) are public with torch's signature (reduction
 * as an int); the others are private `_<name>` functions that
 * cgrad.nn.functional calls, which also accept reduction / mode strings so
 * that the Python wrappers stay one call deep. */
#include "ops_math.h"

#include <math.h>
#include <string.h>

#define FASTKW_ARGS PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw
#define PARSE(fname, names, npos, nreq, v) cgpy_parse_fastkw(self, args, nargs, kw, fname, names, npos, nreq, v)

/* Wrap r, or raise the engine's error; a message from an inner op (e.g.
 * "[sub] shapes ... cannot broadcast") is prefixed with the op's name. */
static PyObject *result_in(const char *fname, cg_tensor *r) {
    if (r) return cgpy_wrap(r);
    if (PyErr_Occurred()) return NULL;
    cg_status st = cg_last_error();
    const char *msg = cg_last_error_message();
    if (st != CG_OK && !strstr(msg, fname)) {
        char buf[1024];
        snprintf(buf, sizeof buf, "%s: %s", fname, msg);
        cg_set_error(st, "%s", buf);
    }
    return cgpy_raise();
}
#define result(r) result_in(fname, r)
static int is_none(PyObject *o) { return !o || o == Py_None; }
static int opt_double(PyObject *o, double *v, const char *what) { return is_none(o) ? 0 : cgpy_parse_double(o, v, what); }
static int opt_int(PyObject *o, int64_t *v, const char *what) { return is_none(o) ? 0 : cgpy_parse_int(o, v, what); }
static int opt_bool(PyObject *o, bool *v) {
    if (is_none(o)) return 0;
    int b = PyObject_IsTrue(o);
    if (b < 0) return -1;
    *v = b != 0;
    return 0;
}
/* An optional tensor argument (None -> NULL, borrowed). */
static int opt_tensor(PyObject *o, cg_tensor **t, const char *fname, const char *what) {
    *t = NULL;
    if (is_none(o)) return 0;
    if (cgpy_need_tensor(o, fname, what)) return -1;
    *t = cgpy_t(o);
    return 0;
}
static int need2(PyObject *const *v, const char *fname, const char *a, const char *b) {
    return cgpy_need_tensor(v[0], fname, a) || cgpy_need_tensor(v[1], fname, b);
}

/* reduction: torch's enum int (0 none, 1 mean, 2 sum) or, for the private
 * functions (allow_str), the string of torch.nn.functional. Note [Top-level
 * reduction default]: torch's Python bindings of the top-level losses
 * (torch.kl_div, torch.binary_cross_entropy_with_logits) default to no
 * reduction, although their schemas say Mean; the public forms here do the
 * same, the private ones default to mean like torch.nn.functional. */
static int parse_reduction(PyObject *o, bool allow_str, cg_reduction *r, const char *fname) {
    *r = allow_str ? CG_REDUCTION_MEAN : CG_REDUCTION_NONE;
    if (is_none(o)) return 0;
    if (allow_str && PyUnicode_Check(o)) {
        const char *s = PyUnicode_AsUTF8(o);
        if (!s) return -1;
        if (!strcmp(s, "mean")) *r = CG_REDUCTION_MEAN;
        else if (!strcmp(s, "sum")) *r = CG_REDUCTION_SUM;
        else if (!strcmp(s, "none")) *r = CG_REDUCTION_NONE;
        else {
            PyErr_Format(PyExc_ValueError, "%s is not a valid value for reduction", s);
            return -1;
        }
        return 0;
    }
    if (!PyLong_Check(o) || PyBool_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'reduction' must be int, not %.100s", fname, Py_TYPE(o)->tp_name);
        return -1;
    }
    long v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (v < 0 || v > 2) {
        PyErr_Format(PyExc_ValueError, "%s: %ld is not a valid value for reduction (0 none, 1 mean, 2 sum)", fname, v);
        return -1;
    }
    *r = (cg_reduction)v;
    return 0;
}

/* Promote n tensor operands to one dtype (float_only: ints to the default
 * float dtype) and run fn on them; results stolen by `result`. */
static int promote(int n, PyObject *const *v, bool float_only, cg_tensor **t) {
    cg_dtype dt;
    return cgpy_promote_operands(n, v, float_only, t, &dt);
}

/* ================================================================ class-index losses */

/* int64 class targets as the engine needs them: uint8 (which torch also
 * accepts) is widened, floating targets (probabilities) pass. New ref. */
static cg_tensor *class_target(cg_tensor *target, const char *fname) {
    cg_dtype dt = cg_tensor_dtype(target);
    if (dt == CG_DTYPE_U8) {
        cg_tensor *c = cg_to_dtype(target, CG_DTYPE_I64);
        if (!c) cgpy_raise();
        return c;
    }
    if (dt != CG_DTYPE_I64 && !cg_dtype_is_floating(dt)) {
        PyErr_Format(PyExc_RuntimeError, "%s: expected target dtype to be int64 (class indices) or uint8, or floating "
                                         "(class probabilities), but got %s", fname, cg_dtype_name(dt));
        return NULL;
    }
    cg_tensor_retain(target);
    return target;
}

/* torch raises ValueError when the batch sizes of input (N, C, *) and class
 * targets (N, *) differ; InvalidArgument is both ValueError and RuntimeError. */
static int check_batch(cg_tensor *x, cg_tensor *target, const char *fname) {
    if (cg_dtype_is_floating(cg_tensor_dtype(target)) || cg_tensor_ndim(x) < 2 || cg_tensor_ndim(target) < 1) return 0;
    int64_t n = cg_tensor_shape(x)[0], m = cg_tensor_shape(target)[0];
    if (n == m) return 0;
    PyErr_Format(cgpy_InvalidArgument, "%s: Expected input batch_size (%lld) to match target batch_size (%lld).", fname,
                 (long long)n, (long long)m);
    return -1;
}

static PyObject *class_loss(FASTKW_ARGS, bool ce) {
    const char *fname = ce ? "cross_entropy" : "nll_loss";
    static const char *const ce_names[] = {"input", "target", "weight", "reduction", "ignore_index", "label_smoothing",
                                           NULL};
    static const char *const nll_names[] = {"input", "target", "weight", "reduction", "ignore_index", NULL};
    PyObject *v[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
    cg_reduction red;
    int64_t ignore = -100;
    double ls = 0.0;
    cg_tensor *w;
    if (PARSE(fname, ce ? ce_names : nll_names, ce ? 6 : 5, 2, v) || need2(v, fname, "input", "target") ||
        opt_tensor(v[2], &w, fname, "weight") || parse_reduction(v[3], true, &red, fname) ||
        opt_int(v[4], &ignore, "ignore_index") || opt_double(v[5], &ls, "label_smoothing"))
        return NULL;
    cg_tensor *x = cgpy_t(v[0]);
    cg_tensor *t = class_target(cgpy_t(v[1]), fname);
    if (!t) return NULL;
    if (check_batch(x, t, fname)) {
        cg_tensor_release(t);
        return NULL;
    }
    cg_tensor *r;
    if (ce) CGPY_NOGIL_IF(cg_tensor_numel(x), r = cg_cross_entropy(x, t, w, ignore, ls, red));
    else CGPY_NOGIL_IF(cg_tensor_numel(x), r = cg_nll_loss(x, t, w, ignore, red));
    cg_tensor_release(t);
    return result(r);
}
/* _cross_entropy(input, target, weight=None, reduction='mean', ignore_index=-100, label_smoothing=0.0) */
static PyObject *py_cross_entropy(FASTKW_ARGS) { return class_loss(self, args, nargs, kw, true); }
/* _nll_loss(input, target, weight=None, reduction='mean', ignore_index=-100) */
static PyObject *py_nll_loss(FASTKW_ARGS) { return class_loss(self, args, nargs, kw, false); }

/* ================================================================ pointwise losses */

typedef enum { PW_MSE, PW_L1, PW_SMOOTH_L1, PW_HUBER } pw_kind;

/* _mse_loss / _l1_loss(input, target, reduction='mean'), _smooth_l1_loss(..., beta=1.0),
 * _huber_loss(..., delta=1.0): operands promoted as torch does; huber keeps
 * the input's dtype like torch. */
static PyObject *pointwise(FASTKW_ARGS, pw_kind kind, const char *fname, const char *pname) {
    const char *const names[] = {"input", "target", "reduction", pname, NULL};
    PyObject *v[4];
    cg_reduction red;
    double c = 1.0;
    if (PARSE(fname, names, pname ? 4 : 3, 2, v) || need2(v, fname, "input", "target") ||
        parse_reduction(v[2], true, &red, fname) || (pname && opt_double(v[3], &c, pname)))
        return NULL;
    cg_tensor *t[2];
    if (promote(2, v, false, t)) return NULL;
    cg_tensor *r = NULL;
    switch (kind) {
    case PW_MSE: r = cg_mse_loss(t[0], t[1], red); break;
    case PW_L1: r = cg_l1_loss(t[0], t[1], red); break;
    case PW_SMOOTH_L1: r = cg_smooth_l1_loss(t[0], t[1], red, c); break;
    case PW_HUBER: r = cg_huber_loss(t[0], t[1], red, c); break;
    }
    cgpy_release_n(2, t);
    cg_dtype in_dt = cg_tensor_dtype(cgpy_t(v[0]));
    if (r && kind == PW_HUBER && cg_tensor_dtype(r) != in_dt && cg_dtype_is_floating(in_dt) && !cg_is_autocast_enabled()) {
        cg_tensor *c2 = cg_to_dtype(r, in_dt);
        cg_tensor_release(r);
        r = c2;
    }
    return result(r);
}
static PyObject *py_mse_loss(FASTKW_ARGS) { return pointwise(self, args, nargs, kw, PW_MSE, "mse_loss", NULL); }
static PyObject *py_l1_loss(FASTKW_ARGS) { return pointwise(self, args, nargs, kw, PW_L1, "l1_loss", NULL); }
static PyObject *py_smooth_l1_loss(FASTKW_ARGS) {
    return pointwise(self, args, nargs, kw, PW_SMOOTH_L1, "smooth_l1_loss", "beta");
}
static PyObject *py_huber_loss(FASTKW_ARGS) { return pointwise(self, args, nargs, kw, PW_HUBER, "huber_loss", "delta"); }

/* ================================================================ binary cross-entropy */

/* _binary_cross_entropy(input, target, weight=None, reduction='mean'): no
 * promotion (torch requires one dtype); weight expanded to input's shape. */
static PyObject *py_binary_cross_entropy(FASTKW_ARGS) {
    const char *fname = "binary_cross_entropy";
    static const char *const names[] = {"input", "target", "weight", "reduction", NULL};
    PyObject *v[4];
    cg_reduction red;
    cg_tensor *w;
    if (PARSE(fname, names, 4, 2, v) || need2(v, fname, "input", "target") || opt_tensor(v[2], &w, fname, "weight") ||
        parse_reduction(v[3], true, &red, fname))
        return NULL;
    cg_tensor *x = cgpy_t(v[0]), *ew = NULL;
    if (w && !(ew = cg_expand(w, cg_tensor_ndim(x), cg_tensor_shape(x)))) return cgpy_raise();
    cg_tensor *r;
    CGPY_NOGIL_IF(cg_tensor_numel(x), r = cg_binary_cross_entropy(x, cgpy_t(v[1]), ew, red));
    if (ew) cg_tensor_release(ew);
    return result(r);
}

/* binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=1)
 * (torch's; the private form also takes reduction strings). Operands are
 * promoted; the result has the target's dtype, as in torch. */
static PyObject *bce_logits(FASTKW_ARGS, bool allow_str) {
    const char *fname = "binary_cross_entropy_with_logits";
    static const char *const names[] = {"input", "target", "weight", "pos_weight", "reduction", NULL};
    PyObject *v[5];
    cg_reduction red;
    if (PARSE(fname, names, 5, 2, v) || need2(v, fname, "input", "target") ||
        parse_reduction(v[4], allow_str, &red, fname))
        return NULL;
    PyObject *ops[4] = {v[0], v[1], NULL, NULL};
    int n = 2, iw = -1, ipw = -1;
    if (!is_none(v[2])) {
        if (cgpy_need_tensor(v[2], fname, "weight")) return NULL;
        iw = n, ops[n++] = v[2];
    }
    if (!is_none(v[3])) {
        if (cgpy_need_tensor(v[3], fname, "pos_weight")) return NULL;
        ipw = n, ops[n++] = v[3];
    }
    cg_dtype tdt = cg_tensor_dtype(cgpy_t(v[1]));
    if (!cg_dtype_is_floating(tdt)) {
        PyErr_Format(PyExc_RuntimeError, "%s: target must be floating point, got %s", fname, cg_dtype_name(tdt));
        return NULL;
    }
    cg_tensor *t[4];
    if (promote(n, ops, false, t)) return NULL;
    cg_tensor *r;
    CGPY_NOGIL_IF(cg_tensor_numel(t[0]), r = cg_binary_cross_entropy_with_logits(t[0], t[1], iw >= 0 ? t[iw] : NULL,
                                                                                 ipw >= 0 ? t[ipw] : NULL, red));
    cgpy_release_n(n, t);
    if (r && cg_tensor_dtype(r) != tdt && !cg_is_autocast_enabled()) { /* autocast: float32, as torch */
        cg_tensor *c = cg_to_dtype(r, tdt);
        cg_tensor_release(r);
        r = c;
    }
    return result(r);
}
static PyObject *py_bce_logits(FASTKW_ARGS) { return bce_logits(self, args, nargs, kw, false); }
static PyObject *py__bce_logits(FASTKW_ARGS) { return bce_logits(self, args, nargs, kw, true); }

/* ================================================================ kl_div(input, target, reduction=1, *, log_target=False) */

static PyObject *kl_div(FASTKW_ARGS, bool allow_str) {
    const char *fname = "kl_div";
    static const char *const names[] = {"input", "target", "reduction", "log_target", NULL};
    PyObject *v[4];
    cg_reduction red;
    bool log_target = false;
    if (PARSE(fname, names, 3, 2, v) || need2(v, fname, "input", "target") ||
        parse_reduction(v[2], allow_str, &red, fname) || opt_bool(v[3], &log_target))
        return NULL;
    if (!cg_dtype_is_floating(cg_tensor_dtype(cgpy_t(v[0]))) && !cg_dtype_is_floating(cg_tensor_dtype(cgpy_t(v[1])))) {
        PyErr_SetString(PyExc_RuntimeError, "kl_div: Integral inputs not supported.");
        return NULL;
    }
    cg_tensor *t[2];
    if (promote(2, v, true, t)) return NULL;
    cg_tensor *r;
    CGPY_NOGIL_IF(cg_tensor_numel(t[0]), r = cg_kl_div(t[0], t[1], red, log_target));
    cgpy_release_n(2, t);
    return result(r);
}
static PyObject *py_kl_div(FASTKW_ARGS) { return kl_div(self, args, nargs, kw, false); }
static PyObject *py__kl_div(FASTKW_ARGS) { return kl_div(self, args, nargs, kw, true); }

/* ================================================================ similarity */

/* cosine_similarity(x1, x2, dim=1, eps=1e-8) */
static PyObject *py_cosine_similarity(FASTKW_ARGS) {
    const char *fname = "cosine_similarity";
    static const char *const names[] = {"x1", "x2", "dim", "eps", NULL};
    PyObject *v[4];
    int64_t dim = 1;
    double eps = 1e-8;
    if (PARSE(fname, names, 4, 2, v) || need2(v, fname, "x1", "x2") || opt_int(v[2], &dim, "dim") ||
        opt_double(v[3], &eps, "eps"))
        return NULL;
    if (!cg_dtype_is_floating(cg_tensor_dtype(cgpy_t(v[0]))) && !cg_dtype_is_floating(cg_tensor_dtype(cgpy_t(v[1])))) {
        PyErr_Format(PyExc_RuntimeError, "%s: expected common dtype to be floating point, got %s and %s", fname,
                     cg_dtype_name(cg_tensor_dtype(cgpy_t(v[0]))), cg_dtype_name(cg_tensor_dtype(cgpy_t(v[1]))));
        return NULL;
    }
    cg_tensor *t[2];
    if (promote(2, v, true, t)) return NULL;
    cg_tensor *r = cg_cosine_similarity(t[0], t[1], dim, eps);
    cgpy_release_n(2, t);
    return result(r);
}

/* torch's broadcast error (checked first: the engine's composite ops would
 * report it from an inner op) */
static int check_broadcast(cg_tensor *a, cg_tensor *b, const char *fname) {
    int na = cg_tensor_ndim(a), nb = cg_tensor_ndim(b), n = na > nb ? na : nb;
    for (int i = 1; i <= n; i++) {
        int64_t sa = i <= na ? cg_tensor_shape(a)[na - i] : 1, sb = i <= nb ? cg_tensor_shape(b)[nb - i] : 1;
        if (sa != sb && sa != 1 && sb != 1) {
            PyErr_Format(cgpy_ShapeMismatch, "%s: The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                         "non-singleton dimension %d", fname, (long long)sa, (long long)sb, n - i);
            return -1;
        }
    }
    return 0;
}

/* pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False) */
static PyObject *py_pairwise_distance(FASTKW_ARGS) {
    const char *fname = "pairwise_distance";
    static const char *const names[] = {"x1", "x2", "p", "eps", "keepdim", NULL};
    PyObject *v[5];
    double p = 2.0, eps = 1e-6;
    bool keepdim = false;
    if (PARSE(fname, names, 5, 2, v) || need2(v, fname, "x1", "x2") || opt_double(v[2], &p, "p") ||
        opt_double(v[3], &eps, "eps") || opt_bool(v[4], &keepdim) || check_broadcast(cgpy_t(v[0]), cgpy_t(v[1]), fname))
        return NULL;
    cg_tensor *t[2];
    if (promote(2, v, true, t)) return NULL;
    cg_tensor *r = cg_pairwise_distance(t[0], t[1], p, eps, keepdim);
    cgpy_release_n(2, t);
    return result(r);
}

/* ================================================================ padding */

static int parse_pads(PyObject *o, int *n, int64_t *pads, const char *fname) {
    PyObject *seq = PySequence_Fast(o, "pad must be a sequence of ints");
    if (!seq) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'pad' must be tuple of ints, not %.100s", fname,
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    Py_ssize_t m = PySequence_Fast_GET_SIZE(seq);
    if (m > 2 * CG_MAX_DIMS) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_RuntimeError, "%s: %zd padding entries, more than twice the maximum number of dims", fname, m);
        return -1;
    }
    for (Py_ssize_t i = 0; i < m; i++) {
        PyObject *e = PySequence_Fast_GET_ITEM(seq, i);
        PyObject *idx = PyNumber_Index(e);
        if (!idx) {
            Py_DECREF(seq);
            PyErr_Format(PyExc_TypeError, "%s(): argument 'pad' must be tuple of ints, but found element of type %.100s",
                         fname, Py_TYPE(e)->tp_name);
            return -1;
        }
        pads[i] = PyLong_AsLongLong(idx);
        Py_DECREF(idx);
        if (pads[i] == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return -1;
        }
    }
    Py_DECREF(seq);
    *n = (int)m;
    return 0;
}

/* torch's checks on the pad list, with its exception types */
static int check_pads(cg_tensor *x, int n, const char *fname) {
    if (n % 2) {
        PyErr_Format(PyExc_RuntimeError, "%s: Padding length must be divisible by 2, got %d entries", fname, n);
        return -1;
    }
    if (n / 2 > cg_tensor_ndim(x)) {
        PyErr_Format(PyExc_RuntimeError, "%s: Padding length should be less than or equal to two times the input "
                     "dimension but got padding length %d and input of dimension %d", fname, n, cg_tensor_ndim(x));
        return -1;
    }
    return 0;
}

static PyObject *do_pad(cg_tensor *x, int n, const int64_t *pads, cg_pad_mode mode, double value, const char *fname) {
    cg_tensor *r;
    CGPY_NOGIL_IF(cg_tensor_numel(x), r = cg_pad(x, n, pads, mode, value));
    return result(r);
}

/* constant_pad_nd(input, pad, value=0) */
static PyObject *py_constant_pad_nd(FASTKW_ARGS) {
    const char *fname = "constant_pad_nd";
    static const char *const names[] = {"input", "pad", "value", NULL};
    PyObject *v[3];
    int64_t pads[2 * CG_MAX_DIMS];
    int n;
    double value = 0.0;
    if (PARSE(fname, names, 3, 2, v) || cgpy_need_tensor(v[0], fname, "input") || parse_pads(v[1], &n, pads, fname) ||
        opt_double(v[2], &value, "value"))
        return NULL;
    cg_tensor *x = cgpy_t(v[0]);
    if (check_pads(x, n, fname)) return NULL;
    return do_pad(x, n, pads, CG_PAD_CONSTANT, value, fname);
}

/* _pad(input, pad, mode='constant', value=None): torch.nn.functional.pad */
static PyObject *py_pad(FASTKW_ARGS) {
    const char *fname = "pad";
    static const char *const names[] = {"input", "pad", "mode", "value", NULL};
    PyObject *v[4];
    int64_t pads[2 * CG_MAX_DIMS];
    int n;
    double value = 0.0;
    if (PARSE(fname, names, 4, 2, v) || cgpy_need_tensor(v[0], fname, "input") || parse_pads(v[1], &n, pads, fname) ||
        opt_double(v[3], &value, "value"))
        return NULL;
    cg_tensor *x = cgpy_t(v[0]);
    cg_pad_mode mode = CG_PAD_CONSTANT;
    const char *ms = "constant";
    if (!is_none(v[2])) {
        if (!PyUnicode_Check(v[2])) {
            PyErr_Format(PyExc_TypeError, "pad(): argument 'mode' must be str, not %.100s", Py_TYPE(v[2])->tp_name);
            return NULL;
        }
        if (!(ms = PyUnicode_AsUTF8(v[2]))) return NULL;
        if (!strcmp(ms, "constant")) mode = CG_PAD_CONSTANT;
        else if (!strcmp(ms, "reflect")) mode = CG_PAD_REFLECT;
        else if (!strcmp(ms, "replicate")) mode = CG_PAD_REPLICATE;
        else if (!strcmp(ms, "circular")) mode = CG_PAD_CIRCULAR;
        else {
            PyErr_Format(PyExc_NotImplementedError, "pad: Unrecognised padding mode %s", ms);
            return NULL;
        }
    }
    if (check_pads(x, n, fname)) return NULL;
    if (mode != CG_PAD_CONSTANT) {
        if (!is_none(v[3]) && value != 0.0) {
            PyErr_Format(PyExc_RuntimeError, "pad: Padding mode \"%s\" doesn't take in value argument", ms);
            return NULL;
        }
        /* torch's non-constant padding supports (N,) C, *spatial inputs only */
        int nd = cg_tensor_ndim(x), ns = n / 2;
        if (!(n > 0 && ns <= 3 && (nd == ns + 1 || nd == ns + 2))) {
            PyErr_Format(PyExc_NotImplementedError,
                         "pad: Padding size %d is not supported for %dD input tensor. Supported combinations for "
                         "non-constant padding: 2D or 3D input with padding size 2, 3D or 4D input with padding size "
                         "4, 4D or 5D input with padding size 6", n, nd);
            return NULL;
        }
    }
    bool crop = false;
    for (int i = 0; i < n; i++) crop |= pads[i] < 0;
    if (mode == CG_PAD_CIRCULAR && crop) {
        /* torch crops first, then wraps around the cropped tensor */
        int64_t neg[2 * CG_MAX_DIMS], pos[2 * CG_MAX_DIMS];
        for (int i = 0; i < n; i++) neg[i] = pads[i] < 0 ? pads[i] : 0, pos[i] = pads[i] > 0 ? pads[i] : 0;
        cg_tensor *c = cg_pad(x, n, neg, CG_PAD_CONSTANT, 0.0);
        if (!c) return result(NULL);
        PyObject *r = do_pad(c, n, pos, mode, value, fname);
        cg_tensor_release(c);
        return r;
    }
    return do_pad(x, n, pads, mode, value, fname);
}

/* ================================================================ resampling */

/* A sequence of ns ints / floats (or None -> *given = false). */
static int parse_seq(PyObject *o, int ns, int64_t *iv, double *dv, bool *given, const char *what, const char *fname) {
    *given = false;
    if (is_none(o)) return 0;
    PyObject *seq = PySequence_Fast(o, "a sequence");
    if (!seq) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be a sequence, not %.100s", fname, what,
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    Py_ssize_t m = PySequence_Fast_GET_SIZE(seq);
    if (m != ns) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "%s: expected %d entries in %s (one per spatial dim), got %zd", fname, ns, what, m);
        return -1;
    }
    for (Py_ssize_t i = 0; i < m; i++) {
        PyObject *e = PySequence_Fast_GET_ITEM(seq, i);
        int bad = iv ? cgpy_parse_int(e, &iv[i], what) : cgpy_parse_double(e, &dv[i], what);
        if (bad) {
            Py_DECREF(seq);
            return -1;
        }
    }
    Py_DECREF(seq);
    *given = true;
    return 0;
}

/* _interpolate(input, mode, size=None, scale_factors=None, align_corners=False, antialias=False):
 * mode 0 nearest, 1 (bi/tri)linear, 2 bicubic (or those names); size and
 * scale_factors are sequences with one entry per spatial dim, exactly one given.
 * Floating inputs, and uint8 ones (bilinear / bicubic on 4-D input, antialias
 * only for uint8: Note [uint8 resampling]). */
static PyObject *py_interpolate(FASTKW_ARGS) {
    const char *fname = "interpolate";
    static const char *const names[] = {"input", "mode", "size", "scale_factors", "align_corners", "antialias", NULL};
    PyObject *v[6];
    int64_t mode = 0, size[3];
    double scales[3];
    bool has_size, has_scale, ac = false, aa = false;
    if (PARSE(fname, names, 6, 2, v) || cgpy_need_tensor(v[0], fname, "input")) return NULL;
    if (PyUnicode_Check(v[1])) {
        if (!PyUnicode_CompareWithASCIIString(v[1], "nearest")) mode = CG_INTERP_NEAREST;
        else if (!PyUnicode_CompareWithASCIIString(v[1], "linear") ||
                 !PyUnicode_CompareWithASCIIString(v[1], "bilinear") ||
                 !PyUnicode_CompareWithASCIIString(v[1], "trilinear"))
            mode = CG_INTERP_LINEAR;
        else if (!PyUnicode_CompareWithASCIIString(v[1], "bicubic")) mode = CG_INTERP_BICUBIC;
        else {
            PyErr_Format(PyExc_NotImplementedError, "interpolate: mode %R is not supported", v[1]);
            return NULL;
        }
    } else if (cgpy_parse_int(v[1], &mode, "mode")) {
        return NULL;
    }
    cg_tensor *x = cgpy_t(v[0]);
    int ns = cg_tensor_ndim(x) - 2;
    if (ns < 1 || ns > 3) {
        PyErr_Format(PyExc_NotImplementedError,
                     "interpolate: Only 3D, 4D and 5D input Tensors supported (got %dD)", cg_tensor_ndim(x));
        return NULL;
    }
    if (parse_seq(v[2], ns, size, NULL, &has_size, "size", fname) ||
        parse_seq(v[3], ns, NULL, scales, &has_scale, "scale_factors", fname) || opt_bool(v[4], &ac) ||
        opt_bool(v[5], &aa))
        return NULL;
    if (!cg_dtype_is_floating(cg_tensor_dtype(x)) && cg_tensor_dtype(x) != CG_DTYPE_U8) {
        PyErr_Format(PyExc_NotImplementedError, "interpolate: not implemented for %s input",
                     cg_dtype_name(cg_tensor_dtype(x)));
        return NULL;
    }
    cg_tensor *r;
    CGPY_NOGIL_IF(cg_tensor_numel(x), r = (aa ? cg_interpolate_aa : cg_interpolate)(x, (cg_interp_mode)mode,
                                                         has_size ? size : NULL, has_scale ? scales : NULL, ac));
    return result(r);
}

/* pixel_shuffle(input, upscale_factor) / pixel_unshuffle(input, downscale_factor) */
static PyObject *shuffle(FASTKW_ARGS, bool up) {
    const char *fname = up ? "pixel_shuffle" : "pixel_unshuffle";
    const char *const names[] = {"input", up ? "upscale_factor" : "downscale_factor", NULL};
    PyObject *v[2];
    int64_t f;
    if (PARSE(fname, names, 2, 2, v) || cgpy_need_tensor(v[0], fname, "input") || cgpy_parse_int(v[1], &f, names[1]))
        return NULL;
    cg_tensor *x = cgpy_t(v[0]);
    cg_tensor *r = up ? cg_pixel_shuffle(x, f) : cg_pixel_unshuffle(x, f);
    if (r && !up && cg_tensor_numel(x) == 0) { /* torch returns a copy of an empty input unchanged */
        cg_tensor_release(r);
        r = cg_clone(x);
    }
    return result(r);
}
static PyObject *py_pixel_shuffle(FASTKW_ARGS) { return shuffle(self, args, nargs, kw, true); }
static PyObject *py_pixel_unshuffle(FASTKW_ARGS) { return shuffle(self, args, nargs, kw, false); }

/* ================================================================ one_hot(input, num_classes=-1) */

static PyObject *py_one_hot(FASTKW_ARGS) {
    const char *fname = "one_hot";
    static const char *const names[] = {"input", "num_classes", NULL};
    PyObject *v[2];
    int64_t nc = -1;
    if (PARSE(fname, names, 2, 1, v) || cgpy_need_tensor(v[0], fname, "input") ||
        opt_int(v[1], &nc, "num_classes"))
        return NULL;
    return result(cg_one_hot(cgpy_t(v[0]), nc));
}

/* ================================================================ attention */

/* k (*, Hk, S, E) repeated group-wise to (*, Hk * g, S, E) (torch's
 * repeat_interleave on dim -3 for enable_gqa). New ref. */
static cg_tensor *gqa_repeat(cg_tensor *k, int64_t g) {
    int nd = cg_tensor_ndim(k);
    const int64_t *sh = cg_tensor_shape(k);
    int64_t ex[CG_MAX_DIMS], out[CG_MAX_DIMS];
    cg_tensor *u = cg_unsqueeze(k, -3);
    if (!u) return NULL;
    for (int i = 0; i < nd - 2; i++) ex[i] = sh[i], out[i] = sh[i];
    ex[nd - 2] = g, ex[nd - 1] = sh[nd - 2], ex[nd] = sh[nd - 1];
    out[nd - 3] = sh[nd - 3] * g, out[nd - 2] = sh[nd - 2], out[nd - 1] = sh[nd - 1];
    cg_tensor *e = cg_expand(u, nd + 1, ex);
    cg_tensor_release(u);
    if (!e) return NULL;
    cg_tensor *r = cg_reshape(e, nd, out);
    cg_tensor_release(e);
    return r;
}

/* _scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
 *                               is_causal=False, *, scale=None, enable_gqa=False) */
static PyObject *py_sdpa(FASTKW_ARGS) {
    const char *fname = "scaled_dot_product_attention";
    static const char *const names[] = {"query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale",
                                        "enable_gqa", NULL};
    PyObject *v[8];
    double p = 0.0, scale = 0.0;
    bool causal = false, gqa = false;
    cg_tensor *mask;
    if (PARSE(fname, names, 6, 3, v) || need2(v, fname, "query", "key") || cgpy_need_tensor(v[2], fname, "value") ||
        opt_tensor(v[3], &mask, fname, "attn_mask") || opt_double(v[4], &p, "dropout_p") || opt_bool(v[5], &causal) ||
        opt_double(v[6], &scale, "scale") || opt_bool(v[7], &gqa))
        return NULL;
    cg_tensor *q = cgpy_t(v[0]), *k = cgpy_t(v[1]), *val = cgpy_t(v[2]);
    cg_tensor *tmp[4] = {NULL, NULL, NULL, NULL}; /* new refs: q, k, v, mask replacements */
    PyObject *res = NULL;
    if (mask && cg_tensor_dtype(mask) != CG_DTYPE_BOOL && cg_tensor_dtype(mask) != cg_tensor_dtype(q)) {
        if (cg_tensor_dtype(mask) != CG_DTYPE_F32 || !cg_dtype_is_floating(cg_tensor_dtype(q))) {
            PyErr_Format(PyExc_RuntimeError, "%s: Expected attn_mask dtype to be bool or float or to match query dtype, "
                         "but got attn_mask.dtype: %s and query.dtype: %s instead.", fname,
                         cg_dtype_name(cg_tensor_dtype(mask)), cg_dtype_name(cg_tensor_dtype(q)));
            return NULL;
        }
        if (!(mask = tmp[3] = cg_to_dtype(mask, cg_tensor_dtype(q)))) return cgpy_raise();
    }
    int nq = cg_tensor_ndim(q), nk = cg_tensor_ndim(k);
    if (gqa && nq >= 3 && nk >= 3 && cg_tensor_ndim(val) >= 3) {
        int64_t hq = cg_tensor_shape(q)[nq - 3], hk = cg_tensor_shape(k)[nk - 3],
                hv = cg_tensor_shape(val)[cg_tensor_ndim(val) - 3];
        if (hk <= 0 || hv <= 0 || hq % hk || hq % hv) {
            PyErr_Format(PyExc_RuntimeError, "%s: number of heads in key/value (%lld, %lld) must divide the number of "
                         "heads in query (%lld)", fname, (long long)hk, (long long)hv, (long long)hq);
            goto done;
        }
        if (hq != hk && !(k = tmp[1] = gqa_repeat(k, hq / hk))) goto fail;
        if (hq != hv && !(val = tmp[2] = gqa_repeat(val, hq / hv))) goto fail;
    }
    if (!is_none(v[6]) && scale <= 0) {
        /* the engine reads scale <= 0 as "default": fold an explicit one into q */
        cg_tensor *s = cg_scalar(scale, cg_tensor_dtype(q));
        if (!s) goto fail;
        q = tmp[0] = cg_mul(q, s);
        cg_tensor_release(s);
        if (!q) goto fail;
        scale = 1.0;
    }
    cg_tensor *r;
    CGPY_NOGIL_IF(cg_tensor_numel(q) + cg_tensor_numel(k), r = cg_scaled_dot_product_attention(q, k, val, mask, p,
                                                                                              causal, scale));
    res = result(r);
    goto done;
fail:
    cgpy_raise();
done:
    for (int i = 0; i < 4; i++)
        if (tmp[i]) cg_tensor_release(tmp[i]);
    return res;
}

/* ================================================================ tables */

PyMethodDef cgpy_nn_func_methods[] = {
    CGPY_TABLE_END,
};
PyMethodDef cgpy_nn_func_functions[] = {
    /* public: torch has them at top level */
    CGPY_FASTKW("binary_cross_entropy_with_logits", py_bce_logits),
    CGPY_FASTKW("kl_div", py_kl_div),
    CGPY_FASTKW("cosine_similarity", py_cosine_similarity),
    CGPY_FASTKW("pairwise_distance", py_pairwise_distance),
    CGPY_FASTKW("constant_pad_nd", py_constant_pad_nd),
    CGPY_FASTKW("pixel_shuffle", py_pixel_shuffle),
    CGPY_FASTKW("pixel_unshuffle", py_pixel_unshuffle),
    /* private: cgrad.nn.functional's kernels */
    CGPY_FASTKW("_cross_entropy", py_cross_entropy),
    CGPY_FASTKW("_nll_loss", py_nll_loss),
    CGPY_FASTKW("_mse_loss", py_mse_loss),
    CGPY_FASTKW("_l1_loss", py_l1_loss),
    CGPY_FASTKW("_smooth_l1_loss", py_smooth_l1_loss),
    CGPY_FASTKW("_huber_loss", py_huber_loss),
    CGPY_FASTKW("_binary_cross_entropy", py_binary_cross_entropy),
    CGPY_FASTKW("_binary_cross_entropy_with_logits", py__bce_logits),
    CGPY_FASTKW("_kl_div", py__kl_div),
    CGPY_FASTKW("_pad", py_pad),
    CGPY_FASTKW("_interpolate", py_interpolate),
    CGPY_FASTKW("_one_hot", py_one_hot),
    CGPY_FASTKW("_scaled_dot_product_attention", py_sdpa),
    CGPY_TABLE_END,
};
