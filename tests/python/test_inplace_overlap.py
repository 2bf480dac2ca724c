"""The memory-overlap rule of in-place ops and out= (Note [Memory overlap] in
src/core/overlap.c, docs/engine.md "Memory overlap"), against PyTorch:
a write whose input shares memory with the written tensor in another layout
raises PyTorch's RuntimeError ("... refer to a single memory location");
the same layout, disjoint views and layouts PyTorch calls "too hard" run and
give PyTorch's values. The family tests run every in-place form of the op
table (tests/python/opinfo) with its output partly overlapping an input, fully
overlapping it, disjoint from it on one storage, and written through an
expanded (internally overlapping) tensor."""
from __future__ import annotations

from typing import Any, Callable, List, Optional, Tuple

import numpy as np
import pytest
import torch

import cgrad
from opinfo import ALL_OPS
from opinfo.core import assert_close, flatten_outputs, to_lib, to_numpy

PHRASE = "single memory location"
INTERNAL = "more than one element of the written-to tensor"


def outcome(f: Callable[[], Any]) -> Tuple[str, Any]:
    """("raise", exception) or ("ok", result of f)"""
    try:
        return "ok", f()
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return "raise", e


def assert_same_outcome(what: str, t: Tuple[str, Any], c: Tuple[str, Any], values: bool = True,
                        atol: float = 1e-5, rtol: float = 1.3e-6) -> None:
    """Both raise the same class (with PyTorch's overlap phrase when it gave
    one), or both run and give the same arrays."""
    if t[0] == "raise":
        assert c[0] == "raise", f"{what}: PyTorch raises {type(t[1]).__name__}: {t[1]}; cgrad runs"
        if PHRASE in str(t[1]):
            assert isinstance(c[1], RuntimeError) and PHRASE in str(c[1]), f"{what}: cgrad raised {c[1]!r}"
        return
    assert c[0] == "ok", f"{what}: PyTorch runs; cgrad raises {type(c[1]).__name__}: {c[1]}"
    if values:
        for a, b in zip(t[1], c[1]):
            assert_close(to_numpy(b), to_numpy(a), atol, rtol, what)


# ---------------------------------------------------------------- (a) the reported cases

def _base(L: Any) -> Any:
    return L.arange(16.0).reshape(4, 4)


REPORTED = {
    "a.add_(a.t())": lambda L: (lambda a: a.add_(a.t()))(_base(L)),
    "b.copy_(b.t())": lambda L: (lambda a: a.copy_(a.t()))(_base(L)),
    "x[1:] += x[:-1]": lambda L: (lambda x: x[1:].__iadd__(x[:-1]))(L.arange(8.0)),
    "a.mul_(a.t())": lambda L: (lambda a: a.mul_(a.t()))(_base(L)),
    "a[:] = a.t()": lambda L: (lambda a: a.__setitem__(slice(None), a.t()))(_base(L)),
}


@pytest.mark.parametrize("name", list(REPORTED))
def test_reported_cases_raise_like_torch(name: str) -> None:
    for L in (torch, cgrad):
        with pytest.raises(RuntimeError, match=PHRASE):
            REPORTED[name](L)


def test_augmented_assignment_setitem_form() -> None:
    """x[1:] += x[:-1] as Python runs it (getitem, iadd, setitem)"""
    for L in (torch, cgrad):
        x = L.arange(8.0)
        with pytest.raises(RuntimeError, match=PHRASE):
            x[1:] += x[:-1]
        assert x.tolist() == list(map(float, range(8))), "the failed op wrote into x"


# ---------------------------------------------------------------- (e) no false positives, (d) expanded, more layouts

def _run_pair(build: Callable[[Any], Any]) -> Tuple[Tuple[str, Any], Tuple[str, Any]]:
    def go(L: Any) -> Tuple[str, Any]:
        st, r = outcome(lambda: build(L))
        return (st, [r] if st == "ok" else r)
    return go(torch), go(cgrad)


