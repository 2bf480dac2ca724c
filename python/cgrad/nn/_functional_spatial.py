"""The torch.nn.functional pooling, unpooling, sampling and patch ops that
cgrad composes from its own ops (re-exported by cgrad.nn.functional).

The window ops share one scheme: each spatial dim gets a table of window
positions (outputs x window taps) and a validity mask; the tables combine into
flat indices into the plane, values are gathered from the flattened input, and
max-type ops pick the first maximum of each window, then gather the input at
the chosen index, so the gradient flows to exactly that element."""
from __future__ import annotations

import math
import warnings
from typing import Any, List, Optional, Sequence, Tuple, Union

from .. import _C
from .._tensor import Tensor
from ..autograd import Function
from ..autograd.grad_mode import no_grad

__all__: List[str] = [
    "avg_pool3d", "max_pool3d", "max_pool3d_with_indices", "adaptive_avg_pool3d", "adaptive_max_pool3d",
    "adaptive_max_pool3d_with_indices", "max_unpool1d", "max_unpool2d", "max_unpool3d",
    "fractional_max_pool2d", "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d_with_indices", "lp_pool1d", "lp_pool2d", "lp_pool3d", "unfold", "fold",
    "embedding_bag", "grid_sample", "grid_sampler_2d", "grid_sampler_3d", "affine_grid",
]

_Ints = Union[int, Sequence[int]]
_OptInts = Union[int, None, Sequence[Optional[int]]]
_Out = Union[Tensor, Tuple[Tensor, Tensor]]


# ---------------------------------------------------------------- argument helpers

def _tup(value: Any, n: int, fname: str, what: str) -> Tuple[int, ...]:
    """An int or a sequence of 1 or n ints as an n-tuple of ints."""
    if isinstance(value, Tensor):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        if len(value) == 1:
            value = tuple(value) * n
        if len(value) != n:
            raise RuntimeError(f"{fname}: {what} must be a single int or a tuple of {n} ints, got {value}")
        return tuple(int(v) for v in value)
    return (int(value),) * n


def _dtype_name(t: Tensor) -> str:
    """torch's scalar type name of t ('Float', 'Long', ...)."""
    names = {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int", "float16": "Half",
             "bfloat16": "BFloat16", "bool": "Bool", "int8": "Char", "uint8": "Byte", "int16": "Short"}
    return names.get(str(t.dtype).split(".")[-1], str(t.dtype))


def _float_only(t: Tensor, kernel: str) -> None:
    """NotImplementedError as torch's dispatcher raises for a non-floating input."""
    if not t.is_floating_point():
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dtype_name(t)}\'')


def _planes(fname: str, input: Tensor, n: int, allow_empty_batch: bool = True) -> Tuple[Tensor, bool]:
    """input as (N, C, *spatial) (unbatched inputs gain N = 1) and whether it was batched; checks the rank
    and that the non-batch dims are non-empty."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{fname}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"{fname}: non-empty {n + 1}D or {n + 2}D (batch mode) tensor expected for input, "
                           f"but got input of size {list(input.shape)}")
    batched = input.dim() == n + 2
    x = input if batched else input.unsqueeze(0)
    shape = list(x.shape)
    if any(s == 0 for s in shape[1:]) or (not allow_empty_batch and shape[0] == 0):
        raise RuntimeError(f"{fname}: Expected input's non-batch dimensions to have positive length, "
                           f"but input has a shape of {list(input.shape)}")
    return x, batched


def _arange(n: int) -> Tensor:
    """int64 arange(n)."""
    return _C.arange(n)


def _place(t: Tensor, i: int, n: int) -> Tensor:
    """A per-dim table t of shape (B, O, K) viewed as (B, 1..O..1, 1..K..1) with O at spatial slot i and K
    at window slot i, for broadcasting against the other dims' tables."""
    shape = [t.shape[0]] + [1] * (2 * n)
    shape[1 + i] = t.shape[1]
    shape[1 + n + i] = t.shape[2]
    return t.reshape(shape)


def _combine(pos: Sequence[Tensor], valid: Sequence[Optional[Tensor]],
             sizes: Sequence[int]) -> Tuple[Tensor, Optional[Tensor], List[int]]:
    """Per-dim window positions (B_i, O_i, K_i) (B_i 1 or the plane count), with masks (or None when all are
    in range), as flat plane indices (B, M, K) with M = prod O and K = prod K_i, positions out of range
    clamped; returns (index, mask or None, [O_i])."""
    n = len(sizes)
    flat: Optional[Tensor] = None
    mask: Optional[Tensor] = None
    stride = 1
    for i in range(n - 1, -1, -1):
        p = pos[i].clamp(0, sizes[i] - 1) * stride
        term = _place(p, i, n)
        flat = term if flat is None else flat + term
        if valid[i] is not None:
            v = _place(valid[i], i, n)
            mask = v if mask is None else mask & v
        stride *= sizes[i]
    outs = [int(p.shape[1]) for p in pos]
    full = [max(int(p.shape[0]) for p in pos)] + outs + [int(p.shape[2]) for p in pos]
    flat = flat.expand(full)
    m, k = math.prod(outs), math.prod(int(p.shape[2]) for p in pos)
    flat = flat.reshape(full[0], m, k)
    if mask is not None:
        mask = mask.expand(full).reshape(full[0], m, k)
    return flat, mask, outs


