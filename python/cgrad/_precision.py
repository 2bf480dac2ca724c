"""set_float32_matmul_precision / get_float32_matmul_precision (torch's):
the internal precision float32 matrix products may use. cgrad's CPU products
always run in full float32 ("highest" and the others compute alike); the
setting is kept, validated as PyTorch does, and read by
backends.cuda.matmul.allow_tf32."""
from __future__ import annotations

import warnings

__all__ = ["set_float32_matmul_precision", "get_float32_matmul_precision"]

_PRECISIONS = ("highest", "high", "medium")
_current = "highest"


def set_float32_matmul_precision(precision: str) -> None:
    """Set the float32 matmul precision: "highest", "high" or "medium"; anything else warns and
    changes nothing (as PyTorch)."""
    global _current
    if precision not in _PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _current = precision


def get_float32_matmul_precision() -> str:
    """The float32 matmul precision last set ("highest" by default)."""
    return _current
