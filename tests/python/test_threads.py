"""Concurrency: backward releases the GIL, and several Python threads running
forward/backward on separate graphs that share leaf parameters accumulate the
same gradients as a serial run; grad mode is per thread. The stress tests at
the end train separate models and one shared model from several threads,
switch grad modes concurrently, draw from the RNG and churn the allocator."""
import gc
import threading

import numpy as np

import cgrad

N_THREADS = 4
ITERS = 12
SHAPE = (64, 512)  # 32768 elements: large enough for the binding to drop the GIL


def make_params():
    rng = np.random.default_rng(3)
    w = cgrad.tensor((rng.standard_normal(SHAPE) * 0.1).tolist(), dtype=cgrad.float64, requires_grad=True)
    b = cgrad.tensor((rng.standard_normal(SHAPE[1:]) * 0.1).tolist(), dtype=cgrad.float64, requires_grad=True)
    return w, b


def inputs(k):
    rng = np.random.default_rng(100 + k)
    return cgrad.tensor(rng.standard_normal(SHAPE).tolist(), dtype=cgrad.float64)


def step(w, b, x, k):
    y = (x * w + b).exp() * (1.0 + k % 3) - w * b
    y.sum().backward()


def run_serial(w, b, xs):
    for t in range(N_THREADS):
        for i in range(ITERS):
            step(w, b, xs[t], i)