LAYOUTS = {
    # no overlap / full overlap: run, PyTorch's values
    "a[0].add_(a[1])": lambda L: (lambda a: (a[0].add_(a[1]), a)[1])(_base(L)),
    "a.add_(a)": lambda L: (lambda a: a.add_(a))(_base(L)),
    "a.add_(a.view(4, 4))": lambda L: (lambda a: a.add_(a.view(4, 4)))(_base(L)),
    "a.t().add_(a.t())": lambda L: (lambda a: (a.t().add_(a.t()), a)[1])(_base(L)),
    "a[:, ::2].add_(a[:, ::2])": lambda L: (lambda a: (a[:, ::2].add_(a[:, ::2]), a)[1])(_base(L)),
    "a[:, ::2].mul_(a[:, ::2].clone())": lambda L: (lambda a: (a[:, ::2].mul_(a[:, ::2].clone()), a)[1])(_base(L)),
    "x[::2] += x[1::2] (too hard, disjoint)": lambda L: (lambda x: (x[::2].add_(x[1::2]), x)[1])(L.arange(8.0)),
    "a[1:].add_(a[0]) (broadcast, disjoint)": lambda L: (lambda a: (a[1:].add_(a[0]), a)[1])(_base(L)),
    "a[1] = a[0]": lambda L: (lambda a: (a.__setitem__(1, a[0]), a)[1])(_base(L)),
    "a[1] = a[1]": lambda L: (lambda a: (a.__setitem__(1, a[1]), a)[1])(_base(L)),
    "a[3:] -= 1 (setitem of the same view)": lambda L: (lambda a: (a.__setitem__(slice(3, None), a[3:].sub_(1)), a)[1])(
        _base(L)),
    "a[3:] = a[3] (broadcast)": lambda L: (lambda a: (a.__setitem__(slice(3, None), a[3]), a)[1])(_base(L)),
    "a[:] = a[0] (broadcast, overlapping)": lambda L: (lambda a: (a.__setitem__(slice(None), a[0]), a)[1])(_base(L)),
    "a[:] = a[0, 0] (0-d)": lambda L: (lambda a: (a.__setitem__(slice(None), a[0, 0]), a)[1])(_base(L)),
    "a[0] = a[1:2]": lambda L: (lambda a: (a.__setitem__(0, a[1:2]), a)[1])(_base(L)),
    "a.copy_(a)": lambda L: (lambda a: a.copy_(a))(_base(L)),
    "a[1:].copy_(a[0])": lambda L: (lambda a: (a[1:].copy_(a[0]), a)[1])(_base(L)),
    "a.view(int32).add_(a.view(int32))": lambda L: (lambda a: (a.view(L.int32).add_(a.view(L.int32)), a)[1])(_base(L)),
    "a.view(int32).copy_(a) (full, other dtype)": lambda L: (lambda a: (a.view(L.int32).copy_(a), a)[1])(_base(L)),
    "a[a > 3] = a[0, 0] (masked fill)": lambda L: (lambda a: (a.__setitem__(a > 3, a[0, 0]), a)[1])(_base(L)),
    "a.masked_fill_(a > 3, a[0, 0])": lambda L: (lambda a: a.masked_fill_(a > 3, a[0, 0]))(_base(L)),
    "a.index_fill_(0, i, a[0, 0])": lambda L: (lambda a: a.index_fill_(0, L.tensor([1, 2]), a[0, 0]))(_base(L)),
    "a.addmm_(a.t(), a) (products: computed apart)": lambda L: (lambda a: a.addmm_(a.t(), a))(_base(L)),
    "a.add_(b) empty views": lambda L: (lambda a: (a[:0].add_(a[:0]), a)[1])(_base(L)),
    # partial overlap: raise
    "a.add_(a[0]) (broadcast, overlapping)": lambda L: (lambda a: a.add_(a[0]))(_base(L)),
    "a.add_(a[0, 0]) (0-d view)": lambda L: (lambda a: a.add_(a[0, 0]))(_base(L)),
    "a.t().add_(a)": lambda L: (lambda a: a.t().add_(a))(_base(L)),
    "a.unsqueeze(0).add_(a) (other strides)": lambda L: (lambda a: a.unsqueeze(0).add_(a))(_base(L)),
    "a.add_(a.t(), alpha=2)": lambda L: (lambda a: a.add_(a.t(), alpha=2))(_base(L)),
    "a.sub_(a.t(), alpha=0)": lambda L: (lambda a: a.sub_(a.t(), alpha=0))(_base(L)),
    "a += a.t() (int)": lambda L: (lambda a: a.__iadd__(a.t()))(L.arange(16).reshape(4, 4)),
    "a.add_(a.view(int32).t()) (promoted, cast)": lambda L: (lambda a: a.add_(a.view(L.int32).t()))(_base(L)),
    "a.pow_(a.t())": lambda L: (lambda a: a.pow_(a.t()))(_base(L)),
    "a.lerp_(a.t(), 0.5)": lambda L: (lambda a: a.lerp_(a.t(), 0.5))(_base(L)),
    "a.addcmul_(a.t(), a)": lambda L: (lambda a: a.addcmul_(a.t(), a))(_base(L)),
    "a.clamp_(min=a.t())": lambda L: (lambda a: a.clamp_(min=a.t()))(_base(L)),
    "a.copy_(a[0])": lambda L: (lambda a: a.copy_(a[0]))(_base(L)),
    "a[1:] = a[:-1]": lambda L: (lambda a: a.__setitem__(slice(1, None), a[:-1]))(_base(L)),
    "a[[0, 1]] = a[2] (index_put)": lambda L: (lambda a: a.__setitem__([0, 1], a[2]))(_base(L)),
    "a.index_put_((i,), a[0], accumulate=True)":
        lambda L: (lambda a: a.index_put_((L.tensor([0, 1]),), a[0], accumulate=True))(_base(L)),
    "a.index_put_((i,), a) (full overlap refused)":
        lambda L: (lambda a: a.index_put_((L.tensor([0, 1, 2, 3]),), a))(_base(L)),
    "a.scatter_(0, i, a.t())": lambda L: (lambda a: a.scatter_(0, L.zeros(4, 4, dtype=L.int64), a.t()))(_base(L)),
    "a.scatter_add_(0, i, a) (full overlap refused)":
        lambda L: (lambda a: a.scatter_add_(0, L.zeros(4, 4, dtype=L.int64), a))(_base(L)),
    "a.index_add_(0, i, a) (full overlap refused)": lambda L: (lambda a: a.index_add_(0, L.arange(4), a))(_base(L)),
    "a.index_add_(0, i, a, alpha=2)": lambda L: (lambda a: a.index_add_(0, L.arange(4), a, alpha=2))(_base(L)),
    "a.index_copy_(0, i, a.t())": lambda L: (lambda a: a.index_copy_(0, L.arange(4), a.t()))(_base(L)),
    # internal overlap of the written tensor
    "zeros(3).expand(3, 3).add_(1)": lambda L: L.zeros(3).expand(3, 3).add_(1),
    "zeros(3).expand(3, 3).copy_(ones)": lambda L: L.zeros(3).expand(3, 3).copy_(L.ones(3, 3)),
    "zeros(3).expand(3, 3).uniform_()": lambda L: L.zeros(3).expand(3, 3).uniform_(),
    "zeros(3).expand(3, 3).fill_(1)": lambda L: (lambda z: (z.expand(3, 3).fill_(1), z)[1])(L.zeros(3)),
    "zeros(3).expand(3, 3).zero_()": lambda L: (lambda z: (z.expand(3, 3).zero_(), z)[1])(L.ones(3)),
    # grad mode: the check comes first, whatever path autograd takes
    "(w * 1).add_((w * 1).t()) under autograd": lambda L: (lambda w: (lambda a: a.add_(a.t()))(w * 1))(
        L.ones(3, 3, requires_grad=True)),
    "(w * 1).copy_((w * 1).t()) under autograd": lambda L: (lambda w: (lambda a: a.copy_(a.t()))(w * 1))(
        L.ones(3, 3, requires_grad=True)),
}


