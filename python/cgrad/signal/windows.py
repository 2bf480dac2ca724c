"""cgrad.signal.windows: torch.signal.windows' window functions (bartlett,
blackman, cosine, exponential, gaussian, general_cosine, general_hamming,
hamming, hann, kaiser, nuttall), with PyTorch's arguments and defaults."""
from __future__ import annotations

import math
import operator
from collections.abc import Iterable
from typing import Any, List, Optional

__all__: List[str] = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
                      "general_hamming", "hamming", "hann", "kaiser", "nuttall"]

# I0 switches from its power series to its large-argument asymptotic series here.
_I0_SPLIT = 25.0
_I0_SERIES_TERMS = 48
_I0_ASYMPTOTIC_TERMS = 30


def _checks(name: str, M: Any, dtype: Any, layout: Any) -> Any:
    """The window length as an int and the dtype, after PyTorch's common checks."""
    import cgrad
    if isinstance(M, bool):
        raise TypeError(f"{name}: M must be an int, got bool")
    try:
        M = operator.index(M)
    except TypeError:
        raise TypeError(f"{name}: M must be an int, got {type(M).__name__}") from None
    if dtype is None:
        dtype = cgrad.get_default_dtype()
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not None and str(layout).split(".")[-1] != "strided":
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (cgrad.float32, cgrad.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return M, dtype


def _finish(w: Any, dtype: Any, device: Any, requires_grad: bool) -> Any:
    """w (computed in float64) as the requested dtype and device, a leaf that requires grad if asked."""
    w = w.to(dtype=dtype)
    if device is not None and str(device) != str(w.device):
        w = w.to(device)
    w = w.detach()
    if requires_grad:
        w.requires_grad_(True)
    return w


def _trivial(M: int, dtype: Any, device: Any, requires_grad: bool) -> Any:
    """The window of length 0 (empty) or 1 (a one)."""
    import cgrad
    return _finish(cgrad.ones((M,), dtype=cgrad.float64), dtype, device, requires_grad)


def _n(M: int) -> Any:
    import cgrad
    return cgrad.arange(M, dtype=cgrad.float64)


def _i0e(x: Any) -> Any:
    """exp(-|x|) * I0(x), the exponentially scaled modified Bessel function of order 0, in float64."""
    import cgrad
    ax = cgrad.abs(x)
    # |x| <= split: sum_k ((x/2)^k / k!)^2, every term positive.
    small = cgrad.clamp(ax, max=_I0_SPLIT)
    q = small * small * 0.25
    term = cgrad.ones_like(q)
    series = cgrad.ones_like(q)
    for k in range(1, _I0_SERIES_TERMS):
        term = term * q / float(k * k)
        series = series + term
    series = series * cgrad.exp(-small)
    # |x| > split: e^x / sqrt(2 pi x) * sum_k prod_j (2j-1)^2 / (k! (8x)^k).
    big = cgrad.clamp(ax, min=_I0_SPLIT)
    inv = 1.0 / (8.0 * big)
    term = cgrad.ones_like(big)
    asym = cgrad.ones_like(big)
    for k in range(1, _I0_ASYMPTOTIC_TERMS):
        term = term * inv * float((2 * k - 1) ** 2) / float(k)
        asym = asym + term
    asym = asym / cgrad.sqrt(2.0 * math.pi * big)
    return cgrad.where(ax <= _I0_SPLIT, series, asym)


def exponential(M: int, *, center: Optional[float] = None, tau: float = 1.0, sym: bool = True, dtype: Any = None,
                layout: Any = None, device: Any = None, requires_grad: bool = False) -> Any:
    """Exponential (Poisson) window: exp(-|n - center| / tau)."""
    import cgrad
    M, dtype = _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _trivial(0, dtype, device, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    k = (_n(M) - float(center)) / float(tau)
    return _finish(cgrad.exp(-cgrad.abs(k)), dtype, device, requires_grad)


def cosine(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None, device: Any = None,
           requires_grad: bool = False) -> Any:
    """Cosine (sine) window: sin(pi (n + 1/2) / M)."""
    import cgrad
    M, dtype = _checks("cosine", M, dtype, layout)
    if M == 0:
        return _trivial(0, dtype, device, requires_grad)
    constant = math.pi / (M + 1 if not sym and M > 1 else M)
    return _finish(cgrad.sin((_n(M) + 0.5) * constant), dtype, device, requires_grad)


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype: Any = None, layout: Any = None,
             device: Any = None, requires_grad: bool = False) -> Any:
    """Gaussian window: exp(-(n - (M - 1) / 2)^2 / (2 std^2))."""
    import cgrad
    M, dtype = _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _trivial(0, dtype, device, requires_grad)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    k = (_n(M) + start) / (float(std) * math.sqrt(2.0))
    return _finish(cgrad.exp(-(k * k)), dtype, device, requires_grad)


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype: Any = None, layout: Any = None,
           device: Any = None, requires_grad: bool = False) -> Any:
    """Kaiser window: I0(beta sqrt(1 - (2n / (M - 1) - 1)^2)) / I0(beta)."""
    import cgrad
    M, dtype = _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M <= 1:
        return _trivial(M, dtype, device, requires_grad)
    beta = float(beta)
    constant = 2.0 * beta / (M if not sym else M - 1)
    k = cgrad.clamp(_n(M) * constant - beta, min=-beta, max=beta)
    arg = cgrad.sqrt(cgrad.clamp(beta * beta - k * k, min=0.0))
    b = cgrad.full((1,), beta, dtype=cgrad.float64)
    w = _i0e(arg) / _i0e(b) * cgrad.exp(arg - beta)
    return _finish(w, dtype, device, requires_grad)


