"""Argument helpers of the layers, as torch.nn.modules.utils: _single / _pair / _triple and
_reverse_repeat_tuple (an int repeated, a sequence as a tuple)."""
from __future__ import annotations

import collections.abc
from itertools import repeat
from typing import Any, Callable, Sequence, Tuple

__all__: list = []


def _ntuple(n: int, name: str = "parse") -> Callable[[Any], Tuple[Any, ...]]:
    def parse(x: Any) -> Tuple[Any, ...]:
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t: Sequence[Any], n: int) -> Tuple[Any, ...]:
    """Reverse t and repeat each element n times: (1, 2) -> (2, 2, 1, 1) for n = 2 (F.pad's order)."""
    return tuple(x for x in reversed(t) for _ in range(n))
