/* module.c — the cgrad._C module: initialisation, factories (tensor, zeros,
 * ones, empty, full, arange, *_like), global state (grad mode, default dtype,
 * seed, threads) and promotion queries. */
#include "bind.h"
extern cg_tensor *cgpy_tensor_from_data(PyObject *data, int dtype, cg_device dev);
extern PyObject *cgpy_autograd_grad(CGPY_FASTKW_ARGS);                    /* tensor_methods.c */
extern PyObject *cgpy_f_can_cast(CGPY_FASTKW_ARGS);                       /* promote.c */

static PyObject *g_hook_handle_cls;

PyObject *cgpy_make_hook_handle(PyObject *tensor, int64_t id) {
    if (!g_hook_handle_cls) {
        PyErr_SetString(PyExc_RuntimeError, "cgrad: hook handle class not registered");
        return NULL;
    }
    return PyObject_CallFunction(g_hook_handle_cls, "OL", tensor, (long long)id);
}

/* apply requires_grad to a fresh factory result */
static PyObject *finish(cg_tensor *t, int requires_grad) {
    if (!t) return PyErr_Occurred() ? NULL : cgpy_raise();
    if (requires_grad && cgpy_check(cg_tensor_set_requires_grad(t, true))) {
        cg_tensor_release(t);
        return NULL;
    }
    return cgpy_wrap(t);
}

static PyObject *f_tensor(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("tensor", CGPY_ARG("data", CGPY_A_OBJ, CGPY_REQ), CGPY_ARG("dtype", CGPY_A_DTYPE,
                                      CGPY_KWONLY),
                                      CGPY_ARG("device", CGPY_A_DEVICE, CGPY_KWONLY | CGPY_DEFAULT_DEV),
                                      CGPY_ARG("requires_grad", CGPY_A_BOOL, CGPY_KWONLY),
                                      CGPY_ARG("pin_memory", CGPY_A_BOOL, CGPY_KWONLY));
    cgpy_val v[5];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    return finish(cgpy_tensor_from_data(v[0].o, (int)v[1].dtype, v[2].dev), v[3].b);
}

/* zeros / ones / empty / full(size, fill_value) share the argument parsing;
 * layout= must be strided, memory_format= is empty's (Note [Memory formats] in cgrad.h) */
#define FACTORY_KW                                                                                                 \
    CGPY_ARG("dtype", CGPY_A_DTYPE, CGPY_KWONLY), CGPY_ARG("device", CGPY_A_DEVICE, CGPY_KWONLY | CGPY_DEFAULT_DEV), \
        CGPY_ARG("requires_grad", CGPY_A_BOOL, CGPY_KWONLY), CGPY_ARG("layout", CGPY_A_OBJ, CGPY_KWONLY),          \
        CGPY_ARG("pin_memory", CGPY_A_OBJ, CGPY_KWONLY), CGPY_ARG("memory_format", CGPY_A_OBJ, CGPY_KWONLY),       \
        CGPY_ARG("out", CGPY_A_OBJ, CGPY_KWONLY)
