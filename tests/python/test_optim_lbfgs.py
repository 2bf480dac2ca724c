"""cgrad.optim.LBFGS against torch.optim.LBFGS: the parameters, the returned
losses and the evaluation counts over several step() calls on a Rosenbrock-like
objective over parameters of several shapes, with a fixed step and with the
strong-Wolfe line search, a short history, early termination, the state's
layout (PyTorch's keys and types), and the errors."""
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
@pytest.mark.parametrize("dtype,rtol", [("float64", 1e-9), ("float32", 1e-3)])
def test_trajectory(kwargs, dtype, rtol):
    """float64 follows PyTorch's float64 run to 1e-9. A float32 run is compared
    with PyTorch's float64 run: PyTorch's own float32 run strays from it by up
    to 2e-4 here, by an amount that depends on the CPU's SIMD width (reduction
    order), so float32 against float32 would test the machine."""
    tp, _ = _pair("float64")
    _, cp = _pair(dtype)
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
        _assert_same_state(cs, ts)


def test_float32_state_layout():
    """The float32 state has PyTorch's keys, types, shapes and dtypes."""
    tp, cp = _pair("float32")
    topt, copt = torch.optim.LBFGS(tp, max_iter=5), optim.LBFGS(cp, max_iter=5)
    topt.step(_closure(torch, topt, tp))
    copt.step(_closure(cgrad, copt, cp))
    _assert_same_state(copt.state[cp[0]], topt.state[tp[0]], values=False)


def _kind(v):
    if isinstance(v, (torch.Tensor, cgrad.Tensor)):
        return ("tensor", tuple(v.shape), str(v.dtype).split(".")[-1])
    if isinstance(v, list):
        return ("list", len(v), tuple(_kind(x) for x in v))
    return type(v).__name__


def _assert_same_state(cs, ts, values=True):
    """cgrad's LBFGS state has PyTorch's keys, and each value its type, shape
    and dtype (lists entry by entry, None included); values too in float64.
    PyTorch's step length t is a number or a 0-d tensor depending on the path
    taken; cgrad's is always the 0-d tensor."""
    assert set(cs) == set(ts)
    assert _kind(cs["t"]) == ("tensor", (), str(cs["d"].dtype).split(".")[-1])
    np.testing.assert_allclose(float(cs["t"]), float(ts["t"]), rtol=1e-6 if values else 1e-3)
    for k in set(ts) - {"t"}:
        assert _kind(cs[k]) == _kind(ts[k]), k
        if values and isinstance(ts[k], torch.Tensor):
            np.testing.assert_allclose(cs[k].numpy(), ts[k].numpy(), rtol=1e-7, atol=1e-12)


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
