"""Tests of the composed losses, activations and normalizations (cgrad.nn._functional_extra) and their
modules, against PyTorch."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import cgrad
import cgrad.nn.functional as F
from cgrad.nn.modules import activation as act, channelshuffle as cs, loss as L, normalization as norm
from nn_compare import compare_module


def _pair(a: np.ndarray, requires_grad: bool = False):
    return (torch.tensor(a, requires_grad=requires_grad),
            cgrad.tensor(a).requires_grad_(requires_grad) if requires_grad else cgrad.tensor(a))


def _close(c, t, atol=1e-6):
    np.testing.assert_allclose(np.asarray(c.detach().numpy()), t.detach().numpy(), atol=atol, rtol=1e-5)


def _pick(torch_name, cls, *args, **kwargs):
    return lambda lib: (getattr(torch.nn, torch_name) if lib is torch else cls)(*args, **kwargs)


RNG = np.random.default_rng(0)


def _const_target(module, tensors):
    """Runs a loss with its target detached (torch's kernels refuse a target that requires grad)."""
    return module(tensors[0], *(t.detach() for t in tensors[1:]))


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_ctc_loss_concatenated_targets_and_zero_infinity(reduction):
    lp = torch.randn(12, 3, 6, dtype=torch.float64).log_softmax(2).numpy()
    tl = np.array([3, 0, 5])
    targets = RNG.integers(1, 6, size=int(tl.sum()))
    il = np.array([12, 4, 4])  # the last sample cannot emit 5 labels (+ repeats) in 4 steps: an infinite loss
    for zi in (False, True):
        tlp, clp = _pair(lp, True)
        tt = torch.nn.functional.ctc_loss(tlp, torch.tensor(targets), torch.tensor(il), torch.tensor(tl),
                                          reduction=reduction, zero_infinity=zi)
        ct = F.ctc_loss(clp, cgrad.tensor(targets), cgrad.tensor(il), cgrad.tensor(tl), reduction=reduction,
                        zero_infinity=zi)
        _close(ct, tt)
        if zi:
            (gt,) = torch.autograd.grad(tt.sum(), tlp)
            (gc,) = cgrad.autograd.grad(ct.sum(), clp)
            _close(gc, gt)


def test_ctc_loss_unbatched():
    lp = torch.randn(7, 5, dtype=torch.float64).log_softmax(1)
    tgt = torch.tensor([1, 2, 2])
    tt = torch.nn.functional.ctc_loss(lp, tgt, torch.tensor(7), torch.tensor(3), reduction="none")
    ct = F.ctc_loss(cgrad.tensor(lp.numpy()), cgrad.tensor(tgt.numpy()), cgrad.tensor(7), cgrad.tensor(3),
                    reduction="none")
    assert tuple(ct.shape) == tuple(tt.shape)
    _close(ct, tt)


def test_gumbel_softmax_soft_and_hard():
    cgrad.manual_seed(0)
    logits = cgrad.randn(4, 6, dtype=cgrad.float64).requires_grad_(True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    assert tuple(soft.shape) == (4, 6)
    np.testing.assert_allclose(soft.sum(-1).detach().numpy(), np.ones(4), atol=1e-12)
    hard = F.gumbel_softmax(logits, hard=True, dim=-1)
    h = np.asarray(hard.detach().numpy())
    assert set(np.unique(h)) <= {0.0, 1.0} and (h.sum(-1) == 1).all()
    w = cgrad.randn(4, 6, dtype=cgrad.float64)
    (g,) = cgrad.autograd.grad((hard * w).sum(), logits)
    assert np.abs(np.asarray(g.numpy())).sum() > 0  # the straight-through gradient of the soft sample


def test_rrelu_training_slopes_and_eval():
    cgrad.manual_seed(0)
    x = cgrad.randn(1000, dtype=cgrad.float64)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    xn, yn = np.asarray(x.numpy()), np.asarray(y.numpy())
    slopes = yn[xn < 0] / xn[xn < 0]
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and slopes.std() > 0.01
    assert (yn[xn >= 0] == xn[xn >= 0]).all()
    _close(F.rrelu(x, 0.1, 0.3), torch.nn.functional.leaky_relu(torch.tensor(xn), 0.2))
    with pytest.raises(RuntimeError):
        F.rrelu(x, 0.5, 0.1, training=True)


def test_gradcheck_composed_losses():
    def t(*shape):
        return cgrad.randn(*shape, dtype=cgrad.float64).requires_grad_(True)

    target = cgrad.tensor([1, 0, 3])
    assert cgrad.autograd.gradcheck(lambda x: F.multi_margin_loss(x, target, p=2, margin=0.7), (t(3, 4),))
    mlt = cgrad.tensor([[3, 0, -1, 1], [1, -1, 2, 2], [-1, 0, 0, 0]])
    assert cgrad.autograd.gradcheck(lambda x: F.multilabel_margin_loss(x, mlt), (t(3, 4),))
    assert cgrad.autograd.gradcheck(lambda x: F.local_response_norm(x, 3), (t(2, 5, 3, 2),))
    assert cgrad.autograd.gradcheck(lambda a, p, n: F.triplet_margin_loss(a, p, n, swap=True), (t(3, 4),) * 3)
    assert cgrad.autograd.gradcheck(lambda x: F.pdist(x, 1.5), (t(4, 3),))


def test_empty_batches_and_errors():
    x = cgrad.randn(0, 4)
    assert tuple(F.multi_margin_loss(x, cgrad.tensor([], dtype=cgrad.int64), reduction="none").shape) == (0,)
    assert tuple(F.soft_margin_loss(x, x, reduction="sum").shape) == ()
    assert tuple(F.pdist(cgrad.randn(1, 3)).shape) == (0,)
    with pytest.raises(ValueError):
        F.multi_margin_loss(cgrad.randn(2, 3), cgrad.tensor([0, 1]), p=3)
    with pytest.raises(ValueError):
        F.hinge_embedding_loss(cgrad.randn(3), cgrad.ones(3), reduction="avg")
    with pytest.raises(ValueError):
        F.gaussian_nll_loss(cgrad.randn(3, 2), cgrad.randn(3, 2), cgrad.ones(2, 2))
    with pytest.raises(RuntimeError):
        F.channel_shuffle(cgrad.randn(1, 6, 2), 4)
    with pytest.raises(RuntimeError):
        F.pdist(cgrad.randn(2, 3, 4))
    with pytest.raises(ValueError):
        F.local_response_norm(cgrad.randn(2, 3), 2)


def test_legacy_size_average_reduce():
    a = RNG.standard_normal((4, 3))
    y = np.sign(RNG.standard_normal((4, 3)))
    ta, ca = _pair(a)
    ty, cy = _pair(y)
    with pytest.warns(UserWarning):
        tt = torch.nn.functional.soft_margin_loss(ta, ty, size_average=False)
    _close(F.soft_margin_loss(ca, cy, size_average=False), tt)
    tt = torch.nn.functional.hinge_embedding_loss(ta, ty, reduce=False)
    _close(F.hinge_embedding_loss(ca, cy, reduce=False), tt)


def test_loss_modules_match_torch():
    t3 = RNG.integers(0, 4, size=3)
    compare_module(_pick("MultiMarginLoss", L.MultiMarginLoss, p=2, margin=0.5), [(3, 4), t3])
    compare_module(_pick("SoftMarginLoss", L.SoftMarginLoss), [(3, 4), np.sign(RNG.standard_normal((3, 4)))],
                   call=_const_target)
    compare_module(_pick("HingeEmbeddingLoss", L.HingeEmbeddingLoss, margin=0.5, reduction="sum"),
                   [(3, 4), np.sign(RNG.standard_normal((3, 4)))],
                   call=_const_target)
    compare_module(lambda lib: (torch.nn.PoissonNLLLoss if lib is torch else L.PoissonNLLLoss)(full=True),
                   [(3, 4), np.abs(RNG.standard_normal((3, 4))) * 3])
    compare_module(lambda lib: (torch.nn.GaussianNLLLoss if lib is torch else L.GaussianNLLLoss)(full=True),
                   [(3, 4), (3, 4), np.abs(RNG.standard_normal((3, 1))) + 0.1])
    compare_module(lambda lib: (torch.nn.TripletMarginLoss if lib is torch else L.TripletMarginLoss)(p=1.0),
                   [(3, 4), (3, 4), (3, 4)])
    w = RNG.uniform(0.5, 2, size=4)
    compare_module(lambda lib: (torch.nn.MultiLabelSoftMarginLoss if lib is torch else L.MultiLabelSoftMarginLoss)(
        weight=lib.tensor(w)), [(3, 4), (RNG.random((3, 4)) > 0.5).astype("float64")])
    compare_module(lambda lib: (torch.nn.MultiLabelMarginLoss if lib is torch else L.MultiLabelMarginLoss)(),
                   [(2, 4), np.array([[3, 0, -1, 1], [1, 2, -1, 0]])])
    assert str(L.MultiMarginLoss()) == str(torch.nn.MultiMarginLoss()) == "MultiMarginLoss()"
    assert list(L.MultiMarginLoss(weight=cgrad.ones(3)).state_dict()) == ["weight"]
    assert str(L.CTCLoss(blank=1)) == str(torch.nn.CTCLoss(blank=1))
    with pytest.raises(ValueError):
        L.TripletMarginWithDistanceLoss(margin=0)
    with pytest.raises(ValueError):
        L.MultiMarginLoss(p=3)


def test_triplet_margin_with_distance_module():
    a, p, n = (RNG.standard_normal((3, 4)) for _ in range(3))
    tm = torch.nn.TripletMarginWithDistanceLoss(distance_function=lambda x, y: (x - y).abs().sum(-1), swap=True)
    cm = L.TripletMarginWithDistanceLoss(distance_function=lambda x, y: (x - y).abs().sum(-1), swap=True)
    _close(cm(*(cgrad.tensor(v) for v in (a, p, n))), tm(*(torch.tensor(v) for v in (a, p, n))))
    assert repr(L.TripletMarginWithDistanceLoss()) == repr(torch.nn.TripletMarginWithDistanceLoss())
    _close(L.TripletMarginWithDistanceLoss()(*(cgrad.tensor(v) for v in (a, p, n))),
           torch.nn.TripletMarginWithDistanceLoss()(*(torch.tensor(v) for v in (a, p, n))))


def test_norm_activation_shuffle_modules_match_torch():
    compare_module(lambda lib: (torch.nn.LocalResponseNorm if lib is torch else norm.LocalResponseNorm)(3, k=2.0),
                   [(2, 5, 3, 3)])
    for size in (1, 2, 3, 5, 9):  # forward only: torch's hand-written backward fails for small sizes
        compare_module(lambda lib: (torch.nn.CrossMapLRN2d if lib is torch else norm.CrossMapLRN2d)(size, 0.1),
                       [(2, 6, 3, 2)], grad=False)
    x = cgrad.randn(2, 4, 2, 2, dtype=cgrad.float64).requires_grad_(True)
    assert cgrad.autograd.gradcheck(norm.CrossMapLRN2d(3, 0.1), (x,))
    compare_module(lambda lib: (torch.nn.ChannelShuffle if lib is torch else cs.ChannelShuffle)(3), [(2, 6, 2, 2)],
                   grad=False)
    compare_module(lambda lib: (torch.nn.Softmax2d if lib is torch else act.Softmax2d)(), [(2, 3, 2, 2)])
    compare_module(lambda lib: (torch.nn.RReLU if lib is torch else act.RReLU)(0.1, 0.2), [(3, 4)], train=(False,))
    assert repr(act.RReLU(0.1, 0.2, True)) == repr(torch.nn.RReLU(0.1, 0.2, True))
    with pytest.raises(ValueError):
        act.Softmax2d()(cgrad.randn(2, 3))


def test_adaptive_log_softmax_with_loss():
    tm = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0, head_bias=True).double()
    cm = cgrad.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0, head_bias=True, dtype=cgrad.float64)
    assert list(cm.state_dict()) == list(tm.state_dict())
    cm.load_state_dict({k: cgrad.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    assert str(cm) == str(tm)
    x = RNG.standard_normal((5, 8))
    y = np.array([0, 4, 9, 2, 7])
    to, co = tm(torch.tensor(x), torch.tensor(y)), cm(cgrad.tensor(x), cgrad.tensor(y))
    _close(co.output, to.output)
    _close(co.loss, to.loss)
    _close(cm.log_prob(cgrad.tensor(x)), tm.log_prob(torch.tensor(x)))
    np.testing.assert_array_equal(cm.predict(cgrad.tensor(x)).numpy(), tm.predict(torch.tensor(x)).numpy())
    single = cm(cgrad.tensor(x[0]), cgrad.tensor(y[0]))
    _close(single.output, tm(torch.tensor(x[0]), torch.tensor(y[0])).output)
    with pytest.raises(RuntimeError):
        cm(cgrad.tensor(x), cgrad.tensor(np.array([0, 1, 2, 3, 10])))
    with pytest.raises(ValueError):
        cgrad.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [6, 3])
