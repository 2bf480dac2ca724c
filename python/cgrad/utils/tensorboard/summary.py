"""cgrad.utils.tensorboard.summary: the functions that build one Summary
protocol buffer each, under torch.utils.tensorboard.summary's names and
signatures (for logging through SummaryWriter.file_writer.add_summary, as in
`w.file_writer.add_summary(hparams(...)[0])`)."""
from __future__ import annotations

from typing import Any, Dict, Optional, Union

import numpy as np
from tensorboard.compat.proto.summary_pb2 import Summary

from . import _image, _pr_curve, _summary
from ._boxes import image_boxes
from ._convert import make_np
from ._hparams import hparams
from ._layout import custom_scalars
from ._mesh import mesh as _mesh
from ._summary import histogram, histogram_raw, make_histogram, tensor_proto

__all__ = ["hparams", "scalar", "histogram_raw", "histogram", "make_histogram", "image", "image_boxes",
           "video", "audio", "custom_scalars", "text", "tensor_proto", "pr_curve_raw", "pr_curve",
           "compute_curve", "mesh"]


def scalar(name: str, tensor: Any, collections: Any = None, new_style: bool = False,
           double_precision: bool = False) -> Summary:
    """One scalar (`collections` is accepted and unused, as in PyTorch)."""
    return _summary.scalar(name, tensor, new_style=new_style, double_precision=double_precision)


def image(tag: str, tensor: Any, rescale: float = 1, dataformats: str = "NCHW") -> Summary:
    """An image (or a batch tiled into one), resized by `rescale`."""
    return _image.image(tag, tensor, dataformats, "image", rescale)


def video(tag: str, tensor: Any, fps: Union[int, float] = 4) -> Summary:
    return _image.video(tag, tensor, fps)


def audio(tag: str, tensor: Any, sample_rate: int = 44100) -> Summary:
    return _summary.audio(tag, tensor, sample_rate)


def text(tag: str, text: str) -> Summary:
    return _summary.text(tag, text)


def pr_curve(tag: str, labels: Any, predictions: Any, num_thresholds: int = 127, weights: Any = None) -> Summary:
    return _pr_curve.pr_curve(tag, labels, predictions, num_thresholds, weights)


def pr_curve_raw(tag: str, tp: Any, fp: Any, tn: Any, fn: Any, precision: Any, recall: Any,
                 num_thresholds: int = 127, weights: Any = None) -> Summary:
    """`weights` is accepted and unused, as in PyTorch."""
    return _pr_curve.pr_curve_raw(tag, tp, fp, tn, fn, precision, recall, num_thresholds)


def compute_curve(labels: Any, predictions: Any, num_thresholds: Optional[int] = None,
                  weights: Any = None) -> np.ndarray:
    """The (6, num_thresholds) array of TP, FP, TN, FN, precision, recall."""
    if num_thresholds is None:
        raise ValueError("compute_curve: num_thresholds is required")
    n = _pr_curve._check_thresholds(num_thresholds, "compute_curve", cap=False)
    lab = make_np(labels, "compute_curve", "labels")
    pred = make_np(predictions, "compute_curve", "predictions")
    w = None if weights is None else make_np(weights, "compute_curve", "weights")
    return _pr_curve.compute_curve(lab, pred, n, w)


def mesh(tag: str, vertices: Any, colors: Any, faces: Any, config_dict: Optional[Dict[str, Any]],
         display_name: Optional[str] = None, description: Optional[str] = None) -> Summary:
    return _mesh(tag, vertices, colors, faces, config_dict, display_name, description)


