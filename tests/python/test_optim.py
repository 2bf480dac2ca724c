"""cgrad.optim against torch.optim: 20-step trajectories of every optimizer
with each option (and the combinations that interact) on parameters of
several shapes (0-d included) fed the same deterministic gradients
(contiguous and not), parameter groups, add_param_group, state_dict round
trips (ours and PyTorch's), zero_grad, hooks, repr and the argument errors."""
import copy

import numpy as np
import pytest
import torch

import cgrad
import cgrad.optim as optim

SHAPES = [(), (5,), (3, 4), (2, 3, 4)]
STEPS = 20

CONFIGS = {
    "SGD": [
        dict(lr=0.1),
        dict(lr=0.1, momentum=0.9),
        dict(lr=0.1, momentum=0.9, dampening=0.3),
        dict(lr=0.1, momentum=0.9, nesterov=True),
        dict(lr=0.1, weight_decay=0.1),
        dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1),
        dict(lr=0.1, maximize=True),
        dict(lr=0.05, momentum=0.5, dampening=0.1, weight_decay=0.05, maximize=True),
    ],
    "Adam": [
        dict(),
        dict(lr=0.01, amsgrad=True),
        dict(lr=0.01, weight_decay=0.1),
        dict(lr=0.01, amsgrad=True, maximize=True),
        dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True),
        dict(lr=0.01, betas=(0.3, 0.6), eps=1e-3),
        dict(lr=0.01, weight_decay=0.05, amsgrad=True, maximize=True),
    ],
    "AdamW": [
        dict(lr=0.01),
        dict(lr=0.01, amsgrad=True),
        dict(lr=0.01, weight_decay=0.1, maximize=True),
        dict(lr=0.01, weight_decay=0.0),
    ],
    "RMSprop": [
        dict(),
        dict(centered=True),
        dict(momentum=0.9),
        dict(centered=True, momentum=0.9),
        dict(weight_decay=0.1),
        dict(maximize=True),
        dict(lr=0.005, alpha=0.5, eps=1e-4, centered=True, momentum=0.5, weight_decay=0.05, maximize=True),
    ],
    "Adagrad": [
        dict(),
        dict(lr=0.1, lr_decay=0.1),
        dict(lr=0.1, weight_decay=0.1),
        dict(lr=0.1, initial_accumulator_value=0.5),
        dict(lr=0.1, eps=1e-3, maximize=True),
        dict(lr=0.1, lr_decay=0.05, weight_decay=0.01, initial_accumulator_value=0.1, maximize=True),
    ],
    "Adadelta": [
        dict(),
        dict(lr=0.5, rho=0.5, eps=1e-4),
        dict(weight_decay=0.1),
        dict(maximize=True, foreach=False),
        dict(weight_decay=0.1, maximize=True),
    ],
    "Adafactor": [
        dict(),
        dict(lr=0.05, beta2_decay=-0.5, eps=(1e-6, 1e-2), d=0.5 + 1.0),
        dict(lr=0.01, weight_decay=0.1, maximize=True),
    ],
    "Adamax": [
        dict(),
        dict(lr=0.01, betas=(0.5, 0.9), eps=1e-4),
        dict(lr=0.01, betas=(0.3, 0.9)),  # lerp weight >= 0.5
        dict(lr=0.01, weight_decay=0.1),
        dict(lr=0.01, maximize=True, foreach=False),
        dict(lr=0.01, weight_decay=0.1, maximize=True),
    ],
    "ASGD": [
        dict(),  # t0 = 1e6: ax copies the parameter
        dict(lr=0.05, lambd=1e-2, alpha=0.5, t0=5),  # ax averages from step 7 on
        dict(lr=0.05, weight_decay=0.1),
        dict(lr=0.05, t0=0, maximize=True, foreach=False),
        dict(lr=0.05, t0=3, weight_decay=0.1, maximize=True),
    ],
    "NAdam": [
        dict(),
        dict(lr=0.01, momentum_decay=0.1, betas=(0.5, 0.9)),
        dict(lr=0.01, betas=(0.3, 0.9)),  # lerp weight >= 0.5
        dict(lr=0.01, weight_decay=0.1),
        dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True),
        dict(lr=0.01, maximize=True, foreach=False),
        dict(lr=0.01, decoupled_weight_decay=True),
        dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True),
    ],
    "RAdam": [
        dict(),  # rectified from step 6 on
        dict(lr=0.01, betas=(0.5, 0.6)),  # rho_inf = 4: never rectified
        dict(lr=0.01, betas=(0.3, 0.9), eps=1e-3),
        dict(lr=0.01, weight_decay=0.1),
        dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True),
        dict(lr=0.01, maximize=True, foreach=False),
        dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True),
    ],
    "Rprop": [
        dict(),
        dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2)),  # both clamps reached
        dict(lr=0.01, maximize=True, foreach=False),
        dict(lr=0.01, etas=(0.4, 1.1), step_sizes=(5e-3, 0.02), maximize=True),
    ],
}
CASES = [(name, i) for name, cfgs in CONFIGS.items() for i in range(len(cfgs))]
TOL = {"float32": 1e-6, "float64": 1e-12}