static PyObject *factory(CGPY_FASTKW_ARGS, int kind) {
    static cgpy_spec specs[4] = {CGPY_SPEC("zeros", CGPY_ARG("size", CGPY_A_SIZE), FACTORY_KW),
                                 CGPY_SPEC("ones", CGPY_ARG("size", CGPY_A_SIZE), FACTORY_KW),
                                 CGPY_SPEC("empty", CGPY_ARG("size", CGPY_A_SIZE), FACTORY_KW),
                                 CGPY_SPEC("full", CGPY_ARG("size", CGPY_A_INTLIST, CGPY_REQ),
                                           CGPY_ARG("fill_value", CGPY_A_OBJ, CGPY_REQ), FACTORY_KW)};
    static const char *const names[] = {"zeros", "ones", "empty", "full"};
    cgpy_val v[9];
    if (cgpy_args_parse(&specs[kind], self, args, nargs, kwnames, v)) return NULL;
    const cgpy_val *kw = v + (kind == 3 ? 2 : 1); /* dtype, device, requires_grad, layout, pin_memory, memory_format,
        out */
    int nd = v[0].n, rg = kw[2].b, dt = -1;
    const int64_t *shape = v[0].v;
    cg_device dev = kw[1].dev;
    double fillv = 0;
    PyObject *fv = NULL, *out = cgpy_opt(&kw[6]);
    bool dt_given = (int)kw[0].dtype >= 0;
    if (kind == 3) {
        fv = v[1].o;
        fillv = PyFloat_AsDouble(fv);
        if (fillv == -1.0 && PyErr_Occurred()) return NULL;
        if (PyBool_Check(fv)) dt = CG_DTYPE_BOOL;
        else if (PyLong_Check(fv)) dt = CG_DTYPE_I64;
    }
    if (dt_given) dt = (int)kw[0].dtype;
    if (out) { /* the factory fills out in out's dtype (a different dtype= is an error), as PyTorch's */
        int given = dt_given ? dt : -1;
        if (cgpy_out_dtype(out, &given, names[kind])) return NULL;
        dt = given;
    }
    cg_dtype d = dt < 0 ? cgpy_default_dtype : (cg_dtype)dt;
    if (fv && cgpy_check_fits(fv, d, true)) return NULL;
    if (cgpy_check_layout(kw[3].o, names[kind])) return NULL;
    cg_memory_format fmt = CG_MEMORY_CONTIGUOUS;
    if (kw[5].o && kw[5].o != Py_None) { /* memory_format=: empty only, as in PyTorch */
        if (kind != 2) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument 'memory_format'", names[kind]);
            return NULL;
        }
        if (cgpy_memory_format(kw[5].o, CG_MEMORY_CONTIGUOUS, "empty", &fmt)) return NULL;
        if (fmt == CG_MEMORY_PRESERVE) {
            PyErr_SetString(PyExc_RuntimeError, "empty(): unsupported memory format Preserve");
            return NULL;
        }
    }
    cg_tensor *t = kind == 0 ? cg_zeros(nd, shape, d, dev) : kind == 1 ? cg_ones(nd, shape, d, dev)
                   : kind == 2 ? cg_empty(nd, shape, d, dev) : cg_full(nd, shape, fillv, d, dev);
    if (t && fmt != CG_MEMORY_CONTIGUOUS) { /* Note [Memory formats] (cgrad.h) */
        cg_tensor *r = cg_empty_like_as(t, d, dev, fmt);
        cg_tensor_release(t);
        t = r;
    }
    if (fv && t && cgpy_fill_exact(t, fv)) {
        cg_tensor_release(t);
        return NULL;
    }
    if (out) { /* Note [out= validation] (bind.h); requires_grad is ignored with out=, as in PyTorch */
        cgpy_out_rule rule = {names[kind], CGPY_OUT_EXACT, CGPY_OUT_ALIAS_OK, CGPY_OUT_QUIET_RESIZE};
        return cgpy_out_finish(out, t, &rule, 0, NULL);
    }
    return finish(t, rg);
}
static PyObject *f_zeros(CGPY_FASTKW_ARGS) { return factory(self, args, nargs, kwnames, 0); }
static PyObject *f_ones(CGPY_FASTKW_ARGS) { return factory(self, args, nargs, kwnames, 1); }
static PyObject *f_empty(CGPY_FASTKW_ARGS) { return factory(self, args, nargs, kwnames, 2); }
static PyObject *f_full(CGPY_FASTKW_ARGS) { return factory(self, args, nargs, kwnames, 3); }

#define LIKE_KW                                                                                                    \
    CGPY_ARG("dtype", CGPY_A_DTYPE, CGPY_KWONLY), CGPY_ARG("device", CGPY_A_DEVICE, CGPY_KWONLY),                  \
        CGPY_ARG("requires_grad", CGPY_A_BOOL, CGPY_KWONLY), CGPY_ARG("layout", CGPY_A_OBJ, CGPY_KWONLY),          \
        CGPY_ARG("pin_memory", CGPY_A_OBJ, CGPY_KWONLY), CGPY_ARG("memory_format", CGPY_A_OBJ, CGPY_KWONLY)
