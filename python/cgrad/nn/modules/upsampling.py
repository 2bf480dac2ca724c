"""The upsampling layers, as torch.nn: Upsample (F.interpolate with fixed
arguments) and the two legacy fixed-mode 2-d forms."""
from __future__ import annotations

from typing import Any, Dict, Optional, Sequence, Tuple, Union

from ..._tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]

_size_any_t = Union[int, Sequence[int]]
_ratio_any_t = Union[float, Sequence[float]]
_size_2_t = Union[int, Tuple[int, int]]
_ratio_2_t = Union[float, Tuple[float, float]]


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
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def __setstate__(self, state: Dict[str, Any]) -> None:
        if "recompute_scale_factor" not in state:
            state["recompute_scale_factor"] = True
        super().__setstate__(state)

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        info += ", mode=" + repr(self.mode)
        return info


class UpsamplingNearest2d(Upsample):
    """Upsample(size, scale_factor, mode='nearest') for 4-d input."""

    def __init__(self, size: Optional[_size_2_t] = None, scale_factor: Optional[_ratio_2_t] = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Upsample(size, scale_factor, mode='bilinear', align_corners=True) for 4-d input."""

    def __init__(self, size: Optional[_size_2_t] = None, scale_factor: Optional[_ratio_2_t] = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
