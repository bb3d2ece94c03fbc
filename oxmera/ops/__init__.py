"""The ops: pure-Python modules, each op a NumPy forward with its VJP beside it.

Importing this package defines every op, installs the Tensor methods and
operators they declare, and hands the engine the ops it applies to
gradients (``sum_to``, the dtype cast, ``add``).
"""
from oxmera._core import autograd as _core
# One module a line, in order: each import defines that module's ops.
from oxmera.ops import _registry
from oxmera.ops import activation
from oxmera.ops import attention
from oxmera.ops import blas
from oxmera.ops import complex
from oxmera.ops import construction
from oxmera.ops import conv
from oxmera.ops import conv_transpose
from oxmera.ops import fold
from oxmera.ops import conversion
from oxmera.ops import creation
from oxmera.ops import decompositions
from oxmera.ops import elementwise
from oxmera.ops import fft
from oxmera.ops import index
from oxmera.ops import inplace
from oxmera.ops import interop
from oxmera.ops import linalg
from oxmera.ops import loss
from oxmera.ops import matrix_functions
from oxmera.ops import normalization
from oxmera.ops import pointwise
from oxmera.ops import pooling
from oxmera.ops import reduce
from oxmera.ops import rnn
from oxmera.ops import sampling
from oxmera.ops import scatter
from oxmera.ops import shape
from oxmera.ops import sorting
from oxmera.ops import sparse
from oxmera.ops import special
from oxmera.ops import statistics
from oxmera.ops import tensor_api
from oxmera.ops import tensor_types

_registry.install_tensor_attributes()
_core.set_engine_ops(reduce.sum_to, conversion._cast, elementwise.add)

__all__ = [
    "activation",
    "attention",
    "blas",
    "complex",
    "construction",
    "conv",
    "conv_transpose",
    "fold",
    "conversion",
    "creation",
    "decompositions",
    "elementwise",
    "fft",
    "index",
    "inplace",
    "interop",
    "linalg",
    "loss",
    "matrix_functions",
    "normalization",
    "pointwise",
    "pooling",
    "reduce",
    "rnn",
    "sampling",
    "scatter",
    "shape",
    "sorting",
    "sparse",
    "special",
    "statistics",
    "tensor_api",
    "tensor_types",
]
