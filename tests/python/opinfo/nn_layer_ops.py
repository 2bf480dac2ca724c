"""Op table: the layer kernels torch has at top level — convolutions and
transposed convolutions, max / avg / adaptive pooling, batch / instance /
layer / group / rms norm, dropout (values compared by shape only) and
embedding (+ embedding_renorm_). Options grids and errors are in
tests/python/test_nn_functional_layers.py."""
import numpy as np

from .core import DOUBLE_ACCUMULATION, NO_LARGE, OpInfo, SampleInput, Z, bad, rand_array

_TOL = dict(atol=1e-4, rtol=1e-4)


def _arrays(rng, dtype, *shapes):
    return tuple(rand_array(s, dtype, rng=rng) for s in shapes)


def _conv_samples(nsp):
    def fn(dtype):
        rng = np.random.default_rng(300 + nsp)
        sp = (5, 4, 4)[:nsp]
        k = (3, 2, 2)[:nsp]
        out = [
            SampleInput(_arrays(rng, dtype, (2, 2) + sp, (3, 2) + k, (3,))),
            SampleInput(_arrays(rng, dtype, (2, 2) + sp, (3, 2) + k), {"stride": 2, "padding": 1}),
            SampleInput(_arrays(rng, dtype, (1, 2) + sp, (2, 2) + k, (2,)), {"padding": "same", "dilation": 2}),
            SampleInput(_arrays(rng, dtype, (1, 4) + sp, (4, 2) + k, (4,)), {"groups": 2, "padding": "valid"}),
            SampleInput(_arrays(rng, dtype, (2,) + sp, (3, 2) + k, (3,)), {"padding": (1,) * nsp}),  # unbatched
            SampleInput(_arrays(rng, dtype, (0, 2) + sp, (3, 2) + k, (3,))),  # empty batch
            SampleInput(_arrays(rng, dtype, (2, 2) + sp, (3, 2) + k, (3,)), {"stride": (1,) * nsp}, noncontig=True),
            SampleInput(_arrays(rng, dtype, (1, 1) + (3, 2, 2)[:nsp], (1, 1) + (2, 1, 2)[:nsp], (1,))),  # gradcheck
        ]
        return out
    return fn


def _convt_samples(nsp):
    def fn(dtype):
        rng = np.random.default_rng(310 + nsp)
        sp = (4, 3, 3)[:nsp]
        k = (3, 2, 2)[:nsp]
        return [
            SampleInput(_arrays(rng, dtype, (2, 2) + sp, (2, 3) + k, (3,))),
            SampleInput(_arrays(rng, dtype, (2, 2) + sp, (2, 3) + k), {"stride": 2, "padding": 1, "output_padding": 1}),
            SampleInput(_arrays(rng, dtype, (1, 4) + sp, (4, 1) + k, (2,)), {"groups": 2, "dilation": 2}),
            SampleInput(_arrays(rng, dtype, (2,) + sp, (2, 3) + k, (3,)), {"stride": (2,) * nsp}),  # unbatched
            SampleInput(_arrays(rng, dtype, (2, 2) + sp, (2, 3) + k, (3,)), noncontig=True),
            SampleInput(_arrays(rng, dtype, (1, 1) + (2, 2, 1)[:nsp], (1, 1) + (2, 2, 2)[:nsp], (1,))),  # gradcheck
        ]
    return fn


def _pool_samples(nsp, max_pool):
    def fn(dtype):
        rng = np.random.default_rng(320 + nsp)
        sp = (8, 6, 5)[:nsp]
        out = [
            SampleInput(_arrays(rng, dtype, (2, 3) + sp) + (2,)),
            SampleInput(_arrays(rng, dtype, (2, 3) + sp) + (3,), {"stride": 2, "padding": 1}),
            SampleInput(_arrays(rng, dtype, (2, 3) + sp) + ((3,) * nsp,), {"stride": 2, "ceil_mode": True}),
            SampleInput(_arrays(rng, dtype, (3,) + sp) + (2,), {"stride": 1}),  # unbatched
            SampleInput(_arrays(rng, dtype, (0, 3) + sp) + (2,)),  # empty batch
            SampleInput(_arrays(rng, dtype, (2, 3) + sp) + (2,), noncontig=True),
            SampleInput(_arrays(rng, dtype, (1, 1) + (5, 4, 3)[:nsp]) + (2,), {"stride": 1}),  # gradcheck
        ]
        if max_pool:
            out.append(SampleInput(_arrays(rng, dtype, (2, 3) + sp) + (2,), {"dilation": 2, "padding": 1}))
        else:
            out.append(SampleInput(_arrays(rng, dtype, (2, 3) + sp) + (3,),
                                   {"padding": 1, "count_include_pad": False, "ceil_mode": True, "stride": 2}))
        return out
    return fn


