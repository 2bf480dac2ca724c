"""Half-precision products (Note [Half GEMM], Note [Half conv]): bfloat16 and
float16 matmul / mm / bmm / addmm / baddbmm, linear and convolution (forward,
transpose, gradients) against PyTorch in the same dtype and against a float64
reference on the same half values, with the error bound of float32
accumulation plus one rounding to the half type; and the allocator peak of a
bf16 product, far below whole float32 copies of its operands."""
from __future__ import annotations

import gc

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import cgrad
import cgrad.nn.functional as F
from cgrad import memory

LOW = ("bfloat16", "float16")
# half the spacing of the half type at 1.0: one rounding's relative error
UNIT = {"bfloat16": 2.0 ** -8, "float16": 2.0 ** -11}
F32 = 2.0 ** -24


def pair(shape, dt: str, seed: int, requires_grad: bool = False, scale: float = 1.0):
    """The same half values as a cgrad and a torch tensor, plus float64 numpy."""
    x = (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)
    t = torch.from_numpy(x).to(getattr(torch, dt))
    c = cgrad.from_numpy(x).to(getattr(cgrad, dt))
    ref = t.double().numpy()
    assert np.array_equal(c.float().numpy().astype(np.float64), ref)  # both round to nearest even
    if requires_grad:
        t.requires_grad_(True)
        c.requires_grad_(True)
    return c, t, ref


def f64(x) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        return x.detach().double().numpy()
    return x.detach().float().numpy().astype(np.float64)


def check(c, t, ref: np.ndarray, absref: np.ndarray, k: int, dt: str) -> None:
    """c (cgrad, dtype dt) within one rounding of the float64 reference plus
    float32 accumulation over depth k. torch's result t is checked loosely
    (twice that plus a rounding of the sum of magnitudes): its bf16 transposed
    convolution rounds intermediates (0.0 where the exact value is 0.0026)."""
    assert str(c.dtype) == "cgrad." + dt and tuple(c.shape) == ref.shape
    bound = UNIT[dt] * np.abs(ref) + (k + 2) * F32 * absref + 1e-30
    err = np.abs(f64(c) - ref)
    assert (err <= bound).all(), f"max excess {np.max(err - bound)}"
    if t is not None:
        assert (np.abs(f64(c) - f64(t)) <= 2 * bound + 2 * UNIT[dt] * absref).all()


def close(c, t, dt: str) -> None:
    """Gradients: cgrad's within a few roundings of torch's (same dtype)."""
    a, b = f64(c), f64(t)
    assert a.shape == b.shape
    scale = np.max(np.abs(b)) if b.size else 0.0
    assert np.allclose(a, b, rtol=4 * UNIT[dt], atol=4 * UNIT[dt] * scale), np.max(np.abs(a - b))


# ---------------------------------------------------------------- matrix products

SHAPES = [  # (a shape, b shape)
    ((5, 7), (7, 3)),
    ((1, 1), (1, 1)),
    ((0, 4), (4, 3)),
    ((3, 4), (4, 0)),
    ((3, 0), (0, 2)),
    ((1, 700), (700, 9)),
    ((9, 1100), (1100, 6)),          # deep and narrow: one deep panel
    ((600, 40), (40, 1100)),         # more rows / columns than a panel
    ((520, 600), (600, 1030)),       # depth blocks of 256: three
    ((2, 3, 5, 300), (300, 4)),      # folded batch
    ((3, 5, 300), (1, 300, 4)),      # broadcast batch
    ((7,), (7, 5)),
    ((5, 7), (7,)),
    ((300,), (300,)),
]


@pytest.mark.parametrize("dt", LOW)
@pytest.mark.parametrize("sa,sb", SHAPES)
def test_matmul_against_float64_and_torch(dt, sa, sb):
    a, ta, ra = pair(sa, dt, 1)
    b, tb, rb = pair(sb, dt, 2)
    k = sa[-1]
    check(cgrad.matmul(a, b), torch.matmul(ta, tb), np.matmul(ra, rb), np.matmul(np.abs(ra), np.abs(rb)), k, dt)


