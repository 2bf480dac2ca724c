/* ops_math.h — internal: what the elementwise-math binding files share.
 * ops_math.c holds the promotion / in-place / out= helpers and
 * the unary, binary, comparison and logic ops; ops_activation.c holds the
 * activations, softmax and the n-ary ops (where, lerp, addcmul, clamp, ...)
 * and exports its functions (cgpy_act_<name>) through the X-lists below,
 * which ops_math.c appends to the math tables. */
#ifndef CGPY_OPS_MATH_H
#define CGPY_OPS_MATH_H

#include "bind.h"

/* Every op function here has the METH_FASTCALL | METH_KEYWORDS signature; as
 * a Tensor method `self` is the tensor, as a module function the module. */
typedef PyObject *(*cgpy_fastkw_fn)(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);

/* Result r (stolen) of op, into out= when given (Note [out= validation] in
 * bind.h): the n operands (tensors or numbers, n <= 3) may be out itself,
 * not part of it; dtype_rule: PyTorch's cast rule, or an exact dtype for the
 * ops that ask for one. */
PyObject *cgpy_elementwise_out(PyObject *out, cg_tensor *r, const char *op, int dtype_rule, int n,
    PyObject *const *operands);

/* PyTorch's rule for writing a result of dtype `from` into a tensor of dtype
 * `to` (in-place ops, out=): no float into an integer, nothing but bool into
 * bool. 0, or -1 with RuntimeError. */
int cgpy_check_cast(cg_dtype from, cg_dtype to);

/* x.op_(...) for ops the engine has no in-place form of: run the out-of-place
 * method `fn` on self (on a clone when autograd records, so the tensors the
 * op saves are never overwritten), then copy the result into self under
 * PyTorch's cast rule. */
PyObject *cgpy_inplace_via(const char *op, cgpy_fastkw_fn fn, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames);

/* `o` (tensor, 0-d tensor or Python number) as a tensor with x's dtype and
 * device. New reference or NULL (raised). */
cg_tensor *cgpy_like_operand(PyObject *o, cg_tensor *x);

/* Require a Tensor argument (TypeError naming the op and the argument). */
int cgpy_need_tensor(PyObject *o, const char *fname, const char *arg);

/* ops_activation.c's entries, appended to the math tables: X(name) for
 * each function cgpy_act_<name>. Tensor methods; module functions (public
 * ones as torch has them, and private `_<name>` activations that
 * cgrad.nn.functional uses, since torch has no torch.<name> for them). */
#define CGPY_ACTIVATION_TENSOR_METHODS(X)                                                                       \
    X(softmax) X(log_softmax) X(where) X(lerp) X(lerp_) X(addcmul) X(addcmul_) X(addcdiv) X(addcdiv_) X(clamp)  \
    X(clamp_) X(clip) X(clip_) X(clamp_min) X(clamp_min_) X(clamp_max) X(clamp_max_) X(nan_to_num)              \
    X(nan_to_num_)
#define CGPY_ACTIVATION_PUBLIC_FUNCTIONS(X)                                                                     \
    X(celu) X(celu_) X(softmax) X(log_softmax) X(where) X(lerp) X(addcmul) X(addcdiv) X(clamp) X(clip)           \
    X(clamp_min) X(clamp_max) X(nan_to_num)
#define CGPY_ACTIVATION_PRIVATE_FUNCTIONS(X)                                                                    \
    X(_relu6) X(_relu6_) X(_leaky_relu) X(_leaky_relu_) X(_elu) X(_elu_) X(_gelu) X(_silu) X(_silu_) X(_mish)    \
    X(_mish_) X(_softplus) X(_softsign) X(_logsigmoid) X(_hardtanh) X(_hardtanh_) X(_hardsigmoid)                \
    X(_hardsigmoid_) X(_hardswish) X(_hardswish_)
#define CGPY_ACTIVATION_FUNCTIONS(X) CGPY_ACTIVATION_PUBLIC_FUNCTIONS(X) CGPY_ACTIVATION_PRIVATE_FUNCTIONS(X)

#define CGPY_DECLARE_ACT(name) PyObject *cgpy_act_##name(PyObject *, PyObject *const *, Py_ssize_t, PyObject *);
CGPY_ACTIVATION_TENSOR_METHODS(CGPY_DECLARE_ACT)
CGPY_DECLARE_ACT(celu) CGPY_DECLARE_ACT(celu_)
CGPY_ACTIVATION_PRIVATE_FUNCTIONS(CGPY_DECLARE_ACT)
#undef CGPY_DECLARE_ACT

#endif
