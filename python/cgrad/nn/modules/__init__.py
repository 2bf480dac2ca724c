"""The layers of cgrad.nn, one file per family as in torch.nn.modules."""
from .module import Module
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .linear import Bilinear, Identity, LazyLinear, Linear
from .flatten import Flatten, Unflatten
from .activation import (
    CELU, ELU, GELU, GLU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, LogSigmoid, LogSoftmax, Mish,
    PReLU, ReLU, ReLU6, SELU, SiLU, Sigmoid, Softmax, Softmin, Softplus, Softshrink, Softsign, Tanh, Tanhshrink,
    Threshold)
from .loss import (
    BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss,
    MarginRankingLoss, MSELoss, NLLLoss, SmoothL1Loss)
from .distance import CosineSimilarity, PairwiseDistance
from .padding import (
    CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d, ConstantPad3d, ReflectionPad1d,
    ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, ZeroPad1d, ZeroPad2d,
    ZeroPad3d)
from .pixelshuffle import PixelShuffle, PixelUnshuffle
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "Identity",
           "Linear", "Bilinear", "LazyLinear", "Flatten", "Unflatten"]
__all__ += ["CELU", "ELU", "GELU", "GLU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh", "LeakyReLU",
            "LogSigmoid", "LogSoftmax", "Mish", "PReLU", "ReLU", "ReLU6", "SELU", "SiLU", "Sigmoid", "Softmax",
            "Softmin", "Softplus", "Softshrink", "Softsign", "Tanh", "Tanhshrink", "Threshold", "BCELoss",
            "BCEWithLogitsLoss", "CosineEmbeddingLoss", "CrossEntropyLoss", "HuberLoss", "KLDivLoss", "L1Loss",
            "MarginRankingLoss", "MSELoss", "NLLLoss", "SmoothL1Loss", "CosineSimilarity", "PairwiseDistance",
            "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
            "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
            "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "PixelShuffle", "PixelUnshuffle", "Upsample",
            "UpsamplingBilinear2d", "UpsamplingNearest2d"]
