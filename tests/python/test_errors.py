"""Error mapping: engine errors surface as cgrad's exception classes
(ShapeMismatch / DeviceMismatch: RuntimeError, DtypeMismatch: TypeError,
IndexError, ...) whose messages name the op and the shapes, and each error is
of the type PyTorch raises for the same mistake."""
import re

import pytest
import torch

import cgrad


def test_exception_hierarchy():
    assert issubclass(cgrad.ShapeMismatch, RuntimeError)
    assert issubclass(cgrad.DeviceMismatch, RuntimeError)
    assert issubclass(cgrad.DtypeMismatch, TypeError)
    for e in (cgrad.ShapeMismatch, cgrad.DeviceMismatch, cgrad.DtypeMismatch):
        assert e.__module__ == "cgrad"


SHAPES_RE = r"\(2, ?3\).*\(4,\)"


@pytest.mark.parametrize("call", [
    lambda a, b: a + b,
    lambda a, b: a * b,
    lambda a, b: cgrad.add(a, b),
    lambda a, b: cgrad.sub(a, b),
    lambda a, b: a.div(b),
    lambda a, b: a < b,
])
def test_shape_mismatch_names_both_shapes(call):
    with pytest.raises(cgrad.ShapeMismatch, match=SHAPES_RE):
        call(cgrad.zeros(2, 3), cgrad.zeros(4))


def test_inplace_shape_mismatch():
    with pytest.raises(cgrad.ShapeMismatch):
        cgrad.zeros(3).add_(cgrad.zeros(2, 3))


def test_device_mismatch():
    with pytest.raises(cgrad.DeviceMismatch, match="meta"):
        cgrad.zeros(2, device="meta") + cgrad.zeros(2)
    with pytest.raises(RuntimeError):
        cgrad.zeros(2) * cgrad.zeros(2, device="meta")


def test_dtype_mismatch_reaches_python_as_type_error():
    # the engine is strict: a gradient of another dtype than its output is refused
    x = cgrad.ones(2, requires_grad=True)
    y = x * 2
    with pytest.raises(cgrad.DtypeMismatch, match="float64"):
        y.backward(cgrad.ones(2, dtype=cgrad.float64))
    with pytest.raises(TypeError):
        y.backward(cgrad.ones(2, dtype=cgrad.float64))


def test_binding_promotes_what_the_engine_refuses():
    a = cgrad.ones(2, dtype=cgrad.int32)
    b = cgrad.ones(2, dtype=cgrad.float64)
    assert cgrad.add(a, b).dtype == cgrad.float64
    assert cgrad.mul(a, 2.5).dtype == cgrad.float32


# The same mistake in torch and in cgrad: the cgrad error is an instance of
# the torch error's type.
SAME_AS_TORCH = {
    "broadcast": lambda lib: lib.zeros(2, 3) + lib.zeros(4),
    "index_out_of_range": lambda lib: lib.zeros(3)[3],
    "index_tensor_out_of_range": lambda lib: lib.zeros(3)[lib.tensor([0, 3])],
    "dim_out_of_range": lambda lib: lib.zeros(2, 3).sum(dim=2),
    "dtype_string": lambda lib: lib.zeros(2, dtype="float32"),
    "dtype_int": lambda lib: lib.ones(2, dtype=3),
    "bad_device": lambda lib: lib.zeros(2, device="nowhere"),
    "add_no_args": lambda lib: lib.add(),
    "add_string": lambda lib: lib.add(lib.zeros(2), "a"),
    "operator_string": lambda lib: lib.zeros(2) + "a",
    "item_many": lambda lib: lib.zeros(2).item(),
    "bool_many": lambda lib: bool(lib.zeros(2)),
    "backward_nonscalar": lambda lib: (lib.ones(2, requires_grad=True) * 2).backward(),
    "backward_no_grad": lambda lib: lib.ones(2).sum().backward(),
    "requires_grad_int": lambda lib: lib.ones(2, dtype=lib.int64).requires_grad_(),
    "inplace_leaf": lambda lib: lib.ones(2, requires_grad=True).mul_(2),
    "inplace_int_by_float": lambda lib: lib.ones(2, dtype=lib.int64).add_(1.5),
    "ragged_list": lambda lib: lib.tensor([[1, 2], [3]]),
    "bad_data": lambda lib: lib.tensor("abc"),
}


@pytest.mark.parametrize("name", list(SAME_AS_TORCH))
def test_error_types_match_torch(name):
    fn = SAME_AS_TORCH[name]
    with pytest.raises(Exception) as te:
        fn(torch)
    with pytest.raises(type(te.value)):
        fn(cgrad)


def test_backward_twice_names_the_problem():
    x = cgrad.ones(3, requires_grad=True)
    y = (x.exp() * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_messages_name_the_op():
    with pytest.raises(cgrad.ShapeMismatch, match=re.escape("[add]")):
        cgrad.zeros(2, 3) + cgrad.zeros(4)
    with pytest.raises(cgrad.ShapeMismatch, match=re.escape("[mul]")):
        cgrad.zeros(2, 3) * cgrad.zeros(4)
