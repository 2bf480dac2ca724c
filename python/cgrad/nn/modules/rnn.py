"""The recurrent layers, as torch.nn: RNN (tanh / relu), LSTM, GRU and their
single-step cells RNNCell, LSTMCell, GRUCell, with torch's constructor
arguments, parameter names and shapes, default init and repr; they take a
PackedSequence (nn.utils.rnn) and LSTM takes proj_size (Note [Variable-length
recurrence]).

Speed (Note [Recurrent loop]): per layer and direction the whole input
sequence is projected with one F.linear (T*B rows in one GEMM); the time loop
then runs only the recurrent GEMM (addmm into the projected step, so the input
projection and both biases cost nothing per step) and the gate math. The
projected sequence is cut into its T steps by one autograd node (_Steps) whose
backward stacks the T step gradients into one tensor; slicing it step by step
with views would give each step a full-size scatter in backward (T^2 work)."""
from __future__ import annotations

import math
import numbers
import warnings
from typing import Any, List, Optional, Sequence, Tuple

from ... import _C
from ..._tensor import Tensor
from ...autograd.function import Function
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


_LSTM_FUSED_DTYPES = (_C.float32, _C.float64)


def _is_packed(input: Any) -> bool:
    return type(input).__name__ == "PackedSequence" and hasattr(input, "batch_sizes")


def _uniform_init(module: Module) -> None:
    """torch's recurrent init: every parameter uniform in (-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
    bound = 1.0 / math.sqrt(module.hidden_size) if module.hidden_size > 0 else 0.0
    for p in module.parameters():
        init.uniform_(p, -bound, bound)


class _Steps(Function):
    """x (T, B, G) -> T*k tensors: for each step t the pieces of x[t] (B, G) split
    along the last dim by `sizes`. Backward: one stack (and cat) of all step gradients."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, sizes: Sequence[int]) -> Tuple[Tensor, ...]:
        ctx.sizes = sizes
        ctx.shape = tuple(x.shape)
        out: List[Tensor] = []
        for step in x.unbind(0):
            if len(sizes) == 1:
                out.append(step)
            else:
                out.extend(step.split(list(sizes), -1))
        return tuple(out)

    @staticmethod
    def backward(ctx: Any, *grads: Tensor) -> Tuple[Optional[Tensor], None]:
        k = len(ctx.sizes)
        if k == 1:
            return _C.stack(grads, 0), None
        steps = [_C.cat(grads[i:i + k], -1) for i in range(0, len(grads), k)]
        return _C.stack(steps, 0), None


def _steps(x: Tensor, sizes: Sequence[int]) -> Sequence[Tensor]:
    if x.requires_grad:
        return _Steps.apply(x, sizes)
    out: List[Tensor] = []
    for step in x.unbind(0):
        out.extend(step.split(list(sizes), -1) if len(sizes) > 1 else (step,))
    return out


# ---------------------------------------------------------------- one layer, one direction
# x: (T, B, I) time-major; h, c: (B, H); returns the T outputs (B, H) in time order and the last states.

def _run_rnn(x: Tensor, h: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Optional[Tensor], b_hh: Optional[Tensor],
             relu: bool, reverse: bool) -> Tuple[List[Tensor], Tensor]:
    b = b_ih + b_hh if b_ih is not None else None
    xs = _steps(F.linear(x, w_ih, b), (w_hh.shape[0],))
    w_t = w_hh.t().contiguous()
    act = _C.relu if relu else _C.tanh
    addmm = _C.addmm
    outs: List[Tensor] = []
    for xt in (reversed(xs) if reverse else xs):
        h = act(addmm(xt, h, w_t))
        outs.append(h)
    if reverse:
        outs.reverse()
    return outs, h


