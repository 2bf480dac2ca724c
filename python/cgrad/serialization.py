"""Checkpoints in PyTorch's format: cgrad.save / cgrad.load (torch.save / torch.load).

cgrad.save writes PyTorch's zip format: a zip archive (stored, uncompressed)
of <name>/data.pkl (the object pickled with protocol 2, tensors as rebuild
calls that torch.load resolves: _torch_pickle.py), one record per storage under
<name>/data/<key> aligned to 64 bytes, and the version, byteorder,
.format_version and .storage_alignment records. Views of one storage share it
in the file, as in PyTorch. _use_new_zipfile_serialization=False writes the
pre-1.6 format (consecutive pickles, then the raw storages).

cgrad.load reads both formats, written by PyTorch or cgrad, and cgrad's
earlier safetensors checkpoints (cgrad.utils.safetensors). weights_only=True
(the default, as in PyTorch >= 2.6) resolves only an allowlist of globals
(Note [weights-only] in _torch_pickle.py); weights_only=False unpickles
anything, with torch.* names resolved to cgrad's.

Every length in the archive is checked before it is used: storage records must
be stored (not compressed), lie inside the file, not overlap one another, and
hold exactly the bytes their storage declares; a compressed data.pkl may
expand to at most MAX_COMPRESSED_PICKLE bytes; a tensor must lie inside its
storage."""
from __future__ import annotations

import ctypes
import hashlib
import io
import os
import pickle
import stat as _stat
import struct
import sys
import warnings
import zipfile
import zlib
from typing import IO, Any, Callable, Dict, List, Optional, Tuple, Union

from . import _C, _atomic_file
from ._torch_pickle import (FullUnpickler, LoadedStorage, StorageTable, TorchPickler, WeightsOnlyUnpickler,
                            add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals)

FileLike = Union[str, "os.PathLike[str]", IO[bytes]]
MapLocation = Union[None, str, "_C.device", Dict[str, str], Callable[..., Any]]

__all__ = ["save", "load", "add_safe_globals", "clear_safe_globals", "get_safe_globals", "safe_globals",
           "get_unsafe_globals_in_checkpoint", "DEFAULT_PROTOCOL"]

DEFAULT_PROTOCOL = 2  # torch.serialization.DEFAULT_PROTOCOL
MAGIC_NUMBER = 0x1950A86A20F9469CFC6C  # the pre-1.6 format's first pickle
PROTOCOL_VERSION = 1001
STORAGE_ALIGNMENT = 64
MAX_COMPRESSED_PICKLE = 256 << 20
_PAD_ID = 0x6763  # the zip extra field that pads a record's data to STORAGE_ALIGNMENT


# ---------------------------------------------------------------- zip writing

class _ZipWriter:
    """A zip archive of stored records written in one pass (zip64 where sizes need it)."""

    def __init__(self, fh: Any) -> None:
        self.fh = fh
        self.pos = 0
        self.central: List[bytes] = []
        self.crcs: List[int] = []

    def _write(self, data: Any) -> None:
        self.fh.write(data)
        self.pos += len(data)

    def add(self, name: str, data: Any, align: int = 1) -> None:
        n = len(data)
        crc = zlib.crc32(data)
        self.crcs.append(crc)
        raw = name.encode("utf-8")
        offset = self.pos
        zip64 = n >= 0xFFFFFFFF
        extra = struct.pack("<HHQQ", 1, 16, n, n) if zip64 else b""
        if align > 1:
            pad = -(offset + 30 + len(raw) + len(extra) + 4) % align
            extra += struct.pack("<HH", _PAD_ID, pad) + b"\0" * pad
        small = 0xFFFFFFFF if zip64 else n
        version = 45 if zip64 else 20
        # signature, version, flags (bit 11: UTF-8 names), stored, time, date (1980-01-01), crc, sizes
        self._write(struct.pack("<IHHHHHIIIHH", 0x04034B50, version, 0x800, 0, 0, 0x21, crc, small, small,
                                len(raw), len(extra)) + raw + extra)
        self._write(data)
        big = [v for v in (n, n, offset) if v >= 0xFFFFFFFF] if (zip64 or offset >= 0xFFFFFFFF) else []
        cextra = struct.pack("<HH", 1, 8 * len(big)) + struct.pack(f"<{len(big)}Q", *big) if big else b""
        if big:
            version = 45
        self.central.append(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, version, version, 0x800, 0, 0, 0x21, crc,
                                        small, small, len(raw), len(cextra), 0, 0, 0, 0,
                                        min(offset, 0xFFFFFFFF)) + raw + cextra)

    def finish(self) -> None:
        start = self.pos
        for c in self.central:
            self._write(c)
        size = self.pos - start
        count = len(self.central)
        if count >= 0xFFFF or start >= 0xFFFFFFFF or size >= 0xFFFFFFFF:
            end64 = self.pos
            self._write(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, count, count, size, start))
            self._write(struct.pack("<IIQI", 0x07064B50, 0, end64, 1))
        self._write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, min(count, 0xFFFF), min(count, 0xFFFF),
                                min(size, 0xFFFFFFFF), min(start, 0xFFFFFFFF), 0))


