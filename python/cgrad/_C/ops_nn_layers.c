/* ops_nn_layers.c — bindings of the engine's layer kernels: convolutions
 * (padding as ints or 'same' / 'valid'), transposed convolutions, max / avg /
 * adaptive pooling, batch / instance / layer / group / rms norm, dropout
 * (plain, feature, alpha, with in-place forms) and embedding (+ renorm_).
 * Ops torch has at top level (torch.conv2d, torch.max_pool1d_with_indices,
 * torch.batch_norm, ...) are public with torch's signature; the others are
 * private `_<name>` functions that cgrad.nn.functional calls. Module
 * functions only: torch has no Tensor methods for these. */
#include "ops_math.h"

#include <math.h>

#include <string.h>

#define FASTKW_ARGS PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw
#define PARSE(fname, names, npos, nreq, v)                                    \
    (cgpy_parse_fastkw(self, args, nargs, kw, fname, names, npos, nreq, v) || \
     cgpy_need_tensor(v[0], fname, (names)[0]))

/* Engine errors as torch raises them here: value / dtype problems are
 * RuntimeErrors; index errors (embedding) stay IndexError. */
static PyObject *result(cg_tensor *r) { return cgpy_result_rt(r, true); }
static PyObject *raise_engine(void) { return PyErr_Occurred() ? NULL : cgpy_raise_rt(true); }

/* ================================================================ arguments */

/* `o` as n ints: an int (repeated) or a sequence of 1 or n ints. Returns 0;
 * 1 with out filled with dflt when `o` is absent (NULL), or None / an empty
 * sequence and empty_ok (pooling's stride=() / None); -1 raised. */
