"""cgrad.cuda (torch.cuda): the CUDA device namespace.

cgrad's CUDA backend is the kernel library libcgrad_cuda.so beside the engine
(Note [CUDA kernel library] in meson.build), loaded at the first call that
needs it, never at `import cgrad`. What this namespace does follows the state
it finds, as PyTorch's builds do:

- no kernel library (a CPU-only cgrad): as PyTorch's CPU build. Nothing is
  available (is_available() False, device_count() 0), seeding and cache calls
  are accepted and do nothing, the memory counters are 0, and the calls that
  need a GPU raise what PyTorch's CPU build raises (AssertionError "Torch not
  compiled with CUDA enabled"; AttributeError, RuntimeError or TypeError where
  it does).
- the library, but no usable GPU (no driver, no device): as PyTorch's CUDA
  build on such a machine. is_available() is False, device_count() 0, and the
  calls that need a device raise RuntimeError with the engine's reason ("no
  CUDA GPUs are available", "CUDA is not usable here: ...").
- GPUs: the functions answer from the engine (cg_cuda_* in cgrad.h).

Where cgrad differs from PyTorch, by design of its engine (each is said again
where it applies):

- One stream per device. Every op on a device runs on that device's stream, so
  Stream() / current_stream() / default_stream() all stand for that one stream
  and waiting between streams of one device is already implied. The engine
  does not expose CUDA events either: Event.record() notes where it was
  recorded, and Event.synchronize() / query() wait for the whole device
  (never too early, sometimes later than PyTorch would).
- One random generator: cgrad's Philox generator is shared by every device, so
  cuda.manual_seed(s) seeds the same generator as cgrad.manual_seed(s) (the
  CPU's too), and get_rng_state() returns its state.
- No pinned host memory: Tensor.pin_memory() returns an ordinary copy."""
from __future__ import annotations

import collections
import threading
import time
from typing import Any, Optional

from .. import _C
from . import amp

__all__ = [
    "amp", "is_available", "device_count", "is_initialized", "init", "current_device", "set_device", "device",
    "device_of", "synchronize", "get_device_name", "get_device_capability", "get_device_properties",
    "get_arch_list", "get_gencode_flags", "is_bf16_supported", "is_tf32_supported", "manual_seed",
    "manual_seed_all", "seed", "seed_all", "initial_seed", "get_rng_state", "set_rng_state", "get_rng_state_all",
    "set_rng_state_all", "empty_cache", "memory_allocated", "max_memory_allocated", "memory_reserved",
    "max_memory_reserved", "memory_cached", "memory_stats", "mem_get_info", "reset_peak_memory_stats",
    "reset_max_memory_allocated", "ipc_collect", "Stream", "Event", "current_stream", "default_stream", "stream",
    "set_stream", "StreamContext", "OutOfMemoryError",
]

_NOT_COMPILED = "Torch not compiled with CUDA enabled"

# A CUDA device ran out of memory (torch.cuda.OutOfMemoryError, which is torch.OutOfMemoryError): a
# RuntimeError, as in PyTorch; the engine's out-of-memory error on a cuda device is raised as it.
OutOfMemoryError = _C.OutOfMemoryError

_initialized = False
_init_lock = threading.Lock()


# ---------------------------------------------------------------- the state of CUDA here

def _is_built() -> bool:
    """Whether the kernel library was found and loaded (loading it on the first call)."""
    return bool(_C._cuda_is_built())


def _lazy_init() -> None:
    """What PyTorch's torch.cuda._lazy_init does: nothing once done; else AssertionError without the
    kernel library, RuntimeError with the engine's reason without a usable device."""
    global _initialized
    if _initialized:
        return
    with _init_lock:
        if not _is_built():
            raise AssertionError(_NOT_COMPILED)
        why = _C._cuda_unavailable_reason()
        if why is not None:
            raise RuntimeError(why)
        _initialized = True


def is_available() -> bool:
    """Whether a CUDA device can be used (the kernel library is there and found a GPU)."""
    return int(_C._cuda_device_count()) > 0


def device_count() -> int:
    """The number of usable CUDA devices (0 without the kernel library, a driver or a GPU)."""
    return int(_C._cuda_device_count())


def is_initialized() -> bool:
    """Whether cgrad.cuda's state is initialised (by a call that needed a device)."""
    return _initialized


