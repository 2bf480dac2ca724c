"""Focused tests of the reduction and shape bindings: overloads, named-tuple
return types, dtype rules, error types and messages, view semantics (shared
storage), in-place tril_/triu_ and out= — what the op table cannot express."""
from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch

import cgrad


def c(data, dtype=None):
    return cgrad.tensor(data, dtype=dtype)


def same(a, b):
    """cgrad tensor a equals torch tensor b (values, dtype, shape)."""
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(np.array(a.tolist(), dtype=float), np.array(b.tolist(), dtype=float), rtol=1e-6, atol=1e-6)


X = [[3.0, -1.0, 2.0, 7.0], [0.5, 4.0, -2.0, 1.0], [6.0, 5.0, 0.0, -3.0]]


# ---------------------------------------------------------------- named tuples and overloads

@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_overloads(name):
    x, tx = c(X), torch.tensor(X)
    same(getattr(x, name)(), getattr(tx, name)())
    r, tr = getattr(cgrad, name)(x, 1, keepdim=True), getattr(torch, name)(tx, 1, keepdim=True)
    assert type(r).__name__ == name and isinstance(r, tuple) and len(r) == 2
    assert type(r) is getattr(cgrad.return_types, name)
    same(r.values, tr.values)
    same(r.indices, tr.indices)
    values, indices = getattr(x, name)(dim=0)
    same(values, getattr(tx, name)(dim=0).values)
    same(indices, getattr(tx, name)(dim=0).indices)
    assert repr(r).startswith(f"cgrad.return_types.{name}(\nvalues=")  # PyTorch's layout
    # max(other) is maximum, with promotion
    other = [[1, 2, 3, 4]] * 3
    same(getattr(cgrad, name)(x, c(other)), getattr(torch, name)(tx, torch.tensor(other)))
    same(getattr(x, name)(other=c(other)), getattr(tx, name)(other=torch.tensor(other)))


def test_named_tuple_types():
    x = c(X)
    assert type(x.sort()) is cgrad.return_types.sort
    assert type(x.topk(2)) is cgrad.return_types.topk
    assert type(x.cummax(1)) is cgrad.return_types.cummax
    mm = cgrad.aminmax(x)
    assert type(mm) is cgrad.return_types.aminmax and mm.min.item() == -3.0 and mm.max.item() == 7.0
    s = x.sort(dim=0, descending=True)
    ts = torch.tensor(X).sort(dim=0, descending=True)
    same(s.values, ts.values)
    same(s.indices, ts.indices)
    v, i = x.topk(k=3, dim=1, largest=False)
    tv, ti = torch.tensor(X).topk(k=3, dim=1, largest=False)
    same(v, tv)
    same(i, ti)
    # var_mean / std_mean return plain tuples, as torch
    assert type(cgrad.var_mean(x, 1)) is tuple and len(cgrad.std_mean(x)) == 2


def test_pair_out():
    x = c(X)
    v, i = cgrad.zeros(3), cgrad.zeros(3, dtype=cgrad.int64)
    r = cgrad.max(x, 1, out=(v, i))
    assert r.values is v and r.indices is i
    assert v.tolist() == [7.0, 4.0, 6.0] and i.tolist() == [3, 1, 0]
    o = cgrad.zeros(4)
    assert cgrad.sum(x, 0, out=o) is o
    same(o, torch.tensor(X).sum(0))


def test_argmax_flattened_and_keepdim():
    x, tx = c(X), torch.tensor(X)
    same(x.argmax(), tx.argmax())
    same(cgrad.argmin(x, keepdim=True), torch.argmin(tx, keepdim=True))
    same(x.argmax(1, True), tx.argmax(1, True))


def test_var_std_overloads():
    x, tx = c(X), torch.tensor(X)
    for args, kw in [((), {}), ((False,), {}), ((1,), {}), ((1, False, True), {}), ((), {"dim": 0, "correction": 0}),
                     ((), {"dim": (0, 1), "unbiased": False}), ((), {"correction": 2.5})]:
        same(x.var(*args, **kw), tx.var(*args, **kw))
        same(cgrad.std(x, *args, **kw), torch.std(tx, *args, **kw))
    with pytest.raises(TypeError, match="unbiased and correction"):
        x.var(unbiased=True, correction=1)


def test_norm_variants():
    x, tx = c(X), torch.tensor(X)
    for args, kw in [((), {}), (("fro",), {}), ((1,), {}), ((float("inf"),), {"dim": 1}), ((), {"p": 3, "dim": (0,)}),
                     ((2, 1, True), {}), ((), {"p": 0})]:
        same(x.norm(*args, **kw), tx.norm(*args, **kw))
        same(cgrad.norm(x, *args, **kw), torch.norm(tx, *args, **kw))
    same(x.norm(dtype=cgrad.float64), tx.norm(dtype=torch.float64))
    with pytest.raises(NotImplementedError, match="nuc"):
        x.norm(p="nuc")


