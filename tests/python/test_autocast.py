"""Autocast (cgrad.autocast / cgrad.amp.autocast) against torch.autocast("cpu"):
the state API (nesting, decorator, threads, errors), the output dtype of every
op of the op table and of the nn ops inside autocast, the cast cache, and
gradients (dtype per op, float32 at the leaves, values within bf16 tolerance)."""
from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest
import torch

import cgrad
from opinfo import ALL_OPS
from opinfo.core import dtype_name, flatten_outputs, to_lib

LOW = ("bfloat16", "float16")


# ---------------------------------------------------------------- state API

def test_state_functions_match_torch_defaults():
    assert cgrad.is_autocast_enabled("cpu") is False and torch.is_autocast_enabled("cpu") is False
    assert cgrad.is_autocast_enabled() is False  # no argument: CUDA, as in torch
    assert str(cgrad.get_autocast_dtype("cpu")) == "cgrad.bfloat16" and torch.get_autocast_dtype("cpu") == torch.bfloat16
    assert cgrad.is_autocast_cache_enabled() and torch.is_autocast_cache_enabled()


@pytest.mark.parametrize("dt", LOW)
def test_nesting_restores_the_previous_state(dt):
    low = getattr(cgrad, dt)
    with cgrad.autocast("cpu", dtype=low):
        assert cgrad.is_autocast_enabled("cpu") and cgrad.get_autocast_dtype("cpu") is low
        with cgrad.amp.autocast("cpu", enabled=False):
            assert not cgrad.is_autocast_enabled("cpu")
            assert cgrad.matmul(cgrad.ones(2, 2), cgrad.ones(2, 2)).dtype == cgrad.float32
        assert cgrad.is_autocast_enabled("cpu")
        other = cgrad.float16 if dt == "bfloat16" else cgrad.bfloat16
        with cgrad.autocast("cpu", dtype=other):
            assert cgrad.matmul(cgrad.ones(2, 2), cgrad.ones(2, 2)).dtype == other
        assert cgrad.matmul(cgrad.ones(2, 2), cgrad.ones(2, 2)).dtype == low
    assert not cgrad.is_autocast_enabled("cpu") and cgrad.get_autocast_dtype("cpu") is cgrad.bfloat16


def test_state_is_restored_when_the_body_raises():
    with pytest.raises(ZeroDivisionError):
        with cgrad.autocast("cpu"):
            1 / 0
    assert not cgrad.is_autocast_enabled("cpu")


def test_decorator_and_default_device():
    @cgrad.autocast()
    def f(a, b):
        return a @ b

    assert f(cgrad.ones(2, 3), cgrad.ones(3, 2)).dtype == cgrad.bfloat16
    assert not cgrad.is_autocast_enabled("cpu")
    with pytest.raises(TypeError):
        cgrad.autocast("cpu")(3)


def test_autocast_is_thread_local():
    seen = []

    def worker():
        seen.append((cgrad.is_autocast_enabled("cpu"), (cgrad.ones(2, 2) @ cgrad.ones(2, 2)).dtype))

    with cgrad.autocast("cpu"):
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        assert cgrad.is_autocast_enabled("cpu")
    assert seen == [(False, cgrad.float32)]


def test_errors_match_torch():
    for lib in (cgrad, torch):
        with pytest.raises(RuntimeError, match="device type at start of device string: tpu"):
            lib.autocast("tpu")
        with pytest.raises(RuntimeError):
            lib.autocast("meta")
        with pytest.raises(ValueError, match="device_type"):
            lib.autocast(0)
        with warnings.catch_warnings(record=True) as w:  # an unsupported dtype disables autocast, with a warning
            warnings.simplefilter("always")
            ctx = lib.autocast("cpu", dtype=lib.float32)
        assert any("not supported" in str(x.message) for x in w)
        with ctx:
            assert not lib.is_autocast_enabled("cpu")


def test_set_functions():
    cgrad.set_autocast_enabled("cpu", True)
    try:
        cgrad.set_autocast_dtype("cpu", cgrad.float16)
        assert cgrad.is_autocast_cpu_enabled() and cgrad.get_autocast_cpu_dtype() is cgrad.float16
        assert (cgrad.ones(2, 2) @ cgrad.ones(2, 2)).dtype == cgrad.float16
    finally:
        cgrad.set_autocast_enabled("cpu", False)
        cgrad.set_autocast_dtype("cpu", cgrad.bfloat16)
    assert (cgrad.ones(2, 2) @ cgrad.ones(2, 2)).dtype == cgrad.float32


# ---------------------------------------------------------------- output dtypes: the op table

