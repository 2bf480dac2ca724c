"""Op table: views and shape ops (view, reshape, permute, transpose, expand,
squeeze, narrow, diagonal, as_strided, movedim, cat, stack, split, chunk,
flip, roll, repeat, tile, tril / triu, ...), on every dtype."""
from __future__ import annotations

from typing import Any, Callable, List, Sequence, Tuple

import numpy as np

from .core import BROADCAST_PAIRS, OpInfo, SampleInput, Z, bad, rand_array

ALL_DTYPES = ("float32", "float64", "int64", "int32", "uint8", "bool")

# A case: (shapes of the array arguments, further positional args, kwargs[, noncontig]).
Case = Tuple[Any, ...]


def _samples(cases: Sequence[Case], other_dtype: Callable[[str], str] = lambda d: d) -> Callable[[str], List[SampleInput]]:
    """Sample builder: the first array has the run's dtype, later arrays other_dtype(dtype)."""
    def fn(dtype: str) -> List[SampleInput]:
        rng = np.random.default_rng(31)
        out = []
        for case in cases:
            shapes, extra, kwargs = case[0], case[1], case[2]
            noncontig = len(case) > 3 and case[3]
            arrays = tuple(rand_array(s, dtype if i == 0 else other_dtype(dtype), rng=rng) for i, s in enumerate(shapes))
            out.append(SampleInput(arrays + tuple(extra), dict(kwargs), noncontig=noncontig))
        return out
    return fn


def _method(name: str) -> Callable[..., Any]:
    """A Tensor-method-only op (view, expand, repeat, unfold, ...)."""
    return lambda lib, x, *args, **kw: getattr(x, name)(*args, **kw)


def _list_call(name: str) -> Callable[..., Any]:
    """cat / stack / hstack ...: the array arguments go in as one list."""
    def call(lib: Any, *args: Any, **kw: Any) -> Any:
        tensors = [a for a in args if hasattr(a, "dtype")]
        rest = [a for a in args if not hasattr(a, "dtype")]
        return getattr(lib, name)(tensors, *rest, **kw)
    return call


S34 = ((3, 4),)
S234 = ((2, 3, 4),)

_view_cases = [(S34, (4, 3), {}), (S34, (-1,), {}), (S234, (6, -1), {}), (((),), (1, 1), {}), (((0,),), (0, 3), {}),
               (((1, 0, 3),), (-1,), {}), (S234, ((2, 12),), {})]
_reshape_cases = [(S34, ((4, 3),), {}), (S34, ((-1,),), {}), (S234, ((6, -1),), {}), (((),), ((1,),), {}),
                  (((0,),), ((0, 3),), {}), (S34, ((12,),), {}, True), (S234, ((4, 6),), {}, True)]
_permute_cases = [(S234, ((2, 0, 1),), {}), (S34, ((1, 0),), {}), (((),), ((),), {}), (((1, 0, 3),), ((1, 2, 0),), {}),
                  (S34, ((1, 0),), {}, True), (((5,),), ((0,),), {})]
_transpose_cases = [(S234, (0, 2), {}), (S34, (-1, -2), {}), (((),), (0, -1), {}), (((5,),), (0, 0), {}),
                    (S34, (0, 1), {}, True), (((1, 0, 3),), (0, 2), {})]
_t_cases = [(((),), (), {}), (((5,),), (), {}), (S34, (), {}), (S34, (), {}, True), (((0, 3),), (), {})]
_expand_cases = [(((3, 1),), (3, 4), {}), (((4,),), (2, 4), {}), (((),), (2, 3), {}), (((3, 1),), (-1, 4), {}),
                 (((1, 0, 3),), (2, 0, 3), {}), (((3, 1),), ((2, 3, 4),), {})]
_broadcast_to_cases = [(((3, 1),), ((3, 4),), {}), (((4,),), ((2, 4),), {}), (((),), ((2, 3),), {}),
                       (((1, 0, 3),), ((2, 0, 3),), {}), (((3, 1),), ((2, -1, 4),), {}), (S34, ((2, 3, 4),), {}, True)]