def _lowest(x: Tensor) -> float:
    """The value below every element of x's dtype (for masking windows before a max)."""
    if x.is_floating_point():
        return float("-inf")
    from .. import _type_info
    return _type_info.iinfo(x.dtype).min


def _first_max(vals: Tensor, mask: Optional[Tensor], dim: int, low: float) -> Tensor:
    """Index along dim of the first maximum (NaN counts as the largest) among the unmasked entries; a window
    whose unmasked entries all equal the lowest value picks its first unmasked entry, as torch does."""
    if vals.is_floating_point():
        vals = _C.where(vals.isnan(), _C.full_like(vals, float("inf")), vals)
    if mask is None:
        return vals.argmax(dim, keepdim=True)
    pick = vals.masked_fill(~mask, low).argmax(dim, keepdim=True)
    first = mask.to(_arange(1).dtype).argmax(dim, keepdim=True)
    return _C.where(mask.gather(dim, pick), pick, first)


def _window_max(x2: Tensor, flat: Tensor, mask: Optional[Tensor]) -> Tuple[Tensor, Tensor]:
    """x2 (B, L) planes; flat (B or 1, M, K) windows: (max values (B, M), their flat indices (B, M)); the
    values are gathered at the chosen index, so autograd routes the gradient there."""
    b = x2.shape[0]
    _, m, k = flat.shape
    flat = flat.expand(b, m, k)
    with no_grad():
        if k == 0:
            idx = _C.zeros((b, m), dtype=flat.dtype)
        else:
            vals = x2.detach().gather(1, flat.reshape(b, m * k)).reshape(b, m, k)
            full = None if mask is None else mask.expand(b, m, k)
            idx = flat.gather(2, _first_max(vals, full, 2, _lowest(x2))).squeeze(2)
    return x2.gather(1, idx), idx


def _strided_windows(outs: Sequence[int], sizes: Sequence[int], k: Sequence[int], s: Sequence[int],
                     p: Sequence[int], d: Sequence[int]) -> Tuple[List[Tensor], List[Optional[Tensor]]]:
    """Per-dim tables (1, O, K) of o*s - p + j*d and their in-range masks (None when all in range)."""
    pos: List[Tensor] = []
    valid: List[Optional[Tensor]] = []
    for o, L, ki, si, pi, di in zip(outs, sizes, k, s, p, d):
        t = (_arange(o) * si - pi).unsqueeze(1) + (_arange(ki) * di).unsqueeze(0)
        pos.append(t.unsqueeze(0))
        inside = (t >= 0) & (t < L)
        valid.append(None if bool(inside.all()) else inside.unsqueeze(0))
    return pos, valid


def _finish(x: Tensor, batched: bool, planes: Tensor, outs: Sequence[int]) -> Tensor:
    """(N*C, M) back to (N, C, *outs), without the batch dim for an unbatched input."""
    y = planes.reshape([x.shape[0], x.shape[1]] + list(outs))
    return y if batched else y.squeeze(0)


# ---------------------------------------------------------------- 3-d pooling
# The engine's pooling ops (src/ops/nn_pool.c), as the 1-d / 2-d ones in functional.py.

def max_pool3d_with_indices(input: Tensor, kernel_size: _Ints, stride: Optional[_Ints] = None, padding: _Ints = 0,
                            dilation: _Ints = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> Tuple[Tensor, Tensor]:
    """3-d max pooling; returns (values, indices) with indices flat in each D*H*W plane."""
    return _C._max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool3d(input: Tensor, kernel_size: _Ints, stride: Optional[_Ints] = None, padding: _Ints = 0,
               dilation: _Ints = 1, ceil_mode: bool = False, return_indices: bool = False) -> _Out:
    """3-d max pooling over (N, C, D, H, W) or (C, D, H, W); (values, indices) when return_indices."""
    if return_indices:
        return _C._max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _C.max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode)


# avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
# divisor_override=None): the engine binding itself
avg_pool3d = _C._avg_pool3d


def _adaptive_rank(input: Tensor, output_size: _OptInts, n: int) -> None:
    """torch.nn.functional's check for None entries in output_size: the input needs n + 1 dims or more."""
    if isinstance(output_size, (list, tuple)) and isinstance(input, Tensor) and input.dim() <= len(output_size):
        raise ValueError(f"Input dimension should be at least {n + 1}")


def _adaptive_size3(input: Tensor, output_size: _OptInts) -> _OptInts:
    """output_size with None entries taken from the input's last three dims."""
    if isinstance(output_size, (list, tuple)) and len(output_size) == 3 and any(o is None for o in output_size):
        return [input.shape[input.dim() - 3 + i] if o is None else o for i, o in enumerate(output_size)]
    return output_size


def adaptive_avg_pool3d(input: Tensor, output_size: _OptInts) -> Tensor:
    """3-d adaptive average pooling to output_size (None entries: the input's size)."""
    _adaptive_rank(input, output_size, 3)
    if isinstance(input, Tensor):
        _float_only(input, "adaptive_avg_pool3d_cpu")
    return _C._adaptive_avg_pool3d(input, _adaptive_size3(input, output_size))


