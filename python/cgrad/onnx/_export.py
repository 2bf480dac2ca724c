"""cgrad.onnx.export: argument checks (torch.onnx.export's signature), the
model's mode, the inputs and their dynamic axes, the probe and emitting runs
of the tracer (Note [Probe run] in _tracer.py), and assembling the graph's
inputs, outputs and initializers into a checked ONNX model."""
from __future__ import annotations

import inspect
import os
from typing import Any, Callable, Collection, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from .. import _C
from ..autograd.grad_mode import enable_grad, no_grad
from . import _registry, _tracer
from ._enums import OperatorExportTypes, TrainingMode
from ._graph import Graph, onnx_dtype
from ._program import ONNXProgram, write_model
from .errors import OnnxExporterError

DEFAULT_OPSET = 20
_AUTO_PREFIX = "\x00"  # marks the dim names export generates (stripped before they reach the graph)
MIN_OPSET, MAX_OPSET = 14, 23


def _check_names(names: Any, what: str) -> Optional[List[str]]:
    if names is None:
        return None
    if isinstance(names, str) or not isinstance(names, Sequence) or not all(isinstance(n, str) for n in names):
        raise TypeError(f"export: {what} must be a sequence of str, got {names!r}")
    if len(set(names)) != len(names):
        raise ValueError(f"export: {what} has duplicate names: {list(names)}")
    return list(names)


def _check_opset(opset_version: Any) -> int:
    if opset_version is None:
        return DEFAULT_OPSET
    if isinstance(opset_version, bool) or not isinstance(opset_version, int):
        raise TypeError(f"export: opset_version must be an int, got {type(opset_version).__name__}")
    if not MIN_OPSET <= opset_version <= MAX_OPSET:
        raise ValueError(f"export: opset_version {opset_version} is not supported; cgrad exports opsets "
                         f"{MIN_OPSET} to {MAX_OPSET}")
    return opset_version


def _check_dynamic_axes(dynamic_axes: Any) -> Dict[str, Dict[int, str]]:
    """{name: {axis: symbol}} from torch's two forms ({axis: symbol} or [axis, ...])."""
    if dynamic_axes is None:
        return {}
    if not isinstance(dynamic_axes, Mapping):
        raise TypeError(f"export: dynamic_axes must be a dict of name -> axes, got {type(dynamic_axes).__name__}")
    out: Dict[str, Dict[int, str]] = {}
    for name, axes in dynamic_axes.items():
        if not isinstance(name, str):
            raise TypeError(f"export: dynamic_axes keys must be input or output names (str), got {name!r}")
        if isinstance(axes, Mapping):
            items = list(axes.items())
        elif isinstance(axes, Sequence) and not isinstance(axes, str):
            items = [(a, f"{_AUTO_PREFIX}{name}_dynamic_axes_{i + 1}") for i, a in enumerate(axes)]
        else:
            raise TypeError(f"export: dynamic_axes[{name!r}] must be a dict of axis -> name or a list of axes, "
                            f"got {axes!r}")
        for a, sym in items:
            if isinstance(a, bool) or not isinstance(a, int) or not isinstance(sym, str):
                raise TypeError(f"export: dynamic_axes[{name!r}] must map int axes to str names, got {a!r}: {sym!r}")
        out[name] = dict(items)
    return out


def _dynamic_shapes_to_axes(dynamic_shapes: Any, arg_names: List[str]) -> Dict[str, Dict[int, str]]:
    """The simple forms of dynamo's dynamic_shapes ({input: {axis: Dim or name}} or a tuple in input order)."""
    if dynamic_shapes is None:
        return {}
    if isinstance(dynamic_shapes, Mapping):
        items = list(dynamic_shapes.items())
    elif isinstance(dynamic_shapes, (list, tuple)):
        items = list(zip(arg_names, dynamic_shapes))
    else:
        raise TypeError("export: dynamic_shapes must be a dict or a tuple")
    out: Dict[str, Dict[int, str]] = {}
    for name, spec in items:
        if spec is None:
            continue
        if not isinstance(spec, Mapping):
            raise NotImplementedError(f"export: dynamic_shapes entry for {name!r}: only {{axis: name}} dicts are "
                                      "supported")
        out[name] = {int(a): (d if isinstance(d, str) else getattr(d, "__name__", f"{name}_dim_{a}"))
                     for a, d in spec.items()}
    return out