def init() -> None:
    """Initialise CUDA (torch.cuda.init): raises where no device is usable, as every call needing one does."""
    _lazy_init()


def _get_device_index(device: Any, optional: bool = False, allow_cpu: bool = False) -> Any:
    """torch.cuda._utils._get_device_index: an int is itself; a cuda device or string its index; with
    optional, None or an index-less 'cuda' is the current device (None when no device is usable, as
    PyTorch's current-device lookup finds none); allow_cpu maps 'cpu' to -1."""
    if isinstance(device, bool):
        raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{device}")
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = _C.device(device)
    if isinstance(device, _C.device):
        if allow_cpu:
            if device.type not in ("cuda", "cpu"):
                raise ValueError(f"Expected a cuda or cpu device, but got: {device}")
            if device.type == "cpu":
                return -1
        elif device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        if device.index is not None:
            return device.index
    elif isinstance(device, globals()["device"]):
        return device.idx
    elif device is not None:
        raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{device}")
    if not optional:
        raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{device}")
    return int(_C._cuda_current_device()) if is_available() else None


def _index(device: Any) -> int:
    """The ordinal `device` names (None: the current device), once a device is known usable."""
    _lazy_init()
    idx = _get_device_index(device, optional=True)
    return int(_C._cuda_current_device()) if idx is None or idx < 0 else idx


# ---------------------------------------------------------------- the current device

def current_device() -> int:
    """The index of this thread's current CUDA device (0 unless set_device / device changed it)."""
    _lazy_init()
    return int(_C._cuda_current_device())


def set_device(device: Any) -> None:
    """Make `device` this thread's current CUDA device ('cuda' tensors and cuda calls without a device go
    there); a negative index does nothing. Without the kernel library: AttributeError, as PyTorch's CPU
    build."""
    idx = _get_device_index(device)
    if idx < 0:
        return
    if not _is_built():
        raise AttributeError("cgrad.cuda.set_device: this cgrad has no CUDA kernel library (Torch not compiled "
                             "with CUDA enabled)")
    _C._cuda_set_device(idx)


def _exchange_device(idx: Any) -> int:
    """Make idx current, returning the previous current device (-1 for a negative idx: nothing changes)."""
    if not _is_built():
        if idx < 0:  # PyTorch's CPU build: None < 0 is the TypeError it raises
            return -1
        raise RuntimeError("PyTorch was compiled without CUDA support")
    if not isinstance(idx, int) or isinstance(idx, bool):
        raise RuntimeError("invalid argument to exchangeDevice")
    if idx < 0:
        return -1
    _lazy_init()
    prev = int(_C._cuda_current_device())
    if prev != idx:
        _C._cuda_set_device(idx)
    return prev


def _maybe_exchange_device(idx: int) -> int:
    if idx < 0:
        return -1
    prev = int(_C._cuda_current_device())
    if prev != idx:
        _C._cuda_set_device(idx)
    return prev


class device:
    """Context manager making a CUDA device current (torch.cuda.device); a negative index or None does
    nothing (None: the current device)."""

    def __init__(self, device: Any) -> None:
        self.idx = _get_device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self) -> None:
        self.prev_idx = _exchange_device(self.idx)

    def __exit__(self, *exc: Any) -> bool:
        self.idx = _maybe_exchange_device(self.prev_idx)
        return False


class device_of(device):
    """Context manager making the device of a tensor current; a no-op for a tensor not on a GPU."""

    def __init__(self, obj: Any) -> None:
        idx = obj.get_device() if obj.is_cuda else -1
        super().__init__(idx)


def synchronize(device: Any = None) -> None:
    """Wait for all work on a CUDA device (None: the current one); an asynchronous error of that work
    (a failed kernel) is raised here as RuntimeError naming it."""
    _C._cuda_synchronize(_index(device))


# ---------------------------------------------------------------- device properties

class _CudaDeviceProperties:
    """What cgrad knows of a CUDA device (torch.cuda.get_device_properties): name, compute capability
    (major, minor), multi_processor_count and total_memory (bytes)."""

    __slots__ = ("name", "major", "minor", "multi_processor_count", "total_memory")

    def __init__(self, name: str, major: int, minor: int, multi_processor_count: int, total_memory: int) -> None:
        self.name = name
        self.major = major
        self.minor = minor
        self.multi_processor_count = multi_processor_count
        self.total_memory = total_memory

    def __repr__(self) -> str:
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_properties(device: Any = None) -> _CudaDeviceProperties:
    """The properties of a CUDA device (None: the current one)."""
    _lazy_init()
    idx = _get_device_index(device, optional=True)
    if idx is None or idx < 0 or idx >= device_count():
        raise AssertionError("Invalid device id")
    return _CudaDeviceProperties(**_C._cuda_properties(idx))


