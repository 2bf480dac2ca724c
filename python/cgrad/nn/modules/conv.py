"""The convolution layers, as torch.nn: Conv1d/2d/3d (padding int / tuple / 'same' / 'valid', padding
modes zeros / reflect / replicate / circular) and ConvTranspose1d/2d/3d (output_padding, output_size), and
their Lazy* forms (in_channels inferred from the first input).

One class per family carries the whole behaviour; the 1-d / 2-d / 3-d classes only name their number
of spatial dims and the functional kernel they call."""
from __future__ import annotations

from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

from ... import _C
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module
from .utils import _fan_in_uniform_, _fields_repr, _pair, _single, _triple, _unless, _unless_filled

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "LazyConv1d",
           "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d"]

_Size = Union[int, Sequence[int]]

_PADDING_STRINGS = {"same", "valid"}
_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}
_AS_TUPLE = {1: _single, 2: _pair, 3: _triple}


def _check_conv_args(in_channels: int, out_channels: int, groups: int, stride: Tuple[int, ...],
                     padding: Union[str, Tuple[int, ...]], padding_mode: str) -> None:
    """The constructor's argument errors, with torch's messages."""
    if groups <= 0:
        raise ValueError("groups must be a positive integer")
    for label, channels in (("in_channels", in_channels), ("out_channels", out_channels)):
        if channels % groups:
            raise ValueError(f"{label} must be divisible by groups")
    if isinstance(padding, str):
        if padding not in _PADDING_STRINGS:
            raise ValueError(f"Invalid padding string {padding!r}, should be one of {_PADDING_STRINGS}")
        if padding == "same" and not all(s == 1 for s in stride):
            raise ValueError("padding='same' is not supported for strided convolutions")
    if padding_mode not in _PADDING_MODES:
        raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got padding_mode='{padding_mode}'")