def _dtypes(lib, op, sample, dt, mixed):
    args = []
    for a in sample.args:
        t = to_lib(lib, a, sample.noncontig, False)
        if mixed and isinstance(a, np.ndarray) and a.dtype.kind == "f" and len(args) == 1:
            t = t.to(getattr(lib, dt))  # second float operand already in low precision
        args.append(t)
    with lib.autocast("cpu", dtype=getattr(lib, dt)):
        try:
            return [dtype_name(o) for o in flatten_outputs(op.fn(lib)(*args, **sample.kwargs))]
        except Exception as e:  # noqa: BLE001 - both libraries must fail alike
            return f"error {type(e).__name__}"


_TABLE = [op for op in ALL_OPS if "float32" in op.dtypes]


@pytest.mark.parametrize("op", _TABLE, ids=lambda op: op.name)
def test_op_table_output_dtypes_match_torch(op):
    checked = 0
    for sample in op.sample_fn("float32")[:4]:
        for dt in LOW:
            for mixed in (False, True):
                c, t = _dtypes(cgrad, op, sample, dt, mixed), _dtypes(torch, op, sample, dt, mixed)
                if isinstance(c, str) or isinstance(t, str):
                    # an op both reject (or that torch rejects for a mixed pair) proves nothing either way
                    assert isinstance(t, str) or mixed, f"{op.name} {sample} {dt}: cgrad {c}, torch {t}"
                    continue
                assert c == t, f"{op.name} {sample} {dt} mixed={mixed}: cgrad {c}, torch {t}"
                checked += 1
    if op.name not in ("Generator", "get_rng_state", "seed", "set_rng_state", "broadcast_shapes"):
        assert checked or not op.sample_fn("float32"), f"{op.name}: nothing compared"


# ---------------------------------------------------------------- output dtypes: nn ops

def _nn_cases():
    r = np.random.default_rng(3)
    x = r.standard_normal((4, 6)).astype("float32")
    w = r.standard_normal((5, 6)).astype("float32")
    b = r.standard_normal(5).astype("float32")
    p = r.uniform(0.05, 0.95, (4, 6)).astype("float32")
    y = np.array([0, 2, 1, 3])
    img = r.standard_normal((2, 3, 6, 6)).astype("float32")
    k = r.standard_normal((4, 3, 3, 3)).astype("float32")
    q = r.standard_normal((2, 3, 4)).astype("float32")
    sign = np.array([1.0, -1.0, 1.0, -1.0], dtype="float32")
    F = lambda lib: lib.nn.functional  # noqa: E731
    return {
        "linear": (lambda lib, a, w, b: F(lib).linear(a, w, b), (x, w, b)),
        "conv2d": (lambda lib, a, k: F(lib).conv2d(a, k, padding=1), (img, k)),
        "conv_transpose2d": (lambda lib, a, k: F(lib).conv_transpose2d(a, k), (img[:, :, :4, :4].copy(),
                                                                                k.transpose(1, 0, 2, 3).copy())),
        "bmm": (lambda lib, a, b: lib.bmm(a, b), (q, q.transpose(0, 2, 1).copy())),
        "baddbmm": (lambda lib, s, a, b: lib.baddbmm(s, a, b), (x[:3, :3].copy(), q, q.transpose(0, 2, 1).copy())),
        "addmm": (lambda lib, s, a, b: lib.addmm(s, a, b), (b, x, w.T.copy())),
        "sdpa": (lambda lib, a, b, c: F(lib).scaled_dot_product_attention(a, b, c), (q, q, q)),
        "sdpa_causal": (lambda lib, a, b, c: F(lib).scaled_dot_product_attention(a, b, c, is_causal=True), (q, q, q)),
        "prelu": (lambda lib, a, wt: F(lib).prelu(a, wt), (img, np.array([0.25, 0.1, 0.3], dtype="float32"))),
        "cross_entropy": (lambda lib, a, t: F(lib).cross_entropy(a, t), (x, y)),
        "nll_loss": (lambda lib, a, t: F(lib).nll_loss(a, t), (x, y)),
        "mse_loss": (lambda lib, a, t: F(lib).mse_loss(a, t), (x, p)),
        "l1_loss": (lambda lib, a, t: F(lib).l1_loss(a, t), (x, p)),
        "smooth_l1_loss": (lambda lib, a, t: F(lib).smooth_l1_loss(a, t), (x, p)),
        "huber_loss": (lambda lib, a, t: F(lib).huber_loss(a, t), (x, p)),
        "binary_cross_entropy": (lambda lib, a, t: F(lib).binary_cross_entropy(a, t), (p, p)),
        "bce_with_logits": (lambda lib, a, t: F(lib).binary_cross_entropy_with_logits(a, t), (x, p)),
        "kl_div": (lambda lib, a, t: F(lib).kl_div(a, t, reduction="batchmean"), (x, p)),
        "cosine_embedding_loss": (lambda lib, a, b, t: F(lib).cosine_embedding_loss(a, b, t), (x, p, sign)),
        "margin_ranking_loss": (lambda lib, a, b, t: F(lib).margin_ranking_loss(a, b, t), (x[:, 0].copy(), p[:, 0].copy(), sign)),
        "softmax": (lambda lib, a: F(lib).softmax(a, 1), (x,)),
        "log_softmax": (lambda lib, a: F(lib).log_softmax(a, 1), (x,)),
        "layer_norm": (lambda lib, a: F(lib).layer_norm(a, (6,)), (x,)),
        "batch_norm": (lambda lib, a: F(lib).batch_norm(a, None, None, training=True), (x,)),
        "bn_half_input_f32_affine": (lambda lib, a, g, bs: F(lib).batch_norm(a.to(lib.get_autocast_dtype("cpu")), None,
                                                                             None, g, bs, training=True),
                                     (x, np.ones(6, dtype="float32"), np.zeros(6, dtype="float32"))),
        "ln_half_input_f32_affine": (lambda lib, a, g, bs: F(lib).layer_norm(a.to(lib.get_autocast_dtype("cpu")), (6,),
                                                                             g, bs), (x, b[:1].repeat(6), b[:1].repeat(6))),
        "max_pool2d": (lambda lib, a: F(lib).max_pool2d(a, 2), (img,)),
        "relu": (lambda lib, a: F(lib).relu(a), (x,)),
        "gelu": (lambda lib, a: F(lib).gelu(a), (x,)),
        "prod": (lambda lib, a: lib.prod(a), (x,)),
        "einsum_contract": (lambda lib, a, b: lib.einsum("ij,kj->ik", a, b), (x, w)),
        "einsum_outer": (lambda lib, a, b: lib.einsum("i,j->ij", a, b), (b, b)),
        "cat_mixed": (lambda lib, a, b: lib.cat([a, b.to(lib.get_autocast_dtype("cpu"))]), (x, x)),
        "stack_mixed": (lambda lib, a, b: lib.stack([a.to(lib.get_autocast_dtype("cpu")), b]), (x, x)),
        "add_mixed": (lambda lib, a, b: a + b.to(lib.get_autocast_dtype("cpu")), (x, x)),
        "linear_then_add": (lambda lib, a, w, b: F(lib).linear(a, w) + b, (x, w, b)),
        "float64_kept": (lambda lib, a, b: a.double() @ b.double(), (x, w.T.copy())),
    }


