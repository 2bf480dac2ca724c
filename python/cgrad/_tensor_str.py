"""Formatting of tensors like PyTorch's repr: `tensor([1.5000, 2.0000], requires_grad=True)`,
summarised with '...' beyond 1000 elements."""
from __future__ import annotations

import math
from typing import Any, List

_THRESHOLD = 1000
_EDGE = 3
_LINEWIDTH = 80


def _float_formatter(values: List[float]):
    finite = [abs(v) for v in values if math.isfinite(v)]
    if not finite:
        return lambda v: _special(v) or f"{v}"
    ints = all(float(v).is_integer() for v in values if math.isfinite(v))
    vmax, vmin = max(finite), min(finite)
    nonzero = [v for v in finite if v != 0]
    nzmin = min(nonzero) if nonzero else 0.0
    if ints:
        if vmax > 1e8:
            return lambda v: _special(v) or f"{v:.4e}"
        return lambda v: _special(v) or f"{v:.0f}."
    if vmax > 1e8 or (nonzero and (nzmin < 1e-4 or vmax / nzmin > 1000.0)):
        return lambda v: _special(v) or f"{v:.4e}"
    return lambda v: _special(v) or f"{v:.4f}"


def _special(v: float) -> str:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return ""


def _format_values(t: Any, flat: List[Any]):
    if t.dtype.is_floating_point:
        return _float_formatter([float(x) for x in flat])
    if str(t.dtype) == "cgrad.bool":
        return lambda v: "True" if v else "False"
    return lambda v: str(int(v))


def _nested(t: Any, fmt, width: int, indent: int, summarize: bool) -> str:
    if t.dim() == 0:
        return fmt(t.item()).rjust(width)
    n = t.shape[0]
    if t.dim() == 1:
        idx = list(range(n))
        if summarize and n > 2 * _EDGE:
            idx = list(range(_EDGE)) + [None] + list(range(n - _EDGE, n))
        items = ["..." if i is None else fmt(t[i].item()).rjust(width) for i in idx]
        per_line = max(1, (_LINEWIDTH - indent) // (width + 2))
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    idx = list(range(n))
    if summarize and n > 2 * _EDGE:
        idx = list(range(_EDGE)) + [None] + list(range(n - _EDGE, n))
    sep = "," + "\n" * (t.dim() - 1) + " " * (indent + 1)
    parts = ["..." if i is None else _nested(t[i], fmt, width, indent + 1, summarize) for i in idx]
    return "[" + sep.join(parts) + "]"


def _sample(t: Any, summarize: bool) -> List[Any]:
    if not summarize or t.dim() == 0:
        return [v for v in _flatten(t.tolist())]
    out: List[Any] = []
    n = t.shape[0]
    rows = list(range(n)) if n <= 2 * _EDGE else list(range(_EDGE)) + list(range(n - _EDGE, n))
    for i in rows:
        out.extend(_sample(t[i], summarize) if t.dim() > 1 else [t[i].item()])
    return out


def _flatten(x: Any):
    if isinstance(x, list):
        for e in x:
            yield from _flatten(e)
    else:
        yield x


def tensor_repr(t: Any) -> str:
    from . import _C  # local: avoid import cycles

    summarize = t.numel() > _THRESHOLD
    suffixes = []
    prefix = "tensor("
    if t.is_meta:
        body = "..."
        suffixes.append(f"size={tuple(t.shape)}")
    elif t.numel() == 0 and t.dim() != 1:
        body = "[]"
        suffixes.append(f"size={tuple(t.shape)}")
    else:
        flat = _sample(t.detach(), summarize)
        fmt = _format_values(t, flat)
        width = max((len(fmt(v)) for v in flat), default=1)
        body = _nested(t.detach(), fmt, width, len(prefix), summarize)
    if not t.is_meta and str(t.device) != "cpu":
        suffixes.append(f"device='{t.device}'")
    default = _C.get_default_dtype()
    implicit = {default, _C.int64, _C.bool}
    if t.dtype not in implicit or (t.numel() == 0 and t.dtype != default):
        suffixes.append(f"dtype={t.dtype}")
    if t.is_meta:
        suffixes.insert(0, "device='meta'")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return prefix + body + "".join(", " + s for s in suffixes) + ")"
