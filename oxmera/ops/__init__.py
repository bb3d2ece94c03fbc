"""The ops: pure-Python modules, each op a NumPy forward with its VJP beside it.

Importing this package defines every op, installs the Tensor methods and
operators they declare, and hands the engine the ops it applies to
gradients (``sum_to``, the dtype cast, ``add``).
"""
from oxmera._core import autograd as _core
from oxmera.ops import _registry
from oxmera.ops import (activation, conv, conversion, creation, elementwise, index, inplace,
                        interop, linalg, loss, normalization, reduce, rnn, shape)

_registry.install_tensor_attributes()
_core.set_engine_ops(reduce.sum_to, conversion._cast, elementwise.add)

__all__ = ["activation", "conv", "conversion", "creation", "elementwise", "index", "inplace",
           "interop", "linalg", "loss", "normalization", "reduce", "rnn", "shape"]
