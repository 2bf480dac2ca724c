"""Op table: matrix products (matmul, mm, bmm, mv, dot, vdot, inner, outer,
ger, addmm, baddbmm, einsum) and bilinear."""
import numpy as np

from .core import DOUBLE_ACCUMULATION, NO_LARGE, OpInfo, SampleInput, Z, bad, rand_array

PROD_DTYPES = ("float32", "float64", "int64")


def _pairs(pairs, seed=91, noncontig=None, **kw):
    def fn(dtype):
        rng = np.random.default_rng(seed)
        out = [SampleInput((rand_array(a, dtype, rng=rng), rand_array(b, dtype, rng=rng)), dict(kw)) for a, b in pairs]
        if noncontig:
            a, b = noncontig
            out.append(SampleInput((rand_array(a, dtype, rng=rng), rand_array(b, dtype, rng=rng)), dict(kw), noncontig=True))
        return out
    return fn


_MATMUL = [((3, 4), (4, 5)), ((4,), (4,)), ((4,), (4, 5)), ((3, 4), (4,)), ((2, 3, 4), (4, 2)), ((2, 3, 4), (4,)),
           ((4,), (2, 4, 3)), ((2, 1, 3, 4), (3, 4, 2)), ((2, 3), (4, 3, 2)), ((0, 4), (4, 3)), ((3, 0), (0, 2)),
           ((1, 2), (2, 1))]


def _addmm_samples(dtype):
    rng = np.random.default_rng(95)
    out = []
    for s in [(2, 3), (3,), (1, 3), ()]:
        out.append(SampleInput((rand_array(s, dtype, rng=rng), rand_array((2, 4), dtype, rng=rng),
                                rand_array((4, 3), dtype, rng=rng))))
    out.append(SampleInput((rand_array((2, 3), dtype, rng=rng), rand_array((2, 4), dtype, rng=rng),
                            rand_array((4, 3), dtype, rng=rng)), {"beta": 0.5 if dtype != "int64" else 2, "alpha": 2}))
    out.append(SampleInput((rand_array((2, 3), dtype, rng=rng), rand_array((2, 0), dtype, rng=rng),
                            rand_array((0, 3), dtype, rng=rng))))
    out.append(SampleInput((rand_array((2, 3), dtype, rng=rng), rand_array((2, 4), dtype, rng=rng),
                            rand_array((4, 3), dtype, rng=rng)), noncontig=True))
    return out


def _baddbmm_samples(dtype):
    rng = np.random.default_rng(97)
    out = []
    for s in [(2, 2, 3), (2, 3), (1, 1, 3)]:
        out.append(SampleInput((rand_array(s, dtype, rng=rng), rand_array((2, 2, 4), dtype, rng=rng),
                                rand_array((2, 4, 3), dtype, rng=rng))))
    out.append(SampleInput((rand_array((2, 2, 3), dtype, rng=rng), rand_array((2, 2, 4), dtype, rng=rng),
                            rand_array((2, 4, 3), dtype, rng=rng)), {"beta": 3, "alpha": -1}, noncontig=True))
    return out


_EINSUM = [("ij,jk->ik", [(3, 4), (4, 2)]), ("ii->", [(3, 3)]), ("ij->ji", [(2, 3)]), ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
           ("i,j->ij", [(3,), (2,)]), ("ij->", [(2, 3)]), ("...ij,...jk->...ik", [(2, 2, 3), (3, 2)]), ("ii->i", [(3, 3)]),
           ("ij,ij->i", [(2, 3), (2, 3)]), ("i,i", [(4,), (4,)]), ("ij,jk,kl->il", [(2, 3), (3, 2), (2, 2)]),
           ("bn,anm,bm->ba", [(2, 3), (2, 3, 2), (2, 2)])]


def _einsum_samples(dtype):
    rng = np.random.default_rng(99)
    out = [SampleInput((eq,) + tuple(rand_array(s, dtype, rng=rng) for s in shapes)) for eq, shapes in _EINSUM]
    out.append(SampleInput(("ij,jk->ik", rand_array((3, 4), dtype, rng=rng), rand_array((4, 2), dtype, rng=rng)),
                           noncontig=True))
    return out


