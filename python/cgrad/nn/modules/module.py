"""Module: the base class of every layer, with torch.nn.Module's API and
semantics: attribute routing of Parameters / buffers / submodules, iteration
over them (names in registration order, duplicates removed), train / eval,
dtype and device moves, state_dict / load_state_dict, forward and backward
hooks, and torch's repr layout.

Module.__call__ is on the hot path of every training step: with no hook
registered it is one flag test and the call of forward (Note [Call flag])."""
from __future__ import annotations

import functools
import warnings
from collections import OrderedDict, namedtuple
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Set, Tuple, TypeVar, Union

from ... import _C
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...utils.hooks import BackwardHook, RemovableHandle
from ..parameter import Buffer, Parameter, is_lazy

__all__ = ["Module"]

T = TypeVar("T", bound="Module")

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"
# names of the hook registries whose contents route __call__ to the slow path
_CALL_HOOK_DICTS = ("_forward_pre_hooks", "_forward_hooks", "_backward_pre_hooks", "_backward_hooks")
# set by cgrad.profiler while a profile(with_modules=True) window records: calls then run in a range
_profile_ranges = False


def _set_profile_ranges(on: bool) -> None:
    global _profile_ranges
    _profile_ranges = on


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """load_state_dict's result: (missing_keys, unexpected_keys)."""

    __slots__ = ()

    def __repr__(self) -> str:
        if self.missing_keys or self.unexpected_keys:
            return super().__repr__()
        return "<All keys matched successfully>"

    __str__ = __repr__


def _typename(obj: Any) -> str:
    """torch.typename: 'torch.FloatTensor'-style names for tensors, the qualified type name otherwise."""
    if isinstance(obj, _C._TensorBase):
        return type(obj).__module__ + "." + type(obj).__qualname__ if type(obj) is not Tensor else "Tensor"
    module = getattr(type(obj), "__module__", "") or ""
    qualname = getattr(type(obj), "__qualname__", type(obj).__name__)
    return qualname if module in ("", "builtins") else module + "." + qualname


def _addindent(text: str, num_spaces: int) -> str:
    """Indent every line of `text` but the first by num_spaces (nested reprs)."""
    head, newline, tail = text.partition("\n")
    if not newline:
        return text
    pad = " " * num_spaces
    return head + "\n" + "\n".join(pad + line for line in tail.split("\n"))


def _block_repr(name: str, rows: List[str]) -> str:
    """name(...) with one row per line, indented by two: torch's multi-line module repr ("name()" when empty)."""
    if not rows:
        return name + "()"
    body = "".join("\n  " + row for row in rows)
    return f"{name}({body}\n)"


def _join(prefix: str, name: str) -> str:
    """Dotted path of `name` under `prefix` ("" is the root)."""
    return f"{prefix}.{name}" if prefix else name


def _discard(name: str, *holders: Any) -> None:
    """Remove `name` from each dict / set that holds it."""
    for holder in holders:
        if isinstance(holder, set):
            holder.discard(name)
        else:
            holder.pop(name, None)


def _overrides(module: "Module", method: str) -> bool:
    """Whether module's class replaces Module's `method` (get_extra_state / set_extra_state)."""
    return getattr(type(module), method, None) is not getattr(Module, method)


def _floating_cast(method: str) -> Callable[[Tensor], Tensor]:
    """fn for Module._apply: call Tensor.<method>() on floating-point tensors, keep the others."""
    def cast(t: Tensor) -> Tensor:
        return getattr(t, method)() if t.is_floating_point() else t
    return cast


def _forward_unimplemented(self: "Module", *input: Any) -> None:
    raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')


# Note [Call flag]: `_has_call_hooks` is True while any of the four hook
# registries of _CALL_HOOK_DICTS is non-empty; it is recomputed when a hook is
# registered, when a handle removes one and when a registry is reassigned, so
# __call__ tests one attribute instead of four dicts.

# The per-instance registries Module.__init__ creates (and __setstate__ restores
# for objects pickled without them), in torch's order.
_HOOK_REGISTRIES = ("_backward_pre_hooks", "_backward_hooks", "_forward_hooks", "_forward_hooks_with_kwargs",
                    "_forward_hooks_always_called", "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs",
                    "_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
                    "_load_state_dict_post_hooks")


