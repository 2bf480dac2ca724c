"""The exceptions of cgrad.onnx, as torch.onnx.errors: OnnxExporterError for
anything that stops an export, UnsupportedOperatorError for an operator that
has no ONNX mapping (a RuntimeError, as in PyTorch)."""
from __future__ import annotations

from typing import Optional

__all__ = ["OnnxExporterError", "UnsupportedOperatorError"]


class OnnxExporterError(RuntimeError):
    """An export could not be completed."""


class UnsupportedOperatorError(OnnxExporterError):
    """An operator met while tracing has no ONNX mapping at the requested opset."""

    def __init__(self, name: str, version: int, supported_version: Optional[int]) -> None:
        if supported_version is not None:
            msg = (f"Exporting the operator '{name}' to ONNX opset version {version} is not supported. "
                   f"Support for this operator was added in version {supported_version}, try exporting with "
                   "this version.")
        else:
            msg = f"Exporting the operator '{name}' to ONNX opset version {version} is not supported."
        super().__init__(msg)
        self.name = name
        self.version = version
