"""`t.data = other` keeps t's identity (Note [Data assignment] in
src/core/tensor.c), as PyTorch's set_data does: the same tensor object and
autograd leaf, its .grad, hooks and version; only storage, shape, strides and
dtype move. Compared with PyTorch on the same programs."""
import gc

import pytest
import torch

import cgrad


@pytest.mark.parametrize("L", [torch, cgrad], ids=["torch", "cgrad"])
def test_weight_data_scaled_between_forward_and_backward_keeps_the_gradient(L):
    L.manual_seed(0)
    lin = L.nn.Linear(2, 2)
    w = lin.weight
    x = L.ones(1, 2, requires_grad=True)
    out = lin(x)
    lin.weight.data = lin.weight.data * 0.5
    out.sum().backward()
    assert lin.weight is w
    assert lin.weight.grad is not None
    assert lin.weight.grad.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    assert lin.bias.grad.tolist() == [1.0, 1.0]


def test_optimizer_still_steps_the_parameter_after_data_assignment():
    res = {}
    for L in (torch, cgrad):
        w = L.nn.Parameter(L.tensor([1.0, 2.0, 3.0]))
        opt = L.optim.SGD([w], lr=0.1)
        (w * w).sum().backward()
        w.data = w.data * 2
        opt.step()
        res[L.__name__] = w.tolist()
    assert res["cgrad"] == pytest.approx(res["torch"])
    assert res["cgrad"] == pytest.approx([1.8, 3.6, 5.4])


@pytest.mark.parametrize("L", [torch, cgrad], ids=["torch", "cgrad"])
def test_grad_and_hooks_survive(L):
    x = L.tensor([1.0, 2.0], requires_grad=True)
    (x * 3).sum().backward()
    g = x.grad
    seen = []
    x.register_hook(lambda gr: seen.append(gr.tolist()))
    x.data = L.tensor([5.0, 6.0])
    assert x.grad is not None and x.grad.tolist() == [3.0, 3.0]
    (x * x).sum().backward()
    assert seen == [[10.0, 12.0]]
    assert x.grad.tolist() == [13.0, 15.0]
    assert x.requires_grad and x.is_leaf
    del g


@pytest.mark.parametrize("L", [torch, cgrad], ids=["torch", "cgrad"])
def test_shape_dtype_and_version(L):
    a = L.zeros(3, requires_grad=True)
    v = a._version
    a.data = L.ones(2, 2, dtype=L.float64)
    assert tuple(a.shape) == (2, 2) and a.dtype == L.float64
    assert a._version == v
    assert a.requires_grad
    with L.no_grad():
        a.add_(1)
    assert a._version == v + 1
    assert a.tolist() == [[2.0, 2.0], [2.0, 2.0]]


@pytest.mark.parametrize("L", [torch, cgrad], ids=["torch", "cgrad"])
def test_views_taken_before_keep_the_old_data(L):
    a = L.arange(4.0)
    v = a[1:3]
    a.data = L.full((4,), 9.0)
    a.add_(1)
    assert v.tolist() == [1.0, 2.0]
    assert a.tolist() == [10.0] * 4


@pytest.mark.parametrize("L", [torch, cgrad], ids=["torch", "cgrad"])
def test_the_new_data_is_shared_not_copied(L):
    a = L.zeros(3)
    b = L.ones(3)
    a.data = b
    b.mul_(4)
    assert a.tolist() == [4.0, 4.0, 4.0]


@pytest.mark.parametrize("L", [torch, cgrad], ids=["torch", "cgrad"])
def test_a_saved_leaf_changed_in_place_after_assignment_is_caught(L):
    w = L.ones(2, requires_grad=True)
    y = (w * w).sum()
    w.data = L.full((2,), 3.0)
    with L.no_grad():
        w.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


@pytest.mark.parametrize("L", [torch, cgrad], ids=["torch", "cgrad"])
def test_errors(L):
    a = L.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="floating point"):
        a.data = L.zeros(3, dtype=L.int64)
    with pytest.raises(TypeError, match="has to be a tensor"):
        a.data = 5
    b = L.zeros(3)
    b.data = L.zeros(3, dtype=L.int64)  # no grad: any dtype
    assert b.dtype == L.int64
    c = L.zeros(2)
    c.data = L.ones(2, requires_grad=True)
    assert not c.requires_grad  # c's own flag, not the source's


def test_repeated_assignment_frees_what_it_replaces():
    def live():
        gc.collect()
        return cgrad._C._memory_stats()["live_bytes"]

    a = cgrad.zeros(1000)
    a.data = cgrad.ones(1000)  # a's own block is kept from here on (Note [Data assignment])
    base = live()
    for i in range(200):
        a.data = cgrad.full((1000,), float(i))
    assert a[0].item() == 199.0
    assert live() <= base + 8192
    del a
    gc.collect()
    assert live() < base


def test_assigning_back_its_own_first_data():
    a = cgrad.arange(3.0)
    first = a.data
    a.data = cgrad.zeros(5)
    a.data = first
    del first
    gc.collect()
    assert a.tolist() == [0.0, 1.0, 2.0]
    a.add_(1)
    assert a.tolist() == [1.0, 2.0, 3.0]
