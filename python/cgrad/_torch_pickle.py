"""PyTorch's pickle conventions for checkpoints (cgrad.save / cgrad.load).

Writing: TorchPickler pickles cgrad tensors, Parameters, dtypes, devices and
Sizes under the global names torch.load resolves (torch._utils._rebuild_tensor_v2,
torch.FloatStorage, torch.float32, torch.device, ...). Each storage becomes a
persistent id ('storage', <storage class>, key, location, numel) whose bytes
the container (serialization.py) writes; views of one storage share it. The
names are written as GLOBAL opcodes without importing torch, which is why the
pickler is the pure-Python one (the C pickler checks every global by import).

Reading: the unpicklers map those names back to cgrad's rebuild functions.
WeightsOnlyUnpickler resolves nothing else: Note [weights-only].
FullUnpickler imports any global, with torch.* names resolved to cgrad.*.

Note [weights-only]
A pickle runs code only through the globals it names (REDUCE / NEWOBJ / BUILD
call what find_class returned). The weights-only unpickler's find_class
returns only the callables of the allowlist below (containers, cgrad's
rebuild functions, dtypes, devices, Size) and the names registered with
add_safe_globals / safe_globals; any other name raises
pickle.UnpicklingError before anything is called. copyreg extension codes go
through find_class too, so they are refused the same way."""
from __future__ import annotations

import collections
import importlib
import pickle
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple, Union

from . import _C

# dtype name -> PyTorch's legacy typed storage class (torch.<name>)
STORAGE_NAMES: Dict[str, str] = {
    "float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage",
    "bfloat16": "BFloat16Storage", "int64": "LongStorage", "int32": "IntStorage", "int16": "ShortStorage",
    "int8": "CharStorage", "uint8": "ByteStorage", "bool": "BoolStorage",
}
# dtypes without a typed storage class: saved as torch.UntypedStorage + _rebuild_tensor_v3, as PyTorch does
V3_DTYPES = ("uint16", "uint32", "uint64")
# PyTorch dtypes cgrad has no tensor type for
_MISSING_DTYPES = ("complex32", "complex64", "complex128", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
                   "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2", "qint8", "quint8", "qint32",
                   "quint4x2", "quint2x4", "bits1x8", "bits2x4", "bits4x2", "bits8", "bits16",
                   "uint1", "uint2", "uint3", "uint4", "uint5", "uint6", "uint7",
                   "int1", "int2", "int3", "int4", "int5", "int6", "int7")


def dtype_name(dt: Any) -> str:
    return str(dt).rsplit(".", 1)[-1]


class TorchGlobal:
    """A global written as GLOBAL 'module name' (a torch name cgrad does not import)."""
    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module = module
        self.name = name

    def __call__(self, *args: Any) -> Any:  # the pickler's save_reduce wants a callable; never called
        raise TypeError(f"{self.module}.{self.name} is a name written into checkpoints, not a function")


_GLOBALS: Dict[Tuple[str, str], TorchGlobal] = {}


def torch_global(module: str, name: str) -> TorchGlobal:
    key = (module, name)
    g = _GLOBALS.get(key)
    if g is None:
        g = _GLOBALS[key] = TorchGlobal(module, name)
    return g


class StorageRef:
    """A storage being saved: the tensor whose storage it is, its dtype, its key and its location ('cpu',
    'cuda:N'). A cuda storage is saved from a CPU copy of all of it (`tensor` is then that copy)."""
    __slots__ = ("tensor", "dtype", "key", "nbytes", "base", "location")

    def __init__(self, tensor: Any, key: str, nbytes: int, base: int, location: str = "cpu") -> None:
        self.tensor = tensor  # keeps the memory alive until the container has written it
        self.dtype = tensor.dtype
        self.key = key
        self.nbytes = nbytes
        self.base = base  # address of the storage's first byte (in host memory)
        self.location = location