def get_device_name(device: Any = None) -> str:
    """The name of a CUDA device (None: the current one)."""
    return get_device_properties(device).name


def get_device_capability(device: Any = None) -> tuple:
    """The compute capability (major, minor) of a CUDA device (None: the current one)."""
    p = get_device_properties(device)
    return (p.major, p.minor)


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether the current CUDA device computes in bfloat16: compute capability 8.0 or later, or (with
    including_emulation) any device a bfloat16 tensor can be made on; False without a device."""
    if not is_available():
        return False
    idx = current_device()
    if get_device_properties(idx).major >= 8:
        return True
    if not including_emulation:
        return False
    try:
        _C.tensor([1.0], dtype=_C.bfloat16, device=_C.device("cuda", idx))
        return True
    except Exception:
        return False


def is_tf32_supported() -> bool:
    """Whether the current CUDA device has TF32 (the devices with native bfloat16); False without one."""
    return is_bf16_supported(including_emulation=False)


def get_arch_list() -> list[str]:
    """The CUDA architectures the kernels were compiled for, as far as this cgrad knows them: none is
    recorded where Python can read it (meson's gpu_sm option names it), so [] always."""
    return []


def get_gencode_flags() -> str:
    """The NVCC gencode flags of get_arch_list(): ""."""
    return ""


# ---------------------------------------------------------------- random numbers (one shared generator)

def _check_seed(seed: Any) -> int:
    return int(seed)  # PyTorch's check: int(seed) (ValueError / TypeError for a non-number)


def manual_seed(seed: int) -> None:
    """Seed the CUDA generator. cgrad has one generator for every device (Philox, counter-based): with a
    usable GPU this seeds it, the CPU's random numbers included, as cgrad.manual_seed(seed); without one it
    is accepted and does nothing (PyTorch's CPU build)."""
    s = _check_seed(seed)
    if is_available():
        _C.manual_seed(s)


def manual_seed_all(seed: int) -> None:
    """Seed every CUDA device's generator: the one shared generator (manual_seed)."""
    manual_seed(seed)


def seed() -> None:
    """Seed the CUDA generator with a random number: the shared generator, with a usable GPU (see
    manual_seed); otherwise nothing."""
    if is_available():
        _C.seed()


def seed_all() -> None:
    """seed() (one generator serves every device)."""
    seed()


def initial_seed() -> int:
    """The seed of the (shared) generator."""
    _lazy_init()
    return int(_C.initial_seed())


def get_rng_state(device: Any = "cuda") -> Any:
    """The state of the shared generator (a uint8 CPU tensor, cgrad.get_rng_state()'s)."""
    _lazy_init()
    return _C.get_rng_state()


def set_rng_state(new_state: Any, device: Any = "cuda") -> None:
    """Set the state of the shared generator (cgrad.set_rng_state)."""
    _lazy_init()
    _C.set_rng_state(new_state)


def get_rng_state_all() -> list:
    """The generator state of every CUDA device (each the shared generator's)."""
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states: Any) -> None:
    """Set the generator state of every CUDA device: the shared generator takes the last state given."""
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


# ---------------------------------------------------------------- memory (each device's caching pool)

def _stats_device(device: Any) -> Optional[str]:
    """'cuda:N' for the device a memory statistic is asked of; None when no device is usable (PyTorch's
    statistics are then empty: CUDA is not initialised)."""
    if not is_available():  # PyTorch looks at the argument only once CUDA is initialised
        return None
    return f"cuda:{_index(device)}"


def memory_stats(device: Any = None) -> "collections.OrderedDict[str, Any]":
    """The caching allocator's statistics for a CUDA device (None: the current one), under
    torch.cuda.memory_stats's keys where the engine counts the same thing (cgrad.memory.stats); empty
    without a usable device. The engine keeps no statistics of split blocks, retries or OOMs."""
    dev = _stats_device(device)
    if dev is None:
        return collections.OrderedDict()
    from .. import memory
    return collections.OrderedDict(sorted(memory.stats(dev).items()))


