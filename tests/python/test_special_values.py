"""Activations and their gradients at ±0, ±inf, NaN, ±1e20 and deep in the
negative tail, in every float dtype: the values are stated here (the right
ones: limits at the infinities, the conventions of the gates at NaN), cgrad
must give them bit for bit, and PyTorch must give them too or one of the
variants listed with its reason.

PyTorch's own answers there depend on its code path: the ISA its kernels were
dispatched to at import (ATEN_CPU_CAPABILITY=default / avx2 / avx512), its
vector body against its scalar tail (so the tensor's size and the element's
position), and the dtype. Each value is therefore put at the first, middle and
last position of tensors of 1 to 1000 elements; the test passes under every
ATEN_CPU_CAPABILITY (run it with each: the variant lists were measured so)."""
import math

import numpy as np
import pytest
import torch

import cgrad
import cgrad.nn.functional as CF
import torch.nn.functional as TF

INF, NAN = math.inf, math.nan
DTYPES = ["float32", "float64", "bfloat16", "float16"]
SIZES = [1, 7, 16, 17, 33, 64, 1000]
FILL = 0.25  # the other elements

# the inputs: name -> value (float16 holds no 1e20: there ±1e20 become ±inf and are
# checked against the ±inf expectations)
INPUTS = {"+inf": INF, "-inf": -INF, "nan": NAN, "+0": 0.0, "-0": -0.0, "+1e20": 1e20, "-1e20": -1e20, "-40": -40.0}

# Gates at a NaN input (the comparisons are false there): relu's is !(x <= 0) and
# passes the gradient, as PyTorch's threshold_backward; leaky_relu's x > 0 gives the
# slope; hardtanh, relu6, hardsigmoid and hardswish keep it closed, 0 (no gate lets a
# NaN input through, so a masked-out NaN output does not make the input's gradient NaN).
GATE_NAN_TAIL = ("PyTorch's scalar tail passes the gradient at a NaN input (its vector body "
                 "gives 0): which one depends on the size and the position")
HARDSWISH_NAN = ("PyTorch's hardswish backward gives nan at a NaN input from its vector body "
                 "(x/3 + 1/2) and the gradient from its scalar tail")
MINUS_INF_NAN = "PyTorch evaluates the formula as written at -inf: -inf * 0 = nan on every path"
GELU_PLUS_INF = ("PyTorch's float32 / bfloat16 gelu vector body (every ISA) gives nan at +inf; "
                 "its scalar tail, float64 and float16 give inf")
GRAD_INF_NAN = "PyTorch's gelu backward is inf * 0 = nan at the infinities on every path"
HARDSIGMOID_SIXTH = float(np.float32(1 / 6))
HARDSIGMOID_WHY = "PyTorch's hardsigmoid backward multiplies by 1/6 rounded to float32, also in float64"
TANH_GRAD_BIG = ("PyTorch's tanh-gelu backward overflows x^2 in float32 / bfloat16 at ±1e20: "
                 "inf * 0 = nan")


def _v(y, g, y_also=(), g_also=(), why=""):
    """expected value and gradient (for an incoming gradient of 1), and PyTorch's variants"""
    return dict(y=y, g=g, y_also=y_also, g_also=g_also, why=why)


def gelu_table(tanh):
    return {
        "+inf": _v(INF, 1.0, y_also=() if tanh else (NAN,), g_also=(NAN,),
                   why=GRAD_INF_NAN if tanh else GELU_PLUS_INF + "; " + GRAD_INF_NAN),
        "-inf": _v(-0.0, 0.0, y_also=(NAN,), g_also=(NAN,), why=MINUS_INF_NAN + "; " + GRAD_INF_NAN),
        "nan": _v(NAN, NAN),
        "+0": _v(0.0, 0.5), "-0": _v(-0.0, 0.5),
        "+1e20": _v("x", 1.0, g_also=(NAN,) if tanh else (), why=TANH_GRAD_BIG),
        "-1e20": _v(-0.0, 0.0, g_also=(NAN,) if tanh else (), why=TANH_GRAD_BIG),
        "-40": _v(-0.0, 0.0),
    }


