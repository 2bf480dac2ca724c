"""Piecewise activations at 0, -0, +-inf, NaN and their kink points (and just
beside them), forward and backward, float32 and float64, against torch.

PyTorch's CPU answer at some of these points depends on where the element sits
(its vectorised loop body and its scalar tail disagree at NaN: Note [NaN in
piecewise gradients], src/ops/activations.c). The reference is therefore torch
on one-element tensors (always its scalar loop, the branch conditions as
written), and cgrad is evaluated with every value repeated along a long tensor,
so its answer must not depend on the position (nor on the SIMD level).
DECIDED lists the points where cgrad keeps a documented value of its own."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import cgrad
import cgrad.nn.functional as F

INF, NAN = float("inf"), float("nan")
SPECIAL = [0.0, -0.0, INF, -INF, NAN, 1.0, -1.0, 1e-30, -1e-30]

# name: (callable taking (functional module, x), kink points)
ACTS = {
    "elu": (lambda f, x: f.elu(x), [0.0]),
    "elu_alpha2": (lambda f, x: f.elu(x, alpha=2.0), [0.0]),
    "celu": (lambda f, x: f.celu(x, alpha=1.5), [0.0]),
    "selu": (lambda f, x: f.selu(x), [0.0]),
    "leaky_relu": (lambda f, x: f.leaky_relu(x, 0.1), [0.0]),
    "relu": (lambda f, x: f.relu(x), [0.0]),
    "hardtanh": (lambda f, x: f.hardtanh(x), [-1.0, 1.0]),
    "relu6": (lambda f, x: f.relu6(x), [0.0, 6.0]),
    "hardsigmoid": (lambda f, x: f.hardsigmoid(x), [-3.0, 3.0]),
    "hardswish": (lambda f, x: f.hardswish(x), [-3.0, 3.0]),
    "softplus": (lambda f, x: f.softplus(x, beta=2.0, threshold=5.0), [2.5]),
    "threshold": (lambda f, x: f.threshold(x, 0.5, -2.0), [0.5]),
    "rrelu_eval": (lambda f, x: f.rrelu(x, training=False), [0.0]),
    "gelu": (lambda f, x: f.gelu(x), []),
    "gelu_tanh": (lambda f, x: f.gelu(x, approximate="tanh"), []),
    "silu": (lambda f, x: f.silu(x), []),
    "mish": (lambda f, x: f.mish(x), []),
    "hardshrink": (lambda f, x: f.hardshrink(x, 0.5), [0.5, -0.5]),
    "softshrink": (lambda f, x: f.softshrink(x, 0.5), [0.5, -0.5]),
    "logsigmoid": (lambda f, x: f.logsigmoid(x), []),
}

# (name, x, "fwd" | "grad") -> cgrad's value where it departs from torch's scalar loop, and why:
DECIDED = {
    # the masks' gates stay closed at NaN: 0 (torch's vectorised loop gives 0 or NaN, its scalar tail the gradient)
    **{(n, NAN, "grad"): 0.0 for n in ("hardtanh", "relu6", "hardswish")},
    # the limits where torch evaluates -inf * 0 or inf * 0 (NaN): gelu(-inf) = -0, gelu'(inf) = 1, gelu'(-inf) = 0,
    # hardswish(-inf) = -0
    **{(n, -INF, "fwd"): -0.0 for n in ("gelu", "gelu_tanh", "hardswish")},
    **{(n, INF, "grad"): 1.0 for n in ("gelu", "gelu_tanh")},
    **{(n, -INF, "grad"): 0.0 for n in ("gelu", "gelu_tanh")},
}


def _same(a: float, b: float) -> bool:
    if np.isnan(a) or np.isnan(b):
        return bool(np.isnan(a) and np.isnan(b))
    if a == 0 and b == 0:
        return bool(np.signbit(a) == np.signbit(b)) or a != a
    return bool(np.isclose(a, b, rtol=1e-6, atol=0.0))


def _torch_scalar(fn, v: float, dtype):
    x = torch.tensor([v], dtype=dtype, requires_grad=True)
    y = fn(TF, x)
    (g,) = torch.autograd.grad(y.sum(), x)
    return y.item(), g.item()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(ACTS))
def test_special_values(name, dtype):
    fn, kinks = ACTS[name]
    vals = SPECIAL + kinks + [k + d for k in kinks for d in (1e-6, -1e-6)]
    xs = np.array(vals, dtype=dtype)
    reps = 37  # every value at many positions of a long row: the vectorised body and any tail
    xc = cgrad.from_numpy(np.repeat(xs, reps)).requires_grad_(True)
    yc = fn(F, xc)
    (gc,) = cgrad.autograd.grad(yc.sum(), xc)
    yc, gc = yc.detach().numpy(), gc.numpy()
    assert yc.dtype == np.dtype(dtype) and gc.dtype == np.dtype(dtype)
    tdt = getattr(torch, dtype)
    for i, v in enumerate(vals):
        ys, gs = yc[i * reps:(i + 1) * reps], gc[i * reps:(i + 1) * reps]
        assert all(_same(float(a), float(ys[0])) for a in ys), (name, v, "position-dependent forward")
        assert all(_same(float(a), float(gs[0])) for a in gs), (name, v, "position-dependent gradient")
        ty, tg = _torch_scalar(fn, float(xs[i]), tdt)
        for kind, got, want in (("fwd", float(ys[0]), ty), ("grad", float(gs[0]), tg)):
            key = (name, float(xs[i]) if not np.isnan(xs[i]) else NAN, kind)
            decided = next((d for k, d in DECIDED.items() if k[0] == name and k[2] == kind and _same(k[1], key[1])),
                           None)
            if decided is not None:
                assert _same(got, decided) or got == decided == 0, (name, v, kind, got, decided)  # gelu'(-inf): +-0
            else:
                assert _same(got, want), (name, v, kind, got, want)


def test_elu_family_nan_gradient_passes():
    # the case: elu's backward at NaN takes the `x > 0` branch (x <= 0 is false)
    x = cgrad.tensor([NAN] * 40, dtype=cgrad.float64, requires_grad=True)
    for f, d in ((F.elu, 1.0), (lambda t: F.celu(t, 2.0), 1.0), (F.selu, 1.0507009873554805)):
        (g,) = cgrad.autograd.grad(f(x).sum(), x)
        assert np.all(g.numpy() == d)


def test_decided_values_differ_from_torch_scalar_loop():
    # the DECIDED table only lists real departures (a stale entry would hide a regression)
    for (name, v, kind) in DECIDED:
        ty, tg = _torch_scalar(ACTS[name][0], v, torch.float64)
        assert not _same(ty if kind == "fwd" else tg, DECIDED[(name, v, kind)])
