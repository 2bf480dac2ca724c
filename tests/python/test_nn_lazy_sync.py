"""The lazy conv / norm modules, SyncBatchNorm, NLLLoss2d, LinearCrossEntropyLoss and Container against
torch: repr and state_dict keys before and after the first call, the switch to the plain class, outputs and
gradients (parameters copied from torch), buffers, errors and deprecation warnings.

The classes are not exported from cgrad.nn yet, so they are taken from their module files."""
from __future__ import annotations

import copy
import re
import warnings
from typing import Any, Callable, Dict, List, Tuple

import numpy as np
import pytest
import torch

import cgrad
from cgrad.nn.modules import batchnorm as c_batchnorm
from cgrad.nn.modules import container as c_container
from cgrad.nn.modules import conv as c_conv
from cgrad.nn.modules import instancenorm as c_instancenorm
from cgrad.nn.modules import loss as c_loss
from nn_compare import compare_module, copy_state, to_numpy

_CGRAD_FILES = (c_conv, c_batchnorm, c_instancenorm, c_loss, c_container)


def cls(lib: Any, name: str) -> Any:
    """The class `name` of torch.nn, or of the cgrad file that defines it."""
    if lib is torch:
        return getattr(torch.nn, name)
    for mod in _CGRAD_FILES:
        if name in getattr(mod, "__all__", ()):
            return getattr(mod, name)
    return getattr(cgrad.nn, name)


def _keys(m: Any) -> List[str]:
    return list(m.state_dict().keys())


