"""cgrad.nn.utils.parametrizations: weight_norm, spectral_norm and orthogonal as
parametrizations (register_parametrization), as torch.nn.utils.parametrizations."""
from __future__ import annotations

from enum import Enum, auto
from typing import Any, Optional, Tuple

from ... import _C
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..modules.module import Module
from . import parametrize
from ._matrix_ops import geqrf, householder_product, matrix_exp, solve

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]

Tensor = _C._TensorBase

_EPS = {"float32": 1.1920928955078125e-07, "float64": 2.220446049250313e-16, "float16": 0.0009765625,
        "bfloat16": 0.0078125}


def _eps_of(dtype: Any) -> float:
    return _EPS[str(dtype).rsplit(".", 1)[-1]]


def norm_except_dim(v: Any, pow: float, dim: int) -> Any:
    """The `pow`-norm of v over every dim but `dim`, keeping dims (dim=-1: of all of v)."""
    if dim == -1:
        return v.norm(pow)
    d = dim % v.ndim
    others = tuple(i for i in range(v.ndim) if i != d)
    if not others:
        return v.abs() if pow != 0 else v.ne(0).to(v.dtype)
    return v.norm(pow, dim=others, keepdim=True)


def _weight_norm(v: Any, g: Any, dim: int) -> Any:
    return v * (g / norm_except_dim(v, 2, dim))


# -- weight_norm -------------------------------------------------------------------------

class _WeightNorm(Module):
    def __init__(self, dim: Optional[int] = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Any, weight_v: Any) -> Any:
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Any) -> Tuple[Any, Any]:
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: Optional[int] = 0) -> Module:
    """weight = g * v / ||v|| with g = parametrizations.<name>.original0 (the norms over
    every dim but `dim`; dim=None: one norm) and v = original1. Loads the state dicts
    of the old hook-based weight_norm (<name>_g / <name>_v)."""
    if not isinstance(module, Module):
        raise AttributeError(f"weight_norm(): argument 'module' must be an nn.Module, got {type(module).__name__}")
    if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int)):
        raise TypeError(f"weight_norm(): argument 'dim' must be int or None, got {type(dim).__name__}")
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def compat_hook(state_dict: Any, prefix: str, local_metadata: Any, strict: bool, missing_keys: Any,
                    unexpected_keys: Any, error_msgs: Any) -> None:
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(compat_hook)
    return module


# -- spectral_norm -----------------------------------------------------------------------

class _SpectralNorm(Module):
    def __init__(self, weight: Any, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            with no_grad():
                u = weight_mat.new_empty(h).normal_(0, 1)
                v = weight_mat.new_empty(w).normal_(0, 1)
                self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
                self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Any) -> Any:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat: Any, n_power_iterations: int) -> None:
        # u and v are updated in place, so they stay the buffers the state dict holds
        with no_grad():
            for _ in range(n_power_iterations):
                F.normalize(weight_mat.mv(self._v), dim=0, eps=self.eps, out=self._u)
                F.normalize(weight_mat.mT.mv(self._u), dim=0, eps=self.eps, out=self._v)

    def forward(self, weight: Any) -> Any:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        import cgrad
        sigma = cgrad.vdot(u, weight_mat.mv(v))
        return weight / sigma

    def right_inverse(self, value: Any) -> Any:
        return value


def _is_conv_transpose(module: Module) -> bool:
    from ..modules import conv
    kinds = tuple(getattr(conv, n) for n in ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d")
                  if hasattr(conv, n))
    return bool(kinds) and isinstance(module, kinds)


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: Optional[int] = None) -> Module:
    """weight = W / sigma(W), sigma the largest singular value of W (as a matrix over
    `dim` and the rest), estimated by power iteration on buffers
    parametrizations.<name>.0._u / _v, which advance on each read in training mode only."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if _is_conv_transpose(module) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


# -- orthogonal --------------------------------------------------------------------------

class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


def _is_orthogonal(q: Any) -> bool:
    import cgrad
    n, k = q.shape[-2], q.shape[-1]
    eye = cgrad.eye(k, dtype=q.dtype)
    return bool(cgrad.allclose(q.mT @ q, eye.expand_as(q.mT @ q), atol=10.0 * n * _eps_of(q.dtype)))


def _make_orthogonal(a: Any) -> Any:
    x, tau = geqrf(a)
    q = householder_product(x, tau)
    return q * x.diagonal(dim1=-2, dim2=-1).sign().unsqueeze(-2)


class _Orthogonal(Module):
    def __init__(self, weight: Any, orthogonal_map: _OrthMaps, *, use_trivialization: bool = True) -> None:
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, x: Any) -> Any:
        import cgrad
        n, k = x.shape[-2], x.shape[-1]
        transposed = n < k
        if transposed:
            x = x.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            x = x.tril()
            if n != k:
                x = cgrad.cat([x, x.new_zeros(n, n - k).expand(*x.shape[:-2], -1, -1)], dim=-1)
            a = x - x.mT
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                q = matrix_exp(a)
            else:
                eye = cgrad.eye(n, dtype=a.dtype).expand_as(a)
                q = solve(eye - 0.5 * a, eye + 0.5 * a)
            if n != k:
                q = q[..., :k]
        else:
            a = x.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (a * a).sum(dim=-2))
            q = householder_product(a, tau)
            q = q * x.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if "base" in self._buffers and self.base is not None:
            q = self.base @ q
        if transposed:
            q = q.mT
        return q

    def right_inverse(self, q: Any) -> Any:
        import cgrad
        with no_grad():
            if q.shape != self.shape:
                raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                                 f"Got a tensor of shape {q.shape}.")
            q_init = q
            n, k = q.shape[-2], q.shape[-1]
            transpose = n < k
            if transpose:
                q = q.mT
                n, k = k, n
            if "base" not in self._buffers:
                if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                    raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                              "parametrizations when use_trivialization=False.")
                a, tau = geqrf(q)
                d = a.diagonal(dim1=-2, dim2=-1)
                flip = cgrad.where(tau == 0.0, -cgrad.ones_like(tau), cgrad.ones_like(tau))
                d.copy_(d.sign() * flip)
                return a.mT if transpose else a
            if n == k:
                q = q.clone() if _is_orthogonal(q) else _make_orthogonal(q)
            else:
                noise = cgrad.randn(*(tuple(q.shape[:-2]) + (n, n - k)), dtype=q.dtype)
                q = _make_orthogonal(cgrad.cat([q, noise], dim=-1))
            self.base = q
            neg_eye = cgrad.zeros_like(q_init)
            neg_eye.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_eye


def orthogonal(module: Module, name: str = "weight", orthogonal_map: Optional[str] = None, *,
               use_trivialization: bool = True) -> Module:
    """Keep `module.<name>` (a matrix or batch of matrices) orthogonal (or with orthonormal
    rows / columns when not square) through "matrix_exp", "cayley" or "householder"."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None) if isinstance(orthogonal_map, str) else None
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