def adaptive_max_pool3d_with_indices(input: Tensor, output_size: _OptInts,
                                     return_indices: bool = False) -> Tuple[Tensor, Tensor]:
    """3-d adaptive max pooling; returns (values, indices)."""
    _adaptive_rank(input, output_size, 3)
    if isinstance(input, Tensor):
        _float_only(input, "adaptive_max_pool3d_cpu")
    return _C._adaptive_max_pool3d(input, _adaptive_size3(input, output_size))


def adaptive_max_pool3d(input: Tensor, output_size: _OptInts, return_indices: bool = False) -> _Out:
    """3-d adaptive max pooling to output_size; (values, indices) when return_indices."""
    out = adaptive_max_pool3d_with_indices(input, output_size)
    return out if return_indices else out[0]


# ---------------------------------------------------------------- fractional max pooling

def _fractional(fname: str, input: Tensor, n: int, kernel_size: _Ints, output_size: Optional[_Ints],
                output_ratio: Any, _random_samples: Optional[Tensor]) -> Tuple[Tensor, Tensor]:
    """Fractional max pooling over the last n dims (torch's interval sequence from the samples)."""
    if output_size is None and output_ratio is None:
        raise ValueError(f"{fname} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if isinstance(output_ratio, (list, tuple)) and len(output_ratio) > n:
            raise ValueError(f"{fname} requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = tuple(output_ratio) if isinstance(output_ratio, (list, tuple)) else (output_ratio,) * n
        output_size = [int(input.shape[input.dim() - n + i] * float(ratio[i])) for i in range(n)]
    if _random_samples is None:
        n_batch = 1 if input.dim() == n + 1 else input.shape[0]
        _random_samples = _C.rand((n_batch, input.shape[input.dim() - n - 1], n), dtype=input.dtype)
    x, batched = _planes(fname, input, n)
    k = _tup(kernel_size, n, fname, "kernel_size")
    outs = _tup(output_size, n, fname, "output_size")
    sizes = list(x.shape[2:])
    for i in range(n):
        if outs[i] + k[i] - 1 > sizes[i]:
            raise RuntimeError(f"{fname}: out size {outs[i]} too large relative to input size {sizes[i]} and "
                               f"pool size {k[i]} (dim {i})")
    samples = _random_samples
    nb, c = x.shape[0], x.shape[1]
    if samples.dim() != 3 or samples.shape[0] < nb or samples.shape[1] != c or samples.shape[2] != n:
        raise RuntimeError(f"{fname}: expected _random_samples of shape ({nb}, {c}, {n}), got "
                           f"{list(samples.shape)}")
    samples = samples.to(x.dtype)[:nb].reshape(nb * c, n)
    # torch's 2-d kernel takes sample 0 for the width and 1 for the height; the 3-d one takes them in order
    order = [1, 0] if n == 2 else list(range(n))
    pos: List[Tensor] = []
    for i in range(n):
        s = samples[:, order[i]].unsqueeze(1)
        o, L, ki = outs[i], sizes[i], k[i]
        if o > 1:
            alpha = _C.full((1, 1), float(L - ki), dtype=x.dtype) / float(o - 1)
            steps = _arange(o).to(x.dtype).unsqueeze(0)
            start = (((steps + s) * alpha).trunc() - (s * alpha).trunc()).to(_arange(1).dtype)
            last = _C.full((nb * c, 1), L - ki, dtype=start.dtype)
            start = _C.cat([start[:, :o - 1], last], 1)
        else:
            start = _C.full((nb * c, o), L - ki, dtype=_arange(1).dtype)
        pos.append(start.unsqueeze(2) + _arange(ki).reshape(1, 1, ki))
    flat, mask, _ = _combine(pos, [None] * n, sizes)
    vals, idx = _window_max(x.reshape(nb * c, math.prod(sizes)), flat, mask)
    return _finish(x, batched, vals, outs), _finish(x, batched, idx, outs)


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size: _Ints, output_size: Optional[_Ints] = None,
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
    """2-d fractional max pooling; returns (values, indices)."""
    return _fractional("fractional_max_pool2d", input, 2, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size: _Ints, output_size: Optional[_Ints] = None,
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
    """3-d fractional max pooling; returns (values, indices)."""
    return _fractional("fractional_max_pool3d", input, 3, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool2d(input: Tensor, kernel_size: _Ints, output_size: Optional[_Ints] = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Optional[Tensor] = None) -> _Out:
    """2-d fractional max pooling (Graham); (values, indices) when return_indices."""
    out = fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio, False, _random_samples)
    return out if return_indices else out[0]


def fractional_max_pool3d(input: Tensor, kernel_size: _Ints, output_size: Optional[_Ints] = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Optional[Tensor] = None) -> _Out:
    """3-d fractional max pooling (Graham); (values, indices) when return_indices."""
    out = fractional_max_pool3d_with_indices(input, kernel_size, output_size, output_ratio, False, _random_samples)
    return out if return_indices else out[0]


# ---------------------------------------------------------------- unpooling

def _unpool_size(input: Tensor, k: Sequence[int], s: Sequence[int], p: Sequence[int],
                 output_size: Optional[_Ints], n: int) -> List[int]:
    """torch's _unpool_output_size: the default size or a checked output_size."""
    in_sizes = list(input.shape[input.dim() - n:])
    default = [(in_sizes[i] - 1) * s[i] + k[i] - 2 * p[i] for i in range(n)]
    if output_size is None:
        return default
    if isinstance(output_size, Tensor):
        output_size = output_size.tolist()
    sizes = list(output_size) if isinstance(output_size, (list, tuple)) else [output_size]
    if len(sizes) == n + 2:
        sizes = sizes[2:]
    if len(sizes) != n:
        raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} elements, but it has a "
                         f"length of '{len(sizes)}'")
    for i in range(n):
        lo, hi = default[i] - s[i], default[i] + s[i]
        if not lo < sizes[i] < hi:
            raise ValueError(f'invalid output_size "{sizes}" (dim {i} must be between {lo} and {hi})')
    return [int(v) for v in sizes]


def _max_unpool(fname: str, input: Tensor, indices: Tensor, kernel_size: _Ints, stride: Optional[_Ints],
                padding: _Ints, output_size: Optional[_Ints], n: int) -> Tensor:
    """Scatters input into zeros of the unpooled size at indices (flat per plane)."""
    k = _tup(kernel_size, n, fname, "kernel_size")
    s = k if stride is None else _tup(stride, n, fname, "stride")
    p = _tup(padding, n, fname, "padding")
    outs = _unpool_size(input, k, s, p, output_size, n)
    kn = max(n, 2)
    if indices.dtype != _arange(1).dtype:
        raise RuntimeError(f"elements in indices should be type int64 but got: {_dtype_name(indices)}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: {list(indices.shape)}")
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"Input to max_unpooling{kn}d should be a {kn + 1}d or {kn + 2}d Tensor, but got a "
                           f"tensor with {input.dim()} dimensions.")
    _float_only(input, f"max_unpooling{kn}d_forward_out_cpu_frame" if kn == 3 else "max_unpool2d")
    batched = input.dim() == n + 2
    x = input if batched else input.unsqueeze(0)
    i = indices if batched else indices.unsqueeze(0)
    if any(v == 0 for v in x.shape[1:]):
        raise RuntimeError(f"{fname}: Expected input to have non-zero size for non-batch dimensions, but got "
                           f"{list(input.shape)}")
    planes = x.shape[0] * x.shape[1]
    total = math.prod(outs)
    x2 = x.reshape(planes, -1)
    i2 = i.reshape(planes, -1)
    if i2.numel() > 0:
        lo, hi = int(i2.min()), int(i2.max())
        if lo < 0 or hi >= total:
            bad = lo if lo < 0 else hi
            raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                               f"{'x'.join(str(v) for v in outs)}")
    out = _C.zeros((planes, total), dtype=x.dtype).scatter(1, i2, x2)
    y = out.reshape([x.shape[0], x.shape[1]] + outs)
    return y if batched else y.squeeze(0)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: _Ints, stride: Optional[_Ints] = None,
                 padding: _Ints = 0, output_size: Optional[_Ints] = None) -> Tensor:
    """Partial inverse of max_pool1d: input values placed at indices, zeros elsewhere."""
    return _max_unpool("max_unpool1d", input, indices, kernel_size, stride, padding, output_size, 1)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: _Ints, stride: Optional[_Ints] = None,
                 padding: _Ints = 0, output_size: Optional[_Ints] = None) -> Tensor:
    """Partial inverse of max_pool2d: input values placed at indices, zeros elsewhere."""
    return _max_unpool("max_unpool2d", input, indices, kernel_size, stride, padding, output_size, 2)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: _Ints, stride: Optional[_Ints] = None,
                 padding: _Ints = 0, output_size: Optional[_Ints] = None) -> Tensor:
    """Partial inverse of max_pool3d: input values placed at indices, zeros elsewhere."""
    return _max_unpool("max_unpool3d", input, indices, kernel_size, stride, padding, output_size, 3)


