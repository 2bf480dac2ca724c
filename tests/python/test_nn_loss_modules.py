"""The loss and distance modules of cgrad.nn against torch.nn: values and
gradients (every reduction, class weights, ignore_index, label smoothing,
probability targets, pos_weight), reprs, state_dict keys (weights are buffers
like torch's), legacy size_average / reduce, and argument errors."""
import warnings

import numpy as np
import pytest
import torch

import cgrad
from nn_compare import compare_module

_rng = np.random.default_rng(7)
_LOGITS = _rng.standard_normal((6, 5))
_CLASSES = np.array([0, 4, 1, 1, 3, 2], dtype=np.int64)
_CLASSES_IGN = np.array([0, 4, -100, 1, 3, 2], dtype=np.int64)
_LOGITS_K = _rng.standard_normal((2, 5, 3))
_CLASSES_K = np.array([[0, 4, 1], [2, 2, 3]], dtype=np.int64)
_PROBS = np.exp(_LOGITS) / np.exp(_LOGITS).sum(1, keepdims=True)
_P_IN = _rng.uniform(0.05, 0.95, (4, 3))
_P_TGT = _rng.uniform(0.0, 1.0, (4, 3))
_W5 = [0.5, 1.0, 2.0, 0.3, 1.5]
_W3 = [0.5, 2.0, 1.0]
_SIGNS = np.array([1, -1, 1, -1], dtype=np.int64)
_SIGNS_F = np.array([1.0, -1.0, -1.0, 1.0, 1.0])


def _detached_target(m, xs):
    # torch has no derivative for some loss targets (class probabilities of BCE...): compare the input grads only
    return m(xs[0], xs[1].detach())


