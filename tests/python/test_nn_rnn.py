"""The recurrent layers (RNN, LSTM, GRU and their cells) against torch: outputs, final states,
input / initial-state / parameter gradients for every layout option, reprs, state_dict keys,
default init and errors."""
import numpy as np
import pytest
import torch

import cgrad
import cgrad.nn as nn
from nn_compare import compare_module

T, B, I, H = 5, 3, 4, 6


def _make(kind, **kw):
    def make(lib):
        if kind in ("tanh", "relu"):
            return lib.nn.RNN(I, H, nonlinearity=kind, **kw)
        return getattr(lib.nn, kind)(I, H, **kw)
    return make


@pytest.mark.parametrize("kind", ["tanh", "relu", "LSTM", "GRU"])
@pytest.mark.parametrize("num_layers,bidirectional,batch_first",
                         [(1, False, False), (2, False, True), (1, True, False), (2, True, True)])
def test_rnn_matches_torch(kind, num_layers, bidirectional, batch_first):
    shape = (B, T, I) if batch_first else (T, B, I)
    compare_module(_make(kind, num_layers=num_layers, bidirectional=bidirectional, batch_first=batch_first),
                   [shape])


@pytest.mark.parametrize("kind", ["tanh", "LSTM", "GRU"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_rnn_initial_states(kind, batch_first):
    L, D = 2, 2
    shape = (B, T, I) if batch_first else (T, B, I)
    make = _make(kind, num_layers=L, bidirectional=True, batch_first=batch_first)
    if kind == "LSTM":
        compare_module(make, [shape, (L * D, B, H), (L * D, B, H)], call=lambda m, xs: m(xs[0], (xs[1], xs[2])))
    else:
        compare_module(make, [shape, (L * D, B, H)], call=lambda m, xs: m(xs[0], xs[1]))


@pytest.mark.parametrize("kind", ["relu", "LSTM", "GRU"])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("with_state", [False, True])
def test_rnn_unbatched(kind, batch_first, with_state):
    make = _make(kind, num_layers=2, bidirectional=True, batch_first=batch_first)
    if not with_state:
        compare_module(make, [(T, I)])
    elif kind == "LSTM":
        compare_module(make, [(T, I), (4, H), (4, H)], call=lambda m, xs: m(xs[0], (xs[1], xs[2])))
    else:
        compare_module(make, [(T, I), (4, H)], call=lambda m, xs: m(xs[0], xs[1]))


@pytest.mark.parametrize("kind", ["tanh", "LSTM", "GRU"])
def test_rnn_no_bias_float32_and_dropout_eval(kind):
    compare_module(_make(kind, bias=False, num_layers=2), [(T, B, I)], dtype="float32", atol=1e-5, rtol=1e-4)
    # dropout between layers is off in eval mode: same values as torch
    compare_module(_make(kind, num_layers=3, dropout=0.5), [(T, B, I)], train=(False,))


def test_rnn_dropout_train_mode_differs_and_keeps_shapes():
    cgrad.manual_seed(0)
    m = nn.LSTM(I, H, num_layers=2, dropout=0.5)
    x = cgrad.randn(T, B, I)
    out1, (h1, c1) = m(x)
    out2, _ = m(x)
    assert tuple(out1.shape) == (T, B, H) and tuple(h1.shape) == (2, B, H) and tuple(c1.shape) == (2, B, H)
    assert not np.allclose(out1.detach().numpy(), out2.detach().numpy())
    m.eval()
    e1, _ = m(x)
    e2, _ = m(x)
    np.testing.assert_array_equal(e1.detach().numpy(), e2.detach().numpy())


def test_rnn_no_grad_path():
    tm = torch.nn.GRU(I, H, num_layers=2, bidirectional=True).double()
    cm = nn.GRU(I, H, num_layers=2, bidirectional=True).double()
    cm.load_state_dict({k: cgrad.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((T, B, I))
    with cgrad.no_grad():
        out, h = cm(cgrad.tensor(x))
    tout, th = tm(torch.tensor(x))
    np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), atol=1e-10)
    np.testing.assert_allclose(h.numpy(), th.detach().numpy(), atol=1e-10)
    assert not out.requires_grad


@pytest.mark.parametrize("cell,kw", [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}),
                                     ("RNNCell", {"bias": False}), ("LSTMCell", {}), ("LSTMCell", {"bias": False}),
                                     ("GRUCell", {}), ("GRUCell", {"bias": False})])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_state", [False, True])
