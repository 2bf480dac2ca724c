"""Op table: reductions, scans and sorting."""
from __future__ import annotations

from typing import Any, Callable, List, Sequence

import numpy as np

from .core import (ALL_EXTREMES, DOUBLE_ACCUMULATION, NO_LARGE, SHAPES, OpInfo, SampleInput, Z, bad, rand_array,
                   unary_samples)

FLOATS = ("float32", "float64")
ALL_DTYPES = ("float32", "float64", "int64", "int32", "uint8", "bool")
NONEMPTY = [s for s in SHAPES if 0 not in s]
_NO_INF = tuple(v for v in ALL_EXTREMES if "inf" not in v)
_SUMS = dict(extremes=NO_LARGE, exempt={"extreme_values": "1e20 and -1e20 in one sum cancel: what is left of the "
                                                           "other terms depends on the summation order"})
_WELFORD_MEAN = ("torch's Welford mean of var_mean / std_mean turns an inf followed by finite values into nan; "
                 "cgrad's mean is mean() (inf)")


def distinct_array(shape: Sequence[int], dtype: str, rng: Any) -> np.ndarray:
    """Values without ties (so max / sort / topk indices are unambiguous)."""
    n = int(np.prod(shape))
    if dtype == "bool":
        return rand_array(shape, dtype, rng=rng)
    if dtype.startswith("float"):
        return (rng.permutation(n) * 0.37 - n * 0.15 + rng.uniform(0, 0.1, n)).reshape(shape).astype(dtype)
    vals = rng.permutation(n) if dtype == "uint8" else rng.permutation(n) - n // 2
    return vals.reshape(shape).astype(dtype)


def _reduce_samples(shapes: Sequence[Sequence[int]] = SHAPES, tuple_dims: bool = True, all_dims: bool = True,
                    distinct: bool = False, lo: float = -2.0, hi: float = 2.0, **extra: Any) -> Callable[[str], List[SampleInput]]:
    """The input alone, then every dim (with and without keepdim), a dim tuple and a non-contiguous input."""
    def fn(dtype: str) -> List[SampleInput]:
        rng = np.random.default_rng(21)

        def arr(s: Sequence[int]) -> np.ndarray:
            return distinct_array(s, dtype, rng) if distinct else rand_array(s, dtype, lo, hi, rng=rng)
        out = []
        for s in shapes:
            if all_dims:
                out.append(SampleInput((arr(s),), dict(extra)))
            for d in range(-len(s), len(s)):
                out.append(SampleInput((arr(s),), dict(extra, dim=d)))
                out.append(SampleInput((arr(s),), dict(extra, dim=d, keepdim=True)))
        if tuple_dims:
            out.append(SampleInput((arr((2, 3, 4)),), dict(extra, dim=(0, 2))))
            out.append(SampleInput((arr((2, 3, 4)),), dict(extra, dim=(-1, 1), keepdim=True)))
        out.append(SampleInput((arr((3, 4)),), dict(extra, dim=1), noncontig=True))
        if all_dims:
            out.append(SampleInput((arr((3, 4)),), dict(extra), noncontig=True))
        return out
    return fn


def _scan_samples(distinct: bool = False, lo: float = -2.0, hi: float = 2.0, **extra: Any) -> Callable[[str], List[SampleInput]]:
    def fn(dtype: str) -> List[SampleInput]:
        rng = np.random.default_rng(22)
        out = []
        for s in SHAPES:
            for d in range(-len(s), len(s)) if s else [0, -1]:
                a = distinct_array(s, dtype, rng) if distinct else rand_array(s, dtype, lo, hi, rng=rng)
                out.append(SampleInput((a,), dict(extra, dim=d)))
        a = distinct_array((3, 4), dtype, rng) if distinct else rand_array((3, 4), dtype, lo, hi, rng=rng)
        out.append(SampleInput((a, 1), dict(extra), noncontig=True))
        return out
    return fn


def _minmax_samples(dtype: str) -> List[SampleInput]:
    """max / min: all elements, (dim, keepdim) -> (values, indices), and the binary overload."""
    rng = np.random.default_rng(23)
    out = [SampleInput((distinct_array(s, dtype, rng),)) for s in NONEMPTY]
    for s in SHAPES:
        for d in range(-len(s), len(s)):
            if s[d] == 0 or (dtype == "bool" and s[d] > 1):
                continue  # empty dims raise; bool has ties
            out.append(SampleInput((distinct_array(s, dtype, rng), d)))
            out.append(SampleInput((distinct_array(s, dtype, rng),), {"dim": d, "keepdim": True}))
    out.append(SampleInput((distinct_array((3, 4), dtype, rng),), {"dim": 1}, noncontig=True))
    for a, b in [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 3, 1), (3, 4)), ((), (5,))]:
        out.append(SampleInput((distinct_array(a, dtype, rng), distinct_array(b, dtype, rng) + (0.5 if dtype.startswith("float") else False))))
    return out


