"""ASGD (torch.optim.ASGD): averaged stochastic gradient descent, with the
decaying step eta and the averaging weight mu kept per parameter."""
from __future__ import annotations

from typing import Any, Dict, Optional, Union

from .. import _C
from .._tensor import Tensor
from ._composed import _ComposedOptimizer, _scalar
from .optimizer import ParamsT, _check_lr, _check_nonnegative, _check_unsupported, _to_scalar

__all__ = ["ASGD"]


class ASGD(_ComposedOptimizer):
    """ASGD, as torch.optim.ASGD."""

    _group_fallbacks = dict(foreach=None, maximize=False, differentiable=False, capturable=False)

    def __init__(self, params: ParamsT, lr: Union[float, Tensor] = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0, foreach: Optional[bool] = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        _check_lr(lr)
        _check_nonnegative((("weight_decay value", weight_decay),))
        _check_unsupported("ASGD", differentiable=differentiable, capturable=capturable)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def _init_state(self, p: Tensor, group: Dict[str, Any]) -> Dict[str, Any]:
        st = self.state[p]
        st["step"], st["eta"], st["mu"] = _scalar(0.0), _scalar(_to_scalar(group["lr"])), _scalar(1.0)
        st["ax"] = _C.zeros_like(p)
        return st

    def _update(self, p: Tensor, grad: Tensor, st: Dict[str, Any], group: Dict[str, Any]) -> None:
        lr, lambd = _to_scalar(group["lr"]), group["lambd"]
        st["step"] += 1
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        eta = st["eta"].item()
        p.mul_(1 - lambd * eta)
        p.add_(grad, alpha=-eta)
        ax, mu = st["ax"], st["mu"]
        if mu.item() != 1:
            ax.add_(p.sub(ax).mul_(mu))
        else:
            ax.copy_(p)
        step = st["step"].item()
        eta_new = lr / ((1 + lambd * lr * step) ** group["alpha"])
        # through a default-dtype tensor, as PyTorch's torch.as_tensor(number): rounded to float32
        # even where a loaded state holds eta and mu in the parameter's dtype
        st["eta"].copy_(_C.tensor(eta_new))
        st["mu"].copy_(_C.tensor(1 / max(1, step - group["t0"])))
