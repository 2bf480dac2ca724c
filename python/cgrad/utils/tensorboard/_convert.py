"""Turning the values the SummaryWriter methods accept (cgrad tensors, NumPy
arrays, Python and NumPy numbers) into NumPy arrays."""
from __future__ import annotations

from typing import Any

import numpy as np


def _is_cgrad_tensor(x: Any) -> bool:
    from ... import Tensor  # cgrad.Tensor; imported late so cgrad.utils stays light
    return isinstance(x, Tensor)


def make_np(x: Any, fn: str = "SummaryWriter", arg: str = "value") -> np.ndarray:
    """Return `x` as a NumPy array: a tensor is detached and copied to the CPU
    (bfloat16 becomes float16, as NumPy has no bfloat16), a number becomes a
    1-element array. `fn` and `arg` name the caller in error messages."""
    if isinstance(x, np.ndarray):
        return x
    if _is_cgrad_tensor(x):
        if x.device.type == "meta":
            raise ValueError(f"{fn}: {arg} is a tensor on the meta device, which holds no data to log")
        t = x.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        if t.dtype == _bfloat16():
            t = t.to(dtype=_float16())
        return t.numpy()
    if isinstance(x, (bool, int, float, np.number, np.bool_)):
        return np.array([x])
    raise TypeError(f"{fn}: {arg} must be a cgrad tensor, a NumPy array or a number, not {type(x).__name__}")


def _bfloat16() -> Any:
    from ... import bfloat16
    return bfloat16


def _float16() -> Any:
    from ... import float16
    return float16
