"""The rest of the Tensor API that PyTorch programs use: layout queries (``stride``,
``storage_offset``, ``is_contiguous``, ``data_ptr``), type queries
(``is_tensor``, ``is_floating_point``, ``is_complex``, ``is_nonzero``,
``numel``), the ``*_as`` methods, ``view(dtype)``, and the view ops ``t``,
``adjoint``, ``swapdims``, ``ravel``, ``narrow``, ``select`` and ``unfold``.

Only ``unfold`` (with its backward) and ``view(dtype)`` are primitives here:
the others are what PyTorch defines them to be in terms of existing ops
(``narrow`` is a slice, ``select`` an index, ``t`` a transpose), so they
record those ops' nodes and need no VJP of their own. ``unfold`` is an
``as_strided`` view of its input; its gradient adds the windows' gradients
back where the windows overlap.
"""
import operator

import numpy as np

try:                                    # what NumPy's as_strided makes views with
    from numpy.lib._stride_tricks_impl import DummyArray as _DummyArray
except ImportError:                     # pragma: no cover - older NumPy
    from numpy.lib.stride_tricks import DummyArray as _DummyArray

from oxmera._core import autograd as _core
from oxmera.extend import op
from oxmera.ops import _registry, shape as _shape
from oxmera.ops._utils import normalize_dim

__all__ = ["is_tensor", "is_floating_point", "is_complex", "is_nonzero", "numel", "t",
           "adjoint", "swapdims", "ravel", "narrow", "select"]

Tensor = _core.Tensor
OpError = _core.OpError
_apply_op = _core.apply_op
_VIEW_OP = _shape.view.op
_TRANSPOSE_OP = _shape.transpose.op


def _check_tensor(input, opname):
    if not isinstance(input, Tensor):
        raise TypeError(f"{opname}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")


# -- type queries --------------------------------------------------------------------------

def is_tensor(obj):
    """Whether ``obj`` is an oxmera Tensor (``nn.Parameter`` included).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.is_tensor(oxmera.zeros(2)), oxmera.is_tensor([0.0, 0.0])
    (True, False)
    """
    return isinstance(obj, Tensor)


def is_floating_point(input):
    """Whether ``input``'s dtype is a floating dtype (float16, float32 or float64).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.is_floating_point(oxmera.zeros(2)), oxmera.zeros(2).long().is_floating_point()
    (True, False)
    """
    _check_tensor(input, "is_floating_point")
    return input.dtype.kind == "f"


def is_complex(input):
    """Whether ``input``'s dtype is complex (complex64 or complex128).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.is_complex(oxmera.zeros(2))
    False
    """
    _check_tensor(input, "is_complex")
    return input.dtype.kind == "c"


def is_nonzero(input):
    """Whether the one element of ``input`` is not zero (``bool(input)``, with PyTorch's
    errors for more or fewer elements).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.is_nonzero(oxmera.tensor([0.5])), oxmera.is_nonzero(oxmera.tensor(False))
    (True, False)
    """
    _check_tensor(input, "is_nonzero")
    n = input.numel()
    if n == 0:
        raise RuntimeError("is_nonzero(): Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError(f"is_nonzero(): Boolean value of Tensor with more than one value is "
                           f"ambiguous (shape {input.shape})")
    return bool(input.item())


def numel(input):
    """The number of elements of ``input``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.numel(oxmera.zeros(2, 3))
    6
    """
    _check_tensor(input, "numel")
    return input.numel()


# -- layout queries: methods only, as in PyTorch ---------------------------------------------

