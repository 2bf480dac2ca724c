"""cgrad.finfo / cgrad.iinfo: the numerical properties of floating and integer
dtypes (torch.finfo / torch.iinfo), with PyTorch's attributes, repr and errors."""
from __future__ import annotations

from typing import Optional

import math

from . import _C

__all__ = ["finfo", "iinfo"]

# bits, eps, max, tiny (= smallest_normal); NumPy has no bfloat16
_BFLOAT16 = (16, 2.0 ** -7, float.fromhex("0x1.fep127"), 2.0 ** -126)


def _name(dtype: _C.dtype) -> str:
    return str(dtype).split(".")[-1]


class finfo:
    """Machine limits of a floating dtype (the default dtype when none is given)."""

    bits: int
    eps: float
    max: float
    min: float
    tiny: float
    smallest_normal: float
    resolution: float
    dtype: str

    def __init__(self, type: Optional[_C.dtype] = None) -> None:
        dtype = _C.get_default_dtype() if type is None else type
        if not isinstance(dtype, _C.dtype):
            raise TypeError(f"finfo(): argument 'type' must be cgrad.dtype, not {dtype.__class__.__name__}")
        if not dtype.is_floating_point:
            raise TypeError("cgrad.finfo() requires a floating point input type. Use cgrad.iinfo to handle "
                            "'cgrad.finfo'")
        name = _name(dtype)
        if name == "bfloat16":
            self.bits, self.eps, self.max, self.tiny = _BFLOAT16
        else:
            import numpy as np  # on first use: import cgrad does not load NumPy
            info = np.finfo(getattr(np, name))
            self.bits, self.eps, self.max, self.tiny = info.bits, float(info.eps), float(info.max), \
                float(info.smallest_normal)
        # the power of ten of the decimal digits the dtype keeps, as PyTorch gives it
        self.resolution = float(f"1e-{math.floor(-math.log10(self.eps))}")
        self.min, self.smallest_normal, self.dtype = -self.max, self.tiny, name

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Machine limits of an integer dtype."""

    bits: int
    max: int
    min: int
    dtype: str

    def __init__(self, type: _C.dtype) -> None:
        if not isinstance(type, _C.dtype):
            raise TypeError(f"iinfo(): argument 'type' must be cgrad.dtype, not {type.__class__.__name__}")
        name = _name(type)
        if name == "bool":
            raise TypeError("cgrad.bool is not supported by cgrad.iinfo")
        if type.is_floating_point:
            raise TypeError("cgrad.iinfo() requires an integer input type. Use cgrad.finfo to handle "
                            "'cgrad.iinfo'")
        import numpy as np
        info = np.iinfo(getattr(np, name))
        self.bits, self.max, self.min, self.dtype = info.bits, int(info.max), int(info.min), name

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
