"""cgrad.multiprocessing and shared memory, in real processes: share_memory_ moves a
storage into shared memory in place (views follow), tensors sent through Queue, Pipe
and Process arguments share memory with the sender under fork and spawn and both
sharing strategies, Hogwild training of one shared model, spawn's errors for a
child that raises, exits or is killed, and DataLoader workers returning batches
through shared memory. Semantics are checked against torch.multiprocessing."""
import gc
import multiprocessing
import os

import numpy as np
import pytest
import torch
import torch.multiprocessing as tmp

import cgrad
import cgrad.multiprocessing as mp
import mp_workers

METHODS = ["fork", "spawn"]
STRATEGIES = ["file_descriptor", "file_system"]
TIMEOUT = 120


@pytest.fixture
def strategy(request):
    before = mp.get_sharing_strategy()
    mp.set_sharing_strategy(request.param)
    yield request.param
    mp.set_sharing_strategy(before)


def test_the_module_is_torch_multiprocessing():
    assert sorted(mp.__all__) == sorted(tmp.__all__)
    assert mp.get_all_sharing_strategies() == tmp.get_all_sharing_strategies()
    assert mp.get_sharing_strategy() == tmp.get_sharing_strategy() == "file_descriptor"
    assert mp.Queue is multiprocessing.Queue and mp.get_context is multiprocessing.get_context
    with pytest.raises(AssertionError):
        mp.set_sharing_strategy("carrier pigeon")
    with pytest.raises(AssertionError):
        tmp.set_sharing_strategy("carrier pigeon")


def test_share_memory_moves_the_storage_in_place():
    for lib in (cgrad, torch):
        a = lib.arange(6.0)
        v = a[2:5]
        before = a.data_ptr()
        assert not a.is_shared()
        assert a.share_memory_() is a
        assert a.is_shared() and v.is_shared()  # every view of the storage follows
        assert a.data_ptr() != before and v.data_ptr() == a.data_ptr() + 8
        assert a.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
        v[0] = 10.0
        assert a[2].item() == 10.0
        e = lib.ones(0)
        e.share_memory_()
        assert e.is_shared()
        with pytest.raises(RuntimeError, match="only available on CPU"):
            lib.ones(2, device="meta").share_memory_()
    a = cgrad.arange(4.0)
    i = a.view(cgrad.int32)  # one storage, so it moves with a
    a.share_memory_()
    assert i.is_shared() and i.data_ptr() == a.data_ptr()
    a[1] = 1.0
    assert i[1].item() == 1065353216


def test_module_and_optimizer_share_memory():
    m = cgrad.nn.Sequential(cgrad.nn.Linear(3, 4), cgrad.nn.BatchNorm1d(4))
    m(cgrad.ones(2, 3)).sum().backward()
    assert m.share_memory() is m
    assert all(p.is_shared() and p.grad.is_shared() for p in m.parameters())
    assert all(b.is_shared() for b in m.buffers())
    opt = cgrad.optim.Adagrad(m.parameters())
    opt.share_memory()
    assert all(opt.state[p]["sum"].is_shared() for p in m.parameters())


@pytest.mark.parametrize("strategy", STRATEGIES, indirect=True)
@pytest.mark.parametrize("method", METHODS)
def test_tensors_sent_to_a_process_share_memory(method, strategy):
    ctx = mp.get_context(method)
    q, r = ctx.Queue(), ctx.Queue()
    a = cgrad.zeros(5)
    t = cgrad.zeros(3).share_memory_()
    p = ctx.Process(target=mp_workers.write_through, args=(q, r, t))
    p.start()
    q.put(a[1:4])  # a view: the whole storage is shared, the view rebuilt over it
    assert r.get(timeout=TIMEOUT) == "done"
    p.join(TIMEOUT)
    assert p.exitcode == 0
    assert a.tolist() == [0.0, 1.0, 1.0, 1.0, 0.0] and a.is_shared()
    assert t.tolist() == [42.0, 0.0, 0.0]
    del a, t, p  # (the Process holds its arguments)
    gc.collect()  # every name this process made in /dev/shm goes with its mapping
    assert not [f for f in os.listdir("/dev/shm") if f.startswith(f"cgrad_{os.getpid()}_")]