def run_threads(w, b, xs):
    errors = []
    start = threading.Barrier(N_THREADS)

    def worker(t):
        try:
            start.wait()
            for i in range(ITERS):
                step(w, b, xs[t], i)
        except BaseException as e:  # surfaced in the main thread
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(N_THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors


def test_concurrent_backward_matches_serial():
    xs = [inputs(t) for t in range(N_THREADS)]
    w, b = make_params()
    run_serial(w, b, xs)
    gw, gb = np.asarray(w.grad.tolist()), np.asarray(b.grad.tolist())
    w.grad = None
    b.grad = None
    run_threads(w, b, xs)
    np.testing.assert_allclose(np.asarray(w.grad.tolist()), gw, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(b.grad.tolist()), gb, rtol=1e-12, atol=1e-12)


def test_concurrent_backward_with_fresh_leaves_and_hooks():
    # each round uses new leaves (their gradient accumulators are created and
    # torn down concurrently) and a Python hook that runs under the GIL
    calls = []
    lock = threading.Lock()

    def hook(g):
        with lock:
            calls.append(tuple(g.shape))

    for _ in range(3):
        w, b = make_params()
        w.register_hook(hook)
        xs = [inputs(t) for t in range(N_THREADS)]
        run_threads(w, b, xs)
        w2, b2 = make_params()
        run_serial(w2, b2, xs)
        np.testing.assert_allclose(np.asarray(w.grad.tolist()), np.asarray(w2.grad.tolist()), rtol=1e-12, atol=1e-12)
    assert len(calls) == 3 * N_THREADS * ITERS and set(calls) == {SHAPE}


def test_autograd_grad_concurrently():
    w, _ = make_params()
    results = [None] * N_THREADS

    def worker(t):
        x = inputs(t)
        (g,) = cgrad.autograd.grad((x * w).exp().sum(), [w])
        results[t] = np.asarray(g.tolist())

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(N_THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for t in range(N_THREADS):
        x = inputs(t)
        (g,) = cgrad.autograd.grad((x * w).exp().sum(), [w])
        np.testing.assert_array_equal(results[t], np.asarray(g.tolist()))
    assert w.grad is None


def test_grad_mode_is_per_thread():
    entered, checked = threading.Event(), threading.Event()
    seen = {}

    def worker():
        with cgrad.no_grad():
            entered.set()
            checked.wait(10)
            x = cgrad.ones(2, requires_grad=True)
            seen["worker_enabled"] = cgrad.is_grad_enabled()
            seen["worker_requires_grad"] = (x * 2).requires_grad

    th = threading.Thread(target=worker)
    th.start()
    entered.wait(10)
    seen["main_enabled"] = cgrad.is_grad_enabled()
    seen["main_requires_grad"] = (cgrad.ones(2, requires_grad=True) * 2).requires_grad
    checked.set()
    th.join()
    assert seen == {"worker_enabled": False, "worker_requires_grad": False,
                    "main_enabled": True, "main_requires_grad": True}
    # a thread starts with grad mode on even when the spawning thread has it off
    with cgrad.no_grad():
        out = []
        th = threading.Thread(target=lambda: out.append(cgrad.is_grad_enabled()))
        th.start()
        th.join()
    assert out == [True]


# ---------------------------------------------------------------- stress: models, grad mode, RNG, allocator

def run_workers(n, target):
    """Run target(t) in n threads released together; re-raise the first failure."""
    errors = []
    start = threading.Barrier(n)

    def body(t):
        try:
            start.wait()
            target(t)
        except BaseException as e:  # surfaced in the main thread
            errors.append(e)

    threads = [threading.Thread(target=body, args=(t,)) for t in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        raise errors[0]


def mlp(seed):
    cgrad.manual_seed(seed)
    return cgrad.nn.Sequential(cgrad.nn.Linear(512, 128), cgrad.nn.Tanh(), cgrad.nn.Linear(128, 10)).double()


def batch(seed):
    g = cgrad.Generator().manual_seed(seed)
    return cgrad.randn(64, 512, generator=g, dtype=cgrad.float64), cgrad.randint(0, 10, (64,), generator=g)


def train(model, data, steps):
    opt = cgrad.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x, y = data
    for _ in range(steps):
        loss = cgrad.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()


def params_of(model):
    return [p.detach().clone() for p in model.parameters()]


def test_separate_models_train_concurrently_like_serial():
    # Each thread trains its own model on its own data; linear layers of
    # 64x512 inputs release the GIL, so BLAS, the loops and the allocator run
    # concurrently. Every element is computed as in the serial run: equal bits.
    steps = 8
    models = [mlp(t) for t in range(N_THREADS)]
    data = [batch(10 + t) for t in range(N_THREADS)]
    run_workers(N_THREADS, lambda t: train(models[t], data[t], steps))
    for t in range(N_THREADS):
        ref = mlp(t)
        train(ref, data[t], steps)
        for p, q in zip(params_of(models[t]), params_of(ref)):
            assert cgrad.equal(p, q)


def test_shared_model_backward_from_threads_matches_serial():
    model = mlp(0)
    data = [batch(20 + t) for t in range(N_THREADS)]

    def accumulate(t, times=ITERS // 2):
        x, y = data[t]
        for _ in range(times):
            cgrad.nn.functional.cross_entropy(model(x), y).backward()

    run_workers(N_THREADS, accumulate)
    concurrent = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    for t in range(N_THREADS):
        accumulate(t)
    for g, p in zip(concurrent, model.parameters()):
        # the same sum in another order: equal to rounding
        np.testing.assert_allclose(g.numpy(), p.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_concurrent_grad_mode_switching_stays_per_thread():
    modes = ["no_grad", "enable_grad", "inference", "set_false", "set_true"]
    big = cgrad.ones(SHAPE, dtype=cgrad.float64)  # ops on it release the GIL mid-check

    def worker(t):
        w = cgrad.ones(8, requires_grad=True)
        for i in range(150):
            mode = modes[(i * 7 + t) % len(modes)]
            enabled = mode in ("enable_grad", "set_true")
            ctx = {"no_grad": cgrad.no_grad, "enable_grad": cgrad.enable_grad, "inference": cgrad.inference_mode,
                   "set_false": lambda: cgrad.set_grad_enabled(False),
                   "set_true": lambda: cgrad.set_grad_enabled(True)}[mode]
            with ctx():
                (big * 2).sum()
                assert cgrad.is_grad_enabled() is enabled, (t, i, mode)
                assert (w * 2).requires_grad is enabled, (t, i, mode)
                assert cgrad.is_inference_mode_enabled() is (mode == "inference"), (t, i, mode)
            assert cgrad.is_grad_enabled()

    run_workers(N_THREADS, worker)
    assert cgrad.is_grad_enabled() and not cgrad.is_inference_mode_enabled()


def test_concurrent_rng_draws_are_disjoint_and_generators_independent():
    draws, n = 200, 16
    # the global generator: concurrent draws take disjoint slices of one stream,
    # so together they are the serial run's draws in some order
    cgrad.manual_seed(1234)
    rows = [[] for _ in range(N_THREADS)]
    run_workers(N_THREADS, lambda t: rows[t].extend(cgrad.randn(n).tolist() for _ in range(draws)))
    cgrad.manual_seed(1234)
    serial = [cgrad.randn(n).tolist() for _ in range(N_THREADS * draws)]
    concurrent = [r for rs in rows for r in rs]
    assert sorted(concurrent) == sorted(serial)
    # private generators, interleaved with global draws in other threads: their
    # streams are those of a serial run
    got = [None] * N_THREADS

    def private(t):
        g = cgrad.Generator().manual_seed(100 + t)
        out = []
        for i in range(draws):
            out.append(cgrad.rand(n, generator=g).tolist())
            cgrad.randn(n)  # the global stream moves meanwhile
        got[t] = out

    run_workers(N_THREADS, private)
    for t in range(N_THREADS):
        g = cgrad.Generator().manual_seed(100 + t)
        assert got[t] == [cgrad.rand(n, generator=g).tolist() for _ in range(draws)]


def test_allocator_churn_from_threads():
    # Half the threads run backward passes over small tensors (the engine
    # allocates without the GIL), half allocate and free tensors of every size
    # class from Python, large ones in GIL-free kernels; every value is checked
    # and the live bytes return to where they were.
    gc.collect()
    before = cgrad._C._memory_stats()["live_bytes"]
    sizes = [1, 7, 64, 300, 1000, 5000, 40000, 300000]

    def backward_worker(t):
        w = cgrad.full((37,), float(t + 1), requires_grad=True)
        for i in range(120):
            y = ((w * 3).exp().log() - w).sum() * (i % 3 + 1)
            y.backward()
        # d/dw (log(exp(3w)) - w) * k = 2k, and k runs 1, 2, 3 forty times
        np.testing.assert_allclose(w.grad.numpy(), np.full(37, 2.0 * 6 * 40), rtol=1e-5)

    def alloc_worker(t):
        keep = []
        for i in range(120):
            n = sizes[(i + t) % len(sizes)]
            a = cgrad.full((n,), float(t))
            b = a * 2 + 1  # GIL-free above 32768 elements
            keep.append(b)
            if len(keep) > 5:
                old = keep.pop(0)
                assert old.min().item() == old.max().item() == 2.0 * t + 1
        for b in keep:
            assert b.min().item() == b.max().item() == 2.0 * t + 1

    run_workers(N_THREADS, lambda t: (backward_worker if t % 2 else alloc_worker)(t))
    gc.collect()
    assert cgrad._C._memory_stats()["live_bytes"] == before
