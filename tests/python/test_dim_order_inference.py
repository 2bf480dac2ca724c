"""Tensor.dim_order(ambiguity_check=...) and Tensor.is_inference() against
torch: dim_order over permuted, sliced, expanded, channels-last, 0-d, empty and
size-1 layouts with every kind of ambiguity_check (values and the exceptions);
is_inference for tensors made in and out of inference_mode, views of either,
and results computed from inference tensors outside it."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

import cgrad

SHAPES = [(), (3,), (1,), (0,), (2, 3), (1, 3), (3, 1), (2, 2), (2, 3, 4), (1, 2, 1), (2, 3, 5, 7), (1, 2, 3, 4),
          (2, 1, 3, 3), (2, 3, 1, 1), (2, 0, 3, 4), (2, 2, 2, 2), (2, 3, 4, 5, 6), (1, 1, 1, 1)]


def _layouts(lib, shape):
    base = lib.zeros(*shape) if shape else lib.zeros(())
    yield base
    if len(shape) >= 2:
        for p in itertools.permutations(range(len(shape))):
            yield base.permute(*p)
        yield base[..., ::2]
        yield lib.zeros(*shape[:-1], 1).expand(*shape)
    if len(shape) == 4:
        yield base.contiguous(memory_format=lib.channels_last)


def _checks(lib):
    return [False, True, [lib.contiguous_format, lib.channels_last], [lib.channels_last], []]


def _call(t, check):
    try:
        return t.dim_order(ambiguity_check=check)
    except (RuntimeError, TypeError) as e:
        return type(e).__name__, str(e)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_dim_order_as_torch(shape):
    n = 0
    for t, c in zip(_layouts(torch, shape), _layouts(cgrad, shape)):
        assert tuple(t.stride()) == tuple(c.stride())
        for tc, cc in zip(_checks(torch), _checks(cgrad)):
            want, got = _call(t, tc), _call(c, cc)
            assert got == want, (tuple(t.stride()), tc)
            n += 1
    assert n >= 5


def test_dim_order_values_and_errors():
    assert cgrad.empty(2, 3, 5, 7).transpose(1, 2).dim_order() == (0, 2, 1, 3)
    assert cgrad.empty(2, 3, 5, 7).contiguous(memory_format=cgrad.channels_last).dim_order() == (0, 2, 3, 1)
    with pytest.raises(RuntimeError, match="does not have unique dim order"):
        cgrad.empty(1, 2, 3, 4).dim_order(ambiguity_check=True)
    assert cgrad.empty(1, 2, 3, 4).dim_order(ambiguity_check=[cgrad.contiguous_format, cgrad.channels_last]) == (0, 1, 2, 3)
    for bad in ["ILLEGAL", [1], (cgrad.channels_last,)]:
        with pytest.raises(TypeError, match="must be a bool or a list of memory formats"):
            cgrad.empty(2).dim_order(ambiguity_check=bad)
    with pytest.raises(TypeError):
        cgrad.empty(2).dim_order(True)  # keyword-only, as torch's


def _inference_flags(lib):
    out = []
    x = lib.ones(2, 3)
    out.append(x.is_inference())
    with lib.inference_mode():
        y = lib.ones(2)
        v, z, d = x[0], x * 2, x.detach()
        x.add_(1)
        f, cl, t = lib.from_numpy(np.ones(2)), x.clone(), lib.tensor([1.0])
        with lib.inference_mode(False):
            w, wy = lib.ones(2), y[0]
        out += [y.is_inference(), v.is_inference(), z.is_inference(), d.is_inference(), x.is_inference(),
                f.is_inference(), cl.is_inference(), t.is_inference(), w.is_inference(), wy.is_inference()]
    out += [y[0].is_inference(), y.view(1, 2).is_inference(), (y + 1).is_inference(), y.detach().is_inference(),
            lib.ones(1).is_inference()]
    with lib.no_grad():
        out.append(lib.ones(1).is_inference())
    return out


def test_is_inference_as_torch():
    want = _inference_flags(torch)
    assert True in want and False in want
    assert _inference_flags(cgrad) == want


def test_is_inference_decorator_and_empty():
    @cgrad.inference_mode()
    def make():
        return cgrad.empty(0), cgrad.zeros(())
    e, s = make()
    assert e.is_inference() and s.is_inference() and not e.requires_grad
    assert not cgrad.zeros(()).is_inference()
