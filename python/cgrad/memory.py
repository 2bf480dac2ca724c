"""cgrad.memory: statistics of the engine's caching allocators, under the
names torch.cuda.memory uses (cg_allocator_stats in include/cgrad.h).

Each device with data has its own caching pool: the CPU's (device None or
'cpu', the default here) and one per CUDA device ('cuda:N'; 'cuda' is the
current CUDA device), which cgrad.cuda.memory_allocated & co. read. A cuda
device that is not usable reports zeros. Byte counts are of the blocks handed
out, rounded to the allocator's size classes (Note [Allocator] in
src/core/allocator.c); tensor data only (not the small tensor and node
structs)."""
from __future__ import annotations

from typing import Any, Dict, Optional

from . import _C

__all__ = ["stats", "memory_stats", "memory_allocated", "max_memory_allocated", "memory_reserved",
           "reset_peak_memory_stats", "empty_cache"]


def _device(device: Any) -> Any:
    """The device whose pool is meant: None is the CPU; a cuda device or string names a CUDA device's pool."""
    if device is None:
        return _C.device("cpu")
    dev = device if isinstance(device, _C.device) else _C.device(device)
    if dev.type not in ("cpu", "cuda"):
        raise NotImplementedError(f"cgrad.memory: device {device} has no caching allocator (cpu and cuda do)")
    return dev


def _raw(device: Any) -> Dict[str, int]:
    return _C._memory_stats(_device(device))


def stats(device: Optional[Any] = None) -> Dict[str, int]:
    """Allocator statistics with torch.cuda.memory_stats's key names where they make sense."""
    s = _raw(device)
    return {
        "allocated_bytes.all.current": s["live_bytes"],
        "allocated_bytes.all.peak": s["peak_bytes"],
        "allocated_bytes.all.allocated": s["total_bytes"],
        "allocated_bytes.all.freed": s["freed_bytes"],
        "allocation.all.current": s["live_allocs"],
        "allocation.all.peak": s["peak_allocs"],
        "allocation.all.allocated": s["alloc_calls"],
        "allocation.all.freed": s["alloc_calls"] - s["live_allocs"],
        "active_bytes.all.current": s["live_bytes"],
        "reserved_bytes.all.current": s["live_bytes"] + s["cached_bytes"],
        "cached_bytes.all.current": s["cached_bytes"],
        "num_cache_hits": s["cache_hits"],
        "num_system_allocs": s["system_allocs"],
    }


memory_stats = stats


def memory_allocated(device: Optional[Any] = None) -> int:
    """Bytes currently held by tensors."""
    return int(_raw(device)["live_bytes"])


def max_memory_allocated(device: Optional[Any] = None) -> int:
    """Peak of memory_allocated() since start or the last reset_peak_memory_stats()."""
    return int(_raw(device)["peak_bytes"])


def memory_reserved(device: Optional[Any] = None) -> int:
    """Bytes held by the allocator: in use plus cached for reuse."""
    s = _raw(device)
    return int(s["live_bytes"] + s["cached_bytes"])


def reset_peak_memory_stats(device: Optional[Any] = None) -> None:
    """Restart the peaks (bytes and block count) from the current values."""
    _C._memory_reset_peak(_device(device))


def empty_cache(device: Optional[Any] = None) -> None:
    """Give the cached free blocks back to the OS (for a cuda device: to the driver)."""
    _C._memory_empty_cache(_device(device))
