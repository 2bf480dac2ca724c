"""Adam (torch.optim.Adam): amsgrad, coupled or decoupled weight decay,
maximize, bias correction by each parameter's step count. One fused C call
(cgrad._C._adam_step) per parameter group."""
from __future__ import annotations

from typing import Any, List, Optional, Tuple, Union

from .. import _C
from .._tensor import Tensor
from .optimizer import Optimizer, ParamsT, _check_fused_foreach, _check_unsupported, _scalar_step, _zeros_like

__all__ = ["Adam"]


def _to_scalar(x: Any) -> Any:
    if isinstance(x, Tensor):
        return x.item()
    return x


class Adam(Optimizer):
    """Adam, as torch.optim.Adam (AdamW is Adam with decoupled_weight_decay=True)."""

    def __init__(self, params: ParamsT, lr: Union[float, Tensor] = 1e-3,
                 betas: Tuple[Union[float, Tensor], Union[float, Tensor]] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, foreach: Optional[bool] = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused: Optional[bool] = None, decoupled_weight_decay: bool = False) -> None:
        if isinstance(lr, Tensor):
            if lr.numel() != 1:
                raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
                or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
            raise ValueError("betas must be either both floats or both Tensors")
        for k in (0, 1):
            if isinstance(betas[k], Tensor) and betas[k].numel() != 1:
                raise ValueError(f"Tensor betas[{k}] must be 1-element")
        betas = tuple(map(_to_scalar, betas))  # type: ignore[assignment]
        name = type(self).__name__
        _check_unsupported(name, capturable=capturable, differentiable=differentiable)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "amsgrad": amsgrad,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable, "fused": fused, "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)
        _check_fused_foreach(fused, foreach)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)
            group.setdefault("fused", None)
        self._steps_to_tensors()

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
