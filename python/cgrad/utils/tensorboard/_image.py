"""Image, video and matplotlib-figure summaries: the layout conversions
(dataformats to HWC, a batch tiled into one grid), the [0, 1] / uint8 scaling
to 8-bit pixels, and PNG / animated-GIF encoding with Pillow."""
from __future__ import annotations

import io
from typing import Any, List, Union

import numpy as np
from tensorboard.compat.proto.summary_pb2 import Summary

from ._convert import make_np


def _pil() -> Any:
    try:
        from PIL import Image
    except ImportError as e:
        raise ImportError("cgrad.utils.tensorboard needs Pillow to encode images: pip install pillow") from e
    return Image


def make_grid(imgs: np.ndarray, ncols: int = 8, fn: str = "add_images") -> np.ndarray:
    """Tile an (N, C, H, W) batch, C 1 or 3, into a (3, rows*H, cols*W) image,
    row by row, `ncols` (at most N) images a row, unused cells zero."""
    if imgs.ndim != 4:
        raise ValueError(f"{fn}: a batch of images must be 4-D (N, C, H, W), got shape {tuple(imgs.shape)}")
    if imgs.shape[1] == 1:
        imgs = np.concatenate([imgs] * 3, axis=1)
    if imgs.shape[1] != 3:
        raise ValueError(f"{fn}: images of a batch must have 1 or 3 channels, got {imgs.shape[1]} "
                         f"(shape {tuple(imgs.shape)} as NCHW)")
    n, _, h, w = imgs.shape
    cols = min(n, ncols)
    rows = -(-n // cols) if cols else 0
    canvas = np.zeros((3, h * rows, w * cols), dtype=imgs.dtype)
    for i in range(n):
        r, c = divmod(i, cols)
        canvas[:, r * h:(r + 1) * h, c * w:(c + 1) * w] = imgs[i]
    return canvas


def to_hwc(arr: np.ndarray, dataformats: str, fn: str) -> np.ndarray:
    """Reorder `arr`, laid out as `dataformats` (letters N, C, H, W), to HWC
    with 3 channels where it had 1 (a 4-D batch goes through make_grid)."""
    if not isinstance(dataformats, str):
        raise TypeError(f"{fn}: dataformats must be a str such as 'CHW', not {type(dataformats).__name__}")
    fmt = dataformats.upper()
    if len(set(fmt)) != len(fmt):
        raise ValueError(f"{fn}: dataformats {dataformats!r} uses a dimension letter twice")
    if len(fmt) != arr.ndim:
        raise ValueError(f"{fn}: dataformats {dataformats!r} has {len(fmt)} dimensions but the image has "
                         f"{arr.ndim} (shape {tuple(arr.shape)})")
    wanted = {4: "NCHW", 3: "HWC", 2: "HW"}.get(len(fmt))
    if wanted is None or set(fmt) != set(wanted):
        raise ValueError(f"{fn}: dataformats {dataformats!r} must be a permutation of NCHW, CHW / HWC or HW")
    arr = arr.transpose([fmt.index(c) for c in wanted])
    if wanted == "NCHW":
        return make_grid(arr, fn=fn).transpose(1, 2, 0)
    if wanted == "HW":
        return np.stack([arr] * 3, axis=2)
    if arr.shape[2] == 1:
        arr = np.concatenate([arr] * 3, axis=2)
    if arr.shape[2] not in (2, 3, 4):
        raise ValueError(f"{fn}: an image must have 1, 3 or 4 channels (or 2: gray + alpha), got "
                         f"{arr.shape[2]} (shape {tuple(arr.shape)} as HWC)")
    return arr


def to_uint8(arr: np.ndarray) -> np.ndarray:
    """uint8 pixels as they are; any other dtype is read as [0, 1] and scaled by 255; clipped to [0, 255]."""
    scale = 1 if arr.dtype == np.uint8 else 255
    return (arr.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)


def encode_png(hwc: np.ndarray, rescale: float = 1) -> Summary.Image:
    """An HWC uint8 image as a PNG Summary.Image, resized by `rescale`
    (Lanczos); the recorded height and width are those before resizing, as
    PyTorch records them."""
    h, w, c = hwc.shape
    Image = _pil()
    pic = Image.fromarray(np.ascontiguousarray(hwc))
    if rescale != 1:
        pic = pic.resize((int(w * rescale), int(h * rescale)), Image.Resampling.LANCZOS)
    buf = io.BytesIO()
    pic.save(buf, format="PNG")
    return Summary.Image(height=h, width=w, colorspace=c, encoded_image_string=buf.getvalue())


def image(tag: str, img: Any, dataformats: str, fn: str = "add_image", rescale: float = 1) -> Summary:
    arr = make_np(img, fn, "img_tensor")
    if arr.ndim not in (2, 3, 4):
        raise ValueError(f"{fn}: img_tensor must be 2-D, 3-D or 4-D, got shape {tuple(arr.shape)}")
    hwc = to_uint8(to_hwc(arr, dataformats, fn))
    if hwc.shape[0] == 0 or hwc.shape[1] == 0:
        raise ValueError(f"{fn}: img_tensor is empty (HWC shape {tuple(hwc.shape)})")
    if not isinstance(rescale, (int, float)) or isinstance(rescale, bool) or rescale <= 0:
        raise ValueError(f"{fn}: rescale must be a positive number, got {rescale!r}")
    return Summary(value=[Summary.Value(tag=tag, image=encode_png(hwc, rescale))])


def video_frames(vid: np.ndarray) -> np.ndarray:
    """(B, T, C, H, W) clips to (T, rows*H, cols*W, C) frames: the batch,
    padded with black clips to a power of two, tiled into a grid of
    2**((bit_length(B) - 1) // 2) rows."""
    if vid.ndim != 5:
        raise ValueError(f"add_video: vid_tensor must be 5-D (N, T, C, H, W), got shape {tuple(vid.shape)}")
    b, t, c, h, w = vid.shape
    if b == 0:
        raise ValueError("add_video: vid_tensor holds no clip (N = 0)")
    if vid.dtype == np.uint8:
        vid = vid.astype(np.float32) / np.float32(255.0)
    if b & (b - 1):
        pad = (1 << b.bit_length()) - b
        vid = np.concatenate([vid, np.zeros((pad, t, c, h, w))], axis=0)
    rows = 1 << ((b.bit_length() - 1) // 2)
    cols = vid.shape[0] // rows
    vid = vid.reshape(rows, cols, t, c, h, w).transpose(2, 0, 4, 1, 5, 3)
    return vid.reshape(t, rows * h, cols * w, c)


def video(tag: str, vid: Any, fps: Union[int, float] = 4) -> Summary:
    """Clips as one animated GIF (Pillow's encoder), shown in the images dashboard."""
    if not isinstance(fps, (int, float)) or isinstance(fps, bool) or fps <= 0:
        raise ValueError(f"add_video: fps must be a positive number, got {fps!r}")
    frames = to_uint8(video_frames(make_np(vid, "add_video", "vid_tensor")))
    t, h, w, c = frames.shape
    if c not in (1, 3, 4):
        raise ValueError(f"add_video: clips must have 1, 3 or 4 channels, got {c}")
    if c == 1:
        frames = frames[..., 0]
    Image = _pil()
    pics = [Image.fromarray(np.ascontiguousarray(f)) for f in frames]
    if c == 4:
        pics = [p.convert("RGB") for p in pics]
    buf = io.BytesIO()
    pics[0].save(buf, format="GIF", save_all=True, append_images=pics[1:],
                 duration=1000.0 / fps, loop=0, optimize=False)
    return Summary(value=[Summary.Value(tag=tag, image=Summary.Image(
        height=h, width=w, colorspace=c, encoded_image_string=buf.getvalue()))])


def figure_to_image(figures: Any, close: bool = True) -> np.ndarray:
    """Render a matplotlib figure (or a list of them) with the Agg canvas to
    a CHW (or NCHW) uint8 RGB array."""
    try:
        import matplotlib.pyplot as plt
        from matplotlib.backends.backend_agg import FigureCanvasAgg
    except ImportError as e:
        raise ImportError("add_figure needs matplotlib: pip install matplotlib") from e

    def render(fig: Any) -> np.ndarray:
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        rgba = np.asarray(canvas.buffer_rgba())
        if close:
            plt.close(fig)
        return np.moveaxis(rgba[:, :, :3], 2, 0)

    if isinstance(figures, list):
        if not figures:
            raise ValueError("add_figure: figure is an empty list")
        imgs: List[np.ndarray] = [render(f) for f in figures]
        return np.stack(imgs)
    return render(figures)
