"""torch.masked's operations on strided tensors: masked-out elements are
replaced by the operation's identity (or left out of the count) before the
plain cgrad op runs, so autograd comes from where / sum / sort / gather."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple, Union

DimOrDims = Optional[Union[int, Sequence[int]]]

_SMALL_INTS = ("uint8", "bool", "int8", "int16", "int32")


def _cg() -> Any:
    import cgrad
    return cgrad


def _name(dtype: Any) -> str:
    return str(dtype).split(".")[-1]


def _check_input(op: str, t: Any, what: str = "input") -> None:
    """Refuse what is not a strided cgrad tensor (sparse layouts and MaskedTensor are not supported)."""
    cgrad = _cg()
    if hasattr(t, "get_mask") and hasattr(t, "get_data"):
        raise NotImplementedError(f"masked.{op}: MaskedTensor {what} is not supported, only strided tensors")
    if not isinstance(t, cgrad.Tensor):
        raise TypeError(f"masked.{op}: {what} must be a Tensor, got {type(t).__name__}")
    layout = str(getattr(t, "layout", "torch.strided"))
    if getattr(t, "is_sparse", False) or not layout.endswith("strided"):
        raise NotImplementedError(f"masked.{op}: sparse {what} (layout {layout}) is not supported, "
                                  "only strided tensors")


def _canonical_dim(dim: DimOrDims, ndim: int) -> Tuple[int, ...]:
    """dim as a sorted tuple of non-negative dims; None and () mean every dim."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    n = max(ndim, 1)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    out = []
    for d in dims:
        if not isinstance(d, int) or isinstance(d, bool):
            raise TypeError(f"dim must be an int or a sequence of ints, got {dim!r}")
        if d >= n or d < -n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
        if d % n in out:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        out.append(d % n)
    return tuple(sorted(out))


def _input_mask(op: str, input: Any, mask: Any) -> Any:
    """The boolean mask broadcast to input's shape."""
    cgrad = _cg()
    _check_input(op, mask, "mask")
    if tuple(mask.shape) != tuple(input.shape):
        if mask.ndim > input.ndim:
            raise IndexError(f"masked.{op}: expected a broadcastable mask (got mask dimensionality "
                             f"{mask.ndim} higher than the input's {input.ndim})")
        try:
            mask = cgrad.broadcast_to(mask, tuple(input.shape))
        except Exception as e:  # noqa: BLE001 - re-raised with the op's name
            raise RuntimeError(f"masked.{op}: mask of shape {tuple(mask.shape)} cannot be broadcast to the "
                               f"input's shape {tuple(input.shape)}") from e
    if mask.dtype != cgrad.bool:
        mask = mask.to(dtype=cgrad.bool)
    return mask


def _identity(op: str, input: Any, ord: Any = None) -> Any:
    """The identity of the reduction op on input's dtype, a Python scalar."""
    cgrad = _cg()
    dt = input.dtype
    is_float = dt.is_floating_point
    if op in ("sum", "cumsum"):
        return False if dt == cgrad.bool else 0
    if op in ("prod", "cumprod"):
        return True if dt == cgrad.bool else 1
    if op in ("amax", "argmax", "logaddexp", "logsumexp"):
        if is_float:
            return float("-inf")
        if dt == cgrad.bool:
            return False
        return cgrad.iinfo(dt).min
    if op in ("amin", "argmin"):
        if is_float:
            return float("inf")
        if dt == cgrad.bool:
            return True
        return cgrad.iinfo(dt).max
    if op == "norm":
        if ord == float("-inf"):
            if not is_float:
                raise RuntimeError(f"masked.norm: ord=-inf needs a floating point input, got {_name(dt)}")
            return float("inf")
        return 0
    if op == "median":
        return float("nan")
    raise NotImplementedError(f"masked: the identity of {op} on {_name(dt)} input")


def _combine(op: str, input: Any, mask: Any, ord: Any = None) -> Any:
    """input with its masked-out elements replaced by the identity of op."""
    cgrad = _cg()
    _check_input(op, input)
    if mask is None:
        return input
    m = _input_mask(op, input, mask)
    fill = cgrad.tensor(_identity(op, input, ord), dtype=input.dtype)
    return cgrad.where(m, input, fill)