def _stride(self, dim=None):
    """The step, in elements, between neighbours along each dimension (or along ``dim``).

    As PyTorch counts them: an expanded dimension has stride 0, a transposed
    tensor's strides are swapped.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.zeros(2, 3, 4)
    >>> x.stride(), x.stride(-1), x.transpose(0, 2).stride()
    ((12, 4, 1), 1, (1, 4, 12))
    """
    array = self._data
    strides = [s // array.itemsize for s in array.strides]
    shape = array.shape
    # A dimension of size 1 that NumPy made with stride 0 (``x[None]``, a new
    # leading dimension of ``expand``) never moves, so its stride is only a
    # convention: PyTorch's is the one a contiguous layout of the dimensions
    # after it would give (what its unsqueeze and expand report).
    for i in range(len(shape) - 1, -1, -1):
        if shape[i] == 1 and strides[i] == 0:
            strides[i] = shape[i + 1] * strides[i + 1] if i + 1 < len(shape) else 1
    strides = tuple(strides)
    if dim is None:
        return strides
    if array.ndim == 0:
        raise IndexError(f"stride(): dimension specified as {dim} but the tensor has no "
                         f"dimensions")
    return strides[normalize_dim(dim, array.ndim, "stride")]


def _memory_root(array):
    # The array owning the memory ``array`` views (its storage, in PyTorch's
    # terms): up the chain of bases, through as_strided's wrappers.
    root = array
    base = array.base
    while base is not None:
        if isinstance(base, np.ndarray):
            root = base
        elif not isinstance(base, _DummyArray):
            break
        base = base.base
    return root


def _address(array):
    return array.__array_interface__["data"][0]


def _storage_offset(self):
    """Where the tensor's first element sits in the memory it views, in elements (0 for a
    tensor that owns its memory).

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.zeros(3, 4)
    >>> x.storage_offset(), x[1:, 2:].storage_offset()
    (0, 6)
    """
    array = self._data
    return (_address(array) - _address(_memory_root(array))) // array.itemsize


def _data_ptr(self):
    """The address of the tensor's first element.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.zeros(4)
    >>> x[1:].data_ptr() - x.data_ptr() == x.element_size()
    True
    """
    return _address(self._data)


def _is_contiguous(self, memory_format=None):
    """Whether the elements lie in memory in row-major order with no gaps.

    Dimensions of size 1 do not count, as in PyTorch. Only the default
    (contiguous) memory format exists in oxmera.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.zeros(2, 3)
    >>> x.is_contiguous(), x.t().is_contiguous()
    (True, False)
    """
    if memory_format is not None and str(memory_format) not in ("contiguous_format",
                                                                "torch.contiguous_format"):
        raise RuntimeError(f"is_contiguous(): oxmera has the contiguous memory format only, got "
                           f"{memory_format!r}")
    return bool(self._data.flags.c_contiguous)


def _nelement(self):
    """The number of elements (an alias of ``numel()``).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.zeros(2, 3).nelement()
    6
    """
    return self.numel()


def _ndimension(self):
    """The number of dimensions (an alias of ``dim()``).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.zeros(2, 3).ndimension()
    2
    """
    return self.dim()


def _is_floating_point_method(self):
    return is_floating_point(self)


def _is_complex_method(self):
    return is_complex(self)


def _is_nonzero_method(self):
    return is_nonzero(self)


_is_floating_point_method.__doc__ = is_floating_point.__doc__
_is_complex_method.__doc__ = is_complex.__doc__
_is_nonzero_method.__doc__ = is_nonzero.__doc__


# -- shaped like another tensor ---------------------------------------------------------------

def _other_shape(other, opname):
    if not isinstance(other, Tensor):
        raise TypeError(f"{opname}(): argument 'other' must be Tensor, not "
                        f"{type(other).__name__}")
    return other.shape


def _view_as(self, other):
    """``self.view(other.size())``: the same memory in ``other``'s shape.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.arange(6).view_as(oxmera.zeros(2, 3)).shape
    oxmera.Size([2, 3])
    """
    return _shape.view(self, _other_shape(other, "view_as"))


def _reshape_as(self, other):
    """``self.reshape(other.size())``: a view when possible, else a copy.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.arange(6).reshape_as(oxmera.zeros(3, 2)).shape
    oxmera.Size([3, 2])
    """
    return _shape.reshape(self, _other_shape(other, "reshape_as"))


def _expand_as(self, other):
    """``self.expand(other.size())``: broadcast to ``other``'s shape without copying.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.tensor([[1.0], [2.0]]).expand_as(oxmera.zeros(2, 3))
    tensor([[1., 1., 1.],
            [2., 2., 2.]], dtype=float32)
    """
    return _shape.expand(self, _other_shape(other, "expand_as"))


def _type_as(self, other):
    """``self`` converted to ``other``'s dtype (``self`` itself when it already has it).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.tensor([1.5, 2.5]).type_as(oxmera.zeros(1, dtype=oxmera.int64))
    tensor([1, 2], dtype=int64)
    """
    if not isinstance(other, Tensor):
        raise TypeError(f"type_as(): argument 'other' must be Tensor, not "
                        f"{type(other).__name__}")
    return self.to(other.dtype)


# -- views: t, adjoint, swapdims, ravel, narrow, select --------------------------------------

def t(input):
    """Transpose a matrix; a vector or a 0-d tensor is returned as it is (a view).

    PyTorch's ``t``: at most 2 dimensions (use ``transpose`` or ``mT`` for
    more). Composed from :func:`oxmera.transpose`.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.tensor([[1, 2, 3]]).t()
    tensor([[1],
            [2],
            [3]], dtype=int64)
    >>> oxmera.t(oxmera.tensor([1, 2])).shape
    oxmera.Size([2])
    """
    _check_tensor(input, "t")
    ndim = input.ndim
    if ndim > 2:
        raise OpError(f"t() expects a tensor with <= 2 dimensions, but self is {ndim}D "
                      f"(shape {input.shape}); use transpose() or mT")
    return _shape.transpose(input, 0, 1 if ndim == 2 else 0)


def adjoint(input):
    """The conjugate transpose of the last two dimensions (a view; for oxmera's real dtypes,
    the transpose ``mT``).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.zeros(5, 2, 3).adjoint().shape
    oxmera.Size([5, 3, 2])
    """
    _check_tensor(input, "adjoint")
    if input.ndim < 2:
        raise OpError(f"adjoint(): tensor.adjoint() is only supported on matrices or batches "
                      f"of matrices. Got {input.ndim}-D tensor.")
    return _shape.transpose(input, -2, -1)


def swapdims(input, dim0, dim1):
    """Alias of :func:`oxmera.transpose` (PyTorch's other name for it).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.swapdims(oxmera.zeros(2, 3, 4), 0, 2).shape
    oxmera.Size([4, 3, 2])
    """
    return _shape.transpose(input, dim0, dim1)


def ravel(input):
    """The elements as a 1-D tensor in row-major order (a view when possible, else a copy).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.tensor([[1, 2], [3, 4]]).ravel()
    tensor([1, 2, 3, 4], dtype=int64)
    """
    return _shape.reshape(input, (-1,))


def _index_arg(value, opname, name):
    try:
        return operator.index(value)        # 0-d integer tensors too, as in PyTorch
    except TypeError:
        raise TypeError(f"{opname}(): {name} must be an int, got {type(value).__name__}") \
            from None


def narrow(input, dim, start, length):
    """The ``length`` elements from ``start`` along ``dim`` (a view: a slice).

    ``start`` may be negative (counted from the end) or a 0-d integer tensor.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.arange(9).reshape(3, 3)
    >>> x.narrow(1, 1, 2)
    tensor([[1, 2],
            [4, 5],
            [7, 8]], dtype=int64)
    >>> oxmera.narrow(x, 0, -1, 1)
    tensor([[6, 7, 8]], dtype=int64)
    """
    _check_tensor(input, "narrow")
    shape = input.shape
    if not shape:
        raise OpError("narrow() cannot be applied to a 0-dim tensor.")
    d = normalize_dim(dim, len(shape), "narrow")
    start = _index_arg(start, "narrow", "start")
    length = _index_arg(length, "narrow", "length")
    size = shape[d]
    if not -size <= start <= size:
        raise IndexError(f"narrow(): start out of range (expected to be in range of "
                         f"[{-size}, {size}], but got {start}) for dimension {d} of shape "
                         f"{shape}")
    if start < 0:
        start += size
    if length < 0:
        raise OpError(f"narrow(): length must be non-negative, got {length}")
    if start + length > size:
        raise OpError(f"narrow(): start ({start}) + length ({length}) exceeds dimension size "
                      f"({size}) of dimension {d} (shape {shape}).")
    return input[(slice(None),) * d + (slice(start, start + length),)]


def select(input, dim, index):
    """The slice at ``index`` along ``dim``, without that dimension (a view: an index).

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.arange(6).reshape(2, 3)
    >>> x.select(1, -1)
    tensor([2, 5], dtype=int64)
    >>> oxmera.select(x, 0, 1)
    tensor([3, 4, 5], dtype=int64)
    """
    _check_tensor(input, "select")
    shape = input.shape
    if not shape:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = normalize_dim(dim, len(shape), "select")
    index = _index_arg(index, "select", "index")
    size = shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(shape)} at dimension {d}")
    return input[(slice(None),) * d + (index,)]


