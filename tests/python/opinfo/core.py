"""OpInfo, sample inputs and the checks run for every entry: values against
PyTorch (contiguous and non-contiguous inputs, float and integer dtypes),
gradients against PyTorch, and float64 central-difference gradcheck and
gradgradcheck of cgrad's own autograd."""
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
