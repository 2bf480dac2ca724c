"""The safetensors format: cgrad.utils.safetensors.save / load (nested state dicts)
and save_file / load_file (flat {name: tensor} dicts, the safetensors package's conventions).
cgrad.save / cgrad.load use PyTorch's format (serialization.py); this module is
the pickle-free alternative.

A file is an 8-byte little-endian header length N, N bytes of JSON header
({name: {"dtype", "shape", "data_offsets"}, "__metadata__": {str: str}}) and the
raw little-endian tensor data. Nested dicts / lists / tuples of tensors and
plain values (int, float, bool, str, None, dtype, device) are flattened to
tensor names; their structure is kept as JSON in __metadata__["cgrad.structure"],
so model and optimizer state dicts round-trip. Plain {name: tensor} files are
exchanged with the safetensors library both ways. There is no pickle: loading
never runs code, and the loader validates every field of the header before
touching the data (and every length before reading it). Loading reads the
tensors into memory of their own; mmap=True maps the file under a read lease
instead (_leasemap.py). Saving to a path writes a new file and renames it over
the old one, so a checkpoint on disk is always whole."""
from __future__ import annotations

import builtins
import ctypes
import io
import json
import math
import os
import stat as _stat
import struct
import sys
import warnings
from typing import IO, Any, Callable, Dict, List, Optional, Tuple, Union

from .. import _C, _atomic_file

_SAVE = "cgrad.utils.safetensors.save"
_LOAD = "cgrad.utils.safetensors.load"
FileLike = Union[str, "os.PathLike[str]", IO[bytes]]
MapLocation = Union[None, str, "_C.device", Dict[str, str], Callable[..., Any]]

STRUCTURE_KEY = "cgrad.structure"
FORMAT_KEY = "format"
MAX_HEADER = 100_000_000  # the safetensors library's bound on the header size
_INT64_MAX = (1 << 63) - 1

# safetensors dtype code -> (cgrad dtype name, element size)
_DTYPES: Dict[str, Tuple[str, int]] = {
    "F64": ("float64", 8),
    "F32": ("float32", 4),
    "F16": ("float16", 2),
    "BF16": ("bfloat16", 2),
    "I64": ("int64", 8),
    "I32": ("int32", 4),
    "I16": ("int16", 2),
    "I8": ("int8", 1),
    "U8": ("uint8", 1),
    "U16": ("uint16", 2),
    "U32": ("uint32", 4),
    "U64": ("uint64", 8),
    "BOOL": ("bool", 1),
}
_CODES = {v[0]: k for k, v in _DTYPES.items()}
# dtypes of the safetensors format that cgrad has no tensor type for
_UNSUPPORTED = {"F8_E4M3", "F8_E5M2", "F8_E8M0", "F4", "F6_E2M3", "F6_E3M2", "C64"}


def _dtype_name(dt: Any) -> str:
    return str(dt).rsplit(".", 1)[-1]


# ---------------------------------------------------------------- save

class _Flattener:
    """Walks the object, collecting tensors under unique names and building
    the JSON structure that refers to them."""

    def __init__(self) -> None:
        self.tensors: Dict[str, Any] = {}
        self.by_id: Dict[int, str] = {}

    def name_for(self, t: Any, path: str) -> str:
        key = builtins.id(t)
        if key in self.by_id:  # the same tensor object twice (tied weights): one entry
            return self.by_id[key]
        name = path if path else "tensor"
        if name in self.tensors or name == "__metadata__":
            i = 1
            while f"{name}#{i}" in self.tensors:
                i += 1
            name = f"{name}#{i}"
        self.tensors[name] = t
        self.by_id[key] = name
        return name

    def encode(self, obj: Any, path: str) -> Any:
        if isinstance(obj, _C._TensorBase):
            return {"T": self.name_for(obj, path)}
        if obj is None or isinstance(obj, (bool, str)):
            return {"v": obj}
        if isinstance(obj, int):
            return {"v": int(obj)}
        if isinstance(obj, float):
            return {"f": repr(float(obj))} if not math.isfinite(obj) else {"v": float(obj)}
        if isinstance(obj, _C.dtype):
            return {"dtype": _dtype_name(obj)}
        if isinstance(obj, _C.device):
            return {"device": str(obj)}
        if isinstance(obj, dict):
            items = []
            for k, v in obj.items():
                if not (k is None or isinstance(k, (str, int, float, bool, tuple))):
                    raise TypeError(f"{_SAVE}: dict keys must be str, int, float, bool, None or tuples, "
                                    f"got {type(k).__name__}")
                items.append([self.encode(k, ""), self.encode(v, _join(path, k))])
            return {"d": items}
        if isinstance(obj, tuple):
            return {"t": [self.encode(v, _join(path, i)) for i, v in enumerate(obj)]}
        if isinstance(obj, list):
            return {"l": [self.encode(v, _join(path, i)) for i, v in enumerate(obj)]}
        raise TypeError(f"{_SAVE}: cannot save an object of type {type(obj).__name__}; checkpoints hold "
                        "tensors, numbers, strings, None, dtypes, devices and dicts / lists / tuples of them")