def test_dtype_arguments():
    xi, ti = c([[1, 2], [3, 4]], cgrad.int32), torch.tensor([[1, 2], [3, 4]], dtype=torch.int32)
    for dt, tdt in [(cgrad.int32, torch.int32), (cgrad.float64, torch.float64), (None, None)]:
        same(xi.sum(dtype=dt), ti.sum(dtype=tdt))
        same(xi.sum(1, dtype=dt), ti.sum(1, dtype=tdt))
        same(xi.cumsum(0, dtype=dt), ti.cumsum(0, dtype=tdt))
        same(xi.prod(1, dtype=dt), ti.prod(1, dtype=tdt))
    same(xi.mean(dtype=cgrad.float64), ti.mean(dtype=torch.float64))
    same(c([True, False, True]).sum(), torch.tensor([True, False, True]).sum())
    same(c([1, 0, 2], cgrad.uint8).all(), torch.tensor([1, 0, 2], dtype=torch.uint8).all())
    same(c([1, 0, 2], cgrad.uint8).any(), torch.tensor([1, 0, 2], dtype=torch.uint8).any())
    same(cgrad.logsumexp(xi, 1), torch.logsumexp(ti, 1))


@pytest.mark.parametrize("call, match", [
    (lambda x: x.mean(), "mean"),
    (lambda x: x.mean(dtype=cgrad.int64), "mean"),
    (lambda x: x.var(), "std and var"),
    (lambda x: cgrad.std(x, 0), "std and var"),
    (lambda x: x.norm(), "vector_norm"),
    (lambda x: cgrad.nanmean(x), "nanmean"),
    (lambda x: x.bool().argmax(), "bool"),
    (lambda x: x.bool().topk(1), "bool"),
])
def test_integer_inputs_raise_runtime_error(call, match):
    with pytest.raises(RuntimeError, match=match):
        call(c([[1, 2], [3, 4]]))


def test_reduction_errors():
    x = c(X)
    with pytest.raises(IndexError):
        x.sum(2)
    with pytest.raises(IndexError):
        x.max(dim=5)
    with pytest.raises(TypeError):
        x.sum(dim="a")
    with pytest.raises(TypeError):
        cgrad.sum([1, 2])
    with pytest.raises(TypeError):
        cgrad.sum()
    with pytest.raises(TypeError):
        x.cumsum()
    with pytest.raises(TypeError):
        x.prod(dim=(0, 1))
    with pytest.raises(TypeError):
        x.sum(1, out=None)  # methods have no out=
    with pytest.raises((RuntimeError, IndexError)):
        cgrad.zeros(0).max()
    with pytest.raises(IndexError):
        cgrad.zeros(0, 3).max(0)
    with pytest.raises((IndexError, RuntimeError)):
        x.topk(5)


def test_reduction_gradients_through_namedtuple():
    x = c(X).requires_grad_()
    tx = torch.tensor(X, requires_grad=True)
    (x.max(1).values.sum() + x.sort(0).values[0].sum() + x.topk(2).values.sum()).backward()
    (tx.max(1).values.sum() + tx.sort(0).values[0].sum() + tx.topk(2).values.sum()).backward()
    same(x.grad, tx.grad)


def test_return_types_pickle():
    r = c(X).max(0)
    r2 = pickle.loads(pickle.dumps(r))
    assert type(r2) is cgrad.return_types.max and r2.values.tolist() == r.values.tolist()


# ---------------------------------------------------------------- views share storage

VIEWS = [
    lambda b: b.view(4, 3), lambda b: b.transpose(0, 1), lambda b: b.t(), lambda b: b.narrow(1, 1, 2),
    lambda b: b.select(0, 2), lambda b: b.diagonal(), lambda b: b.diagonal(1), lambda b: b.as_strided((2, 2), (1, 4)),
    lambda b: b.unfold(1, 2, 2), lambda b: b.permute(1, 0), lambda b: b.movedim(0, 1), lambda b: b.flatten(),
    lambda b: b.unsqueeze(0), lambda b: b.unflatten(1, (2, 2)), lambda b: b.swapaxes(0, 1),
    lambda b: b.split(3, 1)[1], lambda b: b.chunk(2, 0)[0], lambda b: b.unbind(1)[2], lambda b: b.reshape(2, 6),
    lambda b: b.view(1, 3, 1, 4).squeeze((0, 2)),
]


@pytest.mark.parametrize("make", VIEWS)
def test_views_share_storage(make):
    base, tbase = cgrad.arange(12.0).reshape(3, 4), torch.arange(12.0).reshape(3, 4)
    v, tv = make(base), make(tbase)
    v.fill_(-1)
    tv.fill_(-1)
    same(base, tbase)


