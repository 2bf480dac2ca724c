"""The torch.nn.functional losses, activations and normalizations that
cgrad composes from its own ops (re-exported by cgrad.nn.functional)."""
from __future__ import annotations

import math
import warnings
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

from .. import _C
from .._tensor import Tensor
from ..autograd.function import Function as _Function

__all__: List[str] = [
    "gaussian_nll_loss", "poisson_nll_loss", "hinge_embedding_loss", "multi_margin_loss", "multilabel_margin_loss",
    "multilabel_soft_margin_loss", "soft_margin_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss",
    "ctc_loss", "local_response_norm", "rrelu", "rrelu_", "channel_shuffle", "native_channel_shuffle", "pdist",
    "upsample_bilinear", "upsample_nearest", "linear_cross_entropy", "multi_head_attention_forward",
    "gumbel_softmax",
]

_REDUCTIONS = ("none", "mean", "sum")


def _reduction(size_average: Optional[bool], reduce: Optional[bool], reduction: str) -> str:
    """The reduction string, the deprecated size_average / reduce flags overriding it when given."""
    from . import functional as F

    if size_average is not None or reduce is not None:
        return F._legacy_get_string(size_average, reduce)
    return reduction


def _apply_reduction(loss: Tensor, reduction: str) -> Tensor:
    """'none' / 'mean' / 'sum' of an elementwise loss; ValueError for another string."""
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _check_reduction(reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _float_only(fname: str, *ts: Tensor) -> None:
    for t in ts:
        if isinstance(t, Tensor) and not t.dtype.is_floating_point:
            raise RuntimeError(f"{fname}: expected a floating point tensor, got {t.dtype}")


# ---------------------------------------------------------------- regression / likelihood losses

def gaussian_nll_loss(input: Tensor, target: Tensor, var: Union[Tensor, float], full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """Gaussian negative log likelihood: 0.5 (log var + (input - target)^2 / var) (+ 0.5 log 2 pi when full)."""
    if isinstance(var, (int, float)) and not isinstance(var, bool):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = _C.ones_like(input) * float(var)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif input.dim() == var.dim() and sum(y for x, y in zip(input.shape, var.shape) if x != y) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    # the clamp acts as the identity for the gradient, as torch's clamp_ under no_grad
    var = var + (var.detach().clamp_min(eps) - var.detach())
    loss = 0.5 * (_C.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _apply_reduction(loss, reduction)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: Optional[bool] = None, eps: float = 1e-8, reduce: Optional[bool] = None,
                     reduction: str = "mean") -> Tensor:
    """Poisson negative log likelihood: exp(input) - target * input (log_input) or input - target * log(input + eps)."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if log_input:
        loss = _C.exp(input) - target * input
    else:
        loss = input - target * _C.log(input + eps)
    if full:
        safe = _C.where(target > 1, target, _C.ones_like(target))
        stirling = safe * _C.log(safe) - safe + 0.5 * _C.log(2 * math.pi * safe)
        loss = loss + _C.where(target > 1, stirling, _C.zeros_like(stirling))
    return _apply_reduction(loss, reduction)


# ---------------------------------------------------------------- margin losses

def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average: Optional[bool] = None,
                         reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    """input where target is 1, max(0, margin - input) where target is -1."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    zero = _C.zeros_like(input)
    margin_part = _C.where(target != 1, (margin - input).clamp_min(0), zero)
    self_part = _C.where(target != -1, input, zero)
    return _apply_reduction(margin_part + self_part, reduction)


def soft_margin_loss(input: Tensor, target: Tensor, size_average: Optional[bool] = None,
                     reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    """log(1 + exp(-target * input)), the two-class logistic loss."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    return _apply_reduction(_C.log1p(_C.exp(-target * input)), reduction)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Optional[Tensor] = None,
                                size_average: Optional[bool] = None, reduce: Optional[bool] = None,
                                reduction: str = "mean") -> Tensor:
    """One-vs-all logistic loss averaged over the classes (the last dim)."""
    from . import functional as F

    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    loss = -(target * F.logsigmoid(input) + (1 - target) * F.logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    return _apply_reduction(loss, reduction)


def _check_class_target(fname: str, input: Tensor, target: Tensor, same_shape: bool) -> None:
    nd = input.dim()
    if nd > 2:
        raise RuntimeError(f"{fname}: expected a 0-D, 1-D or 2-D input, got input of shape {tuple(input.shape)}")
    if same_shape:
        if tuple(target.shape) != tuple(input.shape) and not (nd <= 1 and target.numel() == input.numel()):
            raise RuntimeError(f"{fname}: inconsistent target size: {tuple(target.shape)} for input of size: "
                               f"{tuple(input.shape)}")
    else:
        n = input.shape[0] if nd == 2 else 1
        if target.dim() > 1 or target.numel() != n:
            raise RuntimeError(f"{fname}: inconsistent target size, expected {n} but got {tuple(target.shape)}")


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Optional[Tensor] = None, size_average: Optional[bool] = None,
                      reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    """Multi-class hinge loss: sum over i != y of max(0, margin - x[y] + x[i])^p (times weight[y]) / C."""
    reduction = _reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    _check_reduction(reduction)
    _check_class_target("multi_margin_loss", input, target, False)
    x = input.reshape(-1, input.shape[-1]) if input.dim() > 0 else input.reshape(1, 1)
    c = x.shape[1]
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"multi_margin_loss: expected weight to be of size {c}, got {tuple(weight.shape)}")
    y = target.reshape(-1, 1)
    if y.numel() and (bool((y < 0).any()) or bool((y >= c).any())):
        raise RuntimeError(f"multi_margin_loss: target out of range for {c} classes")
    x_y = x.gather(1, y)
    z = (margin - x_y + x).clamp_min(0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight.gather(0, y.reshape(-1)).reshape(-1, 1)
    not_y = _C.arange(c).reshape(1, c) != y
    loss = _C.where(not_y, z, _C.zeros_like(z)).sum(1) / c
    loss = loss.reshape(target.shape) if input.dim() == 2 or target.dim() == 1 else loss.reshape(())
    return _apply_reduction(loss, reduction)


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: Optional[bool] = None,
                           reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    """Multi-label hinge loss: targets are class indices ended by -1; sum over target j, non-target i of
    max(0, 1 - (x[j] - x[i])) / C."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _check_class_target("multilabel_margin_loss", input, target, True)
    x = input.reshape(-1, input.shape[-1]) if input.dim() > 0 else input.reshape(1, 1)
    n, c = x.shape
    t = target.reshape(n, c)
    valid = _C.cumprod((t >= 0).to(x.dtype), 1) > 0  # the labels before the first negative one
    idx = _C.where(valid, t, _C.zeros_like(t))
    if bool((idx >= c).any()):
        raise RuntimeError(f"multilabel_margin_loss: target out of range for {c} classes")
    is_target = _C.zeros((n, c), dtype=x.dtype).scatter_add(1, idx, valid.to(x.dtype)) > 0
    x_t = x.gather(1, idx)  # (n, c): x at each target label
    diff = (1 - x_t.unsqueeze(2) + x.unsqueeze(1)).clamp_min(0)  # (n, j, i)
    mask = valid.unsqueeze(2) & (~is_target).unsqueeze(1)
    loss = _C.where(mask, diff, _C.zeros_like(diff)).sum((1, 2)) / c
    loss = loss if input.dim() == 2 else loss.reshape(())
    return _apply_reduction(loss, reduction)


def _check_triplet_dims(anchor: Tensor, positive: Tensor, negative: Tensor) -> None:
    a, p, n = anchor.dim(), positive.dim(), negative.dim()
    if not (a == p and p == n):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a}D, positive {p}D, and negative {n}D inputs")


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average: Optional[bool] = None,
                        reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    """max(0, margin + d(a, p) - d(a, n)) with the p-norm pairwise distance (swap: d(a, n) -> min(d(a, n), d(p, n)))."""
    from . import functional as F

    reduction = _reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_reduction(reduction)
    _check_triplet_dims(anchor, positive, negative)
    d_pos = F.pairwise_distance(anchor, positive, p, eps)
    d_neg = F.pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _C.minimum(d_neg, F.pairwise_distance(positive, negative, p, eps))
    return _apply_reduction((margin + d_pos - d_neg).clamp_min(0), reduction)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Optional[Callable[[Tensor, Tensor], Tensor]] = None,
                                      margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> Tensor:
    """max(0, margin + d(a, p) - d(a, n)) for a distance function d (default: pairwise_distance)."""
    from . import functional as F

    _check_reduction(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    dist = F.pairwise_distance if distance_function is None else distance_function
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = _C.minimum(d_neg, dist(positive, negative))
    return _apply_reduction((margin + d_pos - d_neg).clamp_min(0), reduction)


# ---------------------------------------------------------------- CTC

def _lengths(x: Union[Tensor, Sequence[int]], n: int, name: str) -> Tensor:
    t = x if isinstance(x, Tensor) else _C.tensor(list(x), dtype=_C.int64)
    if t.dtype.is_floating_point:
        raise RuntimeError(f"ctc_loss: {name} must be integral, got {t.dtype}")
    t = t.reshape(-1).to(_C.int64)
    if t.numel() != n:
        raise RuntimeError(f"ctc_loss: expected {name} to have {n} entries (the batch size), got {t.numel()}")
    return t


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Union[Tensor, Sequence[int]],
             target_lengths: Union[Tensor, Sequence[int]], blank: int = 0, reduction: str = "mean",
             zero_infinity: bool = False) -> Tensor:
    """Connectionist Temporal Classification loss: the forward algorithm in log space over (T, N, C) log_probs."""
    _check_reduction(reduction)
    _float_only("ctc_loss", log_probs)
    batched = log_probs.dim() == 3
    if log_probs.dim() not in (2, 3):
        raise RuntimeError(f"ctc_loss: expected log_probs of 2 or 3 dims, got {tuple(log_probs.shape)}")
    lp = log_probs if batched else log_probs.unsqueeze(1)
    if not batched and targets.dim() == 1 and isinstance(target_lengths, Tensor) and target_lengths.dim() == 0:
        targets = targets.unsqueeze(0)
    T, N, C = lp.shape
    if blank < 0 or blank >= C:
        raise RuntimeError(f"ctc_loss: blank must be in label range [0, {C}), got {blank}")
    in_len = _lengths(input_lengths, N, "input_lengths")
    tg_len = _lengths(target_lengths, N, "target_lengths")
    if N and bool((in_len > T).any()):
        raise RuntimeError(f"ctc_loss: expected input_lengths to be at most {T} (the input length)")
    if targets.dtype.is_floating_point:
        raise RuntimeError(f"ctc_loss: targets must be integral, got {targets.dtype}")
    targets = targets.to(_C.int64)
    s_max = int(tg_len.max()) if N else 0
    if targets.dim() == 2 and targets.shape[0] == N:  # padded (N, S)
        if s_max > targets.shape[1]:
            raise RuntimeError(f"ctc_loss: target_lengths up to {s_max} for targets of shape {tuple(targets.shape)}")
        tg = targets[:, :s_max] if s_max else targets.new_zeros((N, 0))
    elif targets.dim() == 1 and not batched and N == 1:
        tg = targets[:s_max].reshape(1, s_max)
    elif targets.dim() == 1:  # concatenated
        total = int(tg_len.sum()) if N else 0
        if total > targets.numel():
            raise RuntimeError(f"ctc_loss: target_lengths sum to {total} for {targets.numel()} concatenated targets")
        starts = _C.cumsum(tg_len, 0) - tg_len
        pos = starts.reshape(N, 1) + _C.arange(s_max).reshape(1, s_max)
        pos = _C.where(pos < total, pos, _C.zeros_like(pos))
        tg = targets.gather(0, pos.reshape(-1)).reshape(N, s_max) if total else targets.new_zeros((N, s_max))
    else:
        raise RuntimeError(f"ctc_loss: expected targets of shape (N, S) or (sum(target_lengths),), got "
                           f"{tuple(targets.shape)}")
    L = 2 * s_max + 1
    s_idx = _C.arange(s_max).reshape(1, s_max)
    tg = _C.where(s_idx < tg_len.reshape(N, 1), tg, _C.full_like(tg, blank))
    ext = _C.full((N, L), blank, dtype=_C.int64)
    if s_max:
        ext = _C.stack([_C.full((N, s_max), blank, dtype=_C.int64), tg], 2).reshape(N, 2 * s_max)
        ext = _C.cat([ext, _C.full((N, 1), blank, dtype=_C.int64)], 1)
    # s-2 -> s transitions: a label that differs from the label two steps back
    prev2 = _C.cat([_C.full((N, 2), blank, dtype=_C.int64), ext[:, :L - 2]], 1) if L > 2 else ext
    skip = (ext != blank) & (ext != prev2) & (_C.arange(L).reshape(1, L) >= 2)
    neg = -1e30  # a finite log(0): keeps the gradients of unreachable states at 0, not NaN
    emit = lp.gather(2, ext.unsqueeze(0).expand(T, N, L)) if T else lp.new_zeros((0, N, L))
    pos_l = _C.arange(L).reshape(1, L)
    alpha = _C.where(pos_l < 2, emit[0], _C.full_like(emit[0], neg)) if T else lp.new_full((N, L), neg)
    alpha = _C.where((pos_l == 1) & (tg_len.reshape(N, 1) == 0), _C.full_like(alpha, neg), alpha)
    pad1 = lp.new_full((N, 1), neg)
    pad2 = lp.new_full((N, 2), neg)
    for t in range(1, T):
        a1 = _C.cat([pad1, alpha[:, :L - 1]], 1)
        a2 = _C.cat([pad2, alpha[:, :L - 2]], 1) if L > 2 else lp.new_full((N, L), neg)
        a2 = _C.where(skip, a2, _C.full_like(a2, neg))
        new = _C.stack([alpha, a1, a2], 0).logsumexp(0) + emit[t]
        alpha = _C.where((in_len > t).reshape(N, 1), new, alpha)
    end = (2 * tg_len).reshape(N, 1)
    last = alpha.gather(1, end)
    before = alpha.gather(1, (end - 1).clamp_min(0))
    before = _C.where(end > 0, before, _C.full_like(before, neg))
    loss = -_C.stack([last, before], 0).logsumexp(0).reshape(N)
    # torch's CTC gradient is exp(log_probs) - occupancy at t < input_length (the gradient of the logits under a
    # log_softmax, the usual input): a term of value 0 whose gradient is that exp(log_probs) part
    if T:
        live = (_C.arange(T).reshape(T, 1) < in_len.reshape(1, N)).unsqueeze(2)
        e = _C.where(live, _C.exp(lp), _C.zeros_like(lp)).sum((0, 2))
        loss = loss + (e - e.detach())
    impossible = (loss > 1e29) | (in_len == 0) & (tg_len > 0)
    if zero_infinity:
        loss = _C.where(impossible, _C.zeros_like(loss), loss)
    else:
        loss = _C.where(impossible, _C.full_like(loss, float("inf")), loss)
    if reduction == "mean":
        return (loss / tg_len.clamp_min(1).to(loss.dtype)).mean()
    if reduction == "sum":
        return loss.sum()
    return loss if batched else loss.reshape(())


# ---------------------------------------------------------------- normalization, activations, shuffles, distances

def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> Tensor:
    """input / (k + alpha * mean of input^2 over `size` neighbouring channels)^beta."""
    from . import functional as F

    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    sq = input * input
    c = input.shape[1]
    pads = [0, 0] * (dim - 2) + [size // 2, (size - 1) // 2]
    padded = F.pad(sq, pads)
    div = padded.narrow(1, 0, c)
    for j in range(1, size):
        div = div + padded.narrow(1, j, c)
    div = (div / size * alpha + k) ** beta
    return input / div


def _rrelu(input: Tensor, lower: float, upper: float, training: bool, inplace: bool) -> Tensor:
    from . import functional as F

    if lower > upper:
        raise RuntimeError(f"rrelu: Lower bound should be less than or equal to the upper bound, got lower={lower} "
                           f"and upper={upper}")
    _float_only("rrelu", input)
    if not training:
        return F.leaky_relu(input, (lower + upper) / 2, inplace=inplace)
    slope = _C.empty_like(input.detach()).uniform_(lower, upper)
    out = _C.where(input >= 0, input, input * slope)
    return input.copy_(out) if inplace else out


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU: negative slopes drawn uniformly in [lower, upper] (training) or their mean (eval)."""
    return _rrelu(input, lower, upper, training, inplace)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False) -> Tensor:
    """In-place rrelu."""
    return _rrelu(input, lower, upper, training, True)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """(N, C, *) with its channels split into `groups` groups and interleaved: (g, C/g) -> (C/g, g)."""
    if input.dim() < 3:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but got input with sizes "
                           f"{list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    c = input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    n, rest = input.shape[0], tuple(input.shape[2:])
    out = input.reshape((n, groups, c // groups) + rest).transpose(1, 2)
    return out.reshape((n, c) + rest)


native_channel_shuffle = channel_shuffle


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """p-norm distances between the rows of (N, M): the N (N - 1) / 2 pairs i < j, row-major."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    _float_only("pdist", input)
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    if n < 2:
        return input.reshape(-1)[:0]
    ij = _C.triu(_C.ones((n, n), dtype=_C.bool), 1).nonzero()
    diff = input.index_select(0, ij[:, 0]) - input.index_select(0, ij[:, 1])
    if p == 0:
        zero = _C.where(_C.isfinite(diff), diff * 0, _C.zeros_like(diff)).sum(1)  # keeps the graph, gradient 0
        return (diff != 0).to(input.dtype).sum(1) + zero
    if p == math.inf:
        return diff.abs().amax(1)
    if p == 1:
        return diff.abs().sum(1)
    # (sum |d|^p)^(1/p), written so a zero distance has a zero gradient (as torch's pdist backward)
    a = diff.abs()
    s = (a ** p).sum(1)
    zero = s == 0
    safe = _C.where(zero, _C.ones_like(s), s)
    return _C.where(zero, _C.zeros_like(s), safe ** (1.0 / p))


def upsample_nearest(input: Tensor, size: Union[int, Sequence[int], None] = None,
                     scale_factor: Union[float, Sequence[float], None] = None) -> Tensor:
    """Deprecated: interpolate(..., mode='nearest')."""
    from . import functional as F

    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return F.interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Union[int, Sequence[int], None] = None,
                      scale_factor: Union[float, Sequence[float], None] = None) -> Tensor:
    """Deprecated: interpolate(..., mode='bilinear', align_corners=True)."""
    from . import functional as F

    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return F.interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1) -> Tensor:
    """Softmax of (logits + Gumbel noise) / tau; hard=True: one-hot of the argmax with the soft gradient."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    u = _C.empty_like(logits.detach()).uniform_(0.0, 1.0)
    u = _C.where(u > 0, u, _C.full_like(u, 1e-20))
    gumbels = -_C.log(-_C.log(u))
    y_soft = _C.softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.detach().argmax(dim, keepdim=True)
    y_hard = _C.zeros_like(y_soft.detach()).scatter(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


# ---------------------------------------------------------------- fused linear + cross entropy, attention

def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *, linear_bias: Optional[Tensor] = None,
                         weight: Optional[Tensor] = None, reduction: str = "mean", ignore_index: Optional[int] = None,
                         label_smoothing: float = 0.0, options: Any = None) -> Tensor:
    """cross_entropy(linear(input, linear_weight, linear_bias), target, ...); with `options` (a
    LinearCrossEntropyOptions), the batch is processed in chunks of options.batch_chunk_size rows."""
    from . import functional as F

    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), "
                           f"got {input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got {tuple(linear_bias.shape)}")
    if out_features and not batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires"
                           f" batched input, (N, {in_features}), got unbatched input with shape {tuple(input.shape)}")
    logits_shape = (*batches, num_classes, *out_features)
    probabilities = tuple(target.shape) == logits_shape
    if probabilities and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore = -100 if ignore_index is None else ignore_index

    def logits_of(x: Tensor) -> Tensor:
        flat_w = linear_weight.reshape(-1, in_features)
        flat_b = None if linear_bias is None else linear_bias.reshape(-1)
        out = F.linear(x, flat_w, flat_b)
        return out.reshape(tuple(x.shape[:-1]) + (num_classes,) + out_features)

    chunkable = (reduction in _REDUCTIONS and label_smoothing == 0.0 and target.dtype == _C.int64
                 and not out_features)
    if options is not None and not chunkable:
        warnings.warn("linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
                      "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, out_features == (). Got "
                      f"reduction={reduction!r}, label_smoothing={label_smoothing}, target.dtype={target.dtype}, "
                      f"out_features={out_features}", stacklevel=2)
    if options is None or not chunkable:
        return F.cross_entropy(logits_of(input), target, weight=weight, ignore_index=ignore, reduction=reduction,
                               label_smoothing=label_smoothing)
    x, t = (input, target) if batches else (input.unsqueeze(0), target.unsqueeze(0))
    chunk = max(int(getattr(options, "batch_chunk_size", None) or x.shape[0]), 1)
    if reduction == "none":
        losses = [F.cross_entropy(logits_of(x[i:i + chunk]), t[i:i + chunk], weight=weight, ignore_index=ignore,
                                  reduction="none") for i in range(0, x.shape[0], chunk)]
        loss = _C.cat(losses, 0) if losses else x.new_zeros((0,))
        return loss if batches else loss.reshape(())
    return _ChunkedLinearCrossEntropy.apply(x, linear_weight, linear_bias, weight, t, ignore, chunk,
                                            reduction == "mean")


def _chunked_lce_forward(x: Tensor, w: Tensor, b: Optional[Tensor], weight: Optional[Tensor], t: Tensor,
                         ignore: int, chunk: int, mean: bool) -> Tuple[Tensor, Tensor, Tensor, Optional[Tensor]]:
    """The summed (or weighted-mean) loss over row chunks and its gradients for x, w and b, each chunk's
    logits freed once its gradients are taken."""
    from .. import autograd
    from . import functional as F

    w_d = w.detach().requires_grad_(True)
    b_d = None if b is None else b.detach().requires_grad_(True)
    total = x.new_zeros(())
    gx_parts: List[Tensor] = []
    gw = _C.zeros_like(w_d)
    gb = None if b_d is None else _C.zeros_like(b_d)
    with autograd.enable_grad():
        for i in range(0, x.shape[0], chunk):
            xc = x[i:i + chunk].detach().requires_grad_(True)
            loss = F.cross_entropy(F.linear(xc, w_d, b_d), t[i:i + chunk], weight=weight, ignore_index=ignore,
                                   reduction="sum")
            leaves = [xc, w_d] + ([b_d] if b_d is not None else [])
            grads = autograd.grad(loss, leaves)
            total = total + loss.detach()
            gx_parts.append(grads[0])
            gw = gw + grads[1]
            if gb is not None:
                gb = gb + grads[2]
    gx = _C.cat(gx_parts, 0) if gx_parts else _C.zeros_like(x)
    if mean:
        kept = t != ignore
        if weight is not None:
            wt = weight.gather(0, _C.where(kept, t, _C.zeros_like(t)))
            denom = _C.where(kept, wt, _C.zeros_like(wt)).sum()
        else:
            denom = kept.to(x.dtype).sum()
        total, gx, gw = total / denom, gx / denom, gw / denom
        gb = None if gb is None else gb / denom
    return total, gx, gw, gb


class _ChunkedLinearCrossEntropy(_Function):
    """The chunked path of linear_cross_entropy for 'mean' / 'sum', as torch's: the gradients are computed
    chunk by chunk in forward (the logits are never held whole) and backward scales them by the output
    gradient, so they are constant in the inputs (no higher-order gradients but through grad_output)."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, w: Tensor, b: Optional[Tensor], weight: Optional[Tensor], t: Tensor,
                ignore: int, chunk: int, mean: bool) -> Tensor:
        loss, gx, gw, gb = _chunked_lce_forward(x, w, b, weight, t, ignore, chunk, mean)
        ctx.save_for_backward(gx, gw, gb)
        ctx.has_bias = gb is not None
        return loss

    @staticmethod
    def backward(ctx: Any, go: Tensor) -> Tuple[Optional[Tensor], ...]:
        gx, gw, gb = ctx.saved_tensors
        return go * gx, go * gw, (go * gb if ctx.has_bias else None), None, None, None, None, None


