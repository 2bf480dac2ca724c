"""Fuzz targets: each takes the fuzzer's bytes, decodes a test case from them
and checks cgrad against its contract (PyTorch's behaviour, or a clear error).
A target returns normally when the case passes; a mismatch raises
FuzzMismatch, and any other exception escaping a target is a bug. The same
functions replay the saved corpora in tests/python/test_fuzz_corpus.py, so
they must not need the fuzzer itself."""
from __future__ import annotations

import io
import json
import math
import os
import pickle
import struct
import sys
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
import torch

import cgrad

# the ctypes wrapper of the C checkpoint API (c_checkpoints.py) lives with the tests that use it
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))


class FuzzMismatch(AssertionError):
    """cgrad and the reference disagree on a decoded case."""


class Reader:
    """Consumes the fuzz input front to back; past the end it reads zeros, so
    every byte string decodes to some case."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def byte(self) -> int:
        if self.pos >= len(self.data):
            return 0
        self.pos += 1
        return self.data[self.pos - 1]

    def int_in(self, lo: int, hi: int) -> int:
        """An int in [lo, hi]."""
        return lo + self.byte() % (hi - lo + 1)

    def choice(self, options: List[Any]) -> Any:
        return options[self.byte() % len(options)]

    def flag(self) -> bool:
        return bool(self.byte() & 1)

    def value(self) -> float:
        """A float from a small set of magnitudes, signs and specials."""
        b = self.byte()
        if b >= 250:
            return [0.0, -0.0, 1e30, -1e30, float("inf"), float("nan")][b - 250]
        return (b - 125) / 16.0

    def rest(self) -> bytes:
        out = self.data[self.pos:]
        self.pos = len(self.data)
        return out


def _same_exception_class(ec: BaseException, et: BaseException) -> bool:
    """Exception classes agree: the same builtin base (IndexError, ValueError,
    TypeError, RuntimeError...). NotImplementedError counts as a RuntimeError,
    as it is one."""
    for base in (IndexError, TypeError, ValueError, NotImplementedError, RuntimeError):
        if isinstance(et, base):
            return isinstance(ec, base)
    return type(ec) is type(et)


def _compare(c: Any, t: Any, what: str, atol: float = 1e-9, rtol: float = 1e-7) -> None:
    if tuple(c.shape) != tuple(t.shape):
        raise FuzzMismatch(f"{what}: shape {tuple(c.shape)} vs torch {tuple(t.shape)}")
    if str(c.dtype).split(".")[-1] != str(t.dtype).split(".")[-1]:
        raise FuzzMismatch(f"{what}: dtype {c.dtype} vs torch {t.dtype}")
    a = np.array(c.detach().tolist(), dtype=np.float64 if c.dtype.is_floating_point else None).reshape(tuple(c.shape))
    b = t.detach().double().numpy() if t.dtype.is_floating_point else t.detach().numpy()
    if a.dtype.kind == "f" or b.dtype.kind == "f":
        ok = np.allclose(a, b, atol=atol, rtol=rtol, equal_nan=True)
    else:
        ok = np.array_equal(a, b)
    if not ok:
        raise FuzzMismatch(f"{what}: values differ\ncgrad {a}\ntorch {b}")


def _both(fc: Callable[[], Any], ft: Callable[[], Any], what: str) -> Tuple[Any, Any, bool]:
    """Run the cgrad and torch sides; (result_c, result_t, ok) where ok=False
    means both raised exceptions of the same class. One side raising alone, or
    different classes, is a mismatch."""
    ec = et = None
    rc = rt = None
    try:
        rt = ft()
    except Exception as e:  # noqa: BLE001 - the reference may raise anything
        et = e
    try:
        rc = fc()
    except (IndexError, TypeError, ValueError, RuntimeError, OverflowError, MemoryError) as e:
        ec = e
    if et is None and ec is None:
        return rc, rt, True
    if et is not None and ec is not None:
        if not _same_exception_class(ec, et):
            raise FuzzMismatch(f"{what}: cgrad raised {type(ec).__name__}({ec}) but torch {type(et).__name__}({et})")
        return None, None, False
    if ec is not None:
        raise FuzzMismatch(f"{what}: cgrad raised {type(ec).__name__}({ec}), torch did not")
    raise FuzzMismatch(f"{what}: torch raised {type(et).__name__}({et}), cgrad did not")


# ---------------------------------------------------------------- target 1: checkpoint loader

LOAD_ERRORS = (ValueError, TypeError, NotImplementedError, MemoryError, OverflowError)


def fuzz_load(data: bytes) -> None:
    """cgrad.utils.safetensors.load on arbitrary bytes: loads, or raises a clear
    error. What it loads must be readable, and a plain {name: tensor} result
    must equal what the safetensors library reads from the same bytes."""
    try:
        obj = cgrad.utils.safetensors.load(io.BytesIO(data))
    except LOAD_ERRORS as e:
        if not str(e):
            raise FuzzMismatch(f"cgrad.load raised {type(e).__name__} with an empty message") from e
        return
    tensors: List[Tuple[str, Any]] = []

    def walk(o: Any, path: str) -> None:
        if isinstance(o, cgrad.Tensor):
            tensors.append((path, o))
        elif isinstance(o, dict):
            for k, v in o.items():
                walk(v, f"{path}.{k}")
        elif isinstance(o, (list, tuple)):
            for i, v in enumerate(o):
                walk(v, f"{path}[{i}]")
    walk(obj, "")
    for _, t in tensors:
        t.tolist()  # every element readable
        (t.float() if t.dtype.is_floating_point else t).sum()
    if isinstance(obj, dict) and all(isinstance(v, cgrad.Tensor) for v in obj.values()) and not _has_structure(data):
        try:
            from safetensors.torch import load as st_load
        except ImportError:
            return
        try:
            ref = st_load(bytes(data))
        except Exception as e:  # noqa: BLE001 - the library's own error types
            if obj:
                raise FuzzMismatch(f"cgrad.load accepted a file the safetensors library rejects: {e}") from e
            return
        if set(ref) != set(obj):
            raise FuzzMismatch(f"cgrad.load keys {sorted(obj)} vs safetensors {sorted(ref)}")
        for k, v in obj.items():
            r = ref[k]
            if tuple(v.shape) != tuple(r.shape):
                raise FuzzMismatch(f"{k}: shape {tuple(v.shape)} vs safetensors {tuple(r.shape)}")
            if r.dtype in (torch.bfloat16, torch.float16):
                r = r.float()
                v = v.float()
            _compare_bits(v, r, k)


def _has_structure(data: bytes) -> bool:
    """Does the header carry cgrad's nesting (then names are not file keys)?"""
    try:
        n = struct.unpack("<Q", data[:8])[0]
        head = json.loads(data[8:8 + n])
        return isinstance(head, dict) and "cgrad.structure" in (head.get("__metadata__") or {})
    except (ValueError, struct.error, TypeError, AttributeError, RecursionError):
        return True


