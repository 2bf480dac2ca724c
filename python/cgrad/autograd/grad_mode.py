"""Grad-mode context managers (thread-local in the engine): no_grad,
enable_grad, set_grad_enabled, inference_mode; usable as decorators."""
from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

from .. import _C

F = TypeVar("F", bound=Callable[..., Any])


class _GradModeContext:
    _enabled: bool = False

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.__class__():
                return fn(*args, **kwargs)
        return wrapper  # type: ignore[return-value]

    def __enter__(self) -> None:
        self.prev = _C._set_grad_enabled(self._enabled)

    def __exit__(self, *exc: object) -> None:
        _C._set_grad_enabled(self.prev)


class no_grad(_GradModeContext):
    """Disable gradient recording inside the block."""
    _enabled = False


class enable_grad(_GradModeContext):
    """Enable gradient recording inside the block."""
    _enabled = True


class set_grad_enabled:
    """Set grad mode to `mode`; as a function call it takes effect immediately."""

    def __init__(self, mode: bool) -> None:
        self.prev = _C._set_grad_enabled(mode)
        self.mode = mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _C._set_grad_enabled(self.prev)


class inference_mode(_GradModeContext):
    """Like no_grad, for inference."""

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with inference_mode(self.mode):
                return fn(*args, **kwargs)
        return wrapper  # type: ignore[return-value]

    def __enter__(self) -> None:
        self.prev = _C._set_inference_mode(self.mode)

    def __exit__(self, *exc: object) -> None:
        _C._set_inference_mode(self.prev)
