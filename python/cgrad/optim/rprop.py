"""Rprop (torch.optim.Rprop): per-element step sizes grown or shrunk by the sign
agreement of successive gradients. One fused C call (cgrad._C._rprop_step)
per parameter group, the sign logic included (no complex tensors or
differentiable=True in cgrad: PyTorch's other branches)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple, Union

from .. import _C
from .._tensor import Tensor
from .optimizer import (Optimizer, ParamsT, _check_lr, _check_unsupported, _scalar_step, _to_scalar,
                        _zeros_like)

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Rprop, as torch.optim.Rprop."""

    _group_fallbacks = dict(foreach=None, maximize=False, differentiable=False, capturable=False)
    _tensor_steps = True

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
        st["step"], st["prev"] = _scalar_step(), _zeros_like(p)
        st["step_size"] = _C.full_like(p, _to_scalar(group["lr"]))
        return st

    def _group_step(self, group: Dict[str, Any], params: List[Tensor], grads: List[Tensor]) -> None:
        states = self._states(params, group, "prev")
        etaminus, etaplus = group["etas"]
        size_min, size_max = group["step_sizes"]
        _C._rprop_step(params, grads, [s["prev"] for s in states], [s["step_size"] for s in states],
                       [s["step"] for s in states], etaminus, etaplus, size_min, size_max, group["maximize"])
