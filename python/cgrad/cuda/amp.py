"""cgrad.cuda.amp (torch.cuda.amp): the deprecated CUDA spellings of
cgrad.amp.GradScaler("cuda") and cgrad.autocast("cuda"). Without a CUDA
backend both warn and disable themselves, as in PyTorch's CPU build."""
from __future__ import annotations

import warnings
from typing import Any

from ..amp.autocast_mode import autocast as _autocast
from ..amp.grad_scaler import GradScaler as _GradScaler

__all__ = ["GradScaler", "autocast"]


class GradScaler(_GradScaler):
    """torch.cuda.amp.GradScaler(...): GradScaler("cuda", ...)."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


class autocast(_autocast):
    """torch.cuda.amp.autocast(...): autocast("cuda", ...)."""

    def __init__(self, enabled: bool = True, dtype: Any = None, cache_enabled: bool = True) -> None:
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        kwargs = {"enabled": enabled, "cache_enabled": cache_enabled}
        if dtype is not None:
            kwargs["dtype"] = dtype
        super().__init__("cuda", **kwargs)
