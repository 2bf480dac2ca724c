"""The linear layers, as torch.nn: Identity, Linear, Bilinear, LazyLinear, and
NonDynamicallyQuantizableLinear (the Linear subclass of MultiheadAttention.out_proj)."""
from __future__ import annotations

import math
from typing import Any

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from .. import functional as F
from .. import init
from ..parameter import UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module
from .utils import _fan_in_uniform_, _fields_repr, _register_affine

__all__ = ["Identity", "Linear", "Bilinear", "LazyLinear", "NonDynamicallyQuantizableLinear"]


class Identity(Module):
    """Returns its input; constructor arguments are ignored (as in torch)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """y = x W^T + b, W (out_features, in_features), b (out_features)."""

    __constants__ = ["in_features", "out_features"]
    in_features: int
    out_features: int
    weight: Tensor

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        _register_affine(self, (out_features, in_features), device, dtype, weight=True)
        _register_affine(self, out_features, device, dtype, bias=bias)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """torch's default: kaiming_uniform_(a=sqrt(5)) weight, uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)) bias."""
        _fan_in_uniform_(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return _fields_repr(in_features=self.in_features, out_features=self.out_features, bias=self.bias is not None)


class NonDynamicallyQuantizableLinear(Linear):
    """The Linear type of MultiheadAttention.out_proj (torch's name, shown in the repr; a Linear in every way)."""


class Bilinear(Module):
    """y = x1^T A x2 + b, A (out_features, in1_features, in2_features)."""

    __constants__ = ["in1_features", "in2_features", "out_features"]

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        _register_affine(self, (out_features, in1_features, in2_features), device, dtype, weight=True)
        _register_affine(self, out_features, device, dtype, bias=bias)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Weight and bias uniform in (-1/sqrt(in1_features), 1/sqrt(in1_features)), as torch."""
        limit = 1 / math.sqrt(self.weight.size(1))
        for param in (self.weight, self.bias):
            if param is not None:
                init.uniform_(param, -limit, limit)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return _fields_repr(in1_features=self.in1_features, in2_features=self.in2_features,
                            out_features=self.out_features, bias=self.bias is not None)


class LazyLinear(LazyModuleMixin, Linear):
    """A Linear whose in_features is inferred from the first input; it then becomes a Linear."""

    cls_to_become = Linear  # type: ignore[assignment]
    weight: UninitializedParameter  # type: ignore[assignment]
    bias: UninitializedParameter  # type: ignore[assignment]

    def __init__(self, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        # bias is hardcoded to False to avoid creating a tensor that will be overwritten right away
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        """Materialize weight (out_features, input.shape[-1]) and bias, then initialize them like Linear."""
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()

