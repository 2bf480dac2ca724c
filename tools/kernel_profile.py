"""kernel_profile.py — single ops and training steps, cgrad vs PyTorch, in one process.

Each case builds the same inputs for both frameworks and times them interleaved
(best of several repetitions, CPU time of the calling thread when one thread is
used, so a loaded machine disturbs the figures less). Prints times and the
ratio cgrad / PyTorch (below 1: cgrad is faster).

    .venv/bin/python tools/kernel_profile.py [ops] [steps] [--threads N] [-k SUBSTRING]

ops:   elementwise math, reductions (every layout), softmax / log_softmax,
       layer_norm, cross_entropy, scaled_dot_product_attention at the shapes
       of the MLP / transformer / LSTM steps
steps: training steps (forward, loss, backward, Adam): MLP 784-256-10 batch
       128, TransformerEncoderLayer(128, 4) on (64, 32, 128), LSTM(128, 256,
       2 layers) on (64, 32, 128)"""
import argparse
import statistics
import time

import numpy as np
import torch

import cgrad


def best_time(fn, clk, reps=7, target=0.02):
    fn()
    t0 = time.perf_counter()
    fn()
    inner = max(1, int(target / max(time.perf_counter() - t0, 1e-6)))
    best = float("inf")
    for _ in range(reps):
        t0 = clk()
        for _ in range(inner):
            fn()
        best = min(best, (clk() - t0) / inner)
    return best


def compare(name, make, clk):
    fc, ft = make(cgrad), make(torch)
    tc, tt = [], []
    for _ in range(3):  # interleaved rounds
        tc.append(best_time(fc, clk, reps=3))
        tt.append(best_time(ft, clk, reps=3))
    c, t = min(tc), min(tt)
    print(f"{name:44s} cgrad {c * 1e6:10.1f} us  torch {t * 1e6:10.1f} us  ratio {c / t:5.2f}", flush=True)


def op_cases(rng):
    def arr(*shape, pos=False):
        a = rng.standard_normal(shape).astype(np.float32)
        return np.abs(a) + 0.1 if pos else a

    def ten(fw, a, grad=False):
        t = fw.from_numpy(a.copy())
        return t.requires_grad_() if grad else t

    def unary(expr, shape, backward=False, pos=False):
        a, g = arr(*shape, pos=pos), arr(*shape)

        def make(fw):
            x, gg = ten(fw, a, backward), ten(fw, g)
            f = eval(expr, {"fw": fw, "F": fw.nn.functional})
            if not backward:
                return lambda: f(x)

            def run():
                f(x).backward(gg)
                x.grad = None
            return run
        return make

    for n in (8192, 1_000_000):
        for e in ["fw.exp", "fw.log", "fw.tanh", "fw.sigmoid", "F.silu", "F.gelu", "fw.erf", "F.softplus", "F.elu",
                  "F.logsigmoid", "F.mish"]:
            yield f"{e}({n})", unary(e, (n,), pos=e == "fw.log")
    for e in ["fw.tanh", "fw.sigmoid", "F.silu", "F.gelu", "F.relu"]:
        yield f"{e} fwd+bwd (32, 1024)", unary(e, (32, 1024), backward=True)

    for shape, dims in [((2048, 1024), (0,)), ((2048, 1024), (1,)), ((2048, 128), (0,)), ((32, 64, 128), (1,)),
                        ((64, 32, 128), (0, 1)), ((10_000_000,), None)]:
        a = arr(*shape)
        for op in ("sum", "mean", "var", "amax"):
            def make(fw, a=a, op=op, dims=dims):
                x, f = ten(fw, a), getattr(fw, op)
                return (lambda: f(x)) if dims is None else (lambda: f(x, dims))
            yield f"{op}{shape} dims={dims}", make

    for shape, dim in [((128, 4, 64, 64), -1), ((128, 10), 1), ((2048, 1000), 1)]:
        a, g = arr(*shape), arr(*shape)
        for fn in ("softmax", "log_softmax"):
            def make(fw, a=a, g=g, fn=fn, dim=dim):
                x, gg, f = ten(fw, a, True), ten(fw, g), getattr(fw, fn)

                def run():
                    f(x, dim).backward(gg)
                    x.grad = None
                return run
            yield f"{fn}{shape} fwd+bwd", make

    a, y = arr(128, 10), rng.integers(0, 10, 128)

    def make_ce(fw):
        x, t = ten(fw, a, True), fw.from_numpy(y.copy())

        def run():
            fw.nn.functional.cross_entropy(x, t).backward()
            x.grad = None
        return run
    yield "cross_entropy (128, 10) fwd+bwd", make_ce

    a, g = arr(64, 32, 128), arr(64, 32, 128)

    def make_ln(fw):
        ln, x, gg = fw.nn.LayerNorm(128), ten(fw, a, True), ten(fw, g)

        def run():
            ln(x).backward(gg)
            x.grad = ln.weight.grad = ln.bias.grad = None
        return run
    yield "layer_norm (64, 32, 128) fwd+bwd", make_ln

    q, k, v, g = (arr(32, 4, 64, 32) for _ in range(4))

    def make_sdpa(fw):
        Q, K, V, G = ten(fw, q, True), ten(fw, k, True), ten(fw, v, True), ten(fw, g)

        def run():
            fw.nn.functional.scaled_dot_product_attention(Q, K, V).backward(G)
            Q.grad = K.grad = V.grad = None
        return run
    yield "sdpa (32, 4, 64, 32) fwd+bwd", make_sdpa


def build_step(fw, which):
    nn = fw.nn
    fw.manual_seed(0)
    if which == "mlp":
        m = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
        x, y = fw.randn(128, 784), fw.randint(0, 10, (128,))
        loss = lambda: nn.functional.cross_entropy(m(x), y)
    elif which == "transformer":
        m = nn.TransformerEncoderLayer(128, 4)
        x, t = fw.randn(64, 32, 128), fw.randn(64, 32, 128)
        loss = lambda: nn.functional.mse_loss(m(x), t)
    else:
        m = nn.LSTM(128, 256, num_layers=2)
        x, t = fw.randn(64, 32, 128), fw.randn(64, 32, 256)
        loss = lambda: nn.functional.mse_loss(m(x)[0], t)
    opt = fw.optim.Adam(m.parameters(), lr=1e-3)

    def step():
        opt.zero_grad()
        loss().backward()
        opt.step()
    return step


def run_steps(clk, keep):
    for which, reps in (("mlp", 60), ("transformer", 12), ("lstm", 8)):
        if not keep(which):
            continue
        sc, st = build_step(cgrad, which), build_step(torch, which)
        for _ in range(2):
            sc(), st()
        tc, tt = [], []
        for _ in range(reps):
            t0 = clk()
            sc()
            tc.append(clk() - t0)
            t0 = clk()
            st()
            tt.append(clk() - t0)
        c, t = statistics.median(tc), statistics.median(tt)
        print(f"{which + ' step':44s} cgrad {c * 1e3:10.2f} ms  torch {t * 1e3:10.2f} ms  ratio {c / t:5.2f} "
              f"(min-based {min(tc) / min(tt):5.2f})", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("groups", nargs="*", default=["ops", "steps"])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("-k", default="")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    cgrad.set_num_threads(args.threads)
    clk = time.thread_time if args.threads == 1 else time.perf_counter
    keep = lambda name: args.k in name
    if "ops" in args.groups:
        for name, make in op_cases(np.random.default_rng(0)):
            if keep(name):
                compare(name, make, clk)
    if "steps" in args.groups:
        run_steps(clk, keep)


if __name__ == "__main__":
    main()
