"""DataParallel and data_parallel as on PyTorch's CPU build, where no GPU is
available: DataParallel keeps the module as `.module` (so state-dict keys
carry the 'module.' prefix) with device_ids == [] and its forward calls the
module directly; data_parallel has no device to place the module on and
raises PyTorch's RuntimeError."""
from __future__ import annotations

from typing import Any, Optional, Sequence

from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    """Wraps `module` for data parallelism over GPUs. cgrad does not replicate a module over devices: the
    arguments device_ids, output_device and dim are accepted and unused, and forward runs the module where
    its parameters are (PyTorch's behaviour without a GPU; with GPUs, move the module and its inputs to one
    device yourself)."""

    def __init__(self, module: Module, device_ids: Optional[Sequence[Any]] = None, output_device: Any = None,
                 dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids: list = []

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)


def data_parallel(module: Module, inputs: Any, device_ids: Optional[Sequence[Any]] = None,
                  output_device: Any = None, dim: int = 0, module_kwargs: Optional[Any] = None) -> Any:
    """module(*inputs) replicated over the GPUs in device_ids (torch.nn.parallel.data_parallel). Without a GPU
    backend there is no device type to run on, and PyTorch's CPU build raises the same RuntimeError."""
    raise RuntimeError("data_parallel: device type could not be determined (no GPU backend: cgrad runs on cpu; "
                       "call the module directly)")