def _var_samples(dtype: str) -> List[SampleInput]:
    rng = np.random.default_rng(24)
    out = []
    for s in [(5,), (3, 4), (2, 3, 4)]:
        out.append(SampleInput((rand_array(s, dtype, rng=rng),)))
        out.append(SampleInput((rand_array(s, dtype, rng=rng), False)))
        for d in range(-len(s), len(s)):
            out.append(SampleInput((rand_array(s, dtype, rng=rng), d)))
            out.append(SampleInput((rand_array(s, dtype, rng=rng), d, False, True)))
            out.append(SampleInput((rand_array(s, dtype, rng=rng),), {"dim": d, "correction": 0, "keepdim": True}))
    out.append(SampleInput((rand_array((2, 3, 4), dtype, rng=rng),), {"dim": (0, 2), "unbiased": False}))
    out.append(SampleInput((rand_array((2, 3, 4), dtype, rng=rng),), {"dim": (1,), "correction": 2}))
    out.append(SampleInput((rand_array((3, 4), dtype, rng=rng),), {"dim": 1}, noncontig=True))
    out.append(SampleInput((rand_array((1,), dtype, rng=rng),), {}, grad=False))  # 0 degrees of freedom: nan
    out.append(SampleInput((rand_array((0,), dtype, rng=rng),), {}, grad=False))
    return out


def _nan_samples(**extra: Any) -> Callable[[str], List[SampleInput]]:
    base = _reduce_samples(**extra)

    def fn(dtype: str) -> List[SampleInput]:
        out = base(dtype)
        if dtype.startswith("float"):
            rng = np.random.default_rng(25)
            a = rand_array((3, 4), dtype, rng=rng)
            a[0, 1] = a[2, 3] = a[2, 0] = np.nan
            b = a.copy()
            b[:, 2] = np.nan
            for x in (a, b):
                out += [SampleInput((x,), dict(extra), grad=False), SampleInput((x,), dict(extra, dim=1), grad=False),
                        SampleInput((x,), dict(extra, dim=0, keepdim=True), grad=False)]
        return out
    return fn


def _norm_samples(dtype: str) -> List[SampleInput]:
    rng = np.random.default_rng(26)
    out = []
    for p in [None, "fro", 1, 2, 3, 0.5, float("inf"), -float("inf"), 0]:
        kw = {} if p is None else {"p": p}
        for s in SHAPES:
            if 0 in s and p in (float("inf"), -float("inf")):
                continue  # no identity: raises
            out.append(SampleInput((rand_array(s, dtype, rng=rng),), dict(kw), grad=p != 0 and 0 not in s))
        out.append(SampleInput((rand_array((3, 4), dtype, rng=rng),), dict(kw, dim=1), grad=p != 0))
        out.append(SampleInput((rand_array((2, 3, 4), dtype, rng=rng),), dict(kw, dim=(0, 2), keepdim=True), grad=p != 0))
        out.append(SampleInput((rand_array((3, 4), dtype, rng=rng),), dict(kw, dim=0), noncontig=True, grad=p != 0))
    out.append(SampleInput((rand_array((3, 4), dtype, rng=rng), 2, 1, True)))
    out.append(SampleInput((rand_array((3, 4), dtype, rng=rng),), {"dim": -1, "dtype": float}))
    return out


def _sort_samples(**extra: Any) -> Callable[[str], List[SampleInput]]:
    def fn(dtype: str) -> List[SampleInput]:
        rng = np.random.default_rng(27)
        out = []
        stable = {} if dtype.startswith("float") else {"stable": True}  # ties in int / bool data
        for s in SHAPES:
            out.append(SampleInput((distinct_array(s, dtype, rng),), dict(extra, **stable)))
            for d in range(-len(s), len(s)):
                out.append(SampleInput((distinct_array(s, dtype, rng),), dict(extra, dim=d, **stable)))
                if not stable:
                    out.append(SampleInput((distinct_array(s, dtype, rng), d)))
                out.append(SampleInput((distinct_array(s, dtype, rng),), dict(extra, dim=d, descending=True, **stable)))
        out.append(SampleInput((rand_array((4, 6), dtype, -1, 1, rng=rng),), dict(extra, dim=1, stable=True), grad=False))
        out.append(SampleInput((distinct_array((3, 4), dtype, rng),), dict(extra, dim=0, **stable), noncontig=True))
        return out
    return fn


