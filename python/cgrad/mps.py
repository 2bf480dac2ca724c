"""cgrad.mps (torch.mps): Apple's Metal device namespace. Not built in, as in
PyTorch's builds for Linux: nothing is available, seeding is accepted, and
the calls that need the device raise RuntimeError."""
from __future__ import annotations

from typing import Any

__all__ = ["is_available", "device_count", "manual_seed", "seed", "synchronize", "empty_cache",
           "current_allocated_memory", "driver_allocated_memory", "get_rng_state", "set_rng_state"]


def is_available() -> bool:
    """Whether an MPS device is available: False."""
    return False


def device_count() -> int:
    """The number of MPS devices: 0."""
    return 0


def manual_seed(seed: int) -> None:
    """Seed the MPS generator: accepted, nothing to seed."""
    int(seed)


def _without(what: str) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"Cannot execute {what}() without MPS backend.")
    return call


synchronize = _without("deviceSynchronize")
empty_cache = _without("emptyCache")
current_allocated_memory = _without("getCurrentAllocatedMemory")
driver_allocated_memory = _without("getDriverAllocatedMemory")
seed = get_rng_state = set_rng_state = _without("getDefaultGenerator")
