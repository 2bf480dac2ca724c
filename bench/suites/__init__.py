"""The benchmark suites, in run order. Each module has NAME, TITLE, ABOUT (what the cells
mean) and run(ctx) -> list of record.Case; `python -m bench --suite NAME` runs one."""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import List

NAMES = ("dispatch", "bandwidth", "gemm", "training", "optim", "conv", "pool", "amp", "startup", "dataloader", "mainjob")


def get(name: str) -> ModuleType:
    if name not in NAMES:
        raise KeyError(f"unknown suite {name!r} (suites: {', '.join(NAMES)})")
    return importlib.import_module(f"bench.suites.{name}")


def all_suites() -> List[ModuleType]:
    return [get(n) for n in NAMES]
