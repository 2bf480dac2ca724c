"""cgrad.backends.mkldnn (torch.backends.mkldnn): oneDNN. cgrad does not use
oneDNN (its CPU kernels are its own and OpenBLAS), so `is_available()` is
False, unlike PyTorch's x86 builds: scripts that test it then keep to plain
tensors instead of calling `to_mkldnn()`. `enabled` is kept as a setting."""
from __future__ import annotations

__all__ = ["is_available", "enabled"]

enabled = True


def is_available() -> bool:
    """Whether oneDNN can be used: False (cgrad does not link it)."""
    return False
