"""Memory formats (Note [Memory formats] in cgrad.h): cgrad.channels_last / channels_last_3d /
contiguous_format / preserve_format as real layouts, checked against PyTorch's strides: contiguous(),
is_contiguous(), clone(), to(), the *_like factories, empty(), Module.to(), and the layout elementwise
results take from their inputs (PyTorch's TensorIterator rule)."""
import pickle

import numpy as np
import pytest
import torch

import cgrad

FORMATS = ["contiguous_format", "channels_last", "channels_last_3d", "preserve_format"]


def pair(shape, make=None, seed=0):
    """The same random float64 tensor in cgrad and torch, built by `make` (a function of a torch tensor
    applied identically to both: a view or a layout change)."""
    a = np.random.default_rng(seed).standard_normal(shape)
    c, t = cgrad.tensor(a), torch.tensor(a)
    if make:
        c, t = make(c, cgrad), make(t, torch)
    return c, t


def same(c, t):
    assert tuple(c.shape) == tuple(t.shape)
    if t.numel():  # an empty tensor's strides say nothing (PyTorch's differ between its own paths)
        assert c.stride() == t.stride(), (c.stride(), t.stride())
    # values to a few ulps: transcendental kernels round differently by SIMD width (AVX2 / AVX-512)
    np.testing.assert_allclose(c.detach().numpy(), t.detach().numpy(), rtol=1e-12, atol=1e-300)


LAYOUTS = {
    "contiguous": lambda x, m: x,
    "channels_last": lambda x, m: x.contiguous(memory_format=m.channels_last),
    "transposed": lambda x, m: x.transpose(1, 2),
    "sliced": lambda x, m: x[:, :, ::2],
    "permuted": lambda x, m: x.permute(3, 1, 0, 2).contiguous().permute(2, 1, 3, 0),
}
SHAPES = [(2, 3, 4, 5), (1, 3, 1, 1), (2, 1, 4, 4), (0, 3, 2, 2), (3, 3, 1, 5)]


def test_objects():
    for name in FORMATS:
        f = getattr(cgrad, name)
        assert isinstance(f, cgrad.memory_format)
        assert repr(f) == f"cgrad.{name}"
        assert pickle.loads(pickle.dumps(f)) is f
    assert isinstance(cgrad.strided, cgrad.layout) and repr(cgrad.strided) == "cgrad.strided"
    assert cgrad.zeros(2).layout is cgrad.strided
    with pytest.raises(TypeError):
        cgrad.memory_format()


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_contiguous_is_contiguous_clone(shape, layout):
    c, t = pair(shape, LAYOUTS[layout])
    for name in ["contiguous_format", "channels_last"]:
        fc, ft = getattr(cgrad, name), getattr(torch, name)
        assert c.is_contiguous(memory_format=fc) == t.is_contiguous(memory_format=ft)
        same(c.contiguous(memory_format=fc), t.contiguous(memory_format=ft))
        same(c.clone(memory_format=fc), t.clone(memory_format=ft))
        same(c.to(memory_format=fc), t.to(memory_format=ft))
        same(cgrad.empty_like(c, memory_format=fc).fill_(1), torch.empty_like(t, memory_format=ft).fill_(1))
    assert c.is_contiguous(memory_format=cgrad.preserve_format) == t.is_contiguous(memory_format=torch.preserve_format)
    same(c.clone(), t.clone())
    same(cgrad.clone(c), torch.clone(t))
    same(c.to(cgrad.float32), t.to(torch.float32))
    for fc, ft in [(cgrad.zeros_like, torch.zeros_like), (cgrad.ones_like, torch.ones_like)]:
        same(fc(c), ft(t))
        same(fc(c, memory_format=cgrad.channels_last), ft(t, memory_format=torch.channels_last))
    same(cgrad.full_like(c, 2.5), torch.full_like(t, 2.5))
    if t.numel():
        assert cgrad.rand_like(c).stride() == torch.rand_like(t).stride()
        assert cgrad.randn_like(c, memory_format=cgrad.contiguous_format).stride() == \
            torch.randn_like(t, memory_format=torch.contiguous_format).stride()


