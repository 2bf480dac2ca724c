"""Shape, view-copy, creation and indexing ops that PyTorch composes from others
(torch.functional and the *_copy / *_scatter families), written here with cgrad
ops so autograd, higher-order gradients included, comes from theirs."""
from __future__ import annotations

from typing import List

__all__: List[str] = []  # the public functions, exported as cgrad.<name>


class ShapeMethods:
    """The Tensor methods of this module's ops (cgrad.Tensor inherits them)."""
