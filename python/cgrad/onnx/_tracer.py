"""The tracer behind cgrad.onnx.export: while an export runs, cgrad's
functions (cgrad, cgrad._C, cgrad.nn.functional), the Tensor methods and
operators, and Module.__call__ for the layers with a module symbolic are
wrapped. The model runs once on real values; each outermost call on a traced
tensor (an input, a parameter or buffer, or the result of an earlier traced
call) is handed to its symbolic, which appends ONNX nodes; inner calls run
untraced. Tensors are mapped to ONNX value names by identity.

Note [Probe run]: with dynamic axes, the model first runs on inputs grown
along each dynamic axis and every outermost call's output shapes are kept.
The emitting run then knows, for each value, which dims change with the
dynamic axes (the probe shape differs); reshape targets, slices and graph
outputs use that to stay shape-generic."""
from __future__ import annotations

import contextlib
import inspect
import threading
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from .. import _C
from .._tensor import Tensor
from ._graph import Graph, np_dtype, onnx_dtype
from .errors import OnnxExporterError, UnsupportedOperatorError

_TRACE: Optional["Trace"] = None

# Tensor methods that are not ops on values: they run unwrapped
_PASSTHROUGH_METHODS = {
    "size", "dim", "ndimension", "numel", "nelement", "element_size", "is_floating_point", "is_complex",
    "is_contiguous", "stride", "storage_offset", "data_ptr", "item", "tolist", "numpy", "get_device", "is_signed",
    "requires_grad_", "retain_grad", "register_hook", "untyped_storage", "storage", "is_pinned", "is_shared",
    "share_memory_", "pin_memory", "is_set_to", "backward", "cpu", "cuda", "dim_order", "is_inference",
    "has_names", "is_same_size", "is_nonzero", "equal", "allclose", "data", "grad", "to_dense",
}
_PASSTHROUGH_FUNCS = {
    "is_tensor", "numel", "is_floating_point", "is_complex", "result_type", "can_cast", "promote_types",
    "is_storage", "get_default_dtype", "typename", "is_grad_enabled", "is_inference_mode_enabled", "save", "load",
    "manual_seed", "seed", "initial_seed", "set_default_dtype", "equal", "allclose", "is_nonzero", "is_same_size",
}
_OPERATORS = [
    "__add__", "__radd__", "__iadd__", "__sub__", "__rsub__", "__isub__", "__mul__", "__rmul__", "__imul__",
    "__truediv__", "__rtruediv__", "__itruediv__", "__floordiv__", "__rfloordiv__", "__ifloordiv__", "__mod__",
    "__rmod__", "__imod__",
    "__pow__", "__rpow__", "__matmul__", "__rmatmul__", "__neg__", "__pos__", "__abs__", "__invert__",
    "__and__", "__or__", "__xor__", "__rand__", "__ror__", "__rxor__", "__eq__", "__ne__", "__lt__", "__le__",
    "__gt__", "__ge__", "__getitem__", "__setitem__",
]


def current() -> Optional["Trace"]:
    """The running trace (any thread's: is_in_onnx_export answers for the process, as PyTorch's flag does)."""
    return _TRACE


def flatten(obj: Any) -> List[Tensor]:
    """The tensors in obj (nested tuples / lists / dicts), in order."""
    out: List[Tensor] = []

    def walk(o: Any) -> None:
        if isinstance(o, _C._TensorBase):
            out.append(o)
        elif isinstance(o, (tuple, list)):
            for item in o:
                walk(item)
        elif isinstance(o, dict):
            for item in o.values():
                walk(item)
    walk(obj)
    return out


