"""The barebones unsigned dtypes uint16, uint32 and uint64 against PyTorch 2.13.

PyTorch supports them only in a few ops (its "barebones" level); cgrad runs
the same set (docs/engine.md, Data model) and refuses the rest with the error
type PyTorch raises. Every supported case is compared for values and dtypes on
1-d, 0-d, empty, non-contiguous and broadcast inputs; every refusal checks that
both libraries raise the same exception type.
"""
import os
import tempfile

import numpy as np
import pytest
import torch

import cgrad

DTYPES = ["uint16", "uint32", "uint64"]
NP = {"uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64}
MAX = {"uint16": 2**16 - 1, "uint32": 2**32 - 1, "uint64": 2**64 - 1}
ALL = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
       "uint16", "uint32", "uint64"]


def values(dt):
    m = MAX[dt]
    return [0, 1, m, m // 2 + 1, 7, 300, m - 5, 2]


def pair(dt, vals=None):
    a = np.array(values(dt) if vals is None else vals, dtype=NP[dt])
    return cgrad.from_numpy(a.copy()), torch.from_numpy(a.copy())


def name(d):
    return str(d).rsplit(".", 1)[-1]


def same(c, t):
    if isinstance(t, torch.Tensor):
        assert name(c.dtype) == name(t.dtype)
        assert tuple(c.shape) == tuple(t.shape)
        if t.dtype.is_floating_point:
            np.testing.assert_allclose(np.array(c.tolist(), dtype=np.float64), np.array(t.tolist(), dtype=np.float64),
                                       rtol=1e-6, equal_nan=True)
        else:
            assert c.tolist() == t.tolist()
    elif isinstance(t, (tuple, list)):
        assert len(c) == len(t)
        for x, y in zip(c, t):
            same(x, y)
    else:
        assert c == t and type(c) is type(t)


# the input layouts every supported op runs on: x is the 1-d tensor of values()
LAYOUTS = {
    "1d": lambda x: x,
    "0d": lambda x: x[2],
    "empty": lambda x: x[:0],
    "strided": lambda x: x[::2],
    "transposed": lambda x: x.reshape(2, 4).t(),
    "expanded": lambda x: x[:4].reshape(4, 1).expand(4, 3),
}

# supported unary cases: f(lib, x)
SUPPORTED = {
    "mul_self": lambda L, x: x * x,
    "mul_int": lambda L, x: x * 3,
    "mul_neg_int": lambda L, x: x * -1,
    "mul_bool": lambda L, x: x * True,
    "mul_float": lambda L, x: x * 1.5,
    "mul_f32_tensor": lambda L, x: x * L.ones(x.shape, dtype=L.float32),
    "mul_inplace": lambda L, x: x.clone().mul_(5),
    "div_int": lambda L, x: x / 2,
    "div_f64_0d": lambda L, x: x / L.tensor(4.0, dtype=L.float64),
    "eq_self": lambda L, x: x == x,
    "eq_int": lambda L, x: x == 7,
    "eq_neg": lambda L, x: x == -1,
    "ne_int": lambda L, x: x != 1,
    "and_self": lambda L, x: x & x,
    "and_int": lambda L, x: x & 6,
    "or_int": lambda L, x: x | 1,
    "xor_self": lambda L, x: x ^ (x * 3),
    "and_bool": lambda L, x: x & True,
    "sum": lambda L, x: x.sum(),
    "sum_dim": lambda L, x: x.sum(-1) if x.dim() else x.sum(),
    "sum_keepdim": lambda L, x: x.sum(0, keepdim=True) if x.dim() else x.sum(),
    "prod": lambda L, x: x.prod(),
    "prod_dim": lambda L, x: x.prod(0) if x.dim() else x.prod(),
    "cumsum": lambda L, x: x.cumsum(0),
    "cumprod": lambda L, x: x.cumprod(0),
    "any": lambda L, x: x.any(),
    "all": lambda L, x: x.all(),
    "isnan": lambda L, x: x.isnan(),
    "isinf": lambda L, x: x.isinf(),
    "isfinite": lambda L, x: x.isfinite(),
    "sort": lambda L, x: tuple(x.sort(0)) if x.dim() else tuple(x.sort()),
    "sort_desc": lambda L, x: x.sort(0, descending=True)[0] if x.dim() else x.sort(descending=True)[0],
    "argsort": lambda L, x: x.argsort(0) if x.dim() else x.argsort(),
    "where": lambda L, x: L.where(x == 7, x, x * 2),
    "where_scalar": lambda L, x: L.where(x == 7, x, 0),
    "clone": lambda L, x: x.clone(),
    "contiguous": lambda L, x: x.contiguous(),
    "fill_": lambda L, x: x.clone().fill_(9),
    "zero_": lambda L, x: x.clone().zero_(),
    "cat": lambda L, x: L.cat([x.reshape(-1), x.reshape(-1)]),
    "stack": lambda L, x: L.stack([x, x]),
    "reshape": lambda L, x: x.reshape(-1),
    "unsqueeze": lambda L, x: x.unsqueeze(0),
    "flatten": lambda L, x: x.flatten(),
    "roll": lambda L, x: x.roll(1),
    "repeat": lambda L, x: x.repeat(2) if x.dim() <= 1 else x.repeat(2, 1),
    "to_float32": lambda L, x: x.to(L.float32),
    "to_float64": lambda L, x: x.to(L.float64),
    "to_int64": lambda L, x: x.to(L.int64),
    "to_uint8": lambda L, x: x.to(L.uint8),
    "to_bool": lambda L, x: x.to(L.bool),
    "to_int16": lambda L, x: x.to(L.int16),
    "index_int": lambda L, x: x.reshape(-1)[0] if x.numel() else x.reshape(-1),
    "index_tensor": lambda L, x: x.reshape(-1)[L.tensor([0, 0])] if x.numel() else x.reshape(-1),
    "index_mask": lambda L, x: x[x == 7],
    "floor": lambda L, x: x.floor(),
    "ceil": lambda L, x: x.ceil(),
    "round": lambda L, x: x.round(),
    "trunc": lambda L, x: x.trunc(),
    "nan_to_num": lambda L, x: x.nan_to_num(),
    "isclose": lambda L, x: L.isclose(x, x * 1),
    "allclose": lambda L, x: L.allclose(x, x.clone()),
    "exp": lambda L, x: x.exp(),
    "sqrt": lambda L, x: x.sqrt(),
    "sigmoid": lambda L, x: x.sigmoid(),
}


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("case", list(SUPPORTED))
def test_supported_matches_torch(dt, layout, case):
    c, t = pair(dt)
    f, lay = SUPPORTED[case], LAYOUTS[layout]
    same(f(cgrad, lay(c)), f(torch, lay(t)))


# refused by PyTorch 2.13 for all three dtypes: f(lib, x, y)
REFUSED = {
    "add": lambda L, x: x + x,
    "add_int": lambda L, x: x + 1,
    "sub": lambda L, x: x - x,
    "neg": lambda L, x: -x,
    "abs": lambda L, x: x.abs(),
    "lt": lambda L, x: x < x,
    "le": lambda L, x: x <= 1,
    "gt": lambda L, x: x > x,
    "ge": lambda L, x: x >= 1,
    "rshift": lambda L, x: x >> 1,
    "lshift": lambda L, x: x << 1,
    "invert": lambda L, x: ~x,
    "floor_divide": lambda L, x: x // x,
    "remainder": lambda L, x: x % x,
    "pow": lambda L, x: x ** 2,
    "max": lambda L, x: x.max(),
    "min": lambda L, x: x.min(),
    "argmax": lambda L, x: x.argmax(),
    "amax": lambda L, x: x.amax(),
    "maximum": lambda L, x: L.maximum(x, x),
    "clamp": lambda L, x: x.clamp(1, 2),
    "topk": lambda L, x: x.topk(2),
    "index_select": lambda L, x: x.index_select(0, L.tensor([0])),
    "gather": lambda L, x: x.gather(0, L.tensor([0])),
    "flip": lambda L, x: x.flip(0),
    "tril": lambda L, x: x.reshape(2, 4).tril(),
    "masked_fill": lambda L, x: x.masked_fill(x == 7, 0),
    "nonzero": lambda L, x: x.nonzero(),
    "setitem_tensor": lambda L, x: x.__setitem__(L.tensor([0]), 5),
    "matmul": lambda L, x: x.reshape(2, 4) @ x.reshape(4, 2),
    "logical_not": lambda L, x: L.logical_not(x),
    "mean": lambda L, x: x.mean(),
    "softmax": lambda L, x: x.softmax(0),
    "promote_int64": lambda L, x: x * L.tensor([1, 2, 3, 4, 5, 6, 7, 8]),
    "promote_uint8": lambda L, x: x == L.ones(8, dtype=L.uint8),
    "promote_bool": lambda L, x: x * L.ones(8, dtype=L.bool),
    "cat_mixed": lambda L, x: L.cat([x, L.tensor([1])]),
}


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("case", list(REFUSED))
def test_refused_like_torch(dt, case):
    c, t = pair(dt)
    with pytest.raises(Exception) as et:
        REFUSED[case](torch, t)
    with pytest.raises(et.type):
        REFUSED[case](cgrad, c)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("fn", ["arange", "linspace", "eye", "randperm", "rand"])
def test_factories_refused_like_torch(dt, fn):
    def call(L):
        d = getattr(L, dt)
        return {"arange": lambda: L.arange(5, dtype=d), "linspace": lambda: L.linspace(0, 4, 5, dtype=d),
                "eye": lambda: L.eye(2, dtype=d), "randperm": lambda: L.randperm(3, dtype=d),
                "rand": lambda: L.rand(2, dtype=d)}[fn]()
    with pytest.raises(Exception) as et:
        call(torch)
    with pytest.raises(et.type):
        call(cgrad)


@pytest.mark.parametrize("dt", DTYPES)
def test_dtype_objects(dt):
    c, t = getattr(cgrad, dt), getattr(torch, dt)
    assert repr(c) == repr(t).replace("torch", "cgrad")
    assert c.itemsize == t.itemsize and c.is_signed == t.is_signed
    assert c.is_floating_point == t.is_floating_point
    x, y = pair(dt)
    assert x.element_size() == y.element_size() and x.is_signed() == y.is_signed()
    assert x.is_floating_point() == y.is_floating_point()


@pytest.mark.parametrize("dt", DTYPES)
def test_creation(dt):
    d = (getattr(cgrad, dt), getattr(torch, dt))
    same(cgrad.zeros(2, 3, dtype=d[0]), torch.zeros(2, 3, dtype=d[1]))
    same(cgrad.ones(0, dtype=d[0]), torch.ones(0, dtype=d[1]))
    same(cgrad.ones((), dtype=d[0]), torch.ones((), dtype=d[1]))
    same(cgrad.full((2,), 7, dtype=d[0]), torch.full((2,), 7, dtype=d[1]))
    assert cgrad.empty(3, dtype=d[0]).dtype == d[0]
    c, t = pair(dt)
    for f in ("zeros_like", "ones_like"):
        same(getattr(cgrad, f)(c), getattr(torch, f)(t))
    same(cgrad.full_like(c, 3), torch.full_like(t, 3))
    same(cgrad.tensor(values(dt), dtype=d[0]), torch.tensor(values(dt), dtype=d[1]))
    same(cgrad.tensor([[1, 2], [3, 4]], dtype=d[0]), torch.tensor([[1, 2], [3, 4]], dtype=d[1]))
    same(cgrad.tensor(5, dtype=d[0]), torch.tensor(5, dtype=d[1]))
    same(cgrad.tensor([True, False], dtype=d[0]), torch.tensor([True, False], dtype=d[1]))
    if dt != "uint64":  # PyTorch reads uint64 data as Python ints only
        same(cgrad.tensor([c[2], c[3]], dtype=d[0]), torch.tensor([t[2], t[3]], dtype=d[1]))
    r = cgrad.randint(0, 100, (50,), dtype=d[0])
    assert r.dtype == d[0] and all(0 <= v < 100 for v in r.tolist())


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("v", [-1, -65535, 2**16, 2**32, 2**63, 2**64 - 1, 2**64, 1.5, -1.0, 2.0**64])
@pytest.mark.parametrize("how", ["tensor", "full", "fill_"])
def test_scalar_checks_match_torch(dt, v, how):
    def make(L):
        d = getattr(L, dt)
        if how == "tensor":
            return L.tensor([v], dtype=d)
        if how == "full":
            return L.full((1,), v, dtype=d)
        return L.zeros(1, dtype=d).fill_(v)
    try:
        t = make(torch)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        with pytest.raises(type(e)):
            make(cgrad)
        return
    same(make(cgrad), t)


@pytest.mark.parametrize("dt", DTYPES)
def test_item_tolist_repr_exact(dt):
    c, t = pair(dt)
    assert c.tolist() == t.tolist() == values(dt)
    for i in range(len(values(dt))):
        assert c[i].item() == t[i].item() and type(c[i].item()) is int
    assert repr(c) == repr(t).replace("torch.", "cgrad.").replace("tensor(", "tensor(")
    assert repr(c[2]) == repr(t[2]).replace("torch.", "cgrad.")
    assert repr(c[:0]) == repr(t[:0]).replace("torch.", "cgrad.")
    assert repr(c.reshape(2, 4)) == repr(t.reshape(2, 4)).replace("torch.", "cgrad.")


def test_uint64_above_int64_round_trips():
    big = [2**64 - 1, 2**63, 2**63 + 1, 0, 2**53 + 1]
    c = cgrad.tensor(big, dtype=cgrad.uint64)
    assert c.tolist() == big and c[0].item() == 2**64 - 1 and c[4].item() == 2**53 + 1
    assert c.numpy().tolist() == big and c.numpy().dtype == np.uint64
    assert cgrad.from_numpy(np.array(big, dtype=np.uint64)).tolist() == big
    assert cgrad.from_dlpack(c).tolist() == big
    assert torch.from_dlpack(c).tolist() == big
    assert cgrad.from_dlpack(torch.tensor(big, dtype=torch.uint64)).tolist() == big
    assert cgrad.full((2,), 2**64 - 1, dtype=cgrad.uint64).tolist() == [2**64 - 1] * 2
    assert (c * 1).tolist() == big
    assert c.clone().tolist() == big and c[::2].contiguous().tolist() == big[::2]
    assert c.sort()[0].tolist() == sorted(big)
    assert c.to(cgrad.int64).tolist() == torch.tensor(big, dtype=torch.uint64).to(torch.int64).tolist()
    assert cgrad.tensor([c[0], c[1]], dtype=cgrad.uint64).tolist() == big[:2]
    x = cgrad.zeros(1, dtype=cgrad.uint64)
    x[0] = 2**64 - 1
    assert x.tolist() == [2**64 - 1]


@pytest.mark.parametrize("dt", DTYPES)
def test_numpy_dlpack_round_trip(dt):
    a = np.array(values(dt), dtype=NP[dt])
    c = cgrad.from_numpy(a)
    assert name(c.dtype) == dt and c.tolist() == a.tolist()
    a[0] = 3  # shares memory
    assert c[0].item() == 3
    n = c.numpy()
    assert n.dtype == NP[dt] and n.tolist() == a.tolist()
    assert np.asarray(c).dtype == NP[dt]
    s = cgrad.from_numpy(a[::2])
    assert s.tolist() == a[::2].tolist()
    for other in (cgrad.from_dlpack(c), torch.from_dlpack(c)):
        assert name(other.dtype) == dt and other.tolist() == a.tolist()
    t = torch.from_numpy(a.copy())
    back = cgrad.from_dlpack(t)
    assert name(back.dtype) == dt and back.tolist() == t.tolist()
    same(cgrad.as_tensor(a), torch.as_tensor(a))
    same(cgrad.tensor(a), torch.tensor(a))


@pytest.mark.parametrize("src", ALL)
@pytest.mark.parametrize("dt", DTYPES)
def test_conversions_to_and_from_every_dtype(src, dt):
    vals = [0, 1, 5, 100, 0, 1]
    if src == "bool":
        vals = [0, 1, 1, 0, 1, 0]
    s_c, s_t = cgrad.tensor(vals, dtype=getattr(cgrad, src)), torch.tensor(vals, dtype=getattr(torch, src))
    same(s_c.to(getattr(cgrad, dt)), s_t.to(getattr(torch, dt)))
    same(s_c[::2].to(getattr(cgrad, dt)), s_t[::2].to(getattr(torch, dt)))
    c, t = pair(dt)
    same(c.to(getattr(cgrad, src)), t.to(getattr(torch, src)))
    dst_c, dst_t = cgrad.zeros(6, dtype=getattr(cgrad, dt)), torch.zeros(6, dtype=getattr(torch, dt))
    dst_c.copy_(s_c)
    dst_t.copy_(s_t)
    same(dst_c, dst_t)
    e_c, e_t = cgrad.zeros(8, dtype=getattr(cgrad, src)), torch.zeros(8, dtype=getattr(torch, src))
    e_c.copy_(c)
    e_t.copy_(t)
    same(e_c, e_t)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("other", ALL)
def test_promotion_matches_torch(dt, other):
    a, b = getattr(torch, dt), getattr(torch, other)
    ca, cb = getattr(cgrad, dt), getattr(cgrad, other)
    for x, y, cx, cy in ((a, b, ca, cb), (b, a, cb, ca)):
        try:
            r = torch.promote_types(x, y)
        except RuntimeError as e:
            with pytest.raises(RuntimeError, match="Promotion for uint16, uint32, uint64 types is not supported"):
                cgrad.promote_types(cx, cy)
            assert "Promotion for uint16" in str(e)
        else:
            assert name(cgrad.promote_types(cx, cy)) == name(r)
    tc, tt = pair(dt)
    for scalar in (True, 1, 1.5):
        assert name(cgrad.result_type(tc, scalar)) == name(torch.result_type(tt, scalar))
    zc, zt = cgrad.ones((), dtype=cb), torch.ones((), dtype=b)
    try:
        r = torch.result_type(tt, zt)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            cgrad.result_type(tc, zc)
    else:
        assert name(cgrad.result_type(tc, zc)) == name(r)


@pytest.mark.parametrize("dt", DTYPES)
def test_views(dt):
    c, t = pair(dt)
    same(c.reshape(2, 4).t(), t.reshape(2, 4).t())
    same(c.reshape(2, 4).permute(1, 0), t.reshape(2, 4).permute(1, 0))
    same(c.narrow(0, 1, 3), t.narrow(0, 1, 3))
    same(c.reshape(2, 4).diagonal(), t.reshape(2, 4).diagonal())
    same(c.unfold(0, 2, 2), t.unfold(0, 2, 2))
    same(list(c.chunk(3)), list(t.chunk(3)))
    same(list(c.split(3)), list(t.split(3)))
    same(list(c.reshape(2, 4).unbind()), list(t.reshape(2, 4).unbind()))
    same(c[1:6:2], t[1:6:2])
    same(c.reshape(2, 4)[:, 1], t.reshape(2, 4)[:, 1])
    signed = {"uint16": "int16", "uint32": "int32", "uint64": "int64"}[dt]
    same(c.view(getattr(cgrad, signed)), t.view(getattr(torch, signed)))
    fl = {"uint16": "float16", "uint32": "float32", "uint64": "float64"}[dt]
    same(cgrad.ones(2, dtype=getattr(cgrad, fl)).view(getattr(cgrad, dt)),
         torch.ones(2, dtype=getattr(torch, fl)).view(getattr(torch, dt)))


@pytest.mark.parametrize("dt", DTYPES)
def test_setitem(dt):
    c, t = pair(dt)
    for L, x in ((cgrad, c), (torch, t)):
        x[0] = 9
        x[1:3] = x[3:5]
        x[5] = MAX[dt] if dt != "uint64" else 2**63 - 1  # PyTorch's x[i] = v takes an int64
    same(c, t)


@pytest.mark.parametrize("dt", DTYPES)
def test_safetensors_round_trip(dt):
    c, _ = pair(dt)
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "u.safetensors")
        cgrad.utils.safetensors.save({"w": c, "s": c[::2]}, p)
        back = cgrad.utils.safetensors.load(p)
        assert name(back["w"].dtype) == dt and back["w"].tolist() == c.tolist()
        assert back["s"].tolist() == c[::2].tolist()
        with open(p, "rb") as f:
            raw = f.read()
        assert {"uint16": b'"U16"', "uint32": b'"U32"', "uint64": b'"U64"'}[dt] in raw
        p = os.path.join(d, "u.pt")  # PyTorch's format: an untyped storage and _rebuild_tensor_v3
        cgrad.save({"w": c, "s": c[::2]}, p)
        back, theirs = cgrad.load(p), torch.load(p)
        assert name(back["w"].dtype) == dt and back["w"].tolist() == c.tolist() == theirs["w"].tolist()
        assert back["s"].tolist() == c[::2].tolist() == theirs["s"].tolist()
