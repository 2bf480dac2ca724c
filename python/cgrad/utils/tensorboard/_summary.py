"""Summary protocol buffers for the basic value kinds: scalars, whole tensors,
histograms, text and audio (what add_scalar, add_tensor, add_histogram,
add_histogram_raw, add_text and add_audio log)."""
from __future__ import annotations

import io
import warnings
import wave
from typing import Any, Optional, Sequence, Union

import numpy as np
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

from ._convert import _is_cgrad_tensor, make_np


def _shape_proto(shape: Sequence[int]) -> TensorShapeProto:
    return TensorShapeProto(dim=[TensorShapeProto.Dim(size=int(d)) for d in shape])


def scalar(tag: str, value: Any, new_style: bool = False, double_precision: bool = False) -> Summary:
    """One scalar: `simple_value` (old style) or a 0-d tensor of the scalars plugin."""
    arr = make_np(value, "add_scalar", "scalar_value").squeeze()
    if arr.ndim != 0:
        raise ValueError(f"add_scalar: scalar_value must hold exactly one element, got {arr.size} "
                         f"elements with shape {tuple(make_np(value).shape)}")
    v = float(arr)
    if not new_style:
        return Summary(value=[Summary.Value(tag=tag, simple_value=v)])
    if double_precision:
        tp = TensorProto(dtype="DT_DOUBLE", double_val=[v])
    else:
        tp = TensorProto(dtype="DT_FLOAT", float_val=[v])
    md = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=tag, tensor=tp, metadata=md)])


# NumPy dtype name -> (TensorProto dtype, field written). TensorBoard's reader
# (tensor_util.make_ndarray) reads 8/16-bit integers from int_val and
# float16 / bfloat16 from half_val as their bit patterns; it reads uint32 /
# uint64 only from the raw little-endian tensor_content.
_FIELDS = {
    "float16": ("DT_HALF", "half_val"),
    "float32": ("DT_FLOAT", "float_val"),
    "float64": ("DT_DOUBLE", "double_val"),
    "int8": ("DT_INT8", "int_val"),
    "int16": ("DT_INT16", "int_val"),
    "int32": ("DT_INT32", "int_val"),
    "int64": ("DT_INT64", "int64_val"),
    "uint8": ("DT_UINT8", "int_val"),
    "uint16": ("DT_UINT16", "int_val"),
    "uint32": ("DT_UINT32", "tensor_content"),
    "uint64": ("DT_UINT64", "tensor_content"),
    "bool": ("DT_BOOL", "bool_val"),
    "complex64": ("DT_COMPLEX64", "scomplex_val"),
    "complex128": ("DT_COMPLEX128", "dcomplex_val"),
}


def tensor_proto(tag: str, tensor: Any) -> Summary:
    """A whole tensor in the tensor plugin, its values in the typed field of its dtype."""
    if _is_cgrad_tensor(tensor) and _is_bf16(tensor):
        f32 = tensor.detach().cpu().float().numpy()
        bits = (np.ascontiguousarray(f32).view(np.uint32) >> 16).astype(np.uint16)
        proto = TensorProto(dtype="DT_BFLOAT16", tensor_shape=_shape_proto(f32.shape),
                            half_val=bits.ravel().tolist())
    else:
        if not (_is_cgrad_tensor(tensor) or isinstance(tensor, np.ndarray)):
            raise TypeError(f"add_tensor: tensor must be a cgrad tensor or a NumPy array, "
                            f"not {type(tensor).__name__}")
        arr = make_np(tensor, "add_tensor", "tensor")
        if arr.nbytes >= (1 << 31):
            raise ValueError(f"add_tensor: tensor {tag!r} has {arr.nbytes} bytes, over the 2 GB limit of a protocol buffer")
        if arr.dtype.name not in _FIELDS:
            raise ValueError(f"add_tensor: tensor {tag!r} has the unsupported dtype {arr.dtype}")
        dt, field = _FIELDS[arr.dtype.name]
        flat = arr.ravel()
        values: Any
        if field == "tensor_content":
            values = flat.astype(flat.dtype.newbyteorder("<")).tobytes()
        elif field == "half_val":
            values = flat.view(np.uint16).tolist()
        elif field in ("scomplex_val", "dcomplex_val"):
            values = np.stack([flat.real, flat.imag], axis=-1).ravel().tolist()
        else:
            values = flat.tolist()
        proto = TensorProto(dtype=dt, tensor_shape=_shape_proto(arr.shape), **{field: values})
    md = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="tensor"))
    return Summary(value=[Summary.Value(tag=tag, metadata=md, tensor=proto)])