static PyObject *like(CGPY_FASTKW_ARGS, int kind) {
    static cgpy_spec specs[4] = {CGPY_SPEC("zeros_like", CGPY_ARG("input", CGPY_A_TENSOR, CGPY_REQ), LIKE_KW),
                                 CGPY_SPEC("ones_like", CGPY_ARG("input", CGPY_A_TENSOR, CGPY_REQ), LIKE_KW),
                                 CGPY_SPEC("empty_like", CGPY_ARG("input", CGPY_A_TENSOR, CGPY_REQ), LIKE_KW),
                                 CGPY_SPEC("full_like", CGPY_ARG("input", CGPY_A_TENSOR, CGPY_REQ),
                                           CGPY_ARG("fill_value", CGPY_A_OBJ, CGPY_REQ), LIKE_KW)};
    static const char *const names[] = {"zeros_like", "ones_like", "empty_like", "full_like"};
    cgpy_val a[8];
    if (cgpy_args_parse(&specs[kind], self, args, nargs, kwnames, a)) return NULL;
    const cgpy_val *kw = a + (kind == 3 ? 2 : 1); /* dtype, device, requires_grad, layout, pin_memory, memory_format */
    cg_memory_format fmt;
    if (cgpy_check_layout(kw[3].o, names[kind]) || cgpy_memory_format(kw[5].o, CG_MEMORY_PRESERVE, names[kind], &fmt))
        return NULL;
    if (kw[4].o && PyObject_IsTrue(kw[4].o) && cgpy_check_pin(names[kind])) return NULL;
    PyObject *fv = kind == 3 ? a[1].o : NULL;
    int dt = (int)kw[0].dtype, rg = kw[2].b;
    cg_tensor *t = a[0].t;
    cg_device dev = kw[1].o ? kw[1].dev : cg_tensor_device(t);
    cg_dtype d = dt < 0 ? cg_tensor_dtype(t) : (cg_dtype)dt;
    double v = 0;
    if (fv) {
        v = PyFloat_AsDouble(fv);
        if ((v == -1.0 && PyErr_Occurred()) || cgpy_check_fits(fv, d, true)) return NULL;
    }
    int nd = cg_tensor_ndim(t);
    const int64_t *sh = cg_tensor_shape(t);
    cg_tensor *r;
    if (fmt == CG_MEMORY_CONTIGUOUS || (fmt == CG_MEMORY_PRESERVE && cgpy_has_contiguous_strides(t))) {
        r = kind == 0 ? cg_zeros(nd, sh, d, dev) : kind == 1 ? cg_ones(nd, sh, d, dev)
            : kind == 2 ? cg_empty(nd, sh, d, dev) : cg_full(nd, sh, v, d, dev);
    } else { /* Note [Memory formats] (cgrad.h): laid out like t, or in fmt */
        r = cg_empty_like_as(t, d, dev, fmt);
        if (r && kind != 2 && cgpy_check(cg_fill_(r, kind == 0 ? 0.0 : kind == 1 ? 1.0 : v))) {
            cg_tensor_release(r);
            return NULL;
        }
    }
    if (fv && r && cgpy_fill_exact(r, fv)) {
        cg_tensor_release(r);
        return NULL;
    }
    return finish(r, rg);
}
static PyObject *f_zeros_like(CGPY_FASTKW_ARGS) { return like(self, args, nargs, kwnames, 0); }
static PyObject *f_ones_like(CGPY_FASTKW_ARGS) { return like(self, args, nargs, kwnames, 1); }
static PyObject *f_empty_like(CGPY_FASTKW_ARGS) { return like(self, args, nargs, kwnames, 2); }
static PyObject *f_full_like(CGPY_FASTKW_ARGS) { return like(self, args, nargs, kwnames, 3); }

