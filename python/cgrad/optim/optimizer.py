"""The Optimizer base class (torch.optim.Optimizer): parameter groups with
their defaults, per-parameter state, zero_grad, state_dict / load_state_dict
in PyTorch's layout, and step hooks. The optimizers' steps are single C calls
per parameter group (cgrad._C._sgd_step, ...); this module holds only the
bookkeeping around them."""
from __future__ import annotations

import functools
import warnings
from collections import OrderedDict, defaultdict
from copy import deepcopy
from typing import Any, Callable, DefaultDict, Dict, Iterable, List, Optional, Tuple, Union

from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad
from .. import _C

__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]

ParamsT = Union[Iterable[Tensor], Iterable[Dict[str, Any]], Iterable[Tuple[str, Tensor]]]
StateDict = Dict[str, Any]
_HookTable = Dict[int, Callable[..., Any]]


class _RequiredParameter:
    """Marks an option without a default: every parameter group must give it."""

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


def _add_hook(table: _HookTable, hook: Callable[..., Any], prepend: bool = False) -> _RemovableHandle:
    """Store `hook` in `table` (first in line when `prepend`) under a fresh handle."""
    handle = _RemovableHandle(table)
    table[handle.id] = hook
    if prepend:
        table.move_to_end(handle.id, last=False)  # type: ignore[attr-defined]
    return handle


# hooks run around every optimizer's step: globals first before it, last after it
_global_step_pre: _HookTable = OrderedDict()
_global_step_post: _HookTable = OrderedDict()

# the per-optimizer hook tables (attribute names as in PyTorch)
_HOOK_TABLES = ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks", "_optimizer_state_dict_pre_hooks",
                "_optimizer_state_dict_post_hooks", "_optimizer_load_state_dict_pre_hooks",
                "_optimizer_load_state_dict_post_hooks")


def register_optimizer_step_pre_hook(hook: Callable[..., Any]) -> _RemovableHandle:
    """Register a pre hook common to all optimizers: hook(optimizer, args, kwargs)."""
    return _add_hook(_global_step_pre, hook)


def register_optimizer_step_post_hook(hook: Callable[..., Any]) -> _RemovableHandle:
    """Register a post hook common to all optimizers: hook(optimizer, args, kwargs)."""
    return _add_hook(_global_step_post, hook)


