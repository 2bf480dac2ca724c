"""LazyModuleMixin, as torch.nn.modules.lazy: a module whose parameters are
UninitializedParameters until the first forward infers their shapes
(initialize_parameters(*inputs)); the module then turns into cls_to_become."""
from __future__ import annotations

from typing import Any, Dict, List

from ..parameter import is_lazy

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """Mixin of the Lazy* modules (put it first in the bases)."""

    cls_to_become: Any = None

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[call-arg]
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self: Any, destination: Dict[str, Any], prefix: str, keep_vars: bool) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if is_lazy(param) or keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if is_lazy(buf) or keep_vars else buf.detach()

    def _lazy_load_hook(self: Any, state_dict: Dict[str, Any], prefix: str, local_metadata: Any, strict: bool,
                        missing_keys: List[str], unexpected_keys: List[str], error_msgs: List[str]) -> None:
        """Materialize lazy parameters and buffers from the shapes in state_dict."""
        for name, param in list(self._parameters.items()) + list(self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None:
                input_param = state_dict[key]
                if is_lazy(param) and not is_lazy(input_param):
                    from ...autograd.grad_mode import no_grad
                    with no_grad():
                        param.materialize(input_param.shape)

    def initialize_parameters(self: Any, *args: Any, **kwargs: Any) -> None:
        """Infer the parameters' shapes from the inputs and materialize them (layers override)."""
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self: Any) -> bool:
        """True while some parameter or buffer is still uninitialized."""
        for param in list(self._parameters.values()) + list(self._buffers.values()):
            if is_lazy(param):
                return True
        return False

    def _replicate_for_data_parallel(self: Any) -> Any:
        raise RuntimeError("Modules with uninitialized parameters can't be used with `DataParallel`. Run a dummy "
                           "forward pass to correctly initialize the modules")


def _infer_parameters(module: Any, args: Any, kwargs: Any = None) -> None:
    """Forward pre-hook: initialize the parameters on the first call, then drop the hooks
    and turn the module into cls_to_become."""
    kwargs = kwargs if kwargs else {}
    module.initialize_parameters(*args, **kwargs)
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
    module._initialize_hook.remove()
    module._load_hook.remove()
    delattr(module, "_initialize_hook")
    delattr(module, "_load_hook")
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become
