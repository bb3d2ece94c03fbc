"""oxmera: NumPy-backed tensors with reverse-mode automatic differentiation.

Curated re-exports only; the code lives in ``oxmera._core`` (compiled),
``oxmera.ops`` and ``oxmera.autograd``.
"""
import numpy as _np

from oxmera._core import autograd as _autograd_core
from oxmera._core.autograd import (AutogradMeta, GradFn, OpError, Tensor, get_default_dtype,
                                   set_default_dtype)
from oxmera import ops as _ops  # defines every op and installs the Tensor methods
from oxmera import autograd
from oxmera.autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from oxmera.ops.conversion import clone, contiguous, to
from oxmera.ops.creation import (arange, as_tensor, empty, empty_like, eye, from_numpy, full,
                                 full_like, linspace, manual_seed, normal, ones, ones_like, rand,
                                 randint, randn, tensor, zeros, zeros_like)
from oxmera.ops.elementwise import (abs, add, cos, div, eq, exp, ge, gt, le, log, lt, mul, ne,
                                    neg, pow, relu, sigmoid, sign, sin, sqrt, sub, tanh,
                                    true_divide, where)
from oxmera.ops.index import getitem
from oxmera.ops.linalg import matmul
from oxmera.ops.reduce import max, mean, min, sum, sum_to
from oxmera.ops.shape import (broadcast_to, cat, concatenate, expand, permute, reshape, squeeze,
                              stack, swapaxes, transpose, unsqueeze, view)

__version__ = "0.1.0"

float16 = _np.dtype(_np.float16)
float32 = _np.dtype(_np.float32)
float64 = _np.dtype(_np.float64)
int8 = _np.dtype(_np.int8)
int16 = _np.dtype(_np.int16)
int32 = _np.dtype(_np.int32)
int64 = _np.dtype(_np.int64)
uint8 = _np.dtype(_np.uint8)
bool = _np.dtype(_np.bool_)
half, float, double = float16, float32, float64
short, int, long = int16, int32, int64

__all__ = [
    "Tensor", "AutogradMeta", "GradFn", "OpError", "autograd",
    "get_default_dtype", "set_default_dtype",
    "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
    "tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "empty", "zeros_like",
    "ones_like", "full_like", "empty_like", "arange", "linspace", "eye", "rand", "randn",
    "randint", "normal", "manual_seed",
    "add", "sub", "mul", "div", "true_divide", "pow", "neg", "exp", "log", "sqrt", "sin",
    "cos", "tanh", "sigmoid", "relu", "abs", "sign", "where",
    "eq", "ne", "lt", "le", "gt", "ge",
    "sum", "mean", "max", "min", "sum_to", "matmul",
    "reshape", "view", "transpose", "swapaxes", "permute", "squeeze", "unsqueeze", "expand",
    "broadcast_to", "cat", "concatenate", "stack", "getitem", "clone", "contiguous", "to",
    "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool",
    "half", "float", "double", "short", "int", "long",
]
