"""The padding, pixel-shuffle and upsampling modules of cgrad.nn against
torch.nn: outputs and gradients, reprs and attributes, and the errors torch
raises for bad inputs."""
import numpy as np
import pytest
import torch

import cgrad
from nn_compare import compare_module

# (id, factory taking the library, input shape)
CASES = [
    ("zero1d", lambda L: L.nn.ZeroPad1d(2), (2, 3, 5)),
    ("zero1d_tuple", lambda L: L.nn.ZeroPad1d((1, 3)), (3, 5)),
    ("zero2d", lambda L: L.nn.ZeroPad2d(1), (2, 3, 4, 5)),
    ("zero2d_tuple", lambda L: L.nn.ZeroPad2d((1, 0, 2, 3)), (3, 4, 5)),
    ("zero3d", lambda L: L.nn.ZeroPad3d(1), (1, 2, 3, 3, 4)),
    ("const1d", lambda L: L.nn.ConstantPad1d(2, 3.5), (2, 3, 5)),
    ("const2d", lambda L: L.nn.ConstantPad2d((1, 2, 0, 1), -1.0), (2, 3, 4, 5)),
    ("const2d_negative", lambda L: L.nn.ConstantPad2d((-1, 1, 0, -1), 2.0), (2, 3, 4, 5)),
    ("const3d", lambda L: L.nn.ConstantPad3d((1, 0, 0, 1, 2, 0), 0.5), (1, 2, 3, 3, 4)),
    ("reflect1d", lambda L: L.nn.ReflectionPad1d(2), (2, 3, 5)),
    ("reflect1d_tuple", lambda L: L.nn.ReflectionPad1d((3, 1)), (3, 5)),
    ("reflect2d", lambda L: L.nn.ReflectionPad2d((1, 2, 2, 1)), (2, 3, 4, 5)),
    ("reflect2d_unbatched", lambda L: L.nn.ReflectionPad2d(2), (3, 4, 5)),
    ("reflect3d", lambda L: L.nn.ReflectionPad3d(1), (1, 2, 3, 3, 4)),
    ("replicate1d", lambda L: L.nn.ReplicationPad1d((2, 4)), (2, 3, 5)),
    ("replicate2d", lambda L: L.nn.ReplicationPad2d(2), (2, 3, 4, 5)),
    ("replicate3d", lambda L: L.nn.ReplicationPad3d((1, 2, 0, 1, 2, 1)), (1, 2, 3, 3, 4)),
    ("circular1d", lambda L: L.nn.CircularPad1d(2), (2, 3, 5)),
    ("circular2d", lambda L: L.nn.CircularPad2d((1, 2, 2, 1)), (2, 3, 4, 5)),
    ("circular3d", lambda L: L.nn.CircularPad3d(1), (1, 2, 3, 3, 4)),
    ("pixel_shuffle", lambda L: L.nn.PixelShuffle(2), (2, 8, 3, 3)),
    ("pixel_shuffle_batch_dims", lambda L: L.nn.PixelShuffle(3), (1, 2, 9, 2, 2)),
    ("pixel_unshuffle", lambda L: L.nn.PixelUnshuffle(2), (2, 2, 4, 6)),
    ("upsample_nearest", lambda L: L.nn.Upsample(scale_factor=2), (2, 3, 4, 5)),
    ("upsample_nearest_size", lambda L: L.nn.Upsample(size=(5, 7)), (2, 3, 4, 5)),
    ("upsample_nearest_1d", lambda L: L.nn.Upsample(scale_factor=3, mode="nearest"), (2, 3, 4)),
    ("upsample_nearest_3d", lambda L: L.nn.Upsample(size=4), (1, 2, 2, 3, 3)),
    ("upsample_linear", lambda L: L.nn.Upsample(scale_factor=2.5, mode="linear"), (2, 3, 4)),
    ("upsample_bilinear", lambda L: L.nn.Upsample(scale_factor=(2, 1.5), mode="bilinear"), (2, 3, 4, 5)),
    ("upsample_bilinear_corners", lambda L: L.nn.Upsample(size=(7, 9), mode="bilinear", align_corners=True),
     (2, 3, 4, 5)),
    ("upsample_bicubic", lambda L: L.nn.Upsample(scale_factor=1.5, mode="bicubic"), (1, 2, 4, 5)),
    ("upsample_trilinear", lambda L: L.nn.Upsample(scale_factor=2, mode="trilinear", align_corners=False),
     (1, 2, 3, 3, 4)),
    ("upsample_recompute", lambda L: L.nn.Upsample(scale_factor=1.7, mode="bilinear", recompute_scale_factor=True),
     (1, 2, 4, 5)),
    ("upsampling_nearest2d", lambda L: L.nn.UpsamplingNearest2d(scale_factor=2), (2, 3, 4, 5)),
    ("upsampling_bilinear2d", lambda L: L.nn.UpsamplingBilinear2d(size=(6, 8)), (2, 3, 4, 5)),
]
IDS = [c[0] for c in CASES]


