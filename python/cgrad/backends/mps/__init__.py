"""cgrad.backends.mps (torch.backends.mps): Apple's Metal backend. Not built in."""
from __future__ import annotations

__all__ = ["is_available", "is_built"]


def is_available() -> bool:
    """Whether an MPS device can be used: False."""
    return False


def is_built() -> bool:
    """Whether cgrad was built with MPS: False."""
    return False
