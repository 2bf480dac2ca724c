"""torch values to cgrad values (`to_cgrad`) and cgrad results back to torch
(`to_torch`), for the op_db adapter. A tensor keeps its dtype, shape,
strides, storage offset and requires_grad; dtypes, devices, sizes,
memory formats and parameter-free modules become cgrad's; containers are
converted element by element."""
from __future__ import annotations

import inspect
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import torch

import cgrad


class Unsupported(Exception):
    """A sample value with no cgrad counterpart in this suite's scope (sparse, complex, a Generator...)."""


def dtype_to_cgrad(d: torch.dtype) -> Any:
    name = str(d).split(".")[-1]
    try:
        return getattr(cgrad, name)
    except AttributeError:
        raise Unsupported(f"dtype {name}") from None


def dtype_to_torch(d: Any) -> torch.dtype:
    return getattr(torch, str(d).split(".")[-1])


def _array_to_cgrad(t: torch.Tensor, dt: Any) -> Any:
    if t.dtype == torch.bfloat16:
        return cgrad.tensor(t.float().numpy()).to(dt)
    return cgrad.tensor(t.numpy(), dtype=dt)


def _tensor_to_cgrad(t: torch.Tensor, leaves: List[Tuple[torch.Tensor, Any]], memo: Dict[Any, Any]) -> Any:
    if t.layout != torch.strided:
        raise Unsupported(f"layout {t.layout}")
    if t.is_complex() or t.is_quantized:
        raise Unsupported(f"dtype {t.dtype}")
    dt = dtype_to_cgrad(t.dtype)
    if t.device.type == "meta":  # shapes and dtypes only, as cgrad's meta device
        return cgrad.empty(tuple(t.shape), dtype=dt, device="meta")
    ptr = t.untyped_storage().data_ptr()
    if ptr and ptr in memo.get("shared", ()):  # storage shared with another tensor of the sample: share it too
        key = ("base", ptr, t.dtype)
        if key not in memo:
            memo[key] = _array_to_cgrad(torch.empty(0, dtype=t.dtype).set_(t.untyped_storage()), dt)
        c = cgrad.as_strided(memo[key], tuple(t.shape), tuple(t.stride()), t.storage_offset())
    elif t.is_contiguous() and t.storage_offset() == 0 and t.untyped_storage().nbytes() == t.numel() * t.element_size():
        c = _array_to_cgrad(t.detach().reshape(-1), dt).reshape(tuple(t.shape))
    else:  # the whole storage, so a sample that reaches outside the view (as_strided) sees the same elements
        storage = torch.empty(0, dtype=t.dtype).set_(t.untyped_storage())
        c = cgrad.as_strided(_array_to_cgrad(storage, dt), tuple(t.shape), tuple(t.stride()), t.storage_offset())
    if t.requires_grad:
        c.requires_grad_(True)
        leaves.append((t, c))
    return c


def shared_storages(*values: Any) -> Dict[Any, Any]:
    """A memo for to_cgrad: the storages that more than one distinct tensor of the values uses."""
    seen: Dict[int, set] = {}
    for t in flatten(list(values)):
        if isinstance(t, torch.Tensor) and t.layout == torch.strided:
            seen.setdefault(t.untyped_storage().data_ptr(), set()).add(id(t))
    return {"shared": {p for p, ids in seen.items() if p and len(ids) > 1}}


def to_cgrad(v: Any, leaves: List[Tuple[torch.Tensor, Any]], memo: Optional[Dict[Any, Any]] = None) -> Any:
    """v as cgrad sees it; each tensor that requires grad is appended to leaves as (torch, cgrad). With memo
    (shared_storages of the sample), a tensor passed twice (an input and out=) stays one tensor, and tensors
    sharing a storage share one in cgrad."""
    if memo is None:
        memo = {}
    if isinstance(v, torch.Tensor):
        if id(v) not in memo:
            memo[id(v)] = (v, _tensor_to_cgrad(v, leaves, memo))
        return memo[id(v)][1]
    if isinstance(v, torch.dtype):
        return dtype_to_cgrad(v)
    if isinstance(v, torch.device):
        return cgrad.device(str(v))
    if isinstance(v, torch.Size):
        return tuple(v)
    if isinstance(v, torch.memory_format):
        name = str(v).split(".")[-1]
        if not hasattr(cgrad, name):
            raise Unsupported(f"memory format {name}")
        return getattr(cgrad, name)
    if isinstance(v, torch.layout):
        if v != torch.strided:
            raise Unsupported(f"layout {v}")
        return getattr(cgrad, "strided", v)
    if isinstance(v, torch.nn.Module):  # a parameter-free module given as an argument (a distance_function)
        cls = getattr(cgrad.nn, type(v).__name__, None)
        if cls is None or any(True for _ in v.parameters()):
            raise Unsupported(f"module {type(v).__name__}")
        names = [n for n in inspect.signature(type(v).__init__).parameters if n != "self"]
        alias = {"p": "norm"}  # PairwiseDistance keeps p as .norm
        return cls(**{n: getattr(v, n if hasattr(v, n) else alias.get(n, n)) for n in names
                      if hasattr(v, n) or hasattr(v, alias.get(n, n))})
    if isinstance(v, torch.Generator):
        raise Unsupported("torch.Generator")
    if isinstance(v, complex):
        raise Unsupported("a complex scalar")
    if isinstance(v, tuple):
        return type(v)(*(to_cgrad(x, leaves, memo) for x in v)) if hasattr(v, "_fields") else \
            tuple(to_cgrad(x, leaves, memo) for x in v)
    if isinstance(v, list):
        return [to_cgrad(x, leaves, memo) for x in v]
    if isinstance(v, dict):
        return {k: to_cgrad(x, leaves, memo) for k, x in v.items()}
    return v


def tensor_to_torch(c: Any) -> torch.Tensor:
    dt = dtype_to_torch(c.dtype)
    c = c.detach()
    if dt == torch.bfloat16:
        return torch.from_numpy(np.array(c.float().numpy())).to(dt)
    return torch.from_numpy(np.array(c.numpy())).to(dt)


def to_torch(v: Any) -> Any:
    """A cgrad result as torch values, for comparison (tuples of any kind become tuples)."""
    if isinstance(v, cgrad.Tensor):
        return tensor_to_torch(v)
    if isinstance(v, cgrad.dtype):
        return dtype_to_torch(v)
    if isinstance(v, cgrad.Size):
        return torch.Size(v)
    if isinstance(v, cgrad.device):
        return torch.device(str(v))
    if isinstance(v, (tuple, list)):
        return type(v)(to_torch(x) for x in v) if not hasattr(v, "_fields") else tuple(to_torch(x) for x in v)
    if isinstance(v, dict):
        return {k: to_torch(x) for k, x in v.items()}
    return v


def flatten(v: Any) -> List[Any]:
    """The leaves of a nested tuple / list / dict result, in order."""
    if isinstance(v, (tuple, list)):
        return [y for x in v for y in flatten(x)]
    if isinstance(v, dict):
        return [y for k in v for y in flatten(v[k])]
    return [v]
