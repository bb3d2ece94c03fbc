"""Optimizers and learning-rate schedulers, with PyTorch's names and update rules.

``Optimizer`` (the base class: parameter groups, ``zero_grad``, ``step``,
``state_dict``/``load_state_dict``), ``SGD``, ``Adam``, ``AdamW``,
``RMSprop``, ``Adagrad``, and ``oxmera.optim.lr_scheduler``. Gradient
clipping lives in ``oxmera.nn.utils``; checkpoints are written by
``oxmera.save``.
"""
from oxmera.optim import lr_scheduler
from oxmera.optim.adagrad import Adagrad
from oxmera.optim.adam import Adam
from oxmera.optim.adamw import AdamW
from oxmera.optim.optimizer import Optimizer
from oxmera.optim.rmsprop import RMSprop
from oxmera.optim.sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]