def _join(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


def _saveable(t: Any) -> Any:
    t = t.detach()
    if t.device.type == "meta":
        raise ValueError(f"{_SAVE}: cannot save a tensor on the meta device (it has no data)")
    return t


def _tensor_data(t: Any) -> Any:
    """t's elements in row-major order: its own memory when it is a contiguous CPU tensor
    (valid while t lives), else a copy (non-contiguous views are saved contiguous)."""
    if t.device.type != "cpu":
        return t._to_bytes()  # a copy from the device (a view of a temporary CPU copy would not outlive it)
    n = t.numel() * t.element_size()
    if n and t.is_contiguous():
        return memoryview((ctypes.c_char * n).from_address(t.data_ptr())).cast("B")
    return t._to_bytes()


def _serialize(obj: Any) -> Tuple[bytes, List[Any]]:
    """The header (with its 8-byte length) and the tensors to write after it, in order."""
    fl = _Flattener()
    structure = fl.encode(obj, "")
    return _pack(fl.tensors, {FORMAT_KEY: "pt", STRUCTURE_KEY: json.dumps(structure, separators=(",", ":"))})


def _pack(tensors: Dict[str, Any], meta: Dict[str, str]) -> Tuple[bytes, List[Any]]:
    """The header for {name: tensor} plus metadata, and the tensors in file order."""
    if sys.byteorder != "little":
        raise NotImplementedError("cgrad.utils.safetensors: saving on a big-endian machine")
    # widest elements first so every tensor stays aligned to its element size
    order = sorted(tensors, key=lambda n: (-tensors[n].element_size(), n))
    header: Dict[str, Any] = {}
    out: List[Any] = []
    offset = 0
    for name in order:
        t = _saveable(tensors[name])
        nbytes = t.numel() * t.element_size()
        header[name] = {"dtype": _CODES[_dtype_name(t.dtype)], "shape": list(t.shape),
                        "data_offsets": [offset, offset + nbytes]}
        out.append(t)
        offset += nbytes
    if meta:
        header["__metadata__"] = dict(meta)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)  # data starts 8-byte aligned
    return struct.pack("<Q", len(text)) + text, out


def _write(fh: Any, head: bytes, tensors: List[Any]) -> None:
    fh.write(head)
    for t in tensors:
        data = _tensor_data(t)
        if len(data) != t.numel() * t.element_size():  # the header already promised this length
            raise RuntimeError(f"{_SAVE}: a tensor of shape {tuple(t.shape)} gave {len(data)} bytes")
        fh.write(data)


def save(obj: object, f: FileLike) -> None:
    """Save a tensor, or a nested dict / list / tuple of tensors and plain
    values (a state dict), to a path or binary file object, in the safetensors
    format. Tensors are saved contiguous and detached (as data). A path is
    written atomically (cgrad/_atomic_file.py)."""
    head, tensors = _serialize(obj)
    if isinstance(f, (str, bytes, os.PathLike)):
        _atomic_file.save_path(os.fsdecode(f), lambda fh: _write(fh, head, tensors), _SAVE)
    elif hasattr(f, "write"):
        _write(f, head, tensors)
    else:
        raise TypeError(f"{_SAVE}: f must be a path or a binary file object, got {type(f).__name__}")


# ---------------------------------------------------------------- load

def _bad(msg: str) -> ValueError:
    return ValueError(f"{_LOAD}: invalid checkpoint: {msg}")


def _unique(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"duplicate key {k!r}")
        out[k] = v
    return out