# (id, factory taking the library, inputs (shapes or arrays), call or None)
CASES = [
    ("mse", lambda L: L.nn.MSELoss(), [(4, 3), (4, 3)], None),
    ("mse_sum", lambda L: L.nn.MSELoss(reduction="sum"), [(4, 3), (4, 3)], None),
    ("mse_none", lambda L: L.nn.MSELoss(reduction="none"), [(4, 3), (4, 3)], None),
    ("l1", lambda L: L.nn.L1Loss(), [(4, 3), (4, 3)], None),
    ("l1_none", lambda L: L.nn.L1Loss(reduction="none"), [(4, 3), (4, 3)], None),
    ("smooth_l1", lambda L: L.nn.SmoothL1Loss(), [(4, 3), (4, 3)], None),
    ("smooth_l1_beta", lambda L: L.nn.SmoothL1Loss(reduction="sum", beta=0.5), [(4, 3), (4, 3)], None),
    ("huber", lambda L: L.nn.HuberLoss(), [(4, 3), (4, 3)], None),
    ("huber_delta", lambda L: L.nn.HuberLoss(reduction="none", delta=0.5), [(4, 3), (4, 3)], None),
    ("ce", lambda L: L.nn.CrossEntropyLoss(), [_LOGITS, _CLASSES], None),
    ("ce_weight", lambda L: L.nn.CrossEntropyLoss(weight=L.tensor(_W5)), [_LOGITS, _CLASSES], None),
    ("ce_ignore", lambda L: L.nn.CrossEntropyLoss(weight=L.tensor(_W5)), [_LOGITS, _CLASSES_IGN], None),
    ("ce_ignore1", lambda L: L.nn.CrossEntropyLoss(ignore_index=1, reduction="sum"), [_LOGITS, _CLASSES], None),
    ("ce_smooth", lambda L: L.nn.CrossEntropyLoss(label_smoothing=0.1), [_LOGITS, _CLASSES_IGN], None),
    ("ce_smooth_weight", lambda L: L.nn.CrossEntropyLoss(weight=L.tensor(_W5), label_smoothing=0.2),
     [_LOGITS, _CLASSES], None),
    ("ce_none", lambda L: L.nn.CrossEntropyLoss(reduction="none"), [_LOGITS, _CLASSES], None),
    ("ce_kdim", lambda L: L.nn.CrossEntropyLoss(), [_LOGITS_K, _CLASSES_K], None),
    ("ce_probs", lambda L: L.nn.CrossEntropyLoss(), [_LOGITS, _PROBS], _detached_target),
    ("ce_probs_smooth", lambda L: L.nn.CrossEntropyLoss(weight=L.tensor(_W5), label_smoothing=0.1),
     [_LOGITS, _PROBS], _detached_target),
    ("nll", lambda L: L.nn.NLLLoss(), [_LOGITS, _CLASSES], None),
    ("nll_weight_ignore", lambda L: L.nn.NLLLoss(weight=L.tensor(_W5)), [_LOGITS, _CLASSES_IGN], None),
    ("nll_none", lambda L: L.nn.NLLLoss(ignore_index=4, reduction="none"), [_LOGITS, _CLASSES], None),
    ("nll_kdim", lambda L: L.nn.NLLLoss(reduction="sum"), [_LOGITS_K, _CLASSES_K], None),
    ("bce", lambda L: L.nn.BCELoss(), [_P_IN, _P_TGT], _detached_target),
    ("bce_weight", lambda L: L.nn.BCELoss(weight=L.tensor(_W3), reduction="sum"), [_P_IN, _P_TGT],
     _detached_target),
    ("bce_logits", lambda L: L.nn.BCEWithLogitsLoss(), [(4, 3), _P_TGT], _detached_target),
    ("bce_logits_pos", lambda L: L.nn.BCEWithLogitsLoss(pos_weight=L.tensor(_W3)), [(4, 3), _P_TGT],
     _detached_target),
    ("bce_logits_both", lambda L: L.nn.BCEWithLogitsLoss(weight=L.tensor(_W3), reduction="none",
                                                         pos_weight=L.tensor([2.0, 1.0, 0.5])),
     [(4, 3), _P_TGT], _detached_target),
    ("kl_batchmean", lambda L: L.nn.KLDivLoss(reduction="batchmean"), [(4, 3), _P_TGT], None),
    ("kl_sum_log_target", lambda L: L.nn.KLDivLoss(reduction="sum", log_target=True), [(4, 3), (4, 3)], None),
    ("kl_none", lambda L: L.nn.KLDivLoss(reduction="none"), [(4, 3), _P_TGT], None),
    ("cosine_embedding", lambda L: L.nn.CosineEmbeddingLoss(), [(4, 5), (4, 5), _SIGNS], None),
    ("cosine_embedding_margin", lambda L: L.nn.CosineEmbeddingLoss(0.2, reduction="sum"),
     [(4, 5), (4, 5), _SIGNS], None),
    ("margin_ranking", lambda L: L.nn.MarginRankingLoss(), [(5,), (5,), _SIGNS_F],
     lambda m, xs: m(xs[0], xs[1], xs[2].detach())),
    ("margin_ranking_margin", lambda L: L.nn.MarginRankingLoss(0.3, reduction="none"), [(5,), (5,), _SIGNS_F],
     lambda m, xs: m(xs[0], xs[1], xs[2].detach())),
    ("cosine_similarity", lambda L: L.nn.CosineSimilarity(), [(4, 5), (4, 5)], None),
    ("cosine_similarity_dim", lambda L: L.nn.CosineSimilarity(dim=-1, eps=1e-6), [(2, 4, 5), (4, 5)], None),
    ("pairwise_distance", lambda L: L.nn.PairwiseDistance(), [(4, 5), (4, 5)], None),
    ("pairwise_distance_p1", lambda L: L.nn.PairwiseDistance(p=1.0, keepdim=True), [(4, 5), (4, 5)], None),
]
IDS = [c[0] for c in CASES]


@pytest.mark.parametrize("name,make,inputs,call", CASES, ids=IDS)
def test_matches_torch(name, make, inputs, call):
    compare_module(make, inputs, call=call)