def _storage_bytes(ref: Any) -> Any:
    """A storage's bytes, without a copy (valid while ref.tensor lives)."""
    if not ref.nbytes:
        return b""
    return memoryview((ctypes.c_char * ref.nbytes).from_address(ref.base)).cast("B")


def _pickle_object(obj: Any, protocol: int, legacy: bool) -> Tuple[bytes, StorageTable]:
    if sys.byteorder != "little":
        raise NotImplementedError("cgrad.save on a big-endian machine")
    storages = StorageTable()
    buf = io.BytesIO()
    TorchPickler(buf, protocol, storages, legacy).dump(obj)
    return buf.getvalue(), storages


def _write_zip(fh: Any, archive: str, pkl: bytes, storages: StorageTable, byteorder: bool = True) -> None:
    z = _ZipWriter(fh)
    z.add(f"{archive}/data.pkl", pkl)
    z.add(f"{archive}/.format_version", b"1")
    z.add(f"{archive}/.storage_alignment", str(STORAGE_ALIGNMENT).encode())
    if byteorder:
        z.add(f"{archive}/byteorder", b"little")
    for ref in storages:
        z.add(f"{archive}/data/{ref.key}", _storage_bytes(ref), STORAGE_ALIGNMENT)
    z.add(f"{archive}/version", b"3\n")
    # an id of the content (the same object saves to the same bytes)
    ident = hashlib.sha1(struct.pack(f"<{len(z.crcs)}I", *z.crcs)).hexdigest()
    z.add(f"{archive}/.data/serialization_id", ident.encode())
    z.finish()


