"""DataLoader workers, in fresh processes: seconds per epoch of a worker-bound loader
(2 workers, 24 batches of 32 images 3x224x224 float32, 19 MB each; bench/dataloader_child.py).
cgrad's batches come back through shared memory (cgrad.multiprocessing), as PyTorch's do;
the derived figure is the same loader with that turned off (pickled copies)."""
from __future__ import annotations

import subprocess
import sys
from typing import List

from bench.context import Context
from bench.native_lib import ROOT
from bench.record import Case, Result, ratio_at_most

NAME = "dataloader"
TITLE = "DataLoader workers"
ABOUT = "seconds per epoch (best of 3 in a fresh process), 2 workers, 19 MB batches"


def _epoch_s(lib: str, mode: str) -> float:
    out = subprocess.run([sys.executable, "-m", "bench.dataloader_child", lib, mode], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    return float(out.strip().splitlines()[-1])


def run(ctx: Context) -> List[Case]:
    runs = 1 if ctx.quick else 2
    samples = {"cgrad": [], "torch": []}
    pickled = []
    for _ in range(runs):
        samples["cgrad"].append(_epoch_s("cgrad", "shared"))
        samples["torch"].append(_epoch_s("torch", "shared"))
        pickled.append(_epoch_s("cgrad", "pickled"))
    case = "epoch, 2 workers, batches 32x3x224x224"
    results = {lib: Result.from_samples(NAME, case, lib, "s", v) for lib, v in samples.items()}
    results["cgrad"].derived["pickled copies s"] = min(pickled)
    results["cgrad"].derived["speed-up over pickled"] = min(pickled) / min(samples["cgrad"])
    return [Case(NAME, case, "s", results, ratio_at_most(1.0))]
