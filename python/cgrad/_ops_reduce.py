"""Order statistics, counting and searching ops (median, quantile, kthvalue,
mode, unique, bincount, histc, searchsorted, ...) composed from cgrad ops
(sort, gather, scatter, comparisons), so their gradients come from those."""
from __future__ import annotations

from typing import List

__all__: List[str] = []  # the public functions, exported as cgrad.<name>


class ReduceMethods:
    """The Tensor methods of this module's ops (cgrad.Tensor inherits them)."""
