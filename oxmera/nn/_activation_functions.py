"""The rest of ``torch.nn.functional``'s activations, composed from elementwise ops.

relu6, hardtanh, hardsigmoid, hardswish, mish, selu, celu, softsign,
logsigmoid, glu, prelu, rrelu, threshold, softmin, tanhshrink, softshrink,
hardshrink, and PyTorch's in-place forms (``relu_``, ``hardtanh_``...).
Each is written so that its gradient at a kink is PyTorch's: a piece is
picked by ``where`` on a strict or non-strict comparison as PyTorch's
backward kernel picks it (``hardtanh`` and ``hardswish`` pass the gradient of
their middle piece only strictly inside it), and second derivatives come
from the ops' VJPs.
"""
import numpy as np

from oxmera import random as _random
from oxmera._core import autograd as _core
from oxmera.nn._function_utils import apply_inplace, as_input
from oxmera.ops.activation import softmax, softplus
from oxmera.ops.elementwise import abs, expm1, ge, gt, le, lt, sigmoid, tanh, where

__all__ = ["relu6", "hardtanh", "hardtanh_", "hardsigmoid", "hardswish", "mish", "selu",
           "selu_", "celu", "celu_", "softsign", "logsigmoid", "glu", "prelu", "rrelu",
           "rrelu_", "threshold", "threshold_", "softmin", "tanhshrink", "softshrink",
           "hardshrink"]

# SELU's constants (Klambauer et al., 2017), as PyTorch has them.
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _float_input(input, opname):
    input = as_input(input, opname)
    if input.dtype.kind != "f":
        raise TypeError(f"{opname}(): expected a floating point input, got dtype {input.dtype}")
    return input


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """``input`` clamped to ``[min_val, max_val]``; the gradient passes strictly inside.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.hardtanh(oxmera.tensor([-2.0, 0.5, 3.0]))
    tensor([-1. ,  0.5,  1. ], dtype=float32)
    """
    if min_val > max_val:
        raise ValueError(f"hardtanh(): min_val ({min_val}) cannot be greater than max_val "
                         f"({max_val})")

    def fn(x):
        return where(le(x, min_val), min_val, where(ge(x, max_val), max_val, x))
    return apply_inplace(fn, _float_input(input, "hardtanh"), inplace, "hardtanh")


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """In-place :func:`hardtanh`.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> x = oxmera.tensor([-2.0, 0.5])
    >>> _ = F.hardtanh_(x); x
    tensor([-1. ,  0.5], dtype=float32)
    """
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace=False):
    """``min(max(x, 0), 6)``: ``hardtanh(x, 0, 6)``.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.relu6(oxmera.tensor([-1.0, 3.0, 9.0]))
    tensor([0., 3., 6.], dtype=float32)
    """
    return hardtanh(input, 0.0, 6.0, inplace)


def hardsigmoid(input, inplace=False):
    """``relu6(x + 3) / 6``: 0 below -3, 1 above 3, linear between.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.hardsigmoid(oxmera.tensor([-4.0, 0.0, 4.0]))
    tensor([0. , 0.5, 1. ], dtype=float32)
    """
    def fn(x):
        return where(le(x, -3.0), 0.0, where(ge(x, 3.0), 1.0, x / 6.0 + 0.5))
    return apply_inplace(fn, _float_input(input, "hardsigmoid"), inplace, "hardsigmoid")


def hardswish(input, inplace=False):
    """``x * relu6(x + 3) / 6`` (MobileNetV3); the gradient is PyTorch's: 0 up to -3,
    ``x / 3 + 0.5`` strictly between -3 and 3, 1 from 3.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.hardswish(oxmera.tensor([-4.0, 0.0, 1.0, 4.0]))
    tensor([0.    , 0.    , 0.6667, 4.    ], dtype=float32)
    """
    def fn(x):
        return where(le(x, -3.0), 0.0, where(lt(x, 3.0), x * (x + 3.0) / 6.0, x))
    return apply_inplace(fn, _float_input(input, "hardswish"), inplace, "hardswish")


