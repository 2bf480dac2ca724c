"""Shape, view-copy, creation and indexing ops that PyTorch composes from others
(torch.functional and the *_copy / *_scatter families), written here with cgrad
ops so autograd, higher-order gradients included, comes from theirs."""
from __future__ import annotations

import math
import warnings
from typing import Any, List, Optional, Sequence, Tuple, Union

from . import _C

__all__: List[str] = []  # the public functions, exported as cgrad.<name>

Tensor = Any  # cgrad.Tensor (the class is still being built when this module loads)
Shape = Union[int, Sequence[int]]


def _public(fn: Any) -> Any:
    __all__.append(fn.__name__)
    return fn


# ---------------------------------------------------------------------------------------------------------------
# helpers


def _wrap_dim(dim: int, ndim: int, name: str) -> int:
    """dim in [0, ndim) (a 0-d tensor takes dims -1 and 0), IndexError as PyTorch otherwise."""
    n = max(ndim, 1)
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{name}(): dim must be an int, got {type(dim).__name__}")
    if dim < -n or dim >= n:
        raise IndexError(f"{name}(): Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim + n if dim < 0 else dim


def _sizes(size: Any, name: str) -> Tuple[int, ...]:
    """A size given as ints, a sequence or a cgrad.Size, as a tuple of ints."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):  # cgrad.Size is a tuple
        size = size[0]
    out = []
    for s in size:
        if hasattr(s, "item") and not isinstance(s, int):
            s = s.item()
        if not isinstance(s, int) or isinstance(s, bool):
            raise TypeError(f"{name}(): size must be a sequence of ints, but got an element of type "
                            f"{type(s).__name__}")
        out.append(s)
    return tuple(out)


def _check_memory_format(memory_format: Any, name: str, allow_preserve: bool = True) -> None:
    """TypeError unless memory_format is None or a cgrad.memory_format; RuntimeError for preserve_format
    where the op has no input to preserve."""
    if memory_format is None:
        return
    if not isinstance(memory_format, _C.memory_format):
        raise TypeError(f"{name}(): argument 'memory_format' must be torch.memory_format, not "
                        f"{type(memory_format).__name__}")
    if memory_format is _C.preserve_format and not allow_preserve:
        raise RuntimeError(f"{name}(): unsupported memory format Preserve")


def _write_out(out: Any, result: Any, name: str) -> Any:
    """Copy result into out (resized as PyTorch does) and return out; result itself when out is None."""
    if out is None:
        return result
    if isinstance(result, (tuple, list)):
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            raise RuntimeError(f"{name}(): expected out to be a list of {len(result)} tensors")
        for o, r in zip(out, result):
            _write_out(o, r, name)
        return out
    if _C.is_grad_enabled() and (result.requires_grad or out.requires_grad):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    if not _C.can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"{name}(): result type {result.dtype} can't be cast to the desired output type "
                           f"{out.dtype}")
    if tuple(out.shape) == tuple(result.shape):
        out.copy_(result)
        return out
    if out.numel() != 0:
        warnings.warn(f"{name}(): An output with one or more elements was resized since it had shape "
                      f"{list(out.shape)}, which does not match the required output shape {list(result.shape)}.",
                      UserWarning, stacklevel=3)
    _resize_into(out, result.to(out.dtype))
    return out


def _resize_into(t: Any, contents: Any) -> None:
    """Give t (in place) the shape and values of contents."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if contents.dim() == 0:  # cat makes at least 1-d; a sum over a 1-element dim makes the 0-d shape
            _C.sum(contents.reshape(1), 0, out=t)
        else:
            _C.cat([contents], out=t)


def _no_grad() -> Any:
    from .autograd.grad_mode import no_grad  # imported late: cgrad.autograd needs cgrad loaded
    return no_grad()


def _positions(t: Any) -> Any:
    """Each element's flat (row-major) position in t's logical shape, as an int64 tensor of t's shape."""
    return _C.arange(t.numel(), dtype=_C.int64).reshape(tuple(t.shape))


def _scatter_view(input: Any, src: Any, view: Any, name: str) -> Any:
    """input with the elements of view(input) replaced by src, differentiably in both."""
    pos = view(_positions(input))
    if tuple(src.shape) != tuple(pos.shape):
        raise RuntimeError(f"{name}(): expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(pos.shape)}")
    if src.dtype != input.dtype:
        src = src.to(input.dtype)
    flat = input.reshape(-1)
    if pos.numel() == 0:
        return input.clone()
    return flat.scatter(0, pos.reshape(-1), src.reshape(-1)).reshape(tuple(input.shape))


# ---------------------------------------------------------------------------------------------------------------
# clone / ravel / atleast_nd / stacking and splitting


@_public
def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:
    """A copy of input that autograd connects to it (torch.clone)."""
    _check_memory_format(memory_format, "clone")
    return input.clone(memory_format=_C.preserve_format if memory_format is None else memory_format)


@_public
def ravel(input: Tensor) -> Tensor:
    """input flattened to 1-D (a view where possible)."""
    return input.reshape(-1)


def _atleast(tensors: Tuple[Any, ...], nd: int) -> Any:
    single = len(tensors) == 1 and not isinstance(tensors[0], (tuple, list))
    seq = tensors[0] if len(tensors) == 1 and not single else tensors
    outs = []
    for t in seq:
        if t.dim() >= nd:
            outs.append(t)
        elif nd == 1 or t.dim() == 0:
            outs.append(t.reshape((1,) * nd))
        elif nd == 2:
            outs.append(t.unsqueeze(0))
        else:  # nd == 3
            outs.append(t.unsqueeze(0).unsqueeze(-1) if t.dim() == 1 else t.unsqueeze(-1))
    return outs[0] if single else tuple(outs)


@_public
def atleast_1d(*tensors: Any) -> Any:
    """Each input viewed with at least one dimension."""
    return _atleast(tensors, 1)


@_public
def atleast_2d(*tensors: Any) -> Any:
    """Each input viewed with at least two dimensions."""
    return _atleast(tensors, 2)


@_public
def atleast_3d(*tensors: Any) -> Any:
    """Each input viewed with at least three dimensions."""
    return _atleast(tensors, 3)


@_public
def column_stack(tensors: Sequence[Tensor], *, out: Optional[Tensor] = None) -> Tensor:
    """The tensors stacked as columns (0-d and 1-d inputs become columns), then hstacked."""
    if len(tensors) == 0:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    cols = [t.reshape(t.numel(), 1) if t.dim() <= 1 else t for t in tensors]
    return _write_out(out, _C.hstack(cols), "column_stack")


def _slice_bounds(start: int, end: int, length: int) -> Tuple[int, int]:
    start = start + length if start < 0 else start
    end = end + length if end < 0 else end
    start = min(max(start, 0), length)
    end = min(max(end, start), length)
    return start, end


@_public
def tensor_split(input: Tensor, indices_or_sections: Any, dim: int = 0) -> Tuple[Tensor, ...]:
    """Views of input split along dim into a number of near-equal sections, or at the given indices."""
    if input.dim() == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = _wrap_dim(dim, input.dim(), "tensor_split")
    length = input.shape[d]
    ios = indices_or_sections
    if isinstance(ios, _C._TensorBase):
        if ios.is_floating_point() or ios.dtype == _C.bool:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have integer dtype, but got "
                               f"{ios.dtype}")
        if ios.dtype != _C.int64:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have long dtype, but got "
                               f"{ios.dtype}")
        if ios.dim() > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                               f"one-dimensional tensor, but got a tensor with {ios.dim()} dims")
        ios = int(ios.item()) if ios.dim() == 0 else [int(v) for v in ios.tolist()]
    if isinstance(ios, int) and not isinstance(ios, bool):
        if ios <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {ios}")
        base, extra = divmod(length, ios)
        sizes = [base + 1] * extra + [base] * (ios - extra)
        outs, start = [], 0
        for s in sizes:
            outs.append(input.narrow(d, start, s))
            start += s
        return tuple(outs)
    if not isinstance(ios, (tuple, list)) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ios):
        raise TypeError("tensor_split(): indices_or_sections must be an int, a sequence of ints or a tensor, not "
                        f"{type(ios).__name__}")
    outs, start = [], 0
    for idx in list(ios) + [length]:
        s, e = _slice_bounds(start, int(idx), length)
        outs.append(input.narrow(d, s, e - s))
        start = int(idx)
    return tuple(outs)


