"""Op table: elementwise math (unary, binary, comparisons, logic, n-ary, activations).

Domains keep samples away from kinks, poles and ties (so gradients are
defined) and integer divisors away from zero."""
import numpy as np

from .core import (BROADCAST_PAIRS, SHAPES, OpInfo, SampleInput, TorchVariant, Z, bad, binary_samples, rand_array,
                   same_value, unary_samples)

F = ("float32", "float64")
FI = ("float32", "float64", "int64", "int32", "uint8", "bool")  # every dtype: ints/bools promote or keep
SIGNED = ("float32", "float64", "int64", "int32")
INTS = ("int64", "int32", "uint8")
INTB = ("int64", "int32", "uint8", "bool")


def _special_samples(dtype):
    """nan / ±inf / large values (no gradients)."""
    if not dtype.startswith("float"):
        return unary_samples()(dtype)
    x = np.array([[np.nan, np.inf, -np.inf, 1.5], [-0.0, 3e38, -2.5, np.nan]], dtype=dtype)
    return [SampleInput((x,), grad=False), SampleInput((x,), grad=False, noncontig=True)]


def _with(fn, *extra):
    """samples of fn plus the same with extra kwargs dicts (values only)."""
    def g(dtype):
        out = fn(dtype)
        for kw in extra:
            out += [SampleInput(s.args, dict(s.kwargs, **kw), s.noncontig, s.grad) for s in fn(dtype)[:4]]
        return out
    return g


def _concat(*fns):
    return lambda dtype: [s for f in fns for s in f(dtype)]


def _scalar_first(base):
    """pow(scalar, tensor)."""
    def g(dtype):
        rng = np.random.default_rng(3)
        b = base if dtype.startswith("float") else int(base)
        return [SampleInput((b, rand_array(s, dtype, 0, 2, rng))) for s in [(), (5,), (3, 4)]]
    return g


def _nary_samples(n, lo=-2.0, hi=2.0, los=None, his=None, **kwargs):
    """n same-shape / broadcast tensors."""
    los = los or [lo] * n
    his = his or [hi] * n

    def fn(dtype):
        rng = np.random.default_rng(17)
        out = []
        for s in SHAPES:
            out.append(SampleInput(tuple(rand_array(s, dtype, los[i], his[i], rng) for i in range(n)), dict(kwargs)))
        for a, b in BROADCAST_PAIRS[:4]:
            shapes = [a, b] + [b] * (n - 2)
            out.append(SampleInput(tuple(rand_array(shapes[i], dtype, los[i], his[i], rng) for i in range(n)),
                                   dict(kwargs)))
        out.append(SampleInput(tuple(rand_array((3, 4), dtype, los[i], his[i], rng) for i in range(n)), dict(kwargs),
                               noncontig=True))
        return out
    return fn


def _where_samples(dtype):
    rng = np.random.default_rng(23)
    out = []
    for a, b in [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 3, 4), (3, 1)), ((), ()), ((0, 3), (3,)), ((5,), ())]:
        out.append(SampleInput((np.asarray(rng.random(a) > 0.5), rand_array(a, dtype, rng=rng), rand_array(b, dtype, rng=rng))))
    out.append(SampleInput((rng.random((3, 4)) > 0.5, rand_array((3, 4), dtype, rng=rng), rand_array((3, 4), dtype, rng=rng)),
                           noncontig=True))
    out.append(SampleInput((rng.random((3, 4)) > 0.5, rand_array((3, 4), dtype, rng=rng), 2)))
    out.append(SampleInput((rng.random((3, 4)) > 0.5, 1.5, rand_array((4,), dtype, rng=rng))))
    return out


def _lerp_samples(dtype):
    rng = np.random.default_rng(29)
    out = _nary_samples(3, lo=-2, hi=2, los=[-2, -2, 0], his=[2, 2, 1])(dtype)
    out += [SampleInput((rand_array(s, dtype, rng=rng), rand_array(s, dtype, rng=rng), 0.3)) for s in [(), (5,), (3, 4)]]
    out.append(SampleInput((rand_array((3, 4), dtype, rng=rng), rand_array((4,), dtype, rng=rng), 0.7), noncontig=True))
    return out