class StorageTable:
    """The storages met while pickling, in order, one per engine storage."""

    def __init__(self) -> None:
        self.refs: Dict[Any, StorageRef] = {}

    def ref(self, t: Any) -> StorageRef:
        sid, nbytes = t._storage_key()
        if t.device.type == "cuda":  # the whole storage, copied to the host (the file holds its bytes)
            key = ("cuda", sid)
            r = self.refs.get(key)
            if r is None:
                n = nbytes // t.element_size()
                with _no_grad():
                    host = t.detach().as_strided((n,), (1,), 0).cpu() if n else _C.empty(0, dtype=t.dtype)
                r = self.refs[key] = StorageRef(host, str(len(self.refs)), n * t.element_size(),
                                                host.data_ptr() if n else 0, str(t.device))
            elif r.dtype != t.dtype:
                raise RuntimeError(f"cgrad.save: cannot save tensors of dtypes {dtype_name(r.dtype)} and "
                                   f"{dtype_name(t.dtype)} that view the same storage (as PyTorch refuses too); "
                                   "save a .clone() of one of them")
            return r
        base = t.data_ptr() - t.storage_offset() * t.element_size() if nbytes else 0
        # keyed by the memory's address: two engine storages over one buffer (view(dtype), from_numpy
        # twice) are one storage in the file, as they are one in PyTorch
        key = ("at", base, nbytes) if nbytes else ("id", sid)
        r = self.refs.get(key)
        if r is None:
            r = self.refs[key] = StorageRef(t, str(len(self.refs)), nbytes, base)
        elif r.dtype != t.dtype:
            raise RuntimeError(f"cgrad.save: cannot save tensors of dtypes {dtype_name(r.dtype)} and "
                               f"{dtype_name(t.dtype)} that view the same storage (as PyTorch refuses too); "
                               "save a .clone() of one of them")
        return r

    def __iter__(self) -> Iterator[StorageRef]:
        return iter(self.refs.values())


_PLAIN_TYPES = frozenset((str, int, float, bool, tuple, list, dict, type(None), bytes, collections.OrderedDict))


class TorchPickler(pickle._Pickler):  # type: ignore[name-defined,misc]
    """Pickles cgrad objects under PyTorch's names; legacy=True writes the 6-field storage ids of
    PyTorch's pre-1.6 format."""

    dispatch = pickle._Pickler.dispatch.copy()  # type: ignore[attr-defined]

    def __init__(self, file: Any, protocol: int, storages: StorageTable, legacy: bool = False) -> None:
        super().__init__(file, protocol)
        self.storages = storages
        self.legacy = legacy

    def save_torch_global(self, obj: TorchGlobal) -> None:
        if self.proto >= 4:
            self.save(obj.module)
            self.save(obj.name)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + obj.module.encode("utf-8") + b"\n" + obj.name.encode("utf-8") + b"\n")
        self.memoize(obj)

    dispatch[TorchGlobal] = save_torch_global

    def save_dtype(self, obj: Any) -> None:
        self.save(torch_global("torch", dtype_name(obj)))

    dispatch[_C.dtype] = save_dtype

    def persistent_id(self, obj: Any) -> Any:
        if not isinstance(obj, StorageRef):
            return None
        name = dtype_name(obj.dtype)
        if name in V3_DTYPES:
            if self.legacy:
                raise RuntimeError(f"cgrad.save: the legacy format (_use_new_zipfile_serialization=False) cannot "
                                   f"hold {name} tensors (PyTorch cannot read them back from it); use the zip format")
            cls, numel = torch_global("torch.storage", "UntypedStorage"), obj.nbytes
        else:
            cls, numel = torch_global("torch", STORAGE_NAMES[name]), obj.nbytes // obj.tensor.element_size()
        if self.legacy:
            return ("storage", cls, obj.key, obj.location, numel, None)
        return ("storage", cls, obj.key, obj.location, numel)

    def reducer_override(self, obj: Any) -> Any:
        if type(obj) in _PLAIN_TYPES:
            return NotImplemented
        if isinstance(obj, _C._TensorBase):
            return self._reduce_tensor(obj)
        if isinstance(obj, _C.device):
            args = (obj.type,) if obj.index is None else (obj.type, obj.index)
            return (torch_global("torch", "device"), args)
        if isinstance(obj, _C.Size):
            return (torch_global("torch", "Size"), (tuple(obj),))
        return NotImplemented

    def _reduce_tensor(self, t: Any) -> Any:
        from .nn.parameter import Parameter
        if t.device.type == "meta":
            raise ValueError("cgrad.save: cannot save a tensor on the meta device (it has no data)")
        if t.device.type not in ("cpu", "cuda"):
            raise NotImplementedError(f"cgrad.save of a tensor on {t.device}")
        hooks: collections.OrderedDict = collections.OrderedDict()
        if isinstance(t, Parameter):
            data = t.detach()
            if t.__dict__:
                return (torch_global("torch._utils", "_rebuild_parameter_with_state"),
                        (data, t.requires_grad, hooks, dict(t.__dict__)))
            return (torch_global("torch._utils", "_rebuild_parameter"), (data, t.requires_grad, hooks))
        ref = self.storages.ref(t)
        args: Tuple[Any, ...] = (ref, t.storage_offset(), tuple(t.shape), tuple(t.stride()), t.requires_grad, hooks)
        if dtype_name(t.dtype) in V3_DTYPES:
            func, args = torch_global("torch._utils", "_rebuild_tensor_v3"), args + (t.dtype,)
        else:
            func = torch_global("torch._utils", "_rebuild_tensor_v2")
        from ._tensor import Tensor
        if type(t) is Tensor and not t.__dict__:
            return (func, args)
        cls = torch_global("torch", "Tensor") if type(t) is Tensor else type(t)
        return (torch_global("torch._tensor", "_rebuild_from_type_v2"), (func, cls, args, dict(t.__dict__)))