def _run_lstm(x: Tensor, h: Tensor, c: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Optional[Tensor],
              b_hh: Optional[Tensor], reverse: bool) -> Tuple[Tensor, Tensor, Tensor]:
    """Returns the (T, B, H) outputs and the last states. float32 / float64 sequences take the engine's
    whole-sequence kernel (one node per layer and direction, Note [LSTM layer] in src/ops/nn_rnn.c);
    other dtypes (and autocast, which lowers the projection) take the step loop of cg ops."""
    b = b_ih + b_hh if b_ih is not None else None
    xp = F.linear(x, w_ih, b)
    dt = xp.dtype
    if (dt in _LSTM_FUSED_DTYPES and h.dtype == dt and c.dtype == dt and w_hh.dtype == dt and xp.device.type == "cpu"
            and xp.size(0) > 0 and xp.size(1) > 0):
        return _C._lstm_layer(xp, h, c, w_hh, reverse)
    xs = _steps(xp, (w_hh.shape[0],))
    w_t = w_hh.t().contiguous()
    addmm, sigmoid, tanh, addcmul = _C.addmm, _C.sigmoid, _C.tanh, _C.addcmul
    outs: List[Tensor] = []
    for xt in (reversed(xs) if reverse else xs):
        i, f, g, o = addmm(xt, h, w_t).chunk(4, 1)
        c = addcmul(sigmoid(f) * c, sigmoid(i), tanh(g))
        h = sigmoid(o) * tanh(c)
        outs.append(h)
    if reverse:
        outs.reverse()
    return _C.stack(outs, 0), h, c


def _run_gru(x: Tensor, h: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Optional[Tensor], b_hh: Optional[Tensor],
             reverse: bool) -> Tuple[List[Tensor], Tensor]:
    hs = w_hh.shape[1]
    xs = _steps(F.linear(x, w_ih, b_ih), (2 * hs, hs))
    linear, sigmoid, tanh = F.linear, _C.sigmoid, _C.tanh
    outs: List[Tensor] = []
    n_steps = len(xs) // 2
    order = range(n_steps - 1, -1, -1) if reverse else range(n_steps)
    for t in order:
        x_rz, x_n = xs[2 * t], xs[2 * t + 1]
        h_rz, h_n = linear(h, w_hh, b_hh).split([2 * hs, hs], 1)
        r, z = sigmoid(x_rz + h_rz).chunk(2, 1)
        n = tanh(_C.addcmul(x_n, r, h_n))
        h = _C.addcmul(n, z, h - n)
        outs.append(h)
    if reverse:
        outs.reverse()
    return outs, h