# PyTorch's in-place product reads operands it is overwriting, so its values
# depend on its BLAS path (the CPU's ISA); cgrad computes the product apart:
# the right value is the out-of-place one.
STATED = {
    "a.addmm_(a.t(), a) (products: computed apart)": lambda: (lambda a: torch.addmm(a, a.t(), a))(_base(torch)),
}


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_layouts_match_torch(name: str) -> None:
    t, c = _run_pair(LAYOUTS[name])
    if name in STATED:
        t = ("ok", [STATED[name]()])
    assert_same_outcome(name, t, c, values="uniform" not in name)


def test_refused_write_leaves_the_tensor_alone() -> None:
    a = cgrad.arange(16.0).reshape(4, 4)
    for f in (lambda: a.add_(a.t()), lambda: a.copy_(a.t()), lambda: a.index_add_(0, cgrad.arange(4), a)):
        v = a._version
        with pytest.raises(RuntimeError, match=PHRASE):
            f()
        assert a.tolist() == [[4.0 * i + j for j in range(4)] for i in range(4)]
        assert a._version == v


def test_message_names_the_op() -> None:
    a = cgrad.arange(16.0).reshape(4, 4)
    for name, f in (("add_", lambda: a.add_(a.t())), ("copy_", lambda: a.copy_(a.t())),
                    ("lerp_", lambda: a.lerp_(a.t(), 0.5)), ("index_put_", lambda: a.__setitem__([0], a[1:2]))):
        with pytest.raises(RuntimeError, match=PHRASE) as ei:
            f()
        assert name in str(ei.value), (name, str(ei.value))


