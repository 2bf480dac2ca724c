"""Named-tuple result types of the ops that return several tensors, as
torch.return_types: max / min (dim overload), sort, topk, cummax -> (values,
indices), aminmax -> (min, max), created by the C binding; and those of the
ops composed in Python: median, nanmedian, kthvalue, mode, cummin -> (values,
indices), histogram / histogramdd -> (hist, bin_edges), frexp -> (mantissa,
exponent)."""
from __future__ import annotations

import collections
from typing import Sequence

from . import _C

_types = _C._return_types()
max = _types["max"]  # noqa: A001 - PyTorch's names
min = _types["min"]  # noqa: A001
sort = _types["sort"]
topk = _types["topk"]
cummax = _types["cummax"]
aminmax = _types["aminmax"]

__all__ = ["max", "min", "sort", "topk", "cummax", "aminmax"]


def _repr(self: tuple) -> str:
    """PyTorch's layout: one field per line."""
    fields = ",\n".join(f"{name}={value!r}" for name, value in zip(self._fields, self))
    return f"{type(self).__module__}.{type(self).__name__}(\n{fields})"


for _t in (max, min, sort, topk, cummax, aminmax):
    if not hasattr(_t, "_fields"):
        _t._fields = tuple(_t.__match_args__)
    _t.__repr__ = _repr


def _composed(name: str, fields: Sequence[str]) -> type:
    t = collections.namedtuple(name, fields, module=__name__)  # type: ignore[misc]
    t.__repr__ = _repr  # type: ignore[assignment]
    return t


median = _composed("median", ("values", "indices"))
nanmedian = _composed("nanmedian", ("values", "indices"))
kthvalue = _composed("kthvalue", ("values", "indices"))
mode = _composed("mode", ("values", "indices"))
cummin = _composed("cummin", ("values", "indices"))
histogram = _composed("histogram", ("hist", "bin_edges"))
histogramdd = _composed("histogramdd", ("hist", "bin_edges"))
frexp = _composed("frexp", ("mantissa", "exponent"))
__all__ += ["median", "nanmedian", "kthvalue", "mode", "cummin", "histogram", "histogramdd", "frexp"]
