"""cgrad.nn's convolution, pooling and embedding layers against torch.nn: Conv1d/2d/3d (padding forms and
modes, dilation, groups, bias), ConvTranspose1d/2d/3d (output_padding, output_size), MaxPool1d/2d,
AvgPool1d/2d, AdaptiveAvg/MaxPool1d/2d, Embedding: outputs, input and parameter gradients, reprs,
state_dict keys, default initialisation and argument errors."""
import math

import numpy as np
import pytest
import torch

import cgrad
import cgrad.nn as nn
from nn_compare import compare_module, to_numpy


def _same_repr(make):
    assert repr(make(cgrad)) == repr(make(torch))


def _same_state(make):
    tm, cm = make(torch), make(cgrad)
    assert list(cm.state_dict()) == list(tm.state_dict())
    for (n, a), (_, b) in zip(tm.state_dict().items(), cm.state_dict().items()):
        assert tuple(b.shape) == tuple(a.shape) and str(b.dtype).split(".")[1] == str(a.dtype).split(".")[1], n


# ---------------------------------------------------------------- convolutions

CONVS = [
    (lambda lib: lib.nn.Conv1d(2, 3, 3), (2, 2, 7)),
    (lambda lib: lib.nn.Conv1d(4, 2, 2, stride=2, padding=1, dilation=2, groups=2, bias=False), (2, 4, 9)),
    (lambda lib: lib.nn.Conv1d(2, 2, 4, padding="same", padding_mode="reflect"), (2, 2, 6)),
    (lambda lib: lib.nn.Conv1d(2, 3, 3, padding="valid"), (2, 6)),
    (lambda lib: lib.nn.Conv2d(2, 3, 3), (2, 2, 5, 6)),
    (lambda lib: lib.nn.Conv2d(2, 4, (3, 2), stride=(2, 1), padding=(1, 2), dilation=(1, 2)), (2, 2, 6, 5)),
    (lambda lib: lib.nn.Conv2d(4, 4, 3, groups=4, padding="same"), (1, 4, 5, 5)),
    (lambda lib: lib.nn.Conv2d(2, 3, 3, padding=1, padding_mode="replicate"), (2, 2, 4, 5)),
    (lambda lib: lib.nn.Conv2d(2, 3, 3, padding=(2, 1), padding_mode="circular"), (2, 2, 4, 5)),
    (lambda lib: lib.nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect", bias=False), (2, 4, 5)),
    (lambda lib: lib.nn.Conv3d(2, 2, 2), (1, 2, 3, 4, 3)),
    (lambda lib: lib.nn.Conv3d(2, 4, (2, 3, 1), stride=2, padding=1, groups=2), (2, 2, 4, 5, 3)),
    (lambda lib: lib.nn.Conv3d(2, 2, 3, padding="same", padding_mode="circular"), (1, 2, 3, 3, 4)),
    (lambda lib: lib.nn.ConvTranspose1d(2, 3, 3), (2, 2, 5)),
    (lambda lib: lib.nn.ConvTranspose1d(4, 2, 3, stride=2, padding=1, output_padding=1, groups=2, dilation=2),
     (2, 4, 5)),
    (lambda lib: lib.nn.ConvTranspose2d(2, 3, 3, stride=2, bias=False), (2, 2, 3, 4)),
    (lambda lib: lib.nn.ConvTranspose2d(2, 2, (3, 2), stride=(2, 3), padding=(1, 0), output_padding=(1, 2)),
     (2, 3, 3)),
    (lambda lib: lib.nn.ConvTranspose3d(2, 2, 2, stride=2), (1, 2, 2, 3, 2)),
]


@pytest.mark.parametrize("k", range(len(CONVS)))
def test_conv_vs_torch(k):
    make, shape = CONVS[k]
    compare_module(make, [shape], train=(True,))
    _same_repr(make)
    _same_state(make)


def test_conv2d_float32_eval():
    compare_module(lambda lib: lib.nn.Conv2d(3, 8, 3, padding=1), [(4, 3, 8, 8)], dtype="float32",
                   train=(False,), atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("cls,args,shape", [("ConvTranspose1d", (2, 3, 3), (2, 2, 5)),
                                            ("ConvTranspose2d", (2, 3, 3), (2, 2, 3, 4)),
                                            ("ConvTranspose3d", (2, 1, 2), (1, 2, 2, 2, 3))])
def test_conv_transpose_output_size(cls, args, shape):
    n = len(shape) - 2
    for extra in range(2):
        sizes = [(s - 1) * 2 - 2 + (args[2] - 1) + 1 + extra for s in shape[2:]]  # stride 2, padding 1
        for out_size in (sizes, list(shape[:2]) + sizes):
            compare_module(lambda lib: getattr(lib.nn, cls)(*args, stride=2, padding=1), [shape], train=(True,),
                           call=lambda m, xs, o=out_size: m(xs[0], output_size=o))
    m = getattr(nn, cls)(*args, stride=2, padding=1)
    with pytest.raises(ValueError, match="requested an output size of"):
        m(cgrad.randn(*shape), output_size=[100] * n)
    with pytest.raises(ValueError, match=f"output_size must have {n} or {n + 2} elements"):
        m(cgrad.randn(*shape), output_size=[4] * (n + 1))


def test_conv_default_init():
    """Weight kaiming_uniform(a=sqrt(5)) = U(-1/sqrt(fan_in), 1/sqrt(fan_in)), bias the same bound."""
    m = nn.Conv2d(8, 16, 3)
    bound = 1 / math.sqrt(8 * 9)
    w, b = m.weight.detach().numpy(), m.bias.detach().numpy()
    assert w.shape == (16, 8, 3, 3) and b.shape == (16,)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound and abs(w.std() - bound / math.sqrt(3)) < 0.01
    assert np.abs(b).max() <= bound
    t = nn.ConvTranspose2d(4, 6, 2, groups=2)
    assert tuple(t.weight.shape) == (4, 3, 2, 2)
    assert np.abs(t.weight.detach().numpy()).max() <= 1 / math.sqrt(3 * 4)
    assert nn.Conv1d(2, 2, 3, dtype=cgrad.float64).weight.dtype == cgrad.float64


def test_conv_attributes():
    for lib in (torch, cgrad):
        m = lib.nn.Conv2d(2, 4, 3, padding="same", dilation=2)
        assert m.kernel_size == (3, 3) and m.stride == (1, 1) and m.padding == "same" and m.dilation == (2, 2)
        assert m.output_padding == (0, 0) and m.transposed is False
        assert list(m._reversed_padding_repeated_twice) == [2, 2, 2, 2]
    assert nn.ConvTranspose1d(2, 2, 3).transposed is True


def test_conv_errors():
    cases = [
        (lambda lib: lib.nn.Conv2d(3, 4, 3, groups=2), ValueError, "in_channels must be divisible by groups"),
        (lambda lib: lib.nn.Conv2d(4, 3, 3, groups=2), ValueError, "out_channels must be divisible by groups"),
        (lambda lib: lib.nn.Conv2d(4, 4, 3, groups=0), ValueError, "groups must be a positive integer"),
        (lambda lib: lib.nn.Conv2d(2, 2, 3, padding="full"), ValueError, "Invalid padding string 'full'"),
        (lambda lib: lib.nn.Conv2d(2, 2, 3, stride=2, padding="same"), ValueError,
         "padding='same' is not supported for strided convolutions"),
        (lambda lib: lib.nn.Conv1d(2, 2, 3, padding_mode="mirror"), ValueError, "padding_mode must be one of"),
        (lambda lib: lib.nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect"), ValueError,
         'Only "zeros" padding mode is supported for ConvTranspose2d'),
    ]
    for make, exc, msg in cases:
        for lib in (torch, cgrad):
            with pytest.raises(exc, match=msg):
                make(lib)
    with pytest.raises(RuntimeError):
        nn.Conv2d(3, 4, 3)(cgrad.randn(1, 2, 5, 5))


# ---------------------------------------------------------------- pooling

POOLS = [
    (lambda lib: lib.nn.MaxPool1d(2), (2, 3, 7)),
    (lambda lib: lib.nn.MaxPool1d(3, stride=2, padding=1, dilation=2, ceil_mode=True), (2, 8)),
    (lambda lib: lib.nn.MaxPool1d(2, return_indices=True), (2, 3, 6)),
    (lambda lib: lib.nn.MaxPool2d(2), (2, 3, 6, 5)),
    (lambda lib: lib.nn.MaxPool2d((3, 2), stride=(2, 1), padding=1, ceil_mode=True), (2, 5, 6)),
    (lambda lib: lib.nn.MaxPool2d(2, dilation=2, return_indices=True), (1, 2, 6, 7)),
    (lambda lib: lib.nn.AvgPool1d(3), (2, 3, 7)),
    (lambda lib: lib.nn.AvgPool1d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False), (2, 8)),
    (lambda lib: lib.nn.AvgPool2d(2), (2, 3, 6, 5)),
    (lambda lib: lib.nn.AvgPool2d((3, 2), stride=1, padding=(1, 0), count_include_pad=False), (2, 5, 6)),
    (lambda lib: lib.nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, divisor_override=4), (1, 2, 6, 7)),
    (lambda lib: lib.nn.AdaptiveAvgPool1d(3), (2, 3, 7)),
    (lambda lib: lib.nn.AdaptiveAvgPool2d((2, 3)), (2, 3, 5, 7)),
    (lambda lib: lib.nn.AdaptiveAvgPool2d((None, 2)), (3, 5, 7)),
    (lambda lib: lib.nn.AdaptiveAvgPool2d(1), (2, 3, 4, 4)),
    (lambda lib: lib.nn.AdaptiveMaxPool1d(4), (2, 3, 9)),
    (lambda lib: lib.nn.AdaptiveMaxPool1d(2, return_indices=True), (3, 5)),
    (lambda lib: lib.nn.AdaptiveMaxPool2d((3, None)), (2, 2, 7, 5)),
    (lambda lib: lib.nn.AdaptiveMaxPool2d(2, return_indices=True), (2, 2, 5, 5)),
]


