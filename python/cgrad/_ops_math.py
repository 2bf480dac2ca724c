"""Elementwise and small linear-algebra ops composed from cgrad ops (and the
C rows of src/ops/elementwise_ops.py where a new loop is needed), so autograd
and higher-order gradients come from the ops they are built of."""
from __future__ import annotations

import math
from typing import Any, List, Optional, Sequence, Tuple, Union

from . import _C

__all__: List[str] = []  # the public functions, exported as cgrad.<name>

Tensor = Any  # a cgrad Tensor (cgrad.Tensor is still being defined when this module loads)
Number = Union[int, float, bool]


def _public(fn: Any) -> Any:
    __all__.append(fn.__name__)
    return fn


def _is_t(x: Any) -> bool:
    return isinstance(x, _C._TensorBase)


def _is_float(x: Tensor) -> bool:
    return x.dtype.is_floating_point


def _cplx(dt: Any) -> bool:
    return bool(getattr(dt, "is_complex", False))


def _to_float(x: Tensor) -> Tensor:
    """x, or x in the default float dtype when it is an integer or bool tensor (unary float ops)."""
    return x if x.dtype.is_floating_point or _cplx(x.dtype) else x.to(_C.get_default_dtype())


def _check_t(name: str, x: Any, what: str = "input") -> None:
    if not _is_t(x):
        raise TypeError(f"{name}(): argument '{what}' must be Tensor, not {type(x).__name__}")


def _out(result: Tensor, out: Optional[Tensor]) -> Tensor:
    if out is None:
        return result
    if tuple(out.shape) != tuple(result.shape):
        if not hasattr(out, "resize_"):
            raise RuntimeError(f"out= tensor of shape {tuple(out.shape)} does not match the result's shape "
                               f"{tuple(result.shape)}")
        out.resize_(result.shape)
    with _no_grad():
        out.copy_(result)
    return out


def _no_grad() -> Any:
    from .autograd.grad_mode import no_grad
    return no_grad()


# ----------------------------------------------------------------------------------------- simple elementwise ops

@_public
def rsub(input: Tensor, other: Union[Tensor, Number], *, alpha: Number = 1) -> Tensor:
    """other - alpha * input (torch.rsub)."""
    _check_t("rsub", input)
    return _C.sub(other, input, alpha=alpha)


@_public
def deg2rad(input: Tensor, *, out: Optional[Tensor] = None) -> Tensor:
    """Degrees to radians (torch.deg2rad)."""
    _check_t("deg2rad", input)
    return _out(_C.mul(_to_float(input), math.pi / 180.0), out)


@_public
def rad2deg(input: Tensor, *, out: Optional[Tensor] = None) -> Tensor:
    """Radians to degrees (torch.rad2deg)."""
    _check_t("rad2deg", input)
    return _out(_C.mul(_to_float(input), 180.0 / math.pi), out)


@_public
def sgn(input: Tensor, *, out: Optional[Tensor] = None) -> Tensor:
    """The sign of each element; x / |x| for complex (torch.sgn)."""
    _check_t("sgn", input)
    if _cplx(input.dtype):
        raise NotImplementedError("sgn: complex tensors are not supported by cgrad")
    return _out(_C.sign(input), out)


@_public
def real(input: Tensor) -> Tensor:
    """The real part; the input itself for a real tensor (torch.real)."""
    _check_t("real", input)
    if _cplx(input.dtype):
        raise NotImplementedError("real: complex tensors are not supported by cgrad")
    return input


@_public
def conj(input: Tensor) -> Tensor:
    """The conjugate view; the input itself for a real tensor (torch.conj)."""
    _check_t("conj", input)
    if _cplx(input.dtype):
        raise NotImplementedError("conj: complex tensors are not supported by cgrad")
    return input


@_public
def conj_physical(input: Tensor, *, out: Optional[Tensor] = None) -> Tensor:
    """The conjugate; the input itself for a real tensor (torch.conj_physical)."""
    _check_t("conj_physical", input)
    if _cplx(input.dtype):
        raise NotImplementedError("conj_physical: complex tensors are not supported by cgrad")
    return input if out is None else _out(input, out)


@_public
def angle(input: Tensor, *, out: Optional[Tensor] = None) -> Tensor:
    """The argument of each element: 0 or pi for a real tensor, NaN for NaN (torch.angle)."""
    _check_t("angle", input)
    if _cplx(input.dtype):
        raise NotImplementedError("angle: complex tensors are not supported by cgrad")
    x = _to_float(input)
    zero = _C.zeros_like(x.detach())
    res = _C.where(_C.isnan(x), x, _C.where(_C.lt(x, 0), zero + math.pi, zero))  # d angle / dx = 0 for real x
    return _out(res, out)


@_public
def isreal(input: Tensor) -> Tensor:
    """True for each element with zero imaginary part: every element of a real tensor (torch.isreal)."""
    _check_t("isreal", input)
    return _C.ones_like(input, dtype=_C.bool)


@_public
def signbit(input: Tensor, *, out: Optional[Tensor] = None) -> Tensor:
    """True where the sign bit is set, -0.0 included (torch.signbit)."""
    _check_t("signbit", input)
    if _cplx(input.dtype):
        raise RuntimeError("signbit is not implemented for complex tensors.")
    if input.dtype == _C.bool:
        return _out(_C.zeros_like(input, dtype=_C.bool), out)
    if _is_float(input):
        return _out(_C.lt(_C.copysign(_C.ones_like(input.detach()), input.detach()), 0), out)
    return _out(_C.lt(input, 0), out)


@_public
def heaviside(input: Tensor, values: Tensor, *, out: Optional[Tensor] = None) -> Tensor:
    """The Heaviside step: 0 below zero, values at zero, 1 above (torch.heaviside)."""
    _check_t("heaviside", input)
    _check_t("heaviside", values, "values")
    if input.dtype != values.dtype:
        raise RuntimeError(f"heaviside: input and values must have the same dtype, as in PyTorch "
                           f"(got {input.dtype} and {values.dtype})")
    x, v = input.detach(), values.detach()
    res = _C.where(_C.eq(x, 0), v, _C.gt(x, 0).to(x.dtype)).to(x.dtype)
    if input.requires_grad or values.requires_grad:
        res = _functions()["nodiff"].apply("heaviside", res, input, values)
    return _out(res, out)


@_public
def sinc(input: Tensor, *, out: Optional[Tensor] = None) -> Tensor:
    """The normalized sinc, sin(pi x) / (pi x), 1 at 0 (torch.sinc)."""
    _check_t("sinc", input)
    x = _to_float(input)
    zero = _C.eq(x, 0)
    px = _C.where(zero, _C.ones_like(x), x) * math.pi
    return _out(_C.where(zero, _C.ones_like(x), _C.sin(px) / px), out)


