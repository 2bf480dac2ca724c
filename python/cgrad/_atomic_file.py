"""Atomic file replacement for checkpoints (cgrad.save, cgrad.utils.safetensors).

save_path writes the data to a new file in the same directory (unnamed while
it is written, O_TMPFILE, where the file system allows), flushes it to disk
(fsync) and renames it over the old one. A crash at any moment leaves either
the old file or the new one, never a mix; a process that has the old file open
or mapped keeps the old data. The new file keeps the old one's permission bits
(and owner, where allowed); a symlink is followed and its target replaced. A
path naming a device or a pipe is written in place."""
from __future__ import annotations

import errno
import os
import secrets
import stat as _stat
from typing import Any, Callable, Optional, Tuple


def _temp_name(directory: str, base: str) -> str:
    return os.path.join(directory, f".{base}.{secrets.token_hex(6)}.tmp")


def _new_temp(directory: str, base: str, who: str) -> Tuple[int, Optional[str]]:
    """A new file to write the checkpoint into: (fd, None) for an unnamed O_TMPFILE file,
    else (fd, its temporary name)."""
    tmpfile = getattr(os, "O_TMPFILE", 0)
    if tmpfile:
        try:
            return os.open(directory, tmpfile | os.O_WRONLY | os.O_CLOEXEC, 0o666), None
        except OSError as e:
            if e.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT):
                raise _temp_error(directory, e, who) from None
    return _new_temp_named(directory, base, who)


def _new_temp_named(directory: str, base: str, who: str) -> Tuple[int, str]:
    for _ in range(100):
        name = _temp_name(directory, base)
        try:
            return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666), name
        except FileExistsError:
            continue
        except OSError as e:
            raise _temp_error(directory, e, who) from None
    raise FileExistsError(f"{who}: no free temporary name in {directory!r}")


def _temp_error(directory: str, e: OSError, who: str) -> OSError:
    return type(e)(e.errno, f"{who}: cannot create a new file in {directory!r} to replace the checkpoint "
                            f"atomically ({e.strerror})")


def _link_temp(fd: int, directory: str, base: str) -> Optional[str]:
    """Give the unnamed file on fd a temporary name (for the rename); None if that fails."""
    for _ in range(100):
        name = _temp_name(directory, base)
        try:
            os.link(f"/proc/self/fd/{fd}", name, follow_symlinks=True)
            return name
        except FileExistsError:
            continue
        except OSError:
            return None
    return None


def _write_file(fd: int, write: Callable[[Any], None], old: Optional[os.stat_result]) -> None:
    with open(fd, "wb", closefd=False) as fh:
        write(fh)
    if old is not None:
        try:
            os.fchown(fd, old.st_uid, old.st_gid)
        except OSError:
            pass
        os.fchmod(fd, _stat.S_IMODE(old.st_mode))
    os.fsync(fd)  # the data is on disk before the name points at it


def save_path(path: str, write: Callable[[Any], None], who: str) -> None:
    """Write a file at path through write(fh) atomically (see the module docstring); who names the
    caller in error messages."""
    target = os.path.realpath(path)  # a symlink keeps pointing at the (new) checkpoint
    try:
        old: Optional[os.stat_result] = os.stat(target)
    except FileNotFoundError:
        old = None
    if old is not None and _stat.S_ISDIR(old.st_mode):
        raise IsADirectoryError(errno.EISDIR, f"{who}: {path!r} is a directory")
    if old is not None and _stat.S_ISREG(old.st_mode) and not os.access(target, os.W_OK):
        # a rename would replace it anyway; refuse as writing it in place would
        raise PermissionError(errno.EACCES, f"{who}: {path!r} is not writable")
    if old is not None and not _stat.S_ISREG(old.st_mode):
        with open(target, "wb") as fh:  # /dev/null, a pipe: nothing to rename over
            write(fh)
        return
    directory, base = os.path.split(target)
    fd, name = _new_temp(directory, base, who)
    try:
        _write_file(fd, write, old)
        if name is None:
            name = _link_temp(fd, directory, base)
            if name is None:  # no /proc: write a named copy instead
                os.close(fd)
                fd = -1
                fd, name = _new_temp_named(directory, base, who)
                _write_file(fd, write, old)
        os.replace(name, target)
        name = None
    finally:
        if fd >= 0:
            os.close(fd)
        if name is not None:
            try:
                os.unlink(name)
            except OSError:
                pass
    _fsync_dir(directory)


def _fsync_dir(directory: str) -> None:
    """Make the rename itself durable."""
    try:
        dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)
