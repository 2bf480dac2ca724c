"""cgrad.nn.parallel against PyTorch's CPU build: DataParallel runs the wrapped
module directly (attributes, state-dict keys, repr, outputs, gradients, a
training step), data_parallel and DistributedDataParallel raise what PyTorch
raises without GPUs / without a process group."""
import pytest
import torch

import cgrad
from cgrad import nn


def _pair():
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    cm = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    cm.load_state_dict({k: cgrad.tensor(v.tolist()) for k, v in tm.state_dict().items()})
    return cm, tm


def test_data_parallel_wraps_and_runs_the_module():
    cm, tm = _pair()
    cdp, tdp = nn.DataParallel(cm), torch.nn.DataParallel(tm)
    assert cdp.module is cm and tdp.module is tm
    assert cdp.device_ids == tdp.device_ids == []
    assert list(cdp.state_dict()) == list(tdp.state_dict())
    assert [n for n, _ in cdp.named_parameters()] == [n for n, _ in tdp.named_parameters()]
    assert repr(cdp) == repr(tdp)
    assert hasattr(cdp, "dim") == hasattr(tdp, "dim") and hasattr(cdp, "output_device") == hasattr(tdp, "output_device")
    x = [[0.5, -1.0, 2.0, 0.0], [1.0, 1.0, -0.5, 3.0]]
    cy, ty = cdp(cgrad.tensor(x)), tdp(torch.tensor(x))
    assert cgrad.allclose(cy, cgrad.tensor(ty.tolist()), atol=1e-6)
    cy.sum().backward()
    ty.sum().backward()
    for (n, cp), (_, tp) in zip(cdp.named_parameters(), tdp.named_parameters()):
        assert cgrad.allclose(cp.grad, cgrad.tensor(tp.grad.tolist()), atol=1e-6), n


def test_data_parallel_arguments_as_on_a_cpu_build():
    for kw in ({"device_ids": [0]}, {"device_ids": []}, {"output_device": 0}, {"dim": 1}):
        cdp, tdp = nn.DataParallel(nn.Linear(2, 2), **kw), torch.nn.DataParallel(torch.nn.Linear(2, 2), **kw)
        assert cdp.device_ids == tdp.device_ids == []
    assert nn.DataParallel is nn.parallel.DataParallel and nn.DataParallel.__module__ == "cgrad.nn.parallel.data_parallel"
    m = nn.DataParallel(nn.Linear(2, 2))
    assert m(input=cgrad.ones(1, 2)).shape == (1, 2)  # keyword arguments pass through


def test_data_parallel_trains_and_its_state_dict_loads_into_the_module():
    cm, _ = _pair()
    dp = nn.DataParallel(cm)
    opt = cgrad.optim.SGD(dp.parameters(), lr=0.1)
    x, y = cgrad.randn(8, 4), cgrad.randint(0, 2, (8,))
    before = cgrad.nn.functional.cross_entropy(dp(x), y).item()
    for _ in range(20):
        loss = cgrad.nn.functional.cross_entropy(dp(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss.item() < before
    fresh = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    fresh.load_state_dict({k[len("module."):]: v for k, v in dp.state_dict().items()})
    assert cgrad.equal(fresh(x), cm(x))
    nn.DataParallel(fresh).load_state_dict(dp.state_dict())


def test_data_parallel_function_raises_as_torch():
    with pytest.raises(RuntimeError, match="device type could not be determined"):
        torch.nn.parallel.data_parallel(torch.nn.Linear(2, 2), torch.ones(1, 2))
    with pytest.raises(RuntimeError, match="device type could not be determined"):
        nn.parallel.data_parallel(nn.Linear(2, 2), cgrad.ones(1, 2))


@pytest.mark.parametrize("kwargs", [{}, {"device_ids": [0]}, {"find_unused_parameters": True}])
def test_distributed_data_parallel_needs_a_process_group(kwargs):
    with pytest.raises(ValueError, match="Default process group has not been initialized") as t_info:
        torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2), **kwargs)
    with pytest.raises(type(t_info.value), match="Default process group has not been initialized"):
        nn.parallel.DistributedDataParallel(nn.Linear(2, 2), **kwargs)
    with pytest.raises(NotImplementedError, match="no distributed backend"):
        nn.parallel.DistributedDataParallel(nn.Linear(2, 2), process_group=object())
    assert issubclass(nn.parallel.DistributedDataParallel, nn.Module)
    assert nn.parallel.DistributedDataParallel.__module__ == "cgrad.nn.parallel.distributed"