# -- unfold: sliding windows as a strided view -----------------------------------------------

def _unfold_layout(shape, dimension, size, step, opname):
    """The normalized dim, its length, and the number of windows (PyTorch's checks)."""
    size = _index_arg(size, opname, "size")
    step = _index_arg(step, opname, "step")
    d = normalize_dim(dimension, len(shape), opname)
    length = shape[d] if shape else 1
    if size < 0:
        raise OpError(f"{opname}(): size is {size} but must be >= 0")
    if step <= 0:
        raise OpError(f"{opname}(): step is {step} but must be > 0")
    if size > length:
        raise OpError(f"{opname}(): maximum size for tensor at dimension {d} is {length} but "
                      f"size is {size} (shape {tuple(shape)})")
    return d, size, step, (length - size) // step + 1


@op(save=(), view=True)
def unfold(input, dimension, size, step):
    """Every window of ``size`` elements along ``dimension``, ``step`` apart (a view).

    The dimension becomes the window index and a new last dimension of
    length ``size`` holds each window, as PyTorch's ``Tensor.unfold``.
    Windows that overlap share memory; their gradients add up.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.arange(7.0).unfold(0, 3, 2)
    tensor([[0., 1., 2.],
            [2., 3., 4.],
            [4., 5., 6.]], dtype=float32)
    >>> oxmera.zeros(2, 5).unfold(1, 2, 1).shape
    oxmera.Size([2, 4, 2])
    """
    d, size, step, count = _unfold_layout(input.shape, dimension, size, step, "unfold")
    if input.ndim == 0:
        # PyTorch treats a 0-d tensor as one element: its one window, without
        # the window dimension.
        return np.lib.stride_tricks.as_strided(input, (size,), (0,))
    strides = input.strides
    shape = input.shape[:d] + (count,) + input.shape[d + 1:] + (size,)
    strides = strides[:d] + (strides[d] * step,) + strides[d + 1:] + (strides[d],)
    return np.lib.stride_tricks.as_strided(input, shape, strides)