def _write_legacy(fh: Any, pkl: bytes, storages: StorageTable, protocol: int) -> None:
    sys_info = {"protocol_version": PROTOCOL_VERSION, "little_endian": True,
                "type_sizes": {"short": 2, "int": 4, "long": 4}}
    for head in (MAGIC_NUMBER, PROTOCOL_VERSION, sys_info):
        fh.write(pickle.dumps(head, protocol=protocol))
    fh.write(pkl)
    refs = list(storages)
    fh.write(pickle.dumps([r.key for r in refs], protocol=protocol))
    for r in refs:
        fh.write(struct.pack("<q", r.nbytes // r.tensor.element_size()))
        fh.write(_storage_bytes(r))


def save(obj: object, f: FileLike, pickle_module: Any = pickle, pickle_protocol: int = DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization: bool = True, _disable_byteorder_record: bool = False) -> None:
    """torch.save: write obj (tensors, state dicts, whole Modules, any picklable object) to a path
    or a binary file object in PyTorch's format, which torch.load and cgrad.load read. A path is
    written atomically (cgrad/_atomic_file.py)."""
    if pickle_module is not pickle:
        raise NotImplementedError("cgrad.save with a pickle_module other than the standard pickle")
    if type(pickle_protocol) is not int or not 2 <= pickle_protocol <= pickle.HIGHEST_PROTOCOL:
        raise ValueError(f"cgrad.save: pickle_protocol must be an int from 2 to {pickle.HIGHEST_PROTOCOL}, "
                         f"got {pickle_protocol!r}")
    legacy = not _use_new_zipfile_serialization
    pkl, storages = _pickle_object(obj, pickle_protocol, legacy)

    def write(fh: Any, archive: str) -> None:
        if legacy:
            _write_legacy(fh, pkl, storages, pickle_protocol)
        else:
            _write_zip(fh, archive, pkl, storages, not _disable_byteorder_record)

    if isinstance(f, (str, bytes, os.PathLike)):
        path = os.fsdecode(f)
        archive = os.path.splitext(os.path.basename(path))[0] or "archive"
        _atomic_file.save_path(path, lambda fh: write(fh, archive), "cgrad.save")
    elif hasattr(f, "write"):
        if isinstance(f, io.TextIOBase):
            raise TypeError("cgrad.save: the file object must be opened in binary mode")
        write(f, "archive")
        if hasattr(f, "flush"):
            f.flush()
    else:
        raise TypeError(f"cgrad.save: f must be a path or a binary file object, got {type(f).__name__}")


# ---------------------------------------------------------------- loading

def _bad(msg: str) -> RuntimeError:
    return RuntimeError(f"cgrad.load: invalid checkpoint: {msg}")


def _element_size(dtype: Any) -> int:
    return int(_C.empty(0, dtype=dtype).element_size())


def _restore_location(storage: LoadedStorage, location: str, map_location: MapLocation) -> LoadedStorage:
    """map_location applied to one storage, as torch.load does."""
    if map_location is None:
        pass
    elif isinstance(map_location, dict):
        target = map_location.get(location)
        if target is not None:
            location = str(target)
    elif isinstance(map_location, (str, _C.device)):
        location = str(map_location)
    elif callable(map_location):
        got = map_location(storage, location)
        if got is not None:
            if not isinstance(got, LoadedStorage):
                raise TypeError(f"cgrad.load: map_location returned {type(got).__name__}; it must return the "
                                "storage it was given, storage.cpu(), or None")
            return got
    else:
        raise TypeError(f"cgrad.load: map_location must be None, a str, a device, a dict or a callable, "
                        f"got {type(map_location).__name__}")
    kind = location.split(":", 1)[0]
    if kind == "cpu":
        return storage
    if kind == "cuda":
        return _to_cuda(storage, location)
    if kind in ("mps", "xpu", "hpu"):
        raise RuntimeError(f"cgrad.load: the checkpoint holds tensors on {location}, and cgrad runs on the CPU "
                           f"only; load it with map_location='cpu' (or map_location=cgrad.device('cpu'))")
    if kind == "meta":
        return LoadedStorage(storage.data.to("meta"), "meta")
    raise RuntimeError(f"cgrad.load: don't know how to restore data location {location!r}")


def _to_cuda(storage: LoadedStorage, location: str) -> LoadedStorage:
    """A storage restored to location 'cuda' / 'cuda:N' (torch.load's checks: a usable device of that index)."""
    from . import cuda
    try:
        dev = _C.device(location)
    except RuntimeError:
        raise RuntimeError(f"cgrad.load: don't know how to restore data location {location!r}") from None
    if not cuda.is_available():
        why = _C._cuda_unavailable_reason() or "no CUDA device"
        raise RuntimeError(f"cgrad.load: the checkpoint holds tensors on {location}, and no CUDA device is usable "
                           f"here ({why}); load it with map_location='cpu' (or map_location=cgrad.device('cpu'))")
    count = cuda.device_count()
    if dev.index is not None and dev.index >= count:
        raise RuntimeError(f"cgrad.load: the checkpoint holds tensors on CUDA device {dev.index}, but "
                           f"cgrad.cuda.device_count() is {count}; map them to an existing device with map_location")
    data = storage.data.to(dev)
    return LoadedStorage(data, str(data.device))


class _Storages:
    """Storages of one checkpoint, each read once (views share it), relocated by map_location."""

    def __init__(self, read: Callable[[Any, str, int], Any], map_location: MapLocation) -> None:
        self.read = read
        self.map_location = map_location
        self.done: Dict[str, Tuple[Any, LoadedStorage]] = {}

    def __call__(self, dtype: Any, key: str, location: str, numel: int) -> LoadedStorage:
        got = self.done.get(key)
        if got is not None:
            if got[0] != dtype:
                raise _bad(f"storage {key!r} is used with two dtypes")
            return got[1]
        data = self.read(dtype, key, numel)
        storage = _restore_location(LoadedStorage(data, "cpu"), location, self.map_location)
        self.done[key] = (dtype, storage)
        return storage


def _unpickler(weights_only: bool) -> Any:
    return WeightsOnlyUnpickler if weights_only else FullUnpickler


def _swap_bytes(t: Any) -> None:
    """Reverse the bytes of every element in place (big-endian checkpoints)."""
    import array
    size = t.element_size()
    if size == 1 or t.numel() == 0:
        return
    mem = memoryview((ctypes.c_char * (t.numel() * size)).from_address(t.data_ptr())).cast("B")
    a = array.array({2: "H", 4: "I", 8: "Q"}[size])
    a.frombytes(mem)
    a.byteswap()
    mem[:] = memoryview(a).cast("B")


class _ZipCheckpoint:
    """A PyTorch zip checkpoint opened for reading, its records validated before use."""

    def __init__(self, fh: Any, what: str) -> None:
        self.fh = fh
        self.what = what
        try:
            self.zf = zipfile.ZipFile(fh)
            infos = self.zf.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError, OSError) as e:
            raise _bad(f"{what} is not a readable zip archive, or it is truncated ({e})") from None
        pkls = [i.filename for i in infos if i.filename.endswith("/data.pkl") and i.filename.count("/") == 1]
        if len(pkls) != 1:
            if any(i.filename.endswith("data.pkl") for i in infos):
                raise _bad(f"{what} must hold exactly one <name>/data.pkl record, found {len(pkls)}")
            raise _bad(f"{what} is a zip archive without a data.pkl record: not a PyTorch checkpoint")
        self.prefix = pkls[0][:-len("data.pkl")]
        self.infos = {i.filename: i for i in infos}
        end = self.zf.start_dir
        # every record's data must lie before the central directory and not overlap another
        spans = []
        for i in infos:
            start = self._data_start(i)
            if i.compress_type == zipfile.ZIP_STORED and i.compress_size != i.file_size:
                raise _bad(f"record {i.filename!r} is stored but declares {i.file_size} bytes in "
                           f"{i.compress_size}")
            if start + i.compress_size > end:
                raise _bad(f"record {i.filename!r} runs past the end of the archive's data (offset {start}, "
                           f"{i.compress_size} bytes, the data ends at {end})")
            spans.append((start, start + i.compress_size, i.filename))
        spans.sort()
        for (a0, a1, an), (b0, b1, bn) in zip(spans, spans[1:]):
            if b0 < a1:
                raise _bad(f"records {an!r} and {bn!r} overlap in the archive")
        self.starts = {n: s for s, _, n in spans}
        big = self._text("byteorder")
        if big not in (None, "little", "big"):
            raise _bad(f"unknown byteorder record {big!r:.40}")
        self.big_endian = big == "big"

    def _data_start(self, info: zipfile.ZipInfo) -> int:
        self.fh.seek(info.header_offset)
        head = self.fh.read(30)
        if len(head) != 30 or head[:4] != b"PK\x03\x04":
            raise _bad(f"record {info.filename!r} has no local header at offset {info.header_offset}")
        n, m = struct.unpack("<HH", head[26:30])
        return info.header_offset + 30 + n + m

    def _text(self, name: str) -> Optional[str]:
        info = self.infos.get(self.prefix + name)
        if info is None:
            return None
        return self.record(info, 1 << 16).decode("utf-8", "replace").strip()

    def record(self, info: zipfile.ZipInfo, limit: int) -> bytes:
        if info.file_size > limit:
            raise _bad(f"record {info.filename!r} declares {info.file_size} bytes, more than the {limit} allowed")
        try:
            with self.zf.open(info) as r:
                data = r.read(limit + 1)
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError) as e:
            raise _bad(f"record {info.filename!r} cannot be read ({e})") from None
        if len(data) > limit:
            raise _bad(f"record {info.filename!r} expands past {limit} bytes")
        return data

    def pickle_bytes(self) -> bytes:
        info = self.infos[self.prefix + "data.pkl"]
        stored = info.compress_type == zipfile.ZIP_STORED  # then its size is bounded by the file's
        return self.record(info, info.file_size if stored else MAX_COMPRESSED_PICKLE)

    def storage_info(self, key: str, dtype: Any, numel: int) -> Tuple[zipfile.ZipInfo, int]:
        name = f"{self.prefix}data/{key}"
        info = self.infos.get(name)
        if info is None:
            raise _bad(f"storage {key!r} has no record {name!r} in {self.what}")
        if info.compress_type != zipfile.ZIP_STORED:
            raise _bad(f"storage record {name!r} is compressed; PyTorch checkpoints store storages uncompressed")
        nbytes = numel * _element_size(dtype)
        if info.file_size != nbytes:
            what = "truncated" if info.file_size < nbytes else "longer than declared"
            raise _bad(f"storage record {name!r} is {what}: it holds {info.file_size} bytes, and its storage of "
                       f"{numel} elements needs {nbytes}")
        return info, nbytes

    def read_storage(self, dtype: Any, key: str, numel: int) -> Any:
        info, nbytes = self.storage_info(key, dtype, numel)
        t = _C.empty((numel,), dtype=dtype)
        if nbytes:
            mem = memoryview((ctypes.c_char * nbytes).from_address(t.data_ptr())).cast("B")
            self.fh.seek(self.starts[info.filename])
            got = _read_into(self.fh, mem)
            if got != nbytes:
                raise _bad(f"storage record {info.filename!r} ends after {got} of its {nbytes} bytes")
            if zlib.crc32(mem) != info.CRC:
                raise _bad(f"storage record {info.filename!r} is corrupt (its CRC-32 does not match)")
            if self.big_endian:
                _swap_bytes(t)
        return t

    def close(self) -> None:
        self.zf.close()


