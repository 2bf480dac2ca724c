"""Fashion-MNIST (Zalando's 28x28 grey-scale clothing images, 10 classes) read
from the IDX files that the Debian package dataset-fashion-mnist installs."""
from __future__ import annotations

import gzip
import os
from typing import Any, Callable, Optional, Tuple

import cgrad

from ..utils.data import Dataset

DEFAULT_ROOT = "/usr/share/datasets/fashion-mnist"
_IMAGES_MAGIC = 2051
_LABELS_MAGIC = 2049
_HOW_TO_GET = ("install the Debian package with `apt-get install dataset-fashion-mnist` "
               f"(files go to {DEFAULT_ROOT}) or pass root= a folder holding the IDX files")


def _find(root: str, name: str) -> str:
    for candidate in (name, name + ".gz"):
        path = os.path.join(root, candidate)
        if os.path.isfile(path):
            return path
    raise FileNotFoundError(f"FashionMNIST: {name}(.gz) not found in {root}; {_HOW_TO_GET}")


def _read_bytes(path: str) -> bytes:
    if path.endswith(".gz"):
        with gzip.open(path, "rb") as f:
            return f.read()
    with open(path, "rb") as f:
        return f.read()


def read_idx(path: str, expected_magic: int) -> Any:
    """The contents of an IDX file of unsigned bytes (optionally gzip-compressed) as a uint8
    tensor of the shape its header gives; ValueError when the magic number or size is wrong."""
    data = _read_bytes(path)
    if len(data) < 4:
        raise ValueError(f"read_idx: {path} is truncated: {len(data)} bytes, no IDX header")
    magic = int.from_bytes(data[:4], "big")
    if magic != expected_magic:
        raise ValueError(f"read_idx: {path} has magic number {magic}, expected {expected_magic}")
    ndim = magic & 0xFF
    header = 4 + 4 * ndim
    if len(data) < header:
        raise ValueError(f"read_idx: {path} is truncated: {len(data)} bytes, header needs {header}")
    shape = tuple(int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim))
    count = 1
    for s in shape:
        count *= s
    if len(data) - header != count:
        raise ValueError(f"read_idx: {path} holds {len(data) - header} data bytes, "
                         f"its header {list(shape)} says {count}")
    return cgrad._C._from_bytes(data[header:], cgrad.uint8, shape, "cpu")


class FashionMNIST(Dataset[Tuple[Any, Any]]):
    """Fashion-MNIST: sample i is (image, label) with image a float32 tensor (1, 28, 28) in
    [0, 1] (or what `transform` makes of it) and label an int (or what `target_transform`
    makes of it). `.data` is the uint8 tensor (N, 28, 28), `.targets` the int64 labels."""

    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
               "Ankle boot"]

    def __init__(self, root: Optional[str] = None, train: bool = True, download: bool = False,
                 transform: Optional[Callable[[Any], Any]] = None,
                 target_transform: Optional[Callable[[Any], Any]] = None) -> None:
        if download:
            raise RuntimeError(f"FashionMNIST: download=True is not supported (no network access); {_HOW_TO_GET}")
        self.root = os.fspath(root) if root is not None else DEFAULT_ROOT
        self.train = train
        self.transform = transform
        self.target_transform = target_transform
        prefix = "train" if train else "t10k"
        images = read_idx(_find(self.root, f"{prefix}-images-idx3-ubyte"), _IMAGES_MAGIC)
        labels = read_idx(_find(self.root, f"{prefix}-labels-idx1-ubyte"), _LABELS_MAGIC)
        if images.dim() != 3 or labels.dim() != 1 or images.shape[0] != labels.shape[0]:
            raise ValueError(f"FashionMNIST: images {list(images.shape)} and labels {list(labels.shape)} "
                             "do not match (expected (N, rows, cols) and (N,))")
        self.data = images
        self.targets = labels.to(cgrad.int64)

    @property
    def class_to_idx(self) -> dict:
        return {c: i for i, c in enumerate(self.classes)}

    def __len__(self) -> int:
        return self.data.shape[0]

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        img = self.data[index].to(cgrad.float32).div(255.0).unsqueeze(0)
        target: Any = int(self.targets[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target
