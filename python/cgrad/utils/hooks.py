"""cgrad.utils.hooks: RemovableHandle (what the register_*_hook methods return)
and BackwardHook, which runs a module's full backward hooks (as torch.utils.hooks).

BackwardHook wraps the module's tensor inputs and outputs in identity autograd
Functions: the output one receives grad_output (and runs the backward pre-hooks
on it), the input one receives grad_input and runs the backward hooks with
(grad_input, grad_output); a hook may return replacements."""
from __future__ import annotations

import weakref
from collections import OrderedDict
from typing import Any, Callable, List, Optional, Sequence, Tuple

from .. import _C
from ..autograd.function import Function

__all__ = ["RemovableHandle", "BackwardHook"]


class RemovableHandle:
    """A handle that removes a hook from its registry (and from the extra
    registries, e.g. the with_kwargs set) with remove(); a context manager too."""

    next_id: int = 0

    def __init__(self, hooks_dict: Any, *, extra_dict: Any = None, _on_remove: Optional[Callable[[], None]] = None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        extras = [] if extra_dict is None else (list(extra_dict) if isinstance(extra_dict, list) else [extra_dict])
        self.extra_dict_ref: Tuple[Any, ...] = tuple(weakref.ref(d) for d in extras)
        self._on_remove = _on_remove

    def remove(self) -> None:
        hooks_dict = self.hooks_dict_ref()
        if hooks_dict is not None and self.id in hooks_dict:
            del hooks_dict[self.id]
        for ref in self.extra_dict_ref:
            extra = ref()
            if extra is not None and self.id in extra:
                del extra[self.id]
        if self._on_remove is not None:
            self._on_remove()

    def __getstate__(self) -> Any:
        return (self.hooks_dict_ref(), self.id, tuple(ref() for ref in self.extra_dict_ref))

    def __setstate__(self, state: Any) -> None:
        self.hooks_dict_ref = weakref.ref(OrderedDict() if state[0] is None else state[0])
        self.id = state[1]
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)
        self.extra_dict_ref = tuple(weakref.ref(d) for d in (state[2] if len(state) > 2 else ()) if d is not None)
        self._on_remove = None

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


def _is_tensor(x: Any) -> bool:
    return isinstance(x, _C._TensorBase)


class _HookFunction(Function):
    """Identity on tensors; backward hands the gradients (None where an output
    got none) to `callback`, which returns the gradients to pass on."""

    @staticmethod
    def forward(ctx: Any, callback: Callable[[Tuple[Any, ...]], Tuple[Any, ...]], *tensors: Any) -> Any:
        ctx.callback = callback
        ctx.set_materialize_grads(False)
        ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
        return tensors

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        return (None,) + tuple(ctx.callback(grads))


class BackwardHook:
    """Runs full backward hooks (module, grad_input, grad_output) and backward
    pre-hooks (module, grad_output) of one module call, as torch does."""

    def __init__(self, module: Any, user_hooks: List[Callable[..., Any]], user_pre_hooks: List[Callable[..., Any]]) -> None:
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.module = module
        self.grad_outputs: Optional[Tuple[Any, ...]] = None
        self.n_outputs = -1
        self.output_tensors_index: Optional[List[int]] = None
        self.n_inputs = -1
        self.input_tensors_index: Optional[List[int]] = None

    @staticmethod
    def _pack_with_none(indices: Sequence[int], values: Sequence[Any], size: int) -> Tuple[Any, ...]:
        res: List[Any] = [None] * size
        for idx, val in zip(indices, values):
            res[idx] = val
        return tuple(res)

    @staticmethod
    def _unpack_none(indices: Sequence[int], values: Sequence[Any]) -> Tuple[Any, ...]:
        return tuple(values[idx] for idx in indices)

    def _input_callback(self, grad_input: Tuple[Any, ...]) -> Tuple[Any, ...]:
        if self.grad_outputs is None:  # no output gradient reached this module
            return grad_input
        assert self.input_tensors_index is not None
        res = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
        for hook in self.user_hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if not isinstance(out, tuple):
                out = (out,)
            if len(out) != len(res):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(out)}, "
                                   f"but expected {len(res)}")
            res = out
        self.grad_outputs = None
        return self._unpack_none(self.input_tensors_index, res)

    def _output_callback(self, grad_output: Tuple[Any, ...]) -> Tuple[Any, ...]:
        assert self.output_tensors_index is not None
        self.grad_outputs = self._pack_with_none(self.output_tensors_index, grad_output, self.n_outputs)
        for pre_hook in self.user_pre_hooks:
            new = pre_hook(self.module, self.grad_outputs)
            if new is None:
                continue
            if not isinstance(new, tuple):
                new = (new,)
            if len(new) != len(self.grad_outputs):
                raise RuntimeError(f"Backward pre hook returned an invalid number of grad_output, got {len(new)}, "
                                   f"but expected {len(self.grad_outputs)}")
            self.grad_outputs = new
        local = self.grad_outputs
        if self.input_tensors_index is None:  # no input requires grad: run the hooks now
            grad_inputs = self._pack_with_none([], [], self.n_inputs)
            for hook in self.user_hooks:
                res = hook(self.module, grad_inputs, self.grad_outputs)
                if res is not None and not (isinstance(res, tuple) and all(el is None for el in res)):
                    raise RuntimeError("Backward hook for Modules where no input requires gradient should always "
                                       "return None or None for all gradients.")
            self.grad_outputs = None
        return tuple(local[i] for i in self.output_tensors_index)

    def _apply_on_tensors(self, callback: Callable[[Tuple[Any, ...]], Tuple[Any, ...]],
                          args: Tuple[Any, ...]) -> Tuple[Tuple[Any, ...], Optional[List[int]]]:
        idx = [i for i, a in enumerate(args) if _is_tensor(a)]
        tensors = [args[i] for i in idx]
        if not (_C.is_grad_enabled() and any(t.requires_grad for t in tensors)):
            return args, None
        new = _HookFunction.apply(callback, *tensors)
        out = list(args)
        for i, t in zip(idx, new):
            out[i] = t
        return tuple(out), idx

    def setup_input_hook(self, args: Tuple[Any, ...]) -> Tuple[Any, ...]:
        res, idx = self._apply_on_tensors(self._input_callback, args)
        self.n_inputs = len(args)
        self.input_tensors_index = idx
        return res

    def setup_output_hook(self, args: Any) -> Any:
        is_tuple = isinstance(args, tuple)
        if not is_tuple:
            args = (args,)
        res, idx = self._apply_on_tensors(self._output_callback, args)
        self.n_outputs = len(args)
        self.output_tensors_index = idx
        return res if is_tuple else res[0]
