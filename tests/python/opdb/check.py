"""One op_db entry, run in the current process (`run_entry`): for each of
its samples in the chosen dtypes, PyTorch's result against cgrad's (values,
dtypes, shapes, the structure of tuples), the input gradients of float64
samples against PyTorch's for a random output gradient (against central
differences where op_db marks PyTorch's own gradient wrong), the second
gradients of the first GRADGRAD_SAMPLES samples (all of them with reference
inputs) where the entry supports gradgrad, and each error input, which must
raise in cgrad as it raises in PyTorch (the same exception type). Tied
indices and seed-dependent results are compared as PyTorch specifies them.

The record counts every check by outcome and keeps the first few failure
messages. Samples PyTorch itself cannot run are skipped; samples carrying a
value cgrad has no counterpart for in scope (a sparse tensor, a Generator)
are counted as unsupported."""
from __future__ import annotations

import collections
import types
import warnings
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch

import cgrad
from .convert import Unsupported, flatten, shared_storages, tensor_to_torch, to_cgrad, to_torch
from .resolve import Missing, _rebind, exclusion, op_id, real_dtypes, resolve

# Entries whose values are undefined (uninitialised memory): only dtypes and shapes are compared.
UNDEFINED_VALUES = {"empty", "empty_like", "new_empty", "new_empty_strided", "empty_strided", "empty_permuted"}

# (values, indices) results whose indices PyTorch leaves unspecified among equal values: the entry's
# dim from (args, kwargs) and whether the indices keep the reduced dim. Indices that pick the same
# values are right.
def _arg(i: int, name: str, default: Any) -> Any:
    return lambda args, kwargs: args[i] if len(args) > i else kwargs.get(name, default)


TIED_INDICES = {"topk": (_arg(1, "dim", -1), True), "sort": (_arg(0, "dim", -1), True),
                "kthvalue": (_arg(1, "dim", -1), False), "mode": (_arg(0, "dim", -1), False),
                "median": (_arg(0, "dim", None), False), "nanmedian": (_arg(0, "dim", None), False)}

TOLERANCE = {torch.float16: (1e-3, 1e-3), torch.bfloat16: (1.6e-2, 1e-2), torch.float32: (1e-4, 5e-5),
             torch.float64: (1e-7, 1e-7)}
GRAD_TOLERANCE = (1e-6, 1e-6)  # float64 gradients: formulas may differ in rounding order
KEEP_MESSAGES = 4
GRADGRAD_SAMPLES = 4  # second gradients of the first few float64 samples of an entry (all of them with reference)


class _Failure(Exception):
    pass


