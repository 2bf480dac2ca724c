"""Argument helpers shared by the layers: _single / _pair / _triple / _quadruple (an int repeated n
times, any iterable turned into a tuple), _reverse_repeat_tuple (F.pad's last-dim-first order) and the
extra_repr builder (_fields_repr / _unless) the layer modules describe themselves with."""
from __future__ import annotations

import collections.abc
import math
from typing import Any, Callable, Sequence, Tuple

__all__: list = []


def _tuple_of(count: int, label: str) -> Callable[[Any], Tuple[Any, ...]]:
    """A converter: an iterable becomes a tuple as it is, a scalar is repeated `count` times."""

    def convert(value: Any) -> Tuple[Any, ...]:
        if isinstance(value, collections.abc.Iterable):
            return tuple(value)
        return (value,) * count

    convert.__name__ = label
    return convert


_single = _tuple_of(1, "_single")
_pair = _tuple_of(2, "_pair")
_triple = _tuple_of(3, "_triple")
_quadruple = _tuple_of(4, "_quadruple")


def _reverse_repeat_tuple(t: Sequence[Any], n: int) -> Tuple[Any, ...]:
    """Each entry n times, last entry first: (1, 2) -> (2, 2, 1, 1) for n = 2 (F.pad's order)."""
    out: list = []
    for item in t[::-1]:
        out.extend([item] * n)
    return tuple(out)


class _Hidden:
    """Marker of a field extra_repr leaves out (its value is the default)."""

    __slots__ = ()


_HIDDEN = _Hidden()


def _unless(value: Any, default: Any) -> Any:
    """value, or the hidden marker when it equals default: the field is shown only when set."""
    return _HIDDEN if value == default else value


def _fields_repr(*leading: Any, **fields: Any) -> str:
    """extra_repr text: the leading values as they print, then name=value for each field that is not
    hidden, in the order given, comma-separated."""
    parts = [str(v) for v in leading]
    parts.extend(f"{name}={value}" for name, value in fields.items() if value is not _HIDDEN)
    return ", ".join(parts)


def _unless_filled(value: Any, fill: Any) -> Any:
    """value, or the hidden marker when it is a tuple whose entries all equal fill (padding (0, 0),
    dilation (1, 1), ...); strings such as padding='same' are always shown."""
    if isinstance(value, tuple) and all(v == fill for v in value):
        return _HIDDEN
    return value


def _fan_in_uniform_(weight: Any, bias: Any) -> None:
    """The default init of Linear and the convolutions: kaiming_uniform_ with a=sqrt(5), which keeps the
    weight in +-1/sqrt(fan_in), and the bias uniform in that same range (0 when fan_in is 0)."""
    from .. import init

    init.kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in = init._calculate_fan_in_and_fan_out(weight)[0]
        limit = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        init.uniform_(bias, -limit, limit)


def _check_rank(input: Any, ranks: Sequence[int]) -> None:
    """ValueError 'expected 2D or 3D input (got 4D input)' unless input.dim() is one of ranks."""
    if input.dim() not in ranks:
        accepted = " or ".join(f"{r}D" for r in ranks)
        raise ValueError(f"expected {accepted} input (got {input.dim()}D input)")


def _register_affine(module: Any, shape: Any, device: Any, dtype: Any, **wanted: bool) -> None:
    """Registers the named parameters (weight=..., bias=...) of the given shape, uninitialized; a name
    whose flag is False is registered as None so the attribute still exists."""
    from ... import _C
    from ..parameter import Parameter

    for name, flag in wanted.items():
        module.register_parameter(name, Parameter(_C.empty(shape, device=device, dtype=dtype)) if flag else None)


def _reset_affine(module: Any) -> None:
    """The identity transform of the norm layers: weight 1 and bias 0, for those that exist."""
    from .. import init

    weight, bias = getattr(module, "weight", None), getattr(module, "bias", None)
    if weight is not None:
        init.ones_(weight)
    if bias is not None:
        init.zeros_(bias)