def memory_allocated(device: Any = None) -> int:
    """Bytes held by tensors on a CUDA device (None: the current one); 0 without a device."""
    return int(memory_stats(device).get("allocated_bytes.all.current", 0))


def max_memory_allocated(device: Any = None) -> int:
    """The peak of memory_allocated() since the start or reset_peak_memory_stats()."""
    return int(memory_stats(device).get("allocated_bytes.all.peak", 0))


def memory_reserved(device: Any = None) -> int:
    """Bytes the caching allocator holds on a CUDA device: in use plus cached for reuse."""
    return int(memory_stats(device).get("reserved_bytes.all.current", 0))


def max_memory_reserved(device: Any = None) -> int:
    """A lower bound of the peak of memory_reserved(): the engine keeps no peak of reserved bytes, so
    this is the larger of memory_reserved() and max_memory_allocated() (which the reserved bytes
    covered at their own peak)."""
    s = memory_stats(device)
    return int(max(s.get("reserved_bytes.all.current", 0), s.get("allocated_bytes.all.peak", 0)))


def memory_cached(device: Any = None) -> int:
    """Deprecated PyTorch spelling of memory_reserved."""
    return memory_reserved(device)


def reset_peak_memory_stats(device: Any = None) -> None:
    """Restart the peaks of a CUDA device's allocator (None: the current device) from the current values.
    Without the kernel library: AttributeError, as PyTorch's CPU build; without a device, RuntimeError."""
    if not _is_built():
        raise AttributeError("cgrad.cuda.reset_peak_memory_stats: this cgrad has no CUDA kernel library")
    _C._memory_reset_peak(f"cuda:{_index(device)}")


reset_max_memory_allocated = reset_peak_memory_stats


def empty_cache() -> None:
    """Give every CUDA device's cached free blocks back to the driver (nothing to do without a device)."""
    for i in range(device_count()):
        _C._memory_empty_cache(f"cuda:{i}")


def mem_get_info(device: Any = None) -> tuple:
    """(free, total) bytes of a CUDA device's memory, as the driver reports them (None: the current one)."""
    if not _is_built():
        raise AssertionError(_NOT_COMPILED)
    return tuple(_C._cuda_mem_info(_index(device)))


def ipc_collect() -> None:
    """Free memory held for other processes through CUDA IPC: cgrad shares no CUDA memory between
    processes, so there is none."""
    _lazy_init()


# ---------------------------------------------------------------- streams and events

def _device_obj(idx: int) -> Any:
    return _C.device("cuda", idx)


class Stream:
    """A CUDA stream (torch.cuda.Stream). cgrad runs all the work of a device on one stream of the
    engine's, so every Stream of a device stands for that stream: synchronize() waits for it, work
    'submitted to' a Stream runs on it, and waiting for another stream of the same device is already
    implied by the order of that one stream. priority is accepted and has no effect."""

    def __init__(self, device: Any = None, priority: int = 0, **kwargs: Any) -> None:
        if not _is_built():
            raise RuntimeError("torch.cuda.Stream requires CUDA support")
        self.device_index = _index(device)
        self.priority = int(priority)

    @property
    def device(self) -> Any:
        return _device_obj(self.device_index)

    @property
    def device_type(self) -> int:
        return 1  # PyTorch's DeviceType::CUDA

    @property
    def cuda_stream(self) -> int:
        """0: the engine does not expose its stream's handle."""
        return 0

    def query(self) -> bool:
        """Whether the stream's work is done: the engine cannot poll its stream, so this waits for it
        and returns True."""
        self.synchronize()
        return True

    def synchronize(self) -> None:
        """Wait for the work on the stream (all the device's work)."""
        _C._cuda_synchronize(self.device_index)

    def wait_event(self, event: "Event") -> None:
        """Make later work wait for `event`: on this device it already does (one stream); an event of
        another device is waited for here, on the host."""
        event.wait(self)

    def wait_stream(self, stream: "Stream") -> None:
        """Make later work wait for `stream`'s work so far: implied on the same device; another device's
        stream is waited for here, on the host."""
        if stream.device_index != self.device_index:
            stream.synchronize()

    def record_event(self, event: Optional["Event"] = None) -> "Event":
        """Record an event (a new one when None) on this stream and return it."""
        event = Event() if event is None else event
        event.record(self)
        return event

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and other.device_index == self.device_index

    def __hash__(self) -> int:
        return hash(("cuda-stream", self.device_index))

    def __repr__(self) -> str:
        return f"<cgrad.cuda.Stream device=cuda:{self.device_index} (the device's one stream)>"


