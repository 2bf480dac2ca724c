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


def _with_dtype(name):
    return lambda lib, *a, **k: getattr(lib, name)(*a, dtype=lib.float64, **k)


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
_ = _with_dtype