def _is_bf16(t: Any) -> bool:
    from ... import bfloat16
    return t.dtype == bfloat16


def default_bins() -> list:
    """TensorFlow's histogram bucket limits: ±1e-12 growing by 10% up to 1e20, and 0."""
    pos = []
    v = 1e-12
    while v < 1e20:
        pos.append(v)
        v *= 1.1
    return [-x for x in reversed(pos)] + [0] + pos


def histogram_raw(tag: str, min: float, max: float, num: int, sum: float, sum_squares: float,
                  bucket_limits: Sequence[float], bucket_counts: Sequence[float]) -> Summary:
    """A histogram from precomputed statistics and buckets."""
    hist = HistogramProto(min=min, max=max, num=num, sum=sum, sum_squares=sum_squares,
                          bucket_limit=list(bucket_limits), bucket=list(bucket_counts))
    return Summary(value=[Summary.Value(tag=tag, histo=hist)])


def histogram(tag: str, values: Any, bins: Union[str, Sequence[float], np.ndarray, int],
              max_bins: Optional[int] = None) -> Summary:
    """A histogram summary of `values` (see make_histogram)."""
    x = make_np(values, "add_histogram", "values").astype(float)
    return Summary(value=[Summary.Value(tag=tag, histo=make_histogram(x, bins, max_bins))])


def make_histogram(values: np.ndarray, bins: Union[str, Sequence[float], np.ndarray, int],
                   max_bins: Optional[int] = None) -> HistogramProto:
    """Bucket `values` with np.histogram(bins=...), merge buckets down to
    `max_bins`, and keep the buckets from just before the first non-empty one
    to the last non-empty one (TensorBoard stores right edges only, so the
    leading bucket carries the left edge)."""
    x = np.asarray(values).reshape(-1)
    if x.size == 0:
        raise ValueError("add_histogram: values has no element")
    try:
        counts, limits = np.histogram(x, bins=bins)
    except (ValueError, TypeError) as e:
        raise ValueError(f"add_histogram: cannot bucket values with bins={bins!r}: {e}") from e
    n = len(counts)
    if max_bins is not None and n > max_bins:
        step = n // max_bins
        if n % step:
            counts = np.concatenate([counts, np.zeros(step - n % step, dtype=counts.dtype)])
        counts = counts.reshape(-1, step).sum(axis=1)
        limits = np.concatenate([limits[:-1:step], limits[-1:]])
    nonzero = np.flatnonzero(counts > 0)
    if nonzero.size == 0:
        raise ValueError("add_histogram: no value of values falls inside the bins")
    first, last = int(nonzero[0]), int(nonzero[-1])
    if first > 0:
        kept = counts[first - 1:last + 1]
    else:
        kept = np.concatenate([[0], counts[:last + 1]])
    edges = limits[first:last + 2]
    return HistogramProto(min=x.min(), max=x.max(), num=len(x), sum=x.sum(), sum_squares=x.dot(x),
                          bucket_limit=edges.tolist(), bucket=kept.tolist())


def text(tag: str, text_string: str) -> Summary:
    """A string in the text plugin, under `<tag>/text_summary`."""
    if not isinstance(text_string, str):
        raise TypeError(f"add_text: text_string must be a str, not {type(text_string).__name__}")
    md = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name="text", content=TextPluginData(version=0).SerializeToString()))
    proto = TensorProto(dtype="DT_STRING", string_val=[text_string.encode("utf_8")],
                        tensor_shape=_shape_proto([1]))
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=md, tensor=proto)])


def audio(tag: str, snd: Any, sample_rate: int = 44100) -> Summary:
    """A mono clip in [-1, 1] (clipped beyond), encoded as 16-bit WAV."""
    a = make_np(snd, "add_audio", "snd_tensor").squeeze()
    if a.ndim != 1:
        raise ValueError(f"add_audio: snd_tensor must be one-dimensional after squeezing, "
                         f"got shape {tuple(a.shape)}")
    if a.size and np.abs(a).max() > 1:
        warnings.warn("add_audio: amplitude out of [-1, 1], clipped", UserWarning, stacklevel=3)
        a = a.clip(-1, 1)
    pcm = (a * np.iinfo(np.int16).max).astype("<i2")
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(sample_rate)
        w.writeframes(pcm.tobytes())
    snd_proto = Summary.Audio(sample_rate=sample_rate, num_channels=1, length_frames=pcm.shape[-1],
                              encoded_audio_string=buf.getvalue(), content_type="audio/wav")
    return Summary(value=[Summary.Value(tag=tag, audio=snd_proto)])
