"""The layers of ``oxmera.nn``: ``Module`` and its subclasses, one topic per module.

Everything here is re-exported by ``oxmera.nn``; import from there.
"""
from oxmera.nn.modules.module import Module, RemovableHandle
from oxmera.nn.modules.activation import (CELU, ELU, GELU, GLU, SELU, Hardshrink, Hardsigmoid,
                                          Hardswish, Hardtanh, LeakyReLU, LogSigmoid, LogSoftmax,
                                          Mish, MultiheadAttention, PReLU, ReLU, ReLU6, RReLU,
                                          Sigmoid, SiLU, Softmax, Softmax2d, Softmin, Softplus,
                                          Softshrink, Softsign, Tanh, Tanhshrink, Threshold)
from oxmera.nn.modules.container import (ModuleDict, ModuleList, ParameterDict, ParameterList,
                                         Sequential)
from oxmera.nn.modules.conv import (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d,
                                    ConvTranspose3d)
from oxmera.nn.modules.channelshuffle import ChannelShuffle
from oxmera.nn.modules.distance import CosineSimilarity, PairwiseDistance
from oxmera.nn.modules.dropout import (AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d,
                                       FeatureAlphaDropout)
from oxmera.nn.modules import padding as _padding
from oxmera.nn.modules.padding import *  # noqa: F403
from oxmera.nn.modules.flatten import Flatten, Unflatten
from oxmera.nn.modules.fold import Fold, Unfold
from oxmera.nn.modules.linear import Bilinear, Identity, Linear
from oxmera.nn.modules.adaptive import AdaptiveLogSoftmaxWithLoss
from oxmera.nn.modules import lazy as _lazy
from oxmera.nn.modules.lazy import *  # noqa: F403
from oxmera.nn.modules.loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss,
                                    L1Loss, LinearCrossEntropyLoss, MSELoss, NLLLoss,
                                    SmoothL1Loss)
from oxmera.nn.modules.loss import (CosineEmbeddingLoss, CTCLoss, GaussianNLLLoss,
                                    HingeEmbeddingLoss, KLDivLoss, MarginRankingLoss,
                                    MultiLabelMarginLoss, MultiLabelSoftMarginLoss,
                                    MultiMarginLoss, PoissonNLLLoss, SoftMarginLoss,
                                    TripletMarginLoss, TripletMarginWithDistanceLoss)
from oxmera.nn.modules.normalization import (BatchNorm1d, BatchNorm2d, BatchNorm3d, GroupNorm,
                                             InstanceNorm1d, InstanceNorm2d, InstanceNorm3d,
                                             LayerNorm, LocalResponseNorm, RMSNorm)
from oxmera.nn.modules.pixelshuffle import PixelShuffle, PixelUnshuffle
from oxmera.nn.modules import pooling as _pooling
from oxmera.nn.modules.pooling import *  # noqa: F403
from oxmera.nn.modules.rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from oxmera.nn.modules.sparse import Embedding, EmbeddingBag
from oxmera.nn.modules.upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d
from oxmera.nn.modules.transformer import (Transformer, TransformerDecoder,
                                           TransformerDecoderLayer, TransformerEncoder,
                                           TransformerEncoderLayer)

__all__ = [
    "Module",
    "Identity", "Linear", "Bilinear",
    *(name for name in _lazy.__all__ if name != "LazyModuleMixin"),
    "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    *_pooling.__all__,
    "Flatten", "Unflatten",
    "Fold", "Unfold", "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "PixelShuffle",
    "PixelUnshuffle", "ChannelShuffle",
    "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout",
    *_padding.__all__,
    "CosineSimilarity", "PairwiseDistance",
    "LayerNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d",
    "InstanceNorm3d", "GroupNorm", "RMSNorm", "LocalResponseNorm",
    "Embedding", "EmbeddingBag",
    "Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
    "TransformerDecoderLayer",
    "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell",
    "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
    "ReLU", "LeakyReLU", "ELU", "GELU", "SiLU", "Softplus", "Tanh", "Sigmoid", "Softmax",
    "LogSoftmax", "MultiheadAttention", "ReLU6", "Hardtanh", "Hardswish", "Hardsigmoid", "Mish",
    "SELU", "CELU", "Softsign", "LogSigmoid", "GLU", "PReLU", "RReLU", "Threshold", "Softmin",
    "Softmax2d", "Tanhshrink", "Softshrink", "Hardshrink",
    "L1Loss", "MSELoss", "SmoothL1Loss", "HuberLoss", "NLLLoss", "CrossEntropyLoss", "BCELoss",
    "BCEWithLogitsLoss", "KLDivLoss", "PoissonNLLLoss", "GaussianNLLLoss", "CosineEmbeddingLoss",
    "MarginRankingLoss", "HingeEmbeddingLoss", "SoftMarginLoss", "MultiLabelSoftMarginLoss",
    "MultiLabelMarginLoss", "MultiMarginLoss", "TripletMarginLoss",
    "TripletMarginWithDistanceLoss", "CTCLoss", "AdaptiveLogSoftmaxWithLoss",
    "LinearCrossEntropyLoss",
]

del RemovableHandle