# ---------------------------------------------------------------- power-average pooling

def _lp_pool(input: Tensor, norm_type: float, kernel_size: _Ints, stride: Optional[_Ints], ceil_mode: bool,
             n: int) -> Tensor:
    """(sum over each window of x^p)^(1/p), via the average pooling of x^p."""
    from . import functional as F

    pool = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: avg_pool3d}[n]
    k = _tup(kernel_size, n, f"lp_pool{n}d", "kernel_size")
    if stride is not None:
        out = pool(input.pow(norm_type), k, stride, 0, ceil_mode)
    else:
        out = pool(input.pow(norm_type), k, padding=0, ceil_mode=ceil_mode)
    return (out.sign() * F.relu(out.abs())).mul(math.prod(k)).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: Union[int, float], kernel_size: int, stride: Optional[_Ints] = None,
              ceil_mode: bool = False) -> Tensor:
    """1-d power-average pooling."""
    return _lp_pool(input, float(norm_type), kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input: Tensor, norm_type: Union[int, float], kernel_size: _Ints, stride: Optional[_Ints] = None,
              ceil_mode: bool = False) -> Tensor:
    """2-d power-average pooling."""
    return _lp_pool(input, float(norm_type), kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input: Tensor, norm_type: Union[int, float], kernel_size: _Ints, stride: Optional[_Ints] = None,
              ceil_mode: bool = False) -> Tensor:
    """3-d power-average pooling."""
    return _lp_pool(input, float(norm_type), kernel_size, stride, ceil_mode, 3)


