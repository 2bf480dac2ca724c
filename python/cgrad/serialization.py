"""Checkpoints: cgrad.save / cgrad.load in the safetensors format.

A file is an 8-byte little-endian header length N, N bytes of JSON header
({name: {"dtype", "shape", "data_offsets"}, "__metadata__": {str: str}}) and the
raw little-endian tensor data. Nested dicts / lists / tuples of tensors and
plain values (int, float, bool, str, None, dtype, device) are flattened to
tensor names; their structure is kept as JSON in __metadata__["cgrad.structure"],
so model and optimizer state dicts round-trip. Plain {name: tensor} files are
exchanged with the safetensors library both ways. There is no pickle: loading
never runs code, and the loader validates every field of the header before
touching the data. Files given by path load zero-copy through a private
(copy-on-write) mmap that the loaded tensors keep alive."""
from __future__ import annotations

import builtins
import json
import math
import mmap as _mmap
import os
import struct
import sys
from typing import IO, Any, Callable, Dict, List, Optional, Tuple, Union

from . import _C

FileLike = Union[str, "os.PathLike[str]", IO[bytes]]
MapLocation = Union[None, str, "_C.device", Dict[str, str], Callable[..., Any]]

STRUCTURE_KEY = "cgrad.structure"
FORMAT_KEY = "format"
MAX_HEADER = 100_000_000  # the safetensors library's bound on the header size
_INT64_MAX = (1 << 63) - 1

# safetensors dtype code -> (cgrad dtype name, element size, memoryview format, view-as dtype name)
_DTYPES: Dict[str, Tuple[str, int, str, Optional[str]]] = {
    "F64": ("float64", 8, "d", None),
    "F32": ("float32", 4, "f", None),
    "F16": ("float16", 2, "h", "float16"),
    "BF16": ("bfloat16", 2, "h", "bfloat16"),
    "I64": ("int64", 8, "q", None),
    "I32": ("int32", 4, "i", None),
    "I16": ("int16", 2, "h", None),
    "I8": ("int8", 1, "b", None),
    "U8": ("uint8", 1, "B", None),
    "BOOL": ("bool", 1, "?", None),
}
_CODES = {v[0]: k for k, v in _DTYPES.items()}
# dtypes of the safetensors format that cgrad has no tensor type for
_UNSUPPORTED = {"U16", "U32", "U64", "F8_E4M3", "F8_E5M2", "F8_E8M0", "F4", "F6_E2M3", "F6_E3M2", "C64"}


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
                    raise TypeError(f"cgrad.save: dict keys must be str, int, float, bool, None or tuples, "
                                    f"got {type(k).__name__}")
                items.append([self.encode(k, ""), self.encode(v, _join(path, k))])
            return {"d": items}
        if isinstance(obj, tuple):
            return {"t": [self.encode(v, _join(path, i)) for i, v in enumerate(obj)]}
        if isinstance(obj, list):
            return {"l": [self.encode(v, _join(path, i)) for i, v in enumerate(obj)]}
        raise TypeError(f"cgrad.save: cannot save an object of type {type(obj).__name__}; checkpoints hold "
                        "tensors, numbers, strings, None, dtypes, devices and dicts / lists / tuples of them")


