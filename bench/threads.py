"""Thread settings: `None` is each library's default; N sets OMP_NUM_THREADS,
OPENBLAS_NUM_THREADS and MKL_NUM_THREADS before the libraries are imported (NumPy's BLAS
follows them) and torch.set_num_threads(N) / cgrad.set_num_threads(N) after. Environment
variables only act before import, so the runner starts one child process per setting."""
from __future__ import annotations

import os
from typing import Dict, Mapping, Optional

ENV_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def parse(text: str) -> Optional[int]:
    """'default' (or 0) -> None; a positive integer -> that count."""
    if text.strip().lower() in ("default", "0"):
        return None
    n = int(text)
    if n < 1:
        raise ValueError(f"thread count must be positive or 'default', got {text!r}")
    return n


def label(threads: Optional[int]) -> str:
    return "default threads" if threads is None else f"{threads} thread{'s' if threads > 1 else ''}"


def child_env(threads: Optional[int], base: Mapping[str, str] = os.environ) -> Dict[str, str]:
    """The environment of a child process running with `threads`."""
    env = dict(base)
    if threads is not None:
        for var in ENV_VARS:
            env[var] = str(threads)
    return env


def apply(threads: Optional[int], torch_module, cgrad_module) -> None:
    """The libraries' own thread calls, after import (nothing for the default)."""
    if threads is not None:
        torch_module.set_num_threads(threads)
        cgrad_module.set_num_threads(threads)


def in_effect(libs) -> Dict[str, object]:
    """The thread counts each library runs with, as far as they can be read."""
    counts: Dict[str, object] = {
        "cgrad": libs.cgrad.get_num_threads(),
        "torch": libs.torch.get_num_threads(),
        "numpy BLAS": os.environ.get("OPENBLAS_NUM_THREADS", "default"),
    }
    if libs.native is not None:
        counts["OpenBLAS (cgrad, C limit)"] = libs.native.blas_threads()
        counts["C add loop"] = libs.cgrad.get_num_threads()
    return counts
