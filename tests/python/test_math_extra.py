"""Elementwise math beyond the op table: Python-bool results (allclose,
equal), overloads (where(cond), x.where, softmax dtype=), keyword handling,
out=, PyTorch's promotion and in-place cast rules, the error types and
messages, autograd through in-place forms, and the private activations."""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import cgrad


def both(data, dtype="float32", requires_grad=False):
    t = torch.tensor(data, dtype=getattr(torch, dtype), requires_grad=requires_grad)
    c = cgrad.tensor(data, dtype=getattr(cgrad, dtype), requires_grad=requires_grad)
    return c, t


def same(c, t, atol=1e-6):
    assert str(c.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (c.dtype, t.dtype)
    assert tuple(c.shape) == tuple(t.shape)
    np.testing.assert_allclose(np.array(c.tolist(), dtype=np.float64), t.detach().double().numpy(), atol=atol,
                               equal_nan=True)


# ---------------------------------------------------------------- Python-bool results

@pytest.mark.parametrize("b", [[1.0, 2.0, 3.0], [1.0, 2.0, 3.001], [1.0, 2.0, 3.0000001]])
def test_allclose_and_equal_return_python_bools(b):
    ac, at = both([1.0, 2.0, 3.0])
    bc, bt = both(b)
    r = cgrad.allclose(ac, bc)
    assert r is torch.allclose(at, bt) and isinstance(r, bool)
    assert ac.allclose(bc, rtol=0.1) is at.allclose(bt, rtol=0.1)
    assert cgrad.equal(ac, bc) is torch.equal(at, bt)
    assert ac.equal(bc) is at.equal(bt)


def test_equal_shapes_and_dtypes():
    a = cgrad.tensor([1.0, 2.0])
    assert cgrad.equal(a, cgrad.tensor([[1.0, 2.0]])) is False
    assert cgrad.equal(a, a.double()) is True  # promotes, as PyTorch
    assert cgrad.equal(cgrad.tensor([1, 2]), cgrad.tensor([1.5, 2.0])) is False


def test_isclose_needs_matching_dtypes():
    with pytest.raises(RuntimeError, match="did not match"):
        cgrad.isclose(cgrad.tensor([1.0]), cgrad.tensor([1.0], dtype=cgrad.float64))
    with pytest.raises(RuntimeError):
        cgrad.allclose(cgrad.tensor([1.0]), cgrad.tensor([1]))
    nan = float("nan")
    c, t = both([nan, 1.0])
    same(cgrad.isclose(c, c, equal_nan=True), torch.isclose(t, t, equal_nan=True))
    assert cgrad.allclose(c, c, equal_nan=True) is True and cgrad.allclose(c, c) is False


# ---------------------------------------------------------------- where, softmax overloads

def test_where_single_argument_and_method_form():
    cond = [[True, False, True], [False, False, True]]
    cc, ct = both(cond, "bool")
    rc, rt = cgrad.where(cc), torch.where(ct)
    assert isinstance(rc, tuple) and len(rc) == len(rt)
    for a, b in zip(rc, rt):
        same(a, b)
    xc, xt = both([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    same(xc.where(cc, 0.5), xt.where(ct, 0.5))
    same(cgrad.where(cc, 1, 0), torch.where(ct, 1, 0))
    same(cgrad.where(cc, 1.0, 0), torch.where(ct, 1.0, 0))
    with pytest.raises(RuntimeError, match="boolean"):
        cgrad.where(xc, xc, xc)


def test_softmax_dtype_and_arguments():
    xc, xt = both([[1, 2, 3], [4, 5, 7]], "int64")
    same(cgrad.softmax(xc, 1, dtype=cgrad.float64), torch.softmax(xt, 1, dtype=torch.float64))
    fc, ft = both([[0.5, 1.5], [2.0, -1.0]])
    same(fc.softmax(dim=0), ft.softmax(dim=0))
    same(fc.log_softmax(-1, cgrad.float64), ft.log_softmax(-1, torch.float64))
    with pytest.raises(TypeError, match="dim"):
        cgrad.softmax(fc)


# ---------------------------------------------------------------- promotion and keywords

def test_float_ops_promote_integers_to_the_default_dtype():
    i = cgrad.tensor([1, 2, 3])
    assert cgrad.sqrt(i).dtype == cgrad.float32
    assert cgrad.sigmoid(cgrad.tensor([True, False])).dtype == cgrad.float32
    assert cgrad.square(cgrad.tensor([True, False])).dtype == cgrad.int64
    assert cgrad.abs(i).dtype == cgrad.int64 and cgrad.floor(i).dtype == cgrad.int64
    assert cgrad.atan2(i, i).dtype == cgrad.float32
    old = cgrad.get_default_dtype()
    cgrad.set_default_dtype(cgrad.float64)
    try:
        assert cgrad.exp(i).dtype == cgrad.float64
        assert cgrad.div(i, 2).dtype == cgrad.float64
    finally:
        cgrad.set_default_dtype(old)


def test_clamp_promotion_and_errors():
    ic, it = both([1, -2, 3], "int64")
    same(cgrad.clamp(ic, 0.5), torch.clamp(it, 0.5))
    same(cgrad.clamp(ic, min=0, max=2), torch.clamp(it, min=0, max=2))
    same(cgrad.clamp_min(ic, 0.5), torch.clamp_min(it, 0.5))
    fc, ft = both([1.5, -2.5, 0.5])
    same(cgrad.clamp(fc, min=1, max=0), torch.clamp(ft, min=1, max=0))
    same(fc.clip(max=cgrad.tensor(0.0)), ft.clip(max=torch.tensor(0.0)))
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        cgrad.clamp(fc)
    with pytest.raises(RuntimeError, match="can't be cast"):
        ic.clone().clamp_(0.5)


def test_add_sub_alpha_and_div_rounding_modes():
    ic, it = both([7, -7, 5, -5], "int64")
    dc, dt = both([2, 2, -3, -3], "int64")
    same(cgrad.add(ic, dc, alpha=3), torch.add(it, dt, alpha=3))
    same(cgrad.sub(ic, 2, alpha=3), torch.sub(it, 2, alpha=3))
    same(ic.sub(dc, alpha=-1), it.sub(dt, alpha=-1))
    with pytest.raises(RuntimeError, match="alpha must not be a floating point"):
        cgrad.add(ic, dc, alpha=0.5)
    for mode in ("trunc", "floor"):
        same(cgrad.div(ic, dc, rounding_mode=mode), torch.div(it, dt, rounding_mode=mode))
        same(ic.div(2.0, rounding_mode=mode), it.div(2.0, rounding_mode=mode))
    same(cgrad.div(ic, dc), torch.div(it, dt))
    with pytest.raises(RuntimeError, match="rounding_mode"):
        cgrad.div(ic, dc, rounding_mode="bad")
    x = ic.clone()
    x.div_(dc, rounding_mode="floor")
    same(x, it.div(dt, rounding_mode="floor"))
    same(cgrad.floor_divide(ic, dc), torch.floor_divide(it, dt))
    same(cgrad.remainder(ic, dc), torch.remainder(it, dt))
    same(cgrad.fmod(ic, dc), torch.fmod(it, dt))


def test_pow_overloads_and_errors():
    ic, it = both([1, 2, 3], "int64")
    same(cgrad.pow(2, ic), torch.pow(2, it))
    same(cgrad.pow(2.5, ic), torch.pow(2.5, it))
    same(cgrad.pow(ic, 0.5), torch.pow(it, 0.5))
    same(cgrad.pow(input=ic, exponent=2), torch.pow(input=it, exponent=2))
    same(cgrad.float_power(ic, 2), torch.float_power(it, 2))
    with pytest.raises(RuntimeError, match="negative integer powers"):
        cgrad.pow(ic, -1)
    with pytest.raises(RuntimeError, match="float_power_"):
        cgrad.tensor([1.0]).float_power_(2)


def test_keyword_errors():
    x = cgrad.tensor([1.0])
    with pytest.raises(TypeError, match="unexpected keyword"):
        cgrad.exp(x, bogus=1)
    with pytest.raises(TypeError, match="multiple values"):
        cgrad.add(x, x, other=x)
    with pytest.raises(TypeError, match="must be Tensor"):
        cgrad.maximum(x, 2)
    with pytest.raises(TypeError, match="must be Tensor"):
        cgrad.exp([1.0])
    with pytest.raises(TypeError, match="positional"):
        x.exp(1)


# ---------------------------------------------------------------- out= and in-place cast rules

def test_out_argument():
    ic, it = both([1, 2, 3], "int64")
    oc, ot = cgrad.empty(3, dtype=cgrad.float64), torch.empty(3, dtype=torch.float64)
    rc = cgrad.exp(ic, out=oc)
    assert rc is oc
    same(oc, torch.exp(it, out=ot))
    oc = cgrad.zeros(2, 3)
    assert cgrad.add(cgrad.ones(2, 3), cgrad.ones(3), out=oc) is oc
    assert oc.tolist() == [[2.0] * 3] * 2
    with pytest.raises(RuntimeError, match="can't be cast"):
        cgrad.exp(cgrad.tensor([1.5]), out=cgrad.zeros(1, dtype=cgrad.int64))
    with pytest.raises(RuntimeError, match="abs.*float32.*int64"):  # torch: "Found dtype Long but expected Float"
        cgrad.abs(cgrad.tensor([1.5]), out=cgrad.zeros(1, dtype=cgrad.int64))
    with pytest.warns(UserWarning, match="resized"):  # as torch: resized, with a warning
        oc = cgrad.exp(cgrad.ones(3), out=cgrad.zeros(4))
    assert tuple(oc.shape) == (3,)


def test_inplace_cast_rules_match_torch():
    for make, op, args in [
        (lambda lib: lib.tensor([1, 2]), "exp_", ()),
        (lambda lib: lib.tensor([1, 2]), "add_", (1.5,)),
        (lambda lib: lib.tensor([True, False]), "add_", (2,)),
        (lambda lib: lib.tensor([True, False]), "square_", ()),
        (lambda lib: lib.tensor([1, 2]), "div_", (2,)),
    ]:
        with pytest.raises(RuntimeError):
            getattr(make(torch), op)(*args)
        with pytest.raises(RuntimeError, match="can't be cast"):
            getattr(make(cgrad), op)(*args)
    # comparisons and logic write their bool result in self's dtype
    fc, ft = both([1.0, 2.0, 3.0])
    same(fc.clone().lt_(2.5), ft.clone().lt_(2.5))
    ic, it = both([1, 2, 3], "int64")
    same(ic.clone().eq_(2.0), it.clone().eq_(2.0))
    same(fc.clone().logical_not_(), ft.clone().logical_not_())
    bc, bt = both([True, False, True], "bool")
    same(bc.clone().logical_and_(ic), bt.clone().logical_and_(it))
    x = fc.clone()
    assert x.add_(ic, alpha=2) is x
    same(x, ft.clone().add_(it, alpha=2))


def test_inplace_broadcast_shape_must_match():
    with pytest.raises(RuntimeError):
        cgrad.ones(3, 1).add_(cgrad.ones(1, 4))
    with pytest.raises(RuntimeError):
        cgrad.ones(3, 1).lerp_(cgrad.ones(1, 4), 0.5)


def test_integer_division_by_zero_raises():
    with pytest.raises(RuntimeError):
        cgrad.floor_divide(cgrad.tensor([1, 2]), cgrad.tensor([1, 0]))
    with pytest.raises(RuntimeError):
        cgrad.remainder(cgrad.tensor([1, 2]), 0)


def test_dtype_errors():
    for fn in (lambda lib: lib.bitwise_and(lib.ones(2), lib.ones(2)),
               lambda lib: lib.sub(lib.tensor([True]), lib.tensor([True])),
               lambda lib: lib.round(lib.tensor([1, 2]), decimals=1),
               lambda lib: lib.addcdiv(lib.tensor([1]), lib.tensor([1]), lib.tensor([1])),
               lambda lib: lib.lerp(lib.ones(2), lib.ones(2, dtype=lib.float64), 0.5),
               lambda lib: lib.positive(lib.tensor([True])),
               lambda lib: lib.relu(lib.tensor([True])),
               lambda lib: lib.sub(lib.ones(2), True),
               lambda lib: lib.sub(lib.tensor([True]), 1),
               lambda lib: lib.atan2(lib.ones(2), 2.0),
               lambda lib: lib.logical_and(lib.ones(2), 1),
               lambda lib: lib.hypot(lib.tensor([1, 2]), lib.tensor([1, 2]))):
        with pytest.raises((RuntimeError, TypeError, NotImplementedError)):
            fn(torch)
        with pytest.raises((RuntimeError, TypeError, NotImplementedError)):
            fn(cgrad)


def test_bool_pow_and_sub_messages():
    b = cgrad.tensor([True, False])
    assert cgrad.pow(b, True).tolist() == [True, False] and cgrad.pow(b, False).tolist() == [True, True]
    with pytest.raises(RuntimeError, match="Subtraction"):
        cgrad.sub(b, b)


def test_positive_returns_its_input():
    x = cgrad.tensor([1.0, -2.0])
    assert cgrad.positive(x) is x


# ---------------------------------------------------------------- autograd through in-place forms

@pytest.mark.parametrize("op,args", [
    ("exp_", ()), ("sigmoid_", ()), ("clamp_", (-0.5, 0.5)), ("lerp_", ("other", 0.3)), ("addcmul_", ("other", "other")),
    ("mul_", ("other",)), ("div_", ("other",)), ("pow_", (2,)), ("nan_to_num_", ()), ("hypot_", ("other",)),
    ("clamp_", ("lo", None)), ("round_", ()), ("add_", ("other",)),
])
def test_inplace_autograd_matches_torch(op, args):
    rng = np.random.default_rng(0)
    data = rng.uniform(-1, 1, (3, 4)).tolist()
    other = rng.uniform(0.5, 1.5, (3, 4)).tolist()
    grads = []
    for lib in (cgrad, torch):
        leaf = lib.tensor(data, dtype=lib.float64, requires_grad=True)
        o = lib.tensor(other, dtype=lib.float64, requires_grad=True)
        lo = lib.full((4,), -0.3, dtype=lib.float64)
        a = [o if x == "other" else lo if x == "lo" else x for x in args]
        y = leaf * 1.0
        r = getattr(y, op)(*a)
        assert r is y
        (y * lib.tensor(other, dtype=lib.float64)).sum().backward()
        grads.append((leaf.grad, o.grad))
    for c, t in zip(*grads):
        if t is None:
            assert c is None or not np.any(np.array(c.tolist()))
        else:
            same(c, t, atol=1e-9)


def test_inplace_on_leaf_requiring_grad_is_rejected():
    x = cgrad.ones(3, requires_grad=True)
    for op in (lambda: x.exp_(), lambda: x.clamp_(0, 1), lambda: x.lerp_(cgrad.zeros(3), 0.5), lambda: cgrad.relu_(x)):
        with pytest.raises(RuntimeError):
            op()


# ---------------------------------------------------------------- private activations (nn.functional)

@pytest.mark.parametrize("name,kw", [
    ("relu6", {}), ("leaky_relu", {"negative_slope": 0.1}), ("elu", {"alpha": 0.7}), ("silu", {}), ("mish", {}),
    ("hardtanh", {"min_val": -0.5, "max_val": 0.5}), ("hardsigmoid", {}), ("hardswish", {}),
])
def test_private_inplace_activations(name, kw):
    data = np.linspace(-4, 4, 12).reshape(3, 4).tolist()
    c = cgrad.tensor(data)
    r = getattr(cgrad._C, f"_{name}_")(c, **kw)
    assert r is c
    t = torch.tensor(data)
    getattr(TF, name)(t, inplace=True, **kw)
    same(c, t, atol=1e-6)


def test_private_activations_errors_and_names():
    with pytest.raises(RuntimeError, match="approximate"):
        cgrad._C._gelu(cgrad.ones(2), approximate="fast")
    assert not hasattr(cgrad, "_elu") and not hasattr(cgrad, "leaky_relu")
    for name in ("selu", "celu", "relu_", "selu_", "celu_", "sigmoid_", "tanh_"):
        assert hasattr(cgrad, name)
    assert not hasattr(cgrad.Tensor, "selu")
    x = cgrad.tensor([-1.0, 2.0])
    assert cgrad.relu_(x) is x and x.tolist() == [0.0, 2.0]
