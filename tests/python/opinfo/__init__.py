"""The op table (OpInfo-like registry) that drives the parity tests: one
module per op family, each defining OPS, a list of OpInfo entries."""
from .core import OpInfo, SampleInput  # noqa: F401
from . import math_ops, reduce_ops, shape_ops, index_ops, linalg_ops, creation_ops
from . import nn_func_ops, nn_layer_ops

ALL_OPS = [op for mod in (math_ops, reduce_ops, shape_ops, index_ops, linalg_ops, creation_ops, nn_func_ops,
                          nn_layer_ops) for op in mod.OPS]
