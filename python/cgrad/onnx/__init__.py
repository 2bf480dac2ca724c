"""cgrad.onnx: export cgrad models to ONNX, as torch.onnx: export(model, args,
f, ...) traces the model through cgrad and writes an ONNX graph;
is_in_onnx_export() says whether an export is running; errors holds the
exception types. Needs the `onnx` package (pip install cgrad[onnx])."""
from __future__ import annotations

try:
    import onnx as _onnx  # noqa: F401
except ImportError as _e:  # pragma: no cover - depends on the environment
    raise ImportError("cgrad.onnx needs the onnx package: pip install 'cgrad[onnx]' (or pip install onnx)") from _e

from . import errors
from ._enums import OperatorExportTypes, TrainingMode
from ._export import export
from ._program import ONNXProgram
from ._tracer import current as _current
from .errors import OnnxExporterError, UnsupportedOperatorError

__all__ = ["export", "is_in_onnx_export", "errors", "OnnxExporterError", "UnsupportedOperatorError",
           "ONNXProgram", "TrainingMode", "OperatorExportTypes"]


def is_in_onnx_export() -> bool:
    """True while cgrad.onnx.export is tracing a model (its forward can test this)."""
    return _current() is not None
