"""Creating tensors: from data, filled, ranges (random ones: ``oxmera.ops.sampling``).

Python floats become the default float dtype (float32 unless changed by
``set_default_dtype``), Python ints int64, bools bool; NumPy arrays keep
their dtype.
"""
import operator

import numpy as np

from oxmera import _device, _layout
from oxmera._core import autograd as _core
from oxmera.ops import _registry
from oxmera.ops._utils import parse_size

__all__ = ["tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "empty",
           "zeros_like", "ones_like", "full_like", "empty_like", "arange", "linspace",
           "logspace", "eye", "empty_strided"]

Tensor = _core.Tensor
_as_array = _core.as_array
_wrap = _core._wrap


def _finish(array, requires_grad):
    t = _wrap(array)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _size(size, opname):
    return parse_size(opname, size)


def _float_dtype(dtype):
    return _core.get_default_dtype() if dtype is None else np.dtype(dtype)


def _options(opname, device=None, layout=None, pin_memory=False, out=None):
    """Check the keywords every creation function takes as PyTorch's do.

    ``device`` must be the CPU (the one rule, in ``oxmera._device.check_cpu``),
    ``layout`` ``oxmera.strided``; ``pin_memory`` is accepted and has no effect
    (see ``Tensor.pin_memory``); ``out=`` is refused: oxmera's creation
    functions always make a new tensor.
    """
    # Each check only when its keyword is given: these run on every tensor made.
    if out is not None:
        raise TypeError(f"{opname}(): out= is not supported by oxmera (PyTorch's functions "
                        f"can write into an existing tensor; oxmera's return a new one: assign "
                        f"the result, or copy it in with out.copy_(result))")
    if device is not None:
        _device.check_cpu(f"{opname}()", device)
    if layout is not None:
        _layout.check_layout(f"{opname}()", layout)
    if pin_memory is not False and not isinstance(pin_memory, (bool, np.bool_)):
        raise TypeError(f"{opname}(): pin_memory must be a bool, got {pin_memory!r}")


def _shape(opname, size, size_keyword):
    """The shape from ``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` or ``f(size=(2, 3))``."""
    return parse_size(opname, size, size_keyword)


def _filled(opname, shape, fill, dtype, memory_format, like=None):
    """A new array of ``shape`` and ``dtype`` set to ``fill`` (None: uninitialized).

    Laid out in ``memory_format``; ``preserve_format`` follows ``like``'s
    memory order (the ``*_like`` functions), as NumPy's ``order="K"`` does.
    """
    if memory_format is _layout.contiguous_format:        # the usual case, first
        return np.empty(shape, dtype) if fill is None else np.full(shape, fill, dtype)
    memory_format = _layout.check_memory_format(f"{opname}()", memory_format)
    if memory_format is _layout.preserve_format:
        if like is None:
            raise RuntimeError(f"{opname}(): unsupported memory format "
                               f"oxmera.preserve_format (there is no input to preserve)")
        array = np.empty_like(like, dtype=dtype, shape=shape)
    elif memory_format is _layout.contiguous_format:
        array = np.empty(shape, dtype)
    else:
        order = _layout.dim_order(f"{opname}()", memory_format, shape)
        inverse = tuple(int(i) for i in np.argsort(order))
        array = np.empty(tuple(shape[i] for i in order), dtype).transpose(inverse)
    if fill is not None:
        array[...] = fill
    return array


def tensor(data, dtype=None, requires_grad=False, *, device=None, pin_memory=False):
    """A new tensor holding a copy of ``data``.

    ``device`` is the CPU (or None); ``pin_memory`` is accepted and has no
    effect (see ``Tensor.pin_memory``).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.tensor([1, 2, 3])
    tensor([1, 2, 3], dtype=int64)
    >>> oxmera.tensor([[1.0, 2.0]], requires_grad=True, device="cpu")
    tensor([[1., 2.]], dtype=float32, requires_grad=True)
    """
    _options("tensor", device, pin_memory=pin_memory)
    return _finish(_as_array(data, dtype, copy=True), requires_grad)


