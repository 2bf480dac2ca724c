"""Order statistics, counting and searching ops (median, quantile, kthvalue,
mode, unique, bincount, histc, searchsorted, ...) composed from cgrad ops
(sort, gather, scatter, comparisons), so their gradients come from those."""
from __future__ import annotations

import builtins
import warnings
from typing import Any, List, Optional, Sequence, Tuple

from . import _C
from . import return_types as _return_types

__all__: List[str] = []  # the public functions, exported as cgrad.<name>

_FLOATS = ("float16", "bfloat16", "float32", "float64")


def _public(fn: Any) -> Any:
    __all__.append(fn.__name__)
    return fn


_median_t = _return_types.median
_nanmedian_t = _return_types.nanmedian
_kthvalue_t = _return_types.kthvalue
_mode_t = _return_types.mode
_cummin_t = _return_types.cummin
_histogram_t = _return_types.histogram
_histogramdd_t = _return_types.histogramdd


# ---------------------------------------------------------------- helpers
def _is_tensor(x: Any) -> bool:
    return isinstance(x, _C._TensorBase)


def _is_float(t: Any) -> bool:
    return str(t.dtype).split(".")[-1] in _FLOATS


def _is_integral(t: Any, include_bool: bool = False) -> bool:
    name = str(t.dtype).split(".")[-1]
    return (name.startswith("int") or name.startswith("uint") or (include_bool and name == "bool"))


def _dtype_name(t: Any) -> str:
    return str(t.dtype).split(".")[-1]