class _Split0(Function):
    """x (N, G) -> its consecutive row blocks of the given sizes; backward: one cat of the block gradients
    (slicing block by block would give each block a full-size scatter in backward)."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, sizes: Sequence[int]) -> Tuple[Tensor, ...]:
        ctx.shape = tuple(x.shape)
        return tuple(x.split(list(sizes), 0))

    @staticmethod
    def backward(ctx: Any, *grads: Tensor) -> Tuple[Optional[Tensor], None]:
        return _C.cat(list(grads), 0), None


def _run_var(mode: str, data: Tensor, sizes: Sequence[int], h: Tensor, c: Optional[Tensor], w: Any,
             reverse: bool) -> Tuple[Tensor, Tensor, Optional[Tensor]]:
    """One layer and direction over packed data (Note [Variable-length recurrence]): the output's packed
    data and the last h (and c). w maps weight_ih / weight_hh / bias_ih / bias_hh / weight_hr to tensors."""
    w_ih, w_hh, w_hr = w["weight_ih"], w["weight_hh"], w.get("weight_hr")
    b_ih, b_hh = w.get("bias_ih"), w.get("bias_hh")
    gru = mode == "GRU"
    b = b_ih if gru else (b_ih + b_hh if b_ih is not None else None)
    xp = F.linear(data, w_ih, b)
    xs = _Split0.apply(xp, list(sizes)) if xp.requires_grad else xp.split(list(sizes), 0)
    outs: List[Optional[Tensor]] = [None] * len(sizes)
    hsz = w_hh.shape[1]
    for t in (range(len(sizes) - 1, -1, -1) if reverse else range(len(sizes))):
        bs = sizes[t]
        hp = h[:bs] if bs < h.size(0) else h
        if mode == "LSTM":
            cp = c[:bs] if bs < c.size(0) else c  # type: ignore[union-attr]
            i, f, g, o = _C.addmm(xs[t], hp, w_hh.t()).chunk(4, 1)
            cn = _C.addcmul(_C.sigmoid(f) * cp, _C.sigmoid(i), _C.tanh(g))
            hn = _C.sigmoid(o) * _C.tanh(cn)
            if w_hr is not None:
                hn = F.linear(hn, w_hr)
            c = _C.cat([cn, c[bs:]], 0) if bs < c.size(0) else cn  # type: ignore[index,union-attr]
        elif gru:
            x_rz, x_n = xs[t].split([2 * hsz, hsz], 1)
            h_rz, h_n = F.linear(hp, w_hh, b_hh).split([2 * hsz, hsz], 1)
            r, z = _C.sigmoid(x_rz + h_rz).chunk(2, 1)
            n = _C.tanh(_C.addcmul(x_n, r, h_n))
            hn = _C.addcmul(n, z, hp - n)
        else:
            pre = _C.addmm(xs[t], hp, w_hh.t())
            hn = _C.relu(pre) if mode == "RNN_RELU" else _C.tanh(pre)
        outs[t] = hn
        h = _C.cat([hn, h[bs:]], 0) if bs < h.size(0) else hn
    return (_C.cat(outs, 0) if outs else xp[:, :0]), h, c  # type: ignore[arg-type]


class RNNBase(Module):
    """Base class of RNN, LSTM and GRU: the stacked, optionally bidirectional parameters
    weight_ih_l{k}[_reverse], weight_hh_l{k}[_reverse], bias_ih_l{k}[_reverse], bias_hh_l{k}[_reverse]."""

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
                     "bidirectional", "proj_size"]

    mode: str
    input_size: int
    hidden_size: int
    num_layers: int
    bias: bool
    batch_first: bool
    dropout: float
    bidirectional: bool
    proj_size: int

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: Any = None, dtype: Any = None) -> None:
        if isinstance(dropout, bool) or not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                             "being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                          stacklevel=2)
        for arg, value, kind in (("bias", bias, bool), ("batch_first", batch_first, bool),
                                 ("input_size", input_size, int), ("hidden_size", hidden_size, int)):
            if not isinstance(value, kind):
                raise TypeError(f"{arg} should be of type {kind.__name__}, got: {type(value).__name__}")
            if kind is int and value <= 0:
                raise ValueError(f"{arg} must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size > 0 and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__()
        self.mode, self.input_size, self.hidden_size, self.num_layers = mode, input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        num_directions = self._num_directions
        gate_size = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}.get(mode)
        if gate_size is None:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size *= hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size  # the width of h (LSTM projections)
        self._flat_weights_names: List[str] = []
        self._all_weights: List[List[str]] = []
        for k in range(num_layers * num_directions):  # k = layer * num_directions + direction
            layer, direction = divmod(k, num_directions)
            tag = f"l{layer}" + ("_reverse" if direction else "")
            width = real_hidden * num_directions if layer else input_size
            params = [(f"weight_ih_{tag}", (gate_size, width)), (f"weight_hh_{tag}", (gate_size, real_hidden))]
            if bias:
                params += [(f"bias_ih_{tag}", (gate_size,)), (f"bias_hh_{tag}", (gate_size,))]
            if proj_size > 0:
                params.append((f"weight_hr_{tag}", (proj_size, hidden_size)))
            for name, shape in params:
                setattr(self, name, Parameter(_C.empty(shape, device=device, dtype=dtype)))
            self._flat_weights_names += [name for name, _ in params]
            self._all_weights.append([name for name, _ in params])
        self.reset_parameters()

    @property
    def _flat_weights(self) -> List[Optional[Tensor]]:
        return [getattr(self, n, None) for n in self._flat_weights_names]

    @property
    def all_weights(self) -> List[List[Parameter]]:
        return [[getattr(self, weight) for weight in weights] for weights in self._all_weights]

    def flatten_parameters(self) -> None:
        """A no-op (torch uses it for cuDNN's packed weights)."""

    def reset_parameters(self) -> None:
        """Every weight and bias uniform in (-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as torch."""
        _uniform_init(self)

    @property
    def _num_directions(self) -> int:
        return 2 if self.bidirectional else 1

    def _state_shape(self, input: Tensor, batch_sizes: Optional[Tensor] = None, cell: bool = False
                     ) -> Tuple[int, int, int]:
        """(num_layers * num_directions, batch, hidden_size): the shape of h_0 (proj_size wide for an LSTM
        with projections; c_0 always hidden_size) for a 3-D input or a packed one (batch_sizes)."""
        batch = int(batch_sizes[0]) if batch_sizes is not None else input.size(0 if self.batch_first else 1)
        width = self.proj_size if self.proj_size > 0 and not cell else self.hidden_size
        return (self.num_layers * self._num_directions, batch, width)

    def check_input(self, input: Tensor, batch_sizes: Optional[Tensor]) -> None:
        w = self._flat_weights[0]
        if w is not None and input.dtype != w.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({w.dtype}). Convert "
                             f"input: input.to({w.dtype}), or convert model: model.to({input.dtype})")
        rank = 3 if batch_sizes is None else 2
        if input.dim() != rank:
            raise RuntimeError(f"input must have {rank} dimensions, got {input.dim()}")
        if input.size(-1) != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.size(-1)}")

    def get_expected_hidden_size(self, input: Tensor, batch_sizes: Optional[Tensor]) -> Tuple[int, int, int]:
        return self._state_shape(input, batch_sizes)

    def check_hidden_size(self, hx: Tensor, expected_hidden_size: Tuple[int, int, int],
                          msg: str = "Expected hidden size {}, got {}") -> None:
        got = tuple(hx.size())
        if got != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(got)))

    def check_forward_args(self, input: Tensor, hidden: Tensor, batch_sizes: Optional[Tensor]) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx: Any, permutation: Optional[Tensor]) -> Any:
        if permutation is None:
            return hx
        return hx.index_select(1, permutation)

    def extra_repr(self) -> str:
        """The sizes, then each option that differs from its default, in torch's order."""
        parts = [f"{self.input_size}, {self.hidden_size}"]
        for name, default in (("proj_size", 0), ("num_layers", 1), ("bias", True), ("batch_first", False),
                              ("dropout", 0), ("bidirectional", False)):
            value = getattr(self, name)
            if (value is not default) if isinstance(default, bool) else (value != default):
                parts.append(f"{name}={value}")
        return ", ".join(parts)

    # ------------------------------------------------------------------ the stacked recurrence

    def _forward(self, input: Any, hx: Any, name: str) -> Tuple[Any, Any]:
        """The forward of RNN / LSTM / GRU: input (T, B, I) / (B, T, I), unbatched (T, I), or a PackedSequence;
        hx the initial state(s) (an (h_0, c_0) pair for LSTM) or None for zeros. Returns (output, h_n) or, for
        LSTM, (output, (h_n, c_n)); a packed input gives a packed output and states in its batch order."""
        lstm = self.mode == "LSTM"
        packed = input if _is_packed(input) else None
        batch_sizes = packed.batch_sizes if packed is not None else None
        if packed is not None:
            input = packed.data
            is_batched = True
        else:
            if input.dim() not in (2, 3):
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D tensor instead")
            is_batched = input.dim() == 3
        states = list(hx) if lstm and hx is not None else ([hx] if hx is not None else None)
        if states is not None:
            want = 3 if is_batched else 2
            if any(h.dim() != want for h in states):
                kind = "batched 3-D" if is_batched else "unbatched 2-D"
                got = (f"({', '.join(f'{h.dim()}-D' for h in states)}) tensors" if lstm else
                       f"{states[0].dim()}-D tensor")
                raise RuntimeError(f"For {kind} input, {'hx and cx' if lstm else 'hx'} should also be {want}-D but "
                                   f"got {got}")
            if not is_batched:
                states = [h.unsqueeze(1) for h in states]
            if packed is not None and packed.sorted_indices is not None:
                states = [h.index_select(1, packed.sorted_indices) for h in states]
        if not is_batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
        if states is None:
            states = [self._zeros(input, batch_sizes)] + ([self._zeros(input, batch_sizes, cell=True)] if lstm else [])
        if lstm:
            self.check_forward_args(input, (states[0], states[1]), batch_sizes)  # type: ignore[arg-type]
        else:
            self.check_forward_args(input, states[0], batch_sizes)
        c0 = states[1] if lstm else None
        if packed is not None or self.proj_size > 0:
            output, h, c = self._run_steps(input, states[0], c0, batch_sizes)
        else:
            output, h, c = self._run(input, states[0], c0)
        outs = [h, c] if lstm else [h]
        if packed is not None:
            output = type(packed)(output, batch_sizes, packed.sorted_indices, packed.unsorted_indices)
            if packed.unsorted_indices is not None:
                outs = [o.index_select(1, packed.unsorted_indices) for o in outs]  # type: ignore[union-attr]
        elif not is_batched:
            output = output.squeeze(0 if self.batch_first else 1)
            outs = [o.squeeze(1) for o in outs]  # type: ignore[union-attr]
        return output, (tuple(outs) if lstm else outs[0])

    def _zeros(self, input: Tensor, batch_sizes: Optional[Tensor] = None, cell: bool = False) -> Tensor:
        return _C.zeros(self._state_shape(input, batch_sizes, cell), dtype=input.dtype, device=input.device)

    def _run_steps(self, input: Tensor, h0: Tensor, c0: Optional[Tensor], batch_sizes: Optional[Tensor]
                   ) -> Tuple[Tensor, Tensor, Optional[Tensor]]:
        """Note [Variable-length recurrence]: the step loop for packed input (and LSTM projections). Packed
        data is the concatenation of the steps, step t holding the batch_sizes[t] sequences still running
        (longest first), so each step updates the first rows of the state and leaves the rest as they are:
        a sequence's state stops at its last step going forward, and going backward starts from h_0 at its
        own last step. A 3-D input is the packed form with every batch size B. Returns the output (packed
        data, or (T, B, D*H) / batch_first), h_n and c_n."""
        if batch_sizes is None:
            x = input.transpose(0, 1) if self.batch_first else input
            sizes = [x.size(1)] * x.size(0)
            data = x.reshape(x.size(0) * x.size(1), x.size(2))
        else:
            sizes = [int(v) for v in batch_sizes.tolist()]
            data = input
        num_directions = self._num_directions
        hs = h0.unbind(0)
        cs = c0.unbind(0) if c0 is not None else None
        h_n: List[Tensor] = []
        c_n: List[Tensor] = []
        for layer in range(self.num_layers):
            dir_outs = []
            for direction in range(num_directions):
                k = layer * num_directions + direction
                w = {n.split("_l")[0]: getattr(self, n) for n in self._all_weights[k]}
                outs, h, c = _run_var(self.mode, data, sizes, hs[k], cs[k] if cs is not None else None, w,
                                      direction == 1)
                dir_outs.append(outs)
                h_n.append(h)
                if c is not None:
                    c_n.append(c)
            data = dir_outs[0] if num_directions == 1 else _C.cat(dir_outs, -1)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                data = F.dropout(data, self.dropout, True)
        output = data
        if batch_sizes is None:
            output = data.reshape(len(sizes), sizes[0] if sizes else 0, data.size(-1))
            if self.batch_first:
                output = output.transpose(0, 1)
        return output, _C.stack(h_n, 0), (_C.stack(c_n, 0) if c0 is not None else None)

    def _run(self, input: Tensor, h0: Tensor, c0: Optional[Tensor]) -> Tuple[Tensor, Tensor, Optional[Tensor]]:
        """input (T, B, I) or (B, T, I); h0, c0 (L*D, B, H) -> output, h_n, c_n."""
        num_directions = self._num_directions
        x = input.transpose(0, 1) if self.batch_first else input
        hs = h0.unbind(0)
        cs = c0.unbind(0) if c0 is not None else None
        h_n: List[Tensor] = []
        c_n: List[Tensor] = []
        mode = self.mode
        output = x
        for layer in range(self.num_layers):
            dir_outs = []
            for direction in range(num_directions):
                k = layer * num_directions + direction  # index into _all_weights and the stacked states
                w = [getattr(self, n) for n in self._all_weights[k]]
                w_ih, w_hh = w[0], w[1]
                b_ih, b_hh = (w[2], w[3]) if self.bias else (None, None)
                rev = direction == 1
                last = layer == self.num_layers - 1
                if mode == "LSTM":
                    seq, h, c = _run_lstm(x, hs[k], cs[k], w_ih, w_hh, b_ih, b_hh, rev)  # type: ignore[index]
                    c_n.append(c)
                    dir_outs.append(seq.transpose(0, 1).contiguous() if last and self.batch_first else seq)
                else:
                    if mode == "GRU":
                        outs, h = _run_gru(x, hs[k], w_ih, w_hh, b_ih, b_hh, rev)
                    else:
                        outs, h = _run_rnn(x, hs[k], w_ih, w_hh, b_ih, b_hh, mode == "RNN_RELU", rev)
                    dir_outs.append(_C.stack(outs, 1 if last and self.batch_first else 0))
                h_n.append(h)
            output = dir_outs[0] if num_directions == 1 else _C.cat(dir_outs, -1)
            x = output
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return output, _C.stack(h_n, 0), (_C.stack(c_n, 0) if c0 is not None else None)


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu), stacked and
    optionally bidirectional. forward(input, hx=None) -> (output, h_n)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)
        self.nonlinearity = nonlinearity

    def forward(self, input: Any, hx: Optional[Tensor] = None) -> Tuple[Any, Tensor]:
        return self._forward(input, hx, "RNN")


