"""The whole-sequence LSTM kernel (_C._lstm_layer, nn.LSTM's float32 / float64 path): gradcheck and
gradgradcheck of the op, the fused path against the step loop of cg ops and against torch, and its
argument errors."""
import numpy as np
import pytest
import torch

import cgrad
from cgrad import _C
from cgrad.nn.modules import rnn


def _args(T, B, H, dtype=cgrad.float64, seed=0):
    rng = np.random.default_rng(seed)
    shapes = [(T, B, 4 * H), (B, H), (B, H), (4 * H, H)]
    return [cgrad.from_numpy(rng.standard_normal(s).astype(np.float64)).to(dtype).requires_grad_() for s in shapes]


@pytest.mark.parametrize("reverse", [False, True])
def test_gradcheck_and_gradgradcheck(reverse):
    args = _args(3, 2, 3)
    fn = lambda xp, h0, c0, w: _C._lstm_layer(xp, h0, c0, w, reverse)  # noqa: E731
    assert cgrad.autograd.gradcheck(fn, args)
    assert cgrad.autograd.gradgradcheck(fn, args)


def _models(bidirectional, batch_first, dtype):
    torch.manual_seed(0)
    tm = torch.nn.LSTM(5, 6, num_layers=2, bidirectional=bidirectional, batch_first=batch_first).to(dtype)
    cm = cgrad.nn.LSTM(5, 6, num_layers=2, bidirectional=bidirectional, batch_first=batch_first)
    cm = cm.to(getattr(cgrad, str(dtype).split(".")[1]))
    cm.load_state_dict({k: cgrad.from_numpy(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})
    return tm, cm


def _run(model, fw, x, fused=True):
    saved = rnn._LSTM_FUSED_DTYPES
    if not fused:
        rnn._LSTM_FUSED_DTYPES = ()
    try:
        xt = fw.from_numpy(x.copy()).requires_grad_()
        out, (h, c) = model(xt)
        (out.sum() + (h * h).sum() + c.sum()).backward()
    finally:
        rnn._LSTM_FUSED_DTYPES = saved
    grads = [xt.grad] + [p.grad for p in model.parameters()]
    res = [t.detach().numpy().copy() for t in [out, h, c] + grads]
    model.zero_grad()
    return res


@pytest.mark.parametrize("bidirectional,batch_first", [(False, False), (True, True)])
def test_fused_matches_step_loop_and_torch_float32(bidirectional, batch_first):
    tm, cm = _models(bidirectional, batch_first, torch.float32)
    x = np.random.default_rng(1).standard_normal((4, 3, 5)).astype(np.float32)
    fused, loop, ref = _run(cm, cgrad, x), _run(cm, cgrad, x, fused=False), _run(tm, torch, x)
    for a, b, r in zip(fused, loop, ref):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(a, r, rtol=1e-4, atol=1e-5)


def test_float64_matches_torch_and_given_states():
    tm, cm = _models(False, False, torch.float64)
    rng = np.random.default_rng(2)
    x, h0, c0 = rng.standard_normal((5, 2, 5)), rng.standard_normal((2, 2, 6)), rng.standard_normal((2, 2, 6))
    out, (h, c) = cm(cgrad.from_numpy(x), (cgrad.from_numpy(h0), cgrad.from_numpy(c0)))
    tout, (th, tc) = tm(torch.from_numpy(x), (torch.from_numpy(h0), torch.from_numpy(c0)))
    for a, b in ((out, tout), (h, th), (c, tc)):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_no_grad_records_no_node():
    args = [a.detach() for a in _args(2, 2, 3)]
    out, h, c = _C._lstm_layer(*args)
    assert out.grad_fn is None and not out.requires_grad
    np.testing.assert_array_equal(h.numpy(), out[-1].numpy())
    out_r, h_r, _ = _C._lstm_layer(*args, reverse=True)
    np.testing.assert_array_equal(h_r.numpy(), out_r[0].numpy())


def test_argument_errors():
    xp, h0, c0, w = (a.detach() for a in _args(2, 2, 3))
    with pytest.raises(RuntimeError, match=r"lstm_layer.*shapes do not match.*\(2, 2, 12\).*\(2, 3\).*\(2, 4\)"):
        _C._lstm_layer(xp, h0, cgrad.zeros(2, 4, dtype=cgrad.float64), w)
    with pytest.raises(RuntimeError, match="lstm_layer.*float32 and float64.*int64"):
        _C._lstm_layer(xp.long(), h0.long(), c0.long(), w.long())
    with pytest.raises(RuntimeError, match="lstm_layer"):
        _C._lstm_layer(xp, h0.float(), c0, w)
    with pytest.raises(TypeError):
        _C._lstm_layer(xp, h0, c0)
