"""cgrad.optim.swa_utils against torch.optim.swa_utils: AveragedModel with the
default running mean, avg_fn / multi_avg_fn EMAs and use_buffers on a model
with BatchNorm, update_bn's statistics, SWALR's rates (cos / linear,
anneal_epochs 0, several groups) and state dict, and the errors."""
import numpy as np
import pytest
import torch

import cgrad
import cgrad.optim as optim
from cgrad.optim import swa_utils


def _models(seed=0):
    torch.manual_seed(seed)
    tm = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.BatchNorm1d(5), torch.nn.ReLU(), torch.nn.Linear(5, 2))
    cm = cgrad.nn.Sequential(cgrad.nn.Linear(4, 5), cgrad.nn.BatchNorm1d(5), cgrad.nn.ReLU(), cgrad.nn.Linear(5, 2))
    cm.load_state_dict({k: cgrad.from_numpy(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})
    return tm, cm


def _perturb(tm, cm, step):
    rng = np.random.default_rng(100 + step)
    with torch.no_grad():
        for (name, tp), cp in zip(tm.named_parameters(), cm.parameters()):
            delta = rng.uniform(-0.1, 0.1, tuple(tp.shape)).astype(np.float32)
            tp.add_(torch.from_numpy(delta))
            with cgrad.no_grad():
                cp.add_(cgrad.from_numpy(delta))
    x = rng.standard_normal((8, 4)).astype(np.float32)
    tm.train(), cm.train()
    tm(torch.from_numpy(x)), cm(cgrad.from_numpy(x))  # moves the BatchNorm buffers


def _assert_same_state(cavg, tavg, rtol=1e-6):
    tsd, csd = tavg.state_dict(), cavg.state_dict()
    assert list(csd) == list(tsd)
    for k, v in tsd.items():
        np.testing.assert_allclose(csd[k].numpy(), v.numpy(), rtol=rtol, atol=rtol, err_msg=k)


@pytest.mark.parametrize("kind", ["swa", "ema_multi", "ema_single", "swa_single", "ema_buffers"])
def test_averaged_model(kind):
    tm, cm = _models()
    fns = {"swa": ({}, {}),
           "ema_multi": ({"multi_avg_fn": torch.optim.swa_utils.get_ema_multi_avg_fn(0.9)},
                         {"multi_avg_fn": swa_utils.get_ema_multi_avg_fn(0.9)}),
           "ema_single": ({"avg_fn": torch.optim.swa_utils.get_ema_avg_fn(0.8)},
                          {"avg_fn": swa_utils.get_ema_avg_fn(0.8)}),
           "swa_single": ({"avg_fn": torch.optim.swa_utils.get_swa_avg_fn()}, {"avg_fn": swa_utils.get_swa_avg_fn()}),
           "ema_buffers": ({"multi_avg_fn": torch.optim.swa_utils.get_ema_multi_avg_fn(0.5), "use_buffers": True},
                           {"multi_avg_fn": swa_utils.get_ema_multi_avg_fn(0.5), "use_buffers": True})}
    tkw, ckw = fns[kind]
    tavg, cavg = torch.optim.swa_utils.AveragedModel(tm, **tkw), swa_utils.AveragedModel(cm, **ckw)
    for step in range(5):
        _perturb(tm, cm, step)
        tavg.update_parameters(tm)
        cavg.update_parameters(cm)
        _assert_same_state(cavg, tavg)
    assert cavg.n_averaged.item() == 5 and cavg.n_averaged.dtype == cgrad.int64
    x = np.ones((3, 4), np.float32)
    tavg.eval(), cavg.eval()
    np.testing.assert_allclose(cavg(cgrad.from_numpy(x)).detach().numpy(), tavg(torch.from_numpy(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_update_bn():
    tm, cm = _models(seed=1)
    rng = np.random.default_rng(7)
    batches = [rng.standard_normal((6, 4)).astype(np.float32) * 3 + 1 for _ in range(4)]
    tm.eval(), cm.eval()
    torch.optim.swa_utils.update_bn([(torch.from_numpy(b), 0) for b in batches], tm)
    swa_utils.update_bn([(cgrad.from_numpy(b), 0) for b in batches], cm)
    assert not cm.training and cm[1].momentum == 0.1
    for key in ("1.running_mean", "1.running_var", "1.num_batches_tracked"):
        np.testing.assert_allclose(cm.state_dict()[key].numpy(), tm.state_dict()[key].numpy(), rtol=1e-5, atol=1e-6)
    swa_utils.update_bn([], cgrad.nn.Linear(2, 2))  # no BatchNorm: nothing to do


@pytest.mark.parametrize("kwargs", [dict(swa_lr=0.05), dict(swa_lr=0.5, anneal_epochs=3, anneal_strategy="linear"),
                                    dict(swa_lr=[0.02, 0.3], anneal_epochs=0), dict(swa_lr=0.01, anneal_epochs=4)])
def test_swalr(kwargs):
    tp, cp = [torch.zeros(2, requires_grad=True), torch.zeros(1, requires_grad=True)], \
        [cgrad.zeros(2, requires_grad=True), cgrad.zeros(1, requires_grad=True)]
    topt = torch.optim.SGD([{"params": tp[:1]}, {"params": tp[1:], "lr": 0.2}], lr=0.1)
    copt = optim.SGD([{"params": cp[:1]}, {"params": cp[1:], "lr": 0.2}], lr=0.1)
    tsch, csch = torch.optim.swa_utils.SWALR(topt, **kwargs), swa_utils.SWALR(copt, **kwargs)
    for _ in range(8):
        assert csch.get_last_lr() == pytest.approx(tsch.get_last_lr(), rel=1e-12)
        topt.step(), copt.step()
        tsch.step(), csch.step()
    assert set(csch.state_dict()) == set(tsch.state_dict())


def test_errors():
    with pytest.raises(ValueError, match=r"Invalid decay value 1.5 provided"):
        swa_utils.get_ema_avg_fn(1.5)
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
        swa_utils.AveragedModel(cgrad.nn.Linear(1, 1), avg_fn=swa_utils.get_swa_avg_fn(),
                                multi_avg_fn=swa_utils.get_swa_multi_avg_fn())
    opt = optim.SGD([cgrad.zeros(1, requires_grad=True)], lr=0.1)
    with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear'"):
        swa_utils.SWALR(opt, swa_lr=0.1, anneal_strategy="exp")
    with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0"):
        swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=-1)
    with pytest.raises(ValueError, match="swa_lr must have the same length"):
        swa_utils.SWALR(opt, swa_lr=[0.1, 0.2])
