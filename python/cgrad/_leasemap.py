"""File mappings that survive the file being truncated or rewritten, for
cgrad.load(..., mmap=True) (Linux).

Note [Leased mappings]
A tensor over an mmap of a file shows whatever the file's pages hold: when
another process rewrites the file in place the tensor changes, and when it
truncates the file every access beyond the new end raises SIGBUS, which kills
the process (a MAP_PRIVATE mapping does not help: truncation drops its private
copies too). Nothing can catch that SIGBUS from Python, so we make sure the
file cannot change while it is mapped:

- Before mapping, the loader takes a read lease on the file (fcntl
  F_SETLEASE F_RDLCK on a read-only descriptor). From then on the kernel
  makes every open of the file for writing and every truncate(2) wait, and
  first sends the lease holder a signal. (The lease is refused while the file
  is open for writing somewhere, by a non-owner without CAP_LEASE, and on file
  systems without leases: map_file says why and the caller reads the file
  instead.)
- The signal (SIGURG, set with F_SETSIG) is directed at one watcher thread
  (F_SETOWN_EX with its thread id), which keeps it blocked and takes it with
  sigtimedwait, so no other thread and no handler of the application sees it.
- The watcher copies each mapping of that file into anonymous memory at the
  same address (mmap an anonymous block, memmove, mremap MREMAP_FIXED over
  the old range: one atomic switch of the page tables, so the tensors' data
  pointers stay valid and writes already made to the private mapping are
  kept), then releases the lease; the writer proceeds, and the tensors hold
  the data they were loaded with.
- A rename over the file (what cgrad.save does) or an unlink does not touch
  the mapped inode and breaks no lease: the mapping just keeps the old file.

Limits: the kernel waits /proc/sys/fs/lease-break-time seconds (45 by
default) for the watcher, then removes the lease and lets the writer go on;
if the watcher could not run in that time (another thread holding the GIL
throughout), the copy is made from what the file then holds. A write to the
tensors made by another thread during the copy itself may be lost. After a
fork, the child takes its own leases (or copies at once when it cannot)."""
from __future__ import annotations

import ctypes
import errno
import fcntl
import functools
import mmap
import os
import signal
import struct
import sys
import threading
import warnings
import weakref
from typing import Dict, Optional, Tuple, Union

_SIG = signal.SIGURG  # ignored by default: a stray delivery could not kill the process
_F_SETOWN_EX = 15  # <linux/fcntl.h>; struct f_owner_ex {int type; pid_t pid;}
_F_OWNER_TID = 0
_MREMAP_MAYMOVE, _MREMAP_FIXED = 1, 2
_POLL_S = 2.0  # the watcher also looks at every lease this often (a safety net; breaks arrive as signals)

_SUPPORTED = sys.platform.startswith("linux") and hasattr(fcntl, "F_SETLEASE") and hasattr(signal, "sigtimedwait")

_libc: Optional[ctypes.CDLL] = None
_MAP_FAILED = ctypes.c_void_p(-1).value


def _c() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        lib = ctypes.CDLL(None, use_errno=True)
        lib.mmap.restype = ctypes.c_void_p
        lib.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
        lib.mremap.restype = ctypes.c_void_p
        lib.mremap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]
        lib.munmap.restype = ctypes.c_int
        lib.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        _libc = lib
    return _libc


class _Entry:
    """One leased descriptor and the mapping made from it."""
    __slots__ = ("fd", "ref", "addr", "size", "length", "dead", "__weakref__")

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.ref: Optional[weakref.ref] = None  # to the mmap object, once mapped
        self.addr = 0
        self.size = 0
        self.length = 0  # the mapping's length in whole pages
        self.dead = False  # the mapping is gone; the watcher closes the descriptor


_lock = threading.RLock()  # guards _entries and the watcher; held while a mapping is being set up
_entries: Dict[int, _Entry] = {}  # fd -> entry; only the watcher closes these descriptors
_watcher: Optional[threading.Thread] = None
_ready = threading.Event()


# ---------------------------------------------------------------- the watcher

def _ensure_watcher() -> int:
    """Start the watcher thread if needed; its kernel thread id."""
    global _watcher, _ready
    if _watcher is None or not _watcher.is_alive():
        _ready = threading.Event()
        _watcher = threading.Thread(target=_watch, args=(_ready,), name="cgrad-lease-watcher", daemon=True)
        _watcher.start()
    _ready.wait()
    tid = _watcher.native_id
    assert tid is not None
    return tid


def _watch(ready: threading.Event) -> None:
    signal.pthread_sigmask(signal.SIG_BLOCK, {_SIG})  # before anyone directs the signal here
    ready.set()
    global _watcher
    while True:
        signal.sigtimedwait({_SIG}, _POLL_S)
        try:
            _service()
        except Exception as e:  # noqa: BLE001 - the watcher must keep running
            warnings.warn(f"cgrad: the checkpoint lease watcher failed: {e!r}", RuntimeWarning)
        with _lock:
            if not _entries and _watcher is threading.current_thread():
                _watcher = None  # nothing left to watch; map_file starts a new one
                return


def _service() -> None:
    """Copy out the mappings whose lease is being broken; close the descriptors of dead ones."""
    with _lock:
        for fd, e in list(_entries.items()):
            if _entries.get(fd) is not e:
                continue
            if e.dead:
                _drop(e)
                continue
            try:
                breaking = fcntl.fcntl(fd, fcntl.F_GETLEASE) == fcntl.F_UNLCK
            except OSError:
                breaking = True
            if breaking:
                _detach(e)


