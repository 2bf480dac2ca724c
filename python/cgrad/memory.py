"""cgrad.memory: statistics of the engine's CPU caching allocator, under the
names torch.cuda.memory uses (cg_allocator_stats in include/cgrad.h).

Byte counts are of the blocks handed out, rounded to the allocator's size
classes (Note [Allocator] in src/core/allocator.c); tensor data only (not the
small tensor and node structs)."""
from __future__ import annotations

from typing import Any, Dict, Optional

from . import _C

__all__ = ["stats", "memory_stats", "memory_allocated", "max_memory_allocated", "memory_reserved",
           "reset_peak_memory_stats", "empty_cache"]


def _check_device(device: Any) -> None:
    if device is not None and str(device) != "cpu":
        raise NotImplementedError(f"cgrad.memory: device {device} is not supported (CPU only)")


def stats(device: Optional[Any] = None) -> Dict[str, int]:
    """Allocator statistics with torch.cuda.memory_stats's key names where they make sense."""
    _check_device(device)
    s = _C._memory_stats()
    return {
        "allocated_bytes.all.current": s["live_bytes"],
        "allocated_bytes.all.peak": s["peak_bytes"],
        "allocated_bytes.all.allocated": s["total_bytes"],
        "allocated_bytes.all.freed": s["freed_bytes"],
        "allocation.all.current": s["live_allocs"],
        "allocation.all.peak": s["peak_allocs"],
        "allocation.all.allocated": s["alloc_calls"],
        "reserved_bytes.all.current": s["live_bytes"] + s["cached_bytes"],
        "cached_bytes.all.current": s["cached_bytes"],
        "num_cache_hits": s["cache_hits"],
        "num_system_allocs": s["system_allocs"],
    }


memory_stats = stats


def memory_allocated(device: Optional[Any] = None) -> int:
    """Bytes currently held by tensors."""
    _check_device(device)
    return int(_C._memory_stats()["live_bytes"])


def max_memory_allocated(device: Optional[Any] = None) -> int:
    """Peak of memory_allocated() since start or the last reset_peak_memory_stats()."""
    _check_device(device)
    return int(_C._memory_stats()["peak_bytes"])


def memory_reserved(device: Optional[Any] = None) -> int:
    """Bytes held by the allocator: in use plus cached for reuse."""
    _check_device(device)
    s = _C._memory_stats()
    return int(s["live_bytes"] + s["cached_bytes"])


def reset_peak_memory_stats(device: Optional[Any] = None) -> None:
    """Restart the peaks (bytes and block count) from the current values."""
    _check_device(device)
    _C._memory_reset_peak()


def empty_cache() -> None:
    """Give the cached free blocks back to the OS."""
    _C._memory_empty_cache()