@_public
def xlogy(input: Union[Tensor, Number], other: Union[Tensor, Number], *, out: Optional[Tensor] = None) -> Tensor:
    """input * log(other), 0 where input is 0 and other is not NaN (torch.xlogy)."""
    x_is, y_is = _is_t(input), _is_t(other)
    if not x_is and not y_is:
        raise TypeError("xlogy(): at least one of 'input' and 'other' must be a Tensor")
    dt = _C.result_type(input, other)
    if not dt.is_floating_point:
        dt = _C.get_default_dtype()
    x = input.to(dt) if x_is else _C.tensor(float(input), dtype=dt, device=other.device)
    y = other.to(dt) if y_is else _C.tensor(float(other), dtype=dt, device=input.device)
    zero = _C.logical_and(_C.eq(x, 0), _C.logical_not(_C.isnan(y)))
    ys = _C.where(zero, _C.ones_like(y), y)
    res = _C.where(zero, _C.zeros_like(x * ys), x * _C.log(ys))
    return _out(res, out)


@_public
def logit(input: Tensor, eps: Optional[float] = None, *, out: Optional[Tensor] = None) -> Tensor:
    """log(p / (1 - p)), p clamped to [eps, 1 - eps] when eps is given (torch.logit)."""
    _check_t("logit", input)
    x = _to_float(input)
    if eps is not None:
        x = _C.clamp(x, eps, 1.0 - eps)
    return _out(_C.log(x / (1.0 - x)), out)


@_public
def ldexp(input: Tensor, other: Tensor, *, out: Optional[Tensor] = None) -> Tensor:
    """input * 2 ** other (torch.ldexp)."""
    _check_t("ldexp", input)
    _check_t("ldexp", other, "other")
    dt = _C.result_type(input, other)
    if not dt.is_floating_point:
        dt = _C.get_default_dtype()
    return _out(_C.mul(input.to(dt), _C.pow(2.0, other.to(dt))), out)


# ------------------------------------------------------------------------------------------ differences, integrals

def _wrap_dim(name: str, dim: int, ndim: int) -> int:
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"{name}: Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


@_public
def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Optional[Tensor] = None,
         append: Optional[Tensor] = None, *, out: Optional[Tensor] = None) -> Tensor:
    """The n-th forward difference along dim, after prepending / appending values (torch.diff)."""
    _check_t("diff", input)
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _wrap_dim("diff", dim, input.dim())
    if n == 0:
        return _out(input, out) if out is not None else input
    parts = []
    for t, what in ((prepend, "prepend"), (input, None), (append, "append")):
        if t is None:
            continue
        if not _is_t(t):
            t = _C.full([1 if i == d else s for i, s in enumerate(input.shape)], t, dtype=input.dtype)
        if what and t.dim() != input.dim():
            raise RuntimeError(f"diff expects prepend or append to be the same dimension as input "
                               f"(input has {input.dim()} dimensions, {what} has {t.dim()})")
        parts.append(t)
    x = _C.cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        m = x.shape[d]
        if m == 0:
            break
        a, b = _C.narrow(x, d, 1, m - 1), _C.narrow(x, d, 0, m - 1)
        x = _C.logical_xor(a, b) if x.dtype == _C.bool else a - b
    return _out(x, out)


def _dims_list(name: str, dim: Any, ndim: int) -> List[int]:
    if dim is None:
        return list(range(ndim))
    ds = [dim] if isinstance(dim, int) else list(dim)
    res = [_wrap_dim(name, int(x), ndim) for x in ds]
    if len(set(res)) != len(res):
        raise RuntimeError(f"{name}: dim {tuple(ds)} appears multiple times in the list of dims")
    return res


def _sl(x: Tensor, d: int, start: int, length: int) -> Tensor:
    return _C.narrow(x, d, start, length)


def _along(v: Tensor, d: int, ndim: int) -> Tensor:
    """A 1-D tensor v shaped to broadcast along dim d of an ndim tensor."""
    return v.reshape([-1 if i == d else 1 for i in range(ndim)])


@_public
def gradient(input: Tensor, *, spacing: Any = 1, dim: Any = None, edge_order: int = 1) -> Tuple[Tensor, ...]:
    """Second-order central differences in the interior, one-sided at the edges (torch.gradient)."""
    _check_t("gradient", input)
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = _dims_list("torch.gradient", dim, input.dim())
    if input.dim() == 0:
        raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    if spacing is None:
        spacing = 1
    if isinstance(spacing, (list, tuple)):
        sp = list(spacing)
        if len(sp) != len(dims):
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and "
                               f"dim arguments to have the same length, but got a spacing argument of length "
                               f"{len(sp)} and a dim argument of length {len(dims)}.")
    elif _is_t(spacing):
        raise RuntimeError("torch.gradient expected spacing to be a scalar or a list of scalars or tensors, "
                           "not a single Tensor")
    else:
        sp = [spacing] * len(dims)
    x = _to_float(input)
    nd = x.dim()
    res = []
    for d, h in zip(dims, sp):
        n = x.shape[d]
        if n < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
        if _is_t(h) and h.dim() == 0:
            h = h.item()
        if not _is_t(h) and not isinstance(h, (int, float)):
            raise RuntimeError(f"torch.gradient expected spacing to be a scalar or a list of scalars or "
                               f"tensors, got {type(h).__name__}")
        if _is_t(h):
            if h.dim() != 1 or h.shape[0] != n:
                raise RuntimeError(f"torch.gradient expected each tensor to be on the same device as the input "
                                   f"and of size {n} along dimension {d}, but got a tensor of shape "
                                   f"{tuple(h.shape)}")
            c = _to_float(h).to(_C.promote_types(x.dtype, _to_float(h).dtype))
            hs = c[1:] - c[:-1]
            hl, hr = _along(hs[:-1], d, nd), _along(hs[1:], d, nd)
            fp, f0, fm = _sl(x, d, 2, n - 2), _sl(x, d, 1, n - 2), _sl(x, d, 0, n - 2)
            inner = (hl * hl * fp - hr * hr * fm + (hr * hr - hl * hl) * f0) / (hl * hr * (hl + hr))
            if edge_order == 1:
                first = (_sl(x, d, 1, 1) - _sl(x, d, 0, 1)) / _along(hs[:1], d, nd)
                last = (_sl(x, d, n - 1, 1) - _sl(x, d, n - 2, 1)) / _along(hs[-1:], d, nd)
            else:
                h1, h2 = _along(hs[:1], d, nd), _along(hs[1:2], d, nd)
                a = -(2 * h1 + h2) / (h1 * (h1 + h2))
                b = (h1 + h2) / (h1 * h2)
                cc = -h1 / (h2 * (h1 + h2))
                first = a * _sl(x, d, 0, 1) + b * _sl(x, d, 1, 1) + cc * _sl(x, d, 2, 1)
                h1, h2 = _along(hs[-2:-1], d, nd), _along(hs[-1:], d, nd)
                a = h2 / (h1 * (h1 + h2))
                b = -(h2 + h1) / (h1 * h2)
                cc = (2 * h2 + h1) / (h2 * (h1 + h2))
                last = a * _sl(x, d, n - 3, 1) + b * _sl(x, d, n - 2, 1) + cc * _sl(x, d, n - 1, 1)
        else:
            inner = (_sl(x, d, 2, n - 2) - _sl(x, d, 0, n - 2)) / (2 * h) if n > 2 else None
            if edge_order == 1:
                first = (_sl(x, d, 1, 1) - _sl(x, d, 0, 1)) / h
                last = (_sl(x, d, n - 1, 1) - _sl(x, d, n - 2, 1)) / h
            else:
                first = (-1.5 * _sl(x, d, 0, 1) + 2.0 * _sl(x, d, 1, 1) - 0.5 * _sl(x, d, 2, 1)) / h
                last = (0.5 * _sl(x, d, n - 3, 1) - 2.0 * _sl(x, d, n - 2, 1) + 1.5 * _sl(x, d, n - 1, 1)) / h
        parts = [first] + ([inner] if inner is not None and inner.shape[d] else []) + [last]
        res.append(_C.cat(parts, d))
    return tuple(res)


