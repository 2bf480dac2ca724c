"""The normalization layers over trailing dims or channel groups, as torch.nn: LayerNorm, GroupNorm, RMSNorm.
Their affine parameters (weight ones, bias zeros) come from the helpers the batch norms use too."""
from __future__ import annotations

import numbers
from typing import Any, Optional, Sequence, Tuple, Union

from ..._tensor import Tensor
from .. import functional as F
from .module import Module
from .utils import _fields_repr, _register_affine, _reset_affine

__all__ = ["LayerNorm", "GroupNorm", "RMSNorm"]

_shape_t = Union[int, Sequence[int]]


def _as_shape(shape: _shape_t) -> Tuple[int, ...]:
    """normalized_shape as a tuple: one int is a 1-element shape."""
    return (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)  # type: ignore[arg-type]


class LayerNorm(Module):
    """Normalizes over the last len(normalized_shape) dims; weight (ones) and bias (zeros) of that shape."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]
    normalized_shape: Tuple[int, ...]
    eps: float
    elementwise_affine: bool

    def __init__(self, normalized_shape: _shape_t, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        shape = _as_shape(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
        _register_affine(self, shape, device, dtype, weight=elementwise_affine, bias=elementwise_affine and bias)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return _fields_repr(self.normalized_shape, eps=self.eps, elementwise_affine=self.elementwise_affine,
                            bias=self.bias is not None)


class GroupNorm(Module):
    """Normalizes the channels of (N, C, *) in num_groups groups; per-channel weight (ones) and bias (zeros)."""

    __constants__ = ["num_groups", "num_channels", "eps", "affine"]
    num_groups: int
    num_channels: int
    eps: float
    affine: bool

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device: Any = None, dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        _register_affine(self, num_channels, device, dtype, weight=affine, bias=affine and bias)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return _fields_repr(self.num_groups, self.num_channels, eps=self.eps, affine=self.affine,
                            bias=self.bias is not None)


class RMSNorm(Module):
    """x / sqrt(mean(x^2) + eps) over the last len(normalized_shape) dims, times weight (ones); no bias."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]
    normalized_shape: Tuple[int, ...]
    eps: Optional[float]
    elementwise_affine: bool

    def __init__(self, normalized_shape: _shape_t, eps: Optional[float] = None, elementwise_affine: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        shape = _as_shape(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
        _register_affine(self, shape, device, dtype, weight=elementwise_affine)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, x: Tensor) -> Tensor:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return _fields_repr(self.normalized_shape, eps=self.eps, elementwise_affine=self.elementwise_affine)