class Trace:
    """One run of the model under the wrappers: 'probe' keeps output shapes, 'emit' builds the graph."""

    def __init__(self, graph: Graph, mode: str, params: Dict[int, Tuple[str, Tensor]],
                 probe: Optional[List[List[Tuple[int, ...]]]] = None) -> None:
        self.g = graph
        self.mode = mode
        self.params = params
        self.names: Dict[int, str] = {}
        self.keep: List[Any] = []
        self.pshape: Dict[int, Tuple[int, ...]] = {}
        self.dyn_const: Dict[int, str] = {}
        self.used_params: Dict[str, Tensor] = {}
        self.depth = 0
        self.index = 0
        self.shapes: List[List[Tuple[int, ...]]] = []
        self.numbers: List[List[Any]] = []
        self.probe_numbers: Optional[List[List[Any]]] = None
        self.cur_numbers_changed = False
        self.probe = probe
        self.cur_probe: Optional[List[Tuple[int, ...]]] = None
        self.op_name = ""
        self.thread = threading.get_ident()
        self.by_storage: Dict[int, List[Tensor]] = {}
        self.export_params = True  # the exporter's settings the symbolics read
        self.module_names: Dict[int, str] = {}

    # ------------------------------------------------------------------ values
    def is_traced(self, t: Tensor) -> bool:
        return id(t) in self.names or id(t) in self.params or t.grad_fn is not None or id(t) in self.dyn_const

    def bind(self, t: Tensor, name: str, probe_shape: Optional[Tuple[int, ...]] = None) -> None:
        if id(t) not in self.names:
            key = _storage_key(t)
            if key:
                self.by_storage.setdefault(key, []).append(t)
        self.names[id(t)] = name
        self.keep.append(t)
        self.pshape[id(t)] = tuple(probe_shape) if probe_shape is not None else tuple(t.shape)

    def probe_shape(self, t: Tensor) -> Tuple[int, ...]:
        return self.pshape.get(id(t), tuple(t.shape))

    def dyn_dims(self, t: Tensor) -> List[int]:
        """The dims of t whose size follows a dynamic axis (Note [Probe run])."""
        p = self.probe_shape(t)
        return [i for i, (a, b) in enumerate(zip(t.shape, p)) if a != b]

    def v(self, x: Any, dtype: Any = None) -> str:
        """The ONNX value name of x (a tensor or a Python number), cast to dtype when given."""
        if isinstance(x, _C._TensorBase):
            name = self._tensor_name(x)
            if dtype is not None and x.dtype != dtype:
                name = self.g.op("Cast", name, to=onnx_dtype(dtype))
            return name
        if isinstance(x, (bool, int, float)):
            if dtype is None:
                dtype = _C.bool if isinstance(x, bool) else _C.int64 if isinstance(x, int) else _C.float32
            return self.g.const(np.asarray(x, dtype=np_dtype(dtype)))
        raise OnnxExporterError(f"cgrad.onnx.export: {self.op_name} got a {type(x).__name__} where a tensor or a "
                                "number was expected")

    def _tensor_name(self, t: Tensor) -> str:
        key = id(t)
        if key in self.names:
            return self.names[key]
        if key in self.params:
            name, tensor = self.params[key]
            self.used_params[name] = tensor
            return name
        if key in self.dyn_const:
            raise OnnxExporterError(f"cgrad.onnx.export: a tensor made by {self.dyn_const[key]} has a shape that "
                                    "depends on a dynamic axis; build it from the inputs with traced ops instead")
        if t.grad_fn is not None:
            raise UnsupportedOperatorError(f"{t.grad_fn.name()} (an op called outside cgrad's traced functions)",
                                           self.g.opset, None)
        arr = t.detach().contiguous().numpy()
        name = self.g.const(np.asarray(arr, dtype=np_dtype(t.dtype)))
        self.bind(t, name)
        return name

    # ------------------------------------------------------------------ calls
    def call(self, fn: Callable[..., Any], opname: str, args: Tuple[Any, ...], kwargs: Dict[str, Any],
             module: Any = None) -> Any:
        from ._registry import SYMBOLICS
        traced = any(self.is_traced(t) for t in flatten((args, kwargs)))
        if module is not None:
            traced = traced or any(id(p) in self.params for p in _module_tensors(module))
        sym = SYMBOLICS.get(opname)
        if traced and sym is None:
            raise UnsupportedOperatorError(opname, self.g.opset, None)
        self.depth += 1
        try:
            out = fn(*args, **kwargs)
        finally:
            self.depth -= 1
        idx = self.index
        self.index += 1
        # x[i] = v returns None; what it makes is the new value of x
        outs = [args[0]] if opname == "Tensor.__setitem__" else flatten(out)
        if self.mode == "probe":
            self.shapes.append([tuple(t.shape) for t in outs])
            self.numbers.append(_numbers((args, kwargs)))
            return out
        cur = self.probe[idx] if self.probe is not None and idx < len(self.probe) else None
        if cur is not None and len(cur) != len(outs):
            cur = None
        if not traced:
            if cur is not None:
                for t, p in zip(outs, cur):
                    if tuple(t.shape) != tuple(p):
                        self.dyn_const[id(t)] = opname
                        self.keep.append(t)
            return out
        if not outs:  # a query answered with a Python value (x.type()): nothing to bind
            return out
        self.cur_probe = cur
        self.cur_numbers_changed = (self.probe_numbers is not None and idx < len(self.probe_numbers)
                                    and self.probe_numbers[idx] != _numbers((args, kwargs)))
        self.op_name = opname
        self._check_inplace(opname, args, kwargs, module)
        extra = (module,) if module is not None else ()
        try:
            inspect.signature(sym).bind(self, out, *extra, *args, **kwargs)
        except TypeError as e:
            raise OnnxExporterError(f"cgrad.onnx.export: {opname}: these arguments have no ONNX mapping ({e})") \
                from None
        self.depth += 1  # the symbolic's own tensor work (weights re-laid out) is not traced
        try:
            names = sym(self, out, *extra, *args, **kwargs)
        finally:
            self.depth -= 1
        if isinstance(names, str):
            names = [names]
        if len(names) != len(outs):
            raise AssertionError(f"cgrad.onnx: the symbolic of {opname} gave {len(names)} values for {len(outs)} "
                                 "outputs")
        for i, (t, name) in enumerate(zip(outs, names)):
            self.bind(t, name, cur[i] if cur is not None else None)
        return out

    def _check_inplace(self, opname: str, args: Tuple[Any, ...], kwargs: Dict[str, Any], module: Any) -> None:
        """An in-place op rebinds its target's name; another traced tensor sharing its memory (a view, or the
        base of one) would keep the old value, so that case is refused."""
        short = opname.rsplit(".", 1)[-1]
        inplace = (short.endswith("_") and not short.startswith("__")) or short.startswith("__i") or \
            short == "__setitem__" or \
            kwargs.get("inplace") is True or (module is not None and getattr(module, "inplace", False) is True)
        if not inplace or not args or not isinstance(args[0], _C._TensorBase):
            return
        target = args[0]
        others = [t for t in self.by_storage.get(_storage_key(target), []) if t is not target]
        if others:
            raise NotImplementedError(f"cgrad.onnx.export: in-place {opname} on a tensor that shares memory with "
                                      "another traced tensor (a view or its base); use the out-of-place op")

    def check_numbers(self) -> None:
        """Refuse a Python number operand that changed with the dynamic axes (x * x.size(0)): it would be
        frozen into the graph."""
        if self.cur_numbers_changed:
            raise OnnxExporterError(f"cgrad.onnx.export: {self.op_name} takes a Python number that depends on a "
                                    "dynamic axis (such as x.size(0)); it would be a constant in the graph")

    def out_probe(self, i: int = 0) -> Optional[Tuple[int, ...]]:
        """The probe shape of the current call's i-th output, None without a probe."""
        return None if self.cur_probe is None else tuple(self.cur_probe[i])

    def out_dyn(self, out: Tensor, i: int = 0) -> List[int]:
        p = self.out_probe(i)
        return [] if p is None else [d for d, (a, b) in enumerate(zip(out.shape, p)) if a != b]


