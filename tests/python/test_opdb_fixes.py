"""Regression tests for differences from PyTorch found by running PyTorch's
op_db against cgrad: index_fill's gradient for a tensor value with repeated
indices, NaN through hardshrink / softshrink / threshold (values and
gradients), arange's length and values for integer dtypes with fractional
bounds, and every signature of Tensor.to. torch==2.13.0 is the oracle."""
from __future__ import annotations

import math
import warnings
from typing import Any, Callable, List, Tuple

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import cgrad
import cgrad.nn.functional as CF

NAN, INF = float("nan"), float("inf")


def np_of(t: Any) -> np.ndarray:
    t = t.detach()
    if str(t.dtype).split(".")[-1] in ("float16", "bfloat16"):
        t = t.float()
    return np.array(t.tolist(), dtype=np.float64).reshape(tuple(t.shape))


def assert_same(c: Any, t: Any, atol: float = 1e-6, signed_zeros: bool = False) -> None:
    """Same dtype, shape and values (NaN where torch has NaN); optionally the sign of zeros too."""
    assert str(c.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (c.dtype, t.dtype)
    assert tuple(c.shape) == tuple(t.shape), (tuple(c.shape), tuple(t.shape))
    a, b = np_of(c), np_of(t)
    np.testing.assert_allclose(a, b, atol=atol, rtol=1e-6, equal_nan=True)
    if signed_zeros:
        np.testing.assert_array_equal(np.signbit(a[a == 0]), np.signbit(b[b == 0]))


def both(data: Any, dtype: str = "float64", requires_grad: bool = False) -> Tuple[Any, Any]:
    c = cgrad.tensor(data, dtype=getattr(cgrad, dtype), requires_grad=requires_grad)
    t = torch.tensor(data, dtype=getattr(torch, dtype), requires_grad=requires_grad)
    return c, t


# ---------------------------------------------------------------- 1. index_fill with a tensor value

def _weights(lib: Any, shape: Tuple[int, ...]) -> Any:
    n = int(np.prod(shape)) if shape else 1
    return lib.arange(1.0, n + 1.0, dtype=lib.float64).sin().reshape(shape)


INDEX_FILL_CASES = [
    # (x shape, dim, index, noncontiguous x)
    ((3, 4), 1, [0, 2, 0, 2, 3], False),    # repeated indices: each filled column counts once
    ((3, 4), 1, [1, 1, 1], False),
    ((3, 4), 0, [2, 0, 2], True),           # non-contiguous (transposed) input
    ((2, 3, 4), 2, [3, 0, 3, 1], False),
    ((2, 3, 4), -2, [1, 1], True),
    ((5,), 0, [4, 4, 0], False),
    ((), 0, [0, 0], False),                 # 0-d input, index 0 twice
    ((3, 4), 1, [], False),                 # empty index: nothing is filled, value's gradient is 0
    ((0, 4), 1, [1, 1, 2], False),          # empty input
    ((3, 4), 1, [2], False),
]


@pytest.mark.parametrize("shape,dim,index,noncontig", INDEX_FILL_CASES)
def test_index_fill_tensor_value_gradient_counts_each_filled_slice_once(shape: Tuple[int, ...], dim: int,
                                                                          index: List[int], noncontig: bool) -> None:
    res = {}
    for lib in (cgrad, torch):
        n = int(np.prod(shape)) if shape else 1
        if noncontig:  # the same values through a reversed-dims view of a contiguous tensor
            rev = tuple(range(len(shape) - 1, -1, -1))
            x = lib.arange(float(n), dtype=lib.float64).reshape(shape).permute(rev).contiguous().permute(rev)
            assert not x.is_contiguous()
        else:
            x = lib.arange(float(n), dtype=lib.float64).reshape(shape)
        x.requires_grad_()
        v = lib.tensor(-1.5, dtype=lib.float64, requires_grad=True)
        y = x.index_fill(dim, lib.tensor(index, dtype=lib.int64), v)
        (y * _weights(lib, shape)).sum().backward()
        res[lib.__name__] = (y, x.grad, v.grad)
    for c, t in zip(res["cgrad"], res["torch"]):
        assert_same(c, t, atol=1e-12)


def test_index_fill_in_place_and_negative_aliases() -> None:
    # in place, repeated indices
    res = {}
    for lib in (cgrad, torch):
        v = lib.tensor(0.25, dtype=lib.float64, requires_grad=True)
        x = lib.zeros(3, 4, dtype=lib.float64, requires_grad=True)
        y = x * 1.0
        y.index_fill_(1, lib.tensor([3, 1, 3]), v)
        (y * _weights(lib, (3, 4))).sum().backward()
        res[lib.__name__] = (y, x.grad, v.grad)
    for c, t in zip(res["cgrad"], res["torch"]):
        assert_same(c, t, atol=1e-12)
    # -1 and 3 fill the same column of a size-4 dim: it counts once. (PyTorch's
    # backward rejects negative indices, so the oracle is the same fill written
    # with the non-negative index.)
    def grads(lib: Any, idx: List[int]) -> Tuple[Any, Any]:
        x = lib.zeros(3, 4, dtype=lib.float64, requires_grad=True)
        v = lib.tensor(2.0, dtype=lib.float64, requires_grad=True)
        y = x.index_fill(1, lib.tensor(idx), v)
        (y * _weights(lib, (3, 4))).sum().backward()
        return y, v.grad
    yc, gc = grads(cgrad, [-1, 3, 0, -4])
    yt, gt = grads(torch, [3, 0])
    assert_same(yc, yt, atol=1e-12)
    assert_same(gc, gt, atol=1e-12)


def test_index_fill_value_of_another_dtype_and_errors() -> None:
    res = {}
    for lib in (cgrad, torch):
        v = lib.tensor(1.5, dtype=lib.float32, requires_grad=True)
        y = lib.zeros(3, 4, dtype=lib.float64).index_fill(0, lib.tensor([0, 0, 2]), v)
        y.sum().backward()
        res[lib.__name__] = (y, v.grad)
    for c, t in zip(res["cgrad"], res["torch"]):
        assert_same(c, t)
    with pytest.raises(IndexError):
        cgrad.zeros(3, 4).index_fill(1, cgrad.tensor([1, 1, 4]), cgrad.tensor(1.0))
    with pytest.raises(IndexError):
        torch.zeros(3, 4).index_fill(1, torch.tensor([1, 1, 4]), torch.tensor(1.0))


def test_index_fill_gradcheck() -> None:
    x = cgrad.tensor(np.linspace(-1, 1, 12).reshape(3, 4).tolist(), dtype=cgrad.float64, requires_grad=True)
    v = cgrad.tensor(0.7, dtype=cgrad.float64, requires_grad=True)
    idx = cgrad.tensor([2, 0, 2, 2])
    f = lambda a, b: a.index_fill(1, idx, b) * cgrad.arange(1.0, 13.0, dtype=cgrad.float64).reshape(3, 4)  # noqa: E731
    assert cgrad.autograd.gradcheck(f, (x, v))
    assert cgrad.autograd.gradgradcheck(f, (x, v))
    x0 = cgrad.tensor(0.3, dtype=cgrad.float64, requires_grad=True)
    assert cgrad.autograd.gradcheck(lambda a, b: a.index_fill(0, cgrad.tensor([0, 0]), b), (x0, v))


# ---------------------------------------------------------------- 2. shrinks and threshold at NaN

SPECIAL = [NAN, -INF, INF, -0.5, 0.5, -0.3, 0.3, 0.0, -0.0, 2.0, -2.0, 0.50001, -1e-30]


def _act_forms(lib: Any) -> List[Tuple[str, Callable[[Any], Any]]]:
    F = CF if lib is cgrad else TF
    return [
        ("F.hardshrink", lambda x: F.hardshrink(x, 0.5)),
        ("F.hardshrink_default", lambda x: F.hardshrink(x)),
        ("F.hardshrink_neg_lambd", lambda x: F.hardshrink(x, -1.0)),
        ("F.softshrink", lambda x: F.softshrink(x, 0.5)),
        ("F.softshrink_0", lambda x: F.softshrink(x, 0.0)),
        ("F.threshold", lambda x: F.threshold(x, 0.5, 9.0)),
        ("F.threshold_below", lambda x: F.threshold(x, 0.5, -1.0)),
        ("F.threshold_inplace", lambda x: F.threshold(x * 1, 0.5, 9.0, inplace=True)),
        ("F.threshold_", lambda x: F.threshold_(x * 1, -0.3, 9.0)),
        ("nn.Hardshrink", lambda x: lib.nn.Hardshrink(0.3)(x)),
        ("nn.Softshrink", lambda x: lib.nn.Softshrink(0.3)(x)),
        ("nn.Threshold", lambda x: lib.nn.Threshold(0.3, 20.0)(x)),
        ("nn.Threshold_inplace", lambda x: lib.nn.Threshold(0.3, 20.0, inplace=True)(x * 1)),
    ]


FORM_NAMES = [n for n, _ in _act_forms(cgrad)]


def _torch_elementwise(f: Callable[[Any], Any], vals: List[float], grads: List[float], dtype: str) -> Tuple[Any, Any]:
    """torch's values and gradients of f, one element at a time: each call runs
    PyTorch's scalar kernel, whatever SIMD path a longer tensor would take
    (PyTorch's vectorised hardshrink / softshrink backward gives 0 at NaN where
    its scalar kernel and its derivative formula pass the gradient)."""
    ys, gs = [], []
    for v, g in zip(vals, grads):
        x = torch.tensor([v], dtype=getattr(torch, dtype), requires_grad=True)
        y = f(x)
        y.backward(torch.tensor([g], dtype=getattr(torch, dtype)))
        ys.append(y.detach())
        gs.append(x.grad)
    return torch.cat(ys), torch.cat(gs)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("form", FORM_NAMES)
def test_shrinks_and_threshold_pass_nan_through(form: str, dtype: str) -> None:
    grads = [float(i) for i in range(1, len(SPECIAL) + 1)]
    x = cgrad.tensor(SPECIAL, dtype=getattr(cgrad, dtype), requires_grad=True)
    y = dict(_act_forms(cgrad))[form](x)
    y.backward(cgrad.tensor(grads, dtype=getattr(cgrad, dtype)))
    yt, gt = _torch_elementwise(dict(_act_forms(torch))[form], SPECIAL, grads, dtype)
    assert math.isnan(y[0].item())  # the NaN is kept
    assert_same(y, yt)
    assert_same(x.grad, gt)  # the gradient at NaN passes too (PyTorch: the element is not replaced)
    # a whole tensor in torch agrees away from NaN (at NaN its vectorised backward may differ)
    xt = torch.tensor(SPECIAL, dtype=getattr(torch, dtype), requires_grad=True)
    yf = dict(_act_forms(torch))[form](xt)
    yf.backward(torch.tensor(grads, dtype=getattr(torch, dtype)))
    assert_same(y, yf)
    assert_same(x.grad[1:], xt.grad[1:])


@pytest.mark.parametrize("form", FORM_NAMES)
@pytest.mark.parametrize("layout", ["0d", "0d_nan", "empty", "noncontig", "3d"])
def test_shrinks_and_threshold_layouts(form: str, layout: str) -> None:
    rng = np.random.default_rng(3)
    data = {"0d": np.array(-0.7), "0d_nan": np.array(NAN), "empty": np.zeros((0, 3)),
            "noncontig": rng.uniform(-1, 1, (4, 3)), "3d": rng.uniform(-1, 1, (2, 3, 4))}[layout]
    if layout == "3d":
        data[0, 1, :2] = [INF, -INF]
    res = {}
    for lib in (cgrad, torch):
        f = dict(_act_forms(lib))[form]
        if layout == "noncontig":
            x = lib.tensor(np.ascontiguousarray(data.T).tolist(), dtype=lib.float64).T
            assert not x.is_contiguous()
        else:
            x = lib.tensor(data.tolist(), dtype=lib.float64) if data.size else lib.zeros(data.shape, dtype=lib.float64)
        x.requires_grad_()
        y = f(x)
        (y * lib.arange(float(y.numel()), dtype=lib.float64).reshape(tuple(y.shape))).sum().backward()
        res[lib.__name__] = (y, x.grad)
    for c, t in zip(res["cgrad"], res["torch"]):
        assert_same(c, t)


def test_softshrink_zeros_keep_the_sign_of_the_input() -> None:
    c, t = both([-0.3, 0.3, -0.0, 0.0, -0.5, 0.5])
    assert_same(CF.softshrink(c, 0.5), TF.softshrink(t, 0.5), signed_zeros=True)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_shrinks_and_threshold_half(dtype: str) -> None:
    vals = [NAN, -INF, 0.25, -0.75, 1.5, -0.5, 0.5]
    for name, _ in _act_forms(cgrad):
        c, t = both(vals, dtype)
        assert_same(dict(_act_forms(cgrad))[name](c), dict(_act_forms(torch))[name](t), atol=1e-2)


def test_shrinks_and_threshold_gradcheck() -> None:
    # away from the kinks: central differences are defined
    x = cgrad.tensor([-1.7, -0.9, -0.2, 0.1, 0.35, 0.8, 1.6], dtype=cgrad.float64, requires_grad=True)
    for f in (lambda a: CF.hardshrink(a, 0.5), lambda a: CF.softshrink(a, 0.5), lambda a: CF.threshold(a, 0.5, 3.0),
              lambda a: CF.threshold(a * 1, 0.5, 3.0, inplace=True)):
        assert cgrad.autograd.gradcheck(f, (x,))
        assert cgrad.autograd.gradgradcheck(f, (x,))


def test_threshold_integer_input_and_shrink_dtype_errors() -> None:
    for args in [(1.5, 9), (1.5, 9.7), (-1.5, 9), (-1.0, -3.9)]:
        c, t = both([-2, -1, 0, 1, 2, 3], "int64")
        assert_same(CF.threshold(c, *args), TF.threshold(t, *args))
    for name in ("hardshrink", "softshrink"):
        c, t = both([1, 2, 3], "int64")
        with pytest.raises(NotImplementedError) as et:
            getattr(TF, name)(t, 1)
        with pytest.raises(NotImplementedError) as ec:
            getattr(CF, name)(c, 1)
        assert str(ec.value) == str(et.value)
    with pytest.raises(RuntimeError, match="lambda must be greater or equal to 0"):
        CF.softshrink(cgrad.ones(2), -0.5)


# ---------------------------------------------------------------- 3. arange with integer dtypes

ARANGE_BOUNDS = [
    (3.1,), (1.5,), (0.9, 3.0), (-0.9, 3.0, 1.0), (0.5, 3.7, 1), (0.5, 3.7, 0.8), (3.7, 0.5, -1), (3.7, 0.5, -0.8),
    (2.5, -3.5, -1.5), (0, 5, 1.5), (0, -5, -1.5), (0.3, 4.9, 0.7), (-2.5, 2.5, 0.5), (-2.5, 2.5, 1.5),
    (5.9, 0.1, -2.5), (-5.5, -0.5, 1.9), (0.3, 0.7), (0, 0.7, 0.5), (-0.7, 0.0, 0.5), (0.0, -0.5, -0.1),
    (5, 0, -2), (0, 10, 3), (2, 2), (0, 10**10, 10**9 + 0.5),
    # errors: zero step, wrong sign, non-finite bounds
    (0, 3, 0), (0.0, 3.0, 0.0), (-0.5, 0.3, -1), (0.5, 0.2), (-3.1,), (0, INF), (0, NAN),
]
ARANGE_DTYPES = ["int64", "int32", "int16", "int8", "uint8", "float32", "float64"]


def _arange(lib: Any, bounds: Tuple[Any, ...], dtype: str) -> Tuple[str, Any]:
    try:
        return "ok", lib.arange(*bounds, dtype=getattr(lib, dtype))
    except Exception as e:  # noqa: BLE001 - compared with torch's
        return "error", e


@pytest.mark.parametrize("dtype", ARANGE_DTYPES)
@pytest.mark.parametrize("bounds", ARANGE_BOUNDS, ids=str)
def test_arange_length_and_values_match_torch(bounds: Tuple[Any, ...], dtype: str) -> None:
    kt, rt = _arange(torch, bounds, dtype)
    kc, rc = _arange(cgrad, bounds, dtype)
    assert kc == kt, (rc, rt)
    if kt == "error":
        assert isinstance(rc, type(rt)), (rc, rt)  # ValueError or RuntimeError as torch (InvalidArgument is both)
        return
    assert rc.tolist() == rt.tolist() if dtype.startswith(("int", "uint")) else True
    assert_same(rc, rt)


def test_arange_requested_examples() -> None:
    assert cgrad.arange(3.1, dtype=cgrad.int64).tolist() == [0, 1, 2]
    assert cgrad.arange(0.5, 3.7, 0.8, dtype=cgrad.int32).tolist() == torch.arange(0.5, 3.7, 0.8,
                                                                                  dtype=torch.int32).tolist()
    assert cgrad.arange(3.1).dtype == cgrad.float32 and cgrad.arange(0, 5, 2).dtype == cgrad.int64
    with pytest.raises(ValueError, match="step must be nonzero"):
        cgrad.arange(0, 3, 0.5, dtype=cgrad.int64)  # the step truncates to 0, as torch's ValueError
    with pytest.raises(RuntimeError, match="inconsistent with step sign"):
        cgrad.arange(0.5, 0.2, dtype=cgrad.int64)
    with pytest.raises(RuntimeError, match="cannot be converted to type int64"):
        cgrad.arange(-1e19, 0, 1e18, dtype=cgrad.int64)



@pytest.mark.parametrize("out_dtype", ["int64", "float32", "float64"])
@pytest.mark.parametrize("bounds", [(5,), (0, 1, 0.5), (1, 4)], ids=str)
def test_arange_out_takes_its_dtype_and_resizes(bounds: Tuple[Any, ...], out_dtype: str) -> None:
    """out= decides arange's dtype (a fractional step truncating to 0 for an
    integer out is torch's ValueError); an out of the wrong size is resized
    with a UserWarning, and out itself is returned."""
    outs = [lib.empty(4, dtype=getattr(lib, out_dtype)) for lib in (torch, cgrad)]
    results, warned = [], []
    for lib, out in zip((torch, cgrad), outs):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                results.append(lib.arange(*bounds, out=out))
            except Exception as e:  # noqa: BLE001 - compared with torch's
                results.append(e)
        warned.append(any(issubclass(w.category, UserWarning) for w in caught))
    rt, rc = results
    if isinstance(rt, Exception):
        assert isinstance(rc, type(rt)), (rc, rt)
        return
    assert rc is outs[1] and warned == [True, True]
    assert_same(rc, rt)


def test_arange_out_errors_as_torch() -> None:
    with pytest.raises(RuntimeError, match="does not match dtype of out"):
        cgrad.arange(3, out=cgrad.empty(3, dtype=cgrad.int32), dtype=cgrad.int64)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        cgrad.arange(3, out=cgrad.empty(3, requires_grad=True))
    if cgrad.cuda.is_available():  # no pinned allocator: ordinary memory (Tensor.pin_memory)
        assert cgrad.arange(3, pin_memory=True).tolist() == [0, 1, 2]
    else:
        with pytest.raises(NotImplementedError, match="pin_memory"):
            cgrad.arange(3, pin_memory=True)

# ---------------------------------------------------------------- 4. Tensor.to signatures

F32, F64 = "float32", "float64"
TO_CALLS = {
    "()": ((), {}),
    "(F64)": ((F64,), {}),
    "(F32)": ((F32,), {}),
    "(F32,False,True)": ((F32, False, True), {}),
    "(F64,False,True)": ((F64, False, True), {}),
    "(F32,False,False)": ((F32, False, False), {}),
    "(F32,True)": ((F32, True), {}),
    "(F32,non_blocking=True,copy=True)": ((F32,), {"non_blocking": True, "copy": True}),
    "(F32,copy=True)": ((F32,), {"copy": True}),
    "(F32,memory_format=pf)": ((F32,), {"memory_format": "PF"}),
    "(F32,False,True,memory_format=pf)": ((F32, False, True), {"memory_format": "PF"}),
    "('cpu')": (("cpu",), {}),
    "('cpu',F32)": (("cpu", F32), {}),
    "('cpu',F32,False,True)": (("cpu", F32, False, True), {}),
    "('cpu',F64,False,True)": (("cpu", F64, False, True), {}),
    "('cpu',F64,True,False)": (("cpu", F64, True, False), {}),
    "('cpu',None,False,True)": (("cpu", None, False, True), {}),
    "('cpu',copy=True)": (("cpu",), {"copy": True}),
    "('cpu',dtype=F64)": (("cpu",), {"dtype": F64}),
    "(device('cpu'),F32,True)": (("DEV", F32, True), {}),
    "(None)": ((None,), {}),
    "(None,F64)": ((None, F64), {}),
    "(None,None,False,True)": ((None, None, False, True), {}),
    "(device=,dtype=,non_blocking=,copy=)": ((), {"device": "cpu", "dtype": F64, "non_blocking": False,
                                                   "copy": True}),
    "(dtype=F32,copy=True)": ((), {"dtype": F32, "copy": True}),
    "(device=None,dtype=None,copy=True)": ((), {"device": None, "dtype": None, "copy": True}),
    "(copy=True)": ((), {"copy": True}),
    "(copy=False)": ((), {"copy": False}),
    "(memory_format=pf)": ((), {"memory_format": "PF"}),
    "('meta')": (("meta",), {}),
    "(device='meta',copy=True)": ((), {"device": "meta", "copy": True}),
    "(other)": (("OTHER",), {}),
    "(other,False,True)": (("OTHER", False, True), {}),
    "(other,copy=True)": (("OTHER",), {"copy": True}),
    "(other,memory_format=pf)": (("OTHER",), {"memory_format": "PF"}),
    "(self)": (("SELF",), {}),
    "(self,False,True)": (("SELF", False, True), {}),
    "(float)": ((float,), {}),
    # TypeErrors
    "(F32,False,True,pf)": ((F32, False, True, "PF"), {}),
    "('cpu',F32,False,True,pf)": (("cpu", F32, False, True, "PF"), {}),
    "(other=other)": ((), {"other": "OTHER"}),
    "(F32,F64)": ((F32, F64), {}),
    "('cpu','cpu')": (("cpu", "cpu"), {}),
    "(F32,'cpu')": ((F32, "cpu"), {}),
    "(F32,dtype=F64)": ((F32,), {"dtype": F64}),
    "('cpu',device='cpu')": (("cpu",), {"device": "cpu"}),
    "(F32,bogus=1)": ((F32,), {"bogus": 1}),
    "(F32,'x')": ((F32, "x"), {}),
    "(F32,1)": ((F32, 1), {}),
    "(F32,non_blocking=None)": ((F32,), {"non_blocking": None}),
    "(F32,copy=1)": ((F32,), {"copy": 1}),
    "(F32,False,1)": ((F32, False, 1), {}),
    "(other,F32)": (("OTHER", F32), {}),
    "(other,False,True,False)": (("OTHER", False, True, False), {}),
    "(F32,False,True,False)": ((F32, False, True, False), {}),
    "([1])": (([1],), {}),
}


def _resolve(lib: Any, v: Any, x: Any, other: Any) -> Any:
    if isinstance(v, str):
        if v in (F32, F64):
            return getattr(lib, v)
        if v == "PF":
            return torch.preserve_format if lib is torch else getattr(cgrad, "preserve_format", None)
        if v == "OTHER":
            return other
        if v == "SELF":
            return x
        if v == "DEV":
            return lib.device("cpu")
    return v


@pytest.mark.parametrize("call", list(TO_CALLS), ids=str)
def test_tensor_to_signatures(call: str) -> None:
    args, kwargs = TO_CALLS[call]
    out = {}
    for lib in (cgrad, torch):
        x = lib.tensor([[1.5, -2.0, 3.25]] * 2)
        other = lib.zeros(2, dtype=lib.float64)
        a = tuple(_resolve(lib, v, x, other) for v in args)
        k = {n: _resolve(lib, v, x, other) for n, v in kwargs.items()}
        try:
            r = x.to(*a, **k)
        except Exception as e:  # noqa: BLE001 - compared with torch's
            out[lib.__name__] = e
            continue
        shares = r.device.type != "meta" and r.data_ptr() == x.data_ptr()
        out[lib.__name__] = (r is x, shares, str(r.dtype).split(".")[-1], r.device.type, r)
    c, t = out["cgrad"], out["torch"]
    if isinstance(t, Exception):
        assert isinstance(c, type(t)), (c, t)
        return
    assert not isinstance(c, Exception), c
    assert c[:4] == t[:4], (c[:4], t[:4])
    if t[3] != "meta":
        assert_same(c[4], t[4])


def test_tensor_to_copy_returns_a_new_tensor_with_its_own_storage() -> None:
    x = cgrad.ones(3, requires_grad=True)
    for r in (x.to(cgrad.float32, False, True), x.to("cpu", cgrad.float32, False, True), x.to(copy=True),
              x.to(x, copy=True), x.to(device="cpu", copy=True)):
        assert r is not x and r.data_ptr() != x.data_ptr()
        assert r.requires_grad and r.grad_fn is not None  # a differentiable copy, as torch's
    r = x.to(cgrad.float64, copy=True)
    r.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0]
    y = cgrad.ones(2)
    z = y.to("cpu", None, False, True)
    z.add_(1)
    assert y.tolist() == [1.0, 1.0]


