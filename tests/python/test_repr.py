"""repr(tensor) is PyTorch's text with 'torch.' replaced by 'cgrad.'."""
import math

import numpy as np
import pytest
import torch

import cgrad


def mk(lib, arr, dtype=None):
    """A tensor from a numpy array (no reshape / arange needed on the cgrad side)."""
    return lib.tensor(np.asarray(arr).tolist(), dtype=None if dtype is None else getattr(lib, dtype))


def both(make):
    return make(torch), make(cgrad)


def nan_inf(lib):
    return lib.tensor([1.5, math.nan, math.inf, -math.inf, 0.0])


CASES = {
    "ints": lambda lib: lib.tensor([1, -20, 300]),
    "int_matrix": lambda lib: mk(lib, np.arange(12).reshape(3, 4)),
    "int32": lambda lib: lib.tensor([1, 2], dtype=lib.int32),
    "uint8": lambda lib: lib.tensor([1, 255], dtype=lib.uint8),
    "floats_whole": lambda lib: lib.tensor([1.0, -2.0, 30.0]),
    "floats_frac": lambda lib: lib.tensor([1.5, -2.25, 0.125]),
    "floats_matrix": lambda lib: mk(lib, np.arange(6).reshape(2, 3) / 7, "float32"),
    "large": lambda lib: lib.tensor([1e9, 1.0]),
    "large_whole_sci": lambda lib: lib.tensor([123456789012.0, 2.0]),
    "tiny": lambda lib: lib.tensor([1e-5, 1.0]),
    "ratio": lambda lib: lib.tensor([0.5, 1000.5]),
    "negative_sci": lambda lib: lib.tensor([-1e-7, 3.0, 0.0]),
    "nan_inf": nan_inf,
    "all_nan": lambda lib: lib.tensor([math.nan, math.nan]),
    "inf_whole": lambda lib: lib.tensor([math.inf, 2.0]),
    "zeros": lambda lib: lib.zeros(2, 2),
    "bool": lambda lib: lib.tensor([True, False, True]),
    "bool_2d": lambda lib: lib.tensor([[True], [False]]),
    "scalar_float": lambda lib: lib.tensor(3.25),
    "scalar_int": lambda lib: lib.tensor(7),
    "scalar_whole_float": lambda lib: lib.tensor(2.0),
    "scalar_f64": lambda lib: lib.tensor(2.5, dtype=lib.float64),
    "empty": lambda lib: lib.zeros(0),
    "empty_2d": lambda lib: lib.zeros(2, 0),
    "empty_int": lambda lib: lib.zeros(0, dtype=lib.int64),
    "empty_f64": lambda lib: lib.zeros(1, 0, 3, dtype=lib.float64),
    "summarized_1d": lambda lib: mk(lib, np.arange(2000) / 3, "float32"),
    "summarized_2d": lambda lib: mk(lib, np.arange(40 * 50).reshape(40, 50)),
    "summarized_3d": lambda lib: mk(lib, np.arange(11 * 12 * 13).reshape(11, 12, 13), "float64"),
    "long_line_wrap": lambda lib: mk(lib, np.arange(30) * 1.5, "float32"),
    "float64": lambda lib: lib.tensor([1.0, 2.5], dtype=lib.float64),
    "float16": lambda lib: lib.tensor([1.0, 2.5], dtype=lib.float16),
    "bfloat16": lambda lib: lib.tensor([0.1, 2.5], dtype=lib.bfloat16),
    "requires_grad": lambda lib: lib.tensor([1.0, 2.0], requires_grad=True),
    "requires_grad_f64": lambda lib: lib.ones(2, 2, dtype=lib.float64, requires_grad=True),
    "grad_fn": lambda lib: lib.tensor([1.0, 2.0], requires_grad=True) * 2,
    "grad_fn_add": lambda lib: lib.tensor([1.0, 2.0], requires_grad=True) + 1,
    "suffix_wrap": lambda lib: mk(lib, np.arange(10) * 1.25, "float64").requires_grad_(),
    "meta": lambda lib: lib.zeros(2, 3, device="meta"),
    "meta_int": lambda lib: lib.zeros(2, dtype=lib.int64, device="meta"),
    "noncontig": lambda lib: mk(lib, np.arange(12).reshape(3, 4), "float32")[:, ::2],
}


@pytest.mark.parametrize("name", list(CASES))
def test_repr_matches_torch(name):
    t, c = both(CASES[name])
    assert repr(c) == repr(t).replace("torch.", "cgrad.")
    assert str(c) == repr(c)


def test_repr_default_dtype_float64():
    prev = cgrad.get_default_dtype()
    cgrad.set_default_dtype(cgrad.float64)
    torch.set_default_dtype(torch.float64)
    try:
        for make in (lambda lib: lib.tensor([1.5, 2.0]), lambda lib: lib.tensor([1.5], dtype=lib.float32)):
            t, c = both(make)
            assert repr(c) == repr(t).replace("torch.", "cgrad.")
    finally:
        cgrad.set_default_dtype(prev)
        torch.set_default_dtype(torch.float32)


def test_named_tuple_repr_matches_torch():
    import torch
    t = cgrad.arange(12).reshape(3, 4)
    tt = torch.arange(12).reshape(3, 4)
    assert repr(t.max(dim=1)).replace("cgrad", "torch") == repr(tt.max(dim=1))
    assert repr(t.topk(2)).replace("cgrad", "torch") == repr(tt.topk(2))
