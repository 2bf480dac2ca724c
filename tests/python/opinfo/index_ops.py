"""Op table: index ops (gather, scatter family, index_select / index_add /
index_copy / index_fill / index_put, masked ops, take, nonzero, argwhere).
Index arrays are int64 numpy arrays (they become index tensors); samples that
write the same position twice only use ops whose result is then still
deterministic (scatter_add, index_add, accumulating index_put)."""
import numpy as np

from .core import OpInfo, SampleInput, Z, bad, rand_array

VALUE_DTYPES = ("float32", "float64", "int64", "int32", "bool")


def _rng(seed=31):
    return np.random.default_rng(seed)


def _index(rng, shape, high):
    return rng.integers(0, max(high, 1), size=shape).astype("int64") if high > 0 else np.zeros(shape, "int64")


def _unique_index(rng, x_shape, dim, idx_shape):
    """An index of idx_shape whose entries along `dim` are distinct in every slice (scatter without clashes)."""
    full = list(idx_shape)
    full[dim] = x_shape[dim]
    perm = np.argsort(rng.random(full), axis=dim)
    return np.take(perm, range(idx_shape[dim]), axis=dim).astype("int64")


# shape of x, dim, index shape (index shape <= x shape)
_GATHER_CASES = [((3, 4), 1, (3, 2)), ((3, 4), 0, (2, 4)), ((2, 3, 4), 2, (2, 2, 3)), ((2, 3, 4), -2, (1, 3, 2)),
                 ((5,), 0, (7,)), ((), 0, ()), ((3, 0), 1, (3, 0)), ((3, 4), 1, (0, 2))]


def _gather_samples(dtype):
    rng = _rng()
    out = []
    for xs, dim, ishape in _GATHER_CASES:
        d = dim % max(len(xs), 1)
        high = xs[d] if xs else 1
        out.append(SampleInput((rand_array(xs, dtype, rng=rng), dim, _index(rng, ishape, high))))
    out.append(SampleInput((rand_array((3, 4), dtype, rng=rng), 1, _index(rng, (3, 4), 4)), noncontig=True))
    out.append(SampleInput((rand_array((3, 4), dtype, rng=rng), 1, _index(rng, (2, 3), 4).astype("int32"))))
    return out


_SCATTER_CASES = [((3, 4), 1, (3, 2)), ((3, 4), 0, (2, 4)), ((2, 3, 4), 2, (2, 2, 3)), ((5,), 0, (3,)), ((), 0, ()),
                  ((3, 4), 1, (0, 2))]


def _scatter_samples(unique, value=False, reduce=None, **kw):
    def fn(dtype):
        rng = _rng(41)
        out = []
        for xs, dim, ishape in _SCATTER_CASES:
            x = rand_array(xs, dtype, rng=rng)
            if unique and xs:
                idx = _unique_index(rng, xs, dim, ishape)
            else:
                idx = _index(rng, ishape, xs[dim] if xs else 1)
            src = (2.5 if dtype.startswith("float") else 3) if value else rand_array(ishape, dtype, rng=rng)
            kwargs = dict(kw)
            if reduce:
                kwargs["reduce"] = reduce
            out.append(SampleInput((x, dim, idx, src), kwargs, grad=not reduce))
        x = rand_array((3, 4), dtype, rng=rng)
        src = rand_array((3, 4), dtype, rng=rng)
        idx = _unique_index(rng, (3, 4), 1, (3, 4)) if unique else _index(rng, (3, 4), 4)
        out.append(SampleInput((x, 1, idx, src if not value else 1.5), dict(kw, **({"reduce": reduce} if reduce else {})),
                               noncontig=True, grad=not reduce))
        return out
    return fn


def _scatter_reduce_samples(dtype):
    rng = _rng(43)
    out = []
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        if reduce == "mean" and dtype == "bool":
            continue
        for include_self in (True, False):
            for xs, dim, ishape in [((3, 4), 1, (3, 3)), ((4,), 0, (6,)), ((2, 3), 0, (4, 3))]:
                x = rand_array(xs, dtype, lo=0.5, hi=2, rng=rng)
                src = rand_array(ishape, dtype, lo=0.5, hi=2, rng=rng)
                idx = _index(rng, ishape, xs[dim])
                out.append(SampleInput((x, dim, idx, src, reduce), {"include_self": include_self}))
    return out


def _index_select_samples(dtype):
    rng = _rng(51)
    out = [SampleInput((rand_array((3, 4), dtype, rng=rng), 1, _index(rng, (5,), 4))),
           SampleInput((rand_array((3, 4), dtype, rng=rng), 0, _index(rng, (2,), 3))),
           SampleInput((rand_array((2, 3, 4), dtype, rng=rng), -1, _index(rng, (3,), 4))),
           SampleInput((rand_array((5,), dtype, rng=rng), 0, _index(rng, (0,), 5))),
           SampleInput((rand_array((), dtype, rng=rng), 0, _index(rng, (1,), 1))),
           SampleInput((rand_array((3, 4), dtype, rng=rng), 1, _index(rng, (), 4))),
           SampleInput((rand_array((3, 4), dtype, rng=rng), 1, _index(rng, (3,), 4).astype("int32"))),
           SampleInput((rand_array((3, 4), dtype, rng=rng), 0, _index(rng, (4,), 3)), noncontig=True)]
    return out