@pytest.mark.parametrize("k", range(len(POOLS)))
def test_pool_vs_torch(k):
    make, shape = POOLS[k]
    compare_module(make, [shape], train=(True,))
    _same_repr(make)
    _same_state(make)


def test_pool_attributes_and_errors():
    for lib in (torch, cgrad):
        m = lib.nn.MaxPool2d(3)
        assert m.kernel_size == 3 and m.stride == 3 and m.padding == 0 and m.dilation == 1
        a = lib.nn.AvgPool1d(3)
        assert a.kernel_size == (3,) and a.stride == (3,) and a.padding == (0,)
    out = nn.MaxPool2d(2, return_indices=True)(cgrad.randn(1, 1, 4, 4))
    assert isinstance(out, tuple) and out[1].dtype == cgrad.int64
    with pytest.raises(RuntimeError):
        nn.MaxPool2d(2, padding=2)(cgrad.randn(1, 1, 4, 4))  # padding above half the kernel


# ---------------------------------------------------------------- embedding

def _idx(shape, n, seed=0):
    return np.random.default_rng(seed).integers(0, n, size=shape).astype(np.int64)


EMBEDDINGS = [
    (lambda lib: lib.nn.Embedding(10, 3), (4, 5)),
    (lambda lib: lib.nn.Embedding(10, 3, padding_idx=2), (7,)),
    (lambda lib: lib.nn.Embedding(10, 3, padding_idx=-1), (2, 3)),
    (lambda lib: lib.nn.Embedding(10, 4, norm_type=1.0), (3, 2)),
]


