"""OpInfo, sample inputs and the checks run for every entry: values against
PyTorch (contiguous and non-contiguous inputs, float and integer dtypes),
gradients against PyTorch, float64 central-difference gradcheck and
gradgradcheck of cgrad's own autograd, and (issue 6) the sample builders for
extreme values, as_strided layouts and declared error inputs."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

SHAPES = [(), (0,), (1, 0, 3), (5,), (3, 4), (2, 3, 4)]
BROADCAST_PAIRS = [((3, 4), (4,)), ((3, 1), (1, 4)), ((2, 3, 4), (3, 1)), ((), (3,)), ((5,), ()), ((0, 3), (3,))]
FLOAT_DTYPES = ("float32", "float64")
INT_DTYPES = ("int64", "int32", "uint8", "bool")


@dataclass
class SampleInput:
    """Positional args (numpy arrays become tensors, anything else is passed
    as is) and keyword args. noncontig: arrays become non-contiguous views."""
    args: Tuple[Any, ...]
    kwargs: Dict[str, Any] = field(default_factory=dict)
    noncontig: bool = False
    grad: bool = True  # may this sample be differentiated (no kinks, no ties)?

    def __repr__(self) -> str:
        desc = ", ".join(f"{type(a).__name__}{getattr(a, 'shape', '')}:{getattr(a, 'dtype', '')}" for a in self.args)
        nc = " noncontig" if self.noncontig else ""
        return f"Sample({desc}{nc}, {self.kwargs})"


@dataclass(frozen=True)
class TorchVariant:
    """Elements where PyTorch's own answer is not the right one on some or all
    of its code paths: which path it takes depends on the ISA its kernels were
    dispatched to at import (ATEN_CPU_CAPABILITY=default / avx2 / avx512), on
    its vector body against its scalar tail (so on the tensor's size and the
    element's position) and on the dtype. The test states the right value
    there, which cgrad must give, and accepts from PyTorch the right value or
    one of `torch_also`, for `reason`; anything else PyTorch gives fails (so
    the list stays true). `at` selects the elements by their input values (the
    first array argument, as float64), `right` gives the right results for
    them, `when` the sample kwargs the entry applies to."""
    at: Callable[[np.ndarray], np.ndarray]
    right: Callable[[np.ndarray], np.ndarray]
    torch_also: Tuple[float, ...]
    reason: str
    when: Callable[[Dict[str, Any]], bool] = lambda kwargs: True


def same_value(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """elementwise: equal with the same sign of zero, or both NaN"""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return (np.isnan(a) & np.isnan(b)) | ((a == b) & (np.signbit(a) == np.signbit(b)))


def apply_torch_variants(variants: Sequence["TorchVariant"], x: np.ndarray, want: np.ndarray,
                         kwargs: Dict[str, Any], what: str) -> np.ndarray:
    """PyTorch's result `want` of an elementwise op on x, with the elements the
    variants select replaced by the right values, after checking that PyTorch
    gave the right value or a listed alternative there."""
    want = np.array(want, copy=True)
    xf = np.broadcast_to(np.asarray(x, np.float64), want.shape)
    for v in variants:
        if not v.when(kwargs):
            continue
        mask = v.at(xf)
        if not mask.any():
            continue
        right = np.broadcast_to(np.asarray(v.right(xf), np.float64), want.shape)[mask].astype(want.dtype)
        got = want[mask]
        ok = same_value(got, right)
        for alt in v.torch_also:
            ok |= same_value(got, np.full(got.shape, alt))
        assert ok.all(), (f"{what}: PyTorch gives {got[~ok][:4]} at inputs {xf[mask][~ok][:4]}, neither the right "
                          f"{right[~ok][:4]} nor a listed variant {v.torch_also} ({v.reason})")
        want[mask] = right
    return want


@dataclass
class OpInfo:
    name: str                                   # public name: cgrad.<name> and torch.<name>
    sample_fn: Callable[[str], List[SampleInput]]  # dtype name -> samples
    dtypes: Sequence[str] = FLOAT_DTYPES        # dtypes whose samples are run
    call: Optional[Callable[..., Any]] = None   # (lib, *args, **kw) -> result; default lib.<name>
    torch_name: Optional[str] = None            # name in torch when different
    method: bool = True                         # Tensor.<name> exists (called on the first arg)
    inplace: bool = False                       # Tensor.<name>_ exists and is checked
    grad: bool = True                           # differentiable: compare grads, gradcheck
    gradgrad: bool = True                       # gradgradcheck too
    atol: float = 1e-5
    rtol: float = 1.3e-6
    nondeterministic_values: bool = False       # random ops: compare shapes / dtypes only
    skip_torch_compare: bool = False
    # issue 6: extreme values, strided inputs, declared errors. A check an op
    # opts out of is named in `exempt` with the reason (test_coverage counts them).
    extremes: Optional[Sequence[str]] = None      # names from EXTREME_VALUES; None: ALL_EXTREMES
    extreme_args: Optional[Sequence[int]] = None  # positional args that get them (None: every float array)
    errors: Sequence[Any] = ("auto",)             # kinds from GENERIC_ERRORS / builders dtype -> [ErrorInput]
    # check ("extremes", "strided", "inplace", "errors") -> reason; also the partial opt-outs
    # "extreme_values" (extremes / extreme_args narrowed) and "signed_zeros" (sign of zero results not compared)
    exempt: Dict[str, str] = field(default_factory=dict)
    # elementwise ops: where PyTorch's extreme-value results depend on its code path or are wrong
    torch_variants: Sequence[TorchVariant] = ()

    def __post_init__(self) -> None:
        if self.extremes is None:
            self.extremes = ALL_EXTREMES

    def fn(self, lib: Any) -> Callable[..., Any]:
        if self.call is not None:
            return lambda *a, **k: self.call(lib, *a, **k)
        name = self.torch_name if (self.torch_name and lib.__name__ == "torch") else self.name
        return getattr(lib, name)


# ---------------------------------------------------------------- sample helpers

def rand_array(shape: Sequence[int], dtype: str, lo: float = -2.0, hi: float = 2.0, rng=None) -> np.ndarray:
    rng = rng or np.random.default_rng(1234)
    if dtype == "bool":
        return np.asarray(rng.random(shape) > 0.5)
    if dtype.startswith("int") or dtype.startswith("uint"):
        lo_i = max(int(np.floor(lo)), 0) if dtype.startswith("uint") else int(np.floor(lo))
        return np.asarray(rng.integers(lo_i, max(int(np.ceil(hi)), lo_i + 1) + 1, size=shape)).astype(dtype)
    return np.asarray(rng.uniform(lo, hi, size=shape)).astype(dtype)


def unary_samples(lo: float = -2.0, hi: float = 2.0, **kwargs: Any) -> Callable[[str], List[SampleInput]]:
    def fn(dtype: str) -> List[SampleInput]:
        rng = np.random.default_rng(7)
        out = [SampleInput((rand_array(s, dtype, lo, hi, rng),), dict(kwargs)) for s in SHAPES]
        out.append(SampleInput((rand_array((3, 4), dtype, lo, hi, rng),), dict(kwargs), noncontig=True))
        return out
    return fn


def binary_samples(lo: float = -2.0, hi: float = 2.0, lo2: Optional[float] = None, hi2: Optional[float] = None,
                   scalars: bool = True, **kwargs: Any) -> Callable[[str], List[SampleInput]]:
    lo2 = lo if lo2 is None else lo2
    hi2 = hi if hi2 is None else hi2

    def fn(dtype: str) -> List[SampleInput]:
        rng = np.random.default_rng(11)
        out = [SampleInput((rand_array(s, dtype, lo, hi, rng), rand_array(s, dtype, lo2, hi2, rng)), dict(kwargs))
               for s in SHAPES]
        out += [SampleInput((rand_array(a, dtype, lo, hi, rng), rand_array(b, dtype, lo2, hi2, rng)), dict(kwargs))
                for a, b in BROADCAST_PAIRS]
        out.append(SampleInput((rand_array((3, 4), dtype, lo, hi, rng), rand_array((3, 4), dtype, lo2, hi2, rng)),
                               dict(kwargs), noncontig=True))
        if scalars and dtype != "bool":
            s = float(rng.uniform(max(lo2, 0.5), max(hi2, 1.0)))
            out.append(SampleInput((rand_array((3, 4), dtype, lo, hi, rng), int(s) if not dtype.startswith("float") else s),
                                   dict(kwargs)))
        return out
    return fn


# ---------------------------------------------------------------- conversion

def to_lib(lib: Any, x: Any, noncontig: bool, requires_grad: bool) -> Any:
    """numpy array -> lib tensor (optionally a non-contiguous view), leaf."""
    if not isinstance(x, np.ndarray):
        return x
    dtype = getattr(lib, str(x.dtype)) if str(x.dtype) != "bool" else lib.bool
    if noncontig and x.ndim > 0:
        big = np.repeat(x, 2, axis=-1)
        t = lib.tensor(big.tolist(), dtype=dtype)
        t = t[..., ::2] if x.shape[-1] > 0 else t
        if x.ndim >= 2:  # also a transposed layout: materialise x.T and view it back
            tt = lib.tensor(np.ascontiguousarray(np.swapaxes(x, -1, -2)).tolist(), dtype=dtype)
            t = tt.transpose(-1, -2) if hasattr(tt, "transpose") else t
    else:
        t = lib.tensor(x.tolist(), dtype=dtype) if x.size else lib.zeros(x.shape, dtype=dtype)
    if requires_grad:
        t = t.detach().requires_grad_(True)
    return t


def to_numpy(t: Any) -> np.ndarray:
    if hasattr(t, "detach"):
        t = t.detach()
    if type(t).__module__.startswith("torch"):
        if str(t.dtype) == "torch.bfloat16" or str(t.dtype) == "torch.float16":
            t = t.float()
        return t.numpy()
    if str(t.dtype) in ("cgrad.bfloat16", "cgrad.float16"):
        t = t.float()
    arr = np.array(t.tolist(), dtype=str(t.dtype).split(".")[-1])
    return arr.reshape(tuple(t.shape))


def dtype_name(t: Any) -> str:
    return str(t.dtype).split(".")[-1]


def flatten_outputs(out: Any) -> List[Any]:
    if isinstance(out, (tuple, list)):
        res = []
        for o in out:
            res += flatten_outputs(o)
        return res
    return [out] if hasattr(out, "dtype") else []


def assert_close(a: np.ndarray, b: np.ndarray, atol: float, rtol: float, what: str) -> None:
    assert a.shape == b.shape, f"{what}: shape {a.shape} != {b.shape}"
    if a.dtype == bool or b.dtype == bool or a.dtype.kind in "iu":
        np.testing.assert_array_equal(a, b, err_msg=what)
    else:
        np.testing.assert_allclose(a, b, atol=atol, rtol=rtol, equal_nan=True, err_msg=what)


# ---------------------------------------------------------------- gradcheck (float64, central differences)

def numeric_check(cg: Any, f: Callable[..., Any], arrays: List[np.ndarray], diff: List[int], create_graph: bool,
                  eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3) -> None:
    """Compare cgrad's vector-Jacobian product (first order, or the gradient of
    <u, grad> for second order) with central differences."""
    rng = np.random.default_rng(5)

    def leaves(arrs: List[np.ndarray]) -> List[Any]:
        return [to_lib(cg, a, False, i in diff) for i, a in enumerate(arrs)]

    def scalar(arrs: List[np.ndarray], v: np.ndarray, u: Optional[List[np.ndarray]]) -> Tuple[float, List[Any]]:
        xs = leaves(arrs)
        outs = flatten_outputs(f(*xs))
        fl = [o for o in outs if o.dtype.is_floating_point]
        total = None
        sizes = [int(np.prod(o.shape)) for o in fl]
        off = 0
        for o, n in zip(fl, sizes):
            vv = cg.tensor(v[off:off + n].reshape(tuple(o.shape)).tolist(), dtype=o.dtype) if n else cg.zeros(tuple(o.shape), dtype=o.dtype)
            term = (o * vv).sum()
            total = term if total is None else total + term
            off += n
        if total is None:
            return 0.0, []
        if u is None:
            return float(total.item()), [total, xs]
        req = [xs[i] for i in diff]
        if not total.requires_grad:
            return 0.0, []
        grads = cg.autograd.grad(total, req, create_graph=True, allow_unused=True)
        s2 = None
        for g, uu in zip(grads, u):
            if g is None:
                continue
            t = (g * cg.tensor(uu.tolist(), dtype=g.dtype) if uu.size else g.sum() * 0).sum()
            s2 = t if s2 is None else s2 + t
        if s2 is None:
            return 0.0, []
        return float(s2.item()), [s2, xs]

    outs0 = flatten_outputs(f(*leaves(arrays)))
    n_out = sum(int(np.prod(o.shape)) for o in outs0 if o.dtype.is_floating_point)
    v = rng.uniform(-1, 1, size=n_out)
    u = [rng.uniform(-1, 1, size=arrays[i].shape) for i in diff] if create_graph else None
    val, keep = scalar(arrays, v, u)
    if not keep or not keep[0].requires_grad:
        analytic = [np.zeros(arrays[i].shape) for i in diff]
    else:
        req = [keep[1][i] for i in diff]
        gs = cg.autograd.grad(keep[0], req, allow_unused=True)
        analytic = [to_numpy(g) if g is not None else np.zeros(arrays[i].shape) for g, i in zip(gs, diff)]
    for k, i in enumerate(diff):
        a = arrays[i]
        num = np.zeros(a.shape)
        flat = num.reshape(-1)
        for j in range(a.size):
            plus = [x.copy() if isinstance(x, np.ndarray) else x for x in arrays]
            minus = [x.copy() if isinstance(x, np.ndarray) else x for x in arrays]
            plus[i].reshape(-1)[j] += eps
            minus[i].reshape(-1)[j] -= eps
            flat[j] = (scalar(plus, v, u)[0] - scalar(minus, v, u)[0]) / (2 * eps)
        np.testing.assert_allclose(analytic[k], num, atol=atol, rtol=rtol,
                                   err_msg=f"{'gradgradcheck' if create_graph else 'gradcheck'} input {i}")


# ---------------------------------------------------------------- extreme values (issue 6, check 1)

def subnormal(dtype: str) -> float:
    """A subnormal of the dtype (a quarter of its smallest normal)."""
    return float(np.finfo(dtype).tiny) / 4


# Names of the extreme values an op may declare; each is a function of the dtype.
EXTREME_VALUES: Dict[str, Callable[[str], float]] = {
    "+0": lambda dt: 0.0, "-0": lambda dt: -0.0, "+inf": lambda dt: float("inf"), "-inf": lambda dt: float("-inf"),
    "nan": lambda dt: float("nan"), "+1e20": lambda dt: 1e20, "-1e20": lambda dt: -1e20,
    "+sub": subnormal, "-sub": lambda dt: -subnormal(dt),
}
ALL_EXTREMES = tuple(EXTREME_VALUES)
NO_LARGE = ("+0", "-0", "+inf", "-inf", "nan", "+sub", "-sub")  # no ±1e20 (sums would cancel catastrophically)

# The reason ops drop ±1e20: squares / products of 1e20 overflow float32 (or cancel
# in float64) in torch's float accumulators; cgrad accumulates in double, so
# the results differ by more than rounding (cgrad's are the closer ones).
DOUBLE_ACCUMULATION = ("±1e20: products overflow / cancel in torch's float accumulation, cgrad accumulates in double "
                       "(or blocks the sums differently): results differ beyond rounding")

# A float sample is rewritten in these groups (one variant each), so that a
# reduction sees nan alone, infinities alone, large values alone...
EXTREME_GROUPS = (("+0", "-0", "+sub", "-sub"), ("+inf", "-inf"), ("+inf",), ("nan",), ("nan", "+inf", "-0"),
                  ("+1e20", "-1e20"), ("+1e20",))


def extreme_samples(op: "OpInfo", dtype: str, max_samples: int = 3) -> List[SampleInput]:
    """The op's first float samples (at most max_samples with a non-empty float
    array) with some of their float elements replaced by the op's declared
    extreme values, one variant per group of EXTREME_GROUPS (restricted to the
    declared values). Each value of the group goes in once per array, at
    positions spread over it, so the variants keep ordinary values beside the
    extreme ones and have no ties among them. No gradients."""
    allowed = set(op.extremes or ())
    groups = []
    for g in EXTREME_GROUPS:
        gg = tuple(v for v in g if v in allowed)
        if gg and gg not in groups:
            groups.append(gg)
    out: List[SampleInput] = []
    taken = 0
    for s in op.sample_fn(dtype):
        floats = [i for i, a in enumerate(s.args) if isinstance(a, np.ndarray) and a.dtype.kind == "f" and a.size]
        if op.extreme_args is not None:
            floats = [i for i in floats if i in op.extreme_args]
        if not floats:
            continue
        taken += 1
        for gi, g in enumerate(groups):
            vals = [EXTREME_VALUES[v](dtype) for v in g]
            args = list(s.args)
            for i in floats:
                a = args[i].copy()
                flat = a.reshape(-1)
                step = max(flat.size // len(vals), 1)
                for k, v in enumerate(vals[:flat.size]):
                    flat[((gi + i) % step + k * step) % flat.size] = v
                args[i] = a
            out.append(SampleInput(tuple(args), dict(s.kwargs), s.noncontig, grad=False))
        if taken >= max_samples:
            break
    return out


def assert_same_values(a: np.ndarray, b: np.ndarray, atol: float, rtol: float, what: str,
                       signed_zeros: bool = True) -> None:
    """assert_close plus: infinities and nans at the same places, and (unless
    signed_zeros is False) the same sign on every zero, as torch gives them."""
    assert_close(a, b, atol, rtol, what)
    if a.dtype.kind == "f" and b.dtype.kind == "f" and a.size:
        af, bf = a.astype(np.float64), b.astype(np.float64)
        np.testing.assert_array_equal(np.isnan(af), np.isnan(bf), err_msg=f"{what}: nan positions")
        for sign in (1, -1):
            np.testing.assert_array_equal(af == sign * np.inf, bf == sign * np.inf, err_msg=f"{what}: {sign:+}inf positions")
        zero = (af == 0) & (bf == 0) & signed_zeros
        np.testing.assert_array_equal(np.signbit(af[zero]), np.signbit(bf[zero]), err_msg=f"{what}: sign of zeros")


# ---------------------------------------------------------------- arbitrary strides (issue 6, check 2)

STRIDED_LAYOUTS = ("expanded", "overlapping", "offset", "permuted")


def strided_layout(shape: Sequence[int], layout: str) -> Tuple[int, Tuple[int, ...], int]:
    """(base length, strides, storage offset) of a view of `shape` laid out as
    `layout`: expanded (stride 0 on the first dim of size > 1), overlapping
    windows (every stride 1), offset (contiguous, storage offset 3), permuted
    (column-major: the reversed dims are contiguous)."""
    nd = len(shape)
    contig = [1] * nd
    for d in range(nd - 2, -1, -1):
        contig[d] = contig[d + 1] * shape[d + 1]
    if layout == "expanded":
        d0 = next((d for d in range(nd) if shape[d] > 1), 0)
        strides = [0 if d == d0 else 1 for d in range(nd)]
        acc = 1
        for d in range(nd - 1, -1, -1):
            if d != d0:
                strides[d] = acc
                acc *= shape[d]
        return acc, tuple(strides), 0
    if layout == "overlapping":
        return sum(shape) - nd + 1, (1,) * nd, 0
    if layout == "offset":
        return int(np.prod(shape)) + 5, tuple(contig), 3
    if layout == "permuted":
        strides = [1] * nd
        for d in range(1, nd):
            strides[d] = strides[d - 1] * shape[d - 1]
        return int(np.prod(shape)), tuple(strides), 0
    raise ValueError(layout)


def first_array(s: SampleInput) -> int:
    """Index of the sample's first array argument (-1: none)."""
    return next((i for i, a in enumerate(s.args) if isinstance(a, np.ndarray)), -1)


