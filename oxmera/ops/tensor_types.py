"""PyTorch's legacy tensor types: ``FloatTensor``, ``LongTensor`` ... and ``Tensor.type``.

Programs still construct tensors with them (``FloatTensor(2, 3)``,
``LongTensor([1, 2])``), test ``isinstance(t, FloatTensor)`` and compare
``t.type()`` to ``"torch.FloatTensor"``. As in PyTorch, they are not
subclasses: every tensor is a :class:`oxmera.Tensor`, and the types answer
``isinstance`` by dtype (their metaclass's ``__instancecheck__``).

``Tensor.type()`` returns PyTorch's spelling, ``"torch.FloatTensor"``, not
``"oxmera.FloatTensor"``: the point of these names is code written for
PyTorch (``if x.type() == "torch.cuda.FloatTensor"``, ``x.type("torch.LongTensor")``),
and such code, run with ``import oxmera as torch``, compares against
PyTorch's strings. ``Tensor.type(...)`` accepts both spellings.
"""
import operator
import warnings

import numpy as np

from oxmera._core import autograd as _core
from oxmera.ops import _registry
from oxmera.ops.conversion import to

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor",
           "ShortTensor", "ByteTensor", "CharTensor", "BoolTensor", "set_default_tensor_type"]

Tensor = _core.Tensor

#: dtype -> the legacy type's name, PyTorch's table for the dtypes oxmera has.
_NAMES = {np.dtype(np.float32): "FloatTensor", np.dtype(np.float64): "DoubleTensor",
          np.dtype(np.float16): "HalfTensor", np.dtype(np.int64): "LongTensor",
          np.dtype(np.int32): "IntTensor", np.dtype(np.int16): "ShortTensor",
          np.dtype(np.uint8): "ByteTensor", np.dtype(np.int8): "CharTensor",
          np.dtype(np.bool_): "BoolTensor"}


def _check_device(device, opname):
    if device is not None and str(device).split(":")[0] != "cpu":
        raise RuntimeError(f"{opname}(): oxmera computes on the CPU with NumPy; device "
                           f"{str(device)!r} is not available")


def _sizes(args):
    """The sizes ``args`` give (``(2, 3)`` or one Size), or None when they are data."""
    if len(args) == 1 and isinstance(args[0], _core.Size):
        return tuple(args[0])
    if args and all(isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_))
                    for a in args):
        return tuple(operator.index(a) for a in args)
    return None