_NN = _nn_cases()


@pytest.mark.parametrize("name", sorted(_NN))
@pytest.mark.parametrize("dt", LOW)
@pytest.mark.parametrize("low_inputs", [False, True], ids=["f32_in", "low_in"])
def test_nn_op_output_dtypes_match_torch(name, dt, low_inputs):
    fn, arrays = _NN[name]
    outs = []
    for lib in (cgrad, torch):
        args = [to_lib(lib, a, False, False) for a in arrays]
        if low_inputs:
            args = [t.to(getattr(lib, dt)) if t.dtype == lib.float32 else t for t in args]
        with lib.autocast("cpu", dtype=getattr(lib, dt)):
            outs.append([dtype_name(o) for o in flatten_outputs(fn(lib, *args))])
    assert outs[0] == outs[1], f"{name}: cgrad {outs[0]}, torch {outs[1]}"


def test_mixed_dtype_products_are_accepted_inside_autocast_only():
    a, b = cgrad.ones(2, 3), cgrad.ones(3, 2, dtype=cgrad.bfloat16)
    with pytest.raises(RuntimeError):
        cgrad.mm(a, b)
    with cgrad.autocast("cpu"):
        assert cgrad.mm(a, b).dtype == cgrad.bfloat16
        assert cgrad.nn.functional.linear(a, b.t(), cgrad.ones(2)).dtype == cgrad.bfloat16


# ---------------------------------------------------------------- cast cache

