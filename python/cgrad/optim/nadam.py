"""NAdam (torch.optim.NAdam): Adam with Nesterov momentum and the momentum-decay
schedule; coupled or decoupled weight decay. One fused C call
(cgrad._C._nadam_step) per parameter group, which also updates each
parameter's mu_product (no complex tensors or differentiable=True in cgrad:
PyTorch's other branches)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple, Union

from .. import _C
from .._tensor import Tensor
from .optimizer import (Optimizer, ParamsT, _check_betas, _check_lr, _check_nonnegative, _check_unsupported,
                        _scalar_state, _zeros_like)

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """NAdam, as torch.optim.NAdam."""

    _group_fallbacks = dict(maximize=False, foreach=None, capturable=False, differentiable=False,
                            decoupled_weight_decay=False)
    _tensor_steps = True

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
        st["step"], st["mu_product"] = _scalar_state(0.0), _scalar_state(1.0)
        st["exp_avg"], st["exp_avg_sq"] = _zeros_like(p), _zeros_like(p)
        return st

    def _group_step(self, group: Dict[str, Any], params: List[Tensor], grads: List[Tensor]) -> None:
        states = self._states(params, group, "exp_avg")
        beta1, beta2 = group["betas"]
        _C._nadam_step(params, grads, [s["exp_avg"] for s in states], [s["exp_avg_sq"] for s in states],
                       [s["mu_product"] for s in states], [s["step"] for s in states], group["lr"], beta1, beta2,
                       group["eps"], group["weight_decay"], group["momentum_decay"], group["maximize"],
                       group["decoupled_weight_decay"])