# ---------------------------------------------------------------- hardtanh / relu6 / softsign on integer dtypes

INT_ACT_DTYPES = ["int64", "int32", "int16", "int8", "uint8"]


@pytest.mark.parametrize("dtype", INT_ACT_DTYPES)
@pytest.mark.parametrize("name,args", [("hardtanh", ()), ("hardtanh", (-1.5, 2.7)), ("hardtanh", (0.0, 3.0)),
                                       ("relu6", ()), ("softsign", ())])
def test_integer_activations(name: str, args: Tuple[float, ...], dtype: str) -> None:
    data = [[-7, -1, 0], [2, 5, 9]]
    c = cgrad.tensor(data).to(getattr(cgrad, dtype))
    t = torch.tensor(data).to(getattr(torch, dtype))
    try:
        want = getattr(TF, name)(t, *args)
    except RuntimeError as e:
        with pytest.raises(RuntimeError, match="unsigned type with negative limits"):
            getattr(CF, name)(c, *args)
        assert "negative limits" in str(e)
        return
    assert_same(getattr(CF, name)(c, *args), want)
    # non-contiguous and 0-d / empty inputs
    assert_same(getattr(CF, name)(c.t(), *args), getattr(TF, name)(t.t(), *args))
    assert_same(getattr(CF, name)(c[0, 0], *args), getattr(TF, name)(t[0, 0], *args))
    assert_same(getattr(CF, name)(c[:0], *args), getattr(TF, name)(t[:0], *args))


