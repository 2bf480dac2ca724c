"""DistributedDataParallel's import path (torch.nn.parallel.DistributedDataParallel).
It needs a process group, and cgrad has no distributed backend yet (a later
issue): construction raises what PyTorch raises when no default process group
has been initialised (ValueError), or NotImplementedError when a process
group or device mesh is passed."""
from __future__ import annotations

from typing import Any, Optional, Sequence

from ..modules.module import Module

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
    """Data parallelism across processes; cgrad cannot construct it yet (no torch.distributed)."""

    def __init__(self, module: Module, device_ids: Optional[Sequence[Any]] = None, output_device: Any = None,
                 dim: int = 0, broadcast_buffers: Optional[bool] = None, init_sync: bool = True,
                 process_group: Any = None, bucket_cap_mb: Optional[float] = None,
                 find_unused_parameters: bool = False, check_reduction: bool = False,
                 gradient_as_bucket_view: bool = False, static_graph: bool = False, device_mesh: Any = None,
                 **kwargs: Any) -> None:
        super().__init__()
        if process_group is not None or device_mesh is not None:
            raise NotImplementedError("DistributedDataParallel: cgrad has no distributed backend yet "
                                      "(torch.distributed), so no process group or device mesh can be used")
        raise ValueError("Default process group has not been initialized, please make sure to call "
                         "init_process_group. (DistributedDataParallel: cgrad has no distributed backend yet, "
                         "so there is no init_process_group)")

