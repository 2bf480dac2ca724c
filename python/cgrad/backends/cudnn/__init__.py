"""cgrad.backends.cudnn (torch.backends.cudnn): cuDNN settings. Not built in:
`is_available()` is False and `version()` None; the flags keep PyTorch's
defaults and take bools only (RuntimeError otherwise, as PyTorch), so scripts
that set `benchmark` or `deterministic` run unchanged."""
from __future__ import annotations

import sys
import types
from typing import Any, Optional

__all__ = ["is_available", "version", "enabled", "benchmark", "deterministic", "allow_tf32", "benchmark_limit"]


def is_available() -> bool:
    """Whether cuDNN can be used: False."""
    return False


def version() -> Optional[int]:
    """The cuDNN version: None (not built in)."""
    return None


class _CudnnModule(types.ModuleType):
    """Module type whose flags are checked on assignment."""

    _FLAGS = {"enabled": ("set_enabled_cudnn", True), "benchmark": ("set_benchmark_cudnn", False),
              "deterministic": ("set_deterministic_cudnn", False), "allow_tf32": ("set_cudnn_allow_tf32", True)}

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self._FLAGS and not isinstance(value, bool):
            raise RuntimeError(f"{self._FLAGS[name][0]} expects a bool, but got {type(value).__name__}")
        super().__setattr__(name, value)


enabled = True
benchmark = False
deterministic = False
allow_tf32 = True
benchmark_limit = 10
sys.modules[__name__].__class__ = _CudnnModule