def _compare_bits(c: Any, t: Any, what: str) -> None:
    a = np.array(c.tolist()).reshape(tuple(c.shape))
    b = t.numpy()
    if not np.array_equal(a.astype(np.float64) if a.dtype.kind == "f" else a,
                          b.astype(np.float64) if b.dtype.kind == "f" else b, equal_nan=a.dtype.kind == "f"):
        raise FuzzMismatch(f"{what}: loaded values differ from the safetensors library's")


# ---------------------------------------------------------------- target 1b: PyTorch-format checkpoint loader

TORCH_LOAD_ERRORS = LOAD_ERRORS + (RuntimeError, EOFError, pickle.UnpicklingError)


def fuzz_load_torch(data: bytes) -> None:
    """cgrad.load (PyTorch's formats, weights_only=True) on arbitrary bytes: loads or raises a
    clear error; whatever loads can be read back (every tensor's values)."""
    try:
        obj = cgrad.load(io.BytesIO(data))
    except TORCH_LOAD_ERRORS as e:
        if not str(e):
            raise FuzzMismatch(f"cgrad.load raised {type(e).__name__} with an empty message") from e
        return

    def walk(o: Any, depth: int = 0) -> None:
        if depth > 50:
            return
        if isinstance(o, cgrad.Tensor):
            o.tolist()
        elif isinstance(o, dict):
            for v in o.values():
                walk(v, depth + 1)
        elif isinstance(o, (list, tuple)):
            for v in o:
                walk(v, depth + 1)
    walk(obj)


# ---------------------------------------------------------------- target 1c: the C checkpoint loader

