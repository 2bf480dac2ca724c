"""The instance-normalization layers, as torch.nn: InstanceNorm1d/2d/3d (statistics per sample and
channel over the spatial dims; no affine parameters and no running stats by default) and their Lazy* forms
(num_features inferred from input.size(1); affine and tracked running stats by default, as in torch)."""
from __future__ import annotations

import warnings
from typing import Any, Dict, List

from ..._tensor import Tensor
from .. import functional as F
from .batchnorm import _LazyNormBase, _NormBase
from .utils import _check_rank

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
           "LazyInstanceNorm3d"]


class _InstanceNorm(_NormBase):
    """Common base: the batched / unbatched input check and the call of F.instance_norm."""

    _no_batch_dim = 0

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device=device, dtype=dtype,
                         bias=bias)

    def _check_input_dim(self, input: Tensor) -> None:
        unbatched = self._no_batch_dim
        _check_rank(input, (unbatched, unbatched + 1))

    def _get_no_batch_dim(self) -> int:
        return self._no_batch_dim

    def _apply_instance_norm(self, input: Tensor) -> Tensor:
        batch_stats = self.training or not self.track_running_stats
        momentum = 0.0 if self.momentum is None else self.momentum
        return F.instance_norm(input, running_mean=self.running_mean, running_var=self.running_var,
                               weight=self.weight, bias=self.bias, use_input_stats=batch_stats,
                               momentum=momentum, eps=self.eps)

    def _handle_no_batch_input(self, input: Tensor) -> Tensor:
        """An unbatched sample goes through as a batch of one."""
        batched = input.unsqueeze(0)
        return self._apply_instance_norm(batched).squeeze(0)

    def _load_from_state_dict(self, state_dict: Dict[str, Any], prefix: str, local_metadata: Dict[str, Any],
                              strict: bool, missing_keys: List[str], unexpected_keys: List[str],
                              error_msgs: List[str]) -> None:
        old_checkpoint = local_metadata.get("version") is None
        if old_checkpoint and not self.track_running_stats:
            keys = [key for key in (prefix + "running_mean", prefix + "running_var") if key in state_dict]
            if keys:
                klass = self.__class__.__name__
                error_msgs.append(
                    "Unexpected running stats buffer(s) {names} for {klass} with track_running_stats=False. If "
                    "state_dict is a checkpoint saved before 0.4.0, this may be expected because {klass} does not "
                    "track running stats by default since 0.4.0. Please remove these keys from state_dict. If the "
                    "running stats are actually needed, instead set track_running_stats=True in {klass} to enable "
                    "them. See the documentation of {klass} for details."
                    .format(names=" and ".join(f'"{k}"' for k in keys), klass=klass))
                for key in keys:
                    state_dict.pop(key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        unbatched = input.dim() == self._no_batch_dim
        channel_dim = 0 if unbatched else 1
        channels = input.size(channel_dim)
        if channels != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={channel_dim} to match num_features"
                                 f" ({self.num_features}), but got: {channels}.")
            warnings.warn(f"input's size at dim={channel_dim} does not match num_features. You can silence this "
                          "warning by not passing in num_features, which is not used because affine=False",
                          stacklevel=2)
        return self._handle_no_batch_input(input) if unbatched else self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    """Instance norm over (N, C, L) or (C, L)."""

    _no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    """Instance norm over (N, C, H, W) or (C, H, W)."""

    _no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    """Instance norm over (N, C, D, H, W) or (C, D, H, W)."""

    _no_batch_dim = 4


class LazyInstanceNorm1d(_LazyNormBase, _InstanceNorm):
    """An InstanceNorm1d whose num_features is inferred from input.size(1); it then becomes an InstanceNorm1d."""

    cls_to_become = InstanceNorm1d
    _no_batch_dim = InstanceNorm1d._no_batch_dim


class LazyInstanceNorm2d(_LazyNormBase, _InstanceNorm):
    """An InstanceNorm2d whose num_features is inferred from input.size(1); it then becomes an InstanceNorm2d."""

    cls_to_become = InstanceNorm2d
    _no_batch_dim = InstanceNorm2d._no_batch_dim


class LazyInstanceNorm3d(_LazyNormBase, _InstanceNorm):
    """An InstanceNorm3d whose num_features is inferred from input.size(1); it then becomes an InstanceNorm3d."""

    cls_to_become = InstanceNorm3d
    _no_batch_dim = InstanceNorm3d._no_batch_dim
