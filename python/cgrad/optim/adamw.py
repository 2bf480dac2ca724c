"""AdamW (torch.optim.AdamW): Adam with decoupled weight decay (default 1e-2)."""
from __future__ import annotations

from typing import Optional, Tuple, Union

from .._tensor import Tensor
from .adam import Adam
from .optimizer import ParamsT

__all__ = ["AdamW"]


class AdamW(Adam):
    """Adam with decoupled weight decay, as torch.optim.AdamW."""

    _group_forced = dict(decoupled_weight_decay=True)

    def __init__(self, params: ParamsT, lr: Union[float, Tensor] = 1e-3,
                 betas: Tuple[Union[float, Tensor], Union[float, Tensor]] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: Optional[bool] = None, capturable: bool = False, differentiable: bool = False,
                 fused: Optional[bool] = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
