"""The torch.nn.functional pooling, unpooling, sampling and patch ops that
cgrad composes from its own ops (re-exported by cgrad.nn.functional)."""
from __future__ import annotations

from typing import List

__all__: List[str] = []
