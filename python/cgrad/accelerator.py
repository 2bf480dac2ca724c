"""cgrad.accelerator (torch.accelerator): the current accelerator, if any.
The CPU is not an accelerator; cgrad's one accelerator type is CUDA, there
when the CUDA kernel library found a GPU (cgrad.cuda). Without one, as in
PyTorch's CPU build, nothing is available and the calls that need one raise
RuntimeError; with one, the calls are cgrad.cuda's."""
from __future__ import annotations

from typing import Any

__all__ = ["is_available", "device_count", "current_accelerator", "current_device_index", "current_device_idx",
           "set_device_index", "set_device_idx", "current_stream", "set_stream", "synchronize"]

_NONE = "Cannot access accelerator device when none is available."


def _cuda() -> Any:
    from . import cuda
    if not cuda.is_available():
        raise RuntimeError(_NONE)
    return cuda


def is_available() -> bool:
    """Whether an accelerator (a usable CUDA device) is available."""
    from . import cuda
    return cuda.is_available()


def device_count() -> int:
    """The number of accelerator devices (CUDA devices; 0 without one)."""
    from . import cuda
    return cuda.device_count()


def current_accelerator(check_available: bool = False) -> Any:
    """The accelerator's device type, device('cuda'), or None when there is none."""
    from . import _C, cuda
    return _C.device("cuda") if cuda.is_available() else None


def current_device_index() -> int:
    """The index of the current accelerator device (cgrad.cuda.current_device())."""
    return _cuda().current_device()


def set_device_index(device: Any) -> None:
    """Make an accelerator device current (cgrad.cuda.set_device)."""
    _cuda().set_device(device)


current_device_idx = current_device_index
set_device_idx = set_device_index


def current_stream(device: Any = None) -> Any:
    """The current stream of an accelerator device (cgrad.cuda.current_stream)."""
    return _cuda().current_stream(device)


def set_stream(stream: Any) -> None:
    """Make a stream current (cgrad.cuda.set_stream)."""
    _cuda().set_stream(stream)


def synchronize(device: Any = None) -> None:
    """Wait for the work of an accelerator device (cgrad.cuda.synchronize)."""
    _cuda().synchronize(device)
