"""Symbolics of the tensor ops: arithmetic and comparison operators,
elementwise math, reductions, matmul, casts, and the shape and indexing ops
(reshape / view / flatten with shape-generic targets under dynamic axes,
Note [Probe run] in _tracer.py)."""
from __future__ import annotations

from typing import Any, List, Optional

import numpy as np

from .. import _C
from ._graph import INT64_MAX, INT64_MIN, onnx_dtype
from ._registry import register
from .errors import OnnxExporterError

_FLOATS = (_C.float16, _C.float32, _C.float64)


def _dims(dim: Any, ndim: int) -> List[int]:
    dims = [dim] if isinstance(dim, int) else list(dim)
    return [d % ndim if ndim else 0 for d in dims]


def _operand_dtype(a: Any, b: Any) -> Any:
    return _C.result_type(a, b)


def _binary(onnx_op: str, compare: bool = False, reflected: bool = False):
    def sym(ctx: Any, out: Any, input: Any, other: Any, *, alpha: Any = None) -> str:
        ctx.check_numbers()
        a, b = (other, input) if reflected else (input, other)
        dt = _operand_dtype(a, b) if compare else out.dtype
        if onnx_op == "Div" and dt not in _FLOATS:
            raise NotImplementedError(f"cgrad.onnx.export: {ctx.op_name} on integer tensors")
        va, vb = ctx.v(a, dt), ctx.v(b, dt)
        if alpha is not None and alpha != 1:
            vb = ctx.g.op("Mul", vb, ctx.v(alpha, dt))
        return ctx.g.op(onnx_op, va, vb)
    return sym


for _names, _op, _cmp in ((("add", "__add__", "__radd__", "__iadd__", "add_"), "Add", False),
                          (("sub", "subtract", "__sub__", "__isub__", "sub_"), "Sub", False),
                          (("mul", "multiply", "__mul__", "__rmul__", "__imul__", "mul_"), "Mul", False),
                          (("true_divide", "__truediv__", "__itruediv__"), "Div", False),
                          (("pow", "__pow__", "pow_"), "Pow", False),
                          (("maximum",), "Max", False), (("minimum",), "Min", False),
                          (("eq", "__eq__"), "Equal", True), (("lt", "less", "__lt__"), "Less", True),
                          (("gt", "greater", "__gt__"), "Greater", True),
                          (("le", "less_equal", "__le__"), "LessOrEqual", True),
                          (("ge", "greater_equal", "__ge__"), "GreaterOrEqual", True),
                          (("logical_and", "__and__", "__rand__"), "And", True),
                          (("logical_or", "__or__", "__ror__"), "Or", True),
                          (("logical_xor", "__xor__", "__rxor__"), "Xor", True)):
    register(*_names)(_binary(_op, _cmp))
register("__rsub__", "rsub")(_binary("Sub", reflected=True))
register("__rtruediv__")(_binary("Div", reflected=True))


def _rounded_div(ctx: Any, a: str, b: str, mode: Optional[str], dtype: Any) -> str:
    """a / b with torch's rounding_mode (None: true division, 'trunc', 'floor') on values of one dtype."""
    if mode is None:
        return ctx.g.op("Div", a, b)
    if dtype not in _FLOATS:
        q = ctx.g.op("Div", a, b)  # ONNX integer Div truncates
        if mode == "trunc":
            return q
        # floor: one less where the division was inexact and the operands' signs differ
        g = ctx.g
        r = g.op("Mod", a, b, fmod=1)
        zero = g.op("Sub", b, b)
        inexact = g.op("Not", g.op("Equal", r, zero))
        signs = g.op("Xor", g.op("Less", r, zero), g.op("Less", b, zero))
        adjust = g.op("Cast", g.op("And", inexact, signs), to=onnx_dtype(dtype))
        return g.op("Sub", q, adjust)
    q = ctx.g.op("Div", a, b)
    if mode == "floor":
        return ctx.g.op("Floor", q)
    if mode == "trunc":
        return ctx.g.op("Mul", ctx.g.op("Sign", q), ctx.g.op("Floor", ctx.g.op("Abs", q)))
    raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found {mode!r}")


