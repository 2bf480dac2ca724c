"""The upsampling layers, as torch.nn: Upsample (F.interpolate with fixed
arguments) and the two legacy fixed-mode 2-d forms."""
from __future__ import annotations

from typing import Any, Dict, Optional, Sequence, Tuple, Union

from ..._tensor import Tensor
from .. import functional as F
from .module import Module
from .utils import _fields_repr

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]

_size_any_t = Union[int, Sequence[int]]
_ratio_any_t = Union[float, Sequence[float]]
_size_2_t = Union[int, Tuple[int, int]]
_ratio_2_t = Union[float, Tuple[float, float]]


def _as_ratio(scale_factor: Any) -> Any:
    """The scale factor as Upsample keeps it: a tuple of floats, one float, or None when not given
    (0 counts as not given)."""
    if isinstance(scale_factor, tuple):
        return tuple(map(float, scale_factor))
    return float(scale_factor) if scale_factor else None


class Upsample(Module):
    """Resizes to `size` or by `scale_factor` with `mode` (nearest, linear, bilinear, bicubic, trilinear)."""

    __constants__ = ["size", "scale_factor", "mode", "align_corners", "name", "recompute_scale_factor"]
    name: str
    size: Optional[_size_any_t]
    scale_factor: Optional[_ratio_any_t]
    mode: str
    align_corners: Optional[bool]
    recompute_scale_factor: Optional[bool]

    def __init__(self, size: Optional[_size_any_t] = None, scale_factor: Optional[_ratio_any_t] = None,
                 mode: str = "nearest", align_corners: Optional[bool] = None,
                 recompute_scale_factor: Optional[bool] = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size, self.scale_factor = size, _as_ratio(scale_factor)
        self.mode, self.align_corners, self.recompute_scale_factor = mode, align_corners, recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def __setstate__(self, state: Dict[str, Any]) -> None:
        state.setdefault("recompute_scale_factor", True)
        super().__setstate__(state)

    def extra_repr(self) -> str:
        by_factor = self.scale_factor is not None
        target = {"scale_factor": repr(self.scale_factor)} if by_factor else {"size": repr(self.size)}
        return _fields_repr(**target, mode=repr(self.mode))


class UpsamplingNearest2d(Upsample):
    """Upsample(size, scale_factor, mode='nearest') for 4-d input."""

    def __init__(self, size: Optional[_size_2_t] = None, scale_factor: Optional[_ratio_2_t] = None) -> None:
        super().__init__(size=size, scale_factor=scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Upsample(size, scale_factor, mode='bilinear', align_corners=True) for 4-d input."""

    def __init__(self, size: Optional[_size_2_t] = None, scale_factor: Optional[_ratio_2_t] = None) -> None:
        super().__init__(size=size, scale_factor=scale_factor, mode="bilinear", align_corners=True)