def test_cast_cache_reuses_parameter_casts_within_a_region():
    w = cgrad.randn(4, 6, requires_grad=True)
    frozen = cgrad.randn(4, 6)  # not requiring grad: never cached
    x = cgrad.randn(3, 6)
    with cgrad.autocast("cpu"):
        y1 = cgrad.nn.functional.linear(x, w)
        assert cgrad._C._autocast_cache_size() == 1
        with cgrad.autocast("cpu"):
            y2 = x @ w.t()  # the view w.t() is not a leaf parameter: cast anew
            y3 = cgrad.nn.functional.linear(x, w)
            cgrad.nn.functional.linear(x, frozen)
        assert cgrad._C._autocast_cache_size() == 1  # inner exit keeps the cache
        # the cached cast is one node shared by both uses (the wrappers differ, the node is one)
        n1, n3 = y1.grad_fn.next_functions[1][0], y3.grad_fn.next_functions[1][0]
        assert n1.name() == "ToCopyBackward0" and repr(n1) == repr(n3)
        assert repr(y2.grad_fn.next_functions[1][0]) != repr(n1)
    assert cgrad._C._autocast_cache_size() == 0  # outermost exit clears it
    (y1.float().sum() + y2.float().sum() + y3.float().sum()).backward()
    assert w.grad.dtype == cgrad.float32
    ref = 3 * x.sum(0, keepdim=True).expand(4, 6)
    np.testing.assert_allclose(np.array(w.grad.tolist()), np.array(ref.tolist()), rtol=2e-2, atol=5e-2)


def test_cast_cache_disabled_and_no_grad():
    w = cgrad.randn(4, 6, requires_grad=True)
    x = cgrad.randn(3, 6)
    with cgrad.autocast("cpu", cache_enabled=False):
        cgrad.nn.functional.linear(x, w)
        assert cgrad._C._autocast_cache_size() == 0
    assert cgrad.is_autocast_cache_enabled()
    with cgrad.autocast("cpu"), cgrad.no_grad():
        cgrad.nn.functional.linear(x, w)
        assert cgrad._C._autocast_cache_size() == 0  # a cast without history is never reused in grad mode


# ---------------------------------------------------------------- backward

def _mlp_grads(lib, arrays, dt):
    x, w1, b1, w2, b2, y = arrays
    leaves = [lib.tensor(a.tolist(), requires_grad=True) for a in (w1, b1, w2, b2)]
    xt, yt = lib.tensor(x.tolist()), lib.tensor(y.tolist())
    with lib.autocast("cpu", dtype=getattr(lib, dt)):
        h = lib.nn.functional.linear(xt, leaves[0], leaves[1])
        h.retain_grad()
        a = lib.nn.functional.relu(h)
        out = lib.nn.functional.linear(a, leaves[2], leaves[3])
        loss = lib.nn.functional.cross_entropy(out, yt)
    assert dtype_name(h) == dt and dtype_name(loss) == "float32"
    loss.backward()
    assert dtype_name(h.grad) == dt  # the op's gradient runs in the dtype its forward used
    return [l.grad for l in leaves], loss


@pytest.mark.parametrize("dt", LOW)
def test_mlp_gradients_match_torch_autocast(dt):
    r = np.random.default_rng(0)
    arrays = (r.standard_normal((16, 12)).astype("float32"), (r.standard_normal((32, 12)) * 0.3).astype("float32"),
              (r.standard_normal(32) * 0.1).astype("float32"), (r.standard_normal((5, 32)) * 0.3).astype("float32"),
              (r.standard_normal(5) * 0.1).astype("float32"), r.integers(0, 5, 16))
    gc, lc = _mlp_grads(cgrad, arrays, dt)
    gt, lt = _mlp_grads(torch, arrays, dt)
    assert abs(lc.item() - lt.item()) < 2e-2 * max(1.0, abs(lt.item()))
    for a, b in zip(gc, gt):
        assert dtype_name(a) == dtype_name(b) == "float32"
        an, bn = np.array(a.tolist()), b.numpy()
        scale = np.abs(bn).max()
        np.testing.assert_allclose(an, bn, atol=3e-2 * scale, rtol=0)


def test_conv_gradients_reach_float32_leaves():
    r = np.random.default_rng(1)
    img = r.standard_normal((2, 3, 8, 8)).astype("float32")
    k = (r.standard_normal((4, 3, 3, 3)) * 0.3).astype("float32")
    grads = []
    for lib in (cgrad, torch):
        kt = lib.tensor(k.tolist(), requires_grad=True)
        xt = lib.tensor(img.tolist(), requires_grad=True)
        with lib.autocast("cpu"):
            out = lib.nn.functional.conv2d(xt, kt, padding=1)
            loss = (out.float() ** 2).mean()
        loss.backward()
        assert dtype_name(kt.grad) == dtype_name(xt.grad) == "float32"
        grads.append([np.array(kt.grad.tolist()), np.array(xt.grad.tolist())])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, atol=3e-2 * np.abs(b).max(), rtol=0)


def test_backward_inside_autocast_uses_forward_dtypes():
    w = cgrad.randn(4, 6, requires_grad=True)
    x = cgrad.randn(3, 6)
    with cgrad.autocast("cpu"):
        y = cgrad.nn.functional.linear(x, w)
        y.retain_grad()
        y.float().sum().backward()  # backward inside the region: autocast is off while it runs
    assert y.grad.dtype == cgrad.bfloat16 and w.grad.dtype == cgrad.float32