def test_view_errors_and_dtype_view():
    x = cgrad.arange(12.0).reshape(3, 4)
    with pytest.raises(RuntimeError):
        x.t().view(12)
    assert x.t().reshape(12).tolist() == torch.arange(12.0).reshape(3, 4).t().reshape(12).tolist()
    with pytest.raises(RuntimeError):
        x.view(5, -1)
    same(x.view(cgrad.int32), torch.arange(12.0).reshape(3, 4).view(torch.int32))
    assert x.view(cgrad.float32).shape == (3, 4)
    with pytest.raises(NotImplementedError, match="element size"):
        x.view(cgrad.float64)
    with pytest.raises(RuntimeError):
        x.expand(2, 5)
    with pytest.raises(RuntimeError):
        x.permute(0)
    with pytest.raises(IndexError):
        x.transpose(0, 2)
    with pytest.raises(RuntimeError):
        cgrad.zeros(2, 3, 4).t()
    with pytest.raises(RuntimeError):
        cgrad.zeros(3).fliplr()


def test_shape_method_arg_forms():
    x, tx = cgrad.arange(24.0).reshape(2, 3, 4), torch.arange(24.0).reshape(2, 3, 4)
    same(x.permute([2, 0, 1]), tx.permute([2, 0, 1]))
    same(x.permute(dims=(2, 0, 1)), tx.permute(dims=(2, 0, 1)))
    same(x.view(-1, 4), tx.view(-1, 4))
    same(x.reshape(shape=(4, 6)), tx.reshape(shape=(4, 6)))
    same(x.flip(0, 2), tx.flip(0, 2))
    same(x.repeat((1, 2, 1)), tx.repeat((1, 2, 1)))
    same(x.tile(2, 1), tx.tile(2, 1))
    same(x.transpose(dim0=0, dim1=2), tx.transpose(dim0=0, dim1=2))
    same(cgrad.swapaxes(x, axis0=0, axis1=1), torch.swapaxes(tx, axis0=0, axis1=1))
    same(x.flatten(start_dim=1), tx.flatten(start_dim=1))
    same(cgrad.narrow(x, dim=2, start=1, length=2), torch.narrow(tx, dim=2, start=1, length=2))
    same(x.squeeze(dim=()), tx.squeeze(dim=()))
    same(cgrad.movedim(x, source=(0, 1), destination=(2, 0)), torch.movedim(tx, source=(0, 1), destination=(2, 0)))
    same(cgrad.split(x, split_size_or_sections=[1, 3], dim=2)[1], torch.split(tx, split_size_or_sections=[1, 3], dim=2)[1])
    assert type(x.split(2, 2)) is tuple and len(x.chunk(3, 1)) == 3 and len(x.unbind(2)) == 4
    same(cgrad.cat((x, x), dim=-1), torch.cat((tx, tx), dim=-1))
    same(cgrad.concatenate([x, x], axis=1), torch.concatenate([tx, tx], axis=1))
    same(cgrad.stack([x[0], x[1]], 1), torch.stack([tx[0], tx[1]], 1))
    assert cgrad.broadcast_shapes((3, 1), (4,)) == (3, 4) and type(cgrad.broadcast_shapes((2,))) is cgrad.Size
    a, b = cgrad.broadcast_tensors(x, cgrad.ones(4))
    assert a.shape == b.shape == (2, 3, 4)


def test_cat_promotion_and_errors():
    r = cgrad.cat([c([1, 2]), c([0.5]), c([True])])
    same(r, torch.cat([torch.tensor([1, 2]), torch.tensor([0.5]), torch.tensor([True])]))
    same(cgrad.stack([c([1, 2], cgrad.int32), c([3, 4], cgrad.uint8)]),
         torch.stack([torch.tensor([1, 2], dtype=torch.int32), torch.tensor([3, 4], dtype=torch.uint8)]))
    with pytest.raises(RuntimeError):
        cgrad.cat([c([[1.0]]), c([1.0, 2.0])])
    with pytest.raises(RuntimeError):
        cgrad.cat([])
    with pytest.raises(TypeError):
        cgrad.cat([c([1.0]), 2.0])
    with pytest.raises(TypeError):
        cgrad.cat(c([1.0]))
    with pytest.raises(RuntimeError):
        cgrad.broadcast_tensors(cgrad.zeros(3), cgrad.zeros(4))


def test_tril_triu_inplace():
    x = cgrad.arange(12.0).reshape(3, 4)
    tx = torch.arange(12.0).reshape(3, 4)
    assert x.tril_(1) is x
    same(x, tx.tril_(1))
    same(x.triu_(diagonal=-1), tx.triu_(diagonal=-1))
    leaf = cgrad.ones(3, 3, requires_grad=True)
    with pytest.raises(RuntimeError):
        leaf.tril_()
    # in-place on a non-leaf keeps the graph: d/dx sum(tril(2x)) = 2 on the kept triangle
    y = cgrad.ones(3, 3, requires_grad=True)
    z = y * 2
    z.triu_()
    z.sum().backward()
    assert y.grad.tolist() == torch.ones(3, 3).triu().mul(2).tolist()


def test_split_errors():
    x = cgrad.zeros(5)
    with pytest.raises((ValueError, RuntimeError)):
        x.split([2, 2])
    with pytest.raises(RuntimeError):
        x.chunk(0)
    with pytest.raises(IndexError):
        cgrad.zeros(()).unbind()
