"""cgrad.nn.functional's convolution, pooling, normalization, dropout and
embedding functions against torch.nn.functional: values and input / weight /
bias gradients over a grid of options, float64 gradcheck + gradgradcheck on
small cases, batch_norm running statistics, dropout statistics, and errors
(exception types as torch, messages naming the op and shapes)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import cgrad
import cgrad.nn.functional as F
from opinfo.core import numeric_check, to_numpy

RNG = np.random.default_rng(2024)
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel")  # torch's note


def _arr(*shape, lo=-1.0, hi=1.0, dtype="float64"):
    return RNG.uniform(lo, hi, size=shape).astype(dtype)


def _both(a, grad=True, noncontig=False):
    """numpy array -> (cgrad tensor, torch tensor), leaves; noncontig: a view
    with a transposed memory layout of the last two dims."""
    if a is None:
        return None, None
    if noncontig and a.ndim >= 2:
        b = np.ascontiguousarray(np.swapaxes(a, -1, -2))
        c = cgrad.tensor(b).transpose(-1, -2)
        t = torch.tensor(b).transpose(-1, -2)
    else:
        c, t = cgrad.tensor(a), torch.tensor(a)
    if grad and a.dtype.kind == "f":
        c = c.detach().requires_grad_(True)
        t = t.detach().requires_grad_(True)
    return c, t


def _close(c, t, what, atol=1e-6, rtol=1e-5):
    tn = t.detach().numpy()
    cn = to_numpy(c)
    assert cn.shape == tn.shape, f"{what}: shape {cn.shape} vs {tn.shape}"
    if tn.dtype.kind in "iub":
        np.testing.assert_array_equal(cn, tn, err_msg=what)
    else:
        np.testing.assert_allclose(cn, tn, atol=atol, rtol=rtol, err_msg=what)


def _check(name, arrays, *, kwargs=None, fc=None, ft=None, noncontig=False, atol=1e-6, grad=True):
    """Run F.<name> and torch's on the same inputs (None entries pass as None),
    compare every output, then the gradients of every floating input."""
    kwargs = kwargs or {}
    fc = fc or getattr(F, name)
    ft = ft or getattr(TF, name)
    pairs = [_both(a, grad, noncontig) if isinstance(a, np.ndarray) else (a, a) for a in arrays]
    out_c = fc(*[p[0] for p in pairs], **kwargs)
    out_t = ft(*[p[1] for p in pairs], **kwargs)
    oc = list(out_c) if isinstance(out_c, tuple) else [out_c]
    ot = list(out_t) if isinstance(out_t, tuple) else [out_t]
    assert len(oc) == len(ot), name
    for a, b in zip(oc, ot):
        _close(a, b, f"{name} {kwargs} value", atol)
    if not grad or not ot[0].requires_grad:
        return
    g = RNG.uniform(-1, 1, size=tuple(ot[0].shape))
    oc[0].backward(cgrad.tensor(g))
    ot[0].backward(torch.tensor(g))
    for i, (c, t) in enumerate(pairs):
        if isinstance(t, torch.Tensor) and t.requires_grad:
            if t.grad is None:
                assert c.grad is None or not np.any(to_numpy(c.grad)), f"{name} grad {i}"
            else:
                assert c.grad is not None, f"{name} {kwargs}: no grad for argument {i}"
                _close(c.grad, t.grad, f"{name} {kwargs} grad {i}", atol * 10)


# ---------------------------------------------------------------- convolutions

CONV_GRID = [
    {}, {"stride": 2}, {"padding": 1}, {"padding": 2, "stride": 3}, {"dilation": 2}, {"padding": "same"},
    {"padding": "same", "dilation": 2}, {"padding": "valid"}, {"groups": 2}, {"groups": 4, "padding": 1},
    {"stride": (1, 2, 1), "padding": (0, 1, 2), "dilation": (2, 1, 1)},
]


def _nd(v, n):
    return v[:n] if isinstance(v, tuple) else v


@pytest.mark.parametrize("n", [1, 2, 3])
def test_conv_grid(n):
    sp = (7, 6, 5)[:n]
    for opts in CONV_GRID:
        opts = {k: _nd(v, n) for k, v in opts.items()}
        groups = opts.get("groups", 1)
        for k in ((3, 2, 3), (2, 3, 2)):  # odd and even kernels ('same' pads asymmetrically)
            w = _arr(4, 4 // groups, *k[:n])
            variants = ((True, True, False), (False, False, False), (True, False, True)) if k[0] == 3 else ((True, True, False),)
            for batched, bias, noncontig in variants:
                x = _arr(*((2,) if batched else ()), 4, *sp)
                _check(f"conv{n}d", [x, w, _arr(4) if bias else None], kwargs=opts, noncontig=noncontig)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_conv_transpose_grid(n):
    sp = (4, 3, 3)[:n]
    grid = [{}, {"stride": 2}, {"stride": 2, "padding": 1, "output_padding": 1}, {"dilation": 2},
            {"groups": 2, "stride": 3, "output_padding": 2}, {"padding": (1, 0, 1)[:n], "stride": (2, 1, 2)[:n]}]
    for opts in grid:
        groups = opts.get("groups", 1)
        w = _arr(4, 6 // groups, *(3, 2, 2)[:n])
        for batched, bias in ((True, True), (False, False)):
            x = _arr(*((2,) if batched else ()), 4, *sp)
            _check(f"conv_transpose{n}d", [x, w, _arr(6) if bias else None], kwargs=opts)


def test_conv_empty_batch_and_keywords():
    x, w = _arr(0, 3, 5, 5), _arr(2, 3, 3, 3)
    _check("conv2d", [x, w, _arr(2)], kwargs={"padding": 1})
    xc, wc = cgrad.tensor(_arr(1, 3, 5, 5)), cgrad.tensor(w)
    a = F.conv2d(input=xc, weight=wc, bias=None, stride=[1, 1], padding=[1, 1], dilation=(1, 1), groups=1)
    assert tuple(a.shape) == (1, 2, 5, 5)
    # what nn.Conv*d passes: tuples everywhere, padding (0,) * n after F.pad for other padding modes
    b = F.conv1d(cgrad.tensor(_arr(2, 3, 6)), cgrad.tensor(_arr(4, 3, 2)), None, (1,), (0,), (1,), 1)
    assert tuple(b.shape) == (2, 4, 5)


# ---------------------------------------------------------------- pooling

def test_max_pool_grid():
    for n in (1, 2):
        sp = (9, 7)[:n]
        grid = [(2, {}), (3, {"stride": 2}), (3, {"stride": 2, "padding": 1}), (2, {"dilation": 2}),
                (3, {"stride": 2, "ceil_mode": True}), (3, {"stride": 2, "padding": 1, "ceil_mode": True, "dilation": 2}),
                ((3, 2)[:n], {"stride": (1, 2)[:n], "padding": (1, 0)[:n]})]
        for ks, opts in grid:
            for x in (_arr(2, 3, *sp), _arr(3, *sp)):
                for ri in (False, True):
                    _check(f"max_pool{n}d", [x, ks], kwargs=dict(opts, return_indices=ri))
            _check(f"max_pool{n}d_with_indices", [_arr(2, 3, *sp), ks], kwargs=opts)
        _check(f"max_pool{n}d", [_arr(2, 3, *sp), 2], noncontig=True)
        _check(f"max_pool{n}d", [_arr(0, 3, *sp), 2])


def test_max_pool_2x2_ties_nan_and_paths():
    """The 2x2 stride-2 kernel: ties (first maximum), NaNs (the last one), odd sizes and row
    lengths around its 8 / 4 output blocks, in its three forms (indices, the graph's saved
    taps, values only without a graph); gradients first order and under create_graph."""
    for h, w in ((2, 2), (5, 7), (9, 15), (14, 28), (7, 17)):
        for dt in ("float32", "float64"):
            x = RNG.integers(-2, 3, size=(2, 3, h, w)).astype(dt)  # many ties
            x[RNG.random(x.shape) < 0.05] = np.nan
            if dt == "float64":  # _check's incoming gradient is float64
                _check("max_pool2d", [x, 2], atol=0)
                _check("max_pool2d", [x, 2], kwargs={"return_indices": True}, atol=0)
            with torch.no_grad():
                want = TF.max_pool2d(torch.tensor(x), 2)
            with cgrad.no_grad():
                _close(F.max_pool2d(cgrad.tensor(x), 2), want, "no grad", atol=0)
            xc, xt = _both(x)
            g = RNG.uniform(-1, 1, size=tuple(want.shape)).astype(dt)
            (gc,) = cgrad.autograd.grad(F.max_pool2d(xc, 2), xc, cgrad.tensor(g), create_graph=True)
            (gt,) = torch.autograd.grad(TF.max_pool2d(xt, 2), xt, torch.tensor(g), create_graph=True)
            _close(gc, gt, "create_graph grad", atol=0)


def test_avg_pool_grid():
    for n in (1, 2):
        sp = (9, 7)[:n]
        grid = [(2, {}), (3, {"stride": 2}), (3, {"stride": 2, "padding": 1}),
                (3, {"stride": 2, "padding": 1, "count_include_pad": False}),
                (3, {"stride": 2, "ceil_mode": True}), (3, {"stride": 2, "padding": 1, "ceil_mode": True}),
                (3, {"stride": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False}),
                ((3, 2)[:n], {"stride": (1, 2)[:n], "padding": (1, 0)[:n]})]
        if n == 2:
            grid += [(3, {"divisor_override": 4}), (3, {"stride": 2, "padding": 1, "divisor_override": 5})]
        for ks, opts in grid:
            for x in (_arr(2, 3, *sp), _arr(3, *sp)):
                _check(f"avg_pool{n}d", [x, ks], kwargs=opts)
        _check(f"avg_pool{n}d", [_arr(2, 3, *sp), 2], noncontig=True)


def test_adaptive_pool_grid():
    for n in (1, 2):
        sp = (9, 7)[:n]
        sizes = [3, 1, 9, (4, 5)[:n]] + ([(None, 3), (4, None)] if n == 2 else [])
        for os_ in sizes:
            for x in (_arr(2, 3, *sp), _arr(3, *sp)):
                _check(f"adaptive_avg_pool{n}d", [x, os_])
                for ri in (False, True):
                    _check(f"adaptive_max_pool{n}d", [x, os_], kwargs={"return_indices": ri})
        _check(f"adaptive_max_pool{n}d_with_indices", [_arr(2, 3, *sp), 3])
        _check(f"adaptive_avg_pool{n}d", [_arr(2, 3, *sp), 4], noncontig=True)


# ---------------------------------------------------------------- normalization

def test_batch_norm_running_stats_and_eval():
    for shape in ((6, 3), (4, 3, 5), (2, 3, 4, 3)):
        for affine in (True, False):
            for momentum in (0.1, 0.5):
                rm0, rv0 = _arr(3), _arr(3, lo=0.5, hi=2.0)
                rmc, rmt = _both(rm0, grad=False)
                rvc, rvt = _both(rv0, grad=False)
                w, b = (_arr(3), _arr(3)) if affine else (None, None)
                _check("batch_norm", [_arr(*shape), rmc, rvc, w, b], ft=lambda x, _m, _v, w, b, **k: TF.batch_norm(
                    x, rmt, rvt, w, b, **k), kwargs={"training": True, "momentum": momentum})
                _close(rmc, rmt, "running_mean")
                _close(rvc, rvt, "running_var")
                # eval mode normalizes with the (updated) running stats and leaves them alone
                _check("batch_norm", [_arr(*shape), rmc, rvc, w, b], ft=lambda x, _m, _v, w, b, **k: TF.batch_norm(
                    x, rmt, rvt, w, b, **k), kwargs={"training": False, "eps": 1e-3})
                _close(rmc, rmt, "running_mean (eval)")
    # training without running stats
    _check("batch_norm", [_arr(4, 3, 2), None, None, _arr(3), _arr(3)], kwargs={"training": True})
    _check("batch_norm", [_arr(4, 3, 2), None, None], kwargs={"training": True}, noncontig=True)


def test_instance_layer_group_rms_norm():
    for shape in ((2, 3, 5), (2, 3, 4, 3)):
        rm0, rv0 = _arr(3), _arr(3, lo=0.5, hi=2.0)
        rmc, rmt = _both(rm0, grad=False)
        rvc, rvt = _both(rv0, grad=False)
        _check("instance_norm", [_arr(*shape), rmc, rvc, _arr(3), _arr(3)],
               ft=lambda x, _m, _v, w, b, **k: TF.instance_norm(x, rmt, rvt, w, b, **k), kwargs={"momentum": 0.2})
        _close(rmc, rmt, "instance_norm running_mean")
        _close(rvc, rvt, "instance_norm running_var")
        _check("instance_norm", [_arr(*shape), rmc, rvc],
               ft=lambda x, _m, _v, **k: TF.instance_norm(x, rmt, rvt, **k), kwargs={"use_input_stats": False})
        _check("instance_norm", [_arr(*shape)], noncontig=True)
    for shape, ns in (((2, 3, 4), (4,)), ((2, 3, 4), (3, 4)), ((5,), [5]), ((3, 2, 2), [2, 2])):
        wshape = (ns,) if isinstance(ns, int) else tuple(ns)
        _check("layer_norm", [_arr(*shape), ns, _arr(*wshape), _arr(*wshape)])
        _check("layer_norm", [_arr(*shape), ns], kwargs={"eps": 1e-2})
        _check("rms_norm", [_arr(*shape), ns, _arr(*wshape)])
        _check("rms_norm", [_arr(*shape), ns], kwargs={"eps": 1e-2})
    _check("layer_norm", [_arr(3, 4), (4,), _arr(4), _arr(4)], noncontig=True)
    for shape, g in (((2, 6, 3), 3), ((2, 6, 2, 2), 2), ((3, 4), 4), ((2, 4, 5), 1)):
        _check("group_norm", [_arr(*shape), g, _arr(shape[1]), _arr(shape[1])])
        _check("group_norm", [_arr(*shape), g], kwargs={"eps": 1e-3}, noncontig=True)


# ---------------------------------------------------------------- gradcheck / gradgradcheck (float64)

GRADCHECK_CASES = [
    ("conv2d same, even kernel", lambda x, w, b: F.conv2d(x, w, b, padding="same"), [(1, 2, 3, 3), (2, 2, 2, 2), (2,)]),
    ("conv2d stride/groups", lambda x, w: F.conv2d(x, w, stride=2, padding=1, groups=2), [(1, 2, 3, 3), (2, 1, 2, 2)]),
    ("conv_transpose2d", lambda x, w: F.conv_transpose2d(x, w, stride=2, output_padding=1), [(1, 2, 2, 2), (2, 1, 2, 2)]),
    ("max_pool2d", lambda x: F.max_pool2d(x, 2, stride=1, padding=1), [(1, 2, 3, 3)]),
    ("avg_pool2d", lambda x: F.avg_pool2d(x, 2, stride=1, padding=1, count_include_pad=False), [(1, 2, 3, 3)]),
    ("adaptive_avg_pool2d", lambda x: F.adaptive_avg_pool2d(x, (2, None)), [(1, 2, 3, 3)]),
    ("adaptive_max_pool2d", lambda x: F.adaptive_max_pool2d(x, 2), [(1, 2, 3, 3)]),
    ("batch_norm", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), [(4, 2, 2), (2,), (2,)]),
    ("group_norm", lambda x, w, b: F.group_norm(x, 2, w, b), [(2, 4, 2), (4,), (4,)]),
    ("layer_norm", lambda x, w, b: F.layer_norm(x, (3,), w, b), [(3, 3), (3,), (3,)]),
    ("rms_norm", lambda x, w: F.rms_norm(x, (3,), w), [(3, 3), (3,)]),
    ("embedding", lambda w: F.embedding(cgrad.tensor([[1, 3], [1, 0]]), w), [(4, 3)]),
]


@pytest.mark.parametrize("case", GRADCHECK_CASES, ids=[c[0] for c in GRADCHECK_CASES])
def test_gradcheck_and_gradgradcheck(case):
    _, fn, shapes = case
    arrays = [_arr(*s) for s in shapes]
    diff = list(range(len(arrays)))
    numeric_check(cgrad, fn, arrays, diff, create_graph=False)
    numeric_check(cgrad, fn, arrays, diff, create_graph=True)


# ---------------------------------------------------------------- dropout

def test_dropout_statistics_and_scaling():
    cgrad.manual_seed(0)
    x = cgrad.ones(200, 500, requires_grad=True)
    for p in (0.2, 0.5, 0.8):
        y = F.dropout(x, p)
        v = to_numpy(y.detach())
        assert set(np.unique(v).round(6)) <= {0.0, round(1 / (1 - p), 6)}
        assert abs((v == 0).mean() - p) < 0.01
        (g,) = cgrad.autograd.grad(y.sum(), x)
        np.testing.assert_allclose(to_numpy(g), v)  # backward multiplies by the same mask
    assert F.dropout(x, 0.5, training=False) is x or np.array_equal(to_numpy(F.dropout(x, 0.5, False).detach()), 1)
    assert not np.any(to_numpy(F.dropout(x, 1.0).detach()))
    np.testing.assert_array_equal(to_numpy(F.dropout(x, 0.0).detach()), 1)
    # in place
    z = cgrad.ones(1000)
    r = F.dropout(z, 0.5, inplace=True)
    assert r is z and 0.4 < (to_numpy(z) == 0).mean() < 0.6
    # same seed, same mask
    cgrad.manual_seed(5)
    a = to_numpy(F.dropout(cgrad.ones(100), 0.5))
    cgrad.manual_seed(5)
    np.testing.assert_array_equal(a, to_numpy(F.dropout(cgrad.ones(100), 0.5)))


def test_feature_dropout_variants():
    cgrad.manual_seed(1)
    # (function, input shape, number of spatial dims: each channel is input[..., <spatial>])
    cases = ((F.dropout1d, (40, 50, 6), 1), (F.dropout1d, (2000, 6), 1), (F.dropout2d, (40, 50, 3, 2), 2),
             (F.dropout2d, (40, 50, 6), 1), (F.dropout3d, (40, 50, 2, 2, 2), 3), (F.dropout3d, (2000, 2, 3, 1), 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fn, shape, nsp in cases:
            y = to_numpy(fn(cgrad.ones(*shape), 0.4))
            assert y.shape == shape
            rows = y.reshape(-1, int(np.prod(shape[-nsp:])))
            # every channel is all-zero or all-kept (scaled by 1 / (1 - p))
            assert np.all((rows == 0).all(axis=1) | np.isclose(rows, 1 / 0.6).all(axis=1)), fn.__name__
            assert 0.35 < (rows[:, 0] == 0).mean() < 0.45, fn.__name__
            z = cgrad.ones(*shape)
            assert fn(z, 0.4, inplace=True) is z
    with pytest.raises(RuntimeError, match="dropout1d"):
        F.dropout1d(cgrad.ones(2, 3, 4, 5))
    with pytest.warns(UserWarning):
        F.dropout2d(cgrad.ones(2, 3), 0.5)


def test_alpha_dropouts_keep_mean_and_variance():
    cgrad.manual_seed(2)
    x = cgrad.randn(400, 500)
    for p in (0.2, 0.5):
        y = to_numpy(F.alpha_dropout(x, p, training=True))
        assert abs(y.mean()) < 0.03 and abs(y.std() - 1) < 0.03
        y = to_numpy(F.feature_alpha_dropout(cgrad.randn(200, 500, 4), p, training=True))
        assert abs(y.mean()) < 0.05 and abs(y.std() - 1) < 0.05
    np.testing.assert_array_equal(to_numpy(F.alpha_dropout(x, 0.5)), to_numpy(x))  # training=False by default
    np.testing.assert_array_equal(to_numpy(F.feature_alpha_dropout(x, 0.5)), to_numpy(x))
    # feature_alpha_dropout: a dropped channel is constant
    y = to_numpy(F.feature_alpha_dropout(cgrad.randn(20, 30, 5), 0.5, training=True))
    const = np.isclose(y, y[..., :1]).all(axis=-1)
    assert 0.3 < const.mean() < 0.7
    xg = cgrad.randn(8, 6, requires_grad=True)
    z = xg.clone()
    F.alpha_dropout(z, 0.3, training=True, inplace=True).sum().backward()
    assert xg.grad is not None
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        F.feature_alpha_dropout(cgrad.ones(3), 0.5, training=True)


@pytest.mark.parametrize("fn", ["dropout", "alpha_dropout", "dropout1d", "dropout2d", "dropout3d", "feature_alpha_dropout"])
def test_dropout_probability_errors(fn):
    for p in (-0.1, 1.5):
        with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
            getattr(F, fn)(cgrad.ones(2, 3, 4, 5), p)
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        cgrad.dropout(cgrad.ones(3), 1.5, True)


# ---------------------------------------------------------------- embedding

def test_embedding_options():
    idx = np.array([[0, 2, 4, 2], [9, 1, 0, 3]])
    for kw in ({}, {"padding_idx": 2}, {"padding_idx": -1}):
        _check("embedding", [idx, _arr(10, 3)], kwargs=kw)
    # max_norm renormalizes the referenced rows of weight in place, like torch
    w = _arr(10, 3, lo=-3, hi=3)
    for norm_type in (2.0, 1.0):
        wc, wt = _both(w.copy(), grad=False)
        yc = F.embedding(cgrad.tensor(idx), wc, max_norm=1.5, norm_type=norm_type)
        yt = TF.embedding(torch.tensor(idx), wt, max_norm=1.5, norm_type=norm_type)
        _close(yc, yt, "embedding max_norm")
        _close(wc, wt, "embedding max_norm weight")
    # scale_grad_by_freq=True is supported (tests/python/test_opdb_fixes.py checks its gradient)
    _close(F.embedding(cgrad.tensor(idx), cgrad.tensor(w), scale_grad_by_freq=True),
           TF.embedding(torch.tensor(idx), torch.tensor(w), scale_grad_by_freq=True), "embedding scale_grad_by_freq")
    with pytest.raises(NotImplementedError, match="sparse"):
        F.embedding(cgrad.tensor(idx), cgrad.tensor(w), sparse=True)
    with pytest.raises(AssertionError, match="Padding_idx"):
        F.embedding(cgrad.tensor(idx), cgrad.tensor(w), padding_idx=10)
    with pytest.raises(IndexError):
        F.embedding(cgrad.tensor([10]), cgrad.tensor(w))
    with pytest.raises(RuntimeError):
        F.embedding(cgrad.tensor([1.0]), cgrad.tensor(w))


# ---------------------------------------------------------------- errors

ERROR_CASES = [
    ("channels", "conv2d", lambda L, F_: F_.conv2d(L.ones(2, 3, 8, 8), L.ones(4, 2, 3, 3)), ["conv2d", "(2,3,8,8)", "(4,2,3,3)"]),
    ("groups", "conv2d", lambda L, F_: F_.conv2d(L.ones(2, 4, 8, 8), L.ones(3, 2, 3, 3), groups=2), ["conv2d", "groups"]),
    ("input dims", "conv2d", lambda L, F_: F_.conv2d(L.ones(8, 8), L.ones(4, 3, 3, 3)), ["conv2d"]),
    ("too small", "conv2d", lambda L, F_: F_.conv2d(L.ones(1, 3, 2, 2), L.ones(4, 3, 3, 3)), ["conv2d"]),
    ("bias", "conv2d", lambda L, F_: F_.conv2d(L.ones(1, 3, 5, 5), L.ones(4, 3, 3, 3), L.ones(3)), ["conv2d", "bias"]),
    ("padding str", "conv2d", lambda L, F_: F_.conv2d(L.ones(1, 3, 5, 5), L.ones(4, 3, 3, 3), padding="foo"), ["foo"]),
    ("stride len", "conv2d", lambda L, F_: F_.conv2d(L.ones(1, 3, 5, 5), L.ones(4, 3, 3, 3), stride=(1, 1, 1)), ["stride"]),
    ("same strided", "conv1d", lambda L, F_: F_.conv1d(L.ones(1, 3, 5), L.ones(4, 3, 3), stride=2, padding="same"), ["same"]),
    ("dtype", "conv1d", lambda L, F_: F_.conv1d(L.ones(1, 3, 5, dtype=L.float64), L.ones(4, 3, 3)), []),
    ("output_padding", "conv_transpose2d",
     lambda L, F_: F_.conv_transpose2d(L.ones(1, 3, 4, 4), L.ones(3, 2, 3, 3), output_padding=2), ["output_padding"]),
    ("pool pad", "max_pool2d", lambda L, F_: F_.max_pool2d(L.ones(1, 3, 8, 8), 2, padding=2), ["max_pool2d", "pad"]),
    ("pool kernel", "max_pool2d", lambda L, F_: F_.max_pool2d(L.ones(1, 3, 8, 8), (2, 2, 2)), ["kernel_size"]),
    ("avg divisor", "avg_pool2d", lambda L, F_: F_.avg_pool2d(L.ones(1, 3, 8, 8), 2, divisor_override=0), ["divisor"]),
    ("adaptive size", "adaptive_avg_pool2d", lambda L, F_: F_.adaptive_avg_pool2d(L.ones(1, 3, 8, 8), (1, 2, 3)), []),
    ("bn channels", "batch_norm", lambda L, F_: F_.batch_norm(L.ones(2, 3, 4), L.zeros(4), L.ones(4)), ["batch_norm"]),
    ("bn eval", "batch_norm", lambda L, F_: F_.batch_norm(L.ones(2, 3, 4), None, None), ["batch_norm"]),
    ("bn batch 1", "batch_norm", lambda L, F_: F_.batch_norm(L.ones(1, 3), None, None, training=True), ["1 value"]),
    ("ln shape", "layer_norm", lambda L, F_: F_.layer_norm(L.ones(2, 3, 4), (7,)), ["layer_norm", "(2,3,4)"]),
    ("gn groups", "group_norm", lambda L, F_: F_.group_norm(L.ones(2, 3, 4), 2), ["group_norm", "num_groups"]),
    ("rms shape", "rms_norm", lambda L, F_: F_.rms_norm(L.ones(2, 3, 4), (7,)), ["rms_norm"]),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors_match_torch_types(case):
    _, op, fn, words = case
    with pytest.raises(Exception) as et:
        fn(torch, TF)
    with pytest.raises(Exception) as ec:
        fn(cgrad, F)
    assert isinstance(ec.value, et.type), f"{op}: cgrad raised {ec.type.__name__}, torch {et.type.__name__}"
    for w in words:
        assert w in str(ec.value), f"{op}: {w!r} not in {str(ec.value)!r}"


def test_argument_errors():
    x, w = cgrad.ones(1, 3, 5, 5), cgrad.ones(4, 3, 3, 3)
    with pytest.raises(TypeError):
        F.conv2d(x, w, stride="a")
    with pytest.raises(TypeError):
        F.conv2d(x, "w")
    with pytest.raises(TypeError):
        F.conv2d(x, w, bogus=1)
    with pytest.raises(TypeError):
        F.max_pool2d(x, 2.5)
    with pytest.raises(RuntimeError, match="leaf"):
        cgrad.embedding_renorm_(cgrad.ones(3, 2, requires_grad=True), cgrad.tensor([0]), 1.0, 2.0)
