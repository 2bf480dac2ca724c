"""Precision-recall curve summaries of the pr_curves plugin: a (6, thresholds)
float tensor of true / false positive, true / false negative counts,
precision and recall per threshold."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
from tensorboard.compat.proto.summary_pb2 import Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.pr_curve.plugin_data_pb2 import PrCurvePluginData

from ._convert import make_np

_MAX_THRESHOLDS = 127  # the limit PyTorch applies; more thresholds are cut to it
_MIN_COUNT = 1e-7  # keeps precision and recall finite when a denominator is 0


def _check_thresholds(num_thresholds: Any, fn: str, cap: bool = True) -> int:
    if isinstance(num_thresholds, bool) or not isinstance(num_thresholds, (int, np.integer)) or num_thresholds < 2:
        raise ValueError(f"{fn}: num_thresholds must be an int >= 2, got {num_thresholds!r}")
    return min(int(num_thresholds), _MAX_THRESHOLDS) if cap else int(num_thresholds)


def _summary(tag: str, data: np.ndarray, num_thresholds: int) -> Summary:
    content = PrCurvePluginData(version=0, num_thresholds=num_thresholds).SerializeToString()
    md = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="pr_curves", content=content))
    proto = TensorProto(dtype="DT_FLOAT", float_val=data.reshape(-1).tolist(),
                        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=s) for s in data.shape]))
    return Summary(value=[Summary.Value(tag=tag, metadata=md, tensor=proto)])


def compute_curve(labels: np.ndarray, predictions: np.ndarray, num_thresholds: int,
                  weights: Optional[Any] = None) -> np.ndarray:
    """Bucket the predictions into num_thresholds bins of [0, 1]; a threshold's
    positives are the (weighted) examples in its bin and above."""
    w = 1.0 if weights is None else weights
    bucket = np.int32(np.floor(predictions * (num_thresholds - 1)))
    truth = labels.astype(np.float64)
    rng = (0, num_thresholds - 1)
    tp_b, _ = np.histogram(bucket, bins=num_thresholds, range=rng, weights=truth * w)
    fp_b, _ = np.histogram(bucket, bins=num_thresholds, range=rng, weights=(1.0 - truth) * w)
    tp = np.cumsum(tp_b[::-1])[::-1]
    fp = np.cumsum(fp_b[::-1])[::-1]
    tn = fp[0] - fp
    fn = tp[0] - tp
    precision = tp / np.maximum(_MIN_COUNT, tp + fp)
    recall = tp / np.maximum(_MIN_COUNT, tp + fn)
    return np.stack((tp, fp, tn, fn, precision, recall))


def pr_curve(tag: str, labels: Any, predictions: Any, num_thresholds: int = 127,
             weights: Optional[Any] = None) -> Summary:
    n = _check_thresholds(num_thresholds, "add_pr_curve")
    lab = make_np(labels, "add_pr_curve", "labels")
    pred = make_np(predictions, "add_pr_curve", "predictions")
    if lab.shape != pred.shape:
        raise ValueError(f"add_pr_curve: labels {tuple(lab.shape)} and predictions {tuple(pred.shape)} "
                         f"must have the same shape")
    if weights is not None:
        weights = make_np(weights, "add_pr_curve", "weights")
    return _summary(tag, compute_curve(lab, pred, n, weights), n)


def pr_curve_raw(tag: str, tp: Any, fp: Any, tn: Any, fn: Any, precision: Any, recall: Any,
                 num_thresholds: int = 127) -> Summary:
    n = _check_thresholds(num_thresholds, "add_pr_curve_raw")
    names = ("true_positive_counts", "false_positive_counts", "true_negative_counts",
             "false_negative_counts", "precision", "recall")
    rows = [make_np(np.asarray(v) if isinstance(v, (list, tuple)) else v, "add_pr_curve_raw", name).reshape(-1)
            for v, name in
            zip((tp, fp, tn, fn, precision, recall), names)]
    if len({r.shape for r in rows}) != 1:
        raise ValueError("add_pr_curve_raw: the six count / precision / recall arrays must have the same length, got "
                         + ", ".join(f"{nm}={r.size}" for nm, r in zip(names, rows)))
    return _summary(tag, np.stack(rows), n)
