"""Rprop (torch.optim.Rprop): per-element step sizes grown or shrunk by the sign
agreement of successive gradients."""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple, Union

from .. import _C
from .._tensor import Tensor
from ._composed import _ComposedOptimizer, _scalar
from .optimizer import ParamsT, _check_lr, _check_unsupported, _to_scalar

__all__ = ["Rprop"]


class Rprop(_ComposedOptimizer):
    """Rprop, as torch.optim.Rprop."""

    _group_fallbacks = dict(foreach=None, maximize=False, differentiable=False, capturable=False)

    def __init__(self, params: ParamsT, lr: Union[float, Tensor] = 1e-2, etas: Tuple[float, float] = (0.5, 1.2),
                 step_sizes: Tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: Optional[bool] = None, maximize: bool = False, differentiable: bool = False) -> None:
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        _check_unsupported("Rprop", capturable=capturable, differentiable=differentiable)
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, capturable=capturable))

    def _init_state(self, p: Tensor, group: Dict[str, Any]) -> Dict[str, Any]:
        st = self.state[p]
        st["step"], st["prev"] = _scalar(0.0), _C.zeros_like(p)
        st["step_size"] = _C.full_like(p, _to_scalar(group["lr"]))
        return st

    def _update(self, p: Tensor, grad: Tensor, st: Dict[str, Any], group: Dict[str, Any]) -> None:
        etaminus, etaplus = group["etas"]
        size_min, size_max = group["step_sizes"]
        st["step"] += 1
        sign = grad.mul(st["prev"]).sign()
        factor = sign.masked_fill(sign.gt(0), etaplus).masked_fill_(sign.lt(0), etaminus)
        factor.masked_fill_(sign.eq(0), 1)
        st["step_size"].mul_(factor).clamp_(size_min, size_max)
        grad = grad.masked_fill(factor.eq(etaminus), 0)
        p.addcmul_(grad.sign(), st["step_size"], value=-1)
        st["prev"].copy_(grad)
