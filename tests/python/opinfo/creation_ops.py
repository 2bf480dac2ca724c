"""Op table: creation and random sampling."""
import numpy as np

from .core import OpInfo, SampleInput, rand_array


def _shape_samples(*extra_args, **kw):
    def fn(dtype):
        return [SampleInput((s,) + extra_args, dict(kw)) for s in [(), (0,), (2, 3), (1, 0, 3)]]
    return fn


def _like_samples(*extra_args):
    def fn(dtype):
        rng = np.random.default_rng(0)
        return [SampleInput((rand_array(s, dtype, rng=rng),) + extra_args) for s in [(), (0,), (2, 3)]]
    return fn


OPS = [
    OpInfo("zeros", _shape_samples(), dtypes=("float32",), method=False, grad=False),
    OpInfo("ones", _shape_samples(), dtypes=("float32",), method=False, grad=False),
    OpInfo("empty", _shape_samples(), dtypes=("float32",), method=False, grad=False, nondeterministic_values=True),
    OpInfo("full", _shape_samples(2.5), dtypes=("float32",), method=False, grad=False),
    OpInfo("zeros_like", _like_samples(), dtypes=("float32", "int64"), method=False, grad=False),
    OpInfo("ones_like", _like_samples(), dtypes=("float32", "int64"), method=False, grad=False),
    OpInfo("empty_like", _like_samples(), dtypes=("float32",), method=False, grad=False, nondeterministic_values=True),
    OpInfo("full_like", _like_samples(7), dtypes=("float32", "int64"), method=False, grad=False),
    OpInfo("arange", lambda dt: [SampleInput((5,)), SampleInput((1, 7, 2)), SampleInput((0.5, 2.0, 0.25)),
                                 SampleInput((3, -2, -1))], dtypes=("float32",), method=False, grad=False),
]


# ---------------------------------------------------------------- linspace, logspace, eye, random sampling

def _dt_call(name):
    """lib.<name>(*args, dtype=<lib dtype named by the sample's dtype string>)."""
    def call(lib, *a, dtype=None, **k):
        if dtype is not None:
            k["dtype"] = getattr(lib, dtype)
        return getattr(lib, name)(*a, **k)
    return call


def _space_samples(dtype):
    return [SampleInput((0, 10, 5)), SampleInput((-1.5, 1.0, 1)), SampleInput((0.0, 1.0, 0)), SampleInput((2, -3, 7)),
            SampleInput((0, 10, 4), {"dtype": "int64"}), SampleInput((1, 5, 3), {"dtype": "float64"})]


def _logspace_samples(dtype):
    return _space_samples(dtype) + [SampleInput((0, 3, 4, 2)), SampleInput((-1, 1, 5), {"base": 3.0})]


def _eye_samples(dtype):
    return [SampleInput((3,)), SampleInput((2, 4)), SampleInput((4, 2)), SampleInput((0,)), SampleInput((3, 0)),
            SampleInput((3,), {"dtype": "int64"}), SampleInput((2, 3), {"dtype": "bool"})]


def _size_samples(*extra, dtypes=(None, "float64")):
    def fn(dtype):
        out = []
        for dt in dtypes:
            kw = {"dtype": dt} if dt else {}
            out += [SampleInput(extra + ((2, 3),), dict(kw)), SampleInput(extra + ((),), dict(kw)),
                    SampleInput(extra + ((0, 4),), dict(kw))]
        return out
    return fn


def _rand_samples(dtype):
    return (_size_samples()(dtype) + [SampleInput((2, 3, 4)), SampleInput((5,)), SampleInput((), {"size": (2, 2)})])


def _randint_samples(dtype):
    return [SampleInput((10, (3, 4))), SampleInput((-5, 5, (2,))), SampleInput((3, ())), SampleInput((0, 2, (0, 3))),
            SampleInput((1, 7, (4,)), {"dtype": "int32"}), SampleInput((0, 9, (2, 2)), {"dtype": "float64"}),
            SampleInput((5,), {"size": (3,)}), SampleInput((), {"low": 2, "high": 4, "size": (2,)})]


def _randperm_samples(dtype):
    return [SampleInput((5,)), SampleInput((0,)), SampleInput((1,)), SampleInput((6,), {"dtype": "int32"}),
            SampleInput((4,), {"dtype": "float64"})]


def _rand_like_samples(dtype):
    rng = np.random.default_rng(3)
    return [SampleInput((rand_array(s, dtype, rng=rng),)) for s in [(), (0,), (2, 3)]] + [
        SampleInput((rand_array((2, 3), dtype, rng=rng),), {"dtype": "float64"})]


def _randint_like_samples(dtype):
    rng = np.random.default_rng(5)
    return [SampleInput((rand_array((2, 3), dtype, rng=rng), 5)), SampleInput((rand_array((), dtype, rng=rng), -2, 3)),
            SampleInput((rand_array((0, 2), dtype, rng=rng), 4)),
            SampleInput((rand_array((3,), dtype, rng=rng), 1, 6), {"dtype": "int64"})]


def _normal_samples(dtype):
    rng = np.random.default_rng(9)
    return [SampleInput((rand_array((2, 3), dtype, rng=rng), rand_array((2, 3), dtype, lo=0.1, hi=1, rng=rng))),
            SampleInput((rand_array((2, 3), dtype, rng=rng), rand_array((3,), dtype, lo=0.1, hi=1, rng=rng))),
            SampleInput((rand_array((4,), dtype, rng=rng), 0.5)),
            SampleInput((rand_array((4,), dtype, rng=rng),)),
            SampleInput((1.0, rand_array((2, 2), dtype, lo=0.1, hi=1, rng=rng))),
            SampleInput((rand_array((), dtype, rng=rng), rand_array((), dtype, lo=0.1, hi=1, rng=rng)))]