def _unsupported_option(**options: Any) -> None:
    for name, (value, default) in options.items():
        if value != default and value is not default:
            raise NotImplementedError(f"export: {name}={value!r} is not supported by cgrad's exporter")


def _walk_replace(obj: Any, fn: Callable[[Any], Any]) -> Any:
    if isinstance(obj, _C._TensorBase):
        return fn(obj)
    if isinstance(obj, tuple):
        return type(obj)(*[_walk_replace(o, fn) for o in obj]) if hasattr(obj, "_fields") else \
            tuple(_walk_replace(o, fn) for o in obj)
    if isinstance(obj, list):
        return [_walk_replace(o, fn) for o in obj]
    if isinstance(obj, dict):
        return {k: _walk_replace(v, fn) for k, v in obj.items()}
    return obj


def _grow(t: Any, axes: Dict[int, int]) -> Any:
    """t grown along each axis by its amount (rows repeated cyclically, so values stay valid inputs)."""
    for axis, extra in axes.items():
        n = t.shape[axis]
        if n == 0:
            raise OnnxExporterError("export: a dynamic axis of size 0 in the example inputs")
        idx = _C.arange(n + extra) % n
        t = t.index_select(axis, idx)
    return t


def _as_traced(t: Any) -> Any:
    """A copy of an input whose descendants carry autograd nodes, so results of untraced ops are caught."""
    x = t.detach().clone()
    if x.is_floating_point():
        x.requires_grad_(True)
        with enable_grad():
            return x.clone()
    return x


def export(model: Any, args: Any = (), f: Any = None, *, kwargs: Optional[Dict[str, Any]] = None,
           verbose: Optional[bool] = None, input_names: Optional[Sequence[str]] = None,
           output_names: Optional[Sequence[str]] = None, opset_version: Optional[int] = None, dynamo: bool = True,
           external_data: bool = True, dynamic_shapes: Any = None, custom_translation_table: Any = None,
           report: bool = False, optimize: bool = True, verify: bool = False, profile: bool = False,
           dump_exported_program: bool = False, artifacts_dir: Union[str, "os.PathLike[str]"] = ".",
           export_params: bool = True, keep_initializers_as_inputs: bool = False,
           dynamic_axes: Optional[Mapping[str, Any]] = None, training: Any = TrainingMode.EVAL,
           operator_export_type: Any = OperatorExportTypes.ONNX, do_constant_folding: bool = True,
           custom_opsets: Optional[Mapping[str, int]] = None,
           export_modules_as_functions: Union[bool, Collection[type]] = False,
           autograd_inlining: bool = True) -> Optional[ONNXProgram]:
    """Export model to ONNX by tracing it through cgrad on args (torch.onnx.export's signature).

    Whatever dynamo says, the model runs once on the example inputs under cgrad's tracer (twice with
    dynamic axes); dynamo=True returns an ONNXProgram, dynamo=False returns None. f is a path or a binary
    file object (None: not written). See docs/python.md (ONNX export) for the ops and layers covered."""
    from .. import nn
    _registry.load()
    if not isinstance(model, nn.Module):
        raise TypeError(f"export: model must be a cgrad.nn.Module, got {type(model).__name__}")
    if f is not None and not isinstance(f, (str, os.PathLike)) and not hasattr(f, "write"):
        raise TypeError(f"export: f must be a path or a binary file object, got {type(f).__name__}")
    if f is None and not dynamo:
        raise ValueError("export: f (a path or file object) is required when dynamo=False")
    opset = _check_opset(opset_version)
    in_names = _check_names(input_names, "input_names")
    out_names = _check_names(output_names, "output_names")
    axes_spec = _check_dynamic_axes(dynamic_axes)
    if kwargs is not None and not isinstance(kwargs, dict):
        raise TypeError(f"export: kwargs must be a dict, got {type(kwargs).__name__}")
    mode = TrainingMode(int(training)) if isinstance(training, int) or hasattr(training, "value") else None
    if mode is None:
        raise TypeError(f"export: training must be a TrainingMode, got {training!r}")
    if mode == TrainingMode.TRAINING:
        raise NotImplementedError("export: training=TrainingMode.TRAINING (cgrad exports inference graphs)")
    if int(operator_export_type) != int(OperatorExportTypes.ONNX):
        raise NotImplementedError(f"export: operator_export_type={operator_export_type!r} (only ONNX)")
    _unsupported_option(custom_translation_table=(custom_translation_table or None, None),
                        custom_opsets=(custom_opsets or None, None), report=(bool(report), False),
                        profile=(bool(profile), False), dump_exported_program=(bool(dump_exported_program), False),
                        export_modules_as_functions=(bool(export_modules_as_functions), False))
    # arguments: a lone tensor, a tuple, and torch's legacy trailing dict of keyword arguments
    if not isinstance(args, tuple):
        args = (args,)
    if kwargs is None and args and isinstance(args[-1], dict):
        args, kwargs = args[:-1], args[-1]
    kwargs = dict(kwargs or {})
    tensors = _tracer.flatten((args, kwargs))
    try:
        bound = inspect.signature(model.forward).bind(*args, **kwargs)
        arg_names = []
        for pname, val in bound.arguments.items():
            n = len(_tracer.flatten(val))
            arg_names += [pname] if n == 1 else [f"{pname}_{i}" for i in range(n)]
    except (TypeError, ValueError):
        arg_names = [f"input_{i}" for i in range(len(tensors))]
    if len(arg_names) != len(tensors):
        arg_names = [f"input_{i}" for i in range(len(tensors))]
    if in_names is not None:
        if len(in_names) > len(tensors):
            raise ValueError(f"export: {len(in_names)} input_names for {len(tensors)} tensor inputs")
        arg_names = in_names + arg_names[len(in_names):]
    axes_spec.update(_dynamic_shapes_to_axes(dynamic_shapes, arg_names))
    if out_names is not None and set(out_names) & set(arg_names):
        raise ValueError(f"export: output_names {out_names} reuse input names {arg_names}")

    # the modes: EVAL sets eval for the export, PRESERVE keeps them; both are restored after
    saved_modes = [(m, m.training) for m in model.modules()]
    if mode == TrainingMode.EVAL:
        model.eval()
    try:
        return _export(model, args, kwargs, tensors, arg_names, out_names, axes_spec, opset, f, dynamo,
                       bool(export_params), bool(keep_initializers_as_inputs), bool(verbose), bool(verify))
    finally:
        for m, was in saved_modes:
            m.training = was