def clamp_table(lo, hi):
    """hardtanh(lo, hi) (lo < 0 < hi); relu6 is (0, 6), where the zeros are bounds"""
    zero_g = 0.0 if lo == 0 else 1.0
    return {
        "+inf": _v(hi, 0.0), "-inf": _v(lo, 0.0),
        "nan": _v(NAN, 0.0, g_also=(1.0,), why=GATE_NAN_TAIL),
        "+0": _v(0.0, zero_g), "-0": _v(-0.0, zero_g),
        "+1e20": _v(hi, 0.0), "-1e20": _v(lo, 0.0), "-40": _v(lo, 0.0),
    }


TABLE = {
    "gelu": ((lambda L, x: (TF if L is torch else CF).gelu(x)), gelu_table(False)),
    "gelu_tanh": ((lambda L, x: (TF if L is torch else CF).gelu(x, approximate="tanh")), gelu_table(True)),
    "relu6": ((lambda L, x: (TF if L is torch else CF).relu6(x)), clamp_table(0.0, 6.0)),
    "hardtanh": ((lambda L, x: (TF if L is torch else CF).hardtanh(x, -0.5, 1.5)), clamp_table(-0.5, 1.5)),
    "hardswish": ((lambda L, x: (TF if L is torch else CF).hardswish(x)), {
        "+inf": _v(INF, 1.0), "-inf": _v(-0.0, 0.0, y_also=(NAN,), why=MINUS_INF_NAN + " (hardswish is 0 below -3)"),
        "nan": _v(NAN, 0.0, g_also=(NAN, 1.0), why=HARDSWISH_NAN),
        "+0": _v(0.0, 0.5), "-0": _v(-0.0, 0.5),
        "+1e20": _v("x", 1.0), "-1e20": _v(-0.0, 0.0), "-40": _v(-0.0, 0.0),
    }),
    "hardsigmoid": ((lambda L, x: (TF if L is torch else CF).hardsigmoid(x)), {
        "+inf": _v(1.0, 0.0), "-inf": _v(0.0, 0.0), "nan": _v(NAN, 0.0),
        "+0": _v(0.5, "1/6", g_also=(HARDSIGMOID_SIXTH,), why=HARDSIGMOID_WHY),
        "-0": _v(0.5, "1/6", g_also=(HARDSIGMOID_SIXTH,), why=HARDSIGMOID_WHY),
        "+1e20": _v(1.0, 0.0), "-1e20": _v(0.0, 0.0), "-40": _v(0.0, 0.0),
    }),
    "relu": ((lambda L, x: (TF if L is torch else CF).relu(x)), {
        "+inf": _v(INF, 1.0), "-inf": _v(0.0, 0.0), "nan": _v(NAN, 1.0),
        "+0": _v(0.0, 0.0), "-0": _v(-0.0, 0.0),
        "+1e20": _v("x", 1.0), "-1e20": _v(0.0, 0.0), "-40": _v(0.0, 0.0),
    }),
}


def _in_dtype(v, dtype):
    return torch.tensor(v, dtype=torch.float64).to(getattr(torch, dtype)).double().item()


def _expected(spec, x, dtype):
    """the stated value in the dtype: "x" is the input itself, "1/6" rounded to the dtype"""
    if spec == "x":
        return x
    if spec == "1/6":
        return _in_dtype(1 / 6, dtype)
    return _in_dtype(spec, dtype)


def _same(a, b):
    return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))


