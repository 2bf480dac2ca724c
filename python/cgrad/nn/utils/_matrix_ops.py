"""Small dense linear algebra for the orthogonal parametrization, written with cgrad
ops (cgrad has no LAPACK layer yet): matrix_exp, solve (an autograd Function),
householder_product and geqrf, each with torch.linalg's semantics for real
(..., n, n) / (..., m, n) batches. Meant for parameter-sized matrices: each is a
Python loop over the matrix size."""
from __future__ import annotations

import math
from typing import Any, Tuple

from ... import _C
from ...autograd.function import Function
from ...autograd.grad_mode import no_grad

__all__ = ["matrix_exp", "solve", "householder_product", "geqrf"]

_TAYLOR_DEGREE = 18  # with ||B||_1 <= 1 the remainder is below 1/19! ~ 8e-18


def _eye_like(a: Any, n: int, m: int = -1) -> Any:
    import cgrad
    return cgrad.eye(n, n if m < 0 else m, dtype=a.dtype)


def _check_square(fn: str, a: Any) -> None:
    if not isinstance(a, _C._TensorBase):
        raise TypeError(f"{fn}(): argument 'A' must be a Tensor, got {type(a).__name__}")
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are {tuple(a.shape)}")
    if not a.dtype.is_floating_point:
        raise RuntimeError(f"{fn}: Expected a floating point tensor, got {a.dtype}")


def matrix_exp(a: Any) -> Any:
    """exp(A) of (..., n, n) by scaling and squaring a Taylor polynomial; differentiable
    through its ops."""
    _check_square("matrix_exp", a)
    n = a.shape[-1]
    with no_grad():
        norm1 = float(a.abs().sum(dim=-2).max()) if a.numel() else 0.0
    if not math.isfinite(norm1):
        raise RuntimeError("matrix_exp: the input has inf or NaN entries")
    s = max(0, math.ceil(math.log2(norm1))) if norm1 > 0 else 0
    b = a / (2.0 ** s) if s else a
    eye = _eye_like(a, n)
    e = eye
    for k in range(_TAYLOR_DEGREE, 0, -1):
        e = eye + (b @ e) / k
    for _ in range(s):
        e = e @ e
    return e


def _solve_forward(a: Any, b: Any) -> Any:
    """X with A X = B, by Gauss-Jordan elimination with partial pivoting (no grad)."""
    import cgrad
    batch = tuple(a.shape[:-2])
    n, m = a.shape[-1], b.shape[-1]
    nb = 1
    for d in batch:
        nb *= d
    mat = cgrad.cat([a.reshape(nb, n, n), b.reshape(nb, n, m)], dim=-1).clone()
    rows = cgrad.arange(nb)
    for k in range(n):
        p = mat[:, k:, k].abs().argmax(dim=1) + k
        row_k = mat[rows, k].clone()
        mat[rows, k] = mat[rows, p]
        mat[rows, p] = row_k
        piv: Any = mat[:, k, k]
        if bool((piv == 0).any()) or not bool(piv.isfinite().all()):
            raise RuntimeError("linalg.solve: The solver failed because the input matrix is singular.")
        mat[:, k] = mat[:, k] / piv.unsqueeze(-1)
        factors = mat[:, :, k].clone()
        factors[:, k] = 0
        mat = mat - factors.unsqueeze(-1) * mat[:, k:k + 1, :]
    return mat[:, :, n:].reshape(*batch, n, m).contiguous()


class _Solve(Function):
    @staticmethod
    def forward(ctx: Any, a: Any, b: Any) -> Any:
        x = _solve_forward(a, b)
        ctx.save_for_backward(a, x)
        return x

    @staticmethod
    def backward(ctx: Any, g: Any) -> Tuple[Any, Any]:
        a, x = ctx.saved_tensors
        gb = _Solve.apply(a.mT, g)
        ga = -(gb @ x.mT) if ctx.needs_input_grad[0] else None
        return ga, gb


def solve(a: Any, b: Any) -> Any:
    """X with A X = B for (..., n, n) A and (..., n, k) B of the same batch shape."""
    _check_square("linalg.solve", a)
    if not isinstance(b, _C._TensorBase) or b.ndim != a.ndim or b.shape[:-1] != a.shape[:-1]:
        raise RuntimeError(f"linalg.solve: B of shape {tuple(getattr(b, 'shape', ()))} does not match A of shape "
                           f"{tuple(a.shape)}")
    if b.dtype != a.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, got {a.dtype} and {b.dtype}")
    return _Solve.apply(a, b)


def householder_product(a: Any, tau: Any) -> Any:
    """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T, v_i the i-th column
    of A (..., m, n) below the diagonal with a 1 on it; tau is (..., k), k <= n <= m."""
    m, n = a.shape[-2], a.shape[-1]
    k = tau.shape[-1]
    if not (k <= n <= m):
        raise RuntimeError(f"householder_product: expected k <= n <= m for A of shape {tuple(a.shape)} and tau of "
                           f"shape {tuple(tau.shape)}")
    vs = a.tril(-1) + _eye_like(a, m, n)
    q = _eye_like(a, m, n).expand(*a.shape).contiguous() if a.ndim > 2 else _eye_like(a, m, n)
    for i in range(k - 1, -1, -1):
        v = vs[..., :, i:i + 1]
        q = q - tau[..., i:i + 1].unsqueeze(-1) * (v @ (v.mT @ q))
    return q


def geqrf(a: Any) -> Tuple[Any, Any]:
    """Householder QR in LAPACK's packed form: R on and above the diagonal, the
    reflectors' tails below it, and their scales tau (no grad)."""
    import cgrad
    with no_grad():
        r = a.clone()
        m, n = r.shape[-2], r.shape[-1]
        kk = min(m, n)
        taus = []
        for j in range(kk):
            x = r[..., j:, j].clone()
            alpha = x[..., 0]
            xnorm = x[..., 1:].norm(2, dim=-1) if m - j > 1 else cgrad.zeros_like(alpha)
            trivial: Any = xnorm == 0
            sign = cgrad.where(alpha < 0, -cgrad.ones_like(alpha), cgrad.ones_like(alpha))
            beta = -sign * (alpha * alpha + xnorm * xnorm).sqrt()
            safe_beta = cgrad.where(trivial, cgrad.ones_like(beta), beta)
            tau = cgrad.where(trivial, cgrad.zeros_like(alpha), (beta - alpha) / safe_beta)
            denom = cgrad.where(trivial, cgrad.ones_like(alpha), alpha - beta)
            v = x / denom.unsqueeze(-1)
            v[..., 0] = 1.0
            # apply H = I - tau v v^T to the trailing block (rows j:, columns j+1:)
            if j + 1 < n:
                block = r[..., j:, j + 1:]
                w = (v.unsqueeze(-2) @ block)  # (..., 1, n-j-1)
                r[..., j:, j + 1:] = block - tau.unsqueeze(-1).unsqueeze(-1) * (v.unsqueeze(-1) @ w)
            r[..., j, j] = cgrad.where(trivial, alpha, beta)
            if m - j > 1:
                r[..., j + 1:, j] = cgrad.where(trivial.unsqueeze(-1), x[..., 1:], v[..., 1:])
            taus.append(tau)
        tau_all = cgrad.stack(taus, dim=-1) if taus else r.new_zeros(*r.shape[:-2], 0)
    return r, tau_all
