"""The Tensor's Python operators against PyTorch: every binary operator over
every pair of dtypes (tensors, 0-d tensors and Python scalars on either side),
the in-place forms and their result-type errors, unary operators, scalar
conversions, len / iter / in / hash, and the non-op helpers (T, mT, H, mH,
type, type_as, *_as, new_*, is_floating_point, is_signed, data_ptr)."""
import math
import operator

import numpy as np
import pytest
import torch

import cgrad

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]

BINARY = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
    "floordiv": operator.floordiv, "mod": operator.mod, "pow": operator.pow, "and": operator.and_,
    "or": operator.or_, "xor": operator.xor, "lshift": operator.lshift, "rshift": operator.rshift,
    "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge,
}
INPLACE = {
    "add": operator.iadd, "sub": operator.isub, "mul": operator.imul, "truediv": operator.itruediv,
    "floordiv": operator.ifloordiv, "mod": operator.imod, "pow": operator.ipow, "and": operator.iand,
    "or": operator.ior, "xor": operator.ixor, "lshift": operator.ilshift, "rshift": operator.irshift,
}

# left operands; right operands never hold 0 (integer // and % by zero raise) and stay small for ** and shifts
LEFT = [-3, -1, 0, 2, 5, 7]
RIGHT = [2, 3, 1, 1, 4, 2]
SCALARS = [True, False, 3, -2, 0, 2.5, -0.5]


def tt(values, dtype):
    """The same values as a torch tensor and a cgrad tensor of one dtype."""
    t = torch.tensor(values).to(getattr(torch, dtype))
    return t, cgrad.tensor(t.tolist(), dtype=getattr(cgrad, dtype))


def tol(dtype):
    return {"float16": 2e-3, "bfloat16": 2e-2}.get(dtype, 1e-5)


def run(fn, *args):
    try:
        return fn(*args), None
    except Exception as e:  # noqa: BLE001 - compared against torch's exception below
        return None, e


def same_error_kind(e_cg, e_torch):
    """cgrad raises where torch raises, with the same kind of exception."""
    for kind in (NotImplementedError, TypeError, ValueError, ZeroDivisionError, RuntimeError):
        if isinstance(e_torch, kind):
            return isinstance(e_cg, kind)
    return e_cg is not None


def check(desc, r_cg, e_cg, r_t, e_t, failures, rtol=1e-5):
    if e_t is not None or e_cg is not None:
        if e_t is None or e_cg is None or not same_error_kind(e_cg, e_t):
            failures.append(f"{desc}: torch {e_t!r:.120} / cgrad {e_cg!r:.120}")
        return
    if not isinstance(r_t, torch.Tensor):
        if r_cg != r_t:
            failures.append(f"{desc}: {r_cg} != {r_t}")
        return
    if not isinstance(r_cg, cgrad.Tensor):
        failures.append(f"{desc}: cgrad returned {type(r_cg).__name__}")
        return
    if str(r_cg.dtype).split(".")[-1] != str(r_t.dtype).split(".")[-1] or tuple(r_cg.shape) != tuple(r_t.shape):
        failures.append(f"{desc}: dtype/shape {r_cg.dtype}{tuple(r_cg.shape)} vs torch {r_t.dtype}{tuple(r_t.shape)}")
        return
    a = torch.tensor(r_cg.tolist(), dtype=torch.float64)
    b = r_t.double()
    if not torch.allclose(a, b, rtol=rtol, atol=rtol, equal_nan=True):
        failures.append(f"{desc}: values {a.tolist()} vs torch {b.tolist()}")


@pytest.mark.parametrize("name", list(BINARY))
def test_binary_operator_all_dtype_pairs(name):
    op = BINARY[name]
    failures = []
    for da in DTYPES:
        ta, ca = tt(LEFT, da)
        for db in DTYPES:
            tb, cb = tt(RIGHT, db)
            r_t, e_t = run(op, ta, tb)
            r_c, e_c = run(op, ca, cb)
            check(f"{da} {name} {db}", r_c, e_c, r_t, e_t, failures, max(tol(da), tol(db)))
            # 0-d tensor on the right: it does not take part in promotion against a dim > 0 tensor
            t0, c0 = tt(RIGHT[1], db)
            r_t, e_t = run(op, ta, t0)
            r_c, e_c = run(op, ca, c0)
            check(f"{da} {name} 0-d {db}", r_c, e_c, r_t, e_t, failures, max(tol(da), tol(db)))
    assert not failures, "\n".join(failures[:20])


