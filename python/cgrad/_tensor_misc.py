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


def _dense_in_order(shape: tuple, strides: tuple, order: tuple) -> bool:
    """Strides nest as a dense layout visiting dims innermost-first in `order`, size-1 dims skipped."""
    expected = 1
    for d in order:
        if shape[d] == 1:
            continue
        if strides[d] != expected:
            return False
        expected *= shape[d]
    return True


def _dim_order_perm(shape: tuple, strides: tuple, ambiguity_check: bool) -> tuple:
    """PyTorch's compute_elementwise_output_logical_to_physical_perm for one tensor: (perm, ambiguous)."""
    nd = len(shape)
    if nd == 0:
        return [], False
    if nd == 1:
        return [0], False
    numel = 1
    for n in shape:
        numel *= n
    contiguous = numel < 2 or _dense_in_order(shape, strides, tuple(reversed(range(nd))))
    channels_last = (nd == 4 and _dense_in_order(shape, strides, (1, 3, 2, 0)))
    if contiguous and not channels_last:
        return list(range(nd)), False
    if channels_last and not contiguous:
        return [0, *range(2, nd), 1], False

    def ge(a: int, b: int) -> bool:
        if b == 0:
            return True
        if a == 0:
            return False
        return a >= b or a % b == 0

    def should_swap(a: int, b: int) -> int:
        sa, sb = strides[a], strides[b]
        if sa == 0 or sb == 0:
            return 0
        if sa == sb:
            return 0 if ge(shape[b], shape[a]) else 1
        if ge(sb, sa):
            return -1
        if ge(sa, sb):
            return 1
        return 0

    perm = list(reversed(range(nd)))
    for i in range(1, nd):
        d1 = i
        for d0 in reversed(range(i)):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    ambiguous = ambiguity_check and any(should_swap(perm[i], perm[i + 1]) != -1 for i in range(nd - 1))
    return list(reversed(perm)), ambiguous


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
        """The CUDA ordinal of a cuda tensor; -1 for the others, as PyTorch."""
        dev = self.device
        return dev.index if dev.type == "cuda" else -1

    def is_pinned(self, device: Any = None) -> bool:
        """False: cgrad has no pinned (page-locked) host memory (see pin_memory)."""
        return False

    def pin_memory(self, device: Any = None) -> Any:
        """A copy of this CPU tensor for fast transfer to a CUDA device, as PyTorch's. cgrad has no pinned
        memory allocator: the copy is ordinary pageable memory (is_pinned() stays False) and a copy from it
        to the device is as fast as from any CPU tensor. RuntimeError without a usable CUDA device, as
        PyTorch's CPU-only build; only CPU tensors can be pinned."""
        from . import cuda
        if not cuda.is_available():
            raise RuntimeError("Cannot access accelerator device when none is available.")
        if self.device.type != "cpu":
            raise RuntimeError(f"cannot pin '{self.type()}' only dense CPU tensors can be pinned")
        return self.clone()

    def is_inference(self) -> bool:
        """Whether this is an inference tensor: created in inference_mode, or a view of one (Tensor.is_inference)."""
        return _C._is_inference(self)

    def dim_order(self, *, ambiguity_check: Any = False) -> tuple:
        """The dims from outermost to innermost in memory (Tensor.dim_order). ambiguity_check=True: RuntimeError
        when several orders fit (a size-1 dim or two equal neighbouring strides); a list of memory formats: also
        accepted when the tensor is contiguous in exactly one of them."""
        if not isinstance(ambiguity_check, bool):
            if not isinstance(ambiguity_check, list) or not all(isinstance(f, _C.memory_format) for f in ambiguity_check):
                raise TypeError("The ambiguity_check argument must be a bool or a list of memory formats.")
        shape, strides = tuple(self.shape), tuple(self.stride())
        formats = ambiguity_check if isinstance(ambiguity_check, list) else []
        check = ambiguity_check if isinstance(ambiguity_check, bool) else True
        several = any(a == b for a, b in zip(strides, strides[1:])) or any(n == 1 for n in shape)
        if check and several and sum(bool(self.is_contiguous(memory_format=f)) for f in formats) != 1:
            raise RuntimeError("The tensor does not have unique dim order, or cannot map to exact one of the given "
                               "memory formats.")
        perm, ambiguous = _dim_order_perm(shape, strides, bool(ambiguity_check))
        if ambiguous:
            raise RuntimeError("The tensor does not have unique dim order.")
        return tuple(perm)

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