def _storage_key(t: Tensor) -> int:
    """The address of t's storage (views share it); 0 when t has no data."""
    try:
        ptr = t.data_ptr()
    except RuntimeError:
        return 0
    return ptr - t.storage_offset() * t.element_size() if ptr else 0


def _numbers(obj: Any) -> List[Any]:
    """The Python numbers among a call's arguments (compared between the probe and the emitting run)."""
    out: List[Any] = []

    def walk(o: Any) -> None:
        if isinstance(o, (bool, int, float)):
            out.append(o)
        elif isinstance(o, (tuple, list)):
            for item in o:
                walk(item)
        elif isinstance(o, dict):
            for item in o.values():
                walk(item)
    walk(obj)
    return out


def _module_tensors(module: Any) -> List[Tensor]:
    return list(module.parameters()) + list(module.buffers())


# ---------------------------------------------------------------------- patching
def _func_wrapper(orig: Callable[..., Any], opname: str) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        tr = _TRACE
        if tr is None or tr.depth or tr.thread != threading.get_ident():
            return orig(*args, **kwargs)
        return tr.call(orig, opname, args, kwargs)
    wrapper.__name__ = getattr(orig, "__name__", opname)
    wrapper.__doc__ = getattr(orig, "__doc__", None)
    wrapper.__wrapped__ = orig  # type: ignore[attr-defined]
    return wrapper


