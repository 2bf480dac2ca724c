"""RMSprop (torch.optim.RMSprop): alpha, eps, weight decay, momentum,
centered, maximize. One fused C call (cgrad._C._rmsprop_step) per group."""
from __future__ import annotations

from typing import List, Optional, Union

from .. import _C
from .._tensor import Tensor
from .optimizer import Optimizer, ParamsT, _check_lr, _check_nonnegative, _check_unsupported, _scalar_step, _zeros_like

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop, as torch.optim.RMSprop."""

    _group_fallbacks = dict(momentum=0, centered=False, foreach=None, maximize=False, differentiable=False,
                            capturable=False)
    _tensor_steps = True

    def __init__(self, params: ParamsT, lr: Union[float, Tensor] = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False, capturable: bool = False,
                 foreach: Optional[bool] = None, maximize: bool = False, differentiable: bool = False) -> None:
        _check_lr(lr)
        _check_nonnegative((("epsilon value", eps), ("momentum value", momentum), ("weight_decay value", weight_decay),
                            ("alpha value", alpha)))
        _check_unsupported("RMSprop", capturable=capturable, differentiable=differentiable)
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                                      weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable))

    def _init_state(self, p: Tensor, group: dict) -> dict:
        st = self.state[p]
        st["step"] = _scalar_step()
        st["square_avg"] = _zeros_like(p)
        if group["momentum"] > 0:
            st["momentum_buffer"] = _zeros_like(p)
        if group["centered"]:
            st["grad_avg"] = _zeros_like(p)
        return st

    def _group_step(self, group: dict, params: List[Tensor], grads: List[Tensor]) -> None:
        states = self._states(params, group, "square_avg")
        momentum, centered = group["momentum"], group["centered"]
        _C._rmsprop_step(params, grads, [s["square_avg"] for s in states],
                         [s["momentum_buffer"] for s in states] if momentum > 0 else None,
                         [s["grad_avg"] for s in states] if centered else None, [s["step"] for s in states],
                         group["lr"], group["alpha"], group["eps"], group["weight_decay"], momentum, centered,
                         group["maximize"])
