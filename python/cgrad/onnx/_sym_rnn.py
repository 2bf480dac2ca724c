"""Symbolics of the recurrent layers nn.LSTM, nn.GRU and nn.RNN as ONNX's
LSTM / GRU / RNN ops, one node per layer (bidirectional layers as one
"bidirectional" node). The weights are re-laid out for ONNX: gates reordered
(LSTM i,f,g,o -> i,o,f,c; GRU r,z,n -> z,r,h), directions stacked, and the
input and recurrent biases concatenated; GRU uses linear_before_reset=1,
which is PyTorch's formula. No initial state means ONNX's default zeros, so
the batch size stays free."""
from __future__ import annotations

from typing import Any, List

import numpy as np

from .. import nn
from ._graph import np_dtype
from ._registry import register_module

_ORDER = {"LSTM": [0, 3, 1, 2], "GRU": [1, 0, 2], "RNN_TANH": [0], "RNN_RELU": [0]}
_OP = {"LSTM": "LSTM", "GRU": "GRU", "RNN_TANH": "RNN", "RNN_RELU": "RNN"}


def _gates(arr: np.ndarray, order: List[int]) -> np.ndarray:
    return np.concatenate([c for c in (np.split(arr, len(order), axis=0)[i] for i in order)], axis=0)


def _numpy(t: Any) -> np.ndarray:
    return t.detach().contiguous().numpy()


@register_module(nn.LSTM, nn.GRU, nn.RNN)
def rnn(ctx: Any, out: Any, m: Any, input: Any, hx: Any = None) -> List[str]:
    if getattr(m, "proj_size", 0):
        raise NotImplementedError("cgrad.onnx.export: LSTM with proj_size > 0")
    if not ctx.export_params:
        raise NotImplementedError("cgrad.onnx.export: recurrent layers with export_params=False (their weights are "
                                  "re-laid out for ONNX and are always stored in the model)")
    if m.training and m.dropout > 0 and m.num_layers > 1:
        raise NotImplementedError(f"cgrad.onnx.export: {type(m).__name__} in training mode with dropout between "
                                  "layers; export the model in eval mode")
    mode = m.mode
    order = _ORDER[mode]
    H, D = m.hidden_size, 2 if m.bidirectional else 1
    dt = np_dtype(input.dtype)
    g = ctx.g
    batched = input.dim() == 3
    x = ctx.v(input)
    if not batched:
        x = g.unsqueeze(x, [1])
    elif m.batch_first:
        x = g.op("Transpose", x, perm=[1, 0, 2])
    h0 = c0 = None
    if hx is not None:
        h, c = (hx if mode == "LSTM" else (hx, None))
        h0 = ctx.v(h) if batched else g.unsqueeze(ctx.v(h), [1])
        if c is not None:
            c0 = ctx.v(c) if batched else g.unsqueeze(ctx.v(c), [1])
    prefix = ctx.module_names.get(id(m), "rnn")
    hs, cs = [], []
    for layer in range(m.num_layers):
        Ws, Rs, Bs = [], [], []
        for d in range(D):
            tag = f"l{layer}" + ("_reverse" if d else "")
            Ws.append(_gates(_numpy(getattr(m, f"weight_ih_{tag}")), order))
            Rs.append(_gates(_numpy(getattr(m, f"weight_hh_{tag}")), order))
            if m.bias:
                Bs.append(np.concatenate([_gates(_numpy(getattr(m, f"bias_ih_{tag}")), order),
                                          _gates(_numpy(getattr(m, f"bias_hh_{tag}")), order)]))
            else:
                Bs.append(np.zeros(2 * len(order) * H, dtype=dt))
        W = g.initializer(f"{prefix}.onnx_W_l{layer}", np.stack(Ws).astype(dt))
        R = g.initializer(f"{prefix}.onnx_R_l{layer}", np.stack(Rs).astype(dt))
        B = g.initializer(f"{prefix}.onnx_B_l{layer}", np.stack(Bs).astype(dt))
        init_h = init_c = None
        if h0 is not None:
            init_h = g.op("Slice", h0, g.ints([layer * D]), g.ints([(layer + 1) * D]), g.ints([0]))
        if c0 is not None:
            init_c = g.op("Slice", c0, g.ints([layer * D]), g.ints([(layer + 1) * D]), g.ints([0]))
        attrs = dict(hidden_size=H, direction="bidirectional" if D == 2 else "forward")
        if mode == "LSTM":
            Y, Yh, Yc = g.op("LSTM", x, W, R, B, None, init_h, init_c, outputs=3, **attrs)
            cs.append(Yc)
        elif mode == "GRU":
            Y, Yh = g.op("GRU", x, W, R, B, None, init_h, outputs=2, linear_before_reset=1, **attrs)
        else:
            act = "Tanh" if mode == "RNN_TANH" else "Relu"
            Y, Yh = g.op("RNN", x, W, R, B, None, init_h, outputs=2, activations=[act] * D, **attrs)
        hs.append(Yh)
        # Y is (seq, D, batch, H): the next layer's input is (seq, batch, D*H)
        x = g.op("Reshape", g.op("Transpose", Y, perm=[0, 2, 1, 3]), g.ints([0, 0, -1]))
    output = x
    if not batched:
        output = g.squeeze(output, [1])
    elif m.batch_first:
        output = g.op("Transpose", output, perm=[1, 0, 2])
    h_n = hs[0] if len(hs) == 1 else g.op("Concat", *hs, axis=0)
    if not batched:
        h_n = g.squeeze(h_n, [1])
    if mode != "LSTM":
        return [output, h_n]
    c_n = cs[0] if len(cs) == 1 else g.op("Concat", *cs, axis=0)
    if not batched:
        c_n = g.squeeze(c_n, [1])
    return [output, h_n, c_n]
