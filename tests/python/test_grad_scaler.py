"""cgrad.amp.GradScaler against torch.amp.GradScaler("cpu"): the scale / skip /
growth sequence of a scripted run with injected infs and NaNs, the parameters
it leaves, the fused unscale, state_dict round trips and the errors."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import cgrad


def _run(lib, steps, poison, **kw):
    """A small linear model trained with SGD through the scaler; at the steps in
    `poison` one gradient gets an inf (even step) or a NaN (odd step). Returns
    the scale after each update, whether each step ran, and the final weights."""
    r = np.random.default_rng(0)
    w0 = (r.standard_normal((3, 4)) * 0.5).astype("float32")
    xs = r.standard_normal((steps, 8, 4)).astype("float32")
    ys = r.standard_normal((steps, 8, 3)).astype("float32")
    model = lib.nn.Linear(4, 3)
    with lib.no_grad():
        model.weight.copy_(lib.tensor(w0.tolist()))
        model.bias.zero_()
    opt = lib.optim.SGD(model.parameters(), lr=0.05)
    scaler = lib.amp.GradScaler("cpu", **kw)
    scales, ran = [], []
    for i in range(steps):
        opt.zero_grad()
        with lib.autocast("cpu", dtype=lib.bfloat16):
            out = model(lib.tensor(xs[i].tolist()))
        loss = ((out.float() - lib.tensor(ys[i].tolist())) ** 2).mean()
        scaler.scale(loss).backward()
        if i in poison:
            with lib.no_grad():
                model.bias.grad[1] = math.inf if i % 2 == 0 else math.nan
        before = model.weight.detach().clone()
        scaler.step(opt)
        ran.append(not bool((model.weight.detach() == before).all()))
        scaler.update()
        scales.append(scaler.get_scale())
    return scales, ran, np.array(model.weight.detach().tolist()), scaler


def test_scripted_run_matches_torch():
    kw = dict(init_scale=2.0 ** 10, growth_factor=2.0, backoff_factor=0.5, growth_interval=3)
    poison = {2, 3, 9, 15}
    sc, rc, wc, scaler_c = _run(cgrad, 20, poison, **kw)
    st, rt, wt, scaler_t = _run(torch, 20, poison, **kw)
    assert sc == st
    assert rc == rt and [i for i, r in enumerate(rc) if not r] == sorted(poison)
    np.testing.assert_allclose(wc, wt, rtol=0, atol=2e-2)
    assert scaler_c.state_dict() == scaler_t.state_dict()


def test_growth_stops_below_float32_overflow():
    for lib in (cgrad, torch):
        s = lib.amp.GradScaler("cpu", init_scale=2.0 ** 126, growth_interval=1)
        p = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([p], lr=0.0)
        seq = []
        for _ in range(3):
            opt.zero_grad()
            s.scale((p * 1e-38).sum()).backward()
            s.step(opt)
            s.update()
            seq.append(s.get_scale())
        assert seq == [2.0 ** 127] * 3


def test_fused_unscale_one_call_over_all_grads():
    grads = [cgrad.full((5,), 8.0), cgrad.full((2, 3), 4.0, dtype=cgrad.bfloat16),
             cgrad.full((4, 3), 2.0).t(), cgrad.full((3,), 6.0, dtype=cgrad.float64)]  # one non-contiguous
    found = cgrad.zeros(())
    cgrad._C._amp_foreach_non_finite_check_and_unscale_(grads, found, cgrad.full((), 0.5))
    assert found.item() == 0.0
    assert [g.tolist() for g in grads] == [[4.0] * 5, [[2.0] * 3] * 2, [[1.0] * 4] * 3, [3.0] * 3]
    grads[2][1, 2] = math.nan
    cgrad._C._amp_foreach_non_finite_check_and_unscale_(grads, found, cgrad.full((), 1.0))
    assert found.item() == 1.0
    with pytest.raises(TypeError):
        cgrad._C._amp_foreach_non_finite_check_and_unscale_([1.0], found, cgrad.full((), 1.0))
    with pytest.raises(TypeError):  # found_inf must be float32 (DtypeMismatch is a TypeError)
        cgrad._C._amp_foreach_non_finite_check_and_unscale_(grads, cgrad.zeros((), dtype=cgrad.float64),
                                                            cgrad.full((), 1.0))


def test_unscale_then_clip_then_step_and_errors():
    for lib in (cgrad, torch):
        p = lib.nn.Parameter(lib.ones(3))
        opt = lib.optim.SGD([p], lr=0.1)
        s = lib.amp.GradScaler("cpu", init_scale=4.0)
        s.scale((p * 2).sum()).backward()
        s.unscale_(opt)
        assert p.grad.tolist() == [2.0, 2.0, 2.0]
        with pytest.raises(RuntimeError, match="already been called"):
            s.unscale_(opt)
        s.step(opt)
        with pytest.raises(RuntimeError, match="after step"):
            s.unscale_(opt)
        with pytest.raises(RuntimeError, match="already been called since the last update"):
            s.step(opt)
        s.update()
        assert [round(v, 5) for v in p.tolist()] == [0.8, 0.8, 0.8]
        with pytest.raises(RuntimeError, match="Closure"):
            s.step(opt, closure=lambda: 0.0)


def test_state_dict_round_trip_and_disabled_scaler():
    s = cgrad.amp.GradScaler("cpu", init_scale=8.0, growth_interval=5)
    t = torch.amp.GradScaler("cpu", init_scale=8.0, growth_interval=5)
    assert s.state_dict() == t.state_dict()
    s2 = cgrad.amp.GradScaler("cpu")
    s2.load_state_dict(s.state_dict())
    assert s2.get_scale() == 8.0 and s2.get_growth_interval() == 5
    off = cgrad.amp.GradScaler("cpu", enabled=False)
    assert not off.is_enabled() and off.get_scale() == 1.0 and off.state_dict() == {}
    x = cgrad.ones(2)
    assert off.scale(x) is x
    with pytest.raises(RuntimeError, match="empty"):
        s2.load_state_dict({})
    with pytest.raises(AssertionError, match="growth factor"):
        cgrad.amp.GradScaler("cpu", growth_factor=0.9)


def test_scale_of_nested_outputs():
    s = cgrad.amp.GradScaler("cpu", init_scale=2.0)
    a, b = cgrad.ones(2), cgrad.full((1,), 3.0, dtype=cgrad.bfloat16)
    out = s.scale([a, (b,)])
    assert out[0].tolist() == [2.0, 2.0] and out[1][0].tolist() == [6.0] and out[1][0].dtype == cgrad.bfloat16
