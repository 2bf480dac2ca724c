"""ASGD (torch.optim.ASGD): averaged stochastic gradient descent, with the
decaying step eta and the averaging weight mu kept per parameter. One fused C
call (cgrad._C._asgd_step) per parameter group, which also updates eta and mu
(no complex tensors or differentiable=True in cgrad: PyTorch's other
branches)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Union

from .. import _C
from .._tensor import Tensor
from .optimizer import (Optimizer, ParamsT, _check_lr, _check_nonnegative, _check_unsupported, _scalar_state,
                        _to_scalar, _zeros_like)

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """ASGD, as torch.optim.ASGD."""

    _group_fallbacks = dict(foreach=None, maximize=False, differentiable=False, capturable=False)
    _tensor_steps = True

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
        st["step"], st["eta"], st["mu"] = _scalar_state(0.0), _scalar_state(_to_scalar(group["lr"])), _scalar_state(1.0)
        st["ax"] = _zeros_like(p)
        return st

    def _group_step(self, group: Dict[str, Any], params: List[Tensor], grads: List[Tensor]) -> None:
        states = self._states(params, group, "ax")
        _C._asgd_step(params, grads, [s["ax"] for s in states], [s["mu"] for s in states],
                      [s["eta"] for s in states], [s["step"] for s in states], group["lr"], group["lambd"],
                      group["alpha"], group["t0"], group["weight_decay"], group["maximize"])
