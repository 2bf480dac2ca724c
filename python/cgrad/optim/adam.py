"""Adam (torch.optim.Adam): amsgrad, coupled or decoupled weight decay,
maximize, bias correction by each parameter's step count. One fused C call
(cgrad._C._adam_step) per parameter group."""
from __future__ import annotations

from typing import List, Optional, Tuple, Union

from .. import _C
from .._tensor import Tensor
from .optimizer import (Optimizer, ParamsT, _check_betas, _check_fused_foreach, _check_lr, _check_nonnegative,
                        _check_unsupported, _scalar_step, _to_scalar, _zeros_like)

__all__ = ["Adam"]


class Adam(Optimizer):
    """Adam, as torch.optim.Adam (AdamW is Adam with decoupled_weight_decay=True)."""

    _group_fallbacks = dict(amsgrad=False, maximize=False, foreach=None, capturable=False, differentiable=False,
                            decoupled_weight_decay=False, fused=None)
    _tensor_steps = True

    def __init__(self, params: ParamsT, lr: Union[float, Tensor] = 1e-3,
                 betas: Tuple[Union[float, Tensor], Union[float, Tensor]] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, foreach: Optional[bool] = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused: Optional[bool] = None, decoupled_weight_decay: bool = False) -> None:
        _check_lr(lr)
        _check_nonnegative((("epsilon value", eps),))
        _check_betas(betas)
        _check_nonnegative((("weight_decay value", weight_decay),))
        kinds = {float if isinstance(b, float) else Tensor if isinstance(b, Tensor) else None for b in betas[:2]}
        if len(kinds) != 1 or None in kinds:
            raise ValueError("betas must be either both floats or both Tensors")
        for index in (0, 1):
            if isinstance(betas[index], Tensor) and betas[index].numel() != 1:
                raise ValueError(f"Tensor betas[{index}] must be 1-element")
        _check_unsupported(type(self).__name__, capturable=capturable, differentiable=differentiable)
        super().__init__(params, dict(lr=lr, betas=tuple(_to_scalar(b) for b in betas), eps=eps,
                                      weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                                      capturable=capturable, differentiable=differentiable, fused=fused,
                                      decoupled_weight_decay=decoupled_weight_decay))
        _check_fused_foreach(fused, foreach)

    def _init_state(self, p: Tensor, group: dict) -> dict:
        st = self.state[p]
        st["step"] = _scalar_step()
        st["exp_avg"] = _zeros_like(p)
        st["exp_avg_sq"] = _zeros_like(p)
        if group["amsgrad"]:
            st["max_exp_avg_sq"] = _zeros_like(p)
        return st

    def _group_step(self, group: dict, params: List[Tensor], grads: List[Tensor]) -> None:
        states = self._states(params, group, "exp_avg")
        amsgrad = group["amsgrad"]
        beta1, beta2 = group["betas"]
        _C._adam_step(params, grads, [s["exp_avg"] for s in states], [s["exp_avg_sq"] for s in states],
                      [s["max_exp_avg_sq"] for s in states] if amsgrad else None, [s["step"] for s in states],
                      group["lr"], beta1, beta2, group["eps"], group["weight_decay"], amsgrad, group["maximize"],
                      group["decoupled_weight_decay"])