@pytest.mark.parametrize("name", ["hardtanh", "relu6"])
def test_integer_activations_inplace(name: str) -> None:
    c, t = cgrad.tensor([-7, 0, 9]), torch.tensor([-7, 0, 9])
    rc, rt = getattr(CF, name)(c, inplace=True), getattr(TF, name)(t, inplace=True)
    assert rc is c and rt is t
    assert_same(c, t)


@pytest.mark.parametrize("name", ["hardtanh", "relu6", "softsign"])
def test_bool_activations_refused(name: str) -> None:
    t, c = torch.tensor([True, False]), cgrad.tensor([True, False])
    with pytest.raises(Exception) as te:
        getattr(TF, name)(t)
    with pytest.raises(te.type):
        getattr(CF, name)(c)


# ---------------------------------------------------------------- bilinear on integer dtypes

@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
@pytest.mark.parametrize("bias", [False, True])
def test_bilinear_integer(dtype: str, bias: bool) -> None:
    rng = np.random.default_rng(0)
    x1, x2 = rng.integers(0, 4, (2, 3, 2)).tolist(), rng.integers(0, 4, (2, 3, 4)).tolist()
    w, b = rng.integers(0, 3, (5, 2, 4)).tolist(), rng.integers(0, 3, (5,)).tolist()
    cd, td = getattr(cgrad, dtype), getattr(torch, dtype)
    cargs = [cgrad.tensor(a, dtype=cd) for a in (x1, x2, w)] + ([cgrad.tensor(b, dtype=cd)] if bias else [])
    targs = [torch.tensor(a, dtype=td) for a in (x1, x2, w)] + ([torch.tensor(b, dtype=td)] if bias else [])
    assert_same(CF.bilinear(*cargs), TF.bilinear(*targs))
    # non-contiguous inputs
    assert_same(CF.bilinear(cargs[0].transpose(0, 1), cargs[1].transpose(0, 1), *cargs[2:]),
                TF.bilinear(targs[0].transpose(0, 1), targs[1].transpose(0, 1), *targs[2:]))