@pytest.mark.parametrize("dt", LOW)
def test_transposed_and_strided_operands(dt):
    a, ta, ra = pair((300, 40), dt, 3)
    b, tb, rb = pair((60, 600), dt, 4)
    # a^T (40, 300) column-major; b[:, ::2]^T (300, 60) with no unit stride
    cg = cgrad.matmul(a.t(), b[:, ::2].t())
    tt = torch.matmul(ta.t(), tb[:, ::2].t())
    r1, r2 = ra.T, rb[:, ::2].T
    check(cg, tt, r1 @ r2, np.abs(r1) @ np.abs(r2), 300, dt)
    x, tx, rx = pair((4, 50, 3), dt, 5)
    y, ty, ry = pair((4, 6, 50), dt, 6)
    check(cgrad.bmm(x.transpose(1, 2), y.transpose(1, 2)), torch.bmm(tx.transpose(1, 2), ty.transpose(1, 2)),
          np.matmul(rx.transpose(0, 2, 1), ry.transpose(0, 2, 1)),
          np.matmul(np.abs(rx).transpose(0, 2, 1), np.abs(ry).transpose(0, 2, 1)), 50, dt)


@pytest.mark.parametrize("dt", LOW)
@pytest.mark.parametrize("beta,alpha", [(1.0, 1.0), (0.5, -2.0), (0.0, 1.5)])
def test_addmm_and_baddbmm(dt, beta, alpha):
    s, ts, rs = pair((6, 5), dt, 7)
    a, ta, ra = pair((6, 400), dt, 8)
    b, tb, rb = pair((400, 5), dt, 9)
    ref = (beta * rs if beta else 0) + alpha * (ra @ rb)
    absref = abs(beta) * np.abs(rs) + abs(alpha) * (np.abs(ra) @ np.abs(rb))
    check(cgrad.addmm(s, a, b, beta=beta, alpha=alpha), torch.addmm(ts, ta, tb, beta=beta, alpha=alpha), ref, absref,
          400, dt)
    s3, ts3, rs3 = pair((5,), dt, 10)  # broadcast self
    x, tx, rx = pair((3, 6, 30), dt, 11)
    y, ty, ry = pair((3, 30, 5), dt, 12)
    ref = (beta * rs3 if beta else 0) + alpha * np.matmul(rx, ry)
    absref = abs(beta) * np.abs(rs3) + abs(alpha) * np.matmul(np.abs(rx), np.abs(ry))
    check(cgrad.baddbmm(s3, x, y, beta=beta, alpha=alpha), torch.baddbmm(ts3, tx, ty, beta=beta, alpha=alpha), ref,
          absref, 30, dt)


@pytest.mark.parametrize("dt", LOW)
def test_matmul_gradients_against_torch(dt):
    a, ta, _ = pair((3, 8, 300), dt, 13, requires_grad=True)
    b, tb, _ = pair((300, 5), dt, 14, requires_grad=True)
    g, tg, _ = pair((3, 8, 5), dt, 15)
    cgrad.matmul(a, b).backward(g)
    torch.matmul(ta, tb).backward(tg)
    assert a.grad.dtype == a.dtype and b.grad.dtype == b.dtype
    close(a.grad, ta.grad, dt)
    close(b.grad, tb.grad, dt)


# ---------------------------------------------------------------- linear

@pytest.mark.parametrize("dt", LOW)
@pytest.mark.parametrize("bias", [True, False])
def test_linear_forward_and_gradients(dt, bias):
    x, tx, rx = pair((4, 6, 300), dt, 16, requires_grad=True)
    w, tw, rw = pair((7, 300), dt, 17, requires_grad=True)
    b, tb, rb = pair((7,), dt, 18, requires_grad=True) if bias else (None, None, 0.0)
    out = F.linear(x, w, b)
    tout = TF.linear(tx, tw, tb)
    check(out, tout, rx @ rw.T + rb, np.abs(rx) @ np.abs(rw).T + np.abs(rb), 300, dt)
    g, tg, _ = pair((4, 6, 7), dt, 19)
    out.backward(g)
    tout.backward(tg)
    close(x.grad, tx.grad, dt)
    close(w.grad, tw.grad, dt)
    if bias:
        close(b.grad, tb.grad, dt)


# ---------------------------------------------------------------- convolution