def _trap_x_diff(name: str, y: Tensor, x: Tensor, d: int) -> Tensor:
    if x.dim() == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        dx = _along(x[1:] - x[:-1], d, y.dim())
    else:
        if x.dim() != y.dim():
            x = x.expand(*y.shape) if x.dim() < y.dim() else x
        xd = _wrap_dim(name, d - y.dim(), x.dim())
        if x.shape[xd] != y.shape[d]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        m = x.shape[xd]
        dx = _sl(x, xd, 1, m - 1) - _sl(x, xd, 0, m - 1)
    return dx


@_public
def trapezoid(y: Tensor, x: Optional[Tensor] = None, *, dx: Optional[Number] = None, dim: int = -1) -> Tensor:
    """The trapezoidal rule along dim, over sample points x or spacing dx (torch.trapezoid)."""
    _check_t("trapezoid", y)
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments: both x and dx given")
    d = _wrap_dim("trapezoid", dim, y.dim())
    if y.dim() == 0:
        raise IndexError("trapezoid: Dimension out of range (expected to be in range of [-1, 0], but got -1)")
    n = y.shape[d]
    if x is not None and _is_t(x):
        dt = _C.result_type(y, x)
        yy = y if dt.is_floating_point else y.to(_C.get_default_dtype())
        if n == 0:
            return _C.sum(yy * 0, d)
        dxs = _trap_x_diff("trapezoid", yy, x, d)
        return _C.sum(dxs * (_sl(yy, d, 1, n - 1) + _sl(yy, d, 0, n - 1)), d) / 2
    h = 1 if dx is None else (x if x is not None else dx)
    yy = _to_float(y)
    if n == 0:
        return _C.sum(yy, d) * 0
    return (_C.sum(yy, d) - (yy.select(d, 0) + yy.select(d, n - 1)) * 0.5) * h


@_public
def trapz(y: Tensor, x: Optional[Tensor] = None, *, dx: Optional[Number] = None, dim: int = -1) -> Tensor:
    """The trapezoidal rule (torch.trapz, an alias of trapezoid)."""
    return trapezoid(y, x, dx=dx, dim=dim)


@_public
def cumulative_trapezoid(y: Tensor, x: Optional[Tensor] = None, *, dx: Optional[Number] = None,
                         dim: int = -1) -> Tensor:
    """The running trapezoidal rule along dim (torch.cumulative_trapezoid)."""
    _check_t("cumulative_trapezoid", y)
    if y.dim() == 0:
        raise IndexError("cumulative_trapezoid: Dimension out of range (expected to be in range of [-1, 0], "
                         "but got -1)")
    d = _wrap_dim("cumulative_trapezoid", dim, y.dim())
    n = y.shape[d]
    if x is not None and _is_t(x):
        dt = _C.result_type(y, x)
        yy = y if dt.is_floating_point else y.to(_C.get_default_dtype())
        if n == 0:
            return yy
        dxs = _trap_x_diff("cumulative_trapezoid", yy, x, d)
        return _C.cumsum(dxs * (_sl(yy, d, 1, n - 1) + _sl(yy, d, 0, n - 1)) / 2, d)
    h = 1 if dx is None else (x if x is not None else dx)
    yy = _to_float(y)
    if n == 0:
        return yy
    return _C.cumsum((_sl(yy, d, 1, n - 1) + _sl(yy, d, 0, n - 1)) * (h / 2), d)


# ------------------------------------------------------------------------------------------- small linear algebra

@_public
def dist(input: Tensor, other: Tensor, p: Number = 2) -> Tensor:
    """The p-norm of input - other (torch.dist)."""
    _check_t("dist", input)
    _check_t("dist", other, "other")
    return _C.norm(input - other, p)


@_public
def cross(input: Tensor, other: Tensor, dim: Optional[int] = None, *, out: Optional[Tensor] = None) -> Tensor:
    """The 3-D cross product along dim, the first dim of size 3 when None (torch.cross)."""
    _check_t("cross", input)
    _check_t("cross", other, "other")
    if input.dim() != other.dim():
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions, got {input.dim()} "
                           f"and {other.dim()}")
    shape = _C.broadcast_shapes(input.shape, other.shape)
    if dim is None:
        cands = [i for i, s in enumerate(shape) if s == 3]
        if not cands:
            raise RuntimeError(f"no dimension of size 3 in input (shapes {tuple(input.shape)} and "
                               f"{tuple(other.shape)})")
        d = cands[0]
    else:
        d = _wrap_dim("linalg.cross", dim, len(shape))
        if input.shape[d] != 3 or other.shape[d] != 3:
            raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                               f"{input.shape[d]} and {other.shape[d]}")
    a, b = input.expand(*shape), other.expand(*shape)
    a1, a2 = _C.roll(a, -1, d), _C.roll(a, -2, d)
    b1, b2 = _C.roll(b, -1, d), _C.roll(b, -2, d)
    return _out(a1 * b2 - a2 * b1, out)


def _check_scal(name: str, t: Tensor, beta: Number, alpha: Number) -> None:
    if not t.dtype.is_floating_point and not _cplx(t.dtype):
        for v, nm in ((beta, "beta"), (alpha, "alpha")):
            if isinstance(v, float) and t.dtype != _C.bool:
                raise RuntimeError(f"For integral input tensors, argument {nm} must not be a floating point number.")


def _axpby(name: str, input: Tensor, prod: Tensor, beta: Number, alpha: Number) -> Tensor:
    if name == "addr":
        _check_scal(name, prod, beta, alpha)
    elif not prod.dtype.is_floating_point:  # integer results take the scalars truncated, as PyTorch does
        beta, alpha = int(beta), int(alpha)
    shape = _C.broadcast_shapes(input.shape, prod.shape)
    if tuple(shape) != tuple(prod.shape):
        raise RuntimeError(f"{name}: the input of shape {tuple(input.shape)} cannot be broadcast to the "
                           f"result's shape {tuple(prod.shape)}")
    p = prod if alpha == 1 else prod * alpha
    if beta == 0:
        return p + _C.zeros_like(input.detach()).expand(*shape).to(p.dtype) * 0
    return p + (input if beta == 1 else input * beta)


@_public
def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Number = 1, alpha: Number = 1,
          out: Optional[Tensor] = None) -> Tensor:
    """beta * input + alpha * (mat @ vec) (torch.addmv)."""
    for t, nm in ((input, "input"), (mat, "mat"), (vec, "vec")):
        _check_t("addmv", t, nm)
    if mat.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.dim()}, {mat.dim()}, {vec.dim()}")
    if mat.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input.shape[0] if input.dim() else 1}), mat "
                           f"({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})")
    if input.dtype != mat.dtype or mat.dtype != vec.dtype:
        raise RuntimeError(f"addmv: expected the same dtype for all inputs, got {input.dtype}, {mat.dtype}, "
                           f"{vec.dtype}")
    return _out(_axpby("addmv", input, _C.mv(mat, vec), beta, alpha), out)


