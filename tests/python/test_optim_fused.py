"""The fused steps of Adadelta, Adamax, NAdam, RAdam, Rprop and ASGD
(cgrad._C._adadelta_step ...) beyond test_optim.py's trajectories: foreach
None / False / True (against PyTorch's single- and multi-tensor paths),
float16 / bfloat16 parameters (against PyTorch in float32), empty and
non-contiguous parameters, the state dict's keys, dtypes and shapes, and the
binding's errors writing nothing."""
import numpy as np
import pytest
import torch

import cgrad
import cgrad.optim as optim
from test_optim import STEPS, TOL, _check_states, _clone_state_dict, _ct, _make_params, _np, _run

FUSED = ["Adadelta", "Adamax", "NAdam", "RAdam", "Rprop", "ASGD"]
# one option set per optimizer that exercises most of its branches
RICH = {
    "Adadelta": dict(lr=0.5, rho=0.8, weight_decay=0.1, maximize=True),
    "Adamax": dict(lr=0.01, betas=(0.3, 0.9), weight_decay=0.1, maximize=True),
    "NAdam": dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True),
    "RAdam": dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1, maximize=True),
    "Rprop": dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2), maximize=True),
    "ASGD": dict(lr=0.05, lambd=1e-2, t0=3, weight_decay=0.1, maximize=True),
}


def _cgrad_grads(cp, step):
    rng = np.random.default_rng(2000 + step)
    for c in cp:
        c.grad = _ct(rng.uniform(-1, 1, tuple(c.shape)).astype(_np(c).dtype))


def _pair(name, tp, cp, **kwargs):
    return getattr(torch.optim, name)(tp, **kwargs), getattr(optim, name)(cp, **kwargs)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("foreach", [None, False, True])
@pytest.mark.parametrize("name", FUSED)
def test_foreach_accepted(name, foreach, dtype):
    # cgrad has one (fused) implementation, PyTorch's single-tensor algorithm. PyTorch's
    # foreach=True is its multi-tensor path, which orders some operations differently (float32:
    # a few ulps after 20 steps) and, for ASGD, computes eta in float32 tensor arithmetic (an
    # ulp of float32 away from the single-tensor path's, in float64 too)
    kwargs = dict(RICH[name], foreach=foreach)
    tol = TOL[dtype] if not foreach else {"float32": 1e-5, "float64": 1e-6 if name == "ASGD" else 1e-12}[dtype]
    tp, cp = _make_params(dtype, seed=21)
    topt, copt = _pair(name, tp, cp, **kwargs)
    _run(tp, cp, topt, copt, STEPS, noncontig=True, rtol=tol)
    _check_states(copt, topt, cp, tp, tol)
    assert copt.param_groups[0]["foreach"] is foreach


