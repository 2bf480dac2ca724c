"""cgrad.autograd.graph: the autograd graph's node type. `Tensor.grad_fn` is a
Node (`_C._Node`; each node's class is a subclass named after it, e.g.
MulBackward0) with name(), next_functions, metadata (a dict kept with the node),
register_prehook(fn(grad_outputs)) and register_hook(fn(grad_inputs,
grad_outputs)) (Note [Node hooks] in include/cgrad.h) and, for AccumulateGrad
nodes, variable. A node has one Python object at a time: y.grad_fn is y.grad_fn."""
from __future__ import annotations

from .. import _C

Node = _C._Node

__all__ = ["Node"]
