"""Elementwise and small linear-algebra ops composed from cgrad ops (and the
C rows of src/ops/elementwise_ops.py where a new loop is needed), so autograd
and higher-order gradients come from the ops they are built of."""
from __future__ import annotations

from typing import List

__all__: List[str] = []  # the public functions, exported as cgrad.<name>


class MathMethods:
    """The Tensor methods of this module's ops (cgrad.Tensor inherits them)."""