def multi_head_attention_forward(query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
                                 in_proj_weight: Optional[Tensor], in_proj_bias: Optional[Tensor],
                                 bias_k: Optional[Tensor], bias_v: Optional[Tensor], add_zero_attn: bool,
                                 dropout_p: float, out_proj_weight: Tensor, out_proj_bias: Optional[Tensor],
                                 training: bool = True, key_padding_mask: Optional[Tensor] = None,
                                 need_weights: bool = True, attn_mask: Optional[Tensor] = None,
                                 use_separate_proj_weight: bool = False, q_proj_weight: Optional[Tensor] = None,
                                 k_proj_weight: Optional[Tensor] = None, v_proj_weight: Optional[Tensor] = None,
                                 static_k: Optional[Tensor] = None, static_v: Optional[Tensor] = None,
                                 average_attn_weights: bool = True,
                                 is_causal: bool = False) -> Tuple[Tensor, Optional[Tensor]]:
    """The forward of nn.MultiheadAttention (see cgrad.nn.modules.attention)."""
    from .modules.attention import multi_head_attention_forward as mha

    return mha(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias, bias_k, bias_v,
               add_zero_attn, dropout_p, out_proj_weight, out_proj_bias, training=training,
               key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
               use_separate_proj_weight=use_separate_proj_weight, q_proj_weight=q_proj_weight,
               k_proj_weight=k_proj_weight, v_proj_weight=v_proj_weight, static_k=static_k, static_v=static_v,
               average_attn_weights=average_attn_weights, is_causal=is_causal)
