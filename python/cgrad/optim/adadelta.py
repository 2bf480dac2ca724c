"""Adadelta (torch.optim.Adadelta): running averages of squared gradients and
squared updates."""
from __future__ import annotations

from typing import Any, Dict, Optional, Union

from .._tensor import Tensor
from ._composed import _ComposedOptimizer
from .optimizer import ParamsT, _check_lr, _check_nonnegative, _check_unsupported, _to_scalar

__all__ = ["Adadelta"]


class Adadelta(_ComposedOptimizer):
    """Adadelta, as torch.optim.Adadelta."""

    _zero_states = ('square_avg', 'acc_delta')
    _group_fallbacks = dict(foreach=None, maximize=False, differentiable=False, capturable=False)

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

    def _update(self, p: Tensor, grad: Tensor, st: Dict[str, Any], group: Dict[str, Any]) -> None:
        rho, eps = group["rho"], group["eps"]
        st["step"] += 1
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        square_avg, acc_delta = st["square_avg"], st["acc_delta"]
        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_().div_(std).mul_(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        p.add_(delta, alpha=-_to_scalar(group["lr"]))