def _parameter_items(module: "Module") -> Any:
    return module._parameters.items()


def _buffer_items(module: "Module") -> Any:
    return module._buffers.items()


class Module:
    """Base class of all neural-network modules (torch.nn.Module)."""

    dump_patches: bool = False
    _version: int = 1
    training: bool
    call_super_init: bool = False
    forward: Callable[..., Any] = _forward_unimplemented

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if self.call_super_init is False:
            if kwargs:
                raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                                f"'{next(iter(kwargs))}'")
            if args:
                raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                                f"{len(args) + 1} were given")
        fields: Dict[str, Any] = {"training": True, "_parameters": {}, "_buffers": {},
                                  "_non_persistent_buffers_set": set(), "_is_full_backward_hook": None}
        fields.update((name, OrderedDict()) for name in _HOOK_REGISTRIES)
        fields["_modules"] = {}
        fields["_has_call_hooks"] = False
        set_field = super().__setattr__
        for name, value in fields.items():
            set_field(name, value)
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    # ------------------------------------------------------------------ calling

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._has_call_hooks or _profile_ranges:
            return self._call_slow(*args, **kwargs)
        return self.forward(*args, **kwargs)

    def _call_slow(self, *args: Any, **kwargs: Any) -> Any:
        """__call__ with hooks, or inside a profiler range "nn.Module: <class>" (profile(with_modules=True))."""
        run = self._call_impl if self._has_call_hooks else self.forward
        if not _profile_ranges:
            return run(*args, **kwargs)
        rid = _C._profiler_range_push(f"nn.Module: {type(self).__name__}")
        try:
            return run(*args, **kwargs)
        finally:
            _C._profiler_range_pop(rid)

    def _update_call_flag(self) -> None:
        state = self.__dict__
        flag = any(state.get(name) for name in _CALL_HOOK_DICTS)
        object.__setattr__(self, "_has_call_hooks", flag)

    def _call_impl(self, *args: Any, **kwargs: Any) -> Any:
        """The slow path of __call__: forward pre-hooks, backward-hook wiring, forward, forward hooks;
        when anything raises, the always_call forward hooks not run yet are called with output None."""
        run_forward = self.forward
        grad_out_hooks = list(self._backward_pre_hooks.values())
        grad_in_hooks = list(self._backward_hooks.values())
        done_always: Set[int] = set()
        try:
            for key, pre_hook in list(self._forward_pre_hooks.items()):
                if key not in self._forward_pre_hooks_with_kwargs:
                    changed = pre_hook(self, args)
                    if changed is not None:
                        args = changed if isinstance(changed, tuple) else (changed,)
                    continue
                changed = pre_hook(self, args, kwargs)
                if changed is None:
                    continue
                if not (isinstance(changed, tuple) and len(changed) == 2):
                    raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, "
                                       f"new_kwargs), but got {changed}.")
                args, kwargs = changed
            wiring = None
            if grad_in_hooks or grad_out_hooks:
                wiring = BackwardHook(self, grad_in_hooks, grad_out_hooks)
                args = wiring.setup_input_hook(args)
            output = run_forward(*args, **kwargs)
            for key, post_hook in list(self._forward_hooks.items()):
                if key in self._forward_hooks_always_called:
                    done_always.add(key)
                if key in self._forward_hooks_with_kwargs:
                    replaced = post_hook(self, args, kwargs, output)
                else:
                    replaced = post_hook(self, args, output)
                if replaced is not None:
                    output = replaced
            if wiring is None:
                return output
            if not isinstance(output, (_C._TensorBase, tuple)):
                warnings.warn("For backward hooks to be called, module output should be a Tensor or a tuple of "
                              f"Tensors but received {type(output)}")
            return wiring.setup_output_hook(output)
        except Exception:
            self._run_pending_always_hooks(args, kwargs, done_always)
            raise

    def _run_pending_always_hooks(self, args: Any, kwargs: Any, done: Set[int]) -> None:
        pending = [key for key in self._forward_hooks_always_called if key not in done]
        for key in [k for k in self._forward_hooks if k in pending]:
            post_hook = self._forward_hooks[key]
            try:
                if key in self._forward_hooks_with_kwargs:
                    post_hook(self, args, kwargs, None)
                else:
                    post_hook(self, args, None)
            except Exception as e:
                warnings.warn("global module forward hook with ``always_call=True`` raised an exception "
                              f"that was silenced as another error was raised in forward: {e}")

    # ------------------------------------------------------------------ hooks

    def _register_hook(self, registry: "OrderedDict[int, Any]", hook: Callable[..., Any], prepend: bool,
                       extra: Optional[List["OrderedDict[int, Any]"]] = None) -> RemovableHandle:
        handle = RemovableHandle(registry, extra_dict=extra, _on_remove=self._update_call_flag)
        registry[handle.id] = hook
        if prepend:
            registry.move_to_end(handle.id, last=False)
        self._update_call_flag()
        return handle

    @staticmethod
    def _add_plain_hook(registry: "OrderedDict[int, Any]", hook: Callable[..., Any]) -> RemovableHandle:
        """A hook of a registry that does not affect __call__ (state-dict hooks)."""
        handle = RemovableHandle(registry)
        registry[handle.id] = hook
        return handle

    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """hook(module, args) -> None or new args; with_kwargs: hook(module, args, kwargs) -> None or (args, kwargs)."""
        flags = self._forward_pre_hooks_with_kwargs
        handle = self._register_hook(self._forward_pre_hooks, hook, prepend, [flags])
        if with_kwargs:
            flags[handle.id] = True
        return handle

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """hook(module, args, output) -> None or new output; with_kwargs: hook(module, args, kwargs, output)."""
        kw_flags, always_flags = self._forward_hooks_with_kwargs, self._forward_hooks_always_called
        handle = self._register_hook(self._forward_hooks, hook, prepend, [kw_flags, always_flags])
        for wanted, flags in ((with_kwargs, kw_flags), (always_call, always_flags)):
            if wanted:
                flags[handle.id] = True
        return handle

    def register_full_backward_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """hook(module, grad_output) -> None or new grad_output, run when the output gradients are known."""
        return self._register_hook(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """hook(module, grad_input, grad_output) -> None or new grad_input, run when the input gradients are known."""
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        self._is_full_backward_hook = True
        return self._register_hook(self._backward_hooks, hook, prepend)

    def register_backward_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Deprecated in torch; here it registers a full backward hook (grad_input is the gradient of the
        module's inputs, not of the last op's inputs)."""
        warnings.warn("register_backward_hook is deprecated; cgrad runs it as a full backward hook "
                      "(use register_full_backward_hook)", FutureWarning, stacklevel=2)
        return self._register_hook(self._backward_hooks, hook, False)

    def _register_state_dict_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        return self._add_plain_hook(self._state_dict_hooks, hook)

    def register_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """hook(module, state_dict, prefix, local_metadata), run after state_dict filled this module's entries."""
        return self._add_plain_hook(self._state_dict_hooks, hook)

    def register_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """hook(module, prefix, keep_vars), run before state_dict."""
        return self._add_plain_hook(self._state_dict_pre_hooks, hook)

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)."""
        return self._add_plain_hook(self._load_state_dict_pre_hooks, functools.partial(hook, self))

    def _register_load_state_dict_pre_hook(self, hook: Callable[..., Any], with_module: bool = False) -> RemovableHandle:
        bound = functools.partial(hook, self) if with_module else hook
        return self._add_plain_hook(self._load_state_dict_pre_hooks, bound)

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """hook(module, incompatible_keys), run after load_state_dict; it may edit the key lists in place."""
        return self._add_plain_hook(self._load_state_dict_post_hooks, hook)

    # ------------------------------------------------------------------ registration

    def _check_slot_name(self, kind: str, name: Any, table: Dict[str, Any], dot_message: str) -> None:
        """The name rules shared by register_parameter / register_buffer / add_module: a string, no dot,
        not empty, and not an existing attribute unless it is already in `table`."""
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
        if name in table:
            return
        if hasattr(self, name):
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(dot_message)
        if not name:
            raise KeyError(f'{kind} name can\'t be empty string ""')

    def _own_table(self, table: str, kind: str) -> Dict[str, Any]:
        found = self.__dict__.get(table)
        if found is None:
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
        return found

    def register_parameter(self, name: str, param: Optional[Parameter]) -> None:
        """Add a parameter (or None) under `name`."""
        table = self._own_table("_parameters", "parameter")
        self._check_slot_name("parameter", name, table, 'parameter name can\'t contain "."')
        if param is not None:
            if not isinstance(param, Parameter):
                raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                                "(torch.nn.Parameter or None required)")
            if param.grad_fn is not None:
                raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                                 f"created explicitly. To express '{name}' as a function of another Tensor, compute "
                                 "the value in the forward() method.")
        table[name] = param

    def register_buffer(self, name: str, tensor: Optional[Tensor], persistent: bool = True) -> None:
        """Add a buffer (a tensor that is state but not a parameter); non-persistent ones stay out of state_dict."""
        table = self._own_table("_buffers", "buffer")
        self._check_slot_name("buffer", name, table, 'buffer name can\'t contain "."')
        if not (tensor is None or isinstance(tensor, _C._TensorBase)):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        table[name] = tensor
        transient = self._non_persistent_buffers_set
        (transient.discard if persistent else transient.add)(name)

    def add_module(self, name: str, module: Optional["Module"]) -> None:
        """Add a child module (or None) under `name`."""
        if not (module is None or isinstance(module, Module)):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        table = self._modules
        self._check_slot_name("module", name, table, f'module name can\'t contain ".", got: {name}')
        table[name] = module

    def register_module(self, name: str, module: Optional["Module"]) -> None:
        """Alias of add_module."""
        self.add_module(name, module)

    def get_submodule(self, target: str) -> "Module":
        """The submodule at dotted path `target` ("" is self)."""
        node: Module = self
        for step in (target.split(".") if target else ()):
            if not hasattr(node, step):
                raise AttributeError(node._get_name() + " has no attribute `" + step + "`")
            node = getattr(node, step)
            if not isinstance(node, Module):
                raise AttributeError("`" + step + "` is not an nn.Module")
        return node

    def set_submodule(self, target: str, module: "Module", strict: bool = False) -> None:
        """Replace (or, unless strict, add) the submodule at dotted path `target`."""
        if not target:
            raise ValueError("Cannot set the submodule without a target name!")
        owner_path, _, leaf = target.rpartition(".")
        if not isinstance(module, Module):
            raise ValueError("`module` is not an nn.Module, found " + str(type(module)))
        owner = self.get_submodule(owner_path)
        present = hasattr(owner, leaf)
        if strict and not present:
            raise AttributeError(owner._get_name() + " has no attribute `" + leaf + "`")
        if present and not isinstance(getattr(owner, leaf), Module):
            raise AttributeError("`" + leaf + "` is not an nn.Module")
        setattr(owner, leaf, module)

    def _member_at(self, target: str, accept: Callable[["Module", str, Any], bool], what: str) -> Any:
        """The attribute at dotted path `target` of a submodule, if `accept` says it is a `what`."""
        owner_path, _, leaf = target.rpartition(".")
        owner = self.get_submodule(owner_path)
        if not hasattr(owner, leaf):
            raise AttributeError(owner._get_name() + " has no attribute `" + leaf + "`")
        found = getattr(owner, leaf)
        if not accept(owner, leaf, found):
            raise AttributeError("`" + leaf + "` is not " + what)
        return found

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path `target`."""
        return self._member_at(target, lambda owner, leaf, value: isinstance(value, Parameter), "an nn.Parameter")

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path `target`."""
        return self._member_at(target, lambda owner, leaf, value: leaf in owner._buffers, "a buffer")

    def get_extra_state(self) -> Any:
        """Extra state for state_dict (override together with set_extra_state)."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called. Please file "
                           "an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml to "
                           "report this bug.")

    def set_extra_state(self, state: Any) -> None:
        """Restore what get_extra_state returned."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called. Please file "
                           "an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml to "
                           "report this bug.")

    # ------------------------------------------------------------------ attribute routing

    def __getattr__(self, name: str) -> Any:
        state = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            members = state.get(table)
            if members is not None and name in members:
                return members[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        # Where `value` goes: Parameters and names already holding one -> _parameters; Modules and
        # names already holding one -> _modules; Buffers and names already holding a buffer ->
        # _buffers; anything else is a plain attribute.
        state = self.__dict__
        if isinstance(value, Parameter):
            if "_parameters" not in state:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            _discard(name, state, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif name in state.get("_parameters", ()):
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, None)
        elif isinstance(value, Module):
            if "_modules" not in state:
                raise AttributeError("cannot assign module before Module.__init__() call")
            _discard(name, state, self._parameters, self._buffers, self._non_persistent_buffers_set)
            state["_modules"][name] = value
        elif name in state.get("_modules", ()):
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            state["_modules"][name] = None
        elif isinstance(value, Buffer) or name in state.get("_buffers", ()):
            if not (value is None or isinstance(value, _C._TensorBase)):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(torch.nn.Buffer, torch.Tensor or None expected)")
            if isinstance(value, Buffer):
                keep = value.persistent
            else:
                keep = name not in self._non_persistent_buffers_set
            if "_buffers" not in state:
                raise AttributeError("cannot assign buffer before Module.__init__() call")
            state.pop(name, None)
            self.register_buffer(name, value, keep)
        else:
            super().__setattr__(name, value)
            if name in _CALL_HOOK_DICTS:
                self._update_call_flag()

    def __delattr__(self, name: str) -> None:
        for table in (self._parameters, self._buffers, self._modules):
            if name in table:
                del table[name]
                self._non_persistent_buffers_set.discard(name)
                return
        super().__delattr__(name)

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(state)
        restored = self.__dict__
        for registry in _HOOK_REGISTRIES:
            restored.setdefault(registry, OrderedDict())
        restored.setdefault("_non_persistent_buffers_set", set())
        restored.setdefault("_is_full_backward_hook", None)
        self._update_call_flag()

    def __dir__(self) -> List[str]:
        names = [*dir(type(self)), *self.__dict__, *self._parameters, *self._modules, *self._buffers]
        return sorted(n for n in names if not n[0].isdigit())

    # ------------------------------------------------------------------ iteration

    def _named_members(self, get_members_fn: Callable[["Module"], Any], prefix: str = "", recurse: bool = True,
                       remove_duplicate: bool = True) -> Iterator[Tuple[str, Any]]:
        """(dotted name, member) over the members get_members_fn lists for each module visited,
        skipping None and (with remove_duplicate) members already yielded."""
        if recurse:
            owners: Iterable[Tuple[str, Module]] = self.named_modules(prefix=prefix,
                                                                      remove_duplicate=remove_duplicate)
        else:
            owners = ((prefix, self),)
        yielded: Set[int] = set()
        for owner_path, owner in owners:
            for name, member in get_members_fn(owner):
                if member is None or id(member) in yielded:
                    continue
                if remove_duplicate:
                    yielded.add(id(member))
                yield _join(owner_path, name), member

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """The parameters of this module (and of its submodules when recurse)."""
        return (param for _, param in self.named_parameters(recurse=recurse))

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[Tuple[str, Parameter]]:
        """(dotted name, parameter) pairs in registration order."""
        return self._named_members(_parameter_items, prefix=prefix, recurse=recurse,
                                   remove_duplicate=remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """The buffers of this module (and of its submodules when recurse)."""
        return (buf for _, buf in self.named_buffers(recurse=recurse))

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[Tuple[str, Tensor]]:
        """(dotted name, buffer) pairs in registration order."""
        return self._named_members(_buffer_items, prefix=prefix, recurse=recurse,
                                   remove_duplicate=remove_duplicate)

    def children(self) -> Iterator["Module"]:
        """The direct submodules."""
        return (child for _, child in self.named_children())

    def named_children(self) -> Iterator[Tuple[str, "Module"]]:
        """(name, direct submodule) pairs, each module once."""
        seen: Set[int] = set()
        for name, child in self._modules.items():
            if child is None or id(child) in seen:
                continue
            seen.add(id(child))
            yield name, child

    def modules(self) -> Iterator["Module"]:
        """This module and all its submodules, depth first."""
        return (node for _, node in self.named_modules())

    def named_modules(self, memo: Optional[Set["Module"]] = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[Tuple[str, "Module"]]:
        """(dotted name, module) for this module ("" or prefix) and all its submodules, depth first."""
        visited = set() if memo is None else memo
        if self in visited:
            return
        if remove_duplicate:
            visited.add(self)
        yield prefix, self
        for name, child in self._modules.items():
            if child is not None:
                yield from child.named_modules(visited, _join(prefix, name), remove_duplicate)

    # ------------------------------------------------------------------ modes and gradients

    def train(self: T, mode: bool = True) -> T:
        """Set training mode (recursively); returns self."""
        if mode is not True and mode is not False:
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for child in self.children():
            child.train(mode)
        return self

    def eval(self: T) -> T:
        """Set evaluation mode (train(False)); returns self."""
        return self.train(False)

    def requires_grad_(self: T, requires_grad: bool = True) -> T:
        """Set requires_grad of every parameter; returns self."""
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters (to None by default, else to zeros)."""
        for param in self.parameters():
            grad = param.grad
            if grad is None:
                continue
            if set_to_none:
                param.grad = None
                continue
            if grad.grad_fn is None:
                grad.requires_grad_(False)
            else:
                grad = grad.detach()
                param.grad = grad
            grad.zero_()

    def apply(self: T, fn: Callable[["Module"], None]) -> T:
        """Call fn on every submodule (children first) and on self; returns self."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    # ------------------------------------------------------------------ dtype / device

    def _apply(self: T, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> T:
        """Replace every parameter's data (and gradient) and every buffer by fn of it; children first."""
        if recurse:
            for child in self.children():
                child._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            old_grad = param.grad
            with no_grad():
                converted = fn(param)
            if converted is not param:
                param.data = converted  # across devices too: the Parameter object stays (as PyTorch's)
            if old_grad is not None:
                with no_grad():
                    param.grad = fn(old_grad)
        buffers = self._buffers
        for name in [n for n, b in buffers.items() if b is not None]:
            buffers[name] = fn(buffers[name])
        return self

    def to(self: T, *args: Any, **kwargs: Any) -> T:
        """Move / cast parameters and buffers: to(device), to(dtype), to(tensor), to(device, dtype);
        dtype casts apply to floating-point tensors only, memory_format= to the 4-D and 5-D ones."""
        memory_format = kwargs.pop("memory_format", None)
        if memory_format is not None and not isinstance(memory_format, _C.memory_format):
            raise TypeError(f"to() received an invalid combination of arguments: memory_format must be "
                            f"torch.memory_format, not {type(memory_format).__name__}")
        device, dtype, non_blocking = _parse_to(*args, **kwargs)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but got desired "
                            f"dtype={dtype}")

        def convert(t: Tensor) -> Tensor:
            kw = {"memory_format": memory_format} if memory_format is not None and t.dim() in (4, 5) else {}
            if device is not None:
                kw["device"] = device
            if dtype is not None and t.is_floating_point():
                kw["dtype"] = dtype
            return t.to(**kw) if kw else t

        return self._apply(convert)

    def to_empty(self: T, *, device: Any, recurse: bool = True) -> T:
        """Replace every parameter and buffer by uninitialized storage on `device`."""
        return self._apply(lambda t: _C.empty_like(t, device=device), recurse=recurse)

    def cpu(self: T) -> T:
        """Move parameters and buffers to the CPU."""
        return self._apply(lambda t: t.cpu())

    def cuda(self: T, device: Any = None) -> T:
        """Move parameters and buffers to a CUDA device (None: the current one), as Tensor.cuda; where no
        CUDA device is usable this raises what Tensor.cuda raises."""
        return self._apply(lambda t: t.cuda(device))

    def type(self: T, dst_type: Any) -> T:
        """Cast every parameter and buffer to dst_type."""
        return self._apply(lambda t: t.type(dst_type))

    def float(self: T) -> T:
        """Cast floating-point parameters and buffers to float32."""
        return self._apply(_floating_cast("float"))

    def double(self: T) -> T:
        """Cast floating-point parameters and buffers to float64."""
        return self._apply(_floating_cast("double"))

    def half(self: T) -> T:
        """Cast floating-point parameters and buffers to float16."""
        return self._apply(_floating_cast("half"))

    def bfloat16(self: T) -> T:
        """Cast floating-point parameters and buffers to bfloat16."""
        return self._apply(_floating_cast("bfloat16"))

    def share_memory(self: T) -> T:
        """Move every parameter, gradient and buffer into shared memory, in place (Tensor.share_memory_)."""
        for p in self.parameters():
            p.share_memory_()
            if p.grad is not None:
                p.grad.share_memory_()
        for b in self.buffers():
            b.share_memory_()
        return self

    # ------------------------------------------------------------------ state dict

    def _persistent_state(self) -> Dict[str, Tensor]:
        """This module's own state_dict entries by local name: parameters, then persistent buffers (no None)."""
        entries = {name: p for name, p in self._parameters.items() if p is not None}
        transient = self._non_persistent_buffers_set
        entries.update((name, b) for name, b in self._buffers.items() if b is not None and name not in transient)
        return entries

    def _save_to_state_dict(self, destination: Dict[str, Any], prefix: str, keep_vars: bool) -> None:
        for name, value in self._persistent_state().items():
            destination[prefix + name] = value if keep_vars else value.detach()
        if _overrides(self, "get_extra_state"):
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args: Any, destination: Any = None, prefix: str = "", keep_vars: bool = False) -> Any:
        """An OrderedDict of parameters and persistent buffers keyed by dotted name (detached unless keep_vars)."""
        if args:
            if len(args) > 3:
                raise TypeError(f"state_dict() takes at most 3 positional arguments ({len(args)} given)")
            warnings.warn("Positional args are being deprecated, use kwargs instead.", FutureWarning, stacklevel=2)
            destination, prefix, keep_vars = (*args, *(destination, prefix, keep_vars)[len(args):])
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        info = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = info
        for pre_hook in self._state_dict_pre_hooks.values():
            pre_hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, child in self._modules.items():
            if child is not None:
                child.state_dict(destination=destination, prefix=f"{prefix}{name}.", keep_vars=keep_vars)
        for post_hook in self._state_dict_hooks.values():
            replaced = post_hook(self, destination, prefix, info)
            if replaced is not None:
                destination = replaced
        return destination

    def _copy_entry(self, name: str, key: str, current: Tensor, incoming: Any, assign: bool) -> Optional[str]:
        """Load one checkpoint tensor into the parameter / buffer `name`; the error message, or None."""
        if not isinstance(incoming, _C._TensorBase):
            return (f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like object from '
                    f"checkpoint but received {type(incoming)}")
        if not is_lazy(current):
            if current.dim() == 0 and tuple(incoming.shape) == (1,):
                incoming = incoming[0]
            if tuple(incoming.shape) != tuple(current.shape):
                return (f"size mismatch for {key}: copying a param with shape {_size_str(incoming.shape)} from "
                        f"checkpoint, the shape in current model is {_size_str(current.shape)}.")
        try:
            with no_grad():
                if not assign:
                    current.copy_(incoming)
                    return None
                if isinstance(current, Parameter):
                    if isinstance(incoming, Parameter):
                        incoming.requires_grad_(current.requires_grad)
                    else:
                        incoming = Parameter(incoming, requires_grad=current.requires_grad)
                setattr(self, name, incoming)
        except Exception as ex:
            return (f'While copying the parameter named "{key}", whose dimensions in the model are '
                    f"{_size_str(current.shape)} and whose dimensions in the checkpoint are "
                    f"{_size_str(incoming.shape)}, an exception occurred : {ex.args}.")
        return None

    def _load_from_state_dict(self, state_dict: Dict[str, Any], prefix: str, local_metadata: Dict[str, Any],
                              strict: bool, missing_keys: List[str], unexpected_keys: List[str],
                              error_msgs: List[str]) -> None:
        for pre_hook in self._load_state_dict_pre_hooks.values():
            pre_hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        mine = self._persistent_state()
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, current in mine.items():
            key = prefix + name
            if key in state_dict:
                problem = self._copy_entry(name, key, current, state_dict[key], assign)
                if problem is not None:
                    error_msgs.append(problem)
            elif strict:
                missing_keys.append(key)
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        has_extra = extra_key in state_dict
        if _overrides(self, "set_extra_state"):
            if has_extra:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and has_extra:
            unexpected_keys.append(extra_key)
        if not strict:
            return
        for key in state_dict.keys():
            if key == extra_key or not key.startswith(prefix):
                continue
            head, dot, _ = key[len(prefix):].partition(".")
            if head not in (self._modules if dot else mine):
                unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy parameters and buffers from state_dict (or, with assign, take its tensors);
        returns (missing_keys, unexpected_keys); strict raises on either, shape mismatches always raise."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        report = _IncompatibleKeys([], [])
        problems: List[str] = []
        metadata = getattr(state_dict, "_metadata", None)
        entries = OrderedDict(state_dict)
        if metadata is not None:
            entries._metadata = metadata  # type: ignore[attr-defined]
        _load_subtree(self, entries, "", metadata, assign, report, problems)
        if strict:
            # problems start with the missing keys, then the unexpected ones
            for label, keys in (("Unexpected", report.unexpected_keys), ("Missing", report.missing_keys)):
                if keys:
                    listed = ", ".join(f'"{k}"' for k in keys)
                    problems.insert(0, f"{label} key(s) in state_dict: {listed}. ")
        if problems:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t" + "\n\t".join(problems))
        return report

    # ------------------------------------------------------------------ repr

    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The module's own settings for its repr (override in layers)."""
        return ""

    def __repr__(self) -> str:
        settings = self.extra_repr()
        own = settings.split("\n") if settings else []
        nested = [f"({name}): " + _addindent(repr(child), 2) for name, child in self._modules.items()]
        if len(own) == 1 and not nested:
            return f"{self._get_name()}({own[0]})"
        return _block_repr(self._get_name(), own + nested)