def _adaptive_samples(dtype):
    rng = np.random.default_rng(330)
    return [
        SampleInput(_arrays(rng, dtype, (2, 3, 7)) + (3,)),
        SampleInput(_arrays(rng, dtype, (2, 3, 6)) + (6,)),
        SampleInput(_arrays(rng, dtype, (3, 5)) + (2,)),  # unbatched
        SampleInput(_arrays(rng, dtype, (2, 3, 9)) + ((4,),), noncontig=True),
        SampleInput(_arrays(rng, dtype, (0, 3, 5)) + (2,)),
        SampleInput(_arrays(rng, dtype, (1, 2, 5)) + (3,)),  # gradcheck
    ]


def _norm_call(name):
    """batch_norm / instance_norm with running stats built per call (they are
    buffers, never differentiated) from the sample's `stats` keyword. Only the
    output is returned: the stats' update does not go through autograd (it is
    compared with torch's in test_nn_functional_layers.py)."""
    def call(lib, x, w=None, b=None, stats=None, training=True, momentum=0.1, eps=1e-5):
        rm = rv = None
        if stats is not None:
            rm = lib.tensor(stats[0].tolist(), dtype=x.dtype)
            rv = lib.tensor(stats[1].tolist(), dtype=x.dtype)
        out = getattr(lib, name)(x, w, b, rm, rv, training, momentum, eps, False)
        return out
    return call


def _bn_samples(dtype):
    rng = np.random.default_rng(340)
    stats = (rand_array((3,), dtype, rng=rng), rand_array((3,), dtype, 0.5, 2.0, rng=rng))
    return [
        SampleInput(_arrays(rng, dtype, (4, 3), (3,), (3,)), {"stats": stats}),
        SampleInput(_arrays(rng, dtype, (2, 3, 5), (3,), (3,)), {"stats": stats, "momentum": 0.3}),
        SampleInput(_arrays(rng, dtype, (2, 3, 3, 2)), {"stats": None}),
        SampleInput(_arrays(rng, dtype, (2, 3, 4), (3,), (3,)), {"stats": stats, "training": False}),
        SampleInput(_arrays(rng, dtype, (2, 3, 4)), {"stats": stats, "training": False, "eps": 1e-3}),
        SampleInput(_arrays(rng, dtype, (2, 3, 4), (3,), (3,)), {"stats": stats}, noncontig=True),
        SampleInput(_arrays(rng, dtype, (3, 3, 2), (3,), (3,)), {"stats": None}),  # gradcheck
    ]


def _in_samples(dtype):
    rng = np.random.default_rng(345)
    stats = (rand_array((3,), dtype, rng=rng), rand_array((3,), dtype, 0.5, 2.0, rng=rng))
    return [
        SampleInput(_arrays(rng, dtype, (2, 3, 5), (3,), (3,)), {"stats": stats}),
        SampleInput(_arrays(rng, dtype, (2, 3, 3, 2)), {"stats": None}),
        SampleInput(_arrays(rng, dtype, (2, 3, 4), (3,), (3,)), {"stats": stats, "training": False}),
        SampleInput(_arrays(rng, dtype, (2, 3, 4), (3,), (3,)), {"stats": None}, noncontig=True),
        SampleInput(_arrays(rng, dtype, (2, 3, 4), (3,), (3,)), {"stats": None}),  # gradcheck
    ]


def _layer_norm_samples(dtype):
    rng = np.random.default_rng(350)
    return [
        SampleInput(_arrays(rng, dtype, (2, 3, 4)) + ((4,),) + _arrays(rng, dtype, (4,), (4,))),
        SampleInput(_arrays(rng, dtype, (2, 3, 4)) + ([3, 4],) + _arrays(rng, dtype, (3, 4), (3, 4)), {"eps": 1e-3}),
        SampleInput(_arrays(rng, dtype, (5,)) + ([5],)),
        SampleInput(_arrays(rng, dtype, (0, 4)) + ((4,),)),
        SampleInput(_arrays(rng, dtype, (3, 4)) + ((4,),) + _arrays(rng, dtype, (4,), (4,)), noncontig=True),
        SampleInput(_arrays(rng, dtype, (2, 3)) + ((3,),) + _arrays(rng, dtype, (3,), (3,))),  # gradcheck
    ]


