"""Optimizers and learning-rate schedulers, with PyTorch's names and update rules.

``Optimizer`` (the base class: parameter groups, ``zero_grad``, ``step``,
``state_dict``/``load_state_dict``), ``SGD``, ``Adam``, ``AdamW``,
``RMSprop``, ``Adagrad``, ``Adadelta``, ``Adamax``, ``NAdam``, ``RAdam``,
``ASGD``, ``Rprop``, ``LBFGS`` (one module each, as PyTorch lays them out),
and ``oxmera.optim.lr_scheduler``. PyTorch's ``SparseAdam`` is not here
(oxmera has no sparse gradients). Gradient
clipping lives in ``oxmera.nn.utils``; checkpoints are written by
``oxmera.save``.
"""
from oxmera.optim import lr_scheduler
from oxmera.optim.adadelta import Adadelta
from oxmera.optim.adagrad import Adagrad
from oxmera.optim.adam import Adam
from oxmera.optim.adamax import Adamax
from oxmera.optim.adamw import AdamW
from oxmera.optim.asgd import ASGD
from oxmera.optim.lbfgs import LBFGS
from oxmera.optim.nadam import NAdam
from oxmera.optim.optimizer import Optimizer
from oxmera.optim.radam import RAdam
from oxmera.optim.rmsprop import RMSprop
from oxmera.optim.rprop import Rprop
from oxmera.optim.sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax",
           "NAdam", "RAdam", "ASGD", "Rprop", "LBFGS", "lr_scheduler"]