def _lazy_pair(name: str, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Tuple[Any, Any]:
    tm = cls(torch, name)(*args, dtype=torch.float64, **kwargs)
    cm = cls(cgrad, name)(*args, dtype=cgrad.float64, **kwargs)
    return tm, cm


def _check_lazy(name: str, plain: str, args: Tuple[Any, ...], kwargs: Dict[str, Any], shape: Tuple[int, ...],
                train: Tuple[bool, ...] = (True, False), atol: float = 1e-6) -> None:
    tm, cm = _lazy_pair(name, args, kwargs)
    assert type(cm).__name__ == name
    assert repr(cm) == repr(tm)
    assert _keys(cm) == _keys(tm)
    assert cm.has_uninitialized_params() == tm.has_uninitialized_params()
    for key, value in tm.state_dict().items():
        assert repr(cm.state_dict()[key]) == repr(value), key
    x = np.random.default_rng(3).standard_normal(shape)
    tm.train(True)
    cm.train(True)
    with torch.no_grad():
        tout = tm(torch.tensor(x))
    cout = cm(cgrad.tensor(x))
    assert tuple(cout.shape) == tuple(tout.shape)
    assert type(tm).__name__ == plain and type(cm) is cls(cgrad, plain)
    assert not hasattr(cm, "has_uninitialized_params") and not hasattr(tm, "has_uninitialized_params")
    assert not hasattr(cm, "_initialize_hook") and not hasattr(cm, "_load_hook")
    assert repr(cm) == repr(tm)
    assert _keys(cm) == _keys(tm)
    for key, value in tm.state_dict().items():
        got = cm.state_dict()[key]
        assert tuple(got.shape) == tuple(value.shape), key
        assert str(got.dtype).split(".")[-1] == str(value.dtype).split(".")[-1], key
    for key, value in tm.named_buffers():  # the first call's running stats come from the same batch
        np.testing.assert_allclose(to_numpy(dict(cm.named_buffers())[key]), to_numpy(value), atol=atol,
                                   err_msg=key)
    for key, value in tm.named_parameters():
        assert type(dict(cm.named_parameters())[key]).__name__ == type(value).__name__ == "Parameter"
    copy_state(tm, cm)
    compare_module(lambda lib: tm if lib is torch else cm, [shape], train=train, atol=atol)


_CONVS = [
    ("LazyConv1d", "Conv1d", (4, 3), {}, (2, 3, 9)),
    ("LazyConv1d", "Conv1d", (4, 3), {"padding": "same", "padding_mode": "reflect", "bias": False}, (3, 7)),
    ("LazyConv2d", "Conv2d", (6, (3, 2)), {"stride": 2, "groups": 2, "dilation": (1, 2)}, (2, 4, 7, 8)),
    ("LazyConv2d", "Conv2d", (4, 3), {"padding": 1, "padding_mode": "circular"}, (3, 5, 5)),
    ("LazyConv3d", "Conv3d", (2, 2), {"padding": 1}, (1, 3, 3, 4, 3)),
    ("LazyConvTranspose1d", "ConvTranspose1d", (4, 3), {"stride": 2, "output_padding": 1}, (2, 3, 5)),
    ("LazyConvTranspose2d", "ConvTranspose2d", (4, 3), {"groups": 2, "bias": False, "dilation": 2}, (2, 4, 4, 3)),
    ("LazyConvTranspose2d", "ConvTranspose2d", (2, 2), {}, (3, 4, 4)),
    ("LazyConvTranspose3d", "ConvTranspose3d", (2, 2), {"stride": (1, 2, 1), "padding": 1}, (1, 2, 3, 3, 3)),
]


@pytest.mark.parametrize("name,plain,args,kwargs,shape", _CONVS)
def test_lazy_conv(name: str, plain: str, args: Tuple[Any, ...], kwargs: Dict[str, Any],
                   shape: Tuple[int, ...]) -> None:
    _check_lazy(name, plain, args, kwargs, shape, train=(True,))


_NORMS = [
    ("LazyBatchNorm1d", "BatchNorm1d", {}, (5, 3)),
    ("LazyBatchNorm1d", "BatchNorm1d", {"momentum": None, "bias": False}, (4, 3, 6)),
    ("LazyBatchNorm2d", "BatchNorm2d", {"eps": 1e-3}, (3, 4, 3, 2)),
    ("LazyBatchNorm2d", "BatchNorm2d", {"affine": False}, (3, 2, 3, 3)),
    ("LazyBatchNorm3d", "BatchNorm3d", {"track_running_stats": False}, (2, 3, 2, 3, 2)),
    ("LazyInstanceNorm1d", "InstanceNorm1d", {}, (2, 3, 6)),
    ("LazyInstanceNorm1d", "InstanceNorm1d", {"affine": False, "track_running_stats": False}, (2, 3, 6)),
    ("LazyInstanceNorm2d", "InstanceNorm2d", {"momentum": 0.3}, (2, 3, 4, 3)),
    ("LazyInstanceNorm3d", "InstanceNorm3d", {"bias": False}, (2, 2, 3, 2, 3)),
]


@pytest.mark.filterwarnings("ignore:input's size at dim=1 does not match num_features")
@pytest.mark.parametrize("name,plain,kwargs,shape", _NORMS)
def test_lazy_norm(name: str, plain: str, kwargs: Dict[str, Any], shape: Tuple[int, ...]) -> None:
    _check_lazy(name, plain, (), kwargs, shape)


def test_lazy_norm_without_lazy_state() -> None:
    """Nothing to infer (affine=False, no running stats): num_features stays 0, as in torch."""
    tm, cm = _lazy_pair("LazyBatchNorm1d", (), {"affine": False, "track_running_stats": False})
    assert _keys(cm) == _keys(tm) == []
    x = np.random.default_rng(0).standard_normal((4, 3))
    tout, cout = tm(torch.tensor(x)), cm(cgrad.tensor(x))
    np.testing.assert_allclose(to_numpy(cout), to_numpy(tout), atol=1e-6)
    assert repr(cm) == repr(tm) and type(cm).__name__ == "BatchNorm1d"


def test_lazy_instance_norm_unbatched_infers_size_1() -> None:
    """torch infers num_features from input.size(1) even for unbatched input: an affine layer then rejects it."""
    x = np.random.default_rng(0).standard_normal((3, 5))
    errors = []
    for lib in (torch, cgrad):
        m = cls(lib, "LazyInstanceNorm1d")()
        with pytest.raises(ValueError) as info:
            m(lib.tensor(x))
        errors.append(str(info.value))
        assert m.num_features == 5
    assert errors[0] == errors[1]


def test_lazy_errors() -> None:
    for lib in (torch, cgrad):
        m = cls(lib, "LazyConv2d")(4, 3, groups=2)
        with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
            m(lib.randn(1, 3, 5, 5))
        m = cls(lib, "LazyConvTranspose1d")(4, 3)
        with pytest.raises(RuntimeError, match=re.escape("Expected 2D (unbatched) or 3D (batched) input to "
                                                         "LazyConvTranspose1d, but got input of size: ")):
            m(lib.randn(5))
        with pytest.raises(ValueError, match=re.escape("expected 4D input (got 3D input)")):
            cls(lib, "LazyBatchNorm2d")()(lib.randn(2, 3, 4))
        with pytest.raises(ValueError, match=re.escape("expected 3D or 4D input (got 2D input)")):
            cls(lib, "LazyInstanceNorm2d")()(lib.randn(2, 3))
        with pytest.raises(ValueError, match="Only \"zeros\" padding mode is supported for LazyConvTranspose2d"):
            cls(lib, "LazyConvTranspose2d")(4, 3, padding_mode="reflect")
        with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
            cls(lib, "LazyConv1d")(4, 3).weight.shape


def test_lazy_load_state_dict_and_deepcopy() -> None:
    """Loading a plain module's state materializes the parameters (in_channels stays 0, as torch); a deep copy
    stays lazy."""
    src_t = torch.nn.Conv2d(3, 4, 3)
    src_c = cgrad.nn.Conv2d(3, 4, 3)
    copy_state(src_t, src_c)
    x = np.random.default_rng(1).standard_normal((1, 3, 5, 5)).astype("float32")
    tm, cm = cls(torch, "LazyConv2d")(4, 3), cls(cgrad, "LazyConv2d")(4, 3)
    tm.load_state_dict(src_t.state_dict())
    cm.load_state_dict(src_c.state_dict())
    assert type(cm).__name__ == "LazyConv2d" and not cm.has_uninitialized_params()
    np.testing.assert_allclose(to_numpy(cm(cgrad.tensor(x))), to_numpy(tm(torch.tensor(x))), atol=1e-5)
    assert repr(cm) == repr(tm) and type(cm).__name__ == "Conv2d"
    for lib in (torch, cgrad):
        bn = cls(lib, "LazyBatchNorm1d")()
        bn.load_state_dict(lib.nn.BatchNorm1d(3).state_dict())
        assert tuple(bn.running_mean.shape) == (3,)
        twin = copy.deepcopy(cls(lib, "LazyConv1d")(2, 3))
        assert type(twin.weight).__name__ == "UninitializedParameter"
        twin(lib.randn(1, 2, 6))
        assert repr(twin) == "Conv1d(2, 2, kernel_size=(3,), stride=(1,))"


# ---------------------------------------------------------------------- SyncBatchNorm

@pytest.mark.parametrize("kwargs,shape", [({}, (4, 3)), ({"momentum": None}, (3, 3, 5)),
                                          ({"affine": False, "eps": 1e-3}, (2, 3, 2, 3)),
                                          ({"track_running_stats": False, "bias": False}, (2, 3, 2, 2, 2))])
def test_sync_batchnorm_matches_torch(kwargs: Dict[str, Any], shape: Tuple[int, ...]) -> None:
    """Without an initialized process group torch runs SyncBatchNorm on CPU as a batch norm, train and eval."""
    tm, cm = compare_module(lambda lib: cls(lib, "SyncBatchNorm")(3, **kwargs), [shape], train=(True, True, False))
    assert repr(cm) == repr(tm)
    assert _keys(cm) == _keys(tm)
    assert cm.process_group is None


def test_sync_batchnorm_constructor_and_errors() -> None:
    group = object()
    for lib in (torch, cgrad):
        m = cls(lib, "SyncBatchNorm")(3, 1e-4, 0.2, True, True, group)
        assert m.process_group is group and m.eps == 1e-4 and m.momentum == 0.2
        with pytest.raises(ValueError, match=re.escape("expected at least 2D input (got 1D input)")):
            m(lib.randn(3))
        with pytest.raises(ValueError, match="SyncBatchNorm number of input channels should be non-zero"):
            m(lib.randn(2, 0, 3))
    assert repr(cls(cgrad, "SyncBatchNorm")(5, affine=False)) == repr(torch.nn.SyncBatchNorm(5, affine=False))


def _bn_net(lib: Any) -> Any:
    net = lib.nn.Sequential(lib.nn.Linear(2, 3, bias=False), lib.nn.BatchNorm1d(3),
                            lib.nn.Sequential(lib.nn.BatchNorm2d(3, affine=False, momentum=None)),
                            lib.nn.InstanceNorm1d(3))
    net[2].eval()
    net[1].qconfig = "q"
    return net


def test_convert_sync_batchnorm() -> None:
    group = object()
    tnet, cnet = _bn_net(torch), _bn_net(cgrad)
    bn1, bn2 = cnet[1], cnet[2][0]
    tout = torch.nn.SyncBatchNorm.convert_sync_batchnorm(tnet, group)
    cout = cls(cgrad, "SyncBatchNorm").convert_sync_batchnorm(cnet, group)
    assert cout is cnet and repr(cout) == repr(tout)
    assert _keys(cout) == _keys(tout)
    new1, new2 = cout[1], cout[2][0]
    assert type(new1).__name__ == "SyncBatchNorm" and new1.process_group is group
    assert new1.weight is bn1.weight and new1.bias is bn1.bias and new1.running_mean is bn1.running_mean
    assert new1.num_batches_tracked is bn1.num_batches_tracked and new1.qconfig == "q"
    assert new2.training is False and new2.momentum is None and new2.running_var is bn2.running_var
    assert type(cout[3]).__name__ == "InstanceNorm1d"
    single = cls(cgrad, "SyncBatchNorm").convert_sync_batchnorm(cgrad.nn.BatchNorm3d(4, bias=False))
    assert repr(single) == repr(torch.nn.SyncBatchNorm.convert_sync_batchnorm(torch.nn.BatchNorm3d(4, bias=False)))


# ---------------------------------------------------------------------- losses

def _warns_like_torch(make: Callable[[Any], Any]) -> List[Any]:
    """Run make(torch) and make(cgrad), checking both raise the same FutureWarning; their results."""
    out, messages = [], []
    for lib in (torch, cgrad):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out.append(make(lib))
        future = [w for w in caught if issubclass(w.category, FutureWarning)]
        assert len(future) == 1, [str(w.message) for w in caught]
        assert future[0].filename == __file__
        messages.append(str(future[0].message))
    assert messages[0] == messages[1]
    return out


def test_nll_loss_2d() -> None:
    weight = np.array([0.5, 1.0, 2.0])
    tm, cm = _warns_like_torch(lambda lib: cls(lib, "NLLLoss2d")(lib.tensor(weight), ignore_index=1,
                                                                reduction="sum"))
    assert isinstance(cm, cgrad.nn.NLLLoss) and repr(cm) == repr(tm) and _keys(cm) == _keys(tm)
    logp = np.log(np.random.default_rng(0).dirichlet(np.ones(3), size=(2, 4, 3)))
    logp = np.ascontiguousarray(logp.transpose(0, 3, 1, 2))  # torch's nll_loss2d backward wants it contiguous
    target = np.random.default_rng(1).integers(0, 3, (2, 4, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the deprecations of NLLLoss2d and size_average
        compare_module(lambda lib: cls(lib, "NLLLoss2d")(lib.tensor(weight)), [logp, target], train=(True,))
        compare_module(lambda lib: cls(lib, "NLLLoss2d")(size_average=False), [logp, target], train=(True,))
    _warns_like_torch(lambda lib: type("Sub", (cls(lib, "NLLLoss2d"),), {}))


_LCE = [
    ((5, 7), {}, (4, 5), "index"),
    ((5, 7), {"bias": True, "reduction": "sum", "ignore_index": 2}, (6, 5), "index"),
    ((4, 6), {"out_features": (3, 2), "bias": True, "label_smoothing": 0.2}, (2, 4), "index"),
    ((4, 6), {"out_features": (2,), "reduction": "none"}, (3, 4), "probs"),
    ((5, 7), {"weight": True, "reduction": "mean"}, (5,), "index"),
]


@pytest.mark.parametrize("args,kwargs,shape,kind", _LCE)
def test_linear_cross_entropy_loss(args: Tuple[int, int], kwargs: Dict[str, Any], shape: Tuple[int, ...],
                                   kind: str) -> None:
    in_features, classes = args
    rng = np.random.default_rng(5)
    batch = shape[:-1]
    out_features = tuple(kwargs.get("out_features", ()))
    if kind == "index":
        target = rng.integers(0, classes, batch + out_features)
    else:
        target = rng.dirichlet(np.ones(classes), size=batch + out_features)
        target = np.moveaxis(target, -1, len(batch))
    class_weight = rng.uniform(0.5, 2.0, classes)

    def make(lib: Any) -> Any:
        opts = dict(kwargs)
        if opts.pop("weight", False):
            opts["weight"] = lib.tensor(class_weight)
        return cls(lib, "LinearCrossEntropyLoss")(*args, **opts)

    tm, cm = compare_module(make, [shape, target], train=(True,))
    assert repr(cm) == repr(tm)
    assert _keys(cm) == _keys(tm)
    assert tuple(cm.linear.weight.shape) == tuple(tm.linear.weight.shape)
    assert cm.out_features == tm.out_features and cm.ignore_index == tm.ignore_index


def test_linear_cross_entropy_loss_errors() -> None:
    for lib in (torch, cgrad):
        klass = cls(lib, "LinearCrossEntropyLoss")
        with pytest.raises(RuntimeError, match=re.escape("expected weight shape to be (4,), got (3,)")):
            klass(2, 4, weight=lib.ones(3))
        with pytest.raises(RuntimeError, match=re.escape("expected label_smoothing to be in range [0, 1], got 1.5")):
            klass(2, 4, label_smoothing=1.5)
        with pytest.raises(TypeError):
            klass(2, 4, (3,))


# ---------------------------------------------------------------------- Container

def test_container() -> None:
    tm, cm = _warns_like_torch(lambda lib: cls(lib, "Container")(a=lib.nn.Linear(2, 3), b=lib.nn.ReLU()))
    assert repr(cm) == repr(tm)
    assert _keys(cm) == _keys(tm)
    assert isinstance(cm, cgrad.nn.Module) and list(dict(cm.named_children())) == ["a", "b"]
    assert cls(cgrad, "Container").__deprecated__ == torch.nn.Container.__deprecated__
    subs = _warns_like_torch(lambda lib: type("Sub", (cls(lib, "Container"),), {}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        made = subs[1](c=cgrad.nn.Tanh())  # instances of a subclass do not warn
    assert repr(made) == repr(subs[0](c=torch.nn.Tanh()))
