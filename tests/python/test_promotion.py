"""Type promotion parity with PyTorch: promote_types over all dtype pairs,
result_type over tensors (dim > 0), 0-d tensors and Python scalars, can_cast,
and the result dtypes of the binary operators."""
import itertools
import operator

import pytest
import torch

import cgrad

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]


def cg_dt(name):
    return getattr(cgrad, name)


def th_dt(name):
    return getattr(torch, name)


def name_of(dt):
    return str(dt).split(".")[-1]


def operand(lib, kind, dtype):
    """kind: 'dim' (shape (2,)), 'zero' (0-d), 'bool' / 'int' / 'float' (Python scalars)."""
    if kind == "dim":
        return lib.ones(2, dtype=getattr(lib, dtype))
    if kind == "zero":
        return lib.ones((), dtype=getattr(lib, dtype))
    return {"bool": True, "int": 2, "float": 1.5}[kind]


KINDS = ["dim", "zero", "bool", "int", "float"]


def operand_specs():
    out = []
    for k in KINDS:
        if k in ("dim", "zero"):
            out += [(k, d) for d in DTYPES]
        else:
            out.append((k, None))
    return out


SPECS = operand_specs()


def spec_id(s):
    return s[0] if s[1] is None else f"{s[0]}-{s[1]}"


def test_promote_types_all_pairs():
    bad = []
    for a, b in itertools.product(DTYPES, DTYPES):
        want = name_of(torch.promote_types(th_dt(a), th_dt(b)))
        got = name_of(cgrad.promote_types(cg_dt(a), cg_dt(b)))
        if want != got:
            bad.append((a, b, want, got))
    assert not bad


def test_result_type_all_pairs():
    bad = []
    for sa, sb in itertools.product(SPECS, SPECS):
        if sa[1] is None and sb[1] is None:
            continue  # two Python scalars: checked below
        ta, tb = operand(torch, *sa), operand(torch, *sb)
        ca, cb = operand(cgrad, *sa), operand(cgrad, *sb)
        want = name_of(torch.result_type(ta, tb))
        got = name_of(cgrad.result_type(ca, cb))
        if want != got:
            bad.append((spec_id(sa), spec_id(sb), want, got))
    assert not bad, bad[:20]


@pytest.mark.parametrize("a,b", [(True, 1), (1, 2.0), (True, False), (2, 3), (1.0, 2.0)])
def test_result_type_two_scalars(a, b):
    assert name_of(cgrad.result_type(a, b)) == name_of(torch.result_type(a, b))


def test_result_type_follows_default_dtype():
    prev = cgrad.get_default_dtype()
    cgrad.set_default_dtype(cgrad.float64)
    try:
        assert cgrad.result_type(cgrad.tensor([1, 2]), 1.5) == cgrad.float64
        assert cgrad.result_type(cgrad.tensor([1.0], dtype=cgrad.float32), 1.5) == cgrad.float32
    finally:
        cgrad.set_default_dtype(prev)


def test_can_cast_all_pairs():
    for a, b in itertools.product(DTYPES, DTYPES):
        assert cgrad.can_cast(cg_dt(a), cg_dt(b)) == torch.can_cast(th_dt(a), th_dt(b)), (a, b)
    assert cgrad.can_cast(from_=cgrad.int32, to=cgrad.float16)
    with pytest.raises(TypeError):
        cgrad.can_cast(cgrad.int32, None)
    with pytest.raises(TypeError):
        cgrad.promote_types(cgrad.int32, None)


def _value(lib, spec):
    k, d = spec
    if k == "dim":
        return lib.tensor([1, 0], dtype=getattr(lib, d))
    if k == "zero":
        return lib.tensor(1, dtype=getattr(lib, d))
    return {"bool": True, "int": 3, "float": 0.5}[k]


def _lib(a, b):
    return torch if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor) else cgrad


def fn_add(a, b):
    return _lib(a, b).add(a, b)


def fn_div(a, b):
    return _lib(a, b).div(a, b)


def method_mul(a, b):
    return a.mul(b)


