"""SGD (torch.optim.SGD): momentum, dampening, Nesterov, weight decay,
maximize. One fused C call (cgrad._C._sgd_step) per parameter group."""
from __future__ import annotations

from typing import List, Optional, Union

from .. import _C
from .._tensor import Tensor
from .optimizer import Optimizer, ParamsT, _check_fused_foreach, _check_unsupported

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent (optionally with momentum), as torch.optim.SGD."""

    def __init__(self, params: ParamsT, lr: Union[float, Tensor] = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: Union[float, Tensor] = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: Optional[bool] = None, differentiable: bool = False, fused: Optional[bool] = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        _check_unsupported("SGD", differentiable=differentiable)
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening, "weight_decay": weight_decay,
                    "nesterov": nesterov, "maximize": maximize, "foreach": foreach, "differentiable": differentiable,
                    "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        _check_fused_foreach(fused, foreach)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    def _group_step(self, group: dict, params: List[Tensor], grads: List[Tensor]) -> None:
        momentum = group["momentum"]
        state = self.state
        # momentum buffers missing (None) are created by the C step and stored back
        bufs = [state[p].get("momentum_buffer") for p in params] if momentum != 0 else None
        _C._sgd_step(params, grads, bufs, group["lr"], momentum, group["dampening"], group["weight_decay"],
                     group["nesterov"], group["maximize"])
        if bufs is not None:
            for p, buf in zip(params, bufs):
                state[p]["momentum_buffer"] = buf