static int int_list(PyObject *o, int n, int64_t *out, int64_t dflt, bool empty_ok, const char *fname, const char *arg) {
    if (!o || (o == Py_None && empty_ok)) {
        for (int i = 0; i < n; i++) out[i] = dflt;
        return 1;
    }
    if (PyIndex_Check(o) && !PyBool_Check(o)) {
        if (cgpy_arg_int(o, fname, arg, &out[0])) return -1;
        for (int i = 1; i < n; i++) out[i] = out[0];
        return 0;
    }
    if (cgpy_is_tensor(o) || PyUnicode_Check(o) || !PySequence_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be tuple of ints, not %.100s", fname, arg,
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    PyObject *seq = PySequence_Fast(o, "expected a sequence");
    if (!seq) return -1;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    int rc = 0;
    if (len == 0 && empty_ok) {
        for (int i = 0; i < n; i++) out[i] = dflt;
        rc = 1;
    } else if (len != 1 && len != n) {
        PyErr_Format(PyExc_RuntimeError, "%s(): expected %s to be a single integer value or a list of %d values, but got %R",
                     fname, arg, n, o);
        rc = -1;
    } else {
        for (Py_ssize_t i = 0; i < len && rc == 0; i++)
            if (cgpy_arg_int(PySequence_Fast_GET_ITEM(seq, i), fname, arg, &out[i])) rc = -1;
        for (int i = (int)len; i < n && rc == 0; i++) out[i] = out[0];
    }
    Py_DECREF(seq);
    return rc;
}

/* An optional tensor argument: NULL / None -> NULL, a tensor -> borrowed. */
static int opt_tensor(PyObject *o, cg_tensor **t, const char *fname, const char *arg) {
    *t = NULL;
    if (!o || o == Py_None) return 0;
    if (cgpy_need_tensor(o, fname, arg)) return -1;
    *t = cgpy_t(o);
    return 0;
}

static int opt_bool(PyObject *o, bool *b) {
    if (!o) return 0;
    int r = PyObject_IsTrue(o);
    if (r < 0) return -1;
    *b = r;
    return 0;
}

static int opt_double(PyObject *o, double *v, const char *what) {
    return o && o != Py_None ? cgpy_parse_double(o, v, what) : 0;
}

/* A normalized_shape argument (int or sequence of ints). */
static int norm_shape(PyObject *o, int *nd, int64_t *shape, const char *fname) {
    if (PyIndex_Check(o) && !PyBool_Check(o)) {
        *nd = 1;
        return cgpy_arg_int(o, fname, "normalized_shape", &shape[0]);
    }
    if (cgpy_is_tensor(o) || !PySequence_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'normalized_shape' must be tuple of ints, not %.100s", fname,
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    PyObject *seq = PySequence_Fast(o, "expected a sequence");
    if (!seq) return -1;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    int rc = 0;
    if (len > CG_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "%s(): normalized_shape has %zd dims; the maximum is %d", fname, len,
                     CG_MAX_DIMS);
        rc = -1;
    }
    for (Py_ssize_t i = 0; i < len && rc == 0; i++)
        if (cgpy_arg_int(PySequence_Fast_GET_ITEM(seq, i), fname, "normalized_shape", &shape[i])) rc = -1;
    Py_DECREF(seq);
    *nd = (int)len;
    return rc;
}

#define NUMEL(t) cg_tensor_numel(t)

/* ================================================================ convolutions */

typedef cg_tensor *(*conv_fn)(cg_tensor *, cg_tensor *, cg_tensor *, const int64_t *, const int64_t *,
                              const int64_t *, int64_t);
typedef cg_tensor *(*conv_same_fn)(cg_tensor *, cg_tensor *, cg_tensor *, const int64_t *, const int64_t *, int64_t);

/* convNd(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1);
 * padding: int, ints, 'same' or 'valid'. */
static PyObject *conv_common(FASTKW_ARGS, int nsp, conv_fn fn, conv_same_fn same_fn, const char *fname) {
    static const char *const names[] = {"input", "weight", "bias", "stride", "padding", "dilation", "groups", NULL};
    PyObject *v[7];
    int64_t stride[3], pad[3] = {0, 0, 0}, dil[3], groups = 1;
    cg_tensor *bias;
    bool same = false;
    if (PARSE(fname, names, 7, 2, v) || cgpy_need_tensor(v[1], fname, "weight") || opt_tensor(v[2], &bias, fname, "bias") ||
        int_list(v[3], nsp, stride, 1, false, fname, "stride") < 0 ||
        int_list(v[5], nsp, dil, 1, false, fname, "dilation") < 0 || (v[6] && cgpy_arg_int(v[6], fname, "groups",
            &groups)))
        return NULL;
    if (v[4] && PyUnicode_Check(v[4])) {
        if (!PyUnicode_CompareWithASCIIString(v[4], "same")) same = true;
        else if (PyUnicode_CompareWithASCIIString(v[4], "valid")) {
            PyErr_Format(PyExc_RuntimeError, "%s(): Invalid padding string: '%U'", fname, v[4]);
            return NULL;
        }
    } else if (int_list(v[4], nsp, pad, 0, false, fname, "padding") < 0) {
        return NULL;
    }
    cg_tensor *x = cgpy_t(v[0]), *w = cgpy_t(v[1]), *r;
    if (same) CGPY_NOGIL_IF(NUMEL(x), r = same_fn(x, w, bias, stride, dil, groups));
    else CGPY_NOGIL_IF(NUMEL(x), r = fn(x, w, bias, stride, pad, dil, groups));
    return result(r);
}
static PyObject *f_conv1d(FASTKW_ARGS) { return conv_common(self, args, nargs, kw, 1, cg_conv1d, cg_conv1d_same, "conv1d"); }
static PyObject *f_conv2d(FASTKW_ARGS) { return conv_common(self, args, nargs, kw, 2, cg_conv2d, cg_conv2d_same, "conv2d"); }
static PyObject *f_conv3d(FASTKW_ARGS) { return conv_common(self, args, nargs, kw, 3, cg_conv3d, cg_conv3d_same, "conv3d"); }

typedef cg_tensor *(*convt_fn)(cg_tensor *, cg_tensor *, cg_tensor *, const int64_t *, const int64_t *,
                               const int64_t *, int64_t, const int64_t *);

/* conv_transposeNd(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1) */
static PyObject *convt_common(FASTKW_ARGS, int nsp, convt_fn fn, const char *fname) {
    static const char *const names[] = {"input", "weight", "bias", "stride", "padding", "output_padding",
                                        "groups", "dilation", NULL};
    PyObject *v[8];
    int64_t stride[3], pad[3], opad[3], dil[3], groups = 1;
    cg_tensor *bias;
    if (PARSE(fname, names, 8, 2, v) || cgpy_need_tensor(v[1], fname, "weight") || opt_tensor(v[2], &bias, fname, "bias") ||
        int_list(v[3], nsp, stride, 1, false, fname, "stride") < 0 ||
        int_list(v[4], nsp, pad, 0, false, fname, "padding") < 0 ||
        int_list(v[5], nsp, opad, 0, false, fname, "output_padding") < 0 ||
        (v[6] && cgpy_arg_int(v[6], fname, "groups", &groups)) || int_list(v[7], nsp, dil, 1, false, fname,
            "dilation") < 0)
        return NULL;
    cg_tensor *x = cgpy_t(v[0]), *r;
    CGPY_NOGIL_IF(NUMEL(x), r = fn(x, cgpy_t(v[1]), bias, stride, pad, opad, groups, dil));
    return result(r);
}
static PyObject *f_conv_transpose1d(FASTKW_ARGS) {
    return convt_common(self, args, nargs, kw, 1, cg_conv_transpose1d, "conv_transpose1d");
}
static PyObject *f_conv_transpose2d(FASTKW_ARGS) {
    return convt_common(self, args, nargs, kw, 2, cg_conv_transpose2d, "conv_transpose2d");
}
static PyObject *f_conv_transpose3d(FASTKW_ARGS) {
    return convt_common(self, args, nargs, kw, 3, cg_conv_transpose3d, "conv_transpose3d");
}

/* ================================================================ pooling */

/* (values, indices) as a tuple; both stolen (NULL-safe). */
static PyObject *pair(cg_tensor *a, cg_tensor *b) {
    PyObject *pa = cgpy_wrap(a);
    if (!pa) {
        cg_tensor_release(b);
        return NULL;
    }
    PyObject *pb = cgpy_wrap(b);
    if (!pb) {
        Py_DECREF(pa);
        return NULL;
    }
    PyObject *t = PyTuple_Pack(2, pa, pb);
    Py_DECREF(pa);
    Py_DECREF(pb);
    return t;
}

typedef cg_status (*maxpool_fn)(cg_tensor *, const int64_t *, const int64_t *, const int64_t *, const int64_t *, bool,
                                cg_tensor **, cg_tensor **);

/* max_poolNd(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False) */
static PyObject *maxpool_common(FASTKW_ARGS, int nsp, maxpool_fn fn, bool with_indices, const char *fname) {
    static const char *const names[] = {"input", "kernel_size", "stride", "padding", "dilation", "ceil_mode", NULL};
    PyObject *v[6];
    int64_t ks[3], st[3], pad[3], dil[3];
    bool ceil_mode = false;
    int no_stride;
    if (PARSE(fname, names, 6, 2, v) || int_list(v[1], nsp, ks, 0, false, fname, "kernel_size") < 0 ||
        (no_stride = int_list(v[2], nsp, st, 0, true, fname, "stride")) < 0 ||
        int_list(v[3], nsp, pad, 0, false, fname, "padding") < 0 ||
        int_list(v[4], nsp, dil, 1, false, fname, "dilation") < 0 || opt_bool(v[5], &ceil_mode))
        return NULL;
    cg_tensor *x = cgpy_t(v[0]), *out = NULL, *idx = NULL;
    cg_status s;
    CGPY_NOGIL_IF(NUMEL(x), s = fn(x, ks, no_stride ? NULL : st, pad, dil, ceil_mode, &out, with_indices ? &idx : NULL));
    if (s != CG_OK) return raise_engine();
    return with_indices ? pair(out, idx) : cgpy_wrap(out);
}
static PyObject *f_max_pool1d(FASTKW_ARGS) {
    return maxpool_common(self, args, nargs, kw, 1, cg_max_pool1d, false, "max_pool1d");
}
static PyObject *f_max_pool2d(FASTKW_ARGS) {
    return maxpool_common(self, args, nargs, kw, 2, cg_max_pool2d, false, "max_pool2d");
}
static PyObject *f_max_pool1d_with_indices(FASTKW_ARGS) {
    return maxpool_common(self, args, nargs, kw, 1, cg_max_pool1d, true, "max_pool1d_with_indices");
}
static PyObject *f__max_pool2d_with_indices(FASTKW_ARGS) {
    return maxpool_common(self, args, nargs, kw, 2, cg_max_pool2d, true, "max_pool2d_with_indices");
}
static PyObject *f_max_pool3d(FASTKW_ARGS) {
    return maxpool_common(self, args, nargs, kw, 3, cg_max_pool3d, false, "max_pool3d");
}
static PyObject *f__max_pool3d_with_indices(FASTKW_ARGS) {
    return maxpool_common(self, args, nargs, kw, 3, cg_max_pool3d, true, "max_pool3d_with_indices");
}

typedef cg_tensor *(*avgpool_fn)(cg_tensor *, const int64_t *, const int64_t *, const int64_t *, bool, bool, int64_t);

/* avg_poolNd(input, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True[, divisor_override=None]) */
static PyObject *avgpool_common(FASTKW_ARGS, int nsp, avgpool_fn fn, const char *fname) {
    static const char *const names[] = {"input", "kernel_size", "stride", "padding", "ceil_mode",
                                        "count_include_pad", "divisor_override", NULL};
    PyObject *v[7];
    int64_t ks[3], st[3], pad[3], div = 0;
    bool ceil_mode = false, count_pad = true;
    int no_stride;
    int npos = nsp == 1 ? 6 : 7; /* torch.avg_pool1d has no divisor_override */
    if (PARSE(fname, names, npos, 2, v) || int_list(v[1], nsp, ks, 0, false, fname, "kernel_size") < 0 ||
        (no_stride = int_list(v[2], nsp, st, 0, true, fname, "stride")) < 0 ||
        int_list(v[3], nsp, pad, 0, false, fname, "padding") < 0 || opt_bool(v[4], &ceil_mode) ||
        opt_bool(v[5], &count_pad))
        return NULL;
    if (v[6] && v[6] != Py_None) {
        if (nsp == 1) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument 'divisor_override'", fname);
            return NULL;
        }
        if (cgpy_arg_int(v[6], fname, "divisor_override", &div)) return NULL;
        if (div == 0) {
            PyErr_Format(PyExc_RuntimeError, "%s(): divisor must be not zero", fname);
            return NULL;
        }
    }
    cg_tensor *x = cgpy_t(v[0]), *r;
    CGPY_NOGIL_IF(NUMEL(x), r = fn(x, ks, no_stride ? NULL : st, pad, ceil_mode, count_pad, div));
    return result(r);
}
static PyObject *f_avg_pool1d(FASTKW_ARGS) { return avgpool_common(self, args, nargs, kw, 1, cg_avg_pool1d, "avg_pool1d"); }
static PyObject *f__avg_pool2d(FASTKW_ARGS) { return avgpool_common(self, args, nargs, kw, 2, cg_avg_pool2d, "avg_pool2d"); }
static PyObject *f__avg_pool3d(FASTKW_ARGS) { return avgpool_common(self, args, nargs, kw, 3, cg_avg_pool3d, "avg_pool3d"); }

