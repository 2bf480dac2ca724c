"""cgrad.nn.init against torch.nn.init: the gain table, fan computations,
distribution moments / bounds of the random initialisers, the deterministic
ones exactly, and orthogonality."""
import math

import numpy as np
import pytest
import torch

import cgrad
import cgrad.nn.init as init
from nn_compare import to_numpy


@pytest.mark.parametrize("name,param", [("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None),
                                        ("relu", None), ("leaky_relu", None), ("leaky_relu", 0.2), ("selu", None),
                                        ("conv_transpose3d", None)])
def test_gain_table(name, param):
    assert init.calculate_gain(name, param) == pytest.approx(torch.nn.init.calculate_gain(name, param))


def test_gain_errors():
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        init.calculate_gain("foo")
    with pytest.raises(ValueError, match="not a valid number"):
        init.calculate_gain("leaky_relu", "x")


@pytest.mark.parametrize("shape", [(3, 4), (5, 2, 3), (4, 3, 2, 5), (2, 3, 1, 1, 2)])
def test_fans_match_torch(shape):
    assert init._calculate_fan_in_and_fan_out(cgrad.empty(shape)) == \
        torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(cgrad.empty(3))


def _moments(t):
    a = to_numpy(t).astype(np.float64).ravel()
    return a.mean(), a.std(), a.min(), a.max()


SHAPE = (256, 128, 3)  # fan_in 384, fan_out 768


@pytest.mark.parametrize("fn,kw,kind,std", [
    ("uniform_", dict(a=-0.5, b=1.5), "uniform", 2 / math.sqrt(12)),
    ("normal_", dict(mean=0.3, std=2.0), "normal", 2.0),
    ("xavier_uniform_", dict(gain=2.0), "uniform", 2.0 * math.sqrt(2.0 / (384 + 768))),
    ("xavier_normal_", dict(), "normal", math.sqrt(2.0 / (384 + 768))),
    ("kaiming_uniform_", dict(a=math.sqrt(5)), "uniform", math.sqrt(2 / 6) / math.sqrt(384)),
    ("kaiming_uniform_", dict(mode="fan_out", nonlinearity="relu"), "uniform", math.sqrt(2) / math.sqrt(768)),
    ("kaiming_normal_", dict(nonlinearity="relu"), "normal", math.sqrt(2) / math.sqrt(384)),
    ("trunc_normal_", dict(std=0.5, a=-0.6, b=0.9), "trunc", None),
])
def test_random_initializers_distribution(fn, kw, kind, std):
    cgrad.manual_seed(0)
    t = cgrad.empty(SHAPE)
    out = getattr(init, fn)(t, **kw)
    assert out is t
    mean, sd, lo, hi = _moments(t)
    ref = getattr(torch.nn.init, fn)(torch.empty(SHAPE, dtype=torch.float64), **kw)
    rmean, rsd, rlo, rhi = _moments(ref)
    n = t.numel()
    assert abs(mean - rmean) < 6 * rsd / math.sqrt(n) + 1e-12
    assert abs(sd - rsd) < 0.01 * rsd
    if std is not None:
        assert sd == pytest.approx(std, rel=0.01)
    if kind in ("uniform", "trunc"):
        assert lo >= rlo - 0.01 * rsd and hi <= rhi + 0.01 * rsd
    if kind == "trunc":
        assert lo >= -0.6 and hi <= 0.9


def test_generator_makes_draws_repeatable():
    g = cgrad.Generator().manual_seed(5)
    a = init.kaiming_normal_(cgrad.empty(4, 5), generator=g)
    g.manual_seed(5)
    b = init.kaiming_normal_(cgrad.empty(4, 5), generator=g)
    assert np.array_equal(to_numpy(a), to_numpy(b))


def test_deterministic_initializers():
    t = cgrad.empty(3, 4, requires_grad=True)
    assert init.constant_(t, 2.5) is t and np.all(to_numpy(t) == 2.5) and t.requires_grad and t.grad_fn is None
    assert np.all(to_numpy(init.ones_(cgrad.empty(2))) == 1) and np.all(to_numpy(init.zeros_(cgrad.ones(2))) == 0)
    np.testing.assert_array_equal(to_numpy(init.eye_(cgrad.empty(3, 5))), torch.nn.init.eye_(torch.empty(3, 5)).numpy())
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions"):
        init.eye_(cgrad.empty(3))
    for shape, groups in [((4, 4, 3), 1), ((6, 2, 3, 3), 2), ((2, 3, 3, 3, 3), 1)]:
        np.testing.assert_array_equal(to_numpy(init.dirac_(cgrad.empty(shape), groups)),
                                      torch.nn.init.dirac_(torch.empty(shape), groups).numpy())
    with pytest.raises(ValueError, match="3, 4, or 5 dimensions"):
        init.dirac_(cgrad.empty(2, 2))


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 2, 3), (1, 1)])
def test_orthogonal(shape):
    cgrad.manual_seed(1)
    t = init.orthogonal_(cgrad.empty(shape), gain=2.0)
    m = to_numpy(t).reshape(shape[0], -1).astype(np.float64)
    gram = m @ m.T if m.shape[0] <= m.shape[1] else m.T @ m
    np.testing.assert_allclose(gram, 4.0 * np.eye(gram.shape[0]), atol=1e-5)
    with pytest.raises(ValueError, match="2 or more dimensions"):
        init.orthogonal_(cgrad.empty(3))


def test_zero_element_kaiming_warns():
    with pytest.warns(UserWarning, match="no-op"):
        init.kaiming_uniform_(cgrad.empty(0, 3))
