"""SummaryWriter and FileWriter: the user-facing writer of
cgrad.utils.tensorboard, with torch.utils.tensorboard's methods, arguments
and file layout. Events go through TensorBoard's own EventFileWriter."""
from __future__ import annotations

import os
import socket
import time
import warnings
from datetime import datetime
from typing import Any, Dict, List, Optional, Sequence, Union

from tensorboard.compat import tf
from tensorboard.compat.proto import event_pb2
from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.compat.proto.summary_pb2 import Summary
from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from . import _embedding
from ._boxes import image_boxes
from ._convert import make_np
from ._hparams import hparams
from ._image import figure_to_image, image, video
from ._layout import custom_scalars
from ._mesh import mesh
from ._pr_curve import pr_curve, pr_curve_raw
from ._summary import audio, default_bins, histogram, histogram_raw, scalar, tensor_proto, text

__all__ = ["FileWriter", "SummaryWriter"]

Number = Union[int, float]


def _step(global_step: Any) -> Optional[int]:
    if global_step is None:
        return None
    if hasattr(global_step, "item") and not isinstance(global_step, (int, float)):
        global_step = global_step.item()
    try:
        return int(global_step)
    except (TypeError, ValueError) as e:
        raise TypeError(f"SummaryWriter: global_step must be an integer, got {global_step!r}") from e


class FileWriter:
    """Writes Event protocol buffers to one event file in `log_dir`."""

    def __init__(self, log_dir: Any, max_queue: int = 10, flush_secs: int = 120, filename_suffix: str = "") -> None:
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self) -> str:
        return self.event_writer.get_logdir()

    def add_event(self, event: Event, step: Any = None, walltime: Optional[float] = None) -> None:
        event.wall_time = time.time() if walltime is None else float(walltime)
        step = _step(step)
        if step is not None:
            event.step = step
        self.event_writer.add_event(event)

    def add_summary(self, summary: Summary, global_step: Any = None, walltime: Optional[float] = None) -> None:
        self.add_event(event_pb2.Event(summary=summary), global_step, walltime)

    def add_graph(self, graph_profile: Any, walltime: Optional[float] = None) -> None:
        graph, run_metadata = graph_profile
        self.add_event(event_pb2.Event(graph_def=graph.SerializeToString()), None, walltime)
        tagged = event_pb2.TaggedRunMetadata(tag="step1", run_metadata=run_metadata.SerializeToString())
        self.add_event(event_pb2.Event(tagged_run_metadata=tagged), None, walltime)

    def flush(self) -> None:
        self.event_writer.flush()

    def close(self) -> None:
        self.event_writer.close()

    def reopen(self) -> None:
        self.event_writer.reopen()


