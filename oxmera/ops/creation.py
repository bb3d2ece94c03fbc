"""Creating tensors: from data, filled, ranges (random ones: ``oxmera.ops.sampling``).

Python floats become the default float dtype (float32 unless changed by
``set_default_dtype``), Python ints int64, bools bool; NumPy arrays keep
their dtype.
"""
import operator

import numpy as np

from oxmera._core import autograd as _core

__all__ = ["tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "empty",
           "zeros_like", "ones_like", "full_like", "empty_like", "arange", "linspace",
           "eye"]

Tensor = _core.Tensor
_as_array = _core.as_array
_wrap = _core._wrap


def _finish(array, requires_grad):
    t = _wrap(array)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _size(size, opname):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    try:
        # operator.index, not int(): a float size is a mistake, not a size.
        size = tuple(operator.index(s) for s in size)
    except TypeError:
        raise TypeError(f"{opname}(): size must be ints, got {size!r}") from None
    if any(s < 0 for s in size):
        raise ValueError(f"{opname}(): negative dimension in size {size}")
    return size


def _float_dtype(dtype):
    return _core.get_default_dtype() if dtype is None else np.dtype(dtype)


def tensor(data, dtype=None, requires_grad=False):
    """A new tensor holding a copy of ``data``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.tensor([1, 2, 3])
    tensor([1, 2, 3], dtype=int64)
    >>> oxmera.tensor([[1.0, 2.0]], requires_grad=True)
    tensor([[1., 2.]], dtype=float32, requires_grad=True)
    """
    return _finish(_as_array(data, dtype, copy=True), requires_grad)


def as_tensor(data, dtype=None):
    """A tensor sharing memory with ``data`` when it can (a Tensor is returned as is).

    Examples
    --------
    >>> import numpy as np, oxmera
    >>> a = np.zeros(3)
    >>> t = oxmera.as_tensor(a)
    >>> a[0] = 1.0
    >>> t[0].item()
    1.0
    """
    if isinstance(data, Tensor) and (dtype is None or np.dtype(dtype) == data.dtype):
        return data
    if isinstance(data, Tensor):
        return data.to(dtype)
    return _wrap(_as_array(data, dtype))


def from_numpy(ndarray):
    """A tensor sharing memory with a NumPy array (same dtype).

    Examples
    --------
    >>> import numpy as np, oxmera
    >>> oxmera.from_numpy(np.arange(3)).dtype
    dtype('int64')
    """
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"from_numpy() expects a numpy.ndarray, got {type(ndarray).__name__}")
    return _wrap(_as_array(ndarray))


def zeros(*size, dtype=None, requires_grad=False):
    """A tensor of zeros (default float dtype).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.zeros(2, 2)
    tensor([[0., 0.],
            [0., 0.]], dtype=float32)
    """
    return _finish(np.zeros(_size(size, "zeros"), _float_dtype(dtype)), requires_grad)


def ones(*size, dtype=None, requires_grad=False):
    """A tensor of ones (default float dtype).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.ones(3)
    tensor([1., 1., 1.], dtype=float32)
    """
    return _finish(np.ones(_size(size, "ones"), _float_dtype(dtype)), requires_grad)


def empty(*size, dtype=None, requires_grad=False):
    """An uninitialized tensor (default float dtype).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.empty(2, 3).shape
    oxmera.Size([2, 3])
    """
    return _finish(np.empty(_size(size, "empty"), _float_dtype(dtype)), requires_grad)


def _fill_dtype(fill_value, dtype):
    if dtype is not None:
        return np.dtype(dtype)
    return _as_array(fill_value).dtype


def full(size, fill_value, dtype=None, requires_grad=False):
    """A tensor filled with ``fill_value`` (dtype from it: float, int64 or bool).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.full((2,), 7)
    tensor([7, 7], dtype=int64)
    """
    size = _size((size,) if isinstance(size, int) else tuple(size), "full")
    return _finish(np.full(size, fill_value, _fill_dtype(fill_value, dtype)), requires_grad)


def _like_dtype(input, dtype):
    return np.asarray(input).dtype if dtype is None and not isinstance(input, Tensor) else (
        input.dtype if dtype is None else np.dtype(dtype))


def zeros_like(input, dtype=None, requires_grad=False):
    """Zeros with the shape (and dtype) of ``input``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.zeros_like(oxmera.ones(2, dtype=oxmera.float64))
    tensor([0., 0.], dtype=float64)
    """
    return _finish(np.zeros(np.shape(input), _like_dtype(input, dtype)), requires_grad)


def ones_like(input, dtype=None, requires_grad=False):
    """Ones with the shape (and dtype) of ``input``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.ones_like(oxmera.zeros(2))
    tensor([1., 1.], dtype=float32)
    """
    return _finish(np.ones(np.shape(input), _like_dtype(input, dtype)), requires_grad)


def empty_like(input, dtype=None, requires_grad=False):
    """Uninitialized, with the shape (and dtype) of ``input``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.empty_like(oxmera.zeros(2, 3)).shape
    oxmera.Size([2, 3])
    """
    return _finish(np.empty(np.shape(input), _like_dtype(input, dtype)), requires_grad)


def full_like(input, fill_value, dtype=None, requires_grad=False):
    """Filled with ``fill_value``, with the shape (and dtype) of ``input``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.full_like(oxmera.zeros(2), 3.5)
    tensor([3.5, 3.5], dtype=float32)
    """
    return _finish(np.full(np.shape(input), fill_value, _like_dtype(input, dtype)),
                   requires_grad)


def arange(start, end=None, step=1, dtype=None, requires_grad=False):
    """Values from ``start`` up to (not including) ``end`` by ``step``.

    All-integer arguments give int64, otherwise the default float dtype.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.arange(4)
    tensor([0, 1, 2, 3], dtype=int64)
    >>> oxmera.arange(0, 1, 0.25)
    tensor([0.  , 0.25, 0.5 , 0.75], dtype=float32)
    """
    if end is None:
        start, end = 0, start
    if step == 0:
        raise ValueError("arange(): step must be nonzero")
    if dtype is None:
        ints = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
        dtype = np.int64 if ints else _core.get_default_dtype()
    values = np.arange(start, end, step, dtype=np.float64 if np.dtype(dtype).kind == "f"
                       else None)
    return _finish(values.astype(dtype), requires_grad)


def linspace(start, end, steps, dtype=None, requires_grad=False):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.linspace(0, 1, 3)
    tensor([0. , 0.5, 1. ], dtype=float32)
    """
    if steps < 0:
        raise ValueError(f"linspace(): number of steps must be non-negative, got {steps}")
    return _finish(np.linspace(start, end, int(steps)).astype(_float_dtype(dtype)),
                   requires_grad)


def eye(n, m=None, dtype=None, requires_grad=False):
    """The identity matrix (``n`` x ``m``, ``m`` defaulting to ``n``).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.eye(2)
    tensor([[1., 0.],
            [0., 1.]], dtype=float32)
    """
    return _finish(np.eye(n, m, dtype=_float_dtype(dtype)), requires_grad)
