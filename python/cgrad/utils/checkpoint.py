"""cgrad.utils.checkpoint: activation checkpointing, as torch.utils.checkpoint.

`checkpoint(fn, *args)` runs `fn`, keeps only its inputs (and the RNG state),
and lets the graph `fn` built go; backward runs `fn` again on the saved inputs
with grad on and differentiates that copy. See Note [Checkpoint without
saved-tensor hooks] below for how this is done without PyTorch's saved-tensor
hooks."""
from __future__ import annotations

import contextlib
import warnings
from typing import Any, Callable, ContextManager, Dict, Iterable, List, Optional, Tuple

from .. import _C
from ..autograd.function import Function
from ..autograd import grad as _grad
from ..autograd.grad_mode import enable_grad, no_grad

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction", "check_backward_validity",
           "detach_variable", "noop_context_fn"]

# Note [Checkpoint without saved-tensor hooks]
# PyTorch's non-reentrant checkpoint drops the tensors that the forward's nodes
# save through saved-tensor hooks. cgrad has no such hooks, so checkpoint runs
# `fn` with grad on over detached copies of its tensor inputs, walks the graph
# that built (from the outputs down) to find every leaf that requires grad
# and is not one of those copies (module parameters, tensors the function
# closes over: a closed-over non-leaf is walked through to its leaves), and then
# lets that graph go. One custom Function node takes the real inputs and those
# leaves as its inputs; its backward recomputes `fn` (RNG state restored) and
# returns autograd.grad of the recomputed outputs with respect to the copies
# and the leaves. So the memory kept between forward and backward is the
# inputs only, `autograd.grad` and `backward(inputs=...)` work in both modes,
# and gradients reach parameters even when no input requires grad
# (use_reentrant=False). The forward's peak memory is that of the one segment
# with its graph, as during the recompute.

_DETERMINISM_CHECKS = ("default", "none")


class CheckpointError(RuntimeError):
    """Raised when the recomputed forward does not match the original one."""


def noop_context_fn() -> Tuple[ContextManager[Any], ContextManager[Any]]:
    """The default `context_fn`: two contexts that do nothing."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs: Tuple[Any, ...]) -> Tuple[Any, ...]:
    """Detached copies of the tensors in a tuple, keeping requires_grad; other items unchanged."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}")
    return tuple(_detach_keep(x) if _is_tensor(x) else x for x in inputs)


def check_backward_validity(inputs: Iterable[Any]) -> None:
    """Warn when no tensor in `inputs` requires grad."""
    if not any(x.requires_grad for x in inputs if _is_tensor(x)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)


def _is_tensor(x: Any) -> bool:
    return isinstance(x, _C._TensorBase)


def _detach_keep(x: Any) -> Any:
    d = x.detach()
    if x.requires_grad:
        d.requires_grad_(True)
    return d


# -- nested structures (tuples, named tuples, lists, dicts) -----------------------------

def _flatten(obj: Any, deep: bool, out: List[Any]) -> Any:
    """Append the tensors of `obj` to `out`; return a spec that _unflatten fills back."""
    if _is_tensor(obj):
        out.append(obj)
        return None
    if deep and isinstance(obj, (list, tuple)):
        return (type(obj), [_flatten(x, deep, out) for x in obj], obj)
    if deep and isinstance(obj, dict):
        return (dict, [(k, _flatten(v, deep, out)) for k, v in obj.items()], obj)
    return ("leaf", obj)


def _unflatten(spec: Any, it: Any) -> Any:
    if spec is None:
        return next(it)
    kind, items, *rest = spec
    if kind == "leaf":
        return items
    if kind is dict:
        built = {k: _unflatten(s, it) for k, s in items}
        return type(rest[0])(built) if type(rest[0]) is not dict else built
    values = [_unflatten(s, it) for s in items]
    if kind is list:
        return values
    if kind is tuple:
        return tuple(values)
    if hasattr(kind, "_fields"):  # named tuple
        return kind(*values)
    return kind(values)


def _split_output(out: Any, reentrant: bool) -> Tuple[List[Any], Any]:
    """The output's tensors that get a graph, and how to rebuild the output around them.
    The reentrant variant (an autograd.Function in PyTorch) tracks a tensor or the tensors
    of a top-level tuple only; the other variant tracks tensors at any depth."""
    tensors: List[Any] = []
    if reentrant:
        if _is_tensor(out):
            return [out], None
        if isinstance(out, tuple):
            spec = [_flatten(x, False, tensors) if _is_tensor(x) else ("leaf", _untracked_detached(x)) for x in out]
            return tensors, (tuple, spec, out)
        return [], ("leaf", _untracked_detached(out))
    return tensors, _flatten(out, True, tensors)


def _untracked_detached(out: Any) -> Any:
    """`out` with every tensor detached (what a no-grad run would have returned)."""
    tensors: List[Any] = []
    spec = _flatten(out, True, tensors)
    return _unflatten(spec, iter(t.detach() for t in tensors))


# -- the graph walk ---------------------------------------------------------------------

