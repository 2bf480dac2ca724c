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
    """Base of the losses: the reduction ('mean', 'sum' or 'none'); the deprecated size_average / reduce
    flags, when either is given, decide it instead."""

    reduction: str

    def __init__(self, size_average: Optional[bool] = None, reduce: Optional[bool] = None,
                 reduction: str = "mean") -> None:
        super().__init__()
        legacy = (size_average, reduce) != (None, None)
        self.reduction = F._legacy_get_string(size_average, reduce) if legacy else reduction

    def _keep(self, **tensors: Optional[Tensor]) -> None:
        """Registers the optional per-class tensors (weight, pos_weight) as buffers."""
        for name, value in tensors.items():
            self.register_buffer(name, value)


class _WeightedLoss(_Loss):
    """A loss with an optional per-class `weight` buffer."""

    weight: Optional[Tensor]

    def __init__(self, weight: Optional[Tensor] = None, size_average: Optional[bool] = None,
                 reduce: Optional[bool] = None, reduction: str = "mean") -> None:
        super().__init__(size_average=size_average, reduce=reduce, reduction=reduction)
        self._keep(weight=weight)


class _PointwiseLoss(_Loss):
    """The elementwise losses of (input, target) with no options but the reduction: the class names its
    nn.functional form (_loss)."""

    __constants__ = ["reduction"]

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return self._loss(input, target, reduction=self.reduction)


class L1Loss(_PointwiseLoss):
    """Mean (or sum, or none) of |input - target|."""

    _loss = staticmethod(F.l1_loss)


class NLLLoss(_WeightedLoss):
    """-input[n, target[n]] (times weight[target[n]]), targets equal to ignore_index skipped."""

    __constants__ = ["ignore_index", "reduction"]
    ignore_index: int

    def __init__(self, weight: Optional[Tensor] = None, size_average: Optional[bool] = None, ignore_index: int = -100,
                 reduce: Optional[bool] = None, reduction: str = "mean") -> None:
        super().__init__(weight=weight, size_average=size_average, reduce=reduce, reduction=reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index, reduction=self.reduction)


class KLDivLoss(_Loss):
    """target * (log target - input), input in log space (target too when log_target)."""

    __constants__ = ["reduction"]

    def __init__(self, size_average: Optional[bool] = None, reduce: Optional[bool] = None, reduction: str = "mean",
                 log_target: bool = False) -> None:
        super().__init__(size_average=size_average, reduce=reduce, reduction=reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class MSELoss(_PointwiseLoss):
    """Mean (or sum, or none) of (input - target)^2."""

    _loss = staticmethod(F.mse_loss)


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
        super().__init__(size_average=size_average, reduce=reduce, reduction=reduction)
        self._keep(weight=weight, pos_weight=pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy_with_logits(input, target, self.weight, pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere (d = input - target)."""

    __constants__ = ["reduction"]

    def __init__(self, size_average: Optional[bool] = None, reduce: Optional[bool] = None, reduction: str = "mean",
                 beta: float = 1.0) -> None:
        super().__init__(size_average=size_average, reduce=reduce, reduction=reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.smooth_l1_loss(input, target, beta=self.beta, reduction=self.reduction)


class HuberLoss(_Loss):
    """0.5 d^2 where |d| < delta, delta (|d| - 0.5 delta) elsewhere (d = input - target)."""

    __constants__ = ["reduction", "delta"]

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        if isinstance(delta, (int, float)):
            super().__init__(reduction=reduction)
            self.delta = delta
            return
        raise TypeError(f"delta must be a float or int, got: {type(delta)}")

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.huber_loss(input, target, delta=self.delta, reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """log_softmax + nll_loss over class dim 1; targets are class indices or class probabilities."""

    __constants__ = ["ignore_index", "reduction", "label_smoothing"]
    ignore_index: int
    label_smoothing: float

    def __init__(self, weight: Optional[Tensor] = None, size_average: Optional[bool] = None, ignore_index: int = -100,
                 reduce: Optional[bool] = None, reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(weight=weight, size_average=size_average, reduce=reduce, reduction=reduction)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class _PairMarginLoss(_Loss):
    """The losses of a pair (input1, input2) against a +-1 target with a `margin`: the class names its
    nn.functional form (_loss)."""

    __constants__ = ["margin", "reduction"]
    margin: float

    def __init__(self, margin: float = 0.0, size_average: Optional[bool] = None, reduce: Optional[bool] = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average=size_average, reduce=reduce, reduction=reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return self._loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class CosineEmbeddingLoss(_PairMarginLoss):
    """1 - cos(x1, x2) for target 1, max(0, cos(x1, x2) - margin) for target -1."""

    _loss = staticmethod(F.cosine_embedding_loss)


class MarginRankingLoss(_PairMarginLoss):
    """max(0, -target * (x1 - x2) + margin)."""

    _loss = staticmethod(F.margin_ranking_loss)
