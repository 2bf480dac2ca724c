"""cgrad.backends.cpu (torch.backends.cpu): the CPU level the engine runs at."""
from __future__ import annotations

__all__ = ["get_cpu_capability"]

_NAMES = {"baseline": "DEFAULT", "avx2": "AVX2", "avx512": "AVX512"}


def get_cpu_capability() -> str:
    """The CPU capability of the engine build in use, in PyTorch's names:
    "DEFAULT" (the x86-64-v2 baseline), "AVX2" or "AVX512" (Note [CPU levels];
    CGRAD_CPU_LEVEL selects a lower one). A -Dnative=true build reports the
    level its compiler flags reach."""
    from ... import _C
    return _NAMES[_C._build_info()["cpu_level"]]
