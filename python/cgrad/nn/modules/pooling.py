"""The pooling layers, as torch.nn: MaxPool1d/2d/3d (return_indices), AvgPool1d/2d/3d, AdaptiveAvgPool1d/2d/3d,
AdaptiveMaxPool1d/2d/3d (return_indices), MaxUnpool1d/2d/3d, FractionalMaxPool2d/3d, LPPool1d/2d/3d."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple, Union

from ..._tensor import Tensor
from .. import functional as F
from .module import Module
from .utils import _fields_repr, _pair, _single, _triple

__all__ = ["MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
           "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "MaxPool3d", "AvgPool3d", "AdaptiveMaxPool3d",
           "AdaptiveAvgPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "FractionalMaxPool2d",
           "FractionalMaxPool3d", "LPPool1d", "LPPool2d", "LPPool3d"]

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


class MaxPool3d(_MaxPoolNd):
    """3-d max pooling over (N, C, D, H, W) or (C, D, H, W); (values, indices) when return_indices."""

    _kernel = staticmethod(F.max_pool3d)


class AvgPool3d(_AvgPoolNd):
    """3-d average pooling over (N, C, D, H, W) or (C, D, H, W); divisor_override replaces the window size."""

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
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """3-d adaptive max pooling to output_size (None entries: the input's size); (values, indices) when
    return_indices."""

    _kernel = staticmethod(F.adaptive_max_pool3d)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """3-d adaptive average pooling to output_size (None entries: the input's size)."""

    _kernel = staticmethod(F.adaptive_avg_pool3d)


class _MaxUnpoolNd(Module):
    """Common base of the max unpoolings: kernel_size, stride (defaults to kernel_size), padding as tuples."""

    def __init__(self, kernel_size: _Size, stride: Optional[_Size] = None, padding: _Size = 0) -> None:
        super().__init__()
        convert = self._convert
        _set_fields(self, kernel_size=convert(kernel_size),
                    stride=convert(stride if stride is not None else kernel_size), padding=convert(padding))

    def forward(self, input: Tensor, indices: Tensor, output_size: Optional[Sequence[int]] = None) -> Tensor:
        return self._kernel(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return _fields_repr(kernel_size=self.kernel_size, stride=self.stride, padding=self.padding)


class MaxUnpool1d(_MaxUnpoolNd):
    """Partial inverse of MaxPool1d: values placed at the pooling indices, zeros elsewhere."""

    _convert = staticmethod(_single)
    _kernel = staticmethod(F.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    """Partial inverse of MaxPool2d: values placed at the pooling indices, zeros elsewhere."""

    _convert = staticmethod(_pair)
    _kernel = staticmethod(F.max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    """Partial inverse of MaxPool3d: values placed at the pooling indices, zeros elsewhere."""

    _convert = staticmethod(_triple)
    _kernel = staticmethod(F.max_unpool3d)


class _FractionalMaxPoolNd(Module):
    """Common base of the fractional max poolings: kernel_size, output_size or output_ratio (exactly one),
    return_indices, the optional fixed _random_samples buffer."""

    __constants__ = ["kernel_size", "return_indices", "output_size", "output_ratio"]

    def __init__(self, kernel_size: _Size, output_size: Optional[_Size] = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: Optional[Tensor] = None) -> None:
        super().__init__()
        convert, n = self._convert, self._dims
        self.kernel_size = convert(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = convert(output_size) if output_size is not None else None
        self.output_ratio = convert(output_ratio) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"FractionalMaxPool{n}d requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor) -> _Out:
        return self._kernel(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                            _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """2-d fractional max pooling (Graham): pseudo-random window steps that reach output_size."""

    _dims = 2
    _convert = staticmethod(_pair)
    _kernel = staticmethod(F.fractional_max_pool2d)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """3-d fractional max pooling (Graham): pseudo-random window steps that reach output_size."""

    _dims = 3
    _convert = staticmethod(_triple)
    _kernel = staticmethod(F.fractional_max_pool3d)


class _LPPoolNd(Module):
    """Common base of the power-average poolings: norm_type, kernel_size, stride, ceil_mode; torch's repr."""

    __constants__ = ["norm_type", "kernel_size", "stride", "ceil_mode"]
    norm_type: float
    ceil_mode: bool

    def __init__(self, norm_type: float, kernel_size: _Size, stride: Optional[_Size] = None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        _set_fields(self, norm_type=norm_type, kernel_size=kernel_size, stride=stride, ceil_mode=ceil_mode)

    def forward(self, input: Tensor) -> Tensor:
        return self._kernel(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return _fields_repr(norm_type=self.norm_type, kernel_size=self.kernel_size, stride=self.stride,
                            ceil_mode=self.ceil_mode)


class LPPool1d(_LPPoolNd):
    """1-d power-average pooling: (sum of x^p over each window)^(1/p)."""

    _kernel = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    """2-d power-average pooling: (sum of x^p over each window)^(1/p)."""

    _kernel = staticmethod(F.lp_pool2d)


class LPPool3d(_LPPoolNd):
    """3-d power-average pooling: (sum of x^p over each window)^(1/p)."""

    _kernel = staticmethod(F.lp_pool3d)
