"""The option enums of torch.onnx that export takes: TrainingMode and
OperatorExportTypes, with PyTorch's member names and values."""
from __future__ import annotations

import enum

__all__ = ["TrainingMode", "OperatorExportTypes"]


class TrainingMode(enum.IntEnum):
    """How export treats the model's train / eval mode: EVAL exports inference (the default), PRESERVE keeps
    the mode it has, TRAINING exports training behaviour (not supported by cgrad's exporter)."""
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


class OperatorExportTypes(enum.IntEnum):
    """Which operator set export may use; cgrad exports standard ONNX (ONNX) only."""
    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3