def _xsplit(input: Tensor, ios: Any, name: str, min_dim: int, dim: int) -> Tuple[Tensor, ...]:
    if input.dim() < min_dim:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dim} dimension"
                           f"{'s' if min_dim > 1 else ''}, but got a tensor with {input.dim()} dimensions!")
    if isinstance(ios, int) and not isinstance(ios, bool):
        if ios == 0 or input.shape[dim] % ios != 0:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                               f"dimension {input.shape[dim]} is not divisible by the split_size {ios}!")
    return tensor_split(input, ios, dim)


@_public
def hsplit(input: Tensor, indices_or_sections: Any) -> Tuple[Tensor, ...]:
    """tensor_split along dim 1 (dim 0 for a 1-D input), sections dividing the size exactly."""
    return _xsplit(input, indices_or_sections, "hsplit", 1, 1 if input.dim() > 1 else 0)


@_public
def vsplit(input: Tensor, indices_or_sections: Any) -> Tuple[Tensor, ...]:
    """tensor_split along dim 0 of an at least 2-D input, sections dividing the size exactly."""
    return _xsplit(input, indices_or_sections, "vsplit", 2, 0)


@_public
def dsplit(input: Tensor, indices_or_sections: Any) -> Tuple[Tensor, ...]:
    """tensor_split along dim 2 of an at least 3-D input, sections dividing the size exactly."""
    return _xsplit(input, indices_or_sections, "dsplit", 3, 2)


@_public
def split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0) -> Tuple[Tensor, ...]:
    """Views of input along dim of the given sizes, which must sum to its size there."""
    d = _wrap_dim(dim, input.dim(), "split_with_sizes")
    sizes = [int(s) for s in split_sizes]
    length = input.shape[d] if input.dim() else 1
    if any(s < 0 for s in sizes) or sum(sizes) != length:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {length} (input tensor's size "
                           f"at dimension {dim}), but got split_sizes={sizes}")
    outs, start = [], 0
    for s in sizes:
        outs.append(input.narrow(d, start, s))
        start += s
    return tuple(outs)


@_public
def split_with_sizes_copy(input: Tensor, split_sizes: Sequence[int], dim: int = 0, *,
                          out: Optional[Sequence[Tensor]] = None) -> Any:
    """split_with_sizes, each part a copy."""
    res = tuple(t.clone() for t in split_with_sizes(input, split_sizes, dim))
    return _write_out(out, res, "split_with_sizes_copy") if out is not None else res


@_public
def unsafe_split(tensor: Tensor, split_size_or_sections: Any, dim: int = 0) -> Tuple[Tensor, ...]:
    """torch.split without the view safety checks (the same values)."""
    return tuple(_C.split(tensor, split_size_or_sections, dim))


@_public
def unsafe_split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0) -> Tuple[Tensor, ...]:
    """split_with_sizes without the view safety checks (the same values)."""
    return split_with_sizes(input, split_sizes, dim)


@_public
def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> Tuple[Tensor, ...]:
    """torch.chunk without the view safety checks (the same values)."""
    return tuple(_C.chunk(input, chunks, dim))


# ---------------------------------------------------------------------------------------------------------------
# the *_copy family: the view op's values in a new tensor


@_public
def alias_copy(input: Tensor, *, out: Optional[Tensor] = None) -> Tensor:
    """A copy of input (the copy form of alias)."""
    return _write_out(out, input.clone(), "alias_copy")


@_public
def as_strided_copy(input: Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: Optional[int] = None,
                    *, out: Optional[Tensor] = None) -> Tensor:
    """as_strided, copied."""
    v = _C.as_strided(input, tuple(size), tuple(stride)) if storage_offset is None else \
        _C.as_strided(input, tuple(size), tuple(stride), storage_offset)
    return _write_out(out, v.clone(), "as_strided_copy")


@_public
def diagonal_copy(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1, *,
                  out: Optional[Tensor] = None) -> Tensor:
    """diagonal, copied."""
    return _write_out(out, _C.diagonal(input, offset, dim1, dim2).clone(), "diagonal_copy")


@_public
def expand_copy(input: Tensor, size: Sequence[int], *, implicit: bool = False,
                out: Optional[Tensor] = None) -> Tensor:
    """expand, copied."""
    return _write_out(out, input.expand(tuple(size)).clone(), "expand_copy")