def _read_into(fh: Any, mem: memoryview) -> int:
    got = 0
    into = getattr(fh, "readinto", None)
    while got < len(mem):
        part = mem[got:got + (64 << 20)]
        if into is not None:
            k = into(part)
        else:
            data = fh.read(len(part))
            k = len(data)
            part[:k] = data
        if not k:
            break
        got += k
    return got


def _load_zip(fh: Any, what: str, map_location: MapLocation, weights_only: bool,
              mapped: Optional[memoryview] = None) -> Any:
    ck = _ZipCheckpoint(fh, what)
    try:
        pkl = ck.pickle_bytes()
        if mapped is not None and not ck.big_endian:
            def read(dtype: Any, key: str, numel: int) -> Any:
                info, nbytes = ck.storage_info(key, dtype, numel)
                start = ck.starts[info.filename]
                if nbytes == 0:
                    return _C.empty((0,), dtype=dtype)
                raw = mapped[start:start + nbytes]
                if start % _element_size(dtype):  # unaligned: a copy of its own
                    return _C._from_bytes(bytes(raw), dtype, (numel,))
                return _C.frombuffer(raw, dtype=dtype)  # type: ignore[attr-defined]
        else:
            read = ck.read_storage
        storages = _Storages(read, map_location)
        return _unpickle(pkl, storages, weights_only)
    finally:
        ck.close()