def _compare(exp: Any, got: Any, values: bool, where: str = "result") -> None:
    """Raise _Failure naming the first difference between torch's exp and cgrad's got."""
    if isinstance(exp, torch.Tensor):
        if not isinstance(got, cgrad.Tensor):
            raise _Failure(f"{where}: torch gives a Tensor, cgrad a {type(got).__name__}")
        g = tensor_to_torch(got)
        if g.dtype != exp.dtype:
            raise _Failure(f"{where}: dtype {g.dtype}, torch {exp.dtype}")
        if g.shape != exp.shape:
            raise _Failure(f"{where}: shape {tuple(g.shape)}, torch {tuple(exp.shape)}")
        if values and exp.numel():
            rtol, atol = TOLERANCE.get(exp.dtype, (0, 0))
            try:
                torch.testing.assert_close(g, exp.detach(), rtol=rtol, atol=atol, equal_nan=True, check_stride=False)
            except AssertionError as e:
                lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
                raise _Failure(f"{where}: " + " ".join(lines[:3])) from None
        return
    if isinstance(exp, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(exp):
            raise _Failure(f"{where}: torch gives a {type(exp).__name__} of {len(exp)}, cgrad {type(got).__name__}"
                           f"{' of %d' % len(got) if isinstance(got, (tuple, list)) else ''}")
        for i, (e, g) in enumerate(zip(exp, got)):
            _compare(e, g, values, f"{where}[{i}]")
        return
    got = to_torch(got)
    if isinstance(exp, bool) or isinstance(got, bool):
        ok = type(got) is type(exp) and got == exp
    elif isinstance(exp, (int, float)):
        ok = isinstance(got, (int, float)) and type(got) is type(exp) and \
            (not values or got == exp or (np.isnan(got) and np.isnan(exp)) or abs(got - exp) <= 1e-6 * max(1, abs(exp)))
    else:
        ok = got == exp
    if not ok:
        raise _Failure(f"{where}: {got!r} ({type(got).__name__}), torch {exp!r} ({type(exp).__name__})")


def _same(a: Any, b: Any) -> bool:
    """Are two torch results identical (NaN equal to NaN)?"""
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype and \
            bool(torch.eq(a, b).logical_or(a.ne(a).logical_and(b.ne(b))).all()) if a.numel() else \
            isinstance(b, torch.Tensor) and a.shape == b.shape
    if isinstance(a, (tuple, list)):
        return isinstance(b, (tuple, list)) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b or (a != a and b != b)


def _snapshot(v: Any) -> Any:
    if isinstance(v, torch.Tensor):
        return v.detach().clone()
    if isinstance(v, (tuple, list)):
        return [_snapshot(x) for x in v]
    return v


def _is_random(op: Any, s: Any, exp: Any) -> bool:
    """Does torch's answer for this sample change with the seed? (op_db's wrapper_set_seed seeds 42
    itself, so manual_seed is shifted for the second run.)"""
    exp = _snapshot(exp)  # an in-place op returns its input, which the second run overwrites
    real = torch.manual_seed
    for shift in (1, 2):  # two other seeds: a few random draws can agree for one
        torch.manual_seed = lambda seed: real(seed + shift)  # type: ignore[assignment]
        try:
            torch.manual_seed(0)
            other = op(s.input, *s.args, **s.kwargs)
        except Exception:  # noqa: BLE001 - a seed-dependent failure is randomness too
            return True
        finally:
            torch.manual_seed = real  # type: ignore[assignment]
        if not _same(exp, other):
            return True
    return False


def _same_values_at(op: Any, s: Any, exp: Any, got: Any) -> bool:
    """Do cgrad's indices pick torch's values where the two index results differ (ties)?"""
    if not (isinstance(exp, tuple) and len(exp) == 2 and isinstance(got, tuple) and len(got) == 2):
        return False
    try:
        _compare(exp[0], got[0], True)
        _compare(exp[1], got[1], False)
    except _Failure:
        return False
    dim_of, keep = TIED_INDICES[op.name]
    keepdim = keep or bool(s.kwargs.get("keepdim", s.args[-1] if s.args and isinstance(s.args[-1], bool) else False))
    dim = dim_of(tuple(s.args), s.kwargs)
    if dim is None:
        return False
    idx = tensor_to_torch(got[1])
    x = s.input.detach()
    if x.dim() == 0:
        return bool((idx == 0).all())
    picked = torch.gather(x, dim, idx if keepdim else idx.unsqueeze(dim))
    return _same(picked if keepdim else picked.squeeze(dim), exp[0].detach())


def _process(fn: Any) -> Any:
    if isinstance(fn, types.FunctionType) and (fn.__name__ == "<lambda>" or fn.__module__.startswith("torch.testing")):
        return _rebind(fn)
    return fn


def _grad_outputs(outs: Sequence[torch.Tensor], seed: int) -> Tuple[List[torch.Tensor], List[Any]]:
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(tuple(o.shape)) for o in outs]
    return ([torch.tensor(a, dtype=o.dtype) for a, o in zip(arrays, outs)],
            [cgrad.tensor(a, dtype=getattr(cgrad, str(o.dtype).split(".")[-1])) for a, o in zip(arrays, outs)])