class Event:
    """A CUDA event (torch.cuda.Event). The engine exposes no CUDA events, so an Event remembers the
    device it was recorded on: synchronize() and query() wait for all of that device's work (work
    enqueued after record() too: never too early), and with enable_timing=True record() waits for the
    device and takes the host's clock, which elapsed_time() subtracts (milliseconds, host-measured: it
    includes launch gaps PyTorch's device timestamps do not). blocking and interprocess are accepted."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False) -> None:
        if not _is_built():
            raise RuntimeError("Tried to instantiate dummy base class Event")
        if interprocess:
            raise NotImplementedError("cgrad.cuda.Event(interprocess=True): cgrad shares no CUDA objects between "
                                      "processes")
        self.enable_timing = bool(enable_timing)
        self.blocking = bool(blocking)
        self.device_index: Optional[int] = None
        self._time: Optional[float] = None

    @property
    def device(self) -> Any:
        return None if self.device_index is None else _device_obj(self.device_index)

    def record(self, stream: Optional[Stream] = None) -> None:
        """Record the event on `stream` (None: the current stream of the current device)."""
        stream = current_stream() if stream is None else stream
        self.device_index = stream.device_index
        if self.enable_timing:
            _C._cuda_synchronize(self.device_index)
            self._time = time.perf_counter()

    def wait(self, stream: Optional[Stream] = None) -> None:
        """Make later work on `stream` wait for this event: implied on the event's own device; for another
        device's stream the event is waited for here."""
        if self.device_index is None:
            return
        target = current_stream() if stream is None else stream
        if target.device_index != self.device_index:
            self.synchronize()

    def query(self) -> bool:
        """Whether the work before the event is done: waits for the device (see the class) and returns
        True; True for an event never recorded, as in PyTorch."""
        self.synchronize()
        return True

    def synchronize(self) -> None:
        """Wait for the work recorded before the event (all of its device's work)."""
        if self.device_index is not None:
            _C._cuda_synchronize(self.device_index)

    def elapsed_time(self, end_event: "Event") -> float:
        """Milliseconds from this event to end_event, both recorded with enable_timing=True (measured on
        the host once the device was done, see the class)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self._time is None or end_event._time is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return (end_event._time - self._time) * 1000.0

    def ipc_handle(self) -> Any:
        raise NotImplementedError("cgrad.cuda.Event.ipc_handle: cgrad shares no CUDA objects between processes")

    def __repr__(self) -> str:
        where = "not recorded" if self.device_index is None else f"cuda:{self.device_index}"
        return f"<cgrad.cuda.Event {where}>"


def current_stream(device: Any = None) -> Stream:
    """The current stream of a CUDA device (None: the current device): its one stream."""
    if not _is_built():
        raise AssertionError(_NOT_COMPILED)
    return Stream(_index(device))


def default_stream(device: Any = None) -> Stream:
    """The default stream of a CUDA device: its one stream (current_stream())."""
    if not _is_built():
        raise AssertionError(_NOT_COMPILED)
    return Stream(_index(device))


def set_stream(stream: Optional[Stream]) -> None:
    """Make `stream` current: as every device has one stream, this makes its device current."""
    if stream is None:
        return
    if not _is_built():
        raise AssertionError(_NOT_COMPILED)
    _lazy_init()
    _C._cuda_set_device(stream.device_index)


class StreamContext:
    """Context manager selecting a stream (torch.cuda.StreamContext); None does nothing. With one stream
    per device, selecting a stream selects its device, restored on exit."""

    def __init__(self, stream: Optional[Stream]) -> None:
        self.stream = stream
        self.prev_idx = -1

    def __enter__(self) -> None:
        if self.stream is None:
            return
        self.prev_idx = _exchange_device(self.stream.device_index)

    def __exit__(self, *exc: Any) -> bool:
        if self.stream is not None:
            _maybe_exchange_device(self.prev_idx)
        return False


def stream(stream: Optional[Stream]) -> StreamContext:
    """Context manager selecting a stream; with None it does nothing (torch.cuda.stream)."""
    if stream is not None and not _is_built():
        raise AssertionError(_NOT_COMPILED)
    return StreamContext(stream)

