"""Focused tests of the index ops, matrix products and creation / random
sampling beyond the op table: exception types against PyTorch, in-place
forms under autograd, overloads and return types, and for the random
functions reproducibility, generator isolation and sample statistics."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import cgrad


def np_of(t) -> np.ndarray:
    return np.array(t.detach().tolist()).reshape(tuple(t.shape))


def both(fn):
    """fn(lib) for cgrad and torch."""
    return fn(cgrad), fn(torch)


def assert_same(a, b, atol=1e-6):
    assert tuple(a.shape) == tuple(b.shape)
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    np.testing.assert_allclose(np_of(a), b.detach().numpy(), atol=atol, rtol=1e-6)


# ---------------------------------------------------------------- exception types match PyTorch's

def _x(lib):
    return lib.tensor([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0]])


def _i(lib, v, dt="int64"):
    return lib.tensor(v, dtype=getattr(lib, dt))


ERROR_CASES = {
    "gather_oob": lambda L: L.gather(_x(L), 1, _i(L, [[5]])),
    "gather_float_index": lambda L: L.gather(_x(L), 1, L.tensor([[0.0]])),
    "gather_dim": lambda L: L.gather(_x(L), 2, _i(L, [[0]])),
    "index_select_oob": lambda L: L.index_select(_x(L), 0, _i(L, [7])),
    "index_select_2d": lambda L: L.index_select(_x(L), 0, _i(L, [[0]])),
    "index_select_float": lambda L: L.index_select(_x(L), 0, L.tensor([0.0])),
    "take_oob": lambda L: L.take(_x(L), _i(L, [70])),
    "take_int32": lambda L: L.take(_x(L), _i(L, [1], "int32")),
    "scatter_dtype": lambda L: L.scatter(_x(L), 1, _i(L, [[0]]), L.ones(1, 1, dtype=L.float64)),
    "scatter_oob": lambda L: L.scatter(_x(L), 1, _i(L, [[4]]), 1.0),
    "scatter_bad_reduce": lambda L: L.scatter(_x(L), 1, _i(L, [[0]]), 1.0, reduce="sum"),
    "scatter_reduce_bad": lambda L: L.scatter_reduce(_x(L), 1, _i(L, [[0]]), L.ones(1, 1), "foo"),
    "scatter_add_dtype": lambda L: L.scatter_add(_x(L), 1, _i(L, [[0]]), L.ones(1, 1, dtype=L.float64)),
    "masked_fill_float_mask": lambda L: L.masked_fill(_x(L), L.ones(3, 4), 2.0),
    "masked_fill_value_dims": lambda L: L.masked_fill(_x(L), L.ones(3, 4, dtype=L.bool), L.tensor([2.0])),
    "masked_fill_inplace_broadcast": lambda L: L.ones(4).masked_fill_(L.ones(3, 4, dtype=L.bool), 2.0),
    "masked_select_mask": lambda L: L.masked_select(_x(L), L.ones(3, 4)),
    "masked_scatter_short": lambda L: L.masked_scatter(_x(L), L.ones(3, 4, dtype=L.bool), L.ones(2)),
    "masked_scatter_dtype": lambda L: L.masked_scatter(_x(L), L.ones(3, 4, dtype=L.bool), L.ones(20, dtype=L.float64)),
    "index_put_dtype": lambda L: L.index_put(_x(L), (_i(L, [0]),), L.tensor(1.0, dtype=L.float64)),
    "index_put_float_index": lambda L: L.index_put(_x(L), (L.tensor([0.0]),), L.tensor(1.0)),
    "index_put_oob": lambda L: L.index_put(_x(L), (_i(L, [5]),), L.tensor(1.0)),
    "index_put_not_tuple": lambda L: L.index_put(_x(L), _i(L, [1]), L.tensor(1.0)),
    "index_add_count": lambda L: L.index_add(_x(L), 0, _i(L, [0, 0]), L.ones(3, 4)),
    "index_add_shape": lambda L: L.index_add(_x(L), 0, _i(L, [0, 0]), L.ones(2, 3)),
    "index_add_2d_index": lambda L: L.index_add(_x(L), 0, _i(L, [[0, 0]]), L.ones(2, 4)),
    "index_add_dtype": lambda L: L.index_add(_x(L), 0, _i(L, [0, 1]), L.ones(2, 4, dtype=L.float64)),
    "index_add_oob": lambda L: L.index_add(_x(L), 0, _i(L, [0, 5]), L.ones(2, 4)),
    "index_add_inplace_oob": lambda L: _x(L).index_add_(0, _i(L, [0, 5]), L.ones(2, 4)),
    "index_copy_oob": lambda L: L.index_copy(_x(L), 0, _i(L, [5]), L.ones(1, 4)),
    "index_copy_negative": lambda L: L.index_copy(_x(L), 0, _i(L, [-1]), L.ones(1, 4)),
    "index_add_negative": lambda L: L.index_add(_x(L), 0, _i(L, [-1]), L.ones(1, 4)),
    "index_fill_inplace_oob": lambda L: _x(L).index_fill_(0, _i(L, [-5]), 1.0),
    "index_fill_int32": lambda L: L.index_fill(_x(L), 1, _i(L, [0, 2], "int32"), 1.0),
    "index_copy_int32": lambda L: L.index_copy(_x(L), 1, _i(L, [0, 2], "int32"), L.ones(3, 2)),
    "mm_dtype": lambda L: L.mm(_x(L), L.ones(4, 2, dtype=L.float64)),
    "matmul_dtype": lambda L: L.matmul(_x(L), L.ones(4, 2, dtype=L.float64)),
    "matmul_operator_dtype": lambda L: _x(L) @ L.ones(4, 2, dtype=L.float64),
    "matmul_int_float": lambda L: L.matmul(L.ones(3, 4, dtype=L.int64), L.ones(4, 2)),
    "matmul_0d": lambda L: L.matmul(L.tensor(1.0), L.ones(5, 2)),
    "mm_shapes": lambda L: L.mm(_x(L), L.ones(5, 2)),
    "bmm_rank": lambda L: L.bmm(L.ones(3, 4), L.ones(4, 5)),
    "mv_dtype": lambda L: L.mv(_x(L), L.ones(4, dtype=L.float64)),
    "dot_dtype": lambda L: L.dot(L.ones(3), L.ones(3, dtype=L.float64)),
    "addmm_dtype": lambda L: L.addmm(L.ones(3, 2, dtype=L.float64), _x(L), L.ones(4, 2)),
    "einsum_dtype": lambda L: L.einsum("ij,jk->ik", _x(L), L.ones(4, 2, dtype=L.float64)),
    "einsum_sizes": lambda L: L.einsum("ij,jk->ik", _x(L), L.ones(5, 2)),
    "inner_sizes": lambda L: L.inner(L.ones(2, 3), L.ones(2, 4)),
    "randint_empty_range": lambda L: L.randint(5, 5, (3,)),
    "rand_int_dtype": lambda L: L.rand(2, dtype=L.int64),
    "rand_like_int": lambda L: L.rand_like(L.ones(2, dtype=L.int64)),
    "normal_negative_std": lambda L: L.normal(L.zeros(2), -1.0),
    "normal_float_negative_std": lambda L: L.normal(0.0, -1.0, (2,)),
    "normal_int_mean": lambda L: L.normal(L.zeros(2, dtype=L.int64), 1.0),
    "bernoulli_p_range": lambda L: L.bernoulli(L.full((3,), 1.5)),
    "bernoulli_int": lambda L: L.bernoulli(L.ones(3, dtype=L.int64)),
    "multinomial_too_many": lambda L: L.multinomial(L.ones(3), 5),
    "linspace_negative_steps": lambda L: L.linspace(0, 10, -1),
    "eye_negative": lambda L: L.eye(-1),
    "uniform_int": lambda L: L.ones(3, dtype=L.int64).uniform_(2, 5),
    "normal_inplace_negative_std": lambda L: L.ones(3).normal_(2, -5),
    "random_empty_range": lambda L: L.ones(3).random_(5, 2),
}


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_error_types_match_torch(name):
    fn = ERROR_CASES[name]
    with pytest.raises(Exception) as et:
        fn(torch)
    with pytest.raises(Exception) as ec:
        fn(cgrad)
    assert isinstance(ec.value, et.type), f"{name}: cgrad raised {type(ec.value).__name__}: {ec.value}; " \
                                          f"torch raised {et.type.__name__}: {et.value}"


def test_error_messages_name_the_problem():
    with pytest.raises(RuntimeError, match="same dtype"):
        cgrad.mm(cgrad.ones(2, 2), cgrad.ones(2, 2, dtype=cgrad.float64))
    with pytest.raises(RuntimeError, match="out of bounds"):
        cgrad.gather(cgrad.ones(2, 2), 1, cgrad.tensor([[3]]))
    with pytest.raises(IndexError, match="Dimension out of range"):
        cgrad.index_select(cgrad.ones(2, 2), 3, cgrad.tensor([0]))
    with pytest.raises(RuntimeError, match="boolean masks"):
        cgrad.ones(2).masked_fill_(cgrad.ones(2), 1.0)
    with pytest.raises(TypeError, match="generator"):
        cgrad.rand(2, generator=3)


# ---------------------------------------------------------------- index ops: overloads, in-place forms, autograd

def test_scatter_overloads():
    idx = [[0, 2], [1, 3]]

    def f(lib):
        x = lib.zeros(2, 4)
        i = lib.tensor(idx)
        s = lib.tensor([[1.0, 2.0], [3.0, 4.0]])
        return [lib.scatter(x, 1, i, s), lib.scatter(x, 1, i, src=s), lib.scatter(x, 1, i, value=7.0),
                lib.scatter(x, 1, i, 7), x.scatter(1, i, s), x.clone().scatter_(1, i, 2.0, reduce="add"),
                x.clone().fill_(2.0).scatter_(1, i, s, reduce="multiply"),
                lib.scatter(x, 1, lib.tensor(idx, dtype=lib.int32), s)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, ref = both(f)
    for a, b in zip(got, ref):
        assert_same(a, b)


def test_nonzero_forms_and_return_types():
    def f(lib):
        x = lib.tensor([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])
        return lib.nonzero(x), x.nonzero(), lib.nonzero(x, as_tuple=True), lib.argwhere(x), x.argwhere(), \
            lib.nonzero(lib.tensor(3.0), as_tuple=True), lib.nonzero(lib.tensor(0.0))
    got, ref = both(f)
    for a, b in zip(got, ref):
        if isinstance(b, tuple):
            assert isinstance(a, tuple) and len(a) == len(b)
            for u, v in zip(a, b):
                assert_same(u, v)
        else:
            assert_same(a, b)


INPLACE_CASES = {
    "scatter_": lambda L, x, s: x.scatter_(1, L.tensor([[0, 2], [1, 3], [3, 0]]), s[:, :2]),
    "scatter_add_": lambda L, x, s: x.scatter_add_(1, L.tensor([[0, 0], [1, 3], [3, 3]]), s[:, :2]),
    "scatter_reduce_amax": lambda L, x, s: x.scatter_reduce_(1, L.tensor([[0, 0], [1, 3], [3, 3]]), s[:, :2], "amax"),
    "scatter_reduce_prod": lambda L, x, s: x.scatter_reduce_(0, L.tensor([[0, 1, 2, 0]]), s[:1], "prod",
                                                             include_self=False),
    "masked_fill_": lambda L, x, s: x.masked_fill_(L.tensor([True, False, True, False]), 0.5),
    "masked_fill_tensor_value": lambda L, x, s: x.masked_fill_(L.tensor([True, False, True, False]), s[0, 0]),
    "masked_scatter_": lambda L, x, s: x.masked_scatter_(L.tensor([[True, False, True, False]]), s),
    "index_put_": lambda L, x, s: x.index_put_((L.tensor([0, 2]),), s[:2]),
    "index_put_accumulate": lambda L, x, s: x.index_put_((L.tensor([0, 0]), L.tensor([1, 1])), s[0, :2],
                                                        accumulate=True),
    "index_add_": lambda L, x, s: x.index_add_(0, L.tensor([2, 2]), s[:2], alpha=2.0),
    "index_copy_": lambda L, x, s: x.index_copy_(1, L.tensor([3, 0]), s[:, :2]),
    "index_fill_": lambda L, x, s: x.index_fill_(1, L.tensor([1]), -1.0),
    "addmm_": lambda L, x, s: x.addmm_(s[:, :2], s[:2, :], beta=0.5, alpha=2.0),
}


@pytest.mark.parametrize("name", sorted(INPLACE_CASES))
def test_inplace_forms_under_autograd(name):
    """x.op_() on a non-leaf that requires grad (and a src that requires grad):
    values, returned object and gradients of both leaves match PyTorch."""
    fn = INPLACE_CASES[name]
    rng = np.random.default_rng(0)
    xv, sv = rng.uniform(0.5, 2, (3, 4)), rng.uniform(0.5, 2, (3, 4))
    w = rng.uniform(-1, 1, (3, 4))
    res = {}
    for lib in (cgrad, torch):
        a = lib.tensor(xv.tolist(), dtype=lib.float64, requires_grad=True)
        s = lib.tensor(sv.tolist(), dtype=lib.float64, requires_grad=True)
        x = a * 1.0
        r = fn(lib, x, s)
        assert r is x
        (x * lib.tensor(w.tolist(), dtype=lib.float64)).sum().backward()
        res[lib.__name__] = (np_of(x), np_of(a.grad), None if s.grad is None else np_of(s.grad))
    c, t = res["cgrad"], res["torch"]
    np.testing.assert_allclose(c[0], t[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(c[1], t[1], rtol=1e-12, atol=1e-12)
    if t[2] is None:
        assert c[2] is None or not np.any(c[2])
    else:
        np.testing.assert_allclose(c[2], t[2], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(INPLACE_CASES))
def test_inplace_on_leaf_requiring_grad_raises(name):
    a = cgrad.ones(3, 4, dtype=cgrad.float64, requires_grad=True)
    s = cgrad.ones(3, 4, dtype=cgrad.float64)
    with pytest.raises(RuntimeError, match="leaf"):
        INPLACE_CASES[name](cgrad, a, s)


def test_inplace_writes_through_views():
    base = cgrad.zeros(3, 4)
    row = base[1]
    row.masked_fill_(cgrad.tensor([True, False, True, False]), 5.0)
    base[:, 2].scatter_(0, cgrad.tensor([0]), cgrad.tensor([7.0]))
    base.index_fill_(1, cgrad.tensor([3]), 1.0)
    assert base.tolist() == [[0, 0, 7, 1], [5, 0, 5, 1], [0, 0, 0, 1]]


def test_index_put_forms():
    def f(lib):
        x = lib.zeros(3, 4)
        r1 = lib.index_put(x, (lib.tensor([0, 2]), lib.tensor([1, 1])), lib.tensor([1.0, 2.0]))
        r2 = x.index_put((lib.tensor([0, 0]),), lib.tensor(1.0), accumulate=True)
        r3 = x.index_put([lib.tensor([[True, False, False, True]] * 3)], lib.tensor(3.0))
        y = lib.zeros(5)
        y.index_put_((lib.tensor([1, 1, 4]),), lib.tensor([1.0, 2.0, 3.0]), accumulate=True)
        return [r1, r2, r3, y]
    got, ref = both(f)
    for a, b in zip(got, ref):
        assert_same(a, b)


def test_out_argument():
    for fn in (lambda L, o: L.matmul(L.ones(2, 3), L.ones(3, 2), out=o),
               lambda L, o: L.addmm(L.ones(2, 2), L.ones(2, 3), L.ones(3, 2), out=o, beta=2),
               lambda L, o: L.index_select(L.ones(3, 2), 0, L.tensor([0, 2]), out=o)):
        o = cgrad.empty(2, 2)
        r = fn(cgrad, o)
        assert r is o
        assert_same(o, fn(torch, torch.empty(2, 2)))


# ---------------------------------------------------------------- matrix products

def test_matmul_operator_and_grads():
    rng = np.random.default_rng(1)
    av, bv = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 5))
    res = {}
    for lib in (cgrad, torch):
        a = lib.tensor(av.tolist(), requires_grad=True)
        b = lib.tensor(bv.tolist(), requires_grad=True)
        out = a @ b
        (out * out).sum().backward()
        res[lib.__name__] = (np_of(out), np_of(a.grad), np_of(b.grad))
    for c, t in zip(res["cgrad"], res["torch"]):
        np.testing.assert_allclose(c, t, rtol=1e-4, atol=1e-4)
    with pytest.raises(TypeError):
        cgrad.ones(2, 2) @ [[1.0, 0.0], [0.0, 1.0]]


def test_einsum_operand_forms():
    a = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    b = [[1.0, 0.0], [0.0, 1.0], [2.0, 1.0]]
    for args in (lambda L: ("ij,jk->ik", L.tensor(a), L.tensor(b)), lambda L: ("ij,jk->ik", [L.tensor(a), L.tensor(b)]),
                 lambda L: ("ij,jk", (L.tensor(a), L.tensor(b)))):
        assert_same(cgrad.einsum(*args(cgrad)), torch.einsum(*args(torch)))


def test_outer_promotes_and_products_keep_dtype():
    r = cgrad.outer(cgrad.tensor([1, 2]), cgrad.tensor([0.5, 1.0], dtype=cgrad.float64))
    assert r.dtype == cgrad.float64 and r.tolist() == [[0.5, 1.0], [1.0, 2.0]]
    assert cgrad.ger(cgrad.tensor([1, 2]), cgrad.tensor([3, 4])).dtype == cgrad.int64
    assert cgrad.matmul(cgrad.ones(2, 3, dtype=cgrad.int64), cgrad.ones(3, dtype=cgrad.int64)).tolist() == [3, 3]
    assert cgrad.vdot(cgrad.tensor([1.0, 2.0]), cgrad.tensor([3.0, 4.0])).item() == 11.0


# ---------------------------------------------------------------- creation

def test_factory_defaults_and_keywords():
    assert cgrad.rand(2).dtype == cgrad.float32
    assert cgrad.randint(3, (2,)).dtype == cgrad.int64
    assert cgrad.randperm(3).dtype == cgrad.int64
    assert cgrad.linspace(0, 1, 3).dtype == cgrad.float32
    assert cgrad.eye(2).dtype == cgrad.float32
    assert cgrad.randint_like(cgrad.ones(2), 5).dtype == cgrad.float32
    x = cgrad.randn(2, 3, dtype=cgrad.float64, requires_grad=True)
    assert x.requires_grad and x.is_leaf and x.dtype == cgrad.float64
    assert tuple(cgrad.rand((2, 3)).shape) == (2, 3) and tuple(cgrad.rand([4]).shape) == (4,)
    assert tuple(cgrad.randn(size=(1, 2)).shape) == (1, 2)
    old = cgrad.get_default_dtype()
    try:
        cgrad.set_default_dtype(cgrad.float64)
        assert cgrad.rand(1).dtype == cgrad.float64 and cgrad.linspace(0, 1, 2).dtype == cgrad.float64
        assert cgrad.normal(0.0, 1.0, (2,)).dtype == cgrad.float64
    finally:
        cgrad.set_default_dtype(old)
    with pytest.raises(TypeError):  # as torch: layout must be a torch.layout
        cgrad.rand(2, layout=object())
    with pytest.raises(NotImplementedError):  # a layout cgrad's tensors cannot have
        cgrad.rand(2, layout=cgrad.sparse_coo)


SAMPLERS = {
    "rand": lambda g: cgrad.rand(50, generator=g),
    "randn": lambda g: cgrad.randn(5, 10, generator=g),
    "randint": lambda g: cgrad.randint(0, 100, (50,), generator=g),
    "randperm": lambda g: cgrad.randperm(50, generator=g),
    "rand_like": lambda g: cgrad.rand_like(cgrad.ones(50), generator=g),
    "randn_like": lambda g: cgrad.randn_like(cgrad.ones(50), generator=g),
    "randint_like": lambda g: cgrad.randint_like(cgrad.ones(50), 3, 9, generator=g),
    "normal_tensor": lambda g: cgrad.normal(cgrad.zeros(50), cgrad.ones(50), generator=g),
    "normal_float": lambda g: cgrad.normal(1.0, 2.0, (50,), generator=g),
    "bernoulli": lambda g: cgrad.bernoulli(cgrad.full((50,), 0.5), generator=g),
    "bernoulli_p": lambda g: cgrad.ones(50).bernoulli(0.5, generator=g),
    "multinomial": lambda g: cgrad.multinomial(cgrad.ones(20), 10, generator=g),
    "uniform_": lambda g: cgrad.empty(50).uniform_(-1, 1, generator=g),
    "normal_": lambda g: cgrad.empty(50).normal_(0, 1, generator=g),
    "bernoulli_": lambda g: cgrad.empty(50).bernoulli_(0.3, generator=g),
    "bernoulli_tensor_p": lambda g: cgrad.empty(50).bernoulli_(cgrad.full((50,), 0.5), generator=g),
    "random_": lambda g: cgrad.empty(50).random_(0, 1000, generator=g),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_same_seed_same_values(name):
    f = SAMPLERS[name]
    cgrad.manual_seed(1234)
    a = np_of(f(None))
    b = np_of(f(None))
    cgrad.manual_seed(1234)
    assert np.array_equal(np_of(f(None)), a)
    assert not np.array_equal(a, b), "consecutive draws should differ"
    # a generator seeded alike reproduces the global stream
    g = cgrad.Generator().manual_seed(1234)
    assert np.array_equal(np_of(f(g)), a)
    assert np.array_equal(np_of(f(g)), b)
    cgrad.manual_seed(1234)
    assert np.array_equal(np_of(f(cgrad.default_generator)), a)  # the default generator is the global stream


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_generator_isolates_streams(name):
    f = SAMPLERS[name]
    cgrad.manual_seed(7)
    expected = np_of(cgrad.rand(10))
    cgrad.manual_seed(7)
    g = cgrad.Generator().manual_seed(99)
    f(g)  # draws from g only
    assert np.array_equal(np_of(cgrad.rand(10)), expected)


def test_generator_object():
    g = cgrad.Generator()
    assert g.initial_seed() == torch.Generator().initial_seed()
    assert str(g.device) == "cpu"
    assert g.manual_seed(5) is g and g.initial_seed() == 5
    state = g.get_state()
    assert state.dtype == cgrad.uint8
    a = cgrad.rand(4, generator=g)
    assert g.get_offset() > 0
    assert g.set_state(state) is g
    assert np.array_equal(np_of(cgrad.rand(4, generator=g)), np_of(a))
    h = g.clone_state()
    assert np.array_equal(np_of(cgrad.rand(3, generator=g)), np_of(cgrad.rand(3, generator=h)))
    s = g.seed()
    assert isinstance(s, int) and g.initial_seed() == s
    with pytest.raises(RuntimeError):
        g.set_state(cgrad.zeros(3, dtype=cgrad.uint8))
    with pytest.raises(TypeError):
        g.set_state("state")
    assert isinstance(cgrad.default_generator, cgrad.Generator)


def test_global_seed_state_functions():
    s = cgrad.seed()
    assert isinstance(s, int) and cgrad.initial_seed() == s
    assert cgrad.seed() != s  # from the OS: two seeds differ (with overwhelming probability)
    cgrad.default_generator.manual_seed(3)
    assert cgrad.initial_seed() == 3
    g = cgrad.manual_seed(11)
    assert g is cgrad.default_generator and g.initial_seed() == 11
    state = cgrad.get_rng_state()
    a = cgrad.randn(5)
    cgrad.set_rng_state(state)
    assert np.array_equal(np_of(cgrad.randn(5)), np_of(a))
    assert np.array_equal(np_of(cgrad.default_generator.get_state()), np_of(cgrad.get_rng_state()))


# ---------------------------------------------------------------- statistics

N = 200_000


def test_uniform_statistics():
    cgrad.manual_seed(0)
    u = np_of(cgrad.rand(N))
    assert u.min() >= 0 and u.max() < 1
    assert abs(u.mean() - 0.5) < 0.005 and abs(u.var() - 1 / 12) < 0.002
    v = np_of(cgrad.empty(N, dtype=cgrad.float64).uniform_(-2, 3))
    assert v.min() >= -2 and v.max() < 3 and abs(v.mean() - 0.5) < 0.02


def test_normal_statistics():
    cgrad.manual_seed(0)
    z = np_of(cgrad.randn(N))
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01
    assert abs(((z > 1.96) | (z < -1.96)).mean() - 0.05) < 0.003
    y = np_of(cgrad.normal(cgrad.full((N,), 3.0), cgrad.full((N,), 0.5)))
    assert abs(y.mean() - 3) < 0.01 and abs(y.std() - 0.5) < 0.01
    y = np_of(cgrad.normal(-1.0, 2.0, (N,)))
    assert abs(y.mean() + 1) < 0.02 and abs(y.std() - 2) < 0.02
    y = np_of(cgrad.empty(N).normal_(4.0, 0.1))
    assert abs(y.mean() - 4) < 0.002 and abs(y.std() - 0.1) < 0.002


def test_normal_is_differentiable():
    """normal(mean, std) is reparameterised: d/dmean = 1, d/dstd = (out - mean) / std."""
    mean = cgrad.tensor([0.5, -1.0, 2.0], dtype=cgrad.float64, requires_grad=True)
    std = cgrad.tensor([1.0, 0.5, 2.0], dtype=cgrad.float64, requires_grad=True)
    out = cgrad.normal(mean, std)
    out.sum().backward()
    assert np_of(mean.grad).tolist() == [1.0, 1.0, 1.0]
    eps = (np_of(out) - np_of(mean)) / np_of(std)
    np.testing.assert_allclose(np_of(std.grad), eps, rtol=1e-12)


def test_integer_sampler_statistics():
    cgrad.manual_seed(0)
    r = np_of(cgrad.randint(-3, 7, (N,)))
    assert r.min() == -3 and r.max() == 6
    counts = np.bincount(r + 3)
    assert np.all(np.abs(counts / N - 0.1) < 0.005)
    p = np_of(cgrad.randperm(1000))
    assert sorted(p.tolist()) == list(range(1000)) and p.tolist() != list(range(1000))
    x = np_of(cgrad.empty(N, dtype=cgrad.int64).random_(5))
    assert x.min() == 0 and x.max() == 4
    f = np_of(cgrad.empty(1000).random_())
    assert f.min() >= 0 and f.max() <= 2 ** 24 and np.all(f == np.round(f))
    b = np_of(cgrad.empty(100, dtype=cgrad.bool).random_())
    assert set(b.tolist()) == {False, True}


def test_bernoulli_statistics():
    cgrad.manual_seed(0)
    p = np.linspace(0.05, 0.95, 10)
    probs = cgrad.tensor(np.tile(p, (N // 10, 1)).tolist())
    x = np_of(cgrad.bernoulli(probs))
    assert set(np.unique(x).tolist()) <= {0.0, 1.0}
    np.testing.assert_allclose(x.mean(axis=0), p, atol=0.01)
    y = np_of(cgrad.empty(N).bernoulli_(0.25))
    assert abs(y.mean() - 0.25) < 0.005
    y = np_of(cgrad.zeros(N, dtype=cgrad.int64).bernoulli_(0.7))
    assert abs(y.mean() - 0.7) < 0.005


def test_multinomial_statistics():
    cgrad.manual_seed(0)
    w = cgrad.tensor([1.0, 2.0, 3.0, 4.0])
    s = np_of(cgrad.multinomial(w, N, replacement=True))
    np.testing.assert_allclose(np.bincount(s, minlength=4) / N, [0.1, 0.2, 0.3, 0.4], atol=0.005)
    rows = np_of(cgrad.multinomial(cgrad.ones(500, 6), 6))
    assert all(sorted(r) == list(range(6)) for r in rows.tolist())
    first = np_of(cgrad.multinomial(cgrad.tensor([[1.0, 2.0, 3.0, 4.0]] * 20000), 1))[:, 0]
    np.testing.assert_allclose(np.bincount(first, minlength=4) / 20000, [0.1, 0.2, 0.3, 0.4], atol=0.015)
