"""The layers of cgrad.nn, one file per family as in torch.nn.modules."""
from .module import Module
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout
from .normalization import GroupNorm, LayerNorm, RMSNorm
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .pooling import (
    AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, AvgPool1d, AvgPool2d, MaxPool1d,
    MaxPool2d)
from .sparse import Embedding
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
from .rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNBase, RNNCell, RNNCellBase
from .attention import MultiheadAttention
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
                          TransformerEncoderLayer)

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "Identity",
           "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout",
           "LayerNorm", "GroupNorm", "RMSNorm",
           "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
           "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
           "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
           "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "Embedding",
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
__all__ += ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell", "MultiheadAttention",
            "Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
            "TransformerDecoderLayer"]