_BILINEAR = [[(3, 4), (3, 2), (5, 4, 2), (5,)], [(2, 3, 4), (2, 3, 2), (2, 4, 2), (2,)], [(4,), (2,), (3, 4, 2), (3,)],
             [(3, 4), (3, 2), (5, 4, 2)], [(0, 4), (0, 2), (3, 4, 2), (3,)]]


def _bilinear_samples(dtype):
    rng = np.random.default_rng(101)
    out = [SampleInput(tuple(rand_array(s, dtype, rng=rng) for s in shapes)) for shapes in _BILINEAR]
    out.append(SampleInput(tuple(rand_array(s, dtype, rng=rng) for s in _BILINEAR[0]), noncontig=True))
    return out


OPS = [
    OpInfo("matmul", _pairs(_MATMUL, noncontig=((3, 4), (4, 3))), dtypes=PROD_DTYPES, extremes=NO_LARGE,
           exempt={"extreme_values": DOUBLE_ACCUMULATION}, errors=("kwarg", bad(RuntimeError, "cannot be multiplied", Z(3, 4), Z(5, 2)))),
    OpInfo("mm", _pairs([((3, 4), (4, 5)), ((0, 4), (4, 2)), ((2, 0), (0, 3)), ((1, 1), (1, 1))], noncontig=((3, 4), (4, 3))),
           dtypes=PROD_DTYPES, extremes=NO_LARGE,
           exempt={"extreme_values": DOUBLE_ACCUMULATION}, errors=("kwarg", bad(RuntimeError, "cannot be multiplied", Z(3, 4), Z(5, 2)))),
    OpInfo("bmm", _pairs([((2, 3, 4), (2, 4, 2)), ((0, 3, 4), (0, 4, 2)), ((1, 2, 0), (1, 0, 3))],
                         noncontig=((2, 3, 4), (2, 4, 3))), dtypes=PROD_DTYPES, extremes=NO_LARGE,
           exempt={"extreme_values": DOUBLE_ACCUMULATION}, errors=("kwarg", bad(RuntimeError, "cannot be multiplied", Z(2, 3, 4), Z(2, 5, 2)))),
    OpInfo("mv", _pairs([((3, 4), (4,)), ((0, 4), (4,)), ((2, 0), (0,))], noncontig=((3, 4), (4,))), dtypes=PROD_DTYPES),
    OpInfo("dot", _pairs([((4,), (4,)), ((0,), (0,)), ((1,), (1,))], noncontig=((5,), (5,))), dtypes=PROD_DTYPES),
    OpInfo("vdot", _pairs([((4,), (4,)), ((0,), (0,))], noncontig=((5,), (5,))), dtypes=PROD_DTYPES),
    OpInfo("inner", _pairs([((4,), (4,)), ((2, 3), (4, 3)), ((2, 3, 4), (4,)), ((), (2, 3)), ((3,), ()), ((0, 3), (2, 3))],
                           noncontig=((3, 4), (2, 4))), dtypes=PROD_DTYPES),
    OpInfo("outer", _pairs([((3,), (4,)), ((0,), (2,)), ((1,), (1,))], noncontig=((3,), (4,))), dtypes=PROD_DTYPES, errors=("kwarg", bad(RuntimeError, "1D", Z(3, 4), Z(2)))),
    OpInfo("ger", _pairs([((3,), (4,)), ((0,), (2,))], noncontig=((3,), (4,))), dtypes=PROD_DTYPES, errors=("kwarg", bad(RuntimeError, "1D", Z(3, 4), Z(2)))),
    OpInfo("addmm", _addmm_samples, dtypes=PROD_DTYPES, inplace=True),
    OpInfo("baddbmm", _baddbmm_samples, dtypes=PROD_DTYPES, inplace=True),
    OpInfo("einsum", _einsum_samples, dtypes=("float32", "float64"), method=False, extremes=NO_LARGE,
           exempt={"extreme_values": DOUBLE_ACCUMULATION}),
    OpInfo("bilinear", _bilinear_samples, dtypes=("float32", "float64"), method=False, extremes=NO_LARGE,
           exempt={"extreme_values": DOUBLE_ACCUMULATION}),
]


_ERRORS = {"mm": bad(RuntimeError, "same dtype", Z(3, 4), Z(4, 2, dtype="float64"))}  # issue 6: explicit bad inputs
for _op in OPS:
    if _op.name in _ERRORS:
        _op.errors = tuple(_op.errors) + (_ERRORS[_op.name],)
