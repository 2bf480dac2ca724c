"""The normalization layers over trailing dims or channel groups, as torch.nn: LayerNorm, GroupNorm, RMSNorm.
Their affine parameters (weight ones, bias zeros) come from the helpers the batch norms use too."""
from __future__ import annotations

import numbers
from typing import Any, Optional, Sequence, Tuple, Union

from ... import _C
from ..._tensor import Tensor
from .. import functional as F
from .module import Module
from .utils import _fields_repr, _register_affine, _reset_affine

__all__ = ["LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm", "CrossMapLRN2d"]

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


class LocalResponseNorm(Module):
    """x / (k + alpha * mean of x^2 over `size` neighbouring channels)^beta."""

    __constants__ = ["size", "alpha", "beta", "k"]
    size: int
    alpha: float
    beta: float
    k: float

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(Module):
    """The legacy cross-channel LRN of (N, C, H, W): x * (k + alpha / size * sum of x^2 over the channel
    window)^-beta, with the window of torch's running-sum kernel (channel 0 stays in every later window)."""

    size: int
    alpha: float
    beta: float
    k: float

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        c = input.shape[1]
        pre_pad = int((self.size - 1) / 2 + 1)
        out_c = _C.arange(c).reshape(c, 1)
        in_c = _C.arange(c).reshape(1, c)
        dropped = (in_c >= 1) & (in_c <= out_c - pre_pad)
        window = ((in_c <= out_c + pre_pad - 1) & ~dropped).to(input.dtype)  # (C out, C in)
        sq = (input * input).movedim(1, -1)  # (N, H, W, C)
        scale = (sq @ window.t()).movedim(-1, 1) * (self.alpha / self.size) + self.k
        return input * scale ** (-self.beta)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
