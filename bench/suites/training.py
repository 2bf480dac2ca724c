"""Training steps (forward, loss, zero_grad, backward, Adam step) in milliseconds, the same
code for both frameworks (bench/models.py): MLPs, the demo CNN, a TransformerEncoderLayer
and a 2-layer LSTM."""
from __future__ import annotations

from typing import List

from bench import models
from bench.context import Context
from bench.record import Case, ratio_at_most

NAME = "training"
TITLE = "Training steps (Adam)"
ABOUT = "milliseconds per step (forward, loss, zero_grad, backward, optimizer.step())"

TARGETS = {
    models.MLP_256: ratio_at_most(0.7),
    models.CNN: ratio_at_most(1.0),
    models.TRANSFORMER: ratio_at_most(1.0),
    models.LSTM: ratio_at_most(1.0),
}


def run(ctx: Context) -> List[Case]:
    cases = []
    for workload in models.WORKLOADS:
        ops = {}
        for lib in ("cgrad", "torch"):
            fw = getattr(ctx.libs, lib)
            fw.manual_seed(0)
            ops[lib] = models.train_step(fw, workload)
        cases.append(ctx.compare(NAME, workload.name, "ms", ops, TARGETS.get(workload)))
    return cases
