"""The projector plugin's files for add_embedding: tensors.tsv (the points),
metadata.tsv (labels), sprite.png (label images tiled in a square) and the
projector_config.pbtxt that lists every embedding of the run."""
from __future__ import annotations

import math
from typing import Any, List, Optional, Sequence

import numpy as np
from tensorboard.compat import tf
from tensorboard.plugins.projector.projector_config_pb2 import EmbeddingInfo

from ._convert import make_np
from ._image import _pil, make_grid


def _join(a: str, b: str) -> str:
    gfile = tf.io.gfile
    if hasattr(gfile, "join"):
        return gfile.join(a, b)
    return gfile.get_filesystem(a).join(a, b)


def _write(path: str, data: bytes) -> None:
    with tf.io.gfile.GFile(path, "wb") as f:
        f.write(data)


def encode_tag(tag: str) -> str:
    """Escape %, / and \\ so a tag names one directory."""
    return tag.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")


def write_metadata(metadata: Sequence[Any], save_path: str, header: Optional[Sequence[str]]) -> None:
    if header:
        rows: List[str] = []
        for i, row in enumerate([header] + list(metadata)):
            if len(row) != len(header):
                raise ValueError(f"add_embedding: metadata row {i - 1} has {len(row)} columns but "
                                 f"metadata_header has {len(header)}")
            rows.append("\t".join(str(e) for e in row))
    else:
        rows = [str(x) for x in metadata]
    _write(_join(save_path, "metadata.tsv"), ("\n".join(rows) + "\n").encode("utf-8"))


def write_sprite(label_img: np.ndarray, save_path: str) -> None:
    """Tile (N, C, H, W) images in [0, 1] into a ceil(sqrt(N))-wide square."""
    n = label_img.shape[0]
    grid = make_grid(label_img, ncols=math.ceil(n ** 0.5), fn="add_embedding").transpose(1, 2, 0)
    side = grid.shape[1]
    square = np.zeros((side, side, 3))
    square[:grid.shape[0]] = grid
    buf = _pil().fromarray(np.uint8((square * 255).clip(0, 255)))
    import io
    out = io.BytesIO()
    buf.save(out, format="PNG")
    _write(_join(save_path, "sprite.png"), out.getvalue())


def write_points(mat: np.ndarray, save_path: str) -> None:
    lines = ["\t".join(str(v.item()) for v in row) for row in mat]
    _write(_join(save_path, "tensors.tsv"), "".join(line + "\n" for line in lines).encode("utf-8"))


def embedding_info(has_metadata: bool, label_shape: Optional[Sequence[int]], subdir: str,
                   global_step: int, tag: str) -> EmbeddingInfo:
    info = EmbeddingInfo()
    info.tensor_name = f"{tag}:{str(global_step).zfill(5)}"
    info.tensor_path = _join(subdir, "tensors.tsv")
    if has_metadata:
        info.metadata_path = _join(subdir, "metadata.tsv")
    if label_shape is not None:
        info.sprite.image_path = _join(subdir, "sprite.png")
        info.sprite.single_image_dim.extend([int(label_shape[3]), int(label_shape[2])])
    return info


def write_config(logdir: str, text: str) -> None:
    _write(_join(logdir, "projector_config.pbtxt"), text.encode("utf-8"))


def label_images(label_img: Any) -> np.ndarray:
    arr = make_np(label_img, "add_embedding", "label_img")
    if arr.ndim != 4:
        raise ValueError(f"add_embedding: label_img must be 4-D (N, C, H, W), got shape {tuple(arr.shape)}")
    return arr