class _LegacyTensorType(type):
    """The metaclass of the legacy types: calling one makes a Tensor of its dtype, and
    ``isinstance`` asks for that dtype."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype

    def __subclasscheck__(cls, subclass):
        return subclass is cls

    def __call__(cls, *args, device=None):
        name = cls.__name__
        _check_device(device, name)
        if not args:
            return _core._wrap(np.empty((0,), cls.dtype))
        sizes = _sizes(args)
        if sizes is not None:
            negative = [s for s in sizes if s < 0]
            if negative:
                raise RuntimeError(f"{name}(): Trying to create tensor with negative dimension "
                                   f"{negative[0]}: {list(sizes)}")
            # Uninitialized memory, as PyTorch gives (and oxmera.empty).
            return _core._wrap(np.empty(sizes, cls.dtype))
        if len(args) > 1:
            raise TypeError(f"{name}(): expected sizes (ints) or one sequence of data, got "
                            f"{len(args)} arguments of types "
                            f"{[type(a).__name__ for a in args]}")
        data = args[0]
        if isinstance(data, Tensor):
            if data.dtype != cls.dtype:
                raise TypeError(f"{name}(): expected a tensor of dtype {cls.dtype} "
                                f"(oxmera.{name}), got {data.dtype} "
                                f"(oxmera.{_NAMES.get(data.dtype, data.dtype)}); convert it "
                                f"with .to({cls.dtype})")
            return data.detach()            # PyTorch aliases the tensor given
        if isinstance(data, (bool, int, float, np.generic)) or not hasattr(data, "__len__") \
                and not isinstance(data, np.ndarray):
            raise TypeError(f"{name}(): data must be a sequence (got {type(data).__name__})")
        return Tensor(data, dtype=cls.dtype)

    def __repr__(cls):
        return f"<class 'oxmera.{cls.__name__}'>"


def _legacy_type(dtype):
    name = _NAMES[dtype]
    doc = f"""PyTorch's legacy ``{name}``: makes {dtype} tensors; ``isinstance`` checks the dtype.

    ``{name}(*sizes)`` (or one ``oxmera.Size``) is an uninitialized tensor of
    that shape, ``{name}(data)`` a copy of ``data`` in {dtype},
    ``{name}()`` an empty one, ``{name}(tensor)`` that tensor (of
    dtype {dtype}; another dtype is a ``TypeError``). The result is an
    ordinary :class:`oxmera.Tensor`.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.{name}(2, 3).shape
    oxmera.Size([2, 3])
    >>> t = oxmera.{name}([1, 0])
    >>> t.dtype, isinstance(t, oxmera.{name}), t.type()
    (dtype('{dtype}'), True, 'torch.{name}')
    """
    return _LegacyTensorType(name, (), {"dtype": dtype, "is_sparse": False, "is_cuda": False,
                                        "__module__": "oxmera", "__doc__": doc,
                                        "__slots__": ()})


FloatTensor, DoubleTensor, HalfTensor, LongTensor, IntTensor, ShortTensor, ByteTensor, \
    CharTensor, BoolTensor = (_legacy_type(d) for d in _NAMES)

_BY_NAME = {name: dtype for dtype, name in _NAMES.items()}


def _dtype_from_string(text):
    # "torch.FloatTensor" (PyTorch's), "oxmera.FloatTensor"; CUDA types are
    # refused as PyTorch refuses them without CUDA.
    module, _, name = text.rpartition(".")
    if module in ("torch.cuda", "oxmera.cuda") and name in _BY_NAME:
        raise RuntimeError(f"type(): cannot convert to {text!r}: oxmera computes on the CPU "
                           f"with NumPy, there is no CUDA")
    if module not in ("torch", "oxmera") or name not in _BY_NAME:
        raise ValueError(f"type(): invalid type: {text!r}; expected one of "
                         f"{['torch.' + n for n in _BY_NAME]}")
    return _BY_NAME[name]


def _type(self, dtype=None, non_blocking=False, **kwargs):
    """The legacy type name (``"torch.FloatTensor"``), or, given a type, the tensor converted.

    Without ``dtype``: PyTorch's name for the tensor's type, so code comparing
    it to ``"torch.FloatTensor"`` runs unchanged. With one (a dtype, a legacy
    type such as ``oxmera.DoubleTensor``, or its name ``"torch.DoubleTensor"``):
    ``self.to(dtype)``, which is ``self`` when the dtype is already that.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.zeros(2)
    >>> x.type()
    'torch.FloatTensor'
    >>> x.type("torch.LongTensor").dtype, x.type(oxmera.DoubleTensor).dtype
    (dtype('int64'), dtype('float64'))
    """
    unknown = set(kwargs) - {"async"}       # PyTorch's old name for non_blocking
    if unknown:
        raise TypeError(f"type(): unexpected keyword arguments {sorted(unknown)}")
    if dtype is None:
        name = _NAMES.get(self.dtype)
        # Only the dtypes oxmera creates have legacy types; an array of
        # another (uint16, from_numpy) gets PyTorch's newer spelling.
        return f"torch.{name or self.dtype.name.replace('uint', 'UInt').capitalize() + 'Tensor'}"
    if isinstance(dtype, str):
        dtype = _dtype_from_string(dtype)
    elif isinstance(dtype, _LegacyTensorType):
        dtype = dtype.dtype
    return to(self, dtype)


def set_default_tensor_type(t):
    """Make the legacy type ``t`` (or its name) the default: its dtype becomes the default
    float dtype (PyTorch's deprecated ``torch.set_default_tensor_type``).

    Warns, as PyTorch does, that ``set_default_dtype`` is the way now. Only
    floating types can be the default (``TypeError``).

    Examples
    --------
    >>> import warnings, oxmera
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     oxmera.set_default_tensor_type("torch.DoubleTensor")
    >>> oxmera.tensor([1.0]).dtype
    dtype('float64')
    >>> oxmera.set_default_dtype(oxmera.float32)
    """
    if isinstance(t, str):
        dtype = _dtype_from_string(t)
    elif isinstance(t, _LegacyTensorType):
        dtype = t.dtype
    else:
        raise TypeError(f"set_default_tensor_type(): expected a legacy tensor type "
                        f"(oxmera.DoubleTensor) or its name, got {t!r}")
    if dtype.kind != "f":
        raise TypeError(f"set_default_tensor_type(): only floating-point types are supported as "
                        f"the default type, got {t!r}")
    warnings.warn("set_default_tensor_type() is deprecated (as in PyTorch 2.1); please use "
                  "oxmera.set_default_dtype() instead", UserWarning, stacklevel=2)
    _core.set_default_dtype(dtype)


_registry.add_tensor_attribute("type", _type)
