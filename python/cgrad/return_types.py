"""Named-tuple result types of the ops that return several tensors, as
torch.return_types: max / min (dim overload), sort, topk, cummax -> (values,
indices), aminmax -> (min, max). The types are created by the C binding."""
from __future__ import annotations

from . import _C

_types = _C._return_types()
max = _types["max"]  # noqa: A001 - PyTorch's names
min = _types["min"]  # noqa: A001
sort = _types["sort"]
topk = _types["topk"]
cummax = _types["cummax"]
aminmax = _types["aminmax"]

__all__ = ["max", "min", "sort", "topk", "cummax", "aminmax"]
