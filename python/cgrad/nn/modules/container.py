"""Containers, as torch.nn: Sequential, ModuleList, ModuleDict, ParameterList
and ParameterDict (same indexing, slicing, mutation and repr rules), and the
deprecated Container.

The list-like containers keep their children under the keys "0", "1", ...;
after a removal or an insertion `_renumber` rebuilds that numbering in place.
Index checks, the update() argument forms and the one-line descriptions of
ParameterList / ParameterDict entries are shared helpers below."""
from __future__ import annotations

import operator
import warnings
from collections import OrderedDict, abc as container_abcs
from itertools import groupby
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple, TypeVar, Union, overload

from ... import _C
from ..parameter import Parameter
from .module import Module, _addindent, _block_repr

__all__ = ["Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]

T = TypeVar("T", bound=Module)


# ---------------------------------------------------------------------- shared helpers

def _position(length: int, idx: Any) -> int:
    """idx (any __index__ object, negative counts from the end) as a position in [0, length)."""
    pos = operator.index(idx)
    if pos < -length or pos >= length:
        raise IndexError(f"index {pos} is out of range")
    return pos + length if pos < 0 else pos


def _renumber(owner: Module, children: Iterable[Any]) -> None:
    """Refill owner._modules with `children` under the keys "0", "1", ... (same dict object)."""
    table = owner._modules
    ordered = list(children)
    table.clear()
    for pos, child in enumerate(ordered):
        table[str(pos)] = child


def _without_numeric(names: Iterable[str]) -> List[str]:
    """dir() entries minus the numeric child keys of a list-like container."""
    return [n for n in names if not n.isdigit()]


def _require_iterable(value: Any, what: str) -> None:
    if not isinstance(value, container_abcs.Iterable):
        raise TypeError(what + type(value).__name__)


def _update_pairs(source: Any, owner: str, in_order: Tuple[type, ...],
                  sort_mappings: bool) -> Iterator[Tuple[Any, Any]]:
    """The (key, value) pairs update() takes from a mapping or a sequence of pairs, in torch's order:
    `in_order` types as they iterate, other mappings sorted by key when sort_mappings, pairs as given."""
    if isinstance(source, in_order):
        yield from source.items()
        return
    if isinstance(source, container_abcs.Mapping):
        entries = list(source.items())
        yield from (sorted(entries) if sort_mappings else entries)
        return
    for pos, pair in enumerate(source):
        if not isinstance(pair, container_abcs.Iterable):
            raise TypeError(f"{owner} update sequence element #{pos} should be Iterable; is" + type(pair).__name__)
        if len(pair) != 2:
            raise ValueError(f"{owner} update sequence element #{pos} has length {len(pair)}; 2 is required")
        key, value = pair
        yield key, value


def _as_parameter(value: Any) -> Any:
    """Plain tensors stored into a ParameterList / ParameterDict become Parameters; other values stay."""
    if isinstance(value, _C._TensorBase) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _entry_line(key: Any, value: Any, dtype_text: Callable[[Any], Any]) -> str:
    """One extra_repr line of a parameter container: "  (key): Parameter containing: [dtype of size 2x3]"."""
    if not isinstance(value, _C._TensorBase):
        return f"  ({key}): Object of type: {type(value).__name__}"
    kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
    dims = "x".join(map(str, value.size()))
    where = "" if value.device.type == "cpu" else f" ({value.device})"
    return f"  ({key}): {kind} containing: [{dtype_text(value)} of size {dims}{where}]"


def _check_factor(seq: "Sequential", factor: Any) -> None:
    if not isinstance(factor, int):
        raise TypeError(f"unsupported operand type(s) for *: {type(seq)} and {type(factor)}")
    if factor <= 0:
        raise ValueError(f"Non-positive multiplication factor {factor} for {type(seq)}")


def _not_sequential(other: Any) -> ValueError:
    return ValueError("add operator supports only objects of Sequential class, but "
                      f"{str(type(other))} is given.")


# ---------------------------------------------------------------------- Container

_CONTAINER_DEPRECATION = ("`nn.Container` is deprecated. All of its functionality is now implemented in `nn.Module`. "
                          "Subclass that instead.")


class Container(Module):
    """Deprecated: a Module holding the modules given as keyword arguments. Creating one, or defining a
    subclass, warns (FutureWarning), as torch's deprecated class does."""

    __deprecated__ = _CONTAINER_DEPRECATION

    def __new__(cls, *args: Any, **kwargs: Any) -> "Container":
        if cls is Container:
            warnings.warn(_CONTAINER_DEPRECATION, FutureWarning, stacklevel=2)
        return super().__new__(cls)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        warnings.warn(_CONTAINER_DEPRECATION, FutureWarning, stacklevel=2)
        super().__init_subclass__(**kwargs)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)