def _differentiable(t_res: Any, c_res: Any) -> Tuple[List[torch.Tensor], List[Any]]:
    """The float outputs torch differentiates, and cgrad's at the same places."""
    tf, cf = flatten(t_res), flatten(c_res)
    if len(tf) != len(cf):
        raise _Failure(f"gradient: {len(cf)} outputs, torch {len(tf)}")
    t_outs, c_outs = [], []
    for i, (t, c) in enumerate(zip(tf, cf)):
        if isinstance(t, torch.Tensor) and t.requires_grad:
            if not (isinstance(c, cgrad.Tensor) and c.requires_grad):
                raise _Failure(f"gradient: output {i} does not require grad in cgrad")
            t_outs.append(t)
            c_outs.append(c)
    return t_outs, c_outs


def _compare_grads(tg: Sequence[Optional[torch.Tensor]], cg: Sequence[Any], what: str) -> None:
    for i, (t, c) in enumerate(zip(tg, cg)):
        if t is None and c is None:
            continue
        tt = t.detach() if t is not None else None
        cc = tensor_to_torch(c) if c is not None else None
        if tt is None:
            tt = torch.zeros_like(cc)
        if cc is None:
            cc = torch.zeros_like(tt)
        if cc.shape != tt.shape:
            raise _Failure(f"{what} of input {i}: shape {tuple(cc.shape)}, torch {tuple(tt.shape)}")
        try:
            torch.testing.assert_close(cc.to(tt.dtype), tt, rtol=GRAD_TOLERANCE[0], atol=GRAD_TOLERANCE[1],
                                       equal_nan=True, check_stride=False)
        except AssertionError as e:
            lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
            raise _Failure(f"{what} of input {i}: " + " ".join(lines[:3])) from None


def _untracked_leaf_rerun(op: Any, s: Any, t_in: List[torch.Tensor], tg: Sequence[Optional[torch.Tensor]]
                          ) -> Tuple[List[torch.Tensor], List[torch.Tensor]]:
    """Note [Untracked leaf views]: some reference samples hand PyTorch a leaf that is a view with
    overlapping memory (an as_strided of a tensor modified in place); PyTorch's graph has no edge to it
    (its gradient is None), while cgrad differentiates it element by element. PyTorch's gradients for
    such a sample are taken on contiguous copies of those inputs holding the same elements, the op run
    again: the differentiable outputs and the inputs of that run."""
    swap = {id(t): t.detach().clone().requires_grad_(True) for t, g in zip(t_in, tg) if g is None}

    def sub(v: Any) -> Any:
        if isinstance(v, torch.Tensor):
            return swap.get(id(v), v)
        if isinstance(v, (list, tuple)):
            return type(v)(sub(x) for x in v)
        if isinstance(v, dict):
            return {k: sub(x) for k, x in v.items()}
        return v

    torch.manual_seed(0)
    res = s.output_process_fn_grad(op(sub(s.input), *sub(tuple(s.args)), **sub(dict(s.kwargs))))
    return [o for o in flatten(res) if isinstance(o, torch.Tensor) and o.requires_grad], [swap.get(id(t), t) for t in t_in]


def _torch_grad_wrong(op: Any, test: str = "test_fn_grad") -> bool:
    """Does op_db itself mark PyTorch's backward of this entry as wrong (an expected failure of
    TestBwdGradients.test_fn_grad / test_fn_gradgrad)? Then cgrad's gradient is checked against finite
    differences, and its second gradient is not compared."""
    for d in list(op.skips) + list(op.decorators):
        if getattr(d, "cls_name", None) == "TestBwdGradients" and getattr(d, "test_name", None) == test \
                and getattr(d, "device_type", None) in (None, "cpu") \
                and any(getattr(f, "__name__", "") == "expectedFailure" for f in getattr(d, "decorators", ())):
            return True
    return False


