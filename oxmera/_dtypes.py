"""Questions about dtypes: their limits (``finfo``, ``iinfo``) and how they combine
(``promote_types``, ``result_type``, ``can_cast``), as PyTorch answers them.

oxmera's dtypes are NumPy dtypes (``oxmera.float32 is np.dtype("float32")``),
so NumPy knows their limits; the promotion rules are PyTorch's, which the ops
apply (``oxmera.ops._utils``), not NumPy's (``int64 + float32`` is float32
here, float64 in NumPy).
"""
import numbers

import numpy as np

from oxmera._core import autograd as _core
from oxmera.ops import _utils

__all__ = ["finfo", "iinfo", "promote_types", "result_type", "can_cast"]


def _dtype(value, opname):
    try:
        dtype = np.dtype(value)
    except TypeError:
        raise TypeError(f"{opname}(): expected a dtype, got {type(value).__name__} "
                        f"{value!r}") from None
    if dtype.kind not in "biufc":
        raise TypeError(f"{opname}(): unsupported dtype {dtype}: oxmera has bool, integer, "
                        f"floating and complex dtypes")
    return dtype


class finfo:
    """The limits of a floating dtype (``torch.finfo``); the default dtype without one.

    Attributes
    ----------
    bits : int
        Bits an element occupies.
    eps : float
        The gap between 1.0 and the next representable value.
    max, min : float
        The largest and the most negative finite values.
    tiny, smallest_normal : float
        The smallest positive normal value (two names for it, as in PyTorch).
    resolution : float
        The approximate decimal resolution, ``10 ** -precision``.
    dtype : str
        The dtype's name (``"float32"``), as PyTorch gives it.

    Examples
    --------
    >>> import oxmera
    >>> info = oxmera.finfo(oxmera.float16)
    >>> info.max, info.eps, info.bits, info.dtype
    (65504.0, 0.0009765625, 16, 'float16')
    >>> oxmera.finfo().dtype
    'float32'
    """
    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, type=None):
        dtype = _core.get_default_dtype() if type is None else _dtype(type, "finfo")
        if dtype.kind != "f":
            raise TypeError(f"oxmera.finfo() requires a floating point input type, got {dtype}. "
                            f"Use oxmera.iinfo to handle '{dtype}'")
        info = np.finfo(dtype)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = float(info.smallest_normal)
        self.smallest_normal = self.tiny
        # 10 ** -precision as a Python float, as PyTorch computes it (NumPy's
        # is that number rounded to the dtype: 0.0010004 for float16).
        self.resolution = 10.0 ** -int(info.precision)
        self.dtype = dtype.name

    def __eq__(self, other):
        return isinstance(other, finfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("finfo", self.dtype))

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """The limits of an integer dtype (``torch.iinfo``): ``bits``, ``min``, ``max``, ``dtype``.

    ``bool`` is not an integer dtype here, as in PyTorch (a ``TypeError``).

    Examples
    --------
    >>> import oxmera
    >>> info = oxmera.iinfo(oxmera.int8)
    >>> info.min, info.max, info.bits, info.dtype
    (-128, 127, 8, 'int8')
    >>> oxmera.iinfo(oxmera.uint8)
    iinfo(min=0, max=255, dtype=uint8)
    """
    __slots__ = ("bits", "min", "max", "dtype")

    def __init__(self, type):
        dtype = _dtype(type, "iinfo")
        if dtype.kind not in "iu":
            raise TypeError(f"oxmera.iinfo() requires an integer input type, got {dtype}. Use "
                            f"oxmera.finfo to handle '{dtype}'" if dtype.kind == "f" else
                            f"oxmera.iinfo() does not support {dtype}")
        info = np.iinfo(dtype)
        self.bits = int(info.bits)
        self.min = int(info.min)
        self.max = int(info.max)
        self.dtype = dtype.name

    def __eq__(self, other):
        return isinstance(other, iinfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("iinfo", self.dtype))

    def __repr__(self):
        # PyTorch's format (%g: int32's max shows as 2.14748e+09).
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


def promote_types(type1, type2):
    """The smallest dtype both ``type1`` and ``type2`` convert to without a change of
    category, by PyTorch's rules (an integer meeting a float gives that float).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.promote_types(oxmera.int64, oxmera.float16)
    dtype('float16')
    >>> oxmera.promote_types(oxmera.uint8, oxmera.int8)
    dtype('int16')
    """
    return _utils._promote(_dtype(type1, "promote_types"), _dtype(type2, "promote_types"))


def _operand(value, opname):
    if isinstance(value, _core.Tensor):
        return value
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, numbers.Complex):
        return complex(value)
    raise TypeError(f"{opname}(): expected a Tensor or a Python number, got "
                    f"{type(value).__name__}")


def result_type(tensor1, tensor2):
    """The dtype an arithmetic op on ``tensor1`` and ``tensor2`` (tensors or numbers) gives.

    PyTorch's rules: the category (bool < integer < float < complex) is the highest of
    the operands, and within it tensors with dimensions decide over 0-d
    tensors, which decide over Python numbers.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.result_type(oxmera.tensor([1, 2]), 1.0)
    dtype('float32')
    >>> oxmera.result_type(oxmera.tensor([1.0], dtype=oxmera.float16), oxmera.tensor(1.0))
    dtype('float16')
    """
    return _utils.result_type(_operand(tensor1, "result_type"),
                              _operand(tensor2, "result_type"))


def can_cast(from_, to):
    """Whether PyTorch's type promotion allows casting dtype ``from_`` to ``to``: never to a
    lower category (complex to float, float to integer, or integer to bool); within one,
    always.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.can_cast(oxmera.float64, oxmera.float32)
    True
    >>> oxmera.can_cast(oxmera.float32, oxmera.int32)
    False
    """
    return (_utils._category(_dtype(from_, "can_cast"))
            <= _utils._category(_dtype(to, "can_cast")))
