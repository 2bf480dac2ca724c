"""set_default_device / get_default_device and set_default_dtype /
get_default_dtype with PyTorch's semantics and argument checks. The default
device is where the factories (tensor, zeros, ones, empty, full, arange,
linspace, logspace, eye, rand, randn, randint, randperm) put a tensor made
without device=: 'cpu', 'meta' or a cuda device ('cuda' without an index is
the current CUDA device at each call, as in PyTorch). A cuda device is
accepted whatever the state of CUDA, as by PyTorch: each factory then raises
what making a tensor there raises (AssertionError "Torch not compiled with
CUDA enabled" without the CUDA kernel library, RuntimeError without a GPU).
A device type this build has no backend for ('mps', 'xla', ...) is accepted
too, and each such factory call raises RuntimeError, as PyTorch's CPU build
does; get_default_device raises it too (PyTorch returns the device there).
The state itself lives in the extension (Note [Default device])."""
from __future__ import annotations

from typing import Any

from . import _C

__all__ = ["set_default_device", "get_default_device", "set_default_dtype", "get_default_dtype"]

# device types PyTorch's parser knows that this build has no backend for
_NO_BACKEND = ("mps", "xpu", "xla", "hip", "mtia", "hpu", "ipu", "ve", "maia", "privateuseone", "lazy",
               "vulkan", "fpga", "opengl", "opencl", "ideep", "mkldnn")
_state: dict = {"device": _C.device("cpu"), "error": None}


def _unavailable(kind: str) -> BaseException:
    return RuntimeError(f"cgrad is not linked with support for {kind} devices")


def set_default_device(device: Any) -> None:
    """Make `device` the default of the factories (torch.set_default_device); None restores 'cpu'."""
    if device is None:
        device = "cpu"
    if isinstance(device, bool) or not isinstance(device, (str, int, _C.device)):
        raise TypeError(f"set_default_device(): argument 'device' must be a cgrad.device, a str, an int or None, "
                        f"not {type(device).__name__}")
    if isinstance(device, int):  # the accelerator's device N: cuda:N when a GPU is usable, else RuntimeError
        device = _C.device(device)
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
    """The factories' default device (torch.get_default_device); 'cuda' without an index is resolved to the
    current CUDA device, as PyTorch does by making a tensor there (so it raises where that fails)."""
    err = _state["error"]
    if err is not None:
        raise type(err)(str(err))
    dev = _state["device"]
    if dev.type == "cuda" and dev.index is None:
        return _C.empty(0).device
    return dev


def set_default_dtype(d: Any) -> None:
    """Make floating dtype `d` the default of the factories and of float data (torch.set_default_dtype)."""
    if not isinstance(d, _C.dtype):
        raise TypeError("set_default_dtype(): invalid dtype object: only floating-point types are supported as the "
                        f"default type (got {d!r})")
    _C.set_default_dtype(d)


get_default_dtype = _C.get_default_dtype
