"""Adamax (torch.optim.Adamax): Adam with the infinity norm of past gradients.
One fused C call (cgrad._C._adamax_step) per parameter group (no complex
tensors or differentiable=True in cgrad: PyTorch's other branches)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple, Union

from .. import _C
from .._tensor import Tensor
from .optimizer import (_ZeroStateOptimizer, ParamsT, _check_betas, _check_lr, _check_nonnegative,
                        _check_unsupported)

__all__ = ["Adamax"]


class Adamax(_ZeroStateOptimizer):
    """Adamax, as torch.optim.Adamax."""

    _group_fallbacks = dict(foreach=None, maximize=False, differentiable=False, capturable=False)
    _zero_states = ('exp_avg', 'exp_inf')

    def __init__(self, params: ParamsT, lr: Union[float, Tensor] = 2e-3, betas: Tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, foreach: Optional[bool] = None, *,
                 maximize: bool = False, differentiable: bool = False, capturable: bool = False) -> None:
        _check_lr(lr)
        _check_nonnegative((("epsilon value", eps),))
        _check_betas(betas)
        _check_nonnegative((("weight_decay value", weight_decay),))
        _check_unsupported("Adamax", differentiable=differentiable, capturable=capturable)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, capturable=capturable))

    def _group_step(self, group: Dict[str, Any], params: List[Tensor], grads: List[Tensor]) -> None:
        states = self._states(params, group, "exp_avg")
        beta1, beta2 = group["betas"]
        _C._adamax_step(params, grads, [s["exp_avg"] for s in states], [s["exp_inf"] for s in states],
                        [s["step"] for s in states], group["lr"], beta1, beta2, group["eps"], group["weight_decay"],
                        group["maximize"])