def test_channels_last_3d():
    c, t = pair((2, 3, 2, 4, 5))
    same(c.contiguous(memory_format=cgrad.channels_last_3d), t.contiguous(memory_format=torch.channels_last_3d))
    cl, tl = c.contiguous(memory_format=cgrad.channels_last_3d), t.contiguous(memory_format=torch.channels_last_3d)
    assert cl.is_contiguous(memory_format=cgrad.channels_last_3d)
    assert not cl.is_contiguous(memory_format=cgrad.channels_last)
    same(cl.clone(), tl.clone())
    same(cl * 2, tl * 2)


def test_factories_and_to_forms():
    same(cgrad.empty(2, 3, 4, 5, memory_format=cgrad.channels_last).fill_(0),
         torch.empty(2, 3, 4, 5, memory_format=torch.channels_last).fill_(0))
    c, t = pair((2, 3, 4, 5))
    same(c.to(cgrad.float32, memory_format=cgrad.channels_last), t.to(torch.float32, memory_format=torch.channels_last))
    same(c.to("cpu", cgrad.float64, memory_format=cgrad.channels_last),
         t.to("cpu", torch.float64, memory_format=torch.channels_last))
    cl = c.to(memory_format=cgrad.channels_last)
    assert cl.to(memory_format=cgrad.channels_last) is cl  # nothing to do: self, as in PyTorch
    assert cl.contiguous(memory_format=cgrad.channels_last) is cl
    copied = cl.to(memory_format=cgrad.channels_last, copy=True)
    assert copied is not cl and copied.stride() == cl.stride()
    same(c.cpu(memory_format=cgrad.channels_last), t.cpu(memory_format=torch.channels_last))


def test_errors():
    c2, t2 = pair((2, 3))
    c4, t4 = pair((2, 3, 4, 5), LAYOUTS["transposed"])
    cases = [
        (lambda m, x, y: x.contiguous(memory_format=m.channels_last), c2, t2),
        (lambda m, x, y: x.clone(memory_format=m.channels_last), c2, t2),
        (lambda m, x, y: x.to(memory_format=m.channels_last), c2, t2),
        (lambda m, x, y: m.empty(2, 3, memory_format=m.channels_last), c2, t2),
        (lambda m, x, y: m.empty_like(x, memory_format=m.channels_last_3d), c2, t2),
        (lambda m, x, y: m.empty(2, 2, memory_format=m.preserve_format), c2, t2),
        (lambda m, x, y: x.contiguous(memory_format=m.preserve_format), c4, t4),
        (lambda m, x, y: x.contiguous(memory_format="channels_last"), c4, t4),
        (lambda m, x, y: x.is_contiguous(memory_format=1), c4, t4),
        (lambda m, x, y: m.zeros(2, 3, 4, 5, memory_format=m.channels_last), c2, t2),
    ]
    for f, c, t in cases:
        with pytest.raises(Exception) as want:
            f(torch, t, None)
        with pytest.raises(want.type):
            f(cgrad, c, None)
    with pytest.raises(NotImplementedError, match="sparse_coo"):
        cgrad.zeros(2, layout=cgrad.sparse_coo)
    assert cgrad.zeros(2, layout=cgrad.strided).shape == (2,)
    assert cgrad.normal(0.0, 1.0, (3,), layout=cgrad.strided).shape == (3,)