def _finite_difference_check(op: Any, s: Any, leaves: List[Tuple[torch.Tensor, Any]], cg: Sequence[Any],
                             c_go: Sequence[Any], eps: float = 1e-6) -> None:
    """<grad_output, J v> by central differences of cgrad's own forward, against sum(grad_i . v_i)."""
    rng = np.random.default_rng(3)
    dirs = [torch.tensor(rng.standard_normal(tuple(t.shape)), dtype=t.dtype) * (t.dtype == torch.float64)
            for t, _ in leaves]  # float64 inputs only: a step of eps is lost in float32 rounding
    go = [tensor_to_torch(g) for g in c_go]

    def run(sign: float) -> float:
        with torch.no_grad():
            for (t, _), v in zip(leaves, dirs):
                t.add_(sign * eps * v)
        try:
            memo = shared_storages(s.input, s.args, s.kwargs)
            c = [to_cgrad(x, [], memo) for x in (s.input, tuple(s.args), dict(s.kwargs))]
            with cgrad.no_grad():
                res = _process(s.output_process_fn_grad)(resolve(op)(c[0], *c[1], **c[2]))
        finally:
            with torch.no_grad():
                for (t, _), v in zip(leaves, dirs):
                    t.sub_(sign * eps * v)
        outs = [o for o in flatten(res) if isinstance(o, cgrad.Tensor) and o.dtype.is_floating_point]
        return sum(float((tensor_to_torch(o) * g).sum()) for o, g in zip(outs, go))
    numeric = (run(1.0) - run(-1.0)) / (2 * eps)
    analytic = sum(float((tensor_to_torch(g) * v).sum()) for g, v in zip(cg, dirs) if g is not None)
    if abs(numeric - analytic) > 1e-5 * max(1.0, abs(numeric)):
        raise _Failure(f"gradient: finite differences give {numeric}, cgrad's gradient {analytic} "
                       "(PyTorch's gradient is marked wrong by op_db)")


def _check_grads(op: Any, s: Any, t_res: Any, c_res: Any, leaves: List[Tuple[torch.Tensor, Any]],
                 counts: collections.Counter, notes: List[str], label: str) -> None:
    proc = s.output_process_fn_grad
    try:
        t_outs, c_outs = _differentiable(proc(t_res), _process(proc)(c_res))
    except _Failure as e:
        counts["grad_fail"] += 1
        notes.append(f"{label}: {e}")
        return
    if not t_outs:
        return
    t_in, c_in = [t for t, _ in leaves], [c for _, c in leaves]
    t_go, c_go = _grad_outputs(t_outs, 7)
    try:
        tg = torch.autograd.grad(t_outs, t_in, t_go, allow_unused=True, retain_graph=True)
    except Exception:  # noqa: BLE001 - torch cannot differentiate this sample
        return
    try:
        cg = cgrad.autograd.grad(c_outs, c_in, c_go, allow_unused=True, retain_graph=True)
        if any(g is None and c is not None for g, c in zip(tg, cg)):
            t_outs, t_in = _untracked_leaf_rerun(op, s, t_in, tg)
            tg = torch.autograd.grad(t_outs, t_in, t_go, allow_unused=True, retain_graph=True)
        if _torch_grad_wrong(op):
            _finite_difference_check(op, s, leaves, cg, c_go)
        else:
            _compare_grads(tg, cg, "gradient")
        counts["grad_pass"] += 1
    except (_Failure, Exception) as e:  # noqa: BLE001 - every failure is reported
        counts["grad_fail"] += 1
        notes.append(f"{label}: gradient: {type(e).__name__}: {e}" if not isinstance(e, _Failure) else f"{label}: {e}")
        return
    if not op.supports_gradgrad or _torch_grad_wrong(op) or _torch_grad_wrong(op, "test_fn_gradgrad") or \
            counts["gradgrad_pass"] + counts["gradgrad_fail"] >= counts["gradgrad_limit"]:
        return
    for g in t_go:
        g.requires_grad_(True)
    for g in c_go:
        g.requires_grad_(True)
    try:
        tg1 = torch.autograd.grad(t_outs, t_in, t_go, allow_unused=True, create_graph=True)
        sel = [i for i, g in enumerate(tg1) if g is not None and g.requires_grad]
        if not sel:
            return
        t_gg, c_gg = _grad_outputs([tg1[i] for i in sel], 11)
        tg2 = torch.autograd.grad([tg1[i] for i in sel], t_in + t_go, t_gg, allow_unused=True)
    except Exception:  # noqa: BLE001 - torch cannot differentiate twice here
        return
    try:
        cg1 = cgrad.autograd.grad(c_outs, c_in, c_go, allow_unused=True, create_graph=True)
        if any(cg1[i] is None or not cg1[i].requires_grad for i in sel):
            raise _Failure("gradgrad: a first gradient torch differentiates is constant in cgrad")
        cg2 = cgrad.autograd.grad([cg1[i] for i in sel], c_in + c_go, c_gg, allow_unused=True)
        _compare_grads(tg2, cg2, "gradgrad")
        counts["gradgrad_pass"] += 1
    except (_Failure, Exception) as e:  # noqa: BLE001 - every failure is reported
        counts["gradgrad_fail"] += 1
        notes.append(f"{label}: gradgrad: {type(e).__name__}: {e}" if not isinstance(e, _Failure) else f"{label}: {e}")