def _hooked_step(func: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a subclass's step so the step pre / post hooks run around it. Pre hooks may
    replace the call's arguments by returning (args, kwargs)."""

    @functools.wraps(func)
    def step(self: "Optimizer", *args: Any, **kwargs: Any) -> Any:
        own_pre, own_post = self._optimizer_step_pre_hooks, self._optimizer_step_post_hooks
        if not (own_pre or own_post or _global_step_pre or _global_step_post):
            return func(self, *args, **kwargs)  # the usual case: no hooks at all
        for hook in [*_global_step_pre.values(), *own_pre.values()]:
            replaced = hook(self, args, kwargs)
            if replaced is None:
                continue
            if not (isinstance(replaced, tuple) and len(replaced) == 2):
                raise RuntimeError(f"{func} must return None or a tuple of (new_args, new_kwargs), "
                                   f"but got {replaced}.")
            args, kwargs = replaced
        loss = func(self, *args, **kwargs)
        for hook in [*own_post.values(), *_global_step_post.values()]:
            hook(self, args, kwargs)
        return loss

    step._cgrad_step_hooks = True  # type: ignore[attr-defined]
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


def _check_lr(lr: Union[float, Tensor], reject_nan: bool = True) -> None:
    """A learning rate is a number or a one-element tensor, and not negative."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    _check_nonnegative((("learning rate", lr),), reject_nan)


def _check_nonnegative(options: Iterable[Tuple[str, Any]], reject_nan: bool = True) -> None:
    """Raise ValueError('Invalid <what>: <value>') for the first negative option, in the
    given order. With reject_nan a NaN is invalid too (SGD lets it through, as PyTorch)."""
    for what, value in options:
        bad = not (value >= 0.0) if reject_nan else value < 0.0
        if bad:
            raise ValueError(f"Invalid {what}: {value}")


def _to_scalar(x: Any) -> Any:
    """A one-element tensor option as a Python number (PyTorch's _to_scalar / _get_value)."""
    return x.item() if isinstance(x, Tensor) else x


def _check_betas(betas: Any) -> None:
    """Both betas in [0, 1), as PyTorch checks them (index 0 first)."""
    for index in (0, 1):
        if not (0.0 <= betas[index] < 1.0):
            raise ValueError(f"Invalid beta parameter at index {index}: {betas[index]}")


class Optimizer:
    """Base class for all optimizers.

    Args:
        params: an iterable of Tensors, of (name, Tensor) pairs or of dicts
            (parameter groups).
        defaults: default values of the optimization options (used when a
            parameter group does not specify them).
    """

    # group options an optimizer fills in when loading an older state (setdefault), and
    # options it always overrides there
    _group_fallbacks: Dict[str, Any] = {}
    _group_forced: Dict[str, Any] = {}
    # whether the per-parameter state keeps its step count as a tensor
    _tensor_steps = False

    def __init__(self, params: ParamsT, defaults: Dict[str, Any]) -> None:
        self.defaults = defaults
        for table in _HOOK_TABLES:
            setattr(self, table, OrderedDict())
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            "but got " + _typename(params))
        self.state: DefaultDict[Any, Any] = defaultdict(dict)
        self.param_groups: List[Dict[str, Any]] = []
        entries = list(params)
        if not entries:
            raise ValueError("optimizer got an empty parameter list")
        groups = entries if isinstance(entries[0], dict) else [{"params": entries}]
        for group in groups:
            self.add_param_group(group)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own_step = cls.__dict__.get("step")
        if own_step is not None and not getattr(own_step, "_cgrad_step_hooks", False):
            cls.step = _hooked_step(own_step)  # type: ignore[method-assign]

    def __getstate__(self) -> Dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(state)
        for table in _HOOK_TABLES:
            self.__dict__.setdefault(table, OrderedDict())
        self.defaults.setdefault("differentiable", False)
        for group in self.param_groups:
            for key, value in self._group_fallbacks.items():
                group.setdefault(key, value)
            group.update(self._group_forced)
        if self._tensor_steps:
            self._steps_to_tensors()

    def __repr__(self) -> str:
        blocks = []
        for number, group in enumerate(self.param_groups):
            options = "".join(f"    {key}: {group[key]}\n" for key in sorted(group) if key != "params")
            blocks.append(f"\nParameter Group {number}\n{options}")
        return f"{type(self).__name__} ({''.join(blocks)})"

    # ---------------------------------------------------------- hooks
    def register_step_pre_hook(self, hook: Callable[..., Any]) -> _RemovableHandle:
        """hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs), run before step."""
        return _add_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook: Callable[..., Any]) -> _RemovableHandle:
        """hook(optimizer, args, kwargs) -> None, run after step."""
        return _add_hook(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> _RemovableHandle:
        """hook(optimizer), run before state_dict."""
        return _add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable[..., Any], prepend: bool = False) -> _RemovableHandle:
        """hook(optimizer, state_dict) -> state_dict or None, run after state_dict."""
        return _add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> _RemovableHandle:
        """hook(optimizer, state_dict) -> state_dict or None, run before load_state_dict."""
        return _add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any], prepend: bool = False) -> _RemovableHandle:
        """hook(optimizer), run after load_state_dict."""
        return _add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    def _pass_through(self, table: _HookTable, sd: StateDict) -> StateDict:
        """Hand `sd` to each hook of `table` in turn; a hook returning a dict replaces it."""
        for hook in table.values():
            replacement = hook(self, sd)
            if replacement is not None:
                sd = replacement
        return sd

    # ---------------------------------------------------------- state dict
    def _param_numbers(self) -> Dict[int, int]:
        """id(parameter) -> its number in the state dict: the position in the groups'
        concatenated parameter lists. A parameter listed in two groups keeps the number
        of the first; one listed twice in a group takes its later position there."""
        numbers: Dict[int, int] = {}
        position = 0
        for group in self.param_groups:
            in_group: Dict[int, int] = {}
            for p in group["params"]:
                in_group[id(p)] = position
                position += 1
            for key, number in in_group.items():
                numbers.setdefault(key, number)
        return numbers

    def state_dict(self) -> StateDict:
        """The optimizer's state: {'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}.
        Tensors are references to the live state (as in PyTorch)."""
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        numbers = self._param_numbers()
        saved_groups = []
        for group in self.param_groups:
            saved = {key: value for key, value in group.items() if key != "params"}
            saved["params"] = [numbers[id(p)] for p in group["params"]]
            saved_groups.append(saved)
        saved_state = {}
        for key, value in self.state.items():
            saved_state[numbers[id(key)] if isinstance(key, Tensor) else key] = value
        return self._pass_through(self._optimizer_state_dict_post_hooks,
                                  {"state": saved_state, "param_groups": saved_groups})

    @staticmethod
    def _loaded_value(param: Tensor, value: Any, key: Any = None) -> Any:
        """A copy of a loaded state entry for `param`: tensors move to its device, floating
        ones also to its dtype (floating parameters fix the state's precision); the
        step count (key 'step') is kept as saved. Dicts and lists are copied through."""
        if isinstance(value, Tensor):
            if key == "step":
                return value
            dtype = param.dtype if param.is_floating_point() else value.dtype
            return value.to(device=param.device, dtype=dtype)
        if isinstance(value, dict):
            return {k: Optimizer._loaded_value(param, v, k) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(Optimizer._loaded_value(param, v) for v in value)
        return value

    def load_state_dict(self, state_dict: StateDict) -> None:
        """Load a state produced by state_dict() (ours, or PyTorch's with its tensors converted)."""
        sd = self._pass_through(self._optimizer_load_state_dict_pre_hooks, dict(state_dict))
        live_groups = self.param_groups
        loaded_groups = deepcopy(sd["param_groups"])  # becomes our param_groups
        if len(loaded_groups) != len(live_groups):
            raise ValueError("loaded state dict has a different number of parameter groups "
                             f"({len(loaded_groups)}, the optimizer has {len(live_groups)})")
        live_of: Dict[Any, Tensor] = {}
        for loaded, live in zip(loaded_groups, live_groups):
            if len(loaded["params"]) != len(live["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                                 f"optimizer's group ({len(loaded['params'])} vs {len(live['params'])} parameters)")
        for loaded, live in zip(loaded_groups, live_groups):
            live_of.update(zip(loaded["params"], live["params"]))
        # entries of our parameters are copied to their device / dtype; others are kept
        # as they are (old checkpoints may hold such entries)
        state: DefaultDict[Any, Any] = defaultdict(dict)
        for key, entry in sd["state"].items():
            if key in live_of:
                param = live_of[key]
                state[param] = self._loaded_value(param, entry)
            else:
                state[key] = entry
        for loaded, live in zip(loaded_groups, live_groups):
            loaded["params"] = live["params"]
            if "param_names" in live:
                loaded.setdefault("param_names", live["param_names"])
        self.__setstate__({"state": state, "param_groups": loaded_groups})
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)

    def _steps_to_tensors(self) -> None:
        """Loaded states may hold the step as a number (old PyTorch checkpoints): make it a 0-d float32 tensor."""
        for p in self._all_params():
            entry = self.state.get(p)
            if entry and "step" in entry and not isinstance(entry["step"], Tensor):
                entry["step"] = _C.tensor(float(entry["step"]), dtype=_C.float32)

    # ---------------------------------------------------------- gradients and steps
    def _all_params(self) -> Iterable[Tensor]:
        for group in self.param_groups:
            yield from group["params"]

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all optimized tensors (to None by default, else to zero)."""
        for p in self._all_params():
            g = p.grad
            if g is None:
                continue
            if set_to_none:
                p.grad = None
                continue
            # the zeroed gradient must not record history
            if g.grad_fn is None:
                g.requires_grad_(False)
            else:
                g.detach_()
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

    # ---------------------------------------------------------- parameter groups
    def add_param_group(self, param_group: Dict[str, Any]) -> None:
        """Add a parameter group (a dict with 'params' and optional option values) to param_groups."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        tensors, names = _unpack_params(param_group["params"])
        param_group["params"] = tensors
        if names is not None:
            param_group["param_names"] = names
        differentiable = self.defaults.get("differentiable", None)
        for p in tensors:
            _check_param(p, differentiable)
        for option, default in self.defaults.items():
            if option in param_group:
                continue
            if default is required:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter "
                                 f"{option}")
            param_group[option] = default
        distinct = set(tensors)
        if len(distinct) != len(tensors):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        named = names is not None
        if any(("param_names" in group) != named for group in self.param_groups):
            raise ValueError("all optimizer param groups should be with/without names. cannot add param group "
                             f"{'with' if named else 'without'} names to the optimizer")
        if any(not distinct.isdisjoint(group["params"]) for group in self.param_groups):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)


