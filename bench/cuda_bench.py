"""bench/cuda_bench.py — the CUDA backend beside PyTorch CUDA on one GPU
(tools/gpu_check.sh runs it on the GPU machine): float32 and bfloat16 matrix
products (TFLOP/s; float32 without TF32 on both sides), an elementwise add and
a full sum (GB/s of bytes moved), and an MLP's forward + backward + update
step (ms). Each figure is the median of timed repeats after warm-ups, with the
device synchronized around the timed region; cgrad and PyTorch run one after
the other in this process, each with the GPU to itself. Prints one line per
measurement with the cgrad/torch ratio (> 1: cgrad is slower).

    python bench/cuda_bench.py
"""
from __future__ import annotations

import statistics
import sys
import time
from typing import Any, Callable

import cgrad

try:
    import torch
except ImportError:  # the bench still reports cgrad's own figures
    torch = None


def _time(fn: Callable[[], Any], sync: Callable[[], None], repeats: int = 10, warmup: int = 3) -> float:
    """Median seconds of fn over `repeats` runs, synchronized."""
    for _ in range(warmup):
        fn()
    sync()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        sync()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def _report(what: str, unit: str, cg: float, th: float | None, scale: float) -> None:
    """cg, th: seconds; scale: work per run in `unit` (TFLOP or GB)."""
    line = f"{what:<34} cgrad {scale / cg:9.2f} {unit}/s"
    if th is not None:
        line += f"   torch {scale / th:9.2f} {unit}/s   cgrad/torch time ratio {cg / th:6.2f}"
    print(line, flush=True)


def main() -> int:
    if not cgrad.cuda.is_available():
        print("cuda_bench: no usable CUDA device; nothing measured")
        return 0
    have_torch = torch is not None and torch.cuda.is_available()
    if have_torch:
        torch.backends.cuda.matmul.allow_tf32 = False
    print(f"cuda_bench on {cgrad.cuda.get_device_name(0)}; torch: {torch.__version__ if have_torch else 'none'}")
    cs = cgrad.cuda.synchronize
    ts = torch.cuda.synchronize if have_torch else None

    for n, dt in ((4096, "float32"), (8192, "bfloat16")):
        a, b = (cgrad.randn(n, n, dtype=getattr(cgrad, dt), device="cuda") for _ in range(2))
        cg = _time(lambda: cgrad.matmul(a, b), cs)
        th = None
        if have_torch:
            x, y = (torch.randn(n, n, dtype=getattr(torch, dt), device="cuda") for _ in range(2))
            th = _time(lambda: torch.matmul(x, y), ts)
        _report(f"matmul {n}x{n}x{n} {dt}", "TFLOP", cg, th, 2 * n ** 3 / 1e12)

    n = 1 << 26
    a, b = cgrad.randn(n, device="cuda"), cgrad.randn(n, device="cuda")
    x = y = None
    if have_torch:
        x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    _report("add 2^26 float32", "GB", _time(lambda: a + b, cs),
            _time(lambda: x + y, ts) if have_torch else None, 3 * 4 * n / 1e9)
    _report("sum 2^26 float32", "GB", _time(lambda: a.sum(), cs),
            _time(lambda: x.sum(), ts) if have_torch else None, 4 * n / 1e9)

    # an MLP step, the update written out so that it runs on the generic kernels
    def mlp_step(lib: Any, dev: str) -> Callable[[], None]:
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(1024, 4096), lib.nn.ReLU(), lib.nn.Linear(4096, 4096), lib.nn.ReLU(),
                                  lib.nn.Linear(4096, 10)).to(dev)
        xb, yb = lib.randn(512, 1024, device=dev), lib.randn(512, 10, device=dev)
        params = list(model.parameters())

        def step() -> None:
            loss = ((model(xb) - yb) ** 2).mean()
            grads = lib.autograd.grad(loss, params)
            with lib.no_grad():
                for p, g in zip(params, grads):
                    p.sub_(g, alpha=1e-3)
        return step
    flops = 3 * 2 * 512 * (1024 * 4096 + 4096 * 4096 + 4096 * 10) / 1e12
    _report("MLP step 1024-4096-4096-10 b512", "TFLOP", _time(mlp_step(cgrad, "cuda"), cs),
            _time(mlp_step(torch, "cuda"), ts) if have_torch else None, flops)
    return 0


if __name__ == "__main__":
    sys.exit(main())
