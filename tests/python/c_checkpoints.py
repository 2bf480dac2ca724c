"""The C checkpoint API (cg_save_safetensors / cg_load_safetensors) through ctypes on the
engine the package loaded: used by test_c_checkpoints.py and the load_c fuzz target."""
from __future__ import annotations

import ctypes
import os
import tempfile
from typing import Dict, List, Optional, Tuple

from cgrad import _engine

DTYPE_CODES = {  # cg_dtype values (include/cgrad.h)
    "bool": 0, "uint8": 1, "int8": 2, "int16": 3, "int32": 4, "int64": 5, "float16": 6, "bfloat16": 7,
    "float32": 8, "float64": 9, "uint16": 10, "uint32": 11, "uint64": 12,
}
DTYPE_NAMES = {v: k for k, v in DTYPE_CODES.items()}
SIZES = {"bool": 1, "uint8": 1, "int8": 1, "int16": 2, "int32": 4, "int64": 8, "float16": 2, "bfloat16": 2,
         "float32": 4, "float64": 8, "uint16": 2, "uint32": 4, "uint64": 8}


def lib() -> ctypes.CDLL:
    L = _engine._handles[-1]
    if not getattr(L, "_cgrad_ckpt_typed", False):
        vp, cp, i64 = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int64
        for name, res, args in (
                ("cg_load_safetensors", vp, [cp]), ("cg_checkpoint_free", None, [vp]),
                ("cg_checkpoint_count", i64, [vp]), ("cg_checkpoint_name", cp, [vp, i64]),
                ("cg_checkpoint_tensor", vp, [vp, i64]), ("cg_checkpoint_metadata", cp, [vp, cp]),
                ("cg_save_safetensors", ctypes.c_int, [cp, i64, ctypes.POINTER(cp), ctypes.POINTER(vp)]),
                ("cg_last_error", ctypes.c_int, []), ("cg_last_error_message", cp, []),
                ("cg_tensor_release", None, [vp]), ("cg_tensor_ndim", ctypes.c_int, [vp]),
                ("cg_tensor_shape", ctypes.POINTER(i64), [vp]), ("cg_tensor_dtype", ctypes.c_int, [vp]),
                ("cg_tensor_numel", i64, [vp]), ("cg_tensor_data", vp, [vp]),
                ("cg_from_data", vp, [vp, ctypes.c_int, ctypes.POINTER(i64), ctypes.c_int])):
            f = getattr(L, name)
            f.restype = res
            f.argtypes = args
        L._cgrad_ckpt_typed = True
    return L


Loaded = Dict[str, Tuple[str, Tuple[int, ...], bytes]]  # name -> (dtype, shape, raw bytes)


def load(path: str) -> Tuple[Optional[Loaded], Optional[str], Dict[str, str]]:
    """(tensors, None, metadata) or (None, the error message, {})."""
    L = lib()
    c = L.cg_load_safetensors(os.fsencode(path))
    if not c:
        return None, L.cg_last_error_message().decode(), {}
    out: Loaded = {}
    try:
        for i in range(L.cg_checkpoint_count(c)):
            name = L.cg_checkpoint_name(c, i).decode()
            t = L.cg_checkpoint_tensor(c, i)
            nd = L.cg_tensor_ndim(t)
            shape = tuple(L.cg_tensor_shape(t)[k] for k in range(nd))
            dt = DTYPE_NAMES[L.cg_tensor_dtype(t)]
            n = L.cg_tensor_numel(t) * SIZES[dt]
            data = ctypes.string_at(L.cg_tensor_data(t), n) if n else b""
            L.cg_tensor_release(t)
            out[name] = (dt, shape, data)
        meta = {}
        for key in ("format", "cgrad.structure", "k"):
            v = L.cg_checkpoint_metadata(c, key.encode())
            if v is not None:
                meta[key] = v.decode()
    finally:
        L.cg_checkpoint_free(c)
    return out, None, meta


def load_bytes(data: bytes) -> Tuple[Optional[Loaded], Optional[str], Dict[str, str]]:
    fd, path = tempfile.mkstemp(suffix=".safetensors")
    try:
        os.write(fd, data)
        os.close(fd)
        return load(path)
    finally:
        os.unlink(path)


def save(path: str, tensors: Dict[str, Tuple[str, Tuple[int, ...], bytes]]) -> Optional[str]:
    """Build each tensor in C from (dtype, shape, raw bytes) and save them; None or the error message."""
    L = lib()
    made: List[int] = []
    keep = []
    try:
        for name, (dt, shape, raw) in tensors.items():
            buf = ctypes.create_string_buffer(raw, max(len(raw), 1))
            keep.append(buf)
            shp = (ctypes.c_int64 * max(len(shape), 1))(*shape)
            t = L.cg_from_data(ctypes.cast(buf, ctypes.c_void_p), len(shape), shp, DTYPE_CODES[dt])
            assert t, L.cg_last_error_message()
            made.append(t)
        n = len(made)
        names = (ctypes.c_char_p * max(n, 1))(*[k.encode() for k in tensors])
        ts = (ctypes.c_void_p * max(n, 1))(*made)
        st = L.cg_save_safetensors(os.fsencode(path), n, names, ts)
        return None if st == 0 else L.cg_last_error_message().decode()
    finally:
        for t in made:
            L.cg_tensor_release(t)