@_public
def narrow_copy(input: Tensor, dim: int, start: int, length: int, *, out: Optional[Tensor] = None) -> Tensor:
    """narrow, copied."""
    return _write_out(out, _C.narrow(input, dim, start, length).clone(), "narrow_copy")


@_public
def permute_copy(input: Tensor, dims: Sequence[int], *, out: Optional[Tensor] = None) -> Tensor:
    """permute, copied."""
    return _write_out(out, _C.permute(input, tuple(dims)).clone(), "permute_copy")


@_public
def squeeze_copy(input: Tensor, dim: Any = None, *, out: Optional[Tensor] = None) -> Tensor:
    """squeeze, copied."""
    v = input.squeeze() if dim is None else input.squeeze(tuple(dim) if isinstance(dim, list) else dim)
    return _write_out(out, v.clone(), "squeeze_copy")


@_public
def t_copy(input: Tensor, *, out: Optional[Tensor] = None) -> Tensor:
    """t, copied."""
    return _write_out(out, _C.t(input).clone(), "t_copy")


@_public
def transpose_copy(input: Tensor, dim0: int, dim1: int, *, out: Optional[Tensor] = None) -> Tensor:
    """transpose, copied."""
    return _write_out(out, _C.transpose(input, dim0, dim1).clone(), "transpose_copy")


@_public
def unbind_copy(input: Tensor, dim: int = 0, *, out: Optional[Sequence[Tensor]] = None) -> Any:
    """unbind, each part copied."""
    res = tuple(t.clone() for t in _C.unbind(input, dim))
    return _write_out(out, res, "unbind_copy") if out is not None else res


@_public
def unfold_copy(input: Tensor, dimension: int, size: int, step: int, *, out: Optional[Tensor] = None) -> Tensor:
    """Tensor.unfold, copied."""
    return _write_out(out, input.unfold(dimension, size, step).clone(), "unfold_copy")


@_public
def unsqueeze_copy(input: Tensor, dim: int, *, out: Optional[Tensor] = None) -> Tensor:
    """unsqueeze, copied."""
    return _write_out(out, _C.unsqueeze(input, dim).clone(), "unsqueeze_copy")


@_public
def view_copy(input: Tensor, size: Any, *, out: Optional[Tensor] = None) -> Tensor:
    """Tensor.view (a shape or a dtype), copied."""
    v = input.view(size) if isinstance(size, _C.dtype) else input.view(tuple(size))
    return _write_out(out, v.clone(), "view_copy")


# ---------------------------------------------------------------------------------------------------------------
# grids, products, block matrices, rotations, diagonals


@_public
def meshgrid(*tensors: Any, indexing: Optional[str] = None) -> Tuple[Tensor, ...]:
    """Coordinate grids of the 0-D / 1-D inputs ('ij': matrix indexing, 'xy': Cartesian)."""
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    if len(tensors) == 0:
        raise RuntimeError("torch.meshgrid: Expected at least one tensor")
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t.dim()}D")
        if t.dtype != tensors[0].dtype:
            raise RuntimeError("torch.meshgrid: Expected all tensors in the tensor list to have the same dtype")
    ts = list(tensors)
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.numel() for t in ts)
    outs = []
    for i, t in enumerate(ts):
        view = [1] * len(ts)
        view[i] = -1
        outs.append(t.reshape(tuple(view)).expand(shape))
    if swap:
        outs[0], outs[1] = outs[1], outs[0]
    return tuple(outs)


@_public
def cartesian_prod(*tensors: Tensor) -> Tensor:
    """The Cartesian product of the 1-D inputs, one row per combination."""
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return _C.stack([g.reshape(-1) for g in grids], 1)


@_public
def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The length-r combinations of the elements of the 1-D input, one per row (itertools order)."""
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return _C.empty((0,), dtype=input.dtype)
    n = input.numel()
    grids = meshgrid(*([_C.arange(n, dtype=_C.int64)] * r), indexing="ij")
    mask = _C.ones(tuple([n] * r), dtype=_C.bool)
    for a, b in zip(grids[:-1], grids[1:]):
        mask = mask.logical_and(a <= b if with_replacement else a < b)
    cols = [input.index_select(0, g.masked_select(mask)) for g in grids]
    return _C.stack(cols, 1)


@_public
def block_diag(*tensors: Tensor) -> Tensor:
    """The block-diagonal matrix of the inputs (0-d / 1-d inputs as 1 x n blocks)."""
    blocks = []
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.dim()} dimensions")
        blocks.append(t.reshape(1, -1) if t.dim() < 2 else t)
    if not blocks:
        return _C.empty((1, 0))
    dtype = blocks[0].dtype
    for b in blocks[1:]:
        dtype = _C.promote_types(dtype, b.dtype)
    cols = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        r, c = b.shape
        parts = [_C.zeros((r, left), dtype=dtype), b.to(dtype), _C.zeros((r, cols - left - c), dtype=dtype)]
        rows.append(_C.cat(parts, 1))
        left += c
    return _C.cat(rows, 0)


@_public
def kron(input: Tensor, other: Tensor, *, out: Optional[Tensor] = None) -> Tensor:
    """The Kronecker product of input and other."""
    nd = max(input.dim(), other.dim())
    a = input.reshape((1,) * (nd - input.dim()) + tuple(input.shape))
    b = other.reshape((1,) * (nd - other.dim()) + tuple(other.shape))
    a_view = [s for d in a.shape for s in (d, 1)]
    b_view = [s for d in b.shape for s in (1, d)]
    prod = a.reshape(tuple(a_view)) * b.reshape(tuple(b_view))
    res = prod.reshape(tuple(x * y for x, y in zip(a.shape, b.shape)))
    return _write_out(out, res, "kron")


@_public
def rot90(input: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:
    """input rotated by 90 degrees k times in the plane of dims (from the first towards the second)."""
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.dim() < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.dim()}")
    d0, d1 = _wrap_dim(dims[0], input.dim(), "rot90"), _wrap_dim(dims[1], input.dim(), "rot90")
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    k = k % 4
    if k == 1:
        return input.flip((d1,)).transpose(d0, d1)
    if k == 2:
        return input.flip((d0, d1))
    if k == 3:
        return input.flip((d0,)).transpose(d0, d1)
    return input.clone()


@_public
def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Tensors whose (dim1, dim2) diagonals at offset are input's last dimension, zeros elsewhere."""
    nd = input.dim() + 1
    d1, d2 = _wrap_dim(dim1, nd, "diag_embed"), _wrap_dim(dim2, nd, "diag_embed")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = input.shape[-1] if input.dim() else 1
    m = n + abs(offset)
    batch = list(input.shape[:-1])
    shape = []
    for d in range(nd):
        shape.append(m if d in (d1, d2) else batch.pop(0))
    return diagonal_scatter(_C.zeros(tuple(shape), dtype=input.dtype), input.reshape(-1) if input.dim() == 0
                            else input, offset, d1, d2)