def _graph_leaves(outputs: List[Any], own: Dict[int, Any]) -> List[Any]:
    """Leaves requiring grad that `outputs` depend on, in first-seen order, except the
    tensors in `own` (id -> tensor: the detached input copies)."""
    found: List[Any] = []
    seen_leaf = set()
    seen = set()
    stack = [o.grad_fn for o in outputs if o.grad_fn is not None]
    for o in outputs:
        if o.grad_fn is None and o.requires_grad and id(o) not in own and id(o) not in seen_leaf:
            seen_leaf.add(id(o))
            found.append(o)
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if type(node).__name__ == "AccumulateGrad":
            var = node.variable
            if id(var) not in own and id(var) not in seen_leaf:
                seen_leaf.add(id(var))
                found.append(var)
            continue
        for nxt, _ in node.next_functions:
            if nxt is not None and nxt not in seen:
                stack.append(nxt)
    return found


def _meta(t: Any) -> Dict[str, Any]:
    return {"shape": tuple(t.shape), "dtype": t.dtype, "device": t.device}


# -- RNG / autocast state ----------------------------------------------------------------

def _autocast_state() -> Tuple[bool, Any]:
    from ..amp import autocast_mode
    return autocast_mode.is_autocast_enabled("cpu"), autocast_mode.get_autocast_dtype("cpu")


class _State:
    """What the checkpoint node keeps for its backward (the tensors themselves are saved
    through save_for_backward so in-place changes are caught)."""
    function: Callable[..., Any]
    reentrant: bool
    preserve: bool
    rng_state: Any
    autocast: Tuple[bool, Any]
    recompute_context: Any
    determinism: str
    args_spec: Any
    kwargs_spec: Any
    n_inputs: int  # tensor inputs among the saved tensors (the rest are leaves)
    grad_input_pos: List[int]  # which of them are node inputs (they required grad)
    out_meta: List[Dict[str, Any]]
    out_requires_grad: List[bool]
    out_tensors: List[Any]
    saved: Tuple[Any, ...]


def _run(state: _State, inputs: List[Any], ctx_manager: Any) -> Any:
    """Call the function on `inputs` (flat tensor list) rebuilt into its args and kwargs."""
    it = iter(inputs)
    args = _unflatten(state.args_spec, it)
    kwargs = _unflatten(state.kwargs_spec, it)
    with ctx_manager:
        return state.function(*args, **kwargs)


class CheckpointFunction(Function):
    """The checkpoint node: forward hands back the outputs computed already; backward
    recomputes them and differentiates (Note [Checkpoint without saved-tensor hooks])."""

    @staticmethod
    def forward(ctx: Any, state: _State, *tensors: Any) -> Any:
        ctx.state = state
        ctx.save_for_backward(*state.saved)
        state.saved = ()
        ctx.set_materialize_grads(False)
        outs = state.out_tensors
        state.out_tensors = []
        ctx.mark_non_differentiable(*[o for o, rg in zip(outs, state.out_requires_grad) if not rg])
        return tuple(outs)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        state: _State = ctx.state
        saved = ctx.saved_tensors
        # Under create_graph the recompute runs on the saved inputs themselves, so the
        # gradients it returns are functions of them (double backward); otherwise on copies.
        higher = _C.is_grad_enabled()
        inputs = list(saved[:state.n_inputs]) if higher else [_detach_keep(t) for t in saved[:state.n_inputs]]
        leaves = list(saved[state.n_inputs:])
        outer_rng = _C.get_rng_state() if state.preserve else None
        from .. import amp
        try:
            if state.preserve:
                _C.set_rng_state(state.rng_state)
            enabled, dtype = state.autocast
            with enable_grad(), amp.autocast("cpu", dtype=dtype, enabled=enabled):
                out = _run(state, inputs, state.recompute_context)
        finally:
            if outer_rng is not None:
                _C.set_rng_state(outer_rng)
        recomputed, _ = _split_output(out, state.reentrant)
        if state.determinism == "default":
            _check_same(state.out_meta, [_meta(t) for t in recomputed])
        outs, gs = [], []
        for o, g in zip(recomputed, grads):
            if g is not None and o.requires_grad:
                outs.append(o)
                gs.append(g)
        n_node_inputs = len(state.grad_input_pos) + len(leaves)
        if not outs:
            if state.reentrant and not any(o.requires_grad for o in recomputed):
                raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
            return (None,) * (1 + n_node_inputs)
        targets = [inputs[i] for i in state.grad_input_pos] + leaves
        result = _grad(outs, targets, gs, retain_graph=True, create_graph=higher,
                       allow_unused=True)
        return (None,) + tuple(result)


def _check_same(before: List[Dict[str, Any]], after: List[Dict[str, Any]]) -> None:
    if len(before) != len(after):
        raise CheckpointError("torch.utils.checkpoint: A different number of tensors was output during the "
                              f"original forward and recomputation.\nNumber of tensors output during forward: "
                              f"{len(before)}\nNumber of tensors output during recomputation: {len(after)}.")
    bad = [(i, b, a) for i, (b, a) in enumerate(zip(before, after)) if b != a]
    if bad:
        rows = "".join(f"tensor at position {i}:\nsaved metadata: {b}\nrecomputed metadata: {a}\n" for i, b, a in bad)
        raise CheckpointError("torch.utils.checkpoint: Recomputed values for the following tensors have different "
                              f"metadata than during the forward pass.\n{rows}")


