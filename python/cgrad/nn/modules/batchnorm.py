"""The batch-normalization layers, as torch.nn: BatchNorm1d/2d/3d (and the _NormBase they share with
the instance norms: per-channel weight / bias, running_mean / running_var / num_batches_tracked buffers)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from ... import _C
from ..._tensor import Tensor
from .. import functional as F
from .module import Module
from .utils import _check_rank, _fields_repr, _register_affine, _reset_affine

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d"]


class _NormBase(Module):
    """Common base of the batch and instance norms: parameters, running-stat buffers and their reset."""

    _version = 2
    __constants__ = ["track_running_stats", "momentum", "eps", "num_features", "affine"]
    num_features: int
    eps: float
    momentum: Optional[float]
    affine: bool
    track_running_stats: bool

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: Optional[float] = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__()
        for name, value in (("num_features", num_features), ("eps", eps), ("momentum", momentum),
                            ("affine", affine), ("track_running_stats", track_running_stats)):
            setattr(self, name, value)
        _register_affine(self, num_features, device, dtype, weight=affine, bias=affine and bias)
        tracked = track_running_stats
        for name, make in (("running_mean", _C.zeros), ("running_var", _C.ones)):
            self.register_buffer(name, make(num_features, device=device, dtype=dtype) if tracked else None)
        self.register_buffer("num_batches_tracked",
                             _C.tensor(0, dtype=_C.int64, device=device) if tracked else None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Running mean 0, running variance 1, no batch seen (only when the stats are tracked)."""
        if not self.track_running_stats:
            return
        self.running_mean.zero_()
        self.running_var.fill_(1)
        self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """The running stats reset, then the identity transform: weight 1, bias 0."""
        self.reset_running_stats()
        _reset_affine(self)

    def _check_input_dim(self, input: Tensor) -> None:
        raise NotImplementedError

    def extra_repr(self) -> str:
        return _fields_repr(self.num_features, eps=self.eps, momentum=self.momentum, affine=self.affine,
                            bias=self.bias is not None, track_running_stats=self.track_running_stats)

    def _load_from_state_dict(self, state_dict: Dict[str, Any], prefix: str, local_metadata: Dict[str, Any],
                              strict: bool, missing_keys: List[str], unexpected_keys: List[str],
                              error_msgs: List[str]) -> None:
        # checkpoints of format version < 2 predate the batch counter: keep the module's own count
        saved_version = local_metadata.get("version")
        key = prefix + "num_batches_tracked"
        if self.track_running_stats and (saved_version is None or saved_version < 2) and key not in state_dict:
            counter = self.num_batches_tracked
            state_dict[key] = counter if counter is not None else _C.tensor(0, dtype=_C.int64)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)


class _BatchNorm(_NormBase):
    """Batch norm over (N, C, *): batch statistics in training (updating the running stats), the running
    stats in eval (or batch statistics when track_running_stats=False). momentum=None: cumulative average.
    Subclasses list the input ranks they accept in _ranks."""

    _ranks: Tuple[int, ...] = ()

    def _check_input_dim(self, input: Tensor) -> None:
        _check_rank(input, self._ranks)

    def _update_weight(self) -> float:
        """The weight of this batch in the running averages. A training step with tracked stats counts
        the batch first; momentum=None then averages all batches so far equally (weight 1 / count)."""
        counter = self.num_batches_tracked
        if self.training and self.track_running_stats and counter is not None:
            counter.add_(1)
            if self.momentum is None:
                return 1.0 / float(counter)
        return 0.0 if self.momentum is None else self.momentum

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        weight = self._update_weight()
        have_stats = self.running_mean is not None or self.running_var is not None
        # eval without stored stats normalizes with the batch's own statistics
        from_batch = self.training or not have_stats
        # training without tracking must not touch the buffers (there are none, or they are frozen)
        pass_stats = self.track_running_stats or not self.training
        return F.batch_norm(input, self.running_mean if pass_stats else None,
                            self.running_var if pass_stats else None, self.weight, self.bias, from_batch,
                            weight, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch norm over (N, C) or (N, C, L)."""

    _ranks = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch norm over (N, C, H, W)."""

    _ranks = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch norm over (N, C, D, H, W)."""

    _ranks = (5,)
