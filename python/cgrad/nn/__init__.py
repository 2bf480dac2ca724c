"""cgrad.nn: neural-network layers (modules), their functional forms
(cgrad.nn.functional), parameter initialisation (cgrad.nn.init) and helpers
(cgrad.nn.utils), data parallelism (cgrad.nn.parallel), mirroring torch.nn."""
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
from .modules.rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNBase, RNNCell, RNNCellBase  # noqa: F401
from .modules.attention import MultiheadAttention  # noqa: F401
from .modules.transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer,  # noqa: F401
                                  TransformerEncoder, TransformerEncoderLayer)
from . import modules  # noqa: F401
from .parallel import DataParallel  # noqa: F401
from . import parallel  # noqa: F401
from . import utils  # noqa: F401