ARITH = [operator.add, operator.sub, operator.mul, operator.truediv, fn_add, fn_div, method_mul]
CMP = [operator.lt, operator.eq]


@pytest.mark.parametrize("op", ARITH + CMP, ids=lambda f: f.__name__)
def test_binary_operator_result_dtypes(op):
    bad = []
    for sa, sb in itertools.product(SPECS, SPECS):
        if sa[1] is None and sb[1] is None:
            continue
        ta, tb = _value(torch, sa), _value(torch, sb)
        if op in (fn_add, fn_div) and sa[1] is None:
            continue  # add(2, t): a Scalar first argument is the math family's overload, not promotion
        try:
            want = op(ta, tb)
        except (RuntimeError, TypeError, AttributeError):
            continue  # e.g. bool - bool: PyTorch refuses; not a promotion question
        try:
            got = op(_value(cgrad, sa), _value(cgrad, sb))
        except NotImplementedError:
            continue  # a kernel missing for this dtype is not a promotion question
        if name_of(want.dtype) != name_of(got.dtype) or tuple(want.shape) != tuple(got.shape):
            bad.append((spec_id(sa), spec_id(sb), name_of(want.dtype), name_of(got.dtype)))
    assert not bad, bad[:20]


def test_weak_scalar_keeps_width():
    x = cgrad.ones(3, dtype=cgrad.float16)
    assert (x + 1.5).dtype == cgrad.float16
    assert (cgrad.ones(3, dtype=cgrad.int32) + 1.5).dtype == cgrad.float32
    assert (cgrad.ones(3, dtype=cgrad.int8) + 1000).dtype == cgrad.int8
    assert (cgrad.ones(3, dtype=cgrad.bool) + 1).dtype == cgrad.int64
    # a 0-d tensor of a higher category wins over dim tensors (with its own width)
    assert (cgrad.ones(3, dtype=cgrad.int32) + cgrad.tensor(1.5, dtype=cgrad.float64)).dtype == cgrad.float64
    assert (cgrad.ones(3, dtype=cgrad.int32) + cgrad.tensor(1, dtype=cgrad.int64)).dtype == cgrad.int32


def test_inplace_refuses_downcast_of_category():
    x = cgrad.ones(3, dtype=cgrad.int64)
    with pytest.raises(RuntimeError):
        x += 1.5
    y = cgrad.ones(3)
    y += cgrad.ones(3, dtype=cgrad.float64)
    assert y.dtype == cgrad.float32


def test_keywords_and_errors_as_pytorch():
    """result_type(tensor=, other=) and promote_types(type1=, type2=) take PyTorch's keywords;
    a missing or None dtype is a TypeError."""
    x, t = cgrad.ones(2, dtype=cgrad.int32), torch.ones(2, dtype=torch.int32)
    assert str(cgrad.result_type(tensor=x, other=2.5)).split(".")[-1] == str(torch.result_type(tensor=t, other=2.5)).split(".")[-1]
    assert cgrad.promote_types(type1=cgrad.int32, type2=cgrad.float16) == cgrad.float16
    assert torch.promote_types(type1=torch.int32, type2=torch.float16) == torch.float16
    for lib in (cgrad, torch):
        with pytest.raises(TypeError):
            lib.promote_types(lib.int32, None)
        with pytest.raises(TypeError):
            lib.promote_types(lib.int32)
        with pytest.raises(TypeError):
            lib.result_type(lib.ones(1))


@pytest.mark.parametrize("lib", [cgrad, torch], ids=["cgrad", "torch"])
def test_size_and_stride_take_dim_by_keyword(lib):
    x = lib.ones(2, 3).t()
    assert (x.size(dim=0), x.size(-1), x.stride(dim=0), x.stride(1)) == (3, 2, 1, 3)
    assert tuple(x.size()) == (3, 2) and tuple(x.stride()) == (1, 3)
    with pytest.raises(TypeError):
        x.size("a")
    with pytest.raises(TypeError):
        x.stride(1.0)
    with pytest.raises(IndexError):
        x.size(2)
    with pytest.raises(IndexError):
        x.stride(dim=-3)