def strided_samples(op: "OpInfo", dtype: str, max_samples: int = 2) -> List[Tuple[SampleInput, str]]:
    """(sample, layout) pairs: the op's first samples whose first array
    argument is non-empty of rank >= 1 (at most max_samples of them), once per layout."""
    out: List[Tuple[SampleInput, str]] = []
    for s in op.sample_fn(dtype):
        i = first_array(s)
        if i < 0 or s.args[i].ndim == 0 or s.args[i].size == 0 or s.noncontig:
            continue
        out += [(s, layout) for layout in STRIDED_LAYOUTS]
        if len(out) >= max_samples * len(STRIDED_LAYOUTS):
            break
    return out


def strided_base(x: np.ndarray, layout: str) -> Tuple[np.ndarray, Tuple[int, ...], Tuple[int, ...], int]:
    """A 1-d base array (x's values, cycled) and the view parameters."""
    n, strides, offset = strided_layout(x.shape, layout)
    flat = x.reshape(-1)
    base = np.resize(flat, n + offset + (2 if layout == "offset" else 0)) if n + offset else flat[:0]
    return base, tuple(x.shape), strides, offset


# ---------------------------------------------------------------- declared error inputs (issue 6, check 4)

@dataclass
class ErrorInput:
    """A bad call: the sample, the exception type (PyTorch's), a regular
    expression the message must match (case-insensitive search) and whether
    torch is checked with the same call (False only where the call is
    cgrad-specific)."""
    sample: SampleInput
    exc: type
    match: str
    torch_check: bool = True

    def __repr__(self) -> str:
        return f"Error({self.sample!r} -> {self.exc.__name__} '{self.match}')"