@pytest.mark.parametrize("k", range(len(EMBEDDINGS)))
def test_embedding_vs_torch(k):
    make, shape = EMBEDDINGS[k]
    x = _idx(shape, 10)
    x.flat[0] = 9 if k != 1 else 2  # the padding row gets no gradient
    compare_module(make, [x])
    _same_repr(make)
    _same_state(make)


def test_embedding_padding_idx_and_max_norm():
    m = nn.Embedding(6, 4, padding_idx=-2)
    assert m.padding_idx == 4
    np.testing.assert_array_equal(m.weight.detach().numpy()[4], np.zeros(4, np.float32))
    assert not np.all(m.weight.detach().numpy()[3] == 0)
    tm = torch.nn.Embedding(6, 4, max_norm=1.0)
    cm = nn.Embedding(6, 4, max_norm=1.0)
    cm.load_state_dict({"weight": cgrad.tensor(tm.weight.detach().numpy() * 3)})
    with torch.no_grad():
        tm.weight.mul_(3)
    x = np.array([[0, 2], [2, 5]])
    np.testing.assert_allclose(to_numpy(cm(cgrad.tensor(x))), to_numpy(tm(torch.tensor(x))), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(to_numpy(cm.weight), to_numpy(tm.weight), rtol=1e-5, atol=1e-6)  # renormed rows
    _same_repr(lambda lib: lib.nn.Embedding(6, 4, padding_idx=1, max_norm=1.5, norm_type=1.0))
    _same_repr(lambda lib: lib.nn.Embedding(6, 4, scale_grad_by_freq=True, sparse=True))


def test_embedding_from_pretrained():
    w = np.arange(12, dtype=np.float32).reshape(4, 3)
    for freeze in (True, False):
        cm = nn.Embedding.from_pretrained(cgrad.tensor(w), freeze=freeze, padding_idx=1)
        tm = torch.nn.Embedding.from_pretrained(torch.tensor(w), freeze=freeze, padding_idx=1)
        assert cm.weight.requires_grad == tm.weight.requires_grad == (not freeze)
        assert isinstance(cm.weight, nn.Parameter) and repr(cm) == repr(tm)
        np.testing.assert_array_equal(cm.weight.detach().numpy(), w)  # the given rows, padding row kept
    with pytest.raises(AssertionError, match="Embeddings parameter is expected to be 2-dimensional"):
        nn.Embedding.from_pretrained(cgrad.zeros(3))


def test_embedding_errors():
    for lib in (torch, cgrad):
        with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
            lib.nn.Embedding(5, 2, padding_idx=5)
        with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
            lib.nn.Embedding(5, 2, padding_idx=-6)
        with pytest.raises(AssertionError, match="Shape of weight does not match"):
            lib.nn.Embedding(5, 2, _weight=lib.zeros(4, 2))
    with pytest.raises(NotImplementedError, match="sparse"):
        nn.Embedding(5, 2, sparse=True)(cgrad.tensor([1]))
    with pytest.raises(IndexError):
        nn.Embedding(5, 2)(cgrad.tensor([5]))


def test_exports():
    import cgrad.nn.modules as mods
    for name in ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
                 "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
                 "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "Embedding"]:
        assert getattr(nn, name) is getattr(mods, name) and name in mods.__all__


# ---------------------------------------------------------------- integer dtypes (exact, as PyTorch's CPU build)

import torch.nn.functional as TF  # noqa: E402

import cgrad.nn.functional as CF  # noqa: E402

_INTS = ["int8", "uint8", "int16", "int32", "int64"]


def _cg(t: torch.Tensor) -> "cgrad.Tensor":
    return cgrad.tensor(t.tolist(), dtype=getattr(cgrad, str(t.dtype).split(".")[1]))


def _rand_int(shape, dt: str, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    lo = 0 if dt == "uint8" else -60
    return torch.randint(lo, 120, shape, generator=g).to(getattr(torch, dt))


def _same_int(got, ref: torch.Tensor) -> None:
    assert str(got.dtype).split(".")[1] == str(ref.dtype).split(".")[1]
    assert tuple(got.shape) == tuple(ref.shape)
    assert got.tolist() == ref.tolist()


CONV_INT_KW = [{}, dict(stride=2, padding=1), dict(dilation=2, padding=2), dict(groups=2), dict(padding="same")]


@pytest.mark.parametrize("dt", _INTS)
@pytest.mark.parametrize("nsp", [1, 2, 3])
@pytest.mark.parametrize("kw", CONV_INT_KW, ids=str)
def test_conv_integer_dtypes(dt, nsp, kw):
    x = _rand_int([2, 4] + [6, 5, 4][:nsp], dt, 1)
    w = _rand_int([6, 4 // kw.get("groups", 1)] + [3, 2, 3][:nsp], dt, 2)
    b = _rand_int([6], dt, 3)
    f, cf = getattr(TF, f"conv{nsp}d"), getattr(CF, f"conv{nsp}d")
    try:
        ref = f(x, w, b, **kw)
    except NotImplementedError:  # PyTorch's dilated int32 conv; cgrad computes it
        ref = None
    got = cf(_cg(x), _cg(w), _cg(b), **kw)
    if ref is not None:
        _same_int(got, ref)  # int8 / uint8 overflow wraps exactly as PyTorch's
    # unbatched and non-contiguous inputs
    _same_int(cf(_cg(x)[0], _cg(w), None, **kw), f(x[0].long(), w.long(), None, **kw).to(x.dtype))
    xt = _cg(x.transpose(0, 1).contiguous()).transpose(0, 1)
    _same_int(cf(xt, _cg(w), None, **kw), f(x.long(), w.long(), None, **kw).to(x.dtype))


@pytest.mark.parametrize("nsp", [1, 2, 3])
@pytest.mark.parametrize("kw", [{}, dict(stride=2, padding=1, output_padding=1), dict(dilation=2), dict(groups=2)],
                         ids=str)
def test_conv_transpose_int64(nsp, kw):
    x = _rand_int([2, 4] + [6, 5, 4][:nsp], "int64", 4)
    w = _rand_int([4, 6 // kw.get("groups", 1)] + [3, 2, 3][:nsp], "int64", 5)
    b = _rand_int([6], "int64", 6)
    f, cf = getattr(TF, f"conv_transpose{nsp}d"), getattr(CF, f"conv_transpose{nsp}d")
    _same_int(cf(_cg(x), _cg(w), _cg(b), **kw), f(x, w, b, **kw))
    _same_int(cf(_cg(x)[0], _cg(w), None, **kw), f(x[0], w, None, **kw))


def test_conv_integer_empty_and_refusals():
    x = cgrad.zeros(0, 4, 5, 5, dtype=cgrad.int64)
    w = cgrad.ones(2, 4, 3, 3, dtype=cgrad.int64)
    y = CF.conv2d(x, w)
    assert tuple(y.shape) == (0, 2, 3, 3) and y.dtype == cgrad.int64
    with pytest.raises(NotImplementedError, match="conv_transpose2d"):  # PyTorch: int64 alone
        CF.conv_transpose2d(cgrad.ones(1, 2, 5, 5, dtype=cgrad.int32), cgrad.ones(2, 1, 2, 2, dtype=cgrad.int32))
    with pytest.raises(NotImplementedError, match="conv2d"):
        CF.conv2d(cgrad.ones(1, 2, 5, 5, dtype=cgrad.bool), cgrad.ones(1, 2, 2, 2, dtype=cgrad.bool))


MAX_INT_KW = [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1), dict(kernel_size=2, dilation=2),
              dict(kernel_size=3, stride=2, ceil_mode=True)]


@pytest.mark.parametrize("dt", _INTS)
@pytest.mark.parametrize("kw", MAX_INT_KW, ids=str)
def test_max_pool_integer_dtypes(dt, kw):
    x = _rand_int([2, 3, 7, 6], dt, 7)
    x[0, 0, :2, :2] = 5  # ties: the first maximum
    _same_int(CF.max_pool2d(_cg(x), **kw), TF.max_pool2d(x, **kw))
    gv, gi = CF.max_pool2d(_cg(x), return_indices=True, **kw)
    rv, ri = TF.max_pool2d(x, return_indices=True, **kw)
    _same_int(gv, rv)
    _same_int(gi, ri)
    _same_int(CF.max_pool2d(_cg(x)[0], **kw), TF.max_pool2d(x[0], **kw))
    # PyTorch has no integer max_pool1d without indices; its values are the float ones
    _same_int(CF.max_pool1d(_cg(x[0]), **kw), TF.max_pool1d(x[0].double(), **kw).to(x.dtype))


AVG_INT_KW = [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
              dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
              dict(kernel_size=3, stride=2, ceil_mode=True),
              dict(kernel_size=3, stride=2, ceil_mode=True, padding=1, count_include_pad=False)]


@pytest.mark.parametrize("kw", AVG_INT_KW, ids=str)
def test_avg_pool_int64_truncates(kw):
    x = _rand_int([2, 3, 7, 6], "int64", 8)
    _same_int(CF.avg_pool2d(_cg(x), **kw), TF.avg_pool2d(x, **kw))
    _same_int(CF.avg_pool2d(_cg(x), divisor_override=3, **kw), TF.avg_pool2d(x, divisor_override=3, **kw))
    _same_int(CF.avg_pool1d(_cg(x[0]), **kw), TF.avg_pool1d(x[0], **kw))
    xt = _cg(x.transpose(2, 3).contiguous()).transpose(2, 3)  # non-contiguous
    _same_int(CF.avg_pool2d(xt, **kw), TF.avg_pool2d(x, **kw))


def test_pool_integer_refusals_and_empty():
    y = CF.max_pool2d(cgrad.zeros(0, 3, 4, 4, dtype=cgrad.int32), 2)
    assert tuple(y.shape) == (0, 3, 2, 2) and y.dtype == cgrad.int32
    for f in [lambda: CF.avg_pool2d(cgrad.ones(1, 2, 5, 5, dtype=cgrad.int32), 2),
              lambda: CF.adaptive_avg_pool2d(cgrad.ones(1, 2, 5, 5, dtype=cgrad.int64), 2),
              lambda: CF.adaptive_max_pool2d(cgrad.ones(1, 2, 5, 5, dtype=cgrad.int64), 2),
              lambda: CF.max_pool2d(cgrad.ones(1, 2, 5, 5, dtype=cgrad.bool), 2)]:
        with pytest.raises(NotImplementedError, match="not supported for dtype"):
            f()