def test_cells_match_torch(cell, kw, batched, with_state):
    make = lambda lib: getattr(lib.nn, cell)(I, H, **kw)  # noqa: E731
    x = (B, I) if batched else (I,)
    h = (B, H) if batched else (H,)
    if not with_state:
        compare_module(make, [x])
    elif cell == "LSTMCell":
        compare_module(make, [x, h, h], call=lambda m, xs: m(xs[0], (xs[1], xs[2])))
    else:
        compare_module(make, [x, h], call=lambda m, xs: m(xs[0], xs[1]))


REPR_CASES = [
    ("RNN", (4, 6), {}), ("RNN", (4, 6), {"nonlinearity": "relu", "num_layers": 2}),
    ("LSTM", (4, 6), {"num_layers": 3, "bias": False, "batch_first": True, "dropout": 0.25, "bidirectional": True}),
    ("GRU", (4, 6, 2), {}), ("RNNCell", (4, 6), {"nonlinearity": "relu", "bias": False}), ("LSTMCell", (4, 6), {}),
    ("GRUCell", (4, 6), {"bias": False}),
]


@pytest.mark.parametrize("name,args,kw", REPR_CASES)
def test_repr_state_dict_and_shapes_match_torch(name, args, kw):
    tm = getattr(torch.nn, name)(*args, **kw)
    cm = getattr(nn, name)(*args, **kw)
    assert repr(cm) == repr(tm)
    tsd, csd = tm.state_dict(), cm.state_dict()
    assert list(csd) == list(tsd)
    for k in tsd:
        assert tuple(csd[k].shape) == tuple(tsd[k].shape), k
    assert [n for n, _ in cm.named_parameters()] == [n for n, _ in tm.named_parameters()]


def test_default_init_bounds_and_attributes():
    m = nn.LSTM(4, 16, num_layers=2, bidirectional=True)
    bound = 1 / 4.0
    for p in m.parameters():
        a = p.detach().numpy()
        assert np.abs(a).max() <= bound and a.std() > bound / 4
    assert m.mode == "LSTM" and m.proj_size == 0
    assert [len(w) for w in m.all_weights] == [4, 4, 4, 4]
    assert m._flat_weights_names[:4] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"]
    m.flatten_parameters()
    assert nn.RNN(3, 5, 2, "relu").nonlinearity == "relu"


def test_errors():
    with pytest.raises(ValueError, match="proj_size has to be smaller"):
        nn.LSTM(4, 6, proj_size=6)
    with pytest.raises(ValueError, match="only supported for LSTM"):
        nn.GRU(4, 6, proj_size=2)
    with pytest.raises(ValueError, match="Unknown nonlinearity"):
        nn.RNN(4, 6, nonlinearity="gelu")
    with pytest.raises(ValueError, match="dropout should be a number"):
        nn.RNN(4, 6, dropout=1.5)
    with pytest.raises(ValueError, match="hidden_size must be greater than zero"):
        nn.GRU(4, 0)
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.GRU(4, 6, dropout=0.5)
    m = nn.LSTM(4, 6)
    with pytest.raises(ValueError, match="Expected input to be 2D or 3D"):
        m(cgrad.randn(2, 3, 4, 4))
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size"):
        m(cgrad.randn(5, 3, 5))
    with pytest.raises(RuntimeError, match="Expected hidden\\[0\\] size \\(1, 3, 6\\), got \\[1, 2, 6\\]"):
        m(cgrad.randn(5, 3, 4), (cgrad.zeros(1, 2, 6), cgrad.zeros(1, 3, 6)))
    with pytest.raises(ValueError, match="does not match weight dtype"):
        m(cgrad.randn(5, 3, 4, dtype=cgrad.float64))
    with pytest.raises(RuntimeError, match="hx should also be 3-D"):
        nn.GRU(4, 6)(cgrad.randn(5, 3, 4), cgrad.zeros(3, 6))
    with pytest.raises(ValueError, match="Expected input to be 1D or 2D"):
        nn.GRUCell(4, 6)(cgrad.randn(2, 3, 4))
