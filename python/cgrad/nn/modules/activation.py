"""The activation layers, as torch.nn (MultiheadAttention is defined in attention.py
and importable from here, as from torch.nn.modules.activation).
Each forward is one call into nn.functional or straight into the C function it
binds; modules with an `inplace` flag pick the in-place C function in forward."""
from __future__ import annotations

import warnings
from typing import Any, Optional

from ... import _C
from ..._tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module
from .utils import _fields_repr, _unless

__all__ = ["Threshold", "ReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh", "SiLU", "Mish", "Hardswish",
           "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink", "LeakyReLU", "LogSigmoid", "Softplus", "Softshrink",
           "PReLU", "Softsign", "Tanhshrink", "Softmin", "Softmax", "LogSoftmax", "MultiheadAttention", "RReLU",
           "Softmax2d"]

# The C functions behind nn.functional, looked up once so forward runs one C call.
_relu, _relu_ = _C.relu, _C.relu_
_relu6, _relu6_ = _C._relu6, _C._relu6_
_hardtanh, _hardtanh_ = _C._hardtanh, _C._hardtanh_
_leaky_relu, _leaky_relu_ = _C._leaky_relu, _C._leaky_relu_
_elu, _elu_ = _C._elu, _C._elu_
_celu, _celu_ = _C.celu, _C.celu_
_selu, _selu_ = _C.selu, _C.selu_
_silu, _silu_ = _C._silu, _C._silu_
_mish, _mish_ = _C._mish, _C._mish_
_hsig, _hsig_ = _C._hardsigmoid, _C._hardsigmoid_
_hswish, _hswish_ = _C._hardswish, _C._hardswish_
_sigmoid, _tanh, _gelu, _softplus = _C.sigmoid, _C.tanh, _C._gelu, _C._softplus
_softsign, _logsigmoid = _C._softsign, _C._logsigmoid


class _Inplace(Module):
    """Base of the activations with only an `inplace` flag: the class names its out-of-place and in-place
    C functions (_op, _op_) and forward picks one; the repr shows inplace=True when set, unless the class
    hides it (_repr_inplace False, as torch's Hardsigmoid / Hardswish)."""

    __constants__ = ["inplace"]
    inplace: bool
    _repr_inplace = True

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return self._op_(input) if self.inplace else self._op(input)

    def extra_repr(self) -> str:
        return _fields_repr(inplace=_unless(self.inplace, False)) if self._repr_inplace else ""


class ReLU(_Inplace):
    """max(0, x)."""

    _op, _op_ = staticmethod(_relu), staticmethod(_relu_)


class SiLU(_Inplace):
    """x * sigmoid(x)."""

    _op, _op_ = staticmethod(_silu), staticmethod(_silu_)


class Mish(_Inplace):
    """x * tanh(softplus(x))."""

    _op, _op_ = staticmethod(_mish), staticmethod(_mish_)


class SELU(_Inplace):
    """scale * ELU(x, alpha) with the self-normalizing constants."""

    _op, _op_ = staticmethod(_selu), staticmethod(_selu_)


class Hardsigmoid(_Inplace):
    """clamp(x / 6 + 1/2, 0, 1)."""

    _op, _op_ = staticmethod(_hsig), staticmethod(_hsig_)
    _repr_inplace = False


class Hardswish(_Inplace):
    """x * hardsigmoid(x)."""

    _op, _op_ = staticmethod(_hswish), staticmethod(_hswish_)
    _repr_inplace = False


class _Scaled(Module):
    """Base of ELU and CELU: one `alpha` and the inplace flag; forward passes alpha to the C function
    the class names (_op / _op_)."""

    __constants__ = ["alpha", "inplace"]
    alpha: float
    inplace: bool

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input: Tensor) -> Tensor:
        return (self._op_ if self.inplace else self._op)(input, self.alpha)

    def extra_repr(self) -> str:
        return _fields_repr(alpha=self.alpha, inplace=_unless(self.inplace, False))


class ELU(_Scaled):
    """x if x > 0 else alpha * (exp(x) - 1)."""

    _op, _op_ = staticmethod(_elu), staticmethod(_elu_)


class CELU(_Scaled):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""

    _op, _op_ = staticmethod(_celu), staticmethod(_celu_)


class Threshold(Module):
    """y = x if x > threshold else value."""

    __constants__ = ["threshold", "value", "inplace"]
    threshold: float
    value: float
    inplace: bool

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.threshold(input, self.threshold, self.value, inplace=self.inplace)

    def extra_repr(self) -> str:
        return _fields_repr(threshold=self.threshold, value=self.value, inplace=_unless(self.inplace, False))


class Hardtanh(Module):
    """x clamped to [min_val, max_val] (min_value / max_value: deprecated spellings)."""

    __constants__ = ["min_val", "max_val", "inplace"]
    min_val: float
    max_val: float
    inplace: bool

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: Optional[float] = None, max_value: Optional[float] = None) -> None:
        super().__init__()
        bounds = {"min_val": min_val, "max_val": max_val}
        for old, value in (("min_value", min_value), ("max_value", max_value)):
            if value is not None:
                new = old.replace("value", "val")
                warnings.warn(f"keyword argument `{old}` is deprecated and renamed to `{new}`", FutureWarning,
                              stacklevel=2)
                bounds[new] = value
        low, high = bounds["min_val"], bounds["max_val"]
        if not low < high:
            raise AssertionError(f"max_val ({high}) must be greater than min_val ({low})")
        self.min_val, self.max_val, self.inplace = low, high, inplace

    def forward(self, input: Tensor) -> Tensor:
        return (_hardtanh_ if self.inplace else _hardtanh)(input, self.min_val, self.max_val)

    def extra_repr(self) -> str:
        return _fields_repr(min_val=self.min_val, max_val=self.max_val, inplace=_unless(self.inplace, False))