_squeeze_cases = [(((1, 3, 1),), (), {}), (((1, 3, 1),), (), {"dim": 0}), (((1, 3, 1),), (), {"dim": -1}),
                  (((1, 3, 1),), (), {"dim": (0, 2)}), (((1, 3, 1),), (), {"dim": 1}), (((),), (), {}),
                  (((),), (), {"dim": 0}), (((1, 0, 3),), (0,), {}), (((3, 1),), (1,), {}), (S34, (), {}, True)]
_unsqueeze_cases = [(S34, (-1,), {}), (S34, (0,), {}), (S34, (), {"dim": 2}), (((),), (0,), {}), (((),), (-1,), {}),
                    (((0,),), (1,), {}), (S34, (1,), {}, True)]
_flatten_cases = [(S234, (), {}), (S234, (1,), {}), (S234, (0, 1), {}), (((),), (), {}), (((0,),), (), {}),
                  (((1, 0, 3),), (), {"start_dim": 1, "end_dim": 2}), (S34, (), {}, True), (((5,),), (0, -1), {})]
_unflatten_cases = [(((6,),), (0, (2, 3)), {}), (S34, (1, (2, -1)), {}), (((2, 12),), (-1, (3, 4)), {}),
                    (((0,),), (0, (0, 2)), {}), (S34, (0, (3, 1)), {}, True)]
_narrow_cases = [(S34, (0, 1, 2), {}), (S34, (-1, 0, 2), {}), (((5,),), (0, 2, 3), {}), (S234, (1, 1, 0), {}),
                 (S34, (1, 1, 3), {}, True)]
_select_cases = [(S34, (0, 1), {}), (S34, (-1, -1), {}), (S234, (1, 2), {}), (((5,),), (0, 4), {}), (S34, (1, 2), {}, True)]
_diagonal_cases = [(S34, (), {}), (S34, (1,), {}), (S34, (-1,), {}), (S234, (), {"dim1": 1, "dim2": 2}),
                   (S234, (1, -1, 0), {}), (((0, 3),), (), {}), (S34, (), {}, True), (((3, 3),), (5,), {})]
_as_strided_cases = [(S34, ((2, 2), (1, 2)), {}), (S34, ((3, 2), (4, 1), 1), {}), (S234, ((2, 3), (12, 1)), {}),
                     (((5,),), ((2,), (2,)), {"storage_offset": 1}), (((5,),), ((0,), (1,)), {})]
_unfold_cases = [(((5,),), (0, 2, 1), {}), (S34, (1, 2, 2), {}), (S234, (-1, 3, 1), {}), (((),), (0, 1, 1), {}),
                 (S34, (0, 2, 1), {}, True)]
_movedim_cases = [(S234, (0, 2), {}), (S234, ((0, 1), (2, 0)), {}), (S34, (-1, 0), {}), (((),), (0, 0), {}),
                  (S234, (), {"source": 1, "destination": -1}), (S34, (0, 1), {}, True)]
_cat_cases = [(((3, 4), (3, 4)), (), {}), (((3, 4), (3, 2)), (), {"dim": 1}), (((2, 3, 4),) * 3, (-1,), {}),
              (((0, 3), (2, 3)), (), {}), (((0,), (3, 4)), (), {}), (((5,), (5,)), (), {}), (((3, 4), (2, 4)), (), {}, True)]
_stack_cases = [(((3, 4), (3, 4)), (), {}), (((3, 4), (3, 4)), (-1,), {}), (((3, 4), (3, 4)), (), {"dim": 2}),
                (((), (), ()), (), {}), (((0,), (0,)), (1,), {}), (((3, 4), (3, 4)), (1,), {}, True)]
_hstack_cases = [(((3,), (2,)), (), {}), (((3, 4), (3, 2)), (), {}), (((), ()), (), {}), (((2, 3, 4), (2, 1, 4)), (), {})]
_vstack_cases = [(((4,), (4,)), (), {}), (((3, 4), (2, 4)), (), {}), (((), ()), (), {}), (((4,), (2, 4)), (), {})]
_dstack_cases = [(((4,), (4,)), (), {}), (((3, 4), (3, 4)), (), {}), (((), ()), (), {}), (((2, 3, 4), (2, 3, 1)), (), {})]
_split_cases = [(((5,),), (2,), {}), (S34, (2,), {"dim": 1}), (S34, ([1, 2],), {}), (S234, ([1, 1, 2], -1), {}),
                (((0, 3),), (2,), {}), (S34, (5,), {}), (S34, (1, 1), {}, True)]
