"""cgrad.optim.lr_scheduler against torch.optim.lr_scheduler: every
scheduler's learning-rate sequence over 50 steps (two parameter groups with
different lrs), OneCycleLR / CyclicLR momentum and betas, ReduceLROnPlateau
with a scripted metric, SequentialLR / ChainedScheduler, step(epoch) closed
forms, and state_dict round trips mid-run."""
import math
import warnings

import pytest
import torch

import cgrad
import cgrad.optim as optim

STEPS = 50


def _optimizer(lib, kind="SGD"):
    ones = (lambda n: torch.ones(n, requires_grad=True)) if lib is torch else (
        lambda n: cgrad.ones(n, requires_grad=True))
    mod = torch.optim if lib is torch else optim
    groups = [{"params": [ones(2)], "lr": 0.1}, {"params": [ones(3)], "lr": 0.03}]
    if kind == "SGD":
        return mod.SGD(groups, lr=0.1, momentum=0.9)
    return mod.Adam(groups, lr=0.1)


SCHEDULERS = {
    "StepLR": (lambda m, o: m.StepLR(o, step_size=7, gamma=0.5), "SGD"),
    "MultiStepLR": (lambda m, o: m.MultiStepLR(o, milestones=[5, 12, 12, 30], gamma=0.3), "SGD"),
    "ExponentialLR": (lambda m, o: m.ExponentialLR(o, gamma=0.93), "SGD"),
    "CosineAnnealingLR": (lambda m, o: m.CosineAnnealingLR(o, T_max=15, eta_min=0.001), "SGD"),
    "CosineAnnealingWarmRestarts": (lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=6, T_mult=2, eta_min=1e-4),
                                    "SGD"),
    "LambdaLR": (lambda m, o: m.LambdaLR(o, [lambda e: 0.95 ** e, lambda e: 1.0 / (1 + e)]), "SGD"),
    "MultiplicativeLR": (lambda m, o: m.MultiplicativeLR(o, lambda e: 0.97), "SGD"),
    "LinearLR": (lambda m, o: m.LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=12), "SGD"),
    "ConstantLR": (lambda m, o: m.ConstantLR(o, factor=0.4, total_iters=9), "SGD"),
    "PolynomialLR": (lambda m, o: m.PolynomialLR(o, total_iters=30, power=2.0), "SGD"),
    "OneCycleLR-cos": (lambda m, o: m.OneCycleLR(o, max_lr=[0.5, 0.2], total_steps=60), "SGD"),
    "OneCycleLR-linear-adam": (lambda m, o: m.OneCycleLR(o, max_lr=0.4, epochs=5, steps_per_epoch=12,
                                                          anneal_strategy="linear", pct_start=0.25), "Adam"),
    "OneCycleLR-three-phase": (lambda m, o: m.OneCycleLR(o, max_lr=0.3, total_steps=55, three_phase=True,
                                                          cycle_momentum=False), "SGD"),
    "CyclicLR": (lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4, mode="triangular2"), "SGD"),
    "CyclicLR-exp-adam": (lambda m, o: m.CyclicLR(o, base_lr=[0.01, 0.02], max_lr=0.1, step_size_up=3,
                                                   step_size_down=5, mode="exp_range", gamma=0.97), "Adam"),
    "SequentialLR": (lambda m, o: m.SequentialLR(o, [m.LinearLR(o, start_factor=0.1, total_iters=5),
                                                     m.ExponentialLR(o, gamma=0.9),
                                                     m.StepLR(o, step_size=4)], milestones=[5, 20]), "SGD"),
    "ChainedScheduler": (lambda m, o: m.ChainedScheduler([m.ConstantLR(o, factor=0.5, total_iters=4),
                                                          m.ExponentialLR(o, gamma=0.95)]), "SGD"),
}


def _momenta(opt):
    return [g["betas"][0] if "betas" in g else g["momentum"] for g in opt.param_groups]


def _sequence(lib, name, steps=STEPS, start=None):
    make, kind = SCHEDULERS[name]
    opt = _optimizer(lib, kind)
    mod = torch.optim.lr_scheduler if lib is torch else optim.lr_scheduler
    sched = make(mod, opt)
    seq = [(sched.get_last_lr(), _momenta(opt))]
    for _ in range(steps):
        opt.step()
        sched.step()
        seq.append((list(sched.get_last_lr()), _momenta(opt)))
    return seq, opt, sched


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_sequence_matches_torch(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t, topt, _ = _sequence(torch, name)
        c, copt, _ = _sequence(cgrad, name)
    assert c == t
    assert [g["lr"] for g in copt.param_groups] == [g["lr"] for g in topt.param_groups]
    assert [g.get("initial_lr") for g in copt.param_groups] == [g.get("initial_lr") for g in topt.param_groups]


@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "LinearLR",
                                  "ConstantLR", "PolynomialLR", "CosineAnnealingWarmRestarts"])