@_public
def diag(input: Tensor, diagonal: int = 0, *, out: Optional[Tensor] = None) -> Tensor:
    """The matrix with the 1-D input on a diagonal, or the diagonal of a 2-D input."""
    if input.dim() == 1:
        res = diag_embed(input, diagonal, 0, 1)
    elif input.dim() == 2:
        res = _C.diagonal(input, diagonal, 0, 1).clone()
    else:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.dim()}D")
    return _write_out(out, res, "diag")


@_public
def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """The matrix with the flattened input on the diagonal at offset."""
    return diag_embed(input.reshape(-1), offset, 0, 1)


@_public
def take_along_dim(input: Tensor, indices: Tensor, dim: Optional[int] = None, *,
                   out: Optional[Tensor] = None) -> Tensor:
    """The values of input at indices along dim (of the flattened input when dim is None), broadcasting."""
    if indices.dtype != _C.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got {indices.dtype}")
    if dim is None:
        flat_idx = indices.reshape(-1)
        flat_idx = _C.where(flat_idx < 0, flat_idx + input.numel(), flat_idx)
        return _write_out(out, input.reshape(-1).gather(0, flat_idx), "take_along_dim")
    if input.dim() != indices.dim():
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {input.dim()} dimensions for input, and {indices.dim()} dimensions for indices")
    d = _wrap_dim(dim, input.dim(), "take_along_dim")
    if input.dim() == 0:
        return _write_out(out, input.reshape(1).gather(0, indices.reshape(1)).reshape(()), "take_along_dim")
    shp = list(input.shape)
    shp[d] = indices.shape[d]
    bshape = list(_C.broadcast_shapes(tuple(shp), tuple(indices.shape)))
    idx = indices.broadcast_to(tuple(bshape))
    idx = _C.where(idx < 0, idx + input.shape[d], idx)
    bshape[d] = input.shape[d]
    return _write_out(out, input.broadcast_to(tuple(bshape)).gather(d, idx), "take_along_dim")


# ---------------------------------------------------------------------------------------------------------------
# the *_scatter family: input with a view's elements replaced


@_public
def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """input with input.select(dim, index) replaced by src."""
    return _scatter_view(input, src, lambda p: p.select(dim, index), "select_scatter")


@_public
def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: Optional[int] = None, end: Optional[int] = None,
                  step: int = 1) -> Tensor:
    """input with the slice start:end:step of dim replaced by src."""
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    d = _wrap_dim(dim, input.dim(), "slice_scatter")

    def view(p: Any) -> Any:
        return p[(slice(None),) * d + (slice(start, end, step),)]
    return _scatter_view(input, src, view, "slice_scatter")


@_public
def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """input with its diagonal (offset, dim1, dim2) replaced by src."""
    return _scatter_view(input, src, lambda p: _C.diagonal(p, offset, dim1, dim2), "diagonal_scatter")


@_public
def as_strided_scatter(input: Tensor, src: Tensor, size: Sequence[int], stride: Sequence[int],
                       storage_offset: Optional[int] = None) -> Tensor:
    """input (as a contiguous tensor) with the elements of as_strided(size, stride, storage_offset) replaced."""
    size, stride = tuple(size), tuple(stride)
    off = 0 if storage_offset is None else storage_offset
    need = off + sum((s - 1) * st for s, st in zip(size, stride)) + 1 if all(s > 0 for s in size) else 0
    if need > input.numel():
        raise RuntimeError(f"as_strided_scatter(): setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {off} require {need} elements, but input has {input.numel()}")
    return _scatter_view(input, src, lambda p: _C.as_strided(p, size, stride, off), "as_strided_scatter")


# ---------------------------------------------------------------------------------------------------------------
# creation


def _tri_indices(row: int, col: int, offset: int, dtype: Any, upper: bool, name: str) -> Tensor:
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    r = _C.arange(row, dtype=_C.int64).reshape(-1, 1)
    c = _C.arange(col, dtype=_C.int64).reshape(1, -1)
    mask = (c - r >= offset) if upper else (c - r <= offset)
    res = _C.nonzero(mask).t()
    return res.to(_C.int64 if dtype is None else dtype).contiguous()


@_public
def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None, pin_memory: bool = False) -> Tensor:
    """The 2 x N (row, column) indices of the lower triangle of a row x col matrix, row-major."""
    return _tri_indices(row, col, offset, dtype, False, "tril_indices")


@_public
def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None, pin_memory: bool = False) -> Tensor:
    """The 2 x N (row, column) indices of the upper triangle of a row x col matrix, row-major."""
    return _tri_indices(row, col, offset, dtype, True, "triu_indices")


@_public
def unravel_index(indices: Tensor, shape: Shape) -> Tuple[Tensor, ...]:
    """The coordinates in shape of the flat indices, one tensor per dimension."""
    if not isinstance(indices, _C._TensorBase):
        indices = _C.tensor(indices)
    if indices.is_floating_point() or indices.dtype == _C.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = (shape,)
    for s in shape:
        if not isinstance(s, int) or isinstance(s, bool):
            raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(s).__name__}")
    shape = tuple(shape)
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got " + str(shape))
    idx = indices.to(_C.int64)
    if 0 in shape and idx.numel():
        raise RuntimeError("unravel_index(): ZeroDivisionError (shape has a zero-sized dimension)")
    coords, coef = [], 1
    for sz in reversed(shape):
        coords.append(_C.remainder(_C.floor_divide(idx, coef), sz) if sz else idx.clone())
        coef *= sz
    return tuple(reversed(coords))


