"""Autocast: the context manager / decorator and the state functions
(torch.autocast, torch.is_autocast_enabled, ...). The state lives in the
engine (thread-local); each op's schema says what autocast does to it
(docs/python.md, "Mixed precision")."""
from __future__ import annotations

import functools
import threading
import warnings
from typing import Any, Callable, Optional, TypeVar

from .. import _C

_F = TypeVar("_F", bound=Callable[..., Any])
_SUPPORTED = ("bfloat16", "float16")
_local = threading.local()  # nesting depth of autocast regions on this thread


def _check_device(device_type: str) -> None:
    if device_type not in ("cpu", "cuda"):
        if device_type == "meta":
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        raise RuntimeError(f"Expected one of cpu, cuda, meta device type at start of device string: {device_type}")


# Note [CUDA autocast]: PyTorch keeps an autocast state per device type, so
# autocast("cuda") changes cuda ops only, with CUDA's op lists. cgrad's engine
# keeps one thread-local state that every op consults whatever its device
# (cg_set_autocast), and the op schemas carry the CPU's policies; turning it
# on for a "cuda" region would also cast the CPU ops in it. Until the engine
# has per-device state, autocast("cuda") warns and stays off, as PyTorch's
# does where CUDA is not available.


def is_autocast_available(device_type: str) -> bool:
    """True for the device types autocast knows ("cpu"; "cuda" is known but never enabled here)."""
    return device_type in ("cpu", "cuda")


def is_autocast_enabled(device_type: Optional[str] = None) -> bool:
    """Whether autocast is on for device_type. As in PyTorch, no argument means "cuda"
    (never enabled in cgrad); pass "cpu" for the CPU state."""
    if device_type is None or device_type == "cuda":
        return False
    _check_device(device_type)
    return bool(_C._autocast_state()[0])


def get_autocast_dtype(device_type: str) -> Any:
    """The low-precision dtype autocast uses on device_type (CPU default: bfloat16)."""
    _check_device(device_type)
    return _C.float16 if device_type == "cuda" else _C._autocast_state()[1]


def set_autocast_enabled(device_type: str, enabled: bool) -> None:
    """Switch autocast on / off for this thread (device_type "cpu")."""
    _check_device(device_type)
    if device_type == "cpu":
        _C._set_autocast(bool(enabled), _C._autocast_state()[1])


def set_autocast_dtype(device_type: str, dtype: Any) -> None:
    """Set the low-precision dtype of this thread's autocast (bfloat16 or float16)."""
    _check_device(device_type)
    if device_type == "cpu":
        _C._set_autocast(bool(_C._autocast_state()[0]), dtype)


def is_autocast_cpu_enabled() -> bool:
    """Deprecated PyTorch spelling of is_autocast_enabled("cpu")."""
    return is_autocast_enabled("cpu")


def get_autocast_cpu_dtype() -> Any:
    """Deprecated PyTorch spelling of get_autocast_dtype("cpu")."""
    return get_autocast_dtype("cpu")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    """Deprecated PyTorch spelling of set_autocast_enabled("cpu", enabled)."""
    set_autocast_enabled("cpu", enabled)


def set_autocast_cpu_dtype(dtype: Any) -> None:
    """Deprecated PyTorch spelling of set_autocast_dtype("cpu", dtype)."""
    set_autocast_dtype("cpu", dtype)


def is_autocast_cache_enabled() -> bool:
    """Whether autocast caches the low-precision casts of parameters (default True)."""
    return bool(_C._is_autocast_cache_enabled())


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Switch the cast cache on / off for this thread."""
    _C._set_autocast_cache_enabled(bool(enabled))


def clear_autocast_cache() -> None:
    """Drop this thread's cached casts."""
    _C._clear_autocast_cache()


def autocast_increment_nesting() -> int:
    """Enter one autocast region; returns the new depth."""
    _local.depth = getattr(_local, "depth", 0) + 1
    return _local.depth


def autocast_decrement_nesting() -> int:
    """Leave one autocast region; returns the new depth (0: outermost region left)."""
    _local.depth = max(getattr(_local, "depth", 0) - 1, 0)
    return _local.depth


def _cast_args(policy: str, *tensors: Any) -> tuple:
    """For ops written in Python (no engine schema): the casts the schema guard
    makes for policy "lower" (to the autocast dtype) or "fp32", when autocast is
    on; floating tensors other than float64 are cast, the rest pass through."""
    enabled, low = _C._autocast_state()
    if not enabled:
        return tensors
    target = low if policy == "lower" else _C.float32
    return tuple(t.to(target) if isinstance(t, _C._TensorBase) and t.dtype.is_floating_point
                 and t.dtype not in (_C.float64, target) else t for t in tensors)


class autocast:
    """Run the ops inside in mixed precision (torch.autocast): matrix products
    and convolutions in `dtype`, the ops PyTorch keeps in float32 on the CPU in
    float32, the rest in their inputs' dtype. Nestable (the previous state is
    restored on exit), thread-local, usable as a decorator."""

    def __init__(self, device_type: str = "cpu", dtype: Optional[Any] = None, enabled: bool = True,
                 cache_enabled: Optional[bool] = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        _check_device(device_type)
        self.device = device_type
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None else bool(cache_enabled)
        if enabled and device_type == "cuda":
            from .. import cuda
            if not cuda.is_available():
                warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", stacklevel=2)
            else:  # Note [CUDA autocast]
                warnings.warn("cgrad does not implement CUDA autocast (the engine keeps one autocast state for "
                              "every device, and it is the CPU's). Disabling autocast.", stacklevel=2)
            enabled = False
        elif enabled and not any(self.fast_dtype is getattr(_C, n) for n in _SUPPORTED):
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                          "CPU Autocast only supports dtypes of cgrad.bfloat16, cgrad.float16 currently.",
                          stacklevel=2)
            enabled = False
        self._enabled = bool(enabled)

    def __enter__(self) -> "autocast":
        self.prev_cache_enabled = is_autocast_cache_enabled()
        self.prev, self.prev_fastdtype = _C._autocast_state()
        if self.device == "cpu":
            dtype = self.fast_dtype if self._enabled else self.prev_fastdtype
            _C._set_autocast(self._enabled, dtype)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> bool:
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        _C._set_autocast(bool(self.prev), self.prev_fastdtype)
        set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func: _F) -> _F:
        if not callable(func):
            raise TypeError(f"autocast()(func) requires a callable, but got {type(func).__name__}")

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return func(*args, **kwargs)
        return wrapper  # type: ignore[return-value]
