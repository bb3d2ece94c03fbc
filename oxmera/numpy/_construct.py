"""What NumPy's protocols cannot dispatch: arrays built from lists of tensors, ``r_``, ``c_``.

``np.array([t1, t2])`` asks each tensor for its values (``__array__``), so
the graph is lost (or refused); ``np.r_[t, 0.0]`` is an object NumPy
indexes, not a function it dispatches. These build the result from oxmera
ops instead (``stack``, ``cat``, ``reshape``), so gradients flow.
"""
import numbers

import numpy as np

from oxmera._core import autograd as _core
from oxmera.numpy import _wrap

Tensor = _core.Tensor


def _ox():
    import oxmera
    return oxmera


def _leaf_dtypes(value, found):
    if isinstance(value, Tensor):
        found.append(value.dtype)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _leaf_dtypes(v, found)
    else:
        found.append(np.asarray(value).dtype)
    return found


def _build(value, dtype):
    """Nested lists/tuples of tensors, arrays and numbers as one tensor of ``dtype``."""
    if isinstance(value, Tensor):
        return value if value.dtype == dtype else value.to(dtype)
    if isinstance(value, (list, tuple)) and _wrap.contains_tensor(value):
        parts = [_build(v, dtype) for v in value]
        shapes = {tuple(p.shape) for p in parts}
        if len(shapes) > 1:
            raise ValueError(f"oxmera.numpy.array: setting an array element with a sequence: the "
                             f"nested sequences have different shapes {sorted(shapes)} (an "
                             f"inhomogeneous array)")
        return _ox().stack(parts)
    return _core._wrap(np.array(value, dtype=dtype))


def array(object, dtype=None, *, copy=True, ndmin=0, order="K", subok=False, like=None):
    """``numpy.array``: a tensor from nested lists that may hold tensors, differentiable.

    Tensors inside (nested) lists are stacked with ``oxmera.stack``, so the
    result's gradient reaches them; ``np.array`` itself would read their
    values and drop the graph. The dtype is NumPy's: the common type of the
    parts (Python floats are float64). Without tensors, NumPy builds it.

    Examples
    --------
    >>> import oxmera.numpy as onp
    >>> x = oxmera.tensor(2.0, dtype=oxmera.float64, requires_grad=True)
    >>> m = onp.array([[x, 0.0], [1.0, x * x]])
    >>> m
    tensor([[2., 0.],
            [1., 4.]], dtype=float64, grad_fn=<StackBackward>)
    >>> onp.sum(m).backward()
    >>> x.grad
    tensor(5., dtype=float64)
    >>> onp.array([1, 2]).dtype
    dtype('int64')
    """
    if like is not None:
        raise TypeError("oxmera.numpy.array: like= is not supported")
    if isinstance(object, Tensor):
        result = object if dtype is None or object.dtype == np.dtype(dtype) else object.to(dtype)
        if copy and result is object:
            result = object.clone()
    elif isinstance(object, (list, tuple)) and _wrap.contains_tensor(object):
        target = np.dtype(dtype) if dtype is not None else np.result_type(
            *_leaf_dtypes(object, []))
        result = _build(object, target)
    else:
        return _wrap.as_tensors(np.array(object, dtype=dtype, copy=copy, ndmin=ndmin,
                                         order=order))
    if result.ndim < ndmin:
        result = result.reshape((1,) * (ndmin - result.ndim) + tuple(result.shape))
    return result


def asarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    """``numpy.asarray``: a tensor stays itself, lists holding tensors are stacked.

    An array becomes a tensor sharing its memory (as :func:`oxmera.as_tensor`).

    Examples
    --------
    >>> import oxmera.numpy as onp
    >>> t = oxmera.tensor([1.0, 2.0], requires_grad=True)
    >>> onp.asarray(t) is t
    True
    >>> onp.asarray([t, t]).shape
    oxmera.Size([2, 2])
    >>> onp.asarray([1.5, 2.5])
    tensor([1.5, 2.5], dtype=float64)
    """
    if device not in (None, "cpu"):
        raise ValueError(f"oxmera.numpy.asarray: tensors live on the cpu, got device={device!r}")
    if isinstance(a, Tensor) or (isinstance(a, (list, tuple)) and _wrap.contains_tensor(a)):
        return array(a, dtype=dtype, copy=bool(copy), like=like)
    return _wrap.as_tensors(np.asarray(a, dtype=dtype, order=order, copy=copy))


