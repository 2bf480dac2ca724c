"""The activation modules of cgrad.nn against torch.nn: outputs and gradients
(train and eval, in-place forms on a non-leaf), reprs, state_dict keys and
PReLU's parameter, and the argument errors torch raises."""
import warnings

import numpy as np
import pytest
import torch

import cgrad
from nn_compare import compare_module, to_numpy

# (id, factory taking the library, input shape)
CASES = [
    ("relu", lambda L: L.nn.ReLU(), (3, 4, 5)),
    ("relu_inplace", lambda L: L.nn.ReLU(inplace=True), (3, 4, 5)),
    ("relu6", lambda L: L.nn.ReLU6(), (3, 4, 5)),
    ("relu6_inplace", lambda L: L.nn.ReLU6(True), (3, 4, 5)),
    ("leaky_relu", lambda L: L.nn.LeakyReLU(), (3, 4, 5)),
    ("leaky_relu_inplace", lambda L: L.nn.LeakyReLU(0.2, True), (3, 4, 5)),
    ("prelu", lambda L: L.nn.PReLU(), (3, 4, 5)),
    ("prelu_channels", lambda L: L.nn.PReLU(4, 0.1), (3, 4, 5)),
    ("prelu_2d", lambda L: L.nn.PReLU(5), (3, 5)),
    ("prelu_1d", lambda L: L.nn.PReLU(), (5,)),
    ("elu", lambda L: L.nn.ELU(), (3, 4, 5)),
    ("elu_inplace", lambda L: L.nn.ELU(0.5, True), (3, 4, 5)),
    ("selu", lambda L: L.nn.SELU(), (3, 4, 5)),
    ("selu_inplace", lambda L: L.nn.SELU(True), (3, 4, 5)),
    ("celu", lambda L: L.nn.CELU(), (3, 4, 5)),
    ("celu_inplace", lambda L: L.nn.CELU(2.0, True), (3, 4, 5)),
    ("gelu", lambda L: L.nn.GELU(), (3, 4, 5)),
    ("gelu_tanh", lambda L: L.nn.GELU("tanh"), (3, 4, 5)),
    ("silu", lambda L: L.nn.SiLU(), (3, 4, 5)),
    ("silu_inplace", lambda L: L.nn.SiLU(True), (3, 4, 5)),
    ("mish", lambda L: L.nn.Mish(), (3, 4, 5)),
    ("mish_inplace", lambda L: L.nn.Mish(True), (3, 4, 5)),
    ("softplus", lambda L: L.nn.Softplus(), (3, 4, 5)),
    ("softplus_args", lambda L: L.nn.Softplus(2.0, 1.0), (3, 4, 5)),
    ("softsign", lambda L: L.nn.Softsign(), (3, 4, 5)),
    ("tanh", lambda L: L.nn.Tanh(), (3, 4, 5)),
    ("sigmoid", lambda L: L.nn.Sigmoid(), (3, 4, 5)),
    ("hardtanh", lambda L: L.nn.Hardtanh(), (3, 4, 5)),
    ("hardtanh_inplace", lambda L: L.nn.Hardtanh(-0.5, 2.0, True), (3, 4, 5)),
    ("hardsigmoid", lambda L: L.nn.Hardsigmoid(), (3, 4, 5)),
    ("hardsigmoid_inplace", lambda L: L.nn.Hardsigmoid(True), (3, 4, 5)),
    ("hardswish", lambda L: L.nn.Hardswish(), (3, 4, 5)),
    ("hardswish_inplace", lambda L: L.nn.Hardswish(True), (3, 4, 5)),
    ("logsigmoid", lambda L: L.nn.LogSigmoid(), (3, 4, 5)),
    ("softmax", lambda L: L.nn.Softmax(dim=1), (3, 4, 5)),
    ("softmax_last", lambda L: L.nn.Softmax(-1), (3, 4, 5)),
    ("log_softmax", lambda L: L.nn.LogSoftmax(dim=1), (3, 4, 5)),
    ("softmin", lambda L: L.nn.Softmin(0), (3, 4, 5)),
    ("glu", lambda L: L.nn.GLU(), (3, 5, 4)),
    ("glu_dim1", lambda L: L.nn.GLU(1), (3, 4, 5)),
    ("threshold", lambda L: L.nn.Threshold(0.1, 20.0), (3, 4, 5)),
    ("threshold_inplace", lambda L: L.nn.Threshold(-0.2, 3.0, True), (3, 4, 5)),
    ("tanhshrink", lambda L: L.nn.Tanhshrink(), (3, 4, 5)),
    ("softshrink", lambda L: L.nn.Softshrink(), (3, 4, 5)),
    ("softshrink_1", lambda L: L.nn.Softshrink(1.0), (3, 4, 5)),
    ("hardshrink", lambda L: L.nn.Hardshrink(), (3, 4, 5)),
    ("hardshrink_03", lambda L: L.nn.Hardshrink(0.3), (3, 4, 5)),
]
IDS = [c[0] for c in CASES]


def _nonleaf(m, xs):
    # in-place activations on a leaf that requires grad are an error in both libraries: run them on x * 1
    return m(xs[0] * 1)