def _join(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


def _tensor_bytes(t: Any) -> bytes:
    t = t.detach()
    if t.device.type == "meta":
        raise ValueError("cgrad.save: cannot save a tensor on the meta device (it has no data)")
    if t.device.type != "cpu":
        t = t.cpu()
    return t._to_bytes()  # row-major, so non-contiguous views are saved contiguous


def _serialize(obj: Any) -> Tuple[bytes, List[bytes]]:
    if sys.byteorder != "little":
        raise NotImplementedError("cgrad.save on a big-endian machine")
    fl = _Flattener()
    structure = fl.encode(obj, "")
    # widest elements first so every tensor stays aligned to its element size
    order = sorted(fl.tensors, key=lambda n: (-fl.tensors[n].element_size(), n))
    header: Dict[str, Any] = {}
    chunks: List[bytes] = []
    offset = 0
    for name in order:
        t = fl.tensors[name]
        data = _tensor_bytes(t)
        header[name] = {"dtype": _CODES[_dtype_name(t.dtype)], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    meta = {FORMAT_KEY: "pt", STRUCTURE_KEY: json.dumps(structure, separators=(",", ":"))}
    header["__metadata__"] = meta
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)  # data starts 8-byte aligned
    return struct.pack("<Q", len(text)) + text, chunks


def save(obj: object, f: FileLike) -> None:
    """Save a tensor, or a nested dict / list / tuple of tensors and plain
    values (a state dict), to a path or binary file object, in the safetensors
    format. Tensors are saved contiguous and detached (as data)."""
    head, chunks = _serialize(obj)
    if isinstance(f, (str, bytes, os.PathLike)):
        with open(f, "wb") as fh:
            _write(fh, head, chunks)
    elif hasattr(f, "write"):
        _write(f, head, chunks)
    else:
        raise TypeError(f"cgrad.save: f must be a path or a binary file object, got {type(f).__name__}")


def _write(fh: Any, head: bytes, chunks: List[bytes]) -> None:
    fh.write(head)
    for c in chunks:
        fh.write(c)


# ---------------------------------------------------------------- load

def _bad(msg: str) -> ValueError:
    return ValueError(f"cgrad.load: invalid checkpoint: {msg}")


def _unique(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"duplicate key {k!r}")
        out[k] = v
    return out


def _parse_header(buf: Any, size: int) -> Tuple[int, Dict[str, Any], Dict[str, str]]:
    """Validate the header; returns (data start, {name: (code, shape, begin, end)}, metadata)."""
    if size < 8:
        raise _bad(f"the file has {size} bytes, fewer than the 8-byte header length")
    (n,) = struct.unpack_from("<Q", buf, 0)
    if n > MAX_HEADER:
        raise _bad(f"header length {n} exceeds the limit of {MAX_HEADER} bytes")
    if 8 + n > size:
        raise _bad(f"header length {n} runs past the end of the file ({size} bytes)")
    try:
        header = json.loads(bytes(buf[8:8 + n]).decode("utf-8"), object_pairs_hook=_unique)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise _bad(f"the header is not valid UTF-8 JSON ({e})") from None
    if not isinstance(header, dict):
        raise _bad(f"the header is a JSON {type(header).__name__}, not an object")
    meta = header.pop("__metadata__", None)
    if meta is None:
        meta = {}
    if not isinstance(meta, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in meta.items()):
        raise _bad("__metadata__ must map strings to strings")
    data_len = size - 8 - n
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
        if end > data_len:
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
    if covered != data_len:
        raise _bad(f"the tensors cover {covered} bytes but the data section has {data_len}")
    return 8 + n, entries, meta


def _make_tensor(view: memoryview, base: int, start: int, code: str, shape: List[int]) -> Any:
    name, size, fmt, as_dtype = _DTYPES[code]
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
    t = _C.asarray(raw.cast(fmt, shape))  # type: ignore[call-overload]  # shares the buffer, which it keeps alive
    if as_dtype is not None:
        t = t.view(dtype)
    return t


def _address(view: memoryview) -> int:
    """The address of the buffer's first byte."""
    return int(_C.asarray(view[0:1]).data_ptr())


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
    raise TypeError(f"cgrad.load: map_location must be None, a str, a device, a dict or a callable, "
                    f"got {type(map_location).__name__}")


def _open(f: FileLike, use_mmap: Optional[bool]) -> Tuple[Any, int]:
    """The file's bytes as a writable buffer (a private mmap or a bytearray)."""
    if isinstance(f, (str, bytes, os.PathLike)):
        with open(f, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if use_mmap is not False and size > 0:
                return _mmap.mmap(fh.fileno(), 0, access=_mmap.ACCESS_COPY), size
            whole = bytearray(fh.read())
            return whole, len(whole)
    if hasattr(f, "read"):
        data = f.read()
        if not isinstance(data, (bytes, bytearray)):
            raise TypeError("cgrad.load: the file object must be opened in binary mode")
        buf = bytearray(data)
        return buf, len(buf)
    raise TypeError(f"cgrad.load: f must be a path or a binary file object, got {type(f).__name__}")


def load(f: FileLike, map_location: MapLocation = None, weights_only: bool = True, *,
         mmap: Optional[bool] = None) -> Any:
    """Load what cgrad.save wrote (or any safetensors file, as a {name: tensor}
    dict). Nothing in the file can run code, whatever weights_only says.
    Files given by path are memory-mapped (copy-on-write) and their tensors
    share the mapping; mmap=False reads them into memory instead."""
    del weights_only  # the format holds only data
    if sys.byteorder != "little":
        raise NotImplementedError("cgrad.load on a big-endian machine")
    buf, size = _open(f, mmap)
    view = memoryview(buf)
    try:
        start, entries, meta = _parse_header(view, size)
        base = _address(view) if entries else 0
        tensors = {name: _relocate(_make_tensor(view, base, start + b, code, shape), map_location)
                   for name, (code, shape, b, _) in entries.items()}
        if STRUCTURE_KEY not in meta:
            return tensors
        try:
            return _decode(json.loads(meta[STRUCTURE_KEY]), tensors)
        except RecursionError:
            raise _bad("cgrad.structure is nested too deeply") from None
        except json.JSONDecodeError as e:
            raise _bad(f"cgrad.structure is not valid JSON ({e})") from None
    finally:
        view.release()  # tensors hold their own exports of the buffer
