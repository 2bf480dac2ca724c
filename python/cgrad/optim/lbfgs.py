"""L-BFGS (torch.optim.LBFGS): limited-memory BFGS over all parameters as one
flat vector, with a fixed step or the strong-Wolfe line search (cubic
interpolation, bracketing and zoom), driven by a closure that re-evaluates the
loss. The scalar recurrences run in Python floats (IEEE doubles), so float64
trajectories follow PyTorch's; the vectors are cgrad tensors."""
from __future__ import annotations

import math
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

from .. import _C
from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad, no_grad
from .optimizer import Optimizer, ParamsT, _check_lr, _to_scalar

__all__ = ["LBFGS"]


def _cubic_minimum(x1: float, f1: float, g1: float, x2: float, f2: float, g2: float,
                   bounds: Optional[Tuple[float, float]] = None) -> float:
    """The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clipped to
    `bounds` (default: the interval between x1 and x2); its midpoint when the cubic has none."""
    lo, hi = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    disc = d1 * d1 - g1 * g2
    if disc < 0:
        return (lo + hi) / 2.0
    d2 = math.sqrt(disc)
    if x1 <= x2:
        x = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        x = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(x, lo), hi)


def _strong_wolfe(evaluate: Callable[[float], Tuple[float, Tensor]], t: float, d: Tensor, f: float, g: Tensor,
                  gtd: float, c1: float = 1e-4, c2: float = 0.9, tolerance_change: float = 1e-9,
                  max_ls: int = 25) -> Tuple[float, Tensor, float, int]:
    """A step t along d meeting the strong Wolfe conditions: (loss, flat gradient, t, evaluations)."""
    d_norm = d.abs().max().item()
    f_new, g_new = evaluate(t)
    evals, gtd_new = 1, g_new.dot(d).item()
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done, ls_iter = False, 0
    # bracket: the points (t, f, g, gtd) that enclose an acceptable step
    while ls_iter < max_ls:
        if f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= f_prev):
            bracket = [[t_prev, f_prev, g_prev, gtd_prev], [t, f_new, g_new, gtd_new]]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, done = [[t, f_new, g_new, gtd_new]], True
            break
        if gtd_new >= 0:
            bracket = [[t_prev, f_prev, g_prev, gtd_prev], [t, f_new, g_new, gtd_new]]
            break
        t_next = _cubic_minimum(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                                bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new, gtd_new
        t = t_next
        f_new, g_new = evaluate(t)
        evals, gtd_new, ls_iter = evals + 1, g_new.dot(d).item(), ls_iter + 1
    if ls_iter == max_ls:
        bracket = [[0.0, f, g, gtd], [t, f_new, g_new, gtd_new]]
    # zoom: shrink the bracket until a point meets the conditions
    low, high = (0, 1) if bracket[0][1] <= bracket[-1][1] else (1, 0)
    insufficient = False
    while not done and ls_iter < max_ls:
        ts = (bracket[0][0], bracket[1][0])
        if abs(ts[1] - ts[0]) * d_norm < tolerance_change:
            break
        t = _cubic_minimum(bracket[0][0], bracket[0][1], bracket[0][3], bracket[1][0], bracket[1][1],
                           bracket[1][3])
        top, bottom = max(ts), min(ts)
        eps = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < eps:
            if insufficient or t >= top or t <= bottom:
                t = top - eps if abs(t - top) < abs(t - bottom) else bottom + eps
                insufficient = False
            else:
                insufficient = True
        else:
            insufficient = False
        f_new, g_new = evaluate(t)
        evals, gtd_new, ls_iter = evals + 1, g_new.dot(d).item(), ls_iter + 1
        if f_new > f + c1 * t * gtd or f_new >= bracket[low][1]:
            bracket[high] = [t, f_new, g_new, gtd_new]
            low, high = (0, 1) if bracket[0][1] <= bracket[1][1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high][0] - bracket[low][0]) >= 0:
                bracket[high] = list(bracket[low])
            bracket[low] = [t, f_new, g_new, gtd_new]
    t, f_new, g_new, _ = bracket[low]
    return f_new, g_new, t, evals


