"""The libraries under comparison, imported in a fixed order: NumPy and PyTorch before
cgrad, because `import cgrad` sets OPENBLAS_THREAD_TIMEOUT (when unset, cgrad/_engine.py)
and the other libraries' runtimes, loaded first, keep their own defaults. Then the thread
setting and the native limits library (built in build/; None when missing)."""
from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Optional

from bench import native_lib as native_mod
from bench import threads as threads_mod


@dataclass
class Libraries:
    numpy: ModuleType
    torch: ModuleType
    cgrad: ModuleType
    native: Optional[native_mod.Native]
    threads: Optional[int]


def load(threads: Optional[int]) -> Libraries:
    import numpy
    import torch

    import cgrad
    threads_mod.apply(threads, torch, cgrad)
    native = native_mod.load()
    return Libraries(numpy, torch, cgrad, native, threads)
