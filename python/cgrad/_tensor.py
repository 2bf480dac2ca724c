"""The Python-level Tensor class: the C base type `_C._TensorBase` carries
storage, operators and ops; this class adds what is not hot (repr, pickling,
hook handles)."""
from __future__ import annotations

import copy
from typing import Any, Callable, Dict, Optional, Tuple

from . import _C, _legacy
from ._ops_math import MathMethods
from ._ops_reduce import ReduceMethods
from ._ops_shape import ShapeMethods
from ._tensor_misc import MiscMethods
from ._tensor_str import tensor_repr
from .autograd.grad_mode import no_grad


class _HookHandle:
    """Handle returned by Tensor.register_hook / register_post_accumulate_grad_hook and Node.register_hook /
    register_prehook (the owner is the tensor or the node); remove() unregisters the hook."""

    def __init__(self, tensor: Any, hook_id: int) -> None:
        self._tensor = tensor
        self.id = hook_id

    def remove(self) -> None:
        if self._tensor is not None:
            self._tensor._remove_hook(self.id)
            self._tensor = None

    def __enter__(self) -> "_HookHandle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


class Tensor(_C._TensorBase, ShapeMethods, ReduceMethods, MathMethods, MiscMethods):
    """An N-dimensional array with autograd, backed by the cgrad C engine."""

    def __new__(cls, *args: Any, **kwargs: Any) -> "Tensor":
        """The legacy constructor (torch.Tensor): Tensor(*sizes) uninitialised, Tensor(data) a copy in the
        default dtype, Tensor(tensor) an alias of it, Tensor() empty; only device='cpu' (cgrad._legacy)."""
        t = _legacy.legacy_new(cls.__name__, None, args, dict(kwargs))
        return t if cls is Tensor else _C._make_subclass(cls, t, False)

    @staticmethod
    def _make_subclass(cls: type, data: "Tensor", require_grad: bool = False, dispatch_strides: bool = False,
                       dispatch_device: bool = False, device_for_backend_keys: Any = None) -> "Tensor":
        """An alias of `data` as an instance of Tensor subclass `cls` (torch.Tensor._make_subclass, the way
        Parameter-like classes are built)."""
        if dispatch_strides or dispatch_device or device_for_backend_keys is not None:
            raise NotImplementedError("Tensor._make_subclass: dispatch_strides / dispatch_device / "
                                      "device_for_backend_keys (__torch_dispatch__ subclasses) are not supported")
        return _C._make_subclass(cls, data, bool(require_grad))

    def type(self, dtype: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:  # type: ignore[override]
        """Without dtype, the PyTorch type name ('torch.FloatTensor'); with a dtype, a legacy class such as
        cgrad.DoubleTensor or a name such as 'torch.DoubleTensor', this tensor converted (itself if already so)."""
        if dtype is None:
            return _legacy.type_name(self)
        target = _legacy.dtype_of_type(dtype)
        if isinstance(dtype, str) or isinstance(dtype, _legacy._LegacyTensorType):  # a type names a device too
            cuda = isinstance(dtype, str) and dtype.split(".")[1:2] == ["cuda"]
            on = self.device.type
            if cuda and on != "cuda":
                return _C._TensorBase.type(self.cuda(non_blocking=non_blocking), target, non_blocking)
            if not cuda and on == "cuda":
                return _C._TensorBase.type(self.cpu(), target, non_blocking)
        return super().type(target, non_blocking)

    def __repr__(self, *, tensor_contents: Optional[str] = None) -> str:
        return tensor_repr(self)

    __str__ = __repr__

    # ---------------------------------------------------------- views as properties (C methods, no Python frame)
    T = property(_C._TensorBase._T, doc="The tensor with its dims reversed (an alias for 0-d and 1-d tensors).")
    mT = property(_C._TensorBase._mT, doc="The last two dims swapped (matrices or batches of matrices).")
    H = property(_C._TensorBase._H, doc="Conjugate transpose of a matrix (real dtypes: the transpose).")
    mH = property(_C._TensorBase._mH, doc="Conjugate transpose of the last two dims (real dtypes: mT).")

    # ---------------------------------------------------------- pickling and copying
    def __reduce_ex__(self, protocol: int) -> Any:
        t = self.detach()
        state = dict(self.__dict__) or None
        return (_rebuild_tensor, (t._to_bytes(), t.dtype, tuple(t.shape), self.requires_grad, t.device, type(self), state))

    def __deepcopy__(self, memo: Dict[int, Any]) -> "Tensor":
        if id(self) in memo:
            return memo[id(self)]
        if not self.is_leaf:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                               "protocol at the moment.")
        with no_grad():
            new = self.clone()
        if type(self) is not Tensor:
            new = _C._make_subclass(type(self), new, self.requires_grad)
        elif self.requires_grad:
            new.requires_grad_(True)
        memo[id(self)] = new
        if self.grad is not None:
            new.grad = copy.deepcopy(self.grad, memo)
        if self.__dict__:
            new.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return new

    # ---------------------------------------------------------- shared memory (cgrad/multiprocessing/_sharing.py)
    def share_memory_(self) -> "Tensor":
        """Move the storage into shared memory, in place (a no-op when it is there already); tensors sent
        to other processes through cgrad.multiprocessing then share it instead of being copied."""
        from .multiprocessing import _sharing  # importing the package registers the reductions
        return _sharing.share_memory_(self)

    def is_shared(self) -> bool:
        """Whether the storage is in shared memory."""
        from .multiprocessing import _sharing
        return _sharing.is_shared(self)

    # ---------------------------------------------------------- NumPy protocol (numpy is imported only when used)
    __array_priority__ = 1000  # NumPy defers `ndarray op tensor` to the tensor's reflected operator

    def __array__(self, dtype: Any = None, copy: Optional[bool] = None) -> Any:
        arr = self.numpy()
        if dtype is not None and arr.dtype != dtype:
            return arr.astype(dtype)
        return arr.copy() if copy else arr

    def __array_wrap__(self, array: Any, context: Any = None, return_scalar: bool = False) -> "Tensor":
        return _C.from_numpy(array)

    def __format__(self, spec: str) -> str:
        if self.dim() == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def cpu(self, memory_format: Any = None) -> "Tensor":
        """This tensor on the CPU: itself when it is there already (as torch.Tensor.cpu)."""
        if memory_format is not None:
            return self.to("cpu", memory_format=memory_format)
        return self if self.device.type == "cpu" else self.to("cpu")

    @property
    def layout(self) -> Any:
        """cgrad.strided: every cgrad tensor is strided (memory formats are strides, see contiguous())."""
        return _C.strided

    def cuda(self, device: Any = None, non_blocking: bool = False, memory_format: Any = None) -> "Tensor":
        """This tensor on a CUDA device (None: the current one): itself when it is there already (as
        torch.Tensor.cuda). Where no CUDA device is usable this raises what to('cuda') raises."""
        if device is None:
            dev = _C.device("cuda")
        else:
            dev = device if isinstance(device, _C.device) else _C.device(device)
            if dev.type != "cuda":
                raise RuntimeError("Invalid device, must be cuda device")
        if memory_format is not None:
            return self.to(dev, non_blocking=non_blocking, memory_format=memory_format)
        return self.to(dev, non_blocking=non_blocking)

    @property
    def __cuda_array_interface__(self) -> Dict[str, Any]:
        """The CUDA Array Interface (version 3) of a cuda tensor, for CuPy, Numba & co.: shape, typestr,
        data (device address, read-only flag), strides in bytes (None when contiguous). The engine's
        stream is not exposed, so the device's work is waited for here and no stream is given: the data
        is ready for any stream. AttributeError on other tensors (hasattr is False), as in PyTorch."""
        if not self.is_cuda:
            raise AttributeError(f"Can't get __cuda_array_interface__ on non-CUDA tensor type: {self.type()} If CUDA "
                                 "data is required use tensor.cuda() to copy tensor to device memory.")
        if self.requires_grad:
            raise RuntimeError("Can't get __cuda_array_interface__ on Variable that requires grad. If gradients "
                               "aren't required, use var.detach() to get Variable that doesn't require grad.")
        typestr = _CUDA_TYPESTR.get(str(self.dtype).split(".")[-1])
        if typestr is None:
            raise TypeError(f"__cuda_array_interface__: {self.dtype} has no array-interface type string")
        itemsize = self.element_size()
        strides = None if self.is_contiguous() else tuple(s * itemsize for s in self.stride())
        ptr = self.data_ptr() if self.numel() > 0 else 0
        from . import cuda
        cuda.synchronize(self.device)
        return {"shape": tuple(self.shape), "typestr": typestr, "data": (ptr, False), "strides": strides,
                "version": 3, "stream": None}

    def register_hook(self, hook: Callable[["Tensor"], Optional["Tensor"]]) -> _HookHandle:
        """Register a hook run with this tensor's gradient; it may return a replacement."""
        return super().register_hook(hook)

    def register_post_accumulate_grad_hook(self, hook: Callable[["Tensor"], None]) -> _HookHandle:
        """Register hook(tensor) on a leaf, run by backward() after the gradient was accumulated into .grad."""
        return super().register_post_accumulate_grad_hook(hook)


# the array-interface type strings (little-endian x86-64); bfloat16 has none, as in PyTorch
_CUDA_TYPESTR = {"bool": "|b1", "uint8": "|u1", "int8": "|i1", "int16": "<i2", "int32": "<i4", "int64": "<i8",
                 "uint16": "<u2", "uint32": "<u4", "uint64": "<u8", "float16": "<f2", "float32": "<f4",
                 "float64": "<f8"}


def _rebuild_tensor(data: bytes, dtype: Any, shape: Tuple[int, ...], requires_grad: bool, device: Any = "cpu",
                   cls: Optional[type] = None, state: Optional[Dict[str, Any]] = None) -> Tensor:
    """Inverse of Tensor.__reduce_ex__: the elements' bytes back into a tensor of that dtype, shape and class."""
    t = _C._from_bytes(data, dtype, shape, device)
    if cls is not None and cls is not Tensor:
        t = _C._make_subclass(cls, t, requires_grad)
    elif requires_grad:
        t.requires_grad_(True)
    if state:
        t.__dict__.update(state)
    return t


_C._set_tensor_class(Tensor, _HookHandle)