@pytest.mark.parametrize("name", list(BINARY))
def test_binary_operator_with_python_scalars_both_sides(name):
    op = BINARY[name]
    failures = []
    for da in DTYPES:
        ta, ca = tt(LEFT if name not in ("pow", "lshift", "rshift") else RIGHT, da)
        for s in SCALARS:
            if name in ("truediv", "floordiv", "mod") and s in (0, False):
                continue  # x / 0 is covered by test_division_by_zero
            r_t, e_t = run(op, ta, s)
            r_c, e_c = run(op, ca, s)
            check(f"{da} {name} {s!r}", r_c, e_c, r_t, e_t, failures, tol(da))
            tr = ta.clamp(min=1) if ta.dtype != torch.bool else ta
            cr = cgrad.tensor(tr.tolist(), dtype=getattr(cgrad, da))
            r_t, e_t = run(op, s, tr)
            r_c, e_c = run(op, s, cr)
            check(f"{s!r} {name} {da}", r_c, e_c, r_t, e_t, failures, tol(da))
    assert not failures, "\n".join(failures[:20])


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_operator_result_types(name):
    op = INPLACE[name]
    failures = []
    for da in DTYPES:
        for other in DTYPES + SCALARS:
            if name in ("truediv", "floordiv", "mod") and other in (0, False):
                continue
            ta, ca = tt(RIGHT if name in ("pow", "lshift", "rshift") else LEFT, da)
            if isinstance(other, str):
                tb, cb = tt(RIGHT, other)
            else:
                tb = cb = other
            r_t, e_t = run(op, ta, tb)
            r_c, e_c = run(op, ca, cb)
            desc = f"{da} {name}= {other!r}"
            check(desc, r_c, e_c, r_t, e_t, failures, tol(da))
            if e_t is None and e_c is None and r_c is not ca:
                failures.append(f"{desc}: the in-place operator did not return the tensor itself")
    assert not failures, "\n".join(failures[:20])


def test_inplace_result_type_error_message():
    x = cgrad.tensor([1, 2])
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        x += 1.5
    b = cgrad.tensor([True, False])
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Bool"):
        b += 1
    with pytest.raises(RuntimeError, match="negative integer powers"):
        x **= -1
    assert x.tolist() == [1, 2]  # nothing was written


def test_division_by_zero():
    i = cgrad.tensor([3, -2])
    for op in (operator.floordiv, operator.mod):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            op(i, 0)
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            op(i, cgrad.tensor([1, 0]))
    f = cgrad.tensor([1.0, -1.0, 0.0])
    for op in (operator.truediv, operator.floordiv, operator.mod):
        ft = torch.tensor([1.0, -1.0, 0.0])
        np.testing.assert_equal(np.array(op(f, 0).tolist()), op(ft, 0).numpy())
    assert (i / 0).tolist() == [math.inf, -math.inf]


def test_pow_forms():
    i = cgrad.tensor([1, 2, 3])
    f = cgrad.tensor([0.25, 1.0, 4.0])
    assert (i ** 2).dtype == cgrad.int64 and (i ** 2).tolist() == [1, 4, 9]
    assert (i ** 0.5).dtype == cgrad.float32
    assert (2 ** i).dtype == cgrad.int64 and (2 ** i).tolist() == [2, 4, 8]
    assert (2.0 ** i).dtype == cgrad.float32
    np.testing.assert_allclose((f ** 0.5).tolist(), [0.5, 1.0, 2.0])
    np.testing.assert_allclose((2 ** f).tolist(), [2 ** 0.25, 2.0, 16.0])
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
        i ** -1
    b = cgrad.tensor([True, False])
    assert (b ** True).tolist() == [True, False] and (b ** False).tolist() == [True, True]
    with pytest.raises(TypeError):
        pow(f, 2, 3)
    # integer tensor ** integer tensor with negative exponents: PyTorch's integer semantics
    base, ex = tt([2, 1, -1, 3, 0], "int64"), tt([-1, -3, -3, 0, 2], "int64")
    assert (base[1] ** ex[1]).tolist() == (base[0] ** ex[0]).tolist()


