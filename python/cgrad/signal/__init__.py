"""cgrad.signal: torch.signal (the window functions of cgrad.signal.windows)."""
from . import windows

__all__ = ["windows"]
