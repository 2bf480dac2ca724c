"""SGD (torch.optim.SGD): momentum, dampening, Nesterov, weight decay,
maximize. One fused C call (cgrad._C._sgd_step) per parameter group."""
from __future__ import annotations

from typing import List, Optional, Union

from .. import _C
from .._tensor import Tensor
from .optimizer import Optimizer, ParamsT, _check_fused_foreach, _check_lr, _check_nonnegative, _check_unsupported

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent (optionally with momentum), as torch.optim.SGD."""

    _group_fallbacks = dict(nesterov=False, maximize=False, foreach=None, differentiable=False, fused=False)

    def __init__(self, params: ParamsT, lr: Union[float, Tensor] = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: Union[float, Tensor] = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: Optional[bool] = None, differentiable: bool = False, fused: Optional[bool] = None) -> None:
        _check_lr(lr, reject_nan=False)
        _check_nonnegative((("momentum value", momentum), ("weight_decay value", weight_decay)), reject_nan=False)
        _check_unsupported("SGD", differentiable=differentiable)
        if nesterov and (dampening != 0 or momentum <= 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))
        _check_fused_foreach(fused, foreach)

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