@pytest.mark.parametrize("name,make,shape", CASES, ids=IDS)
def test_matches_torch(name, make, shape):
    compare_module(make, [shape])


@pytest.mark.parametrize("name,make,shape", CASES, ids=IDS)
def test_repr_attributes_and_state_dict(name, make, shape):
    t, c = make(torch), make(cgrad)
    assert repr(c) == repr(t)
    assert list(c.state_dict()) == list(t.state_dict()) == []
    for attr in ("padding", "value", "upscale_factor", "downscale_factor", "name", "size", "scale_factor", "mode",
                 "align_corners", "recompute_scale_factor"):
        if hasattr(t, attr):
            assert getattr(c, attr) == getattr(t, attr), attr
            assert type(getattr(c, attr)) is type(getattr(t, attr)), attr


def test_sequential_repr():
    def make(L):
        return L.nn.Sequential(L.nn.ReflectionPad2d(1), L.nn.ConstantPad3d(2, 1.5), L.nn.PixelShuffle(2),
                               L.nn.Upsample(scale_factor=2.0, mode="bilinear"), L.nn.UpsamplingNearest2d(size=3),
                               L.nn.ZeroPad2d((1, 2, 3, 4)))
    assert repr(make(cgrad)) == repr(make(torch))


def _raises_like_torch(fn):
    """fn(lib) raises in torch; cgrad raises an exception of the same class (or a subclass)."""
    with pytest.raises(Exception) as te:
        fn(torch)
    with pytest.raises(type(te.value)):
        fn(cgrad)


@pytest.mark.parametrize("fn", [
    lambda L: L.nn.CircularPad2d(1)(L.ones(4, 5)),
    lambda L: L.nn.CircularPad1d(1)(L.ones(2, 3, 4, 5)),
    lambda L: L.nn.CircularPad3d(1)(L.ones(3, 3, 3)),
    lambda L: L.nn.ReflectionPad1d(5)(L.ones(2, 3, 4)),
    lambda L: L.nn.PixelShuffle(2)(L.ones(1, 3, 2, 2)),
    lambda L: L.nn.PixelUnshuffle(2)(L.ones(1, 1, 4, 3)),
    lambda L: L.nn.Upsample()(L.ones(1, 1, 2, 2)),
    lambda L: L.nn.Upsample(size=2, scale_factor=2.0)(L.ones(1, 1, 2, 2)),
    lambda L: L.nn.Upsample(scale_factor=2, align_corners=True)(L.ones(1, 1, 2, 2)),
    lambda L: L.nn.Upsample(size=(2, 3, 4))(L.ones(1, 1, 2, 2)),
    lambda L: L.nn.Upsample(scale_factor=2, mode="bilinear")(L.ones(1, 1, 2)),
], ids=["circular2d_dims", "circular1d_dims", "circular3d_dims", "reflect_too_wide", "shuffle_channels",
        "unshuffle_width", "upsample_neither", "upsample_both", "upsample_nearest_corners", "upsample_size_len",
        "upsample_bilinear_3d"])
def test_errors(fn):
    _raises_like_torch(fn)


def test_padding_int_and_tuple_forms():
    assert cgrad.nn.ZeroPad2d(3).padding == (3, 3, 3, 3)
    assert cgrad.nn.ReplicationPad3d([1, 2, 3, 4, 5, 6]).padding == (1, 2, 3, 4, 5, 6)
    assert cgrad.nn.ConstantPad1d(2, 0.0).padding == (2, 2)
    x = np.arange(6.0).reshape(1, 2, 3)
    out = cgrad.nn.ReflectionPad1d(1)(cgrad.tensor(x)).numpy()
    np.testing.assert_array_equal(out, np.pad(x, ((0, 0), (0, 0), (1, 1)), mode="reflect"))
