"""add_graph's GraphDef, built by running the model once rather than by
tracing (cgrad has no JIT tracer).

Note [Graph by hooks]: every leaf submodule (one without children; never
the model itself, whose own forward is shown as its tensor ops) gets a
forward hook; its scope is its module path in PyTorch's naming
("Net/Linear[fc1]"). Each call of a leaf module becomes a node, op = its
class name, next to one node per parameter under its scope. Inputs are connected by tensor identity: a tensor a recorded call
returned, or a model input. A tensor made in between by plain tensor
operations (cgrad.relu(x), x.view(...)) is followed back through its
autograd graph -- the model runs with grad mode on and the inputs set to
require grad -- and each autograd node passed on the way becomes an op node
named after it (ReluBackward0 -> op "Relu"), until a recorded output or an
input is reached. Ops that autograd does not record (integer ops, ops on
tensors that need no grad) leave no trace, so their consumers start a new
chain there."""
from __future__ import annotations

import inspect
import re
from typing import Any, Dict, List, Optional, Sequence, Tuple

from tensorboard.compat.proto.attr_value_pb2 import AttrValue
from tensorboard.compat.proto.config_pb2 import RunMetadata
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.node_def_pb2 import NodeDef
from tensorboard.compat.proto.step_stats_pb2 import DeviceStepStats, StepStats
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.compat.proto.versions_pb2 import VersionDef

_IO = "IO Node"


def _node(name: str, op: str, inputs: Sequence[str], shape: Optional[Sequence[int]] = None,
          attributes: Optional[str] = None) -> NodeDef:
    attr: Dict[str, AttrValue] = {}
    if attributes is not None:
        attr["attr"] = AttrValue(s=attributes.encode("utf_8"))
    if shape is not None:
        attr["_output_shapes"] = AttrValue(list=AttrValue.ListValue(
            shape=[TensorShapeProto(dim=[TensorShapeProto.Dim(size=int(d)) for d in shape])]))
    return NodeDef(name=name, op=op, input=list(inputs), attr=attr)


def _tensors(obj: Any) -> List[Any]:
    """The tensors in a (nested) tuple / list / dict, in order."""
    from ... import Tensor
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _tensors(o)]
    if isinstance(obj, dict):
        return [t for o in obj.values() for t in _tensors(o)]
    return []


class _Recorder:
    """Collects nodes while the model runs (Note [Graph by hooks])."""

    def __init__(self, root_name: str) -> None:
        self.root = root_name
        self.nodes: List[NodeDef] = []
        self.names: set = set()
        self.by_tensor: Dict[int, Tuple[Any, str]] = {}   # id(tensor) -> (tensor kept alive, node name)
        self.by_fn: Dict[Any, List[str]] = {}             # autograd node -> node names it stands for
        self.params: Dict[int, str] = {}
        self.param_keys: Dict[Tuple[Any, ...], str] = {}   # parameters and input leaves, by _key
        self.input_names: set = set()

    def unique(self, base: str) -> str:
        name, k = base, 1
        while name in self.names:
            k += 1
            name = f"{base}.{k}"
        self.names.add(name)
        return name

    def add(self, name: str, op: str, inputs: Sequence[str], shape: Optional[Sequence[int]] = None,
            attributes: Optional[str] = None) -> str:
        name = self.unique(name)
        self.nodes.append(_node(name, op, inputs, shape, attributes))
        return name

    def produced(self, t: Any, name: str) -> None:
        self.by_tensor[id(t)] = (t, name)
        if t.grad_fn is not None:
            self.by_fn.setdefault(t.grad_fn, []).append(name)

    def source(self, t: Any) -> List[str]:
        hit = self.by_tensor.get(id(t))
        if hit is not None and hit[0] is t:
            return [hit[1]]
        if id(t) in self.params:
            return [self.params[id(t)]]
        if t.grad_fn is not None:
            return self.from_fn(t.grad_fn)
        return []

    def from_fn(self, fn: Any) -> List[str]:
        """Names for autograd node `fn`, adding op nodes for unrecorded ones
        (iterative: a long chain of tensor ops must not hit the recursion limit)."""
        if fn in self.by_fn:
            return self.by_fn[fn]
        order: List[Any] = []
        todo = [(fn, False)]
        seen = set()
        while todo:
            f, expanded = todo.pop()
            if f in self.by_fn:
                continue
            if expanded:
                order.append(f)
                continue
            if f in seen:
                continue
            seen.add(f)
            todo.append((f, True))
            for nxt, _ in f.next_functions:
                if nxt is not None and nxt not in self.by_fn:
                    todo.append((nxt, False))
        for f in order:
            if f in self.by_fn:
                continue
            if type(f).__name__ == "AccumulateGrad":
                var = getattr(f, "variable", None)
                self.by_fn[f] = self.source_leaf(var)
                continue
            inputs: List[str] = []
            for nxt, _ in f.next_functions:
                if nxt is not None:
                    inputs.extend(n for n in self.by_fn.get(nxt, []) if n not in inputs)
            op = re.sub(r"Backward\d*$", "", f.name())
            if op == "Clone" and len(inputs) == 1 and inputs[0] in self.input_names:
                # the copy of an input that an in-place write into it leaves in autograd's graph
                self.by_fn[f] = inputs
                continue
            self.by_fn[f] = [self.add(f"{self.root}/{op}", op, inputs)]
        return self.by_fn[fn]

    def source_leaf(self, var: Any) -> List[str]:
        # an AccumulateGrad's variable is a new wrapper of the leaf, not the Parameter object
        # itself, so parameters are matched by their memory and layout
        if var is None:
            return []
        hit = self.by_tensor.get(id(var))
        if hit is not None and hit[0] is var:
            return [hit[1]]
        name = self.param_keys.get(_key(var))
        return [name] if name is not None else []


