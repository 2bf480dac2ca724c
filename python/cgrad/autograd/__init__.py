"""cgrad.autograd: gradient computation (grad, backward) and grad-mode contexts."""
from __future__ import annotations

from typing import Optional, Sequence, Tuple, Union

from .. import _C
from .grad_mode import no_grad, enable_grad, set_grad_enabled, inference_mode

_TensorOrTensors = Union["_C._TensorBase", Sequence["_C._TensorBase"]]


def grad(outputs: _TensorOrTensors, inputs: _TensorOrTensors, grad_outputs: Optional[_TensorOrTensors] = None,
         retain_graph: Optional[bool] = None, create_graph: bool = False,
         allow_unused: bool = False) -> Tuple[Optional["_C._TensorBase"], ...]:
    """Gradients of outputs with respect to inputs (nothing is accumulated into .grad)."""
    return _C.grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused)


def backward(tensors: _TensorOrTensors, grad_tensors: Optional[_TensorOrTensors] = None,
             retain_graph: Optional[bool] = None, create_graph: bool = False,
             inputs: Optional[_TensorOrTensors] = None) -> None:
    """Accumulate gradients of `tensors` into the leaves' .grad."""
    if isinstance(tensors, _C._TensorBase):
        tensors = [tensors]
        grad_tensors = [grad_tensors] if grad_tensors is not None else None
    grads = list(grad_tensors) if grad_tensors is not None else [None] * len(tensors)
    for t, g in zip(tensors, grads):
        t.backward(g, retain_graph=True if retain_graph is None and len(tensors) > 1 else retain_graph,
                   create_graph=create_graph, inputs=inputs)


class detect_anomaly:
    """Context manager: a NaN produced by a backward raises, naming the node."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan

    def __enter__(self) -> None:
        self.prev = _C._set_anomaly_enabled(self.check_nan)

    def __exit__(self, *exc: object) -> None:
        _C._set_anomaly_enabled(self.prev)


def set_detect_anomaly(mode: bool) -> None:
    _C._set_anomaly_enabled(mode)


__all__ = ["grad", "backward", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "detect_anomaly"]