def as_tensor(data, dtype=None, device=None):
    """A tensor sharing memory with ``data`` when it can (a Tensor is returned as is).

    ``device`` is the CPU (or None).

    Examples
    --------
    >>> import numpy as np, oxmera
    >>> a = np.zeros(3)
    >>> t = oxmera.as_tensor(a)
    >>> a[0] = 1.0
    >>> t[0].item()
    1.0
    """
    _options("as_tensor", device)
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


def _new(opname, make, fill, size, size_keyword, dtype, device, layout, pin_memory, out,
         requires_grad, memory_format=_layout.contiguous_format):
    # zeros / ones / empty: one shape of code. ``make`` is NumPy's own constructor
    # (np.zeros ...), for C order: several times faster than filling for small tensors.
    _options(opname, device, layout, pin_memory, out)
    shape = _shape(opname, size, size_keyword)
    dtype = _float_dtype(dtype)
    if memory_format is _layout.contiguous_format:
        return _finish(make(shape, dtype), requires_grad)
    return _finish(_filled(opname, shape, fill, dtype, memory_format), requires_grad)


def zeros(*sizes, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          size=None):
    """A tensor of zeros (default float dtype).

    The size is given as ints, one sequence, or ``size=``. ``device`` is the
    CPU (or None), ``layout`` ``oxmera.strided`` (or None); ``out=`` is not
    supported (a TypeError: the result is always a new tensor).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.zeros(2, 2)
    tensor([[0., 0.],
            [0., 0.]], dtype=float32)
    >>> oxmera.zeros(size=(1, 2), device="cpu")
    tensor([[0., 0.]], dtype=float32)
    """
    return _new("zeros", np.zeros, 0, sizes, size, dtype, device, layout, False, out,
                requires_grad)


def ones(*sizes, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         size=None):
    """A tensor of ones (default float dtype); size and keywords as :func:`oxmera.zeros`.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.ones(3)
    tensor([1., 1., 1.], dtype=float32)
    """
    return _new("ones", np.ones, 1, sizes, size, dtype, device, layout, False, out,
                requires_grad)


def empty(*sizes, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=_layout.contiguous_format, size=None):
    """An uninitialized tensor (default float dtype); size and keywords as :func:`oxmera.zeros`.

    ``memory_format``: ``oxmera.contiguous_format`` (C order, the default),
    ``channels_last`` or ``channels_last_3d``. ``pin_memory`` has no effect.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.empty(2, 3).shape
    oxmera.Size([2, 3])
    """
    return _new("empty", np.empty, None, sizes, size, dtype, device, layout, pin_memory, out,
                requires_grad, memory_format)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None,
                  requires_grad=False, pin_memory=False):
    """An uninitialized tensor of ``size`` whose elements are ``stride`` elements apart.

    Strides are counted in elements, as in PyTorch, and may overlap (a stride
    of 0 repeats an element); negative strides are refused. Keywords as
    :func:`oxmera.empty`.

    Examples
    --------
    >>> import oxmera
    >>> t = oxmera.empty_strided((2, 3), (1, 2))
    >>> t.shape, t.numpy().strides
    (oxmera.Size([2, 3]), (4, 8))
    """
    _options("empty_strided", device, layout, pin_memory)
    shape = _size((size,) if isinstance(size, int) else tuple(size), "empty_strided")
    try:
        strides = tuple(operator.index(s) for s in
                        ((stride,) if isinstance(stride, int) else tuple(stride)))
    except TypeError:
        raise TypeError(f"empty_strided(): stride must be ints, got {stride!r}") from None
    if any(s < 0 for s in strides):
        raise RuntimeError(f"empty_strided(): negative strides are not supported, got "
                           f"{strides}")
    if len(strides) != len(shape):
        raise RuntimeError(f"empty_strided(): mismatch in length of strides and shape: size "
                           f"{shape}, stride {strides}")
    dtype = _float_dtype(dtype)
    # The elements reached: the last one's offset plus one (none when a dim is empty).
    extent = 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, strides))
    base = np.empty(extent, dtype)
    array = np.lib.stride_tricks.as_strided(
        base, shape, tuple(s * dtype.itemsize for s in strides), writeable=True)
    return _finish(array, requires_grad)