/* adaptive_{avg,max}_poolNd(input, output_size) */
static PyObject *adaptive_common(FASTKW_ARGS, int nsp, bool is_max, const char *fname) {
    static const char *const names[] = {"input", "output_size", NULL};
    PyObject *v[2];
    int64_t os[3];
    if (PARSE(fname, names, 2, 2, v) || int_list(v[1], nsp, os, 0, false, fname, "output_size") < 0) return NULL;
    cg_tensor *x = cgpy_t(v[0]);
    if (!is_max) {
        cg_tensor *r;
        CGPY_NOGIL_IF(NUMEL(x), r = nsp == 1   ? cg_adaptive_avg_pool1d(x, os)
                                    : nsp == 2 ? cg_adaptive_avg_pool2d(x, os)
                                               : cg_adaptive_avg_pool3d(x, os));
        return result(r);
    }
    cg_tensor *out = NULL, *idx = NULL;
    cg_status s;
    CGPY_NOGIL_IF(NUMEL(x), s = nsp == 1   ? cg_adaptive_max_pool1d(x, os, &out, &idx)
                                : nsp == 2 ? cg_adaptive_max_pool2d(x, os, &out, &idx)
                                           : cg_adaptive_max_pool3d(x, os, &out, &idx));
    if (s != CG_OK) return raise_engine();
    return pair(out, idx);
}
static PyObject *f_adaptive_avg_pool1d(FASTKW_ARGS) {
    return adaptive_common(self, args, nargs, kw, 1, false, "adaptive_avg_pool1d");
}
static PyObject *f__adaptive_avg_pool2d(FASTKW_ARGS) {
    return adaptive_common(self, args, nargs, kw, 2, false, "adaptive_avg_pool2d");
}
static PyObject *f_adaptive_max_pool1d(FASTKW_ARGS) {
    return adaptive_common(self, args, nargs, kw, 1, true, "adaptive_max_pool1d");
}
static PyObject *f__adaptive_max_pool2d(FASTKW_ARGS) {
    return adaptive_common(self, args, nargs, kw, 2, true, "adaptive_max_pool2d");
}
static PyObject *f__adaptive_avg_pool3d(FASTKW_ARGS) {
    return adaptive_common(self, args, nargs, kw, 3, false, "adaptive_avg_pool3d");
}
static PyObject *f__adaptive_max_pool3d(FASTKW_ARGS) {
    return adaptive_common(self, args, nargs, kw, 3, true, "adaptive_max_pool3d");
}

