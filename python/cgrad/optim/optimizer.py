"""The Optimizer base class (torch.optim.Optimizer): parameter groups with
their defaults, per-parameter state, zero_grad, state_dict / load_state_dict
in PyTorch's layout, and step hooks. The optimizers' steps are single C calls
per parameter group (cgrad._C._sgd_step, ...); this module holds only the
bookkeeping around them."""
from __future__ import annotations

import functools
from collections import OrderedDict, defaultdict
from copy import deepcopy
from itertools import chain
from typing import Any, Callable, DefaultDict, Dict, Hashable, Iterable, List, Optional, Tuple, Union

from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad
from .. import _C

__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]

ParamsT = Union[Iterable[Tensor], Iterable[Dict[str, Any]], Iterable[Tuple[str, Tensor]]]
StateDict = Dict[str, Any]


class _RequiredParameter:
    """Singleton class representing a required parameter for an Optimizer."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


class _RemovableHandle:
    """A handle removing one hook from the dict it was registered in
    (torch.utils.hooks.RemovableHandle)."""

    _next_id = 0

    def __init__(self, hooks_dict: Dict[int, Any]) -> None:
        self._hooks = hooks_dict
        self.id = _RemovableHandle._next_id
        _RemovableHandle._next_id += 1

    def remove(self) -> None:
        self._hooks.pop(self.id, None)

    def __enter__(self) -> "_RemovableHandle":
        return self

    def __exit__(self, *args: Any) -> None:
        self.remove()


_global_optimizer_pre_hooks: Dict[int, Callable[..., Any]] = OrderedDict()
_global_optimizer_post_hooks: Dict[int, Callable[..., Any]] = OrderedDict()


def register_optimizer_step_pre_hook(hook: Callable[..., Any]) -> _RemovableHandle:
    """Register a pre hook common to all optimizers: hook(optimizer, args, kwargs)."""
    handle = _RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook: Callable[..., Any]) -> _RemovableHandle:
    """Register a post hook common to all optimizers: hook(optimizer, args, kwargs)."""
    handle = _RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


def _hooked_step(func: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a subclass's step so the step pre / post hooks run around it."""

    @functools.wraps(func)
    def step(self: "Optimizer", *args: Any, **kwargs: Any) -> Any:
        if not (self._optimizer_step_pre_hooks or _global_optimizer_pre_hooks or self._optimizer_step_post_hooks
                or _global_optimizer_post_hooks):
            return func(self, *args, **kwargs)
        for pre_hook in chain(_global_optimizer_pre_hooks.values(), self._optimizer_step_pre_hooks.values()):
            result = pre_hook(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(f"{func} must return None or a tuple of (new_args, new_kwargs), but got {result}.")
        out = func(self, *args, **kwargs)
        for post_hook in chain(self._optimizer_step_post_hooks.values(), _global_optimizer_post_hooks.values()):
            post_hook(self, args, kwargs)
        return out

    step.hooked = True  # type: ignore[attr-defined]
    return step


def _check_unsupported(name: str, **options: Any) -> None:
    """Options PyTorch has that cgrad does not implement: accepted when off."""
    for key, value in options.items():
        if value:
            raise NotImplementedError(f"{name}: {key}=True is not supported by cgrad.optim")


def _check_fused_foreach(fused: Optional[bool], foreach: Optional[bool]) -> None:
    # cgrad's steps are always fused C calls: fused=True and foreach=True both
    # select them; PyTorch rejects the two together and so do we.
    if fused and foreach:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


class Optimizer:
    """Base class for all optimizers.

    Args:
        params: an iterable of Tensors, of (name, Tensor) pairs or of dicts
            (parameter groups).
        defaults: default values of the optimization options (used when a
            parameter group does not specify them).
    """

    def __init__(self, params: ParamsT, defaults: Dict[str, Any]) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks: Dict[int, Callable[..., Any]] = OrderedDict()
        self._optimizer_step_post_hooks: Dict[int, Callable[..., Any]] = OrderedDict()
        self._optimizer_state_dict_pre_hooks: Dict[int, Callable[..., Any]] = OrderedDict()
        self._optimizer_state_dict_post_hooks: Dict[int, Callable[..., Any]] = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks: Dict[int, Callable[..., Any]] = OrderedDict()
        self._optimizer_load_state_dict_post_hooks: Dict[int, Callable[..., Any]] = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            "but got " + _typename(params))
        self.state: DefaultDict[Any, Any] = defaultdict(dict)
        self.param_groups: List[Dict[str, Any]] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "hooked", False):
            cls.step = _hooked_step(step)  # type: ignore[method-assign]

    def __getstate__(self) -> Dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks", "_optimizer_state_dict_pre_hooks",
                     "_optimizer_state_dict_post_hooks", "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self.defaults.setdefault("differentiable", False)

    def __repr__(self) -> str:
        format_string = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            format_string += "\n"
            format_string += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    format_string += f"    {key}: {group[key]}\n"
        format_string += ")"
        return format_string

    # ---------------------------------------------------------- hooks
    def register_step_pre_hook(self, hook: Callable[..., Any]) -> _RemovableHandle:
        """hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs), run before step."""
        handle = _RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook: Callable[..., Any]) -> _RemovableHandle:
        """hook(optimizer, args, kwargs) -> None, run after step."""
        handle = _RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    def _register(self, hooks: Dict[int, Callable[..., Any]], hook: Callable[..., Any],
                  prepend: bool) -> _RemovableHandle:
        handle = _RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)  # type: ignore[attr-defined]
        return handle

    def register_state_dict_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> _RemovableHandle:
        """hook(optimizer), run before state_dict."""
        return self._register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable[..., Any], prepend: bool = False) -> _RemovableHandle:
        """hook(optimizer, state_dict) -> state_dict or None, run after state_dict."""
        return self._register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> _RemovableHandle:
        """hook(optimizer, state_dict) -> state_dict or None, run before load_state_dict."""
        return self._register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any], prepend: bool = False) -> _RemovableHandle:
        """hook(optimizer), run after load_state_dict."""
        return self._register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # ---------------------------------------------------------- state dict
    def state_dict(self) -> StateDict:
        """The optimizer's state: {'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}.
        Tensors are references to the live state (as in PyTorch)."""
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)
        param_mappings: Dict[int, int] = {}
        start_index = 0

        def pack_group(group: Dict[str, Any]) -> Dict[str, Any]:
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            param_mappings.update({id(p): i for i, p in enumerate(group["params"], start_index)
                                   if id(p) not in param_mappings})
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(param_mappings[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": param_groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            hook_result = post_hook(self, state_dict)
            if hook_result is not None:
                state_dict = hook_result
        return state_dict

    @staticmethod
    def _process_value_according_to_param_policy(param: Tensor, value: Tensor, param_id: Any,
                                                 param_groups: List[Dict[str, Any]], key: Hashable = None) -> Tensor:
        if key == "step":
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)

    def load_state_dict(self, state_dict: StateDict) -> None:
        """Load a state produced by state_dict() (ours, or PyTorch's with its tensors converted)."""
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            hook_result = pre_hook(self, state_dict)
            if hook_result is not None:
                state_dict = hook_result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def _cast(param: Tensor, value: Any, param_id: Any = None, param_groups: Any = None, key: Any = None) -> Any:
            if isinstance(value, Tensor):
                return Optimizer._process_value_according_to_param_policy(param, value, param_id, param_groups, key)
            if isinstance(value, dict):
                return {k: _cast(param, v, param_id=param_id, param_groups=param_groups, key=k)
                        for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(_cast(param, v, param_id=param_id, param_groups=param_groups) for v in value)
            return value

        state: DefaultDict[Any, Dict[Any, Any]] = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = _cast(param, v, param_id=k, param_groups=state_dict["param_groups"])
            else:
                state[k] = v

        def update_group(group: Dict[str, Any], new_group: Dict[str, Any]) -> Dict[str, Any]:
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    def _steps_to_tensors(self) -> None:
        """Loaded states may hold the step as a number (old PyTorch checkpoints): make it a 0-d float32 tensor."""
        for group in self.param_groups:
            for p in group["params"]:
                p_state = self.state.get(p)
                if p_state and "step" in p_state and not isinstance(p_state["step"], Tensor):
                    p_state["step"] = _C.tensor(float(p_state["step"]), dtype=_C.float32)

    # ---------------------------------------------------------- gradients and steps
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all optimized tensors (to None by default, else to zero)."""
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is not None:
                    if set_to_none:
                        p.grad = None
                    else:
                        if g.grad_fn is not None:
                            g.detach_()
                        else:
                            g.requires_grad_(False)
                        g.zero_()

    @_hooked_step
    def step(self, closure: Optional[Callable[[], Any]] = None) -> Any:
        """Perform a single optimization step; `closure` re-evaluates the model and returns the loss.
        Each param group's parameters that have a gradient go to _group_step together (one fused C
        call per group in the built-in optimizers)."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            if params:
                self._group_step(group, params, [p.grad for p in params])
        return loss

    def _group_step(self, group: Dict[str, Any], params: List[Tensor], grads: List[Tensor]) -> None:
        """Update `params` (those of `group` with a gradient) from `grads`: what a subclass provides,
        unless it overrides step itself."""
        raise NotImplementedError(f"{type(self).__name__}: an optimizer defines step() or _group_step()")

    def _states(self, params: List[Tensor], group: Dict[str, Any], key: str) -> List[Dict[str, Any]]:
        """The state dicts of `params`, created by _init_state(p, group) where `key` is missing."""
        state = self.state
        return [state[p] if key in state[p] else self._init_state(p, group) for p in params]

    def _init_state(self, p: Tensor, group: Dict[str, Any]) -> Dict[str, Any]:
        raise NotImplementedError(f"{type(self).__name__}: no _init_state for lazily created state")

    def add_param_group(self, param_group: Dict[str, Any]) -> None:
        """Add a parameter group (a dict with 'params' and optional option values) to param_groups."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        tensors = []
        names = []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) == len(tensors):
                param_group["param_names"] = names
            else:
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(param))
            if not self.defaults.get("differentiable", None) and not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        params = param_group["params"]
        if len(params) != len(set(params)):
            import warnings

            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will cause "
                          "an error; see github.com/pytorch/pytorch/issues/40967 for more information", stacklevel=3)
        param_set: set = set()
        for group in self.param_groups:
            param_set.update(set(group["params"]))
            if ("param_names" in param_group) != ("param_names" in group):
                current_group_txt = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {current_group_txt} to the optimizer")
        if not param_set.isdisjoint(set(param_group["params"])):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)


def _typename(obj: Any) -> str:
    if isinstance(obj, Tensor):
        return "cgrad.Tensor"
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in ("builtins", "__builtin__", None) else f"{module}.{name}"


def _zeros_like(p: Tensor) -> Tensor:
    return _C.zeros_like(p)


def _scalar_step() -> Tensor:
    return _C.tensor(0.0, dtype=_C.float32)
