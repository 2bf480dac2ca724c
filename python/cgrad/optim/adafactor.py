"""Adafactor (torch.optim.Adafactor): second moments kept as row and column
factors for tensors of 2 or more dimensions (a full variance for vectors and
scalars), relative step sizes and update clipping."""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple, Union

from .. import _C
from .._tensor import Tensor
from .._type_info import finfo
from ._composed import _ComposedOptimizer, _scalar
from .optimizer import ParamsT, _to_scalar

__all__ = ["Adafactor"]


class Adafactor(_ComposedOptimizer):
    """Adafactor, as torch.optim.Adafactor."""

    _group_fallbacks = dict(foreach=None, maximize=False)

    def __init__(self, params: ParamsT, lr: Union[float, Tensor] = 1e-2, beta2_decay: float = -0.8,
                 eps: Tuple[Optional[float], float] = (None, 1e-3), d: float = 1.0, weight_decay: float = 0.0, *,
                 foreach: Optional[bool] = None, maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        for ok, message in ((0.0 <= lr, f"Learning rate should be >= 0 but is: {lr}"),
                            (0.0 >= beta2_decay, f"beta2_decay should be <= 0 but is: {beta2_decay}"),
                            (eps[0] is None or 0.0 <= eps[0], f"epsilon1 should be >= 0 but is: {eps[0]}"),
                            (0.0 <= eps[1], f"epsilon2 should be >= 0 but is: {eps[1]}"),
                            (1.0 <= d, f"Clipping threshold d should be >= 1 but is: {d}"),
                            (0.0 <= weight_decay, f"weight_decay should be >= 0 but is: {weight_decay}")):
            if not ok:
                raise ValueError(message)
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize))

    def _init_state(self, p: Tensor, group: Dict[str, Any]) -> Dict[str, Any]:
        st = self.state[p]
        st["step"] = _scalar(0.0)
        shape = list(p.grad.shape)
        if len(shape) > 1:
            st["row_var"] = _C.zeros(shape[:-1] + [1], dtype=p.grad.dtype)
            st["col_var"] = _C.zeros(shape[:-2] + [1, shape[-1]], dtype=p.grad.dtype)
        else:
            st["variance"] = _C.zeros_like(p.grad)
        return st

    def _update(self, p: Tensor, grad: Tensor, st: Dict[str, Any], group: Dict[str, Any]) -> None:
        lr, (eps1, eps2), d = _to_scalar(group["lr"]), group["eps"], group["d"]
        if eps1 is None:
            eps1 = finfo(p.dtype).eps
        st["step"] += 1
        step = st["step"].item()
        one_minus_beta2 = step ** group["beta2_decay"]
        rho = min(lr, 1 / (step ** 0.5))
        alpha = max(eps2, p.norm(2).item() / (p.numel() ** 0.5)) * rho
        if group["weight_decay"] != 0:
            p.mul_(1 - lr * group["weight_decay"])
        if grad.dim() > 1:
            row_var, col_var = st["row_var"], st["col_var"]
            row_var.lerp_(_C.norm(grad, dim=-1, keepdim=True).square_().div_(grad.size(-1)), one_minus_beta2)
            col_var.lerp_(_C.norm(grad, dim=-2, keepdim=True).square_().div_(grad.size(-2)), one_minus_beta2)
            estimate = row_var @ col_var
            estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
        else:
            st["variance"].lerp_(grad * grad, one_minus_beta2)
            estimate = st["variance"].clone()
        update = estimate.clamp_(min=eps1 * eps1).rsqrt_().mul_(grad)
        denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * d))
        p.add_(update, alpha=-alpha / denom)
