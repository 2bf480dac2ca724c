"""Start-up and memory, in fresh processes: the time of the `import` statement for cgrad,
PyTorch and NumPy (runs interleaved, median; the editable install's rebuild check, which
a wheel does not have, runs before the clock starts), and the peak RSS of a child that
only imports the framework, and of one that then runs 500 training steps of the
MLP 784-256-10 at batch 128 (bench/memory_child.py)."""
from __future__ import annotations

import subprocess
import sys
import time
from typing import Dict, List, Tuple

from bench.context import Context
from bench.native_lib import ROOT
from bench.record import Case, Result, ratio_at_most

NAME = "startup"
TITLE = "Start-up and memory"
ABOUT = "import: seconds for the import statement in a fresh process (median); RSS: peak MB of a fresh child"

IMPORT_CODE = ("import importlib.util, time; importlib.util.find_spec({mod!r}); "
               "t = time.perf_counter(); import {mod}; print(time.perf_counter() - t)")
STEPS = 500


def _import_once(module: str) -> Tuple[float, float]:
    """(import statement seconds, whole process wall seconds)."""
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", IMPORT_CODE.format(mod=module)], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    return float(out.strip().splitlines()[-1]), time.perf_counter() - start


def _peak_rss_mb(framework: str, steps: int, threads: int) -> float:
    """Peak RSS in MB (2^20 bytes) of a fresh child (it prints its own, in KiB)."""
    out = subprocess.run([sys.executable, "-m", "bench.memory_child", framework, str(steps), str(threads)],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return int(out.strip().splitlines()[-1]) / 1024


def _results(case: str, unit: str, samples: Dict[str, List[float]]) -> Dict[str, Result]:
    return {lib: Result.from_samples(NAME, case, lib, unit, values) for lib, values in samples.items()}


def run(ctx: Context) -> List[Case]:
    runs = 3 if ctx.quick else 5
    libs = ("cgrad", "torch", "numpy")
    for lib in libs:  # warm the file cache (and let an editable install finish building)
        _import_once(lib)
    times: Dict[str, List[float]] = {lib: [] for lib in libs}
    walls: Dict[str, List[float]] = {lib: [] for lib in libs}
    for _ in range(runs):
        for lib in libs:
            t, wall = _import_once(lib)
            times[lib].append(t)
            walls[lib].append(wall)
    imports = Case(NAME, "import", "s", _results("import", "s", times), ratio_at_most(0.2))
    for lib, r in imports.results.items():
        r.derived["process wall s"] = sorted(walls[lib])[len(walls[lib]) // 2]

    rss_runs = 1 if ctx.quick else 2
    threads = ctx.threads or 0
    bare: Dict[str, List[float]] = {lib: [] for lib in libs}
    trained: Dict[str, List[float]] = {lib: [] for lib in ("cgrad", "torch")}
    for _ in range(rss_runs):
        for lib in libs:
            bare[lib].append(_peak_rss_mb(lib, 0, threads))
        for lib in trained:
            trained[lib].append(_peak_rss_mb(lib, STEPS, threads))
    return [
        imports,
        Case(NAME, "peak RSS, import only", "MB", _results("peak RSS, import only", "MB", bare)),
        Case(NAME, f"peak RSS, {STEPS} steps MLP 784-256-10 batch 128", "MB",
             _results(f"peak RSS, {STEPS} steps", "MB", trained), ratio_at_most(0.5)),
    ]