def _header_length(first: bytes, size: Optional[int], peek: Callable[[], bytes],
                   names: Callable[[], Optional[List[str]]]) -> int:
    """The header length from the first 8 bytes, checked against the limit and the file size
    before anything more is read; a file in another known format is named as such."""
    if len(first) < 8:
        what = f"the file has {len(first)} bytes" if size is not None else f"the stream ends after {len(first)} bytes"
        raise _bad(f"{what}, fewer than the 8-byte header length")
    (n,) = struct.unpack_from("<Q", first, 0)
    if n > MAX_HEADER or (size is not None and 8 + n > size):
        _raise_if_foreign(first + peek(), names)
    if n > MAX_HEADER:
        raise _bad(f"header length {n} exceeds the limit of {MAX_HEADER} bytes")
    if size is not None and 8 + n > size:
        raise _bad(f"header length {n} runs past the end of the file ({size} bytes)")
    if n == 0:
        _raise_if_foreign(first + peek(), names)
        raise _bad("header length 0: the file does not start with a safetensors header")
    return n


def _parse_entries(text: bytes, data_len: Optional[int], first: bytes,
                   names: Callable[[], Optional[List[str]]]) -> Tuple[Dict[str, Any], Dict[str, str], int]:
    """Validate the JSON header; returns ({name: (code, shape, begin, end)}, metadata, data length).
    data_len is the size of the data section, None for a stream of unknown size (then the
    tensors must cover [0, end) without gaps, and end is the length to read)."""
    try:
        header = json.loads(text.decode("utf-8"), object_pairs_hook=_unique)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        _raise_if_foreign(first + text[:16], names)
        raise _bad(f"the header is not valid UTF-8 JSON ({e})") from None
    if not isinstance(header, dict):
        raise _bad(f"the header is a JSON {type(header).__name__}, not an object")
    meta = header.pop("__metadata__", None)
    if meta is None:
        meta = {}
    if not isinstance(meta, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in meta.items()):
        raise _bad("__metadata__ must map strings to strings")
    entries: Dict[str, Any] = {}
    for name, info in header.items():
        if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
            raise _bad(f"tensor {name!r}: the entry must be an object with exactly dtype, shape and data_offsets")
        code, shape, offs = info["dtype"], info["shape"], info["data_offsets"]
        if not isinstance(code, str):
            raise _bad(f"tensor {name!r}: dtype must be a string")
        if code not in _DTYPES:
            if code in _UNSUPPORTED:
                raise _bad(f"tensor {name!r}: dtype {code} is not supported by cgrad")
            raise _bad(f"tensor {name!r}: unknown dtype {code!r}")
        if not isinstance(shape, list) or not all(type(s) is int and s >= 0 for s in shape):
            raise _bad(f"tensor {name!r}: shape must be a list of non-negative integers, got {shape!r}")
        if len(shape) > 64:
            raise _bad(f"tensor {name!r}: {len(shape)} dimensions are too many")
        numel = 1
        for s in shape:
            numel *= s
        nbytes = numel * _DTYPES[code][1]
        if any(s > _INT64_MAX for s in shape) or nbytes > _INT64_MAX:
            raise _bad(f"tensor {name!r}: shape {shape} overflows (element count or byte size beyond int64)")
        if (not isinstance(offs, list) or len(offs) != 2 or not all(type(o) is int for o in offs)):
            raise _bad(f"tensor {name!r}: data_offsets must be a list of two integers, got {offs!r}")
        begin, end = offs
        if begin < 0 or end < begin:
            raise _bad(f"tensor {name!r}: data_offsets {offs} are not an increasing pair of non-negative integers")
        if data_len is not None and end > data_len:
            raise _bad(f"tensor {name!r}: data_offsets {offs} lie beyond the data section ({data_len} bytes)")
        if end - begin != nbytes:
            raise _bad(f"tensor {name!r}: data_offsets {offs} hold {end - begin} bytes but shape {shape} "
                       f"of {code} needs {nbytes}")
        entries[name] = (code, shape, begin, end)
    covered = 0
    for name, (_, _, begin, end) in sorted(entries.items(), key=lambda kv: (kv[1][2], kv[1][3])):
        if begin < covered:
            raise _bad(f"tensor {name!r}: data_offsets [{begin}, {end}] overlap another tensor")
        if begin > covered:
            raise _bad(f"tensor {name!r}: the data section has a gap of {begin - covered} bytes before it")
        covered = end
    if data_len is not None and covered != data_len:
        raise _bad(f"the tensors cover {covered} bytes but the data section has {data_len}")
    return entries, meta, covered


