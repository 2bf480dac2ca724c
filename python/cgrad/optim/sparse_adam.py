"""SparseAdam (torch.optim.SparseAdam): Adam for sparse gradients. cgrad has no
sparse tensors, so every gradient is dense, and step() raises PyTorch's error
for a dense gradient; the constructor validates as PyTorch's does."""
from __future__ import annotations

from typing import Any, Dict, List, Tuple, Union

from .._tensor import Tensor
from .optimizer import Optimizer, ParamsT, _check_betas

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """SparseAdam, as torch.optim.SparseAdam (which refuses dense gradients)."""

    def __init__(self, params: ParamsT, lr: Union[float, Tensor] = 1e-3, betas: Tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))

    def _group_step(self, group: Dict[str, Any], params: List[Tensor], grads: List[Any]) -> None:
        raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