/* ================================================================ normalization */

/* batch_norm / instance_norm(input, weight, bias, running_mean, running_var,
 * training | use_input_stats, momentum, eps, cudnn_enabled=True) */
static PyObject *bn_common(FASTKW_ARGS, bool instance, const char *fname) {
    static const char *const bn_names[] = {"input", "weight", "bias", "running_mean", "running_var", "training",
                                           "momentum", "eps", "cudnn_enabled", NULL};
    static const char *const in_names[] = {"input", "weight", "bias", "running_mean", "running_var",
                                           "use_input_stats", "momentum", "eps", "cudnn_enabled", NULL};
    PyObject *v[9];
    cg_tensor *w, *b, *rm, *rv;
    bool training = false;
    double momentum = 0.1, eps = 1e-5;
    const char *const *names = instance ? in_names : bn_names;
    if (PARSE(fname, names, 9, 8, v) || opt_tensor(v[1], &w, fname, "weight") ||
        opt_tensor(v[2], &b, fname, "bias") || opt_tensor(v[3], &rm, fname, "running_mean") ||
        opt_tensor(v[4], &rv, fname, "running_var") || opt_bool(v[5], &training) ||
        opt_double(v[6], &momentum, "momentum") || opt_double(v[7], &eps, "eps"))
        return NULL;
    cg_tensor *x = cgpy_t(v[0]), *r;
    if (instance) CGPY_NOGIL_IF(NUMEL(x), r = cg_instance_norm(x, rm, rv, w, b, training, momentum, eps));
    else CGPY_NOGIL_IF(NUMEL(x), r = cg_batch_norm(x, rm, rv, w, b, training, momentum, eps));
    return result(r);
}
static PyObject *f_batch_norm(FASTKW_ARGS) { return bn_common(self, args, nargs, kw, false, "batch_norm"); }
static PyObject *f_instance_norm(FASTKW_ARGS) { return bn_common(self, args, nargs, kw, true, "instance_norm"); }

/* layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True) */
static PyObject *f_layer_norm(FASTKW_ARGS) {
    static const char *const names[] = {"input", "normalized_shape", "weight", "bias", "eps", "cudnn_enable", NULL};
    PyObject *v[6];
    int nd;
    int64_t shape[CG_MAX_DIMS];
    cg_tensor *w, *b;
    double eps = 1e-5;
    if (PARSE("layer_norm", names, 6, 2, v) || norm_shape(v[1], &nd, shape, "layer_norm") ||
        opt_tensor(v[2], &w, "layer_norm", "weight") || opt_tensor(v[3], &b, "layer_norm", "bias") ||
        opt_double(v[4], &eps, "eps"))
        return NULL;
    cg_tensor *x = cgpy_t(v[0]), *r;
    CGPY_NOGIL_IF(NUMEL(x), r = cg_layer_norm(x, nd, shape, w, b, eps));
    return result(r);
}

/* group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True) */
static PyObject *f_group_norm(FASTKW_ARGS) {
    static const char *const names[] = {"input", "num_groups", "weight", "bias", "eps", "cudnn_enabled", NULL};
    PyObject *v[6];
    int64_t groups;
    cg_tensor *w, *b;
    double eps = 1e-5;
    if (PARSE("group_norm", names, 6, 2, v) || cgpy_arg_int(v[1], "group_norm", "num_groups", &groups) ||
        opt_tensor(v[2], &w, "group_norm", "weight") || opt_tensor(v[3], &b, "group_norm", "bias") ||
        opt_double(v[4], &eps, "eps"))
        return NULL;
    cg_tensor *x = cgpy_t(v[0]), *r;
    CGPY_NOGIL_IF(NUMEL(x), r = cg_group_norm(x, groups, w, b, eps));
    return result(r);
}

