"""Long chains and wide graphs: a 100 000-op chain runs backward and is freed
without recursion (also on a thread with a small stack), its memory returning
to the allocator; a tensor consumed by 10 000 ops accumulates all their
gradients, whether it is a leaf or an intermediate result."""
import gc
import threading

import pytest

import cgrad

CHAIN = 100_000


def live_bytes():
    gc.collect()
    return cgrad._C._memory_stats()["live_bytes"]


def chain(x, n):
    """n ops, alternately * 2 and * 0.5: exact in float64, so the gradient is exactly 1."""
    y = x
    for i in range(n // 2):
        y = y * 2.0
        y = y * 0.5
    return y


def on_small_stack(fn, stack=256 * 1024):
    """Run fn on a thread with a small C stack: recursion over the graph would overflow it."""
    out, old = [], threading.stack_size(stack)
    try:
        th = threading.Thread(target=lambda: out.append(fn()))
        th.start()
        th.join()
    finally:
        threading.stack_size(old)
    assert out, "the thread died"
    return out[0]


def run_chain(n):
    x = cgrad.ones(4, dtype=cgrad.float64, requires_grad=True)
    before = live_bytes()

    def backward_and_free():
        y = chain(x, n)
        y.sum().backward()
        del y  # frees n nodes iteratively
        grad = x.grad.tolist()
        x.grad = None
        return grad, live_bytes()

    grad, after = on_small_stack(backward_and_free)
    assert grad == [1.0] * 4
    assert after == before

    def build_and_drop():  # teardown without backward: saved tensors and all
        y = chain(x, n)
        del y
        return live_bytes()

    assert on_small_stack(build_and_drop) == before


def test_long_chain_backward_and_teardown():
    run_chain(CHAIN)


@pytest.mark.slow
def test_million_op_chain():
    run_chain(1_000_000)


def test_long_chain_of_views_and_inplace_ops():
    x = cgrad.zeros(8, dtype=cgrad.float64, requires_grad=True)
    y = x.clone()
    n = CHAIN // 10  # 4 ops each: 40 000 nodes
    for i in range(n):
        y = y.view(2, 4).t().reshape(8)  # views (the transpose makes reshape copy)
        y.add_(1.0)  # in place on a non-leaf
    y.sum().backward()
    assert x.grad.tolist() == [1.0] * 8
    assert y[0].item() == n


@pytest.mark.parametrize("leaf", [True, False])
def test_fan_out_to_10000_consumers(leaf):
    x = cgrad.ones(3, dtype=cgrad.float64, requires_grad=True)
    h = x if leaf else x * 1.0
    outs = [h * float(i) for i in range(10_000)]  # 10 000 edges into one node
    loss = cgrad.stack(outs).sum()
    total = sum(range(10_000))
    loss.backward(retain_graph=True)
    assert x.grad.tolist() == [float(total)] * 3
    # the same through 2 000 roots summed in Python, by autograd.grad
    (g,) = cgrad.autograd.grad(sum(o.sum() for o in outs[:2000]), [x])
    assert g.tolist() == [float(sum(range(2000)))] * 3
