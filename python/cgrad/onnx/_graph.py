"""The ONNX graph under construction: nodes, constants, initializers, inputs
and outputs, with fresh value names; it turns into an onnx.ModelProto at the
end. Only this file and the exporter touch the onnx package's builders."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

INT64_MAX = 2 ** 63 - 1
INT64_MIN = -2 ** 63

_NP_TO_ONNX = {
    np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float64): TensorProto.DOUBLE,
    np.dtype(np.float16): TensorProto.FLOAT16, np.dtype(np.int64): TensorProto.INT64,
    np.dtype(np.int32): TensorProto.INT32, np.dtype(np.int16): TensorProto.INT16,
    np.dtype(np.int8): TensorProto.INT8, np.dtype(np.uint8): TensorProto.UINT8,
    np.dtype(np.bool_): TensorProto.BOOL,
}
# cgrad dtype names (str(dtype) without "cgrad.") to ONNX element types and NumPy dtypes
_NAME_TO_NP = {"float32": np.float32, "float64": np.float64, "float16": np.float16, "int64": np.int64,
               "int32": np.int32, "int16": np.int16, "int8": np.int8, "uint8": np.uint8, "bool": np.bool_}


def np_dtype(dtype: Any) -> Any:
    """The NumPy dtype of a cgrad dtype (OnnxExporterError-free: raises NotImplementedError when ONNX export
    has no mapping for it, e.g. bfloat16)."""
    name = str(dtype).replace("cgrad.", "")
    if name not in _NAME_TO_NP:
        raise NotImplementedError(f"cgrad.onnx.export: tensors of dtype {name} cannot be exported")
    return np.dtype(_NAME_TO_NP[name])


def onnx_dtype(dtype: Any) -> int:
    """The ONNX TensorProto element type of a cgrad dtype."""
    return _NP_TO_ONNX[np_dtype(dtype)]


class Graph:
    """Nodes in topological order (they are appended as the trace runs them) plus the graph's edges."""

    def __init__(self, opset: int) -> None:
        self.opset = opset
        self.nodes: List[onnx.NodeProto] = []
        self.initializers: List[onnx.TensorProto] = []
        self.inputs: List[onnx.ValueInfoProto] = []
        self.outputs: List[onnx.ValueInfoProto] = []
        self._count = 0
        self._consts: Dict[Any, str] = {}

    def fresh(self, hint: str = "v") -> str:
        self._count += 1
        return f"{hint}_{self._count}"

    def op(self, op_type: str, *inputs: Optional[str], outputs: int = 1, **attrs: Any) -> Any:
        """Append one node; returns its output name (or the list of names when outputs > 1).
        None among the inputs is a missing optional input."""
        names = [self.fresh(op_type) for _ in range(outputs)]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(helper.make_node(op_type, ["" if i is None else i for i in inputs], names,
                                           name=f"n{len(self.nodes)}_{op_type}", **attrs))
        return names[0] if outputs == 1 else names

    def const(self, value: Any, dtype: Any = None) -> str:
        """A Constant node holding value (a NumPy array or something np.asarray takes), cached by content."""
        arr = np.asarray(value, dtype=dtype)
        key = (arr.dtype.str, arr.shape, arr.tobytes())
        if arr.size <= 64 and key in self._consts:
            return self._consts[key]
        name = self.fresh("const")
        self.nodes.append(helper.make_node("Constant", [], [name], name=f"n{len(self.nodes)}_Constant",
                                           value=numpy_helper.from_array(arr, name)))
        if arr.size <= 64:
            self._consts[key] = name
        return name

    def ints(self, values: Sequence[int]) -> str:
        """A 1-D int64 constant (shapes, axes, pads)."""
        return self.const(np.asarray(list(values), dtype=np.int64))

    def initializer(self, name: str, arr: Any) -> str:
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    @staticmethod
    def value_info(name: str, elem_type: int, shape: Sequence[Union[int, str]]) -> onnx.ValueInfoProto:
        return helper.make_tensor_value_info(name, elem_type, list(shape))

    def reduce(self, op_type: str, x: str, axes: Optional[Sequence[int]], keepdims: bool) -> str:
        """ReduceXxx over axes (None: all), with the axes as an input from the opset where ONNX moved them
        there (ReduceSum 13, the others 18)."""
        since = 13 if op_type == "ReduceSum" else 18
        kd = 1 if keepdims else 0
        if axes is None:
            return self.op(op_type, x, keepdims=kd)
        if self.opset >= since:
            return self.op(op_type, x, self.ints(axes), keepdims=kd)
        return self.op(op_type, x, axes=list(axes), keepdims=kd)

    def unsqueeze(self, x: str, axes: Sequence[int]) -> str:
        return self.op("Unsqueeze", x, self.ints(axes))

    def squeeze(self, x: str, axes: Optional[Sequence[int]] = None) -> str:
        return self.op("Squeeze", x, None if axes is None else self.ints(axes))

    def model(self, producer_version: str, doc: str = "") -> onnx.ModelProto:
        graph = helper.make_graph(self.nodes, "main_graph", self.inputs, self.outputs, self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)],
                                  producer_name="cgrad", producer_version=producer_version, doc_string=doc)
        model.ir_version = min(model.ir_version, _max_ir_version(self.opset))
        return model


def _max_ir_version(opset: int) -> int:
    """The IR version that goes with an opset (onnxruntime refuses IR versions newer than it knows)."""
    for ir, op in ((7, 15), (8, 18), (9, 20), (10, 22), (11, 23)):
        if opset <= op:
            return ir
    return onnx.IR_VERSION
