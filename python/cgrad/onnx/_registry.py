"""The table of symbolics: the name of a traced call ("add", "Tensor.view",
"nn.functional.relu", "nn.LSTM") to the function that emits its ONNX nodes,
and the layer classes whose calls are intercepted whole."""
from __future__ import annotations

from typing import Any, Callable, Dict, Set

SYMBOLICS: Dict[str, Callable[..., Any]] = {}
MODULE_TYPES: Set[type] = set()


def register(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register fn under each name: a bare name registers the cgrad function, the Tensor method and the
    nn.functional function of that name; a name with a prefix ("Tensor.", "nn.functional.") only that one."""
    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        for n in names:
            keys = [n] if "." in n else [n, "Tensor." + n, "nn.functional." + n]
            for k in keys:
                SYMBOLICS[k] = fn
        return fn
    return deco


def register_module(*classes: type) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register fn(ctx, out, module, *args, **kwargs) as the symbolic of whole calls of these layers."""
    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        for cls in classes:
            MODULE_TYPES.add(cls)
            SYMBOLICS["nn." + cls.__name__] = fn
        return fn
    return deco


def load() -> None:
    """Import the symbolic files (they register themselves)."""
    from . import _sym_tensor, _sym_nn, _sym_modules, _sym_rnn, _sym_attention  # noqa: F401
