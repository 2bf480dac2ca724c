"""Parameter, Buffer and UninitializedParameter, as torch.nn.parameter.

A Parameter is a Tensor subclass that Module.__setattr__ registers as a
parameter. It aliases (shares storage with) the tensor it is built from; an op
on a Parameter returns a plain Tensor. A Buffer marks a tensor that
Module.__setattr__ registers as a buffer; like torch's, it is a plain Tensor
carrying a flag (isinstance(t, Buffer) checks the flag)."""
from __future__ import annotations

import copy
from typing import Any, Dict, Optional, Tuple

from .. import _C
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "is_lazy"]


class Parameter(Tensor):
    """A Tensor that is a module parameter: Module.__setattr__ registers it and
    parameters() yields it. `Parameter(data=None, requires_grad=True)`."""

    def __new__(cls, data: Optional[Tensor] = None, requires_grad: bool = True) -> "Parameter":
        if data is None:
            data = _C.empty(0)
        if not isinstance(data, _C._TensorBase):
            raise TypeError(f"Parameter(): data must be a Tensor, not {type(data).__name__}")
        return _C._make_subclass(cls, data, requires_grad)

    def __init__(self, data: Optional[Tensor] = None, requires_grad: bool = True) -> None:
        pass

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __reduce_ex__(self, protocol: int) -> Any:
        return (_rebuild_parameter, (self.detach(), self.requires_grad, dict(self.__dict__) or None))

    def __deepcopy__(self, memo: Dict[int, Any]) -> "Parameter":
        if id(self) in memo:
            return memo[id(self)]
        with no_grad():
            result = type(self)(self.clone(), self.requires_grad)
        memo[id(self)] = result
        if self.grad is not None:
            result.grad = copy.deepcopy(self.grad, memo)
        if self.__dict__:
            result.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return result


def _rebuild_parameter(data: Tensor, requires_grad: bool, state: Optional[Dict[str, Any]] = None) -> Parameter:
    p = Parameter(data, requires_grad)
    if state:
        p.__dict__.update(state)
    return p


class _BufferMeta(type(Tensor)):  # type: ignore[misc]
    """isinstance(t, Buffer) is true for tensors built by Buffer(...)."""

    def __instancecheck__(cls, instance: Any) -> bool:
        if cls is Buffer:
            return isinstance(instance, _C._TensorBase) and getattr(instance, "_is_buffer", False)
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """A tensor to register as a module buffer: `module.name = Buffer(t,
    persistent=True)` is register_buffer("name", t, persistent). Returns a
    plain Tensor (a detached alias of data) flagged as a buffer."""

    def __new__(cls, data: Optional[Tensor] = None, *, persistent: bool = True) -> Tensor:  # type: ignore[misc]
        if data is None:
            data = _C.empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t


class _Uninitialized:
    """Mixin of the lazy tensors: no data until materialize(shape)."""

    cls_to_become: type = Tensor

    def materialize(self, shape: Tuple[int, ...], device: Any = None, dtype: Any = None) -> None:
        """Give the tensor its data (uninitialized values) and turn it into cls_to_become."""
        if device is None:
            device = self.device
        if dtype is None:
            dtype = self.dtype
        self.data = _C.empty(tuple(shape), device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self) -> Any:  # type: ignore[override]
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. This error usually "
                           "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
                           "initialized one. Call `forward` to initialize the parameters before accessing their "
                           "attributes.")

    def share_memory_(self) -> Any:
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
                           "initialize the parameters before calling `module.share_memory()`.")

    def __repr__(self) -> str:
        return f"<{self.__class__.__name__}>"

    __str__ = __repr__

    def __reduce_ex__(self, protocol: int) -> Any:
        return (self.__class__, (self.requires_grad,))


class UninitializedParameter(_Uninitialized, Parameter):
    """A Parameter without data yet (lazy modules): materialize(shape) gives
    it data and turns it into a Parameter."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> "UninitializedParameter":
        data = _C.empty(0, device=device, dtype=dtype)
        return _C._make_subclass(cls, data, requires_grad)

    def __init__(self, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> None:
        pass

    def __deepcopy__(self, memo: Dict[int, Any]) -> "UninitializedParameter":
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, self.device, self.dtype)
        memo[id(self)] = result
        return result


class UninitializedBuffer(_Uninitialized, Tensor):
    """A buffer without data yet (lazy modules): materialize(shape) gives it data."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device: Any = None, dtype: Any = None,
                persistent: bool = True) -> "UninitializedBuffer":
        data = _C.empty(0, device=device, dtype=dtype)
        t = _C._make_subclass(cls, data, requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t

    def __init__(self, requires_grad: bool = False, device: Any = None, dtype: Any = None,
                 persistent: bool = True) -> None:
        pass


def is_lazy(param: Any) -> bool:
    """True for UninitializedParameter / UninitializedBuffer."""
    return isinstance(param, _Uninitialized)