def _wrap_dim(dim: int, ndim: int, op: str) -> int:
    """dim in [0, max(ndim, 1)), or IndexError as PyTorch's."""
    n = builtins.max(ndim, 1)
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{op}(): dim must be an int, not {type(dim).__name__}")
    if dim < -n or dim >= n:
        raise IndexError(f"{op}(): Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


def _check_tensor(x: Any, op: str, what: str = "input") -> None:
    if not _is_tensor(x):
        raise TypeError(f"{op}(): argument '{what}' must be Tensor, not {type(x).__name__}")


def _extent(t: Any) -> Tuple[int, int]:
    """The byte range [start, end) of t's elements in memory."""
    start = t.data_ptr()
    if t.numel() == 0:
        return start, start
    last = sum((n - 1) * st for n, st in zip(t.shape, t.stride()))
    return start, start + (last + 1) * t.element_size()


def _overlaps(a: Any, b: Any) -> bool:
    (a0, a1), (b0, b1) = _extent(a), _extent(b)
    return a0 < b1 and b0 < a1


def _write_out(out: Any, result: Any, op: str, inputs: Sequence[Any] = ()) -> Any:
    """Copy result into out= (a tensor, or a tuple of tensors for several results) and return out."""
    if out is None:
        return result
    if _is_tensor(result):
        if not _is_tensor(out):
            raise TypeError(f"{op}(): out must be a Tensor, not {type(out).__name__}")
        if any(_is_tensor(i) and _overlaps(out, i) for i in inputs):
            raise RuntimeError(f"{op}(): unsupported operation: some elements of the input tensor and the "
                               f"written-to tensor refer to a single memory location.")
        if out.dtype != result.dtype:
            raise RuntimeError(f"{op}(): expected out to have dtype {result.dtype}, but got {out.dtype}")
        if out.numel() and tuple(out.shape) != tuple(result.shape):
            warnings.warn(f"{op}(): An output with one or more elements was resized since it had shape "
                          f"{list(out.shape)}, which does not match the required output shape {list(result.shape)}. "
                          f"This behavior is deprecated (as in PyTorch): pass an out tensor with zero elements to "
                          f"have it resized silently.", UserWarning, stacklevel=3)
        out.resize_(result.shape).copy_(result.detach())
        return out
    if not isinstance(out, (tuple, list)) or len(out) != len(result):
        raise TypeError(f"{op}(): out must be a tuple of {len(result)} Tensors")
    for o, r in zip(out, result):
        if not _is_tensor(o):
            raise TypeError(f"{op}(): out must be a tuple of Tensors, not of {type(o).__name__}")
        if any(_is_tensor(i) and _overlaps(o, i) for i in inputs):
            raise RuntimeError(f"{op}(): unsupported operation: some elements of the input tensor and the "
                               f"written-to tensor refer to a single memory location.")
    for o, r in zip(out, result):
        _write_out(o, r, op)
    return type(result)(*out) if hasattr(result, "_fields") else tuple(out)


def _nondifferentiable(result: Any, inputs: Sequence[Any], op: str) -> Any:
    """result, marked as depending on the inputs that require grad, with a backward that raises as PyTorch's
    does for ops without a derivative."""
    from .autograd import Function, grad_mode
    leaves = [t for t in inputs if _is_tensor(t) and t.requires_grad]
    if not leaves or not grad_mode.is_grad_enabled() or not _is_float(result):
        return result

    class _NotDifferentiable(Function):
        @staticmethod
        def forward(ctx: Any, value: Any, *args: Any) -> Any:
            return value.clone()

        @staticmethod
        def backward(ctx: Any, *grads: Any) -> Any:
            raise RuntimeError(f"the derivative for '{op}' is not implemented.")

    return _NotDifferentiable.apply(result.detach(), *leaves)


def _long(t: Any) -> Any:
    return t.to(_C.int64)


def _index_tensor(value: int, like: Any) -> Any:
    return _C.full(tuple(like.shape), value, dtype=_C.int64)


# ---------------------------------------------------------------- median, nanmedian, kthvalue, mode
def _select_sorted(x: Any, d: int, pos: Any, keepdim: bool) -> Tuple[Any, Any]:
    """(values, indices) of x at sorted positions pos (int64, x's shape with dim d of size 1) along dim d."""
    order = _C.argsort(x.detach(), dim=d, stable=True)
    idx = _C.gather(order, d, pos)
    values = _C.gather(x, d, idx)
    if not keepdim:
        values, idx = values.squeeze(d), idx.squeeze(d)
    return values, idx


def _median_dim(x: Any, dim: int, keepdim: bool, ignore_nan: bool, op: str) -> Tuple[Any, Any]:
    d = _wrap_dim(dim, x.dim(), op)
    zero_d = x.dim() == 0
    x1 = x.reshape(1) if zero_d else x
    n = x1.shape[d]
    if n == 0:
        raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")
    nan = _C.isnan(x1.detach())
    if ignore_nan:
        valid = (~nan).sum(d, keepdim=True)
        pos = _C.clamp(_C.div(valid - 1, 2, rounding_mode="floor"), min=0)
    else:
        pos = _C.where(nan.any(d, keepdim=True), n - 1, (n - 1) // 2)
    values, idx = _select_sorted(x1, d, _long(pos), keepdim or zero_d)
    if zero_d:
        values, idx = values.reshape(()), idx.reshape(())
    return values, idx


def _median_all(x: Any, ignore_nan: bool) -> Any:
    flat = x.reshape(-1)
    n = flat.numel()
    if n == 0:
        if not _is_float(x):
            from ._type_info import iinfo
            return _C.full((), iinfo(x.dtype).min, dtype=x.dtype)  # PyTorch's value for an empty integer input
        return _C.full((), float("nan"), dtype=x.dtype)
    svals = _C.sort(flat.detach(), stable=True).values
    nan = _C.isnan(svals)
    if ignore_nan:
        k = builtins.max((n - int(nan.sum().item()) - 1) // 2, 0)
    else:
        k = n - 1 if bool(nan.any().item()) else (n - 1) // 2
    v = svals[k]
    if not (x.requires_grad and _is_float(x)):
        return v
    # PyTorch spreads the gradient evenly over the elements equal to the median (all NaNs when it is NaN).
    xd = flat.detach()
    mask = (xd == v) | (_C.isnan(xd) & _C.isnan(v))
    count = mask.sum()
    return _C.where(mask, flat, 0).sum() / count


def _make_median(name: str, ignore_nan: bool, rtype: type) -> Any:
    def fn(input: Any, dim: Optional[int] = None, keepdim: bool = False, *, out: Any = None) -> Any:
        _check_tensor(input, name)
        if dim is None:
            if keepdim:
                raise TypeError(f"{name}(): keepdim needs a dim")
            return _write_out(out, _median_all(input, ignore_nan), name, [input])
        values, idx = _median_dim(input, dim, keepdim, ignore_nan, name)
        return _write_out(out, rtype(values, idx), name, [input])
    fn.__name__ = fn.__qualname__ = name
    return fn


_median = _make_median("median", False, _median_t)
_nanmedian = _make_median("nanmedian", True, _nanmedian_t)


@_public
def median(input: Any, dim: Optional[int] = None, keepdim: bool = False, *, out: Any = None) -> Any:
    """The lower median of all elements (dim=None), or (values, indices) along dim; NaN propagates."""
    return _median(input, dim, keepdim, out=out)


@_public
def nanmedian(input: Any, dim: Optional[int] = None, keepdim: bool = False, *, out: Any = None) -> Any:
    """The lower median ignoring NaNs, of all elements (dim=None) or as (values, indices) along dim."""
    return _nanmedian(input, dim, keepdim, out=out)


@_public
def kthvalue(input: Any, k: int, dim: int = -1, keepdim: bool = False, *, out: Any = None) -> Any:
    """(values, indices) of the k-th smallest element along dim (k counted from 1; NaN is largest)."""
    _check_tensor(input, "kthvalue")
    if not isinstance(k, int) or isinstance(k, bool):
        raise TypeError(f"kthvalue(): argument 'k' must be int, not {type(k).__name__}")
    d = _wrap_dim(dim, input.dim(), "kthvalue")
    zero_d = input.dim() == 0
    x1 = input.reshape(1) if zero_d else input
    n = x1.shape[d]
    if k < 1 or k > n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    shape = list(x1.shape)
    shape[d] = 1
    values, idx = _select_sorted(x1, d, _C.full(tuple(shape), k - 1, dtype=_C.int64), keepdim or zero_d)
    if zero_d:
        values, idx = values.reshape(()), idx.reshape(())
    return _write_out(out, _kthvalue_t(values, idx), "kthvalue", [input])


@_public
def mode(input: Any, dim: int = -1, keepdim: bool = False, *, out: Any = None) -> Any:
    """(values, indices) of the most frequent value along dim (the smallest such value on ties)."""
    _check_tensor(input, "mode")
    d = _wrap_dim(dim, input.dim(), "mode")
    zero_d = input.dim() == 0
    x1 = input.reshape(1) if zero_d else input
    n = x1.shape[d]
    if n == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    xm = x1.detach().movedim(d, -1)
    s, perm = _C.sort(xm, dim=-1, stable=True)
    ar = _C.arange(n, dtype=_C.int64).expand(*s.shape)
    start = _C.cat([_C.ones(*s.shape[:-1], 1, dtype=_C.bool), s.narrow(-1, 1, n - 1) != s.narrow(-1, 0, n - 1)], -1)
    run_start = _C.cummax(_C.where(start, ar, 0), -1).values
    count = ar - run_start + 1  # the length so far of each run; its maximum is reached at a run's end
    best = count.amax(-1, keepdim=True)
    pos = _C.where(count == best, ar, n).amin(-1, keepdim=True)  # the first (smallest value) longest run
    idx = _C.gather(perm, -1, pos).movedim(-1, d)
    values = _C.gather(x1, d, idx)
    if not (keepdim or zero_d):
        values, idx = values.squeeze(d), idx.squeeze(d)
    if zero_d:
        values, idx = values.reshape(()), idx.reshape(())
    return _write_out(out, _mode_t(values, idx), "mode", [input])


# ---------------------------------------------------------------- quantile, nanquantile
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(op: str, input: Any, q: Any, dim: Optional[int], keepdim: bool, interpolation: str,
              ignore_nan: bool) -> Any:
    _check_tensor(input, op)
    if not (_dtype_name(input) in ("float32", "float64")):
        raise RuntimeError(f"{op}() input tensor must be either float or double dtype, got {input.dtype}")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{op}() interpolation must be one of linear, lower, higher, midpoint or nearest. "
                           f"Got {interpolation}")
    if _is_tensor(q):
        if q.dim() > 1:
            raise RuntimeError(f"{op}() q must be a scalar or 1D tensor, got shape {tuple(q.shape)}")
        if q.dtype != input.dtype:
            raise RuntimeError(f"{op}() q tensor must be same dtype as the input tensor, got {q.dtype} and "
                               f"{input.dtype}")
        qt, scalar_q = q, q.dim() == 0
    elif isinstance(q, (int, float)) and not isinstance(q, bool):
        qt, scalar_q = _C.tensor(float(q), dtype=input.dtype), True
    else:
        raise TypeError(f"{op}(): q must be a float or a Tensor, not {type(q).__name__}")
    if input.numel() == 0:
        raise RuntimeError(f"{op}() input tensor must be non-empty")
    qd = qt.detach()
    if qd.numel() and not bool(((qd >= 0) & (qd <= 1)).all().item()):
        raise RuntimeError(f"{op}() q values must be in the range [0, 1]")
    if dim is None:
        xm = input.reshape(-1)
        out_shape = [1] * input.dim() if keepdim else []
    else:
        d = _wrap_dim(dim, input.dim(), op)
        xm = input.reshape(1) if input.dim() == 0 else input.movedim(d, -1)
        out_shape = list(input.shape)
        if out_shape:
            if keepdim:
                out_shape[d] = 1
            else:
                del out_shape[d]
    srt = _C.sort(xm, dim=-1).values  # differentiable: the gradient goes back through the sort
    n = srt.shape[-1]
    q1 = qt.reshape(-1)
    batch = list(srt.shape[:-1])
    nan = _C.isnan(srt.detach())
    if ignore_nan:
        valid = (~nan).sum(-1, keepdim=True).to(input.dtype)
        ranks = q1 * (valid - 1)
        ranks = _C.where(ranks.detach() < 0, 0.0, ranks)  # an all-NaN row: rank 0, a NaN
    else:
        ranks = q1 * (n - 1)
        ranks = ranks.expand(*batch, q1.numel())
        ranks = _C.where(nan.any(-1, keepdim=True), float(n - 1), ranks)
    if interpolation == "lower":
        ranks = _C.floor(ranks)
    elif interpolation == "higher":
        ranks = _C.ceil(ranks)
    elif interpolation == "nearest":
        ranks = _C.round(ranks)
    ranks = ranks.expand(*batch, q1.numel())
    below = _long(ranks.detach())
    result = _C.gather(srt, -1, below)
    if interpolation in ("linear", "midpoint"):
        above = _long(_C.ceil(ranks.detach()))
        weights = ranks - below.to(input.dtype) if interpolation == "linear" else _C.full_like(ranks, 0.5)
        result = _C.lerp(result, _C.gather(srt, -1, above), weights)
    result = result.movedim(-1, 0)  # (Q, *batch)
    return result.reshape(out_shape) if scalar_q else result.reshape([q1.numel()] + out_shape)


@_public
def quantile(input: Any, q: Any, dim: Optional[int] = None, keepdim: bool = False, *,
             interpolation: str = "linear", out: Any = None) -> Any:
    """The q-th quantiles of input (flattened when dim is None), interpolated as asked; NaN propagates."""
    return _write_out(out, _quantile("quantile", input, q, dim, keepdim, interpolation, False), "quantile")


@_public
def nanquantile(input: Any, q: Any, dim: Optional[int] = None, keepdim: bool = False, *,
                interpolation: str = "linear", out: Any = None) -> Any:
    """The q-th quantiles of input ignoring NaNs (flattened when dim is None), interpolated as asked."""
    return _write_out(out, _quantile("nanquantile", input, q, dim, keepdim, interpolation, True), "nanquantile")


# ---------------------------------------------------------------- cummin, logcumsumexp
@_public
def cummin(input: Any, dim: int, *, out: Any = None) -> Any:
    """(values, indices) of the running minimum along dim (the last index on ties; NaN propagates)."""
    _check_tensor(input, "cummin")
    d = _wrap_dim(dim, input.dim(), "cummin")
    xd = input.detach()
    name = _dtype_name(input)
    if name == "bool":
        flipped = ~xd
    elif _is_integral(input):
        flipped = _C.bitwise_not(xd)  # order-reversing for signed and unsigned integers, with no overflow
    else:
        flipped = -xd
    idx = _C.cummax(flipped, d).indices
    values = _C.gather(input, d, idx) if input.dim() else input.clone()
    return _write_out(out, _cummin_t(values, idx), "cummin", [input])


def _logaddexp(a: Any, b: Any) -> Any:
    """log(exp(a) + exp(b)) about the (constant) larger of the two, so every derivative stays finite."""
    m = _C.maximum(a, b).detach()
    m = _C.where(_C.isinf(m), 0.0, m)
    return m + _C.log(_C.exp(a - m) + _C.exp(b - m))


@_public
def logcumsumexp(input: Any, dim: int, *, out: Any = None) -> Any:
    """log(cumsum(exp(input))) along dim, computed stably (a log-depth scan of logaddexp)."""
    _check_tensor(input, "logcumsumexp")
    d = _wrap_dim(dim, input.dim(), "logcumsumexp")
    if not _is_float(input):
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for '{input.dtype}'")
    if input.dim() == 0:
        return _write_out(out, input.clone(), "logcumsumexp")
    y = input
    n = y.shape[d]
    step = 1
    while step < n:
        y = _C.cat([y.narrow(d, 0, step), _logaddexp(y.narrow(d, step, n - step), y.narrow(d, 0, n - step))], d)
        step *= 2
    if y is input:
        y = input.clone()
    return _write_out(out, y, "logcumsumexp")


# ---------------------------------------------------------------- unique, unique_consecutive
def _pack(output: Any, inverse: Any, counts: Any, return_inverse: bool, return_counts: bool) -> Any:
    if return_inverse and return_counts:
        return output, inverse, counts
    if return_inverse:
        return output, inverse
    if return_counts:
        return output, counts
    return output


def _group_counts(gid: Any, groups: int) -> Any:
    return _C.zeros(groups, dtype=_C.int64).scatter_add(0, gid, _C.ones(gid.numel(), dtype=_C.int64))


def _dense_rank_rows(rows: Any) -> Any:
    """Lexicographic dense rank (int64, (n,)) of the rows of an (n, m) tensor: equal rows share a rank."""
    n, m = rows.shape

    def rank_columns(cols: Any) -> Any:
        s, p = _C.sort(cols, dim=0, stable=True)
        k = cols.shape[1]
        new = _C.cat([_C.ones(1, k, dtype=_C.bool), s.narrow(0, 1, n - 1) != s.narrow(0, 0, n - 1)], 0)
        r = _C.cumsum(_long(new), 0) - 1
        return _C.zeros(n, k, dtype=_C.int64).scatter(0, p, r)

    if m == 0:
        return _C.zeros(n, dtype=_C.int64)
    r = rank_columns(rows)
    while r.shape[1] > 1:  # combine neighbouring columns pairwise (ranks < n, so r1 * n + r2 < n * n)
        if r.shape[1] % 2:
            r = _C.cat([r, _C.zeros(n, 1, dtype=_C.int64)], 1)
        r = rank_columns(r[:, 0::2] * n + r[:, 1::2])
    return r.reshape(n)


def _unique_dim(input: Any, d: int, consecutive: bool, op: str) -> Tuple[Any, Any, Any]:
    xm = input.detach().movedim(d, 0)
    n = xm.shape[0]
    m = 1
    for size in xm.shape[1:]:
        m *= size
    rows = xm.reshape(n, m)
    if n == 0:
        return input, _C.zeros(0, dtype=_C.int64), _C.zeros(0, dtype=_C.int64)
    if consecutive:
        change = (rows.narrow(0, 1, n - 1) != rows.narrow(0, 0, n - 1)).any(1)
        new = _C.cat([_C.ones(1, dtype=_C.bool), change])
        gid = _C.cumsum(_long(new), 0) - 1
        first = _C.nonzero(new).reshape(-1)
    else:
        gid = _dense_rank_rows(rows)
        groups = int(gid.amax().item()) + 1
        first = _C.zeros(groups, dtype=_C.int64).scatter(0, gid, _C.arange(n, dtype=_C.int64))
    groups = first.numel()
    return _C.index_select(input, d, first), gid, _group_counts(gid, groups)


def _unique_flat(input: Any, consecutive: bool) -> Tuple[Any, Any, Any]:
    flat = input.reshape(-1)
    n = flat.numel()
    if n == 0:
        return flat, _C.zeros(tuple(input.shape), dtype=_C.int64), _C.zeros(0, dtype=_C.int64)
    if consecutive:
        vals, perm = flat, None
    else:
        vals, perm = _C.sort(flat, stable=True)
    vd = vals.detach()
    new = _C.cat([_C.ones(1, dtype=_C.bool), vd.narrow(0, 1, n - 1) != vd.narrow(0, 0, n - 1)])
    gid = _C.cumsum(_long(new), 0) - 1
    first = _C.nonzero(new).reshape(-1)
    output = _C.index_select(vals, 0, first)
    inverse = gid if perm is None else _C.zeros(n, dtype=_C.int64).scatter(0, perm, gid)
    return output, inverse.reshape(tuple(input.shape)), _group_counts(gid, first.numel())


@_public
def unique(input: Any, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
           dim: Optional[int] = None) -> Any:
    """The unique elements (or slices along dim) of input in ascending order, with inverse indices and counts."""
    _check_tensor(input, "unique")
    if dim is None:
        output, inverse, counts = _unique_flat(input, False)
    else:
        d = _wrap_dim(dim, input.dim(), "unique")
        output, inverse, counts = _unique_dim(input, d, False, "unique")
    output = _nondifferentiable(output.detach(), [input], "_unique2")
    return _pack(output, inverse, counts, return_inverse, return_counts)


@_public
def unique_consecutive(input: Any, return_inverse: bool = False, return_counts: bool = False,
                       dim: Optional[int] = None) -> Any:
    """input with each run of equal consecutive elements (or slices along dim) kept once, with inverse and counts."""
    _check_tensor(input, "unique_consecutive")
    if dim is None:
        output, inverse, counts = _unique_flat(input, True)
    else:
        d = _wrap_dim(dim, input.dim(), "unique_consecutive")
        output, inverse, counts = _unique_dim(input, d, True, "unique_consecutive")
    output = _nondifferentiable(output.detach(), [input], "unique_consecutive")
    return _pack(output, inverse, counts, return_inverse, return_counts)


# ---------------------------------------------------------------- bincount, histc, histogram, histogramdd
@_public
def bincount(input: Any, weights: Optional[Any] = None, minlength: int = 0) -> Any:
    """Counts (or summed weights) of each non-negative integer value of the 1-d input."""
    _check_tensor(input, "bincount")
    if input.dim() != 1 or not _is_integral(input, include_bool=True):
        raise RuntimeError(f"bincount only supports 1-d non-negative integral inputs, got a {input.dim()}-d "
                           f"{input.dtype} tensor")
    if minlength < 0:
        raise RuntimeError(f"bincount(): minlength should be >= 0, got {minlength}")
    if weights is not None and (not _is_tensor(weights) or weights.dim() != 1 or
                                weights.shape[0] != input.shape[0]):
        raise RuntimeError("bincount(): weights should be 1-d and have the same length as input, got "
                           f"{tuple(weights.shape) if _is_tensor(weights) else type(weights).__name__} and "
                           f"{tuple(input.shape)}")
    idx = _long(input)
    if idx.numel() and int(idx.amin().item()) < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs (got a negative value)")
    length = builtins.max(int(idx.amax().item()) + 1 if idx.numel() else 0, minlength)
    if weights is None:
        return _C.zeros(length, dtype=_C.int64).scatter_add(0, idx, _C.ones(idx.numel(), dtype=_C.int64))
    dtype = weights.dtype if _dtype_name(weights) in ("float32", "float64") else _C.float64
    w = weights.detach().to(dtype)
    result = _C.zeros(length, dtype=dtype).scatter_add(0, idx, w)
    return _nondifferentiable(result, [weights], "bincount")


def _finite(v: float) -> bool:
    return v == v and v not in (float("inf"), float("-inf"))


def _bin_positions(x: Any, edges: Any, linear: bool) -> Tuple[Any, Any]:
    """(bin index (int64), in-range mask) of each element of 1-d x for the 1-d ascending edges."""
    nb = edges.numel() - 1
    left, right = edges[0], edges[-1]
    inside = (x >= left) & (x <= right)
    if linear:  # PyTorch's histc: the bin by division, in the input's dtype
        pos = _C.floor((x - left) * nb / (right - left))
        pos = _long(_C.where(inside, pos, 0.0))
    else:  # the bin by search of the edges (upper bound)
        pos = searchsorted(edges, x.contiguous(), right=True) - 1
        pos = _C.where(inside, pos, 0)
    pos = _C.clamp(pos, 0, builtins.max(nb - 1, 0))
    return pos, inside


def _check_float_input(input: Any, op: str) -> None:
    _check_tensor(input, op)
    if not _is_float(input):
        raise RuntimeError(f"{op}: input tensor must be a floating-point tensor, got {input.dtype}")


@_public
def histc(input: Any, bins: int = 100, min: float = 0, max: float = 0, *, out: Any = None) -> Any:  # noqa: A002
    """The histogram of input in `bins` equal bins over [min, max] (the data's range when min == max)."""
    _check_float_input(input, "torch.histc")
    if bins <= 0:
        raise RuntimeError(f"torch.histc(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    if lo > hi:
        raise RuntimeError(f"torch.histc(): max must be larger than min, got min={lo} max={hi}")
    flat = input.detach().reshape(-1)
    if lo == hi and flat.numel():
        lo, hi = float(flat.amin().item()), float(flat.amax().item())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (_finite(lo) and _finite(hi)):
        raise RuntimeError(f"torch.histc(): range of [{lo}, {hi}] is not finite")
    edges = _C.linspace(lo, hi, bins + 1, dtype=input.dtype)
    pos, inside = _bin_positions(flat, edges, True)
    result = _C.zeros(bins, dtype=input.dtype).scatter_add(0, pos, inside.to(input.dtype))
    return _write_out(out, result, "histc")


def _outer_edges(columns: Any, ranges: Optional[Sequence[float]], d: int, op: str) -> List[Tuple[float, float]]:
    """The leftmost and rightmost edge of each of the d dims (columns: (N, d)), as PyTorch picks them."""
    edges = []
    for j in range(d):
        if ranges is not None:
            lo, hi = float(ranges[2 * j]), float(ranges[2 * j + 1])
        elif columns.shape[0] == 0:
            lo, hi = 0.0, 1.0
        else:
            col = columns[:, j]
            lo, hi = float(col.amin().item()), float(col.amax().item())
        if lo > hi:
            raise RuntimeError(f"{op}: min should not exceed max, but got min {lo} max {hi} for dimension {j}")
        if not (_finite(lo) and _finite(hi)):
            raise RuntimeError(f"{op}: range of [{lo}, {hi}] is not finite")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges.append((lo, hi))
    return edges


def _histogramdd_core(op: str, input: Any, bins: Any, range: Optional[Sequence[float]], weight: Optional[Any],
                      density: bool, d: int) -> Tuple[Any, List[Any]]:
    """hist and bin edges of the (N, d) points of input (reshaped) for bins: int, ints, or edge tensors."""
    pts = input.detach().reshape(-1, d) if d else input.detach().reshape(-1, 0)
    if weight is not None:
        _check_tensor(weight, op, "weight")
        if tuple(weight.shape) != tuple(input.shape[:-1]):
            raise RuntimeError(f"{op}: if weight tensor is provided it should have the same shape as the input "
                               f"tensor excluding its innermost dimension, got {tuple(weight.shape)} and "
                               f"{tuple(input.shape)}")
        if weight.dtype != input.dtype:
            raise RuntimeError(f"{op}: if weight tensor is provided, input tensor and weight tensor should have "
                               f"the same dtype, got {input.dtype} and {weight.dtype}")
    if range is not None:
        if len(range) != 2 * d:
            raise RuntimeError(f"{op}: for a {d}-dimensional histogram, range should have {2 * d} elements, "
                               f"but got {len(range)}")
    if isinstance(bins, int) and not isinstance(bins, bool):
        bins = [bins] * d
    bins = list(bins)
    if len(bins) != d:
        raise RuntimeError(f"{op}: expected {d} sequences of bin edges for a {d}-dimensional histogram but got "
                           f"{len(bins)}")
    edges: List[Any] = []
    if all(_is_tensor(b) for b in bins):
        for j, b in enumerate(bins):
            if b.dtype != input.dtype:
                raise RuntimeError(f"{op}: input tensor and bins tensors should have the same dtype, but got "
                                   f"input {input.dtype} and bins {b.dtype} for dimension {j}")
            if b.dim() != 1 or b.numel() == 0:
                raise RuntimeError(f"{op}: bins tensor should have one dimension and at least 1 element, but got "
                                   f"shape {tuple(b.shape)} for dimension {j}")
            edges.append(b.detach())
    else:
        for j, b in enumerate(bins):
            if _is_tensor(b) or not isinstance(b, int) or b <= 0:
                raise RuntimeError(f"{op}(): bins must be > 0, but got {b} for dimension {j}")
        outer = _outer_edges(pts, range, d, op)
        edges = [_C.linspace(lo, hi, b + 1, dtype=input.dtype) for (lo, hi), b in zip(outer, bins)]
    counts = [e.numel() - 1 for e in edges]
    n_all = 1
    for c in counts:
        n_all *= builtins.max(c, 0)
    flat_pos = _C.zeros(pts.shape[0], dtype=_C.int64)
    inside_all = _C.ones(pts.shape[0], dtype=_C.bool)
    for j, e in enumerate(edges):
        if counts[j] <= 0:
            inside_all = inside_all & False
            continue
        pos, inside = _bin_positions(pts[:, j], e, False)
        flat_pos = flat_pos * counts[j] + pos
        inside_all = inside_all & inside
    w = weight.detach().reshape(-1) if weight is not None else _C.ones(pts.shape[0], dtype=input.dtype)
    w = _C.where(inside_all, w, 0)
    hist = _C.zeros(n_all, dtype=input.dtype)
    if n_all:
        hist = hist.scatter_add(0, flat_pos, w)
    hist = hist.reshape([builtins.max(c, 0) for c in counts])
    if density:
        hist = hist / hist.sum()
        for j, e in enumerate(edges):
            shape = [1] * d
            shape[j] = counts[j]
            hist = hist / (e.narrow(0, 1, counts[j]) - e.narrow(0, 0, counts[j])).reshape(shape)
    return _nondifferentiable(hist, [input, weight], op.replace("torch.", "")), edges


@_public
def histogram(input: Any, bins: Any = 100, *, range: Optional[Sequence[float]] = None,  # noqa: A002
              weight: Optional[Any] = None, density: bool = False, out: Any = None) -> Any:
    """(hist, bin_edges) of input for `bins` equal bins over range (or the data's) or the given edge tensor."""
    _check_float_input(input, "torch.histogram")
    if _is_tensor(bins):
        if bins.dim() != 1:
            raise RuntimeError(f"torch.histogram: bins tensor should have one dimension, but got {bins.dim()}")
        spec: Any = [bins]
    elif isinstance(bins, int) and not isinstance(bins, bool):
        spec = [bins]
    else:
        raise TypeError(f"histogram(): bins must be an int or a Tensor, not {type(bins).__name__}")
    if weight is not None and _is_tensor(weight) and tuple(weight.shape) != tuple(input.shape):
        raise RuntimeError(f"torch.histogram: if weight tensor is provided, it should have the same shape as the "
                           f"input tensor, got {tuple(weight.shape)} and {tuple(input.shape)}")
    hist, edges = _histogramdd_core("torch.histogram", input.reshape(-1, 1) if input.numel() else input.reshape(0, 1),
                                    spec, range, weight.reshape(-1) if _is_tensor(weight) else weight, density, 1)
    result = _histogram_t(hist, edges[0].clone() if _is_tensor(bins) else edges[0])
    return _write_out(out, result, "histogram")


@_public
def histogramdd(input: Any, bins: Any = 10, *, range: Optional[Sequence[float]] = None,  # noqa: A002
                weight: Optional[Any] = None, density: bool = False) -> Any:
    """(hist, bin_edges) of the points in input's last dim: D-dimensional bins (ints or edge tensors)."""
    _check_float_input(input, "torch.histogramdd")
    if input.dim() < 2:
        raise RuntimeError(f"torch.histogramdd: input tensor should have at least 2 dimensions, but got "
                           f"{input.dim()}")
    d = input.shape[-1]
    hist, edges = _histogramdd_core("torch.histogramdd", input, bins, range, weight, density, d)
    return _histogramdd_t(hist, tuple(e if not _is_tensor(b) else e.clone()
                                      for e, b in zip(edges, bins if isinstance(bins, (list, tuple)) else [0] * d)))


# ---------------------------------------------------------------- searchsorted, bucketize, isin
def _as_tensor_like(value: Any, like: Any) -> Any:
    return _C.tensor(value, dtype=_C.result_type(like, value))


@_public
def searchsorted(sorted_sequence: Any, input: Any, *, out_int32: bool = False, right: bool = False,
                 side: Optional[str] = None, sorter: Optional[Any] = None, out: Any = None) -> Any:
    """Indices where the elements of input would be inserted into sorted_sequence (along its last dim)."""
    op = "torch.searchsorted()"
    _check_tensor(sorted_sequence, "searchsorted", "sorted_sequence")
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"{op}: side can only be 'left' or 'right' but got {side}")
        if side == "left" and right:
            raise RuntimeError(f"{op}: side and right can't be set to opposites, got side of left while right "
                               f"was True")
        right = side == "right"
    scalar = not _is_tensor(input)
    if scalar:
        if sorted_sequence.dim() != 1:
            raise RuntimeError(f"{op}: input value can be a scalar only when boundaries tensor dimension is 1, "
                               f"but we got boundaries tensor dim({sorted_sequence.dim()})")
        input = _as_tensor_like(input, sorted_sequence)
    seq = sorted_sequence.detach()
    if seq.dim() == 0:
        raise RuntimeError(f"{op}: boundaries tensor should have positive dimension, but got 0 dimension")
    if sorter is not None:
        _check_tensor(sorter, "searchsorted", "sorter")
        if sorter.dtype != _C.int64:
            raise RuntimeError(f"{op}: sorter must be a tensor of long dtype but got dtype {sorter.dtype}")
        if tuple(sorter.shape) != tuple(seq.shape):
            raise RuntimeError(f"{op}: boundary and sorter must have the same size, but got boundary tensor "
                               f"{tuple(seq.shape)}and got sorter tensor {tuple(sorter.shape)}")
        if sorter.numel() and (int(sorter.amin().item()) < 0 or int(sorter.amax().item()) >= seq.shape[-1]):
            raise RuntimeError(f"{op}: sorter index out of range")
        seq = _C.gather(seq, -1, sorter)
    vals = input.detach()
    if seq.dim() != 1 and (vals.dim() != seq.dim() or tuple(vals.shape[:-1]) != tuple(seq.shape[:-1])):
        raise RuntimeError(f"{op}: boundaries tensor should be 1 dimension or the first N-1 dimensions of "
                           f"boundaries tensor and input value tensor must match, but we got boundaries tensor "
                           f"{tuple(seq.shape)} and input value tensor {tuple(vals.shape)}")
    dtype = _C.promote_types(seq.dtype, vals.dtype)
    m = seq.shape[-1]
    out_shape = tuple(vals.shape)
    batch = 1
    for size in seq.shape[:-1]:
        batch *= size
    if seq.dim() == 1:
        s2, v2 = seq.reshape(1, m), vals.reshape(1, vals.numel())
    else:
        s2, v2 = seq.reshape(batch, m), vals.reshape(batch, vals.shape[-1])
    n = v2.shape[-1]
    if m == 0 or n == 0 or v2.shape[0] == 0:
        result = _C.zeros(out_shape, dtype=_C.int64)
    else:
        s2, v2 = s2.to(dtype), v2.to(dtype)
        # one stable sort of values and boundaries together: ties put values before equal boundaries (left)
        # or after them (right); a value's index is the number of boundaries before it.
        both = _C.cat([s2, v2], -1) if right else _C.cat([v2, s2], -1)
        perm = _C.argsort(both, dim=-1, stable=True)
        is_seq = (perm < m) if right else (perm >= n)
        before = _C.cumsum(_long(is_seq), -1)
        placed = _C.zeros(tuple(perm.shape), dtype=_C.int64).scatter(-1, perm, before)
        result = (placed.narrow(-1, m, n) if right else placed.narrow(-1, 0, n)).reshape(out_shape)
    if out_int32:
        result = result.to(_C.int32)
    return _write_out(out, result, "searchsorted")


@_public
def bucketize(input: Any, boundaries: Any, *, out_int32: bool = False, right: bool = False,
              out: Any = None) -> Any:
    """The bucket index of each element of input for the 1-d ascending boundaries."""
    _check_tensor(boundaries, "bucketize", "boundaries")
    if boundaries.dim() != 1:
        raise RuntimeError(f"bucketize: boundaries tensor must be 1 dimension, but got dim({boundaries.dim()})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right, out=out)


@_public
def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False, invert: bool = False) -> Any:
    """A bool tensor shaped like elements: whether each element occurs in test_elements (or not, invert)."""
    if not _is_tensor(elements) and not _is_tensor(test_elements):
        raise TypeError("isin(): at least one of elements and test_elements must be a Tensor")
    if not _is_tensor(elements):
        elements = _as_tensor_like(elements, test_elements)
    if not _is_tensor(test_elements):
        test_elements = _as_tensor_like(test_elements, elements)
    dtype = _C.promote_types(elements.dtype, test_elements.dtype)
    e = elements.detach().to(dtype)
    t = test_elements.detach().reshape(-1).to(dtype)
    if t.numel() == 0 or e.numel() == 0:
        return _C.full(tuple(e.shape), bool(invert), dtype=_C.bool)
    st = _C.sort(t).values
    flat = e.reshape(-1)
    pos = _C.clamp(searchsorted(st, flat), max=t.numel() - 1)
    found = (_C.gather(st, 0, pos) == flat).reshape(tuple(e.shape))
    return ~found if invert else found


# ---------------------------------------------------------------- Tensor methods
class ReduceMethods:
    """The Tensor methods of this module's ops (cgrad.Tensor inherits them)."""

    def cumsum_(self, dim: int, *, dtype: Any = None) -> Any:
        """The cumulative sum along dim, written into self."""
        return self.copy_(self.cumsum(dim, dtype=dtype))

    def cumprod_(self, dim: int, *, dtype: Any = None) -> Any:
        """The cumulative product along dim, written into self."""
        return self.copy_(self.cumprod(dim, dtype=dtype))

    def median(self, dim: Optional[int] = None, keepdim: bool = False) -> Any:
        """See cgrad.median."""
        return median(self, dim, keepdim)

    def nanmedian(self, dim: Optional[int] = None, keepdim: bool = False) -> Any:
        """See cgrad.nanmedian."""
        return nanmedian(self, dim, keepdim)

    def quantile(self, q: Any, dim: Optional[int] = None, keepdim: bool = False, *,
                 interpolation: str = "linear") -> Any:
        """See cgrad.quantile."""
        return quantile(self, q, dim, keepdim, interpolation=interpolation)

    def nanquantile(self, q: Any, dim: Optional[int] = None, keepdim: bool = False, *,
                    interpolation: str = "linear") -> Any:
        """See cgrad.nanquantile."""
        return nanquantile(self, q, dim, keepdim, interpolation=interpolation)

    def kthvalue(self, k: int, dim: int = -1, keepdim: bool = False) -> Any:
        """See cgrad.kthvalue."""
        return kthvalue(self, k, dim, keepdim)

    def mode(self, dim: int = -1, keepdim: bool = False) -> Any:
        """See cgrad.mode."""
        return mode(self, dim, keepdim)

    def unique(self, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
               dim: Optional[int] = None) -> Any:
        """See cgrad.unique."""
        return unique(self, sorted, return_inverse, return_counts, dim)

    def unique_consecutive(self, return_inverse: bool = False, return_counts: bool = False,
                           dim: Optional[int] = None) -> Any:
        """See cgrad.unique_consecutive."""
        return unique_consecutive(self, return_inverse, return_counts, dim)

    def bincount(self, weights: Optional[Any] = None, minlength: int = 0) -> Any:
        """See cgrad.bincount."""
        return bincount(self, weights, minlength)

    def histc(self, bins: int = 100, min: float = 0, max: float = 0) -> Any:  # noqa: A002
        """See cgrad.histc."""
        return histc(self, bins, min, max)

    def histogram(self, bins: Any = 100, *, range: Optional[Sequence[float]] = None,  # noqa: A002
                  weight: Optional[Any] = None, density: bool = False) -> Any:
        """See cgrad.histogram."""
        return histogram(self, bins, range=range, weight=weight, density=density)

    def cummin(self, dim: int) -> Any:
        """See cgrad.cummin."""
        return cummin(self, dim)

    def logcumsumexp(self, dim: int) -> Any:
        """See cgrad.logcumsumexp."""
        return logcumsumexp(self, dim)

