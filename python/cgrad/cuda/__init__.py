"""cgrad.cuda (torch.cuda): the CUDA device namespace.

This build of cgrad has no CUDA backend, so the namespace behaves as a
CPU-only PyTorch build's: nothing is available (`is_available()` is False,
`device_count()` is 0), seeding and cache calls are accepted and do nothing,
the memory counters are 0, and the calls that need a GPU raise what PyTorch
raises there (AssertionError "Torch not compiled with CUDA enabled",
RuntimeError for streams and events). It is the home of the CUDA backend: when
one is built, these functions answer from it."""
from __future__ import annotations

import collections
from typing import Any

from . import amp

__all__ = [
    "amp", "is_available", "device_count", "is_initialized", "init", "current_device", "set_device", "device",
    "synchronize", "get_device_name", "get_device_capability", "get_device_properties", "get_arch_list",
    "get_gencode_flags", "is_bf16_supported", "is_tf32_supported", "manual_seed", "manual_seed_all", "seed", "seed_all",
    "initial_seed", "get_rng_state", "set_rng_state", "get_rng_state_all", "set_rng_state_all", "empty_cache",
    "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved", "memory_cached",
    "memory_stats", "mem_get_info", "reset_peak_memory_stats", "reset_max_memory_allocated", "ipc_collect",
    "Stream", "Event", "current_stream", "default_stream", "stream",
]

_NOT_COMPILED = "Torch not compiled with CUDA enabled"


def _need_cuda(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError(_NOT_COMPILED)


def is_available() -> bool:
    """Whether a CUDA device can be used: False (this build has no CUDA backend)."""
    return False


def device_count() -> int:
    """The number of CUDA devices: 0."""
    return 0


def is_initialized() -> bool:
    """Whether CUDA state is initialised: False."""
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether the current CUDA device supports bfloat16: False (no device)."""
    return False


def is_tf32_supported() -> bool:
    """Whether the current CUDA device supports TF32: False (no device)."""
    return False


def get_arch_list() -> list[str]:
    """The CUDA architectures this build was compiled for: none."""
    return []


def get_gencode_flags() -> str:
    """The NVCC gencode flags this build was compiled with: none."""
    return ""


# the calls that need a device
init = current_device = synchronize = get_device_name = get_device_capability = _need_cuda
get_device_properties = initial_seed = get_rng_state = set_rng_state = ipc_collect = _need_cuda
mem_get_info = current_stream = default_stream = _need_cuda


def set_device(device: Any) -> None:
    """Select the current CUDA device; raises AttributeError as PyTorch's CPU build does."""
    raise AttributeError("cgrad.cuda.set_device: this build has no CUDA backend (Torch not compiled with CUDA enabled)")


def reset_peak_memory_stats(device: Any = None) -> None:
    """Reset the CUDA allocator's peaks; raises AttributeError as PyTorch's CPU build does."""
    raise AttributeError("cgrad.cuda.reset_peak_memory_stats: this build has no CUDA backend")


reset_max_memory_allocated = reset_peak_memory_stats


def _check_seed(seed: Any) -> int:
    return int(seed)  # PyTorch's check: int(seed) (ValueError / TypeError for a non-number)


def manual_seed(seed: int) -> None:
    """Seed the current CUDA device's generator: accepted, nothing to seed."""
    _check_seed(seed)


def manual_seed_all(seed: int) -> None:
    """Seed every CUDA device's generator: accepted, nothing to seed."""
    _check_seed(seed)


def seed() -> None:
    """Seed the current CUDA device's generator randomly: nothing to seed."""


def seed_all() -> None:
    """Seed every CUDA device's generator randomly: nothing to seed."""


def get_rng_state_all() -> list:
    """The generator states of every CUDA device: none."""
    return []


def set_rng_state_all(new_states: Any) -> None:
    """Set the generator state of every CUDA device: there are none."""


def empty_cache() -> None:
    """Release the CUDA caching allocator's unused blocks: nothing is cached."""


def memory_allocated(device: Any = None) -> int:
    """Bytes held by CUDA tensors: 0."""
    return 0


def max_memory_allocated(device: Any = None) -> int:
    """Peak bytes held by CUDA tensors: 0."""
    return 0


def memory_reserved(device: Any = None) -> int:
    """Bytes the CUDA caching allocator holds: 0."""
    return 0


def max_memory_reserved(device: Any = None) -> int:
    """Peak bytes the CUDA caching allocator held: 0."""
    return 0


memory_cached = memory_reserved


def memory_stats(device: Any = None) -> "collections.OrderedDict[str, Any]":
    """The CUDA allocator's statistics: empty."""
    return collections.OrderedDict()


class device:
    """Context manager selecting a CUDA device (torch.cuda.device)."""

    def __init__(self, device: Any) -> None:
        self.idx = _device_index(device)
        self.prev_idx = -1

    def __enter__(self) -> None:
        if self.idx < 0:  # PyTorch compares None with an int here
            raise TypeError("'<' not supported between instances of 'NoneType' and 'int'")
        raise RuntimeError("PyTorch was compiled without CUDA support")

    def __exit__(self, *exc: Any) -> bool:
        return False


def _device_index(d: Any) -> int:
    if d is None:
        return -1
    if isinstance(d, int):
        return d
    from .. import device as _device
    dev = _device(d) if isinstance(d, str) else d
    return dev.index if dev.index is not None else 0


class Stream:
    """A CUDA stream (torch.cuda.Stream): needs CUDA."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("torch.cuda.Stream requires CUDA support")


class Event:
    """A CUDA event (torch.cuda.Event): needs CUDA."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("Tried to instantiate dummy base class Event")


def stream(stream: Any) -> Any:
    """Context manager selecting a stream; with None it does nothing (torch.cuda.stream)."""
    import contextlib
    if stream is None:
        return contextlib.nullcontext()
    raise AssertionError(_NOT_COMPILED)