# ---------------------------------------------------------------- (b) the op table, every in-place form

def _inplace_name(op: Any, L: Any) -> str:
    return (op.torch_name if (op.torch_name and L is torch) else op.name) + "_"


def _candidates() -> List[Any]:
    seen, out = set(), []
    for op in ALL_OPS:
        if op.nondeterministic_values or not op.method:
            continue
        names = (_inplace_name(op, torch), _inplace_name(op, cgrad))
        if not (hasattr(torch.Tensor, names[0]) and hasattr(cgrad.Tensor, names[1])):
            continue
        key = (op.name, tuple(op.dtypes))
        if key in seen:
            continue
        seen.add(key)
        out.append(op)
    return out


INPLACE_OPS = _candidates()


def _dtype(op: Any) -> str:
    for d in ("float32", "float64"):
        if d in op.dtypes:
            return d
    return op.dtypes[0]


def _samples(op: Any) -> List[Any]:
    """samples whose first argument can be written in place in both libraries"""
    good = []
    for s in op.sample_fn(_dtype(op)):
        if s.noncontig or not s.args or not isinstance(s.args[0], np.ndarray):
            continue
        x = s.args[0]
        if x.ndim < 1 or x.shape[0] < 2 or x.size < 2:
            continue

        def base(L: Any) -> Any:
            args = [to_lib(L, a, False, False) for a in s.args]
            return getattr(args[0], _inplace_name(op, L))(*args[1:], **s.kwargs)
        t, c = outcome(lambda: base(torch)), outcome(lambda: base(cgrad))
        if t[0] == "ok" and c[0] == "ok" and hasattr(t[1], "shape") and tuple(t[1].shape) == x.shape:
            good.append(s)
    return good[:3]


def _aliasable(s: Any) -> List[int]:
    x = s.args[0]
    return [j for j, a in enumerate(s.args) if j and isinstance(a, np.ndarray) and a.shape == x.shape
            and a.dtype == x.dtype]


def _same_dtype(s: Any) -> List[int]:
    x = s.args[0]
    return [j for j, a in enumerate(s.args) if j and isinstance(a, np.ndarray) and a.dtype == x.dtype and a.size]


def _scenario(op: Any, s: Any, kind: str, j: Optional[int], apart: bool = False) -> Callable[[Any], Any]:
    """lib -> the tensors to compare (the written storage's base) after
    self.<op>_(...); apart: input j is a copy (the values of the op computed
    apart from the write)"""
    x = s.args[0]

    def run(L: Any) -> List[Any]:
        args = [to_lib(L, a, False, False) for a in s.args]
        dt = args[0].dtype
        if kind == "partial":    # self = base[1:], input j = base[:-1]
            base = L.tensor(np.concatenate([s.args[j][:1], x]).tolist(), dtype=dt)
            args[0], args[j] = base[1:], base[:-1]
        elif kind == "shifted":  # any shapes: self and input j are one storage, one element apart
            y = s.args[j]
            vals = np.concatenate([y.ravel()[:1], x.ravel(), y.ravel()])[:max(x.size, 1 + y.size)]
            base = L.tensor(vals.tolist(), dtype=dt)
            args[0], args[j] = base[:x.size].view(*x.shape), base[1:1 + y.size].view(*y.shape)
        elif kind == "transposed":  # self = base, input j = base.t() (same range, other strides)
            base = L.tensor(x.tolist(), dtype=dt)
            args[0], args[j] = base, base.transpose(0, 1)
        elif kind == "same":     # the same tensor
            base = args[0]
            args[j] = base
        elif kind == "same_layout":  # another view with the same layout
            base = args[0]
            args[j] = base.view(tuple(base.shape))
        elif kind == "disjoint":  # two halves of one storage
            base = L.tensor(np.stack([x, s.args[j]]).tolist(), dtype=dt)
            args[0], args[j] = base[0], base[1]
        elif kind == "expanded":  # self written through a stride-0 dim
            base = L.tensor(x[:1].tolist(), dtype=dt)
            args[0] = base.expand(*x.shape)
        if apart and j is not None:
            args[j] = args[j].clone()
        getattr(args[0], _inplace_name(op, L))(*args[1:], **s.kwargs)
        return [base]
    return run


