"""cgrad.autograd.function: custom differentiable operations (autograd.Function).

`F.apply(*args)` runs `F.forward` under no_grad, then gives the outputs an
engine custom node (named "<F>Backward") whose backward calls `F.backward`
through the C trampoline in _C/function.c. The context object (`ctx`) is owned
by that node and never owns it back, so the graph's lifetime decides ctx's:
saved tensors live in the node (version-checked, freed by a backward without
retain_graph) and ctx dies with the graph."""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Optional, Tuple

from .. import _C

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "InplaceFunction", "once_differentiable"]


def _is_tensor(x: Any) -> bool:
    return isinstance(x, _C._TensorBase)


class FunctionCtx(_C._FunctionCtx):
    """The `ctx` argument of forward/backward: saves tensors and flags for backward."""

    def save_for_backward(self, *tensors: Optional[_C._TensorBase]) -> None:
        """Save tensors (or None) for backward; read them back with `saved_tensors`."""
        for i, t in enumerate(tensors):
            if t is not None and not _is_tensor(t):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is not a Tensor "
                                f"(got {type(t).__name__})")
        self.to_save = tensors

    def save_for_forward(self, *tensors: Optional[_C._TensorBase]) -> None:
        """Save tensors for forward-mode AD (kept as given; cgrad has no forward-mode AD)."""
        self.saved_for_forward = tensors

    def mark_dirty(self, *args: _C._TensorBase) -> None:
        """Declare inputs modified in place by forward (they must be returned as outputs)."""
        self.dirty_tensors = args

    def mark_shared_storage(self, *pairs: Any) -> None:
        """Deprecated in PyTorch; nothing to do."""

    def mark_non_differentiable(self, *args: _C._TensorBase) -> None:
        """Declare outputs that are not differentiable (backward receives zeros for them)."""
        self.non_differentiable = args

    def set_materialize_grads(self, value: bool) -> None:
        """False: backward receives None (not zeros) for outputs that got no gradient."""
        self.materialize_grads = bool(value)

    @property
    def saved_tensors(self) -> Tuple[Optional[_C._TensorBase], ...]:
        spec = self.__dict__.get("_saved_spec")
        if spec is None:  # no graph node (forward still running, or no input needs a gradient)
            return tuple(self.__dict__.get("to_save", ()))
        return tuple(None if s is None else self._saved(s) for s in spec)

    saved_variables = saved_tensors

    # -- called by Function.apply and the C trampoline --------------------------------

    def _call_backward(self, grads: Tuple[Optional[_C._TensorBase], ...]) -> Tuple[Optional[_C._TensorBase], ...]:
        """Run the user's backward with one gradient per forward output; return one
        gradient (or None) per tensor input, checked against the inputs."""
        name = type(self).__name__
        full: list = [None] * self._n_forward_outputs
        for k, pos in enumerate(self._tensor_output_pos):
            full[pos] = grads[k]
        result = self._forward_cls.backward(self, *full)
        if not isinstance(result, tuple):
            result = (result,)
        n = len(self._is_tensor_input)
        if len(result) > n and all(r is None for r in result[n:]):
            result = result[:n]
        if len(result) != n:
            raise RuntimeError(f"function {name} returned an incorrect number of gradients (expected {n}, "
                               f"got {len(result)})")
        out = []
        k = 0
        for i, (g, is_t) in enumerate(zip(result, self._is_tensor_input)):
            if not is_t:
                if g is not None:
                    raise RuntimeError(f"function {name} returned a gradient different than None at position "
                                       f"{i + 1}, but the corresponding forward input was not a Variable")
                continue
            if g is not None:
                if not _is_tensor(g):
                    raise TypeError(f"function {name} returned a gradient of type {type(g).__name__} at "
                                    f"position {i + 1}; expected a Tensor or None")
                shape, dtype = self._input_meta[k]
                if tuple(g.shape) != shape:
                    try:
                        g = _C._ag_sum_to_size(g, shape)
                    except RuntimeError:
                        raise RuntimeError(f"Function {name} returned an invalid gradient at index {k} - got "
                                           f"{list(g.shape)} but expected shape compatible with {list(shape)}") from None
                if g.dtype != dtype:
                    g = g.to(dtype)
            out.append(g)
            k += 1
        return tuple(out)


class BackwardCFunction(FunctionCtx):
    """Base of the per-Function context classes (`<Name>Backward`)."""
    _forward_cls: Any = None

    def apply(self, *args: Any) -> Any:
        return self._forward_cls.backward(self, *args)


class FunctionMeta(type):
    """Gives each Function subclass its context class, named "<Name>Backward"."""

    def __init__(cls, name: str, bases: tuple, attrs: dict) -> None:
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        super().__init__(name, bases, attrs)