@contextlib.contextmanager
def patched(models: Sequence[Any]) -> Iterator[None]:
    """Installs the wrappers for the duration of the block and removes them after, whatever happens."""
    from .. import nn
    from ..nn import functional as F
    from ..nn.modules.module import Module
    from ._registry import MODULE_TYPES
    import cgrad
    undo: List[Callable[[], None]] = []
    wrappers: Dict[int, Callable[..., Any]] = {}
    try:
        for ns, prefix in ((_C, ""), (cgrad, ""), (F, "nn.functional.")):
            for name, obj in list(vars(ns).items()):
                if name.startswith("_") or name in _PASSTHROUGH_FUNCS or isinstance(obj, type):
                    continue
                if not (callable(obj) and type(obj).__name__ in ("builtin_function_or_method", "function")):
                    continue
                if getattr(obj, "__module__", None) in ("typing", "warnings"):
                    continue
                w = wrappers.get(id(obj))
                if w is None:
                    w = wrappers[id(obj)] = _func_wrapper(obj, prefix + name)
                setattr(ns, name, w)
                undo.append(lambda ns=ns, name=name, obj=obj: setattr(ns, name, obj))
        base = _C._TensorBase
        method_names = [n for n in dir(base) if not n.startswith("_") and n not in _PASSTHROUGH_METHODS]
        for name in method_names + _OPERATORS:
            orig = getattr(base, name, None)
            if orig is None or not callable(orig):
                continue
            had = name in Tensor.__dict__
            old = Tensor.__dict__.get(name)
            setattr(Tensor, name, _func_wrapper(orig, "Tensor." + name))
            undo.append(lambda name=name, had=had, old=old:
                        setattr(Tensor, name, old) if had else delattr(Tensor, name))
        for name in ("T", "mT", "H", "mH"):
            prop = Tensor.__dict__[name]
            setattr(Tensor, name, property(_func_wrapper(prop.fget, "Tensor." + name)))
            undo.append(lambda name=name, prop=prop: setattr(Tensor, name, prop))
        orig_call = Module.__call__

        def module_call(self: Any, *args: Any, **kwargs: Any) -> Any:
            tr = _TRACE
            if tr is None or tr.depth or type(self) not in MODULE_TYPES or tr.thread != threading.get_ident():
                return orig_call(self, *args, **kwargs)
            return tr.call(lambda *a, **k: orig_call(self, *a, **k), "nn." + type(self).__name__, args, kwargs,
                           module=self)
        Module.__call__ = module_call  # type: ignore[method-assign]
        # iterating a tensor is unbind(0), as in PyTorch, so the rows are traced
        orig_iter = base.__iter__

        def tensor_iter(self: Any) -> Any:
            tr = _TRACE
            if tr is None or tr.depth or self.dim() == 0 or tr.thread != threading.get_ident():
                return orig_iter(self)
            return iter(self.unbind(0))
        Tensor.__iter__ = tensor_iter  # type: ignore[method-assign]
        undo.append(lambda: delattr(Tensor, "__iter__"))
        undo.append(lambda: setattr(Module, "__call__", orig_call))
        # references bound at import (activation.py's `_sigmoid = _C.sigmoid`, Conv2d._kernel) and functions
        # stored on modules (TransformerEncoderLayer.activation = F.relu) call through the wrappers too, so
        # subclasses of the layers, traced through their own forward, are seen
        import sys
        for mod_name, mod in list(sys.modules.items()):
            if mod is None or not mod_name.startswith("cgrad.") or mod_name.startswith("cgrad.onnx") or \
                    mod in (_C, cgrad, F):
                continue
            for k, val in list(vars(mod).items()):
                if not isinstance(val, (type, _C._TensorBase)) and id(val) in wrappers:
                    setattr(mod, k, wrappers[id(val)])
                    undo.append(lambda mod=mod, k=k, val=val: setattr(mod, k, val))
        seen_classes = set()
        for model in models:
            for m in model.modules() if isinstance(model, nn.Module) else ():
                for cls in type(m).__mro__:
                    if cls in seen_classes or not cls.__module__.startswith("cgrad."):
                        continue
                    seen_classes.add(cls)
                    for k, val in list(vars(cls).items()):
                        if isinstance(val, staticmethod) and id(val.__func__) in wrappers:
                            setattr(cls, k, staticmethod(wrappers[id(val.__func__)]))
                            undo.append(lambda cls=cls, k=k, val=val: setattr(cls, k, val))
        for model in models:
            for m in model.modules() if isinstance(model, nn.Module) else ():
                for k, val in list(vars(m).items()):
                    if id(val) in wrappers and not isinstance(val, _C._TensorBase):
                        m.__dict__[k] = wrappers[id(val)]
                        undo.append(lambda m=m, k=k, val=val: m.__dict__.__setitem__(k, val))
        yield
    finally:
        for fn in reversed(undo):
            fn()


@contextlib.contextmanager
def tracing(trace: Trace) -> Iterator[Trace]:
    global _TRACE
    if _TRACE is not None:
        raise OnnxExporterError("cgrad.onnx.export: an export is already running (export is not reentrant)")
    _TRACE = trace
    try:
        yield trace
    finally:
        _TRACE = None