def _clamp_samples(dtype):
    rng = np.random.default_rng(31)
    fl = dtype.startswith("float")
    lo, hi = (-0.7, 0.9) if fl else (-1, 1)
    out = [SampleInput((rand_array(s, dtype, rng=rng),), dict(min=lo, max=hi)) for s in SHAPES]
    out.append(SampleInput((rand_array((3, 4), dtype, rng=rng),), dict(min=lo), noncontig=True))
    out.append(SampleInput((rand_array((3, 4), dtype, rng=rng),), dict(max=hi)))
    # tensor bounds (lo < hi everywhere), broadcast
    out.append(SampleInput((rand_array((3, 4), dtype, rng=rng), rand_array((4,), dtype, -2, -0.5, rng),
                            rand_array((3, 1), dtype, 0.5, 2, rng))))
    out.append(SampleInput((rand_array((2, 3), dtype, rng=rng), rand_array((2, 3), dtype, -1, 0, rng))))
    if not fl:  # a float bound promotes an integer input
        out.append(SampleInput((rand_array((3, 4), dtype, rng=rng),), dict(min=0.5)))
    return out


def _clamp_one(key):
    def fn(dtype):
        rng = np.random.default_rng(37)
        v = 0.3 if dtype.startswith("float") else 1
        out = [SampleInput((rand_array(s, dtype, rng=rng), v)) for s in SHAPES]
        out.append(SampleInput((rand_array((3, 4), dtype, rng=rng), rand_array((4,), dtype, rng=rng))))
        out.append(SampleInput((rand_array((3, 4), dtype, rng=rng),), {key: v}, noncontig=True))
        return out
    return fn


def _softmax_samples(dtype):
    rng = np.random.default_rng(41)
    out = []
    for s in SHAPES:
        for d in range(-max(len(s), 1), max(len(s), 1)):
            out.append(SampleInput((rand_array(s, dtype, rng=rng),), dict(dim=d)))
    out.append(SampleInput((rand_array((3, 4), dtype, rng=rng), 0), noncontig=True))
    return out


def _isclose_samples(dtype):
    rng = np.random.default_rng(43)
    a = rand_array((3, 4), dtype, rng=rng)
    if dtype.startswith("float"):
        b = (a + np.asarray(rng.choice([0, 1e-9, 1e-3], size=a.shape), dtype=dtype)).astype(dtype)
        a[0, 0], b[0, 0] = np.nan, np.nan
        return [SampleInput((a, b)), SampleInput((a, b), dict(equal_nan=True)), SampleInput((a, b), dict(rtol=0.1, atol=0.01)),
                SampleInput((a, b[0]), noncontig=True)]
    b = a.copy()
    b[0] = 0
    return [SampleInput((a, b)), SampleInput((a, b), dict(atol=1, rtol=0))]


def _addc_samples(div):
    def fn(dtype):
        base = _nary_samples(3, los=[-2, -2, 0.5], his=[2, 2, 2])(dtype)
        return base + [SampleInput(s.args, dict(value=0.5 if dtype.startswith("float") else 2), s.noncontig)
                       for s in base[3:7]]
    return fn


def _is(v):
    """TorchVariant.at: the input elements equal to v"""
    return lambda x: same_value(x, np.full(x.shape, v))


def _neg_zero(x):
    return np.full(x.shape, -0.0)


# Measured with torch 2.13 under ATEN_CPU_CAPABILITY=default, avx2 and avx512, the special value
# at the first, middle and last position of tensors of 1 to 1000 elements (scalar tail and vector body).
GELU_VARIANTS = (
    TorchVariant(_is(np.inf), lambda x: x, (np.nan,),
                 "gelu(+inf) = +inf; torch's float32 / bfloat16 vector body (every ISA: its erf-based vector formula) "
                 "gives nan, its scalar tail and float64 give inf", when=lambda kw: kw.get("approximate") != "tanh"),
    TorchVariant(_is(-np.inf), _neg_zero, (np.nan,),
                 "gelu(-inf) = -0, the limit (cgrad's whole negative tail underflows to -0); torch evaluates "
                 "x/2 (1 + erf(x/sqrt2)) or x/2 (1 + tanh(u)) as written, -inf * 0 = nan, on every path"),
    TorchVariant(lambda x: np.isfinite(x) & (x > 1.7e38), lambda x: x, (np.inf,),
                 "gelu(x) = x for large x; torch's float32 / bfloat16 vector body forms x (1 + erf(x/sqrt2)) before "
                 "halving it, which overflows to inf above FLT_MAX / 2", when=lambda kw: kw.get("approximate") != "tanh"),
)
HARDSWISH_VARIANTS = (
    TorchVariant(_is(-np.inf), _neg_zero, (np.nan,),
                 "hardswish is 0 (cgrad: -0, as x * 0 for finite x) for every x <= -3; torch computes x * 0 = nan at "
                 "-inf on every path"),
)


