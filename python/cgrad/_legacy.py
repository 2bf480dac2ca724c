"""PyTorch's legacy tensor constructors: cgrad.Tensor(...) and the typed
classes FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, ByteTensor,
CharTensor, ShortTensor, IntTensor, LongTensor and BoolTensor, with their
rules: no arguments -> an empty 1-d tensor; ints or a Size -> that shape
(uninitialised); a tensor -> an alias of it (a view sharing its memory; a
typed class wants its own dtype); other data -> a copy converted to the
dtype; only device='cpu' is accepted. isinstance(t, FloatTensor) holds for a
float32 tensor on the CPU, as in PyTorch. Also the 'torch.FloatTensor'-style
names Tensor.type() returns and accepts."""
from __future__ import annotations

import numbers
from typing import Any, Dict, Optional, Tuple

from . import _C

__all__ = ["LEGACY_TYPES", "legacy_new", "type_name", "dtype_of_type"]

# dtype name -> the legacy class's stem (the engine's C table names the rest, see type_name)
_STEMS = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "uint8": "Byte",
          "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long", "bool": "Bool"}


def _device_checked(fname: str, device: Any) -> None:
    if device is None:
        return
    dev = device if isinstance(device, _C.device) else _C.device(device)
    if dev.type != "cpu":
        raise RuntimeError(f"{fname}: legacy constructor expects device type: cpu but device type: {dev.type} "
                           "was passed")


def legacy_new(fname: str, dtype: Optional[Any], args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Any:
    """What `Tensor(*args, **kwargs)` (dtype None: the default dtype, any tensor's dtype) or a typed
    constructor (its dtype) returns; `fname` names it in errors."""
    device = kwargs.pop("device", None)
    if kwargs:
        raise TypeError(f"{fname}(): got an unexpected keyword argument '{next(iter(kwargs))}' "
                        "(the legacy constructor takes sizes or data, and device=)")
    _device_checked(fname, device)
    target = dtype if dtype is not None else _C.get_default_dtype()
    if not args:
        return _C.empty(0, dtype=target, device="cpu")
    first = args[0]
    if len(args) == 1:
        if isinstance(first, _C._TensorBase):
            if dtype is not None and first.dtype != dtype:
                raise TypeError(f"{fname}(): expected a tensor of dtype {dtype}, got one of dtype {first.dtype}")
            if first.device.type != "cpu":
                raise RuntimeError(f"{fname}: legacy constructor expects device type: cpu but the tensor is on "
                                   f"{first.device.type}")
            return first.view(first.shape)
        if isinstance(first, _C.Size):
            return _sized(fname, tuple(first), target)
        if isinstance(first, (str, bytes)):
            raise TypeError(f"{fname}(): invalid data type '{type(first).__name__}'")
        if isinstance(first, bool) or (isinstance(first, numbers.Number) and not isinstance(first, numbers.Integral)):
            raise TypeError(f"{fname}(): data must be a sequence (got {type(first).__name__})")
    if all(isinstance(a, numbers.Integral) and not isinstance(a, bool) for a in args):
        return _sized(fname, tuple(int(a) for a in args), target)
    if len(args) > 1:
        bad = next(a for a in args if not isinstance(a, numbers.Integral) or isinstance(a, bool))
        raise TypeError(f"{fname}(): sizes must be ints, got an argument of type {type(bad).__name__}")
    return _C.tensor(first, dtype=target, device="cpu")


def _sized(fname: str, shape: Tuple[int, ...], dtype: Any) -> Any:
    for s in shape:
        if s < 0:
            raise RuntimeError(f"{fname}: trying to create a tensor with negative dimension {s}: {list(shape)}")
    return _C.empty(shape, dtype=dtype, device="cpu")


class _LegacyTensorType(type):
    """The metaclass of the typed constructors: calling one builds a cgrad.Tensor of its dtype;
    isinstance checks the dtype and that the tensor is on the CPU."""

    dtype: Any

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return legacy_new(cls.__name__, cls.dtype, args, kwargs)

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, _C._TensorBase) and obj.dtype == cls.dtype and obj.device.type == "cpu"

    def __repr__(cls) -> str:
        return f"<class 'cgrad.{cls.__name__}'>"


def _make_type(dtype: Any) -> _LegacyTensorType:
    name = _STEMS[str(dtype).split(".")[-1]] + "Tensor"
    doc = f"Legacy constructor of {dtype} CPU tensors (torch.{name}): {name}(*sizes), {name}(data), {name}(tensor)."
    return _LegacyTensorType(name, (), {"dtype": dtype, "is_cuda": False, "is_sparse": False, "__doc__": doc,
                                        "__module__": "cgrad", "__qualname__": name})


LEGACY_TYPES = {t.__name__: t for t in (_make_type(getattr(_C, d)) for d in _STEMS)}


def type_name(t: Any) -> str:
    """'torch.FloatTensor' for a float32 CPU tensor, 'torch.meta.FloatTensor' on meta (Tensor.type())."""
    stem = _C._TensorBase.type(t).split(".")[-1]
    return f"torch.{stem}" if t.device.type == "cpu" else f"torch.{t.device.type}.{stem}"


def dtype_of_type(spec: Any) -> Any:
    """The dtype that Tensor.type(spec) converts to: a legacy class, a 'torch.FloatTensor' name, a dtype."""
    if isinstance(spec, _LegacyTensorType):
        return spec.dtype
    if isinstance(spec, str):
        parts = spec.split(".")
        if len(parts) == 3 and parts[0] in ("torch", "cgrad") and parts[1] == "cuda":
            from . import cuda
            if not cuda.is_available():
                raise RuntimeError(f"Tensor.type('{spec}'): no CUDA device is usable here (Torch not compiled with "
                                   "CUDA enabled, or no GPU)")
            return f"{parts[0]}.{parts[2]}"
        return spec
    return spec