def _empty_with_strides(size: Tuple[int, ...], stride: Tuple[int, ...], dtype: Any, name: str) -> Tensor:
    if len(size) != len(stride):
        raise RuntimeError(f"{name}(): mismatch in length of strides and shape")
    if any(s < 0 for s in size):
        raise RuntimeError(f"{name}(): Trying to create tensor with negative dimension {min(size)}: {list(size)}")
    if any(st < 0 for st in stride):
        raise RuntimeError(f"{name}(): negative strides are not supported")
    need = 0 if any(s == 0 for s in size) else 1 + sum((s - 1) * st for s, st in zip(size, stride))
    return _C.as_strided(_C.empty((need,), dtype=dtype), size, stride)


@_public
def empty_strided(size: Sequence[int], stride: Sequence[int], *, dtype: Any = None, layout: Any = None,
                  device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """An uninitialised tensor of the given size and strides."""
    t = _empty_with_strides(_sizes((size,), "empty_strided"), _sizes((stride,), "empty_strided"),
                            dtype if dtype is not None else _C.get_default_dtype(), "empty_strided")
    return t.requires_grad_(True) if requires_grad else t


def _new_empty_strided(self: Tensor, size: Sequence[int], stride: Sequence[int], *, dtype: Any = None,
                       layout: Any = None, device: Any = None, requires_grad: bool = False,
                       pin_memory: bool = False) -> Tensor:
    t = _empty_with_strides(_sizes((size,), "new_empty_strided"), _sizes((stride,), "new_empty_strided"),
                            dtype if dtype is not None else self.dtype, "new_empty_strided")
    return t.requires_grad_(True) if requires_grad else t


@_public
def empty_permuted(size: Sequence[int], physical_layout: Sequence[int], *, dtype: Any = None, layout: Any = None,
                   device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """An uninitialised tensor of size whose dims lie in memory in the order physical_layout."""
    size, perm = _sizes((size,), "empty_permuted"), tuple(int(p) for p in physical_layout)
    if sorted(perm) != list(range(len(size))):
        raise RuntimeError(f"empty_permuted(): Duplicate dim not allowed, or the physical_layout does not match the "
                           f"dims of size: {list(perm)}")
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    t = _C.empty(tuple(size[p] for p in perm), dtype=dtype if dtype is not None else _C.get_default_dtype())
    t = t.permute(tuple(inv))
    return t.requires_grad_(True) if requires_grad else t


@_public
def scalar_tensor(s: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
                  requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A 0-d tensor holding s (of the default dtype unless given)."""
    if isinstance(s, _C._TensorBase):
        s = s.item()
    t = _C.tensor(s, dtype=dtype if dtype is not None else _C.get_default_dtype())
    return t.requires_grad_(True) if requires_grad else t


@_public
def fill(input: Tensor, value: Any) -> Tensor:
    """A tensor of input's shape and dtype filled with value (a number or a 0-d tensor)."""
    if isinstance(value, _C._TensorBase):
        if value.dim() != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.dim()} "
                               "dimensions.")
        v = value.to(input.dtype)
    else:
        v = _C.full((), value, dtype=input.dtype)
    return _C.where(_C.ones(tuple(input.shape), dtype=_C.bool), v, input)


@_public
def zero_(input: Tensor) -> Tensor:
    """Fill input with zeros in place; returns input."""
    if input.requires_grad and _C.is_grad_enabled():  # keep the autograd history (a zero gradient)
        return input.copy_(fill(input, 0))
    return input.zero_()


def _resize_(self: Tensor, *sizes: Any, memory_format: Any = None) -> Tensor:
    _check_memory_format(memory_format, "resize_", allow_preserve=False)
    if memory_format is not None and memory_format is not _C.contiguous_format:
        raise NotImplementedError(f"resize_(memory_format={memory_format}): cgrad resizes into the contiguous "
                                  "layout only")
    size = _sizes(sizes, "resize_")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {list(size)}")
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if tuple(self.shape) == size:
        return self
    if not self.is_contiguous():
        raise NotImplementedError("resize_: resizing a non-contiguous tensor (which keeps storage order) is not "
                                  "supported by cgrad")
    n = math.prod(size)
    with _no_grad():
        flat = self.reshape(-1)
        if n <= flat.numel():
            contents = flat[:n].clone()
        else:
            contents = _C.cat([flat, _C.zeros((n - flat.numel(),), dtype=self.dtype)])
        contents = contents.reshape(size)
        _resize_into(self, contents)
    return self


@_public
def resize_as_(input: Tensor, the_template: Tensor, *, memory_format: Any = None) -> Tensor:
    """Resize input in place to the shape of the_template."""
    return _resize_(input, tuple(the_template.shape), memory_format=memory_format)


def _sum_to_size(self: Tensor, *size: Any) -> Tensor:
    shape = _sizes(size, "sum_to_size")
    try:
        ok = tuple(_C.broadcast_shapes(shape, tuple(self.shape))) == tuple(self.shape)
    except Exception:  # noqa: BLE001 - not broadcastable
        ok = False
    if not ok:
        raise RuntimeError(f"size {{{', '.join(map(str, shape))}}} is not expandable to size "
                           f"{{{', '.join(map(str, self.shape))}}}.")
    if not shape:  # PyTorch's sum_to: size () is the full sum (integers promoted to int64, a 0-d input too)
        return self.sum()
    lead = self.dim() - len(shape)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(shape) if s == 1 and self.shape[lead + i] != 1]
    res = self.sum(dims, keepdim=True) if dims else self
    return res.reshape(shape) if lead else res


# ---------------------------------------------------------------------------------------------------------------
# indexing


