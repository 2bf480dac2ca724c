"""Dispatch overhead: small ops (a + b, a * b, a.sum(), relu) on 1, 100 and 10 000 float32
elements, in microseconds per call; the same with an input that requires grad (graph
recording, cgrad vs PyTorch), and a tiny graph (a * b).sum().backward() on 1 000 elements."""
from __future__ import annotations

from typing import List

from bench.context import Context
from bench.harness import StmtIn
from bench.record import Case, all_of, ratio_at_most

NAME = "dispatch"
TITLE = "Dispatch: small ops"
ABOUT = "microseconds per call (median +- half the min-max range)"

SIZES = (1, 100, 10_000)
# (case, statement for cgrad and torch, statement for NumPy)
OPS = (
    ("a + b", "a + b", "a + b"),
    ("a * b", "a * b", "a * b"),
    ("a.sum()", "a.sum()", "a.sum()"),
    ("relu", "a.relu()", "np.maximum(a, 0)"),
)


def _target(op: str, n: int, grad: bool):
    if op == "a + b" and n == 100 and not grad:
        return all_of(ratio_at_most(0.25), ratio_at_most(1.0, "numpy"))
    return None


def run(ctx: Context) -> List[Case]:
    np = ctx.libs.numpy
    cases = []
    for grad in (False, True):
        for n in SIZES:
            data = ctx.arrays(n)
            if grad:
                data["cgrad"][0].requires_grad_()
                data["torch"][0].requires_grad_()
            for op, stmt, np_stmt in OPS:
                ops = {lib: StmtIn(stmt, {"a": data[lib][0], "b": data[lib][1]}) for lib in ("cgrad", "torch")}
                if not grad:
                    ops["numpy"] = StmtIn(np_stmt, {"a": data["numpy"][0], "b": data["numpy"][1], "np": np})
                name = f"{op}, n={n:,}" + (", requires_grad" if grad else "")
                cases.append(ctx.compare(NAME, name, "us", ops, _target(op, n, grad)))
    data = ctx.arrays(1000)
    for lib in ("cgrad", "torch"):
        for t in data[lib]:
            t.requires_grad_()
    ops = {lib: StmtIn("(a * b).sum().backward()", {"a": data[lib][0], "b": data[lib][1]})
           for lib in ("cgrad", "torch")}
    cases.append(ctx.compare(NAME, "(a * b).sum().backward(), n=1,000", "us", ops, ratio_at_most(0.25),
                             note="gradients accumulate into a.grad, b.grad"))
    return cases