/* rms_norm(input, normalized_shape, weight=None, eps=None) */
static PyObject *f_rms_norm(FASTKW_ARGS) {
    static const char *const names[] = {"input", "normalized_shape", "weight", "eps", NULL};
    PyObject *v[4];
    int nd;
    int64_t shape[CG_MAX_DIMS];
    cg_tensor *w;
    double eps = NAN; /* None: the dtype's epsilon */
    if (PARSE("rms_norm", names, 4, 2, v) || norm_shape(v[1], &nd, shape, "rms_norm") ||
        opt_tensor(v[2], &w, "rms_norm", "weight") || opt_double(v[3], &eps, "eps"))
        return NULL;
    cg_tensor *x = cgpy_t(v[0]), *r;
    CGPY_NOGIL_IF(NUMEL(x), r = cg_rms_norm(x, nd, shape, w, eps));
    return result(r);
}

/* ================================================================ dropout */

typedef cg_tensor *(*dropout_fn)(cg_tensor *, double, bool);

/* <kind>_dropout(input, p, train) and the in-place <kind>_dropout_ */
static PyObject *dropout_common(FASTKW_ARGS, dropout_fn fn, bool inplace, const char *fname) {
    static const char *const names[] = {"input", "p", "train", NULL};
    PyObject *v[3];
    double p;
    bool train = false;
    if (PARSE(fname, names, 3, 3, v) || cgpy_parse_double(v[1], &p, "p") || opt_bool(v[2], &train)) return NULL;
    cg_tensor *x = cgpy_t(v[0]);
    if (!inplace) return result(fn(x, p, train));
    cg_tensor *xin;
    if (cgpy_inplace_begin(x, false, fname, &xin)) return NULL;
    cg_tensor *r = fn(xin, p, train);
    if (r == xin) { /* not training or p == 0: nothing to write */
        cg_tensor_release(r);
        cg_tensor_release(xin);
        Py_INCREF(v[0]);
        return v[0];
    }
    return cgpy_inplace_end(v[0], xin, r, true);
}
static PyObject *f_dropout(FASTKW_ARGS) { return dropout_common(self, args, nargs, kw, cg_dropout, false, "dropout"); }
static PyObject *f_dropout_(FASTKW_ARGS) { return dropout_common(self, args, nargs, kw, cg_dropout, true, "dropout_"); }
static PyObject *f_feature_dropout(FASTKW_ARGS) {
    return dropout_common(self, args, nargs, kw, cg_feature_dropout, false, "feature_dropout");
}
static PyObject *f_feature_dropout_(FASTKW_ARGS) {
    return dropout_common(self, args, nargs, kw, cg_feature_dropout, true, "feature_dropout_");
}
static PyObject *f_alpha_dropout(FASTKW_ARGS) {
    return dropout_common(self, args, nargs, kw, cg_alpha_dropout, false, "alpha_dropout");
}
static PyObject *f_alpha_dropout_(FASTKW_ARGS) {
    return dropout_common(self, args, nargs, kw, cg_alpha_dropout, true, "alpha_dropout_");
}