# ---------------------------------------------------------------- im2col / col2im

def _blocks(fname: str, sizes: Sequence[int], kernel_size: _Ints, dilation: _Ints, padding: _Ints,
            stride: _Ints) -> Tuple[Tensor, Optional[Tensor], List[int], Tuple[int, ...]]:
    """The sliding blocks of a 2-d plane: flat index (K, M) (taps by blocks), mask, block counts, kernel."""
    k = _tup(kernel_size, 2, fname, "kernel_size")
    d = _tup(dilation, 2, fname, "dilation")
    p = _tup(padding, 2, fname, "padding")
    s = _tup(stride, 2, fname, "stride")
    if any(v <= 0 for v in k):
        raise RuntimeError(f"{fname}: kernel size should be greater than zero, but got kernel_height: {k[0]} "
                           f"kernel_width: {k[1]}")
    if any(v <= 0 for v in s):
        raise RuntimeError(f"{fname}: stride should be greater than zero, but got stride_height: {s[0]} "
                           f"stride_width: {s[1]}")
    if any(v <= 0 for v in d):
        raise RuntimeError(f"{fname}: dilation should be greater than zero, but got dilation_height: {d[0]} "
                           f"dilation_width: {d[1]}")
    if any(v < 0 for v in p):
        raise RuntimeError(f"{fname}: padding should be non-negative, but got pad_height: {p[0]} "
                           f"pad_width: {p[1]}")
    outs = [(L + 2 * pi - (di * (ki - 1) + 1)) // si + 1 for L, ki, di, pi, si in zip(sizes, k, d, p, s)]
    if any(o < 1 for o in outs):
        raise RuntimeError(f"Given input with spatial size ({sizes[0]}, {sizes[1]}), kernel_size=({k[0]}, {k[1]}), "
                           f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), calculated shape of the array of "
                           f"sliding blocks as ({outs[0]}, {outs[1]}), but its components must be at least one.")
    pos, valid = _strided_windows(outs, sizes, k, s, p, d)
    flat, mask, _ = _combine(pos, valid, sizes)
    flat = flat[0].transpose(0, 1).contiguous()
    if mask is not None:
        mask = mask[0].transpose(0, 1).contiguous()
    return flat, mask, outs, k


def unfold(input: Tensor, kernel_size: _Ints, dilation: _Ints = 1, padding: _Ints = 0, stride: _Ints = 1) -> Tensor:
    """Extracts sliding local blocks: (N, C, H, W) -> (N, C * prod(kernel_size), L)."""
    fname = "im2col"
    if input.dim() not in (3, 4):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor for input with possibly 0 batch size and "
                           f"non-zero dimensions for input, but got: {list(input.shape)}")
    if input.dtype != _C.bool:  # PyTorch's im2col: floating dtypes and bool
        _float_only(input, "im2col_out_cpu")
    batched = input.dim() == 4
    x = input if batched else input.unsqueeze(0)
    if any(v == 0 for v in x.shape[1:]):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor for input with possibly 0 batch size and "
                           f"non-zero dimensions for input, but got: {list(input.shape)}")
    sizes = list(x.shape[2:])
    flat, mask, outs, k = _blocks(fname, sizes, kernel_size, dilation, padding, stride)
    n, c = x.shape[0], x.shape[1]
    kk, m = flat.shape
    x3 = x.reshape(n, c, sizes[0] * sizes[1])
    vals = x3.gather(2, flat.reshape(1, 1, kk * m).expand(n, c, kk * m))
    if mask is not None:
        vals = _C.where(mask.reshape(1, 1, kk * m).expand(n, c, kk * m), vals, _C.zeros_like(vals))
    y = vals.reshape(n, c * kk, m)
    return y if batched else y.squeeze(0)


