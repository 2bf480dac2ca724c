"""Mixed precision: bfloat16 autocast against float32 for matmul 1024 and the MLP / CNN
training steps (bench/models.py), cgrad beside PyTorch's CPU autocast in the same run, and
the bfloat16 matmul alone (operands already bfloat16). The
note of each autocast case gives each library's autocast / float32 time ratio."""
from __future__ import annotations

import contextlib
from typing import Any, Callable, List

from bench import models
from bench.context import Context
from bench.record import Case

NAME = "amp"
TITLE = "Mixed precision: bfloat16 autocast vs float32"
ABOUT = "milliseconds (median); each autocast row's note (JSON): autocast time / float32 time per library"

WORKLOADS = (models.MLP_256, models.CNN)


def _under(fw: Any, amp: bool, fn: Callable[[], object]) -> Callable[[], None]:
    def run() -> None:
        ctx = fw.autocast("cpu", dtype=fw.bfloat16) if amp else contextlib.nullcontext()
        with ctx:
            fn()
    return run


def _matmul(fw: Any, a: Any, b: Any) -> Callable[[], object]:
    return lambda: a @ b


def _train_step(fw: Any, workload: models.Workload, amp: bool) -> Callable[[], None]:
    fw.manual_seed(0)
    model, x, loss_fn = workload.build(fw)
    model.train()
    opt = fw.optim.Adam(model.parameters(), lr=1e-3)

    def step() -> None:
        with fw.autocast("cpu", dtype=fw.bfloat16, enabled=amp):
            out = model(x)
        loss = loss_fn(out.float())
        opt.zero_grad()
        loss.backward()
        opt.step()
    return step


def _pair(ctx: Context, name: str, make: Callable[[Any, bool], Callable[[], None]]) -> List[Case]:
    cases = []
    for amp in (False, True):
        ops = {lib: make(getattr(ctx.libs, lib), amp) for lib in ("cgrad", "torch")}
        cases.append(ctx.compare(NAME, f"{name}, {'bf16 autocast' if amp else 'float32'}", "ms", ops))
    f32, bf16 = cases
    ratios = {lib: bf16.results[lib].median / f32.results[lib].median for lib in ("cgrad", "torch")
              if lib in bf16.results and lib in f32.results and f32.results[lib].median > 0}
    bf16.note = "autocast / float32: " + ", ".join(f"{lib} {r:.2f}x" for lib, r in ratios.items())
    return cases


def run(ctx: Context) -> List[Case]:
    n = 1024
    data = ctx.arrays(n * n)
    mats = {lib: [x.reshape(n, n) for x in data[lib]] for lib in ("cgrad", "torch")}
    cases = _pair(ctx, f"matmul {n}x{n}",
                  lambda fw, amp: _under(fw, amp, _matmul(fw, *mats["cgrad" if fw is ctx.libs.cgrad else "torch"])))
    # the product alone: operands already bfloat16 (no casts in the timed call)
    low = {lib: [m.to(getattr(ctx.libs, lib).bfloat16) for m in mats[lib]] for lib in ("cgrad", "torch")}
    cases.append(ctx.compare(NAME, f"matmul {n}x{n}, bf16 operands, no autocast", "ms",
                             {lib: _matmul(getattr(ctx.libs, lib), *low[lib]) for lib in ("cgrad", "torch")}))
    for workload in WORKLOADS:
        cases += _pair(ctx, f"train step {workload.name}", lambda fw, amp, w=workload: _train_step(fw, w, amp))
    return cases
