"""cgrad.accelerator (torch.accelerator): the current accelerator, if any.
The CPU is not an accelerator and this build has none, so, as in PyTorch's
CPU build, nothing is available and the calls that need one raise
RuntimeError."""
from __future__ import annotations

from typing import Any

__all__ = ["is_available", "device_count", "current_accelerator", "current_device_index", "current_device_idx",
           "set_device_index", "set_device_idx", "current_stream", "set_stream", "synchronize"]

_NONE = "Cannot access accelerator device when none is available."


def is_available() -> bool:
    """Whether an accelerator is available: False."""
    return False


def device_count() -> int:
    """The number of accelerator devices: 0."""
    return 0


def current_accelerator(check_available: bool = False) -> Any:
    """The accelerator's device type: None (there is none)."""
    return None


def _none(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError(_NONE)


current_device_index = current_device_idx = set_device_index = set_device_idx = _none
current_stream = set_stream = synchronize = _none
