"""Op table: the nn ops torch has at top level (binary_cross_entropy_with_logits,
kl_div, cosine_similarity, pairwise_distance, constant_pad_nd, pixel_shuffle,
pixel_unshuffle). torch.nn.functional as a whole is checked in
tests/python/test_nn_functional_func.py."""
import numpy as np

from .core import DOUBLE_ACCUMULATION, NO_LARGE, OpInfo, SampleInput, rand_array

F = ("float32", "float64")
ALL = ("float32", "float64", "int64", "bool")


def _bce_logits(dtype):
    rng = np.random.default_rng(301)
    out = []
    for s in [(), (0,), (5,), (3, 4), (2, 3, 4)]:
        for red in (0, 1, 2):
            out.append(SampleInput((rand_array(s, dtype, rng=rng), rand_array(s, dtype, 0, 1, rng=rng), None, None, red)))
    x, t = rand_array((3, 4), dtype, rng=rng), rand_array((3, 4), dtype, 0, 1, rng=rng)
    w, pw = rand_array((4,), dtype, 0.5, 2, rng=rng), rand_array((4,), dtype, 0.5, 2, rng=rng)
    # torch does not differentiate weight and pos_weight (it refuses them requiring grad)
    out += [SampleInput((x, t, w), grad=False), SampleInput((x, t, None, pw), grad=False),
            SampleInput((x, t, w, pw, 2), grad=False), SampleInput((x, t, w, pw, 0), noncontig=True, grad=False),
            SampleInput((x, t), dict(reduction=1))]
    return out


def _kl_div(dtype):
    rng = np.random.default_rng(303)
    out = []
    for s in [(), (0,), (5,), (3, 4), (2, 3, 4)]:
        for red in (0, 1, 2):
            out.append(SampleInput((rand_array(s, dtype, -3, -0.1, rng=rng), rand_array(s, dtype, 0.05, 1, rng=rng), red)))
    x = rand_array((3, 4), dtype, -3, -0.1, rng=rng)
    out += [SampleInput((x, rand_array((3, 4), dtype, -3, 0, rng=rng)), dict(log_target=True)),
            SampleInput((x, rand_array((3, 4), dtype, -3, 0, rng=rng), 0), dict(log_target=True), noncontig=True),
            SampleInput((x, rand_array((4,), dtype, 0.05, 1, rng=rng), 2)),
            SampleInput((x, rand_array((3, 4), dtype, 0.05, 1, rng=rng)), noncontig=True)]
    return out


def _cosine(dtype):
    rng = np.random.default_rng(305)
    pairs = [((3, 4), (3, 4), {}), ((2, 3, 4), (2, 3, 4), dict(dim=-1)), ((3, 4), (1, 4), {}), ((3, 4), (4,), dict(dim=-1)),
             ((5,), (5,), dict(dim=0)), ((0, 3), (0, 3), {}), ((2, 3, 4), (3, 1), dict(dim=0, eps=1e-6))]
    out = [SampleInput((rand_array(a, dtype, rng=rng), rand_array(b, dtype, rng=rng)), kw) for a, b, kw in pairs]
    out.append(SampleInput((rand_array((3, 4), dtype, rng=rng), rand_array((3, 4), dtype, rng=rng)), noncontig=True))
    return out


def _pairwise(dtype):
    rng = np.random.default_rng(307)
    pairs = [((3, 4), (3, 4), {}), ((4,), (4,), {}), ((3, 4), (4,), {}), ((2, 3, 4), (2, 3, 4), dict(keepdim=True)),
             ((3, 4), (3, 4), dict(p=1.0)), ((3, 4), (3, 4), dict(p=3.0, eps=1e-3)), ((), (), {}), ((0, 4), (0, 4), {})]
    out = [SampleInput((rand_array(a, dtype, rng=rng), rand_array(b, dtype, rng=rng)), kw) for a, b, kw in pairs]
    out.append(SampleInput((rand_array((3, 4), dtype, rng=rng), rand_array((3, 4), dtype, rng=rng)), noncontig=True))
    return out


def _constant_pad(dtype):
    rng = np.random.default_rng(309)
    v = 1.5 if dtype.startswith("float") else 1 if dtype != "bool" else True
    cases = [((5,), (1, 2)), ((3, 4), (1, 1, 2, 0)), ((2, 3, 4), (-1, 1)), ((2, 3, 4), (0, 0, 1, 1, 1, 1)),
             ((0, 3), (1, 1)), ((3, 4), (2, -1, -1, 0)), ((3, 4), ())]
    out = [SampleInput((rand_array(s, dtype, rng=rng), p)) for s, p in cases]
    out.append(SampleInput((rand_array((3, 4), dtype, rng=rng), (1, 2)), dict(value=v)))
    out.append(SampleInput((rand_array((3, 4), dtype, rng=rng), (1, 2, 1, 0), v), noncontig=True))
    return out


def _pixel(shuffle):
    def fn(dtype):
        rng = np.random.default_rng(311)
        cases = ([((1, 8, 2, 3), 2), ((2, 4, 2, 2), 2), ((4, 3, 3), 2), ((0, 4, 2, 2), 2), ((2, 3, 2, 2), 1),
                  ((2, 1, 9, 1, 2), 3)] if shuffle else
                 [((1, 2, 4, 6), 2), ((2, 3, 3), 3), ((0, 1, 2, 2), 2), ((2, 3, 2, 2), 1), ((2, 1, 1, 4, 2), 2)])
        # torch's backward fails on empty inputs: values only there
        out = [SampleInput((rand_array(s, dtype, rng=rng), r), grad=0 not in s) for s, r in cases]
        out.append(SampleInput((rand_array((1, 4, 2, 4) if shuffle else (1, 1, 4, 4), dtype, rng=rng), 2), noncontig=True))
        return out
    return fn


OPS = [
    OpInfo("binary_cross_entropy_with_logits", _bce_logits, dtypes=F, method=False),
    OpInfo("kl_div", _kl_div, dtypes=F, method=False),
    OpInfo("cosine_similarity", _cosine, dtypes=F, method=False, extremes=NO_LARGE, exempt={"extreme_values": DOUBLE_ACCUMULATION}),
    OpInfo("pairwise_distance", _pairwise, dtypes=F, method=False, extremes=NO_LARGE, exempt={"extreme_values": DOUBLE_ACCUMULATION}),
    OpInfo("constant_pad_nd", _constant_pad, dtypes=ALL, method=False),
    OpInfo("pixel_shuffle", _pixel(True), dtypes=ALL, method=False),
    OpInfo("pixel_unshuffle", _pixel(False), dtypes=ALL, method=False),
]