@_public
def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Number = 1, alpha: Number = 1,
         out: Optional[Tensor] = None) -> Tensor:
    """beta * input + alpha * outer(vec1, vec2) (torch.addr)."""
    for t, nm in ((input, "input"), (vec1, "vec1"), (vec2, "vec2")):
        _check_t("addr", t, nm)
    if vec1.dim() != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.dim()}-D")
    if vec2.dim() != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec2, but got {vec2.dim()}-D")
    if input.dtype == _C.bool:
        if not isinstance(beta, bool) and beta not in (0, 1) or not isinstance(alpha, bool) and alpha not in (0, 1):
            raise RuntimeError("Boolean beta only supported for Boolean results.")
        prod = _C.logical_and(vec1.unsqueeze(1), vec2.unsqueeze(0))
        r = _C.logical_and(prod, _C.tensor(bool(alpha)))
        return _out(_C.logical_or(r, _C.logical_and(input, _C.tensor(bool(beta)))) if beta else r, out)
    for value, nm in ((beta, "beta"), (alpha, "alpha")):  # torch checks beta first
        if isinstance(value, bool):
            raise RuntimeError(f"Boolean {nm} only supported for Boolean results.")
    return _out(_axpby("addr", input, _C.outer(vec1, vec2), beta, alpha), out)


@_public
def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Number = 1, alpha: Number = 1,
           out: Optional[Tensor] = None) -> Tensor:
    """beta * input + alpha * sum_i batch1[i] @ batch2[i] (torch.addbmm)."""
    for t, nm in ((input, "input"), (batch1, "batch1"), (batch2, "batch2")):
        _check_t("addbmm", t, nm)
    if batch1.dim() != 3 or batch2.dim() != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor, batch2 must be a 3D tensor (got {batch1.dim()}-D and "
                           f"{batch2.dim()}-D)")
    if batch1.shape[0] != batch2.shape[0] or batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"addbmm: incompatible batch shapes {tuple(batch1.shape)} and {tuple(batch2.shape)}")
    if batch1.shape[0] == 0:
        prod = _C.zeros(batch1.shape[1], batch2.shape[2], dtype=_C.result_type(batch1, batch2))
        prod = prod + (batch1.sum() + batch2.sum()) * 0
    else:
        prod = _C.bmm(batch1, batch2).sum(0)
    return _out(_axpby("addbmm", input, prod, beta, alpha), out)


@_public
def cov(input: Tensor, *, correction: int = 1, fweights: Optional[Tensor] = None,
        aweights: Optional[Tensor] = None) -> Tensor:
    """The covariance matrix of the variables (rows) of input (torch.cov)."""
    _check_t("cov", input)
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.dim()} dimensions")
    x = input.reshape(1, -1) if input.dim() < 2 else input
    n = x.shape[1]
    w = None
    if fweights is not None:
        if fweights.dim() > 1:
            raise RuntimeError(f"cov(): expected fweights to have one or fewer dimensions but got fweights with "
                               f"{fweights.dim()} dimensions")
        if fweights.dtype.is_floating_point or _cplx(fweights.dtype) or fweights.dtype == _C.bool:
            raise RuntimeError(f"cov(): expected fweights to have integral dtype but got fweights with "
                               f"{fweights.dtype} dtype")
        if fweights.numel() != n:
            raise RuntimeError(f"cov(): expected fweights to have the same numel as there are observations in the "
                               f"input but got {fweights.numel()} != {n}")
        if n and bool(_C.lt(fweights, 0).any()):
            raise RuntimeError("cov(): fweights cannot be negative")
        w = fweights
    if aweights is not None:
        if aweights.dim() > 1:
            raise RuntimeError(f"cov(): expected aweights to have one or fewer dimensions but got aweights with "
                               f"{aweights.dim()} dimensions")
        if not aweights.dtype.is_floating_point:
            raise RuntimeError(f"cov(): expected aweights to have floating point dtype but got aweights with "
                               f"{aweights.dtype} dtype")
        if aweights.numel() != n:
            raise RuntimeError(f"cov(): expected aweights to have the same numel as there are observations in the "
                               f"input but got {aweights.numel()} != {n}")
        if n and bool(_C.lt(aweights, 0).any()):
            raise RuntimeError("cov(): aweights cannot be negative")
        w = aweights if w is None else w * aweights
    x = _to_float(x)
    if w is None:
        avg = x.mean(1)
        w_sum = n
        fact: Any = n - correction
    else:
        w = w.reshape(-1)
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
        if correction == 0:
            fact = w_sum
        elif aweights is None:
            fact = w_sum - correction
        else:
            fact = w_sum - correction * (w * aweights.reshape(-1)).sum() / w_sum
    if _is_t(fact):
        fact = _C.clamp(fact, min=0)
    elif fact < 0:
        fact = 0
    xm = x - avg.unsqueeze(1)
    xw = xm if w is None else xm * w
    c = _C.mm(xw, xm.t())
    c = c / fact
    return c.reshape([]) if x.shape[0] == 1 else c


@_public
def corrcoef(input: Tensor) -> Tensor:
    """The Pearson correlation coefficients of the variables (rows) of input (torch.corrcoef)."""
    _check_t("corrcoef", input)
    if input.dim() > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.dim()} dimensions")
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = _C.diagonal(c)
    sd = _C.sqrt(d)
    c = c / sd.unsqueeze(1)
    c = c / sd.unsqueeze(0)
    return _C.clamp(c, -1, 1)


# --------------------------------------------------------------------------------------- floating-point bit ops

from .return_types import frexp as _FrexpResult  # noqa: E402


@_public
def frexp(input: Tensor, *, out: Optional[Tuple[Tensor, Tensor]] = None) -> Any:
    """Split into mantissa in [0.5, 1) and integer exponent: input = mantissa * 2 ** exponent (torch.frexp)."""
    _check_t("frexp", input)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"torch.frexp() only supports floating-point dtypes, got {input.dtype}")
    x64 = input.detach().to(_C.float64)
    a = _C.abs(x64)
    ok = _C.logical_and(_C.isfinite(x64), _C.ne(x64, 0))
    safe = _C.where(ok, a, _C.ones_like(a))
    e = _C.floor(_C.log2(safe)) + 1
    for _ in range(2):
        e1 = -_C.floor(e / 2)
        m = safe * _C.exp2(e1) * _C.exp2(-e - e1)
        e = _C.where(_C.ge(m, 1), e + 1, _C.where(_C.lt(m, 0.5), e - 1, e))
    e = _C.where(ok, e, _C.zeros_like(e))
    e1 = -_C.floor(e / 2)
    s1, s2 = _C.exp2(e1), _C.exp2(-e - e1)  # two factors: 2 ** -e alone overflows for subnormal inputs
    mant = input * s1 * s2 if input.dtype == _C.float64 else (input.to(_C.float64) * s1 * s2).to(input.dtype)
    res = _FrexpResult(mant, e.to(_C.int32))
    if out is not None:
        with _no_grad():
            out[0].copy_(mant)
            out[1].copy_(res[1])
        return _FrexpResult(out[0], out[1])
    return res