def _parse_header(buf: Any, size: int) -> Tuple[int, Dict[str, Any], Dict[str, str]]:
    """Validate the header of a file held whole in buf (a mapping); returns (data start,
    {name: (code, shape, begin, end)}, metadata)."""
    first = bytes(buf[:8])
    n = _header_length(first, size, lambda: bytes(buf[8:16]), lambda: None)
    entries, meta, _ = _parse_entries(bytes(buf[8:8 + n]), size - 8 - n, first, lambda: None)
    return 8 + n, entries, meta


# ---------------------------------------------------------------- other formats

_TORCH_LEGACY_MAGIC = (0x1950A86A20F9469CFC6C).to_bytes(10, "little")  # torch.serialization.MAGIC_NUMBER


def _foreign_format(head: bytes, names: Callable[[], Optional[List[str]]]) -> Optional[str]:
    """What a file starting with head is, when it is a known format other than safetensors."""
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        entries = names()
        if entries is not None and any(e.rsplit("/", 1)[-1] == "data.pkl" for e in entries):
            return "a PyTorch .pt checkpoint (zip archive with data.pkl, as torch.save writes)"
        if entries and all(e.endswith(".npy") for e in entries):
            return "a NumPy .npz archive"
        return "a zip archive (the format of torch.save and of NumPy .npz)"
    if head[:1] == b"\x80" and len(head) > 1 and 2 <= head[1] <= 5:
        if head[2:4] == b"\x8a\x0a" and head[4:14] == _TORCH_LEGACY_MAGIC:
            return ("a legacy PyTorch .pt checkpoint (pickle, as torch.save writes with "
                    "_use_new_zipfile_serialization=False)")
        return "a Python pickle (such as a legacy PyTorch .pt checkpoint)"
    if head.startswith(b"\x93NUMPY"):
        return "a NumPy .npy array"
    if head.startswith(b"\x89HDF\r\n\x1a\n"):
        return "an HDF5 file (such as a Keras .h5 model)"
    if head.startswith(b"GGUF"):
        return "a GGUF file"
    if head.startswith(b"\x1f\x8b"):
        return "a gzip-compressed file"
    return None


def _raise_if_foreign(head: bytes, names: Callable[[], Optional[List[str]]]) -> None:
    kind = _foreign_format(head, names)
    if kind is None:
        return
    hint = ""
    if "PyTorch" in kind or "pickle" in kind or "zip" in kind:
        hint = (" It never unpickles (that can run code). cgrad.load reads PyTorch checkpoints (with "
                "weights_only=True by default, which refuses any code in the file).")
    raise ValueError(f"{_LOAD}: this is {kind}, not a safetensors file; this function reads "
                     f"only safetensors files.{hint}")


def _zip_names(src: Any) -> Optional[List[str]]:
    """The member names when src (a path or a seekable binary file at its start) is a zip archive."""
    import zipfile
    try:
        with zipfile.ZipFile(src) as z:
            return z.namelist()
    except Exception:  # noqa: BLE001 - any failure means: not a readable zip
        return None


def _make_tensor(view: memoryview, base: int, start: int, code: str, shape: List[int]) -> Any:
    name, size = _DTYPES[code]
    dtype = getattr(_C, name)
    numel = 1
    for s in shape:
        numel *= s
    if numel == 0:
        return _C.empty(shape, dtype=dtype)
    raw = view[start:start + numel * size]
    if code == "BOOL" and bytes(raw).translate(None, b"\x00\x01"):
        raise _bad("a bool tensor holds bytes other than 0 and 1")
    if (base + start) % size:  # unaligned: copy into a fresh tensor
        return _C._from_bytes(bytes(raw), dtype, shape)
    # shares the buffer, which it keeps alive (read-only if the buffer is: Note [Read-only memory])
    return _C.frombuffer(raw, dtype=dtype).view(shape)  # type: ignore[attr-defined]


def _address(view: memoryview) -> int:
    """The address of the buffer's first byte."""
    return int(_C.frombuffer(view[0:1], dtype=_C.uint8).data_ptr())  # type: ignore[attr-defined]


