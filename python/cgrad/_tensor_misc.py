"""Tensor methods PyTorch has for compatibility and convenience, written on the
public ones: the legacy `new` and the deprecated non-in-place `resize` /
`resize_as`, the Python-callable maps `apply_` / `map_` / `map2_`, the real-dtype
forms of the conjugate / negative-bit queries, CPU-build answers about devices
and pinned memory, `as_subclass`, `adjoint`, `is_same_size`, and the activation
methods `hardshrink` / `prelu`."""
from __future__ import annotations

import warnings
from typing import Any, Callable

from . import _C, _legacy


def _no_grad_target(t: Any, name: str) -> None:
    if t.requires_grad:
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() instead.")


class MiscMethods:
    """The Tensor methods of this module (cgrad.Tensor inherits them)."""

    def new(self, *args: Any, **kwargs: Any) -> Any:
        """The legacy constructor with this tensor's dtype and device (Tensor.new): new(*sizes) uninitialised,
        new(data) a copy, new(tensor) an alias, new() an empty 1-d tensor."""
        return _legacy.legacy_new("new", self.dtype, args, kwargs)

    def resize(self, *sizes: Any) -> Any:
        """Deprecated non-in-place resize: a reshape that keeps the number of elements (Tensor.resize)."""
        warnings.warn("non-inplace resize is deprecated", stacklevel=2)
        shape = tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else tuple(sizes)
        n = 1
        for s in shape:
            n *= int(s)
        if n != self.numel():
            raise RuntimeError(f"requested resize to {'x'.join(map(str, shape))} ({n} elements in total), but the "
                               f"given tensor has a size of {'x'.join(map(str, self.shape))} ({self.numel()} "
                               "elements). autograd's resize can only change the shape of a given tensor, while "
                               "preserving the number of elements. ")
        return self.contiguous().view(*shape)

    def resize_as(self, tensor: Any) -> Any:
        """Deprecated non-in-place resize_as: resize to tensor's shape (Tensor.resize_as)."""
        warnings.warn("non-inplace resize_as is deprecated", stacklevel=2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return self.resize(tuple(tensor.shape))

    def apply_(self, callable: Callable[[Any], Any]) -> Any:
        """Replace every element x by callable(x), a Python number (Tensor.apply_; CPU, slow)."""
        _no_grad_target(self, "apply_")
        return self._map_values("apply_", callable)

    def map_(self, tensor: Any, callable: Callable[[Any, Any], Any]) -> Any:
        """Replace every element a by callable(a, b), b from tensor broadcast to this shape (Tensor.map_)."""
        _no_grad_target(self, "map_")
        return self._map_values("map_", callable, tensor)

    def map2_(self, x: Any, y: Any, callable: Callable[[Any, Any, Any], Any]) -> Any:
        """Replace every element a by callable(a, b, c), b and c from x and y broadcast to this shape."""
        _no_grad_target(self, "map2_")
        return self._map_values("map2_", callable, x, y)

    def _map_values(self, name: str, fn: Callable[..., Any], *others: Any) -> Any:
        cols = [self.reshape(-1).tolist()]
        cols += [o.detach().expand(*self.shape).reshape(-1).tolist() for o in others]
        vals = [fn(*v) for v in zip(*cols)]
        for v in vals:
            if not isinstance(v, (int, float, bool)):
                raise TypeError(f"{name}: the callable must return a number, got {type(v).__name__}")
        if vals:  # the values' own dtype, cast by copy_ as PyTorch stores a callable's result
            self.copy_(_C.tensor(vals).reshape(*self.shape))
        return self

    def is_same_size(self, other: Any) -> bool:
        """True when other has this tensor's shape (Tensor.is_same_size)."""
        return tuple(self.shape) == tuple(other.shape)

    def adjoint(self) -> Any:
        """The conjugate transpose of the last two dims: for real dtypes, transpose(-2, -1) (Tensor.adjoint)."""
        if self.dim() < 2:
            raise RuntimeError(f"tensor.adjoint() is only supported on matrices or batches of matrices. Got "
                               f"{self.dim()}-D tensor.")
        return self.transpose(-2, -1)

    def is_conj(self) -> bool:
        """False: only complex tensors carry the conjugate bit, and cgrad has no complex dtypes."""
        return False

    def is_neg(self) -> bool:
        """False: only complex tensors carry the negative bit, and cgrad has no complex dtypes."""
        return False

    def resolve_conj(self) -> Any:
        """self: a real tensor has no conjugate bit to resolve (Tensor.resolve_conj)."""
        return self

    def resolve_neg(self) -> Any:
        """self: a real tensor has no negative bit to resolve (Tensor.resolve_neg)."""
        return self

    def get_device(self) -> int:
        """-1 for a CPU tensor, as PyTorch (cgrad has no accelerator devices yet)."""
        return -1

    def is_pinned(self, device: Any = None) -> bool:
        """False: there is no accelerator to pin memory for (PyTorch's CPU-only build)."""
        return False

    def pin_memory(self, device: Any = None) -> Any:
        """RuntimeError, as PyTorch's CPU-only build: pinned memory needs an accelerator."""
        raise RuntimeError("Cannot access accelerator device when none is available.")

    def const_data_ptr(self) -> int:
        """The address of the first element (Tensor.const_data_ptr; the same as data_ptr())."""
        return self.data_ptr()

    def as_subclass(self, cls: type) -> Any:
        """This tensor's elements as an instance of cls, a Tensor subclass, still in this tensor's graph."""
        return _C._as_subclass(cls, self)

    def hardshrink(self, lambd: float = 0.5) -> Any:
        """cgrad.nn.functional.hardshrink(self, lambd)."""
        from .nn import functional as F
        return F.hardshrink(self, lambd)

    def prelu(self, weight: Any) -> Any:
        """cgrad.nn.functional.prelu(self, weight)."""
        from .nn import functional as F
        return F.prelu(self, weight)