def _missing_attr(e: BaseException) -> Optional[str]:
    """The name cgrad lacks, when a call failed for want of an attribute."""
    if isinstance(e, Missing):
        return str(e)
    if isinstance(e, AttributeError):
        msg = str(e)
        if "'Tensor' object has no attribute" in msg or "module 'cgrad" in msg:
            return msg
    return None


def _run_sample(op: Any, fn: Any, s: Any, dtype: torch.dtype, counts: collections.Counter, notes: List[str],
                grads: bool) -> None:
    label = f"{str(dtype).split('.')[-1]} {s.summary() if hasattr(s, 'summary') else ''}"[:300]
    leaves: List[Tuple[torch.Tensor, Any]] = []
    try:
        memo = shared_storages(s.input, s.args, s.kwargs)
        ci = to_cgrad(s.input, leaves, memo)
        ca = to_cgrad(tuple(s.args), leaves, memo)
        ck = to_cgrad(dict(s.kwargs), leaves, memo)
    except Unsupported as e:
        counts["unsupported"] += 1
        notes.append(f"{label}: unsupported sample value: {e}")
        return
    except Exception as e:  # noqa: BLE001 - cgrad cannot hold the sample's tensors
        counts["forward_fail"] += 1
        notes.append(f"{label}: converting the inputs raised {type(e).__name__}: {str(e)[:200]}")
        return
    torch.manual_seed(0)
    try:
        exp = op(s.input, *s.args, **s.kwargs)
    except Exception:  # noqa: BLE001 - a sample PyTorch cannot run is no test of cgrad
        counts["torch_raises"] += 1
        return
    values = op.name not in UNDEFINED_VALUES and not _is_random(op, s, exp)
    cgrad.manual_seed(0)
    try:
        got = fn(ci, *ca, **ck)
    except Exception as e:  # noqa: BLE001 - every failure is reported
        miss = _missing_attr(e)
        if miss:
            raise Missing(miss) from None
        counts["forward_fail"] += 1
        notes.append(f"{label}: raised {type(e).__name__}: {str(e)[:300]}")
        return
    try:
        try:
            _compare(exp, got, values)
        except _Failure:
            if not (op.name in TIED_INDICES and values and _same_values_at(op, s, exp, got)):
                raise
    except _Failure as e:
        counts["forward_fail"] += 1
        notes.append(f"{label}: {e}")
        return
    counts["forward_pass"] += 1
    if grads and leaves and values:
        _check_grads(op, s, exp, got, leaves, counts, notes, label)


