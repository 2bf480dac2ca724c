"""Matrix multiply n x n float32 (n = 64, 256, 1024, 2048) in GFLOP/s = 2 n^3 / time, for
cgrad, PyTorch and NumPy, beside OpenBLAS's cblas_sgemm called directly from C on the
library cgrad links (bench_native.c; same OpenBLAS thread count), the limit."""
from __future__ import annotations

from typing import List

from bench.context import Context
from bench.harness import StmtIn
from bench.record import Case, limit_fraction_at_least

NAME = "gemm"
TITLE = "GEMM: n x n float32 matmul"
ABOUT = "GFLOP/s (2 n^3 / median time; C limit: best repeat); ratios are time ratios"

SIZES = (64, 256, 1024, 2048)
QUICK_SIZES = (64, 256, 1024)


def run(ctx: Context) -> List[Case]:
    native = ctx.libs.native
    cases = []
    for n in (QUICK_SIZES if ctx.quick else SIZES):
        data = ctx.arrays(n * n)
        ops = {}
        for lib in ("cgrad", "torch", "numpy"):
            a, b = (x.reshape(n, n) for x in data[lib])
            ops[lib] = StmtIn("a @ b", {"a": a, "b": b})
        buffers = None
        if native is not None:
            buffers = native.buffers(n * n, ctx.libs.cgrad.get_num_threads())
            ops["native"] = lambda buffers=buffers, n=n: buffers.sgemm(n)
        target = limit_fraction_at_least(0.9) if n >= 1024 else None
        case = ctx.compare(NAME, f"matmul {n}x{n}", "GFLOP/s", ops, target)
        cases.append(case.with_rate("GFLOP/s", 2 * n**3 / 1e9))
        if buffers is not None:
            buffers.close()
    return cases
