"""The layers of ``oxmera.nn``: ``Module`` and its subclasses, one topic per module.

Everything here is re-exported by ``oxmera.nn``; import from there.
"""
from oxmera.nn.modules.module import Module, RemovableHandle
from oxmera.nn.modules.activation import (ELU, GELU, LeakyReLU, LogSoftmax, ReLU, Sigmoid, SiLU,
                                          Softmax, Softplus, Tanh)
from oxmera.nn.modules.container import ModuleDict, ModuleList, Sequential
from oxmera.nn.modules.conv import Conv1d, Conv2d
from oxmera.nn.modules.dropout import Dropout
from oxmera.nn.modules.flatten import Flatten, Unflatten
from oxmera.nn.modules.linear import Bilinear, Identity, Linear
from oxmera.nn.modules.loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss,
                                    L1Loss, MSELoss, NLLLoss, SmoothL1Loss)
from oxmera.nn.modules.normalization import BatchNorm1d, BatchNorm2d, LayerNorm
from oxmera.nn.modules.pooling import AdaptiveAvgPool1d, AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from oxmera.nn.modules.rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from oxmera.nn.modules.sparse import Embedding

__all__ = [
    "Module",
    "Identity", "Linear", "Bilinear",
    "Conv1d", "Conv2d",
    "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
    "Flatten", "Unflatten",
    "Dropout",
    "LayerNorm", "BatchNorm1d", "BatchNorm2d",
    "Embedding",
    "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell",
    "Sequential", "ModuleList", "ModuleDict",
    "ReLU", "LeakyReLU", "ELU", "GELU", "SiLU", "Softplus", "Tanh", "Sigmoid", "Softmax",
    "LogSoftmax",
    "L1Loss", "MSELoss", "SmoothL1Loss", "HuberLoss", "NLLLoss", "CrossEntropyLoss", "BCELoss",
    "BCEWithLogitsLoss",
]

del RemovableHandle
