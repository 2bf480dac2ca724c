"""The Python-level Tensor class: the C base type `_C._TensorBase` carries
storage, operators and ops; this class adds what is not hot (repr, pickling,
hook handles)."""
from __future__ import annotations

from typing import Any, Callable, Optional

from . import _C
from ._tensor_str import tensor_repr


class _HookHandle:
    """Handle returned by Tensor.register_hook; remove() unregisters the hook."""

    def __init__(self, tensor: "Tensor", hook_id: int) -> None:
        self._tensor = tensor
        self.id = hook_id

    def remove(self) -> None:
        if self._tensor is not None:
            self._tensor._remove_hook(self.id)
            self._tensor = None

    def __enter__(self) -> "_HookHandle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


class Tensor(_C._TensorBase):
    """An N-dimensional array with autograd, backed by the cgrad C engine."""

    def __repr__(self, *, tensor_contents: Optional[str] = None) -> str:
        return tensor_repr(self)

    __str__ = __repr__

    def __reduce_ex__(self, protocol: int) -> Any:
        return (_rebuild_tensor, (self.detach().tolist(), self.dtype, self.requires_grad, tuple(self.shape)))

    def __iter__(self):
        if self.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    def __format__(self, spec: str) -> str:
        if self.dim() == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __hash__(self) -> int:
        return id(self)

    def register_hook(self, hook: Callable[["Tensor"], Optional["Tensor"]]) -> _HookHandle:
        """Register a hook run with this tensor's gradient; it may return a replacement."""
        return super().register_hook(hook)


def _rebuild_tensor(data: Any, dtype: Any, requires_grad: bool, shape: tuple) -> Tensor:
    t = _C.tensor(data, dtype=dtype)
    if tuple(t.shape) != shape:  # empty tensors lose their shape in tolist()
        t = _C.zeros(shape, dtype=dtype)
    if requires_grad:
        t.requires_grad_(True)
    return t


_C._set_tensor_class(Tensor, _HookHandle)