class Function(metaclass=FunctionMeta):
    """Base class of custom autograd operations: define static `forward(ctx, *args)`
    (or `forward(*args)` with `setup_context(ctx, inputs, output)`) and
    `backward(ctx, *grad_outputs)`, then call `F.apply(*args)`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. "
                           "Please use new-style autograd function with static forward method. "
                           f"(Example: {type(self).__name__}.apply(...))")

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx: Any, inputs: Tuple[Any, ...], output: Any) -> Any:
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it "
                                  "with forward mode AD (cgrad has no forward-mode AD).")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        setup = cls.setup_context is not Function.setup_context
        if setup:
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        ctx = cls._backward_cls()
        grad_on = _C.is_grad_enabled()
        is_tensor = tuple(_is_tensor(a) for a in args)
        needs = tuple(t and grad_on and a.requires_grad for t, a in zip(is_tensor, args))
        ctx.needs_input_grad = needs
        ctx.materialize_grads = True
        ctx.to_save = ()
        ctx.dirty_tensors = ()
        ctx.non_differentiable = ()
        prev = _C._set_grad_enabled(False)
        try:
            if setup:
                output = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        finally:
            _C._set_grad_enabled(prev)
        return _wrap_outputs(cls, ctx, args, is_tensor, any(needs), output)


def _wrap_outputs(cls: Any, ctx: FunctionCtx, args: tuple, is_tensor: tuple, needs_graph: bool, output: Any) -> Any:
    is_tuple = isinstance(output, tuple)
    outs = output if is_tuple else (output,)
    inputs = [a for a, t in zip(args, is_tensor) if t]
    input_ids = {id(a) for a in inputs}
    dirty = {id(t) for t in ctx.dirty_tensors}
    non_diff = {id(t) for t in ctx.non_differentiable}
    for t in ctx.dirty_tensors:
        if id(t) not in input_ids:
            raise RuntimeError("mark_dirty only accepts input tensors, but argument was not an input")
    new_outs = []
    seen = set()
    for o in outs:
        if _is_tensor(o):
            if id(o) in dirty:
                if needs_graph and o.is_leaf and o.requires_grad:
                    raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
            elif id(o) in input_ids or id(o) in seen:
                o = o.detach()  # an input returned as is: a fresh alias carries the new history
            seen.add(id(o))
        new_outs.append(o)
    tensor_pos = [i for i, o in enumerate(new_outs) if _is_tensor(o)]
    if needs_graph:
        touts = tuple(new_outs[i] for i in tensor_pos)
        diff = tuple(o.dtype.is_floating_point and id(outs[i]) not in non_diff for i, o in zip(tensor_pos, touts))
        to_save = tuple(ctx.to_save)
        ctx._n_forward_outputs = len(new_outs)
        ctx._tensor_output_pos = tuple(tensor_pos)
        ctx._is_tensor_input = is_tensor
        ctx._input_meta = tuple((tuple(a.shape), a.dtype) for a in inputs)
        slots = iter(range(len(to_save)))
        ctx._saved_spec = tuple(None if t is None else next(slots) for t in to_save)
        ctx._make_node(cls.__name__ + "Backward", tuple(inputs), touts, diff,
                       tuple(t for t in to_save if t is not None), ctx.materialize_grads)
        # the node holds the saved tensors now; references kept on ctx would make cycles
        del ctx.to_save
        ctx.dirty_tensors = ()
        ctx.non_differentiable = ()
    return tuple(new_outs) if is_tuple else new_outs[0]


class InplaceFunction(Function):
    """A Function with an `inplace` flag (PyTorch compatibility)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class DelayedError(Function):
    """Outputs whose backward raises: marks results of a once_differentiable backward."""

    @staticmethod
    def forward(ctx: Any, msg: str, *tensors: Any) -> Any:
        ctx.msg = msg
        res = tuple(t.detach() if _is_tensor(t) else t for t in tensors)
        return res if len(res) != 1 else res[0]

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        raise RuntimeError(ctx.msg)


def once_differentiable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Decorator for a backward that is not itself differentiable: it runs under
    no_grad, and differentiating its results (create_graph) raises."""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        prev = _C._set_grad_enabled(False)
        try:
            outputs = fn(ctx, *args)
        finally:
            _C._set_grad_enabled(prev)
        if not _C.is_grad_enabled():
            return outputs
        if not any(_is_tensor(a) and a.requires_grad for a in args):
            return outputs
        tup = outputs if isinstance(outputs, tuple) else (outputs,)

        def fake_requires_grad(v: Any) -> Any:
            if _is_tensor(v) and v.dtype.is_floating_point:
                v = v.detach()
                v.requires_grad_(True)
            return v

        return DelayedError.apply("trying to differentiate twice a function that was marked with "
                                  "@once_differentiable", *[fake_requires_grad(v) for v in tup])

    return wrapper