def _F(name):
    """nn.functional activation: cgrad._C._<name> vs torch.nn.functional.<name>."""
    def call(lib, *a, **k):
        if lib.__name__ == "torch":
            import torch.nn.functional as tf
            return getattr(tf, name)(*a, **k)
        return getattr(lib._C, "_" + name)(*a, **k)
    return call


def _as_tensor(name):
    """lib.<name>(...) returns a Python bool: compare it as a 0-d tensor."""
    def call(lib, *a, **k):
        if name == "equal":
            k = {}
        r = getattr(lib, name)(*a, **k)
        assert isinstance(r, bool)
        return lib.tensor(r)
    return call


def _inplace_fn(name):
    """torch.<name>_(x) on a fresh copy, so the sample's tensor stays intact."""
    return lambda lib, x, **k: getattr(lib, name + "_")(x.clone(), **k)


_div_modes = _with(binary_samples(lo2=0.5, hi2=2.0), dict(rounding_mode="trunc"), dict(rounding_mode="floor"))
_int_div = binary_samples(lo2=1, hi2=3)  # divisors 1..3 for integers, [1, 3) for floats
_pow = _concat(binary_samples(lo=0.5, hi=2.0, lo2=-2.0, hi2=2.0), _scalar_first(2.0))
_pow_int = _concat(binary_samples(lo=0, hi=3, lo2=0, hi2=3), _scalar_first(2))