@_public
def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """input (as a flat tensor) with source written (or added) at the flat indices."""
    if index.dtype != _C.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {index.dtype}")
    if source.dtype != input.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{input.dtype} and source.dtype = {source.dtype}")
    if source.numel() != index.numel():
        raise RuntimeError(f"put_(): Expected source and index to have the same number of elements, but got "
                           f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    n = input.numel()
    idx = index.reshape(-1)
    if idx.numel() and (n == 0 or bool(((idx < -n) | (idx >= n)).any())):
        bad = idx[(idx < -n) | (idx >= n)][0].item()
        raise IndexError(f"put_(): out of range: tried to access index {bad} on a tensor of {n} elements.")
    idx = _C.where(idx < 0, idx + n, idx)
    flat = input.reshape(-1)
    res = flat.index_put((idx,), source.reshape(-1), accumulate=accumulate)
    return res.reshape(tuple(input.shape))


@_public
def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True, out: Optional[Tensor] = None) -> Tensor:
    """input with the slices of source at index along dim reduced in (prod, mean, amax or amin)."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got "
                           f"{reduce}.")
    d = _wrap_dim(dim, input.dim(), "index_reduce")
    if index.dim() > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    if index.dtype not in (_C.int64, _C.int32):
        raise RuntimeError("index_reduce_(): Expected dtype int32/int64 for index")
    if source.dtype != input.dtype:
        raise RuntimeError(f"index_reduce_(): self ({input.dtype}) and source ({source.dtype}) must have the same "
                           "scalar type")
    sd = source.dim()
    if max(sd, 1) != max(input.dim(), 1):
        raise IndexError("index_reduce_(): Source/destination tensor must have same number of dimensions")
    n_src = source.shape[d] if sd else 1
    if index.numel() != n_src:
        raise IndexError("index_reduce_(): Number of indices should be equal to source.size(dim)")
    x = input.reshape(1) if input.dim() == 0 else input
    src = source.reshape(1) if sd == 0 else source
    for i in range(x.dim()):
        if i != d and src.shape[i] != x.shape[i]:
            raise RuntimeError(f"index_reduce_(): source and self must have the same size in all dims but dim "
                               f"{d}, got source {list(source.shape)} and self {list(input.shape)}")
    limit = x.shape[d]
    idx = index.reshape(-1).to(_C.int64)
    if idx.numel() and bool(((idx < 0) | (idx >= limit)).any()):
        raise IndexError(f"index_reduce_(): index out of range for dim {d} of size {limit}")
    view = [1] * src.dim()
    view[d] = -1
    idx = idx.reshape(tuple(view)).expand(tuple(src.shape))
    res = x.scatter_reduce(d, idx, src, reduce, include_self=include_self)
    res = res.reshape(tuple(input.shape))
    return _write_out(out, res, "index_reduce")


@_public
def trace(input: Tensor) -> Tensor:
    """The sum of the main diagonal of the 2-D input."""
    if input.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.dim()}")
    return _C.diagonal(input, 0, 0, 1).sum()


@_public
def tensordot(a: Tensor, b: Tensor, dims: Any = 2, out: Optional[Tensor] = None) -> Tensor:
    """The sum of products of a and b over the given dims (the last dims of a with the first of b for an int)."""
    if isinstance(dims, _C._TensorBase):
        dims = int(dims.item()) if dims.dim() == 0 else [list(map(int, r)) for r in dims.tolist()]
    if isinstance(dims, int) and not isinstance(dims, bool):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.dim() or dims > b.dim():
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da, db = list(range(a.dim() - dims, a.dim())), list(range(dims))
    else:
        if len(dims) != 2:
            raise RuntimeError("tensordot expects dims to be a pair of dim lists")
        da, db = dims
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
    if len(da) != len(db):
        raise RuntimeError(f"both dimension lists should have same length, but got {len(da)} and {len(db)}")
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {a.dtype} but found {b.dtype}")
    da = [_wrap_dim(x, a.dim(), "tensordot") for x in da]
    db = [_wrap_dim(x, b.dim(), "tensordot") for x in db]
    for x, y in zip(da, db):
        sa, sb = a.shape[x], b.shape[y]
        if sa == sb:
            continue
        if sb == 1:  # the sums keep the dtype (PyTorch's tensordot of integers stays in their dtype)
            a = a.sum(x, keepdim=True, dtype=a.dtype)
        elif sa == 1:
            b = b.sum(y, keepdim=True, dtype=b.dtype)
        else:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {sa} in dim {x} and "
                               f"second has size {sb} in dim {y}")
    free_a = [i for i in range(a.dim()) if i not in da]
    free_b = [i for i in range(b.dim()) if i not in db]
    k = math.prod(a.shape[i] for i in da)
    m = math.prod(a.shape[i] for i in free_a)
    n = math.prod(b.shape[i] for i in free_b)
    am = a.permute(tuple(free_a + da)).reshape(m, k)
    bm = b.permute(tuple(db + free_b)).reshape(k, n)
    res = _C.mm(am, bm).reshape(tuple(a.shape[i] for i in free_a) + tuple(b.shape[i] for i in free_b))
    return _write_out(out, res, "tensordot")


def _repeat_index(repeats: Tensor, output_size: Optional[int]) -> Tensor:
    """arange(len(repeats)) with element i repeated repeats[i] times."""
    if repeats.dim() != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if repeats.is_floating_point() or repeats.dtype == _C.bool:
        raise RuntimeError(f"repeats has to be Long or Int tensor, got {repeats.dtype}")
    reps = repeats.to(_C.int64)
    if reps.numel() and bool((reps < 0).any()):
        raise RuntimeError("Repeats must be non-negative")
    ends = reps.cumsum(0)
    total = int(ends[-1].item()) if reps.numel() else 0
    if output_size is not None and output_size != total:
        raise RuntimeError(f"repeat_interleave: output_size {output_size} does not match the sum of repeats {total}")
    if total == 0:
        return _C.zeros((0,), dtype=_C.int64)
    starts = ends[:-1]
    starts = starts.masked_select(starts < total)
    marks = _C.zeros((total,), dtype=_C.int64).index_put((starts,), _C.ones_like(starts), accumulate=True)
    return marks.cumsum(0)


@_public
def repeat_interleave(input: Tensor, repeats: Any = None, dim: Optional[int] = None, *,
                      output_size: Optional[int] = None) -> Tensor:
    """input's elements repeated along dim (of the flattened input when dim is None); with a tensor only, the
    indices arange(n) repeated by it."""
    if repeats is None:
        return _repeat_index(input, output_size).to(input.dtype)
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None else _wrap_dim(dim, input.dim(), "repeat_interleave")
    if x.dim() == 0:
        x = x.reshape(1)
    if isinstance(repeats, _C._TensorBase):
        if repeats.dim() > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        if repeats.numel() == 1:
            repeats = int(repeats.reshape(-1)[0].item())
        else:
            if repeats.shape[0] != x.shape[d]:
                raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                                   f"{repeats.shape[0]} and input.size({d}) = {x.shape[d]}")
            return x.index_select(d, _repeat_index(repeats, output_size))
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    if output_size is not None and output_size != repeats * x.shape[d]:
        raise RuntimeError(f"repeat_interleave: output_size {output_size} does not match the sum of repeats "
                           f"{repeats * x.shape[d]}")
    shape = list(x.shape)
    exp = shape[:d + 1] + [repeats] + shape[d + 1:]
    res = x.unsqueeze(d + 1).expand(tuple(exp))
    return res.reshape(tuple(shape[:d] + [shape[d] * repeats] + shape[d + 1:]))


@_public
def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """The indices of the nonzero elements, truncated or padded with fill_value to size rows."""
    if not isinstance(size, int) or size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, got {size}")
    nz = _C.nonzero(input)
    n = nz.shape[0]
    if n >= size:
        return nz[:size].clone()
    pad = _C.full((size - n, input.dim()), fill_value, dtype=_C.int64)
    return _C.cat([nz, pad], 0)


@_public
def cdist(x1: Tensor, x2: Tensor, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The p-norm distances between each row of x1 and each row of x2 (batched)."""
    if compute_mode not in ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                            "donot_use_mm_for_euclid_dist"):
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for name, t in (("X1", x1), ("X2", x2)):
        if not t.is_floating_point():
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {t.dtype}")
        if t.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {t.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: "
                           f"{x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    if diff.numel() == 0 or diff.shape[-1] == 0:
        return _C.zeros(tuple(diff.shape[:-1]), dtype=diff.dtype) + diff.sum(-1)
    a = diff.abs()
    if p == 0:
        return (a != 0).to(diff.dtype).sum(-1) + diff.sum(-1) * 0
    if p == math.inf:
        return a.amax(-1)
    if p == 1:
        return a.sum(-1)
    if p == 2:
        sq = (diff * diff).sum(-1)
        return _safe_sqrt(sq)
    return _C.pow(_C.pow(a, p).sum(-1), 1.0 / p)


def _safe_sqrt(x: Any) -> Any:
    """sqrt whose gradient at 0 is 0 (the subgradient torch.cdist uses for a zero distance)."""
    zero = x == 0
    return _C.where(zero, _C.zeros_like(x), _C.where(zero, _C.ones_like(x), x).sqrt())


# ---------------------------------------------------------------------------------------------------------------
# native normalisations: the output with the statistics it used


@_public
def native_layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Optional[Tensor],
                      bias: Optional[Tensor], eps: float) -> Tuple[Tensor, Tensor, Tensor]:
    """layer_norm's output, mean and reciprocal standard deviation (the statistics keep the normalised dims)."""
    ns = tuple(normalized_shape)
    k = len(ns)
    if k == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           "element, but got normalized_shape = []")
    if tuple(input.shape[input.dim() - k:]) != ns or input.dim() < k:
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape [*, "
                           f"{', '.join(map(str, ns))}], but got input of size{list(input.shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != ns:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{list(t.shape)} and normalized_shape = {list(ns)}")
    dims = tuple(range(input.dim() - k, input.dim()))
    mean = input.mean(dims, keepdim=True)
    cen = input - mean
    var = (cen * cen).mean(dims, keepdim=True)
    rstd = (var + eps).rsqrt()
    out = cen * rstd
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out, mean.detach(), rstd.detach()