def test_bilinear_bool_refused() -> None:
    for lib, F in ((torch, TF), (cgrad, CF)):
        a = lib.tensor([[True]])
        with pytest.raises(NotImplementedError):
            F.bilinear(a, a, lib.ones(1, 1, 1, dtype=lib.bool))


# ---------------------------------------------------------------- narrow with a tensor start

@pytest.mark.parametrize("start", [1, -2, "t0d", "t0d_int8", "t0d_neg"])
def test_narrow_tensor_start(start: Any) -> None:
    def conv(lib: Any) -> Any:
        if start == "t0d":
            return lib.tensor(1)
        if start == "t0d_int8":
            return lib.tensor(2, dtype=lib.int8)
        if start == "t0d_neg":
            return lib.tensor(-3)
        return start
    c = cgrad.arange(10.0, dtype=cgrad.float64).view(2, 5).requires_grad_()
    t = torch.arange(10.0, dtype=torch.float64).view(2, 5).requires_grad_()
    rc, rt = c.narrow(1, conv(cgrad), 2), t.narrow(1, conv(torch), 2)
    assert_same(rc, rt)
    assert_same(cgrad.narrow(c.t(), 0, conv(cgrad), 2), torch.narrow(t.t(), 0, conv(torch), 2))
    rc.sum().backward(), rt.sum().backward()
    assert_same(c.grad, t.grad)


