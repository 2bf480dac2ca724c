"""Op table: reductions, scans and sorting."""
import numpy as np

from .core import SHAPES, OpInfo, SampleInput, rand_array


def _reduce_samples(**extra):
    def fn(dtype):
        rng = np.random.default_rng(21)
        out = []
        for s in SHAPES:
            out.append(SampleInput((rand_array(s, dtype, rng=rng),), dict(extra)))
            for d in range(-len(s), len(s)):
                out.append(SampleInput((rand_array(s, dtype, rng=rng),), dict(extra, dim=d)))
                out.append(SampleInput((rand_array(s, dtype, rng=rng),), dict(extra, dim=d, keepdim=True)))
        out.append(SampleInput((rand_array((2, 3, 4), dtype, rng=rng),), dict(extra, dim=(0, 2))))
        out.append(SampleInput((rand_array((3, 4), dtype, rng=rng),), dict(extra, dim=1), noncontig=True))
        return out
    return fn


OPS = [
    OpInfo("sum", _reduce_samples(), dtypes=("float32", "float64", "int64", "bool")),
]