@_public
def native_group_norm(input: Tensor, weight: Optional[Tensor], bias: Optional[Tensor], N: int, C: int, HxW: int,
                      group: int, eps: float) -> Tuple[Tensor, Tensor, Tensor]:
    """group_norm's output with each (sample, group)'s mean and reciprocal standard deviation."""
    if group <= 0 or C % group != 0:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={group}")
    if input.numel() != N * C * HxW:
        raise RuntimeError(f"Expected input to have {N * C * HxW} elements (N={N}, C={C}, HxW={HxW}), but got "
                           f"{input.numel()}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != C):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {list(t.shape)} and input of shape {list(input.shape)}")
    x = input.reshape(N, group, (C // group) * HxW)
    if x.numel() == 0:
        mean = _C.zeros((N, group), dtype=input.dtype) + x.sum(-1)
        rstd = mean
    else:
        mean = x.mean(-1, keepdim=True)
        cen = x - mean
        var = (cen * cen).mean(-1, keepdim=True)
        rstd = (var + eps).rsqrt()
        x = cen * rstd
        mean, rstd = mean.squeeze(-1), rstd.squeeze(-1)
    out = x.reshape(N, C, HxW)
    if weight is not None:
        out = out * weight.reshape(1, C, 1)
    if bias is not None:
        out = out + bias.reshape(1, C, 1)
    return out.reshape(tuple(input.shape)), mean, rstd


@_public
def native_batch_norm(input: Tensor, weight: Optional[Tensor], bias: Optional[Tensor],
                      running_mean: Optional[Tensor], running_var: Optional[Tensor], training: bool,
                      momentum: float, eps: float) -> Tuple[Tensor, Tensor, Tensor]:
    """batch_norm's output with the batch mean and reciprocal standard deviation it used (empty in eval mode);
    training updates running_mean / running_var in place."""
    if input.dim() < 2:
        raise RuntimeError(f"native_batch_norm(): expected input with at least 2 dims, got {input.dim()}")
    c = input.shape[1]
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean),
                    ("running_var", running_var)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"native_batch_norm(): expected {name} to have {c} elements, got {t.numel()}")
    view = (1, c) + (1,) * (input.dim() - 2)
    dims = tuple(i for i in range(input.dim()) if i != 1)
    if training:
        mean = input.mean(dims)
        cen = input - mean.reshape(view)
        var = (cen * cen).mean(dims)
        invstd = (var + eps).rsqrt()
        out = cen * invstd.reshape(view)
        with _no_grad():
            n = input.numel() // c
            if running_mean is not None:
                running_mean.copy_(running_mean * (1 - momentum) + mean.detach() * momentum)
            if running_var is not None:
                unbiased = var.detach() * (n / (n - 1)) if n > 1 else var.detach()
                running_var.copy_(running_var * (1 - momentum) + unbiased * momentum)
        save_mean, save_invstd = mean.detach(), invstd.detach()
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("native_batch_norm(): running_mean and running_var must be defined in evaluation "
                               "mode")
        out = (input - running_mean.reshape(view)) * (running_var.reshape(view) + eps).rsqrt()
        save_mean = _C.empty((0,), dtype=input.dtype)
        save_invstd = _C.empty((0,), dtype=input.dtype)
    if weight is not None:
        out = out * weight.reshape(view)
    if bias is not None:
        out = out + bias.reshape(view)
    return out, save_mean, save_invstd


# ---------------------------------------------------------------------------------------------------------------