def _applicable(op: Any, kind: str) -> bool:
    for s in _samples(op):
        if kind == "expanded":
            return True
        if kind == "shifted" and _same_dtype(s):
            return True
        for _ in _aliasable(s):
            if kind != "transposed" or (s.args[0].ndim == 2 and s.args[0].shape[0] == s.args[0].shape[1]):
                return True
    return False


VIEW_INPLACE = {"t", "transpose", "swapdims", "swapaxes", "squeeze", "unsqueeze", "as_strided"}  # geometry only
KINDS = ("partial", "shifted", "transposed", "same", "same_layout", "disjoint", "expanded")
FAMILY = [(op, kind) for op in INPLACE_OPS for kind in KINDS if _applicable(op, kind)]


def test_family_covers_the_table() -> None:
    names = {op.name for op, kind in FAMILY if kind in ("partial", "shifted")} | {"abs", "exp", "masked_fill"}
    assert {op.name for op, kind in FAMILY if kind == "expanded"} >= {"abs", "exp", "add", "tril"}
    for must in ("add", "mul", "sub", "div", "pow", "lerp", "addcmul", "abs", "exp", "masked_fill",
                 "scatter", "scatter_add", "index_add", "index_copy", "addmm"):
        assert must in names, f"{must}_ is missing from the in-place family"


@pytest.mark.filterwarnings("ignore:Use of .* on expanded tensors is deprecated")
@pytest.mark.parametrize("case", FAMILY, ids=lambda c: f"{c[0].name}-{c[1]}")
def test_inplace_family_matches_torch(case: Tuple[Any, str]) -> None:
    op, kind = case
    ran = 0
    for s in _samples(op):
        js: List[Optional[int]] = ([None] if kind == "expanded" else _same_dtype(s) if kind == "shifted"
                                   else _aliasable(s))
        for j in js:
            if kind == "transposed" and (s.args[0].ndim != 2 or s.args[0].shape[0] != s.args[0].shape[1]):
                continue
            f = _scenario(op, s, kind, j)
            t, c = outcome(lambda: f(torch)), outcome(lambda: f(cgrad))
            what = f"{op.name}_ {kind} (arg {j}) {s}"
            if kind == "expanded" and t[0] == "ok" and op.name in VIEW_INPLACE:
                # an in-place view op changes the geometry only, writing no element: it runs on an
                # expanded tensor, as in PyTorch
                assert c[0] == "ok", f"{what}: PyTorch runs; cgrad raises {c[1]!r}"
            elif kind == "expanded" and t[0] == "ok":
                # PyTorch writes through the stride-0 dim of some ops (tril_, masked_fill_ and index_fill_
                # with a deprecation warning, baddbmm_), with values that depend on its loop order; cgrad
                # refuses internal overlap for every op but fill_ / zero_ (docs/engine.md, Memory overlap)
                assert c[0] == "raise" and INTERNAL in str(c[1]), f"{what}: cgrad gave {c[1]!r}"
            elif kind in ("shifted", "transposed") and t[0] == "ok":
                # an op PyTorch does not check (products, masked_scatter_): its loop may read what it
                # wrote; cgrad computes such ops apart, so its values are those of the inputs as given
                assert c[0] == "ok", f"{what}: PyTorch runs; cgrad raises {c[1]!r}"
                want = _scenario(op, s, kind, j, apart=True)(torch)
                assert_close(to_numpy(c[1][0]), to_numpy(want[0]), op.atol, op.rtol, what)
            else:
                assert_same_outcome(what, t, c, values=kind != "expanded", atol=op.atol, rtol=op.rtol)
            if kind == "partial":
                assert t[0] == "raise", f"{op.name}_: PyTorch ran a partial overlap; the test's premise is wrong"
            ran += 1
    assert ran, f"{op.name}_ {kind}: no scenario ran"


# ---------------------------------------------------------------- (c) out= follows the same rule