def _unpickle(data: Union[bytes, IO[bytes]], storages: Any, weights_only: bool) -> Any:
    fh = io.BytesIO(data) if isinstance(data, (bytes, bytearray)) else data
    try:
        return _unpickler(weights_only)(fh, storages).load()
    except pickle.UnpicklingError as e:
        if str(e).startswith(("cgrad.load", "Weights only")):
            raise
        raise pickle.UnpicklingError(f"cgrad.load: invalid checkpoint: the pickle is corrupt or truncated "
                                     f"({e})") from None
    except (NotImplementedError, ModuleNotFoundError, AttributeError, RuntimeError,
            MemoryError, TypeError):
        raise
    except (EOFError, ValueError, IndexError, KeyError, struct.error, OverflowError, UnicodeDecodeError) as e:
        raise pickle.UnpicklingError(f"cgrad.load: invalid checkpoint: the pickle is corrupt or truncated "
                                     f"({type(e).__name__}: {e})") from None
    except RecursionError:
        raise pickle.UnpicklingError("cgrad.load: invalid checkpoint: the pickle is nested too deeply") from None


def _load_legacy(fh: Any, size: Optional[int], map_location: MapLocation, weights_only: bool) -> Any:
    """PyTorch's pre-1.6 format: magic, protocol and system-info pickles, the object, the storage
    keys, then each storage as an int64 element count and its bytes."""
    try:
        magic = WeightsOnlyUnpickler(fh, _no_storages).load()
        if magic != MAGIC_NUMBER:
            raise _bad("invalid magic number: this is a pickle, not a PyTorch checkpoint")
        if WeightsOnlyUnpickler(fh, _no_storages).load() != PROTOCOL_VERSION:
            raise _bad("unsupported protocol version of a legacy checkpoint")
        info = WeightsOnlyUnpickler(fh, _no_storages).load()
    except (EOFError, ValueError, IndexError, KeyError, struct.error) as e:
        raise _bad(f"the legacy checkpoint's header is corrupt or truncated ({e})") from None
    if not isinstance(info, dict) or info.get("little_endian") is not True:
        raise NotImplementedError("cgrad.load of a big-endian legacy checkpoint")
    pending: Dict[str, Any] = {}

    def read(dtype: Any, key: str, numel: int) -> Any:
        if size is not None and numel * _element_size(dtype) > size:
            raise _bad(f"storage {key!r} declares {numel} elements, more than the file holds")
        t = _C.empty((numel,), dtype=dtype)
        pending[key] = t
        return t

    storages = _Storages(read, map_location)  # a storage's data arrives after the pickle, into the same tensor
    obj = _unpickle(fh, storages, weights_only)
    keys = _unpickle(fh, _no_storages, True)
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise _bad("the legacy checkpoint's storage key list is malformed")
    for key in keys:
        t = pending.get(key)
        if t is None:
            raise _bad(f"the legacy checkpoint lists storage {key!r}, which no tensor uses")
        head = fh.read(8)
        if len(head) != 8:
            raise _bad(f"the file ends before storage {key!r}")
        (numel,) = struct.unpack("<q", head)
        if numel != t.numel():
            raise _bad(f"storage {key!r} holds {numel} elements, and the pickle declared {t.numel()}")
        nbytes = numel * t.element_size()
        if nbytes:
            mem = memoryview((ctypes.c_char * nbytes).from_address(t.data_ptr())).cast("B")
            if _read_into(fh, mem) != nbytes:
                raise _bad(f"the file ends inside storage {key!r} (truncated)")
    missing = set(pending) - set(keys)
    if missing:
        raise _bad(f"the legacy checkpoint has no data for storages {sorted(missing)[:5]}")
    return obj