def _unpack_params(params: Any) -> Tuple[List[Tensor], Optional[List[str]]]:
    """A group's 'params' entry as (tensors, names or None): one Tensor, or an ordered
    collection of Tensors or of (name, Tensor) pairs (all named or none)."""
    if isinstance(params, Tensor):
        return [params], None
    if isinstance(params, set):
        raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                        "tensors in sets will change between runs. Please use a list instead.")
    items = list(params)
    pairs = [item for item in items if isinstance(item, tuple)]
    if not pairs:
        return items, None
    if len(pairs) != len(items):
        raise ValueError("all optimizer params should be with/without names. Some param names are missing")
    return [pair[1] for pair in pairs], [pair[0] for pair in pairs]


def _check_param(p: Any, differentiable: Any) -> None:
    if not isinstance(p, Tensor):
        raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(p))
    if not differentiable and not (p.is_leaf or p.retains_grad):
        raise ValueError("can't optimize a non-leaf Tensor")


def _typename(obj: Any) -> str:
    if isinstance(obj, Tensor):
        return "cgrad.Tensor"
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in ("builtins", "__builtin__", None) else f"{module}.{name}"


def _zeros_like(p: Tensor) -> Tensor:
    return _C.zeros_like(p)


def _scalar_state(value: float = 0.0) -> Tensor:
    """A 0-d float32 state tensor, as PyTorch keeps step, mu_product, eta and mu."""
    return _C.tensor(float(value), dtype=_C.float32)


def _scalar_step() -> Tensor:
    return _scalar_state(0.0)


class _ZeroStateOptimizer(Optimizer):
    """An optimizer whose per-parameter state is a 0-d float32 step and the tensors of zeros
    shaped like the parameter named in _zero_states (created at its first step)."""

    _tensor_steps = True
    _zero_states: Tuple[str, ...] = ()

    def _init_state(self, p: Tensor, group: Dict[str, Any]) -> Dict[str, Any]:
        st = self.state[p]
        st["step"] = _scalar_step()
        for key in self._zero_states:
            st[key] = _zeros_like(p)
        return st