def fuzz_load_c(data: bytes) -> None:
    """cg_load_safetensors (src/io/safetensors.c, through ctypes) on arbitrary bytes agrees with
    cgrad.utils.safetensors.load: both load the same tensors, or both refuse (C reads a nested
    checkpoint's cgrad.structure metadata as plain metadata, so only Python refuses a bad one)."""
    import c_checkpoints
    got, err, meta = c_checkpoints.load_bytes(data)
    try:
        ref = cgrad.utils.safetensors.load(io.BytesIO(data))
        py_err: Optional[Exception] = None
    except LOAD_ERRORS as e:
        ref, py_err = None, e
    if got is None:
        if not err:
            raise FuzzMismatch("the C loader failed with an empty message")
        if py_err is None:
            raise FuzzMismatch(f"the C loader refused a file the Python loader reads: {err}")
        return
    if py_err is not None:
        if "cgrad.structure" in str(py_err):
            return
        raise FuzzMismatch(f"the C loader read a file the Python loader refuses ({py_err})")
    if "cgrad.structure" in meta:  # Python returns the nested object built from it; C the flat tensors
        return
    if isinstance(ref, dict) and all(isinstance(k, str) and isinstance(v, cgrad.Tensor) for k, v in ref.items()):
        if sorted(ref) != sorted(got):
            raise FuzzMismatch(f"C keys {sorted(got)} vs Python {sorted(ref)}")
        for k, t in ref.items():
            if got[k][1] != tuple(t.shape) or got[k][2] != (t.contiguous()._to_bytes() if t.numel() else b""):
                raise FuzzMismatch(f"tensor {k!r}: C and Python read different values")


# ---------------------------------------------------------------- target 2: indexing

def _index_component(r: Reader, shape: Tuple[int, ...]) -> Tuple[Any, Any]:
    """One index component as (cgrad form, torch form)."""
    kind = r.int_in(0, 9)
    if kind <= 2:
        v = r.int_in(-7, 7)
        return v, v
    if kind == 3:
        def end() -> Optional[int]:
            return None if r.byte() % 4 == 0 else r.int_in(-8, 8)
        s = slice(end(), end(), r.choice([None, 1, 2, 3, 1, -1, 0]))
        return s, s
    if kind == 4:
        return None, None
    if kind == 5:
        return Ellipsis, Ellipsis
    if kind == 6:
        b = r.flag()
        return b, b
    if kind == 7:  # integer tensor (or a Python list) of any small shape, maybe out of range
        n = r.int_in(0, 4)
        vals = [r.int_in(-6, 6) for _ in range(n)]
        if n == 4 and r.flag():
            return cgrad.tensor(vals).reshape(2, 2), torch.tensor(vals).reshape(2, 2)
        if r.flag():
            return list(vals), list(vals)
        return cgrad.tensor(vals, dtype=cgrad.int64), torch.tensor(vals, dtype=torch.int64)
    if kind == 8:  # boolean mask over the next dims (maybe of the wrong size)
        k = r.int_in(0, 2)
        mshape = tuple(shape[:k]) if not r.flag() else tuple(r.int_in(0, 3) for _ in range(k))
        n = int(np.prod(mshape)) if mshape else 1
        vals = [r.flag() for _ in range(n)]
        return (cgrad.tensor(vals, dtype=cgrad.bool).reshape(mshape),
                torch.tensor(vals, dtype=torch.bool).reshape(mshape))
    v = r.int_in(-4, 4)  # a 0-d integer tensor
    return cgrad.tensor(v), torch.tensor(v)


def _decode_index(r: Reader, shape: Tuple[int, ...]) -> Tuple[Any, Any]:
    n = r.int_in(0, 4)
    pairs = [_index_component(r, shape) for _ in range(n)]
    if n == 1 and r.flag():
        return pairs[0]
    return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)