def _take_samples(dtype):
    rng = _rng(53)
    return [SampleInput((rand_array((3, 4), dtype, rng=rng), _index(rng, (2, 3), 12))),
            SampleInput((rand_array((5,), dtype, rng=rng), _index(rng, (5,), 5))),
            SampleInput((rand_array((), dtype, rng=rng), _index(rng, (3,), 1))),
            SampleInput((rand_array((2, 3, 4), dtype, rng=rng), _index(rng, (0,), 24))),
            SampleInput((rand_array((3, 4), dtype, rng=rng), _index(rng, (4,), 12)), noncontig=True)]


def _index_dim_samples(kind):
    """index_add (duplicates allowed), index_copy (distinct), index_fill (scalar value)."""
    def fn(dtype):
        rng = _rng(57)
        out = []
        for xs, dim, n in [((3, 4), 0, 2), ((3, 4), 1, 3), ((2, 3, 4), 1, 2), ((5,), 0, 3), ((3, 4), -1, 0), ((), 0, 1)]:
            x = rand_array(xs, dtype, rng=rng)
            size = xs[dim] if xs else 1
            idx = (rng.permutation(size)[:n] if kind != "add" else rng.integers(0, size, size=n)).astype("int64")
            if kind == "fill":
                val = 1.5 if dtype.startswith("float") else True if dtype == "bool" else 2
                out.append(SampleInput((x, dim, idx, val)))
                continue
            ss = list(xs) if xs else [1]
            ss[dim if xs else 0] = n
            src = rand_array(tuple(ss) if xs else (), dtype, rng=rng)
            out.append(SampleInput((x, dim, idx, src)))
        x = rand_array((3, 4), dtype, rng=rng)
        if kind == "add" and dtype != "bool":
            out.append(SampleInput((x, 1, np.array([0, 0, 3], "int64"), rand_array((3, 3), dtype, rng=rng)),
                                   {"alpha": 2}, noncontig=True))
        elif kind == "fill":
            out.append(SampleInput((x, 1, np.array([2, 0], "int64"), 1 if dtype != "bool" else False), noncontig=True))
        else:
            out.append(SampleInput((x, 1, np.array([2, 0], "int64"), rand_array((3, 2), dtype, rng=rng)), noncontig=True))
        return out
    return fn


def _index_put_samples(dtype):
    rng = _rng(61)
    out = []
    x = rand_array((3, 4), dtype, rng=rng)
    out.append(SampleInput((x, np.array([0, 2], "int64"), rand_array((2, 4), dtype, rng=rng))))
    out.append(SampleInput((x, np.array([0, 2], "int64"), np.array([1, 3], "int64"), rand_array((2,), dtype, rng=rng))))
    out.append(SampleInput((x, np.array([[0], [2]], "int64"), np.array([1, 3], "int64"), rand_array((), dtype, rng=rng))))
    out.append(SampleInput((x, rand_array((3, 4), "bool", rng=rng), rand_array((), dtype, rng=rng))))
    out.append(SampleInput((x, np.array([0, 0, 1], "int64"), rand_array((3, 4), dtype, rng=rng)), {"accumulate": True}))
    out.append(SampleInput((rand_array((5,), dtype, rng=rng), np.array([4, 1, 4], "int64"), rand_array((3,), dtype, rng=rng)),
                           {"accumulate": True}))
    out.append(SampleInput((x, np.array([1], "int32"), rand_array((1, 4), dtype, rng=rng))))
    out.append(SampleInput((x, np.array([1, 2], "int64"), rand_array((2, 4), dtype, rng=rng)), noncontig=True))
    return out


def _index_put_call(lib, x, *rest, **kw):
    return lib.index_put(x, tuple(rest[:-1]), rest[-1], **kw)


def _mask_samples(kind):
    def fn(dtype):
        rng = _rng(71)
        out = []
        pairs = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 3, 4), (3, 1)), ((5,), (5,)), ((), ()), ((0, 3), (3,)),
                 ((4,), (2, 4)) if kind != "fill" else ((3, 4), (1, 4))]
        for xs, ms in pairs:
            x = rand_array(xs, dtype, rng=rng)
            mask = rand_array(ms, "bool", rng=rng)
            if kind == "fill":
                out.append(SampleInput((x, mask, 1.5 if dtype.startswith("float") else 3 if dtype != "bool" else True)))
            elif kind == "scatter":
                n = int(np.prod(np.broadcast_shapes(xs, ms)))
                out.append(SampleInput((x, mask, rand_array((n + 1,), dtype, rng=rng))))
            else:
                out.append(SampleInput((x, mask)))
        x = rand_array((3, 4), dtype, rng=rng)
        mask = rand_array((3, 4), "bool", rng=rng)
        if kind == "fill":
            out.append(SampleInput((x, mask, rand_array((), dtype, rng=rng))))
            out.append(SampleInput((x, mask, 2), noncontig=True))
        elif kind == "scatter":
            out.append(SampleInput((x, mask, rand_array((3, 4), dtype, rng=rng)), noncontig=True))
        else:
            out.append(SampleInput((x, mask), noncontig=True))
        return out
    return fn


