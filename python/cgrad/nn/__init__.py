"""cgrad.nn: neural-network layers (modules), their functional forms
(cgrad.nn.functional), parameter initialisation (cgrad.nn.init) and helpers
(cgrad.nn.utils), mirroring torch.nn."""
from . import functional  # noqa: F401
from . import init  # noqa: F401
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401
from .modules.module import Module  # noqa: F401
from .modules.container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential  # noqa: F401
from .modules.dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout  # noqa: F401
from .modules.normalization import GroupNorm, LayerNorm, RMSNorm  # noqa: F401
from .modules.batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d  # noqa: F401
from .modules.instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d  # noqa: F401
from .modules.conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d  # noqa: F401
from .modules.pooling import (  # noqa: F401
    AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, AvgPool1d, AvgPool2d, MaxPool1d,
    MaxPool2d)
from .modules.sparse import Embedding  # noqa: F401
from .modules.linear import Bilinear, Identity, LazyLinear, Linear  # noqa: F401
from .modules.flatten import Flatten, Unflatten  # noqa: F401
from . import modules  # noqa: F401
from . import utils  # noqa: F401
