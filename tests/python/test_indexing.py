"""Tensor.__getitem__ / __setitem__ parity with PyTorch: basic indices (ints,
slices with steps, None, Ellipsis), advanced indices (integer tensors and
lists, bool masks of any rank, Python bools, 0-d tensors) with PyTorch's
placement rules, values and gradients; setitem with scalars, broadcast
tensors, dtype conversion, on views and through autograd; errors."""
import warnings

import numpy as np
import pytest
import torch

import cgrad

SHAPE = (4, 5, 6)
BASE = np.arange(np.prod(SHAPE), dtype=np.float64).reshape(SHAPE) * 0.5 - 7.0


def mk(lib, arr):
    return lib.tensor(np.asarray(arr).tolist(), dtype=lib.float64)


def L(lib, data, dtype="int64"):
    return lib.tensor(data, dtype=getattr(lib, dtype))


MASK2 = np.array([[True, False, True, False, True], [False] * 5, [True] * 5, [False, True, False, False, True]])

# name -> function(lib) returning the index object
INDEXES = {
    "int": lambda lib: 1,
    "neg_int": lambda lib: -1,
    "int_int": lambda lib: (2, -3),
    "slice": lambda lib: slice(1, 3),
    "slice_step": lambda lib: (slice(None), slice(0, None, 2)),
    "slice_step3_neg_bounds": lambda lib: (slice(-3, None), slice(None), slice(-5, -1, 3)),
    "slice_empty": lambda lib: slice(3, 1),
    "slice_past_end": lambda lib: slice(2, 100),
    "none": lambda lib: None,
    "none_mid": lambda lib: (slice(None), None, 0),
    "ellipsis": lambda lib: (Ellipsis, 1),
    "ellipsis_mid": lambda lib: (0, Ellipsis, None, slice(1, 4)),
    "ellipsis_alone": lambda lib: Ellipsis,
    "py_true": lambda lib: True,
    "py_false": lambda lib: False,
    "py_true_mid": lambda lib: (slice(None), True, 1),
    "bool_0d": lambda lib: L(lib, True, "bool"),
    "bool_0d_false_mid": lambda lib: (0, L(lib, False, "bool")),
    "mask1": lambda lib: L(lib, [True, False, True, True], "bool"),
    "mask1_dim1": lambda lib: (slice(None), L(lib, [False, True, True, False, True], "bool")),
    "mask2": lambda lib: L(lib, MASK2.tolist(), "bool"),
    "mask2_then_int_tensor": lambda lib: (L(lib, MASK2.tolist(), "bool"), L(lib, [0, 5, 1, 2, 3, 4, 0, 1, 5, 2])),
    "mask3": lambda lib: L(lib, (BASE > 0).tolist(), "bool"),
    "mask_all_false": lambda lib: L(lib, [False] * 4, "bool"),
    "byte_mask": lambda lib: L(lib, [1, 0, 0, 1], "uint8"),
    "int_tensor": lambda lib: L(lib, [0, 2, -1, 2]),
    "int32_tensor": lambda lib: L(lib, [3, 0], "int32"),
    "int_tensor_2d": lambda lib: L(lib, [[0, 1], [3, 3]]),
    "int_tensor_0d": lambda lib: L(lib, 2),
    "list": lambda lib: [0, 3, 1],
    "list_neg": lambda lib: [-1, -4],
    "list_empty": lambda lib: [],
    "empty_index_tensor": lambda lib: L(lib, []),
    "empty_index_tensor_mid": lambda lib: (slice(None), L(lib, [])),
    "list_bool": lambda lib: [True, False, False, True],
    "tuple_in_tuple": lambda lib: ((0, 1), slice(None), 2),
    "list_of_lists": lambda lib: [[0, 1], [1, 0]],
    "list_with_slice": lambda lib: [0, slice(None)],
    "adv_adjacent": lambda lib: (slice(None), L(lib, [0, 4, 2]), L(lib, [1, 5, 0])),
    "adv_adjacent_bcast": lambda lib: (L(lib, [[0], [3]]), L(lib, [1, 2, 4])),
    "adv_nonadjacent": lambda lib: (L(lib, [0, 3]), slice(None), L(lib, [5, 1])),
    "adv_int_adv": lambda lib: (L(lib, [0, 3]), 1, L(lib, [5, 1])),
    "adv_none_adv": lambda lib: (L(lib, [0, 3]), None, L(lib, [1, 2])),
    "int_slice_adv": lambda lib: (1, slice(None), L(lib, [5, 1])),
    "adv_slice_int": lambda lib: (L(lib, [0, 3]), slice(1, 4), 0),
    "slice_adv_int": lambda lib: (slice(None), L(lib, [4, 0]), -1),
    "none_adv": lambda lib: (None, L(lib, [2, 0])),
    "adv_none": lambda lib: (L(lib, [2, 0]), None),
    "ellipsis_adv": lambda lib: (Ellipsis, L(lib, [5, 0, 1])),
    "adv_ellipsis_adv": lambda lib: (L(lib, [1, 2]), Ellipsis, L(lib, [0, 3])),
    "mask_and_int_tensor": lambda lib: (L(lib, [True, False, True, True], "bool"), slice(None), L(lib, [0, 1, 5])),
    "0d_int_adv_slice": lambda lib: (slice(None), L(lib, 3), slice(1, 5, 2)),
    "bool_0d_and_adv": lambda lib: (L(lib, [1, 3]), L(lib, True, "bool"), slice(None), L(lib, [0, 2])),
}


