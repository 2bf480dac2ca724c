"""RMSprop (torch.optim.RMSprop): alpha, eps, weight decay, momentum,
centered, maximize. One fused C call (cgrad._C._rmsprop_step) per group."""
from __future__ import annotations

from typing import List, Optional, Union

from .. import _C
from .._tensor import Tensor
from .optimizer import Optimizer, ParamsT, _check_unsupported, _scalar_step, _zeros_like

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop, as torch.optim.RMSprop."""

    def __init__(self, params: ParamsT, lr: Union[float, Tensor] = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False, capturable: bool = False,
                 foreach: Optional[bool] = None, maximize: bool = False, differentiable: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        _check_unsupported("RMSprop", capturable=capturable, differentiable=differentiable)
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
                    "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("momentum", 0)
            group.setdefault("centered", False)
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)
        self._steps_to_tensors()

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