# ---------------------------------------------------------------------- Sequential

class Sequential(Module):
    """Modules run one after another: Sequential(m1, m2, ...) or Sequential(OrderedDict(name=m, ...))."""

    _modules: Dict[str, Module]  # type: ignore[assignment]

    def __init__(self, *args: Any) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            named: Iterable[Tuple[str, Any]] = args[0].items()
        else:
            named = ((str(pos), child) for pos, child in enumerate(args))
        for name, child in named:
            self.add_module(name, child)

    def _key_at(self, idx: Any) -> str:
        names = list(self._modules)
        return names[_position(len(names), idx)]

    def __getitem__(self, idx: Union[slice, int]) -> Any:
        if isinstance(idx, slice):
            picked = list(self._modules.items())[idx]
            return type(self)(OrderedDict(picked))
        return self._modules[self._key_at(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, self._key_at(idx), module)

    def __delitem__(self, idx: Union[slice, int]) -> None:
        doomed = list(self._modules)[idx] if isinstance(idx, slice) else [self._key_at(idx)]
        for name in doomed:
            delattr(self, name)
        _renumber(self, self._modules.values())

    def __len__(self) -> int:
        return len(self._modules)

    def __add__(self, other: "Sequential") -> "Sequential":
        if not isinstance(other, Sequential):
            raise _not_sequential(other)
        return Sequential(*self, *other)

    def __iadd__(self, other: "Sequential") -> "Sequential":
        if not isinstance(other, Sequential):
            raise _not_sequential(other)
        for child in list(other):
            self.append(child)
        return self

    def __mul__(self, other: int) -> "Sequential":
        _check_factor(self, other)
        return Sequential(*(list(self) * other))

    __rmul__ = __mul__

    def __imul__(self, other: int) -> "Sequential":
        _check_factor(self, other)
        originals = list(self)
        for _ in range(other - 1):
            for child in originals:
                self.append(child)
        return self

    def pop(self, key: Union[int, slice]) -> Module:
        """Remove and return the module at index `key`."""
        taken = self[key]
        del self[key]
        return taken

    def __dir__(self) -> list:
        return _without_numeric(super().__dir__())

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> "Sequential":
        """Add a module at the end."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module) -> "Sequential":
        """Insert a module before position `index`."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        count = len(self._modules)
        if index < -count or index > count:
            raise IndexError(f"Index out of range: {index}")
        children = list(self._modules.values())
        children.insert(index + count if index < 0 else index, module)
        _renumber(self, children)
        return self

    def extend(self, sequential: Iterable[Module]) -> "Sequential":
        """Append every module of an iterable."""
        for child in sequential:
            self.append(child)
        return self

    def forward(self, input: Any) -> Any:
        for stage in self._modules.values():
            input = stage(input)
        return input


# ---------------------------------------------------------------------- ModuleList

class ModuleList(Module):
    """A list of submodules, registered (indexable, iterable, and visible to parameters())."""

    _modules: Dict[str, Module]  # type: ignore[assignment]

    def __init__(self, modules: Optional[Iterable[Module]] = None) -> None:
        super().__init__()
        if modules is not None:
            self += modules

    def _key_at(self, idx: Any) -> str:
        return str(_position(len(self), idx))

    @overload
    def __getitem__(self, idx: slice) -> "ModuleList": ...

    @overload
    def __getitem__(self, idx: int) -> Module: ...

    def __getitem__(self, idx: Union[int, slice]) -> Union[Module, "ModuleList"]:
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[self._key_at(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, self._key_at(idx), module)

    def __delitem__(self, idx: Union[int, slice]) -> None:
        if isinstance(idx, slice):
            doomed = [str(pos) for pos in range(len(self._modules))[idx]]
        else:
            doomed = [self._key_at(idx)]
        for name in doomed:
            delattr(self, name)
        _renumber(self, self._modules.values())

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> "ModuleList":
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> "ModuleList":
        joined = ModuleList()
        for child in [*self, *other]:
            joined.append(child)
        return joined

    def __repr__(self) -> str:
        """Runs of equal child reprs are folded: "(0-2): 3 x Linear(...)", as torch prints them."""
        rows: List[str] = []
        first = 0
        for text, run in groupby(repr(child) for child in self):
            count = len(list(run))
            if count == 1:
                rows.append(f"({first}): " + _addindent(text, 2))
            else:
                rows.append(f"({first}-{first + count - 1}): " + _addindent(f"{count} x {text}", 2))
            first += count
        return _block_repr(self._get_name(), rows)

    def __dir__(self) -> list:
        return _without_numeric(super().__dir__())

    def insert(self, index: int, module: Module) -> None:
        """Insert a module before position `index`."""
        children = list(self._modules.values())
        children.insert(index, module)
        _renumber(self, children)

    def append(self, module: Module) -> "ModuleList":
        """Add a module at the end."""
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key: Union[int, slice]) -> Module:
        """Remove and return the module at index `key`."""
        taken = self[key]
        del self[key]
        return taken  # type: ignore[return-value]

    def extend(self, modules: Iterable[Module]) -> "ModuleList":
        """Append every module of an iterable."""
        _require_iterable(modules, "ModuleList.extend should be called with an iterable, but got ")
        for child in modules:
            self.append(child)
        return self


# ---------------------------------------------------------------------- ModuleDict

class ModuleDict(Module):
    """An ordered dict of submodules, registered."""

    _modules: Dict[str, Module]  # type: ignore[assignment]

    def __init__(self, modules: Optional[Mapping[str, Module]] = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def clear(self) -> None:
        """Remove every item."""
        self._modules.clear()

    def pop(self, key: str) -> Module:
        """Remove and return the module under `key`."""
        taken = self[key]
        del self[key]
        return taken

    def keys(self) -> Iterable[str]:
        """The keys."""
        return self._modules.keys()

    def items(self) -> Iterable[Tuple[str, Module]]:
        """The (key, module) pairs."""
        return self._modules.items()

    def values(self) -> Iterable[Module]:
        """The modules."""
        return self._modules.values()

    def update(self, modules: Any) -> None:
        """Add or replace items from a mapping or an iterable of (key, module) pairs."""
        _require_iterable(modules, "ModuleDict.update should be called with an iterable of key/value pairs, but got ")
        for key, child in _update_pairs(modules, "ModuleDict", (OrderedDict, ModuleDict), False):
            self[key] = child


# ---------------------------------------------------------------------- ParameterList

class ParameterList(Module):
    """A list of parameters, registered (tensors given are wrapped into Parameters)."""

    def __init__(self, values: Optional[Iterable[Any]] = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def __getitem__(self, idx: Union[int, slice]) -> Any:
        if isinstance(idx, slice):
            part = type(self)()
            for pos in range(len(self))[idx]:
                part.append(self[pos])
            return part
        return getattr(self, str(_position(len(self), idx)))

    def __setitem__(self, idx: int, param: Any) -> None:
        setattr(self, str(_position(len(self), idx)), _as_parameter(param))

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return (self[pos] for pos in range(self._size))

    def __iadd__(self, parameters: Iterable[Any]) -> "ParameterList":
        return self.extend(parameters)

    def __dir__(self) -> list:
        return _without_numeric(super().__dir__())

    def append(self, value: Any) -> "ParameterList":
        """Add a value (a tensor becomes a Parameter) at the end."""
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values: Iterable[Any]) -> "ParameterList":
        """Append every value of an iterable."""
        if isinstance(values, _C._TensorBase):
            raise TypeError("ParameterList.extend should be called with an iterable, but got " + type(values).__name__)
        _require_iterable(values, "ParameterList.extend should be called with an iterable, but got ")
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_entry_line(pos, value, lambda t: t.dtype) for pos, value in enumerate(self))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterList should not be called.")


# ---------------------------------------------------------------------- ParameterDict

class ParameterDict(Module):
    """An ordered dict of parameters, registered (tensors given are wrapped into Parameters)."""

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: Dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    @staticmethod
    def _checked_key(key: Any) -> str:
        if isinstance(key, str):
            return key
        raise TypeError("Index given to ParameterDict cannot be used as a key as it is not a string (type is "
                        f"'{type(key).__name__}'). Open an issue on github if you need non-string keys.")

    def __getitem__(self, key: str) -> Any:
        return getattr(self, self._checked_key(key))

    def __setitem__(self, key: str, value: Any) -> None:
        self._keys[key] = None
        setattr(self, self._checked_key(key), _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, self._checked_key(key))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._keys))

    def copy(self) -> "ParameterDict":
        """A shallow copy (the same parameters)."""
        return ParameterDict(OrderedDict(self.items()))

    def __contains__(self, key: str) -> bool:
        return key in self._keys

    def setdefault(self, key: str, default: Any = None) -> Any:
        """The value under key, after storing default there if the key is absent."""
        if key not in self._keys:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        """Remove every item."""
        for key in list(self._keys):
            del self[key]

    def pop(self, key: str) -> Any:
        """Remove and return the value under key."""
        taken = self[key]
        del self[key]
        return taken

    def popitem(self) -> Tuple[str, Any]:
        """Remove and return the last inserted (key, value)."""
        if not self._keys:
            raise KeyError("popitem(): dictionary is empty")
        last = next(reversed(self._keys))
        return last, self.pop(last)

    def get(self, key: str, default: Any = None) -> Any:
        """The value under key, or default."""
        if key in self._keys:
            return self[key]
        return default

    def fromkeys(self, keys: Iterable[str], default: Any = None) -> "ParameterDict":
        """A new ParameterDict with `keys`, each holding default."""
        return ParameterDict([(name, default) for name in keys])

    def keys(self) -> Iterable[str]:
        """The keys."""
        return self._keys.keys()

    def items(self) -> Iterable[Tuple[str, Any]]:
        """The (key, value) pairs."""
        return ((name, self[name]) for name in self._keys)

    def values(self) -> Iterable[Any]:
        """The values."""
        return (self[name] for name in self._keys)

    def update(self, parameters: Any) -> None:
        """Add or replace items from a mapping or an iterable of (key, value) pairs."""
        _require_iterable(parameters,
                          "ParametersDict.update should be called with an iterable of key/value pairs, but got ")
        for key, value in _update_pairs(parameters, "ParameterDict", (OrderedDict, ParameterDict), True):
            self[key] = value

    def extra_repr(self) -> str:
        return "\n".join(_entry_line(key, value, _tensor_type_name) for key, value in self.items())

    def __call__(self, input: Any) -> Any:
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other: "ParameterDict") -> "ParameterDict":
        merged = self.copy()
        merged.update(other)
        return merged

    def __ror__(self, other: "ParameterDict") -> "ParameterDict":
        merged = other.copy()
        merged.update(self)
        return merged

    def __ior__(self, other: "ParameterDict") -> "ParameterDict":
        self.update(other)
        return self


_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
               "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor",
               "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor"}


def _tensor_type_name(t: Any) -> str:
    """torch.typename of a tensor with cgrad's prefix: 'cgrad.FloatTensor', ..."""
    return "cgrad." + _TYPE_NAMES.get(str(t.dtype).split(".")[-1], "Tensor")
