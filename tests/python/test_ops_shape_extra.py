"""Targeted checks of the ops in cgrad/_ops_shape.py against PyTorch, beyond op_db's samples:
0-d, empty and non-contiguous inputs, broadcasting, out=, errors and float64 gradchecks."""
import warnings

import numpy as np
import pytest
import torch

import cgrad


def c(t):
    return cgrad.tensor(t.numpy(), dtype=getattr(cgrad, str(t.dtype).split(".")[-1]))


def same(got, exp):
    if isinstance(exp, (tuple, list)):
        assert len(got) == len(exp)
        for g, e in zip(got, exp):
            same(g, e)
        return
    assert tuple(got.shape) == tuple(exp.shape)
    assert str(got.dtype).split(".")[-1] == str(exp.dtype).split(".")[-1]
    np.testing.assert_allclose(np.asarray(got.detach().numpy()), exp.detach().numpy(), rtol=1e-6, atol=1e-6)


def dbl(*shape):
    return cgrad.randn(*shape, dtype=cgrad.float64).requires_grad_()


def test_noncontiguous_and_empty_inputs():
    t = torch.arange(24.).reshape(4, 6).t()  # non-contiguous
    x = c(torch.arange(24.).reshape(4, 6)).t()
    same(cgrad.ravel(x), torch.ravel(t))
    same(cgrad.tensor_split(x, 4, 1), torch.tensor_split(t, 4, 1))
    same(cgrad.tensor_split(x, [1, -1, 10], 0), torch.tensor_split(t, [1, -1, 10], 0))
    same(cgrad.rot90(x, 3, (1, 0)), torch.rot90(t, 3, (1, 0)))
    same(cgrad.diag(x, 1), torch.diag(t, 1))
    same(cgrad.kron(x, c(torch.ones(2))), torch.kron(t.contiguous(), torch.ones(2)))
    e = torch.empty(0, 3)
    same(cgrad.block_diag(c(e), c(torch.tensor(2.))), torch.block_diag(e, torch.tensor(2.)))
    same(cgrad.block_diag(), torch.block_diag())
    same(cgrad.combinations(c(torch.arange(0.)), 2), torch.combinations(torch.arange(0.), 2))
    same(cgrad.cartesian_prod(c(torch.arange(3)), c(torch.arange(0))),
         torch.cartesian_prod(torch.arange(3), torch.arange(0)))


def test_zero_dim():
    s = torch.tensor(3.5)
    same(cgrad.atleast_3d(c(s)), torch.atleast_3d(s))
    same(cgrad.atleast_2d([c(s), c(torch.ones(2))]), torch.atleast_2d([s, torch.ones(2)]))
    same(cgrad.diagflat(c(s), -1), torch.diagflat(s, -1))
    same(cgrad.fill(c(torch.ones(2, 3)), c(s)), torch.fill(torch.ones(2, 3), s))
    same(cgrad.nonzero_static(c(s), size=2), torch.nonzero_static(s, size=2))
    same(cgrad.scalar_tensor(True), torch.scalar_tensor(True))
    same(cgrad.unravel_index(c(torch.tensor(-1)), (2, 3)), torch.unravel_index(torch.tensor(-1), (2, 3)))


def test_broadcast_take_along_dim_and_repeat_interleave():
    t = torch.randn(3, 4)
    i = torch.tensor([[0], [-1], [2]])
    same(cgrad.take_along_dim(c(t), c(i), 1), torch.take_along_dim(t, i, 1))
    j = torch.tensor([[1], [2]])
    same(cgrad.take_along_dim(c(t), c(j), 0), torch.take_along_dim(t, j, 0))
    r = torch.tensor([2, 0, 1])
    same(cgrad.repeat_interleave(c(r)), torch.repeat_interleave(r))
    same(cgrad.repeat_interleave(c(t), c(torch.tensor([0, 2, 1, 3])), 1),
         torch.repeat_interleave(t, torch.tensor([0, 2, 1, 3]), 1))
    same(c(t).repeat_interleave(2), t.repeat_interleave(2))
    r32 = torch.tensor([1, 2], dtype=torch.int32)
    same(cgrad.repeat_interleave(c(r32)), torch.repeat_interleave(r32))


