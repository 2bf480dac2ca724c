"""cgrad.nn's normalization and dropout layers against torch.nn: LayerNorm, GroupNorm, RMSNorm,
BatchNorm1d/2d/3d, InstanceNorm1d/2d/3d (outputs, input and parameter gradients in train and eval mode,
running-stat buffers after several training steps), the dropouts (statistics, p = 0 / 1, eval identity),
reprs, state_dict keys and argument errors."""
import warnings

import numpy as np
import pytest
import torch

import cgrad
import cgrad.nn as nn
from nn_compare import compare_module, copy_state, to_numpy


def _same_repr(make):
    assert repr(make(cgrad)) == repr(make(torch))


def _same_state_keys(make):
    tm, cm = make(torch), make(cgrad)
    assert list(cm.state_dict()) == list(tm.state_dict())
    assert [n for n, _ in cm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert [n for n, _ in cm.named_buffers()] == [n for n, _ in tm.named_buffers()]
    for (n, a), (_, b) in zip(tm.state_dict().items(), cm.state_dict().items()):
        assert tuple(b.shape) == tuple(a.shape), n
        np.testing.assert_array_equal(to_numpy(b), to_numpy(a), err_msg=n)  # default init: ones / zeros


# ---------------------------------------------------------------- LayerNorm, GroupNorm, RMSNorm

LAYER_NORMS = [
    (lambda lib: lib.nn.LayerNorm(4), [(3, 4)]),
    (lambda lib: lib.nn.LayerNorm([3, 4], eps=1e-3), [(2, 3, 4)]),
    (lambda lib: lib.nn.LayerNorm(4, elementwise_affine=False), [(2, 3, 4)]),
    (lambda lib: lib.nn.LayerNorm((4,), bias=False), [(5, 4)]),
    (lambda lib: lib.nn.GroupNorm(2, 4), [(3, 4, 5)]),
    (lambda lib: lib.nn.GroupNorm(3, 6, eps=1e-3, affine=False), [(2, 6, 2, 3)]),
    (lambda lib: lib.nn.GroupNorm(1, 4, bias=False), [(2, 4, 3)]),
    (lambda lib: lib.nn.RMSNorm(4), [(3, 4)]),
    (lambda lib: lib.nn.RMSNorm([2, 4], eps=1e-4), [(3, 2, 4)]),
    (lambda lib: lib.nn.RMSNorm(4, elementwise_affine=False), [(2, 3, 4)]),
]


@pytest.mark.parametrize("k", range(len(LAYER_NORMS)))
def test_layer_group_rms_norm_vs_torch(k):
    make, inputs = LAYER_NORMS[k]
    compare_module(make, inputs)
    _same_repr(make)
    _same_state_keys(make)


def test_layer_norm_float32():
    compare_module(lambda lib: lib.nn.LayerNorm(8), [(4, 8)], dtype="float32", atol=1e-5, rtol=1e-4)


def test_layer_norm_attributes():
    m = nn.LayerNorm([2, 3])
    assert m.normalized_shape == (2, 3) and m.eps == 1e-5 and m.elementwise_affine is True
    assert nn.LayerNorm(3, elementwise_affine=False).weight is None
    assert nn.LayerNorm(3, bias=False).bias is None
    assert nn.RMSNorm(3).eps is None
    assert nn.LayerNorm(3, dtype=cgrad.float64).weight.dtype == cgrad.float64


def test_group_norm_errors():
    with pytest.raises(ValueError, match=r"num_channels \(5\) must be divisible by num_groups \(2\)"):
        nn.GroupNorm(2, 5)
    with pytest.raises(TypeError):
        nn.LayerNorm()


# ---------------------------------------------------------------- BatchNorm

BATCH_NORMS = [
    (lambda lib: lib.nn.BatchNorm1d(3), (4, 3)),
    (lambda lib: lib.nn.BatchNorm1d(3, momentum=0.3), (4, 3, 5)),
    (lambda lib: lib.nn.BatchNorm2d(3), (2, 3, 4, 5)),
    (lambda lib: lib.nn.BatchNorm2d(2, momentum=None), (3, 2, 3, 3)),
    (lambda lib: lib.nn.BatchNorm2d(2, eps=1e-3, affine=False), (3, 2, 2, 3)),
    (lambda lib: lib.nn.BatchNorm2d(2, track_running_stats=False), (3, 2, 2, 3)),
    (lambda lib: lib.nn.BatchNorm2d(2, bias=False), (3, 2, 2, 2)),
    (lambda lib: lib.nn.BatchNorm3d(2), (2, 2, 2, 3, 2)),
]


@pytest.mark.parametrize("k", range(len(BATCH_NORMS)))
def test_batch_norm_vs_torch(k):
    make, shape = BATCH_NORMS[k]
    compare_module(make, [shape])
    _same_repr(make)
    _same_state_keys(make)


@pytest.mark.parametrize("k", [0, 1, 2, 3, 5])
def test_batch_norm_running_stats_after_steps(k):
    """Several training steps (different batches) update running_mean / running_var / num_batches_tracked
    as torch does (momentum None: cumulative average); eval then normalizes with them."""
    make, shape = BATCH_NORMS[k]
    tm, cm = make(torch).double(), make(cgrad).double()
    copy_state(tm, cm)
    rng = np.random.default_rng(3)
    for step in range(4):
        x = rng.standard_normal(shape) * (step + 1) + step
        to, co = tm(torch.tensor(x)), cm(cgrad.tensor(x))
        np.testing.assert_allclose(to_numpy(co), to_numpy(to), atol=1e-10, rtol=1e-8)
    tb, cb = dict(tm.named_buffers()), dict(cm.named_buffers())
    assert list(tb) == list(cb)
    for name in tb:
        np.testing.assert_allclose(to_numpy(cb[name]), to_numpy(tb[name]), atol=1e-10, rtol=1e-8, err_msg=name)
    if "num_batches_tracked" in cb:
        assert cb["num_batches_tracked"].dtype == cgrad.int64 and int(cb["num_batches_tracked"]) == 4
    tm.eval()
    cm.eval()
    x = rng.standard_normal(shape)
    np.testing.assert_allclose(to_numpy(cm(cgrad.tensor(x))), to_numpy(tm(torch.tensor(x))), atol=1e-10, rtol=1e-8)
    # a state dict round trip carries the statistics
    cm2 = make(cgrad).double()
    cm2.load_state_dict(cm.state_dict())
    cm2.eval()
    np.testing.assert_allclose(to_numpy(cm2(cgrad.tensor(x))), to_numpy(tm(torch.tensor(x))), atol=1e-10, rtol=1e-8)


def test_batch_norm_reset_and_old_state_dict():
    m = nn.BatchNorm1d(3)
    m(cgrad.randn(4, 3))
    assert int(m.num_batches_tracked) == 1
    m.reset_running_stats()
    assert int(m.num_batches_tracked) == 0
    np.testing.assert_array_equal(m.running_var.numpy(), np.ones(3, np.float32))
    sd = m.state_dict()
    assert list(sd) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    # a checkpoint from before num_batches_tracked (version 1) still loads strictly
    del sd["num_batches_tracked"]
    sd._metadata = {"": {"version": 1}}
    m.load_state_dict(sd)


def test_batch_norm_errors():
    with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
        nn.BatchNorm2d(3)(cgrad.randn(2, 3, 4))
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        nn.BatchNorm1d(3)(cgrad.randn(2, 3, 4, 4))
    with pytest.raises(ValueError, match=r"expected 5D input \(got 4D input\)"):
        nn.BatchNorm3d(3)(cgrad.randn(2, 3, 4, 4))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        nn.BatchNorm1d(3)(cgrad.randn(1, 3))
    nn.BatchNorm1d(3).eval()(cgrad.randn(1, 3))  # fine in eval


# ---------------------------------------------------------------- InstanceNorm

INSTANCE_NORMS = [
    (lambda lib: lib.nn.InstanceNorm1d(3), (2, 3, 5)),
    (lambda lib: lib.nn.InstanceNorm1d(3, affine=True), (3, 5)),
    (lambda lib: lib.nn.InstanceNorm2d(2, affine=True, track_running_stats=True), (3, 2, 3, 4)),
    (lambda lib: lib.nn.InstanceNorm2d(2, eps=1e-3), (2, 3, 4)),
    (lambda lib: lib.nn.InstanceNorm3d(2, track_running_stats=True, momentum=0.2), (2, 2, 2, 3, 2)),
]


@pytest.mark.parametrize("k", range(len(INSTANCE_NORMS)))
def test_instance_norm_vs_torch(k):
    make, shape = INSTANCE_NORMS[k]
    compare_module(make, [shape])
    _same_repr(make)
    _same_state_keys(make)


def test_instance_norm_errors():
    with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 2D input\)"):
        nn.InstanceNorm2d(3)(cgrad.randn(3, 4))
    with pytest.raises(ValueError, match=r"expected input's size at dim=1 to match num_features \(4\), but got: 3"):
        nn.InstanceNorm1d(4, affine=True)(cgrad.randn(2, 3, 5))
    with pytest.warns(UserWarning, match="does not match num_features"):
        nn.InstanceNorm1d(4)(cgrad.randn(2, 3, 5))
    # a pre-0.4 checkpoint with running stats for a module without them is reported
    sd = {"running_mean": cgrad.zeros(3), "running_var": cgrad.ones(3)}

    class _SD(dict):
        pass

    sd = _SD(sd)
    sd._metadata = {"": {}}
    with pytest.raises(RuntimeError, match="Unexpected running stats buffer"):
        nn.InstanceNorm1d(3).load_state_dict(sd)