@pytest.mark.parametrize("bad", ["1-element", "bool", "float", "2-element"])
def test_narrow_bad_tensor_start(bad: str) -> None:
    for lib in (cgrad, torch):
        s = {"1-element": lib.tensor([1]), "bool": lib.tensor(True), "float": lib.tensor(1.0),
             "2-element": lib.tensor([1, 2])}[bad]
        with pytest.raises(RuntimeError, match="start must be an 0-dim integral Tensor"):
            lib.arange(10.0).view(2, 5).narrow(1, s, 2)


def test_narrow_non_int_start() -> None:
    for lib in (cgrad, torch):
        for s in (1.0, True):
            with pytest.raises(TypeError):
                lib.arange(10.0).narrow(0, s, 2)


# ---------------------------------------------------------------- gather with an empty index of another rank

@pytest.mark.parametrize("ishape", [(0,), (0, 2, 2), (3, 0, 4)])
@pytest.mark.parametrize("xshape", [(2, 3), ()])
def test_gather_empty_index_any_rank(xshape: Tuple[int, ...], ishape: Tuple[int, ...]) -> None:
    c = cgrad.ones(xshape, dtype=cgrad.float64).requires_grad_()
    t = torch.ones(xshape, dtype=torch.float64).requires_grad_()
    rc = cgrad.gather(c, 0, cgrad.empty(*ishape, dtype=cgrad.int64))
    rt = torch.gather(t, 0, torch.empty(*ishape, dtype=torch.int64))
    assert_same(rc, rt)
    rc.sum().backward(), rt.sum().backward()
    assert_same(c.grad, t.grad)


