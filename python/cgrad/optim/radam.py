"""RAdam (torch.optim.RAdam): Adam with the variance rectification term, plain
momentum while the rectification is undefined (rho_t <= 5); coupled or
decoupled weight decay."""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple, Union

from .._tensor import Tensor
from ._composed import _ComposedOptimizer
from .optimizer import ParamsT, _check_betas, _check_lr, _check_nonnegative, _check_unsupported, _to_scalar

__all__ = ["RAdam"]


class RAdam(_ComposedOptimizer):
    """RAdam, as torch.optim.RAdam."""

    _zero_states = ('exp_avg', 'exp_avg_sq')
    _group_fallbacks = dict(foreach=None, maximize=False, differentiable=False, decoupled_weight_decay=False,
                            capturable=False)

    def __init__(self, params: ParamsT, lr: Union[float, Tensor] = 1e-3, betas: Tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: Optional[bool] = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check_lr(lr)
        _check_nonnegative((("epsilon value", eps),))
        _check_betas(betas)
        _check_nonnegative((("weight_decay value", weight_decay),))
        _check_unsupported("RAdam", capturable=capturable, differentiable=differentiable)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      foreach=foreach, capturable=capturable,
                                      decoupled_weight_decay=decoupled_weight_decay, differentiable=differentiable))

    def _update(self, p: Tensor, grad: Tensor, st: Dict[str, Any], group: Dict[str, Any]) -> None:
        beta1, beta2 = group["betas"]
        lr, wd = _to_scalar(group["lr"]), group["weight_decay"]
        st["step"] += 1
        step = st["step"].item()
        if wd != 0:
            if group["decoupled_weight_decay"]:
                p.mul_(1 - lr * wd)
            else:
                grad = grad.add(p, alpha=wd)
        exp_avg, exp_avg_sq = st["exp_avg"], st["exp_avg_sq"]
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        corrected = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            adaptive_lr = (bias_correction2 ** 0.5) / exp_avg_sq.sqrt().add_(group["eps"])
            p.add_(corrected * lr * adaptive_lr * rect, alpha=-1.0)
        else:
            p.add_(corrected * lr, alpha=-1.0)
