"""Optimizer step time, cgrad vs PyTorch, in one process: Adam over the
parameters of an MLP 784-256-10 (4 tensors, 203k elements) and of a
30-tensor model (15 Linear(128, 128) layers, 248k elements). PyTorch runs
with its default implementation (on the CPU: the single-tensor loop),
foreach=True and fused=True. Prints the time per step and the ratios
(PyTorch time / cgrad time: above 1 means cgrad is faster).

    .venv/bin/python bench/bench_optim.py [--threads N] [--opt Adam|AdamW|SGD]
"""
import argparse
import time

import numpy as np
import torch

import cgrad
import cgrad.optim


def shapes_mlp():
    return [(256, 784), (256,), (10, 256), (10,)]


def shapes_30():
    return [s for _ in range(15) for s in ((128, 128), (128,))]


def best_time(fn, reps=7, inner=20):
    fn()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        best = min(best, (time.perf_counter() - t0) / inner)
    return best


def bench(shapes, opt_name, kwargs):
    rng = np.random.default_rng(0)
    data = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    grads = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    results = {}
    cp = [cgrad.from_numpy(d.copy()).requires_grad_() for d in data]
    for p, g in zip(cp, grads):
        p.grad = cgrad.from_numpy(g.copy())
    copt = getattr(cgrad.optim, opt_name)(cp, **kwargs)
    results["cgrad"] = best_time(copt.step)
    for label, extra in [("torch default", {}), ("torch foreach", {"foreach": True}),
                         ("torch fused", {"fused": True})]:
        tp = [torch.tensor(d, requires_grad=True) for d in data]
        for p, g in zip(tp, grads):
            p.grad = torch.tensor(g)
        topt = getattr(torch.optim, opt_name)(tp, **kwargs, **extra)
        results[label] = best_time(topt.step)
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--opt", default="Adam")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
        cgrad.set_num_threads(args.threads)
    kwargs = {"lr": 1e-3}
    if args.opt == "SGD":
        kwargs["momentum"] = 0.9
    print(f"{args.opt} step, threads: torch {torch.get_num_threads()}, cgrad {cgrad.get_num_threads()}")
    for name, shapes in [("MLP 784-256-10", shapes_mlp()), ("30-tensor model", shapes_30())]:
        r = bench(shapes, args.opt, kwargs)
        base = r["cgrad"]
        line = ", ".join(f"{k} {v * 1e6:.1f} us" + ("" if k == "cgrad" else f" (x{v / base:.2f})")
                         for k, v in r.items())
        print(f"{name}: {line}")


if __name__ == "__main__":
    main()
