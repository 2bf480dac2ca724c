"""ONNXProgram: what export returns with dynamo=True, as torch.onnx's: the
model proto, save() to a path or binary file, and calling it runs the model
in onnxruntime on cgrad tensors."""
from __future__ import annotations

import os
from typing import Any, List, Union

import onnx


class ONNXProgram:
    """An exported model."""

    def __init__(self, model_proto: onnx.ModelProto) -> None:
        self.model_proto = model_proto
        self._session: Any = None

    @property
    def model(self) -> onnx.ModelProto:
        return self.model_proto

    def save(self, destination: Union[str, "os.PathLike[str]", Any]) -> None:
        """Write the model to a path or to a binary file object."""
        write_model(self.model_proto, destination)

    def __call__(self, *args: Any, **kwargs: Any) -> List[Any]:
        """Run the model in onnxruntime; inputs are cgrad tensors (or arrays), results come back as tensors."""
        import numpy as np
        import onnxruntime as ort
        from .. import _C
        if self._session is None:
            self._session = ort.InferenceSession(self.model_proto.SerializeToString(),
                                                 providers=["CPUExecutionProvider"])
        inits = {i.name for i in self.model_proto.graph.initializer}
        names = [i.name for i in self._session.get_inputs() if i.name not in inits]
        values = list(args) + list(kwargs.values())
        if len(values) != len(names):
            raise ValueError(f"ONNXProgram: the model takes {len(names)} inputs ({names}), got {len(values)}")
        feed = {n: (v.detach().numpy() if isinstance(v, _C._TensorBase) else np.asarray(v))
                for n, v in zip(names, values)}
        return [_C.from_numpy(np.ascontiguousarray(r)) for r in self._session.run(None, feed)]

    def __repr__(self) -> str:
        g = self.model_proto.graph
        return (f"ONNXProgram(opset={self.model_proto.opset_import[0].version}, inputs={[i.name for i in g.input]}, "
                f"outputs={[o.name for o in g.output]}, nodes={len(g.node)})")


def write_model(model: onnx.ModelProto, f: Any) -> None:
    """Serialize model to f: a path (str / PathLike) or an object with a binary write()."""
    if isinstance(f, (str, os.PathLike)):
        onnx.save_model(model, os.fspath(f))
    elif hasattr(f, "write"):
        f.write(model.SerializeToString())
    else:
        raise TypeError(f"export: f must be a path or a binary file object, got {type(f).__name__}")