def to_np(t):
    return np.asarray(t.detach().tolist())


@pytest.mark.parametrize("name", list(INDEXES))
def test_getitem_values_and_grads(name):
    fn = INDEXES[name]
    tx = torch.tensor(BASE, requires_grad=True)
    cx = cgrad.tensor(BASE.tolist(), dtype=cgrad.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ty = tx[fn(torch)]
    cy = cx[fn(cgrad)]
    assert tuple(cy.shape) == tuple(ty.shape)
    np.testing.assert_array_equal(to_np(cy), to_np(ty))
    w = np.arange(ty.numel(), dtype=np.float64).reshape(tuple(ty.shape)) + 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # byte-mask deprecation
        ty.backward(torch.tensor(w))
    cw = cgrad.tensor(w.tolist(), dtype=cgrad.float64) if w.size else cgrad.zeros(w.shape, dtype=cgrad.float64)
    cy.backward(cw)
    np.testing.assert_array_equal(to_np(cx.grad), to_np(tx.grad))


@pytest.mark.parametrize("name", ["int", "int_int", "slice_step", "none_mid", "ellipsis_mid", "ellipsis_alone"])
def test_basic_indexing_is_a_view(name):
    x = cgrad.zeros(SHAPE)
    y = x[INDEXES[name](cgrad)]
    y.fill_(3.0)
    assert float(x.sum()) == float(y.numel()) * 3.0


def test_int_index_on_1d_gives_0d_view():
    x = cgrad.tensor([1.0, 2.0, 3.0])
    y = x[1]
    assert y.dim() == 0 and y.item() == 2.0
    y.fill_(7.0)
    assert x.tolist() == [1.0, 7.0, 3.0]


ERRORS = {
    "int_out_of_range": (lambda lib: 4, IndexError),
    "neg_out_of_range": (lambda lib: -5, IndexError),
    "int_dim1_out_of_range": (lambda lib: (0, 5), IndexError),
    "tensor_out_of_range": (lambda lib: L(lib, [0, 4]), IndexError),
    "tensor_neg_out_of_range": (lambda lib: (slice(None), L(lib, [-6])), IndexError),
    "too_many": (lambda lib: (0, 0, 0, 0), IndexError),
    "float_tensor": (lambda lib: L(lib, [0.0, 1.0], "float32"), IndexError),
    "int8_tensor": (lambda lib: L(lib, [0], "int8"), IndexError),
    "mask_wrong_shape": (lambda lib: L(lib, [True, False], "bool"), IndexError),
    "float_index": (lambda lib: 1.5, IndexError),
    "string": (lambda lib: "a", TypeError),
    "zero_step": (lambda lib: slice(None, None, 0), ValueError),
    "negative_step": (lambda lib: slice(None, None, -1), ValueError),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_getitem_errors(name):
    fn, exc = ERRORS[name]
    with pytest.raises(exc), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.tensor(BASE)[fn(torch)]
    with pytest.raises(exc):
        cgrad.tensor(BASE.tolist())[fn(cgrad)]


def test_index_errors_name_sizes():
    with pytest.raises(IndexError, match="index 4 is out of bounds for dimension 0 with size 4"):
        cgrad.zeros(SHAPE)[4]
    with pytest.raises(IndexError, match="0-dim"):
        cgrad.tensor(3.0)[0]
    with pytest.raises(IndexError, match="too many indices"):
        cgrad.zeros(2, 3)[0, 0, 0]


# ------------------------------------------------------------------ setitem

SET_CASES = {
    "int_scalar": (lambda lib: 1, lambda lib: 2.5),
    "slice_scalar_int_value": (lambda lib: (slice(None), slice(1, 3)), lambda lib: 7),
    "step_bool_value": (lambda lib: (Ellipsis, slice(None, None, 2)), lambda lib: True),
    "broadcast_row": (lambda lib: (slice(None), 0), lambda lib: mk(lib, np.arange(6.0))),
    "broadcast_col": (lambda lib: 2, lambda lib: mk(lib, np.arange(5.0).reshape(5, 1))),
    "leading_ones": (lambda lib: (0, 0), lambda lib: mk(lib, np.arange(6.0).reshape(1, 6))),
    "int_value_cast": (lambda lib: 0, lambda lib: lib.ones(5, 6, dtype=lib.int64) * 3),
    "float32_value_cast": (lambda lib: (1, 1), lambda lib: lib.full((6,), 0.1, dtype=lib.float32)),
    "mask_scalar": (lambda lib: L(lib, (BASE > 3).tolist(), "bool"), lambda lib: -1.0),
    "mask1_tensor": (lambda lib: L(lib, [True, False, True, False], "bool"), lambda lib: lib.zeros(5, 6, dtype=lib.float64)),
    "int_tensor_bcast": (lambda lib: (L(lib, [0, 2]), slice(None), L(lib, [1, 3])), lambda lib: mk(lib, np.arange(5.0))),
    "adv_leading_ones": (lambda lib: L(lib, [1, 3]), lambda lib: mk(lib, np.arange(6.0).reshape(1, 1, 1, 6))),
    "list_scalar": (lambda lib: [3, 1], lambda lib: 4.0),
    "nonadjacent": (lambda lib: (L(lib, [0, 3]), slice(None), L(lib, [5, 1])), lambda lib: mk(lib, np.arange(5.0))),
    "py_true": (lambda lib: True, lambda lib: 9.0),
    "bool_0d_false": (lambda lib: (0, L(lib, False, "bool")), lambda lib: 9.0),
    "ellipsis_none": (lambda lib: (Ellipsis, None), lambda lib: 1.0),
    "empty_tensor_index": (lambda lib: L(lib, []), lambda lib: 1.0),
}


@pytest.mark.parametrize("name", list(SET_CASES))
def test_setitem_values(name):
    idx, val = SET_CASES[name]
    tx = torch.tensor(BASE)
    cx = cgrad.tensor(BASE.tolist(), dtype=cgrad.float64)
    tx[idx(torch)] = val(torch)
    cx[idx(cgrad)] = val(cgrad)
    np.testing.assert_array_equal(to_np(cx), to_np(tx))


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool", "float32"])
def test_setitem_converts_value_dtype(dtype):
    tx = torch.zeros(3, 4, dtype=getattr(torch, dtype))
    cx = cgrad.zeros(3, 4, dtype=getattr(cgrad, dtype))
    for idx, v in [((0,), 1), ((1, slice(1, 3)), 2.0), ((2,), True)]:
        tx[idx] = v
        cx[idx] = v
    tx[torch.tensor([0, 2]), 3] = 5.0
    cx[cgrad.tensor([0, 2]), 3] = 5.0
    tx[1:, ::3] = torch.tensor([[7.0, 0.0]])
    cx[1:, ::3] = cgrad.tensor([[7.0, 0.0]])
    assert cx.dtype == getattr(cgrad, dtype)
    np.testing.assert_array_equal(to_np(cx), to_np(tx))


def test_setitem_on_view_writes_base():
    tb = torch.tensor(BASE)
    cb = cgrad.tensor(BASE.tolist(), dtype=cgrad.float64)
    tv, cv = tb[1:3, :, ::2], cb[1:3, :, ::2]
    tv[0, torch.tensor([1, 4])] = -3.0
    cv[0, cgrad.tensor([1, 4])] = -3.0
    tv[:, 2] = 8.0
    cv[:, 2] = 8.0
    np.testing.assert_array_equal(to_np(cb), to_np(tb))


@pytest.mark.parametrize("name", ["int_scalar", "broadcast_col", "mask_scalar", "int_tensor_bcast", "nonadjacent",
                                  "list_scalar", "py_true", "leading_ones"])
def test_setitem_autograd(name):
    idx, val = SET_CASES[name]
    results = []
    for lib in (torch, cgrad):
        x = lib.tensor(BASE.tolist(), dtype=lib.float64, requires_grad=True)
        v = val(lib)
        v = lib.tensor(v, dtype=lib.float64) if not isinstance(v, (torch.Tensor, cgrad.Tensor)) else v.to(lib.float64)
        v = v.detach().requires_grad_(True)
        y = x * 2.0
        y[idx(lib)] = v * 3.0
        w = mk(lib, np.arange(BASE.size).reshape(SHAPE) % 7)
        (y * w).sum().backward()
        results.append((to_np(y), to_np(x.grad), to_np(v.grad)))
    for a, b in zip(*results):
        np.testing.assert_array_equal(b, a)


def test_setitem_autograd_through_a_view():
    results = []
    for lib in (torch, cgrad):
        x = lib.tensor(BASE.tolist(), dtype=lib.float64, requires_grad=True)
        v = lib.tensor([1.5, -2.0], dtype=lib.float64, requires_grad=True)
        y = x * 1.5
        view = y[1:3, :, ::2]
        view[0, lib.tensor([1, 4]), 0] = v
        view[1, 0] = v[0] * 4.0
        w = mk(lib, np.arange(BASE.size).reshape(SHAPE) % 5)
        (y * w).sum().backward()
        results.append((to_np(y), to_np(x.grad), to_np(v.grad)))
    for a, b in zip(*results):
        np.testing.assert_array_equal(b, a)


def test_setitem_leaf_requiring_grad_raises():
    x = cgrad.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError):
        x[0] = 1.0
    with cgrad.no_grad():
        x[0] = 1.0
    assert x.tolist() == [1.0, 0.0, 0.0]


def test_setitem_advanced_needs_matching_value_dtype():
    # as in PyTorch: index_put does not convert tensor values (scalars are converted)
    for lib in (torch, cgrad):
        x = lib.zeros(3, 4)
        with pytest.raises(RuntimeError, match="dtypes match"):
            x[lib.tensor([0, 2])] = lib.ones(4, dtype=lib.float64)
        x[lib.tensor([0, 2])] = 2
        x[1] = lib.ones(4, dtype=lib.int64)
        assert x.sum().item() == 20.0


def test_multiple_ellipses_like_torch():
    tx = torch.tensor(BASE)
    cx = cgrad.tensor(BASE.tolist(), dtype=cgrad.float64)
    for idx in [(Ellipsis, Ellipsis), (Ellipsis, 1, Ellipsis), (1, Ellipsis, Ellipsis)]:
        np.testing.assert_array_equal(to_np(cx[idx]), to_np(tx[idx]))
    for lib, x in ((torch, tx), (cgrad, cx)):
        with pytest.raises(IndexError):
            x[0, Ellipsis, Ellipsis, 2]


def test_setitem_errors():
    x = cgrad.zeros(3, 4)
    with pytest.raises(IndexError):
        x[3] = 1.0
    with pytest.raises(IndexError):
        x[cgrad.tensor([0, 7])] = 1.0
    with pytest.raises(RuntimeError):  # shape mismatch: value does not broadcast
        x[0] = cgrad.ones(3)
    with pytest.raises(TypeError):
        x[0] = "a"
    with pytest.raises(TypeError):
        del x[0]
