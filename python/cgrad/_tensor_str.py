"""Formatting of tensors exactly like PyTorch's repr (torch/_tensor_str.py with the
default print options): `tensor([1.5000, 2.0000], requires_grad=True)`, fixed or
scientific notation chosen from the non-zero finite values, summarised with '...'
beyond 1000 elements, suffixes wrapped at 80 columns."""
from __future__ import annotations

import math
from typing import Any, List

_PRECISION = 4
_THRESHOLD = 1000
_EDGE = 3
_LINEWIDTH = 80


class _Formatter:
    """Chooses int / fixed / scientific mode and the common width from the values shown."""

    def __init__(self, floating: bool, values: List[Any]) -> None:
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        if not floating:
            for v in values:
                self.max_width = max(self.max_width, len(f"{v}"))
            return
        nz = [v for v in values if math.isfinite(v) and v != 0]
        if not nz:
            return
        absv = [abs(v) for v in nz]
        vmin, vmax = min(absv), max(absv)
        self.int_mode = all(v == math.ceil(v) for v in nz)
        self.sci_mode = vmax / vmin > 1000.0 or vmax > 1.0e8 or vmin < 1.0e-4
        for v in nz:
            if self.sci_mode:
                w = len(f"{v:.{_PRECISION}e}")
            elif self.int_mode:
                w = len(f"{v:.0f}") + 1
            else:
                w = len(f"{v:.{_PRECISION}f}")
            self.max_width = max(self.max_width, w)

    def format(self, value: Any) -> str:
        if self.floating:
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{_PRECISION}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{_PRECISION}f}"
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _flatten(x: Any, out: List[Any]) -> List[Any]:
    if isinstance(x, list):
        for e in x:
            _flatten(e, out)
    else:
        out.append(x)
    return out


def _summarized_values(t: Any) -> List[Any]:
    """The values PyTorch's get_summarized_data keeps: edge items along every dim."""
    if t.dim() == 0:
        return [t.item()]
    n = t.shape[0]
    if t.dim() == 1:
        if n > 2 * _EDGE:
            return t[:_EDGE].tolist() + t[-_EDGE:].tolist()
        return t.tolist()
    rows = range(n) if n <= 2 * _EDGE else list(range(_EDGE)) + list(range(n - _EDGE, n))
    out: List[Any] = []
    for i in rows:
        out.extend(_summarized_values(t[i]))
    return out


def _vector_str(t: Any, indent: int, summarize: bool, fmt: _Formatter) -> str:
    element_length = fmt.max_width + 2
    per_line = max(1, math.floor((_LINEWIDTH - indent) / element_length))
    if summarize and t.shape[0] > 2 * _EDGE:
        data = [fmt.format(v) for v in t[:_EDGE].tolist()] + [" ..."] + [fmt.format(v) for v in t[-_EDGE:].tolist()]
    else:
        data = [fmt.format(v) for v in t.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str_with_formatter(t: Any, indent: int, summarize: bool, fmt: _Formatter) -> str:
    dim = t.dim()
    if dim == 0:
        return fmt.format(t.item())
    if dim == 1:
        return _vector_str(t, indent, summarize, fmt)
    n = t.shape[0]
    if summarize and n > 2 * _EDGE:
        slices = ([_tensor_str_with_formatter(t[i], indent + 1, summarize, fmt) for i in range(_EDGE)] + ["..."] +
                  [_tensor_str_with_formatter(t[i], indent + 1, summarize, fmt) for i in range(n - _EDGE, n)])
    else:
        slices = [_tensor_str_with_formatter(t[i], indent + 1, summarize, fmt) for i in range(n)]
    return "[" + ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(slices) + "]"


def _tensor_str(t: Any, indent: int) -> str:
    if t.numel() == 0:
        return "[]"
    summarize = t.numel() > _THRESHOLD
    values = _summarized_values(t) if summarize else _flatten(t.tolist(), [])
    fmt = _Formatter(t.dtype.is_floating_point, values)
    return _tensor_str_with_formatter(t, indent, summarize, fmt)


def _add_suffixes(tensor_str: str, suffixes: List[str], indent: int) -> str:
    parts = [tensor_str]
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > _LINEWIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(inp: Any) -> str:
    """repr(tensor) as PyTorch writes it (with 'cgrad.' dtype names)."""
    from . import _C  # local: avoid import cycles

    cls = type(inp)
    is_plain = cls.__name__ in ("Tensor", "Parameter") and cls.__module__.startswith("cgrad")
    prefix = "tensor(" if is_plain else f"{cls.__name__}("
    indent = len(prefix)
    suffixes: List[str] = []
    t = inp.detach()
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    default = _C.get_default_dtype()
    has_default_dtype = t.dtype in (default, _C.int64, _C.bool)
    if t.is_meta:
        suffixes.append("size=" + str(tuple(t.shape)))
        if t.dtype != default:
            suffixes.append(f"dtype={t.dtype}")
        tensor_str = "..."
    elif t.numel() == 0:
        if t.dim() != 1:
            suffixes.append("size=" + str(tuple(t.shape)))
        if t.dtype != default:
            suffixes.append(f"dtype={t.dtype}")
        tensor_str = "[]"
    else:
        if not has_default_dtype:
            suffixes.append(f"dtype={t.dtype}")
        tensor_str = _tensor_str(t.cpu() if t.is_cuda else t, indent)  # one copy from the device, not one per row
    grad_fn = inp.grad_fn
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{grad_fn.name()}>")
    elif inp.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + tensor_str, suffixes, indent)
