"""cgrad: a deep-learning framework whose engine is written in C, under a
PyTorch-style API. `import cgrad as torch` runs ordinary tensor and autograd
code; see README.md for what is available."""
from __future__ import annotations

from . import _engine

# The BLAS and the engine build for this CPU (or CGRAD_CPU_LEVEL's) load
# first; cgrad._C then links to them (Note [CPU levels]).
_engine.load()
from . import _C
# Every public name of the C module (dtypes, device, errors, factories, ops,
# state functions) is a name of the package.
globals().update({k: v for k, v in vars(_C).items() if not k.startswith("_")})

from ._tensor import Tensor
from . import _ops_shape, _ops_reduce, _ops_math
for _m in (_ops_shape, _ops_reduce, _ops_math):  # the ops composed in Python
    globals().update({n: getattr(_m, n) for n in _m.__all__})
del _m
from .autograd.grad_mode import no_grad, enable_grad, set_grad_enabled, inference_mode
from . import autograd
from . import return_types
from .serialization import save, load
from . import profiler, memory
from . import backends, __config__
from . import cuda, accelerator, mps
from ._precision import set_float32_matmul_precision, get_float32_matmul_precision
from . import utils, datasets
from . import nn, optim
from . import masked, signal
from .nn._functional_spatial import grid_sampler_2d, grid_sampler_3d  # torch.grid_sampler_2d / 3d
from . import amp
from . import version, torch_version
from ._c_library import get_include, get_lib_dir
from ._type_info import finfo, iinfo
from ._default_device import set_default_device, get_default_device, set_default_dtype, get_default_dtype
from ._legacy import LEGACY_TYPES as _LEGACY_TYPES
globals().update(_LEGACY_TYPES)  # FloatTensor, DoubleTensor, ..., BoolTensor
from .amp.autocast_mode import (autocast, is_autocast_enabled, get_autocast_dtype, set_autocast_enabled,
                                set_autocast_dtype, is_autocast_cpu_enabled, get_autocast_cpu_dtype,
                                set_autocast_cpu_enabled, set_autocast_cpu_dtype, is_autocast_cache_enabled,
                                set_autocast_cache_enabled, clear_autocast_cache, autocast_increment_nesting,
                                autocast_decrement_nesting)

half = float16
float = float32  # noqa: A001 - PyTorch's aliases
double = float64
short = int16
int = int32  # noqa: A001
long = int64

__version__ = version.__version__  # cgrad's own release; version.torch_api is the PyTorch API it follows


def install_as_torch() -> None:
    """Make `import torch` and every `import torch.X` resolve to cgrad in this process (see cgrad.compat;
    `python -m cgrad.compat script.py` runs a script so)."""
    from .compat.import_hook import install_as_torch as install
    install()


def is_tensor(obj: object) -> bool:
    """True when obj is a cgrad Tensor."""
    return isinstance(obj, Tensor)


def get_device_module(device: object = None) -> object:
    """The module of a device type (torch.get_device_module): cgrad.cuda for a cuda device; None means the
    current accelerator's (cgrad.cuda when a GPU is usable). RuntimeError for a type without a module."""
    if isinstance(device, _C.device):
        name = device.type
    elif isinstance(device, str):
        name = _C.device(device).type
    elif device is None:
        name = "cuda" if cuda.is_available() else "cpu"
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or None")
    module = {"cuda": cuda, "mps": mps}.get(name)
    if module is None:
        raise RuntimeError(f"Device '{name}' does not have a corresponding module registered as 'torch.{name}'.")
    return module


def numel(input: Tensor) -> int:
    """Number of elements of `input` (torch.numel)."""
    return input.numel()


def __getattr__(name: str) -> object:
    """cgrad.onnx is imported on first use, as PyTorch loads torch.onnx (import cgrad does not load onnx)."""
    if name == "onnx":
        import importlib
        return importlib.import_module(".onnx", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