def _topk_samples(dtype: str) -> List[SampleInput]:
    rng = np.random.default_rng(28)
    out = []
    for s, k, kw in [((5,), 2, {}), ((5,), 0, {}), ((5,), 5, {"largest": False}), ((3, 4), 2, {"dim": 0}),
                     ((3, 4), 3, {}), ((2, 3, 4), 2, {"dim": 1, "largest": False}), ((), 1, {}), ((0, 3), 2, {}),
                     ((2, 3, 4), 1, {"dim": -1, "sorted": True})]:
        out.append(SampleInput((distinct_array(s, dtype, rng), k), kw))
    out.append(SampleInput((distinct_array((3, 4), dtype, rng), 2), {"dim": 1}, noncontig=True))
    return out


def _aminmax_samples(dtype: str) -> List[SampleInput]:
    rng = np.random.default_rng(29)
    out = [SampleInput((distinct_array(s, dtype, rng),)) for s in NONEMPTY]
    for s in [(5,), (3, 4), (2, 3, 4), (1, 0, 3)]:
        for d in range(-len(s), len(s)):
            if s[d]:
                out.append(SampleInput((distinct_array(s, dtype, rng),), {"dim": d, "keepdim": d % 2 == 0}))
    out.append(SampleInput((distinct_array((3, 4), dtype, rng),), {"dim": 1}, noncontig=True))
    return out


def _argext_samples(dtype: str) -> List[SampleInput]:
    rng = np.random.default_rng(30)
    out = [SampleInput((distinct_array(s, dtype, rng),)) for s in NONEMPTY]
    for s in [(5,), (3, 4), (2, 3, 4), ()]:
        for d in range(-len(s), len(s)) if s else [0]:
            out.append(SampleInput((distinct_array(s, dtype, rng), d)))
            out.append(SampleInput((distinct_array(s, dtype, rng),), {"dim": d, "keepdim": True}))
    out.append(SampleInput((distinct_array((3, 4), dtype, rng),), {"keepdim": True}))
    out.append(SampleInput((distinct_array((3, 4), dtype, rng),), {"dim": 1}, noncontig=True))
    return out


def _dtype_samples(base: Callable[[str], List[SampleInput]], targets: Sequence[type]) -> Callable[[str], List[SampleInput]]:
    """base samples plus a few with dtype= (Python's float / int: float64 / int64 in both libraries)."""
    def fn(dtype: str) -> List[SampleInput]:
        out = base(dtype)
        rng = np.random.default_rng(32)
        for t in targets:
            out.append(SampleInput((rand_array((3, 4), dtype, rng=rng),), {"dim": 1, "dtype": t},
                                   grad=dtype.startswith("float") and t is float))
            out.append(SampleInput((rand_array((3, 4), dtype, rng=rng),), {"dtype": t},
                                   grad=dtype.startswith("float") and t is float))
        return out
    return fn


def _scan_dtype_samples(base: Callable[[str], List[SampleInput]], targets: Sequence[type]) -> Callable[[str], List[SampleInput]]:
    def fn(dtype: str) -> List[SampleInput]:
        out = base(dtype)
        rng = np.random.default_rng(33)
        for t in targets:
            out.append(SampleInput((rand_array((3, 4), dtype, rng=rng),), {"dim": 1, "dtype": t},
                                   grad=dtype.startswith("float") and t is float))
        return out
    return fn


def _prod_samples(dtype: str) -> List[SampleInput]:
    rng = np.random.default_rng(34)
    lo, hi = (0.5, 1.5) if dtype.startswith("float") else (-2, 2)
    out = []
    for s in SHAPES:
        out.append(SampleInput((rand_array(s, dtype, lo, hi, rng=rng),)))
        for d in range(-len(s), len(s)):
            out.append(SampleInput((rand_array(s, dtype, lo, hi, rng=rng), d)))
            out.append(SampleInput((rand_array(s, dtype, lo, hi, rng=rng),), {"dim": d, "keepdim": True}))
    out.append(SampleInput((rand_array((3, 4), dtype, lo, hi, rng=rng), 1), noncontig=True))
    z = rand_array((3, 4), dtype, lo, hi, rng=rng)
    z[1, 2] = 0
    out.append(SampleInput((z, 1)))
    out.append(SampleInput((z,)))
    return out