def _group_norm_samples(dtype):
    rng = np.random.default_rng(355)
    return [
        SampleInput(_arrays(rng, dtype, (2, 4, 3)) + (2,) + _arrays(rng, dtype, (4,), (4,))),
        SampleInput(_arrays(rng, dtype, (2, 6, 2, 3)) + (3,), {"eps": 1e-3}),
        SampleInput(_arrays(rng, dtype, (3, 4)) + (4,) + _arrays(rng, dtype, (4,), (4,))),
        SampleInput(_arrays(rng, dtype, (2, 4, 3)) + (1,) + _arrays(rng, dtype, (4,), (4,)), noncontig=True),
        SampleInput(_arrays(rng, dtype, (2, 4, 2)) + (2,) + _arrays(rng, dtype, (4,), (4,))),  # gradcheck
    ]


def _rms_norm_samples(dtype):
    rng = np.random.default_rng(360)
    return [
        SampleInput(_arrays(rng, dtype, (2, 3, 4)) + ((4,),) + _arrays(rng, dtype, (4,))),
        SampleInput(_arrays(rng, dtype, (2, 3, 4)) + ([3, 4],) + _arrays(rng, dtype, (3, 4)), {"eps": 1e-3}),
        SampleInput(_arrays(rng, dtype, (5,)) + ([5],)),
        SampleInput(_arrays(rng, dtype, (3, 4)) + ((4,),) + _arrays(rng, dtype, (4,)), noncontig=True),
        SampleInput(_arrays(rng, dtype, (2, 3)) + ((3,),) + _arrays(rng, dtype, (3,))),  # gradcheck
    ]


def _dropout_samples(dtype):
    rng = np.random.default_rng(365)
    return [
        SampleInput(_arrays(rng, dtype, (4, 5)) + (0.3, True)),
        SampleInput(_arrays(rng, dtype, (2, 3, 4)) + (0.5, False)),
        SampleInput(_arrays(rng, dtype, (2, 3, 4)) + (0.0, True)),
        SampleInput(_arrays(rng, dtype, (2, 3, 4)) + (1.0, True)),
        SampleInput(_arrays(rng, dtype, (0, 3)) + (0.5, True)),
        SampleInput(_arrays(rng, dtype, (3, 4)) + (0.5, True), noncontig=True),
    ]


def _inplace_call(name):
    def call(lib, x, *args, **kw):
        return getattr(lib, name)(x.clone(), *args, **kw)
    return call


def _embedding_samples(dtype):
    rng = np.random.default_rng(370)
    idx = np.array([[0, 2, 4, 2], [9, 1, 0, 0]], dtype=np.int64)
    return [
        SampleInput((rand_array((10, 3), dtype, rng=rng), idx)),
        # padding_idx rows get no gradient by definition: > 40 weights keeps gradcheck off, torch compares
        SampleInput((rand_array((15, 3), dtype, rng=rng), idx), {"padding_idx": 0}),
        SampleInput((rand_array((10, 3), dtype, rng=rng), np.array(4, dtype=np.int64))),
        SampleInput((rand_array((10, 3), dtype, rng=rng), np.zeros((0, 2), dtype=np.int64))),
        SampleInput((rand_array((10, 3), dtype, rng=rng), idx), noncontig=True),
        SampleInput((rand_array((5, 2), dtype, rng=rng), np.array([1, 3, 1, 4], dtype=np.int64))),  # gradcheck
    ]


def _renorm_samples(dtype):
    rng = np.random.default_rng(375)
    idx = np.array([[0, 2], [4, 2]], dtype=np.int64)
    return [
        SampleInput((rand_array((6, 3), dtype, rng=rng), idx, 1.0, 2.0)),
        SampleInput((rand_array((6, 3), dtype, rng=rng), idx, 0.5, 1.0)),
        SampleInput((rand_array((6, 3), dtype, rng=rng), idx, 100.0, 2.0)),
    ]


_NN = dict(method=False, **_TOL)
_CONV_X = ("an inf weight times a zero of the padding is nan in cgrad's im2col lowering and skipped by torch's "
           "direct kernels (implementation-defined): extremes go into the input only; " + DOUBLE_ACCUMULATION)
