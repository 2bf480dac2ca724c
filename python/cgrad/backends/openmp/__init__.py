"""cgrad.backends.openmp (torch.backends.openmp). cgrad's thread pool is its
own, not OpenMP (cgrad.get_num_threads / set_num_threads size it), so
`is_available()` is False."""
from __future__ import annotations

__all__ = ["is_available"]


def is_available() -> bool:
    """Whether cgrad was built with OpenMP: False."""
    return False