def _nextafter_values(x: Tensor, y: Tensor) -> Tensor:
    ity = {_C.float64: _C.int64, _C.float32: _C.int32, _C.float16: _C.int16, _C.bfloat16: _C.int16}[x.dtype]
    x, y = x.contiguous(), y.contiguous()
    bits = x.view(ity)
    up = _C.eq(_C.gt(y, x), _C.gt(x, 0))  # moving away from zero on the positive side, or toward it on the negative
    nb = _C.where(up, bits + 1, bits - 1)
    r = nb.view(x.dtype)
    tiny = _C.ones_like(bits).view(x.dtype)  # the smallest subnormal
    r = _C.where(_C.eq(x, 0), _C.copysign(tiny, y), r)
    r = _C.where(_C.eq(x, y), y, r)
    return _C.where(_C.logical_or(_C.isnan(x), _C.isnan(y)), x + y, r)


@_public
def nextafter(input: Tensor, other: Tensor, *, out: Optional[Tensor] = None) -> Tensor:
    """The next representable value after input toward other (torch.nextafter)."""
    _check_t("nextafter", input)
    _check_t("nextafter", other, "other")
    dt = _C.result_type(input, other)
    if not dt.is_floating_point:
        raise RuntimeError(f"\"nextafter_cpu\" not implemented for '{str(dt).split('.')[-1]}'")
    shape = _C.broadcast_shapes(input.shape, other.shape)
    x = input.to(dt).expand(*shape)
    y = other.to(dt).expand(*shape)
    res = _nextafter_values(x.detach(), y.detach())
    if x.requires_grad or y.requires_grad:  # PyTorch's derivatives: grad for input, zero for other
        res = _functions()["nextafter"].apply(res, x, y)
    return _out(res, out)


@_public
def gcd(input: Tensor, other: Tensor, *, out: Optional[Tensor] = None) -> Tensor:
    """The elementwise greatest common divisor of integer tensors (torch.gcd)."""
    _check_t("gcd", input)
    _check_t("gcd", other, "other")
    dt = _C.result_type(input, other)
    if dt.is_floating_point or _cplx(dt) or dt == _C.bool:
        raise RuntimeError(f"\"gcd_cpu\" not implemented for '{_dtname(dt)}'")
    return _out(_gcd(input.to(dt), other.to(dt)), out)


def _dtname(dt: Any) -> str:
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
            "bool": "Bool", "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
            "uint8": "Byte"}.get(str(dt).split(".")[-1], str(dt).split(".")[-1])


def _gcd(a: Tensor, b: Tensor) -> Tensor:
    shape = _C.broadcast_shapes(a.shape, b.shape)
    a = _C.abs(a.expand(*shape))
    b = _C.abs(b.expand(*shape))
    for _ in range(200):  # Euclid: at most ~93 steps for 64-bit integers
        nz = _C.ne(b, 0)
        if not bool(nz.any()):
            break
        bs = _C.where(nz, b, _C.ones_like(b))
        a, b = _C.where(nz, b, a), _C.where(nz, _C.remainder(a, bs), b)
    return _C.abs(a)


@_public
def lcm(input: Tensor, other: Tensor, *, out: Optional[Tensor] = None) -> Tensor:
    """The elementwise least common multiple of integer tensors (torch.lcm)."""
    _check_t("lcm", input)
    _check_t("lcm", other, "other")
    dt = _C.result_type(input, other)
    if dt.is_floating_point or _cplx(dt) or dt == _C.bool:
        raise RuntimeError(f"\"lcm_cpu\" not implemented for '{_dtname(dt)}'")
    a, b = input.to(dt), other.to(dt)
    g = _gcd(a, b)
    gs = _C.where(_C.eq(g, 0), _C.ones_like(g), g)
    res = _C.where(_C.eq(g, 0), _C.zeros_like(g), _C.abs(_C.div(a, gs, rounding_mode="trunc") * b))
    return _out(res, out)


@_public
def renorm(input: Tensor, p: Number, dim: int, maxnorm: Number, *, out: Optional[Tensor] = None) -> Tensor:
    """Each slice along dim with p-norm above maxnorm rescaled to norm maxnorm (torch.renorm)."""
    _check_t("renorm", input)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"renorm: expected a floating point or complex input, got {input.dtype}")
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported (p = {p})")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.dim() <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} dimensions")
    d = _wrap_dim("renorm", dim, input.dim())
    red = [i for i in range(input.dim()) if i != d]
    norm = _C.norm(input, p, dim=red, keepdim=True)
    factor = _C.where(_C.gt(norm, maxnorm), maxnorm / (norm + 1e-7), _C.ones_like(norm))
    return _out(input * factor, out)


@_public
def hash_tensor(input: Tensor, dim: Any = None, *, keepdim: bool = False, mode: int = 0) -> Tensor:
    """The xor of the 64-bit patterns of the elements, over dim (torch.hash_tensor)."""
    _check_t("hash_tensor", input)
    if mode != 0:
        raise RuntimeError(f"hash_tensor: only mode=0 (xor reduction) is supported, got mode={mode}")
    x = input.detach()
    if x.dtype.is_floating_point:
        bits = x.to(_C.float64).contiguous().view(_C.int64)
    elif x.dtype == _C.uint64:
        bits = x.contiguous().view(_C.int64)
    else:
        bits = x.to(_C.int64)
    nd = x.dim()
    dims = list(range(nd)) if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0) else \
        _dims_list("hash_tensor", dim, nd)
    if nd == 0:
        res = bits
    else:
        keep = [i for i in range(nd) if i not in dims]
        perm = keep + dims
        y = bits.permute(*perm)
        kshape = [x.shape[i] for i in keep]
        y = y.reshape(kshape + [-1])
        while y.shape[-1] > 1:
            m = y.shape[-1]
            h = m // 2
            z = _C.bitwise_xor(_C.narrow(y, -1, 0, h), _C.narrow(y, -1, h, h))
            y = _C.cat([z, _C.narrow(y, -1, 2 * h, m - 2 * h)], -1) if m % 2 else z
        if y.shape[-1] == 0:
            y = _C.zeros(kshape + [1], dtype=_C.int64)
        res = y.reshape(kshape)
        if keepdim:
            res = res.reshape([1 if i in dims else x.shape[i] for i in range(nd)])
    return res.contiguous().view(_C.uint64)


_FUNCTIONS: dict = {}


def _functions() -> dict:
    """The autograd.Function classes of this module, made on first use (cgrad.autograd loads after this module)."""
    if _FUNCTIONS:
        return _FUNCTIONS
    from .autograd.function import Function

    class NotDifferentiable(Function):
        """Passes values through; the backward raises, as PyTorch's not_implemented derivatives do."""

        @staticmethod
        def forward(ctx: Any, name: str, res: Tensor, *inputs: Tensor) -> Tensor:
            ctx.name = name
            return res.clone()

        @staticmethod
        def backward(ctx: Any, grad: Tensor) -> Any:
            raise NotImplementedError(f"the derivative of {ctx.name} is not implemented")

    class NextAfter(Function):
        """d nextafter(x, y) = (1, 0), as PyTorch defines it."""

        @staticmethod
        def forward(ctx: Any, res: Tensor, x: Tensor, y: Tensor) -> Tensor:
            return res.clone()

        @staticmethod
        def backward(ctx: Any, grad: Tensor) -> Any:
            return None, grad, grad * 0

    _FUNCTIONS["nodiff"] = NotDifferentiable
    _FUNCTIONS["nextafter"] = NextAfter
    _FUNCTIONS.update(_special_functions(Function))
    return _FUNCTIONS


