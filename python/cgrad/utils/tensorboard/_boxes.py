"""add_image_with_boxes: an image with (xmin, ymin, xmax, ymax) boxes drawn
on it in red with Pillow, each with an optional label in a red box at its
lower left corner, then rescaled and encoded as PNG."""
from __future__ import annotations

import io
from typing import Any, List, Optional

import numpy as np
from tensorboard.compat.proto.summary_pb2 import Summary

from ._convert import make_np
from ._image import _pil, to_hwc, to_uint8

_LINE_WIDTH = 2


def _draw_box(draw: Any, font: Any, box: np.ndarray, label: Optional[str]) -> None:
    left, top, right, bottom = (box[0], box[1], box[2], box[3])
    corners = [(left, top), (left, bottom), (right, bottom), (right, top), (left, top)]
    draw.line(corners, width=_LINE_WIDTH, fill="Red")
    if not label:
        return
    x0, y0, x1, y1 = font.getbbox(label)
    tw, th = x1 - x0, y1 - y0
    margin = np.ceil(0.05 * th)
    draw.rectangle([(left, bottom - th - 2 * margin), (left + tw, bottom)], fill="Red")
    draw.text((left + margin, bottom - th - margin), label, fill="black", font=font)


def image_boxes(tag: str, img: Any, boxes: Any, rescale: float = 1, dataformats: str = "CHW",
                labels: Optional[List[str]] = None) -> Summary:
    fn = "add_image_with_boxes"
    arr = make_np(img, fn, "img_tensor")
    if arr.ndim not in (2, 3):
        raise ValueError(f"{fn}: img_tensor must be one image (2-D or 3-D), got shape {tuple(arr.shape)}")
    hwc = to_uint8(to_hwc(arr, dataformats, fn))
    box = make_np(boxes, fn, "box_tensor")
    if box.ndim != 2 or box.shape[1] != 4:
        raise ValueError(f"{fn}: box_tensor must have shape (N, 4) (xmin, ymin, xmax, ymax), got {tuple(box.shape)}")
    if not isinstance(rescale, (int, float)) or isinstance(rescale, bool) or rescale <= 0:
        raise ValueError(f"{fn}: rescale must be a positive number, got {rescale!r}")
    Image = _pil()
    from PIL import ImageDraw, ImageFont
    h, w, c = hwc.shape
    pic = Image.fromarray(np.ascontiguousarray(hwc))
    draw = ImageDraw.Draw(pic)
    font = ImageFont.load_default()
    for i in range(box.shape[0]):
        _draw_box(draw, font, box[i], None if labels is None else labels[i])
    pic = pic.resize((int(w * rescale), int(h * rescale)), Image.Resampling.LANCZOS)
    buf = io.BytesIO()
    pic.save(buf, format="PNG")
    # the recorded height / width are the image's before rescaling, as PyTorch records them
    return Summary(value=[Summary.Value(tag=tag, image=Summary.Image(
        height=h, width=w, colorspace=c, encoded_image_string=buf.getvalue()))])