@unfold.vjp
def _(ctx, grad, input, dimension, size, step):
    return unfold_backward(grad, ctx.input_shape(0), dimension, size, step)


@op(save=())
def unfold_backward(grad, input_shape, dimension, size, step):
    """The gradient of :func:`unfold`: each window's gradient added back where the window
    was taken (overlapping windows sum).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.tensor_api import unfold_backward
    >>> unfold_backward(oxmera.ones(3, 3), (7,), 0, 3, 2)
    tensor([1., 1., 2., 1., 2., 1., 1.], dtype=float32)
    """
    shape = tuple(input_shape)
    d, size, step, count = _unfold_layout(shape, dimension, size, step, "unfold_backward")
    out = np.zeros(shape, grad.dtype)
    if not shape:
        out[...] = grad.sum()
        return out
    windows = np.moveaxis(grad, -1, d + 1)        # (..., count, size, ...) at dims d, d + 1
    lead = (slice(None),) * d
    # One strided add per offset within a window, or per window: whichever
    # is fewer. Within one, the positions written are distinct.
    if size <= count:
        for k in range(size):
            out[lead + (slice(k, k + step * (count - 1) + 1, step),)] += \
                windows[lead + (slice(None), k)]
    else:
        for i in range(count):
            out[lead + (slice(i * step, i * step + size),)] += windows[lead + (i,)]
    return out


@unfold_backward.vjp
def _(ctx, grad, grad_in, input_shape, dimension, size, step):
    return unfold(grad, dimension, size, step)


# -- view(dtype): the same bytes read as another dtype ---------------------------------------

def _as_dtype(value):
    """``value`` as a dtype when it names one (a NumPy dtype or scalar type), else None."""
    if isinstance(value, np.dtype):
        return value
    if isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value)
    return None


@op(differentiable=False, view=True)
def view_dtype(input, dtype):
    """The same memory read as ``dtype`` (``Tensor.view(dtype)``; not differentiable).

    With a different element size, the last dimension must be contiguous and
    is rescaled, by PyTorch's rules.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.tensor([1.0, 2.0]).view(oxmera.int32)
    tensor([1065353216, 1073741824], dtype=int32)
    >>> oxmera.zeros(2, 4, dtype=oxmera.int8).view(oxmera.int16).shape
    oxmera.Size([2, 2])
    """
    target = np.dtype(dtype)
    if target.kind not in "biuf":
        raise TypeError(f"view(): unsupported dtype {target}: oxmera tensors hold bool, integer "
                        f"or floating values")
    have, want = input.itemsize, target.itemsize
    if have == want:
        return input.view(target)
    names = f"{input.dtype} as {target} (different element sizes)"
    if input.ndim == 0:
        raise OpError(f"view(): self.dim() cannot be 0 to view {names}")
    if input.strides[-1] != have and input.shape[-1] != 1:
        raise OpError(f"view(): self.stride(-1) must be 1 to view {names}, but got "
                      f"{input.strides[-1] // have}")
    if want > have:
        ratio = want // have
        if input.shape[-1] % ratio:
            raise OpError(f"view(): self.size(-1) must be divisible by {ratio} to view {names}, "
                          f"but got {input.shape[-1]}")
        if any(s % want for s in input.strides[:-1]):
            raise OpError(f"view(): self.stride(i) must be divisible by {ratio} for every other "
                          f"dimension to view {names}, got strides "
                          f"{tuple(s // have for s in input.strides)}")
    # NumPy reinterprets the last axis once it is contiguous (a size-1 last
    # axis may carry any stride: give it the element size first).
    if input.strides[-1] != have:
        input = np.lib.stride_tricks.as_strided(input, input.shape,
                                                input.strides[:-1] + (have,))
    return input.view(target)