# ------------------------------------------------------------------------------------------- special functions
# Values are computed in float64 on detached tensors (bounded loops of tensor ops: recurrences, series terms);
# the gradients come from autograd.Functions whose backward calls the differentiable ops below.

_LN_PI = math.log(math.pi)
_HALF_LN_2PI = 0.5 * math.log(2 * math.pi)
# B_2k / (2k (2k - 1)) for Stirling's series of lgamma, and B_2k / (2k) for digamma's asymptotic series
_B2K = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798, -174611 / 330]
_STIRLING = [b / ((2 * k + 2) * (2 * k + 1)) for k, b in enumerate(_B2K)]
_DIGAMMA_ASY = [b / (2 * k + 2) for k, b in enumerate(_B2K)]
_SHIFT = 12.0  # the recurrences move arguments above this before the asymptotic series


def _sinpi_cospi(x: Tensor) -> Tuple[Tensor, Tensor]:
    """sin(pi x) and cos(pi x), exact at integers and accurate near them (x reduced to [-1/2, 1/2] first)."""
    n = _C.round(x)
    r = x - n
    r = _C.where(_C.isfinite(r), r, _C.zeros_like(r))
    sgn = 1.0 - 2.0 * _C.remainder(n, 2.0)
    sgn = _C.where(_C.isfinite(sgn), sgn, _C.ones_like(sgn))
    return sgn * _C.sin(math.pi * r), sgn * _C.cos(math.pi * r)


def _horner(w: Tensor, coefs: Sequence[float]) -> Tensor:
    acc = _C.zeros_like(w) + coefs[-1]
    for c in reversed(coefs[:-1]):
        acc = acc * w + c
    return acc


def _lgamma_pos(y: Tensor) -> Tensor:
    """lgamma for y >= 1/2 (recurrence up to _SHIFT, then Stirling's series)."""
    z, prod = y, _C.ones_like(y)
    for _ in range(int(_SHIFT)):
        m = _C.lt(z, _SHIFT)
        prod = _C.where(m, prod * z, prod)
        z = _C.where(m, z + 1, z)
    w = 1.0 / z
    series = w * _horner(w * w, _STIRLING[:8])
    return (z - 0.5) * _C.log(z) - z + _HALF_LN_2PI + series - _C.log(prod)


def _zeta_int(k: int) -> float:
    """The Riemann zeta function at an integer k >= 2 (a Python float; Euler-Maclaurin after 20 terms)."""
    n = 20
    s = math.fsum(j ** -float(k) for j in range(1, n))
    s += n ** (1.0 - k) / (k - 1) + 0.5 * n ** -float(k)
    coef, fact = float(k), 1.0
    for j in range(1, len(_B2K) + 1):
        fact *= (2 * j - 1) * (2 * j)
        if j > 1:
            coef *= (k + 2 * j - 3) * (k + 2 * j - 2)
        s += _B2K[j - 1] * coef / fact * n ** (-k - 2.0 * j + 1)
    return s


# lgamma(1 + t) = -gamma t + sum_k>=2 (-1)^k zeta(k) / k t^k, for |t| <= 1/2 (exact zeros at 1 and 2)
_EULER_GAMMA = 0.5772156649015329
_LGAMMA1 = [0.0, -_EULER_GAMMA] + [(-1) ** k * _zeta_int(k) / k for k in range(2, 64)]


def _lgamma_values(x: Tensor) -> Tensor:
    refl = _C.lt(x, 0.5)
    y = _C.where(refl, 1.0 - x, x)
    y = _C.where(_C.isfinite(y), y, _C.ones_like(y))
    lp = _lgamma_pos(y)
    near = _C.lt(y, 2.5)
    t = _C.where(_C.lt(y, 1.5), y - 1, y - 2)
    t = _C.where(near, t, _C.zeros_like(t))
    ser = _horner(t, _LGAMMA1)
    ser = _C.where(_C.lt(y, 1.5), ser, ser + _C.log1p(t))
    lp = _C.where(near, ser, lp)
    s, _ = _sinpi_cospi(x)
    res = _C.where(refl, _LN_PI - _C.log(_C.abs(s)) - lp, lp)
    res = _C.where(_C.isinf(x), _C.abs(x), res)
    return _C.where(_C.isnan(x), x, res)


def _digamma_pos(y: Tensor) -> Tensor:
    z, acc = y, _C.zeros_like(y)
    for _ in range(int(_SHIFT)):
        m = _C.lt(z, _SHIFT)
        acc = _C.where(m, acc - 1.0 / z, acc)
        z = _C.where(m, z + 1, z)
    w = 1.0 / z
    w2 = w * w
    return acc + _C.log(z) - 0.5 * w - w2 * _horner(w2, _DIGAMMA_ASY[:8])


def _digamma_values(x: Tensor) -> Tensor:
    refl = _C.lt(x, 0.5)
    y = _C.where(refl, 1.0 - x, x)
    y = _C.where(_C.isfinite(y), y, _C.ones_like(y))
    dp = _digamma_pos(y)
    s, c = _sinpi_cospi(x)
    pole = _C.logical_and(_C.eq(s, 0), refl)
    ss = _C.where(pole, _C.ones_like(s), s)
    res = _C.where(refl, dp - math.pi * c / ss, dp)
    nan = _C.full_like(x, float("nan"))
    res = _C.where(pole, nan, res)
    res = _C.where(_C.eq(x, 0), _C.copysign(_C.full_like(x, float("inf")), -_C.copysign(_C.ones_like(x), x)),
                   res)
    res = _C.where(_C.isposinf(x), x, res)
    res = _C.where(_C.isneginf(x), nan, res)
    return _C.where(_C.isnan(x), x, res)


def _cot_derivative_poly(n: int) -> List[float]:
    """Coefficients (lowest first) of P_n with d^n/du^n cot(u) = P_n(cot u)."""
    p = [0.0, 1.0]
    for _ in range(n):
        dp = [i * p[i] for i in range(1, len(p))] or [0.0]
        q = [0.0] * (len(dp) + 2)  # -(1 + c^2) * dp
        for i, v in enumerate(dp):
            q[i] -= v
            q[i + 2] -= v
        p = q
    return p


def _hurwitz_pos(s: int, y: Tensor) -> Tensor:
    """zeta(s, y) for integer s >= 2 and y >= 1/2 (direct sum up to the shift, then Euler-Maclaurin)."""
    shift = max(_SHIFT + 8, 2.0 * s + 8)
    z, acc = y, _C.zeros_like(y)
    for _ in range(int(shift)):
        m = _C.lt(z, shift)
        acc = _C.where(m, acc + _C.pow(z, -float(s)), acc)
        z = _C.where(m, z + 1, z)
    zs = _C.pow(z, -float(s))
    tail = z * zs / (s - 1) + 0.5 * zs
    fact, term_coef = 1.0, float(s)  # s (s+1) ... (s+2k-2) / (2k)!
    w = 1.0 / z
    zk = zs * w  # z^(-s-1)
    for k in range(1, len(_B2K) + 1):
        fact *= (2 * k - 1) * (2 * k)
        if k > 1:
            term_coef *= (s + 2 * k - 3) * (s + 2 * k - 2)
        tail = tail + (_B2K[k - 1] * term_coef / fact) * zk
        zk = zk * w * w
    return acc + tail


