"""Anomaly detection: with it on, a backward that produces NaN raises a
RuntimeError naming the node ("Function 'MulBackward0' returned nan values in
its 0th output."). The flag lives in the engine (thread-local)."""
from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

from .. import _C

__all__ = ["detect_anomaly", "set_detect_anomaly"]

F = TypeVar("F", bound=Callable[..., Any])


class detect_anomaly:
    """Context manager / decorator enabling anomaly detection inside its block."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan

    def __enter__(self) -> None:
        self.prev = _C._set_anomaly_enabled(self.check_nan)

    def __exit__(self, *exc: object) -> None:
        _C._set_anomaly_enabled(self.prev)

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with detect_anomaly(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper  # type: ignore[return-value]


class set_detect_anomaly:
    """Turn anomaly detection on or off; as a context manager it restores the
    previous state on exit."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = _C._set_anomaly_enabled(bool(mode) and check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _C._set_anomaly_enabled(self.prev)
