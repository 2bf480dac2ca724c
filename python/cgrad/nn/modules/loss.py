"""The loss layers, as torch.nn: pointwise regression losses, the classification
losses (class weights kept as a buffer, like torch) and the embedding / ranking
losses."""
from __future__ import annotations

from typing import Optional

from ..._tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = ["L1Loss", "NLLLoss", "KLDivLoss", "MSELoss", "BCELoss", "BCEWithLogitsLoss", "SmoothL1Loss", "HuberLoss",
           "CrossEntropyLoss", "CosineEmbeddingLoss", "MarginRankingLoss"]


class _Loss(Module):
    reduction: str

    def __init__(self, size_average: Optional[bool] = None, reduce: Optional[bool] = None,
                 reduction: str = "mean") -> None:
        super().__init__()
        if size_average is not None or reduce is not None:
            self.reduction = F._legacy_get_string(size_average, reduce)
        else:
            self.reduction = reduction


class _WeightedLoss(_Loss):
    weight: Optional[Tensor]

    def __init__(self, weight: Optional[Tensor] = None, size_average: Optional[bool] = None,
                 reduce: Optional[bool] = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class L1Loss(_Loss):
    """Mean (or sum, or none) of |input - target|."""

    __constants__ = ["reduction"]

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.l1_loss(input, target, reduction=self.reduction)


class NLLLoss(_WeightedLoss):
    """-input[n, target[n]] (times weight[target[n]]), targets equal to ignore_index skipped."""

    __constants__ = ["ignore_index", "reduction"]
    ignore_index: int

    def __init__(self, weight: Optional[Tensor] = None, size_average: Optional[bool] = None, ignore_index: int = -100,
                 reduce: Optional[bool] = None, reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index, reduction=self.reduction)


class KLDivLoss(_Loss):
    """target * (log target - input), input in log space (target too when log_target)."""

    __constants__ = ["reduction"]

    def __init__(self, size_average: Optional[bool] = None, reduce: Optional[bool] = None, reduction: str = "mean",
                 log_target: bool = False) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class MSELoss(_Loss):
    """Mean (or sum, or none) of (input - target)^2."""

    __constants__ = ["reduction"]

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)


class BCELoss(_WeightedLoss):
    """-(t log x + (1 - t) log(1 - x)) on probabilities x, optionally weighted."""

    __constants__ = ["reduction"]

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """BCELoss on sigmoid(input), computed stably; pos_weight scales the positive term per class."""

    weight: Optional[Tensor]
    pos_weight: Optional[Tensor]

    def __init__(self, weight: Optional[Tensor] = None, size_average: Optional[bool] = None,
                 reduce: Optional[bool] = None, reduction: str = "mean", pos_weight: Optional[Tensor] = None) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy_with_logits(input, target, self.weight, pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere (d = input - target)."""

    __constants__ = ["reduction"]

    def __init__(self, size_average: Optional[bool] = None, reduce: Optional[bool] = None, reduction: str = "mean",
                 beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """0.5 d^2 where |d| < delta, delta (|d| - 0.5 delta) elsewhere (d = input - target)."""

    __constants__ = ["reduction", "delta"]

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        if not isinstance(delta, (float, int)):
            raise TypeError(f"delta must be a float or int, got: {type(delta)}")
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class CrossEntropyLoss(_WeightedLoss):
    """log_softmax + nll_loss over class dim 1; targets are class indices or class probabilities."""

    __constants__ = ["ignore_index", "reduction", "label_smoothing"]
    ignore_index: int
    label_smoothing: float

    def __init__(self, weight: Optional[Tensor] = None, size_average: Optional[bool] = None, ignore_index: int = -100,
                 reduce: Optional[bool] = None, reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class CosineEmbeddingLoss(_Loss):
    """1 - cos(x1, x2) for target 1, max(0, cos(x1, x2) - margin) for target -1."""

    __constants__ = ["margin", "reduction"]
    margin: float

    def __init__(self, margin: float = 0.0, size_average: Optional[bool] = None, reduce: Optional[bool] = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class MarginRankingLoss(_Loss):
    """max(0, -target * (x1 - x2) + margin)."""

    __constants__ = ["margin", "reduction"]
    margin: float

    def __init__(self, margin: float = 0.0, size_average: Optional[bool] = None, reduce: Optional[bool] = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)