def _run_errors(op: Any, fn: Any, counts: collections.Counter, notes: List[str]) -> None:
    try:
        errors = list(op.error_inputs("cpu"))
    except Exception:  # noqa: BLE001 - the entry declares no error inputs
        return
    for ei in errors:
        s = ei.sample_input
        try:
            op(s.input, *s.args, **s.kwargs)
        except Exception:  # noqa: BLE001 - PyTorch raises, as declared
            pass
        else:
            counts["error_torch_accepts"] += 1
            continue
        try:
            memo = shared_storages(s.input, s.args, s.kwargs)
            ci = to_cgrad(s.input, [], memo)
            ca = to_cgrad(tuple(s.args), [], memo)
            ck = to_cgrad(dict(s.kwargs), [], memo)
        except Unsupported:
            counts["error_unsupported"] += 1
            continue
        except Exception as e:  # noqa: BLE001 - cgrad refuses the input already
            conv_error: Optional[Exception] = e
        else:
            conv_error = None
        try:
            if conv_error is not None:
                raise conv_error
            fn(ci, *ca, **ck)
        except Exception as e:  # noqa: BLE001 - checked against the declared type
            if _missing_attr(e):
                raise Missing(_missing_attr(e)) from None
            if isinstance(e, ei.error_type):
                counts["error_same_type"] += 1
            else:
                counts["error_other_type"] += 1
                notes.append(f"error input {s.summary()[:200]}: raised {type(e).__name__}, "
                             f"torch {ei.error_type.__name__}")
            continue
        counts["error_not_raised"] += 1
        notes.append(f"error input {s.summary()[:200]}: did not raise (torch raises {ei.error_type.__name__}: "
                     f"{ei.error_regex})")


FAIL_KEYS = ("forward_fail", "grad_fail", "gradgrad_fail", "error_not_raised", "error_other_type")


def run_entry(op: Any, dtypes: Sequence[torch.dtype], reference: bool = False) -> Dict[str, Any]:
    """Run one op_db entry in this process; the record: id, status (excluded / missing / pass / fail /
    nosamples), why, counts and the first failure messages."""
    rec: Dict[str, Any] = {"id": op_id(op), "counts": {}, "notes": []}
    why = exclusion(op)
    if why:
        rec.update(status="excluded", why=why)
        return rec
    counts: collections.Counter = collections.Counter()
    notes: List[str] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn = resolve(op)
            supported = set(real_dtypes(op))
            backward = set(op.supported_backward_dtypes("cpu")) if op.supports_autograd else set()
            for dt in dtypes:
                if dt not in supported:
                    continue
                grads = dt == torch.float64 and dt in backward
                gen = op.reference_inputs if reference else op.sample_inputs
                try:
                    samples = list(gen("cpu", dt, requires_grad=grads))
                except Exception:  # noqa: BLE001 - PyTorch's own sample generator fails
                    counts["torch_sample_error"] += 1
                    continue
                counts["gradgrad_limit"] = len(samples) if reference else GRADGRAD_SAMPLES
                before = (counts["forward_pass"], counts["forward_fail"])
                for s in samples:
                    _run_sample(op, fn, s, dt, counts, notes, grads)
                name = str(dt).split(".")[-1]  # the forward figures per dtype, for the float-sample rate
                counts[f"forward_pass:{name}"] += counts["forward_pass"] - before[0]
                counts[f"forward_fail:{name}"] += counts["forward_fail"] - before[1]
            _run_errors(op, fn, counts, notes)
        except Missing as e:
            rec.update(status="missing", why=f"cgrad has no {str(e).strip(chr(34))}")
            return rec
    ran = sum(counts[k] for k in ("forward_pass", "forward_fail", "error_same_type", "error_other_type",
                                  "error_not_raised"))
    failed = any(counts[k] for k in FAIL_KEYS)
    counts.pop("gradgrad_limit", None)
    rec.update(status="fail" if failed else ("pass" if ran else "nosamples"), why="",
               counts=dict(counts), notes=notes[:KEEP_MESSAGES])
    return rec