def test_unary_operators_all_dtypes():
    failures = []
    for d in DTYPES:
        ta, ca = tt(LEFT, d)
        for name, op in (("neg", operator.neg), ("pos", operator.pos), ("abs", abs), ("invert", operator.invert)):
            r_t, e_t = run(op, ta)
            r_c, e_c = run(op, ca)
            check(f"{name} {d}", r_c, e_c, r_t, e_t, failures, tol(d))
    assert not failures, "\n".join(failures)
    x = cgrad.tensor([1.0])
    assert +x is x
    with pytest.raises(RuntimeError, match="Negation, the `-` operator, on a bool tensor"):
        -cgrad.tensor([True])
    with pytest.raises(TypeError, match="only implemented on integer and Boolean"):
        ~x


def test_matmul_dtypes_and_shapes():
    rng = np.random.default_rng(0)
    for d in ("float32", "float64", "int64", "int32", "float16", "bfloat16"):
        for sa, sb in (((3, 4), (4, 5)), ((4,), (4,)), ((2, 3, 4), (4,)), ((4,), (4, 2)), ((2, 3, 4), (2, 4, 5))):
            ta = torch.tensor(rng.integers(-3, 4, sa)).to(getattr(torch, d))
            tb = torch.tensor(rng.integers(-3, 4, sb)).to(getattr(torch, d))
            ca, cb = (cgrad.tensor(t.tolist(), dtype=getattr(cgrad, d)) for t in (ta, tb))
            r = ca @ cb
            e = ta @ tb
            assert str(r.dtype) == str(e.dtype).replace("torch", "cgrad") and tuple(r.shape) == tuple(e.shape)
            np.testing.assert_allclose(np.array(r.tolist(), dtype=float), e.double().numpy(), rtol=2e-2)
    with pytest.raises(RuntimeError, match="same dtype"):
        cgrad.ones(2, 2) @ cgrad.ones(2, 2, dtype=cgrad.float64)
    with pytest.raises(NotImplementedError):
        cgrad.ones(2, 2, dtype=cgrad.bool) @ cgrad.ones(2, 2, dtype=cgrad.bool)
    with pytest.raises(TypeError, match="unsupported operand"):
        cgrad.ones(2) @ 2
    x = cgrad.ones(2, 2)
    y = x
    y @= cgrad.ones(2, 2)
    assert y is not x and y.tolist() == [[2.0, 2.0], [2.0, 2.0]]


def test_bool_operator_errors_match_torch():
    b = cgrad.tensor([True, False])
    with pytest.raises(RuntimeError, match="with two bool tensors is not supported"):
        b - b
    with pytest.raises(RuntimeError, match="with a bool tensor is not supported"):
        cgrad.tensor([1, 2]) - b
    with pytest.raises(RuntimeError, match="with two bool tensors"):
        b - True
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        b // b
    with pytest.raises(NotImplementedError, match="not implemented for 'Float'"):
        cgrad.tensor([1.0]) & 1
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        b << True
    assert (b << 1).dtype == cgrad.int64