@pytest.mark.parametrize("name,make,shape", CASES, ids=IDS)
def test_matches_torch(name, make, shape):
    compare_module(make, [shape], call=_nonleaf if "inplace" in name else None)


@pytest.mark.parametrize("name,make,shape", CASES, ids=IDS)
def test_repr_and_state_dict_keys(name, make, shape):
    t, c = make(torch), make(cgrad)
    assert repr(c) == repr(t)
    assert list(c.state_dict()) == list(t.state_dict())
    assert [n for n, _ in c.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in c.named_buffers()] == [n for n, _ in t.named_buffers()]
    for attr in ("inplace", "alpha", "negative_slope", "min_val", "max_val", "dim", "approximate", "beta",
                 "threshold", "value", "lambd", "num_parameters", "init"):
        if hasattr(t, attr):
            assert getattr(c, attr) == getattr(t, attr), attr


@pytest.mark.parametrize("name,make,shape", [c for c in CASES if "inplace" in c[0]],
                         ids=[i for i in IDS if "inplace" in i])
def test_inplace_returns_and_mutates_input(name, make, shape):
    x = np.random.default_rng(3).standard_normal(shape)
    t, c = torch.tensor(x), cgrad.tensor(x)
    tr, cr = make(torch)(t), make(cgrad)(c)
    assert cr is c and tr is t
    np.testing.assert_allclose(to_numpy(c), to_numpy(t), atol=1e-12)


def test_prelu_parameter():
    c, t = cgrad.nn.PReLU(3, init=0.5), torch.nn.PReLU(3, init=0.5)
    assert isinstance(c.weight, cgrad.nn.Parameter) and c.weight.requires_grad
    assert tuple(c.weight.shape) == (3,) and c.weight.dtype == cgrad.float32
    np.testing.assert_array_equal(to_numpy(c.weight), to_numpy(t.weight))
    with cgrad.no_grad():
        c.weight.fill_(2.0)
    c.reset_parameters()
    np.testing.assert_array_equal(to_numpy(c.weight), np.full(3, 0.5, np.float32))
    assert cgrad.nn.PReLU(dtype=cgrad.float64).weight.dtype == cgrad.float64


def test_sequential_repr():
    def make(L):
        return L.nn.Sequential(L.nn.Linear(3, 4), L.nn.ReLU(True), L.nn.GELU("tanh"), L.nn.Softmax(dim=-1),
                               L.nn.Hardtanh(-2.0, 2.0), L.nn.Softshrink(0.25), L.nn.PReLU(4))
    assert repr(make(cgrad)) == repr(make(torch))


def test_implicit_softmax_dim_warns_like_torch():
    x = np.random.default_rng(0).standard_normal((2, 3))
    for cls in ("Softmax", "LogSoftmax", "Softmin"):
        with pytest.warns(UserWarning, match="Implicit dimension choice"):
            out = getattr(cgrad.nn, cls)()(cgrad.tensor(x))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = getattr(torch.nn, cls)()(torch.tensor(x))
        np.testing.assert_allclose(to_numpy(out), to_numpy(ref), atol=1e-12)


def _raises_like_torch(fn):
    """fn(lib) raises in torch; cgrad raises an exception of the same class (or a subclass)."""
    with pytest.raises(Exception) as te:
        fn(torch)
    with pytest.raises(type(te.value)):
        fn(cgrad)


@pytest.mark.parametrize("fn", [
    lambda L: L.nn.Hardtanh(1.0, -1.0),
    lambda L: L.nn.Hardtanh(0.5, 0.5),
    lambda L: L.nn.GLU()(L.ones(2, 3)),
    lambda L: L.nn.PReLU(3)(L.ones(2, 4)),
    lambda L: L.nn.PReLU(3)(L.ones(3)),
    lambda L: L.nn.PReLU(3)(L.ones(())),
    lambda L: L.nn.Softshrink(-1.0)(L.ones(2, 4)),
], ids=["hardtanh_order", "hardtanh_equal", "glu_odd", "prelu_channels", "prelu_1d_channels",
    "prelu_0d", "softshrink_negative"])
def test_argument_errors(fn):
    _raises_like_torch(fn)


def test_hardtanh_deprecated_keywords():
    with pytest.warns(FutureWarning, match="min_value"):
        m = cgrad.nn.Hardtanh(min_value=-2.0)
    with pytest.warns(FutureWarning, match="max_value"):
        m = cgrad.nn.Hardtanh(max_value=3.0)
    assert (m.min_val, m.max_val) == (-1.0, 3.0)


@pytest.mark.parametrize("name", ["relu", "gelu_tanh", "prelu_channels", "softmax", "silu_inplace", "glu"])
def test_float32(name):
    _, make, shape = CASES[IDS.index(name)]
    compare_module(make, [shape], dtype="float32", atol=1e-5, rtol=1e-4,
                   call=_nonleaf if "inplace" in name else None)


def test_deepcopy_and_pickle():
    import copy
    import pickle
    m = cgrad.nn.Sequential(cgrad.nn.PReLU(2), cgrad.nn.Softmax(dim=1), cgrad.nn.ReLU(True))
    for m2 in (copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
        assert repr(m2) == repr(m)
        np.testing.assert_array_equal(to_numpy(m2[0].weight), to_numpy(m[0].weight))
