"""Neural-network building blocks, as in ``torch.nn``.

- :class:`Parameter` and :class:`Module` (``oxmera.nn.parameter``,
  ``oxmera.nn.modules.module``): learnable tensors and the containers that
  register them;
- the layers, containers, activations and losses (``oxmera.nn.modules``);
- ``oxmera.nn.init``: in-place initializations;
- ``oxmera.nn.functional``: the stateless functions the layers call;
- ``oxmera.nn.utils``: training utilities (gradient clipping);
- ``oxmera.nn.parallel``: ``DataParallel`` (runs the module: oxmera has no accelerator).
"""
from oxmera.nn import functional
from oxmera.nn.parameter import Parameter, UninitializedBuffer, UninitializedParameter
from oxmera.nn import init, utils
from oxmera.nn.modules import *  # noqa: F403  (the modules package's __all__ is its layers)
from oxmera.nn import modules as _modules
from oxmera.nn import parallel
from oxmera.nn.parallel import DataParallel

__all__ = ["functional", "init", "utils", "parallel", "Parameter", "UninitializedParameter",
           "UninitializedBuffer", "DataParallel",
           *_modules.__all__]
