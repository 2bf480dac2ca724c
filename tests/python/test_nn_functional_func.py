"""cgrad.nn.functional (activations, losses, distances, padding, resampling,
attention) against torch.nn.functional: values and gradients with respect to
every float input over a grid of options, 0-d / empty / non-contiguous inputs,
float64 gradcheck + gradgradcheck of cgrad's own autograd on small cases, and
errors (exception types as torch's, messages naming the op)."""
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


def arr(shape, lo=-2.0, hi=2.0, dtype="float64"):
    return RNG.uniform(lo, hi, size=shape).astype(dtype)


def ints(shape, hi, lo=0):
    return RNG.integers(lo, hi, size=shape).astype("int64")


def _to(lib, a, noncontig, grad):
    if not isinstance(a, np.ndarray):
        return a
    if noncontig and a.ndim >= 1 and a.size:
        big = np.repeat(a, 2, axis=-1)
        t = (cgrad.from_numpy(big) if lib is cgrad else torch.from_numpy(big))[..., ::2]
        if grad and a.dtype.kind == "f":
            t = t.detach().requires_grad_(True)  # a non-contiguous leaf
        return t
    t = cgrad.from_numpy(a.copy()) if lib is cgrad else torch.from_numpy(a.copy())
    if grad and a.dtype.kind == "f":
        t.requires_grad_(True)
    return t


def _outs(o):
    return list(o) if isinstance(o, (tuple, list)) else [o]


def check(name, *args, grad=True, noncontig=False, atol=1e-6, rtol=1e-5, torch_name=None, grad_kw=(), grad_args=None,
          **kw):
    """F.<name>(*args, **kw) vs torch: values, then grads of every float
    positional input and of the tensor kwargs named in grad_kw (torch refuses
    grads for loss weights) under a random cotangent."""
    kw_arrays = {k: v for k, v in kw.items() if isinstance(v, np.ndarray)}
    ga = [grad and (grad_args is None or i in grad_args) for i in range(len(args))]
    ca = [_to(cgrad, a, noncontig, g) for a, g in zip(args, ga)]
    ta = [_to(torch, a, noncontig, g) for a, g in zip(args, ga)]
    ckw = dict(kw, **{k: _to(cgrad, v, False, grad and k in grad_kw) for k, v in kw_arrays.items()})
    tkw = dict(kw, **{k: _to(torch, v, False, grad and k in grad_kw) for k, v in kw_arrays.items()})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        oc = getattr(F, name)(*ca, **ckw)
        ot = getattr(TF, torch_name or name)(*ta, **tkw)
    what = f"{name}{tuple(getattr(a, 'shape', a) for a in args)} {kw}"
    for c, t in zip(_outs(oc), _outs(ot)):
        assert str(c.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], f"{what}: dtype {c.dtype} vs {t.dtype}"
        assert tuple(c.shape) == tuple(t.shape), f"{what}: shape {tuple(c.shape)} vs {tuple(t.shape)}"
        np.testing.assert_allclose(to_numpy(c), to_numpy(t), atol=atol, rtol=rtol, equal_nan=True, err_msg=what)
    if not grad or not any(getattr(t, "requires_grad", False) for t in _outs(ot)):
        return oc
    cot = [arr(tuple(t.shape), dtype=str(t.dtype).split(".")[-1]) for t in _outs(ot)]
    sc = sum((c * cgrad.from_numpy(g)).sum() for c, g in zip(_outs(oc), cot))
    st = sum((t * torch.from_numpy(g)).sum() for t, g in zip(_outs(ot), cot))
    sc.backward()
    st.backward()
    pairs = list(zip(ca, ta)) + [(ckw[k], tkw[k]) for k in kw_arrays]
    for i, (c, t) in enumerate(pairs):
        if isinstance(t, torch.Tensor) and t.requires_grad:
            if t.grad is None:
                assert c.grad is None or not np.any(to_numpy(c.grad)), f"{what}: grad {i} should be zero"
                continue
            assert c.grad is not None, f"{what}: missing grad {i}"
            np.testing.assert_allclose(to_numpy(c.grad), t.grad.numpy(), atol=atol * 10, rtol=rtol * 10,
                                       err_msg=f"{what}: grad {i}")
    return oc