def _view_method(self, *shape, dtype=None):
    """``view(*shape)``: the same memory in a new shape; ``view(dtype)``: read as ``dtype``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.zeros(2, 3).view(-1).shape
    oxmera.Size([6])
    >>> oxmera.tensor([1.0]).view(oxmera.int32)
    tensor([1065353216], dtype=int32)
    """
    if dtype is None:
        if len(shape) != 1 or type(shape[0]) is int or type(shape[0]) is tuple:
            # A shape, as nearly every call gives it: straight to the op.
            return _apply_op(_VIEW_OP, (self,) + shape, None)
        dtype = _as_dtype(shape[0])
        if dtype is not None:
            shape = ()
    if dtype is not None:
        if shape:
            raise TypeError(f"view(): pass a shape or a dtype, not both (got {shape} and "
                            f"{dtype})")
        return view_dtype(self, dtype)
    return _shape.view(self, *shape)


def _transpose_method(self, *dims, dim0=None, dim1=None):
    """``t.transpose(dim0, dim1)``: swap two dims (PyTorch's form, a view).

    NumPy's forms, which PyTorch rejects, also work: ``t.transpose()``
    reverses the dims (as ``t.T`` does in NumPy) and ``t.transpose(axes)`` or
    ``t.transpose(*axes)`` with every dim permutes them. Two dims always
    mean PyTorch's swap.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.zeros(2, 3, 4)
    >>> tuple(x.transpose(0, 2).shape), tuple(x.transpose().shape)
    ((4, 3, 2), (4, 3, 2))
    >>> tuple(x.transpose(1, 2, 0).shape), tuple(x.transpose((1, 0, 2)).shape)
    ((3, 4, 2), (3, 2, 4))
    """
    if dim0 is not None or dim1 is not None:
        if dims or dim0 is None or dim1 is None:
            raise TypeError("transpose(): pass dim0 and dim1, or the axes, not a mix")
        return _shape.transpose(self, dim0, dim1)
    if len(dims) == 2:
        return _apply_op(_TRANSPOSE_OP, (self,) + dims, None)     # PyTorch's form, the commonest
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    if not dims:
        dims = tuple(range(self.ndim - 1, -1, -1))
    if len(dims) != self.ndim:
        raise ValueError(f"transpose(): axes don't match array: got {len(dims)} axes for a "
                         f"tensor of {self.ndim} dims (shape {tuple(self.shape)})")
    return _shape.permute(self, *dims) if dims else self.view(())


def _astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
    """NumPy's ``a.astype(dtype)``: the values in ``dtype`` (``t.to(dtype)``, differentiable).

    As in NumPy, a copy is made even when the dtype is already ``dtype``
    unless ``copy=False``. ``order``, ``casting`` and ``subok`` take NumPy's
    defaults only.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([1.5, 2.5], requires_grad=True)
    >>> x.astype("float64")
    tensor([1.5, 2.5], dtype=float64, grad_fn=<ToBackward>)
    >>> x.astype(oxmera.int64)
    tensor([1, 2], dtype=int64)
    """
    if (order, casting, subok) != ("K", "unsafe", True):
        raise TypeError("astype(): only NumPy's defaults order='K', casting='unsafe', "
                        "subok=True are supported")
    result = self.to(np.dtype(dtype))
    return result.clone() if copy and result is self else result


for _name, _value in (("transpose", _transpose_method), ("astype", _astype),
                      ("stride", _stride), ("storage_offset", _storage_offset),
                      ("data_ptr", _data_ptr), ("is_contiguous", _is_contiguous),
                      ("nelement", _nelement), ("ndimension", _ndimension),
                      ("is_floating_point", _is_floating_point_method),
                      ("is_complex", _is_complex_method), ("is_nonzero", _is_nonzero_method),
                      ("view_as", _view_as), ("reshape_as", _reshape_as),
                      ("expand_as", _expand_as), ("type_as", _type_as),
                      ("t", t), ("adjoint", adjoint), ("swapdims", swapdims), ("ravel", ravel),
                      ("narrow", narrow), ("select", select), ("unfold", unfold),
                      ("view", _view_method)):
    if _value.__name__.startswith("_"):
        _value.__name__ = _value.__qualname__ = _name
    _registry.add_tensor_attribute(_name, _value)
