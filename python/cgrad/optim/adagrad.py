"""Adagrad (torch.optim.Adagrad): lr decay, weight decay, initial
accumulator value, eps, maximize. One fused C call (cgrad._C._adagrad_step)
per parameter group."""
from __future__ import annotations

from typing import List, Optional, Union

from .. import _C
from .._tensor import Tensor
from .optimizer import Optimizer, ParamsT, _check_fused_foreach, _check_unsupported, _scalar_step

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad, as torch.optim.Adagrad (state created at construction, like PyTorch)."""

    def __init__(self, params: ParamsT, lr: Union[float, Tensor] = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0, eps: float = 1e-10,
                 foreach: Optional[bool] = None, *, maximize: bool = False, differentiable: bool = False,
                 fused: Optional[bool] = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _check_unsupported("Adagrad", differentiable=differentiable)
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        _check_fused_foreach(fused, foreach)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, group)

    def _init_state(self, p: Tensor, group: dict) -> dict:
        state = self.state[p]
        state["step"] = _scalar_step()
        state["sum"] = _C.full_like(p, group["initial_accumulator_value"])
        return state

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("fused", None)
        self._steps_to_tensors()

    def share_memory(self) -> None:
        """Calls share_memory_() on the state sum tensors (a no-op for cgrad's CPU tensors)."""
        for group in self.param_groups:
            for p in group["params"]:
                s = self.state[p]["sum"]
                if hasattr(s, "share_memory_"):
                    s.share_memory_()

    def _group_step(self, group: dict, params: List[Tensor], grads: List[Tensor]) -> None:
        states = self._states(params, group, "sum")
        _C._adagrad_step(params, grads, [s["sum"] for s in states], [s["step"] for s in states], group["lr"],
                         group["lr_decay"], group["weight_decay"], group["eps"], group["maximize"])
