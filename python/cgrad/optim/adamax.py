"""Adamax (torch.optim.Adamax): Adam with the infinity norm of past gradients."""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple, Union

from .. import _C
from .._tensor import Tensor
from ._composed import _ComposedOptimizer
from .optimizer import ParamsT, _check_betas, _check_lr, _check_nonnegative, _check_unsupported, _to_scalar

__all__ = ["Adamax"]


class Adamax(_ComposedOptimizer):
    """Adamax, as torch.optim.Adamax."""

    _zero_states = ('exp_avg', 'exp_inf')
    _group_fallbacks = dict(foreach=None, maximize=False, differentiable=False, capturable=False)

    def __init__(self, params: ParamsT, lr: Union[float, Tensor] = 2e-3, betas: Tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, foreach: Optional[bool] = None, *,
                 maximize: bool = False, differentiable: bool = False, capturable: bool = False) -> None:
        _check_lr(lr)
        _check_nonnegative((("epsilon value", eps),))
        _check_betas(betas)
        _check_nonnegative((("weight_decay value", weight_decay),))
        _check_unsupported("Adamax", differentiable=differentiable, capturable=capturable)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, capturable=capturable))

    def _update(self, p: Tensor, grad: Tensor, st: Dict[str, Any], group: Dict[str, Any]) -> None:
        beta1, beta2 = group["betas"]
        st["step"] += 1
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        st["exp_avg"].lerp_(grad, 1 - beta1)
        exp_inf = st["exp_inf"]
        _C.maximum(exp_inf.mul_(beta2), grad.abs().add_(group["eps"]), out=exp_inf)
        clr = _to_scalar(group["lr"]) / (1 - beta1 ** st["step"].item())
        p.addcdiv_(st["exp_avg"], exp_inf, value=-clr)
