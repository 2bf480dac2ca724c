"""The dropout layers, as torch.nn: Dropout, Dropout1d/2d/3d, AlphaDropout, FeatureAlphaDropout."""
from __future__ import annotations

from ..._tensor import Tensor
from .. import functional as F
from .module import Module
from .utils import _fields_repr

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]


class _DropoutNd(Module):
    """Common base: the drop probability p (checked to lie in [0, 1]) and the inplace flag. Each layer
    names its nn.functional form (_drop); forward passes the flag only to the forms that honour it
    (_passes_inplace), the alpha forms ignore it as torch's layers do."""

    __constants__ = ["p", "inplace"]
    p: float
    inplace: bool
    _passes_inplace = True

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or 1 < p:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input: Tensor) -> Tensor:
        return self._drop(input, self.p, self.training, self._passes_inplace and self.inplace)

    def extra_repr(self) -> str:
        return _fields_repr(p=self.p, inplace=self.inplace)


class Dropout(_DropoutNd):
    """Zeroes each element with probability p in training and scales the rest by 1 / (1 - p)."""

    _drop = staticmethod(F.dropout)


class Dropout1d(_DropoutNd):
    """Zeroes whole channels of (N, C, L) or (C, L) with probability p in training."""

    _drop = staticmethod(F.dropout1d)


class Dropout2d(_DropoutNd):
    """Zeroes whole channels of (N, C, H, W) or (C, H, W) with probability p in training."""

    _drop = staticmethod(F.dropout2d)


class Dropout3d(_DropoutNd):
    """Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) with probability p in training."""

    _drop = staticmethod(F.dropout3d)


class AlphaDropout(_DropoutNd):
    """Dropout for SELU networks: keeps the input's mean and variance (inplace is ignored, as in torch)."""

    _passes_inplace = False
    _drop = staticmethod(F.alpha_dropout)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels (inplace is ignored, as in torch)."""

    _passes_inplace = False
    _drop = staticmethod(F.feature_alpha_dropout)
