"""The pooling layers, as torch.nn: MaxPool1d/2d (return_indices), AvgPool1d/2d, AdaptiveAvgPool1d/2d,
AdaptiveMaxPool1d/2d (return_indices)."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple, Union

from ..._tensor import Tensor
from .. import functional as F
from .module import Module
from .utils import _fields_repr, _single

__all__ = ["MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
           "AdaptiveAvgPool1d", "AdaptiveAvgPool2d"]

_Size = Union[int, Sequence[int]]
_OptSize = Union[int, None, Sequence[Optional[int]]]
_Out = Union[Tensor, Tuple[Tensor, Tensor]]


def _set_fields(module: Module, **values: Any) -> None:
    """Stores the constructor's settings as plain attributes."""
    for name, value in values.items():
        setattr(module, name, value)


class _MaxPoolNd(Module):
    """Common base: the arguments as given (stride defaults to kernel_size), torch's repr."""

    __constants__ = ["kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"]
    return_indices: bool
    ceil_mode: bool

    def __init__(self, kernel_size: _Size, stride: Optional[_Size] = None, padding: _Size = 0, dilation: _Size = 1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        _set_fields(self, kernel_size=kernel_size, stride=kernel_size if stride is None else stride,
                    padding=padding, dilation=dilation, return_indices=return_indices, ceil_mode=ceil_mode)

    def forward(self, input: Tensor) -> _Out:
        return self._kernel(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                            self.return_indices)

    def extra_repr(self) -> str:
        return _fields_repr(kernel_size=self.kernel_size, stride=self.stride, padding=self.padding,
                            dilation=self.dilation, ceil_mode=self.ceil_mode)


class MaxPool1d(_MaxPoolNd):
    """1-d max pooling over (N, C, L) or (C, L); (values, indices) when return_indices."""

    _kernel = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """2-d max pooling over (N, C, H, W) or (C, H, W); (values, indices) when return_indices."""

    _kernel = staticmethod(F.max_pool2d)


class _AvgPoolNd(Module):
    """Common base of the average poolings: torch's repr."""

    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"]

    def extra_repr(self) -> str:
        return _fields_repr(kernel_size=self.kernel_size, stride=self.stride, padding=self.padding)


class AvgPool1d(_AvgPoolNd):
    """1-d average pooling over (N, C, L) or (C, L)."""

    kernel_size: Tuple[int]
    stride: Tuple[int]
    padding: Tuple[int]
    ceil_mode: bool
    count_include_pad: bool

    def __init__(self, kernel_size: _Size, stride: Optional[_Size] = None, padding: _Size = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        super().__init__()
        _set_fields(self, kernel_size=_single(kernel_size), stride=_single(kernel_size if stride is None else stride),
                    padding=_single(padding), ceil_mode=ceil_mode, count_include_pad=count_include_pad)

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class AvgPool2d(_AvgPoolNd):
    """2-d average pooling over (N, C, H, W) or (C, H, W); divisor_override replaces the window size."""

    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"]
    ceil_mode: bool
    count_include_pad: bool

    def __init__(self, kernel_size: _Size, stride: Optional[_Size] = None, padding: _Size = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: Optional[int] = None) -> None:
        super().__init__()
        _set_fields(self, kernel_size=kernel_size, stride=kernel_size if stride is None else stride, padding=padding,
                    ceil_mode=ceil_mode, count_include_pad=count_include_pad, divisor_override=divisor_override)

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class _AdaptiveMaxPoolNd(Module):
    """Common base of the adaptive max poolings: output_size, return_indices, torch's repr."""

    __constants__ = ["output_size", "return_indices"]
    return_indices: bool

    def __init__(self, output_size: _OptSize, return_indices: bool = False) -> None:
        super().__init__()
        _set_fields(self, output_size=output_size, return_indices=return_indices)

    def forward(self, input: Tensor) -> _Out:
        return self._kernel(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return _fields_repr(output_size=self.output_size)


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """1-d adaptive max pooling to output_size; (values, indices) when return_indices."""

    _kernel = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """2-d adaptive max pooling to output_size (None entries: the input's size); (values, indices) when
    return_indices."""

    _kernel = staticmethod(F.adaptive_max_pool2d)


class _AdaptiveAvgPoolNd(Module):
    """Common base of the adaptive average poolings: output_size, torch's repr."""

    __constants__ = ["output_size"]

    def __init__(self, output_size: _OptSize) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return self._kernel(input, self.output_size)

    def extra_repr(self) -> str:
        return _fields_repr(output_size=self.output_size)


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """1-d adaptive average pooling to output_size."""

    _kernel = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """2-d adaptive average pooling to output_size (None entries: the input's size)."""

    _kernel = staticmethod(F.adaptive_avg_pool2d)
