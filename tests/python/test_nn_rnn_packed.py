"""nn.utils.rnn (PackedSequence and the pack / pad functions) and RNN / LSTM /
GRU on packed input and with LSTM projections (proj_size), against PyTorch:
outputs, final states, and the gradients of the inputs, the initial states and
every parameter (Note [Variable-length recurrence] in nn/modules/rnn.py)."""
import numpy as np
import pytest
import torch

import cgrad
from nn_compare import copy_state, to_numpy

LENGTHS = [3, 5, 1, 4]


def _padded(lib, rng_seed=0, feat=3, batch_first=False):
    x = np.random.default_rng(rng_seed).standard_normal((len(LENGTHS), max(LENGTHS), feat))
    t = lib.tensor(x if batch_first else x.transpose(1, 0, 2), dtype=lib.float64, requires_grad=True)
    return t


def close(a, b, tol=1e-9):
    np.testing.assert_allclose(to_numpy(a), to_numpy(b), rtol=tol, atol=tol)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted", [False, True])
def test_pack_pad_round_trip_and_gradients(batch_first, enforce_sorted):
    lengths = sorted(LENGTHS, reverse=True) if enforce_sorted else LENGTHS
    res = []
    for lib in (torch, cgrad):
        R = lib.nn.utils.rnn
        x = _padded(lib, batch_first=batch_first)
        p = R.pack_padded_sequence(x, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
        pad, ln = R.pad_packed_sequence(p, batch_first=batch_first, padding_value=-2.0, total_length=6)
        (pad * pad).sum().backward()
        res.append((p.data, p.batch_sizes.tolist(), None if p.sorted_indices is None else p.sorted_indices.tolist(),
                    pad, ln.tolist(), x.grad))
    (td, tb, ts, tp, tl, tg), (cd, cb, cs, cp, cl, cg) = res
    close(td, cd)
    close(tp, cp)
    close(tg, cg)
    assert (tb, ts, tl) == (cb, cs, cl)


def test_pad_sequence_unpad_pack_sequence_and_errors():
    for lib in (torch, cgrad):
        R = lib.nn.utils.rnn
        seqs = [lib.arange(n * 2, dtype=lib.float64).reshape(n, 2) for n in (2, 4, 3)]
        for side in ("left", "right"):
            for bf in (False, True):
                got = R.pad_sequence(seqs, batch_first=bf, padding_value=-1.0, padding_side=side)
                ref = torch.nn.utils.rnn.pad_sequence([torch.tensor(to_numpy(s)) for s in seqs], batch_first=bf,
                                                      padding_value=-1.0, padding_side=side)
                close(got, ref)
        p = R.pack_sequence(seqs, enforce_sorted=False)
        assert [tuple(t.shape) for t in R.unpack_sequence(p)] == [(2, 2), (4, 2), (3, 2)]
        assert [tuple(t.shape) for t in R.unpad_sequence(R.pad_sequence(seqs), lib.tensor([2, 4, 3]))] == \
            [(2, 2), (4, 2), (3, 2)]
        assert R.invert_permutation(lib.tensor([2, 0, 1])).tolist() == [1, 2, 0]
        with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
            R.pack_sequence(seqs)
        with pytest.raises(RuntimeError, match="greater than 0"):
            R.pack_padded_sequence(lib.zeros(3, 2, 1), [2, 0])
        with pytest.raises(ValueError, match="Expected total_length to be at least"):
            R.pad_packed_sequence(p, total_length=2)
        q = p.to(lib.float32)
        assert q.data.dtype == lib.float32 and q.double().data.dtype == lib.float64 and not q.is_cuda


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("num_layers,bidirectional", [(1, False), (2, True)])
@pytest.mark.parametrize("with_state", [False, True])
def test_rnn_on_packed_input(kind, num_layers, bidirectional, with_state):
    mods, res = [], []
    for lib in (torch, cgrad):
        m = getattr(lib.nn, kind)(3, 4, num_layers=num_layers, bidirectional=bidirectional).double()
        if lib is cgrad:
            copy_state(mods[0], m)
        mods.append(m)
        x = _padded(lib)
        p = lib.nn.utils.rnn.pack_padded_sequence(x, LENGTHS, enforce_sorted=False)
        d = 2 if bidirectional else 1
        hx = None
        if with_state:
            rng = np.random.default_rng(5)
            h0 = lib.tensor(rng.standard_normal((num_layers * d, len(LENGTHS), 4)), dtype=lib.float64,
                            requires_grad=True)
            c0 = lib.tensor(rng.standard_normal((num_layers * d, len(LENGTHS), 4)), dtype=lib.float64,
                            requires_grad=True)
            hx = (h0, c0) if kind == "LSTM" else h0
        out, h = m(p, hx)
        states = list(h) if kind == "LSTM" else [h]
        assert isinstance(out, lib.nn.utils.rnn.PackedSequence)
        padded, _ = lib.nn.utils.rnn.pad_packed_sequence(out)
        loss = (padded * padded).sum() + sum((s * s * 0.5).sum() for s in states)
        loss.backward()
        grads = [x.grad] + ([t.grad for t in (hx if kind == "LSTM" else (hx,))] if with_state else [])
        res.append((out.data, states, grads, [q.grad for q in m.parameters()]))
    (to, ts, tg, tpg), (co, cs, cg, cpg) = res
    close(to, co)
    for a, b in zip(ts, cs):
        close(a, b)
    for a, b in zip(tg, cg):
        close(a, b)
    for a, b in zip(tpg, cpg):
        close(a, b)


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_lstm_proj_size(packed, batch_first):
    mods, res = [], []
    for lib in (torch, cgrad):
        m = lib.nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2, batch_first=batch_first).double()
        if lib is cgrad:
            copy_state(mods[0], m)
        mods.append(m)
        x = _padded(lib, batch_first=batch_first)
        inp = lib.nn.utils.rnn.pack_padded_sequence(x, LENGTHS, batch_first=batch_first, enforce_sorted=False) \
            if packed else x
        out, (h, c) = m(inp)
        data = out.data if packed else out
        ((data * data).sum() + (h * c[..., :2]).sum()).backward()
        res.append((data, h, c, x.grad, [q.grad for q in m.parameters()], [n for n, _ in m.named_parameters()]))
    (td, th, tc, tx, tpg, tn), (cd, ch, cc, cx, cpg, cn) = res
    assert tn == cn and th.shape == ch.shape == (4, 4, 2) and tc.shape == cc.shape == (4, 4, 5)
    for a, b in zip((td, th, tc, tx, *tpg), (cd, ch, cc, cx, *cpg)):
        close(a, b)


def test_unbatched_and_shape_errors_with_projections():
    m = cgrad.nn.LSTM(3, 5, proj_size=2)
    out, (h, c) = m(cgrad.randn(6, 3))
    assert out.shape == (6, 2) and h.shape == (1, 2) and c.shape == (1, 5)
    with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(1, 4, 2\)"):
        m(cgrad.randn(6, 4, 3), (cgrad.zeros(1, 4, 5), cgrad.zeros(1, 4, 5)))
    with pytest.raises(ValueError, match="only supported for LSTM"):
        cgrad.nn.GRU(3, 5, proj_size=2)