def test_step_with_epoch_closed_form(name):
    out = []
    for lib in (torch, cgrad):
        make, kind = SCHEDULERS[name]
        opt = _optimizer(lib, kind)
        sched = make(torch.optim.lr_scheduler if lib is torch else optim.lr_scheduler, opt)
        seq = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for epoch in [3, 7, 8, 20, 14, 40]:
                opt.step()
                sched.step(epoch)
                seq.append(sched.get_last_lr())
        out.append(seq)
    assert out[0] == out[1]


@pytest.mark.parametrize("name", ["StepLR", "CosineAnnealingLR", "OneCycleLR-linear-adam", "SequentialLR",
                                  "ChainedScheduler", "LambdaLR", "CyclicLR", "CosineAnnealingWarmRestarts"])
def test_state_dict_round_trip(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t, _, _ = _sequence(torch, name)
        c, copt, csched = _sequence(cgrad, name, steps=20)
        sd = csched.state_dict()
        make, kind = SCHEDULERS[name]
        opt2 = _optimizer(cgrad, kind)
        opt2.load_state_dict(copt.state_dict())
        sched2 = make(optim.lr_scheduler, opt2)
        sched2.load_state_dict(sd)
        for g2, g in zip(opt2.param_groups, copt.param_groups):
            g2["lr"] = g["lr"]
        seq = []
        for _ in range(30):
            opt2.step()
            sched2.step()
            seq.append((list(sched2.get_last_lr()), _momenta(opt2)))
    assert c + seq == t


def test_state_dict_layout_matches_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ["StepLR", "OneCycleLR-cos", "SequentialLR", "LambdaLR"]:
            _, _, ts = _sequence(torch, name, steps=3)
            _, _, cs = _sequence(cgrad, name, steps=3)
            assert set(cs.state_dict()) == set(ts.state_dict()), name


@pytest.mark.parametrize("kwargs", [dict(), dict(mode="max", factor=0.5, patience=2, threshold=0.1,
                                                 threshold_mode="abs", cooldown=2, min_lr=[0.01, 0.005]),
                                    dict(patience=0, eps=1e-3, min_lr=0.02)])
def test_reduce_lr_on_plateau(kwargs):
    metrics = [1.0, 0.9, 0.95, 0.95, 0.96, 0.89, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8] * 4
    out = []
    for lib in (torch, cgrad):
        opt = _optimizer(lib)
        mod = torch.optim.lr_scheduler if lib is torch else optim.lr_scheduler
        sched = mod.ReduceLROnPlateau(opt, **kwargs)
        seq = []
        for i, m in enumerate(metrics):
            opt.step()
            sched.step(m if i % 2 else (torch.tensor(m) if lib is torch else cgrad.tensor(m)))
            seq.append(sched.get_last_lr())
        out.append((seq, sched.best, sched.num_bad_epochs, sched.cooldown_counter, sched.last_epoch))
    assert out[0] == out[1]


def test_errors_match_torch():
    opt = _optimizer(cgrad)
    lrs = optim.lr_scheduler
    with pytest.raises(TypeError, match="is not an Optimizer"):
        lrs.StepLR(object(), 3)
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        lrs.ReduceLROnPlateau(opt, factor=1.5)
    with pytest.raises(ValueError, match="Expected positive integer T_0"):
        lrs.CosineAnnealingWarmRestarts(opt, T_0=0)
    with pytest.raises(ValueError, match="total_steps OR"):
        lrs.OneCycleLR(opt, max_lr=0.1)
    with pytest.raises(ValueError, match="Constant multiplicative factor"):
        lrs.ConstantLR(opt, factor=2.0)
    with pytest.raises(KeyError, match="initial_lr"):
        lrs.StepLR(_optimizer(cgrad), 3, last_epoch=4)
    with pytest.raises(ValueError, match="Tried to step 4 times"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = lrs.OneCycleLR(_optimizer(cgrad), max_lr=0.1, total_steps=3)
        for _ in range(4):
            s.step()


def test_lr_as_tensor_updated_in_place():
    p = cgrad.ones(2, requires_grad=True)
    lr = cgrad.tensor(0.1)
    opt = optim.SGD([p], lr=lr)
    sched = optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    opt.step()
    sched.step()
    assert opt.param_groups[0]["lr"] is lr
    assert math.isclose(float(lr), 0.05, rel_tol=1e-6)
