"""The padding layers, as torch.nn: zero / constant / reflection / replication / circular padding of the
last 1, 2 or 3 dims. One base (_PadNd) does the work, parameterised by the F.pad mode and the number of
padded dims; the per-mode bases and the 1d / 2d / 3d classes only set those two class attributes."""
from __future__ import annotations

import collections.abc
from typing import Sequence, Tuple, Union

from ..._tensor import Tensor
from .. import functional as F
from .module import Module
from .utils import _check_rank

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d"]

_PadArg = Union[int, Sequence[int]]


def _per_side(padding: _PadArg, sides: int) -> Tuple[int, ...]:
    """The padding as F.pad takes it: a sequence as given, one int for every side."""
    if isinstance(padding, collections.abc.Iterable) and not isinstance(padding, str):
        return tuple(padding)
    return (padding,) * sides


class _PadNd(Module):
    """Pads the last _dims dims with F.pad(mode=_mode); padding is (before, after) per dim, last dim first."""

    __constants__ = ["padding"]
    _mode = "constant"
    _dims = 1
    padding: Sequence[int]

    def __init__(self, padding: _PadArg) -> None:
        super().__init__()
        self.padding = _per_side(padding, 2 * self._dims)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return str(self.padding)


class _CircularPadNd(_PadNd):
    """Wrap-around padding; the input must be batched or unbatched (_dims + 1 or + 2 dims)."""

    _mode = "circular"

    def _check_input_dim(self, input: Tensor) -> None:
        _check_rank(input, (self._dims + 1, self._dims + 2))

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        return F.pad(input, self.padding, self._mode)


class _ConstantPadNd(_PadNd):
    """Padding with a constant value, shown in the repr."""

    __constants__ = ["padding", "value"]
    value: float

    def __init__(self, padding: _PadArg, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self._mode, self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class _ReflectionPadNd(_PadNd):
    """Mirror padding (the edge itself is not repeated)."""

    _mode = "reflect"


class _ReplicationPadNd(_PadNd):
    """Edge-repeating padding."""

    _mode = "replicate"


class _ZeroPad:
    """ZeroPad1d / 2d / 3d: a constant pad with 0.0 whose repr shows only the padding."""

    padding: Sequence[int]

    def __init__(self, padding: _PadArg) -> None:
        super().__init__(padding, 0.0)  # type: ignore[call-arg]

    def extra_repr(self) -> str:
        return str(self.padding)


class CircularPad1d(_CircularPadNd):
    """Wrap-around padding of the last dim: padding (left, right)."""

    _dims = 1


class CircularPad2d(_CircularPadNd):
    """Wrap-around padding of the last 2 dims: padding (left, right, top, bottom)."""

    _dims = 2


class CircularPad3d(_CircularPadNd):
    """Wrap-around padding of the last 3 dims: padding (left, right, top, bottom, front, back)."""

    _dims = 3


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim with `value`: padding (left, right)."""

    _dims = 1


class ConstantPad2d(_ConstantPadNd):
    """Pads the last 2 dims with `value`: padding (left, right, top, bottom)."""

    _dims = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last 3 dims with `value`: padding (left, right, top, bottom, front, back)."""

    _dims = 3


class ReflectionPad1d(_ReflectionPadNd):
    """Mirror padding (edge not repeated) of the last dim: padding (left, right)."""

    _dims = 1


class ReflectionPad2d(_ReflectionPadNd):
    """Mirror padding of the last 2 dims: padding (left, right, top, bottom)."""

    _dims = 2


class ReflectionPad3d(_ReflectionPadNd):
    """Mirror padding of the last 3 dims: padding (left, right, top, bottom, front, back)."""

    _dims = 3


class ReplicationPad1d(_ReplicationPadNd):
    """Edge-repeating padding of the last dim: padding (left, right)."""

    _dims = 1


class ReplicationPad2d(_ReplicationPadNd):
    """Edge-repeating padding of the last 2 dims: padding (left, right, top, bottom)."""

    _dims = 2


class ReplicationPad3d(_ReplicationPadNd):
    """Edge-repeating padding of the last 3 dims: padding (left, right, top, bottom, front, back)."""

    _dims = 3


class ZeroPad1d(_ZeroPad, ConstantPad1d):
    """Zero padding of the last dim: padding (left, right)."""


class ZeroPad2d(_ZeroPad, ConstantPad2d):
    """Zero padding of the last 2 dims: padding (left, right, top, bottom)."""


class ZeroPad3d(_ZeroPad, ConstantPad3d):
    """Zero padding of the last 3 dims: padding (left, right, top, bottom, front, back)."""