def mish(input, inplace=False):
    """``x * tanh(softplus(x))``.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.mish(oxmera.tensor([0.0, 1.0]))
    tensor([0.    , 0.8651], dtype=float32)
    """
    def fn(x):
        return x * tanh(softplus(x))
    return apply_inplace(fn, _float_input(input, "mish"), inplace, "mish")


def _elu_piece(x, alpha, inner_scale):
    # alpha * (exp(x / inner_scale) - 1) for x <= 0, x elsewhere; exp only of the
    # non-positive part (a large positive x would overflow, and where's zero
    # gradient times inf is nan).
    positive = gt(x, 0)
    return where(positive, x, expm1(where(positive, 0.0, x) / inner_scale) * alpha)


def selu(input, inplace=False):
    """``scale * elu(x, alpha)`` with SELU's fixed ``alpha`` and ``scale``.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.selu(oxmera.tensor([-1.0, 1.0]))
    tensor([-1.1113,  1.0507], dtype=float32)
    """
    def fn(x):
        return _elu_piece(x, _SELU_ALPHA, 1.0) * _SELU_SCALE
    return apply_inplace(fn, _float_input(input, "selu"), inplace, "selu")


def selu_(input):
    """In-place :func:`selu`.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.selu_(oxmera.tensor([1.0]))
    tensor([1.0507], dtype=float32)
    """
    return selu(input, inplace=True)


def celu(input, alpha=1.0, inplace=False):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.celu(oxmera.tensor([-1.0, 1.0]), alpha=2.0)
    tensor([-0.7869,  1.    ], dtype=float32)
    """
    if alpha == 0:
        raise RuntimeError("celu(): ZeroDivisionError: alpha cannot be 0 for CELU")

    def fn(x):
        return _elu_piece(x, alpha, alpha)
    return apply_inplace(fn, _float_input(input, "celu"), inplace, "celu")


def celu_(input, alpha=1.0):
    """In-place :func:`celu`.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.celu_(oxmera.tensor([1.0]))
    tensor([1.], dtype=float32)
    """
    return celu(input, alpha, inplace=True)


def softsign(input):
    """``x / (1 + |x|)``.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.softsign(oxmera.tensor([-1.0, 3.0]))
    tensor([-0.5 ,  0.75], dtype=float32)
    """
    input = _float_input(input, "softsign")
    return input / (abs(input) + 1.0)


def logsigmoid(input):
    """``log(sigmoid(x))`` as ``-softplus(-x)``: finite for large ``|x|``.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.logsigmoid(oxmera.tensor([0.0, -100.0]))
    tensor([  -0.6931, -100.    ], dtype=float32)
    """
    input = _float_input(input, "logsigmoid")
    return -softplus(-input)


def glu(input, dim=-1):
    """Gated linear unit: ``a * sigmoid(b)`` with ``a, b`` the halves of ``input`` along ``dim``.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.glu(oxmera.tensor([[1.0, 2.0, 0.0, 0.0]]))
    tensor([[0.5, 1. ]], dtype=float32)
    """
    input = _float_input(input, "glu")
    if input.ndim == 0:
        raise RuntimeError("glu(): glu does not support scalars because halving size must be "
                           "even")
    size = input.shape[dim]
    if size % 2:
        raise RuntimeError(f"glu(): halving dimension must be even, but dimension {dim} is "
                           f"size {size}")
    first, second = input.chunk(2, dim)
    return first * sigmoid(second)


def prelu(input, weight):
    """``x`` where ``x > 0``, else ``weight * x``; ``weight`` has one entry or one per
    channel (dim 1).

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.prelu(oxmera.tensor([[-1.0, 2.0]]), oxmera.tensor([0.25]))
    tensor([[-0.25,  2.  ]], dtype=float32)
    """
    input = _float_input(input, "prelu")
    weight = as_input(weight, "prelu", "weight")
    if weight.ndim > 1:
        raise RuntimeError(f"prelu(): weight must be 0-d or 1-d, got shape {tuple(weight.shape)}")
    count = weight.numel()
    channels = input.shape[1] if input.ndim >= 2 else (input.shape[0] if input.ndim else 1)
    if count != 1 and count != channels:
        raise RuntimeError(f"prelu(): mismatch of parameter numbers and input channel size: "
                           f"{count} parameters, input of shape {tuple(input.shape)} has "
                           f"{channels} channels")
    if count != 1 and input.ndim >= 2:
        weight = weight.reshape(count, *([1] * (input.ndim - 2)))
    return where(gt(input, 0), input, input * weight)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: in training each negative element's slope is drawn from
    ``U(lower, upper)``; in evaluation it is ``(lower + upper) / 2``.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.rrelu(oxmera.tensor([-3.0, 2.0]), 0.2, 0.4)
    tensor([-0.9,  2. ], dtype=float32)
    """
    if not 0 <= lower <= upper:
        raise ValueError(f"rrelu(): lower bound {lower} must be at least 0 and at most the "
                         f"upper bound {upper}")
    input = _float_input(input, "rrelu")
    if training:
        draws = _random.numpy_generator(None, "rrelu()").uniform(lower, upper, input.shape)
        slope = _core._wrap(np.asarray(draws, dtype=input.dtype))
    else:
        slope = (lower + upper) / 2

    def fn(x):
        return where(gt(x, 0), x, x * slope)
    return apply_inplace(fn, input, inplace, "rrelu")


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """In-place :func:`rrelu`.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.rrelu_(oxmera.tensor([-2.0]), 0.5, 0.5)
    tensor([-1.], dtype=float32)
    """
    return rrelu(input, lower, upper, training, inplace=True)


