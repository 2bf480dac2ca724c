"""Mesh / point-cloud summaries of the mesh plugin: one float tensor summary
per component (vertices, faces, colors), each (batch, count, 3)."""
from __future__ import annotations

import json
from typing import Any, Dict, Optional

import numpy as np
from tensorboard.compat.proto.summary_pb2 import Summary
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.mesh import metadata as mesh_metadata
from tensorboard.plugins.mesh.plugin_data_pb2 import MeshPluginData

from ._convert import make_np


def mesh(tag: str, vertices: Any, colors: Any, faces: Any, config_dict: Optional[Dict[str, Any]],
         display_name: Optional[str] = None, description: Optional[str] = None) -> Summary:
    config = "{}" if config_dict is None else json.dumps(config_dict, sort_keys=True)
    parts = []
    for value, kind, name in ((vertices, MeshPluginData.VERTEX, "vertices"),
                              (faces, MeshPluginData.FACE, "faces"),
                              (colors, MeshPluginData.COLOR, "colors")):
        if value is None:
            continue
        arr = make_np(value, "add_mesh", name)
        if arr.ndim != 3 or arr.shape[2] != 3:
            raise ValueError(f"add_mesh: {name} must have shape (batch, count, 3), got {tuple(arr.shape)}")
        parts.append((np.asarray(arr, dtype=np.float64), kind))
    if not parts:
        raise ValueError("add_mesh: vertices is required")
    components = mesh_metadata.get_components_bitmask([k for _, k in parts])
    values = []
    for arr, kind in parts:
        md = mesh_metadata.create_summary_metadata(tag, display_name, kind, components, arr.shape,
                                                   description, json_config=config)
        proto = TensorProto(dtype="DT_FLOAT", float_val=arr.reshape(-1).tolist(),
                            tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=s) for s in arr.shape]))
        values.append(Summary.Value(tag=mesh_metadata.get_instance_name(tag, kind), tensor=proto, metadata=md))
    return Summary(value=values)