def _fill_dtype(fill_value, dtype):
    if dtype is not None:
        # Checked before the fill: NumPy 2.5 fails converting a number to a date
        # dtype with its own ValueError, before the tensor's dtype check is reached.
        from oxmera._dtypes import _dtype
        return _dtype(dtype, "full")
    return _as_array(fill_value).dtype


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad=False):
    """A tensor filled with ``fill_value`` (dtype from it: float, int64 or bool).

    Keywords as :func:`oxmera.zeros`.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.full((2,), 7)
    tensor([7, 7], dtype=int64)
    """
    _options("full", device, layout, out=out)
    size = _size((size,) if isinstance(size, int) else tuple(size), "full")
    return _finish(_filled("full", size, fill_value, _fill_dtype(fill_value, dtype),
                           _layout.contiguous_format), requires_grad)


def _like_dtype(input, dtype):
    return np.asarray(input).dtype if dtype is None and not isinstance(input, Tensor) else (
        input.dtype if dtype is None else np.dtype(dtype))


def _like(opname, input, fill, dtype, layout, device, requires_grad, memory_format):
    # zeros_like / ones_like / empty_like / full_like: one shape of code.
    _options(opname, device, layout)
    like = input._data if isinstance(input, Tensor) else np.asarray(input)
    return _finish(_filled(opname, like.shape, fill, _like_dtype(input, dtype), memory_format,
                           like), requires_grad)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=_layout.preserve_format):
    """Zeros with the shape (and dtype) of ``input``.

    ``memory_format=oxmera.preserve_format`` (the default) keeps ``input``'s
    memory order; ``device`` is the CPU (or None).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.zeros_like(oxmera.ones(2, dtype=oxmera.float64))
    tensor([0., 0.], dtype=float64)
    """
    return _like("zeros_like", input, 0, dtype, layout, device, requires_grad, memory_format)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=_layout.preserve_format):
    """Ones with the shape (and dtype) of ``input``; keywords as :func:`oxmera.zeros_like`.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.ones_like(oxmera.zeros(2))
    tensor([1., 1.], dtype=float32)
    """
    return _like("ones_like", input, 1, dtype, layout, device, requires_grad, memory_format)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=_layout.preserve_format):
    """Uninitialized, with the shape (and dtype) of ``input``; as :func:`oxmera.zeros_like`.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.empty_like(oxmera.zeros(2, 3)).shape
    oxmera.Size([2, 3])
    """
    return _like("empty_like", input, None, dtype, layout, device, requires_grad,
                 memory_format)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None,
              requires_grad=False, memory_format=_layout.preserve_format):
    """Filled with ``fill_value``, with the shape (and dtype) of ``input``.

    Keywords as :func:`oxmera.zeros_like`.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.full_like(oxmera.zeros(2), 3.5)
    tensor([3.5, 3.5], dtype=float32)
    """
    return _like("full_like", input, fill_value, dtype, layout, device, requires_grad,
                 memory_format)


def arange(start, end=None, step=1, dtype=None, requires_grad=False, *, out=None,
           layout=None, device=None):
    """Values from ``start`` up to (not including) ``end`` by ``step``.

    All-integer arguments give int64, otherwise the default float dtype.
    ``device`` is the CPU (or None); ``out=`` is not supported.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.arange(4)
    tensor([0, 1, 2, 3], dtype=int64)
    >>> oxmera.arange(0, 1, 0.25)
    tensor([0.  , 0.25, 0.5 , 0.75], dtype=float32)
    """
    _options("arange", device, layout, out=out)
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


def _steps(opname, steps):
    try:
        steps = operator.index(steps)
    except TypeError:
        raise TypeError(f"{opname}(): steps must be an int, got {steps!r}") from None
    if steps < 0:
        raise ValueError(f"{opname}(): number of steps must be non-negative, got {steps}")
    return steps