def _np(t):
    return t.detach().numpy()


def _ct(a, requires_grad=False):
    """A cgrad tensor holding a copy of ndarray `a` (0-d arrays stay 0-d)."""
    t = cgrad.from_numpy(np.array(a, copy=True))
    return t.requires_grad_() if requires_grad else t


def _make_params(dtype, seed=0, shapes=SHAPES):
    rng = np.random.default_rng(seed)
    data = [rng.uniform(-1, 1, s).astype(dtype) for s in shapes]
    tp = [torch.tensor(d, requires_grad=True) for d in data]
    cp = [_ct(d, True) for d in data]
    return tp, cp


def _set_grads(tp, cp, step, noncontig=False, seed=1000):
    rng = np.random.default_rng(seed + step)
    for t, c in zip(tp, cp):
        shape = tuple(t.shape)
        if noncontig and len(shape) >= 2:
            g = rng.uniform(-1, 1, shape[::-1]).astype(_np(c).dtype)
            perm = list(reversed(range(len(shape))))
            tg = torch.tensor(g).permute(*perm)
            cg = _ct(g).permute(*perm)
            assert not cg.is_contiguous()
        else:
            g = rng.uniform(-1, 1, shape).astype(_np(c).dtype)
            tg, cg = torch.tensor(g), _ct(g)
        t.grad = tg
        c.grad = cg


def _assert_close(c, t, rtol, what=""):
    a, b = _np(c), _np(t)
    assert a.shape == b.shape, what
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol, err_msg=what)


def _check_states(copt, topt, cparams, tparams, rtol):
    for c, t in zip(cparams, tparams):
        cs, ts = copt.state[c], topt.state[t]
        assert set(cs) == set(ts)
        for k, v in ts.items():
            if isinstance(v, torch.Tensor):
                _assert_close(cs[k], v, rtol, k)
            else:
                assert cs[k] == v