CONVS = [  # (spatial dims, input shape, weight shape, kwargs)
    (1, (2, 4, 30), (6, 4, 3), dict(stride=2, padding=1)),
    (2, (2, 3, 11, 9), (8, 3, 3, 3), dict(padding=1)),                 # 'same': the row-block path for float32
    (2, (1, 4, 10, 10), (4, 2, 3, 3), dict(stride=2, dilation=2, groups=2)),
    (2, (3, 5, 6, 6), (7, 5, 1, 1), {}),                               # pointwise
    (3, (1, 2, 5, 6, 4), (3, 2, 2, 3, 2), dict(padding=(1, 0, 1))),
    (2, (16, 4, 32, 32), (8, 4, 3, 3), dict(padding=1)),               # chunks of two samples
    (2, (3, 8, 64, 64), (8, 8, 3, 3), dict(padding=1)),                # chunks of one sample
]


def _conv(lib, nd: int):
    return getattr(F if lib == "cg" else TF, f"conv{nd}d")


@pytest.mark.parametrize("dt", LOW)
@pytest.mark.parametrize("nd,xs,ws,kw", CONVS)
def test_conv_forward_and_gradients(dt, nd, xs, ws, kw):
    x, tx, rx = pair(xs, dt, 20, requires_grad=True)
    w, tw, rw = pair(ws, dt, 21, requires_grad=True)
    b, tb, rb = pair((ws[0],), dt, 22, requires_grad=True)
    out = _conv("cg", nd)(x, w, b, **kw)
    tout = _conv("torch", nd)(tx, tw, tb, **kw)
    fn = _conv("torch", nd)
    t64 = lambda v: torch.from_numpy(np.ascontiguousarray(v))
    ref = fn(t64(rx), t64(rw), t64(rb), **kw).numpy()
    absref = fn(t64(np.abs(rx)), t64(np.abs(rw)), t64(np.abs(rb)), **kw).numpy()
    k = int(np.prod(ws[1:]))
    check(out, tout, ref, absref, k, dt)
    g, tg, _ = pair(tuple(out.shape), dt, 23)
    out.backward(g)
    tout.backward(tg)
    close(x.grad, tx.grad, dt)   # the transposed conv
    close(w.grad, tw.grad, dt)   # the weight gradient
    close(b.grad, tb.grad, dt)


@pytest.mark.parametrize("dt", LOW)
def test_conv_transpose_against_float64_and_torch(dt):
    y, ty, ry = pair((2, 6, 5, 7), dt, 24, requires_grad=True)
    w, tw, rw = pair((6, 3, 3, 3), dt, 25, requires_grad=True)
    kw = dict(stride=2, padding=1, output_padding=1)
    out = F.conv_transpose2d(y, w, **kw)
    tout = TF.conv_transpose2d(ty, tw, **kw)
    t64 = lambda v: torch.from_numpy(np.ascontiguousarray(v))
    ref = TF.conv_transpose2d(t64(ry), t64(rw), **kw).numpy()
    absref = TF.conv_transpose2d(t64(np.abs(ry)), t64(np.abs(rw)), **kw).numpy()
    check(out, tout, ref, absref, 6 * 9, dt)
    g, tg, _ = pair(tuple(out.shape), dt, 26)
    out.backward(g)
    tout.backward(tg)
    close(y.grad, ty.grad, dt)
    close(w.grad, tw.grad, dt)


# ---------------------------------------------------------------- memory

def test_bf16_product_peak_memory_stays_below_float32_copies():
    """A bf16 (1024, 4096) @ (4096, 1024): the float32 accumulator (4 MiB),
    the bf16 result (2 MiB) and the panels (at most (512 + 1024) x 256 floats:
    1.5 MiB) are all it allocates, where whole float32 copies of the two
    operands alone would be 32 MiB."""
    a = cgrad.from_numpy(np.ones((1024, 4096), np.float32)).to(cgrad.bfloat16)
    b = cgrad.from_numpy(np.ones((4096, 1024), np.float32)).to(cgrad.bfloat16)
    gc.collect()
    memory.reset_peak_memory_stats()
    base = memory.memory_allocated()
    c = cgrad.matmul(a, b)
    peak = memory.max_memory_allocated() - base
    assert float(c[3, 5]) == 4096.0
    assert peak <= (4 + 2 + 1.5) * 2 ** 20 + 65536, peak
    assert peak < 32 * 2 ** 20 / 4