def _key(t: Any) -> Tuple[Any, ...]:
    return (t.data_ptr(), tuple(t.shape), tuple(t.stride()), str(t.dtype))


def _scope_part(name: str, module: Any) -> str:
    return f"{type(module).__name__}[{name.split('.')[-1]}]"


def build_graph(model: Any, args: Any, verbose: bool = False) -> Tuple[GraphDef, RunMetadata]:
    """Run `model(*args)` once in eval mode and return (GraphDef, RunMetadata)."""
    from ... import Tensor, enable_grad
    from ...nn import Module

    if not isinstance(model, Module):
        raise TypeError(f"add_graph: model must be a cgrad.nn.Module, not {type(model).__name__}")
    if args is None:
        args = ()
    elif isinstance(args, Tensor):
        args = (args,)
    elif isinstance(args, list):
        args = tuple(args)
    elif not isinstance(args, tuple):
        raise TypeError(f"add_graph: input_to_model must be a tensor, or a tuple or list of tensors, "
                        f"not {type(args).__name__}")
    rec = _Recorder(type(model).__name__)

    try:
        params = list(inspect.signature(model.forward).parameters)
    except (TypeError, ValueError):
        params = []
    inputs = []
    inputs_alive: List[Any] = []
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            x = a.detach()
            label = params[i] if i < len(params) and params[i] not in ("args", "kwargs") else f"input.{i + 1}"
            name = rec.add(f"input/{label}", _IO, [], tuple(x.shape))
            rec.input_names.add(name)
            if x.is_floating_point():
                # a non-leaf copy of a leaf that requires grad: the model may write into it in place
                leaf = x.clone().requires_grad_(True)
                rec.param_keys[_key(leaf)] = name
                x = leaf.clone()
                inputs_alive.append(leaf)
            rec.produced(x, name)
            inputs.append(x)
        else:
            inputs.append(a)

    scopes: Dict[int, str] = {}
    for name, mod in model.named_modules():
        if name:
            parent = name.rsplit(".", 1)[0] if "." in name else ""
            scopes[id(mod)] = (scopes[id(model.get_submodule(parent))] if parent else rec.root) \
                + "/" + _scope_part(name, mod)
    scopes[id(model)] = rec.root
    for name, p in model.named_parameters():
        owner = model.get_submodule(name.rsplit(".", 1)[0]) if "." in name else model
        rec.params[id(p)] = rec.add(f"{scopes[id(owner)]}/{name.split('.')[-1]}", "Parameter", [],
                                    tuple(p.shape))
        rec.param_keys[_key(p)] = rec.params[id(p)]

    handles = []

    def make_hook() -> Any:
        def hook(m: Any, inp: Any, out: Any) -> None:
            srcs: List[str] = []
            for t in _tensors(inp):
                srcs.extend(s for s in rec.source(t) if s not in srcs)
            srcs.extend(rec.params[id(p)] for p in m.parameters(recurse=False) if id(p) in rec.params)
            outs = _tensors(out)
            shape = tuple(outs[0].shape) if len(outs) == 1 else None
            node = rec.add(f"{scopes[id(m)]}/output", type(m).__name__, srcs, shape, attributes="{}")
            for t in outs:
                rec.produced(t, node)
        return hook

    for _, mod in model.named_modules():
        if mod is not model and not list(mod.children()):
            handles.append(mod.register_forward_hook(make_hook()))
    was_training = model.training
    model.train(False)
    try:
        with enable_grad():
            out = model(*inputs)
    finally:
        model.train(was_training)
        for h in handles:
            h.remove()

    for i, t in enumerate(_tensors(out)):
        rec.add(f"output/output.{i + 1}", _IO, rec.source(t), tuple(t.shape))
    graph = GraphDef(node=rec.nodes, versions=VersionDef(producer=22))
    if verbose:
        print(graph)
    meta = RunMetadata(step_stats=StepStats(dev_stats=[DeviceStepStats(device="/device:CPU:0")]))
    return graph, meta