def _drop(e: _Entry) -> None:
    _entries.pop(e.fd, None)
    try:
        fcntl.fcntl(e.fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
    except OSError:
        pass
    os.close(e.fd)


def _copy_to_anonymous(addr: int, size: int, length: int, fd: int) -> Optional[str]:
    """Replace the mapping [addr, addr + length) by anonymous memory holding the same bytes."""
    lib = _c()
    try:
        avail = max(0, min(size, os.fstat(fd).st_size))  # less only if the kernel gave up waiting (see Note)
    except OSError:
        avail = size
    new = lib.mmap(None, length, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
    if new is None or new == _MAP_FAILED:
        return os.strerror(ctypes.get_errno())
    ctypes.memmove(new, addr, avail)
    r = lib.mremap(new, length, length, _MREMAP_MAYMOVE | _MREMAP_FIXED, addr)
    if r is None or r == _MAP_FAILED:
        err = ctypes.get_errno()
        lib.munmap(new, length)
        return os.strerror(err)
    return None if avail == size else f"the file had already shrunk to {avail} of {size} bytes"


def _detach(e: _Entry) -> None:
    m = e.ref() if e.ref is not None else None  # keeps the mapping alive while it is copied
    if m is not None:
        problem = _copy_to_anonymous(e.addr, e.size, e.length, e.fd)
        if problem is not None:
            warnings.warn(f"cgrad: a checkpoint mapped with mmap=True could not be copied out before its file "
                          f"changed ({problem}); its tensors may not hold the loaded data", RuntimeWarning)
    _drop(e)
    del m


def _gone(e: _Entry, _ref: object) -> None:
    """The mapping died (its last tensor went): let the watcher close the descriptor."""
    e.dead = True
    with _lock:  # the watcher exits only under the lock: a thread named here is alive
        w = _watcher
        if w is not None and w.ident is not None and w.is_alive():
            try:
                signal.pthread_kill(w.ident, _SIG)
            except (OSError, ValueError):
                pass


# ---------------------------------------------------------------- taking a lease and mapping

def _lease(fd: int, tid: int) -> Optional[str]:
    """Take a read lease on fd, its break signalled to thread tid; None, or why it was refused."""
    try:
        fcntl.fcntl(fd, _F_SETOWN_EX, struct.pack("ii", _F_OWNER_TID, tid))
        fcntl.fcntl(fd, fcntl.F_SETSIG, _SIG)
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
    except OSError as e:
        code = e.errno or 0
        why = {errno.EAGAIN: "the file is open for writing", errno.EACCES: "the file is not owned by this user",
               errno.EPERM: "the file is not owned by this user", errno.EINVAL: "the file system has no leases",
               errno.ENOSYS: "the kernel has no leases"}.get(code, os.strerror(code))
        return f"no read lease on the file ({why})"
    return None


def map_file(fd: int) -> Union[Tuple[mmap.mmap, int], str]:
    """Map the regular file open read-only on fd (private, copy-on-write) under a read lease,
    so that the mapping keeps its bytes whatever later happens to the file (Note [Leased
    mappings]). Returns (mapping, size), or a string saying why the file cannot be protected
    (then nothing is mapped and no lease is held). fd stays the caller's to close: the module
    keeps a duplicate (the same open file description, which is what the lease belongs to)."""
    if not _SUPPORTED:
        return "file leases are Linux-only"
    with _lock:
        leased = os.dup(fd)
        why = _lease(leased, _ensure_watcher())
        if why is not None:
            os.close(leased)
            return why
        size = os.fstat(leased).st_size  # stable from here on
        try:
            if size == 0:
                raise ValueError("the file is empty")
            m = mmap.mmap(leased, size, access=mmap.ACCESS_COPY)
        except (OSError, ValueError) as e:
            _unlease_close(leased)
            return f"it cannot be mapped ({e})"
        _register(leased, m, size)
    return m, size


def _register(fd: int, m: mmap.mmap, size: int) -> None:
    e = _Entry(fd)
    e.addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
    e.size = size
    e.length = -(-size // mmap.PAGESIZE) * mmap.PAGESIZE
    e.ref = weakref.ref(m, functools.partial(_gone, e))
    _entries[fd] = e


def _unlease_close(fd: int) -> None:
    try:
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
    except OSError:
        pass
    os.close(fd)


def leased_mappings() -> int:
    """How many live mappings are protected by a lease (for tests)."""
    with _lock:
        return sum(1 for e in _entries.values() if not e.dead and e.ref is not None and e.ref() is not None)


# ---------------------------------------------------------------- fork

def _before_fork() -> None:
    _lock.acquire()


def _after_fork_parent() -> None:
    _lock.release()


def _after_fork_child() -> None:
    """The child inherits the mappings but not the watcher, and the leases it inherits are the
    parent's (they belong to the shared open file descriptions): take its own, or copy at once."""
    global _lock, _watcher, _entries
    _lock = threading.RLock()
    _watcher = None
    old, _entries = _entries, {}
    pending = []
    for e in old.values():
        m = e.ref() if not e.dead and e.ref is not None else None
        if m is not None:
            try:  # a new open file description of the same inode (even if it was unlinked since)
                fd = os.open(f"/proc/self/fd/{e.fd}", os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                fd = -1
            pending.append((e, m, fd))
    if pending:
        with _lock:
            tid = _ensure_watcher()
            for e, m, fd in pending:
                if fd >= 0 and _lease(fd, tid) is None:
                    _register(fd, m, e.size)
                    continue
                if fd >= 0:
                    os.close(fd)
                _copy_to_anonymous(e.addr, e.size, e.length, e.fd)  # the parent's lease still holds the file
    for e in old.values():
        os.close(e.fd)  # the child's copies; the parent keeps its leases


if _SUPPORTED:
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_parent, after_in_child=_after_fork_child)
