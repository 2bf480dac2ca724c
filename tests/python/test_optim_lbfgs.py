"""cgrad.optim.LBFGS against torch.optim.LBFGS: the parameters, the returned
losses and the evaluation counts over several step() calls on a Rosenbrock-like
objective over parameters of several shapes, with a fixed step and with the
strong-Wolfe line search, a short history, early termination, and the errors."""
import numpy as np
import pytest
import torch

import cgrad
import cgrad.optim as optim

SHAPES = [(), (3,), (2, 2)]


def _objective(lib, params):
    flat = lib.cat([p.reshape(-1) for p in params])
    x, y = flat[:-1], flat[1:]
    return ((1 - x) ** 2).sum() + 10 * ((y - x * x) ** 2).sum()


def _pair(dtype, seed=0):
    rng = np.random.default_rng(seed)
    data = [rng.uniform(-1.5, 1.5, s).astype(dtype) for s in SHAPES]
    tp = [torch.tensor(d, requires_grad=True) for d in data]
    cp = [cgrad.from_numpy(np.array(d, copy=True)).requires_grad_() for d in data]
    return tp, cp


def _closure(lib, opt, params):
    def closure():
        opt.zero_grad()
        loss = _objective(lib, params)
        loss.backward()
        return loss
    return closure


@pytest.mark.parametrize("kwargs", [
    dict(),
    dict(line_search_fn="strong_wolfe"),
    dict(lr=0.5, history_size=3, max_iter=7),
    dict(line_search_fn="strong_wolfe", history_size=2, max_iter=10, max_eval=12),
    dict(tolerance_grad=1e-2, line_search_fn="strong_wolfe"),
])
@pytest.mark.parametrize("dtype,rtol", [("float64", 1e-9), ("float32", 1e-4)])
def test_trajectory(kwargs, dtype, rtol):
    tp, cp = _pair(dtype)
    topt, copt = torch.optim.LBFGS(tp, **kwargs), optim.LBFGS(cp, **kwargs)
    for _ in range(4):
        tl = topt.step(_closure(torch, topt, tp))
        cl = copt.step(_closure(cgrad, copt, cp))
        np.testing.assert_allclose(float(cl.detach()), float(tl.detach()), rtol=rtol, atol=rtol)
        for c, t in zip(cp, tp):
            np.testing.assert_allclose(c.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=rtol)
    ts, cs = topt.state[tp[0]], copt.state[cp[0]]
    if dtype == "float64":
        assert (cs["func_evals"], cs["n_iter"]) == (ts["func_evals"], ts["n_iter"])
    assert set(ts) - {"al"} <= set(cs)


def test_converges_and_options():
    tp, cp = _pair("float64", seed=3)
    opt = optim.LBFGS(cp, line_search_fn="strong_wolfe", max_iter=100)
    opt.step(_closure(cgrad, opt, cp))
    assert float(_objective(cgrad, cp)) < 1e-8
    assert opt.defaults["max_eval"] == 125 and repr(opt) == repr(torch.optim.LBFGS(tp, line_search_fn="strong_wolfe",
                                                                                   max_iter=100))


def test_errors():
    p = cgrad.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.LBFGS([p], lr=-1)
    with pytest.raises(ValueError, match="doesn't support per-parameter options"):
        optim.LBFGS([{"params": [p]}, {"params": [cgrad.ones(1, requires_grad=True)]}])
    opt = optim.LBFGS([p], line_search_fn="backtracking")
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(_closure(cgrad, opt, [p]))