_CONV = dict(_NN, extremes=NO_LARGE, extreme_args=(0,), exempt={"extreme_values": _CONV_X})
_NORM = dict(_NN, extremes=NO_LARGE, exempt={"extreme_values": DOUBLE_ACCUMULATION})
_BN = dict(_NORM, extreme_args=(0,), exempt={"extreme_values": DOUBLE_ACCUMULATION + "; torch folds weight / bias "
                                             "into x a + b (an inf weight gives inf - inf): extremes into the input only"})
_DROP = dict(method=False, grad=False, nondeterministic_values=True)

OPS = [
    OpInfo("conv1d", _conv_samples(1), **_CONV),
    OpInfo("conv2d", _conv_samples(2), **_CONV),
    OpInfo("conv3d", _conv_samples(3), **_CONV),
    OpInfo("conv_transpose1d", _convt_samples(1), **_CONV,
           errors=("kwarg", bad(RuntimeError, "channels", Z(2, 2, 4), Z(3, 3, 3)))),
    OpInfo("conv_transpose2d", _convt_samples(2), **_CONV,
           errors=("kwarg", bad(RuntimeError, "channels", Z(2, 2, 4, 4), Z(3, 3, 3, 3)))),
    OpInfo("conv_transpose3d", _convt_samples(3), **_CONV,
           errors=("kwarg", bad(RuntimeError, "channels", Z(2, 2, 4, 4, 4), Z(3, 3, 3, 3, 3)))),
    OpInfo("max_pool1d", _pool_samples(1, True), **_NN),
    OpInfo("max_pool2d", _pool_samples(2, True), **_NN),
    OpInfo("max_pool3d", _pool_samples(3, True), **_NN),
    OpInfo("max_pool1d_with_indices", _pool_samples(1, True), **_NN),
    OpInfo("avg_pool1d", _pool_samples(1, False), **_NN),
    OpInfo("adaptive_avg_pool1d", _adaptive_samples, **_NN),
    OpInfo("adaptive_max_pool1d", _adaptive_samples, **_NN),
    OpInfo("batch_norm", _bn_samples, call=_norm_call("batch_norm"), **_BN),
    OpInfo("instance_norm", _in_samples, call=_norm_call("instance_norm"), **_BN),
    OpInfo("layer_norm", _layer_norm_samples, **_NORM),
    OpInfo("group_norm", _group_norm_samples, **dict(_BN, exempt=dict(
        _BN["exempt"], signed_zeros="torch folds the affine into x a + b: a zero result's sign follows another "
                                      "rounding path"))),
    OpInfo("rms_norm", _rms_norm_samples, **_NN),
    OpInfo("dropout", _dropout_samples, **_DROP),
    OpInfo("dropout_", _dropout_samples, call=_inplace_call("dropout_"), **_DROP),
    OpInfo("feature_dropout", _dropout_samples, **_DROP),
    OpInfo("feature_dropout_", _dropout_samples, call=_inplace_call("feature_dropout_"), **_DROP),
    OpInfo("alpha_dropout", _dropout_samples, **_DROP),
    OpInfo("alpha_dropout_", _dropout_samples, call=_inplace_call("alpha_dropout_"), **_DROP),
    OpInfo("embedding", _embedding_samples, **_NN,
           errors=("kwarg", bad(IndexError, "out of range", Z(10, 3), Z(dtype="int64", values=[0, 10])))),
    OpInfo("embedding_renorm_", _renorm_samples, call=_inplace_call("embedding_renorm_"), method=False, grad=False,
           errors=(bad(IndexError, "out of range", Z(6, 3), Z(dtype="int64", values=[0, 6]), 1.0, 2.0),),
           extremes=NO_LARGE, exempt={"extreme_values": DOUBLE_ACCUMULATION}),
]

for _op in OPS:  # issue 6: dropout draws are random
    if "dropout" in _op.name:
        _op.exempt["extremes"] = "random mask: values compared by shape and dtype only"

# issue 6: explicit bad inputs (PyTorch's exception types), beside the generic ones
_ERRORS = {
    "conv2d": bad(RuntimeError, "channels", Z(1, 2, 5, 5), Z(3, 3, 2, 2)),
    "layer_norm": bad(RuntimeError, "normalized_shape", Z(3, 4), (5,)),
    "max_pool2d": bad(RuntimeError, "too small", Z(1, 1, 2, 2), 3),
}
for _op in OPS:
    if _op.name in _ERRORS:
        _op.errors = tuple(_op.errors) + (_ERRORS[_op.name],)