def fold(input: Tensor, output_size: _Ints, kernel_size: _Ints, dilation: _Ints = 1, padding: _Ints = 0,
         stride: _Ints = 1) -> Tensor:
    """Sums sliding local blocks into a tensor: (N, C * prod(kernel_size), L) -> (N, C, *output_size)."""
    fname = "col2im"
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
                           f"non-zero dimensions for input, but got: {list(input.shape)}")
    if input.dtype != _C.bool:  # PyTorch's col2im: floating dtypes and bool (the sum of bools is their or)
        _float_only(input, "col2im_out_cpu")
    batched = input.dim() == 3
    x = input if batched else input.unsqueeze(0)
    if any(v == 0 for v in x.shape[1:]):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
                           f"non-zero dimensions for input, but got: {list(input.shape)}")
    sizes = list(_tup(output_size, 2, fname, "output_size"))
    flat, mask, outs, k = _blocks(fname, sizes, kernel_size, dilation, padding, stride)
    kk, m = flat.shape
    n = x.shape[0]
    if x.shape[1] % kk != 0:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
                           f"but got input.size(1)={x.shape[1]} and kernel_size=({k[0]}, {k[1]})")
    if x.shape[2] != m:
        raise RuntimeError(f"Given output_size=({sizes[0]}, {sizes[1]}), kernel_size=({k[0]}, {k[1]}), "
                           f"expected size of input's dimension 2 to match the calculated number of sliding "
                           f"blocks {outs[0]} * {outs[1]} = {m}, but got input.size(2)={x.shape[2]}.")
    c = x.shape[1] // kk
    vals = x.reshape(n, c, kk * m)
    if mask is not None:
        vals = _C.where(mask.reshape(1, 1, kk * m).expand(n, c, kk * m), vals, _C.zeros_like(vals))
    acc = _C.int64 if x.dtype == _C.bool else x.dtype
    out = _C.zeros((n, c, sizes[0] * sizes[1]), dtype=acc).scatter_add(
        2, flat.reshape(1, 1, kk * m).expand(n, c, kk * m), vals.to(acc))
    y = out.reshape(n, c, sizes[0], sizes[1])
    y = y != 0 if x.dtype == _C.bool else y
    return y if batched else y.squeeze(0)


# ---------------------------------------------------------------- embedding bags