_chunk_cases = [(((5,),), (2,), {}), (S34, (3, 1), {}), (((6,),), (4,), {}), (((0, 3),), (2,), {}),
                (S234, (2,), {"dim": -1}), (S34, (2, 1), {}, True)]
_unbind_cases = [(S34, (), {}), (S34, (1,), {}), (S234, (), {"dim": -1}), (((0, 3),), (1,), {}), (S34, (0,), {}, True)]
_flip_cases = [(S34, ((0,),), {}), (S34, ((0, 1),), {}), (S234, ((-1, 0),), {}), (((),), ((),), {}), (((0,),), ((0,),), {}),
               (S34, ((1,),), {}, True)]
_flipmethod_cases = [(S34, (0,), {}), (S34, (0, 1), {}), (S234, ((-1, 0),), {}), (S34, (1,), {}, True)]
_fliplr_cases = [(S34, (), {}), (S234, (), {}), (((0, 3),), (), {}), (S34, (), {}, True)]
_flipud_cases = [(((5,),), (), {}), (S34, (), {}), (S234, (), {}), (S34, (), {}, True)]
_roll_cases = [(((5,),), (2,), {}), (S34, (1, 0), {}), (S34, ((1, -2), (0, 1)), {}), (S34, (3,), {}), (((0,),), (1,), {}),
               (((),), (1,), {}), (S234, (), {"shifts": -1, "dims": 2}), (S34, (1, 1), {}, True)]
_repeat_cases = [(((3,),), (2,), {}), (S34, (2, 1, 3), {}), (((),), (2, 3), {}), (((2, 3),), (1, 1), {}),
                 (((0,),), (2,), {}), (S34, ((1, 2),), {}, True)]
_tile_cases = [(((3,),), ((2,),), {}), (S34, ((2,),), {}), (((2, 3),), ((2, 1, 2),), {}), (((),), ((2,),), {}),
               (S34, ((2, 1),), {}, True)]
_tri_cases = [(S34, (), {}), (S34, (1,), {}), (S34, (-1,), {}), (S234, (), {}), (((5, 5),), (), {"diagonal": -2}),
              (((0, 3),), (), {}), (S34, (2,), {}, True)]


def _broadcast_tensors_samples(dtype: str) -> List[SampleInput]:
    rng = np.random.default_rng(41)
    out = [SampleInput((rand_array(a, dtype, rng=rng), rand_array(b, dtype, rng=rng))) for a, b in BROADCAST_PAIRS]
    out.append(SampleInput((rand_array((3, 1), dtype, rng=rng), rand_array((4,), dtype, rng=rng),
                            rand_array((2, 1, 1), dtype, rng=rng))))
    out.append(SampleInput((rand_array((3, 4), dtype, rng=rng), rand_array((4,), dtype, rng=rng)), noncontig=True))
    return out


def _broadcast_shapes_samples(dtype: str) -> List[SampleInput]:
    return [SampleInput(((3, 1), (4,))), SampleInput(((2, 1, 4), (3, 1), ())), SampleInput(((5,),)),
            SampleInput((3, (2, 3))), SampleInput(((0, 1), (4,)))]


def _promote(dtype: str) -> str:
    """second operand of cat / stack: another dtype, to check promotion"""
    return {"float32": "int64", "float64": "float32", "int64": "int32", "int32": "uint8", "uint8": "bool",
            "bool": "int32"}[dtype]


def _op(name: str, cases: Sequence[Case], **kw: Any) -> OpInfo:
    return OpInfo(name, _samples(cases, kw.pop("other_dtype", lambda d: d)), dtypes=kw.pop("dtypes", ALL_DTYPES), **kw)