def _run(tparams, cparams, topt, copt, steps, noncontig=False, start=0, rtol=1e-12):
    for s in range(start, start + steps):
        _set_grads(tparams, cparams, s, noncontig)
        topt.step()
        copt.step()
    for c, t in zip(cparams, tparams):
        _assert_close(c, t, rtol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,idx", CASES)
def test_trajectory(name, idx, dtype):
    kwargs = CONFIGS[name][idx]
    tp, cp = _make_params(dtype)
    topt, copt = getattr(torch.optim, name)(tp, **kwargs), getattr(optim, name)(cp, **kwargs)
    _run(tp, cp, topt, copt, STEPS, noncontig=(idx % 2 == 1), rtol=TOL[dtype])
    _check_states(copt, topt, cp, tp, TOL[dtype])


@pytest.mark.parametrize("name", list(CONFIGS))
def test_param_groups_and_add_param_group(name):
    tp, cp = _make_params("float64", seed=3)
    kw = CONFIGS[name][-1]
    lrs = [0.01, 0.003]
    topt = getattr(torch.optim, name)([{"params": tp[:2], "lr": lrs[0]}, {"params": tp[2:3], "lr": lrs[1]}], **kw)
    copt = getattr(optim, name)([{"params": cp[:2], "lr": lrs[0]}, {"params": cp[2:3], "lr": lrs[1]}], **kw)
    assert len(copt.param_groups) == 2 and copt.param_groups[1]["lr"] == lrs[1]
    _run(tp, cp, topt, copt, 5)
    topt.add_param_group({"params": tp[3:], "lr": 0.02})
    copt.add_param_group({"params": cp[3:], "lr": 0.02})
    assert copt.param_groups[2].keys() == topt.param_groups[2].keys()
    _run(tp, cp, topt, copt, 5, start=5)
    _check_states(copt, topt, cp, tp, 1e-12)


def _clone_state_dict(sd, convert=lambda t: t.clone()):
    def conv(v):
        if isinstance(v, (torch.Tensor, cgrad.Tensor)):
            return convert(v)
        if isinstance(v, dict):
            return {k: conv(x) for k, x in v.items()}
        if isinstance(v, list):
            return [conv(x) for x in v]
        if isinstance(v, tuple):
            return tuple(conv(x) for x in v)
        return v
    return conv(sd)


@pytest.mark.parametrize("name,idx", [(n, len(c) - 1) for n, c in CONFIGS.items()] + [("SGD", 1), ("Adam", 1)])
def test_state_dict_round_trip(name, idx):
    kwargs = CONFIGS[name][idx]
    tp, cp = _make_params("float64", seed=5)
    topt, copt = getattr(torch.optim, name)(tp, **kwargs), getattr(optim, name)(cp, **kwargs)
    _run(tp, cp, topt, copt, 10)
    sd = copt.state_dict()
    tsd = topt.state_dict()
    # PyTorch's layout: integer keys, groups listing parameter indices, step as a tensor
    assert list(sd["state"]) == list(tsd["state"])
    assert [g["params"] for g in sd["param_groups"]] == [g["params"] for g in tsd["param_groups"]]
    assert sd["param_groups"][0].keys() == tsd["param_groups"][0].keys()
    for k, v in tsd["state"][0].items():
        assert isinstance(sd["state"][0][k], cgrad.Tensor) == isinstance(v, torch.Tensor), k
    # a fresh optimizer over copies of the parameters continues as a reloaded torch one does
    # (loading casts floating state to the parameter's dtype: NAdam's mu_product and ASGD's
    # eta / mu leave float32 there, so a reloaded optimizer is compared with a reloaded one)
    cp2 = [_ct(_np(p), True) for p in cp]
    copt2 = getattr(optim, name)(cp2, **kwargs)
    copt2.load_state_dict(_clone_state_dict(sd))
    tp2 = [torch.tensor(_np(p), requires_grad=True) for p in cp]
    topt2 = getattr(torch.optim, name)(tp2, **kwargs)
    topt2.load_state_dict(_clone_state_dict(tsd))
    for s in range(10, 20):
        _set_grads(tp, cp, s)
        for c, c2, t2, t in zip(cp, cp2, tp2, tp):
            c2.grad, t2.grad = c.grad, t.grad
        for o in (topt, copt, copt2, topt2):
            o.step()
    for c, c2, t, t2 in zip(cp, cp2, tp, tp2):
        _assert_close(c, t, 1e-12)
        _assert_close(c2, t2, 1e-12)


@pytest.mark.parametrize("name,idx", [(n, len(c) - 1) for n, c in CONFIGS.items()])
def test_load_torch_state_dict(name, idx):
    kwargs = CONFIGS[name][idx]
    tp, dummy = _make_params("float64", seed=7)
    topt = getattr(torch.optim, name)(tp, **kwargs)
    for s in range(8):
        _set_grads(tp, dummy, s)
        topt.step()
    csd = _clone_state_dict(topt.state_dict(), lambda t: _ct(t.detach().numpy()))
    cp = [_ct(_np(p), True) for p in tp]
    copt = getattr(optim, name)(cp, **kwargs)
    copt.load_state_dict(csd)
    # compared with torch's optimizer loading the same state dict (loading casts floating state)
    tsd = topt.state_dict()
    topt = getattr(torch.optim, name)(tp, **kwargs)
    topt.load_state_dict(tsd)
    assert copt.param_groups[0]["lr"] == topt.param_groups[0]["lr"]
    _run(tp, cp, topt, copt, 8, start=8)
    _check_states(copt, topt, cp, tp, 1e-12)


def test_lr_as_tensor_and_float16():
    tp, cp = _make_params("float64", seed=9)
    topt = torch.optim.SGD(tp, lr=torch.tensor(0.05), momentum=0.9)
    copt = optim.SGD(cp, lr=cgrad.tensor(0.05), momentum=0.9)
    _run(tp, cp, topt, copt, 5)
    topt = torch.optim.Adam(tp, lr=torch.tensor(0.01))
    copt = optim.Adam(cp, lr=cgrad.tensor(0.01))
    _run(tp, cp, topt, copt, 5, rtol=1e-6)
    # half parameters compute in float32 and stay in their dtype
    p = cgrad.ones(4, dtype=cgrad.float16, requires_grad=True)
    p.grad = cgrad.full((4,), 0.5, dtype=cgrad.float16)
    opt = optim.Adam([p], lr=0.1)
    opt.step()
    assert p.dtype == cgrad.float16 and opt.state[p]["exp_avg"].dtype == cgrad.float16
    np.testing.assert_allclose(_np(p).astype(np.float64), 0.9, rtol=1e-3)


def test_skips_params_without_grad_and_closure():
    a = cgrad.ones(3, requires_grad=True)
    b = cgrad.ones(3, requires_grad=True)
    opt = optim.SGD([a, b], lr=0.5, momentum=0.9)

    def closure():
        opt.zero_grad()
        loss = (a * 2).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert float(loss) == 6.0
    np.testing.assert_allclose(_np(a), 0.0)
    np.testing.assert_allclose(_np(b), 1.0)
    assert b not in opt.state and "momentum_buffer" in opt.state[a]


def test_zero_grad():
    p = cgrad.ones(3, requires_grad=True)
    opt = optim.Adam([p])
    p.grad = cgrad.ones(3)
    opt.zero_grad(set_to_none=False)
    assert p.grad is not None and float(p.grad.abs().sum()) == 0.0
    opt.zero_grad()
    assert p.grad is None


def test_repr_and_defaults_match_torch():
    for name in CONFIGS:
        tp, cp = _make_params("float32")
        assert repr(getattr(optim, name)(cp)) == repr(getattr(torch.optim, name)(tp))
        assert getattr(optim, name)(cp).defaults == getattr(torch.optim, name)(tp).defaults


def test_hooks():
    p = cgrad.ones(2, requires_grad=True)
    p.grad = cgrad.ones(2)
    opt = optim.SGD([p], lr=1.0)
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
    h2 = opt.register_step_post_hook(lambda o, a, k: calls.append("post"))
    opt.step()
    assert calls == ["pre", "post"]
    h1.remove()
    h2.remove()
    opt.step()
    assert calls == ["pre", "post"]
    np.testing.assert_allclose(_np(p), -1.0)


def test_named_parameters():
    tp, cp = _make_params("float32")
    copt = optim.AdamW([(f"p{i}", p) for i, p in enumerate(cp)])
    topt = torch.optim.AdamW([(f"p{i}", p) for i, p in enumerate(tp)])
    assert copt.param_groups[0]["param_names"] == topt.param_groups[0]["param_names"]
    assert copt.state_dict()["param_groups"][0].keys() == topt.state_dict()["param_groups"][0].keys()


@pytest.mark.parametrize("ctor,msg", [
    (lambda p: optim.SGD(p, lr=-1), "Invalid learning rate: -1"),
    (lambda p: optim.SGD(p, momentum=-0.5), "Invalid momentum value: -0.5"),
    (lambda p: optim.SGD(p, weight_decay=-1), "Invalid weight_decay value: -1"),
    (lambda p: optim.SGD(p, nesterov=True), "Nesterov momentum requires a momentum and zero dampening"),
    (lambda p: optim.Adam(p, lr=-1), "Invalid learning rate: -1"),
    (lambda p: optim.Adam(p, eps=-1), "Invalid epsilon value: -1"),
    (lambda p: optim.Adam(p, betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
    (lambda p: optim.Adam(p, betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
    (lambda p: optim.AdamW(p, weight_decay=-1), "Invalid weight_decay value: -1"),
    (lambda p: optim.RMSprop(p, alpha=-1), "Invalid alpha value: -1"),
    (lambda p: optim.RMSprop(p, momentum=-1), "Invalid momentum value: -1"),
    (lambda p: optim.Adagrad(p, lr_decay=-1), "Invalid lr_decay value: -1"),
    (lambda p: optim.Adagrad(p, initial_accumulator_value=-1), "Invalid initial_accumulator_value value: -1"),
    (lambda p: optim.Adadelta(p, rho=1.5), "Invalid rho value: 1.5"),
    (lambda p: optim.Adafactor(p, d=0.5), "Clipping threshold d should be >= 1 but is: 0.5"),
    (lambda p: optim.Adafactor(p, beta2_decay=0.1), "beta2_decay should be <= 0 but is: 0.1"),
    (lambda p: optim.Adamax(p, betas=(0.9, 1.0)), "Invalid beta parameter at index 1: 1.0"),
    (lambda p: optim.ASGD(p, weight_decay=-1), "Invalid weight_decay value: -1"),
    (lambda p: optim.NAdam(p, momentum_decay=-1), "Invalid momentum_decay value: -1"),
    (lambda p: optim.RAdam(p, eps=-1), "Invalid epsilon value: -1"),
    (lambda p: optim.Rprop(p, etas=(1.5, 1.2)), "Invalid eta values: 1.5, 1.2"),
    (lambda p: optim.SGD([], lr=0.1), "optimizer got an empty parameter list"),
    (lambda p: optim.SGD([p[0] * 2], lr=0.1), "can't optimize a non-leaf Tensor"),
    (lambda p: optim.SGD([{"params": p}, {"params": p[:1]}], lr=0.1), "more than one parameter group"),
])
def test_value_errors(ctor, msg):
    params = [cgrad.ones(2, requires_grad=True)]
    with pytest.raises(ValueError, match=msg.replace("(", r"\(").replace(")", r"\)")):
        ctor(params)


def test_type_and_unsupported_errors():
    p = cgrad.ones(2, requires_grad=True)
    with pytest.raises(TypeError, match="iterable of Tensors or dicts"):
        optim.SGD(p, lr=0.1)
    with pytest.raises(TypeError, match="can only optimize Tensors"):
        optim.SGD([1.0], lr=0.1)
    with pytest.raises(TypeError, match="ordered collections"):
        optim.SGD([{"params": {p}}], lr=0.1)
    for ctor, opt in [(optim.Adam, "capturable"), (optim.AdamW, "capturable"), (optim.RMSprop, "capturable"),
                      (optim.SGD, "differentiable"), (optim.Adam, "differentiable"), (optim.Adagrad, "differentiable")]:
        with pytest.raises(NotImplementedError, match=opt):
            ctor([p], **{opt: True})
    with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together"):
        optim.Adam([p], fused=True, foreach=True)
    # fused / foreach select the one (fused) implementation we have
    p.grad = cgrad.ones(2)
    optim.Adam([p], fused=True).step()
    optim.SGD([p], lr=0.1, foreach=True).step()


def test_binding_errors():
    p = cgrad.ones(2, requires_grad=True)
    g = cgrad.ones(3)
    with pytest.raises(cgrad.ShapeMismatch, match=r"\[sgd\] parameter 0"):
        cgrad._C._sgd_step([p], [g], None, 0.1, 0.0, 0.0, 0.0, False, False)
    with pytest.raises(TypeError, match="dtype"):
        cgrad._C._adam_step([p], [cgrad.ones(2, dtype=cgrad.float64)], [cgrad.zeros(2)], [cgrad.zeros(2)], None,
                            [cgrad.tensor(0.0)], 0.1, 0.9, 0.99, 1e-8, 0.0, False, False, False)
    with pytest.raises(TypeError, match="must be a Tensor"):
        cgrad._C._sgd_step([p], [1.0], None, 0.1, 0.0, 0.0, 0.0, False, False)
    with pytest.raises(ValueError, match="entries"):
        cgrad._C._adagrad_step([p], [], [], [], 0.1, 0.0, 0.0, 1e-10, False)
    p.grad = cgrad.ones(2)
    opt = optim.Adam([cgrad.ones(1, requires_grad=True), p])
    opt.step()
    opt.state[p]["exp_avg"] = cgrad.zeros(3)
    with pytest.raises(RuntimeError, match=r"\[adam\] parameter 0: exp_avg has shape \(3,\)"):
        opt.step()


def test_large_parameter_threads():
    tp, cp = _make_params("float32", seed=11, shapes=[(300, 400)])
    topt, copt = torch.optim.Adam(tp, lr=0.01, amsgrad=True), optim.Adam(cp, lr=0.01, amsgrad=True)
    _run(tp, cp, topt, copt, 3, rtol=1e-6)


def test_deepcopy_optimizer_state():
    p = cgrad.ones(2, requires_grad=True)
    p.grad = cgrad.ones(2)
    opt = optim.SGD([p], lr=0.1, momentum=0.9)
    opt.step()
    sd = copy.deepcopy(opt.state_dict())
    assert float(sd["state"][0]["momentum_buffer"].sum()) == 2.0


@pytest.mark.parametrize("kwargs", [dict(lr=0.02), dict(lr=0.02, nesterov=False, weight_decay=0.0),
                                    dict(lr=0.01, momentum=0.5, adjust_lr_fn="match_rms_adamw", ns_steps=3)])
def test_muon_trajectory(kwargs):
    # the Newton-Schulz iteration runs in bfloat16 in both libraries; how a bfloat16 product
    # accumulates differs between CPUs, so the comparison allows bfloat16's precision
    tp, cp = _make_params("float32", seed=13, shapes=[(4, 6), (7, 3)])
    topt, copt = torch.optim.Muon(tp, **kwargs), optim.Muon(cp, **kwargs)
    _run(tp, cp, topt, copt, 5, rtol=2e-2)
    for c, t in zip(cp, tp):
        _assert_close(copt.state[c]["momentum_buffer"], topt.state[t]["momentum_buffer"], 1e-6)
    assert repr(copt) == repr(topt)


def test_muon_and_sparse_adam_errors():
    with pytest.raises(ValueError, match="Muon only supports 2D parameters"):
        optim.Muon([cgrad.ones(3, requires_grad=True)])
    with pytest.raises(ValueError, match="Adjust learning rate function bad is not supported"):
        optim.Muon([cgrad.ones(2, 2, requires_grad=True)], adjust_lr_fn="bad")
    with pytest.raises(ValueError, match="momentum should be >= 0 but is: -1"):
        optim.Muon([cgrad.ones(2, 2, requires_grad=True)], momentum=-1)
    with pytest.raises(ValueError, match="Invalid learning rate: 0"):
        optim.SparseAdam([cgrad.ones(2, requires_grad=True)], lr=0)
    p = cgrad.ones(2, requires_grad=True)
    opt = optim.SparseAdam([p])
    assert opt.defaults == torch.optim.SparseAdam([torch.ones(2, requires_grad=True)]).defaults
    p.grad = cgrad.ones(2)
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
        opt.step()