def _div_sym(mode_default: Optional[str], reflected: bool = False):
    def sym(ctx: Any, out: Any, input: Any, other: Any, *, rounding_mode: Optional[str] = mode_default) -> str:
        ctx.check_numbers()
        a, b = (other, input) if reflected else (input, other)
        dt = out.dtype
        if rounding_mode is None and dt not in _FLOATS:
            raise NotImplementedError(f"cgrad.onnx.export: {ctx.op_name} to an integer result")
        return _rounded_div(ctx, ctx.v(a, dt), ctx.v(b, dt), rounding_mode, dt)
    return sym


register("div", "divide", "div_")(_div_sym(None))
register("floor_divide", "__floordiv__", "__ifloordiv__")(_div_sym("floor"))
register("__rfloordiv__")(_div_sym("floor", reflected=True))


def _mod_sym(reflected: bool = False, c_style: bool = False):
    def sym(ctx: Any, out: Any, input: Any, other: Any) -> str:
        ctx.check_numbers()
        a, b = (other, input) if reflected else (input, other)
        dt = out.dtype
        va, vb = ctx.v(a, dt), ctx.v(b, dt)
        if c_style:
            return ctx.g.op("Mod", va, vb, fmod=1)
        if dt not in _FLOATS:
            return ctx.g.op("Mod", va, vb, fmod=0)  # the sign of the divisor, as Python's %
        return ctx.g.op("Sub", va, ctx.g.op("Mul", ctx.g.op("Floor", ctx.g.op("Div", va, vb)), vb))
    return sym


register("remainder", "__mod__", "__imod__")(_mod_sym())
register("__rmod__")(_mod_sym(reflected=True))
register("fmod")(_mod_sym(c_style=True))
register("__rpow__")(_binary("Pow", reflected=True))


@register("ne", "not_equal", "__ne__")
def _ne(ctx: Any, out: Any, input: Any, other: Any) -> str:
    return ctx.g.op("Not", _binary("Equal", True)(ctx, out, input, other))


@register("logical_not", "__invert__")
def _not(ctx: Any, out: Any, input: Any) -> str:
    if input.dtype != _C.bool and ctx.op_name.endswith("__invert__"):
        raise NotImplementedError("cgrad.onnx.export: bitwise not of integer tensors")
    return ctx.g.op("Not", ctx.v(input, _C.bool))


def _unary(onnx_op: str):
    def sym(ctx: Any, out: Any, input: Any, *args: Any, **kwargs: Any) -> str:
        return ctx.g.op(onnx_op, ctx.v(input, out.dtype))
    return sym


for _names, _op in ((("relu", "relu_"), "Relu"), (("sigmoid", "sigmoid_"), "Sigmoid"), (("tanh", "tanh_"), "Tanh"),
                    (("exp", "exp_"), "Exp"), (("log", "log_"), "Log"), (("sqrt", "sqrt_"), "Sqrt"),
                    (("abs", "abs_", "__abs__"), "Abs"), (("neg", "negative", "neg_", "__neg__"), "Neg"),
                    (("sin",), "Sin"), (("cos",), "Cos"), (("erf",), "Erf"), (("floor",), "Floor"),
                    (("ceil",), "Ceil"), (("reciprocal",), "Reciprocal"), (("sign",), "Sign"),
                    (("round",), "Round"), (("softsign",), "Softsign"),
                    (("contiguous", "clone", "detach", "__pos__", "positive"), "Identity")):
    register(*_names)(_unary(_op))


@register("rsqrt")
def _rsqrt(ctx: Any, out: Any, input: Any) -> str:
    return ctx.g.op("Reciprocal", ctx.g.op("Sqrt", ctx.v(input, out.dtype)))


@register("square")
def _square(ctx: Any, out: Any, input: Any) -> str:
    x = ctx.v(input, out.dtype)
    return ctx.g.op("Mul", x, x)


@register("clamp", "clip", "clamp_", "clip_")
def _clamp(ctx: Any, out: Any, input: Any, min: Any = None, max: Any = None) -> str:
    ctx.check_numbers()
    x = ctx.v(input, out.dtype)
    lo = None if min is None else ctx.v(min, out.dtype)
    hi = None if max is None else ctx.v(max, out.dtype)
    if any(isinstance(b, _C._TensorBase) for b in (min, max)):
        if lo is not None:
            x = ctx.g.op("Max", x, lo)
        return x if hi is None else ctx.g.op("Min", x, hi)
    return ctx.g.op("Clip", x, lo, hi)