@pytest.mark.parametrize("method", METHODS)
def test_received_tensors_can_be_sent_back_and_pipes_work(method):
    ctx = mp.get_context(method)
    q, r = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=mp_workers.echo_back, args=(q, r))
    p.start()
    a = cgrad.arange(4.0, dtype=cgrad.float64)
    q.put(a)
    back = r.get(timeout=TIMEOUT)
    assert r.get(timeout=TIMEOUT) is True
    q.put("bye")
    p.join(TIMEOUT)
    assert back.tolist() == a.tolist() == [0.0, 2.0, 4.0, 6.0] and back.dtype == cgrad.float64
    parent, child = ctx.Pipe()
    p = ctx.Process(target=mp_workers.pipe_child, args=(child,))
    p.start()
    b = cgrad.zeros(2, 2)
    parent.send(b.t())
    assert parent.recv() == "ok"
    p.join(TIMEOUT)
    assert b.tolist() == [[7.0, 7.0], [7.0, 7.0]]


def test_parameters_keep_their_class_and_non_leaves_are_refused():
    from multiprocessing.reduction import ForkingPickler
    p = cgrad.nn.Parameter(cgrad.ones(2))
    back = ForkingPickler.loads(ForkingPickler.dumps(p))
    assert isinstance(back, cgrad.nn.Parameter) and back.requires_grad and back.is_shared()
    x = cgrad.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor"):
        ForkingPickler.dumps(x)
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor"):
        ForkingPickler.dumps(torch.ones(2, requires_grad=True) * 2)


@pytest.mark.parametrize("method", METHODS)
def test_hogwild(method):
    """Two processes train one shared model with SGD; the parent's model is the trained one."""
    cgrad.manual_seed(0)
    model = cgrad.nn.Sequential(cgrad.nn.Linear(4, 8), cgrad.nn.Tanh(), cgrad.nn.Linear(8, 1))
    x = cgrad.randn(64, 4)
    y = (x.sum(1, keepdim=True) > 0).float()
    loss0 = ((model(x) - y) ** 2).mean().item()
    w0 = [p.detach().clone() for p in model.parameters()]
    model.share_memory()
    ctx = mp.get_context(method)
    procs = [ctx.Process(target=mp_workers.hogwild, args=(rank, model, x, y, 60)) for rank in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(TIMEOUT)
        assert p.exitcode == 0
    loss1 = ((model(x) - y) ** 2).mean().item()
    assert all(not np.array_equal(a.numpy(), b.detach().numpy()) for a, b in zip(w0, model.parameters()))
    assert loss1 < 0.8 * loss0, (loss0, loss1)


def test_spawn_raises_what_went_wrong_in_a_child():
    with pytest.raises(mp.ProcessRaisedException, match="ValueError: boom from rank 1") as e:
        mp.spawn(mp_workers.raises, nprocs=2)
    assert e.value.error_index == 1
    with pytest.raises(mp.ProcessExitedException, match="process 0 terminated with exit code 3") as e:
        mp.spawn(mp_workers.exits, args=(3,), nprocs=2)
    assert e.value.exit_code == 3
    with pytest.raises(mp.ProcessExitedException, match="terminated with signal SIGKILL") as e:
        mp.start_processes(mp_workers.killed, nprocs=2, start_method="fork")
    assert e.value.signal_name == "SIGKILL"
    assert mp.spawn(mp_workers.raises, nprocs=1) is None  # rank 0 succeeds
    ctx = mp.spawn(mp_workers.raises, nprocs=1, join=False)
    while not ctx.join():
        pass
    with pytest.raises(ValueError, match="spawn"):
        mp.spawn(mp_workers.raises, start_method="fork")


@pytest.mark.parametrize("method", METHODS)
def test_dataloader_workers_return_batches_in_shared_memory(method):
    ds = mp_workers.Squares()
    ref = list(cgrad.utils.data.DataLoader(ds, batch_size=8))
    loader = cgrad.utils.data.DataLoader(ds, batch_size=8, num_workers=2,
                                         multiprocessing_context=mp.get_context(method))
    got = list(loader)
    assert len(got) == len(ref) == 8
    for (x, i), (rx, ri) in zip(got, ref):
        assert x.is_shared() and i.is_shared() and not rx.is_shared()
        assert x.tolist() == rx.tolist() and i.tolist() == ri.tolist()


def test_a_dead_dataloader_worker_is_an_error_not_a_hang():
    import time
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly"):
        list(cgrad.utils.data.DataLoader(mp_workers.DiesInWorker(), batch_size=2, num_workers=2))
    assert time.monotonic() - t0 < 60