@pytest.mark.parametrize("name,make,inputs,call", CASES, ids=IDS)
def test_repr_attributes_and_state_dict_keys(name, make, inputs, call):
    t, c = make(torch), make(cgrad)
    assert repr(c) == repr(t)
    assert list(c.state_dict()) == list(t.state_dict())
    assert [n for n, _ in c.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert list(c.parameters()) == [] and list(t.parameters()) == []
    for attr in ("reduction", "ignore_index", "label_smoothing", "beta", "delta", "log_target", "margin", "norm",
                 "eps", "keepdim", "dim"):
        if hasattr(t, attr):
            assert getattr(c, attr) == getattr(t, attr), attr
    for buf in ("weight", "pos_weight"):
        if hasattr(t, buf):
            assert (getattr(c, buf) is None) == (getattr(t, buf) is None), buf


def test_weight_is_a_buffer_that_moves_with_the_module():
    m = cgrad.nn.CrossEntropyLoss(weight=cgrad.tensor([1.0, 2.0]))
    assert "weight" in dict(m.named_buffers())
    assert m.double().weight.dtype == cgrad.float64
    m2 = cgrad.nn.BCEWithLogitsLoss(pos_weight=cgrad.tensor([3.0]))
    assert list(m2.state_dict()) == ["pos_weight"]


def test_legacy_size_average_and_reduce():
    for kwargs, expect in [(dict(size_average=False), "sum"), (dict(reduce=False), "none"),
                           (dict(size_average=True, reduce=True), "mean")]:
        for cls in ("MSELoss", "L1Loss", "NLLLoss", "CrossEntropyLoss", "BCELoss", "KLDivLoss"):
            with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
                c = getattr(cgrad.nn, cls)(**kwargs)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = getattr(torch.nn, cls)(**kwargs)
            assert c.reduction == t.reduction == expect


def test_kl_div_mean_warns_like_torch():
    x = np.random.default_rng(0).standard_normal((2, 3))
    with pytest.warns(UserWarning, match="batchmean"):
        cgrad.nn.KLDivLoss()(cgrad.tensor(x), cgrad.tensor(np.abs(x)))


def _raises_like_torch(fn):
    """fn(lib) raises in torch; cgrad raises an exception of the same class (or a subclass)."""
    with pytest.raises(Exception) as te:
        fn(torch)
    with pytest.raises(type(te.value)):
        fn(cgrad)


@pytest.mark.parametrize("fn", [
    lambda L: L.nn.HuberLoss(delta="1"),
    lambda L: L.nn.MSELoss(reduction="avg")(L.ones(3), L.ones(3)),
    lambda L: L.nn.BCELoss()(L.full((3,), 0.5), L.ones(2, 3)),
    lambda L: L.nn.BCEWithLogitsLoss()(L.ones(3), L.ones(2, 3)),
    lambda L: L.nn.CrossEntropyLoss()(L.ones(2, 3), L.tensor([0, 3])),
    lambda L: L.nn.NLLLoss()(L.ones(2, 3), L.tensor([0, 1, 1])),
    lambda L: L.nn.MarginRankingLoss()(L.ones(3), L.ones(3), L.ones(1, 3)),
    lambda L: L.nn.CosineEmbeddingLoss()(L.ones(2, 3, 4), L.ones(2, 3, 4), L.ones(2, 3)),
], ids=["huber_delta_type", "bad_reduction", "bce_size", "bce_logits_size", "ce_class_range", "nll_batch",
        "margin_ranking_dims", "cosine_embedding_dims"])
def test_argument_errors(fn):
    _raises_like_torch(fn)


@pytest.mark.parametrize("name", ["mse", "ce_weight", "ce_smooth", "nll_weight_ignore", "bce_logits_pos"])
def test_float32(name):
    _, make, inputs, call = CASES[IDS.index(name)]
    compare_module(make, inputs, dtype="float32", atol=1e-5, rtol=1e-4, call=call)