def fuzz_indexing(data: bytes) -> None:
    """x[index] and x[index] = value with a random index expression: cgrad's
    result equals PyTorch's, or both raise exceptions of the same class."""
    r = Reader(data)
    ndim = r.int_in(0, 4)
    shape = tuple(r.int_in(0, 4) for _ in range(ndim))
    dtype = r.choice(["float64", "int64", "bool", "float32"])
    n = int(np.prod(shape)) if shape else 1
    base = np.arange(n, dtype=np.float64).reshape(shape) - n // 2
    xc = cgrad.tensor(base.reshape(-1).tolist(), dtype=getattr(cgrad, dtype)).reshape(shape)
    xt = torch.tensor(base, dtype=getattr(torch, dtype))
    ic, it = _decode_index(r, shape)
    what = f"x{shape}:{dtype}[{it!r}]"
    # PyTorch checks advanced-index bounds in the kernel, which does not run
    # when the result is empty; cgrad checks them always. Only those cases differ.
    try:
        empty_in_torch = xt[it].numel() == 0
    except Exception:  # noqa: BLE001 - compared below
        empty_in_torch = False
    if empty_in_torch:
        try:
            xc[ic]
        except IndexError as e:
            if "out of bounds" in str(e):
                return
    rc, rt, ok = _both(lambda: xc[ic], lambda: xt[it], what)
    if ok:
        _compare(rc, rt, what)
    # setitem with a scalar or a tensor value (shaped like the selection, or broadcast, or wrong)
    mode = r.int_in(0, 3)
    if mode == 0:
        v = r.int_in(-3, 3)
        vc, vt = v, v
    else:
        vshape = tuple(rt.shape) if (ok and mode == 1) else tuple(r.int_in(1, 3) for _ in range(r.int_in(0, 2)))
        if mode == 3 and vshape:
            vshape = vshape[1:]
        m = int(np.prod(vshape)) if vshape else 1
        vals = (np.arange(m, dtype=np.float64) + 100).reshape(vshape)
        vc = cgrad.tensor(vals.reshape(-1).tolist(), dtype=getattr(cgrad, dtype)).reshape(vshape)
        vt = torch.tensor(vals, dtype=getattr(torch, dtype))
    yc, yt = xc.clone(), xt.clone()

    def set_c() -> Any:
        yc[ic] = vc
        return yc

    def set_t() -> Any:
        yt[it] = vt
        return yt
    what_set = f"x{shape}:{dtype}[{it!r}] = {vt if not hasattr(vt, 'shape') else tuple(vt.shape)}"
    sc, st, ok = _both(set_c, set_t, what_set)
    if ok:
        _compare(sc, st, what_set)


# ---------------------------------------------------------------- target 3: op sequences

def _leaf(lib: Any, vals: List[float], shape: Tuple[int, ...]) -> Any:
    if lib is torch:
        return torch.tensor(vals, dtype=torch.float64).reshape(shape).requires_grad_(True)
    return cgrad.tensor(vals, dtype=cgrad.float64).reshape(shape).detach().requires_grad_(True)


UNARY = ["neg", "tanh", "sin", "exp", "relu", "abs", "sigmoid", "square", "log_abs", "sqrt_abs"]
BINARY = ["add", "sub", "mul", "div", "maximum", "matmul", "cat"]
SHAPE = ["sum", "mean", "amax", "transpose", "flatten", "unsqueeze", "cumsum", "softmax", "slice"]


def _apply(lib: Any, name: str, a: Any, b: Any, dim: int) -> Any:
    F = cgrad.nn.functional if lib is cgrad else torch.nn.functional
    if name == "log_abs":
        return lib.log(lib.abs(a) + 0.5)
    if name == "sqrt_abs":
        return lib.sqrt(lib.abs(a) + 0.25)
    if name == "square":
        return a * a
    if name == "relu":
        return F.relu(a)
    if name in ("neg", "tanh", "sin", "exp", "abs", "sigmoid"):
        return getattr(lib, name)(a)
    if name == "div":
        return lib.div(a, lib.abs(b) + 0.5)
    if name in ("add", "sub", "mul", "maximum", "matmul"):
        return getattr(lib, name)(a, b)
    if name == "cat":
        return lib.cat([a, b], dim=dim)
    if name in ("sum", "mean", "amax", "cumsum", "softmax"):
        if name == "softmax":
            return F.softmax(a, dim=dim)
        return getattr(lib, name)(a, dim)
    if name == "transpose":
        return a.transpose(0, dim) if a.dim() else a.t()
    if name == "flatten":
        return a.flatten()
    if name == "unsqueeze":
        return a.unsqueeze(dim)
    if name == "slice":
        return a[..., ::2] if a.dim() else a
    raise ValueError(name)


