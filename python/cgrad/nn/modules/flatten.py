"""Flatten and Unflatten, as torch.nn."""
from __future__ import annotations

from typing import Any, Sequence, Tuple, Union

from ..._tensor import Tensor
from .module import Module
from .utils import _fields_repr

__all__ = ["Flatten", "Unflatten"]


def _check_sizes(sizes: Any, containers: Any, entry: type, entries: str) -> None:
    """TypeError unless `sizes` is one of the container types and every entry an `entry` (ints, or
    (name, size) tuples); the message names the entry kind and the first misfit's type and position."""
    if not isinstance(sizes, containers):
        raise TypeError(f"unflattened_size must be a tuple of {entries}, but found type {type(sizes).__name__}")
    misfits = [(pos, item) for pos, item in enumerate(sizes) if not isinstance(item, entry)]
    if misfits:
        pos, item = misfits[0]
        raise TypeError(f"unflattened_size must be tuple of {entries}, but found element of type "
                        f"{type(item).__name__} at pos {pos}")


class Flatten(Module):
    """Flatten dims start_dim..end_dim into one (defaults keep the batch dim)."""

    __constants__ = ["start_dim", "end_dim"]

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(start_dim=self.start_dim, end_dim=self.end_dim)

    def extra_repr(self) -> str:
        return _fields_repr(start_dim=self.start_dim, end_dim=self.end_dim)


class Unflatten(Module):
    """Expand dim `dim` into the shape `unflattened_size` (a tuple/list of ints, or of (name, size) pairs)."""

    NamedShape = Tuple[Tuple[str, int]]
    __constants__ = ["dim", "unflattened_size"]

    def __init__(self, dim: Union[int, str], unflattened_size: Any) -> None:
        super().__init__()
        if isinstance(dim, int):
            _check_sizes(unflattened_size, (tuple, list), int, "ints")
        elif isinstance(dim, str):
            _check_sizes(unflattened_size, tuple, tuple, "tuples")
        else:
            raise TypeError("invalid argument type for dim parameter")
        self.dim, self.unflattened_size = dim, unflattened_size

    def _require_tuple_tuple(self, input: Any) -> None:
        _check_sizes(input, tuple, tuple, "tuples")

    def _require_tuple_int(self, input: Any) -> None:
        _check_sizes(input, (tuple, list), int, "ints")

    def forward(self, input: Tensor) -> Tensor:
        if isinstance(self.dim, str):
            raise NotImplementedError("Unflatten with a named dim: cgrad has no named tensors")
        return input.unflatten(self.dim, sizes=self.unflattened_size)

    def extra_repr(self) -> str:
        return _fields_repr(dim=self.dim, unflattened_size=self.unflattened_size)
