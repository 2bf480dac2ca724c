"""Convolution layers in both memory formats: ResNet / MobileNet conv2d shapes, batch 8,
float32, forward alone and forward + backward (input, weight and bias gradients), with
operands contiguous (NCHW) and channels_last (NHWC), cgrad vs PyTorch. Answers "is
channels_last faster": compare a layer's two rows within one library."""
from __future__ import annotations

from typing import List

from bench.context import Context
from bench.record import Case

NAME = "conv"
TITLE = "Convolution layouts"
ABOUT = "milliseconds per call; operands in the layout named (the output follows, as in PyTorch)"

# (name, cin, cout, kernel, stride, groups, input size)
LAYERS = (
    ("3x3 64->64, 56x56", 64, 64, 3, 1, 1, 56),
    ("1x1 256->64, 56x56", 256, 64, 1, 1, 1, 56),
    ("3x3 s2 128->256, 28x28", 128, 256, 3, 2, 1, 28),
    ("3x3 256->256, 14x14", 256, 256, 3, 1, 1, 14),
    ("depthwise 3x3 128, 56x56", 128, 128, 3, 1, 128, 56),
    ("7x7 s2 3->64, 112x112 (stem)", 3, 64, 7, 2, 1, 112),
)
BATCH = 8
QUICK_BATCH = 2


def _layer(fw, data, stride: int, groups: int, layout: str, backward: bool):
    x0, w0, b0 = (fw.from_numpy(a.copy()) for a in data)
    if layout == "channels_last":
        x0 = x0.contiguous(memory_format=fw.channels_last)
        w0 = w0.contiguous(memory_format=fw.channels_last)
    x, w, b = (t.requires_grad_(backward) for t in (x0, w0, b0))
    conv = fw.nn.functional.conv2d

    def forward():
        with fw.no_grad():
            conv(x, w, b, stride=stride, padding=w.shape[-1] // 2, groups=groups)

    def step():
        y = conv(x, w, b, stride=stride, padding=w.shape[-1] // 2, groups=groups)
        x.grad = w.grad = b.grad = None
        y.sum().backward()

    return step if backward else forward


def run(ctx: Context) -> List[Case]:
    np = ctx.libs.numpy
    rng = np.random.default_rng(0)
    n = QUICK_BATCH if ctx.quick else BATCH
    cases = []
    for name, cin, cout, k, stride, groups, size in LAYERS:
        data = (rng.standard_normal((n, cin, size, size)).astype(np.float32),
                rng.standard_normal((cout, cin // groups, k, k)).astype(np.float32),
                rng.standard_normal(cout).astype(np.float32))
        cases += ctx.layout_cases(NAME, name, lambda fw, layout, backward, data=data, stride=stride, groups=groups:
                                  _layer(fw, data, stride, groups, layout, backward))
    return cases
