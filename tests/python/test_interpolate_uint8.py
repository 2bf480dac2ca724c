"""uint8 F.interpolate against torch: nearest / nearest-exact (1-D to 3-D) and
4-D bilinear / bicubic with and without antialias, bit for bit (PyTorch's
fixed-point passes, Note [uint8 resampling] in src/ops/nn_resample.c), the
output's dtype and strides (channels-last in, channels-last out), non-contiguous,
empty-batch and same-size inputs, and the NotImplementedError PyTorch raises
for the modes and integer dtypes its CPU kernels refuse.

Where torch's answer depends on its code path (AVX2 kernel for C <= 4, generic
loop otherwise or without AVX2), the test compares with `_reference` below, a
transcription of the Note: the generic loop's height pass reuses the first
row's taps when the output width is 1, and cgrad keeps the separable values
there. So no check depends on the ISA torch or cgrad run."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import cgrad
import cgrad.nn.functional as F

RNG = np.random.default_rng(1616)


def _filter(x: float, cubic: bool, a: float) -> float:
    x = abs(x)
    if not cubic:
        return 1.0 - x if x < 1.0 else 0.0
    if x < 1.0:
        return ((a + 2) * x - (a + 3)) * x * x + 1
    if x < 2.0:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return 0.0


def _taps(n_in, n_out, ac, sf, cubic, aa):
    """(start, count, int16 weights) per output and the precision, as the Note describes."""
    if ac:
        scale = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    else:
        scale = 1.0 / sf if sf else n_in / n_out
    half = 2.0 if cubic else 1.0
    support = half * scale if aa and scale >= 1.0 else half
    K = int(math.ceil(support)) * 2 + 1 if aa else int(2 * half)
    rows, wmax = [], 0.0
    for i in range(n_out):
        w = [0.0] * K
        if aa:
            center, inv = scale * (i + 0.5), (1.0 / scale if scale >= 1.0 else 1.0)
            lo = max(int(center - support + 0.5), 0)
            n = min(max(min(int(center + support + 0.5), n_in) - lo, 0), K)
            for j in range(n):
                w[j] = _filter((j + lo - center + 0.5) * inv, cubic, -0.5)
            total = sum(w[:n])
            if total != 0.0:
                w = [v / total for v in w]
                wmax = max([wmax] + w[:n])
        else:
            src = scale * i if ac else scale * (i + 0.5) - 0.5
            if not cubic and not ac and src < 0:
                src = 0.0
            fl = min(int(math.floor(np.float32(src))), n_in - 1)
            lam = min(max(src - fl, 0.0), 1.0)
            sup = K // 2
            umin = fl - sup + 1
            lo = max(umin, 0)
            n = min(max(min(fl + sup + 1, n_in) - lo, 0), K)
            at = 0
            for j in range(K):
                v = _filter(float(j + 1 - sup) - lam, cubic, -0.75)
                if umin + j <= 0:
                    at = 0
                elif umin + j >= n_in - 1:
                    at = n - 1
                w[at] += v
                wmax = max(wmax, w[at])
                at += 1
        rows.append((lo, n, w))
    p = 0
    while p < 22 and int(0.5 + wmax * (1 << (p + 1))) < (1 << 15):
        p += 1
    out = []
    for lo, n, w in rows:
        out.append((lo, n, [int(-0.5 + v * (1 << p)) if v * (1 << p) < 0 else int(0.5 + v * (1 << p)) for v in w[:n]]))
    return out, p


def _pass(x: np.ndarray, axis: int, n_out: int, ac, sf, cubic, aa) -> np.ndarray:
    taps, p = _taps(x.shape[axis], n_out, ac, sf, cubic, aa)
    xm = np.moveaxis(x.astype(np.int64), axis, -1)
    res = np.empty(xm.shape[:-1] + (n_out,), np.int64)
    for i, (lo, n, w) in enumerate(taps):
        acc = np.full(xm.shape[:-1], 1 << (p - 1), np.int64)
        for j in range(n):
            acc += xm[..., lo + j] * w[j]
        res[..., i] = np.clip(acc >> p, 0, 255)
    return np.moveaxis(res, -1, axis).astype(np.uint8)


def _reference(x: np.ndarray, size, sf, mode, ac, aa) -> np.ndarray:
    cubic = mode == "bicubic"
    H, W = x.shape[2:]
    if size is None:
        size = [int(math.floor(H * sf[0])), int(math.floor(W * sf[1]))]
    y = x
    if size[1] != W:
        y = _pass(y, 3, size[1], ac, sf[1] if sf else None, cubic, aa)
    if size[0] != H:
        y = _pass(y, 2, size[0], ac, sf[0] if sf else None, cubic, aa)
    return np.ascontiguousarray(y)


def _pair(a: np.ndarray, layout: str):
    """(torch, cgrad) tensors holding a: contiguous, channels-last, or a sliced view (every other column)."""
    if layout == "slice":
        big = np.repeat(a, 2, axis=-1)
        return torch.from_numpy(big.copy())[..., ::2], cgrad.from_numpy(big.copy())[..., ::2]
    t, c = torch.from_numpy(a.copy()), cgrad.from_numpy(a.copy())
    if layout == "channels_last":
        t, c = t.contiguous(memory_format=torch.channels_last), c.contiguous(memory_format=cgrad.channels_last)
    return t, c


def _strides(t):
    """The strides that matter: those of dims longer than 1 (torch and cgrad lay size-1 dims out differently)."""
    return tuple(st for st, n in zip(t.stride(), t.shape) if n > 1)


def _cases(n: int):
    rng = np.random.default_rng(7)
    for _ in range(n):
        C = int(rng.choice([1, 3, 4, 5, 8]))
        H, W = (int(rng.choice([1, 2, 3, rng.integers(4, 30)])) for _ in range(2))
        if rng.random() < 0.5:
            size, sf = [int(rng.choice([1, 2, rng.integers(1, 45)])) for _ in range(2)], None
        else:
            size = None
            sf = [float(rng.choice([0.1, 0.3, 0.5, 0.7, 1.0, 1.3, 1.5, 2.0, 2.5, 3.0, 7.0])) for _ in range(2)]
            if int(H * sf[0]) < 1 or int(W * sf[1]) < 1:
                continue
        yield (C, H, W, size, sf, str(rng.choice(["bilinear", "bicubic"])), bool(rng.random() < 0.5),
               bool(rng.random() < 0.3), str(rng.choice(["contiguous", "channels_last", "slice"])))


@pytest.mark.parametrize("case", list(_cases(260)))
def test_bilinear_bicubic_bit_exact(case):
    C, H, W, size, sf, mode, aa, ac, layout = case
    x = RNG.integers(0, 256, size=(2, C, H, W)).astype(np.uint8)
    if layout == "slice" and C == 3:
        layout = "contiguous"  # torch's AVX2 kernel trips an internal assert on sliced 3-channel input
    xt, xc = _pair(x, layout)
    kw = dict(size=size, scale_factor=sf, mode=mode, align_corners=ac, antialias=aa)
    got = F.interpolate(xc, **kw)
    want = TF.interpolate(xt, **kw)
    assert got.dtype == cgrad.uint8 and tuple(got.shape) == tuple(want.shape)
    assert _strides(got) == _strides(want)
    ref = _reference(x, size, sf, mode, ac, aa)
    np.testing.assert_array_equal(got.numpy(), ref)
    if not (want.shape[3] == 1 and want.shape[2] != H):  # torch's path-dependent case (module docstring)
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_reference_matches_torch_width_one_avx_path():
    # the decided value where torch's two paths disagree: width 1 after the width pass, height resized.
    # cgrad = the separable values (= torch's AVX2 kernel); torch's generic loop (C > 4) repeats row 0's taps.
    x = RNG.integers(0, 256, size=(1, 8, 6, 6)).astype(np.uint8)
    got = F.interpolate(cgrad.from_numpy(x), size=(8, 1), mode="bilinear", antialias=True).numpy()
    np.testing.assert_array_equal(got, _reference(x, [8, 1], None, "bilinear", False, True))
    per_channel = np.concatenate([F.interpolate(cgrad.from_numpy(x[:, c:c + 1].copy()), size=(8, 1), mode="bilinear",
                                                antialias=True).numpy() for c in range(8)], axis=1)
    np.testing.assert_array_equal(got, per_channel)  # channels never interact
    assert len(np.unique(got[0, 0, :, 0])) > 1  # rows do get their own taps


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("aa", [False, True])
def test_saturation_same_size_and_empty(mode, aa):
    x = np.zeros((1, 2, 6, 6), np.uint8)
    x[..., ::2, ::2] = 255  # a checkerboard: bicubic overshoots, the result saturates at 0 and 255
    for size in [(9, 11), (3, 4), (6, 6), (6, 9)]:
        got = F.interpolate(cgrad.from_numpy(x), size=size, mode=mode, antialias=aa)
        want = TF.interpolate(torch.from_numpy(x), size=size, mode=mode, antialias=aa)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    xc = cgrad.from_numpy(x)
    same = F.interpolate(xc, size=(6, 6), mode=mode, antialias=aa)
    np.testing.assert_array_equal(same.numpy(), x)
    assert same.data_ptr() != xc.data_ptr()  # a copy, as torch's
    e = F.interpolate(cgrad.zeros(0, 3, 4, 5, dtype=cgrad.uint8), scale_factor=2, mode=mode, antialias=aa)
    assert tuple(e.shape) == (0, 3, 8, 10) and e.dtype == cgrad.uint8
    with pytest.raises(RuntimeError):
        F.interpolate(cgrad.zeros(1, 3, 0, 4, dtype=cgrad.uint8), size=(2, 2), mode=mode, antialias=aa)


@pytest.mark.parametrize("nd", [3, 4, 5])
@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
def test_nearest(nd, mode):
    x = RNG.integers(0, 256, size=(2, 3) + (5, 4, 3)[:nd - 2]).astype(np.uint8)
    for layout in ["contiguous", "slice"] + (["channels_last"] if nd == 4 else []):
        xt, xc = _pair(x, layout)
        for kw in [dict(size=(7, 2, 4)[:nd - 2]), dict(scale_factor=1.5), dict(scale_factor=0.6), dict(size=1)]:
            got, want = F.interpolate(xc, mode=mode, **kw), TF.interpolate(xt, mode=mode, **kw)
            assert got.dtype == cgrad.uint8 and _strides(got) == _strides(want)
            np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_nearest_decided_value_at_twice_the_size():
    # torch's small-output 2-D nearest kernel reads input i >> 1 whenever out == 2 * in, even for a scale
    # factor other than 2 (its generic loop, used for large outputs and in 1-D, uses floor(i / scale_factor)).
    # cgrad always uses the formula: here output 20 of 22 reads floor(20 / 2.01) = 9.
    x = np.arange(11, dtype=np.uint8).reshape(1, 1, 1, 11)
    got = F.interpolate(cgrad.from_numpy(x), scale_factor=(1, 2.01), mode="nearest").numpy()[0, 0, 0]
    assert got[20] == 9
    one_d = TF.interpolate(torch.from_numpy(x[0]), scale_factor=2.01, mode="nearest").numpy()[0, 0]
    np.testing.assert_array_equal(got, one_d)


_MODES = [("nearest", 3), ("nearest", 4), ("nearest", 5), ("nearest-exact", 3), ("nearest-exact", 4),
          ("nearest-exact", 5), ("linear", 3), ("bilinear", 4), ("bicubic", 4), ("trilinear", 5), ("area", 3),
          ("area", 4), ("area", 5), ("bilinear-aa", 4), ("bicubic-aa", 4)]


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64", "bool"])
@pytest.mark.parametrize("mode,nd", _MODES)
def test_integer_dtypes_as_torch(dtype, mode, nd):
    aa = mode.endswith("-aa")
    m = mode[:-3] if aa else mode
    a = RNG.integers(0, 2 if dtype == "bool" else 100, size=[2, 3] + [5] * (nd - 2)).astype(dtype)
    res = []
    for lib, f in [(torch, TF), (cgrad, F)]:
        x = lib.from_numpy(a.copy())
        try:
            y = (f.interpolate(x, size=[3] * (nd - 2), mode=m) if m == "area"
                 else f.interpolate(x, scale_factor=1.7, mode=m, antialias=aa))
            res.append(("ok", str(y.dtype).split(".")[-1], y.numpy().tolist()))
        except NotImplementedError as e:
            res.append(("NotImplementedError", str(e)))
    assert res[1] == res[0]
    if dtype == "uint8" and m == "area":
        assert res[1][1] == ('"adaptive_avg_pool3d_cpu" not implemented for \'Byte\'' if nd == 5 else
                             '"adaptive_avg_pool2d" not implemented for \'Byte\'')
    if dtype == "uint8" and m in ("linear", "trilinear"):
        assert res[1][1] == '"compute_indices_weights_linear" not implemented for \'Byte\''