def _no_storages(dtype: Any, key: str, location: str, numel: int) -> Any:
    raise _bad("a storage record where none can be")


def _is_safetensors(head: bytes) -> bool:
    if len(head) < 9:
        return False
    (n,) = struct.unpack("<Q", head[:8])
    return 2 <= n <= 100_000_000 and head[8:9] == b"{"


def _load_stream(fh: Any, size: Optional[int], what: str, map_location: MapLocation, weights_only: bool) -> Any:
    start = fh.tell()
    head = fh.read(16)
    fh.seek(start)
    return _dispatch(head, fh, size, what, map_location, weights_only, lambda: fh)


def _dispatch(head: bytes, fh: Any, size: Optional[int], what: str, map_location: MapLocation,
              weights_only: bool, seekable: Callable[[], Any]) -> Any:
    """Load by the format the first bytes name; seekable() gives a seekable source for a zip."""
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return _load_zip(seekable(), what, map_location, weights_only)
    if head[:1] == b"\x80":
        return _load_legacy(fh, size, map_location, weights_only)
    if _is_safetensors(head):
        from .utils import safetensors
        return safetensors.load(fh, map_location=map_location)
    if not head:
        raise EOFError("cgrad.load: the file is empty (Ran out of input)")
    raise pickle.UnpicklingError(f"cgrad.load: {what} is not a PyTorch checkpoint (a zip archive or a pickle): "
                                 f"invalid load key {head[:1]!r}")