OPS = [
    # ---------------------------------------------------------------- unary math
    OpInfo("abs", unary_samples(), dtypes=("float32", "float64", "int64", "int32", "uint8"), inplace=True),
    OpInfo("absolute", unary_samples(), dtypes=("float32", "float64", "int64"), inplace=True),
    OpInfo("sign", unary_samples(), dtypes=FI, inplace=True),
    OpInfo("neg", unary_samples(), dtypes=("float32", "float64", "int64", "int32", "uint8"), inplace=True),
    OpInfo("negative", unary_samples(), dtypes=("float32", "float64", "int64"), inplace=True),
    OpInfo("positive", unary_samples(), dtypes=("float32", "float64", "int64")),
    OpInfo("reciprocal", unary_samples(0.5, 2.0), dtypes=("float32", "float64", "int64", "bool"), inplace=True),
    OpInfo("square", unary_samples(), dtypes=FI, inplace=True),
    OpInfo("sqrt", unary_samples(0.5, 3.0), dtypes=FI, inplace=True),
    OpInfo("rsqrt", unary_samples(0.5, 3.0), dtypes=("float32", "float64", "int64"), inplace=True),
    OpInfo("exp", unary_samples(), dtypes=FI, inplace=True),
    OpInfo("exp2", unary_samples(), dtypes=("float32", "float64", "int64"), inplace=True),
    OpInfo("expm1", unary_samples(), dtypes=("float32", "float64", "int64"), inplace=True),
    OpInfo("log", unary_samples(0.5, 3.0), dtypes=("float32", "float64", "int64", "bool"), inplace=True),
    OpInfo("log2", unary_samples(0.5, 3.0), dtypes=("float32", "float64", "int64"), inplace=True),
    OpInfo("log10", unary_samples(0.5, 3.0), dtypes=("float32", "float64", "int32"), inplace=True),
    OpInfo("log1p", unary_samples(-0.5, 2.0), dtypes=("float32", "float64", "uint8"), inplace=True),
    OpInfo("sin", unary_samples(), dtypes=FI, inplace=True),
    OpInfo("cos", unary_samples(), dtypes=("float32", "float64", "int64"), inplace=True),
    OpInfo("tan", unary_samples(-1.2, 1.2), dtypes=("float32", "float64", "int64"), inplace=True),
    OpInfo("asin", unary_samples(-0.9, 0.9), dtypes=F, inplace=True),
    OpInfo("arcsin", unary_samples(-0.9, 0.9), dtypes=F, inplace=True),
    OpInfo("acos", unary_samples(-0.9, 0.9), dtypes=F, inplace=True),
    OpInfo("arccos", unary_samples(-0.9, 0.9), dtypes=F, inplace=True),
    OpInfo("atan", unary_samples(), dtypes=("float32", "float64", "int64"), inplace=True),
    OpInfo("arctan", unary_samples(), dtypes=F, inplace=True),
    OpInfo("sinh", unary_samples(), dtypes=("float32", "float64", "int64"), inplace=True),
    OpInfo("cosh", unary_samples(), dtypes=("float32", "float64", "int64"), inplace=True),
    OpInfo("tanh", unary_samples(), dtypes=("float32", "float64", "int64"), inplace=True),
    OpInfo("asinh", unary_samples(), dtypes=("float32", "float64", "int64"), inplace=True),
    OpInfo("arcsinh", unary_samples(), dtypes=F, inplace=True),
    OpInfo("acosh", unary_samples(1.2, 3.0), dtypes=F, inplace=True),
    OpInfo("arccosh", unary_samples(1.2, 3.0), dtypes=F, inplace=True),
    OpInfo("atanh", unary_samples(-0.9, 0.9), dtypes=F, inplace=True),
    OpInfo("arctanh", unary_samples(-0.9, 0.9), dtypes=F, inplace=True),
    OpInfo("erf", unary_samples(), dtypes=("float32", "float64", "int64"), inplace=True),
    OpInfo("erfc", unary_samples(), dtypes=("float32", "float64", "int64"), inplace=True),
    OpInfo("erfinv", unary_samples(-0.9, 0.9), dtypes=F, inplace=True),
    OpInfo("floor", unary_samples(), dtypes=("float32", "float64", "int64", "int32", "uint8"), inplace=True),
    OpInfo("ceil", unary_samples(), dtypes=("float32", "float64", "int64", "int32", "uint8"), inplace=True),
    OpInfo("round", _with(unary_samples(-20, 20), dict(decimals=1), dict(decimals=-1)), dtypes=F, inplace=True),
    OpInfo("trunc", unary_samples(), dtypes=("float32", "float64", "int64", "int32", "uint8"), inplace=True),
    OpInfo("fix", unary_samples(), dtypes=("float32", "float64", "int64"), inplace=True),
    OpInfo("frac", unary_samples(), dtypes=F, inplace=True),
    OpInfo("nan_to_num", _concat(unary_samples(), _special_samples,
                                 lambda dt: [SampleInput(s.args, dict(nan=1.5, posinf=2.0, neginf=-3.0), s.noncontig, False)
                                             for s in _special_samples(dt)]),
           dtypes=("float32", "float64", "int64", "bool"), inplace=True),
    OpInfo("isnan", _special_samples, dtypes=FI, grad=False),
    OpInfo("isinf", _special_samples, dtypes=FI, grad=False),
    OpInfo("isfinite", _special_samples, dtypes=FI, grad=False),
    OpInfo("isposinf", _special_samples, dtypes=("float32", "float64", "int64", "bool"), grad=False),
    OpInfo("isneginf", _special_samples, dtypes=("float32", "float64", "int64", "bool"), grad=False),
    OpInfo("logical_not", unary_samples(-1, 1), dtypes=FI, grad=False, inplace=True),
    OpInfo("bitwise_not", unary_samples(-3, 3), dtypes=INTB, grad=False, inplace=True),
    # ---------------------------------------------------------------- binary arithmetic
    OpInfo("add", _with(binary_samples(), dict(alpha=2)), dtypes=FI, inplace=True),
    OpInfo("sub", _with(binary_samples(), dict(alpha=3)), dtypes=SIGNED + ("uint8",), inplace=True),
    OpInfo("subtract", binary_samples(), dtypes=("float32", "float64", "int64"), inplace=True),
    OpInfo("mul", binary_samples(), dtypes=FI, inplace=True),
    OpInfo("multiply", binary_samples(), dtypes=("float32", "float64", "int64"), inplace=True),
    OpInfo("div", _div_modes, dtypes=("float32", "float64"), inplace=True),
    OpInfo("divide", binary_samples(lo2=0.5, hi2=2.0), dtypes=("float32", "float64"), inplace=True),
    OpInfo("true_divide", binary_samples(lo2=0.5, hi2=2.0), dtypes=("float32", "float64"), inplace=True),
    OpInfo("floor_divide", _int_div, dtypes=("float32", "float64", "int64", "int32", "uint8"), inplace=True, grad=False),
    OpInfo("remainder", _int_div, dtypes=("float32", "float64", "int64", "int32", "uint8"), inplace=True),
    OpInfo("fmod", _int_div, dtypes=("float32", "float64", "int64", "int32", "uint8"), inplace=True),
    OpInfo("pow", _pow, dtypes=F, inplace=True, atol=1e-4, rtol=1e-5),
    OpInfo("float_power", _pow, dtypes=("float64",), inplace=True),
    OpInfo("atan2", binary_samples(lo2=0.5, hi2=2, scalars=False), dtypes=("float32", "float64", "int64"), inplace=True),
    OpInfo("arctan2", binary_samples(lo2=0.5, hi2=2, scalars=False), dtypes=F, inplace=True),
    OpInfo("hypot", binary_samples(scalars=False), dtypes=F, inplace=True),
    OpInfo("logaddexp", binary_samples(scalars=False), dtypes=F),
    OpInfo("logaddexp2", binary_samples(scalars=False), dtypes=F),
    OpInfo("copysign", binary_samples(), dtypes=("float32", "float64", "int64"), inplace=True),
    # no derivative in the first operand (PyTorch's); the one in x: test_ops_math_extra.py
    *(OpInfo(n, binary_samples(0.5, 5.0, 0.1, 5.0, scalars=False), dtypes=F, inplace=True, grad=False,
             extremes=("+0", "-0", "+inf", "-inf", "nan", "+1e20", "-1e20"),
             exempt={"extreme_values": "torch's float32 igamma(a, x) is 0 for a subnormal a (the right value is ~1: "
                                       "its igammac gives 9e-39 there); test_ops_math_extra.py states it"})
      for n in ("igamma", "igammac")),
    OpInfo("maximum", binary_samples(scalars=False), dtypes=FI),
    OpInfo("minimum", binary_samples(scalars=False), dtypes=FI),
    OpInfo("fmax", binary_samples(scalars=False), dtypes=("float32", "float64", "int64")),
    OpInfo("fmin", binary_samples(scalars=False), dtypes=("float32", "float64", "int64")),
    # ---------------------------------------------------------------- comparisons, logic, bitwise
    OpInfo("isclose", _isclose_samples, dtypes=("float32", "float64", "int64"), grad=False),
    OpInfo("allclose", _isclose_samples, call=_as_tensor("allclose"), dtypes=("float32", "float64", "int64"), method=False,
           grad=False),
    OpInfo("equal", _isclose_samples, call=_as_tensor("equal"), dtypes=("float32", "float64", "int64"), method=False,
           grad=False, errors=(bad(TypeError, "must be Tensor", Z(3), 3),)),
    OpInfo("logical_and", binary_samples(-1, 1, scalars=False), dtypes=FI, grad=False, inplace=True),
    OpInfo("logical_or", binary_samples(-1, 1, scalars=False), dtypes=FI, grad=False, inplace=True),
    OpInfo("logical_xor", binary_samples(-1, 1, scalars=False), dtypes=FI, grad=False, inplace=True),
    OpInfo("bitwise_and", binary_samples(-5, 5), dtypes=INTB, grad=False, inplace=True),
    OpInfo("bitwise_or", binary_samples(-5, 5), dtypes=INTB, grad=False, inplace=True),
    OpInfo("bitwise_xor", binary_samples(-5, 5), dtypes=INTB, grad=False, inplace=True),
    OpInfo("bitwise_left_shift", binary_samples(-5, 5, 0, 3), dtypes=INTS, grad=False, inplace=True),
    OpInfo("bitwise_right_shift", binary_samples(-20, 20, 0, 3), dtypes=INTS, grad=False, inplace=True),
    # ---------------------------------------------------------------- n-ary
    OpInfo("where", _where_samples, dtypes=("float32", "float64", "int64"), method=False),
    OpInfo("lerp", _lerp_samples, dtypes=F, inplace=True),
    OpInfo("addcmul", _addc_samples(False), dtypes=("float32", "float64", "int64"), inplace=True),
    OpInfo("addcdiv", _addc_samples(True), dtypes=F, inplace=True),
    OpInfo("clamp", _clamp_samples, dtypes=("float32", "float64", "int64", "int32"), inplace=True),
    OpInfo("clip", _clamp_samples, dtypes=("float32", "float64", "int64"), inplace=True),
    OpInfo("clamp_min", _clamp_one("min"), dtypes=("float32", "float64", "int64"), inplace=True),
    OpInfo("clamp_max", _clamp_one("max"), dtypes=("float32", "float64", "int64"), inplace=True),
    # ---------------------------------------------------------------- activations, softmax
    OpInfo("relu", unary_samples(), dtypes=("float32", "float64", "int64", "int32", "uint8"), inplace=True),
    OpInfo("sigmoid", unary_samples(-4, 4), dtypes=("float32", "float64", "int64", "bool"), inplace=True),
    OpInfo("selu", unary_samples(), dtypes=F, method=False),
    OpInfo("celu", _with(unary_samples(), dict(alpha=0.5)), dtypes=F, method=False),
    OpInfo("relu_", unary_samples(), call=_inplace_fn("relu"), dtypes=("float32", "int64"), method=False, grad=False),
    OpInfo("selu_", unary_samples(), call=_inplace_fn("selu"), dtypes=F, method=False, grad=False),
    OpInfo("celu_", unary_samples(alpha=0.7), call=_inplace_fn("celu"), dtypes=F, method=False, grad=False),
    OpInfo("sigmoid_", unary_samples(), call=_inplace_fn("sigmoid"), dtypes=F, method=False, grad=False),
    OpInfo("tanh_", unary_samples(), call=_inplace_fn("tanh"), dtypes=F, method=False, grad=False),
    OpInfo("softmax", _softmax_samples, dtypes=F),
    OpInfo("log_softmax", _softmax_samples, dtypes=F),
    # private activations for cgrad.nn.functional: cgrad._C._<name> vs torch.nn.functional.<name>
    OpInfo("F.relu6", unary_samples(-8, 8), call=_F("relu6"), dtypes=F, method=False),
    OpInfo("F.leaky_relu", _with(unary_samples(), dict(negative_slope=0.2)), call=_F("leaky_relu"), dtypes=F, method=False),
    OpInfo("F.elu", _with(unary_samples(), dict(alpha=0.5)), call=_F("elu"), dtypes=F, method=False),
    OpInfo("F.gelu", _with(unary_samples(-3, 3), dict(approximate="tanh")), call=_F("gelu"), dtypes=F, method=False,
           torch_variants=GELU_VARIANTS),
    OpInfo("F.silu", unary_samples(-4, 4), call=_F("silu"), dtypes=F, method=False),
    OpInfo("F.mish", unary_samples(-4, 4), call=_F("mish"), dtypes=F, method=False),
    OpInfo("F.softplus", _with(unary_samples(-4, 4), dict(beta=2.0, threshold=3.0)), call=_F("softplus"), dtypes=F,
           method=False),
    OpInfo("F.softsign", unary_samples(), call=_F("softsign"), dtypes=F, method=False),
    OpInfo("F.logsigmoid", unary_samples(-4, 4), call=_F("logsigmoid"), dtypes=F, method=False),
    OpInfo("F.hardtanh", _with(unary_samples(-3, 3), dict(min_val=-0.5, max_val=1.5)), call=_F("hardtanh"), dtypes=F,
           method=False),
    OpInfo("F.hardsigmoid", unary_samples(-4, 4), call=_F("hardsigmoid"), dtypes=F, method=False),
    OpInfo("F.hardswish", unary_samples(-4, 4), call=_F("hardswish"), dtypes=F, method=False,
           torch_variants=HARDSWISH_VARIANTS),
]

# comparisons and their aliases: values for float / int / bool operands, in-place forms
for _name in ("eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal", "not_equal"):
    OPS.append(OpInfo(_name, binary_samples(-1, 1), dtypes=("float32", "int64", "bool"), grad=False, inplace=True))

# integer pow / float_power samples (non-negative exponents)
OPS += [
    OpInfo("pow", _pow_int, dtypes=("int64", "int32")),
    OpInfo("float_power", _pow_int, dtypes=("int64", "float32")),
]

for _op in OPS:  # issue 6: no float samples to put extreme values into
    if _op.name.startswith("bitwise_"):
        _op.exempt["extremes"] = "integer-only op"

_ERRORS = {"where": bad(RuntimeError, "boolean", Z(3, 4), Z(3, 4), Z(3, 4))}  # issue 6: explicit bad inputs
for _op in OPS:
    if _op.name in _ERRORS:
        _op.errors = tuple(_op.errors) + (_ERRORS[_op.name],)
