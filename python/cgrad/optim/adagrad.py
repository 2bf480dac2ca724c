"""Adagrad (torch.optim.Adagrad): lr decay, weight decay, initial
accumulator value, eps, maximize. One fused C call (cgrad._C._adagrad_step)
per parameter group."""
from __future__ import annotations

from typing import List, Optional, Union

from .. import _C
from .._tensor import Tensor
from .optimizer import (Optimizer, ParamsT, _check_fused_foreach, _check_lr, _check_nonnegative, _check_unsupported,
                        _scalar_step)

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad, as torch.optim.Adagrad (state created at construction, like PyTorch)."""

    _group_fallbacks = dict(foreach=None, maximize=False, differentiable=False, fused=None)
    _tensor_steps = True

    def __init__(self, params: ParamsT, lr: Union[float, Tensor] = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0, eps: float = 1e-10,
                 foreach: Optional[bool] = None, *, maximize: bool = False, differentiable: bool = False,
                 fused: Optional[bool] = None) -> None:
        _check_lr(lr)
        _check_nonnegative((("lr_decay value", lr_decay), ("weight_decay value", weight_decay),
                            ("initial_accumulator_value value", initial_accumulator_value), ("epsilon value", eps)))
        _check_unsupported("Adagrad", differentiable=differentiable)
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, fused=fused))
        _check_fused_foreach(fused, foreach)
        # PyTorch creates Adagrad's state up front (its accumulators start at a given value)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, group)

    def _init_state(self, p: Tensor, group: dict) -> dict:
        state = self.state[p]
        state["step"] = _scalar_step()
        state["sum"] = _C.full_like(p, group["initial_accumulator_value"])
        return state

    def share_memory(self) -> None:
        """Moves the state sum tensors into shared memory (Tensor.share_memory_)."""
        for p in self._all_params():
            self.state[p]["sum"].share_memory_()

    def _group_step(self, group: dict, params: List[Tensor], grads: List[Tensor]) -> None:
        states = self._states(params, group, "sum")
        _C._adagrad_step(params, grads, [s["sum"] for s in states], [s["step"] for s in states], group["lr"],
                         group["lr_decay"], group["weight_decay"], group["eps"], group["maximize"])
