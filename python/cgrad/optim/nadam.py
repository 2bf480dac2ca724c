"""NAdam (torch.optim.NAdam): Adam with Nesterov momentum and the momentum-decay
schedule; coupled or decoupled weight decay."""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple, Union

from .. import _C
from .._tensor import Tensor
from ._composed import _ComposedOptimizer, _scalar
from .optimizer import ParamsT, _check_betas, _check_lr, _check_nonnegative, _check_unsupported, _to_scalar

__all__ = ["NAdam"]


class NAdam(_ComposedOptimizer):
    """NAdam, as torch.optim.NAdam."""

    _group_fallbacks = dict(maximize=False, foreach=None, capturable=False, differentiable=False,
                            decoupled_weight_decay=False)

    def __init__(self, params: ParamsT, lr: Union[float, Tensor] = 2e-3, betas: Tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: Optional[bool] = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        _check_lr(lr)
        _check_nonnegative((("epsilon value", eps),))
        _check_betas(betas)
        _check_nonnegative((("weight_decay value", weight_decay), ("momentum_decay value", momentum_decay)))
        _check_unsupported("NAdam", capturable=capturable, differentiable=differentiable)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable))

    def _init_state(self, p: Tensor, group: Dict[str, Any]) -> Dict[str, Any]:
        st = self.state[p]
        st["step"], st["mu_product"] = _scalar(0.0), _scalar(1.0)
        st["exp_avg"], st["exp_avg_sq"] = _C.zeros_like(p), _C.zeros_like(p)
        return st

    def _update(self, p: Tensor, grad: Tensor, st: Dict[str, Any], group: Dict[str, Any]) -> None:
        beta1, beta2 = group["betas"]
        lr, wd, decay = _to_scalar(group["lr"]), group["weight_decay"], group["momentum_decay"]
        st["step"] += 1
        step = st["step"].item()
        bias_correction2 = 1 - beta2 ** step
        if wd != 0:
            if group["decoupled_weight_decay"]:
                p.mul_(1 - lr * wd)
            else:
                grad = grad.add(p, alpha=wd)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * decay)))
        st["mu_product"] *= mu
        mu_product = st["mu_product"].item()
        st["exp_avg"].lerp_(grad, 1 - beta1)
        st["exp_avg_sq"].mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = st["exp_avg_sq"].div(bias_correction2).sqrt().add_(group["eps"])
        p.addcdiv_(grad, denom, value=-lr * (1.0 - mu) / (1.0 - mu_product))
        p.addcdiv_(st["exp_avg"], denom, value=(-lr * mu_next) / (1.0 - mu_product * mu_next))