@pytest.mark.parametrize("name", FUSED)
def test_foreach_does_not_change_cgrad(name):
    runs = []
    for foreach in (None, False, True):
        _, cp = _make_params("float32", seed=22)
        copt = getattr(optim, name)(cp, **RICH[name], foreach=foreach)
        for s in range(5):
            _cgrad_grads(cp, s)
            copt.step()
        runs.append([_np(p).copy() for p in cp])
    for other in runs[1:]:
        for a, b in zip(runs[0], other):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("half", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", FUSED)
def test_half_params(name, half):
    """Half parameters and states stay half, computing in float32: compared with PyTorch in
    float32 from the same (rounded) values, to the half type's precision."""
    cdt, tdt = getattr(cgrad, half), getattr(torch, half)
    rng = np.random.default_rng(23)
    shapes = [(5,), (3, 4)]
    tp, cp = [], []
    for s in shapes:
        t = torch.tensor(rng.uniform(-1, 1, s), dtype=tdt).float()
        tp.append(t.clone().requires_grad_())
        cp.append(_ct(t.double().numpy()).to(cdt).requires_grad_())
    topt, copt = _pair(name, tp, cp, **RICH[name])
    for s in range(10):
        for t, c in zip(tp, cp):
            g = torch.tensor(rng.uniform(-1, 1, tuple(t.shape)), dtype=tdt)
            t.grad = g.float()
            c.grad = _ct(g.double().numpy()).to(cdt)
        topt.step()
        copt.step()
    tol = 2e-2 if half == "float16" else 8e-2
    for c, t in zip(cp, tp):
        assert c.dtype == cdt
        np.testing.assert_allclose(_np(c.to(cgrad.float64)), t.detach().double().numpy(), rtol=tol, atol=tol)
    for c, t in zip(cp, tp):
        for key, value in topt.state[t].items():
            got = copt.state[c][key]
            # tensors shaped like the parameter are half; the 0-d ones stay float32, as in PyTorch
            assert got.dtype == (cdt if value.dim() else cgrad.float32), key


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", FUSED)
def test_empty_params(name, dtype):
    tp, cp = _make_params(dtype, seed=24, shapes=[(0,), (2, 0), (3,)])
    topt, copt = _pair(name, tp, cp, **RICH[name])
    _run(tp, cp, topt, copt, 5, rtol=TOL[dtype])
    _check_states(copt, topt, cp, tp, TOL[dtype])
    assert float(copt.state[cp[0]]["step"]) == 5.0


@pytest.mark.parametrize("name", FUSED)
def test_noncontiguous_params(name):
    """Transposed leaves (and the state created like them) are staged through contiguous copies."""
    rng = np.random.default_rng(25)
    data = [rng.uniform(-1, 1, (4, 3)), rng.uniform(-1, 1, (2, 3, 5))]
    tp = [torch.tensor(d).transpose(0, -1).requires_grad_() for d in data]
    cp = [_ct(d).transpose(0, -1).requires_grad_() for d in data]
    assert not cp[0].is_contiguous() and cp[0].is_leaf
    topt, copt = _pair(name, tp, cp, **RICH[name])
    _run(tp, cp, topt, copt, 10, noncontig=True, rtol=1e-12)
    _check_states(copt, topt, cp, tp, 1e-12)


@pytest.mark.parametrize("name", FUSED)
def test_state_dict_layout_and_round_trip(name):
    tp, cp = _make_params("float32", seed=26)
    topt, copt = _pair(name, tp, cp, **RICH[name])
    _run(tp, cp, topt, copt, 6, rtol=1e-6)
    sd, tsd = copt.state_dict(), topt.state_dict()
    assert sd["param_groups"] == [dict(g) for g in tsd["param_groups"]]
    for index, tstate in tsd["state"].items():
        cstate = sd["state"][index]
        assert list(cstate) == list(tstate)
        for key, value in tstate.items():
            got = cstate[key]
            assert str(got.dtype).split(".")[-1] == str(value.dtype).split(".")[-1], key
            assert tuple(got.shape) == tuple(value.shape), key
    # a new optimizer loading (a copy of: state_dict() returns the live tensors) our state
    # continues exactly as we do
    cp2 = [_ct(_np(p), True) for p in cp]
    copt2 = getattr(optim, name)(cp2, **RICH[name])
    copt2.load_state_dict(_clone_state_dict(sd))
    for s in range(6, 12):
        _cgrad_grads(cp, s)
        for c, c2 in zip(cp, cp2):
            c2.grad = c.grad
        copt.step()
        copt2.step()
    for c, c2 in zip(cp, cp2):
        np.testing.assert_array_equal(_np(c), _np(c2))


def test_differentiable_refused():
    p = cgrad.ones(2, requires_grad=True)
    for name in FUSED:
        with pytest.raises(NotImplementedError, match="differentiable"):
            getattr(optim, name)([p], differentiable=True)


def _one(shape=(2,)):
    return cgrad.zeros(*shape)


# per optimizer: its binding and the argument lists before the numbers (params, grads first)
BINDINGS = {
    "adadelta": (cgrad._C._adadelta_step, ["square_avg", "acc_delta", "step"], (1.0, 0.9, 1e-6, 0.0, False)),
    "adamax": (cgrad._C._adamax_step, ["exp_avg", "exp_inf", "step"], (0.01, 0.9, 0.99, 1e-8, 0.0, False)),
    "nadam": (cgrad._C._nadam_step, ["exp_avg", "exp_avg_sq", "mu_product", "step"],
              (0.01, 0.9, 0.99, 1e-8, 0.0, 4e-3, False, False)),
    "radam": (cgrad._C._radam_step, ["exp_avg", "exp_avg_sq", "step"], (0.01, 0.9, 0.99, 1e-8, 0.0, False, False)),
    "rprop": (cgrad._C._rprop_step, ["prev", "step_size", "step"], (0.5, 1.2, 1e-6, 50.0, False)),
    "asgd": (cgrad._C._asgd_step, ["ax", "mu", "eta", "step"], (0.01, 1e-4, 0.75, 1e6, 0.0, False)),
}
SCALARS = {"step": 0.0, "mu_product": 1.0, "mu": 1.0, "eta": 0.01}


@pytest.mark.parametrize("op", list(BINDINGS))
def test_binding_errors_write_nothing(op):
    fn, states, numbers = BINDINGS[op]
    params = [cgrad.ones(2), cgrad.ones(3)]
    grads = [cgrad.full((2,), 0.5), cgrad.full((3,), 0.5)]

    def lists(bad=None):
        out = []
        for key in states:
            if key in SCALARS:
                out.append([cgrad.tensor(SCALARS[key]) for _ in params])
            else:
                out.append([cgrad.full(tuple(p.shape), 0.25) for p in params])
        if bad is not None:
            out[0][1] = bad
        return out

    good = lists()
    for bad, exc, msg in [(cgrad.zeros(2), cgrad.ShapeMismatch, rf"\[{op}\] parameter 1: {states[0]} has shape"),
                          (cgrad.zeros(3, dtype=cgrad.float64), TypeError, "dtype")]:
        state = lists(bad)
        with pytest.raises(exc, match=msg):
            fn(params, grads, *state, *numbers)
        # the first parameter and every state are as they were
        assert float(params[0].sum()) == 2.0
        for key, entries in zip(states, state):
            want = SCALARS.get(key, 0.25)
            assert all(np.allclose(_np(t).astype(np.float64), want) for t in entries[:1]), key
    with pytest.raises(TypeError, match="must be a Tensor"):
        fn(params, [1.0, grads[1]], *good, *numbers)
    with pytest.raises(ValueError, match="entries"):
        fn(params, grads[:1], *good, *numbers)
    with pytest.raises(TypeError, match="positional arguments"):
        fn(params, grads, *good)
    fn(params, grads, *good, *numbers)
    assert float(good[-1][1]) == 1.0  # the step counted