def _fill_diagonal_(self: Tensor, fill_value: Any, wrap: bool) -> Tensor:
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    shape = tuple(self.shape)
    if self.dim() > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    if self.numel() == 0:
        return self
    if self.dim() == 2 and wrap and shape[0] > shape[1] + 1:
        pos = _C.arange(0, shape[0] * shape[1], shape[1] + 1)
        index = (pos // shape[1], pos % shape[1])
    else:
        index = (_C.arange(min(shape)),) * self.dim()
    self[index] = fill_value
    return self


class ShapeMethods:
    """The Tensor methods of this module's ops (cgrad.Tensor inherits them)."""

    def fill_diagonal_(self, fill_value: Any, wrap: bool = False) -> Tensor:
        """Write fill_value on the main diagonal in place (a tall 2-D matrix restarts it every ncols+1 rows
        with wrap=True), as torch.Tensor.fill_diagonal_."""
        return _fill_diagonal_(self, fill_value, wrap)

    def ravel(self) -> Tensor:
        """input flattened to 1-D."""
        return ravel(self)

    def tensor_split(self, indices_or_sections: Any, dim: int = 0) -> Tuple[Tensor, ...]:
        """torch.tensor_split."""
        return tensor_split(self, indices_or_sections, dim)

    def hsplit(self, indices_or_sections: Any) -> Tuple[Tensor, ...]:
        """torch.hsplit."""
        return hsplit(self, indices_or_sections)

    def vsplit(self, indices_or_sections: Any) -> Tuple[Tensor, ...]:
        """torch.vsplit."""
        return vsplit(self, indices_or_sections)

    def dsplit(self, indices_or_sections: Any) -> Tuple[Tensor, ...]:
        """torch.dsplit."""
        return dsplit(self, indices_or_sections)

    def split_with_sizes(self, split_sizes: Sequence[int], dim: int = 0) -> Tuple[Tensor, ...]:
        """torch.split_with_sizes."""
        return split_with_sizes(self, split_sizes, dim)

    def unsafe_split(self, split_size: Any, dim: int = 0) -> Tuple[Tensor, ...]:
        """torch.unsafe_split."""
        return unsafe_split(self, split_size, dim)

    def unsafe_split_with_sizes(self, split_sizes: Sequence[int], dim: int = 0) -> Tuple[Tensor, ...]:
        """torch.unsafe_split_with_sizes."""
        return unsafe_split_with_sizes(self, split_sizes, dim)

    def unsafe_chunk(self, chunks: int, dim: int = 0) -> Tuple[Tensor, ...]:
        """torch.unsafe_chunk."""
        return unsafe_chunk(self, chunks, dim)

    def narrow_copy(self, dim: int, start: int, length: int) -> Tensor:
        """torch.narrow_copy."""
        return narrow_copy(self, dim, start, length)

    def kron(self, other: Tensor) -> Tensor:
        """torch.kron."""
        return kron(self, other)

    def rot90(self, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:
        """torch.rot90."""
        return rot90(self, k, dims)

    def diag(self, diagonal: int = 0) -> Tensor:
        """torch.diag."""
        return diag(self, diagonal)

    def diag_embed(self, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
        """torch.diag_embed."""
        return diag_embed(self, offset, dim1, dim2)

    def diagflat(self, offset: int = 0) -> Tensor:
        """torch.diagflat."""
        return diagflat(self, offset)

    def take_along_dim(self, indices: Tensor, dim: Optional[int] = None) -> Tensor:
        """torch.take_along_dim."""
        return take_along_dim(self, indices, dim)

    def select_scatter(self, src: Tensor, dim: int, index: int) -> Tensor:
        """torch.select_scatter."""
        return select_scatter(self, src, dim, index)

    def slice_scatter(self, src: Tensor, dim: int = 0, start: Optional[int] = None, end: Optional[int] = None,
                      step: int = 1) -> Tensor:
        """torch.slice_scatter."""
        return slice_scatter(self, src, dim, start, end, step)

    def diagonal_scatter(self, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
        """torch.diagonal_scatter."""
        return diagonal_scatter(self, src, offset, dim1, dim2)

    def as_strided_scatter(self, src: Tensor, size: Sequence[int], stride: Sequence[int],
                           storage_offset: Optional[int] = None) -> Tensor:
        """torch.as_strided_scatter."""
        return as_strided_scatter(self, src, size, stride, storage_offset)

    def new_empty_strided(self, size: Sequence[int], stride: Sequence[int], *, dtype: Any = None,
                          layout: Any = None, device: Any = None, requires_grad: bool = False,
                          pin_memory: bool = False) -> Tensor:
        """An uninitialised tensor of the given size and strides, of self's dtype unless given."""
        return _new_empty_strided(self, size, stride, dtype=dtype, requires_grad=requires_grad)

    def resize_(self, *sizes: Any, memory_format: Any = None) -> Tensor:
        """Resize self in place (storage order kept; new elements uninitialised)."""
        return _resize_(self, *sizes, memory_format=memory_format)

    def resize_as_(self, the_template: Tensor, *, memory_format: Any = None) -> Tensor:
        """Resize self in place to the shape of the_template."""
        return resize_as_(self, the_template, memory_format=memory_format)

    def sum_to_size(self, *size: Any) -> Tensor:
        """self summed down to size (which must broadcast to self's shape)."""
        return _sum_to_size(self, *size)

    def put(self, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
        """torch.put."""
        return put(self, index, source, accumulate)

    def put_(self, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
        """torch.put in place."""
        return self.copy_(put(self, index, source, accumulate))

    def index_reduce(self, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                     include_self: bool = True) -> Tensor:
        """torch.index_reduce."""
        return index_reduce(self, dim, index, source, reduce, include_self=include_self)

    def index_reduce_(self, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                      include_self: bool = True) -> Tensor:
        """torch.index_reduce in place."""
        return self.copy_(index_reduce(self, dim, index, source, reduce, include_self=include_self))

    def trace(self) -> Tensor:
        """torch.trace."""
        return trace(self)

    def repeat_interleave(self, repeats: Any = None, dim: Optional[int] = None, *,
                          output_size: Optional[int] = None) -> Tensor:
        """torch.repeat_interleave."""
        return repeat_interleave(self, repeats, dim, output_size=output_size)

    def nonzero_static(self, *, size: int, fill_value: int = -1) -> Tensor:
        """torch.nonzero_static."""
        return nonzero_static(self, size=size, fill_value=fill_value)
