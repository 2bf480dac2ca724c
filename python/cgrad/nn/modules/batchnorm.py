"""The batch-normalization layers, as torch.nn: BatchNorm1d/2d/3d, their Lazy* forms (num_features inferred
from the first input), SyncBatchNorm (and the _NormBase / _LazyNormBase they share with the instance norms:
per-channel weight / bias, running_mean / running_var / num_batches_tracked buffers)."""
from __future__ import annotations

import sys
from typing import Any, Dict, List, Optional, Tuple

from ... import _C
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..parameter import UninitializedBuffer, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module
from .utils import _check_rank, _fields_repr, _register_affine, _reset_affine

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
           "SyncBatchNorm"]


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


class _LazyNormBase(LazyModuleMixin, _NormBase):
    """Common base of the lazy batch / instance norms: weight, bias, running_mean and running_var stay
    uninitialized until the first input gives num_features (input.size(1))."""

    weight: UninitializedParameter  # type: ignore[assignment]
    bias: UninitializedParameter  # type: ignore[assignment]

    def __init__(self, eps: float = 1e-5, momentum: Optional[float] = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        # built without parameters or buffers, then given uninitialized ones
        super().__init__(0, eps, momentum, False, False, device=device, dtype=dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = _C.tensor(0, dtype=_C.int64, device=device)

    def reset_parameters(self) -> None:
        """The plain class's reset, once the parameters and buffers are materialized."""
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:  # type: ignore[override]
        """num_features = input.shape[1]; materialize weight, bias and the running stats with that size."""
        if not self.has_uninitialized_params():
            return
        with no_grad():
            self.num_features = input.shape[1]
            size = (self.num_features,)
            if self.affine:
                self.weight.materialize(size)
                if self.bias is not None:
                    self.bias.materialize(size)
            if self.track_running_stats:
                self.running_mean.materialize(size)
                self.running_var.materialize(size)
            self.reset_parameters()


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


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    """A BatchNorm1d whose num_features is inferred from the first input; it then becomes a BatchNorm1d."""

    cls_to_become = BatchNorm1d
    _ranks = BatchNorm1d._ranks


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    """A BatchNorm2d whose num_features is inferred from the first input; it then becomes a BatchNorm2d."""

    cls_to_become = BatchNorm2d
    _ranks = BatchNorm2d._ranks


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    """A BatchNorm3d whose num_features is inferred from the first input; it then becomes a BatchNorm3d."""

    cls_to_become = BatchNorm3d
    _ranks = BatchNorm3d._ranks


def _distributed_initialized() -> bool:
    """Whether a default process group is initialized (cgrad.distributed, when that package exists: one
    that was never imported cannot have initialized a group)."""
    distributed = sys.modules.get(__name__.split(".")[0] + ".distributed")
    if distributed is None:
        return False
    available = getattr(distributed, "is_available", lambda: False)
    initialized = getattr(distributed, "is_initialized", lambda: False)
    return bool(available() and initialized())


class SyncBatchNorm(_BatchNorm):
    """Batch norm over (N, C, *) whose training statistics are synchronized across the processes of
    process_group. With no initialized process group (cgrad has no torch.distributed), training and eval
    behave exactly as BatchNorm, as in torch."""

    process_group: Any

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: Optional[float] = 0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group: Any = None, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device=device, dtype=dtype,
                         bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input: Tensor) -> None:
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        if self.training and _distributed_initialized():
            if input.device.type not in ("cuda", "hpu", "xpu", "privateuseone"):
                raise ValueError("SyncBatchNorm expected input tensor to be on GPU or XPU or privateuseone")
            raise NotImplementedError("SyncBatchNorm: synchronizing batch statistics across processes")
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """Returns module with every batch-norm layer (any _BatchNorm, itself included) replaced by a
        SyncBatchNorm sharing its parameters, running stats, training flag and qconfig."""
        output = module
        if isinstance(module, _BatchNorm):
            output = SyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                                   module.track_running_stats, process_group, bias=module.bias is not None)
            if module.affine:
                with no_grad():
                    output.weight = module.weight
                    output.bias = module.bias
            output.running_mean = module.running_mean
            output.running_var = module.running_var
            output.num_batches_tracked = module.num_batches_tracked
            output.training = module.training
            if hasattr(module, "qconfig"):
                output.qconfig = module.qconfig
        for name, child in module.named_children():
            output.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return output
