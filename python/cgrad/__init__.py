"""cgrad: a deep-learning framework whose engine is written in C, under a
PyTorch-style API. `import cgrad as torch` runs ordinary tensor and autograd
code; see README.md for what is available."""
from __future__ import annotations

from . import _C
from ._C import (  # dtypes, devices, errors
    bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
    dtype, device, Size, DtypeMismatch, DeviceMismatch, ShapeMismatch,
)
from ._C import (  # factories and state
    tensor, zeros, ones, empty, full, zeros_like, ones_like, empty_like, full_like, arange,
    manual_seed, initial_seed, is_grad_enabled, get_default_dtype, set_default_dtype,
    set_num_threads, get_num_threads, result_type, promote_types, is_inference_mode_enabled,
)
from ._C import neg, exp, add, sub, mul, div, eq, ne, lt, le, gt, ge, sum  # ops bound so far
from ._tensor import Tensor
from .autograd.grad_mode import no_grad, enable_grad, set_grad_enabled, inference_mode
from . import autograd

half = float16
float = float32  # noqa: A001 - PyTorch's aliases
double = float64
short = int16
int = int32  # noqa: A001
long = int64

__version__ = "0.1.0"


def is_tensor(obj: object) -> bool:
    """True when obj is a cgrad Tensor."""
    return isinstance(obj, Tensor)