OUT_OPS = {
    # elementwise: identical out allowed, partial refused
    "add": (lambda L, a, b, out: L.add(a, b, out=out), True),
    "mul": (lambda L, a, b, out: L.mul(a, b, out=out), True),
    "atan2": (lambda L, a, b, out: L.atan2(a, b, out=out), True),
    "exp": (lambda L, a, b, out: L.exp(a, out=out), True),
    "where": (lambda L, a, b, out: L.where(a > 3, a, b, out=out), True),
    "clamp": (lambda L, a, b, out: L.clamp(a, min=b, out=out), True),
    "lerp": (lambda L, a, b, out: L.lerp(a, b, 0.5, out=out), True),
    # cat: any aliasing refused
    "cat": (lambda L, a, b, out: L.cat([a, b], out=out), False),
    # products and reductions: computed apart, never refused
    "mm": (lambda L, a, b, out: L.mm(a, b, out=out), None),
    "sum": (lambda L, a, b, out: L.sum(a, 0, keepdim=True, out=out), None),
}


@pytest.mark.parametrize("name", list(OUT_OPS))
@pytest.mark.parametrize("layout", ["out_is_input", "out_is_transposed_input", "out_is_shifted_input",
                                    "out_disjoint", "out_expanded"])
def test_out_follows_the_rule(name: str, layout: str) -> None:
    fn, _ = OUT_OPS[name]

    def run(L: Any, apart: bool = False) -> List[Any]:
        """apart: the inputs are copies (the value out= must get)"""
        base = L.arange(32.0).reshape(8, 4) / 8
        a, b = base[:4], base[4:]
        if layout == "out_is_input":
            out = a
        elif layout == "out_is_transposed_input":
            a = base[:4]
            out = a.t()
        elif layout == "out_is_shifted_input":
            out = base[1:5]
        elif layout == "out_disjoint":
            out = base[4:]
            b = base[4:].clone()
        else:
            out = L.zeros(4).expand(4, 4)
        if name == "cat":
            out = base if layout == "out_is_input" else (L.zeros(1).expand(8, 4) if layout == "out_expanded" else
                                                         base[:, :].t().t())
            a, b = base[:4], base[4:]
            if layout in ("out_is_transposed_input", "out_is_shifted_input"):
                a, b = base[1:5], base[2:6]
            if layout == "out_disjoint":
                a, b = base[:4].clone(), base[4:].clone()
        if name == "sum":
            out = {"out_is_input": a[:1], "out_is_transposed_input": a.t()[:1],
                   "out_is_shifted_input": base[1:2], "out_disjoint": base[7:8],
                   "out_expanded": L.zeros(1).expand(1, 4)}[layout]
        if apart:
            a, b = a.clone(), b.clone()
        fn(L, a, b, out)
        return [base]
    t, c = _run_pair(run)
    c = (c[0], c[1][0] if c[0] == "ok" else c[1])
    t = (t[0], t[1][0] if t[0] == "ok" else t[1])
    if layout == "out_expanded":
        # cgrad refuses out= with internal overlap for every op (docs/python.md); PyTorch for most
        assert c[0] == "raise" and INTERNAL in str(c[1])
        return
    if OUT_OPS[name][1] is None and t[0] == "ok":
        # not checked: cgrad computes the result before copying it into out, so it is the value
        # computed from the untouched inputs even where PyTorch's loop reads what it wrote
        assert c[0] == "ok", f"{name} out= {layout}: cgrad raised {c[1]!r}"

        want = run(torch, apart=True)[0]
        assert_close(to_numpy(c[1][0]), to_numpy(want), 1e-5, 1e-6, f"{name} out= {layout}")
        return
    assert_same_outcome(f"{name} out= {layout}", t, c)


# ---------------------------------------------------------------- the check costs O(ndim), not O(numel)

def test_overlap_check_is_per_call_not_per_element() -> None:
    """A refused call on a large tensor costs about as much as one on a small
    one: the check looks at layouts, never at elements."""
    import time

    a = cgrad.zeros(1 << 20)
    t0 = time.perf_counter()
    for _ in range(100):
        with pytest.raises(RuntimeError):
            a[1:].add_(a[:-1])
    per_call = (time.perf_counter() - t0) / 100
    assert per_call < 2e-3, f"a refused add_ on 1M elements took {per_call * 1e6:.0f} us: the check touches elements"
