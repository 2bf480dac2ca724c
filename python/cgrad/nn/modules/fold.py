"""The sliding-block layers, as torch.nn: Fold (col2im) and Unfold (im2col)."""
from __future__ import annotations

from typing import Sequence, Union

from ..._tensor import Tensor
from .. import functional as F
from .module import Module
from .utils import _fields_repr

__all__ = ["Fold", "Unfold"]

_Size = Union[int, Sequence[int]]


class Fold(Module):
    """Sums sliding local blocks (N, C * prod(kernel_size), L) into a tensor (N, C, *output_size)."""

    __constants__ = ["output_size", "kernel_size", "dilation", "padding", "stride"]

    def __init__(self, output_size: _Size, kernel_size: _Size, dilation: _Size = 1, padding: _Size = 0,
                 stride: _Size = 1) -> None:
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return _fields_repr(output_size=self.output_size, kernel_size=self.kernel_size, dilation=self.dilation,
                            padding=self.padding, stride=self.stride)


class Unfold(Module):
    """Extracts sliding local blocks: (N, C, H, W) -> (N, C * prod(kernel_size), L)."""

    __constants__ = ["kernel_size", "dilation", "padding", "stride"]

    def __init__(self, kernel_size: _Size, dilation: _Size = 1, padding: _Size = 0, stride: _Size = 1) -> None:
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return _fields_repr(kernel_size=self.kernel_size, dilation=self.dilation, padding=self.padding,
                            stride=self.stride)