/* ================================================================ embedding */

/* embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False) */
static PyObject *f_embedding(FASTKW_ARGS) {
    static const char *const names[] = {"weight", "indices", "padding_idx", "scale_grad_by_freq", "sparse", NULL};
    PyObject *v[5];
    int64_t pad = -1;
    bool by_freq = false, sparse = false;
    if (PARSE("embedding", names, 5, 2, v) || cgpy_need_tensor(v[1], "embedding", "indices") ||
        (v[2] && cgpy_arg_int(v[2], "embedding", "padding_idx", &pad)) || opt_bool(v[3], &by_freq) || opt_bool(v[4],
            &sparse))
        return NULL;
    if (by_freq || sparse) {
        PyErr_Format(PyExc_NotImplementedError, "embedding(): %s=True is not supported by cgrad",
                     by_freq ? "scale_grad_by_freq" : "sparse");
        return NULL;
    }
    cg_tensor *w = cgpy_t(v[0]), *r;
    CGPY_NOGIL_IF(NUMEL(cgpy_t(v[1])) * (cg_tensor_ndim(w) == 2 ? cg_tensor_shape(w)[1] : 1),
                  r = cg_embedding(w, cgpy_t(v[1]), pad));
    return result(r);
}

/* embedding_renorm_(input, indices, max_norm, norm_type): in place, no grad */
static PyObject *f_embedding_renorm_(FASTKW_ARGS) {
    static const char *const names[] = {"input", "indices", "max_norm", "norm_type", NULL};
    PyObject *v[4];
    double max_norm, norm_type;
    if (PARSE("embedding_renorm_", names, 4, 4, v) || cgpy_need_tensor(v[1], "embedding_renorm_", "indices") ||
        cgpy_parse_double(v[2], &max_norm, "max_norm") || cgpy_parse_double(v[3], &norm_type, "norm_type"))
        return NULL;
    cg_tensor *w = cgpy_t(v[0]);
    if (cgpy_check_leaf(w, "embedding_renorm_")) return NULL;
    if (cg_embedding_renorm_(w, cgpy_t(v[1]), max_norm, norm_type) != CG_OK) return raise_engine();
    Py_INCREF(v[0]);
    return v[0];
}

/* ================================================================ recurrent layers */

/* _lstm_layer(xp, h0, c0, w_hh, reverse=False) -> (out, h_n, c_n): one direction of an
 * LSTM layer over the whole sequence (cg_lstm_layer; nn.LSTM's fast path) */