def fuzz_ops(data: bytes) -> None:
    """A short random program over a small op vocabulary, run in cgrad and in
    PyTorch (float64): every intermediate value, the error class when one
    fails, and the gradients of the leaves after backward agree."""
    r = Reader(data)
    shapes = []
    for _ in range(2):
        nd = r.int_in(0, 3)
        shapes.append(tuple(r.int_in(1, 3) for _ in range(nd)))
    if r.flag():  # same shape for both, so that binary ops usually work
        shapes[1] = shapes[0]
    vals = [[r.value() for _ in range(int(np.prod(s)) if s else 1)] for s in shapes]
    vals = [[v if math.isfinite(v) and abs(v) < 1e6 else 1.5 for v in vs] for vs in vals]
    leaves_c = [_leaf(cgrad, v, s) for v, s in zip(vals, shapes)]
    leaves_t = [_leaf(torch, v, s) for v, s in zip(vals, shapes)]
    stack_c, stack_t = list(leaves_c), list(leaves_t)
    steps = r.int_in(1, 6)
    trace = []
    for _ in range(steps):
        name = r.choice(UNARY + BINARY + SHAPE)
        i, j = r.int_in(0, len(stack_c) - 1), r.int_in(0, len(stack_c) - 1)
        dim = r.int_in(-3, 2)
        trace.append(f"{name}(#{i}, #{j}, dim={dim})")
        what = " -> ".join(trace) + f" on shapes {shapes}"
        rc, rt, ok = _both(lambda: _apply(cgrad, name, stack_c[i], stack_c[j], dim),
                           lambda: _apply(torch, name, stack_t[i], stack_t[j], dim), what)
        if not ok:
            continue
        _compare(rc, rt, what, atol=1e-9, rtol=1e-9)
        stack_c.append(rc)
        stack_t.append(rt)
    out_c, out_t = stack_c[-1], stack_t[-1]
    if not (out_t.requires_grad and out_t.dtype.is_floating_point):
        return
    if not torch.isfinite(out_t).all():
        return
    w = [((k * 7) % 5 - 2) / 2.0 for k in range(out_t.numel())]
    lc = (out_c * cgrad.tensor(w, dtype=cgrad.float64).reshape(tuple(out_c.shape))).sum()
    lt = (out_t * torch.tensor(w, dtype=torch.float64).reshape(tuple(out_t.shape))).sum()
    lt.backward()
    lc.backward()
    for k, (a, b) in enumerate(zip(leaves_c, leaves_t)):
        what = " -> ".join(trace) + f" on shapes {shapes}: grad of leaf {k}"
        if b.grad is None:
            if a.grad is not None and np.any(np.array(a.grad.tolist())):
                raise FuzzMismatch(f"{what}: cgrad has a gradient, torch none")
            continue
        if a.grad is None:
            raise FuzzMismatch(f"{what}: torch has a gradient, cgrad none")
        _compare(a.grad, b.grad, what, atol=1e-8, rtol=1e-7)


TARGETS: Dict[str, Callable[[bytes], None]] = {
    "load": fuzz_load,
    "load_torch": fuzz_load_torch,
    "load_c": fuzz_load_c,
    "indexing": fuzz_indexing,
    "ops": fuzz_ops,
}


def seeds() -> Dict[str, List[bytes]]:
    """Small hand-made seed inputs per target."""
    st = cgrad.utils.safetensors
    buf = io.BytesIO()
    st.save({"w": cgrad.arange(6.0).reshape(2, 3), "n": cgrad.tensor([1, 2], dtype=cgrad.int32)}, buf)
    plain = buf.getvalue()
    buf = io.BytesIO()
    st.save({"model": {"a": cgrad.ones(2)}, "step": 3, "names": ["x", None]}, buf)
    nested = buf.getvalue()
    torch_zip, torch_legacy = io.BytesIO(), io.BytesIO()
    w = cgrad.arange(6.0).reshape(2, 3)
    sd = {"w": w, "row": w[1], "n": cgrad.tensor([1, 2], dtype=cgrad.int32), "step": 3}
    cgrad.save(sd, torch_zip)
    cgrad.save(sd, torch_legacy, _use_new_zipfile_serialization=False)
    header = b'{"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}'
    hand = struct.pack("<Q", len(header)) + header + struct.pack("<2f", 1.5, -2.0)
    return {
        "load": [plain, nested, hand, hand[:20], b""],
        "load_torch": [torch_zip.getvalue(), torch_legacy.getvalue(), torch_zip.getvalue()[:300], b""],
        "load_c": [plain, nested, hand, hand[:20], b""],
        "indexing": [bytes([2, 3, 4, 0, 1, 3, 1, 2, 0]), bytes([3, 2, 3, 4, 1, 2, 7, 3, 1, 2, 5, 1, 0, 1]),
                     bytes([2, 4, 4, 0, 2, 8, 1, 0, 1, 1, 0, 1, 0, 1]), bytes([1, 5, 1, 1, 5, 0, 2])],
        "ops": [bytes([2, 2, 3, 2, 2, 3, 1] + list(range(100, 124)) + [3, 0, 0, 1, 13, 1, 0, 2, 20, 2, 1, 0]),
                bytes([1, 3, 1, 2, 1] + list(range(90, 110)) + [5, 16, 0, 1, 1, 25, 1, 0, 0])],
    }
