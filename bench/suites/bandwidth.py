"""Memory bandwidth of large elementwise ops and a reduction (1M and 10M float32 elements):
GB/s = bytes read + written / time, for cgrad, PyTorch and NumPy, beside a STREAM-style
c[i] = a[i] + b[i] C loop over pre-touched buffers (bench_native.c, OpenMP with cgrad's
thread count), whose best repeat is the machine's limit."""
from __future__ import annotations

from typing import List

from bench.context import Context
from bench.harness import StmtIn
from bench.record import Case, all_of, limit_fraction_at_least, ratio_at_most

NAME = "bandwidth"
TITLE = "Bandwidth: large elementwise ops"
ABOUT = "GB/s (bytes read + written / median time; C limit: best repeat); ratios are time ratios"

SIZES = (1_000_000, 10_000_000)
# (case, cgrad / torch statement, NumPy statement, arrays touched: inputs + output)
OPS = (
    ("a + b", "a + b", "a + b", 3),
    ("a * b", "a * b", "a * b", 3),
    ("exp", "a.exp()", "np.exp(a)", 2),
    ("relu", "a.relu()", "np.maximum(a, 0)", 2),
    ("sum", "a.sum()", "a.sum()", 1),
)


def run(ctx: Context) -> List[Case]:
    np = ctx.libs.numpy
    native = ctx.libs.native
    threads = ctx.libs.cgrad.get_num_threads()
    cases = []
    for n in SIZES:
        data = ctx.arrays(n)
        buffers = native.buffers(n, threads) if native is not None else None
        for op, stmt, np_stmt, arrays in OPS:
            ops = {lib: StmtIn(stmt, {"a": data[lib][0], "b": data[lib][1]}) for lib in ("cgrad", "torch")}
            ops["numpy"] = StmtIn(np_stmt, {"a": data["numpy"][0], "b": data["numpy"][1], "np": np})
            target = None
            if op == "a + b":
                if buffers is not None:
                    ops["native"] = lambda: buffers.add(threads)
                if n == 10_000_000:
                    target = all_of(limit_fraction_at_least(0.8), ratio_at_most(0.6))
            case = ctx.compare(NAME, f"{op}, n={n:,}", "GB/s", ops, target)
            cases.append(case.with_rate("GB/s", arrays * 4 * n / 1e9))
        if buffers is not None:
            buffers.close()
    return cases