def _nonzero_samples(**kw):
    def fn(dtype):
        rng = _rng(81)
        out = []
        for s in [(), (0,), (1, 0, 3), (5,), (3, 4), (2, 3, 4)]:
            x = rand_array(s, dtype, lo=-1, hi=1, rng=rng)
            if dtype.startswith("float"):
                x = np.where(rng.random(s) < 0.4, 0, x).astype(dtype)
            out.append(SampleInput((x,), dict(kw)))
        out.append(SampleInput((np.zeros((), dtype),), dict(kw)))
        out.append(SampleInput((rand_array((3, 4), dtype, lo=-1, hi=1, rng=rng),), dict(kw), noncontig=True))
        return out
    return fn


OPS = [
    OpInfo("gather", _gather_samples, dtypes=VALUE_DTYPES),
    OpInfo("scatter", _scatter_samples(unique=True), dtypes=VALUE_DTYPES, inplace=True),
    OpInfo("scatter", _scatter_samples(unique=False, value=True), dtypes=("float32", "float64", "int64"), inplace=True),
    OpInfo("scatter", _scatter_samples(unique=False, value=True, reduce="add"), dtypes=("float64", "int64"), inplace=True,
           grad=False),
    OpInfo("scatter", _scatter_samples(unique=False, value=True, reduce="multiply"), dtypes=("float64", "int64"),
           inplace=True, grad=False),
    OpInfo("scatter_add", _scatter_samples(unique=False), dtypes=("float32", "float64", "int64", "int32"), inplace=True),
    OpInfo("scatter_reduce", _scatter_reduce_samples, dtypes=("float32", "float64", "int64"), inplace=True),
    OpInfo("index_select", _index_select_samples, dtypes=VALUE_DTYPES),
    OpInfo("take", _take_samples, dtypes=VALUE_DTYPES,
           errors=("kwarg", bad(IndexError, "out of range", Z(3, 4), Z(dtype="int64", values=[0, 12])))),
    OpInfo("index_add", _index_dim_samples("add"), dtypes=("float32", "float64", "int64", "int32"), inplace=True),
    OpInfo("index_copy", _index_dim_samples("copy"), dtypes=VALUE_DTYPES, inplace=True),
    OpInfo("index_fill", _index_dim_samples("fill"), dtypes=VALUE_DTYPES, inplace=True),
    OpInfo("index_put", _index_put_samples, dtypes=("float32", "float64", "int64", "bool"), call=_index_put_call,
           method=False),
    OpInfo("masked_fill", _mask_samples("fill"), dtypes=VALUE_DTYPES, inplace=True),
    OpInfo("masked_select", _mask_samples("select"), dtypes=VALUE_DTYPES),
    OpInfo("masked_scatter", _mask_samples("scatter"), dtypes=VALUE_DTYPES, inplace=True),
    OpInfo("nonzero", _nonzero_samples(), dtypes=("float32", "int64", "bool"), grad=False),
    OpInfo("nonzero", _nonzero_samples(as_tuple=True), dtypes=("float32", "bool"), grad=False),
    OpInfo("argwhere", _nonzero_samples(), dtypes=("float32", "int64", "bool"), grad=False),
]

# issue 6: explicit bad inputs (PyTorch's exception types), beside the generic ones
_I = dict(dtype="int64")
_ERRORS = {
    "gather": bad(RuntimeError, "out of bounds", Z(3, 4), 1, Z(**_I, values=[[0, 4]] * 3)),
    "scatter": bad(RuntimeError, "out of bounds", Z(3, 4), 1, Z(**_I, values=[[0, 4]] * 3), Z(3, 2)),
    "scatter_add": bad(RuntimeError, "out of bounds", Z(3, 4), 1, Z(**_I, values=[[0, 4]] * 3), Z(3, 2)),
    "index_select": bad(RuntimeError, "out of range|bounds", Z(3, 4), 1, Z(**_I, values=[0, 4])),
    "index_add": bad(RuntimeError, "out of bounds", Z(3, 4), 0, Z(**_I, values=[0, 3]), Z(2, 4)),
    "index_copy": bad(IndexError, "out of bounds", Z(3, 4), 0, Z(**_I, values=[0, 3]), Z(2, 4)),
    "index_fill": bad(IndexError, "out of bounds", Z(3, 4), 0, Z(**_I, values=[0, 3]), 1.0),
    "masked_fill": bad(RuntimeError, "boolean mask", Z(3, 4), Z(3, 4), 1.0),
}
for _op in OPS:
    if _op.name in _ERRORS:
        _op.errors = tuple(_op.errors) + (_ERRORS[_op.name],)
