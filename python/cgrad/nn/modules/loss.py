"""The loss layers, as torch.nn: pointwise regression losses, the classification
losses (class weights kept as a buffer, like torch) and the embedding / ranking
losses."""
from __future__ import annotations

import math
import warnings
from typing import Any, Callable, Optional, Tuple

from ..._tensor import Tensor
from .. import functional as F
from .distance import PairwiseDistance
from .linear import Linear
from .module import Module

__all__ = ["L1Loss", "NLLLoss", "KLDivLoss", "MSELoss", "BCELoss", "BCEWithLogitsLoss", "SmoothL1Loss", "HuberLoss",
           "CrossEntropyLoss", "CosineEmbeddingLoss", "MarginRankingLoss", "GaussianNLLLoss", "PoissonNLLLoss",
           "HingeEmbeddingLoss", "MultiMarginLoss", "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss",
           "SoftMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss", "CTCLoss",
           "NLLLoss2d", "LinearCrossEntropyLoss"]


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


_NLLLOSS2D_DEPRECATION = ("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in replacement and "
                          "see https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for more details.")


class NLLLoss2d(NLLLoss):
    """Deprecated alias of NLLLoss: creating one, or defining a subclass, warns (FutureWarning), as torch."""

    __deprecated__ = _NLLLOSS2D_DEPRECATION

    def __new__(cls, *args: Any, **kwargs: Any) -> "NLLLoss2d":
        if cls is NLLLoss2d:
            warnings.warn(_NLLLOSS2D_DEPRECATION, FutureWarning, stacklevel=2)
        return super().__new__(cls)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        warnings.warn(_NLLLOSS2D_DEPRECATION, FutureWarning, stacklevel=2)
        super().__init_subclass__(**kwargs)

    def __init__(self, weight: Optional[Tensor] = None, size_average: Optional[bool] = None, ignore_index: int = -100,
                 reduce: Optional[bool] = None, reduction: str = "mean") -> None:
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


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


class GaussianNLLLoss(_Loss):
    """0.5 (log var + (input - target)^2 / var), var clamped to eps (+ 0.5 log 2 pi when full)."""

    __constants__ = ["full", "eps", "reduction"]
    full: bool
    eps: float

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(None, None, reduction)
        self.full, self.eps = full, eps

    def forward(self, input: Tensor, target: Tensor, var: Any) -> Tensor:
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    """exp(input) - target * input (log_input), else input - target * log(input + eps); full adds Stirling's term."""

    __constants__ = ["log_input", "full", "eps", "reduction"]
    log_input: bool
    full: bool
    eps: float

    def __init__(self, log_input: bool = True, full: bool = False, size_average: Optional[bool] = None,
                 eps: float = 1e-8, reduce: Optional[bool] = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full, eps=self.eps,
                                  reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """input where target is 1, max(0, margin - input) where target is -1."""

    __constants__ = ["margin", "reduction"]
    margin: float

    def __init__(self, margin: float = 1.0, size_average: Optional[bool] = None, reduce: Optional[bool] = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class MultiLabelMarginLoss(_PointwiseLoss):
    """Multi-label hinge loss over class-index targets ended by -1."""

    _loss = staticmethod(F.multilabel_margin_loss)


class SoftMarginLoss(_PointwiseLoss):
    """log(1 + exp(-target * input))."""

    _loss = staticmethod(F.soft_margin_loss)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """One-vs-all logistic loss averaged over the classes, optionally weighted per class."""

    __constants__ = ["reduction"]

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss max(0, margin - x[y] + x[i])^p over i != y, averaged over the classes."""

    __constants__ = ["p", "margin", "reduction"]
    margin: float
    p: int

    def __init__(self, p: int = 1, margin: float = 1.0, weight: Optional[Tensor] = None,
                 size_average: Optional[bool] = None, reduce: Optional[bool] = None, reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.dim() != 1:
            raise ValueError(f"MultiMarginLoss: expected weight to be None or 1D tensor, got {weight.dim()}D instead")
        self.p, self.margin = p, margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin, weight=self.weight,
                                   reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """max(0, margin + d(a, p) - d(a, n)), d the p-norm pairwise distance."""

    __constants__ = ["margin", "p", "eps", "swap", "reduction"]
    margin: float
    p: float
    eps: float
    swap: bool

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6, swap: bool = False,
                 size_average: Optional[bool] = None, reduce: Optional[bool] = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead")
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p, eps=self.eps,
                                     swap=self.swap, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """max(0, margin + d(a, p) - d(a, n)) for a distance function d (default: pairwise_distance)."""

    __constants__ = ["margin", "swap", "reduction"]
    margin: float
    swap: bool

    def __init__(self, *, distance_function: Optional[Callable[[Tensor, Tensor], Tensor]] = None,
                 margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> None:
        super().__init__(size_average=None, reduce=None, reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} "
                             "instead")
        self.distance_function = distance_function if distance_function is not None else PairwiseDistance()
        self.margin, self.swap = margin, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_with_distance_loss(anchor, positive, negative,
                                                   distance_function=self.distance_function, margin=self.margin,
                                                   swap=self.swap, reduction=self.reduction)


class CTCLoss(_Loss):
    """Connectionist Temporal Classification loss over (T, N, C) log-probabilities."""

    __constants__ = ["blank", "reduction"]
    blank: int
    zero_infinity: bool

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> None:
        super().__init__(reduction=reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any) -> Tensor:
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                          self.zero_infinity)


class LinearCrossEntropyLoss(_WeightedLoss):
    """cross_entropy(linear(input), target) with the linear layer owned by the loss (self.linear, its weight
    stored flat as (num_classes * prod(out_features), in_features)); see F.linear_cross_entropy."""

    __constants__ = ["num_classes", "out_features", "reduction", "ignore_index", "label_smoothing"]
    num_classes: int
    out_features: Tuple[int, ...]
    ignore_index: Optional[int]
    label_smoothing: float
    options: Any

    def __init__(self, in_features: int, num_classes: int, *, out_features: Tuple[int, ...] = (), bias: bool = False,
                 device: Any = None, dtype: Any = None, reduction: str = "mean", weight: Optional[Tensor] = None,
                 ignore_index: Optional[int] = None, label_smoothing: float = 0.0, options: Any = None) -> None:
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got {tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(f"expected label_smoothing to be in range [0, 1], got {label_smoothing}")
        super().__init__(weight=weight, size_average=None, reduce=None, reduction=reduction)
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        # Linear weights are 2-d: the K-dimensional weight is kept flat and reshaped in forward
        self.linear = Linear(in_features, math.prod(out_features, start=num_classes), bias=bias, device=device,
                             dtype=dtype)
        self.options = options

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        linear_weight = self.linear.weight.reshape((self.num_classes, *self.out_features, self.linear.in_features))
        bias = self.linear.bias
        linear_bias = bias.reshape((self.num_classes, *self.out_features)) if bias is not None else None
        return F.linear_cross_entropy(input, linear_weight, target, linear_bias=linear_bias, weight=self.weight,
                                      reduction=self.reduction, ignore_index=self.ignore_index,
                                      label_smoothing=self.label_smoothing, options=self.options)

    def extra_repr(self) -> str:
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")
