"""RAdam (torch.optim.RAdam): Adam with the variance rectification term, plain
momentum while the rectification is undefined (rho_t <= 5); coupled or
decoupled weight decay. One fused C call (cgrad._C._radam_step) per parameter
group (no complex tensors or differentiable=True in cgrad: PyTorch's other
branches)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple, Union

from .. import _C
from .._tensor import Tensor
from .optimizer import (_ZeroStateOptimizer, ParamsT, _check_betas, _check_lr, _check_nonnegative,
                        _check_unsupported)

__all__ = ["RAdam"]


class RAdam(_ZeroStateOptimizer):
    """RAdam, as torch.optim.RAdam."""

    _group_fallbacks = dict(foreach=None, maximize=False, differentiable=False, decoupled_weight_decay=False,
                            capturable=False)
    _zero_states = ('exp_avg', 'exp_avg_sq')

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

    def _group_step(self, group: Dict[str, Any], params: List[Tensor], grads: List[Tensor]) -> None:
        states = self._states(params, group, "exp_avg")
        beta1, beta2 = group["betas"]
        _C._radam_step(params, grads, [s["exp_avg"] for s in states], [s["exp_avg_sq"] for s in states],
                       [s["step"] for s in states], group["lr"], beta1, beta2, group["eps"], group["weight_decay"],
                       group["maximize"], group["decoupled_weight_decay"])