# ---------------------------------------------------------------- dropout

DROPOUTS = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]
_SHAPES = {"Dropout": (4, 5), "Dropout1d": (4, 6, 3), "Dropout2d": (4, 6, 3, 2), "Dropout3d": (4, 6, 2, 2, 2),
           "AlphaDropout": (4, 5), "FeatureAlphaDropout": (4, 6, 3)}


@pytest.mark.parametrize("name", DROPOUTS)
def test_dropout_deterministic_cases_vs_torch(name):
    shape = _SHAPES[name]
    compare_module(lambda lib: getattr(lib.nn, name)(0.3), [shape], train=(False,))  # eval: identity
    compare_module(lambda lib: getattr(lib.nn, name)(0.0), [shape])                 # p = 0
    compare_module(lambda lib: getattr(lib.nn, name)(1.0), [shape])                 # p = 1
    for make in (lambda lib: getattr(lib.nn, name)(), lambda lib: getattr(lib.nn, name)(0.2, inplace=True)):
        _same_repr(make)
        _same_state_keys(make)
        m = make(cgrad)
        assert m.p == make(torch).p and m.inplace == make(torch).inplace


@pytest.mark.parametrize("name", ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d"])
def test_dropout_train_statistics(name):
    shape = {"Dropout": (400, 50), "Dropout1d": (64, 16, 8), "Dropout2d": (64, 16, 4, 4),
             "Dropout3d": (64, 16, 2, 2, 2)}[name]
    m = getattr(nn, name)(0.25)
    x = cgrad.ones(shape, requires_grad=True)
    y = m(x)
    a = y.detach().numpy()
    assert np.all((a == 0) | np.isclose(a, 1 / 0.75))
    assert abs((a == 0).mean() - 0.25) < 0.05
    if name != "Dropout":  # whole channels are dropped together
        flat = a.reshape(a.shape[0], a.shape[1], -1)
        assert np.all(flat.min(axis=2) == flat.max(axis=2))
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), a)  # the gradient is the mask times the scale
    np.testing.assert_array_equal(m.eval()(x).detach().numpy(), x.detach().numpy())


