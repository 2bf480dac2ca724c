"""set_default_device / get_default_device and set_default_dtype /
get_default_dtype with PyTorch's semantics and argument checks on its CPU
build. The default device is where the factories (tensor, zeros, ones,
empty, full, arange, linspace, logspace, eye, rand, randn, randint,
randperm) put a tensor made without device=: 'cpu' or 'meta'. A device this
build has no backend for ('cuda', 'cuda:1', 'mps', 'xla', ...) is accepted,
as by PyTorch's CPU build, and each such factory call then raises what
PyTorch raises (AssertionError "Torch not compiled with CUDA enabled" for
cuda, RuntimeError for the others); get_default_device raises it too (PyTorch
returns torch.device('cuda:1') there, which cgrad.device cannot represent).
The state itself lives in the extension (Note [Default device])."""
from __future__ import annotations

from typing import Any

from . import _C

__all__ = ["set_default_device", "get_default_device", "set_default_dtype", "get_default_dtype"]

# device types PyTorch's parser knows that this build has no backend for
_NO_BACKEND = ("cuda", "mps", "xpu", "xla", "hip", "mtia", "hpu", "ipu", "ve", "maia", "privateuseone", "lazy",
               "vulkan", "fpga", "opengl", "opencl", "ideep", "mkldnn")
_state: dict = {"device": "cpu", "error": None}


def _unavailable(kind: str) -> BaseException:
    if kind == "cuda":
        return AssertionError("Torch not compiled with CUDA enabled")
    return RuntimeError(f"cgrad is not linked with support for {kind} devices")


def set_default_device(device: Any) -> None:
    """Make `device` the default of the factories (torch.set_default_device); None restores 'cpu'."""
    if device is None:
        device = "cpu"
    if isinstance(device, bool) or not isinstance(device, (str, int, _C.device)):
        raise TypeError(f"set_default_device(): argument 'device' must be a cgrad.device, a str, an int or None, "
                        f"not {type(device).__name__}")
    if isinstance(device, int):
        raise RuntimeError("set_default_device: Cannot access accelerator device when none is available.")
    kind = device.type if isinstance(device, _C.device) else device.split(":", 1)[0]
    if kind in _NO_BACKEND:
        index = device.split(":", 1)[1] if ":" in device else ""
        if index and not index.isdigit():
            raise RuntimeError(f"set_default_device: invalid device string: '{device}'")
        err = _unavailable(kind)
        _C._set_default_device(None, type(err), str(err))
        _state.update(device=device, error=err)
        return
    dev = device if isinstance(device, _C.device) else _C.device(device)  # the parser's RuntimeError if unknown
    _C._set_default_device(dev)
    _state.update(device=dev, error=None)


def get_default_device() -> Any:
    """The factories' default device (torch.get_default_device)."""
    err = _state["error"]
    if err is not None:
        raise type(err)(str(err))
    return _C.device(str(_state["device"]))


def set_default_dtype(d: Any) -> None:
    """Make floating dtype `d` the default of the factories and of float data (torch.set_default_dtype)."""
    if not isinstance(d, _C.dtype):
        raise TypeError("set_default_dtype(): invalid dtype object: only floating-point types are supported as the "
                        f"default type (got {d!r})")
    _C.set_default_dtype(d)


get_default_dtype = _C.get_default_dtype