def test_gather_nonempty_index_rank_mismatch_still_refused() -> None:
    for lib in (cgrad, torch):
        with pytest.raises(RuntimeError, match="same number of dimensions"):
            lib.gather(lib.ones(2, 3), 1, lib.zeros(2, 2, 2, dtype=lib.int64))
        with pytest.raises(IndexError):
            lib.gather(lib.ones(2, 3), 5, lib.empty(0, 2, 2, dtype=lib.int64))


# ---------------------------------------------------------------- integer addmm / baddbmm with fractional beta / alpha

LINALG_INT_CASES = [(0.5, 1.5), (2, 1.5), (2.7, 3), (-0.5, -1.5), (1, 1)]


@pytest.mark.parametrize("beta,alpha", LINALG_INT_CASES)
@pytest.mark.parametrize("op", ["baddbmm", "addmm", "baddbmm_", "addmm_"])
def test_integer_products_truncate_beta_alpha(op: str, beta: float, alpha: float) -> None:
    rng = np.random.default_rng(1)
    if op.startswith("baddbmm"):
        shapes = [(2, 3, 4), (2, 3, 5), (2, 5, 4)]
    else:
        shapes = [(3, 4), (3, 5), (5, 4)]
    data = [rng.integers(-3, 4, s).tolist() for s in shapes]
    c = [cgrad.tensor(d) for d in data]
    t = [torch.tensor(d) for d in data]
    if op.endswith("_"):
        rc = getattr(c[0], op)(c[1], c[2], beta=beta, alpha=alpha)
        rt = getattr(t[0], op)(t[1], t[2], beta=beta, alpha=alpha)
        assert rc is c[0]
    else:
        rc = getattr(cgrad, op)(*c, beta=beta, alpha=alpha)
        rt = getattr(torch, op)(*t, beta=beta, alpha=alpha)
        # a broadcast self
        assert_same(getattr(cgrad, op)(c[0][..., :1, :], *c[1:], beta=beta, alpha=alpha),
                    getattr(torch, op)(t[0][..., :1, :], *t[1:], beta=beta, alpha=alpha))
    assert_same(rc, rt)


@pytest.mark.parametrize("beta,alpha", LINALG_INT_CASES)
@pytest.mark.parametrize("op", ["addbmm", "addmv"])
def test_composed_integer_products_truncate_too(op: str, beta: float, alpha: float) -> None:
    out = []
    for lib in (cgrad, torch):
        m = lib.arange(4, dtype=lib.int64).view(2, 2) - 1
        args = {"addbmm": (m, m[None].expand(3, 2, 2), m[None].expand(3, 2, 2)), "addmv": (m[0], m, m[1])}[op]
        out.append(getattr(lib, op)(*args, beta=beta, alpha=alpha))
    assert_same(*out)


def test_addr_refuses_fractional_beta_for_integers() -> None:
    for lib in (cgrad, torch):
        m = lib.ones(2, 2, dtype=lib.int64)
        with pytest.raises(RuntimeError, match="must not be a floating point number"):
            lib.addr(m, m[0], m[0], beta=0.5)


@pytest.mark.parametrize("v", [float("inf"), float("nan"), 1e30])
def test_integer_addmm_beta_overflow(v: float) -> None:
    for lib in (cgrad, torch):
        m = lib.ones(2, 2, dtype=lib.int64)
        with pytest.raises(RuntimeError, match="without overflow"):
            lib.addmm(m, m, m, beta=v)


# ---------------------------------------------------------------- rms_norm with a negative eps; adaptive pools' ValueError

@pytest.mark.parametrize("eps", [-0.5, -1e-3, None, 0.0, 1e-2])
@pytest.mark.parametrize("data", [[[1.0, 2.0, 3.0], [0.1, 0.2, 0.3]], [[0.5, -0.25]]])
def test_rms_norm_eps(eps: Any, data: Any) -> None:
    c, t = both(data, requires_grad=True)
    n = len(data[0])
    rc, rt = CF.rms_norm(c, (n,), eps=eps), TF.rms_norm(t, (n,), eps=eps)
    assert_same(rc, rt, atol=1e-9)
    rc.sum().backward(), rt.sum().backward()
    assert_same(c.grad, t.grad, atol=1e-9)


@pytest.mark.parametrize("name", ["adaptive_avg_pool2d", "adaptive_max_pool2d"])
@pytest.mark.parametrize("shape,size", [((3, 4), (2, 2)), ((4,), (2, 2)), ((3, 4), [2, None])])
def test_adaptive_pool2d_low_rank_sequence_size(name: str, shape: Tuple[int, ...], size: Any) -> None:
    for lib, F in ((torch, TF), (cgrad, CF)):
        with pytest.raises(ValueError, match="Input dimension should be at least 3"):
            getattr(F, name)(lib.zeros(*shape), size)


# ---------------------------------------------------------------- batch_norm of a 1-D empty input

@pytest.mark.parametrize("training", [False, True])
@pytest.mark.parametrize("affine", [False, True])
def test_batch_norm_1d_empty(training: bool, affine: bool) -> None:
    res = []
    for lib, F in ((cgrad, CF), (torch, TF)):
        x = lib.empty(0, dtype=lib.float64).requires_grad_()
        w = lib.full((2,), 3.0, dtype=lib.float64) if affine else None
        b = lib.full((2,), 1.0, dtype=lib.float64) if affine else None
        rm = None if training else lib.zeros(1, dtype=lib.float64)
        rv = None if training else lib.ones(1, dtype=lib.float64)
        r = F.batch_norm(x, rm, rv, w, b, training=training)
        assert r.requires_grad and r.grad_fn is not None
        r.sum().backward()
        res.append((r, x.grad))
    assert_same(res[0][0], res[1][0])
    assert_same(res[0][1], res[1][1])