@pytest.mark.parametrize("layout", ["channels_last", "transposed", "permuted", "sliced"])
def test_elementwise_results_keep_the_layout(layout):
    c, t = pair((2, 3, 4, 5), LAYOUTS[layout])
    d, u = pair(tuple(t.shape), seed=1)
    b, v = pair((t.shape[1], 1, t.shape[3]), seed=2)
    for f in [lambda x, y, z, m: x + 1, lambda x, y, z, m: m.exp(x), lambda x, y, z, m: x * y,
              lambda x, y, z, m: y * x, lambda x, y, z, m: x + z, lambda x, y, z, m: z + x,
              lambda x, y, z, m: m.where(x > 0, x, y), lambda x, y, z, m: m.relu(x),
              lambda x, y, z, m: (x > 0), lambda x, y, z, m: x.to(m.float32) * 2]:
        same(f(c, d, b, cgrad), f(t, u, v, torch))


def test_gradients_through_layouts():
    c, t = pair((2, 3, 4, 5))
    c.requires_grad_(), t.requires_grad_()
    w = np.random.default_rng(3).standard_normal((2, 3, 4, 5))
    for x, m in [(c, cgrad), (t, torch)]:
        y = x.contiguous(memory_format=m.channels_last)
        (m.sin(y) * m.tensor(w)).sum().backward()
    same(c.grad, t.grad)


def test_module_to_memory_format():
    cm, tm = cgrad.nn.Sequential(cgrad.nn.Conv2d(3, 4, 3), cgrad.nn.Linear(4, 2)), \
        torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.Linear(4, 2))
    cm.to(memory_format=cgrad.channels_last)
    tm.to(memory_format=torch.channels_last)
    for (n, p), (_, q) in zip(cm.named_parameters(), tm.named_parameters()):
        assert p.stride() == q.stride(), n
        assert isinstance(p, cgrad.nn.Parameter)
    cm.to(cgrad.float64, memory_format=cgrad.contiguous_format)
    assert cm[0].weight.dtype == cgrad.float64 and cm[0].weight.is_contiguous()
    with pytest.raises(TypeError):
        cm.to(memory_format="channels_last")


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("dims", [2, 3])
def test_batch_norm_channels_last(training, dims):
    """Note [Channels-last batch norm]: a channels_last input gives a channels_last result, the same
    values, gradients and running statistics as PyTorch's."""
    shape = (4, 3, 5, 6) if dims == 2 else (2, 3, 2, 4, 5)
    fmt = "channels_last" if dims == 2 else "channels_last_3d"
    a = np.random.default_rng(4).standard_normal(shape)
    w = np.random.default_rng(5).standard_normal(shape)
    out = {}
    for m in (cgrad, torch):
        x = m.tensor(a).contiguous(memory_format=getattr(m, fmt)).requires_grad_()
        bn = getattr(m.nn, f"BatchNorm{dims}d")(3).double()
        with m.no_grad():
            bn.weight.copy_(m.tensor([0.5, 1.5, -1.0], dtype=m.float64))
            bn.bias.copy_(m.tensor([0.1, 0.0, 0.3], dtype=m.float64))
        bn.train(training)
        if not training:
            bn.running_mean.fill_(0.2), bn.running_var.fill_(1.7)
        y = bn(x)
        (y * m.tensor(w)).sum().backward()
        out[m] = (y, x.grad, bn.weight.grad, bn.running_mean, bn.running_var)
    for c, t in zip(out[cgrad], out[torch]):
        assert c.stride() == t.stride()
        np.testing.assert_allclose(c.detach().numpy(), t.detach().numpy(), rtol=1e-12, atol=1e-12)


def test_leaf_gradients_keep_the_leaf_layout():
    """PyTorch's layout contract: a non-overlapping dense leaf's .grad has the leaf's strides."""
    for make in [LAYOUTS["channels_last"], LAYOUTS["permuted"], LAYOUTS["sliced"], LAYOUTS["transposed"]]:
        c, t = pair((2, 3, 4, 5), make)
        c, t = c.detach().requires_grad_(), t.detach().requires_grad_()
        for x, m in [(c, cgrad), (t, torch)]:
            (m.exp(x.contiguous()) * 3).sum().backward()
            (x * 2).sum().backward()  # the second gradient accumulates into the first
        same(c.grad, t.grad)