class LSTM(RNNBase):
    """Long short-term memory, stacked and optionally bidirectional, with projections (proj_size > 0).
    forward(input, (h_0, c_0)=None) -> (output, (h_n, c_n))."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input: Tensor, batch_sizes: Optional[Tensor]) -> Tuple[int, int, int]:
        return self._state_shape(input, batch_sizes, cell=True)

    def check_forward_args(self, input: Tensor, hidden: Tuple[Tensor, Tensor],  # type: ignore[override]
                           batch_sizes: Optional[Tensor]) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx: Any, permutation: Optional[Tensor]) -> Any:
        if permutation is None:
            return hx
        return (hx[0].index_select(1, permutation), hx[1].index_select(1, permutation))

    def forward(self, input: Any, hx: Optional[Tuple[Tensor, Tensor]] = None
                ) -> Tuple[Any, Tuple[Tensor, Tensor]]:
        return self._forward(input, hx, "LSTM")


class GRU(RNNBase):
    """Gated recurrent unit, stacked and optionally bidirectional. forward(input, hx=None) -> (output, h_n)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input: Any, hx: Optional[Tensor] = None) -> Tuple[Any, Tensor]:
        return self._forward(input, hx, "GRU")


# ---------------------------------------------------------------- cells

class RNNCellBase(Module):
    """Base class of the cells: weight_ih (chunks*H, I), weight_hh (chunks*H, H), bias_ih, bias_hh (chunks*H)."""

    __constants__ = ["input_size", "hidden_size", "bias"]

    input_size: int
    hidden_size: int
    bias: bool
    weight_ih: Tensor
    weight_hh: Tensor

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(_C.empty((num_chunks * hidden_size, input_size), device=device, dtype=dtype))
        self.weight_hh = Parameter(_C.empty((num_chunks * hidden_size, hidden_size), device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(_C.empty(num_chunks * hidden_size, device=device, dtype=dtype))
            self.bias_hh = Parameter(_C.empty(num_chunks * hidden_size, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        """The sizes, then bias=False and a non-tanh nonlinearity when set."""
        parts = [f"{self.input_size}, {self.hidden_size}"]
        if self.__dict__.get("bias", True) is not True:
            parts.append(f"bias={self.bias}")
        if self.__dict__.get("nonlinearity", "tanh") != "tanh":
            parts.append(f"nonlinearity={self.__dict__['nonlinearity']}")
        return ", ".join(parts)

    def reset_parameters(self) -> None:
        """Every weight and bias uniform in (-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as torch."""
        _uniform_init(self)

    def _batch(self, input: Tensor, name: str) -> Tuple[Tensor, bool]:
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        is_batched = input.dim() == 2
        return (input if is_batched else input.unsqueeze(0)), is_batched

    def _zeros(self, input: Tensor) -> Tensor:
        return _C.zeros((input.size(0), self.hidden_size), dtype=input.dtype, device=input.device)


class RNNCell(RNNCellBase):
    """One Elman RNN step: h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu)."""

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]
    nonlinearity: str

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Optional[Tensor] = None) -> Tensor:
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"RNNCell: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        input, is_batched = self._batch(input, "RNNCell")
        hx = self._zeros(input) if hx is None else (hx if is_batched else hx.unsqueeze(0))
        pre = F.linear(input, self.weight_ih, self.bias_ih) + F.linear(hx, self.weight_hh, self.bias_hh)
        if self.nonlinearity == "tanh":
            ret = _C.tanh(pre)
        elif self.nonlinearity == "relu":
            ret = _C.relu(pre)
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: (h', c') from input and (h, c)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Optional[Tuple[Tensor, Tensor]] = None) -> Tuple[Tensor, Tensor]:
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got {value.dim()}D instead")
        input, is_batched = self._batch(input, "LSTMCell")
        if hx is None:
            zeros = self._zeros(input)
            hx = (zeros, zeros)
        elif not is_batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        gates = F.linear(input, self.weight_ih, self.bias_ih) + F.linear(hx[0], self.weight_hh, self.bias_hh)
        i, f, g, o = gates.chunk(4, 1)
        c = _C.addcmul(_C.sigmoid(f) * hx[1], _C.sigmoid(i), _C.tanh(g))
        h = _C.sigmoid(o) * _C.tanh(c)
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step: h' from input and h."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Optional[Tensor] = None) -> Tensor:
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"GRUCell: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        input, is_batched = self._batch(input, "GRUCell")
        hx = self._zeros(input) if hx is None else (hx if is_batched else hx.unsqueeze(0))
        x_r, x_z, x_n = F.linear(input, self.weight_ih, self.bias_ih).chunk(3, 1)
        h_r, h_z, h_n = F.linear(hx, self.weight_hh, self.bias_hh).chunk(3, 1)
        r = _C.sigmoid(x_r + h_r)
        z = _C.sigmoid(x_z + h_z)
        n = _C.tanh(_C.addcmul(x_n, r, h_n))
        h = _C.addcmul(n, z, hx - n)
        return h if is_batched else h.squeeze(0)