def _first(op: "OpInfo", dtype: str, pred: Callable[[SampleInput], bool]) -> Optional[SampleInput]:
    return next((s for s in op.sample_fn(dtype) if pred(s)), None)


def _arr(s: SampleInput, i: int) -> bool:
    return len(s.args) > i and isinstance(s.args[i], np.ndarray)


def err_kwarg(op: "OpInfo", dtype: str) -> List[ErrorInput]:
    """An unknown keyword argument: TypeError naming it."""
    s = _first(op, dtype, lambda s: not s.noncontig)
    return [ErrorInput(SampleInput(s.args, dict(s.kwargs, no_such_arg=1)), TypeError, KWARG_MATCH)] if s else []


# What an unknown keyword's TypeError says: its name where the binding reports
# it, else CPython's argument-count message ("takes at most 2 arguments (3 given)").
KWARG_MATCH = "no_such_arg|argument"


def err_broadcast(op: "OpInfo", dtype: str) -> List[ErrorInput]:
    """The second array's last dim neither equal to the first's nor 1: RuntimeError."""
    s = _first(op, dtype, lambda s: _arr(s, 0) and _arr(s, 1) and s.args[0].ndim >= 1 and s.args[1].ndim >= 1
               and s.args[0].shape[-1] > 0 and not s.noncontig)
    if s is None:
        return []
    b = s.args[1]
    bad = np.resize(b, b.shape[:-1] + (s.args[0].shape[-1] + 2,)).astype(b.dtype)
    return [ErrorInput(SampleInput((s.args[0], bad) + tuple(s.args[2:]), dict(s.kwargs)), RuntimeError, SHAPE_MATCH)]