def checkpoint(function: Callable[..., Any], *args: Any, use_reentrant: Optional[bool] = None,
               context_fn: Callable[[], Tuple[ContextManager[Any], ContextManager[Any]]] = noop_context_fn,
               determinism_check: str = "default", debug: bool = False, early_stop: bool = True,
               **kwargs: Any) -> Any:
    """Run `function(*args, **kwargs)` without keeping its intermediate activations;
    backward recomputes them. `preserve_rng_state=True` (a keyword) replays the RNG
    state for the recompute. `use_reentrant` should be passed: left out it warns and
    means True, as in PyTorch 2.13."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in "
                      "PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
                      "use_reentrant=False is recommended, but if you need to preserve the current default behavior, "
                      "you can pass use_reentrant=True. Refer to docs for more details on the differences between the "
                      "two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if not callable(function):
        raise TypeError(f"checkpoint(): argument 'function' must be callable, got {type(function).__name__}")
    forward_context: Any
    recompute_context: Any
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        forward_context, recompute_context = contextlib.nullcontext(), contextlib.nullcontext()
    else:
        if debug:
            if context_fn is not noop_context_fn:
                raise ValueError("debug=True is incompatible with non-default context_fn")
            raise NotImplementedError("checkpoint(debug=True): cgrad records no operator traces for CheckpointError")
        if determinism_check not in _DETERMINISM_CHECKS:
            raise ValueError(f"determinism_check should be one of {list(_DETERMINISM_CHECKS)}, "
                             f"but got {determinism_check}")
        forward_context, recompute_context = context_fn()
    return _checkpoint(function, args, kwargs, bool(use_reentrant), bool(preserve), forward_context,
                       recompute_context, determinism_check)


def _checkpoint(function: Callable[..., Any], args: Tuple[Any, ...], kwargs: Dict[str, Any], reentrant: bool,
                preserve: bool, forward_context: Any, recompute_context: Any, determinism: str) -> Any:
    if reentrant:
        check_backward_validity(args)
    flat: List[Any] = []
    args_spec = (tuple, [_flatten(a, not reentrant, flat) for a in args], args)
    kwargs_spec = _flatten(kwargs, True, flat)
    grad_on = _C.is_grad_enabled()
    if not grad_on or (reentrant and not any(t.requires_grad for t in flat)):
        with no_grad() if reentrant else contextlib.nullcontext(), forward_context:
            return function(*args, **kwargs)
    state = _State()
    state.function, state.reentrant, state.preserve = function, reentrant, preserve
    state.rng_state = _C.get_rng_state() if preserve else None
    state.autocast = _autocast_state()
    state.recompute_context, state.determinism = recompute_context, determinism
    state.args_spec, state.kwargs_spec = args_spec, kwargs_spec
    copies = [_detach_keep(t) for t in flat]
    out = _run(state, copies, forward_context)
    tracked, out_spec = _split_output(out, reentrant)
    own = {id(c): c for c in copies}
    leaves = _graph_leaves([t for t in tracked if t.requires_grad], own)
    grad_inputs = [i for i, t in enumerate(flat) if t.requires_grad]
    state.out_meta = [_meta(t) for t in tracked]
    state.out_requires_grad = [t.requires_grad for t in tracked]
    detached_out = [t.detach() for t in tracked]
    del out, tracked, copies, own
    if not any(state.out_requires_grad) or not (grad_inputs or leaves):
        return _unflatten(out_spec, iter(detached_out))
    state.n_inputs = len(flat)
    state.grad_input_pos = grad_inputs
    state.saved = tuple(flat) + tuple(leaves)
    state.out_tensors = detached_out
    node_inputs = [flat[i] for i in grad_inputs] + leaves
    results = CheckpointFunction.apply(state, *node_inputs)
    return _unflatten(out_spec, iter(results))


def checkpoint_sequential(functions: Any, segments: int, input: Any, use_reentrant: Optional[bool] = None,
                          **kwargs: Any) -> Any:
    """Run a Sequential (or a list of modules / functions) in `segments` chunks, each but
    the last one checkpointed."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
                      "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
                      "use_reentrant=False is recommended, but if you need to preserve the current default behavior, "
                      "you can pass use_reentrant=True. Refer to docs for more details on the differences between the "
                      "two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    from ..nn import Sequential
    if isinstance(functions, Sequential):
        functions = list(functions.children())
    if isinstance(segments, bool) or not isinstance(segments, int) or segments < 1:
        raise ValueError(f"checkpoint_sequential(): argument 'segments' must be a positive int, got {segments!r}")

    def run_range(start: int, end: int) -> Callable[[Any], Any]:
        def forward(x: Any) -> Any:
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run_range(start, end), input, use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run_range(end + 1, len(functions) - 1)(input)