def _explicit_padding(padding: Union[str, Tuple[int, ...]], kernel_size: Tuple[int, ...],
                      dilation: Tuple[int, ...]) -> List[int]:
    """The amounts F.pad adds for the non-zeros padding modes, in F.pad's order (last spatial dim first,
    (before, after) for each): 'valid' adds nothing; 'same' adds the kernel's reach d * (k - 1), the
    smaller half before; explicit sizes add their value on both sides."""
    if padding == "valid":
        sides = [(0, 0) for _ in kernel_size]
    elif padding == "same":
        sides = []
        for k, d in zip(kernel_size, dilation):
            reach = d * (k - 1)
            sides.append((reach // 2, reach - reach // 2))
    else:
        sides = [(p, p) for p in padding]
    return [amount for side in reversed(sides) for amount in side]


class _ConvNd(Module):
    """Common base: argument checks, weight (out, in / groups, *k) or, transposed, (in, out / groups, *k),
    bias (out), torch's default initialisation and repr."""

    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding", "in_channels",
                     "out_channels", "kernel_size"]
    in_channels: int
    _reversed_padding_repeated_twice: List[int]
    out_channels: int
    kernel_size: Tuple[int, ...]
    stride: Tuple[int, ...]
    padding: Union[str, Tuple[int, ...]]
    dilation: Tuple[int, ...]
    transposed: bool
    output_padding: Tuple[int, ...]
    groups: int
    padding_mode: str
    weight: Tensor
    bias: Optional[Tensor]

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Tuple[int, ...], stride: Tuple[int, ...],
                 padding: Union[str, Tuple[int, ...]], dilation: Tuple[int, ...], transposed: bool,
                 output_padding: Tuple[int, ...], groups: int, bias: bool, padding_mode: str, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        _check_conv_args(in_channels, out_channels, groups, stride, padding, padding_mode)
        settings = {"in_channels": in_channels, "out_channels": out_channels, "kernel_size": kernel_size,
                    "stride": stride, "padding": padding, "dilation": dilation, "transposed": transposed,
                    "output_padding": output_padding, "groups": groups, "padding_mode": padding_mode,
                    "_reversed_padding_repeated_twice": _explicit_padding(padding, kernel_size, dilation)}
        for name, value in settings.items():
            setattr(self, name, value)
        # the weight's first dim is the side the groups do not split
        whole, split = (in_channels, out_channels) if transposed else (out_channels, in_channels)
        self.weight = Parameter(_C.empty((whole, split // groups, *kernel_size), device=device, dtype=dtype))
        self.register_parameter("bias", Parameter(_C.empty(out_channels, device=device, dtype=dtype))
                                if bias else None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """torch's default: kaiming_uniform_(a=sqrt(5)) weight, uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)) bias."""
        with no_grad():
            _fan_in_uniform_(self.weight, self.bias)

    def extra_repr(self) -> str:
        return _fields_repr(self.in_channels, self.out_channels, kernel_size=self.kernel_size, stride=self.stride,
                            padding=_unless_filled(self.padding, 0), dilation=_unless_filled(self.dilation, 1),
                            output_padding=_unless_filled(self.output_padding, 0),
                            groups=_unless(self.groups, 1), bias=_unless(self.bias is not None, True),
                            padding_mode=_unless(self.padding_mode, "zeros"))

    def __setstate__(self, state: Any) -> None:
        super().__setstate__(state)
        self.__dict__.setdefault("padding_mode", "zeros")  # pickles from before padding modes existed


class _ConvSpatial(_ConvNd):
    """Conv1d / 2d / 3d: the public constructor and forward; subclasses set _dims and _kernel."""

    _dims: int
    _kernel: Callable[..., Tensor]

    def __init__(self, in_channels: int, out_channels: int, kernel_size: _Size, stride: _Size = 1,
                 padding: Union[str, _Size] = 0, dilation: _Size = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        as_tuple = _AS_TUPLE[self._dims]
        super().__init__(in_channels, out_channels, as_tuple(kernel_size), as_tuple(stride),
                         padding if isinstance(padding, str) else as_tuple(padding), as_tuple(dilation), False,
                         as_tuple(0), groups, bias, padding_mode, device, dtype)

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Optional[Tensor]) -> Tensor:
        kernel = self._kernel
        if self.padding_mode == "zeros":
            return kernel(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)
        # other modes: pad explicitly, then convolve without implicit padding
        padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
        return kernel(padded, weight, bias, self.stride, (0,) * self._dims, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_ConvSpatial):
    """1-d convolution over (N, C_in, L) or (C_in, L)."""

    _dims = 1
    _kernel = staticmethod(F.conv1d)


class Conv2d(_ConvSpatial):
    """2-d convolution over (N, C_in, H, W) or (C_in, H, W)."""

    _dims = 2
    _kernel = staticmethod(F.conv2d)


class Conv3d(_ConvSpatial):
    """3-d convolution over (N, C_in, D, H, W) or (C_in, D, H, W)."""

    _dims = 3
    _kernel = staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    """Common base of the transposed convolutions: only zeros padding; output_padding from output_size."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Tuple[int, ...], stride: Tuple[int, ...],
                 padding: Tuple[int, ...], dilation: Tuple[int, ...], transposed: bool,
                 output_padding: Tuple[int, ...], groups: int, bias: bool, padding_mode: str, device: Any = None,
                 dtype: Any = None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {self.__class__.__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                         output_padding, groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input: Tensor, output_size: Optional[Sequence[int]], stride: Sequence[int],
                        padding: Sequence[int], kernel_size: Sequence[int], num_spatial_dims: int,
                        dilation: Optional[Sequence[int]] = None) -> List[int]:
        """The extra output size per spatial dim that makes the result output_size (given with or without
        the leading batch / channel dims); the stored output_padding when output_size is None."""
        if output_size is None:
            return list(_single(self.output_padding))
        n = num_spatial_dims
        lead = 2 if input.dim() == n + 2 else 1
        wanted = list(output_size)
        if len(wanted) == lead + n:
            del wanted[:lead]
        if len(wanted) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.dim()}D input, output_size must have {n} or "
                             f"{lead + n} elements (got {len(wanted)})")
        spread = dilation if dilation is not None else (1,) * n
        # the stride leaves stride - 1 sizes above the smallest output reachable by output_padding
        smallest = [(input.size(lead + i) - 1) * stride[i] - 2 * padding[i] + spread[i] * (kernel_size[i] - 1) + 1
                    for i in range(n)]
        largest = [lo + s - 1 for lo, s in zip(smallest, stride)]
        if not all(lo <= w <= hi for w, lo, hi in zip(wanted, smallest, largest)):
            raise ValueError(f"requested an output size of {wanted}, but valid sizes range from {smallest} to "
                             f"{largest} (for an input of {input.size()[2:]})")
        return [w - lo for w, lo in zip(wanted, smallest)]


class _ConvTransposeSpatial(_ConvTransposeNd):
    """ConvTranspose1d / 2d / 3d: the public constructor and forward; subclasses set _dims and _kernel."""

    _dims: int
    _kernel: Callable[..., Tensor]

    def __init__(self, in_channels: int, out_channels: int, kernel_size: _Size, stride: _Size = 1,
                 padding: _Size = 0, output_padding: _Size = 0, groups: int = 1, bias: bool = True,
                 dilation: _Size = 1, padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        as_tuple = _AS_TUPLE[self._dims]
        super().__init__(in_channels, out_channels, as_tuple(kernel_size), as_tuple(stride), as_tuple(padding),
                         as_tuple(dilation), True, as_tuple(output_padding), groups, bias, padding_mode, device,
                         dtype)

    def forward(self, input: Tensor, output_size: Optional[List[int]] = None) -> Tensor:
        if self.padding_mode != "zeros":
            raise ValueError(f"Only `zeros` padding mode is supported for ConvTranspose{self._dims}d")
        extra = self._output_padding(input, output_size, self.stride, self.padding,  # type: ignore[arg-type]
                                     self.kernel_size, self._dims, self.dilation)
        return self._kernel(input, self.weight, self.bias, self.stride, self.padding, extra, self.groups,
                                  self.dilation)


class ConvTranspose1d(_ConvTransposeSpatial):
    """1-d transposed convolution over (N, C_in, L) or (C_in, L)."""

    _dims = 1
    _kernel = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeSpatial):
    """2-d transposed convolution over (N, C_in, H, W) or (C_in, H, W)."""

    _dims = 2
    _kernel = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeSpatial):
    """3-d transposed convolution over (N, C_in, D, H, W) or (C_in, D, H, W)."""

    _dims = 3
    _kernel = staticmethod(F.conv_transpose3d)


class _LazyConvXdMixin(LazyModuleMixin):
    """Lazy convolutions: in_channels, weight and bias are inferred from the first input (input.size(1), or
    input.size(0) unbatched); the module then becomes its plain class."""

    groups: int
    transposed: bool
    in_channels: int
    out_channels: int
    kernel_size: Tuple[int, ...]
    weight: UninitializedParameter
    bias: UninitializedParameter
    _dims: int

    def _lazy_setup(self, out_channels: int, bias: bool, device: Any, dtype: Any) -> None:
        """Replace the empty parameters built with in_channels = out_channels = 0 by uninitialized ones."""
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        """The plain class's initialisation, once the parameters are materialized."""
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        """Materialize weight ((out, in / groups, *k), or (in, out / groups, *k) transposed) and bias (out)."""
        if not self.has_uninitialized_params():
            return
        with no_grad():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
            else:
                shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
            self.weight.materialize(shape)
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input: Tensor) -> int:
        """The channel count of a batched (N, C, *spatial) or unbatched (C, *spatial) input."""
        unbatched = self._get_num_spatial_dims() + 1
        batched = unbatched + 1
        if input.dim() not in (unbatched, batched):
            raise RuntimeError(f"Expected {unbatched}D (unbatched) or {batched}D (batched) input to "
                               f"{self.__class__.__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.dim() == batched else input.shape[0]

    def _get_num_spatial_dims(self) -> int:
        return self._dims


class _LazyConvSpatial(_LazyConvXdMixin):
    """LazyConv1d / 2d / 3d: Conv*d's constructor without in_channels."""

    def __init__(self, out_channels: int, kernel_size: _Size, stride: _Size = 1, padding: Union[str, _Size] = 0,
                 dilation: _Size = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device: Any = None, dtype: Any = None) -> None:
        # bias False here: the real one is created uninitialized below
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode,
                         device=device, dtype=dtype)
        self._lazy_setup(out_channels, bias, device, dtype)


class _LazyConvTransposeSpatial(_LazyConvXdMixin):
    """LazyConvTranspose1d / 2d / 3d: ConvTranspose*d's constructor without in_channels."""

    def __init__(self, out_channels: int, kernel_size: _Size, stride: _Size = 1, padding: _Size = 0,
                 output_padding: _Size = 0, groups: int = 1, bias: bool = True, dilation: _Size = 1,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation,
                         padding_mode, device=device, dtype=dtype)
        self._lazy_setup(out_channels, bias, device, dtype)


class LazyConv1d(_LazyConvSpatial, Conv1d):
    """A Conv1d whose in_channels is inferred from the first input; it then becomes a Conv1d."""

    cls_to_become = Conv1d


class LazyConv2d(_LazyConvSpatial, Conv2d):
    """A Conv2d whose in_channels is inferred from the first input; it then becomes a Conv2d."""

    cls_to_become = Conv2d


class LazyConv3d(_LazyConvSpatial, Conv3d):
    """A Conv3d whose in_channels is inferred from the first input; it then becomes a Conv3d."""

    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTransposeSpatial, ConvTranspose1d):
    """A ConvTranspose1d whose in_channels is inferred from the first input; it then becomes a ConvTranspose1d."""

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTransposeSpatial, ConvTranspose2d):
    """A ConvTranspose2d whose in_channels is inferred from the first input; it then becomes a ConvTranspose2d."""

    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTransposeSpatial, ConvTranspose3d):
    """A ConvTranspose3d whose in_channels is inferred from the first input; it then becomes a ConvTranspose3d."""

    cls_to_become = ConvTranspose3d
