"""Pooling layers in both memory formats: the ResNet stem's 3x3 s2 max pool, a 2x2 average
pool, global average pooling (adaptive to 1x1) and a 3-D max pool, float32, forward alone and
forward + backward, with the input contiguous (NCHW / NCDHW) and channels_last
(NHWC / NDHWC), cgrad vs PyTorch. Answers "is channels_last faster" for pooling: compare a
layer's two rows within one library."""
from __future__ import annotations

from typing import Callable, List

from bench.context import Context
from bench.record import Case

NAME = "pool"
TITLE = "Pooling layouts"
ABOUT = "milliseconds per call; the input in the layout named (the output follows, as in PyTorch)"

# (name, input shape without the batch, the call on the framework's nn.functional)
LAYERS = (
    ("max_pool2d 3x3 s2 p1, 64x112x112 (stem)", (64, 112, 112),
     lambda F, x: F.max_pool2d(x, 3, 2, 1)),
    ("avg_pool2d 2x2, 128x56x56", (128, 56, 56), lambda F, x: F.avg_pool2d(x, 2)),
    ("adaptive_avg_pool2d 1, 512x7x7 (head)", (512, 7, 7), lambda F, x: F.adaptive_avg_pool2d(x, 1)),
    ("max_pool3d 2x2x2, 32x16x32x32", (32, 16, 32, 32), lambda F, x: F.max_pool3d(x, 2)),
)
BATCH = 8
QUICK_BATCH = 2


def _layer(fw, data, call: Callable, layout: str, backward: bool):
    x = fw.from_numpy(data.copy())
    if layout == "channels_last":
        x = x.contiguous(memory_format=fw.channels_last if x.dim() == 4 else fw.channels_last_3d)
    x.requires_grad_(backward)
    F = fw.nn.functional

    def forward():
        with fw.no_grad():
            call(F, x)

    def step():
        y = call(F, x)
        x.grad = None
        y.sum().backward()

    return step if backward else forward


def run(ctx: Context) -> List[Case]:
    np = ctx.libs.numpy
    rng = np.random.default_rng(0)
    n = QUICK_BATCH if ctx.quick else BATCH
    cases = []
    for name, shape, call in LAYERS:
        data = rng.standard_normal((n,) + shape).astype(np.float32)
        cases += ctx.layout_cases(NAME, name, lambda fw, layout, backward, data=data, call=call:
                                  _layer(fw, data, call, layout, backward))
    return cases
