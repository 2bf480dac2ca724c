"""Shared-memory storages: Tensor.share_memory_ / is_shared and the segments behind them.

A segment is a shared mapping of `nbytes` bytes. Under the 'file_descriptor'
strategy (the default) it is an anonymous memfd, passed to other processes
as a file descriptor (the sending process must live until the receiver has
taken it: multiprocessing fetches it from the sender). Under 'file_system' it
is a file in /dev/shm: each send makes a new hard link to it and passes that
name, and every process removes its own name when its mapping goes, so the
memory lives while any process maps it; a link sent but never received stays
in /dev/shm. share_memory_ moves a tensor's
storage into a new segment in place (Tensor._move_storage_to): every view
of the storage then reads and writes the segment, and the old memory is
freed. The segments of this process are found by their mapping's address
(the storage's first byte), held weakly: a segment lives as long as the
storage that uses it."""
from __future__ import annotations

import mmap
import multiprocessing.util
import os
import secrets
import threading
import weakref
from typing import Any, Dict, Optional, Tuple

from .. import _C

STRATEGIES = ("file_descriptor", "file_system")
_strategy = "file_descriptor"
_SHM_DIR = "/dev/shm"


def set_sharing_strategy(new_strategy: str) -> None:
    """torch.multiprocessing.set_sharing_strategy."""
    global _strategy
    if new_strategy not in STRATEGIES:
        raise AssertionError(f"cgrad.multiprocessing.set_sharing_strategy: unknown strategy {new_strategy!r}; "
                             f"the strategies are {sorted(STRATEGIES)}")
    _strategy = new_strategy


def get_sharing_strategy() -> str:
    """torch.multiprocessing.get_sharing_strategy."""
    return _strategy


def get_all_sharing_strategies() -> set:
    """torch.multiprocessing.get_all_sharing_strategies."""
    return set(STRATEGIES)


class Segment:
    """One shared mapping of this process: where it starts, its size, and the fd or file name other
    processes open it by. It holds its mmap weakly: the storage's buffer export keeps the mmap alive,
    and the segment is dropped when the mmap goes."""
    __slots__ = ("_map", "address", "nbytes", "strategy", "fd", "name")

    def __init__(self, m: mmap.mmap, nbytes: int, strategy: str, fd: int = -1, name: Optional[str] = None) -> None:
        self._map = weakref.ref(m)
        self.address = int(_C.frombuffer(m, dtype=_C.uint8, count=1).data_ptr())  # type: ignore[attr-defined]
        self.nbytes = nbytes
        self.strategy = strategy
        self.fd = fd
        self.name = name


# address of a segment's first byte -> the segment, while its mapping lives
_segments: Dict[int, Segment] = {}
_lock = threading.Lock()


def _close(fd: int, name: Optional[str], address: int) -> None:
    if fd >= 0:
        try:
            os.close(fd)
        except OSError:
            pass
    if name is not None:
        try:
            os.unlink(name)
        except OSError:
            pass
    with _lock:
        _segments.pop(address, None)


def _register(m: mmap.mmap, seg: Segment) -> Tuple[Segment, mmap.mmap]:
    with _lock:
        _segments[seg.address] = seg
    # the fd closes, and this process's name of the file goes, with the mapping, or at exit (also in
    # multiprocessing's children, which leave through os._exit: util.Finalize runs there too)
    multiprocessing.util.Finalize(m, _close, args=(seg.fd, seg.name, seg.address), exitpriority=0)
    return seg, m


def new_segment(nbytes: int, strategy: Optional[str] = None) -> Tuple[Segment, mmap.mmap]:
    """A new shared mapping of nbytes (at least 1) bytes, and its mmap (hold it: the segment does not)."""
    strategy = strategy or _strategy
    size = max(int(nbytes), 1)
    if strategy == "file_descriptor":
        fd = os.memfd_create("cgrad-shared-tensor", os.MFD_CLOEXEC)
        name = None
    else:
        for _ in range(100):
            name = os.path.join(_SHM_DIR, f"cgrad_{os.getpid()}_{secrets.token_hex(8)}")
            try:
                fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
                break
            except FileExistsError:
                continue
        else:
            raise FileExistsError(f"cgrad.multiprocessing: no free shared-memory name in {_SHM_DIR}")
    try:
        os.ftruncate(fd, size)
        m = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    except OSError as e:
        os.close(fd)
        if name is not None:
            os.unlink(name)
        if e.errno in (12, 28):  # ENOMEM, ENOSPC: /dev/shm is full
            raise MemoryError(f"cgrad.multiprocessing: cannot allocate {size} bytes of shared memory ({e.strerror})")
        raise
    if strategy == "file_system":  # the name is the handle: the fd is not needed once mapped
        os.close(fd)
        fd = -1
    return _register(m, Segment(m, size, strategy, fd, name))