def _export(model: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any], tensors: List[Any], arg_names: List[str],
            out_names: Optional[List[str]], axes_spec: Dict[str, Dict[int, str]], opset: int, f: Any,
            dynamo: bool, export_params: bool, keep_inits: bool, verbose: bool, verify: bool) -> Optional[ONNXProgram]:
    import cgrad
    input_axes: List[Dict[int, str]] = []
    for t, name in zip(tensors, arg_names):
        ax = {a % max(t.dim(), 1): s for a, s in axes_spec.get(name, {}).items()}
        for a in axes_spec.get(name, {}):
            if not -t.dim() <= a < t.dim():
                raise ValueError(f"export: dynamic_axes[{name!r}] names axis {a} of a {t.dim()}-D input")
        input_axes.append(ax)
    known = set(arg_names) | set(out_names or [])
    for key in axes_spec:
        if key not in known and not (out_names is None and key.startswith("output_")):
            raise ValueError(f"export: dynamic_axes key {key!r} is neither an input nor an output name "
                             f"(inputs: {arg_names}, outputs: {out_names})")
    symbols = sorted({s for ax in input_axes for s in ax.values()})
    # named axes grow by different amounts so the probe tells them apart; the list form's generated names
    # (one per input) grow alike, as such axes usually are one batch dim
    named = [s for s in symbols if not s.startswith(_AUTO_PREFIX)]
    growth = {s: (named.index(s) + 2 if s in named else 1) for s in symbols}
    params: Dict[int, Tuple[str, Any]] = {}
    for pname, p in list(model.named_parameters()) + list(model.named_buffers()):
        params.setdefault(id(p), (pname, p))
    module_names = {id(m): n or "model" for n, m in model.named_modules()}
    graph = Graph(opset)
    probe_shapes = probe_numbers = None
    with _tracer.patched([model]):
        if symbols:
            grown = iter([_as_traced(_grow(t, {a: growth[s] for a, s in ax.items()}))
                          for t, ax in zip(tensors, input_axes)])
            pargs, pkwargs = _walk_replace((args, kwargs), lambda t: next(grown))
            probe = _tracer.Trace(graph, "probe", params)
            probe.export_params, probe.module_names = export_params, module_names
            try:
                with _tracer.tracing(probe), enable_grad():
                    model(*pargs, **pkwargs)
            except (RuntimeError, ValueError, IndexError, TypeError) as e:
                if isinstance(e, OnnxExporterError):
                    raise
                raise OnnxExporterError(f"export: the model failed on example inputs grown along the dynamic axes "
                                        f"{[s.lstrip(_AUTO_PREFIX) for s in symbols]} (dims that must stay equal "
                                        f"need one name): {e}") from e
            probe_shapes = probe.shapes
            probe_numbers = probe.numbers
            probe_inputs = _tracer.flatten((pargs, pkwargs))
            graph = Graph(opset)
        trace = _tracer.Trace(graph, "emit", params, probe_shapes)
        trace.probe_numbers = probe_numbers if probe_shapes is not None else None
        trace.export_params, trace.module_names = export_params, module_names
        traced = iter([_as_traced(t) for t in tensors])
        targs, tkwargs = _walk_replace((args, kwargs), lambda t: next(traced))
        tin = _tracer.flatten((targs, tkwargs))
        for i, (t, name, ax) in enumerate(zip(tin, arg_names, input_axes)):
            trace.bind(t, name, tuple(probe_inputs[i].shape) if probe_shapes is not None else None)
            dims = [ax[d].lstrip(_AUTO_PREFIX) if d in ax else t.shape[d] for d in range(t.dim())]
            graph.inputs.append(Graph.value_info(name, onnx_dtype(t.dtype), dims))
        with _tracer.tracing(trace), enable_grad():
            result = model(*targs, **tkwargs)
        outs = _tracer.flatten(result)
        if not outs:
            raise OnnxExporterError("export: the model returned no tensors")
        if out_names is not None and len(out_names) > len(outs):
            raise ValueError(f"export: {len(out_names)} output_names for {len(outs)} outputs")
        names = (out_names or []) + [f"output_{i}" for i in range(len(out_names or []), len(outs))]
        trace.depth = 1
        for t, name in zip(outs, names):
            graph.nodes.append(_identity(graph, trace.v(t), name))
            ax = axes_spec.get(name, {})
            dyn = trace.dyn_dims(t)
            dims = [ax.get(d, ax.get(d - t.dim(), f"{name}_dim_{d}" if d in dyn else t.shape[d]))
                    for d in range(t.dim())]
            dims = [d.lstrip(_AUTO_PREFIX) if isinstance(d, str) else d for d in dims]
            graph.outputs.append(Graph.value_info(name, onnx_dtype(t.dtype), dims))
    # parameters and buffers that the graph reads
    import numpy as np
    for pname, p in trace.used_params.items():
        arr = p.detach().contiguous().numpy()
        if export_params:
            graph.initializer(pname, np.asarray(arr))
        if keep_inits or not export_params:
            graph.inputs.append(Graph.value_info(pname, onnx_dtype(p.dtype), list(p.shape)))
    if keep_inits and export_params:
        listed = {i.name for i in graph.inputs}
        for init in graph.initializers:
            if init.name not in listed:
                graph.inputs.append(Graph.value_info(init.name, init.data_type, list(init.dims)))
    model_proto = graph.model(cgrad.__version__)
    import onnx
    try:
        onnx.checker.check_model(model_proto)
    except onnx.checker.ValidationError as e:  # a bug of a symbolic, not of the user's model
        raise OnnxExporterError(f"export: the exported graph does not pass onnx.checker: {e}") from e
    if verbose:
        print(onnx.printer.to_text(model_proto.graph))
    program = ONNXProgram(model_proto)
    if verify:
        _verify(program, tensors, outs)
    if f is not None:
        write_model(model_proto, f)
    return program if dynamo else None


def _identity(graph: Graph, src: str, dst: str) -> Any:
    from onnx import helper
    return helper.make_node("Identity", [src], [dst], name=f"output_{dst}")


def _verify(program: ONNXProgram, inputs: List[Any], outputs: List[Any]) -> None:
    """verify=True: run the model in onnxruntime on the example inputs and compare with cgrad's results."""
    import numpy as np
    got = program(*[t for t in inputs])
    for i, (a, b) in enumerate(zip(got, outputs)):
        with no_grad():
            ref = b.detach().numpy()
        if not np.allclose(a.numpy(), ref, rtol=1e-3, atol=1e-5, equal_nan=True):
            raise OnnxExporterError(f"export: verify failed: output {i} differs from cgrad's by up to "
                                    f"{float(np.nanmax(np.abs(a.numpy() - ref)))}")