def _sum_dtype(input: Any, dtype: Any) -> Any:
    cgrad = _cg()
    if dtype is not None:
        return dtype
    return cgrad.int64 if _name(input.dtype) in _SMALL_INTS else input.dtype


def sum(input: Any, dim: DimOrDims = None, *, keepdim: Optional[bool] = False, dtype: Any = None,
        mask: Any = None) -> Any:
    """Sum of the elements of input that mask keeps, over dim (masked-out elements count as 0)."""
    cgrad = _cg()
    _check_input("sum", input)
    dtype = _sum_dtype(input, dtype)
    dims = _canonical_dim(dim, input.ndim)
    x = _combine("sum", input, mask)
    return cgrad.sum(x, dims, bool(keepdim), dtype=dtype)


def prod(input: Any, dim: DimOrDims = None, *, keepdim: Optional[bool] = False, dtype: Any = None,
         mask: Any = None) -> Any:
    """Product of the elements of input that mask keeps, over dim (masked-out elements count as 1)."""
    _check_input("prod", input)
    dtype = _sum_dtype(input, dtype)
    dims = _canonical_dim(dim, input.ndim)
    out = _combine("prod", input, mask).to(dtype=dtype)
    for d in reversed(dims):
        out = out.prod(dim=d, keepdim=bool(keepdim))
    return out


def cumsum(input: Any, dim: int, *, dtype: Any = None, mask: Any = None) -> Any:
    """Cumulative sum along dim of input with masked-out elements taken as 0."""
    cgrad = _cg()
    _check_input("cumsum", input)
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return cgrad.cumsum(_combine("cumsum", input, mask), d, dtype=dtype)


def cumprod(input: Any, dim: int, *, dtype: Any = None, mask: Any = None) -> Any:
    """Cumulative product along dim of input with masked-out elements taken as 1."""
    cgrad = _cg()
    _check_input("cumprod", input)
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return cgrad.cumprod(_combine("cumprod", input, mask), d, dtype=dtype)


def amax(input: Any, dim: DimOrDims = None, *, keepdim: Optional[bool] = False, dtype: Any = None,
         mask: Any = None) -> Any:
    """Maximum of the elements of input that mask keeps, over dim (-inf or the dtype's minimum where none)."""
    cgrad = _cg()
    _check_input("amax", input)
    dtype = input.dtype if dtype is None else dtype
    x = _combine("amax", input, mask)
    return cgrad.amax(x, _canonical_dim(dim, x.ndim), bool(keepdim)).to(dtype=dtype)


def amin(input: Any, dim: DimOrDims = None, *, keepdim: Optional[bool] = False, dtype: Any = None,
         mask: Any = None) -> Any:
    """Minimum of the elements of input that mask keeps, over dim (inf or the dtype's maximum where none)."""
    cgrad = _cg()
    _check_input("amin", input)
    dtype = input.dtype if dtype is None else dtype
    x = _combine("amin", input, mask)
    return cgrad.amin(x, _canonical_dim(dim, x.ndim), bool(keepdim)).to(dtype=dtype)


def argmax(input: Any, dim: Optional[int] = None, *, keepdim: Optional[bool] = False, dtype: Any = None,
           mask: Any = None) -> Any:
    """Index of the maximum of the kept elements along dim, cast to dtype (default: input's dtype)."""
    cgrad = _cg()
    _check_input("argmax", input)
    dtype = input.dtype if dtype is None else dtype
    return cgrad.argmax(_combine("argmax", input, mask), dim, bool(keepdim)).to(dtype=dtype)


def argmin(input: Any, dim: Optional[int] = None, *, keepdim: Optional[bool] = False, dtype: Any = None,
           mask: Any = None) -> Any:
    """Index of the minimum of the kept elements along dim, cast to dtype (default: input's dtype)."""
    cgrad = _cg()
    _check_input("argmin", input)
    dtype = input.dtype if dtype is None else dtype
    return cgrad.argmin(_combine("argmin", input, mask), dim, bool(keepdim)).to(dtype=dtype)


def _count(op: str, input: Any, dims: Tuple[int, ...], keepdim: bool, mask: Any) -> Any:
    """How many elements mask keeps over dims (int64)."""
    cgrad = _cg()
    if mask is None:
        ones = cgrad.ones(tuple(input.shape), dtype=cgrad.int64)
        return cgrad.sum(ones, dims, keepdim)
    return cgrad.sum(_input_mask(op, input, mask), dims, keepdim, dtype=cgrad.int64)


