/* cgpy.h — internal header of the CPython binding (cgrad._C): the Tensor
 * object layout, wrapping rules, error mapping, dtype/device objects and the
 * argument helpers shared by the binding's files. The binding uses only the
 * public engine API (include/cgrad.h). */
#ifndef CGPY_H
#define CGPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cgrad.h>

/* ------------------------------------------------------------- Tensor object
 * Note [Python identity]: a C tensor has at most one live Python object; the
 * engine's weak pyobj slot points back to it, so wrapping the same C tensor
 * again (e.g. `x.grad` twice) returns the same object. The object owns one
 * reference to the C tensor and clears the slot when it dies. */
typedef struct {
    PyObject_HEAD
    cg_tensor *t;
    PyObject *weakreflist;
    PyObject *dict;
} CgTensorObject;

extern PyTypeObject CgTensorBase_Type;
/* The Python-level class instances are created as (cgrad.Tensor), set by
 * cgrad/_tensor.py through _C._set_tensor_class. */
extern PyTypeObject *cgpy_tensor_class;

/* Wrap a new reference (stolen). NULL in -> raises the engine's error. */
PyObject *cgpy_wrap(cg_tensor *t);
/* Wrap into a specific (sub)class, e.g. nn.Parameter. */
PyObject *cgpy_wrap_as(PyTypeObject *cls, cg_tensor *t);
/* t's Python object, whatever its class (a Parameter stays a Parameter), else a new cgrad.Tensor; t is borrowed. */
PyObject *cgpy_pyobj_of(cg_tensor *t);
static inline int cgpy_is_tensor(PyObject *o) { return PyObject_TypeCheck(o, &CgTensorBase_Type); }
static inline cg_tensor *cgpy_t(PyObject *o) { return ((CgTensorObject *)o)->t; }

/* ------------------------------------------------------------- hooks (hooks.c) */

/* Py_DECREF for a C callback's ctx_free: takes the GIL. */
void cgpy_decref_gil(void *o);
/* Tensor.register_hook (post_accumulate false) / register_post_accumulate_grad_hook: the handle. */
PyObject *cgpy_register_tensor_hook(PyObject *self, PyObject *fn, bool post_accumulate);
/* Node.register_prehook (pre) / register_hook on node n of Python object self: the handle. */
PyObject *cgpy_register_node_hook(PyObject *self, cg_node *n, PyObject *fn, bool pre);
/* The Python objects the engine holds for a tensor's or node's hooks (and a node's metadata), shown
 * to Python's gc by the wrappers' tp_traverse and dropped by their tp_clear, only where the wrapper
 * holds the engine object's only reference (Note [Hook contexts and a garbage collector]) */
int cgpy_traverse_tensor_hooks(cg_tensor *t, visitproc visit, void *arg);
void cgpy_clear_tensor_hooks(cg_tensor *t);
int cgpy_traverse_node_hooks(cg_node *n, visitproc visit, void *arg);
void cgpy_clear_node_hooks(cg_node *n);

/* ------------------------------------------------------------- errors */

extern PyObject *cgpy_DtypeMismatch, *cgpy_DeviceMismatch, *cgpy_ShapeMismatch, *cgpy_InvalidArgument, *cgpy_IndexOutOfRange;
extern PyObject *cgpy_OutOfMemoryError; /* cgrad.OutOfMemoryError (torch.OutOfMemoryError): a device ran out */
/* Raise the engine's thread-local error as the mapped Python exception. */
PyObject *cgpy_raise(void);
/* 0 on CG_OK, else raise and -1. */
int cgpy_check(cg_status st);
int cgpy_init_errors(PyObject *m);

/* ------------------------------------------------------------- dtype / device objects */

typedef struct {
    PyObject_HEAD
    cg_dtype dt;
} CgDtypeObject;
typedef struct {
    PyObject_HEAD
    cg_device dev;
    int has_index; /* index is not None: cuda:N; 0 for 'cuda' (the current device) and for cpu / meta */
} CgDeviceObject;
extern PyTypeObject CgDtype_Type, CgDevice_Type;

PyObject *cgpy_dtype(cg_dtype dt);   /* borrowed singleton */
PyObject *cgpy_device(cg_device d);  /* new reference; a cuda device with its index */
/* PyArg "O&" converters: accept dtype objects (None leaves *out unchanged). */
int cgpy_dtype_conv(PyObject *o, void *out);
/* accepts device objects, device strings ("cpu", "meta", "cuda", "cuda:N"), an int N (cuda:N, as in
 * PyTorch, when a CUDA device is usable) and None (leaves *out unchanged); a cuda device without an
 * index is the thread's current CUDA device (Note [Current CUDA device]) */
