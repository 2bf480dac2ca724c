"""cgrad.autograd.graph: the autograd graph's node type. `Tensor.grad_fn` is a
Node (`_C._Node`) with name(), next_functions and, for AccumulateGrad nodes,
variable."""
from __future__ import annotations

from .. import _C

Node = _C._Node

__all__ = ["Node"]