def load(f: FileLike, map_location: MapLocation = None, pickle_module: Any = None, *,
         weights_only: Optional[bool] = None, mmap: Optional[bool] = None, **pickle_load_args: Any) -> Any:
    """torch.load: read a checkpoint written by torch.save or cgrad.save (either format) from a path
    or a binary file object.

    weights_only (default True) loads only tensors, containers, numbers, strings, dtypes, devices,
    Sizes and the globals registered with cgrad.serialization.add_safe_globals; anything else raises
    pickle.UnpicklingError and runs nothing. weights_only=False unpickles everything (whole Modules,
    NumPy arrays, argparse namespaces): only for trusted files.

    map_location: None (tensors stay where they were saved: the CPU), a device or str, a dict
    {saved location: new location}, or a callable (storage, location) -> storage.
    mmap=True (a path only, zip format) maps the file under a read lease (cgrad/_leasemap.py)
    instead of reading it: the tensors share the mapping, copy-on-write."""
    if weights_only is None:
        weights_only = pickle_module is None
    if pickle_module is not None and pickle_module is not pickle:
        if weights_only:
            raise RuntimeError("cgrad.load: can not safely load weights when an explicit pickle_module is given "
                               "together with weights_only=True")
        raise NotImplementedError("cgrad.load with a pickle_module other than the standard pickle")
    if pickle_load_args:
        raise NotImplementedError(f"cgrad.load with pickle_load_args {sorted(pickle_load_args)}")
    if sys.byteorder != "little":
        raise NotImplementedError("cgrad.load on a big-endian machine")
    if isinstance(f, (str, bytes, os.PathLike)):
        path = os.fsdecode(f)
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not _stat.S_ISREG(st.st_mode):
                if mmap:
                    raise ValueError("cgrad.load: mmap=True needs a regular file, and this path names a pipe, "
                                     "a device or another special file")
                return _load_unseekable(fh, repr(path), map_location, weights_only)
            if mmap:
                got = _load_mapped(fh, st.st_size, repr(path), map_location, weights_only)
                if got is not _UNMAPPED:
                    return got
            return _load_stream(fh, st.st_size, repr(path), map_location, weights_only)
    if mmap:
        raise ValueError("cgrad.load: f must be a file path in order to use the mmap argument")
    if not hasattr(f, "read"):
        raise TypeError(f"cgrad.load: f must be a path or a binary file object, got {type(f).__name__}")
    if isinstance(f, io.TextIOBase):
        raise TypeError("cgrad.load: the file object must be opened in binary mode")
    seekable = False
    try:
        seekable = bool(f.seekable()) if hasattr(f, "seekable") else False
    except (OSError, ValueError):
        pass
    if not seekable:
        return _load_unseekable(f, "the stream", map_location, weights_only)
    start = f.tell()
    end = f.seek(0, os.SEEK_END)
    f.seek(start)
    return _load_stream(f, end - start, "the file object", map_location, weights_only)


class _Prefixed:
    """A stream whose first bytes were already read (to tell the format)."""

    def __init__(self, head: bytes, fh: Any) -> None:
        self.head = head
        self.fh = fh

    def read(self, n: int = -1) -> bytes:
        if self.head:
            if n < 0:
                out, self.head = self.head + _read_whole(self.fh), b""
                return out
            out, self.head = self.head[:n], self.head[n:]
            if len(out) < n:
                more = self.fh.read(n - len(out))
                out += more or b""
            return out
        return self.fh.read(n)

    def readline(self) -> bytes:  # the unpickler's protocol-0 opcodes
        out = bytearray()
        while not out.endswith(b"\n"):
            c = self.read(1)
            if not c:
                break
            out += c
        return bytes(out)