def mean(input: Any, dim: DimOrDims = None, *, keepdim: Optional[bool] = False, dtype: Any = None,
         mask: Any = None) -> Any:
    """Mean of the elements of input that mask keeps, over dim (nan where none is kept)."""
    _check_input("mean", input)
    source = "Optional"
    if dtype is None:
        dtype, source = input.dtype, "Input"
    if not dtype.is_floating_point:
        raise ValueError(f"mean(): Could not infer output dtype. {source} dtype must be either a floating "
                         f"point or complex dtype. Got: {_name(dtype)}")
    dims = _canonical_dim(dim, input.ndim)
    count = _count("mean", input, dims, bool(keepdim), mask)
    total = sum(input, dim, keepdim=keepdim, dtype=dtype, mask=mask)
    return total / count


def _nanmedian(x: Any, dim: int, keepdim: bool) -> Any:
    """The lower median of the non-NaN elements of x along dim (NaN where there are none), from sort."""
    cgrad = _cg()
    if x.ndim == 0:
        return x.clone()
    if x.shape[dim] == 0:
        raise IndexError(f"masked.median: expected reduction dim {dim} to have non-zero size")
    order = cgrad.sort(x.detach(), dim).indices  # NaN sorts last
    count = cgrad.sum(cgrad.logical_not(cgrad.isnan(x.detach())), dim, True, dtype=cgrad.int64)
    mid = cgrad.clamp(cgrad.floor_divide(count - 1, 2), min=0)
    val = cgrad.gather(x, dim, cgrad.gather(order, dim, mid))
    val = cgrad.where(count == 0, cgrad.tensor(float("nan"), dtype=x.dtype), val)
    return val if keepdim else val.squeeze(dim)


def median(input: Any, dim: int = -1, *, keepdim: bool = False, dtype: Any = None, mask: Any = None) -> Any:
    """Lower median of the elements of input that mask keeps, along dim (nan where none is kept)."""
    cgrad = _cg()
    _check_input("median", input)
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    is_float = input.dtype.is_floating_point
    if not is_float:
        input = input.to(dtype=cgrad.float32)
    out = _nanmedian(_combine("median", input, mask), d, bool(keepdim))
    if is_float:
        return out
    if bool(cgrad.isnan(out).any()):
        raise ValueError("masked median expects no fully masked out rows if dtype is not floating point")
    return out.to(dtype=dtype)


def logsumexp(input: Any, dim: DimOrDims = None, *, keepdim: bool = False, dtype: Any = None,
              mask: Any = None) -> Any:
    """log(sum(exp(x))) of the elements of input that mask keeps, over dim (-inf where none is kept)."""
    cgrad = _cg()
    _check_input("logsumexp", input)
    dtype = input.dtype if dtype is None else dtype
    dims = _canonical_dim(dim, input.ndim)
    return cgrad.logsumexp(_combine("logsumexp", input, mask), dims, keepdim=bool(keepdim)).to(dtype=dtype)


def logaddexp(input: Any, other: Any, *, dtype: Any = None, input_mask: Any = None, other_mask: Any = None) -> Any:
    """logaddexp of input and other with their masked-out elements taken as -inf."""
    cgrad = _cg()
    _check_input("logaddexp", input)
    _check_input("logaddexp", other, "other")
    dtype = input.dtype if dtype is None else dtype
    a = _combine("logaddexp", input, input_mask)
    b = _combine("logaddexp", other, other_mask)
    return cgrad.logaddexp(a, b).to(dtype=dtype)


def norm(input: Any, ord: Optional[float] = 2.0, dim: DimOrDims = None, *, keepdim: Optional[bool] = False,
         dtype: Any = None, mask: Any = None) -> Any:
    """Vector ord-norm of the elements of input that mask keeps, over dim."""
    cgrad = _cg()
    _check_input("norm", input)
    dtype = input.dtype if dtype is None else dtype
    if ord is None:
        ord = 2.0
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise TypeError(f"masked.norm: ord must be a number, got {type(ord).__name__}")
    if not (input.dtype.is_floating_point and dtype.is_floating_point):
        raise RuntimeError(f"masked.norm: expected a floating point input and dtype, got input {_name(input.dtype)}"
                           f" and dtype {_name(dtype)}")
    x = _combine("norm", input, mask, ord)
    dims = _canonical_dim(dim, input.ndim)
    if x.ndim == 0:
        dims = ()
    return cgrad.norm(x, float(ord), dims if dims else None, bool(keepdim), dtype=dtype)