class ReLU6(Hardtanh):
    """min(max(0, x), 6)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def forward(self, input: Tensor) -> Tensor:
        return _relu6_(input) if self.inplace else _relu6(input)

    def extra_repr(self) -> str:
        return _fields_repr(inplace=_unless(self.inplace, False))


class Sigmoid(Module):
    """1 / (1 + exp(-x))."""

    def forward(self, input: Tensor) -> Tensor:
        return _sigmoid(input)


class Tanh(Module):
    """tanh(x)."""

    def forward(self, input: Tensor) -> Tensor:
        return _tanh(input)


class GLU(Module):
    """a * sigmoid(b), a and b the two halves of the input along dim."""

    __constants__ = ["dim"]
    dim: int

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.glu(input, dim=self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class GELU(Module):
    """x * Phi(x); approximate='tanh' uses the tanh approximation."""

    __constants__ = ["approximate"]
    approximate: str

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate: str = approximate

    def forward(self, input: Tensor) -> Tensor:
        return _gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return _fields_repr(approximate=repr(self.approximate))


class Hardshrink(Module):
    """x if |x| > lambd else 0."""

    __constants__ = ["lambd"]
    lambd: float

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return F.hardshrink(input, lambd=self.lambd)

    def extra_repr(self) -> str:
        return _fields_repr(self.lambd)


class LeakyReLU(Module):
    """x if x >= 0 else negative_slope * x."""

    __constants__ = ["inplace", "negative_slope"]
    inplace: bool
    negative_slope: float

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input: Tensor) -> Tensor:
        return (_leaky_relu_ if self.inplace else _leaky_relu)(input, self.negative_slope)

    def extra_repr(self) -> str:
        return _fields_repr(negative_slope=self.negative_slope, inplace=_unless(self.inplace, False))


class LogSigmoid(Module):
    """log(sigmoid(x))."""

    def forward(self, input: Tensor) -> Tensor:
        return _logsigmoid(input)


class Softplus(Module):
    """log(1 + exp(beta * x)) / beta, linear above threshold."""

    __constants__ = ["beta", "threshold"]
    beta: float
    threshold: float

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input: Tensor) -> Tensor:
        return _softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return _fields_repr(beta=self.beta, threshold=self.threshold)


class Softshrink(Module):
    """x - lambd if x > lambd, x + lambd if x < -lambd, else 0."""

    __constants__ = ["lambd"]
    lambd: float

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return F.softshrink(input, lambd=self.lambd)

    def extra_repr(self) -> str:
        return _fields_repr(self.lambd)


class PReLU(Module):
    """x if x >= 0 else a * x, a learnt: one weight, or one per channel (dim 1); initialised to `init`."""

    __constants__ = ["num_parameters"]
    num_parameters: int

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None, dtype: Any = None) -> None:
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(_C.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:
        return F.prelu(input, weight=self.weight)

    def extra_repr(self) -> str:
        return _fields_repr(num_parameters=self.num_parameters)


class Softsign(Module):
    """x / (1 + |x|)."""

    def forward(self, input: Tensor) -> Tensor:
        return _softsign(input)


class Tanhshrink(Module):
    """x - tanh(x)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.tanhshrink(input=input)


class _SoftmaxFamily(Module):
    """What Softmin, Softmax and LogSoftmax share: the `dim` they normalize along (dim=None: torch's
    deprecated implicit choice, with its warning), its repr and old pickles without it."""

    __constants__ = ["dim"]
    dim: Optional[int]

    def __init__(self, dim: Optional[int] = None) -> None:
        super().__init__()
        self.dim = dim

    def __setstate__(self, state: Any) -> None:
        super().__setstate__(state)
        self.__dict__.setdefault("dim", None)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmin(_SoftmaxFamily):
    """softmax(-x) along dim."""

    def forward(self, input: Tensor) -> Tensor:
        return F.softmin(input, dim=self.dim, _stacklevel=5)


class Softmax(_SoftmaxFamily):
    """exp(x) / sum(exp(x)) along dim."""

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, dim=self.dim, _stacklevel=5)


class LogSoftmax(_SoftmaxFamily):
    """log(softmax(x)) along dim."""

    def forward(self, input: Tensor) -> Tensor:
        return F.log_softmax(input, dim=self.dim, _stacklevel=5)


class RReLU(Module):
    """Randomized leaky ReLU: negative slopes uniform in [lower, upper] in training, their mean in eval."""

    __constants__ = ["lower", "upper", "inplace"]
    lower: float
    upper: float
    inplace: bool

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False) -> None:
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return _fields_repr(lower=self.lower, upper=self.upper, inplace=_unless(self.inplace, False))


class Softmax2d(Module):
    """Softmax over the channels (dim -3) of (N, C, H, W) or (C, H, W)."""

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3, _stacklevel=5)


from .attention import MultiheadAttention  # noqa: E402  (torch.nn.modules.activation.MultiheadAttention)