def _read_whole(fh: Any) -> bytes:
    parts = []
    while True:
        piece = fh.read(64 << 20)
        if piece is None:
            raise ValueError("cgrad.load: the file object is non-blocking and has no data ready")
        if not isinstance(piece, (bytes, bytearray)):
            raise TypeError("cgrad.load: the file object must be opened in binary mode")
        if not piece:
            return b"".join(parts)
        parts.append(piece)


def _load_unseekable(fh: Any, what: str, map_location: MapLocation, weights_only: bool) -> Any:
    """A pipe or stream, told by its first bytes: a zip is read whole (it is indexed from its
    end), a legacy pickle and a safetensors file are read as they come."""
    head = fh.read(16)
    if head is None:
        raise ValueError("cgrad.load: the file object is non-blocking and has no data ready")
    if not isinstance(head, (bytes, bytearray)):
        raise TypeError("cgrad.load: the file object must be opened in binary mode")
    head = bytes(head)
    stream = _Prefixed(head, fh)
    return _dispatch(head, stream, None, what, map_location, weights_only, lambda: io.BytesIO(stream.read()))


_UNMAPPED = object()


def _load_mapped(fh: Any, size: int, what: str, map_location: MapLocation, weights_only: bool) -> Any:
    """mmap=True: storages share a private mapping of the file kept safe by a lease (Note [Leased
    mappings] in _leasemap.py); _UNMAPPED when the file is not a zip checkpoint or cannot be protected."""
    head = fh.read(4)
    fh.seek(0)
    if head != b"PK\x03\x04":
        if head[:1] == b"\x80":
            raise RuntimeError("cgrad.load: mmap can only be used with files saved with "
                               "`torch.save(_use_new_zipfile_serialization=True)`, please torch.save your "
                               "checkpoint with this option in order to use mmap.")
        return _UNMAPPED
    from . import _leasemap
    got = _leasemap.map_file(fh.fileno())
    if isinstance(got, str):
        warnings.warn(f"cgrad.load: mmap=True: the file is read into memory instead, because {got}: a mapping "
                      "without a lease would crash the process if the file were truncated", UserWarning, stacklevel=3)
        return _UNMAPPED
    m, _ = got
    view = memoryview(m)
    try:
        return _load_zip(fh, what, map_location, weights_only, mapped=view)
    finally:
        view.release()


def get_unsafe_globals_in_checkpoint(f: FileLike) -> List[str]:
    """torch.serialization.get_unsafe_globals_in_checkpoint: the globals a weights_only load would refuse."""
    import pickletools
    from ._torch_pickle import _NOT_FOUND, _PLAIN, _user_safe, qualified_name, torch_names
    with (open(f, "rb") if isinstance(f, (str, bytes, os.PathLike)) else _nullcontext(f)) as fh:
        start = fh.tell()
        head = fh.read(4)
        fh.seek(start)
        if head != b"PK\x03\x04":
            raise ValueError("cgrad.serialization.get_unsafe_globals_in_checkpoint: expected a zip checkpoint")
        end = fh.seek(0, os.SEEK_END)
        fh.seek(start)
        ck = _ZipCheckpoint(fh, "the checkpoint")
        try:
            pkl = ck.pickle_bytes()
        finally:
            ck.close()
    found: List[str] = []
    strings: List[str] = []
    for op, arg, _ in pickletools.genops(pkl):
        if op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE", "BINUNICODE8"):
            strings.append(arg)
        if op.name == "GLOBAL":
            name = qualified_name(*arg.split(" ", 1))
        elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
            name = qualified_name(strings[-2], strings[-1])
        else:
            continue
        if name not in torch_names() and name not in _PLAIN and _user_safe(name) is _NOT_FOUND and name not in found:
            found.append(name)
    return found


class _nullcontext:
    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def __enter__(self) -> Any:
        return self.obj

    def __exit__(self, *exc: Any) -> None:
        pass
