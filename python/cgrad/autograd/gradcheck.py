"""cgrad.autograd.gradcheck: compare the analytical Jacobian that backward
computes with central finite differences (float64 accumulation), as
torch.autograd.gradcheck / gradgradcheck do. A disagreement raises
GradcheckError (a RuntimeError) naming the output and input, with both
Jacobians, or returns False when raise_exception=False."""
from __future__ import annotations

import math
import random
import warnings
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

from .. import _C

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck / gradgradcheck when a check fails."""


_Inputs = Union["_C._TensorBase", Sequence[Any]]


def _is_tensor(x: Any) -> bool:
    return isinstance(x, _C._TensorBase)


def _as_tuple(x: Any) -> tuple:
    if _is_tensor(x):
        return (x,)
    if isinstance(x, (tuple, list)):
        return tuple(x)
    return (x,)


def _flat(t: "_C._TensorBase") -> List[float]:
    """Elements of t in row-major order as Python floats."""
    v = t.detach().tolist()
    out: List[float] = []
    stack = [v]
    while stack:  # iterative flatten keeps order: push reversed children
        e = stack.pop()
        if isinstance(e, list):
            stack.extend(reversed(e))
        else:
            out.append(float(e))
    return out


def _unravel(j: int, shape: Tuple[int, ...]) -> Tuple[int, ...]:
    idx = []
    for s in reversed(shape):
        idx.append(j % s)
        j //= s
    return tuple(reversed(idx))


def _numel(shape: Tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _float_outputs(out: Any) -> Tuple[Any, ...]:
    return tuple(o for o in _as_tuple(out) if _is_tensor(o) and o.dtype.is_floating_point)


def _numerical_jacobian(func: Callable[..., Any], inputs: tuple, diff: List[int], eps: float
                        ) -> List[List[List[List[float]]]]:
    """jac[i][o] = rows (one per element of input diff[i]) of d(output o)/d(input)."""
    outs0 = _float_outputs(func(*inputs))
    n_out = [o.numel() for o in outs0]
    jac = [[[] for _ in outs0] for _ in diff]
    for k, i in enumerate(diff):
        x = inputs[i]
        alias = x.detach()
        shape = tuple(x.shape)
        for j in range(_numel(shape)):
            idx = _unravel(j, shape)
            orig = float(alias[idx].item())
            alias[idx] = orig + eps
            plus = [_flat(o) for o in _float_outputs(func(*inputs))]
            alias[idx] = orig - eps
            minus = [_flat(o) for o in _float_outputs(func(*inputs))]
            alias[idx] = orig
            for o in range(len(outs0)):
                if len(plus[o]) != n_out[o] or len(minus[o]) != n_out[o]:
                    raise GradcheckError(f"output {o} changed size under a perturbation of input {i}")
                jac[k][o].append([(p - m) / (2 * eps) for p, m in zip(plus[o], minus[o])])
    return jac


def _analytical_jacobian(func: Callable[..., Any], inputs: tuple, diff: List[int], check_grad_dtypes: bool
                         ) -> List[List[List[List[float]]]]:
    """Same layout as _numerical_jacobian, from one backward per output element."""
    outs = _float_outputs(func(*inputs))
    leaves = tuple(inputs[i] for i in diff)
    jac = [[[[0.0] * o.numel() for _ in range(leaves[k].numel())] for o in outs] for k in range(len(diff))]
    for oi, o in enumerate(outs):
        if not o.requires_grad:
            continue  # no graph: the analytical Jacobian is zero
        shape = tuple(o.shape)
        for e in range(o.numel()):
            go = _C.zeros_like(o)
            go[_unravel(e, shape)] = 1.0
            grads = _C.grad((o,), leaves, (go,), True, False, True)
            for k, g in enumerate(grads):
                if g is None:
                    continue
                if check_grad_dtypes and g.dtype != leaves[k].dtype:
                    raise GradcheckError(f"Gradient has dtype mismatch: input {diff[k]} is {leaves[k].dtype} "
                                         f"but its gradient is {g.dtype}")
                if tuple(g.shape) != tuple(leaves[k].shape):
                    raise GradcheckError(f"Gradient has shape mismatch: input {diff[k]} has shape "
                                         f"{tuple(leaves[k].shape)} but its gradient has shape {tuple(g.shape)}")
                for r, v in enumerate(_flat(g)):
                    jac[k][oi][r][e] = v
    return jac


def _close(a: float, n: float, atol: float, rtol: float) -> bool:
    if math.isnan(a) or math.isnan(n):
        return False
    return abs(a - n) <= atol + rtol * abs(n)


def _fmt(m: List[List[float]]) -> str:
    return repr(_C.tensor(m, dtype=_C.float64)) if m and m[0] else repr(m)


def _fail(msg: str, raise_exception: bool) -> bool:
    if raise_exception:
        raise GradcheckError(msg)
    return False


def gradcheck(func: Callable[..., Any], inputs: _Inputs, *, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True, nondet_tol: float = 0.0,
              check_undefined_grad: bool = True, check_grad_dtypes: bool = False, check_batched_grad: bool = False,
              check_batched_forward_grad: bool = False, check_forward_ad: bool = False,
              check_backward_ad: bool = True, fast_mode: bool = False, masked: Optional[bool] = None) -> bool:
    """Check backward's gradients against central differences for every input
    that requires grad. Options for features cgrad lacks (batched grads,
    forward-mode AD, undefined grads, fast mode) are accepted and ignored."""
    if check_forward_ad:
        warnings.warn("gradcheck: check_forward_ad=True is ignored (cgrad has no forward-mode AD)")
    inputs_t = _as_tuple(inputs)
    diff = [i for i, x in enumerate(inputs_t) if _is_tensor(x) and x.requires_grad]
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the them "
                         "have requires_grad=True.")
    for i in diff:
        if inputs_t[i].dtype != _C.float64:
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point or complex. "
                          "This check will likely fail if all the inputs are not of double precision floating "
                          "point or complex.")
    if not check_backward_ad:
        return True
    analytical = _analytical_jacobian(func, inputs_t, diff, check_grad_dtypes)
    again = _analytical_jacobian(func, inputs_t, diff, False)
    for k, i in enumerate(diff):
        for o, (a1, a2) in enumerate(zip(analytical[k], again[k])):
            for r1, r2 in zip(a1, a2):
                if any(abs(x - y) > nondet_tol for x, y in zip(r1, r2) if not (math.isnan(x) and math.isnan(y))):
                    return _fail(f"Backward is not reentrant, i.e., running backward with same input and "
                                 f"grad_output multiple times gives different values, although analytical gradient "
                                 f"matches numerical gradient. The tolerance for nondeterminism was {nondet_tol}.",
                                 raise_exception)
    numerical = _numerical_jacobian(func, inputs_t, diff, eps)
    for k, i in enumerate(diff):
        for o, (a, n) in enumerate(zip(analytical[k], numerical[k])):
            ok = all(_close(x, y, atol, rtol) for ra, rn in zip(a, n) for x, y in zip(ra, rn))
            if not ok:
                return _fail(f"Jacobian mismatch for output {o} with respect to input {i},\n"
                             f"numerical:{_fmt(n)}\nanalytical:{_fmt(a)}\n", raise_exception)
    return True


def _random_like(x: "_C._TensorBase", rng: random.Random) -> "_C._TensorBase":
    dt = x.dtype if x.dtype.is_floating_point else _C.float64
    shape = tuple(x.shape)
    n = _numel(shape)
    if n == 0:
        t = _C.zeros(shape, dtype=dt)
    else:
        t = _C._ag_reshape(_C.tensor([rng.uniform(-1.0, 1.0) for _ in range(n)], dtype=dt), shape)
    return t.detach().requires_grad_(True)


def gradgradcheck(func: Callable[..., Any], inputs: _Inputs, grad_outputs: Optional[_Inputs] = None, *,
                  eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True, nondet_tol: float = 0.0,
                  check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
                  check_batched_grad: bool = False, check_fwd_over_rev: bool = False,
                  check_rev_over_rev: bool = True, fast_mode: bool = False, masked: bool = False) -> bool:
    """gradcheck of the gradients themselves: the function (inputs, grad_outputs)
    -> grad(func(inputs), inputs, grad_outputs, create_graph=True) is checked.
    Random grad_outputs in [-1, 1] are used when none are given."""
    if check_fwd_over_rev:
        warnings.warn("gradgradcheck: check_fwd_over_rev=True is ignored (cgrad has no forward-mode AD)")
    if not check_rev_over_rev:
        return True
    inputs_t = _as_tuple(inputs)
    if grad_outputs is None:
        outs = tuple(o for o in _as_tuple(func(*inputs_t)) if _is_tensor(o) and o.requires_grad)
        rng = random.Random(0)
        gos = tuple(_random_like(o, rng) for o in outs)
    else:
        gos = _as_tuple(grad_outputs)
    num_outputs = len(gos)
    diff_in = {i for i, x in enumerate(inputs_t) if _is_tensor(x) and x.requires_grad}

    def new_func(*args: Any) -> Tuple[Any, ...]:
        ins = args[:len(args) - num_outputs]
        go = args[len(args) - num_outputs:]
        outputs = tuple(o for o in _as_tuple(func(*ins)) if _is_tensor(o) and o.requires_grad)
        diff_args = tuple(x for i, x in enumerate(ins) if i in diff_in)
        if not outputs:
            return ()
        grads = _C.grad(outputs, diff_args, go, True, True, True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(new_func, inputs_t + gos, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception,
                     nondet_tol=nondet_tol, check_grad_dtypes=check_grad_dtypes)