class SummaryWriter:
    """Writes scalars, histograms, images, text, hparams, PR curves,
    embeddings, audio, video, meshes and graphs to TensorBoard event files in
    `log_dir` (default runs/<CURRENT_DATETIME>_<HOSTNAME><comment>)."""

    def __init__(self, log_dir: Optional[Any] = None, comment: str = "", purge_step: Optional[int] = None,
                 max_queue: int = 10, flush_secs: int = 120, filename_suffix: str = "") -> None:
        if not log_dir:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", stamp + "_" + socket.gethostname() + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer: Optional[FileWriter] = None
        self.all_writers: Optional[Dict[str, FileWriter]] = None
        self._get_file_writer()
        self.default_bins = default_bins()

    def _get_file_writer(self) -> FileWriter:
        """The main writer, (re)created after close()."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                step = self.purge_step
                self.file_writer.add_event(Event(step=step, file_version="brain.Event:2"))
                self.file_writer.add_event(Event(step=step, session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self) -> str:
        return self.log_dir

    def _summary(self, summary: Summary, global_step: Any, walltime: Optional[float]) -> None:
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_hparams(self, hparam_dict: Dict[str, Any], metric_dict: Dict[str, Any],
                    hparam_domain_discrete: Optional[Dict[str, List[Any]]] = None,
                    run_name: Optional[str] = None, global_step: Optional[int] = None) -> None:
        """Hyperparameters and their metrics for the hparams dashboard, in the
        sub-run `run_name` (default: the current time) of this log dir."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("add_hparams: hparam_dict and metric_dict must be dicts")
        exp, ssi, sei = hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        if not run_name:
            run_name = str(time.time())
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name)
        with SummaryWriter(log_dir=logdir) as sub:
            fw = sub._get_file_writer()
            for s in (exp, ssi, sei):
                fw.add_summary(s, global_step)
            for k, v in metric_dict.items():
                sub.add_scalar(k, v, global_step)

    def add_scalar(self, tag: str, scalar_value: Any, global_step: Optional[int] = None,
                   walltime: Optional[float] = None, new_style: bool = False,
                   double_precision: bool = False) -> None:
        """One scalar; new_style writes it as a tensor of the scalars plugin."""
        self._summary(scalar(tag, scalar_value, new_style=new_style, double_precision=double_precision),
                      global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: Dict[str, Any], global_step: Optional[int] = None,
                    walltime: Optional[float] = None) -> None:
        """Several scalars on one chart: each goes to its own sub-run
        `<log_dir>/<main_tag>_<tag>` under the tag `main_tag`."""
        if not isinstance(tag_scalar_dict, dict):
            raise TypeError(f"add_scalars: tag_scalar_dict must be a dict, not {type(tag_scalar_dict).__name__}")
        walltime = time.time() if walltime is None else walltime
        root = self._get_file_writer().get_logdir()
        assert self.all_writers is not None
        for tag, value in tag_scalar_dict.items():
            key = root + "/" + main_tag.replace("/", "_") + "_" + tag
            fw = self.all_writers.get(key)
            if fw is None:
                fw = FileWriter(key, self.max_queue, self.flush_secs, self.filename_suffix)
                self.all_writers[key] = fw
            fw.add_summary(scalar(main_tag, value), global_step, walltime)

    def add_tensor(self, tag: str, tensor: Any, global_step: Optional[int] = None,
                   walltime: Optional[float] = None) -> None:
        """A whole tensor (any shape) for the tensor plugin."""
        self._summary(tensor_proto(tag, tensor), global_step, walltime)

    def add_histogram(self, tag: str, values: Any, global_step: Optional[int] = None,
                      bins: Union[str, Sequence[float], Any] = "tensorflow", walltime: Optional[float] = None,
                      max_bins: Optional[int] = None) -> None:
        """A histogram of `values`; bins is 'tensorflow' (TensorFlow's
        exponential buckets), one of NumPy's bin strings ('auto', 'fd', ...),
        a count, or the bin edges."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        elif not isinstance(bins, (str, int)):
            bins = make_np(bins, "add_histogram", "bins") if not isinstance(bins, (list, tuple)) else bins
        self._summary(histogram(tag, values, bins, max_bins=max_bins), global_step, walltime)

    def add_histogram_raw(self, tag: str, min: Number, max: Number, num: int, sum: Number, sum_squares: Number,
                          bucket_limits: Sequence[Number], bucket_counts: Sequence[Number],
                          global_step: Optional[int] = None, walltime: Optional[float] = None) -> None:
        """A histogram from its statistics and buckets (upper limits and counts)."""
        limits = [float(v) for v in make_np(bucket_limits, "add_histogram_raw", "bucket_limits").reshape(-1)] \
            if not isinstance(bucket_limits, (list, tuple)) else list(bucket_limits)
        counts = [float(v) for v in make_np(bucket_counts, "add_histogram_raw", "bucket_counts").reshape(-1)] \
            if not isinstance(bucket_counts, (list, tuple)) else list(bucket_counts)
        if len(limits) != len(counts):
            raise ValueError(f"add_histogram_raw: bucket_limits ({len(limits)}) and bucket_counts "
                             f"({len(counts)}) must have the same length")
        self._summary(histogram_raw(tag, min, max, num, sum, sum_squares, limits, counts), global_step, walltime)

    def add_image(self, tag: str, img_tensor: Any, global_step: Optional[int] = None,
                  walltime: Optional[float] = None, dataformats: str = "CHW") -> None:
        """One image: float values in [0, 1] or uint8 in [0, 255], laid out as `dataformats`."""
        self._summary(image(tag, img_tensor, dataformats, "add_image"), global_step, walltime)

    def add_images(self, tag: str, img_tensor: Any, global_step: Optional[int] = None,
                   walltime: Optional[float] = None, dataformats: str = "NCHW") -> None:
        """A batch of images, tiled 8 to a row into one image."""
        self._summary(image(tag, img_tensor, dataformats, "add_images"), global_step, walltime)

    def add_image_with_boxes(self, tag: str, img_tensor: Any, box_tensor: Any, global_step: Optional[int] = None,
                             walltime: Optional[float] = None, rescale: float = 1, dataformats: str = "CHW",
                             labels: Optional[Union[str, List[str]]] = None) -> None:
        """One image with (N, 4) xyxy boxes drawn on it; labels (one per box) are
        ignored when their count differs from the boxes', as in PyTorch."""
        if labels is not None:
            if isinstance(labels, str):
                labels = [labels]
            if len(labels) != make_np(box_tensor, "add_image_with_boxes", "box_tensor").shape[0]:
                labels = None
        self._summary(image_boxes(tag, img_tensor, box_tensor, rescale=rescale, dataformats=dataformats,
                                  labels=labels), global_step, walltime)

    def add_figure(self, tag: str, figure: Any, global_step: Optional[int] = None, close: bool = True,
                   walltime: Optional[float] = None) -> None:
        """A matplotlib figure (or a list of them, tiled) rendered to an image."""
        if isinstance(figure, list):
            self.add_image(tag, figure_to_image(figure, close), global_step, walltime, dataformats="NCHW")
        else:
            self.add_image(tag, figure_to_image(figure, close), global_step, walltime, dataformats="CHW")

    def add_video(self, tag: str, vid_tensor: Any, global_step: Optional[int] = None, fps: Number = 4,
                  walltime: Optional[float] = None) -> None:
        """(N, T, C, H, W) clips, tiled into one animated GIF."""
        self._summary(video(tag, vid_tensor, fps), global_step, walltime)

    def add_audio(self, tag: str, snd_tensor: Any, global_step: Optional[int] = None, sample_rate: int = 44100,
                  walltime: Optional[float] = None) -> None:
        """A mono clip with values in [-1, 1]."""
        self._summary(audio(tag, snd_tensor, sample_rate=sample_rate), global_step, walltime)

    def add_text(self, tag: str, text_string: str, global_step: Optional[int] = None,
                 walltime: Optional[float] = None) -> None:
        """A (markdown) string for the text dashboard."""
        self._summary(text(tag, text_string), global_step, walltime)

    def add_onnx_graph(self, prototxt: str) -> None:
        raise NotImplementedError("add_onnx_graph is not implemented in cgrad.utils.tensorboard")

    def add_graph(self, model: Any, input_to_model: Any = None, verbose: bool = False,
                  use_strict_trace: bool = True) -> None:
        """The model's graph, from one run of `model(*input_to_model)`
        (module-level nodes; see Note [Graph by hooks] in _graph.py).
        use_strict_trace is accepted for compatibility; nothing is traced."""
        from ._graph import build_graph
        self._get_file_writer().add_graph(build_graph(model, input_to_model, verbose))

    def add_embedding(self, mat: Any, metadata: Optional[Sequence[Any]] = None, label_img: Any = None,
                      global_step: Optional[int] = None, tag: str = "default",
                      metadata_header: Optional[Sequence[str]] = None) -> None:
        """Points (N, D) for the projector, with optional labels and (N, C, H, W) label images."""
        m = make_np(mat, "add_embedding", "mat")
        if m.ndim != 2:
            raise ValueError(f"add_embedding: mat must be 2-D (points, dimensions), got shape {tuple(m.shape)}")
        step = 0 if global_step is None else _step(global_step)
        assert step is not None
        imgs = _embedding.label_images(label_img) if label_img is not None else None
        if metadata is not None and len(metadata) != m.shape[0]:
            raise ValueError(f"add_embedding: metadata has {len(metadata)} labels for {m.shape[0]} points")
        if imgs is not None and imgs.shape[0] != m.shape[0]:
            raise ValueError(f"add_embedding: label_img has {imgs.shape[0]} images for {m.shape[0]} points")
        subdir = f"{str(step).zfill(5)}/{_embedding.encode_tag(tag)}"
        logdir = self._get_file_writer().get_logdir()
        save_path = os.path.join(logdir, subdir)
        fs = tf.io.gfile
        if fs.exists(save_path):
            if not fs.isdir(save_path):
                raise NotADirectoryError(f"add_embedding: {save_path} exists and is not a directory")
            warnings.warn(f"add_embedding: {save_path} exists already and is overwritten; pass a new "
                          f"global_step or tag for each embedding", UserWarning, stacklevel=2)
        else:
            fs.makedirs(save_path)
        if metadata is not None:
            _embedding.write_metadata(metadata, save_path, metadata_header)
        if imgs is not None:
            _embedding.write_sprite(imgs, save_path)
        _embedding.write_points(m, save_path)
        if not hasattr(self, "_projector_config"):
            self._projector_config = ProjectorConfig()
        self._projector_config.embeddings.extend([_embedding.embedding_info(
            metadata is not None, None if imgs is None else imgs.shape, subdir, step, tag)])
        from google.protobuf import text_format
        _embedding.write_config(logdir, text_format.MessageToString(self._projector_config))

    def add_pr_curve(self, tag: str, labels: Any, predictions: Any, global_step: Optional[int] = None,
                     num_thresholds: int = 127, weights: Any = None, walltime: Optional[float] = None) -> None:
        """A precision-recall curve from 0/1 labels and predictions in [0, 1]."""
        self._summary(pr_curve(tag, labels, predictions, num_thresholds, weights), global_step, walltime)

    def add_pr_curve_raw(self, tag: str, true_positive_counts: Any, false_positive_counts: Any,
                         true_negative_counts: Any, false_negative_counts: Any, precision: Any, recall: Any,
                         global_step: Optional[int] = None, num_thresholds: int = 127, weights: Any = None,
                         walltime: Optional[float] = None) -> None:
        """A precision-recall curve from precomputed counts, precision and recall."""
        self._summary(pr_curve_raw(tag, true_positive_counts, false_positive_counts, true_negative_counts,
                                   false_negative_counts, precision, recall, num_thresholds),
                      global_step, walltime)

    def add_custom_scalars_multilinechart(self, tags: List[str], category: str = "default",
                                          title: str = "untitled") -> None:
        self._summary(custom_scalars({category: {title: ["Multiline", tags]}}), None, None)

    def add_custom_scalars_marginchart(self, tags: List[str], category: str = "default",
                                       title: str = "untitled") -> None:
        if len(tags) != 3:
            raise ValueError(f"add_custom_scalars_marginchart: tags must be 3 (value, lower, upper), got {len(tags)}")
        self._summary(custom_scalars({category: {title: ["Margin", tags]}}), None, None)

    def add_custom_scalars(self, layout: Dict[str, Dict[str, List[Any]]]) -> None:
        """The custom scalars dashboard's layout: {category: {chart: [kind, tags]}}."""
        self._summary(custom_scalars(layout), None, None)

    def add_mesh(self, tag: str, vertices: Any, colors: Any = None, faces: Any = None,
                 config_dict: Optional[Dict[str, Any]] = None, global_step: Optional[int] = None,
                 walltime: Optional[float] = None) -> None:
        """A mesh or point cloud: (B, N, 3) vertices, optional colors and (B, F, 3) faces."""
        self._summary(mesh(tag, vertices, colors, faces, config_dict), global_step, walltime)

    def flush(self) -> None:
        if self.all_writers is None:
            return
        for w in self.all_writers.values():
            w.flush()

    def close(self) -> None:
        if self.all_writers is None:
            return
        for w in self.all_writers.values():
            w.flush()
            w.close()
        self.file_writer = self.all_writers = None

    def __enter__(self) -> "SummaryWriter":
        return self

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        self.close()