def general_cosine(M: int, *, a: Iterable, sym: bool = True, dtype: Any = None, layout: Any = None,
                   device: Any = None, requires_grad: bool = False) -> Any:
    """Generalized cosine window: sum_i (-1)^i a_i cos(2 pi i n / (M - 1))."""
    import cgrad
    M, dtype = _checks("general_cosine", M, dtype, layout)
    if M <= 1:
        return _trivial(M, dtype, device, requires_grad)
    if not isinstance(a, Iterable) or isinstance(a, (str, bytes)):
        raise TypeError("Coefficients must be a list/tuple")
    coeffs = [float(c) for c in a]
    if not coeffs:
        raise ValueError("Coefficients cannot be empty")
    k = _n(M) * (2.0 * math.pi / (M if not sym else M - 1))
    w = cgrad.zeros((M,), dtype=cgrad.float64)
    for i, c in enumerate(coeffs):
        w = w + ((-1.0) ** i * c) * cgrad.cos(k * float(i))
    return _finish(w, dtype, device, requires_grad)


def general_hamming(M: int, *, alpha: float = 0.54, sym: bool = True, dtype: Any = None, layout: Any = None,
                    device: Any = None, requires_grad: bool = False) -> Any:
    """Generalized Hamming window: alpha - (1 - alpha) cos(2 pi n / (M - 1))."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def hamming(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None, device: Any = None,
            requires_grad: bool = False) -> Any:
    """Hamming window: the general Hamming window with alpha = 0.54."""
    _checks("hamming", M, dtype, layout)
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None, device: Any = None,
         requires_grad: bool = False) -> Any:
    """Hann window: the general Hamming window with alpha = 0.5."""
    _checks("hann", M, dtype, layout)
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None, device: Any = None,
             requires_grad: bool = False) -> Any:
    """Blackman window: the general cosine window with a = [0.42, 0.5, 0.08]."""
    _checks("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def bartlett(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None, device: Any = None,
             requires_grad: bool = False) -> Any:
    """Bartlett (triangular) window: 1 - |2n / (M - 1) - 1|."""
    import cgrad
    M, dtype = _checks("bartlett", M, dtype, layout)
    if M <= 1:
        return _trivial(M, dtype, device, requires_grad)
    k = _n(M) * (2.0 / (M if not sym else M - 1)) - 1.0
    return _finish(1.0 - cgrad.abs(k), dtype, device, requires_grad)


def nuttall(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None, device: Any = None,
            requires_grad: bool = False) -> Any:
    """Nuttall window: the minimum 4-term Blackman-Harris general cosine window."""
    _checks("nuttall", M, dtype, layout)
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym, dtype=dtype,
                          layout=layout, device=device, requires_grad=requires_grad)