@pytest.mark.parametrize("expr", [
    lambda a, b, lib: (a ** 2 * b).sum(),
    lambda a, b, lib: (a ** b).sum(),
    lambda a, b, lib: (2.5 ** a + b ** 0.5).sum(),
    lambda a, b, lib: ((a % 0.7) * b + a % b).sum(),
    lambda a, b, lib: (abs(a) - (-b) / a).sum(),
    lambda a, b, lib: ((a @ b) * a).sum(),
    lambda a, b, lib: (1 / a + 3 - b).sum(),
])
def test_operator_gradients_match_torch(expr):
    rng = np.random.default_rng(3)
    va, vb = rng.uniform(0.5, 2.0, 6).tolist(), rng.uniform(0.5, 2.0, 6).tolist()
    ta, tb = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (va, vb))
    ca, cb = (cgrad.tensor(v, dtype=cgrad.float64, requires_grad=True) for v in (va, vb))
    expr(ta, tb, torch).backward()
    expr(ca, cb, cgrad).backward()
    np.testing.assert_allclose(ca.grad.tolist(), ta.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(cb.grad.tolist(), tb.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_numpy_scalars_and_arrays_as_operands():
    f16 = cgrad.ones(2, dtype=cgrad.float16)
    assert (f16 + np.float32(2)).dtype == cgrad.float16  # weak like a Python float
    assert (f16 + np.int64(2)).dtype == cgrad.float16
    assert (cgrad.tensor([1, 2], dtype=cgrad.int32) + np.int64(1)).dtype == cgrad.int32
    assert (np.float32(2) * f16).dtype == cgrad.float16
    r = cgrad.ones(2) + np.ones(2)
    assert isinstance(r, cgrad.Tensor) and r.dtype == cgrad.float64
    r = np.ones(2) + cgrad.ones(2)
    assert isinstance(r, cgrad.Tensor)
    with pytest.raises(TypeError):
        cgrad.ones(2) + "a"
    assert (cgrad.ones(2) == "a") is False and (cgrad.ones(2) != None) is True  # noqa: E711


def test_scalar_conversions():
    assert float(cgrad.tensor([2.5])) == 2.5 and int(cgrad.tensor(-2.7)) == -2 and int(cgrad.tensor(True)) == 1
    assert isinstance(int(cgrad.tensor(3)), int) and operator.index(cgrad.tensor(4)) == 4
    assert operator.index(cgrad.tensor(True)) == 1
    assert [10, 20, 30][cgrad.tensor(1)] == 20
    assert bool(cgrad.tensor([0.0])) is False and bool(cgrad.tensor(float("nan"))) is True
    big = 2 ** 62 + 1
    assert int(cgrad.tensor(big)) == big
    for f, exc, msg in ((float, ValueError, "only one element tensors"), (int, ValueError, "only one element tensors"),
                        (operator.index, TypeError, "only integer tensors of a single element"),
                        (bool, RuntimeError, "more than one value is ambiguous")):
        with pytest.raises(exc, match=msg):
            f(cgrad.tensor([1, 2]))
        with pytest.raises(exc):
            f(torch.tensor([1, 2]))
    with pytest.raises(TypeError):
        operator.index(cgrad.tensor(2.0))
    with pytest.raises(ValueError, match="NaN"):
        int(cgrad.tensor(float("nan")))
    with pytest.raises(RuntimeError, match="no values is ambiguous"):
        bool(cgrad.tensor([]))


def test_len_iter_contains_hash():
    x = cgrad.tensor([[1, 2], [3, 4], [5, 6]])
    assert len(x) == 3
    rows = list(x)
    assert [r.tolist() for r in rows] == [[1, 2], [3, 4], [5, 6]]
    assert list(cgrad.zeros(0, 2)) == []
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(cgrad.tensor(1))
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(cgrad.tensor(1))
    w = cgrad.tensor([1.0, 2.0], requires_grad=True)
    a, b = w
    (a * 3 + b).backward()
    assert w.grad.tolist() == [3.0, 1.0]
    assert 4 in x and 7 not in x and cgrad.tensor([1, 2]) in x and 2.0 in x
    assert cgrad.tensor([7, 8]) not in x and np.int64(6) in x
    with pytest.raises(RuntimeError, match="only supports Tensor or scalar"):
        "a" in x  # noqa: B015
    y = cgrad.tensor([1, 2])
    assert hash(y) == hash(y) and hash(y) != hash(cgrad.tensor([1, 2]))
    assert {y: 1}[y] == 1 and len({y, cgrad.tensor([1, 2])}) == 2


def test_transposed_properties():
    x = cgrad.arange(24).reshape(2, 3, 4) if hasattr(cgrad.Tensor, "reshape") else cgrad.zeros(2, 3, 4)
    t = torch.zeros(2, 3, 4)
    assert tuple(x.T.shape) == (4, 3, 2) and tuple(x.mT.shape) == (2, 4, 3) and tuple(x.mH.shape) == (2, 4, 3)
    assert x.T.stride() == tuple(reversed(x.stride()))
    m = cgrad.tensor([[1, 2, 3], [4, 5, 6]])
    assert m.T.tolist() == [[1, 4], [2, 5], [3, 6]] and m.H.tolist() == m.T.tolist() and m.mT.tolist() == m.T.tolist()
    assert cgrad.ones(3).T.shape == (3,) and cgrad.tensor(2.0).T.shape == ()
    for prop in ("mT", "mH", "H"):
        with pytest.raises(RuntimeError, match=f"tensor.{prop} is only supported on matrices"):
            getattr(cgrad.ones(3), prop)
        with pytest.raises(RuntimeError):
            getattr(torch.ones(3), prop)
    with pytest.raises(RuntimeError, match="tensor.H is only supported on matrices"):
        x.H
    with pytest.raises(RuntimeError):
        t.H
    v = cgrad.zeros(2, 3)
    v.T[0, 1] = 5.0 if hasattr(cgrad.Tensor, "__setitem__") else None  # a view: writes show through
    if hasattr(cgrad.Tensor, "__setitem__"):
        assert v[1, 0].item() == 5.0
    w = cgrad.ones(2, 3, requires_grad=True)
    (w.T * cgrad.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])).sum().backward()
    assert w.grad.tolist() == [[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]]


