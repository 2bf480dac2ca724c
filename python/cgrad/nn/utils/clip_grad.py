"""Gradient clipping, as torch.nn.utils.clip_grad: the total norm is computed
by engine ops (one norm per gradient, one norm of their stack) and applied
with one in-place multiply per gradient by a tensor factor, so no value
crosses into Python (error_if_nonfinite reads one flag)."""
from __future__ import annotations

import warnings
from typing import Iterable, List, Optional, Union

from ... import _C
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]

_tensor_or_tensors = Union[Tensor, Iterable[Tensor]]


def _as_list(tensors: _tensor_or_tensors) -> List[Tensor]:
    if isinstance(tensors, _C._TensorBase):
        return [tensors]  # type: ignore[list-item]
    return list(tensors)


def _vector_norm(t: Tensor, norm_type: float) -> Tensor:
    if norm_type == float("inf"):
        return t.abs().amax() if t.numel() else _C.zeros((), dtype=t.dtype)
    if norm_type == float("-inf"):
        return t.abs().amin()
    return t.norm(norm_type)


def get_total_norm(tensors: _tensor_or_tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: Optional[bool] = None) -> Tensor:
    """The norm of the norms of `tensors` (the norm of their concatenation), a 0-d tensor."""
    ts = _as_list(tensors)
    norm_type = float(norm_type)
    if len(ts) == 0:
        return _C.tensor(0.0)
    with no_grad():
        norms = [_vector_norm(t, norm_type) for t in ts]
        dt = norms[0].dtype
        total_norm = _vector_norm(_C.stack([n if n.dtype == dt else n.to(dt) for n in norms]), norm_type)
    if error_if_nonfinite and not bool(total_norm.isfinite()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so "
                           "it cannot be clipped. To disable this error and scale the gradients by the non-finite "
                           "norm anyway, set `error_if_nonfinite=False`")
    return total_norm


def clip_grads_with_norm_(parameters: _tensor_or_tensors, max_norm: float, total_norm: Tensor,
                          foreach: Optional[bool] = None) -> None:
    """Scale the gradients by min(1, max_norm / (total_norm + 1e-6))."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if len(grads) == 0:
        return
    with no_grad():
        clip_coef = float(max_norm) / (total_norm + 1e-6)
        clip_coef_clamped = clip_coef.clamp(max=1.0)
        for g in grads:
            g.mul_(clip_coef_clamped if clip_coef_clamped.dtype == g.dtype else clip_coef_clamped.to(g.dtype))


def clip_grad_norm_(parameters: _tensor_or_tensors, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: Optional[bool] = None) -> Tensor:
    """Clip the gradients of `parameters` so that their total norm is at most max_norm;
    returns the total norm before clipping (a 0-d tensor). foreach is accepted and ignored."""
    params = _as_list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(params, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters: _tensor_or_tensors, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: Optional[bool] = None) -> Tensor:
    """Deprecated alias of clip_grad_norm_."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: _tensor_or_tensors, clip_value: float, foreach: Optional[bool] = None) -> None:
    """Clamp every gradient element into [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    with no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)
