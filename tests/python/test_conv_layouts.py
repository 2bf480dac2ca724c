"""Channels-last convolution (Note [Channels-last conv] in src/backend/cpu/conv_nhwc.c, Note
[Channels-last conv output] in src/ops/nn_conv.c): conv2d / conv3d / conv_transpose2d / 3d on
channels_last (channels_last_3d) operands compute in that layout and give PyTorch's output and
gradient strides, with PyTorch's values and gradients, in every dtype the CPU build supports."""
import numpy as np
import pytest
import torch

import cgrad

# (nsp, x shape, w shape, kwargs); the 3-d float32 problems are ones PyTorch gives to oneDNN (Note
# [Channels-last conv output]: its slow 3-d kernels, taken for some small single-sample ones, return a
# contiguous result where cgrad keeps channels_last_3d; test_3d_layout_rule states it). Weights are (cout, cin/groups, k..) for conv, (cin, cout/groups, k..)
# for the transposes
CONV = [
    (2, (2, 4, 7, 6), (6, 4, 3, 3), {}),
    (2, (2, 4, 9, 9), (6, 2, 3, 2), dict(groups=2, stride=2, dilation=2, padding=(1, 2))),
    (2, (3, 8, 5, 5), (8, 8, 1, 1), {}),  # pointwise
    (2, (2, 6, 7, 7), (6, 1, 3, 3), dict(groups=6, padding=1)),  # depthwise
    (2, (1, 3, 1, 1), (5, 3, 1, 1), {}),  # every layout of x alike
    (2, (1, 3, 5, 4), (4, 3, 2, 2), {}),  # one sample
    (2, (2, 3, 6, 5), (4, 3, 3, 3), dict(padding="same", dilation=(1, 2))),
    (3, (2, 4, 5, 6, 4), (6, 4, 3, 2, 3), dict(padding=1)),
    (3, (2, 4, 6, 5, 5), (4, 2, 1, 3, 3), dict(groups=2, stride=(1, 2, 2))),
]
TRANSPOSE = [
    (2, (2, 4, 5, 6), (4, 3, 3, 3), dict(stride=2, padding=1, output_padding=1)),
    (2, (2, 6, 4, 4), (6, 1, 3, 3), dict(groups=3, dilation=2)),
    (2, (3, 8, 5, 5), (8, 5, 1, 1), {}),
    (3, (2, 4, 3, 4, 3), (4, 3, 2, 3, 2), dict(stride=(2, 1, 2))),
]
LAYOUTS = [("cl", "contig"), ("contig", "cl"), ("cl", "cl"), ("sliced", "cl")]


def cl_format(lib, nsp):
    return lib.channels_last if nsp == 2 else lib.channels_last_3d


def make(lib, a, nsp, layout, dtype):
    t = lib.tensor(a, dtype=getattr(lib, dtype))
    if layout == "cl":
        t = t.contiguous(memory_format=cl_format(lib, nsp))
    elif layout == "sliced":  # channels-last storage, every other sample: not dense
        t = lib.cat([t, t]).contiguous(memory_format=cl_format(lib, nsp))[::2]
    return t


def run(lib, fn, nsp, xa, wa, ba, layouts, kw, dtype, grad=True):
    x, w = make(lib, xa, nsp, layouts[0], dtype), make(lib, wa, nsp, layouts[1], dtype)
    b = lib.tensor(ba, dtype=getattr(lib, dtype)) if ba is not None else None
    if grad:
        for t in (x, w, b):
            if t is not None:
                t.requires_grad_()
    y = getattr(lib.nn.functional, fn)(x, w, b, **kw)
    if not grad:
        return [y]
    gy = lib.tensor(np.random.default_rng(7).standard_normal(tuple(y.shape)), dtype=y.dtype)
    if layouts[0] == "cl":
        gy = gy.contiguous(memory_format=cl_format(lib, nsp))
    y.backward(gy)
    return [y, x.grad, w.grad] + ([b.grad] if b is not None else [])


def layout(t):
    return tuple(st if sz != 1 else None for st, sz in zip(t.stride(), t.shape))


def compare(got, want, tol):
    for n, (c, t) in enumerate(zip(got, want)):
        assert c.dtype is getattr(cgrad, str(t.dtype).split(".")[1]), n
        assert tuple(c.shape) == tuple(t.shape), n
        if t.numel():  # a size-1 dim's stride is no layout (PyTorch's float32 and float64 paths differ there)
            cs, ts = layout(c), layout(t)
            assert cs == ts, (n, c.stride(), t.stride())
        a, b = c.detach().float().numpy(), t.detach().float().numpy()
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol * max(1.0, float(np.abs(b).max(initial=0))), err_msg=str(n))