class LBFGS(Optimizer):
    """L-BFGS, as torch.optim.LBFGS (one parameter group; step(closure) is required)."""

    def __init__(self, params: ParamsT, lr: Union[float, Tensor] = 1, max_iter: int = 20,
                 max_eval: Optional[int] = None, tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9,
                 history_size: int = 100, line_search_fn: Optional[str] = None) -> None:
        _check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change, history_size=history_size,
                                      line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params: List[Tensor] = self.param_groups[0]["params"]

    def _flat_grad(self) -> Tensor:
        return _C.cat([p.grad.reshape(-1) if p.grad is not None else _C.zeros(p.numel(), dtype=p.dtype)
                       for p in self._params], 0)

    def _move(self, t: float, d: Tensor) -> None:
        """params += t * d, with d the flat direction."""
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(d[offset:offset + n].view_as(p), alpha=t)
            offset += n

    def _evaluate_at(self, closure: Callable[[], Any], x: Sequence[Tensor], t: float,
                     d: Tensor) -> Tuple[float, Tensor]:
        """Loss and flat gradient at x + t d; the parameters are restored to x after."""
        self._move(t, d)
        with enable_grad():
            loss = float(closure())
        flat_grad = self._flat_grad()
        for p, saved in zip(self._params, x):
            p.copy_(saved)
        return loss, flat_grad

    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Run up to max_iter L-BFGS iterations; `closure` clears the gradients, computes the
        loss, calls backward and returns the loss. Returns the loss of the first evaluation."""
        with no_grad():
            return self._step(closure)

    def _step(self, closure: Callable[[], Any]) -> Any:
        group = self.param_groups[0]
        lr, max_iter, max_eval = _to_scalar(group["lr"]), group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search, history_size = group["line_search_fn"], group["history_size"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        with enable_grad():
            orig_loss = closure()
        loss = float(orig_loss)
        evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if flat_grad.abs().max().item() <= tolerance_grad:
            return orig_loss
        d, t = state.get("d"), _to_scalar(state["t"]) if "t" in state else None
        old_dirs, old_stps = state.get("old_dirs"), state.get("old_stps")
        ro = [_to_scalar(r) for r in state["ro"]] if "ro" in state else None
        h_diag = _to_scalar(state["H_diag"]) if "H_diag" in state else None
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")
        # al: the two-loop coefficients, kept in the state as PyTorch keeps them (None: never set)
        al: Optional[List[Optional[float]]] = (
            [None if a is None else _to_scalar(a) for a in state["al"]] if "al" in state else None)
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d, old_dirs, old_stps, ro, h_diag = flat_grad.neg(), [], [], [], 1.0
            else:
                y = flat_grad.sub(prev_flat_grad)
                s = d.mul(t)
                ys = y.dot(s).item()
                if ys > 1e-10:  # a curvature pair that keeps the approximation positive definite
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0), old_stps.pop(0), ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / y.dot(y).item()
                # the two-loop recursion: d = -H grad
                if al is None:
                    al = [None] * history_size
                q = flat_grad.neg()
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = old_stps[i].dot(q).item() * ro[i]
                    q.add_(old_dirs[i], alpha=-al[i])
                d = r = q.mul(h_diag)
                for i in range(len(old_dirs)):
                    be_i = old_dirs[i].dot(r).item() * ro[i]
                    r.add_(old_stps[i], alpha=al[i] - be_i)  # type: ignore[operator]
            prev_flat_grad = flat_grad.clone()
            prev_loss = loss
            t = min(1.0, 1.0 / flat_grad.abs().sum().item()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d).item()
            if gtd > -tolerance_change:  # not a descent direction
                break
            ls_evals = 0
            if line_search is not None:
                if line_search != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = [p.clone() for p in self._params]
                loss, flat_grad, t, ls_evals = _strong_wolfe(
                    lambda step: self._evaluate_at(closure, x_init, step, d), t, d, loss, flat_grad, gtd,
                    max_ls=max_eval - evals)
                self._move(t, d)
                opt_cond = flat_grad.abs().max().item() <= tolerance_grad
            else:
                self._move(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    with enable_grad():
                        loss = float(closure())
                    flat_grad = self._flat_grad()
                    opt_cond = flat_grad.abs().max().item() <= tolerance_grad
                    ls_evals = 1
            evals += ls_evals
            state["func_evals"] += ls_evals
            if n_iter == max_iter or evals >= max_eval or opt_cond:
                break
            if d.mul(t).abs().max().item() <= tolerance_change or abs(loss - prev_loss) < tolerance_change:
                break
        # the state has PyTorch's keys; ro / H_diag / al are 0-d tensors in the parameters' dtype, and so is t
        # (PyTorch's t is a number or a 0-d tensor by path; rounding it to the dtype keeps float32 runs on
        # PyTorch's trajectory)
        dtype = d.dtype
        state.update(d=d, t=_C.tensor(t, dtype=dtype), old_dirs=old_dirs, old_stps=old_stps,
                     ro=[_C.tensor(r, dtype=dtype) for r in ro], H_diag=_C.tensor(h_diag, dtype=dtype),
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        if al is not None:
            state["al"] = [None if a is None else _C.tensor(a, dtype=dtype) for a in al]
        return orig_loss
