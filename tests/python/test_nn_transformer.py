"""MultiheadAttention and the Transformer modules against torch: outputs, attention weights,
input and parameter gradients for every option (masks incl. key padding and causal, batch_first,
unbatched, kdim / vdim, add_bias_kv, add_zero_attn, norm_first, activations), reprs,
state_dict keys and errors."""
import numpy as np
import pytest
import torch

import cgrad
import cgrad.nn as nn
from nn_compare import compare_module

pytestmark = [pytest.mark.filterwarnings("ignore:Support for mismatched"),
              pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")]

E, NH, L, S, N = 8, 2, 5, 4, 3


def _res(out):
    """MultiheadAttention's (output, weights): weights None (need_weights=False) left out of the comparison."""
    if out[1] is None:
        return out[0]
    return out


def _pad_mask(n, s):
    """A bool key-padding mask (n, s): True = padded; row i pads its last i % (s - 1) keys."""
    m = np.zeros((n, s), dtype=bool)
    for i in range(n):
        k = i % (s - 1)
        if k:
            m[i, s - k:] = True
    return m


def _causal(sz):
    return np.triu(np.full((sz, sz), -np.inf), 1)


# ---------------------------------------------------------------- MultiheadAttention

@pytest.mark.parametrize("need_weights,average", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("batch_first", [False, True])
def test_mha_self_attention(need_weights, average, batch_first):
    x = (N, L, E) if batch_first else (L, N, E)
    compare_module(lambda lib: lib.nn.MultiheadAttention(E, NH, batch_first=batch_first), [x],
                   call=lambda m, xs: _res(m(xs[0], xs[0], xs[0], need_weights=need_weights,
                                             average_attn_weights=average)))


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("kv_same", [True, False])
def test_mha_cross_attention_and_masks(need_weights, kv_same):
    rng = np.random.default_rng(3)
    kpm = _pad_mask(N, S)
    attn_mask = rng.standard_normal((L, S))

    def call(m, xs):
        lib = torch if isinstance(xs[0], torch.Tensor) else cgrad
        v = xs[1] if kv_same else xs[2]
        return _res(m(xs[0], xs[1], v, key_padding_mask=lib.tensor(kpm), attn_mask=xs[3], need_weights=need_weights))
    compare_module(lambda lib: lib.nn.MultiheadAttention(E, NH), [(L, N, E), (S, N, E), (S, N, E), attn_mask],
                   call=call)


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_bool_and_3d_masks(need_weights):
    rng = np.random.default_rng(4)
    bool_mask = rng.random((L, S)) < 0.3
    bool_mask[:, 0] = False
    mask3 = rng.standard_normal((N * NH, L, S))

    def call(m, xs):
        lib = torch if isinstance(xs[0], torch.Tensor) else cgrad
        a = _res(m(xs[0], xs[1], xs[1], attn_mask=lib.tensor(bool_mask), need_weights=need_weights))
        b = _res(m(xs[0], xs[1], xs[1], attn_mask=xs[2], need_weights=need_weights))
        return a, b
    compare_module(lambda lib: lib.nn.MultiheadAttention(E, NH), [(L, N, E), (S, N, E), mask3], call=call)


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("with_padding", [False, True])
def test_mha_causal(need_weights, with_padding):
    mask = _causal(L)
    kpm = _pad_mask(N, L)

    def call(m, xs):
        lib = torch if isinstance(xs[0], torch.Tensor) else cgrad
        k = lib.tensor(kpm) if with_padding else None
        return _res(m(xs[0], xs[0], xs[0], attn_mask=xs[1], key_padding_mask=k, is_causal=True,
                      need_weights=need_weights))
    compare_module(lambda lib: lib.nn.MultiheadAttention(E, NH, batch_first=True), [(N, L, E), mask], call=call)


@pytest.mark.parametrize("kw", [{"kdim": 5, "vdim": 3}, {"add_bias_kv": True}, {"add_zero_attn": True},
                                {"bias": False}, {"add_bias_kv": True, "add_zero_attn": True, "kdim": 6}])
@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_options(kw, need_weights):
    kd, vd = kw.get("kdim", E), kw.get("vdim", E)
    kpm = _pad_mask(N, S)

    def call(m, xs):
        lib = torch if isinstance(xs[0], torch.Tensor) else cgrad
        return _res(m(xs[0], xs[1], xs[2], key_padding_mask=lib.tensor(kpm), attn_mask=xs[3],
                      need_weights=need_weights))
    compare_module(lambda lib: lib.nn.MultiheadAttention(E, NH, **kw), [(L, N, E), (S, N, kd), (S, N, vd), (L, S)],
                   call=call)


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_unbatched(need_weights):
    kpm = np.array([False, False, True, False])

    def call(m, xs):
        lib = torch if isinstance(xs[0], torch.Tensor) else cgrad
        return _res(m(xs[0], xs[1], xs[1], key_padding_mask=lib.tensor(kpm), attn_mask=xs[2],
                      need_weights=need_weights))
    compare_module(lambda lib: lib.nn.MultiheadAttention(E, NH, batch_first=True), [(L, E), (S, E), (NH, L, S)],
                   call=call)


def test_mha_float32_and_no_grad():
    compare_module(lambda lib: lib.nn.MultiheadAttention(E, NH, batch_first=True), [(N, L, E)], dtype="float32",
                   atol=1e-5, rtol=1e-4, call=lambda m, xs: m(xs[0], xs[0], xs[0]))
    tm = torch.nn.MultiheadAttention(E, NH, batch_first=True).eval()
    cm = nn.MultiheadAttention(E, NH, batch_first=True).eval()
    cm.load_state_dict({k: cgrad.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((N, L, E)).astype("float32")
    with torch.no_grad():  # torch's fused inference path
        t_out, t_w = tm(*(torch.tensor(x),) * 3)
    with cgrad.no_grad():
        c_out, c_w = cm(*(cgrad.tensor(x),) * 3)
    np.testing.assert_allclose(c_out.numpy(), t_out.numpy(), atol=1e-5)
    np.testing.assert_allclose(c_w.numpy(), t_w.numpy(), atol=1e-5)


# ---------------------------------------------------------------- Transformer layers

@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_encoder_layer(norm_first, batch_first, activation):
    x = (N, L, E) if batch_first else (L, N, E)
    kpm = _pad_mask(N, L)

    def call(m, xs):
        lib = torch if isinstance(xs[0], torch.Tensor) else cgrad
        return m(xs[0]), m(xs[0], src_mask=xs[1], src_key_padding_mask=lib.tensor(kpm))
    compare_module(lambda lib: lib.nn.TransformerEncoderLayer(E, NH, 16, dropout=0.0, activation=activation,
                                                              batch_first=batch_first, norm_first=norm_first),
                   [x, (L, L)], call=call)


def test_encoder_layer_callable_activation_no_bias_unbatched_causal():
    def call(m, xs):
        return m(xs[0], src_mask=xs[1], is_causal=True)
    compare_module(lambda lib: lib.nn.TransformerEncoderLayer(E, NH, 16, dropout=0.0, activation=lib.tanh, bias=False,
                                                              layer_norm_eps=1e-3),
                   [(L, E), _causal(L)], call=call)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_decoder_layer(norm_first, batch_first):
    tgt = (N, L, E) if batch_first else (L, N, E)
    mem = (N, S, E) if batch_first else (S, N, E)
    tkpm, mkpm = _pad_mask(N, L), _pad_mask(N, S)

    def call(m, xs):
        lib = torch if isinstance(xs[0], torch.Tensor) else cgrad
        return m(xs[0], xs[1], tgt_mask=xs[2], memory_mask=xs[3], tgt_key_padding_mask=lib.tensor(tkpm),
                 memory_key_padding_mask=lib.tensor(mkpm), tgt_is_causal=True)
    compare_module(lambda lib: lib.nn.TransformerDecoderLayer(E, NH, 16, dropout=0.0, activation="gelu",
                                                              batch_first=batch_first, norm_first=norm_first),
                   [tgt, mem, _causal(L), (L, S)], call=call)


def test_encoder_and_decoder_stacks():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        def make_enc(lib):
            layer = lib.nn.TransformerEncoderLayer(E, NH, 16, dropout=0.0, batch_first=True)
            return lib.nn.TransformerEncoder(layer, 2, norm=lib.nn.LayerNorm(E), enable_nested_tensor=False)
        kpm = _pad_mask(N, L)

        def call_enc(m, xs):
            lib = torch if isinstance(xs[0], torch.Tensor) else cgrad
            return m(xs[0], mask=xs[1], src_key_padding_mask=lib.tensor(kpm)), m(xs[0], mask=xs[1])
        tm, cm = compare_module(make_enc, [(N, L, E), _causal(L)], call=call_enc)
        assert [n for n, _ in cm.named_parameters()] == [n for n, _ in tm.named_parameters()]

        def make_dec(lib):
            layer = lib.nn.TransformerDecoderLayer(E, NH, 16, dropout=0.0)
            return lib.nn.TransformerDecoder(layer, 2)
        compare_module(make_dec, [(L, N, E), (S, N, E), _causal(L)], call=lambda m, xs: m(xs[0], xs[1], tgt_mask=xs[2]))


def test_transformer():
    def make(lib):
        return lib.nn.Transformer(E, NH, 2, 2, 16, dropout=0.0, batch_first=True)

    def call(m, xs):
        lib = torch if isinstance(xs[0], torch.Tensor) else cgrad
        mask = lib.nn.Transformer.generate_square_subsequent_mask(L, dtype=xs[0].dtype)
        return m(xs[0], xs[1], tgt_mask=mask, tgt_is_causal=True)
    compare_module(make, [(N, S, E), (N, L, E)], call=call)


def test_transformer_train_mode_with_dropout_runs():
    cgrad.manual_seed(0)
    m = nn.TransformerEncoderLayer(E, NH, 16, dropout=0.5)
    x = cgrad.randn(L, N, E, requires_grad=True)
    out = m(x)
    out.sum().backward()
    assert tuple(out.shape) == (L, N, E) and x.grad is not None
    m.eval()
    np.testing.assert_array_equal(m(x).detach().numpy(), m(x).detach().numpy())


def test_generate_square_subsequent_mask():
    a = nn.Transformer.generate_square_subsequent_mask(4)
    b = torch.nn.Transformer.generate_square_subsequent_mask(4)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert a.dtype == cgrad.float32
    assert nn.Transformer.generate_square_subsequent_mask(3, dtype=cgrad.float64).dtype == cgrad.float64


def _both(fn):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        return fn(torch), fn(cgrad)


@pytest.mark.parametrize("make", [
    lambda lib: lib.nn.MultiheadAttention(E, NH),
    lambda lib: lib.nn.MultiheadAttention(E, NH, kdim=3, vdim=5, add_bias_kv=True, bias=False),
    lambda lib: lib.nn.TransformerEncoderLayer(E, NH, 16),
    lambda lib: lib.nn.TransformerEncoderLayer(E, NH, 16, activation="gelu", bias=False),
    lambda lib: lib.nn.TransformerEncoderLayer(E, NH, 16, activation=lib.nn.GELU()),
    lambda lib: lib.nn.TransformerDecoderLayer(E, NH, 16, norm_first=True),
    lambda lib: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(E, NH, 16), 2),
    lambda lib: lib.nn.TransformerDecoder(lib.nn.TransformerDecoderLayer(E, NH, 16), 2, lib.nn.LayerNorm(E)),
    lambda lib: lib.nn.Transformer(E, NH, 1, 2, 16),
])
def test_repr_and_state_dict_match_torch(make):
    tm, cm = _both(make)
    assert repr(cm) == repr(tm)
    tsd, csd = tm.state_dict(), cm.state_dict()
    assert list(csd) == list(tsd)
    for k in tsd:
        assert tuple(csd[k].shape) == tuple(tsd[k].shape), k


def test_default_init():
    m = nn.MultiheadAttention(16, 4, add_bias_kv=True)
    assert np.all(m.in_proj_bias.detach().numpy() == 0) and np.all(m.out_proj.bias.detach().numpy() == 0)
    bound = (6 / (16 + 48)) ** 0.5
    w = m.in_proj_weight.detach().numpy()
    assert np.abs(w).max() <= bound and w.std() > bound / 4
    assert type(m.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
    t = nn.Transformer(16, 4, 1, 1, 32)
    w = t.encoder.layers[0].linear1.weight.detach().numpy()  # xavier_uniform_ over every matrix
    assert np.abs(w).max() <= (6 / (16 + 32)) ** 0.5
    layer = nn.TransformerEncoderLayer(16, 4)
    assert layer.activation_relu_or_gelu == 1
    assert nn.TransformerEncoderLayer(16, 4, activation="gelu").activation_relu_or_gelu == 2
    assert nn.TransformerEncoderLayer(16, 4, activation=nn.ReLU()).activation_relu_or_gelu == 1
    assert nn.TransformerEncoderLayer(16, 4, activation=nn.Tanh()).activation_relu_or_gelu == 0
    assert copy_is_deep(nn.TransformerEncoder(layer, 2, enable_nested_tensor=False))


def copy_is_deep(enc):
    a, b = enc.layers[0].linear1.weight, enc.layers[1].linear1.weight
    return a is not b and np.array_equal(a.detach().numpy(), b.detach().numpy())


def test_errors():
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(10, 3)
    with pytest.raises(ValueError, match="must be greater than 0"):
        nn.MultiheadAttention(0, 2)
    m = nn.MultiheadAttention(E, NH)
    x = cgrad.randn(L, N, E)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        m(x, x, x, is_causal=True)
    with pytest.raises(RuntimeError, match="The shape of the 2D attn_mask is"):
        m(x, x, x, attn_mask=cgrad.zeros(L, L + 1))
    with pytest.raises(AssertionError, match="only bool and floating types of key_padding_mask"):
        m(x, x, x, key_padding_mask=cgrad.zeros(N, L, dtype=cgrad.int64))
    with pytest.raises(AssertionError, match="query should be unbatched 2D or batched 3D"):
        m(x[0, 0], x[0, 0], x[0, 0])
    with pytest.raises(RuntimeError, match="activation should be relu/gelu"):
        nn.TransformerEncoderLayer(E, NH, activation="tanh")
    t = nn.Transformer(E, NH, 1, 1, 16)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        t(cgrad.randn(S, N, E), cgrad.randn(L, N + 1, E))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to d_model"):
        t(cgrad.randn(S, N, E + 1), cgrad.randn(L, N, E + 1))
    with pytest.warns(UserWarning, match="enable_nested_tensor is True, but self.use_nested_tensor is False"):
        nn.TransformerEncoder(nn.TransformerEncoderLayer(E, NH), 1)