static PyObject *f_manual_seed(PyObject *m, PyObject *arg) {
    (void)m;
    uint64_t s;
    if (cgpy_parse_seed(arg, &s)) return NULL;
    cg_manual_seed(s);
    return cgpy_default_generator(); /* as torch.manual_seed: the default generator */
}
static PyObject *f_initial_seed(PyObject *m, PyObject *u) {
    (void)m, (void)u;
    return PyLong_FromUnsignedLongLong(cg_initial_seed());
}
static PyObject *f_set_grad_enabled(PyObject *m, PyObject *arg) {
    (void)m;
    int b = PyObject_IsTrue(arg);
    if (b < 0) return NULL;
    return PyBool_FromLong(cg_set_grad_enabled(b));
}
static PyObject *f_is_grad_enabled(PyObject *m, PyObject *u) {
    (void)m, (void)u;
    return PyBool_FromLong(cg_is_grad_enabled());
}
static PyObject *f_set_inference_mode(PyObject *m, PyObject *arg) {
    (void)m;
    int b = PyObject_IsTrue(arg);
    if (b < 0) return NULL;
    return PyBool_FromLong(cg_set_inference_mode(b));
}
static PyObject *f_is_inference_mode_enabled(PyObject *m, PyObject *u) {
    (void)m, (void)u;
    return PyBool_FromLong(cg_is_inference_mode());
}
/* _is_inference(tensor): Tensor.is_inference() */
static PyObject *f_tensor_is_inference(PyObject *m, PyObject *arg) {
    (void)m;
    if (!cgpy_is_tensor(arg)) {
        PyErr_Format(PyExc_TypeError, "is_inference(): argument 'self' must be Tensor, not %s", Py_TYPE(arg)->tp_name);
        return NULL;
    }
    return PyBool_FromLong(cg_tensor_is_inference(cgpy_t(arg)));
}
static PyObject *f_set_anomaly_enabled(PyObject *m, PyObject *arg) {
    (void)m;
    int b = PyObject_IsTrue(arg);
    if (b < 0) return NULL;
    return PyBool_FromLong(cg_set_anomaly_enabled(b));
}
static PyObject *f_is_anomaly_enabled(PyObject *m, PyObject *u) {
    (void)m, (void)u;
    return PyBool_FromLong(cg_is_anomaly_enabled());
}
extern PyObject *cgpy_set_default_device(PyObject *m, PyObject *args); /* dtype_device.c */
static PyObject *f_get_default_dtype(PyObject *m, PyObject *u) {
    (void)m, (void)u;
    PyObject *d = cgpy_dtype(cgpy_default_dtype);
    Py_INCREF(d);
    return d;
}
static PyObject *f_set_default_dtype(PyObject *m, PyObject *arg) {
    (void)m;
    cg_dtype dt = CG_DTYPE_COUNT;
    if (!cgpy_dtype_conv(arg, &dt)) return NULL;
    if (!cg_dtype_is_floating(dt)) {
        PyErr_Format(PyExc_TypeError, "only floating-point types are supported as the default type (got %s)", cg_dtype_name(dt));
        return NULL;
    }
    cgpy_default_dtype = dt;
    Py_RETURN_NONE;
}
static PyObject *f_set_num_threads(PyObject *m, PyObject *arg) {
    (void)m;
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred()) return NULL;
    if (n < 1) {
        PyErr_SetString(PyExc_RuntimeError, "set_num_threads expects a positive integer");
        return NULL;
    }
    cg_set_num_threads((int)n);
    Py_RETURN_NONE;
}
static PyObject *f_get_num_threads(PyObject *m, PyObject *u) {
    (void)m, (void)u;
    return PyLong_FromLong(cg_get_num_threads());
}
static PyObject *f_result_type(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("result_type", CGPY_ARG("tensor", CGPY_A_OBJ, CGPY_REQ),
                                      CGPY_ARG("other", CGPY_A_OBJ, CGPY_REQ));
    cgpy_val v[2];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    PyObject *ops[2] = {v[0].o, v[1].o};
    cg_dtype dt;
    if (cgpy_result_type(2, ops, &dt)) return NULL;
    PyObject *d = cgpy_dtype(dt);
    Py_INCREF(d);
    return d;
}
static PyObject *f_promote_types(CGPY_FASTKW_ARGS) {
    static cgpy_spec spec = CGPY_SPEC("promote_types", CGPY_ARG("type1", CGPY_A_DTYPE, CGPY_REQ),
                                      CGPY_ARG("type2", CGPY_A_DTYPE, CGPY_REQ));
    cgpy_val v[2];
    if (cgpy_args_parse(&spec, self, args, nargs, kwnames, v)) return NULL;
    if (v[0].o == Py_None || v[1].o == Py_None) return PyErr_Format(PyExc_TypeError, "promote_types(): expected dtypes");
    cg_dtype a = v[0].dtype, b = v[1].dtype;
    cg_dtype r;
    if (cgpy_promote_checked(a, b, &r)) return NULL;
    PyObject *d = cgpy_dtype(r);
    Py_INCREF(d);
    return d;
}
static PyObject *f_set_tensor_class(PyObject *m, PyObject *args) {
    (void)m;
    PyObject *cls, *handle;
    if (!PyArg_ParseTuple(args, "OO:_set_tensor_class", &cls, &handle)) return NULL;
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &CgTensorBase_Type)) {
        PyErr_SetString(PyExc_TypeError, "_set_tensor_class expects a subclass of _TensorBase");
        return NULL;
    }
    Py_INCREF(cls);
    cgpy_tensor_class = (PyTypeObject *)cls;
    Py_XSETREF(g_hook_handle_cls, (Py_INCREF(handle), handle));
    Py_RETURN_NONE;
}
/* _make_subclass(cls, data, requires_grad): an alias of data as an instance of cls (nn.Parameter) */
static PyObject *f_make_subclass(PyObject *m, PyObject *args) {
    (void)m;
    PyObject *cls, *data;
    int rg = 0;
    if (!PyArg_ParseTuple(args, "OO!|p:_make_subclass", &cls, &CgTensorBase_Type, &data, &rg)) return NULL;
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &CgTensorBase_Type)) {
        PyErr_SetString(PyExc_TypeError, "_make_subclass expects a Tensor subclass");
        return NULL;
    }
    cg_tensor *t = cg_detach(cgpy_t(data));
    if (!t) return cgpy_raise();
    if (rg && cgpy_check(cg_tensor_set_requires_grad(t, true))) {
        cg_tensor_release(t);
        return NULL;
    }
    return cgpy_wrap_as((PyTypeObject *)cls, t);
}
/* _as_subclass(cls, data): Tensor.as_subclass: data's elements as an instance of cls, staying in
 * data's graph (an expand to its own shape: a view whatever its strides) */
