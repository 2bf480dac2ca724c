"""cgrad.autograd: gradient computation (grad, backward), grad-mode contexts,
custom Functions, gradient checks, functional higher-order API and anomaly mode."""
from __future__ import annotations

from typing import Optional, Sequence, Tuple, Union

from .. import _C
from .grad_mode import no_grad, enable_grad, set_grad_enabled, inference_mode
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .function import Function, FunctionCtx, once_differentiable
from .gradcheck import gradcheck, gradgradcheck, GradcheckError
from . import function, functional, graph  # noqa: F401  (submodules, as in torch.autograd)

_TensorOrTensors = Union["_C._TensorBase", Sequence["_C._TensorBase"]]
_OptTensors = Union["_C._TensorBase", Sequence[Optional["_C._TensorBase"]], None]


def _as_tuple(x: object, what: str, allow_none: bool = False) -> tuple:
    if isinstance(x, _C._TensorBase):
        return (x,)
    if x is None and allow_none:
        return ()
    try:
        t = tuple(x)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"{what}: expected a Tensor or a sequence of Tensors, got {type(x).__name__}") from None
    for e in t:
        if not (isinstance(e, _C._TensorBase) or (allow_none and e is None)):
            raise TypeError(f"{what}: expected Tensors, got {type(e).__name__}")
    return t


def grad(outputs: _TensorOrTensors, inputs: _TensorOrTensors, grad_outputs: _OptTensors = None,
         retain_graph: Optional[bool] = None, create_graph: bool = False, only_inputs: bool = True,
         allow_unused: Optional[bool] = None, is_grads_batched: bool = False,
         materialize_grads: bool = False) -> Tuple[Optional["_C._TensorBase"], ...]:
    """Gradients of outputs with respect to inputs (nothing is accumulated into .grad)."""
    if is_grads_batched:
        raise NotImplementedError("autograd.grad(is_grads_batched=True) is not supported by cgrad (no vmap)")
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outs = _as_tuple(outputs, "grad outputs")
    ins = _as_tuple(inputs, "grad inputs")
    gos = None
    if grad_outputs is not None:
        gos = _as_tuple(grad_outputs, "grad_outputs", allow_none=True)
        if len(gos) != len(outs):
            raise RuntimeError(f"grad requires one grad_output per output (got {len(gos)} for {len(outs)} outputs)")
    res = _C.grad(outs, ins, gos, retain_graph, create_graph, allow_unused)
    if materialize_grads:
        res = tuple(_C.zeros_like(i) if g is None else g for g, i in zip(res, ins))
    return res


def backward(tensors: _TensorOrTensors, grad_tensors: _OptTensors = None, retain_graph: Optional[bool] = None,
             create_graph: bool = False, grad_variables: _OptTensors = None,
             inputs: Optional[_TensorOrTensors] = None) -> None:
    """Accumulate gradients of `tensors` (all at once, one engine run) into the
    leaves' .grad, or only into `inputs` when given."""
    if grad_variables is not None:
        if grad_tensors is not None:
            raise RuntimeError("'grad_tensors' and 'grad_variables' (deprecated) arguments both passed to "
                               "backward(). Please only use 'grad_tensors'.")
        grad_tensors = grad_variables
    roots = _as_tuple(tensors, "backward tensors")
    grads = _as_tuple(grad_tensors, "grad_tensors", allow_none=True) if grad_tensors is not None else (None,) * len(roots)
    if len(grads) != len(roots):
        raise RuntimeError(f"grad_tensors should have the same length as tensors (got {len(grads)} and {len(roots)})")
    ins: tuple = ()
    if inputs is not None:
        ins = _as_tuple(inputs, "backward inputs")
        if len(ins) == 0:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    if retain_graph is None:
        retain_graph = create_graph
    _C._backward(roots, grads, bool(retain_graph), bool(create_graph), ins)


__all__ = ["grad", "backward", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "detect_anomaly",
           "set_detect_anomaly", "Function", "FunctionCtx", "once_differentiable", "gradcheck", "gradgradcheck",
           "GradcheckError", "functional", "graph", "function"]