def link_for_sending(seg: Segment) -> str:
    """file_system: a new name (hard link) of the segment's file, for one receiver to own."""
    if seg.name is None:
        raise RuntimeError("cgrad.multiprocessing: this tensor's shared memory has no file to send")
    for _ in range(100):
        link = f"{seg.name}-{secrets.token_hex(4)}"
        try:
            os.link(seg.name, link)
            return link
        except FileExistsError:
            continue
    raise FileExistsError(f"cgrad.multiprocessing: no free shared-memory name beside {seg.name}")


def open_segment(strategy: str, handle: Any, nbytes: int) -> Tuple[Segment, mmap.mmap]:
    """Map a segment another process sent: an fd (ours to keep) or a file name."""
    if strategy == "file_descriptor":
        fd = int(handle)
        name = None
    elif strategy == "file_system":
        name = str(handle)
        if not name.startswith(_SHM_DIR + "/cgrad_"):
            raise ValueError(f"cgrad.multiprocessing: {name!r} is not a cgrad shared-memory file")
        try:
            fd = os.open(name, os.O_RDWR | os.O_CLOEXEC)
        except FileNotFoundError:
            raise RuntimeError(f"cgrad.multiprocessing: the shared memory {name} is gone: the process that sent "
                               "the tensor dropped it before it was received (keep the sent tensor alive, or use "
                               "the 'file_descriptor' strategy)") from None
    else:
        raise ValueError(f"cgrad.multiprocessing: unknown sharing strategy {strategy!r}")
    size = max(int(nbytes), 1)
    try:
        if os.fstat(fd).st_size < size:
            raise RuntimeError(f"cgrad.multiprocessing: the shared memory holds {os.fstat(fd).st_size} bytes, "
                               f"fewer than the {size} sent")
        m = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    except BaseException:
        os.close(fd)
        raise
    if name is not None:
        os.close(fd)
        fd = -1
    # a received name is the receiver's own link (link_for_sending): it goes with the receiver's mapping
    return _register(m, Segment(m, size, strategy, fd, name))


def segment_of(t: Any) -> Optional[Segment]:
    """The segment t's storage lives in, if it is in shared memory."""
    _, nbytes = t._storage_key()
    base = t.data_ptr() - t.storage_offset() * t.element_size()
    if not base:
        return None
    with _lock:
        seg = _segments.get(base)
    return seg if seg is not None and seg.nbytes >= nbytes else None


def share_memory_(t: Any) -> Any:
    """Tensor.share_memory_: move t's storage into shared memory, in place (a no-op when it is there)."""
    if t.device.type != "cpu":
        raise RuntimeError(f"share_memory_: only available on CPU, and the tensor is on {t.device}")
    if segment_of(t) is not None:
        return t
    _, nbytes = t._storage_key()
    _, m = new_segment(nbytes)  # at least one byte, so an empty storage too has a segment
    t._move_storage_to(m)
    return t


def is_shared(t: Any) -> bool:
    """Tensor.is_shared."""
    if t.device.type != "cpu":
        return False
    return segment_of(t) is not None


def empty_shared(shape: Tuple[int, ...], dtype: Any) -> Any:
    """A new tensor whose storage is a new segment (DataLoader workers collate into one)."""
    numel = 1
    for s in shape:
        numel *= int(s)
    size = _C.empty(0, dtype=dtype).element_size()
    if numel == 0:
        return _C.empty(tuple(shape), dtype=dtype)
    _, m = new_segment(numel * size)
    return tensor_over(m, dtype, numel).view(tuple(shape))


def tensor_over(m: mmap.mmap, dtype: Any, numel: int) -> Any:
    """A flat tensor of numel dtype elements at the start of a segment's mapping."""
    return _C.frombuffer(m, dtype=dtype, count=numel)  # type: ignore[attr-defined]