static PyObject *f_as_subclass(PyObject *m, PyObject *args) {
    (void)m;
    PyObject *cls, *data;
    if (!PyArg_ParseTuple(args, "OO!:_as_subclass", &cls, &CgTensorBase_Type, &data)) return NULL;
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &CgTensorBase_Type)) {
        PyErr_SetString(PyExc_TypeError, "Creating a Tensor subclass from a class that does not inherit from Tensor "
                                         "is not possible. Make sure your class inherits from Tensor.");
        return NULL;
    }
    cg_tensor *d = cgpy_t(data);
    return cgpy_wrap_as((PyTypeObject *)cls, cg_expand(d, cg_tensor_ndim(d), cg_tensor_shape(d)));
}
/* the allocator statistics of a device's caching pool (cg_allocator_stats): _memory_stats(device=None),
 * None the CPU; a cuda device without a usable GPU reports zeros */
static int memory_device(PyObject *args, const char *fmt, cg_device *dev) {
    *dev = cg_cpu();
    PyObject *o = Py_None;
    if (!PyArg_ParseTuple(args, fmt, &o)) return -1;
    return cgpy_device_conv(o, dev) ? 0 : -1;
}
static PyObject *f_memory_stats(PyObject *m, PyObject *args) {
    (void)m;
    cg_device dev;
    if (memory_device(args, "|O:_memory_stats", &dev)) return NULL;
    cg_alloc_stats s = cg_allocator_stats(dev);
    return Py_BuildValue("{sLsLsLsLsLsLsLsLsLsL}", "live_bytes", (long long)s.live_bytes, "peak_bytes",
                         (long long)s.peak_bytes, "cached_bytes", (long long)s.cached_bytes, "alloc_calls",
                         (long long)s.alloc_calls, "cache_hits", (long long)s.cache_hits, "system_allocs",
                         (long long)s.system_allocs, "live_allocs", (long long)s.live_allocs, "peak_allocs",
                         (long long)s.peak_allocs, "total_bytes", (long long)s.total_bytes, "freed_bytes",
                         (long long)s.freed_bytes);
}
static PyObject *f_memory_reset_peak(PyObject *m, PyObject *args) {
    (void)m;
    cg_device dev;
    if (memory_device(args, "|O:_memory_reset_peak", &dev)) return NULL;
    cg_allocator_reset_peak(dev);
    Py_RETURN_NONE;
}
static PyObject *f_memory_empty_cache(PyObject *m, PyObject *args) {
    (void)m;
    cg_device dev;
    if (memory_device(args, "|O:_memory_empty_cache", &dev)) return NULL;
    cg_allocator_empty_cache(dev);
    Py_RETURN_NONE;
}

