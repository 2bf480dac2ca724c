"""The distance layers, as torch.nn: PairwiseDistance and CosineSimilarity
(forward calls the C function directly)."""
from __future__ import annotations

from ... import _C
from ..._tensor import Tensor
from .module import Module

__all__ = ["PairwiseDistance", "CosineSimilarity"]

_cosine_similarity, _pairwise_distance = _C.cosine_similarity, _C.pairwise_distance


class PairwiseDistance(Module):
    """The p-norm of x1 - x2 + eps over the last dim."""

    __constants__ = ["norm", "eps", "keepdim"]
    norm: float
    eps: float
    keepdim: bool

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return _pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """x1 . x2 / max(||x1|| ||x2||, eps) along dim."""

    __constants__ = ["dim", "eps"]
    dim: int
    eps: float

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return _cosine_similarity(x1, x2, self.dim, self.eps)