def test_type_and_as_helpers():
    x = cgrad.ones(2, 3)
    assert x.type() == "torch.FloatTensor"  # PyTorch's names (docs/python.md, Legacy constructors)
    names = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
             "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double"}
    for d, n in names.items():
        assert cgrad.ones(1, dtype=getattr(cgrad, d)).type() == f"torch.{n}Tensor"
        assert torch.ones(1, dtype=getattr(torch, d)).type() == f"torch.{n}Tensor"
    assert x.type(cgrad.int32).dtype == cgrad.int32
    assert x.type("cgrad.DoubleTensor").dtype == cgrad.float64 and x.type("torch.LongTensor").dtype == cgrad.int64
    assert x.type(cgrad.float32) is x
    with pytest.raises(ValueError, match="invalid type: 'foo'"):
        x.type("foo")
    i = cgrad.tensor([1, 2, 3, 4, 5, 6])
    assert i.type_as(x).dtype == cgrad.float32 and x.type_as(x) is x
    assert tuple(i.view_as(x).shape) == (2, 3) and tuple(i.reshape_as(x).shape) == (2, 3)
    e = cgrad.tensor([[1.0], [2.0]]).expand_as(x)
    assert e.tolist() == [[1.0] * 3, [2.0] * 3]
    with pytest.raises(TypeError):
        x.view_as([1, 2])
    assert x.is_floating_point() and not i.is_floating_point()
    assert i.is_signed() and x.is_signed()
    assert not cgrad.ones(1, dtype=cgrad.uint8).is_signed() and not cgrad.ones(1, dtype=cgrad.bool).is_signed()
    assert isinstance(x.data_ptr(), int) and x.data_ptr() != 0
    assert x[1].data_ptr() == x.data_ptr() + 3 * 4 if hasattr(cgrad.Tensor, "__getitem__") else True


def test_new_factories():
    i = cgrad.tensor([1, 2], dtype=cgrad.int32)
    for name in ("new_zeros", "new_ones", "new_empty"):
        r = getattr(i, name)(2, 3)
        assert r.dtype == cgrad.int32 and tuple(r.shape) == (2, 3)
        r = getattr(i, name)((4,), dtype=cgrad.float64, requires_grad=True)
        assert r.dtype == cgrad.float64 and r.requires_grad and tuple(r.shape) == (4,)
        assert tuple(getattr(i, name)(size=(1, 2)).shape) == (1, 2)
    assert i.new_zeros(2).tolist() == [0, 0] and i.new_ones(()).tolist() == 1
    assert i.new_full((2,), 2.5).tolist() == [2, 2] and i.new_full((2,), 2.5).dtype == cgrad.int32
    assert cgrad.ones(1).new_full((1, 2), 7).tolist() == [[7.0, 7.0]]
    n = i.new_tensor([1.5, 2.5])
    assert n.dtype == cgrad.int32 and n.tolist() == [1, 2]
    n = cgrad.ones(1, dtype=cgrad.float64).new_tensor([1, 2])
    assert n.dtype == cgrad.float64
    m = cgrad.ones(1, device="meta").new_zeros(3)
    assert m.device.type == "meta"
    with pytest.raises(TypeError):
        i.new_zeros(2, bogus=1)


def test_large_operators_from_threads_match_serial():
    """Large operands run with the GIL released: results from threads equal the serial ones."""
    import threading
    a = cgrad.full((300, 300), 1.5)
    b = cgrad.full((300, 300), 2.0)
    want = ((a * b + a) ** 2 - a / b).tolist()
    got = [None] * 4

    def work(k):
        x = a.clone()
        x += 0.0
        got[k] = ((a * b + x) ** 2 - a / b).tolist()

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(g == want for g in got)
