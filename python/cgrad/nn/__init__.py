"""cgrad.nn: neural-network layers (modules), their functional forms
(cgrad.nn.functional), parameter initialisation (cgrad.nn.init) and helpers
(cgrad.nn.utils), mirroring torch.nn."""
from . import functional  # noqa: F401
from . import init  # noqa: F401
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401
from .modules.module import Module  # noqa: F401
from .modules.container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential  # noqa: F401
from .modules.linear import Bilinear, Identity, LazyLinear, Linear  # noqa: F401
from .modules.flatten import Flatten, Unflatten  # noqa: F401
from .modules.activation import (  # noqa: F401
    CELU, ELU, GELU, GLU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, LogSigmoid, LogSoftmax, Mish,
    PReLU, ReLU, ReLU6, SELU, SiLU, Sigmoid, Softmax, Softmin, Softplus, Softshrink, Softsign, Tanh, Tanhshrink,
    Threshold)
from .modules.loss import (  # noqa: F401
    BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss,
    MarginRankingLoss, MSELoss, NLLLoss, SmoothL1Loss)
from .modules.distance import CosineSimilarity, PairwiseDistance  # noqa: F401
from .modules.padding import (  # noqa: F401
    CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d, ConstantPad3d, ReflectionPad1d,
    ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, ZeroPad1d, ZeroPad2d,
    ZeroPad3d)
from .modules.pixelshuffle import PixelShuffle, PixelUnshuffle  # noqa: F401
from .modules.upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d  # noqa: F401
from . import modules  # noqa: F401
from . import utils  # noqa: F401
