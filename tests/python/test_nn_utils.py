"""cgrad.nn.utils against torch.nn.utils: clip_grad_norm_ (every norm type,
non-finite handling), clip_grad_value_, parameters_to_vector /
vector_to_parameters."""
import numpy as np
import pytest
import torch

import cgrad
import cgrad.nn as nn
from nn_compare import to_numpy

SHAPES = [(3, 4), (5,), (2, 2, 2)]


def _params(lib, scale=1.0, with_none=True):
    rng = np.random.default_rng(4)
    ps = []
    for s in SHAPES:
        p = lib.nn.Parameter(lib.tensor(rng.standard_normal(s)))
        p.grad = lib.tensor(rng.standard_normal(s) * scale)
        ps.append(p)
    if with_none:
        ps.append(lib.nn.Parameter(lib.ones(2, dtype=lib.float64)))  # no gradient
    return ps


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, float("inf")])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    cp, tp = _params(cgrad), _params(torch)
    cn = nn.utils.clip_grad_norm_(cp, max_norm, norm_type=norm_type)
    tn = torch.nn.utils.clip_grad_norm_(tp, max_norm, norm_type=norm_type)
    assert isinstance(cn, cgrad.Tensor) and cn.dim() == 0
    np.testing.assert_allclose(float(cn), float(tn), rtol=1e-12)
    for a, b in zip(cp, tp):
        assert (a.grad is None) == (b.grad is None)
        if a.grad is not None:
            np.testing.assert_allclose(to_numpy(a.grad), to_numpy(b.grad), rtol=1e-12)


def test_clip_grad_norm_single_tensor_and_empty():
    p = nn.Parameter(cgrad.ones(4))
    p.grad = cgrad.full((4,), 3.0)
    n = nn.utils.clip_grad_norm_(p, 1.0)
    assert float(n) == pytest.approx(6.0) and np.allclose(to_numpy(p.grad), 3.0 / (6.0 + 1e-6))
    assert float(nn.utils.clip_grad_norm_([nn.Parameter(cgrad.ones(2))], 1.0)) == 0.0


def test_clip_grad_norm_nonfinite():
    cp = _params(cgrad, with_none=False)
    with cgrad.no_grad():
        cp[0].grad[0, 0] = float("inf")
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_(cp, 1.0, error_if_nonfinite=True)
    assert np.isinf(float(nn.utils.clip_grad_norm_(cp, 1.0)))


def test_clip_grad_value():
    cp, tp = _params(cgrad), _params(torch)
    assert nn.utils.clip_grad_value_(cp, 0.3) is None
    torch.nn.utils.clip_grad_value_(tp, 0.3)
    for a, b in zip(cp, tp):
        if b.grad is not None:
            np.testing.assert_array_equal(to_numpy(a.grad), to_numpy(b.grad))


def test_vector_roundtrip():
    cp, tp = _params(cgrad, with_none=False), _params(torch, with_none=False)
    cv, tv = nn.utils.parameters_to_vector(cp), torch.nn.utils.parameters_to_vector(tp)
    np.testing.assert_array_equal(to_numpy(cv), to_numpy(tv))
    nn.utils.vector_to_parameters(cv * 2, cp)
    for a, b in zip(cp, tp):
        np.testing.assert_allclose(to_numpy(a), 2 * to_numpy(b))
        assert isinstance(a, nn.Parameter)
    with pytest.raises(TypeError, match="expected torch.Tensor"):
        nn.utils.vector_to_parameters([1.0], cp)