def _std_var(op: str, input: Any, dim: DimOrDims, unbiased: Optional[bool], correction: Any, keepdim: Any,
             dtype: Any, mask: Any, take_sqrt: bool) -> Any:
    cgrad = _cg()
    _check_input(op, input)
    if unbiased is not None and correction is not None:
        raise RuntimeError(f"masked.{op}: only one of unbiased and correction may be given")
    corr = 1.0
    if unbiased is not None:
        corr = 1.0 if unbiased else 0.0
    if correction is not None:
        corr = float(correction)
    if dtype is None:
        dtype = input.dtype if input.dtype.is_floating_point else cgrad.float32
    compute = dtype if dtype.is_floating_point else cgrad.float32
    dims = _canonical_dim(dim, input.ndim)
    keep = bool(keepdim)
    count = _count(op, input, dims, True, mask)
    mean_ = sum(input, dim, keepdim=True, dtype=dtype, mask=mask) / count
    x = input - mean_
    total = sum(x * x, dim, keepdim=keep, dtype=compute, mask=mask)
    if not keep:
        count = count.reshape(tuple(total.shape))
    if corr != 0:
        count = cgrad.clamp(count.to(dtype=compute) - corr, min=0)
    out = (total / count).to(dtype=dtype)
    return cgrad.sqrt(out) if take_sqrt else out


def var(input: Any, dim: DimOrDims = None, unbiased: Optional[bool] = None, *,
        correction: Optional[Union[int, float]] = None, keepdim: Optional[bool] = False, dtype: Any = None,
        mask: Any = None) -> Any:
    """Variance of the elements of input that mask keeps, over dim (nan where too few are kept)."""
    return _std_var("var", input, dim, unbiased, correction, keepdim, dtype, mask, False)


def std(input: Any, dim: DimOrDims = None, unbiased: Optional[bool] = None, *,
        correction: Optional[Union[int, float]] = None, keepdim: Optional[bool] = False, dtype: Any = None,
        mask: Any = None) -> Any:
    """Standard deviation of the elements of input that mask keeps, over dim (nan where too few are kept)."""
    return _std_var("std", input, dim, unbiased, correction, keepdim, dtype, mask, True)


def softmax(input: Any, dim: int, *, dtype: Any = None, mask: Any = None) -> Any:
    """Softmax along dim over the kept elements (masked-out ones get 0; nan where none is kept)."""
    cgrad = _cg()
    _check_input("softmax", input)
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return cgrad.nn.functional.softmax(_combine("amax", input, mask), d, dtype=dtype)


def log_softmax(input: Any, dim: int, *, dtype: Any = None, mask: Any = None) -> Any:
    """Log-softmax along dim over the kept elements (masked-out ones get -inf; nan where none is kept)."""
    cgrad = _cg()
    _check_input("log_softmax", input)
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return cgrad.nn.functional.log_softmax(_combine("amax", input, mask), d, dtype=dtype)


def softmin(input: Any, dim: int, *, dtype: Any = None, mask: Any = None) -> Any:
    """Softmin along dim over the kept elements (masked-out ones get 0; nan where none is kept)."""
    cgrad = _cg()
    _check_input("softmin", input)
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return cgrad.nn.functional.softmin(_combine("amin", input, mask), d, dtype=dtype)


def normalize(input: Any, ord: float, dim: int, *, eps: float = 1e-12, dtype: Any = None, mask: Any = None) -> Any:
    """input divided by the masked ord-norm along dim (at least eps); masked-out elements become 0."""
    cgrad = _cg()
    _check_input("normalize", input)
    dtype = input.dtype if dtype is None else dtype
    x = _combine("sum", input, mask)
    nrm = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    denom = cgrad.maximum(nrm, cgrad.tensor(eps, dtype=nrm.dtype))
    return cgrad.div(x, denom)