/* the engine build in use (cgrad.__config__): its CPU level, the BLAS and its kernels */
static PyObject *f_build_info(PyObject *m, PyObject *u) {
    (void)m, (void)u;
    return Py_BuildValue("{ssssss}", "cpu_level", cg_cpu_level_name(cg_cpu_level_built()), "blas_config",
                         cg_blas_config(), "blas_corename", cg_blas_corename());
}

static PyMethodDef module_functions[] = {
    CGPY_FASTKW("tensor", f_tensor),
    CGPY_FASTKW("zeros", f_zeros),
    CGPY_FASTKW("ones", f_ones),
    CGPY_FASTKW("empty", f_empty),
    CGPY_FASTKW("full", f_full),
    CGPY_FASTKW("zeros_like", f_zeros_like),
    CGPY_FASTKW("ones_like", f_ones_like),
    CGPY_FASTKW("empty_like", f_empty_like),
    CGPY_FASTKW("full_like", f_full_like),
    CGPY_FASTKW("grad", cgpy_autograd_grad),
    {"manual_seed", f_manual_seed, METH_O, NULL},
    {"initial_seed", f_initial_seed, METH_NOARGS, NULL},
    {"_set_grad_enabled", f_set_grad_enabled, METH_O, NULL},
    {"is_grad_enabled", f_is_grad_enabled, METH_NOARGS, NULL},
    {"_set_inference_mode", f_set_inference_mode, METH_O, NULL},
    {"is_inference_mode_enabled", f_is_inference_mode_enabled, METH_NOARGS, NULL},
    {"_is_inference", f_tensor_is_inference, METH_O, NULL},
    {"_set_anomaly_enabled", f_set_anomaly_enabled, METH_O, NULL},
    {"is_anomaly_enabled", f_is_anomaly_enabled, METH_NOARGS, NULL},
    {"get_default_dtype", f_get_default_dtype, METH_NOARGS, NULL},
    {"set_default_dtype", f_set_default_dtype, METH_O, NULL},
    {"_set_default_device", cgpy_set_default_device, METH_VARARGS, NULL},
    {"set_num_threads", f_set_num_threads, METH_O, NULL},
    {"get_num_threads", f_get_num_threads, METH_NOARGS, NULL},
    CGPY_FASTKW("result_type", f_result_type),
    CGPY_FASTKW("promote_types", f_promote_types),
    CGPY_FASTKW("can_cast", cgpy_f_can_cast),
    {"_set_tensor_class", f_set_tensor_class, METH_VARARGS, NULL},
    {"_make_subclass", f_make_subclass, METH_VARARGS, NULL},
    {"_as_subclass", f_as_subclass, METH_VARARGS, NULL},
    {"_memory_stats", f_memory_stats, METH_VARARGS, NULL},
    {"_memory_reset_peak", f_memory_reset_peak, METH_VARARGS, NULL},
    {"_memory_empty_cache", f_memory_empty_cache, METH_VARARGS, NULL},
    {"_build_info", f_build_info, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "cgrad._C", "The cgrad engine's CPython binding.", -1, module_functions,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__C(void) {
    PyObject *m = PyModule_Create(&module_def);
    if (!m) return NULL;
#define CGPY_ADD_FUNCTIONS(fam)                                  \
    if (PyModule_AddFunctions(m, cgpy_##fam##_functions) < 0) { \
        Py_DECREF(m);                                            \
        return NULL;                                             \
    }
    CGPY_OP_FAMILIES(CGPY_ADD_FUNCTIONS)
#undef CGPY_ADD_FUNCTIONS
    extern int cgpy_init_function(PyObject *m); /* function.c */
    if (cgpy_init_function(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    if (cgpy_init_errors(m) < 0 || cgpy_init_dtypes(m) < 0 || cgpy_init_layouts(m) < 0 || cgpy_init_tensor_type(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    if (cgpy_init_generator(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    extern int cgpy_init_optim(PyObject *m); /* optim.c */
    extern int cgpy_init_profiler(PyObject *m); /* profiler.c */
    if (cgpy_init_optim(m) < 0 || cgpy_init_profiler(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    extern int cgpy_init_amp(PyObject *m); /* amp.c */
    if (cgpy_init_amp(m) < 0 || cgpy_init_cuda(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
