"""The main job: seconds per Fashion-MNIST training epoch of the demo
(cgrad.examples.fashion_mnist: its model, data loading, AdamW + OneCycle, batch 64),
cgrad vs PyTorch, one epoch each. The demo's own train() runs with --epochs 1; the
epoch time is read from its progress bar (construction to the final update), so data
loading, evaluation and the checkpoint round trip are not counted. --quick trains on
the first 10 000 images. Skipped when the dataset is not installed."""
from __future__ import annotations

import argparse
import contextlib
import io
import os
from typing import Dict, List

from bench.context import Context
from bench.record import Case, Result, ratio_at_most

NAME = "mainjob"
TITLE = "Main job: Fashion-MNIST epoch of the demo"
ABOUT = "seconds per training epoch (demo model, batch 64, AdamW + OneCycleLR)"

QUICK_SUBSET = 10_000


def _epoch_seconds(demo, fw, subset: int) -> float:
    """Runs the demo's train() for one epoch and returns the epoch's wall time."""
    times: List[float] = []
    base = demo.Progress

    class Timed(base):
        def update(self, done, loss, final=False):
            super().update(done, loss, final)
            if final:
                times.append(demo.time.perf_counter() - self.start)

    args = argparse.Namespace(epochs=1, batch_size=64, lr=3e-3, data=None, seed=0, subset=subset)
    demo.Progress = Timed
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            demo.train(fw, args)
    finally:
        demo.Progress = base
    if len(times) != 1:
        raise RuntimeError("the demo's progress bar did not report one finished epoch")
    return times[0]


def run(ctx: Context) -> List[Case]:
    from cgrad.datasets.fashion_mnist import DEFAULT_ROOT
    from cgrad.examples import fashion_mnist as demo
    if not os.path.isdir(DEFAULT_ROOT):
        print(f"  mainjob skipped: Fashion-MNIST is not installed at {DEFAULT_ROOT} "
              "(apt-get install dataset-fashion-mnist, or `make data` as root)")
        return []
    subset = QUICK_SUBSET if ctx.quick else 0
    # One epoch each (a full epoch lasts tens of seconds; repeating it would double the
    # time of `make bench`), cgrad first, then PyTorch.
    samples: Dict[str, List[float]] = {"cgrad": [], "torch": []}
    for lib in samples:
        samples[lib].append(_epoch_seconds(demo, getattr(ctx.libs, lib), subset))
    name = f"epoch, {'10 000 images' if subset else '60 000 images'}, batch 64"
    results = {lib: Result.from_samples(NAME, name, lib, "s", v) for lib, v in samples.items()}
    return [Case(NAME, name, "s", results, ratio_at_most(1.0))]