def _drop_keepdim(base: Callable[[str], List[SampleInput]]) -> Callable[[str], List[SampleInput]]:
    """base samples without keepdim= (ops that have no keepdim argument)."""
    def fn(dtype: str) -> List[SampleInput]:
        return [s for s in base(dtype) if "keepdim" not in s.kwargs]
    return fn


OPS = [
    OpInfo("sum", _dtype_samples(_reduce_samples(), [float, int]), dtypes=ALL_DTYPES, **_SUMS),
    OpInfo("mean", _dtype_samples(_reduce_samples(), [float]), dtypes=FLOATS, **_SUMS),
    OpInfo("nansum", _nan_samples(), dtypes=("float32", "float64", "int64", "bool"), **_SUMS),
    OpInfo("nanmean", _nan_samples(), dtypes=FLOATS, **_SUMS),
    OpInfo("prod", _prod_samples, dtypes=ALL_DTYPES),
    OpInfo("max", _minmax_samples, dtypes=ALL_DTYPES),
    OpInfo("min", _minmax_samples, dtypes=ALL_DTYPES),
    OpInfo("amax", _reduce_samples(NONEMPTY, distinct=True), dtypes=ALL_DTYPES),
    OpInfo("amin", _reduce_samples(NONEMPTY, distinct=True), dtypes=ALL_DTYPES),
    OpInfo("aminmax", _aminmax_samples, dtypes=("float32", "float64", "int64", "int32", "uint8")),
    OpInfo("argmax", _argext_samples, dtypes=("float32", "float64", "int64", "uint8"), grad=False),
    OpInfo("argmin", _argext_samples, dtypes=("float32", "float64", "int64", "uint8"), grad=False),
    OpInfo("var", _var_samples, dtypes=FLOATS),
    OpInfo("std", _var_samples, dtypes=FLOATS),
    OpInfo("var_mean", _var_samples, dtypes=FLOATS, method=False, extremes=_NO_INF,
           exempt={"extreme_values": _WELFORD_MEAN}),
    OpInfo("std_mean", _var_samples, dtypes=FLOATS, method=False, extremes=_NO_INF,
           exempt={"extreme_values": _WELFORD_MEAN}),
    OpInfo("logsumexp", _reduce_samples(all_dims=False), dtypes=("float32", "float64", "int64")),
    OpInfo("norm", _norm_samples, dtypes=FLOATS, atol=1e-4, rtol=1e-5, extremes=NO_LARGE,
           exempt={"extreme_values": DOUBLE_ACCUMULATION}),
    OpInfo("all", _reduce_samples(lo=-1, hi=1), dtypes=ALL_DTYPES, grad=False),
    OpInfo("any", _reduce_samples(lo=-1, hi=1), dtypes=ALL_DTYPES, grad=False),
    OpInfo("count_nonzero", _drop_keepdim(_reduce_samples(lo=-1, hi=1)), dtypes=ALL_DTYPES, grad=False),
    OpInfo("cumsum", _scan_dtype_samples(_scan_samples(), [float, int]), dtypes=ALL_DTYPES),
    OpInfo("cumprod", _scan_dtype_samples(_scan_samples(lo=0.5, hi=1.5), [float]), dtypes=ALL_DTYPES),
    OpInfo("cummax", _scan_samples(distinct=True), dtypes=("float32", "float64", "int64", "int32")),
    OpInfo("sort", _sort_samples(), dtypes=ALL_DTYPES),
    OpInfo("argsort", _sort_samples(), dtypes=ALL_DTYPES, grad=False),
    OpInfo("msort", unary_samples(), dtypes=ALL_DTYPES),
    OpInfo("topk", _topk_samples, dtypes=("float32", "float64", "int64", "int32", "uint8"),
           extremes=tuple(v for v in ALL_EXTREMES if v != "-0"),
           exempt={"extreme_values": "+0 and -0 compare equal: which one a top-k tie keeps is unspecified"}),
]

for _op in OPS:  # issue 6 exemptions
    if _op.name in ("cumsum", "cumprod"):
        _op.exempt["inplace"] = f"Tensor.{_op.name}_ is not implemented in cgrad"

_ERRORS = {"topk": bad(RuntimeError, "out of range", Z(3, 4), 5)}  # issue 6: explicit bad inputs
for _op in OPS:
    if _op.name in _ERRORS:
        _op.errors = tuple(_op.errors) + (_ERRORS[_op.name],)