def _item_tensor(item, numpy_name):
    if isinstance(item, slice):
        # NumPy turns a slice into a range (or a linspace for a complex step).
        return _wrap.as_tensors(np.r_[item])
    if isinstance(item, Tensor):
        return item
    if isinstance(item, (list, tuple)):
        return asarray(item)
    if isinstance(item, (numbers.Number, np.ndarray, np.generic)):
        return _wrap.as_tensors(np.asarray(item))
    raise TypeError(f"{numpy_name}: cannot join an item of type {type(item).__name__}")


class AxisConcatenator:
    """``r_`` and ``c_``: index to join arrays, tensors, numbers and slices along an axis.

    As NumPy's: ``onp.r_[a, b]`` joins along the first axis; a leading
    string ``"axis"``, ``"axis,ndmin"`` or ``"axis,ndmin,trans1d"`` sets the
    axis, the least number of dims each part is raised to, and where a
    raised part's own dims go. ``onp.c_`` is ``onp.r_["-1,2,0", ...]``:
    1-D parts become columns. Tensors are joined with ``oxmera.cat``
    (differentiable); the matrix directives (``"r"``, ``"c"``) are not
    supported.

    Examples
    --------
    >>> import oxmera.numpy as onp
    >>> x = oxmera.tensor([1.0, 2.0], dtype=oxmera.float64, requires_grad=True)
    >>> onp.r_[x, 0.0, 5:7]
    tensor([1., 2., 0., 5., 6.], dtype=float64, grad_fn=<CatBackward>)
    >>> onp.c_[x, onp.ones(2)]
    tensor([[1., 1.],
            [2., 1.]], dtype=float64, grad_fn=<CatBackward>)
    """

    def __init__(self, name, axis=0, ndmin=1, trans1d=-1):
        self._name = f"oxmera.numpy.{name}"
        self._axis, self._ndmin, self._trans1d = axis, ndmin, trans1d

    def __getitem__(self, key):
        items = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self._axis, self._ndmin, self._trans1d
        if items and isinstance(items[0], str):
            directive, items = items[0], items[1:]
            try:
                numbers_given = [int(v) for v in directive.split(",")]
            except ValueError:
                raise ValueError(f"{self._name}: the directive {directive!r} is not supported "
                                 f"(only 'axis[,ndmin[,trans1d]]'; the matrix directives 'r' "
                                 f"and 'c' are not)") from None
            axis, ndmin, trans1d = (numbers_given + [ndmin, trans1d][len(numbers_given) - 1:])[:3]
        if not _wrap.contains_tensor(items):
            if self._name.endswith("c_") and (axis, ndmin, trans1d) == (-1, 2, 0):
                return _wrap.as_tensors(np.c_[key])
            return _wrap.as_tensors(np.r_[key])
        parts = []
        for item in items:
            part = _item_tensor(item, self._name)
            if part.ndim < ndmin:
                item_ndim = part.ndim
                part = part.reshape((1,) * (ndmin - item_ndim) + tuple(part.shape))
                if trans1d != -1:
                    # NumPy's rule: the part's own dims move to start at trans1d.
                    k2, k1 = ndmin - item_ndim, trans1d
                    if k1 < 0:
                        k1 += k2 + 1
                    order = list(range(ndmin))
                    part = part.permute(*(order[:k1] + order[k2:] + order[k1:k2]))
            parts.append(part)
        dtype = np.result_type(*(p.dtype for p in parts))
        return _ox().cat([p if p.dtype == dtype else p.to(dtype) for p in parts], axis)

    def __len__(self):
        return 0

    def __repr__(self):
        return f"<{self._name}>"


r_ = AxisConcatenator("r_")
c_ = AxisConcatenator("c_", axis=-1, ndmin=2, trans1d=0)


def append(arr, values, axis=None):
    """``numpy.append``: ``values`` joined after ``arr`` (both flattened without ``axis``).

    Examples
    --------
    >>> import oxmera.numpy as onp
    >>> x = oxmera.tensor([1.0, 2.0], dtype=oxmera.float64, requires_grad=True)
    >>> onp.append(x, [3.0])
    tensor([1., 2., 3.], dtype=float64, grad_fn=<CatBackward>)
    >>> onp.append([[1, 2]], [[3, 4]], axis=0).shape
    oxmera.Size([2, 2])
    """
    if not (_wrap.contains_tensor(arr) or _wrap.contains_tensor(values)):
        return _wrap.as_tensors(np.append(arr, values, axis=axis))
    x, v = asarray(arr), asarray(values)
    if axis is None:
        x, v, axis = x.reshape(-1), v.reshape(-1), 0
    dtype = np.result_type(x.dtype, v.dtype)
    return _ox().cat([x.to(dtype), v.to(dtype)], axis)