def test_dropout_inplace():
    x = cgrad.ones(100, 10)
    y = nn.Dropout(0.5, inplace=True)(x)
    assert y is x or np.shares_memory(y.numpy(), x.numpy())
    assert (x.numpy() == 0).any()


@pytest.mark.parametrize("name", ["AlphaDropout", "FeatureAlphaDropout"])
def test_alpha_dropout_keeps_moments(name):
    rng = np.random.default_rng(0)
    shape = (20000, 5) if name == "AlphaDropout" else (4000, 50, 1)
    x = cgrad.tensor(rng.standard_normal(shape))
    y = getattr(nn, name)(0.2)(x).numpy()
    assert abs(y.mean()) < 0.05 and abs(y.std() - 1.0) < 0.05


@pytest.mark.parametrize("name", DROPOUTS)
def test_dropout_errors(name):
    for p in (-0.1, 1.5):
        with pytest.raises(ValueError, match=f"dropout probability has to be between 0 and 1, but got {p}"):
            getattr(nn, name)(p)
    with pytest.raises(ValueError, match="dropout probability"):
        getattr(torch.nn, name)(-0.1)


def test_dropout1d_bad_rank():
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input"):
        nn.Dropout1d()(cgrad.randn(2, 3, 4, 5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert nn.Dropout2d().eval()(cgrad.randn(2, 3)).shape == (2, 3)


def test_exports():
    import cgrad.nn.modules as mods
    for name in DROPOUTS + ["LayerNorm", "GroupNorm", "RMSNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
                            "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]:
        assert getattr(nn, name) is getattr(mods, name)
        assert name in mods.__all__
        assert issubclass(getattr(nn, name), nn.Module)