static PyObject *f__lstm_layer(FASTKW_ARGS) {
    static const char *const names[] = {"xp", "h0", "c0", "w_hh", "reverse", NULL};
    PyObject *v[5];
    bool reverse = false;
    if (PARSE("_lstm_layer", names, 5, 4, v) || cgpy_need_tensor(v[1], "_lstm_layer", "h0") ||
        cgpy_need_tensor(v[2], "_lstm_layer", "c0") || cgpy_need_tensor(v[3], "_lstm_layer", "w_hh") ||
        opt_bool(v[4], &reverse))
        return NULL;
    cg_tensor *xp = cgpy_t(v[0]), *h0 = cgpy_t(v[1]), *c0 = cgpy_t(v[2]), *w = cgpy_t(v[3]);
    cg_tensor *out = NULL, *hn = NULL, *cn = NULL;
    cg_status st;
    CGPY_NOGIL_IF(NUMEL(xp), st = cg_lstm_layer(xp, h0, c0, w, reverse, &out, &hn, &cn));
    if (st != CG_OK) return raise_engine();
    PyObject *items[3] = {cgpy_wrap(out), NULL, NULL};
    items[1] = items[0] ? cgpy_wrap(hn) : (cg_tensor_release(hn), NULL);
    items[2] = items[1] ? cgpy_wrap(cn) : (cg_tensor_release(cn), NULL);
    PyObject *res = items[2] ? PyTuple_Pack(3, items[0], items[1], items[2]) : NULL;
    for (int i = 0; i < 3; i++) Py_XDECREF(items[i]);
    return res;
}

/* ================================================================ tables */

PyMethodDef cgpy_nn_layers_methods[] = {CGPY_TABLE_END};

PyMethodDef cgpy_nn_layers_functions[] = {
    CGPY_FASTKW("conv1d", f_conv1d),
    CGPY_FASTKW("conv2d", f_conv2d),
    CGPY_FASTKW("conv3d", f_conv3d),
    CGPY_FASTKW("conv_transpose1d", f_conv_transpose1d),
    CGPY_FASTKW("conv_transpose2d", f_conv_transpose2d),
    CGPY_FASTKW("conv_transpose3d", f_conv_transpose3d),
    CGPY_FASTKW("max_pool1d", f_max_pool1d),
    CGPY_FASTKW("max_pool2d", f_max_pool2d),
    CGPY_FASTKW("max_pool1d_with_indices", f_max_pool1d_with_indices),
    CGPY_FASTKW("_max_pool2d_with_indices", f__max_pool2d_with_indices),
    CGPY_FASTKW("max_pool3d", f_max_pool3d),
    CGPY_FASTKW("_max_pool3d_with_indices", f__max_pool3d_with_indices),
    CGPY_FASTKW("avg_pool1d", f_avg_pool1d),
    CGPY_FASTKW("_avg_pool2d", f__avg_pool2d),
    CGPY_FASTKW("_avg_pool3d", f__avg_pool3d),
    CGPY_FASTKW("adaptive_avg_pool1d", f_adaptive_avg_pool1d),
    CGPY_FASTKW("_adaptive_avg_pool2d", f__adaptive_avg_pool2d),
    CGPY_FASTKW("adaptive_max_pool1d", f_adaptive_max_pool1d),
    CGPY_FASTKW("_adaptive_max_pool2d", f__adaptive_max_pool2d),
    CGPY_FASTKW("_adaptive_avg_pool3d", f__adaptive_avg_pool3d),
    CGPY_FASTKW("_adaptive_max_pool3d", f__adaptive_max_pool3d),
    CGPY_FASTKW("batch_norm", f_batch_norm),
    CGPY_FASTKW("instance_norm", f_instance_norm),
    CGPY_FASTKW("layer_norm", f_layer_norm),
    CGPY_FASTKW("group_norm", f_group_norm),
    CGPY_FASTKW("rms_norm", f_rms_norm),
    CGPY_FASTKW("dropout", f_dropout),
    CGPY_FASTKW("dropout_", f_dropout_),
    CGPY_FASTKW("feature_dropout", f_feature_dropout),
    CGPY_FASTKW("feature_dropout_", f_feature_dropout_),
    CGPY_FASTKW("alpha_dropout", f_alpha_dropout),
    CGPY_FASTKW("alpha_dropout_", f_alpha_dropout_),
    CGPY_FASTKW("embedding", f_embedding),
    CGPY_FASTKW("embedding_renorm_", f_embedding_renorm_),
    CGPY_FASTKW("_lstm_layer", f__lstm_layer),
    CGPY_TABLE_END,
};