def _load_subtree(module: Module, entries: Dict[str, Any], prefix: str, metadata: Any, assign: bool,
                  report: _IncompatibleKeys, problems: List[str]) -> None:
    """load_state_dict's walk: load `module` from the entries under `prefix`, then each child from its own
    subset, then run the module's post-hooks (they see the key lists as filled so far)."""
    info = dict(metadata.get(prefix[:-1], {})) if metadata is not None else {}
    if assign:
        info["assign_to_params_buffers"] = assign
    module._load_from_state_dict(entries, prefix, info, True, report.missing_keys, report.unexpected_keys, problems)
    for name, child in module._modules.items():
        if child is None:
            continue
        below = f"{prefix}{name}."
        _load_subtree(child, {k: v for k, v in entries.items() if k.startswith(below)}, below, metadata, assign,
                      report, problems)
    for post_hook in module._load_state_dict_post_hooks.values():
        returned = post_hook(module, report)
        if returned is not None:
            raise RuntimeError("Hooks registered with ``register_load_state_dict_post_hook`` are not expected "
                               "to return new values, if incompatible_keys need to be modified, it should be "
                               f"done inplace. Got {returned}")


def _size_str(shape: Any) -> str:
    """The Size repr torch's load_state_dict messages print (cgrad.Size([...]))."""
    return repr(shape)


def _parse_to(*args: Any, **kwargs: Any) -> Tuple[Any, Any, bool]:
    """(device, dtype, non_blocking) from Module.to's argument forms."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = bool(kwargs.pop("non_blocking", False))
    copy = kwargs.pop("copy", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if copy:
        raise TypeError("nn.Module.to does not take a `copy` argument")
    rest = list(args)
    if rest and isinstance(rest[0], _C._TensorBase):
        t = rest.pop(0)
        device, dtype = t.device, t.dtype
    elif rest and isinstance(rest[0], _C.dtype):
        dtype = rest.pop(0)
    elif rest and (isinstance(rest[0], (str, int, _C.device))):
        device = rest.pop(0)
        if rest and isinstance(rest[0], _C.dtype):
            dtype = rest.pop(0)
    if rest and isinstance(rest[0], bool):
        non_blocking = rest.pop(0)
    if rest:
        raise TypeError(f"to() received an invalid combination of arguments: {args!r}")
    if device is not None and not isinstance(device, _C.device):  # an int: cuda:N (RuntimeError without a GPU)
        device = _C.device(device)
    return device, dtype, non_blocking
