"""PixelShuffle and PixelUnshuffle, as torch.nn: (*, C r^2, H, W) <-> (*, C, H r, W r)."""
from __future__ import annotations

from ... import _C
from ..._tensor import Tensor
from .module import Module
from .utils import _fields_repr

__all__ = ["PixelShuffle", "PixelUnshuffle"]

_pixel_shuffle, _pixel_unshuffle = _C.pixel_shuffle, _C.pixel_unshuffle


class PixelShuffle(Module):
    """(*, C r^2, H, W) -> (*, C, H r, W r), r = upscale_factor."""

    __constants__ = ["upscale_factor"]
    upscale_factor: int

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return _pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return _fields_repr(upscale_factor=self.upscale_factor)


class PixelUnshuffle(Module):
    """(*, C, H r, W r) -> (*, C r^2, H, W), r = downscale_factor."""

    __constants__ = ["downscale_factor"]
    downscale_factor: int

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return _pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return _fields_repr(downscale_factor=self.downscale_factor)