def _decode(node: Any, tensors: Dict[str, Any]) -> Any:
    if not isinstance(node, dict) or len(node) != 1:
        raise _bad("cgrad.structure: every node must be an object with one key")
    (tag, val), = node.items()
    if tag == "T":
        if not isinstance(val, str) or val not in tensors:
            raise _bad(f"cgrad.structure refers to a missing tensor {val!r}")
        return tensors[val]
    if tag == "v":
        if not (val is None or isinstance(val, (bool, int, float, str))):
            raise _bad("cgrad.structure: a value node must hold a JSON scalar")
        return val
    if tag == "f":
        if not isinstance(val, str) or val not in ("inf", "-inf", "nan"):
            raise _bad("cgrad.structure: a float node must be 'inf', '-inf' or 'nan'")
        return float(val)
    if tag == "dtype":
        dt = getattr(_C, val, None) if isinstance(val, str) else None
        if not isinstance(dt, _C.dtype):
            raise _bad(f"cgrad.structure: unknown dtype {val!r}")
        return dt
    if tag == "device":
        if not isinstance(val, str):
            raise _bad("cgrad.structure: a device node must hold a string")
        try:
            return _C.device(val)
        except (RuntimeError, ValueError, TypeError) as e:
            raise _bad(f"cgrad.structure: bad device {val!r} ({e})") from None
    if tag in ("l", "t", "d"):
        if not isinstance(val, list):
            raise _bad(f"cgrad.structure: a {tag!r} node must hold a list")
        if tag == "l":
            return [_decode(v, tensors) for v in val]
        if tag == "t":
            return tuple(_decode(v, tensors) for v in val)
        out = {}
        for item in val:
            if not isinstance(item, list) or len(item) != 2:
                raise _bad("cgrad.structure: dict items must be [key, value] pairs")
            k = _decode(item[0], tensors)
            try:
                hash(k)
            except TypeError:
                raise _bad("cgrad.structure: a dict key is not hashable") from None
            out[k] = _decode(item[1], tensors)
        return out
    raise _bad(f"cgrad.structure: unknown node kind {tag!r}")


def _relocate(t: Any, map_location: MapLocation) -> Any:
    if map_location is None:
        return t
    if isinstance(map_location, dict):
        target = map_location.get(str(t.device))
        return t if target is None else t.to(target)
    if isinstance(map_location, (str, _C.device)):
        return t.to(map_location)
    if callable(map_location):
        r = map_location(t, str(t.device))
        return t if r is None else r
    raise TypeError(f"{_LOAD}: map_location must be None, a str, a device, a dict or a callable, "
                    f"got {type(map_location).__name__}")


_CHUNK = 64 << 20  # reads go in pieces of at most this many bytes


class _Reader:
    """Sequential reads from a binary file object, in bounded pieces. size: the bytes left
    from the current position when known (a regular file, a seekable object), else None."""

    def __init__(self, fh: Any, size: Optional[int], names: Callable[[], Optional[List[str]]]) -> None:
        self.fh = fh
        self.size = size
        self.names = names
        self.done = 0  # bytes read so far
        self._into = getattr(fh, "readinto", None)

    def read(self, n: int) -> bytes:
        """Up to n bytes (fewer only at the end of the data)."""
        parts = []
        while n > 0:
            piece = self.fh.read(min(n, _CHUNK))
            if piece is None:
                raise ValueError(f"{_LOAD}: the file object is non-blocking and has no data ready")
            if not isinstance(piece, (bytes, bytearray)):
                raise TypeError(f"{_LOAD}: the file object must be opened in binary mode")
            if not piece:
                break
            parts.append(piece)
            n -= len(piece)
            self.done += len(piece)
        return b"".join(parts)

    def read_into(self, buf: memoryview) -> int:
        """Fill buf; the number of bytes read (less than len(buf) only at the end of the data)."""
        got = 0
        while got < len(buf):
            part = buf[got:got + _CHUNK]
            if self._into is not None:
                k = self._into(part)
                if k is None:
                    raise ValueError(f"{_LOAD}: the file object is non-blocking and has no data ready")
            else:
                data = self.read(len(part))
                self.done -= len(data)
                k = len(data)
                part[:k] = data
            if not k:
                break
            got += k
            self.done += k
        return got


def _source_size(fh: Any) -> Optional[int]:
    """The bytes left in a file object from its position, when that can be known without reading."""
    try:
        st = os.fstat(fh.fileno())
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        st = None
    if st is not None and not _stat.S_ISREG(st.st_mode):
        return None  # a pipe, a socket, a character device such as /dev/zero: read until the data ends
    try:
        if not fh.seekable():
            return None
        pos = fh.tell()
        end = fh.seek(0, os.SEEK_END)
        fh.seek(pos)
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return None
    return max(0, end - pos)