def linspace(start, end, steps, dtype=None, requires_grad=False, *, out=None, layout=None,
             device=None):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive.

    ``device`` is the CPU (or None); ``out=`` is not supported.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.linspace(0, 1, 3)
    tensor([0. , 0.5, 1. ], dtype=float32)
    """
    _options("linspace", device, layout, out=out)
    steps = _steps("linspace", steps)
    return _finish(np.linspace(start, end, steps).astype(_float_dtype(dtype)), requires_grad)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """``steps`` values from ``base ** start`` to ``base ** end``, evenly spaced in exponent.

    Computed in float64, then converted to ``dtype`` (default float dtype; an
    integer dtype truncates, as PyTorch does). ``device`` is the CPU (or
    None); ``out=`` is not supported.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.logspace(0, 2, 3)
    tensor([  1.,  10., 100.], dtype=float32)
    >>> oxmera.logspace(0, 3, 4, base=2, dtype=oxmera.int64)
    tensor([1, 2, 4, 8], dtype=int64)
    """
    _options("logspace", device, layout, out=out)
    steps = _steps("logspace", steps)
    values = np.logspace(start, end, steps, base=base)
    return _finish(values.astype(_float_dtype(dtype)), requires_grad)


def eye(n, m=None, dtype=None, requires_grad=False, *, out=None, layout=None, device=None):
    """The identity matrix (``n`` x ``m``, ``m`` defaulting to ``n``).

    ``device`` is the CPU (or None); ``out=`` is not supported.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.eye(2)
    tensor([[1., 0.],
            [0., 1.]], dtype=float32)
    """
    _options("eye", device, layout, out=out)
    return _finish(np.eye(n, m, dtype=_float_dtype(dtype)), requires_grad)


# Tensor.new_*: a new tensor, the dtype (and device) defaulting to the tensor's.

def _new_tensor(self, data, dtype=None, device=None, requires_grad=False, layout=None,
                pin_memory=False):
    """A new tensor holding a copy of ``data``, of this tensor's dtype by default.

    As PyTorch's ``Tensor.new_tensor``: the copy never shares memory or graph
    with ``data``. ``device`` is the CPU (or None).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.zeros(1, dtype=oxmera.float64).new_tensor([1, 2])
    tensor([1., 2.], dtype=float64)
    """
    _options("Tensor.new_tensor", device, layout, pin_memory)
    if isinstance(data, Tensor):
        data = data.detach()
    return tensor(data, self.dtype if dtype is None else dtype, requires_grad)


def _new_filled(function, example):
    # Tensor.new_zeros / new_ones / new_empty: the function with the tensor's dtype.
    name = f"new_{function.__name__}"

    def method(self, *sizes, dtype=None, device=None, requires_grad=False, layout=None,
               pin_memory=False, size=None):
        _options(f"Tensor.{name}", device, layout, pin_memory)
        return function(_shape(f"Tensor.{name}", sizes, size),
                        dtype=self.dtype if dtype is None else dtype,
                        requires_grad=requires_grad)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"""``oxmera.{function.__name__}``, of this tensor's dtype by default.

    The size is ints, one sequence or ``size=``, as ``oxmera.{function.__name__}``;
    ``device`` is the CPU (or None), ``pin_memory`` has no effect.

    Examples
    --------
    >>> import oxmera
    >>> {example}
    """
    return method


def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False,
              layout=None, pin_memory=False):
    """``oxmera.full`` of this tensor's dtype unless ``dtype`` is given.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.zeros(1, dtype=oxmera.float64).new_full((2,), 3)
    tensor([3., 3.], dtype=float64)
    """
    _options("Tensor.new_full", device, layout, pin_memory)
    return full(size, fill_value, dtype=self.dtype if dtype is None else dtype,
                requires_grad=requires_grad)


_registry.add_tensor_attribute("new_tensor", _new_tensor)
_registry.add_tensor_attribute("new_full", _new_full)
for _function, _example in (
        (zeros, "oxmera.ones(2, dtype=oxmera.int32).new_zeros(2, 3).dtype\n    dtype('int32')"),
        (ones, "oxmera.zeros(1, dtype=oxmera.float64).new_ones(2)\n"
               "    tensor([1., 1.], dtype=float64)"),
        (empty, "tuple(oxmera.zeros(1).new_empty((2, 3)).shape)\n    (2, 3)")):
    _registry.add_tensor_attribute(f"new_{_function.__name__}", _new_filled(_function, _example))