class _ScaleGrad(Function):
    """The identity whose gradient is multiplied by a fixed factor (scale_grad_by_freq: 1 / the index's
    frequency in the input)."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, scale: Tensor) -> Tensor:
        ctx.save_for_backward(scale)
        return x.clone()

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Tuple[Tensor, None]:
        (scale,) = ctx.saved_tensors
        return grad * scale, None



def embedding_bag(input: Tensor, weight: Tensor, offsets: Optional[Tensor] = None, max_norm: Optional[float] = None,
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Optional[Tensor] = None, include_last_offset: bool = False,
                  padding_idx: Optional[int] = None) -> Tensor:
    """Sums, means or maxes of bags of embeddings, without building the per-index embeddings first."""
    from . import functional as F

    if weight.dtype == _arange(1).dtype and input.is_floating_point():
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, "
                      "input, ...)` is deprecated, and should now be `embedding_bag(input, weight, ...)`.",
                      stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it "
                         f"must have the same shape as the input ({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        rows_per_bag = input.shape[1]
        offsets = _C.arange(0, input.numel(), max(rows_per_bag, 1)) if input.numel() > 0 else \
            _C.arange(0, 0, 1) if input.shape[0] == 0 else _C.zeros((input.shape[0],), dtype=_arange(1).dtype)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    if not weight.is_floating_point():
        raise RuntimeError("Expected tensor for argument #1 'weight' to have one of the following scalar types: "
                           f"Half, BFloat16, Float, Double; but got {_dtype_name(weight)} instead (while checking "
                           "arguments for embedding_bag)")
    if input.is_floating_point() or offsets.is_floating_point():
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {_dtype_name(input)} / {_dtype_name(offsets)} instead (while "
                           "checking arguments for embedding_bag)")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    rows = weight.shape[0]
    if padding_idx is not None:
        if not -rows <= padding_idx < rows:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{rows} through {rows - 1}, "
                               f"but got {padding_idx}")
        padding_idx = padding_idx + rows if padding_idx < 0 else padding_idx
    input = input.to(_arange(1).dtype)
    offsets = offsets.to(_arange(1).dtype)
    count = input.shape[0]
    bags = offsets.shape[0] - (1 if include_last_offset else 0)
    if include_last_offset and offsets.shape[0] < 1:
        raise RuntimeError("include_last_offset: number of offsets should be at least 1")
    if bags > 0 and int(offsets[0]) != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {int(offsets[0])}")
    if bags > 0 and int(offsets[bags - 1]) > count:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {count}, but got "
                           f"offsets[-1] of {int(offsets[bags - 1])}")
    if count > 0 and (int(input.min()) < 0 or int(input.max()) >= rows):
        bad = (input < 0) | (input >= rows)
        at = int(bad.to(_arange(1).dtype).argmax())
        raise RuntimeError(f"Index {at} of input takes value {int(input[at])} which is not in the valid range "
                           f"[0, {rows})")
    if per_sample_weights is not None and per_sample_weights.dtype != weight.dtype:
        raise RuntimeError(f"Expected per_sample_weights ({_dtype_name(per_sample_weights)}) to have the same "
                           f"dtype as weight ({_dtype_name(weight)})")
    dim = weight.shape[1]
    if bags <= 0:
        return _C.zeros((max(bags, 0), dim), dtype=weight.dtype)
    starts = offsets[:bags]
    # bag of each element: 1 at each bag start (repeated starts: empty bags), cumulative sum
    inside = starts < count
    marks = _C.zeros((count,), dtype=starts.dtype).index_add(0, starts[inside], _C.ones_like(starts[inside]))
    bag = marks.cumsum(0) - 1
    keep = None if padding_idx is None else input != padding_idx
    if max_norm is not None:
        with no_grad():
            F.embedding(input, weight, None, max_norm, norm_type)
    if mode in ("sum", "mean"):
        vecs = weight.index_select(0, input)
        if scale_grad_by_freq:
            freq = _C.zeros((rows,), dtype=weight.dtype).index_add(0, input, _C.ones((count,), dtype=weight.dtype))
            vecs = _ScaleGrad.apply(vecs, (1.0 / freq.index_select(0, input)).unsqueeze(1))
        if per_sample_weights is not None:
            vecs = vecs * per_sample_weights.unsqueeze(1)
        if keep is not None:
            vecs = _C.where(keep.unsqueeze(1), vecs, _C.zeros_like(vecs))
        out = _C.zeros((bags, dim), dtype=weight.dtype).index_add(0, bag, vecs)
        if mode == "mean":
            ones = _C.ones((count,), dtype=weight.dtype) if keep is None else keep.to(weight.dtype)
            sizes = _C.zeros((bags,), dtype=weight.dtype).index_add(0, bag, ones)
            out = out / sizes.clamp(min=1).unsqueeze(1)
        return out
    # max: the elements laid out densely per bag, first maximum of each (bag, feature)
    with no_grad():
        pos = _arange(count) - starts.index_select(0, bag)
        width = int(pos.max()) + 1 if count > 0 else 1
        vals = weight.detach().index_select(0, input)
        if keep is not None:
            vals = _C.where(keep.unsqueeze(1), vals, _C.full_like(vals, float("-inf")))
        vals = _C.where(vals.isnan(), _C.full_like(vals, float("inf")), vals)
        dense = _C.full((bags * width, dim), float("-inf"), dtype=weight.dtype)
        slot = (bag * width + pos).unsqueeze(1).expand(count, dim)
        dense = dense.scatter(0, slot, vals).reshape(bags, width, dim)
        best, where_ = dense.max(1)
        filled = best != float("-inf")
        element = (starts.unsqueeze(1) + where_).clamp(0, max(count - 1, 0))
        row = input.index_select(0, element.reshape(-1)).reshape(bags, dim) if count > 0 else \
            _C.zeros((bags, dim), dtype=input.dtype)
    out = weight.gather(0, row)
    return _C.where(filled, out, _C.zeros_like(out))


# ---------------------------------------------------------------- grid sampling

_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}


def _unnormalize(coord: Tensor, size: int, align_corners: bool) -> Tensor:
    """[-1, 1] to pixel coordinates."""
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """Reflects coord about the bounds twice_low / 2 and twice_high / 2 until it lies inside."""
    if twice_low == twice_high:
        return coord * 0
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    c = (coord - low).abs()
    flips = (c / span).floor().detach()
    extra = c - flips * span
    even = (flips % 2) == 0
    return _C.where(even, extra + low, span - extra + low)


def _pad_coord(coord: Tensor, size: int, padding: int, align_corners: bool) -> Tensor:
    """Applies the padding mode to a pixel coordinate (border: clip; reflection: reflect, then clip)."""
    if padding == 1:
        return coord.clamp(0, size - 1)
    if padding == 2:
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord = _reflect(coord, -1, 2 * size - 1)
        return coord.clamp(0, size - 1)
    return coord


def _cubic(t: Tensor) -> List[Tensor]:
    """The four cubic-convolution coefficients (A = -0.75) of fraction t."""
    a = -0.75

    def near(x: Tensor) -> Tensor:
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: Tensor) -> Tensor:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _grid_sampler(fname: str, input: Tensor, grid: Tensor, mode: int, padding: int, align_corners: bool,
                  n: int) -> Tensor:
    """grid_sampler_{n}d: input (N, C, *in) sampled at grid (N, *out, n) (x first)."""
    if not isinstance(input, Tensor) or not isinstance(grid, Tensor):
        raise TypeError(f"{fname}(): expected Tensor arguments")
    if input.dim() != n + 2 or grid.dim() != n + 2:
        raise RuntimeError(f"grid_sampler(): expected {n + 2}D input and grid with same number of dimensions, but "
                           f"got input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have same dtype, but input has "
                           f"{input.dtype} and grid has {grid.dtype}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if grid.shape[-1] != n:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {n} in last dimension, but got grid with "
                           f"sizes {list(grid.shape)}")
    if any(s == 0 for s in input.shape[2:]):
        raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                           f"sizes {list(input.shape)} with dimension {list(input.shape).index(0)} being empty")
    if mode not in (0, 1, 2) or padding not in (0, 1, 2):
        raise RuntimeError(f"{fname}: invalid interpolation_mode {mode} or padding_mode {padding}")
    if mode == 2 and n != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    _float_only(input, f"{fname}_cpu")
    nb, c = input.shape[0], input.shape[1]
    sizes = list(input.shape[2:])
    outs = list(grid.shape[1:-1])
    m = math.prod(outs)
    src = input.reshape(nb, c, math.prod(sizes))
    g = grid.reshape(nb, m, n)
    # spatial dim i (D, H, W order) reads grid component n - 1 - i
    coords = [_unnormalize(g[:, :, n - 1 - i], sizes[i], align_corners) for i in range(n)]

    def tap(idx: Sequence[Tensor]) -> Tensor:
        """Values at integer positions idx (one (N, M) long tensor per dim); 0 outside the input."""
        flat: Optional[Tensor] = None
        ok: Optional[Tensor] = None
        stride = 1
        for i in range(n - 1, -1, -1):
            inside = (idx[i] >= 0) & (idx[i] < sizes[i])
            term = idx[i].clamp(0, sizes[i] - 1) * stride
            flat = term if flat is None else flat + term
            ok = inside if ok is None else ok & inside
            stride *= sizes[i]
        vals = src.gather(2, flat.unsqueeze(1).expand(nb, c, m))
        return _C.where(ok.unsqueeze(1).expand(nb, c, m), vals, _C.zeros_like(vals))

    long_t = _arange(1).dtype
    if mode == 2:
        base = [cd.floor().detach() for cd in coords]
        frac = [cd - b for cd, b in zip(coords, base)]
        wy, wx = _cubic(frac[0]), _cubic(frac[1])
        out: Optional[Tensor] = None
        for a in range(4):
            yy = _pad_coord(base[0] + (a - 1), sizes[0], padding, align_corners).detach().to(long_t)
            for b in range(4):
                xx = _pad_coord(base[1] + (b - 1), sizes[1], padding, align_corners).detach().to(long_t)
                term = tap([yy, xx]) * (wy[a] * wx[b]).unsqueeze(1)
                out = term if out is None else out + term
    else:
        coords = [_pad_coord(cd, sizes[i], padding, align_corners) for i, cd in enumerate(coords)]
        if mode == 1:
            # the grid's gradient is zero, but still a function of the output gradient (as in torch)
            never = _C.zeros(coords[0].shape, dtype=_C.tensor(True).dtype)
            zero = sum(_C.where(never, cd, _C.zeros_like(cd)) for cd in coords)
            out = tap([cd.detach().round().to(long_t) for cd in coords]) + zero.unsqueeze(1)
        else:
            base = [cd.floor().detach() for cd in coords]
            frac = [cd - b for cd, b in zip(coords, base)]
            out = None
            for corner in range(2 ** n):
                bits = [(corner >> (n - 1 - i)) & 1 for i in range(n)]
                weight: Optional[Tensor] = None
                for i in range(n):
                    w = frac[i] if bits[i] else 1 - frac[i]
                    weight = w if weight is None else weight * w
                idx = [(base[i] + bits[i]).to(long_t) for i in range(n)]
                term = tap(idx) * weight.unsqueeze(1)
                out = term if out is None else out + term
    return out.reshape([nb, c] + outs)


def grid_sampler_2d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    """torch.grid_sampler_2d: modes 0 bilinear / 1 nearest / 2 bicubic, padding 0 zeros / 1 border / 2 reflection."""
    return _grid_sampler("grid_sampler_2d", input, grid, int(interpolation_mode), int(padding_mode),
                         bool(align_corners), 2)


def grid_sampler_3d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    """torch.grid_sampler_3d: modes 0 bilinear / 1 nearest, padding 0 zeros / 1 border / 2 reflection."""
    return _grid_sampler("grid_sampler_3d", input, grid, int(interpolation_mode), int(padding_mode),
                         bool(align_corners), 3)


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: Optional[bool] = None) -> Tensor:
    """Samples input at the normalized [-1, 1] locations of grid (bilinear / nearest / bicubic)."""
    if mode not in _MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in _PADDINGS:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since "
                      "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
                      "documentation of grid_sample for details.", stacklevel=2)
        align_corners = False
    n = 3 if input.dim() == 5 else 2
    return _grid_sampler(f"grid_sampler_{n}d", input, grid, _MODES[mode], _PADDINGS[padding_mode],
                         align_corners, n)


def affine_grid(theta: Tensor, size: List[int], align_corners: Optional[bool] = None) -> Tensor:
    """The sampling grid (N, H, W, 2) or (N, D, H, W, 3) of the affine maps theta (N, 2, 3) / (N, 3, 4)."""
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since "
                      "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
                      "documentation of grid_sample for details.", stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = [int(s) for s in size]
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. "
                             f"Got {theta.shape}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. "
                             f"Got {theta.shape}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the "
                      "documentation of affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    n = len(spatial)

    def axis(steps: int) -> Tensor:
        """The normalized coordinates of one axis."""
        if steps <= 1:
            return _C.zeros((max(steps, 0),), dtype=theta.dtype)
        line = _C.linspace(-1.0, 1.0, steps, dtype=theta.dtype)
        return line if align_corners else line * ((steps - 1) / steps)

    # base grid (*spatial, n + 1) holding (x, y[, z], 1): component j varies along spatial dim n - 1 - j
    parts = []
    for j in range(n):
        dim_i = n - 1 - j
        shape = [1] * n
        shape[dim_i] = spatial[dim_i]
        parts.append(axis(spatial[dim_i]).reshape(shape).expand(spatial))
    parts.append(_C.ones(spatial, dtype=theta.dtype))
    base = _C.stack(parts, n).reshape(1, math.prod(spatial), n + 1)
    grid = base.matmul(theta.transpose(1, 2))
    return grid.reshape([size[0]] + spatial + [n])