# ---------------------------------------------------------------- bernoulli(p) with p requiring grad

@pytest.mark.parametrize("shape", [(3,), (2, 3), (), (0, 2)])
def test_bernoulli_p_requiring_grad(shape: Tuple[int, ...]) -> None:
    res = []
    for lib in (cgrad, torch):
        p = lib.full(shape, 0.5, dtype=lib.float64).requires_grad_()
        r = lib.bernoulli(p)
        assert r.requires_grad and r.grad_fn is not None and r.grad_fn.name() == "BernoulliBackward0"
        assert tuple(r.shape) == shape and set(r.flatten().tolist()) <= {0.0, 1.0}
        (r * 3).sum().backward()
        res.append(p.grad)
        m = p.detach().bernoulli()
        assert not m.requires_grad
    assert_same(res[0], res[1])


# ---------------------------------------------------------------- embedding(scale_grad_by_freq=True); sparse=True refused

@pytest.mark.parametrize("padding_idx", [None, 1])
@pytest.mark.parametrize("max_norm", [None, 5.0])
def test_embedding_scale_grad_by_freq(padding_idx: Any, max_norm: Any) -> None:
    res = []
    for lib, F in ((cgrad, CF), (torch, TF)):
        w = lib.arange(12.0, dtype=lib.float64).view(4, 3).requires_grad_()
        idx = lib.tensor([[0, 2, 0], [1, 0, 2]])
        out = F.embedding(idx, w, padding_idx=padding_idx, max_norm=max_norm, scale_grad_by_freq=True)
        (out * lib.arange(18.0, dtype=lib.float64).view(2, 3, 3)).sum().backward()
        res.append((out, w.grad))
    assert_same(res[0][0], res[1][0])
    assert_same(res[0][1], res[1][1])


def test_embedding_sparse_is_not_implemented() -> None:
    with pytest.raises(NotImplementedError, match="sparse"):
        CF.embedding(cgrad.tensor([0]), cgrad.ones(2, 2), sparse=True)


# ---------------------------------------------------------------- addr with a bool alpha / beta on integers

@pytest.mark.parametrize("kw", [dict(beta=True), dict(alpha=True), dict(alpha=True, beta=True)], ids=str)
def test_addr_boolean_scalars_on_integers_name_the_argument(kw: dict) -> None:
    """A bool alpha / beta on an integer addr is torch's RuntimeError, naming
    the argument (beta is checked first)."""
    msgs = []
    for lib in (torch, cgrad):
        a, v = lib.ones(2, 2, dtype=lib.int64), lib.ones(2, dtype=lib.int64)
        with pytest.raises(RuntimeError) as e:
            lib.addr(a, v, v, **kw)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


# ---------------------------------------------------------------- found by the reference inputs

TWO_NUMBERS = [(3, 2), (3, 2.5), (-8.5, -1.75), (True, 2), (True, False), (7, -2)]


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "floor_divide", "subtract", "multiply", "divide",
                                "true_divide", "remainder", "fmod", "atan2", "eq"])
@pytest.mark.parametrize("a,b", TWO_NUMBERS, ids=str)
def test_binary_ops_on_two_python_numbers(op: str, a: Any, b: Any) -> None:
    """torch.add(3, 2.5) is a tensor: add, sub, mul, div and floor_divide take
    two Python numbers (input a 0-d tensor of its own dtype); the other binary
    ops raise torch's exception type."""
    got = []
    for lib in (torch, cgrad):
        try:
            got.append(getattr(lib, op)(a, b))
        except Exception as e:  # noqa: BLE001 - compared with torch's
            got.append(e)
    rt, rc = got
    if isinstance(rt, Exception):
        assert isinstance(rc, type(rt)) or isinstance(rt, NotImplementedError) and isinstance(rc, RuntimeError), \
            (rc, rt)
        return
    assert_same(rc, rt)


@pytest.mark.parametrize("size", [(0,), (0, 3), (2, 0, 1)], ids=str)
@pytest.mark.parametrize("offset", [2, 3, 100])
def test_empty_as_strided_may_start_past_the_storage(size: Tuple[int, ...], offset: int) -> None:
    """An empty view reads nothing, so PyTorch lets it start at any offset,
    past the storage's end included; it works as any empty tensor, gradient
    included."""
    base = cgrad.zeros(2, requires_grad=True)
    v = base.as_strided(size, (1,) * len(size), offset)
    assert v.shape == size and v.storage_offset() == offset == torch.zeros(2).as_strided(
        size, (1,) * len(size), offset).storage_offset()
    assert (v + 1).shape == size and float(v.sum()) == 0.0
    v.sum().backward()
    assert base.grad.tolist() == [0.0, 0.0]
    with pytest.raises(IndexError, match="out of bounds"):
        base.as_strided((1,), (1,), 2)  # one element past the end still raises


BINARY_SPECIALS = [0.0, -0.0, 1.0, -2.0, 1e-200, INF, -INF, NAN]