# ---------------------------------------------------------------- reading

class StorageType:
    """What torch.FloatStorage & co. resolve to when loading: the dtype of the storage's elements."""
    __slots__ = ("dtype", "name")

    def __init__(self, dtype: Any, name: str) -> None:
        self.dtype = dtype
        self.name = name

    def __repr__(self) -> str:
        return f"<storage type torch.{self.name}>"


class LoadedStorage:
    """A storage read from a checkpoint: a flat tensor of its elements (uint8 for an untyped one).
    map_location callables receive it as PyTorch's receive an UntypedStorage."""
    __slots__ = ("data", "location", "_typed")

    def __init__(self, data: Any, location: str) -> None:
        self.data = data
        self.location = location
        self._typed: Dict[str, Any] = {}

    def typed(self, dtype: Any) -> Any:
        """An untyped storage's bytes as dtype elements: one copy per dtype, shared by its tensors
        (the engine views a tensor as another dtype only at the same element size)."""
        name = dtype_name(dtype)
        t = self._typed.get(name)
        if t is None:
            size = _C.empty(0, dtype=dtype).element_size()
            n = self.data.numel()
            if n % size:
                raise _bad(f"an untyped storage of {n} bytes holds {name} elements of {size} bytes")
            t = self._typed[name] = _C._from_bytes(self.data._to_bytes(), dtype, (n // size,), self.data.device)
        return t

    @property
    def device(self) -> Any:
        return self.data.device

    @property
    def dtype(self) -> Any:
        return self.data.dtype

    def nbytes(self) -> int:
        return int(self.data.numel() * self.data.element_size())

    def size(self) -> int:
        return int(self.data.numel())

    def __len__(self) -> int:
        return self.size()

    def cpu(self) -> "LoadedStorage":
        return self if self.data.device.type == "cpu" else LoadedStorage(self.data.cpu(), "cpu")

    def to(self, device: Any) -> "LoadedStorage":
        data = self.data.to(device)
        return LoadedStorage(data, str(data.device))

    def cuda(self, device: Any = None) -> "LoadedStorage":
        dev = _C.device("cuda") if device is None else _C.device("cuda", device) if isinstance(device, int) \
            else _C.device(device)
        data = self.data.to(dev)
        return LoadedStorage(data, str(data.device))

    def __repr__(self) -> str:
        return f"<storage of {self.size()} {dtype_name(self.dtype)} on {self.location}>"


def _bad(msg: str) -> pickle.UnpicklingError:
    return pickle.UnpicklingError(f"cgrad.load: invalid checkpoint: {msg}")


def _int_tuple(v: Any, what: str) -> Tuple[int, ...]:
    if not isinstance(v, (tuple, list)) or not all(type(x) is int for x in v):
        raise _bad(f"the {what} of a tensor must be a tuple of ints, got {v!r:.80}")
    return tuple(v)


def _as_tensor_of(storage: Any, dtype: Any, offset: Any, size: Any, stride: Any) -> Any:
    """The tensor (size, stride, offset) over the storage's elements, checked to lie inside it."""
    if not isinstance(storage, LoadedStorage):
        raise _bad(f"a tensor's storage must be a storage record, got {type(storage).__name__}")
    size = _int_tuple(size, "size")
    stride = _int_tuple(stride, "stride")
    if len(size) != len(stride):
        raise _bad(f"a tensor has size {size} but stride {stride}")
    if type(offset) is not int or offset < 0 or any(s < 0 for s in size) or any(s < 0 for s in stride):
        raise _bad(f"a tensor has a negative offset, size or stride (offset {offset}, size {size}, stride {stride})")
    data = storage.data
    if data.dtype != dtype:
        if data.dtype != _C.uint8:
            raise _bad(f"a {dtype_name(dtype)} tensor refers to a {dtype_name(data.dtype)} storage")
        data = storage.typed(dtype)
    numel = 1
    for s in size:
        numel *= s
    n = data.numel()
    if numel:
        last = offset + sum((s - 1) * st for s, st in zip(size, stride))
        if last >= n:
            raise _bad(f"a tensor of size {size}, stride {stride} and offset {offset} reaches element {last} "
                       f"of a storage of {n} elements")
    elif offset > n:
        raise _bad(f"a tensor's offset {offset} lies beyond its storage of {n} elements")
    contiguous = all(st == c for st, c in zip(stride, _contiguous_strides(size)))
    with _no_grad():
        if offset == 0 and numel == n and contiguous:
            return data.view(size) if size != tuple(data.shape) else data.detach()
        return data.as_strided(size, stride, offset)


def _contiguous_strides(size: Tuple[int, ...]) -> List[int]:
    out = [1] * len(size)
    acc = 1
    for i in range(len(size) - 1, -1, -1):
        out[i] = acc
        acc *= max(size[i], 1)
    return out


def _no_grad() -> Any:
    from .autograd.grad_mode import no_grad
    return no_grad()


def _finish_tensor(t: Any, requires_grad: Any) -> Any:
    if type(requires_grad) is not bool:
        raise _bad(f"requires_grad must be a bool, got {type(requires_grad).__name__}")
    if requires_grad:
        t.requires_grad_(True)
    return t


def rebuild_tensor_v2(storage: Any, storage_offset: Any, size: Any, stride: Any, requires_grad: Any,
                      backward_hooks: Any, metadata: Any = None) -> Any:
    """torch._utils._rebuild_tensor_v2 (hooks are not serialized; metadata holds only PyTorch's
    conj / neg bits, which cgrad's real dtypes never set)."""
    if not isinstance(storage, LoadedStorage):
        raise _bad("_rebuild_tensor_v2 needs a storage")
    return _finish_tensor(_as_tensor_of(storage, storage.dtype, storage_offset, size, stride), requires_grad)


def rebuild_tensor_v3(storage: Any, storage_offset: Any, size: Any, stride: Any, requires_grad: Any,
                      backward_hooks: Any, dtype: Any, metadata: Any = None) -> Any:
    """torch._utils._rebuild_tensor_v3: an untyped storage viewed as dtype."""
    if not isinstance(dtype, _C.dtype):
        raise _bad(f"_rebuild_tensor_v3 needs a dtype, got {type(dtype).__name__}")
    return _finish_tensor(_as_tensor_of(storage, dtype, storage_offset, size, stride), requires_grad)


def rebuild_tensor(storage: Any, storage_offset: Any, size: Any, stride: Any) -> Any:
    """torch._utils._rebuild_tensor (checkpoints of PyTorch < 1.0)."""
    return rebuild_tensor_v2(storage, storage_offset, size, stride, False, None)


def _check_tensor(data: Any, who: str) -> None:
    if not isinstance(data, _C._TensorBase):
        raise _bad(f"{who} needs a tensor, got {type(data).__name__}")


def rebuild_parameter(data: Any, requires_grad: Any, backward_hooks: Any) -> Any:
    """torch._utils._rebuild_parameter."""
    from .nn.parameter import Parameter
    _check_tensor(data, "_rebuild_parameter")
    if type(requires_grad) is not bool:
        raise _bad("_rebuild_parameter: requires_grad must be a bool")
    return Parameter(data, requires_grad)


def rebuild_parameter_with_state(data: Any, requires_grad: Any, backward_hooks: Any, state: Any) -> Any:
    """torch._utils._rebuild_parameter_with_state: a Parameter with Python attributes."""
    p = rebuild_parameter(data, requires_grad, backward_hooks)
    return _set_state(p, state)


def _set_state(obj: Any, state: Any) -> Any:
    if state is None:
        return obj
    if isinstance(state, tuple) and len(state) == 2:
        dict_state, slots_state = state
    else:
        dict_state, slots_state = state, None
    for part in (dict_state, slots_state):
        if part is None:
            continue
        if not isinstance(part, dict) or not all(isinstance(k, str) for k in part):
            raise _bad(f"the state of a {type(obj).__name__} must be a dict of str keys")
        for k, v in part.items():
            setattr(obj, k, v)
    return obj


def rebuild_from_type_v2(func: Any, new_type: Any, args: Any, state: Any) -> Any:
    """torch._tensor._rebuild_from_type_v2: a tensor of a subclass, or with Python attributes."""
    from ._tensor import Tensor
    if func not in _REBUILD_FUNCTIONS:
        raise _bad("_rebuild_from_type_v2 calls a function that is not a tensor rebuild function")
    if not isinstance(args, tuple):
        raise _bad("_rebuild_from_type_v2 needs a tuple of arguments")
    ret = func(*args)
    if not isinstance(new_type, type) or not issubclass(new_type, Tensor):
        raise _bad(f"_rebuild_from_type_v2 names {new_type!r}, which is not a tensor class")
    if type(ret) is not new_type:
        ret = _C._make_subclass(new_type, ret, ret.requires_grad)
    if state is not None:
        setstate = getattr(type(ret), "__setstate__", None)
        if setstate is not None and setstate is not getattr(Tensor, "__setstate__", None):
            ret.__setstate__(state)
        else:
            _set_state(ret, state)
    return ret


def rebuild_meta_tensor_no_storage(dtype: Any, size: Any, stride: Any, requires_grad: Any) -> Any:
    """torch._utils._rebuild_meta_tensor_no_storage: a meta tensor."""
    size, stride = _int_tuple(size, "size"), _int_tuple(stride, "stride")
    if not isinstance(dtype, _C.dtype):
        raise _bad("_rebuild_meta_tensor_no_storage needs a dtype")
    with _no_grad():
        t = _C.empty(size, dtype=dtype, device="meta").as_strided(size, stride)
    return _finish_tensor(t, requires_grad)


def rebuild_device_tensor_from_cpu_tensor(data: Any, dtype: Any, device: Any, requires_grad: Any) -> Any:
    """torch._utils._rebuild_device_tensor_from_cpu_tensor."""
    _check_tensor(data, "_rebuild_device_tensor_from_cpu_tensor")
    return _finish_tensor(data.to(device=device, dtype=dtype), requires_grad)


def rebuild_device_tensor_from_numpy(data: Any, dtype: Any, device: Any, requires_grad: Any) -> Any:
    """torch._utils._rebuild_device_tensor_from_numpy."""
    t = _C.from_numpy(data)
    return _finish_tensor(t.to(device=device, dtype=dtype), requires_grad)


def _unsupported(what: str, qualname: str) -> Callable[..., Any]:
    def rebuild(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"cgrad.load: the checkpoint holds {what} ({qualname}), which cgrad does not have")
    rebuild.__qualname__ = rebuild.__name__ = qualname.rsplit(".", 1)[-1]
    return rebuild


def _codecs_encode(obj: Any, encoding: Any = "utf-8", errors: str = "strict") -> bytes:
    """_codecs.encode as protocol-2 pickles use it for bytes: text to latin-1 only."""
    if not isinstance(obj, str) or encoding not in ("latin1", "latin-1"):
        raise _bad("_codecs.encode is allowed only to turn text into bytes as latin-1")
    return obj.encode("latin-1")


_REBUILD_FUNCTIONS = (rebuild_tensor_v2, rebuild_tensor_v3, rebuild_tensor, rebuild_parameter,
                      rebuild_parameter_with_state, rebuild_meta_tensor_no_storage,
                      rebuild_device_tensor_from_cpu_tensor, rebuild_device_tensor_from_numpy)


def _torch_names() -> Dict[str, Any]:
    """torch.* name -> what it resolves to in cgrad, for both unpicklers."""
    from ._tensor import Tensor
    from .nn.parameter import Parameter
    names: Dict[str, Any] = {
        "torch._utils._rebuild_tensor_v2": rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": rebuild_tensor_v3,
        "torch._utils._rebuild_tensor": rebuild_tensor,
        "torch._utils._rebuild_parameter": rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": rebuild_parameter_with_state,
        "torch._utils._rebuild_meta_tensor_no_storage": rebuild_meta_tensor_no_storage,
        "torch._utils._rebuild_device_tensor_from_cpu_tensor": rebuild_device_tensor_from_cpu_tensor,
        "torch._utils._rebuild_device_tensor_from_numpy": rebuild_device_tensor_from_numpy,
        "torch._utils._rebuild_qtensor": _unsupported("a quantized tensor", "torch._utils._rebuild_qtensor"),
        "torch._utils._rebuild_sparse_tensor": _unsupported("a sparse tensor", "torch._utils._rebuild_sparse_tensor"),
        "torch._utils._rebuild_nested_tensor": _unsupported("a nested tensor", "torch._utils._rebuild_nested_tensor"),
        "torch._utils._rebuild_wrapper_subclass": _unsupported("a wrapper tensor subclass",
                                                               "torch._utils._rebuild_wrapper_subclass"),
        "torch.serialization._get_layout": _unsupported("a sparse tensor or another layout than strided",
                                                        "torch.serialization._get_layout"),
        "torch._tensor._rebuild_from_type_v2": rebuild_from_type_v2,
        "torch.Tensor": Tensor,
        "torch._tensor.Tensor": Tensor,
        "torch.nn.parameter.Parameter": Parameter,
        "torch.Size": _C.Size,
        "torch.device": _C.device,
        "torch.UntypedStorage": StorageType(_C.uint8, "UntypedStorage"),
        "torch.storage.UntypedStorage": StorageType(_C.uint8, "UntypedStorage"),
    }
    for dt, sname in STORAGE_NAMES.items():
        st = StorageType(getattr(_C, dt), sname)
        names[f"torch.{sname}"] = st
        names[f"torch.cuda.{sname}"] = st  # legacy CUDA storages: their location says cuda
    for dt in list(STORAGE_NAMES) + list(V3_DTYPES):
        names[f"torch.{dt}"] = getattr(_C, dt)
    for dt in _MISSING_DTYPES:
        names[f"torch.{dt}"] = _MissingDtype(dt)
    for sname, dt in (("ComplexFloatStorage", "complex64"), ("ComplexDoubleStorage", "complex128"),
                      ("QInt8Storage", "qint8"), ("QUInt8Storage", "quint8"), ("QInt32Storage", "qint32"),
                      ("QUInt4x2Storage", "quint4x2"), ("QUInt2x4Storage", "quint2x4")):
        names[f"torch.{sname}"] = names[f"torch.cuda.{sname}"] = _MissingDtype(dt)
    return names


class _MissingDtype:
    """A PyTorch dtype cgrad lacks: loading fails when it is found."""

    def __init__(self, name: str) -> None:
        self.name = name


# Containers and values that are data, not code (PyTorch's weights-only allowlist has the same kinds).
_PLAIN: Dict[str, Any] = {
    "collections.OrderedDict": collections.OrderedDict,
    "collections.Counter": collections.Counter,
    "builtins.set": set,
    "builtins.frozenset": frozenset,
    "builtins.bytearray": bytearray,
    "builtins.complex": complex,
    "builtins.slice": slice,
    "_codecs.encode": _codecs_encode,
}

_names_cache: Optional[Dict[str, Any]] = None


def torch_names() -> Dict[str, Any]:
    global _names_cache
    if _names_cache is None:
        _names_cache = _torch_names()
    return _names_cache


# ---------------------------------------------------------------- safe globals

SafeGlobal = Union[Callable[..., Any], type, Tuple[Any, str]]
_safe_globals: List[SafeGlobal] = []


def _qualified(entry: SafeGlobal) -> Tuple[Any, str]:
    if isinstance(entry, tuple):
        if len(entry) != 2 or not isinstance(entry[1], str):
            raise TypeError("cgrad.serialization.add_safe_globals: a tuple entry must be (object, 'module.name')")
        return entry[0], entry[1]
    module = getattr(entry, "__module__", None)
    name = getattr(entry, "__qualname__", None) or getattr(entry, "__name__", None)
    if not isinstance(module, str) or not isinstance(name, str):
        raise TypeError(f"cgrad.serialization.add_safe_globals: {entry!r} has no __module__ / __qualname__; "
                        "pass (object, 'module.name')")
    return entry, f"{module}.{name}"


def add_safe_globals(safe_globals: List[SafeGlobal]) -> None:
    """torch.serialization.add_safe_globals: trust these globals in weights_only loads."""
    if not isinstance(safe_globals, (list, tuple)):
        raise TypeError("cgrad.serialization.add_safe_globals: expected a list of globals")
    for g in safe_globals:
        _qualified(g)
    _safe_globals.extend(safe_globals)


def get_safe_globals() -> List[SafeGlobal]:
    """torch.serialization.get_safe_globals: the globals added by add_safe_globals."""
    return list(_safe_globals)


def clear_safe_globals() -> None:
    """torch.serialization.clear_safe_globals."""
    _safe_globals.clear()


class safe_globals:
    """torch.serialization.safe_globals: trust these globals inside a `with` block."""

    def __init__(self, safe_globals: List[SafeGlobal]) -> None:
        self.safe_globals = list(safe_globals)
        for g in self.safe_globals:
            _qualified(g)

    def __enter__(self) -> None:
        self._before = len(_safe_globals)
        _safe_globals.extend(self.safe_globals)

    def __exit__(self, *exc: Any) -> None:
        del _safe_globals[self._before:self._before + len(self.safe_globals)]


def _user_safe(qualname: str) -> Any:
    for g in _safe_globals:
        obj, name = _qualified(g)
        if name == qualname:
            return obj
    return _NOT_FOUND


_NOT_FOUND = object()

WEIGHTS_ONLY_HINT = (
    "Weights only load failed. The file was read with weights_only=True (the default, as in PyTorch 2.6 and "
    "later), which loads only tensors, containers and the other plain values of a checkpoint, and refuses "
    "anything that could run code. Loading it with weights_only=False would likely succeed, but it can run "
    "arbitrary code from the file: do that only for a file from a trusted source. "
)


class _CheckpointUnpickler(pickle.Unpickler):
    """persistent_load for storages; find_class is the two subclasses' business."""

    def __init__(self, file: Any, load_storage: Callable[[Any, str, str, int], LoadedStorage]) -> None:
        super().__init__(file)
        self.load_storage = load_storage

    def persistent_load(self, pid: Any) -> Any:
        if not isinstance(pid, tuple) or not pid:
            raise _bad(f"persistent id {pid!r:.60} is not a tuple")
        kind = pid[0]
        if kind == "module" and len(pid) == 4:  # legacy whole-module checkpoints: the class
            if not isinstance(pid[1], type):
                raise _bad("a module record must name a class")
            return pid[1]
        if kind != "storage" or len(pid) not in (5, 6):
            raise _bad(f"unknown persistent id {pid!r:.80}")
        stype, key, location, numel = pid[1:5]
        if len(pid) == 6 and pid[5] is not None:
            raise NotImplementedError("cgrad.load: storage views of checkpoints from PyTorch < 0.4")
        if not isinstance(stype, StorageType):
            raise _bad(f"a storage record names {stype!r:.60}, which is not a storage type")
        if not isinstance(key, str) or not isinstance(location, str) or type(numel) is not int or numel < 0:
            raise _bad(f"bad storage record {pid!r:.80}")
        return self.load_storage(stype.dtype, key, location, numel)


# Python 2 module names that protocol-2 pickles use (pickle's fix_imports writes them, as PyTorch's do)
_PY2_MODULES = {"__builtin__": "builtins", "copy_reg": "copyreg"}


def qualified_name(module: str, name: str) -> str:
    return f"{_PY2_MODULES.get(module, module)}.{name}"


class WeightsOnlyUnpickler(_CheckpointUnpickler):
    """Resolves only the allowlist and the registered safe globals (Note [weights-only])."""

    def find_class(self, module: str, name: str) -> Any:
        full = qualified_name(module, name)
        obj = torch_names().get(full, _PLAIN.get(full, _NOT_FOUND))
        if obj is _NOT_FOUND:
            obj = _user_safe(full)
        if obj is _NOT_FOUND:
            raise pickle.UnpicklingError(
                WEIGHTS_ONLY_HINT + f"Unsupported global: GLOBAL {full} is not an allowed global by default. "
                f"If you trust it, allow it with cgrad.serialization.add_safe_globals([{name}]) or inside "
                f"`with cgrad.serialization.safe_globals([{name}]):`.")
        if isinstance(obj, _MissingDtype):
            raise NotImplementedError(f"cgrad.load: the checkpoint uses torch.{obj.name}, a dtype cgrad does not have")
        return obj


class FullUnpickler(_CheckpointUnpickler):
    """weights_only=False: any global, with torch.* names resolved to cgrad's."""

    def find_class(self, module: str, name: str) -> Any:
        full = f"{module}.{name}"
        obj = torch_names().get(full, _NOT_FOUND)
        if isinstance(obj, _MissingDtype):
            raise NotImplementedError(f"cgrad.load: the checkpoint uses torch.{obj.name}, a dtype cgrad does not have")
        if obj is not _NOT_FOUND:
            return obj
        if module == "torch" or module.startswith("torch."):
            target = "cgrad" + module[len("torch"):]
            try:
                mod = importlib.import_module(target)
            except ImportError:
                raise ModuleNotFoundError(f"cgrad.load: the checkpoint needs {full}, and cgrad has no module "
                                          f"{target} (a gap in cgrad's PyTorch coverage)") from None
            obj = mod
            for part in name.split("."):
                obj = getattr(obj, part, _NOT_FOUND)
                if obj is _NOT_FOUND:
                    raise AttributeError(f"cgrad.load: the checkpoint needs {full}, which cgrad does not provide "
                                         f"(a gap in cgrad's PyTorch coverage)")
            return obj
        return super().find_class(module, name)