int cgpy_device_conv(PyObject *o, void *out);
/* "cpu", "meta", "cuda:N": str(device) of an engine device, into buf */
const char *cgpy_device_str(cg_device d, char *buf, size_t cap);
/* the thread's current CUDA device (cuda.set_device / cuda.device; 0 unless set) */
int cgpy_cuda_current(void);
void cgpy_cuda_set_current(int index);
int cgpy_init_dtypes(PyObject *m);

/* ------------------------------------------------------------- device memory (cuda.c)
 * The engine reads the values of a cuda tensor (item, copy_to_buffer) through a copy to the host, which
 * waits for the device's work, as PyTorch's item() and tolist() do. */
/* the address of t's element 0 in its device's memory (a CUDA device pointer on cuda: data_ptr(),
 * DLPack, __cuda_array_interface__); NULL with a Python error when it cannot be had */
void *cgpy_data_ptr(const cg_tensor *t);
/* pin_memory=True of factory op: 0 when a CUDA device is usable (cgrad has no pinned allocator: the
 * memory is ordinary pageable memory, Tensor.pin_memory's note), else -1 with NotImplementedError */
int cgpy_check_pin(const char *op);
/* *t (a new reference, replaced) on device dev: copy_ and x[i] = v take a source on another device, as
 * PyTorch's do (differentiably; the engine's ops never move data themselves). 0, or -1 with *t released
 * and NULL and the error raised */
int cgpy_to_device_of(cg_tensor **t, cg_device dev);
int cgpy_init_cuda(PyObject *m);

/* memory_format= and layout= (layouts.c): the memory_format object o as *out (None / NULL: dflt), or -1
 * with TypeError naming op; the layout o: 0 for None / strided, -1 with NotImplementedError for the
 * other layouts and TypeError for anything else. */
int cgpy_memory_format(PyObject *o, cg_memory_format dflt, const char *op, cg_memory_format *out);
int cgpy_check_layout(PyObject *o, const char *op);
PyObject *cgpy_memory_format_object(cg_memory_format f); /* borrowed singleton */
PyObject *cgpy_strided_layout(void);                     /* borrowed singleton */
/* t's strides are exactly the contiguous ones (size-1 dims' included): a preserve_format factory
 * may then allocate contiguously */
bool cgpy_has_contiguous_strides(const cg_tensor *t);
int cgpy_init_layouts(PyObject *m);

extern cg_dtype cgpy_default_dtype; /* float32 unless set_default_dtype */
/* The factories' default device (Note [Default device] in dtype_device.c):
 * *out, or -1 with the error set_default_device stored raised. */
int cgpy_default_device(cg_device *out);

/* ------------------------------------------------------------- promotion */

/* PyTorch's result_type over tensors (dim > 0), 0-d tensors and Python
 * scalars (bool < int < float categories). Returns 0 or -1 with TypeError. */
int cgpy_result_type(int n, PyObject *const *operands, cg_dtype *out);
/* `o` as a tensor of dtype dt on dev: Python scalars become 0-d tensors,
 * tensors are cast (differentiably) when needed. New reference or NULL. */
cg_tensor *cgpy_as_tensor(PyObject *o, cg_dtype dt, cg_device dev);
/* cgpy_as_tensor for an operand of an op on dev: a 0-d CPU tensor joining a cuda op is copied to dev
 * (Note [CPU scalars on CUDA] in bind.c) */
cg_tensor *cgpy_as_operand(PyObject *o, cg_dtype dt, cg_device dev);
/* 0 when the Python number o fits dtype dt; -1 with a RuntimeError raised
 * otherwise (Note [Checked scalar conversion] in promote.c). */
int cgpy_check_fits(PyObject *o, cg_dtype dt, bool check_float);
static inline int cgpy_is_scalar(PyObject *o) {
    return PyBool_Check(o) || PyLong_Check(o) || PyFloat_Check(o);
}
cg_dtype cgpy_promote_types(cg_dtype a, cg_dtype b);
/* promote_types with PyTorch's refusal for the barebones unsigned dtypes: 0, or -1 raised */
int cgpy_promote_checked(cg_dtype a, cg_dtype b, cg_dtype *out);
/* full / fill_ of a Python int into a uint64 tensor, exact above 2^53: 0, or -1 raised */
int cgpy_fill_exact(cg_tensor *t, PyObject *v);

int cgpy_init_tensor_type(PyObject *m);
int cgpy_init_number(void);
extern PyNumberMethods cgpy_number_methods;
PyObject *cgpy_richcompare(PyObject *a, PyObject *b, int op);

/* the argument parser and converters (after the types they use) */
#include "args.h"

#endif