def _threshold(input, bound, value, inplace):
    def fn(x):
        return where(gt(x, bound), x, value)
    return apply_inplace(fn, as_input(input, "threshold"), inplace, "threshold")


def threshold(input, threshold, value, inplace=False):
    """``x`` where ``x > threshold``, else ``value``.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.threshold(oxmera.tensor([0.5, 2.0]), 1.0, -1.0)
    tensor([-1.,  2.], dtype=float32)
    """
    return _threshold(input, threshold, value, inplace)


def threshold_(input, threshold, value):
    """In-place :func:`threshold`.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.threshold_(oxmera.tensor([0.5]), 1.0, 0.0)
    tensor([0.], dtype=float32)
    """
    return _threshold(input, threshold, value, True)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """``softmax(-x)`` along ``dim``.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.softmin(oxmera.tensor([2.0, 2.0]), dim=0)
    tensor([0.5, 0.5], dtype=float32)
    """
    input = as_input(input, "softmin")
    return softmax(-input, dim, dtype, _stacklevel=_stacklevel + 1)


def tanhshrink(input):
    """``x - tanh(x)``.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.tanhshrink(oxmera.tensor([0.0, 1.0]))
    tensor([0.    , 0.2384], dtype=float32)
    """
    input = _float_input(input, "tanhshrink")
    return input - tanh(input)


def softshrink(input, lambd=0.5):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.softshrink(oxmera.tensor([-2.0, 0.2, 2.0]))
    tensor([-1.5,  0. ,  1.5], dtype=float32)
    """
    if lambd < 0:
        raise RuntimeError(f"softshrink(): lambda must be greater or equal to 0, but found to "
                           f"be {lambd}")
    input = _float_input(input, "softshrink")
    return where(gt(input, lambd), input - lambd, where(lt(input, -lambd), input + lambd, 0.0))


def hardshrink(input, lambd=0.5):
    """``x`` where ``|x| > lambd``, else 0.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.hardshrink(oxmera.tensor([-2.0, 0.2, 2.0]))
    tensor([-2.,  0.,  2.], dtype=float32)
    """
    input = _float_input(input, "hardshrink")
    return where(gt(abs(input), lambd), input, 0.0)