def gradcheck(fn, *arrays, gradgrad=True):
    """float64 central differences of cgrad's autograd (first and second order)."""
    arrays = list(arrays)
    diff = [i for i, a in enumerate(arrays) if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
    numeric_check(cgrad, fn, arrays, diff, create_graph=False)
    if gradgrad:
        numeric_check(cgrad, fn, arrays, diff, create_graph=True)


def same_error(fn, op=None):
    """fn(lib, F) raises in torch and in cgrad; cgrad's exception is an
    instance of torch's type and its message names the op."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as te:
            fn(torch, TF)
        with pytest.raises(Exception) as ce:
            fn(cgrad, F)
    assert isinstance(ce.value, type(te.value)), f"cgrad raised {type(ce.value).__mro__}, torch {type(te.value)}"
    if op:
        assert op in str(ce.value), f"message {ce.value!r} does not name {op}"


# ---------------------------------------------------------------- activations

ACTS = [("relu", {}), ("relu6", {}), ("leaky_relu", dict(negative_slope=0.2)), ("elu", dict(alpha=0.5)), ("selu", {}),
        ("celu", dict(alpha=0.7)), ("gelu", {}), ("gelu", dict(approximate="tanh")), ("silu", {}), ("mish", {}),
        ("softplus", dict(beta=2.0, threshold=1.0)), ("softplus", {}), ("softsign", {}), ("tanh", {}), ("sigmoid", {}),
        ("hardtanh", dict(min_val=-0.5, max_val=0.7)), ("hardsigmoid", {}), ("hardswish", {}), ("logsigmoid", {}),
        ("tanhshrink", {}), ("softshrink", dict(lambd=0.3)), ("hardshrink", dict(lambd=0.3)),
        ("threshold", dict(threshold=0.1, value=20.0))]


@pytest.mark.parametrize("name,kw", ACTS, ids=[f"{n}-{k}" for n, k in ACTS])
def test_activations(name, kw):
    x = arr((3, 4), -4, 4)
    check(name, x, **kw)
    check(name, x, noncontig=True, **kw)
    check(name, arr(()), **kw)
    check(name, arr((0, 3)), **kw)
    check(name, arr((2, 3, 4), dtype="float32"), atol=1e-5, **kw)


INPLACE = [("relu", {}), ("relu6", {}), ("leaky_relu", dict(negative_slope=0.2)), ("elu", dict(alpha=0.5)),
           ("selu", {}), ("celu", dict(alpha=0.7)), ("silu", {}), ("mish", {}), ("hardtanh", dict(min_val=-0.5)),
           ("hardsigmoid", {}), ("hardswish", {}), ("threshold", dict(threshold=0.1, value=20.0))]


@pytest.mark.parametrize("name,kw", INPLACE, ids=[n for n, _ in INPLACE])
def test_inplace_activations(name, kw):
    x = arr((3, 4), -3, 3)
    ref = getattr(TF, name)(torch.from_numpy(x.copy()), **kw)
    c = cgrad.from_numpy(x.copy())
    r = getattr(F, name)(c, inplace=True, **kw)
    assert r is c
    np.testing.assert_allclose(to_numpy(c), ref.numpy(), rtol=1e-6, atol=1e-7)
    under = {"relu": "relu_", "leaky_relu": "leaky_relu_", "elu": "elu_", "selu": "selu_", "celu": "celu_",
             "hardtanh": "hardtanh_", "threshold": "threshold_"}
    if name in under:  # the F.<name>_ forms
        c = cgrad.from_numpy(x.copy())
        assert getattr(F, under[name])(c, **kw) is c
        np.testing.assert_allclose(to_numpy(c), ref.numpy(), rtol=1e-6, atol=1e-7)
    # in place on a non-leaf keeps the graph
    xs = cgrad.from_numpy(x.copy()).requires_grad_(True)
    xt = torch.from_numpy(x.copy()).requires_grad_(True)
    getattr(F, name)(xs * 2, inplace=True, **kw).sum().backward()
    getattr(TF, name)(xt * 2, inplace=True, **kw).sum().backward()
    np.testing.assert_allclose(to_numpy(xs.grad), xt.grad.numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
def test_softmax_family(name):
    for shape, dim in [((3, 4), 1), ((3, 4), 0), ((2, 3, 4), -1), ((5,), 0), ((), 0), ((0, 3), 1)]:
        check(name, arr(shape), dim=dim)
    check(name, arr((3, 4)), noncontig=True, dim=1)
    # dtype= converts first (float32 in, float64 out)
    x = arr((3, 4), dtype="float32")
    c = getattr(F, name)(cgrad.from_numpy(x), dim=1, dtype=cgrad.float64)
    t = getattr(TF, name)(torch.from_numpy(x), dim=1, dtype=torch.float64)
    assert c.dtype == cgrad.float64
    np.testing.assert_allclose(to_numpy(c), t.numpy(), rtol=1e-6)
    # dim=None: PyTorch's legacy rule (0 for 0-d, 1-d and 3-d inputs, else 1), with a warning
    for shape in [(), (5,), (3, 4), (2, 3, 4), (2, 3, 4, 2)]:
        x = arr(shape)
        with pytest.warns(UserWarning, match="Implicit dimension"):
            c = getattr(F, name)(cgrad.from_numpy(x))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = getattr(TF, name)(torch.from_numpy(x))
        np.testing.assert_allclose(to_numpy(c), t.numpy(), rtol=1e-6)


def test_prelu_glu_normalize():
    check("prelu", arr((3, 4)), arr((4,)))
    check("prelu", arr((2, 3, 4)), arr((1,)))
    check("prelu", arr((2, 3, 4, 2)), arr((3,)), noncontig=True)
    check("prelu", arr((5,)), arr((1,)))
    check("prelu", arr(()), arr((1,)))
    for shape, dim in [((3, 4), -1), ((4, 3), 0), ((2, 4, 3), 1), ((0, 4), 1)]:
        check("glu", arr(shape), dim=dim)
    check("glu", arr((3, 4)), noncontig=True)
    for p, dim in [(2.0, 1), (1.0, 0), (3.0, -1), (2.0, 0)]:
        check("normalize", arr((3, 4)), p=p, dim=dim)
    check("normalize", arr((2, 3, 4)), noncontig=True)
    check("normalize", np.zeros((2, 3)), grad=False)
    out = cgrad.empty(3, 4, dtype=cgrad.float64)
    x = arr((3, 4))
    assert F.normalize(cgrad.from_numpy(x), out=out) is out
    np.testing.assert_allclose(to_numpy(out), TF.normalize(torch.from_numpy(x)).numpy(), rtol=1e-7)


def test_activation_gradcheck():
    x = arr((2, 3))
    for name, kw in [("gelu", dict(approximate="tanh")), ("softplus", dict(beta=2.0)), ("mish", {}), ("elu", {}),
                     ("softshrink", {}), ("tanhshrink", {}), ("logsigmoid", {})]:
        gradcheck(lambda t: getattr(F, name)(t, **kw), x)
    gradcheck(lambda t, w: F.prelu(t, w), arr((2, 3)), arr((3,)))
    gradcheck(lambda t: F.glu(t, 0), arr((4, 2)))
    gradcheck(lambda t: F.normalize(t, dim=0), arr((3, 2)))
    gradcheck(lambda t: F.softmin(t, 1), arr((2, 3)))


def test_activation_errors():
    same_error(lambda lib, f: f.glu(lib.zeros(3, 5)), "glu")
    same_error(lambda lib, f: f.glu(lib.tensor(1.0)), "glu")
    same_error(lambda lib, f: f.softshrink(lib.zeros(3), -1.0), "softshrink")
    same_error(lambda lib, f: f.prelu(lib.zeros(2, 3), lib.ones(2)), "prelu")
    same_error(lambda lib, f: f.gelu(lib.zeros(3), approximate="foo"), "gelu")
    same_error(lambda lib, f: f.relu([1.0]))


# ---------------------------------------------------------------- class losses

def _probs(shape, cdim=1):
    p = np.exp(arr(shape))
    return p / p.sum(axis=cdim, keepdims=True)


def _targets(shape, C, ignore=None):
    t = ints(shape, C)
    if ignore is not None and t.size:
        t.reshape(-1)[::3] = ignore
    return t


CE_CASES = [((4, 5), (4,)), ((5,), ()), ((2, 5, 3, 2), (2, 3, 2)), ((0, 5), (0,)), ((3, 4, 2), (3, 2))]


@pytest.mark.parametrize("red", ["mean", "sum", "none"])
@pytest.mark.parametrize("ls", [0.0, 0.25])
def test_cross_entropy(red, ls):
    for xs, ts in CE_CASES:
        C = xs[1] if len(xs) >= 2 else xs[0]
        x = arr(xs)
        check("cross_entropy", x, _targets(ts, C), reduction=red, label_smoothing=ls)
        check("cross_entropy", x, _targets(ts, C, ignore=-100), reduction=red, label_smoothing=ls)
        check("cross_entropy", x, _targets(ts, C, ignore=1), weight=arr((C,), 0.2, 2), ignore_index=1, reduction=red,
              label_smoothing=ls)
        cdim = 1 if len(xs) >= 2 else 0
        check("cross_entropy", x, _probs(xs, cdim), reduction=red, label_smoothing=ls)
        check("cross_entropy", x, _probs(xs, cdim), weight=arr((C,), 0.2, 2), reduction=red, label_smoothing=ls)
    check("cross_entropy", arr((4, 5)), _targets((4,), 5), noncontig=True, reduction=red, label_smoothing=ls)
    check("cross_entropy", arr((4, 5), dtype="float32"), _targets((4,), 5), reduction=red, label_smoothing=ls,
          atol=1e-5)


@pytest.mark.parametrize("red", ["mean", "sum", "none"])
def test_nll_loss(red):
    for xs, ts in CE_CASES:
        C = xs[1] if len(xs) >= 2 else xs[0]
        lp = np.log(_probs(xs, 1 if len(xs) >= 2 else 0))
        check("nll_loss", lp, _targets(ts, C), reduction=red)
        check("nll_loss", lp, _targets(ts, C, ignore=2), weight=arr((C,), 0.2, 2), ignore_index=2, reduction=red)
    check("nll_loss", arr((4, 5)), _targets((4,), 5), noncontig=True, reduction=red)


def test_class_losses_legacy_and_uint8():
    x, t = arr((4, 5)), _targets((4,), 5)
    for sa, rd in [(False, None), (None, False), (True, True), (False, True)]:
        check("cross_entropy", x, t, size_average=sa, reduce=rd)
        check("nll_loss", x, t, size_average=sa, reduce=rd)
    with pytest.warns(UserWarning, match="size_average and reduce"):
        F.cross_entropy(cgrad.from_numpy(x), cgrad.from_numpy(t), size_average=False)
    check("cross_entropy", x, t.astype("uint8"))


def test_class_loss_gradcheck():
    t = np.array([0, 2, 1])
    w = np.array([0.5, 1.0, 2.0, 1.5])
    x = arr((3, 4))
    gradcheck(lambda a, wt: F.cross_entropy(a, cgrad.from_numpy(t), weight=wt, label_smoothing=0.2), x, w)
    gradcheck(lambda a: F.cross_entropy(a, cgrad.from_numpy(np.array([0, -100, 3])), reduction="sum"), x)
    gradcheck(lambda a, p: F.cross_entropy(a, p, label_smoothing=0.1), x, _probs((3, 4)))
    gradcheck(lambda a: F.nll_loss(a, cgrad.from_numpy(t), weight=cgrad.from_numpy(w)), x)


def test_class_loss_errors():
    same_error(lambda lib, f: f.cross_entropy(lib.zeros(3, 5), lib.tensor([1, 2, 7])), "cross_entropy")
    same_error(lambda lib, f: f.cross_entropy(lib.zeros(3, 5), lib.tensor([1, 2, -3])), "cross_entropy")
    same_error(lambda lib, f: f.nll_loss(lib.zeros(3, 5), lib.tensor([1, 2, 5])), "nll_loss")
    same_error(lambda lib, f: f.cross_entropy(lib.zeros(3, 5), lib.tensor([1, 2])), "cross_entropy")
    same_error(lambda lib, f: f.cross_entropy(lib.zeros(3, 5), lib.tensor([1, 2, 3], dtype=lib.int32)), "cross_entropy")
    same_error(lambda lib, f: f.cross_entropy(lib.zeros(3, 5), lib.tensor([1, 2, 3]), weight=lib.ones(4)),
               "cross_entropy")
    same_error(lambda lib, f: f.cross_entropy(lib.zeros(3, 5), lib.tensor([1, 2, 3]), label_smoothing=1.5),
               "cross_entropy")
    same_error(lambda lib, f: f.cross_entropy(lib.zeros(3, 5), lib.tensor([1, 2, 3]), reduction="foo"), "foo")
    same_error(lambda lib, f: f.cross_entropy(lib.zeros(3, 5, 2), lib.zeros(3, 3, dtype=lib.int64)), "cross_entropy")


# ---------------------------------------------------------------- pointwise losses

PW = [("mse_loss", {}), ("l1_loss", {}), ("smooth_l1_loss", {}), ("smooth_l1_loss", dict(beta=0.5)),
      ("smooth_l1_loss", dict(beta=0.0)), ("huber_loss", {}), ("huber_loss", dict(delta=0.7))]


@pytest.mark.parametrize("name,kw", PW, ids=[f"{n}-{k}" for n, k in PW])
def test_pointwise_losses(name, kw):
    for red in ("mean", "sum", "none"):
        for s in [(), (0,), (5,), (3, 4), (2, 3, 4)]:
            check(name, arr(s), arr(s), reduction=red, **kw)
        check(name, arr((3, 4)), arr((4,)), reduction=red, **kw)  # broadcast target (torch warns)
        check(name, arr((3, 4)), arr((3, 4)), noncontig=True, reduction=red, **kw)
        if name != "smooth_l1_loss":
            check(name, arr((3, 4)), arr((3, 4)), weight=arr((3, 4), 0.1, 2), reduction=red, grad_kw=("weight",), **kw)
    # promotion (torch's huber backward fails on mixed dtypes: values only)
    check(name, arr((3, 4), dtype="float32"), arr((3, 4)), atol=1e-5, grad=name != "huber_loss", **kw)
    check(name, arr((3, 4), dtype="float32"), ints((3, 4), 3), atol=1e-5, grad=False, **kw)
    if name != "huber_loss":
        check(name, arr((3, 4)), arr((3, 4)), size_average=False, **kw)
        check(name, arr((3, 4)), arr((3, 4)), reduce=False, **kw)


def test_pointwise_gradcheck():
    x, y = arr((2, 3)), arr((2, 3))
    gradcheck(lambda a, b: F.mse_loss(a, b), x, y)
    gradcheck(lambda a, b: F.l1_loss(a, b, reduction="sum"), x, y)
    gradcheck(lambda a, b: F.smooth_l1_loss(a, b, beta=2.0), x, y)
    gradcheck(lambda a, b: F.huber_loss(a, b, delta=1.5, reduction="none"), x, y)
    gradcheck(lambda a, b, w: F.mse_loss(a, b, weight=w), x, y, arr((2, 3), 0.5, 1))


def test_pointwise_errors():
    same_error(lambda lib, f: f.mse_loss(lib.zeros(3, 5), lib.zeros(4, 5)), "mse_loss")
    same_error(lambda lib, f: f.mse_loss(lib.zeros(3), lib.zeros(3), reduction="avg"), "avg")
    same_error(lambda lib, f: f.mse_loss(lib.zeros(3), lib.zeros(3), weight=lib.ones(2)), "Weights")


# ---------------------------------------------------------------- binary cross-entropy, kl_div

@pytest.mark.parametrize("red", ["mean", "sum", "none"])
def test_binary_cross_entropy(red):
    for s in [(), (0,), (5,), (3, 4), (2, 3, 4)]:
        check("binary_cross_entropy", arr(s, 0.05, 0.95), arr(s, 0, 1), reduction=red)
        check("binary_cross_entropy_with_logits", arr(s), arr(s, 0, 1), reduction=red)
    x, p, t = arr((3, 4)), arr((3, 4), 0.05, 0.95), arr((3, 4), 0, 1)
    w, pw = arr((4,), 0.5, 2), arr((4,), 0.5, 2)
    check("binary_cross_entropy", p, t, weight=w, reduction=red)
    check("binary_cross_entropy", p, t, weight=arr((3, 4), 0.5, 2), noncontig=True, reduction=red)
    check("binary_cross_entropy_with_logits", x, t, weight=w, reduction=red)
    check("binary_cross_entropy_with_logits", x, t, pos_weight=pw, reduction=red)
    check("binary_cross_entropy_with_logits", x, t, weight=w, pos_weight=pw, noncontig=True, reduction=red)
    check("binary_cross_entropy_with_logits", arr((3, 4), -200, 200), t, reduction=red)  # extreme logits stay finite
    # exact 0 / 1 probabilities: logs clamped at -100
    check("binary_cross_entropy", np.array([0.0, 1.0, 0.5, 1.0]), np.array([0.0, 1.0, 1.0, 0.0]), reduction=red,
          grad=False)


@pytest.mark.parametrize("red", ["mean", "sum", "none", "batchmean"])
def test_kl_div(red):
    for s in [(), (5,), (3, 4), (2, 3, 4)]:
        check("kl_div", np.asarray(np.log(arr(s, 0.05, 1))), arr(s, 0.05, 1), reduction=red)
        check("kl_div", np.asarray(np.log(arr(s, 0.05, 1))), np.asarray(np.log(arr(s, 0.05, 1))), reduction=red,
              log_target=True)
    check("kl_div", arr((3, 4), -3, 0), arr((3, 4), 0.05, 1), noncontig=True, reduction=red)
    # zero targets: 0 loss there; torch's target gradient is NaN there, so only the input's is compared
    check("kl_div", arr((3, 4), -3, 0), np.array([[0.0, 0.2, 0.0, 1.0]] * 3), reduction=red, grad_args=(0,))
    check("kl_div", arr((3, 4), -3, 0), arr((3, 4), 0.05, 1), size_average=False)


def test_bce_kl_gradcheck():
    gradcheck(lambda a, b: F.binary_cross_entropy(a, b), arr((2, 3), 0.1, 0.9), arr((2, 3), 0, 1))
    gradcheck(lambda a, b: F.binary_cross_entropy_with_logits(a, b, pos_weight=cgrad.tensor([0.5, 2.0, 1.0],
              dtype=cgrad.float64)), arr((2, 3)), arr((2, 3), 0, 1))
    gradcheck(lambda a, b: F.kl_div(a, b, reduction="batchmean"), arr((2, 3), -3, 0), arr((2, 3), 0.1, 1))
    gradcheck(lambda a, b: F.kl_div(a, b, log_target=True, reduction="sum"), arr((2, 3), -3, 0), arr((2, 3), -3, 0))


def test_bce_kl_errors():
    same_error(lambda lib, f: f.binary_cross_entropy(lib.rand(3, 5), lib.rand(5)), "binary_cross_entropy")
    same_error(lambda lib, f: f.binary_cross_entropy(lib.full((3,), 2.0), lib.rand(3)), "binary_cross_entropy")
    same_error(lambda lib, f: f.binary_cross_entropy(lib.rand(3), lib.rand(3, dtype=lib.float64)),
               "binary_cross_entropy")
    same_error(lambda lib, f: f.binary_cross_entropy_with_logits(lib.rand(3, 5), lib.rand(5)),
               "binary_cross_entropy_with_logits")
    same_error(lambda lib, f: f.kl_div(lib.zeros(3), lib.zeros(3), reduction="foo"), "foo")
    same_error(lambda lib, f: lib.binary_cross_entropy_with_logits(lib.zeros(3), lib.zeros(3), reduction="sum"),
               "reduction")


# ---------------------------------------------------------------- embedding-style losses and distances

@pytest.mark.parametrize("red", ["mean", "sum", "none"])
def test_cosine_embedding_and_margin_ranking(red):
    tgt = np.array([1.0, -1.0, 1.0, -1.0])
    for m in (0.0, 0.3):
        check("cosine_embedding_loss", arr((4, 5)), arr((4, 5)), tgt, margin=m, reduction=red, grad=True)
        check("cosine_embedding_loss", arr((5,)), arr((5,)), np.array(-1.0), margin=m, reduction=red)
        check("margin_ranking_loss", arr((4,)), arr((4,)), tgt, margin=m, reduction=red)
        check("margin_ranking_loss", arr((2, 4)), arr((2, 4)), np.stack([tgt, -tgt]), margin=m, reduction=red)
    check("cosine_embedding_loss", arr((4, 5)), arr((4, 5)), tgt, noncontig=True, reduction=red)
    check("margin_ranking_loss", arr((4,)), arr((4,)), tgt, size_average=False)
    gradcheck(lambda a, b: F.cosine_embedding_loss(a, b, cgrad.from_numpy(tgt[:2]), margin=-0.5), arr((2, 3)),
              arr((2, 3)))
    gradcheck(lambda a, b: F.margin_ranking_loss(a, b, cgrad.from_numpy(tgt), margin=0.1), arr((4,)), arr((4,)))


def test_distances():
    for a, b, kw in [((3, 4), (3, 4), {}), ((3, 4), (4,), dict(dim=-1)), ((2, 3, 4), (2, 3, 4), dict(dim=0)),
                     ((0, 3), (0, 3), {})]:
        check("cosine_similarity", arr(a), arr(b), **kw)
    check("cosine_similarity", arr((3, 4), dtype="float32"), arr((3, 4)))
    for a, b, kw in [((3, 4), (3, 4), {}), ((3, 4), (4,), dict(p=1.0)), ((2, 3, 4), (2, 3, 4), dict(keepdim=True)),
                     ((4,), (4,), dict(p=3.0)), ((), (), {})]:
        check("pairwise_distance", arr(a), arr(b), **kw)
    check("pairwise_distance", ints((3, 4), 5), ints((3, 4), 5), grad=False)
    gradcheck(lambda a, b: F.cosine_similarity(a, b), arr((2, 3)), arr((2, 3)))
    gradcheck(lambda a, b: F.pairwise_distance(a, b, p=3.0), arr((2, 3)), arr((2, 3)))
    same_error(lambda lib, f: f.cosine_similarity(lib.zeros(3, 4), lib.zeros(2, 4)), "cosine_similarity")
    same_error(lambda lib, f: f.cosine_similarity(lib.zeros(3, 4), lib.zeros(3, 4), dim=3), "cosine_similarity")
    same_error(lambda lib, f: f.pairwise_distance(lib.zeros(3, 4), lib.zeros(2, 4)), "pairwise_distance")


# ---------------------------------------------------------------- padding

PADS = [
    ("constant", (2, 3), (1, 2)), ("constant", (2, 3, 4), (1, -1, 2, 0)), ("constant", (0, 3), (1, 1, 1, 0)),
    ("constant", (), ()), ("constant", (2, 3, 4), (-1, -2, 0, 0, 1, 1)),
    ("reflect", (2, 5), (2, 1)), ("reflect", (2, 3, 5), (2, 1)), ("reflect", (1, 2, 4, 5), (1, 2, 3, 1)),
    ("reflect", (1, 2, 3, 4, 4), (1, 1, 2, 0, 1, 2)), ("reflect", (2, 3, 5), (-1, 2)), ("reflect", (2, 3, 4), (1, 1, 2, 1)),
    ("replicate", (2, 3, 5), (3, 1)), ("replicate", (1, 2, 4, 5), (0, 2, 3, 1)), ("replicate", (1, 1, 3, 2, 4), (1, 1, 2, 3, 1, 0)),
    ("replicate", (2, 3, 5), (-2, 1)),
    ("circular", (2, 3, 5), (2, 1)), ("circular", (1, 2, 4, 5), (1, 2, 4, 1)), ("circular", (1, 1, 3, 2, 4), (1, 1, 2, 0, 1, 2)),
    ("circular", (2, 3, 5), (-1, 2)), ("circular", (2, 5), (5, 0)),
]


@pytest.mark.parametrize("mode,shape,pads", PADS, ids=[f"{m}-{s}-{p}" for m, s, p in PADS])
def test_pad(mode, shape, pads):
    check("pad", arr(shape), pads, mode=mode)
    if len(shape) >= 1 and all(shape):
        check("pad", arr(shape), pads, mode=mode, noncontig=True)
    if mode == "constant":
        check("pad", arr(shape), pads, value=2.5)
        check("pad", ints(shape, 5), pads, value=3, grad=False)
        check("pad", arr(shape), pads, "constant", 0.5)


def test_pad_gradcheck():
    for mode in ("constant", "reflect", "replicate", "circular"):
        gradcheck(lambda t: F.pad(t, (2, 1), mode=mode), arr((1, 2, 3)))
        gradcheck(lambda t: F.pad(t, (1, 1, 1, 0), mode=mode), arr((1, 1, 2, 3)))


def test_pad_errors():
    same_error(lambda lib, f: f.pad(lib.zeros(2, 5), (1, 1, 1)), "pad")
    same_error(lambda lib, f: f.pad(lib.zeros(5), (1, 1, 1, 1)), "pad")
    same_error(lambda lib, f: f.pad(lib.zeros(1, 2, 5), (1, 1), mode="foo"), "foo")
    same_error(lambda lib, f: f.pad(lib.zeros(1, 2, 5), (1, 1), mode="reflect", value=2.0), "reflect")
    same_error(lambda lib, f: f.pad(lib.zeros(5), (1, 1), mode="reflect"), "pad")
    same_error(lambda lib, f: f.pad(lib.zeros(1, 2, 5), (5, 1), mode="reflect"), "pad")
    same_error(lambda lib, f: f.pad(lib.zeros(1, 2, 5), (6, 1), mode="circular"), "pad")
    same_error(lambda lib, f: f.pad(lib.zeros(2, 5), (-3, -3)), "pad")
    same_error(lambda lib, f: f.pad(lib.zeros(2, 5), (1.5, 1)), "pad")
    same_error(lambda lib, f: lib.constant_pad_nd(lib.zeros(2, 5), (1, 1, 1)), "constant_pad_nd")


# ---------------------------------------------------------------- interpolate

_SHAPES = {"nearest": [(2, 2, 5), (1, 2, 4, 5), (1, 1, 2, 3, 4)], "linear": [(2, 2, 5)], "bilinear": [(1, 2, 4, 5)],
           "bicubic": [(1, 2, 4, 5)], "trilinear": [(1, 1, 2, 3, 4)]}
INTERP = [(m, ac) for m in _SHAPES for ac in ([None] if m == "nearest" else [None, False, True])]


@pytest.mark.parametrize("mode,ac", INTERP, ids=[f"{m}-{a}" for m, a in INTERP])
def test_interpolate(mode, ac):
    for shape in _SHAPES[mode]:
        ns = len(shape) - 2
        x = arr(shape)
        check("interpolate", x, size=7, mode=mode, align_corners=ac)
        check("interpolate", x, size=tuple([3, 6, 5][:ns]), mode=mode, align_corners=ac)
        check("interpolate", x, size=tuple([1] * ns), mode=mode, align_corners=ac)
        for sf in (2, 1.5, 0.6, tuple([2.0, 0.5, 1.7][:ns])):
            check("interpolate", x, scale_factor=sf, mode=mode, align_corners=ac)
            check("interpolate", x, scale_factor=sf, mode=mode, align_corners=ac, recompute_scale_factor=True)
        check("interpolate", x, scale_factor=1.5, mode=mode, align_corners=ac, noncontig=True)
    x = arr(_SHAPES[mode][0], dtype="float32")
    check("interpolate", x, scale_factor=2, mode=mode, align_corners=ac, atol=1e-5, rtol=1e-4)
    with pytest.warns(UserWarning, match="deprecated"):
        F.upsample(cgrad.from_numpy(x), scale_factor=2, mode=mode, align_corners=ac)
    check("upsample", x, scale_factor=2, mode=mode, align_corners=ac, atol=1e-5, rtol=1e-4)


def test_interpolate_gradcheck():
    gradcheck(lambda t: F.interpolate(t, size=5, mode="linear", align_corners=True), arr((1, 1, 3)))
    gradcheck(lambda t: F.interpolate(t, scale_factor=1.5, mode="bilinear"), arr((1, 1, 2, 3)))
    gradcheck(lambda t: F.interpolate(t, size=(3, 4), mode="bicubic"), arr((1, 1, 2, 3)))
    gradcheck(lambda t: F.interpolate(t, size=(3, 3, 2), mode="trilinear"), arr((1, 1, 2, 2, 2)))
    gradcheck(lambda t: F.interpolate(t, scale_factor=2), arr((1, 2, 3)))


def test_interpolate_errors():
    same_error(lambda lib, f: f.interpolate(lib.zeros(3, 4), size=3), "Only 3D, 4D and 5D")
    same_error(lambda lib, f: f.interpolate(lib.zeros(1, 3, 4, 4), size=3, mode="linear"), "linear")
    same_error(lambda lib, f: f.interpolate(lib.zeros(1, 3, 4), size=3, mode="foo"), "foo")
    same_error(lambda lib, f: f.interpolate(lib.zeros(1, 3, 4), size=3, scale_factor=2), "scale_factor")
    same_error(lambda lib, f: f.interpolate(lib.zeros(1, 3, 4)), "scale_factor")
    same_error(lambda lib, f: f.interpolate(lib.zeros(1, 3, 4), size=3, align_corners=True), "align_corners")
    same_error(lambda lib, f: f.interpolate(lib.zeros(1, 3, 4, 4), size=(3, 3, 3)), "spatial")
    same_error(lambda lib, f: f.interpolate(lib.zeros(1, 3, 4), size=(2.5,)), "size")
    same_error(lambda lib, f: f.interpolate(lib.zeros(1, 3, 4), size=3, mode="bicubic"), "bicubic")
    same_error(lambda lib, f: f.interpolate(lib.zeros(1, 3, 4), size=3, recompute_scale_factor=True), "recompute")


# ---------------------------------------------------------------- pixel shuffle, one_hot

def test_pixel_shuffle_one_hot():
    check("pixel_shuffle", arr((2, 8, 2, 3)), 2)
    check("pixel_shuffle", arr((2, 1, 9, 2, 1)), 3, noncontig=True)
    check("pixel_unshuffle", arr((2, 1, 4, 6)), 2)
    check("pixel_unshuffle", arr((3, 6, 3)), 3, noncontig=True)
    gradcheck(lambda t: F.pixel_shuffle(t, 2), arr((1, 4, 1, 2)))
    gradcheck(lambda t: F.pixel_unshuffle(t, 2), arr((1, 1, 2, 4)))
    same_error(lambda lib, f: f.pixel_shuffle(lib.zeros(1, 8, 2, 2), 3), "pixel_shuffle")
    same_error(lambda lib, f: f.pixel_shuffle(lib.zeros(8, 2), 2), "pixel_shuffle")
    same_error(lambda lib, f: f.pixel_unshuffle(lib.zeros(1, 8, 3, 2), 2), "pixel_unshuffle")
    for t, n in [(ints((5,), 4), -1), (ints((2, 3), 4), 6), (ints((), 3), -1), (np.zeros((0,), "int64"), 3)]:
        c = F.one_hot(cgrad.from_numpy(t), n)
        r = TF.one_hot(torch.from_numpy(t), n)
        assert c.dtype == cgrad.int64 and tuple(c.shape) == tuple(r.shape)
        np.testing.assert_array_equal(to_numpy(c), r.numpy())
    assert tuple(F.one_hot(cgrad.tensor([1, 2]), num_classes=4).shape) == (2, 4)
    same_error(lambda lib, f: f.one_hot(lib.tensor([1, 2], dtype=lib.int32)), "one_hot")
    same_error(lambda lib, f: f.one_hot(lib.tensor([1, -2])), "one_hot")
    same_error(lambda lib, f: f.one_hot(lib.tensor([1, 5]), 3), "one_hot")
    same_error(lambda lib, f: f.one_hot(lib.tensor([], dtype=lib.int64)), "one_hot")


# ---------------------------------------------------------------- scaled_dot_product_attention

def _qkv(b, L, S, E, Ev, bk=None):
    bk = b if bk is None else bk
    return arr(b + (L, E)), arr(bk + (S, E)), arr(bk + (S, Ev))


def test_sdpa():
    sdpa = "scaled_dot_product_attention"
    q, k, v = _qkv((2,), 3, 5, 4, 6)
    check(sdpa, q, k, v)
    check(sdpa, q, k, v, noncontig=True)
    check(sdpa, q, k, v, scale=0.3)
    check(sdpa, q, k, v, scale=-0.5)
    check(sdpa, q, k, v, attn_mask=RNG.random((3, 5)) > 0.3)
    check(sdpa, q, k, v, attn_mask=arr((2, 1, 5)))
    m = RNG.random((2, 3, 5)) > 0.5
    m[0, 1] = False  # a fully masked row gives zeros (torch's math path)
    check(sdpa, q, k, v, attn_mask=m)
    check(sdpa, q, k, v, is_causal=True)
    check(sdpa, *_qkv((2,), 4, 4, 3, 3), is_causal=True)
    check(sdpa, *_qkv((), 3, 5, 4, 2))
    check(sdpa, *_qkv((2, 3), 3, 4, 4, 2, bk=(1, 3)))  # batch broadcasting
    check(sdpa, *_qkv((1, 4), 3, 5, 4, 2, bk=(1, 2)), enable_gqa=True)
    check(sdpa, *_qkv((2,), 0, 5, 4, 2))
    check(sdpa, *_qkv((2,), 3, 5, 4, 6), dropout_p=0.0, attn_mask=arr((3, 5), dtype="float64"))
    q32, k32, v32 = (a.astype("float32") for a in _qkv((2,), 3, 5, 4, 6))
    check(sdpa, q32, k32, v32, attn_mask=arr((3, 5), dtype="float32"), atol=1e-5, rtol=1e-4)
    # dropout: same shape, some attention weights dropped, still differentiable
    qt, kt, vt = (cgrad.from_numpy(a) for a in _qkv((2,), 3, 5, 4, 6))
    qt.requires_grad_(True)
    out = F.scaled_dot_product_attention(qt, kt, vt, dropout_p=0.5)
    assert tuple(out.shape) == (2, 3, 6)
    out.sum().backward()
    assert qt.grad is not None


def test_sdpa_gradcheck():
    q, k, v = _qkv((1,), 2, 3, 2, 2)
    mask = cgrad.from_numpy(np.array([[True, False, True], [True, True, False]]))
    gradcheck(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, attn_mask=mask), q, k, v)
    gradcheck(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=True, scale=0.7), q, k, v)


def test_sdpa_errors():
    sdpa = "scaled_dot_product_attention"
    same_error(lambda lib, f: f.scaled_dot_product_attention(lib.zeros(2, 3, 4), lib.zeros(2, 5, 3),
                                                             lib.zeros(2, 5, 4)), sdpa)
    same_error(lambda lib, f: f.scaled_dot_product_attention(lib.zeros(2, 3, 4), lib.zeros(2, 5, 4), lib.zeros(2, 5, 4),
                                                             attn_mask=lib.ones(3, 5, dtype=lib.bool), is_causal=True),
               sdpa)
    same_error(lambda lib, f: f.scaled_dot_product_attention(lib.zeros(2, 3, 4), lib.zeros(2, 5, 4), lib.zeros(2, 5, 4),
                                                             attn_mask=lib.ones(3, 5, dtype=lib.int64)), sdpa)
    same_error(lambda lib, f: f.scaled_dot_product_attention(lib.zeros(4), lib.zeros(4), lib.zeros(4)), sdpa)
    same_error(lambda lib, f: f.scaled_dot_product_attention(lib.zeros(2, 3, 4), lib.zeros(2, 5, 4, dtype=lib.float64),
                                                             lib.zeros(2, 5, 4)), sdpa)
    same_error(lambda lib, f: f.scaled_dot_product_attention(lib.zeros(1, 4, 3, 4), lib.zeros(1, 3, 5, 4),
                                                             lib.zeros(1, 3, 5, 4), enable_gqa=True), sdpa)