def _polygamma_values(n: int, x: Tensor, dtype: Any = None) -> Tensor:
    if n == 0:
        return _digamma_values(x)
    dtype = dtype or x.dtype
    refl = _C.lt(x, 0.5)
    y = _C.where(refl, 1.0 - x, x)
    y = _C.where(_C.isfinite(y), y, _C.ones_like(y))
    sign = (-1.0) ** (n + 1) * math.factorial(n)
    pp = sign * _hurwitz_pos(n + 1, y)
    s, c = _sinpi_cospi(x)
    pole = _C.logical_and(_C.eq(s, 0), refl)
    cot = c / _C.where(pole, _C.ones_like(s), s)
    dcot = (math.pi ** (n + 1)) * _horner(cot, _cot_derivative_poly(n))
    res = _C.where(refl, (-1.0) ** n * pp - dcot, pp)
    if n == 1 and bool(pole.any()):
        # PyTorch's trigamma divides by sin(pi x) computed in the input's dtype, which is not zero at the
        # negative integers: its values there are pi^2 / sin(pi x)^2 (finite), inf at 0
        xd = x.to(dtype)
        sx = _C.sin(xd * math.pi).to(_C.float64)
        at_pole = math.pi ** 2 / (sx * sx) - _C.where(pole, pp, _C.zeros_like(pp))
        res = _C.where(pole, at_pole, res)
    else:
        res = _C.where(pole, _C.full_like(x, (-1.0) ** (n + 1) * float("inf")), res)
    if n == 1:
        res = _C.where(_C.isposinf(x), _C.zeros_like(x), res)
        res = _C.where(_C.isneginf(x), _C.full_like(x, float("nan")), res)
    else:  # as PyTorch's zeta-based values: nan at +inf, the pole's infinity at -inf
        res = _C.where(_C.isposinf(x), _C.full_like(x, float("nan")), res)
        res = _C.where(_C.isneginf(x), _C.full_like(x, (-1.0) ** (n + 1) * float("inf")), res)
    return _C.where(_C.isnan(x), x, res)


def _bessel_i_values(nu: int, x: Tensor) -> Tensor:
    """I_0 or I_1: the power series for |x| <= 30, the asymptotic expansion above."""
    a = _C.abs(x)
    small = _C.le(a, 30.0)
    xs = _C.where(small, a, _C.zeros_like(a))
    q = xs * xs / 4
    t = _C.ones_like(a) if nu == 0 else xs / 2
    acc = t
    for k in range(90):
        t = t * q / ((k + 1) * (k + 1 + nu))
        acc = acc + t
    xl = _C.where(small, _C.full_like(a, 31.0), a)
    xl = _C.where(_C.isfinite(xl), xl, _C.full_like(a, 31.0))
    mu = 4.0 * nu * nu
    term = _C.ones_like(a)
    ser = term
    for k in range(1, 30):
        term = term * (-(mu - (2 * k - 1) ** 2)) / (k * 8.0 * xl)
        ser = ser + term
    big = _C.exp(xl - 0.5 * _C.log(2 * math.pi * xl)) * ser
    res = _C.where(small, acc, big)
    # PyTorch's values (exp(x) times a series): inf once exp(|x|) overflows, nan at +-inf
    res = _C.where(_C.gt(a, 709.782712893384), _C.full_like(a, float("inf")), res)
    res = _C.where(_C.isinf(a), _C.full_like(a, float("nan")), res)
    if nu == 1:
        res = _C.copysign(res, x)
    return _C.where(_C.isnan(x), x, res)


def _special_values(kind: str, n: int, x: Tensor) -> Tensor:
    x64 = x.detach().to(_C.float64)
    if kind == "lgamma":
        r = _lgamma_values(x64)
    elif kind == "polygamma":
        r = _polygamma_values(n, x64, x.dtype)
    else:
        r = _bessel_i_values(n, x64)
    return r.to(x.dtype)


def _special_grad(kind: str, n: int, x: Tensor) -> Tensor:
    """The derivative of the special function, as differentiable cgrad ops."""
    if kind == "lgamma":
        return digamma(x)
    if kind == "polygamma":
        return polygamma(n + 1, x)
    if n == 0:
        return _special_apply("bessel_i", 1, x)
    tiny = _C.gt(_C.abs(x), 2.220446049250313e-16)
    xs = _C.where(tiny, x, _C.full_like(x, 2.220446049250313e-16))
    g = _special_apply("bessel_i", 0, xs) - _special_apply("bessel_i", 1, xs) / xs
    return _C.where(tiny, g, _C.full_like(g, 0.5))


def _special_functions(Function: Any) -> dict:
    class Special(Function):
        """A special function of one tensor; backward multiplies by its derivative (itself differentiable)."""

        @staticmethod
        def forward(ctx: Any, x: Tensor, kind: str, n: int) -> Tensor:
            ctx.save_for_backward(x)
            ctx.kind, ctx.n = kind, n
            return _special_values(kind, n, x)

        @staticmethod
        def backward(ctx: Any, grad: Tensor) -> Any:
            (x,) = ctx.saved_tensors
            return grad * _special_grad(ctx.kind, ctx.n, x), None, None

    return {"special": Special}


def _special_apply(kind: str, n: int, x: Tensor) -> Tensor:
    if x.requires_grad:
        return _functions()["special"].apply(x, kind, n)
    return _special_values(kind, n, x)


@_public
def lgamma(input: Tensor, *, out: Optional[Tensor] = None) -> Tensor:
    """The log of the absolute value of the gamma function (torch.lgamma)."""
    _check_t("lgamma", input)
    return _out(_special_apply("lgamma", 0, _to_float(input)), out)


@_public
def digamma(input: Tensor, *, out: Optional[Tensor] = None) -> Tensor:
    """The logarithmic derivative of the gamma function (torch.digamma)."""
    _check_t("digamma", input)
    return _out(_special_apply("polygamma", 0, _to_float(input)), out)


@_public
def polygamma(n: int, input: Tensor, *, out: Optional[Tensor] = None) -> Tensor:
    """The n-th derivative of the digamma function (torch.polygamma)."""
    _check_t("polygamma", input)
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"polygamma(): argument 'n' must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return _out(_special_apply("polygamma", n, _to_float(input)), out)


@_public
def mvlgamma(input: Tensor, p: int, *, out: Optional[Tensor] = None) -> Tensor:
    """The multivariate log-gamma function of dimension p (torch.mvlgamma)."""
    _check_t("mvlgamma", input)
    if p < 1:
        raise RuntimeError(f"p has to be greater than or equal to 1 (got p = {p})")
    x = _to_float(input)
    if x.numel() and not bool(_C.gt(x.detach(), (p - 1) / 2).all()):
        raise RuntimeError(f"All elements must be greater than (p-1)/2 = {(p - 1) / 2} (mvlgamma, p = {p})")
    res = lgamma(x)
    for i in range(1, p):
        res = res + lgamma(x - i / 2)
    return _out(res + p * (p - 1) / 4 * _LN_PI, out)


