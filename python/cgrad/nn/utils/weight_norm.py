"""cgrad.nn.utils.weight_norm: the older, hook-based weight normalization
(torch.nn.utils.weight_norm / remove_weight_norm): `name` becomes the parameters
`<name>_g` and `<name>_v`, and a forward pre-hook recomputes `<name>` = g v / ||v||
before each forward. Deprecated in PyTorch in favour of
parametrizations.weight_norm; calling it warns as PyTorch does."""
from __future__ import annotations

import warnings
from typing import Any, Optional, TypeVar

from ..modules.module import Module
from ..parameter import Parameter
from .parametrizations import _weight_norm, norm_except_dim

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]

T_module = TypeVar("T_module", bound=Module)


class WeightNorm:
    """The forward pre-hook that recomputes the weight from g and v."""

    name: str
    dim: int

    def __init__(self, name: str, dim: Optional[int]) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Any:
        return _weight_norm(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"), self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: Optional[int]) -> "WeightNorm":
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=3)
        if not isinstance(module, Module):
            raise AttributeError(f"weight_norm(): argument 'module' must be an nn.Module, got {type(module).__name__}")
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        fn = WeightNorm(name, dim)
        if name not in module._parameters or module._parameters[name] is None:
            raise AttributeError(f"weight_norm(): '{type(module).__name__}' object has no parameter '{name}'")
        weight = module._parameters[name]
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, fn.dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: T_module, name: str = "weight", dim: Optional[int] = 0) -> T_module:
    """Split `module.<name>` into magnitude `<name>_g` and direction `<name>_v` (hook-based)."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: T_module, name: str = "weight") -> T_module:
    """Undo weight_norm: `<name>` becomes one parameter again, holding g v / ||v||."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            module._update_call_flag()
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