def test_meshgrid_indexing_and_warning():
    a, b, d = torch.arange(2.), torch.arange(3.), torch.arange(4.)
    same(cgrad.meshgrid(c(a), c(b), c(d), indexing="xy"), torch.meshgrid(a, b, d, indexing="xy"))
    with pytest.warns(UserWarning, match="indexing"):
        got = cgrad.meshgrid([c(a), c(b)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(got, torch.meshgrid([a, b]))
    with pytest.raises(RuntimeError):
        cgrad.meshgrid(c(a), indexing="ji")


def test_out_and_memory_format_and_resize():
    o = cgrad.empty(0)
    r = cgrad.diag_embed(c(torch.ones(3)))
    assert cgrad.diagonal_copy(r, out=o) is o and tuple(o.shape) == (3,)
    o = cgrad.empty(0, dtype=cgrad.int64)
    cgrad.tensordot(c(torch.arange(6).reshape(2, 3)), c(torch.arange(6).reshape(3, 2)), 1, out=o)
    same(o, torch.tensordot(torch.arange(6).reshape(2, 3), torch.arange(6).reshape(3, 2), 1))
    x = c(torch.arange(6.))
    assert x.resize_(2, 3) is x and tuple(x.shape) == (2, 3)
    same(x, torch.arange(6.).reshape(2, 3))
    cgrad.resize_as_(x, c(torch.tensor(1.)))
    assert tuple(x.shape) == ()
    with pytest.raises(RuntimeError, match="require grad"):
        dbl(3).resize_(2)
    same(cgrad.clone(c(torch.ones(2)), memory_format=None), torch.ones(2))
    with pytest.raises(TypeError):
        cgrad.clone(c(torch.ones(2)), memory_format=3)


def test_errors():
    x = c(torch.ones(2, 3))
    with pytest.raises(RuntimeError, match="divisible"):
        cgrad.hsplit(x, 2)
    with pytest.raises(RuntimeError, match="at least 3"):
        cgrad.dsplit(x, 1)
    with pytest.raises(TypeError):
        cgrad.tensor_split(x, "ab")
    with pytest.raises(RuntimeError, match="sum exactly"):
        cgrad.split_with_sizes(x, [1, 2])
    with pytest.raises(RuntimeError, match="matrix"):
        cgrad.trace(c(torch.ones(3)))
    with pytest.raises(RuntimeError, match="contracted"):
        cgrad.tensordot(x, x, ([0], [1]))
    with pytest.raises(IndexError):
        cgrad.put(x, c(torch.tensor([6])), c(torch.tensor([1.])))
    with pytest.raises(RuntimeError, match="reduce"):
        cgrad.index_reduce(x, 0, c(torch.tensor([0])), c(torch.ones(1, 3)), "sum")
    with pytest.raises(RuntimeError, match="floating"):
        cgrad.cdist(c(torch.ones(2, 3, dtype=torch.int64)), c(torch.ones(2, 3, dtype=torch.int64)))
    with pytest.raises(RuntimeError, match="size equal"):
        cgrad.select_scatter(x, c(torch.ones(2)), 0, 0)
    with pytest.raises(RuntimeError, match="expandable"):
        x.sum_to_size(2)
    with pytest.raises(IndexError):
        cgrad.diag_embed(x, 0, 0, 5)


def test_gradchecks():
    gc = cgrad.autograd.gradcheck
    x, s = dbl(5), dbl(2)
    assert gc(lambda a, b: cgrad.as_strided_scatter(a, b, (2,), (2,), 1), (x, s))
    assert gc(lambda a: cgrad.diag_embed(a, 1, 0, 2), (dbl(2, 3),))
    assert gc(cgrad.kron, (dbl(2, 3), dbl(3)))
    assert gc(cgrad.cdist, (dbl(2, 3, 4), dbl(1, 5, 4)))
    assert gc(lambda a: cgrad.cdist(a, a.detach() + 0)[0, 0], (dbl(2, 3),))  # a zero distance: 0 gradient
    w, b = dbl(6), dbl(6)
    assert gc(lambda a, ww, bb: cgrad.native_group_norm(a, ww, bb, 2, 6, 3, 3, 1e-5), (dbl(2, 6, 3), w, b))
    idx = cgrad.tensor([0, 2, 0])
    assert gc(lambda a, src: cgrad.index_reduce(a, 1, idx, src, "prod", include_self=False), (dbl(2, 4), dbl(2, 3)))
    assert gc(lambda a: cgrad.repeat_interleave(a, cgrad.tensor([1, 0, 3]), 0), (dbl(3, 2),))
    assert gc(lambda a: cgrad.tensordot(a, a, ([0, 1], [1, 0])), (dbl(3, 3),))
    z = dbl(3).clone()
    assert cgrad.zero_(z) is z and z.requires_grad


def test_unsafe_split_with_sizes_matches_torch():
    x = np.arange(24.0).reshape(4, 6)
    got = cgrad.unsafe_split_with_sizes(cgrad.tensor(x), [1, 3, 2], dim=1)
    want = torch.unsafe_split_with_sizes(torch.tensor(x), [1, 3, 2], dim=1)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    with pytest.raises(RuntimeError):
        cgrad.unsafe_split_with_sizes(cgrad.tensor(x), [1, 2], dim=1)


@pytest.mark.parametrize("shape,wrap", [((7, 3), True), ((7, 3), False), ((3, 5), True), ((3, 3, 3), False),
                                        ((0, 2), False)])
def test_fill_diagonal_matches_torch(shape, wrap):
    want = torch.zeros(shape).fill_diagonal_(2.5, wrap=wrap)
    got = cgrad.zeros(shape).fill_diagonal_(2.5, wrap=wrap)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    for lib in (torch, cgrad):
        with pytest.raises(RuntimeError, match="equal length"):
            lib.zeros(2, 3, 4).fill_diagonal_(1)
        with pytest.raises(RuntimeError, match="larger than 1"):
            lib.zeros(3).fill_diagonal_(1)