@register("where")
def _where(ctx: Any, out: Any, condition: Any, input: Any = None, other: Any = None) -> str:
    if input is None:
        raise NotImplementedError("cgrad.onnx.export: where(condition) with one argument (nonzero)")
    return ctx.g.op("Where", ctx.v(condition, _C.bool), ctx.v(input, out.dtype), ctx.v(other, out.dtype))


@register("masked_fill", "masked_fill_")
def _masked_fill(ctx: Any, out: Any, input: Any, mask: Any, value: Any) -> str:
    return ctx.g.op("Where", ctx.v(mask, _C.bool), ctx.v(value, out.dtype), ctx.v(input, out.dtype))


# ---------------------------------------------------------------------- casts
@register("to", "type", "type_as", "float", "double", "half", "long", "int", "bool", "short")
def _cast(ctx: Any, out: Any, input: Any, *args: Any, **kwargs: Any) -> str:
    if out.dtype == input.dtype:
        return ctx.g.op("Identity", ctx.v(input))
    return ctx.g.op("Cast", ctx.v(input), to=onnx_dtype(out.dtype))


# ---------------------------------------------------------------------- reductions
def _reduce(onnx_op: str):
    def sym(ctx: Any, out: Any, input: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> str:
        x = ctx.v(input, out.dtype)
        axes = None if dim is None or (isinstance(dim, (list, tuple)) and not dim) else _dims(dim, input.dim())
        if axes is None and keepdim is False:
            return ctx.g.reduce(onnx_op, x, None, False)
        return ctx.g.reduce(onnx_op, x, axes if axes is not None else list(range(input.dim())), bool(keepdim))
    return sym


register("sum")(_reduce("ReduceSum"))
register("mean")(_reduce("ReduceMean"))
register("amax")(_reduce("ReduceMax"))
register("amin")(_reduce("ReduceMin"))
register("logsumexp")(_reduce("ReduceLogSumExp"))


@register("prod")
def _prod(ctx: Any, out: Any, input: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> str:
    return _reduce("ReduceProd")(ctx, out, input, dim, keepdim)


def _minmax(onnx_reduce: str, onnx_arg: str, onnx_pair: str):
    def sym(ctx: Any, out: Any, input: Any, dim: Any = None, keepdim: bool = False) -> Any:
        if isinstance(dim, _C._TensorBase):
            return ctx.g.op(onnx_pair, ctx.v(input, out.dtype), ctx.v(dim, out.dtype))
        x = ctx.v(input)
        if dim is None:
            return ctx.g.reduce(onnx_reduce, x, None, False)
        d = _dims(dim, input.dim())[0]
        values = ctx.g.reduce(onnx_reduce, x, [d], bool(keepdim))
        idx = ctx.g.op(onnx_arg, x, axis=d, keepdims=1 if keepdim else 0)
        return [values, idx]
    return sym


register("max")(_minmax("ReduceMax", "ArgMax", "Max"))
register("min")(_minmax("ReduceMin", "ArgMin", "Min"))


def _arg(onnx_op: str):
    def sym(ctx: Any, out: Any, input: Any, dim: Optional[int] = None, keepdim: bool = False) -> str:
        x = ctx.v(input)
        if dim is None:
            x = ctx.g.op("Reshape", x, ctx.g.ints([-1]))
            r = ctx.g.op(onnx_op, x, axis=0, keepdims=0)
            return ctx.g.op("Reshape", r, ctx.g.ints([1] * input.dim())) if keepdim else r
        return ctx.g.op(onnx_op, x, axis=_dims(dim, input.dim())[0], keepdims=1 if keepdim else 0)
    return sym


register("argmax")(_arg("ArgMax"))
register("argmin")(_arg("ArgMin"))


@register("var", "std")
def _var(ctx: Any, out: Any, input: Any, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
         correction: Any = None) -> str:
    if isinstance(unbiased, (list, tuple, int)) and not isinstance(unbiased, bool):
        dim, unbiased = unbiased, None  # var(dim) via the method's positional order
    corr = 1 if correction is None and unbiased in (None, True) else 0 if correction is None else correction
    axes = list(range(input.dim())) if dim is None else _dims(dim, input.dim())
    n = int(np.prod([input.shape[a] for a in axes]))
    if any(a in ctx.dyn_dims(input) for a in axes):
        raise NotImplementedError("cgrad.onnx.export: var / std over a dynamic axis")
    x = ctx.v(input, out.dtype)
    mean = ctx.g.reduce("ReduceMean", x, axes, True)
    d = ctx.g.op("Sub", x, mean)
    ss = ctx.g.reduce("ReduceSum", ctx.g.op("Mul", d, d), axes, bool(keepdim))
    r = ctx.g.op("Div", ss, ctx.v(float(max(n - corr, 0)), out.dtype))
    return ctx.g.op("Sqrt", r) if ctx.op_name.endswith("std") else r


# ---------------------------------------------------------------------- softmax family
def _softmax_dim(input: Any, dim: Any) -> int:
    if dim is None:
        dim = 0 if input.dim() in (0, 1, 3) else 1  # torch's legacy implicit dim
    return dim % max(input.dim(), 1)


@register("softmax", "log_softmax", "softmin")
def _softmax(ctx: Any, out: Any, input: Any, dim: Any = None, _stacklevel: int = 3, dtype: Any = None) -> str:
    x = ctx.v(input, out.dtype)
    name = ctx.op_name.rsplit(".", 1)[-1]
    if name == "softmin":
        x = ctx.g.op("Neg", x)
    return ctx.g.op("LogSoftmax" if name == "log_softmax" else "Softmax", x, axis=_softmax_dim(input, dim))


# ---------------------------------------------------------------------- matmul
@register("matmul", "mm", "bmm", "__matmul__")
def _matmul(ctx: Any, out: Any, input: Any, other: Any) -> str:
    return ctx.g.op("MatMul", ctx.v(input, out.dtype), ctx.v(other, out.dtype))


@register("__rmatmul__")
def _rmatmul(ctx: Any, out: Any, input: Any, other: Any) -> str:
    return ctx.g.op("MatMul", ctx.v(other, out.dtype), ctx.v(input, out.dtype))


@register("addmm")
def _addmm(ctx: Any, out: Any, input: Any, mat1: Any, mat2: Any, *, beta: Any = 1, alpha: Any = 1) -> str:
    return ctx.g.op("Gemm", ctx.v(mat1, out.dtype), ctx.v(mat2, out.dtype), ctx.v(input, out.dtype),
                    alpha=float(alpha), beta=float(beta))


# ---------------------------------------------------------------------- shapes
def reshape_target(ctx: Any, input: Any, out: Any, i: int = 0) -> str:
    """A Reshape target for input -> out that stays right when the dynamic axes change: dims that follow a
    dynamic axis are copied (0) where input has them at the same place, and the one left, if any, is -1."""
    shape = list(out.shape)
    dyn = ctx.out_dyn(out, i)
    if not dyn:
        return ctx.g.ints(shape)
    in_dyn = ctx.dyn_dims(input)
    in_probe = ctx.probe_shape(input)
    out_probe = ctx.out_probe(i)
    left = []
    for d in dyn:
        if d in in_dyn and d < input.dim() and input.shape[d] == shape[d] and in_probe[d] == out_probe[d]:
            shape[d] = 0
        else:
            left.append(d)
    if len(left) > 1:
        raise OnnxExporterError(f"cgrad.onnx.export: {ctx.op_name} to {tuple(out.shape)}: more than one of the "
                                "new dims depends on the dynamic axes; reshape with -1 for one of them")
    if left:
        shape[left[0]] = -1
    return ctx.g.ints(shape)


@register("reshape", "view", "flatten", "unflatten", "view_as", "reshape_as", "ravel")
def _reshape(ctx: Any, out: Any, input: Any, *args: Any, **kwargs: Any) -> str:
    if args and not isinstance(args[0], (int, list, tuple)) and not isinstance(args[0], _C._TensorBase):
        raise NotImplementedError(f"cgrad.onnx.export: {ctx.op_name} with a dtype (a bit-level view)")
    if ctx.op_name.endswith("_as"):
        other = args[0] if args else next(iter(kwargs.values()))
        if ctx.is_traced(other):
            return ctx.g.op("Reshape", ctx.v(input), ctx.g.op("Shape", ctx.v(other)))
    return ctx.g.op("Reshape", ctx.v(input), reshape_target(ctx, input, out))


@register("squeeze", "squeeze_")
def _squeeze(ctx: Any, out: Any, input: Any, dim: Any = None) -> str:
    n = input.dim()
    axes = [d for d in range(n) if input.shape[d] == 1] if dim is None else \
        [d for d in _dims(dim, n) if input.shape[d] == 1]
    if not axes:
        return ctx.g.op("Identity", ctx.v(input))
    return ctx.g.squeeze(ctx.v(input), axes)


@register("unsqueeze", "unsqueeze_")
def _unsqueeze(ctx: Any, out: Any, input: Any, dim: int) -> str:
    return ctx.g.unsqueeze(ctx.v(input), [dim % (input.dim() + 1)])


@register("permute")
def _permute(ctx: Any, out: Any, input: Any, *dims: Any) -> str:
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = tuple(dims[0])
    return ctx.g.op("Transpose", ctx.v(input), perm=_dims(dims, input.dim()))


@register("transpose", "swapaxes", "swapdims", "transpose_")
def _transpose(ctx: Any, out: Any, input: Any, dim0: int, dim1: int) -> str:
    n = input.dim()
    perm = list(range(n))
    a, b = dim0 % n, dim1 % n
    perm[a], perm[b] = perm[b], perm[a]
    return ctx.g.op("Transpose", ctx.v(input), perm=perm)


@register("t", "Tensor.T", "Tensor.mT", "Tensor.H", "Tensor.mH")
def _t(ctx: Any, out: Any, input: Any) -> str:
    n = input.dim()
    if n < 2:
        return ctx.g.op("Identity", ctx.v(input))
    if ctx.op_name in ("Tensor.mT", "Tensor.mH"):
        perm = list(range(n - 2)) + [n - 1, n - 2]
    else:
        perm = list(reversed(range(n)))
    return ctx.g.op("Transpose", ctx.v(input), perm=perm)


@register("expand", "expand_as", "broadcast_to")
def _expand(ctx: Any, out: Any, input: Any, *sizes: Any, **kwargs: Any) -> str:
    if ctx.op_name.endswith("expand_as") and ctx.is_traced(sizes[0]):
        return ctx.g.op("Expand", ctx.v(input), ctx.g.op("Shape", ctx.v(sizes[0])))
    target = list(out.shape)
    in_shape = [1] * (out.dim() - input.dim()) + list(input.shape)
    for d in ctx.out_dyn(out):
        if in_shape[d] != target[d]:
            raise OnnxExporterError(f"cgrad.onnx.export: {ctx.op_name} of a size-1 dim to a size that depends on a "
                                    "dynamic axis; use expand_as")
        target[d] = 1
    return ctx.g.op("Expand", ctx.v(input), ctx.g.ints(target))


@register("repeat")
def _repeat(ctx: Any, out: Any, input: Any, *repeats: Any) -> str:
    if len(repeats) == 1 and isinstance(repeats[0], (list, tuple)):
        repeats = tuple(repeats[0])
    x = ctx.v(input)
    extra = len(repeats) - input.dim()
    if extra > 0:
        x = ctx.g.unsqueeze(x, list(range(extra)))
    return ctx.g.op("Tile", x, ctx.g.ints(repeats))


@register("cat", "concat", "concatenate")
def _cat(ctx: Any, out: Any, tensors: Any, dim: int = 0, *, axis: Any = None) -> str:
    dim = axis if axis is not None else dim
    parts = [t for t in tensors if not (t.dim() == 1 and t.shape[0] == 0)]
    return ctx.g.op("Concat", *[ctx.v(t, out.dtype) for t in parts], axis=dim % out.dim())


@register("stack")
def _stack(ctx: Any, out: Any, tensors: Any, dim: int = 0) -> str:
    d = dim % out.dim()
    return ctx.g.op("Concat", *[ctx.g.unsqueeze(ctx.v(t, out.dtype), [d]) for t in tensors], axis=d)


def _split_sizes(ctx: Any, input: Any, outs: Any, dim: int, sizes: Optional[List[int]] = None) -> List[str]:
    d = dim % input.dim()
    if d in ctx.dyn_dims(input):
        raise OnnxExporterError(f"cgrad.onnx.export: {ctx.op_name} along a dynamic axis")
    if sizes is None:
        sizes = [t.shape[d] for t in outs]
    names = ctx.g.op("Split", ctx.v(input), ctx.g.ints(sizes), axis=d, outputs=len(sizes))
    return [names] if isinstance(names, str) else list(names)


@register("split", "chunk", "tensor_split")
def _split(ctx: Any, out: Any, input: Any, arg: Any, dim: int = 0) -> List[str]:
    return _split_sizes(ctx, input, out, dim)


@register("unbind")
def _unbind(ctx: Any, out: Any, input: Any, dim: int = 0) -> List[str]:
    d = dim % input.dim()
    return [ctx.g.squeeze(p, [d]) for p in _split_sizes(ctx, input, out, d, [1] * len(out))]


@register("narrow")
def _narrow(ctx: Any, out: Any, input: Any, dim: int, start: Any, length: int) -> str:
    d = dim % input.dim()
    s = int(start) % input.shape[d] if input.shape[d] else 0
    return ctx.g.op("Slice", ctx.v(input), ctx.g.ints([s]), ctx.g.ints([s + length]), ctx.g.ints([d]))


@register("select")
def _select(ctx: Any, out: Any, input: Any, dim: int, index: int) -> str:
    return ctx.g.op("Gather", ctx.v(input), ctx.v(int(index)), axis=dim % input.dim())


@register("index_select")
def _index_select(ctx: Any, out: Any, input: Any, dim: int, index: Any) -> str:
    return ctx.g.op("Gather", ctx.v(input), ctx.v(index, _C.int64), axis=dim % input.dim())


@register("flip")
def _flip(ctx: Any, out: Any, input: Any, *dims: Any) -> str:
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = tuple(dims[0])
    axes = _dims(dims, input.dim())
    n = len(axes)
    return ctx.g.op("Slice", ctx.v(input), ctx.g.ints([-1] * n), ctx.g.ints([INT64_MIN] * n), ctx.g.ints(axes),
                    ctx.g.ints([-1] * n))


@register("cumsum")
def _cumsum(ctx: Any, out: Any, input: Any, dim: int, *, dtype: Any = None) -> str:
    return ctx.g.op("CumSum", ctx.v(input, out.dtype), ctx.v(dim % input.dim()))


@register("tril", "triu")
def _tri(ctx: Any, out: Any, input: Any, diagonal: int = 0) -> str:
    return ctx.g.op("Trilu", ctx.v(input), ctx.v(int(diagonal)), upper=1 if ctx.op_name.endswith("triu") else 0)


# ---------------------------------------------------------------------- indexing
@register("Tensor.__getitem__")
def _getitem(ctx: Any, out: Any, input: Any, index: Any) -> str:
    items = list(index) if isinstance(index, tuple) else [index]
    n_real = sum(1 for it in items if it is not None and it is not Ellipsis)
    if any(it is Ellipsis for it in items):
        pos = items.index(Ellipsis)
        items[pos:pos + 1] = [slice(None)] * (input.dim() - n_real)
    x = ctx.v(input)
    starts, ends, axes, steps = [], [], [], []
    gathers = []  # (axis in the sliced tensor, int index or tensor)
    unsqueeze = []
    dim = 0  # dim of the input
    out_dim = 0  # dim of the result so far (after dropping int-indexed dims and adding None)
    for it in items:
        if it is None:
            unsqueeze.append(out_dim)
            out_dim += 1
            continue
        if isinstance(it, bool):
            raise NotImplementedError("cgrad.onnx.export: indexing with a Python bool")
        if isinstance(it, int):
            gathers.append((dim, int(it)))
            dim += 1
            continue
        if isinstance(it, slice):
            step = 1 if it.step is None else int(it.step)
            if step <= 0:
                raise ValueError("step must be greater than zero")
            if not (it.start is None and it.stop is None and step == 1):
                starts.append(0 if it.start is None else int(it.start))
                stop = INT64_MAX if it.stop is None else int(it.stop)
                if dim in ctx.dyn_dims(input) and stop >= input.shape[dim]:
                    stop = INT64_MAX
                ends.append(stop)
                axes.append(dim)
                steps.append(step)
            dim += 1
            out_dim += 1
            continue
        if isinstance(it, (_C._TensorBase, list)):
            t = it if isinstance(it, _C._TensorBase) else None
            if t is not None and t.dtype == _C.bool or (t is None and it and isinstance(it[0], bool)):
                raise NotImplementedError("cgrad.onnx.export: indexing with a boolean mask (its result's shape "
                                          "depends on the values)")
            gathers.append((dim, it))
            dim += 1
            out_dim += 1
            continue
        raise NotImplementedError(f"cgrad.onnx.export: indexing with {type(it).__name__}")
    _check_index_probe(ctx, input, out, items)
    if sum(1 for _, g in gathers if not isinstance(g, int)) > 1:
        raise NotImplementedError("cgrad.onnx.export: indexing with more than one index tensor")
    if starts:
        x = ctx.g.op("Slice", x, ctx.g.ints(starts), ctx.g.ints(ends), ctx.g.ints(axes), ctx.g.ints(steps))
    # gathers from the last dim down keep the earlier dims' positions valid
    for d, g in sorted(gathers, key=lambda p: -p[0]):
        if isinstance(g, int):
            x = ctx.g.op("Gather", x, ctx.v(g), axis=d)
        else:
            idx = ctx.v(g, _C.int64) if isinstance(g, _C._TensorBase) else ctx.g.ints(g)
            x = ctx.g.op("Gather", x, idx, axis=d)
    if unsqueeze:
        x = ctx.g.unsqueeze(x, unsqueeze)
    return x if x != ctx.v(input) else ctx.g.op("Identity", x)


@register("zeros_like", "ones_like", "full_like")
def _fill_like(ctx: Any, out: Any, input: Any, fill_value: Any = None, *, dtype: Any = None, **kwargs: Any) -> str:
    from onnx import numpy_helper
    from ._graph import np_dtype
    name = ctx.op_name.rsplit(".", 1)[-1]
    value = 0 if name == "zeros_like" else 1 if name == "ones_like" else fill_value
    ctx.check_numbers()
    arr = np.asarray([value], dtype=np_dtype(out.dtype))
    return ctx.g.op("ConstantOfShape", ctx.g.op("Shape", ctx.v(input)), value=numpy_helper.from_array(arr))


@register("all", "any")
def _all_any(ctx: Any, out: Any, input: Any, dim: Any = None, keepdim: bool = False) -> str:
    x = ctx.g.op("Cast", ctx.v(input, _C.bool), to=onnx_dtype(_C.int32))
    op = "ReduceMin" if ctx.op_name.endswith("all") else "ReduceMax"
    axes = None if dim is None else _dims(dim, input.dim())
    r = ctx.g.reduce(op, x, axes, bool(keepdim) and axes is not None)
    return ctx.g.op("Cast", r, to=onnx_dtype(_C.bool))


def _check_index_probe(ctx: Any, input: Any, out: Any, items: List[Any]) -> None:
    """Under dynamic axes, the emitted slices must give the probe run's result shape too; a slice bound computed
    from a dynamic size (x[:, :x.size(1) - 1]) would not, and is refused instead of being frozen."""
    probe_out = ctx.out_probe()
    if probe_out is None:
        return
    dyn = ctx.dyn_dims(input)
    conv: List[Any] = []
    dim = 0
    for it in items:
        if isinstance(it, slice):
            stop = it.stop
            if stop is not None and dim in dyn and int(stop) >= input.shape[dim]:
                stop = None
            conv.append(slice(it.start, stop, it.step))
            dim += 1
        elif it is None:
            conv.append(None)
        elif isinstance(it, _C._TensorBase):
            conv.append(np.zeros(tuple(it.shape), dtype=np.int64))
            dim += 1
        elif isinstance(it, list):
            conv.append(np.zeros(len(it), dtype=np.int64))
            dim += 1
        else:
            conv.append(it)
            dim += 1
    dummy = np.lib.stride_tricks.as_strided(np.zeros(1), shape=ctx.probe_shape(input),
                                            strides=(0,) * input.dim())
    try:
        shape = dummy[tuple(conv)].shape
    except IndexError:
        shape = None
    if shape != tuple(probe_out):
        raise OnnxExporterError(f"cgrad.onnx.export: indexing with {tuple(items)}: a bound depends on a dynamic "
                                "axis (such as x.size(1) - 1); slice with negative or open bounds instead")


@register("Tensor.new_zeros", "Tensor.new_ones", "Tensor.new_full", "Tensor.new_empty", "Tensor.new_tensor")
def _new_const(ctx: Any, out: Any, input: Any, *args: Any, **kwargs: Any) -> str:
    """A tensor made from a traced one's dtype only: a constant (refused when its size follows a dynamic axis)."""
    ctx.check_numbers()
    if ctx.out_dyn(out):
        raise OnnxExporterError(f"cgrad.onnx.export: {ctx.op_name} makes a tensor whose shape depends on a dynamic "
                                "axis; use zeros_like / full_like of a traced tensor")
    from ._graph import np_dtype
    return ctx.g.const(np.asarray(out.detach().numpy(), dtype=np_dtype(out.dtype)))


@register("Tensor.__setitem__")
def _setitem(ctx: Any, out: Any, input: Any, index: Any, value: Any) -> str:
    """x[index] = number: Where(mask, number, x) with a mask built from the index (ints, slices, ..., or a
    bool mask), shape-generic (Range over Shape(x) per indexed dim)."""
    if isinstance(value, _C._TensorBase):
        if value.numel() != 1:
            raise NotImplementedError("cgrad.onnx.export: x[index] = tensor (only a number or a one-element tensor "
                                      "is exported)")
        v = ctx.g.op("Reshape", ctx.v(value, input.dtype), ctx.g.ints([]))
    else:
        v = ctx.v(value, input.dtype)
    g = ctx.g
    x = ctx.v(input)
    n = input.dim()
    if isinstance(index, _C._TensorBase) and index.dtype == _C.bool:
        mask = ctx.v(index)
        if index.dim() < n:
            mask = g.unsqueeze(mask, list(range(index.dim(), n)))
        return g.op("Where", mask, v, x)
    items = list(index) if isinstance(index, tuple) else [index]
    if any(it is Ellipsis for it in items):
        pos = items.index(Ellipsis)
        items[pos:pos + 1] = [slice(None)] * (n - (len(items) - 1))
    if len(items) > n:
        raise IndexError(f"too many indices for tensor of dimension {n}")
    shape = g.op("Shape", x)
    mask = None
    for d, it in enumerate(items):
        if isinstance(it, slice) and it.start is None and it.stop is None and it.step in (None, 1):
            continue
        if not isinstance(it, (int, slice)) or isinstance(it, bool):
            raise NotImplementedError(f"cgrad.onnx.export: x[...] = v with a {type(it).__name__} index (ints, slices, "
                                      "... and a bool mask are exported)")
        size = g.op("Gather", shape, ctx.v(d), axis=0)
        r = g.op("Range", ctx.v(0), size, ctx.v(1))

        def bound(b: int) -> str:
            return g.op("Add", size, ctx.v(int(b))) if b < 0 else ctx.v(int(b))
        if isinstance(it, int):
            cond = g.op("Equal", r, bound(it))
        else:
            step = 1 if it.step is None else int(it.step)
            if step <= 0:
                raise ValueError("step must be greater than zero")
            start = 0 if it.start is None else int(it.start)
            cond = g.op("GreaterOrEqual", r, bound(start))
            if it.stop is not None:
                cond = g.op("And", cond, g.op("Less", r, bound(int(it.stop))))
            if step != 1:
                off = g.op("Sub", r, bound(start))
                cond = g.op("And", cond, g.op("Equal", g.op("Mod", off, ctx.v(step)), ctx.v(0)))
        axes = [a for a in range(n) if a != d]
        cond = g.unsqueeze(cond, axes) if axes else cond
        mask = cond if mask is None else g.op("And", mask, cond)
    if mask is None:
        return g.op("Expand", v, shape)
    return g.op("Where", mask, v, x)