def _zip_names_of(fh: Any) -> Callable[[], Optional[List[str]]]:
    """For the error message: the member names when fh, from its current position, is a zip archive."""
    try:
        start: Optional[int] = fh.tell() if fh.seekable() else None
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        start = None

    def names() -> Optional[List[str]]:
        if start is None:
            return None
        try:
            pos = fh.tell()
            fh.seek(start)
        except (OSError, ValueError, io.UnsupportedOperation):
            return None
        try:
            return _zip_names(fh)
        finally:
            try:
                fh.seek(pos)
            except (OSError, ValueError, io.UnsupportedOperation):
                pass
    return names


def _read_tensor(r: _Reader, code: str, shape: List[int], name: str, declared: int) -> Any:
    """A new tensor of the given dtype and shape holding the next bytes of r."""
    dtype = getattr(_C, _DTYPES[code][0])
    t = _C.empty(shape, dtype=dtype)
    nbytes = t.numel() * _DTYPES[code][1]
    if nbytes == 0:
        return t
    buf = memoryview((ctypes.c_char * nbytes).from_address(t.data_ptr())).cast("B")  # t's own storage
    got = r.read_into(buf)
    if got < nbytes:
        where = r.done
        if r.size is not None:
            raise _bad(f"the file ended after {where} of its {r.size} bytes while tensor {name!r} was read "
                       "(it changed while being read)")
        raise _bad(f"the stream ended after {where} bytes, inside tensor {name!r}; the header declares "
                   f"{declared} bytes of data")
    if code == "BOOL" and buf.tobytes().translate(None, b"\x00\x01"):
        raise _bad("a bool tensor holds bytes other than 0 and 1")
    return t


def _read_all(fh: Any, size: Optional[int], names: Callable[[], Optional[List[str]]]
              ) -> Tuple[Dict[str, Any], Dict[str, str]]:
    """Read a checkpoint from fh into new tensors; every length is checked before it is read."""
    r = _Reader(fh, size, names)
    first = r.read(8)
    n = _header_length(first, size, lambda: r.read(8), names)
    text = r.read(n)
    if len(text) < n:
        raise _bad(f"the stream ends inside the header ({len(text)} of its {n} bytes)")
    entries, meta, data_len = _parse_entries(text, None if size is None else size - 8 - n, first, names)
    tensors: Dict[str, Any] = {}
    for name, (code, shape, _, _) in sorted(entries.items(), key=lambda kv: (kv[1][2], kv[1][3])):
        tensors[name] = _read_tensor(r, code, shape, name, data_len)
    if size is None and r.read(1):
        raise _bad(f"the tensors cover {data_len} bytes but more data follows them")
    return {k: tensors[k] for k in entries}, meta


def _finish(tensors: Dict[str, Any], meta: Dict[str, str], map_location: MapLocation) -> Any:
    tensors = {k: _relocate(t, map_location) for k, t in tensors.items()}
    if STRUCTURE_KEY not in meta:
        return tensors
    try:
        return _decode(json.loads(meta[STRUCTURE_KEY]), tensors)
    except RecursionError:
        raise _bad("cgrad.structure is nested too deeply") from None
    except json.JSONDecodeError as e:
        raise _bad(f"cgrad.structure is not valid JSON ({e})") from None


def _load_mapped(fd: int, map_location: MapLocation) -> Optional[Any]:
    """mmap=True: the tensors share a private mapping of the file kept safe by a lease
    (Note [Leased mappings] in _leasemap.py); None when the file cannot be protected."""
    from .. import _leasemap
    got = _leasemap.map_file(fd)
    if isinstance(got, str):
        warnings.warn(f"{_LOAD}: mmap=True: the file is read into memory instead, because {got}: "
                      "a mapping without a lease would crash the process if the file were truncated",
                      UserWarning, stacklevel=3)
        return None
    m, size = got
    view = memoryview(m)
    try:
        start, entries, meta = _parse_header(view, size)
        base = _address(view) if entries else 0
        tensors = {name: _make_tensor(view, base, start + b, code, shape)
                   for name, (code, shape, b, _) in entries.items()}
    finally:
        view.release()  # the tensors hold their own exports of the mapping
    return _finish(tensors, meta, map_location)