OPS = [
    _op("view", _view_cases, call=_method("view")),
    _op("reshape", _reshape_cases),
    _op("permute", _permute_cases),
    _op("transpose", _transpose_cases),
    _op("swapaxes", _transpose_cases[:3]),
    _op("swapdims", _transpose_cases[:3]),
    _op("t", _t_cases),
    _op("expand", _expand_cases, call=_method("expand")),
    _op("broadcast_to", _broadcast_to_cases),
    OpInfo("broadcast_tensors", _broadcast_tensors_samples, dtypes=ALL_DTYPES, method=False),
    OpInfo("broadcast_shapes", _broadcast_shapes_samples, dtypes=("float32",), method=False, grad=False,
           call=lambda lib, *shapes: lib.zeros(lib.broadcast_shapes(*shapes))),
    _op("squeeze", _squeeze_cases),
    _op("unsqueeze", _unsqueeze_cases),
    _op("flatten", _flatten_cases),
    _op("unflatten", _unflatten_cases),
    _op("narrow", _narrow_cases),
    _op("select", _select_cases),
    _op("diagonal", _diagonal_cases),
    _op("as_strided", _as_strided_cases,
        exempt={"strided": "as_strided addresses the storage, not the view: on a strided input it differs from the "
                           "contiguous copy by definition (its own cases build such views)"}),
    _op("unfold", _unfold_cases, call=_method("unfold")),
    _op("movedim", _movedim_cases),
    _op("moveaxis", _movedim_cases[:3]),
    _op("cat", _cat_cases, call=_list_call("cat"), method=False),
    _op("cat", _cat_cases[:3], call=_list_call("cat"), method=False, other_dtype=_promote),
    _op("concat", _cat_cases[:3], call=_list_call("concat"), method=False),
    _op("concatenate", [(((3, 4), (3, 2)), (), {"axis": 1}), (((3, 4), (2, 4)), (), {})],
        call=_list_call("concatenate"), method=False,
        errors=("kwarg", bad(RuntimeError, "sizes of tensors must match", Z(3, 4), Z(2, 5)))),
    _op("stack", _stack_cases, call=_list_call("stack"), method=False),
    _op("stack", _stack_cases[:2], call=_list_call("stack"), method=False, other_dtype=_promote),
    _op("hstack", _hstack_cases, call=_list_call("hstack"), method=False,
        errors=("kwarg", bad(RuntimeError, "sizes of tensors must match", Z(3, 4), Z(2, 5)))),
    _op("vstack", _vstack_cases, call=_list_call("vstack"), method=False),
    _op("dstack", _dstack_cases, call=_list_call("dstack"), method=False),
    _op("split", _split_cases),
    _op("chunk", _chunk_cases),
    _op("unbind", _unbind_cases),
    _op("flip", _flip_cases),
    _op("flip", _flipmethod_cases, call=_method("flip")),
    _op("fliplr", _fliplr_cases),
    _op("flipud", _flipud_cases),
    _op("roll", _roll_cases),
    _op("repeat", _repeat_cases, call=_method("repeat")),
    _op("tile", _tile_cases),
    _op("tril", _tri_cases, inplace=True),
    _op("triu", _tri_cases, inplace=True),
]

_NO_INPLACE_VIEW = "metadata-only in-place view (Tensor.{}_): not implemented in cgrad"
for _op in OPS:  # issue 6 exemptions
    if _op.name in ("as_strided", "squeeze", "swapaxes", "swapdims", "t", "transpose", "unsqueeze"):
        _op.exempt["inplace"] = _NO_INPLACE_VIEW.format(_op.name)
    if _op.name == "broadcast_shapes":
        _op.exempt.update(extremes="takes shapes, not tensors", strided="takes shapes, not tensors")

# issue 6: explicit bad inputs (PyTorch's exception types), beside the generic ones
_ERRORS = {
    "narrow": bad(RuntimeError, "exceeds dimension size", Z(3, 4), 1, 2, 5),
    "select": bad(IndexError, "out of", Z(3, 4), 1, 4),
    "view": bad(RuntimeError, "invalid for input of size", Z(3, 4), 5, -1),
    "reshape": bad(RuntimeError, "invalid for input of size", Z(3, 4), (5, -1)),
}
for _op in OPS:
    if _op.name in _ERRORS:
        _op.errors = tuple(_op.errors) + (_ERRORS[_op.name],)
