"""The base of the optimizers whose update is composed of tensor ops
(Adafactor): each parameter's step runs PyTorch's single-tensor algorithm op
for op, under no_grad, so trajectories match torch.optim's in float32 and
float64. (The elementwise optimizers, SGD ... ASGD, are one fused C call per
group instead.)"""
from __future__ import annotations

from typing import Any, Dict, List, Tuple

from .. import _C
from ..autograd.grad_mode import no_grad
from .._tensor import Tensor
from .optimizer import Optimizer, _scalar_state as _scalar

__all__: List[str] = []


class _ComposedOptimizer(Optimizer):
    """An optimizer with a per-parameter `_update(p, grad, state, group)` written in tensor ops."""

    _tensor_steps = True
    _state_key = "step"
    # the per-parameter state besides the float32 step: tensors of zeros shaped like the parameter
    _zero_states: Tuple[str, ...] = ()

    def _init_state(self, p: Tensor, group: Dict[str, Any]) -> Dict[str, Any]:
        st = self.state[p]
        st["step"] = _scalar(0.0)
        for key in self._zero_states:
            st[key] = _C.zeros_like(p)
        return st

    def _group_step(self, group: Dict[str, Any], params: List[Tensor], grads: List[Tensor]) -> None:
        states = self._states(params, group, self._state_key)
        with no_grad():
            for p, g, st in zip(params, grads, states):
                self._update(p, -g if group["maximize"] else g, st, group)

    def _update(self, p: Tensor, grad: Tensor, state: Dict[str, Any], group: Dict[str, Any]) -> None:
        raise NotImplementedError(f"{type(self).__name__}: _update")