def _run(lib, f, dtype, n, pos, v):
    """value and gradient (incoming gradient 1) at element pos of an n-vector of FILL with v there"""
    x64 = torch.full((n,), FILL, dtype=torch.float64)
    x64[pos] = v
    t = x64.to(getattr(torch, dtype))
    if lib is torch:
        x = t.clone().requires_grad_()
    else:
        x = cgrad.from_numpy(t.view(torch.int16).numpy().copy()).view(getattr(cgrad, dtype)) \
            if dtype in ("bfloat16", "float16") else cgrad.from_numpy(t.numpy().copy())
        x.requires_grad_()
    y = f(lib, x)
    y.backward((torch if lib is torch else cgrad).ones_like(y))
    yv = y.detach().double() if lib is torch else y.detach().to(cgrad.float64)
    gv = x.grad.double() if lib is torch else x.grad.to(cgrad.float64)
    return float(t[pos].double()), float(yv.numpy()[pos]), float(gv.numpy()[pos])


CASES = [(op, dt, name) for op in TABLE for dt in DTYPES for name in INPUTS]


@pytest.mark.parametrize("op,dtype,name", CASES, ids=[f"{o}-{d}-{n}" for o, d, n in CASES])
def test_special_value_and_gradient(op, dtype, name):
    f, table = TABLE[op]
    spec = table[{"+1e20": "+inf", "-1e20": "-inf"}.get(name, name) if dtype == "float16" else name]
    for n in SIZES:
        for pos in sorted({0, n // 2, n - 1}):
            x, yc, gc = _run(cgrad, f, dtype, n, pos, INPUTS[name])
            want_y, want_g = _expected(spec["y"], x, dtype), _expected(spec["g"], x, dtype)
            where = f"{op}({name} as {x!r}) {dtype}, element {pos} of {n}"
            assert _same(yc, want_y), f"{where}: cgrad gives {yc!r}, the right value is {want_y!r}"
            # a zero gradient's sign is not stated
            assert _same(gc, want_g) or (gc == 0 and want_g == 0), \
                f"{where}: cgrad's gradient is {gc!r}, the right one is {want_g!r}"
            _, yt, gt = _run(torch, f, dtype, n, pos, INPUTS[name])
            y_ok = [want_y] + [_in_dtype(a, dtype) for a in spec["y_also"]]
            g_ok = [want_g] + [_in_dtype(a, dtype) for a in spec["g_also"]]
            assert any(_same(yt, a) for a in y_ok), \
                f"{where}: PyTorch gives {yt!r}, neither the right {want_y!r} nor a listed variant ({spec['why']})"
            assert any(_same(gt, a) or (gt == 0 and a == 0) for a in g_ok), \
                f"{where}: PyTorch's gradient is {gt!r}, neither the right {want_g!r} nor a listed variant " \
                f"({spec['why']})"


# (value: first x of the underflow, the last before it; gradient: the same)
TAILS = {"float32": (-14.3560686, -14.3560677, -14.5413494, -14.5413485),
         "float64": (-38.6, -38.5, -38.7, -38.6)}


@pytest.mark.parametrize("dtype", list(TAILS))
def test_gelu_negative_tail_underflows_to_minus_zero(dtype):
    """gelu underflows to -0 from x = -14.356 (float32) and -38.58 (float64),
    its gradient from -14.541 and -38.67, -inf included: no result stuck at
    the smallest subnormal (float32 gave -1.4e-45 for every x below -14.3)"""
    value_zero, value_last, grad_zero, grad_last = TAILS[dtype]
    for first, last, grad in ((value_zero, value_last, False), (grad_zero, grad_last, True)):
        xs = np.concatenate([np.linspace(first, -1e3, 257), [-1e20, -3e38, -np.inf]]).astype(dtype)
        x = cgrad.from_numpy(xs.copy()).requires_grad_()
        y = CF.gelu(x)
        y.sum().backward()
        got = x.grad.numpy() if grad else y.detach().numpy()
        assert np.all(got == 0) and (grad or np.all(np.signbit(got))), \
            f"{dtype} {'gradient' if grad else 'value'}: {got[(got != 0) | ~np.signbit(got)][:4]} below {first}"
        # the last input before the threshold still gives a (subnormal) nonzero result
        x = cgrad.tensor([last], dtype=getattr(cgrad, dtype), requires_grad=True)
        y = CF.gelu(x)
        y.backward()
        assert (x.grad.item() if grad else y.item()) < 0, f"{dtype}: zero at {last}"
