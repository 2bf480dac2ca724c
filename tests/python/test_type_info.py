"""cgrad.finfo / cgrad.iinfo against torch.finfo / torch.iinfo: every attribute
and the repr for each dtype, the default dtype, and the errors."""
import pytest
import torch

import cgrad

FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64"]


@pytest.mark.parametrize("name", FLOATS)
def test_finfo(name):
    c, t = cgrad.finfo(getattr(cgrad, name)), torch.finfo(getattr(torch, name))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(c, attr) == getattr(t, attr), attr
    assert repr(c) == repr(t)


def test_finfo_default_dtype():
    assert cgrad.finfo().dtype == "float32"
    previous = cgrad.get_default_dtype()
    cgrad.set_default_dtype(cgrad.float64)
    try:
        assert cgrad.finfo().eps == torch.finfo(torch.float64).eps
    finally:
        cgrad.set_default_dtype(previous)


@pytest.mark.parametrize("name", INTS)
def test_iinfo(name):
    c, t = cgrad.iinfo(getattr(cgrad, name)), torch.iinfo(getattr(torch, name))
    assert (c.bits, c.max, c.min, c.dtype) == (t.bits, t.max, t.min, t.dtype)
    assert repr(c) == repr(t)


def test_errors():
    with pytest.raises(TypeError, match="requires a floating point input type"):
        cgrad.finfo(cgrad.int32)
    with pytest.raises(TypeError, match="requires an integer input type"):
        cgrad.iinfo(cgrad.float32)
    with pytest.raises(TypeError, match="bool is not supported"):
        cgrad.iinfo(cgrad.bool)
    with pytest.raises(TypeError, match="must be cgrad.dtype"):
        cgrad.finfo("float32")