def arrays(xs, ws, bias_len, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(xs), rng.standard_normal(ws), rng.standard_normal(bias_len) if bias_len else None


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layouts", LAYOUTS)
@pytest.mark.parametrize("case", range(len(CONV)))
def test_conv_values_grads_strides(case, layouts, dtype):
    nsp, xs, ws, kw = CONV[case]
    xa, wa, ba = arrays(xs, ws, ws[0] if case % 2 == 0 else 0)
    fn = f"conv{nsp}d"
    got = run(cgrad, fn, nsp, xa, wa, ba, layouts, kw, dtype)
    want = run(torch, fn, nsp, xa, wa, ba, layouts, kw, dtype)
    compare(got, want, 2e-5 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layouts", LAYOUTS)
@pytest.mark.parametrize("case", range(len(TRANSPOSE)))
def test_conv_transpose_values_grads_strides(case, layouts, dtype):
    nsp, xs, ws, kw = TRANSPOSE[case]
    groups = kw.get("groups", 1)
    xa, wa, ba = arrays(xs, ws, ws[1] * groups if case % 2 == 0 else 0)
    fn = f"conv_transpose{nsp}d"
    got = run(cgrad, fn, nsp, xa, wa, ba, layouts, kw, dtype)
    want = run(torch, fn, nsp, xa, wa, ba, layouts, kw, dtype)
    compare(got, want, 2e-5 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("case", [0, 1, 3, 7])
def test_half_channels_last(case, dtype):
    """Half operands stay half in the kernels (converted per chunk) and accumulate in float32: the
    result is the float32 result rounded once, PyTorch's to a unit in the last place."""
    nsp, xs, ws, kw = CONV[case]
    xa, wa, _ = arrays(xs, ws, 0)
    fn = f"conv{nsp}d"
    got = run(cgrad, fn, nsp, xa, wa, None, ("cl", "cl"), kw, dtype)
    want = run(torch, fn, nsp, xa, wa, None, ("cl", "cl"), kw, dtype)
    compare(got, want, 2e-2 if dtype == "bfloat16" else 4e-3)
    ref = run(cgrad, fn, nsp, xa, wa, None, ("contig", "contig"), kw, dtype)
    for c, r in zip(got, ref):  # the layout does not change a half result by more than its rounding
        np.testing.assert_allclose(c.float().detach().numpy(), r.float().detach().numpy(), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("dtype,case", [("int64", 0), ("int64", 1), ("int64", 7), ("int32", 0), ("uint8", 3)])
def test_integer_channels_last(case, dtype):
    """Integer conv is exact (Note [Integer conv]); a channels_last operand gives a channels_last result."""
    nsp, xs, ws, kw = CONV[case]
    rng = np.random.default_rng(case)
    xa, wa = rng.integers(0, 4, xs), rng.integers(0, 3, ws)
    fn = f"conv{nsp}d"
    for layouts in [("cl", "contig"), ("contig", "cl")]:
        got = run(cgrad, fn, nsp, xa, wa, None, layouts, kw, dtype, grad=False)[0]
        want = run(torch, fn, nsp, xa, wa, None, layouts, kw, dtype, grad=False)[0]
        assert layout(got) == layout(want)
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16", "float64", "int64"])
@pytest.mark.parametrize("transposed", [False, True])
def test_3d_layout_rule(dtype, transposed):
    """The 3-d result is channels_last_3d for float32 and the half types when an operand is, also for a
    single small sample (where PyTorch's float32 slow path, and on CPUs without bf16 / fp16
    instructions its half path, returns contiguous); float64 and int64 3-d results are contiguous,
    as PyTorch's always are."""
    shape_w = (3, 2, 2, 2, 2) if transposed else (2, 3, 2, 2, 2)
    x = cgrad.ones(1, 3, 3, 4, 3, dtype=getattr(cgrad, dtype)).contiguous(memory_format=cgrad.channels_last_3d)
    w = cgrad.ones(*shape_w, dtype=getattr(cgrad, dtype))
    y = (cgrad.nn.functional.conv_transpose3d if transposed else cgrad.nn.functional.conv3d)(x, w)
    want_cl = dtype in ("float32", "bfloat16", "float16")
    assert y.is_contiguous(memory_format=cgrad.channels_last_3d) == want_cl
    assert y.is_contiguous() == (not want_cl)
    ref = (torch.nn.functional.conv_transpose3d if transposed else torch.nn.functional.conv3d)(
        torch.ones(1, 3, 3, 4, 3, dtype=getattr(torch, dtype)), torch.ones(*shape_w, dtype=getattr(torch, dtype)))
    np.testing.assert_array_equal(y.float().numpy(), ref.float().numpy())


def test_empty_batch_and_unbatched():
    xa, wa, ba = arrays((0, 4, 5, 5), (6, 4, 3, 3), 6)
    for lib in (cgrad, torch):
        x = make(lib, xa, 2, "cl", "float32").requires_grad_()
        w = make(lib, wa, 2, "cl", "float32").requires_grad_()
        y = lib.nn.functional.conv2d(x, w, lib.tensor(ba, dtype=lib.float32))
        assert tuple(y.shape) == (0, 6, 3, 3)
        y.sum().backward()
        assert float(w.grad.abs().sum()) == 0.0 and tuple(x.grad.shape) == (0, 4, 5, 5)
    # unbatched (C, H, W) with a channels_last weight: compared whole with PyTorch
    xa, wa, ba = arrays((4, 6, 5), (3, 4, 3, 3), 3)
    got = run(cgrad, "conv2d", 2, xa, wa, ba, ("contig", "cl"), {}, "float64")
    want = run(torch, "conv2d", 2, xa, wa, ba, ("contig", "cl"), {}, "float64")
    compare(got, want, 1e-12)


@pytest.mark.parametrize("fn,case", [("conv2d", 1), ("conv2d", 3), ("conv3d", 8), ("conv_transpose2d", 0)])
def test_gradgradcheck_channels_last(fn, case):
    nsp, xs, ws, kw = (CONV if fn.startswith("conv") and "transpose" not in fn else TRANSPOSE)[case]
    small = tuple(min(s, 4) if i >= 2 else s for i, s in enumerate(xs))
    xa, wa, _ = arrays(small, ws, 0)
    if "stride" in kw and fn == "conv2d":
        kw = dict(kw, dilation=1)
    x = make(cgrad, xa, nsp, "cl", "float64").requires_grad_()
    w = make(cgrad, wa, nsp, "cl", "float64").requires_grad_()
    f = lambda a, b: getattr(cgrad.nn.functional, fn)(a, b, **kw)  # noqa: E731
    assert cgrad.autograd.gradcheck(f, (x, w))
    assert cgrad.autograd.gradgradcheck(f, (x, w))


def test_thread_count_does_not_change_the_result():
    """Chunks and row blocks are cut by sizes, not threads, and partial sums add in a fixed order."""
    xa, wa, ba = arrays((4, 16, 20, 20), (32, 16, 3, 3), 32)
    outs = []
    old = cgrad.get_num_threads()
    try:
        for n in (1, 2):
            cgrad.set_num_threads(n)
            outs.append([t.detach().numpy() for t in run(cgrad, "conv2d", 2, xa, wa, ba, ("cl", "cl"), dict(padding=1),
                                                 "float32")])
    finally:
        cgrad.set_num_threads(old)
    for a, b in zip(*outs):
        np.testing.assert_array_equal(a, b)


def test_module_training_step_channels_last():
    """Conv2d -> BatchNorm2d -> ReLU -> Conv2d 1x1 moved to channels_last trains as in PyTorch, layouts kept."""
    rng = np.random.default_rng(3)
    xa = rng.standard_normal((4, 3, 12, 12))
    torch.manual_seed(0)
    init = [p.detach().numpy().copy() for p in torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.Conv2d(8, 4, 1)).parameters()]
    out = {}
    for lib in (cgrad, torch):
        m = lib.nn.Sequential(lib.nn.Conv2d(3, 8, 3, padding=1), lib.nn.BatchNorm2d(8), lib.nn.ReLU(),
                              lib.nn.Conv2d(8, 4, 1))
        with lib.no_grad():
            for p, a in zip(m.parameters(), init):
                p.copy_(lib.tensor(a))
        m = m.to(memory_format=lib.channels_last)
        opt = lib.optim.SGD(m.parameters(), lr=0.1)
        x = lib.tensor(xa, dtype=lib.float32).contiguous(memory_format=lib.channels_last)
        y = m(x)
        y.square().mean().backward()
        opt.step()
        out[lib] = (y, [p.grad.stride() for p in m.parameters()], [p.detach().numpy() for p in m.parameters()])
    (cy, cs, cp), (ty, ts, tp) = out[cgrad], out[torch]
    assert cy.stride() == ty.stride() and cs == ts  # no size-1 dims among them
    np.testing.assert_allclose(cy.detach().numpy(), ty.detach().numpy(), rtol=1e-4, atol=1e-5)
    for a, b in zip(cp, tp):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("layouts", LAYOUTS[:3])
@pytest.mark.parametrize("fn,case", [("conv2d", 0), ("conv2d", 3), ("conv_transpose2d", 0), ("conv3d", 7)])
def test_gradient_layout_follows_the_operands_not_the_incoming_gradient(fn, case, layouts):
    """y.sum() sends an expanded gradient; autograd.grad's results (no AccumulateGrad in between) are
    laid out from x and w, as PyTorch's."""
    nsp, xs, ws, kw = (TRANSPOSE if "transpose" in fn else CONV)[case]
    xa, wa, _ = arrays(xs, ws, 0)
    strides = []
    for lib in (cgrad, torch):
        x = make(lib, xa, nsp, layouts[0], "float32").requires_grad_()
        w = make(lib, wa, nsp, layouts[1], "float32").requires_grad_()
        gx, gw = lib.autograd.grad(getattr(lib.nn.functional, fn)(x, w, **kw).sum(), [x, w])
        strides.append((layout(gx), layout(gw)))
    assert strides[0] == strides[1]
