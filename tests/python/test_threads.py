"""Concurrency: backward releases the GIL, and several Python threads running
forward/backward on separate graphs that share leaf parameters accumulate the
same gradients as a serial run; grad mode is per thread."""
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