@pytest.mark.parametrize("op", ["atan2", "fmax", "fmin"])
def test_binary_gradients_at_special_values(op: str) -> None:
    """op_db's reference inputs: atan2's gradient is a signed zero where a^2 + b^2 is 0 (the origin,
    or underflow), as PyTorch's; fmax / fmin give a tie's or a NaN other's whole gradient to input."""
    pairs = [(a, b) for a in BINARY_SPECIALS for b in BINARY_SPECIALS]
    grads = []
    for lib in (torch, cgrad):
        a = lib.tensor([p[0] for p in pairs], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([p[1] for p in pairs], dtype=lib.float64, requires_grad=True)
        ga, gb = lib.autograd.grad(getattr(lib, op)(a, b), (a, b), lib.full((len(pairs),), 1.5, dtype=lib.float64))
        grads.append([(x, y) for x, y in zip(ga.tolist(), gb.tolist())])
    for (a, b), t, c in zip(pairs, *grads):
        assert str(t) == str(c), (op, a, b, t, c)  # str: signed zeros and NaN compared too


def test_bool_clamp_with_tensor_bounds_and_sum_to_size_of_a_0d_integer() -> None:
    """Bool clamp_min / clamp_max / clamp take one bool tensor bound (max / min; both: NotImplementedError); sum_to_size(()) is the
    full sum, so an integer input (0-d included) comes back int64, as PyTorch's sum_to."""
    for lib in (torch, cgrad):
        b = lib.tensor([True, False])
        assert lib.clamp_max(b, lib.tensor(False)).tolist() == [False, False]
        assert lib.clamp_min(b, lib.tensor(True)).tolist() == [True, True]
        assert lib.clamp(b, min=lib.tensor([False, True])).tolist() == [True, True]
        with pytest.raises(NotImplementedError, match="clamp_cpu"):
            lib.clamp(b, min=lib.tensor(False), max=lib.tensor(True))
        assert lib.clamp_max(b, lib.tensor(False)).dtype == lib.bool
        s = lib.tensor(3, dtype=lib.uint8).sum_to_size(())
        assert s.dtype == lib.int64 and int(s) == 3
        assert lib.ones(2, 3, dtype=lib.uint8).sum_to_size(1, 3).dtype == lib.int64  # a reduction: sum's dtype
        assert lib.ones(2, 3, dtype=lib.uint8).sum_to_size(2, 3).dtype == lib.uint8  # none: the input itself


def test_unfold_fold_bool_max_pool3d_integers_multi_margin_1d() -> None:
    """unfold / fold take bool as PyTorch's im2col / col2im do (fold's sum of bools is their or), not
    integers; 3-D max pooling works on every integer dtype (the window padding is the dtype's minimum);
    multi_margin_loss of a 1-D input with a 1-element target keeps the target's shape."""
    rng = np.random.default_rng(0)
    mask = rng.random((2, 1, 5, 5)) > 0.5
    vals = rng.integers(0, 120, (1, 2, 3, 6, 5))
    for lib in (torch, cgrad):
        F = lib.nn.functional
        u = F.unfold(lib.tensor(mask), 2, padding=1)
        f = F.fold(u, (5, 5), 2, padding=1)
        assert u.dtype == f.dtype == lib.bool
        with pytest.raises(NotImplementedError, match="im2col_out_cpu"):
            F.unfold(lib.ones(1, 1, 3, 3, dtype=lib.int64), 2)
        pools = [F.max_pool3d(lib.tensor(vals, dtype=getattr(lib, dt)), 3, 2, ceil_mode=True)
                 for dt in ("uint8", "int8", "int16", "int32", "int64")]
        loss = F.multi_margin_loss(lib.tensor([0.1, 0.5, -0.2, 0.3, 0.0]), lib.tensor([2]), reduction="none")
        if lib is torch:
            ref = (u.tolist(), f.tolist(), [p.tolist() for p in pools], loss.tolist())
        else:
            assert (u.tolist(), f.tolist(), [p.tolist() for p in pools]) == ref[:3]
            assert loss.shape == (1,) and abs(loss.tolist()[0] - ref[3][0]) < 1e-6


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("size,scale", [((5, 7), None), ((19, 23), None), (None, 0.3), (None, (1.7, 0.45)),
                                        ((1, 1), None)], ids=str)
@pytest.mark.parametrize("align_corners", [False, True])
def test_interpolate_antialias(mode: str, size: Any, scale: Any, align_corners: bool) -> None:
    """Note [Antialiased interpolation]: values and input gradients equal PyTorch's (float64; its float32
    kernel is ~5e-5 relative off on large inputs, cgrad's 1e-7), non-contiguous input included."""
    x = np.random.default_rng(1).standard_normal((2, 3, 11, 13))
    res = []
    for lib in (torch, cgrad):
        t = lib.tensor(x, dtype=lib.float64).transpose(2, 3).contiguous().transpose(2, 3).requires_grad_(True)
        y = lib.nn.functional.interpolate(t, size=size, scale_factor=scale, mode=mode, align_corners=align_corners,
                                          antialias=True)
        g = np.random.default_rng(2).standard_normal(tuple(y.shape))
        (y * lib.tensor(g, dtype=lib.float64)).sum().backward()
        res.append((np.array(y.tolist()), np.array(t.grad.tolist())))
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-12, atol=1e-12)


def test_interpolate_antialias_errors() -> None:
    F = cgrad.nn.functional
    with pytest.raises(ValueError, match="Anti-alias option is restricted"):
        F.interpolate(cgrad.ones(1, 1, 4), size=2, mode="linear", antialias=True)
    u = F.interpolate(cgrad.full((1, 1, 4, 4), 7, dtype=cgrad.uint8), size=2, mode="bilinear", antialias=True)
    assert u.dtype == cgrad.uint8 and u.tolist() == [[[[7, 7], [7, 7]]]]  # uint8: tests/python/test_interpolate_uint8.py
    y = F.interpolate(cgrad.ones(1, 1, 8, 8, dtype=cgrad.float32), size=3, mode="bilinear", antialias=True)
    assert y.dtype == cgrad.float32 and np.allclose(np.array(y.tolist()), 1.0)


def test_integer_einsum_and_tensordot_dtypes() -> None:
    """PyTorch's einsum sums a dim only one operand has with that operand's sum (small integers widen to
    int64, and the contraction follows), a one-operand einsum is a sum; a contraction alone keeps the
    dtype; tensordot of integers keeps theirs (size-1 contracted dims summed in place)."""
    cases = [("i->", [(3,)]), ("ii->i", [(3, 3)]), ("ij->j", [(3, 3)]), ("ij,jk->ik", [(2, 3), (3, 2)]),
             ("...ik,...j->ij", [(1, 2, 3), (3,)])]
    for eq, shapes in cases:
        for dt in ("uint8", "int8", "int32"):
            got = []
            for lib in (torch, cgrad):
                ops = [lib.arange(int(np.prod(s)), dtype=getattr(lib, dt)).reshape(s) for s in shapes]
                r = lib.einsum(eq, *ops)
                got.append((str(r.dtype).split(".")[-1], r.tolist()))
            assert got[0] == got[1], (eq, dt, got)
    for lib in (torch, cgrad):
        r = lib.tensordot(lib.ones(1, 1, 1, dtype=lib.uint8), lib.ones(2, 1, 2, dtype=lib.uint8), dims=((0, 1), (2, 0)))
        assert str(r.dtype).endswith("uint8") and r.tolist() == [[4]]
