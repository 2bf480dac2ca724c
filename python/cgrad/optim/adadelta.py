"""Adadelta (torch.optim.Adadelta): running averages of squared gradients and
squared updates. One fused C call (cgrad._C._adadelta_step) per parameter
group; cgrad has neither complex tensors nor differentiable=True, the cases
PyTorch's single-tensor loop treats apart, so every step takes it."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Union

from .. import _C
from .._tensor import Tensor
from .optimizer import _ZeroStateOptimizer, ParamsT, _check_lr, _check_nonnegative, _check_unsupported

__all__ = ["Adadelta"]


class Adadelta(_ZeroStateOptimizer):
    """Adadelta, as torch.optim.Adadelta."""

    _group_fallbacks = dict(foreach=None, maximize=False, differentiable=False, capturable=False)
    _zero_states = ('square_avg', 'acc_delta')

    def __init__(self, params: ParamsT, lr: Union[float, Tensor] = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: Optional[bool] = None, *, capturable: bool = False,
                 maximize: bool = False, differentiable: bool = False) -> None:
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check_nonnegative((("epsilon value", eps), ("weight_decay value", weight_decay)))
        _check_unsupported("Adadelta", capturable=capturable, differentiable=differentiable)
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      capturable=capturable, foreach=foreach, differentiable=differentiable))

    def _group_step(self, group: Dict[str, Any], params: List[Tensor], grads: List[Tensor]) -> None:
        states = self._states(params, group, "square_avg")
        _C._adadelta_step(params, grads, [s["square_avg"] for s in states], [s["acc_delta"] for s in states],
                          [s["step"] for s in states], group["lr"], group["rho"], group["eps"],
                          group["weight_decay"], group["maximize"])
