"""Optimizer step alone, cgrad vs PyTorch's CPU implementations (the default
single-tensor loop, foreach=True, fused=True where PyTorch has it), in microseconds per
step, over the parameters of an MLP 784-256-10 (4 tensors, 203k elements), of 15
Linear(128, 128) layers (30 tensors, 248k elements) and 10 tensors of 1M elements (all
float32). Gradients are fixed random tensors."""
from __future__ import annotations

from typing import List

from bench.context import Context
from bench.record import Case

NAME = "optim"
TITLE = "Optimizer step"
ABOUT = "microseconds per step; PyTorch runs the implementation named in the case"

SHAPES = {
    "MLP 784-256-10": [(256, 784), (256,), (10, 256), (10,)],
    "15 x Linear(128, 128)": [s for _ in range(15) for s in ((128, 128), (128,))],
    "10 x 1M": [(1 << 20,)] * 10,
}
# (optimizer, options, PyTorch variants)
OPTIMIZERS = (
    ("Adam", {"lr": 1e-3}, ("default", "foreach", "fused")),
    ("AdamW", {"lr": 1e-3}, ("default", "fused")),
    ("SGD", {"lr": 1e-3, "momentum": 0.9}, ("default", "foreach")),
    ("Adadelta", {}, ("default", "foreach")),
    ("Adamax", {}, ("default", "foreach")),
    ("NAdam", {}, ("default", "foreach")),
    ("RAdam", {}, ("default", "foreach")),
    ("Rprop", {}, ("default", "foreach")),
    ("ASGD", {}, ("default", "foreach")),
)
VARIANT_OPTIONS = {"default": {}, "foreach": {"foreach": True}, "fused": {"fused": True}}


def _params(fw, data, grads):
    params = []
    for d, g in zip(data, grads):
        p = fw.from_numpy(d.copy()).requires_grad_()
        p.grad = fw.from_numpy(g.copy())
        params.append(p)
    return params


def run(ctx: Context) -> List[Case]:
    np, torch, cgrad = ctx.libs.numpy, ctx.libs.torch, ctx.libs.cgrad
    rng = np.random.default_rng(0)
    cases = []
    for model, shapes in SHAPES.items():
        data = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        grads = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        for opt, options, variants in OPTIMIZERS:
            for variant in variants:
                c_opt = getattr(cgrad.optim, opt)(_params(cgrad, data, grads), **options)
                t_opt = getattr(torch.optim, opt)(_params(torch, data, grads), **options,
                                                  **VARIANT_OPTIONS[variant])
                name = f"{opt}, {model} (PyTorch {variant})"
                cases.append(ctx.compare(NAME, name, "us", {"cgrad": c_opt.step, "torch": t_opt.step}))
    return cases