def _normal_float_samples(dtype):
    return [SampleInput((0.0, 1.0, (2, 3))), SampleInput((2, 3, (4,))), SampleInput((1.0, 0.5), {"size": (0, 2)}),
            SampleInput((0.0, 2.0, (3,)), {"dtype": "float64"})]


def _bernoulli_samples(dtype):
    rng = np.random.default_rng(13)
    return [SampleInput((rand_array(s, dtype, lo=0, hi=1, rng=rng),)) for s in [(), (0,), (2, 3), (5,)]] + [
        SampleInput((rand_array((2, 3), dtype, lo=0, hi=1, rng=rng), 0.3)),
        SampleInput((rand_array((3, 4), dtype, lo=0, hi=1, rng=rng),), noncontig=True)]


def _multinomial_samples(dtype):
    rng = np.random.default_rng(17)
    return [SampleInput((rand_array((4,), dtype, lo=0.1, hi=1, rng=rng), 2)),
            SampleInput((rand_array((4,), dtype, lo=0.1, hi=1, rng=rng), 6, True)),
            SampleInput((rand_array((3, 5), dtype, lo=0.1, hi=1, rng=rng), 5)),
            SampleInput((rand_array((2, 3), dtype, lo=0.1, hi=1, rng=rng), 4), {"replacement": True}),
            SampleInput((rand_array((3, 4), dtype, lo=0.1, hi=1, rng=rng), 2), noncontig=True)]


def _rng_state_roundtrip(lib):
    state = lib.get_rng_state()
    a = lib.rand(4)
    lib.set_rng_state(state)
    return a - lib.rand(4)  # zeros: the state round-trips


def _generator_call(lib):
    g = lib.Generator().manual_seed(123)
    return [lib.rand(3, generator=g), lib.randn(2, 2, generator=g), lib.randint(0, 5, (4,), generator=g),
            lib.randperm(5, generator=g)]


def _seed_call(lib):
    s = lib.seed()
    assert isinstance(s, int)
    return lib.rand(2)


_NONDET = dict(method=False, grad=False, nondeterministic_values=True)

OPS += [
    OpInfo("linspace", _space_samples, dtypes=("float32",), call=_dt_call("linspace"), method=False, grad=False),
    OpInfo("logspace", _logspace_samples, dtypes=("float32",), call=_dt_call("logspace"), method=False, grad=False),
    OpInfo("eye", _eye_samples, dtypes=("float32",), call=_dt_call("eye"), method=False, grad=False),
    OpInfo("rand", _rand_samples, dtypes=("float32",), call=_dt_call("rand"), **_NONDET),
    OpInfo("randn", _rand_samples, dtypes=("float32",), call=_dt_call("randn"), **_NONDET),
    OpInfo("randint", _randint_samples, dtypes=("float32",), call=_dt_call("randint"), **_NONDET),
    OpInfo("randperm", _randperm_samples, dtypes=("float32",), call=_dt_call("randperm"), **_NONDET),
    OpInfo("rand_like", _rand_like_samples, dtypes=("float32", "float64"), call=_dt_call("rand_like"), **_NONDET),
    OpInfo("randn_like", _rand_like_samples, dtypes=("float32", "float64"), call=_dt_call("randn_like"), **_NONDET),
    OpInfo("randint_like", _randint_like_samples, dtypes=("float32", "int64"), call=_dt_call("randint_like"), **_NONDET),
    OpInfo("normal", _normal_samples, dtypes=("float32", "float64"), method=False, nondeterministic_values=True,
           grad=False),
    OpInfo("normal", _normal_float_samples, dtypes=("float32",), call=_dt_call("normal"), **_NONDET),
    OpInfo("bernoulli", _bernoulli_samples, dtypes=("float32", "float64"), grad=False, nondeterministic_values=True),
    OpInfo("multinomial", _multinomial_samples, dtypes=("float32", "float64"), grad=False, nondeterministic_values=True),
    OpInfo("get_rng_state", lambda dt: [SampleInput(())], dtypes=("float32",), call=lambda lib: lib.get_rng_state(),
           method=False, grad=False, skip_torch_compare=True),
    OpInfo("set_rng_state", lambda dt: [SampleInput(())], dtypes=("float32",), call=_rng_state_roundtrip, method=False,
           grad=False),
    OpInfo("seed", lambda dt: [SampleInput(())], dtypes=("float32",), call=_seed_call, **_NONDET),
    OpInfo("Generator", lambda dt: [SampleInput(())], dtypes=("float32",), call=_generator_call, **_NONDET),
]

# issue 6 exemptions: factories take no tensor; random / uninitialised results are compared by shape only
_FACTORIES = {"zeros", "ones", "empty", "full", "arange", "linspace", "logspace", "eye", "rand", "randn", "randint",
              "randperm", "seed", "get_rng_state", "set_rng_state", "Generator"}
_RANDOM = {"empty_like", "rand_like", "randn_like", "randint_like", "normal", "bernoulli", "multinomial"}
for _op in OPS:
    if _op.name in _FACTORIES:
        _op.exempt.update(extremes="factory: no tensor argument to put extreme values into",
                          strided="factory: no tensor argument to lay out")
    elif _op.name in _RANDOM:
        _op.exempt["extremes"] = "random / uninitialised values: compared by shape and dtype only"
    if _op.name == "bernoulli":
        _op.exempt["inplace"] = "random draws: Tensor.bernoulli_ cannot be compared with bernoulli"
