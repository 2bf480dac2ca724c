"""The base of the optimizers whose update is composed of tensor ops
(Adafactor): each parameter's step runs PyTorch's single-tensor algorithm op
for op, under no_grad, so trajectories match torch.optim's in float32 and
float64. (The elementwise optimizers, SGD ... ASGD, are one fused C call per
group instead.)"""
from __future__ import annotations

from typing import Any, Dict, List

from ..autograd.grad_mode import no_grad
from .._tensor import Tensor
from .optimizer import _ZeroStateOptimizer, _scalar_state as _scalar

__all__: List[str] = []


class _ComposedOptimizer(_ZeroStateOptimizer):
    """An optimizer with a per-parameter `_update(p, grad, state, group)` written in tensor ops."""

    _state_key = "step"

    def _group_step(self, group: Dict[str, Any], params: List[Tensor], grads: List[Tensor]) -> None:
        states = self._states(params, group, self._state_key)
        with no_grad():
            for p, g, st in zip(params, grads, states):
                self._update(p, -g if group["maximize"] else g, st, group)

    def _update(self, p: Tensor, grad: Tensor, state: Dict[str, Any], group: Dict[str, Any]) -> None:
        raise NotImplementedError(f"{type(self).__name__}: _update")