def load(f: FileLike, map_location: MapLocation = None, weights_only: bool = True, *,
         mmap: Optional[bool] = None) -> Any:
    """Load what cgrad.utils.safetensors.save wrote (or any safetensors file, as a
    {name: tensor} dict) from a path or a binary file object. Nothing in the file can run code,
    whatever weights_only says.

    By default (mmap None or False) the tensors are read into memory of their
    own, so nothing done to the file afterwards (overwritten, truncated,
    deleted) changes them. Lengths are checked before they are read: a header
    that claims more than the file holds fails at once, and a source of unknown
    size (a pipe, a character device) is read in bounded pieces.

    mmap=True (a path only) maps the file instead, privately (writes to the
    tensors stay in this process), and holds a read lease on it (Linux): when
    anything later opens the file for writing or truncates it, the mapped data
    is first copied into memory, so the tensors still hold what was loaded and
    the process never sees SIGBUS. save replaces the file by renaming a new
    one over it, which leaves the mapping on the old file. Where no lease
    can be taken (the file open for writing elsewhere, owned by another user,
    a file system without leases, not Linux), the file is read into memory and
    a UserWarning says why. See Note [Leased mappings] in cgrad/_leasemap.py
    for the limits."""
    del weights_only  # the format holds only data
    if sys.byteorder != "little":
        raise NotImplementedError("cgrad.utils.safetensors.load on a big-endian machine")
    if isinstance(f, (str, bytes, os.PathLike)):
        with open(f, "rb", buffering=0) as fh:
            st = os.fstat(fh.fileno())
            regular = _stat.S_ISREG(st.st_mode)
            if mmap:
                if not regular:
                    raise ValueError(f"{_LOAD}: mmap=True needs a regular file, and this path names "
                                     "a pipe, a device or another special file")
                out = _load_mapped(fh.fileno(), map_location)
                if out is not None:
                    return out
                st = os.fstat(fh.fileno())
            size = st.st_size if regular else None
            tensors, meta = _read_all(fh, size, (lambda: _zip_names(os.fsdecode(f))) if regular else (lambda: None))
        return _finish(tensors, meta, map_location)
    if mmap:
        raise ValueError(f"{_LOAD}: f must be a file path in order to use the mmap argument")
    if not hasattr(f, "read"):
        raise TypeError(f"{_LOAD}: f must be a path or a binary file object, got {type(f).__name__}")
    if isinstance(f, io.TextIOBase):
        raise TypeError(f"{_LOAD}: the file object must be opened in binary mode")
    tensors, meta = _read_all(f, _source_size(f), _zip_names_of(f))
    return _finish(tensors, meta, map_location)


# ---------------------------------------------------------------- the safetensors package's conventions

def save_file(tensors: Dict[str, Any], filename: Union[str, "os.PathLike[str]"],
              metadata: Optional[Dict[str, str]] = None) -> None:
    """safetensors.torch.save_file: a flat {name: tensor} dict (and optional str -> str
    metadata) to a file that any safetensors reader loads."""
    if not isinstance(tensors, dict) or not all(isinstance(k, str) and isinstance(v, _C._TensorBase)
                                                for k, v in tensors.items()):
        raise TypeError("cgrad.utils.safetensors.save_file: tensors must be a dict of str -> Tensor")
    if metadata is not None and not (isinstance(metadata, dict) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())):
        raise TypeError("cgrad.utils.safetensors.save_file: metadata must be a dict of str -> str")
    if "__metadata__" in tensors:
        raise ValueError("cgrad.utils.safetensors.save_file: '__metadata__' is reserved and cannot name a tensor")
    head, data = _pack(tensors, metadata or {})
    _atomic_file.save_path(os.fsdecode(filename), lambda fh: _write(fh, head, data),
                           "cgrad.utils.safetensors.save_file")


def load_file(filename: Union[str, "os.PathLike[str]"], device: Union[str, int, "_C.device"] = "cpu"
              ) -> Dict[str, Any]:
    """safetensors.torch.load_file: the {name: tensor} dict of a safetensors file, on device."""
    got = load(filename, map_location=None)
    if not isinstance(got, dict) or not all(isinstance(v, _C._TensorBase) for v in got.values()):
        raise ValueError("cgrad.utils.safetensors.load_file: the file holds a nested checkpoint "
                         "(written by cgrad.utils.safetensors.save); read it with cgrad.utils.safetensors.load")
    dev = _C.device("cuda", device) if isinstance(device, int) and not isinstance(device, bool) else _C.device(device)
    return {k: (v if v.device == dev else v.to(dev)) for k, v in got.items()}