@_public
def i0(input: Tensor, *, out: Optional[Tensor] = None) -> Tensor:
    """The modified Bessel function of the first kind, order 0 (torch.i0)."""
    _check_t("i0", input)
    return _out(_special_apply("bessel_i", 0, _to_float(input)), out)


# ------------------------------------------------------------------------------------------------ Tensor methods

def _method(name: str) -> Any:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        return globals()[name](self, *args, **kwargs)
    method.__name__ = name
    method.__doc__ = f"See cgrad.{name}."
    return method


def _inplace(name: str) -> Any:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        src = self.clone() if self.requires_grad else self  # the graph keeps the old values
        res = globals()[name](src, *args, **kwargs)
        if res.dtype != self.dtype and not _C.can_cast(res.dtype, self.dtype):
            raise RuntimeError(f"result type {_dtname(res.dtype)} can't be cast to the desired output type "
                               f"{_dtname(self.dtype)}")
        if tuple(res.shape) != tuple(self.shape):
            raise RuntimeError(f"{name}_: the result's shape {tuple(res.shape)} does not match the in-place "
                               f"tensor's shape {tuple(self.shape)}")
        return self.copy_(res)
    method.__name__ = name + "_"
    method.__doc__ = f"In-place cgrad.{name}."
    return method


_METHODS = ("deg2rad", "rad2deg", "sgn", "conj", "conj_physical", "angle", "isreal", "signbit", "heaviside", "sinc",
            "xlogy", "logit", "diff", "dist", "cross", "addmv", "addr", "addbmm", "cov", "corrcoef", "frexp", "ldexp",
            "nextafter", "gcd", "lcm", "lgamma", "digamma", "mvlgamma", "i0", "renorm", "hash_tensor")
_INPLACE = ("deg2rad", "rad2deg", "sgn", "heaviside", "sinc", "xlogy", "logit", "addmv", "addr", "addbmm",
            "ldexp", "nextafter", "gcd", "lcm", "lgamma", "digamma", "mvlgamma", "i0", "renorm")


@_public
def is_floating_point(input: Tensor) -> bool:
    """True when input's dtype is a floating-point one (torch.is_floating_point)."""
    return input.is_floating_point()


@_public
def is_complex(input: Tensor) -> bool:
    """True when input's dtype is complex: never, as cgrad has no complex dtypes (torch.is_complex)."""
    return False


@_public
def is_nonzero(input: Tensor) -> bool:
    """The truth of a one-element tensor (torch.is_nonzero); RuntimeError for none or several elements."""
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.reshape(()).item() != 0)


class MathMethods:
    """The Tensor methods of this module's ops (cgrad.Tensor inherits them)."""

    def is_complex(self) -> bool:
        """False: cgrad has no complex dtypes."""
        return False

    def is_nonzero(self) -> bool:
        """torch.is_nonzero."""
        return is_nonzero(self)

    def __rdiv__(self, other: Any) -> Tensor:
        """other / self."""
        if not _is_t(self):
            raise TypeError(f"descriptor '__rdiv__' requires a 'Tensor' object but received a "
                            f"'{type(self).__name__}'")
        return self.__rtruediv__(other)

    def conj_physical_(self) -> Tensor:
        """In-place conj_physical: a real tensor is unchanged."""
        if _cplx(self.dtype):
            raise NotImplementedError("conj_physical_: complex tensors are not supported by cgrad")
        return self

    @property
    def real(self) -> Tensor:
        """The real part: the tensor itself for a real tensor (torch.Tensor.real)."""
        return globals()["real"](self)

    def polygamma(self, n: int) -> Tensor:
        """See cgrad.polygamma (the order comes first there)."""
        return globals()["polygamma"](n, self)

    def polygamma_(self, n: int) -> Tensor:
        """In-place cgrad.polygamma."""
        src = self.clone() if self.requires_grad else self
        return self.copy_(_checked_inplace(self, globals()["polygamma"](n, src)))

    def cauchy_(self, median: float = 0.0, sigma: float = 1.0, *, generator: Any = None) -> Tensor:
        """Fill with Cauchy(median, sigma) samples."""
        return _random_fill(self, "cauchy_", lambda u: median + sigma * _C.tan(math.pi * (u - 0.5)),
                            sigma > 0, f"cauchy_ expects sigma > 0.0, but found sigma={sigma}", generator)

    def exponential_(self, lambd: float = 1.0, *, generator: Any = None) -> Tensor:
        """Fill with Exponential(lambd) samples."""
        return _random_fill(self, "exponential_", lambda u: -_C.log1p(-u) / lambd, lambd > 0,
                            f"exponential_ expects lambda > 0.0, but found lambda={lambd}", generator)

    def geometric_(self, p: float, *, generator: Any = None) -> Tensor:
        """Fill with Geometric(p) samples (trials to the first success)."""
        return _random_fill(self, "geometric_", lambda u: _C.ceil(_C.log1p(-u) / math.log1p(-p)) if p < 1 else
                            _C.ones_like(u), 0 < p <= 1 if p == p else False,
                            f"geometric_ expects p to be in (0, 1), but got p={p}", generator)

    def log_normal_(self, mean: float = 1.0, std: float = 2.0, *, generator: Any = None) -> Tensor:
        """Fill with samples whose logarithm is Normal(mean, std)."""
        if not std > 0:
            raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
        if not self.dtype.is_floating_point:
            raise RuntimeError(f"log_normal_ expects a floating point tensor, got {self.dtype}")
        z = _C.empty(list(self.shape), dtype=_C.float64).normal_(generator=generator) if generator is not None \
            else _C.empty(list(self.shape), dtype=_C.float64).normal_()
        with _no_grad():
            return self.copy_(_C.exp(z * std + mean))


def _checked_inplace(self: Tensor, res: Tensor) -> Tensor:
    if res.dtype != self.dtype and not _C.can_cast(res.dtype, self.dtype):
        raise RuntimeError(f"result type {_dtname(res.dtype)} can't be cast to the desired output type "
                           f"{_dtname(self.dtype)}")
    return res


def _random_fill(self: Tensor, name: str, transform: Any, ok: bool, msg: str, generator: Any) -> Tensor:
    if not ok:
        raise RuntimeError(msg)
    if not self.dtype.is_floating_point and name != "geometric_":
        raise RuntimeError(f"{name} expects a floating point tensor, got {self.dtype}")
    u = _C.empty(list(self.shape), dtype=_C.float64)
    u = u.uniform_(generator=generator) if generator is not None else u.uniform_()
    with _no_grad():
        return self.copy_(transform(u))


for _n in _METHODS:
    if not hasattr(_C._TensorBase, _n):
        setattr(MathMethods, _n, _method(_n))
for _n in _INPLACE:
    if not hasattr(_C._TensorBase, _n + "_") and _n + "_" not in MathMethods.__dict__:
        setattr(MathMethods, _n + "_", _inplace(_n))
del _n