SHAPE_MATCH = "shape|size|element"


def err_dim(op: "OpInfo", dtype: str) -> List[ErrorInput]:
    """dim= beyond the input's rank: IndexError 'out of range'."""
    s = _first(op, dtype, lambda s: isinstance(s.kwargs.get("dim"), int) and _arr(s, 0) and not s.noncontig)
    if s is None:
        return []
    return [ErrorInput(SampleInput(s.args, dict(s.kwargs, dim=max(s.args[0].ndim, 1) + 3)), IndexError, "out of range")]


GENERIC_ERRORS: Dict[str, Callable[["OpInfo", str], List[ErrorInput]]] = {
    "kwarg": err_kwarg, "broadcast": err_broadcast, "dim": err_dim}


def err_auto(op: "OpInfo", dtype: str) -> List[ErrorInput]:
    """The default declaration: an unknown keyword, plus a broadcast mismatch
    where the samples have two arrays and an out-of-range dim= where they
    take dim=."""
    return err_kwarg(op, dtype) + err_broadcast(op, dtype) + err_dim(op, dtype)


GENERIC_ERRORS["auto"] = err_auto


def error_inputs(op: "OpInfo", dtype: str) -> List[ErrorInput]:
    """The op's declared bad calls: generic kinds (names of GENERIC_ERRORS)
    built from its samples, and explicit builders (dtype -> [ErrorInput])."""
    out: List[ErrorInput] = []
    if "errors" in op.exempt:
        return out
    for e in op.errors or ():
        out += GENERIC_ERRORS[e](op, dtype) if isinstance(e, str) else e(dtype)
    return out


class Z:
    """An array argument of an error spec: zeros of `shape` in the run's dtype
    (or `dtype`), or the given `values`."""

    def __init__(self, *shape: int, dtype: Optional[str] = None, values: Optional[Sequence[Any]] = None) -> None:
        self.shape, self.dtype, self.values = shape, dtype, values

    def array(self, run_dtype: str) -> np.ndarray:
        dt = self.dtype or run_dtype
        return np.asarray(self.values, dtype=dt) if self.values is not None else np.zeros(self.shape, dtype=dt)


def bad(exc: type, match: str, *args: Any, **kwargs: Any) -> Callable[[str], List[ErrorInput]]:
    """An explicit error declaration: the call with args (Z specs become arrays)
    raises exc (PyTorch's type) with a message matching `match`."""
    def fn(dtype: str) -> List[ErrorInput]:
        arrays = tuple(a.array(dtype) if isinstance(a, Z) else a for a in args)
        return [ErrorInput(SampleInput(arrays, dict(kwargs)), exc, match)]
    return fn
